"""Asking for the hardware a run needs ("配置要求", "需要什么配置") is a fit question, as "how much memory" is."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.parametrize(
    "message",
    [
        # LLaMA-Factory #1585, as the user wrote it
        "Yi-34B SFT 我看已经支持到Yi-34B，LLaMA2-70B了，请问有在Factory做过SFT的吗？这个有没有配置要求？ 通过Accelerate多卡训练，GPU、系统内存有配置参考吗？",
        "全参数微调 Qwen2.5-7B 需要什么配置？",
        "lora 微调 13b 的硬件要求是多少",
    ],
)
def test_hardware_requirement_questions_are_fit(bot_without_retrieval: Any, message: str) -> None:
    assert bot_without_retrieval.ask(message).act == "fit"
