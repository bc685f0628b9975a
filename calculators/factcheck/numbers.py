"""Recompute the numbers an answer states, when the answer also states the setup.

Only two shapes are judged, both through the calculators: an explicit product ``a × b (× c) = r`` (is the
arithmetic right?) and an effective batch written as micro × GA while the answer itself says how many GPUs
there are (then ``calculators.resolve_batch`` gives the real value). A number for a setup the text does not
state is never judged.
"""
from __future__ import annotations

import re

from ..batch import resolve_batch
from ..errors import CalculatorError
from .rules import EFF, GPU_TERM, has

_PRODUCT_EQ = re.compile(r"(?<![\d.])(\d{1,6})\s*[×xX*✕]\s*(\d{1,6})(?:\s*[×xX*✕]\s*(\d{1,6}))?\s*[=＝]\s*(\d{1,8})(?!\d|\.\d)")
_GPUS = re.compile(r"(?:(\d{1,4})\s*(?:张|块|个)?\s*(?:卡|(?:[A-Za-z]?\d{2,4}\s*)?GPUs?\b|张\s*\S{0,8}卡)|"
                   r"(?:world_size|num_processes|nproc_per_node|--nproc_per_node|--num_processes)\s*[=:：]?\s*(\d{1,4}))", re.I)


def stated_gpu_count(answer: str) -> int | None:
    """The data-parallel GPU count the answer states, when it states exactly one (else None)."""
    counts = {int(a or b) for a, b in _GPUS.findall(answer) if (a or b)}
    counts.discard(0)
    return counts.pop() if len(counts) == 1 else None


def check_numbers(sentence: str, answer: str) -> tuple[str, str, str] | None:
    """``(rule, correction_en, correction_zh)`` when a stated number is wrong for the stated setup, else None."""
    for m in _PRODUCT_EQ.finditer(sentence):
        a, b, c, r = (int(g) if g else None for g in m.groups())
        product = a * b * (c or 1)
        if product != r:
            expr = f"{a} × {b}" + (f" × {c}" if c else "")
            return ("arithmetic", f"{expr} = {product}, not {r}.", f"{expr} = {product}，不是 {r}。")
        if c is None and has(EFF, sentence) and not has(GPU_TERM, re.sub(r"_per_gpu|per[ -]GPU", " ", sentence, flags=re.I)):
            n = stated_gpu_count(answer)
            if n and n > 1:
                try:
                    res = resolve_batch(train_micro_batch_size_per_gpu=a, gradient_accumulation_steps=b, world_size=n)
                except CalculatorError:
                    return None
                tb = res.train_batch_size
                return ("effective_batch_recomputed",
                        f"With the {n} GPUs this answer states, the effective batch is {a} × {b} × {n} = {tb}, not {r}: "
                        "every data-parallel GPU contributes its own micro-batches.",
                        f"按这段回答里说的 {n} 张卡，有效批次是 {a} × {b} × {n} = {tb}，不是 {r}：每张数据并行的卡都贡献自己的微批次。")
    return None
