"""Whether a retrieved card answers *this* message or another one (issue #10 "only relevant cards", issue #11).

Retrieval ranks cards by words, and a card about one setup shares most of its words with questions about another:
"Can a 24 GB card fully fine-tune a 7B model?" is retrieved for "8 × A100 80G, full fine-tune of a 7B model, OOM",
the ChatGLM P-Tuning card for a full fine-tune of Qwen. Such a card is not cited when the message states a setup that
contradicts what the card is about, read from structure, never from one question's wording:

* **method** — a card whose title is about adapters (LoRA, QLoRA, DoRA, P-Tuning) does not answer a message that
  states another method (a full fine-tune; P-Tuning for a LoRA run), nor a card whose title is about a full fine-tune
  ("Can a 24 GB card fully fine-tune a 7B model?") a message that states an adapter method; a P-Tuning card, a method
  no script runs by default, does not answer a message that never names it (:func:`unnamed_method_conflict`), and a
  LoRA card does not explain a diagnosis of a run that never names an adapter method (:func:`unnamed_adapter_conflict`);
* **model size** — a card whose lead opens with one model size's numbers does not answer a message that states only
  other sizes (see :func:`rag.opening.size_fits`; a message that states no size may still be about it);
* **GPU memory** — a card whose lead opens with one GPU capacity ("A single 24 GB card …") does not answer a message
  that states a different one;
* **training stack** — a lead about one stack does not answer a message that names only others
  (:func:`rag.opening.stack_conflict`);
* **GPU generation** — a card whose title names a GPU older than Ampere as the cause ("bf16 needs an Ampere or newer
  GPU", "FlashAttention only supports Ampere GPUs or newer") does not answer a message whose GPUs all have the
  feature (A100, RTX 4090: compute capability 8.0+), nor the bf16 card a run in fp16 that never names bf16;
* **training stack in the title** — a card whose title's subject names a stack ("… in LLaMA-Factory") does not answer
  a message that names only other stacks, the ones they are built on included (a plain HF Trainer script is not a
  LLaMA-Factory run; an HF Trainer card still answers a LLaMA-Factory user);
* **phase** — a card whose title's subject is the evaluation phase does not answer a message that never names
  evaluation (validation, prediction, an eval setting), nor one whose subject is saving a checkpoint a message that
  never names saving (:func:`save_conflict`);
* **model family** — a card whose title's subject is one model family's own behaviour (Qwen3-Next / Qwen3.5's
  linear-attention kernels) does not answer a message that never names that family or its kernels
  (:func:`model_family_conflict`);
* **speed** — a card whose title's subject is how fast training runs (and not also its memory) does not answer a
  message that never names speed or time (:func:`speed_conflict`), nor one whose subject is a hang a message that names
  no hang, timeout or failed connection (:func:`hang_conflict`);
* **machine count** — a card whose title's subject is several machines ("multi-node") does not answer a message that
  never names more than one;
* **GPU count** — a card whose title's subject is several GPUs (DataParallel, "GPU 0 uses more than the others",
  multi-GPU NCCL, "adding GPUs pools memory") does not answer a message whose prose says it runs on one GPU and
  names no more;
* **platform** — a card whose title's subject is one platform other than NVIDIA GPUs on Linux (AMD GPUs with ROCm,
  Ascend NPUs, Windows) does not answer a message that never names it, and a card whose title's subject is GeForce
  RTX 40-series cards ("… on RTX 4090s …") does not answer a message whose stated GPUs are all other models
  (:func:`platform_conflict`);
* **question kind** — a setup guide for one stack (a title "Setting … in LLaMA-Factory") answers how to configure
  it or what its settings amount to, not a diagnosis, fit or yes/no question about a run on it
  (:func:`guide_act_conflict`).
"""

from __future__ import annotations

import re
from typing import Any

from calculators.errors import CalculatorError
from calculators.presets import get_gpu

from .acts import Act
from .cards import Card
from .evidence import card_in_family
from .opening import (
    MODEL_FAMILIES,
    SHARDING_IN_TITLE,
    STAGES_IN_TITLE,
    AskedQuestion,
    card_topic,
    stack_conflict,
    unnamed_title_stack,
)
from .setup import Setup

