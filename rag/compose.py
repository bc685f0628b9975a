"""Step 6 of an answer: the Markdown the user reads, from typed results.

Layout: the *first screen* — the sentence that answers the act, the user's setup with where each
value came from (and what was carried over or assumed), what is missing for a number — then the
calculator numbers, the explanation, a labelled example where one helps, and the sources. Every
number in the text comes from a calculator call in ``Answer.tool_calls``; every piece of user
text is escaped (:func:`calculators.text_safety.escape_md`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from calculators.deepspeed import estimate_zero2_model_states_mem_needs
from calculators.i18n import CATALOGUE, key_name, t
from calculators.lang import Lang
from calculators.memory import MemoryEstimate
from calculators.memory_table import memory_table, row_name
from calculators.presets import GPU_PRESETS, gpu_display
from calculators.text_safety import escape_md

from .acts import Act
from .answer import Correction, ToolCall
from .cards import MODEL_SIZE, Card
from .evidence import Evidence, card_in_family, symptom_family
from .formatting import billions, gib
from .intents import MisconceptionRule, belief_reported, precision_left_memory_unchanged, stages_named
from .network_kind import names_non_llm_network
from .opening import (
    AskedQuestion,
    card_topic,
    lead_answers,
    lead_kind,
    presupposes_nothing,
    size_fits,
    stack_conflict,
    strip_preamble,
    symptom_fits,
)
from .planner import CAUSE_BELIEFS, Plan, full_states_exceed_card
from .setup import (
    FRAMEWORK_DEFAULT_EVIDENCE,
    OTHER_RUN_EVIDENCE,
    PER_NODE_EVIDENCE,
    REFERENCE_EVIDENCE,
    Setup,
    shards_weights,
    unsupported_method,
)

#: Setup keys in the order the setup line shows them.
_SHOWN = (
    "model_text",
    "model",
    "num_params",
    "finetune",
    "gpu_text",
    "gpu",
    "gpu_memory_gb",
    "world_size",
    "num_nodes",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "ga_from",
    "train_batch_size",
    "zero_stage",
    "fsdp",
    "offload_optimizer",
    "offload_param",
    "precision",
    "quantization",
    "seq_len",
    "lora_rank",
    "gradient_checkpointing",
    "flash_attention",
    "adamw_kernel",
    "pipeline_parallel_size",
    "tensor_parallel_size",
    "sequence_parallel_size",
    "observed_memory_gb",
    "host_ram_gb",
    "images_per_sample",
    "image_width",
    "image_height",
    "image_max_pixels",
    "freeze_vision_tower",
)


@dataclass
class Results:
    """Everything the composer needs, already computed."""

    lang: Lang
    act: Act
    setup: Setup
    plan: Plan
    calls: list[ToolCall]
    cards: list[Card]
    misconceptions: list[MisconceptionRule] = field(default_factory=list)
    corrections: list[Correction] = field(default_factory=list)
    diagnosis: Any = None  # calculators.diagnose.Diagnosis, when the readers found something
    diagnosis_call: ToolCall | None = None
    config_calls: list[ToolCall] = field(default_factory=list)
    #: (what changes, its memory call) of the nearest settings that fit when the user's does not, nearest first.
    nearest_fits: list[tuple[str, ToolCall]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    #: The message reports an out-of-memory the user hit: a "fits" verdict must then say why the run used more.
    reported_oom: bool = False
    #: What in the message could select one cause (None: not read, the top card's cause opens as before).
    evidence: Evidence | None = None
    #: What the asking sentences are about (None: not read, the top card's lead opens as before; see rag.opening).
    asked: AskedQuestion | None = None
    #: Every card of the knowledge base: how common a concept is among them weighs a shared topic.
    all_cards: tuple[Card, ...] = ()
    #: Keys of the wrong beliefs the user holds (asserts or presupposes), not only touches.
    held: frozenset[str] = frozenset()
    #: The message's prose (what the user wrote besides pastes), for openings that read what was reported.
    prose: str = ""
    #: The message states how fast the run goes (a step time or a token rate, in prose or a pasted log).
    speed_stated: bool = False

    def call(self, label: str) -> ToolCall | None:
        return next((tc for pc, tc in zip(self.plan.calls, self.calls, strict=False) if pc.label == label), None)


# ---- the setup line ---------------------------------------------------------------------------
def _show_value(key: str, value: Any, lang: Lang) -> str:
    if key == "num_params":
        return billions(value)
    if key in ("gpu_memory_gb", "observed_memory_gb", "host_ram_gb"):
        return f"{value:g} GB"
    if key == "zero_stage":
        return f"ZeRO-{value}"
    if key == "fsdp":
        return f"FSDP {value.upper()}"
    if key == "finetune" and value == "ptuning":
        return "P-Tuning"
    if isinstance(value, bool):
        return t("on" if value else "off", lang)
    return escape_md(value, 60)


def setup_line(setup: Setup, lang: Lang) -> str:
    """'Your setup: Qwen-14B · 8 GPUs · micro 4 (from your config) · carried over: … · assumed: …'."""
    groups: dict[str, list[str]] = {}
    values = setup.values
    alternatives = run_alternatives(setup, lang)
    for key in _SHOWN:
        v = values.get(key)
        if v is None or v.source == "assumed":
            continue
        if key == "model" and "model_text" in values:
            continue
        if key == "num_params" and ("model_text" in values or "model" in values):
            continue
        if key == "gpu" and "gpu_text" in values:
            continue
        if key == "gpu_memory_gb" and "gpu" in values:
            continue
        shown = _show_value(key, v.value, lang)
        item = (
            shown
            if key
            in ("model_text", "model", "gpu_text", "gpu", "zero_stage", "fsdp", "num_params", "finetune", "precision")
            else f"{key_name(key, lang)} {shown}"
        )
        group: str = "default" if v.evidence == FRAMEWORK_DEFAULT_EVIDENCE else v.source
        groups.setdefault(group, []).append(_with_other_runs(item, key, alternatives, lang))
    if not groups:
        return ""
    sep = t("list_sep", lang)
    out = []
    order = ("message", "config", "command", "default", "error", "log", "nvidia_smi", "history")
    for source in order:
        items = groups.get(source)
        if not items:
            continue
        if source == "message":
            out.append(sep.join(items))
        else:
            label = t("carried" if source == "history" else f"from_{source}", lang)
            out.append(t("with_source", lang, items=sep.join(items), source=label))
    return f"_{t('your_setup', lang)}{t('colon', lang)}{t('clause_sep', lang).join(out)}_"


_MODEL_GROUP = ("model_text", "model", "num_params")


def shown_conflicts(others: list[Any]) -> list[Any]:
    """The other values of one key that :func:`conflicts_line` shows: up to two other runs' and one other part's."""
    runs = [o.value for o in others if o.evidence == OTHER_RUN_EVIDENCE][:2]
    return runs + [o.value for o in others if o.evidence != OTHER_RUN_EVIDENCE][:1]


def _plain(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def run_alternatives(setup: Setup, lang: Lang) -> dict[str, tuple[list[str], str]]:
    """The other runs' values the prose gives (rag.runs), shown next to the value the setup line shows for that key:
    {shown key: (the other values, up to two; why the shown one is used)}. The model's name, preset and size count as
    one, under the key the setup line shows."""
    out: dict[str, tuple[list[str], str]] = {}
    for key, all_others in setup.conflicts.items():
        if key not in setup.values or not any(o.evidence == OTHER_RUN_EVIDENCE for o in all_others):
            continue
        if key in _MODEL_GROUP:
            key = next(k for k in _MODEL_GROUP if k in setup.values)
            if key in out:
                continue
            by_key = [
                [_show_value(k, o.value, lang) for o in setup.conflicts.get(k, []) if o.evidence == OTHER_RUN_EVIDENCE]
                for k in (key, *_MODEL_GROUP)
            ]
            values = next(v for v in by_key if v)  # the other model under the key shown, else its preset or size
        else:
            values = [_show_value(key, o.value, lang) for o in all_others if o.evidence == OTHER_RUN_EVIDENCE]
        a = _show_value(key, setup.values[key].value, lang)
        shown: list[str] = []
        for v in values:
            if _plain(v) != _plain(a) and all(_plain(v) != _plain(w) for w in shown):
                shown.append(v)
        if shown:
            out[key] = (shown[:2], setup.why.get(key, ""))
    return out


def _with_other_runs(item: str, key: str, alternatives: dict[str, tuple[list[str], str]], lang: Lang) -> str:
    """ "micro batch 4 (failing run; also 3)": the value computed for, why, and the other runs' values."""
    if key not in alternatives:
        return item
    others, why = alternatives[key]
    b = t("and_sep", lang).join(others)
    if why in ("fails", "peak", "other_works"):
        return item + t("also_runs_why", lang, why=t(f"why_{why}", lang), b=b)
    return item + t("also_runs", lang, b=b)


def _where(source: str, lang: Lang) -> str:
    """Where a value was read, for the conflict note: "in your message", "from the error", …"""
    return t("in_message", lang) if source in ("message", "history", "assumed") else t(f"from_{source}", lang)


def conflicts_line(setup: Setup, lang: Lang) -> str:
    lines = []
    for key, all_others in setup.conflicts.items():
        mine = setup.values.get(key)
        if mine is None:
            continue
        others = [o for o in all_others if o.evidence != OTHER_RUN_EVIDENCE]
        if not others:
            continue
        if key == "model_text" and setup.has("model"):
            # "llama-2-7b" in the prose, "Llama-2-7b-hf" in the command: one model, spelt twice; and where the models
            # differ, the model's own note already says so
            continue
        if key == "finetune" and {mine.value, others[0].value} == {"lora", "qlora"} and setup.get("quantization"):
            continue  # `--finetuning_type lora` with `--quantization_bit 4` is QLoRA: one method, not two
        if mine.evidence == PER_NODE_EVIDENCE and setup.get("num_nodes"):
            nodes = int(setup.get("num_nodes"))
            lines.append(
                t(
                    "conflict_per_node",
                    lang,
                    name=key_name(key, lang),
                    a=mine.value,
                    per=int(mine.value) // nodes,
                    nodes=nodes,
                    b=others[0].value,
                )
            )
            continue
        for other in others[:1]:
            lines.append(
                t(
                    "conflict",
                    lang,
                    name=key_name(key, lang),
                    a=_show_value(key, mine.value, lang),
                    src_a=_where(mine.source, lang),
                    b=_show_value(key, other.value, lang),
                    src_b=t("from_reference", lang)
                    if other.evidence == REFERENCE_EVIDENCE
                    else _where(other.source, lang),
                )
            )
    return "\n".join(lines)


def assumptions_line(plan: Plan, lang: Lang) -> str:
    if not plan.assumptions or plan.example:
        return ""
    what = t("clause_sep", lang).join(a.zh if lang == "zh" else a.en for a in plan.assumptions)
    return f"_{t('assumed', lang).capitalize()}{t('colon', lang)}{what}_"


def missing_line(missing: list[str], lang: Lang, method: str | None = None) -> str:
    if not missing:
        return ""
    if "unsupported" in missing:
        return t("memory_unsupported", lang, method=escape_md(method or "", 40))
    names = [t("need_model" if m == "model" else "need_method", lang) for m in missing]
    return t("need_for_memory", lang, missing=t("enum_sep", lang).join(names))


