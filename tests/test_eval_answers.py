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
# 637 real questions (dev-ret6: 17 from forums and blogs, mined blind, added this round). Measured on the merged
# engine: act 0.788 / 0.815 (optimistic: the act model is trained on this folder), fidelity 0.948 / 0.940, 9
# contradicted, 0 headlines, 2 strawman (zh-jittor-602: a Jittor run whose memory did grow with GA; zh-openrlhf-277),
# hit@3 0.821 / 0.838, hit@1 0.593 / 0.630, p90 105 / 113 words.
FLOORS = {
    "zh": {"act_accuracy": 0.78, "fidelity": 0.94, "hit3": 0.815, "hit1": 0.585},
    "en": {"act_accuracy": 0.805, "fidelity": 0.935, "hit3": 0.83, "hit1": 0.62},
}
# dev-ret9 (20 fresh questions, ret9) adds 3 contradictions the engine already made on messages of that shape (a
# second GPU named in passing read as the GPU: "单卡A100 80G" in an A40 x 4 message; "主卡…另外3个卡" read as 3 GPUs;
# "8 80G GPU (7 for training and 1 for vllm)" read as 8): the ceiling counts over a larger set, 9 + 3 = 12.
CEILINGS = {"contradicted": 12, "assumed_headlines": 0, "strawman": 2, "first_words_p90": 120, "refused": 0}

# The held-out set (tests/data/heldout_real, never used to tune the engine): a guard against regressions only.
# 312 questions: the first 82, blind2.yaml (60), blind3-zh/-en.yaml (80) and blind4-zh/-en.yaml (90, mined this stop
# by helpers who never saw the engine's code or answers; scored once before any change of this stop: act 0.622 /
# 0.533, values used 0.887 / 0.822, 13 contradicted, hit@3 0.644 / 0.500). All 312 before this stop's changes:
# act 0.662 / 0.594, values used 0.896 / 0.832, 51 contradicted, hit@3 0.628 / 0.675, 2 headlines, 3 strawman,
# 1 refusal (bench/eval_answers.py --dir tests/data/heldout_real).
HELDOUT_FLOORS = {
    "zh": {"act_accuracy": 0.65, "fidelity": 0.885, "hit3": 0.615},
    "en": {"act_accuracy": 0.58, "fidelity": 0.82, "hit3": 0.66},
}
HELDOUT_CEILINGS = {"contradicted": 53, "assumed_headlines": 2, "strawman": 3, "refused": 1}


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
