"""The stop-50 presets (Qwen v1, Qwen1.5, InternLM2, LLaMA-1 33B / 65B, Baichuan-1): each shape's parameter count
equals the transformers module of that shape built on the meta device, and the names people write resolve to them.

Qwen v1, InternLM2 and Baichuan-1 are remote code that does not run here; their layers have the parameter counts of
transformers' Qwen2 (a q/k/v bias, nothing else biased) and Llama (no bias) modules of the same sizes: Qwen v1's
fused c_attn is one Linear(h, 3h) with a bias, InternLM2's wqkv and Baichuan's W_pack fused Linears without one."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import transformers as T

from calculators.presets import MODEL_PRESETS, count_params, preset_for_name
from rag.slots import extract_slots

QWEN2_ARCH = ["qwen-7b", "qwen-14b", "qwen-72b", "qwen1.5-4b", "qwen1.5-7b", "qwen1.5-14b", "qwen1.5-32b"]
LLAMA_ARCH = ["internlm2-7b", "internlm2-20b", "llama-33b", "llama-65b", "baichuan-7b", "baichuan-13b"]


def _module_params(name: str) -> int:
    shape = MODEL_PRESETS[name]
    sizes: dict[str, Any] = {
        "hidden_size": shape.hidden_size,
        "intermediate_size": shape.intermediate_size,
        "num_hidden_layers": shape.num_layers,
        "num_attention_heads": shape.num_attention_heads,
        "num_key_value_heads": shape.kv_heads,
        "vocab_size": shape.vocab_size,
        "tie_word_embeddings": False,
    }
    config = T.Qwen2Config(**sizes) if name in QWEN2_ARCH else T.LlamaConfig(**sizes)
    with torch.device("meta"):
        model = T.Qwen2ForCausalLM(config) if name in QWEN2_ARCH else T.LlamaForCausalLM(config)
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name", QWEN2_ARCH + LLAMA_ARCH)
def test_the_preset_counts_what_the_transformers_module_of_its_shape_holds(name: str) -> None:
    assert count_params(MODEL_PRESETS[name]) == _module_params(name)


def test_the_exact_published_totals() -> None:
    # Qwen-72B's safetensors index (144,575,840,256 bytes of bf16) and Baichuan-13B's README table, to the parameter
    assert count_params(MODEL_PRESETS["qwen-72b"]) == 144_575_840_256 // 2
    assert count_params(MODEL_PRESETS["baichuan-7b"]) == 7_000_559_616
    assert count_params(MODEL_PRESETS["baichuan-13b"]) == 13_264_901_120


@pytest.mark.parametrize(
    ("written", "preset"),
    [
        ("Qwen-14b-chat", "qwen-14b"),
        ("QWEN-14B-CHAT", "qwen-14b"),
        ("Qwen14B", "qwen-14b"),
        ("Qwen/Qwen-7B-Chat", "qwen-7b"),
        ("Qwen1.5-32B-Chat", "qwen1.5-32b"),
        ("Qwen-1.5-14B", "qwen1.5-14b"),
        ("internlm2-chat-20b", "internlm2-20b"),
        ("internlm/internlm2-chat-7b", "internlm2-7b"),
        ("LLaMA-33B", "llama-33b"),
        ("huggyllama/llama-30b", "llama-33b"),
        ("llama-65b", "llama-65b"),
        ("Baichuan-13B-Chat", "baichuan-13b"),
        ("baichuan-inc/Baichuan-7B", "baichuan-7b"),
        # Baichuan2 keeps its own shapes (vocab 125696)
        ("Baichuan2-13B-Chat", "baichuan2-13b"),
    ],
)
def test_names_as_people_write_them(written: str, preset: str) -> None:
    assert preset_for_name(written) == preset


def test_sizes_without_a_published_shape_stay_sizes() -> None:
    # Qwen1.5-1.8B / -0.5B have no preset (no published total within the test's 1.5 %): a size, never a guess
    assert preset_for_name("Qwen1.5-1.8B") is None
    assert preset_for_name("qwen72b") is None  # Qwen-72B or Qwen2-72B: the two shapes differ


def test_qwen_14b_chat_in_a_message_is_the_preset(bot_without_retrieval: Any) -> None:
    # Qwen #614, the title as the user wrote it: four 8 GB cards cannot hold a 14B LoRA run under ZeRO-3, and the
    # figure now includes the activations (the shape is known), not only the model states
    slots = extract_slots("不使用flashattention，4张3070的卡共64g显存可以微调Qwen-14b-chat模型吗", prose=True)
    assert slots.model == "qwen-14b" and slots.model_text == "Qwen-14b-chat"
    answer = bot_without_retrieval.ask(
        "不使用flashattention，4张3070的卡共64g显存可以微调Qwen-14b-chat模型吗？lora，deepspeed zero3，"
        "per_device_train_batch_size 1，model_max_length 512，bf16"
    )
    main = next(c for c in answer.tool_calls if getattr(c, "label", None) == "main")
    assert main.arguments["model"] == "qwen-14b" and main.result["activations"] > 0
    assert "没有预设结构" not in answer.text
    assert main.result["fits"] is False, answer.first_screen