#: Adapter methods a card title can be about, as the setup's ``finetune`` values they answer. "alpaca-lora" (a
#: repository's name) is not LoRA the method.
_METHOD_IN_TITLE: dict[str, re.Pattern[str]] = {
    "lora": re.compile(r"(?<![\w-])(?:Q|Do)?LoRA\b", re.I),
    "ptuning": re.compile(r"\bP-?Tuning\b|\bprefix[-_ ]tuning\b", re.I),
    # "Can a 24 GB card fully fine-tune a 7B model?" is about updating every weight, not about a LoRA run's memory
    "full": re.compile(r"\bfull(?:y)?[- ]?(?:parameter )?fine-?tun\w*|\bfull-parameter\b", re.I),
}
#: The ``finetune`` values each method card answers (QLoRA is LoRA on a quantized base).
_ANSWERS: dict[str, frozenset[str]] = {
    "lora": frozenset({"lora", "qlora"}),
    "ptuning": frozenset({"ptuning"}),
    "full": frozenset({"full"}),
}
# A GPU capacity in a lead's first sentence ("A single 24 GB card").
_CAPACITY = re.compile(r"(\d+(?:\.\d+)?)\s?(?:GB|GiB|G)\b")
#: Capacities within this fraction of each other are the same card (a "24 GB" 3090 reads 23.7 GiB).
_CAPACITY_TOLERANCE = 0.1


# A card title that names a pre-Ampere GPU as the cause: "needs an Ampere … or newer GPU", "requires Ampere",
# "only supports Ampere GPUs or newer", "needs Ampere+".
_NEEDS_AMPERE = re.compile(r"\b(?:needs?|requires?|only supports?)\s+(?:an?\s+)?Ampere\b|\bAmpere\+", re.I)
#: The feature such a card is about (read from its title) and how a setup states that it is not in use.
_FEATURE_IN_TITLE: dict[str, re.Pattern[str]] = {
    "bf16": re.compile(r"\bbf16\b", re.I),
    "flash_attention": re.compile(r"\bFlash-?Attention\b", re.I),
}


# The subject of a title (before its first colon outside quotes; after it for "Myth: …") names several GPUs.
_SEVERAL_GPUS = re.compile(
    r"\bmulti-?(?:GPU|node)\b|\bGPU 0\b|DataParallel|\b(?:several|multiple|more|adding|other) GPUs\b|\branks\b|"
    r"\bdifferent GPU models\b|\bin data parallel\b",
    re.I,
)


def gpu_count_conflict(card: Card, setup: Setup, asked: AskedQuestion | None = None) -> str:
    """Why a card about several GPUs does not answer a message whose prose says one GPU and names no more ('' otherwise:
    "两张A40，我想使用其中一张" may be the DataParallel run the card is about)."""
    ws = setup.values.get("world_size")
    if ws is None or ws.source != "message" or ws.value != 1 or setup.conflicts.get("world_size"):
        return ""
    if asked is not None and asked.several_gpus:
        return ""
    if not _SEVERAL_GPUS.search(card_topic(card).title_subject):
        return ""
    return "the card is about several GPUs, the message states one"


#: A title whose subject is a launch over several machines ("LLaMA-Factory on multiple nodes", "Multi-node training
#: slower than one node").
_SEVERAL_NODES_TITLE = re.compile(r"\bmulti-?node\b|\b(?:multiple|several) nodes\b", re.I)


def node_count_conflict(card: Card, asked: AskedQuestion | None) -> str:
    """Why a card about several machines does not answer a message that never names more than one ('' otherwise)."""
    if asked is None or asked.several_nodes or not _SEVERAL_NODES_TITLE.search(card_topic(card).title_subject):
        return ""
    return "the card is about several machines, the message names one at most"


#: A title whose subject is the evaluation phase ("Training fits but evaluation OOMs").
_EVAL_TITLE = re.compile(r"\beval(?:uation)?\b", re.I)


def phase_conflict(card: Card, asked: AskedQuestion) -> str:
    """Why a card about the evaluation phase does not answer a message that never names evaluation
    (:data:`rag.opening.NAMES_EVALUATION`; '' otherwise)."""
    if asked.names_evaluation or not _EVAL_TITLE.search(card_topic(card).title_subject):
        return ""
    return "the card is about evaluation, the message never names it"


#: A title whose subject is saving a checkpoint or the model ("Training runs fine but saving a checkpoint … OOMs"), not
#: one that saves memory ("ZeRO-1/2 … barely save memory").
_SAVE_TITLE = re.compile(r"\bsav(?:e|ing)\s+(?:a\s+|the\s+)?(?:checkpoint|model)", re.I)


def save_conflict(card: Card, asked: AskedQuestion) -> str:
    """Why a card about what saving a checkpoint costs does not answer a message that never names saving
    (:data:`rag.opening.NAMES_SAVING`; '' otherwise): it shares every OOM's and sharding's words."""
    if asked.names_saving or not _SAVE_TITLE.search(card_topic(card).title_subject):
        return ""
    return "the card is about saving a checkpoint, the message never names saving"


def model_family_conflict(card: Card, asked: AskedQuestion) -> str:
    """Why a card about one model family's own behaviour (:data:`rag.opening.MODEL_FAMILIES`) does not answer a
    message that never names that family ('' otherwise)."""
    subject = card_topic(card).title_subject
    for family, (in_title, _) in MODEL_FAMILIES.items():
        if in_title.search(subject) and family not in asked.model_families:
            return "the card is about a model family the message does not name"
    return ""


