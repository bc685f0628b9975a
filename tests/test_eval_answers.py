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
# 703 real questions (dev-ret10: 20 and dev-fid11: 15, mined blind this stop). Measured on the merged engine of this
# stop: act 0.829 / 0.862 (optimistic: the act model is trained on this folder), fidelity 0.969 / 0.959,
# 1 contradicted (en-onebit-3: "micro batch 4 OOMs, the most I can set is 3"), 0 headlines, 0 strawman,
# hit@3 0.846 / 0.849, hit@1 0.629 / 0.658, p90 108 / 119 words.
FLOORS = {
    "zh": {"act_accuracy": 0.825, "fidelity": 0.965, "hit3": 0.84, "hit1": 0.62},
    "en": {"act_accuracy": 0.855, "fidelity": 0.955, "hit3": 0.845, "hit1": 0.65},
}
CEILINGS = {"contradicted": 1, "assumed_headlines": 0, "strawman": 0, "first_words_p90": 120, "refused": 0}

# The held-out set (tests/data/heldout_real, never used to tune the engine): a guard against regressions only.
# 361 questions: the first 82, blind2.yaml (60), blind3-zh/-en.yaml (80), blind4-zh/-en.yaml (89; one thread that was
# also mined into the dev set was removed) and blind5-zh/-en.yaml (50, mined this stop), each mined by helpers who
# never saw the engine's code or answers. On the 311 without blind5, before this stop: act 0.667 / 0.594, values used
# 0.895 / 0.832, 51 contradicted, hit@3 0.632 / 0.675; after: act 0.679 / 0.613, values used 0.905 / 0.849,
# 49 contradicted, hit@3 0.645 / 0.689. All 361 after: act 0.663 / 0.622, values used 0.904 / 0.851, 52 contradicted,
# hit@3 0.626 / 0.718, 2 headlines, 3 strawman, 2 refusals (bench/eval_answers.py --dir tests/data/heldout_real).
HELDOUT_FLOORS = {
    "zh": {"act_accuracy": 0.66, "fidelity": 0.90, "hit3": 0.62},
    "en": {"act_accuracy": 0.62, "fidelity": 0.845, "hit3": 0.715},
}
HELDOUT_CEILINGS = {"contradicted": 52, "assumed_headlines": 2, "strawman": 3, "refused": 2}


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
