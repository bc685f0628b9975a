"""A model named the way people write it reaches its preset: the exact shape (a MoE's total and active
parameters), never only the size read off the name ("Mixtral 8x7B" is 46.7B parameters, not 7B)."""

from __future__ import annotations

import pytest

from calculators.presets import MODEL_PRESETS, active_params, count_params, preset_for_name
from rag.slots import extract_slots


@pytest.mark.parametrize(
    ("written", "preset"),
    [
        ("Qwen2.5-14B-Instruct", "qwen2.5-14b"),
        ("meta-llama/Llama-2-13b-chat-hf", "llama-2-13b"),
        ("Mistral-7B-Instruct-v0.2", "mistral-7b"),
        ("Mixtral 8x7B", "mixtral-8x7b"),
        ("Qwen1.5-MoE-A2.7B-Chat", "qwen1.5-moe-a2.7b"),
        ("Qwen2-57B-A14B-Instruct", "qwen2-57b-a14b"),
        ("DeepSeek-V2-Lite-Chat", "deepseek-v2-lite"),
        ("qwen2.5-15b", None),  # close to a preset is not a preset: its shape is unknown
        ("Qwen-14B", "qwen-14b"),  # Qwen (v1) 14B, its own preset: not Qwen2.5-14B (48 layers, GQA)
        ("Qwen1.5-14B-Chat", "qwen1.5-14b"),
        ("Llama3-70B", "llama-3.1-70b"),  # LLaMA-Factory users' spelling; Llama 3 and 3.1 70B share the shape
        ("Meta-Llama-3-70B-Instruct", "llama-3.1-70b"),
        ("Meta-Llama-3-8B", "llama-3-8b"),
        ("Qwen2-72B-Instruct", "qwen2.5-72b"),  # Qwen2 and Qwen2.5 72B share one config (8192 x 80, 29568 MLP)
        ("Qwen2-1.5B", "qwen2.5-1.5b"),
        ("Qwen2-14B", None),  # there is no Qwen2 14B
    ],
)
def test_preset_for_name(written: str, preset: str | None) -> None:
    assert preset_for_name(written) == preset


@pytest.mark.parametrize(
    ("message", "preset"),
    [
        ("mixtral 8x7b qlora on a 4090, will it fit?", "mixtral-8x7b"),
        ("Qwen1.5-MoE-A2.7B sft 需要多少显存", "qwen1.5-moe-a2.7b"),
        ("qwen3-30b-a3b lora on 2 A100", "qwen3-30b-a3b"),
        ("DeepSeek-V2-Lite lora 8卡A100能跑吗", "deepseek-v2-lite"),
        ("Qwen2.5-14B lora 4090 OOM", "qwen2.5-14b"),
    ],
)
def test_a_message_naming_a_moe_or_sized_preset_sets_the_preset_not_a_size(message: str, preset: str) -> None:
    slots = extract_slots(message, prose=True)
    assert slots.model == preset and slots.num_params is None
    shape = MODEL_PRESETS[preset]
    if "8x7b" in preset:  # the size written in the name would have been 7B
        assert count_params(shape) > 46e9 and active_params(shape) < 13e9


def test_a_refused_estimate_opens_the_fit_answer_with_the_reason(bot_without_retrieval) -> None:
    """LoRA on DeepSeek's latent attention is not modelled: the answer says so first, not a card about 7B LoRA."""
    ans = bot_without_retrieval.ask("DeepSeek-V2-Lite lora 微调，8卡A100 80G 够吗")
    assert ans.act == "fit"
    assert ans.first_screen.startswith("计算器拒绝了这组参数") and "尚未建模" in ans.first_screen
    assert ans.text.count("尚未建模") == 1  # said once, not again under the numbers
    full = bot_without_retrieval.ask("DeepSeek-V2-Lite full fine-tune with ZeRO-3 on 8x A100 80GB: will it fit?")
    assert "rejected" not in full.first_screen and "GiB" in full.first_screen