# ---- verdicts -------------------------------------------------------------------------------
def _direct(card: Card, lang: Lang) -> str:
    body = (card.body_zh if lang == "zh" else card.body_en).strip()
    return body.split("\n\n", 1)[0].strip()


def _title(card: Card, lang: Lang) -> str:
    return card.title_zh if lang == "zh" else card.title_en


#: Letters whose English name starts with a vowel sound ("an A100", "an H100", "an L40S", "an RTX 3090").
_AN_LETTERS = set("AEFHILMNORSX")


def with_article(name: str) -> str:
    """'A100 80GB' → 'an A100 80GB', 'V100' → 'a V100', 'Tesla T4' → 'a Tesla T4', '3090' → 'a 3090' (English)."""
    word = re.match(r"[A-Za-z]+|\d+", name.strip())
    if word is None:
        return name
    w = word.group(0)
    if w.isdigit():
        an = re.match(r"(?:8|11|18|8\d)$", w) is not None or (len(w) == 4 and w.startswith(("8", "18", "11")))
    elif len(w) == 1 or w.isupper() or w.lower() in ("rtx", "gtx", "mi", "hgx", "dgx", "sxm"):
        an = w[0].upper() in _AN_LETTERS
    else:
        an = w[0].lower() in "aeiou"
    return ("an " if an else "a ") + name


def _gpu_name(r: Results, res: dict[str, Any]) -> str:
    """The card as the user wrote it ("A100 80G", "3090"), else the preset's display name; in English with its
    article, so the strings read "on an A100 80GB" and never "of a a100-80gb"."""
    name = str(res.get("gpu_name") or "")
    if r.setup.get("gpu_text") and r.setup.source("gpu_text") != "assumed":
        # "8 A100s" names the card in the plural; the sentence speaks of one ("the 80 GiB of an A100").
        written = str(r.setup.get("gpu_text")).strip()
        singular = (
            written if re.search(r"l40s$", written, re.I) else re.sub(r"(?<=\d)s$|(?<=\d[A-Za-z])s$", "", written)
        )
        name = escape_md(singular, 40)
    elif name in GPU_PRESETS:
        name = gpu_display(name)
    elif not name:
        name = t("a_gpu", r.lang)
    return name if r.lang == "zh" else with_article(name)


def _refused_estimate(r: Results) -> ToolCall | None:
    """The memory call the calculator refused, when the question asks for a figure (fit / configure): its refusal
    (an unmodelled setup, a value out of range) is then the answer's opening, not a card about something else."""
    main = r.call("main")
    if r.act in ("fit", "configure") and main is not None and main.error and not main.result:
        return main
    return None


def _zero_stage_verdict(r: Results, res: dict[str, Any], gpu: str) -> str | None:
    """A DeepSpeed run whose ZeRO stage the message does not show: each stage's per-GPU total, and from which stage
    on it fits, instead of a verdict on an unsharded run the user may not have. None when the stage decides nothing
    (it fits unsharded already: the usual verdict then says why a run that should fit did not)."""
    sweep = r.call("zero_sweep")
    if not r.plan.zero_stage_unknown or sweep is None or not sweep.result:
        return None
    lang = r.lang
    points = {p["value"]: p["estimate"] for p in sweep.result["points"]}
    totals = t("zero_totals_sep", lang).join(
        t("zero_stage_total", lang, stage=k, total=gib(points[k]["total_per_gpu"], lang))
        for k in sorted(points)
        if points[k].get("total_per_gpu") is not None
    )
    # "zero2 和 zero3 … 差多少", "Zero2 and Zero3 both still OOM": the stages the message names are compared, not
    # missing — their totals first
    named = sorted(int(k) for k in stages_named(r.prose) if int(k) in points and points[int(k)].get("total_per_gpu"))
    compared = len(named) >= 2
    if compared:
        totals = t("zero_totals_sep", lang).join(
            t("zero_stage_total", lang, stage=k, total=gib(points[k]["total_per_gpu"], lang)) for k in named
        )
    if not res.get("gpu_capacity"):
        return "**" + t("zero_stages_compared_totals" if compared else "zero_stage_totals", lang, totals=totals) + "**"
    first = next((k for k in sorted(points) if points[k].get("fits")), None)
    if first == 0 and not compared:
        return None
    cap = gib(res["gpu_capacity"], lang)
    if first is not None:
        tail = t("zero_fits_from_but_oom" if r.reported_oom else "zero_fits_from", lang, stage=first)
        key = "zero_stages_compared" if compared else "zero_stage_unknown"
        return "**" + t(key, lang, totals=totals, gpu=gpu, cap=cap, tail=tail) + "**"
    key = "zero_fits_none_compared" if compared else "zero_fits_none"
    text = "**" + t(key, lang, totals=totals, gpu=gpu, cap=cap) + "**"
    return _then_nearest(r, text) if r.nearest_fits else text


def _deepspeed_zero2_over(main: ToolCall) -> int | None:
    """DeepSpeed's own ZeRO-2 model-state bytes per GPU (``estimate_zero2_model_states_mem_needs``: 2Ψ + 18Ψ/N, the
    fp32 gradient partition it builds at the optimizer step included) plus the CUDA context, when that is over the
    card while the estimate, which counts model states as the ZeRO paper does (2Ψ + 14Ψ/N), fits; else None.

    The two differ by 4Ψ/N (6.3 GiB for a 7B model on 4 GPUs): LLaMA-Factory #469, a 7B full fine-tune with ZeRO-2 on
    4 × A100 40G, fits by the paper's count (38.0 GiB) and ran out of memory."""
    args, res = main.arguments, main.result or {}
    if not (
        res.get("fits")
        and args.get("zero_stage") == 2
        and args.get("finetune", "full") == "full"
        and str(args.get("precision", "")).endswith("-mixed")
        and not args.get("offload_optimizer")
        # (ZeRO partitions over the data-parallel ranks: with tensor or pipeline parallelism they are fewer)
        and int(args.get("tensor_parallel_size") or 1) == 1
        and int(args.get("pipeline_parallel_size") or 1) == 1
        and res.get("num_params")
        and res.get("gpu_capacity")
    ):
        return None
    world = int(args.get("world_size") or 1)
    _, gpu_bytes = estimate_zero2_model_states_mem_needs(res["num_params"], num_gpus_per_node=world, cpu_offload=False)
    with_context = gpu_bytes + int(res.get("other") or 0)
    return with_context if with_context > res["gpu_capacity"] else None


#: The memory of the largest GPU preset: an unsharded estimate above it fits on no single GPU.
_LARGEST_GPU_BYTES = max(g.memory_gib for g in GPU_PRESETS.values()) * 2**30


def _memory_verdict(r: Results) -> str:
    main = r.call("main")
    if (refused := _refused_estimate(r)) is not None:
        return refused.summary_md
    if main is None or not main.result:
        return ""
    res = main.result
    lang = r.lang
    if res.get("total_per_gpu") is None:
        return _states_only_verdict(r, res)
    total = gib(res["total_per_gpu"], lang)
    if res.get("fits") is None:
        head = f"**{t('per_gpu', lang, total=total)}**"
        unsharded = (r.setup.get("world_size") or 1) == 1 and r.setup.get("zero_stage") != 3 and not r.setup.get("fsdp")
        if unsharded and res["total_per_gpu"] > _LARGEST_GPU_BYTES:
            # "how should I set the parameters for a 70B full SFT?" (LMFlow #682): a figure no GPU holds says what to do
            head += " " + t("per_gpu_no_single", lang, largest=gib(_LARGEST_GPU_BYTES, lang))
        return head
    gpu = _gpu_name(r, res)
    if (by_stage := _zero_stage_verdict(r, res, gpu)) is not None:
        return by_stage
    if res["fits"] and r.plan.rl_stage:
        # PPO / DPO / GRPO hold more models than the one estimated: "it fits" (or "it should have fit, so the run used
        # more") would promise what was not computed; the models left out are also the first suspect for an OOM.
        stage = r.plan.rl_stage.upper()
        return (
            "**"
            + t("fits_trained_only", lang, total=total, gpu=gpu, cap=gib(res["gpu_capacity"], lang), stage=stage)
            + "**"
        )
    if (ds_over := _deepspeed_zero2_over(main)) is not None:
        # The paper's count fits, DeepSpeed's own (with its fp32 gradient partition) does not: the verdict is DeepSpeed's
        key = "ds_zero2_over_oom" if r.reported_oom else "ds_zero2_over"
        return (
            "**" + t(key, lang, total=total, gpu=gpu, cap=gib(res["gpu_capacity"], lang), ds=gib(ds_over, lang)) + "**"
        )
    if res["fits"] and r.reported_oom:
        # The estimate fits but the user's run did not: the run used more than computed, and the headline says so
        # instead of contradicting what they saw.
        assumed = [k for k in ("seq_len", "train_micro_batch_size_per_gpu") if r.setup.source(k) == "assumed"]
        why = (
            t(
                "oom_why_assumed" if len(assumed) > 1 else "oom_why_assumed_one",
                lang,
                names=t("and", lang).join(key_name(k, lang) for k in assumed),
            )
            if assumed
            else t("oom_why_stated", lang)
        )
        cap = gib(res["gpu_capacity"], lang)
        return "**" + t("fits_but_oom", lang, total=total, gpu=gpu, cap=cap) + "** " + why
    if res["fits"]:
        return (
            "**"
            + t("fits", lang, total=total, gpu=gpu, cap=gib(res["gpu_capacity"], lang), mm=res.get("max_micro_batch"))
            + "**"
        )
    over_bytes = res["total_per_gpu"] - res["gpu_capacity"]
    over = gib(over_bytes, lang)
    # What to cut first: the largest of the four parts ("activations, 124.5 GiB" for micro 4 × 4096 tokens).
    part = max(("weights", "gradients", "optimizer_states", "activations"), key=lambda k: res.get(k) or 0)
    text = (
        "**"
        + t(
            "no_fit",
            lang,
            total=total,
            gpu=gpu,
            cap=gib(res["gpu_capacity"], lang),
            over=over,
            part=row_name(part, lang),
            size=gib(res[part], lang),
        )
        + "**"
    )
    if any(call.result for _, call in r.nearest_fits) and (
        res.get("max_micro_batch") == 0 and main.arguments.get("train_micro_batch_size_per_gpu", 1) > 1
    ):
        text = t("then", lang, a=text, b=t("micro1_no_fit", lang))
    return _then_nearest(r, text)


def _then_nearest(r: Results, text: str) -> str:
    """A does-not-fit verdict, then the two nearest settings that fit (or that none does)."""
    fits = [(what, call.result) for what, call in r.nearest_fits if call.result]
    if not fits:
        return t("then", r.lang, a=text, b=t("nothing_fits", r.lang))
    options = t("clause_sep", r.lang).join(
        t("nearest_option", r.lang, what=what, total=gib(fit["total_per_gpu"], r.lang)) for what, fit in fits[:2]
    )
    return t("then", r.lang, a=text, b=t("nearest_fits", r.lang, options=options))


#: The parts of the model states, as a memory estimate names them (calculators.memory.MemoryEstimate.model_states).
_STATE_PARTS = ("weights", "gradients", "optimizer_states")


def _states(estimate: dict[str, Any]) -> int:
    """Weights + gradients + optimizer states of one memory result (per GPU)."""
    return MemoryEstimate(**estimate).model_states


