"""Settings a message turns off in words or flags are read as off, not as on.

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
