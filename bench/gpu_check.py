"""GPU check (prepared for a machine with CUDA; none was available when it was written).

    .venv/bin/python bench/gpu_check.py                 # on a CUDA machine (about a minute after the model loads)
    .venv/bin/python bench/gpu_check.py --dry-run-cpu --seq 64   # exercise every case's code on CPU (no figures)

1. Embedding throughput of the default model on cuda vs cpu (bench/embedding_throughput.py).
2. Measured peak memory of one optimizer step of small, randomly initialised models (transformers
   ``LlamaForCausalLM`` / ``MixtralForCausalLM``, SDPA attention, AdamW), single GPU, next to
   ``estimate_memory`` for the same config dict. Three figures per case: ``torch.cuda.max_memory_allocated``
   (vs ``peak_allocated``), ``max_memory_reserved`` (what the allocator held: reserved / allocated - 1 is the
   real ``allocator_slack_fraction``, assumed 0.10) and the CUDA context measured with ``torch.cuda.mem_get_info``
   before the first model (vs ``cuda_context_gb``; reserved + context is what nvidia-smi shows for the process).
   Cases (the terms they test):

   * amp-bf16, HF loss, micro 1/4 x GA 1/8 -- micro batch moves the peak; GA=8 is one gradient buffer above GA=1
     at most (``zero_grad(set_to_none=True)``), the ``ga_extra_over_ga1`` figure;
   * ``zero_grad(set_to_none=False)`` at GA=1 -- the gradient buffer is alive during the forward pass;
   * full activation checkpointing;
   * pure bf16 with LitGPT's losses: ``lm-head-chunks`` (LM head in 128-token chunks, chunked cross-entropy)
     and ``ce-chunks`` (one logits tensor, 128-row cross-entropy slices), no fp32 upcast;
   * LoRA r=8 on q/v with fp32 adapters on a bf16 model (PEFT's layout: each adapter casts its input to fp32),
     GA 1 and 8;
   * a tiny Mixtral (8 experts, top-2): MoE parameters, expert activations and the router;
   * a long sequence (2048) for the fp32 logits of the HF loss (12 B per logit).

FSDP and ZeRO need several GPUs and are not run here. Without CUDA it prints why and exits 0. ``--json PATH``
also writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from measured import TINY_LLAMA  # noqa: E402  (bench/ is the script's folder, on sys.path)

MiB = 2**20
TINY = {
    "model_type": "llama",
    "hidden_size": 512,
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "num_key_value_heads": 8,
    "intermediate_size": 1376,
    "vocab_size": 32000,
    "tie_word_embeddings": False,
}
TINY_MOE = {
    "model_type": "mixtral",
    "hidden_size": 512,
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "num_key_value_heads": 8,
    "intermediate_size": 688,
    "vocab_size": 32000,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "tie_word_embeddings": False,
}
#: TinyLlama-1.1B's shape (bench/measured.py, from its config.json): GB-sized figures, where fixed overheads no longer
#: hide a wrong per-token or per-parameter term. Run on CUDA only (too slow for the CPU dry run).
MID = TINY_LLAMA
SEQ = 512


@dataclass(frozen=True)
class Case:
    """One single-GPU training setup, run for real and given to estimate_memory with the same settings."""

    name: str
    micro: int = 1
    ga: int = 1
    precision: str = "amp-bf16"  # amp-bf16: fp32 weights + autocast; bf16: the model in bf16
    loss: str = "hf"  # hf | lm-head-chunks | ce-chunks
    checkpointing: bool = False
    lora: bool = False
    set_to_none: bool = True
    moe: bool = False
    seq: int | None = None  # None: --seq
    mid: bool = False  # the 1.1B shape (MID) instead of TINY
    big: bool = False  # Llama-2-7B's shape (BIG), built on the GPU itself (``--big``)

    def config(self) -> dict[str, Any]:
        return dict(TINY_MOE if self.moe else BIG if self.big else MID if self.mid else TINY)


CASES = [
    Case("amp mb1 ga1"),
    Case("amp mb1 ga8", ga=8),
    Case("amp mb4 ga1", micro=4),
    Case("amp mb4 ga8", micro=4, ga=8),
    Case("amp mb1 ga1 set_to_none=False", set_to_none=False),
    Case("amp mb4 ga1 checkpointing", micro=4, checkpointing=True),
    Case("bf16 mb4 lm-head-chunks", micro=4, precision="bf16", loss="lm-head-chunks"),
    Case("bf16 mb4 ce-chunks", micro=4, precision="bf16", loss="ce-chunks"),
    Case("bf16 LoRA q,v mb4 ga1", micro=4, precision="bf16", lora=True),
    Case("bf16 LoRA q,v mb4 ga8", micro=4, ga=8, precision="bf16", lora=True),
    Case("amp Mixtral 8x top-2 mb2", micro=2, moe=True),
    Case("amp mb1 ga1 seq 2048", seq=2048),
]
#: The same terms at 1.1B parameters and 2048 tokens (CUDA only).
CASES_MID = [
    Case("1.1B amp mb1 ga1", seq=2048, mid=True),
    Case("1.1B amp mb4 ga1", micro=4, seq=2048, mid=True),
    Case("1.1B amp mb4 ga8", micro=4, ga=8, seq=2048, mid=True),
    Case("1.1B amp mb4 ga1 checkpointing", micro=4, seq=2048, checkpointing=True, mid=True),
    Case("1.1B bf16 LoRA q,v mb4 ga1", micro=4, seq=2048, precision="bf16", lora=True, mid=True),
]


def _llama_config(preset: str) -> dict[str, Any]:
    """The transformers config of a LLaMA-family preset: the model measured is the shape the calculator knows."""
    from calculators.presets import MODEL_PRESETS

    s = MODEL_PRESETS[preset]
    return {
        "model_type": "llama",
        "hidden_size": s.hidden_size,
        "num_hidden_layers": s.num_layers,
        "num_attention_heads": s.num_attention_heads,
        "num_key_value_heads": s.num_key_value_heads,
        "intermediate_size": s.intermediate_size,
        "vocab_size": s.vocab_size,
        "tie_word_embeddings": s.tie_word_embeddings,
    }


#: Llama-2-7B's shape (the llama-2-7b preset) for LoRA in pure bf16, the setup users ask about most
#: (``--big``, about 3 minutes on an H200; the 7B is initialised on the GPU).
BIG = _llama_config("llama-2-7b")
CASES_BIG = [
    Case("7B bf16 LoRA q,v mb1 ga1", seq=2048, precision="bf16", lora=True, big=True),
    Case("7B bf16 LoRA q,v mb4 ga1", micro=4, seq=2048, precision="bf16", lora=True, big=True),
    Case("7B bf16 LoRA q,v mb4 ga4", micro=4, ga=4, seq=2048, precision="bf16", lora=True, big=True),
    Case(
        "7B bf16 LoRA q,v mb4 ga1 checkpointing",
        micro=4,
        seq=2048,
        precision="bf16",
        lora=True,
        big=True,
        checkpointing=True,
    ),
    Case(
        "7B bf16 LoRA q,v mb8 ga1 checkpointing",
        micro=8,
        seq=2048,
        precision="bf16",
        lora=True,
        big=True,
        checkpointing=True,
    ),
]


def estimate(case: Case, seq: int, context_gb: float = 0.0) -> Any:
    from calculators import estimate_memory

    kw: dict[str, Any] = {
        "hf_config": case.config(),
        "precision": case.precision,
        "optimizer": "adamw",
        "adamw_kernel": "foreach",  # torch.optim.AdamW without fused=True, as train_step builds it
        "train_micro_batch_size_per_gpu": case.micro,
        "gradient_accumulation_steps": case.ga,
        "seq_len": seq,
        "flash_attention": True,
        "cuda_context_gb": context_gb,
        "loss_implementation": case.loss,
        "zero_grad_set_to_none": case.set_to_none,
        "gradient_checkpointing": "full" if case.checkpointing else "none",
    }
    if case.lora:
        kw.update(finetune="lora", lora_rank=8, lora_target_modules=["q_proj", "v_proj"])
    return estimate_memory(kw)


def _chunked_ce(logits: Any, targets: Any, chunk: int = 128) -> Any:
    """LitGPT's chunked_cross_entropy (litgpt/utils.py at 00af8b0d): per-chunk CE, reduction none, mean."""
    import torch

    F = torch.nn.functional
    if isinstance(logits, list):
        pairs = zip(
            [c.reshape(-1, c.size(-1)) for c in logits],
            [t.reshape(-1) for t in targets.split(logits[0].size(1), dim=1)],
            strict=True,
        )
    else:
        pairs = zip(logits.reshape(-1, logits.size(-1)).split(chunk), targets.reshape(-1).split(chunk), strict=True)
    return torch.cat([F.cross_entropy(a, b, reduction="none") for a, b in pairs]).mean()


