"""The calculators' and the config doctor's own sentences (calculators/), in Chinese and English: one area of the one
catalogue (calculators.i18n), looked up with ``t("key", lang, **values)``.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    # calculators/host_ram.py HostRamLoad.to_markdown
    "host_ram_load": {
        "zh": "加载时主机内存，每节点 {procs} 个进程 × {params} 参数：fp32 加载（transformers 4.x 不指定 `torch_dtype`）"
        "每进程一份 {c32} GiB，每节点 {n32} GiB{cap32}；16 位加载在 transformers < 4.43 为 {n16} GiB{cap16}；"
        "≥ 4.43 时 16 位加载整个节点共享一份映射的权重文件（{c16} GiB）。",
        "en": "Host RAM at load, {procs} processes per node × {params} parameters: {n32} GiB per node in fp32 (each "
        "process its own {c32} GiB copy; transformers 4.x without `torch_dtype`){cap32}; {n16} GiB in 16-bit before "
        "transformers 4.43{cap16}; from 4.43 a 16-bit load maps the checkpoint once per node ({c16} GiB, shared).",
    },
    "host_ram_load_per_process": {
        "zh": "加载时主机内存，{params} 参数：fp32 加载（transformers 4.x 不指定 `torch_dtype`）每个进程一份 {c32} GiB{cap32}，"
        "16 位加载每个进程 {c16} GiB{cap16}。每张卡一个进程时，fp32 加载和 transformers < 4.43 的 16 位加载按每节点的卡数相乘；"
        "≥ 4.43 的 16 位加载整个节点共享一份映射的权重文件。",
        "en": "Host RAM at load for {params} parameters: {c32} GiB per process in fp32 (transformers 4.x without "
        "`torch_dtype`){cap32}, {c16} GiB per process in 16-bit{cap16}. With one process per GPU, an fp32 load and a "
        "16-bit load before transformers 4.43 multiply by the GPUs per node; from 4.43 a 16-bit load maps the "
        "checkpoint once per node.",
    },
    "host_ram_over": {"zh": "（超过你的 {cap} GB）", "en": " (over your {cap} GB)"},
    "host_ram_within": {"zh": "（在你的 {cap} GB 之内）", "en": " (within your {cap} GB)"},
    # calculators/throughput.py Throughput.to_markdown
    "mfu.per_token": {
        "zh": "每个 token {factor} × {params} 参数 = {gflop} GFLOP",
        "en": "{factor} × {params} parameters = {gflop} GFLOP per token",
    },
    "mfu.attention": {"zh": " + 注意力 {tflop} GFLOP", "en": " + {tflop} GFLOP of attention"},
    "mfu.step": {
        "zh": "每步 {tokens} 个 token，即 {pflop} PFLOP，用时 {secs} 秒",
        "en": "{tokens} tokens per step, {pflop} PFLOP, in {secs} s",
    },
    "mfu.rate": {"zh": "每秒 {tps} 个 token", "en": "{tps} tokens/s"},
    "mfu.achieved": {
        "zh": "训练吞吐：{per_token}；{rate}，{gpus} 张卡，每卡 {tflops} TFLOP/s（每卡每秒 {tps_gpu} 个 token）。",
        "en": "Training throughput: {per_token}; {rate} on {gpus} is {tflops} TFLOP/s per GPU ({tps_gpu} "
        "tokens/s per GPU).",
    },
    "mfu.of_peak": {
        "zh": "这是 {gpu} {precision} 稠密峰值 {peak} TFLOP/s 的 **{mfu}**（MFU）。",
        "en": "That is **{mfu}** of the {gpu}'s {peak} TFLOP/s dense {precision} peak (MFU).",
    },
    "mfu.hfu": {
        "zh": "算上激活重计算多做的一次前向，硬件利用率（HFU）为 {hfu}。",
        "en": "Counting activation recomputation's extra forward, hardware FLOPs utilisation (HFU) is {hfu}.",
    },
    "mfu.implausible": {
        "zh": "超过 100% 不可能：每步实际的 token 数少于 batch × 长度（长度是上限、样本更短），或时间是每个 micro-batch 的。",
        "en": "Over 100% cannot be: a step trains fewer tokens than batch × length (the length is a maximum and samples "
        "are shorter), or the time is per micro-batch.",
    },
    "mfu.no_peak": {
        "zh": "没有 {gpu} 的数据手册峰值，算不出 MFU。",
        "en": "There is no data-sheet peak for the {gpu} here, so no MFU.",
    },
    "mfu.bf16_emulated": {
        "zh": "{gpu} 没有 bf16 Tensor Core：bf16 在这张卡上是模拟运行、很慢，请改用 fp16。",
        "en": "The {gpu} has no bf16 Tensor Cores: bf16 runs emulated and slowly there; use fp16.",
    },
    "mfu.days": {
        "zh": "按这个速度，{budget} 个 token 需要 {days} 天。",
        "en": "At this speed {budget} tokens take {days} days.",
    },
}

#: The config doctor's report (calculators/configs/models.py ConfigReport.to_markdown): "doctor.<key>".
DOCTOR: dict[str, dict[str, str]] = {
    "kind_deepspeed": {"zh": "DeepSpeed 配置", "en": "DeepSpeed config"},
    "kind_hf_training_args": {"zh": "Hugging Face TrainingArguments", "en": "Hugging Face TrainingArguments"},
    "kind_accelerate": {"zh": "Accelerate 配置", "en": "Accelerate config"},
    "kind_llamafactory": {"zh": "LLaMA-Factory 配置", "en": "LLaMA-Factory config"},
    "kind_ms_swift": {
        "zh": "ms-swift 命令（TrainingArguments 参数）",
        "en": "ms-swift command (TrainingArguments fields)",
    },
    "kind_none": {"zh": "配置", "en": "config"},
    "errors_verdict": {
        "zh": "❌ **{n} 个错误**：按现在的配置，训练会在启动时失败或不按你的预期运行。",
        "en": "❌ **{n} error(s)**: as written, this run fails at start-up or does not do what you expect.",
    },
    "warnings_verdict": {
        "zh": "⚠️ **没有错误，{n} 个警告**：能跑，但请看下面的问题。",
        "en": "⚠️ **No errors, {n} warning(s)**: it should start, but read these first.",
    },
    "no_problems": {"zh": "✅ **没有发现问题。**", "en": "✅ **No problems found.**"},
    "fits": {"zh": " 显存：约 {need} / {cap} GiB，放得下。", "en": " Memory: about {need} of {cap} GiB per GPU, fits."},
    "no_fit": {
        "zh": " 显存：约 {need} GiB，超出 {cap} GiB 的显卡，放不下。",
        "en": " Memory: about {need} GiB per GPU, more than the {cap} GiB card: does not fit.",
    },
    "errors": {"zh": "错误", "en": "Errors"},
    "warnings": {"zh": "警告", "en": "Warnings"},
    "notes": {"zh": "说明", "en": "Notes"},
    "where": {"zh": "（第 {line} 行，第 {column} 列）", "en": " (line {line}, column {column})"},
    "fix": {"zh": "  - 建议: {fix}", "en": "  - Fix: {fix}"},
    "memory_heading": {"zh": "### 每卡显存估算 ({model})", "en": "### Memory per GPU ({model})"},
    "part_head": {"zh": "| 部分 | GiB |", "en": "| Part | GiB |"},
    "total_row": {"zh": "| **合计** | **{total}** |", "en": "| **total** | **{total}** |"},
    "capacity_row": {"zh": "| {gpu} 容量 | {cap} |", "en": "| {gpu} capacity | {cap} |"},
    "cpu_row": {"zh": "| CPU 内存（offload，每节点） | {cpu} |", "en": "| CPU RAM (offload, per node) | {cpu} |"},
}

#: The diagnoser's report (calculators/diagnose/render.py): "diagnosis.<key>".
DIAGNOSIS: dict[str, dict[str, str]] = {
    "processes": {"zh": "进程数={n}", "en": "processes={n}"},
    "what_read": {"zh": "### 我读到的", "en": "### What I read"},
    "not_shown": {"zh": "- … {n} 项未列出", "en": "- … {n} more not shown"},
    "nothing_recognised": {"zh": "- （没有识别出的内容）", "en": "- (nothing recognised)"},
    "causes_heading": {"zh": "### 可能原因与修复", "en": "### Likely causes and fixes"},
    "likely": {"zh": "很可能", "en": "likely"},
    "possible": {"zh": "有可能", "en": "possible"},
    "why_and_fix": {"zh": "   - 原因: {because}\n   - 修复: {fix}", "en": "   - Why: {because}\n   - Fix: {fix}"},
    "no_problem": {"zh": "没有在这些内容里发现问题。", "en": "I found no problem in what I read."},
    "not_read": {"zh": "> 未能读取：{note}", "en": "> Not read: {note}"},
}
