"""bench/act_agreement.py: the rates it reports, and that its second labels belong to the dev set."""

from __future__ import annotations

from pathlib import Path

import yaml

from bench.act_agreement import DEFAULT, agreement
from bench.eval_answers import load_dev_set
from rag.acts import ACTS


def test_rates_on_a_small_example() -> None:
    dev = {"a": {"act": "fit", "lang": "zh"}, "b": {"act": "diagnose", "lang": "en"}}
    second = [{"id": "a", "act": "diagnose", "second": "fit"}, {"id": "b", "act": "diagnose", "second": None}]
    r = agreement(second, dev, {"a": "fit", "b": "explain"})
    assert r["all"]["second_vs_dev"] == 0.5 and r["all"]["dev_in_second_top2"] == 1.0
    assert r["all"]["engine_vs_dev"] == 0.5 and r["all"]["engine_vs_second"] == 0.0
    assert r["all"]["engine_vs_either"] == 0.5
    assert r["zh"]["n"] == 1 and r["disagreements"] == [("fit→diagnose", 1)]


def test_second_labels_are_dev_questions_with_valid_acts() -> None:
    labels = yaml.safe_load(Path(DEFAULT).read_text(encoding="utf-8"))["labels"]
    dev = {q["id"] for q in load_dev_set()}
    assert len(labels) >= 100 and {x["id"] for x in labels} <= dev
    assert all(x["act"] in ACTS and x.get("second") in (*ACTS, None) for x in labels)
