"""The labelled chatbot answers: precision of the flags must stay >= 0.95 (recall is reported, not gated)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("eval_factcheck", ROOT / "bench" / "eval_factcheck.py")
ev = importlib.util.module_from_spec(_spec)
sys.modules["eval_factcheck"] = ev  # dataclasses look their module up
_spec.loader.exec_module(ev)  # type: ignore[union-attr]


def test_enough_labelled_answers_in_both_languages():
    answers = ev.load_answers()
    assert len(answers) >= 40
    zh = [a for a in answers if any("\u4e00" <= ch <= "\u9fff" for _, t in a["lines"] for ch in t)]
    assert len(zh) >= 15 and len(answers) - len(zh) >= 15
    assert sum(label in ("W", "I") for a in answers for label, _ in a["lines"]) >= 40


def test_precision_at_least_095_and_recall_reported():
    s = ev.score(ev.load_answers())
    print(f"fact_check: precision {s.precision:.3f}, recall {s.recall:.3f} ({s.found_bad}/{s.labelled_bad})")
    assert s.precision >= 0.95, s.false_positives
    assert s.recall >= 0.6, s.misses  # a floor against a silent regression, not the target


def test_our_own_cards_are_never_flagged():
    """The card bodies (ours, correct, ~1,000 claims that quote and deny the myths) must raise no flag."""
    from calculators.factcheck import fact_check
    from rag.cards import load_cards

    flagged = [(c.id, cl.rule, cl.text[:80]) for c in load_cards() for cl in fact_check(c.body).flagged]
    assert not flagged


def test_key_facts_of_real_questions_are_not_flagged():
    """The key facts of the real-question set (correct statements from maintainers' replies) raise no flag.

    The one exception is a genuine slip in that data: zh-mgm-111 writes "8 x 16 x 2 = 16 x 16 x 1 = 128"
    (both products are 256), which the arithmetic check rightly catches.
    """
    import yaml

    from calculators.factcheck import fact_check

    folder = ROOT / "tests" / "data" / "real_questions"
    facts = [
        (q["id"], k)
        for f in sorted(folder.glob("*.yaml"))
        for q in (yaml.safe_load(f.read_text(encoding="utf-8")) or {}).get("questions", [])
        for k in q.get("key_facts") or []
    ]
    if not facts:
        import pytest

        pytest.skip("no real-question set in this checkout")
    flagged = {(qid, c.rule) for qid, k in facts for c in fact_check(k).flagged}
    assert flagged <= {("zh-mgm-111", "arithmetic")}, flagged
