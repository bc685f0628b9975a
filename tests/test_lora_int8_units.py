"""LoRA on a bitsandbytes LLM.int8() base (load_in_8bit=True, LLaMA-Factory quantization_bit 8): the calculator models
it (``lora_int8_base``) instead of refusing "lora + int8".

The weights rule (1 byte per Linear weight inside the blocks, everything else 16-bit) is checked against transformers'
own bitsandbytes test, which asserts that bloom-1b7's fp16 memory footprint is 1.540025 times its 8-bit one
(tests/quantization/bnb/test_mixed_int8.py, EXPECTED_RELATIVE_DIFFERENCE), and the quantised weights against the
nn.Linear modules of the real transformers models of the same shape."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import transformers as T

from calculators.errors import CalculatorError
from calculators.memory import MemoryConfig, estimate_memory
from calculators.presets import MODEL_PRESETS, block_linear_weights, count_params, shape_from_hf_config

BLOOM_1B7 = {"model_type": "bloom", "hidden_size": 2048, "n_layer": 24, "n_head": 16, "vocab_size": 250880}


def _linear_weights_in_blocks(model: torch.nn.Module) -> int:
    return sum(
        m.weight.numel()
        for name, m in model.named_modules()
        if isinstance(m, torch.nn.Linear) and "lm_head" not in name
    )


def test_bloom_1b7_fp16_over_int8_footprint_is_transformers_published_ratio() -> None:
    shape = shape_from_hf_config(BLOOM_1B7)
    n, quantised = count_params(shape), block_linear_weights(shape)
    assert 2 * n / (quantised * 1 + (n - quantised) * 2) == pytest.approx(1.540025, abs=5e-7)
    with torch.device("meta"):
        bloom = T.BloomForCausalLM(T.BloomConfig(hidden_size=2048, n_layer=24, n_head=16, vocab_size=250880))
    assert quantised == _linear_weights_in_blocks(bloom)


def test_the_quantised_weights_are_the_llama_blocks_linear_modules() -> None:
    shape = MODEL_PRESETS["llama-2-7b"]
    with torch.device("meta"):
        llama = T.LlamaForCausalLM(
            T.LlamaConfig(
                hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32,
                num_key_value_heads=32, vocab_size=32000,
            )
        )  # fmt: skip
    assert block_linear_weights(shape) == _linear_weights_in_blocks(llama)


def _estimate(**kw: Any) -> Any:
    return estimate_memory(
        MemoryConfig(model="llama-2-13b", gpu="rtx-3090", seq_len=512, precision="bf16-mixed", finetune="lora", **kw)
    )


def test_an_int8_base_halves_the_frozen_block_weights_and_keeps_the_8_bit_linears_inputs() -> None:
    shape = MODEL_PRESETS["llama-2-13b"]
    plain, int8 = _estimate(), _estimate(lora_int8_base=True)
    saved = block_linear_weights(shape)  # one byte each instead of two
    assert plain.weights - int8.weights == pytest.approx(saved, abs=16)
    # MatMul8bitLt keeps its input for backward: one input per group of linears sharing it, as QLoRA with a
    # bitsandbytes before 0.43.2 (whose MatMul4Bit did the same)
    old_qlora = estimate_memory(
        MemoryConfig(
            model="llama-2-13b", gpu="rtx-3090", seq_len=512, precision="bf16-mixed", finetune="qlora",
            bitsandbytes_before_0_43_2=True,
        )
    )  # fmt: skip
    new_qlora = estimate_memory(
        MemoryConfig(model="llama-2-13b", gpu="rtx-3090", seq_len=512, precision="bf16-mixed", finetune="qlora")
    )
    assert int8.activations - plain.activations == old_qlora.activations - new_qlora.activations > 0
    # alpaca-lora #221 ("train a lora for 13B in 8bit on my 3090 … 512 ctx"): the thread's answer, it fits
    assert int8.fits and 17 * 2**30 < int8.total_per_gpu < 21 * 2**30


def test_an_int8_base_is_only_for_lora() -> None:
    with pytest.raises(CalculatorError):
        MemoryConfig(model="llama-2-7b", finetune="full", lora_int8_base=True)
    with pytest.raises(CalculatorError):
        MemoryConfig(model="llama-2-7b", finetune="qlora", lora_int8_base=True)


def test_a_lora_on_8_bit_question_gets_a_figure(bot_without_retrieval: Any) -> None:
    # alpaca-lora #221, as the user wrote it
    answer = bot_without_retrieval.ask(
        "How much VRAM is required for each model?\n\nCan I train the lora in 8bit so that my 3090 can train a lora "
        "for 13B?\n\nSo I can load the 13B into 8bit with hf transformers + peft and train a lora of 512+ ctx sizes "
        "in it?"
    )
    main = next(c for c in answer.tool_calls if getattr(c, "label", None) == "main")
    assert main.arguments["lora_int8_base"] is True and main.arguments["seq_len"] == 512
    assert answer.first_screen.startswith("**It fits"), answer.first_screen
    # a full fine-tune of 8-bit weights is still not modelled: no figure computed as something else
    refused = bot_without_retrieval.ask("full fine-tune of llama-2-7b loaded in 8bit (load_in_8bit) on a 3090?")
    assert not any(getattr(c, "label", None) == "main" and c.result for c in refused.tool_calls)
