"""The UI's words (ui/), in Chinese and English: areas of the one catalogue (calculators.i18n).

The tables keep their own short keys; the catalogue gives the panels' and charts' keys a prefix
(``factcheck.``, ``diagnose_panel.``, ``plot.``, ``label.``) so every key is written once.
"""

from __future__ import annotations

from .answers import KEY_NAMES

UI_TEXT: dict[str, dict[str, str]] = {
    "title": {"zh": "批次与显存助手", "en": "Batch & memory assistant"},
    "subtitle": {
        "zh": "回答 batch / 梯度累积 / 精度 / ZeRO 怎么设、要多少显存（DeepSpeed、HF Trainer、LLaMA-Factory）。数字来自确定性的计算器，不是模型猜的。",
        "en": "How to set batch / gradient accumulation / precision / ZeRO, and how much GPU memory it takes "
        "(DeepSpeed, HF Trainer, LLaMA-Factory). Numbers come from deterministic calculators, not from a model's guess.",
    },
    "lang_label": {"zh": "界面语言 / Language", "en": "Language / 界面语言"},
    "tab_chat": {"zh": "对话", "en": "Chat"},
    "tab_calc": {"zh": "计算器", "en": "Calculators"},
    "tab_knowledge": {"zh": "知识库", "en": "Knowledge"},
    # chat
    "chatbot": {"zh": "助手", "en": "Assistant"},
    # Short enough to show whole in a 390 px phone's input box (the longer one was cut mid-word, without "…").
    "chat_placeholder": {"zh": "问 batch、梯度累积、ZeRO 或显存……", "en": "Ask about batch, GA, ZeRO or memory…"},
    "question": {"zh": "你的问题", "en": "Your question"},
    "send": {"zh": "发送", "en": "Send"},
    "clear": {"zh": "清空对话", "en": "Clear chat"},
    "examples": {"zh": "示例问题", "en": "Example questions"},
    "stop": {"zh": "停止", "en": "Stop"},
    "stopped": {"zh": "已停止。", "en": "Stopped."},
    "enter_hint": {"zh": "Enter 发送 · Shift+Enter 换行", "en": "Enter to send · Shift+Enter for a new line"},
    "details": {"zh": "详细说明", "en": "Details"},
    "welcome": {
        "zh": "### 你好！\n问我 batch、梯度累积、精度、ZeRO/FSDP 怎么设，要多少显存，或者训练为什么挂了——"
        "可以直接粘贴报错、日志、配置和启动命令。数字来自确定性的计算器，每条结论都附来源。",
        "en": "### Hello!\nAsk how to set batch, gradient accumulation, precision or ZeRO/FSDP, how much GPU "
        "memory it takes, or why a run failed — paste the error, log, config and launch command as they "
        "are. Numbers come from deterministic calculators; every claim links its source.",
    },
    "feedback_wrong_number": {"zh": "数字不对", "en": "Wrong number"},
    "feedback_wrong_setup": {"zh": "读错了我的设置", "en": "Misread my setup"},
    "feedback_not_helpful": {"zh": "没回答我的问题", "en": "Did not answer my question"},
    "feedback_reason": {"zh": "反馈原因（可选）", "en": "Reason for your feedback (optional)"},
    "feedback_submit": {"zh": "提交原因", "en": "Send reason"},
    "feedback_thanks": {
        "zh": "已记录你的反馈，谢谢！可以在对话框下方补充原因。",
        "en": "Feedback recorded, thank you! You can add a reason in the box under the chat.",
    },
    "feedback_reason_thanks": {"zh": "已记录反馈原因，谢谢！", "en": "Reason recorded, thank you!"},
    "feedback_not_served": {
        "zh": "只能评价本会话中助手给出的回答。",
        "en": "Only an answer the assistant gave in this session can be rated.",
    },
    "feedback_no_target": {
        "zh": "请先点赞或点踩一条回答，再填写原因。",
        "en": "Like or dislike an answer first, then add a reason.",
    },
    "feedback_unwritable": {
        "zh": "⚠ 反馈无法保存：反馈文件 `{path}` 不可写（{err}）。请联系管理员。",
        "en": "⚠ Feedback could not be saved: the feedback file `{path}` is not writable ({err}). "
        "Please tell the administrator.",
    },
    "empty_question": {
        "zh": "请输入一个问题，例如：“增大梯度累积会增加显存吗？”",
        "en": "Please type a question, e.g. “Does a larger gradient_accumulation_steps use more memory?”",
    },
    "nonsense": {
        "zh": "没看懂这个问题。请用一句话描述你的训练设置或疑问，例如模型、显卡、micro batch 和梯度累积步数。",
        "en": "I could not make sense of that. Please describe your training setup or question in a sentence, "
        "e.g. model, GPU, micro batch and gradient accumulation steps.",
    },
    "internal_error": {
        "zh": "抱歉，助手出错了（{err}）。请换个说法再试，或使用“计算器”标签页。",
        "en": "Sorry, the assistant failed ({err}). Please rephrase, or use the Calculators tab.",
    },
    "thinking": {"zh": "正在检索知识卡片并调用计算器…", "en": "Searching the knowledge cards and running calculators…"},
    "tool_title": {"zh": "调用计算器：{name}", "en": "Calculator: {name}"},
    "arguments": {"zh": "参数", "en": "Arguments"},
    "result": {"zh": "结果", "en": "Result"},
    "corrections": {"zh": "纠正的常见误区", "en": "Misconceptions corrected"},
    # calculators
    "batch_header": {"zh": "有效批次（DeepSpeed / HF Trainer）", "en": "Effective batch (DeepSpeed / HF Trainer)"},
    "batch_help": {
        "zh": "留空的字段由 DeepSpeed 的规则推导：train_batch_size = micro × GA × world_size。",
        "en": "Empty fields are derived with DeepSpeed's rule: train_batch_size = micro × GA × world_size.",
    },
    "memory_header": {"zh": "每卡显存估算", "en": "Per-GPU memory estimate"},
    "run_batch": {"zh": "计算有效批次", "en": "Compute effective batch"},
    "run_memory": {"zh": "估算显存", "en": "Estimate memory"},
    "model_section": KEY_NAMES["model"],  # the field's one name heads its form section (shown capitalised)
    "hardware_section": {"zh": "硬件与并行", "en": "Hardware & parallelism"},
    "training_section": {"zh": "训练设置", "en": "Training setup"},
    "advanced_section": {
        "zh": "高级（自定义模型、LoRA、通信缓冲区）",
        "en": "Advanced (custom model, LoRA, communication buffers)",
    },
    "plots_header": {"zh": "图表", "en": "Plots"},
    "custom_model": {
        "zh": "（自定义：用下面的参数量 / config.json）",
        "en": "(custom: use num_params / config.json below)",
    },
    "preset_params": {"zh": "{name} · {total} 参数", "en": "{name} · {total} params"},
    "preset_params_moe": {
        "zh": "{name} · {total} 参数（激活 {active}）",
        "en": "{name} · {total} params ({active} active)",
    },
    "custom_gpu": {"zh": "（不指定 / 用 gpu_memory_gb）", "en": "(none / use gpu_memory_gb)"},
    "config_doctor_header": {"zh": "检查我的配置", "en": "Check my config"},
    "config_text": {
        "zh": "粘贴 DeepSpeed JSON / HF TrainingArguments / LLaMA-Factory YAML",
        "en": "Paste a DeepSpeed JSON / HF TrainingArguments / LLaMA-Factory YAML",
    },
    "config_gpu": {"zh": "显卡（可选）", "en": "GPU (optional)"},
    "run_check": {"zh": "检查配置", "en": "Check config"},
    "error_in_field": {"zh": "✘ 字段 `{field}` 有误：{msg}", "en": "✘ Problem with `{field}`: {msg}"},
    # knowledge
    "search": {"zh": "搜索知识卡片", "en": "Search the knowledge cards"},
    "search_placeholder": {"zh": "例如：梯度累积 显存", "en": "e.g. gradient accumulation memory"},
    "search_button": {"zh": "搜索", "en": "Search"},
    "show_all": {"zh": "显示全部", "en": "Show all"},
    "card_select": {"zh": "打开卡片", "en": "Open a card"},
    "cards_count": {"zh": "共 {n} 张卡片", "en": "{n} cards"},
    "search_count": {"zh": "“{q}” 的前 {n} 条结果", "en": "Top {n} results for “{q}”"},
    "no_results": {"zh": "没有找到相关卡片。", "en": "No matching cards."},
    "col_id": {"zh": "ID", "en": "ID"},
    "col_title": {"zh": "标题", "en": "Title"},
    "col_topics": {"zh": "主题", "en": "Topics"},
    "col_score": {"zh": "相关度", "en": "Score"},
    "misconceptions": {"zh": "常见误区", "en": "Misconceptions"},
    # ---- issue #15 (tabs): calculators, check / diagnose, knowledge
    "calc_live_help": {
        "zh": "改动任何一项，结果立即重新计算（单位 GiB）。",
        "en": "Results recalculate as you change any field (sizes in GiB).",
    },
    "batch_shared_help": {
        "zh": "使用上面表单里的 micro batch、梯度累积、world_size 和 seq_len；"
        "填了 train_batch_size 时按 DeepSpeed 的规则检查三者是否一致。",
        "en": "Uses the micro batch, gradient accumulation, world_size and seq_len of the form above; "
        "a train_batch_size you enter is checked against them with DeepSpeed's rule.",
    },
    "tab_check": {"zh": "检查 / 诊断", "en": "Check / diagnose"},
    "check_intro": {
        "zh": "粘贴配置检查它，或粘贴报错 / 日志来诊断原因。",
        "en": "Paste a config to check it, or an error / log to find the cause.",
    },
    "config_model": {"zh": "模型（用于显存估算）", "en": "Model (for the memory estimate)"},
    "config_model_from_text": {"zh": "（从配置里读 / 不估算显存）", "en": "(from the config / no memory estimate)"},
    "config_ws": {
        "zh": "GPU 数 world_size（0 = 从配置或启动命令读）",
        "en": "GPUs, world_size (0 = from the config or launch command)",
    },
    "config_marked": {"zh": "标出的行", "en": "Lines at fault"},
    "sev_error": {"zh": "错误", "en": "error"},
    "sev_warning": {"zh": "警告", "en": "warning"},
    "sev_info": {"zh": "说明", "en": "note"},
    "kb_open_hint": {"zh": "点击一行打开卡片。", "en": "Click a row to open its card."},
    "col_rank": {"zh": "#", "en": "#"},
    "col_sources": {"zh": "来源数", "en": "Sources"},
    # results of the calculators and the check tab
    "calc_failed": {
        "zh": "计算出错：{name}。请检查输入。",
        "en": "The calculation failed ({name}). Please check the inputs.",
    },
    "check_failed": {"zh": "检查失败，请检查输入。", "en": "The check failed; please check the input."},
    "row_formula": {"zh": "公式", "en": "formula"},
    "col_field": {"zh": "字段", "en": "field"},
    "col_value": {"zh": "值", "en": "value"},
    "derived": {"zh": "推导出的字段：", "en": "Derived: "},
    "what_if_head": {
        "zh": "| 如果… | 有效批次 | 每卡显存 |",
        "en": "| What if… | effective batch | per-GPU memory |",
    },
    "the_gpu": {"zh": "显卡", "en": "the GPU"},
    "no_fit_head": {
        "zh": "**✘ 放不下：每卡约 {total}，{gpu} 只有 {cap}（{over}）。**",
        "en": "**✘ Does not fit: about {total} per GPU; {gpu} has {cap} ({over}).**",
    },
    "nearest_fits_head": {"zh": "| 改动 | {per_gpu} | 剩余 |", "en": "| change | {per_gpu} | spare |"},
    "nearest_fits_intro": {"zh": "最接近且能放下的设置：", "en": "The nearest settings that fit:"},
}

