"""Whole-answer cost of an embedding setting: ``Assistant.ask`` with fp32 vs int8 embeddings (or another setting B), in one process.

    PYTHONPATH=. .venv/bin/python bench/ask_ab.py [--every 2] [--query-max-tokens N]

Two Assistants share the cards and differ only in their embedding settings (``B`` = ``--quantize``, and
``--query-max-tokens`` if given); questions are the real dev set (``tests/data/real_questions``), asked
alternately A, B question by question so machine load hits both alike. Query embeddings run on the calling
thread (``BATCHBOT_EMBED_BATCH_WINDOW_MS=0``): this measures CPU cost per answer, not the server's batching.
Also prints how many answers came out word for word the same.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("BATCHBOT_EMBED_BATCH_WINDOW_MS", "0")


def pct(values: list[float], p: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, round(p / 100 * (len(v) - 1)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--every", type=int, default=1, help="every N-th dev question only")
    ap.add_argument("--quantize", default="int8-per-channel", help="B's quantize mode (rag.embedding.QUANTIZE_MODES)")
    ap.add_argument("--query-max-tokens", type=int, default=None, help="also limit B's queries to N word pieces")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from bench.eval_answers import load_dev_set
    from rag import Assistant
    from rag.cards import load_cards
    from rag.embedding import EmbeddingSettings
    from rag.retrieval import Retriever

    questions = [q["question"] for q in load_dev_set()][:: max(1, args.every)]
    cards = load_cards()
    a_settings = EmbeddingSettings.from_env()
    b_settings = a_settings.model_copy(update={"quantize": args.quantize, "query_max_tokens": args.query_max_tokens})
    bots = {
        "A": Assistant(cards, retriever=Retriever(cards, settings=a_settings, progress=False)),
        "B": Assistant(cards, retriever=Retriever(cards, settings=b_settings, progress=False)),
    }
    for q in questions[:10]:  # warm-up
        for bot in bots.values():
            bot.ask(q)
    ms: dict[str, list[float]] = {k: [] for k in bots}
    same = 0
    for q in questions:
        texts = {}
        for name, bot in bots.items():
            t0 = time.perf_counter()
            texts[name] = bot.ask(q).text
            ms[name].append((time.perf_counter() - t0) * 1000)
        same += texts["A"] == texts["B"]
    load = os.getloadavg()
    b_label = args.quantize + (f", query ≤ {args.query_max_tokens} pieces" if args.query_max_tokens else "")
    print(f"{len(questions)} dev questions; 1 torch thread; load average at end {load[0]:.2f} {load[1]:.2f}\n")
    print("| embedding | p50 ms | p95 ms | mean ms | answers/s (1 thread) | mean vs A |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, label in (("A", "A: fp32 (as shipped)"), ("B", f"B: {b_label}")):
        m = statistics.fmean(ms[name])
        print(
            f"| {label} | {pct(ms[name], 50):.1f} | {pct(ms[name], 95):.1f} | {m:.1f} | {1000 / m:.1f} "
            f"| {m / statistics.fmean(ms['A']):.2f}× |"
        )
    print(f"\nanswers word for word the same: {same} of {len(questions)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
