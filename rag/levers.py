"""The nearest setting that fits, when the user's does not.

"It does not fit" alone leaves the user stuck. The levers are tried in the order people reach for
them (cheapest change first): gradient checkpointing, micro batch 1, LoRA instead of a full
fine-tune, QLoRA instead of LoRA, ZeRO-3 across the GPUs they have, optimizer offload. One change
at a time first, then the changes accumulated, so the answer names the smallest step that fits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Describe = Callable[[str], str]

_NAMES = {
    "ckpt": ("开启梯度检查点", "turn on gradient checkpointing"),
    "micro1": ("micro batch 1（用 GA 保持有效批次）", "micro batch 1 (keep the effective batch with GA)"),
    "lora": ("改用 LoRA", "LoRA instead of a full fine-tune"),
    "qlora": ("改用 QLoRA", "QLoRA instead of LoRA"),
    "zero3": ("ZeRO-3", "ZeRO-3"),
    "offload": ("优化器 offload 到 CPU", "optimizer offload to CPU"),
    "fsdp_full": ("FSDP FULL_SHARD", "FSDP FULL_SHARD"),
    "fsdp_offload": ("FSDP 参数 offload 到 CPU", "FSDP CPU offload"),
}


def _changes(cfg: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    if cfg.get("gradient_checkpointing", "none") != "full":
        out.append(("ckpt", {"gradient_checkpointing": "full"}))
    if cfg.get("train_micro_batch_size_per_gpu", 1) > 1:
        out.append(("micro1", {"train_micro_batch_size_per_gpu": 1}))
    if cfg.get("finetune", "full") == "full":
        out.append(("lora", {"finetune": "lora"}))
    elif cfg.get("finetune") == "lora":
        out.append(("qlora", {"finetune": "qlora"}))
    if cfg.get("fsdp", "none") != "none":  # an FSDP run's way out is FSDP's own sharding and offload, not ZeRO
        if cfg.get("world_size", 1) > 1 and cfg["fsdp"] != "full_shard":
            out.append(("fsdp_full", {"fsdp": "full_shard"}))
        if not cfg.get("fsdp_cpu_offload") and cfg.get("finetune", "full") == "full":
            out.append(("fsdp_offload", {"fsdp_cpu_offload": True}))
        return out
    if cfg.get("world_size", 1) > 1 and cfg.get("zero_stage", 0) < 3:
        out.append(("zero3", {"zero_stage": 3}))
    if not cfg.get("offload_optimizer") and cfg.get("finetune", "full") == "full":
        out.append(("offload", {"offload_optimizer": True, "zero_stage": max(2, cfg.get("zero_stage", 0))}))
    return out


def candidates(cfg: dict[str, Any]) -> list[tuple[list[str], dict[str, Any]]]:
    """(lever names, MemoryConfig arguments) to try, nearest first."""
    changes = _changes(cfg)
    out = [([name], {**cfg, **change}) for name, change in changes]
    acc = dict(cfg)
    names: list[str] = []
    for name, change in changes:
        acc = {**acc, **change}
        names = names + [name]
        if len(names) > 1:
            out.append((list(names), dict(acc)))
    return out


def describe(names: list[str], lang: str) -> str:
    sep = " + "
    return sep.join(_NAMES[n][0 if lang == "zh" else 1] for n in names)


def nearest_fits(
    cfg: dict[str, Any], estimate: Callable[[dict[str, Any]], Any], limit: int = 3
) -> list[tuple[list[str], Any]]:
    """(lever names, estimate) of the nearest settings that fit, nearest first: every single change that fits
    (up to ``limit``), else the first accumulated combination that does; [] when nothing fits.

    ``estimate(cfg)`` returns a MemoryEstimate, its dict, or a ToolCall whose ``result`` is that dict (None or a
    result-less call when the calculator refuses the candidate). One list for the chat and the calculator tab, so both name the same
    way out."""
    singles: list[tuple[list[str], Any]] = []
    for names, candidate in candidates(cfg):
        if len(names) > 1 and singles:
            break  # combinations come after the single changes (nearer)
        est = estimate(candidate)
        if _fits(est):
            if len(names) > 1:
                return [(names, est)]
            singles.append((names, est))
    return singles[:limit]


def _fits(est: Any) -> bool:
    result = getattr(est, "result", est)
    return bool(result.get("fits") if isinstance(result, dict) else getattr(result, "fits", False))
