"""cards7: the cards an answer cites are the ones that answer it (issues #10 and #11).

The messages are real users' wordings or close variants of them (threads cited inline); the cards are the real
knowledge base.
"""

from __future__ import annotations

from rag.intents import tiny_batch_question


# ---- "batch 1 and still OOM" is a memory question, not one about what a tiny batch does to training ----------
def test_an_oom_at_batch_one_is_not_a_tiny_batch_question():
    # liangwq/Chatglm_lora_multi-gpu #15, MhLiao/DB #151: "batch size = 1 还是显存溢出" / "仍然报显存溢出" — "溢出问题"
    # holds the effect words "出问题" but reports an overflow.
    assert not tiny_batch_question("batch size = 1 还是显存溢出，出现了内存溢出问题", 1, None)
    assert not tiny_batch_question("Why is my batch_size set to 1, or there will be a memory explosion problem?", 1, None)


def test_a_gap_in_gigabytes_is_not_an_effect_question():
    # LLaMA-Factory: "batchsize 2，几乎每张卡都占用50G左右，这个跟理论计算差的太多" — 差 is a gap between two figures.
    assert not tiny_batch_question("seqlen 2048， batchsize 2，每张卡都占用50G左右，这个跟理论计算差的太多，什么原因？", 2, None)


def test_what_sets_the_step_count_is_not_an_effect_question():
    # ms-swift: "batch_size默认使用1 … 为什么step是351呢？还有哪些参数影响step呢？"
    assert not tiny_batch_question("batch_size默认使用1，为什么step是351呢？还有哪些参数影响step呢？", 1, None)


def test_asking_what_batch_one_does_to_training_still_is():
    # PaddleDetection #3949 asks it in its own sentence after reporting the OOM.
    text = "显卡内存爆掉了。如果设置成1来训练就是单张图片来训练，请问会对训练有影响吗？"
    assert tiny_batch_question(text, 1, None)
    assert tiny_batch_question("micro batch 只有 1，累积也只有 1，训练出来效果会不会很差", 1, 1)
