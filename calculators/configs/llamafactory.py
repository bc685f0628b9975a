"""LLaMA-Factory training YAML: the reader (its defaults: lora, cutoff_len 2048, gradient checkpointing on)."""

from __future__ import annotations

import re

from .keys import LF_KEYS
from .models import ParsedConfig
from .values import _int, _lora_targets, _micro_ga_to_memory, _model, _precision, _read_batch, _seq_len, _truthy

_LF_DS_NAMES = re.compile(r"ds_z([0-3])(_offload)?_config\.json$")


def _parse_llamafactory(pc: ParsedConfig) -> None:
    d = pc.raw
    _read_batch(
        pc,
        d,
        {
            "per_device_train_batch_size": "train_micro_batch_size_per_gpu",
            "gradient_accumulation_steps": "gradient_accumulation_steps",
        },
        strict=True,
    )
    _micro_ga_to_memory(pc)
    pc.unknown_keys += [k for k in d if k not in LF_KEYS]
    ds = d.get("deepspeed")
    if isinstance(ds, (str, dict)) and ds:
        pc.deepspeed = ds
        m = _LF_DS_NAMES.search(ds) if isinstance(ds, str) else None
        if m and isinstance(ds, str):
            stage = int(m.group(1))
            pc.memory["zero_stage"] = stage
            if m.group(2):
                pc.memory["offload_optimizer"] = True
                if stage == 3:
                    pc.memory["offload_param"] = True
            pc.notes_en.append(
                f"ZeRO stage {stage}{' with CPU offload' if m.group(2) else ''} read from the name of "
                f"LLaMA-Factory's shipped DeepSpeed config {ds.rsplit('/', 1)[-1]}."
            )
            pc.notes_zh.append(
                f"ZeRO stage {stage}{'（含 CPU offload）' if m.group(2) else ''} 取自 LLaMA-Factory "
                f"自带 DeepSpeed 配置的文件名 {ds.rsplit('/', 1)[-1]}。"
            )
    if _truthy(d.get("pure_bf16")):
        pc.memory["precision"] = "bf16"
    else:
        prec = _precision(d.get("bf16"), d.get("fp16"), bool(pc.deepspeed))
        pc.memory["precision"] = prec or "fp32"
    ft = d.get("finetuning_type", "lora")
    qbit = _int(d.get("quantization_bit"))
    if "quantization_bit" in d and d["quantization_bit"] is not None and qbit is None:
        pc.invalid["quantization_bit"] = d["quantization_bit"]
    if ft == "lora":
        pc.memory["finetune"] = "qlora" if qbit == 4 else "lora"
        if qbit is not None and qbit != 4:
            pc.notes_en.append(
                f"quantization_bit={qbit}: the estimate models only 4-bit NF4; the base weights are counted as 16-bit."
            )
            pc.notes_zh.append(f"quantization_bit={qbit}：估算只建模 4 位 NF4；基座权重按 16 位计。")
        r = _int(d.get("lora_rank", 8))
        if r is None or r <= 0:
            pc.invalid["lora_rank"] = d.get("lora_rank")
        else:
            pc.memory["lora_rank"] = r
        _lora_targets(pc, d.get("lora_target", "all"))
    elif ft == "full":
        pc.memory["finetune"] = "full"
    elif ft in ("freeze", "oft"):
        pc.notes_en.append(
            f"finetuning_type={ft} is not modelled; the estimate treats it as full fine-tuning (an upper bound)."
        )
        pc.notes_zh.append(f"finetuning_type={ft} 未单独建模；估算按全参微调计（上界）。")
        pc.memory["finetune"] = "full"
    else:
        pc.invalid["finetuning_type"] = ft
    if "finetuning_type" not in d:
        pc.notes_en.append("finetuning_type not set: LLaMA-Factory's default is lora.")
        pc.notes_zh.append("未设置 finetuning_type：LLaMA-Factory 默认是 lora。")
    if "cutoff_len" in d:
        _seq_len(pc, d, ("cutoff_len",))
    else:
        pc.memory["seq_len"] = 2048
        pc.notes_en.append("cutoff_len not set: LLaMA-Factory's default is 2048.")
        pc.notes_zh.append("未设置 cutoff_len：LLaMA-Factory 默认是 2048。")
    if _truthy(d.get("disable_gradient_checkpointing")):
        pc.memory["gradient_checkpointing"] = "none"
    else:
        pc.memory["gradient_checkpointing"] = "full"
        pc.notes_en.append("LLaMA-Factory enables gradient checkpointing unless disable_gradient_checkpointing: true.")
        pc.notes_zh.append("除非设置 disable_gradient_checkpointing: true，LLaMA-Factory 默认开启梯度检查点。")
    fa = d.get("flash_attn")
    if isinstance(fa, str) and fa.lower() == "disabled":
        pc.memory["flash_attention"] = False
    _model(pc, d)