#: A title about memory ("Where LoRA memory goes", "QLoRA memory: …"): a LoRA card about an error (DDP, fp16 unscale,
#: missing target modules) answers whoever pastes that error, named method or not.
_MEMORY_TITLE = re.compile(r"\bmemory\b", re.I)
#: A title whose subject is how fast training runs ("Multi-node training slower than one node", "Tiny micro batches
#: underuse the GPU"), not also its memory ("DoRA is slower and uses more memory than LoRA": :data:`_MEMORY_TITLE`).
_SPEED_TITLE = re.compile(r"\bslow(?:er|est)?\b|\bfaster\b|\bspeed\b|\bthroughput\b|\bunderuse\b", re.I)
#: A title whose subject is a run that hangs ("… generate() very slow or hanging" answers a hang too).
_HANG_TITLE = re.compile(r"\bhangs?\b|\bhanging\b", re.I)


def speed_conflict(card: Card, asked: AskedQuestion) -> str:
    """Why a card about training speed does not answer a message that never names speed or time
    (:data:`rag.opening.NAMES_SPEED`; '' otherwise): such cards share a multi-GPU or sharding setup's words with
    memory questions about it. Measured on the dev set (main at 9bc32a2): the four such cards were cited in the first
    three for 86 messages, 48 of which name no speed or time, and none of those 48 expects one (with the gate: card
    hit@3 +1 question in each language, none lost)."""
    subject = card_topic(card).title_subject
    if asked.names_speed or not _SPEED_TITLE.search(subject) or _MEMORY_TITLE.search(subject):
        return ""
    if asked.names_hang and _HANG_TITLE.search(subject):
        return ""  # "ZeRO-3 much slower …, generate() very slow or hanging" answers a hang too
    return "the card is about training speed, the message never names speed or time"


#: A title whose subject is a launch that hangs before training starts ("Multi-node launch hangs at start-up").
_START_HANG_TITLE = re.compile(r"\blaunch\b.*\bhangs?\b.*\bstart", re.I)


def hang_conflict(card: Card, asked: AskedQuestion) -> str:
    """Why a card about a launch that hangs at start-up does not answer a message that never names a hang, a timeout or
    a failed connection or launch (:data:`rag.opening.NAMES_HANG`; '' otherwise): it shares a multi-node setup's
    words with out-of-memory and learning-rate questions about one. (Measured on the dev set: the same gate on every
    card whose subject is a hang lost questions about ZeRO-3 + MoE and mixed-modality hangs worded in ways the
    pattern misses, so it stays on start-up hangs.)"""
    if asked.names_hang or not _START_HANG_TITLE.search(card_topic(card).title_subject):
        return ""
    return "the card is about a launch that hangs at start-up, the message never names a hang"


def title_stack_conflict(card: Card, asked: AskedQuestion) -> str:
    """Why a card whose title names one training stack as its subject ("Setting batch size … in LLaMA-Factory", "An
    HF Trainer step is …") does not answer a message that names only other stacks ('' otherwise). Unlike
    :func:`rag.opening.stack_conflict` the card's stack does not bring the ones it is built on: a LLaMA-Factory card
    is not the answer for a plain HF Trainer script, while an HF Trainer card still answers a LLaMA-Factory user (the
    message's stacks do bring theirs)."""
    theirs = frozenset(asked.stacks)
    mine = card_topic(card).title_stacks
    if not theirs and unnamed_title_stack(card, asked, mine):
        return f"the card's title is about {'/'.join(sorted(mine))}, the message names no training stack"
    if not theirs or not mine or mine & theirs:
        return ""
    return f"the card's title is about {'/'.join(sorted(mine))}, the message names {', '.join(sorted(theirs))}"


def card_methods(card: Card) -> frozenset[str]:
    """The adapter methods the card's title is about (empty for a card about no particular method)."""
    methods = frozenset(m for m, rx in _METHOD_IN_TITLE.items() if rx.search(card.title_en))
    # a title that compares an adapter with a full fine-tune ("LoRA is barely faster than full fine-tuning") is the
    # adapter's card
    return methods - {"full"} if methods - {"full"} else methods


def method_conflict(card: Card, setup: Setup) -> bool:
    """The message states a fine-tuning method that none of the card's adapter methods is."""
    stated = setup.get("finetune")
    methods = card_methods(card)
    return bool(stated and methods) and not any(stated in _ANSWERS[m] for m in methods)


#: How a message names P-Tuning / prefix tuning, read on its ASCII words (``AskedQuestion.message_words``): the method's
#: names and the settings only it has (ChatGLM's ``pre_seq_len`` and ``prefix_projection``, PEFT's ``num_virtual_tokens``).
_NAMES_PTUNING = re.compile(
    r"\bp ?tuning\w*|\bptuning\w*|\bprefix[ _]?tuning\b|\bpre_seq_len\b|\bprefix_projection\b|\bnum_virtual_tokens\b"
)


