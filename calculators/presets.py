"""Model shapes and GPU capacities the calculators know by name.

Shapes are copied from each model's public ``config.json`` on the Hugging Face
Hub; parameter counts are *derived* from the shape (see ``count_params``) and
tested against the published totals, so a typo in a preset fails a test.
``shape_from_hf_config`` reads a user's own ``config.json``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .errors import CalculatorError
from .vision import VisionTower, vision_params


class ModelShape(BaseModel):
    """The architecture facts memory depends on.

    ``mlp="gated"`` is SwiGLU/GeGLU (three matrices, LLaMA-style);
    ``"plain"`` is the two-matrix GPT/BERT MLP.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "custom"
    architecture: Literal["decoder", "encoder", "encoder-decoder"] = "decoder"
    # Upper bounds are far beyond any real model; they keep absurd configs from overflowing the arithmetic.
    hidden_size: int = Field(gt=0, le=1_000_000)
    num_layers: int = Field(gt=0, le=100_000, description="Encoder layers for encoder-decoder models.")
    num_decoder_layers: int = Field(0, ge=0, le=100_000, description="Only for encoder-decoder models.")
    num_attention_heads: int = Field(gt=0, le=100_000)
    num_key_value_heads: int | None = Field(None, gt=0, le=100_000)
    head_dim: int | None = Field(None, gt=0, le=1_000_000)
    intermediate_size: int = Field(gt=0, le=10_000_000)
    vocab_size: int = Field(gt=0, le=100_000_000)
    mlp: Literal["gated", "plain"] = "gated"
    norm: Literal["rmsnorm", "layernorm"] = "rmsnorm"
    linear_bias: bool = Field(False, description="Every linear layer has a bias (GPT-2, BERT).")
    qkv_bias: bool = Field(False, description="Only the Q/K/V projections have a bias (Qwen2, ChatGLM).")
    tie_word_embeddings: bool = False
    learned_positions: int = Field(0, ge=0, description="Rows of a learned position table (GPT-2, BERT).")
    token_type_vocab: int = Field(0, ge=0)
    pooler: bool = False
    relative_attention_buckets: int = Field(0, ge=0, description="T5 relative position bias buckets.")
    norms_per_layer: int = Field(
        2,
        ge=1,
        le=8,
        description=(
            "Norms per (non-cross-attention) block: 2 usually, 4 in Gemma 2/3 (pre/post attention and MLP), "
            "1 in Falcon-7B's parallel block."
        ),
    )
    qk_norm: bool = Field(
        False, description="Per-head RMSNorm on queries and keys (Qwen3, Gemma 3): 2·head_dim params."
    )
    embedding_norm: bool = Field(False, description="A LayerNorm right after the token embedding (BLOOM).")
    lm_head_bias: bool = Field(False, description="The LM head has a bias (Phi-1/1.5/2).")
    # Mixture of experts (Mixtral, Qwen-MoE): every block's MLP is `num_experts` gated experts of
    # `moe_intermediate_size` (Mixtral: intermediate_size), a router h×E, and optionally one shared expert.
    num_experts: int = Field(0, ge=0, le=100_000)
    experts_per_token: int = Field(0, ge=0, le=100_000)
    moe_intermediate_size: int | None = Field(None, gt=0, le=10_000_000)
    shared_expert_intermediate_size: int = Field(0, ge=0, le=10_000_000)
    shared_expert_gate: bool = Field(False, description="Qwen2-MoE's sigmoid gate (h→1) on the shared expert.")
    first_dense_layers: int = Field(
        0,
        ge=0,
        le=100_000,
        description="DeepSeek's first_k_dense_replace: the first blocks of a MoE keep a dense MLP of intermediate_size.",
    )
    moe_router_fp32: bool = Field(
        False,
        description="DeepSeek's router computes in fp32 (fp32 copies of its input and weight at 16 bits, fp32 routing "
        "weights); the shared experts read the MoE input itself.",
    )
    # Multi-head latent attention (DeepSeek-V2/V3, kv_lora_rank > 0): Q from h (q_lora_rank 0) or through a rank-q_lora
    # bottleneck with an RMSNorm; K/V from one compressed latent of kv_lora_rank (RMSNorm) plus a shared rotary key of
    # qk_rope_head_dim, decompressed per head to qk_nope_head_dim keys and v_head_dim values.
    q_lora_rank: int = Field(0, ge=0, le=10_000_000, description="0: a plain q_proj (DeepSeek-V2-Lite).")
    kv_lora_rank: int = Field(0, ge=0, le=10_000_000, description="> 0: multi-head latent attention.")
    qk_nope_head_dim: int = Field(0, ge=0, le=1_000_000)
    qk_rope_head_dim: int = Field(0, ge=0, le=1_000_000)
    v_head_dim: int = Field(0, ge=0, le=1_000_000)
    # Vision-language models (Qwen2-VL, LLaVA, InternVL): the fields above are the language model; the vision encoder
    # and projector are here (calculators/vision.py) and count_params includes them.
    vision: VisionTower | None = None

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def is_mla(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2/V3): Q/K/V shapes follow the low-rank fields, not head_dim."""
        return self.kv_lora_rank > 0

    @property
    def moe_layers(self) -> int:
        """Blocks whose MLP is the mixture of experts (all of them unless ``first_dense_layers``)."""
        return self.num_layers - self.first_dense_layers if self.is_moe else 0

    @property
    def expert_intermediate_size(self) -> int:
        return self.moe_intermediate_size or self.intermediate_size

    @property
    def kv_heads(self) -> int:
        return self.num_key_value_heads or self.num_attention_heads

    @property
    def dim_per_head(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads

    @property
    def total_layers(self) -> int:
        return self.num_layers + self.num_decoder_layers


def _linear(n_in: int, n_out: int, bias: bool) -> int:
    return n_in * n_out + (n_out if bias else 0)


def _norm(shape: ModelShape) -> int:
    return shape.hidden_size * (2 if shape.norm == "layernorm" else 1)


def mla_attention_params(shape: ModelShape) -> int:
    """Multi-head latent attention (transformers ``DeepseekV2Attention`` / ``DeepseekV3Attention``): q_proj or
    q_a_proj + RMSNorm + q_b_proj, kv_a_proj_with_mqa + RMSNorm, kv_b_proj, o_proj (``qkv_bias``: the
    ``attention_bias`` on q_a_proj, kv_a_proj_with_mqa and o_proj)."""
    h, a, qr, kvr = shape.hidden_size, shape.num_attention_heads, shape.q_lora_rank, shape.kv_lora_rank
    qk, b = shape.qk_nope_head_dim + shape.qk_rope_head_dim, shape.qkv_bias or shape.linear_bias
    q = _linear(h, a * qk, False) if not qr else _linear(h, qr, b) + qr + _linear(qr, a * qk, False)
    kv = (
        _linear(h, kvr + shape.qk_rope_head_dim, b)
        + kvr
        + _linear(kvr, a * (shape.qk_nope_head_dim + shape.v_head_dim), False)
    )
    return q + kv + _linear(a * shape.v_head_dim, h, b)


def attention_params(shape: ModelShape) -> int:
    """Q, K, V and output projections of one attention block."""
    if shape.is_mla:
        return mla_attention_params(shape)
    h, inner, kv_inner = (
        shape.hidden_size,
        shape.num_attention_heads * shape.dim_per_head,
        shape.kv_heads * shape.dim_per_head,
    )
    qkv_bias = shape.linear_bias or shape.qkv_bias
    return _linear(h, inner, qkv_bias) + 2 * _linear(h, kv_inner, qkv_bias) + _linear(inner, h, shape.linear_bias)


def _dense_mlp(h: int, i: int, b: bool, gated: bool) -> int:
    return (2 * _linear(h, i, b) + _linear(i, h, b)) if gated else (_linear(h, i, b) + _linear(i, h, b))


def mlp_params(shape: ModelShape, active: bool = False, dense: bool = False) -> int:
    """One block's MLP; for a mixture of experts all experts (``active=False``) or the ``experts_per_token``
    a token runs through (``active=True``), plus the router and the shared expert either way. ``dense``: one of a
    MoE's ``first_dense_layers`` (a plain gated MLP of ``intermediate_size``)."""
    h, b, gated = shape.hidden_size, shape.linear_bias, shape.mlp == "gated"
    if not shape.is_moe or dense:
        return _dense_mlp(h, shape.intermediate_size, b, gated)
    experts = shape.experts_per_token if active else shape.num_experts
    n = experts * _dense_mlp(h, shape.expert_intermediate_size, b, gated) + h * shape.num_experts  # + router
    if shape.shared_expert_intermediate_size:
        n += _dense_mlp(h, shape.shared_expert_intermediate_size, b, gated)
    if shape.shared_expert_gate:
        n += h
    return n


def layer_params(shape: ModelShape, cross_attention: bool = False, active: bool = False, dense: bool = False) -> int:
    """Parameters of one transformer block (a decoder block of T5 adds cross-attention; ``dense``: a MoE's
    leading dense block)."""
    blocks = 2 if cross_attention else 1
    norms = (3 if cross_attention else shape.norms_per_layer) * _norm(shape)
    if shape.qk_norm:
        norms += 2 * shape.dim_per_head
    return blocks * attention_params(shape) + mlp_params(shape, active, dense) + norms


def block_params(shape: ModelShape, active: bool = False) -> int:
    """All transformer blocks together (a MoE's leading dense blocks counted as dense): the model minus its
    embeddings, LM head and final norms."""
    dense = shape.first_dense_layers if shape.is_moe else 0
    n = (shape.num_layers - dense) * layer_params(shape, active=active)
    n += dense * layer_params(shape, active=active, dense=True)
    return n + shape.num_decoder_layers * layer_params(shape, cross_attention=True, active=active)


def block_linear_weights(shape: ModelShape) -> int:
    """The weight matrices of the blocks' Linear layers, without their biases and the norms: what bitsandbytes
    quantises when transformers loads a model in 8 or 4 bits (``replace_with_bnb_linear`` swaps every nn.Linear
    but the LM head; biases, norms and embeddings stay 16-bit)."""
    bare = shape.model_copy(update={"linear_bias": False, "qkv_bias": False})
    norms = shape.norms_per_layer * _norm(shape) + (2 * shape.dim_per_head if shape.qk_norm else 0)
    return block_params(bare) - shape.total_layers * norms


def embedding_params(shape: ModelShape) -> int:
    """Token/position tables, the untied LM head, final norms, pooler and relative biases."""
    h = shape.hidden_size
    n = shape.vocab_size * h + shape.learned_positions * h + shape.token_type_vocab * h
    if not shape.tie_word_embeddings:
        n += shape.vocab_size * h
    stacks = 2 if shape.architecture == "encoder-decoder" else 1
    n += stacks * _norm(shape)  # final norm of each stack (BERT's is the embedding LayerNorm)
    n += stacks * shape.relative_attention_buckets * shape.num_attention_heads
    if shape.pooler:
        n += _linear(h, h, True)
    if shape.embedding_norm:
        n += _norm(shape)
    if shape.lm_head_bias:
        n += shape.vocab_size
    return n


def _vision(shape: ModelShape) -> int:
    return vision_params(shape.vision) if shape.vision is not None else 0


def count_params(shape: ModelShape) -> int:
    """Exact parameter count of the architecture described by ``shape`` (all experts of a MoE; a VL model's vision
    encoder and projector)."""
    return block_params(shape) + embedding_params(shape) + _vision(shape)


def active_params(shape: ModelShape) -> int:
    """Parameters one token runs through: ``count_params`` for a dense model, top-k experts for a MoE."""
    return block_params(shape, active=True) + embedding_params(shape) + _vision(shape)


def _llama(name: str, h: int, layers: int, heads: int, kv: int, inter: int, vocab: int, **kw: Any) -> ModelShape:
    return ModelShape(
        name=name,
        hidden_size=h,
        num_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        intermediate_size=inter,
        vocab_size=vocab,
        **kw,
    )


def _gpt2(name: str, h: int, layers: int, heads: int) -> ModelShape:
    return ModelShape(
        name=name,
        hidden_size=h,
        num_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * h,
        vocab_size=50257,
        mlp="plain",
        norm="layernorm",
        linear_bias=True,
        tie_word_embeddings=True,
        learned_positions=1024,
    )


def _bert(name: str, h: int, layers: int, heads: int) -> ModelShape:
    return ModelShape(
        name=name,
        architecture="encoder",
        hidden_size=h,
        num_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * h,
        vocab_size=30522,
        mlp="plain",
        norm="layernorm",
        linear_bias=True,
        tie_word_embeddings=True,
        learned_positions=512,
        token_type_vocab=2,
        pooler=True,
    )


def _t5(name: str, h: int, layers: int, heads: int, d_ff: int, head_dim: int = 64) -> ModelShape:
    """T5 v1.0 (t5-small … t5-3b): as many decoder as encoder layers, ReLU MLP, 32 relative position buckets, tied
    embeddings; heads 64 wide except t5-3b's 128 (its config.json d_kv)."""
    return ModelShape(
        name=name,
        architecture="encoder-decoder",
        hidden_size=h,
        num_layers=layers,
        num_decoder_layers=layers,
        num_attention_heads=heads,
        head_dim=head_dim,
        intermediate_size=d_ff,
        vocab_size=32128,
        mlp="plain",
        tie_word_embeddings=True,
        relative_attention_buckets=32,
    )


