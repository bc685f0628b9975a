"""GPU check (prepared for a machine with CUDA; none was available when it was written).

    .venv/bin/python bench/gpu_check.py                 # on a CUDA machine
    .venv/bin/python bench/gpu_check.py --dry-run-cpu   # exercise the training-step code on CPU (no memory figures)

1. Embedding throughput of the default model on cuda vs cpu (bench/embedding_throughput.py).
2. Measured peak memory (``torch.cuda.max_memory_allocated``) of one training step of a small,
   randomly initialised LLaMA-style model (transformers ``LlamaForCausalLM``, SDPA attention,
   fp32 weights + ``torch.autocast(bfloat16)``, AdamW) at micro batch 1 and 4 × GA 1 and 8,
   next to ``estimate_memory`` for the same shape (``hf_config=`` the same config dict,
   ``precision="amp-bf16"``, ``cuda_context_gb=0`` because max_memory_allocated does not see
   the CUDA context). The claims under test: micro batch moves the peak; GA=8 is at most one gradient
   buffer above GA=1 (``zero_grad(set_to_none=True)``: no gradients during GA=1's forward), the amount
   ``estimate_memory`` reports as ``ga_extra_over_ga1``.

Without CUDA it prints why and exits 0. ``--json PATH`` also writes the figures as JSON.
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
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MiB = 2**20
TINY = {"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8,
        "num_key_value_heads": 8, "intermediate_size": 1376, "vocab_size": 32000, "tie_word_embeddings": False}
SEQ = 512
SHAPES = [(1, 1), (1, 8), (4, 1), (4, 8)]   # (micro batch, gradient accumulation steps)


def estimate(micro: int, ga: int, seq: int) -> int:
    from calculators import estimate_memory
    est = estimate_memory({"hf_config": dict(TINY), "precision": "amp-bf16", "optimizer": "adamw",
                           "train_micro_batch_size_per_gpu": micro, "gradient_accumulation_steps": ga,
                           "seq_len": seq, "flash_attention": True, "cuda_context_gb": 0})
    return int(est.total_per_gpu)


def train_step_peak(micro: int, ga: int, seq: int, device: str) -> int | None:
    """Peak bytes allocated during one full optimizer step (after a warm-up step created the Adam states)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(**{k: v for k, v in TINY.items() if k != "model_type"}, attn_implementation="sdpa")
    model = LlamaForCausalLM(cfg).to(device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    dtype = torch.bfloat16

    def step() -> None:
        for _ in range(ga):
            ids = torch.randint(0, cfg.vocab_size, (micro, seq), device=device)
            with torch.autocast(device_type="cuda" if device.startswith("cuda") else "cpu", dtype=dtype):
                loss = model(input_ids=ids, labels=ids).loss / ga  # noqa: F821 (a closure; deleted after the last step)
            loss.backward()
        opt.step()  # noqa: F821
        opt.zero_grad(set_to_none=True)  # noqa: F821

    step()   # allocates the optimizer states
    if not device.startswith("cuda"):
        step()
        return None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    del model, opt
    torch.cuda.empty_cache()
    return peak


def memory_table(device: str, seq: int) -> list[dict[str, Any]]:
    rows = []
    for micro, ga in SHAPES:
        t0 = time.perf_counter()
        measured = train_step_peak(micro, ga, seq, device)
        est = estimate(micro, ga, seq)
        rows.append({"micro": micro, "ga": ga, "measured_bytes": measured, "estimated_bytes": est,
                     "ratio": None if measured is None else est / measured, "seconds": time.perf_counter() - t0})
    return rows


def print_memory(rows: list[dict[str, Any]]) -> None:
    print("| micro batch | GA | measured peak MiB | estimate_memory MiB | estimate / measured |")
    print("|---:|---:|---:|---:|---:|")
    for r in rows:
        m = "n/a" if r["measured_bytes"] is None else f"{r['measured_bytes'] / MiB:.0f}"
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}"
        print(f"| {r['micro']} | {r['ga']} | {m} | {r['estimated_bytes'] / MiB:.0f} | {ratio} |")
    by = {(r["micro"], r["ga"]): r["measured_bytes"] for r in rows}
    if all(v is not None for v in by.values()):
        for micro in sorted({m for m, _ in by}):
            a, b = by[(micro, 1)], by[(micro, 8)]
            print(f"micro {micro}: GA=8 peak / GA=1 peak = {b / a:.3f}")
        print(f"GA=1: micro 4 / micro 1 = {by[(4, 1)] / by[(1, 1)]:.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run-cpu", action="store_true", help="run the training steps on CPU (no memory figures)")
    ap.add_argument("--seq", type=int, default=SEQ)
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)

    import torch
    if args.dry_run_cpu:
        print(f"dry run on CPU: shape {TINY}, seq {args.seq}")
        print_memory(memory_table("cpu", args.seq))
        return 0
    if not torch.cuda.is_available():
        print("gpu_check: no CUDA device is available (torch.cuda.is_available() is False); nothing to measure. "
              "Run this on a machine with an NVIDIA GPU, or use --dry-run-cpu to exercise the code.")
        return 0

    from embedding_throughput import measure, table
    print(f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; CUDA {torch.version.cuda}\n")
    emb = [measure("cuda", 3), measure("cpu", 1)]
    print(table(emb))
    print(f"\ncuda / cpu passages per second: {emb[0]['passages_per_s'] / emb[1]['passages_per_s']:.1f}x\n")
    print(f"training step of a random LLaMA-style model {TINY}, seq {args.seq}, amp-bf16, AdamW:\n")
    rows = memory_table("cuda", args.seq)
    print_memory(rows)
    if args.json:
        Path(args.json).write_text(json.dumps({"embedding": emb, "memory": rows, "shape": TINY, "seq": args.seq},
                                              indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
