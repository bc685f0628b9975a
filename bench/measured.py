"""Published measured training peaks vs ``estimate_memory``.

    .venv/bin/python bench/measured.py            # prints the ratio table (Markdown) and the summary

Every point names its primary source at a pinned commit and what was measured. Points whose
configuration the estimator cannot express are listed as such with the reason, never tuned away
or dropped. Runs that went out of memory are checked separately (is the prediction above the card?).

Source so far: LitGPT's resource tables (tutorials/resource-tables.md at commit 26857050; runs with
LitGPT commit 8641822, PyTorch 2.1.0, bitsandbytes 0.41.1, A100-SXM4-40GB, ``--precision bf16-true``,
Alpaca padded to its longest example: 1034 tokens for StableLM Alpha, 1304 for Llama 2). The figure is
``torch.cuda.max_memory_allocated() / 1e9`` (finetune/lora.py at 8641822 prints it), i.e. the allocator
peak in decimal GB, compared here with ``peak_allocated``. The LoRA recipe at 8641822 (finetune/lora.py):
rank 8 on query and value, batch 128 (GA = 128 / micro batch), torch SDPA attention, LM head in chunks of
128 tokens with a chunked cross-entropy on the bf16 chunks (``loss_implementation="lm-head-chunks"``: the
chunks and their log-softmax outputs are kept, 4 B per logit, measured in tests/test_memory_logits.py), no activation checkpointing on one GPU; on several GPUs FSDP
(full shard, per-Block wrapping) with activation checkpointing of every Block.

Why the FSDP runs need more memory than one GPU (7B: 22.18 GB on each of 2 GPUs vs 21.30 GB on one): LitGPT's
``FSDPStrategy(auto_wrap_policy={Block}, ...)`` (finetune/lora.py at 8641822) runs with ``use_orig_params=True``
(Lightning 71aed751, src/lightning/fabric/strategies/fsdp.py sets it by default), so each Block's flat parameter
holds the frozen weights *and* the LoRA matrices and requires a gradient as a whole -- PyTorch's FSDP docs: with
frozen and non-frozen parameters mixed "the gradient memory usage will be higher than expected (namely, equivalent
to not freezing those parameters)" -- and the micro-steps run in ``fabric.no_backward_sync`` (FSDP ``no_sync``),
which accumulates *unsharded* gradients. Per GPU: sharded bf16 weights + unsharded bf16 gradients of every
parameter + gathered units + activations (``fsdp_frozen_in_trainable_units=True``).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from calculators import estimate_memory  # noqa: E402

LITGPT = ("https://github.com/Lightning-AI/litgpt/blob/26857050fe3ff627cd714fe92f5838f51a3d5efa/"
          "tutorials/resource-tables.md")
ALLOCATED = "torch.cuda.max_memory_allocated (decimal GB)"
A100_40 = 40e9

# stabilityai/stablelm-base-alpha-3b config.json (GPT-NeoX architecture)
STABLELM_3B = {"model_type": "gpt_neox", "hidden_size": 4096, "num_hidden_layers": 16, "num_attention_heads": 32,
               "intermediate_size": 16384, "vocab_size": 50688, "tie_word_embeddings": False}
# microsoft/phi-1_5 config.json (transformers-native "phi" architecture)
PHI_15 = {"model_type": "phi", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 24,
          "num_attention_heads": 32, "vocab_size": 51200, "tie_word_embeddings": False}
SEQ = {"stablelm": 1034, "llama2": 1304, "phi": 1044}
MODEL = {"stablelm": {"hf_config": STABLELM_3B}, "phi": {"hf_config": PHI_15}, "llama2-7b": {"model": "llama-2-7b"},
         "llama2-13b": {"model": "llama-2-13b"}}


@dataclass
class Point:
    label: str
    measured_gb: float | None            # None: the run went out of memory
    config: dict[str, Any] | None        # None: not expressible
    reason: str = ""                     # why not expressible
    source: str = LITGPT
    measured: str = ALLOCATED
    extra: dict[str, Any] = field(default_factory=dict)


def _lora(model: str, micro: int, quant: str = "None", gpus: int = 1) -> dict[str, Any]:
    seq = SEQ[model if model in SEQ else "llama2"]
    cfg: dict[str, Any] = dict(MODEL[model], precision="bf16", finetune="lora" if quant == "None" else "qlora",
                               lora_rank=8, lora_target_modules=["q_proj", "v_proj"], seq_len=seq,
                               train_micro_batch_size_per_gpu=micro, gradient_accumulation_steps=128 // micro,
                               flash_attention=True, loss_implementation="lm-head-chunks", cuda_context_gb=0)
    if quant != "None":
        cfg["bitsandbytes_before_0_43_2"] = True   # the runs used bitsandbytes 0.41.1
        cfg["qlora_double_quant"] = quant == "nf4-dq"
    if gpus > 1:
        # Lightning FSDPStrategy(auto_wrap_policy={Block}) with use_orig_params=True: each Block's flat parameter
        # holds the frozen weights and the LoRA matrices, so it requires a gradient as a whole.
        cfg.update(fsdp="full_shard", world_size=gpus, gradient_checkpointing="full",
                   fsdp_frozen_in_trainable_units=True)
    return cfg


ADAPTER = "LLaMA-Adapter / Adapter v2 fine-tuning is not modelled"

POINTS: list[Point] = []
# Finetuning with LoRA on 1 GPU
for micro, gb in ((1, 4.82), (2, 6.76), (4, 10.68)):
    POINTS.append(Point(f"phi-1.5 LoRA mb{micro}", gb, _lora("phi", micro)))
POINTS += [Point("phi-1.5 LoRA nf4 mb1", 3.78, _lora("phi", 1, "nf4")),
           Point("phi-1.5 LoRA nf4-dq mb1", 3.72, _lora("phi", 1, "nf4-dq"))]
for micro, gb in ((1, 9.69), (2, 12.10), (4, 16.92)):
    POINTS.append(Point(f"StableLM-3B LoRA mb{micro}", gb, _lora("stablelm", micro)))
POINTS += [Point("StableLM-3B LoRA nf4 mb1", 6.35, _lora("stablelm", 1, "nf4")),
           Point("StableLM-3B LoRA nf4-dq mb1", 6.19, _lora("stablelm", 1, "nf4-dq"))]
for micro, gb in ((1, 21.30), (2, 29.07), (4, None)):
    POINTS.append(Point(f"Llama-2-7B LoRA mb{micro}", gb, _lora("llama2-7b", micro)))
POINTS += [Point("Llama-2-7B LoRA nf4 mb1", 14.14, _lora("llama2-7b", 1, "nf4")),
           Point("Llama-2-7B LoRA nf4-dq mb1", 13.84, _lora("llama2-7b", 1, "nf4-dq"))]
for micro, gb in ((1, 38.12), (2, None), (4, None)):
    POINTS.append(Point(f"Llama-2-13B LoRA mb{micro}", gb, _lora("llama2-13b", micro)))
POINTS += [Point("Llama-2-13B LoRA nf4 mb1", 23.14, _lora("llama2-13b", 1, "nf4")),
           Point("Llama-2-13B LoRA nf4-dq mb1", 22.55, _lora("llama2-13b", 1, "nf4-dq"))]
# Finetuning with Adapter / Adapter v2 on 1 GPU
for name, gbs in (("Adapter", (9.10, 5.65, 5.48, 19.98, 12.68, 12.38)), ("Adapter v2", (10.71, 7.41, 7.25, 25.51, 18.30, 17.98))):
    for (model, quant), gb in zip([("StableLM-3B", q) for q in ("None", "nf4", "nf4-dq")]
                                  + [("Llama-2-7B", q) for q in ("None", "nf4", "nf4-dq")], gbs, strict=True):
        POINTS.append(Point(f"{model} {name} {quant} mb1", gb, None, ADAPTER))
# Finetuning with LoRA on several GPUs (FSDP, activation checkpointing)
for micro, gb in ((1, 4.86), (2, 5.05), (4, 5.88)):
    POINTS.append(Point(f"phi-1.5 LoRA 2×A100 mb{micro}", gb, _lora("phi", micro, gpus=2)))
for micro, gb in ((1, 12.75), (2, 12.94), (4, 13.45)):
    POINTS.append(Point(f"StableLM-3B LoRA 2×A100 mb{micro}", gb, _lora("stablelm", micro, gpus=2)))
for micro, gb in ((1, 22.18), (2, 22.47), (4, 23.39)):
    POINTS.append(Point(f"Llama-2-7B LoRA 2×A100 mb{micro}", gb, _lora("llama2-7b", micro, gpus=2)))
POINTS.append(Point("Llama-2-13B LoRA 4×A100 mb1", 35.57, _lora("llama2-13b", 1, gpus=4)))


def evaluate() -> tuple[list[tuple[Point, float | None]], dict[str, Any]]:
    rows = []
    for p in POINTS:
        pred = None if p.config is None else estimate_memory(p.config).peak_allocated / 1e9
        rows.append((p, pred))
    compared = [(p, pred) for p, pred in rows if p.measured_gb is not None and pred is not None]
    errors = [abs(pred / p.measured_gb - 1) for p, pred in compared]
    oom = [(p, pred) for p, pred in rows if p.measured_gb is None and pred is not None]
    summary = {
        "points": len(POINTS), "measured": sum(p.measured_gb is not None for p in POINTS),
        "compared": len(compared), "not_expressible": sum(p.config is None for p in POINTS),
        "median_abs_error": statistics.median(errors) if errors else None,
        "within_10pct": sum(e <= 0.10 for e in errors),
        "oom_predicted_over_40gb": sum(pred > A100_40 / 1e9 for _, pred in oom), "oom_runs": len(oom),
    }
    return rows, summary


def main() -> None:
    rows, s = evaluate()
    print("| point | measured GB | predicted GB | predicted / measured |")
    print("|---|---:|---:|---:|")
    for p, pred in rows:
        meas = "OOM" if p.measured_gb is None else f"{p.measured_gb:.2f}"
        if pred is None:
            print(f"| {p.label} | {meas} | not expressible: {p.reason} | |")
        else:
            ratio = "" if p.measured_gb is None else f"{pred / p.measured_gb:.3f}"
            print(f"| {p.label} | {meas} | {pred:.2f} | {ratio} |")
    print()
    print(f"{s['points']} points ({s['measured']} measured peaks, {s['oom_runs']} expressible OOM runs); "
          f"{s['compared']} compared, {s['not_expressible']} not expressible. "
          f"Median |error| {s['median_abs_error']:.1%}; {s['within_10pct']}/{s['compared']} within ±10%; "
          f"OOM runs predicted above 40 GB: {s['oom_predicted_over_40gb']}/{s['oom_runs']}.")


if __name__ == "__main__":
    main()
