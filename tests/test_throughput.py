"""Training speed as model FLOPs utilisation (calculators.throughput) and the step times users report
(rag.step_time): the formula against published figures, the data-sheet peaks against the presets, refusals, and a
real thread answered end to end."""

from __future__ import annotations

from typing import Any

import pytest

from calculators import GPU_PRESETS, PEAK_TFLOPS, CalculatorError, run_tool, training_throughput
from rag.step_time import read_step_time

# PaLM (Chowdhery et al. 2022): 540.35B parameters, 118 layers, 48 heads of 256, sequence 2048; 238.3K tokens/s on
# 6144 TPU v4 chips (275 TFLOP/s bf16 peak each) is 46.2% MFU (section 4, Table 3).
PALM = {
    "num_params": 540.35e9,
    "num_gpus": 6144,
    "tokens_per_second": 238.3e3,
    "peak_tflops": 275,
    "num_layers": 118,
    "seq_len": 2048,
    "attention_width": 48 * 256,
}


def test_palm_540b_is_46_2_percent_mfu() -> None:
    assert training_throughput(**PALM).mfu == pytest.approx(0.462, abs=0.0005)


def test_without_the_attention_term_palm_is_lower() -> None:
    """The attention term (12·L·s·a) is part of the published figure: leaving it out gives 45.7%, not 46.2%."""
    bare = {k: v for k, v in PALM.items() if k not in ("num_layers", "seq_len", "attention_width")}
    assert training_throughput(**bare).mfu == pytest.approx(0.4573, abs=0.0005)


def test_megatron_175b_days_from_140_tflops() -> None:
    """Narayanan et al. 2021 (Megatron-LM, SC21), eq. 4: with recomputation a token costs ≈ 8·P FLOPs, so GPT-3 175B
    at 140 TFLOP/s per GPU on 1024 A100s trains 300B tokens in ≈ 34 days. From the token rate that throughput gives,
    the calculator's hardware utilisation is 140 / 312 and the budget takes 34 days."""
    rate = 1024 * 140e12 / (8 * 175e9)
    r = training_throughput(
        num_params=175e9,
        num_gpus=1024,
        tokens_per_second=rate,
        gpu="a100-80gb",
        activation_checkpointing=True,
        token_budget=300e9,
    )
    assert r.hfu == pytest.approx(140 / 312, rel=1e-9)
    assert r.mfu == pytest.approx(105 / 312, rel=1e-9)  # 6·P of the 8·P are model FLOPs
    assert r.days_for_budget == pytest.approx(33.9, abs=0.05)


def test_megatron_deepspeed_199_on_v100() -> None:
    """Megatron-DeepSpeed #199: 600M parameters, 64 V100s, global batch 256 × 2048 tokens in 2.5 s: ≈ 12 TFLOP/s per
    GPU, under a tenth of the V100's 125 TFLOP/s fp16 Tensor-Core peak; 1T tokens take ≈ 55 days."""
    r = training_throughput(
        num_params=6e8, num_gpus=64, step_time_s=2.5, tokens_per_step=256 * 2048, gpu="V100", token_budget=1e12
    )
    assert r.achieved_tflops_per_gpu == pytest.approx(11.8, abs=0.05)
    assert r.mfu == pytest.approx(0.0944, abs=0.0005)
    assert r.precision == "fp16" and not r.bf16_emulated  # a V100 has no bf16: its 16-bit peak is fp16
    assert r.days_for_budget == pytest.approx(55.2, abs=0.1)
    assert "9.4%" in r.to_markdown("en") and "9.4%" in r.to_markdown("zh")


def test_frozen_base_weights_train_4n_per_token() -> None:
    full = training_throughput(num_params=7e9, num_gpus=1, tokens_per_second=1000, gpu="a100-80gb")
    lora = training_throughput(num_params=7e9, num_gpus=1, tokens_per_second=1000, gpu="a100-80gb", frozen_base=True)
    assert full.model_flops_per_token == 6 * 7e9 and lora.model_flops_per_token == 4 * 7e9


def test_bf16_on_a_card_without_bf16_is_flagged() -> None:
    r = training_throughput(num_params=7e9, num_gpus=1, tokens_per_second=100, gpu="t4", precision="bf16")
    assert r.bf16_emulated and r.peak_tflops == 65
    assert "emulated" in r.to_markdown("en")


def test_fp32_is_held_against_the_plain_fp32_peak() -> None:
    r = training_throughput(num_params=1e9, num_gpus=1, tokens_per_second=100, gpu="a100-80gb", precision="fp32")
    assert r.peak_tflops == 19.5


