"""Speed changes of issue 17 give the same results as the code they replaced, on real inputs.

Each optimised function is compared with its plain counterpart (kept for this) over the real dev questions
(``tests/data/real_questions``) and over inputs built to hit its edge cases.
"""

from __future__ import annotations

import random
import re
import sys
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.unit_speed import clean_text_reference, slot_match_unguarded, slot_rules  # noqa: E402
from rag import glossary, slots  # noqa: E402
from rag.regex_literals import could_match, fold_case, required_literals  # noqa: E402


@lru_cache(maxsize=1)
def dev_questions() -> tuple[str, ...]:
    from bench.eval_answers import load_dev_set

    return tuple(q["question"] for q in load_dev_set())


# ---- rag.glossary.find_terms: substring prefilter before each surface form's regex ----------------------------


def test_find_terms_equals_unfiltered_scan_on_dev_questions() -> None:
    questions = dev_questions()
    assert len(questions) >= 400
    found_any = 0
    for q in questions:
        fast, plain = glossary.find_terms(q), glossary.find_terms_unfiltered(q)
        assert fast == plain, q[:120]
        found_any += bool(plain)
    assert found_any > len(questions) // 2  # the comparison is not between two empty lists


def test_find_terms_equals_unfiltered_scan_on_expanded_and_cleaned_queries() -> None:
    from rag.query_clean import clean_query

    for q in dev_questions()[::3]:
        for text in (clean_query(q), glossary.expand_query(clean_query(q))):
            assert glossary.find_terms(text) == glossary.find_terms_unfiltered(text)


def test_find_terms_equals_unfiltered_scan_on_mutated_surface_forms() -> None:
    """Every surface form, re-cased, with other separators, glued to letters, or with Unicode case partners."""
    rng = random.Random(17)
    partners = {"i": "\u0130\u0131", "s": "\u017f", "k": "\u212a"}
    forms = [f for t in glossary.GLOSSARY for f in (*t.zh, *t.en, *t.extra) if not glossary._is_pattern(f)]
    forms += ["共 96G", "第3个epoch", "200步后", "after 3.5 hrs", "after 10 epochs", "20 steps后"]
    for form in forms:
        variants = [
            form.upper(),
            form.title(),
            form.replace(" ", "-"),
            form.replace(" ", "_"),
            form.replace(" ", ""),
            "x" + form + "y",
            "_" + form,
            "".join(rng.choice(partners[c]) if c in partners and rng.random() < 0.5 else c for c in form.lower()),
        ]
        for v in variants:
            text = f"显存 {v} 呢？"
            assert glossary.find_terms(text) == glossary.find_terms_unfiltered(text), text


def test_case_fold_covers_every_case_insensitive_partner_of_the_literals() -> None:
    """The prefilters test ``needle in fold_case(text)``; that is sound only if every character the regex engine
    matches case-insensitively to a needle's character folds to the same single character. Checked against every
    code point, for every character of every needle (glossary forms and the setup reader's patterns)."""
    needle_chars = {c for _t, forms in glossary._form_matchers() for needle, _rx in forms for c in needle}
    needle_chars |= {c for p in slot_patterns() for n in (required_literals(p) or ()) for c in n}
    everything = "".join(chr(i) for i in range(0x110000) if not 0xD800 <= i < 0xE000)
    any_needle_char = re.compile("[" + "".join(re.escape(c) for c in sorted(needle_chars)) + "]", re.IGNORECASE)
    matched = set(any_needle_char.findall(everything))  # one pass over all code points
    assert needle_chars <= matched and {"\u212a", "\u017f"} <= matched
    single = {p: re.compile(re.escape(p), re.IGNORECASE) for p in needle_chars}
    for t in matched:
        for p, rx in single.items():
            if rx.fullmatch(t):
                assert len(fold_case(t)) == 1 and fold_case(t) == fold_case(p), (p, t)


def test_fold_equal_characters_match_case_insensitively_for_regex_free_forms() -> None:
    """A CJK form is matched as ``fold_case(form) in fold_case(text)`` with no regex: that is the regex's verdict
    only if, besides the direction checked above, every character that folds like one of the form's characters is
    also matched by it case-insensitively (and folding never changes a string's length there)."""
    chars = {c for _t, forms in glossary._form_matchers() for needle, rx in forms if rx is None for c in needle}
    assert len(chars) > 100
    code_points = [chr(i) for i in range(0x110000) if not 0xD800 <= i < 0xE000]
    folds = {fold_case(c) for c in chars}
    for t in code_points:
        if (f := fold_case(t)) in folds:
            for p in chars:
                if fold_case(p) == f:
                    assert re.fullmatch(re.escape(p), t, re.IGNORECASE), (p, t)
    assert all(len(fold_case(t)) == 1 for t in code_points)  # so a folded text lines up with the text


@pytest.mark.parametrize(
    ("form", "literal"),
    [
        ("共\\d+G", "共"),
        ("第\\d+个epoch", "个epoch"),
        ("\\d+\\s*[步轮][时后]", ""),
        ("\\d+\\s*steps?[时后]", "step"),
        ("after \\d+\\.?\\d*\\s*hours", "after "),
        ("ab(c|d)", ""),
        ("abc{2}d", "ab"),
    ],
)
def test_pattern_literal_is_a_piece_every_match_contains(form: str, literal: str) -> None:
    assert glossary._pattern_literal(form) == literal


