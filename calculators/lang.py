"""The two languages we answer in: one type, one parser for user-supplied values, one detector.

Every layer (calculators, rag, ui) imports these, so a message, a tool result and the UI agree on which
language a text is in, and a ``lang`` argument is checked once instead of compared to strings everywhere.
"""

from __future__ import annotations

import re
from typing import Literal, TypeGuard

Lang = Literal["zh", "en"]
LANGS: tuple[Lang, ...] = ("zh", "en")

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_LETTER = re.compile(r"[A-Za-z\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def is_lang(value: object) -> TypeGuard[Lang]:
    """Whether ``value`` is exactly "zh" or "en"."""
    return value in LANGS


def as_lang(value: object, default: Lang = "en") -> Lang:
    """``value`` as a Lang ("zh"/"en", any case, surrounding spaces ignored), else ``default``."""
    if isinstance(value, str):
        v = value.strip().lower()
        if is_lang(v):
            return v
    return default


def detect_language(text: str, fallback: Lang = "en") -> Lang:
    """'zh' when Han characters carry the sentence, 'en' for other text, ``fallback`` when it has no letters at all.

    Config keys (``gradient_accumulation_steps``) and model names are English words inside Chinese questions,
    so a few Han characters are enough: users who write any Chinese sentence around them expect a Chinese answer.
    """
    text = text if isinstance(text, str) else ""
    if not _LETTER.search(text):
        return fallback
    han = len(_HAN.findall(text))
    if han == 0:
        return "en"
    latin_words = len(_LATIN_WORD.findall(text))
    return "zh" if han >= 2 or han >= latin_words else "en"


def answer_language(text: str, ui_lang: Lang | None = None, fallback: Lang = "en") -> Lang:
    """The language to answer ``text`` in: Chinese text always gets Chinese; other text (an English question, a
    pasted JSON config or log) gets the UI language ``ui_lang`` when one is given, so a log pasted in the Chinese UI
    is explained in Chinese; without a UI language, the detector decides (``fallback`` when there are no letters).
    """
    hint = ui_lang if is_lang(ui_lang) else None
    detected = detect_language(text, fallback=hint or fallback)
    return "zh" if detected == "zh" else (hint or detected)