def test_over_the_peak_says_the_numbers_are_not_of_one_step() -> None:
    r = training_throughput(num_params=8e9, num_gpus=8, step_time_s=1.0, tokens_per_step=8 * 6 * 8 * 8192, gpu="a800")
    assert r.implausible
    assert "shorter" in r.to_markdown("en")


def test_a_card_without_a_vendor_figure_gives_tflops_without_mfu() -> None:
    r = training_throughput(num_params=7e9, num_gpus=8, tokens_per_second=10_000, gpu="h20")
    assert r.mfu is None and r.achieved_tflops_per_gpu > 0
    assert "no data-sheet peak" in r.to_markdown("en")


def test_every_peak_is_for_a_preset_and_sane() -> None:
    assert set(PEAK_TFLOPS) <= set(GPU_PRESETS)
    for name, peak in PEAK_TFLOPS.items():
        assert peak.fp32 <= peak.fp16, name  # 16-bit Tensor Cores never run slower than plain FP32
        assert (peak.bf16 is not None) == GPU_PRESETS[name].bf16, name  # bf16 Tensor Cores exactly where bf16 is


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"num_params": 7e9, "num_gpus": 1}, "step_time_s"),
        ({"num_params": 7e9, "num_gpus": 1, "step_time_s": 2.0}, "tokens_per_step"),
        ({"num_params": 7e9, "num_gpus": 1, "step_time_s": 2.0, "tokens_per_second": 5.0}, "tokens_per_second"),
        ({"num_params": -1, "num_gpus": 1, "tokens_per_second": 5.0}, "num_params"),
        ({"num_params": 7e9, "num_gpus": 0, "tokens_per_second": 5.0}, "num_gpus"),
        ({"num_params": 7e9, "num_gpus": 1, "tokens_per_second": 5.0, "gpu": "rtx-9999"}, "gpu"),
        ({"num_params": 7e9, "num_gpus": 1, "tokens_per_second": 5.0, "precision": "int8"}, "precision"),
        ({"num_params": 7e9, "num_gpus": 1, "tokens_per_second": 5.0, "num_layers": 32}, "num_layers"),
    ],
)
def test_bad_input_is_refused_naming_the_field(args: dict[str, Any], field: str) -> None:
    with pytest.raises(CalculatorError) as err:
        run_tool("throughput", args)
    assert err.value.field == field
    assert err.value.message("zh") and err.value.message("en")


def test_an_unknown_gpu_is_told_to_give_the_peak_instead() -> None:
    with pytest.raises(CalculatorError) as err:
        training_throughput(num_params=7e9, num_gpus=1, tokens_per_second=5.0, gpu="rtx-9999")
    assert "peak_tflops" in err.value.message("en") and "gpu_memory_gb" not in err.value.message("en")


# ---- the step times users write (each from the thread named) ----------------------------------------------------
@pytest.mark.parametrize(
    ("text", "seconds", "source"),
    [
        # Megatron-DeepSpeed #199 (prose wins over the log's "iter time (s): 2.673")
        (
            "I find the iteration time is about 2.5s per iteration.\nsteps: 2 loss: 12.6157 iter time (s): 2.673",
            2.5,
            "prose",
        ),
        ("steps: 1 loss: 12.6199 iter time (s): 5.400\nsteps: 2 loss: 12.6157 iter time (s): 2.673", 2.673, "log"),
        ("iter 10 step 1: loss 2.1, iter time: 5439.32ms", 5.43932, "prose"),  # litgpt #291
        ("训练时每个iter耗时90s，正常吗", 90.0, "prose"),  # LLaMA-Factory #5014
        ("it takes 6 mins per iteration", 360.0, "prose"),  # kohya-ss #1504
        ("  3%|▎         | 30/1000 [00:30<16:10,  1.13it/s]", 1 / 1.13, "log"),  # LLaMA-Factory #5491
        (
            " 10%|█         | 10/100 [00:10<17:36, 11.74s/it]\n 20%|██        | 20/100 [03:10<16:00, 10.32s/it]",
            10.32,
            "log",
        ),
        ("一个step需要10秒", 10.0, "prose"),
        ("elapsed time per iteration (ms): 1234.5 | learning rate: 1.0E-04", 1.2345, "log"),
    ],
)
def test_step_time_as_written(text: str, seconds: float, source: str) -> None:
    st = read_step_time(text)
    assert st is not None and st.seconds == pytest.approx(seconds) and st.source == source