#: Host memory named ("内存", "RAM", "CPU memory") and GPU memory not ("显存", "GPU", "VRAM", "CUDA").
_HOST_RAM_ONLY = re.compile(r"内存|\bRAM\b|\bCPU memory|\bhost memory", re.I)
_GPU_MEMORY_WORD = re.compile(r"显存|\bgpu|\bvram\b|\bcuda\b", re.I)


def _about_host_ram_only(r: Results) -> bool:
    """The message asks about host memory and never about GPU memory ("Qwen-VL-Chat多卡微调所需的内存多大 … 128G的运行内存"):
    GPU model states do not answer it."""
    return bool(_HOST_RAM_ONLY.search(r.prose)) and not _GPU_MEMORY_WORD.search(r.prose)


def _states_only_verdict(r: Results, res: dict[str, Any]) -> str:
    """No preset architecture, so no activations: the model states still settle 'does not fit' when they alone
    exceed the card, and otherwise say how much of it they take."""
    lang = r.lang
    states = _states(res)
    if not res.get("gpu_capacity"):
        # "全量微调 Qwen-14B 需要多少显存": the states of the stated size and method are the answer's floor; not for a
        # question about host RAM ("34b lora加载模型的时候需要多少内存 … 机器有314G内存"), which GPU states do not answer
        if _about_host_ram_only(r):
            return ""
        return "**" + t("states_only_no_gpu", lang, states=gib(states, lang)) + "**"
    cap = res["gpu_capacity"]
    key = "states_no_fit" if states > cap else "states_only"
    return "**" + t(key, lang, states=gib(states, lang), gpu=_gpu_name(r, res), cap=gib(cap, lang)) + "**"


#: Model states at or above this share of the card leave too little for activations to rule them out as the cause.
_STATES_CROWD_SHARE = 0.75


def _states_crowd_card(res: dict[str, Any]) -> bool:
    """Activations unknown (no preset), and the model states alone take at least :data:`_STATES_CROWD_SHARE` of the
    card: what is left for one micro-batch's activations is known even though they are not."""
    cap = res.get("gpu_capacity")
    return bool(res.get("total_per_gpu") is None and cap and _states(res) >= _STATES_CROWD_SHARE * cap)


def _states_are_the_runs(r: Results) -> bool:
    """The states-only figure is the failing run's: its method is stated (an assumed full fine-tune is no figure for
    their run), no tensor or pipeline parallelism splits it (not modelled), no ZeRO stage is standing in for the ones
    compared, and the OOM is the GPU's at the start of training, not the host's (ms-swift #8193: "保存模型时 CPU 内存暴涨")
    nor after the run had trained a while (its states then fitted)."""
    s = r.setup
    return (
        s.source("finetune") not in (None, "assumed")
        and (s.get("tensor_parallel_size") or 1) == 1
        and (s.get("pipeline_parallel_size") or 1) == 1
        and r.call("zero_sweep") is None
        and not _about_host_ram_only(r)
        and not OOM_MID_RUN.search(r.prose)
    )


def _states_oom_verdict(r: Results, res: dict[str, Any]) -> str:
    """A reported OOM of a model without a preset (``res``: its memory result): the states alone over the card, or how
    little they leave."""
    lang = r.lang
    states, cap = _states(res), res["gpu_capacity"]
    if states > cap:
        return _states_only_verdict(r, res)
    left = gib(cap - states, lang)
    return (
        "**"
        + t("states_crowd_oom", lang, states=gib(states, lang), gpu=_gpu_name(r, res), cap=gib(cap, lang), left=left)
        + "**"
    )


def _batch_verdict(r: Results) -> str:
    call = r.call("effective_batch")
    if call is None:
        return ""
    lang = r.lang
    if call.error:
        return t("batch_inconsistent", lang) + "\n\n" + call.summary_md.split("\n", 1)[-1]
    res = call.result or {}
    micro, ga, ws, total = (
        res.get("train_micro_batch_size_per_gpu"),
        res.get("gradient_accumulation_steps"),
        res.get("data_parallel_size") or res.get("world_size"),
        res.get("train_batch_size"),
    )
    if micro is None or ga is None or ws is None or total is None:
        return ""
    if (
        total == micro
        and ga == 1
        and r.setup.source("gradient_accumulation_steps") in (None, "assumed")
        and not (res.get("observed_steps") or res.get("optimizer_steps_per_epoch"))
    ):
        # "micro 4 × GA 1 × 1 GPU = 4" on an assumed GA restates the one number the user gave (litgpt #265 asked why a
        # larger micro batch made the run 4× longer): no arithmetic to open with
        return ""
    grpo = r.evidence is not None and "grpo" in r.evidence.concepts
    implied = all(
        k in call.arguments
        for k in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
    )  # "Total train batch size = 16 … per device = 1 … GA = 8": the GPU count follows from their own numbers
    if r.setup.source("world_size") in (None, "assumed") and not implied:  # the per-GPU stand-in is not their count
        return (
            "**"
            + t("batch_per_gpu", lang, micro=micro, ga=ga, per=micro * ga)
            + "**"
            + _observed_steps(res, lang, grpo)
        )
    gpus = res.get("world_size") or ws
    formula = (
        t("batch_formula_one" if ws == 1 else "batch_formula", lang, micro=micro, ga=ga, ws=ws, total=total)
        if gpus == ws
        else t("batch_formula_dp", lang, micro=micro, ga=ga, ws=ws, gpus=gpus, split=_parallel_split(call), total=total)
    )
    return "**" + formula + _steps_per_epoch(res, lang) + "**" + _observed_steps(res, lang, grpo)


def _parallel_split(call: ToolCall) -> str:
    """ "TP 2 × SP 4": the parallel degrees that made the data-parallel size smaller than the GPU count."""
    names = (("tensor_parallel_size", "TP"), ("pipeline_parallel_size", "PP"), ("sequence_parallel_size", "SP"))
    return " × ".join(f"{short} {call.arguments[k]}" for k, short in names if (call.arguments.get(k) or 1) > 1)


def _steps_per_epoch(res: dict[str, Any], lang: Lang) -> str:
    """ " 9,106 samples → 143 micro-batches per GPU per epoch → ÷ GA 128 = 2 optimizer steps per epoch (… up to 4.51
    it is 1)": the Trainer's count, with the version that changed it when the two counts differ."""
    steps, floor, samples = (
        res.get("optimizer_steps_per_epoch"),
        res.get("optimizer_steps_per_epoch_before_4_52"),
        res.get("dataset_size") or 0,
    )
    if not steps or not samples:
        return ""
    total, total_floor, epochs = (
        res.get("total_optimizer_steps"),
        res.get("total_optimizer_steps_before_4_52"),
        res.get("num_train_epochs"),
    )
    total_text = ""
    if total and epochs:
        total_text = t("batch_steps_total", lang, epochs=f"{epochs:g}", total=f"{total:,}")
        if total_floor and total_floor != total:
            total_text += t("batch_steps_total_floor", lang, total=f"{total_floor:,}")
    return " " + t(
        "batch_steps",
        lang,
        samples=f"{samples:,}",
        micro_per=f"{res.get('micro_batches_per_epoch_per_gpu') or 0:,}",
        ga=res.get("gradient_accumulation_steps"),
        steps=f"{steps:,}",
        floor=t("batch_steps_floor", lang, steps=f"{floor:,}") if floor and floor != steps else "",
        total=total_text,
    )


def _observed_steps(res: dict[str, Any], lang: Lang, grpo: bool = False) -> str:
    """The step count the user's run showed, against the arithmetic: it matches (and which transformers count), or
    the batch the run really used per step, with the usual factors the formula leaves out. In a GRPO run (``grpo``)
    that used fewer prompts per step than its global batch by a whole factor, that factor is the completions per
    prompt (TRL #3442: 1,283 steps for 1,283 prompts at a global batch of 4 is num_generations = 4)."""
    observed, per = res.get("observed_steps"), res.get("samples_per_observed_step")
    if not observed or per is None:
        return ""
    epochs = res.get("num_train_epochs")
    # the run's own numbers, as both the GRPO reading and the mismatch say them
    shown = {
        "observed": f"{observed:,}",
        "samples": f"{res.get('dataset_size') or 0:,}",
        "epochs": f"{epochs or 1:g}",
        "per": f"{per:,.1f}".removesuffix(".0"),
        "total": f"{res.get('train_batch_size'):,}",
    }
    if grpo and (k := _grpo_generations(per, res.get("train_batch_size") or 0)):
        return " " + t("steps_grpo", lang, k=k, **shown)
    new, old = (
        (res.get("total_optimizer_steps"), res.get("total_optimizer_steps_before_4_52"))
        if epochs
        else (res.get("optimizer_steps_per_epoch"), res.get("optimizer_steps_per_epoch_before_4_52"))
    )
    if observed in (new, old):
        which = t("steps_match_floor", lang) if observed != new else ""
        return " " + t("steps_match", lang, observed=f"{observed:,}", which=which)
    total_batch = res.get("train_batch_size") or 0
    if total_batch and abs(per - total_batch) <= 0.02 * total_batch:
        # 99,000 samples / 193 steps ≈ 513 per step against 512: rounding, a last partial step, a few filtered rows
        return " " + t("steps_near", lang, observed=shown["observed"], per=shown["per"])
    return (
        " "
        + t("steps_mismatch", lang, factor=_steps_factor(per, res.get("train_batch_size") or 0, lang), **shown)
        + " "
        + t("steps_mismatch_causes", lang)
    )


def _grpo_generations(per: float, total: int) -> int | None:
    """The completions per prompt a GRPO run's steps imply: its global batch ÷ the prompts it took per step, when that
    is a whole number of at least 2 (within 3 %); None otherwise."""
    if per <= 0 or total <= per:
        return None
    k = round(total / per)
    return k if k >= 2 and abs(total / per - k) <= 0.03 * k else None


def _steps_factor(per: float, total: int, lang: Lang) -> str:
    """ " (= 224 ÷ 8)": a whole-number factor between the batch the run used and the settings' batch names the
    missing factor's size (GRPO's num_generations 8, a sequence-parallel degree 4, a GA of 16 set by the framework)."""
    if per <= 0 or total <= 0:
        return ""
    big, small = max(per, total), min(per, total)
    if small < 2:
        return ""  # "≈ 1 × 15" says nothing the per-step figure does not
    k = round(big / small)
    if k < 2 or abs(big / small - k) > 0.03 * k:
        return ""
    return t("steps_factor_div" if per < total else "steps_factor_mul", lang, total=f"{total:,}", k=k)


def _diagnosis_verdict(r: Results) -> str:
    d = r.diagnosis
    causes = list(getattr(d, "causes", None) or [])
    if not causes:
        return ""
    lang = r.lang
    first = causes[0]
    title = getattr(first, "title_zh" if lang == "zh" else "title_en", "")
    because = getattr(first, "because_zh" if lang == "zh" else "because_en", "")
    fix = getattr(first, "fix_zh" if lang == "zh" else "fix_en", "")
    out = f"**{t('likely_cause', lang, title=title.rstrip('。.'))}** {because}".strip()
    if fix:
        out += t("fix_suffix", lang, fix=fix)
    more = [c for c in causes[1:3] if getattr(c, "likelihood", "") == "likely"]
    for c in more:
        out += "\n\n" + t(
            "also_possible", lang, title=getattr(c, "title_zh" if lang == "zh" else "title_en", "").rstrip("。.")
        )
    return out


