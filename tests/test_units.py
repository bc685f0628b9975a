"""One GiB formatter: the chat, the calculators tab, the config doctor and the diagnosis write the same figure."""

from __future__ import annotations

import pytest

from calculators.units import GiB, format_gib, format_gib_value, gib_number


@pytest.mark.parametrize(
    ("nbytes", "text"),
    [
        (0.02 * GiB, "0.02 GiB"),
        (1.236 * GiB, "1.24 GiB"),
        (9.87 * GiB, "9.87 GiB"),
        (14.23 * GiB, "14.2 GiB"),
        (79.15 * GiB, "79.2 GiB"),
        (1024 * GiB, "1,024.0 GiB"),
        (0, "0.00 GiB"),
    ],
)
def test_three_significant_figures(nbytes: float, text: str) -> None:
    assert format_gib(nbytes) == text
    assert format_gib_value(nbytes / GiB) == text
    assert gib_number(nbytes) + " GiB" == text


def test_unknown() -> None:
    assert format_gib(None) == "—" and gib_number(None) == "?" and format_gib(None, unknown="unknown") == "unknown"


def test_the_chat_and_the_calculators_tab_agree() -> None:
    from rag.formatting import gib as chat_gib
    from ui.render import gib as tab_gib

    for nbytes in (0.5 * GiB, 14.23 * GiB, 123.456 * GiB):
        assert chat_gib(nbytes, "en") == tab_gib(nbytes) == chat_gib(nbytes, "zh") == format_gib(nbytes)


def test_the_diagnosis_uses_it() -> None:
    from calculators.diagnose._text import fmt_gib

    assert fmt_gib(14.23) == "14.2 GiB" and fmt_gib(1.236) == "1.24 GiB"


def test_one_memory_table_for_the_tab_and_the_chat() -> None:
    """The tab's one-column table and a multi-column comparison have the same rows, names and figures."""
    from calculators import estimate_memory
    from calculators.memory_table import NAMES, ROWS, memory_table
    from ui.render import memory_table as tab_table

    small = estimate_memory({"model": "llama-2-7b", "gpu": "a100-80gb", "finetune": "lora"})
    big = estimate_memory(
        {"model": "llama-2-7b", "gpu": "rtx-3090", "finetune": "full", "offload_optimizer": True, "zero_stage": 2}
    )
    table = memory_table([("LoRA", small), ("full", big)], "en")
    names = [line.split(" | ")[0].strip("| *") for line in table.splitlines()[2:]]
    shown = [row for row in ROWS if NAMES[row]["en"] in names]
    assert [names.index(NAMES[row]["en"]) for row in shown] == sorted(names.index(NAMES[row]["en"]) for row in shown)
    assert "cpu_total" in shown and "gpu_capacity" in shown and "verdict" in names
    assert f"| {format_gib(small.total_per_gpu)} | {format_gib(big.total_per_gpu)} |" in table
    tab = tab_table(small.model_dump(mode="json"), "zh")
    assert "| 项目 | 每卡 |" in tab and f"| **每卡合计** | {format_gib(small.total_per_gpu)} |" in tab
    assert "CPU" not in tab  # no offload: no CPU row
    assert "✔ 放得下（剩余 " + format_gib(small.headroom) in tab


def test_the_charts_use_the_tables_names_and_figures() -> None:
    from calculators import estimate_memory
    from calculators.memory_table import short_name
    from ui.plots import breakdown_svg, memory_chart_svg

    est = estimate_memory({"model": "llama-2-7b", "gpu": "rtx-3090", "finetune": "full"})
    chat = memory_chart_svg(est.model_dump(mode="json"), "en")
    assert (
        format_gib(est.total_per_gpu) in chat
        and f"{short_name('gpu_capacity', 'en')} {format_gib(est.gpu_capacity)}" in chat
    )
    assert "other (" not in chat and ">other " in chat  # the legend's short name
    bar = breakdown_svg(est, "zh")
    assert "超出 " + format_gib(-(est.headroom or 0)) in bar
