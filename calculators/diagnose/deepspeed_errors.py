"""DeepSpeed's batch assertion and the DeepSpeed / HF Trainer / Accelerate configuration errors, by their exact text.

* ``deepspeed/runtime/config.py::_batch_assertion``: ``Check batch related parameters. train_batch_size is not
  equal to micro_batch_per_gpu * gradient_acc_step * world_size 256 != 4 * 8 * 1``. Before DeepSpeed PR #1734
  (Jan 2022) the numbers followed ``world_size`` without a space (``world_size2 != 1 * 1 * 1``).
* ``transformers`` (``integrations/deepspeed.py::trainer_config_finalize``): ``Please correct the following
  DeepSpeed config values that mismatch TrainingArguments values:`` followed by ``- ds K=V vs hf K=V`` lines.
* DeepSpeed: ``bfloat16 and fp16 modes cannot be simultaneously enabled``; ``Either train_batch_size or
  train_micro_batch_size_per_gpu needs to be provided``; transformers: ``At most one of fp16 and bf16 can be True``;
  DeepSpeed fp16: ``Current loss scale already at minimum - cannot decrease scale anymore``; torch AMP: ``Attempting
  to unscale FP16 gradients.``; DeepSpeed: ``You are using ZeRO-Offload with a client provided optimizer``.
"""

from __future__ import annotations

import re
from typing import Any

from ..batch import BatchConfigError, resolve_batch
from ..errors import CalculatorError
from ._text import flex, line_at, safe
from .models import Artifact, Cause

BATCH = flex(
    r"train_batch_size is not equal to micro_batch_per_gpu \* gradient_acc_step \* world_size(\s*)(\d{1,12}) != (\d{1,12}) \* (\d{1,12}) \* (\d{1,12})"
)
MISMATCH = flex(r"Please correct the following DeepSpeed config values that mismatch TrainingArguments values:")
_MISMATCH_LINE = re.compile(r"-\s*ds\s+([\w.]+)\s*=\s*([^\n]*?)\s+vs\s+hf\s+([^=\n]+?)\s*=\s*([^\n]*)")