# A title that names a cause reads "<symptom or error>: <cause>" ("Why memory jumps after the first step: .grad and
# optimizer states are allocated lazily"); the colon is the first one outside quotes. "Myth: …" states the wrong
# belief, and a title without such a colon names a topic ("How much ZeRO-1/2/3 save, with the paper's numbers").
_QUOTED_SPAN = re.compile(r"'[^']*'|\"[^\"]*\"|“[^”]*”|‘[^’]*’|`[^`]*`")
_TITLE_COLON = re.compile(r":\s|：")
# "…: how big a batch pays off", "…: which to set and how the missing one is derived": a topic after the colon.
_QUESTION_LIKE = re.compile(
    r"^\W*(?:how|what|which|why|when|where|should|can|does|do|is|are)\b|[?？]|怎么|如何|什么|哪|多少|吗|原因$|"
    r"^\W*(?:the )?\w+ rule\b|\bhow to\b|\bby (?:TRL |transformers )?version\b|按.{0,8}版本",
    re.I,
)
# "How to set batch sizes: fit the micro batch first, …" gives advice after its colon, not a cause ("Why memory jumps
# …: .grad … allocated lazily" does).
_NOT_A_CAUSE = re.compile(
    r"^\s*(?:myth|误区|误解)\b|^\s*(?:myth|误区|误解)\s*[:：]|^\W*how\b|^\W*(?:怎么|如何|怎样)", re.I
)


def _after_colon(title: str) -> str:
    if _NOT_A_CAUSE.search(title):
        return ""
    masked = _QUOTED_SPAN.sub(lambda m: "x" * len(m.group(0)), title)
    m = _TITLE_COLON.search(masked)
    if m is None:
        return ""
    cause = title[m.end() :].strip().rstrip("。.")
    return "" if len(cause) < 8 or _QUESTION_LIKE.search(cause) else cause


def card_cause(card: Card, lang: Lang, *, stated: bool = True) -> str:
    """The cause a card states (its ``cause_zh`` / ``cause_en``; only the title's with ``stated=False``), else the
    cause its title names after its colon, or "" when the title names a topic or a myth. The English and the Chinese
    title must both name it (so both languages open the same way); the text is the asked language's."""
    own = card.cause_zh if lang == "zh" else card.cause_en
    if stated and own:
        return own.rstrip("。.")
    if not (_after_colon(card.title_en) and _after_colon(card.title_zh)):
        return ""
    return _after_colon(_title(card, lang))


def _tried_remedy_verdict(r: Results, card: Card) -> str | None:
    """A diagnosis whose message reports a remedy tried for memory that cannot work ("gradient_accumulation_steps 已经
    调到2，还是OOM", "I already use 4 GPUs and still OOM"): why it did not help opens the answer, with the card's
    correction (what to change instead), not "no known cause". None when the top card is not that belief's card."""
    rule = next((m for m in r.misconceptions[:2] if m.card_id == card.id and m.key in CAUSE_BELIEFS), None)
    if rule is None or not card.misconceptions or not (rule.key in r.held or _belief_only_reported(r)):
        return None
    if (
        rule.key == "mixed_precision_halves"
        and rule.key not in r.held
        and not r.reported_oom
        and not precision_left_memory_unchanged(r.prose)
    ):
        # AMP named in a report without an OOM ("memory usage is half of the normal mode"): no remedy that failed,
        # unless the report says memory did not go down ("with '--amp' the memory usage was not decreased")
        return None
    fix = card.misconceptions[0]
    return f"**{t('tried_remedy', r.lang)}** {fix.correction_zh if r.lang == 'zh' else fix.correction_en}"


def _card_cause_verdict(card: Card, lang: Lang) -> str:
    """A diagnosis from a retrieved card alone: its cause when the title names one, never the title of a topic
    as if it were a cause; otherwise what the card says that bears on it, and what to paste to narrow it down."""
    cause = card_cause(card, lang)
    direct = _direct(card, lang).strip("*").strip()
    if cause:
        return f"**{t('likely_cause', lang, title=cause)}** {direct}"
    return f"**{t('known_related', lang)}** {direct} " + t("to_narrow", lang)


def opens_with_usual_causes(r: Results) -> bool:
    """A diagnosis from retrieved cards alone whose message names nothing the top card is about: it opens with the
    usual causes ranked, not with the top card's cause as if it were found (see :mod:`rag.evidence`). So does one whose
    top card names no cause and leads with a yes/no verdict ("Hardly at all. Lowering GA …"): that verdict answers a
    belief the user did not state, not what they report."""
    return (
        r.act == "diagnose"
        and bool(r.cards)
        and r.evidence is not None
        and not getattr(r.diagnosis, "causes", None)
        and not (r.misconceptions and all(m.key in CAUSE_BELIEFS for m in r.misconceptions[:2]))
        and (not _cause_fits(r, r.cards[0]) or _verdict_without_cause(r.cards[0], r.lang))
    )


def _verdict_without_cause(card: Card, lang: Lang) -> bool:
    """The card's title names no cause and its lead is a yes/no verdict (a myth card's)."""
    return not card_cause(card, lang) and lead_kind(card) == "verdict"


def _cause_fits(r: Results, card: Card) -> bool:
    """Whether the message selects ``card``'s cause: something in it is what the card is about (rag.evidence), the
    card speaks of the symptom reported (a slowdown is not explained by a memory card), and its lead is not about
    another training stack than the one the message names."""
    ev = r.evidence
    if ev is None:
        return True
    if not ev.selects(card):
        return False
    return r.asked is None or (not stack_conflict(card, r.asked) and symptom_fits(card, r.asked))


def _cause_label(card: Card, lang: Lang, in_family: bool, selected: bool) -> str:
    """A card as one ranked cause: the cause its title names, its first clause; a card about the reported symptom
    whose title names no single cause ("GPU memory creeps up over steps until OOM: leak, longer samples or the caching
    allocator?") by its title up to that question; "" for a how-to or a myth, which are not causes. The cause a
    topic card states ("ZeRO stages 1–3 shard model states, …") is listed only when the message names something the card
    is about: every memory report would otherwise list the same general facts as its causes."""
    label = card_cause(card, lang, stated=selected)
    # (a title that names no symptom at all, "Bytes per parameter under fp32, mixed precision, …", is a reference, not
    # a cause of what was reported)
    if (
        not label
        and in_family
        and not _NOT_A_CAUSE.search(_title(card, lang))
        and symptom_family(card.title_en) != "generic"
    ):
        label = re.split(r"(?<=[?？])", _title(card, lang), maxsplit=1)[0]
    return re.split(r"[；;]\s*", label, maxsplit=1)[0].strip().rstrip("。.?？")


#: What to paste to tell a symptom family's usual causes apart, in the order asked: each item with what already gives
#: it — groups of setup keys (one key of every group known) or the pasted kinds ("@error") that carry it. An item
#: named by a setup field is asked for by that field's one name.
_PASTE_ITEMS: dict[str, tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]] = {
    "memory": (
        ("error_tail", (("@error", "@traceback"),)),
        ("model", (("model", "model_text", "num_params"),)),
        ("method", (("finetune",),)),
        ("precision", (("precision",),)),
        ("train_micro_batch_size_per_gpu", (("train_micro_batch_size_per_gpu",),)),
        ("seq_len", (("seq_len",),)),
        ("gpu", (("gpu", "gpu_text", "gpu_memory_gb"), ("world_size",))),
        ("sharding", (("zero_stage", "@config"),)),
    ),
    "loss": (
        ("train_log", (("@log",),)),
        ("precision_kind", (("precision",),)),
        ("lr", (("learning_rate",),)),
        (
            "effective_batch",
            (
                ("train_batch_size", "train_micro_batch_size_per_gpu"),
                ("train_batch_size", "gradient_accumulation_steps"),
            ),
        ),
        ("command_or_config", (("@command", "@config"),)),
    ),
    "speed": (
        ("command", (("@command",),)),
        ("sharding_offload", (("zero_stage", "@config"),)),
        ("gpu_links", (("gpu", "gpu_text"), ("world_size",))),
        ("step_time", (("@step_time",),)),
        ("tokens_per_step", (("train_batch_size", "train_micro_batch_size_per_gpu"), ("seq_len",))),
    ),
    "generic": (
        ("full_error", (("@error", "@traceback", "@log"),)),
        ("command", (("@command",),)),
        ("config", (("@config",),)),
        ("framework", ((),)),
    ),
}


def paste_request(r: Results, family: str) -> str:
    """What to paste to tell the usual causes of ``family`` apart, without what the message already gives (a user
    who pasted the launch command, or stated the model and the GPUs, is not asked for them again); "" when the
    message gives all of it."""
    given = set(r.setup.known()) | {"@" + k for k in (r.evidence.pasted if r.evidence is not None else [])}
    if r.speed_stated:
        given.add("@step_time")
    items = [
        t("paste." + name, r.lang) if "paste." + name in CATALOGUE else key_name(name, r.lang)
        for name, groups in _PASTE_ITEMS.get(family, _PASTE_ITEMS["generic"])
        if not all(group and given & set(group) for group in groups)
    ]
    if not items:
        return ""
    if r.lang == "zh":
        listed = "、".join(items)
    else:
        listed = items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
    return t("paste_head", r.lang, items=listed)


#: A lead's opening verdict: one short sentence ("No.", "不是。", "基本没用。", "不会自动合并。") before its fact.
_SHORT_VERDICT = re.compile(r"^(?:[^。.\s]{1,8}。|(?:\w+[ ,]*){1,4}\.\s+)")


def _without_verdict(lead: str) -> str:
    """The lead without its opening verdict sentence; "" when it has none (then it is not a fact to give)."""
    m = _SHORT_VERDICT.match(lead)
    return lead[m.end() :].lstrip() if m and lead[m.end() :].strip() else ""


def _usual_causes_verdict(r: Results) -> str:
    """The two or three usual causes, those the message names something of first, then by retrieval rank; and the
    one line of what to paste to tell them apart."""
    lang = r.lang
    ev = r.evidence
    family = ev.family if ev is not None else "generic"
    # Cards that speak of the reported symptom first (the others only when none does), those the message names
    # something of before the rest, then by retrieval rank.
    in_family = [c for c in r.cards if card_in_family(c, family)]
    selected = {c.id for c in r.cards if ev is None or ev.selects(c)}
    ranked = sorted(in_family or r.cards, key=lambda c: 0 if c.id in selected else 1)
    labels = [_cause_label(c, lang, c in in_family, c.id in selected) for c in ranked]
    labels = list(dict.fromkeys(lbl for lbl in labels if lbl))[:3]
    paste = paste_request(r, family)
    if r.asked is not None and not any(symptom_fits(c, r.asked) for c in r.cards):
        # No retrieved card speaks of the symptom reported ("slower" answered by memory cards): no cause to name.
        return f"**{t('no_known_cause', lang)}** {paste}".rstrip()
    if not labels:
        # The closest fact is a card's statement, never a yes/no verdict on a belief the user did not state, nor one
        # model size's numbers for another model ("A single 24 GB card cannot fully fine-tune a 7B model" for whisper
        # large, transformers #20348)
        # (nor the card of a belief the message only touches: "I already use … +amp" (DeepSpeed #3652) is answered by
        # no "It does not halve memory")
        unheld = _unheld_belief_cards(r)
        fact = next(
            (
                c
                for c in ranked
                if lead_kind(c) != "verdict" and c.id not in unheld and (r.asked is None or size_fits(c, r.asked))
            ),
            None,
        )
        if fact is not None:
            return f"**{t('known_related', lang)}** {_direct(fact, lang).strip('*').strip()} {paste}".rstrip()
        # A verdict card whose lead answers this question ("OOM even after batch_size 128 -> 6": the effective batch
        # does not set memory) gives its fact without the verdict word, which would answer a belief not stated.
        verdict = next(
            (c for c in ranked if r.asked is not None and lead_answers(c, r.asked, r.act, r.all_cards).passes), None
        )
        if verdict is not None and (stated := _without_verdict(_direct(verdict, lang).strip("*").strip())):
            return f"**{t('known_related', lang)}** {stated} {paste}".rstrip()
        return f"**{t('no_known_cause', lang)}** {paste}".rstrip()
    if len(labels) == 1:
        return f"**{t('usual_cause_one', lang, cause=labels[0])}** {paste}".rstrip()
    sep = "；" if lang == "zh" else "; "
    causes = sep.join(f"{i}) {lbl}" if lang == "zh" else f"({i}) {lbl}" for i, lbl in enumerate(labels, 1))
    return f"**{t('usual_causes', lang, causes=causes)}** {paste}".rstrip()


