"""The trained question-act model (rag/act_model.py) and how classify_act uses it: fast unit tier.

What these check: the artifact is small, loads without pickle and matches the code; features are the same on
every run; without an artifact the rules' verdict stands (with one warning); the model only replaces the rules'
verdict above its threshold; retraining (bench/train_act.py) gives the same predictions as the committed model.
Accuracy figures live in the trainer's grouped cross-validation report, not here: a model fitted on the dev set
scores near 1.0 on it, which proves nothing.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from rag.act_model import (
    ACT_ORDER,
    ARTIFACT,
    N_BUCKETS,
    ActInputs,
    features,
    load_act_model,
    model_from_json,
)
from rag.acts import ACTS, classify_act, rule_act
from rag.parts import Part, split_message


def _prose(text: str) -> list[Part]:
    return [Part(kind="prose", text=text, start=0, end=len(text))]


def test_act_order_is_the_acts_order():
    assert ACT_ORDER == ACTS


def test_artifact_is_small_json_without_pickle():
    raw = ARTIFACT.read_bytes()
    assert len(raw) < 2_000_000, f"artifact is {len(raw)} bytes"
    data = json.loads(raw)
    assert data["n_buckets"] == N_BUCKETS
    assert set(data["classes"]) == set(ACTS)
    assert 0.0 <= data["override"] <= 1.0


def test_features_are_deterministic_and_in_range():
    parts = split_message("8卡 A100 训练 llama2-13b，per_device_train_batch_size=4，GA 8，总 batch 是多少？")
    x = ActInputs(parts=parts, rule_act="batch_arithmetic")
    a, b = features(x), features(x)
    assert a == b and a
    assert all(0 <= k < N_BUCKETS for k in a)
    # The rules' verdict is a feature: another verdict gives another vector.
    assert features(x.model_copy(update={"rule_act": "explain"})) != a


def test_numbers_are_normalised():
    """A new GPU count or batch size reads like the ones seen in training."""
    one = features(ActInputs(parts=_prose("4 GPUs with batch 8, what is the global batch?"), rule_act="explain"))
    two = features(ActInputs(parts=_prose("16 GPUs with batch 2, what is the global batch?"), rule_act="explain"))
    assert one == two


def test_missing_artifact_falls_back_with_a_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="rag.act_model"):
        assert load_act_model(str(tmp_path / "missing.json")) is None
    assert "rules alone" in caplog.text


def test_broken_artifact_is_refused(tmp_path):
    data = json.loads(ARTIFACT.read_text(encoding="utf-8"))
    data["n_buckets"] = 7
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    assert load_act_model(str(bad)) is None
    with pytest.raises(ValueError):
        model_from_json(data)


def test_probabilities_sum_to_one():
    model = load_act_model()
    assert model is not None
    x = ActInputs(parts=_prose("Does gradient accumulation increase GPU memory?"), rule_act="yes_no")
    p = model.probabilities(x)
    assert set(p) == set(ACTS)
    assert abs(sum(p.values()) - 1.0) < 1e-5


def test_model_keeps_the_rules_verdict_below_its_threshold():
    model = load_act_model()
    assert model is not None
    x = ActInputs(parts=_prose("zero3 的原理是什么？"), rule_act="explain")
    p = model.probabilities(x)
    best = max(p, key=lambda c: p[c])
    expected = best if best != "explain" and p[best] >= model.override else "explain"
    assert model.decide(x) == expected
    strict = model.model_copy(update={"override": 1.01})
    assert strict.decide(x) == "explain"
    assert strict.decide(x.model_copy(update={"rule_act": "fit"})) == "fit"


def test_follow_up_keeps_the_previous_act():
    parts = _prose("那用 ZeRO-3 呢？")
    assert classify_act(parts, previous="fit", follow_up=True) == "fit"


def test_classify_act_always_returns_an_act():
    for text in ("", "?", "hello", "为什么", "OOM"):
        parts = split_message(text) if text else _prose("")
        assert classify_act(parts) in ACTS
        assert rule_act(parts) in ACTS


def test_retraining_reproduces_the_committed_predictions(tmp_path):
    """bench/train_act.py is deterministic: a fresh fit gives the committed model's verdict on every dev question."""
    train_act = pytest.importorskip("bench.train_act")
    # The files the artifact was trained on (dev files added later change nothing until it is retrained).
    files = json.loads(ARTIFACT.read_text(encoding="utf-8"))["meta"]["files"]
    items = train_act.load_questions(only=tuple(files))
    assert len(items) >= 450
    inputs = [train_act.act_inputs(q["question"]) for q in items]
    out = tmp_path / "act_model.json"
    train_act.train_and_write(items, inputs, out)
    fresh = load_act_model(str(out))
    shipped = load_act_model()
    assert fresh is not None and shipped is not None
    differ = [q["id"] for q, x in zip(items, inputs, strict=True) if fresh.decide(x) != shipped.decide(x)]
    assert not differ, f"retrained model disagrees with the committed one on {differ[:5]}"


def test_the_committed_model_was_trained_on_every_dev_file():
    """A dev file added without retraining would leave its labels out of the model: retrain with
    ``python -m bench.train_act --no-cv`` and commit rag/act_model.json."""
    files = set(json.loads(ARTIFACT.read_text(encoding="utf-8"))["meta"]["files"])
    on_disk = {p.name for p in (ARTIFACT.parent.parent / "tests" / "data" / "real_questions").glob("*.yaml")}
    assert {Path(f).name for f in files} == on_disk
