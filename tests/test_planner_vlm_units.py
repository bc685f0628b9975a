"""A vision-language model named in a fit question.

A VL preset (Qwen2-VL, Qwen2.5-VL, LLaVA-1.5, InternVL2-8B: calculators/vision.py) counts its vision encoder, frozen
as LLaMA-Factory and ms-swift leave it by default; the images' visual tokens are counted only when the number and size
of the images are stated, so an answer without them says their per-image rule and that they are not in the sequence.
A VL model with no preset (MiniCPM-V, DeepSeek-VL) is estimated as its language model, with that caveat.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.parametrize(
    ("question", "tower", "rule"),
    [
        ("Qwen2.5-VL-7B LoRA 微调，单卡 4090 24G 能跑吗？", "632M", "28×28"),
        ("Can I LoRA fine-tune llava-v1.5-7b on one RTX 4090?", "304M", "576 per image"),
        ("InternVL2-8B full fine-tune on 8x A100 80GB with ZeRO-3, how much memory per GPU?", "304M", "448×448 tile"),
    ],
)
def test_a_vl_preset_counts_its_vision_encoder_and_says_the_image_tokens_are_not_in(
    bot_without_retrieval: Any, question: str, tower: str, rule: str
) -> None:
    text = bot_without_retrieval.ask(question).text
    assert tower in text and rule in text and ("视觉编码器" in text or "vision encoder" in text), text[:800]
    assert "只算了语言模型" not in text and "the language model only" not in text


def test_a_vl_model_without_a_preset_is_estimated_as_its_language_model_with_a_caveat(
    bot_without_retrieval: Any,
) -> None:
    # (Qwen3-VL-8B was this example until stop 31 gave Qwen3-VL its presets: tests/test_vlm13_units.py)
    text = bot_without_retrieval.ask("deepseek-vl-7b-chat LoRA on one RTX 4090, will it fit?").text
    assert "the language model only" in text and "28×28" in text, text[:800]


def test_a_text_model_gets_no_vision_caveat(bot_without_retrieval: Any) -> None:
    text = bot_without_retrieval.ask("Can I LoRA fine-tune llama-3-8b on one RTX 4090?").text
    assert "vision encoder" not in text and "28×28" not in text
