"""Measured: what gradient accumulation adds to peak memory when grads are set to None.

Why this test exists: the accumulation cards say that peak memory is model states plus ONE
micro-batch's activations, with one condition. With ``zero_grad(set_to_none=True)`` (the default
of ``torch.optim.Optimizer.zero_grad`` and ``nn.Module.zero_grad`` since PyTorch 2.0, PR #92731;
HF Trainer calls ``model.zero_grad()`` after every optimizer step) the ``.grad`` buffers do not
exist during the forward pass of an update at GA=1, while at GA>=2 the gradients accumulated so far
coexist with the next micro-batch's activations. So going from GA=1 to GA>=2 adds up to one
gradient-sized buffer at peak: a constant, the same for GA=2 and GA=8.

How it is measured: a tiny randomly initialised LLaMA (config only, no download) trains on CPU with
AdamW; after a warm-up update (which creates the optimizer states) one full update of GA
micro-batches runs under a ``TorchDispatchMode`` that records every storage an op returns and
releases it when the storage is freed (weakref finalizer), so ``peak`` is the highest number of
live bytes allocated during that update. Parameters and optimizer states were allocated before the
window and are constant, so the peaks compare the GA-dependent part only.

Measured (torch 2.13 CPU, transformers 5.x; h64 L2, micro-batch 4 x 128 tokens, fp32):
GA=1 11,171,848 B; GA=2 and GA=8 11,803,912 B; difference 632,064 B = the parameters' gradient
bytes exactly (fp32 grads of 158,016 parameters). Tolerance asserted: GA=2 and GA=8 peaks equal within 1 %, and (GA>=2) - (GA=1)
within 10 % of one gradient buffer. With ``set_to_none=False`` the grads live across updates and
the GA=1 and GA=8 peaks agree within 1 % (both 11,171,848 B counted in the window; the grads were
allocated before it, so the absolute GA=1 peak is the higher one).

The same through the real ``transformers.Trainer`` (CPU, ``optim="adamw_torch"``; the window is the
second optimizer update, opened in ``on_step_begin`` and closed in ``on_step_end``): GA=1
11,167,756 B; GA=2 and GA=8 11,799,824 B; difference 632,068 B (one gradient buffer + 4 B). The test
runs GA=1 and GA=4 only, to keep it short.
"""

from __future__ import annotations

import weakref

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from tests.activation_probe import tiny_llama

MICRO_BATCH, SEQ_LEN, VOCAB = 4, 128, 512


class LiveBytes(TorchDispatchMode):
    """Tracks bytes of storages created by ops inside the mode that are still alive, and their peak."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[int, int] = {}
        self.current = 0
        self.peak = 0

    def _release(self, key: int) -> None:
        self.current -= self.live.pop(key)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        # An output whose storage is an input's storage (in-place op, view) allocated nothing new;
        # without this, in-place updates of tensors created before the window (p.grad += g) would count.
        inputs = {id(t.untyped_storage()) for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)}
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                storage = t.untyped_storage()
                key = id(storage)
                if key not in self.live and key not in inputs:  # count each new storage once
                    self.live[key] = storage.nbytes()
                    self.current += storage.nbytes()
                    weakref.finalize(storage, self._release, key)
        self.peak = max(self.peak, self.current)
        return out


def peak_of_one_update(ga: int, set_to_none: bool = True) -> tuple[int, int]:
    """Peak live bytes during one optimizer update of ``ga`` micro-batches, and the gradient bytes."""
    model, _ = tiny_llama(hidden=64, layers=2, heads=4, kv_heads=2, inter=176, vocab=VOCAB)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
    gen = torch.Generator().manual_seed(0)

    def update() -> None:
        for _ in range(ga):
            ids = torch.randint(0, VOCAB, (MICRO_BATCH, SEQ_LEN), generator=gen)
            loss = model(input_ids=ids, labels=ids).loss / ga
            loss.backward()
            del loss
        opt.step()
        model.zero_grad(set_to_none=set_to_none)  # what HF Trainer does after each optimizer step

    update()  # warm-up: AdamW creates its states on the first step
    with LiveBytes() as tracker:
        update()
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
    return tracker.peak, grad_bytes


@pytest.fixture(scope="module")
def peaks() -> dict[int, tuple[int, int]]:
    return {ga: peak_of_one_update(ga) for ga in (1, 2, 8)}


def test_set_to_none_is_the_default():
    import inspect

    assert inspect.signature(torch.optim.Optimizer.zero_grad).parameters["set_to_none"].default is True
    assert inspect.signature(torch.nn.Module.zero_grad).parameters["set_to_none"].default is True


def test_hf_trainer_zeroes_grads_with_the_default():
    """Trainer's loop calls ``model.zero_grad()`` (no argument: set_to_none=True) after each optimizer step."""
    import inspect

    from transformers import Trainer

    src = inspect.getsource(Trainer._inner_training_loop)
    assert "model.zero_grad()" in src
    assert "set_to_none=False" not in src


