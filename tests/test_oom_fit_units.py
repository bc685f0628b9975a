"""A "fits" verdict for a run the user says went out of memory: the headline says the run used more than computed
(and which inputs were assumed) instead of contradicting what the user saw."""

from __future__ import annotations

from typing import Any

import pytest

from rag.intents import reports_oom


@pytest.mark.parametrize(
    ("text", "seen"),
    [
        ("在一张24G的A100或四张16G的V100上lora微调Qwen2.5Vl7B，均OOM", True),
        ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB", True),
        ("training OOMs at step 100 with bs 4", True),
        ("torch.OutOfMemoryError: CUDA out of memory.", True),
        ("zero3 训练还是显存不足", True),
        ("7B lora 在3090上会不会OOM？", False),
        ("Will it OOM on a 24GB card?", False),
        ("7B 全量微调需要多少显存？", False),
    ],
)
def test_reports_oom(text: str, seen: bool) -> None:
    assert reports_oom(text) is seen


def test_a_fit_answer_for_a_run_that_went_oom_says_the_run_used_more(bot_without_retrieval: Any) -> None:
    bot = bot_without_retrieval
    asked = "请问Qwen2.5-7B lora 大概需要多少显存？我在一张 A100 80G 上 lora 微调，均OOM"
    ans = bot.ask(asked)
    assert ans.first_screen.startswith("**按这些设置估算每卡约") and "你却遇到了 OOM" in ans.first_screen
    assert "序列长度" in ans.first_screen  # the assumed sequence length is named as the likely difference
    plain = bot.ask("请问Qwen2.5-7B lora 在一张 A100 80G 上大概需要多少显存？")
    assert plain.first_screen.startswith("**能放下")
