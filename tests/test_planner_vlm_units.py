"""A vision-language model named in a fit question: the estimate is for its language model, and the answer says so.

The presets hold decoder-only language models; a VL model's vision encoder and its images' visual tokens (Qwen2-VL:
about one token per 28×28 pixels, card vlm-image-tokens-memory) are outside that estimate, so a "fits" for
"Qwen2.5-VL-7B" computed on qwen2.5-7b at 1,024 tokens must carry that caveat.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.parametrize(
    "question",
    [
        "Qwen2.5-VL-7B LoRA 微调，单卡 4090 24G 能跑吗？",
        "Can I LoRA fine-tune llava-v1.5-7b on one RTX 4090?",
        "InternVL2-8B full fine-tune on 8x A100 80GB with ZeRO-3, how much memory per GPU?",
    ],
)
def test_a_vl_model_is_estimated_as_its_language_model_with_a_caveat(bot_without_retrieval: Any, question: str) -> None:
    text = bot_without_retrieval.ask(question).text
    assert "28×28" in text and ("视觉编码器" in text or "vision encoder" in text), text[:800]


def test_a_text_model_gets_no_vision_caveat(bot_without_retrieval: Any) -> None:
    text = bot_without_retrieval.ask("Can I LoRA fine-tune llama-3-8b on one RTX 4090?").text
    assert "vision encoder" not in text and "28×28" not in text
