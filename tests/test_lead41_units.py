"""Readers changed in stop 41, each from a dev question of its class (fast unit tier)."""

from __future__ import annotations

import pytest

from calculators.presets import MODEL_PRESETS, count_params, preset_for_name
from rag.parts import split_message
from rag.setup import read_setup
from rag.slots import extract_slots


def test_torchrun_overwrites_the_world_size_its_command_line_sets():
    # alpaca-lora #332: torchrun exports WORLD_SIZE = nnodes x nproc_per_node to each process
    cmd = "WORLD_SIZE=1 CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun --nproc_per_node=4 --master_port=1234 finetune.py"
    assert extract_slots(cmd).world_size == 4
    setup, _ = read_setup(split_message(f'I run it by the command\n"{cmd}",\n and I found the VRAM …'))
    assert setup.get("world_size") == 4
    # a WORLD_SIZE set without a launcher of its own is the count
    assert extract_slots("WORLD_SIZE=8 python train.py").world_size == 8
    assert extract_slots("world_size = 2").world_size == 2


def test_offload_ruled_out_is_offload_off():
    # DeepSpeed #2996
    s = extract_slots("It doesn't support bf16, and offloading to CPU is impossible due to low RAM.")
    assert (s.offload_optimizer, s.offload_param) == (False, False)
    assert extract_slots("I use offload to cpu").offload_optimizer is True


def test_what_a_chatbot_says_is_not_the_users_run():
    # minimind #177: the user's 25M model OOMs on two 4090D; deepseek's 1.3B / 12G is hearsay, deepseek no model
    text = (
        "为什么训练过程中，25M参数量的小模型，两个4090D就爆满了。但是问了deepseek，说单张4090D训练1.3B参数量的模型"
        "都没有问题（显存占用12G）。所以不知道为什么"
    )
    s = extract_slots(text)
    assert (s.num_params, s.observed_memory_gb, s.model_text) == (25e6, None, None)
    # the user's own numbers after "but" are theirs
    s = extract_slots("ChatGPT says a 7B model needs 28 GB, but my 1B model uses 20 GB")
    assert (s.num_params, s.observed_memory_gb) == (1e9, 20)
    assert extract_slots("训练7B模型显存占用12G").observed_memory_gb == 12


def test_the_documentations_gpu_is_not_the_users():
    # minimind #386
    s = extract_slots(
        "你好，请问3080的20G显卡，能做pretrain么？\n\nwiki中提到单卡是3090的24g，如果只有20g，能跑起来么？"
    )
    assert (s.gpu_text, s.gpu_memory_gb) == ("3080", 20)


def test_an_instance_type_is_no_memory_reading():
    # DeepSpeed #3717: "6 g5.4xlarge A10 GPUs"
    assert (
        extract_slots(
            "I am performing multi-node training using 6 g5.4xlarge A10 GPUs on AWS Batch."
        ).observed_memory_gb
        is None
    )
    assert extract_slots("it is using 6 g of memory").observed_memory_gb == 6


@pytest.mark.parametrize(
    "text,gb",
    [
        ("when i run the scripts on single gpu, the vram usage is about 35G. however", 35),  # accelerate #2299
        ("不做验证的时候纯训练，显存波动特别大，sft模式下从20多G到接近80G，波动范围特别大", 80),  # CogVideo #199
        ("after loading the model, it costs about ~34G.", 34),  # bitsandbytes #324
    ],
)
def test_memory_readings_in_more_words(text, gb):
    assert extract_slots(text).observed_memory_gb == gb


def test_batch_or_time_changes_are_no_memory_readings():
    for text in ("the batch size from 1 to 2", "从1到2", "it costs 2 hours"):
        assert extract_slots(text).observed_memory_gb is None, text


def test_t5_sizes_resolve_and_count_like_the_library():
    # DeepSpeed #3717: "switched to t5-small" is a 60M model, not the t0-3b named before it
    s = extract_slots(
        "I am doing LLM fine-tuning for the `bigscience/t0-3b model`, and after 8 hours, it was stalling. Out of "
        "curiosity, I switched to `t5-small`, and noticed it was still stalling."
    )
    assert s.model == "t5-small"
    import torch
    import transformers

    for name in ("t5-small", "t5-base", "t5-large"):
        shape = MODEL_PRESETS[name]
        config = transformers.T5Config(
            d_model=shape.hidden_size,
            num_layers=shape.num_layers,
            num_heads=shape.num_attention_heads,
            d_ff=shape.intermediate_size,
            d_kv=64,
            vocab_size=32128,
        )
        with torch.device("meta"):
            model = transformers.T5ForConditionalGeneration(config)
        assert count_params(shape) == sum(p.numel() for p in model.parameters()), name
        assert preset_for_name(f"google-t5/{name}") == name


