"""Are the answers still the same? Records every dev answer, whole, and compares a later run with the record.

    PYTHONPATH=. .venv/bin/python bench/answers_identical.py --record before.json      # on the old code
    PYTHONPATH=. .venv/bin/python bench/answers_identical.py --compare before.json     # on the new code

A speed change must not change what the assistant says. Each dev question (``tests/data/real_questions``, the
files present in this checkout) is asked once, as a first message, and its whole ``Answer`` is kept as JSON:
text, act, language, setup with provenance, parts, sources, tool calls with their arguments and results,
corrections, assumptions and the history passed back. ``--compare`` asks the same questions again and lists
every question whose answer differs, field by field; exit status 1 if any does (or if the question set changed).
Queries are embedded on the calling thread (``BATCHBOT_EMBED_BATCH_WINDOW_MS=0``), as in ``bench/profile_ask.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("BATCHBOT_EMBED_BATCH_WINDOW_MS", "0")


def record_answers(every: int = 1) -> list[dict[str, Any]]:
    """Every dev question with its whole answer (``Answer.model_dump(mode="json")``)."""
    import torch

    torch.set_num_threads(1)
    from bench.eval_answers import load_dev_set
    from rag import Assistant

    bot = Assistant()
    out = []
    for q in load_dev_set()[:: max(1, every)]:
        answer = bot.ask(q["question"])
        out.append({"file": q["_file"], "question": q["question"], "answer": answer.model_dump(mode="json")})
    return out


def differences(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[str]:
    """One line per question whose answer changed (naming the fields that did), or per question added/removed."""
    lines: list[str] = []
    if [b["question"] for b in before] != [a["question"] for a in after]:
        lines.append(f"question set differs: {len(before)} recorded, {len(after)} now")
        return lines
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        if b["answer"] != a["answer"]:
            fields = sorted(
                k for k in b["answer"].keys() | a["answer"].keys() if b["answer"].get(k) != a["answer"].get(k)
            )
            lines.append(f"#{i} {b['file']}: {', '.join(fields)} | {b['question'][:80]!r}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", type=Path, help="write every dev answer here (JSON)")
    mode.add_argument("--compare", type=Path, help="ask again and compare with this record")
    ap.add_argument("--every", type=int, default=1, help="every N-th dev question only (a quick check)")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    now = record_answers(args.every)
    took = time.perf_counter() - t0
    load = os.getloadavg()[0]
    if args.record:
        args.record.write_text(json.dumps(now, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"recorded {len(now)} answers to {args.record} in {took:.0f} s (load average {load:.2f})")
        return 0
    before = json.loads(args.compare.read_text(encoding="utf-8"))
    diff = differences(before, now)
    for line in diff:
        print(line)
    same = len(now) - len(diff)
    print(f"{same} of {len(now)} answers identical to {args.compare} ({took:.0f} s, load average {load:.2f})")
    return 1 if diff else 0


if __name__ == "__main__":
    raise SystemExit(main())
