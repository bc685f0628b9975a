"""resolve_batch against DeepSpeed's own semantics and test cases (tests/unit/runtime/test_ds_config*.py)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calculators import BatchConfigError, CalculatorError, resolve_batch, resolve_hf_batch


@pytest.mark.parametrize("tb,mb,ga", [(32, 16, 1), (32, 8, 2)])
def test_deepspeed_passing_cases_world_size_2(tb, mb, ga):
    r = resolve_batch(tb, mb, ga, world_size=2)
    assert (r.train_batch_size, r.train_micro_batch_size_per_gpu, r.gradient_accumulation_steps) == (tb, mb, ga)
    assert r.derived == []


def test_deepspeed_failing_case_carries_deepspeed_wording_and_alternatives():
    with pytest.raises(BatchConfigError) as exc:
        resolve_batch(33, 17, 2, world_size=2)
    msg = str(exc.value)
    assert (
        "train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 33 != 17 * 2 * 2"
    ) in msg
    assert "68" in msg  # the consistent train_batch_size for micro=17, GA=2 on 2 GPUs
    assert isinstance(exc.value, ValueError)


def test_failing_case_in_chinese_lists_consistent_values():
    with pytest.raises(BatchConfigError) as exc:
        resolve_batch(32, 18, 1, world_size=2, lang="zh")
    msg = str(exc.value)
    assert "32 != 18 * 1 * 2" in msg
    assert "train_micro_batch_size_per_gpu=16" in msg and "一致的取值" in msg


@pytest.mark.parametrize(
    "kwargs,expected",
    [
        (dict(train_batch_size=32, train_micro_batch_size_per_gpu=4), (32, 4, 4)),  # GA derived
        (dict(train_batch_size=32, gradient_accumulation_steps=2), (32, 8, 2)),  # micro derived
        (dict(train_micro_batch_size_per_gpu=4, gradient_accumulation_steps=8), (64, 4, 8)),
        (dict(train_batch_size=32), (32, 16, 1)),  # only batch -> GA=1
        (dict(train_micro_batch_size_per_gpu=4), (8, 4, 1)),  # only micro -> GA=1
    ],
)
def test_two_given_derive_the_third(kwargs, expected):
    r = resolve_batch(**kwargs, world_size=2)
    assert (r.train_batch_size, r.train_micro_batch_size_per_gpu, r.gradient_accumulation_steps) == expected
    assert r.derived


def test_none_or_only_ga_is_an_error():
    with pytest.raises(BatchConfigError, match="Either train_batch_size or train_micro_batch_size_per_gpu"):
        resolve_batch()
    with pytest.raises(BatchConfigError):
        resolve_batch(gradient_accumulation_steps=4)


def test_integer_division_like_deepspeed():
    # DeepSpeed floors 32 // 5 // 2 = 3 and then asserts 32 != 5 * 3 * 2.
    with pytest.raises(BatchConfigError, match=r"32 != 5 \* 3 \* 2"):
        resolve_batch(train_batch_size=32, train_micro_batch_size_per_gpu=5, world_size=2)
    with pytest.raises(BatchConfigError, match="Gradient accumulation steps: 0 has to be greater than 0"):
        resolve_batch(train_batch_size=32, train_micro_batch_size_per_gpu=18, world_size=2)


def test_effective_batch_counts_gpus_tokens_and_epochs():
    r = resolve_batch(
        train_micro_batch_size_per_gpu=2, gradient_accumulation_steps=8, world_size=4, seq_len=2048, dataset_size=10_000
    )
    assert r.train_batch_size == 64
    assert r.tokens_per_optimizer_step == 64 * 2048
    assert r.optimizer_steps_per_epoch == 157  # ceil(10000 / 64)
    assert any("2 × 8 × 4" in n for n in r.notes_en)
    assert any("micro × GA = 16" in n for n in r.notes_en)


def test_what_if_halving_micro_keeps_batch_and_gpus_multiply():
    r = resolve_batch(train_micro_batch_size_per_gpu=4, gradient_accumulation_steps=4, world_size=1)
    by_change = {c.change_en: c for c in r.what_if}
    assert by_change["halve micro batch and double GA"].train_batch_size == 16
    assert by_change["double the number of data-parallel GPUs"].train_batch_size == 32
    assert "unchanged" in by_change["double gradient_accumulation_steps"].memory_en


def test_learning_rate_rules():
    r = resolve_batch(
        train_micro_batch_size_per_gpu=4,
        gradient_accumulation_steps=16,
        world_size=1,
        base_learning_rate=1e-4,
        base_batch_size=16,
    )
    assert r.learning_rate.linear_rule_lr == pytest.approx(4e-4)
    assert r.learning_rate.sqrt_rule_lr == pytest.approx(2e-4)
    assert "heuristic" in r.learning_rate.note_en
    assert "arxiv.org/abs/1706.02677" in " ".join(r.learning_rate.sources)


def test_hf_trainer_view_maps_onto_the_same_function():
    assert resolve_hf_batch(4, 8, world_size=2).train_batch_size == 64
    assert (
        resolve_batch(per_device_train_batch_size=4, gradient_accumulation_steps=8, world_size=2).train_batch_size == 64
    )


@pytest.mark.parametrize(
    "kwargs,field",
    [
        (dict(train_micro_batch_size_per_gpu=-1), "train_micro_batch_size_per_gpu"),
        (dict(train_micro_batch_size_per_gpu=0), "train_micro_batch_size_per_gpu"),
        (dict(train_micro_batch_size_per_gpu=2.5), "train_micro_batch_size_per_gpu"),
        (dict(train_micro_batch_size_per_gpu=True), "train_micro_batch_size_per_gpu"),
        (dict(train_micro_batch_size_per_gpu="4"), "train_micro_batch_size_per_gpu"),
        (dict(train_micro_batch_size_per_gpu=4, world_size=10**9), "world_size"),
        (
            dict(train_micro_batch_size_per_gpu=4, gradient_accumulation_steps=float("nan")),
            "gradient_accumulation_steps",
        ),
        (dict(train_micro_batch_size_per_gpu=4, seq_len=0), "seq_len"),
    ],
)
def test_bad_numbers_name_the_field_in_both_languages(kwargs, field):
    with pytest.raises(CalculatorError) as exc:
        resolve_batch(**kwargs)
    assert exc.value.field == field
    assert field in exc.value.message("en") and "Accepted" in exc.value.message("en")
    assert "可接受" in exc.value.message("zh")


@given(st.integers(1, 512), st.integers(1, 512), st.integers(1, 256))
def test_any_consistent_triple_passes_and_any_off_by_one_fails(mb, ga, ws):
    tb = mb * ga * ws
    assert resolve_batch(tb, mb, ga, world_size=ws).train_batch_size == tb
    with pytest.raises(BatchConfigError):
        resolve_batch(tb + 1, mb, ga, world_size=ws)


def test_learning_rate_factors_without_a_base_learning_rate():
    r = resolve_batch(train_batch_size=128, train_micro_batch_size_per_gpu=4, world_size=1, base_batch_size=32)
    assert r.learning_rate.linear_factor == 4 and r.learning_rate.sqrt_factor == 2
    assert r.learning_rate.linear_rule_lr is None and "multiply the learning rate by 4" in r.learning_rate.note_en
    with pytest.raises(CalculatorError, match="base_batch_size"):
        resolve_batch(train_micro_batch_size_per_gpu=4, base_learning_rate=1e-4)
