"""MiniCPM-Llama3-V 2.5 (openbmb/MiniCPM-Llama3-V-2_5, remote code that does not run here): its parts against the
transformers / torch modules vLLM's MiniCPMV2_5 is built of (Idefics2VisionTransformer, LlamaForCausalLM, the
Resampler2_5 layers), its total against the published size, and the names people write for it."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import transformers as T

from calculators.presets import MODEL_PRESETS, PUBLISHED_PARAMS, count_params, preset_for_name
from calculators.vision import image_tokens, projector_params, vision_encoder_params, vision_params
from rag.slots import extract_slots


def test_minicpm_llama3_v25_parts_equal_transformers_modules_and_the_total_is_the_published_size() -> None:
    from transformers.models.idefics2.configuration_idefics2 import Idefics2VisionConfig
    from transformers.models.idefics2.modeling_idefics2 import Idefics2VisionTransformer

    shape = MODEL_PRESETS["minicpm-llama3-v-2.5"]
    tower = shape.vision
    assert tower is not None and tower.family == "minicpm-v" and tower.queries == 96
    siglip = Idefics2VisionConfig(
        hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, num_attention_heads=16, patch_size=14,
        image_size=980,
    )  # fmt: skip
    llama3 = T.LlamaConfig(
        hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
        num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=False,
    )  # fmt: skip
    with torch.device("meta"):
        vpm = Idefics2VisionTransformer(siglip)  # drop_vision_last_layer false: all 27 layers
        llm = T.LlamaForCausalLM(llama3)
        kv_proj = torch.nn.Linear(1152, 4096, bias=False)
        attn = torch.nn.MultiheadAttention(4096, 4096 // 128)
        norms = [torch.nn.LayerNorm(4096) for _ in range(3)]  # ln_q, ln_kv, ln_post
    assert vision_encoder_params(tower) == sum(p.numel() for p in vpm.parameters())
    query, proj = 96 * 4096, 4096 * 4096
    resampler = query + proj + sum(p.numel() for m in [kv_proj, attn, *norms] for p in m.parameters())
    assert projector_params(tower) == resampler
    assert count_params(shape) - vision_params(tower) == sum(p.numel() for p in llm.parameters())
    assert count_params(shape) == 8_537_092_336
    # seven fp16 safetensors shards of 17.08 GB: 8.54B parameters; the model card's "a total of 8B"
    assert count_params(shape) == pytest.approx(PUBLISHED_PARAMS["minicpm-llama3-v-2.5"], rel=0.01)
    assert count_params(shape) - vision_params(tower) == pytest.approx(PUBLISHED_PARAMS["llama-3-8b"], rel=0.01)


def test_minicpm_llama3_v25_takes_96_tokens_per_slice() -> None:
    tower = MODEL_PRESETS["minicpm-llama3-v-2.5"].vision
    assert tower is not None
    assert image_tokens(tower, 1344, 1344).llm_tokens == 96 * 10  # 9 slices + the whole image
    assert image_tokens(tower, 448, 448).llm_tokens == 96


@pytest.mark.parametrize(
    "name",
    ["MiniCPM-Llama3-V 2.5", "MiniCPM-Llama3-V-2_5", "openbmb/MiniCPM-Llama3-V-2_5", "minicpmv2-5", "MiniCPM-V 2.5"],
)
def test_minicpm_llama3_v25_as_people_write_it(name: str) -> None:
    assert preset_for_name(name) == "minicpm-llama3-v-2.5"
    assert preset_for_name("MiniCPM-V 2.6") == "minicpm-v-2.6"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("full fine-tune MiniCPM-Llama3-V 2.5 on 4 V100 16GB", "MiniCPM-Llama3-V 2.5"),
        ("用 minicpmv2-5 全量微调", "minicpmv2-5"),
    ],
)
def test_the_setup_keeps_the_name_the_user_wrote(text: str, shown: str) -> None:
    slots = extract_slots(text, prose=True)
    assert slots.model == "minicpm-llama3-v-2.5" and slots.model_text == shown


def test_the_answer_counts_the_resamplers_96_queries_for_minicpm_llama3_v25(bot_without_retrieval: Any) -> None:
    # MiniCPM-V #147, as the user wrote it (the first paragraph)
    answer = bot_without_retrieval.ask(
        "What is the minimum GPU memory requirement for full parameter fine-tuning MiniCPM-Llama3-V 2.5? "
        "I cannot access A100s, would it be possible to run on 4xV100?"
    )
    main = next(c for c in answer.tool_calls if getattr(c, "label", None) == "main")
    assert main.arguments["model"] == "minicpm-llama3-v-2.5"
    assert answer.setup["model_text"]["value"] == "MiniCPM-Llama3-V 2.5"
    assert "96 for the whole image" in answer.text and "64 for the whole image" not in answer.text
