"""Markdown rendering of calculator results, in Chinese or English.

Memory tables come from calculators.memory_table (one row order and naming for the chat and the tab)."""

from __future__ import annotations

from calculators import MemoryEstimate
from calculators.batch import BatchResult
from calculators.i18n import key_name, t
from calculators.lang import Lang, as_lang
from calculators.memory_table import NAMES, memory_table
from calculators.sweep import SweepResult
from calculators.units import format_gib


def gib(nbytes: int | float | None, lang: Lang = "en") -> str:
    return format_gib(nbytes, unknown=NAMES["unknown"][as_lang(lang)])


def billions(n_params: float) -> str:
    """A parameter count in billions to three significant digits, never in exponent form: 27179089920 → "27.2B",
    6.7e9 → "6.7B", 1e12 → "1000B"."""
    return f"{float(f'{n_params / 1e9:.3g}'):g}B"


def sweep_line(result: SweepResult, lang: Lang) -> str:
    """'micro 1 → 14.2 GiB, 2 → 17.9 GiB, ...' for a sweep."""
    pairs = ", ".join(f"{v} → {gib(t, lang)}" for v, t in result.series())
    name = {
        "train_micro_batch_size_per_gpu": "micro batch",
        "gradient_accumulation_steps": "GA",
        "zero_stage": "ZeRO stage",
        "precision": key_name("precision", lang),
    }.get(result.field, result.field)
    return f"{name}: {pairs}"


def batch_summary(result: BatchResult, lang: Lang) -> str:
    notes = result.notes_zh if lang == "zh" else result.notes_en
    lines = [f"`{result.formula}`"] + [f"- {n}" for n in notes]
    if result.tokens_per_optimizer_step:
        lines.append(t("tokens_per_step", lang, n=f"{result.tokens_per_optimizer_step:,}"))
    if result.learning_rate:
        lines.append("- " + (result.learning_rate.note_zh if lang == "zh" else result.learning_rate.note_en))
    return "\n".join(lines)


def memory_summary(est: MemoryEstimate, lang: Lang) -> str:
    table = memory_table([(est.model_name, est)], lang)
    notes = est.notes_zh if lang == "zh" else est.notes_en
    return table + ("\n\n" + "\n".join(f"- {n}" for n in notes) if notes else "")
