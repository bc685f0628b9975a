"""Small value helpers shared by the format readers (ints, truthiness, dotted lookup, model names, precision)."""

from __future__ import annotations

import math
import re
from typing import Any

from ..errors import CalculatorError
from ..memory import LORA_MODULES
from ..presets import get_model_shape
from .models import ParsedConfig


def _int(v: Any, strict: bool = True) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        return int(v)
    if not strict and isinstance(v, str) and re.fullmatch(r"-?\d+", v.strip()):
        return int(v)
    return None


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _truthy(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in ("true", "1", "yes", "on")
    return bool(v) and not isinstance(v, (dict, list))


def _get(d: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(d, dict):
            return None
        d = d.get(part)
    return d


def _collect_auto(d: Any, prefix: str = "") -> list[str]:
    out: list[str] = []
    if isinstance(d, dict):
        for k, v in d.items():
            key = f"{prefix}{k}"
            if isinstance(v, str) and v.strip().lower() == "auto":
                out.append(key)
            elif isinstance(v, dict):
                out += _collect_auto(v, key + ".")
    return out


_MODEL_SUFFIXES = ("-instruct", "-chat", "-hf", "-base", "-it", "-sft")


def resolve_model_preset(name: Any) -> str | None:
    """A model name or Hub id (``meta-llama/Meta-Llama-3-8B-Instruct``) → a preset name, or None."""
    if not isinstance(name, str) or not name.strip() or len(name) > 300:
        return None
    candidates = [name]
    key = name.strip().lower().replace("_", "-").split("/")[-1]
    for _ in range(3):
        for suf in _MODEL_SUFFIXES:
            if key.endswith(suf):
                key = key[: -len(suf)]
        candidates.append(key)
    candidates += [re.sub(r"-\d{4}$", "", key), key.replace("meta-llama-3.1", "llama-3.1")]
    for c in candidates:
        try:
            return get_model_shape(c).name
        except CalculatorError:
            continue
    return None


def _precision(bf16: Any, fp16: Any, deepspeed: bool) -> str | None:
    if _truthy(bf16):
        return "bf16-mixed" if deepspeed else "amp-bf16"
    if _truthy(fp16):
        return "fp16-mixed" if deepspeed else "amp-fp16"
    return None


# ---------------------------------------------------------------------------------------------
# Per-kind readers


def _read_batch(pc: ParsedConfig, d: dict[str, Any], mapping: dict[str, str], strict: bool) -> None:
    for src, dst in mapping.items():
        if src not in d or d[src] is None:
            continue
        v = d[src]
        if isinstance(v, str) and v.strip().lower() == "auto":
            continue
        iv = _int(v, strict=strict)
        if iv is None:
            pc.invalid[src] = v
        else:
            pc.batch[dst] = iv


def _unknown(keys: Any, known: frozenset[str], prefix: str = "") -> list[str]:
    return [f"{prefix}{k}" for k in keys if k not in known]


def _seq_len(pc: ParsedConfig, d: dict[str, Any], keys: tuple[str, ...]) -> None:
    for k in keys:
        if k in d and d[k] is not None:
            v = _int(d[k], strict=pc.source_format == "flags")
            if v is None or v <= 0:
                pc.invalid[k] = d[k]
            else:
                pc.memory["seq_len"] = v
            return


def _model(pc: ParsedConfig, d: dict[str, Any]) -> None:
    name = d.get("model_name_or_path")
    if isinstance(name, str):
        pc.model_name = name
        preset = resolve_model_preset(name)
        if preset:
            pc.memory["model"] = preset


def _micro_ga_to_memory(pc: ParsedConfig) -> None:
    mb = pc.batch.get("train_micro_batch_size_per_gpu")
    ga = pc.batch.get("gradient_accumulation_steps")
    if mb is not None and mb > 0:
        pc.memory["train_micro_batch_size_per_gpu"] = mb
    if ga is not None and ga > 0:
        pc.memory["gradient_accumulation_steps"] = ga


def _lora_targets(pc: ParsedConfig, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, str):
        items = [s.strip() for s in value.split(",") if s.strip()]
    elif isinstance(value, list):
        items = [str(s) for s in value]
    else:
        return
    if any(s in ("all", "all-linear") for s in items):
        pc.memory["lora_target_modules"] = ["all"]
        return
    known = [s for s in items if s in LORA_MODULES]
    if known:
        pc.memory["lora_target_modules"] = known
    if len(known) < len(items):
        pc.notes_en.append(
            f"LoRA targets not modelled in the estimate: {', '.join(s for s in items if s not in LORA_MODULES)}."
        )
        pc.notes_zh.append(f"估算中未计入的 LoRA 目标模块：{', '.join(s for s in items if s not in LORA_MODULES)}。")
