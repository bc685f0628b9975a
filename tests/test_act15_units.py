"""Fast units for the question act (act15): the readers behind the first sentence, on fresh phrasings.

Every wording here was written for these tests, not copied from a dev question: each case checks that a mechanism
of ``rag.acts`` reads a class of phrasing (a concession is no question, a preamble announces the next clause, a
hardware question stays a fit question next to an OOM, ...), not one message.
"""

from __future__ import annotations

import pytest

from rag.acts import asked_sentences, reports_symptom, rule_act
from rag.parts import split_message


def act(text: str) -> str:
    return rule_act(split_message(text))


@pytest.mark.parametrize(
    "text,expected",
    [
        # "whether <noun phrase> is expected": a noun between the pronoun and the verb
        ("The throughput halves when I enable ZeRO-3. I want to check whether this slowdown is expected.", "is_normal"),
        (
            "We see the reward dropping in the first 50 steps. Not sure if the early dip is normal for GRPO.",
            "is_normal",
        ),
        ("Each step takes 2.1 s on 4x A100 with micro batch 8. Does that sound reasonable?", "is_normal"),
        ("My run uses 71 GB per GPU for a 7B full fine-tune. Do these numbers sound right?", "is_normal"),
    ],
)
def test_is_normal_with_a_noun_phrase_or_sound(text: str, expected: str) -> None:
    assert act(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # "nan" inside another word is no NaN loss
        "I am training nanoGPT with batch 12 and GA 40. How many tokens does one optimizer step see?",
        "用 nanoLLaVA 训练，batch 4，梯度累积 8，一个 step 是多少条样本？",
    ],
)
def test_nan_inside_a_word_is_no_symptom(text: str) -> None:
    assert not reports_symptom(text)
    assert act(text) == "batch_arithmetic"


def test_nan_as_a_word_is_a_symptom() -> None:
    assert reports_symptom("训练到第 30 步 loss 变成 nan 了")
    assert reports_symptom("After 200 steps the loss is NaN")


@pytest.mark.parametrize(
    "text,concession",
    [
        ("不管你怎么调 batch，都会 OOM", "不管你怎么调 batch"),
        ("无论我怎么改学习率，loss 都不降", "无论我怎么改学习率"),
        ("不论多大的 batch，显存都一样", "不论多大的 batch"),
    ],
)
def test_a_concession_is_not_a_question(text: str, concession: str) -> None:
    assert concession not in asked_sentences(text)
    assert concession + "，" not in asked_sentences(text)


def test_a_concession_next_to_an_oom_is_a_diagnosis() -> None:
    assert act("很奇怪，在 4 张 4090 上不管我怎么设置 cutoff_len，从 4096 降到 256，训练总是 OOM。") == "diagnose"


@pytest.mark.parametrize(
    "text,expected",
    [
        # what the user cannot explain about what they saw is a why
        (
            "With one GPU the run needs 14GB; with accelerate on 2 GPUs each GPU shows 14GB too! "
            "I don't get why that happens.",
            "diagnose",
        ),
        ("I launched with 4 GPUs and the step time is nearly the same as with 1 GPU. I cannot see why.", "diagnose"),
        # "almost / nearly the same" is still "the same"
        ("After turning on offload, memory per GPU stays almost the same. What am I missing?", "diagnose"),
    ],
)
def test_an_unexplained_observation_is_diagnosed(text: str, expected: str) -> None:
    assert act(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I can't understand why the loss is flat.",
        "We don't really understand how the global batch is formed.",
    ],
)
def test_cannot_understand_why_asks(text: str) -> None:
    assert asked_sentences(text)


@pytest.mark.parametrize(
    "text",
    [
        # the GPU count asked as a verdict, next to an OOM
        "Getting CUDA out of memory with DPO on 2x A100 40GB. Do we really need 4 GPUs for a 7B model?",
        "DPO 训练时报 OOM 了，用的两张 A100 40G。请问是否需要 4 张卡？",
        # the hardware the authors used
        "Trying to reproduce the 13B run and hitting OOM. What GPUs did you use to train it?",
        "Could you share the hardware that was used to train the 34B checkpoint? Our 8x A6000 run OOMs.",
        # RAM (内存), not only GPU memory
        "多卡微调一直失败，报内存不足。请问多机微调所需的内存是多少？",
        # choosing between two machines by what they can run
        "Option A: 8x 24GB, option B: 4x 80GB. I have a 13B model; which setup can train it with LoRA?",
        "两种配置：8 张 3090 或者 4 张 A100 40G，哪个配置能跑 13B 全参微调？",
    ],
)
def test_hardware_questions_are_fit(text: str) -> None:
    assert act(text) == "fit"


