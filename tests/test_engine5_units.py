"""engine5: first sentences that fit what was given (issue #10).

A diagnosis whose message names nothing that selects a cause opens with the usual causes ranked and what to paste;
evidence that does select one (a pasted error, a named mechanism the top card is about) keeps the confident opening;
a fit question without a model says what the figure depends on; the act rules read a few structures real users share;
GPU counts and methods stated in prose reach the setup. Messages are real users' wordings (threads cited inline).
"""

from __future__ import annotations

import pytest

from rag.acts import asks_anything, asks_whether, rule_act
from rag.cards import load_cards
from rag.evidence import card_in_family, read_evidence, symptom_family
from rag.intents import reports_oom
from rag.parts import split_message
from rag.slots import extract_slots

CARDS = {c.id: c for c in load_cards()}


def _evidence(text: str):  # type: ignore[no-untyped-def]
    return read_evidence(text, split_message(text))


# ---- evidence ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text", ["训练时损失一直不降", "loss not decreasing", "OOM", "训练很慢", "My loss is NaN after a few steps"]
)
def test_a_bare_symptom_selects_no_cause(text: str) -> None:
    ev = _evidence(text)
    assert not ev.concrete
    assert not ev.selects(CARDS["deepspeed-fp16-overflow-skipped-steps"])
    assert not ev.selects(CARDS["zero3-slow-training-and-generation"])
    assert not ev.selects(CARDS["oom-attention-flash-attention"])


def test_a_named_mechanism_or_an_error_string_selects_its_card() -> None:
    ds = _evidence("deepspeed 训练时 loss 一直不降，日志里一直打印 OVERFLOW! Rank 0 Skipping step")
    assert ds.selects(CARDS["deepspeed-fp16-overflow-skipped-steps"])
    z3 = _evidence("zero3 训练很慢")
    assert z3.selects(CARDS["zero3-slow-training-and-generation"])
    assert not z3.selects(CARDS["dora-slower-more-memory"])
    pasted = _evidence(
        '训练报错\n```\nTraceback (most recent call last):\n  File "x.py", line 1\nRuntimeError: boom\n```'
    )
    assert pasted.concrete and pasted.selects(CARDS["dora-slower-more-memory"])


@pytest.mark.parametrize(
    "text,family",
    [
        ("显存不够", "memory"),
        ("OOM", "memory"),
        ("微调数据 loss不下降", "loss"),
        ("训练很慢", "speed"),
        ("hello", "generic"),
    ],
)
def test_symptom_family(text: str, family: str) -> None:
    assert symptom_family(text) == family


def test_card_family_is_read_from_its_titles_and_symptoms() -> None:
    assert card_in_family(CARDS["mem-creeping-growth-over-steps"], "memory")
    assert not card_in_family(CARDS["lr-linear-scaling-rule"], "memory")
    assert card_in_family(CARDS["lr-linear-scaling-rule"], "generic")


# ---- the one question vocabulary ------------------------------------------------------------
def test_question_detectors_are_one_vocabulary() -> None:
    assert asks_whether("会不会 OOM？") and asks_whether("will it OOM") and not asks_whether("lora 微调均OOM")
    assert asks_anything("为什么显存一直爆") and not asks_anything("8卡 A100 训练 llama2-13b，zero3，micro batch 4")
    assert reports_oom("lora 微调均OOM") and not reports_oom("会不会 OOM？")


# ---- acts -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,act",
    [
        # google-research/bert#268, CogVLM2#37, ChatGLM3#238: the loss that does not fall is a report
        ("loss not decreasing", "diagnose"),
        ("Finetuning example loss does not go down over time", "diagnose"),
        ("为什么显存一直爆", "diagnose"),
        # UDTransNet#21, ImageDream#12, 3DUnetCNN#157: memory that grows, usage that is high/low
        ("A gradual increase in GPU memory usage\n\nI'm curious as to the reason behind this.", "diagnose"),
        (
            "When i run train.py, i found high GPU memory usage but low volatile gpu-util (~0%). Is there something i missed.",
            "diagnose",
        ),
        # bert-pytorch#10-style titles: uneven memory across GPUs
        ("imbalance GPU memory usage\n\nAny idea about the reason?", "diagnose"),
        # RethinkVSRAlignment#9: the same speed on 1 and 4 cards
        ("I found that the training speed of one card and four cards is the same, is there any solution", "diagnose"),
        # t5-pegasus-pytorch#68: "哪里设置的有问题吗" asks for the cause
        ("出现两张卡比一张卡训练速度慢，请问是哪里设置的有问题吗？", "diagnose"),
        # GUI-Odyssey#9: "how many GPU memory" asks a quantity
        ("Interesting work,  how many GPU memory is required for fine-tuning the model?", "fit"),
        ("My training keeps running out of memory, how much does it need?", "fit"),
    ],
)
def test_act_rules(text: str, act: str) -> None:
    assert rule_act(split_message(text)) == act


def test_how_long_it_takes_is_not_a_memory_question() -> None:
    assert rule_act(split_message("My training is slow, how much time does it take per epoch?")) != "fit"


