"""Recompute the numbers an answer states, when the answer also states the setup.

Three shapes are judged, all through the calculators: an explicit product ``a × b (× c) = r`` (is the
arithmetic right?); an effective batch written as micro × GA while the answer itself says how many GPUs
there are (``calculators.resolve_batch`` gives the real value); and a memory figure for a full fine-tune
with Adam in mixed precision or fp32, without sharding, offload or adapters, that is below the model states
alone (``calculators.estimate_memory``: 16 B/param before any activation). A number for a setup the text
does not state is never judged, and a figure above the model states is never called wrong (the activations
depend on batch and sequence, which such sentences rarely state).
"""

from __future__ import annotations

import math
import re

from ..batch import resolve_batch
from ..errors import CalculatorError
from ..memory import estimate_memory
from .rules import EFFX as EFF
from .rules import GPU_TERM, NEG, has

_NUM = r"(\d{1,3}(?:,\d{3})+|\d{1,8})"
# Neither end may run into another product: "1 × 8 × 2 = 4 × 2 × 2 = 16" is two products equal to 16,
# not "1 × 8 × 2 = 4" nor "2 × 2 = 16"; and a product does not start after a multiplication sign whose left factor
# carries a unit ("1 x 4 GPUs x 64 x 8192 = 2,097,152" is not "64 x 8192 = 2,097,152").
_TIMES = r"\s*[×xX*✕]\s*"
_PRODUCT_EQ = re.compile(
    r"(?<![\w.\-+])(?<!\d[×xX*✕])(?<!\d\s[×xX*✕])(?<!\d[×xX*✕]\s)(?<!\d\s[×xX*✕]\s)(?<![×✕*]\s)(?<![×✕*])"
    r"(?<!\s[xX]\s)"
    + _NUM
    + r"((?:"
    + _TIMES
    + _NUM
    + r"){1,4})\s*[=＝]\s*"
    + _NUM
    + r"(?!\d|\.\d|[eE][-+]?\d|\s*[kKmMbB万千亿]|\s*[×xX*✕]\s*\d)"
)
_GPUS = re.compile(
    r"(?:(\d{1,4})\s*(?:张|块|个)?\s*(?:卡|(?:[A-Za-z]?\d{2,4}\s*)?GPUs?\b|张\s*\S{0,8}卡)|"
    r"(?:world_size|num_processes|nproc_per_node|--nproc_per_node|--num_processes)\s*[=:：]?\s*(\d{1,4}))",
    re.I,
)


def stated_gpu_count(answer: str) -> int | None:
    """The data-parallel GPU count the answer states, when it states exactly one (else None)."""
    counts = {int(a or b) for a, b in _GPUS.findall(answer) if (a or b)}
    counts.discard(0)
    return counts.pop() if len(counts) == 1 else None


def check_numbers(sentence: str, answer: str) -> tuple[str, str, str] | None:
    """``(rule, correction_en, correction_zh)`` when a stated number is wrong for the stated setup, else None."""
    for m in _PRODUCT_EQ.finditer(sentence):
        factors = [int(m.group(1).replace(",", ""))] + [int(x.replace(",", "")) for x in re.findall(_NUM, m.group(2))]
        r = int(m.group(len(m.groups())).replace(",", ""))
        product = math.prod(factors)
        if product != r:
            expr = " × ".join(str(f) for f in factors)
            return ("arithmetic", f"{expr} = {product}, not {r}.", f"{expr} = {product}，不是 {r}。")
        a, b = factors[0], factors[1]
        c = factors[2] if len(factors) > 2 else None
        if (
            c is None
            and has(EFF, sentence)
            and not has(GPU_TERM, re.sub(r"_per_gpu|per[ -]GPU", " ", sentence, flags=re.I))
        ):
            n = stated_gpu_count(answer)
            if n and n > 1:
                try:
                    res = resolve_batch(train_micro_batch_size_per_gpu=a, gradient_accumulation_steps=b, world_size=n)
                except CalculatorError:
                    return None
                tb = res.train_batch_size
                return (
                    "effective_batch_recomputed",
                    f"With the {n} GPUs this answer states, the effective batch is {a} × {b} × {n} = {tb}, not {r}: "
                    "every data-parallel GPU contributes its own micro-batches.",
                    f"按这段回答里说的 {n} 张卡，有效批次是 {a} × {b} × {n} = {tb}，不是 {r}：每张数据并行的卡都贡献自己的微批次。",
                )
    return None


