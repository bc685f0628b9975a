"""open13: the first sentence for what was asked.

A reported symptom of a training run is in scope even when no card, setting or pasted log matches it (real wordings:
github.com/OFA-Sys/Chinese-CLIP/issues/142 "训练时损失一直不降", github.com/QwenLM/Qwen-VL/issues/179 mixed data
"finetune … 会卡住"); with no card for it the opening asks for what tells that symptom's causes apart.
"""

from __future__ import annotations

import pytest

from rag.evidence import reports_training_failure


@pytest.mark.parametrize(
    "text",
    [
        "训练时损失一直不降，这种情况怎么样处理呢？",
        "混合数据一起 finetune，会卡住",
        "training hangs after the first step",
    ],
)
def test_a_training_symptom_is_a_training_failure(text: str) -> None:
    assert reports_training_failure(text)


@pytest.mark.parametrize("text", ["今天天气怎么样？", "How do I bake sourdough bread?", "这趟火车很慢", "训练营报名"])
def test_no_symptom_or_no_training_is_not(text: str) -> None:
    assert not reports_training_failure(text)


def test_a_bare_training_symptom_is_answered_not_refused(bot_without_retrieval) -> None:  # type: ignore[no-untyped-def]
    ans = bot_without_retrieval.ask("训练时损失一直不降，这种情况怎么样处理呢？")
    assert not ans.refused
    assert ans.act == "diagnose"
    assert "学习率" in ans.first_screen  # the loss family's paste list, not "贴出完整报错"
