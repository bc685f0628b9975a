"""Bilingual (Chinese/English) domain glossary for batch size, accumulation, precision and memory.

Two uses:

* :func:`expand_query` appends the English (and Chinese) equivalents of the domain terms
  found in a question. The default embedding model (all-MiniLM-L6-v2) is English-only, so
  a Chinese question such as "显存爆掉是因为有效批次大小吗" only lands near the right
  card once "GPU memory out of memory effective batch size" is appended. BM25 gains too:
  an English question can match the Chinese half of a card and vice versa.
* :func:`user_dictionary` lists the Chinese domain terms (and the config keys) that
  jieba must keep as single words (see :mod:`rag.tokenize`).

Matching rules: Chinese terms match as substrings (Chinese has no spaces); English terms
and abbreviations match case-insensitively on word boundaries, where ``_`` counts as part of
a word, so ``ga`` does not fire inside ``gradient_accumulation_steps`` and ``bs`` does not
fire inside ``abs``.

Pure Python, no heavy imports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .regex_literals import fold_case


@dataclass(frozen=True)
class Term:
    """One concept: Chinese surface forms, English surface forms, and what to append.

    ``zh`` and ``en`` are the forms recognised in a query; ``zh[0]`` and ``en[0]`` are the
    canonical forms appended by :func:`expand_query`, plus any ``extra`` words (e.g. the
    config key a concept corresponds to).
    """

    zh: tuple[str, ...]
    en: tuple[str, ...]
    extra: tuple[str, ...] = ()


def _t(zh: str, en: str, extra: str = "") -> Term:
    def split(s: str) -> tuple[str, ...]:
        return tuple(x.strip() for x in s.split("|") if x.strip())

    extras: list[str] = []
    for piece in split(extra):
        words = piece.split()
        # "key_a key_b" lists several config keys; anything else is one phrase
        extras.extend(words if all("_" in w for w in words) else [piece])
    return Term(split(zh), split(en), tuple(extras))


#: The glossary. ``|`` separates surface forms; the first one of each side is canonical.
GLOSSARY: tuple[Term, ...] = (
    # --- batch and accumulation -------------------------------------------------------
    _t(
        "梯度累积|梯度累加|累积步数|累加步数|梯度积累|累积梯度|累加梯度",
        "gradient accumulation|grad accumulation|grad accum|accumulation steps|GA",
        "gradient_accumulation_steps",
    ),
    _t(
        "有效批次大小|有效批次|有效批大小|有效批量|有效batch|等效批大小|等效批次|全局批大小|全局批次|总批大小|总批次",
        "effective batch size|global batch size|global batch|total batch size|gbs",
        "train_batch_size",
    ),
    _t(
        "微批次|微批大小|微批|每卡批大小|单卡批大小|每张卡的批大小|每卡batch|单卡batch",
        "micro batch|micro-batch|microbatch|micro batch size|per-device batch size|per-GPU batch size|mbs",
        "per_device_train_batch_size train_micro_batch_size_per_gpu",
    ),
    _t("批大小|批次大小|批量大小|批尺寸|批次|批量", "batch size|batch|bs"),
    _t("大批次|大批量|大批大小|大batch", "large batch|large batches|big batch"),
    _t("小批次|小批量|小批大小|小batch", "small batch|small batches"),
    _t("步数|训练步数|更新步数|优化步|优化器步", "optimizer step|optimizer steps|training steps|steps"),
    _t("参数更新|权重更新|更新一次|更新幅度|更新", "update|updates|parameter update|step size"),
    _t("减小|开的小|开得小|调小|设小|设得小|设的小|太小|很小|较小|降低", "small|too small|smaller|reduce|decrease"),
    _t("增大|开的大|开得大|调大|设大|变大|加大|太大|很大|较大|提高|翻倍", "large|larger|increase|bigger|double"),
    _t("会怎么样|有什么影响|影响|后果|效果", "effect|effects|impact|what happens"),
    _t("令牌数|词元|token数|每步token", "tokens|tokens per step|token count"),
    _t(
        "序列长度|上下文长度|最大长度|截断长度|句子长度",
        "sequence length|context length|seq len|max length",
        "cutoff_len max_seq_length",
    ),
    _t("填充|补齐", "padding|pad tokens"),
    # --- memory and OOM -----------------------------------------------------------------
    _t("显存|GPU内存|显卡内存|显存容量|显存大小", "GPU memory|VRAM|device memory|memory"),
    _t(
        "爆显存|显存爆了|显存爆掉|显存爆|炸显存|显存炸了|显存炸|显存不足|显存不够|显存溢出|溢出显存|内存溢出|内存不足|内存不够|爆内存|爆掉|跑不动|装不下",
        "out of memory|OOM|CUDA out of memory|CUDA OOM",
    ),
    _t(
        "显存占用|内存占用|占用显存|占显存|显存打满|显存占满|显存满了|占满显存|占用",
        "memory usage|memory footprint|memory consumption",
    ),
    _t("峰值显存|显存峰值|峰值", "peak memory|peak"),
    _t("显存碎片|碎片化|碎片", "memory fragmentation|fragmentation|expandable_segments"),
    _t("主机内存|CPU内存|内存条|系统内存", "CPU memory|host memory|RAM|CPU RAM"),
    _t("激活值|激活|中间激活|激活显存", "activations|activation memory|activation"),
    _t("优化器状态|优化器的状态|动量|Adam状态", "optimizer states|optimizer state|Adam states|momentum"),
    _t("梯度", "gradient|gradients|grad|grads"),
    _t("优化器", "optimizer|optimiser|Adam|AdamW"),
    _t("模型参数|参数量|参数", "parameters|params|model parameters|weights"),
    _t("模型权重|权重", "model weights|weights"),
    _t("主权重|主副本|fp32副本", "master weights|fp32 master copy|master copy"),
    _t("输出层|词表|词表大小|logits", "logits|vocabulary|vocab size|lm_head"),
    _t("CUDA上下文|cuda上下文|上下文开销", "CUDA context|context overhead"),
    # --- memory-saving techniques -------------------------------------------------------
    _t(
        "梯度检查点|重计算|激活重计算|激活检查点|检查点",
        "gradient checkpointing|activation checkpointing|recomputation|grad ckpt",
        "gradient_checkpointing",
    ),
    _t("卸载|内存卸载|CPU卸载|卸载到CPU|卸到CPU", "offload|CPU offload|offloading", "offload_optimizer offload_param"),
    _t("零冗余优化器|零冗余", "ZeRO|zero redundancy optimizer", "zero_optimization"),
    _t("分片|切分|分区", "sharding|partitioning|shard|partition"),
    _t("混合精度|混精", "mixed precision|amp|automatic mixed precision"),
    _t("半精度", "half precision|fp16|float16"),
    _t("单精度|全精度", "single precision|full precision|fp32|float32"),
    _t("精度", "precision|dtype"),
    _t("量化|4比特|4位|8比特|8位|四比特", "quantization|quantized|4-bit|8-bit|bitsandbytes|nf4"),
    _t("低秩适配|低秩", "LoRA|low-rank adaptation|adapter|adapters"),
    _t(
        "全量微调|全参微调|全参数微调|全参训练|全量训练",
        "full fine-tuning|full finetuning|full parameter fine-tuning|full-parameter",
    ),
    _t("微调", "fine-tuning|finetuning|fine-tune|SFT"),
    _t("预训练", "pretraining|pre-training"),
    # --- hardware and parallelism -------------------------------------------------------
    _t("显卡|张卡|块卡|单卡|一张卡|GPU卡", "GPU|GPUs|graphics card|single GPU"),
    _t(
        # ret6: a GPU count written with the GPU ("4*A100 40G", "4*A800能跑吗", "8卡 A100", "A100(40G)*8") is a
        # multi-GPU setup too (Baichuan-13B #113, #141, Llama-Chinese #221)
        r"多卡|多张卡|多GPU|多机多卡|几张卡|双卡|两张卡|三张卡|四张卡|八张卡|多机|(?<![\dA-Za-z])\d*[2-9]\s*卡|(?<![\dA-Za-z])\d*[2-9]\s*张[^，,。]{0,10}?[AHVLT]\d{2,3}|\d\s*[*×]\s*[AHVLT]\d{2,3}|"
        r"[AHVLT]\d{2,3}[^\s,，]{0,8}\s*[*×]\s*\d",
        "multi-GPU|multiple GPUs|multi GPU|number of GPUs",
    ),
    _t("消费级显卡|消费级|游戏卡|3090|4090|3080|24G|24GB|24g", "consumer GPU|RTX 3090|RTX 4090|24GB|24 GB"),
    _t("每卡|每张卡|每个GPU|每个卡", "per GPU|per device|per-device|per-GPU"),
    _t("卡数|进程数|GPU数|GPU数量|卡的数量", "world size|number of GPUs|world_size|data parallel size"),
    _t("数据并行", "data parallel|data parallelism|DDP|distributed data parallel"),
    _t("流水线并行|流水并行", "pipeline parallel|pipeline parallelism|PP"),
    _t("张量并行|模型并行", "tensor parallel|tensor parallelism|model parallel|TP"),
    _t("通信", "communication|all-reduce|allreduce|reduce-scatter"),
    _t("前向传播|前向", "forward pass|forward"),
    _t("反向传播|反向", "backward pass|backward|backprop"),
    _t("吞吐|训练速度|速度|变慢|更慢", "throughput|training speed|speed|slower|slow"),
    # --- optimisation and generalisation ------------------------------------------------
    _t("学习率", "learning rate|lr|LR", "learning_rate"),
    _t("线性缩放|线性缩放规则|线性放大", "linear scaling rule|linear scaling|scale the learning rate"),
    _t("平方根缩放|开方缩放", "square root scaling|sqrt scaling"),
    _t("预热|热身", "warmup|warm-up", "warmup_steps warmup_ratio"),
    _t("损失|loss值|损失函数", "loss|loss function"),
    _t("归一化|平均|求平均|除以", "normalization|normalize|average|mean"),
    _t("求和|累加和", "sum|summed"),
    _t("批归一化|BN层|BatchNorm", "BatchNorm|batch normalization|batch norm|BN"),
    # "batch设2时显存不够，设1时会报错" (ResNeSt #116): a batch of one that errors (not OOMs) is BatchNorm's one-sample batch
    _t(
        r"batch为1报错|batch[^。，,\d]{0,8}1(?!\d)[^。，,\d]{0,6}报错|设[为成置]?1(?!\d)[^。，,\d]{0,4}报错",
        r"batch size 1 error|batch[ _-]?size[^.,\n\d]{0,6}1(?!\d)[^.,\n]{0,30}error",
        "BatchNorm Expected more than 1 value per channel when training",
    ),
    _t("泛化|泛化能力|泛化性", "generalization|generalize|generalization gap"),
    _t("收敛|收敛速度|不收敛", "convergence|converge|converges"),
    _t("过拟合", "overfitting|overfit"),
    _t("震荡|不稳定|发散|训练不稳定", "instability|unstable|diverge|divergence|noisy"),
    _t("梯度噪声|噪声", "gradient noise|noise|noisy gradients"),
    _t("尖锐极小值|平坦极小值|极小值", "sharp minima|flat minima|minima"),
    _t("梯度裁剪", "gradient clipping|max_grad_norm|clip", "max_grad_norm gradient_clipping"),
    # --- errors and configs -------------------------------------------------------------
    # "报错/错误" is any error: mapping it to "assertion error" pulled the DeepSpeed batch-assertion card into
    # every Chinese question that mentions an error (and "断言错误" into every English one that says "error").
    _t("断言错误|断言", "assertion error|AssertionError"),
    _t("报错|错误|出错", "error|exception|errors"),
    _t("不一致|对不上", "mismatch|does not match|inconsistent"),
    _t("配置文件|配置|参数设置|设置", "config|configuration|config file|settings"),
    _t("自动|auto值", 'auto|"auto"'),
    _t("命令行|启动命令", "command line|launcher|deepspeed launcher|torchrun"),
    # --- abbreviations and product names (English side only) ---------------------------
    _t("", "ds|deepspeed", "DeepSpeed"),
    _t("", "zero3|zero-3|zero 3|z3|stage 3|stage3", "ZeRO stage 3 zero_optimization"),
    _t("", "zero2|zero-2|zero 2|z2|stage 2|stage2", "ZeRO stage 2 zero_optimization"),
    _t("", "zero1|zero-1|zero 1|stage 1", "ZeRO stage 1 zero_optimization"),
    _t("", "fp16|float16", "half precision mixed precision"),
    _t("", "bf16|bfloat16", "bfloat16 mixed precision"),
    _t("", "qlora|q-lora", "QLoRA 4-bit quantization LoRA"),
    _t("", "hf|huggingface|hugging face|transformers trainer|trainer", "Hugging Face Trainer"),
    _t("", "llamafactory|llama-factory|llama factory|lf", "LLaMA-Factory"),
    _t("", "fsdp", "FSDP fully sharded data parallel"),
    _t("", "vram", "GPU memory"),
    # --- cards-b: memory over time, hardware, sharding, PEFT -----------------------------
    _t(
        "显存一直在涨|显存一直在往上涨|显存越来越大|显存占用越来越大|显存持续增长|显存不断增加|显存逐渐增加|显存随step|显存上涨|内存持续增长",
        "memory keeps growing|memory creep|memory grows every step|memory leak|memory keeps increasing",
        "memory_allocated memory_reserved",
    ),
    _t(
        "评估阶段|评估时|验证集|进入eval|eval阶段|预测评估",
        "evaluation|eval|evaluate|eval loop|prediction",
        "eval_accumulation_steps",
    ),
    _t("转fp32|强制转fp32|升为fp32|转成fp32|转为fp32|上转", "upcast to fp32|cast to float32|upcast|float32 cast"),
    _t(
        "进程被杀|被kill|被杀掉|被杀|被kill掉|Killed",
        "process killed|SIGKILL|host out of memory|Killing subprocess|killed|kill|got killed|was killed",
    ),
    _t("昇腾|华为NPU|910B|NPU卡", "Ascend NPU|Ascend|NPU|torch_npu|HCCL", "ASCEND_RT_VISIBLE_DEVICES"),
    _t("40系|4090多卡|多张4090|P2P", "RTX 40 series|RTX 4090|P2P|peer-to-peer", "NCCL_P2P_DISABLE NCCL_IB_DISABLE"),
    _t("不支持bf16|不支持BF16|bf16不支持", "bf16 not supported|no bfloat16 support|compute capability 8.0|Ampere"),
    _t("作用层|LoRA作用层|目标模块", "target modules|target_modules|lora_target"),
    _t(
        "扩词表|扩充词表|新增token|添加token|加了特殊token|特殊token",
        "new tokens|added tokens|extend vocabulary|resize_token_embeddings",
        "modules_to_save",
    ),
    _t(
        "保存的模型|保存模型|模型文件|权重维度为0",
        "saved model|save model|model weights file|checkpoint",
        "stage3_gather_16bit_weights_on_model_save zero_to_fp32",
    ),
    _t("", "fsdp full_shard|full_shard|shard_grad_op|no_shard|hybrid_shard", "FSDP sharding strategy ZeRO stage"),
    _t(
        "显存分布异常|显存分布不均|显存占用不均|占用不均|分配不均|不均衡|不均匀|不平衡|0号卡|第一张卡|主卡",
        "uneven GPU memory|memory imbalance across GPUs|GPU 0 uses more memory|unbalanced memory|uneven|unevenly|"
        # ("I noticed that GPU:0 consumes more memory than the others", espnet #1225)
        "unbalanced|imbalance|imbalanced|more memory than the others|more memory than other GPUs|"
        "more memory than the other GPUs",
    ),
    _t("", "dora|use_dora", "DoRA weight-decomposed LoRA"),
    _t("", "p-tuning|ptuning|ptv2|p-tuning v2|pre_seq_len|prefix tuning", "P-Tuning v2 prefix tuning PrefixEncoder"),
    _t(
        "",
        "flash attention|flashattention|flash_attn|flash-attn|flash_attention_2",
        "FlashAttention attention implementation sdpa",
    ),
    # --- cards-a (issue #11): steps, schedulers, RL fine-tuning, framework names --------
    _t(
        "学习率调度|学习率衰减|学习率下降|学习率曲线|调度器",
        "learning rate scheduler|lr scheduler|lr_scheduler|scheduler|lr schedule|learning rate schedule",
        "lr_scheduler_type",
    ),
    _t("进度条|总步数|总step", "progress bar|total steps|total optimization steps", "max_steps"),
    _t("打印的loss|打印loss|日志里的loss", "logged loss|logging interval", "logging_steps"),
    _t("强化学习|偏好优化|人类反馈", "reinforcement learning|RLHF|preference optimization"),
    _t("生成数|采样数|每个prompt生成|回答数", "generations per prompt|num generations|completions", "num_generations"),
    _t("参考模型", "reference model|ref model|ref_model", "precompute_ref_log_probs"),
    _t("", "grpo|grpotrainer|grpoconfig|dapo", "GRPO group relative policy optimization"),
    # verl names its batch keys after the PPO/GRPO phases; a pasted verl config or launch line names the framework
    # even when the user does not (https://verl.readthedocs.io/en/latest/examples/config.html)
    _t(
        "",
        "verl|actor_rollout_ref|ppo_mini_batch_size|ppo_micro_batch_size_per_gpu|train_prompt_bsz|"
        "trainer.total_epochs|data.train_batch_size|rollout.n",
        "verl|rollout|mini-batch",
    ),
    # one node works, several hang: users name the machines, not "nodes"
    _t(
        "多机|多节点|多台机器|两台机器|两台服务器|多台服务器|两个节点|跨机|跨节点|多机多卡",
        "multi-node|multiple nodes|multi node|two nodes",
        "nnodes",
    ),
    # a VL model's images: their resolution sets how many visual tokens each sample adds (LLaMA-Factory #7099: "增大图片
    # 分辨率到 3584*3584，为什么多机多卡会爆显存" named no VL concept, so the multi-node cards ranked before visual tokens)
    _t(
        "图片分辨率|图像分辨率|高分辨率|视觉token|视觉 token|图像token|图片token",
        "image resolution|high-resolution images|visual tokens|image tokens|max_pixels|image_max_pixels",
        "max_pixels image_max_pixels",
    ),
    _t("", "dpo|dpotrainer|dpoconfig", "DPO direct preference optimization"),
    _t("", "ppo|ppotrainer|ppoconfig", "PPO proximal policy optimization"),
    _t("", "trl", "TRL"),
    _t("", "accelerate|accelerator", "Accelerate"),
    _t("", "megatron|megatron-lm|gpt-neox|neox", "Megatron-LM"),
    _t("", "alpaca-lora|alpaca lora|finetune.py", "alpaca-lora"),
    _t(
        "断点续训|续训|断点续练|恢复训练|继续训练",
        "resume from checkpoint|resume training|resuming",
        "resume_from_checkpoint",
    ),
    # --- retrieval (issue #10): how users ask about requirements, growth, GPU counts ----------
    _t(
        # ret6: "请问4*A100 40G能全参数微调Baichuan-13B吗" (Baichuan-13B #113), "单卡需要多大的显存才能训练的动"
        # (Chinese-LLaMA-Alpaca #347), "4*A800能跑吗" (Baichuan-13B #141)
        "能全参数微调|能全量微调|可以全量微调|可以全参微调|能全参微调|训练的动|训练得动|训得动|带得动|带的动|带不动|能跑吗|"
        "需要多少显存|要多少显存|需要多大的显存|需要多大显存|多大的显存|多大显存|显存需求|显存要求|最低配置|最低硬件|"
        "硬件要求|硬件配置|资源要求|需要多少张|需要几张|多少张卡|多少张|至少需要",
        "how much GPU memory|memory requirement|minimum hardware|how many GPUs|memory estimate",
    ),
    _t(
        "越训|越来越大|越来越多|慢慢增大|慢慢的增大|慢慢增加|逐渐增大|不断增大|一直增大|一直增加|一直在涨|持续上涨|不断上涨",
        "keeps growing|grows over steps|increases over time|memory creep",
    ),
    _t(
        "效果不如|效果差|效果变差|性能差|性能比|结果差|差距|不一致的结果|结果不一样|结果不同|准确率|正确率",
        "worse results|results differ|accuracy gap|different results",
    ),
    # ret6: how users say "the cards' memory should add up" in threads outside the dev set: "2*22G显卡" (PaddleNLP
    # #8232), "双卡3090-24G" (yangjianxin1/CPM #22), "将大模型的参数划分到多张卡上训练，而不是在每张卡上都加载整个模型参数"
    # (LLaMA-Factory #44), "两张4090" + "24G" (LLaMA-Factory #24).
    _t(
        r"平均分到|分到两张卡|分到每张卡|分摊|合并显存|显存叠加|加起来|总显存|共\d+G|显存没有因为|显存没降|显存没有减少|"
        r"显存一致|显存一样|每张卡都|划分到多张卡|分到多张卡|分到两个显卡|分到两张显卡|分布到多张卡|拆到多张卡|"
        r"\d\s*[*×]\s*\d+\s*G|[两二双三四五六八]\s*[张块个]?\s*\d+\s*G\s*[显的]?卡|"
        r"双卡[\dA-Za-z]*-?\d+\s*G",
        "pool GPU memory|memory not split across GPUs|each GPU holds a full copy|per-GPU memory",
    ),
    # "单卡能跑，多卡就OOM": ms-swift #2293 "同参数情况下，单卡正常运行，多卡DDP显存OOM", LLaMA-Factory #24 "用两张4090微调
    # 13b的belle出现oom，单卡则不会", Open-R1-Video #24 "可以单张卡不报错，但是多张卡就会报错显示oom", ChatGLM-6B #1203
    # "多卡微调就OOM，但是单卡能跑", Moore-AnimateAnyone #71 "为什么单卡不超显存，多卡会超显存".
    _t(
        "单卡能跑|单卡可以跑|单卡正常|单卡不报错|单张卡不报错|单卡不会|单卡则不会|单卡不超|单卡没问题|单卡就可以|"
        "单卡能微调|单卡能训",
        "works on a single GPU|fine on one GPU|single GPU works|works on one GPU",
    ),
    _t(
        "使用率|利用率|不参与计算|没有工作|只占用一张卡|只用了一张卡|只有一张卡在跑|另一张卡",
        "GPU utilization|only one GPU used|idle GPU",
    ),
    _t("卡住|卡在|不动了|一直不动|卡着不动|没有动静|不往下走|卡死|没有反应|hang住", "hang|stuck|hangs|no progress"),
    _t("特别慢|很慢|慢很多|慢了|慢这么多|慢一倍|速度慢", "slow|much slower|slowdown"),
    _t(
        "每个epoch|一个epoch|每轮|step数|多少step|多少个step|步数不对|steps数",
        "steps per epoch|number of steps|step count",
    ),
    _t("", "global batch grows with GPU count|fewer steps with more GPUs", "effective batch size number of GPUs"),
    _t("", "host RAM per process|every process loads a copy", "CPU memory multiplies with the number of GPUs"),
    # --- cards-c (issue #11): model loading, DataParallel ---------------------------------
    _t(
        "模型load|load时|load的时候|加载模型|模型加载|载入模型|加载阶段|加载时",
        "model loading|loading the model|load time|at load",
        "zero.Init low_cpu_mem_usage per-process copy",
    ),
    _t(
        "另一张显卡也会被使用|另一张卡也被占用|单进程多卡",
        "nn.DataParallel|gather along dimension",
        "DataParallel GPU 0 gathers outputs one process per GPU torchrun",
    ),
    # --- ret4: how users say "it ran, then ..." and "the loss is not the same" (issue #11) --------------------------
    # Measured with the prose-line command cut of rag.query_clean on tests/data/real_questions/dev-ret4.yaml (24 threads
    # mined and scored before these entries existed), bench/eval_retrieval_real.py fused hit@1/hit@3: zh 0.538/0.692 ->
    # 0.769/0.923, en 0.727/1.000 -> 0.727/1.000; the rest of the dev set (bench/eval_answers.py) zh 0.559/0.801 ->
    # 0.559/0.796, en 0.643/0.846 -> 0.647/0.846.
    # Time passing before a failure: "训练一段时间后就会溢出显存", "可以跑起来一阵子，但之后会爆显存", "大概训练几十轮后，
    # 最终内存溢出", "跑完第一个epoch正常，但第二个就开始提示显存不足", "2000 step时出现OOM", "trained fine for
    # hundreds of steps", "hit OOM after 5.5hrs". Alone it means nothing; with an OOM word it implies memory growing
    # over steps (COMBINATIONS below).
    _t(
        r"一段时间后|一段时间之后|一段时间就|一阵子|跑了一会|一会就|跑着跑着|训练到一半|训到一半|中途|过一会|几十轮后|"
        r"几百步后|几千步后|第二个epoch|第\d+个epoch|\d+\s*[步轮][时后]|\d+\s*steps?[时后]|\d+\s*steps?之后",
        r"after a while|after some time|after some steps|after a few steps|after a few hours|"
        r"trained fine for|partway|midway|hours into|after \d+ steps|after \d+\.?\d*\s*hrs|after \d+\.?\d*\s*hours|"
        r"after \d+ epochs",
        "after running for a while",
    ),
    # The loss compared between two runs: "训练损失更高", "loss 对不上", "very high loss", "loss values are not similar".
    _t(
        "损失更高|损失更大|损失偏高|损失不一样|损失不同|损失不一致|loss 更高|loss 偏高|loss 更大|loss 不一样|loss 不同|"
        "loss 对不上|loss 不一致",
        "loss differs|loss is different|different loss|higher loss|loss is higher|loss is much higher|very high loss|"
        "loss does not match|losses did not match|loss mismatch|loss values are not similar",
    ),
    _t("", "loss differs with gradient accumulation", "loss normalization num_items_in_batch"),
    # "NCCL超时", "通信超时", "10分钟后报NCCL超时错误" (ms-swift #2359, Bagel #245, D-FINE #316, FunASR #2006,
    # LLaMA-Factory #956): a collective that did not finish in the process-group timeout.
    _t(
        "超时|通信超时|超时错误|超时退出|超时时间",
        "timeout|timed out|time out|times out",
        "collective operation timeout ddp_timeout",
    ),
    # "可训练参数为0" / "trainable params: 0 || ... trainable%: 0.0000" (MedicalGPT #123, ChatGLM-Efficient-Tuning
    # #396, LLaMA-Factory #941): the count PEFT prints; 0 after loading an adapter means it was loaded frozen.
    _t(
        "可训练参数|可训练的参数|可训练参数量|训练参数为0",
        "trainable parameters|trainable params|trainable%",
        "is_trainable print_trainable_parameters",
    ),
    # "长文本"/"长序列"/"长上下文" for long training samples (unsloth #2366 and torchtune #856 in English: "long
    # context", "context length increase results in OOM"); 序列长度 above covers the setting, these the data.
    _t(
        "长文本|长序列|长上下文|超长文本|超长序列",
        "long context|long sequences|long sequence|long inputs",
    ),
    # The models of RLHF besides the policy: "奖励模型"/"RM"/"价值模型"/"critic" (OpenRLHF #277, #1066;
    # ColossalAI #4360 "Training reward model" OOM).
    _t(
        "奖励模型|奖励函数模型|价值模型|评论家模型",
        "reward model|value model|critic model|critic",
    ),
)

#: DeepSpeed / HF Trainer / LLaMA-Factory config keys; the tokenizer keeps these whole.
CONFIG_KEYS: tuple[str, ...] = (
    "gradient_accumulation_steps",
    "per_device_train_batch_size",
    "per_device_eval_batch_size",
    "train_micro_batch_size_per_gpu",
    "train_batch_size",
    "offload_optimizer",
    "offload_param",
    "zero_optimization",
    "gradient_checkpointing",
    "learning_rate",
    "max_grad_norm",
    "gradient_clipping",
    "cutoff_len",
    "max_seq_length",
    "warmup_steps",
    "warmup_ratio",
    "world_size",
    "stage3_max_live_parameters",
    "stage3_prefetch_bucket_size",
    "reduce_bucket_size",
    "allgather_bucket_size",
    "overlap_comm",
    "contiguous_gradients",
    "expandable_segments",
    "pytorch_cuda_alloc_conf",
    "num_train_epochs",
    "lora_rank",
    "quantization_bit",
    "finetuning_type",
    "bf16",
    "fp16",
    "loss_scale",
    "initial_scale_power",
    "model_name_or_path",
    "lm_head",
    # cards-a (issue #11)
    "max_steps",
    "logging_steps",
    "save_steps",
    "eval_steps",
    "lr_scheduler_type",
    "num_generations",
    "generation_batch_size",
    "steps_per_generation",
    "mini_batch_size",
    "micro_batch_size",
    "global_batch_size",
    "ppo_epochs",
    "num_mini_batches",
    "num_items_in_batch",
    "precompute_ref_log_probs",
    "compute_loss",
    "resume_from_checkpoint",
)

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _has_cjk(s: str) -> bool:
    return bool(_CJK.search(s))


def _is_pattern(form: str) -> bool:
    """A surface form written as a regex with a number class (``共\\d+G``); every other form is literal text."""
    return "\\d" in form


@lru_cache(maxsize=1)
def _matchers() -> tuple[tuple[re.Pattern[str] | None, Term], ...]:
    """One compiled regex per term (ASCII forms on word boundaries, CJK forms as substrings)."""
    out = []
    for term in GLOSSARY:
        alts = [_alternative(form) for form in _forms(term)]
        out.append((re.compile("|".join(alts), re.IGNORECASE) if alts else None, term))
    return tuple(out)


def _forms(term: Term) -> tuple[str, ...]:
    """The surface forms a term is recognised by: Chinese, English, and the config keys among its extras."""
    keys = tuple(w for e in term.extra for w in e.split() if "_" in w and w.strip('"') == w)
    return (*term.zh, *term.en, *keys)


def _alternative(form: str) -> str:
    """One surface form as a regex: ASCII forms on word boundaries, CJK forms as substrings."""
    if _is_pattern(form):  # e.g. "共\d+G" ("4 张卡共 96G"): a number inside, matched as written
        return form
    esc = re.escape(form).replace(r"\ ", r"[\s\-_]?")
    return esc if _has_cjk(form) else rf"(?<![A-Za-z0-9_]){esc}(?![A-Za-z0-9_])"


def _term(en: str) -> Term:
    return next(t for t in GLOSSARY if t.en and t.en[0] == en)


#: (any of these, and any of those) found together imply a third term: "micro batch" + "太小" →
#: "small batch". Keyed by canonical English forms.
COMBINATIONS: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = (
    (("micro batch", "batch size", "effective batch size", "gradient accumulation"), ("small",), "small batch"),
    (("micro batch", "batch size", "effective batch size", "gradient accumulation"), ("large",), "large batch"),
    # "多卡效果不如单卡" / "steps did not drop with more GPUs": the global batch changed with the GPU count.
    (
        ("multi-GPU", "world size"),
        ("worse results", "steps per epoch", "optimizer step"),
        "global batch grows with GPU count",
    ),
    # "单卡能跑，多卡就 OOM": with data parallel every GPU holds what the single GPU held, and more on GPU 0.
    (("multi-GPU", "world size"), ("works on a single GPU",), "pool GPU memory"),
    # "单卡能跑，多卡就被 kill": each data-parallel process loads its own copy into host RAM.
    (("multi-GPU", "world size"), ("process killed",), "host RAM per process"),
    # "训练一段时间后就会溢出显存": an OOM that comes after the run has worked for a while is memory growing over steps
    # (longer samples, the caching allocator, or a leak), not a setup that never fit.
    (("out of memory", "GPU memory"), ("after a while",), "memory keeps growing"),
    # "per_device 2 x GA 8 gives a higher loss than per_device 1 x GA 16": same global batch, different loss.
    (
        ("gradient accumulation", "micro batch", "batch size", "effective batch size"),
        ("loss differs",),
        "loss differs with gradient accumulation",
    ),
)


def _pattern_literal(form: str) -> str:
    """The longest run of plain characters every match of the regex ``form`` contains ("" if unsure).

    A character followed by ``?``, ``*`` or ``{`` may be absent, so it ends the run before it; escapes, classes
    and ``.`` end a run; a form with groups or alternation gets no literal."""
    if "(" in form or "|" in form:
        return ""
    runs: list[str] = []
    run = ""
    i = 0
    while i < len(form):
        ch = form[i]
        if ch in "?*{":
            run = run[:-1]
            runs.append(run)
            run = ""
            if ch == "{":
                i = form.index("}", i)
        elif ch == "+":
            runs.append(run)
            run = ""
        elif ch == "\\":
            runs.append(run)
            run = ""
            i += 1
        elif ch == "[":
            runs.append(run)
            run = ""
            i = form.index("]", i + 1)
        elif ch in ".^$)":
            runs.append(run)
            run = ""
        else:
            run += ch
        i += 1
    runs.append(run)
    return max(runs, key=len)


def _needle(form: str) -> str:
    """A folded literal piece every match of ``form``'s regex contains ("" when there is none: always search).

    Literal forms match with ``[\\s\\-_]?`` between their words, so each word occurs as written (the longest is
    taken); forms written as a regex (``\\d``) give their longest plain run."""
    if _is_pattern(form):
        return fold_case(_pattern_literal(form))
    return fold_case(max(form.split(" "), key=len))


@lru_cache(maxsize=1)
def _form_matchers() -> tuple[tuple[Term, tuple[tuple[str, re.Pattern[str] | None], ...]], ...]:
    """Per term, each surface form's literal piece and its own regex (``None``: the piece is the whole form).

    Why: ``find_terms`` ran one regex with look-arounds and a dozen alternatives per glossary term over every query
    (~7 % of an answer in ``bench/profile_ask.py``). A term's alternation matches somewhere exactly when one of its
    alternatives does, so a form's regex need only run where its literal piece occurs — a substring test. A CJK
    form with no space and no ``\\d`` is matched as a plain substring, case-insensitively: its folded text occurring
    in the folded text is exactly that (``tests/test_perf5_units.py`` checks the folding both ways), so it needs
    no regex at all."""
    return tuple((term, tuple(_form_matcher(form) for form in _forms(term))) for term in GLOSSARY if _forms(term))


def _form_matcher(form: str) -> tuple[str, re.Pattern[str] | None]:
    if _has_cjk(form) and " " not in form and not _is_pattern(form):
        return fold_case(form), None
    return _needle(form), re.compile(_alternative(form), re.IGNORECASE)


def find_terms(text: str) -> list[Term]:
    """The glossary terms that occur in ``text`` (plus those implied by :data:`COMBINATIONS`).

    Each surface form's regex runs only when its literal piece occurs in the case-folded text (the regex still
    decides); :func:`find_terms_unfiltered` is the one-regex-per-term scan, kept to test both find the same."""
    folded = fold_case(text)
    found = [
        term
        for term, forms in _form_matchers()
        if any((not needle or needle in folded) and (rx is None or rx.search(text) is not None) for needle, rx in forms)
    ]
    return _with_combinations(found)


def find_terms_unfiltered(text: str) -> list[Term]:
    """:func:`find_terms` without the substring prefilter: every term's regex over ``text``."""
    return _with_combinations([term for rx, term in _matchers() if rx is not None and rx.search(text)])