def test_offload_switched_off_by_other_names():
    # open-llama #70 (Lightning's DeepSpeedStrategy), open-reasoner-zero #58 (OpenRLHF's adam_offload)
    s = extract_slots(
        "strategy = DeepSpeedStrategy(\n    stage=2,\n    offload_optimizer=False,\n    offload_parameters=False,\n)"
    )
    assert (s.offload_optimizer, s.offload_param) == (False, False)
    assert extract_slots("adam_offload: bool = False\nzero_stage: int = 3").offload_optimizer is False
    assert extract_slots("--adam_offload").offload_optimizer is True


def test_a_capacity_after_a_colon_sizes_the_card():
    # GLM-4 #288
    s = extract_slots("cuda版本:12.2      显卡A100:40G    python环境已按照basic demo安装")
    assert (s.gpu, s.gpu_memory_gb) == ("a100-40gb", 40)


@pytest.mark.parametrize(
    "text,name",
    [
        ("I train galactica 30b with zero3", "galactica 30b"),  # DeepSpeed #2899
        ("fine-tune mt0-xxl on 8 gpus", "mt0-xxl"),  # DeepSpeed #3659
        ("GPT-Neo (2.8B) training", "GPT-Neo"),  # DeepSpeedExamples #336
        ("finetune SmolLM-135M with trl", "SmolLM-135M"),  # TRL #2175
        ("Zephyr 7B Beta recipe", "Zephyr 7B"),  # alignment-handbook #33
        ("DialoGPT-medium ppo", "DialoGPT-medium"),  # trlx #372
        ("training resnet152 with deepspeed", "resnet152"),  # DeepSpeed #6936
        ("bge-m3 finetune", "bge-m3"),  # FlagEmbedding #1277
    ],
)
def test_more_model_families_are_named(text, name):
    assert extract_slots(text).model_text == name


def test_the_words_around_new_families_name_no_model():
    for text in ("the prompt is long", "mt5 is", "gpt-neox 20B"):
        assert extract_slots(text).model_text in (None, "gpt-neox 20B"), text


def test_an_oom_written_without_its_space_is_reported():
    # LLaMA-Factory #469: "发现CUDA outof memory"
    from rag.intents import reports_oom

    assert reports_oom("使用4*A100 40G 全参数finetune baichuan-7b发现CUDA outof memory 命令如下：")
    assert not reports_oom("会不会 out of memory？")


def test_a_size_in_a_condition_makes_a_can_it_run_question_a_fit_question():
    # minimind #386; a limit stated as a fact before a how-to question stays configure (tests/test_engine_act_units.py)
    from rag.acts import rule_act

    assert rule_act(split_message("wiki中提到单卡是3090的24g，如果只有20g，能跑起来么？还是要自己减少参数？")) == "fit"
    assert rule_act(split_message("你好，请问3080的20G显卡，能做pretrain么？")) == "fit"
    assert rule_act(split_message("单卡显存不够，能用两张卡一起微调吗，需要做哪些额外配置？")) == "configure"


def test_a_checkpoints_token_count_is_no_model_size():
    # axolotl #1191: "TinyLlama-1.1B-step-50K-105b" has seen 105B tokens; the model has 1.1B parameters
    s = extract_slots("base_model: TinyLlama/TinyLlama-1.1B-step-50K-105b\nmodel_type: LlamaForCausalLM")
    assert s.num_params == 1.1e9
    assert extract_slots("TinyLlama-1.1B-intermediate-step-480k-1T").num_params == 1.1e9


def _stub_bot():
    from rag import Assistant
    from tests.test_pipeline_units import CARDS, StubRetriever

    return Assistant(cards=CARDS, retriever=StubRetriever())


