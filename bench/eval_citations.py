"""How precisely the answers cite cards (issue #10 point 6 "only relevant cards, briefly"; issue #11 hit@3).

hit@1 / hit@3 only ask whether an expected card is cited; they do not see the cards cited beside it. This reads the
rows ``bench/eval_answers.py --json`` writes (one file, or two to compare before → after) and prints, per language
and for the ``ho*`` files (mined blind by others) apart from the rest:

  cards/answer   cards cited per answer (questions with expected cards)
  precision      share of the cited cards that are expected
  hit@1 / hit@3  as in eval_answers

and the cards most often cited in the first three where they are not expected (``--top``), with how often they are
cited there where they are expected. Fewer cards is no gain when hit@3 drops: read both.

    .venv/bin/python -m bench.eval_citations /tmp/x.json                 # one run
    .venv/bin/python -m bench.eval_citations /tmp/before.json /tmp/after.json --top 15
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from bench.eval_answers import DEV_DIR, load_dev_set


def _group_of(file_name: str) -> str:
    return "ho" if file_name.startswith("ho") else "rest"


def citation_summary(rows: list[dict[str, Any]], files: dict[str, str]) -> dict[str, dict[str, float]]:
    """Per language, and per language × (ho / rest): the figures of the module docstring over the rows that have
    expected cards. ``files`` maps a question id to its file's name (rows of unknown ids count in no file group)."""
    out: dict[str, dict[str, float]] = {}
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if not r.get("expected_cards"):
            continue
        groups.setdefault(r["lang"], []).append(r)
        groups.setdefault("all", []).append(r)
        if r["id"] in files:
            groups.setdefault(f"{r['lang']}/{_group_of(files[r['id']])}", []).append(r)
    for name in sorted(groups, key=lambda g: (g.count("/"), g)):
        sel = groups[name]
        cited = sum(len(r["cited"]) for r in sel)
        good = sum(sum(c in r["expected_cards"] for c in r["cited"]) for r in sel)
        out[name] = {
            "n": len(sel),
            "cards_per_answer": cited / len(sel),
            "precision": good / cited if cited else 0.0,
            "hit1": sum(bool(r["cited"]) and r["cited"][0] in r["expected_cards"] for r in sel) / len(sel),
            "hit3": sum(any(c in r["expected_cards"] for c in r["cited"][:3]) for r in sel) / len(sel),
        }
    return out


def unexpected_top3(rows: list[dict[str, Any]]) -> tuple[Counter[str], Counter[str]]:
    """How often each card is in the first three cited where it is not expected, and where it is."""
    bad: Counter[str] = Counter()
    good: Counter[str] = Counter()
    for r in rows:
        if not r.get("expected_cards"):
            continue
        for c in r["cited"][:3]:
            (good if c in r["expected_cards"] else bad)[c] += 1
    return bad, good


_COLS = ("n", "cards_per_answer", "precision", "hit1", "hit3")


def _fmt(col: str, value: float) -> str:
    return f"{value:.0f}" if col == "n" else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="eval_answers --json files: one, or two (before, after)")
    ap.add_argument("--top", type=int, default=12, help="list this many cards cited in the top three unexpected")
    ap.add_argument("--dir", default=str(DEV_DIR))
    args = ap.parse_args(argv)
    if len(args.runs) > 2:
        ap.error("one or two runs")
    files = {q["id"]: q["_file"] for q in load_dev_set(Path(args.dir))}
    runs = [json.loads(Path(p).read_text(encoding="utf-8"))["rows"] for p in args.runs]
    summaries = [citation_summary(rows, files) for rows in runs]
    print("| group | " + " | ".join(_COLS) + " |")
    print("|---|" + "---:|" * len(_COLS))
    for name, first in summaries[0].items():
        cells = []
        for col in _COLS:
            cell = _fmt(col, first[col])
            if len(summaries) == 2 and name in summaries[1]:
                cell += f" → {_fmt(col, summaries[1][name][col])}"
            cells.append(cell)
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.top:
        bad, good = unexpected_top3(runs[-1])
        print(f"\ncited in the first three, unexpected / expected ({'after' if len(runs) == 2 else 'this run'}):")
        for card, n in bad.most_common(args.top):
            before = ""
            if len(runs) == 2:
                b0, g0 = unexpected_top3(runs[0])
                before = f"   (before {b0[card]}/{g0[card]})"
            print(f"  {card}: {n}/{good[card]}{before}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
