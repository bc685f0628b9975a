"""config.json readers: every architecture's parameter count equals a real (tiny, random) transformers model's.

Each case builds the model from its config class (no downloads) and compares ``count_params`` of the
shape read from ``config.to_dict()`` with ``sum(p.numel())``. Full-size configs (the keys as on the Hub)
are checked against the model cards' totals, and MoE against total *and* active parameters.
"""

from __future__ import annotations

import pytest

from calculators import CalculatorError, estimate_memory
from calculators.presets import MOE_PRESET_CONFIGS, active_params, count_params, shape_from_hf_config

SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, vocab_size=320)


def _tiny(cls_name: str, **kw):
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    cfg = getattr(transformers, cls_name)(**kw)
    model = AutoModelForCausalLM.from_config(cfg)
    return cfg.to_dict(), sum(p.numel() for p in model.parameters())


CASES = {
    "bloom": ("BloomConfig", dict(hidden_size=64, n_layer=2, n_head=4, vocab_size=320)),
    "falcon-7b-style": (
        "FalconConfig",
        dict(SMALL, multi_query=True, parallel_attn=True, new_decoder_architecture=False),
    ),
    "falcon-40b-style": ("FalconConfig", dict(SMALL, new_decoder_architecture=True, num_kv_heads=2)),
    "gpt-neox": ("GPTNeoXConfig", dict(SMALL, intermediate_size=256)),
    "mixtral": (
        "MixtralConfig",
        dict(SMALL, num_key_value_heads=2, intermediate_size=96, num_local_experts=4, num_experts_per_tok=2),
    ),
    "qwen2-moe": (
        "Qwen2MoeConfig",
        dict(
            SMALL,
            num_key_value_heads=2,
            intermediate_size=96,
            moe_intermediate_size=32,
            shared_expert_intermediate_size=96,
            num_experts=6,
            num_experts_per_tok=2,
        ),
    ),
    "qwen3-moe": (
        "Qwen3MoeConfig",
        dict(
            SMALL,
            num_key_value_heads=2,
            head_dim=16,
            intermediate_size=96,
            moe_intermediate_size=32,
            num_experts=6,
            num_experts_per_tok=2,
        ),
    ),
    "gemma2": ("Gemma2Config", dict(SMALL, num_key_value_heads=2, head_dim=32, intermediate_size=96)),
    "gemma3-text": ("Gemma3TextConfig", dict(SMALL, num_key_value_heads=2, head_dim=32, intermediate_size=96)),
    "phi3": ("Phi3Config", dict(SMALL, num_key_value_heads=2, intermediate_size=96, pad_token_id=0)),
    "phi": ("PhiConfig", dict(SMALL, intermediate_size=96)),
    "qwen3": ("Qwen3Config", dict(SMALL, num_key_value_heads=2, head_dim=32, intermediate_size=96)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_count_equals_the_real_model(case):
    cls, kw = CASES[case]
    cfg, real = _tiny(cls, **kw)
    assert count_params(shape_from_hf_config(cfg)) == real


# Full-size config.json keys (Hugging Face Hub, main branch; the ones the MoE presets are built from,
# calculators.presets.MOE_PRESET_CONFIGS) and the model cards' totals.
MIXTRAL_8X7B = MOE_PRESET_CONFIGS["mixtral-8x7b"][1]  # mistralai/Mixtral-8x7B-v0.1
QWEN15_MOE = MOE_PRESET_CONFIGS["qwen1.5-moe-a2.7b"][1]  # Qwen/Qwen1.5-MoE-A2.7B


@pytest.mark.parametrize("cfg,total,active", [(MIXTRAL_8X7B, 46.7e9, 12.9e9), (QWEN15_MOE, 14.3e9, 2.7e9)])
def test_moe_total_and_active(cfg, total, active):
    shape = shape_from_hf_config(cfg)
    assert count_params(shape) == pytest.approx(total, rel=0.01)
    assert active_params(shape) == pytest.approx(active, rel=0.01)
    est = estimate_memory(dict(hf_config=cfg, seq_len=512))
    assert est.num_params == count_params(shape)  # every expert is stored and trained
    assert any("active" in a for a in est.assumptions_en)


def test_gemma2_defaults_when_the_key_is_missing():
    """google/gemma-2-9b's config.json sets no tie_word_embeddings: Gemma2Config's default (tied) applies."""
    cfg = {
        "model_type": "gemma2",
        "hidden_size": 3584,
        "num_hidden_layers": 42,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 256,
        "intermediate_size": 14336,
        "vocab_size": 256000,
    }
    assert count_params(shape_from_hf_config(cfg)) == pytest.approx(9.24e9, rel=0.005)


def test_gemma3_multimodal_reads_the_text_model_and_says_so():
    cfg = {
        "model_type": "gemma3",
        "text_config": {
            "model_type": "gemma3_text",
            "hidden_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 32,
            "intermediate_size": 96,
            "vocab_size": 320,
        },
    }
    shape = shape_from_hf_config(cfg)
    assert "vision tower not counted" in shape.name and shape.norms_per_layer == 4


@pytest.mark.parametrize(
    "cfg,reason",
    [
        (
            {
                "model_type": "deepseek_v2",
                "hidden_size": 2048,
                "num_hidden_layers": 27,
                "num_attention_heads": 16,
                "intermediate_size": 10944,
                "vocab_size": 102400,
                "n_routed_experts": 64,
                "moe_intermediate_size": 1408,
                "num_experts_per_tok": 6,
                "kv_lora_rank": 512,
                "qk_nope_head_dim": 128,
                "qk_rope_head_dim": 64,
                "v_head_dim": 128,
                "moe_layer_freq": 2,
            },
            "moe_layer_freq",
        ),
        (
            {
                "model_type": "mamba",
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "intermediate_size": 96,
                "vocab_size": 320,
            },
            "unknown model_type",
        ),
        (
            {
                "model_type": "llama",
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "intermediate_size": 96,
                "vocab_size": 320,
                "num_local_experts": 8,
            },
            "mixture-of-experts",
        ),
    ],
)
def test_never_a_silent_misread(cfg, reason):
    with pytest.raises(CalculatorError) as err:
        shape_from_hf_config(cfg)
    assert reason in err.value.message("en") and err.value.message("zh") != err.value.message("en")


# ------------------------------------------------------------------ MoE activations, measured


@pytest.mark.parametrize(
    "cls,kw,dtype",
    [
        ("MixtralConfig", dict(num_local_experts=4, num_experts_per_tok=2), "float32"),
        ("MixtralConfig", dict(num_local_experts=8, num_experts_per_tok=4), "float32"),
        ("MixtralConfig", dict(num_local_experts=8, num_experts_per_tok=2), "bfloat16"),
        (
            "Qwen2MoeConfig",
            dict(num_experts=6, num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=96),
            "float32",
        ),
    ],
)
def test_moe_activations_match_saved_tensors(cls, kw, dtype):
    """Bytes autograd saves (tests/activation_probe.py) on a tiny MoE vs activation_bytes, within 3 %."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    from calculators.activations import activation_bytes
    from tests import activation_probe as P

    torch.manual_seed(0)
    cfg = getattr(transformers, cls)(**SMALL, num_key_value_heads=2, intermediate_size=96, **kw)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="eager", dtype=getattr(torch, dtype)).train()
    shape = shape_from_hf_config(cfg.to_dict())
    measured = P.measure(model, P.inputs_for(shape, 2, 64)).total
    B = 4 if dtype == "float32" else 2
    predicted = activation_bytes(shape, 2, 64, bytes_per_value=B, mask_bytes=B).total
    assert measured / predicted == pytest.approx(1, abs=0.03), (measured, predicted)
