"""The doctor's library adapters: degrade visibly, stay thread-safe, escape what they echo (issues #13, #19)."""

from __future__ import annotations

import json
import pathlib
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from calculators.configs import check_config, library

DATA = pathlib.Path(__file__).parent / "data" / "configs"
HAVE_LIBS = all(library.version(n) != "not installed" for n in ("deepspeed", "transformers", "accelerate"))
needs_libs = pytest.mark.skipif(not HAVE_LIBS, reason="deepspeed / transformers / accelerate not installed")


def test_importing_calculators_does_not_import_the_libraries():
    import subprocess

    code = (
        "import sys, calculators, calculators.configs; "
        "print(sorted(m for m in ('deepspeed', 'accelerate', 'transformers', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_a_library_that_fails_to_import_degrades_to_our_checks_with_a_note(monkeypatch):
    monkeypatch.setattr(library, "_imported", {})
    monkeypatch.setattr(library, "_failed", {"deepspeed.runtime.config": "ImportError: simulated"})
    r = check_config(
        {"train_batch_size": 33, "train_micro_batch_size_per_gpu": 17, "gradient_accumulation_steps": 2}, world_size=2
    )
    note = [f for f in r.findings if f.key == "library"]
    assert note and note[0].severity == "info" and "could not be loaded" in note[0].message
    assert "ImportError: simulated" in note[0].message
    # our own batch check still answers, with DeepSpeed's wording
    assert any("33 != 17 * 2 * 2" in f.message for f in r.errors)
    zh = check_config({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2}}, lang="zh")
    assert any("无法加载 deepspeed" in f.message for f in zh.findings)


def test_without_libraries_the_own_checks_run_alone():
    r = check_config(json.loads((DATA / "bad_offload_stage1.json").read_text()), use_libraries=False)
    assert not [f for f in r.findings if f.key == "library"]
    f = r.find("zero_optimization.offload_param", "warning")[0]  # DeepSpeed ignores it: a warning, not a failure
    assert f.message.startswith("Ignored") and "Valid only with stage 3" in f.message


@needs_libs
def test_world_size_is_supplied_per_call_and_threads_do_not_mix():
    cfg = {
        "train_batch_size": 64,
        "train_micro_batch_size_per_gpu": 4,
        "gradient_accumulation_steps": 2,
        "zero_optimization": {"stage": 2},
    }
    sizes = [1, 8, 2, 8, 4, 8, 16, 8] * 3

    def verdict(ws: int) -> bool:
        return bool(check_config(cfg, world_size=ws).errors)

    with ThreadPoolExecutor(max_workers=6) as pool:
        got = list(pool.map(verdict, sizes))
    assert got == [ws != 8 for ws in sizes]  # 64 = 4 × 2 × 8 holds only on 8 GPUs


@needs_libs
def test_no_process_group_is_started():
    import torch.distributed as dist

    check_config({"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 3}}, world_size=8)
    assert not dist.is_initialized()


@needs_libs
def test_report_escapes_what_it_echoes_from_the_config():
    nasty = {
        "<script>alert(1)</script>": "<img src=x onerror=alert(1)>",
        "javascript:alert(1)": 1,
        "train_micro_batch_size_per_gpu": 1,
        "zero_optimization": {
            "stage": 2,
            "<img src=x onerror=alert(1)>": "javascript:alert(1)",
            "reduce_bucket_size": "<script>alert(1)</script>",
        },
    }
    for cfg, kw in (
        (nasty, {}),
        (
            "per_device_train_batch_size: 2\n'<script>alert(1)</script>': "
            "'[x](javascript:alert(1))'\nfp16: true\nbf16: true\n",
            {},
        ),
        (nasty, {"training_args": {"per_device_train_batch_size": 1, "<b>x</b>": "javascript:alert(1)"}}),
        (
            "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n'<img src=x onerror=alert(1)>': "
            "javascript:alert(1)\n",
            {},
        ),
    ):
        r = check_config(cfg, model="<script>alert(1)</script>", gpu="javascript:alert(1)", **kw)
        for lang in ("en", "zh"):
            md = r.to_markdown(lang)
            assert "<" not in md and "javascript:" not in md.lower(), md
        assert r.errors or r.warnings


# --- the adapters never turn odd values into a checker failure -------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from calculators.configs import INTERNAL_ERROR_KEY  # noqa: E402

_vals = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 10**12),
    st.floats(allow_nan=True),
    st.text(max_size=5),
    st.sampled_from(["auto", "cpu", "nvme", "none", "bf16", "fp16", "no", "DEEPSPEED", "FSDP", "2"]),
)
_acc = st.fixed_dictionaries(
    {"distributed_type": st.sampled_from(["DEEPSPEED", "FSDP", "MULTI_GPU", "NO", "x"])},
    optional={
        "num_processes": _vals,
        "mixed_precision": _vals,
        "num_machines": _vals,
        "use_cpu": _vals,
        "deepspeed_config": st.dictionaries(
            st.sampled_from(
                [
                    "zero_stage",
                    "gradient_accumulation_steps",
                    "offload_optimizer_device",
                    "offload_param_device",
                    "deepspeed_config_file",
                    "zero3_init_flag",
                ]
            ),
            _vals,
            max_size=4,
        ),
    },
)
_ds = st.dictionaries(
    st.sampled_from(
        [
            "train_batch_size",
            "train_micro_batch_size_per_gpu",
            "gradient_accumulation_steps",
            "gradient_clipping",
            "zero_optimization",
            "fp16",
            "bf16",
            "optimizer",
            "scheduler",
        ]
    ),
    st.one_of(
        _vals,
        st.fixed_dictionaries(
            {},
            optional={
                "stage": _vals,
                "enabled": _vals,
                "reduce_bucket_size": _vals,
                "params": st.dictionaries(st.sampled_from(["lr", "warmup_num_steps", "total_num_steps"]), _vals),
            },
        ),
    ),
    max_size=6,
)
_hf = st.dictionaries(
    st.sampled_from(
        [
            "per_device_train_batch_size",
            "gradient_accumulation_steps",
            "learning_rate",
            "bf16",
            "fp16",
            "max_steps",
            "warmup_steps",
            "max_grad_norm",
            "lr_scheduler_type",
        ]
    ),
    _vals,
    max_size=5,
)


@needs_libs
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(_acc, st.sampled_from([None, 1, 8]), st.one_of(st.none(), _ds))
def test_accelerate_adapter_never_fails_internally(cfg, ws, ds):
    r = check_config(cfg, world_size=ws, training_args=ds)
    assert not r.find(INTERNAL_ERROR_KEY), r.find(INTERNAL_ERROR_KEY)
    assert "<" not in r.to_markdown()


@needs_libs
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(_ds, _hf, st.sampled_from([None, 1, 8]))
def test_trainer_path_adapter_never_fails_internally(ds, hf, ws):
    r = check_config(
        {"zero_optimization": {}, **ds}, training_args={"per_device_train_batch_size": 1, **hf}, world_size=ws
    )
    assert not r.find(INTERNAL_ERROR_KEY), r.find(INTERNAL_ERROR_KEY)
