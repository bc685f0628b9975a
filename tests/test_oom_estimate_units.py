"""A reported OOM whose setup the message states opens with the estimate for that setup (issue #10: "a diagnosis
opens with the most likely cause(s) for what the user reported … uses the numbers the user gave").

Before: "全参数微调 qwen2.5-7b，8卡 A100 80G，zero2，micro batch 4，seq 4096，bf16，一直 OOM，为什么？" opened with "several
usual causes, nothing in the message tells them apart — paste the model, method, precision, micro batch …", all of
which the user had given, while the calculator had computed ~152 GiB per GPU; an OOM only in a pasted error planned
no estimate at all.
"""

from __future__ import annotations

from typing import Any

from rag.intents import reports_oom
from rag.parts import split_message
from rag.setup import read_setup


def test_full_setup_oom_opens_with_the_estimate_and_the_nearest_fit(bot_without_retrieval: Any) -> None:
    r = bot_without_retrieval.ask(
        "全参数微调 qwen2.5-7b，8卡 A100 80G，zero2，micro batch 4，seq 4096，bf16，一直 OOM，为什么？"
    )
    assert r.act == "diagnose"
    main = next(c for c in r.tool_calls if c.label == "main")
    assert main.result["fits"] is False
    first = r.first_screen.split("\n")[0]
    assert first.startswith("**放不下")
    assert "最接近且能放下" in first  # the nearest setting that fits, on their numbers
    assert "请贴出" not in r.first_screen  # never asks for what they gave


def test_oom_only_in_the_pasted_error_plans_the_estimate(bot_without_retrieval: Any) -> None:
    message = (
        "Full fine-tuning llama-2-7b OOMs, why?\n```\ntorchrun --nproc_per_node 4 train.py \\\n"
        "  --model_name_or_path meta-llama/Llama-2-7b-hf \\\n  --per_device_train_batch_size 2 --max_seq_length 2048 \\\n"
        "  --bf16\n```\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.15 GiB of which 1.2 GiB is free."
    )
    r = bot_without_retrieval.ask(message)
    main = next(c for c in r.tool_calls if c.label == "main")
    assert main.arguments["train_micro_batch_size_per_gpu"] == 2 and main.arguments["seq_len"] == 2048
    assert r.first_screen.startswith("**It does not fit")
    # one model written twice ("llama-2-7b", "Llama-2-7b-hf") is no conflict
    assert "Note:" not in r.first_screen


def test_estimate_that_fits_says_the_run_used_more(bot_without_retrieval: Any) -> None:
    r = bot_without_retrieval.ask(
        "LoRA 微调 qwen2.5-7b，单卡 4090，micro batch 1，seq 1024，bf16，还是 OOM 了，为什么？"
    )
    main = next(c for c in r.tool_calls if c.label == "main")
    assert main.result["fits"] is True
    assert "OOM" in r.first_screen.split("\n")[0]  # "应能放下；你却遇到了 OOM，说明实际占用比这里算的大"


def test_asking_why_it_ooms_reports_the_oom() -> None:
    assert reports_oom("全参数微调一直 OOM，为什么？")
    assert reports_oom("Why does my run OOM at step 10?")
    assert not reports_oom("会不会 OOM？")
    assert not reports_oom("Will 8 GPUs OOM with this config?")


def test_model_spelt_twice_is_one_model() -> None:
    setup, _ = read_setup(
        split_message("llama-2-7b OOMs\n```\ntorchrun train.py --model_name_or_path meta-llama/Llama-2-7b-hf\n```")
    )
    assert setup.get("model") == "llama-2-7b"
    assert "model" not in setup.conflicts


def test_cards_added_up_are_not_one_cards_size() -> None:
    """(The pooling belief itself still opens that diagnosis: tests/test_engine_act_units.py.)"""
    for message in ("我用4张3090，合计96G显存，全参微调 7B 还是 OOM", "4 x 3090, 96GB in total, still OOM"):
        setup, _ = read_setup(split_message(message))
        assert setup.get("gpu") == "rtx-3090"
        assert setup.get("gpu_memory_gb") != 96


def test_a_verdict_that_does_not_fit_names_the_largest_part(bot_without_retrieval: Any) -> None:
    r = bot_without_retrieval.ask("Can I fully fine-tune llama-2-13b on one A100 80GB with bf16?")
    assert r.act == "fit"
    main = next(c for c in r.tool_calls if c.label == "main").result
    largest = max(("weights", "gradients", "optimizer_states", "activations"), key=lambda k: main[k])
    assert largest == "optimizer_states"
    assert "the largest part is optimizer states" in r.first_screen.split("\n")[0]
