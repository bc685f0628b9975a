"""Warm latency of Assistant.ask and of retrieval, against a plain llama-index baseline, in one process.

    .venv/bin/python bench/latency.py [--repeat 3]

Questions: tests/data/labelled_questions.yaml. Baseline: ``VectorStoreIndex(nodes,
embed_model=<the same model object>).as_retriever(similarity_top_k=3)`` with one node per card
(English and Chinese text of the card), no BM25, no glossary. Ours and the baseline are timed
interleaved, question by question, so machine load hits both alike: the ratios are the robust
numbers, the absolute milliseconds depend on the load (printed with ``os.getloadavg()``).

ask() is broken down by wrapping the retriever's methods: query embedding + dense scoring,
BM25, the rest of retrieval (glossary expansion, fusion), and everything outside retrieval
(slot/intent parsing, calculators, composition).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def pct(values: list[float], p: float) -> float:
    v = sorted(values)
    if len(v) == 1:
        return v[0]
    return statistics.quantiles(v, n=100, method="inclusive")[int(p) - 1]


class Timer:
    """Wraps a bound method and accumulates the seconds spent in it."""

    def __init__(self, obj: Any, name: str) -> None:
        self.total = 0.0
        self.calls = 0
        fn: Callable[..., Any] = getattr(obj, name)

        def wrapped(*a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                self.total += time.perf_counter() - t0
                self.calls += 1

        setattr(obj, name, wrapped)

    def take(self) -> float:
        t, self.total = self.total, 0.0
        return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="passes over the question set")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's choice)")
    args = ap.parse_args()

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    import yaml
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode

    from rag import Assistant

    questions = [
        q["question"]
        for q in yaml.safe_load((ROOT / "tests/data/labelled_questions.yaml").read_text(encoding="utf-8"))["questions"]
    ]
    t0 = time.perf_counter()
    bot = Assistant()
    build_s = time.perf_counter() - t0
    r = bot.retriever
    nodes = [TextNode(id_=c.id, text=c.text("en") + "\n" + c.text("zh")) for c in bot.cards]
    t0 = time.perf_counter()
    baseline = VectorStoreIndex(nodes, embed_model=r.embed_model, show_progress=False).as_retriever(similarity_top_k=3)
    baseline_build_s = time.perf_counter() - t0

    for q in questions:  # warm-up: first calls allocate, tokenizers cache
        bot.ask(q)
        baseline.retrieve(q)

    dense = Timer(r, "_dense_card_scores")
    bm25 = Timer(r, "_bm25_card_scores")
    retr = Timer(r, "retrieve")
    ask_ms, ask_retr_ms, ask_dense_ms, ask_bm25_ms = [], [], [], []
    ret_ms, base_ms = [], []
    for _ in range(args.repeat):
        for q in questions:
            t0 = time.perf_counter()
            bot.retrieve(q, k=3)
            ret_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            baseline.retrieve(q)
            base_ms.append((time.perf_counter() - t0) * 1000)
            retr.take(), dense.take(), bm25.take()
            t0 = time.perf_counter()
            bot.ask(q)
            ask_ms.append((time.perf_counter() - t0) * 1000)
            ask_retr_ms.append(retr.take() * 1000)
            ask_dense_ms.append(dense.take() * 1000)
            ask_bm25_ms.append(bm25.take() * 1000)

    rest = [a - b for a, b in zip(ask_ms, ask_retr_ms, strict=True)]
    retr_other = [a - b - c for a, b, c in zip(ask_retr_ms, ask_dense_ms, ask_bm25_ms, strict=True)]
    mean = statistics.fmean
    load = os.getloadavg()
    print(
        f"questions: {len(questions)} × {args.repeat} passes; cores: {os.cpu_count()}; torch threads: "
        f"{torch.get_num_threads()}; load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(f"Assistant() build {build_s:.1f} s (warm embedding cache); baseline index build {baseline_build_s:.1f} s\n")
    print("| what | p50 ms | p95 ms | mean ms |")
    print("|---|---:|---:|---:|")
    for name, v in [
        ("Assistant.ask (full answer)", ask_ms),
        ("Assistant.retrieve (hybrid, k=3)", ret_ms),
        ("baseline VectorStoreIndex retriever (k=3)", base_ms),
    ]:
        print(f"| {name} | {pct(v, 50):.1f} | {pct(v, 95):.1f} | {mean(v):.1f} |")
    print("\n| ratio (same process, interleaved) | p50 | p95 | mean |")
    print("|---|---:|---:|---:|")
    print(
        f"| retrieve / baseline | {pct(ret_ms, 50) / pct(base_ms, 50):.2f} | {pct(ret_ms, 95) / pct(base_ms, 95):.2f} "
        f"| {mean(ret_ms) / mean(base_ms):.2f} |"
    )
    print(
        f"| ask / baseline retrieval | {pct(ask_ms, 50) / pct(base_ms, 50):.2f} | "
        f"{pct(ask_ms, 95) / pct(base_ms, 95):.2f} | {mean(ask_ms) / mean(base_ms):.2f} |"
    )
    print("\nWhere ask() time goes (mean per question):\n")
    print("| part | mean ms | share |")
    print("|---|---:|---:|")
    total = mean(ask_ms)
    for name, v in [
        ("query embedding + dense scoring", ask_dense_ms),
        ("BM25 (llama-index BM25Retriever)", ask_bm25_ms),
        ("rest of retrieval (glossary expansion, RRF fusion)", retr_other),
        ("outside retrieval (slots, intents, calculators, composition)", rest),
    ]:
        print(f"| {name} | {mean(v):.1f} | {mean(v) / total:.0%} |")
    p95 = pct(ask_ms, 95)
    ratio = pct(ret_ms, 50) / pct(base_ms, 50)
    print(
        f"\ntargets: ask p95 < 50 ms: {'met' if p95 < 50 else 'NOT met'} ({p95:.1f} ms); "
        f"retrieval <= 1.5x baseline (p50): {'met' if ratio <= 1.5 else 'NOT met'} ({ratio:.2f}x)"
    )


if __name__ == "__main__":
    main()
