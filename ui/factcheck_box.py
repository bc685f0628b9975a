"""The "Check a chatbot's answer" box in the Check / diagnose tab: paste an answer, get the fact-check report.

Kept apart from ``check_tab.py`` (its own strings, its own handler) so the two can change independently.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import gradio as gr

from calculators import CalculatorError
from calculators.factcheck import MAX_CHARS, fact_check, strip_check_request

from .labels import Labels

log = logging.getLogger("batchbot.factcheck")

STRINGS = {
    "header": {"zh": "核查一段聊天机器人的回答", "en": "Check a chatbot's answer"},
    "text": {
        "zh": "粘贴关于批次、梯度累积、精度或显存的回答（中文或英文）",
        "en": "Paste an answer about batch size, gradient accumulation, precision or memory (zh or en)",
    },
    "button": {"zh": "核查", "en": "Check answer"},
    "empty": {"zh": "请先粘贴要核查的回答。", "en": "Paste the answer to check first."},
}


def _s(key: str) -> Callable[[str], str]:
    return lambda lang: STRINGS[key]["zh" if lang == "zh" else "en"]


def run_fact_check(text: str | None, lang: str) -> str:
    """The report as Markdown; bad input gives one line saying what is wrong and what is accepted."""
    lang = "zh" if lang == "zh" else "en"
    if not isinstance(text, str) or not text.strip():
        return "ℹ " + _s("empty")(lang)
    try:
        return fact_check(strip_check_request(text) or text, lang).to_markdown(lang)
    except CalculatorError as err:
        return "✘ " + err.message(lang)
    except Exception:  # never a traceback in the page
        log.exception("fact check failed")
        return "✘ " + ("核查失败，请检查输入。" if lang == "zh" else "The check failed; please check the input.")


def build_factcheck_box(L: Labels) -> dict[str, Any]:
    with L.add(gr.Accordion(_s("header")(L.lang), open=False, elem_id="fact-check"), label=_s("header")):
        box = L.add(
            gr.Textbox(None, lines=8, max_lines=30, label=_s("text")(L.lang), elem_id="fc_text", max_length=MAX_CHARS),
            label=_s("text"),
        )
        btn = L.add(gr.Button(_s("button")(L.lang), elem_id="run-fact-check"), value=_s("button"))
        out = gr.Markdown("", elem_id="fact-check-report")
    return {"text": box, "button": btn, "out": out}


def wire_factcheck_box(h: dict[str, Any], lang_state: Any) -> None:
    h["button"].click(run_fact_check, [h["text"], lang_state], [h["out"]], api_visibility="private")
