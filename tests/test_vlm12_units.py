"""Vision-language presets: parameter counts, tokens per image and ViT activations checked against transformers.

Parameter counts: the real architectures (transformers 5.23's Qwen2-VL, Qwen2.5-VL, LLaVA and InternVL classes) built
on the meta device from the public config.json values, counted part by part. Tokens per image: the real image
processors (Qwen2VLImageProcessor's grid, GotOcr2ImageProcessor's tiles, which transformers' InternVL processor uses).
ViT activations: tiny random towers, saved tensors counted with torch.autograd.graph.saved_tensors_hooks
(tests/activation_probe.py), in fp32 and bf16.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import transformers as T

from calculators.memory import estimate_memory
from calculators.presets import MODEL_PRESETS, PUBLISHED_PARAMS, count_params, preset_for_name
from calculators.vision import (
    VisionTower,
    image_tokens,
    internvl_tiles,
    projector_params,
    vision_encoder_params,
    vision_params,
    vit_activation_bytes,
)
from tests.activation_probe import measure

QWEN2_TEXT = dict(
    hidden_size=3584,
    num_hidden_layers=28,
    num_attention_heads=28,
    num_key_value_heads=4,
    intermediate_size=18944,
    vocab_size=152064,
)


def _count(model: torch.nn.Module, prefix: str) -> int:
    return sum(p.numel() for n, p in model.named_parameters() if n.startswith(prefix))


@pytest.mark.parametrize(
    ("preset", "cls", "config"),
    [
        (
            "qwen2-vl-7b",
            "Qwen2VL",
            {"text_config": QWEN2_TEXT, "vision_config": {"hidden_size": 3584}},
        ),
        (
            "qwen2.5-vl-7b",
            "Qwen2_5_VL",
            {"text_config": QWEN2_TEXT, "vision_config": {"hidden_size": 1280, "out_hidden_size": 3584}},
        ),
        (
            "qwen2.5-vl-3b",
            "Qwen2_5_VL",
            {
                "text_config": dict(
                    hidden_size=2048,
                    num_hidden_layers=36,
                    num_attention_heads=16,
                    num_key_value_heads=2,
                    intermediate_size=11008,
                    vocab_size=151936,
                ),
                "vision_config": {"hidden_size": 1280, "out_hidden_size": 2048},
                "tie_word_embeddings": True,
            },
        ),
        (
            "llava-1.5-7b",
            "Llava",
            {
                "text_config": {"model_type": "llama", "vocab_size": 32064},
                "vision_config": {
                    "model_type": "clip_vision_model",
                    "hidden_size": 1024,
                    "intermediate_size": 4096,
                    "num_hidden_layers": 24,
                    "num_attention_heads": 16,
                    "image_size": 336,
                    "patch_size": 14,
                },
            },
        ),
    ],
)
def test_vlm_preset_counts_equal_the_transformers_model(preset: str, cls: str, config: dict[str, Any]) -> None:
    cfg = getattr(T, f"{cls}Config")(**config)
    with torch.device("meta"):
        model = getattr(T, f"{cls}ForConditionalGeneration")(cfg)
    shape = MODEL_PRESETS[preset]
    assert shape.vision is not None
    vision = _count(model, "model.visual") + _count(model, "model.vision_tower")
    projector = _count(model, "model.multi_modal_projector") + _count(model, "model.visual.merger")
    assert vision_params(shape.vision) == vision + _count(model, "model.multi_modal_projector")
    assert projector_params(shape.vision) == projector
    assert count_params(shape) == sum(p.numel() for p in model.parameters())
    assert count_params(shape) == pytest.approx(PUBLISHED_PARAMS[preset], rel=0.015)


def test_internvl2_8b_vision_side_equals_transformers_internvl_and_its_llm_a_llama_of_that_shape() -> None:
    # InternViT-300M-448px: qkv_bias true, layer scale, no final norm (use_mean_pooling, the default, makes it Identity).
    vc = T.InternVLVisionConfig(attention_bias=True, image_size=[448, 448], patch_size=[14, 14])
    cfg = T.InternVLConfig(vision_config=vc.to_dict(), text_config={"model_type": "llama", "vocab_size": 92553})
    with torch.device("meta"):
        model = T.InternVLForConditionalGeneration(cfg)
        # InternLM2's fused wqkv / w1-w3 hold as many parameters as LLaMA's separate matrices
        llm = T.LlamaForCausalLM(
            T.LlamaConfig(
                hidden_size=4096,
                num_hidden_layers=32,
                num_attention_heads=32,
                num_key_value_heads=8,
                intermediate_size=14336,
                vocab_size=92553,
            )
        )
    tower = MODEL_PRESETS["internvl2-8b"].vision
    assert tower is not None
    assert vision_encoder_params(tower) == _count(model, "model.vision_tower")
    assert projector_params(tower) == _count(model, "model.multi_modal_projector")
    lm = sum(p.numel() for p in llm.parameters())
    assert count_params(MODEL_PRESETS["internvl2-8b"]) == lm + _count(model, "model.vision_tower") + _count(
        model, "model.multi_modal_projector"
    )


@pytest.mark.parametrize(
    ("name", "preset"),
    [
        ("Qwen2-VL-7B", "qwen2-vl-7b"),
        ("qwen2.5-vl-7b-instruct", "qwen2.5-vl-7b"),
        ("Qwen/Qwen2.5-VL-72B-Instruct", "qwen2.5-vl-72b"),
        ("llava-1.5-7b", "llava-1.5-7b"),
        ("llava-hf/llava-1.5-7b-hf", "llava-1.5-7b"),
        ("liuhaotian/llava-v1.5-13b", "llava-1.5-13b"),
        ("InternVL2-8B", "internvl2-8b"),
        ("OpenGVLab/InternVL2_5-8B", "internvl2-8b"),
    ],
)
def test_vl_model_names_resolve_to_their_vl_preset(name: str, preset: str) -> None:
    assert preset_for_name(name) == preset
    assert MODEL_PRESETS[preset].vision is not None


def test_text_presets_have_no_vision_and_a_bare_qwen_name_is_not_a_vl_model() -> None:
    assert preset_for_name("Qwen2.5-7B-Instruct") == "qwen2.5-7b"
    assert MODEL_PRESETS["qwen2.5-7b"].vision is None


@pytest.mark.parametrize(("height", "width"), [(1024, 1024), (1080, 1920), (100, 3000), (448, 448)])
@pytest.mark.parametrize("max_pixels", [None, 768 * 768])
def test_qwen_tokens_per_image_equal_the_image_processors_grid(height: int, width: int, max_pixels: int | None) -> None:
    kw = {} if max_pixels is None else {"max_pixels": max_pixels}
    processor = T.Qwen2VLImageProcessor(**kw)
    out = processor(images=[np.zeros((height, width, 3), dtype=np.uint8)], return_tensors="pt")
    t, gh, gw = out["image_grid_thw"][0].tolist()
    for preset in ("qwen2-vl-7b", "qwen2.5-vl-7b"):
        tower = MODEL_PRESETS[preset].vision
        assert tower is not None
        got = image_tokens(tower, height, width, max_pixels)
        assert got.vit_tokens == t * gh * gw and got.llm_tokens == t * gh * gw // 4


@pytest.mark.parametrize(("height", "width"), [(1080, 1920), (448, 448), (600, 800), (2000, 500), (900, 900)])
def test_internvl_tiles_equal_the_crop_to_patches_count(height: int, width: int) -> None:
    processor = T.GotOcr2ImageProcessor(
        crop_to_patches=True, min_patches=1, max_patches=12, size={"height": 448, "width": 448}
    )
    out = processor(images=[np.zeros((height, width, 3), dtype=np.uint8)], return_tensors="pt")
    assert internvl_tiles(height, width) == int(out["num_patches"][0])
    tower = MODEL_PRESETS["internvl2-8b"].vision
    assert tower is not None
    assert image_tokens(tower, height, width).llm_tokens == 256 * int(out["num_patches"][0])


def test_llava_15_takes_576_tokens_whatever_the_size() -> None:
    tower = MODEL_PRESETS["llava-1.5-7b"].vision
    assert tower is not None
    assert image_tokens(tower).llm_tokens == 576 and image_tokens(tower, 2000, 3000).vit_tokens == 577


def _tiny(family: str, h: int, i: int, depth: int) -> tuple[torch.nn.Module, VisionTower]:
    common = dict(hidden_size=h, num_layers=depth, num_heads=4, intermediate_size=i, out_hidden_size=32)
    if family == "qwen2-vl":
        vc = T.models.qwen2_vl.configuration_qwen2_vl.Qwen2VLVisionConfig(
            depth=depth, embed_dim=h, hidden_size=32, mlp_ratio=i // h, num_heads=4
        )
        model = T.models.qwen2_vl.modeling_qwen2_vl.Qwen2VisionTransformerPretrainedModel._from_config(
            vc, attn_implementation="sdpa"
        )
        tower = VisionTower(family=family, temporal_patch_size=2, merge=2, projector="qwen-merger", **common)
    elif family == "qwen2.5-vl":
        vc = T.models.qwen2_5_vl.configuration_qwen2_5_vl.Qwen2_5_VLVisionConfig(
            depth=depth, hidden_size=h, out_hidden_size=32, intermediate_size=i, num_heads=4, fullatt_block_indexes=[]
        )
        model = T.models.qwen2_5_vl.modeling_qwen2_5_vl.Qwen2_5_VisionTransformerPretrainedModel._from_config(
            vc, attn_implementation="sdpa"
        )
        tower = VisionTower(
            family=family,
            mlp="gated",
            norm="rmsnorm",
            temporal_patch_size=2,
            merge=2,
            projector="qwen-merger",
            **common,
        )
    elif family == "llava":
        vc = T.CLIPVisionConfig(
            hidden_size=h,
            intermediate_size=i,
            num_hidden_layers=depth,
            num_attention_heads=4,
            image_size=224,
            patch_size=14,
        )
        model = T.CLIPVisionModel._from_config(vc, attn_implementation="sdpa")
        tower = VisionTower(family=family, class_token=True, projector="mlp2x", image_size=224, **common)
    else:
        vc = T.InternVLVisionConfig(
            hidden_size=h,
            intermediate_size=i,
            num_hidden_layers=depth,
            num_attention_heads=4,
            image_size=[224, 224],
            patch_size=[14, 14],
            attention_bias=True,
        )
        model = T.InternVLVisionModel._from_config(vc, attn_implementation="sdpa")
        tower = VisionTower(family=family, class_token=True, projector="internvl-mlp1", image_size=224, **common)
    return model, tower


@pytest.mark.parametrize("family", ["qwen2-vl", "qwen2.5-vl", "llava", "internvl"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_vit_activations_match_saved_tensors_of_a_trained_tower(family: str, dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    model, tower = _tiny(family, 96, 384, 4)
    model = model.to(dtype).train()
    if family.startswith("qwen"):
        side = 16  # a 224 x 224 image: 16 x 16 patches
        inputs = {
            "hidden_states": torch.randn(side * side, 3 * 2 * 14 * 14, dtype=dtype),
            "grid_thw": torch.tensor([[1, side, side]]),
        }
        tokens = side * side
    else:
        inputs = {"pixel_values": torch.randn(1, 3, 224, 224, dtype=dtype)}
        tokens = 16 * 16 + 1
    measured = measure(model, inputs).saved_bytes
    predicted = vit_activation_bytes(tower, tokens, 4 if dtype == torch.float32 else 2)
    assert predicted == pytest.approx(measured, rel=0.04)


def test_visual_tokens_cost_what_the_same_number_of_text_tokens_costs_in_the_language_model() -> None:
    base = {"model": "qwen2-vl-7b", "finetune": "lora", "seq_len": 1024, "gpu": "a100-80gb"}
    with_image = estimate_memory({**base, "images_per_sample": 2, "image_height": 1024, "image_width": 1024})
    longer = estimate_memory({**base, "seq_len": 1024 + 2 * 1225})
    assert with_image.activations == longer.activations
    assert any("1,225" in a or "1225" in a for a in with_image.assumptions_en)
    plain = estimate_memory(base)
    assert plain.activations is not None and with_image.activations is not None
    assert with_image.activations > plain.activations
    assert any("no image count given" in a for a in plain.assumptions_en)


def test_frozen_vision_tower_has_no_gradient_or_optimizer_state_and_a_trained_one_does() -> None:
    shape = MODEL_PRESETS["qwen2-vl-7b"]
    assert shape.vision is not None
    base = {"model": "qwen2-vl-7b", "finetune": "full", "seq_len": 512, "images_per_sample": 1}
    base.update(image_height=448, image_width=448)
    frozen = estimate_memory(base)
    trained = estimate_memory({**base, "freeze_vision_tower": False, "freeze_projector": False})
    assert frozen.num_params == trained.num_params == count_params(shape)
    assert trained.trainable_params - frozen.trainable_params == vision_params(shape.vision)
    # bf16-mixed: 2 + 2 + 12 bytes for a trained parameter, 2 for a frozen one
    assert trained.model_states - frozen.model_states == 14 * vision_params(shape.vision)
    assert "activations_vision_tower" in trained.details and "activations_vision_tower" not in frozen.details
    assert trained.details["activations_vision_tower"] == vit_activation_bytes(shape.vision, 1024, 2)


def test_a_qwen_image_without_a_size_is_refused_not_guessed() -> None:
    from calculators.errors import CalculatorError

    with pytest.raises(CalculatorError):
        estimate_memory({"model": "qwen2.5-vl-7b", "images_per_sample": 1})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我的图片大小是640*640，请问这是什么原因", {"image_width": 640, "image_height": 640}),
        ("The images are resized to 768×768 and I set per_device_train_batch_size=1", {"image_width": 768}),
        ("image_max_pixels: 262144\nfreeze_vision_tower: false", {"image_max_pixels": 262144}),
        ("MAX_PIXELS=1003520 swift sft --freeze_vit false", {"freeze_vision_tower": False}),
        ("max_pixels=1280*28*28", {"image_max_pixels": 1003520}),
        ("每个样本5张图，显存不够", {"images_per_sample": 5}),
        ("training with 4 images per sample", {"images_per_sample": 4}),
    ],
)
def test_image_settings_are_read_as_users_write_them(text: str, expected: dict[str, Any]) -> None:
    from rag.slots import extract_slots

    stated = extract_slots(text).stated()
    assert {k: stated.get(k) for k in expected} == expected


@pytest.mark.parametrize("text", ["batch 8x8", "显存 24x2", "8*A100 80G", "micro batch 2*4"])
def test_products_that_are_no_image_size_are_not_read_as_one(text: str) -> None:
    from rag.slots import extract_slots

    stated = extract_slots(text).stated()
    assert not {k for k in stated if k.startswith("image")}


def test_stated_images_enter_the_estimate_and_the_note_says_how_many_tokens(bot_without_retrieval: Any) -> None:
    q = "Qwen2.5-VL-7B LoRA 微调，单卡 4090 24G，每个样本2张图，图片大小是1280x720，能跑吗？"
    answer = bot_without_retrieval.ask(q)
    tower = MODEL_PRESETS["qwen2.5-vl-7b"].vision
    assert tower is not None
    tokens = 2 * image_tokens(tower, 720, 1280).llm_tokens
    assert f"{tokens:,}" in answer.text, answer.text[:900]
    without = bot_without_retrieval.ask("Qwen2.5-VL-7B LoRA 微调，单卡 4090 24G，能跑吗？")
    assert "不在序列长度内" in without.text and f"{tokens:,}" not in without.text


def test_a_size_without_a_count_is_one_image_said_as_assumed(bot_without_retrieval: Any) -> None:
    text = bot_without_retrieval.ask("Can I LoRA fine-tune Qwen2-VL-7B on one RTX 4090? My images are 448x448.").text
    assert "one image per sample" in text and "256" in text, text[:900]


def test_a_stated_cutoff_holds_the_visual_tokens_and_an_assumed_length_gets_them_added(
    bot_without_retrieval: Any,
) -> None:
    # LLaMA-Factory's cutoff_len and ms-swift's max_length bound the whole sequence, image tokens included
    base = {"model": "qwen2-vl-7b", "finetune": "lora", "seq_len": 2048, "images_per_sample": 1}
    base.update(image_height=448, image_width=448)
    inside = estimate_memory({**base, "visual_tokens_in_seq_len": True})
    plain = estimate_memory({k: v for k, v in base.items() if not k.startswith("image")})
    assert inside.activations == plain.activations
    stated = bot_without_retrieval.ask("Qwen2-VL-7B LoRA, cutoff_len 2048, images 448x448, one RTX 4090: will it fit?")
    assert "count within your sequence length 2,048" in stated.text, stated.text[:900]
    assumed = bot_without_retrieval.ask("Qwen2-VL-7B LoRA, images 448x448, one RTX 4090: will it fit?")
    assert "are added to the sequence length" in assumed.text, assumed.text[:900]


def test_lora_with_the_vision_tower_unfrozen_says_what_is_not_modelled() -> None:
    est = estimate_memory({"model": "qwen2.5-vl-7b", "finetune": "lora", "freeze_vision_tower": False})
    assert any("not modelled" in a for a in est.assumptions_en)
    assert not any(
        "not modelled" in a for a in estimate_memory({"model": "qwen2.5-vl-7b", "finetune": "lora"}).assumptions_en
    )
