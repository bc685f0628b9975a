"""The one catalogue of everything the app writes in Chinese and English, and the one lookup ``t()``.

Every layer (calculators, rag, ui) looks its words up here, so a sentence has one owner and one wording. The strings
live in area tables (``answers``: the answer engine and the names of setup fields; ``ui_text``: the UI; ``messages``:
the calculators' and the config doctor's own sentences); :data:`CATALOGUE` joins them into one key namespace, and
joining refuses a key written twice, or an entry whose two languages differ in placeholders, when this module loads.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from calculators.lang import LANGS, Lang

from . import answers, messages, ui_text

Table = Mapping[str, Mapping[str, str]]

#: (prefix, table): a table's keys enter the catalogue as prefix + key.
AREAS: tuple[tuple[str, Table], ...] = (
    ("", answers.ANSWER_TEXT),
    ("", ui_text.UI_TEXT),
    ("", messages.MESSAGES),
    ("doctor.", messages.DOCTOR),
    ("diagnosis.", messages.DIAGNOSIS),
    ("name.", answers.KEY_NAMES),
    ("label.", ui_text.FIELD_LABELS),
    ("factcheck.", ui_text.FACTCHECK_BOX),
    ("diagnose_panel.", ui_text.DIAGNOSE_PANEL),
    ("plot.", ui_text.PLOT_TEXT),
)


class CatalogueError(ValueError):
    """A catalogue that would make ``t()`` ambiguous or break in one language (a developer's error, found at import)."""


def placeholders(text: str) -> list[str]:
    """The ``{names}`` a string fills in, sorted."""
    return sorted(name for _, name, _, _ in string.Formatter().parse(text) if name is not None)


def entry_problems(key: str, entry: Mapping[str, str]) -> list[str]:
    """What is wrong with one entry: a language missing or empty, or placeholders that differ between languages."""
    if set(entry) != set(LANGS):
        return [f"{key!r} has languages {sorted(entry)}, needs {sorted(LANGS)}"]
    problems = [f"{key!r} is empty in {lang!r}" for lang in LANGS if not entry[lang].strip()]
    if placeholders(entry["zh"]) != placeholders(entry["en"]):
        problems.append(f"{key!r}: placeholders {placeholders(entry['zh'])} (zh) vs {placeholders(entry['en'])} (en)")
    return problems


def join(areas: tuple[tuple[str, Table], ...]) -> Mapping[str, Mapping[str, str]]:
    """The areas as one read-only key → {zh, en} mapping; :class:`CatalogueError` on a repeated key or a bad entry."""
    joined: dict[str, Mapping[str, str]] = {}
    problems: list[str] = []
    for prefix, table in areas:
        for key, entry in table.items():
            full = prefix + key
            if full in joined:
                problems.append(f"{full!r} is defined twice")
            problems.extend(entry_problems(full, entry))
            joined[full] = entry
    if problems:
        raise CatalogueError("; ".join(problems))
    return MappingProxyType(joined)


CATALOGUE: Mapping[str, Mapping[str, str]] = join(AREAS)


def t(key: str, lang: Lang, **values: Any) -> str:
    """The string ``key`` in ``lang``, with ``values`` filled in (a string without values is returned as written)."""
    text = CATALOGUE[key]["zh" if lang == "zh" else "en"]
    return text.format(**values) if values else text


def key_name(field: str, lang: Lang) -> str:
    """The one name of a setup field ("world_size" → 卡数 / GPUs); the field itself when it has none."""
    return t("name." + field, lang) if "name." + field in CATALOGUE else field


def label(field: str, lang: Lang) -> str:
    """The calculators tab's form label of ``field``: its template with the field's one name as ``{name}``."""
    template = t("label." + field, lang)
    if "{name}" not in template:
        return template
    text = template.format(name=key_name(field, lang))
    # "model preset" → "Model preset"; a label that is only the name stays as the name ("precision").
    return text[0].upper() + text[1:] if template.startswith("{name}") and template != "{name}" else text


__all__ = ["CATALOGUE", "CatalogueError", "Lang", "join", "key_name", "label", "placeholders", "t"]