#: Exact texts of other configuration errors → (id, framework, en title, zh title, en fix, zh fix, cards).
KNOWN: list[tuple[re.Pattern[str], str, str, str, str, str, str, list[str]]] = [
    (
        flex(r"bfloat16 and fp16 modes cannot be simultaneously enabled"),
        "config.fp16_bf16_both",
        "deepspeed",
        "fp16 and bf16 are both enabled in the DeepSpeed config",
        "DeepSpeed 配置里同时开启了 fp16 和 bf16",
        'Enable exactly one: `"bf16": {"enabled": true}` on Ampere or newer GPUs, otherwise fp16; with the HF Trainer set both '
        'to "auto" and pass only one of `--bf16` / `--fp16`.',
        '只开启一个：Ampere 及更新的 GPU 用 `"bf16": {"enabled": true}`，否则用 fp16；配合 HF Trainer 时两者都设为 "auto"，'
        "命令行只传 `--bf16` 或 `--fp16` 之一。",
        ["fp16-vs-bf16-stability", "deepspeed-hf-auto-values"],
    ),
    (
        flex(r"At most one of fp16 and bf16 can be True"),
        "config.fp16_bf16_both",
        "transformers",
        "fp16 and bf16 are both set in TrainingArguments",
        "TrainingArguments 同时设置了 fp16 和 bf16",
        "Pass only one of `--bf16` / `--fp16` (bf16 on Ampere or newer).",
        "只传 `--bf16` 或 `--fp16` 之一（Ampere 及更新的 GPU 用 bf16）。",
        ["fp16-vs-bf16-stability"],
    ),
    (
        flex(r"Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"),
        "config.batch_missing",
        "deepspeed",
        "The DeepSpeed config gives neither train_batch_size nor train_micro_batch_size_per_gpu",
        "DeepSpeed 配置既没有 train_batch_size 也没有 train_micro_batch_size_per_gpu",
        'Add `"train_micro_batch_size_per_gpu"` (or `"auto"` with the HF Trainer / Accelerate); gradient_accumulation_steps alone is not enough.',
        '添加 `"train_micro_batch_size_per_gpu"`（配合 HF Trainer / Accelerate 时可设为 `"auto"`）；只给 gradient_accumulation_steps 不够。',
        ["deepspeed-batch-derivation", "deepspeed-hf-auto-values"],
    ),
    (
        flex(r"Current loss scale already at minimum - cannot decrease scale anymore"),
        "config.fp16_loss_scale_min",
        "deepspeed",
        "fp16 loss scale hit its minimum: gradients overflow on every step",
        "fp16 loss scale 已降到最小：每一步梯度都溢出",
        'Train in bf16 (`"bf16": {"enabled": true}`, Ampere or newer) or fp32; if you must use fp16, lower the learning rate, '
        "check the data for bad samples, and check the model was not trained in bf16 (T5, many LLMs overflow in fp16).",
        '改用 bf16（`"bf16": {"enabled": true}`，Ampere 及更新 GPU）或 fp32；必须用 fp16 时降低学习率、检查数据中的异常样本，并确认模型'
        "不是用 bf16 预训练的（T5 和很多大模型在 fp16 下会溢出）。",
        ["fp16-vs-bf16-stability"],
    ),
    (
        flex(r"Attempting to unscale FP16 gradients"),
        "config.fp16_weights_with_amp",
        "pytorch",
        "fp16 mixed precision on weights that are already fp16",
        "权重本身已是 fp16 时又开启了 fp16 混合精度",
        "AMP's GradScaler keeps fp32 master weights: load the model in fp32 (or in bf16 and train with `--bf16`), or with LoRA/PEFT "
        "cast the trainable parameters to fp32; do not combine `torch_dtype=torch.float16` with `--fp16`.",
        "AMP 的 GradScaler 需要 fp32 主权重：以 fp32 加载模型（或以 bf16 加载并用 `--bf16` 训练），LoRA/PEFT 时把可训练参数转成 fp32；"
        "不要把 `torch_dtype=torch.float16` 与 `--fp16` 同时使用。",
        ["mixed-precision-bytes-per-param", "fp16-vs-bf16-stability"],
    ),
    (
        flex(r"You are using ZeRO-Offload with a client provided optimizer"),
        "config.offload_client_optimizer",
        "deepspeed",
        "ZeRO-Offload with an optimizer created outside DeepSpeed",
        "ZeRO-Offload 配合了 DeepSpeed 之外创建的优化器",
        'Declare the optimizer in the DeepSpeed config (`"optimizer": {"type": "AdamW", …}`) or pass '
        '`deepspeed.ops.adam.DeepSpeedCPUAdam`; only if you accept the slowdown set `"zero_force_ds_cpu_optimizer": false`.',
        '在 DeepSpeed 配置中声明优化器（`"optimizer": {"type": "AdamW", …}`）或传入 `deepspeed.ops.adam.DeepSpeedCPUAdam`；'
        '确实接受变慢时才设置 `"zero_force_ds_cpu_optimizer": false`。',
        ["zero-offload-cpu"],
    ),
    (
        flex(r"Some keys are not used by the HfArgumentParser"),
        "config.unused_keys",
        "transformers",
        "The YAML/JSON has keys this command does not accept",
        "YAML/JSON 里有当前命令不接受的键",
        "Training keys (learning_rate, per_device_train_batch_size, …) belong to `llamafactory-cli train`; chat/webchat/export/eval "
        "take a YAML with only model/adapter/template keys. A single unknown key usually comes from a newer version's example "
        "(upgrade LLaMA-Factory/transformers) or a typo.",
        "训练相关的键（learning_rate、per_device_train_batch_size 等）只属于 `llamafactory-cli train`；chat/webchat/export/eval 需要只含 "
        "模型/适配器/模板等键的 YAML。只有一个未知键时通常是用了新版本的示例（升级 LLaMA-Factory/transformers）或拼写错误。",
        [],
    ),
    (
        flex(r"Found .?optimizer.? configured in the DeepSpeed config, but no .?scheduler"),
        "config.ds_optimizer_without_scheduler",
        "transformers",
        "The DeepSpeed config defines an optimizer but no scheduler",
        "DeepSpeed 配置定义了优化器却没有调度器",
        'Add a `"scheduler"` section (e.g. `WarmupDecayLR` with "auto" values) or remove the `"optimizer"` section so the Trainer '
        "creates both; newer transformers accept a DeepSpeed optimizer with the Trainer's scheduler (huggingface/transformers#24359).",
        '添加 `"scheduler"` 段（如 `WarmupDecayLR`，参数设为 "auto"），或删除 `"optimizer"` 段让 Trainer 同时创建二者；较新的 '
        "transformers 已支持 DeepSpeed 优化器配合 Trainer 的调度器（huggingface/transformers#24359）。",
        ["deepspeed-hf-auto-values"],
    ),
    (
        flex(r"Duplicate keys in DeepSpeed config"),
        "config.duplicate_keys",
        "deepspeed",
        "The DeepSpeed JSON repeats a key",
        "DeepSpeed JSON 中有重复的键",
        "Keep each key once (DeepSpeed refuses duplicates; plain json.load would silently keep the last one).",
        "每个键只保留一次（DeepSpeed 拒绝重复键；普通 json.load 会悄悄只保留最后一个）。",
        [],
    ),
    (
        flex(r"NVMe offloading is available only with ZeRO stage 3"),
        "config.nvme_needs_zero3",
        "deepspeed",
        "NVMe offload requires ZeRO stage 3",
        "NVMe offload 需要 ZeRO stage 3",
        'Use `"stage": 3` with NVMe offload, or offload to `"cpu"` with stage 1/2.',
        'NVMe offload 配合 `"stage": 3` 使用，或在 stage 1/2 下 offload 到 `"cpu"`。',
        ["zero-offload-cpu"],
    ),
]

