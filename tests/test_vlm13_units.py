"""Qwen3-VL presets: parameter counts, tokens per image and ViT activations checked against transformers 5.23.

Parameter counts: ``Qwen3VLForConditionalGeneration`` built on the meta device from the public config.json values
(Qwen/Qwen3-VL-{2B,4B,8B,32B}-Instruct), counted part by part (ViT, main merger, three deepstack mergers, language
model). Tokens per image: ``Qwen2VLImageProcessor`` (the class transformers maps ``qwen3_vl`` to) with the checkpoints'
preprocessor_config.json (patch 16, merge 2, size {shortest_edge 65536, longest_edge 16777216}). ViT activations: a
tiny random ``Qwen3VLVisionModel``, saved tensors counted with tests/activation_probe.py, in fp32 and bf16.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import transformers as T

from calculators.presets import MODEL_PRESETS, PUBLISHED_PARAMS, count_params, preset_for_name
from calculators.vision import (
    VisionTower,
    image_tokens,
    projector_params,
    vision_encoder_params,
    vision_params,
    vit_activation_bytes,
)
from tests.activation_probe import measure

_SMALL_VIT = dict(depth=24, hidden_size=1024, intermediate_size=4096, deepstack_visual_indexes=[5, 11, 17])
_LARGE_VIT = dict(depth=27, hidden_size=1152, intermediate_size=4304, deepstack_visual_indexes=[8, 16, 24])
#: (hidden, layers, heads, KV heads, intermediate, tied) of each text_config; vocab 151936, head_dim 128.
_TEXT = {
    "qwen3-vl-2b": (2048, 28, 16, 8, 6144, True, _SMALL_VIT),
    "qwen3-vl-4b": (2560, 36, 32, 8, 9728, True, _SMALL_VIT),
    "qwen3-vl-8b": (4096, 36, 32, 8, 12288, False, _LARGE_VIT),
    "qwen3-vl-32b": (5120, 64, 64, 8, 25600, False, _LARGE_VIT),
}


def _count(model: torch.nn.Module, prefix: str) -> int:
    return sum(p.numel() for n, p in model.named_parameters() if n.startswith(prefix))


def _config(preset: str) -> Any:
    h, layers, heads, kv, inter, tied, vit = _TEXT[preset]
    text = dict(
        hidden_size=h,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        intermediate_size=inter,
        head_dim=128,
        vocab_size=151936,
        tie_word_embeddings=tied,
    )
    vision = dict(vit, num_heads=16, patch_size=16, temporal_patch_size=2, spatial_merge_size=2, out_hidden_size=h)
    vision["num_position_embeddings"] = 2304
    return T.Qwen3VLConfig(text_config=text, vision_config=vision, tie_word_embeddings=tied)


@pytest.mark.parametrize("preset", list(_TEXT))
def test_qwen3_vl_counts_equal_the_transformers_model_and_the_published_total(preset: str) -> None:
    with torch.device("meta"):
        model = T.Qwen3VLForConditionalGeneration(_config(preset))
    shape = MODEL_PRESETS[preset]
    tower = shape.vision
    assert tower is not None and tower.family == "qwen3-vl"
    mergers = _count(model, "model.visual.merger") + _count(model, "model.visual.deepstack_merger_list")
    assert projector_params(tower) == mergers
    assert vision_encoder_params(tower) == _count(model, "model.visual") - mergers
    assert vision_params(tower) == _count(model, "model.visual")
    total = sum(p.numel() for p in model.parameters())
    assert count_params(shape) == total
    # the Hub's safetensors totals: 2.13B / 4.44B / 8.77B / 33.4B
    assert count_params(shape) == pytest.approx(PUBLISHED_PARAMS[preset], rel=0.01)


@pytest.mark.parametrize(
    ("name", "preset"),
    [
        ("Qwen3-VL-8B-Instruct", "qwen3-vl-8b"),
        ("Qwen/Qwen3-VL-8B-Instruct", "qwen3-vl-8b"),
        ("qwen3vl 8b", "qwen3-vl-8b"),
        ("Qwen3-VL-4B-Thinking", "qwen3-vl-4b"),
        ("qwen3-vl-2b", "qwen3-vl-2b"),
        ("Qwen3-VL-32B-Instruct", "qwen3-vl-32b"),
    ],
)
def test_qwen3_vl_names_resolve_to_their_preset(name: str, preset: str) -> None:
    assert preset_for_name(name) == preset


def test_a_qwen3_vl_moe_or_unknown_size_is_not_a_dense_preset() -> None:
    assert preset_for_name("Qwen3-VL-30B-A3B-Instruct") is None
    assert preset_for_name("Qwen3-VL-7B") is None
    assert preset_for_name("Qwen3-8B") == "qwen3-8b" and MODEL_PRESETS["qwen3-8b"].vision is None


@pytest.mark.parametrize(("height", "width"), [(1024, 1024), (1080, 1920), (100, 3000), (200, 200), (5000, 5000)])
@pytest.mark.parametrize("max_pixels", [None, 768 * 768])
def test_qwen3_tokens_per_image_equal_the_image_processors_grid(
    height: int, width: int, max_pixels: int | None
) -> None:
    size = {"shortest_edge": 65536, "longest_edge": max_pixels or 16777216}
    processor = T.Qwen2VLImageProcessor(size=size, patch_size=16, merge_size=2)
    out = processor(images=[np.zeros((height, width, 3), dtype=np.uint8)], return_tensors="pt")
    t, gh, gw = out["image_grid_thw"][0].tolist()
    tower = MODEL_PRESETS["qwen3-vl-8b"].vision
    assert tower is not None
    got = image_tokens(tower, height, width, max_pixels)
    assert got.vit_tokens == t * gh * gw and got.llm_tokens == t * gh * gw // 4


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_qwen3_vit_activations_match_saved_tensors_of_a_trained_tower(dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    h, i, depth = 96, 384, 4
    vc = T.models.qwen3_vl.configuration_qwen3_vl.Qwen3VLVisionConfig(
        depth=depth,
        hidden_size=h,
        intermediate_size=i,
        num_heads=4,
        out_hidden_size=32,
        num_position_embeddings=256,
        deepstack_visual_indexes=[1],
    )
    model = T.models.qwen3_vl.modeling_qwen3_vl.Qwen3VLVisionModel._from_config(vc, attn_implementation="sdpa")
    model = model.to(dtype).train()
    tower = VisionTower(
        family="qwen3-vl",
        hidden_size=h,
        num_layers=depth,
        num_heads=4,
        intermediate_size=i,
        patch_size=16,
        temporal_patch_size=2,
        patch_bias=True,
        position_rows=256,
        merge=2,
        deepstack_mergers=1,
        projector="qwen-merger",
        out_hidden_size=32,
    )
    side = 16  # a 256 x 256 image: 16 x 16 patches
    inputs = {
        "hidden_states": torch.randn(side * side, 3 * 2 * 16 * 16, dtype=dtype),
        "grid_thw": torch.tensor([[1, side, side]]),
    }
    measured = measure(model, inputs).saved_bytes
    predicted = vit_activation_bytes(tower, side * side, 4 if dtype == torch.float32 else 2)
    assert predicted == pytest.approx(measured, rel=0.04)


def test_a_qwen3_vl_answer_counts_its_images_at_32_px_per_token(bot_without_retrieval: Any) -> None:
    text = bot_without_retrieval.ask(
        "Can I LoRA fine-tune Qwen3-VL-8B-Instruct on one A100 80GB? 2 images per sample, 1280x720."
    ).text
    tower = MODEL_PRESETS["qwen3-vl-8b"].vision
    assert tower is not None
    tokens = 2 * image_tokens(tower, 720, 1280).llm_tokens  # 720 -> 704, 1280 -> 1280: 2 x 880
    assert tokens == 1760
    assert f"{tokens:,}" in text and "32×32" in text, text[:900]
