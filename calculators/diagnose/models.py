"""Typed shapes of a diagnosis: what was read from a paste (Artifact), why it happened (Cause), and both together.

The answer engine, the app and the HTTP API all consume these models, so the field names are a
contract (see the issue "Diagnose what users paste"). ``fields`` uses the same setup vocabulary as the
real-question dev set (``model``, ``world_size``, ``observed_memory_gb`` …) plus reader-prefixed extras.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ..lang import Lang

ArtifactKind = Literal[
    "cuda_oom",
    "deepspeed_batch_assert",
    "config_error",
    "host_oom_kill",
    "launch_command",
    "nvidia_smi",
    "trainer_log",
    "trainer_banner",
    "deepspeed_log",
    "nccl_timeout",
    "traceback",
    "unknown_error",
]


class Artifact(BaseModel):
    """One recognised piece of pasted text, with the values read from it."""

    kind: ArtifactKind
    start: int = Field(description="character offset of the piece in the input text")
    end: int
    key_line: str = Field(description="the one line that says what happened (for retrieval and for showing back)")
    fields: dict[str, Any] = {}
    framework: str | None = None
    version_hint: str | None = None


class Cause(BaseModel):
    """A likely or possible cause, with the user's numbers and the fix, in both languages."""

    id: str
    likelihood: Literal["likely", "possible"]
    title_en: str
    title_zh: str
    because_en: str
    because_zh: str
    fix_en: str
    fix_zh: str
    card_ids: list[str] = []


class Diagnosis(BaseModel):
    """What was read, the ranked causes, and what could not be read."""

    artifacts: list[Artifact] = []
    causes: list[Cause] = []
    unrecognised_en: str | None = None
    unrecognised_zh: str | None = None

    def to_markdown(self, lang: Lang = "en") -> str:
        """ "What I read" (shown back), then causes and fixes; user text is escaped (calculators.text_safety)."""
        from .render import diagnosis_markdown

        return diagnosis_markdown(self, lang)
