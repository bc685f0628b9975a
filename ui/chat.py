"""The chat: input guards, the streaming handler, and like/dislike feedback.

The assistant (``rag.Assistant``) is shared by all sessions; what belongs to one
browser session (the visible messages and ``Answer.history``) lives in
``gr.State``/the Chatbot value, which Gradio keeps per session.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr
from pydantic import ValidationError

from calculators.i18n import t
from calculators.lang import Lang, answer_language, as_lang, is_lang
from calculators.limits import MAX_QUESTION_CHARS
from rag.embedding import assistant_lock

from .api import is_api_client
from .chat_render import answer_messages, user_message_md
from .feedback import MAX_MESSAGE_INDEX, ServedAnswers, append_feedback, clean_text, feedback_path

log = logging.getLogger("batchbot.chat")

#: The same rating of the same message within this many seconds is one click sent twice (see on_like).
DUPLICATE_RATING_S = 1.0
_MEANINGFUL = re.compile(r"[0-9A-Za-z\u3400-\u9fff\uf900-\ufaff]")


def guard_question(question: Any, ui_lang: Lang) -> tuple[str | None, Lang]:
    """(refusal message or None, language). Empty, huge and symbol-only input never reaches the assistant.

    The language is the answer's (``answer_language``): Chinese text gets Chinese, other text the UI language.
    """
    if not isinstance(question, str):
        return t("empty_question", ui_lang), ui_lang
    q = question.strip()
    lang = answer_language(q[:MAX_QUESTION_CHARS], as_lang(ui_lang))
    if not q:
        return t("empty_question", ui_lang), ui_lang
    if len(q) > MAX_QUESTION_CHARS:
        return t("too_long", lang, n=len(q), max=MAX_QUESTION_CHARS), lang
    if not _MEANINGFUL.search(q):
        return t("nonsense", lang), lang
    return None, lang


def log_failure(what: str, exc: BaseException) -> None:
    """One log line per failed request: the exception type and where it was raised, never the user's text.

    ``log.exception`` wrote a full traceback whose messages repeat user values (a 1 MB forged
    history value wrote 2 MB to the log per request).
    """
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    log.error("%s: %s%s", what, type(exc).__name__, where)


def _session(request: gr.Request | None) -> str | None:
    return getattr(request, "session_hash", None) if request is not None else None


def bilingual(key: str, **kwargs: Any) -> str:
    return f"{t(key, 'en', **kwargs)}\n{t(key, 'zh', **kwargs)}"


def _msg_text(message: dict[str, Any]) -> str:
    """Plain text of a Chatbot message (Gradio 6 normalises content to a list of parts)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type", "text") == "text")
    if isinstance(content, dict):
        return str(content.get("text", ""))
    return ""


