"""DeepSeek-V2/V3 (multi-head latent attention + shared/routed experts) and Qwen2-57B-A14B, modelled instead of refused.

* Parameter counts equal transformers 5.23's own models built on the meta device from the published config.json keys
  (calculators.presets.MOE_PRESET_CONFIGS, sources cited there), and the published totals / activated counts.
* Activations equal what autograd saves (tests/activation_probe.py, ``saved_tensors_hooks``) on tiny random
  DeepseekV2/V3 models on the CPU, within 2 % (the other architectures' tests use 3 %).
* What is not modelled (LoRA on MLA, autocast, moe_layer_freq != 1, mlp_bias) is refused in both languages.
"""

from __future__ import annotations

import pytest

from calculators import CalculatorError, estimate_memory
from calculators.activations import activation_bytes
from calculators.presets import (
    MOE_PRESET_CONFIGS,
    PUBLISHED_ACTIVE_PARAMS,
    PUBLISHED_PARAMS,
    active_params,
    count_params,
    get_model_shape,
    shape_from_hf_config,
)

# DeepSeek-V3's config.json keys, as the preset holds them (sources in calculators.presets.MOE_PRESET_CONFIGS).
DEEPSEEK_V3 = MOE_PRESET_CONFIGS["deepseek-v3"][1]

_CLASSES = {"deepseek_v2": "DeepseekV2Config", "deepseek_v3": "DeepseekV3Config", "qwen2_moe": "Qwen2MoeConfig"}


