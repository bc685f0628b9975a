"""Property-based robustness tests (hypothesis) for the calculators and ``Assistant.ask``.

Properties:

* calculators (``resolve_batch``, ``estimate_memory(dict)``, ``sweep``, ``calculators.deepspeed``,
  ``run_tool``): for any input, either a result whose every number is finite and >= 0
  (``headroom`` excepted: negative means "does not fit"), or a ``CalculatorError`` whose
  message is non-empty, names the field, and exists in English and Chinese. Any other
  exception is a bug.
* ``Assistant.ask``: never raises; always an ``Answer`` with non-empty text that serialises to JSON.

Inputs: random Unicode (control characters, emoji, RTL marks), 100 kB messages, 1e309, -0.0,
NaN, inf, huge ints, mixed-script keys, SQL/HTML/script fragments, wrong types.

The bugs this file found (B1–B7, see docs/reliability.md) are kept as one-input regression
tests at the end (``test_fixed_bug_*``); their inputs are in the general strategies too.

Deterministic by default (``derandomize=True``, no example database). Explore with
``BATCHBOT_FUZZ_RANDOM=1`` and scale with ``BATCHBOT_FUZZ_SCALE=4``; run with ``-s`` to see
how many examples were tried.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculators import TOOLS, CalculatorError, MemoryConfig, estimate_memory, resolve_batch, run_tool, sweep
from calculators import deepspeed as ds
from calculators.sweep import SWEEPABLE

SCALE = float(os.environ.get("BATCHBOT_FUZZ_SCALE", "1"))
EXAMPLES: Counter[str] = Counter()
RESULTS: Counter[str] = Counter()  # calculator calls that returned a result (the rest were refused)


def fuzz_settings(n: int) -> settings:
    return settings(
        max_examples=max(1, int(n * SCALE)),
        deadline=None,
        database=None,
        derandomize=os.environ.get("BATCHBOT_FUZZ_RANDOM") != "1",
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )


# ---------------------------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------------------------
FLOAT_MAX = 1.7976931348623157e308
NASTY_STRINGS = [
    "",
    " ",
    "\x00",
    "\x1b[31m",
    "\u202eevil",
    "\ufeff",
    "🤖🔥💥",
    "👨‍👩‍👧",
    "'; DROP TABLE cards; --",
    '" OR 1=1 --',
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "{{7*7}}",
    "${jndi:ldap://x/a}",
    "../../etc/passwd",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "1e309",
    "-0",
    "0x10",
    "1_000",
    "七十亿",
    "ＲＴＸ３０９０",
    "gpt2",
    "GPT2 ",
    "llama-2-7b\n",
    "llama2-7b",
    "rtx-3090",
    "3090",
    "a100",
    "Ｌｌａｍａ",
    "bf16-mixed",
    "fp16-mixed",
    "zh",
    "en",
    "fr",
    "all",
    "q_proj",
    "模型",
    "显存",
    "Заказ",
    "مرحبا",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
]
SPECIAL_FLOATS = [
    float("nan"),
    float("inf"),
    -float("inf"),
    -0.0,
    0.0,
    1e309,
    -1e309,
    5e-324,
    FLOAT_MAX,
    -1e-300,
    0.5,
    1.5,
    2.0,
    4.0,
    1e13,
    1e15,
    1e16,
]
SPECIAL_INTS = [0, -1, 1, 2, 3, 7, 8, 2**31, 2**63, 2**64 + 1, 10**9, 10**9 + 1, 10**13, 10**18, 10**30]
HUGE_INTS = [10**400, -(10**400), 2**1100]  # do not fit a float

texts = st.text(max_size=40)  # hypothesis' default alphabet: all of Unicode except surrogates
scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from(SPECIAL_INTS),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(SPECIAL_FLOATS),
    texts,
    st.sampled_from(NASTY_STRINGS),
    st.sampled_from(HUGE_INTS),
)
mixed_keys = st.one_of(st.sampled_from(NASTY_STRINGS), texts)


def _nested(base: st.SearchStrategy) -> st.SearchStrategy:
    return st.recursive(
        base, lambda ch: st.lists(ch, max_size=3) | st.dictionaries(mixed_keys, ch, max_size=3), max_leaves=6
    )


weird = _nested(scalar)
small_pos = st.integers(1, 64)


def field_value(valid: st.SearchStrategy, bad: st.SearchStrategy = weird) -> st.SearchStrategy:
    """Mostly valid values (to reach the deep code), otherwise anything."""
    return st.one_of(valid, valid, bad)


# How wrong one generated input is: 0 = every field valid (reaches the arithmetic), 10 = every field
# anything. Drawn once per example, so a share of examples computes a result instead of being refused.
badness = st.sampled_from([0, 0, 0, 1, 2, 5, 10])


def pick(draw: st.DrawFn, level: int, valid: st.SearchStrategy, bad: st.SearchStrategy = weird) -> Any:
    return draw(bad) if draw(st.integers(0, 9)) < level else draw(valid)


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------
_CJK = re.compile(r"[\u3400-\u9fff]")


def _norm(s: str) -> str:
    return re.sub(r"[\s_.\-]+", " ", s.lower())


def check_error(err: CalculatorError) -> None:
    """A refusal names the field and exists in English and Chinese."""
    assert isinstance(err.field, str) and err.field, f"no field on {err!r}"
    en, zh = err.message("en"), err.message("zh")
    assert str(err).strip() and en.strip() and zh.strip(), repr(err)
    assert _CJK.search(zh), f"Chinese message has no Chinese: {zh!r}"
    assert err.field in en or _norm(err.field) in _norm(en), f"field {err.field!r} not named in {en!r}"


# The config doctor's ParsedConfig echoes the caller's own values back (raw, invalid, the extracted
# resolve_batch / MemoryConfig kwargs, the linked DeepSpeed config): inputs, not computed outputs.
ECHOED_INPUT = {"raw", "invalid", "batch", "memory", "deepspeed"}


def check_numbers(obj: Any, path: str = "") -> None:
    """Every int/float in a pydantic dump is finite and non-negative (headroom may be negative)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ECHOED_INPUT and path.endswith((".parsed", ".companion")):
                continue
            check_numbers(v, f"{path}.{k}")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            check_numbers(v, f"{path}[{i}]")
    elif isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return
    elif isinstance(obj, (int, float)):
        assert math.isfinite(obj), f"{path} = {obj!r} is not finite"
        if not path.endswith(".headroom"):
            assert obj >= 0, f"{path} = {obj!r} is negative"


