"""Fast units for the question act (act13): what the asking sentences ask, whatever symptom is mentioned around them.

Wordings written for these tests (not dev questions): each case is one mechanism of ``rag.acts.rule_act``.
"""

from __future__ import annotations

import pytest

from rag.acts import asked_sentences, rule_act
from rag.parts import prose_of, split_message


def act(text: str) -> str:
    return rule_act(split_message(text))


@pytest.mark.parametrize(
    "text,expected",
    [
        # Only a would/could/会…吗 question about what an action does: a verdict, though a failure is mentioned.
        ("My loss became NaN last week. Would switching from fp16 to bf16 avoid the NaN?", "yes_no"),
        ("训练时遇到了 OOM。请问换成 ZeRO-3 之后还会报 OOM 吗？", "yes_no"),
        # Asking whether something is wrong with the run, or asking the reader for help, stays a diagnosis.
        ("My loss became NaN after 200 steps with fp16. Is there a problem with my learning rate?", "diagnose"),
        ("My loss became NaN after 200 steps with fp16. Could anyone give me some suggestions?", "diagnose"),
        ("训练到一半报 OOM 了，我的显存 24G。请问是 batch 导致的吗？", "diagnose"),
    ],
)
def test_verdict_questions_next_to_a_symptom(text: str, expected: str) -> None:
    assert act(text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        # A yes/no asked along with what or how much: the explanation answers both.
        ("请问开启 packing 会改变每个 step 的样本数吗？上限是多少？", "explain"),
        ("Does ZeRO-2 shard the gradients? What does it keep on every rank?", "explain"),
        # A yes/no followed by a question about what to change stays a verdict.
        ("V100 不支持 bf16 吧，那 bf16 训练的模型能在 V100 上推理吗？需要修改什么？", "yes_no"),
        # A yes/no alone stays a verdict.
        ("Does activation checkpointing slow down each training step?", "yes_no"),
    ],
)
def test_yes_no_with_a_wh_question(text: str, expected: str) -> None:
    assert act(text) == expected


def test_issue_form_reproduce_heading_is_not_a_question() -> None:
    text = "Training hangs at step 10\n\n### How to Reproduce / 如何复现\n\nrun train.sh with 8 GPUs"
    prose = prose_of(split_message(text))
    assert act(text) == "diagnose"
    from rag.acts import _TEMPLATE

    assert not any("Reproduce" in a for a in asked_sentences(_TEMPLATE.sub(" ", prose)))


@pytest.mark.parametrize(
    "text",
    [
        "I got OOM with offload off. May I ask what is the required GPU memory for the offload config?",
        "训练一直卡住不动，请问 LoRA 微调系统内存要求多少呢？",
    ],
)
def test_asking_the_memory_a_run_requires_is_fit(text: str) -> None:
    assert act(text) == "fit"
