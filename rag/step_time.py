"""The time one training step took, or the tokens a second it trained, as users write them and their logs print them.

"I find the iteration time is about 2.5s per iteration" (Megatron-DeepSpeed #199), "每个step大概要10秒",
"one step takes 40 seconds", a tqdm bar's "3.52s/it" or "1.8it/s", Megatron-DeepSpeed's "iter time (s): 2.673" and
Megatron's "elapsed time per iteration (ms): 1234.5". With the model's size, the tokens per step and the GPUs, it
answers "is this speed normal?" as model FLOPs utilisation (``calculators.throughput``). This module only reads.

What a progress bar counts is the framework's step: the HF Trainer's bar counts optimizer steps (``global_step``),
Megatron's iteration is one global batch; a hand-written loop's bar may count micro-batches. The prose's own figure
wins over a log's (the user says which step they mean); among log lines the last one is the steady state (the first
iterations include compilation and warm-up).

A token rate needs no tokens per step: "百川只有2200token/s/gpu" (Baichuan-7B #75) is one GPU's rate, "5000 tokens/s"
the run's. Of several rates in one message the last is the user's ("其它模型可以达到3300token/s/gpu，百川只有2200").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_NUM = r"(\d+(?:\.\d+)?)"
_ABOUT = r"(?:about|around|roughly|approximately|approx\.?|nearly|almost|~|≈|大概|大约|约|差不多|将近)?\s*"
_UNIT = r"(ms|milliseconds?|毫秒|s|secs?|seconds?|秒|min|mins|minutes?|分钟|h|hrs?|hours?|小时)"
_STEP = r"(?:iter(?:ation)?s?|it\b|(?:training |optimi[sz]er |global )?steps?|batch(?:es)?|步|个?\s*step|迭代)"

# Prose: "2.5s per iteration", "40 seconds per step", "10秒/step", "3 s/step".
_PER = re.compile(rf"{_NUM}\s*{_UNIT}\s*(?:/|per|an?|each|every|for (?:each|one|a|every))\s*{_STEP}", re.I)
# "the iteration time is about 2.5s", "step time: 3.1 s", "每步耗时 3 秒", "一个step需要10秒", "each step takes 40 seconds".
_TIME_OF_STEP = re.compile(
    rf"(?:(?:iter(?:ation)?|step) time|time (?:per|of each|for each|for one|for a) (?:iter(?:ation)?|step)|"
    rf"(?:each|one|a|every|per|single|一个|每个|每一?|一)\s*(?:training |optimi[sz]er )?(?:step|iter(?:ation)?|步|迭代))"
    rf"\s*(?:is|was|of|takes?|took|needs?|costs?|需要|要|耗时|用时|花了?|是|为|[:：=])?\s*{_ABOUT}{_NUM}\s*{_UNIT}(?![A-Za-z])",
    re.I,
)
# Logs: tqdm's "3.52s/it" and "1.80it/s"; Megatron-DeepSpeed's "iter time (s): 2.673"; Megatron's
# "elapsed time per iteration (ms): 1234.5".
_TQDM_SECONDS = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*s/it\b")
# Bars that count no training step: loading shards, dataset maps, tokenising, downloads, evaluation, generation.
_NOT_TRAINING_BAR = re.compile(
    r"Loading|Map\b|Filter|Tokeniz|Running tokenizer|Converting|Download|Fetching|Generat|Evaluat|\beval|Saving|"
    r"Processing|Packing|加载|处理|评估",
    re.I,
)
_TQDM_RATE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*it/s\b")
_LOG_SECONDS = re.compile(r"\biter time \(s\):\s*(\d+(?:\.\d+)?)")
_LOG_MS = re.compile(r"\belapsed time per iteration \(ms\):\s*(\d+(?:\.\d+)?)")

#: Seconds per unit as written (lower-cased); "s", "sec", "seconds", "秒" are 1.
_PER_UNIT = {
    **dict.fromkeys(("ms", "millisecond", "milliseconds", "毫秒"), 1e-3),
    **dict.fromkeys(("min", "mins", "minute", "minutes", "分钟"), 60.0),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours", "小时"), 3600.0),
}
#: Outside this range a figure is no step time (a typo, a run's total, a timestamp).
MIN_SECONDS, MAX_SECONDS = 1e-3, 1e5


@dataclass(frozen=True)
class StepTime:
    """Seconds per step, where it was read ("prose": the user's sentence; "log": a pasted log line), as written."""

    seconds: float
    source: Literal["prose", "log"]
    written: str


def _seconds(value: str, unit: str) -> float:
    return float(value) * _PER_UNIT.get(unit.lower(), 1.0)


@dataclass(frozen=True)
class TokenRate:
    """Tokens trained per second, of one GPU (``per_gpu``) or of the whole run, as written."""

    tokens_per_second: float
    per_gpu: bool
    written: str


# "2200token/s/gpu", "3300 tokens/s per GPU", "5000 tokens per second", "每卡每秒 3000 token", "tokens/sec/gpu: 1234".
_RATE = re.compile(
    r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(k)?\s*(?:tokens?|tok)\s*(?:/\s*s(?:ec)?\b|per\s+sec(?:ond)?\b)"
    r"(\s*(?:/\s*(?:gpu|device|card|卡)|per\s+(?:gpu|device|card))\b)?",
    re.I,
)
_RATE_PER_GPU_ZH = re.compile(r"每(?:张)?卡每秒\s*(\d+(?:\.\d+)?)\s*(k)?\s*(?:个\s*)?token")
_LOG_RATE = re.compile(
    r"\btokens?(?:[-_ /]per[-_ ]sec(?:ond)?|/s(?:ec)?)(?:[-_ /]per[-_ ]gpu|/gpu)\s*[:=]\s*(\d+(?:\.\d+)?)", re.I
)


def read_token_rate(text: str) -> TokenRate | None:
    """The last token rate the message states, or None (see the module docstring)."""
    found: list[tuple[int, float, bool, str]] = []
    for m in _RATE.finditer(text):
        value = float(m.group(1).replace(",", "")) * (1000 if m.group(2) else 1)
        found.append((m.start(), value, bool(m.group(3)), m.group(0).strip()))
    for m in _RATE_PER_GPU_ZH.finditer(text):
        found.append((m.start(), float(m.group(1)) * (1000 if m.group(2) else 1), True, m.group(0)))
    for m in _LOG_RATE.finditer(text):
        found.append((m.start(), float(m.group(1)), True, m.group(0)))
    found = [f for f in found if 0 < f[1] <= 1e9]
    if not found:
        return None
    _, value, per_gpu, written = max(found)
    return TokenRate(value, per_gpu, written)


def _training_bar(text: str, at: int) -> bool:
    """Whether the progress bar around ``at`` is not one of the bars that count something else (shards, maps)."""
    line = text[text.rfind("\n", 0, at) + 1 : at]
    return not _NOT_TRAINING_BAR.search(line)


def read_step_time(text: str) -> StepTime | None:
    """The seconds one step took, or None when the message states none (see the module docstring for which wins)."""
    for pattern in (_PER, _TIME_OF_STEP):
        for m in pattern.finditer(text):
            if pattern is _PER and text[m.start(2) : m.end(2)] == "s" and text[m.end(2) : m.end(2) + 3] == "/it":
                continue  # "3.52s/it" is a progress bar's, read below as a log
            secs = _seconds(m.group(1), m.group(2))
            if MIN_SECONDS <= secs <= MAX_SECONDS:
                return StepTime(secs, "prose", m.group(0).strip())
    found: list[tuple[int, float, str]] = []
    for m in _TQDM_SECONDS.finditer(text):
        if not _training_bar(text, m.start()):
            continue
        found.append((m.start(), float(m.group(1)), m.group(0)))
    for m in _TQDM_RATE.finditer(text):
        if float(m.group(1)) > 0 and _training_bar(text, m.start()):
            found.append((m.start(), 1.0 / float(m.group(1)), m.group(0)))
    for m in _LOG_SECONDS.finditer(text):
        found.append((m.start(), float(m.group(1)), m.group(0)))
    for m in _LOG_MS.finditer(text):
        found.append((m.start(), float(m.group(1)) / 1000.0, m.group(0)))
    found = [f for f in found if MIN_SECONDS <= f[1] <= MAX_SECONDS]
    if not found:
        return None
    _, secs, written = max(found)
    return StepTime(secs, "log", written)