def call_calculator(name: str, fn: Callable[[], Any]) -> Any:
    """Run one calculator call: a result with sane numbers, or a well-formed CalculatorError."""
    EXAMPLES[name] += 1
    try:
        result = fn()
    except CalculatorError as err:
        check_error(err)
        return None
    RESULTS[name] += 1
    dump = result.model_dump() if hasattr(result, "model_dump") else result
    check_numbers(dump, name)
    return result


# ---------------------------------------------------------------------------------------------
# resolve_batch
# ---------------------------------------------------------------------------------------------
BATCH_FIELDS = {
    "train_batch_size": st.one_of(st.none(), small_pos, st.integers(1, 10**10)),
    "train_micro_batch_size_per_gpu": st.one_of(st.none(), small_pos),
    "gradient_accumulation_steps": st.one_of(st.none(), small_pos),
    "world_size": small_pos,
    "seq_len": st.one_of(st.none(), st.integers(1, 10**8)),
    "dataset_size": st.one_of(st.none(), st.integers(1, 10**13)),
    "base_learning_rate": st.one_of(st.none(), st.floats(1e-8, 100)),
    "base_batch_size": st.one_of(st.none(), small_pos),
    "per_device_train_batch_size": st.one_of(st.none(), small_pos),
    "lang": st.sampled_from(["en", "zh"]),
}


@st.composite
def batch_kwargs(draw: st.DrawFn) -> dict[str, Any]:
    out = {}
    level = draw(badness)
    for name, valid in BATCH_FIELDS.items():
        if draw(st.booleans()):
            out[name] = pick(draw, level, valid, weird)
    return out


@fuzz_settings(400)
@given(batch_kwargs())
def test_resolve_batch_never_crashes(kwargs: dict[str, Any]) -> None:
    call_calculator("resolve_batch", lambda: resolve_batch(**kwargs))


# ---------------------------------------------------------------------------------------------
# estimate_memory(dict) over every MemoryConfig field
# ---------------------------------------------------------------------------------------------
HF_KEYS = [
    "model_type",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "intermediate_size",
    "vocab_size",
    "head_dim",
    "n_embd",
    "n_layer",
    "n_head",
    "d_model",
    "d_kv",
    "d_ff",
    "num_layers",
    "num_heads",
    "tie_word_embeddings",
    "multi_query_group_num",
    "ffn_hidden_size",
]
TINY_LLAMA = {
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 172,
    "vocab_size": 1000,
}
hf_size = st.one_of(
    st.integers(-3, 10**30),
    st.sampled_from([0.5, 64.0, float("nan"), float("inf"), 1e309, 10**200, 10**400, "64", "x", None, [64]]),
)


