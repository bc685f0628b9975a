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

from numbers import Integral
from typing import Any, Literal

from pydantic import BaseModel

from .errors import CalculatorError
from .presets import ModelShape

MAX_MICRO_BATCH = 1_000_000
MAX_SEQ_LEN = 16_777_216  # 16M tokens
Recompute = Literal["none", "selective", "full"]
MASK_BYTES = 1  # dropout masks are stored as bool (1 byte)
FP32 = 4
INDEX_BYTES = 8  # int64 token ids / labels

__all__ = ["korthikanti_layer_bytes", "ActivationBreakdown", "activation_bytes"]


# ------------------------------------------------------------------ validation

def _positive_int(field: str, value: Any, upper: int) -> int:
    accepted_en, accepted_zh = f"a whole number from 1 to {upper}", f"1 到 {upper} 之间的整数"
    if isinstance(value, bool) or not isinstance(value, Integral):
        if isinstance(value, float) and value.is_integer() and 1 <= value <= upper:
            return int(value)
        raise CalculatorError(field, value, accepted_en, accepted_zh,
                              reason_en=f"'{field}' must be a whole number, got {type(value).__name__} {value!r}.",
                              reason_zh=f"'{field}' 必须是整数，收到 {type(value).__name__} {value!r}。")
    if not 1 <= int(value) <= upper:
        raise CalculatorError(field, value, accepted_en, accepted_zh)
    return int(value)


def _choice(field: str, value: Any, options: tuple[Any, ...]) -> Any:
    if isinstance(value, bool) and not all(isinstance(o, bool) for o in options) or value not in options:
        shown = ", ".join(repr(o) for o in options)
        raise CalculatorError(field, value, f"one of {shown}", f"以下之一：{shown}")
    return value


def _optional_bool(field: str, value: Any) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise CalculatorError(field, value, "True, False or None (the architecture's default)",
                              "True、False 或 None（按架构默认）")
    return value


# ------------------------------------------------------------------ the paper

def korthikanti_layer_bytes(seq_len: int, micro_batch: int, hidden: int, heads: int,
                            recompute: Recompute = "none") -> int:
    """Bytes one GPT layer keeps for backward at 16-bit, Korthikanti et al. 2022, eqs. (1)-(2) and sec. 5.

    * ``"none"``:      ``s*b*h*(34 + 5*a*s/h)`` = ``34*s*b*h + 5*a*s^2*b``
    * ``"selective"``: ``34*s*b*h`` (attention scores, softmax and its dropout recomputed;
      the same number holds with flash attention)
    * ``"full"``:      ``2*s*b*h`` (only the layer input; see :func:`activation_bytes` for the
      one layer that is re-materialised during backward)
    """
    s = _positive_int("seq_len", seq_len, MAX_SEQ_LEN)
    b = _positive_int("micro_batch", micro_batch, MAX_MICRO_BATCH)
    h = _positive_int("hidden", hidden, 10**7)
    a = _positive_int("heads", heads, 10**5)
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


def _hf_style(shape: ModelShape) -> str:
    if shape.architecture == "encoder-decoder":
        return "t5"
    if shape.norm == "rmsnorm":
        return "llama"
    return "gpt2" if shape.architecture == "decoder" else "bert"


def _norm_terms(style: str, B: int, sbh: int) -> int:
    """What one normalisation keeps, its output excluded (the next linear layer's input counts that).

    LayerNorm (PyTorch native): its input, B per element.
    RMSNorm, HF LLaMA: ``x.to(fp32)`` is saved by ``pow`` and ``x*rsqrt`` (4 bytes) and the
    normalised ``x`` cast back to the model dtype is saved by ``weight * x`` (B).
    RMSNorm, HF T5: the same, and at 16-bit also the 16-bit input (``x * rsqrt`` uses it).
    """
    if style in ("gpt2", "bert"):
        return B * sbh
    extra = B if (style == "t5" and B < FP32) else 0
    return (FP32 + B + extra) * sbh