#: What a memory figure depends on, in the order the fit opening asks for them.
_FIT_NEEDS = ("model", "finetune", "precision", "train_micro_batch_size_per_gpu", "seq_len", "gpu")


def fit_without_figure(r: Results) -> bool:
    """A fit question for which no memory figure was computed: no model named, or the model without the method or
    the precision a figure needs. Its opening says what is needed, not a card's general lead ("how to train
    llama2-7b on an A100 80G?" named no method: a card on LoRA memory would answer a question not asked). A method
    the calculator cannot express is said by its own line instead (``missing_line``)."""
    main = r.call("main")
    return (
        r.act == "fit"
        and (main is None or not main.result)
        and "unsupported" not in r.missing
        and bool(_fit_missing(r))
    )


def _fit_missing(r: Results) -> list[str]:
    """What of :data:`_FIT_NEEDS` the message did not give (a model name the presets do not know counts as not
    given when the memory reader still needs the model)."""
    given = set(r.setup.known())
    if given & {"gpu_text", "gpu_memory_gb"}:
        given.add("gpu")
    if given & {"model_text", "num_params"} and "model" not in r.missing:
        given.add("model")
    return [k for k in _FIT_NEEDS if k not in given]


#: A card whose title says what memory is made of ("Where LoRA memory goes", "Bytes per parameter under …", "QLoRA
#: memory: a 4-bit base at …", "How much ZeRO-1/2/3 save"), not one that only mentions memory (nn.DataParallel's GPU 0,
#: ZeRO-Offload's "saves GPU memory, costs RAM and time", OOTDiffusion #176 opened with it as the breakdown).
_BREAKDOWN_TITLE = re.compile(
    r"^where .{0,30}memory goes|^bytes per param|^\w+ memory: |^why \w+ needs (?:so much|more) memory|how much .{0,20}\bsave",
    re.I,
)


def breakdown_card(r: Results) -> Card | None:
    """The card whose lead says what memory is made of, for a fit question without a figure: a card about memory
    in general (one whose title names a size, "7B on a 24 GB card", would answer a setup the user did not state), that
    speaks of memory and passes the opening gate (a torchtune incompatibility is no breakdown of memory). A myth card's
    lead answers a belief ("No, GPUs do not pool …"), not what memory is made of (CPM-2-Finetune #4). What ZeRO saves
    is a breakdown only for a message that names ZeRO or DeepSpeed when another card says what memory is made of
    (RealNet #2 asked what training a diffusion model needs and got the ZeRO stages)."""
    found = [
        c
        for c in r.cards
        if not c.is_myth
        and not MODEL_SIZE.search(_title(c, r.lang))
        and _BREAKDOWN_TITLE.search(c.title_en)
        and card_in_family(c, "memory")
        and lead_fits(r, c)
        and _card_method(c) in (None, r.setup.get("finetune"))
    ]
    if not _ZERO_NAMED.search(r.prose) and r.setup.get("zero_stage") is None:
        found.sort(key=lambda c: bool(_SAVINGS_TITLE.search(c.title_en)))
    return found[0] if found else None


_SAVINGS_TITLE = re.compile(r"how much .{0,20}\bsave", re.I)
_ZERO_NAMED = re.compile(r"zero|deepspeed", re.I)


_METHOD_TITLE = re.compile(r"^(?:where )?(QLoRA|LoRA)\b", re.I)


def _card_method(c: Card) -> str | None:
    """The fine-tuning method a card's title is about ("QLoRA memory: …"): its breakdown is that method's, so it is
    no breakdown for a user who did not say they use it (LOcc #7 asked about batch 8 and got QLoRA's)."""
    m = _METHOD_TITLE.match(c.title_en)
    return m.group(1).lower() if m and "memory" in c.title_en.lower() else None


def _fit_missing_names(r: Results) -> str:
    """What a memory figure still needs, each by its one name ("precision", "序列长度") or how to ask for it where that
    differs ("the model or its size")."""
    return t("enum_sep", r.lang).join(
        t(f"need.{k}", r.lang) if f"need.{k}" in CATALOGUE else key_name(k, r.lang) for k in _fit_missing(r)
    )


#: Training stacks whose memory the LLM calculators do not model: what a figure depends on there (frames and
#: resolution for a video diffusion run, not a sequence length) is their own card's to say.
_OWN_MEMORY_STACKS = frozenset({"diffusion"})


def _own_memory_card(r: Results) -> Card | None:
    """The retrieved card of a stack in :data:`_OWN_MEMORY_STACKS` the message names (see :mod:`rag.opening`), else
    None: a diffusion fit question opens with what diffusion memory is made of, not with the LLM inputs list."""
    named = _OWN_MEMORY_STACKS & set(r.asked.stacks if r.asked is not None else ())
    if not named:
        return None
    return next((c for c in r.cards if named & card_topic(c).title_stacks), None)


def _fit_depends_verdict(r: Results) -> str:
    """A fit question without a figure (a number for a setup the user did not state is wrong): instead,
    what it depends on, exactly what to give, and the card's breakdown of what memory is made of."""
    if (own := _own_memory_card(r)) is not None:
        return _direct(own, r.lang)
    if not set(r.setup.known()) & {"model", "model_text", "num_params"} and names_non_llm_network(r.prose):
        return _measure_verdict(r)
    names = _fit_missing_names(r)
    by_method = _method_verdict(r, names)
    if by_method:
        return by_method
    head = t("fit_depends", r.lang, missing=names)
    general = breakdown_card(r)
    if general is None:  # no card says what memory is made of: the question alone, never a colon with nothing after it
        return f"**{head}**"
    sep = "" if r.lang == "zh" else " "
    return f"**{head}{sep}{t('fit_depends_breakdown', r.lang)}** {_direct(general, r.lang).strip('*').strip()}"


def _measure_verdict(r: Results) -> str:
    """A fit question about a vision or speech network (rag.network_kind): how to measure its per-sample cost against
    the user's card, since asking for a method and a sequence length would be asking the wrong question."""
    gb, gpu = r.setup.get("gpu_memory_gb"), r.setup.get("gpu")
    # (a stated capacity is GiB as nvidia-smi shows it, as calculators.memory reads gpu_memory_gb)
    gib_cap = float(gb) if gb else GPU_PRESETS[gpu].memory_gib if gpu in GPU_PRESETS else None
    card = ""
    if gib_cap:
        cap = gib(gib_cap * 2**30, r.lang)
        if gpu in GPU_PRESETS or r.setup.get("gpu_text"):
            card = t("fit_measure_card_named", r.lang, gpu=_gpu_name(r, {"gpu_name": gpu}), cap=cap)
        else:
            card = t("fit_measure_card", r.lang, cap=cap)
    sep = "" if r.lang == "zh" else " "
    return f"**{t('fit_measure', r.lang, card=card)}**{sep}{t('fit_measure_tail', r.lang)}"


def _method_verdict(r: Results, missing: str, head_key: str = "method_unknown") -> str:
    """A fit question that names the model but not the method (``Plan.method_unknown``): each method's model states
    on the stated GPUs and whether they leave room for activations — the part of the answer that needs no assumed
    micro batch or sequence length — then what the whole peak still needs. "" without the sweep's result."""
    sweep = r.call("method_sweep")
    if not r.plan.method_unknown or sweep is None or not sweep.result or _about_host_ram_only(r):
        return ""
    lang = r.lang
    # (an RL run's other models are not in these states: whether they leave room is not said, rag.planner._OTHER_MODELS)
    cap = None if r.plan.rl_stage else sweep.result.get("gpu_capacity")
    clauses = []
    for point in sweep.result["points"]:
        states = _states(point["estimate"])
        clause = t(f"method.{point['value']}", lang) + " " + gib(states, lang)
        sharded = r.call(f"{point['value']}_sharded")
        sharded_states = _states(sharded.result) if sharded is not None and sharded.result else None
        if point["value"] != "full" and not (cap and states >= cap):
            sharded = sharded_states = None  # (LoRA sharded only where it decides the verdict: fewer words otherwise)
        if sharded is not None and sharded_states is not None:
            n = sharded.arguments.get("world_size")
            clause += t("method_sharded", lang, states=gib(sharded_states, lang), n=n)
        if cap:
            if states < cap:
                clause += t("method_fits", lang, free=gib(cap - states, lang))
            elif sharded_states is not None and sharded_states < cap:
                clause += t("method_fits_sharded", lang, free=gib(cap - sharded_states, lang))
            elif sharded_states is not None:
                clause += t("method_no_fit_sharded", lang)
            else:
                clause += t("method_no_fit", lang)
        clauses.append(clause)
    first = sweep.result["points"][0]["estimate"]
    gpu = _gpu_name(r, first)
    if re.search(r"\d\s*gi?b\b", gpu, re.I):  # only a capacity was given ("a 14.56 GiB GPU"): say it once
        where = t("method_where_cap", lang, cap=gib(cap, lang)) if cap else ""
    else:
        where = t("method_where", lang, gpu=gpu, cap=gib(cap, lang)) if cap else ""
    head = t(head_key, lang, where=where, clauses=t("clause_sep", lang).join(clauses))
    sep = "" if lang == "zh" else " "
    return f"**{head}**{sep}{t(head_key + '_tail', lang, missing=missing)}"


def _method_table(r: Results) -> str:
    """The model states of each method (``method_sweep``) as a table: the numbers the opening quotes."""
    sweep = r.call("method_sweep")
    if sweep is None or not sweep.result:
        return ""
    lang = r.lang
    named = [(t("method." + p["value"], lang), p["estimate"]) for p in sweep.result["points"]]
    for method in ("full", "lora"):
        sharded = r.call(f"{method}_sharded")
        if sharded is not None and sharded.result:
            named.append(
                (t(f"method.{method}", lang) + ("（ZeRO-3）" if lang == "zh" else " (ZeRO-3)"), sharded.result)
            )
    head = [key_name("finetune", lang), *(row_name(k, lang) for k in _STATE_PARTS), t("model_states_col", lang)]
    rows = ["| " + " | ".join(head) + " |", "|---|---:|---:|---:|---:|"]
    for name, e in named:
        cells = [gib(e[k], lang) for k in _STATE_PARTS] + [gib(_states(e), lang)]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return t("method_table_heading", lang) + "\n\n" + "\n".join(rows)