@st.composite
def hf_configs(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["tweaked", "random", "json", "text"]))
    if kind == "tweaked":
        cfg = dict(TINY_LLAMA)
        for key in draw(st.lists(st.sampled_from(HF_KEYS), max_size=3)):
            if draw(st.booleans()):
                cfg.pop(key, None)
            else:
                cfg[key] = (
                    draw(hf_size)
                    if key != "model_type"
                    else draw(st.sampled_from(["llama", "gpt2", "t5", "bert", "chatglm", "qwen2", "", "🤖"]))
                )
        return cfg
    if kind == "random":
        return draw(st.dictionaries(st.one_of(st.sampled_from(HF_KEYS), mixed_keys), hf_size, max_size=8))
    if kind == "json":
        import json

        return json.dumps(draw(hf_configs()) if draw(st.booleans()) else TINY_LLAMA)
    return draw(
        st.one_of(
            st.sampled_from(NASTY_STRINGS),
            st.text(max_size=30),
            st.just("/nonexistent/config.json"),
            st.just("/"),
            st.just("{not json"),
        )
    )


MEMORY_FIELDS: dict[str, st.SearchStrategy] = {
    "model": st.sampled_from(["llama-2-7b", "gpt2", "t5-3b", "bert-base", "qwen2.5-7b", "llama-2-70b"]),
    "num_params": st.one_of(st.floats(1, 1e13), st.integers(1, 10**13)),
    "hf_config": hf_configs(),
    "hidden_size": st.integers(1, 10**6),
    "num_layers": st.integers(1, 200),
    "num_attention_heads": st.integers(1, 128),
    "vocab_size": st.integers(1, 10**6),
    "gpu": st.sampled_from(["rtx-3090", "a100-80gb", "t4", "3090", "H100", "h200"]),
    "gpu_memory_gb": st.floats(1e-3, 1e5),
    "precision": st.sampled_from(["fp32", "amp-fp16", "amp-bf16", "fp16-mixed", "bf16-mixed", "bf16"]),
    "optimizer": st.sampled_from(["adamw", "adamw-8bit", "sgd-momentum", "adafactor"]),
    "adamw_kernel": st.sampled_from(["fused", "foreach"]),
    "zero_stage": st.integers(0, 3),
    "world_size": st.integers(1, 64),
    "num_nodes": st.integers(1, 8),
    "offload_optimizer": st.booleans(),
    "offload_param": st.booleans(),
    "pipeline_parallel_size": st.integers(1, 16),
    "finetune": st.sampled_from(["full", "lora", "qlora"]),
    "lora_rank": st.integers(1, 1024),
    "lora_target_modules": st.one_of(
        st.just(["all"]),
        st.lists(
            st.sampled_from(["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]),
            min_size=1,
            max_size=7,
        ),
    ),
    "train_micro_batch_size_per_gpu": st.integers(1, 65536),
    "gradient_accumulation_steps": st.integers(1, 10**9),
    "seq_len": st.integers(1, 10**7),
    "gradient_checkpointing": st.sampled_from(["none", "selective", "full"]),
    "flash_attention": st.booleans(),
    "cuda_context_gb": st.floats(0, 64),
    "reduce_bucket_size": st.floats(1, 1e12),
    "allgather_bucket_size": st.floats(1, 1e12),
    "overlap_comm": st.booleans(),
    "zero_grad_set_to_none": st.booleans(),
    "loss_implementation": st.sampled_from(["hf", "hf-keep-outputs", "chunked", "lm-head-chunks", "ce-chunks"]),
    "allocator_slack_fraction": st.floats(0, 10),
    "fsdp": st.sampled_from(["none", "full_shard", "shard_grad_op", "hybrid_shard", "no_shard"]),
    "fsdp_cpu_offload": st.booleans(),
    "fsdp_sync_each_batch": st.booleans(),
    "bitsandbytes_before_0_43_2": st.booleans(),
    "qlora_double_quant": st.booleans(),
    "lora_int8_base": st.booleans(),
    "qlora_lm_head_4bit": st.booleans(),
    "fsdp_frozen_in_trainable_units": st.booleans(),
    "optimizer_in_backward": st.booleans(),
    "activation_offloading": st.booleans(),
    "images_per_sample": st.integers(0, 10_000),
    "visual_tokens_in_seq_len": st.booleans(),
    "image_height": st.one_of(st.none(), st.integers(1, 100_000)),
    "image_width": st.one_of(st.none(), st.integers(1, 100_000)),
    "image_max_pixels": st.one_of(st.none(), st.integers(1, 10**9)),
    "freeze_vision_tower": st.booleans(),
    "freeze_projector": st.booleans(),
}
assert set(MEMORY_FIELDS) == set(MemoryConfig.model_fields), "a MemoryConfig field is not fuzzed"
MODEL_SOURCES = ("model", "num_params", "hf_config")


@st.composite
def memory_configs(draw: st.DrawFn) -> dict[str, Any]:
    cfg: dict[str, Any] = {}
    level = draw(badness)
    # usually exactly one model source (the valid case), sometimes none or several
    sources = draw(
        st.one_of(
            st.sampled_from(MODEL_SOURCES).map(lambda s: [s]),
            st.lists(st.sampled_from(MODEL_SOURCES), max_size=3, unique=True),
        )
    )
    for s in sources:
        cfg[s] = pick(draw, level, MEMORY_FIELDS[s])
    others = [f for f in MEMORY_FIELDS if f not in MODEL_SOURCES]
    for name in draw(st.lists(st.sampled_from(others), max_size=8, unique=True)):
        cfg[name] = pick(draw, level, MEMORY_FIELDS[name])
    if level and draw(st.integers(0, 9)) == 0:  # an unknown, mixed-script key
        cfg[draw(mixed_keys.filter(lambda k: k not in MEMORY_FIELDS))] = draw(weird)
    return cfg


@fuzz_settings(400)
@given(
    st.one_of(
        memory_configs(),
        memory_configs(),
        memory_configs(),
        weird,
        st.dictionaries(st.one_of(st.integers(), st.none()), weird, max_size=3),
    )
)
def test_estimate_memory_never_crashes(cfg: Any) -> None:
    call_calculator("estimate_memory", lambda: estimate_memory(cfg))


@st.composite
def sweep_args(draw: st.DrawFn) -> tuple[Any, Any, Any]:
    level = draw(badness)
    field = pick(draw, level, st.sampled_from(SWEEPABLE), st.one_of(mixed_keys, weird))
    valid = MEMORY_FIELDS.get(field, st.integers(1, 64)) if isinstance(field, str) else st.integers(1, 64)
    values = pick(draw, level, st.lists(valid, min_size=1, max_size=4), st.one_of(st.lists(weird, max_size=5), weird))
    return draw(st.one_of(memory_configs(), memory_configs(), weird)), field, values


@fuzz_settings(120)
@given(sweep_args())
def test_sweep_never_crashes(args: tuple[Any, Any, Any]) -> None:
    cfg, field, values = args
    call_calculator("sweep", lambda: sweep(cfg, field, values))


def test_sweep_refuses_too_many_points() -> None:
    with pytest.raises(CalculatorError) as exc:
        sweep({"model": "gpt2"}, "seq_len", list(range(1, 300)))
    check_error(exc.value)


# ---------------------------------------------------------------------------------------------
# calculators.deepspeed
# ---------------------------------------------------------------------------------------------
DS_VALID = {
    "params": st.one_of(st.integers(1, 10**15), st.floats(1, 1e15)),
    "count": st.integers(1, 1024),
    "flag": st.booleans(),
    "buffer": st.floats(1.0, 10.0),
}
DS_BAD = {"params": weird, "count": weird, "flag": weird, "buffer": weird}


@st.composite
def ds_args(draw: st.DrawFn, *kinds: str) -> list[Any]:
    level = draw(badness)
    return [pick(draw, level, DS_VALID[k], DS_BAD[k]) for k in kinds]


ds_params = field_value(DS_VALID["params"], DS_BAD["params"])
ds_count = field_value(DS_VALID["count"], DS_BAD["count"])
ds_flag = field_value(DS_VALID["flag"], DS_BAD["flag"])
ds_buffer = field_value(DS_VALID["buffer"], DS_BAD["buffer"])


@fuzz_settings(200)
@given(ds_args("params", "count", "count", "flag", "buffer"))
def test_deepspeed_zero2_never_crashes(args: list[Any]) -> None:
    p, g, n, off, buf = args
    call_calculator("deepspeed.zero2", lambda: ds.estimate_zero2_model_states_mem_needs(p, g, n, off, buf))
    call_calculator("deepspeed.zero2_table", lambda: ds.zero2_table(p, g, n, buf))


@fuzz_settings(200)
@given(ds_args("params", "params", "count", "count", "flag", "flag", "flag", "buffer"))
def test_deepspeed_zero3_never_crashes(args: list[Any]) -> None:
    p, layer, g, n, off, offp, init, buf = args
    call_calculator(
        "deepspeed.zero3", lambda: ds.estimate_zero3_model_states_mem_needs(p, layer, g, n, off, offp, init, buf)
    )
    call_calculator("deepspeed.zero3_table", lambda: ds.zero3_table(p, layer, g, n, buf))


# ---------------------------------------------------------------------------------------------
# run_tool (every registered tool, including the config doctor "config_check")
# ---------------------------------------------------------------------------------------------
CONFIG_SNIPPETS_FOR_TOOLS = [
    '{"train_batch_size": 1e309, "train_micro_batch_size_per_gpu": -0, "gradient_accumulation_steps": NaN}',
    '{"train_batch_size": 128, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}',
    "per_device_train_batch_size: 1e309\ngradient_accumulation_steps: .nan\ndeepspeed: ds_z3.json",
    "deepspeed --num_gpus 99999999999999999999 train.py --per_device_train_batch_size -0",
    "stage: sft\nper_device_train_batch_size: [1, 2]\ngradient_accumulation_steps: {a: 1}",
]
DS_CONFIG_KEYS = [
    "train_batch_size",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "fp16",
    "bf16",
    "zero_optimization",
    "gradient_clipping",
    "optimizer",
    "per_device_train_batch_size",
    "stage",
    "offload_optimizer",
    "deepspeed",
    "num_processes",
    "cutoff_len",
    "finetuning_type",
]
ds_config_value = st.one_of(st.sampled_from(["auto", 1, 8, 128, True, {"stage": 3}, {"enabled": True}]), weird)
config_check_args = st.fixed_dictionaries(
    {
        "config": st.one_of(
            st.sampled_from(CONFIG_SNIPPETS_FOR_TOOLS),
            texts,
            st.dictionaries(st.one_of(st.sampled_from(DS_CONFIG_KEYS), mixed_keys), ds_config_value, max_size=6),
            weird,
        )
    },
    optional={
        "gpu": st.one_of(st.sampled_from(["rtx-3090", "a100", "T4"]), weird),
        "world_size": st.one_of(st.integers(1, 64), weird),
        "model": st.one_of(st.sampled_from(["llama-2-7b", "qwen2.5-7b"]), weird),
        "lang": st.one_of(st.sampled_from(["en", "zh"]), weird),
        "training_args": st.one_of(
            st.dictionaries(st.sampled_from(DS_CONFIG_KEYS), ds_config_value, max_size=4), weird
        ),
    },
)

PASTES_FOR_TOOLS = sorted(
    p.read_text(encoding="utf-8") for p in (Path(__file__).parent / "data" / "pastes").glob("*.txt")
)
diagnose_args = st.fixed_dictionaries(
    {
        "text": st.one_of(
            st.sampled_from(PASTES_FOR_TOOLS or [""]),
            texts,
            st.builds(
                lambda a, b, c: a[: len(a) // 2] + b + c,
                st.sampled_from(PASTES_FOR_TOOLS or [""]),
                texts,
                st.sampled_from(PASTES_FOR_TOOLS or [""]),
            ),
            weird,
        )
    },
    optional={
        "lang": st.one_of(st.sampled_from(["en", "zh"]), weird),
        "setup": st.one_of(
            st.dictionaries(
                st.sampled_from(
                    [
                        "model",
                        "num_params",
                        "seq_len",
                        "vocab_size",
                        "world_size",
                        "train_micro_batch_size_per_gpu",
                        "zero_stage",
                        "offload_optimizer",
                        "num_attention_heads",
                    ]
                ),
                weird,
                max_size=4,
            ),
            weird,
        ),
    },
)

TOOL_ARGS = {
    "config_check": config_check_args,
    "fact_check": st.fixed_dictionaries(
        {"text": st.one_of(texts, weird)}, optional={"lang": st.one_of(st.sampled_from(["en", "zh"]), weird)}
    ),
    "diagnose": diagnose_args,
    "effective_batch": batch_kwargs(),
    "memory": memory_configs(),
    "sweep": st.fixed_dictionaries(
        {
            "config": memory_configs(),
            "field": st.sampled_from(SWEEPABLE),
            "values": st.one_of(
                st.lists(st.integers(1, 16), min_size=1, max_size=4), st.lists(weird, min_size=1, max_size=4)
            ),
        }
    ),
    "steps_back_solve": st.fixed_dictionaries(
        {
            "dataset_size": st.one_of(st.integers(-5, 10**14), weird),
            "observed_steps": st.one_of(st.integers(-5, 10**14), weird),
        },
        optional={
            "num_train_epochs": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), weird),
            "per_epoch": st.one_of(st.booleans(), weird),
        },
    ),
    "lr_scaling": st.fixed_dictionaries(
        {
            "base_batch_size": st.one_of(st.integers(-5, 10**12), weird),
            "new_batch_size": st.one_of(st.integers(-5, 10**12), weird),
        },
        optional={
            "base_learning_rate": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), weird),
            "per_gpu_held": st.one_of(st.booleans(), weird),
        },
    ),
    "host_ram_load": st.fixed_dictionaries(
        {
            "num_params": st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 10**14), weird),
            "processes_per_node": st.one_of(st.integers(-5, 5000), weird),
        },
        optional={"host_ram_gb": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), weird)},
    ),
    "throughput": st.fixed_dictionaries(
        {
            "num_params": st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 10**14), weird),
            "num_gpus": st.one_of(st.integers(-5, 10**7), weird),
        },
        optional={
            "step_time_s": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), weird),
            "tokens_per_step": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), weird),
            "tokens_per_second": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), weird),
            "gpu": st.one_of(st.none(), st.sampled_from(["v100", "a100-80gb", "h20", "rtx-9999"]), weird),
            "peak_tflops": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), weird),
            "precision": st.one_of(st.none(), st.sampled_from(["bf16", "fp16", "fp32", "int8"]), weird),
            "num_layers": st.one_of(st.none(), st.integers(-5, 10**6), weird),
            "seq_len": st.one_of(st.none(), st.integers(-5, 10**9), weird),
            "attention_width": st.one_of(st.none(), st.integers(-5, 10**8), weird),
            "frozen_base": st.one_of(st.booleans(), weird),
            "activation_checkpointing": st.one_of(st.booleans(), weird),
            "token_budget": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), weird),
        },
    ),
    "deepspeed_zero2": st.fixed_dictionaries(
        {"total_params": ds_params},
        optional={
            "num_gpus_per_node": ds_count,
            "num_nodes": ds_count,
            "cpu_offload": ds_flag,
            "additional_buffer_factor": ds_buffer,
        },
    ),
    "deepspeed_zero3": st.fixed_dictionaries(
        {"total_params": ds_params, "largest_layer_params": ds_params},
        optional={"num_gpus_per_node": ds_count, "cpu_offload_params": ds_flag, "zero_init": ds_flag},
    ),
}


