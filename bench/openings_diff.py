"""Old vs new openings on the dev set, from two ``bench/eval_answers.py --json`` runs (one per checkout).

Issue #10 ("the first sentence answers the act"): a change to how answers open is judged by reading the openings it
changed side by side. Each run's JSON holds every question's first screen; this prints how many first sentences
changed (per language, and among questions whose act the engine got right), then the changed pairs.

    # in each checkout (old, then new):
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=. .venv/bin/python -m bench.eval_answers --json old.json
    .venv/bin/python -m bench.openings_diff old.json new.json              # counts and every changed pair
    .venv/bin/python -m bench.openings_diff old.json new.json --sample 20  # 20 changed pairs drawn at random
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path
from typing import Any

# The first sentence: up to the first sentence end outside a bold span's start, at most 240 characters.
_END = re.compile(r"(?<=[。！？!?])|(?<=[.:：])\s|\n")


def first_sentence(screen: str, limit: int = 240) -> str:
    """The opening sentence of a first screen, without Markdown bold marks."""
    text = screen.strip().replace("**", "")
    head = _END.split(text, maxsplit=1)[0].strip()
    return head[:limit] + ("…" if len(head) > limit else "")


def load_rows(path: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = {r["id"]: r for r in data["rows"]}
    if any("first_screen" not in r for r in rows.values()):
        raise SystemExit(f"{path}: rows without 'first_screen' (written by an older bench/eval_answers.py)")
    return rows


def changed(old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Questions in both runs whose first sentence differs, with both sentences and the acts."""
    out = []
    for qid in sorted(old.keys() & new.keys()):
        a, b = old[qid], new[qid]
        fa, fb = first_sentence(a["first_screen"]), first_sentence(b["first_screen"])
        if fa != fb:
            out.append(
                {
                    "id": qid,
                    "lang": b["lang"],
                    "act": b["act"],
                    "old_act": a["got_act"],
                    "new_act": b["got_act"],
                    "old": fa,
                    "new": fb,
                    "old_cards": a.get("cited", [])[:3],
                    "new_cards": b.get("cited", [])[:3],
                    "expected_cards": b.get("expected_cards", []),
                }
            )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--sample", type=int, default=0, help="print this many changed pairs drawn at random (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    old, new = load_rows(args.old), load_rows(args.new)
    diffs = changed(old, new)
    for lang in ("zh", "en"):
        total = sum(1 for r in new.values() if r["lang"] == lang)
        mine = [d for d in diffs if d["lang"] == lang]
        right = [d for d in mine if d["new_act"] == d["act"]]
        print(f"{lang}: {len(mine)} of {total} openings changed ({len(right)} where the act is right)")
    shown = random.Random(args.seed).sample(diffs, min(args.sample, len(diffs))) if args.sample else diffs
    for d in shown:
        print(f"\n[{d['id']}] act {d['act']} (old {d['old_act']}, new {d['new_act']}); expected {d['expected_cards']}")
        print(f"  old {d['old_cards']}: {d['old']}")
        print(f"  new {d['new_cards']}: {d['new']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
