"""What in a message can select one cause of what the user reports (issue #10: "a diagnosis opens with the
most likely cause(s) for what the user reported").

A short report ("训练时损失一直不降", "OOM", "training is very slow") names a symptom and nothing that tells
its usual causes apart; retrieval still ranks a card first, but opening with that card's cause as *the* cause
is a guess presented as a finding. Evidence that does select a cause is something concrete the top card is
about: a pasted error, traceback, log or nvidia-smi table (the readers and retrieval worked on its exact
text), an error identifier or version the card lists, or a mechanism, tool or setting the message names that
the card names too ("deepspeed … OVERFLOW", "zero3 … 很慢", "fp16 … NaN"). Symptom words ("loss",
"out of memory", "slow") are what the user saw, not which cause: they never select one on their own.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, Field

from .cards import Card
from .glossary import find_terms
from .parts import Part, prose_of

#: Glossary concepts that describe what was observed or a generic quantity, not a mechanism or a tool: a
#: message and a card sharing only these share the symptom, not its cause.
GENERIC_CONCEPTS: frozenset[str] = frozenset(
    {
        "GPU",
        "GPU memory",
        "batch size",
        "gradient",
        "out of memory",
        "large",
        "small",
        "parameters",
        "error",
        "fine-tuning",
        "multi-GPU",
        "large batch",
        "small batch",
        "optimizer step",
        "loss",
        "memory usage",
        "effect",
        "slow",
        "hang",
        "throughput",
        "GPU utilization",
        "worse results",
        "after a while",
        "keeps growing",
        "memory keeps growing",
        "convergence",
        "instability",
        "update",
        "how much GPU memory",
        "peak memory",
        "per GPU",
        "config",
        "process killed",
        "mismatch",
        "logged loss",
        "loss differs",
        "model weights",
        "saved model",
        "tokens",
        "progress bar",
        "vram",
        "consumer GPU",
        "auto",
        "command line",
        "timeout",
        "evaluation",
    }
)
#: Pasted kinds whose exact text the diagnosis readers and retrieval worked on.
CONCRETE_PASTES: frozenset[str] = frozenset({"traceback", "error", "log", "nvidia_smi"})
# "RuntimeError", "OutOfMemoryError", "OVERFLOW", "NCCL", "`stage3_prefetch_bucket_size`", "4.46": identifiers a
# card's title or symptoms can list verbatim.
_IDENTIFIER = re.compile(
    r"\b[A-Z][a-zA-Z]*(?:Error|Exception|Warning)\b|\b[A-Z]{4,}\b|`([^`\n]{3,60})`|\b[a-z]+_[a-z_]+\b|\b\d+\.\d+(?:\.\d+)?\b"
)


_FAMILIES: tuple[tuple[Literal["memory", "loss", "speed"], re.Pattern[str]], ...] = (
    ("memory", re.compile(r"out of memory|(?<![a-z])oom|显存|内存|\bmemory\b|\bvram\b|爆", re.I)),
    # ("backward(loss)", "loss.backward()" name the variable in code, not a loss curve)
    (
        "loss",
        re.compile(
            r"(?<![(.])\bloss\b(?![)(=]|\.\w)|损失|\bnan\b|收敛|converg|diverg|不降|不下降|梯度爆炸|grad_?norm", re.I
        ),
    ),
    (
        "speed",
        re.compile(
            r"\bslow|慢|\bhang|卡住|卡死|利用率|utili[sz]|速度|throughput|耗时|"
            # ("shouldn't it work faster than fp32?": the speed asked about, not a slowdown reported; not "加速", which
            # names the accelerate library and hardware support as often: "accelerate加速", "是否支持AMD显卡的加速")
            r"\bfaster\b|\bspeed(?:s|ed)?[- ]?ups?\b|更快|变快|\bit/s\b|\bs/it\b",
            re.I,
        ),
    ),
)


#: A run that stops making progress, and memory running out (which a hang report may also carry).
HANG = re.compile(r"\bhang(?:s|ing)?\b|\bstuck\b|\bfreez\w*|卡住|卡死|卡主|没有?反应|不动了", re.I)
# (… and "卡在" (stuck at), which a reported hang with its memory held also says, but which "显卡在" contains too: only
# where the memory words are set aside, not where it alone would make a question about a hang)
_HANG_OR_STUCK_AT = re.compile(HANG.pattern + r"|卡在", re.I)
_MEMORY_STILL_HELD = re.compile(
    r"显存(?:仍然|依然|还是?|一直)?(?:被)?占(?:用|着)|(?:gpu |vram |cuda )?memory (?:is |stays |remains )?(?:still )?"
    r"(?:allocated|occupied|held|in use)",
    re.I,
)
_OUT_OF_MEMORY = re.compile(r"out of memory|(?<![a-z])oom|爆|不足|不够|\bkilled\b", re.I)


#: All-caps words that name the device or the tracker's form, not a cause ("CUDA out of memory", "[HELP]").
_GENERIC_IDENTIFIERS = frozenset({"cuda", "nvidia", "vram", "gpus", "help", "note", "todo", "issue", "question"})


_TRAINING = re.compile(r"训练|微调|\bfine[- ]?tun\w*|finetun\w*|\btrain\w*|\bsft\b", re.I)


def reports_training_failure(prose: str) -> bool:
    """Whether the prose reports a symptom of a training run ("训练时损失一直不降", "混合数据 finetune 会卡住",
    "training hangs"): a failed run is in scope even when no card, setting or pasted log is found for it."""
    return symptom_family(prose) != "generic" and bool(_TRAINING.search(prose))


#: A card's size ("2张V100 32G显存", "单卡16G内存", "A100 80GB memory"): the hardware, not a memory symptom.
_CAPACITY = re.compile(
    r"(?:[A-Za-z]\d{2,4}|卡|\bgpus?|\bcards?)\s*[,，(（]?\s*\d+\s*g(?:b|ib)?\s*(?:的)?\s*(?:显存|内存|\bmemory\b|\bvram\b)",
    re.I,
)


def symptom_family(prose: str) -> Literal["memory", "loss", "speed", "generic"]:
    """The first symptom family the prose names (memory before loss before speed), else generic; a GPU's size is
    not a memory symptom ("为什么2张V100 32G显存，跟4张V100的训练速度一样？" asks about speed)."""
    prose = _CAPACITY.sub(" ", prose)
    if _HANG_OR_STUCK_AT.search(prose) and not _OUT_OF_MEMORY.search(prose):
        # a hang with its memory still held ("卡住（显存仍然占用）", GANet #44) is no memory symptom
        prose = _MEMORY_STILL_HELD.sub(" ", prose)
    return next((name for name, rx in _FAMILIES if rx.search(prose)), "generic")


class Evidence(BaseModel):
    """What a message gives that could tell causes apart, read once per message."""

    pasted: list[str] = Field(default_factory=list, description="Kinds of the non-prose parts.")
    concepts: list[str] = Field(
        default_factory=list, description="Mechanisms, tools and settings named (glossary concepts, not symptoms)."
    )
    identifiers: list[str] = Field(
        default_factory=list, description="Error names, all-caps words, config keys and versions, lower-cased."
    )
    family: Literal["memory", "loss", "speed", "generic"] = Field(
        "generic", description="What kind of symptom is reported: decides what to ask the user to paste."
    )

    @property
    def concrete(self) -> bool:
        """A pasted error, traceback, log or nvidia-smi table."""
        return bool(CONCRETE_PASTES & set(self.pasted))

    def selects(self, card: Card) -> bool:
        """Whether something in the message is what ``card`` is about (so its cause may open the answer)."""
        if self.concrete:
            return True
        anchors = card_anchors(card)
        if set(self.concepts) & anchors.concepts:
            return True
        return any(i in anchors.text for i in self.identifiers)


class Anchors(BaseModel):
    """The concepts and the lower-cased text of a card's titles and symptoms (what a cause is recognised by)."""

    concepts: frozenset[str]
    text: str


