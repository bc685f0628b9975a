"""FSDP as a sharding option next to ZeRO: invariants and the GA / no_sync rule."""
import pytest

from calculators import CalculatorError, estimate_memory

BASE = dict(model="llama-3-8b", precision="amp-bf16", world_size=8, num_nodes=2, seq_len=2048,
            gradient_checkpointing="full")


def _e(**kw):
    return estimate_memory(dict(BASE, **kw))


def test_full_shard_divides_16_bytes_per_param_by_the_world_size():
    e = _e(fsdp="full_shard")
    assert e.model_states == pytest.approx(16 * e.num_params / 8, rel=1e-6)   # fp32 params + grads + Adam
    assert "fsdp_gathered_units" in e.details


def test_strategies_order():
    totals = {f: _e(fsdp=f).total_per_gpu for f in ("no_shard", "shard_grad_op", "hybrid_shard", "full_shard")}
    assert totals["full_shard"] < totals["hybrid_shard"] < totals["no_shard"]
    assert totals["full_shard"] < totals["shard_grad_op"] < totals["no_shard"]


def test_hybrid_shards_inside_a_node_only():
    e = _e(fsdp="hybrid_shard")                   # 8 GPUs on 2 nodes: shards of 4
    assert e.model_states == pytest.approx(16 * e.num_params / 4, rel=1e-6)


def test_cpu_offload_moves_the_shards_to_the_cpu():
    on, off = _e(fsdp="full_shard", fsdp_cpu_offload=True), _e(fsdp="full_shard")
    assert on.model_states == 0 and on.cpu_total > 0 and on.total_per_gpu < off.total_per_gpu


def test_ga_with_no_sync_accumulates_unsharded_gradients():
    ga1, ga4 = _e(fsdp="full_shard"), _e(fsdp="full_shard", gradient_accumulation_steps=4)
    unsharded = 4 * ga1.num_params                 # fp32 gradients of every parameter
    assert ga4.details["fsdp_no_sync_unsharded_grads"] == unsharded
    assert ga4.total_per_gpu - ga1.total_per_gpu == ga4.ga_extra_over_ga1
    assert "no_sync" in ga4.gradient_accumulation_note_en and "no_sync" in ga4.gradient_accumulation_note_zh
    synced = _e(fsdp="full_shard", gradient_accumulation_steps=4, fsdp_sync_each_batch=True)
    assert "fsdp_no_sync_unsharded_grads" not in synced.details and synced.total_per_gpu < ga4.total_per_gpu
    assert _e(fsdp="full_shard", gradient_accumulation_steps=64).total_per_gpu == ga4.total_per_gpu


@pytest.mark.parametrize("kw", [dict(fsdp="full_shard", zero_stage=3), dict(fsdp_cpu_offload=True),
                                dict(fsdp="full_shard", pipeline_parallel_size=2)])
def test_fsdp_with_zero_is_refused(kw):
    with pytest.raises(CalculatorError) as err:
        _e(**kw)
    assert err.value.message("zh") != err.value.message("en")
