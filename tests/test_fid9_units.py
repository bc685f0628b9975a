"""Stated-value fidelity (issue #10), round 9: formats of paste and phrasings the reader missed.

Each case is built from the *format* (a realistic paste of that kind), not from one dev message's words.
Fast tier: text processing only, no model.
"""

from __future__ import annotations

from calculators.diagnose import detect_artifacts
from rag.parts import split_message
from rag.slots import classify_key, extract_printed, extract_slots
from tests.message_reading import setup_of

# ---- gpustat (https://github.com/wookayin/gpustat) ------------------------------------------------------
GPUSTAT = (
    "zero3 still OOMs, gpustat while it runs:\n"
    "```\n"
    "gpu-node-07            Thu Dec  3 10:00:00 2026  535.104.05\n"
    "[0] Tesla V100-SXM2-32GB | 45°C, 100 % | 32507 / 32510 MB | bob(32497M)\n"
    "[1] Tesla V100-SXM2-32GB | 44°C,  97 % | 31020 / 32510 MB | bob(31010M)\n"
    "[2] Tesla V100-SXM2-32GB | 30°C,   0 % |     3 / 32510 MB |\n"
    "```\n"
    "why is memory full?"
)


def test_gpustat_lines_are_a_gpu_table():
    parts = split_message(GPUSTAT)
    assert [p.kind for p in parts] == ["prose", "nvidia_smi", "prose"]


def test_gpustat_gives_usage_capacity_and_busy_gpu_count():
    setup = setup_of(GPUSTAT)
    # observed usage is the busiest card's, never the capacity
    assert setup.get("observed_memory_gb") == round(32507 / 1024, 2)
    assert setup.source("observed_memory_gb") == "nvidia_smi"
    assert setup.get("gpu_memory_gb") == round(32510 / 1024, 2)
    assert setup.get("gpu") == "v100-32gb"
    # the idle card [2] runs nothing: two GPUs in the job
    assert setup.get("world_size") == 2


def test_gpustat_unfenced_with_old_temperature_mark_and_pids():
    text = (
        "OOM on my 3090s\n"
        "[0] NVIDIA GeForce RTX 3090 | 60'C,  98 % | 23012 / 24576 MB | alice/4242(22990M)\n"
        "[1] NVIDIA GeForce RTX 3090 | 61'C,  99 % | 23100 / 24576 MB | alice/4243(23080M)\n"
    )
    arts = [a for a in detect_artifacts(text) if a.kind == "nvidia_smi"]
    assert len(arts) == 1
    f = arts[0].fields
    assert [g["index"] for g in f["smi_gpus"]] == [0, 1]
    assert [p["pid"] for p in f["smi_processes"]] == [4242, 4243]
    setup = setup_of(text)
    assert setup.get("gpu") == "rtx-3090" and setup.get("world_size") == 2
    assert setup.get("observed_memory_gb") == round(23100 / 1024, 2)


def test_gpustat_without_process_column_counts_the_cards_in_use():
    rows = (
        "".join(f"[{i}] Tesla V100-SXM2-32GB | 70°C, 100 % | {32000 + i} / 32510 MB |\n" for i in range(6))
        + "[6] Tesla V100-SXM2-32GB | 30°C,   0 % |     5 / 32510 MB |\n"
    )
    setup = setup_of("显存都占得很满，怎么回事？\n```\nSun Jul  7 23:21:53 2024  470.239.06\n" + rows + "```\n")
    assert setup.get("world_size") == 6
    assert setup.get("observed_memory_gb") == round(32005 / 1024, 2)


def test_prose_count_wins_over_gpustat_count():
    setup = setup_of("I train on 4 GPUs.\n" + GPUSTAT.split("\n", 1)[1])
    assert setup.get("world_size") == 4


