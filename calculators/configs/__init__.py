"""The config doctor: read a pasted training config, say what will break and what it costs.

Understands four kinds of config:

* a DeepSpeed config (JSON, possibly with ``"auto"`` values),
* Hugging Face ``TrainingArguments`` (a dict, JSON, or a command line such as
  ``torchrun --nproc_per_node 8 train.py --per_device_train_batch_size 4 ...``),
* an Accelerate config (YAML written by ``accelerate config``),
* a LLaMA-Factory training YAML.

The start-up verdict comes from the libraries themselves (issue #13): each format's
module has a library adapter beside its reader that runs the installed DeepSpeed /
Transformers / Accelerate config code in-process (``DeepSpeedConfig`` at the user's
data-parallel world size; the Hugging Face Trainer's DeepSpeed path up to
``deepspeed.initialize``; ``accelerate launch``'s config classes and checks), with no
process group and no op builds, and the report quotes their exact exception text,
the step that raised and the versions, then our explanation and fix (``verdict``).
They are imported lazily on the first check (never at ``import calculators``); if one
is missing or fails to import, the report says so and our own checks stand alone.

Our own checks cover what the libraries do not check — memory fit on the named GPU
and the biggest lever, costly bucket sizes, ZeRO-3 on small models, settings DeepSpeed
silently ignores — and are advice, never "will fail". They follow the libraries'
sources where those print something (DeepSpeed ``runtime/config.py`` batch assertion,
ZeRO pydantic models with ``extra="forbid"``; transformers ``integrations/deepspeed.py``
``fill_match``; accelerate ``DeepSpeedPlugin``), and LLaMA-Factory's defaults
(``finetuning_type`` lora, ``cutoff_len`` 2048, gradient checkpointing on unless
``disable_gradient_checkpointing: true``).

Layout (one module per job): ``models`` (typed inputs/outputs), ``keys`` (the
remaining hand-kept key tables), ``text`` (reading JSON / YAML / flags),
``values`` (shared value helpers), one module per format with its reader, its
library adapter and its own checks (``deepspeed_json``, ``hf_args``,
``accelerate_yaml``, ``llamafactory``) behind ``registry``, ``library`` (lazy bounded
imports, the lock, the world-size patch), ``verdict`` (library verdict → findings),
``checks`` (format-independent checks), ``levers`` (memory and the biggest lever),
``doctor`` (entry points) and ``chat`` (spotting a config in a chat message).
"""

from .chat import extract_config_text, looks_like_config
from .doctor import INTERNAL_ERROR_KEY, check_config, config_check_tool
from .models import KINDS, ConfigParseError, ConfigReport, Finding, Kind, ParsedConfig, Severity
from .registry import parse_config
from .values import resolve_model_preset

__all__ = [
    "INTERNAL_ERROR_KEY",
    "KINDS",
    "ConfigParseError",
    "ConfigReport",
    "Finding",
    "Kind",
    "ParsedConfig",
    "Severity",
    "check_config",
    "config_check_tool",
    "extract_config_text",
    "looks_like_config",
    "parse_config",
    "resolve_model_preset",
]
