"""Measure the host RAM a process holds after ``from_pretrained``: private (anonymous) and file-backed bytes per parameter.

Why: the host-RAM calculator (calculators/host_ram.py) and the card host-ram-load-scales-with-processes say which
loads make every data-parallel process hold its own copy of the weights. That depends on the transformers version and
on whether the load converts the checkpoint's dtype, so it is measured, not assumed: a random LLaMA (58M parameters,
config only, no download) is saved in bf16 as safetensors (and as a .bin), then loaded in a fresh process in bf16 and in
fp32, every weight read once, and /proc/self/status read before and after (RssAnon: private to the process; RssFile:
pages of the mapped checkpoint, shared by the processes of a node; VmHWM: the peak).

    PYTHONPATH=. .venv/bin/python -m bench.host_ram_load                          # the installed transformers
    PYTHONPATH=. .venv/bin/python -m bench.host_ram_load --transformers /tmp/tf   # another one, pip install --target

Measured 2026-12-05 (torch 2.13 CPU; bytes per parameter after the load of a bf16 safetensors checkpoint; a .bin checkpoint
measured the same in 4.36.2, 4.46.3 and 5.23.0; 4.41.2 and 4.44.2 matched their neighbours in bf16):

    transformers   in bf16: private / file / peak   in fp32: private / file / peak   no dtype given
    4.36.2         2.19 / 0.18 / 4.36               4.23 / 0.18 / 6.40               = fp32
    4.42.4         2.07 / 0.16 / 4.21               4.07 / 0.15 / 6.21               = fp32
    4.43.4         0.07 / 2.15 / 2.22               4.07 / 0.16 / 6.21               = fp32
    4.46.3         0.05 / 2.13 / 2.18               4.05 / 0.13 / 6.17               = fp32
    5.23.0         0.03 / 2.15 / 2.19               4.03 / 0.15 / 6.14               = bf16 (the checkpoint's dtype)

From 4.43 a load in the checkpoint's own dtype assigns the mapped tensors to the model (modeling_utils.py
``check_support_param_buffer_assignment``, new in v4.43.0: same dtype, not under DeepSpeed ZeRO-3), so a node's
processes share one copy in the page cache; before 4.43, and whenever the dtype is converted, each process holds its own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

PROBE = textwrap.dedent(
    """
    import gc, json, sys, torch
    from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

    def status():
        out = {}
        for line in open("/proc/self/status"):
            key = line.split(":")[0]
            if key in ("RssAnon", "RssFile", "VmHWM"):
                out[key] = int(line.split()[1]) * 1024
        return out

    path, mode = sys.argv[1], sys.argv[2]
    if mode == "save":
        cfg = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=8, num_attention_heads=8,
                          num_key_value_heads=8, vocab_size=32000)
        torch.manual_seed(0)
        LlamaForCausalLM(cfg).to(torch.bfloat16).save_pretrained(path)
        sys.exit()
    gc.collect()
    before = status()
    kwargs = {"bf16": {"torch_dtype": torch.bfloat16}, "fp32": {"torch_dtype": torch.float32}, "none": {}}[mode]
    model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    touched = [p.detach().sum() for p in model.parameters()]
    gc.collect()
    after = status()
    n = sum(p.numel() for p in model.parameters())
    print(json.dumps({
        "params": n,
        "private": (after["RssAnon"] - before["RssAnon"]) / n,
        "file": (after["RssFile"] - before["RssFile"]) / n,
        "peak": (after["VmHWM"] - before["RssAnon"] - before["RssFile"]) / n,
        "dtype": str(next(model.parameters()).dtype),
    }))
    """
)


def run_probe(path: str, mode: str, transformers_path: str | None = None, timeout: int = 300) -> dict:
    """One probe in a fresh process (``mode``: save, bf16, fp32 or none); the measured bytes per parameter."""
    env = {"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if transformers_path:
        env["PYTHONPATH"] = transformers_path
    out = subprocess.run(
        [sys.executable, "-c", PROBE, path, mode], check=True, capture_output=True, text=True, timeout=timeout, env=env
    )
    return {} if mode == "save" else json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--transformers", help="a folder with another transformers (pip install --target)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tiny")
        run_probe(path, "save")
        print("load   private  file   peak   (bytes per parameter)  dtype")
        for mode in ("bf16", "fp32", "none"):
            r = run_probe(path, mode, args.transformers)
            print(f"{mode:<6} {r['private']:7.2f} {r['file']:6.2f} {r['peak']:6.2f}  {r['dtype']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
