"""The llama-index tools: built in one line, each callable, bad input an error result (not an exception)."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

from calculators.llamaindex_tools import build_tools  # noqa: E402

CONFIG = {
    "model": "llama-2-7b",
    "gpu": "rtx-3090",
    "finetune": "lora",
    "train_micro_batch_size_per_gpu": 1,
    "seq_len": 1024,
    "gradient_checkpointing": "full",
}


@pytest.fixture(scope="module")
def tools(assistant):
    return {t.metadata.name: t for t in build_tools(assistant)}


def test_names_descriptions_and_schemas(tools):
    assert set(tools) == {
        "effective_batch",
        "memory_estimate",
        "memory_sweep",
        "training_throughput",
        "learning_rate_scaling",
        "config_check",
        "diagnose",
        "fact_check",
        "card_search",
    }
    for t in tools.values():
        assert len(t.metadata.description) > 60
        schema = t.metadata.get_parameters_dict()
        assert schema["type"] == "object" and schema["properties"]
    props = tools["effective_batch"].metadata.get_parameters_dict()["properties"]
    assert "world_size" in props and "data-parallel" in props["world_size"].get("description", "")


def test_each_tool_computes(tools):
    assert (
        tools["effective_batch"]
        .call(train_micro_batch_size_per_gpu=2, gradient_accumulation_steps=8, world_size=4)
        .raw_output["train_batch_size"]
        == 64
    )
    mem = tools["memory_estimate"].call(config=CONFIG).raw_output
    assert mem["gib"]["total_per_gpu"] > mem["gib"]["weights"] > 0
    sw = tools["memory_sweep"].call(config=CONFIG, field="gradient_accumulation_steps", values=[1, 16]).raw_output
    a, b = (p["activations"] for p in sw["series_gib"])
    assert a == b  # accumulation does not multiply activations
    speed = tools["training_throughput"].call(num_params=6e8, num_gpus=64, tokens_per_second=209715.2, gpu="v100")
    assert round(speed.raw_output["mfu"], 3) == 0.094  # Megatron-DeepSpeed #199: 256 × 2048 tokens in 2.5 s
    cc = (
        tools["config_check"]
        .call(
            config='{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}',
            world_size=4,
        )
        .raw_output
    )
    assert cc["markdown"] and any(f["key"] == "train_batch_size" and f["severity"] == "error" for f in cc["findings"])
    fc = tools["fact_check"].call(text="Mixed precision halves GPU memory when fine-tuning with Adam.").raw_output
    assert fc["counts"]["wrong"] == 1 and fc["claims"][0]["card_id"] == "myth-mixed-precision-halves-memory"
    dx = (
        tools["diagnose"]
        .call(text="torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
        .raw_output
    )
    assert dx["markdown"] and dx["diagnosis"]
    cards = tools["card_search"].call(query="增大梯度累积会增加显存吗", k=3).raw_output
    assert cards and all(c["sources"] for c in cards)


def test_bad_input_is_an_error_result(tools):
    out = tools["effective_batch"].call(train_micro_batch_size_per_gpu=0, gradient_accumulation_steps=1).raw_output
    assert out["error"]["field"] and out["error"]["message_zh"] != out["error"]["message_en"]
    assert "error" in tools["memory_estimate"].call(config="llama").raw_output
    assert "error" in tools["fact_check"].call(text="").raw_output
    assert "error" in tools["diagnose"].call(text=" ").raw_output
    assert "error" in tools["card_search"].call(query="x", k=99).raw_output
