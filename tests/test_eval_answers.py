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
# 925 real questions since stop 29: the 703 of stop 28 plus the 222 oldest held-out questions (ho1-zh/-en, ho-blind2,
# ho-blind3-zh/-en), moved into the dev set so the engine can learn from them. Measured at the start of stop 29 with
# the act model retrained on all 925: act 0.796 / 0.812 (optimistic: the act model is trained on this folder; grouped
# CV 0.792 / 0.805), fidelity 0.949 / 0.932, 37 contradicted (36 of them in the moved files), 2 headlines, 3 strawman,
# hit@3 0.792 / 0.825, hit@1 0.569 / 0.640, p90 109 / 118 words, 1 refusal.
FLOORS = {
    "zh": {"act_accuracy": 0.79, "fidelity": 0.945, "hit3": 0.785, "hit1": 0.56},
    "en": {"act_accuracy": 0.805, "fidelity": 0.925, "hit3": 0.82, "hit1": 0.63},
}
CEILINGS = {"contradicted": 37, "assumed_headlines": 2, "strawman": 3, "first_words_p90": 120, "refused": 1}

# The held-out set (tests/data/heldout_real, never used to tune the engine): a guard against regressions only.
# Since stop 29: blind4-zh/-en.yaml (89; one thread also mined into the dev set was removed) and blind5-zh/-en.yaml
# (50), each mined by helpers who never saw the engine's code or answers. At the start of stop 29 (act model retrained
# on the enlarged dev set): act 0.609 / 0.600, values used 0.894 / 0.852, 16 contradicted, hit@3 0.617 / 0.672,
# 0 headlines, 0 strawman, 1 refusal (bench/eval_answers.py --dir tests/data/heldout_real).
HELDOUT_FLOORS = {
    "zh": {"act_accuracy": 0.60, "fidelity": 0.89, "hit3": 0.61},
    "en": {"act_accuracy": 0.59, "fidelity": 0.845, "hit3": 0.665},
}
HELDOUT_CEILINGS = {"contradicted": 16, "assumed_headlines": 0, "strawman": 0, "refused": 1}


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
