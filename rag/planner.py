"""Which calculator calls answer a question, with which arguments, and which values were assumed.

The plan is data (name + arguments), so the user sees exactly what was computed
and a test can assert on it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from calculators.presets import GPU_PRESETS, PUBLISHED_PARAMS, count_params, get_model_shape

from .intents import Intents, MisconceptionRule
from .slots import Slots

DEFAULT_MODEL = "llama-2-7b"
DEFAULT_SEQ = 1024
GA_COMPARE = 16
MICRO_SWEEP = [1, 2, 4, 8]

_GA_KEYS = {"ga_raises_memory", "ga_stores_copies", "effective_batch_oom", "lower_ga_saves_memory"}


@dataclass
class PlannedCall:
    name: str
    arguments: dict[str, Any]
    label: str = ""


@dataclass
class Plan:
    calls: list[PlannedCall] = field(default_factory=list)
    assumptions_zh: list[str] = field(default_factory=list)
    assumptions_en: list[str] = field(default_factory=list)
    memory_config: dict[str, Any] | None = None

    def assume(self, zh: str, en: str) -> None:
        if zh not in self.assumptions_zh:
            self.assumptions_zh.append(zh)
            self.assumptions_en.append(en)


# "a 7B model" means the canonical open model of that size: checked in this order, first within 10% wins.
_CANONICAL = ("llama-2-7b", "llama-3-8b", "llama-2-13b", "llama-2-70b", "chatglm3-6b", "qwen2.5-7b", "mistral-7b",
              "gpt2-medium", "gpt2")  # decoder LLMs only: "3B" is not estimated as T5


def _nearest_preset(num_params: float) -> str | None:
    return next((n for n in _CANONICAL if abs(PUBLISHED_PARAMS[n] - num_params) / num_params < 0.10), None)


def memory_config(slots: Slots, plan: Plan) -> dict[str, Any]:
    """MemoryConfig arguments from what the question stated plus stated defaults."""
    s = slots.stated()
    cfg: dict[str, Any] = {}
    if "model" in s:
        cfg["model"] = s["model"]
    elif "num_params" in s:
        preset = _nearest_preset(s["num_params"])
        if preset:
            cfg["model"] = preset
            plan.assume(f"{s['num_params'] / 1e9:g}B 模型按 {preset} 的结构估算",
                        f"a {s['num_params'] / 1e9:g}B model is estimated with the {preset} architecture")
        else:
            cfg["num_params"] = s["num_params"]
    else:
        cfg["model"] = DEFAULT_MODEL
        plan.assume(f"模型未说明，按 {DEFAULT_MODEL} 估算", f"no model given: {DEFAULT_MODEL} assumed")
    if "gpu" in s:
        cfg["gpu"] = s["gpu"]
    elif "gpu_memory_gb" in s:
        cfg["gpu_memory_gb"] = s["gpu_memory_gb"]
    small_gpu = ("gpu" in cfg and GPU_PRESETS[cfg["gpu"]].memory_gib <= 24) or cfg.get("gpu_memory_gb", 99) <= 24
    if "finetune" in s:
        cfg["finetune"] = s["finetune"]
    elif small_gpu and "model" in cfg and count_params(get_model_shape(cfg["model"])) > 3e9:
        cfg["finetune"] = "lora"
        n = count_params(get_model_shape(cfg["model"]))
        plan.assume(f"24 GB 级显卡上按 LoRA 微调估算（全量微调仅模型状态就需约 16 B/参数 × {n / 1e9:.2f}B ≈ {16 * n / 1e9:.0f} GB）",
                    f"LoRA fine-tuning assumed on a 24 GB-class GPU (a full fine-tune needs ~16 B/param × {n / 1e9:.2f}B ≈ {16 * n / 1e9:.0f} GB of model states alone)")
    for key in ("lora_rank", "zero_stage", "world_size", "num_nodes", "offload_optimizer", "offload_param",
                "gradient_checkpointing", "flash_attention", "pipeline_parallel_size"):
        if key in s:
            cfg[key] = s[key]
    if cfg.get("num_nodes", 1) > 1 and "world_size" not in cfg:
        cfg["world_size"] = cfg["num_nodes"]
    if cfg.get("world_size", 1) % cfg.get("num_nodes", 1):
        cfg.pop("num_nodes")
    if (cfg.get("offload_optimizer") or cfg.get("offload_param")) and not cfg.get("zero_stage"):
        cfg["zero_stage"] = 3 if cfg.get("offload_param") else 2
        plan.assume(f"offload 需要 ZeRO，按 ZeRO-{cfg['zero_stage']} 估算",
                    f"offload needs ZeRO: ZeRO-{cfg['zero_stage']} assumed")
    if cfg.get("offload_param") and cfg.get("zero_stage") != 3:
        cfg.pop("offload_param")
    if "precision" in s:
        cfg["precision"] = s["precision"]
    else:
        no_bf16 = "gpu" in cfg and not GPU_PRESETS[cfg["gpu"]].bf16
        cfg["precision"] = "fp16-mixed" if no_bf16 else "bf16-mixed"
        plan.assume(f"精度按 {cfg['precision']}（16 位权重/梯度 + fp32 主权重与 Adam 状态）",
                    f"precision {cfg['precision']} assumed (16-bit weights/grads + fp32 master weights and Adam states)")
    cfg["train_micro_batch_size_per_gpu"] = s.get("train_micro_batch_size_per_gpu", 1)
    cfg["gradient_accumulation_steps"] = s.get("gradient_accumulation_steps", 1)
    if "train_micro_batch_size_per_gpu" not in s:
        plan.assume("micro batch 按 1", "micro batch 1 assumed")
    if "seq_len" in s:
        cfg["seq_len"] = s["seq_len"]
    else:
        cfg["seq_len"] = DEFAULT_SEQ
        plan.assume(f"序列长度按 {DEFAULT_SEQ}", f"sequence length {DEFAULT_SEQ} assumed")
    return cfg


def _batch_args(slots: Slots, small_batch: bool, plan: Plan) -> dict[str, Any]:
    s = slots.stated()
    args: dict[str, Any] = {k: s[k] for k in ("train_batch_size", "train_micro_batch_size_per_gpu",
                                                "gradient_accumulation_steps", "base_batch_size",
                                                "base_learning_rate") if k in s}
    if "base_learning_rate" in args and "base_batch_size" not in args:
        args.pop("base_learning_rate")
    args["world_size"] = s.get("world_size", 1)
    if "train_batch_size" not in args and "train_micro_batch_size_per_gpu" not in args:
        args["train_micro_batch_size_per_gpu"] = 1
        if "gradient_accumulation_steps" not in args:
            args["gradient_accumulation_steps"] = 1
        plan.assume("micro batch / GA 未给出数值，按 1 / 1 演示" if small_batch else "micro batch 按 1",
                    "no micro batch / GA values given: 1 / 1 used to illustrate" if small_batch else "micro batch 1 assumed")
    if "seq_len" in s:
        args["seq_len"] = s["seq_len"]
    return args


def plan_calls(slots: Slots, intents: Intents, misconceptions: list[MisconceptionRule]) -> Plan:
    """The calculator calls that show the numbers behind the answer."""
    plan = Plan()
    keys = {m.key for m in misconceptions}
    stated = slots.stated()
    batch_stated = any(k in stated for k in ("train_batch_size", "train_micro_batch_size_per_gpu",
                                             "gradient_accumulation_steps", "base_batch_size"))
    wants_memory = (intents.memory or intents.zero or intents.precision or bool(keys & _GA_KEYS)
                    or bool(keys & {"mixed_precision_halves", "more_gpus_pool_memory"})
                    or intents.compare_zero or intents.compare_checkpointing or intents.compare_finetune
                    or any(k in stated for k in ("model", "num_params", "gpu", "gpu_memory_gb", "zero_stage", "finetune")))
    ga_memory = bool(keys & _GA_KEYS)
    # In the GA-memory case the comparison table itself shows the effective batch of each column.
    wants_batch = ((batch_stated or intents.effective) and not ga_memory) or intents.small_batch
    wants_memory = wants_memory and not (intents.small_batch and not intents.memory and not keys & _GA_KEYS)

    if wants_batch:
        plan.calls.append(PlannedCall("effective_batch", _batch_args(slots, intents.small_batch, plan), "effective_batch"))
        if intents.small_batch:
            # Same data, two batch settings: how many optimizer steps an epoch takes.
            plan.calls[-1].arguments["dataset_size"] = 10_000
            plan.calls.append(PlannedCall("effective_batch", {"train_micro_batch_size_per_gpu": 4,
                                                              "gradient_accumulation_steps": 8, "world_size": 1,
                                                              "dataset_size": 10_000}, "effective_batch_compare"))
            plan.assume("每个 epoch 的步数按 10,000 条样本演示", "steps per epoch shown for 10,000 samples")
    if not wants_memory:
        return plan

    cfg = memory_config(slots, plan)
    plan.memory_config = cfg
    if keys & _GA_KEYS or (intents.memory and "gradient_accumulation_steps" in stated):
        ga_high = max(GA_COMPARE, cfg["gradient_accumulation_steps"])
        plan.calls.append(PlannedCall("memory", {**cfg, "gradient_accumulation_steps": 1}, "ga_low"))
        plan.calls.append(PlannedCall("memory", {**cfg, "gradient_accumulation_steps": ga_high}, "ga_high"))
        plan.calls.append(PlannedCall("sweep", {"config": cfg, "field": "train_micro_batch_size_per_gpu",
                                                "values": MICRO_SWEEP}, "micro_sweep"))
    else:
        plan.calls.append(PlannedCall("memory", cfg, "main"))
    if "mixed_precision_halves" in keys:
        plan.calls.append(PlannedCall("sweep", {"config": {**cfg, "finetune": "full"}, "field": "precision",
                                                "values": ["fp32", "amp-bf16", "bf16-mixed"]}, "precision_sweep"))
    if "more_gpus_pool_memory" in keys:
        ws = max(2, cfg.get("world_size", 2))
        multi = {**cfg, "world_size": ws}
        multi.pop("num_nodes", None)
        plan.calls.append(PlannedCall("sweep", {"config": multi, "field": "zero_stage", "values": [0, 1, 2, 3]},
                                      "zero_sweep"))
    elif intents.compare_zero or (intents.zero and "zero_stage" not in stated and cfg.get("world_size", 1) > 1):
        multi = dict(cfg)
        if multi.get("world_size", 1) == 1:
            multi["world_size"] = 8
            plan.assume("ZeRO 对比按 8 张卡的数据并行", "ZeRO comparison on 8 data-parallel GPUs")
        multi.pop("offload_param", None)
        multi.pop("offload_optimizer", None)
        plan.calls.append(PlannedCall("sweep", {"config": multi, "field": "zero_stage", "values": [0, 1, 2, 3]},
                                      "zero_sweep"))
    if intents.compare_checkpointing:
        plan.calls.append(PlannedCall("sweep", {"config": cfg, "field": "gradient_checkpointing",
                                                "values": ["none", "selective", "full"]}, "checkpointing_sweep"))
    if intents.compare_finetune:
        plan.calls.append(PlannedCall("sweep", {"config": {k: v for k, v in cfg.items() if k != "finetune"},
                                                "field": "finetune", "values": ["full", "lora", "qlora"]},
                                      "finetune_sweep"))
    return plan
