"""Memory answers that showed another model's numbers or none (stop 32, fit14).

1. "BLOOM 560M & BLOOM 1.1B" (BELLE #402): the setup named 560M while the estimate used 1.1B — a size in millions
   ending the named model was not read, and a bare size found elsewhere in the message took its place.
2. "Can I full fine-tune X on <GPU>?" with no card found: a capability question whose only hardware is a GPU name
   (no count, no memory size), or a verdict asked after the run ("…, possible?", "Will this work?"), got no estimate.
(MiniCPM-Llama3-V 2.5, the third part of this task: tests/test_minicpm25_units.py.)
"""

from __future__ import annotations

from typing import Any

import pytest

from rag.slots import extract_slots

# --- 1. the size shown is the size of the model shown


def test_a_size_in_millions_ending_the_named_model_is_its_count_not_another_models_size() -> None:
    # BELLE #402, as the user wrote it
    slots = extract_slots("测试模型：BLOOM 560M & BLOOM 1.1B, training batch 为1", prose=True)
    assert slots.model_text == "BLOOM 560M"
    assert slots.num_params == pytest.approx(560e6)


@pytest.mark.parametrize(
    ("text", "name", "count"),
    [
        ("Fine-tuning bloom-560m on a T4; later a 7B model", "bloom-560m", 560e6),
        ("fine-tune Nous-Hermes-13b first, then maybe 70B", "Nous-Hermes-13b", 13e9),
    ],
)
def test_the_named_models_own_size_wins_over_a_bare_size_elsewhere(text: str, name: str, count: float) -> None:
    slots = extract_slots(text, prose=True)
    assert slots.model_text == name and slots.num_params == pytest.approx(count)


def test_another_familys_preset_never_replaces_a_sized_model_the_user_named() -> None:
    # MedicalGPT #8: the run that failed is Ziya-LLaMA-13B; ChatGLM-6B is a second, other run
    text = "如果用Ziya-LLaMA-13B-v1直接爆显存了 …… 另外测试第一阶段在ChatGLM-6B上，我也只能设置参数为1"
    slots = extract_slots(text, prose=True)
    assert slots.model_text is not None and "Ziya" in slots.model_text
    assert slots.model != "chatglm3-6b"


def test_an_active_expert_count_in_the_name_is_not_the_models_size() -> None:
    slots = extract_slots("Training Qwen3-VL-30B-A3B-Instruct with GRPO", prose=True)
    assert slots.num_params == pytest.approx(30e9)


def test_a_size_word_a_space_sets_apart_names_the_preset() -> None:
    assert extract_slots("fully fine-tune Phi-3 mini on an RTX 3090", prose=True).model == "phi-3-mini"
    assert extract_slots("Phi-3 is great", prose=True).model is None


def test_bloom_560m_answer_shows_the_560m_estimate(bot_without_retrieval: Any) -> None:
    answer = bot_without_retrieval.ask(
        "测试模型：BLOOM 560M & BLOOM 1.1B, training batch 为1\nGPU: TITAN RTX 24GB *2\nZeRO-3 比 ZeRO-2 更耗显存，为什么？"
    )
    main = next(c for c in answer.tool_calls if getattr(c, "label", None) == "main")
    assert main.arguments.get("num_params") == pytest.approx(560e6)
    assert answer.setup["model_text"]["value"] == "BLOOM 560M"


# --- 2. a fit question with model, method and GPU stated shows the estimate, whatever card is found


@pytest.mark.parametrize(
    "message",
    [
        "Is it possible to fully fine-tune Phi-3 mini on an RTX 3090?",
        "Full fine-tune llama-2-13b on 8x V100 32GB, possible?",
        "I want to full fine-tune Qwen2-7B on a single H100. Will this work?",
        "Can I full fine-tune Qwen2.5-7B on a single RTX 4090?",
        "单卡4090可以全参微调qwen2.5-7b吗",
    ],
)
def test_a_fit_question_on_a_named_gpu_shows_the_memory_table(bot_without_retrieval: Any, message: str) -> None:
    answer = bot_without_retrieval.ask(message)
    main = next((c for c in answer.tool_calls if getattr(c, "label", None) == "main"), None)
    assert main is not None and main.result and main.result.get("total_per_gpu")
    assert answer.setup["finetune"]["value"] == "full"
    assert "GiB" in answer.first_screen  # the verdict with its figure opens the answer


@pytest.mark.parametrize(
    "message",
    [
        "Is it possible to fully fine-tune Phi-3 mini on an RTX 3090?",
        "Full fine-tune llama-2-13b on 8x V100 32GB, possible?",
    ],
)
def test_a_capability_question_on_a_named_gpu_is_fit(bot_without_retrieval: Any, message: str) -> None:
    assert bot_without_retrieval.ask(message).act == "fit"
