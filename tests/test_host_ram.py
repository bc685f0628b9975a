"""Host RAM at model load (calculators/host_ram.py): the arithmetic, bad input, and a real load that checks it.

The calculator's three cases come from bench/host_ram_load.py (its docstring has the table for transformers 4.36–5.23):
a load that converts a bf16 checkpoint to fp32 holds ~4 private bytes per parameter in every process; a load in the
checkpoint's own dtype holds ~2 per process before transformers 4.43 and ~0 from 4.43 (the file stays mapped, one copy
per node in the page cache). The last test re-measures the installed transformers against the case it belongs to.
"""

from __future__ import annotations

import sys

import pytest

from bench.host_ram_load import run_probe
from calculators import CalculatorError, host_ram_at_load, run_tool


def test_processes_times_one_copy_per_case():
    r = host_ram_at_load(70e9, 16, host_ram_gb=1024)
    assert r.copy_16bit_bytes == 140_000_000_000 and r.copy_fp32_bytes == 280_000_000_000
    assert r.node_fp32_bytes == 16 * 280_000_000_000 and r.node_16bit_private_bytes == 16 * 140_000_000_000
    assert r.node_16bit_shared_bytes == 140_000_000_000
    assert (r.fits_fp32, r.fits_16bit_private, r.fits_16bit_shared) == (False, False, True)
    small = host_ram_at_load(7e9, 2, host_ram_gb=48)  # 52.2 GiB in fp32, 26.1 GiB in 16-bit, against 48
    assert (small.fits_fp32, small.fits_16bit_private) == (False, True)
    assert host_ram_at_load(7e9, 2).fits_fp32 is None


def test_markdown_shows_the_multiplication_on_the_users_numbers():
    md = run_tool("host_ram_load", {"num_params": 70e9, "processes_per_node": 16, "host_ram_gb": 1024}).to_markdown(
        "en"
    )
    assert "4,172.3 GiB per node in fp32 (each process its own 260.8 GiB copy" in md and "(over your 1,024 GB)" in md
    assert "2,086.2 GiB in 16-bit before transformers 4.43 (over your 1,024 GB)" in md
    assert "once per node (130.4 GiB, shared)" in md
    zh = host_ram_at_load(70e9, 16).to_markdown("zh")
    assert "每进程一份 260.8 GiB，每节点 4,172.3 GiB" in zh and "超过" not in zh


@pytest.mark.parametrize(
    "args,field",
    [
        ({"num_params": -1, "processes_per_node": 2}, "num_params"),
        ({"num_params": 7e9, "processes_per_node": 0}, "processes_per_node"),
        ({"num_params": 7e9, "processes_per_node": 2.5}, "processes_per_node"),
        ({"num_params": 7e9, "processes_per_node": 2, "host_ram_gb": "lots"}, "host_ram_gb"),
    ],
)
def test_bad_input_is_a_clear_error_in_both_languages(args, field):
    with pytest.raises(CalculatorError) as err:
        run_tool("host_ram_load", args)
    assert field in err.value.message("en") and field in err.value.message("zh")


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("host_ram") / "tiny")
    run_probe(path, "save")
    return path


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_real_load_holds_the_copy_the_calculator_counts(saved_model):
    import transformers
    from packaging.version import Version

    per_param = host_ram_at_load(1, 1)
    fp32 = run_probe(saved_model, "fp32")
    assert fp32["private"] >= 0.9 * per_param.copy_fp32_bytes  # every process's own fp32 copy
    bf16 = run_probe(saved_model, "bf16")
    if Version(transformers.__version__) >= Version("4.43"):
        assert bf16["private"] < 0.25 and bf16["file"] >= 0.8 * per_param.copy_16bit_bytes  # mapped, shared
    else:
        assert 0.8 * per_param.copy_16bit_bytes <= bf16["private"] <= 1.3 * per_param.copy_16bit_bytes
