"""A memory estimate as the reader sees it: one row order, one name per row, one verdict, one GiB formatter.

Why here: the chat's tables (rag), the calculators tab's summary, the chat's inline chart and the tab's plots (ui)
each had their own row names and order ("Optimizer states" / "optimizer states", "GPU 容量" / "显卡容量") and their
own verdict wording; calculators/ is the layer both rag and ui import. Charts use :func:`short_name` (the name
without its parenthesis), tables :func:`row_name`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .lang import Lang, as_lang
from .memory import MemoryEstimate
from .units import format_gib

#: The breakdown's categories, bottom of the stack first; they add up to the peak (see calculators.memory).
CATEGORIES: tuple[str, ...] = ("weights", "gradients", "optimizer_states", "activations", "other")

#: Every byte row of a memory table, in order: the categories, the total, then CPU and the GPU's capacity.
ROWS: tuple[str, ...] = (*CATEGORIES, "total_per_gpu", "cpu_total", "gpu_capacity")

#: Row names and the table's other words, zh and en.
NAMES: dict[str, dict[Lang, str]] = {
    "weights": {"zh": "权重", "en": "weights"},
    "gradients": {"zh": "梯度", "en": "gradients"},
    "optimizer_states": {"zh": "优化器状态", "en": "optimizer states"},
    "activations": {"zh": "激活", "en": "activations"},
    "other": {"zh": "其他（CUDA 上下文、通信缓冲）", "en": "other (CUDA context, comm buffers)"},
    "total_per_gpu": {"zh": "每卡合计", "en": "total per GPU"},
    "cpu_total": {"zh": "CPU 内存（offload，每节点）", "en": "CPU memory (offload, per node)"},
    "gpu_capacity": {"zh": "显卡容量", "en": "GPU capacity"},
    "verdict": {"zh": "结论", "en": "verdict"},
    "max_micro_batch": {"zh": "最大微批次", "en": "largest micro batch that fits"},
    "no_micro_batch": {"zh": "无：micro batch 1 也放不下", "en": "none: even micro batch 1 does not fit"},
    "item": {"zh": "项目", "en": "item"},
    "per_gpu": {"zh": "每卡", "en": "per GPU"},
    "unknown": {"zh": "未知", "en": "unknown"},
}

Column = MemoryEstimate | Mapping[str, Any]


def row_name(row: str, lang: str) -> str:
    """The name of ``row`` (a ROWS entry or another NAMES key) in ``lang``."""
    return NAMES[row][as_lang(lang)]


def short_name(row: str, lang: str) -> str:
    """The name without its parenthesis, for a chart legend ("other (CUDA context, comm buffers)" → "other")."""
    return row_name(row, lang).split("（")[0].split(" (")[0]


def over_text(headroom: int | None, lang: str) -> str:
    """ "+0.02 GiB over" / "超出 0.02 GiB" for a negative headroom, "" otherwise."""
    if headroom is None or headroom >= 0:
        return ""
    over = format_gib(-headroom)
    return f"超出 {over}" if as_lang(lang) == "zh" else f"+{over} over"


def verdict_text(estimate: Column, lang: str) -> str:
    """ "✔ fits (1.24 GiB spare)" / "✘ does not fit (+3.51 GiB over)"; "" when no GPU capacity was given."""
    d = _as_dict(estimate)
    if d.get("fits") is None:
        return ""
    zh = as_lang(lang) == "zh"
    if d["fits"]:
        spare = format_gib(d.get("headroom") or 0)
        return f"✔ 放得下（剩余 {spare}）" if zh else f"✔ fits ({spare} spare)"
    over = over_text(d.get("headroom"), lang)
    return f"✘ 放不下（{over}）" if zh else f"✘ does not fit ({over})"


def memory_table(columns: Sequence[tuple[str, Column]], lang: str) -> str:
    """A Markdown table with one column per estimate (the tab: one "per GPU" column; the chat: GA=1 vs GA=16).

    Rows in ROWS order; CPU memory only when some column offloads, capacity, verdict and the largest micro batch
    only when some column was given a GPU. Column titles are written as given (the caller escapes user text)."""
    lg = as_lang(lang)
    cols = [(title, _as_dict(est)) for title, est in columns]
    unknown = NAMES["unknown"][lg]

    def line(name: str, cells: Sequence[str]) -> str:
        return f"| {name} | " + " | ".join(cells) + " |"

    out = [line(NAMES["item"][lg], [title for title, _ in cols]), "|---|" + "---:|" * len(cols)]
    for row in ROWS:
        if row == "cpu_total" and not any(d.get(row) for _, d in cols):
            continue
        if row == "gpu_capacity" and not any(d.get(row) for _, d in cols):
            continue
        name = f"**{NAMES[row][lg]}**" if row == "total_per_gpu" else NAMES[row][lg]
        out.append(line(name, [format_gib(d.get(row), unknown=unknown) for _, d in cols]))
    if any(d.get("fits") is not None for _, d in cols):
        out.append(line(NAMES["verdict"][lg], [verdict_text(d, lg) or unknown for _, d in cols]))
    if any(d.get("max_micro_batch") is not None for _, d in cols):
        out.append(line(NAMES["max_micro_batch"][lg], [_max_micro(d.get("max_micro_batch"), lg) for _, d in cols]))
    return "\n".join(out)


def _max_micro(value: Any, lang: Lang) -> str:
    if value is None:
        return NAMES["unknown"][lang]
    return str(value) if value > 0 else NAMES["no_micro_batch"][lang]


def _as_dict(estimate: Column) -> Mapping[str, Any]:
    return estimate.model_dump() if isinstance(estimate, MemoryEstimate) else estimate