MODEL_PRESETS: dict[str, ModelShape] = {
    s.name: s
    for s in [
        _llama("llama-2-7b", 4096, 32, 32, 32, 11008, 32000),
        _llama("llama-2-13b", 5120, 40, 40, 40, 13824, 32000),
        _llama("llama-2-70b", 8192, 80, 64, 8, 28672, 32000),
        _llama("llama-3-8b", 4096, 32, 32, 8, 14336, 128256),
        _llama("mistral-7b", 4096, 32, 32, 8, 14336, 32000),
        _llama("qwen2.5-7b", 3584, 28, 28, 4, 18944, 152064, qkv_bias=True),
        _llama("chatglm3-6b", 4096, 28, 32, 2, 13696, 65024, qkv_bias=True),
        _gpt2("gpt2", 768, 12, 12),
        _gpt2("gpt2-medium", 1024, 24, 16),
        _gpt2("gpt2-large", 1280, 36, 20),
        _gpt2("gpt2-xl", 1600, 48, 25),
        _bert("bert-base", 768, 12, 12),
        _bert("bert-large", 1024, 24, 16),
        # T5 v1.0 small / base / large (google-t5/t5-small etc., config.json: d_model, num_layers, num_heads, d_ff;
        # d_kv 64, vocab 32128, tied embeddings), as people name them when they fine-tune one.
        _t5("t5-small", 512, 6, 8, 2048),
        _t5("t5-base", 768, 12, 12, 3072),
        _t5("t5-large", 1024, 24, 16, 4096),
        _t5("t5-3b", 1024, 24, 32, 16384, head_dim=128),
        # --- The models people ask about. Each shape follows its config.json on the Hugging Face Hub
        # (https://huggingface.co/<repo>/blob/main/config.json, repo in _PRESET_SOURCES below); the
        # parameter count derived from it is tested against the model card's total (PUBLISHED_PARAMS).
        # Qwen2.5: q/k/v biases; 0.5B-3B tie the embeddings.
        _llama("qwen2.5-0.5b", 896, 24, 14, 2, 4864, 151936, qkv_bias=True, tie_word_embeddings=True),
        _llama("qwen2.5-1.5b", 1536, 28, 12, 2, 8960, 151936, qkv_bias=True, tie_word_embeddings=True),
        _llama("qwen2.5-3b", 2048, 36, 16, 2, 11008, 151936, qkv_bias=True, tie_word_embeddings=True),
        _llama("qwen2.5-14b", 5120, 48, 40, 8, 13824, 152064, qkv_bias=True),
        _llama("qwen2.5-32b", 5120, 64, 40, 8, 27648, 152064, qkv_bias=True),
        _llama("qwen2.5-72b", 8192, 80, 64, 8, 29568, 152064, qkv_bias=True),
        # Qwen3 dense: head_dim 128 whatever the hidden size, no biases (q/k RMSNorm: 256 params/layer, ignored).
        _llama("qwen3-0.6b", 1024, 28, 16, 8, 3072, 151936, head_dim=128, tie_word_embeddings=True),
        _llama("qwen3-1.7b", 2048, 28, 16, 8, 6144, 151936, head_dim=128, tie_word_embeddings=True),
        _llama("qwen3-4b", 2560, 36, 32, 8, 9728, 151936, head_dim=128, tie_word_embeddings=True),
        _llama("qwen3-8b", 4096, 36, 32, 8, 12288, 151936, head_dim=128),
        _llama("qwen3-14b", 5120, 40, 40, 8, 17408, 151936, head_dim=128),
        _llama("qwen3-32b", 5120, 64, 64, 8, 25600, 151936, head_dim=128),
        # Llama 3.1 / 3.2 / 3.3 (3.1-8B = llama-3-8b's shape; 3.3-70B = 3.1-70B's shape).
        _llama("llama-3.2-1b", 2048, 16, 32, 8, 8192, 128256, tie_word_embeddings=True),
        _llama("llama-3.2-3b", 3072, 28, 24, 8, 8192, 128256, tie_word_embeddings=True),
        _llama("llama-3.1-70b", 8192, 80, 64, 8, 28672, 128256),
        _llama("llama-3.1-405b", 16384, 126, 128, 8, 53248, 128256),
        # Gemma 2 / 3 (text-only 1B): GeGLU MLP, head_dim 256 (27B: 128), tied embeddings. Gemma 2 has four
        # RMSNorms per layer (2·h extra params/layer, < 0.01 %, ignored).
        _llama("gemma-2-2b", 2304, 26, 8, 4, 9216, 256000, head_dim=256, tie_word_embeddings=True),
        _llama("gemma-2-9b", 3584, 42, 16, 8, 14336, 256000, head_dim=256, tie_word_embeddings=True),
        _llama("gemma-2-27b", 4608, 46, 32, 16, 36864, 256000, head_dim=128, tie_word_embeddings=True),
        _llama("gemma-3-1b", 1152, 26, 4, 1, 6912, 262144, head_dim=256, tie_word_embeddings=True),
        # Gemma 1 (and 1.1, the same shapes): the Gemma report's table 1 (arXiv 2403.08295: d_model 2048 / 3072, 18 /
        # 28 layers, GeGLU 32768 / 49152 = two matrices of 16384 / 24576, 8 / 16 heads, 1 / 16 KV heads, head size
        # 256); transformers' GemmaConfig defaults are gemma-7b's. The 256k vocabulary makes the logits large.
        _llama("gemma-2b", 2048, 18, 8, 1, 16384, 256000, head_dim=256, tie_word_embeddings=True),
        _llama("gemma-7b", 3072, 28, 16, 16, 24576, 256000, head_dim=256, tie_word_embeddings=True),
        # Gemma 3 4B/12B/27B ship with a SigLIP vision tower (about 0.4 B parameters); these presets are the text
        # model only (their config.json's text_config), so the name says "-text" wherever the estimate shows it.
        *(
            _llama(
                name,
                h,
                layers,
                heads,
                kv,
                inter,
                262144,
                head_dim=hd,
                tie_word_embeddings=True,
                norms_per_layer=4,
                qk_norm=True,
            )
            for name, h, layers, heads, kv, inter, hd in (
                ("gemma-3-4b-text", 2560, 34, 8, 4, 10240, 256),
                ("gemma-3-12b-text", 3840, 48, 16, 8, 15360, 256),
                ("gemma-3-27b-text", 5376, 62, 32, 16, 21504, 128),
            )
        ),
        # Phi-3 (fused qkv_proj / gate_up_proj: same parameter count as separate matrices).
        _llama("phi-3-mini", 3072, 32, 32, 32, 8192, 32064),
        _llama("phi-3-medium", 5120, 40, 40, 10, 17920, 32064),
        # Baichuan2 (fused W_pack q/k/v; 13B uses ALiBi, no RoPE), ChatGLM2 (= ChatGLM3-6B's shape), GLM-4, Yi.
        _llama("baichuan2-7b", 4096, 32, 32, 32, 11008, 125696),
        _llama("baichuan2-13b", 5120, 40, 40, 40, 13696, 125696),
        _llama("chatglm2-6b", 4096, 28, 32, 2, 13696, 65024, qkv_bias=True),
        _llama("glm-4-9b", 4096, 40, 32, 2, 13696, 151552, qkv_bias=True),
        _llama("yi-6b", 4096, 32, 32, 4, 11008, 64000),
        _llama("yi-34b", 7168, 60, 56, 8, 20480, 64000),
        # --- Stop 50: the older Chinese-community models users still name (dev set: "Qwen-14b-chat", "Qwen1.5-32B",
        # "LLaMA-33B", "internlm2-chat-20b", "Baichuan 13B"), each from its config.json (repo in _PRESET_SOURCES).
        # Qwen (v1, remote code QWenLMHeadModel): one fused c_attn with a bias, no other bias (config no_bias), untied
        # head; config.json's intermediate_size is twice each MLP matrix's width (modeling_qwen.py QWenMLP:
        # w1 / w2 = nn.Linear(hidden, intermediate_size // 2)), so 22016 / 27392 / 49152 are 11008 / 13696 / 24576.
        _llama("qwen-7b", 4096, 32, 32, 32, 11008, 151936, qkv_bias=True),
        _llama("qwen-14b", 5120, 40, 40, 40, 13696, 152064, qkv_bias=True),
        _llama("qwen-72b", 8192, 80, 64, 64, 24576, 152064, qkv_bias=True),
        # Qwen1.5 (transformers' Qwen2 architecture: q/k/v biases); 32B and 110B use grouped-query attention.
        _llama("qwen1.5-4b", 2560, 40, 20, 20, 6912, 151936, qkv_bias=True),
        _llama("qwen1.5-7b", 4096, 32, 32, 32, 11008, 151936, qkv_bias=True),
        _llama("qwen1.5-14b", 5120, 40, 40, 40, 13696, 152064, qkv_bias=True),
        _llama("qwen1.5-32b", 5120, 64, 40, 8, 27392, 152064, qkv_bias=True),
        _llama("qwen1.5-72b", 8192, 80, 64, 64, 24576, 152064, qkv_bias=True),
        _llama("qwen1.5-110b", 8192, 80, 64, 8, 49152, 152064, qkv_bias=True),
        # InternLM2 (fused wqkv, config bias false), LLaMA-1 33B / 65B (7B and 13B share Llama 2's shapes), Baichuan-1
        # (fused W_pack without bias; 7B RoPE, 13B ALiBi).
        _llama("internlm2-7b", 4096, 32, 32, 8, 14336, 92544),
        _llama("internlm2-20b", 6144, 48, 48, 8, 16384, 92544),
        _llama("llama-33b", 6656, 60, 52, 52, 17920, 32000),
        _llama("llama-65b", 8192, 80, 64, 64, 22016, 32000),
        _llama("baichuan-7b", 4096, 32, 32, 32, 11008, 64000),
        _llama("baichuan-13b", 5120, 40, 40, 40, 13696, 64000),
    ]
}

#: Hugging Face repositories whose config.json each added preset follows (https://huggingface.co/<repo>, main).
#: The Hub was not reachable when they were written: shapes were cross-checked against public copies of these
#: files, and each derived parameter count is tested against the model card's total (PUBLISHED_PARAMS).
_PRESET_SOURCES: dict[str, str] = {
    "qwen2.5-0.5b": "Qwen/Qwen2.5-0.5B",
    "qwen2.5-1.5b": "Qwen/Qwen2.5-1.5B",
    "qwen2.5-3b": "Qwen/Qwen2.5-3B",
    "qwen2.5-14b": "Qwen/Qwen2.5-14B",
    "qwen2.5-32b": "Qwen/Qwen2.5-32B",
    "qwen2.5-72b": "Qwen/Qwen2.5-72B",
    "qwen3-0.6b": "Qwen/Qwen3-0.6B",
    "qwen3-1.7b": "Qwen/Qwen3-1.7B",
    "qwen3-4b": "Qwen/Qwen3-4B",
    "qwen3-8b": "Qwen/Qwen3-8B",
    "qwen3-14b": "Qwen/Qwen3-14B",
    "qwen3-32b": "Qwen/Qwen3-32B",
    "llama-3.2-1b": "meta-llama/Llama-3.2-1B",
    "llama-3.2-3b": "meta-llama/Llama-3.2-3B",
    "llama-3.1-70b": "meta-llama/Llama-3.1-70B",
    "llama-3.1-405b": "meta-llama/Llama-3.1-405B",
    "gemma-2-2b": "google/gemma-2-2b",
    "gemma-2-9b": "google/gemma-2-9b",
    "gemma-2-27b": "google/gemma-2-27b",
    "gemma-3-1b": "google/gemma-3-1b-pt",
    "gemma-2b": "google/gemma-2b (the Gemma report, arXiv 2403.08295, table 1)",
    "gemma-7b": "google/gemma-7b (the Gemma report, table 1; transformers' GemmaConfig defaults)",
    "gemma-3-4b-text": "google/gemma-3-4b-pt (text_config)",
    "gemma-3-12b-text": "google/gemma-3-12b-pt (text_config)",
    "gemma-3-27b-text": "google/gemma-3-27b-pt (text_config)",
    "phi-3-mini": "microsoft/Phi-3-mini-4k-instruct",
    "phi-3-medium": "microsoft/Phi-3-medium-4k-instruct",
    "baichuan2-7b": "baichuan-inc/Baichuan2-7B-Base",
    "baichuan2-13b": "baichuan-inc/Baichuan2-13B-Base",
    "chatglm2-6b": "THUDM/chatglm2-6b",
    "glm-4-9b": "THUDM/glm-4-9b",
    "yi-6b": "01-ai/Yi-6B",
    "yi-34b": "01-ai/Yi-34B",
    # Stop 50. The Hub was not reachable: each shape was read from a public copy of the config.json whose
    # _name_or_path or snapshot path names the repository below (or the organisation's own page of a -Chat twin).
    "qwen-7b": "Qwen/Qwen-7B",
    "qwen-14b": "Qwen/Qwen-14B",
    "qwen-72b": "Qwen/Qwen-72B",
    "qwen1.5-4b": "Qwen/Qwen1.5-4B (Qwen1.5-4B-Chat's config.json: the same shape)",
    "qwen1.5-7b": "Qwen/Qwen1.5-7B",
    "qwen1.5-14b": "Qwen/Qwen1.5-14B",
    "qwen1.5-32b": "Qwen/Qwen1.5-32B",
    "qwen1.5-72b": "Qwen/Qwen1.5-72B",
    "qwen1.5-110b": "Qwen/Qwen1.5-110B",
    "internlm2-7b": "internlm/internlm2-7b (internlm2-chat-7b: the same shape)",
    "internlm2-20b": "internlm/internlm2-20b",
    "llama-33b": "huggyllama/llama-30b",
    "llama-65b": "huggyllama/llama-65b",
    "baichuan-7b": "baichuan-inc/Baichuan-7B",
    "baichuan-13b": "baichuan-inc/Baichuan-13B-Base",
    "gpt2-large": "openai-community/gpt2-large (n_embd 1280, n_layer 36, n_head 20)",
    "gpt2-xl": "openai-community/gpt2-xl (n_embd 1600, n_layer 48, n_head 25)",
}

#: Names people ask about that no dense preset can stand for: the reason, in en and zh.
NOT_A_DENSE_PRESET: dict[str, tuple[str, str]] = {
    name: (
        f"{name} is a mixture-of-experts model ({note}); a dense preset would silently misread it. "
        "Paste its config.json (hf_config) instead.",
        f"{name} 是混合专家（MoE）模型（{note}）；用稠密预设会被悄悄读错。请改为粘贴它的 config.json（hf_config）。",
    )
    # Empty since DeepSeek-V2-Lite and Qwen2-57B-A14B became presets (MOE_PRESET_CONFIGS); kept for the next
    # name that no preset can stand for.
    for name, note in dict[str, str]().items()
}