# ---- DeepSpeed offload switched off with device none ------------------------------------------------------
def test_offload_device_none_in_yaml_flow_and_block_style():
    flow = "zero_optimization:\n  stage: 3\n  offload_optimizer: {device: none}\n  offload_param: {device: none}\n"
    s = extract_slots(flow)
    assert (s.zero_stage, s.offload_optimizer, s.offload_param) == (3, False, False)
    block = "ds config:\n```yaml\nzero_optimization:\n  stage: 3\n  offload_optimizer:\n    device: none\n  offload_param:\n    device: cpu\n```\nOOM"
    setup = setup_of(block)
    assert (setup.get("offload_optimizer"), setup.get("offload_param")) == (False, True)


def test_offload_param_alone_does_not_offload_the_optimizer():
    setup = setup_of(
        '```json\n{"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu", "pin_memory": true}}}\n```'
    )
    assert setup.get("offload_param") is True
    assert setup.get("offload_optimizer") is None
    # the general word still means the optimizer states move
    assert extract_slots("ZeRO-2 with CPU offload").offload_optimizer is True
    assert (
        extract_slots('"offload_param": {"device": "none"}, "offload_optimizer": {"device": "cpu"}').offload_param
        is False
    )


# ---- model ids glued to Chinese -----------------------------------------------------------------------------
def test_sized_model_id_glued_to_chinese_is_read():
    assert extract_slots("使用cli_demo运行Foo-Chat-34B，被kill掉了", prose=True).model_text == "Foo-Chat-34B"
    s = extract_slots("我运行Bar-VL-6B的finetune时显存不够", prose=True)
    assert s.model_text == "Bar-VL-6B" and s.num_params == 6e9


# ---- the method asked about, and a quantization set aside ------------------------------------------------------
def test_lora_asked_about_is_the_method_when_no_other_is_stated():
    assert extract_slots("请问用4090单卡是否可以lora微调13b模型？", prose=True).finetune == "lora"
    assert extract_slots("两张3090能否qlora训练34b？", prose=True).finetune == "qlora"
    # next to a stated full fine-tune, the LoRA asked about stays the alternative
    assert extract_slots("全参数微调是否可行……如果不可行，那么是否可以多阶段lora微调？").finetune == "full"
    assert extract_slots("能否不用lora微调", prose=True).finetune == "full"


def test_quantization_set_aside_is_not_qlora():
    s = extract_slots("lora微调,如果不考虑 int4/8 量化, 微调后会降低显存占用吗", prose=True)
    assert (s.finetune, s.quantization) == ("lora", None)
    s = extract_slots("LoRA, excluding 4-bit quantization, does it save memory?", prose=True)
    assert (s.finetune, s.quantization) == ("lora", None)
    assert extract_slots("lora with int4 quantization", prose=True).finetune == "qlora"


# ---- one measurement per line; a precision compared with fp32; a command inside a sentence -------------------------
def test_each_line_of_a_measurement_table_is_its_own_report():
    s = extract_slots("seqlen 1024, batchsize 1  占用 17.9G\nseqlen 2048, batchsize 1  占用 26.1G\n", prose=True)
    assert s.observed_memory_gb == 17.9  # the first row, whose seq_len and batch are the ones read
    # within one report the peak still counts
    assert extract_slots("平均显存占用在60G左右，部分单卡到75G左右", prose=True).observed_memory_gb == 75.0


def test_half_precision_compared_with_fp32_is_the_precision_asked_about():
    assert (
        extract_slots("混合精度 vs fp32 显存对比\n`FP32: 146.3 MB | BF16: 194.4 MB`", prose=True).precision
        == "amp-bf16"
    )
    assert extract_slots("fp32 vs fp16 memory: why is there no saving?", prose=True).precision == "amp-fp16"
    assert extract_slots("I train in fp32 and it OOMs", prose=True).precision == "fp32"


