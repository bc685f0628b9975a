""" "Is this normal?" about what the user saw gets "yes, expected" with the reason, not "No." to a belief they never
stated, and no "what the question gets wrong" section unless they wrote what they expected."""

from __future__ import annotations

from typing import Any


def test_an_observation_asked_about_opens_with_yes_and_the_reason(bot_without_retrieval: Any) -> None:
    # ChatGLM-Finetuning #37, as the user wrote it
    ans = bot_without_retrieval.ask(
        "多卡训练显存翻倍\n\n如题，设置为CUDA_VISIBLE_DEVICES=0,1 deepspeed finetuning_freeze.py，显存翻倍 是否为正常现象呢"
    )
    assert ans.act == "is_normal"
    assert ans.first_screen.startswith("**是的，这是预期的：多卡不会把显存合并")
    assert not ans.corrections


def test_a_stated_expectation_is_still_corrected(bot_without_retrieval: Any) -> None:
    ans = bot_without_retrieval.ask("两张卡训练，我以为多卡会把显存合并，每张卡占用会减半，结果显存翻倍，这正常吗？")
    assert ans.act == "is_normal" and ans.corrections


def test_an_issue_title_naming_what_was_seen_holds_no_belief() -> None:
    """discuss.pytorch.org #180729: the title reports growth, the body expects GA *not* to change memory; no
    "what the question gets wrong" correction for a belief the user does not hold."""
    from rag.intents import detect_misconceptions, holds_belief

    message = (
        "VRAM usage increase with more gradient accumulation steps\n"
        "What would cause GPU memory usage increase with more gradient accumulation steps? "
        "I am assuming changing gradient_accumulation_steps shall not have any impact on the memory usage."
    )
    rules = detect_misconceptions(message)
    assert rules and not any(holds_belief(message, r) for r in rules)
    # the same claim asserted in a sentence is still held
    claim = "梯度累积会增加显存吧，GA=16 显存是 GA=1 的 16 倍"
    assert any(holds_belief(claim, r) for r in detect_misconceptions(claim))
