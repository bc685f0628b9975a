"""cite15: a card about one process driving several GPUs (nn.DataParallel, a model split with device_map) is not cited
for a message that launches one process per GPU and never names either; a card about prepare_model_for_kbit_training
needs a quantized base or an fp32 upcast named; a card about one error message answers a message that quotes the
error in any wording the card lists among its English symptoms (the one another version prints). Message shapes are
written here, not copied from the dev set."""

from __future__ import annotations

import pytest

from rag.cards import load_cards
from rag.citing import answers_another_setup, error_title_conflict, kbit_conflict, launch_conflict
from tests.message_reading import read_message

CARDS = {c.id: c for c in load_cards()}
ONE_PROCESS_CARDS = ("dataparallel-single-process-trainer", "device-map-uneven-memory")


@pytest.mark.parametrize(
    "text",
    [
        "OOM on 4 GPUs with batch 1:\ntorchrun --nproc_per_node 4 train.py --per_device_train_batch_size 1",
        "多卡训练显存不够\nCUDA_VISIBLE_DEVICES=0,1 deepspeed --num_gpus=2 train.py --deepspeed ds.json",
        "accelerate launch --num_processes 8 sft.py runs out of memory on GPU 3",
        "python -m torch.distributed.launch --nproc_per_node=2 main.py, the second GPU OOMs",
    ],
)
def test_a_single_process_card_is_not_cited_for_a_per_process_launch(text: str) -> None:
    asked, setup = read_message(text)
    assert asked.one_process_per_gpu
    for cid in ONE_PROCESS_CARDS:
        assert launch_conflict(CARDS[cid], asked)
        assert answers_another_setup(CARDS[cid], asked, setup, "diagnose")


@pytest.mark.parametrize(
    "text",
    [
        # launched with plain python: the HF Trainer falls back to DataParallel
        "CUDA_VISIBLE_DEVICES=0,1 python train.py --per_device_train_batch_size 4, GPU 0 OOMs first",
        # names DataParallel / device_map itself, whatever the launcher
        "I wrap the model in nn.DataParallel and start it with torchrun --nproc_per_node 2 train.py",
        "torchrun --nproc_per_node 2 train.py with device_map='auto': memory is uneven",
        # deepspeed named as a framework, not as the launcher
        "deepspeed zero3 训练显存不均衡，第一张卡先 OOM",
    ],
)
def test_a_single_process_card_still_answers_when_one_process_may_drive_several_gpus(text: str) -> None:
    asked, _ = read_message(text)
    for cid in ONE_PROCESS_CARDS:
        assert not launch_conflict(CARDS[cid], asked)


def test_the_gate_leaves_the_distributed_device_map_error_card_alone() -> None:
    asked, _ = read_message(
        "torchrun --nproc_per_node 2 train.py fails: You can't train a model loaded with device_map"
    )
    assert not launch_conflict(CARDS["device-map-auto-distributed-error"], asked)


@pytest.mark.parametrize(
    ("text", "conflict"),
    [
        ("LoRA fine-tune of a 7B model OOMs on a 24 GB card", True),
        ("全参数微调显存比预期高很多", True),
        ("QLoRA with load_in_4bit uses more memory than expected", False),
        ("4bit 量化后 LoRA 显存反而变大", False),
        ("训练之前会在单卡上强制转 fp32，显存超了", False),
        ("model.float() before training doubles the memory", False),
    ],
)
def test_the_kbit_card_needs_a_quantized_base_or_an_fp32_upcast(text: str, conflict: bool) -> None:
    asked, _ = read_message(text)
    assert bool(kbit_conflict(CARDS["peft-prepare-kbit-training-upcast"], asked)) is conflict


def test_an_error_card_answers_the_wording_another_version_prints() -> None:
    card = CARDS["deepspeed-fp16-overflow-skipped-steps"]
    # the card's title quotes "OVERFLOW! Rank 0 Skipping step"; a later wording drops "OVERFLOW!" before the rank
    later, _ = read_message("fp16 run never learns: [Rank 0] Overflow detected. Skipping step. Attempted loss scale: 1")
    assert not error_title_conflict(card, later)
    unrelated, _ = read_message("Is fp16 training less stable than bf16 for a 7B model?")
    assert error_title_conflict(card, unrelated)
