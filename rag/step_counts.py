"""What a step-count question states besides the batch: the samples, the epochs, and the steps the run showed.

"33000 条数据, epochs=3, 4 张卡 … 实际进度条显示是 193 steps" and the HF Trainer banner ("Num examples = 800,000",
"Num Epochs = 1", "Total optimization steps = 800,000") are the most common way users ask about steps. A senior
engineer checks the count the run showed against the arithmetic on the user's numbers and, when they differ,
back-solves the batch the run really used: 99,000 samples / 193 steps ≈ 513 per step = 16 × 32 × 1, so one
data-parallel group, not 4. This module only reads; ``calculators.batch.resolve_batch`` does the arithmetic.

An approximate count ("1800多条", "about 2k samples") is not a value the user stated, so it is never put into the
calculator as the dataset size; it is kept (``samples_about``) only to back-solve a step count the run showed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# "2 million samples", "20k条问答对", "1000 examples", "a 20 image dataset".
_DATASET = re.compile(
    r"(?<![A-Za-z0-9_.,])(\d[\d,]*(?:\.\d+)?)\s*(k|m|million|thousand|万|千|w)?\s*(多|余)?\s*(?:training\s+)?"
    r"(?:(?:image|sample|example)\s+dataset|samples|examples|sequences|rows|datasets?|data points|instances|images|sentences|pairs|条|个样本|个数据|(?<=[\dkKwW万千])数据(?!并行|集)|张图片?|个问答对|对问答)",
    re.I,
)
# The HF Trainer's start-of-training banner: "  Num examples = 5,498".
_BANNER_EXAMPLES = re.compile(r"\bNum examples\s*=\s*(\d[\d,]*)\b")
# "训练样本数：14339", "数据集大小约为33000", "dataset size: 10000": the count after its label.
_LABELLED = re.compile(
    r"(?:样本数|样本量|数据量|数据条数|数据集大小|数据集规模|dataset size|number of (?:training )?samples|num_samples)"
    r"\s*(约|大约|大概|约为|about|around|~)?\s*(?:[:：=]|为|是|有)?\s*(约|大约|about|around|~)?\s*(\d[\d,]*)(?![\d.]*\s*(?:%|[kKmMwW万千]))",
    re.I,
)
_BANNER_EPOCHS = re.compile(r"\bNum Epochs\s*=\s*(\d[\d,]*)\b")
_BANNER_STEPS = re.compile(r"\bTotal optimization steps\s*=\s*(\d[\d,]*)\b", re.I)
_SCALE = {"k": 1e3, "thousand": 1e3, "千": 1e3, "m": 1e6, "million": 1e6, "万": 1e4, "w": 1e4}
_APPROX = re.compile(r"多|余|左右|约|大约|大概|\babout\b|\baround\b|\broughly\b|~|\+", re.I)

# "--num_train_epochs 3", "num_train_epochs: 3.0", "epochs=3", "epoch为3", "epoch设置为300", "3 epochs", "训练3个epoch".
_EPOCHS = re.compile(
    r"(?<![/A-Za-z_])(?:num_train_epochs|num_epochs|max_epochs|epochs?)(?![A-Za-z_])[\"']?\s*(?:[:=]|为|是|设置?为|设成|--?)?\s*(\d+(?:\.\d+)?)\b"
    r"|(?<![\d.])(\d+(?:\.\d+)?)\s*(?:个\s*)?(?:epochs?\b|轮)",
    re.I,
)
# The step count the run showed: "进度条显示是193steps", "step数却有3500", "I had 241700 steps",
# "Total optimization steps=196", "each epoch has 10009 steps", "5 steps per Epoch".
_SHOWN = r"(?:也(?:是|有)|需要训练|显示需要|显示(?:的|是|为)?|实际(?:上)?(?:是|有|为)?|却(?:有|是)|总共(?:有|是)?|一共(?:有|是)?|变成了?|只有|shows?|showing|says?|said|got|gets?|getting|see|seeing|saw|had|has|is|are|was|were|=|：|:|是|为|有)"
_OBSERVED = re.compile(
    r"(?<![A-Za-z_])(?:steps?|step数|(?<!累计)(?<!累积)(?<!更新)步数|进度条|progress[- ]?bar)\s*(?:数)?\s*"
    + _SHOWN
    + r"\s*(?:约|大约|about|around|~)?\s*(\d[\d,]*)(?!\s*[.\d]*\s*(?:%|s\b|秒|it/s|epochs?))"
    r"|" + _SHOWN + r"\s*(?:约|大约|about|around|only|just|~)?\s*(\d[\d,]*(?:\.\d+)?)\s*(w|万|k)?\s*(?:个\s*)?"
    r"(?:total\s+)?(?:optimi[sz]ation\s+)?(?:steps?\b|步(?!长))",
    re.I,
)
# An issue title or a line that starts with the count: "5 steps per Epoch with 20 image dataset".
_OBSERVED_LINE = re.compile(
    r"^[ \t]*(\d[\d,]*)\s*(?:optimi[sz]ation\s+)?steps?\s+(?:per|each|an?|every)\s+epoch\b", re.I | re.M
)
# "after 300 steps", "every 10 steps": a moment in the run, not its length.
_MOMENT = re.compile(r"(?:after|every|each|at|around|在|每|第)\s*$", re.I)
# "应该是48步", "should be 11,112 steps": what the user expected, not what the run showed.
_EXPECTED = re.compile(
    r"(?:应该|应当|本应|理论上|按理|预期|预计|should|expected|would|supposed to)\s*(?:be\s*)?$", re.I
)
_PER_EPOCH_BEFORE = re.compile(r"(?:每个?|一个|per|each|every)\s*epoch[^，。,.;\n]{0,6}$", re.I)
_PER_EPOCH = re.compile(
    r"^\s*(?:steps?\s*)?(?:per|each|an?|every|/)\s*epoch|^\s*(?:steps?\s*)?(?:每个?|一个)\s*epoch", re.I
)


@dataclass(frozen=True)
class StepCounts:
    """The numbers besides the batch that a step count depends on, as the message states them."""

    samples: int | None = None  # stated exactly: goes into the calculator
    samples_about: int | None = None  # "1800多条": only to back-solve an observed count
    epochs: float | None = None
    observed_steps: int | None = None  # the count the run showed (its total, or per epoch)
    observed_per_epoch: bool = False


def _number(text: str) -> float | None:
    """The number written, or None; a digit run too long for a float (30,000 "1"s) is not a count of anything."""
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def dataset_size_in(text: str) -> int | None:
    """The number of training samples the message states exactly, or None (none, several, or approximate)."""
    exact, _about = _dataset_sizes(text)
    return exact


def _dataset_sizes(text: str) -> tuple[int | None, int | None]:
    """(exact, approximate): one stated count of samples, or the one written with 多/about."""
    exact: set[int] = set()
    about: set[int] = set()
    for m in _BANNER_EXAMPLES.finditer(text):
        value = _number(m.group(1))
        if value and value >= 1:
            exact.add(int(value))
    for m in _LABELLED.finditer(text):
        value = _number(m.group(3))
        if value and value >= 1:
            (about if m.group(1) or m.group(2) else exact).add(int(value))
    for m in _DATASET.finditer(text):
        before, after = text[max(0, m.start() - 6) : m.start()], text[m.end(1) : m.end(1) + 3]
        value = _number(m.group(1))
        if value is None:
            continue
        value *= _SCALE.get((m.group(2) or "").lower(), 1)
        if value < 1 or value != int(value):
            continue
        approximate = m.group(3) or _APPROX.search(before) or _APPROX.search(after)
        (about if approximate else exact).add(int(value))
    if about:
        return None, (about.pop() if len(about) == 1 and not exact else None)
    return (exact.pop() if len(exact) == 1 else None), None


def _epochs_in(text: str) -> float | None:
    found: set[float] = set()
    for m in _BANNER_EPOCHS.finditer(text):
        found.add(float(m.group(1).replace(",", "")))
    if not found:
        for m in _EPOCHS.finditer(text):
            value = _number(m.group(1) or m.group(2))
            if value is not None and 0 < value <= 100_000:
                found.add(value)
    return found.pop() if len(found) == 1 else None


def _observed_in(text: str) -> tuple[int | None, bool]:
    banner = {int(v) for m in _BANNER_STEPS.finditer(text) if (v := _number(m.group(1)))}
    if len(banner) == 1:
        return banner.pop(), False
    found: set[tuple[int, bool]] = set()
    for m in _OBSERVED.finditer(text):
        group = 1 if m.group(1) else 2
        if _MOMENT.search(text[max(0, m.start() - 8) : m.start()]) or _MOMENT.search(
            text[max(0, m.start(group) - 8) : m.start(group)]
        ):
            continue
        if _EXPECTED.search(text[max(0, m.start() - 12) : m.start()]):
            continue
        value = _number(m.group(group))
        if value is None:
            continue
        if group == 2 and m.group(3):
            value *= _SCALE[m.group(3).lower()]
        if value < 1 or value != int(value):
            continue
        per_epoch = bool(
            _PER_EPOCH.search(text[m.end() : m.end() + 20])
            or _PER_EPOCH_BEFORE.search(text[max(0, m.start() - 20) : m.start()])
        )
        found.add((int(value), per_epoch))
    for m in _OBSERVED_LINE.finditer(text):
        value = _number(m.group(1))
        if value is not None and value >= 1 and value == int(value):
            found.add((int(value), True))
    if len({value for value, _ in found}) == 1:
        # "5 steps per Epoch" in the title and "I'm only getting 5 steps" in the body: one count, per epoch
        return max(found, key=lambda f: f[1])
    return None, False


def read_step_counts(text: str) -> StepCounts:
    """Samples, epochs and the step count the run showed, from the whole message (prose, pasted logs and configs)."""
    exact, about = _dataset_sizes(text)
    observed, per_epoch = _observed_in(text)
    return StepCounts(
        samples=exact,
        samples_about=about,
        epochs=_epochs_in(text),
        observed_steps=observed,
        observed_per_epoch=per_epoch,
    )
