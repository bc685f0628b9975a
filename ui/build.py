"""Assemble the Gradio app: header, Chat / Calculators / Check / Knowledge tabs, API endpoints, embed mode."""
from __future__ import annotations

import os
from typing import Any

import gradio as gr

from .api import register_calculator_api
from .mcp_tools import hide_other_endpoints_from_mcp, register_agent_tools
from .calculators_tab import build_calculators_tab, wire_calculators_tab
from .check_tab import build_check_tab, wire_check_tab
from .chat import MAX_QUESTION_CHARS, ChatController
from .i18n import DEFAULT_LANG, lang_from_accept_language, normalize_lang, t
from .knowledge_tab import Knowledge, build_knowledge_tab, wire_knowledge_tab
from .labels import Labels
from .limits import CONCURRENCY_LIMIT, MAX_QUEUE_SIZE, launch_settings

EXAMPLES_ZH = [
    "如果 train_micro_batch_size_per_gpu 开的小，gradient_accumulation_steps 开的也小会怎么样？",
    "在3090显存受限的情况下，gradient_accumulation_steps 增大会增大显存吗？显存爆掉是因为有效批次大小吗？",
]
EXAMPLES_EN = [
    "Does increasing gradient_accumulation_steps use more GPU memory?",
    "How much GPU memory does a full fine-tune of Llama-2-7B with AdamW need on one A100-80GB?",
    "With DeepSpeed ZeRO-2 on 4 GPUs, micro batch 2 and GA 8, what is the effective batch size?",
]

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

    def launch(self, *args: Any, **kwargs: Any):  # type: ignore[override]
        kwargs["css"] = CSS + (kwargs.get("css") or "")
        kwargs["head"] = HEAD + (kwargs.get("head") or "")
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


def initial_lang(request: gr.Request | None, default: str) -> str:
    if request is None:
        return default
    q = request.query_params.get("lang") if hasattr(request, "query_params") else None
    if q:
        return normalize_lang(q, default)
    headers = getattr(request, "headers", {}) or {}
    return lang_from_accept_language(headers.get("accept-language")) or default