def unnamed_method_conflict(card: Card, setup: Setup, asked: AskedQuestion) -> str:
    """Why a card about P-Tuning does not answer a message that never names P-Tuning ('' otherwise). Unlike LoRA, which
    many scripts run by default (LLaMA-Factory's ``finetuning_type`` defaults to lora) and users often leave unnamed,
    P-Tuning is never a default: a run that uses it names it or its settings. Measured on the dev set (main at
    d8b8186): the ChatGLM P-Tuning card was cited in the first three for 10 messages that never name P-Tuning (ChatGLM
    LoRA, QLoRA and full runs, 5 of them in the blind-mined ho* files) and expected for none of them; a LoRA card was
    still expected for 19 of the 68 messages that never name LoRA, so the rule does not extend to it."""
    if "ptuning" not in card_methods(card) or setup.get("finetune") == "ptuning":
        return ""
    if _NAMES_PTUNING.search(asked.message_words):
        return ""
    return "the card is about P-Tuning, the message never names it"


def unnamed_adapter_conflict(card: Card, setup: Setup, asked: AskedQuestion, act: Act | None) -> str:
    """Why a card about LoRA's memory does not explain a diagnosis of a run that never names an adapter method ('' when
    it may): the run may be a full fine-tune, and a card on where LoRA's memory goes or how ZeRO stages act on LoRA states a
    cause the message gives no ground for. Fit and explain questions keep such cards (people asking what fine-tuning a
    70B model takes are often weighing LoRA). Measured on the dev set (main at 47568d6): for diagnoses whose message
    names no adapter method, quantized base or PEFT, a LoRA memory card was cited in the first three 11 times and
    expected for none of them (hit@3 en +1, nothing lost)."""
    if act != "diagnose" or "lora" not in card_methods(card) or not _MEMORY_TITLE.search(card.title_en):
        return ""
    if setup.get("finetune") or asked.names_adapter:
        return ""
    return "the card is about LoRA, the diagnosed run never names an adapter method"


def size_conflict(card: Card, asked: AskedQuestion) -> bool:
    """The card's lead opens with model sizes and the message states only other ones."""
    sizes = card_topic(card).lead_sizes
    return bool(sizes and asked.sizes) and not sizes & set(asked.sizes)


def capacity_conflict(card: Card, setup: Setup) -> bool:
    """The card's lead opens with a GPU capacity and the message states a different one."""
    stated = setup.get("gpu_memory_gb")
    capacities = [float(x) for x in _CAPACITY.findall(card_topic(card).lead_first)]
    if not stated or not capacities:
        return False
    return all(abs(c - float(stated)) > _CAPACITY_TOLERANCE * max(c, float(stated)) for c in capacities)


def _values(setup: Setup, key: str) -> list[Any]:
    """Every value the message gives for ``key`` (the kept one and the conflicting ones); none when only assumed."""
    kept = setup.values.get(key)
    if kept is None or kept.source == "assumed":
        return []
    return [kept.value, *(c.value for c in setup.conflicts.get(key, []))]


def _has_ampere(gpu: Any) -> bool | None:
    """Whether a GPU name is a card with compute capability 8.0+ (the presets' ``bf16`` flag); None if unknown."""
    try:
        return get_gpu(str(gpu)).bf16
    except CalculatorError:
        return None


def hardware_conflict(card: Card, setup: Setup, asked: AskedQuestion | None = None) -> str:
    """Why a card whose cause is a pre-Ampere GPU is not this message's cause ('' when it may be). A message that
    names the card's feature anywhere ("switched to fp16 because V100 has no bf16", "disabled flash_attn and still get
    the FlashAttention2 error") may still be about it, and so may one that names an older GPU anywhere ("worked on the
    H100, fails on the V100")."""
    if not _NEEDS_AMPERE.search(card.title_en):
        return ""
    older = asked is not None and "pre_ampere_gpu" in asked.features
    gpus = _values(setup, "gpu")
    if gpus and not older and all(_has_ampere(g) for g in gpus):
        return f"the card's cause is a GPU older than Ampere, the message states {', '.join(map(str, gpus))}"
    features = {f for f, rx in _FEATURE_IN_TITLE.items() if rx.search(card.title_en)}
    named = set(asked.features) if asked is not None else set()
    precisions = _values(setup, "precision")
    if "bf16" in features and "bf16" not in named and precisions and not any("bf16" in str(p) for p in precisions):
        return f"the card is about bf16, the message trains in {precisions[0]} and never names bf16"
    return ""


