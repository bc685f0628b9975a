"""Answers changed in stop 42, each from a dev question of its class (fast unit tier)."""

from __future__ import annotations

from rag.compose import _grpo_generations, _observed_steps


def _steps(dataset: int, observed: int, total: int, epochs: float = 1) -> dict[str, float]:
    return {
        "dataset_size": dataset,
        "num_train_epochs": epochs,
        "observed_steps": observed,
        "samples_per_observed_step": round(dataset * epochs / observed, 1),
        "train_batch_size": total,
    }


def test_grpo_steps_give_the_completions_per_prompt():
    # TRL #3442: GRPOConfig, 4 GPUs x 1 x GA 1, 1,283 prompts, "Total optimization steps = 1,283"
    res = _steps(1283, 1283, 4)
    en = _observed_steps(res, "en", grpo=True)
    assert "4 ÷ 1 = 4 completions per prompt" in en and "num_generations = 4." in en
    assert "num_generations = 4" in _observed_steps(res, "zh", grpo=True)
    # the same numbers outside GRPO get the usual list of causes, not a GRPO verdict
    assert "num_generations = 4" not in _observed_steps(res, "en", grpo=False)


def test_grpo_factor_only_when_whole():
    assert _grpo_generations(1.0, 8) == 8
    assert _grpo_generations(2.0, 16) == 8
    assert _grpo_generations(1.5, 4) is None  # 2.67: no whole number of completions
    assert _grpo_generations(4.0, 4) is None  # steps as the settings give: nothing to explain
    assert _grpo_generations(8.0, 4) is None  # more prompts per step than the batch: not repetition
