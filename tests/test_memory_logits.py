"""The LM head + loss at its peak (start of backward), measured on a tiny LLaMA, vs calculators.memory.

Measured with the live-bytes dispatch tracker of tests/test_memory_ga_set_to_none.py (CPU, torch 2.13,
transformers 5.23): one forward + ``loss.backward()`` of a 1-layer LLaMA with h=16 at b=2, s=256, once
with V=4000 and once with V=8000; the difference of the two peaks divided by b·s·ΔV is the cost of one
logit at peak (the tiny hidden size keeps everything else, LM-head gradients included, below 1 %):

====================  ========================  =====================================
dtype                 outputs dropped (Trainer)  outputs kept through backward
====================  ========================  =====================================
fp32                  12.0 B/logit               16.0 B/logit
bf16                  12.0 B/logit               14.0 B/logit
====================  ========================  =====================================

12 = fp32 log-softmax output saved by cross-entropy + its fp32 gradient + the fp32 gradient of the
logits; the kept logits add their own 2 (bf16) or 4 (fp32) bytes. The old estimate used the saved
tensors only (B + 4 = 6 or 8 B/logit).
"""

from __future__ import annotations

import pytest
import torch

from calculators import estimate_memory
from tests import activation_probe as P
from tests.test_memory_ga_set_to_none import LiveBytes

B_, S_ = 2, 256
SHAPE = dict(hidden=16, layers=1, heads=2, kv_heads=1, inter=32)


def _peak(vocab: int, dtype: torch.dtype, keep: bool) -> tuple[int, dict]:
    torch.manual_seed(0)
    model, shape = P.tiny_llama(vocab=vocab, dtype=dtype, **SHAPE)
    inp = P.inputs_for(shape, B_, S_)
    known = list(model.parameters()) + list(model.buffers()) + list(inp.values())
    with LiveBytes(known) as tracker:
        out = model(**inp)
        loss = out.loss
        if not keep:
            del out
        loss.backward()
        del loss
    return tracker.peak, model.config.to_dict()


@pytest.mark.parametrize(
    "dtype,keep", [(torch.float32, False), (torch.float32, True), (torch.bfloat16, False), (torch.bfloat16, True)]
)
def test_bytes_per_logit_at_peak_match_the_estimator(dtype, keep):
    (p1, cfg1), (p2, cfg2) = _peak(4000, dtype, keep), _peak(8000, dtype, keep)
    per_logit = (p2 - p1) / (B_ * S_ * 4000)
    B = 4 if dtype == torch.float32 else 2
    assert per_logit == pytest.approx(12 + (B if keep else 0), rel=0.02)
    precision = "fp32" if dtype == torch.float32 else "bf16"
    kw = dict(
        precision=precision,
        train_micro_batch_size_per_gpu=B_,
        seq_len=S_,
        flash_attention=False,
        loss_implementation="hf-keep-outputs" if keep else "hf",
    )
    e1, e2 = (estimate_memory(dict(kw, hf_config=c)) for c in (cfg1, cfg2))
    predicted = e2.details["activations_logits"] - e1.details["activations_logits"]
    assert predicted == pytest.approx(p2 - p1, rel=0.03)


def test_chunked_loss_drops_the_logits_and_two_figures_are_reported():
    base = dict(model="llama-3-8b", seq_len=8192, finetune="lora")
    hf, chunked = estimate_memory(base), estimate_memory(dict(base, loss_implementation="chunked"))
    assert hf.total_per_gpu - chunked.total_per_gpu == 12 * 8192 * 128256
    # With full checkpointing the block re-materialised in backward is never alive with the logits: a chunked loss
    # then saves the logits less that block (the larger of the two sets the peak).
    ck = dict(base, gradient_checkpointing="full")
    hf_ck, chunked_ck = estimate_memory(ck), estimate_memory(dict(ck, loss_implementation="chunked"))
    assert hf_ck.details["activations_layers"] < chunked_ck.details["activations_layers"]
    saved = hf_ck.total_per_gpu - chunked_ck.total_per_gpu
    assert saved == 12 * 8192 * 128256 - (
        chunked_ck.details["activations_layers"] - hf_ck.details["activations_layers"]
    )
    assert 0 < saved < 12 * 8192 * 128256
    assert hf.peak_allocated == hf.total_per_gpu - hf.details["cuda_context"]
    assert hf.nvidia_smi == int(hf.peak_allocated * 1.10) + hf.details["cuda_context"]
    assert any("allocator_slack_fraction" in a for a in hf.assumptions_en)


def _litgpt_ce(logits, targets, chunk_size=128):
    """The computation of LitGPT's chunked_cross_entropy (litgpt/utils.py at 00af8b0d): per-chunk
    cross-entropy on the 16-bit logits, reduction='none', concatenated and averaged."""
    F = torch.nn.functional
    if isinstance(logits, list):
        pairs = zip(
            [c.reshape(-1, c.size(-1)) for c in logits],
            [t.reshape(-1) for t in targets.split(logits[0].size(1), dim=1)],
            strict=True,
        )
    else:
        pairs = zip(
            logits.reshape(-1, logits.size(-1)).split(chunk_size), targets.reshape(-1).split(chunk_size), strict=True
        )
    return torch.cat([F.cross_entropy(a, b, reduction="none") for a, b in pairs]).mean()


def _litgpt_peak(vocab: int, head_chunks: bool, b: int = 2, s: int = 512, h: int = 8) -> int:
    """Peak live bytes of LitGPT's LM head + loss in bf16: LoRA recipe (lm_head_chunk_size=128, frozen head)
    or full recipe (one logits tensor, trainable head); the caller keeps ``logits`` through backward."""
    torch.manual_seed(0)
    head = torch.nn.Linear(h, vocab, bias=False).to(torch.bfloat16)
    head.weight.requires_grad_(not head_chunks)
    x = torch.randn(b, s, h, dtype=torch.bfloat16, requires_grad=True)
    y = torch.randint(0, vocab, (b, s))
    with LiveBytes([head.weight, x, y]) as tracker:
        if head_chunks:
            logits = [head(xi) for xi in x.split(128, dim=1)]
            logits[-1] = logits[-1][..., :-1, :]
            loss = _litgpt_ce(logits, y[..., 1:])
        else:
            logits = head(x)
            loss = _litgpt_ce(logits[..., :-1, :], y[..., 1:])
        loss.backward()
        del loss, logits
    return tracker.peak


@pytest.mark.parametrize("impl,head_chunks", [("lm-head-chunks", True), ("ce-chunks", False)])
def test_litgpt_16bit_chunked_losses_match_the_estimator(impl, head_chunks):
    b, s, dv = 2, 512, 2000
    measured = _litgpt_peak(4000, head_chunks) - _litgpt_peak(2000, head_chunks)
    kw = dict(
        precision="bf16",
        train_micro_batch_size_per_gpu=b,
        seq_len=s,
        loss_implementation=impl,
        hidden_size=8,
        num_layers=1,
        num_attention_heads=1,
        num_params=1e6,
    )
    e1, e2 = (estimate_memory(dict(kw, vocab_size=v)) for v in (2000, 4000))
    predicted = e2.details["activations_logits"] - e1.details["activations_logits"]
    assert measured / (b * s * dv) == pytest.approx(5.0 if head_chunks else 6.0, rel=0.02)
    assert predicted == pytest.approx(measured, rel=0.03)
