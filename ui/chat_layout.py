"""The Chat tab's components and events: what people expect of a chat app.

* Enter sends, Shift+Enter adds a line (a one-line ``gr.Textbox`` that grows to ``max_lines``: Gradio
  submits on Enter only when ``lines == 1``), with a hint under the box.
* An empty chat shows a welcome and example questions in the UI language (``Chatbot.placeholder`` and
  ``Chatbot.examples``); clicking one asks it.
* While an answer runs Send is disabled and Stop is shown; Stop cancels the answer (``cancels=``).
* The conversation survives a reload: it is kept in the browser's localStorage (``gr.BrowserState``),
  the last ``KEEP_MESSAGES`` messages.
* 👍/👎 sit beside each message, with reasons to pick from beside them (``feedback_options``); a
  free-text reason box opens right under the chat after a rating.
* The view stays on the question and its verdict when an answer finishes (``autoscroll`` off and
  ``SCROLL_TO_QUESTION_JS``), since the folded parts and calculator calls come after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
from gradio.components.chatbot import ExampleMessage

from calculators.i18n import t
from calculators.lang import Lang
from calculators.limits import MAX_QUESTION_CHARS

from .chat import ChatController
from .labels import Labels

EXAMPLES: dict[str, list[str]] = {
    "zh": [
        "在3090显存受限的情况下，gradient_accumulation_steps 增大会增大显存吗？显存爆掉是因为有效批次大小吗？",
        "在一张 A100-80GB 上用 AdamW 全量微调 Llama-2-7B 需要多少显存？",
        "DeepSpeed ZeRO-2，4 张卡，micro batch 2，梯度累积 8，有效批次是多少？",
    ],
    "en": [
        "Does increasing gradient_accumulation_steps use more GPU memory?",
        "How much GPU memory does a full fine-tune of Llama-2-7B with AdamW need on one A100-80GB?",
        "With DeepSpeed ZeRO-2 on 4 GPUs, micro batch 2 and GA 8, what is the effective batch size?",
    ],
}
#: Messages kept in the browser's storage (about 6–10 answers with their folded parts).
KEEP_MESSAGES = 60
STORAGE_KEY = "batchbot-chat-v1"

# After an answer: put the last question at the top of the chat panel, so the verdict under it is in view; 30 px
# below the panel's top edge, where Gradio's delete/copy-all icons (23 px high) would cover its right end.
SCROLL_TO_QUESTION_JS = """() => {
  const root = document.querySelector('#chatbot');
  if (!root) return;
  const rows = root.querySelectorAll('.message-row.user-row');
  const last = rows[rows.length - 1];
  const wrap = root.querySelector('.bubble-wrap');
  if (!last || !wrap) return;
  const top = last.getBoundingClientRect().top - wrap.getBoundingClientRect().top + wrap.scrollTop;
  wrap.scrollTo({top: Math.max(0, top - 30)});
}"""


def examples_for(lang: Lang) -> list[ExampleMessage]:
    return [{"text": q} for q in EXAMPLES[lang]]


def feedback_options(lang: Lang) -> tuple[str, ...]:
    return (
        "Like",
        "Dislike",
        t("feedback_wrong_number", lang),
        t("feedback_wrong_setup", lang),
        t("feedback_not_helpful", lang),
    )


@dataclass
class ChatUI:
    chatbot: gr.Chatbot
    question: gr.Textbox
    send: gr.Button
    stop: gr.Button
    clear: gr.Button
    status: gr.Markdown
    reason_row: gr.Row
    reason: gr.Textbox
    reason_btn: gr.Button
    history: gr.State
    saved: gr.BrowserState
    feedback_id: gr.State


def build_chat(L: Labels, lang: Lang) -> ChatUI:
    chatbot = L.add(
        gr.Chatbot(
            label=L.text("chatbot"),
            elem_id="chatbot",
            height="calc(100dvh - 345px)",
            min_height=320,
            sanitize_html=True,
            allow_tags=False,
            render_markdown=True,
            feedback_options=feedback_options(lang),
            buttons=["copy", "copy_all"],
            layout="bubble",
            autoscroll=False,
            placeholder=L.text("welcome"),
            examples=examples_for(lang),
        ),
        label="chatbot",
        placeholder="welcome",
        examples=examples_for,
        feedback_options=feedback_options,
    )
    # The reason box and the status line sit in the input's column: on a phone that column is pinned to the bottom
    # of the screen, and anything between the chat and it scrolled under it, out of sight.
    with gr.Column(elem_id="chat-input", variant="compact"):
        with gr.Row(visible=False, elem_id="feedback-row") as reason_row:
            reason = L.add(
                gr.Textbox(
                    label=L.text("feedback_reason"), scale=5, elem_id="feedback-reason", max_length=2000, lines=1
                ),
                label="feedback_reason",
            )
            reason_btn = L.add(
                gr.Button(L.text("feedback_submit"), scale=1, elem_id="feedback-submit"), value="feedback_submit"
            )
        status = gr.Markdown("", elem_id="chat-status")
        with gr.Row(equal_height=True, elem_id="chat-question-row"):
            question = L.add(
                gr.Textbox(
                    placeholder=L.text("chat_placeholder"),
                    label=L.text("question"),
                    show_label=False,
                    lines=1,
                    max_lines=8,
                    scale=6,
                    elem_id="question",
                    max_length=MAX_QUESTION_CHARS * 2,
                    autofocus=False,
                ),
                placeholder="chat_placeholder",
                label="question",
            )
            with gr.Column(scale=1, min_width=110, elem_id="chat-buttons"):
                send = L.add(gr.Button(L.text("send"), variant="primary", elem_id="send"), value="send")
                stop = L.add(gr.Button(L.text("stop"), variant="stop", elem_id="stop", visible=False), value="stop")
        with gr.Row(elem_id="chat-hint-row"):
            L.add(gr.Markdown(L.text("enter_hint"), elem_id="chat-hint"), value="enter_hint")
            clear = L.add(
                gr.Button(L.text("clear"), elem_id="clear", size="sm", variant="secondary", scale=0, min_width=90),
                value="clear",
            )
    return ChatUI(
        chatbot=chatbot,
        question=question,
        send=send,
        stop=stop,
        clear=clear,
        status=status,
        reason_row=reason_row,
        reason=reason,
        reason_btn=reason_btn,
        history=gr.State([]),
        saved=gr.BrowserState({"messages": [], "history": []}, storage_key=STORAGE_KEY),
        feedback_id=gr.State(None),
    )


def _to_storage(messages: list[dict[str, Any]] | None, history: list[dict[str, Any]] | None) -> dict[str, Any]:
    from .chat import _plain_messages

    return {"messages": _plain_messages(messages)[-KEEP_MESSAGES:], "history": list(history or [])[-20:]}


def _from_storage(saved: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The stored conversation, or an empty one when storage holds something else (another version, edits)."""
    if not isinstance(saved, dict):
        return [], []
    stored = saved.get("messages")
    hist = saved.get("history")
    msgs: list[dict[str, Any]] = []
    if isinstance(stored, list) and all(
        isinstance(m, dict) and m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str)
        for m in stored
    ):
        msgs = [{k: v for k, v in m.items() if k in ("role", "content", "metadata")} for m in stored]
    hist = hist if isinstance(hist, list) and all(isinstance(h, dict) for h in hist) else []
    return msgs[-KEEP_MESSAGES:], hist