def test_zero2_verdict_follows_deepspeeds_own_accounting_when_the_papers_count_fits():
    # LLaMA-Factory #469: 7B full fine-tune, ZeRO-2, 4 x A100 40G. The ZeRO paper's 2Ψ + 14Ψ/N fits (38.0 GiB);
    # DeepSpeed's estimate_zero2_model_states_mem_needs (2Ψ + 18Ψ/N, its fp32 gradient partition) plus the CUDA
    # context does not (43.7 GiB), and the run went out of memory.
    from calculators.deepspeed import estimate_zero2_model_states_mem_needs

    bot = _stub_bot()
    msg = "用4*A100 40G 全参数微调 llama-2-7b，deepspeed zero2，fp16，micro batch 4，cutoff_len 256，开了梯度检查点，结果CUDA out of memory"
    a = bot.ask(msg)
    main = next(c for c in a.tool_calls if c.label == "main")
    assert main.result["fits"] is True  # the paper's count
    _, ds = estimate_zero2_model_states_mem_needs(main.result["num_params"], num_gpus_per_node=4, cpu_offload=False)
    assert ds + main.result["other"] > main.result["gpu_capacity"]
    assert "18Ψ/N" in a.first_screen and "OOM" in a.first_screen
    # a fit question about the same run says it probably does not fit
    a = bot.ask(
        "用4*A100 40G 全参数微调 llama-2-7b，deepspeed zero2，fp16，micro batch 4，cutoff_len 256，开了梯度检查点，显存够吗？"
    )
    assert a.first_screen.startswith("**很可能放不下")
    # on 8 GPUs DeepSpeed's count fits too: the paper's verdict stands
    a = bot.ask(
        "用8*A100 40G 全参数微调 llama-2-7b，deepspeed zero2，fp16，micro batch 4，cutoff_len 256，开了梯度检查点，显存够吗？"
    )
    assert "18Ψ/N" not in a.first_screen


def test_batch_per_device_keys_and_verl_actor_section():
    # LLaVA #425, Qwen-VL-Series-Finetune #79, verl #2820
    assert extract_slots("even if set batch_per_device=7, it stills be OOM").train_micro_batch_size_per_gpu == 7
    s = extract_slots("GLOBAL_BATCH_SIZE=256, BATCH_PER_DEVICES=8, NUM_DEVICES=8")
    assert (s.train_micro_batch_size_per_gpu, s.train_batch_size, s.world_size) == (8, 256, 8)
    s = extract_slots("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \\\n    data.train_batch_size=512")
    assert (s.train_micro_batch_size_per_gpu, s.train_batch_size) == (8, 512)
    # the rollout and reference sections' micro batches are inference, not training
    assert (
        extract_slots("actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=16").train_micro_batch_size_per_gpu
        is None
    )


def test_a_4bit_card_does_not_answer_an_8bit_run():
    # databricks dolly #168: load_in_8bit on a full fine-tune opened with QLoRA's 4-bit memory
    from rag.cards import load_cards
    from rag.citing import bits_conflict
    from rag.opening import read_asked

    cards = {c.id: c for c in load_cards()}
    text = "Getting below issue when running with load_in_8bit: model = AutoModelForCausalLM.from_pretrained(x, load_in_8bit=True)"
    parts = split_message(text)
    setup, _ = read_setup(parts)
    asked = read_asked(text, parts)
    assert setup.get("quantization") == "int8"
    assert bits_conflict(cards["qlora-memory"], setup, asked)
    # the 8-bit card itself (its title compares with 4-bit) still answers it
    assert not bits_conflict(cards["bnb-int8-slower-than-4bit-and-16bit"], setup, asked)
    # a message that names 4-bit too keeps the QLoRA card
    text += "\nor should I use load_in_4bit (QLoRA) instead?"
    parts = split_message(text)
    setup, _ = read_setup(parts)
    assert not bits_conflict(cards["qlora-memory"], setup, read_asked(text, parts))


def test_counts_after_a_comma_and_lightnings_devices():
    # Qwen3-Embedding #114: "batch_size调成2,4张80g的A100"; Lightning #19096: Trainer(devices=8, num_nodes=1)
    assert extract_slots("batch_size调成2,4张80g的A100进行全量参数微调的时候跑着跑着还是会oom").world_size == 4
    s = extract_slots('trainer = Trainer(strategy = "deepspeed_stage_3", devices = 8, num_nodes = 1)')
    assert (s.world_size, s.num_nodes) == (8, 1)
    assert extract_slots("trainer = Trainer(devices=8, num_nodes=2)").world_size == 16  # devices is per node
    assert extract_slots("num_gpus=4 num_nodes=8").world_size == 32
    assert extract_slots("NUM_DEVICES=8 NNODES=2").world_size == 8


def test_a_model_names_r1_is_no_lora_rank():
    # LLaMA-Factory #7863: "deepseek-r1-32b" with LoRA had been read as LoRA rank 1
    for text in ("lora sft deepseek-r1-32b", "DeepSeek-R1-Distill-Qwen-7B lora"):
        assert extract_slots(text).lora_rank is None, text
    for text, rank in (("lora r=8", 8), ("lora rank 64, alpha 16", 64), ("LoRA (r = 8)", 8), ("lora r=16.", 16)):
        assert extract_slots(text).lora_rank == rank, text
