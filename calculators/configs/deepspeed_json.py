"""DeepSpeed JSON: the reader (what the config means for batch and memory)."""

from __future__ import annotations

import copy
from typing import Any

from . import library
from .keys import DS_BATCH_KEYS, DS_OFFLOAD_KEYS, DS_TOP_KEYS, DS_ZERO_KEYS
from .library import LibraryVerdict
from .models import ParsedConfig
from .values import _get, _int, _num, _precision, _read_batch, _unknown


def _parse_deepspeed(pc: ParsedConfig) -> None:
    d = pc.raw
    _read_batch(pc, d, {k: k for k in DS_BATCH_KEYS}, strict=True)
    pc.unknown_keys += _unknown(d, DS_TOP_KEYS)
    zero = d.get("zero_optimization")
    stage: int | None = 0
    zd: dict[str, Any] = {}
    if isinstance(zero, bool):
        stage = 1 if zero else 0  # deprecated boolean form: True means stage 1
    elif isinstance(zero, dict):
        zd = zero
        pc.unknown_keys += _unknown(zd, DS_ZERO_KEYS, "zero_optimization.")
        raw_stage = zd.get("stage", 0)
        stage = _int(raw_stage, strict=False)  # DeepSpeed's pydantic model accepts "2" (recorded: ds_stage_string)
        if stage is None or not 0 <= stage <= 3:
            if not (isinstance(raw_stage, str) and raw_stage == "auto"):
                pc.invalid["zero_optimization.stage"] = raw_stage
            stage = None
        for sub, known in DS_OFFLOAD_KEYS.items():
            if isinstance(zd.get(sub), dict):
                pc.unknown_keys += _unknown(zd[sub], known, f"zero_optimization.{sub}.")
    elif zero is not None:
        pc.invalid["zero_optimization"] = zero
    mem = pc.memory
    if stage is not None:
        mem["zero_stage"] = stage
        dev_opt = _offload_device(zd, "offload_optimizer", "cpu_offload")
        dev_par = _offload_device(zd, "offload_param", "cpu_offload_param")
        if dev_opt in ("cpu", "nvme") and stage >= 1:
            mem["offload_optimizer"] = True
        if dev_par in ("cpu", "nvme") and stage == 3:
            mem["offload_param"] = True
        for key in ("reduce_bucket_size", "allgather_bucket_size"):
            v = _num(zd.get(key))
            if v is not None and v > 0:
                mem[key] = v
            elif key in zd and zd[key] != "auto" and v is None:
                pc.invalid[f"zero_optimization.{key}"] = zd[key]
        if isinstance(zd.get("overlap_comm"), bool):
            mem["overlap_comm"] = zd["overlap_comm"]
    fp16 = _get(d, "fp16.enabled")
    bf16 = _get(d, "bf16.enabled") if isinstance(d.get("bf16"), dict) else _get(d, "bfloat16.enabled")
    if fp16 == "auto" or bf16 == "auto":
        precision = _precision(bf16 is True, fp16 is True, True)
    else:
        precision = _precision(bf16, fp16, True) or "fp32"
    if precision:
        mem["precision"] = precision
    if "train_micro_batch_size_per_gpu" in pc.batch and pc.batch["train_micro_batch_size_per_gpu"] > 0:
        mem["train_micro_batch_size_per_gpu"] = pc.batch["train_micro_batch_size_per_gpu"]
    if "gradient_accumulation_steps" in pc.batch and pc.batch["gradient_accumulation_steps"] > 0:
        mem["gradient_accumulation_steps"] = pc.batch["gradient_accumulation_steps"]
    opt_type = _get(d, "optimizer.type")
    if isinstance(opt_type, str) and opt_type.lower() in ("sgd",):
        mem["optimizer"] = "sgd-momentum"


def _offload_device(zd: dict[str, Any], key: str, legacy: str) -> str | None:
    sub = zd.get(key)
    if isinstance(sub, dict):
        dev = sub.get("device")
        return dev.lower() if isinstance(dev, str) else None
    if zd.get(legacy) is True:
        return "cpu"
    return None


# ---------------------------------------------------------------------------------------------
# Library adapter: DeepSpeed's own DeepSpeedConfig gives the verdict.

DS_CONFIG_PATH = "deepspeed.runtime.config.DeepSpeedConfig"


def deepspeed_verdict(raw: dict[str, Any], world_size: int, duplicate_keys: list[str] | None = None) -> LibraryVerdict:
    """What ``DeepSpeedConfig`` (what ``deepspeed.initialize`` builds) says about ``raw`` at ``world_size`` ranks.

    Duplicate keys in the pasted text are judged by DeepSpeed's own JSON hook
    (``dict_raise_error_on_duplicate_keys``), which is how it reads a config file.
    """
    ws = max(1, int(world_size))
    if library.load("deepspeed.runtime.config") is None:
        return library.unavailable("deepspeed.runtime.config", DS_CONFIG_PATH, ws)
    versions = {"deepspeed": library.version("deepspeed")}
    with library.LOCK, library.quiet():
        try:
            if duplicate_keys:
                utils = library.load("deepspeed.runtime.config_utils")
                if utils is not None:
                    utils.dict_raise_error_on_duplicate_keys([(k, None) for k in duplicate_keys for _ in range(2)])
            library.deepspeed_config(copy.deepcopy(raw), ws)
        except Exception as exc:  # noqa: BLE001 - whatever DeepSpeed raises is its verdict
            return library.failure(exc, path=DS_CONFIG_PATH, step=DS_CONFIG_PATH, world_size=ws, versions=versions)
    return LibraryVerdict(available=True, passed=True, path=DS_CONFIG_PATH, world_size=ws, versions=versions)
