"""ret12: what the citing and opening rules read off a card (its lead, title subject, stacks, quoted error) is computed
once per card object (rag.opening.card_topic), not once per message and card; a P-Tuning card is cited only for a
message that names P-Tuning (message shapes from the ho* files: ChatGLM LoRA/QLoRA/full runs that ran out of memory)."""

from __future__ import annotations

import pytest

from rag.cards import load_cards
from rag.citing import answers_another_setup, guide_act_conflict, unnamed_method_conflict
from rag.opening import card_topic, error_grams, first_sentence, lead_en, title_subject
from tests.message_reading import read_message

CARDS = {c.id: c for c in load_cards()}


def test_card_topic_is_read_once_per_card_and_equals_a_fresh_reading() -> None:
    card = CARDS["myth-more-gpus-pools-memory"]
    topic = card_topic(card)
    assert card_topic(card) is topic
    assert topic.lead == lead_en(card) and topic.lead_first == first_sentence(lead_en(card))
    assert topic.title_subject == title_subject(card.title_en)
    assert not topic.title_subject.startswith("Myth")
    # a copy of the card is another object: read again, to the same result
    copy = card.model_copy()
    assert card_topic(copy) is not topic and card_topic(copy) == topic


def test_error_grams_are_read_from_a_quoted_error_title_only() -> None:
    grams = error_grams('"FlashAttention only support fp16 and bf16 data type": why it appears')
    assert "flashattention only support fp16" in grams and "and bf16 data type" in grams
    assert error_grams("Why more GPUs still OOM") == frozenset()
    quoting = [c for c in CARDS.values() if c.title_en.startswith('"')]
    assert quoting and all(card_topic(c).error_grams for c in quoting)


PTUNING = CARDS["ptuning-v2-chatglm-memory"]


@pytest.mark.parametrize(
    "text",
    [
        # a ChatGLM QLoRA run that runs out of memory (the shape of ho-blind2's chatglm-6b-qlora question)
        "用 qlora 微调 chatglm-6b，4bit 量化，单卡 3090 还是 CUDA out of memory，怎么回事？",
        # a ChatGLM run that names no method at all
        "chatglm2-6b 多卡训练显存占用很高，batch size 设成 1 还是爆显存",
        "Fine-tuning ChatGLM-6B on 2x V100 32GB, per_device_train_batch_size 1, still OOM. Why?",
    ],
)
def test_the_p_tuning_card_is_not_cited_for_a_message_that_never_names_p_tuning(text: str) -> None:
    asked, setup = read_message(text)
    assert unnamed_method_conflict(PTUNING, setup, asked)
    assert answers_another_setup(PTUNING, asked, setup)


@pytest.mark.parametrize(
    "text",
    [
        "ChatGLM-6B P-Tuning v2 微调，PRE_SEQ_LEN=128，单卡 24G 爆显存",
        "torchrun main.py --model_name_or_path THUDM/chatglm-6b --pre_seq_len 128 --quantization_bit 4 OOM",
        "ptuning 需要多少显存？",
        "Does prefix tuning with num_virtual_tokens 20 need less memory than LoRA?",
    ],
)
def test_the_p_tuning_card_answers_a_message_that_names_it_or_its_settings(text: str) -> None:
    asked, setup = read_message(text)
    assert unnamed_method_conflict(PTUNING, setup, asked) == ""


def test_a_lora_card_is_not_held_to_the_method_being_named() -> None:
    # LoRA is many scripts' default: an unnamed method may be LoRA, so its cards are not dropped for that
    asked, setup = read_message("chatglm2-6b 多卡训练显存占用很高，batch size 设成 1 还是爆显存")
    assert unnamed_method_conflict(CARDS["lora-memory-breakdown"], setup, asked) == ""


@pytest.mark.parametrize(
    ("title", "gram"),
    [
        (
            "Fixing DeepSpeed 'train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size'",
            "train_batch_size is not equal",
        ),
        (
            "LoRA + fp16 'Attempting to unscale FP16 gradients': trainable parameters must be fp32",
            "attempting to unscale fp16",
        ),
        ("'--tf32 requires Ampere or a newer GPU arch': TF32 exists only on Ampere", "tf32 requires ampere or"),
    ],
)
def test_a_title_whose_subject_ends_with_a_quoted_error_is_about_that_error(title: str, gram: str) -> None:
    assert gram in error_grams(title)


@pytest.mark.parametrize(
    "title",
    [
        # the subject goes on after the quote: it is about a situation, not the message alone
        "'FlashAttention only supports Ampere GPUs or newer' on V100/T4: FlashAttention-2 needs Ampere+",
        "Multi-GPU 'Watchdog caught collective operation timeout' (NCCL timeout): one rank fell behind",
        # a log line or a warning: users describe what followed more often than they paste it
        'accelerate + DeepSpeed logs "Updating DeepSpeed\'s gradient accumulation steps to 1 from 16": which wins',
        "QLoRA warning 'Input type into Linear4bit is torch.float16, but bnb_4bit_compute_dtype=torch.float32': slow",
        # a quote after the subject's colon is an example, not the subject
        "LoRA + gradient checkpointing: 'element 0 of tensors does not require grad', use_reentrant",
    ],
)
def test_other_quoted_titles_are_not_about_one_error(title: str) -> None:
    assert error_grams(title) == frozenset()


ERROR_CARD = CARDS["deepspeed-batch-assertion-error"]


def test_the_batch_assertion_card_is_cited_for_the_pasted_assertion_only() -> None:
    # the shape of the dev messages that paste DeepSpeed's assertion, and of the OOM reports it was cited for
    pasted = (
        "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
        "gradient_acc_step * world_size 16 != 2 * 1 * 4"
    )
    asked, setup = read_message(pasted)
    assert answers_another_setup(ERROR_CARD, asked, setup) == ""
    oom = "两张4090训练 7B lora，per_device_train_batch_size 2，deepspeed zero2，CUDA out of memory，内存不够还是我参数有问题？"
    asked, setup = read_message(oom)
    assert "error message" in answers_another_setup(ERROR_CARD, asked, setup)


GUIDE = CARDS["llamafactory-batch-settings"]


@pytest.mark.parametrize("act", ["diagnose", "fit", "yes_no", "is_normal", "explain"])
def test_a_stacks_setup_guide_does_not_answer_other_kinds_of_question(act: str) -> None:
    # the shape of the LLaMA-Factory OOM reports it was cited for: the stack and a batch setting, asking why
    text = "llamafactory-cli train qwen 7B lora，per_device_train_batch_size 2，gradient_accumulation_steps 8，8卡 A800 还是 OOM，为什么？"
    asked, setup = read_message(text)
    assert guide_act_conflict(GUIDE, act)
    assert answers_another_setup(GUIDE, asked, setup, act)  # type: ignore[arg-type]


@pytest.mark.parametrize("act", ["configure", "batch_arithmetic", None])
def test_a_stacks_setup_guide_answers_how_to_set_it(act: str | None) -> None:
    text = "LLaMA-Factory 里 per_device_train_batch_size 和 gradient_accumulation_steps 怎么设置？deepspeed 配置放哪？"
    asked, setup = read_message(text)
    assert answers_another_setup(GUIDE, asked, setup, act) == ""  # type: ignore[arg-type]


def test_a_guide_that_names_no_stack_is_not_held_to_the_act() -> None:
    # "How to set batch sizes: fit the micro batch first …" is the usual remedy for an OOM
    assert guide_act_conflict(CARDS["tune-micro-batch-then-ga"], "diagnose") == ""
