"""A card about how fast training runs (its title's subject names speed and not memory) is not cited for a message
that never names speed or time: such cards share a multi-GPU or sharding setup's words with memory questions about
it. Likewise a card about a launch that hangs at start-up needs a message that names a hang, a timeout or a failed
connection. Message shapes are written here, not copied from the dev set."""

from __future__ import annotations

import pytest

from rag.cards import load_cards
from rag.citing import answers_another_setup, hang_conflict, speed_conflict
from tests.message_reading import read_message

CARDS = {c.id: c for c in load_cards()}
SPEED_CARDS = (
    "fsdp-hybrid-shard-multi-node",
    "lora-training-speed-vs-full-finetune",
    "small-batch-gpu-utilization",
    "zero3-slow-training-and-generation",
)


@pytest.mark.parametrize(
    "text",
    [
        "4 张 A100 跑 DDP 显存不够，batch 1 也 OOM",
        "OOM with ZeRO-3 on 2 nodes of 8 GPUs, micro batch 2",
        "How many optimizer steps per epoch with 8 GPUs and GA 4?",
        "DeepSpeed zero2 LoRA 微调 7B 要多少显存",
    ],
)
def test_a_speed_card_is_not_cited_for_a_message_without_speed_or_time(text: str) -> None:
    asked, setup = read_message(text)
    for cid in SPEED_CARDS:
        assert speed_conflict(CARDS[cid], asked)
        assert answers_another_setup(CARDS[cid], asked, setup, "diagnose")


@pytest.mark.parametrize(
    "text",
    [
        "两张 4090 训练比一张还慢",
        "Training on 4 GPUs takes as long per epoch as on one",
        "multi-node ZeRO-3 throughput is 30% of single node",
        "每个 step 耗时 3 秒，多卡没加速",
        "GPU utilization is only 40% with micro batch 1",
    ],
)
def test_a_speed_card_answers_a_message_about_speed(text: str) -> None:
    asked, _ = read_message(text)
    for cid in SPEED_CARDS:
        assert not speed_conflict(CARDS[cid], asked)


def test_cards_about_speed_and_memory_are_left_alone() -> None:
    asked, _ = read_message("ZeRO-3 OOM on a 1B model")
    assert not speed_conflict(CARDS["zero3-small-model-overhead"], asked)
    assert not speed_conflict(CARDS["dora-slower-more-memory"], asked)


# ---- a launch that hangs at start-up -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "升级后多机多卡训练报错 out of memory，改成单机多卡可以",
        "多机多卡情况下，学习率如何设置？2机8卡",
        "OOM on 2 nodes with ZeRO-3, micro batch 1",
    ],
)
def test_the_start_up_hang_card_is_not_cited_without_a_hang(text: str) -> None:
    asked, setup = read_message(text)
    assert hang_conflict(CARDS["multi-node-startup-hang"], asked)
    assert answers_another_setup(CARDS["multi-node-startup-hang"], asked, setup, "diagnose")


@pytest.mark.parametrize(
    "text",
    [
        "slurm提交任务，单节点正常提交任务并运行。多节点卡住不动。",
        "ValueError: Total available GPUs 8.0 is less than total desired GPUs 16",
        "multi-node training does not launch: the main node just waits",
        "多机多卡训练时 NCCL error，我是在容器里运行的",
    ],
)
def test_the_start_up_hang_card_answers_a_hang_or_a_failed_connection(text: str) -> None:
    asked, _ = read_message(text)
    assert not hang_conflict(CARDS["multi-node-startup-hang"], asked)


def test_other_hang_cards_are_not_gated() -> None:
    asked, _ = read_message("Qwen3-30B-A3B ZeRO-3 训练第一步之后没有进度")
    assert not hang_conflict(CARDS["zero3-moe-hang-z3-leaf-modules"], asked)
    assert not hang_conflict(CARDS["zero3-hang-ranks-run-different-modules"], asked)