assert set(TOOL_ARGS) == set(TOOLS), "a registered tool is not fuzzed"


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[Any, Any]:
    names = st.sampled_from(sorted(TOOL_ARGS))
    name = draw(st.one_of(names, names, names, mixed_keys, st.none(), st.integers(), weird))
    if isinstance(name, str) and name in TOOL_ARGS and draw(st.integers(0, 4)) > 0:
        args = dict(draw(TOOL_ARGS[name]))
        if draw(st.integers(0, 9)) == 0:  # an unknown, mixed-script argument name
            args[draw(mixed_keys)] = draw(weird)
        return name, args
    return name, draw(
        st.one_of(
            st.dictionaries(mixed_keys, weird, max_size=4),
            st.dictionaries(st.one_of(mixed_keys, st.integers(), st.none()), weird, max_size=4),
            weird,
        )
    )


@fuzz_settings(300)
@given(tool_calls())
def test_run_tool_never_crashes(call: tuple[Any, Any]) -> None:
    name, args = call
    call_calculator("run_tool", lambda: run_tool(name, args))


# ---------------------------------------------------------------------------------------------
# Assistant.ask (one Assistant for the module; the session one from conftest when it exists)
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bot(request: pytest.FixtureRequest) -> Any:
    try:
        return request.getfixturevalue("assistant")
    except pytest.FixtureLookupError:
        from rag import Assistant

        return Assistant()