#: The yes/no word a belief's verdict opens with ("不会。", "No."), dropped when the verdict is given as a cause.
_VERDICT_WORD = re.compile(
    r"^(?:不会减半|基本不会|不会|不是|不对|不一定)[。，,]\s*|"
    r"^(?:No|Essentially no|Not by half|Not automatically)[.,]\s*"
)


#: Glossary concepts naming an RL or preference stage: several models (policy, reference, reward, value) and generation,
#: which the one-model memory estimate does not count.
RL_STAGES = frozenset({"ppo", "grpo", "dpo", "reinforcement learning"})


def _belief_held(r: Results) -> bool:
    """Whether the user holds (asserts or presupposes) one of the first two beliefs the message touches."""
    return any(m.key in r.held for m in r.misconceptions[:2])


def _belief_only_reported(r: Results) -> bool:
    """The first two beliefs the message touches are named only in reports of the run (see
    :func:`rag.intents.belief_reported`), none held: a diagnosis does not open by correcting them."""
    return not _belief_held(r) and any(belief_reported(r.prose, m) for m in r.misconceptions[:2])


def _belief_opens(r: Results) -> bool:
    """Whether a wrong belief's verdict opens the answer: for a question about the claim (yes/no, is it normal, a
    diagnosis whose cause it is), or where the user holds it. "bf16 or fp16, which?" touches "mixed precision halves
    memory" without believing it: "It does not halve memory" would answer a question nobody asked."""
    if not r.misconceptions or r.act not in ("yes_no", "is_normal", "explain", "diagnose", "fit", "configure"):
        return False
    if not _belief_held(r) and not _belief_fits_symptom(r):
        # "bf16 runs 4x slower than fp32 … shouldn't it be faster?" (Lightning #11933) names "fp16 uses less memory"
        # on the way: a memory belief's verdict does not answer a question about speed.
        return False
    if r.act == "diagnose":
        # The correction may be the cause ("4张3090合计96G还是OOM": cards do not pool memory), but not where the belief's
        # words only report the run: "显存不够 … train_batch_size 我已经改到最小了" names the batch as a remedy tried,
        # and "OOM is not caused by the effective batch" would correct what nobody said.
        return not _belief_only_reported(r)
    if r.act in ("explain", "configure", "fit") and r.asked is not None:
        if _belief_held(r):
            return True
        # Not detected as held, but the asking sentences speak of the symptom the belief is about ("混合精度能省一半
        # 显存吧，哪个更好？" asks about memory; "sft 用 bf16 还是 fp16 好呢？" does not).
        family = r.asked.family
        return family != "generic" and any(c is not None and card_in_family(c, family) for c in _belief_cards(r))
    return True


def _belief_fits_symptom(r: Results) -> bool:
    """Whether one of the first two beliefs' cards speaks of the symptom the question asks about (a slowdown, a loss
    curve; any, when the question names neither: see :func:`rag.opening.symptom_fits`)."""
    if r.asked is None:
        return True
    return any(c is None or symptom_fits(c, r.asked) for c in _belief_cards(r))


def _unheld_belief_cards(r: Results) -> set[str]:
    """The card ids of the beliefs the message touches without holding them: no opening of a diagnosis."""
    return {m.card_id for m in r.misconceptions if m.key not in r.held}


def _belief_cards(r: Results) -> list[Card | None]:
    """The cards of the first two beliefs the message touches (None for one whose card is not among the cards)."""
    by_id = {c.id: c for c in r.all_cards or r.cards}
    return [by_id.get(m.card_id) for m in r.misconceptions[:2]]


def _lower_first(text: str) -> str:
    """A sentence as a clause after "Most likely cause:": "With Adam, …" → "with Adam, …" ("OOM is …" keeps its
    acronym)."""
    return text[0].lower() + text[1:] if len(text) > 1 and text[0].isupper() and text[1].islower() else text


def _belief_verdict(r: Results) -> str:
    lang = r.lang
    head = " ".join(m.verdict_zh if lang == "zh" else m.verdict_en for m in r.misconceptions[:2])
    if r.act == "diagnose" and all(m.key in CAUSE_BELIEFS for m in r.misconceptions[:2]):
        # A diagnosis opens with the cause, not with "No." to a question the user did not ask: "each GPU still
        # needs 16 GB" is explained by "GPUs do not pool memory".
        causes = [
            _lower_first(_VERDICT_WORD.sub("", m.verdict_zh if lang == "zh" else m.verdict_en).rstrip("。."))
            for m in r.misconceptions[:2]
        ]
        return "**" + t("likely_cause", lang, title=t("clause_sep", lang).join(causes)) + "**"
    if r.act == "fit" or r.plan.method_unknown:
        # "Would 2 servers of 8 A100s be sufficient? … 1280GB in total": the belief's verdict, then what each method
        # takes per GPU (sharded, it fits)
        mv = _memory_verdict(r) or _method_verdict(r, _fit_missing_names(r))
        return f"**{head}**" + (f"\n\n{mv}" if mv else "")
    if r.act == "is_normal" and all(m.key in CAUSE_BELIEFS for m in r.misconceptions[:2]):
        # "多卡训练显存翻倍，是否正常？": the belief's correction is why what they saw is expected — "Yes", not "No".
        why = t("clause_sep", lang).join(
            _VERDICT_WORD.sub("", m.verdict_zh if lang == "zh" else m.verdict_en).rstrip("。.")
            for m in r.misconceptions[:2]
        )
        return "**" + t("expected_because", lang, why=why) + "**"
    return f"**{head}**"


#: An out-of-memory the user reports while the model loads, before training starts.
OOM_AT_LOAD = re.compile(
    r"(?:\boom\b|out of memory)[^.。\n]{0,60}?\b(?:during|while|when|at)\s+(?:the\s+)?(?:model\s+)?load(?:ing)?\b|"
    r"\b(?:during|while|when)\s+(?:the\s+)?(?:model\s+)?loading\b[^.。\n]{0,60}?(?:\boom\b|out of memory)|"
    r"(?:加载模型|模型加载|载入模型)(?:时|的时候|阶段)?[^。\n]{0,20}?(?:oom|爆显存|显存不足|显存溢出|out of memory)|"
    r"(?:oom|爆显存|显存不足|显存溢出)[^。\n]{0,12}?(?:在|于)?(?:加载模型|模型加载|载入模型)",
    re.I,
)


# An OOM that came after the run had trained for a while, or only on some samples: its model states fit.
_LATER = (
    r"(?:一段时间(?:之?后|就)|跑了一会|跑着跑着|训练到一半|训到一半|中途|\d+\s*(?:步|个?steps?|个?epochs?|轮)\s*(?:之?后|时)|"
    r"(?:一定|部分|某些|个别|特定)的?(?:数据|样本|batch)|"
    r"\bafter (?:a while|some (?:time|steps|iterations)|a few (?:steps|iterations|hours|epochs)|"
    r"\d+(?:\.\d+)?\s*(?:steps|iterations|epochs|hours|hrs))\b|\bpartway\b|\bmidway\b|"
    r"\bon (?:some|certain|a few|specific) (?:samples|batches|data|inputs|examples)\b|"
    # at the save after training ("An OOM error occurred while saving in the last step", FastChat #693): training held
    # its states; the save gathers a full state dict on top
    r"\b(?:while|when|during) saving\b|\bin the (?:last|final) step\b|保存(?:模型|权重|checkpoint)?\s*(?:时|的时候))"
)
# ("出现OOM": no \b between a CJK character and a Latin letter, so the ASCII-letter bounds of intents._OOM_SEEN.)
_OOM_WORD = r"(?:(?<![A-Za-z])oom(?:s|ed|ing)?(?![A-Za-z])|out of memory|爆显存|显存不足|显存溢出)"
OOM_MID_RUN = re.compile(rf"{_LATER}[^.。\n]{{0,40}}?{_OOM_WORD}|{_OOM_WORD}[^.。\n]{{0,40}}?{_LATER}", re.I)


def _oom_estimate_verdict(r: Results) -> str:
    """A reported OOM whose setup the message states well enough for the calculator: when the estimate does not fit,
    that is the cause ("needs ~152 GiB per GPU on an 80 GiB card; the nearest setting that fits: …"), ahead of a
    reader's guess from the error text or a list of usual causes; when it fits, what the run used beyond it."""
    main = r.call("main")
    if not (r.reported_oom and main is not None and main.result):
        return ""
    if main.result.get("fits") is None and not (_states_crowd_card(main.result) and _states_are_the_runs(r)):
        return ""
    if (
        r.misconceptions
        and all(m.key in CAUSE_BELIEFS for m in r.misconceptions[:2])
        and not _belief_only_reported(r)
        # (a run that shards its weights, "4张3070的卡共64g显存 … ds_config_zero3.json" (Qwen #614): the estimate of that
        # sharded run is the cause, not "cards do not pool their memory")
        and not (shards_weights(r.setup) and all(m.key == "more_gpus_pool_memory" for m in r.misconceptions[:2]))
    ):
        return ""  # "4张3090合计96G还是OOM": the belief (cards pool their memory) is the cause to open with
    if r.evidence is not None and RL_STAGES & set(r.evidence.concepts):
        return ""  # a PPO/GRPO/DPO run holds more models than the one-model estimate: it is not their run's memory
    if main.result.get("fits") is None:
        # no preset architecture, so no activations: the states that alone fill the card are the cause to open with
        # ("falcon-40b … a single A100 GPU of 80GB … still OOM for … lora with bfloat16-mixed", litgpt #165)
        if getattr(r.diagnosis, "causes", None) or OOM_AT_LOAD.search(r.prose):
            return ""  # a cause read from the pasted error, or a load-time OOM, explains it better than training states
        return _states_oom_verdict(r, main.result)
    if main.result["fits"] and getattr(r.diagnosis, "causes", None):
        return ""  # the estimate fits: a cause the readers found in the pasted error explains the rest
    if (
        not main.result["fits"]
        and main.result.get("gpu_capacity")
        and _states(main.result) > main.result["gpu_capacity"]
        and OOM_MID_RUN.search(r.prose)
    ):
        # "全量微调qwen2-7b-vl … 仍然会在一定数据出现OOM" (ms-swift #2228): a run that trained until some samples came
        # holds its model states; model states alone over the card (on what was assumed of its sharding) contradict
        # what the user saw. (Activations over the card stay the verdict: the longest batch is what does not fit.)
        return ""
    if main.result["fits"] and OOM_AT_LOAD.search(r.prose):
        # "CUDA OOM during Model Loading … GPU 0 running out of memory" (unsloth #3942): a training-time figure that
        # fits says nothing about a load that put every rank's copy on one GPU; the cards on loading explain it
        return ""
    return _memory_verdict(r)


def _oom_method_verdict(r: Results) -> str:
    """A reported OOM whose message names the model and the GPU but not the method ("I use 1 node 4 V100（32G） to sft
    on llama2-7b, … but got out of memory", LMOps #160): when a full fine-tune's states alone exceed the card, each
    method's model states on it say whether the run could fit at all, in place of a list of usual causes (a cause the
    message selects, or one read from the pasted error, still comes first). Not for an OOM while loading (load-time
    memory is not the training states) nor for an RL run (its other models are not counted)."""
    if not (r.reported_oom and r.plan.method_unknown) or OOM_AT_LOAD.search(r.prose):
        return ""
    if r.plan.rl_stage or (r.evidence is not None and RL_STAGES & set(r.evidence.concepts)):
        return ""
    sweep = r.call("method_sweep")
    if sweep is None or not full_states_exceed_card(sweep.result):
        return ""  # every method's states fit the card: they are not what ran out, the usual causes are
    return _method_verdict(r, _fit_missing_names(r), "oom_method_unknown")