# Published totals (model cards / papers), used by the tests to check the shapes above.
PUBLISHED_PARAMS: dict[str, float] = {
    "llama-2-7b": 6.74e9,
    "llama-2-13b": 13.0e9,
    "llama-2-70b": 69.0e9,
    "llama-3-8b": 8.03e9,
    "mistral-7b": 7.24e9,
    "qwen2.5-7b": 7.61e9,
    "chatglm3-6b": 6.24e9,
    "gpt2": 124e6,
    "gpt2-medium": 355e6,
    # the GPT-2 model cards (openai-community/gpt2-large, gpt2-xl): "774M parameters", "1.5B parameters"
    "gpt2-large": 774e6,
    "gpt2-xl": 1.56e9,
    "bert-base": 110e6,
    "bert-large": 340e6,
    "t5-3b": 2.85e9,
    # the T5 model cards (google-t5/t5-small, t5-base): "60 million", "220 million parameters"; t5-large's card says
    # "770 million", but transformers' T5ForConditionalGeneration with its config.json counts 737.7M (the test builds it)
    "t5-small": 60e6,
    "t5-base": 220e6,
    "t5-large": 737.7e6,
    # Model cards ("Number of Parameters") of the repositories in _PRESET_SOURCES.
    "qwen2.5-0.5b": 0.49e9,
    "qwen2.5-1.5b": 1.54e9,
    "qwen2.5-3b": 3.09e9,
    "qwen2.5-14b": 14.7e9,
    "qwen2.5-32b": 32.5e9,
    "qwen2.5-72b": 72.7e9,
    "qwen3-0.6b": 0.6e9,
    "qwen3-1.7b": 1.7e9,
    "qwen3-4b": 4.0e9,
    "qwen3-8b": 8.2e9,
    "qwen3-14b": 14.8e9,
    "qwen3-32b": 32.8e9,
    "llama-3.2-1b": 1.24e9,
    "llama-3.2-3b": 3.21e9,
    "llama-3.1-70b": 70.6e9,
    "llama-3.1-405b": 405.9e9,
    "gemma-2-2b": 2.61e9,
    "gemma-2-9b": 9.24e9,
    "gemma-2-27b": 27.2e9,
    "gemma-3-1b": 1.0e9,
    # the Gemma report's table 2: embedding + non-embedding parameters (its vocabulary counts 256128 rows, the
    # released config.json 256000)
    "gemma-2b": 524_550_144 + 1_981_884_416,
    "gemma-7b": 786_825_216 + 7_751_248_896,
    # Text-only counts of keras-hub's Gemma 3 presets (keras_hub/src/models/gemma3/gemma3_presets.py,
    # "gemma3_4b_text" / "gemma3_12b_text" / "gemma3_27b_text" metadata "params").
    "gemma-3-4b-text": 3_880_099_328,
    "gemma-3-12b-text": 11_765_788_416,
    "gemma-3-27b-text": 27_009_002_240,
    "phi-3-mini": 3.82e9,
    "phi-3-medium": 14.0e9,
    "baichuan2-7b": 7.51e9,
    "baichuan2-13b": 13.9e9,
    "chatglm2-6b": 6.24e9,
    "glm-4-9b": 9.4e9,
    "yi-6b": 6.06e9,
    "yi-34b": 34.4e9,
    # Stop 50 presets. Exact: Qwen-7B and Qwen-72B's model.safetensors.index.json total_size (15,442,649,088 and
    # 144,575,840,256 bytes in bf16, halved), which Qwen1.5-7B / -72B share as the same shapes; Baichuan-13B's README
    # "Model Details" table (7,000,559,616 and 13,264,901,120). Open LLM Leaderboard request files ("params"):
    # Qwen1.5-32B 32.512, Qwen1.5-110B 111.21, internlm2-chat-7b 7.738 (billions). LLaMA paper (arXiv 2302.13971)
    # table 2: 32.5B and 65.2B. Nominal sizes only (the names and the Qwen technical report, arXiv 2309.16609, table
    # 1): Qwen-14B / Qwen1.5-14B 14B (the shape gives 14.17B), Qwen1.5-4B 4B (3.95B), InternLM2-20B 20B (19.86B).
    "qwen-7b": 7_721_324_544,
    "qwen-14b": 14.0e9,
    "qwen-72b": 72_287_920_128,
    "qwen1.5-4b": 4.0e9,
    "qwen1.5-7b": 7_721_324_544,
    "qwen1.5-14b": 14.0e9,
    "qwen1.5-32b": 32.512e9,
    "qwen1.5-72b": 72_287_920_128,
    "qwen1.5-110b": 111.21e9,
    "internlm2-7b": 7.738e9,
    "internlm2-20b": 20.0e9,
    "llama-33b": 32.5e9,
    "llama-65b": 65.2e9,
    "baichuan-7b": 7_000_559_616,
    "baichuan-13b": 13_264_901_120,
    # Mixture-of-experts presets (MOE_PRESET_CONFIGS): model cards' totals.
    "mixtral-8x7b": 46.7e9,
    "mixtral-8x22b": 141e9,
    "qwen1.5-moe-a2.7b": 14.3e9,
    "qwen3-30b-a3b": 30.5e9,
    "qwen3-235b-a22b": 235e9,
    # DeepSeek-V2 paper (arXiv 2405.04434, appendix B): "DeepSeek-V2-Lite has 15.7B total parameters";
    # Qwen2 technical report (arXiv 2407.10671, table 1) and the Qwen2-57B-A14B model card: 57B total.
    "deepseek-v2-lite": 15.7e9,
    "qwen2-57b-a14b": 57e9,
    # DeepSeek-V2 paper abstract: 236B total, 21B activated; DeepSeek-V3 technical report (arXiv 2412.19437)
    # abstract: 671B total, 37B activated.
    "deepseek-v2": 236e9,
    "deepseek-v3": 671e9,
}

#: Published *activated* parameters per token of the MoE presets. DeepSeek-V2 paper: "2.4B are activated for each
#: token" (V2-Lite); Qwen2-57B-A14B: 14B (the name and model card). ``active_params`` counts the token-embedding
#: table too (a lookup, no matmul); DeepSeek's 2.4B matches the count without it (2.45B; with it 2.66B, the figure
#: a user reached by hand in https://github.com/deepseek-ai/DeepSeek-V2/issues/73).
PUBLISHED_ACTIVE_PARAMS: dict[str, float] = {
    "deepseek-v2-lite": 2.4e9,
    "qwen2-57b-a14b": 14e9,
    "deepseek-v2": 21e9,
    "deepseek-v3": 37e9,
}

_ALIASES = {
    "llama2-7b": "llama-2-7b",
    "llama-7b": "llama-2-7b",
    "llama2-13b": "llama-2-13b",
    "llama2-70b": "llama-2-70b",
    "llama3-8b": "llama-3-8b",
    "llama-3.1-8b": "llama-3-8b",
    "meta-llama-3-8b": "llama-3-8b",
    "qwen2.5-7b-instruct": "qwen2.5-7b",
    # Gemma 1.1 has Gemma 1's shapes; "Gemma2-9B" is Gemma 2 written without its hyphen
    "gemma-1.1-2b": "gemma-2b",
    "gemma-1.1-7b": "gemma-7b",
    "gemma2-2b": "gemma-2-2b",
    "gemma2-9b": "gemma-2-9b",
    "gemma2-27b": "gemma-2-27b",
    # Qwen2 and Qwen2.5 share these shapes (the published config.json: hidden, layers, heads, KV heads, MLP, vocab);
    # Qwen2 has no 3B/14B/32B, and its MoE (57B-A14B) is its own preset.
    "qwen2-0.5b": "qwen2.5-0.5b",
    "qwen2-1.5b": "qwen2.5-1.5b",
    "qwen2-7b": "qwen2.5-7b",
    "qwen2-72b": "qwen2.5-72b",
    "mistral-7b-v0.1": "mistral-7b",
    "chatglm3": "chatglm3-6b",
    "gpt2-small": "gpt2",
    "bert-base-uncased": "bert-base",
    "bert-large-uncased": "bert-large",
    "t5-3b": "t5-3b",
    "t5-small": "t5-small",
    "t5-base": "t5-base",
    "t5-large": "t5-large",
    "google-t5/t5-small": "t5-small",
    "google-t5/t5-base": "t5-base",
    "google-t5/t5-large": "t5-large",
    "llama-3.1-8b-instruct": "llama-3-8b",
    "meta-llama-3.1-8b": "llama-3-8b",
    "llama3.1-8b": "llama-3-8b",
    "llama-3.1-70b-instruct": "llama-3.1-70b",
    "llama3.1-70b": "llama-3.1-70b",
    "llama-3-70b": "llama-3.1-70b",
    "llama-3.3-70b": "llama-3.1-70b",
    "llama-3.3-70b-instruct": "llama-3.1-70b",
    "llama3.3-70b": "llama-3.1-70b",
    "llama-3.1-405b-instruct": "llama-3.1-405b",
    "llama-3.2-1b-instruct": "llama-3.2-1b",
    "llama-3.2-3b-instruct": "llama-3.2-3b",
    "qwen2.5-72b-instruct": "qwen2.5-72b",
    "qwen2.5-32b-instruct": "qwen2.5-32b",
    "qwen2.5-14b-instruct": "qwen2.5-14b",
    "qwen2.5-3b-instruct": "qwen2.5-3b",
    "qwen2.5-1.5b-instruct": "qwen2.5-1.5b",
    "qwen2.5-0.5b-instruct": "qwen2.5-0.5b",
    "gemma-2-2b-it": "gemma-2-2b",
    "gemma-2-9b-it": "gemma-2-9b",
    "gemma-2-27b-it": "gemma-2-27b",
    "gemma-3-1b-it": "gemma-3-1b",
    "gemma-3-1b-pt": "gemma-3-1b",
    **{
        f"gemma-3-{size}{suffix}": f"gemma-3-{size}-text"
        for size in ("4b", "12b", "27b")
        for suffix in ("", "-it", "-pt")
    },
    "phi-3-mini-4k-instruct": "phi-3-mini",
    "phi-3-mini-128k-instruct": "phi-3-mini",
    "phi-3-medium-4k-instruct": "phi-3-medium",
    "phi-3-medium-128k-instruct": "phi-3-medium",
    "baichuan2-7b-chat": "baichuan2-7b",
    "baichuan2-7b-base": "baichuan2-7b",
    "baichuan2-13b-chat": "baichuan2-13b",
    "baichuan2-13b-base": "baichuan2-13b",
    "glm-4-9b-chat": "glm-4-9b",
    "glm4-9b": "glm-4-9b",
    "chatglm2": "chatglm2-6b",
    "yi-6b-chat": "yi-6b",
    "yi-34b-chat": "yi-34b",
    "mistral-7b-instruct-v0.2": "mistral-7b",
    # LLaMA-1: 7B and 13B have Llama 2's shapes; "30B" is the 33B of the paper (huggyllama/llama-30b).
    "llama-13b": "llama-2-13b",
    "llama-30b": "llama-33b",
    "llama1-7b": "llama-2-7b",
    "llama1-13b": "llama-2-13b",
    "llama1-33b": "llama-33b",
    "llama1-65b": "llama-65b",
    "qwen14b": "qwen-14b",
    **{f"qwen-1.5-{size}": f"qwen1.5-{size}" for size in ("4b", "7b", "14b", "32b", "72b", "110b")},
    **{f"qwen1.5-{size}-chat": f"qwen1.5-{size}" for size in ("4b", "7b", "14b", "32b", "72b", "110b")},
    **{f"internlm2-chat-{size}{sft}": f"internlm2-{size}" for size in ("7b", "20b") for sft in ("", "-sft")},
    "baichuan-13b-base": "baichuan-13b",
    "baichuan-13b-chat": "baichuan-13b",
}


class GPU(BaseModel):
    """A GPU's memory and whether it computes in bf16 (compute capability 8.0+)."""

    model_config = ConfigDict(frozen=True)
    name: str
    memory_gib: float
    bf16: bool


