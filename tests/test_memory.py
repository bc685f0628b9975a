"""estimate_memory against published numbers and invariants that must hold for any input."""

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from calculators import (
    GPU_PRESETS,
    MODEL_PRESETS,
    CalculatorError,
    GiB,
    MemoryConfig,
    count_params,
    estimate_memory,
    sweep,
)
from calculators.presets import PUBLISHED_PARAMS


@pytest.mark.parametrize("name", sorted(MODEL_PRESETS))
def test_preset_shapes_give_the_published_parameter_counts(name):
    assert count_params(MODEL_PRESETS[name]) == pytest.approx(PUBLISHED_PARAMS[name], rel=0.015)


def test_llama2_7b_count_is_exact():
    assert count_params(MODEL_PRESETS["llama-2-7b"]) == 6_738_415_616  # HF model card / safetensors index


# ZeRO paper, Figure 1: Psi = 7.5B, N_d = 64, K = 12 -> 120 / 31.4 / 16.6 / 1.9 GB (decimal GB).
@pytest.mark.parametrize("stage,expected_gb", [(0, 120), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_paper_figure_1(stage, expected_gb):
    est = estimate_memory(MemoryConfig(num_params=7.5e9, precision="fp16-mixed", zero_stage=stage, world_size=64))
    assert est.model_states / 1e9 == pytest.approx(expected_gb, abs=0.05)
    assert est.activations is None  # num_params alone: activations unknown, with a note
    assert any("Activations unknown" in n for n in est.notes_en)


# Hugging Face "Model training anatomy": mixed-precision AdamW = 6 (weights) + 4 (grads) + 8 (optimizer) = 18 B/param.
@pytest.mark.parametrize("optimizer,opt_bytes", [("adamw", 8), ("adamw-8bit", 2), ("sgd-momentum", 4)])
def test_hf_bytes_per_param_table_amp_regime(optimizer, opt_bytes):
    n = 1e9
    est = estimate_memory(MemoryConfig(num_params=n, precision="amp-bf16", optimizer=optimizer))
    assert est.weights == 6 * n
    assert est.gradients == 4 * n
    assert est.optimizer_states == opt_bytes * n


def test_fp32_adamw_is_16_bytes_and_deepspeed_mixed_is_2_2_12():
    n = 1e9
    fp32 = estimate_memory(MemoryConfig(num_params=n, precision="fp32"))
    assert (fp32.weights, fp32.gradients, fp32.optimizer_states) == (4 * n, 4 * n, 8 * n)
    mixed = estimate_memory(MemoryConfig(num_params=n, precision="bf16-mixed"))
    assert (mixed.weights, mixed.gradients, mixed.optimizer_states) == (2 * n, 2 * n, 12 * n)


def test_7b_full_finetune_cannot_fit_a_3090_and_ga_does_not_matter():
    base = dict(
        model="llama-2-7b", gpu="rtx-3090", precision="bf16-mixed", train_micro_batch_size_per_gpu=1, seq_len=1024
    )
    ga1 = estimate_memory(MemoryConfig(**base, gradient_accumulation_steps=1))
    ga16 = estimate_memory(MemoryConfig(**base, gradient_accumulation_steps=16))
    assert ga1.model_states / 1e9 == pytest.approx(16 * 6.738, rel=1e-3)  # ~108 GB before activations
    assert ga1.fits is False and ga1.max_micro_batch == 0
    # Corrected model (tests/test_memory_ga_set_to_none.py): with zero_grad(set_to_none=True) GA>=2 adds the
    # accumulated gradients beside the next micro-batch's activations: min(activations, gradients) here.
    assert ga16.total_per_gpu - ga1.total_per_gpu == min(ga1.activations, ga1.gradients)
    ga2 = estimate_memory(MemoryConfig(**base, gradient_accumulation_steps=2))
    assert ga2.total_per_gpu == ga16.total_per_gpu  # constant in GA
    assert "16" in ga16.gradient_accumulation_note_en and "in place" in ga16.gradient_accumulation_note_en


def test_qlora_7b_fits_a_3090():
    est = estimate_memory(
        MemoryConfig(model="llama-2-7b", gpu="rtx-3090", finetune="qlora", seq_len=1024, gradient_checkpointing="full")
    )
    assert est.fits is True
    assert 3 * GiB < est.weights < 5 * GiB  # 4-bit base plus 16-bit embeddings/head
    assert est.trainable_params == 32 * 8 * (4096 + 4096) * 2  # rank 8 on q_proj and v_proj


def test_zero3_offload_moves_states_to_cpu():
    on = estimate_memory(
        MemoryConfig(
            model="llama-2-7b",
            zero_stage=3,
            world_size=2,
            offload_optimizer=True,
            offload_param=True,
            gpu="rtx-3090",
            seq_len=512,
        )
    )
    off = estimate_memory(MemoryConfig(model="llama-2-7b", zero_stage=3, world_size=2, gpu="rtx-3090", seq_len=512))
    assert on.total_per_gpu < off.total_per_gpu
    assert on.cpu_total > 100e9  # the states did not vanish: they moved to host RAM


_LLAMA2_7B_CFG = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "intermediate_size": 11008,
    "vocab_size": 32000,
}


def test_hf_config_json_dict_and_text():
    a = estimate_memory(MemoryConfig(hf_config=_LLAMA2_7B_CFG))
    b = estimate_memory(MemoryConfig(hf_config=json.dumps(_LLAMA2_7B_CFG)))
    assert a.num_params == b.num_params == 6_738_415_616


def test_hf_config_string_is_never_read_as_a_path(tmp_path):
    """Security: a string from HTTP/the UI must not reveal whether a server file exists or what it holds."""
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({**_LLAMA2_7B_CFG, "hidden_size": "TOPSECRET-abc123"}))
    messages = []
    for path in (str(secret), str(tmp_path), str(tmp_path / "missing.json"), "/etc/passwd", "/dev/urandom"):
        with pytest.raises(CalculatorError) as err:
            estimate_memory(MemoryConfig(hf_config=path))
        assert "TOPSECRET" not in str(err.value)
        assert "No such file" not in str(err.value)
        messages.append(err.value.message("en").replace(path[:80], "<p>"))
    assert len(set(messages)) == 1, messages  # existing and missing paths answer the same


