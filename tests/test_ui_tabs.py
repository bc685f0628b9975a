"""The tabs' pure parts (issue #15 items 3, 4, 7, 8, 10), without a browser or a server."""

from __future__ import annotations

import re
import threading
from types import SimpleNamespace

import pytest

from calculators import GiB, estimate_memory
from calculators.units import format_gib
from ui.calculators_tab import DEFAULTS, nearest_fits, run_memory
from ui.check_tab import marked_lines, run_check_config
from ui.knowledge_tab import OPENERS, TOPIC_ORDER, Knowledge, reading_order
from ui.plots import COLORS, memory_chart_svg, over_text, stack, sweep_svg, y_top
from ui.render import memory_table, nearest_fits_md, tool_call_message

FULL_7B_3090 = {**DEFAULTS, "finetune": "full"}


# ---------------------------------------------------------------- item 3: a "no" with a way out
def test_overshoot_is_shown_to_the_hundredth():
    assert over_text(-int(0.02 * GiB), "en") == "+0.02 GiB over"
    assert over_text(-int(0.02 * GiB), "zh") == "超出 0.02 GiB"
    assert over_text(5, "en") == "" and over_text(None, "en") == ""


def test_a_setting_that_does_not_fit_gets_the_nearest_ones_that_do():
    err, summary, bar, *_ = run_memory(FULL_7B_3090, "en")
    assert err == ""
    assert summary.startswith("**✘ Does not fit") and "GiB over)" in summary
    assert "The nearest settings that fit" in summary and "LoRA instead of a full fine-tune" in summary
    cfg = {k: v for k, v in FULL_7B_3090.items()}
    options = nearest_fits(cfg, "en")
    assert options and all(est.fits for _, est in options)
    # every number shown is the calculator's own for that changed setting
    lora = estimate_memory({**cfg, "finetune": "lora"})
    assert format_gib(lora.total_per_gpu) in summary  # the one GiB formatter (calculators/units.py)
    assert "none: even micro batch 1 does not fit" in summary  # not "largest micro batch 0"
    zh = run_memory(FULL_7B_3090, "zh")[1]
    assert "最接近且能放下的设置" in zh and "超出" in zh


def test_a_setting_that_fits_has_no_way_out_section():
    err, summary, *_ = run_memory(dict(DEFAULTS), "en")
    assert err == "" and "nearest settings" not in summary and "✔ fits" in summary


def test_nothing_fits_says_what_is_left():
    est = estimate_memory({"model": "llama-2-70b", "gpu": "rtx-3090", "finetune": "full"})
    md = nearest_fits_md(est, [], "en")
    assert "more GPUs" in md and "GiB over" in md


def test_custom_capacity_is_not_named_twice():
    est = estimate_memory({"model": "llama-2-13b", "gpu_memory_gb": 80, "finetune": "full"})
    md = nearest_fits_md(est, [], "en")
    assert "80 GiB GPU" not in md and "the GPU has 80.0 GiB" in md