def error_title_conflict(card: Card, asked: AskedQuestion) -> str:
    """Why a card about one error message does not answer a message that never quotes it ('' otherwise): four
    consecutive words of the error (case and punctuation aside) must be in the message. Such cards answer the users
    who paste that error; a general question about ZeRO-3 or fp16 is not theirs. A card is about one error when its
    title opens with it in double quotes or its title's subject ends with it in quotes ("Fixing DeepSpeed
    'train_batch_size is not equal to …'"), not a log line or a warning (:func:`rag.opening.error_grams`). Measured
    on the dev set (main at d8b8186) for the second form: such cards were cited in the first three for 90 messages
    that quote no 4 words of their error where they were not expected, and for 11 where they were (9 of them with
    another expected card beside them).

    The same error reads differently across versions (DeepSpeed's "OVERFLOW! Rank 0 Skipping step" and its later
    "[Rank 0] Overflow detected. Skipping step. Attempted loss scale"), and a card lists the wordings it explains as
    its English symptoms: four consecutive words of any of them count too (:func:`_symptom_grams`)."""
    grams = card_topic(card).error_grams
    if not grams:
        return ""
    text = f" {asked.message_words} "
    if any(f" {g} " in text for g in grams | _symptom_grams(card)):
        return ""
    return "the card explains an error message the message does not quote"


def _symptom_grams(card: Card) -> frozenset[str]:
    """Every four consecutive words (lower-cased, punctuation aside) of each of the card's English symptoms."""
    out: set[str] = set()
    for symptom in card.symptoms_en:
        words = re.findall(r"[a-z0-9_]+", symptom.lower())
        out.update(" ".join(words[i : i + 4]) for i in range(len(words) - 3))
    return frozenset(out)


#: The platforms a card's title subject can be about (the keys of :data:`rag.opening.PLATFORMS`).
_PLATFORM_IN_TITLE: dict[str, re.Pattern[str]] = {
    "amd": re.compile(r"\bAMD\b|\bROCm\b"),
    "ascend": re.compile(r"\bAscend\b|\bNPUs?\b"),
    "windows": re.compile(r"\bWindows\b"),
}
#: A title whose subject is GeForce RTX 40-series cards as a family ("Multi-GPU training on RTX 4090s …"), and the
#: GPU presets of that family.
_RTX40_TITLE = re.compile(r"\bRTX ?40(?:\d0)?s\b|\bRTX 40[- ]series\b", re.I)
_RTX40_GPU = re.compile(r"(?<![0-9])40[5-9]0", re.I)


def platform_conflict(card: Card, setup: Setup, asked: AskedQuestion) -> str:
    """Why a card about one platform does not answer this message ('' otherwise): a card about AMD GPUs, Ascend NPUs
    or Windows (its title's subject names it) answers users on that platform, who name it somewhere in what they paste
    (a GPU model, a ``torch_npu`` frame, a ``C:\\`` path); a card about RTX 40-series cards does not answer a message
    whose stated GPUs are all other models. Measured on the dev set (main at 47568d6): the three platform cards were
    cited in the first three for 31 messages that never name their platform, and expected for none of them; the RTX
    40 card for 6 messages stating only A800/A100/3090 GPUs, expected for none."""
    subject = card_topic(card).title_subject
    named = set(asked.platforms)
    for platform, rx in _PLATFORM_IN_TITLE.items():
        if rx.search(subject) and platform not in named:
            return f"the card is about {platform}, the message never names it"
    if _RTX40_TITLE.search(subject):
        gpus = _values(setup, "gpu")
        if gpus and not any(_RTX40_GPU.search(str(g)) for g in gpus):
            return f"the card is about RTX 40-series GPUs, the message states {', '.join(map(str, gpus))}"
    return ""


#: A title whose subject is a guide to setting things up ("Setting batch size, accumulation and DeepSpeed in
#: LLaMA-Factory", "How to set …").
_GUIDE_TITLE = re.compile(r"^(?:Setting|How to set|Configuring)\b", re.I)
#: The acts whose question a setup guide answers: how to set something, and what the settings amount to.
_GUIDE_ACTS: frozenset[str] = frozenset({"configure", "batch_arithmetic"})


def guide_act_conflict(card: Card, act: Act | None) -> str:
    """Why a setup guide for one training stack does not answer this question ('' otherwise): such a card ("Setting
    batch size, accumulation and DeepSpeed in LLaMA-Factory") answers how to configure that stack, while a diagnosis,
    a fit question or a yes/no about a run on it is answered by the card about its cause; retrieval brings the guide
    for every message that names the stack and a batch setting. Measured on the dev set (main at d8b8186): the
    LLaMA-Factory guide was cited in the first three for 34 questions of other acts and expected for 1 of them (with
    another expected card beside it); for configure questions 1 of 5. A guide that names no stack ("How to set batch
    sizes: fit the micro batch first …") is the usual remedy for an OOM and is not held to the act."""
    if act is None or act in _GUIDE_ACTS:
        return ""
    subject = card_topic(card).title_subject
    if not _GUIDE_TITLE.search(subject) or not card_topic(card).title_stacks:
        return ""
    return f"the card is a setup guide for {'/'.join(sorted(card_topic(card).title_stacks))}, the question is {act}"


