"""Published measured training peaks vs ``estimate_memory``.

    .venv/bin/python bench/measured.py            # prints the ratio table (Markdown) and the summary
    PYTHONPATH=. .venv/bin/python bench/measured.py   # from a git worktree (the editable install points elsewhere)

Every point names its primary source at a pinned commit and what was measured. Points whose
configuration the estimator cannot express are listed as such with the reason, never tuned away
or dropped. Runs that went out of memory are checked separately (is the prediction above the card?).

Three sources: LitGPT's resource tables (below), LitGPT's config hub table (further down, ``HUB``) and the Hugging
Face single-GPU guide (``HF_GUIDE``, nvidia-smi readings, listed as not expressible).

LitGPT's resource tables (tutorials/resource-tables.md at commit 26857050; runs with
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

LITGPT = (
    "https://github.com/Lightning-AI/litgpt/blob/26857050fe3ff627cd714fe92f5838f51a3d5efa/tutorials/resource-tables.md"
)
ALLOCATED = "torch.cuda.max_memory_allocated (decimal GB)"
A100_40 = 40e9

# stabilityai/stablelm-base-alpha-3b config.json (GPT-NeoX architecture)
STABLELM_3B = {
    "model_type": "gpt_neox",
    "hidden_size": 4096,
    "num_hidden_layers": 16,
    "num_attention_heads": 32,
    "intermediate_size": 16384,
    "vocab_size": 50688,
    "tie_word_embeddings": False,
}
# microsoft/phi-1_5 config.json (transformers-native "phi" architecture)
PHI_15 = {
    "model_type": "phi",
    "hidden_size": 2048,
    "intermediate_size": 8192,
    "num_hidden_layers": 24,
    "num_attention_heads": 32,
    "vocab_size": 51200,
    "tie_word_embeddings": False,
}
SEQ = {"stablelm": 1034, "llama2": 1304, "phi": 1044}
MODEL = {
    "stablelm": {"hf_config": STABLELM_3B},
    "phi": {"hf_config": PHI_15},
    "llama2-7b": {"model": "llama-2-7b"},
    "llama2-13b": {"model": "llama-2-13b"},
}


@dataclass
class Point:
    label: str
    measured_gb: float | None  # None: the run went out of memory
    config: dict[str, Any] | None  # None: not expressible
    reason: str = ""  # why not expressible
    source: str = LITGPT
    measured: str = ALLOCATED
    capacity_gb: float = A100_40 / 1e9  # the card: an OOM run should be predicted above it
    extra: dict[str, Any] = field(default_factory=dict)


def _lora(model: str, micro: int, quant: str = "None", gpus: int = 1) -> dict[str, Any]:
    seq = SEQ[model if model in SEQ else "llama2"]
    cfg: dict[str, Any] = dict(
        MODEL[model],
        precision="bf16",
        finetune="lora" if quant == "None" else "qlora",
        lora_rank=8,
        lora_target_modules=["q_proj", "v_proj"],
        seq_len=seq,
        train_micro_batch_size_per_gpu=micro,
        gradient_accumulation_steps=128 // micro,
        flash_attention=True,
        loss_implementation="lm-head-chunks",
        cuda_context_gb=0,
    )
    if quant != "None":
        cfg["bitsandbytes_before_0_43_2"] = True  # the runs used bitsandbytes 0.41.1
        cfg["qlora_double_quant"] = quant == "nf4-dq"
        cfg["qlora_lm_head_4bit"] = True  # Lightning's BitsandbytesPrecision replaces every nn.Linear
    if gpus > 1:
        # Lightning FSDPStrategy(auto_wrap_policy={Block}) with use_orig_params=True: each Block's flat parameter
        # holds the frozen weights and the LoRA matrices, so it requires a gradient as a whole.
        cfg.update(
            fsdp="full_shard", world_size=gpus, gradient_checkpointing="full", fsdp_frozen_in_trainable_units=True
        )
    return cfg


ADAPTER = "LLaMA-Adapter / Adapter v2 fine-tuning is not modelled"

POINTS: list[Point] = []
# Finetuning with LoRA on 1 GPU
for micro, gb in ((1, 4.82), (2, 6.76), (4, 10.68)):
    POINTS.append(Point(f"phi-1.5 LoRA mb{micro}", gb, _lora("phi", micro)))
POINTS += [
    Point("phi-1.5 LoRA nf4 mb1", 3.78, _lora("phi", 1, "nf4")),
    Point("phi-1.5 LoRA nf4-dq mb1", 3.72, _lora("phi", 1, "nf4-dq")),
]
for micro, gb in ((1, 9.69), (2, 12.10), (4, 16.92)):
    POINTS.append(Point(f"StableLM-3B LoRA mb{micro}", gb, _lora("stablelm", micro)))
POINTS += [
    Point("StableLM-3B LoRA nf4 mb1", 6.35, _lora("stablelm", 1, "nf4")),
    Point("StableLM-3B LoRA nf4-dq mb1", 6.19, _lora("stablelm", 1, "nf4-dq")),
]
for micro, gb in ((1, 21.30), (2, 29.07), (4, None)):
    POINTS.append(Point(f"Llama-2-7B LoRA mb{micro}", gb, _lora("llama2-7b", micro)))
POINTS += [
    Point("Llama-2-7B LoRA nf4 mb1", 14.14, _lora("llama2-7b", 1, "nf4")),
    Point("Llama-2-7B LoRA nf4-dq mb1", 13.84, _lora("llama2-7b", 1, "nf4-dq")),
]
for micro, gb in ((1, 38.12), (2, None), (4, None)):
    POINTS.append(Point(f"Llama-2-13B LoRA mb{micro}", gb, _lora("llama2-13b", micro)))
POINTS += [
    Point("Llama-2-13B LoRA nf4 mb1", 23.14, _lora("llama2-13b", 1, "nf4")),
    Point("Llama-2-13B LoRA nf4-dq mb1", 22.55, _lora("llama2-13b", 1, "nf4-dq")),
]
# Finetuning with Adapter / Adapter v2 on 1 GPU
for name, gbs in (
    ("Adapter", (9.10, 5.65, 5.48, 19.98, 12.68, 12.38)),
    ("Adapter v2", (10.71, 7.41, 7.25, 25.51, 18.30, 17.98)),
):
    for (model, quant), gb in zip(
        [("StableLM-3B", q) for q in ("None", "nf4", "nf4-dq")]
        + [("Llama-2-7B", q) for q in ("None", "nf4", "nf4-dq")],
        gbs,
        strict=True,
    ):
        POINTS.append(Point(f"{model} {name} {quant} mb1", gb, None, ADAPTER))
# Finetuning with LoRA on several GPUs (FSDP, activation checkpointing)
for micro, gb in ((1, 4.86), (2, 5.05), (4, 5.88)):
    POINTS.append(Point(f"phi-1.5 LoRA 2×A100 mb{micro}", gb, _lora("phi", micro, gpus=2)))
for micro, gb in ((1, 12.75), (2, 12.94), (4, 13.45)):
    POINTS.append(Point(f"StableLM-3B LoRA 2×A100 mb{micro}", gb, _lora("stablelm", micro, gpus=2)))
for micro, gb in ((1, 22.18), (2, 22.47), (4, 23.39)):
    POINTS.append(Point(f"Llama-2-7B LoRA 2×A100 mb{micro}", gb, _lora("llama2-7b", micro, gpus=2)))
POINTS.append(Point("Llama-2-13B LoRA 4×A100 mb1", 35.57, _lora("llama2-13b", 1, gpus=4)))


# --- LitGPT's config hub table (config_hub/finetune/README.md at 00af8b0d): automated runs on A10G (24 GB), bf16-true,
# Alpaca2k, max_seq_length 512; "Peak memory" is the "Memory used" line that litgpt/finetune/{lora,full}.py print at
# that commit, torch.cuda.max_memory_allocated() / 1e9. Configs: config_hub/finetune/<model>/<method>.yaml at the same
# commit. LoRA (lora.py): rank/targets from the yaml, LM head in 128-token chunks (lm-head-chunks); full (full.py):
# one logits tensor, 128-row cross-entropy slices (ce-chunks), AdamW states in bf16. QLoRA: bnb.nf4 without double
# quantisation, bitsandbytes 0.42.0 (pyproject.toml pins it), PagedAdamW. Batches are padded to their longest sample
# and cut at 512 tokens; the peak is taken at s = 512 (an assumption: Alpaca's longest sample has 1,304 Llama-2
# tokens, so the 2k subset is taken to reach the cap).
HUB = (
    "https://github.com/Lightning-AI/litgpt/blob/00af8b0d9b43eaa3f8c812e3e8bd53ef38cbb49d/config_hub/finetune/README.md"
)
A10G_24 = 24e9
# LitGPT's GPT (litgpt/model.py at 00af8b0d) always builds its own lm_head next to the embedding; only pretrain.py
# ties them (train.tie_embeddings). So the models that tie in transformers (Falcon, Llama 3.2, Gemma) are untied here.
# tiiuae/falcon-7b, TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T, Llama-3.2-1B/3B config.json (LitGPT's
# litgpt/config.py entries at 00af8b0d: padded vocabulary 128256)
FALCON_7B = {
    "model_type": "falcon",
    "hidden_size": 4544,
    "num_hidden_layers": 32,
    "num_attention_heads": 71,
    "multi_query": True,
    "parallel_attn": True,
    "vocab_size": 65024,
    "new_decoder_architecture": False,
    "bias": False,
    "alibi": False,
    "tie_word_embeddings": False,
}
LLAMA_32_1B = {
    "model_type": "llama",
    "hidden_size": 2048,
    "num_hidden_layers": 16,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 8192,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
}
LLAMA_32_3B = {
    "model_type": "llama",
    "hidden_size": 3072,
    "num_hidden_layers": 28,
    "num_attention_heads": 24,
    "num_key_value_heads": 8,
    "intermediate_size": 8192,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
}
TINY_LLAMA = {
    "model_type": "llama",
    "hidden_size": 2048,
    "num_hidden_layers": 22,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "intermediate_size": 5632,
    "vocab_size": 32000,
    "tie_word_embeddings": False,
}
# google/gemma-2b config.json
GEMMA_2B = {
    "model_type": "gemma",
    "hidden_size": 2048,
    "num_hidden_layers": 18,
    "num_attention_heads": 8,
    "num_key_value_heads": 1,
    "head_dim": 256,
    "intermediate_size": 16384,
    "vocab_size": 256000,
    "tie_word_embeddings": False,
}
HUB_MODEL: dict[str, dict[str, Any]] = {
    "falcon-7b": {"hf_config": FALCON_7B},
    "llama-2-7b": {"model": "llama-2-7b"},
    "llama-3-8b": {"model": "llama-3-8b"},
    "llama-3.1-8b": {"model": "llama-3-8b"},
    "llama-3.2-1b": {"hf_config": LLAMA_32_1B},
    "llama-3.2-3b": {"hf_config": LLAMA_32_3B},
    "mistral-7b": {"model": "mistral-7b"},
    "mistral-7b-v0.2": {"model": "mistral-7b"},
    "phi-3": {"model": "phi-3-mini"},
    "stablelm-base-alpha-3b": {"hf_config": STABLELM_3B},
    "tiny-llama": {"hf_config": TINY_LLAMA},
    "gemma-2b": {"hf_config": GEMMA_2B},
}


def _hub(model: str, method: str, micro: int, global_batch: int, rank: int = 32, devices: int = 1) -> dict[str, Any]:
    cfg: dict[str, Any] = dict(
        HUB_MODEL[model],
        precision="bf16",
        seq_len=512,
        train_micro_batch_size_per_gpu=micro,
        gradient_accumulation_steps=global_batch // (micro * devices),
        flash_attention=True,
        cuda_context_gb=0,
    )
    if method == "full" and devices > 1:
        # full.py: FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block}), no_backward_sync
        cfg.update(fsdp="full_shard", world_size=devices, gradient_checkpointing="full")
    if method == "full":
        return dict(cfg, loss_implementation="ce-chunks")
    cfg.update(
        finetune="lora" if method == "lora" else "qlora",
        lora_rank=rank,
        lora_target_modules=["q_proj", "v_proj"],
        loss_implementation="lm-head-chunks",
    )
    if method == "qlora":
        cfg.update(qlora_double_quant=False, bitsandbytes_before_0_43_2=True, qlora_lm_head_4bit=True)
    return cfg


LORA_HEAD = "lora_head: true (LoRA on the LM head) is not modelled"
SAME_AS_1GPU = "the 4×A10G row repeats the 1×A10G figure to the byte: not taken as an independent multi-GPU measurement"
DEVICES = "the table says 4×A10G, the yaml says devices: {}; FSDP full fine-tuning on an unknown device count"
hub_rows: list[tuple[str, float | None, dict[str, Any] | None, str]] = [
    ("falcon-7b lora mb1", 16.69, _hub("falcon-7b", "lora", 1, 8), ""),
    ("falcon-7b lora 4×A10G", 16.69, None, SAME_AS_1GPU),
    ("falcon-7b qlora mb1", 9.44, _hub("falcon-7b", "qlora", 1, 8), ""),
    ("gemma-7b lora mb1", None, None, LORA_HEAD),
    ("gemma-7b lora 4×A10G", None, None, LORA_HEAD),
    ("gemma-2-9b lora mb1", None, None, LORA_HEAD),
    ("gemma-2-9b lora 4×A10G", None, None, LORA_HEAD),
    ("llama-2-7b full 4×A10G", None, _hub("llama-2-7b", "full", 4, 64, devices=4), ""),
    ("llama-3-8b full 4×A10G", None, _hub("llama-3-8b", "full", 4, 64, devices=4), ""),
    ("llama-3.1-8b full 1×A10G", None, None, "the table says 1×A10G, the yaml says devices: 4"),
    ("gemma-2b full 4×A10G", 17.43, _hub("gemma-2b", "full", 1, 16, devices=4), ""),
    ("gemma-2b lora mb2", 12.62, None, LORA_HEAD),
    ("gemma-2b lora 4×A10G", 12.62, None, LORA_HEAD),
    ("gemma-2b qlora mb2", 11.58, None, LORA_HEAD),
    ("gemma-7b qlora mb1", 17.18, None, LORA_HEAD),
    ("gemma-2-2b lora mb2", 14.31, None, LORA_HEAD),
    ("gemma-2-2b qlora mb2", 13.52, None, LORA_HEAD),
    ("gemma-2-9b qlora mb1", 20.92, None, LORA_HEAD),
    ("llama-2-7b lora mb2", 19.77, _hub("llama-2-7b", "lora", 2, 8), ""),
    ("llama-2-7b lora 4×A10G", 19.77, None, SAME_AS_1GPU),
    ("llama-2-7b qlora mb2", 13.68, _hub("llama-2-7b", "qlora", 2, 8), ""),
    ("llama-3-8b lora mb1", 19.73, _hub("llama-3-8b", "lora", 1, 8), ""),
    ("llama-3-8b lora 4×A10G", 19.73, None, SAME_AS_1GPU),
    ("llama-3-8b qlora mb2", 17.41, _hub("llama-3-8b", "qlora", 2, 8), ""),
    ("llama-3.1-8b lora mb1", 19.73, _hub("llama-3.1-8b", "lora", 1, 8), ""),
    ("llama-3.1-8b qlora mb2", 17.41, _hub("llama-3.1-8b", "qlora", 2, 8), ""),
    ("llama-3.2-1b full mb4", 8.70, _hub("llama-3.2-1b", "full", 4, 64), ""),
    ("llama-3.2-1b lora mb1", 4.49, _hub("llama-3.2-1b", "lora", 1, 8), ""),
    ("llama-3.2-1b qlora mb2", 5.53, _hub("llama-3.2-1b", "qlora", 2, 8), ""),
    ("llama-3.2-3b full mb4", 16.51, _hub("llama-3.2-3b", "full", 4, 64), ""),
    ("llama-3.2-3b lora mb1", 9.67, _hub("llama-3.2-3b", "lora", 1, 8), ""),
    ("llama-3.2-3b qlora mb2", 10.30, _hub("llama-3.2-3b", "qlora", 2, 8), ""),
    ("mistral-7b-v0.2 lora mb2", 20.66, _hub("mistral-7b-v0.2", "lora", 2, 8), ""),
    ("mistral-7b-v0.2 lora 4×A10G", 20.66, None, SAME_AS_1GPU),
    ("mistral-7b-v0.2 qlora mb2", 14.29, _hub("mistral-7b-v0.2", "qlora", 2, 8), ""),
    ("mistral-7b lora mb2", 20.66, _hub("mistral-7b", "lora", 2, 8), ""),
    ("mistral-7b lora 4×A10G", 20.66, None, SAME_AS_1GPU),
    ("mistral-7b qlora mb2", 14.29, _hub("mistral-7b", "qlora", 2, 8), ""),
    ("phi-2 full 4×A10G", 14.44, None, DEVICES.format(2)),
    ("phi-2 lora mb4", 13.98, None, LORA_HEAD),
    ("phi-2 lora 4×A10G", 13.98, None, LORA_HEAD),
    ("phi-2 qlora mb4", 14.27, None, LORA_HEAD),
    ("phi-3-mini full mb4", 17.01, _hub("phi-3", "full", 4, 8), ""),
    ("phi-3-mini lora mb4", 19.75, None, LORA_HEAD),
    ("phi-3-mini qlora mb4", 19.13, None, LORA_HEAD),
    ("stablelm-3b full 4×A10G", 21.23, None, DEVICES.format(2)),
    ("stablelm-3b lora mb1", 8.58, _hub("stablelm-base-alpha-3b", "lora", 1, 8), ""),
    ("stablelm-3b lora 4×A10G", 8.58, None, SAME_AS_1GPU),
    ("stablelm-3b qlora mb1", 5.24, _hub("stablelm-base-alpha-3b", "qlora", 1, 8), ""),
    ("tiny-llama full mb4", 14.10, _hub("tiny-llama", "full", 4, 32), ""),
    ("tiny-llama full 4×A10G", 14.10, None, SAME_AS_1GPU),
    ("tiny-llama lora mb8", 13.50, None, LORA_HEAD),
    ("tiny-llama qlora mb8", 16.24, None, LORA_HEAD),
]
for label, gb, cfg, why in hub_rows:
    states = 0.0 if cfg is None else estimate_memory(cfg).model_states / 1e9
    if gb is not None and states > gb:  # a measured peak below the model states one GPU must hold: not the stated run
        cfg, why = (
            None,
            (
                f"measured {gb:.2f} GB is below the {states:.2f} GB of bf16 weights, gradients and AdamW "
                "states one GPU holds in this configuration (yaml devices: 1): not the stated run"
            ),
        )
    POINTS.append(Point(f"LitGPT hub {label}", gb, cfg, why, source=HUB, capacity_gb=A10G_24 / 1e9))


# --- The Hugging Face single-GPU guide at 98513dfd (docs/source/en/perf_train_gpu_one.mdx): bert-large-uncased with a
# sequence-classification head, 512 random sequences of 512 tokens, HF Trainer (early 2022), V100 16 GB; the figure
# is NVML's "used" memory of the whole GPU after training (pynvml, printed as MB but computed as bytes // 1024**2:
# MiB), which includes the CUDA context (1,343 MiB measured in the same guide) and the allocator's reserve.
HF_GUIDE = (
    "https://github.com/huggingface/transformers/blob/98513dfd0db6dab00d26c1ef3a0e5f7410ce2035/"
    "docs/source/en/perf_train_gpu_one.mdx"
)
NVML = "NVML used memory of the GPU (nvidia-smi), MiB"
SEQ_CLS = (
    "BertForSequenceClassification: the estimator's encoder has an MLM head over the vocabulary, not a "
    "pooler + 2-way classifier, and the run's PyTorch / transformers versions (zero_grad set_to_none, AMP "
    "weight copies) are not stated in the guide"
)
for label, mib in [
    ("bs4", 14949),
    ("bs1 GA4", 8681),
    ("bs1 GA4 gradient checkpointing", 6775),
    ("bs4 fp16", 13939),
    ("bs1 GA4 checkpointing fp16", 7275),
    ("bs4 Adafactor", 12295),
    ("bs1 GA4 checkpointing fp16 Adafactor", 4847),
    ("bs4 8-bit Adam", 13085),
    ("bs1 GA4 checkpointing fp16 8-bit Adam", 5363),
]:
    POINTS.append(
        Point(
            f"HF guide bert-large {label}",
            mib * 2**20 / 1e9,
            None,
            SEQ_CLS,
            source=HF_GUIDE,
            measured=NVML,
            capacity_gb=16 * 2**30 / 1e9,
        )
    )


# --- torchtune's README "Optimization flags" table (added in pytorch/torchtune#2003, commit 1814feb1, 2024-11-18):
# recipe full_finetune_single_device, Llama 3.2 3B, batch size 2, max sequence length 4096, bf16 weights (torch AdamW
# states in bf16 too: precision "bf16"), A100; each row adds one technique to the previous. The figure is "Peak
# Memory Active" in GiB: torch.cuda.memory_stats()["active_bytes.all.peak"] (torchtune.training.get_memory_stats),
# allocated blocks plus those freed but still pending on a stream: at least max_memory_allocated. The packed rows
# are every sequence at 4096 tokens; torchtune's TransformerDecoder returns ``self.output(h).float()`` (fp32 logits,
# torchtune/modules/transformer.py at 1814feb1) and the plain cross-entropy runs on them: loss_implementation "hf". From "+ Compile" on every row runs torch.compile, which the estimator does not
# model (it fuses and frees activations): listed, not compared. The differences between those rows are discussed in
# README (optimizer in backward, activation offloading, 8-bit AdamW).
TORCHTUNE = "https://github.com/pytorch/torchtune/blob/1814feb17a9038e1a8053ce93111bd26774a8db6/README.md"
TT_ACTIVE = "torch.cuda.memory_stats()['active_bytes.all.peak'] (GiB; at least max_memory_allocated)"
TT_3B = dict(
    model="llama-3.2-3b",
    precision="bf16",
    seq_len=4096,
    train_micro_batch_size_per_gpu=2,
    flash_attention=True,
    cuda_context_gb=0,
)
TT_COMPILE = "torch.compile (not modelled: compiled graphs fuse ops and keep fewer activations)"
for label, gib, cfg, why in [
    ("baseline (unpacked)", 25.5, None, "unpacked Alpaca: sequence lengths vary and the peak's length is not stated"),
    ("+ packed", 60.0, dict(TT_3B, loss_implementation="hf"), ""),
    ("+ compile", 51.0, None, TT_COMPILE),
    ("+ chunked CE", 42.9, None, TT_COMPILE),
    ("+ activation checkpointing", 24.9, None, TT_COMPILE),
    ("+ optimizer in backward", 23.1, None, TT_COMPILE),
    ("+ activation offloading", 21.8, None, TT_COMPILE),
    ("+ 8-bit AdamW", 17.6, None, TT_COMPILE),
    ("LoRA", 8.5, None, TT_COMPILE),
    ("QLoRA", 4.6, None, TT_COMPILE),
]:
    POINTS.append(
        Point(
            f"torchtune Llama-3.2-3B {label}",
            gib * 2**30 / 1e9,
            cfg,
            why,
            source=TORCHTUNE,
            measured=TT_ACTIVE,
            capacity_gb=80 * 2**30 / 1e9,
        )
    )


def evaluate() -> tuple[list[tuple[Point, float | None]], dict[str, Any]]:
    rows = []
    for p in POINTS:
        pred = None if p.config is None else estimate_memory(p.config).peak_allocated / 1e9
        rows.append((p, pred))
    compared = [(p, pred) for p, pred in rows if p.measured_gb is not None and pred is not None]
    errors = [abs(pred / p.measured_gb - 1) for p, pred in compared]
    oom = [(p, pred) for p, pred in rows if p.measured_gb is None and pred is not None]
    summary = {
        "points": len(POINTS),
        "measured": sum(p.measured_gb is not None for p in POINTS),
        "compared": len(compared),
        "not_expressible": sum(p.config is None for p in POINTS),
        "median_abs_error": statistics.median(errors) if errors else None,
        "within_10pct": sum(e <= 0.10 for e in errors),
        "oom_predicted_over_card": sum(pred > p.capacity_gb for p, pred in oom),
        "oom_runs": len(oom),
    }
    return rows, summary


def main() -> None:
    rows, s = evaluate()
    print("| point | source | measured GB | predicted GB | predicted / measured |")
    print("|---|---|---:|---:|---:|")
    skipped: dict[str, list[str]] = {}
    for p, pred in rows:
        if pred is None:
            skipped.setdefault(p.reason, []).append(p.label + (" (OOM)" if p.measured_gb is None else ""))
            continue
        meas = "OOM" if p.measured_gb is None else f"{p.measured_gb:.2f}"
        ratio = "" if p.measured_gb is None else f"{pred / p.measured_gb:.3f}"
        print(f"| {p.label} | {_source_name(p.source)} | {meas} | {pred:.2f} | {ratio} |")
    print()
    print("Not expressible or not the stated run (listed, not dropped):")
    for reason, labels in skipped.items():
        print(f"- {reason}: {', '.join(labels)}")
    print()
    print(
        f"{s['points']} points ({s['measured']} measured peaks, {s['oom_runs']} expressible OOM runs); "
        f"{s['compared']} compared, {s['not_expressible']} not expressible. "
        f"Median |error| {s['median_abs_error']:.1%}; {s['within_10pct']}/{s['compared']} within ±10%; "
        f"OOM runs predicted above the card: {s['oom_predicted_over_card']}/{s['oom_runs']}."
    )


def _source_name(url: str) -> str:
    if "torchtune" in url:
        return "torchtune README"
    if "perf_train_gpu_one" in url:
        return "HF guide"
    return "LitGPT hub" if "config_hub" in url else "LitGPT tables"


if __name__ == "__main__":
    main()
