"""Embedding throughput of the default model on CPU: passages (and cards) per second.

    .venv/bin/python bench/embedding_throughput.py [--repeat 3] [--device cpu]

The passages are exactly what the index embeds (``rag.retrieval.dense_passages`` of every card,
in the languages the model reads), through the same llama-index ``HuggingFaceEmbedding``
call the Retriever uses (``get_text_embedding_batch``). Best of ``--repeat`` runs after a
warm-up. Also times single query embeddings (what each question costs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def measure(device: str, repeat: int) -> dict:
    from llama_index.core.schema import MetadataMode

    from rag.cards import load_cards
    from rag.embedding import EmbeddingSettings, load_embedding
    from rag.retrieval import _node, dense_passages

    settings = EmbeddingSettings(device=device)
    t0 = time.perf_counter()
    model = load_embedding(settings)
    load_s = time.perf_counter() - t0
    cards = load_cards()
    langs = ("en", "zh") if settings.resolved_multilingual else ("en",)
    texts = [
        _node(c, v, t).get_content(metadata_mode=MetadataMode.EMBED) for c in cards for v, t in dense_passages(c, langs)
    ]
    model.get_text_embedding_batch(texts[:32])  # warm-up
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        model.get_text_embedding_batch(texts)
        runs.append(time.perf_counter() - t0)
    best = min(runs)
    queries = [
        "does gradient accumulation increase memory",
        "how much memory for a 7B LoRA on a 3090",
        "ZeRO-3 offload per GPU memory",
        "effective batch with 8 GPUs micro 2 GA 4",
    ] * 10
    model.get_query_embedding(queries[0])
    q_ms = []
    for q in queries:
        t0 = time.perf_counter()
        model.get_query_embedding(q)
        q_ms.append((time.perf_counter() - t0) * 1000)
    return {
        "device": device,
        "model": settings.model,
        "load_s": load_s,
        "passages": len(texts),
        "cards": len(cards),
        "best_s": best,
        "passages_per_s": len(texts) / best,
        "cards_per_s": len(cards) / best,
        "query_ms_median": statistics.median(q_ms),
    }


def table(rows: list[dict]) -> str:
    out = [
        "| device | passages | cards | best of runs s | passages/s | cards/s | one query ms (median) | model load s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['device']} | {r['passages']} | {r['cards']} | {r['best_s']:.2f} | {r['passages_per_s']:.0f} | "
            f"{r['cards_per_s']:.1f} | {r['query_ms_median']:.1f} | {r['load_s']:.1f} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    import torch

    r = measure(args.device, args.repeat)
    load = os.getloadavg()
    print(
        f"model: {r['model']}; torch threads: {torch.get_num_threads()}; cores: {os.cpu_count()}; "
        f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n"
    )
    print(table([r]))


if __name__ == "__main__":
    main()
