"""Hugging Face TrainingArguments (dict, JSON or a launch command line): the reader."""
from __future__ import annotations

from .models import ParsedConfig
from .keys import HF_KEYS
from .values import _int, _lora_targets, _micro_ga_to_memory, _model, _precision, _read_batch, _seq_len, _truthy


def _parse_hf(pc: ParsedConfig) -> None:
    d = pc.raw
    strict = pc.source_format != "flags"
    _read_batch(pc, d, {"per_device_train_batch_size": "train_micro_batch_size_per_gpu",
                        "gradient_accumulation_steps": "gradient_accumulation_steps"}, strict=strict)
    _micro_ga_to_memory(pc)
    pc.unknown_keys += [k for k in d if k not in HF_KEYS and not k.startswith("accelerate_")]
    ds = d.get("deepspeed")
    if isinstance(ds, (str, dict)) and ds:
        pc.deepspeed = ds
    prec = _precision(d.get("bf16"), d.get("fp16"), bool(pc.deepspeed))
    if prec is None and not pc.deepspeed:
        prec = "fp32"
        pc.notes_en.append("Neither --bf16 nor --fp16: Trainer trains in fp32 (unless the script loads the model in 16-bit).")
        pc.notes_zh.append("没有 --bf16 也没有 --fp16：Trainer 以 fp32 训练（除非脚本以 16 位加载模型）。")
    if prec:
        pc.memory["precision"] = prec
    if _truthy(d.get("gradient_checkpointing")):
        pc.memory["gradient_checkpointing"] = "full"
    optim = d.get("optim")
    if isinstance(optim, str):
        o = optim.lower()
        if "8bit" in o:
            pc.memory["optimizer"] = "adamw-8bit"
        elif o.startswith("adafactor"):
            pc.memory["optimizer"] = "adafactor"
    if _truthy(d.get("adafactor")):
        pc.memory["optimizer"] = "adafactor"
    _seq_len(pc, d, ("max_seq_length", "max_length", "block_size", "model_max_length", "max_source_length"))
    _model(pc, d)
    attn = d.get("attn_implementation")
    if isinstance(attn, str) and attn.lower() == "eager":
        pc.memory["flash_attention"] = False
    if _truthy(d.get("use_peft")) or "lora_r" in d:
        pc.memory["finetune"] = "qlora" if _truthy(d.get("load_in_4bit")) else "lora"
        r = _int(d.get("lora_r"), strict=False)
        if r and r > 0:
            pc.memory["lora_rank"] = r
        _lora_targets(pc, d.get("lora_target_modules"))
    if isinstance(d.get("accelerate_num_processes"), int):
        pc.world_size = pc.world_size or d["accelerate_num_processes"]
