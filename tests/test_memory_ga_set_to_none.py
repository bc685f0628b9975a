"""Gradient accumulation and ``zero_grad(set_to_none=True)``: measured peaks vs calculators.memory.

What is measured: the bytes of every tensor storage allocated *during* one full optimizer step
(GA micro-batches of forward + backward, ``optimizer.step()``, ``optimizer.zero_grad()``) on a tiny
randomly initialised LLaMA (CPU, fp32, eager attention, torch AdamW with ``foreach=False``), after two
warm-up steps so the optimizer states already exist. A ``TorchDispatchMode`` sees every ATen op's
outputs; each new storage is counted once at its ``nbytes`` and dropped when its C++ storage dies
(``StorageWeakRef.expired()``, checked before every op), so ``peak`` is the highest sum of live bytes.
Weights, optimizer states, inputs (and with ``set_to_none=False`` the kept ``.grad`` buffers) were
allocated before and are not counted.

Measured (torch 2.13 CPU; G = 4 bytes × 125,248 parameters = 500,992 B):

==========================================  ==========  ==========  ==========
h64 L2 a4 kv2 V256, b2 s64                  GA=1        GA=2        GA=8
==========================================  ==========  ==========  ==========
set_to_none=True                            A           A + G       A + G
set_to_none=False (+ G kept from before)    A + G       A + G       A + G
==========================================  ==========  ==========  ==========

GA=2 − GA=1 equals G to the byte (asserted within 2 %), GA=2 == GA=8 exactly. With activations
smaller than the gradients (b1 s8, V1024) the GA=1 peak is the optimizer step's (gradients + AdamW
temporaries), not gradients + activations: the estimator's ``max(activations, gradients)`` at GA=1.
"""

from __future__ import annotations

import pytest
import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from calculators import estimate_memory
from calculators.units import format_gib
from tests import activation_probe as P


class LiveBytes(TorchDispatchMode):
    """Peak of live tensor-storage bytes created under this mode (storages in ``known`` are ignored)."""

    def __init__(self, known: list[torch.Tensor]) -> None:
        super().__init__()
        self.known = {t.untyped_storage()._cdata for t in known}
        self.refs: dict[int, tuple[StorageWeakRef, int]] = {}
        self.live = 0
        self.peak = 0

    def _sweep(self) -> None:
        for key in [k for k, (ref, _) in self.refs.items() if ref.expired()]:
            self.live -= self.refs.pop(key)[1]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self._sweep()
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                st = t.untyped_storage()
                key = st._cdata
                if key not in self.known and key not in self.refs:
                    self.refs[key] = (StorageWeakRef(st), st.nbytes())
                    self.live += st.nbytes()
        self.peak = max(self.peak, self.live)
        return out


def _step(model, opt, batches, set_to_none: bool) -> None:
    for inp in batches:
        out = model(**inp)
        (out.loss / len(batches)).backward()
        del out
    opt.step()
    opt.zero_grad(set_to_none=set_to_none)


def measure_step_peak(ga: int, b: int, s: int, set_to_none: bool = True, **shape_kw) -> tuple[int, int, dict]:
    """(peak bytes allocated during one optimizer step, gradient bytes G, the model's config.json dict)."""
    torch.manual_seed(0)
    model, shape = P.tiny_llama(**shape_kw)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
    warm = [P.inputs_for(shape, b, s, seed=99)]
    for _ in range(2):
        _step(model, opt, warm, set_to_none)
    batches = [P.inputs_for(shape, b, s, seed=i) for i in range(ga)]
    known = list(model.parameters()) + list(model.buffers())
    known += [v for st in opt.state.values() for v in st.values() if torch.is_tensor(v)]
    known += [v for inp in batches for v in inp.values()]
    if not set_to_none:
        known += [p.grad for p in model.parameters()]
    with LiveBytes(known) as tracker:
        _step(model, opt, batches, set_to_none)
    grad_bytes = 4 * sum(p.numel() for p in model.parameters())
    return tracker.peak, grad_bytes, model.config.to_dict()


BIG_ACT = dict(hidden=64, layers=2, heads=4, kv_heads=2, vocab=256)  # activations >> gradients at b2 s64
B, S = 2, 64


@pytest.fixture(scope="module")
def big_act():
    peaks = {ga: measure_step_peak(ga, B, S, **BIG_ACT) for ga in (1, 2, 8)}
    keep, _, _ = measure_step_peak(1, B, S, set_to_none=False, **BIG_ACT)
    return peaks, keep


