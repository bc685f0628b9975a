"""fid4: the slot table and the values users state in wordings the dev set did not have (issue #10).

Each case is a wording seen in a public thread (tests/data/real_questions/dev-fid4.yaml has the threads); each asserts
the value read and, where it matters, that no value is made up.
"""

from __future__ import annotations

import re

import pytest

from rag.parts import split_message
from rag.setup import read_setup
from rag.slots import SlotRule, Slots, extract_slots
from tests.message_reading import setup_values


# ---- the table ------------------------------------------------------------------------------------------------
def test_rule_takes_first_pattern_that_matches_and_skips_rejected_matches() -> None:
    rule = SlotRule(
        ("world_size",),
        (re.compile(r"(\d+) gpus"), re.compile(r"(\d+) cards")),
        lambda m, text: (int(m.group(1)),),
        accept=lambda m, text: not text[: m.start()].endswith("not "),
    )
    slots = Slots()
    assert rule.apply("not 3 gpus but 5 gpus, 7 cards", slots) and slots.world_size == 5
    assert not rule.apply("nothing here", Slots())


def test_only_if_unset_keeps_an_earlier_value() -> None:
    rule = SlotRule(("seq_len",), (re.compile(r"(\d+)"),), lambda m, text: (int(m.group(1)),), only_if_unset=True)
    slots = Slots(seq_len=1024)
    rule.apply("4096", slots)
    assert slots.seq_len == 1024


def test_converter_none_leaves_the_slot() -> None:
    assert extract_slots("lr = 50").base_learning_rate is None  # not a learning rate anyone runs
    assert extract_slots("lr = 2e-5").base_learning_rate == pytest.approx(2e-5)


# ---- GPU counts -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "world"),
    [
        ("用P-Tuning v2微调chatglm2，4张卡", 4),  # "2，4" is a name and a count, not a device list
        ("两台机器每台8张A100，全参数微调", 16),
        ("I am training on 4 x A100 with LoRA and it goes OOM", 4),
        ("deepspeed --include localhost:0,1 train.py --deepspeed ds.json", 2),
        ("accelerate launch --num_processes 4 train.py --bf16", 4),
        ("torchrun --nnodes 2 --nproc_per_node 8 train.py", 16),
    ],
)
def test_gpu_count(text: str, world: int) -> None:
    assert setup_values(text).get("world_size") == world


def test_visible_gpus_of_a_python_launch_are_the_stated_count() -> None:
    text = (
        "CUDA_VISIBLE_DEVICES=0,1,2,3 python3 main.py \\\n    --do_train \\\n    --per_device_train_batch_size 1 \\\n"
        "    --pre_seq_len 128\n\n然后就爆显存了，CUDA out of memory,但是如果单卡训练是不爆显存的。每张显卡是RTX 3090 24G。"
    )
    got = setup_values(text)
    assert got["world_size"] == 4 and got["finetune"] == "ptuning"


def test_a_supposed_single_gpu_is_not_the_count() -> None:
    assert extract_slots("但是如果单卡训练是不爆显存的").world_size is None
    assert extract_slots("我只有单卡，显存不够").world_size == 1


# ---- GPU names and sizes --------------------------------------------------------------------------------------
def test_ascend_by_its_chinese_name_with_capacity() -> None:
    s = extract_slots("昇腾910 32G 8卡，微调DeepSeek-R1-Distill-Qwen-14B，设置cutoff_len: 8192")
    assert s.gpu_text == "昇腾910" and s.gpu_memory_gb == 32 and s.world_size == 8 and s.seq_len == 8192
    assert s.gpu is None  # the 910 (32G) is not the 910B preset (64G): no preset rather than a wrong one


def test_capacity_per_card() -> None:
    assert extract_slots("我四块RTX 3090每块24G").gpu_memory_gb == 24


# ---- method ---------------------------------------------------------------------------------------------------
def test_full_finetune_wordings() -> None:
    assert extract_slots("8卡A100 40G 用DeepSpeed-Chat无法全微调训练8192序列长度").finetune == "full"


def test_ptv2_is_ptuning() -> None:
    assert extract_slots("用ptv2微调，多卡跑，为啥第一张卡显存占满了").finetune == "ptuning"


@pytest.mark.parametrize(
    "text",
    [
        "--finetuning_type lora --quantization_bit 4 --per_device_train_batch_size 1",
        "deepspeed train_lora.py --lora_r 8 --q_lora True --fp16 True",
    ],
)
def test_lora_on_4bit_is_qlora(text: str) -> None:
    assert setup_values(text).get("finetune") == "qlora"


def test_lora_on_4bit_from_a_yaml_config() -> None:
    text = "```yaml\nfinetuning_type: lora\nquantization_bit: 4\ncutoff_len: 1024\n```\nOOM, why?"
    assert setup_values(text).get("finetune") == "qlora"


def test_qlora_switch_off_and_file_names_are_not_qlora() -> None:
    assert extract_slots("--lora_r 8 --q_lora False").finetune == "lora"
    assert extract_slots("python q_lora.py with lora").finetune == "lora"


# ---- sequence length ------------------------------------------------------------------------------------------
def test_length_before_its_name_is_read_first() -> None:
    # the first length is the run's; "20k长度" later is another framework's result
    text = "无法全微调训练8192序列长度，OOM。Megatron-DeepSpeed加上offload_optimizer能训练20k长度"
    assert extract_slots(text).seq_len == 8192


def test_length_change_takes_the_new_length() -> None:
    assert extract_slots("When I increase the max_seq_length from 4096 to 8192, I get OOM").seq_len == 8192
    assert extract_slots("cutoff_len 从 2048 改到 4096 就爆显存").seq_len == 4096


def test_no_length_is_made_up() -> None:
    assert extract_slots("8卡A100，lora 微调，OOM").seq_len is None


@pytest.mark.parametrize(
    ("text", "world", "nodes"),
    [
        ("我们有4台服务器，每台8张H800", 32, 4),
        ("3 nodes, each with 8 A100 GPUs", 24, 3),
        ("2 nodes with 8 GPUs each", 16, 2),
        ("单机8卡A800", 8, 1),
    ],
)
def test_nodes_times_gpus_per_node(text: str, world: int, nodes: int) -> None:
    s = extract_slots(text)
    assert (s.world_size, s.num_nodes) == (world, nodes)


def test_a_precision_the_card_lacks_is_neither_used_nor_turned_off() -> None:
    assert extract_slots("8块V100，bf16不支持，用fp16").precision == "amp-fp16"
    assert extract_slots("V100 bf16不支持").precision is None  # no fp32 made up from it


@pytest.mark.parametrize(
    "text", ["finetuning_type: freeze", "用freeze微调，8卡", "--finetuning_type freeze --cutoff_len 1024"]
)
def test_freeze_tuning_is_named_not_taken_for_full(text: str) -> None:
    setup, _ = read_setup(split_message(text))
    assert setup.get("finetune") == "freeze"
    from rag.setup import enough_for_memory, unsupported_method

    assert unsupported_method(setup) == "freeze" and not enough_for_memory(setup)


def test_a_flag_set_from_a_shell_variable_states_no_value() -> None:
    text = "accelerate launch --num_processes=8 grpo.py --lora-rank $lora_rank --load-in-4bit $load_in_4bit"
    setup, _ = read_setup(split_message(text))
    assert setup.get("quantization") is None and setup.get("finetune") != "qlora"
    assert extract_slots("--load_in_4bit True --lora_r 8").quantization == "int4"
