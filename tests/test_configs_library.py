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
    code = ("import sys, calculators, calculators.configs; "
            "print(sorted(m for m in ('deepspeed', 'accelerate', 'transformers', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_a_library_that_fails_to_import_degrades_to_our_checks_with_a_note(monkeypatch):
    monkeypatch.setattr(library, "_imported", {})
    monkeypatch.setattr(library, "_failed", {"deepspeed.runtime.config": "ImportError: simulated"})
    r = check_config({"train_batch_size": 33, "train_micro_batch_size_per_gpu": 17, "gradient_accumulation_steps": 2},
                     world_size=2)
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
    cfg = {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2,
           "zero_optimization": {"stage": 2}}
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
    nasty = {"<script>alert(1)</script>": "<img src=x onerror=alert(1)>", "javascript:alert(1)": 1,
             "train_micro_batch_size_per_gpu": 1,
             "zero_optimization": {"stage": 2, "<img src=x onerror=alert(1)>": "javascript:alert(1)",
                                   "reduce_bucket_size": "<script>alert(1)</script>"}}
    for cfg, kw in ((nasty, {}), ("per_device_train_batch_size: 2\n'<script>alert(1)</script>': "
                                  "'[x](javascript:alert(1))'\nfp16: true\nbf16: true\n", {}),
                    (nasty, {"training_args": {"per_device_train_batch_size": 1, "<b>x</b>": "javascript:alert(1)"}}),
                    ("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n'<img src=x onerror=alert(1)>': "
                     "javascript:alert(1)\n", {})):
        r = check_config(cfg, model="<script>alert(1)</script>", gpu="javascript:alert(1)", **kw)
        for lang in ("en", "zh"):
            md = r.to_markdown(lang)
            assert "<" not in md and "javascript:" not in md.lower(), md
        assert r.errors or r.warnings