def test_hf_config_path_object_reads_only_regular_small_files(tmp_path):
    import os
    from pathlib import Path

    from calculators.presets import shape_from_hf_config

    (tmp_path / "config.json").write_text(json.dumps(_LLAMA2_7B_CFG))
    assert shape_from_hf_config(Path(tmp_path)).hidden_size == 4096
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for bad in (fifo, Path("/dev/urandom")):  # would block forever / grow memory without limit
        with pytest.raises(CalculatorError) as err:
            shape_from_hf_config(bad)
        assert "not a regular file" in str(err.value)


def test_pipeline_parallel_is_the_exception():
    base = dict(model="llama-2-7b", pipeline_parallel_size=4, zero_stage=1, world_size=8, seq_len=1024)
    ga1 = estimate_memory(MemoryConfig(**base, gradient_accumulation_steps=1))
    ga8 = estimate_memory(MemoryConfig(**base, gradient_accumulation_steps=8))
    assert ga8.activations > ga1.activations
    assert "pipeline" in ga8.gradient_accumulation_note_en.lower()


@pytest.mark.parametrize(
    "kwargs,field",
    [
        (dict(model="llama-9000"), "model"),
        (dict(model="gpt2", gpu="rtx-9090"), "gpu"),
        (dict(model="gpt2", train_micro_batch_size_per_gpu=-2), "train_micro_batch_size_per_gpu"),
        (dict(model="gpt2", seq_len=10**12), "seq_len"),
        (dict(num_params=float("nan")), "num_params"),
        (dict(num_params=-7e9), "num_params"),
        (dict(model="gpt2", zero_stage=4), "zero_stage"),
        (dict(model="gpt2", gpu_memory_gb=-24), "gpu_memory_gb"),
        (dict(model="gpt2", offload_param=True, zero_stage=2), "offload_param"),
    ],
)
def test_bad_input_is_a_clear_error(kwargs, field):
    with pytest.raises(CalculatorError) as exc:
        estimate_memory(kwargs)
    assert field in str(exc.value)
    assert "Accepted" in exc.value.message("en") or "accepted" in exc.value.message("en")
    assert exc.value.message("zh") != exc.value.message("en")


def test_ga_sweep_is_flat_and_micro_sweep_rises():
    cfg = MemoryConfig(model="llama-2-7b", finetune="lora", gpu="rtx-3090", seq_len=1024)
    ga = sweep(cfg, "gradient_accumulation_steps", [1, 2, 4, 8, 16, 32])
    totals = [t for _, t in ga.series()]
    assert len(set(totals[1:])) == 1  # flat from GA=2 on
    # GA=1 with set_to_none=True: the (small LoRA) gradient buffer is not alive during the forward pass.
    assert totals[1] - totals[0] == ga.points[0].estimate.gradients
    mb = sweep(cfg, "train_micro_batch_size_per_gpu", [1, 2, 4, 8])
    totals = [t for _, t in mb.series()]
    assert totals == sorted(totals) and totals[0] < totals[-1]


models = st.sampled_from(sorted(MODEL_PRESETS))


