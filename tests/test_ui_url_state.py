"""A shareable link (issue #15 item 11): the memory form's settings to and from the URL query, without a browser."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pytest
from starlette.requests import Request

from ui.calculators_tab import build_calculators_tab, checked_link_values, initial_form, memory_from_url
from ui.labels import Labels
from ui.url_state import FieldSpec, format_value, memory_in_url_js, parse_query, parse_value, serialise, spec_of


@pytest.fixture(scope="module")
def form() -> dict[str, Any]:
    """The real memory form's components (built once; the tab computes its first result while building)."""
    with gr.Blocks():
        handles = build_calculators_tab(Labels("en"))
    return handles


@pytest.fixture(scope="module")
def specs(form: dict[str, Any]) -> dict[str, FieldSpec]:
    return {name: spec_of(comp) for name, comp in form["memory"][0].items()}


@pytest.fixture(scope="module")
def initial(form: dict[str, Any]) -> dict[str, Any]:
    return initial_form(form["memory"][0])


def test_the_initial_form_writes_no_parameters(initial):
    assert serialise(initial, initial) == {}
    # an empty optional number box arrives from the browser as 0 and is still "not given"
    assert serialise({**initial, "num_params": 0, "gpu_memory_gb": None}, initial) == {}


def test_only_changed_fields_are_written_with_their_field_names(initial):
    values = {
        **initial,
        "model": "llama-3-8b",
        "gpu": "rtx-4090",
        "train_micro_batch_size_per_gpu": 2,
        "gradient_accumulation_steps": 8,  # the initial value: left out
        "flash_attention": False,
        "lora_target_modules": ["q_proj", "k_proj", "v_proj"],
        "allocator_slack_fraction": 0.2,
        "reduce_bucket_size": 2e8,
    }
    assert serialise(values, initial) == {
        "model": "llama-3-8b",
        "gpu": "rtx-4090",
        "train_micro_batch_size_per_gpu": "2",
        "flash_attention": "false",
        "lora_target_modules": "q_proj,k_proj,v_proj",
        "allocator_slack_fraction": "0.2",
        "reduce_bucket_size": "200000000",
    }


def test_values_round_trip_with_their_types(initial, specs):
    values = {
        **initial,
        "model": "llama-3-8b",
        "zero_stage": 2,
        "offload_optimizer": True,
        "seq_len": 4096,
        "cuda_context_gb": 1.5,
        "lora_target_modules": ["o_proj", "q_proj"],
    }
    back = parse_query(serialise(values, initial), specs)
    assert back == {
        "model": "llama-3-8b",
        "zero_stage": 2,
        "offload_optimizer": True,
        "seq_len": 4096,
        "cuda_context_gb": 1.5,
        "lora_target_modules": ["q_proj", "o_proj"],  # the form's order
    }
    assert type(back["zero_stage"]) is int and type(back["seq_len"]) is int and back["offload_optimizer"] is True


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("model", "no-such-model"),
        ("gpu", "<script>"),
        ("zero_stage", "4"),
        ("world_size", "0"),  # below the box's minimum
        ("train_micro_batch_size_per_gpu", "abc"),
        ("gradient_accumulation_steps", "2.5"),  # a whole-number box
        ("seq_len", "inf"),
        ("seq_len", "nan"),
        ("flash_attention", "maybe"),
        ("lora_target_modules", "q_proj,nope"),
        ("hf_config", "x" * 20_001),
    ],
)
def test_a_bad_value_is_dropped(specs, name, raw):
    assert parse_query({name: raw}, specs) == {}
    assert parse_query({name: raw, "lora_rank": "16"}, specs) == {"lora_rank": 16}  # the others still count


def test_unknown_parameters_are_ignored(specs):
    assert parse_query({"tab": "calculators", "lang": "zh", "embed": "1", "__proto__": "x"}, specs) == {}


def test_booleans_and_numbers_parse_like_the_form():
    assert parse_value("TRUE", FieldSpec("bool")) == (True, True)
    assert parse_value("false", FieldSpec("bool")) == (True, False)
    assert parse_value("8", FieldSpec("int")) == (True, 8)
    assert parse_value("8.0", FieldSpec("int")) == (True, 8)
    assert parse_value("5e8", FieldSpec("float")) == (True, 5e8)
    assert parse_value("", FieldSpec("text")) == (False, "")
    assert format_value(5e8) == "500000000" and format_value(0.1) == "0.1" and format_value(None) == ""


def test_a_value_the_calculator_refuses_is_dropped_and_the_others_kept(initial, specs):
    asked = parse_query({"model": "llama-3-8b", "train_micro_batch_size_per_gpu": "-2", "seq_len": "2048"}, specs)
    assert asked["train_micro_batch_size_per_gpu"] == -2  # the box takes it ...
    assert checked_link_values(asked, initial) == {"model": "llama-3-8b", "seq_len": 2048}  # ... the calculator not


def test_page_load_fills_only_the_fields_the_link_sets(form):
    load, inputs, outputs = memory_from_url(form)
    assert inputs is None and len(outputs) == len(form["memory"][0])
    scope = {"type": "http", "query_string": b"tab=calculators&model=llama-3-8b&gradient_accumulation_steps=x"}
    request = gr.Request(request=Request({**scope, "headers": []}))
    updates = dict(zip(form["memory"][0], load(request), strict=True))
    assert updates["model"].get("value") == "llama-3-8b"
    assert "value" not in updates["gradient_accumulation_steps"] and "value" not in updates["gpu"]


def test_the_browser_function_carries_every_field_and_its_initial_value(initial):
    js = memory_in_url_js(initial)
    assert js.startswith("(...vals) =>") and "replaceState" in js and "gradio-app[src]" in js
    assert '"train_micro_batch_size_per_gpu": 1' in js and '"lora_target_modules": ["q_proj", "v_proj"]' in js
    assert "__FIELDS__" not in js and "__DEFAULTS__" not in js
