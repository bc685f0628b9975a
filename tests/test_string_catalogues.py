"""Every key → {zh, en} string table in the app: both languages, non-empty, the same {placeholders}.

The tables are found by scanning the modules of calculators/, rag/ and ui/ (a module-level dict whose values are
{"zh": …, "en": …} dicts), so a new catalogue is checked without being listed here; the known ones must be found.
"""
from __future__ import annotations

import importlib
import pkgutil
import string
from collections.abc import Iterator
from typing import Any

import pytest

import calculators
import rag
import ui
from calculators.lang import LANGS, as_lang, detect_language, is_lang

KNOWN = {"rag.strings.TEXT", "rag.strings.KEY_NAMES", "ui.i18n.STRINGS", "ui.i18n.FIELD_LABELS",
         "ui.factcheck_box.STRINGS", "ui.diagnose_panel.TEXT", "ui.plots.NAMES"}


def _modules() -> Iterator[Any]:
    for pkg in (calculators, rag, ui):
        yield pkg
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            yield importlib.import_module(info.name)


def _is_catalogue(value: Any) -> bool:
    return (isinstance(value, dict) and len(value) >= 2 and all(isinstance(v, dict) for v in value.values())
            and any("zh" in v or "en" in v for v in value.values()))


def _catalogues() -> dict[str, dict[str, dict[str, Any]]]:
    found = {}
    for mod in _modules():
        for name, value in vars(mod).items():
            if _is_catalogue(value) and getattr(mod, "__name__", "") and not name.startswith("__"):
                found.setdefault(id(value), (f"{mod.__name__}.{name}", value))
    return dict(found.values())


CATALOGUES = _catalogues()


def _fields(text: str) -> list[str]:
    return sorted(f for _, f, _, _ in string.Formatter().parse(text) if f is not None)


def test_the_known_catalogues_are_found() -> None:
    assert set(CATALOGUES) >= KNOWN, sorted(KNOWN - set(CATALOGUES))


@pytest.mark.parametrize("name", sorted(CATALOGUES))
def test_every_key_has_both_languages_with_the_same_placeholders(name: str) -> None:
    for key, both in CATALOGUES[name].items():
        assert set(both) == set(LANGS), f"{name}[{key!r}] has {sorted(both)}"
        assert all(isinstance(v, str) and v.strip() for v in both.values()), f"{name}[{key!r}] is empty"
        assert _fields(both["zh"]) == _fields(both["en"]), f"{name}[{key!r}]: {_fields(both['zh'])} vs {_fields(both['en'])}"


def test_the_memory_rows_of_the_chat_table_have_both_languages() -> None:
    from ui.render import _MEMORY_ROWS
    for key, both in _MEMORY_ROWS:
        assert set(both) == set(LANGS) and all(v.strip() for v in both.values()), key


@pytest.mark.parametrize(("value", "expected"), [("zh", "zh"), (" EN ", "en"), ("fr", "en"), (None, "en"), (3, "en")])
def test_as_lang_accepts_only_the_two_languages(value: Any, expected: str) -> None:
    assert as_lang(value) == expected and is_lang(as_lang(value))


@pytest.mark.parametrize(("text", "expected"), [
    ("gradient_accumulation_steps 开大会爆显存吗", "zh"),
    ("Does gradient_accumulation_steps raise memory?", "en"),
    ("OOM with 显存 at micro batch 8 and ZeRO-3 on eight GPUs", "zh"),   # two Han characters: a Chinese answer
    ("12345 ...", "en"), ("", "en")])
def test_one_language_detector(text: str, expected: str) -> None:
    assert detect_language(text) == expected


def test_no_letters_keeps_the_fallback() -> None:
    assert detect_language("12345 ...", fallback="zh") == "zh"
    from ui.i18n import text_lang
    assert text_lang("显存够吗", "en") == "zh" and text_lang("123", "zh") == "zh"
