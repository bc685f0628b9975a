"""What torch autocast (``amp-fp16`` / ``amp-bf16``: fp32 weights, 16-bit matmuls) keeps beyond pure 16-bit.

:func:`calculators.activations.activation_bytes` counts a model whose tensors are all 16-bit. Under
``torch.autocast`` the model stays fp32 and only the ops on autocast's lower-precision list (linear,
matmul, bmm, addmm, SDPA, ...) run in 16 bits; everything else runs in the dtype of its inputs, and
the ops on the fp32 list (CUDA: softmax, log_softmax, layer_norm, cross_entropy, pow, rsqrt, ...) in
fp32. Measured on tiny random Hugging Face models (tests/test_amp_measured.py, torch 2.13 CPU,
transformers 5.x), the differences per micro-batch of ``s`` tokens × ``b`` sequences are:

* the residual stream stays fp32 (the embedding lookup returns fp32 and ``fp32 + 16-bit`` promotes),
  so every norm keeps a 4-byte tensor where pure 16-bit keeps a 2-byte one: LayerNorm's input,
  RMSNorm's normalised output (HF LLaMA: ``weight * x.to(input_dtype)`` with input_dtype fp32);
* each linear casts its fp32 input to its own 16-bit copy (autocast caches casts of leaf weights
  only, never of activations), so Q, K and V projections reading one normalised input keep three
  copies instead of one shared tensor, gate and up projections two; GPT-2's fused ``c_attn`` and
  plain MLPs keep one, as before;
* the softmax of eager attention is fp32 where its input is: LLaMA upcasts explicitly (already
  counted), GPT-2 adds the fp32 causal mask (promotion), BERT without a padding mask feeds 16-bit
  scores, which CUDA autocast runs in fp32 (softmax is on CUDA's fp32 list) and CPU autocast does
  not: +2 bytes per score in every case modelled here (CUDA);
* BERT's MLM-head LayerNorm reads the 16-bit GELU output: CUDA autocast saves an fp32 copy (+2 per
  value), CPU does not; BERT's MLM loss runs cross_entropy in fp32 (both lists): +2 per logit;
* dropout on an fp32 tensor (GPT-2/BERT embeddings): CUDA's fused dropout keeps a 1-byte mask
  either way; PyTorch's CPU dropout keeps it in the tensor's dtype (``mask_bytes`` > 1 selects that);
* LLaMA's rotary cos/sin are fp32 (built in the dtype of the fp32 hidden states).

Autocast's op lists (which ops run in 16 bits / fp32 on CUDA and on CPU):
https://docs.pytorch.org/docs/stable/amp.html#autocast-op-reference and
``aten/src/ATen/autocast_mode.cpp`` and ``autocast_mode.h`` (the shared op lists moved there in
pytorch/pytorch#125114, 2024; ``TORCH_LIBRARY_IMPL(aten, AutocastCUDA/AutocastCPU, m)``). CPU's
fp32 list has the losses (cross_entropy_loss, nll_loss, mse_loss, ...) but not softmax, log_softmax or
layer_norm; CUDA's has all of them. Where a model feeds those ops fp32 anyway (LLaMA, GPT-2) the two
devices agree; the BERT terms above are where they differ, and this module gives CUDA's behaviour.

The 16-bit copy of each weight (``cached_cast`` in autocast_mode.cpp: casts of fp32 leaves that require
grad are cached for the autocast region and saved by the matmul for its backward) is weight-sized,
2 bytes per matmul parameter, all alive at the end of the forward pass. It is part of the ``amp-*``
model states (6 bytes/param: fp32 weight + 16-bit copy), not of this module.

Not modelled: T5 (encoder-decoder), LoRA/QLoRA under autocast, MoE experts' routed copies.
Pure Python: no torch import.
"""

from __future__ import annotations

from pydantic import BaseModel

from .errors import CalculatorError
from .presets import ModelShape
from .validate import positive_int

