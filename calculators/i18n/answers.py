"""The answer engine's sentences (rag/), in Chinese and English: one area of the one catalogue (calculators.i18n).

Look a sentence up with ``calculators.i18n.t("key", lang, **values)``; a field's name with ``key_name(field, lang)``.
"""

from __future__ import annotations

ANSWER_TEXT: dict[str, dict[str, str]] = {
    # refusals
    "empty": {
        "zh": "请输入一个问题，例如：“gradient_accumulation_steps 增大会增加显存吗？”",
        "en": "Please type a question, for example: “Does raising gradient_accumulation_steps increase GPU memory?”",
    },
    "too_long": {
        "zh": "消息太长（{n} 个字符，上限 {max}）。请只保留问题、关键报错行和配置。",
        "en": "The message is too long ({n} characters, limit {max}). Keep the question, the key error lines and the config.",
    },
    "off_topic": {
        "zh": "这个问题超出了我能回答的范围。我只回答训练配置的问题：batch size、梯度累积、精度、ZeRO/FSDP 分片、需要多少显存，以及训练为什么失败。例如：“7B 模型 LoRA 在 3090 上 micro batch 能开多大？”",
        "en": "That is outside what I can answer. I answer training-setup questions: batch size, gradient accumulation, precision, ZeRO/FSDP sharding, how much GPU memory it takes, and why a run failed. For example: “How large a micro batch fits a 7B LoRA run on a 3090?”",
    },
    "history_rejected": {
        "zh": "_已忽略上文中不合法的取值：{keys}（不在可接受范围内）。_",
        "en": "_Ignored from the earlier turns: {keys} (not an accepted value)._",
    },
    # section headings
    "numbers": {"zh": "计算结果", "en": "The numbers"},
    "explain": {"zh": "解释", "en": "Explanation"},
    "related": {"zh": "相关", "en": "Related"},
    "sources": {"zh": "参考来源", "en": "Sources"},  # also the chat tab's folded sources title
    "corrected": {"zh": "问题里的误解", "en": "What the question gets wrong"},
    "wrong": {"zh": "错误说法", "en": "Wrong"},
    "right": {"zh": "实际情况", "en": "Actually"},
    "diagnosis": {"zh": "从你贴的内容里读到的", "en": "What I read in what you pasted"},
    "config_check": {"zh": "配置检查", "en": "Config check"},
    "example": {"zh": "示例（不是你的配置：{what}）", "en": "Example (not your setup: {what})"},
    # setup line
    "your_setup": {"zh": "你的设置", "en": "Your setup"},
    "from_config": {"zh": "来自你贴的配置", "en": "from your config"},
    "from_reference": {"zh": "在你引用的别人的配置里", "en": "in the config you quote as someone else's"},
    "from_command": {"zh": "来自启动命令", "en": "from your launch command"},
    "from_default": {"zh": "框架默认值，命令里没写", "en": "the framework's default; your command does not set it"},
    "from_error": {"zh": "来自报错", "en": "from the error"},
    "from_log": {"zh": "来自日志", "en": "from the log"},
    "from_nvidia_smi": {"zh": "来自 nvidia-smi", "en": "from nvidia-smi"},
    "carried": {"zh": "沿用上文", "en": "carried over"},
    "assumed": {"zh": "假设", "en": "assumed"},
    # other values the message gives for one setting (two runs), after the value computed for in the setup line
    "also_runs": {"zh": "（另有 {b}）", "en": " (also {b})"},
    "also_runs_why": {"zh": "（{why}；另有 {b}）", "en": " ({why}; also {b})"},
    "and_sep": {"zh": "、", "en": " and "},
    "why_fails": {"zh": "出错的那次", "en": "failing run"},
    "why_peak": {"zh": "峰值", "en": "peak"},
    "why_other_works": {"zh": "另一次能正常运行", "en": "the other run works"},
    "conflict": {
        "zh": "注意：{name}{src_a}是 {a}，但{src_b}是 {b}。",
        "en": "Note: {name} is {a} {src_a} but {b} {src_b}.",
    },
    "conflict_per_node": {
        "zh": "注意：{name}按 {a} 算：你贴的配置每节点 {per} 张 × 你说的 {nodes} 个节点（配置本身写的是 {b}）。",
        "en": "Note: {name} is {a}: your config's {per} per node × the {nodes} node(s) you state (the config itself says {b}).",
    },
    "in_message": {"zh": "在你的消息里", "en": "in your message"},
    "need_for_memory": {
        "zh": "要算你这套配置的显存，还需要：{missing}。",
        "en": "To compute memory for your run I still need: {missing}.",
    },
    "memory_unsupported": {
        "zh": "显存计算器不支持你的训练方式（{method}），所以这里不给显存数字。",
        "en": "The memory calculator does not model your method ({method}), so no memory figure here.",
    },
    "need_model": {
        "zh": "模型（名称或参数量，如 Qwen-7B / 13B）",
        "en": "the model (name or size, e.g. Qwen-7B / 13B)",
    },
    "need_method": {
        "zh": "微调方式（全量 / LoRA / QLoRA）或精度",
        "en": "the method (full / LoRA / QLoRA) or precision",
    },
    # verdict openers by act
    "likely_cause": {"zh": "最可能的原因：{title}。", "en": "Most likely cause: {title}."},
    "expected_because": {"zh": "是的，这是预期的：{why}。", "en": "Yes, this is expected: {why}."},
    "tried_remedy": {
        "zh": "你试过的这一项不会像预期那样降低显存：",
        "en": "What you tried does not lower memory the way you expected:",
    },
    "known_related": {
        "zh": "知识库里没有能直接对上的已知原因。最相关的已知事实：",
        "en": "No known cause in the knowledge base matches this directly. The closest known fact:",
    },
    "to_narrow": {
        "zh": "要缩小原因，请贴出完整报错（最后 30 行）、启动命令和配置。",
        "en": "To narrow the cause down, paste the full error (last 30 lines), the launch command and the config.",
    },
    "no_known_cause": {
        "zh": "知识库里没有讲这种现象的已知原因。",
        "en": "No known cause in the knowledge base speaks of what you describe.",
    },
    "also_possible": {"zh": "也可能是：{title}。", "en": "Also possible: {title}."},
    # a diagnosis whose message names nothing that tells the usual causes apart
    "usual_causes": {
        "zh": "你描述的现象有几个常见原因，消息里还没有能区分它们的信息。按可能性排序：{causes}。",
        "en": "What you describe has several usual causes, and nothing in the message tells them apart yet. Most likely first: {causes}.",
    },
    "usual_cause_one": {
        "zh": "你描述的现象有多个可能原因，消息里还没有能确定是哪一个的信息。知识库里最相关的一个：{cause}。",
        "en": "What you describe can have several causes, and nothing in the message pins one down yet. The closest known one: {cause}.",
    },
    # a report that memory grows with gradient_accumulation_steps (not a question whether it does)
    "ga_growth_cause": {
        "zh": "**最可能的原因：有东西让每个微批次的计算图或梯度一直留在显存里。** 正确的梯度累积只有一份梯度缓冲（新梯度原地加到 `.grad`），"
        "每个微批次的激活在它的反向之后就释放，所以峰值显存不随累积步数增长（GA=1 到 GA≥2 最多多一份梯度缓冲）。显存随累积步数成比例上涨，"
        "说明框架或训练循环保留了每一步的图或梯度：例如把带图的 loss 直接累加（`total_loss += loss`，应写 `loss.item()` 或 "
        "`loss.detach()`）、把输出存进列表，或框架的累积实现本身为每步另存一份。",
        "en": "**Most likely cause: something keeps each micro-batch's graph or gradients alive.** Correct accumulation has "
        "one gradient buffer (new gradients are added in place into `.grad`) and frees each micro-batch's activations "
        "after its backward, so peak memory does not grow with the accumulation steps (GA=1 to GA>=2 adds at most one "
        "gradient buffer). Memory rising in proportion to GA means the framework or the training loop keeps every "
        "step's graph or gradients: a loss that still holds its graph summed up (`total_loss += loss`; use "
        "`loss.item()` or `loss.detach()`), outputs stored in a list, or an accumulation implementation that keeps a "
        "copy per step.",
    },
    "ga_growth_pipeline": {
        "zh": "**最可能的原因：流水线并行。** 在流水线并行里，梯度累积步数就是流水线每步调度的微批次数，每一级都要保留在途微批次的激活"
        "（1F1B 调度下最多约 min(GA, 流水线级数) 个），所以显存随 GA 上涨，直到 GA 达到流水线级数；不用流水线并行时（单节点测试）显存基本不随 GA 变化。",
        "en": "**Most likely cause: pipeline parallelism.** With pipeline parallelism the accumulation steps are the "
        "micro-batches the pipeline schedules per step, and each stage keeps the activations of the micro-batches in "
        "flight (up to about min(GA, number of stages) under a 1F1B schedule), so memory rises with GA until GA reaches "
        "the number of stages; without pipeline parallelism (a single-node test) memory stays flat as GA grows.",
    },
    # what to paste to tell a symptom's usual causes apart: the items the message does not already give
    "paste_head": {"zh": "要缩小范围，请贴出：{items}。", "en": "To narrow it down, paste: {items}."},
    "paste.error_tail": {
        "zh": "报错的最后几行（含 Tried to allocate 那行）",
        "en": "the last lines of the error (with the 'Tried to allocate' line)",
    },
    "paste.model": {"zh": "模型和参数量", "en": "the model and its size"},
    "paste.method": {"zh": "微调方式（全量/LoRA/QLoRA）", "en": "the method (full/LoRA/QLoRA)"},
    "paste.gpu": {"zh": "GPU 型号和卡数", "en": "the GPU model and count"},
    "paste.sharding": {"zh": "ZeRO/FSDP 配置", "en": "the ZeRO/FSDP config"},
    "paste.train_log": {
        "zh": "前几十步的日志（loss、学习率、grad_norm）",
        "en": "the log of the first few dozen steps (loss, learning rate, grad_norm)",
    },
    "paste.precision_kind": {"zh": "精度（fp16/bf16）", "en": "the precision (fp16/bf16)"},
    "paste.lr": {"zh": "学习率与 warmup", "en": "learning rate and warmup"},
    "paste.effective_batch": {
        "zh": "有效批次（micro batch × 梯度累积 × 卡数）",
        "en": "the effective batch (micro batch × accumulation × GPUs)",
    },
    "paste.command_or_config": {"zh": "启动命令或配置", "en": "the launch command or config"},
    "paste.command": {"zh": "启动命令", "en": "the launch command"},
    "paste.sharding_offload": {"zh": "ZeRO/FSDP 与 offload 配置", "en": "the ZeRO/FSDP and offload config"},
    "paste.gpu_links": {
        "zh": "GPU 型号和卡数（是否有 NVLink、是否多机）",
        "en": "the GPU model and count (NVLink? several nodes?)",
    },
    "paste.step_time": {
        "zh": "每步耗时或 GPU 利用率",
        "en": "the time per step or GPU utilisation",
    },
    "paste.tokens_per_step": {
        "zh": "micro batch、梯度累积和序列长度（每步 token 数）",
        "en": "the micro batch, gradient accumulation and sequence length (tokens per step)",
    },
    "paste.full_error": {"zh": "完整报错或日志（最后 30 行）", "en": "the full error or log (last 30 lines)"},
    "paste.config": {"zh": "配置文件", "en": "the config file"},
    "paste.framework": {"zh": "框架和版本", "en": "the framework and its version"},
    # a fit question without the values a figure depends on
    "fit_depends": {
        "zh": "需要多少显存取决于模型参数量、微调方式（全量/LoRA/QLoRA）、精度、micro batch 和序列长度（还有 GPU 型号，用来判断能否放下）。请告诉我：{missing}。",
        "en": "How much memory it needs depends on the model's size, the method (full/LoRA/QLoRA), precision, micro batch and sequence length (and the GPU, to say whether it fits). Tell me: {missing}.",
    },
    # a fit question about a vision or speech network the calculators do not model (rag.network_kind)
    "fit_measure": {
        "zh": "检测、分割、GAN、语音这类网络没有公式能给出准确的显存（计算器按参数量和序列长度估算的是语言模型）：峰值 ≈ 固定部分（权重、梯度、优化器状态、CUDA 上下文）+ 每个样本的激活 × batch，激活还随输入尺寸（分辨率、音频长度）增长。最快的办法是实测：用 batch 1 和 2 各跑几步，读 `torch.cuda.max_memory_allocated()`，两者之差就是每个样本的代价，能放下的最大 batch ≈ (显存 − 固定部分) ÷ 每样本代价{card}。",
        "en": "No formula gives a detector's, segmenter's, GAN's or speech model's memory exactly (the calculators size language models): peak ≈ a fixed part (weights, gradients, optimizer states, CUDA context) + per-sample activations × batch, and activations grow with the input size (resolution, audio length). Measure it: run a few steps at batch 1 and at batch 2 and read `torch.cuda.max_memory_allocated()`; the difference is the per-sample cost, and the largest batch that fits is about (card memory − fixed part) ÷ per-sample cost{card}.",
    },
    "fit_measure_tail": {
        "zh": "batch 1 也放不下时，减小输入尺寸、开混合精度（AMP）或梯度检查点；batch 变小时按线性规则同比降低学习率，或用梯度累积保持有效批次。",
        "en": "If batch 1 does not fit, lower the input size or turn on mixed precision (AMP) or gradient checkpointing; with a smaller batch, scale the learning rate down linearly or keep the effective batch with gradient accumulation.",
    },
    "fit_measure_card": {"zh": "（你的卡：{cap}）", "en": " (your card: {cap})"},
    "fit_measure_card_named": {"zh": "（你的卡：{gpu}，{cap}）", "en": " (your card: {gpu}, {cap})"},
    "fit_depends_breakdown": {
        "zh": "在那之前，显存由这几部分组成：",
        "en": "Until then, this is what the memory is made of:",
    },
    # a fit question naming the model but not the method: each method's model states (rag/planner._method_plan)
    "method_unknown": {
        "zh": "取决于微调方式，而你没有说明。仅模型状态（权重、梯度、优化器状态）每卡{where}：{clauses}。",
        "en": "It depends on the method, which you did not state. Model states alone (weights, gradients, optimizer "
        "states) per GPU{where}: {clauses}.",
    },
    # an out-of-memory naming the model and the GPU but not the method (rag/compose._oom_method_verdict)
    "oom_method_unknown": {
        "zh": "仅模型状态（权重、梯度、优化器状态）每卡{where}，按微调方式（消息里没有说明）：{clauses}。",
        "en": "Model states alone (weights, gradients, optimizer states) per GPU{where}, by method (the message does not "
        "say which): {clauses}.",
    },
    "oom_method_unknown_tail": {
        "zh": "激活另算；要算完整峰值，请告诉我：{missing}。",
        "en": "For the whole peak (activations on top), tell me: {missing}.",
    },
    "method_where": {"zh": "（{gpu}，{cap}）", "en": " ({gpu}, {cap})"},
    "method_where_cap": {"zh": "（{cap}）", "en": " (of {cap})"},
    "method_unknown_tail": {
        "zh": "激活另算，随 micro batch × 序列长度增长。要算完整峰值，请告诉我：{missing}。",
        "en": "Activations come on top and grow with micro batch × sequence length. For the whole peak, tell me: "
        "{missing}.",
    },
    "method.full": {"zh": "全量微调", "en": "full fine-tune"},
    "method.lora": {"zh": "LoRA", "en": "LoRA"},
    "method.qlora": {"zh": "QLoRA", "en": "QLoRA"},
    "method_sharded": {
        "zh": "（{n} 卡 ZeRO-3 / FSDP 切分后 {states}）",
        "en": " ({states} with ZeRO-3 / FSDP over {n} GPUs)",
    },
    "method_fits": {"zh": "，剩 {free} 给激活", "en": ", leaving {free} for activations"},
    "method_no_fit": {"zh": "，放不下", "en": ", does not fit"},
    "method_fits_sharded": {
        "zh": "，只有切分后能放下（剩 {free} 给激活）",
        "en": ", fits only sharded (leaving {free} for activations)",
    },
    "method_no_fit_sharded": {"zh": "，切分后也放不下", "en": ", does not fit even sharded"},
    "method_table_heading": {
        "zh": "**各微调方式的模型状态（每卡；激活另算）**",
        "en": "**Model states by method (per GPU; activations not included)**",
    },
    # (the method column is KEY_NAMES["finetune"], the parts' columns calculators.memory_table's row names)
    "model_states_col": {"zh": "模型状态合计", "en": "model states"},
    "need.model": {"zh": "模型或参数量", "en": "the model or its size"},
    "need.finetune": {"zh": "微调方式", "en": "the method"},
    "fits": {
        "zh": "能放下：每卡约 {total}，{gpu} 有 {cap}；按这些设置最大 micro batch = {mm}。",
        "en": "It fits: about {total} per GPU on {gpu} with {cap}; the largest micro batch with these settings is {mm}.",
    },
    "fits_trained_only": {
        "zh": "只算被训练的模型，每卡约 {total}，{gpu} 有 {cap}；{stage} 的其他模型还要另加，能否放下取决于它们放在哪几张卡上。",
        "en": "The trained model alone takes about {total} per GPU of the {cap} on {gpu}; {stage}'s other models come on "
        "top, so whether it fits depends on which GPUs they share.",
    },
    "fits_but_oom": {
        "zh": "按这些设置估算每卡约 {total}，{gpu} 有 {cap}，应能放下；你却遇到了 OOM，说明实际占用比这里算的大。",
        "en": "By these settings it needs about {total} per GPU and {gpu} has {cap}, so it should fit; you hit an OOM, so the run uses more than this.",
    },
    "ds_zero2_over": {
        "zh": "很可能放不下：按 ZeRO 论文的算法每卡约 {total}，{gpu} 有 {cap}；但 DeepSpeed 自己的估算器还计入 ZeRO-2 在优化器更新时"
        "建的一份 fp32 梯度分片（2Ψ + 18Ψ/N），模型状态加 CUDA 上下文就要约 {ds}，超出显存。",
        "en": "Probably not: by the ZeRO paper's count it needs about {total} per GPU of the {cap} on {gpu}, but DeepSpeed's "
        "own estimator also counts the fp32 gradient partition ZeRO-2 builds at the optimizer step (2Ψ + 18Ψ/N): model "
        "states plus the CUDA context come to about {ds}, over the card.",
    },
    "ds_zero2_over_oom": {
        "zh": "按 ZeRO 论文的算法每卡约 {total}，{gpu} 有 {cap}，看似放得下；但 DeepSpeed 自己的估算器还计入 ZeRO-2 在优化器更新时建的"
        "一份 fp32 梯度分片（2Ψ + 18Ψ/N），模型状态加 CUDA 上下文就要约 {ds}，超出显存——这很可能就是这次 OOM 的原因。",
        "en": "By the ZeRO paper's count it needs about {total} per GPU of the {cap} on {gpu}, which looks like it fits; "
        "but DeepSpeed's own estimator also counts the fp32 gradient partition ZeRO-2 builds at the optimizer step "
        "(2Ψ + 18Ψ/N): model states plus the CUDA context come to about {ds}, over the card — the likely cause of "
        "this OOM.",
    },
    "oom_why_assumed": {
        "zh": "{names}是我假设的值，你的实际值可能更大，请告诉我。",
        "en": "The {names} are values I assumed; yours are probably larger — tell me them.",
    },
    "oom_why_assumed_one": {
        "zh": "{names}是我假设的值，你的实际值可能更大，请告诉我。",
        "en": "The {names} is a value I assumed; yours is probably larger — tell me it.",
    },
    "oom_why_stated": {
        "zh": "常见原因：实际序列比设置的长（多模态的图像 token、样本打包），或显存被碎片、评估/保存步骤、其他进程占用。",
        "en": "Common causes: real sequences longer than set (image tokens, packing), or memory taken by fragmentation, evaluation/saving steps or another process.",
    },
    "no_fit": {
        "zh": "放不下：每卡约 {total}，超出 {gpu} 的 {cap}（多 {over}），最大的一项是{part} {size}。",
        "en": "It does not fit: about {total} per GPU, {over} over the {cap} of {gpu}; the largest part is {part}, {size}.",
    },
    "zero_stage_unknown": {
        "zh": "结论取决于 ZeRO stage，而消息里没有给出：每卡约 {totals}，{gpu} 有 {cap}；{tail}。",
        "en": "It depends on the ZeRO stage, which the message does not show: about {totals} per GPU, and {gpu} has "
        "{cap}; {tail}.",
    },
    "zero_stages_compared": {
        "zh": "按你比较的 ZeRO stage，每卡约 {totals}，{gpu} 有 {cap}；{tail}。",
        "en": "By the ZeRO stages you compare: about {totals} per GPU, and {gpu} has {cap}; {tail}.",
    },
    "zero_stages_compared_totals": {
        "zh": "按你比较的 ZeRO stage，每卡约 {totals}。",
        "en": "By the ZeRO stages you compare: about {totals} per GPU.",
    },
    "zero_fits_none_compared": {
        "zh": "你试的这几个 ZeRO stage 都放不下：每卡约 {totals}，{gpu} 只有 {cap}。",
        "en": "It does not fit at the ZeRO stages you name: about {totals} per GPU, and {gpu} has {cap}.",
    },
    "zero_stage_total": {"zh": "{total}（ZeRO-{stage}）", "en": "{total} (ZeRO-{stage})"},
    "zero_fits_from": {"zh": "ZeRO-{stage} 起能放下", "en": "it fits from ZeRO-{stage} on"},
    "zero_fits_from_but_oom": {
        "zh": "ZeRO-{stage} 起能放下；你遇到了 OOM，先确认 DeepSpeed 配置里的 stage",
        "en": "it fits from ZeRO-{stage} on; you hit an OOM, so check first which stage your DeepSpeed config sets",
    },
    "zero_fits_none": {
        "zh": "不论 ZeRO stage 是几都放不下（消息里没有给出 stage）：每卡约 {totals}，{gpu} 只有 {cap}。",
        "en": "It does not fit at any ZeRO stage (the message does not show which): about {totals} per GPU, and {gpu} "
        "has {cap}.",
    },
    "zero_stage_totals": {
        "zh": "每卡显存取决于 ZeRO stage，而消息里没有给出：约 {totals}。",
        "en": "The per-GPU memory depends on the ZeRO stage, which the message does not show: about {totals}.",
    },
    "zero_totals_sep": {"zh": "、", "en": ", "},
    "states_no_fit": {
        "zh": "放不下：仅模型状态（权重、梯度、优化器状态）每卡就约 {states}，超过 {gpu} 的 {cap}；激活还要另算。",
        "en": "It does not fit: the model states alone (weights, gradients, optimizer states) take about {states} per GPU, more than the {cap} of {gpu}; activations come on top.",
    },
    "states_crowd_oom": {
        "zh": "仅模型状态（权重、梯度、优化器状态）每卡就约 {states}，{gpu} 共 {cap}，留给激活、CUDA 上下文和碎片的只剩约 {left}，这很可能就是放不下的原因。这个模型没有预设结构，激活算不出来，但在这么小的余量里，micro batch 1 的激活也可能装不下。",
        "en": "The model states alone (weights, gradients, optimizer states) take about {states} per GPU of the {cap} on {gpu}, leaving about {left} for activations, the CUDA context and fragmentation: most likely why it runs out. This model has no preset architecture, so activations are not computed, but even micro batch 1's may not fit in that margin.",
    },
    "states_only_no_gpu": {
        "zh": "仅模型状态（权重、梯度、优化器状态）每卡就约 {states}；这个模型没有预设结构，激活算不出来，所以不给总数，激活和 CUDA 上下文还要另加。",
        "en": "The model states alone (weights, gradients, optimizer states) take about {states} per GPU; this model has no preset architecture, so activations and the total are not computed, and they and the CUDA context come on top.",
    },
    "states_only": {
        "zh": "模型状态（权重、梯度、优化器状态）每卡约 {states}，{gpu} 有 {cap}；这个模型没有预设结构，激活算不出来，所以不给总数。",
        "en": "The model states (weights, gradients, optimizer states) take about {states} per GPU of the {cap} on {gpu}; this model has no preset architecture, so activations and the total are not computed.",
    },
    "per_gpu": {"zh": "每卡约需 {total}。", "en": "About {total} per GPU."},
    "per_gpu_no_single": {
        "zh": "没有哪张单卡有这么多显存（最大的 {largest}）：要用 ZeRO-3 或 FSDP 把权重、梯度和优化器状态切到多张卡上（激活不切），或 offload 到 CPU。告诉我 GPU 型号和卡数，我按每卡算。",
        "en": "No single GPU has that much (the largest holds {largest}): shard the weights, gradients and optimizer states across GPUs with ZeRO-3 or FSDP (activations are not sharded), or offload them to the CPU. Tell me the GPU model and count for the figure per GPU.",
    },
    "micro1_no_fit": {"zh": "micro batch 1 也放不下。", "en": "Even micro batch 1 does not fit."},
    "nearest_fits": {"zh": "最接近且能放下的设置：{options}。", "en": "Nearest settings that fit: {options}."},
    "nearest_option": {"zh": "{what} → 每卡约 {total}", "en": "{what} → about {total} per GPU"},
    "nearest_heading": {
        "zh": "最接近且能放下的设置（每次只改一项，否则为叠加）：",
        "en": "The nearest settings that fit (one change each, else combined):",
    },
    "nothing_fits": {
        "zh": "检查点、micro batch 1、LoRA/QLoRA、ZeRO-3、offload 单独或叠加都放不下：需要更多 GPU（配合 ZeRO-3）、更大显存的卡，或更短的序列。",
        "en": "Neither checkpointing, micro batch 1, LoRA/QLoRA, ZeRO-3 nor offload, alone or together, makes it fit: use more GPUs (with ZeRO-3), GPUs with more memory, or shorter sequences.",
    },
    "observed": {
        "zh": "你看到的占用 {seen} 与估算 {est} 的差：{why}",
        "en": "You saw {seen} in use against an estimate of {est}: {why}",
    },
    "observed_higher": {
        "zh": "nvidia-smi 显示的是保留量（含 CUDA 上下文约 1 GiB 和缓存分配器的预留），通常比实际分配的峰值高约 10%；最长样本、logits 和评估阶段也会推高峰值。",
        "en": "nvidia-smi shows reserved memory (the CUDA context, about 1 GiB, plus the caching allocator's reserve), usually ~10% above the allocated peak; the longest sample, the logits and evaluation push the peak up too.",
    },
    "observed_lower": {
        "zh": "估算按最坏情况（最长序列、全部激活）计算；实际样本更短、开了检查点或 PEFT 冻结层时占用会更低。",
        "en": "The estimate is for the worst case (full sequence length, all activations); shorter samples, checkpointing or frozen PEFT layers use less.",
    },
    "batch_formula": {
        "zh": "全局批次 = micro {micro} × GA {ga} × {ws} 张卡 = {total}。",
        "en": "Global batch = micro {micro} × GA {ga} × {ws} GPUs = {total}.",
    },
    "batch_formula_one": {
        "zh": "全局批次 = micro {micro} × GA {ga} × 1 张卡 = {total}。",
        "en": "Global batch = micro {micro} × GA {ga} × 1 GPU = {total}.",
    },
    "batch_formula_dp": {
        "zh": "全局批次 = micro {micro} × GA {ga} × {ws} 个数据并行副本（{gpus} 张卡 ÷ {split}）= {total}。",
        "en": "Global batch = micro {micro} × GA {ga} × {ws} data-parallel replicas ({gpus} GPUs ÷ {split}) = {total}.",
    },
    "batch_steps": {
        "zh": "{samples} 个样本 → 每卡每个 epoch {micro_per} 个微批次 → ÷ GA {ga} = 每个 epoch {steps} 步{floor}{total}。",
        "en": "{samples} samples → {micro_per} micro-batches per GPU per epoch → ÷ GA {ga} = {steps} optimizer steps per epoch{floor}{total}.",
    },
    "batch_steps_floor": {
        "zh": "（transformers ≥ 4.52 的 HF Trainer 向上取整；≤ 4.51 为 {steps}）",
        "en": " (HF Trainer from transformers 4.52 rounds up; up to 4.51 it is {steps})",
    },
    "batch_steps_total": {
        "zh": "，× {epochs} 个 epoch = 共 {total} 步",
        "en": ", × {epochs} epoch(s) = {total} steps in all",
    },
    "batch_steps_total_floor": {
        "zh": "（≤ 4.51：{total}）",
        "en": " (up to 4.51: {total})",
    },
    "steps_match": {
        "zh": "这与你的运行显示的 {observed} 步一致{which}。",
        "en": "That matches the {observed} steps your run shows{which}.",
    },
    "steps_match_floor": {
        "zh": "（transformers ≤ 4.51 的算法）",
        "en": " (the transformers ≤ 4.51 count)",
    },
    "steps_near": {
        "zh": "这与你的运行显示的 {observed} 步基本一致（每步约 {per} 个样本；差几步来自取整、每个 epoch 最后不满的一步或被过滤的样本）。",
        "en": "That is close to the {observed} steps your run shows ({per} samples per step; a few steps come from rounding, each epoch's last partial step or filtered samples).",
    },
    "steps_mismatch": {
        "zh": "你的运行显示 {observed} 步：{samples} × {epochs} ÷ {observed} ≈ 每步 {per} 个样本{factor}，而你的设置每步是 {total} 个。",
        "en": "Your run shows {observed} steps: {samples} × {epochs} ÷ {observed} ≈ {per} samples per step{factor}, while your settings give {total}.",
    },
    "host_ram_fix": {
        "zh": "降低办法：transformers ≥ 4.43 并用 16 位 `torch_dtype` 加载；ZeRO-3 `zero.Init` 或 FSDP "
        "`fsdp_cpu_ram_efficient_loading` 在加载时分片；或减少每节点进程数。",
        "en": "Ways down: transformers ≥ 4.43 with a 16-bit `torch_dtype`; ZeRO-3 `zero.Init` or FSDP "
        "`fsdp_cpu_ram_efficient_loading`, which shard at load; or fewer processes per node.",
    },
    # rag/compose.py _lr_scaling_verdict: a learning-rate question about a change of batch or GPU count
    "lr_yes_linear": {"zh": "对，这正是线性缩放规则：", "en": "Yes, that is the linear scaling rule: "},
    "lr_yes": {"zh": "对，", "en": "Yes, "},
    "lr_is_sqrt": {"zh": "你的 {proposed} 是平方根规则；", "en": "Your {proposed} is the square-root rule; "},
    "lr_neither": {"zh": "你的 {proposed} 不是这两条规则中的任何一条；", "en": "Your {proposed} is neither rule; "},
    "lr_batch_rule": {
        "zh": "全局 batch {old} → {new}（×{k}），线性规则给出 {linear}；平方根规则（Adam 常用）给出 {sqrt}。",
        "en": "the global batch goes {old} → {new} (×{k}), so the linear rule gives {linear}; the square-root rule, "
        "common with Adam, gives {sqrt}.",
    },
    "lr_gpus_rule": {
        "zh": "如果你的 batch 设置是每卡的（HF Trainer 的 `per_device_train_batch_size`、Lightning、mmcv 的 "
        "`samples_per_gpu`、PaddleDetection / PaddleSeg 的 `batch_size`），{old} 卡 → {new} 卡会让全局 batch ×{k}，"
        "线性规则给出 {linear}（平方根规则：{sqrt}）；想保持学习率不变，就用梯度累积保持全局 batch 不变。",
        "en": "if your batch setting is per GPU (HF Trainer's `per_device_train_batch_size`, Lightning, mmcv's "
        "`samples_per_gpu`, PaddleDetection / PaddleSeg `batch_size`), {old} → {new} GPUs multiplies the global batch "
        "by {k}, and the linear rule gives {linear} (square-root rule: {sqrt}); to keep the learning rate, keep the "
        "global batch with gradient accumulation.",
    },
    "lr_gpus_total": {
        "zh": "如果它是总 batch（detectron2 / fast-reid 的 `IMS_PER_BATCH`），全局 batch 不变，学习率也不用改。",
        "en": "If it is the total batch (detectron2 / fast-reid `IMS_PER_BATCH`), the global batch does not change and "
        "neither does the learning rate.",
    },
    "lr_kept": {
        "zh": "学习率不用改：全局 batch 没变（{old} 卡 → {new} 卡，由每卡 batch 或梯度累积补上），DDP 对各卡梯度取平均，每步看到的梯度相同。",
        "en": "Keep the learning rate: the global batch is unchanged ({old} → {new} GPUs, made up by the per-GPU batch "
        "or by gradient accumulation), and DDP averages the gradients over the GPUs, so each step sees the same "
        "gradient.",
    },
    "lr_heuristic": {
        "zh": "两条都是经验规则（Goyal 等 2017；Malladi 等 2022），需要短跑验证。",
        "en": "Both are heuristics (Goyal et al. 2017; Malladi et al. 2022): confirm with a short run.",
    },
    "lr_times": {"zh": "学习率 ×{factor}", "en": "learning rate ×{factor}"},
    # rag/compose.py _throughput_verdict: the first sentence of a speed question that states a step time
    "speed_low": {
        "zh": "按你的数字，这个速度偏慢：模型 FLOPs 利用率（MFU）约 {mfu}。",
        "en": "Slow for this setup: about {mfu} model FLOPs utilisation (MFU).",
    },
    "speed_moderate": {
        "zh": "按你的数字，这个速度中等：模型 FLOPs 利用率（MFU）约 {mfu}。",
        "en": "Moderate for this setup: about {mfu} model FLOPs utilisation (MFU).",
    },
    "speed_good": {
        "zh": "按你的数字，这个速度正常、偏好：模型 FLOPs 利用率（MFU）约 {mfu}。",
        "en": "Normal to good for this setup: about {mfu} model FLOPs utilisation (MFU).",
    },
    "speed_over_peak": {
        "zh": "按你的数字算出的 MFU 是 {mfu}，超过峰值，所以每步实际的 token 数比 batch × 长度少：序列长度是上限、样本更短，"
        "或这个时间是每个 micro-batch 的。",
        "en": "Your numbers give {mfu} MFU, above the peak, so a step trains fewer tokens than batch × length: the "
        "length is a maximum and samples are shorter, or the time is per micro-batch.",
    },
    "speed_no_peak": {
        "zh": "按你的数字，每卡约 {tflops} TFLOP/s。",
        "en": "By your numbers, about {tflops} TFLOP/s per GPU.",
    },
    "speed_reference": {
        "zh": "参考：调优好的大模型训练报告约 40–56% MFU（PaLM 540B 46.2%；Megatron-LM README 中 H100 上 41–48%，A100 上 1T "
        "参数 56.3%）。",
        "en": "For reference, tuned large-model runs report about 40–56% MFU (PaLM 540B 46.2%; Megatron-LM's README "
        "41–48% on H100, 56.3% for 1T parameters on A100).",
    },
    "speed_full_length": {
        "zh": "每步 token 数按每条样本都是满长度计；样本更短且不 packing 时，实际 MFU 更低。",
        "en": "Tokens per step count every sample at the full length; shorter, unpacked samples make the real MFU lower.",
    },
    "steps_backsolve_total": {
        "zh": "你的运行显示 {observed} 步：{samples} 个样本 × {epochs} 个 epoch ÷ {observed} 步 ≈ 每步 {per} 个样本。",
        "en": "Your run shows {observed} steps: {samples} samples × {epochs} epochs ÷ {observed} steps ≈ {per} samples per step.",
    },
    "steps_backsolve_epoch": {
        "zh": "你的运行每个 epoch {observed} 步：{samples} 个样本 ÷ {observed} 步 ≈ 每步 {per} 个样本。",
        "en": "Your run shows {observed} steps per epoch: {samples} samples ÷ {observed} steps ≈ {per} samples per step.",
    },
    "steps_backsolve_product": {
        "zh": "一个 step 是一次优化器更新，每步的样本数 = micro batch × GA × 数据并行卡数，所以你的运行里这三者的乘积约为 {per}。",
        "en": "A step is one optimizer update of micro batch × GA × data-parallel GPUs samples, so in your run those three multiply to about {per}.",
    },
    "steps_backsolve_one_per_epoch": {
        "zh": "也就是每个 epoch 只有 1 步：有效批次（micro batch × GA × 卡数）不小于 {samples}，一个 epoch 的样本只够一次优化器更新，所以 step 数等于 epoch 数。",
        "en": "That is one step per epoch: the effective batch (micro batch × GA × GPUs) is at least {samples}, so each epoch's samples make a single optimizer update and the step count equals the epoch count.",
    },
    "steps_backsolve_below_one": {
        "zh": "步数比样本数还多，所以这个计数不是这份数据上的优化器更新次数。",
        "en": "There are more steps than samples, so this count is not optimizer updates over this data.",
    },
    "steps_backsolve_check": {
        "zh": "你的消息没有给出 batch 设置：请看 per_device_train_batch_size、gradient_accumulation_steps（示例配置或框架常替你设好）和卡数。",
        "en": "Your message does not give the batch settings: check per_device_train_batch_size, gradient_accumulation_steps (example configs and frameworks often set it for you) and the GPU count.",
    },
    "steps_factor_div": {
        "zh": "（≈ {total} ÷ {k}）",
        "en": " (≈ {total} ÷ {k})",
    },
    "steps_factor_mul": {
        "zh": "（≈ {total} × {k}）",
        "en": " (≈ {total} × {k})",
    },
    "steps_grpo": {
        "zh": "你的运行显示 {observed} 步：{samples} 个 prompt × {epochs} 轮 ÷ {observed} = 每步 {per} 个 prompt，而全局批次是 {total}。GRPO 的批次按补全计而不是按 prompt（TRL 0.15 起）：每个 prompt 重复 num_generations 次，步数 = prompt 数 × num_generations ÷ 全局批次；你的步数对应 {total} ÷ {per} = 每个 prompt {k} 条补全，即 num_generations = {k}。如果你的 num_generations 不是 {k}，就用 prompt 数 × 你的 num_generations ÷ {total} 对照步数。",
        "en": "Your run shows {observed} steps: {samples} prompts × {epochs} epoch(s) ÷ {observed} = {per} prompt(s) per step, against a global batch of {total}. GRPO batches count completions, not prompts (TRL 0.15 and later): each prompt is repeated num_generations times, so steps = prompts × num_generations ÷ global batch; your count matches {total} ÷ {per} = {k} completions per prompt, i.e. num_generations = {k}. If yours is not {k}, compare the steps with prompts × your num_generations ÷ {total}.",
    },
    "steps_mismatch_causes": {
        "zh": "差别来自上式之外的因素，常见的有：序列/张量/流水线并行的卡共用一份数据（数据并行数 = 卡数 ÷ 并行度）；packing、截断或过滤改变了样本数；框架替你设定了 GA 或 batch；RL 训练按生成的回答计数（GRPO 每个 prompt × num_generations）；设置了 max_steps。",
        "en": "The difference comes from something outside this formula, usually: GPUs in sequence/tensor/pipeline parallel groups share one batch (data-parallel size = GPUs ÷ parallel degree); packing, truncation or filtering changed the number of samples; the framework set GA or the batch for you; an RL trainer counts generated completions (GRPO: each prompt × num_generations); or max_steps is set.",
    },
    "batch_per_gpu": {
        "zh": "每张卡每次优化器更新 = micro {micro} × GA {ga} = {per}；N 张卡时全局批次 = {per} × N。",
        "en": "Per GPU per optimizer step = micro {micro} × GA {ga} = {per}; with N GPUs the global batch is {per} × N.",
    },
    "batch_inconsistent": {
        "zh": "这组数不一致，DeepSpeed 会报错：",
        "en": "These values are inconsistent; DeepSpeed raises:",
    },
    "ga_compare": {
        "zh": "GA={a} 与 GA={b} 的每卡显存（其他设置相同）：",
        "en": "Per-GPU memory at GA={a} and GA={b}, everything else equal:",
    },
    "ga_same": {
        "zh": "两列相同：累积步数不改变峰值显存。改变显存的是 micro batch：",
        "en": "The two columns are the same: accumulation steps do not change peak memory. The micro batch does:",
    },
    "ga_grad_buffer": {
        "zh": "差别只有 {diff}，即一份梯度缓冲区与一个微批次的激活两者中较小的那个：zero_grad(set_to_none=True)（PyTorch ≥ 2.0 与 HF Trainer 的默认）下，GA=1 时前向阶段还没有梯度，GA≥2 时累积的梯度与下一个微批次的激活同时存在。这是一个常数，GA=2 和 GA=64 一样。改变显存的是 micro batch：",
        "en": "The only difference is {diff}, the smaller of one gradient buffer and one micro-batch's activations: with zero_grad(set_to_none=True) (the PyTorch ≥ 2.0 and HF Trainer default) there are no gradients during the forward pass at GA=1, while at GA≥2 the accumulated gradients coexist with the next micro-batch's activations. It is a constant, the same for GA=2 and GA=64. The micro batch is what changes memory:",
    },
    "ga_differs": {
        "zh": "流水线并行时在途微批次会增加激活显存（见上表）。micro batch 的影响：",
        "en": "With pipeline parallelism in-flight micro-batches add activations (see the table). The micro batch:",
    },
    "precision": {"zh": "全量微调时不同精度下的每卡显存：", "en": "Per-GPU memory of a full fine-tune by precision:"},
    "zero": {"zh": "不同 ZeRO stage 下的每卡显存：", "en": "Per-GPU memory by ZeRO stage:"},
    "checkpointing": {"zh": "不同梯度检查点设置下的每卡显存：", "en": "Per-GPU memory by gradient checkpointing:"},
    "finetune": {"zh": "全量微调、LoRA、QLoRA 的每卡显存：", "en": "Per-GPU memory: full fine-tune vs LoRA vs QLoRA:"},
    "calc_error": {"zh": "计算器拒绝了这组参数：", "en": "The calculator rejected these values:"},
    "no_card": {"zh": "知识库里没有与此直接相关的解释。", "en": "No curated explanation matches this closely."},
    # no retrieved card's lead answers the question asked (rag.opening): name the closest, do not answer with them
    "no_lead": {
        "zh": "知识库里没有直接回答这个问题的条目。",
        "en": "Nothing in the knowledge base answers exactly this.",
    },
    "no_lead_yes_no": {
        "zh": "知识库里没有能对这个问题直接给出“是/否”的条目。",
        "en": "Nothing in the knowledge base gives a yes or no to exactly this.",
    },
    "closest_cards": {"zh": "最接近的是：{titles}（见下方解释）。", "en": "The closest: {titles} (explained below)."},
    "no_card_diag": {
        "zh": "知识库里还没有这个问题的已知原因；请贴出完整报错（最后 30 行）、启动命令和配置，我会读取其中的数字。",
        "en": "No known cause in the knowledge base matches this yet; paste the full error (last 30 lines), the launch command and the config, and I will read the numbers in them.",
    },
    # punctuation, word order and small words the answer's sentences are built from
    "colon": {"zh": "：", "en": ": "},
    "list_sep": {"zh": "，", "en": ", "},
    "clause_sep": {"zh": "；", "en": "; "},
    "and": {"zh": "和", "en": " and "},
    "enum_sep": {"zh": "、", "en": "; "},
    "then": {"zh": "{a}{b}", "en": "{a} {b}"},
    "with_source": {"zh": "{items}（{source}）", "en": "{items} ({source})"},
    "on": {"zh": "开", "en": "on"},
    "off": {"zh": "关", "en": "off"},
    "a_gpu": {"zh": "显卡", "en": "GPU"},
    "effective_batch": {"zh": "有效批次", "en": "effective batch"},
    "fix_suffix": {"zh": " 解决：{fix}", "en": " Fix: {fix}"},
    "tokens_per_step": {"zh": "- 每步 token 数：{n}", "en": "- tokens/step: {n}"},
    "nearest_table_head": {"zh": "| 改动 | 每卡 | 剩余 |", "en": "| change | per GPU | spare |"},
}