_KEY_LIST = re.compile(r"\[([^\[\]\n]{0,3000})\]?")


def read(text: str) -> list[Artifact]:
    """The batch assertion, the HF/DeepSpeed mismatch list, and the other known configuration errors."""
    out: list[Artifact] = []
    for m in BATCH.finditer(text):
        tb, mb, ga, ws = (int(m.group(i)) for i in (2, 3, 4, 5))
        old = m.group(1) == ""
        out.append(
            Artifact(
                kind="deepspeed_batch_assert",
                start=text.rfind("\n", 0, m.start()) + 1,
                end=m.end(),
                key_line=line_at(text, m.start()),
                fields={
                    "train_batch_size": tb,
                    "train_micro_batch_size_per_gpu": mb,
                    "gradient_accumulation_steps": ga,
                    "ds_world_size_seen": ws,
                },
                framework="deepspeed",
                version_hint="DeepSpeed wording before PR #1734 (Jan 2022; no space before the numbers)"
                if old
                else "DeepSpeed wording since PR #1734 (Jan 2022)",
            )
        )
    for m in MISMATCH.finditer(text):
        rows = []
        pos = m.end()
        for lm in _MISMATCH_LINE.finditer(text, pos, min(len(text), pos + 3000)):
            if text[pos : lm.start()].strip():
                break
            rows.append(
                {
                    "ds_key": lm.group(1),
                    "ds_value": lm.group(2).strip(),
                    "hf_key": lm.group(3).strip(),
                    "hf_value": lm.group(4).strip(),
                }
            )
            pos = lm.end()
        out.append(
            Artifact(
                kind="config_error",
                start=text.rfind("\n", 0, m.start()) + 1,
                end=pos,
                key_line=line_at(text, m.start()),
                fields={"config_error": "hf.ds_config_mismatch", "mismatches": rows},
                framework="transformers",
                version_hint="transformers >= 4.7 (trainer_config_finalize)",
            )
        )
    for pattern, cid, fw, *_ in KNOWN:
        for m in pattern.finditer(text):
            fields: dict[str, Any] = {"config_error": cid}
            if cid == "config.unused_keys":
                bracket = text.find("[", m.end(), m.end() + 10)
                keys = _KEY_LIST.match(text, bracket) if bracket >= 0 else None
                if keys:
                    fields["config_unused_keys"] = [
                        k.strip(" '\"") for k in keys.group(1).split(",") if k.strip(" '\"")
                    ][:40]
            out.append(
                Artifact(
                    kind="config_error",
                    start=text.rfind("\n", 0, m.start()) + 1,
                    end=m.end(),
                    key_line=line_at(text, m.start()),
                    fields=fields,
                    framework=fw,
                )
            )
    return out


def _launch_world(others: list[Artifact]) -> tuple[int | None, Artifact | None]:
    for a in others:
        if a.kind == "launch_command" and isinstance(a.fields.get("world_size"), int):
            return a.fields["world_size"], a
    return None, None


