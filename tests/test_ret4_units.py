"""Fast units for the retrieval-generalisation round ret4 (issue #11): query cleaning and glossary combinations.

No embedding model is loaded: these check the words the retriever is given, which is where the changes are.
"""

from __future__ import annotations

import pytest

from rag.glossary import expand_query, find_terms
from rag.query_clean import prose_only


def _canon(text: str) -> set[str]:
    return {t.en[0] for t in find_terms(text) if t.en}


# --- prose_only: a launch command pasted inside a sentence ---------------------------------------------------------
def test_prose_only_cuts_a_command_pasted_after_a_sentence() -> None:
    line = "如果设置fp16: true,llamafactory-cli train --model_name_or_path glm-4-9b-chat --stage sft --do_train True"
    out = prose_only(line)
    assert out.startswith("如果设置fp16: true")
    assert "--model_name_or_path" not in out and "--stage" not in out


def test_prose_only_keeps_a_sentence_that_names_one_flag() -> None:
    line = "加了 --gradient_checkpointing 以后显存还是不够"
    assert prose_only(line) == line


def test_prose_only_drops_a_line_that_is_only_a_command() -> None:
    assert prose_only("--per_device_train_batch_size 4 --gradient_accumulation_steps 8") == ""


# --- glossary: "it ran for a while, then OOM" ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "单卡lora微调Llama2-7b,可以跑起来一阵子,但之后会爆显存OOM",
        "求问为什么训练一段时间后就会溢出显存",
        "batch_size=128 2000 step时出现OOM",
        "The first training run hit OOM after 5.5hrs.",
        "It trained fine for a few hundred steps and then CUDA out of memory",
    ],
)
def test_time_passing_with_oom_implies_memory_growth(text: str) -> None:
    assert "memory keeps growing" in _canon(text)
    assert "memory keeps growing" in expand_query(text)


@pytest.mark.parametrize(
    "text",
    [
        "训练一段时间后 loss 不下降",  # time passing, no memory word
        "单卡能跑，双卡就 OOM",  # OOM, no time passing
        "It ran fine on one GPU but OOM on two",  # "ran fine" is a comparison of setups, not time
    ],
)
def test_no_memory_growth_without_both_halves(text: str) -> None:
    assert "memory keeps growing" not in _canon(text)


def test_time_pattern_forms_stay_whole() -> None:
    """The number patterns must not be split on their own alternation bars (the glossary splits forms on ``|``)."""
    assert "after a while" in _canon("训练到第26个epoch卡死")
    assert "after a while" in _canon("大概 300 步后显存爆了")
    assert "after a while" not in _canon("per_device_train_batch_size 为 2")


# --- glossary: "same global batch, different loss" -------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "per_device_train_batch_size为2,gradient_accumulation_steps为8时训练损失更高",
        "Batch size 2, accumulation 8 i got decent loss; batch size 16, accumulation 1, i got very high loss",
        "梯度累积和大 batch 的 loss 对不上",
    ],
)
def test_loss_comparison_with_batch_words_implies_ga_loss_normalisation(text: str) -> None:
    canon = _canon(text)
    assert "loss differs" in canon
    assert "loss differs with gradient accumulation" in canon
    assert "num_items_in_batch" in expand_query(text)


def test_loss_comparison_alone_does_not_imply_accumulation() -> None:
    text = "换了数据集以后 loss 更高"
    canon = _canon(text)
    assert "loss differs" in canon
    assert "loss differs with gradient accumulation" not in canon


def test_trying_for_a_while_is_not_time_passing_in_the_run() -> None:
    """Being stuck on an error "for a while" says how long the user searched, not when the run failed."""
    assert "memory keeps growing" not in _canon("I have been stuck on this CUDA out of memory for a while")
