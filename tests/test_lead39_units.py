"""Readers changed in stop 39, each from a dev question of its class (fast unit tier)."""

from __future__ import annotations

import pytest

from rag.parts import split_message
from rag.slots import extract_slots
from tests.message_reading import read_message

# DeepSpeed#4005 (dev): the run that works and the run that fails differ in GPU count and batch ("bathc_size").
TWO_RUNS = (
    "- When I finetune mt0-xxl(13B) through peft-lora on 2 V100(32 G), batch size=8 on data `wmt16enro` "
    "(train:3998 validation:3998 test:3998), The program can run successfully.\n\n"
    "- However, when I change to 372,000 pieces of  train data `opus_dev_dev_tst` and run it on  4*V100 or 8*V100 "
    "with bathc_size=4 . I met the `CUDA out of memory` problem (always stop at step=5952/23192 on V*100*4 and  stop "
    "at step=2976/11596 on V*100*8 ).  Exactly half of the training step when use more GPUs."
)


def test_the_failing_run_gives_the_gpu_count_and_the_batch_and_the_working_one_is_shown_beside_it():
    _, setup = read_message(TWO_RUNS)
    assert setup.values["world_size"].value == 4
    assert setup.values["train_micro_batch_size_per_gpu"].value == 4
    assert [c.value for c in setup.conflicts["world_size"]] == [2]
    assert [c.value for c in setup.conflicts["train_micro_batch_size_per_gpu"]] == [8]


def test_per_gpu_wording_is_no_run_on_one_gpu():
    # "单卡24G" sizes a card; with a run on 4 cards reported to fail it is not a working one-GPU run
    _, setup = read_message("单卡24G可以跑通，4卡训练的时候报错 OOM")
    assert "world_size" not in setup.conflicts


def test_half_is_a_precision_only_as_half_precision_or_half_call():
    assert extract_slots("Exactly half of the training step when use more GPUs.", prose=True).precision is None
    assert extract_slots("I train with model.half()", prose=True).precision == "amp-fp16"
    assert extract_slots("the model is in half precision", prose=True).precision == "amp-fp16"


def test_a_chain_of_readings_joined_by_arrows_is_observed_memory_its_peak():
    # PEFT#832 (dev): "I observed 13,740MiB -> 33,306Mib -> CUDA out of memory"
    slots = extract_slots(
        "during the LoRA training,I observed 13,740MiB -> 33,306Mib -> CUDA out of memory", prose=True
    )
    assert slots.observed_memory_gb == 32.53
    assert extract_slots("memory 10GB → 20GB → 35GB then OOM", prose=True).observed_memory_gb == 35.0
    # a change of card is no reading
    assert extract_slots("I moved from 24GB -> 80GB GPUs", prose=True).observed_memory_gb is None


def test_glm4_input_and_output_lengths_pasted_without_a_fence_add_up_to_the_sequence_length():
    # GLM-4#468 (dev): configs/lora.yaml pasted as prose lines after a `nohup torchrun … &` launch
    message = (
        "lora 微调，两张v100 显卡，微调一会loss 就一直为0 了\n\n"
        "nohup torchrun --standalone --nnodes=1 --nproc_per_node=2 finetune.py data/ glm-4-9b-chat/ configs/lora.yaml"
        " 2>&1 > lora.log &\n\n见如下lora 配置\nlora.yaml\ncombine: True\nmax_input_length: 8192\n"
        "max_output_length: 8192\n"
    )
    assert any(p.kind == "command" and p.text.startswith("nohup torchrun") for p in split_message(message))
    assert read_message(message)[1].values["seq_len"].value == 16384
    # the two lengths named in a sentence are no pasted config
    assert "seq_len" not in read_message("I set max_input_length: 512 and max_output_length: 512 in the yaml")[1].values


def test_a_deepspeed_log_at_the_minimum_loss_scale_without_the_scale_printed_is_diagnosed():
    # a dev paste (blind14): DeepSpeed's step line and its minimum-scale exception, no "Attempted loss scale" line
    from calculators.diagnose import diagnose

    log = (
        "[2023-08-01 10:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=1, skipped=1, lr=[0.0001], "
        "mom=[(0.9, 0.999)]\n"
        "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run."
    )
    found = diagnose(log)
    assert any("minimum" in c.because_en for c in found.causes if c.id == "log.fp16_overflow_persistent")


def test_a_vscode_launch_json_argument_list_is_the_command_the_user_runs():
    # LLaMA-Factory#2674 (dev): the run's arguments pasted from launch.json, no fence
    message = (
        "qlora貌似无效，发现qlora和lora显存差不多。\n\n命令行调用的：\n\n"
        '"args": [\n            "--do_train", "True",\n            "--stage", "sft",\n'
        '            "--finetuning_type", "lora",\n            "--quantization_bit", "4",\n'
        '            "--cutoff_len", "1024",\n            "--per_device_train_batch_size", "4",\n'
        '            "--gradient_accumulation_steps", "4",\n            "--lora_rank", "8"\n        ],\n'
    )
    _, setup = read_message(message)
    assert setup.values["train_micro_batch_size_per_gpu"].value == 4
    assert setup.values["gradient_accumulation_steps"].value == 4
    assert setup.values["seq_len"].value == 1024
    assert setup.values["finetune"].value == "qlora"