def _batch_causes(a: Artifact, others: list[Artifact]) -> list[Cause]:
    f = a.fields
    tb, mb, ga, ws = (
        f["train_batch_size"],
        f["train_micro_batch_size_per_gpu"],
        f["gradient_accumulation_steps"],
        f["ds_world_size_seen"],
    )
    try:
        resolve_batch(
            train_batch_size=tb, train_micro_batch_size_per_gpu=mb, gradient_accumulation_steps=ga, world_size=ws
        )
        opts_en = opts_zh = ""
    except BatchConfigError as err:
        opts_en, opts_zh = err.en, err.zh
    except CalculatorError:
        opts_en = opts_zh = ""
    out: list[Cause] = []
    launched, launch = _launch_world(others)
    implied = tb // (mb * ga) if mb * ga and tb % (mb * ga) == 0 else None
    cards = ["deepspeed-batch-assertion-error", "deepspeed-batch-derivation", "deepspeed-hf-auto-values"]
    if launched is not None and launched != ws:
        how = launch.fields.get("launcher", "launcher") if launch else "launcher"
        out.append(
            Cause(
                id="ds.world_size_mismatch",
                likelihood="likely",
                title_en=f"DeepSpeed saw world_size={ws}, but the launch starts {launched} processes",
                title_zh=f"DeepSpeed 看到的 world_size={ws}，而启动命令启动了 {launched} 个进程",
                because_en=f"The assertion says {tb} != {mb} × {ga} × {ws}; your {safe(how)} command implies world_size={launched}. "
                "DeepSpeed takes world_size from torch.distributed when the engine is created: a process that was not "
                "started by a distributed launcher (or initialised distributed too late) counts as 1.",
                because_zh=f"断言显示 {tb} != {mb} × {ga} × {ws}；你的 {safe(how)} 命令对应 world_size={launched}。DeepSpeed 在创建引擎时从 "
                "torch.distributed 取 world_size：不是由分布式启动器启动（或分布式初始化太晚）的进程只算 1。",
                fix_en=f"Make the processes join one group (launch with `deepspeed`/`torchrun`/`accelerate launch`, not `python`; let the "
                f"Trainer initialise distributed before the engine), or make the numbers agree for {ws} process(es). Safest with the "
                'HF Trainer: set train_batch_size, train_micro_batch_size_per_gpu and gradient_accumulation_steps to "auto". '
                + opts_en,
                fix_zh=f"让各进程加入同一个进程组（用 `deepspeed`/`torchrun`/`accelerate launch` 启动而不是 `python`；让 Trainer 在创建引擎前初始化"
                f'分布式），或者按 {ws} 个进程让数字自洽。配合 HF Trainer 最稳妥：三个 batch 字段都设为 "auto"。'
                + opts_zh,
                card_ids=cards,
            )
        )
    elif ws == 1 and implied and implied > 1:
        out.append(
            Cause(
                id="ds.world_size_mismatch",
                likelihood="likely",
                title_en=f"The config was written for {implied} GPUs but DeepSpeed saw one process",
                title_zh=f"配置按 {implied} 张卡写的，但 DeepSpeed 只看到 1 个进程",
                because_en=f"{tb} = {mb} × {ga} × {implied}: the numbers fit {implied} data-parallel processes, and DeepSpeed saw "
                "world_size=1. Usually the script was started with `python` instead of a distributed launcher, or "
                "each process runs alone (distributed not initialised before deepspeed.initialize).",
                because_zh=f"{tb} = {mb} × {ga} × {implied}：这些数字对应 {implied} 个数据并行进程，但 DeepSpeed 看到的是 world_size=1。"
                "通常是用 `python` 而不是分布式启动器启动了脚本，或者各进程各自为政（deepspeed.initialize 之前没有初始化分布式）。",
                fix_en=f"Launch with `deepspeed --num_gpus {implied}` or `torchrun --nproc_per_node {implied}` (or `accelerate launch "
                f'--num_processes {implied}`); or set train_batch_size to "auto" / to {mb * ga} for one GPU.',
                fix_zh=f"用 `deepspeed --num_gpus {implied}` 或 `torchrun --nproc_per_node {implied}`（或 `accelerate launch --num_processes "
                f'{implied}`）启动；或把 train_batch_size 设为 "auto"，单卡时设为 {mb * ga}。',
                card_ids=cards,
            )
        )
    else:
        out.append(
            Cause(
                id="ds.batch_arithmetic",
                likelihood="likely",
                title_en="train_batch_size does not equal micro × GA × world_size",
                title_zh="train_batch_size 不等于 micro × GA × world_size",
                because_en=f"DeepSpeed checks {tb} == {mb} × {ga} × {ws} = {mb * ga * ws}; it is a consistency check, not a memory problem.",
                because_zh=f"DeepSpeed 检查 {tb} == {mb} × {ga} × {ws} = {mb * ga * ws}；这是一致性检查，与显存无关。",
                fix_en=(opts_en or f"Set train_batch_size = {mb * ga * ws}.")
                + ' With the HF Trainer / Accelerate, "auto" avoids this.',
                fix_zh=(opts_zh or f"把 train_batch_size 设为 {mb * ga * ws}。")
                + '配合 HF Trainer / Accelerate 时用 "auto" 可避免。',
                card_ids=cards,
            )
        )
    return out


