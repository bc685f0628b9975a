"""Readers and checks added in stop 37, each from a dev question of its class (fast unit tier)."""

from __future__ import annotations

import pytest

from calculators.factcheck.check import looks_like_chatbot_answer
from calculators.factcheck.rules import _formula_without_gpus
from rag.slots import extract_slots


@pytest.mark.parametrize(
    "text,size",
    [
        ("I train a 4B gpt2 model with deepspeed and it OOMs", 4e9),  # accelerate#1280: "a 3.5B gpt2 model"
        ("training a 3.5B GPT-2 model on 8 GPUs", 3.5e9),
    ],
)
def test_a_size_written_before_a_family_with_one_preset_is_the_users_model(text, size):
    slots = extract_slots(text, prose=True)
    assert slots.model is None and slots.num_params == size


@pytest.mark.parametrize("text,preset", [("a 13B llama model OOM", "llama-2-13b"), ("124M gpt2 fine-tune", "gpt2")])
def test_a_size_the_family_has_still_reaches_its_preset(text, preset):
    assert extract_slots(text, prose=True).model == preset


def test_a_report_of_what_the_user_did_is_not_a_pasted_chatbot_answer():
    # ho-blind12-en (peft): "I applied LoRA and DoRA to a ResNet-50 and noticed … Here are some profiling results"
    text = (
        "Memory Inefficiency for LoRA & DoRA during fine-tuning.\n\nI applied LoRA and DoRA to a ResNet-50 and "
        "noticed, that the memory needed for storing activations during fine-tuning almost doubles compared to full "
        "fine-tuning. As this is the main contributor to the memory consumption, this is concerning. What could be "
        "done here?\n\nHere are some profiling results from the ResNet-50 under batch size 16 :\n\n"
        + "| Device | PARAM | GRAD | ACT | Total |\n|---|---|---|---|---|\n| cpu | 89.68 MiB | 89.68 MiB | 1310 MiB |\n"
        * 3
    )
    assert not looks_like_chatbot_answer(text)


def test_a_product_of_three_numbers_has_the_gpu_factor():
    fact = (
        "Set only train_micro_batch_size_per_gpu plus accumulate_grad_batches=2 in the Trainer; DeepSpeed derives "
        "train_batch_size = 16 x 2 x 8 = 256"
    )
    assert not _formula_without_gpus(fact, fact, fact)
    bare = "The effective batch size = micro batch size x gradient accumulation steps"
    assert _formula_without_gpus(bare, bare, bare)


@pytest.mark.parametrize(
    "text,name,size",
    [
        ("fine-tuning bigscience/mt0-xxl with deepspeed zero3 OOM", "mt0-xxl", None),
        ("I use CompVis/stable-diffusion-v1-4 and bs 4", "stable-diffusion-v1-4", None),
        ("load openchat/openchat-3.6-8b-20240522 and it OOMs", "openchat-3.6-8b-20240522", 8e9),
    ],
)
def test_a_model_publishers_hub_id_names_the_model(text, name, size):
    slots = extract_slots(text, prose=True)
    assert slots.model_text == name and slots.num_params == size


def test_a_data_set_under_a_model_publisher_names_no_model():
    assert extract_slots("training on HuggingFaceH4/ultrachat_200k", prose=True).model_text is None