def _estimate(cfg: dict, ga: int, set_to_none: bool = True):
    return estimate_memory(
        dict(
            hf_config=cfg,
            precision="fp32",
            optimizer="adamw",
            flash_attention=False,
            train_micro_batch_size_per_gpu=B,
            seq_len=S,
            gradient_accumulation_steps=ga,
            zero_grad_set_to_none=set_to_none,
            cuda_context_gb=0,
        )
    )


def test_ga2_equals_ga8_and_adds_one_gradient_buffer_over_ga1(big_act):
    peaks, _ = big_act
    (p1, g, _), (p2, _, _), (p8, _, _) = peaks[1], peaks[2], peaks[8]
    assert p2 == p8  # constant in GA
    assert abs((p2 - p1) - g) <= 0.02 * g, (p1, p2, g)  # + one gradient-sized buffer


def test_set_to_none_false_keeps_the_buffer_at_ga1(big_act):
    peaks, keep = big_act
    (p2, g, _) = peaks[2]
    assert abs((keep + g) - p2) <= 0.02 * g  # GA=1 with kept buffers == GA>=2 with set_to_none


def test_estimator_agrees_with_the_measured_difference(big_act):
    peaks, _ = big_act
    (p1, g, cfg), (p2, _, _) = peaks[1], peaks[2]
    e1, e2, e8 = (_estimate(cfg, ga) for ga in (1, 2, 8))
    assert e1.gradients == g  # fp32 gradients: 4 B/param, the same count as the model
    assert e2.total_per_gpu == e8.total_per_gpu
    assert e2.total_per_gpu - e1.total_per_gpu == e2.ga_extra_over_ga1
    assert abs((e2.total_per_gpu - e1.total_per_gpu) - (p2 - p1)) <= 0.02 * g
    keep1 = _estimate(cfg, 1, set_to_none=False)
    assert keep1.total_per_gpu == e2.total_per_gpu
    assert e1.gradients_live_during_forward is False and e2.gradients_live_during_forward is True


def test_small_activations_ga1_peak_is_not_gradients_plus_activations():
    """b1 s8 with V1024: the GA=1 peak already holds all gradients (the optimizer step), so GA>=2 adds less than G."""
    kw = dict(hidden=128, layers=2, heads=4, kv_heads=2, vocab=1024)
    p1, g, _ = measure_step_peak(1, 1, 8, **kw)
    p2, _, _ = measure_step_peak(2, 1, 8, **kw)
    assert p1 >= g  # gradients do appear at GA=1 (after backward)
    assert 0 <= p2 - p1 < 0.25 * g  # ... so GA>=2 adds far less than one buffer


# ------------------------------------------------------------------ DeepSpeed stages (from its source)


def _ds(stage: int, ga: int, set_to_none: bool = True):
    return estimate_memory(
        dict(
            model="llama-2-7b",
            zero_stage=stage,
            world_size=8,
            seq_len=1024,
            gradient_accumulation_steps=ga,
            zero_grad_set_to_none=set_to_none,
        )
    )


@pytest.mark.parametrize("stage", [1, 2])
def test_zero_1_2_free_gradients_after_step_whatever_the_flag(stage):
    for flag in (True, False):
        ga1, ga2, ga64 = _ds(stage, 1, flag), _ds(stage, 2, flag), _ds(stage, 64, flag)
        assert ga1.total_per_gpu < ga2.total_per_gpu == ga64.total_per_gpu
        assert ga2.total_per_gpu - ga1.total_per_gpu <= ga2.gradients
        assert "ZeRO-" in ga2.gradient_accumulation_note_en


def test_zero3_keeps_its_gradient_partition_buffer():
    assert _ds(3, 1).total_per_gpu == _ds(3, 2).total_per_gpu == _ds(3, 64).total_per_gpu
    assert "ZeRO-3" in _ds(3, 1).gradient_accumulation_note_en


def test_notes_state_the_difference_in_both_languages():
    e = estimate_memory(dict(model="llama-2-7b", precision="amp-bf16", seq_len=1024, gradient_accumulation_steps=8))
    extra = format_gib(e.ga_extra_over_ga1)
    assert 0 < e.ga_extra_over_ga1 <= e.gradients
    assert extra in e.gradient_accumulation_note_en
    assert extra in e.gradient_accumulation_note_zh
    assert "set_to_none=True" in e.gradient_accumulation_note_en
