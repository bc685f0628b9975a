"""Step 4 of an answer: which calculator calls to run, on the user's own setup.

Numbers are computed only for the setup the conversation states: a memory figure needs the
model (or its size) and the method or precision (:func:`rag.setup.enough_for_memory`). The one
exception is a clearly labelled *example* after the explanation, for a user who holds a wrong
belief about accumulation and memory but gave no setup: the example shows the belief is wrong on
numbers, and says it is not their setup. Every filled-in default is recorded as ``assumed``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from calculators.errors import CalculatorError
from calculators.memory import MemoryEstimate
from calculators.presets import (
    GPU_PRESETS,
    MODEL_PRESETS,
    PUBLISHED_PARAMS,
    active_params,
    count_params,
    get_model_shape,
)
from calculators.text_safety import escape_md
from calculators.vision import VisionTower, image_tokens, vision_encoder_params

from .acts import Act
from .formatting import billions
from .intents import Intents, MisconceptionRule, stages_named
from .lr_change import LrChange, read_lr_change
from .setup import CALCULATOR_METHODS, Setup, enough_for_memory, unsupported_method
from .slots import published_total
from .step_counts import StepCounts, dataset_size_in
from .step_time import StepTime, TokenRate

__all__ = ["Plan", "PlannedCall", "dataset_size_in", "plan_calls"]

GA_COMPARE = 16
MICRO_SWEEP = [1, 2, 4, 8]
DEFAULT_SEQ = 1024
EXAMPLE_MODEL = "llama-2-7b"

Label = Literal[
    "main",
    "nearest_fit",
    "config_check",
    "diagnose",
    "ga_low",
    "ga_high",
    "micro_sweep",
    "effective_batch",
    "effective_batch_compare",
    "steps_back_solve",
    "precision_sweep",
    "zero_sweep",
    "checkpointing_sweep",
    "finetune_sweep",
    "method_sweep",
    "full_sharded",
    "lora_sharded",
    "fact_check",
    "host_ram_load",
    "throughput",
    "lr_scaling",
]

#: The comparison of methods' ZeRO-3 points: their model states are shown, never their totals, so they are never the
#: user's estimate (the estimate-card choice and the eval's headline count skip them).
SHARDED_LABELS = ("full_sharded", "lora_sharded")

GA_MEMORY_KEYS = {"ga_raises_memory", "ga_stores_copies", "effective_batch_oom", "lower_ga_saves_memory"}
#: The model-parallel degrees: GPUs in one such group share a batch (data-parallel GPUs = GPUs ÷ their product).
_MODEL_PARALLEL = ("tensor_parallel_size", "pipeline_parallel_size", "sequence_parallel_size")


@dataclass
class PlannedCall:
    name: str
    arguments: dict[str, Any]
    label: Label = "main"


@dataclass
class Assumption:
    key: str
    zh: str
    en: str


@dataclass
class Plan:
    calls: list[PlannedCall] = field(default_factory=list)
    assumptions: list[Assumption] = field(default_factory=list)
    memory_config: dict[str, Any] | None = None
    #: True when the memory numbers are an example (not the user's setup) — shown after the explanation.
    example: bool = False
    #: The run uses DeepSpeed on several GPUs and its ZeRO stage is not shown: the verdict depends on it, and the
    #: ``zero_sweep`` call holds every stage.
    zero_stage_unknown: bool = False
    #: The RL / preference stage the run is (ppo, dpo, grpo): the estimate counts the trained model only.
    rl_stage: str | None = None
    #: A fit question that names the model (or its size) but not the method or precision: no total is computed (it
    #: would be a number for a setup the user did not state); the ``method_sweep`` call holds each method's model
    #: states instead, and ``full_sharded`` / ``lora_sharded`` a full / LoRA fine-tune's under ZeRO-3 when several GPUs
    #: are stated unsharded.
    method_unknown: bool = False
    #: A learning-rate question about a change of scale (rag.lr_change): the ``lr_scaling`` call holds the rules'
    #: arithmetic, this what the user proposed, for the opening's yes or no.
    lr_change: LrChange | None = None

    def assume(self, key: str, zh: str, en: str) -> None:
        if all(a.zh != zh for a in self.assumptions):
            self.assumptions.append(Assumption(key, zh, en))

    def by_label(self, label: str) -> PlannedCall | None:
        return next((c for c in self.calls if c.label == label), None)


def _precision_alone(intents: Intents) -> bool:
    """The question asks about precision, not memory or the batch (a sharding name beside it, "fsdp2.log", asks for
    no estimate either)."""
    return intents.precision and not (intents.memory or intents.batch or intents.effective)


# "a 13B model" means the canonical open model of that size: checked in order, first within 10% wins.
_CANONICAL = (
    "llama-2-7b",
    "llama-3-8b",
    "llama-2-13b",
    "llama-2-70b",
    "chatglm3-6b",
    "qwen2.5-7b",
    "mistral-7b",
    "gpt2-medium",
    "gpt2",
)


#: Vision-language model names. A VL preset (qwen2-vl-*, qwen2.5-vl-*, qwen3-vl-*, llava-1.5-*, internvl2-8b,
#: glm-4.1v-9b, glm-4v-9b, minicpm-v-2.6, minicpm-llama3-v-2.5) counts
#: its vision encoder; any other VL name is estimated as its language model, and the answer says the vision encoder's weights and
#: each image's visual tokens (Qwen2-VL: about one per 28×28 pixels; card vlm-image-tokens-memory) are not in it.
_VLM_NAME = re.compile(
    r"-?VL\b|\bVL-|[\d.]VL|llava|internvl|mini-?internvl|minicpm-?v|glm-?4v|cogvlm|deepseek-?vl|idefics|paligemma|"
    r"\bpixtral|molmo|phi-?3(?:\.5)?-vision",
    re.I,
)


#: Visual tokens per image by vision-tower family (calculators/vision.py), zh / en.
_IMAGE_TOKEN_RULE = {
    "qwen2-vl": ("约每 28×28 像素一个", "about one per 28×28 pixels"),
    "qwen2.5-vl": ("约每 28×28 像素一个", "about one per 28×28 pixels"),
    "qwen3-vl": ("约每 32×32 像素一个", "about one per 32×32 pixels"),
    "llava": ("每张图 576 个", "576 per image"),
    "internvl": (
        "每个 448×448 切片 256 个，最多 12 片加缩略图",
        "256 per 448×448 tile, up to 12 tiles and a thumbnail",
    ),
    "glm-4.1v": ("约每 28×28 像素一个", "about one per 28×28 pixels"),
    "glm-4v": ("每张图缩放到 1120×1120，1,602 个", "1,602 per image, resized to 1120×1120"),
    "minicpm-v": (
        # the resampler's queries: 64 (MiniCPM-V 2.6), 96 (MiniCPM-Llama3-V 2.5)
        "整图和每个约 448×448 的切片各 {queries} 个，最多 9 片",
        "{queries} for the whole image and for each slice of about 448×448, up to 9 slices",
    ),
}


def _vision_config(s: dict[str, Any], tower: VisionTower, cfg: dict[str, Any], plan: Plan) -> None:
    """A VL preset: the images the message states (their visual tokens join the sequence), the freeze flag it sets,
    and a note on what was counted. A size with no count is one image per sample (said); a Qwen2-VL / InternVL count
    with no size adds nothing (the tokens depend on the size)."""
    size = "image_width" in s and "image_height" in s
    count = s.get("images_per_sample")
    if "freeze_vision_tower" in s:
        cfg["freeze_vision_tower"] = s["freeze_vision_tower"]
    if "image_max_pixels" in s and tower.family in ("qwen2-vl", "qwen2.5-vl", "qwen3-vl", "glm-4.1v"):
        cfg["image_max_pixels"] = s["image_max_pixels"]
    if size or tower.family in ("llava", "glm-4v"):
        if size:
            cfg["image_width"], cfg["image_height"] = s["image_width"], s["image_height"]
        if count is None and size:
            count = 1
            plan.assume("images_per_sample", "每个样本按 1 张图", "one image per sample")
    tokens = None
    if count and (size or tower.family in ("llava", "glm-4v")):
        cfg["images_per_sample"] = count
        one = image_tokens(tower, cfg.get("image_height"), cfg.get("image_width"), cfg.get("image_max_pixels"))
        tokens = count * one.llm_tokens
        # A stated length is the framework's cutoff (LLaMA-Factory cutoff_len, ms-swift max_length): it bounds the
        # whole sequence, the image tokens included; only a length we assumed is text alone.
        cfg["visual_tokens_in_seq_len"] = "seq_len" in s
    trained = cfg.get("freeze_vision_tower") is False and cfg.get("finetune") == "full"
    m = vision_encoder_params(tower) / 1e6
    state_zh = (
        "参与训练（计入梯度、优化器状态和激活）"
        if trained
        else "按冻结估算（LLaMA-Factory freeze_vision_tower、ms-swift freeze_vit 默认都冻结）"
    )
    state_en = (
        "trained (gradients, optimizer states and activations counted)"
        if trained
        else "frozen (LLaMA-Factory freeze_vision_tower and ms-swift freeze_vit default to frozen)"
    )
    zh_rule, en_rule = (rule.format(queries=tower.queries) for rule in _IMAGE_TOKEN_RULE[tower.family])
    if tokens is not None and cfg.get("visual_tokens_in_seq_len"):
        over_zh = "，超过了整个序列长度" if tokens > cfg["seq_len"] else ""
        over_en = ", more than the whole sequence length" if tokens > cfg["seq_len"] else ""
        tail_zh = f"图像的视觉 token（{zh_rule}）共 {tokens:,} 个，算在你给的序列长度 {cfg['seq_len']:,} 之内{over_zh}"
        tail_en = (
            f"the images' visual tokens ({en_rule}), {tokens:,} in all, count within your sequence length "
            f"{cfg['seq_len']:,}{over_en}"
        )
    elif tokens is not None:
        tail_zh = f"图像的视觉 token（{zh_rule}）共 {tokens:,} 个，已加在序列长度上"
        tail_en = f"the images' visual tokens ({en_rule}), {tokens:,} in all, are added to the sequence length"
    else:
        tail_zh = f"图像数量和尺寸未说明，视觉 token（{zh_rule}）不在序列长度内"
        tail_en = (
            f"images per sample and their size not given, so their visual tokens ({en_rule}) are not in the "
            "sequence length"
        )
    plan.assume(
        "vision",
        f"视觉编码器（{m:,.0f}M 参数）计入权重，{state_zh}；{tail_zh}",
        f"the vision encoder ({m:,.0f}M parameters) is counted, {state_en}; {tail_en}",
    )


def _nearest_preset(num_params: float) -> str | None:
    return next((n for n in _CANONICAL if abs(PUBLISHED_PARAMS[n] - num_params) / num_params < 0.05), None)


def memory_config(setup: Setup, plan: Plan) -> dict[str, Any]:
    """MemoryConfig arguments from the setup; every default that fills a gap is recorded as assumed."""
    s = setup.known()
    cfg: dict[str, Any] = {}
    if "model" in s:
        cfg["model"] = s["model"]
        text = escape_md(s["model_text"], 60) if s.get("model_text") else None
        if text and re.sub(r"[^a-z0-9.]", "", text.lower()) != re.sub(r"[^a-z0-9.]", "", s["model"]):
            plan.assume(
                "model", f"{text} 按 {s['model']} 的结构估算", f"{text} is estimated with the {s['model']} architecture"
            )
    elif "num_params" in s:
        preset = _nearest_preset(s["num_params"])
        name = escape_md(s["model_text"], 60) if s.get("model_text") else billions(s["num_params"])
        if preset:
            cfg["model"] = preset
            plan.assume(
                "model",
                f"{name} 按 {preset} 的结构估算（参数量相近）",
                f"{name} is estimated with the {preset} architecture (similar size)",
            )
        else:
            cfg["num_params"] = s["num_params"]
            plan.assume(
                "model",
                f"{name} 没有预设结构：只按参数量 {billions(s['num_params'])} 估算模型状态",
                f"no preset for {name}: model states from its size ({billions(s['num_params'])}) only",
            )
    else:
        cfg["model"] = EXAMPLE_MODEL
        plan.assume("model", f"模型未说明，示例用 {EXAMPLE_MODEL}", f"no model given: {EXAMPLE_MODEL} as the example")
    vl_shape = MODEL_PRESETS[cfg["model"]] if cfg.get("model") in MODEL_PRESETS else None
    vl_name = s.get("model_text") and _VLM_NAME.search(str(s["model_text"]))
    if vl_name and "model" not in cfg and published_total(str(s["model_text"])) == s.get("num_params"):
        # Qwen-VL's 9.6B, CogVLM's 17B: the published total counts the vision encoder
        plan.assume(
            "vision",
            "按公布的总参数量（含视觉编码器）估算；每张图的视觉 token 不在序列长度内",
            "the published total (vision encoder included); each image's visual tokens are not in the sequence length",
        )
    elif (vl_shape is None or vl_shape.vision is None) and vl_name:
        plan.assume(
            "vision",
            "只算了语言模型：视觉编码器的权重和每张图的视觉 token（Qwen2-VL 约每 28×28 像素一个）不在估算内，序列长度要把它们算进去",
            "the language model only: the vision encoder's weights and each image's visual tokens (Qwen2-VL: about "
            "one per 28×28 pixels) are not in the estimate; count them in the sequence length",
        )
    if "gpu" in s:
        cfg["gpu"] = s["gpu"]
    elif "gpu_memory_gb" in s:
        cfg["gpu_memory_gb"] = s["gpu_memory_gb"]
    for key in (
        "finetune",
        "lora_rank",
        "zero_stage",
        "world_size",
        "num_nodes",
        "offload_optimizer",
        "offload_param",
        "gradient_checkpointing",
        "flash_attention",
        "adamw_kernel",
        "pipeline_parallel_size",
        "precision",
        "seq_len",
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
    ):
        if key in s and not (key == "finetune" and s[key] not in CALCULATOR_METHODS):
            cfg[key] = s[key]
    if "fsdp" in s and not cfg.get("zero_stage") and not cfg.get("pipeline_parallel_size", 1) > 1:
        # FSDP instead of ZeRO (the calculator takes one or the other); its offload is FSDP's own, not DeepSpeed's
        cfg["fsdp"] = s["fsdp"]
        cfg.pop("offload_optimizer", None)
        cfg.pop("offload_param", None)
    if "finetune" not in cfg:
        cfg["finetune"] = "full"
        plan.assume("finetune", "未说明微调方式，按全量微调", "method not given: full fine-tune")
    if cfg["finetune"] == "lora" and s.get("quantization") == "int8":
        cfg["lora_int8_base"] = True  # LoRA on a base loaded in 8 bits (load_in_8bit, quantization_bit 8)
    if cfg.get("num_nodes", 1) > 1 and "world_size" not in cfg:
        # "two 80G A800 nodes" (OpenRLHF #332) with no count per node: the fewest GPUs those nodes can hold, said so
        # (sharded states per GPU only shrink with more)
        cfg["world_size"] = cfg["num_nodes"]
        plan.assume(
            "world_size",
            f"未说明每台机器几张卡：按每台 1 张、共 {cfg['num_nodes']} 张估算（分片的状态随卡数增加而减少）",
            f"GPUs per node not given: one per node, {cfg['num_nodes']} in all (sharded states shrink with more GPUs)",
        )
    if cfg.get("world_size", 1) % cfg.get("num_nodes", 1):
        cfg.pop("num_nodes")
    if (cfg.get("offload_optimizer") or cfg.get("offload_param")) and not cfg.get("zero_stage"):
        cfg["zero_stage"] = 3 if cfg.get("offload_param") else 2
        plan.assume(
            "zero_stage",
            f"offload 需要 ZeRO，按 ZeRO-{cfg['zero_stage']} 估算",
            f"offload needs ZeRO: ZeRO-{cfg['zero_stage']} assumed",
        )
    if cfg.get("offload_param") and cfg.get("zero_stage") != 3:
        cfg.pop("offload_param")
    if "precision" not in cfg:
        no_bf16 = "gpu" in cfg and not GPU_PRESETS[cfg["gpu"]].bf16
        cfg["precision"] = "fp16-mixed" if no_bf16 else "bf16-mixed"
        plan.assume("precision", f"精度按 {cfg['precision']}", f"precision {cfg['precision']}")
    if "train_micro_batch_size_per_gpu" not in cfg:
        cfg["train_micro_batch_size_per_gpu"] = 1
        plan.assume("train_micro_batch_size_per_gpu", "micro batch 按 1", "micro batch 1")
    if "seq_len" not in cfg:
        cfg["seq_len"] = DEFAULT_SEQ
        plan.assume("seq_len", f"序列长度按 {DEFAULT_SEQ}", f"sequence length {DEFAULT_SEQ}")
    if vl_shape is not None and vl_shape.vision is not None:
        _vision_config(s, vl_shape.vision, cfg, plan)
    if (tp := int(s.get("tensor_parallel_size") or 1)) > 1:
        # The calculator models no tensor parallelism: say so, not a per-GPU figure silently TP times too large
        # ("8块12G显存的GPU，模型并行度为8", CPM-2-Finetune #23). Megatron's TP splits every linear layer's weights (and the
        # vocabulary) across the TP ranks, so the model states divide by about TP; activations only in part.
        plan.assume(
            "tensor_parallel",
            f"张量并行（TP {tp}）不在估算内：数字按每卡一整份模型算；TP={tp} 时权重、梯度和优化器状态约除以 {tp}",
            f"tensor parallelism (TP {tp}) is not in the estimate: the figures hold a whole model per GPU; with TP={tp} "
            f"the weights, gradients and optimizer states divide by about {tp}",
        )
    return cfg


def _batch_args(setup: Setup, plan: Plan, counts: StepCounts | None = None) -> dict[str, Any] | None:
    s = setup.known()
    args: dict[str, Any] = {
        k: s[k]
        for k in (
            "train_batch_size",
            "train_micro_batch_size_per_gpu",
            "gradient_accumulation_steps",
            "base_batch_size",
            "base_learning_rate",
        )
        if k in s
    }
    if "base_learning_rate" in args and "base_batch_size" not in args:
        args.pop("base_learning_rate")
    given = [
        k for k in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps") if k in args
    ]
    if not given and "base_batch_size" not in args:
        return None
    if given == ["gradient_accumulation_steps"] and "base_batch_size" not in args:
        # "Suppose I have accumulate_grad_batches=256 and … 260 steps" (Lightning #4653): GA alone gives no batch to
        # compute, and the calculator's "train_batch_size or train_micro_batch_size_per_gpu needs to be provided" is
        # DeepSpeed's complaint about a config nobody pasted (a pasted DeepSpeed config goes to the config doctor)
        return None
    if any(v.source == "error" for k in (*given, "world_size") for v in setup.conflicts.get(k, [])):
        return None  # DeepSpeed's assertion printed other numbers than the launch: its diagnosis shows both
    if "train_micro_batch_size_per_gpu" in args and not {"gradient_accumulation_steps", "train_batch_size"} & set(args):
        plan.assume(
            "gradient_accumulation_steps",
            "GA 未说明：按 1（HF Trainer 和 DeepSpeed 的默认值）",
            "GA not given: 1 (the HF Trainer and DeepSpeed default)",
        )
    tb, mb, ga = (
        args.get(k) for k in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
    )
    if "world_size" in s:
        args["world_size"] = s["world_size"]
    elif tb and mb and ga and tb % (mb * ga) == 0:
        # "Total train batch size = 16, batch size per device = 1, GA = 8": the banner already says 2 GPUs.
        args["world_size"] = tb // (mb * ga)
        plan.assume(
            "world_size",
            f"GPU 数未说明：由 {tb} ÷ ({mb} × {ga}) 推得 {tb // (mb * ga)}",
            f"GPU count not given: {tb} ÷ ({mb} × {ga}) = {tb // (mb * ga)}",
        )
    else:
        args["world_size"] = 1
        plan.assume(
            "world_size",
            "GPU 数未说明：按每张卡计算（N 张卡时乘以 N）",
            "GPU count not given: per GPU (multiply by N for N GPUs)",
        )
    if "seq_len" in s:
        args["seq_len"] = s["seq_len"]
    parallel = [k for k in _MODEL_PARALLEL if k in s]
    if parallel and args["world_size"] % math.prod(s[k] for k in parallel) == 0:
        args.update({k: s[k] for k in parallel})  # each parallel group is one data-parallel replica
    if counts is not None:
        args.update(_step_args(counts, plan))
    return args


def _step_args(counts: StepCounts, plan: Plan) -> dict[str, Any]:
    """Samples, epochs and the step count the run showed, for a steps question. An approximate count of samples
    ("1800多条") is used only to back-solve a count the run showed, and the answer says it was approximate."""
    args: dict[str, Any] = {}
    samples = counts.samples
    if samples is None and counts.samples_about is not None and counts.observed_steps is not None:
        samples = counts.samples_about
        plan.assume(
            "dataset_size",
            f"样本数按约 {samples:,} 条（原文是约数）",
            f"about {samples:,} samples (the message gives an approximate count)",
        )
    if samples is None:
        return args
    args["dataset_size"] = samples
    if counts.epochs is not None and not counts.observed_per_epoch:
        args["num_train_epochs"] = counts.epochs
    if counts.observed_steps is not None and (counts.epochs is not None or counts.observed_per_epoch):
        args["observed_steps"] = counts.observed_steps
    return args


def _back_solve_args(counts: StepCounts, plan: Plan) -> dict[str, Any] | None:
    """Samples and the step count the run showed, for "why only 5 steps per epoch on 20 images?" when the message
    states no batch setting; None unless the count is known to be per epoch or the epochs are stated."""
    if counts.observed_steps is None or not (counts.epochs is not None or counts.observed_per_epoch):
        return None
    args = _step_args(counts, plan)
    if "dataset_size" not in args:
        return None
    return {
        "dataset_size": args["dataset_size"],
        "observed_steps": counts.observed_steps,
        "num_train_epochs": None if counts.observed_per_epoch else counts.epochs,
        "per_epoch": counts.observed_per_epoch,
    }


def _method_alone_missing(setup: Setup) -> bool:
    """The model (or its size) is known and what a figure still lacks is the method: neither the method, the
    precision nor a ZeRO stage is stated."""
    return (setup.has("model") or setup.has("num_params")) and not (
        setup.has("finetune") or setup.has("precision") or setup.has("zero_stage")
    )


#: Beliefs whose correction is itself the cause of what the user saw (memory not pooled, not halved, not lower;
#: OOM from one micro-batch's activations): a diagnosis opens with it (rag.compose), not with a per-method figure.
CAUSE_BELIEFS = frozenset(
    {"more_gpus_pool_memory", "mixed_precision_halves", "lower_ga_saves_memory", "effective_batch_oom"}
)

#: The methods a fit question without one is answered for, as the calculator names them.
METHODS_COMPARED = ["full", "lora", "qlora"]


#: Memory settings that only exist for a LoRA / QLoRA run (calculators.memory rejects them with finetune='full').
_ADAPTER_FLAGS = ("lora_int8_base", "qlora_lm_head_4bit", "fsdp_frozen_in_trainable_units")


def _without_adapter_flags(cfg: dict[str, Any]) -> dict[str, Any]:
    """``cfg`` for a full fine-tune of the same model: the precision sweep shows what 16-bit training saves on a full
    fine-tune, and a LoRA run on an 8-bit base (llama-cookbook #374) must not carry its adapter flags into it."""
    return {k: v for k, v in cfg.items() if k not in _ADAPTER_FLAGS}


def _method_plan(setup: Setup, plan: Plan, rl_stage: str | None = None) -> Plan:
    """A fit question naming the model but no method ("8 X A100 (80GB) for 13B finetune is sufficient?"): each
    method's model states for that model on the stated GPUs (they depend on nothing else), not a total whose micro
    batch, sequence length and method would all be assumed. A full fine-tune on several GPUs with no sharding stated
    is also computed under ZeRO-3: whether it fits depends on it."""
    cfg = memory_config(setup, plan)
    # Only what the model states rest on stays assumed: the micro batch and sequence length defaults are not used.
    plan.assumptions = [a for a in plan.assumptions if a.key in ("model", "vision", "tensor_parallel")]
    plan.assume(
        "finetune",
        "未说明微调方式：分别给出各方式的模型状态（全量 = 混合精度 AdamW，16 字节/参数；LoRA = 16-bit 基座；QLoRA = 4-bit 基座）",
        "method not given: each method's model states (full = mixed-precision AdamW, 16 bytes/param; LoRA = 16-bit "
        "base; QLoRA = 4-bit base)",
    )
    if rl_stage in _OTHER_MODELS:
        # PPO / GRPO / DPO hold more models than the one trained: the states are the trained model's, no verdict
        plan.rl_stage = rl_stage
        plan.assume("rl_stage", *_OTHER_MODELS[rl_stage])
    base = {k: v for k, v in cfg.items() if k != "finetune"}
    plan.method_unknown = True
    plan.calls.append(
        PlannedCall("sweep", {"config": base, "field": "finetune", "values": METHODS_COMPARED}, "method_sweep")
    )
    unsharded = not base.get("zero_stage") and "fsdp" not in base and base.get("pipeline_parallel_size", 1) == 1
    if base.get("world_size", 1) > 1 and unsharded:
        # (ZeRO-3 shards a LoRA run's frozen 16-bit base too: "能跑 14b 的微调吗" on two 24 GB 4090s, Qwen #846, fits
        # LoRA only that way)
        plan.calls.append(PlannedCall("memory", {**base, "finetune": "full", "zero_stage": 3}, "full_sharded"))
        plan.calls.append(PlannedCall("memory", {**base, "finetune": "lora", "zero_stage": 3}, "lora_sharded"))
    return plan


#: The share of one card a full fine-tune's model states may take and still leave the activations of a micro-batch
#: room: above it (whisper large's 23.1 GiB on a 24 GB card, transformers #20348) the states are what runs out.
STATES_CROWD_CARD = 0.9


def full_states_exceed_card(sweep_result: dict[str, Any] | None) -> bool:
    """Whether, in the comparison of methods (a ``method_sweep`` result), a full fine-tune's model states alone exceed
    one card unsharded, or leave it less than a tenth (:data:`STATES_CROWD_CARD`): then the method decides whether a
    reported OOM could be avoided at all, and the comparison is what a diagnosis opens with (rag.compose) and explains
    with its card (rag.assistant). When they leave room, the states are not the cause and the usual causes are."""
    if not sweep_result or not sweep_result.get("gpu_capacity"):
        return False
    full = full_point(sweep_result)
    return full is not None and MemoryEstimate(**full).model_states > STATES_CROWD_CARD * sweep_result["gpu_capacity"]


def full_point(sweep_result: dict[str, Any] | None) -> dict[str, Any] | None:
    """The full fine-tune's estimate in the comparison of methods (a ``method_sweep`` result), if there is one."""
    points = (sweep_result or {}).get("points", [])
    return next((p["estimate"] for p in points if p.get("value") == "full"), None)


def names_deepspeed(text: str) -> bool:
    """Whether the message names DeepSpeed (or a stack that runs on it, rag.opening.SHARDING), so that a memory
    estimate without its ZeRO stage says the stage is unknown instead of silently computing an unsharded (ZeRO-0)
    run."""
    from .opening import SHARDING

    return bool(SHARDING["deepspeed"].search(text))


#: RL / preference stages whose run holds models beside the one trained, and what the one-model estimate leaves out
#: (cards ppo-four-models-memory, dpo-reference-model-memory-bytes, grpo-vllm-colocate-memory and their sources).
_OTHER_MODELS: dict[str, tuple[str, str]] = {
    "ppo": (
        "PPO 还有参考、奖励和价值（critic）模型，这里只算了策略模型",
        "PPO also holds reference, reward and value (critic) models: only the policy is counted here",
    ),
    "dpo": (
        "DPO/KTO 的参考模型没有计入（全量微调时多一份 16 位权重，TRL 仅在 ZeRO-3 下切分它；LoRA 时不另占）",
        "DPO/KTO's reference model is not counted (a full fine-tune adds a 16-bit copy of the weights, sharded by TRL "
        "only under ZeRO-3; none with LoRA)",
    ),
    "grpo": (
        "GRPO 的参考模型（beta>0 时）和生成显存（vLLM 共置时先占 gpu_memory_utilization 的比例）没有计入",
        "GRPO's reference model (beta > 0) and generation memory (colocated vLLM takes its gpu_memory_utilization "
        "share first) are not counted",
    ),
}


#: How a message names the stage it runs (ASCII boundaries: "用ppo训练"; TRL's trainer classes; LLaMA-Factory's
#: `--stage ppo` and old `train_ppo.py`). Only the names: "chosen/rejected" or "reward" alone do not make a run RL.
_RL_NAMED = (
    ("ppo", re.compile(r"(?<![A-Za-z])(?:ppo|rlhf)(?:_?trainer)?(?![A-Za-z])", re.I)),
    ("grpo", re.compile(r"(?<![A-Za-z])grpo(?:_?trainer)?(?![A-Za-z])", re.I)),
    ("dpo", re.compile(r"(?<![A-Za-z])(?:dpo|kto)(?:_?trainer)?(?![A-Za-z])", re.I)),
)


def rl_stage_named(text: str) -> str | None:
    """The RL / preference stage the message names first in this order (PPO, GRPO, DPO/KTO), or None."""
    return next((stage for stage, pattern in _RL_NAMED if pattern.search(text)), None)


#: CPU offload holds optimizer states (and parameters) in host RAM all through training: a different figure (DeepSpeed's
#: estimators, calculators.diagnose.host_kill), so the load-time one is not planned beside it.
_OFFLOAD_KEYS = ("offload_optimizer", "offload_param")


def _host_ram_args(setup: Setup) -> dict[str, Any] | None:
    """The load-time host-RAM call's arguments from what the message states: the model's size (or a preset it names),
    and the processes per node where the GPU count is stated (the GPU count over the stated nodes; without it the
    figures are per process); None without a size, or when the run offloads to the CPU or loads sharded (ZeRO-3,
    FSDP)."""
    s = setup.known()
    # Sharded loading: under ZeRO-3 transformers loads through zero.Init and never assigns whole tensors per process,
    # and FSDP's rank-0 loading (accelerate fsdp_cpu_ram_efficient_loading) reads the weights once: the per-process
    # figure does not describe them (cards host-ram-load-scales-with-processes, zero3-load-time-memory-peak).
    if any(s.get(k) for k in _OFFLOAD_KEYS) or s.get("zero_stage") == 3 or s.get("fsdp"):
        return None
    params = s.get("num_params")
    if params is None and s.get("model"):
        try:
            params = count_params(get_model_shape(str(s["model"])))
        except CalculatorError:
            return None
    world, nodes = s.get("world_size"), s.get("num_nodes") or 1
    # (one process stated: "7B 单卡 内存不足" is as often the card's memory, and nothing multiplies)
    if not params or (isinstance(world, int) and (world % nodes or world // nodes < 2)):
        return None
    args: dict[str, Any] = {"num_params": float(params)}
    if isinstance(world, int):  # (none stated: each process's copy, calculators.host_ram's per-process line)
        args["processes_per_node"] = world // nodes
    if s.get("host_ram_gb"):
        args["host_ram_gb"] = float(s["host_ram_gb"])
    return args


#: The acts a reported step time answers: "is 2.5 s per iteration good or slow?", "why is training so slow?".
_SPEED_ACTS = ("diagnose", "is_normal", "explain", "yes_no")
_PRECISION_PEAK = {"fp32": "fp32", "amp-fp16": "fp16", "fp16-mixed": "fp16", "amp-bf16": "bf16", "bf16-mixed": "bf16"}


def throughput_args(
    setup: Setup, step_time: StepTime | None = None, token_rate: TokenRate | None = None
) -> dict[str, Any] | None:
    """The throughput call's arguments from what the message states: the model's size (a preset also gives its layers
    and attention width) and either a token rate ("2200token/s/gpu") or a step time with the GPU count and the tokens
    of one optimizer step (the global batch, or micro × GA × data-parallel GPUs, times the sequence length); None when
    any of them is not stated. The GPU and precision pick the data-sheet peak; LoRA / QLoRA train 4·N per token, full
    recomputation adds a forward (HFU)."""
    s = setup.known()
    world, seq = s.get("world_size"), s.get("seq_len")
    args: dict[str, Any]
    if token_rate is not None:
        gpus = world if isinstance(world, int) and (token_rate.per_gpu or world == 1) else None
        if gpus is None and not token_rate.per_gpu:
            return None
        # one GPU's rate: the run's is that times its GPUs, and the utilisation per GPU is the same either way
        count = gpus or 1
        rate = token_rate.tokens_per_second * (count if token_rate.per_gpu else 1)
        args = {"num_gpus": count, "tokens_per_second": rate}
    elif step_time is not None and isinstance(world, int) and isinstance(seq, int):
        batch = s.get("train_batch_size")
        if batch is None:
            micro, ga = s.get("train_micro_batch_size_per_gpu"), s.get("gradient_accumulation_steps")
            split = math.prod(int(s.get(k) or 1) for k in _MODEL_PARALLEL)
            if not micro or not ga or world % split:
                return None
            batch = micro * ga * (world // split)
        args = {"num_gpus": world, "step_time_s": step_time.seconds, "tokens_per_step": batch * seq}
    else:
        return None
    shape = None
    if s.get("model"):
        try:
            shape = get_model_shape(str(s["model"]))
        except CalculatorError:
            shape = None
    if shape is not None:
        # the input embedding is a lookup, not a matmul: only a tied table (the LM head) does FLOPs
        lookup = (
            0 if shape.tie_word_embeddings or shape.architecture != "decoder" else shape.vocab_size * shape.hidden_size
        )
        args["num_params"] = float(active_params(shape) - lookup)
        if shape.architecture == "decoder" and isinstance(seq, int):
            width = shape.dim_per_head * shape.num_attention_heads
            args.update(num_layers=shape.num_layers, seq_len=seq, attention_width=width)
    elif s.get("num_params"):
        args["num_params"] = float(s["num_params"])
    else:
        return None
    if s.get("gpu") in GPU_PRESETS:
        args["gpu"] = s["gpu"]
    if s.get("precision") in _PRECISION_PEAK:
        args["precision"] = _PRECISION_PEAK[s["precision"]]
    if s.get("finetune") in ("lora", "qlora"):
        args["frozen_base"] = True
    if s.get("gradient_checkpointing") == "full":
        args["activation_checkpointing"] = True
    return args


def plan_calls(
    setup: Setup,
    act: Act,
    intents: Intents,
    misconceptions: list[MisconceptionRule],
    text: str = "",
    *,
    reported_oom: bool = False,
    step_counts: StepCounts | None = None,
    deepspeed: bool = False,
    rl_stage: str | None = None,
    host_ram: bool = False,
    step_time: StepTime | None = None,
    token_rate: TokenRate | None = None,
) -> Plan:
    """The calculator calls whose numbers answer this act for this setup (``text``: the user's prose, for the
    dataset size a steps-per-epoch question states; ``reported_oom``: the message reports an out-of-memory it hit,
    in the prose or only in a pasted error, and the estimate for the stated setup is then the first thing to check;
    ``step_counts``: samples, epochs and the step count the run showed, read from the whole message, so a step count
    the user reports is checked against the arithmetic on their numbers; ``deepspeed``: the message runs DeepSpeed,
    so a multi-GPU estimate without its ZeRO stage shows every stage instead of assuming none; ``rl_stage``: the
    RL / preference stage the message runs (ppo, dpo, grpo), whose other models the one-model estimate leaves out;
    ``host_ram``: the message reports or asks about the host's RAM, answered by the load-time figure per node;
    ``step_time`` / ``token_rate``: the seconds per step or the tokens per second a speed question reports, answered
    by the run's model FLOPs utilisation)."""
    plan = Plan()
    # (an RL or preference run loads more than one model per process: the one-model figure would understate it)
    if host_ram and rl_stage is None and (args := _host_ram_args(setup)) is not None:
        plan.calls.append(PlannedCall("host_ram_load", args, "host_ram_load"))
    keys = {m.key for m in misconceptions}
    s = setup.known()
    ga_memory = bool(keys & GA_MEMORY_KEYS) or (intents.memory and "ga_from" in s)
    # ("zero2 和 zero3 在 8 张 A100 上训练 llama2-13b 每张卡显存差多少？": stages compared name ZeRO training as one stated
    # stage does — a full fine-tune unless the method is stated — though no single stage is the run's)
    stages_compared = len(stages_named(text)) >= 2
    enough = enough_for_memory(setup) or (
        stages_compared and _method_alone_missing(setup) and unsupported_method(setup) is None
    )

    # Callers that pass only the prose get what it states of the dataset size.
    counts = step_counts if step_counts is not None else StepCounts(samples=dataset_size_in(text))
    # "训练样本数 14339, epoch=3, 但总 step=672, 差了 8 倍": a step count checked against the arithmetic is a diagnosis
    # the batch call answers, whatever the act.
    steps_reported = counts.observed_steps is not None and (counts.samples or counts.samples_about) is not None
    batch_wanted = (
        act == "batch_arithmetic"
        or (steps_reported and act in ("diagnose", "is_normal", "explain"))
        or intents.effective
        or (
            sum(k in s for k in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"))
            >= 2
            and act in ("diagnose", "configure", "is_normal")
        )
        # "we calculate 16 at a time, accumulate 4 times …, equivalent to batchsize of 64, is that right?" (yolov3
        # #1010): a product in the user's own words, checked whatever the act (not three values gathered from a
        # banner and the prose, unsloth #224)
        or all(
            setup.source(k) == "message"
            for k in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
        )
    )
    if batch_wanted and not (ga_memory and not intents.effective):
        args = _batch_args(setup, plan, counts if act == "batch_arithmetic" or steps_reported else None)
        if args is not None:
            plan.calls.append(PlannedCall("effective_batch", args, "effective_batch"))
        elif steps_reported:
            back = _back_solve_args(counts, plan)
            if back is not None:  # no batch setting stated: the run's own numbers give the batch it used
                plan.calls.append(PlannedCall("steps_back_solve", back, "steps_back_solve"))

    # "4卡学习率为0.0001，那么单卡应该除以4吗": the rules' arithmetic on the user's numbers, whatever the act
    plan.lr_change = lr = read_lr_change(text)
    if lr is not None and lr.basis != "kept":
        # (a kept global batch has nothing to scale: a call would show "multiply the learning rate by 0.5" beside the
        # opening's "keep the learning rate")
        lr_args: dict[str, Any] = {
            "base_batch_size": lr.old_scale,
            "new_batch_size": lr.new_scale,
            "per_gpu_held": lr.basis != "batch",
        }
        if lr.base_learning_rate is not None:
            lr_args["base_learning_rate"] = lr.base_learning_rate
        plan.calls.append(PlannedCall("lr_scaling", lr_args, "lr_scaling"))

    if (
        (step_time is not None or token_rate is not None)
        and act in _SPEED_ACTS
        and (speed := throughput_args(setup, step_time, token_rate)) is not None
    ):
        plan.calls.append(PlannedCall("throughput", speed, "throughput"))

    memory_wanted = (
        act == "fit"
        # ("How to set model dtype bf16 when train models by GRPO?", verl #4494: a precision setting asked for, not memory)
        or (act == "configure" and enough and not _precision_alone(intents))
        or ga_memory
        or intents.compare_zero
        or intents.compare_checkpointing
        or intents.compare_finetune
        or "mixed_precision_halves" in keys
        or "more_gpus_pool_memory" in keys
        or (intents.memory and act in ("diagnose", "is_normal", "yes_no", "configure"))
        or (reported_oom and act in ("diagnose", "is_normal"))
        # "I want to full fine-tune Qwen2-7B on a single H100. Will this work?": a verdict on a run whose model, method
        # and GPU the user states is answered with its estimate, whatever card (or none) explains it
        or (act == "yes_no" and enough and "finetune" in s and "gpu" in s)
        # "8 X A100 (80GB) for 13B finetune is sufficient?": the same question without the method
        or (act == "yes_no" and keys <= {"more_gpus_pool_memory"} and "gpu" in s and _method_alone_missing(setup))
    )
    if not memory_wanted:
        return plan
    if not enough:
        # (a yes/no question naming the model and the GPU, and no wrong belief, asks whether it fits)
        # ("GPUs pool their memory" held: each method's states per GPU, unsharded and sharded, answer it)
        will_fit = (
            act == "fit"
            or (act == "yes_no" and keys <= {"more_gpus_pool_memory"} and "gpu" in s)
            # "I use 1 node 4 V100（32G） to sft on llama2-7b … got out of memory" (LMOps #160): whether the run could
            # fit at all is each method's model states on that card
            or (
                reported_oom
                and act == "diagnose"
                and bool(s.keys() & {"gpu", "gpu_memory_gb"})
                and not keys & CAUSE_BELIEFS
                and rl_stage is None
            )
        )
        if will_fit and not ga_memory and _method_alone_missing(setup):
            return _method_plan(setup, plan, rl_stage)
        if not ga_memory:
            return plan
        plan.example = True  # the belief is wrong on any setup: show it on a labelled example
    cfg = memory_config(setup, plan)
    if plan.example and "finetune" not in s and "gpu" in cfg and GPU_PRESETS[cfg["gpu"]].memory_gib <= 24:
        cfg["finetune"] = "lora"
        plan.assumptions = [a for a in plan.assumptions if a.key != "finetune"]
        plan.assume(
            "finetune",
            "示例用 LoRA（24 GiB 卡放不下 7B 全量微调）",
            "LoRA in the example (a 7B full fine-tune does not fit 24 GiB)",
        )
    plan.memory_config = cfg
    if ga_memory:
        high = s.get("gradient_accumulation_steps", GA_COMPARE)
        low = s.get("ga_from", 1)
        if high == low:
            low, high = 1, max(high, GA_COMPARE)
        low, high = min(low, high), max(low, high)
        plan.calls.append(PlannedCall("memory", {**cfg, "gradient_accumulation_steps": low}, "ga_low"))
        plan.calls.append(PlannedCall("memory", {**cfg, "gradient_accumulation_steps": high}, "ga_high"))
        plan.calls.append(
            PlannedCall(
                "sweep",
                {"config": cfg, "field": "train_micro_batch_size_per_gpu", "values": MICRO_SWEEP},
                "micro_sweep",
            )
        )
    else:
        plan.calls.append(PlannedCall("memory", cfg, "main"))
    if "mixed_precision_halves" in keys:
        plan.calls.append(
            PlannedCall(
                "sweep",
                {
                    "config": {**_without_adapter_flags(cfg), "finetune": "full"},
                    "field": "precision",
                    "values": ["fp32", "amp-bf16", "bf16-mixed"],
                },
                "precision_sweep",
            )
        )
    stage_unknown = (
        deepspeed
        and not plan.example
        and "zero_stage" not in cfg
        and "fsdp" not in cfg
        and cfg.get("world_size", 1) > 1
        and cfg.get("pipeline_parallel_size", 1) == 1
    )
    # (a LoRA DPO run's reference is its own base with the adapter disabled: nothing is left out)
    if rl_stage in _OTHER_MODELS and not plan.example and not (rl_stage == "dpo" and cfg.get("finetune") != "full"):
        plan.rl_stage = rl_stage
        plan.assume("rl_stage", *_OTHER_MODELS[rl_stage])
    if stage_unknown:
        plan.zero_stage_unknown = True
        if stages_compared:  # "zero2 和 zero3 …": the stages are what is compared, none is missing
            plan.assume(
                "zero_stage",
                "比较的是几个 ZeRO stage：主表按不分片（ZeRO-0）估算，各 stage 的每卡显存见对比表",
                "ZeRO stages compared: the main table is unsharded (ZeRO-0); the comparison gives each stage's "
                "per-GPU memory",
            )
        else:
            plan.assume(
                "zero_stage",
                "用了 DeepSpeed，但没给出 ZeRO stage：按不分片（ZeRO-0）估算，各 stage 的每卡显存见对比表",
                "DeepSpeed is used but its ZeRO stage is not shown: estimated unsharded (ZeRO-0); the comparison "
                "gives each stage's per-GPU memory",
            )
    if "more_gpus_pool_memory" in keys or intents.compare_zero or stage_unknown:
        multi = {k: v for k, v in cfg.items() if k not in ("offload_param", "offload_optimizer", "num_nodes", "fsdp")}
        if multi.get("world_size", 1) == 1:
            multi["world_size"] = 8 if intents.compare_zero else 2
            plan.assume(
                "world_size",
                f"ZeRO 对比按 {multi['world_size']} 张卡的数据并行",
                f"ZeRO comparison on {multi['world_size']} data-parallel GPUs",
            )
        plan.calls.append(
            PlannedCall("sweep", {"config": multi, "field": "zero_stage", "values": [0, 1, 2, 3]}, "zero_sweep")
        )
    if intents.compare_checkpointing:
        plan.calls.append(
            PlannedCall(
                "sweep",
                {"config": cfg, "field": "gradient_checkpointing", "values": ["none", "selective", "full"]},
                "checkpointing_sweep",
            )
        )
    if intents.compare_finetune:
        plan.calls.append(
            PlannedCall(
                "sweep",
                {
                    "config": {k: v for k, v in cfg.items() if k != "finetune"},
                    "field": "finetune",
                    "values": ["full", "lora", "qlora"],
                },
                "finetune_sweep",
            )
        )
    return plan