def test_command_started_inside_a_sentence_is_a_command_and_sets_the_precision():
    text = (
        "如果设置bf16: true，两者都是报错不支持bf16\n\n"
        "如果设置fp16: true，llamafactory-cli train --model_name_or_path some-9b --stage sft --finetuning_type full "
        "--per_device_train_batch_size 1 --fp16 True\n"
    )
    parts = split_message(text)
    assert [p.kind for p in parts] == ["prose", "command"]
    assert parts[1].text.startswith("llamafactory-cli train")
    setup = setup_of(text)
    assert setup.get("precision") == "amp-fp16"
    assert setup.source("precision") == "command"
    # the run's flag wins over a precision the prose only asks about
    setup = setup_of(
        "是否用fp16感觉没咋影响\n```\npython train.py \\\n    --per_device_train_batch_size 2 \\\n    --fp32\n```"
    )
    assert setup.get("precision") == "fp32"
    # a launcher's name opening a sentence is still prose
    assert [p.kind for p in split_message("deepspeed 报错了，怎么办")] == ["prose"]


# ---- batch settings as people write them in prose ---------------------------------------------------------------
def test_train_batchsize_spelt_as_one_word_is_the_global_batch():
    assert classify_key("train_batchsize") == "train_batch_size"
    s = extract_slots("train_batchsize=64\nper device batch size=2 (GA adjusted to keep it)", prose=True)
    assert (s.train_batch_size, s.train_micro_batch_size_per_gpu) == (64, 2)


def test_key_glued_to_a_chinese_verb_is_an_assignment():
    s = extract_slots("实验中train_batch_size设置为8，micro_train_batch_size设置为2，只用了一张卡", prose=True)
    assert (s.train_batch_size, s.train_micro_batch_size_per_gpu) == (8, 2)


def test_global_batch_written_as_a_product_of_named_settings():
    s = extract_slots(
        "两种设置下 batch size = gradient_accumulation_steps*per_device_train_batch_size*num_gpus = 256", prose=True
    )
    assert s.train_batch_size == 256
    # a repo whose `train_batch_size` is per device: the product names it as a factor, so it is the micro batch
    s = extract_slots(
        "我设置的train_batch_size=2, gradient_accumulation_steps=1, devices=4，"
        "总batch_size=train_batch_size * gradient_accumulation_steps * devices = 8 吧？",
        prose=True,
    )
    assert (s.train_micro_batch_size_per_gpu, s.train_batch_size) == (2, 8)
    # a product of other things is no batch
    assert extract_slots("hidden_size * num_layers = 4096", prose=True).train_batch_size is None


# ---- GPU names and sizes as people write them ------------------------------------------------------------------
def test_gpu_name_glued_to_gpu_or_a_count():
    s = extract_slots("### Others\n\nGPU4090\n训练数据：alpaca", prose=True)
    assert (s.gpu, s.gpu_text) == ("rtx-4090", "4090")
    s = extract_slots("I run the code on 8A100 and GPU 0 uses twice the memory", prose=True)
    assert (s.gpu_text, s.world_size) == ("A100", 8)
    assert extract_slots("step 13090, loss 2.1", prose=True).gpu is None


def test_card_size_times_count_and_with_of_memory():
    s = extract_slots("单机双卡 2*48GB，lora 训练 34B 会爆显存", prose=True)
    assert (s.gpu_memory_gb, s.world_size) == (48.0, 2)
    assert extract_slots("我用4张卡，总显存16G*4，为什么还是OOM", prose=True).gpu_memory_gb == 16.0
    assert extract_slots("I use two GPUs with 24GB of memory each", prose=True).gpu_memory_gb == 24.0
    assert extract_slots("- CUDA device(s): NVIDIA vGPU-48GB, NVIDIA vGPU-48GB").gpu_memory_gb == 48.0
    assert extract_slots("请问用80G单卡能训练吗", prose=True).gpu_memory_gb == 80.0
    # amounts, not cards
    assert (
        extract_slots("fine-tuning a 7B model requires about 7 x 4 x 4 = 112 GB of VRAM", prose=True).gpu_memory_gb
        is None
    )
    assert (
        extract_slots("logits occupy 1000 * 512 * 30522 / 1024^3 > 14 GB of memory", prose=True).gpu_memory_gb is None
    )
    assert extract_slots("参数：14.3G * 0.2643%=0.0378G，梯度 0.0378G * 2", prose=True).gpu_memory_gb is None


