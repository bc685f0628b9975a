"""Stated-value fidelity (issue #10): every number the user stated is read, with where it came from.

Each case is a snippet of a real message from the dev set's sources (tests/data/real_questions), cut to the part that
states the value. Fast tier: text processing only, no model.
"""

from __future__ import annotations

import pytest

from rag.parts import split_message
from rag.slots import classify_key, extract_printed, extract_slots
from tests.message_reading import setup_of


# ---- keys spelt every framework's way -----------------------------------------------------------------
@pytest.mark.parametrize(
    "key, expected",
    [
        ("per_device_train_batch_size", "train_micro_batch_size_per_gpu"),
        ("PER_DEVICE_BATCH_SIZE", "train_micro_batch_size_per_gpu"),  # InternVL shell scripts
        ("device_train_microbatch_size", "train_micro_batch_size_per_gpu"),  # OLMo
        ("micro_train_batch_size", "train_micro_batch_size_per_gpu"),  # OpenRLHF
        ("per_gpu_train_batch_size", "train_micro_batch_size_per_gpu"),  # old transformers examples
        ("global_train_batch_size", "train_batch_size"),
        ("GRADIENT_ACCUMULATIONS", "gradient_accumulation_steps"),  # open-instruct
        ("accumulate_grad_batches", "gradient_accumulation_steps"),  # Lightning
        ("per_device_eval_batch_size", None),
        ("rollout_batch_size", None),
        ("eval_accumulation_steps", None),
        ("max_new_tokens", None),
    ],
)
def test_classify_key(key, expected):
    assert classify_key(key) == expected


def test_env_style_settings_in_prose():
    # allenai/open-instruct#464
    s = extract_slots(
        "for 8 GPUs, I should set NUM_PROCESSES=8, PER_DEVICE_BATCH_SIZE=1, GRADIENT_ACCUMULATIONS=16 "
        "for an effective batch size of 128?"
    )
    assert (s.train_micro_batch_size_per_gpu, s.gradient_accumulation_steps, s.world_size) == (1, 16, 8)


def test_bare_batch_size_next_to_micro_batch_is_global():
    # tloen/alpaca-lora#397: --batch_size is the global batch there
    setup = setup_of(
        "what is micro_batch_size?\n```\npython finetune.py \\\n    --batch_size 128 \\\n    --micro_batch_size 4\n```"
    )
    assert setup.get("train_micro_batch_size_per_gpu") == 4
    assert setup.get("train_batch_size") == 128


def test_hf_trainer_banner_in_a_log():
    # LlamaChinese/Llama-Chinese#242
    log = (
        "[INFO|trainer.py:1715] 2023-10-19 09:44:55,247 >>   Instantaneous batch size per device = 1\n"
        "[INFO|trainer.py:1718] 2023-10-19 09:44:55,247 >>   Total train batch size (w. parallel, distributed & "
        "accumulation) = 64\n[INFO|trainer.py:1719] 2023-10-19 09:44:55,247 >>   Gradient Accumulation steps = 8"
    )
    setup = setup_of("为什么显存这么大\n" + log)
    assert setup.get("train_micro_batch_size_per_gpu") == 1 and setup.source("train_micro_batch_size_per_gpu") == "log"
    assert setup.get("train_batch_size") == 64 and setup.get("gradient_accumulation_steps") == 8


def test_trl_global_batch_error():
    # huggingface/open-r1#249
    s = extract_printed(
        "ValueError: The global train batch size (7 x 1) must be evenly divisible by the number of "
        "generations per prompt (8)."
    )
    assert (s.world_size, s.train_micro_batch_size_per_gpu) == (7, 1)