CONFIG_SNIPPETS = [
    '{"train_batch_size": 1e309, "train_micro_batch_size_per_gpu": -0, "gradient_accumulation_steps": NaN}',
    '{"train_batch_size": 128, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8, '
    '"zero_optimization": {"stage": 3}}',
    "per_device_train_batch_size: 1e309\ngradient_accumulation_steps: .nan\ndeepspeed: ds_z3.json",
    "TrainingArguments(per_device_train_batch_size=-0, gradient_accumulation_steps=99999999999999999999999)",
    "```yaml\nstage: sft\nper_device_train_batch_size: [1, 2]\ngradient_accumulation_steps: {a: 1}\n```",
    '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": "三"}, "💥": null}',
]
QUESTION_PARTS = [
    "gradient_accumulation_steps 增大会增加显存吗",
    "Does GA increase memory?",
    "7B LoRA on a 3090, micro batch?",
    "world_size=8 micro=2 GA=4",
    "ZeRO-3 offload",
    "llama-2-70b full fine-tune on 1e309 GPUs",
    "micro batch -0 GA NaN seq inf",
    "bf16 vs fp16",
    "99999999999999999999999999 张卡",
    "那用 ZeRO-3 呢？",
    "and with 4 GPUs?",
    "<script>alert('显存')</script>",
    "'; DROP TABLE cards; --",
    "🤖🔥",
    "\x00\x07\x1b[2J",
    "\u202e\u200b\ufeff",
    "ＧＡ＝８，ｍｉｃｒｏ＝２",
    "train_batch_size 128 != 4 * 8 * 2",
]