#: The one name of each setup field: the chat's setup line and conflict notes, and (as {name}) the calculators tab's
#: form labels (calculators.i18n.ui_text.FIELD_LABELS) use it. In the catalogue as "name.<field>".
KEY_NAMES: dict[str, dict[str, str]] = {
    "model": {"zh": "模型", "en": "model"},
    "model_text": {"zh": "模型", "en": "model"},
    "num_params": {"zh": "参数量", "en": "size"},
    "gpu": {"zh": "GPU", "en": "GPU"},
    "gpu_text": {"zh": "GPU", "en": "GPU"},
    "gpu_memory_gb": {"zh": "显存", "en": "GPU memory"},
    "world_size": {"zh": "卡数", "en": "GPUs"},
    "num_nodes": {"zh": "节点", "en": "nodes"},
    "train_micro_batch_size_per_gpu": {"zh": "micro batch", "en": "micro batch"},
    "gradient_accumulation_steps": {"zh": "GA", "en": "GA"},
    "ga_from": {"zh": "原 GA", "en": "earlier GA"},
    "train_batch_size": {"zh": "全局 batch", "en": "global batch"},
    "base_batch_size": {"zh": "原 batch", "en": "earlier batch"},
    "base_learning_rate": {"zh": "学习率", "en": "LR"},
    "zero_stage": {"zh": "ZeRO", "en": "ZeRO"},
    "fsdp": {"zh": "FSDP", "en": "FSDP"},
    "offload_optimizer": {"zh": "优化器 offload", "en": "optimizer offload"},
    "offload_param": {"zh": "参数 offload", "en": "param offload"},
    "precision": {"zh": "精度", "en": "precision"},
    "seq_len": {"zh": "序列长度", "en": "sequence length"},
    "finetune": {"zh": "方式", "en": "method"},
    "quantization": {"zh": "权重量化", "en": "base weights"},
    "lora_rank": {"zh": "LoRA rank", "en": "LoRA rank"},
    "gradient_checkpointing": {"zh": "梯度检查点", "en": "checkpointing"},
    "flash_attention": {"zh": "FlashAttention", "en": "FlashAttention"},
    "adamw_kernel": {"zh": "AdamW 实现", "en": "AdamW kernel"},
    "pipeline_parallel_size": {"zh": "PP", "en": "PP"},
    "tensor_parallel_size": {"zh": "TP", "en": "TP"},
    "sequence_parallel_size": {"zh": "序列并行", "en": "SP"},
    "observed_memory_gb": {"zh": "观察到的占用", "en": "observed use"},
    "host_ram_gb": {"zh": "主机内存", "en": "host RAM"},
    "images_per_sample": {"zh": "每样本图像数", "en": "images per sample"},
    "image_width": {"zh": "图像宽", "en": "image width"},
    "image_height": {"zh": "图像高", "en": "image height"},
    "image_max_pixels": {"zh": "max_pixels", "en": "max_pixels"},
    "freeze_vision_tower": {"zh": "冻结视觉编码器", "en": "vision tower frozen"},
}
