"""Stated-value fidelity (issue #10), round 11: formats fresh messages are written in that the reader misread.

Each case is built from the *format* (a message of that shape written for the test), not from one dev message's
words. Fast tier: text processing only, no model.
"""

from __future__ import annotations

from rag.slots import extract_slots
from tests.message_reading import setup_of


# ---- GPU counts -------------------------------------------------------------------------------------------
def test_each_card_is_not_a_count_of_one():
    # "每一个卡" / "每一张卡" is "each card"; the devices made visible are the run's count
    s = setup_of(
        "多卡训练时每一张卡都会加载完整模型吗？\n命令：CUDA_VISIBLE_DEVICES=0,1,2,3 llamafactory-cli train sft.yaml"
    )
    assert s.get("world_size") == 4
    assert extract_slots("每一个卡上都放了一份模型", prose=True).world_size is None


def test_visible_devices_of_the_run_beat_the_gpus_owned():
    # Windows `set CUDA_VISIBLE_DEVICES=…` on its own line before the launch; the prose says how many cards exist,
    # and a one-device run is the contrast
    msg = (
        "运行指令：\nset CUDA_VISIBLE_DEVICES=0,1\nllamafactory-cli train qwen_lora_sft.yaml\n\n"
        "我有四张24g的3090，用 set CUDA_VISIBLE_DEVICES=0 单卡可以正常训练，多卡就报错了"
    )
    assert setup_of(msg).get("world_size") == 2
    s = setup_of("I have 8 GPUs. export CUDA_VISIBLE_DEVICES=0,1,2,3 then torchrun train.py OOMs")
    assert s.get("world_size") == 4


def test_owned_count_stays_without_a_narrower_visible_list():
    assert setup_of("我有三张3090，怎么开 zero3？").get("world_size") == 3
    assert setup_of("I have 4 GPUs and CUDA_VISIBLE_DEVICES=0,1,2,3 is set").get("world_size") == 4


def test_failing_count_beats_the_working_one():
    s = extract_slots("zero2, batch size 4 with 1 GPU, it works, batch size 4 per GPU with 4 GPUs, it raised OOM", True)
    assert s.world_size == 4
    assert extract_slots("With 2 GPUs training crashes with OOM, with 1 GPU it is fine", True).world_size == 2


def test_nodes_each_with_gpus():
    s = extract_slots("training on 2 nodes, each 8 H100 gpu", prose=True)
    assert (s.num_nodes, s.world_size) == (2, 16)
    s = extract_slots("3 machines, each with 4 GPUs", prose=True)
    assert (s.num_nodes, s.world_size) == (3, 12)


def test_memory_written_as_size_times_count():
    # "32 *8 G GPU memory" after "8 v100": per-card size times the count, not 32 cards of 8 GB
    s = extract_slots("training on 8 v100, I got 32 *8 G GPU memory in total", prose=True)
    assert (s.world_size, s.gpu_memory_gb) == (8, 32.0)
    s = extract_slots("4张卡，12G*4", prose=True)
    assert (s.world_size, s.gpu_memory_gb) == (4, 12.0)
    assert extract_slots("I have 4 24G GPUs", prose=True).world_size == 4


# ---- micro batch ------------------------------------------------------------------------------------------
def test_change_told_as_the_fix_keeps_the_failing_value():
    assert (
        extract_slots(
            "It OOMs, so I changed the batch_size from 32 to 4, and it works.", True
        ).train_micro_batch_size_per_gpu
        == 32
    )
    assert extract_slots("batch size 从16改成4就可以跑了，正常吗", True).train_micro_batch_size_per_gpu == 16


def test_change_told_as_done_still_takes_the_new_value():
    assert extract_slots("I changed the batch size from 1 to 16 and it OOMs", True).train_micro_batch_size_per_gpu == 16


# ---- model ------------------------------------------------------------------------------------------------
def test_family_it_resembles_is_not_the_model():
    s = extract_slots("I pretrain a 1.3b model (llama-like) on 8 GPUs", prose=True)
    assert s.model is None and s.num_params == 1.3e9
    s = extract_slots("fine-tuning an opt 30b model (gpt-2 style) with zero3", prose=True)
    assert s.num_params == 30e9 and s.model != "gpt2"


def test_change_then_a_failure_is_not_a_fix():
    s = extract_slots("I changed the batch size from 2 to 8 and now it runs out of memory.", prose=True)
    assert s.train_micro_batch_size_per_gpu == 8