# ---- GPUs: the user's own card, its size, names beyond the presets -------------------------------------------
@pytest.mark.parametrize(
    "text, gpu, gpu_text, memory",
    [
        # haotian-liu/LLaVA#157: the A100/H100 are what flash-attention needs; the user's cards are the 3090s
        (
            "the flash-attention requires A100 or H100 when Head dim > 64. I fine-tune the LLaVA-7B model on two RTX-3090s.",
            "rtx-3090",
            "RTX-3090s",
            None,
        ),
        # hiyouga/LLaMA-Factory#3708: a count glued to the name, the name glued to the next word
        ("4张3090lora微调Qwen7B爆显存", "rtx-3090", "3090", None),
        # Neutralzz/BiLLa#37: the P100 has a preset since stop 44 (16 GB, NVIDIA's data sheet) ...
        ("我们在8*P100上进行第二阶段的全参数微调", "p100", "P100", None),
        # ... and a card without a preset is kept as written, never mapped to another card
        ("我们在8*P4上进行第二阶段的全参数微调", None, "P4", None),
        # tloen/alpaca-lora#191: the 16 GB V100, not the 32 GB preset; "using 9G" is use, not size
        ("I am using V100 with 16G memory. ... while only using 9G memory.", "v100-16gb", "V100", 16.0),
        # hpcaitech/ColossalAI#6272: a modded 22 GB 2080 Ti matches no preset: its size is kept, the 11 GB preset is not
        ("I got resource with 1T cpu mem and 4 2080ti22GB cards", None, "2080ti", 22.0),
        # hiyouga/LLaMA-Factory#747
        ("using 3 sets of machines containing 8 A100s (40G)", "a100-40gb", "A100s", 40.0),
    ],
)
def test_gpu_as_named(text, gpu, gpu_text, memory):
    s = extract_slots(text)
    assert (s.gpu, s.gpu_text, s.gpu_memory_gb) == (gpu, gpu_text, memory)


def test_capacity_is_not_a_requirement_and_reads_mib():
    # hiyouga/ChatGLM-Efficient-Tuning#394: the readme's "8G" is a requirement; the card says 11264MiB
    s = extract_slots(
        "根据readme中的表格，最小运行显存为8G。\n我的服务器配置为4块 NVIDIA GeForce RTX 2080，显存为11264MiB"
    )
    assert s.gpu_memory_gb == 11.0 and s.gpu_text == "NVIDIA GeForce RTX 2080"


def test_observed_use_is_never_capacity():
    # zai-org/GLM-4#324
    s = extract_slots("我的服务器上有两张A40，当其中一张显卡的显存占用达到大概20G的时候，另一张显卡也会被使用")
    assert s.gpu_memory_gb is None and s.observed_memory_gb == 20.0


# ---- parts: the user's sentences that quote an error stay prose ---------------------------------------------
def test_sentence_quoting_an_error_is_prose():
    # hiyouga/LLaMA-Factory#260
    parts = split_message(
        "My device:\nV100 32G\n\nThis is interesting because I use 8 V100 32G, which is also 240G, "
        "but encounter `CUDA out of memory` Error. I use deepspeed Zero-2."
    )
    assert [p.kind for p in parts] == ["prose"]


def test_title_line_is_prose_and_a_wrapped_oom_stays_one_error():
    # Alpha-VLLM/LLaMA2-Accessory#26 (title); SCIR-HI/Med-ChatGLM#11 (an OOM wrapped over lines)
    parts = split_message("llama2 13b out of memory on A800\nI run the script.")
    assert parts[0].kind == "prose" and "A800" in parts[0].text
    oom = (
        "OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 39.56\n"
        "GiB total capacity; 37.88 GiB already allocated; 32.56 MiB free; 38.21 GiB\n"
        "reserved in total by PyTorch) If reserved memory is >> allocated memory try\n"
    )
    parts = split_message("显存不够，请问怎么办\n" + oom)
    assert [p.kind for p in parts] == ["prose", "error"]
    setup = setup_of("显存不够，请问怎么办\n" + oom)
    assert setup.get("gpu_memory_gb") == pytest.approx(39.56) and setup.source("gpu_memory_gb") == "error"