FP32 = 4
HALF = 2  # fp16 and bf16 alike


class AutocastExtra(BaseModel):
    """Bytes autocast keeps beyond a pure 16-bit model, split like :class:`ActivationBreakdown`."""

    layers: int
    embeddings: int
    logits: int
    terms: dict[str, int]

    @property
    def total(self) -> int:
        return self.layers + self.embeddings + self.logits


def autocast_extra_bytes(
    shape: ModelShape,
    micro_batch: int,
    seq_len: int,
    *,
    flash_attention: bool = False,
    checkpointing: str = "none",
    dropout: bool | None = None,
    mask_bytes: int = 1,
) -> AutocastExtra:
    """Extra activation bytes of a full fine-tune under ``torch.autocast`` (16-bit compute, fp32 model).

    Add it to ``activation_bytes(shape, ..., bytes_per_value=2)`` with the same settings. ``mask_bytes``
    as there (1: CUDA's bool dropout mask; 2: CPU, mask in the dropped tensor's dtype).
    """
    if not isinstance(shape, ModelShape):
        raise CalculatorError("shape", shape, "a calculators.presets.ModelShape", "calculators.presets.ModelShape 对象")
    if shape.architecture == "encoder-decoder":
        raise CalculatorError(
            "architecture",
            shape.architecture,
            "a decoder or encoder model (autocast's extra terms are not modelled for T5)",
            "解码器或编码器模型（T5 的 autocast 额外项尚未建模）",
        )
    b = positive_int("micro_batch", micro_batch, maximum=1_000_000)
    s = positive_int("seq_len", seq_len, maximum=16_777_216)
    if checkpointing not in ("none", "selective", "full"):
        raise CalculatorError(
            "checkpointing", checkpointing, "'none', 'selective' or 'full'", "'none'、'selective' 或 'full'"
        )
    for name, value in (("flash_attention", flash_attention), ("dropout", dropout)):
        if not isinstance(value, bool) and not (name == "dropout" and value is None):
            raise CalculatorError(name, value, "True or False", "True 或 False")
    if mask_bytes not in (1, 2, 4):
        raise CalculatorError("mask_bytes", mask_bytes, "1, 2 or 4", "1、2 或 4")
    style = "llama" if shape.norm == "rmsnorm" else ("gpt2" if shape.architecture == "decoder" else "bert")
    if dropout is None:
        dropout = style != "llama"
    d = FP32 - HALF  # what a value kept in fp32 instead of 16 bits adds
    sbh = s * b * shape.hidden_size
    t: dict[str, int] = {}
    t["norms_fp32"] = 2 * d * sbh  # two norms per block: LayerNorm input / RMSNorm output in fp32
    if style != "gpt2":
        t["qkv_input_copies"] = 2 * HALF * sbh  # three 16-bit copies of one input instead of one
    if shape.mlp == "gated":
        t["gate_up_input_copies"] = HALF * sbh  # two copies instead of one
    if not flash_attention and checkpointing == "none" and style != "llama":
        t["softmax_fp32"] = d * shape.num_attention_heads * s * s * b
    per_layer = sum(t.values())
    n = shape.num_layers
    layers = n * d * sbh + per_layer if checkpointing == "full" else n * per_layer  # fp32 block inputs
    embeddings = 0
    logits = 0
    if style == "llama":
        embeddings += 2 * d * s * shape.dim_per_head  # rotary cos and sin in fp32
        logits += d * sbh  # final RMSNorm output
    else:
        if dropout and mask_bytes > 1:
            embeddings += (FP32 - mask_bytes) * sbh  # CPU dropout mask in the fp32 dtype
        if style == "gpt2":
            logits += d * sbh  # ln_f input
        else:
            embeddings += d * sbh  # embedding LayerNorm input
            logits += d * sbh + d * s * b * shape.vocab_size  # MLM-head LayerNorm input; fp32 cross-entropy
    return AutocastExtra(layers=layers, embeddings=embeddings, logits=logits, terms=t)