# Nominal capacities from NVIDIA's data sheets (binary GiB as nvidia-smi reports them, rounded).
GPU_PRESETS: dict[str, GPU] = {
    g.name: g
    for g in [
        GPU(name="rtx-3090", memory_gib=24, bf16=True),
        GPU(name="rtx-4090", memory_gib=24, bf16=True),
        GPU(name="a10", memory_gib=24, bf16=True),
        GPU(name="t4", memory_gib=16, bf16=False),
        GPU(name="v100-16gb", memory_gib=16, bf16=False),
        GPU(name="v100-32gb", memory_gib=32, bf16=False),
        GPU(name="a100-40gb", memory_gib=40, bf16=True),
        GPU(name="a100-80gb", memory_gib=80, bf16=True),
        GPU(name="h100-80gb", memory_gib=80, bf16=True),
        GPU(name="h200", memory_gib=141, bf16=True),
        GPU(name="l40s", memory_gib=48, bf16=True),
        # Added with their data sheets (memory as sold, bf16 = Ampere or newer / CDNA3 / Ascend 910B):
        # A800 80GB (NVIDIA A800 data sheet: A100 export variant, same 80 GB HBM2e), H800 80GB (H100
        # export variant), H20 96GB HBM3 (NVIDIA H20 product brief), RTX 4090 D 24GB GDDR6X and RTX 4080
        # 16GB (nvidia.com GeForce specs), RTX A6000 48GB (data sheet), L4 24GB and L20 48GB (data
        # sheets), RTX 2080 Ti 11GB (Turing, compute capability 7.5: no bf16), AMD Instinct MI300X 192GB
        # HBM3 (amd.com product page, bf16 supported), Huawei Ascend 910B 64GB HBM2e (hiascend.com; bf16
        # supported; the 910B4 variant has 32 GB).
        GPU(name="a800-80gb", memory_gib=80, bf16=True),
        GPU(name="h800-80gb", memory_gib=80, bf16=True),
        GPU(name="h20", memory_gib=96, bf16=True),
        GPU(name="rtx-4090d", memory_gib=24, bf16=True),
        GPU(name="rtx-4080", memory_gib=16, bf16=True),
        GPU(name="rtx-a6000", memory_gib=48, bf16=True),
        GPU(name="l4", memory_gib=24, bf16=True),
        GPU(name="l20", memory_gib=48, bf16=True),
        GPU(name="rtx-2080ti", memory_gib=11, bf16=False),
        GPU(name="mi300x", memory_gib=192, bf16=True),
        GPU(name="ascend-910b", memory_gib=64, bf16=True),
        # NVIDIA A40 48GB GDDR6, Ampere GA102 (compute capability 8.6: bf16) — NVIDIA A40 GPU Accelerator
        # Product Brief PB-09976-001_v04 (Jan 2021); NVIDIA TITAN Xp 12GB GDDR5X (12288 MB), Pascal GP102 (compute
        # capability 6.1: no bf16) — nvidia.com/en-us/titan/titan-xp and techgage.com/news/nvidia-reveals-new-top-end-titan-xp
        GPU(name="a40", memory_gib=48, bf16=True),
        GPU(name="titan-xp", memory_gib=12, bf16=False),
        # NVIDIA RTX 6000 Ada Generation 48GB GDDR6 ECC, Ada Lovelace AD102 (compute capability 8.9: bf16) — NVIDIA RTX
        # 6000 Ada Generation data sheet (nvidia.com/en-us/design-visualization/rtx-6000); users write "A6000 Ada"
        GPU(name="rtx-6000-ada", memory_gib=48, bf16=True),
        # The cards users name that had no preset (dev set, stop 44), memory as NVIDIA's product pages / data sheets
        # give it; bf16 = Ampere (compute capability 8.x) or newer. Ampere: RTX A5000 24GB and RTX A4000 16GB GDDR6
        # (NVIDIA RTX A5000 / A4000 data sheets), GeForce RTX 3060 12GB, 3060 Ti 8GB, 3070 8GB, 3080 10GB, 3080 Ti
        # 12GB (nvidia.com GeForce RTX 30 series specs). Ada: RTX 4070 12GB (RTX 40 series specs). Blackwell: RTX 5090
        # 32GB GDDR7 (RTX 50 series specs). Turing (7.5, no bf16): RTX 2070 / 2070 SUPER 8GB, RTX 2080 8GB, TITAN RTX
        # 24GB. Volta (7.0): TITAN V 12GB HBM2. Pascal (6.x): GTX 1080 8GB, GTX 1080 Ti 11GB, Tesla P100 16GB HBM2
        # (the SXM2 and the larger PCIe model; a 12GB PCIe model exists), Tesla P40 24GB. Kepler: Tesla K80, 24GB
        # per board as two GK210 GPUs of 12GB each — nvidia-smi and PyTorch see two 12GB devices.
        GPU(name="rtx-a5000", memory_gib=24, bf16=True),
        GPU(name="rtx-a4000", memory_gib=16, bf16=True),
        GPU(name="rtx-3060", memory_gib=12, bf16=True),
        GPU(name="rtx-3060ti", memory_gib=8, bf16=True),
        GPU(name="rtx-3070", memory_gib=8, bf16=True),
        GPU(name="rtx-3080", memory_gib=10, bf16=True),
        GPU(name="rtx-3080ti", memory_gib=12, bf16=True),
        GPU(name="rtx-4070", memory_gib=12, bf16=True),
        GPU(name="rtx-5090", memory_gib=32, bf16=True),
        GPU(name="rtx-2070", memory_gib=8, bf16=False),
        GPU(name="rtx-2080", memory_gib=8, bf16=False),
        GPU(name="titan-rtx", memory_gib=24, bf16=False),
        # Quadro RTX 8000 48GB and Quadro RTX 6000 24GB GDDR6, Turing TU102 (compute capability 7.5: no bf16) — NVIDIA
        # Quadro RTX 8000 / RTX 6000 data sheets (openvla #103: "Current CUDA Device does not support bfloat16" on it)
        GPU(name="quadro-rtx-8000", memory_gib=48, bf16=False),
        GPU(name="quadro-rtx-6000", memory_gib=24, bf16=False),
        GPU(name="titan-v", memory_gib=12, bf16=False),
        GPU(name="gtx-1080", memory_gib=8, bf16=False),
        GPU(name="gtx-1080ti", memory_gib=11, bf16=False),
        GPU(name="p100", memory_gib=16, bf16=False),
        GPU(name="p40", memory_gib=24, bf16=False),
        GPU(name="k80", memory_gib=12, bf16=False),
        # Older and smaller consumer cards users train on (dev set, stop 59), memory as NVIDIA's spec pages and the
        # launch reviews give it (techpowerup.com, guru3d.com "NVIDIA GeForce 16 Series" table): no bf16 before
        # Ampere. Maxwell: GTX 970 4GB (3.5 GB of it fast), GTX TITAN X 12GB. Pascal: GTX 1050 Ti 4GB, GTX 1060 6GB
        # (a 3GB model exists), GTX 1070 8GB. Turing without tensor cores: GTX 1650 4GB, GTX 1660 / 1660 Ti / 1660
        # SUPER 6GB. Turing: RTX 2060 6GB (a 12GB model came in 2021), RTX 2060 SUPER 8GB.
        GPU(name="gtx-970", memory_gib=4, bf16=False),
        GPU(name="gtx-titan-x", memory_gib=12, bf16=False),
        GPU(name="gtx-1050ti", memory_gib=4, bf16=False),
        GPU(name="gtx-1060", memory_gib=6, bf16=False),
        GPU(name="gtx-1070", memory_gib=8, bf16=False),
        GPU(name="gtx-1650", memory_gib=4, bf16=False),
        GPU(name="gtx-1660", memory_gib=6, bf16=False),
        GPU(name="rtx-2060", memory_gib=6, bf16=False),
        GPU(name="rtx-2060-super", memory_gib=8, bf16=False),
    ]
}

#: Preset ids whose display name is not just the id's parts upper-cased.
GPU_DISPLAY = {
    "rtx-2080ti": "RTX 2080 Ti",
    "rtx-4090d": "RTX 4090 D",
    "rtx-a6000": "RTX A6000",
    "ascend-910b": "Ascend 910B",
    "mi300x": "MI300X",
    "titan-xp": "TITAN Xp",
    "rtx-6000-ada": "RTX 6000 Ada",
    "rtx-3060ti": "RTX 3060 Ti",
    "rtx-3080ti": "RTX 3080 Ti",
    "gtx-1080ti": "GTX 1080 Ti",
    "gtx-970": "GTX 970",
    "gtx-titan-x": "GTX TITAN X",
    "gtx-1050ti": "GTX 1050 Ti",
    "gtx-1060": "GTX 1060",
    "gtx-1070": "GTX 1070",
    "gtx-1650": "GTX 1650",
    "gtx-1660": "GTX 1660",
    "rtx-2060": "RTX 2060",
    "rtx-2060-super": "RTX 2060 SUPER",
    "titan-rtx": "TITAN RTX",
    "quadro-rtx-8000": "Quadro RTX 8000",
    "quadro-rtx-6000": "Quadro RTX 6000",
    "titan-v": "TITAN V",
    "p100": "Tesla P100",
    "p40": "Tesla P40",
    "k80": "Tesla K80",
}


def gpu_display(preset: str) -> str:
    """'a100-80gb' → 'A100 80GB', 'rtx-3090' → 'RTX 3090': how people write the card, not our preset id."""
    return GPU_DISPLAY.get(preset) or " ".join(p.upper() for p in preset.split("-"))


_GPU_ALIASES = {
    "3090": "rtx-3090",
    "rtx3090": "rtx-3090",
    "4090": "rtx-4090",
    "rtx4090": "rtx-4090",
    "v100": "v100-32gb",
    "a100": "a100-80gb",
    "a100-40g": "a100-40gb",
    "a100-80g": "a100-80gb",
    "h100": "h100-80gb",
    "a800": "a800-80gb",
    "h800": "h800-80gb",
    "a10g": "a10",
    "a800-80g": "a800-80gb",
    "h800-80g": "h800-80gb",
    "h20-96gb": "h20",
    "4090d": "rtx-4090d",
    "rtx-4090-d": "rtx-4090d",
    "rtx4090d": "rtx-4090d",
    "4080": "rtx-4080",
    "rtx4080": "rtx-4080",
    "a6000": "rtx-a6000",
    "a40-48gb": "a40",
    "nvidia-a40": "a40",
    "titanxp": "titan-xp",
    "titan-xp-12gb": "titan-xp",
    "rtxa6000": "rtx-a6000",
    "rtx6000ada": "rtx-6000-ada",
    "rtx-6000ada": "rtx-6000-ada",
    "6000-ada": "rtx-6000-ada",
    "a6000ada": "rtx-6000-ada",
    "a6000-ada": "rtx-6000-ada",
    "rtx-a6000-ada": "rtx-6000-ada",
    "rtx-a6000ada": "rtx-6000-ada",
    "l20-48gb": "l20",
    "l4-24gb": "l4",
    "2080ti": "rtx-2080ti",
    "2080-ti": "rtx-2080ti",
    "rtx-2080-ti": "rtx-2080ti",
    "rtx2080ti": "rtx-2080ti",
    "mi300": "mi300x",
    "instinct-mi300x": "mi300x",
    "910b": "ascend-910b",
    "ascend910b": "ascend-910b",
    "atlas-910b": "ascend-910b",
    # stop 44's presets as people write them (get_gpu lower-cases and turns spaces into "-")
    "a5000": "rtx-a5000",
    "rtxa5000": "rtx-a5000",
    "a4000": "rtx-a4000",
    "rtxa4000": "rtx-a4000",
    "3060": "rtx-3060",
    "rtx3060": "rtx-3060",
    "3060ti": "rtx-3060ti",
    "3060-ti": "rtx-3060ti",
    "rtx-3060-ti": "rtx-3060ti",
    "3070": "rtx-3070",
    "rtx3070": "rtx-3070",
    "3070ti": "rtx-3070",
    "3070-ti": "rtx-3070",
    "rtx-3070-ti": "rtx-3070",
    "3080": "rtx-3080",
    "rtx3080": "rtx-3080",
    "3080ti": "rtx-3080ti",
    "3080-ti": "rtx-3080ti",
    "rtx-3080-ti": "rtx-3080ti",
    "4070": "rtx-4070",
    "rtx4070": "rtx-4070",
    "5090": "rtx-5090",
    "rtx5090": "rtx-5090",
    "2070": "rtx-2070",
    "rtx2070": "rtx-2070",
    "2070-super": "rtx-2070",
    "rtx-2070-super": "rtx-2070",
    "2080": "rtx-2080",
    "rtx2080": "rtx-2080",
    "titanrtx": "titan-rtx",
    "rtx8000": "quadro-rtx-8000",
    "rtx-8000": "quadro-rtx-8000",
    "quadrortx8000": "quadro-rtx-8000",
    "quadro-rtx8000": "quadro-rtx-8000",
    "quadro-rtx6000": "quadro-rtx-6000",
    "quadrortx6000": "quadro-rtx-6000",
    "titanv": "titan-v",
    "1080": "gtx-1080",
    "gtx1080": "gtx-1080",
    "1080ti": "gtx-1080ti",
    "1080-ti": "gtx-1080ti",
    "gtx1080ti": "gtx-1080ti",
    "gtx-1080-ti": "gtx-1080ti",
    "tesla-p100": "p100",
    "tesla-p40": "p40",
    "tesla-k80": "k80",
}


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-").split("/")[-1]


def closest_names(key: str, names: list[str], n: int = 3) -> list[str]:
    """Up to ``n`` known names closest to ``key`` (difflib ratio), so an unknown name gets a suggestion."""
    import difflib

    return difflib.get_close_matches(key, names, n=n, cutoff=0.5)


def _suggestion(key: str, names: dict[str, Any], aliases: dict[str, str]) -> tuple[str, str]:
    close = closest_names(key, sorted(set(names) | set(aliases)))
    close = list(dict.fromkeys(aliases.get(c, c) for c in close))
    if not close:
        return "", ""
    shown = ", ".join(close)
    return f" Closest known: {shown}.", f" 最接近的已知名称：{shown}。"


#: Release suffixes a model id carries that do not change its shape ("-Instruct", "-chat", "-hf", "-v0.1"; Qwen3's
#: "-Thinking" and the release month of its 2507 updates, "Qwen3-30B-A3B-Thinking-2507", whose config.json has the
#: shape of the first release; Megatron-converted checkpoints' "-mcore").
_RELEASE_SUFFIX = re.compile(
    r"[-.](?:instruct|chat|base|hf|it|pt|thinking|mcore|2[3-6](?:0[1-9]|1[0-2])|v\d+(?:\.\d+)?)$"
)


def preset_for_name(name: str) -> str | None:
    """The preset a model name as people write it denotes ("Qwen2.5-14B-Instruct" → ``qwen2.5-14b``,
    "Mixtral 8x7B" → ``mixtral-8x7b``), or None when it denotes none.

    Exact after normalising case, separators, an organisation prefix and release suffixes, then the alias table:
    a name that is merely close ("qwen2.5-15b") is not a preset, because its shape is not known.
    """
    # "Meta-Llama-3-70B-Instruct", "Llama3-70B": the organisation word and the missing hyphen are spelling
    key = re.sub(r"^llama(\d)", r"llama-\1", re.sub(r"^meta-(?=llama)", "", _key(name)))
    # "Qwen2.5VL7B", "qwen3vl-8b": the VL segment between version and size, with or without its hyphens
    key = re.sub(r"(?<=[\d.])-?vl-?(?=\d)", "-vl-", key)
    while True:
        key = _ALIASES.get(key, key)
        if key in MODEL_PRESETS:
            return key
        shorter = _RELEASE_SUFFIX.sub("", key)
        if shorter == key:
            return None
        key = shorter