def _steps_checked(r: Results) -> bool:
    """The message reports a step count and the batch call checked it against the arithmetic on the user's numbers:
    that check answers "why does the progress bar show 193 steps?" whatever the act was read as."""
    call = r.call("effective_batch")
    return bool(call is not None and call.result and call.result.get("observed_steps"))


def _steps_back_solved(r: Results) -> str:
    """ "Why only 5 steps per epoch on 20 images?" with no batch setting stated: the batch the run used per step,
    from its own samples and steps, and which settings to look at."""
    call = r.call("steps_back_solve")
    if call is None or not call.result:
        return ""
    return "**" + call.summary_md + "** " + t("steps_backsolve_check", r.lang)


#: Beliefs that accumulation steps add memory: a diagnosis holding one reports memory that grew with GA.
_GA_GROWTH_BELIEFS = {"ga_raises_memory", "ga_stores_copies"}
#: What a user who measured memory growing with the accumulation steps writes ("显存占用和梯度累加步长成正比", "I am seeing
#: a high increase in GPU memory usage the larger I make `gradient_accumulation_steps`", "grad accum -> memory").
_GA_GROWTH_SEEN = re.compile(
    r"成正比|正比|proportional|linearly|\bI (?:am )?(?:see|seeing|saw|observe[ds]?|notic(?:e|ed|ing))\b.{0,80}"
    r"(?:increase|grow|rise|more)|still increases|increases memory|memory (?:usage )?(?:increases|grows|goes up)|"
    r"越大.{0,8}(?:显存|内存).{0,6}(?:越大|越高|越多)|显存.{0,8}(?:随|跟着).{0,12}(?:增加|上涨|增长|变大)",
    re.I,
)
#: The card that names the exceptions where accumulation does add memory (pipeline parallelism first).
GA_EXCEPTIONS_CARD = "ga-memory-exceptions"


#: The card that explains a graph kept alive across steps (`total_loss += loss`), cited with the GA-growth opening.
GRAPH_KEPT_CARD = "mem-creeping-growth-over-steps"


def reports_ga_growth(prose: str, misconceptions: list[Any]) -> bool:
    """Whether the prose reports memory that grew with the accumulation steps (rather than asks whether it does)."""
    return bool(_GA_GROWTH_SEEN.search(prose)) and any(m.key in _GA_GROWTH_BELIEFS for m in misconceptions[:2])


def _ga_growth_verdict(r: Results) -> str:
    """A diagnosis of memory that grew with gradient_accumulation_steps ("显存占用和梯度累加步长成正比", gpt-neox #1123):
    the cause, not "No, GA does not add memory" to someone who measured that it did — pipeline parallelism when the
    message names it (its GA is the pipeline's micro-batch count), else something keeping each micro-batch's graph."""
    if r.act != "diagnose" or r.asked is None or not _GA_GROWTH_SEEN.search(r.prose):
        return ""
    pipeline = r.evidence is not None and "pipeline parallel" in r.evidence.concepts
    if pipeline and r.cards and r.cards[0].id == GA_EXCEPTIONS_CARD:
        # "does it depend on the pipeline parallel values too?" asks whether, and pipeline parallelism is the answer
        return t("ga_growth_pipeline", r.lang)
    if not r.asked.asks_whether and reports_ga_growth(r.prose, r.misconceptions):
        return t("ga_growth_cause", r.lang)
    return ""


def _host_ram_verdict(r: Results) -> str:
    """The message reports or asks about the host's RAM and states the model and several GPUs per node: the load-time
    figure per node (calculators.host_ram) and the ways down, before any GPU-memory figure."""
    call = r.call("host_ram_load")
    if call is None or not call.result:
        return ""
    return f"**{call.summary_md}** " + t("host_ram_fix", r.lang)


def _throughput_verdict(r: Results) -> str:
    """A speed question that states the step time, the model's size, the GPUs and the tokens per step: how its
    FLOPs utilisation compares (calculators.throughput), with the arithmetic and published figures to hold it against."""
    call = r.call("throughput")
    if call is None or not call.result:
        return ""
    mfu = call.result.get("mfu")
    if mfu is None:
        head = t("speed_no_peak", r.lang, tflops=f"{call.result['achieved_tflops_per_gpu']:,.3g}")
    elif mfu > 1:
        head = t("speed_over_peak", r.lang, mfu=f"{mfu:.0%}")
    else:
        band = "low" if mfu < _MFU_LOW else "moderate" if mfu < _MFU_GOOD else "good"
        head = t("speed_" + band, r.lang, mfu=f"{mfu:.1%}")
    reference = t("speed_reference", r.lang)
    if call.result.get("tokens_per_step") is not None:  # batch × length: an upper bound unless every sample fills it
        reference += ("" if r.lang == "zh" else " ") + t("speed_full_length", r.lang)
    return f"**{head}** {call.summary_md} {reference}"


#: MFU bands for the opening's word: under 15% is about a third of what tuned large runs report (40–56%), 35% and over
#: is in their reach.
_MFU_LOW, _MFU_GOOD = 0.15, 0.35


def _lr_number(x: float) -> str:
    return f"{x:.3g}"


def _lr_scaling_verdict(r: Results) -> str:
    """A learning-rate question about a change of batch or GPU count (rag.lr_change): the linear and square-root
    rules' arithmetic on the user's numbers (the ``lr_scaling`` call), and whether the rate or factor they propose is
    one of them; for a GPU count, conditional on the batch setting being per GPU, which the message does not say."""
    lr = r.plan.lr_change
    if lr is not None and lr.basis == "kept":
        return f"**{t('lr_kept', r.lang, old=lr.old_scale, new=lr.new_scale)}**"
    call = r.call("lr_scaling")
    if lr is None or call is None or not call.result:
        return ""
    g = call.result
    old, new, k, sq = lr.old_scale, lr.new_scale, g["linear_factor"], g["sqrt_factor"]
    ratio = Fraction(new, old)  # "1/4", not "2/8"
    frac = f"{ratio.numerator}/{ratio.denominator}"
    base = g.get("base_learning_rate")
    if base is not None:
        linear = f"{_lr_number(base)} × {frac} = {_lr_number(g['linear_rule_lr'])}"
        sqrt = f"{_lr_number(base)} × √({frac}) = {_lr_number(g['sqrt_rule_lr'])}"
    else:
        linear = t("lr_times", r.lang, factor=frac)
        sqrt = t("lr_times", r.lang, factor=f"{sq:.3g}")
    prefix = ""
    if lr.proposed_factor is not None:
        shown = _lr_number(lr.proposed_learning_rate) if lr.proposed_learning_rate else f"×{lr.proposed_factor:.3g}"
        if math.isclose(lr.proposed_factor, k, rel_tol=0.02):
            prefix = t("lr_yes_linear" if lr.basis == "batch" else "lr_yes", r.lang)
        elif math.isclose(lr.proposed_factor, sq, rel_tol=0.02):
            prefix = t("lr_is_sqrt", r.lang, proposed=shown)
        else:
            prefix = t("lr_neither", r.lang, proposed=shown)
    key = "lr_batch_rule" if lr.basis == "batch" else "lr_gpus_rule"
    head = prefix + t(key, r.lang, old=old, new=new, k=f"{k:.3g}", linear=linear, sqrt=sqrt)
    head = head[0].upper() + head[1:]
    rest = [t("lr_gpus_total", r.lang)] if lr.basis == "gpus" else []
    rest.append(t("lr_heuristic", r.lang))
    return f"**{head}** " + ("" if r.lang == "zh" else " ").join(rest)


def _before_cards(r: Results) -> str:
    """The openings that come before any card's: a cause the readers found, a wrong belief's verdict, the figure or
    the arithmetic on the user's numbers; "" when none applies."""
    host = _host_ram_verdict(r)
    if host:
        return host
    if r.act == "diagnose":
        v = _oom_estimate_verdict(r) or _diagnosis_verdict(r) or _throughput_verdict(r) or _ga_growth_verdict(r)
        if v:
            return v
    speed = _throughput_verdict(r)
    if speed:
        return speed
    lr_rule = _lr_scaling_verdict(r)
    if lr_rule:
        return lr_rule
    if _steps_checked(r):
        bv = _batch_verdict(r)
        if bv:
            return bv
    back = _steps_back_solved(r)
    if back:
        return back
    if _belief_opens(r):
        return _belief_verdict(r)
    if r.plan.method_unknown and r.act == "yes_no":  # "8 X A100 (80GB) for 13B finetune is sufficient?"
        return _fit_depends_verdict(r)
    if r.act in ("fit", "configure"):
        mv = _memory_verdict(r)
        if mv:
            return mv
    if r.act == "batch_arithmetic" or (r.act in ("yes_no", "explain") and _own_product_asked(r)):
        bv = _batch_verdict(r)
        if bv:
            return bv
    if fit_without_figure(r):
        return _fit_depends_verdict(r)
    return ""


#: "…, which is equivalent to using batchsize of 64, is that right?", "这样相当于 batch 64 对吗": the user's own
#: product put up for checking.
_PRODUCT_CHECK = re.compile(
    r"\b(?:is (?:that|this|it) (?:right|correct|true)|am I right|right\s*[?？]|correct\s*[?？])|对吗|对不对|是否正确|没错吧|是吗",
    re.I,
)


def _own_product_asked(r: Results) -> bool:
    """A yes/no or meaning question that states the micro batch, the accumulation steps and the total, and asks
    whether its arithmetic is right (yolov3 #1010): the arithmetic answers it first."""
    call = r.call("effective_batch")
    return bool(
        call is not None
        and all(
            k in call.arguments
            for k in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
        )
        and _PRODUCT_CHECK.search(r.prose)
    )


def card_lead_opens(r: Results) -> bool:
    """Whether the answer opens with a retrieved card's lead (no cause found, no belief, no figure comes first)."""
    return bool(r.cards) and r.act != "diagnose" and not _before_cards(r)


def lead_fits(r: Results, card: Card) -> bool:
    """Whether ``card``'s lead answers this question (always, when the message's question was not read)."""
    return r.asked is None or lead_answers(card, r.asked, r.act, r.all_cards or tuple(r.cards)).passes


def opening_order(r: Results) -> list[Card]:
    """The cards with the first one whose lead answers the question moved to the front, when a card's lead opens
    (or the run's own step count does, and the explanation then starts with the card about it) and the top card's
    does not answer it; otherwise the cards as they are."""
    if r.cards and opens_with_fit_depends(r):  # the breakdown the opening quotes is the explanation's first card
        shown = breakdown_card(r)
        return r.cards if shown is None else [shown, *[c for c in r.cards if c is not shown]]
    if r.act == "diagnose" and r.reported_oom and r.cards and not card_in_family(r.cards[0], "memory"):
        # An out-of-memory run is not explained first by a card that never speaks of memory (litgpt #781: an OOM in a
        # LoRA example opened with "ZeRO-3 saves empty weights", ranked first on the words of a pasted command)
        about = next((c for c in r.cards[1:] if card_in_family(c, "memory")), None)
        return r.cards if about is None else [about, *[c for c in r.cards if c is not about]]
    if not r.cards or not (card_lead_opens(r) or _steps_back_solved(r)) or lead_fits(r, r.cards[0]):
        return r.cards
    fit = next((c for c in r.cards[1:] if lead_fits(r, c)), None)
    return r.cards if fit is None else [fit, *[c for c in r.cards if c is not fit]]