#: A ZeRO stage named in a title ("ZeRO-2", "ZeRO3").
_ZERO_STAGE = re.compile(r"\bZeRO-?([0-3])\b")


def sharding_conflict(card: Card, asked: AskedQuestion, act: Act | None) -> str:
    """Why a card whose title's subject is a sharding framework ("HF Trainer + DeepSpeed: use 'auto' …", "ZeRO-3 GPU
    memory spikes while loading …", "FSDP + gradient accumulation OOMs …") does not answer a message that never names
    that framework, its config keys or a stack that runs on it (:data:`rag.opening.SHARDING`; '' otherwise; a title
    naming two, "FSDP vs DeepSpeed ZeRO", answers a message naming either). The cards on the stages as a remedy ("How
    much ZeRO-1/2/3 save", "ZeRO-2 or ZeRO-3 for LoRA", ZeRO-Offload) are not such cards, and a card about one quoted
    error answers whoever pastes it (:func:`error_title_conflict`).

    FSDP runs only when configured, so its users name it (or verl, torchtitan); DeepSpeed is what many repositories'
    scripts launch by default (LLaMA-Factory's examples, MiniCPM-V's ``finetune_ds.sh``, DeepSpeed-Chat), and their
    users report a symptom (a tiny saved model, a hang) without naming it: a DeepSpeed card may still explain a
    diagnosis, while a question how to set, fit or read something names the framework it is about. Measured on the
    dev set (main at f688145): cited in the first three where the message never names the framework, FSDP cards 12
    times, expected for none; DeepSpeed cards outside diagnoses 58 times, expected for 2; in diagnoses 59 times,
    expected for 9 (gating those lost 6 questions' only expected card)."""
    subject = card_topic(card).title_subject
    mine = {f for f, rx in SHARDING_IN_TITLE.items() if rx.search(subject)}
    if len(set(_ZERO_STAGE.findall(subject))) > 1 and not re.search(r"\bDeepSpeed\b", subject):
        mine.discard("deepspeed")  # a choice between stages is the stages as a remedy ("ZeRO-2 or ZeRO-3 for LoRA")
    if not mine or mine & set(asked.sharding) or card_topic(card).error_grams:
        return ""
    if act == "diagnose" and "deepspeed" in mine:
        return ""
    return f"the card is about {'/'.join(sorted(mine))}, the message never names it"


def family_conflict(card: Card, asked: AskedQuestion, act: Act | None) -> str:
    """Why a card about memory does not explain a diagnosis whose question is about a slowdown, a hang or a loss curve
    and never about memory ('' otherwise): "为什么2张V100跟4张V100的训练速度一样？" is not answered by where LoRA's memory
    goes, "zero2 多机训练在 backward 卡住" not by how much ZeRO saves. A card that speaks of both (LoRA is barely
    faster *and* what it saves) stays."""
    if act != "diagnose" or asked.family not in ("speed", "loss"):
        return ""
    if not card_in_family(card, "memory") or card_in_family(card, asked.family):
        return ""
    return f"the question is about {asked.family}, the card only about memory"


#: Cards whose title's subject is one setting a run never has by default (rag.opening.SETTINGS_NAMED): continued
#: pretraining and the process counts of an Accelerate / torchrun multi-node launch. Measured on the dev set when the
#: two cards were added (stop 40; `bench/eval_citations.py BEFORE.json AFTER.json --top 200`, unexpected / expected in
#: the first three): 31 / 2 and 12 / 2 (LoRA in general; multi-node runs launched by the deepspeed launcher, hostfiles
#: or ms-swift); with this gate 7 / 2 and 4 / 2.
_SETTING_TITLES: dict[str, re.Pattern[str]] = {
    "pretraining": re.compile(r"continued pretraining|增量预训练|继续预训练", re.I),
    "launch_counts": re.compile(r"^accelerate multi-node", re.I),
    # (stop 51, dev 2340: the pipeline-bubble card was cited in the first three for 3 messages that never name pipeline
    # parallelism, none expecting it; all 9 messages that expect it name it)
    "pipeline_parallelism": re.compile(r"^pipeline parallelism", re.I),
    "amp_loop": re.compile(r"^mixed precision and the learning rate", re.I),
}


def named_setting_conflict(card: Card, asked: AskedQuestion) -> str:
    """Why a card about one setting a run never has by default does not answer a message that never names it ('' when
    the card is about none, or the message names it)."""
    subject = card_topic(card).title_subject
    for setting, title in _SETTING_TITLES.items():
        if title.search(subject) and setting not in asked.settings_named:
            return f"the card is about {setting.replace('_', ' ')}, the message never names it"
    return ""