@st.composite
def questions(draw: st.DrawFn) -> Any:
    kind = draw(st.integers(0, 9))
    if kind <= 3:
        return " ".join(
            draw(
                st.lists(
                    st.one_of(st.sampled_from(QUESTION_PARTS), st.sampled_from(NASTY_STRINGS), texts),
                    min_size=1,
                    max_size=5,
                )
            )
        )
    if kind == 4:
        return draw(st.text(st.characters(codec=None), min_size=0, max_size=300) | st.text(max_size=300))
    if kind == 5:
        return draw(st.sampled_from(CONFIG_SNIPPETS)) + draw(st.sampled_from(["", " 3090 上能跑吗？", " fits a T4?"]))
    if kind == 6:  # 100 kB
        unit = draw(st.sampled_from(["显存", "GA ", "🤖", "a", '{"x": 1}, ', "\x00"]))
        return unit * (100_000 // len(unit.encode("utf-8")))
    if kind == 7:
        return draw(st.sampled_from(QUESTION_PARTS)) + " " + str(draw(scalar))
    return draw(weird)  # a wrong type


@fuzz_settings(60)
@given(questions())
def test_ask_always_answers(bot: Any, question: Any) -> None:
    from rag import Answer

    EXAMPLES["Assistant.ask"] += 1
    answer = bot.ask(question)
    assert isinstance(answer, Answer)
    assert isinstance(answer.text, str) and answer.text.strip()
    assert answer.language in ("zh", "en")
    answer.model_dump_json()  # what the /chat API sends must be JSON-encodable


@fuzz_settings(20)
@given(st.sampled_from(QUESTION_PARTS[:10]), questions())
def test_ask_follow_up_always_answers(bot: Any, first: str, follow_up: Any) -> None:
    """A real history (from a previous answer) followed by anything."""
    EXAMPLES["Assistant.ask (follow-up)"] += 1
    history = bot.ask(first).history
    answer = bot.ask(follow_up, history=history)
    assert answer.text.strip() and answer.language in ("zh", "en")
    answer.model_dump_json()


history_items = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "role": st.one_of(st.sampled_from(["user", "assistant"]), weird),
            "content": weird,
            "language": st.one_of(st.sampled_from(["zh", "en", "fr"]), weird),
            "slots": st.one_of(
                st.dictionaries(
                    st.sampled_from(["train_micro_batch_size_per_gpu", "world_size", "zero_stage", "model", "bogus"]),
                    weird,
                    max_size=3,
                ),
                weird,
            ),
            "intents": st.one_of(st.dictionaries(mixed_keys, weird, max_size=2), weird),
        },
    ),
    weird,
)


