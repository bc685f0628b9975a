"""A learning-rate question about a change of scale: the reference run's learning rate, the scale it had and the
scale the user moves to, and the learning rate the user proposes, read from the prose.

People ask it in a few fixed shapes ("4卡学习率为0.0001，那么单卡应该除以4吗", RT-DETR #79; "配置文件里面的学习率都是默认对应
八卡嘛？…我单卡训练的话是不是只需要将初始学习率除以8", PaddleDetection #5871; "samples per GPU=2, nums of GPUs=8 (batch size
= 2 * 8 = 16), learning rate=0.02 … change it into … (batch size = 8 * 1 = 8), learning rate=0.01?", mmsegmentation
#2026). The answer is arithmetic on those numbers (calculators.batch.scale_learning_rate): the linear rule and the
square-root rule, and whether the user's proposal is one of them. The scale is the global batch where the message
changes it in so many words ("batch size from 256 to 64", two products "= 16" … "= 8"), else the GPU count: whether
the learning rate follows it depends on whether the framework's batch setting is per GPU, which the answer says. Two
bare batches beside two GPU counts ("You use 8 GPU training, batchsize=128, … I use a single GPU training,
batchsize=16", ttfnet #2) are not read: per GPU or total is exactly what is unknown.

Only a question that asks about the learning rate is read, and only when both scales are written: a learning rate
for a setup the user did not state is no answer.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from .acts import asked_sentences
from .slots import BATCH_CHANGE, CN_DIGITS

#: A learning rate named in an asking sentence.
_ASKS_LR = re.compile(r"learning[-_ ]?rate|(?<![A-Za-z_])lr(?![A-Za-z_])|学习率", re.I)

_NUM = r"(\d+(?:\.\d+)?(?:e-?\d+)?)"
#: A learning rate with its value: "lr=0.016", "学习率为0.0001", "learning rate of 1e-4".
_LR_VALUE = re.compile(
    r"(?:learning[-_ ]?rate|(?<![A-Za-z_])lr(?![A-Za-z_])|学习率)\s*(?:=|:|：|为|是|of|is|was|be|设为|设置为)?\s*"
    + _NUM,
    re.I,
)
#: … not "lr = 1 GPU's lr * 8" (nanoT5 #34): a count
_COUNT_AFTER = re.compile(r"\s*(?:gpu|卡|x\b|\*)", re.I)
#: The value a sentence proposes for it: "change lr = 0.001 to 0.000125", "adjusted to lr=0.002", "改成0.002".
_LR_TO = re.compile(
    r"(?:\bto|改成|改为|调整为|调成|设为|变成|变为|->|→)\s*(?:lr\s*=\s*|learning[-_ ]?rate\s*(?:of\s*)?)?" + _NUM, re.I
)
#: A factor the user proposes instead: "除以4", "divide it by 8".
_DIVIDE_BY = re.compile(
    r"除以\s*(\d{1,4})(?![\d.])|divided?\s+(?:it\s+|the\s+(?:lr|learning rate)\s+)?by\s+(\d{1,4})\b", re.I
)

#: A GPU count as people write it: "4卡", "八卡", "单卡", "8 GPU", "a single GPU", "one GPU", "4 GPUs".
_GPUS = re.compile(
    # ("32 V100 GPUs", NeMo #6649: the card's name between the count and its noun)
    r"(?<![A-Za-z0-9_.])(\d{1,3})\s*(?:张|块)?\s*(?:(?:nvidia\s+|tesla\s+)?[A-Za-z]{1,3}\d{2,4}[A-Za-z]*\s*)?(?:卡|gpus?\b|GPU|显卡)|(单|一|两|双|二|三|四|六|八|十六)\s*(?:张|块)?\s*(?:卡|gpu|显卡)|"
    # ("I have one Titan XP GPU now", mmdetection #4993: the card's name between; not "one of the GPUs")
    r"\b(?:a\s+)?(single|one)\s+(?:(?!(?:of|the|more|other|per)\b)[A-Za-z][A-Za-z0-9-]*\s+){0,2}gpus?\b",
    re.I,
)
#: The global batch said to stay: "while retaining the same total batchsize" (HAT #9), "总batch不变".
_SAME_TOTAL = re.compile(
    r"(?:same|retain\w*|keep\w*|unchanged)\s+(?:the\s+)?(?:same\s+)?(?:total|global|effective)\s+batch|"
    r"(?:总|全局|有效)\s*batch\s*(?:[-_ ]?size)?\s*(?:不变|保持不变|一致)|保持\s*(?:总|全局|有效)\s*batch",
    re.I,
)
#: Accumulation steps written with their value: "grad_accumulation=32", "梯度累积 4".
_GA_VALUE = re.compile(r"(?:accumulat\w*|梯度累[积加])\D{0,12}?(\d{1,4})(?![\d.])", re.I)
#: A global batch written as its product, "batch size = 2 * 8 = 16" (mmsegmentation #2026: the two runs compared),
#: or as a total set equal to something, "The total batch size is $NUM_GPUS$*$TRAIN.BATCH_SIZE$ = 16" (TimeSformer #59).
_BATCH_TOTAL = re.compile(
    r"(?:batch[-_ ]?size|batchsize|批大小|总batch)\D{0,12}?\d{1,5}\s*[*x×]\s*\d{1,5}(?:\s*[*x×]\s*\d{1,5})?\s*=\s*(\d{1,7})\b|"
    r"(?:total|global|effective)\s+batch[-_ ]?size[^\n=]{0,60}?=\s*(\d{1,7})\b",
    re.I,
)
#: A batch with its value ("batchsize=128", "batch size of 512"): two different ones mean the per-GPU batch changed
#: too, so a GPU count alone says nothing of the global batch.
_BATCH_VALUE = re.compile(
    r"(?:batch[-_ ]?size|batchsize|(?<![A-Za-z_])bs(?![A-Za-z_]))\W{0,6}(?:=|:|：|为|是|of|is)?\W{0,6}(\d{1,6})(?![\d.*x×])",
    re.I,
)


#: A rate the user set by the rule and reports ("So following the Linear Scaling Rule, I changed the learning rate to
#: 0.0025 … Is it reasonable to get such result?", mmdetection #4993): the question about the result is about that
#: rate too.
_RULE_APPLIED = re.compile(
    r"(?:follow\w*|according to|by|using|applied|按照?|根据|依据)\s*(?:the\s+)?(?:linear|线性)\s*(?:scaling\s*)?"
    r"(?:rule|缩放|规则|规律)[^.。\n]{0,40}?(?:learning[-_ ]?rate|(?<![A-Za-z_])lr(?![A-Za-z_])|学习率)",
    re.I,
)


class LrChange(BaseModel):
    """What an LR-scaling question states; every number is the user's."""

    base_learning_rate: float | None = Field(None, description="The learning rate of the reference run, if written.")
    old_scale: int = Field(description="The reference run's global batch, or its GPU count (basis 'gpus').")
    new_scale: int = Field(description="The same for the run the user moves to.")
    basis: Literal["batch", "gpus", "kept"] = Field(
        description="What changes: the global batch, the GPU count (per-GPU batch or total unknown), or the GPU count "
        "with the global batch kept ('retaining the same total batchsize')."
    )
    proposed_learning_rate: float | None = Field(None, description="The learning rate the user proposes, if any.")
    proposed_factor: float | None = Field(
        None, description="What the proposal multiplies the reference rate by ('除以8': 0.125; 0.016 → 0.002: 0.125)."
    )