# ---- world size --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, world_size",
    [
        ("I am using one 32GB V100 GPU to do this job.", 1),  # 2U1/Qwen-VL-Series-Finetune#184
        ("I try to full-parameter finetune Qwen-VL on a single 80G A800.", 1),  # QwenLM/Qwen-VL#242
        ("below is the configuration of my GPU: 2 16G A4000.", 2),  # OptimalScale/LMFlow#213
        ("GPU: A100 80G * 1", 1),  # meta-llama/llama-cookbook#792
        ("GPU: TITAN RTX 24GB *2", 2),  # LianjiaTech/BELLE#402
        ("total batchsize is 4096, GPU num is 8, so per gpu batch size is 512?", 8),  # zdou0830/METER#18
        ("我用8个gpu训练，其中每个gpu的batch size设为2。", 8),  # hiyouga/LLaMA-Factory#3215
        (
            "The cpu memory usage stays same if I use 1,2,4 gpus, however, if I use 8 gpus, the cpu memory usage "
            "increases a lot",
            8,
        ),  # deepspeedai/DeepSpeed#2841
        ("一张显卡休息，另外一张显卡使劲工作", 2),  # hiyouga/LLaMA-Factory#7439
        ("比如我上次2卡训练到了9501步，总计10500步，二次续训，变成单卡，结果变成了9501/21000", 1),  # LLaMA-Factory#3321
        (
            "Configured as 3 groups with 8 A100 graphics cards (total of 24 A100-40G graphics cards)",
            24,
        ),  # LLaMA-Factory#747
        ("when I want to do full SFT on 1 8xH100 node.", 8),  # hiyouga/LLaMA-Factory#6942
    ],
)
def test_world_size_as_written(text, world_size):
    assert extract_slots(text).world_size == world_size


def test_prose_count_per_node_with_a_multi_node_launch():
    # hiyouga/LLaMA-Factory#747: "8 A100s" in the prose was one node of the 3 the command launches
    setup = setup_of(
        "I'm fine-tuning the llama-2-70B using machines containing 8 A100s (40G)\n"
        "```\ndeepspeed --num_gpus 8 \\\n    --num_nodes 3 \\\n    src/train_bash.py --stage sft\n```"
    )
    assert setup.get("world_size") == 24 and "world_size" not in setup.conflicts


def test_world_size_deepspeed_saw_is_kept_next_to_the_users():
    # bigcode-project/starcoder#41: 8 GPUs launched, DeepSpeed's assertion saw 1 — that disagreement is the diagnosis
    setup = setup_of(
        "* GPU count and types: 8 X A100 (80GB) GPUs\n```\nAssertionError: Check batch related parameters. "
        "train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 256 != 4 * 8 "
        "* 1\n```"
    )
    assert setup.get("world_size") == 8
    assert [(c.value, c.source) for c in setup.conflicts["world_size"]] == [(1, "error")]
    assert setup.get("train_batch_size") == 256 and setup.get("gradient_accumulation_steps") == 8


# ---- method and precision ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, finetune",
    [
        (
            "Some alternatives we are considering are just doing LoRA, which can work. I am just exploring if it is possible "
            "to fine-tune the full model.",
            "full",
        ),  # EleutherAI/gpt-neox#892
        ("how can full parameters should be finetuned rather than lora?", "full"),  # deepseek-ai/DeepSeek-Coder#78
        (
            "During the full fine-tuning process ... I have also tried using LoRA for fine-tuning",
            "full",
        ),  # torchtune#1871
        (
            'File "/usr/local/lib/python3.10/dist-packages/peft/peft_model.py", line 1129, in forward',
            "lora",
        ),  # LLaMA-Factory#3508
    ],
)
def test_finetune_method(text, finetune):
    assert extract_slots(text).finetune == finetune


@pytest.mark.parametrize(
    "text, precision",
    [
        # 2U1/Qwen-VL-Series-Finetune#184: the bf16 is the one the V100 lacks
        ("I am using fp16 since V100 GPU doesn't support bf16.", "amp-fp16"),
        # LLaMA-Factory#493: downcast_bf16: 'no' is off; mixed_precision: fp16 is the setting
        ("distributed_type: DEEPSPEED downcast_bf16: 'no' machine_rank: 0 mixed_precision: fp16", "fp16-mixed"),
        # huggingface/trl#1111: the 4-bit compute dtype is not the training precision
        ("bnb_4bit_compute_dtype=torch.bfloat16\n        fp16=True,", "amp-fp16"),
        # Lightning: precision=16 / "16-mixed" / "32-true"
        ("T5_copy训练参数precision=16，batch=16", "amp-fp16"),  # renmada/t5-pegasus-pytorch#59
        ('I re-vise the precision to "16-mixed",', "amp-fp16"),  # Lightning-AI/lit-llama#204
        (
            "For finetuning santacoder (no_fp16, batch_size 2 and sequence length of 2048)",
            "fp32",
        ),  # bigcode/starcoder#14
        ('"fp16": {"enabled": false}, "bf16": {"enabled": true}', "amp-bf16"),
    ],
)
def test_precision_as_set(text, precision):
    assert extract_slots(text).precision == precision