# ---- what PyTorch and DeepSpeed print, pasted in part; usage as people report it ----------------------------------
def test_torch_oom_tail_without_its_head_gives_capacity_and_use():
    text = (
        "error:GPU 0 has a total capacity of 47.50 GiB of which 1.06 GiB is free. Process 2211 has 46.43 GiB memory "
        "in use. Of the allocated memory 44.90 GiB is allocated by PyTorch, and 1.01 GiB is reserved by PyTorch but "
        "unallocated."
    )
    setup = setup_of(text)
    assert (setup.get("gpu_memory_gb"), setup.get("observed_memory_gb")) == (47.5, 46.43)
    # several processes listed: which one is the run is not known
    s = extract_printed(
        "GPU 0 has a total capacity of 79.15 GiB of which 10.00 MiB is free. Process 11 has 40.00 GiB memory in "
        "use. Process 12 has 39.10 GiB memory in use."
    )
    assert (s.gpu_memory_gb, s.observed_memory_gb) == (79.15, None)


def test_deepspeed_loss_scaler_line_is_a_log_that_says_fp16():
    text = "训练时经常报梯度溢出警告？\nRank 0 Skipping step. Attempted loss scale: 131072, reducing to 65536"
    assert [p.kind for p in split_message(text)] == ["prose", "log"]
    assert "fp16" in setup_of(text).get("precision")


def test_usage_in_mb_and_memory_usage_is_observed_not_capacity():
    s = extract_slots("PPO训练时显存已经占用38900MiB，为什么", prose=True)
    assert (s.observed_memory_gb, s.gpu_memory_gb) == (round(38900 / 1024, 2), None)
    assert (
        extract_slots("on two gpus the mem usage per gpu is about 13G, but the estimate", prose=True).observed_memory_gb
        == 13.0
    )
    s = extract_slots("The first step uses 3000 MB and then every later step 3500 MB. Is this normal?", prose=True)
    assert s.observed_memory_gb == round(3500 / 1024, 2)
    assert extract_slots("step 1000 uses 2048 tokens", prose=True).observed_memory_gb is None


def test_deepspeed_config_print_gives_the_batch_the_stage_and_the_precision():
    lines = [
        ("train_batch_size", ".............", "64"),
        ("train_micro_batch_size_per_gpu", "", "2"),  # 30 characters: no dots
        ("gradient_accumulation_steps", "..", "4"),
        ("world_size", "...................", "8"),
        ("zero_optimization_stage", "......", "2"),
        ("fp16_enabled", ".................", "True"),
        ("bfloat16_enabled", ".............", "False"),
    ]
    log = "\n".join(f"[2024-05-01 10:00:00,000] [INFO] [config.py:988:print]   {k} {d} {v}" for k, d, v in lines)
    setup = setup_of("OOM with this config:\n```\n" + log + "\n```")
    assert (
        setup.get("train_batch_size"),
        setup.get("train_micro_batch_size_per_gpu"),
        setup.get("gradient_accumulation_steps"),
        setup.get("world_size"),
        setup.get("zero_stage"),
        setup.get("precision"),
    ) == (64, 2, 4, 8, 2, "fp16-mixed")
    newer = "[INFO] [config.py:1000:print]   bfloat16_config .............. enabled=True immediate_grad_update=False"
    assert extract_printed(newer).precision == "bf16-mixed"


def test_task_manager_dedicated_memory_is_use_of_capacity():
    s = extract_slots("Task manager shows Dedicated GPU memory 7.8/8.0 GB, Shared GPU memory 2.1/15.9 GB", prose=True)
    assert (s.observed_memory_gb, s.gpu_memory_gb) == (7.8, 8.0)
    s = extract_slots("任务管理器里 专用 GPU 内存 23.5/24.0 GB，共享 GPU 内存 0.1/31.9 GB", prose=True)
    assert (s.observed_memory_gb, s.gpu_memory_gb) == (23.5, 24.0)
