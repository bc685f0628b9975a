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


@pytest.mark.parametrize("dtype,keep", [(torch.float32, False), (torch.float32, True), (torch.bfloat16, False),
                                        (torch.bfloat16, True)])
def test_bytes_per_logit_at_peak_match_the_estimator(dtype, keep):
    (p1, cfg1), (p2, cfg2) = _peak(4000, dtype, keep), _peak(8000, dtype, keep)
    per_logit = (p2 - p1) / (B_ * S_ * 4000)
    B = 4 if dtype == torch.float32 else 2
    assert per_logit == pytest.approx(12 + (B if keep else 0), rel=0.02)
    precision = "fp32" if dtype == torch.float32 else "bf16"
    kw = dict(precision=precision, train_micro_batch_size_per_gpu=B_, seq_len=S_, flash_attention=False,
              loss_implementation="hf-keep-outputs" if keep else "hf")
    e1, e2 = (estimate_memory(dict(kw, hf_config=c)) for c in (cfg1, cfg2))
    predicted = e2.details["activations_logits"] - e1.details["activations_logits"]
    assert predicted == pytest.approx(p2 - p1, rel=0.03)


def test_chunked_loss_drops_the_logits_and_two_figures_are_reported():
    base = dict(model="llama-3-8b", seq_len=8192, finetune="lora", gradient_checkpointing="full")
    hf, chunked = estimate_memory(base), estimate_memory(dict(base, loss_implementation="chunked"))
    assert hf.total_per_gpu - chunked.total_per_gpu == 12 * 8192 * 128256
    assert hf.peak_allocated == hf.total_per_gpu - hf.details["cuda_context"]
    assert hf.nvidia_smi == int(hf.peak_allocated * 1.10) + hf.details["cuda_context"]
    assert any("allocator_slack_fraction" in a for a in hf.assumptions_en)