def test_gpu_in_an_nvidia_smi_table_and_quoted_setups():
    # woshiyyya/DFGN-pytorch#23: the card is named only in the nvidia-smi table
    smi = (
        "+-----------------------------------------------------------------------------+\n"
        "| NVIDIA-SMI 418.67       Driver Version: 418.67       CUDA Version: 10.1     |\n"
        "|-------------------------------+----------------------+----------------------+\n"
        "|   0  Tesla P100-PCIE...  On   | 00000000:00:06.0 Off |                    0 |\n"
        "| N/A   40C    P0    36W / 250W |  11677MiB / 12198MiB |      0%      Default |\n"
        "+-------------------------------+----------------------+----------------------+\n"
    )
    setup = setup_of("是GPU太小的问题吗？\n" + smi)
    assert setup.get("gpu_text") == "Tesla P100-PCIE" and setup.source("gpu_text") == "nvidia_smi"
    # ZhuiyiTechnology/t5-pegasus#8: the 3090s are in a quotation of the author's setup
    s = extract_slots(
        "单卡Tesla V100；16G显存\n（追问）我看作者用的是3090，这个应该是24G的吧\n“使用6张3090训练了100万步”"
    )
    assert (s.gpu, s.gpu_text, s.gpu_memory_gb) == ("v100-16gb", "Tesla V100", 16.0)


def test_zero_stage_glued_to_chinese():
    # QwenLM/Qwen3-VL#126
    assert extract_slots("使用DeepSpeed ZeRO3训练模型时").zero_stage == 3


def test_wrapped_oom_key_line_is_the_exception():
    parts = split_message(
        "显存不够\nOutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 39.56\n"
        "GiB total capacity; 37.88 GiB already allocated; 32.56 MiB free\n"
        "setting max_split_size_mb to avoid fragmentation. See PYTORCH_CUDA_ALLOC_CONF\n"
    )
    assert parts[-1].key_line.startswith("OutOfMemoryError: CUDA out of memory")


# ---- batch and observed use in sentences -------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, micro",
    [
        ("测试模型：BLOOM 560M & BLOOM 1.1B, training batch 为1", 1),  # LianjiaTech/BELLE#402
        ("为啥我12G显存 batch_size 要设置成2才不会oom", 2),  # Morizeyao/GPT2-Chinese#160
        ("我用单张16G的V100，batchsize最多设置为2，占用显存约10G", 2),  # PaddlePaddle/PaddleSeg#985
        ("batch_size默认使用1 数据集为1800多条 epoch为3 为什么step是351呢？", 1),  # modelscope/ms-swift#1067
        ("The above code works well with a 16GB Nvidia Tesla batch size of 96.", 96),  # huggingface/peft#785
        (
            'per_device_train_batch_size: int = field(default=1, metadata={"help": "训练的batch size"})',
            1,
        ),  # LLM-Dojo#15
        ("total batchsize is 4096, GPU num is 8, so per gpu batch size is 512?", 512),  # zdou0830/METER#18
        ("a batch of 1800 samples", None),
    ],
)
def test_micro_batch_in_sentences(text, micro):
    assert extract_slots(text).train_micro_batch_size_per_gpu == micro


@pytest.mark.parametrize(
    "text, observed",
    [
        ("looking in nvidia-smi I see 9.6GB in both cases", 9.6),  # bitsandbytes#22
        ("zero2占35-39G\nzero3也占35-39G，显存达到上限", 39.0),  # LLaMA-Factory#493
        ("使用zero3的情况下显存占用也在17个G左右", 17.0),  # OpenBMB/MiniCPM-V#537
        ("I can see the memory usage increases from 5Gb to 61Gb", 61.0),  # bigcode/starcoder#47
        ("Also, training loads GPU with 10GB of memory.", 10.0),  # huggingface/trl#1111
    ],
)
def test_observed_use(text, observed):
    s = extract_slots(text)
    assert s.observed_memory_gb == observed and s.gpu_memory_gb != observed


