"""How the app picks the UI's language (the strings themselves are in calculators.i18n, the one catalogue).

The UI language is a per-session choice (a radio in the header). It starts from
``?lang=zh|en`` in the page URL, else the browser's Accept-Language header, else
``DEFAULT_LANG``. Chat answers follow the language of the question (the
assistant decides), not this setting.
"""

from __future__ import annotations

import re
from typing import Any

from calculators.lang import Lang, as_lang, detect_language

DEFAULT_LANG: Lang = "zh"


def normalize_lang(value: Any, default: Lang = DEFAULT_LANG) -> Lang:
    """'zh'/'en' from anything a user or a browser might send ('zh-CN', 'English', None…)."""
    if not isinstance(value, str):
        return default
    v = value.strip().lower()
    if v.startswith("zh") or v in ("中文", "chinese", "cn"):
        return "zh"
    if v.startswith("en") or v == "english":
        return "en"
    return default


def lang_from_accept_language(header: str | None) -> str | None:
    """The first of zh/en in an Accept-Language header, honouring q-values; None if neither appears."""
    if not header:
        return None
    best: tuple[float, int, str] | None = None
    for i, part in enumerate(header.split(",")):
        bits = part.strip().split(";")
        tag = bits[0].strip().lower()
        q = 1.0
        for b in bits[1:]:
            m = re.match(r"\s*q=([0-9.]+)", b)
            if m:
                try:
                    q = float(m.group(1))
                except ValueError:
                    q = 0.0
        lang = "zh" if tag.startswith("zh") else "en" if tag.startswith("en") else None
        if lang and (best is None or (q, -i) > (best[0], best[1])):
            best = (q, -i, lang)
    return best[2] if best else None


def text_lang(text: str, fallback: str) -> Lang:
    """The message's language by the assistant's own detector (calculators.lang), ``fallback`` when it has no letters.

    The same rule as the answer's language, so a refusal or a status line is in the language the answer would be.
    """
    return detect_language(text or "", fallback=as_lang(fallback))