#: Words before a count that make it the user's run ("我是用的两卡", "I use a single GPU", "I only have one GPU") …
_MINE_BEFORE = re.compile(r"我|(?<![A-Za-z])(?:I|my|we|our)(?![A-Za-z])|现在|now\b", re.I)
#: "1 GPU's lr" (nanoT5 #34): the count whose learning rate is the reference
_POSSESSIVE = re.compile(r"\d{1,3}\s*gpu'?s\s+(?:lr|learning rate)", re.I)
#: … or the reference the learning rate was set for ("论文", "配置文件…默认对应八卡", "You use 8 GPU training").
_REFERENCE_BEFORE = re.compile(
    r"论文|paper|config|配置|默认|default|official|官方|原来|原本|original|相对于|compared|(?<![A-Za-z])you(?:r)?(?![A-Za-z])|"
    r"were trained|readme|文档",
    re.I,
)


def _whose(text: str, start: int) -> str:
    """Whose a number at ``start`` is, from the words before it in its clause: "mine", "reference" or ""."""
    before = re.split(r"[。；;，,？！?!\n]|\.\s", text[max(0, start - 40) : start])[-1]
    if _REFERENCE_BEFORE.search(before) or _POSSESSIVE.match(text, start):
        return "reference"
    return "mine" if _MINE_BEFORE.search(before) else ""


def _gpu_counts(text: str) -> list[tuple[int, str]]:
    """Every GPU count in ``text`` with whose it is."""
    out = []
    for m in _GPUS.finditer(text):
        n = int(m.group(1)) if m.group(1) else CN_DIGITS[m.group(2)] if m.group(2) else 1
        if 0 < n <= 1024:
            out.append((n, _whose(text, m.start())))
    return out