_MODEL_SIZE = re.compile(r"(?<![\w.])(\d{1,3}(?:\.\d)?)\s*[Bb]\b(?!\s*(?:tokens?|/s))")
_GB = re.compile(r"(?<![\w.])(\d{1,4}(?:\.\d{1,2})?)\s*(?:GB|GiB|G\b|G(?=显存|的显存|\s*显存|卡))", re.I)
_FULL_FT = r"(?:全量|全参|full[- ]?(?:parameter[- ])?fine[- ]?tun\w*|full[- ]?ft\b|full fine-tune)"
_ADAM = r"adam"
_STATES_PRECISION = r"(?:混合精度|mixed[- ]precision|\bamp\b|fp32|float32|单精度|\bbf16\b|\bfp16\b|半精度)"
_NOT_PLAIN = r"(?:zero|fsdp|offload|卸载|lora|qlora|8-?bit|4-?bit|量化|quantiz\w*|分片|shard\w*|deepspeed|megatron|张量并行|tensor parallel)"
# A figure for one part of the states ("156 GB for the fp32 master weights and Adam moments alone") is not a total.
_PARTIAL = r"(?:master|moments?\b|optimizer states?|(?:bf16|fp16|fp32|half|16-bit) weights|the weights|gradients|主权重|权重|梯度|优化器)"
_NEEDS = r"(?:需要|要|占用?|够|放得下|能放下|跑得动|needs?|requires?|takes?|uses?|fits?|enough)"


def check_memory_claim(sentence: str) -> tuple[str, str, str] | None:
    """A memory figure below the model states of the full Adam fine-tune the sentence states, else None."""
    if (
        not (
            has(_FULL_FT, sentence)
            and has(_ADAM, sentence)
            and has(_STATES_PRECISION, sentence)
            and has(_NEEDS, sentence)
        )
        or has(_NOT_PLAIN, sentence)
        or has(NEG, sentence)
        or has(_PARTIAL, sentence)
    ):
        return None
    sizes, gbs = _MODEL_SIZE.findall(sentence), _GB.findall(sentence)
    if len(set(sizes)) != 1 or not gbs:
        return None
    # Several figures ("needs 20 GB, so it fits a 24 GB card"): wrong only when every one is below the states.
    billions, claimed = float(sizes[0]), max(float(g) for g in gbs)
    if has(r"混合|mixed|\bamp\b", sentence):
        precision = "bf16-mixed"
    elif has(r"fp32|float32|单精度", sentence):
        precision = "fp32"
    else:  # "bf16"/"fp16" alone may mean pure 16-bit training: judge against its smaller states (a lower bound)
        precision = "bf16"
    try:
        est = estimate_memory(
            {"num_params": billions * 1e9, "finetune": "full", "optimizer": "adamw", "precision": precision}
        )
    except CalculatorError:
        return None
    states_gb = est.model_states / 1e9
    if claimed >= 0.8 * states_gb:
        return None
    bpp = round(est.model_states / (billions * 1e9))
    return (
        "memory_below_model_states",
        f"A full fine-tune of a {sizes[0]}B model with AdamW ({precision}) holds {bpp} bytes per parameter of "
        f"weights, gradients and optimizer states: about {states_gb:.0f} GB per GPU before any activation, "
        f"not {gbs[0]} GB (without ZeRO/FSDP sharding, offload or LoRA).",
        f"{sizes[0]}B 模型用 AdamW（{precision}）全量微调，权重、梯度和优化器状态每个参数 {bpp} 字节："
        f"每卡约 {states_gb:.0f} GB（还没算激活），不是 {gbs[0]} GB（未用 ZeRO/FSDP 分片、offload 或 LoRA 时）。",
    )
