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
    label: str = Field(
        "",
        description="Its role in the answer: main, ga_low/ga_high (a GA comparison), "
        "nearest_fit, a *_sweep, effective_batch, config_check or diagnose.",
    )
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
    act: str | None = Field(
        None,
        description="What the question asks: diagnose, is_normal, yes_no, fit, batch_arithmetic, configure or explain.",
    )
    first_screen: str = Field("", description="The opening of ``text``: verdict, the user's setup, what was assumed.")
    setup: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="The setup the answer used: key → {value, source, evidence}; source is "
        "message, config, command, error, log, nvidia_smi, history or assumed.",
    )
    conflicts: dict[str, list[Any]] = Field(
        default_factory=dict,
        description="Another value the message gave for a setup key (the prose says 8 GPUs, "
        "DeepSpeed's assertion saw 1), as the first screen shows it.",
    )
    parts: list[str] = Field(default_factory=list, description="The kinds of the message's parts, in order.")
    sources: list[SourceRef] = []
    tool_calls: list[ToolCall] = []
    corrections: list[Correction] = []
    assumptions: list[str] = []
    refused: bool = Field(False, description="True when the input was empty, too long or off-topic.")
    history: list[dict[str, Any]] = Field(default_factory=list, description="Pass back to ask() for a follow-up.")
