"""Gain of the query micro-batcher at 1, 8 and 32 concurrent queries (CPU or CUDA).

    .venv/bin/python bench/embedding_batch.py [--device cpu|cuda] [--per-thread 8] [--threads 1]

Two loads of the bundled model in one process, timed alternately per level so machine load hits both:

* ``serialised``: no batcher; callers take one lock around ``get_query_embedding`` (what the server
  did before: ui/chat.py held one lock per answer because the model is shared);
* ``batched``: ``rag.embedding.load_embedding`` with its default window; callers call concurrently.

At each level N threads start together and each embeds ``--per-thread`` different queries.
Printed: queries/s, p50/p95 latency per query, mean batch size, and batched/serialised throughput.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout, not another one installed in the venv
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

QUERIES = [
    "does gradient accumulation increase memory",
    "梯度累积会增加显存吗 per_device_train_batch_size 4",
    "how much memory for a 7B LoRA on a 3090",
    "ZeRO-3 offload per GPU memory for llama-2-13b",
    "effective batch with 8 GPUs micro 2 GA 4",
    "CUDA out of memory at step 0 with deepspeed zero2",
    "bf16 vs fp16 on A100 mixed precision",
    "FSDP full shard memory, activation checkpointing on",
]


def run_level(embed: Callable[[str], Any], threads: int, per_thread: int) -> dict[str, float]:
    start = threading.Barrier(threads)
    lat: list[float] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        start.wait()
        for j in range(per_thread):
            q = f"{QUERIES[(i + j) % len(QUERIES)]} ({i}-{j})"
            t0 = time.perf_counter()
            embed(q)
            with lock:
                lat.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(worker, range(threads)))
    wall = time.perf_counter() - t0
    lat.sort()
    p95 = statistics.quantiles(lat, n=100, method="inclusive")[94] if len(lat) > 1 else lat[0]
    return {"qps": len(lat) / wall, "p50_ms": statistics.median(lat) * 1000, "p95_ms": p95 * 1000}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--levels", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--per-thread", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (app.py's default is 1)")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds per level (best kept)")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    from rag.embedding import EmbeddingSettings, batch_settings, load_embedding

    settings = EmbeddingSettings(device=args.device)
    plain = load_embedding(settings, batch_window_s=0.0)
    batched = load_embedding(settings)
    window, max_batch = batch_settings()
    lock = threading.Lock()

    def serialised(q: str) -> Any:
        with lock:
            return plain.get_query_embedding(q)

    for q in QUERIES:  # warm-up both
        serialised(q)
        batched.get_query_embedding(q)
    rows = []
    for n in args.levels:
        best: dict[str, dict[str, float]] = {}
        sizes: list[int] = []
        for _ in range(args.rounds):
            for name, fn in (("serialised", serialised), ("batched", batched.get_query_embedding)):
                before = len(batched.query_batcher.batch_sizes)
                r = run_level(fn, n, args.per_thread)
                if name == "batched":
                    sizes += batched.query_batcher.batch_sizes[before:]
                if name not in best or r["qps"] > best[name]["qps"]:
                    best[name] = r
        rows.append((n, best["serialised"], best["batched"], statistics.fmean(sizes) if sizes else 0.0))
    load = os.getloadavg()
    dev = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else f"CPU, {os.cpu_count()} cores"
    print(
        f"device: {args.device} ({dev}); torch threads: {torch.get_num_threads()}; window {window * 1000:.0f} ms, "
        f"max batch {max_batch}; {args.per_thread} queries per thread, best of {args.rounds}; "
        f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n"
    )
    print(
        "| concurrent queries | serialised q/s | p50 ms | p95 ms | batched q/s | p50 ms | p95 ms | mean batch | gain |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, s, b, mean_batch in rows:
        print(
            f"| {n} | {s['qps']:.0f} | {s['p50_ms']:.1f} | {s['p95_ms']:.1f} | {b['qps']:.0f} | {b['p50_ms']:.1f} | "
            f"{b['p95_ms']:.1f} | {mean_batch:.1f} | {b['qps'] / s['qps']:.2f}x |"
        )


if __name__ == "__main__":
    main()
