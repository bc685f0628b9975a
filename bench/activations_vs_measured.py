"""Predicted (calculators.activations) vs measured activation bytes on tiny HF models (CPU).

Run: .venv/bin/python bench/activations_vs_measured.py
Measured = storages autograd saves for backward (saved_tensors_hooks, deduplicated by storage,
parameters/buffers excluded) + the returned logits; see tests/activation_probe.py.
Predictions use mask_bytes=bytes_per_value (CPU dropout masks are in the model dtype).
LoRA rows: every weight frozen, the listed linears wrapped with a trainable rank-8 adapter
(tests/activation_probe.py add_lora), predicted with trainable_linears=...; "full" is the same
model and batch fully trainable, for the LoRA/full ratio.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

# tests/ is not part of the installed package: the probe is imported from the checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from calculators.activations import activation_bytes  # noqa: E402
from tests import activation_probe as P  # noqa: E402

MiB = 2**20
QV = ("q_proj", "v_proj")
QKVO = ("q_proj", "k_proj", "v_proj", "o_proj")
ALL7 = QKVO + ("gate_proj", "up_proj", "down_proj")
CASES = [  # label, builder, kwargs, micro_batch, seq_len, dtype, predict kwargs
    (
        "llama h128 L4 a8 kv2, b2 s256, fp32 eager",
        P.tiny_llama,
        dict(hidden=128, layers=4, heads=8, kv_heads=2, inter=344),
        2,
        256,
        torch.float32,
        {},
    ),
    (
        "llama h256 L2 a8 kv4, b4 s128, bf16 eager",
        P.tiny_llama,
        dict(hidden=256, layers=2, heads=8, kv_heads=4, inter=688),
        4,
        128,
        torch.bfloat16,
        {},
    ),
    (
        "llama h256 L2 a8 kv2, b4 s256, bf16 sdpa",
        P.tiny_llama,
        dict(hidden=256, layers=2, heads=8, kv_heads=2, inter=688, attn="sdpa"),
        4,
        256,
        torch.bfloat16,
        dict(flash_attention=True),
    ),
    (
        "gpt2 h256 L3 a8 (gelu), b4 s128, fp32 eager",
        P.tiny_gpt2,
        dict(hidden=256, layers=3, heads=8),
        4,
        128,
        torch.float32,
        {},
    ),
    (
        "gpt2 h128 L2 a4 (gelu_new), b8 s64, bf16 eager",
        P.tiny_gpt2,
        dict(hidden=128, layers=2, heads=4, activation="gelu_new"),
        8,
        64,
        torch.bfloat16,
        dict(activation="gelu_new"),
    ),
    (
        "bert h128 L4 a4, b4 s128, bf16 eager",
        P.tiny_bert,
        dict(hidden=128, layers=4, heads=4),
        4,
        128,
        torch.bfloat16,
        {},
    ),
    (
        "t5 h128 L2+2 a4, b2 s128, fp32 eager",
        P.tiny_t5,
        dict(hidden=128, layers=2, heads=4, d_kv=32, d_ff=512),
        2,
        128,
        torch.float32,
        {},
    ),
]
LLAMA = dict(hidden=256, layers=2, heads=8, kv_heads=8, inter=688)
LORA_CASES = [  # label, llama kwargs, micro_batch, seq_len, dtype, targets, emulation kwargs, predict kwargs
    ("LoRA q,v: llama h256 L2 a8, b2 s128, bf16 eager", dict(LLAMA), 2, 128, torch.bfloat16, QV, {}, {}),
    ("LoRA q,v: llama h256 L2 a8, b2 s128, bf16 sdpa", dict(LLAMA, attn="sdpa"), 2, 128, torch.bfloat16, QV, {}, {}),
    (
        "LoRA q,k,v,o: llama h128 L4 a8 kv2, b2 s256, fp32 eager",
        dict(hidden=128, layers=4, heads=8, kv_heads=2, inter=344),
        2,
        256,
        torch.float32,
        QKVO,
        {},
        {},
    ),
    (
        "LoRA all 7: llama h256 L2 a8 kv2, b4 s256, bf16 sdpa",
        dict(LLAMA, kv_heads=2, attn="sdpa"),
        4,
        256,
        torch.bfloat16,
        ALL7,
        {},
        {},
    ),
    (
        "LoRA all 7: ... bf16 sdpa, fp32 adapters (PEFT cast)",
        dict(LLAMA, kv_heads=2, attn="sdpa"),
        4,
        256,
        torch.bfloat16,
        ALL7,
        dict(adapter_dtype=torch.float32),
        dict(lora_input_copy=True, lora_bytes=4),
    ),
    (
        "LoRA q,v: h256 L2, b2 s128, bf16 eager, input grads",
        dict(LLAMA),
        2,
        128,
        torch.bfloat16,
        QV,
        dict(input_requires_grad=True),
        dict(input_requires_grad=True),
    ),
]


def main() -> None:
    torch.set_num_threads(2)
    import transformers

    transformers.logging.set_verbosity_error()
    t0 = time.time()
    print("| shape | measured MiB | predicted MiB | ratio |")
    print("|---|---:|---:|---:|")
    for label, builder, kw, b, s, dtype, pkw in CASES:
        model, shape = builder(dtype=dtype, **kw)
        measured = P.measure(model, P.inputs_for(shape, b, s)).total
        B = 2 if dtype == torch.bfloat16 else 4
        predicted = activation_bytes(shape, b, s, bytes_per_value=B, mask_bytes=B, **pkw).total
        print(f"| {label} | {measured / MiB:.2f} | {predicted / MiB:.2f} | {measured / predicted:.3f} |")
    print("\n| LoRA (rank 8, frozen base) | measured MiB | predicted MiB | ratio | LoRA/full measured | predicted |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, kw, b, s, dtype, targets, ekw, pkw in LORA_CASES:
        full, shape = P.tiny_llama(dtype=dtype, **kw)
        lora, _ = P.tiny_llama(dtype=dtype, **kw)
        P.add_lora(lora, targets, rank=8, **ekw)
        inputs = P.inputs_for(shape, b, s)
        m_full, m_lora = P.measure(full, inputs).total, P.measure(lora, inputs).total
        B = 2 if dtype == torch.bfloat16 else 4
        common = dict(bytes_per_value=B, mask_bytes=B, flash_attention=kw.get("attn") == "sdpa")
        p_full = activation_bytes(shape, b, s, **common).total
        p_lora = activation_bytes(shape, b, s, trainable_linears=targets, lora_rank=8, **common, **pkw).total
        print(
            f"| {label} | {m_lora / MiB:.2f} | {p_lora / MiB:.2f} | {m_lora / p_lora:.3f} "
            f"| {m_lora / m_full:.3f} | {p_lora / p_full:.3f} |"
        )
    print(f"\n({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    main()