def get_model_shape(name: str) -> ModelShape:
    """A preset by name (case-insensitive, a few common aliases); CalculatorError if unknown.

    Mixture-of-experts presets (Mixtral, Qwen-MoE, DeepSeek-V2/V3) are MoE shapes; a name listed in
    ``NOT_A_DENSE_PRESET`` is refused with the reason, never answered with a dense shape; any other unknown
    name gets the closest known names.
    """
    key = _key(name)
    key = _ALIASES.get(key, key)
    if key not in MODEL_PRESETS:
        accepted = ", ".join(MODEL_PRESETS) + "; or num_params; or a Hugging Face config.json"
        moe = next((v for k, v in NOT_A_DENSE_PRESET.items() if key == k or key.startswith(k + "-")), None)
        if moe is not None:
            raise CalculatorError(
                "model", name, accepted, accepted.replace("; or", "；或"), reason_en=moe[0], reason_zh=moe[1]
            )
        hint_en, hint_zh = _suggestion(key, MODEL_PRESETS, _ALIASES)
        raise CalculatorError(
            "model",
            name,
            accepted,
            accepted.replace("; or", "；或"),
            reason_en=f"Unknown model preset {name!r}.{hint_en}",
            reason_zh=f"未知的模型预设 {name!r}。{hint_zh}",
        )
    return MODEL_PRESETS[key]


def get_gpu(name: str) -> GPU:
    """A GPU preset by name (``3090`` and ``RTX 3090`` work too); CalculatorError if unknown."""
    key = _key(name)
    key = _GPU_ALIASES.get(key, key)
    if key not in GPU_PRESETS:
        accepted = ", ".join(GPU_PRESETS) + "; or gpu_memory_gb"
        hint_en, hint_zh = _suggestion(key, GPU_PRESETS, _GPU_ALIASES)
        raise CalculatorError(
            "gpu",
            name,
            accepted,
            accepted.replace("; or", "；或"),
            reason_en=f"Unknown GPU {name!r}.{hint_en}",
            reason_zh=f"未知的 GPU {name!r}。{hint_zh}",
        )
    return GPU_PRESETS[key]


def _get(cfg: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        if cfg.get(k) is not None:
            return cfg[k]
    return default


#: A config.json is a few KiB; the largest public ones (with quantization maps) stay under 100 KiB.
MAX_HF_CONFIG_BYTES = 1_000_000


def _read_config_file(path: Path) -> dict[str, Any]:
    """A local config.json, for the Python API only (a ``pathlib.Path``, never a string from a user).

    Only regular files of at most :data:`MAX_HF_CONFIG_BYTES` are read, so a FIFO or
    ``/dev/urandom`` cannot hang or exhaust the process; errors name the problem, never the
    file's content.
    """
    if path.is_dir():
        path = path / "config.json"
    try:
        if not path.is_file():
            raise OSError("not a regular file")
        if path.stat().st_size > MAX_HF_CONFIG_BYTES:
            raise OSError(f"larger than {MAX_HF_CONFIG_BYTES:,} bytes")
        with path.open("rb") as fh:
            raw = fh.read(MAX_HF_CONFIG_BYTES + 1)
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError) as exc:
        reason = exc.strerror or str(exc) if isinstance(exc, OSError) else "not valid UTF-8 JSON"
        raise CalculatorError(
            "model_config",
            path.name[:80],
            "a readable config.json file",
            "可读取的 config.json 文件",
            reason_en=f"Cannot read the model config (model_config) file ({reason}).",
            reason_zh=f"无法读取模型配置文件（{reason}）。",
        ) from None
    if not isinstance(data, dict):
        raise CalculatorError("model_config", path.name[:80], "a JSON object", "JSON 对象")
    return data


#: model_type values read as LLaMA-style decoders (gated MLP, RMSNorm, no biases unless stated) and their
#: defaults that config.json files often leave out (transformers' config class defaults).
_LLAMA_STYLE: dict[str, dict[str, Any]] = {
    "": {},
    "llama": {},
    "mistral": {},
    "yi": {},
    "baichuan": {},
    "phi3": {},
    "qwen2": {"qkv_bias": True},
    "qwen3": {"qk_norm": True},
    "gemma": {"tie_word_embeddings": True},
    "gemma2": {"tie_word_embeddings": True, "norms_per_layer": 4},
    "gemma3_text": {"tie_word_embeddings": True, "norms_per_layer": 4, "qk_norm": True},
}
_MULTIMODAL_TEXT = {"gemma3": "gemma3_text"}
#: Architectures the calculators cannot express yet: refused with the reason instead of misread.
_UNSUPPORTED: dict[str, str] = {}
SUPPORTED_MODEL_TYPES = sorted(
    set(_LLAMA_STYLE) - {""}
    | {
        "gpt2",
        "t5",
        "bert",
        "roberta",
        "xlm-roberta",
        "chatglm",
        "bloom",
        "falcon",
        "gpt_neox",
        "phi",
        "mixtral",
        "qwen2_moe",
        "qwen3_moe",
        "gemma3",
        "deepseek_v2",
        "deepseek_v3",
    }
)


def _i(config: dict[str, Any], *keys: str, default: Any = None) -> int:
    value = _get(config, *keys, default=default)
    if value is None:
        raise KeyError(keys[0])
    return int(value)


def _shape_for(model_type: str, name: str, config: dict[str, Any]) -> ModelShape:
    """One architecture's config.json keys -> ModelShape; unknown architectures are refused, never guessed."""
    if model_type == "gpt2" or (not model_type and "n_embd" in config):
        h = int(config["n_embd"])
        return ModelShape(
            name=name,
            hidden_size=h,
            num_layers=int(config["n_layer"]),
            num_attention_heads=int(config["n_head"]),
            intermediate_size=int(config.get("n_inner") or 4 * h),
            vocab_size=int(config["vocab_size"]),
            mlp="plain",
            norm="layernorm",
            linear_bias=True,
            tie_word_embeddings=bool(config.get("tie_word_embeddings", True)),
            learned_positions=int(config.get("n_positions", 1024)),
        )
    if model_type == "t5" or (not model_type and "d_model" in config):
        gated = str(config.get("feed_forward_proj", "relu")).startswith("gated")
        return ModelShape(
            name=name,
            architecture="encoder-decoder",
            hidden_size=int(config["d_model"]),
            num_layers=int(config["num_layers"]),
            num_decoder_layers=int(config.get("num_decoder_layers") or config["num_layers"]),
            num_attention_heads=int(config["num_heads"]),
            head_dim=int(config["d_kv"]),
            intermediate_size=int(config["d_ff"]),
            vocab_size=int(config["vocab_size"]),
            mlp="gated" if gated else "plain",
            tie_word_embeddings=bool(config.get("tie_word_embeddings", True)),
            relative_attention_buckets=int(config.get("relative_attention_num_buckets", 32)),
        )
    if model_type in ("bert", "roberta", "xlm-roberta"):
        return ModelShape(
            name=name,
            architecture="encoder",
            hidden_size=int(config["hidden_size"]),
            num_layers=int(config["num_hidden_layers"]),
            num_attention_heads=int(config["num_attention_heads"]),
            intermediate_size=int(config["intermediate_size"]),
            vocab_size=int(config["vocab_size"]),
            mlp="plain",
            norm="layernorm",
            linear_bias=True,
            tie_word_embeddings=True,
            learned_positions=int(config.get("max_position_embeddings", 512)),
            token_type_vocab=int(config.get("type_vocab_size", 2)),
            pooler=True,
        )
    if model_type == "chatglm" or (not model_type and "multi_query_group_num" in config):
        return ModelShape(
            name=name,
            hidden_size=int(config["hidden_size"]),
            num_layers=int(config["num_layers"]),
            num_attention_heads=int(config["num_attention_heads"]),
            num_key_value_heads=int(config.get("multi_query_group_num") or config["num_attention_heads"]),
            intermediate_size=int(config["ffn_hidden_size"]),
            vocab_size=int(_get(config, "padded_vocab_size", "vocab_size")),
            qkv_bias=bool(config.get("add_qkv_bias", True)),
        )
    if model_type == "bloom":
        # BLOOM: fused QKV with biases, 4h GELU MLP with biases, LayerNorms, ALiBi (no position table),
        # a LayerNorm after the word embeddings, tied LM head (transformers BloomConfig / modeling_bloom).
        h = _i(config, "hidden_size", "n_embed")
        return ModelShape(
            name=name,
            hidden_size=h,
            num_layers=_i(config, "n_layer", "num_hidden_layers"),
            num_attention_heads=_i(config, "n_head", "num_attention_heads"),
            intermediate_size=4 * h,
            vocab_size=int(config["vocab_size"]),
            mlp="plain",
            norm="layernorm",
            linear_bias=True,
            tie_word_embeddings=bool(config.get("tie_word_embeddings", True)),
            embedding_norm=True,
        )
    if model_type in ("falcon", "refinedweb", "refinedwebmodel"):
        # Falcon (transformers FalconConfig defaults): new_decoder_architecture (40B/180B) uses num_kv_heads and
        # two LayerNorms per block; otherwise multi_query (7B) means one K/V head, and parallel_attn one norm.
        h = _i(config, "hidden_size", "n_embed")
        heads = _i(config, "num_attention_heads", "n_head")
        new_arch = bool(config.get("new_decoder_architecture", False))
        if new_arch:
            kv = _i(config, "num_kv_heads", default=heads)
            norms = int(config.get("num_ln_in_parallel_attn") or 2)
        else:
            kv = 1 if config.get("multi_query", True) else heads
            norms = 1 if config.get("parallel_attn", True) else 2
        return ModelShape(
            name=name,
            hidden_size=h,
            num_layers=_i(config, "num_hidden_layers", "n_layer"),
            num_attention_heads=heads,
            num_key_value_heads=kv,
            intermediate_size=_i(config, "ffn_hidden_size", default=4 * h),
            vocab_size=int(config["vocab_size"]),
            mlp="plain",
            norm="layernorm",
            linear_bias=bool(config.get("bias", False)),
            norms_per_layer=norms,
            tie_word_embeddings=bool(config.get("tie_word_embeddings", True)),
        )
    if model_type == "gpt_neox":
        # GPT-NeoX / Pythia: plain GELU MLP, LayerNorms, biases on every linear, rotary, untied embed_out.
        return ModelShape(
            name=name,
            hidden_size=int(config["hidden_size"]),
            num_layers=int(config["num_hidden_layers"]),
            num_attention_heads=int(config["num_attention_heads"]),
            intermediate_size=int(config["intermediate_size"]),
            vocab_size=int(config["vocab_size"]),
            mlp="plain",
            norm="layernorm",
            linear_bias=bool(config.get("attention_bias", True)),
            tie_word_embeddings=bool(config.get("tie_word_embeddings", False)),
        )
    if model_type == "phi":
        # Phi-1 / 1.5 / 2: one LayerNorm feeding attention and MLP in parallel, biases everywhere, a 2-matrix
        # GELU MLP, untied LM head with bias (transformers PhiConfig / modeling_phi). Activations are modelled as a
        # sequential block (a slight over-count: the parallel block shares one norm output).
        h = int(config["hidden_size"])
        heads = int(config["num_attention_heads"])
        return ModelShape(
            name=name,
            hidden_size=h,
            num_layers=int(config["num_hidden_layers"]),
            num_attention_heads=heads,
            num_key_value_heads=int(_get(config, "num_key_value_heads", default=heads)),
            intermediate_size=int(config["intermediate_size"]),
            vocab_size=int(config["vocab_size"]),
            mlp="plain",
            norm="layernorm",
            linear_bias=True,
            norms_per_layer=1,
            lm_head_bias=True,
            tie_word_embeddings=bool(config.get("tie_word_embeddings", False)),
        )
    if model_type in ("mixtral", "qwen2_moe", "qwen3_moe"):
        return _moe_shape(model_type, name, config)
    if model_type in _DEEPSEEK_DEFAULTS:
        return _deepseek_shape(model_type, name, config)
    if model_type in _UNSUPPORTED:
        raise CalculatorError(
            "model_config",
            model_type,
            _accepted_types()[0],
            _accepted_types()[1],
            reason_en=f"model_config: {_UNSUPPORTED[model_type]} cannot be expressed yet; reading it as a dense "
            "model would give wrong numbers. Give num_params instead.",
            reason_zh=f"暂不支持 {_UNSUPPORTED[model_type]}；按稠密模型读取会得出错误数字。请改用 num_params。",
        )
    if model_type not in _LLAMA_STYLE:
        raise CalculatorError(
            "model_config",
            model_type[:80],
            _accepted_types()[0],
            _accepted_types()[1],
            reason_en=f"model_config: unknown model_type {model_type[:80]!r}, not read as LLaMA-style, "
            "because a guess could be silently wrong.",
            reason_zh=f"未知的 model_type {model_type[:80]!r}：为避免悄悄读错，不按 LLaMA 结构猜测。",
        )
    if _get(config, "num_local_experts", "num_experts", "n_routed_experts") not in (None, 0, 1):
        raise CalculatorError(
            "model_config",
            "num_experts",
            _accepted_types()[0],
            _accepted_types()[1],
            reason_en="model_config: this config.json describes a mixture-of-experts model under a dense "
            "model_type; refusing rather than reading it as dense.",
            reason_zh="该 config.json 以稠密 model_type 描述了一个混合专家模型；拒绝按稠密模型读取。",
        )
    d = _LLAMA_STYLE[model_type]
    h = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    return ModelShape(
        name=name,
        hidden_size=h,
        num_layers=int(config["num_hidden_layers"]),
        num_attention_heads=heads,
        num_key_value_heads=int(_get(config, "num_key_value_heads", default=heads)),
        head_dim=_get(config, "head_dim"),
        intermediate_size=int(config["intermediate_size"]),
        vocab_size=int(config["vocab_size"]),
        qkv_bias=bool(config.get("attention_bias", False)) or d.get("qkv_bias", False),
        norms_per_layer=d.get("norms_per_layer", 2),
        qk_norm=d.get("qk_norm", False),
        tie_word_embeddings=bool(config.get("tie_word_embeddings", d.get("tie_word_embeddings", False))),
    )


