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
# The dev set grew to 512 real questions: 59 new ones mined blind for the act model, setup reading and retrieval
# (dev-actclf / dev-fid4 / dev-ret4.yaml, scored before the engine was changed for them; seven threads that are also
# in the held-out blind2.yaml were dropped from them). Measured on the merged engine: act 0.853 / 0.858 (optimistic:
# the act model is trained on this folder), fidelity 0.952 / 0.939, 15 contradicted, hit@3 0.775 / 0.823, hit@1
# 0.545 / 0.632, p90 112 / 123 words (the set change alone moved English p90 from 119 to 123: same answers).
FLOORS = {
    "zh": {"act_accuracy": 0.84, "fidelity": 0.945, "hit3": 0.765, "hit1": 0.54},
    "en": {"act_accuracy": 0.85, "fidelity": 0.93, "hit3": 0.815, "hit1": 0.62},
}
CEILINGS = {"contradicted": 16, "assumed_headlines": 0, "strawman": 0, "first_words_p90": 125, "refused": 0}

# The held-out set (tests/data/heldout_real, never used to tune the engine): a guard against regressions only.
# 142 questions: the first 82 plus blind2.yaml (60, mined this round by someone who never saw the engine's code or
# answers). Measured zh 0.694 / en 0.586 act, 0.903 / 0.817 fidelity, 19 contradicted, hit@3 0.592 / 0.794,
# 2 headlines, 2 strawman corrections and 1 refusal (all three in blind2 except the headlines).
HELDOUT_FLOORS = {
    "zh": {"act_accuracy": 0.68, "fidelity": 0.89, "hit3": 0.58},
    "en": {"act_accuracy": 0.57, "fidelity": 0.80, "hit3": 0.78},
}
HELDOUT_CEILINGS = {"contradicted": 20, "assumed_headlines": 2, "strawman": 2, "refused": 1}


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