# ---- rag.act_model.features: n-grams as sets per kind, hashed from the kind's CRC-32 state ---------------------


def test_act_features_equal_reference_on_dev_questions() -> None:
    from rag.act_model import ActInputs, features, features_reference, load_act_model
    from rag.parts import split_message

    model = load_act_model()
    assert model is not None
    for i, q in enumerate(dev_questions()):
        inputs = ActInputs(
            parts=split_message(q),
            rule_act=("explain", "diagnose", "fit")[i % 3],
            has_diagnosis=i % 2 == 0,
            has_misconception=i % 5 == 0,
            setup_enough=i % 7 == 0,
        )
        fast, ref = features(inputs), features_reference(inputs)
        assert fast == ref, q[:120]  # same buckets, same weights (dict order aside)
        assert len(fast) > 3


# ---- rag.history.clean_text: no per-character pass for text without category-C characters -------------------


def test_clean_text_equals_reference_on_dev_questions_and_odd_text() -> None:
    from rag.history import clean_text

    rng = random.Random(17)
    odd = [
        "",
        "\n\t",
        "a\x00b\x1fc",
        "全角ＡＢＣ１２３",
        "x\u200by\u2028z\u3000w",
        "\ud800lone",
        "é\u0301\ufeff",
        "\x7f\x85",
    ]
    pool = [chr(i) for i in range(0x110000) if i % 97 == 0 or i < 0x300]
    odd += ["".join(rng.choice(pool) for _ in range(40)) for _ in range(300)]
    for text in [*dev_questions(), *odd]:
        assert clean_text(text) == clean_text_reference(text), repr(text[:80])


def test_every_category_c_character_is_not_printable() -> None:
    """The fast path of clean_text relies on it."""
    import unicodedata

    for i in range(0x110000):
        c = chr(i)
        if unicodedata.category(c)[0] == "C":
            assert not c.isprintable(), hex(i)


# ---- rag.embedding.keep_eval_mode: encode() no longer walks every module to put it in eval mode ---------------


def test_keep_eval_mode_gives_the_same_query_embeddings_and_still_switches_back() -> None:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import numpy as np

    from rag.embedding import EmbeddingSettings, load_embedding

    emb = load_embedding(EmbeddingSettings.from_env(), batch_window_s=0.0)
    st = emb._model
    assert "eval" in vars(st) and not any(m.training for m in st.modules())
    queries = [q[:400] for q in dev_questions()[::60]]
    fast = np.array([emb.get_query_embedding(q) for q in queries])
    st.train()  # something puts it back in training mode: the next eval() must walk the modules again
    assert all(m.training for m in st.modules())
    assert st.eval() is st and not any(m.training for m in st.modules())
    del vars(st)["eval"]  # the library's own eval(), walking every module on every encode
    plain = np.array([emb.get_query_embedding(q) for q in queries])
    assert np.array_equal(fast, plain)


# ---- rag.slots.SlotRule.match: a pattern is not scanned when a literal it needs is absent -------------------


def slot_patterns() -> list[re.Pattern[str]]:
    """Every compiled regex of the setup reader: the SlotRule table's and the module's own."""
    found = {p for rule in slot_rules() for p in rule.patterns}
    found |= {v for v in vars(slots).values() if isinstance(v, re.Pattern)}
    return sorted(found, key=lambda p: p.pattern)


def _texts() -> list[str]:
    from rag.parts import prose_of, split_message
    from rag.setup import own_prose

    out = []
    for q in dev_questions():
        parts = split_message(q)
        out += [q, own_prose(prose_of(parts))] + [p.text for p in parts if p.kind != "prose"]
    return out


def test_slot_rules_match_as_unguarded_on_dev_messages_and_parts() -> None:
    rules = slot_rules()
    assert len(rules) >= 25
    matched = 0
    for text in _texts():
        for rule in rules:
            fast, plain = rule.match(text), slot_match_unguarded(rule, text)
            assert (fast and (fast.span(), fast.groups(), fast.re)) == (
                plain and (plain.span(), plain.groups(), plain.re)
            )
            matched += plain is not None
    assert matched > 500


def test_could_match_never_rules_out_a_pattern_that_matches() -> None:
    """Over every regex of the setup reader (not just the SlotRule table) and the glossary's forms."""
    patterns = slot_patterns() + [rx for _t, forms in glossary._form_matchers() for _n, rx in forms if rx]
    guarded = [p for p in patterns if required_literals(p) is not None]
    assert len(guarded) > len(patterns) // 2
    texts = _texts()[::2]
    for p in guarded:
        for text in texts:
            if p.search(text):
                assert could_match(p, text), (p.pattern, text[:80])


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        (re.compile(r"abc"), ("abc",)),
        (re.compile(r"ab?c"), ("a",)),
        (re.compile(r"x(?:foo|barbaz)y"), ("barbaz", "foo")),  # the longer piece wins over "x" and "y"
        (re.compile(r"GPU\d+", re.I), ("gpu",)),
        (re.compile(r"(?:a|)xyz"), ("xyz",)),
        (re.compile(r"(?i:abc)"), None),
        (re.compile(r"\d+[a-z]*"), None),
        (re.compile(r"(?:单卡|one gpu)+"), ("one gpu", "单卡")),
        (re.compile(r"a*b{0,2}"), None),
    ],
)
def test_required_literals(pattern: re.Pattern[str], literals: tuple[str, ...] | None) -> None:
    assert required_literals(pattern) == literals
