"""bench/eval_citations.py: citation precision beside hit@k, per language and for the ho* files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.eval_citations import citation_summary, main, unexpected_top3


def _row(qid: str, lang: str, cited: list[str], expected: list[str]) -> dict[str, object]:
    return {"id": qid, "lang": lang, "cited": cited, "expected_cards": expected}


ROWS = [
    _row("zh-a", "zh", ["x", "broad", "myth"], ["x"]),  # hit@1, 1 of 3 expected
    _row("zh-b", "zh", ["broad", "y"], ["y", "z"]),  # hit@3 only, 1 of 2
    _row("en-c", "en", ["broad"], ["w"]),  # miss
    _row("en-d", "en", ["q"], []),  # no expected card: not counted
]
FILES = {"zh-a": "ho1-zh.yaml", "zh-b": "zh.yaml", "en-c": "en.yaml", "en-d": "en.yaml"}


def test_precision_counts_every_cited_card_and_skips_unlabelled_rows() -> None:
    s = citation_summary(ROWS, FILES)
    assert s["zh"]["n"] == 2
    assert s["zh"]["cards_per_answer"] == pytest.approx(2.5)
    assert s["zh"]["precision"] == pytest.approx(2 / 5)
    assert s["zh"]["hit1"] == pytest.approx(0.5) and s["zh"]["hit3"] == pytest.approx(1.0)
    assert s["en"]["n"] == 1 and s["en"]["precision"] == 0.0 and s["en"]["hit3"] == 0.0
    assert s["all"]["n"] == 3


def test_ho_files_are_reported_apart() -> None:
    s = citation_summary(ROWS, FILES)
    assert s["zh/ho"]["n"] == 1 and s["zh/ho"]["precision"] == pytest.approx(1 / 3)
    assert s["zh/rest"]["n"] == 1 and s["zh/rest"]["hit1"] == 0.0


def test_unexpected_top3_counts_both_sides() -> None:
    bad, good = unexpected_top3(ROWS)
    assert bad["broad"] == 3 and good["broad"] == 0
    assert good["x"] == 1 and good["y"] == 1 and bad["myth"] == 1


def test_main_compares_two_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = tmp_path / "before.json"
    after = tmp_path / "after.json"
    before.write_text(json.dumps({"rows": ROWS}))
    after.write_text(json.dumps({"rows": [_row("zh-a", "zh", ["x"], ["x"]), *ROWS[1:]]}))
    assert main([str(before), str(after), "--top", "3", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| zh | 2 → 2 | 2.500 → 1.500 | 0.400 → 0.667 |" in out
    assert "broad: 2/0   (before 3/0)" in out
