"""Markdown rendering of calculator results, in Chinese or English."""
from __future__ import annotations

from calculators import MemoryEstimate
from calculators.batch import BatchResult
from calculators.sweep import SweepResult
from calculators.units import format_gib

LABELS = {
    "zh": {"weights": "权重", "gradients": "梯度", "optimizer_states": "优化器状态", "activations": "激活",
           "other": "其他（CUDA 上下文、通信缓冲）", "total_per_gpu": "**每卡合计**", "cpu_total": "CPU 内存（offload）",
           "capacity": "GPU 容量", "fits": "放得下吗", "max_micro": "能放下的最大 micro batch", "yes": "✅ 能", "no": "❌ 不能",
           "none_fits": "无：micro batch 1 也放不下",
           "unknown": "未知"},
    "en": {"weights": "Weights", "gradients": "Gradients", "optimizer_states": "Optimizer states",
           "activations": "Activations", "other": "Other (CUDA context, comm buffers)", "total_per_gpu": "**Total per GPU**",
           "cpu_total": "CPU RAM (offload)", "capacity": "GPU capacity", "fits": "Fits?",
           "max_micro": "Largest micro batch that fits", "yes": "✅ yes", "no": "❌ no", "unknown": "unknown",
           "none_fits": "none: even micro batch 1 does not fit"},
}
ROWS = ("weights", "gradients", "optimizer_states", "activations", "other", "total_per_gpu")


def gib(nbytes: int | float | None, lang: str = "en") -> str:
    return format_gib(nbytes, unknown=LABELS[lang]["unknown"])


def memory_table(columns: list[tuple[str, MemoryEstimate]], lang: str) -> str:
    """A Markdown table with one column per estimate (e.g. GA=1 vs GA=16)."""
    lab = LABELS[lang]
    head = "| | " + " | ".join(name for name, _ in columns) + " |"
    lines = [head, "|---|" + "---:|" * len(columns)]
    for row in ROWS:
        lines.append(f"| {lab[row]} | " + " | ".join(gib(getattr(e, row), lang) for _, e in columns) + " |")
    if any(e.cpu_total for _, e in columns):
        lines.append(f"| {lab['cpu_total']} | " + " | ".join(gib(e.cpu_total, lang) for _, e in columns) + " |")
    if any(e.gpu_capacity for _, e in columns):
        lines.append(f"| {lab['capacity']} | " + " | ".join(gib(e.gpu_capacity, lang) for _, e in columns) + " |")
        lines.append(f"| {lab['fits']} | " + " | ".join(
            lab["unknown"] if e.fits is None else (lab["yes"] if e.fits else lab["no"]) for _, e in columns) + " |")
        lines.append(f"| {lab['max_micro']} | " + " | ".join(
            lab["unknown"] if e.max_micro_batch is None else (str(e.max_micro_batch) if e.max_micro_batch > 0 else lab["none_fits"])
            for _, e in columns) + " |")
    return "\n".join(lines)


def sweep_line(result: SweepResult, lang: str) -> str:
    """'micro 1 → 14.2 GiB, 2 → 17.9 GiB, ...' for a sweep."""
    pairs = ", ".join(f"{v} → {gib(t, lang)}" for v, t in result.series())
    name = {"train_micro_batch_size_per_gpu": "micro batch", "gradient_accumulation_steps": "GA",
            "zero_stage": "ZeRO stage", "precision": "precision" if lang == "en" else "精度"}.get(result.field, result.field)
    return f"{name}: {pairs}"


def batch_summary(result: BatchResult, lang: str) -> str:
    notes = result.notes_zh if lang == "zh" else result.notes_en
    lines = [f"`{result.formula}`"] + [f"- {n}" for n in notes]
    if result.tokens_per_optimizer_step:
        lines.append(f"- tokens/step: {result.tokens_per_optimizer_step:,}" if lang == "en"
                     else f"- 每步 token 数：{result.tokens_per_optimizer_step:,}")
    if result.learning_rate:
        lines.append("- " + (result.learning_rate.note_zh if lang == "zh" else result.learning_rate.note_en))
    return "\n".join(lines)


def memory_summary(est: MemoryEstimate, lang: str) -> str:
    table = memory_table([(est.model_name, est)], lang)
    notes = est.notes_zh if lang == "zh" else est.notes_en
    return table + ("\n\n" + "\n".join(f"- {n}" for n in notes) if notes else "")
