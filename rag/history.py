"""The conversation as typed turns, re-validated on every request.

History comes back from browsers and API clients, so nothing in it is trusted: each turn is
checked field by field, and the setup it carries goes through the same validators as a value read
from the user's own message (:class:`rag.setup.Setup.load`). A forged turn with an unknown GPU,
a world size of 1e12 or a 1 MB value is dropped, never passed to a calculator.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Literal

from pydantic import BaseModel, Field

from .acts import ACTS as _ACTS
from .setup import Setup

MAX_TURN_CHARS = 4000
MAX_TURNS = 40


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Drop control characters (keep newlines and tabs), normalise width (全角 → half-width), no lone surrogates.

    Text with no character of category C (``str.isprintable`` is False for each of them) comes back after NFKC
    without the per-character pass (issue 17: this runs twice per answer, over the whole message)."""
    text = unicodedata.normalize("NFKC", text)
    text = text.encode("utf-8", "replace").decode("utf-8") if _SURROGATE.search(text) else text
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")


class Turn(BaseModel):
    """One message of the conversation. User turns carry the setup their answer used."""

    role: Literal["user", "assistant"]
    content: str = Field(max_length=MAX_TURN_CHARS)
    language: Literal["zh", "en"] | None = None
    setup: dict[str, Any] = Field(default_factory=dict)
    intents: dict[str, bool] = Field(default_factory=dict)
    act: str | None = None

    def as_setup(self) -> Setup:
        return Setup.load(self.setup)


def load_history(history: Any, intent_fields: set[str], rejected: list[str] | None = None) -> list[Turn]:
    """The valid turns of ``history`` (newest ``MAX_TURNS``); anything malformed is dropped.

    Setup values that fail validation are dropped too; their keys go to ``rejected``.
    """
    if not isinstance(history, list):
        return []
    out: list[Turn] = []
    for turn in history[-MAX_TURNS:]:
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant"):
            continue
        content = turn.get("content", "")
        language = turn.get("language") if turn.get("language") in ("zh", "en") else None
        setup: dict[str, Any] = {}
        intents: dict[str, bool] = {}
        if turn["role"] == "user":
            if isinstance(turn.get("setup"), dict):
                setup = Setup.load(turn["setup"], rejected).dump()
            elif isinstance(turn.get("slots"), dict):  # turns written before setups had provenance
                setup = Setup.load(
                    {k: {"value": v, "source": "message"} for k, v in turn["slots"].items() if isinstance(k, str)},
                    rejected,
                ).dump()
            raw = turn.get("intents")
            if isinstance(raw, dict):
                intents = {k: bool(v) for k, v in raw.items() if k in intent_fields and isinstance(v, bool)}
        act = turn.get("act") if turn.get("act") in _ACTS else None
        out.append(
            Turn(
                role=turn["role"],
                content=clean_text(str(content))[:MAX_TURN_CHARS],
                language=language,
                setup=setup,
                intents=intents,
                act=act,
            )
        )
    return out


def last_user_turn(turns: list[Turn]) -> Turn | None:
    return next((t for t in reversed(turns) if t.role == "user" and t.setup), None)