#: A message that names ZeRO-3 anywhere ("switched from zero3 to zero2", "ds_z3_config.json", "stage 3").
_NAMES_ZERO3 = re.compile(r"\bzero_?3\b|\bzero 3\b|\bz3\b|\bstage_?3\b|\bstage 3\b|\bds_z3")


def zero_stage_conflict(card: Card, setup: Setup, asked: AskedQuestion) -> str:
    """Why a card whose title's subject is ZeRO-3 ("Why ZeRO-3 can be slower … on small models", "ZeRO-3 much slower
    than ZeRO-2 …": the first stage it names) does not answer a message whose run states another ZeRO stage and never
    names ZeRO-3 ('' otherwise): "deepspeed zero2多机训练在 backward 卡住" is not ZeRO-3's all-gather overhead."""
    stated = setup.get("zero_stage")
    if stated is None or stated == 3 or _NAMES_ZERO3.search(asked.message_words):
        return ""
    first = _ZERO_STAGE.search(card_topic(card).title_subject)
    if first is None or first.group(1) != "3":
        return ""  # (not "ZeRO-2 or ZeRO-3 for LoRA": the stages as a choice)
    return f"the card is about ZeRO-3, the message's run uses ZeRO-{stated}"


#: A title whose subject is GPUs of different models training together.
_MIXED_GPUS_TITLE = re.compile(r"\bdifferent GPU (?:models|types)\b|\bmixed GPUs?\b", re.I)


def mixed_gpu_conflict(card: Card, asked: AskedQuestion) -> str:
    """Why a card about GPUs of different models in one run does not answer a message that names one model at most
    and never says its GPUs differ ('' otherwise): the card answers "a 3090 and a 4090 together", not every message
    that names a GPU and data parallelism. Measured on the dev set (main at f688145): it was cited in the first three
    for 30 messages where it was not expected, 26 of them naming one GPU model at most; both messages that expect it
    name two models."""
    if asked.mixed_gpus or not _MIXED_GPUS_TITLE.search(card_topic(card).title_subject):
        return ""
    return "the card is about GPUs of different models, the message names one model at most"


def stage_conflict(card: Card, asked: AskedQuestion) -> str:
    """Why a card whose title's subject is a training stage after SFT ("Why PPO needs so much memory", "GRPO batches
    count completions", "What the DPO reference model costs") does not answer a message that never names that stage
    nor what only it has (:data:`rag.opening.STAGES`; '' otherwise). Like P-Tuning, these stages are never a
    default: a run that uses one names it (or its critic, reward model, generations, chosen/rejected pairs). Measured
    on the dev set (main at f688145 with this branch's earlier changes): such cards were cited in the first three for
    38 messages that never name their stage ("sft 7B model_max_length=90000 OOM" got the PPO card first) and expected
    for none of them."""
    mine = {st for st, rx in STAGES_IN_TITLE.items() if rx.search(card_topic(card).title_subject)}
    if not mine or mine & set(asked.stages):
        return ""
    return f"the card is about {'/'.join(sorted(mine))}, the message never names it"


#: A title whose subject is one process driving several GPUs: nn.DataParallel, or a model split over GPUs with
#: ``device_map`` in one process.
_ONE_PROCESS_TITLE = re.compile(r"^(?:nn\.)?DataParallel\b|\bone process\b", re.I)


def launch_conflict(card: Card, asked: AskedQuestion) -> str:
    """Why a card about one process driving several GPUs (nn.DataParallel, a model split with ``device_map``) does not
    answer a message that launches one process per GPU (torchrun, ``accelerate launch``, the ``deepspeed`` launcher;
    :data:`rag.opening.PER_PROCESS_LAUNCH`) and never names DataParallel or ``device_map`` ('' otherwise): under such a
    launch each process drives one GPU, so neither is what runs. Measured on the dev set (main at f19242c): the two
    cards were cited in the first three for 12 messages with such a launch command, expected for none of them."""
    if not asked.one_process_per_gpu or not _ONE_PROCESS_TITLE.search(card_topic(card).title_subject):
        return ""
    return "the card is about one process driving several GPUs, the message launches one process per GPU"


#: A title whose subject is PEFT's preparation of a quantized base.
_KBIT_TITLE = re.compile(r"prepare_model_for_kbit_training", re.I)


def kbit_conflict(card: Card, asked: AskedQuestion) -> str:
    """Why a card about ``prepare_model_for_kbit_training`` (it freezes a quantized base and upcasts the rest to fp32)
    does not answer a message that names neither a quantized base nor an fp32 upcast ('' otherwise). Measured on the
    dev set (main at f19242c): cited in the first three for 27 messages, 14 of them naming neither, expected for none
    of those 14."""
    if asked.names_quantized_or_upcast or not _KBIT_TITLE.search(card_topic(card).title_subject):
        return ""
    return "the card is about preparing a quantized base, the message names no quantization"


