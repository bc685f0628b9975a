"""``calculators.batch.trainer_step_counts`` against the real libraries it describes.

Why: a step-count answer ("why does the progress bar show 193 steps?") is only right if it counts the way the
Trainer does. The per-rank micro-batch count is checked against torch's own DistributedSampler and DataLoader, and
the steps against the installed transformers' ``Trainer.set_initial_training_values`` (transformers ≥ 4.52 counts
a last, partial accumulation group; the floor variant for ≤ 4.51 is the card's bisected fact and cannot run here).
"""

from __future__ import annotations

import pytest

from calculators.batch import trainer_step_counts

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

CASES = [
    # (samples, micro, GA, GPUs, epochs)
    (9106, 64, 128, 1, 5),  # fewer micro-batches than GA: one (partial) step per epoch
    (1398, 4, 4, 1, 3),
    (33000, 16, 32, 4, 3),
    (10_000, 2, 8, 4, 1),
    (110, 2, 1, 1, 300),
    (91, 10, 4, 2, 10),
    (1000, 3, 7, 3, 2.5),  # fractional epochs: ceil(2.5 × steps per epoch)
]


@pytest.mark.parametrize("samples,micro,ga,gpus,epochs", CASES)
def test_micro_batches_per_gpu_match_torch_distributed_sampler(samples, micro, ga, gpus, epochs):
    from torch.utils.data import DataLoader, DistributedSampler

    data = list(range(samples))
    sampler = DistributedSampler(data, num_replicas=gpus, rank=gpus - 1, shuffle=False)
    loader = DataLoader(data, batch_size=micro, sampler=sampler)
    assert trainer_step_counts(samples, micro, ga, gpus).micro_per_gpu == len(loader)


@pytest.mark.parametrize("samples,micro,ga,gpus,epochs", CASES)
def test_steps_match_the_installed_trainer(tmp_path, samples, micro, ga, gpus, epochs):
    from torch.utils.data import DataLoader, DistributedSampler
    from transformers import Trainer, TrainingArguments

    args = TrainingArguments(
        output_dir=str(tmp_path),
        per_device_train_batch_size=micro,
        gradient_accumulation_steps=ga,
        num_train_epochs=epochs,
        report_to=[],
        use_cpu=True,
    )
    trainer = Trainer(model=torch.nn.Linear(2, 2), args=args)
    data = list(range(samples))
    loader = DataLoader(data, batch_size=micro, sampler=DistributedSampler(data, num_replicas=gpus, rank=0))
    _epochs, per_epoch, *_rest, max_steps = trainer.set_initial_training_values(args, loader)
    counts = trainer_step_counts(samples, micro, ga, gpus, epochs)
    assert (counts.per_epoch, counts.total) == (per_epoch, max_steps)
    assert counts.per_epoch_floor == max(counts.micro_per_gpu // ga, 1)
