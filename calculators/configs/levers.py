"""Memory estimate of a checked config and the biggest lever that makes it fit."""

from __future__ import annotations

import re
from typing import Any

from ..errors import CalculatorError
from ..memory import MemoryConfig, MemoryEstimate, estimate_memory, make_config
from .checks import _Out
from .hf_args import _hf_values
from .models import ParsedConfig, _gib
from .values import _int, _precision, resolve_model_preset


def _memory(out: _Out, pc: ParsedConfig, kw: dict[str, Any], lang: str) -> MemoryEstimate | None:
    if "model" not in kw and "num_params" not in kw:
        name = f" ('{pc.model_name}' is not a preset)" if pc.model_name else ""
        name_zh = f"（'{pc.model_name}' 不是预设）" if pc.model_name else ""
        out.add(
            "info",
            "model",
            f"No memory estimate: the model is unknown{name}. Name the model (e.g. llama-3-8b, "
            "qwen2.5-7b) and the GPU (e.g. rtx-3090, a100-80gb) to get one.",
            f"没有显存估算：模型未知{name_zh}。请指明模型（如 llama-3-8b、qwen2.5-7b）和显卡（如 rtx-3090、a100-80gb）。",
        )
        return None
    if "gpu" not in kw and "gpu_memory_gb" not in kw:
        out.add(
            "info",
            "gpu",
            "No GPU given: the estimate below cannot say whether it fits. Name the GPU (e.g. rtx-4090, a100-80gb).",
            "没有给出 GPU：下面的估算无法判断是否放得下。请提供 gpu=（如 rtx-4090、a100-80gb）。",
        )
    try:
        est = estimate_memory(make_config(**kw))
    except CalculatorError as err:
        out.add("warning", err.field, f"No memory estimate: {err.en}", f"无法估算显存：{err.zh}")
        return None
    if est.fits is None:
        return est
    if est.fits:
        out.add(
            "info",
            "memory",
            f"Fits: about {_gib(est.total_per_gpu)} of {_gib(est.gpu_capacity)} GiB per GPU "
            f"({_gib(est.headroom)} GiB spare; largest micro batch that fits ≈ {est.max_micro_batch}).",
            f"放得下：每卡约 {_gib(est.total_per_gpu)} / {_gib(est.gpu_capacity)} GiB"
            f"（剩余 {_gib(est.headroom)} GiB；可容纳的最大微批次约 {est.max_micro_batch}）。",
        )
        return est
    lever = _best_lever(kw, est)
    short = -(est.headroom or 0)
    if lever:
        en, zh, new = lever
        out.add(
            "warning",
            "memory",
            f"Does not fit: about {_gib(est.total_per_gpu)} GiB per GPU on {_on_gpu(est)} "
            f"({_gib(short)} GiB short). Biggest lever that fits: {en} → about "
            f"{_gib(new.total_per_gpu)} GiB ({_gib(new.headroom)} GiB spare).",
            f"放不下：每卡约 {_gib(est.total_per_gpu)} GiB，{_gpu_zh(est)} 只有 {_gib(est.gpu_capacity)} GiB"
            f"（差 {_gib(short)} GiB）。最有效且能放下的办法：{zh} → 约 {_gib(new.total_per_gpu)} GiB"
            f"（剩余 {_gib(new.headroom)} GiB）。",
            en,
            zh,
        )
    else:
        out.add(
            "warning",
            "memory",
            f"Does not fit: about {_gib(est.total_per_gpu)} GiB per GPU on {_on_gpu(est)} "
            f"({_gib(short)} GiB short), and no single change (checkpointing, smaller micro batch, "
            "LoRA, ZeRO-3/offload, QLoRA) nor all of them together make it fit.",
            f"放不下：每卡约 {_gib(est.total_per_gpu)} GiB，{_gpu_zh(est)} 只有 {_gib(est.gpu_capacity)} GiB"
            f"（差 {_gib(short)} GiB），梯度检查点、减小微批次、LoRA、ZeRO-3/offload、QLoRA 单独或全部叠加都放不下。",
            "Use more GPUs (with ZeRO-3) or GPUs with more memory, or a shorter sequence length.",
            "增加 GPU（配合 ZeRO-3）、换更大显存的卡，或缩短序列长度。",
        )
    return est


def _on_gpu(est: MemoryEstimate) -> str:
    """ "one 80.0 GiB GPU" for a bare capacity, "one 24.0 GiB RTX 3090" for a preset (never "a 80.0 GiB 80 GiB GPU")."""
    name = str(est.gpu_name or "")
    return f"one {_gib(est.gpu_capacity)} GiB {'GPU' if not name or name.endswith('GiB GPU') else name}"


def _gpu_zh(est: MemoryEstimate) -> str:
    name = str(est.gpu_name or "")
    return "显卡" if not name or name.endswith("GiB GPU") else name


def _try(kw: dict[str, Any], **changes: Any) -> MemoryEstimate | None:
    new = {**kw, **changes}
    if new.get("zero_stage", 0) > 0 and str(new.get("precision", "")).startswith("amp-"):
        new["precision"] = new["precision"][4:] + "-mixed"  # moving to DeepSpeed changes the precision regime
    if new.get("offload_param") and new.get("zero_stage") != 3:
        new["offload_param"] = False
    try:
        return estimate_memory(make_config(**new))
    except CalculatorError:
        return None


