"""Like/dislike feedback: validated here, stored in a database (ui/feedback_store.py: SQLite by default,
``BATCHBOT_FEEDBACK_DB`` for a path or a database URL) or, when ``BATCHBOT_FEEDBACK_FILE`` is set, appended
to that JSONL file (one process only).

JSONL: one JSON object per line; the file is only ever opened in append mode, so
earlier lines are never rewritten or lost. A reason given later is a separate
line pointing at the feedback's id.

Hardening (issue 19): records are validated (pydantic) and written as ASCII JSON, so U+2028,
U+0085 or a lone surrogate can neither split a line for a line reader nor lose the record; a torn
last line (a crash mid-write) gets a newline before the next record, so it never swallows it.
What is rated comes from :class:`ServedAnswers`, the server's own record of the answers it gave
in that browser session, not from text the client sends.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator

from .feedback_store import database_store

DEFAULT_FEEDBACK_FILE = "feedback/feedback.jsonl"
MAX_FIELD_CHARS = 8000
MAX_REASON_CHARS = 2000
#: Chat messages per session that can be rated (a session's chatbot never gets near this).
MAX_MESSAGE_INDEX = 10_000
_lock = threading.Lock()


def feedback_path() -> Path | str:
    """Where feedback goes, for messages: the JSONL file, the SQLite file, or the database URL without password."""
    store = database_store()
    if store is not None:
        return store.location
    return Path(os.environ.get("BATCHBOT_FEEDBACK_FILE") or DEFAULT_FEEDBACK_FILE)


def clean_text(value: Any, limit: int = MAX_FIELD_CHARS) -> str:
    """A storable string: lone surrogates replaced, clipped to ``limit`` characters (``…`` marks a cut)."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    text = text.encode("utf-8", "replace").decode("utf-8")
    return text if len(text) <= limit else text[:limit] + "…"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ui_lang: Literal["zh", "en"] = "en"

    @field_validator("ui_lang", mode="before")
    @classmethod
    def _lang(cls, v: Any) -> str:
        return "zh" if v == "zh" else "en"


class RatingRecord(_Record):
    """A like/dislike of one answer the server gave in this session."""

    type: Literal["rating"] = "rating"
    liked: StrictBool | None
    feedback: str = Field(max_length=40)
    message_index: StrictInt = Field(ge=0, le=MAX_MESSAGE_INDEX)
    question: str
    answer: str

    @field_validator("question", "answer", "feedback", mode="before")
    @classmethod
    def _text(cls, v: Any) -> str:
        return clean_text(v)


class ReasonRecord(_Record):
    """The optional reason typed after a rating; points at the rating's id."""

    type: Literal["reason"] = "reason"
    feedback_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    reason: str

    @field_validator("reason", mode="before")
    @classmethod
    def _text(cls, v: Any) -> str:
        return clean_text(v, MAX_REASON_CHARS)


def _ends_with_newline(path: Path) -> bool:
    """True for a missing or empty file, or one whose last byte is a newline."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() == 0:
                return True
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) == b"\n"
    except FileNotFoundError:
        return True


def append_feedback(record: dict[str, Any] | RatingRecord | ReasonRecord, path: Path | None = None) -> dict[str, Any]:
    """Validate and append one record (with id and timestamp added).

    Raises OSError when the file cannot be written, pydantic.ValidationError for a bad record.
    ``path``: this JSONL file, whatever the settings say.
    """
    if isinstance(record, dict):
        record = (ReasonRecord if record.get("type") == "reason" else RatingRecord)(**record)
    rec = {"id": uuid.uuid4().hex, "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **record.model_dump()}
    store = database_store() if path is None else None
    if store is not None:
        store.append(rec)
        return rec
    path = Path(path or feedback_path())
    # ensure_ascii: U+2028/U+0085 and every other non-ASCII character become \\uXXXX, so the line
    # has exactly one newline, its last byte.
    line = json.dumps(rec, ensure_ascii=True) + "\n"
    with _lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        guard = "" if _ends_with_newline(path) else "\n"  # a torn last line stays alone
        with open(path, "a", encoding="ascii") as fh:
            fh.write(guard + line)
            fh.flush()
    return rec


class ServedAnswers:
    """The answers this server gave, per browser session: what a rating may refer to.

    Bounded: the ``max_sessions`` most recently active sessions, ``max_per_session`` messages each,
    each text clipped to MAX_FIELD_CHARS (about 256 × 32 × 8000 characters at worst).
    """

    def __init__(self, max_sessions: int = 256, max_per_session: int = 32) -> None:
        self.max_sessions, self.max_per_session = max_sessions, max_per_session
        self._data: OrderedDict[str, OrderedDict[int, tuple[str, str]]] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, session: str, index: int, question: str, answer: str) -> None:
        with self._lock:
            turns = self._data.pop(session, None) or OrderedDict()
            turns.pop(index, None)
            turns[index] = (clean_text(question), clean_text(answer))
            while len(turns) > self.max_per_session:
                turns.popitem(last=False)
            self._data[session] = turns
            while len(self._data) > self.max_sessions:
                self._data.popitem(last=False)

    def lookup(self, session: str, index: int) -> tuple[str, str] | None:
        """(question, answer) of the message at ``index`` in ``session``, or None if this server never gave it."""
        with self._lock:
            turns = self._data.get(session)
            return turns.get(index) if turns is not None else None

    def forget(self, session: str) -> None:
        with self._lock:
            self._data.pop(session, None)