# Form labels of the calculators tab: the real config names stay visible so users can copy them. A field the chat
# also names (its setup line: answers.KEY_NAMES, the one owner of a field's name) writes that name as {name}.
# In the catalogue as "label.<field>"; calculators.i18n.label() fills in {name}.
FIELD_LABELS: dict[str, dict[str, str]] = {
    "model": {"zh": "{name}预设", "en": "{name} preset"},
    "num_params": {
        "zh": "{name} num_params（如 7e9；0 = 用预设）",
        "en": "num_params (model {name}, e.g. 7e9; 0 = use the preset)",
    },
    "hf_config": {"zh": "config.json（可选，粘贴 JSON）", "en": "config.json (optional, paste JSON)"},
    "hidden_size": {"zh": "hidden_size", "en": "hidden_size"},
    "num_layers": {"zh": "num_layers（层数）", "en": "num_layers"},
    "num_attention_heads": {"zh": "num_attention_heads（注意力头数）", "en": "num_attention_heads"},
    "vocab_size": {"zh": "vocab_size（词表大小）", "en": "vocab_size"},
    "gpu": {"zh": "{name} 预设", "en": "{name} preset"},
    "gpu_memory_gb": {
        "zh": "{name} gpu_memory_gb（GiB，0 = 用预设）",
        "en": "gpu_memory_gb ({name} in GiB, 0 = use the preset)",
    },
    "precision": {"zh": "{name} precision", "en": "{name}"},
    "optimizer": {"zh": "优化器 optimizer", "en": "optimizer"},
    "adamw_kernel": {
        "zh": "{name}（fused：HF Trainer 在 torch ≥ 2.8 的默认、DeepSpeed；foreach：torch.optim.AdamW 默认，优化器步多一份二阶矩大小的临时缓冲）",
        "en": "{name} (fused: HF Trainer's default on torch ≥ 2.8, DeepSpeed; foreach: torch.optim.AdamW's default, "
        "one more second-moment-sized buffer at the step)",
    },
    "zero_stage": {"zh": "{name} 阶段 zero_stage", "en": "zero_stage ({name} stage)"},
    "world_size": {"zh": "数据并行{name} world_size", "en": "world_size (data-parallel {name})"},
    "num_nodes": {"zh": "{name}数 num_nodes", "en": "num_nodes (number of {name})"},
    "offload_optimizer": {"zh": "offload_optimizer（{name} 到 CPU）", "en": "offload_optimizer ({name} to CPU)"},
    "offload_param": {
        "zh": "offload_param（{name} 到 CPU，需 ZeRO-3）",
        "en": "offload_param ({name} to CPU, needs ZeRO-3)",
    },
    "pipeline_parallel_size": {
        "zh": "流水线并行段数 pipeline_parallel_size（{name}）",
        "en": "pipeline_parallel_size ({name})",
    },
    "finetune": {"zh": "微调{name} finetune", "en": "finetune ({name})"},
    "lora_rank": {"zh": "lora_rank", "en": "lora_rank"},
    "lora_target_modules": {"zh": "lora_target_modules", "en": "lora_target_modules"},
    "train_micro_batch_size_per_gpu": {
        "zh": "微批次 train_micro_batch_size_per_gpu（{name}）",
        "en": "train_micro_batch_size_per_gpu ({name})",
    },
    "gradient_accumulation_steps": {
        "zh": "梯度累积步数 gradient_accumulation_steps（{name}）",
        "en": "gradient_accumulation_steps ({name})",
    },
    "seq_len": {"zh": "{name} seq_len", "en": "seq_len ({name})"},
    "gradient_checkpointing": {"zh": "{name} gradient_checkpointing", "en": "gradient_checkpointing ({name})"},
    "flash_attention": {"zh": "flash_attention（{name} / SDPA）", "en": "flash_attention ({name} / SDPA)"},
    "cuda_context_gb": {"zh": "CUDA 上下文 cuda_context_gb（GiB）", "en": "cuda_context_gb (GiB)"},
    "reduce_bucket_size": {"zh": "reduce_bucket_size（元素数）", "en": "reduce_bucket_size (elements)"},
    "allgather_bucket_size": {"zh": "allgather_bucket_size（元素数）", "en": "allgather_bucket_size (elements)"},
    "overlap_comm": {"zh": "overlap_comm", "en": "overlap_comm"},
    "fsdp": {"zh": "{name} 分片策略", "en": "{name} sharding strategy"},
    "fsdp_cpu_offload": {"zh": "FSDP CPU offload", "en": "FSDP CPU offload"},
    "fsdp_sync_each_batch": {"zh": "FSDP 每个微批次同步梯度", "en": "FSDP sync gradients every micro-batch"},
    "fsdp_frozen_in_trainable_units": {
        "zh": "FSDP 包装单元内冻结权重与 LoRA 混合（use_orig_params=True）",
        "en": "FSDP units mix frozen weights and LoRA (use_orig_params=True)",
    },
    "lora_int8_base": {
        "zh": "LoRA 的基座按 8 位加载（load_in_8bit / quantization_bit 8）",
        "en": "LoRA on an 8-bit base (load_in_8bit / quantization_bit 8)",
    },
    "qlora_double_quant": {
        "zh": "QLoRA 双重量化 bnb_4bit_use_double_quant",
        "en": "QLoRA double quantisation (bnb_4bit_use_double_quant)",
    },
    "qlora_lm_head_4bit": {
        "zh": "QLoRA 的 LM head 也量化为 4 位（LitGPT）",
        "en": "QLoRA LM head quantised to 4 bits too (LitGPT)",
    },
    "images_per_sample": {"zh": "{name}（视觉语言模型）", "en": "{name} (vision-language models)"},
    "visual_tokens_in_seq_len": {
        "zh": "序列长度已含视觉 token（cutoff_len / max_length）",
        "en": "Sequence length already counts the visual tokens (cutoff_len / max_length)",
    },
    "image_height": {"zh": "{name}（像素）", "en": "{name} (px)"},
    "image_width": {"zh": "{name}（像素）", "en": "{name} (px)"},
    "image_max_pixels": {
        "zh": "Qwen2-VL 的 {name}（空或 0：transformers 默认 28·28·1280）",
        "en": "Qwen2-VL {name} (empty or 0: transformers default 28·28·1280)",
    },
    "freeze_vision_tower": {
        "zh": "{name}（freeze_vision_tower / freeze_vit）",
        "en": "{name} (freeze_vision_tower / freeze_vit)",
    },
    "freeze_projector": {
        "zh": "冻结投影层（freeze_multi_modal_projector / freeze_aligner）",
        "en": "Freeze the projector (freeze_multi_modal_projector / freeze_aligner)",
    },
    "zero_grad_set_to_none": {
        "zh": "zero_grad(set_to_none=True)（PyTorch ≥ 2.0 默认）",
        "en": "zero_grad(set_to_none=True) (PyTorch ≥ 2.0 default)",
    },
    "loss_implementation": {
        "zh": "损失实现（hf / 保留输出 / 分块）",
        "en": "Loss implementation (hf / keep outputs / chunked)",
    },
    "allocator_slack_fraction": {
        "zh": "缓存分配器预留比例（nvidia-smi 比峰值多出的部分）",
        "en": "Allocator reserve fraction (what nvidia-smi shows above the peak)",
    },
    "bitsandbytes_before_0_43_2": {
        "zh": "bitsandbytes < 0.43.2（4 位层保留输入）",
        "en": "bitsandbytes < 0.43.2 (4-bit layers keep their input)",
    },
    "optimizer_in_backward": {
        "zh": "反向中执行优化器步（torchtune optimizer_in_bwd，仅 GA=1）",
        "en": "Optimizer step in backward (torchtune optimizer_in_bwd, GA=1 only)",
    },
    "activation_offloading": {
        "zh": "激活卸载到 CPU（torchtune enable_activation_offloading）",
        "en": "Activation offloading to CPU (torchtune enable_activation_offloading)",
    },
    "train_batch_size": {
        "zh": "{name} train_batch_size（0 或留空 = 推导）",
        "en": "train_batch_size ({name}; 0 or empty = derive)",
    },
    "dataset_size": {"zh": "数据集样本数 dataset_size（0 = 不填）", "en": "dataset_size (0 = not given)"},
}