# ---- GPU counts, lengths and methods stated in prose ------------------------------------------
@pytest.mark.parametrize(
    "text,world_size",
    [
        ("# 12 batch size * 1024 block size * 5 gradaccum * 8 GPUs = 491,520", 8),  # nanoGPT config comment
        ("batch size = gradient_accumulation_steps*per_device_train_batch_size*num_gpus = 128，使用了8块GPU训练", 8),
        ("请问全量微调qwen2-72B，训练maxlen为32768，128张A800，80G显存", 128),
        ("deepspeed --num_gpus 2 train.py", 2),
        ("num_gpus = 8", 8),
        ("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 用8卡", 8),
        # PaddlePaddle-DeepSpeech#25: the count compared with is not the run's
        ("一个batch,用两块儿卡比一块卡还要慢。", 2),
        ("I train on 8 GPUs instead of 4 GPUs", 8),
        # bert pre-training#26-style title: a choice between counts is not one of them
        ("num_train_steps是一块卡还是多块卡的step？举例来说，有4块卡", 4),
        ("8 GPUs or 4 GPUs, which is better?", None),
    ],
)
def test_gpu_count_from_prose(text: str, world_size: int | None) -> None:
    assert extract_slots(text, prose=True).world_size == world_size


def test_seq_len_and_method_from_prose() -> None:
    assert extract_slots("训练maxlen为32768，128张A800", prose=True).seq_len == 32768
    # Qwen#888: LoRA asked about as the alternative to the stated full fine-tune
    s = extract_slots("8*A100 (80G) deepspeed zero3 全量微调72B遇到OOM，还是说72B只能lora方式微调？", prose=True)
    assert s.finetune == "full"
    # llama-cookbook#25: "(full parameter) … so lora is not the best option"; the size after "GPUs ("
    s = extract_slots(
        "How many A100 GPUs (40GB) required to tune 13B model ( full parameter )? so lora is not the best option",
        prose=True,
    )
    assert s.finetune == "full" and s.gpu_memory_gb == 40.0
    assert extract_slots("I use LoRA, full fine-tuning OOMs", prose=True).finetune == "lora"


# ---- first screens (real Assistant) -----------------------------------------------------------
@pytest.fixture(scope="module")
def bot():  # type: ignore[no-untyped-def]
    from rag import Assistant

    return Assistant()


def _words(text: str) -> float:
    import re

    return len(re.findall(r"[A-Za-z0-9_.'-]+", text)) + len(re.findall(r"[\u4e00-\u9fff]", text)) / 2


@pytest.mark.parametrize(
    "question,opening,paste",
    [
        ("训练时损失一直不降", "**你描述的现象有", "grad_norm"),
        ("OOM", "**What you describe", "Tried to allocate"),
        ("训练很慢", "**你描述的现象有", "NVLink"),
    ],
)
def test_a_vague_report_opens_with_the_usual_causes_and_what_to_paste(bot, question, opening, paste) -> None:  # type: ignore[no-untyped-def]
    ans = bot.ask(question)
    assert ans.act == "diagnose"
    assert ans.first_screen.startswith(opening)
    assert "最可能的原因" not in ans.first_screen and "Most likely cause" not in ans.first_screen
    assert paste in ans.first_screen
    assert _words(ans.first_screen) <= 130


def test_evidence_keeps_the_confident_opening(bot) -> None:  # type: ignore[no-untyped-def]
    ans = bot.ask("deepspeed 训练时 loss 一直不降，日志里一直打印 OVERFLOW! Rank 0 Skipping step")
    assert ans.first_screen.startswith("**最可能的原因：fp16 动态损失缩放")


def test_a_fit_question_without_a_model_says_what_the_figure_needs(bot) -> None:  # type: ignore[no-untyped-def]
    ans = bot.ask("My training keeps running out of memory, how much does it need?")
    assert ans.act == "fit"
    assert ans.first_screen.startswith("**How much memory it needs depends on")
    for need in ("the model or its size", "the method", "precision", "micro batch", "sequence length"):
        assert need in ans.first_screen
    assert "GiB" not in ans.first_screen  # no figure for a setup the user did not state
    assert "Most likely cause" not in ans.first_screen
    zh = bot.ask("训练需要多少显存？")
    assert zh.act == "fit" and zh.first_screen.startswith("**需要多少显存取决于") and "GiB" not in zh.first_screen


def _count(text: str) -> tuple[object, object]:
    from rag.setup import read_setup

    setup, _ = read_setup(split_message(text))
    return setup.get("world_size"), setup.get("num_nodes")


def test_hostfile_slots_and_visible_devices_give_the_count() -> None:
    assert _count("My hostfile:\n```\nworker-1 slots=8\nworker-2 slots=8\n```\ntraining OOMs") == (16, 2)
    assert _count("I run CUDA_VISIBLE_DEVICES=0,1 python train.py and it OOMs")[0] == 2
    # a count the user states, or a launcher's own, wins over the visible devices
    assert _count("我用 CUDA_VISIBLE_DEVICES=0,1,2,3 跑 8卡")[0] == 8
    assert _count("CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun --nproc_per_node 4 train.py OOM")[0] == 4


def test_a_bracketed_device_list_gives_the_count() -> None:
    # HugeCTR / mmcv style: the devices listed in brackets after "GPU" are the run's
    assert _count("when I set the batchsize to 4096 with GPU [0,1,2,3], is the batch per GPU 1024?")[0] == 4
    assert _count("config:\ngpu_ids: [0, 1]\nbatch: 8\nit OOMs")[0] == 2
    # a bracketed list of something else is no GPU count
    assert _count("the loss at steps [0,1,2] is nan")[0] is None