def build_app(assistant: Any = None, *, embed: bool = False, lang: str | None = None,
              stream_delay: float = 0.03) -> gr.Blocks:
    """The whole app. ``assistant`` defaults to ``rag.Assistant()`` (settings from the environment)."""
    if assistant is None:
        from rag import Assistant
        assistant = Assistant()
    lang = normalize_lang(lang or os.environ.get("BATCHBOT_LANG"), DEFAULT_LANG)
    chat = ChatController(assistant, stream_delay=stream_delay)
    kb = Knowledge(assistant, chat.lock)
    L = Labels(lang)

    with BatchBotBlocks(title="Batch & memory assistant · 批次与显存助手", fill_width=False, analytics_enabled=False) as demo:
        demo.embed = embed
        lang_state = gr.State(lang)
        with gr.Row(elem_classes=["batchbot-header"], visible=not embed) as header:
            with gr.Column(scale=4):
                L.add(gr.Markdown(f"# {L.text('title')}\n{L.text('subtitle')}", elem_id="app-title"),
                      value=lambda l: f"# {t('title', l)}\n{t('subtitle', l)}")
            with gr.Column(scale=1, min_width=180):
                lang_radio = gr.Radio([("中文", "zh"), ("English", "en")], value=lang, label=t("lang_label", lang),
                                      elem_id="lang-toggle")
        if embed:
            # Still switchable inside an iframe, just smaller.
            lang_radio_embed = gr.Radio([("中文", "zh"), ("English", "en")], value=lang, show_label=False,
                                        elem_id="lang-toggle-embed", container=False)
        with gr.Tabs():
            with L.add(gr.Tab(L.text("tab_chat"), id="chat", elem_id="tab-chat"), label="tab_chat"):
                chatbot = L.add(gr.Chatbot(
                    label=L.text("chatbot"), elem_id="chatbot", height=560, sanitize_html=True, allow_tags=False,
                    render_markdown=True, feedback_options=("Like", "Dislike"), buttons=["copy", "copy_all"],
                    layout="bubble", autoscroll=True), label="chatbot")
                history_state = gr.State([])        # Answer.history, per browser session
                feedback_id = gr.State(None)
                with gr.Row():
                    question = L.add(gr.Textbox(placeholder=L.text("chat_placeholder"), label=L.text("question"),
                                                show_label=False, lines=2, max_lines=8, scale=6, elem_id="question",
                                                max_length=MAX_QUESTION_CHARS * 2),
                                     placeholder="chat_placeholder", label="question")
                    with gr.Column(scale=1, min_width=120):
                        send = L.add(gr.Button(L.text("send"), variant="primary", elem_id="send"), value="send")
                        clear = L.add(gr.Button(L.text("clear"), elem_id="clear"), value="clear")
                status = gr.Markdown("", elem_id="chat-status")
                with gr.Row(visible=False, elem_id="feedback-row") as reason_row:
                    reason = L.add(gr.Textbox(label=L.text("feedback_reason"), scale=5, elem_id="feedback-reason",
                                              max_length=2000), label="feedback_reason")
                    reason_btn = L.add(gr.Button(L.text("feedback_submit"), scale=1, elem_id="feedback-submit"),
                                       value="feedback_submit")
                examples = gr.Examples([[q] for q in EXAMPLES_ZH + EXAMPLES_EN], inputs=[question],
                                       label=L.text("examples"), elem_id="examples")
                L.add(examples.dataset, label="examples")
            with L.add(gr.Tab(L.text("tab_calc"), id="calculators", elem_id="tab-calculators"), label="tab_calc"):
                calc = build_calculators_tab(L)
            with L.add(gr.Tab(L.text("tab_check"), id="check", elem_id="tab-check"), label="tab_check"):
                check = build_check_tab(L)
            with L.add(gr.Tab(L.text("tab_knowledge"), id="knowledge", elem_id="tab-knowledge"), label="tab_knowledge"):
                know = build_knowledge_tab(L, kb)

        # ---- events: chat
        chat_inputs = [question, chatbot, history_state, lang_state]
        chat_outputs = [chatbot, history_state, question, status]
        send.click(chat.respond, chat_inputs, chat_outputs, api_name="chat_ui", concurrency_id="assistant")
        question.submit(chat.respond, chat_inputs, chat_outputs, api_visibility="private", concurrency_id="assistant")
        clear.click(lambda: ([], [], "", "", None, gr.update(visible=False)), None,
                    [chatbot, history_state, question, status, feedback_id, reason_row], api_visibility="private")
        chatbot.like(chat.on_like, [chatbot, lang_state], [feedback_id, status, reason_row], api_visibility="private")
        reason_btn.click(chat.on_reason, [feedback_id, reason, lang_state], [status, reason], api_visibility="private")
        reason.submit(chat.on_reason, [feedback_id, reason, lang_state], [status, reason], api_visibility="private")

        wire_calculators_tab(calc, lang_state)
        wire_check_tab(check, lang_state)
        wire_knowledge_tab(know, kb, lang_state)   # each tab follows lang_state itself (results, list, card)

        # ---- language: the radio drives a per-session state and relabels everything
        def set_lang(value: str):
            new = normalize_lang(value, lang)
            return [new, gr.update(label=t("lang_label", new))] + L.updates(new)

        lang_outputs = [lang_state, lang_radio] + L.components
        lang_radio.change(set_lang, [lang_radio], lang_outputs, api_visibility="private")
        if embed:
            lang_radio_embed.change(lambda v: gr.update(value=v), [lang_radio_embed], [lang_radio],
                                    api_visibility="private")

        def on_load(request: gr.Request):
            params = getattr(request, "query_params", {}) or {}
            hide = embed or _truthy(params.get("embed"))
            return initial_lang(request, lang), gr.update(visible=not hide)

        demo.load(on_load, None, [lang_radio, header], api_visibility="private")

        # ---- API for other programs
        gr.api(chat.api_chat, api_name="chat", concurrency_id="assistant")
        register_calculator_api()
        register_agent_tools(assistant)
    hide_other_endpoints_from_mcp(demo)
    # A bounded queue: event number MAX_QUEUE_SIZE + 1 is refused ("queue is full"), not stored.
    demo.queue(default_concurrency_limit=CONCURRENCY_LIMIT, max_size=MAX_QUEUE_SIZE)
    return demo