# The "Check a chatbot's answer" box in the Check / diagnose tab (ui/factcheck_box.py): "factcheck.<key>".
FACTCHECK_BOX: dict[str, dict[str, str]] = {
    "header": {"zh": "核查一段聊天机器人的回答", "en": "Check a chatbot's answer"},
    "text": {
        "zh": "粘贴关于批次、梯度累积、精度或显存的回答（中文或英文）",
        "en": "Paste an answer about batch size, gradient accumulation, precision or memory (zh or en)",
    },
    "button": {"zh": "核查", "en": "Check answer"},
    "empty": {"zh": "请先粘贴要核查的回答。", "en": "Paste the answer to check first."},
    "failed": {"zh": "核查失败，请检查输入。", "en": "The check failed; please check the input."},
}

# The "Paste an error or log" box in the Check / diagnose tab (ui/diagnose_panel.py): "diagnose_panel.<key>".
DIAGNOSE_PANEL: dict[str, dict[str, str]] = {
    "header": {"zh": "粘贴报错或日志", "en": "Paste an error or log"},
    "box": {
        "zh": "粘贴 CUDA OOM 报错、DeepSpeed / HF 报错、启动命令、nvidia-smi 输出或训练日志",
        "en": "Paste a CUDA OOM message, DeepSpeed / HF error, launch command, nvidia-smi output or training log",
    },
    "button": {"zh": "诊断", "en": "Diagnose"},
    "empty": {
        "zh": "ℹ 请先粘贴报错、日志、命令或 nvidia-smi 输出。",
        "en": "ℹ Paste an error, log, command or nvidia-smi output first.",
    },
    "failed": {
        "zh": "✘ 诊断失败（{name}）。请检查粘贴的内容。",
        "en": "✘ Diagnosis failed ({name}). Please check the paste.",
    },
}

# The charts' own words (ui/plots.py): "plot.<key>"; the categories, the total and the capacity are named by
# calculators.memory_table.
PLOT_TEXT: dict[str, dict[str, str]] = {
    "breakdown_title": {"zh": "每卡显存构成", "en": "Per-GPU memory breakdown"},
    "chart_title": {"zh": "每卡显存", "en": "Memory per GPU"},
    "micro_title": {"zh": "显存 vs 微批次（train_micro_batch_size_per_gpu）", "en": "Memory vs micro batch"},
    "ga_title": {
        "zh": "显存 vs 梯度累积步数（GA ≥ 2 时是平的）",
        "en": "Memory vs gradient accumulation steps (flat from GA = 2)",
    },
    "current": {"zh": "当前设置", "en": "your setting"},
    "not_together": {"zh": "梯度与激活不同时达到峰值（GA=1）", "en": "gradients | activations: not at once (GA=1)"},
    "off_scale": {"zh": "超出坐标范围", "en": "off the scale"},
    "unknown_act": {"zh": "激活未知（仅给了参数量）", "en": "activations unknown (only num_params given)"},
}
