"""Query-embedding cost levers, timed against the unchanged model in the same process.

    PYTHONPATH=. .venv/bin/python bench/embedding_levers.py [--every 2] [--threads 1]

Queries: the dense query the retriever builds for every real dev question (``tests/data/real_questions``:
message → :func:`bench.eval_retrieval_real.assistant_query` → ``clean_query`` → ``expand_query`` →
``dense_query_text``), so lengths are those the model really sees. Prints their length in word pieces, then,
for each variant, the time of one query embedding (batch of 1, as an answer asks) and how close its vectors
are to the baseline's (cosine). Variants are timed interleaved, query by query, so machine load hits all
alike: the ratios are the figures to quote. Retrieval quality of a variant is measured separately with
``bench/eval_retrieval_real.py`` and the matching ``BATCHBOT_EMBED_*`` setting.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def pct(values: list[float], p: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, round(p / 100 * (len(v) - 1)))]


def dense_queries(every: int) -> list[str]:
    """The texts the embedding model sees for the dev questions (English-only model: CJK removed)."""
    from bench.eval_answers import load_dev_set
    from bench.eval_retrieval_real import assistant_query
    from rag.embedding import EmbeddingSettings
    from rag.glossary import expand_query
    from rag.query_clean import clean_query
    from rag.retrieval import dense_query_text

    multilingual = EmbeddingSettings.from_env().resolved_multilingual
    out = []
    for q in load_dev_set()[:: max(1, every)]:
        text = dense_query_text(expand_query(clean_query(assistant_query(q["question"]))), multilingual)
        if text:
            out.append(text)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--every", type=int, default=1, help="every N-th dev question only")
    ap.add_argument("--threads", type=int, default=1, help="torch threads for all variants but 'threads=2'")
    ap.add_argument("--more-threads", action="store_true", help="also time fp32 with one more torch thread")
    ap.add_argument("--short", action="store_true", help="baseline and int8 variants only")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    from rag.embedding import EmbeddingSettings, load_embedding, quantize_int8

    queries = dense_queries(args.every)
    emb = load_embedding(EmbeddingSettings.from_env(), batch_window_s=0)
    st = emb._model
    tok = st.tokenizer
    lengths = [len(tok(q, add_special_tokens=True)["input_ids"]) for q in queries]
    print(
        f"{len(queries)} dense queries; word pieces incl. [CLS]/[SEP]: p50 {pct(lengths, 50)}, p90 {pct(lengths, 90)}, "
        f"p99 {pct(lengths, 99)}, max {max(lengths)}; over 256 (the model's limit): "
        f"{sum(n > 256 for n in lengths)}, over 128: {sum(n > 128 for n in lengths)}, over 64: {sum(n > 64 for n in lengths)}"
    )
    q8 = quantize_int8(copy.deepcopy(st))
    q8c = quantize_int8(copy.deepcopy(st), per_channel=True)
    full = st.max_seq_length

    def run(model, max_len: int, threads: int) -> Callable[[str], np.ndarray]:
        def f(text: str) -> np.ndarray:
            model.max_seq_length = max_len
            torch.set_num_threads(threads)
            try:
                return model.encode([text], prompt_name="query", normalize_embeddings=True, convert_to_numpy=True)[0]
            finally:
                model.max_seq_length = full
                torch.set_num_threads(args.threads)

        return f

    variants: dict[str, Callable[[str], np.ndarray]] = {
        f"fp32, {full} tokens (baseline)": run(st, full, args.threads),
        "fp32, 128 tokens": run(st, 128, args.threads),
        "fp32, 64 tokens": run(st, 64, args.threads),
        f"int8 dynamic, {full} tokens": run(q8, full, args.threads),
        "int8 dynamic, 128 tokens": run(q8, 128, args.threads),
        f"int8 dynamic per channel, {full} tokens": run(q8c, full, args.threads),
    }
    if args.more_threads:
        variants[f"fp32, {full} tokens, threads={args.threads + 1}"] = run(st, full, args.threads + 1)
    if args.short:  # the baseline and the int8 variants only
        variants = {
            k: v for k, v in variants.items() if k.startswith(("fp32, 256", "int8 dynamic, 256", "int8 dynamic per"))
        }
    for q in queries[:10]:  # warm-up
        for f in variants.values():
            f(q)
    times: dict[str, list[float]] = {k: [] for k in variants}
    vecs: dict[str, list[np.ndarray]] = {k: [] for k in variants}
    for q in queries:
        for name, f in variants.items():
            t0 = time.perf_counter()
            v = f(q)
            times[name].append((time.perf_counter() - t0) * 1000)
            vecs[name].append(v)
    base = next(iter(variants))
    b = np.stack(vecs[base])
    load = os.getloadavg()
    print(f"torch threads {args.threads}; cores {os.cpu_count()}; load average at end {load[0]:.2f} {load[1]:.2f}\n")
    print("| variant | p50 ms | p95 ms | mean ms | mean vs baseline | cosine to baseline: min / mean |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in variants:
        t = times[name]
        cos = np.sum(np.stack(vecs[name]) * b, axis=1)
        print(
            f"| {name} | {pct(t, 50):.1f} | {pct(t, 95):.1f} | {statistics.fmean(t):.1f} | "
            f"{statistics.fmean(t) / statistics.fmean(times[base]):.2f}x | {cos.min():.4f} / {cos.mean():.4f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
