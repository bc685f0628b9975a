"""The added model and GPU presets: names people use resolve, unknown names get the closest, MoE presets are MoE
shapes, and MoE models that cannot be expressed are refused."""

import pytest

from calculators import CalculatorError, estimate_memory
from calculators.presets import (
    GPU_PRESETS,
    MODEL_PRESETS,
    NOT_A_DENSE_PRESET,
    active_params,
    count_params,
    get_gpu,
    get_model_shape,
)


@pytest.mark.parametrize(
    "alias,preset",
    [
        ("Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b"),
        ("Qwen3-8B", "qwen3-8b"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.1-70b"),
        ("Llama-3.1-405B", "llama-3.1-405b"),
        ("google/gemma-2-9b-it", "gemma-2-9b"),
        ("microsoft/Phi-3-mini-4k-instruct", "phi-3-mini"),
        ("baichuan-inc/Baichuan2-13B-Chat", "baichuan2-13b"),
        ("THUDM/chatglm2-6b", "chatglm2-6b"),
        ("THUDM/glm-4-9b-chat", "glm-4-9b"),
        ("01-ai/Yi-34B", "yi-34b"),
    ],
)
def test_hub_names_resolve(alias, preset):
    assert get_model_shape(alias) is MODEL_PRESETS[preset]


@pytest.mark.parametrize(
    "alias,preset,gib,bf16",
    [
        ("A800", "a800-80gb", 80, True),
        ("H800", "h800-80gb", 80, True),
        ("H20", "h20", 96, True),
        ("RTX 4090D", "rtx-4090d", 24, True),
        ("4080", "rtx-4080", 16, True),
        ("A6000", "rtx-a6000", 48, True),
        ("L4", "l4", 24, True),
        ("L20", "l20", 48, True),
        ("2080 Ti", "rtx-2080ti", 11, False),
        ("MI300X", "mi300x", 192, True),
        ("Ascend 910B", "ascend-910b", 64, True),
        # stop 44: the cards users name most that had none (data-sheet memory; bf16 from Ampere on)
        ("RTX A5000", "rtx-a5000", 24, True),
        ("3070", "rtx-3070", 8, True),
        ("3060", "rtx-3060", 12, True),
        ("5090", "rtx-5090", 32, True),
        ("Tesla K80", "k80", 12, False),
        ("GTX 1080 Ti", "gtx-1080ti", 11, False),
        ("TITAN RTX", "titan-rtx", 24, False),
    ],
)
def test_gpu_presets(alias, preset, gib, bf16):
    g = get_gpu(alias)
    assert g is GPU_PRESETS[preset] and g.memory_gib == gib and g.bf16 is bf16


def test_2080ti_bf16_is_flagged():
    est = estimate_memory(dict(model="qwen2.5-0.5b", gpu="2080ti", precision="bf16-mixed", seq_len=512))
    assert any("bf16" in n for n in est.notes_en)


def test_unknown_names_get_the_closest_known_ones():
    with pytest.raises(CalculatorError) as err:
        get_model_shape("qwen2.5-70b")
    assert "Closest known" in err.value.message("en") and "qwen2.5-72b" in err.value.message("en")
    assert "最接近" in err.value.message("zh")
    with pytest.raises(CalculatorError) as err:
        get_gpu("rtx-4060")  # (rtx-4070 has had a preset since stop 44)
    assert "rtx-4070" in err.value.message("en") or "rtx-4080" in err.value.message("en")


@pytest.mark.parametrize(
    "name,total,active",
    [
        ("mixtral-8x7b", 46.7e9, 12.9e9),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", 46.7e9, 12.9e9),
        ("Mixtral-8x22B-v0.1", 141e9, 39e9),
        ("Qwen/Qwen1.5-MoE-A2.7B", 14.3e9, 2.7e9),
        ("Qwen3-30B-A3B", 30.5e9, 3.3e9),
        ("Qwen3-235B-A22B", 235e9, 22e9),
    ],
)
def test_moe_presets_are_moe_with_the_published_totals(name, total, active):
    """Model cards: total and active parameters (Mixtral: 46.7B / 12.9B; Qwen3-30B-A3B: 30.5B / 3.3B; ...)."""
    shape = get_model_shape(name)
    assert shape.is_moe
    assert count_params(shape) == pytest.approx(total, rel=0.015)
    assert active_params(shape) == pytest.approx(active, rel=0.03)


@pytest.mark.parametrize(
    "name,preset",
    [
        ("deepseek-ai/DeepSeek-V2-Lite", "deepseek-v2-lite"),
        ("DeepSeek-V2-Lite-Chat", "deepseek-v2-lite"),
        ("deepseek v2 lite", "deepseek-v2-lite"),
        ("Qwen2-57B-A14B", "qwen2-57b-a14b"),
        ("Qwen/Qwen2-57B-A14B-Instruct", "qwen2-57b-a14b"),
    ],
)
def test_moe_names_that_used_to_be_refused_are_moe_presets(name, preset):
    """DeepSeek-V2-Lite (MLA + shared/routed experts) and Qwen2-57B-A14B were refused by name until modelled."""
    shape = get_model_shape(name)
    assert shape is MODEL_PRESETS[preset] and shape.is_moe
    assert name.lower().replace(" ", "-").split("/")[-1] not in NOT_A_DENSE_PRESET
