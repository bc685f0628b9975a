"""Optimizer step in backward and activation offloading (torchtune) in calculators.memory.

Optimizer in backward is measured on CPU: a tiny random LLaMA (fp32, eager) whose every parameter has its own
``torch.optim.AdamW`` stepped by a ``register_post_accumulate_grad_hook`` that then frees the gradient, as
torchtune's ``OptimizerInBackward`` and the PyTorch tutorial "How to save memory by fusing the optimizer step into
the backward pass" do. Live ``.grad`` bytes are summed inside every hook; the step's peak of all live tensor bytes
is taken with ``LiveBytes`` (tests/test_memory_ga_set_to_none.py), optimizer states allocated beforehand.

Measured (torch 2.13 CPU), LLaMA h64 L2 a4 kv2:

======================  =============  ===============  ==========  ===========================
case                    largest grad   max live grads    G (all)     peak normal → in backward
======================  =============  ===============  ==========  ===========================
b2 s64, V256            65,536         65,536            500,992     2,337,292 → 2,337,288
b1 s8, V1024            262,144        262,144           894,208     1,418,752 → 918,696
======================  =============  ===============  ==========  ===========================

So at most one parameter's gradient is alive (the largest, to the byte), and the saving is large only where the
gradients outweigh the activations (the GA=1 peak was the optimizer step's). The estimate keeps that one
gradient beside all activations, an over-count of at most one parameter's gradient.

Activation offloading cannot be measured on a CPU (host and "device" are the same memory); its tests are
invariants of the model: what leaves the GPU shows up in cpu_total, byte for byte.
"""

from __future__ import annotations

import pytest
import torch

from calculators import estimate_memory
from calculators.errors import CalculatorError
from tests import activation_probe as P
from tests.test_memory_ga_set_to_none import LiveBytes, measure_step_peak

SMALL_ACT = dict(hidden=64, layers=2, heads=4, kv_heads=2, vocab=1024)  # gradients outweigh b1 s8 activations


def measure_in_backward(b: int, s: int, **shape_kw) -> tuple[int, int, int, dict]:
    """(peak live bytes of one step, max live .grad bytes, largest parameter's gradient bytes, config dict)."""
    torch.manual_seed(0)
    model, shape = P.tiny_llama(**shape_kw)
    opts = {p: torch.optim.AdamW([p], lr=1e-3, foreach=False) for p in model.parameters()}
    live = {"max": 0}

    def hook(p: torch.Tensor) -> None:
        now = sum(q.grad.untyped_storage().nbytes() for q in model.parameters() if q.grad is not None)
        live["max"] = max(live["max"], now)
        opts[p].step()
        opts[p].zero_grad(set_to_none=True)

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(hook)

    def step(inp: dict[str, torch.Tensor]) -> None:
        out = model(**inp)
        out.loss.backward()
        del out

    for _ in range(2):  # warm-up: optimizer states exist before the measured step
        step(P.inputs_for(shape, b, s, seed=99))
    inp = P.inputs_for(shape, b, s, seed=0)
    known = list(model.parameters()) + list(model.buffers()) + list(inp.values())
    known += [v for o in opts.values() for st in o.state.values() for v in st.values() if torch.is_tensor(v)]
    live["max"] = 0
    with LiveBytes(known) as tracker:
        step(inp)
    largest = max(4 * p.numel() for p in model.parameters())
    return tracker.peak, live["max"], largest, model.config.to_dict()


def _estimate(cfg: dict, b: int, s: int, **kw):
    return estimate_memory(
        dict(
            hf_config=cfg,
            precision="fp32",
            flash_attention=False,
            train_micro_batch_size_per_gpu=b,
            seq_len=s,
            cuda_context_gb=0,
            **kw,
        )
    )


@pytest.fixture(scope="module")
def small_act():
    return measure_in_backward(1, 8, **SMALL_ACT), measure_step_peak(1, 1, 8, **SMALL_ACT)[0]


def test_only_the_largest_parameters_gradient_is_alive(small_act):
    (peak, max_live, largest, cfg), _ = small_act
    assert max_live == largest
    est = _estimate(cfg, 1, 8, optimizer_in_backward=True)
    assert est.gradients == largest  # the estimator's one gradient is that parameter's, to the byte
    assert est.gradients_live_during_forward is True


def test_saving_matches_measurement_when_gradients_dominate(small_act):
    (peak, _, largest, cfg), normal = small_act
    measured = normal - peak
    predicted = _estimate(cfg, 1, 8).peak_allocated - _estimate(cfg, 1, 8, optimizer_in_backward=True).peak_allocated
    assert measured > 0.5 * _estimate(cfg, 1, 8).gradients  # more than half of all gradients saved, measured
    # the estimate keeps the one gradient beside all activations: it saves at most that much less
    assert 0 <= measured - predicted <= largest, (measured, predicted, largest)


@pytest.mark.parametrize(
    "kw",
    [
        dict(gradient_accumulation_steps=2),
        dict(zero_stage=2, world_size=2),
        dict(fsdp="full_shard", world_size=2),
        dict(pipeline_parallel_size=2),
    ],
)
def test_optimizer_in_backward_refuses_what_torchtune_refuses_or_is_unmodelled(kw):
    with pytest.raises(CalculatorError) as info:
        estimate_memory(dict(model="llama-3-8b", optimizer_in_backward=True, **kw))
    assert info.value.field == "optimizer_in_backward" and "gradient_accumulation_steps=1" in info.value.zh


def test_defaults_leave_estimates_unchanged():
    base = dict(model="llama-3-8b", seq_len=2048, gradient_checkpointing="full")
    off = dict(base, optimizer_in_backward=False, activation_offloading=False)
    assert estimate_memory(base).model_dump() == estimate_memory(off).model_dump()


@pytest.mark.parametrize("ckpt", ["none", "full"])
def test_activation_offloading_moves_block_activations_to_the_cpu(ckpt):
    base = dict(model="llama-3-8b", precision="bf16", seq_len=4096, gradient_checkpointing=ckpt)
    on, off = estimate_memory(dict(base, activation_offloading=True)), estimate_memory(base)
    moved = on.details["activations_offloaded_to_cpu"]
    assert moved > 0
    assert off.activations - on.activations == moved  # what leaves the GPU ...
    assert on.cpu_total - off.cpu_total == moved  # ... is in host memory, byte for byte
    assert on.details["activations_logits"] == off.details["activations_logits"]  # output head and loss stay
    # one block stays on the GPU: more than the all-blocks-offloaded bound of zero, less than two blocks
    assert 0 < on.details["activations_layers"] < off.details["activations_layers"]
    assert any("offloading" in a for a in on.assumptions_en) and any("卸载" in a for a in on.assumptions_zh)