def build(case: Case, device: str) -> Any:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    cfg_dict = case.config()
    cfg = AutoConfig.for_model(cfg_dict.pop("model_type"), **cfg_dict)
    dtype = torch.bfloat16 if case.precision == "bf16" else torch.float32
    if case.big:  # 7B: initialised where it runs (minutes on the CPU)
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa", dtype=dtype).train()
    else:
        model = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa", dtype=dtype).to(device).train()
    if case.checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if case.lora:
        sys.path.insert(0, str(ROOT))  # tests/ is not part of the installed package: the probe comes from the checkout
        from tests.activation_probe import add_lora

        add_lora(model, ("q_proj", "v_proj"), rank=8, adapter_dtype=torch.float32)
        model.to(device)
    return model


def train_step(case: Case, seq: int, device: str) -> dict[str, int] | None:
    """Peak bytes of one full optimizer step (after a warm-up step created the Adam states)."""
    import torch

    model = build(case, device)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    vocab = case.config()["vocab_size"]
    autocast = case.precision.startswith("amp")

    def loss_of(ids: Any) -> Any:
        if case.loss == "hf":
            return model(input_ids=ids, labels=ids).loss  # the output object is dropped, as HF Trainer does
        hidden = model.model(input_ids=ids).last_hidden_state
        if case.loss == "lm-head-chunks":
            logits = [model.lm_head(h) for h in hidden.split(128, dim=1)]
            logits[-1] = logits[-1][..., :-1, :]
            return _chunked_ce(logits, ids[..., 1:])
        return _chunked_ce(model.lm_head(hidden)[..., :-1, :], ids[..., 1:])

    def step() -> None:
        for _ in range(case.ga):
            ids = torch.randint(0, vocab, (case.micro, seq), device=device)
            with torch.autocast(
                device_type="cuda" if device.startswith("cuda") else "cpu", dtype=torch.bfloat16, enabled=autocast
            ):
                loss = loss_of(ids) / case.ga
            loss.backward()
            del loss
        opt.step()
        opt.zero_grad(set_to_none=case.set_to_none)

    step()
    if not device.startswith("cuda"):
        step()
        return None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    return {"allocated": torch.cuda.max_memory_allocated(), "reserved": torch.cuda.max_memory_reserved()}