def _attention_terms(style: str, B: int, M: int, s_q: int, s_kv: int, b: int, h: int, shape: ModelShape,
                     dropout: bool, scores: bool, flash: bool, prefix: str) -> dict[str, int]:
    """One attention block (self- or cross-), following Korthikanti et al. sec. 4.1.

    Q/K/V projections' input, Q and K for ``Q K^T`` (K repeated to all heads: HF's ``repeat_kv``
    materialises GQA heads before the matmul), the softmax output, the dropout mask and
    dropout output, V for ``P V``, the output projection's input, and the residual dropout mask.
    HF LLaMA computes softmax in fp32 and casts back: 4 bytes plus, at 16-bit, a B-byte copy
    (GPT-2, BERT and T5 keep the softmax output in the model dtype).
    """
    a, inner = shape.num_attention_heads, shape.num_attention_heads * shape.dim_per_head
    t: dict[str, int] = {}
    t[f"{prefix}qkv_input"] = B * s_q * b * h  # cross-attention: Q's input; K/V read the encoder output (counted once)
    t[f"{prefix}q"] = B * s_q * b * inner
    # eager attention repeats GQA's K/V to all heads before the matmuls; SDPA/flash kernels read
    # the kv_heads-sized K and V directly (and their output is the output projection's input).
    kv_width = shape.kv_heads * shape.dim_per_head if flash else inner
    t[f"{prefix}k"] = B * s_kv * b * kv_width
    t[f"{prefix}v"] = B * s_kv * b * kv_width
    if scores:
        ass = a * s_q * s_kv * b
        # fp32 softmax output; its 16-bit copy is saved too unless dropout consumes it (then the
        # dropout output is what P V keeps).
        softmax_bytes = (FP32 + (B if B < FP32 and not dropout else 0)) if style == "llama" else B
        t[f"{prefix}softmax"] = softmax_bytes * ass
        if dropout:
            t[f"{prefix}attn_dropout_mask"] = M * ass
            t[f"{prefix}attn_dropout_out"] = B * ass
    t[f"{prefix}out_proj_input"] = B * s_q * b * inner
    if dropout:
        t[f"{prefix}residual_dropout_mask"] = M * s_q * b * h
    return t


def _mlp_terms(style: str, B: int, M: int, sb: int, h: int, i: int, gated: bool, dropout: bool,
               activation: str = "gelu") -> dict[str, int]:
    """Plain MLP (paper): fc1 input, activation input, fc2 input, dropout mask -> B*h + 2*B*i + M*h.
    Gated (SwiGLU): input, gate (SiLU input), SiLU output and up (the product's factors),
    down-projection input -> B*(h + 4*i). HF T5 also applies dropout between the activation and
    the second matrix: one more M*i mask (its output is the second matrix's input).
    ``activation="gelu_new"`` (HF GPT-2's default, a tanh-GELU written as Python ops) saves
    x, tanh(...), 0.5*x and 1+tanh(...) instead of x: 3*B*i more."""
    t = {"mlp_input": B * sb * h}
    if gated:
        t["mlp_gate_up_act"] = 3 * B * sb * i
        t["mlp_down_input"] = B * sb * i
    else:
        t["mlp_act_input"] = B * sb * i
        t["mlp_fc2_input"] = B * sb * i
        if activation == "gelu_new":
            t["mlp_gelu_new_intermediates"] = 3 * B * sb * i
    if dropout:
        if style == "t5":
            t["mlp_inner_dropout_mask"] = M * sb * i
        t["mlp_dropout_mask"] = M * sb * h
    return t


def _layer_terms(shape: ModelShape, style: str, B: int, M: int, s: int, b: int, dropout: bool, scores: bool,
                 flash: bool, cross: bool, s_enc: int, activation: str = "gelu") -> dict[str, int]:
    h, sb = shape.hidden_size, s * b
    t: dict[str, int] = {}
    norms = 3 if cross else 2
    for n in range(norms):
        t[f"norm{n + 1}"] = _norm_terms(style, B, sb * h)
    t.update(_attention_terms(style, B, M, s, s, b, h, shape, dropout, scores, flash, "attn_"))
    if cross:
        t.update(_attention_terms(style, B, M, s, s_enc, b, h, shape, dropout, scores, flash, "xattn_"))
    t.update(_mlp_terms(style, B, M, sb, h, shape.intermediate_size, shape.mlp == "gated", dropout, activation))
    return t