def _example_text(evt: gr.SelectData) -> str:
    value = evt.value
    return str(value.get("text", "")) if isinstance(value, dict) else str(value or "")


def wire_chat(ui: ChatUI, chat: ChatController, lang_state: gr.State) -> None:
    chat_inputs = [ui.question, ui.chatbot, ui.history, lang_state]
    chat_outputs = [ui.chatbot, ui.history, ui.question, ui.status, ui.send, ui.stop]
    save = (_to_storage, [ui.chatbot, ui.history], [ui.saved])
    # One event for Send and Enter: a second trigger while it runs is dropped by the browser (trigger_mode "once"),
    # and Stop has one event to cancel.
    ask = gr.on(
        [ui.send.click, ui.question.submit],
        chat.respond,
        chat_inputs,
        chat_outputs,
        api_name="chat_ui",
        concurrency_id="assistant",
        trigger_mode="once",
    )
    ask.then(*save, api_visibility="private").then(None, js=SCROLL_TO_QUESTION_JS)
    example = ui.chatbot.example_select(_example_text, None, [ui.question], api_visibility="private", queue=False).then(
        chat.respond,
        chat_inputs,
        chat_outputs,
        api_visibility="private",
        concurrency_id="assistant",
        trigger_mode="once",
    )
    example.then(*save, api_visibility="private").then(None, js=SCROLL_TO_QUESTION_JS)
    runs = [ask, example]
    ui.stop.click(
        chat.stop,
        [ui.chatbot, lang_state],
        [ui.chatbot, ui.status, ui.send, ui.stop],
        cancels=runs,
        api_visibility="private",
    ).then(*save, api_visibility="private")
    ui.clear.click(
        lambda: ([], [], "", "", None, gr.update(visible=False), {"messages": [], "history": []}),
        None,
        [ui.chatbot, ui.history, ui.question, ui.status, ui.feedback_id, ui.reason_row, ui.saved],
        api_visibility="private",
    )
    ui.chatbot.clear(
        lambda: ([], "", None, gr.update(visible=False), {"messages": [], "history": []}),
        None,
        [ui.history, ui.status, ui.feedback_id, ui.reason_row, ui.saved],
        api_visibility="private",
    )
    ui.chatbot.like(
        chat.on_like, [ui.chatbot, lang_state], [ui.feedback_id, ui.status, ui.reason_row], api_visibility="private"
    )
    ui.reason_btn.click(
        chat.on_reason, [ui.feedback_id, ui.reason, lang_state], [ui.status, ui.reason], api_visibility="private"
    )
    ui.reason.submit(
        chat.on_reason, [ui.feedback_id, ui.reason, lang_state], [ui.status, ui.reason], api_visibility="private"
    )


def restore_chat(ui: ChatUI) -> tuple[Any, list[Any], list[Any]]:
    """(fn, inputs, outputs) for demo.load: the conversation kept in this browser."""
    return _from_storage, [ui.saved], [ui.chatbot, ui.history]