def _moe_shape(model_type: str, name: str, config: dict[str, Any]) -> ModelShape:
    """Mixtral / Qwen2-MoE / Qwen3-MoE: total and active parameters both follow from the shape."""
    h = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    if model_type != "mixtral" and (config.get("mlp_only_layers") or int(config.get("decoder_sparse_step", 1)) != 1):
        raise CalculatorError(
            "model_config",
            "mlp_only_layers / decoder_sparse_step",
            "every block a MoE block (mlp_only_layers empty, decoder_sparse_step 1)",
            "每层都是 MoE 层（mlp_only_layers 为空、decoder_sparse_step 为 1）",
        )
    experts = _i(config, "num_local_experts", "num_experts")  # transformers 5 writes num_local_experts for Qwen3-MoE
    shared = int(config.get("shared_expert_intermediate_size") or 0) if model_type == "qwen2_moe" else 0
    return ModelShape(
        name=name,
        hidden_size=h,
        num_layers=int(config["num_hidden_layers"]),
        num_attention_heads=heads,
        num_key_value_heads=int(_get(config, "num_key_value_heads", default=heads)),
        head_dim=_get(config, "head_dim"),
        intermediate_size=int(config["intermediate_size"]),
        vocab_size=int(config["vocab_size"]),
        qkv_bias=model_type == "qwen2_moe" or bool(config.get("attention_bias", False)),
        qk_norm=model_type == "qwen3_moe",
        num_experts=experts,
        experts_per_token=_i(config, "num_experts_per_tok"),
        moe_intermediate_size=None if model_type == "mixtral" else _i(config, "moe_intermediate_size"),
        shared_expert_intermediate_size=shared,
        shared_expert_gate=shared > 0,
        tie_word_embeddings=bool(config.get("tie_word_embeddings", False)),
    )


#: transformers 5.23 DeepseekV2Config / DeepseekV3Config defaults for the keys a config.json may leave out.
_DEEPSEEK_DEFAULTS: dict[str, dict[str, Any]] = {
    "deepseek_v2": {"q_lora_rank": 1536, "first_k_dense_replace": 0, "n_shared_experts": 2, "n_routed_experts": 64},
    "deepseek_v3": {"q_lora_rank": 1536, "first_k_dense_replace": 3, "n_shared_experts": 1, "n_routed_experts": 256},
}


def _deepseek_refusal(
    key: str, value: Any, accepted_en: str, accepted_zh: str, why_en: str, why_zh: str
) -> CalculatorError:
    return CalculatorError(
        "model_config",
        f"{key}={value!r}"[:80],
        accepted_en,
        accepted_zh,
        reason_en=f"model_config: {key}={value!r} {why_en}"[:300],
        reason_zh=f"model_config：{key}={value!r} {why_zh}"[:300],
    )


def _deepseek_shape(model_type: str, name: str, config: dict[str, Any]) -> ModelShape:
    """DeepSeek-V2 / V3 (transformers ``DeepseekV2ForCausalLM`` / ``DeepseekV3ForCausalLM``).

    Multi-head latent attention (``q_lora_rank`` null = a plain q_proj, as in DeepSeek-V2-Lite), the first
    ``first_k_dense_replace`` blocks with a dense MLP of ``intermediate_size``, every later block a MoE of
    ``n_routed_experts`` experts of ``moe_intermediate_size`` (``num_experts_per_tok`` per token), a router
    h x E and ``n_shared_experts`` shared experts (one gated MLP of ``n_shared_experts * moe_intermediate_size``).
    ``n_group`` / ``topk_group`` / ``topk_method`` only choose experts (no parameters); V3's router bias
    ``e_score_correction_bias`` is a buffer (E floats per MoE block, not trained by the optimizer) and V3's
    multi-token-prediction layer (``num_nextn_predict_layers``) is not built by transformers, so neither is counted,
    as in ``model.parameters()``. ``moe_layer_freq`` other than 1 is refused: DeepSeek's own modelling code then
    alternates dense and MoE blocks while transformers ignores the key, so the count would depend on the library.
    """
    d = _DEEPSEEK_DEFAULTS[model_type]
    freq = config.get("moe_layer_freq", 1)
    if freq not in (1, None):
        raise _deepseek_refusal(
            "moe_layer_freq",
            freq,
            "moe_layer_freq 1 (every block after first_k_dense_replace is a MoE block)",
            "moe_layer_freq 为 1（first_k_dense_replace 之后每层都是 MoE 层）",
            "alternates dense and MoE blocks in DeepSeek's code but is ignored by transformers; the count would "
            "depend on the library, so it is not guessed.",
            "在 DeepSeek 自带代码里会让稠密层与 MoE 层交替，而 transformers 忽略该键；参数量取决于所用的库，因此不作猜测。",
        )
    if config.get("mlp_bias"):
        raise _deepseek_refusal(
            "mlp_bias",
            config["mlp_bias"],
            "mlp_bias false (as in every published DeepSeek config)",
            "mlp_bias 为 false（所有公开的 DeepSeek 配置都是如此）",
            "puts biases on the dense and shared MLPs but not on the experts; that mix is not modelled.",
            "只给稠密 MLP 和共享专家加偏置、不给路由专家加，这种组合尚未建模。",
        )
    if "n_routed_experts" in config and not config["n_routed_experts"]:
        raise _deepseek_refusal(
            "n_routed_experts",
            config["n_routed_experts"],
            "a positive number of routed experts",
            "正的路由专家数",
            "means no MoE in DeepSeek's own code, while transformers' DeepseekV2/V3 always builds one; not guessed.",
            "在 DeepSeek 自带代码里表示不用 MoE，而 transformers 的 DeepseekV2/V3 总会构建 MoE；因此不作猜测。",
        )
    layers = _i(config, "num_hidden_layers")
    first_dense = _i(config, "first_k_dense_replace", default=d["first_k_dense_replace"])
    if first_dense > layers:
        raise _deepseek_refusal(
            "first_k_dense_replace",
            first_dense,
            f"0 to num_hidden_layers ({layers})",
            f"0 到 num_hidden_layers（{layers}）",
            "is larger than the number of layers.",
            "大于层数。",
        )
    experts = _i(config, "n_routed_experts", "num_local_experts", default=d["n_routed_experts"])
    moe_inter = _i(config, "moe_intermediate_size")
    q_lora = config.get("q_lora_rank", d["q_lora_rank"])
    for key in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
        if int(_i(config, key)) <= 0:
            raise ValueError(f"{key} must be positive")
    return ModelShape(
        name=name,
        hidden_size=int(config["hidden_size"]),
        num_layers=layers,
        num_attention_heads=int(config["num_attention_heads"]),
        intermediate_size=int(config["intermediate_size"]),
        vocab_size=int(config["vocab_size"]),
        qkv_bias=bool(config.get("attention_bias", False)),
        tie_word_embeddings=bool(config.get("tie_word_embeddings", False)),
        num_experts=experts,
        experts_per_token=_i(config, "num_experts_per_tok"),
        moe_intermediate_size=moe_inter,
        shared_expert_intermediate_size=int(config.get("n_shared_experts", d["n_shared_experts"]) or 0) * moe_inter,
        first_dense_layers=first_dense,
        moe_router_fp32=True,
        q_lora_rank=int(q_lora or 0),
        kv_lora_rank=_i(config, "kv_lora_rank"),
        qk_nope_head_dim=_i(config, "qk_nope_head_dim"),
        qk_rope_head_dim=_i(config, "qk_rope_head_dim"),
        v_head_dim=_i(config, "v_head_dim"),
    )


def _accepted_types() -> tuple[str, str]:
    listed = ", ".join(SUPPORTED_MODEL_TYPES)
    return (
        f"a config.json with model_type one of {listed}; or num_params with hidden_size and num_layers",
        f"model_type 为以下之一的 config.json：{listed}；或 num_params 加 hidden_size 和 num_layers",
    )


def shape_from_hf_config(config: dict[str, Any] | str | Path) -> ModelShape:
    """Read a Hugging Face ``config.json`` into a ModelShape.

    ``config`` is the parsed dict or its JSON text. A ``pathlib.Path`` (Python API only)
    reads a local file; a *string* is never taken as a path, because strings arrive from
    HTTP clients and the browser, and reading server files for them would leak what exists
    and what it contains.

    Understands LLaMA-family keys (llama, mistral, qwen2, gemma, ...), GPT-2
    (``n_embd``/``n_layer``), BERT, T5 and ChatGLM. Anything it cannot read
    raises CalculatorError naming the missing key.
    """
    if isinstance(config, Path):
        config = _read_config_file(config)
    elif isinstance(config, str):
        text = config
        if len(text) > MAX_HF_CONFIG_BYTES:
            raise CalculatorError(
                "model_config",
                f"{len(text):,} characters",
                f"config.json text of at most {MAX_HF_CONFIG_BYTES:,} characters",
                f"不超过 {MAX_HF_CONFIG_BYTES:,} 个字符的 config.json 文本",
            )
        if not text.lstrip().startswith("{"):
            raise CalculatorError(
                "model_config",
                text[:80],
                "the config.json content as a JSON object ({...})",
                "config.json 的 JSON 内容（{...}）",
                reason_en="The model config (model_config / hf_config) must be the content of config.json; file paths are not read.",
                reason_zh="模型配置（model_config / hf_config）须为 config.json 的内容；不会读取文件路径。",
            )
        try:
            config = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise CalculatorError(
                "model_config",
                text[:80],
                "valid JSON text of a config.json",
                "合法的 config.json JSON 文本",
                reason_en=f"The model config (model_config) is not valid JSON ({str(exc)[:120]}).",
                reason_zh=f"模型配置不是合法的 JSON（{str(exc)[:120]}）。",
            ) from None
    if not isinstance(config, dict):
        raise CalculatorError("model_config", config, "a dict parsed from config.json", "从 config.json 解析的字典")
    model_type = str(config.get("model_type", "")).lower()
    name = str(config.get("_name_or_path") or model_type or "custom")[:80]
    if model_type in _MULTIMODAL_TEXT and isinstance(config.get("text_config"), dict):
        # Gemma 3 4B/12B/27B: the language model sits in text_config; the SigLIP vision tower is not counted.
        config = {**config["text_config"], "_name_or_path": name}
        name += " (text model only; vision tower not counted)"
        model_type = _MULTIMODAL_TEXT[model_type]
    try:
        return _shape_for(model_type, name, config)
    except CalculatorError:
        raise
    except KeyError as exc:
        raise CalculatorError(
            "model_config",
            f"missing key {exc.args[0]!r}",
            "a config.json with hidden size, layer count, heads, intermediate size and vocab size",
            "包含 hidden size、层数、头数、intermediate size 和词表大小的 config.json",
            reason_en=f"The model config lacks the key {exc.args[0]!r}.",
            reason_zh=f"模型配置缺少键 {exc.args[0]!r}。",
        ) from None
    except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: int(inf)
        raise CalculatorError(
            "model_config", str(exc)[:80], "positive integer sizes in config.json", "config.json 中的正整数尺寸"
        ) from None