def activation_bytes(shape: ModelShape, micro_batch: int, seq_len: int, *, bytes_per_value: int = 2,
                     flash_attention: bool = False, checkpointing: Recompute = "none",
                     dropout: bool | None = None, mask_bytes: int | None = None,
                     activation: Literal["gelu", "gelu_new"] = "gelu") -> ActivationBreakdown:
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
    """
    if not isinstance(shape, ModelShape):
        raise CalculatorError("shape", shape, "a calculators.presets.ModelShape", "calculators.presets.ModelShape 对象")
    b = _positive_int("micro_batch", micro_batch, MAX_MICRO_BATCH)
    s = _positive_int("seq_len", seq_len, MAX_SEQ_LEN)
    B = _choice("bytes_per_value", bytes_per_value, (2, 4))
    flash = _choice("flash_attention", flash_attention, (True, False))
    ckpt = _choice("checkpointing", checkpointing, ("none", "selective", "full"))
    dropout = _optional_bool("dropout", dropout)
    M = MASK_BYTES if mask_bytes is None else _choice("mask_bytes", mask_bytes, (1, 2, 4))
    activation = _choice("activation", activation, ("gelu", "gelu_new"))
    if activation == "gelu_new" and shape.mlp == "gated":
        raise CalculatorError("activation", activation, "'gelu' for gated (SwiGLU/GeGLU) MLPs",
                              "门控 MLP（SwiGLU/GeGLU）只接受 'gelu'")

    style = _hf_style(shape)
    if dropout is None:
        dropout = style != "llama"
    h, V, sb = shape.hidden_size, shape.vocab_size, s * b
    scores = not (flash or ckpt == "selective")
    enc_dec = shape.architecture == "encoder-decoder"

    enc_terms = _layer_terms(shape, style, B, M, s, b, dropout, scores, flash, cross=False, s_enc=s, activation=activation)
    enc_layer = sum(enc_terms.values())
    if enc_dec:
        dec_terms = _layer_terms(shape, style, B, M, s, b, dropout, scores, flash, cross=True, s_enc=s, activation=activation)
        per_layer_terms, per_layer = dec_terms, sum(dec_terms.values())
    else:
        per_layer_terms, per_layer = enc_terms, enc_layer
    n_enc, n_dec = shape.num_layers, shape.num_decoder_layers

    if ckpt == "full":
        layer_input = B * sb * h
        layers = (n_enc + n_dec) * layer_input + per_layer
        how = f"full recompute: {n_enc + n_dec} x B*s*b*h layer inputs + one layer re-materialised"
    else:
        layers = n_enc * enc_layer + n_dec * per_layer
        how = f"{n_enc + n_dec} layers x per-layer terms"

    # embeddings -------------------------------------------------------------
    stacks = 2 if enc_dec else 1
    embeddings = stacks * INDEX_BYTES * sb  # ids kept by nn.Embedding's backward
    if shape.learned_positions:
        embeddings += INDEX_BYTES * s  # position ids (1 x s)
    if dropout:
        embeddings += stacks * M * sb * h
    if style == "bert":
        embeddings += B * sb * h  # embedding LayerNorm input
    if style == "llama":
        embeddings += 2 * B * s * shape.dim_per_head  # rotary cos, sin (shared by all layers)
    if enc_dec:
        embeddings += stacks * INDEX_BYTES * s * s  # relative-position bucket ids (s x s, int64)

    # LM head + loss -----------------------------------------------------------
    final_norm = _norm_terms(style, B, sb * h) if style != "bert" else 0
    if style == "bert":
        head_inputs = 4 * B * sb * h  # transform dense input, GELU input, LayerNorm input, decoder input
    else:
        head_inputs = B * sb * h
    if enc_dec:
        final_norm *= 2  # encoder and decoder final norms
        head_inputs += B * sb * h  # the encoder output, read by every cross-attention's K/V projections
        if dropout:
            head_inputs += 2 * M * sb * h  # final dropouts of encoder and decoder
    # HF causal-LM losses upcast logits to fp32 before cross-entropy; BERT's MLM and T5's loss do not.
    log_softmax = FP32 if style in ("llama", "gpt2") else B
    logits = final_norm + head_inputs + (B + log_softmax) * sb * V + INDEX_BYTES * sb

    total = layers + embeddings + logits
    attn = "flash (no s^2 terms)" if flash else ("selective recompute" if ckpt == "selective" else "eager s^2 scores")
    formula = (f"Korthikanti et al. 2022 per-layer terms, {style}-style layer, {B}-byte values, "
               f"{'dropout' if dropout else 'no dropout'}, {attn}; {how}; "
               f"+ embeddings + LM head/loss ({B}+{log_softmax})*b*s*V")
    return ActivationBreakdown(per_layer=per_layer, layers=layers, embeddings=embeddings, logits=logits,
                               total=total, formula=formula, terms=per_layer_terms)