# ---- GPU presets ------------------------------------------------------------------------------------------
def test_a40_and_titan_xp_presets():
    from calculators.presets import GPU_PRESETS
    from rag.compose import gpu_display, with_article

    s = extract_slots("我们用 4 张 A40 做 LoRA 微调", prose=True)
    assert s.gpu == "a40" and GPU_PRESETS["a40"].memory_gib == 48 and GPU_PRESETS["a40"].bf16
    s = extract_slots("Training on 2 TITAN Xp cards", prose=True)
    assert s.gpu == "titan-xp" and s.world_size == 2
    assert GPU_PRESETS["titan-xp"].memory_gib == 12 and not GPU_PRESETS["titan-xp"].bf16
    assert with_article(gpu_display("titan-xp")) == "a TITAN Xp"
    assert with_article(gpu_display("a40")) == "an A40"
    assert extract_slots("4x RTX A4000", prose=True).gpu != "a40"


def test_side_test_model_does_not_replace_the_stated_size():
    s = extract_slots(
        "When I am fine tuning a 7B model it needs 28GB.\nI also tested on Mistral 13B chat with 4-bit, batch 8.", True
    )
    assert s.num_params == 7e9 and s.model is None
    # without a run of their own stated first, the named model stays
    assert extract_slots("I tested on Llama-2-13b with batch 8", True).model == "llama-2-13b"


def test_offload_asked_how_to_turn_on_is_not_on():
    s = extract_slots("请问怎样使用 DeepSpeed 的 offload 功能？", prose=True)
    assert s.offload_optimizer is None and s.offload_param is None
    assert extract_slots("How do I enable CPU offload with zero3?", True).offload_optimizer is None
    assert extract_slots("I use zero3 with cpu offload and it is slow", True).offload_optimizer is True


def test_each_card_memory_written_with_ge():
    s = extract_slots("1台主机；两块卡，A6000，各40G内存", prose=True)
    assert (s.world_size, s.gpu_memory_gb) == (2, 40.0)
    assert extract_slots("各种配置都试了，8卡", prose=True).gpu_memory_gb is None


def test_qwen_written_in_chinese():
    s = extract_slots("用4张4090对千问2.5-32B做LoRA微调", prose=True)
    assert s.model == "qwen2.5-32b" and s.model_text == "千问2.5-32B"
    assert extract_slots("通义千问 14B 全参微调", prose=True).model == "qwen-14b"  # Qwen (v1) 14B


def test_deepspeed_runner_cmd_line_is_read_as_the_command():
    log = (
        "Here is the log\n"
        "[2024-01-02 10:00:00,000] [INFO] [runner.py:555:main] cmd = /opt/conda/bin/python -u -m "
        "deepspeed.launcher.launch --world_info=eyJsb2NhbGhvc3QiOiBbMF19 --master_port=29500 train.py "
        "--deepspeed ds_z2.json --model_name_or_path ./ckpt/vicuna-13b-v1.5 --per_device_train_batch_size 4\n"
    )
    s = setup_of(log)
    assert s.get("num_params") == 13e9 or s.get("model") is not None
    assert s.get("train_micro_batch_size_per_gpu") == 4


def test_what_a_document_claims_is_not_the_run():
    s = setup_of("机器只有4张32g的V100，官方文档里提到32g最多可以支持13B模型的训练？")
    assert s.get("world_size") == 4 and s.get("num_params") is None
    s = setup_of("I have 2 A100 40GB. The README says 7B needs 80GB, is that right?")
    assert s.get("world_size") == 2 and s.get("num_params") is None


def test_a_question_about_the_default_is_not_the_run():
    s = setup_of("4张V100全参微调。默认deepspeed的配置使用的是stage2吗？")
    assert s.get("world_size") == 4 and s.get("zero_stage") is None
    assert setup_of("我用默认配置的 zero2 跑 8 卡").get("zero_stage") == 2


def test_value_of_a_variable_given_in_a_comment():
    code = "args = TrainingArguments(\n    per_device_train_batch_size=args.bs #8,\n    gradient_accumulation_steps=args.ga, # 2\n)"
    s = extract_slots(code)
    assert (s.train_micro_batch_size_per_gpu, s.gradient_accumulation_steps) == (8, 2)
    assert extract_slots("--per_device_train_batch_size $BS \\\n").train_micro_batch_size_per_gpu is None
    assert extract_slots("lr = 3e-4  # 1e-3 was too high").base_learning_rate == 3e-4


def test_a_value_quoted_from_a_paper_and_asked_about_stays():
    s = setup_of("文档里提到的batch_size=256，是 num_gpus*per_device_batch_size*gradient_accumulation_steps 的结果吗")
    assert s.get("train_batch_size") == 256