@pytest.mark.parametrize(
    "text, world_size",
    [
        (
            "我用3个12G的卡训练，但是第一个卡显存会爆掉……但是用单卡来跑的话batchsize可以设置为6",
            3,
        ),  # pytorch_classification#43
        ("qwen1.5-4b全量训练8*80G显卡batch设为1会爆显存", 8),  # LLaMA-Factory#2992
        ("你好，微调模型单卡，多卡需要多大的显存？……如果把单卡1个batch需要的显存分到两个显卡上", 2),  # gpt2-ml-torch#11
        ("trainer = pl.Trainer(gpus = 1, precision = 32)", 1),  # lllyasviel/ControlNet#456
        ("Fine-tuning Method\tGPUs: 2\tGPUs: 4\tGPUs: 8\n我在8张3090上面训练", 8),  # OpenBMB/MiniCPM-V#537
    ],
)
def test_world_size_single_is_a_fallback(text, world_size):
    assert extract_slots(text).world_size == world_size


def test_keys_that_only_look_like_settings():
    assert classify_key("ids_per_batch") is None  # person-reid: not a batch size
    assert classify_key("accum_batch_size") == "train_batch_size"  # Caffe SSD: the accumulated batch
    assert classify_key("gradient_accumulate_step") == "gradient_accumulation_steps"  # DFGN-pytorch#23
    assert extract_slots("我设置一个更小的gradient_accumulate_step=5").gradient_accumulation_steps == 5


@pytest.mark.parametrize(
    "text, seq_len",
    [
        ("8 GPUs, max_words = 512, 7B", 512),  # LLaMA2-Accessory#91
        ("   --max_len 2048 \\", 2048),  # OpenRLHF#384
        ("max_length: Optional[int] = 1024\nmax_prompt_length: Optional[int] = 512", 1024),  # LLM-Dojo#15
        ("（追问）长度已改成4096，batch是1", 4096),  # LLaMA-Factory#2992
        ("train a lora of 512+ ctx sizes in it?", 512),  # alpaca-lora#221
    ],
)
def test_sequence_length(text, seq_len):
    assert extract_slots(text).seq_len == seq_len


@pytest.mark.parametrize(
    "text, stage",
    [
        (
            '[BUG]deepspeed-zero-2-cpu-offloading\n"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme"}}',
            3,
        ),
        ("### Reproduction\nds3配置", 3),  # LLaMA-Factory#4078
        ("--deepspeed=deepspeed_z3_config_bf16.json", 3),  # bigcode/starcoder#41
    ],
)
def test_zero_stage_as_set(text, stage):
    assert extract_slots(text).zero_stage == stage


def test_zero3_optimizer_in_a_log():
    # baichuan-inc/Baichuan2#113
    assert extract_printed("[INFO] [Driver] optimizer = DeepSpeedZeroOptimizer_Stage3(").zero_stage == 3


@pytest.mark.parametrize(
    "text, model_text, num_params",
    [
        ("双卡4090 lora微调Baichuan13b发生OOM错误", "Baichuan13b", 13e9),  # LLaMA-Factory#634
        ("llama factory 0.8.2\nyi34B   zero3  lora，模型load时显存先涨到50G+", "yi34B", 34e9),  # LLaMA-Factory#4745
        ("预训练codeqwen1.5-7b时显存分布异常", "codeqwen1.5-7b", None),  # LLaMA-Factory#3908
    ],
)
def test_model_name_and_its_size(text, model_text, num_params):
    s = extract_slots(text)
    assert s.model_text == model_text and (num_params is None or s.num_params == num_params)


def test_no_adapter_means_full_and_a_question_about_lora_is_not_the_method():
    # meta-llama/llama-cookbook#413; InternLM/InternLM-XComposer#314
    assert extract_slots("I wanted to finetune the llama-7b model without any PEFT and Quantization").finetune == "full"
    assert extract_slots("全参数微调是否可行……如果全参数微调不可行，那么是否可以多阶段lora微调？").finetune == "full"


@pytest.mark.parametrize(
    "text, observed",
    [
        ("长度1024，不加lora， batch_size=1，显存39825MB", 38.89),  # yuanzhoulvpi2017/zero_nlp#23
        ("直接跑train.py, 显存消耗50-60G，", 60.0),  # ssbuild/chatglm_finetuning#253
        ("训练时使用显存也一直维持在9.8G", 9.8),  # modelscope/ms-swift#5400
        ("batch是1， accumulate_grad 1, 显存占用一直在30G左右", 30.0),  # LLaMA-Factory#2992
    ],
)
def test_observed_use_more(text, observed):
    assert extract_slots(text).observed_memory_gb == pytest.approx(observed, abs=0.01)


