"""Every key → {zh, en} string table in the app: both languages, non-empty, the same {placeholders}.

The tables are found by scanning the modules of calculators/, rag/ and ui/ (a module-level dict whose values are
{"zh": …, "en": …} dicts), so a new catalogue is checked without being listed here; the known ones must be found.
"""

from __future__ import annotations

import importlib
import itertools
import pkgutil
import re
import string
import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest

import calculators
import rag
import ui
from calculators.lang import LANGS, as_lang, detect_language, is_lang

KNOWN = {
    "calculators.i18n.answers.ANSWER_TEXT",
    "calculators.i18n.answers.KEY_NAMES",
    "calculators.i18n.ui_text.UI_TEXT",
    "calculators.i18n.ui_text.FIELD_LABELS",
    "calculators.i18n.ui_text.FACTCHECK_BOX",
    "calculators.i18n.ui_text.DIAGNOSE_PANEL",
    "calculators.i18n.ui_text.PLOT_TEXT",
    "calculators.memory_table.NAMES",
}


def _modules() -> Iterator[Any]:
    for pkg in (calculators, rag, ui):
        yield pkg
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            yield importlib.import_module(info.name)


def _is_catalogue(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and len(value) >= 2
        and all(isinstance(v, dict) for v in value.values())
        and any("zh" in v or "en" in v for v in value.values())
    )


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
        assert _fields(both["zh"]) == _fields(both["en"]), (
            f"{name}[{key!r}]: {_fields(both['zh'])} vs {_fields(both['en'])}"
        )


def _normal(text: str) -> str:
    """A string as a reader sees it: full-width forms folded (（ → (), case and spacing ignored, leading marks and
    trailing punctuation dropped ("✘ Wrong:" reads as "wrong")."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = re.sub(r"\s+", " ", folded).strip()
    return folded.lstrip("✘✔ℹ⚠*#_ ").rstrip(".:;,。：；， _*")


#: Pairs of keys that share a wording in one language on purpose: the knowledge table's column "Sources" counts a
#: card's sources (来源数), the answer's section "Sources" lists them (参考来源); a sentence's unnamed card
#: ("the 80 GiB of a GPU", 显卡) and the setup field's name (GPU in Chinese too).
SAME_WORD_ON_PURPOSE = {
    frozenset({"sources", "col_sources"}),
    frozenset({"a_gpu", "gpu"}),
    frozenset({"a_gpu", "gpu_text"}),
    frozenset({"a_gpu", "the_gpu"}),  # 显卡: "a GPU" in the answer's sentence, "the GPU" in the tab's verdict
    frozenset({"check_failed", "failed"}),  # the config check (检查) and the fact check (核查) failing
    # a finding's severity ("error") and the config report's section of them ("Errors"): one Chinese word
    frozenset({"sev_error", "errors"}),
    frozenset({"sev_warning", "warnings"}),
    frozenset({"sev_info", "notes"}),
}


def _duplicates(catalogues: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Entries of two catalogues that say the same thing in either language ("Sources" is "Sources" whether the
    Chinese reads 来源 or 参考来源: one of them is a copy that drifted). Two keys of one catalogue may share a
    wording (aliases such as "model" / "model_text"); the same entry object reached through another catalogue
    (ui imports the answer engine's wording) is one string, not a copy."""
    entries = [(name, key, both) for name, cat in catalogues.items() for key, both in cat.items()]
    homes: dict[int, set[str]] = {}
    for name, _, both in entries:
        homes.setdefault(id(both), set()).add(name)
    found = []
    for (n1, k1, b1), (n2, k2, b2) in itertools.combinations(entries, 2):
        if b1 is b2 or homes[id(b1)] & homes[id(b2)] or frozenset({k1, k2}) in SAME_WORD_ON_PURPOSE:
            continue
        # punctuation alone ("；", "#") says nothing: two of them are not a copy
        if any(_normal(str(b1.get(lang, ""))) == _normal(str(b2.get(lang, ""))) != "" for lang in LANGS):
            found.append(f"{n1}[{k1!r}] = {n2}[{k2!r}] = {b1}")
    return found


def test_no_string_is_written_in_two_catalogues() -> None:
    """One owner per string: a message or a name both ui and rag show lives in the lower layer, the other imports it."""
    assert _duplicates(CATALOGUES) == []