def _levers(kw: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    out: list[tuple[str, str, dict[str, Any]]] = []
    if kw.get("gradient_checkpointing", "none") != "full":
        out.append(
            (
                "enable gradient checkpointing (--gradient_checkpointing)",
                "开启梯度检查点（--gradient_checkpointing）",
                {"gradient_checkpointing": "full"},
            )
        )
    mb, ga = kw.get("train_micro_batch_size_per_gpu", 1), kw.get("gradient_accumulation_steps", 1)
    m = mb // 2
    while m >= 1:
        if mb % m == 0:
            g = ga * (mb // m)
            out.append(
                (
                    f"micro batch {mb} → {m} with gradient_accumulation_steps {ga} → {g} (same effective batch)",
                    f"微批次 {mb} → {m}，gradient_accumulation_steps {ga} → {g}（有效批次不变）",
                    {"train_micro_batch_size_per_gpu": m, "gradient_accumulation_steps": g},
                )
            )
        m //= 2
    if kw.get("finetune", "full") == "full":
        out.append(
            (
                "LoRA instead of full fine-tuning (rank 8 on all linear layers)",
                "用 LoRA 代替全参微调（rank 8，所有线性层）",
                {"finetune": "lora", "lora_rank": kw.get("lora_rank", 8), "lora_target_modules": ["all"]},
            )
        )
    stage, ws = kw.get("zero_stage", 0), kw.get("world_size", 1)
    if ws > 1 and stage < 3:
        out.append((f"ZeRO-3 across the {ws} GPUs", f"在 {ws} 张卡上使用 ZeRO-3", {"zero_stage": 3}))
    if not kw.get("offload_optimizer"):
        s = max(stage, 2)
        out.append(
            (
                f"ZeRO-{s} with offload_optimizer to CPU",
                f"ZeRO-{s} 并把优化器 offload 到 CPU",
                {"zero_stage": s, "offload_optimizer": True},
            )
        )
    if not kw.get("offload_param"):
        out.append(
            (
                "ZeRO-3 with optimizer and parameter offload to CPU",
                "ZeRO-3，并把优化器和参数都 offload 到 CPU",
                {"zero_stage": 3, "offload_optimizer": True, "offload_param": True},
            )
        )
    if kw.get("finetune", "full") != "qlora":
        out.append(
            (
                "QLoRA (4-bit base model, LoRA rank 8 on all linear layers)",
                "QLoRA（4 位基座模型，rank 8，所有线性层）",
                {
                    "finetune": "qlora",
                    "lora_rank": kw.get("lora_rank", 8),
                    "lora_target_modules": kw.get("lora_target_modules", ["all"]),
                    "offload_param": False,
                    "offload_optimizer": False,
                },
            )
        )
    return out


def _best_lever(kw: dict[str, Any], est: MemoryEstimate) -> tuple[str, str, MemoryEstimate] | None:
    levers = _levers(kw)
    for en, zh, ch in levers:
        new = _try(kw, **ch)
        if new is not None and new.fits:
            return en, zh, new
    # nothing alone: stack them in order
    acc: dict[str, Any] = {}
    names_en: list[str] = []
    names_zh: list[str] = []
    seen_micro = False
    for en, zh, ch in levers:
        if "train_micro_batch_size_per_gpu" in ch:
            if seen_micro:
                continue
            ch = {
                "train_micro_batch_size_per_gpu": 1,
                "gradient_accumulation_steps": kw.get("gradient_accumulation_steps", 1)
                * kw.get("train_micro_batch_size_per_gpu", 1),
            }
            en = f"micro batch 1 with gradient_accumulation_steps {ch['gradient_accumulation_steps']}"
            zh = f"微批次 1、gradient_accumulation_steps {ch['gradient_accumulation_steps']}"
            seen_micro = True
        acc.update(ch)
        names_en.append(en)
        names_zh.append(zh)
        new = _try(kw, **acc)
        if new is not None and new.fits:
            return " + ".join(names_en), " + ".join(names_zh), new
    return None


def _memory_kwargs(
    pc: ParsedConfig, companion: ParsedConfig | None, gpu: Any, ws: int | None, model: Any
) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    if companion is not None:
        kw.update(companion.memory)
    kw.update(pc.memory)
    if companion is not None and pc.kind == "deepspeed":
        # the DeepSpeed JSON decides precision only when explicit; "auto" defers to the Trainer flags
        hfv = _hf_values(companion.raw) or {}
        if "precision" not in pc.memory:
            p = _precision(hfv.get("bf16"), hfv.get("fp16"), True)
            if p:
                kw["precision"] = p
        for src, dst in (
            ("per_device_train_batch_size", "train_micro_batch_size_per_gpu"),
            ("gradient_accumulation_steps", "gradient_accumulation_steps"),
        ):
            v = _int(hfv.get(src), strict=False)
            if v is not None and v > 0 and (dst in pc.auto_fields or dst not in kw):
                kw[dst] = v
    if model is not None:
        preset = resolve_model_preset(model) if isinstance(model, str) else None
        kw.pop("model", None)
        if preset:
            kw["model"] = preset
        elif isinstance(model, (int, float)) and not isinstance(model, bool):
            kw["num_params"] = float(model)
        elif isinstance(model, str):
            m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([bBmM])\s*", model)
            if m:
                kw["num_params"] = float(m.group(1)) * (1e9 if m.group(2) in "bB" else 1e6)
    if gpu is not None:
        if isinstance(gpu, (int, float)) and not isinstance(gpu, bool):
            kw["gpu_memory_gb"] = float(gpu)
        else:
            kw["gpu"] = str(gpu)
    if ws is not None:
        kw["world_size"] = ws
    if kw.get("offload_param") and kw.get("zero_stage") != 3:
        kw.pop("offload_param")
    if kw.get("offload_optimizer") and not kw.get("zero_stage"):
        kw.pop("offload_optimizer")
    allowed = set(MemoryConfig.model_fields)
    return {k: v for k, v in kw.items() if k in allowed}