@pytest.mark.parametrize(
    "text,announced",
    [
        ("请教一下，如果不开 offload，两张 A100 40G 是否支持 13b 模型全参微调呢？", "是否支持"),
        ("Hi, I have a question: can I fine-tune a 7B model on one 24GB GPU?", "fine-tune"),
    ],
)
def test_a_preamble_is_read_with_the_clause_it_announces(text: str, announced: str) -> None:
    asks = asked_sentences(text)
    assert asks and announced in asks[0]
    assert act(text) == "fit"


def test_a_preamble_before_a_fit_question_next_to_an_oom() -> None:
    text = "全参微调一直报显存溢出。请教一下，如果不开 offload，4 张 A40 的配置是否支持 13b 模型全参微调呢？"
    assert act(text) == "fit"


@pytest.mark.parametrize(
    "text",
    [
        "I set micro batch 2 with GA 8 so that the run won't OOM. Then how many samples does each step see?",
        "为了保证不会爆显存，我把 batch 设成 2，梯度累积 8，那么一个 step 是多少条样本？",
    ],
)
def test_a_denied_failure_is_no_symptom(text: str) -> None:
    assert act(text) == "batch_arithmetic"


@pytest.mark.parametrize(
    "text,expected",
    [
        # "didn't" alone is no symptom: what the user did not do or notice
        (
            "I didn't change anything in the config. What does gradient_accumulation_steps do exactly?",
            "explain",
        ),
        ("I didn't notice it in the docs. Why does DeepSpeed require train_batch_size at all?", "explain"),
        # what did not happen is one
        ("I set gradient_accumulation_steps 8 but it didn't reduce the memory at all. Why?", "diagnose"),
    ],
)
def test_didnt_is_a_symptom_only_with_what_did_not_happen(text: str, expected: str) -> None:
    assert act(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # a verdict that the hardware cannot carry the run, every question a fit question, the error pasted
        "双卡 3090 全参微调 13b 报错了：\ntorch.OutOfMemoryError: CUDA out of memory.\n是不是两张 3090 跑不动 13b？",
        "8 张 V100 跑 34B 全量预训练一直 OOM，难道 8 卡还训不动 34B 吗？",
    ],
)
def test_a_cannot_carry_verdict_is_fit(text: str) -> None:
    assert act(text) == "fit"


@pytest.mark.parametrize(
    "text",
    [
        # symptoms in other words: memory that keeps rising, a crash (崩溃), weights saved incomplete, memory never freed
        "请问为什么推理过程中内存占用逐渐增加？",
        "用 4 卡训练时第二张卡显存突然增加很多，然后进程崩溃。",
        "多机训练结束后保存的 checkpoint 不完整，这是怎么回事？",
        "Why does host memory grow so quickly and never get released between epochs?",
        # the fp16 loss scaler's messages quoted in the prose
        "Gradient overflow. Skipping step, loss scaler 0 reducing loss scale to 16384. What causes this?",
        "OVERFLOW! Rank 3 Skipping step. How can this be solved?",
    ],
)
def test_symptoms_in_other_words_are_diagnosed(text: str) -> None:
    assert act(text) == "diagnose"


@pytest.mark.parametrize(
    "text,expected",
    [
        ("单卡和四卡训练出来的 loss 曲线不一样，正常来说会这样吗？", True),
        ("Loss 曲线和单卡的差很多，正常情况下多卡会有这么大的差距吗？", True),
        # "正常情况下" as the user's expectation, then another question: not an is-normal question
        ("显存随着 step 增加而增加，正常情况下不会越来越大，请问有人遇到过这种情况吗", False),
    ],
)
def test_normally_asked(text: str, expected: bool) -> None:
    assert (act(text) == "is_normal") is expected


@pytest.mark.parametrize(
    "text",
    [
        "How is the number of update steps calculated when I use 3 GPUs and GA 4?",
        "How are max_steps computed from num_train_epochs in the Trainer?",
    ],
)
def test_how_is_a_count_calculated_is_arithmetic(text: str) -> None:
    assert act(text) == "batch_arithmetic"


@pytest.mark.parametrize(
    "text,expected",
    [
        # the size of card a run needs
        ("请问全参微调 7b 最少要多大的显卡？", "fit"),
        ("做 LoRA 微调需要用至少多大的卡呢？", "fit"),
        # whether it can be done (完成) on a stated card, with 呢
        ("这个 13b 的 LoRA 微调能否在两张 3090 24GB 上完成呢？", "fit"),
        # the value of a named setting, or what must change for a setup
        ("I train on 2 GPUs instead of 8. What should my warmup ratio be?", "configure"),
        ("What needs to be changed in the launch script if I only have 4 GPUs?", "configure"),
    ],
)
def test_setting_and_size_questions(text: str, expected: str) -> None:
    assert act(text) == expected
