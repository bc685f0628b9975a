"""Bilingual knowledge cards: schema, parser and loader.

A card is one Markdown file in ``knowledge/cards/``: YAML front matter between
``---`` lines, then a body with a ``## 中文`` section and an ``## English``
section. The front matter is validated by :class:`Card` (unknown keys are
rejected). Any problem raises :class:`CardError` naming the file and the field;
a broken card is never skipped silently.

Pure Python + pydantic v2 + PyYAML; no heavy imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

TOPICS: tuple[str, ...] = (
    "grad_accum_memory",
    "effective_batch",
    "deepspeed_batch_config",
    "oom_consumer_gpu",
    "zero_offload",
    "mixed_precision",
    "gradient_checkpointing",
    "lora_qlora",
    "lr_batch_scaling",
    "loss_normalization_ga",
    "small_batch_effects",
    "memory_over_time",
    "hardware",
    "fsdp_sharding",
    "framework_steps",
    "framework_bugs",
    "rl_batch",
)

#: Calculator tools a card may reference (see ``calculators.run_tool``).
CALCULATOR_NAMES: tuple[str, ...] = ("effective_batch", "memory", "sweep")

ZH_HEADING = "## 中文"
EN_HEADING = "## English"

DEFAULT_CARDS_DIR = Path(__file__).resolve().parent.parent / "knowledge" / "cards"

_SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
#: A model size written in a card ("7B", "Mixtral 8x7B is 46.7B"). In a title it makes the card about that size; in
#: a lead it would quote one model's numbers to every setup (tests/test_card_leads.py).
MODEL_SIZE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?B(?![\w/])")
#: A myth card's title: it corrects a belief, so it answers only a message that holds it or asks about it.
_MYTH_TITLE = re.compile(r"\s*Myth:", re.I)
_H2_RE = re.compile(r"^##[ \t]+(.+?)[ \t]*$", re.MULTILINE)

NonEmptyStr = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class CardError(ValueError):
    """A card file is malformed. The message names the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(_Strict):
    title: NonEmptyStr
    url: NonEmptyStr

    @field_validator("url")
    @classmethod
    def _url_is_http(cls, v: str) -> str:
        if not re.match(r"^https?://[^\s/]+\.[^\s]+$", v):
            raise ValueError("must be an absolute http(s) URL")
        return v


class Misconception(_Strict):
    wrong_zh: NonEmptyStr
    wrong_en: NonEmptyStr
    correction_zh: NonEmptyStr
    correction_en: NonEmptyStr


class CalculatorRef(_Strict):
    name: Literal["effective_batch", "memory", "sweep"]
    arguments: dict[str, Any]

    @model_validator(mode="after")
    def _sweep_shape(self) -> CalculatorRef:
        if self.name == "sweep":
            missing = [k for k in ("config", "field", "values") if k not in self.arguments]
            if missing:
                raise ValueError(f"sweep arguments need keys {missing}")
            if not isinstance(self.arguments["config"], dict):
                raise ValueError("sweep 'config' must be a mapping")
            if not isinstance(self.arguments["values"], list) or not self.arguments["values"]:
                raise ValueError("sweep 'values' must be a non-empty list")
        return self


class AppliesTo(_Strict):
    """Which framework and versions a card's behaviour belongs to (e.g. transformers >=4.46, fixed in 4.48)."""

    framework: NonEmptyStr
    versions: NonEmptyStr = Field(description="A version range as written upstream, e.g. '>=4.36,<4.46' or 'all'.")
    fixed_in: str | None = Field(None, description="The first release that fixed it, when the card is a bug.")
    note: str | None = None


class SecondReading(_Strict):
    """An independent reader's check of a card written by someone else: what they read and what they changed."""

    date: NonEmptyStr
    by: NonEmptyStr
    read: Annotated[list[NonEmptyStr], Field(min_length=1)]
    #: Each correction made, or ["none"] when every claim held against the sources read.
    changed: Annotated[list[NonEmptyStr], Field(min_length=1)]


class Checked(_Strict):
    """The fact check against the card's primary sources: the author's reading, then a second reader's."""

    date: NonEmptyStr
    read: Annotated[list[NonEmptyStr], Field(min_length=1)]
    by: str | None = None
    second_reader: SecondReading | None = None
    #: Later checks (e.g. against a new library release whose arguments changed), oldest first, same shape.
    rechecks: list[SecondReading] = []


