"""Stated-value fidelity (issue #10): every number the user stated is read, with where it came from.

Each case is a snippet of a real message from the dev set's sources (tests/data/real_questions), cut to the part that
states the value. Fast tier: text processing only, no model.
"""
from __future__ import annotations

import pytest

from rag.parts import split_message
from rag.setup import read_setup
from rag.slots import classify_key, extract_printed, extract_slots


def setup_of(text: str):
    setup, _ = read_setup(split_message(text))
    return setup


# ---- keys spelt every framework's way -----------------------------------------------------------------
@pytest.mark.parametrize("key, expected", [
    ("per_device_train_batch_size", "train_micro_batch_size_per_gpu"),
    ("PER_DEVICE_BATCH_SIZE", "train_micro_batch_size_per_gpu"),           # InternVL shell scripts
    ("device_train_microbatch_size", "train_micro_batch_size_per_gpu"),    # OLMo
    ("micro_train_batch_size", "train_micro_batch_size_per_gpu"),          # OpenRLHF
    ("per_gpu_train_batch_size", "train_micro_batch_size_per_gpu"),        # old transformers examples
    ("global_train_batch_size", "train_batch_size"),
    ("GRADIENT_ACCUMULATIONS", "gradient_accumulation_steps"),             # open-instruct
    ("accumulate_grad_batches", "gradient_accumulation_steps"),            # Lightning
    ("per_device_eval_batch_size", None),
    ("rollout_batch_size", None),
    ("eval_accumulation_steps", None),
    ("max_new_tokens", None),
])
def test_classify_key(key, expected):
    assert classify_key(key) == expected


def test_env_style_settings_in_prose():
    # allenai/open-instruct#464
    s = extract_slots("for 8 GPUs, I should set NUM_PROCESSES=8, PER_DEVICE_BATCH_SIZE=1, GRADIENT_ACCUMULATIONS=16 "
                      "for an effective batch size of 128?")
    assert (s.train_micro_batch_size_per_gpu, s.gradient_accumulation_steps, s.world_size) == (1, 16, 8)


def test_bare_batch_size_next_to_micro_batch_is_global():
    # tloen/alpaca-lora#397: --batch_size is the global batch there
    setup = setup_of("what is micro_batch_size?\n```\npython finetune.py \\\n    --batch_size 128 \\\n"
                     "    --micro_batch_size 4\n```")
    assert setup.get("train_micro_batch_size_per_gpu") == 4
    assert setup.get("train_batch_size") == 128


def test_hf_trainer_banner_in_a_log():
    # LlamaChinese/Llama-Chinese#242
    log = ("[INFO|trainer.py:1715] 2023-10-19 09:44:55,247 >>   Instantaneous batch size per device = 1\n"
           "[INFO|trainer.py:1718] 2023-10-19 09:44:55,247 >>   Total train batch size (w. parallel, distributed & "
           "accumulation) = 64\n[INFO|trainer.py:1719] 2023-10-19 09:44:55,247 >>   Gradient Accumulation steps = 8")
    setup = setup_of("为什么显存这么大\n" + log)
    assert setup.get("train_micro_batch_size_per_gpu") == 1 and setup.source("train_micro_batch_size_per_gpu") == "log"
    assert setup.get("train_batch_size") == 64 and setup.get("gradient_accumulation_steps") == 8


def test_trl_global_batch_error():
    # huggingface/open-r1#249
    s = extract_printed("ValueError: The global train batch size (7 x 1) must be evenly divisible by the number of "
                        "generations per prompt (8).")
    assert (s.world_size, s.train_micro_batch_size_per_gpu) == (7, 1)
