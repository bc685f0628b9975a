"""The previous answer engine on today's real-question dev set, for the "before" row of the README table.

The engine before the typed pipeline (commit f918d77) had no act or setup to score, so this prints what both can be
scored on: first-screen memory figures for a setup the labels say is not stated (a GiB figure before the first
section heading), corrections for beliefs nobody held, and card hit@1 / hit@3.

    git worktree add /tmp/batchbot-f918d77 f918d77
    .venv/bin/python bench/eval_answers_baseline.py /tmp/batchbot-f918d77
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
_GIB = re.compile(r"\d+(?:\.\d+)?\s*GiB")


def main(old_checkout: str) -> int:
    from eval_answers import enough_stated, load_dev_set  # today's dev set and label rule

    questions = load_dev_set()
    sys.path.insert(0, old_checkout)  # the old engine's rag/ and calculators/ win from here on
    for name in [m for m in sys.modules if m == "rag" or m.startswith(("rag.", "calculators"))]:
        del sys.modules[name]
    from rag import Assistant

    bot = Assistant()
    rows = []
    for q in questions:
        a = bot.ask(q["question"])
        cited, expected = [s.card_id for s in a.sources], q.get("cards") or []
        rows.append(
            {
                "lang": q["lang"],
                "has": bool(expected),
                "headline": bool(_GIB.search(a.text.split("####")[0])) and not enough_stated(q.get("stated") or {}),
                "strawman": bool(a.corrections) and (q.get("misconception") or "none") == "none",
                "hit1": bool(expected) and bool(cited) and cited[0] in expected,
                "hit3": bool(expected) and any(c in expected for c in cited[:3]),
            }
        )
    print("| lang | n | assumed headlines | strawman | hit1 | hit3 |\n|---|---:|---:|---:|---:|---:|")
    for lang in ("zh", "en", "all"):
        sel = [r for r in rows if lang == "all" or r["lang"] == lang]
        has = [r for r in sel if r["has"]] or [{"hit1": 0, "hit3": 0}]
        print(
            f"| {lang} | {len(sel)} | {sum(r['headline'] for r in sel)} | {sum(r['strawman'] for r in sel)} | "
            f"{sum(r['hit1'] for r in has) / len(has):.3f} | {sum(r['hit3'] for r in has) / len(has):.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/batchbot-f918d77"))