def test_python_with_several_visible_gpus_names_dataparallel_without_deepspeed_and_the_batch_check_with_it():
    # ChatGLM-6B#1248 (dev): `CUDA_VISIBLE_DEVICES=0,1 python3 main.py …` (a Trainer script) fails on two GPUs
    from calculators.diagnose import diagnose

    plain = "CUDA_VISIBLE_DEVICES=0,1 python3 main.py \\\n --do_train \\\n --per_device_train_batch_size 8\n"
    cause = next(c for c in diagnose(plain).causes if c.id == "launch.python_single_process")
    assert cause.card_ids == ["dataparallel-single-process-trainer"]
    assert "DataParallel" in cause.because_en and "DataParallel" in cause.because_zh
    with_ds = plain.replace("--do_train", "--deepspeed ds_config.json --do_train")
    cause = next(c for c in diagnose(with_ds).causes if c.id == "launch.python_single_process")
    assert cause.card_ids == ["deepspeed-batch-assertion-error"]
    assert "DataParallel" not in cause.because_en


def test_swift_without_nproc_per_node_on_several_gpus_is_diagnosed_as_device_map_model_parallel():
    # ms-swift#6438 (dev): "同一时间只有一个卡工作" with CUDA_VISIBLE_DEVICES=4,5,6,7 and no NPROC_PER_NODE
    from calculators.diagnose import diagnose

    command = (
        "CUDA_VISIBLE_DEVICES=4,5,6,7 \\\nswift sft \\\n    --model Qwen3-Omni-30B-A3B-Instruct \\\n"
        "    --train_type lora \\\n    --per_device_train_batch_size 1\n"
    )
    cause = next(c for c in diagnose(command).causes if c.id == "launch.swift_device_map")
    assert cause.card_ids == ["device-map-uneven-memory"]
    assert "4 GPUs" in cause.because_en and "NPROC_PER_NODE=4" in cause.fix_en
    # one process per GPU: data parallel, no device_map
    ddp = command.replace("CUDA_VISIBLE_DEVICES=4,5,6,7 \\\n", "CUDA_VISIBLE_DEVICES=4,5,6,7 \\\nNPROC_PER_NODE=4 \\\n")
    assert not any(c.id == "launch.swift_device_map" for c in diagnose(ddp).causes)
    # a process count from a shell variable is unknown; ZeRO-3 shards instead of device_map
    unknown = ddp.replace("NPROC_PER_NODE=4", "NPROC_PER_NODE=$nproc_per_node")
    assert not any(c.id == "launch.swift_device_map" for c in diagnose(unknown).causes)
    zero3 = command.replace("--train_type lora", "--train_type lora --deepspeed zero3")
    assert not any(c.id == "launch.swift_device_map" for c in diagnose(zero3).causes)
    # ZeRO-2 with device_map: ms-swift refuses to start
    zero2 = command.replace("--train_type lora", "--train_type lora --deepspeed zero2")
    cause = next(c for c in diagnose(zero2).causes if c.id == "launch.swift_device_map")
    assert cause.card_ids == ["device-map-auto-distributed-error"]
    assert "not compatible with MP" in cause.because_en


@pytest.mark.parametrize(
    ("text", "conflict"),
    [
        # ordinary OOM and precision questions that name fp16, bitsandbytes or CUDA_VISIBLE_DEVICES
        ("QLoRA with bitsandbytes OOMs on a 24 GB card at fp16", True),
        ("CUDA_VISIBLE_DEVICES=0,1 训练显存不够，fp16 也开了", True),
        # the card's own cases
        ("torch.cuda.is_available() returns False although nvidia-smi shows the GPU", False),
        ("AssertionError: Torch not compiled with CUDA enabled", False),
        ("训练跑在CPU上，GPU利用率一直是0", False),
        ("RTX 4090: ValueError: Your setup doesn't support bf16/gpu.", False),
        # on a V100 the bf16 check means the card lacks bf16: the hardware card's case, not this one
        ("V100: ValueError: Your setup doesn't support bf16/gpu.", True),
    ],
)
def test_the_no_gpu_card_needs_a_sign_that_pytorch_does_not_see_the_gpu(text: str, conflict: bool) -> None:
    from rag.cards import load_cards
    from rag.citing import no_gpu_conflict

    card = next(c for c in load_cards() if c.id == "torch-sees-no-gpu")
    asked, setup = read_message(text)
    assert bool(no_gpu_conflict(card, setup, asked)) is conflict


def test_a_failed_run_on_fewer_gpus_is_why_the_user_moved_to_more_not_the_run_asked_about():
    # DeepSpeed#5645 (dev): OOM on a single GPU, then ZeRO-3 on 2 GPUs "runs 2 training samples at once"
    _, setup = read_message(
        "I have trained a model on a single GPU and for a batch size of 1 anything above 960x960 gives OOM errors "
        "during training. When I do this, it does say that the model weights are correctly split across the 2 GPUs, "
        "but then it runs 2 training samples at once during train step."
    )
    assert setup.values["world_size"].value == 2