def cuda_context_bytes() -> int:
    """Device memory in use after CUDA initialises, minus what PyTorch's allocator holds (the context)."""
    import torch

    torch.ones(1, device="cuda")
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    return total - free - torch.cuda.memory_reserved()


def memory_table(device: str, seq: int, context: int = 0, big: bool = False) -> list[dict[str, Any]]:
    rows = []
    cases = CASES_BIG if big else CASES + (CASES_MID if device.startswith("cuda") else [])
    for case in cases:
        t0 = time.perf_counter()
        s = case.seq or seq
        got = train_step(case, s, device)  # the model and optimizer are gone when it returns
        if device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()  # each case starts from an empty cache: its own reserved figure
        est = estimate(case, s, context / 2**30)
        row: dict[str, Any] = {
            "case": case.name,
            "seq": s,
            "estimated_allocated": est.peak_allocated,
            "estimated_nvidia_smi": est.nvidia_smi,
            "ga_extra_over_ga1": est.ga_extra_over_ga1,
            "measured_allocated": None,
            "measured_reserved": None,
            "measured_nvidia_smi": None,
        }
        if got is not None:
            row.update(
                measured_allocated=got["allocated"],
                measured_reserved=got["reserved"],
                measured_nvidia_smi=got["reserved"] + context,
            )
        row["seconds"] = time.perf_counter() - t0
        rows.append(row)
    return rows