def _change(values: list[tuple[int, str]]) -> tuple[int, int] | None:
    """(the reference's value, the user's): the user's own where one is marked, else the last; the reference marked
    as such where one is, else the first that differs."""
    if len({n for n, _ in values}) < 2 or all(w == "reference" for _, w in values):
        return None  # (both the maintainers' configs, TimeSformer #59: which one the user moves to is not said)
    new = next((n for n, w in reversed(values) if w == "mine"), None)
    if new is None:
        new = next(n for n, w in reversed(values) if w != "reference")
    old = next((n for n, w in values if w == "reference" and n != new), None)
    if old is None:
        old = next((n for n, _ in values if n != new), None)
    return None if old is None else (old, new)


#: A per-GPU count written before its unit: "2imgs/gpu", "16 images per GPU".
_PER_GPU_COUNT = re.compile(r"(\d{1,4})\s*(?:imgs?|images?|samples?)\s*(?:/|per\s+)\s*(?:gpu|card|device)", re.I)


def _same_total_per_line(prose: str) -> bool:
    """Two runs, each on its own line as per-GPU count × GPUs = the same batch ("1) 2imgs/gpu, 8gpus, batchsize=16 …
    2) 16imgs/gpu, 1gpu, batchsize=16", mmdetection #3240): the global batch is kept, whatever the GPU count."""
    totals = []
    for line in prose.splitlines():
        batch, gpus, per_gpu = _BATCH_VALUE.search(line), _GPUS.search(line), _PER_GPU_COUNT.search(line)
        if (
            batch
            and gpus
            and per_gpu
            and gpus.group(1)
            and int(per_gpu.group(1)) * int(gpus.group(1)) == int(batch.group(1))
        ):
            totals.append(int(batch.group(1)))
    return len(totals) >= 2 and len(set(totals)) == 1


def _float(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if 0 < value < 10 else None


def read_lr_change(prose: str) -> LrChange | None:
    """The reference learning rate (when written), the two scales and the proposal of an LR-scaling question; None
    unless the message asks about the learning rate and writes two different scales."""
    # (the asking clause, or the line it is on: "4卡学习率为0.0001，那么单卡应该除以4吗" asks in its second clause)
    lines = prose.splitlines()
    asked = [next((ln for ln in lines if a in ln), a) for a in asked_sentences(prose)]
    if not any(_ASKS_LR.search(a) for a in asked) and not _RULE_APPLIED.search(prose):
        return None
    rates = [
        (m.start(), v)
        for m in _LR_VALUE.finditer(prose)
        if (v := _float(m.group(1))) is not None and not _COUNT_AFTER.match(prose, m.end())
    ]
    proposals = [
        (m.start(), v)
        for m in _LR_TO.finditer(prose)
        if (v := _float(m.group(1))) is not None and _ASKS_LR.search(prose[max(0, m.start() - 40) : m.start() + 40])
    ]
    # the reference is the first rate written that is not itself the proposal ("lr = 0.001 to 0.000125": 0.001)
    reference = next(((p, v) for p, v in rates if not any(abs(p - q) < 12 for q, _ in proposals)), None)
    proposed: float | None = None
    if reference is not None:
        proposed = next((v for p, v in proposals if p > reference[0] and v != reference[1]), None)
        if proposed is None:
            later = [v for p, v in rates if p > reference[0] and v != reference[1]]
            proposed = later[-1] if later else None
    if (change := BATCH_CHANGE.search(prose)) is not None:
        old, new, basis = int(change.group(1)), int(change.group(2)), "batch"
    elif (
        totals := _change(
            [
                (int(m.group(1) or m.group(2)), _whose(prose, m.start(1) if m.group(1) else m.start(2)))
                for m in _BATCH_TOTAL.finditer(prose)
            ]
        )
    ) is not None:
        (old, new), basis = totals, "batch"
    elif (gpus := _change(_gpu_counts(prose))) is not None:
        total_kept = bool(_SAME_TOTAL.search(prose))
        if len({int(m.group(1)) for m in _BATCH_VALUE.finditer(prose)}) > 1 and not total_kept:
            return None  # the per-GPU batch changed as well ("单卡 batch size 32 … 双卡 … 16"): unknown global batches
        # the total batch said to stay, or accumulation that makes up the GPUs dropped ("32 GPUs … single gpu …
        # grad_accumulation=32", NeMo #6649)
        made_up = any(int(m.group(1)) == gpus[0] // gpus[1] > 1 for m in _GA_VALUE.finditer(prose))
        (old, new), basis = gpus, "kept" if total_kept or made_up or _same_total_per_line(prose) else "gpus"
    else:
        return None
    if min(old, new) <= 0:
        return None
    base = reference[1] if reference is not None else None
    factor = proposed / base if proposed is not None and base else None
    if factor is None and (div := _DIVIDE_BY.search(prose)):
        factor = 1 / int(div.group(1) or div.group(2))
        proposed = base * factor if base else None
    return LrChange(
        base_learning_rate=base,
        old_scale=old,
        new_scale=new,
        basis=basis,  # type: ignore[arg-type]
        proposed_learning_rate=proposed,
        proposed_factor=factor,
    )
