"""Accelerate config YAML (written by ``accelerate config``): the reader."""
from __future__ import annotations

from .models import ParsedConfig
from .keys import ACC_DS_KEYS, ACC_KEYS
from .values import _int, _micro_ga_to_memory, _read_batch, _truthy, _unknown


def _parse_accelerate(pc: ParsedConfig) -> None:
    d = pc.raw
    pc.unknown_keys += _unknown(d, ACC_KEYS)
    n = d.get("num_processes")
    if n is not None:
        iv = _int(n)
        if iv is None or iv == 0 or iv < -1:
            pc.invalid["num_processes"] = n
        elif iv > 0:
            pc.world_size = iv
    dist = str(d.get("distributed_type", "")).upper()
    ds = d.get("deepspeed_config") if isinstance(d.get("deepspeed_config"), dict) else {}
    if d.get("deepspeed_config") not in (None, {}) and not isinstance(d.get("deepspeed_config"), dict):
        pc.invalid["deepspeed_config"] = d.get("deepspeed_config")
    pc.unknown_keys += _unknown(ds, ACC_DS_KEYS, "deepspeed_config.")
    is_ds = dist == "DEEPSPEED" or bool(ds)
    mp = str(d.get("mixed_precision", "no")).lower()
    if mp in ("bf16", "fp16"):
        pc.memory["precision"] = f"{mp}-mixed" if is_ds else f"amp-{mp}"
    elif mp in ("no", "none", "false"):
        pc.memory["precision"] = "fp32"
    if is_ds:
        if isinstance(ds.get("deepspeed_config_file"), str):
            pc.deepspeed = ds["deepspeed_config_file"]
        stage = ds.get("zero_stage")
        if stage is not None:
            s = _int(stage)
            if s is None or not 0 <= s <= 3:
                pc.invalid["deepspeed_config.zero_stage"] = stage
            else:
                pc.memory["zero_stage"] = s
        elif not pc.deepspeed:
            pc.memory["zero_stage"] = 2  # DeepSpeedPlugin default (ACCELERATE_DEEPSPEED_ZERO_STAGE or 2)
        s = pc.memory.get("zero_stage", 0)
        if str(ds.get("offload_optimizer_device", "none")).lower() in ("cpu", "nvme") and s >= 1:
            pc.memory["offload_optimizer"] = True
        if str(ds.get("offload_param_device", "none")).lower() in ("cpu", "nvme") and s == 3:
            pc.memory["offload_param"] = True
        _read_batch(pc, ds, {"gradient_accumulation_steps": "gradient_accumulation_steps"}, strict=True)
        _micro_ga_to_memory(pc)
    elif dist == "FSDP":
        fs = d.get("fsdp_config") if isinstance(d.get("fsdp_config"), dict) else {}
        strategy = str(fs.get("fsdp_sharding_strategy", "FULL_SHARD")).upper()
        stage = {"FULL_SHARD": 3, "1": 3, "SHARD_GRAD_OP": 2, "2": 2, "NO_SHARD": 0, "3": 0,
                 "HYBRID_SHARD": 3, "4": 3}.get(strategy)
        if fs.get("fsdp_version") == 2 and "fsdp_reshard_after_forward" in fs:
            stage = 3 if _truthy(fs["fsdp_reshard_after_forward"]) else 2
        if stage is not None:
            pc.memory["zero_stage"] = stage
            if pc.memory.get("precision", "").startswith("amp-"):
                pc.memory["precision"] = pc.memory["precision"][4:] + "-mixed"
            pc.notes_en.append(f"FSDP {strategy} is estimated as the equivalent ZeRO stage {stage}.")
            pc.notes_zh.append(f"FSDP {strategy} 按等价的 ZeRO stage {stage} 估算。")
        if _truthy(fs.get("fsdp_offload_params")) and stage == 3:
            pc.memory["offload_param"] = pc.memory["offload_optimizer"] = True