def test_size_in_an_observation_next_to_a_gpu_is_not_its_capacity():
    # BatsResearch/csp#15
    s = extract_slots("i can train model with batch size of 64 by two RTX 3090(17GB memory per card is used).")
    assert s.gpu_memory_gb is None and s.observed_memory_gb == 17.0 and s.gpu == "rtx-3090"


def test_openrlhf_bsize_and_a_count_after_a_sized_name():
    # OpenRLHF/OpenRLHF#384
    s = extract_slots("显卡为 `A100-80Gx8`\n按照如下参数训练 (bsize=128, micro_train_bsize=1, bf16, zero3)")
    assert (s.world_size, s.gpu, s.gpu_memory_gb) == (8, "a100-80gb", 80.0)
    assert (s.train_batch_size, s.train_micro_batch_size_per_gpu) == (128, 1)
    assert classify_key("autotp_size") == "tensor_parallel_size"  # deepspeedai/DeepSpeed#7298


def test_lr_checkpointing_and_megatron_model_parallel():
    # mosaicml/diffusion#17, microsoft/LoRA#120, Alpha-VLLM/LLaMA2-Accessory#26
    assert extract_slots("In SD-256.yaml, the learning rate is set to 1e-4").base_learning_rate == 1e-4
    assert extract_slots("When I use gradient checkpoint with LoRA").gradient_checkpointing == "full"
    assert extract_slots("--model_parallel_size 2 --checkpointing").tensor_parallel_size == 2


def test_offload_stated_off_single_node_and_more_model_names():
    # LLaMA-Factory#493 (Accelerate config), Baichuan2#147, ms-swift#3674, LLaVA#157
    s = extract_slots("offload_optimizer_device: none offload_param_device: none zero3_init_flag: true")
    assert (s.offload_optimizer, s.offload_param) == (False, False)
    assert extract_slots("使用A100(40GB)单机(8卡)进行全量微调").num_nodes == 1
    assert extract_slots("我在双卡4090lora微调internvl2.5").model_text == "internvl2.5"
    assert extract_slots("I fine-tune the LLaVA-7B model on two RTX-3090s").model_text == "LLaVA-7B"
    assert extract_slots("see the llava repo").model_text is None


# ---- the scorer: an equal value is counted as used ---------------------------------------------------------
def test_scorer_counts_gpu_text_and_the_shown_conflict():
    from types import SimpleNamespace

    from bench.eval_answers import score_fidelity

    setup = setup_of(
        "* GPU count and types: 8 X Tesla P100 GPUs\n```\nAssertionError: Check batch related parameters. "
        "train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 256 != 4 * 8 "
        "* 1\n```"
    )
    answer = SimpleNamespace(
        setup=setup.dump(), tool_calls=[], conflicts={k: [v[0].value] for k, v in setup.conflicts.items() if v}
    )
    used, stated, contradicted, _ = score_fidelity({"stated": {"gpu": "Tesla P100", "world_size": 1}}, answer)
    assert (used, stated, contradicted) == (2, 2, 0)
    # without the conflict shown, the world size DeepSpeed saw is not used
    answer.conflicts = {}
    assert score_fidelity({"stated": {"world_size": 1}}, answer)[0] == 0


def test_chinese_count_after_a_comma_is_a_count():
    # a comma before 两张卡 is punctuation, not the "1,2,4 gpus" list
    s = extract_slots(
        "deepspeed 报错：train_batch_size=33，train_micro_batch_size_per_gpu=17，gradient_accumulation_steps=2，两张卡"
    )
    assert s.world_size == 2


def test_absurd_numbers_in_settings_are_ignored():
    # found by tests/test_fuzz.py: a pasted JSON with 1e309 must not crash the reader
    s = extract_slots(
        '{"train_batch_size": 1e309, "train_micro_batch_size_per_gpu": -0, "gradient_accumulation_steps": NaN}'
    )
    assert s.train_batch_size is None and s.gradient_accumulation_steps is None
