"""FSDP as a sharding option next to ZeRO: invariants and the GA / no_sync rule."""

import pytest

from calculators import CalculatorError, estimate_memory

BASE = dict(
    model="llama-3-8b", precision="amp-bf16", world_size=8, num_nodes=2, seq_len=2048, gradient_checkpointing="full"
)


def _e(**kw):
    return estimate_memory(dict(BASE, **kw))


def test_full_shard_divides_16_bytes_per_param_by_the_world_size():
    e = _e(fsdp="full_shard")
    assert e.model_states == pytest.approx(16 * e.num_params / 8, rel=1e-6)  # fp32 params + grads + Adam
    assert "fsdp_gathered_units" in e.details


def test_strategies_order():
    totals = {f: _e(fsdp=f).total_per_gpu for f in ("no_shard", "shard_grad_op", "hybrid_shard", "full_shard")}
    assert totals["full_shard"] < totals["hybrid_shard"] < totals["no_shard"]
    assert totals["full_shard"] < totals["shard_grad_op"] < totals["no_shard"]


def test_hybrid_shards_inside_a_node_only():
    e = _e(fsdp="hybrid_shard")  # 8 GPUs on 2 nodes: shards of 4
    assert e.model_states == pytest.approx(16 * e.num_params / 4, rel=1e-6)


def test_cpu_offload_moves_the_shards_to_the_cpu():
    on, off = _e(fsdp="full_shard", fsdp_cpu_offload=True), _e(fsdp="full_shard")
    assert on.model_states == 0 and on.cpu_total > 0 and on.total_per_gpu < off.total_per_gpu


def test_ga_with_no_sync_accumulates_unsharded_gradients():
    ga1, ga4 = _e(fsdp="full_shard"), _e(fsdp="full_shard", gradient_accumulation_steps=4)
    unsharded = 4 * ga1.num_params  # fp32 gradients of every parameter
    assert ga4.details["fsdp_no_sync_unsharded_grads"] == unsharded
    assert ga4.total_per_gpu - ga1.total_per_gpu == ga4.ga_extra_over_ga1
    assert "no_sync" in ga4.gradient_accumulation_note_en and "no_sync" in ga4.gradient_accumulation_note_zh
    synced = _e(fsdp="full_shard", gradient_accumulation_steps=4, fsdp_sync_each_batch=True)
    assert "fsdp_no_sync_unsharded_grads" not in synced.details and synced.total_per_gpu < ga4.total_per_gpu
    assert _e(fsdp="full_shard", gradient_accumulation_steps=64).total_per_gpu == ga4.total_per_gpu


@pytest.mark.parametrize(
    "kw",
    [
        dict(fsdp="full_shard", zero_stage=3),
        dict(fsdp_cpu_offload=True),
        dict(fsdp="full_shard", pipeline_parallel_size=2),
    ],
)
def test_fsdp_with_zero_is_refused(kw):
    with pytest.raises(CalculatorError) as err:
        _e(**kw)
    assert err.value.message("zh") != err.value.message("en")


def test_no_sync_gradients_replace_the_sharded_ones():
    """GA >= 2 under no_sync holds the unsharded gradients instead of the shards, not both."""
    ga4 = _e(fsdp="full_shard", gradient_accumulation_steps=4)
    assert ga4.gradients == 4 * ga4.num_params  # fp32 gradients of every parameter, unsharded
    assert ga4.total_per_gpu == ga4.weights + ga4.optimizer_states + ga4.other + ga4.gradients + ga4.activations


LORA = dict(
    model="llama-2-7b",
    precision="bf16",
    finetune="lora",
    world_size=2,
    fsdp="full_shard",
    seq_len=1024,
    gradient_checkpointing="full",
    gradient_accumulation_steps=8,
)


def test_frozen_weights_sharing_units_with_adapters_get_gradients():
    """FSDP1 use_orig_params=True: a flat parameter with frozen weights and adapters needs a gradient as a whole."""
    own = estimate_memory(LORA)
    mixed = estimate_memory(dict(LORA, fsdp_frozen_in_trainable_units=True))
    assert own.details["fsdp_no_sync_unsharded_grads"] == 4 * own.trainable_params
    blocks = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096)  # embeddings and LM head: units of their own
    assert mixed.details["fsdp_no_sync_unsharded_grads"] == 4 * own.trainable_params + 2 * blocks
    assert mixed.activations > own.activations  # frozen linears save their inputs in that case


@pytest.mark.parametrize("kw", [dict(fsdp="none"), dict(finetune="full")])
def test_frozen_in_units_needs_fsdp_and_adapters(kw):
    with pytest.raises(CalculatorError) as err:
        estimate_memory(dict(LORA, fsdp_frozen_in_trainable_units=True, **kw))
    assert "fsdp_frozen_in_trainable_units" in err.value.message("en")
