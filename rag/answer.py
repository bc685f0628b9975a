"""The assistant's answer: text for people, structured fields for programs and tests."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class Link(BaseModel):
    title: str
    url: str


class SourceRef(BaseModel):
    """A knowledge card the answer used, with its public sources."""

    card_id: str
    title: str
    urls: list[Link]


class ToolCall(BaseModel):
    """One calculator call the user can inspect: name, arguments, result, and a Markdown summary."""

    name: str
    arguments: dict[str, Any]
    result: dict[str, Any] | None = None
    error: str | None = Field(None, description="The calculator's refusal, in the user's language.")
    summary_md: str = ""


class Correction(BaseModel):
    """A wrong belief found in the question and its correction, in the user's language."""

    key: str
    card_id: str
    verdict: str
    wrong: str
    correction: str


class Answer(BaseModel):
    text: str
    language: Literal["zh", "en"]
    sources: list[SourceRef] = []
    tool_calls: list[ToolCall] = []
    corrections: list[Correction] = []
    assumptions: list[str] = []
    refused: bool = Field(False, description="True when the input was empty, too long or off-topic.")
    history: list[dict[str, Any]] = Field(default_factory=list, description="Pass back to ask() for a follow-up.")