def _library_count(cfg: dict) -> int:
    """``sum(p.numel())`` of transformers' own model for these config.json keys, built on the meta device."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    kw = {k: v for k, v in cfg.items() if k not in ("model_type", "moe_layer_freq")}
    config = getattr(transformers, _CLASSES[cfg["model_type"]])(**kw)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize(
    "cfg",
    [
        MOE_PRESET_CONFIGS["deepseek-v2-lite"][1],
        MOE_PRESET_CONFIGS["qwen2-57b-a14b"][1],
        MOE_PRESET_CONFIGS["deepseek-v2"][1],
        DEEPSEEK_V3,
        # V2-Lite with a q_lora bottleneck, attention biases and no dense block: every branch of the count
        {
            **MOE_PRESET_CONFIGS["deepseek-v2-lite"][1],
            "q_lora_rank": 768,
            "attention_bias": True,
            "first_k_dense_replace": 0,
        },
    ],
    ids=["deepseek-v2-lite", "qwen2-57b-a14b", "deepseek-v2", "deepseek-v3", "v2-lite-qlora-bias-nodense"],
)
def test_count_equals_the_library_model_exactly(cfg):
    assert count_params(shape_from_hf_config(cfg)) == _library_count(cfg)


@pytest.mark.parametrize(
    "name,total,active",
    [
        ("deepseek-v2-lite", 15.7e9, 2.4e9),
        ("qwen2-57b-a14b", 57e9, 14e9),
        ("deepseek-v2", 236e9, 21e9),
        ("deepseek-v3", 671e9, 37e9),
    ],
)
def test_published_total_and_activated(name, total, active):
    """Totals within 1 %; activated per token without the token-embedding table (a lookup, no matmul), within 3 %:
    V2-Lite 2.45B vs 2.4B, Qwen2-57B-A14B 13.7B vs 14B, V2 20.9B vs 21B, V3 36.6B vs 37B."""
    shape = get_model_shape(name)
    assert PUBLISHED_PARAMS[name] == total and PUBLISHED_ACTIVE_PARAMS[name] == active
    assert count_params(shape) == pytest.approx(total, rel=0.01)
    assert active_params(shape) - shape.vocab_size * shape.hidden_size == pytest.approx(active, rel=0.03)


def test_v2_lite_shape_is_mla_with_one_dense_block():
    s = get_model_shape("DeepSeek-V2-Lite-Chat")
    assert s.is_mla and s.q_lora_rank == 0 and s.kv_lora_rank == 512 and s.first_dense_layers == 1
    assert s.moe_layers == 26 and s.shared_expert_intermediate_size == 2 * 1408


# ------------------------------------------------------------------ activations, measured

TINY = dict(
    hidden_size=64,
    num_hidden_layers=3,
    num_attention_heads=4,
    num_key_value_heads=4,
    vocab_size=320,
    intermediate_size=96,
    kv_lora_rank=40,
    qk_nope_head_dim=24,
    qk_rope_head_dim=8,
    v_head_dim=20,
    moe_intermediate_size=32,
    n_routed_experts=6,
    n_shared_experts=1,
    num_experts_per_tok=2,
    first_k_dense_replace=1,
)


@pytest.mark.parametrize(
    "cls,kw,dtype,attn,batch,seq",
    [
        ("DeepseekV2Config", dict(q_lora_rank=None), "float32", "eager", 2, 64),
        ("DeepseekV2Config", dict(q_lora_rank=None), "float32", "eager", 1, 128),
        ("DeepseekV2Config", dict(q_lora_rank=24, n_shared_experts=2), "bfloat16", "eager", 2, 64),
        ("DeepseekV3Config", dict(q_lora_rank=24, n_group=2, topk_group=1), "bfloat16", "eager", 1, 128),
        # CPU SDPA takes its fused kernel only when V and Q/K heads are equally wide (else it falls back to the math
        # path, which keeps the s^2 scores): v_head_dim = qk_nope + qk_rope here.
        ("DeepseekV2Config", dict(q_lora_rank=24, v_head_dim=32), "bfloat16", "sdpa", 2, 64),
        ("DeepseekV2Config", dict(q_lora_rank=None, v_head_dim=32), "float32", "sdpa", 1, 128),
    ],
)
def test_mla_and_deepseek_moe_activations_match_saved_tensors(cls, kw, dtype, attn, batch, seq):
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    from tests import activation_probe as P

    torch.manual_seed(0)
    cfg = getattr(transformers, cls)(**{**TINY, **kw})
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation=attn, dtype=getattr(torch, dtype)).train()
    shape = shape_from_hf_config(cfg.to_dict())
    assert shape.is_mla and shape.first_dense_layers == 1
    measured = P.measure(model, P.inputs_for(shape, batch, seq)).total
    B = 4 if dtype == "float32" else 2
    predicted = activation_bytes(shape, batch, seq, bytes_per_value=B, mask_bytes=B, flash_attention=attn == "sdpa")
    assert measured / predicted.total == pytest.approx(1, abs=0.02), (measured, predicted.total)


def test_mla_terms_scale_with_the_latent_not_with_head_dim():
    """Doubling kv_lora_rank grows exactly the latent terms (kv_a norm, kv_b input)."""
    base = get_model_shape("deepseek-v2-lite")
    wide = base.model_copy(update={"kv_lora_rank": 1024})
    a = activation_bytes(base, 1, 1024, flash_attention=True).terms
    b = activation_bytes(wide, 1, 1024, flash_attention=True).terms
    changed = {k for k in a if a[k] != b[k]}
    assert changed == {"attn_kv_a_norm", "attn_kv_b_input"}
    assert b["attn_kv_b_input"] == 2 * a["attn_kv_b_input"] == 2 * 2 * 1024 * 512


# ------------------------------------------------------------------ the memory form and refusals


def test_memory_estimate_for_the_presets():
    for name in ("deepseek-v2-lite", "qwen2-57b-a14b"):
        est = estimate_memory(dict(model=name, seq_len=1024, precision="bf16-mixed", zero_stage=3, world_size=8))
        assert est.num_params == count_params(get_model_shape(name))
        assert any("active per token" in a for a in est.assumptions_en)
        assert any("激活" in a for a in est.assumptions_zh)
        assert est.activations and est.activations > 0


@pytest.mark.parametrize(
    "update,field",
    [
        (dict(finetune="lora"), "finetune"),
        (dict(finetune="qlora"), "finetune"),
        (dict(precision="amp-bf16"), "precision"),
    ],
)
def test_unmodelled_mla_setups_are_refused_in_both_languages(update, field):
    with pytest.raises(CalculatorError) as err:
        estimate_memory(dict(model="deepseek-v2-lite", seq_len=512, **update))
    assert err.value.field == field
    assert "not modelled" in err.value.message("en") or "not measured" in err.value.message("en")
    assert "建模" in err.value.message("zh") or "实测" in err.value.message("zh")


def test_lora_on_mla_activations_is_refused():
    with pytest.raises(CalculatorError) as err:
        activation_bytes(get_model_shape("deepseek-v2-lite"), 1, 128, trainable_linears={"q_proj"})
    assert "latent" in err.value.message("en") and "潜在" in err.value.message("zh")


@pytest.mark.parametrize(
    "update,word",
    [
        (dict(moe_layer_freq=2), "moe_layer_freq"),
        (dict(mlp_bias=True), "mlp_bias"),
        (dict(first_k_dense_replace=99), "first_k_dense_replace"),
        (dict(kv_lora_rank=0), "positive"),
        (dict(n_routed_experts=None), "n_routed_experts"),
    ],
)
def test_deepseek_configs_that_cannot_be_read_are_refused(update, word):
    cfg = {**MOE_PRESET_CONFIGS["deepseek-v2-lite"][1], **update}
    with pytest.raises(CalculatorError) as err:
        shape_from_hf_config(cfg)
    en, zh = err.value.message("en"), err.value.message("zh")
    assert word in en and zh != en


def test_missing_mla_key_names_the_key():
    cfg = {k: v for k, v in MOE_PRESET_CONFIGS["deepseek-v2-lite"][1].items() if k != "qk_rope_head_dim"}
    with pytest.raises(CalculatorError) as err:
        shape_from_hf_config(cfg)
    assert "qk_rope_head_dim" in err.value.message("en") and "qk_rope_head_dim" in err.value.message("zh")