def _modelled(model: str, precision: str = "bf16-mixed", finetune: str = "full") -> bool:
    """DeepSeek's multi-head latent attention is refused (clear error, tests/test_mem5_units.py) with LoRA/QLoRA and
    autocast; the properties below hold for every setup that gets a number."""
    return not (MODEL_PRESETS[model].is_mla and (finetune != "full" or precision.startswith("amp-")))


precisions = st.sampled_from(["fp32", "amp-fp16", "amp-bf16", "fp16-mixed", "bf16-mixed", "bf16"])
ckpt = st.sampled_from(["none", "selective", "full"])


@settings(max_examples=60, deadline=None)
@given(models, precisions, ckpt, st.integers(1, 16), st.integers(1, 4096), st.booleans())
def test_memory_non_decreasing_in_micro_batch_and_seq_len(model, precision, ck, mb, seq, flash):
    assume(_modelled(model, precision))
    cfg = dict(model=model, precision=precision, gradient_checkpointing=ck, flash_attention=flash)
    a = estimate_memory(dict(cfg, train_micro_batch_size_per_gpu=mb, seq_len=seq))
    assert (
        a.total_per_gpu <= estimate_memory(dict(cfg, train_micro_batch_size_per_gpu=mb + 1, seq_len=seq)).total_per_gpu
    )
    assert (
        a.total_per_gpu <= estimate_memory(dict(cfg, train_micro_batch_size_per_gpu=mb, seq_len=seq + 1)).total_per_gpu
    )


@settings(max_examples=40, deadline=None)
@given(models, st.integers(1, 8), st.integers(1, 10**6))
def test_activations_identical_for_any_ga(model, mb, ga):
    a = estimate_memory(dict(model=model, train_micro_batch_size_per_gpu=mb, gradient_accumulation_steps=1))
    b = estimate_memory(dict(model=model, train_micro_batch_size_per_gpu=mb, gradient_accumulation_steps=ga))
    assert a.activations == b.activations
    # GA>=2 adds at most one gradient buffer (set_to_none=True); nothing else depends on GA.
    extra = min(a.activations, a.gradients) if ga >= 2 else 0
    assert b.total_per_gpu - a.total_per_gpu == extra
    c = estimate_memory(dict(model=model, train_micro_batch_size_per_gpu=mb, gradient_accumulation_steps=max(2, ga)))
    assert (
        c.total_per_gpu
        == estimate_memory(
            dict(model=model, train_micro_batch_size_per_gpu=mb, gradient_accumulation_steps=2)
        ).total_per_gpu
    )


@settings(max_examples=40, deadline=None)
@given(models, precisions, st.sampled_from([1, 2, 8, 64, 512]), st.sampled_from(["full", "lora", "qlora"]))
def test_higher_zero_stage_never_raises_model_states(model, precision, ws, finetune):
    assume(_modelled(model, precision, finetune))
    states = [
        estimate_memory(
            dict(model=model, precision=precision, zero_stage=s, world_size=ws, finetune=finetune)
        ).model_states
        for s in range(4)
    ]
    assert states == sorted(states, reverse=True)


@settings(max_examples=40, deadline=None)
@given(models, st.sampled_from([1, 2, 3]), st.sampled_from([1, 4, 16]), st.booleans())
def test_offload_never_raises_gpu_memory(model, stage, ws, both):
    base = dict(model=model, zero_stage=stage, world_size=ws, seq_len=512)
    plain = estimate_memory(base).total_per_gpu
    off = estimate_memory(dict(base, offload_optimizer=True, offload_param=both and stage == 3)).total_per_gpu
    assert off <= plain


@settings(max_examples=60, deadline=None)
@given(models, st.sampled_from(sorted(GPU_PRESETS)), st.integers(1, 64), st.sampled_from([128, 512, 2048]))
def test_max_micro_batch_fits_and_one_more_does_not(model, gpu, mb, seq):
    assume(_modelled(model, finetune="lora"))
    est = estimate_memory(dict(model=model, gpu=gpu, train_micro_batch_size_per_gpu=mb, seq_len=seq, finetune="lora"))
    m = est.max_micro_batch
    assert m is not None and m >= 0
    if 0 < m < 65536:
        assert estimate_memory(
            dict(model=model, gpu=gpu, train_micro_batch_size_per_gpu=m, seq_len=seq, finetune="lora")
        ).fits
        assert not estimate_memory(
            dict(model=model, gpu=gpu, train_micro_batch_size_per_gpu=m + 1, seq_len=seq, finetune="lora")
        ).fits


def test_memory_config_itself_refuses_in_both_languages():
    with pytest.raises(CalculatorError) as exc:
        MemoryConfig(model="gpt2", precision="fp8")
    assert exc.value.field == "precision" and "fp32" in exc.value.message("en")
    assert "precision" in exc.value.message("zh") and exc.value.message("zh") != exc.value.message("en")
