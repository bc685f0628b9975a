"""Old code against new on the same questions, interleaved: ``Assistant.ask`` in two checkouts at once.

    git worktree add ../batchbot-old <old commit>        # or: git archive <old commit> | tar -x -C ../batchbot-old
    PYTHONPATH=. .venv/bin/python bench/ask_trees.py --old ../batchbot-old [--every 2]

A speed change to the pipeline cannot run old and new in one Python process (both are the package ``rag``), so
each checkout gets its own worker process, warmed up on the same questions, and the driver asks the dev questions
(``tests/data/real_questions`` of *this* checkout) alternately — old first on even questions, new first on odd —
so the machine's load (shared, moving) hits both alike. Each worker times ``ask`` and, inside it, the query
embedding (the model's ``_embed_queries``; queries embedded on the calling thread, one torch thread), and returns
a hash of the whole answer, so the run also says how many answers were byte-identical.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: Runs inside each checkout: one JSON line per question index read from stdin.
WORKER = r"""
import hashlib, json, os, sys, time
import torch
torch.set_num_threads(1)
from rag import Assistant
from rag.embedding import _batching_class

questions = json.loads(sys.stdin.readline())
cls = _batching_class()
plain = cls._embed_queries
spent = [0.0]

def timed(self, texts):
    t0 = time.perf_counter()
    try:
        return plain(self, texts)
    finally:
        spent[0] += time.perf_counter() - t0

cls._embed_queries = timed
bot = Assistant()
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    i = int(line)
    spent[0] = 0.0
    t0 = time.perf_counter()
    answer = bot.ask(questions[i])
    ms = (time.perf_counter() - t0) * 1000
    digest = hashlib.sha256(answer.model_dump_json().encode()).hexdigest()
    print(json.dumps({"ms": ms, "embed_ms": spent[0] * 1000, "hash": digest}), flush=True)
"""


def start_worker(tree: Path, questions: list[str]) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(tree), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env["BATCHBOT_EMBED_BATCH_WINDOW_MS"] = "0"
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER],
        cwd=tree,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(questions) + "\n")
    proc.stdin.flush()
    while True:  # skip whatever the loaders print before the worker is ready
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker in {tree} exited before it was ready")
        if line.startswith('{"ready"'):
            return proc


def ask(proc: subprocess.Popen[str], i: int) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(f"{i}\n")
    proc.stdin.flush()
    result: dict[str, Any] = json.loads(proc.stdout.readline())
    return result


def pct(values: list[float], p: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, round(p / 100 * (len(v) - 1)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", type=Path, required=True, help="a checkout of the old code")
    ap.add_argument("--new", type=Path, default=ROOT, help="a checkout of the new code (default: this one)")
    ap.add_argument("--every", type=int, default=1, help="every N-th dev question only")
    ap.add_argument("--warmup", type=int, default=10, help="questions each worker answers before timing")
    args = ap.parse_args(argv)

    from bench.eval_answers import load_dev_set

    questions = [q["question"] for q in load_dev_set()]
    order = list(range(0, len(questions), max(1, args.every)))
    workers = {"old": start_worker(args.old.resolve(), questions), "new": start_worker(args.new.resolve(), questions)}
    for i in range(min(args.warmup, len(questions))):  # warm-up on questions spread over the set
        for proc in workers.values():
            ask(proc, (i * 37) % len(questions))
    loads = [os.getloadavg()[0]]
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    for n, i in enumerate(order):
        for name in ("old", "new") if n % 2 == 0 else ("new", "old"):
            runs[name].append(ask(workers[name], i))
        if n % 50 == 0:
            loads.append(os.getloadavg()[0])
    loads.append(os.getloadavg()[0])
    for proc in workers.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)

    same = sum(a["hash"] == b["hash"] for a, b in zip(runs["old"], runs["new"], strict=True))
    old_mean = statistics.fmean(r["ms"] for r in runs["old"])
    print(
        f"{len(order)} dev questions, alternating old/new; 1 torch thread; load average "
        f"{min(loads):.2f}–{max(loads):.2f}\n"
    )
    print(
        "| code | mean ms | p50 ms | p95 ms | answers/s (1 thread) | mean vs old | embedding ms (mean) | rest ms (mean) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in ("old", "new"):
        ms = [r["ms"] for r in runs[name]]
        emb = statistics.fmean(r["embed_ms"] for r in runs[name])
        mean = statistics.fmean(ms)
        print(
            f"| {name} | {mean:.1f} | {pct(ms, 50):.1f} | {pct(ms, 95):.1f} | {1000 / mean:.1f} | "
            f"{mean / old_mean:.2f}× | {emb:.1f} ({emb / mean:.0%}) | {mean - emb:.1f} |"
        )
    rest = {k: statistics.fmean(r["ms"] - r["embed_ms"] for r in v) for k, v in runs.items()}
    print(f"\nnon-embedding time, new vs old: {rest['new'] / rest['old']:.2f}×")
    print(f"answers byte-identical (whole Answer JSON): {same} of {len(order)}")
    return 0 if same == len(order) else 1


if __name__ == "__main__":
    raise SystemExit(main())
