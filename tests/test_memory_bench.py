"""bench/measured.py: published peaks with pinned sources; old bitsandbytes keeps 4-bit layers' inputs."""

import re

import pytest

from bench import measured
from calculators import estimate_memory


def test_every_point_is_sourced_at_a_pinned_commit_and_says_what_was_measured():
    rows, summary = measured.evaluate()
    assert summary["measured"] >= 85
    for p, pred in rows:
        assert re.search(r"/blob/[0-9a-f]{40}/", p.source), p.label
        assert "max_memory_allocated" in p.measured or "nvidia-smi" in p.measured  # what was measured
        assert (p.config is None) == bool(p.reason)  # not expressible <=> a stated reason
        assert (pred is None) == (p.config is None)


def test_oom_runs_are_predicted_above_the_card():
    _, summary = measured.evaluate()
    assert summary["oom_runs"] >= 3 and summary["oom_predicted_over_card"] == summary["oom_runs"]


@pytest.mark.parametrize(
    "label",
    [
        "Llama-2-7B LoRA mb1",
        "Llama-2-7B LoRA mb2",
        "Llama-2-13B LoRA mb1",
        "Llama-2-7B LoRA nf4-dq mb1",
        "Llama-2-13B LoRA nf4-dq mb1",
    ],
)
def test_single_gpu_llama_lora_points_within_10_percent(label):
    rows, _ = measured.evaluate()
    p, pred = next((p, pred) for p, pred in rows if p.label == label)
    assert abs(pred / p.measured_gb - 1) <= 0.10


def test_bitsandbytes_before_0_43_2_keeps_the_4bit_inputs():
    base = dict(model="llama-2-7b", precision="bf16", finetune="qlora", seq_len=1000, flash_attention=True)
    new, old = estimate_memory(base), estimate_memory(dict(base, bitsandbytes_before_0_43_2=True))
    h, i, L = 4096, 11008, 32
    assert old.activations - new.activations == 2 * 1000 * ((3 * h + i) * L - h)
    assert (
        estimate_memory(dict(base, finetune="lora", bitsandbytes_before_0_43_2=True)).activations
        == estimate_memory(dict(base, finetune="lora")).activations
    )  # only 4-bit layers


def test_litgpt_fsdp_lora_points_within_10_percent():
    """LitGPT's FSDP LoRA runs (Block units holding frozen weights and adapters, no_sync under GA)."""
    rows, _ = measured.evaluate()
    fsdp = [(p, pred) for p, pred in rows if "×A100" in p.label]
    assert len(fsdp) == 10
    for p, pred in fsdp:
        assert abs(pred / p.measured_gb - 1) <= 0.10, p.label


def test_nf4_without_double_quantisation_stores_4_5_bits_per_weight():
    base = dict(model="llama-2-7b", precision="bf16", finetune="qlora", seq_len=512)
    dq, plain = estimate_memory(base), estimate_memory(dict(base, qlora_double_quant=False))
    quantised = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008)  # the linears of the 32 blocks
    assert plain.weights - dq.weights == pytest.approx(quantised * (4.5 - 4.127) / 8, rel=1e-3)


def test_summary_floors():
    """Just below what bench/measured.py reaches (README: median |error| 4.0%, 38/48 within ±10%)."""
    _, summary = measured.evaluate()
    assert summary["compared"] >= 47
    assert summary["median_abs_error"] <= 0.045
    assert summary["within_10pct"] >= 37 and summary["within_10pct"] / summary["compared"] >= 0.78


def test_a_4bit_lm_head_is_stored_in_4_bits_and_dequantised_twice_at_the_loss():
    """Lightning's BitsandbytesPrecision quantises the LM head too; MatMul4Bit dequantises it to fp16, then casts."""
    base = dict(model="llama-2-7b", precision="bf16", finetune="qlora", seq_len=512, qlora_double_quant=False)
    kept, q = estimate_memory(base), estimate_memory(dict(base, qlora_lm_head_4bit=True))
    head = 32000 * 4096
    assert kept.weights - q.weights == pytest.approx(head * (2 - 4.5 / 8), rel=1e-6)
    assert q.details["activations_logits"] - kept.details["activations_logits"] == 2 * 2 * head
    with pytest.raises(ValueError):
        estimate_memory(dict(base, finetune="lora", qlora_lm_head_4bit=True))