def _plain_messages(messages: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Chatbot value → plain {"role","content"[,"metadata"]} dicts we can send back."""
    out = []
    for m in messages or []:
        d = {"role": m.get("role", "assistant"), "content": _msg_text(m)}
        if m.get("metadata"):
            d["metadata"] = {k: v for k, v in m["metadata"].items() if v is not None}
        out.append(d)
    return out


def _chunks(text: str, n: int = 12) -> list[str]:
    """Cut text at whitespace/punctuation into about ``n`` growing prefixes, for streaming."""
    if len(text) < 80:
        return [text]
    step = max(1, len(text) // n)
    cuts, i = [], step
    while i < len(text):
        j = i
        while j < len(text) and j < i + 40 and text[j] not in " \n，。；、,.;":
            j += 1
        cuts.append(j + 1)
        i = j + 1 + step
    return [text[:c] for c in cuts] + [text]


class ChatController:
    def __init__(self, assistant: Any, stream_delay: float = 0.03) -> None:
        self.bot = assistant
        self.lock = assistant_lock(assistant)  # one ask() at a time unless the model's queries are micro-batched
        self.stream_delay = stream_delay
        self.served = ServedAnswers()  # what a like/dislike may refer to, per session
        self._busy: dict[str, object] = {}  # session → token of its answer in progress (a second Enter waits)
        self._busy_lock = threading.Lock()
        # (session, message, rating) → (id, when); read and written only under _rating_lock
        self._last_rating: dict[tuple[str, int, str], tuple[str, float]] = {}
        # Held from the duplicate check to the write: the two events of one click arrive together.
        self._rating_lock = threading.Lock()

    # ------------------------------------------------------------ shared
    def ask(self, question: str, history: list[dict[str, Any]] | None, lang_hint: str | None = None) -> Any:
        """One answer at a time; ``lang_hint`` (the UI language) answers a message without Chinese."""
        with self.lock:
            return self.bot.ask(question, history=history or None, lang_hint=as_lang(lang_hint) if lang_hint else None)

    # ------------------------------------------------------------ UI handler (generator → streaming)
    def respond(
        self,
        question: str,
        messages: list[dict[str, Any]] | None,
        history: list[dict[str, Any]] | None,
        ui_lang: Lang,
        request: gr.Request | None = None,
    ) -> Iterator[tuple[Any, ...]]:
        """Stream one answer: (messages, history, question box, status, Send, Stop) per step.

        While it runs, Send is disabled and Stop shown; a second submit from the same session (Enter
        pressed again) changes nothing. The first screen streams; the folded parts come at once.
        """
        session = _session(request)
        token = self._claim(session) if session else None
        if session and token is None:
            yield (gr.skip(),) * 6
            return
        try:
            yield from self._respond(question, messages, history, ui_lang, session, token, is_api_client(request))
        finally:
            self._release(session, token)

    def stop(
        self,
        messages: list[dict[str, Any]] | None,
        ui_lang: Lang,
        request: gr.Request | None = None,
    ) -> tuple[list[dict[str, Any]], str, dict[str, Any], dict[str, Any]]:
        """Stop pressed (the answer's event is cancelled by Gradio): drop the pending bubble, free the session."""
        session = _session(request)
        if session:
            with self._busy_lock:
                self._busy.pop(session, None)
        msgs = [m for m in _plain_messages(messages) if (m.get("metadata") or {}).get("status") != "pending"]
        return msgs, "ℹ " + t("stopped", ui_lang), gr.update(interactive=True), gr.update(visible=False)

    def _claim(self, session: str) -> object | None:
        """A token for this session's answer, or None while another answer of the session runs."""
        with self._busy_lock:
            if session in self._busy:
                return None
            token = object()
            self._busy[session] = token
            return token

    def _release(self, session: str | None, token: object | None) -> None:
        # Only this run's own claim: a cancelled run closed late must not free a newer one.
        with self._busy_lock:
            if session and self._busy.get(session) is token:
                del self._busy[session]

    def _stopped(self, session: str | None, token: object | None) -> bool:
        """Stop was pressed for this run. Gradio lets a running step finish and still sends what it yields,
        so the run itself must notice and end in the state Stop left."""
        if not session:
            return False
        with self._busy_lock:
            return self._busy.get(session) is not token

    def _respond(
        self,
        question: Any,
        messages: list[dict[str, Any]] | None,
        history: list[dict[str, Any]] | None,
        ui_lang: Lang,
        session: str | None,
        token: object | None = None,
        api_client: bool = False,
    ) -> Iterator[tuple[Any, ...]]:
        busy = (gr.update(interactive=False), gr.update(visible=True))
        idle = (gr.update(interactive=True), gr.update(visible=False))
        msgs = _plain_messages(messages)
        history = list(history or [])
        refusal, lang = guard_question(question, ui_lang)
        if refusal is not None:
            shown = question.strip() if isinstance(question, str) else ""
            if shown:
                msgs.append({"role": "user", "content": shown[:300] + ("…" if len(shown) > 300 else "")})
            msgs.append({"role": "assistant", "content": "⚠ " + refusal})
            if session:
                self.served.remember(session, len(msgs) - 1, shown, msgs[-1]["content"])
            keep = isinstance(question, str) and len(question) > MAX_QUESTION_CHARS  # let the user shorten it
            yield (msgs, history, question if keep else "", "") + idle
            return
        q = question.strip()
        msgs.append({"role": "user", "content": user_message_md(q)})
        pending = {"role": "assistant", "content": "", "metadata": {"title": t("thinking", lang), "status": "pending"}}
        yield (msgs + [pending], history, "", "") + busy
        try:
            answer = self.ask(q, history, ui_lang)
        except Exception as exc:  # never a traceback in the UI
            log_failure("assistant failed", exc)
            msgs.append({"role": "assistant", "content": "⚠ " + t("internal_error", lang, err=type(exc).__name__)})
            yield (msgs, history, gr.skip(), "") + idle
            return
        if self._stopped(session, token):
            if not self._busy.get(session or ""):  # nothing newer runs: end as Stop left it
                yield (msgs, history, gr.skip(), "ℹ " + t("stopped", ui_lang)) + idle
            return
        lang = as_lang(getattr(answer, "language", lang) or lang)
        data = answer.model_dump()
        answer_msgs = answer_messages(data, lang)
        first = answer_msgs[0]["content"]
        msgs.append({"role": "assistant", "content": ""})
        answer_index = len(msgs) - 1
        for part in [first] if api_client else _chunks(first):  # API clients: the answer at once, no delay
            msgs[-1]["content"] = part
            yield (msgs, history, gr.skip(), "") + busy
            if self.stream_delay and not api_client:
                time.sleep(self.stream_delay)
        msgs.extend(answer_msgs[1:])
        if session:  # the server's own record of what it said, for ratings
            for i in range(answer_index, len(msgs)):
                self.served.remember(session, i, q, msgs[i]["content"])
        new_history = data.get("history") if isinstance(data.get("history"), list) else history
        yield (msgs, new_history, gr.skip(), "") + idle

    # ------------------------------------------------------------ API handler
    def api_chat(
        self,
        question: str,
        history: list[Any] | None = None,
        lang: str | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """/chat: ``lang`` (optional, "zh" or "en") is the caller's UI language, used when the question has no Chinese."""
        if lang is not None and not (isinstance(lang, str) and (not lang.strip() or is_lang(lang.strip().lower()))):
            raise gr.Error(
                '\'lang\' must be "zh" or "en" (or empty: the question\'s language decides).\n'
                '\'lang\' 必须是 "zh" 或 "en"（或留空：按问题的语言回答）。',
                title="lang",
                print_exception=False,
            )
        if not isinstance(question, str) or not question.strip():
            raise gr.Error(bilingual("empty_question"), title="question", print_exception=False)
        if len(question) > MAX_QUESTION_CHARS:
            raise gr.Error(
                bilingual("too_long", n=len(question), max=MAX_QUESTION_CHARS), title="question", print_exception=False
            )
        if history is not None and not (isinstance(history, list) and all(isinstance(h, dict) for h in history)):
            raise gr.Error(
                "'history' must be the list returned in answer['history'] by a previous /chat call.\n"
                "'history' 必须是上一次 /chat 返回的 answer['history'] 列表。",
                title="history",
                print_exception=False,
            )
        try:
            answer = self.ask(question.strip(), history, lang.strip() if isinstance(lang, str) else None)
        except Exception as exc:
            log_failure("assistant failed", exc)
            raise gr.Error(bilingual("internal_error", err=type(exc).__name__), print_exception=False) from None
        return answer.text, answer.model_dump(mode="json")

    # ------------------------------------------------------------ feedback
    def on_like(
        self, messages: list[dict[str, Any]] | None, ui_lang: Lang, evt: gr.LikeData, request: gr.Request | None = None
    ) -> tuple[str | None, str, dict[str, Any]]:
        """Store a like/dislike. Under the server, what is rated is what this server said in this session.

        The browser sends the chatbot's messages, which a client can forge; the question and answer
        stored are therefore looked up in :class:`ServedAnswers` by (session, message index). Direct
        Python calls (no request) are trusted and use ``messages``.
        """
        hidden = gr.update(visible=False)
        raw = (
            evt.index
            if isinstance(evt.index, int)
            else (evt.index[0] if isinstance(evt.index, (list, tuple)) and evt.index else None)
        )
        if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw <= MAX_MESSAGE_INDEX:
            return None, "ℹ " + t("feedback_not_served", ui_lang), hidden
        idx = raw
        session = _session(request)
        if request is not None:
            served = self.served.lookup(session or "", idx)
            if served is None:
                log.info("feedback refused: message %d was not served in this session", idx)
                return None, "ℹ " + t("feedback_not_served", ui_lang), hidden
            question, answer = served
        else:
            msgs = messages or []
            answer = _msg_text(msgs[idx]) if idx < len(msgs) else clean_text(evt.value)
            question = next((_msg_text(m) for m in reversed(msgs[:idx]) if m.get("role") == "user"), "")
        liked = evt.liked
        feedback = clean_text(liked, 40) if not isinstance(liked, bool) else ("like" if liked else "dislike")
        record = {
            "type": "rating",
            "liked": liked if isinstance(liked, bool) else None,
            "feedback": feedback,
            "message_index": idx,
            "question": question,
            "answer": answer,
            "ui_lang": ui_lang,
        }
        # Gradio 6.31 sends a reason picked from the 👎 menu twice within milliseconds: one record per click.
        with self._rating_lock:
            return self._store_rating(record, (session or "", idx, feedback), ui_lang)

    def _store_rating(
        self, record: dict[str, Any], key: tuple[str, int, str], ui_lang: Lang
    ) -> tuple[str | None, str, dict[str, Any]]:
        """Append one rating unless this session rated this message the same way a moment ago.

        Gradio 6.31 fires the like event twice for one click on a reason in the 👎 menu (its option
        handler calls ``handle_action`` twice); the two requests run concurrently, so the caller holds
        ``_rating_lock`` across this check and the write.
        """
        hidden = gr.update(visible=False)
        last = self._last_rating.get(key)  # only read and written under _rating_lock
        if key[0] and last is not None and time.monotonic() - last[1] < DUPLICATE_RATING_S:
            return last[0], "✔ " + t("feedback_thanks", ui_lang), gr.update(visible=True)
        try:
            rec = append_feedback(record)
        except ValidationError as exc:
            log_failure("feedback refused", exc)
            return None, "ℹ " + t("feedback_not_served", ui_lang), hidden
        except OSError as exc:
            return (
                None,
                "✘ " + t("feedback_unwritable", ui_lang, path=str(feedback_path()), err=exc.strerror or exc),
                hidden,
            )
        if len(self._last_rating) > 10_000:
            self._last_rating.clear()
        self._last_rating[key] = (rec["id"], time.monotonic())
        return rec["id"], "✔ " + t("feedback_thanks", ui_lang), gr.update(visible=True)

    def on_reason(self, feedback_id: str | None, reason: str, ui_lang: Lang) -> tuple[str, str]:
        if not feedback_id:
            return "ℹ " + t("feedback_no_target", ui_lang), reason
        reason = (reason or "").strip()
        if not reason:
            return "", ""
        try:
            append_feedback({"type": "reason", "feedback_id": feedback_id, "reason": reason, "ui_lang": ui_lang})
        except ValidationError as exc:
            log_failure("feedback reason refused", exc)
            return "ℹ " + t("feedback_no_target", ui_lang), ""
        except OSError as exc:
            return "✘ " + t("feedback_unwritable", ui_lang, path=str(feedback_path()), err=exc.strerror or exc), reason
        return "✔ " + t("feedback_reason_thanks", ui_lang), ""
