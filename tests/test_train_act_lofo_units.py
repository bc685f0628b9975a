"""bench/train_act.py leave-one-file-out CV: each dev file (one mining batch) is predicted by a model fitted
without it — the honest figure for messages from sources nobody read."""

from __future__ import annotations

from bench import train_act
from rag.act_model import ActInputs
from rag.parts import Part


def _inputs(text: str, rule: str) -> ActInputs:
    return ActInputs(parts=[Part(kind="prose", text=text, start=0, end=len(text))], rule_act=rule)


def test_file_folds_put_each_file_in_a_fold_of_its_own():
    items = [{"_file": f} for f in ("b.yaml", "a.yaml", "b.yaml", "c.yaml", "a.yaml")]
    folds = train_act.file_folds(items)
    assert folds == [1, 0, 1, 2, 0]


def test_a_held_out_file_is_never_learned_from(monkeypatch):
    """An act that only one file holds cannot be predicted for that file by the model alone: it never saw it."""
    monkeypatch.setattr(train_act, "C_VALUES", (1.0,))
    items, inputs = [], []
    for i in range(6):
        items.append({"_file": "only-configure.yaml", "act": "configure", "lang": "en", "source": f"u/c{i}"})
        inputs.append(_inputs(f"how should I set the zzq knob number {i}?", "explain"))
    for name, act, text in (
        ("why.yaml", "diagnose", "why does it crash"),
        ("fit.yaml", "fit", "will it fit in memory"),
    ):
        for i in range(6):
            items.append({"_file": name, "act": act, "lang": "en", "source": f"u/{name}{i}"})
            inputs.append(_inputs(f"{text} {i}?", "explain"))
    preds = train_act.cross_predict(items, inputs, train_act.file_folds(items))
    alone = preds["model C=1.0 alone"]
    assert preds["rules"] == ["explain"] * len(items)
    assert all(p != "configure" for p, q in zip(alone, items, strict=True) if q["_file"] == "only-configure.yaml")
    # with 5-fold grouped by thread instead, the same act is in training for every fold: it is learned
    pooled = train_act.cross_predict(items, inputs)["model C=1.0 alone"]
    assert any(p == "configure" for p, q in zip(pooled, items, strict=True) if q["_file"] == "only-configure.yaml")
