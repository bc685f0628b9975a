"""Floors on the real-question dev set, measured with the real embedding model (bench/eval_answers.py).

The floors sit just below what the engine reaches today (README "Answer quality on real questions"),
so a change that makes answers worse on real questions fails here. The targets of the answer-engine
issue are higher; the README says which are met.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from bench.eval_answers import evaluate, load_dev_set, summarise

pytestmark = pytest.mark.slow

# (metric, floor or ceiling) per language, from `.venv/bin/python bench/eval_answers.py`.
# The dev set grew by 53 harder questions (tests/data/real_questions/cards-c.yaml, one or more per card), so the
# floors were re-set from the merged engine's measurement (zh 0.851 / en 0.876 act, 0.938 / 0.938 fidelity,
# 12 contradicted, hit@3 0.829 / 0.861, hit@1 0.566 / 0.646, p90 112 words), not lowered for a worse engine.
# engine-fid3 (setup reading, issue #10) raised fidelity on the same 384 to 0.951 / 0.940 with 5 contradicted values:
# fidelity floors and the contradicted ceiling moved to just below that.
FLOORS = {
    "zh": {"act_accuracy": 0.84, "fidelity": 0.94, "hit3": 0.82, "hit1": 0.55},
    "en": {"act_accuracy": 0.87, "fidelity": 0.935, "hit3": 0.85, "hit1": 0.63},
}
CEILINGS = {"contradicted": 8, "assumed_headlines": 0, "strawman": 0, "first_words_p90": 115, "refused": 0}

# The held-out set (tests/data/heldout_real, never used to tune the engine): a guard against regressions only.
# Measured zh 0.667 / en 0.600 act, 0.886 / 0.823 fidelity, 22 contradicted, hit@3 0.548 / 0.769.
HELDOUT_FLOORS = {
    "zh": {"act_accuracy": 0.64, "fidelity": 0.87, "hit3": 0.52},
    "en": {"act_accuracy": 0.57, "fidelity": 0.80, "hit3": 0.74},
}
HELDOUT_CEILINGS = {"contradicted": 23, "assumed_headlines": 2, "strawman": 0, "refused": 0}


@pytest.fixture(scope="module")
def bot():
    from rag import Assistant
    return Assistant()


@pytest.fixture(scope="module")
def summary(bot):
    return summarise(evaluate(load_dev_set(), bot))


def test_dev_set_size():
    questions = load_dev_set()
    assert len(questions) >= 150
    assert sum(q["lang"] == "zh" for q in questions) >= 60
    assert all(q["source"].startswith("http") for q in questions)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_floors_per_language(summary, lang):
    got = summary[lang]
    for metric, floor in FLOORS[lang].items():
        assert got[metric] >= floor, f"{lang} {metric}: {got[metric]:.3f} < {floor}"


def test_ceilings(summary):
    got = summary["all"]
    for metric, ceiling in CEILINGS.items():
        assert got[metric] <= ceiling, f"{metric}: {got[metric]} > {ceiling}"


@pytest.fixture(scope="module")
def heldout_summary(bot):
    return summarise(evaluate(load_dev_set(Path(__file__).parent / "data" / "heldout_real"), bot))


def test_heldout_floors(heldout_summary):
    for lang, floors in HELDOUT_FLOORS.items():
        for metric, floor in floors.items():
            got = heldout_summary[lang][metric]
            assert got >= floor, f"held-out {lang} {metric}: {got:.3f} < {floor}"
    for metric, ceiling in HELDOUT_CEILINGS.items():
        got = heldout_summary["all"][metric]
        assert got <= ceiling, f"held-out {metric}: {got} > {ceiling}"
