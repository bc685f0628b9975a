"""The "Paste an error or log" box in the Check / diagnose tab (below "Check my config").

It calls ``calculators.diagnose.diagnose`` and shows its Markdown; the strings live here so the panel is one
small, separate piece of the UI.
"""

from __future__ import annotations

import logging
from typing import Any

import gradio as gr

from calculators import CalculatorError
from calculators.diagnose import diagnose
from calculators.lang import Lang
from calculators.limits import MAX_PASTE_CHARS

from .i18n import t
from .labels import Labels

log = logging.getLogger("batchbot.diagnose")

#: Pastes longer than this are refused in the UI (the diagnoser itself reads only the last 200,000 characters).
MAX_PASTE = MAX_PASTE_CHARS  # calculators.limits: the same limit as the diagnose tool

TEXT = {
    "header": {"zh": "粘贴报错或日志", "en": "Paste an error or log"},
    "box": {
        "zh": "粘贴 CUDA OOM 报错、DeepSpeed / HF 报错、启动命令、nvidia-smi 输出或训练日志",
        "en": "Paste a CUDA OOM message, DeepSpeed / HF error, launch command, nvidia-smi output or training log",
    },
    "button": {"zh": "诊断", "en": "Diagnose"},
    "empty": {
        "zh": "ℹ 请先粘贴报错、日志、命令或 nvidia-smi 输出。",
        "en": "ℹ Paste an error, log, command or nvidia-smi output first.",
    },
    "failed": {
        "zh": "✘ 诊断失败（{name}）。请检查粘贴的内容。",
        "en": "✘ Diagnosis failed ({name}). Please check the paste.",
    },
}


def _t(key: str, lang: str) -> str:
    return TEXT[key]["zh" if lang == "zh" else "en"]


def run_diagnose(text: str | None, ui_lang: str) -> str:
    """Markdown for the panel; never raises (bad input gets a message in the user's language)."""
    lang: Lang = "zh" if ui_lang == "zh" else "en"
    if not isinstance(text, str) or not text.strip():
        return _t("empty", lang)
    if len(text) > MAX_PASTE:
        return "✘ " + t("too_long", lang, n=f"{len(text):,}", max=f"{MAX_PASTE:,}")  # the chat's wording
    try:
        return diagnose(text, lang=lang).to_markdown(lang)
    except CalculatorError as err:
        return "✘ " + err.message(lang)
    except Exception as exc:  # a bug must not show a traceback to the user
        log.exception("diagnose failed")
        return _t("failed", lang).format(name=type(exc).__name__)


def build_diagnose_panel(L: Labels) -> tuple[Any, Any, Any]:
    """Lay out the panel (inside the Check / diagnose tab); returns (textbox, button, output)."""
    with L.add(
        gr.Accordion(_t("header", L.lang), open=True, elem_id="diagnose-paste"), label=lambda lg: _t("header", lg)
    ):
        box = L.add(
            gr.Textbox(None, label=_t("box", L.lang), lines=8, max_lines=30, elem_id="d_text"),
            label=lambda lg: _t("box", lg),
        )
        btn = L.add(gr.Button(_t("button", L.lang), elem_id="run-diagnose"), value=lambda lg: _t("button", lg))
        out = gr.Markdown("", elem_id="diagnose-report")
    return box, btn, out


def wire_diagnose_panel(handles: tuple[Any, Any, Any], lang_state: Any) -> None:
    box, btn, out = handles
    btn.click(run_diagnose, [box, lang_state], [out], api_visibility="private")
