"""The MCP server: the real ``mcp`` client against the real app (Gradio's MCP server) on loopback.

Lists the tools, calls each one, and checks that bad input comes back as an error result (isError) while
the server keeps serving.
"""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamablehttp_client  # noqa: E402

from tests.conftest import launched  # noqa: E402
from ui.mcp_tools import MCP_TOOLS  # noqa: E402

CONFIG = {
    "model": "llama-2-7b",
    "gpu": "rtx-3090",
    "finetune": "lora",
    "train_micro_batch_size_per_gpu": 1,
    "seq_len": 1024,
    "gradient_checkpointing": "full",
}


@pytest.fixture(scope="module")
def mcp_url(assistant: Any, feedback_file: Any) -> Iterator[str]:
    from app import build_app

    with launched(build_app(assistant, stream_delay=0.01), mcp_server=True) as url:
        yield f"{url}/gradio_api/mcp/"


async def _session(url: str, work):
    async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        return await work(session)


def run(url: str, work) -> Any:
    return asyncio.run(_session(url, work))


def _payload(result: Any) -> Any:
    """Gradio 6.31 sends a returned dict as one text item: its Python repr (JSON for strings)."""
    text = "".join(getattr(c, "text", "") for c in result.content)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return ast.literal_eval(text)


def test_lists_exactly_our_tools_with_descriptions_and_schemas(mcp_url: str):
    tools = run(mcp_url, lambda s: s.list_tools()).tools
    by_name = {t.name: t for t in tools}
    assert set(by_name) == set(MCP_TOOLS)
    for t in tools:
        assert len(t.description) > 60, t.name
        assert t.inputSchema["type"] == "object" and t.inputSchema["properties"], t.name
    assert by_name["fact_check"].inputSchema["required"] == ["text"]
    assert "data-parallel" in by_name["effective_batch"].inputSchema["properties"]["world_size"]["description"]


def test_each_tool_answers(mcp_url: str):
    calls = {
        "effective_batch": {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 8, "world_size": 4},
        "memory_estimate": {"config": CONFIG},
        "memory_sweep": {"config": CONFIG, "field": "gradient_accumulation_steps", "values": [1, 16]},
        # Megatron-DeepSpeed #199: 600M parameters, 64 V100s, 256 × 2048 tokens in 2.5 s per step
        "training_throughput": {
            "num_params": 6e8,
            "num_gpus": 64,
            "step_time_s": 2.5,
            "tokens_per_step": 524288,
            "gpu": "v100",
        },
        # mmsegmentation #2026: 2 × 8 = 16 → 8 × 1 = 8 at 0.02
        "learning_rate_scaling": {"base_batch_size": 16, "new_batch_size": 8, "base_learning_rate": 0.02},
        "config_check": {
            "config": '{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}',
            "world_size": 4,
        },
        "fact_check": {"text": "这段回答对吗？使用更小的 gradient_accumulation_steps 有助于减少显存消耗。"},
        "card_search": {"query": "增大梯度累积会增加显存吗", "k": 2},
        "diagnose": {
            "text": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
            "total capacity of 23.69 GiB of which 1.12 GiB is free."
        },
    }
    assert set(calls) == set(MCP_TOOLS)

    async def work(s):
        return {name: await s.call_tool(name, args) for name, args in calls.items()}

    results = run(mcp_url, work)
    for name, res in results.items():
        assert not res.isError, (name, res.content)
    out = {name: _payload(res) for name, res in results.items()}
    assert out["effective_batch"]["train_batch_size"] == 64
    assert out["memory_estimate"]["gib"]["total_per_gpu"] > 0
    assert round(out["training_throughput"]["mfu"], 3) == 0.094 and "MFU" in out["training_throughput"]["markdown"]
    assert round(out["learning_rate_scaling"]["linear_rule_lr"], 6) == 0.01
    a, b = (p["activations"] for p in out["memory_sweep"]["series_gib"])
    assert a == b
    assert out["config_check"]["findings"]
    assert out["fact_check"]["claims"][0]["card_id"] == "myth-lower-ga-saves-memory"
    cards = out["card_search"] if isinstance(out["card_search"], list) else [out["card_search"]]
    assert cards and cards[0]["sources"]
    assert out["diagnose"]["markdown"] and out["diagnose"]["diagnosis"]


def test_bad_input_is_an_error_result_not_a_crash(mcp_url: str):
    bad = {
        "effective_batch": {"train_micro_batch_size_per_gpu": 0, "gradient_accumulation_steps": 1},
        "memory_estimate": {"config": {"model": "no-such-model"}},
        "memory_sweep": {"config": CONFIG, "field": "colour", "values": [1]},
        "training_throughput": {"num_params": 7e9, "num_gpus": 8, "step_time_s": 2.5},  # no tokens per step
        "config_check": {"config": ""},
        "fact_check": {"text": ""},
        "card_search": {"query": "显存", "k": 99},
        "diagnose": {"text": "   "},
    }

    async def work(s):
        out = {name: await s.call_tool(name, args) for name, args in bad.items()}
        out["after"] = await s.call_tool(
            "effective_batch", {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 2}
        )
        return out

    results = run(mcp_url, work)
    for name in bad:
        assert results[name].isError, (name, results[name].content)
        text = "".join(getattr(c, "text", "") for c in results[name].content)
        assert "Traceback" not in text
    assert not results["after"].isError and _payload(results["after"])["train_batch_size"] == 2


def test_app_flag_and_env():
    from app import parse_args

    assert parse_args([], env={}).mcp is True
    assert parse_args(["--no-mcp"], env={}).mcp is False
    assert parse_args([], env={"BATCHBOT_MCP": "0"}).mcp is False
    assert parse_args(["--mcp"], env={"BATCHBOT_MCP": "0"}).mcp is True


def test_tools_query_parameter_selects_tools(mcp_url: str):
    tools = run(mcp_url + "?tools=fact_check,effective_batch", lambda s: s.list_tools()).tools
    assert {t.name for t in tools} == {"fact_check", "effective_batch"}