def test_ga2_and_ga8_have_the_same_peak(peaks):
    p2, p8 = peaks[2][0], peaks[8][0]
    assert abs(p8 - p2) <= 0.01 * p2, (p2, p8)


def test_going_from_ga1_to_ga2_adds_about_one_gradient_buffer(peaks):
    p1, grad_bytes = peaks[1]
    p2 = peaks[2][0]
    assert abs((p2 - p1) - grad_bytes) <= 0.10 * grad_bytes, (p1, p2, grad_bytes)


def test_peak_is_not_n_times_anything(peaks):
    """The "N copies, N x memory" claim: GA=8 would need >= 8x the GA=1 activations; it needs + one grad."""
    p1, grad_bytes = peaks[1]
    assert peaks[8][0] <= p1 + 1.1 * grad_bytes


def test_without_set_to_none_ga_adds_nothing():
    p1, _ = peak_of_one_update(1, set_to_none=False)
    p8, _ = peak_of_one_update(8, set_to_none=False)
    assert abs(p8 - p1) <= 0.01 * p1, (p1, p8)


class _UpdateWindow:
    """Trainer callback that tracks live bytes during the second optimizer update (global_step 1 -> 2)."""

    def __init__(self) -> None:
        self.tracker: LiveBytes | None = None
        self.peak: int | None = None

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step == 1:
            self.tracker = LiveBytes()
            self.tracker.__enter__()

    def on_step_end(self, args, state, control, **kwargs):
        if self.tracker is not None and self.peak is None:
            self.tracker.__exit__(None, None, None)
            self.peak = self.tracker.peak


def trainer_peak(ga: int, tmp_path) -> tuple[int, int]:
    from transformers import Trainer, TrainerCallback, TrainingArguments

    class Window(_UpdateWindow, TrainerCallback):
        pass

    model, _ = tiny_llama(hidden=64, layers=2, heads=4, kv_heads=2, inter=176, vocab=VOCAB)
    gen = torch.Generator().manual_seed(0)
    data = []
    for _ in range(MICRO_BATCH * ga * 2):
        ids = torch.randint(0, VOCAB, (SEQ_LEN,), generator=gen)
        data.append({"input_ids": ids, "labels": ids.clone()})
    window = Window()
    args = TrainingArguments(
        output_dir=str(tmp_path / f"ga{ga}"),
        per_device_train_batch_size=MICRO_BATCH,
        gradient_accumulation_steps=ga,
        max_steps=2,
        logging_strategy="no",
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        optim="adamw_torch",
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    Trainer(model=model, args=args, train_dataset=data, callbacks=[window]).train()
    assert window.peak is not None, "the update window never closed"
    return window.peak, sum(p.numel() * p.element_size() for p in model.parameters())


def test_hf_trainer_ga4_adds_one_gradient_buffer_over_ga1(tmp_path):
    p1, grad_bytes = trainer_peak(1, tmp_path)
    p4, _ = trainer_peak(4, tmp_path)
    assert abs((p4 - p1) - grad_bytes) <= 0.10 * grad_bytes, (p1, p4, grad_bytes)
