"""engine-fid3 (issue #10): the setup a new real message states is read the way users write it, not only in the
dev set's wordings: GPU counts glued to a model number or given per node, form factors before a capacity, LoRA
switched off, source + target lengths, and the current clause of a sentence about an earlier run.

Each case is a wording found in public threads (the dev-fid3 file holds the threads themselves)."""
from __future__ import annotations

import pytest

from rag.parts import split_message
from rag.setup import own_prose, read_setup


def _read(text: str, key: str):
    setup, _ = read_setup(split_message(text))
    return setup.get(key)


@pytest.mark.parametrize("text,expected", [
    ("RTX4090双卡 Baichuan2-13B-Chat微调内存不足", 2),
    ("两台机器，每台8张A100", 16),
    ("2台8卡A100", 16),
    ("GPU：4*A100", 4),
    ("dual 3090s", 2),
    ("a pair of 3090s", 2),
    ("4 x NVIDIA A100-SXM4-80GB", 4),
    ("之前用8卡跑没问题，现在换成4卡就OOM了", 4),
    ("Previously I trained on 2 GPUs fine, but now on 4 GPUs I get OOM", 4),
    # neighbours that must not move
    ("用两张A100训练，OOM了", 2),
    ("OOM\n```\ndeepspeed --include=localhost:4,5,6,7 src/train_bash.py --stage sft\n```", 4),
    ("OOM\n```\ntorchrun --nproc_per_node 4 train.py --bf16 True\n```", 4),
])
def test_gpu_count_as_users_write_it(text, expected):
    assert _read(text, "world_size") == expected


def test_earlier_run_sentence_without_a_now_clause_stays_out():
    assert _read("之前用8卡跑没问题。OOM了怎么办", "world_size") is None
    assert "8卡" not in own_prose("之前用8卡跑没问题。")
    assert "4卡" in own_prose("之前用8卡跑没问题，现在换成4卡就OOM了")


@pytest.mark.parametrize("text,expected", [
    ("使用4*A100-SXM4-40GB训练", 40),
    ("GPU: NVIDIA A100-PCIE-40GB", 40),
    ("Tesla V100-PCIE-16GB x 2", 16),
])
def test_capacity_after_a_form_factor(text, expected):
    assert _read(text, "gpu_memory_gb") == expected


@pytest.mark.parametrize("text,expected", [
    ("```\n--use_lora False\n```", "full"),
    ("I'm doing full fine-tuning (no LoRA) of Mistral 7B", "full"),
    ("I'm fine-tuning all parameters of the model", "full"),
    ("全部参数微调", "full"),
    ("```\n--freeze_llm False --use_llm_lora 0\n```", None),   # a part's LoRA off says nothing about the rest
    ("```\n--use_lora True --lora_rank 32\n```", "lora"),
    ("Now I use LoRA and still OOM", "lora"),
    ("I have no idea why LoRA runs out of memory", "lora"),
])
def test_lora_switched_off_is_not_lora(text, expected):
    assert _read(text, "finetune") == expected


@pytest.mark.parametrize("text,expected", [
    ("```\n--max_source_length 512 \\\n--max_target_length 512 \\\n```", 1024),
    ("```\n--source_max_len 1024 --target_max_len 256\n```", 1280),
    ("```\n--max_source_length 256\n```", 256),
    ("```\n--cutoff_len 2048 --max_source_length 512 --max_target_length 512\n```", 2048),
    ("上下文 32k 训练", 32768),
])
def test_sequence_length(text, expected):
    assert _read(text, "seq_len") == expected
