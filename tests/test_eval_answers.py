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
# The dev set grew to 620 real questions: 108 new ones (dev-mine5zh / dev-mine5en, 45 + 45 mostly non-diagnose
# questions mined blind for the weak acts; dev-ret5, 18 for retrieval). Scored before the engine saw them they got
# act 0.444 / 0.489 and hit@3 0.683 / 0.744, so the dev figures fell with the harder set, not with the engine: on
# the 512 old questions nothing fell. Measured on the merged engine: act 0.782 / 0.811 (optimistic: the act model is
# trained on this folder), fidelity 0.939 / 0.935, 13 contradicted, 2 strawman (zh-jittor-602: a Jittor run whose
# memory did grow with GA; zh-openrlhf-277), hit@3 0.771 / 0.824, hit@1 0.546 / 0.608, p90 108 / 120 words.
FLOORS = {
    "zh": {"act_accuracy": 0.775, "fidelity": 0.935, "hit3": 0.765, "hit1": 0.54},
    "en": {"act_accuracy": 0.805, "fidelity": 0.93, "hit3": 0.815, "hit1": 0.60},
}
CEILINGS = {"contradicted": 14, "assumed_headlines": 0, "strawman": 2, "first_words_p90": 125, "refused": 0}

# The held-out set (tests/data/heldout_real, never used to tune the engine): a guard against regressions only.
# 142 questions: the first 82 plus blind2.yaml (60, mined this round by someone who never saw the engine's code or
# answers). Measured zh 0.708 / en 0.586 act, 0.905 / 0.817 fidelity, 19 contradicted, hit@3 0.592 / 0.794,
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