def _no_lead_verdict(r: Results) -> str:
    """No retrieved card answers this question: what the act can say from the user's own values — the figure or
    the arithmetic when a calculator ran on them, what a memory figure depends on — else the closest cards by name,
    never one's lead as if it were the answer."""
    own = _batch_verdict(r) or _memory_verdict(r)
    if own:
        return own
    titles = t("clause_sep", r.lang).join(_title(c, r.lang).rstrip("。.?？") for c in r.cards[:2])
    key = "no_lead_yes_no" if r.act in ("yes_no", "is_normal") else "no_lead"
    return f"**{t(key, r.lang)}** " + t("closest_cards", r.lang, titles=titles)


def opens_with_fit_depends(r: Results) -> bool:
    """The opening says what a memory figure depends on (it then lists what is missing itself): a fit question with
    no figure, whose top card's lead does not answer it (or with no card at all)."""
    if fit_without_figure(r):
        return True
    if r.act != "fit" or r.asked is None or _before_cards(r):
        return False
    return not r.cards or not lead_fits(r, r.cards[0])


def verdict(r: Results) -> str:
    """The opening that does what the act asks."""
    lang = r.lang
    before = _before_cards(r)
    if before:
        return before
    if opens_with_fit_depends(r):
        return _fit_depends_verdict(r)
    if r.cards:
        card = r.cards[0]
        if r.act == "diagnose":
            if (tried := _tried_remedy_verdict(r, card)) is not None:
                return tried
            if opens_with_usual_causes(r):
                return _oom_method_verdict(r) or _usual_causes_verdict(r)
            # (not a belief's card that the message only touches — "I already use … +amp" in a question about
            # partitioned activations, DeepSpeed #3652 — when another card was retrieved)
            unheld = _unheld_belief_cards(r)
            card = next((c for c in r.cards if c.id not in unheld), card)
            return _card_cause_verdict(card, lang)
        if not lead_fits(r, card):
            return _no_lead_verdict(r)
        if r.asked is not None and presupposes_nothing(r.asked, r.act):
            return strip_preamble(_direct(card, lang))
        return _direct(card, lang)
    mv = _memory_verdict(r) or _batch_verdict(r) or (_oom_method_verdict(r) if r.act == "diagnose" else "")
    if mv:
        return mv
    family = r.evidence.family if r.evidence is not None else "generic"
    if r.act == "diagnose" and family != "generic":
        # A reported symptom ("损失一直不降", "hangs") with no card for it: ask for what tells its causes apart
        # (the loss log and learning rate for a loss symptom), not for an error the user never mentioned.
        return f"**{t('no_known_cause', lang)}** {paste_request(r, family)}".rstrip()
    return t("no_card_diag" if r.act == "diagnose" else "no_card", lang)


# ---- the numbers ----------------------------------------------------------------------------
def numbers_section(r: Results) -> str:
    lang = r.lang
    out: list[str] = []
    batch = r.call("effective_batch")
    if batch is not None and batch.summary_md and not (r.act == "batch_arithmetic" and batch.error):
        out.append(batch.summary_md)
    low, high = r.call("ga_low"), r.call("ga_high")
    if low is not None and high is not None and not r.plan.example:
        out.extend(_ga_compare(r, low, high))
    main = r.call("main")
    if main is not None and _refused_estimate(r) is None:  # a refusal already opened the answer
        out.append(main.summary_md)
        observed = r.setup.get("observed_memory_gb")
        if observed and main.result and main.result.get("total_per_gpu"):
            est = main.result["total_per_gpu"] / 2**30
            why = t("observed_higher" if observed * 1.0 > est else "observed_lower", lang)
            out.append(t("observed", lang, seen=f"{observed:g} GB", est=f"{est:.1f} GiB", why=why))
    if r.nearest_fits:
        out.append(_nearest_table(r))
    if r.plan.method_unknown:
        out.append(_method_table(r))
    for label, heading, name in (
        ("precision_sweep", "precision", "{}"),
        ("zero_sweep", "zero", "ZeRO-{}"),
        ("checkpointing_sweep", "checkpointing", "{}"),
        ("finetune_sweep", "finetune", "{}"),
    ):
        call = r.call(label)
        if call is not None and call.result:
            columns = [(name.format(p["value"]), MemoryEstimate(**p["estimate"])) for p in call.result["points"]]
            out.append(t(heading, lang) + "\n\n" + memory_table(columns, lang))
        elif call is not None and call.error:
            out.append(call.summary_md)
    return "\n\n".join(s for s in out if s)


def _nearest_table(r: Results) -> str:
    """The nearest settings that fit, each with its own per-GPU total and what it leaves spare."""
    rows = [
        t("nearest_table_head", r.lang),
        "|---|---:|---:|",
    ]
    for what, call in r.nearest_fits:
        res = call.result or {}
        rows.append(f"| {what} | {gib(res.get('total_per_gpu'), r.lang)} | {gib(res.get('headroom'), r.lang)} |")
    return t("nearest_heading", r.lang) + "\n\n" + "\n".join(rows)


def _ga_compare(r: Results, low: ToolCall, high: ToolCall) -> list[str]:
    lang = r.lang
    if not (low.result and high.result):
        return [low.summary_md or high.summary_md]
    a, b = low.arguments["gradient_accumulation_steps"], high.arguments["gradient_accumulation_steps"]
    e1, e2 = MemoryEstimate(**low.result), MemoryEstimate(**high.result)
    eff = t("effective_batch", lang)
    mb = low.arguments["train_micro_batch_size_per_gpu"] * low.arguments.get("world_size", 1)
    out = [
        t("ga_compare", lang, a=a, b=b)
        + "\n\n"
        + memory_table([(f"GA={a} ({eff} {mb * a})", e1), (f"GA={b} ({eff} {mb * b})", e2)], lang)
    ]
    sweep = r.call("micro_sweep")
    line = sweep.summary_md if sweep is not None and sweep.result else ""
    diff = (e2.total_per_gpu or 0) - (e1.total_per_gpu or 0)
    if diff == 0:
        out.append(t("ga_same", lang) + " " + line)
    elif (e2.activations or 0) > (e1.activations or 0):  # unknown activations (no architecture) count as 0
        out.append(t("ga_differs", lang) + " " + line)
    else:
        out.append(t("ga_grad_buffer", lang, diff=gib(diff, lang)) + " " + line)
    out.append(e2.gradient_accumulation_note_zh if lang == "zh" else e2.gradient_accumulation_note_en)
    return out


def example_section(r: Results) -> str:
    """The labelled example for a wrong belief when the user gave no setup to compute."""
    if not r.plan.example:
        return ""
    low, high = r.call("ga_low"), r.call("ga_high")
    if low is None or high is None:
        return ""
    what = t("clause_sep", r.lang).join(a.zh if r.lang == "zh" else a.en for a in r.plan.assumptions)
    body = "\n\n".join(_ga_compare(r, low, high))
    return f"#### {t('example', r.lang, what=what)}\n{body}"


# ---- explanation and sources ----------------------------------------------------------------
def explanation(r: Results) -> str:
    if not r.cards:
        return ""
    lang = r.lang
    first = (r.cards[0].body_zh if lang == "zh" else r.cards[0].body_en).strip()
    parts = first.split("\n\n", 1)
    misconception_cards = {m.card_id for m in r.misconceptions}
    opened_with_card = (r.cards[0].id in misconception_cards and _belief_opens(r)) or (
        not (r.diagnosis is not None and getattr(r.diagnosis, "causes", None))
        and not _belief_opens(r)
        and r.act not in ("fit", "batch_arithmetic", "configure")
        and not opens_with_usual_causes(r)
        and not _oom_estimate_verdict(r)
        and lead_fits(r, r.cards[0])
    )
    text = parts[1] if len(parts) > 1 and opened_with_card else first
    for card in r.cards[1:]:
        text += f"\n\n**{_title(card, lang)}** — {_direct(card, lang).strip('*')}"
    return text


def corrections_section(r: Results) -> str:
    if not r.corrections:
        return ""
    lang = r.lang
    colon = t("colon", lang)
    return f"#### {t('corrected', lang)}\n" + "\n".join(
        f"- ❌ {t('wrong', lang)}{colon}{c.wrong}\n  ✅ {t('right', lang)}{colon}{c.correction}" for c in r.corrections
    )


def sources_section(sources: list[Any], lang: Lang) -> str:
    if not sources:
        return ""
    return f"#### {t('sources', lang)}\n" + "\n".join(
        f"- {s.title}: " + ", ".join(f"[{u.title}]({u.url})" for u in s.urls) for s in sources
    )


def nested_report(markdown: str) -> str:
    """A tool report placed under one of the answer's ``####`` headings: its own first ``###`` heading repeats ours
    ("What I read" under "What I read in what you pasted") and is dropped; its other headings become bold lines
    so that they do not outrank the section they sit in."""
    lines = markdown.strip().splitlines()
    if lines and lines[0].startswith("### "):
        lines = lines[1:]
    return "\n".join(f"**{ln[4:].strip()}**" if ln.startswith("### ") else ln for ln in lines).strip()


def compose(r: Results, sources: list[Any]) -> tuple[str, str]:
    """(full Markdown, first screen) of the answer."""
    lang = r.lang
    opening = verdict(r)
    assumed = assumptions_line(r.plan, lang)
    # A diagnosis that computed each method's model states but opens with a cause instead: what those figures assume
    # goes with them, under the numbers, not on the first screen beside a cause that quotes none of them
    assumed_with_numbers = r.act == "diagnose" and r.plan.method_unknown and opening != _oom_method_verdict(r)
    first = [opening]
    for line in (
        setup_line(r.setup, lang),
        conflicts_line(r.setup, lang),
        "" if assumed_with_numbers else assumed,
        "" if opens_with_fit_depends(r) else missing_line(r.missing, lang, unsupported_method(r.setup)),
    ):
        if line:
            first.append(line)
    first_screen = "\n\n".join(s for s in first if s)
    rest: list[str] = []
    if r.diagnosis_call is not None and r.diagnosis_call.summary_md:
        rest.append(f"#### {t('diagnosis', lang)}\n{nested_report(r.diagnosis_call.summary_md)}")
    for call in r.config_calls:
        if call.summary_md:
            rest.append(
                call.summary_md
                if call.summary_md.lstrip().startswith("#")
                else f"#### {t('config_check', lang)}\n{call.summary_md}"
            )
    corrections = corrections_section(r)
    if corrections:
        rest.append(corrections)
    numbers = numbers_section(r)
    if numbers:
        rest.append(
            f"#### {t('numbers', lang)}\n{numbers}" + (f"\n\n{assumed}" if assumed_with_numbers and assumed else "")
        )
    expl = explanation(r)
    if expl:
        rest.append(f"#### {t('explain', lang)}\n{expl}")
    example = example_section(r)
    if example:
        rest.append(example)
    src = sources_section(sources, lang)
    if src:
        rest.append(src)
    return "\n\n".join([first_screen, *rest]), first_screen
