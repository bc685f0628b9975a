"""The "Paste an error or log" box in the Check / diagnose tab (below "Check my config").

It calls ``calculators.diagnose.diagnose`` and shows its Markdown; its strings are the
catalogue's "diagnose_panel." keys (calculators.i18n).
"""

from __future__ import annotations

import logging
from typing import Any

import gradio as gr

from calculators import CalculatorError
from calculators.diagnose import diagnose
from calculators.i18n import t
from calculators.lang import Lang, as_lang
from calculators.limits import MAX_PASTE_CHARS

from .labels import Labels

log = logging.getLogger("batchbot.diagnose")

#: Pastes longer than this are refused in the UI (the diagnoser itself reads only the last 200,000 characters).
MAX_PASTE = MAX_PASTE_CHARS  # calculators.limits: the same limit as the diagnose tool


def run_diagnose(text: str | None, ui_lang: Lang) -> str:
    """Markdown for the panel; never raises (bad input gets a message in the user's language)."""
    lang = as_lang(ui_lang)
    if not isinstance(text, str) or not text.strip():
        return t("diagnose_panel.empty", lang)
    if len(text) > MAX_PASTE:
        return "✘ " + t("too_long", lang, n=f"{len(text):,}", max=f"{MAX_PASTE:,}")  # the chat's wording
    try:
        return diagnose(text, lang=lang).to_markdown(lang)
    except CalculatorError as err:
        return "✘ " + err.message(lang)
    except Exception as exc:  # a bug must not show a traceback to the user
        log.exception("diagnose failed")
        return t("diagnose_panel.failed", lang, name=type(exc).__name__)


def build_diagnose_panel(L: Labels) -> tuple[Any, Any, Any]:
    """Lay out the panel (inside the Check / diagnose tab); returns (textbox, button, output)."""
    with L.add(
        gr.Accordion(t("diagnose_panel.header", L.lang), open=True, elem_id="diagnose-paste"),
        label=lambda lg: t("diagnose_panel.header", lg),
    ):
        box = L.add(
            gr.Textbox(None, label=t("diagnose_panel.box", L.lang), lines=8, max_lines=30, elem_id="d_text"),
            label=lambda lg: t("diagnose_panel.box", lg),
        )
        btn = L.add(
            gr.Button(t("diagnose_panel.button", L.lang), elem_id="run-diagnose"),
            value=lambda lg: t("diagnose_panel.button", lg),
        )
        out = gr.Markdown("", elem_id="diagnose-report")
    return box, btn, out


def wire_diagnose_panel(handles: tuple[Any, Any, Any], lang_state: Any) -> None:
    box, btn, out = handles
    btn.click(run_diagnose, [box, lang_state], [out], api_visibility="private")