#: A title whose subject is PyTorch not seeing the GPU.
_NO_GPU_TITLE = re.compile(r"\bsees no GPU\b", re.I)


def no_gpu_conflict(card: Card, setup: Setup, asked: AskedQuestion) -> str:
    """Why a card about PyTorch not seeing the GPU does not answer this message ('' otherwise): nothing in it shows
    CUDA missing (:data:`rag.opening.NAMES_NO_GPU`), or the only sign is an Ampere check on a stated older GPU, which
    lacks the feature (the hardware cards' case). Its symptoms name fp16, bf16, bitsandbytes and DeepSpeed, so
    retrieval found it for ordinary OOM and precision questions: measured with `bench/eval_answers_cv.py` (main at
    c8b61df), cited in the first three 37 times, expected twice; with this rule 4 times, the same two expected."""
    if not _NO_GPU_TITLE.search(card_topic(card).title_subject):
        return ""
    if asked.names_no_gpu:
        return ""
    if asked.names_ampere_check and not any(_has_ampere(g) is False for g in _values(setup, "gpu")):
        return ""
    return "the card is about PyTorch not seeing the GPU, the message shows no sign of it"


#: A title whose subject is a 4-bit base (QLoRA's NF4, bitsandbytes' Linear4bit / bnb_4bit_* settings).
_FOUR_BIT_TITLE = re.compile(r"^\W*QLoRA\b|\b4-bit\b|\bNF4\b|\bLinear4bit\b|\bbnb_4bit", re.I)
_EIGHT_BIT_TITLE = re.compile(r"\b8-bit\b|load_in_8bit|\bint8\b|LLM\.int8", re.I)
#: How a message names a 4-bit base, on its ASCII words (``AskedQuestion.message_words``).
_NAMES_FOUR_BIT = re.compile(
    r"(?:^|[ _])(?:4 ?bits?|qlora\w*|nf4|int4|fp4|linear4bit)(?![a-z0-9])|bnb_4bit|load_in_4bit"
)


def bits_conflict(card: Card, setup: Setup, asked: AskedQuestion) -> str:
    """Why a card about a 4-bit base does not answer a run whose weights are 8-bit ('' otherwise): databricks dolly
    #168 (``load_in_8bit=True`` on a full fine-tune) opened with QLoRA's 4-bit memory as its most likely cause."""
    if setup.get("quantization") != "int8" or setup.get("finetune") == "qlora":
        return ""
    subject = card_topic(card).title_subject
    if not _FOUR_BIT_TITLE.search(subject) or _EIGHT_BIT_TITLE.search(subject):
        return ""  # ("load_in_8bit runs slower than 16-bit and often slower than 4-bit" is the 8-bit card)
    if _NAMES_FOUR_BIT.search(asked.message_words):
        return ""
    return "the card is about a 4-bit base, the message's weights are 8-bit"


def answers_another_setup(card: Card, asked: AskedQuestion, setup: Setup, act: Act | None = None) -> str:
    """Why ``card`` is about another setup than the message states, or does not answer its kind of question ('' when
    nothing contradicts it; ``act`` None: the act is not held against any card)."""
    if method_conflict(card, setup):
        return f"the card is about {'/'.join(sorted(card_methods(card)))}, the message states {setup.get('finetune')}"
    if size_conflict(card, asked):
        return "the card's lead is about another model size"
    if capacity_conflict(card, setup):
        return "the card's lead is about another GPU capacity"
    if stack_conflict(card, asked):
        return "the card's lead is about another training stack"
    return (
        unnamed_method_conflict(card, setup, asked)
        or unnamed_adapter_conflict(card, setup, asked, act)
        or title_stack_conflict(card, asked)
        or node_count_conflict(card, asked)
        or phase_conflict(card, asked)
        or save_conflict(card, asked)
        or model_family_conflict(card, asked)
        or speed_conflict(card, asked)
        or hang_conflict(card, asked)
        or hardware_conflict(card, setup, asked)
        or error_title_conflict(card, asked)
        or gpu_count_conflict(card, setup, asked)
        or platform_conflict(card, setup, asked)
        or guide_act_conflict(card, act)
        or sharding_conflict(card, asked, act)
        or mixed_gpu_conflict(card, asked)
        or stage_conflict(card, asked)
        or launch_conflict(card, asked)
        or kbit_conflict(card, asked)
        or bits_conflict(card, setup, asked)
        or no_gpu_conflict(card, setup, asked)
        or zero_stage_conflict(card, setup, asked)
        or family_conflict(card, asked, act)
        or named_setting_conflict(card, asked)
    )
