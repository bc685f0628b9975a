"""Activation memory of transformer training, per micro-batch.

Two levels:

* :func:`korthikanti_layer_bytes` -- the closed form of Korthikanti et al. 2022,
  "Reducing Activation Recomputation in Large Transformer Models" (arXiv 2205.05198,
  section 4.1, no tensor/sequence parallelism): one GPT layer at 16-bit with dropout keeps
  ``s*b*h*(34 + 5*a*s/h)`` bytes; with selective recomputation (or flash attention, which
  never stores the s x s scores) ``34*s*b*h``; with full recomputation only the layer input,
  ``2*s*b*h``.
* :func:`activation_bytes` -- the same accounting done term by term and made
  architecture-aware (gated MLPs, RMSNorm, GQA, no dropout, fp32, T5 cross-attention,
  embeddings and the LM-head/loss), following what the Hugging Face ``transformers``
  eager implementations actually save for backward. For the paper's GPT layer
  (plain 4h MLP, LayerNorm, dropout, 2-byte values, 1-byte dropout masks) its
  ``per_layer`` equals :func:`korthikanti_layer_bytes` exactly. It was checked against
  tensors counted with ``torch.autograd.graph.saved_tensors_hooks`` on tiny models
  (tests/test_activations_measured.py, bench/activations_vs_measured.py).

Notation: s sequence length, b micro-batch, h hidden size, a attention heads,
i MLP intermediate size, V vocabulary, B bytes per value (2 for fp16/bf16, 4 for fp32).
Per-token statistics (LayerNorm mean/rstd, RMSNorm rsqrt, softmax logsumexp: b*s or
b*a*s numbers) are ignored, as in the paper. Pure Python: no torch import.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from .errors import CalculatorError
from .presets import ModelShape
from .validate import positive_int

MAX_MICRO_BATCH = 1_000_000
MAX_SEQ_LEN = 16_777_216  # 16M tokens
Recompute = Literal["none", "selective", "full"]
MASK_BYTES = 1  # dropout masks are stored as bool (1 byte)
FP32 = 4
INDEX_BYTES = 8  # int64 token ids / labels
MOE_INDEX_BYTES = 48  # per routed token: int64 expert/token indices and the routing weight (measured, tiny Mixtral)
# DeepSeek (fp32 router): three int64 token/expert indices, the fp32 routing weight and topk's int64 index per
# routed token (measured, tiny DeepseekV2/V3, eager and grouped_mm experts).
DEEPSEEK_MOE_INDEX_BYTES = 36
LORA_LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
MAX_LORA_RANK = 65536

__all__ = ["korthikanti_layer_bytes", "ActivationBreakdown", "activation_bytes"]


# ------------------------------------------------------------------ validation


def _choice(field: str, value: Any, options: tuple[Any, ...]) -> Any:
    if isinstance(value, bool) and not all(isinstance(o, bool) for o in options) or value not in options:
        shown = ", ".join(repr(o) for o in options)
        raise CalculatorError(field, value, f"one of {shown}", f"以下之一：{shown}")
    return value


def _optional_bool(field: str, value: Any) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise CalculatorError(
            field, value, "True, False or None (the architecture's default)", "True、False 或 None（按架构默认）"
        )
    return value


# ------------------------------------------------------------------ the paper


def korthikanti_layer_bytes(
    seq_len: int, micro_batch: int, hidden: int, heads: int, recompute: Recompute = "none"
) -> int:
    """Bytes one GPT layer keeps for backward at 16-bit, Korthikanti et al. 2022, eqs. (1)-(2) and sec. 5.

    * ``"none"``:      ``s*b*h*(34 + 5*a*s/h)`` = ``34*s*b*h + 5*a*s^2*b``
    * ``"selective"``: ``34*s*b*h`` (attention scores, softmax and its dropout recomputed;
      the same number holds with flash attention)
    * ``"full"``:      ``2*s*b*h`` (only the layer input; see :func:`activation_bytes` for the
      one layer that is re-materialised during backward)
    """
    s = positive_int("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    b = positive_int("micro_batch", micro_batch, maximum=MAX_MICRO_BATCH)
    h = positive_int("hidden", hidden, maximum=10**7)
    a = positive_int("heads", heads, maximum=10**5)
    recompute = _choice("recompute", recompute, ("none", "selective", "full"))
    if recompute == "full":
        return 2 * s * b * h
    if recompute == "selective":
        return 34 * s * b * h
    return 34 * s * b * h + 5 * a * s * s * b


# ------------------------------------------------------------------ component model


class ActivationBreakdown(BaseModel):
    """Activation bytes of one micro-batch. ``total = layers + embeddings + logits``.

    ``per_layer`` is one transformer block's full activations (for encoder-decoder models
    the larger, decoder block); ``layers`` is what all blocks together keep under the
    chosen checkpointing; ``terms`` lists the per-block pieces (bytes) behind ``per_layer``.
    """

    per_layer: int
    layers: int
    embeddings: int
    logits: int
    total: int
    formula: str
    terms: dict[str, int] = {}
    recompute: int = 0  # full checkpointing: the one block re-materialised in backward (part of ``layers``)


@dataclass(frozen=True)
class _Train:
    """Which weights need gradients. ``targets=None``: full fine-tune (every weight trainable).

    Otherwise LoRA/QLoRA: every base weight (embeddings, norms, linears, LM head) frozen and the
    linears named in ``targets`` carry a trainable adapter ``base(x) + B(A(x))``.
    ``copy``: each adapter works on its own copy of its input (PEFT casting ``x`` to fp32
    adapter weights, or ``lora_dropout``), of ``ab`` bytes per value, plus a ``mask``-byte
    dropout mask per element when ``mask`` is non-zero.
    """

    targets: frozenset[str] | None = None
    rank: int = 8
    ab: int = 2  # bytes per value of the adapter's saved tensors
    copy: bool = False
    mask: int = 0

    @property
    def full(self) -> bool:
        return self.targets is None

    def tr(self, *names: str) -> bool:
        """Whether any of these linears has a trainable weight (so it saves its input)."""
        return self.targets is None or any(n in self.targets for n in names)


FULL = _Train()


def _linear_inputs(
    t: dict[str, int],
    key: str,
    g: _Train,
    B: int,
    rows: int,
    width: int,
    adapters: Iterable[str],
    prefix: str = "",
    x_rg: bool = True,
) -> None:
    """The input a group of linears reading the same tensor saves, and their LoRA adapters' tensors.

    ``mm(x, W^T)`` saves ``x`` only when ``W`` needs a gradient (PyTorch's derivative formula for
    ``mat2``), so with frozen base weights the input stays only if an adapter reads it: ``A(x)`` saves
    ``x`` (shared by every adapter and by the base linear), and ``B(A(x))`` saves the rank-``r``
    intermediate ``A(x)`` (``r`` values per token per adapter). With ``g.copy`` each adapter keeps
    its own ``ab``-byte copy of the input (and, with ``lora_dropout``, a dropout mask -- saved only
    when the input needs a gradient), the base input is not kept.
    """
    adapted = [n for n in adapters if g.tr(n)] if not g.full else []
    if g.full or (adapted and not g.copy):
        t[key] = B * rows * width
    for n in adapted:
        t[f"lora_{prefix}{n}_A_out"] = g.ab * rows * g.rank
        if g.copy:
            t[f"lora_{prefix}{n}_input_copy"] = (g.ab + (g.mask if x_rg else 0)) * rows * width


def _hf_style(shape: ModelShape) -> str:
    if shape.architecture == "encoder-decoder":
        return "t5"
    if shape.norm == "rmsnorm":
        return "llama"
    return "gpt2" if shape.architecture == "decoder" else "bert"


def _norm_terms(style: str, B: int, sbh: int, g: _Train = FULL, x_rg: bool = True) -> int:
    """What one normalisation keeps, its output excluded (the next linear layer's input counts that).

    LayerNorm (PyTorch native): its input, B per element (saved whenever anything needs a gradient).
    RMSNorm, HF LLaMA: ``x.to(fp32)`` is saved by ``pow`` and ``x*rsqrt`` (4 bytes) and the
    normalised ``x`` cast back to the model dtype is saved by ``weight * x`` (B).
    RMSNorm, HF T5: the same, and at 16-bit also the 16-bit input (``x * rsqrt`` uses it).
    Frozen norm weights (LoRA) drop the B-byte normalised copy (only the weight's gradient needs
    it); an input that needs no gradient (LoRA's first block) drops the rest.
    """
    if style in ("gpt2", "bert"):
        return B * sbh if (x_rg or g.full) else 0
    extra = B if (style == "t5" and B < FP32) else 0
    return ((FP32 + extra if x_rg else 0) + (B if g.full else 0)) * sbh


def _attention_terms(
    style: str,
    B: int,
    M: int,
    s_q: int,
    s_kv: int,
    b: int,
    h: int,
    shape: ModelShape,
    dropout: bool,
    scores: bool,
    flash: bool,
    prefix: str,
    g: _Train = FULL,
    x_rg: bool = True,
) -> tuple[dict[str, int], bool]:
    """One attention block (self- or cross-), following Korthikanti et al. sec. 4.1.

    Q/K/V projections' input, Q and K for ``Q K^T`` (K repeated to all heads: HF's ``repeat_kv``
    materialises GQA heads before the matmul), the softmax output, the dropout mask and
    dropout output, V for ``P V``, the output projection's input, and the residual dropout mask.
    HF LLaMA computes softmax in fp32 and casts back: 4 bytes plus, at 16-bit, a B-byte copy
    (GPT-2, BERT and T5 keep the softmax output in the model dtype).

    LoRA (``g``, see ``_linear_inputs`` for the projections): a matmul keeps each factor only for
    the *other* factor's gradient. When the block input needs no gradient (``x_rg=False``: the
    first block, embeddings frozen) only adapted projections' outputs do, so ``Q K^T`` keeps Q only
    if K is adapted and K only if Q is, the softmax output (and attention-dropout mask) only if Q
    or K is, ``P V`` keeps V only then and P only if V is adapted. SDPA/flash keeps Q, K, V and its
    output whenever any of them needs a gradient; that output is the output projection's input,
    so it stays with ``o_proj`` frozen. Returns the terms and whether the block output needs a
    gradient.
    """
    a, inner = shape.num_attention_heads, shape.num_attention_heads * shape.dim_per_head
    t: dict[str, int] = {}
    n_rg = x_rg or g.full
    qkv = ("q_proj", "k_proj", "v_proj")
    if style == "gpt2":  # one fused c_attn matrix: adapted if any of Q, K, V is targeted
        q_rg = k_rg = v_rg = n_rg or g.tr(*qkv)
        _linear_inputs(t, f"{prefix}qkv_input", g, B, s_q * b, h, ("q_proj",) if g.tr(*qkv) else (), x_rg=n_rg)
    else:
        q_rg, k_rg, v_rg = (n_rg or g.tr(n) for n in qkv)
        # cross-attention: Q's input; K/V read the encoder output (counted once, with the LM head)
        _linear_inputs(
            t,
            f"{prefix}qkv_input",
            g,
            B,
            s_q * b,
            h,
            ("q_proj",) if prefix == "xattn_" else qkv,
            prefix=prefix,
            x_rg=n_rg,
        )
        if prefix == "xattn_":
            for n in ("k_proj", "v_proj"):
                if not g.full and g.tr(n):
                    t[f"lora_{prefix}{n}_A_out"] = g.ab * s_kv * b * g.rank
    # eager attention repeats GQA's K/V to all heads before the matmuls; SDPA/flash kernels read
    # the kv_heads-sized K and V directly (and their output is the output projection's input).
    kv_width = shape.kv_heads * shape.dim_per_head if flash else inner
    any_rg, scores_rg = q_rg or k_rg or v_rg, q_rg or k_rg
    if flash:
        if any_rg:
            t[f"{prefix}q"] = B * s_q * b * inner
            t[f"{prefix}k"] = t[f"{prefix}v"] = B * s_kv * b * kv_width
    else:
        if k_rg:
            t[f"{prefix}q"] = B * s_q * b * inner
        if q_rg:
            t[f"{prefix}k"] = B * s_kv * b * kv_width
        if scores_rg:
            t[f"{prefix}v"] = B * s_kv * b * kv_width
    if scores:
        ass = a * s_q * s_kv * b
        if scores_rg:
            # fp32 softmax output; its 16-bit copy is saved too (by P V, for V's gradient) unless
            # dropout consumes it (then the dropout output is what P V keeps).
            copy16 = B if (B < FP32 and not dropout and v_rg) else 0
            t[f"{prefix}softmax"] = ((FP32 + copy16) if style == "llama" else B) * ass
            if dropout:
                t[f"{prefix}attn_dropout_mask"] = M * ass
                if v_rg:
                    t[f"{prefix}attn_dropout_out"] = B * ass
        elif v_rg:  # P needs no gradient, but P V keeps it (model dtype) for V's
            t[f"{prefix}softmax"] = B * ass
    if flash and any_rg:
        t[f"{prefix}out_proj_input"] = B * s_q * b * inner  # the kernel's output, kept by the kernel
    _linear_inputs(t, f"{prefix}out_proj_input", g, B, s_q * b, inner, ("o_proj",), prefix=prefix, x_rg=any_rg)
    out_rg = any_rg or g.tr("o_proj")
    if dropout and out_rg:
        t[f"{prefix}residual_dropout_mask"] = M * s_q * b * h
    return t, out_rg


def _mla_attention_terms(B: int, s: int, b: int, shape: ModelShape, scores: bool, flash: bool) -> dict[str, int]:
    """Multi-head latent attention (HF ``DeepseekV2Attention`` / ``DeepseekV3Attention``), full fine-tune.

    Measured with ``saved_tensors_hooks`` on tiny DeepseekV2/V3 models (tests/test_mem5_units.py): the block input
    (kept once by q_proj / q_a_proj and kv_a_proj_with_mqa), with ``q_lora_rank`` the q_a_layernorm (an RMSNorm
    of width q_lora_rank) and q_b_proj's input; kv_a_layernorm on the latent (its fp32 input -- at fp32 a view of
    the whole compressed ``kv_lora_rank + qk_rope_head_dim`` output -- and its normalised copy) and kv_b_proj's
    input; the decompressed per-head Q and K (``qk_nope + qk_rope`` wide, built by ``cat`` / ``new_empty``), V
    (a view into kv_b_proj's output; see ``v_width``), the
    fp32 softmax (+ its 16-bit copy) and the output projection's input. The rotary factors are shared by all blocks
    (counted with the embeddings); no dropout (DeepSeek's attention_dropout is 0).
    """
    a, h, sb = shape.num_attention_heads, shape.hidden_size, s * b
    qk = shape.qk_nope_head_dim + shape.qk_rope_head_dim
    kvr, qr = shape.kv_lora_rank, shape.q_lora_rank
    t = {"attn_qkv_input": B * sb * h}
    if qr:
        t["attn_q_a_norm"] = _norm_terms("llama", B, sb * qr)
        t["attn_q_b_input"] = B * sb * qr
    fp32_view = FP32 * shape.qk_rope_head_dim if B == FP32 else 0  # .to(fp32) is a view of the whole output
    t["attn_kv_a_norm"] = (FP32 * kvr + fp32_view + B * kvr) * sb
    t["attn_kv_b_input"] = B * sb * kvr
    t["attn_q"] = B * sb * a * qk
    t["attn_k"] = B * sb * a * qk
    # V is a view into kv_b_proj's output (qk_nope + v wide per head): SDPA keeps that storage, and so does eager's
    # ``P V`` at micro-batch 1 (the view folds into one matmul); at micro-batch > 1 it keeps a contiguous copy.
    v_width = shape.qk_nope_head_dim + shape.v_head_dim if (flash or b == 1) else shape.v_head_dim
    t["attn_v"] = B * sb * a * v_width
    if scores:
        t["attn_softmax"] = (FP32 + (B if B < FP32 else 0)) * a * s * s * b
    t["attn_out_proj_input"] = B * sb * a * shape.v_head_dim
    if flash:  # SDPA keeps its own output; o_proj reads a transposed contiguous copy of it
        t["attn_sdpa_output"] = B * sb * a * shape.v_head_dim
    return t


def _deepseek_moe_terms(B: int, sb: int, shape: ModelShape) -> dict[str, int]:
    """DeepSeek's MoE block (HF ``DeepseekV2Moe`` / ``DeepseekV3MoE``), measured on tiny models: the MoE input
    (kept by the shared experts' gate/up), the router's fp32 copies of that input and of its weight (16-bit models
    only), its fp32 softmax / sigmoid scores, per routed token the gathered input, the expert's gate/up output
    (2·i_e), SiLU output, product and output, and 36 B of indices and routing weight; the shared experts' gated
    MLP of ``n_shared_experts * moe_intermediate_size`` (its input is the MoE input, not a copy)."""
    h, k, ie, E = shape.hidden_size, shape.experts_per_token, shape.expert_intermediate_size, shape.num_experts
    routed = sb * k
    t = {"mlp_input": B * sb * h}
    if B < FP32:
        t["moe_router_fp32_input"] = FP32 * sb * h
        t["moe_router_fp32_weight"] = FP32 * E * h
    t["moe_router_scores"] = FP32 * sb * E
    t["moe_routed_copies"] = 2 * B * routed * h
    t["moe_expert_mlp"] = 4 * B * routed * ie  # gate/up output (2·i_e), SiLU output, down-projection input
    t["moe_routing_index"] = DEEPSEEK_MOE_INDEX_BYTES * routed
    if shape.shared_expert_intermediate_size:
        t["shared_mlp"] = 4 * B * sb * shape.shared_expert_intermediate_size
    return t


def _mlp_terms(
    style: str,
    B: int,
    M: int,
    sb: int,
    h: int,
    i: int,
    gated: bool,
    dropout: bool,
    activation: str = "gelu",
    g: _Train = FULL,
    x_rg: bool = True,
) -> tuple[dict[str, int], bool]:
    """Plain MLP (paper): fc1 input, activation input, fc2 input, dropout mask -> B*h + 2*B*i + M*h.
    Gated (SwiGLU): input, gate (SiLU input), SiLU output and up (the product's factors),
    down-projection input -> B*(h + 4*i). HF T5 also applies dropout between the activation and
    the second matrix: one more M*i mask (its output is the second matrix's input).
    ``activation="gelu_new"`` (HF GPT-2's default, a tanh-GELU written as Python ops) saves
    x, tanh(...), 0.5*x and 1+tanh(...) instead of x: 3*B*i more.

    LoRA names: gate_proj, up_proj (plain MLP: fc1) and down_proj (fc2). With an input that needs
    no gradient, SiLU keeps the gate only if gate_proj is adapted, ``act * up`` keeps ``act`` only
    if up_proj is and ``up`` only if gate_proj is."""
    n_rg = x_rg or g.full
    t: dict[str, int] = {}
    if gated:
        _linear_inputs(t, "mlp_input", g, B, sb, h, ("gate_proj", "up_proj"), x_rg=n_rg)
        gate_rg, up_rg = n_rg or g.tr("gate_proj"), n_rg or g.tr("up_proj")
        if gate_rg:
            t["mlp_gate"] = B * sb * i  # SiLU input
            t["mlp_up"] = B * sb * i  # kept by act * up for act's gradient
        if up_rg:
            t["mlp_act"] = B * sb * i  # SiLU output, kept for up's gradient
        hid_rg = gate_rg or up_rg
        _linear_inputs(t, "mlp_down_input", g, B, sb, i, ("down_proj",), x_rg=gate_rg or up_rg)
    else:
        _linear_inputs(t, "mlp_input", g, B, sb, h, ("up_proj",), x_rg=n_rg)
        hid_rg = n_rg or g.tr("up_proj")
        if hid_rg:
            t["mlp_act_input"] = B * sb * i
            if activation == "gelu_new":
                t["mlp_gelu_new_intermediates"] = 3 * B * sb * i
            if dropout and style == "t5":
                t["mlp_inner_dropout_mask"] = M * sb * i
        _linear_inputs(t, "mlp_fc2_input", g, B, sb, i, ("down_proj",), x_rg=hid_rg)
    out_rg = hid_rg or g.tr("down_proj")
    if dropout and out_rg:
        t["mlp_dropout_mask"] = M * sb * h
    return t, out_rg


def _layer_terms(
    shape: ModelShape,
    style: str,
    B: int,
    M: int,
    s: int,
    b: int,
    dropout: bool,
    scores: bool,
    flash: bool,
    cross: bool,
    s_enc: int,
    activation: str = "gelu",
    g: _Train = FULL,
    x_rg: bool = True,
    dense: bool = False,
) -> tuple[dict[str, int], bool]:
    """One block's terms; ``x_rg``: whether the block input needs a gradient. Returns (terms, output_rg).
    ``dense``: one of a MoE's leading dense blocks (DeepSeek's first_k_dense_replace)."""
    h, sb = shape.hidden_size, s * b
    t: dict[str, int] = {}
    rg = x_rg
    if shape.is_mla:  # DeepSeek-V2/V3: full fine-tunes only (activation_bytes refuses LoRA on these)
        t["norm1"] = _norm_terms(style, B, sb * h)
        t.update(_mla_attention_terms(B, s, b, shape, scores, flash))
        t["norm2"] = _norm_terms(style, B, sb * h)
        if dense or not shape.is_moe:
            mt, _ = _mlp_terms(style, B, M, sb, h, shape.intermediate_size, True, False)
            t.update(mt)
        else:
            t.update(_deepseek_moe_terms(B, sb, shape))
        return {k: v for k, v in t.items() if v}, True
    t["norm1"] = _norm_terms(style, B, sb * h, g, rg)
    at, out = _attention_terms(style, B, M, s, s, b, h, shape, dropout, scores, flash, "attn_", g, rg)
    t.update(at)
    rg = rg or out
    if cross:
        t["norm2"] = _norm_terms(style, B, sb * h, g, rg)
        xt, _ = _attention_terms(style, B, M, s, s_enc, b, h, shape, dropout, scores, flash, "xattn_", g, True)
        t.update(xt)  # the encoder output needs a gradient whenever the encoder has adapters: treated as so
        rg = True
    t[f"norm{3 if cross else 2}"] = _norm_terms(style, B, sb * h, g, rg)
    if not shape.is_moe:
        mt, out = _mlp_terms(
            style, B, M, sb, h, shape.intermediate_size, shape.mlp == "gated", dropout, activation, g, rg
        )
        t.update(mt)
        return {k: v for k, v in t.items() if v}, rg or out
    # Mixture of experts (HF Mixtral / Qwen-MoE eager experts). Each token runs through k experts, so the
    # expert MLP terms are a gated MLP of k·i_e intermediate width; measured on top of that (tiny Mixtral,
    # tests/test_memory_architectures.py): per routed token a gathered copy of its input (kept by the expert's
    # gate/up matmuls) and the expert output (kept by the routing-weight product), 2·B·k·h, about 48 B of int64
    # index / routing-weight bookkeeping per routed token, and the router's fp32 softmax (4·E per token).
    k = shape.experts_per_token
    mt, out = _mlp_terms(
        style, B, M, sb, h, k * shape.expert_intermediate_size, shape.mlp == "gated", dropout, activation, g, rg
    )
    t.update(mt)
    t["moe_routed_copies"] = 2 * B * sb * k * h
    t["moe_routing_index"] = MOE_INDEX_BYTES * sb * k
    t["moe_router_softmax"] = FP32 * sb * shape.num_experts
    if shape.shared_expert_intermediate_size:
        st, _ = _mlp_terms(
            style, B, M, sb, h, shape.shared_expert_intermediate_size, shape.mlp == "gated", dropout, activation, g, rg
        )
        t.update({f"shared_{key}": v for key, v in st.items()})
    return {k: v for k, v in t.items() if v}, rg or out


def activation_bytes(
    shape: ModelShape,
    micro_batch: int,
    seq_len: int,
    *,
    bytes_per_value: int = 2,
    flash_attention: bool = False,
    checkpointing: Recompute = "none",
    dropout: bool | None = None,
    mask_bytes: int | None = None,
    activation: Literal["gelu", "gelu_new"] = "gelu",
    trainable_linears: Iterable[str] | None = None,
    lora_rank: int = 8,
    input_requires_grad: bool | None = None,
    lora_input_copy: bool = False,
    lora_bytes: int | None = None,
    lora_dropout: bool = False,
) -> ActivationBreakdown:
    """Activation memory of one micro-batch of ``micro_batch`` x ``seq_len`` tokens.

    Per block: the paper's terms (see ``_attention_terms``, ``_mlp_terms``, ``_norm_terms``).
    ``flash_attention`` or ``checkpointing="selective"`` drop the ``a*s^2*b`` score terms
    (softmax output, attention-dropout mask and output); with ``flash_attention`` K and V are
    also kept at ``kv_heads`` width (SDPA/flash read GQA K/V directly; eager attention repeats
    them to all heads first), and the kernel's output is the output projection's input.
    ``checkpointing="full"`` keeps
    each block's input (``B*s*b*h``) plus one block's full activations, re-materialised
    during its backward (the paper's sec. 5 estimate ignores that one layer).

    ``dropout=None`` uses the architecture default: GPT-2, BERT and T5 train with dropout,
    LLaMA-family models (RMSNorm decoders) have none. ``mask_bytes`` is the size of one
    dropout-mask element: 1 by default (CUDA's fused dropout keeps a bool mask, as the paper
    assumes); PyTorch's CPU dropout keeps a mask in the model dtype, so CPU measurements pass
    ``mask_bytes=bytes_per_value``. ``activation``: ``"gelu"`` for any fused activation that
    saves only its input (GELU, ReLU, SiLU; the paper's assumption); ``"gelu_new"`` for HF
    GPT-2's default unfused tanh-GELU, which keeps 3*B*i*s*b more per layer.

    ``embeddings``: token ids (int64) kept by the embedding lookup, the embedding dropout
    mask (GPT-2, BERT, T5), BERT's embedding LayerNorm input, LLaMA's rotary cos/sin.
    ``logits`` (LM head + loss): the final norm, the LM head's input (BERT: its
    transform dense -> GELU -> LayerNorm chain), the logits tensor returned to the caller
    (``B*b*s*V``; it stays alive through ``loss.backward()`` when the caller keeps the
    model output), the fp32 log-softmax output cross-entropy saves (``4*b*s*V``, HF upcasts
    logits to fp32 for causal-LM losses) and the int64 labels. The transient fp32 gradient
    of the logits during backward is not included.

    LoRA / QLoRA (``trainable_linears``: the adapted linears, a non-empty subset of q_proj,
    k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj; ``None`` = full fine-tune). Every base
    weight is frozen and each target carries ``base(x) + B(A(x))`` with rank ``lora_rank``.
    PyTorch saves a tensor only for a gradient that will be computed (``mm`` keeps ``x`` for
    ``dW`` only when ``W`` needs a gradient, ``a * b`` keeps ``a`` only for ``b``'s gradient), so,
    measured on HF LLaMA (eager and SDPA, fp32 and bf16, targets {q,v}, {q,k,v,o} and all seven;
    tests/test_activations_measured.py), relative to the full fine-tune:

    * the input of a group of linears (Q/K/V input, output-projection input, gate/up input,
      down-projection input, LM-head input) goes unless one of them is adapted (``A`` keeps it);
      SDPA keeps its output, which is the output projection's input, either way;
    * each RMSNorm loses its B-byte normalised copy (kept only for the norm weight's gradient);
      LayerNorm keeps its input;
    * the embedding lookup keeps no token ids (frozen table), nor position / relative-bucket ids;
    * each adapter adds its rank-r intermediate ``A(x)`` (``lora_bytes*s*b*r``, kept by ``B``);
    * the first block's input needs no gradient (the embedding output is a frozen leaf), so that
      block keeps only what the adapted paths need: its first norm keeps nothing, ``Q K^T`` keeps
      Q only if K is adapted (and K only if Q is), ``P V`` keeps P only if V is adapted, etc.
      ``input_requires_grad=True`` (PEFT's ``enable_input_require_grads()``, which HF/PEFT call
      with gradient checkpointing; ``None`` = True exactly when ``checkpointing="full"``) makes
      the first block like the others; it also adds the embedding dropout mask (GPT-2/BERT/T5)
      and BERT's embedding LayerNorm input;
    * everything downstream of the first adapter needs a gradient, so the attention core, SiLU
      and the gated product, the norms' fp32 input, the logits and the loss are as in full fine-tuning.

    ``lora_input_copy=True``: each adapter works on its own copy of its input -- PEFT's
    ``x.to(lora_A.weight.dtype)`` with fp32 adapters on a 16-bit model (``lora_bytes=4``; under
    autocast ``A`` then casts back to a 16-bit copy: ``lora_bytes=2``), or ``lora_dropout`` -- so
    it adds ``(lora_bytes [+ mask with lora_dropout]) * s*b*in`` per adapter and no longer
    keeps the shared input alive (the mask: ``mask_bytes`` when 1, CUDA's bool mask; otherwise,
    CPU dropout, ``lora_bytes``; none in the first block when its input needs no gradient). ``lora_dropout=True`` implies the copy. ``lora_bytes`` defaults
    to ``bytes_per_value``. QLoRA has the same activations as LoRA: bitsandbytes' 4-bit linear
    dequantises the frozen weight and computes in the 16-bit compute dtype, saving its input only
    when that weight needs a gradient (never). Encoder-decoder models treat every block's input as
    needing a gradient (cross-attention carries the encoder's adapters' gradient).
    """
    if not isinstance(shape, ModelShape):
        raise CalculatorError("shape", shape, "a calculators.presets.ModelShape", "calculators.presets.ModelShape 对象")
    b = positive_int("micro_batch", micro_batch, maximum=MAX_MICRO_BATCH)
    s = positive_int("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    B = _choice("bytes_per_value", bytes_per_value, (2, 4))
    flash = _choice("flash_attention", flash_attention, (True, False))
    ckpt = _choice("checkpointing", checkpointing, ("none", "selective", "full"))
    dropout = _optional_bool("dropout", dropout)
    M = MASK_BYTES if mask_bytes is None else _choice("mask_bytes", mask_bytes, (1, 2, 4))
    activation = _choice("activation", activation, ("gelu", "gelu_new"))
    if activation == "gelu_new" and shape.mlp == "gated":
        raise CalculatorError(
            "activation", activation, "'gelu' for gated (SwiGLU/GeGLU) MLPs", "门控 MLP（SwiGLU/GeGLU）只接受 'gelu'"
        )
    g = _training(trainable_linears, lora_rank, lora_input_copy, lora_bytes, lora_dropout, B, M)
    if shape.is_mla and not g.full:
        raise CalculatorError(
            "trainable_linears",
            sorted(g.targets or ()),
            "None (full fine-tune) for multi-head latent attention (DeepSeek-V2/V3)",
            "多头潜在注意力（DeepSeek-V2/V3）只支持 None（全参数微调）",
            reason_en="LoRA on DeepSeek's multi-head latent attention (q_a/q_b/kv_a/kv_b projections) is not "
            "modelled yet; its activations would be guessed.",
            reason_zh="DeepSeek 多头潜在注意力（q_a/q_b/kv_a/kv_b 投影）上的 LoRA 激活尚未建模，给出的数字只能是猜测。",
        )
    input_rg = _optional_bool("input_requires_grad", input_requires_grad)
    if input_rg is None:
        input_rg = ckpt == "full"
    input_rg = input_rg or g.full

    style = _hf_style(shape)
    if dropout is None:
        dropout = style != "llama"
    h, V, sb = shape.hidden_size, shape.vocab_size, s * b
    scores = not (flash or ckpt == "selective")
    enc_dec = shape.architecture == "encoder-decoder"

    def layer(cross: bool, x_rg: bool, dense: bool = False) -> tuple[dict[str, int], bool]:
        return _layer_terms(
            shape,
            style,
            B,
            M,
            s,
            b,
            dropout,
            scores,
            flash,
            cross=cross,
            s_enc=s,
            activation=activation,
            g=g,
            x_rg=x_rg,
            dense=dense,
        )

    enc_terms, _ = layer(False, True)
    enc_layer = sum(enc_terms.values())
    if enc_dec:
        dec_terms, _ = layer(True, True)
        per_layer_terms, per_layer = dec_terms, sum(dec_terms.values())
        first = enc_layer
    else:
        per_layer_terms, per_layer = enc_terms, enc_layer
        first_terms, _ = layer(False, input_rg)
        first = sum(first_terms.values())
    n_enc, n_dec = shape.num_layers, shape.num_decoder_layers

    n_dense = shape.first_dense_layers if shape.is_moe else 0  # DeepSeek's leading dense blocks
    dense_layer = sum(layer(False, True, dense=True)[0].values()) if n_dense else 0
    recompute = 0
    if ckpt == "full":
        layer_input = B * sb * h
        recompute = max(per_layer, dense_layer)
        layers = (n_enc + n_dec) * layer_input + recompute
        how = f"full recompute: {n_enc + n_dec} x B*s*b*h layer inputs + one layer re-materialised"
    elif n_dense:
        layers = n_dense * dense_layer + (n_enc - n_dense) * enc_layer
        how = f"{n_dense} dense + {n_enc - n_dense} MoE layers x per-layer terms"
    else:
        layers = first + (n_enc - 1) * enc_layer + n_dec * per_layer
        how = f"{n_enc + n_dec} layers x per-layer terms"
        if first != enc_layer:
            how += " (first block: input needs no gradient)"

    # embeddings -------------------------------------------------------------
    stacks = 2 if enc_dec else 1
    embeddings = 0
    if g.full:
        embeddings += stacks * INDEX_BYTES * sb  # ids kept by nn.Embedding's backward
        if shape.learned_positions:
            embeddings += INDEX_BYTES * s  # position ids (1 x s)
    emb_rg = input_rg or enc_dec
    if dropout and emb_rg:
        embeddings += stacks * M * sb * h
    if style == "bert" and emb_rg:
        embeddings += B * sb * h  # embedding LayerNorm input
    if style == "llama":  # rotary cos, sin (shared by all layers); MLA rotates only qk_rope_head_dim
        embeddings += 2 * B * s * (shape.qk_rope_head_dim if shape.is_mla else shape.dim_per_head)
    if enc_dec and g.full:
        embeddings += stacks * INDEX_BYTES * s * s  # relative-position bucket ids (s x s, int64)

    # LM head + loss -----------------------------------------------------------
    final_norm = _norm_terms(style, B, sb * h, g, True) if style != "bert" else 0
    if style == "bert":  # noqa: SIM108 (one comment per case)
        # transform dense input, GELU input, LayerNorm input, decoder input (the dense layers' inputs
        # only when their weights are trained)
        head_inputs = (4 if g.full else 2) * B * sb * h
    else:
        head_inputs = B * sb * h if g.full else 0
    if enc_dec:
        final_norm *= 2  # encoder and decoder final norms
        if g.tr("k_proj", "v_proj"):
            head_inputs += B * sb * h  # the encoder output, read by every cross-attention's K/V projections
        if dropout:
            head_inputs += 2 * M * sb * h  # final dropouts of encoder and decoder
    # HF causal-LM losses upcast logits to fp32 before cross-entropy; BERT's MLM and T5's loss do not.
    log_softmax = FP32 if style in ("llama", "gpt2") else B
    logits = final_norm + head_inputs + (B + log_softmax) * sb * V + INDEX_BYTES * sb

    total = layers + embeddings + logits
    attn = "flash (no s^2 terms)" if flash else ("selective recompute" if ckpt == "selective" else "eager s^2 scores")
    tuning = "full fine-tune" if g.full else f"LoRA r={g.rank} on {', '.join(sorted(g.targets or ()))} (frozen base)"
    formula = (
        f"Korthikanti et al. 2022 per-layer terms, {style}-style layer, {B}-byte values, "
        f"{'dropout' if dropout else 'no dropout'}, {attn}, {tuning}; {how}; "
        f"+ embeddings + LM head/loss ({B}+{log_softmax})*b*s*V"
    )
    return ActivationBreakdown(
        per_layer=per_layer,
        layers=layers,
        embeddings=embeddings,
        logits=logits,
        total=total,
        formula=formula,
        terms=per_layer_terms,
        recompute=recompute,
    )


def _training(
    trainable_linears: Any, rank: Any, copy: Any, lora_bytes: Any, lora_dropout: Any, B: int, M: int
) -> _Train:
    if trainable_linears is None:
        return FULL
    if isinstance(trainable_linears, str) or not isinstance(trainable_linears, Iterable):
        raise CalculatorError(
            "trainable_linears",
            trainable_linears,
            f"None or a set of {', '.join(LORA_LINEARS)}",
            f"None 或 {', '.join(LORA_LINEARS)} 的子集",
        )
    targets = frozenset(trainable_linears)
    if not targets or not targets <= set(LORA_LINEARS):
        raise CalculatorError(
            "trainable_linears",
            sorted(targets),
            f"a non-empty subset of {', '.join(LORA_LINEARS)}",
            f"{', '.join(LORA_LINEARS)} 的非空子集",
        )
    r = positive_int("lora_rank", rank, maximum=MAX_LORA_RANK)
    copy = _choice("lora_input_copy", copy, (True, False))
    lora_dropout = _choice("lora_dropout", lora_dropout, (True, False))
    ab = B if lora_bytes is None else _choice("lora_bytes", lora_bytes, (2, 4))
    # CUDA's fused dropout keeps a 1-byte mask; PyTorch's CPU dropout keeps ``input * noise``'s noise, in
    # the dtype of the tensor dropped (the adapter's).
    mask = (M if M == MASK_BYTES else ab) if lora_dropout else 0
    return _Train(targets=targets, rank=r, ab=ab, copy=copy or lora_dropout, mask=mask)