def _mib(v: int | None) -> str:
    return "n/a" if v is None else f"{v / MiB:.0f}"


def _ratio(a: int | None, b: int | None) -> str:
    return "n/a" if a is None or b is None else f"{a / b:.3f}"


def print_memory(rows: list[dict[str, Any]], context: int = 0) -> None:
    print(
        "| case | seq | allocated MiB | predicted MiB | pred / meas | reserved MiB | reserved / allocated | "
        "nvidia-smi MiB (reserved + context) | predicted MiB | pred / meas |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['case']} | {r['seq']} | {_mib(r['measured_allocated'])} | {_mib(r['estimated_allocated'])} | "
            f"{_ratio(r['estimated_allocated'], r['measured_allocated'])} | {_mib(r['measured_reserved'])} | "
            f"{_ratio(r['measured_reserved'], r['measured_allocated'])} | {_mib(r['measured_nvidia_smi'])} | "
            f"{_mib(r['estimated_nvidia_smi'])} | {_ratio(r['estimated_nvidia_smi'], r['measured_nvidia_smi'])} |"
        )
    by = {r["case"]: r for r in rows}
    for a, b in (
        ("amp mb1 ga1", "amp mb1 ga8"),
        ("amp mb4 ga1", "amp mb4 ga8"),
        ("bf16 LoRA q,v mb4 ga1", "bf16 LoRA q,v mb4 ga8"),
        ("1.1B amp mb4 ga1", "1.1B amp mb4 ga8"),
    ):
        if a not in by or b not in by:
            continue
        m1, m8 = by[a]["measured_allocated"], by[b]["measured_allocated"]
        if m1 is not None and m8 is not None:
            print(
                f"{b} - {a}: measured {(m8 - m1) / MiB:.1f} MiB, estimate's ga_extra_over_ga1 "
                f"{by[b]['ga_extra_over_ga1'] / MiB:.1f} MiB"
            )
    if context:
        print(f"CUDA context (mem_get_info before the first model): {context / MiB:.0f} MiB")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run-cpu", action="store_true", help="run the training steps on CPU (no memory figures)")
    ap.add_argument("--seq", type=int, default=SEQ)
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    ap.add_argument(
        "--skip-embedding",
        action="store_true",
        help="only the memory cases (a GPU machine without llama-index and the bundled embedding model)",
    )
    ap.add_argument("--big", action="store_true", help="only the Llama-2-7B LoRA cases (CUDA only)")
    args = ap.parse_args(argv)

    import torch

    if args.dry_run_cpu:
        print(f"dry run on CPU: seq {args.seq} (long-context case: its own length)")
        print_memory(memory_table("cpu", args.seq))
        return 0
    if not torch.cuda.is_available():
        print(
            "gpu_check: no CUDA device is available (torch.cuda.is_available() is False); nothing to measure. "
            "Run this on a machine with an NVIDIA GPU, or use --dry-run-cpu to exercise the code."
        )
        return 0

    context = cuda_context_bytes()
    print(f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; CUDA {torch.version.cuda}\n")
    emb: list[dict[str, Any]] = []
    if args.skip_embedding or args.big:
        print("embedding throughput: skipped (--skip-embedding)\n")
    else:
        from embedding_throughput import measure, table

        emb = [measure("cuda", 3), measure("cpu", 1)]
        print(table(emb))
        print(f"\ncuda / cpu passages per second: {emb[0]['passages_per_s'] / emb[1]['passages_per_s']:.1f}x\n")
    print(f"one optimizer step of random models (LLaMA {TINY}; Mixtral {TINY_MOE}), AdamW, seq {args.seq}:\n")
    import gc

    gc.collect()
    torch.cuda.empty_cache()  # the embedding model's cached blocks must not count as the first case's reserve
    rows = memory_table("cuda", args.seq, context, big=args.big)
    print_memory(rows, context)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "embedding": emb,
                    "memory": rows,
                    "context": context,
                    "shape": TINY,
                    "moe_shape": TINY_MOE,
                    "mid_shape": MID,
                    "big_shape": BIG,
                    "seq": args.seq,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
