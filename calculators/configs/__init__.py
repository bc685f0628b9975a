"""The config doctor: read a pasted training config, say what will break and what it costs.

Understands four kinds of config:

* a DeepSpeed config (JSON, possibly with ``"auto"`` values),
* Hugging Face ``TrainingArguments`` (a dict, JSON, or a command line such as
  ``torchrun --nproc_per_node 8 train.py --per_device_train_batch_size 4 ...``),
* an Accelerate config (YAML written by ``accelerate config``),
* a LLaMA-Factory training YAML.

The checks reproduce what the libraries themselves do, with their wording where
they print one (read from the sources, not guessed):

* DeepSpeed ``runtime/config.py``: ``_set_batch_related_parameters`` /
  ``_batch_assertion`` (via :mod:`calculators.batch`), ``'bfloat16 and fp16
  modes cannot be simultaneously enabled'``, duplicate keys rejected;
  ``runtime/zero/config.py``: ZeRO sections are pydantic models with
  ``extra="forbid"`` (an unknown key inside ``zero_optimization`` is an error,
  an unknown top-level key is silently ignored), ``"auto"`` inside them is
  dropped (non-strict mode) so the default applies, ``overlap_comm`` defaults
  to True only for stage 3; offload_param is "Valid only with stage 3", CPU
  optimizer offload works with stages 1-3, NVMe only with stage 3.
* transformers ``integrations/deepspeed.py``: ``HfTrainerDeepSpeedConfig.
  trainer_config_process`` / ``trainer_config_finalize`` fill ``"auto"`` and
  collect mismatches as ``- ds {key}={ds_val} vs hf {hf_key}={hf_val}``, then
  raise ``ValueError("Please correct the following DeepSpeed config values that
  mismatch TrainingArguments values: ...")``. ``fill_match`` only touches keys
  that are present: a *missing* key is neither filled nor compared.
* accelerate ``DeepSpeedPlugin.__post_init__``: a DeepSpeed config file without
  ``gradient_accumulation_steps`` gets ``1`` written into it, and
  ``Accelerator._prepare_deepspeed`` then prefers DeepSpeed's value over the
  Trainer's ("Gradient accumulation steps mismatch: ... Using DeepSpeed's value.").
* LLaMA-Factory: ``finetuning_type`` defaults to ``lora``, ``cutoff_len`` to
  2048, and gradient checkpointing is ON unless
  ``disable_gradient_checkpointing: true``.

Pure Python: no torch, no transformers import.

Layout (one module per job): ``models`` (typed inputs/outputs), ``keys`` (the
remaining hand-kept key tables), ``text`` (reading JSON / YAML / flags),
``values`` (shared value helpers), one module per format with its reader
(``deepspeed_json``, ``hf_args``, ``accelerate_yaml``, ``llamafactory``) behind
``registry``, ``checks`` (format-independent checks), ``levers`` (memory and the
biggest lever), ``doctor`` (entry points) and ``chat`` (spotting a config in a
chat message).
"""
from .chat import extract_config_text, looks_like_config
from .doctor import INTERNAL_ERROR_KEY, check_config, config_check_tool
from .models import KINDS, ConfigParseError, ConfigReport, Finding, Kind, ParsedConfig, Severity
from .registry import parse_config
from .values import resolve_model_preset

__all__ = ["INTERNAL_ERROR_KEY", "KINDS", "ConfigParseError", "ConfigReport", "Finding", "Kind", "ParsedConfig",
           "Severity", "check_config", "config_check_tool", "extract_config_text", "looks_like_config",
           "parse_config", "resolve_model_preset"]
