"""Assemble the Gradio app: header, Chat / Calculators / Check / Knowledge tabs, API endpoints, embed mode."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import gradio as gr
from gradio.events import api as gr_api  # gr.api itself; gradio's __all__ leaves it out, so mypy does not see gr.api

from calculators.i18n import t
from calculators.lang import Lang

from .api import register_calculator_api
from .calculators_tab import build_calculators_tab, memory_from_url, wire_calculators_tab
from .chat import ChatController
from .chat_layout import build_chat, restore_chat, wire_chat
from .check_tab import build_check_tab, wire_check_tab
from .i18n import DEFAULT_LANG, lang_from_accept_language, normalize_lang
from .knowledge_tab import Knowledge, build_knowledge_tab, wire_knowledge_tab
from .labels import Labels
from .limits import MAX_QUEUE_SIZE, concurrency_limit, launch_settings
from .mcp_tools import hide_other_endpoints_from_mcp, register_agent_tools
from .style import TAB_FROM_URL_JS, TAB_IN_URL_JS, head_style, theme

if TYPE_CHECKING:
    from gradio.routes import App

CSS = """
.batchbot-header h1 { margin-bottom: 0.2em; }
.field-error p { color: var(--error-text-color, #b91c1c); font-weight: 600; }
.field-invalid input, .field-invalid textarea, .field-invalid .wrap { border-color: #b91c1c !important; }
.field-invalid [data-testid="block-info"], .field-invalid .info { color: #b91c1c; }
.batchbot-plot svg { display: block; margin: 0 auto; }
html.batchbot-embed footer { display: none !important; }
html.batchbot-embed .batchbot-header { display: none !important; }
html.batchbot-embed .gradio-container { padding-top: 0 !important; }
"""

# Runs before the app renders: ?embed=1 hides the header and Gradio's footer (for iframes on a wiki page).
HEAD = """<script>
(function () {
  try {
    var p = new URLSearchParams(window.location.search);
    var e = (p.get('embed') || '').toLowerCase();
    if (e === '1' || e === 'true' || e === 'yes') document.documentElement.classList.add('batchbot-embed');
  } catch (err) {}
})();
</script>"""


class BatchBotBlocks(gr.Blocks):
    """gr.Blocks whose launch() brings the app's CSS/head (Gradio 6 takes them in launch, not the constructor)."""

    embed: bool = False

    def launch(self, *args: Any, **kwargs: Any) -> tuple[App, str, str]:
        kwargs["css"] = CSS + (kwargs.get("css") or "")
        kwargs.setdefault("theme", theme())
        kwargs["head"] = HEAD + head_style() + (kwargs.get("head") or "")
        if self.embed:
            kwargs.setdefault("footer_links", [])
        # Limits a public endpoint needs (ui/limits.py, docs/security.md): body size and read time,
        # no uploads, monitoring off. A caller's own app_kwargs keep their middleware after ours.
        limits = launch_settings()
        app_kwargs = dict(kwargs.get("app_kwargs") or {})
        app_kwargs["middleware"] = limits.pop("app_kwargs")["middleware"] + list(app_kwargs.get("middleware") or [])
        kwargs["app_kwargs"] = app_kwargs
        for key, value in limits.items():
            kwargs.setdefault(key, value)
        return super().launch(*args, **kwargs)


def _truthy(v: Any) -> bool:
    return str(v or "").strip().lower() in ("1", "true", "yes", "on")


def initial_lang(request: gr.Request | None, default: Lang) -> str:
    if request is None:
        return default
    q = request.query_params.get("lang") if hasattr(request, "query_params") else None
    if q:
        return normalize_lang(q, default)
    headers = getattr(request, "headers", {}) or {}
    return lang_from_accept_language(headers.get("accept-language")) or default


def build_app(
    assistant: Any = None, *, embed: bool = False, lang: Lang | None = None, stream_delay: float = 0.03
) -> gr.Blocks:
    """The whole app. ``assistant`` defaults to ``rag.Assistant()`` (settings from the environment)."""
    if assistant is None:
        from rag import Assistant

        assistant = Assistant()
    lang = normalize_lang(lang or os.environ.get("BATCHBOT_LANG"), DEFAULT_LANG)
    chat = ChatController(assistant, stream_delay=stream_delay)
    kb = Knowledge(assistant, chat.lock)
    L = Labels(lang)

    demo = BatchBotBlocks(title="Batch & memory assistant · 批次与显存助手", fill_width=False, analytics_enabled=False)
    with demo:  # Blocks.__enter__ returns the Blocks itself, untyped: `as demo` would make demo Any
        demo.embed = embed
        lang_state = gr.State(lang)
        with gr.Row(elem_classes=["batchbot-header"], visible=not embed) as header:
            with gr.Column(scale=4, elem_classes=["batchbot-title-col"]):
                L.add(
                    gr.Markdown(f"# {L.text('title')}\n{L.text('subtitle')}", elem_id="app-title"),
                    value=lambda lg: f"# {t('title', lg)}\n{t('subtitle', lg)}",
                )
            with gr.Column(scale=1, min_width=180, elem_classes=["batchbot-lang-col"]):
                lang_radio = gr.Radio(
                    [("中文", "zh"), ("English", "en")], value=lang, label=t("lang_label", lang), elem_id="lang-toggle"
                )
        # The small switch of embed mode (docs/embed.md): always built, shown by CSS only when the header is
        # hidden (--embed or ?embed=1), so an iframe on a wiki page can still switch the language.
        lang_radio_embed = gr.Radio(
            [("中文", "zh"), ("English", "en")],
            value=lang,
            show_label=False,
            elem_id="lang-toggle-embed",
            container=False,
            elem_classes=["batchbot-embed-only"],
        )
        # "wrap", not Gradio's default "menu": a tab that does not fit goes to a second row instead of under a
        # "More tabs" (⋯) menu that phone users do not find; the phone CSS (ui/style.py) keeps the four in one row.
        with gr.Tabs(elem_id="main-tabs", overflow_behavior="wrap"):
            with L.add(gr.Tab(L.text("tab_chat"), id="chat", elem_id="tab-chat"), label="tab_chat") as chat_tab:
                chat_ui = build_chat(L, lang)
            with L.add(
                gr.Tab(L.text("tab_calc"), id="calculators", elem_id="tab-calculators"), label="tab_calc"
            ) as calc_tab:
                calc = build_calculators_tab(L)
            with L.add(gr.Tab(L.text("tab_check"), id="check", elem_id="tab-check"), label="tab_check") as check_tab:
                check = build_check_tab(L)
            with L.add(
                gr.Tab(L.text("tab_knowledge"), id="knowledge", elem_id="tab-knowledge"), label="tab_knowledge"
            ) as know_tab:
                know = build_knowledge_tab(L, kb)

        # ---- events: chat (ui/chat_layout.py)
        wire_chat(chat_ui, chat, lang_state)
        for tab_id, tab in (
            ("chat", chat_tab),
            ("calculators", calc_tab),
            ("check", check_tab),
            ("knowledge", know_tab),
        ):
            tab.select(None, js=TAB_IN_URL_JS.replace("TAB_ID", tab_id))

        wire_calculators_tab(calc, lang_state)
        wire_check_tab(check, lang_state)
        wire_knowledge_tab(know, kb, lang_state)  # each tab follows lang_state itself (results, list, card)

        # ---- language: the radio drives a per-session state and relabels everything
        def set_lang(value: str) -> list[Any]:
            new = normalize_lang(value, lang)
            return [new, gr.update(label=t("lang_label", new)), gr.update(value=new)] + L.updates(new)

        lang_outputs = [lang_state, lang_radio, lang_radio_embed] + L.components
        lang_radio.change(set_lang, [lang_radio], lang_outputs, api_visibility="private")
        lang_radio_embed.input(lambda v: gr.update(value=v), [lang_radio_embed], [lang_radio], api_visibility="private")

        def on_load(request: gr.Request) -> tuple[str, dict[str, Any]]:
            params = getattr(request, "query_params", {}) or {}
            hide = embed or _truthy(params.get("embed"))
            return initial_lang(request, lang), gr.update(visible=not hide)

        demo.load(on_load, None, [lang_radio, header], api_visibility="private")
        # ?tab=calculators opens that tab (a Tabs(selected=) update from a load event is not applied in 6.31).
        demo.load(None, js=TAB_FROM_URL_JS)
        # ?model=llama-3-8b&gradient_accumulation_steps=8 ... fills the memory form (a shareable link).
        demo.load(*memory_from_url(calc), api_visibility="private")
        demo.load(*restore_chat(chat_ui), api_visibility="private")

        # ---- API for other programs
        gr_api(chat.api_chat, api_name="chat", concurrency_id="assistant")
        register_calculator_api()
        register_agent_tools(assistant)
    hide_other_endpoints_from_mcp(demo)
    # A bounded queue: event number MAX_QUEUE_SIZE + 1 is refused ("queue is full"), not stored.
    demo.queue(default_concurrency_limit=concurrency_limit(), max_size=MAX_QUEUE_SIZE)
    return demo