def test_config_checker_no_longer_says_80_gib_80_gib_gpu():
    from calculators.configs import check_config

    r = check_config(
        {"train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1}, model="llama-2-13b", gpu=80.0
    )
    text = r.to_markdown("en")
    assert "Does not fit" in text and not re.search(r"GiB \d+ GiB GPU", text) and "one 80.0 GiB GPU" in text


# ---------------------------------------------------------------- item 7: plots
def _attr(svg: str, cls: str, attr: str) -> str:
    return re.search(rf'class="{cls}"[^>]*?{attr}="([^"]+)"', svg).group(1)


def test_capacity_line_and_activations_never_share_a_colour():
    _, _, bar, micro, _ = run_memory(dict(DEFAULTS), "en")
    assert _attr(bar, "capacity", "stroke") != _attr(bar, "seg-activations", "fill")
    assert _attr(micro, "capacity", "stroke") != _attr(micro, "line-activations", "stroke")
    assert COLORS["capacity"] not in (COLORS[c] for c in ("weights", "gradients", "optimizer_states", "activations"))


def test_no_white_box_text_follows_the_page_colour():
    for svg in run_memory(dict(DEFAULTS), "en")[2:]:
        assert 'fill="white"/>' not in svg and "<rect width=" not in svg
        assert 'fill="currentColor"' in svg


def test_y_axis_stays_near_the_capacity_when_a_sweep_runs_far_above_it():
    top = y_top([10, 20, 40, 80, 160, 250], 24, 12)
    assert 24 * 1.15 <= top <= 24 * 2
    assert y_top([5, 6], 24) >= 24 * 1.15  # the capacity line is always on the chart
    assert y_top([10, 250], None) >= 250  # no capacity: everything is shown
    svg = sweep_svg(
        "train_micro_batch_size_per_gpu",
        [(1, 10 * GiB, 1 * GiB), (2, 20 * GiB, 2 * GiB), (32, 250 * GiB, 200 * GiB)],
        24 * GiB,
        "en",
        "t",
        current=2,
    )
    assert 'class="off-scale"' in svg and ">250<" in svg  # the off-scale point is marked with its value
    assert "your setting: 2 → 20.0 GiB" in svg and 'class="current"' in svg


def test_sweeps_mark_the_current_setting():
    values = {**DEFAULTS, "gradient_accumulation_steps": 16, "train_micro_batch_size_per_gpu": 2}
    _, _, _, micro, ga = run_memory(values, "en")
    assert "your setting: 16 →" in ga and "your setting: 2 →" in micro


def test_bar_top_is_the_estimates_peak_even_when_gradients_and_activations_do_not_coexist():
    for ga in (1, 4):
        est = estimate_memory(
            {"model": "llama-2-7b", "gpu": "rtx-3090", "finetune": "full", "gradient_accumulation_steps": ga}
        )
        segments, peak = stack(est.model_dump())
        assert peak == pytest.approx(est.total_per_gpu / GiB)
        assert any(lane is not None for *_, lane in segments) == (not est.gradients_live_during_forward)


def test_chat_chart_for_a_memory_answer():
    est = estimate_memory({"model": "llama-2-7b", "gpu": "rtx-3090", "finetune": "full"})
    svg = memory_chart_svg(est.model_dump(mode="json"), "en")
    assert 'data-testid="chat-memory-chart"' in svg and "does not fit" in svg and "GiB over" in svg
    msg = tool_call_message(
        {
            "name": "memory",
            "arguments": {"model": "llama-2-7b"},
            "result": est.model_dump(mode="json"),
            "summary_md": "",
        },
        "en",
    )
    assert msg["content"].startswith('<div class="batchbot-plot"')
    assert memory_chart_svg({"total_per_gpu": None}, "en") == ""
    assert "<script" not in memory_chart_svg({**est.model_dump(mode="json"), "model_name": "<script>x"}, "en")


def test_memory_table_verdict_has_the_overshoot():
    est = estimate_memory({"model": "llama-2-7b", "gpu": "rtx-3090", "finetune": "full"}).model_dump(mode="json")
    table = memory_table(est, "en")
    assert "✘ does not fit (+" in table and "GiB over)" in table


# ---------------------------------------------------------------- item 8: check / diagnose
CONFIG = '{\n  "train_batch_size": 100,\n  "train_micro_batch_size_per_gpu": 2,\n  "gradient_accumulation_steps": 8\n}'


def test_the_lines_at_fault_are_marked():
    report, marks = run_check_config(CONFIG, "llama-2-7b", "rtx-3090", 0, "en")
    assert "error" in report
    assert marks is not None and "".join(text for text, _ in marks) == CONFIG
    labelled = [text for text, label in marks if label == "error"]
    assert any("train_batch_size" in line for line in labelled), marks
    assert all(label in (None, "error", "warning", "note") for _, label in marks)
    zh_report, zh_marks = run_check_config(CONFIG, "llama-2-7b", "rtx-3090", None, "zh")
    assert any(label == "错误" for _, label in zh_marks)


def test_model_and_gpu_selectors_reach_the_checker():
    ok = '{"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 8, "bf16": {"enabled": true}}'
    without, _ = run_check_config(ok, None, None, None, "en")
    assert "No memory estimate" in without and "model=" not in without
    with_model, _ = run_check_config(ok, "llama-2-7b", "a100-80gb", 1, "en")
    assert "Memory per GPU" in with_model and "a100" in with_model.lower()


@pytest.mark.parametrize("bad", ["", "   ", None, "x" * 100_001])
def test_check_refuses_bad_input_in_the_users_language(bad):
    en, marks = run_check_config(bad, None, None, None, "en")
    zh, _ = run_check_config(bad, None, None, None, "zh")
    assert marks is None and en.startswith(("ℹ", "✘")) and re.search(r"[\u4e00-\u9fff]", zh)


def test_marked_lines_keep_the_text_and_prefer_the_worst_severity():
    f = [
        SimpleNamespace(line=2, key="a", severity="info"),
        SimpleNamespace(line=2, key="a", severity="error"),
        SimpleNamespace(line=None, key="b", severity="warning"),
    ]
    marks = marked_lines("x\ny\nz", f, {"b": (3, 1)}, "en")
    assert "".join(t for t, _ in marks) == "x\ny\nz"
    assert [label for _, label in marks] == [None, "error", "warning"]


# ---------------------------------------------------------------- item 10: knowledge
class _Bot:
    def __init__(self, cards):
        self.cards = cards

    def retrieve(self, q, k=5):
        return [SimpleNamespace(card=c, score=0.03) for c in self.cards[:k]]


@pytest.fixture(scope="module")
def cards():
    from rag.cards import load_cards

    return load_cards()


def test_default_order_starts_with_what_people_ask(cards):
    ordered = reading_order(cards)
    assert [c.id for c in ordered[:3]] == list(OPENERS)
    assert not ordered[0].id.startswith("batchnorm") and TOPIC_ORDER[0] in ordered[0].topics
    rest = ordered[3:]
    ranks = [min(TOPIC_ORDER.index(t) if t in TOPIC_ORDER else len(TOPIC_ORDER) for t in c.topics) for c in rest]
    assert ranks == sorted(ranks) and len(ordered) == len(cards) and len({c.id for c in ordered}) == len(cards)


def test_table_has_no_fusion_score_and_a_click_opens_the_row(cards):
    kb = Knowledge(_Bot(cards), threading.Lock())
    head, table, ids, first, card = kb.search("gradient accumulation", "en")
    assert table["headers"] == ["#", "Title", "Topics"]
    assert not any(isinstance(cell, float) for row in table["data"] for cell in row)
    assert [row[1] for row in table["data"]] == [kb.by_id[i].title_en for i in ids] and card
    evt = SimpleNamespace(index=[2, 1])
    cid, md = kb.open_row(ids, "zh", evt)
    assert cid == ids[2] and md == kb.show(ids[2], "zh") and md.startswith("## ")
    assert kb.open_row(ids, "en", SimpleNamespace(index=[99, 0])) == (None, "")
    head, table, ids, _, _ = kb.search("", "zh")
    assert table["headers"] == ["#", "标题", "主题"] and len(ids) == len(cards)