#: Mixture-of-experts presets: the config.json keys that decide the shape, copied from each repository's
#: config.json (https://huggingface.co/<repo>/blob/main/config.json), read by the same reader as a pasted config,
#: so total and active parameters, expert activations and the router are modelled as for hf_config. Totals are
#: tested against the model cards (PUBLISHED_PARAMS): 46.7B / 12.9B active, 141B / 39B, 14.3B / 2.7B,
#: 30.5B / 3.3B, 235B / 22B.
MOE_PRESET_CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "mixtral-8x7b": (
        "mistralai/Mixtral-8x7B-v0.1",
        {
            "model_type": "mixtral",
            "hidden_size": 4096,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "intermediate_size": 14336,
            "vocab_size": 32000,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
            "tie_word_embeddings": False,
        },
    ),
    "mixtral-8x22b": (
        "mistralai/Mixtral-8x22B-v0.1",
        {
            "model_type": "mixtral",
            "hidden_size": 6144,
            "num_hidden_layers": 56,
            "num_attention_heads": 48,
            "num_key_value_heads": 8,
            "intermediate_size": 16384,
            "vocab_size": 32000,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
            "tie_word_embeddings": False,
        },
    ),
    "qwen1.5-moe-a2.7b": (
        "Qwen/Qwen1.5-MoE-A2.7B",
        {
            "model_type": "qwen2_moe",
            "hidden_size": 2048,
            "num_hidden_layers": 24,
            "num_attention_heads": 16,
            "num_key_value_heads": 16,
            "intermediate_size": 5632,
            "moe_intermediate_size": 1408,
            "shared_expert_intermediate_size": 5632,
            "num_experts": 60,
            "num_experts_per_tok": 4,
            "vocab_size": 151936,
            "decoder_sparse_step": 1,
            "mlp_only_layers": [],
        },
    ),
    "qwen3-30b-a3b": (
        "Qwen/Qwen3-30B-A3B",
        {
            "model_type": "qwen3_moe",
            "hidden_size": 2048,
            "num_hidden_layers": 48,
            "num_attention_heads": 32,
            "num_key_value_heads": 4,
            "head_dim": 128,
            "intermediate_size": 6144,
            "moe_intermediate_size": 768,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "vocab_size": 151936,
            "tie_word_embeddings": False,
            "decoder_sparse_step": 1,
            "mlp_only_layers": [],
        },
    ),
    "qwen3-235b-a22b": (
        "Qwen/Qwen3-235B-A22B",
        {
            "model_type": "qwen3_moe",
            "hidden_size": 4096,
            "num_hidden_layers": 94,
            "num_attention_heads": 64,
            "num_key_value_heads": 4,
            "head_dim": 128,
            "intermediate_size": 12288,
            "moe_intermediate_size": 1536,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "vocab_size": 151936,
            "tie_word_embeddings": False,
            "decoder_sparse_step": 1,
            "mlp_only_layers": [],
        },
    ),
}
# DeepSeek-V2-Lite: https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite/blob/main/config.json (also
# deepseek-ai/DeepSeek-V2-Lite-Chat), cross-checked against Google MaxText's copy of the same shape,
# https://github.com/AI-Hypercomputer/maxtext/blob/0ed7bd529b9d690570473c3525d1efeda6b6c944/MaxText/configs/models/deepseek2-16b.yml
# (q_lora_rank 0 there = null here). Qwen2-57B-A14B: https://huggingface.co/Qwen/Qwen2-57B-A14B/blob/main/config.json,
# as copied verbatim in NVIDIA TensorRT-LLM's test (QWEN2_57B_A14B_CONFIG),
# https://github.com/NVIDIA/TensorRT-LLM/blob/cb4c622cf5bb97009451f7f44609498a48a2b11d/tests/unittest/_torch/modeling/test_modeling_qwen_moe.py
# Both counts equal transformers 5.23's models built from these keys (tests/test_mem5_units.py).
MOE_PRESET_CONFIGS.update(
    {
        "deepseek-v2-lite": (
            "deepseek-ai/DeepSeek-V2-Lite",
            {
                "model_type": "deepseek_v2",
                "hidden_size": 2048,
                "num_hidden_layers": 27,
                "num_attention_heads": 16,
                "num_key_value_heads": 16,
                "intermediate_size": 10944,
                "moe_intermediate_size": 1408,
                "n_routed_experts": 64,
                "n_shared_experts": 2,
                "num_experts_per_tok": 6,
                "first_k_dense_replace": 1,
                "moe_layer_freq": 1,
                "q_lora_rank": None,
                "kv_lora_rank": 512,
                "qk_nope_head_dim": 128,
                "qk_rope_head_dim": 64,
                "v_head_dim": 128,
                "vocab_size": 102400,
                "topk_method": "greedy",
                "tie_word_embeddings": False,
            },
        ),
        # DeepSeek-V2 (236B) and V3 (671B): https://huggingface.co/deepseek-ai/DeepSeek-V2/blob/main/config.json and
        # https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json, cross-checked against MaxText's
        # https://github.com/AI-Hypercomputer/maxtext/blob/412a282c35fe7a3889cd4efb68c911598481b4f3/MaxText/configs/models/deepseek2-236b.yml
        # https://github.com/AI-Hypercomputer/maxtext/blob/52cfc4e5c1877de7436a0af304af565d346c4b75/MaxText/configs/models/deepseek3-671b.yml
        # and transformers 5.23's DeepseekV3Config defaults (the V3 shape). V3's multi-token-prediction module (the
        # hub's 685B) is not built by transformers and not counted.
        "deepseek-v2": (
            "deepseek-ai/DeepSeek-V2",
            {
                "model_type": "deepseek_v2",
                "hidden_size": 5120,
                "num_hidden_layers": 60,
                "num_attention_heads": 128,
                "num_key_value_heads": 128,
                "intermediate_size": 12288,
                "moe_intermediate_size": 1536,
                "n_routed_experts": 160,
                "n_shared_experts": 2,
                "num_experts_per_tok": 6,
                "first_k_dense_replace": 1,
                "moe_layer_freq": 1,
                "n_group": 8,
                "topk_group": 3,
                "topk_method": "group_limited_greedy",
                "q_lora_rank": 1536,
                "kv_lora_rank": 512,
                "qk_nope_head_dim": 128,
                "qk_rope_head_dim": 64,
                "v_head_dim": 128,
                "vocab_size": 102400,
                "tie_word_embeddings": False,
            },
        ),
        "deepseek-v3": (
            "deepseek-ai/DeepSeek-V3",
            {
                "model_type": "deepseek_v3",
                "hidden_size": 7168,
                "num_hidden_layers": 61,
                "num_attention_heads": 128,
                "num_key_value_heads": 128,
                "intermediate_size": 18432,
                "moe_intermediate_size": 2048,
                "n_routed_experts": 256,
                "n_shared_experts": 1,
                "num_experts_per_tok": 8,
                "first_k_dense_replace": 3,
                "moe_layer_freq": 1,
                "n_group": 8,
                "topk_group": 4,
                "topk_method": "noaux_tc",
                "q_lora_rank": 1536,
                "kv_lora_rank": 512,
                "qk_nope_head_dim": 128,
                "qk_rope_head_dim": 64,
                "v_head_dim": 128,
                "vocab_size": 129280,
                "tie_word_embeddings": False,
            },
        ),
        "qwen2-57b-a14b": (
            "Qwen/Qwen2-57B-A14B",
            {
                "model_type": "qwen2_moe",
                "hidden_size": 3584,
                "num_hidden_layers": 28,
                "num_attention_heads": 28,
                "num_key_value_heads": 4,
                "intermediate_size": 18944,
                "moe_intermediate_size": 2560,
                "shared_expert_intermediate_size": 20480,
                "num_experts": 64,
                "num_experts_per_tok": 8,
                "vocab_size": 151936,
                "decoder_sparse_step": 1,
                "tie_word_embeddings": False,
            },
        ),
    }
)
for _name, (_repo, _cfg) in MOE_PRESET_CONFIGS.items():
    MODEL_PRESETS[_name] = shape_from_hf_config(_cfg).model_copy(update={"name": _name})
    _PRESET_SOURCES[_name] = _repo
_ALIASES.update(
    {
        "mixtral-8x7b-instruct-v0.1": "mixtral-8x7b",
        "mixtral-8x7b-v0.1": "mixtral-8x7b",
        "mixtral-8x22b-instruct-v0.1": "mixtral-8x22b",
        "mixtral-8x22b-v0.1": "mixtral-8x22b",
        "qwen1.5-moe-a2.7b-chat": "qwen1.5-moe-a2.7b",
        "qwen3-30b-a3b-instruct-2507": "qwen3-30b-a3b",
        "deepseek-v2-lite-chat": "deepseek-v2-lite",
        "deepseek-v2-chat": "deepseek-v2",
        "deepseek-v3-base": "deepseek-v3",
        "deepseekv2-lite": "deepseek-v2-lite",
        "deepseek-v2-lite-16b": "deepseek-v2-lite",
        "deepseek-v2-lite-base": "deepseek-v2-lite",
        "qwen2-57b-a14b-instruct": "qwen2-57b-a14b",
        "qwen2-moe-57b-a14b": "qwen2-57b-a14b",
        # The only Qwen2 of 57B and the only Qwen3 of 30B are these MoE models (Qwen2 release: 0.5B, 1.5B, 7B,
        # 57B-A14B, 72B; Qwen3: dense 0.6B–32B and MoE 30B-A3B, 235B-A22B), so "Qwen2-57B" / "qwen3-30b" name them.
        "qwen2-57b": "qwen2-57b-a14b",
        "qwen3-30b": "qwen3-30b-a3b",
    }
)
# DeepSeek-R1's distilled models are fine-tunes of these bases and keep their shapes (deepseek-ai/DeepSeek-R1 README,
# "DeepSeek-R1-Distill Models": Qwen-14B from Qwen2.5-14B, Qwen-32B from Qwen2.5-32B, Llama-8B from Llama-3.1-8B,
# Llama-70B from Llama-3.3-70B-Instruct; the 1.5B / 7B come from Qwen2.5-Math, which has no preset here).
_ALIASES.update(
    {
        "deepseek-r1-distill-qwen-14b": "qwen2.5-14b",
        "deepseek-r1-distill-qwen-32b": "qwen2.5-32b",
        "deepseek-r1-distill-llama-8b": "llama-3-8b",
        "deepseek-r1-distill-llama-70b": "llama-3.1-70b",
    }
)


# --- Vision-language models: the language model's shape (config.json's text_config / llm_config) with the vision
# tower attached (calculators/vision.py). Sources: Qwen2-VL-2B/7B/72B-Instruct and Qwen2.5-VL-3B/7B/32B/72B-Instruct
# config.json (https://huggingface.co/Qwen/<name>; vision_config: depth 32, embed_dim/hidden_size 1280, 16 heads,
# patch 14, temporal_patch_size 2, spatial_merge_size 2; Qwen2-VL mlp_ratio 4, Qwen2.5-VL intermediate_size 3420;
# out_hidden_size = the LM's hidden size), the Qwen2-VL paper (arXiv 2409.12191, table 1: a 675M ViT for all sizes);
# llava-hf/llava-1.5-7b-hf and llava-1.5-13b-hf config.json (CLIP ViT-L/14-336 vision_config, text vocab 32064,
# projector_hidden_act gelu); OpenGVLab/InternVL2-8B config.json (InternViT-300M-448px: 24 layers, 1024 wide,
# qkv_bias, layer scale; downsample_ratio 0.5; llm_config InternLM2.5-7B: 4096, 32 layers, 32 heads, 8 KV heads,
# 14336, vocab 92553) and the InternVL2 model table (InternVL docs, "Introduction of InternVL2 Series": InternVL2-8B =
# InternViT-300M-448px + internlm2_5-7b-chat; 448-px tiles, 256 tokens each). Each total is checked against
# transformers 5.23's own model classes built on the meta device (tests/test_vlm12_units.py).
def _qwen2_vit(out: int) -> VisionTower:
    return VisionTower(
        family="qwen2-vl",
        hidden_size=1280,
        num_layers=32,
        num_heads=16,
        intermediate_size=5120,
        temporal_patch_size=2,
        merge=2,
        projector="qwen-merger",
        out_hidden_size=out,
        activation="quick_gelu",
    )


def _qwen25_vit(out: int) -> VisionTower:
    return VisionTower(
        family="qwen2.5-vl",
        hidden_size=1280,
        num_layers=32,
        num_heads=16,
        intermediate_size=3420,
        mlp="gated",
        norm="rmsnorm",
        temporal_patch_size=2,
        merge=2,
        projector="qwen-merger",
        out_hidden_size=out,
        activation="silu",
    )


# Qwen3-VL-2B/4B/8B/32B-Instruct config.json (https://huggingface.co/Qwen/<name>): text_config a Qwen3 dense model
# (head_dim 128, no qkv bias, q/k RMSNorm; 2B 2048 wide, 28 layers, 16 heads, 8 KV heads, 6144, tied; 4B 2560, 36,
# 32, 8, 9728, tied; 8B 4096, 36, 32, 8, 12288; 32B 5120, 64, 64, 8, 25600; vocab 151936); vision_config patch 16,
# temporal 2, spatial_merge 2, 2304 position embeddings, gelu_pytorch_tanh; 2B/4B: depth 24, hidden 1024, 4096, 16
# heads, deepstack_visual_indexes [5, 11, 17]; 8B/32B: depth 27, hidden 1152, 4304, 16 heads, [8, 16, 24].
# Checked against transformers 5.23's Qwen3VLForConditionalGeneration on the meta device (tests/test_vlm13_units.py).
def _qwen3_vit(out: int, large: bool) -> VisionTower:
    return VisionTower(
        family="qwen3-vl",
        hidden_size=1152 if large else 1024,
        num_layers=27 if large else 24,
        num_heads=16,
        intermediate_size=4304 if large else 4096,
        patch_size=16,
        temporal_patch_size=2,
        patch_bias=True,
        position_rows=2304,
        merge=2,
        deepstack_mergers=3,
        projector="qwen-merger",
        out_hidden_size=out,
        activation="gelu",
    )


def _clip_l336(out: int) -> VisionTower:
    return VisionTower(
        family="llava",
        hidden_size=1024,
        num_layers=24,
        num_heads=16,
        intermediate_size=4096,
        class_token=True,
        position_rows=577,
        pre_norm=True,
        post_norm=True,
        projector="mlp2x",
        out_hidden_size=out,
        image_size=336,
        activation="quick_gelu",
    )


def _internvit_300m(out: int) -> VisionTower:
    return VisionTower(
        family="internvl",
        hidden_size=1024,
        num_layers=24,
        num_heads=16,
        intermediate_size=4096,
        patch_bias=True,
        class_token=True,
        position_rows=1025,
        layer_scale=True,
        merge=2,
        projector="internvl-mlp1",
        out_hidden_size=out,
        image_size=448,
    )


# GLM-4.1V-9B (zai-org/GLM-4.1V-9B-Thinking and -Base; transformers Glm4vForConditionalGeneration, whose
# Glm4vConfig defaults are that checkpoint's: docs "auto_docstring(checkpoint='zai-org/GLM-4.1V-9B-Thinking')" in
# models/glm4v/configuration_glm4v.py, transformers 5.23). text_config (model_type glm4v_text): 4096 wide, 40 layers, 32
# heads, 2 KV heads, 13696, vocab 151552, attention_bias true (q/k/v only; o_proj without), four RMSNorms per layer
# (input, post_self_attn, post_attention, post_mlp), untied; vision_config: depth 24, hidden_size 1536, 12 heads,
# attention_bias false, patch 14, temporal 2, spatial_merge 2, image_size 336, out_hidden_size 4096,
# intermediate_size 13696, silu. The same values appear in GLM-4.1V fine-tunes' config.json on the Hub (e.g.
# luli2949/glyph_dim4, Glm4vForConditionalGeneration) and in MindSpore MindSpeed-MM's examples/glm4.1v/model_9b.json
# (ViT 24 layers, 1536, ffn 4096, no bias, RMSNorm, 336 px); the official config.json itself was not in the corpora.
# Total 10.29B: the Hub lists the checkpoint as "10B" (safetensors); "9B" in the name is the language model.
def _glm41v_vit() -> VisionTower:
    return VisionTower(
        family="glm-4.1v",
        hidden_size=1536,
        num_layers=24,
        num_heads=12,
        intermediate_size=4096,  # Glm4VisionMlp's width is out_hidden_size, not intermediate_size
        mlp="gated",
        block_bias=False,
        norm="rmsnorm",
        temporal_patch_size=2,
        patch_bias=True,
        position_rows=576,
        pre_norm=True,  # post_conv_layernorm
        post_norm=True,
        merge=2,
        projector="glm-merger",
        projector_intermediate_size=13696,
        out_hidden_size=4096,
        activation="silu",
    )


