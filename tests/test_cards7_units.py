"""cards7: the cards an answer cites are the ones that answer it (issues #10 and #11).

The messages are real users' wordings or close variants of them (threads cited inline); the cards are the real
knowledge base.
"""

from __future__ import annotations

from typing import Any

from rag.acts import Act
from rag.cards import load_cards
from rag.citing import answers_another_setup, card_methods
from rag.intents import detect_intents, tiny_batch_question
from rag.opening import AskedQuestion, lead_answers, read_asked, stacks_named
from rag.parts import prose_of, split_message
from rag.retrieval import Hit
from rag.setup import read_setup

ALL = tuple(load_cards())
CARDS = {c.id: c for c in ALL}


def _asked(text: str) -> AskedQuestion:
    return read_asked(text, split_message(text))


# ---- "batch 1 and still OOM" is a memory question, not one about what a tiny batch does to training ----------
def test_an_oom_at_batch_one_is_not_a_tiny_batch_question():
    # liangwq/Chatglm_lora_multi-gpu #15, MhLiao/DB #151: "batch size = 1 还是显存溢出" / "仍然报显存溢出" — "溢出问题"
    # holds the effect words "出问题" but reports an overflow.
    assert not tiny_batch_question("batch size = 1 还是显存溢出，出现了内存溢出问题", 1, None)
    assert not tiny_batch_question(
        "Why is my batch_size set to 1, or there will be a memory explosion problem?", 1, None
    )


def test_a_gap_in_gigabytes_is_not_an_effect_question():
    # LLaMA-Factory: "batchsize 2，几乎每张卡都占用50G左右，这个跟理论计算差的太多" — 差 is a gap between two figures.
    assert not tiny_batch_question(
        "seqlen 2048， batchsize 2，每张卡都占用50G左右，这个跟理论计算差的太多，什么原因？", 2, None
    )


def test_what_sets_the_step_count_is_not_an_effect_question():
    # ms-swift: "batch_size默认使用1 … 为什么step是351呢？还有哪些参数影响step呢？"
    assert not tiny_batch_question("batch_size默认使用1，为什么step是351呢？还有哪些参数影响step呢？", 1, None)


def test_asking_what_batch_one_does_to_training_still_is():
    # PaddleDetection #3949 asks it in its own sentence after reporting the OOM.
    text = "显卡内存爆掉了。如果设置成1来训练就是单张图片来训练，请问会对训练有影响吗？"
    assert tiny_batch_question(text, 1, None)
    assert tiny_batch_question("micro batch 只有 1，累积也只有 1，训练出来效果会不会很差", 1, 1)


# ---- a retrieved card about another setup is not cited (rag.citing) ---------------------------------------------
QWEN_FULL = "全参数微调 qwen2.5-7b，8卡 A100 80G，zero2，micro batch 4，seq 4096，bf16，一直 OOM，为什么？"


def _why_not(card_id: str, text: str) -> str:
    parts = split_message(text)
    return answers_another_setup(CARDS[card_id], read_asked(text, parts), read_setup(parts)[0])


def test_a_ptuning_card_does_not_answer_a_full_fine_tune():
    assert "ptuning" in _why_not("ptuning-v2-chatglm-memory", QWEN_FULL)
    assert (
        _why_not("ptuning-v2-chatglm-memory", "chatglm2-6b 用 p-tuning v2 训练，pre_seq_len 128，显存 40 多 G 正常吗？")
        == ""
    )


def test_a_lora_card_does_not_answer_a_full_fine_tune_but_a_qlora_run():
    assert _why_not("lora-memory-breakdown", "Full fine-tuning llama-2-13b on 8 A100s with ZeRO-3 runs out of memory")
    assert _why_not("lora-memory-breakdown", "QLoRA on llama-2-13b, 4-bit, batch 4: why 20 GB?") == ""
    # "alpaca-lora" names a repository, not the method.
    assert card_methods(CARDS["alpaca-lora-ga-from-world-size"]) == frozenset()


def test_the_24gb_card_answers_only_a_24gb_card_and_its_model_size():
    assert "GPU capacity" in _why_not("oom-7b-full-finetune-24gb", QWEN_FULL)
    assert "model size" in _why_not("oom-7b-full-finetune-24gb", "两张 3090 24G 全参微调 llama 13b 一直 OOM")
    assert _why_not("oom-7b-full-finetune-24gb", "4090 24G 全量微调 llama 7B 一直 OOM，batch 调到 1 也不行") == ""
    # A message that states neither may be about it.
    assert _why_not("oom-7b-full-finetune-24gb", "全量微调为什么 batch 调到 1 也 OOM？") == ""


def test_verl_is_named_by_its_data_protocol():
    # verl #1004: "AssertionError: only support equal chunk. Got size of DataProto 16 …, backend是megatron".
    assert "verl" in stacks_named("AssertionError: only support equal chunk. Got size of DataProto 16 and chunk 32.")


# ---- what the engine cites ---------------------------------------------------------------------------------------
def _hit(card_id: str, dense: float, bm25_rank: int) -> Hit:
    return Hit(card=CARDS[card_id], score=0.0, dense_score=dense, bm25_rank=bm25_rank)


def _cited(bot: Any, text: str, hits: list[Hit], act: Act = "diagnose") -> list[str]:
    parts = split_message(text)
    prose = prose_of(parts)
    cards = bot._cards_for([], hits, detect_intents(prose), None, read_asked(text, parts), read_setup(parts)[0], act)
    return [c.id for c in cards]


def test_a_card_about_another_setup_leaves_its_place_to_the_next_one(bot_without_retrieval: Any) -> None:
    hits = [
        _hit("oom-7b-full-finetune-24gb", 0.62, 1),
        _hit("ptuning-v2-chatglm-memory", 0.61, 2),
        _hit("zero-stages-memory-savings", 0.60, 3),
        _hit("mixed-precision-bytes-per-param", 0.60, 4),
    ]
    cited = _cited(bot_without_retrieval, QWEN_FULL, hits)
    assert cited[:2] == ["zero-stages-memory-savings", "mixed-precision-bytes-per-param"]
    assert not {"oom-7b-full-finetune-24gb", "ptuning-v2-chatglm-memory"} & set(cited)


def test_a_card_beyond_the_first_three_is_cited_only_when_it_answers(bot_without_retrieval: Any) -> None:
    # Beyond the first three, a card must pass the opening gate: the learning-rate scaling rule does not answer an OOM.
    hits = [
        _hit("oom-7b-full-finetune-24gb", 0.62, 1),
        _hit("zero-stages-memory-savings", 0.61, 2),
        _hit("mixed-precision-bytes-per-param", 0.60, 3),
        _hit("oom-memory-budget-breakdown", 0.60, 4),
        _hit("lr-linear-scaling-rule", 0.60, 5),
    ]
    assert not lead_answers(CARDS["lr-linear-scaling-rule"], _asked(QWEN_FULL), "diagnose", ALL).passes
    cited = _cited(bot_without_retrieval, QWEN_FULL, hits)
    assert "lr-linear-scaling-rule" not in cited
    assert len(cited) == 3 and "oom-7b-full-finetune-24gb" not in cited
