"""The "Check / diagnose" tab: check a pasted config (with model and GPU selectors, the lines at fault marked),
diagnose a pasted error or log, fact-check a chatbot's answer.

Issue #15: the config checker used to hide at the bottom of the Calculators tab and asked for ``model=`` and
``gpu=`` that its box had no way to give. Here the selectors sit beside the box, and the config is shown back
with each line a finding points at highlighted by severity (``gr.HighlightedText``).
"""

from __future__ import annotations

import logging
import math
from typing import Any

import gradio as gr

from calculators import CalculatorError
from calculators.configs import check_config
from calculators.i18n import t
from calculators.lang import Lang, as_lang
from calculators.limits import MAX_CONFIG_CHARS

from .calculators_tab import CUSTOM, gpu_choices, preset_label
from .diagnose_panel import build_diagnose_panel, wire_diagnose_panel
from .factcheck_box import build_factcheck_box, wire_factcheck_box
from .labels import Labels
from .render import md_escape

log = logging.getLogger("batchbot.check")

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
SEVERITY_COLORS = {"error": "#dc2626", "warning": "#d97706", "info": "#2563eb"}


def color_map(lang: Lang) -> dict[str, str]:
    """HighlightedText colours keyed by the severity label in ``lang`` (the legend shows one language)."""
    return {t(f"sev_{sev}", lang): color for sev, color in SEVERITY_COLORS.items()}


def model_choices_for_check(lang: Lang) -> list[tuple[str, str]]:
    from calculators import MODEL_PRESETS

    return [(t("config_model_from_text", lang), CUSTOM)] + [(preset_label(m, lang), m) for m in MODEL_PRESETS]


def _world_size(v: Any) -> Any:
    """0 / empty (what an empty gr.Number sends) = read it from the config (None); a whole float as an int; any
    other value passes through unchanged, for the doctor to refuse in the user's language."""
    if v is None or v == "" or v == 0:
        return None
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        return int(v)
    return v


def marked_lines(
    text: str, findings: list[Any], positions: dict[str, tuple[int, int]], lang: Lang
) -> list[tuple[str, str | None]]:
    """The config as (line, severity label or None) segments for gr.HighlightedText: a line gets the most
    severe label among the findings that point at it (by line number, else by the key's position)."""
    worst: dict[int, str] = {}
    for f in findings:
        line = f.line if f.line is not None else (positions.get(f.key) or (None, None))[0]
        if line is None:
            continue
        if line not in worst or SEVERITY_ORDER[f.severity] < SEVERITY_ORDER[worst[line]]:
            worst[line] = f.severity
    lines = text.split("\n")
    return [
        (line + ("\n" if i < len(lines) else ""), t(f"sev_{worst[i]}", lang) if i in worst else None)
        for i, line in enumerate(lines, start=1)
    ]


def run_check_config(
    text: str | None, model: str | None, gpu: str | None, world_size: Any, lang: Lang
) -> tuple[str, Any]:
    """(report Markdown, HighlightedText value). Never raises: bad input gets one line in the user's language."""
    lang = as_lang(lang)  # the session's language, checked once here
    if not isinstance(text, str) or not text.strip():
        return "ℹ " + t("config_text", lang), None
    if len(text) > MAX_CONFIG_CHARS:
        return "✘ " + t("too_long", lang, n=f"{len(text):,}", max=f"{MAX_CONFIG_CHARS:,}"), None
    try:
        report = check_config(
            text,
            gpu=None if gpu in (None, "", CUSTOM) else gpu,
            model=None if model in (None, "", CUSTOM) else model,
            world_size=_world_size(world_size),
            lang=lang,
        )
    except CalculatorError as err:
        return "✘ " + md_escape(err.message(lang)), None
    except Exception as exc:  # never a traceback in the page
        from .chat import log_failure

        log_failure("config check failed", exc)
        return "✘ " + t("check_failed", lang), None
    findings = report._by_lang.get(lang) or report.findings
    positions = report.parsed.positions if report.parsed else {}
    marks = marked_lines(text, findings, positions, lang)
    return report.to_markdown(lang), (marks if any(label for _, label in marks) else None)


def build_check_tab(L: Labels) -> dict[str, Any]:
    """Lay out the tab (inside a gr.Tab); returns the components for :func:`wire_check_tab`."""
    lang = L.lang
    L.add(gr.Markdown(L.text("check_intro")), value="check_intro")
    with L.add(
        gr.Accordion(L.text("config_doctor_header"), open=True, elem_id="config-doctor"), label="config_doctor_header"
    ):
        with gr.Row():
            with gr.Column(scale=3, min_width=300):
                text = L.add(
                    gr.Code(None, language="yaml", label=L.text("config_text"), lines=10, elem_id="c_text"),
                    label="config_text",
                )
            with gr.Column(scale=1, min_width=220):
                model = L.add(
                    gr.Dropdown(
                        model_choices_for_check(lang), value=CUSTOM, label=L.text("config_model"), elem_id="c_model"
                    ),
                    label="config_model",
                    choices=model_choices_for_check,
                )
                gpu = L.add(
                    gr.Dropdown(gpu_choices(lang), value=CUSTOM, label=L.text("config_gpu"), elem_id="c_gpu"),
                    label="config_gpu",
                    choices=gpu_choices,
                )
                ws = L.add(gr.Number(None, precision=0, label=L.text("config_ws"), elem_id="c_ws"), label="config_ws")
                btn = L.add(gr.Button(L.text("run_check"), variant="primary", elem_id="run-check"), value="run_check")
        marks = L.add(
            gr.HighlightedText(
                None,
                label=L.text("config_marked"),
                elem_id="config-marked",
                color_map=color_map(lang),
                show_legend=True,
                combine_adjacent=False,
                show_whitespaces=True,
            ),
            label="config_marked",
            color_map=color_map,
        )
        out = gr.Markdown("", elem_id="config-report")
        doctor = dict(text=text, model=model, gpu=gpu, ws=ws, button=btn, marks=marks, out=out)
    diagnose = build_diagnose_panel(L)
    factcheck = build_factcheck_box(L)
    return dict(doctor=doctor, diagnose=diagnose, factcheck=factcheck)


def wire_check_tab(h: dict[str, Any], lang_state: Any) -> None:
    d = h["doctor"]
    inputs = [d["text"], d["model"], d["gpu"], d["ws"], lang_state]
    d["button"].click(run_check_config, inputs, [d["out"], d["marks"]], api_visibility="private")
    # Changing the model, GPU or GPU count re-checks what is already pasted (no stale verdict).
    gr.on(
        [d["model"].change, d["gpu"].change, d["ws"].change],
        run_check_config,
        inputs,
        [d["out"], d["marks"]],
        api_visibility="private",
        trigger_mode="always_last",
        show_progress="hidden",
    )
    wire_diagnose_panel(h["diagnose"], lang_state)
    wire_factcheck_box(h["factcheck"], lang_state)