def named_concepts(text: str) -> list[str]:
    """Glossary concepts named in ``text`` that are a mechanism, tool or setting, not a symptom."""
    return sorted({t.en[0] for t in find_terms(text) if t.en and t.en[0] not in GENERIC_CONCEPTS})


@lru_cache(maxsize=512)
def _anchors(card_id: str, text: str) -> Anchors:
    return Anchors(concepts=frozenset(named_concepts(text)), text=text.lower())


def card_anchors(card: Card) -> Anchors:
    text = "\n".join([card.title_en, card.title_zh, *card.symptoms_en, *card.symptoms_zh])
    return _anchors(card.id, text)


def card_in_family(card: Card, family: str) -> bool:
    """Whether a card's titles or symptoms speak of the symptom family the user reports (a loss that does not fall
    is not explained by a memory card that retrieval ranked close); every card is in the generic family."""
    rx = next((pattern for name, pattern in _FAMILIES if name == family), None)
    return rx is None or bool(rx.search(card_anchors(card).text))


def read_evidence(text: str, parts: list[Part]) -> Evidence:
    """The evidence in a whole message (prose, pasted configs and commands included)."""
    prose = prose_of(parts)
    identifiers = sorted(
        {(m.group(1) or m.group(0)).lower() for m in _IDENTIFIER.finditer(text) if len(m.group(1) or m.group(0)) >= 3}
        - _GENERIC_IDENTIFIERS
    )
    return Evidence(
        pasted=sorted({p.kind for p in parts if p.kind != "prose"}),
        concepts=named_concepts(text),
        identifiers=identifiers,
        family=symptom_family(prose),
    )


# "ValueError: --tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7", "TypeError: fully_shard() got an
# unexpected keyword argument 'ignored_params'": an exception line's message, the exact text a card can quote.
_EXCEPTION_LINE = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\s*:\s*(\S[^\n]*)")
#: How much of an error message a card must quote to be about that error (its start: where the error's words are).
_QUOTED_PREFIX = 36


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


# "[rank6]:[E ProcessGroupNCCL.cpp:523] [Rank 6] Watchdog caught collective operation timeout: WorkNCCL(…)": an error
# logged by a C++ or Python logger (its "[E …]" / "ERROR" level), the message after the bracketed prefixes.
_LOGGED_ERROR = re.compile(r"(?:\[E\s[^\]\n]*\]|\bERROR\b\s*[:\]-]?)\s*(?:\[[^\]\n]*\]\s*)*([A-Za-z][^\n]*)")


def error_messages(text: str) -> list[str]:
    """The messages of the exception lines and logged errors in ``text`` (lower-cased, spaces collapsed), long enough
    to name an error (a bare "CUDA out of memory." or a file path is not one)."""
    found = list(_EXCEPTION_LINE.finditer(text)) + list(_LOGGED_ERROR.finditer(text))
    out = [_normal(m.group(1)) for m in found]
    return list(dict.fromkeys(m for m in out if len(m) >= 20))


def quotes_error(card: Card, messages: list[str]) -> bool:
    """Whether ``card``'s titles or symptoms quote one of the pasted error ``messages`` (its first words verbatim):
    that card is about the very error the user pasted, whatever retrieval ranked first."""
    text = _normal(card_anchors(card).text)
    return any(m[:_QUOTED_PREFIX] in text for m in messages)