# GLM-4V-9B (THUDM/glm-4v-9b, remote code: config.json https://huggingface.co/THUDM/glm-4v-9b/blob/main/config.json,
# visual.py EVA2CLIPModel): the language model is GLM-4-9B's (ChatGLM: 4096, 40 layers, 32 heads, multi_query_group_num
# 2, ffn_hidden_size 13696, padded_vocab_size 151552, add_qkv_bias, no other bias); vision_config EVA2-CLIP-E:
# num_hidden_layers 63, hidden_size 1792, 16 heads, intermediate_size 15360, gelu, patch 14, image_size 1120,
# num_positions 6401; then Conv2d(1792, 4096, 2, 2) and the GLU projector of ffn_hidden_size 13696, boi / eoi. The
# remote code does not run here (no trust_remote_code offline): the total, 13,906,320,896, is checked against the
# published 13.9B (the model card's safetensors size) in tests/test_vlm14_units.py, and its blocks against the same
# layers in transformers' CLIP.
def _eva2clip_e() -> VisionTower:
    return VisionTower(
        family="glm-4v",
        hidden_size=1792,
        num_layers=63,
        num_heads=16,
        intermediate_size=15360,
        patch_bias=True,
        class_token=True,
        position_rows=6401,
        merge=2,
        projector="glm-merger",
        projector_intermediate_size=13696,
        boundary_tokens=2,
        out_hidden_size=4096,
        image_size=1120,
        activation="gelu",
    )


# MiniCPM-V 2.6 (openbmb/MiniCPM-V-2_6, remote code; config.json as mirrored on the Hub, e.g. CTW-g123/MiniCPM
# "_name_or_path": "openbmb/MiniCPM-V-2_6", version 2.6): the LM is Qwen2-7B's shape (3584, 28 layers, 28 heads, 4 KV
# heads, 18944, qkv bias) with vocab_size 151666, untied; vision_config SigLIP (hidden 1152, 27 layers, 16 heads, 4304,
# patch 14, image_size 980), drop_vision_last_layer false; query_num 64, slice_config max_slice_nums 9, image_size
# (scale resolution) 448. Modules as vLLM's MiniCPMV2_6 builds them (vllm/model_executor/models/minicpmv.py: the
# SigLIP transformer and Resampler2_5 with num_heads = 3584 // 128). Total 8,099,175,152: the model card's "8B"
# (OpenBMB/MiniCPM-V docs/minicpm_v2dot6.md: "SigLip-400M and Qwen2-7B with a total of 8B parameters").
#
# MiniCPM-Llama3-V 2.5 (openbmb/MiniCPM-Llama3-V-2_5, remote code; config.json
# https://huggingface.co/openbmb/MiniCPM-Llama3-V-2_5/blob/main/config.json, version 2.5): the LM is Llama-3-8B's
# shape (4096, 32 layers, 32 heads, 8 KV heads, 14336, vocab_size 128256, untied, no bias); the same SigLIP
# vision_config (idefics2: hidden 1152, 27 layers, 16 heads, 4304, patch 14, image_size 980), drop_vision_last_layer
# false; query_num 96, slice_config max_slice_nums 9, image_size 448. vLLM's MiniCPMV2_5 builds the SigLIP as
# transformers' Idefics2VisionTransformer and the same Resampler2_5 (num_heads = 4096 // 128). Total 8,537,092,336:
# the model card's "SigLip-400M and Llama3-8B-Instruct with a total of 8B parameters"; its seven fp16 safetensors
# shards hold 2.44 + 2.42 + 2.5 + 2.5 + 2.42 + 2.5 + 2.3 = 17.08 GB, 8.54B parameters at 2 bytes.
def _siglip_400m_resampler(out: int, queries: int = 64) -> VisionTower:
    return VisionTower(
        family="minicpm-v",
        hidden_size=1152,
        num_layers=27,
        num_heads=16,
        intermediate_size=4304,
        patch_bias=True,
        position_rows=4900,
        post_norm=True,
        projector="resampler",
        queries=queries,
        out_hidden_size=out,
        image_size=448,
        activation="gelu",
    )


_QWEN_LM = {"qkv_bias": True}
_QWEN3_LM: dict[str, Any] = {"head_dim": 128, "qk_norm": True}
VLM_PRESETS: dict[str, ModelShape] = {
    s.name: s
    for s in [
        _llama(
            "qwen2-vl-2b", 1536, 28, 12, 2, 8960, 151936, tie_word_embeddings=True, vision=_qwen2_vit(1536), **_QWEN_LM
        ),
        _llama("qwen2-vl-7b", 3584, 28, 28, 4, 18944, 152064, vision=_qwen2_vit(3584), **_QWEN_LM),
        _llama("qwen2-vl-72b", 8192, 80, 64, 8, 29568, 152064, vision=_qwen2_vit(8192), **_QWEN_LM),
        _llama(
            "qwen2.5-vl-3b",
            2048,
            36,
            16,
            2,
            11008,
            151936,
            tie_word_embeddings=True,
            vision=_qwen25_vit(2048),
            **_QWEN_LM,
        ),
        _llama("qwen2.5-vl-7b", 3584, 28, 28, 4, 18944, 152064, vision=_qwen25_vit(3584), **_QWEN_LM),
        _llama("qwen2.5-vl-32b", 5120, 64, 40, 8, 27648, 152064, vision=_qwen25_vit(5120), **_QWEN_LM),
        _llama("qwen2.5-vl-72b", 8192, 80, 64, 8, 29568, 152064, vision=_qwen25_vit(8192), **_QWEN_LM),
        _llama(
            "qwen3-vl-2b",
            2048,
            28,
            16,
            8,
            6144,
            151936,
            **_QWEN3_LM,
            tie_word_embeddings=True,
            vision=_qwen3_vit(2048, False),
        ),
        _llama(
            "qwen3-vl-4b",
            2560,
            36,
            32,
            8,
            9728,
            151936,
            **_QWEN3_LM,
            tie_word_embeddings=True,
            vision=_qwen3_vit(2560, False),
        ),
        _llama("qwen3-vl-8b", 4096, 36, 32, 8, 12288, 151936, **_QWEN3_LM, vision=_qwen3_vit(4096, True)),
        _llama("qwen3-vl-32b", 5120, 64, 64, 8, 25600, 151936, **_QWEN3_LM, vision=_qwen3_vit(5120, True)),
        _llama("llava-1.5-7b", 4096, 32, 32, 32, 11008, 32064, vision=_clip_l336(4096)),
        _llama("llava-1.5-13b", 5120, 40, 40, 40, 13824, 32064, vision=_clip_l336(5120)),
        _llama("internvl2-8b", 4096, 32, 32, 8, 14336, 92553, vision=_internvit_300m(4096)),
        _llama("glm-4.1v-9b", 4096, 40, 32, 2, 13696, 151552, qkv_bias=True, norms_per_layer=4, vision=_glm41v_vit()),
        _llama("glm-4v-9b", 4096, 40, 32, 2, 13696, 151552, qkv_bias=True, vision=_eva2clip_e()),
        _llama("minicpm-v-2.6", 3584, 28, 28, 4, 18944, 151666, vision=_siglip_400m_resampler(3584), **_QWEN_LM),
        _llama("minicpm-llama3-v-2.5", 4096, 32, 32, 8, 14336, 128256, vision=_siglip_400m_resampler(4096, 96)),
    ]
}
MODEL_PRESETS.update(VLM_PRESETS)
_PRESET_SOURCES.update(
    {
        "qwen2-vl-2b": "Qwen/Qwen2-VL-2B-Instruct",
        "qwen2-vl-7b": "Qwen/Qwen2-VL-7B-Instruct",
        "qwen2-vl-72b": "Qwen/Qwen2-VL-72B-Instruct",
        "qwen2.5-vl-3b": "Qwen/Qwen2.5-VL-3B-Instruct",
        "qwen2.5-vl-7b": "Qwen/Qwen2.5-VL-7B-Instruct",
        "qwen2.5-vl-32b": "Qwen/Qwen2.5-VL-32B-Instruct",
        "qwen2.5-vl-72b": "Qwen/Qwen2.5-VL-72B-Instruct",
        "qwen3-vl-2b": "Qwen/Qwen3-VL-2B-Instruct",
        "qwen3-vl-4b": "Qwen/Qwen3-VL-4B-Instruct",
        "qwen3-vl-8b": "Qwen/Qwen3-VL-8B-Instruct",
        "qwen3-vl-32b": "Qwen/Qwen3-VL-32B-Instruct",
        "llava-1.5-7b": "llava-hf/llava-1.5-7b-hf",
        "llava-1.5-13b": "llava-hf/llava-1.5-13b-hf",
        "internvl2-8b": "OpenGVLab/InternVL2-8B",
        "glm-4.1v-9b": "zai-org/GLM-4.1V-9B-Thinking",
        "glm-4v-9b": "THUDM/glm-4v-9b",
        "minicpm-v-2.6": "openbmb/MiniCPM-V-2_6",
        "minicpm-llama3-v-2.5": "openbmb/MiniCPM-Llama3-V-2_5",
    }
)
# Model cards' sizes (the Hub's safetensors parameter count): Qwen2-VL 2.21B / 8.29B / 73.4B, Qwen2.5-VL 3.75B / 8.29B
# / 33.5B / 73.4B, LLaVA-1.5 7.06B / 13.4B, InternVL2-8B 8.08B.
PUBLISHED_PARAMS.update(
    {
        "qwen2-vl-2b": 2.21e9,
        "qwen2-vl-7b": 8.29e9,
        "qwen2-vl-72b": 73.4e9,
        "qwen2.5-vl-3b": 3.75e9,
        "qwen2.5-vl-7b": 8.29e9,
        "qwen2.5-vl-32b": 33.5e9,
        "qwen2.5-vl-72b": 73.4e9,
        "qwen3-vl-2b": 2.13e9,
        "qwen3-vl-4b": 4.44e9,
        "qwen3-vl-8b": 8.77e9,
        "qwen3-vl-32b": 33.4e9,
        "llava-1.5-7b": 7.06e9,
        "llava-1.5-13b": 13.4e9,
        "internvl2-8b": 8.08e9,
        # GLM-4.1V-9B: the Hub's "10B" (10.3B counted); GLM-4V-9B: the model card's 13.9B
        "glm-4.1v-9b": 10.3e9,
        "glm-4v-9b": 13.9e9,
        "minicpm-v-2.6": 8.1e9,  # the Hub's safetensors size; the model card says "8B"
        "minicpm-llama3-v-2.5": 8.54e9,  # its fp16 safetensors shards, 17.08 GB; the model card says "8B"
    }
)
_ALIASES.update(
    {
        "llava-v1.5-7b": "llava-1.5-7b",
        "llava-v1.5-13b": "llava-1.5-13b",
        "llava1.5-7b": "llava-1.5-7b",
        "llava1.5-13b": "llava-1.5-13b",
        "qwen2-5-vl-3b": "qwen2.5-vl-3b",
        "qwen2-5-vl-7b": "qwen2.5-vl-7b",
        "qwen2-5-vl-32b": "qwen2.5-vl-32b",
        "qwen2-5-vl-72b": "qwen2.5-vl-72b",
        "qwen2vl-7b": "qwen2-vl-7b",
        "qwen2vl-2b": "qwen2-vl-2b",
        "qwen3vl-2b": "qwen3-vl-2b",
        "qwen3vl-4b": "qwen3-vl-4b",
        "qwen3vl-8b": "qwen3-vl-8b",
        "qwen3vl-32b": "qwen3-vl-32b",
        # Qwen3-VL-*-Thinking: the Instruct model's config.json shape (same architecture and sizes).
        "qwen3-vl-2b-thinking": "qwen3-vl-2b",
        "qwen3-vl-4b-thinking": "qwen3-vl-4b",
        "qwen3-vl-8b-thinking": "qwen3-vl-8b",
        "qwen3-vl-32b-thinking": "qwen3-vl-32b",
        # InternVL2.5-8B: InternViT-300M-448px-V2_5 (the same shape) + internlm2_5-7b-chat, as InternVL2-8B.
        "internvl2.5-8b": "internvl2-8b",
        "internvl2-5-8b": "internvl2-8b",
        # GLM-4.1V-9B-Thinking / -Base: one architecture and shape (Glm4vForConditionalGeneration)
        "glm-4.1v-9b-thinking": "glm-4.1v-9b",
        "glm4.1v-9b": "glm-4.1v-9b",
        "glm4.1v-9b-thinking": "glm-4.1v-9b",
        "glm-4.1v": "glm-4.1v-9b",
        "glm4.1v": "glm-4.1v-9b",
        "glm-4.1v-thinking": "glm-4.1v-9b",
        "glm4v-9b": "glm-4v-9b",
        "glm-4v-9b-chat": "glm-4v-9b",
        "glm4v-9b-chat": "glm-4v-9b",
        # MiniCPM-V 2.6 as people write it ("MiniCPM-V-2_6", "minicpm-v2.6", "MiniCPM-V 2.6"); MiniCPM-o 2.6 is
        # another model (audio) and stays unresolved
        "minicpm-v-2-6": "minicpm-v-2.6",
        "minicpm-v2.6": "minicpm-v-2.6",
        "minicpm-v2-6": "minicpm-v-2.6",
        "minicpmv-2.6": "minicpm-v-2.6",
        "minicpmv2.6": "minicpm-v-2.6",
        "minicpm-v-26": "minicpm-v-2.6",
        # MiniCPM-Llama3-V 2.5 as people write it ("MiniCPM-Llama3-V-2_5", "MiniCPM-Llama3-V 2.5", "MiniCPM-V 2.5",
        # "minicpmv2-5"): the only MiniCPM-V 2.5
        "minicpm-llama3-v-2-5": "minicpm-llama3-v-2.5",
        "minicpm-llama3-v2.5": "minicpm-llama3-v-2.5",
        "minicpm-llama3-v2-5": "minicpm-llama3-v-2.5",
        "minicpm-v-2.5": "minicpm-llama3-v-2.5",
        "minicpm-v-2-5": "minicpm-llama3-v-2.5",
        "minicpm-v2.5": "minicpm-llama3-v-2.5",
        "minicpm-v2-5": "minicpm-llama3-v-2.5",
        "minicpmv-2.5": "minicpm-llama3-v-2.5",
        "minicpmv2.5": "minicpm-llama3-v-2.5",
        "minicpmv2-5": "minicpm-llama3-v-2.5",
        "minicpm-v-25": "minicpm-llama3-v-2.5",
    }
)
