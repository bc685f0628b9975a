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
# The dev set grew to 453 real questions: 53 harder ones per card (cards-c.yaml) and 69 new ones mined blind for act,
# setup and retrieval (dev-act3 / dev-fid3 / dev-ret3.yaml, scored before the engine was changed for them). The floors
# were re-set from the merged engine's measurement on the grown set (act 0.830 / 0.871, fidelity 0.953 / 0.938,
# 12 contradicted, hit@3 0.801 / 0.846, hit@1 0.558 / 0.643, p90 116 words); on the 384 questions before the growth
# every figure held or rose, so the lower hit@3 floor is the harder set, not a worse engine.
FLOORS = {
    "zh": {"act_accuracy": 0.82, "fidelity": 0.945, "hit3": 0.785, "hit1": 0.55},
    "en": {"act_accuracy": 0.86, "fidelity": 0.93, "hit3": 0.835, "hit1": 0.635},
}
CEILINGS = {"contradicted": 14, "assumed_headlines": 0, "strawman": 0, "first_words_p90": 120, "refused": 0}

# The held-out set (tests/data/heldout_real, never used to tune the engine): a guard against regressions only.
# Measured zh 0.667 / en 0.625 act, 0.878 / 0.832 fidelity, 17 contradicted, hit@3 0.619 / 0.769.
HELDOUT_FLOORS = {
    "zh": {"act_accuracy": 0.64, "fidelity": 0.865, "hit3": 0.59},
    "en": {"act_accuracy": 0.60, "fidelity": 0.81, "hit3": 0.74},
}
HELDOUT_CEILINGS = {"contradicted": 18, "assumed_headlines": 2, "strawman": 0, "refused": 0}


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