@pytest.mark.parametrize(
    "text",
    [
        "I trained for 3 steps and it OOMs",
        "warmup_steps: 100, save_steps: 500",
        "每 500 步保存一次",
        "took 10 hours",
        # llama-cookbook #413: a loading bar counts checkpoint shards, not training steps
        "Loading checkpoint shards: 100%|██████████| 3/3 [00:08<00:00,  2.69s/it]",
        "Map (num_proc=8): 100%|██████████| 5000/5000 [00:02<00:00, 2041.30 examples/s, 1.2it/s]",
    ],
)
def test_no_step_time_where_none_is_stated(text: str) -> None:
    assert read_step_time(text) is None


# ---- end to end: the thread the calculator was built for ----------------------------------------------------------
MEGATRON_DEEPSPEED_199 = (
    "[QUESTION] Training GPT2 on V100 is very slow.\n\nI try to train a model with 600M parameters with 250k vocab "
    "size. I train the model with 64(8*8) 32GB V100 and the global_batch_size is 256 with seq_length 2048 which means "
    "about 0.5M tokens in a iteration. I find the iteration time is about 2.5s per iteration. Is this time for per "
    "iteration good or it's slow?"
)


def test_a_speed_question_with_its_numbers_opens_with_its_mfu(assistant: Any) -> None:
    answer = assistant.ask(MEGATRON_DEEPSPEED_199)
    first = answer.first_screen.split("\n")[0]
    assert first.startswith("**Slow for this setup: about 9.4% model FLOPs utilisation")
    assert "11.8 TFLOP/s per GPU" in first and "125 TFLOP/s" in first
    call = next(c for c in answer.tool_calls if c.name == "throughput")
    assert call.arguments["tokens_per_step"] == 256 * 2048 and call.arguments["num_gpus"] == 64
    assert answer.sources[0].card_id == "training-speed-mfu"  # the card that explains the figure comes first


def test_without_the_tokens_per_step_no_mfu_is_made_up(assistant: Any) -> None:
    """The same question without the batch and the length: nothing to divide by, so no utilisation figure."""
    answer = assistant.ask(
        "Training a 600M model on 64 V100s is slow: the iteration time is about 2.5s per iteration. Is this good?"
    )
    assert not any(c.name == "throughput" for c in answer.tool_calls)
    assert "MFU" not in answer.first_screen


def test_a_stated_step_time_is_not_asked_for_again(assistant: Any) -> None:
    """A speed question without the tokens per step: the paste request asks for those, not for the step time the
    user gave; the same question without a step time asks for it."""
    timed = assistant.ask("Training Llama-2-7B on 8 A100s is very slow, each step takes 12 seconds. Why is it so slow?")
    untimed = assistant.ask("Training Llama-2-7B on 8 A100s is very slow. Why is it so slow?")
    assert "tokens per step" in timed.first_screen and "time per step" not in timed.first_screen
    assert "time per step" in untimed.first_screen


@pytest.mark.parametrize(
    ("text", "rate", "per_gpu"),
    [
        # Baichuan-7B #75: the last rate is the user's, the first another model's
        ("训练速度其它模型可以达到3300token/s/gpu,百川只有2200token/s/gpu", 2200.0, True),
        ("we get 5,000 tokens/s per GPU", 5000.0, True),
        ("throughput is 3300 tokens per second", 3300.0, False),
        ("每卡每秒 3000 token", 3000.0, True),
    ],
)
def test_token_rates_as_written(text: str, rate: float, per_gpu: bool) -> None:
    from rag.step_time import read_token_rate

    got = read_token_rate(text)
    assert got is not None and got.tokens_per_second == rate and got.per_gpu is per_gpu


def test_a_rate_is_not_a_sequence_length() -> None:
    from rag.slots import extract_slots

    assert extract_slots("百川只有2200token/s/gpu", prose=True).seq_len is None
    assert extract_slots("we get 5000 tokens/s per GPU", prose=True).seq_len is None
    assert extract_slots("trained with 2048 tokens", prose=True).seq_len == 2048


def test_a_per_gpu_token_rate_gives_the_mfu_without_tokens_per_step(assistant: Any) -> None:
    """Baichuan-7B #75: 8 A100s at 2200 tokens/s per GPU: the run's rate is 8 × 2200, and its MFU per GPU follows."""
    answer = assistant.ask(
        "机器A100*8，7B模型 zero2 训练，训练速度其它模型可以达到3300token/s/gpu，我们只有2200token/s/gpu，正常吗？"
    )
    call = next(c for c in answer.tool_calls if c.name == "throughput")
    assert call.arguments["tokens_per_second"] == 8 * 2200 and call.arguments["num_gpus"] == 8
    assert call.result is not None and 0.25 < call.result["mfu"] < 0.35  # 6 × 7e9 × 2200 ≈ 92 TFLOP/s of 312