class Card(_Strict):
    id: NonEmptyStr
    topics: Annotated[list[Literal[TOPICS]], Field(min_length=1)]  # type: ignore[valid-type]
    title_zh: NonEmptyStr
    title_en: NonEmptyStr
    #: The cause this card gives for the symptoms it lists, one clause ("ZeRO stages 1–3 shard model states, …"), for a
    #: card whose title names a topic or a mechanism rather than "<symptom>: <cause>". A diagnosis the card answers
    #: opens with it ("Most likely cause: …") instead of "no known cause matches this directly". Both or neither.
    cause_zh: NonEmptyStr | None = None
    cause_en: NonEmptyStr | None = None
    questions_zh: Annotated[list[NonEmptyStr], Field(min_length=3)]
    questions_en: Annotated[list[NonEmptyStr], Field(min_length=3)]
    misconceptions: list[Misconception]
    calculators: list[CalculatorRef]
    sources: Annotated[list[Source], Field(min_length=1)]
    #: How users describe the problem, exact error strings included (indexed for retrieval).
    symptoms_zh: list[NonEmptyStr] = []
    symptoms_en: list[NonEmptyStr] = []
    applies_to: list[AppliesTo] = []
    checked: Checked | None = None
    body: NonEmptyStr
    path: str

    @field_validator("id")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not _SLUG_RE.match(v):
            raise ValueError("must be a lowercase slug like 'zero-stages-memory'")
        return v

    @field_validator("topics")
    @classmethod
    def _unique_topics(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("duplicate topic")
        return v

    @model_validator(mode="after")
    def _cause_in_both_languages(self) -> Card:
        if (self.cause_zh is None) != (self.cause_en is None):
            raise ValueError("cause_zh and cause_en come together: give both or neither")
        return self

    @field_validator("body")
    @classmethod
    def _has_sections(cls, v: str) -> str:
        sections = _split_sections(v)
        for heading in (ZH_HEADING, EN_HEADING):
            if heading not in sections:
                raise ValueError(f"missing '{heading}' section")
            if not sections[heading].strip():
                raise ValueError(f"'{heading}' section is empty")
        return v

    # ---- helpers -------------------------------------------------------
    @property
    def body_zh(self) -> str:
        return _split_sections(self.body).get(ZH_HEADING, "").strip()

    @property
    def body_en(self) -> str:
        return _split_sections(self.body).get(EN_HEADING, "").strip()

    @property
    def is_myth(self) -> bool:
        """A card that corrects a belief (its title "Myth: …"): its lead opens with "No." and answers the belief, so it
        is cited for a user who holds it and is never a general explanation (what memory is made of)."""
        return bool(_MYTH_TITLE.match(self.title_en))

    @property
    def urls(self) -> list[str]:
        return [s.url for s in self.sources]

    def text(self, lang: str) -> str:
        """Title, questions and body of one language (``"zh"`` or ``"en"``), for indexing."""
        if lang not in ("zh", "en"):
            raise ValueError("lang must be 'zh' or 'en'")
        title = self.title_zh if lang == "zh" else self.title_en
        questions = self.questions_zh if lang == "zh" else self.questions_en
        symptoms = self.symptoms_zh if lang == "zh" else self.symptoms_en
        body = self.body_zh if lang == "zh" else self.body_en
        return "\n".join([title, *questions, *symptoms, body])


def _split_sections(body: str) -> dict[str, str]:
    """Map each level-2 heading line (e.g. '## 中文') to the text under it."""
    out: dict[str, str] = {}
    matches = list(_H2_RE.finditer(body))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
        out.setdefault("## " + m.group(1).strip(), body[m.end() : end])
    return out


def _display_path(path: str | Path) -> str:
    p = Path(path)
    try:
        return str(p.resolve().relative_to(DEFAULT_CARDS_DIR.parent.parent))
    except (ValueError, OSError):
        return str(path)


def _loc(loc: Iterable[Any]) -> str:
    return ".".join(str(x) for x in loc) or "<card>"


def parse_card(text: str, path: str) -> Card:
    """Parse one card's text. ``path`` is used for error messages and the id check."""
    shown = _display_path(path)
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise CardError(f"{shown}: field '<front matter>': file must start with a '---' line")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise CardError(f"{shown}: field '<front matter>': no closing '---' line")
    raw_meta = "".join(lines[1:end])
    body = "".join(lines[end + 1 :]).strip("\n")
    try:
        meta = yaml.safe_load(raw_meta)
    except yaml.YAMLError as exc:
        raise CardError(f"{shown}: field '<front matter>': invalid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise CardError(f"{shown}: field '<front matter>': must be a YAML mapping")
    for reserved in ("body", "path"):
        if reserved in meta:
            raise CardError(f"{shown}: field '{reserved}': not allowed in front matter")
    try:
        card = Card(**meta, body=body, path=str(path))
    except ValidationError as exc:
        parts = [f"field '{_loc(e['loc'])}': {e['msg']}" for e in exc.errors()]
        raise CardError(f"{shown}: " + "; ".join(parts)) from exc
    except TypeError as exc:  # e.g. non-string keys in the mapping
        raise CardError(f"{shown}: field '<front matter>': {exc}") from exc
    stem = Path(path).stem
    if card.id != stem:
        raise CardError(f"{shown}: field 'id': '{card.id}' must equal the file name stem '{stem}'")
    return card


def load_cards(directory: str | Path = DEFAULT_CARDS_DIR) -> list[Card]:
    """Load and validate every ``*.md`` card in ``directory``, sorted by id."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CardError(f"{directory}: field '<directory>': not a directory")
    cards: list[Card] = []
    seen: dict[str, str] = {}
    for file in sorted(directory.glob("*.md")):
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CardError(f"{_display_path(file)}: field '<file>': cannot read: {exc}") from exc
        card = parse_card(text, str(file))
        if card.id in seen:
            raise CardError(f"{_display_path(file)}: field 'id': duplicate id '{card.id}' (also in {seen[card.id]})")
        seen[card.id] = _display_path(file)
        cards.append(card)
    return sorted(cards, key=lambda c: c.id)


__all__ = [
    "TOPICS",
    "CALCULATOR_NAMES",
    "Source",
    "Misconception",
    "AppliesTo",
    "Checked",
    "CalculatorRef",
    "Card",
    "CardError",
    "DEFAULT_CARDS_DIR",
    "parse_card",
    "load_cards",
]