def _with_combinations(found: list[Term]) -> list[Term]:
    """``found`` plus the terms :data:`COMBINATIONS` imply (appended in place, in the table's order)."""
    canon = {t.en[0] for t in found if t.en}
    for left, right, implied in COMBINATIONS:
        if canon & set(left) and canon & set(right) and implied not in canon:
            found.append(_term(implied))
            canon.add(implied)
    return found


def _present(word: str, lowered: str) -> bool:
    if _has_cjk(word):
        return word in lowered
    return re.search(rf"(?<![a-z0-9_]){re.escape(word)}(?![a-z0-9_])", lowered) is not None


#: A script or config file name whose words are joined by ``_`` or ``-`` (``run_dpo.sh``, ``llama3_lora_sft.yaml``,
#: ``ds_z3_config.json``, ``finetune-qlora.py``). Users name the method they run only there as often as not
#: ("I ran the run_dpo.sh with default settings but cuda oom", OpenFedLLM #48); the terms' word boundaries exclude
#: ``_`` so that config keys stay whole, which hid those words from the glossary.
_FILE_NAME = re.compile(r"(?<![A-Za-z0-9])([A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)+)\.(?:sh|py|ya?ml|json)(?![A-Za-z0-9])")


def file_name_words(text: str) -> str:
    """The words of the script and config file names in ``text``, space separated (``run_dpo.sh`` → ``run dpo``)."""
    names = dict.fromkeys(m.group(1) for m in _FILE_NAME.finditer(text))
    return " ".join(re.sub(r"[_-]+", " ", n) for n in names)


def expand_query(text: str) -> str:
    """``text`` plus the canonical English and Chinese forms of the domain terms it mentions.

    Only words not already in the text (case-insensitively) are appended. Text without
    domain terms is returned unchanged. The words of script and config file names count as mentioned
    (:func:`file_name_words`).
    """
    lowered = text.lower()
    extra: list[str] = []
    seen: set[str] = set()
    names = file_name_words(text)
    for term in find_terms(f"{text}\n{names}" if names else text):
        candidates = [*term.en[:1], *term.extra, *term.zh[:1]]
        for word in candidates:
            key = word.lower()
            if key in seen or _present(key, lowered):
                continue
            seen.add(key)
            extra.append(word)
    if not extra:
        return text
    return f"{text} ({' ; '.join(extra)})"


def user_dictionary() -> list[str]:
    """Chinese domain terms (and config keys) for jieba's user dictionary, longest first."""
    words = {form for term in GLOSSARY for form in term.zh if _has_cjk(form) and not _is_pattern(form)}
    words.update(CONFIG_KEYS)
    return sorted(words, key=lambda w: (-len(w), w))


__all__ = ["Term", "GLOSSARY", "CONFIG_KEYS", "find_terms", "expand_query", "file_name_words", "user_dictionary"]