@fuzz_settings(20)
@given(questions(), st.one_of(st.lists(history_items, max_size=4), weird))
def test_ask_survives_any_history(bot: Any, question: Any, history: Any) -> None:
    """/chat passes the client's history through: whatever it is, ask() answers."""
    EXAMPLES["Assistant.ask (garbage history)"] += 1
    answer = bot.ask(question, history=history)
    assert answer.text.strip() and answer.language in ("zh", "en")
    answer.model_dump_json()


# ---------------------------------------------------------------------------------------------
# bugs found by this file, fixed since: one input each, kept as regression tests
# ---------------------------------------------------------------------------------------------
def _must_refuse(fn: Callable[[], Any]) -> None:
    try:
        result = fn()
    except CalculatorError as err:
        check_error(err)
        return
    check_numbers(result.model_dump() if hasattr(result, "model_dump") else result)


B1 = "B1: calculators/validate.py positive_float and calculators/deepspeed.py _param_count/_buffer_factor call float(value) before range checks: OverflowError for ints > 1.8e308"
B2 = "B2: calculators/presets.py shape_from_hf_config: int(inf) OverflowError, huge sizes overflow n/pp in memory.py, NUL in a path string raises ValueError from open()"
B3 = "B3: estimate_memory/sweep with a config that is neither dict nor MemoryConfig (None, str, list) or has non-str keys: AttributeError/TypeError"
B4 = "B4: calculators/tools.py run_tool: unhashable name -> TypeError; non-str argument names -> TypeError from sorted() in the error path"
B5 = "B5: rag/assistant.py ask(): a history that is not a list of well-formed dicts raises (AttributeError/TypeError/ValidationError/KeyError)"
B6 = "B6: rag/assistant.py ask(): a question of control/surrogate characters only is refused with the raw text kept in history -> Answer not JSON-serialisable"