def test_the_duplicate_check_catches_a_copy() -> None:
    copy = {"sources": {"zh": "来源", "en": "Sources:"}, "other": {"zh": "别的", "en": "Other"}}
    original = {"sources": {"zh": "参考来源", "en": " sources"}, "x": {"zh": "甲", "en": "x"}}
    assert _duplicates({"a": copy, "b": original}) == [f"a['sources'] = b['sources'] = {copy['sources']}"]
    assert _duplicates({"a": copy, "b": {"sources": copy["sources"]}}) == []  # imported, not copied
    assert (
        _duplicates({"a": {"k": {"zh": "模型", "en": "model"}, "k2": {"zh": "模型", "en": "Model"}}}) == []
    )  # aliases
    assert _normal("（GiB）") == _normal("(gib)")


def test_field_labels_name_a_field_the_way_the_chat_does() -> None:
    """The calculators tab's label of a setup field carries the field's one name (answers.KEY_NAMES)."""
    from calculators.i18n import label
    from calculators.i18n.answers import KEY_NAMES
    from calculators.i18n.ui_text import FIELD_LABELS

    shared = set(KEY_NAMES) & set(FIELD_LABELS)
    assert len(shared) >= 15, sorted(shared)
    for field in shared:
        for lang in LANGS:
            named = "{name}" in FIELD_LABELS[field][lang]
            assert named or field in ("lora_rank",), f"FIELD_LABELS[{field!r}][{lang!r}] writes its own name"
            if named:
                assert KEY_NAMES[field][lang].casefold() in label(field, lang).casefold()
    assert label("world_size", "zh") == "数据并行卡数 world_size" and label("model", "en") == "Model preset"


def test_every_memory_row_has_a_name() -> None:
    from calculators.memory_table import NAMES, ROWS

    assert set(ROWS) <= set(NAMES)


@pytest.mark.parametrize(("value", "expected"), [("zh", "zh"), (" EN ", "en"), ("fr", "en"), (None, "en"), (3, "en")])
def test_as_lang_accepts_only_the_two_languages(value: Any, expected: str) -> None:
    assert as_lang(value) == expected and is_lang(as_lang(value))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gradient_accumulation_steps 开大会爆显存吗", "zh"),
        ("Does gradient_accumulation_steps raise memory?", "en"),
        ("OOM with 显存 at micro batch 8 and ZeRO-3 on eight GPUs", "zh"),  # two Han characters: a Chinese answer
        ("12345 ...", "en"),
        ("", "en"),
    ],
)
def test_one_language_detector(text: str, expected: str) -> None:
    assert detect_language(text) == expected


def test_no_letters_keeps_the_fallback() -> None:
    assert detect_language("12345 ...", fallback="zh") == "zh"
    from ui.i18n import text_lang

    assert text_lang("显存够吗", "en") == "zh" and text_lang("123", "zh") == "zh"


def test_one_catalogue_holds_every_area_under_one_key_namespace() -> None:
    """calculators.i18n joins the answer, UI and message tables; each UI panel's keys carry the panel's prefix."""
    from calculators.i18n import AREAS, CATALOGUE, t

    assert len(CATALOGUE) == sum(len(table) for _, table in AREAS)  # no key of one area hides another's
    assert t("sources", "zh") == "参考来源" and t("tab_chat", "en") == "Chat"
    assert (
        t("diagnose_panel.failed", "en", name="ValueError")
        == "✘ Diagnosis failed (ValueError). Please check the paste."
    )
    assert t("factcheck.empty", "zh") == "请先粘贴要核查的回答。" and t("name.world_size", "zh") == "卡数"
    with pytest.raises(KeyError):
        t("no such key", "en")


def test_joining_refuses_a_key_written_twice_or_mismatched_placeholders() -> None:
    from calculators.i18n import CatalogueError, join

    one = {"hello": {"zh": "你好 {name}", "en": "Hello {name}"}}
    assert dict(join((("", one), ("p.", one)))) == {"hello": one["hello"], "p.hello": one["hello"]}
    with pytest.raises(CatalogueError, match="'hello' is defined twice"):
        join((("", one), ("", {"hello": {"zh": "嗨", "en": "Hi"}})))
    with pytest.raises(CatalogueError, match="placeholders"):
        join((("", {"x": {"zh": "{a} 个", "en": "{b} of them"}}),))
    with pytest.raises(CatalogueError, match="languages"):
        join((("", {"x": {"zh": "只有中文"}}),))


def test_a_string_without_values_is_returned_as_written() -> None:
    from calculators.i18n import t

    assert t("feedback_unwritable", "en").startswith("⚠ Feedback could not be saved: the feedback file `{path}`")