def _mismatch_causes(a: Artifact) -> list[Cause]:
    rows = a.fields.get("mismatches") or []
    same = [r for r in rows if r["ds_value"].strip("'\"") == r["hf_value"].strip("'\"")]
    out: list[Cause] = []
    if same:
        keys = ", ".join(safe(r["ds_key"], 40) for r in same[:3])
        out.append(
            Cause(
                id="hf.ds_value_is_string",
                likelihood="likely",
                title_en="The values look equal: the DeepSpeed JSON has a quoted number",
                title_zh="两边数值看起来相同：DeepSpeed JSON 里把数字写成了字符串",
                because_en=f'For {keys} both sides print the same value, so the DeepSpeed side is the string ("8") rather than the '
                "number 8; the comparison is by value and type.",
                because_zh=f'{keys} 两边打印的值相同，说明 DeepSpeed 一侧是字符串（"8"）而不是数字 8；比较时类型也算。',
                fix_en='Remove the quotes around the number in the DeepSpeed JSON, or set it to "auto".',
                fix_zh='去掉 DeepSpeed JSON 中数字两边的引号，或改成 "auto"。',
                card_ids=["deepspeed-hf-auto-values"],
            )
        )
    diff = [r for r in rows if r not in same]
    if diff or not rows:
        shown = "; ".join(
            f"{safe(r['ds_key'], 40)}: ds {safe(r['ds_value'], 20)} vs hf {safe(r['hf_value'], 20)}" for r in diff[:4]
        )
        out.append(
            Cause(
                id="hf.ds_config_mismatch",
                likelihood="likely",
                title_en="DeepSpeed config values disagree with TrainingArguments",
                title_zh="DeepSpeed 配置与 TrainingArguments 的取值不一致",
                because_en='The HF Trainer compares every non-"auto" DeepSpeed value with its own argument'
                + (f": {shown}." if shown else "."),
                because_zh='HF Trainer 会把每个非 "auto" 的 DeepSpeed 值与自己的参数比较'
                + (f"：{shown}。" if shown else "。"),
                fix_en='Set these keys to "auto" in the DeepSpeed JSON (the Trainer then fills them from its arguments), or make both '
                "sides equal. train_batch_size is computed as per_device × GA × world_size.",
                fix_zh='在 DeepSpeed JSON 中把这些键设为 "auto"（由 Trainer 按自己的参数填入），或让两边一致。train_batch_size 按 '
                "per_device × GA × world_size 计算。",
                card_ids=["deepspeed-hf-auto-values", "deepspeed-batch-derivation"],
            )
        )
    return out


def causes(a: Artifact, others: list[Artifact]) -> list[Cause]:
    """Causes for one batch assertion or configuration error."""
    if a.kind == "deepspeed_batch_assert":
        return _batch_causes(a, others)
    cid = a.fields.get("config_error")
    if cid == "hf.ds_config_mismatch":
        return _mismatch_causes(a)
    for _pattern, kid, _fw, t_en, t_zh, fix_en, fix_zh, cards in KNOWN:
        if kid == cid:
            keys = a.fields.get("config_unused_keys")
            extra_en = extra_zh = ""
            if keys:
                shown = ", ".join(safe(k, 40) for k in keys[:8]) + (" …" if len(keys) > 8 else "")
                training = {
                    "learning_rate",
                    "per_device_train_batch_size",
                    "gradient_accumulation_steps",
                    "num_train_epochs",
                    "output_dir",
                    "do_train",
                    "do_predict",
                    "bf16",
                    "fp16",
                } & set(keys)
                extra_en = f" Unused: {shown}." + (
                    " These are training arguments: the YAML was given to a command that does not train."
                    if len(training) >= 2
                    else ""
                )
                extra_zh = f" 未使用的键：{shown}。" + (
                    "这些是训练参数：这个 YAML 被交给了不做训练的命令。" if len(training) >= 2 else ""
                )
            return [
                Cause(
                    id=cid,
                    likelihood="likely",
                    title_en=t_en,
                    title_zh=t_zh,
                    because_en=f'The error says: "{safe(a.key_line, 120)}".' + extra_en,
                    because_zh=f'报错原文："{safe(a.key_line, 120)}"。' + extra_zh,
                    fix_en=fix_en,
                    fix_zh=fix_zh,
                    card_ids=cards,
                )
            ]
    return []