B7 = "B7: calculators/memory.py MemoryConfig._check: world_size % num_nodes with num_nodes=0 (or False/0.0) -> ZeroDivisionError"

_TINY = dict(TINY_LLAMA)


@pytest.mark.parametrize(
    "fn",
    [
        lambda: resolve_batch(train_micro_batch_size_per_gpu=1, base_learning_rate=10**400, base_batch_size=1),
        lambda: ds.estimate_zero2_model_states_mem_needs(10**400),
        lambda: ds.estimate_zero2_model_states_mem_needs(1e9, additional_buffer_factor=10**400),
        lambda: ds.estimate_zero3_model_states_mem_needs(10**400, 1),
    ],
    ids=["resolve_batch.base_learning_rate", "zero2.total_params", "zero2.buffer_factor", "zero3.total_params"],
)
def test_fixed_bug_b1_huge_int(fn: Callable[[], Any]) -> None:
    _must_refuse(fn)


@pytest.mark.parametrize(
    "cfg",
    [
        {"hf_config": {**_TINY, "hidden_size": float("inf")}},
        {
            "hf_config": '{"model_type": "llama", "hidden_size": 1e309, "num_hidden_layers": 2, "num_attention_heads": 4,'
            ' "intermediate_size": 128, "vocab_size": 1000}'
        },
        {"hf_config": {**_TINY, "hidden_size": 10**200}},
        {"hf_config": "\x00"},
    ],
    ids=["inf", "json-1e309", "10**200", "nul-path"],
)
def test_fixed_bug_b2_hf_config(cfg: dict[str, Any]) -> None:
    _must_refuse(lambda: estimate_memory(cfg))


@pytest.mark.parametrize(
    "fn",
    [
        lambda: estimate_memory(None),
        lambda: estimate_memory("llama-2-7b"),
        lambda: estimate_memory({1: 2}),
        lambda: sweep(None, "seq_len", [1]),
        lambda: sweep([1], "seq_len", [1]),
        lambda: run_tool("sweep", {"config": [1], "field": "seq_len", "values": [1]}),
    ],
    ids=["memory-None", "memory-str", "memory-int-key", "sweep-None", "sweep-list", "run_tool-sweep-list"],
)
def test_fixed_bug_b3_config_type(fn: Callable[[], Any]) -> None:
    _must_refuse(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda: run_tool(["memory"], {}),
        lambda: run_tool("effective_batch", {1: 2, "a": 3}),
        lambda: run_tool("memory", {1: 2, "model": "gpt2"}),
    ],
    ids=["list-name", "mixed-keys-batch", "mixed-keys-memory"],
)
def test_fixed_bug_b4_run_tool(fn: Callable[[], Any]) -> None:
    _must_refuse(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda: estimate_memory({"model": "gpt2", "num_nodes": 0}),
        lambda: sweep({"model": "llama-2-7b", "num_nodes": False}, "seq_len", [1]),
    ],
    ids=["memory-0", "sweep-False"],
)
def test_fixed_bug_b7_num_nodes_zero(fn: Callable[[], Any]) -> None:
    _must_refuse(fn)


@pytest.mark.parametrize(
    "history",
    [
        [1, 2],
        {"a": 1},
        5,
        [{"role": "user", "slots": {"bogus": 1}}],
        [{"role": "user", "slots": None}],
        [{"role": "user", "slots": {}, "intents": None}],
        [{"language": "fr"}],
    ],
    ids=["ints", "dict", "int", "unknown-slot", "slots-None", "intents-None", "language-fr"],
)
def test_fixed_bug_b5_bad_history(bot: Any, history: Any) -> None:
    question = "???" if history == [{"language": "fr"}] else "and with 4 GPUs?"
    assert bot.ask(question, history=history).text.strip()


def test_fixed_bug_b6_surrogate_question(bot: Any) -> None:
    bot.ask("\x00\ud800").model_dump_json()


def test_zz_examples_tried() -> None:
    """Runs last in this file: prints how many generated examples each property saw (use -s)."""
    total = sum(EXAMPLES.values())
    lines = [
        f"  {k}: {v}" + (f" ({RESULTS[k]} computed, {v - RESULTS[k]} refused)" if k in RESULTS else "")
        for k, v in sorted(EXAMPLES.items())
    ]
    print(f"\nfuzz examples tried: {total}\n" + "\n".join(lines))
    if EXAMPLES:  # when the whole file ran
        assert total > 0
