"""GLM-4.1V-9B and GLM-4V-9B presets: parameter counts, tokens per image and ViT activations.

GLM-4.1V-9B: ``Glm4vForConditionalGeneration`` (transformers 5.23) built on the meta device from the checkpoint's
config.json values (zai-org/GLM-4.1V-9B-Thinking; the same as ``Glm4vConfig``'s defaults), counted part by part;
tokens per image from ``Glm4vImageProcessor``'s grid; ViT activations from a tiny random ``Glm4vVisionModel`` with the
saved tensors counted by tests/activation_probe.py, in fp32 and bf16.

GLM-4V-9B (THUDM/glm-4v-9b) is remote code that does not run here: its total is checked against the published 13.9B,
its ViT block against transformers' ``CLIPEncoderLayer`` of the same widths (the same linears, biases and two
LayerNorms), and its projector against the transformers modules with GLM-4V's layout (``nn.Conv2d`` 2 × 2 and
GLM-4.1V's ``Glm4vVisionPatchMerger``, the same ``GLU``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import transformers as T
from transformers.models.glm4v.configuration_glm4v import Glm4vVisionConfig
from transformers.models.glm4v.modeling_glm4v import Glm4vVisionModel, Glm4vVisionPatchMerger

from calculators.presets import MODEL_PRESETS, PUBLISHED_PARAMS, count_params, preset_for_name
from calculators.vision import (
    VisionTower,
    image_tokens,
    projector_params,
    vision_encoder_params,
    vision_layer_params,
    vision_params,
    vit_activation_bytes,
)
from tests.activation_probe import measure

#: zai-org/GLM-4.1V-9B-Thinking config.json: text_config and vision_config.
GLM41V_TEXT = dict(
    hidden_size=4096,
    num_hidden_layers=40,
    num_attention_heads=32,
    num_key_value_heads=2,
    intermediate_size=13696,
    vocab_size=151552,
)
GLM41V_VISION = dict(
    depth=24,
    hidden_size=1536,
    num_heads=12,
    intermediate_size=13696,
    out_hidden_size=4096,
    patch_size=14,
    temporal_patch_size=2,
    spatial_merge_size=2,
    image_size=336,
    attention_bias=False,
)


def _count(model: torch.nn.Module, prefix: str) -> int:
    return sum(p.numel() for n, p in model.named_parameters() if n.startswith(prefix))


def test_glm41v_count_equals_the_transformers_model_part_by_part() -> None:
    config = T.Glm4vConfig(text_config=GLM41V_TEXT, vision_config=GLM41V_VISION, tie_word_embeddings=False)
    with torch.device("meta"):
        model = T.Glm4vForConditionalGeneration(config)
    shape = MODEL_PRESETS["glm-4.1v-9b"]
    tower = shape.vision
    assert tower is not None and tower.family == "glm-4.1v"
    merger = _count(model, "model.visual.downsample") + _count(model, "model.visual.merger")
    assert projector_params(tower) == merger
    assert vision_encoder_params(tower) == _count(model, "model.visual") - merger
    assert vision_params(tower) == _count(model, "model.visual")
    assert count_params(shape) == sum(p.numel() for p in model.parameters()) == 10_292_777_472
    # the Hub lists zai-org/GLM-4.1V-9B-Thinking as "10B"; "9B" is its language model (9.40B)
    assert count_params(shape) == pytest.approx(PUBLISHED_PARAMS["glm-4.1v-9b"], rel=0.01)
    assert count_params(shape) - vision_params(tower) == pytest.approx(9.4e9, rel=0.01)


def test_glm4v_9b_total_is_the_published_13_9b_and_its_parts_equal_transformers_modules() -> None:
    shape = MODEL_PRESETS["glm-4v-9b"]
    tower = shape.vision
    assert tower is not None and tower.family == "glm-4v"
    # the language model is GLM-4-9B's (ChatGLM, the same config.json fields)
    lm = count_params(shape) - vision_params(tower)
    assert lm == count_params(MODEL_PRESETS["glm-4-9b"])
    assert count_params(shape) == 13_906_320_896
    assert count_params(shape) == pytest.approx(PUBLISHED_PARAMS["glm-4v-9b"], rel=0.005)
    clip = T.CLIPVisionConfig(hidden_size=1792, intermediate_size=15360, num_attention_heads=16)
    with torch.device("meta"):
        layer = T.models.clip.modeling_clip.CLIPEncoderLayer(clip)
        conv = torch.nn.Conv2d(1792, 4096, kernel_size=2, stride=2)
        glu = Glm4vVisionPatchMerger(dim=4096, context_dim=13696, hidden_act="silu")
    assert vision_layer_params(tower) == sum(p.numel() for p in layer.parameters())
    boi_eoi = 2 * 4096
    assert projector_params(tower) == sum(p.numel() for p in [*conv.parameters(), *glu.parameters()]) + boi_eoi
    # patch Conv2d(3, 1792, 14) with bias, CLS, 6401 positions, 63 blocks
    assert vision_encoder_params(tower) == 3 * 14 * 14 * 1792 + 1792 + 1792 + 6401 * 1792 + 63 * vision_layer_params(
        tower
    )


@pytest.mark.parametrize(
    ("name", "preset"),
    [
        ("GLM-4.1V-9B-Thinking", "glm-4.1v-9b"),
        ("zai-org/GLM-4.1V-9B-Thinking", "glm-4.1v-9b"),
        ("THUDM/GLM-4.1V-9B-Base", "glm-4.1v-9b"),
        ("glm4.1v", "glm-4.1v-9b"),
        ("GLM-4.1V", "glm-4.1v-9b"),
        ("glm-4v-9b", "glm-4v-9b"),
        ("GLM4v-9b", "glm-4v-9b"),
        ("ZhipuAI/glm-4v-9b", "glm-4v-9b"),
        ("glm4v-9b-chat", "glm-4v-9b"),
    ],
)
def test_glm_vl_names_resolve_to_their_preset(name: str, preset: str) -> None:
    assert preset_for_name(name) == preset


def test_a_glm_text_model_stays_text() -> None:
    assert preset_for_name("glm-4-9b-chat") == "glm-4-9b" and MODEL_PRESETS["glm-4-9b"].vision is None
    assert preset_for_name("glm4v") is None  # GLM-4V-9B, or transformers' glm4v (GLM-4.1V): not one shape


@pytest.mark.parametrize(
    ("height", "width"), [(1024, 1024), (1080, 1920), (100, 3000), (20, 400), (200, 200), (5000, 5000), (3000, 4000)]
)
@pytest.mark.parametrize("max_pixels", [None, 768 * 768])
def test_glm41v_tokens_per_image_equal_the_image_processors_grid(
    height: int, width: int, max_pixels: int | None
) -> None:
    # the processor counts an image as two frames: its bound is twice the area an image keeps
    size = None if max_pixels is None else {"shortest_edge": 112 * 112, "longest_edge": 2 * max_pixels}
    processor = T.Glm4vImageProcessor() if size is None else T.Glm4vImageProcessor(size=size)
    out = processor(images=[np.zeros((height, width, 3), dtype=np.uint8)], return_tensors="pt")
    t, gh, gw = out["image_grid_thw"][0].tolist()
    tower = MODEL_PRESETS["glm-4.1v-9b"].vision
    assert tower is not None
    got = image_tokens(tower, height, width, max_pixels)
    assert got.vit_tokens == t * gh * gw and got.llm_tokens == t * gh * gw // 4


def test_glm4v_9b_takes_1602_positions_per_image_whatever_the_size() -> None:
    tower = MODEL_PRESETS["glm-4v-9b"].vision
    assert tower is not None
    one = image_tokens(tower)
    assert (one.llm_tokens, one.vit_tokens) == (1600 + 2, 6400 + 1)
    assert image_tokens(tower, 480, 640) == one


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize(("h", "out", "ctx"), [(96, 192, 160), (64, 256, 320)])
def test_glm41v_vit_activations_match_saved_tensors_of_a_trained_tower(
    dtype: torch.dtype, h: int, out: int, ctx: int
) -> None:
    torch.manual_seed(0)
    depth = 3
    vc = Glm4vVisionConfig(
        depth=depth,
        hidden_size=h,
        out_hidden_size=out,
        intermediate_size=ctx,
        num_heads=4,
        image_size=112,
        patch_size=14,
    )
    model = Glm4vVisionModel._from_config(vc, attn_implementation="sdpa").to(dtype).train()
    tower = VisionTower(
        family="glm-4.1v",
        hidden_size=h,
        num_layers=depth,
        num_heads=4,
        intermediate_size=out,
        mlp="gated",
        block_bias=False,
        norm="rmsnorm",
        temporal_patch_size=2,
        patch_bias=True,
        position_rows=64,
        pre_norm=True,
        post_norm=True,
        merge=2,
        projector="glm-merger",
        projector_intermediate_size=ctx,
        out_hidden_size=out,
        activation="silu",
    )
    assert vision_params(tower) == sum(p.numel() for p in model.parameters())
    side = 16  # a 224 x 224 image: 16 x 16 patches
    inputs: dict[str, Any] = {
        "hidden_states": torch.randn(side * side, 3 * 2 * 14 * 14, dtype=dtype),
        "grid_thw": torch.tensor([[1, side, side]]),
    }
    measured = measure(model, inputs).saved_bytes
    predicted = vit_activation_bytes(tower, side * side, 4 if dtype == torch.float32 else 2)
    assert predicted == pytest.approx(measured, rel=0.03)


def test_a_glm41v_answer_counts_its_images_at_28_px_per_token(bot_without_retrieval: Any) -> None:
    text = bot_without_retrieval.ask(
        "Can I LoRA fine-tune GLM-4.1V-9B-Thinking on one A100 80GB? 2 images per sample, 1280x720."
    ).text
    tower = MODEL_PRESETS["glm-4.1v-9b"].vision
    assert tower is not None
    tokens = 2 * image_tokens(tower, 720, 1280).llm_tokens  # 720 -> 728, 1280 -> 1288: 2 x 26 x 46
    assert tokens == 2392
    assert f"{tokens:,}" in text and "28×28" in text, text[:900]


def test_a_glm4v_9b_answer_counts_1602_tokens_per_image(bot_without_retrieval: Any) -> None:
    text = bot_without_retrieval.ask("Can I LoRA fine-tune glm-4v-9b on one A100 80GB? 2 images per sample.").text
    # the size does not matter: every image is 1120 x 1120, 1600 merged patches + boi + eoi
    assert "3,204" in text and "4,292M" in text, text[:900]


@pytest.mark.parametrize(
    ("message", "preset"),
    [
        ("Can I LoRA fine-tune qwen3vl 8b on a 24GB 4090?", "qwen3-vl-8b"),
        ("Full fine-tune Qwen3VL-8B on 8 A100", "qwen3-vl-8b"),
        ("微调 Qwen3 VL 8B 显存不够", "qwen3-vl-8b"),
        ("qwen2.5 vl 7b lora", "qwen2.5-vl-7b"),
        ("GLM4v-9b lora微调，fp16一直grad_norm显示nan", "glm-4v-9b"),
        ("glm4v 9b lora", "glm-4v-9b"),
        ("glm4.1v 微调要多少显存", "glm-4.1v-9b"),
        # the text models and a serving engine glued to the family stay what they were
        ("Qwen3-8B lora on one 4090", "qwen3-8b"),
        ("glm4 9b lora", "glm-4-9b"),
    ],
)
def test_a_vl_name_written_with_any_separator_is_read_as_the_vl_model(message: str, preset: str) -> None:
    from rag.slots import extract_slots

    assert extract_slots(message).model == preset


def test_vllm_after_a_qwen_name_is_no_vl_segment() -> None:
    from rag.slots import extract_slots

    slots = extract_slots("Serving Qwen2-7B-Instruct with vLLM on 2 GPUs")
    assert slots.model_text is not None and "vl" not in slots.model_text.lower()


# --- MiniCPM-V 2.6 (remote code): each part against the transformers / torch modules vLLM's MiniCPMV2_6 is built of.


def test_minicpm_v26_parts_equal_transformers_modules_and_the_total_is_the_published_8b() -> None:
    from transformers.models.idefics2.configuration_idefics2 import Idefics2VisionConfig
    from transformers.models.idefics2.modeling_idefics2 import Idefics2VisionTransformer

    shape = MODEL_PRESETS["minicpm-v-2.6"]
    tower = shape.vision
    assert tower is not None and tower.family == "minicpm-v"
    siglip = Idefics2VisionConfig(
        hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, num_attention_heads=16, patch_size=14,
        image_size=980,
    )  # fmt: skip
    qwen2 = T.Qwen2Config(
        hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
        num_key_value_heads=4, vocab_size=151666, tie_word_embeddings=False,
    )  # fmt: skip
    with torch.device("meta"):
        vpm = Idefics2VisionTransformer(siglip)
        llm = T.Qwen2ForCausalLM(qwen2)
        kv_proj = torch.nn.Linear(1152, 3584, bias=False)
        attn = torch.nn.MultiheadAttention(3584, 3584 // 128)
        norms = [torch.nn.LayerNorm(3584) for _ in range(3)]  # ln_q, ln_kv, ln_post
    assert vision_encoder_params(tower) == sum(p.numel() for p in vpm.parameters())
    query, proj = 64 * 3584, 3584 * 3584
    resampler = query + proj + sum(p.numel() for m in [kv_proj, attn, *norms] for p in m.parameters())
    assert projector_params(tower) == resampler
    assert count_params(shape) - vision_params(tower) == sum(p.numel() for p in llm.parameters())
    assert count_params(shape) == 8_099_175_152
    # the model card's "a total of 8B parameters"; the Hub's safetensors size 8.1B
    assert count_params(shape) == pytest.approx(8e9, rel=0.02)
    assert count_params(shape) == pytest.approx(PUBLISHED_PARAMS["minicpm-v-2.6"], rel=0.01)


@pytest.mark.parametrize(
    ("height", "width"), [(1344, 1344), (1080, 1920), (100, 3000), (448, 448), (300, 400), (900, 700), (2000, 500)]
)
def test_minicpm_slices_equal_the_sliced_grid_of_the_minicpm_image_processor(height: int, width: int) -> None:
    from calculators.vision import minicpm_slice_grid

    # transformers' MiniCPM-V 4.6 processor keeps MiniCPM-V's get_sliced_grid (max 9 slices of 448 px)
    processor = T.MiniCPMV4_6ImageProcessor()
    theirs = processor.get_sliced_grid((height, width), 9, 448)  # [rows, cols] or None
    ours = minicpm_slice_grid(height, width)  # (cols, rows) or None
    assert (ours is None) == (theirs is None)
    tower = MODEL_PRESETS["minicpm-v-2.6"].vision
    assert tower is not None
    slices = 0 if ours is None else ours[0] * ours[1]
    assert image_tokens(tower, height, width).llm_tokens == 64 * (1 + slices)
    if theirs is not None and ours is not None:
        assert slices == theirs[0] * theirs[1]


def test_minicpm_v26_takes_640_tokens_for_a_1344_px_image() -> None:
    # the model card: images up to 1.8M pixels (1344 x 1344), 9 slices + the whole image, 64 tokens each
    tower = MODEL_PRESETS["minicpm-v-2.6"].vision
    assert tower is not None
    one = image_tokens(tower, 1344, 1344)
    assert one.llm_tokens == 640 and one.vit_tokens == 10 * 32 * 32


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_siglip_vit_activations_match_saved_tensors_of_a_trained_idefics2_vision_transformer(
    dtype: torch.dtype,
) -> None:
    from transformers.models.idefics2.configuration_idefics2 import Idefics2VisionConfig
    from transformers.models.idefics2.modeling_idefics2 import Idefics2VisionTransformer

    torch.manual_seed(0)
    h, i, depth, side = 96, 192, 3, 16
    config = Idefics2VisionConfig(
        hidden_size=h, intermediate_size=i, num_hidden_layers=depth, num_attention_heads=4, patch_size=14,
        image_size=side * 14, hidden_act="gelu_pytorch_tanh",
    )  # fmt: skip
    config._attn_implementation = "sdpa"
    model = Idefics2VisionTransformer(config).to(dtype).train()
    tower = VisionTower(
        family="minicpm-v",
        hidden_size=h,
        num_layers=depth,
        num_heads=4,
        intermediate_size=i,
        patch_bias=True,
        position_rows=side * side,
        post_norm=True,
        projector="mlp2x",  # the ViT alone: no resampler term
        out_hidden_size=32,
    )
    assert vision_encoder_params(tower) == sum(p.numel() for p in model.parameters())
    inputs: dict[str, Any] = {
        "pixel_values": torch.randn(1, 3, side * 14, side * 14, dtype=dtype),
        "patch_attention_mask": torch.ones(1, side, side, dtype=torch.bool),
    }
    measured = measure(model, inputs).saved_bytes
    predicted = vit_activation_bytes(tower, side * side, 4 if dtype == torch.float32 else 2)
    assert predicted == pytest.approx(measured, rel=0.03)


@pytest.mark.parametrize(
    ("message", "preset"),
    [
        ("fine-tune MiniCPM-V 2.6 on 2 4090", "minicpm-v-2.6"),
        ('MODEL="/root/MiniCPM-V/pretrained_weights/MiniCPM-V-2_6"', "minicpm-v-2.6"),
        ("minicpm v 2.6 lora", "minicpm-v-2.6"),
        ("MiniCPM-V2.6 lora", "minicpm-v-2.6"),
    ],
)
def test_minicpm_v_written_with_any_separator_is_read_as_the_vl_model(message: str, preset: str) -> None:
    from rag.slots import extract_slots

    assert extract_slots(message).model == preset


def test_other_minicpm_models_get_no_minicpm_v26_shape() -> None:
    from rag.slots import extract_slots

    for message in ["MiniCPM-o 2.6 lora", "MiniCPM-V 2 lora"]:
        assert extract_slots(message).model is None, message
    # MiniCPM-Llama3-V 2.5 has its own preset (Llama-3-8B LM, 96 queries; tests/test_minicpm25_units.py)
    for message in ["miniCPM-V2.5全量微调", "MiniCPM-Llama3-V 2.5 full"]:
        assert extract_slots(message).model == "minicpm-llama3-v-2.5", message


def test_a_vl_segment_glued_between_version_and_size_names_the_vl_preset() -> None:
    assert preset_for_name("Qwen2.5Vl7B") == "qwen2.5-vl-7b"
    assert preset_for_name("qwen3vl8b") == "qwen3-vl-8b"
    assert preset_for_name("Qwen2.5-7B") == "qwen2.5-7b"  # no VL segment: the text model


def test_the_same_family_written_again_in_full_is_the_model_but_another_family_never_replaces_it() -> None:
    from rag.slots import extract_slots

    typo_then_full = "请问Qwenvl2.5VL-7B大概需要多少显存。我在一张24G的A100上lora微调Qwen2.5Vl7B，均OOM"
    assert extract_slots(typo_then_full).model == "qwen2.5-vl-7b"
    other_family = extract_slots("I fine-tune Baichuan-13B, similar to qwen-7b")
    assert other_family.model == "baichuan-13b" and other_family.model_text == "Baichuan-13B"
    assert extract_slots("InternVL fine-tune, its LLM is internlm2-chat-7b").model is None


def test_a_sized_name_is_not_replaced_by_another_size_of_its_family() -> None:
    from rag.slots import extract_slots

    two_sizes = "全参数微调InternVL2-2B就已经八卡全部都消耗了约78G的显存，微调InternVL2-8B就直接OOM了"
    assert extract_slots(two_sizes).model_text == "InternVL2-2B"


def test_a_family_named_without_size_is_the_sized_name_that_follows() -> None:
    from rag.slots import extract_slots

    title_then_sizes = (
        "微调InternVL2特别占显存\n全参数微调InternVL2-2B就已经八卡全部都消耗了约78G的显存，微调InternVL2-8B就直接OOM了"
    )
    slots = extract_slots(title_then_sizes)
    assert slots.model_text == "InternVL2-2B" and slots.num_params == 2e9
