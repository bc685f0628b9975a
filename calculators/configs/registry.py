"""One registry of formats: recognise the kind of a config and dispatch to its reader."""

from __future__ import annotations

from typing import Any, cast

from ..errors import CalculatorError
from .accelerate_yaml import _parse_accelerate, accelerate_verdict
from .deepspeed_json import _parse_deepspeed, deepspeed_verdict
from .hf_args import _parse_hf, hf_deepspeed_verdict, training_args_verdict
from .keys import HF_KEYS
from .library import LibraryVerdict
from .llamafactory import _parse_llamafactory
from .models import KINDS, ConfigParseError, Kind, ParsedConfig, SourceFormat
from .text import _load_text
from .values import _collect_auto


def _detect_kind(d: dict[str, Any]) -> Kind | None:
    keys = set(d)
    if keys & {"distributed_type", "compute_environment"} or (
        isinstance(d.get("deepspeed_config"), dict) and keys & {"num_processes", "mixed_precision", "num_machines"}
    ):
        return "accelerate"
    if keys & {
        "finetuning_type",
        "lora_target",
        "cutoff_len",
        "quantization_bit",
        "template",
        "pure_bf16",
        "disable_gradient_checkpointing",
        "flash_attn",
    } or isinstance(d.get("stage"), str):
        return "llamafactory"
    if (
        keys
        & {
            "zero_optimization",
            "train_micro_batch_size_per_gpu",
            "train_batch_size",
            "zero_allow_untested_optimizer",
            "steps_per_print",
            "wall_clock_breakdown",
            "zero_force_ds_cpu_optimizer",
            "amp",
        }
        or isinstance(d.get("fp16"), dict)
        or isinstance(d.get("bf16"), dict)
        or isinstance(d.get("optimizer"), dict)
    ):
        return "deepspeed"
    if keys & (HF_KEYS - {"deepspeed"}) or "deepspeed" in keys:
        return "hf_training_args"
    return None


def parse_config(text_or_dict: str | dict[str, Any] | ParsedConfig, kind: str | None = None) -> ParsedConfig:
    """Read a DeepSpeed / TrainingArguments / Accelerate / LLaMA-Factory config.

    Raises :class:`ConfigParseError` (a :class:`CalculatorError`) with ``line``
    and ``column`` when the text cannot be read or the kind cannot be told.
    """
    if isinstance(text_or_dict, ParsedConfig):
        return text_or_dict
    if kind is not None and kind not in KINDS:
        raise CalculatorError("kind", kind, ", ".join(KINDS), "、".join(KINDS))
    positions: dict[str, tuple[int, int]] = {}
    ws: int | None = None
    notes_en: list[str] = []
    notes_zh: list[str] = []
    dups: list[str] = []
    program: str | None = None
    fmt: SourceFormat
    if isinstance(text_or_dict, dict):
        data, fmt = text_or_dict, "dict"
    elif isinstance(text_or_dict, str):
        data, fmt, positions, ws, notes_en, notes_zh, dups, program = _load_text(text_or_dict)
    else:
        raise ConfigParseError(
            f"A config must be text or a dict, not {type(text_or_dict).__name__}.",
            f"配置必须是文本或字典，而不是 {type(text_or_dict).__name__}。",
        )
    data = {str(k): v for k, v in data.items()}
    detected = cast(Kind, kind) if kind else _detect_kind(data)  # kind was checked against KINDS above
    if detected is None and program == "ms-swift":
        detected = "hf_training_args"  # ms-swift 3.x TrainArguments subclass Seq2SeqTrainingArguments
    if detected is None:
        raise ConfigParseError(
            "Not recognised as a DeepSpeed, TrainingArguments, Accelerate or LLaMA-Factory config (no known training keys).",
            "无法识别为 DeepSpeed、TrainingArguments、Accelerate 或 LLaMA-Factory 配置（没有已知的训练参数）。",
            fix_en="Paste the whole file, or give kind= explicitly.",
            fix_zh="请粘贴完整文件，或显式指定 kind=。",
        )
    pc = ParsedConfig(
        kind=detected,
        raw=data,
        source_format=fmt,
        positions=positions,
        world_size=ws,
        auto_fields=_collect_auto(data),
        notes_en=notes_en,
        notes_zh=notes_zh,
        program=program,
    )
    if dups:
        pc.invalid["__duplicate_keys__"] = sorted(set(dups))
    {
        "deepspeed": _parse_deepspeed,
        "hf_training_args": _parse_hf,
        "accelerate": _parse_accelerate,
        "llamafactory": _parse_llamafactory,
    }[detected](pc)
    if pc.world_size is not None and pc.world_size > 0:
        pc.memory["world_size"] = pc.world_size
    return pc


# ---------------------------------------------------------------------------------------------
# Which library path judges which pair of configs


def _hf_fields(pc: ParsedConfig) -> dict[str, Any]:
    """TrainingArguments-like values of an HF / LLaMA-Factory config (the adapter keeps the installed fields)."""
    return {k: v for k, v in pc.raw.items() if not k.startswith("accelerate_")}


def library_verdict(
    pc: ParsedConfig, companion: ParsedConfig | None, world_size: int | None, hidden_size: int | None = None
) -> LibraryVerdict | None:
    """Ask the library that owns this format (and its companion) for its verdict; None when none applies.

    * DeepSpeed JSON alone → DeepSpeedConfig (plain DeepSpeed: "auto" is not filled);
    * DeepSpeed JSON + TrainingArguments / LLaMA-Factory YAML, or TrainingArguments with an inline
      DeepSpeed dict → the Hugging Face Trainer path;
    * TrainingArguments / LLaMA-Factory YAML alone → constructing TrainingArguments;
    * Accelerate YAML (+ the DeepSpeed JSON its deepspeed_config_file names) → accelerate launch's checks.
    """
    ws = world_size or 1
    if pc.kind == "deepspeed":
        if companion is not None and companion.kind in ("hf_training_args", "llamafactory"):
            return hf_deepspeed_verdict(pc.raw, _hf_fields(companion), ws, hidden_size)
        if companion is not None and companion.kind == "accelerate":
            return accelerate_verdict(companion.raw, world_size, pc.raw, hidden_size)
        return deepspeed_verdict(pc.raw, ws, pc.invalid.get("__duplicate_keys__"))
    if pc.kind in ("hf_training_args", "llamafactory"):
        if isinstance(pc.raw.get("deepspeed"), dict):
            return hf_deepspeed_verdict(pc.raw["deepspeed"], _hf_fields(pc), ws, hidden_size)
        return training_args_verdict(_hf_fields(pc), ws)
    if pc.kind == "accelerate":
        return accelerate_verdict(pc.raw, world_size, None, hidden_size)
    return None
