"""cards9: a training stack named with no space around it in a Chinese sentence is still read (issue #11).

The messages are real users' wordings (threads cited inline); the cards are the real knowledge base.
"""

from __future__ import annotations

from rag.cards import load_cards
from rag.citing import answers_another_setup
from rag.opening import read_asked, stacks_named
from rag.parts import split_message
from rag.setup import read_setup

CARDS = {c.id: c for c in load_cards()}

# InternLM/xtuner #918, trimmed: the user names XTuner only inside Chinese text, Megatron-LM and DeepSpeed in brackets.
XTUNER_918 = (
    "在使用其它框架（Megatron-LM、DeepSpeed）训练的时候，一般统一把考虑梯度累积后的batch-size作为真正的单步batch-size，"
    "但是从xtuner训练时的步数显示来看，显然xtuner的步数逻辑不是这样的，请问有相关的设置可以保证我的步数为考虑梯度累积以后的步数吗？"
)


def test_a_stack_name_glued_to_chinese_is_named():
    assert "xtuner" in stacks_named("从xtuner训练时的步数显示来看")
    assert {"hf-trainer", "accelerate"} <= stacks_named("我用Trainer训练，per_device_train_batch_size 设成 4")
    assert "trl" in stacks_named("用trl的SFTTrainer训练qwen")
    # Unchanged: a lower-case "trainer" is any training loop, and a stack name inside a longer word is not the stack.
    assert "hf-trainer" not in stacks_named("自己写的trainer里每步都更新")
    assert "trl" not in stacks_named("control the loss")


def test_the_xtuner_card_answers_a_message_that_names_xtuner_in_chinese():
    parts = split_message(XTUNER_918)
    asked = read_asked(XTUNER_918, parts)
    setup, _ = read_setup(parts)
    assert {"xtuner", "megatron"} <= set(asked.stacks)
    assert answers_another_setup(CARDS["xtuner-accumulative-counts-and-checkpointing"], asked, setup) == ""
    # A card whose lead is about only another stack (the HF Trainer) is still not cited for it.
    assert answers_another_setup(CARDS["hf-trainer-step-counts-optimizer-updates"], asked, setup) != ""
