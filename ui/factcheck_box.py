"""The "Check a chatbot's answer" box in the Check / diagnose tab: paste an answer, get the fact-check report.

Kept apart from ``check_tab.py`` (its own strings, its own handler) so the two can change independently.
"""

from __future__ import annotations

import logging
from typing import Any

import gradio as gr

from calculators import CalculatorError
from calculators.factcheck import MAX_CHARS, fact_check, strip_check_request
from calculators.i18n import t
from calculators.lang import Lang, as_lang

from .labels import Labels

log = logging.getLogger("batchbot.factcheck")


def run_fact_check(text: str | None, ui_lang: Lang) -> str:
    """The report as Markdown; bad input gives one line saying what is wrong and what is accepted."""
    lang = as_lang(ui_lang)
    if not isinstance(text, str) or not text.strip():
        return "ℹ " + t("factcheck.empty", lang)
    try:
        return fact_check(strip_check_request(text) or text, lang).to_markdown(lang)
    except CalculatorError as err:
        return "✘ " + err.message(lang)
    except Exception:  # never a traceback in the page
        log.exception("fact check failed")
        return "✘ " + t("factcheck.failed", lang)


def build_factcheck_box(L: Labels) -> dict[str, Any]:
    with L.add(gr.Accordion(t("factcheck.header", L.lang), open=False, elem_id="fact-check"), label="factcheck.header"):
        box = L.add(
            gr.Textbox(
                None, lines=8, max_lines=30, label=t("factcheck.text", L.lang), elem_id="fc_text", max_length=MAX_CHARS
            ),
            label="factcheck.text",
        )
        btn = L.add(gr.Button(t("factcheck.button", L.lang), elem_id="run-fact-check"), value="factcheck.button")
        out = gr.Markdown("", elem_id="fact-check-report")
    return {"text": box, "button": btn, "out": out}


def wire_factcheck_box(h: dict[str, Any], lang_state: Any) -> None:
    h["button"].click(run_fact_check, [h["text"], lang_state], [h["out"]], api_visibility="private")
