"""open13: the first sentence for what was asked.

A reported symptom of a training run is in scope even when no card, setting or pasted log matches it (real wordings:
github.com/OFA-Sys/Chinese-CLIP/issues/142 "训练时损失一直不降", github.com/QwenLM/Qwen-VL/issues/179 mixed data
"finetune … 会卡住"); with no card for it the opening asks for what tells that symptom's causes apart.
"""

from __future__ import annotations

import pytest

from rag.evidence import reports_training_failure
from rag.intents import detect_intents, detect_misconceptions


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


# "48G" is a common capacity of one card (A6000, A40, L40S), not a sum: "我4张48G显卡oom" (datawhalechina/happy-llm)
# states the cards, it does not say their memory adds up. A single card that runs what several smaller ones cannot
# ("5张3090卡微调内存不足，但单机单卡a6000可以微调", baichuan-inc/Baichuan2) does presuppose the sum.
@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ("想问一下这个qwen2.5-1.5B需要多大显存，我4张48G显卡oom", False),
        ("两张3090的显存能叠加成48G来用吗？", True),
        ("单机5张3090卡微调内存不足，但单机单卡a6000可以微调", True),
        ("多卡的loss只能降到0.35左右，而单卡可以降到0.0009，显存没问题", False),
    ],
)
def test_a_cards_capacity_is_not_a_pooling_belief(text: str, holds: bool) -> None:
    keys = [m.key for m in detect_misconceptions(text)]
    assert ("more_gpus_pool_memory" in keys) is holds


# "fit" inside "benefit" is no memory word (google-research/tuning_playbook: "gradient accumulation can reduce the
# number of backward ops, which would benefit the throughput"; microsoft/AzureML-BERT: "What's the benefit of
# changing gradient_accumulation_steps to 64?"), and "reduce the number of backward ops" saves no memory.
@pytest.mark.parametrize(
    "text",
    [
        "gradient accumulation can reduce the number of backward ops, which would benefit the throughput",
        "What's the benefit of changing gradient_accumulation_steps to 64? better performance?",
    ],
)
def test_benefit_is_no_memory_belief(text: str) -> None:
    assert not detect_misconceptions(text)
    assert not detect_intents(text).memory


def test_lowering_ga_to_save_memory_is_still_the_belief() -> None:
    keys = [m.key for m in detect_misconceptions("Will lowering gradient_accumulation_steps save memory so it fits?")]
    assert "lower_ga_saves_memory" in keys
