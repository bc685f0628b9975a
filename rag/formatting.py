"""Markdown rendering of calculator results, in Chinese or English.

Memory tables come from calculators.memory_table (one row order and naming for the chat and the tab)."""

from __future__ import annotations

from calculators import MemoryEstimate
from calculators.batch import BatchResult
from calculators.lang import as_lang
from calculators.memory_table import NAMES, memory_table
from calculators.sweep import SweepResult
from calculators.units import format_gib


def gib(nbytes: int | float | None, lang: str = "en") -> str:
    return format_gib(nbytes, unknown=NAMES["unknown"][as_lang(lang)])


def sweep_line(result: SweepResult, lang: str) -> str:
    """'micro 1 → 14.2 GiB, 2 → 17.9 GiB, ...' for a sweep."""
    pairs = ", ".join(f"{v} → {gib(t, lang)}" for v, t in result.series())
    name = {
        "train_micro_batch_size_per_gpu": "micro batch",
        "gradient_accumulation_steps": "GA",
        "zero_stage": "ZeRO stage",
        "precision": "precision" if lang == "en" else "精度",
    }.get(result.field, result.field)
    return f"{name}: {pairs}"


def batch_summary(result: BatchResult, lang: str) -> str:
    notes = result.notes_zh if lang == "zh" else result.notes_en
    lines = [f"`{result.formula}`"] + [f"- {n}" for n in notes]
    if result.tokens_per_optimizer_step:
        lines.append(
            f"- tokens/step: {result.tokens_per_optimizer_step:,}"
            if lang == "en"
            else f"- 每步 token 数：{result.tokens_per_optimizer_step:,}"
        )
    if result.learning_rate:
        lines.append("- " + (result.learning_rate.note_zh if lang == "zh" else result.learning_rate.note_en))
    return "\n".join(lines)


def memory_summary(est: MemoryEstimate, lang: str) -> str:
    table = memory_table([(est.model_name, est)], lang)
    notes = est.notes_zh if lang == "zh" else est.notes_en
    return table + ("\n\n" + "\n".join(f"- {n}" for n in notes) if notes else "")
