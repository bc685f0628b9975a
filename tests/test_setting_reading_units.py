"""Settings as the run has them: turned off in words or flags, commented out, or one flag read twice.

Real wordings: "I'm using two A100 80GB for the training, without any offloading" (DeepSpeed #5507); a launch
command's `--gradient_checkpointing false` (VLM-R1 #133); "Is it possible to fine tune the llama-2-70B …" is a
fit question although "fine tune" is written without a hyphen.
"""

from __future__ import annotations

import pytest

from rag.acts import rule_act
from rag.parts import split_message
from rag.setup import read_setup


@pytest.mark.parametrize(
    ("message", "key", "value"),
    [
        ("I'm using two A100 80GB for the training, without any offloading.", "offload_optimizer", False),
        ("I'm using two A100 80GB for the training, without any offloading.", "offload_param", False),
        ("不开offload 也OOM", "offload_optimizer", False),
        ("no OOM after I enabled offload", "offload_optimizer", True),
        ("ZeRO-3 with CPU offload, 8 A100", "offload_optimizer", True),
        (
            "torchrun --nproc_per_node 8 train.py --gradient_checkpointing false --bf16",
            "gradient_checkpointing",
            "none",
        ),
        ("torchrun --nproc_per_node 8 train.py --gradient_checkpointing true --bf16", "gradient_checkpointing", "full"),
        ("training with gradient checkpointing on 1 GPU", "gradient_checkpointing", "full"),
    ],
)
def test_setting_on_or_off(message: str, key: str, value: object) -> None:
    setup, _ = read_setup(split_message(message))
    assert setup.get(key) == value


@pytest.mark.parametrize(
    "message",
    [
        "Is it possible to fine tune the llama-2-70B for a 3*8*A100 (40G) configuration, thanks!",
        "Is it possible to fine-tune Llama-2-13B on one RTX 4090?",
    ],
)
def test_possible_to_fine_tune_is_fit(message: str) -> None:
    assert rule_act(split_message(message)) == "fit"


@pytest.mark.parametrize(
    ("message", "micro", "conflicts"),
    [
        # lit-llama style hyperparameters: the old values kept as comments above the live ones
        ("```\n# micro_batch_size = 6\n# batch_size = 128\nmicro_batch_size = 4\nbatch_size = 64\n```", 4, []),
        ("```yaml\n# per_device_train_batch_size: 8\nper_device_train_batch_size: 2\n```", 2, []),
        (
            "```\ntorchrun --nproc_per_node 4 train.py \\\n  #--per_device_train_batch_size 16 \\\n"
            "  --per_device_train_batch_size 2 \\\n  --bf16\n```",
            2,
            [],
        ),
    ],
)
def test_commented_out_settings_are_not_the_run(message: str, micro: int, conflicts: list[int]) -> None:
    setup, _ = read_setup(split_message(message))
    assert setup.get("train_micro_batch_size_per_gpu") == micro
    assert [c.value for c in setup.conflicts.get("train_micro_batch_size_per_gpu", [])] == conflicts


def test_one_precision_flag_read_twice_is_no_conflict() -> None:
    """`--bf16` read by the config parser ("amp-bf16") and by the text patterns ("bf16") is one setting: no
    "precision is amp-bf16 … but bf16" note (seen on every HF launch command with `--bf16`)."""
    setup, _ = read_setup(split_message("torchrun --nproc_per_node 4 train.py --per_device_train_batch_size 2 --bf16"))
    assert setup.get("precision") == "amp-bf16"
    assert "precision" not in setup.conflicts
    # a real disagreement stays one: fp16 in the prose, bf16 in the command
    setup, _ = read_setup(split_message("I train in fp16.\n```\ntorchrun --nproc_per_node 4 train.py --bf16\n```"))
    assert "precision" in setup.conflicts


@pytest.mark.parametrize(
    ("message", "micro"),
    [
        ("In principle, 2*80GB will be quite sufficient for training 7B. Batch size per device is 4.", 4),  # DS #5507
        ("The batch size on each GPU is 2", 2),
        ("with a per-device batch size of 4", 4),
        ("a per-GPU batch size of 8", 8),
    ],
)
def test_batch_size_said_per_device(message: str, micro: int) -> None:
    setup, _ = read_setup(split_message(message))
    assert setup.get("train_micro_batch_size_per_gpu") == micro


def test_trainer_banner_pasted_as_prose() -> None:
    """LLaMA-Factory users paste the HF Trainer banner without a fence: its total batch is read like in a log."""
    message = (
        "为什么step数这么少？\n***** Running training *****\n  Num examples = 900\n  Num Epochs = 10\n"
        "  Instantaneous batch size per device = 1\n"
        "  Total train batch size (w. parallel, distributed & accumulation) = 16\n"
        "  Gradient Accumulation steps = 8\n  Total optimization steps = 560"
    )
    setup, _ = read_setup(split_message(message))
    assert setup.get("train_batch_size") == 16
    assert setup.get("train_micro_batch_size_per_gpu") == 1
    assert setup.get("gradient_accumulation_steps") == 8
