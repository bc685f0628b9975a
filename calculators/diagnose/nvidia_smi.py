"""``nvidia-smi`` tables → per-GPU memory used / total and the processes on each GPU.

Both table layouts are read: the driver <= 470 one (``| 0  Tesla K80  On | 00000000:04:00.0 Off |`` then
``| N/A 28C P8 26W / 149W | 1MiB / 11439MiB | 0% Default |``) and the driver >= 510 one (an extra ``MIG M.``
line per GPU). Process rows: ``|  0  N/A  N/A  23333  G  /usr/lib/xorg/Xorg  46MiB |`` (newer) or
``|  0  23333  G  /usr/lib/xorg/Xorg  46MiB |`` (older).

gpustat's one line per GPU (https://github.com/wookayin/gpustat: index, name, temperature, utilisation, memory
used / total in MB, then ``user(memM)`` or, with ``-p``, ``user/pid(memM)`` per process), e.g.
``[0] Tesla V100-SXM2-32GB | 45°C, 100 % | 32507 / 32510 MB | alice(32497M)``, is read into the same fields.
"""

from __future__ import annotations

import re
from typing import Any

from ._text import fmt_gib, safe
from .models import Artifact, Cause

HEADER = re.compile(r"NVIDIA-SMI\s+[\d.]+")
_GPU = re.compile(r"^\|\s+(\d{1,4})\s+(.+?)\s+(?:On|Off)\s*\|", re.MULTILINE)
_MEM = re.compile(r"(\d{1,9})MiB\s*/\s*(\d{1,9})MiB\s*\|\s*(\d{1,3})%")
_PROC = re.compile(
    r"^\|\s+(\d{1,4})\s+(?:N/A\s+N/A\s+|\d+\s+\d+\s+)?(\d{1,10})\s+(C\+G|C|G)\s+(\S.*?)\s+(\d{1,9})MiB\s*\|",
    re.MULTILINE,
)


#: gpustat's GPU line: ``[0] NAME | 45°C, 100 % | 32507 / 32510 MB | user(32497M) …`` (the temperature and the
#: utilisation may print as ``??`` on GPUs that do not report them; older releases print ``45'C``).
GPUSTAT_LINE = re.compile(
    r"^[ \t]*\[(\d{1,3})\][ \t]+(\S[^|\n]*?)[ \t]*\|[ \t]*(?:-?\d{1,3}|\?\?)[ \t]*'?°?[ \t]*C?[ \t]*,[ \t]*"
    r"(\d{1,3}|\?\?)[ \t]*%[ \t]*\|[ \t]*(\d{1,9})[ \t]*/[ \t]*(\d{1,9})[ \t]*MB\b([^\n]*)$",
    re.MULTILINE,
)
_GPUSTAT_PROC = re.compile(r"([A-Za-z_][\w.-]*)(?:/(\d{1,10}))?\((\d{1,9})M\)")


def _table_fields(gpus: list[dict[str, Any]], procs: list[dict[str, Any]]) -> dict[str, Any]:
    """What a GPU table states, whichever tool printed it (nvidia-smi, gpustat): every GPU and process, the first
    GPU's name and capacity, and the highest use as what was observed (never the capacity)."""
    return {
        "smi_gpus": gpus,
        "smi_processes": procs,
        "gpu": gpus[0]["name"],
        "gpu_memory_gb": gpus[0]["total_gb"],
        "observed_memory_gb": max(g["used_gb"] for g in gpus),
    }


def read_gpustat(text: str) -> list[Artifact]:
    """One artifact per run of consecutive gpustat GPU lines.

    The fields are nvidia-smi's (per-GPU used / total, the first GPU's name and capacity, the most used GPU's use
    as the observed memory) plus ``world_size``: the GPUs that run a process or hold more than a tenth of their memory
    (a listing of a whole machine also shows the idle cards, which are not in the job)."""
    out: list[Artifact] = []
    lines = list(GPUSTAT_LINE.finditer(text))
    runs: list[list[re.Match[str]]] = []
    for m in lines:
        if runs and text.count("\n", runs[-1][-1].end(), m.start()) <= 1:
            runs[-1].append(m)
        else:
            runs.append([m])
    for run in runs:
        gpus: list[dict[str, Any]] = []
        procs: list[dict[str, Any]] = []
        busy = 0
        for m in run:
            index = int(m.group(1))
            gpus.append(
                {
                    "index": index,
                    "name": " ".join(m.group(2).split())[:40],
                    "used_gb": round(int(m.group(4)) / 1024, 2),
                    "total_gb": round(int(m.group(5)) / 1024, 2),
                    "util_pct": int(m.group(3)) if m.group(3).isdigit() else 0,
                }
            )
            found = list(_GPUSTAT_PROC.finditer(m.group(6)))
            # in the job: a process runs on it, or (gpustat without its process column) its memory is in use
            busy += bool(found) or int(m.group(4)) > 0.1 * int(m.group(5))
            procs += [
                {
                    "gpu": index,
                    "pid": int(p.group(2)),
                    "type": "C",
                    "name": p.group(1),
                    "used_gb": round(int(p.group(3)) / 1024, 2),
                }
                for p in found
                if p.group(2)  # only `user/pid(memM)` names a process; `user(memM)` names its owner
            ]
        f = _table_fields(gpus, procs)
        if busy:
            f["world_size"] = busy
        out.append(
            Artifact(
                kind="nvidia_smi",
                start=run[0].start(),
                end=run[-1].end(),
                key_line=run[0].group(0).strip()[:200],
                fields=f,
                framework="gpustat",
            )
        )
    return out


def read(text: str) -> list[Artifact]:
    """One artifact per table (a paste may hold several snapshots), then gpustat's lines."""
    out: list[Artifact] = read_gpustat(text)
    heads = list(HEADER.finditer(text))
    for i, h in enumerate(heads):
        start = text.rfind("\n", 0, h.start()) + 1
        stop = heads[i + 1].start() if i + 1 < len(heads) else min(len(text), h.start() + 20_000)
        block = text[start:stop]
        gpus: list[dict[str, Any]] = []
        for g in _GPU.finditer(block):
            mem = _MEM.search(block, g.end(), g.end() + 400)
            if not mem:
                continue
            gpus.append(
                {
                    "index": int(g.group(1)),
                    "name": " ".join(g.group(2).split())[:40],
                    "used_gb": round(int(mem.group(1)) / 1024, 2),
                    "total_gb": round(int(mem.group(2)) / 1024, 2),
                    "util_pct": int(mem.group(3)),
                }
            )
        procs = [
            {
                "gpu": int(p.group(1)),
                "pid": int(p.group(2)),
                "type": p.group(3),
                "name": p.group(4).strip()[:60],
                "used_gb": round(int(p.group(5)) / 1024, 2),
            }
            for p in _PROC.finditer(block)
        ]
        if not gpus:
            continue
        last = max((m.end() for m in _PROC.finditer(block)), default=0)
        end = start + max(last, max(m.end() for m in _MEM.finditer(block)))
        f = _table_fields(gpus, procs)
        out.append(
            Artifact(
                kind="nvidia_smi",
                start=start,
                end=end,
                key_line=text[h.start() : h.end() + 60].splitlines()[0].strip(),
                fields=f,
                framework="nvidia-smi",
            )
        )
    return out


def causes(a: Artifact) -> list[Cause]:
    """Other processes sharing a GPU, leftovers holding memory while idle, and a GPU 0 heavier than the rest."""
    gpus, procs = a.fields["smi_gpus"], a.fields["smi_processes"]
    out: list[Cause] = []
    by_gpu: dict[int, list[dict[str, Any]]] = {}
    for p in procs:
        by_gpu.setdefault(p["gpu"], []).append(p)
    shared = {g: ps for g, ps in by_gpu.items() if len([p for p in ps if p["type"] != "G"]) > 1}
    if shared:
        g, ps = next(iter(shared.items()))
        names = ", ".join(f"{p['pid']} ({safe(p['name'], 30)}, {fmt_gib(p['used_gb'])})" for p in ps[:4])
        out.append(
            Cause(
                id="smi.shared_gpu",
                likelihood="likely",
                title_en=f"Several compute processes share GPU {g}",
                title_zh=f"多个计算进程共用 GPU {g}",
                because_en=f"GPU {g} runs {len(ps)} processes: {names}. Each one's memory is unavailable to the others; in a multi-GPU job "
                "extra PIDs on GPU 0 mean other ranks opened a CUDA context there.",
                because_zh=f"GPU {g} 上有 {len(ps)} 个进程：{names}。彼此占用的显存互不可用；多卡任务中 GPU 0 上多出的 PID 说明其他 rank 在 0 号卡上"
                "建了 CUDA 上下文。",
                fix_en="Stop the stray processes, or call `torch.cuda.set_device(local_rank)` before any CUDA work in each rank.",
                fix_zh="结束多余进程，或在每个 rank 的任何 CUDA 操作前调用 `torch.cuda.set_device(local_rank)`。",
                card_ids=["oom-cuda-context-fragmentation"],
            )
        )
    idle = [g for g in gpus if g["util_pct"] == 0 and g["used_gb"] >= 0.5 * g["total_gb"]]
    if idle and not shared:
        g = idle[0]
        out.append(
            Cause(
                id="smi.idle_memory_held",
                likelihood="possible",
                title_en=f"GPU {g['index']} holds memory while idle",
                title_zh=f"GPU {g['index']} 空闲却占着显存",
                because_en=f"{fmt_gib(g['used_gb'])} of {fmt_gib(g['total_gb'])} used at 0% utilisation: a finished, hung or zombie "
                "process (or another user's job) still holds it.",
                because_zh=f"利用率 0% 却占用 {fmt_gib(g['used_gb'])}/{fmt_gib(g['total_gb'])}：已结束、卡住或僵尸进程（或他人的任务）还占着显存。",
                fix_en="Find it with `nvidia-smi` / `fuser -v /dev/nvidia*` and stop it before starting training.",
                fix_zh="用 `nvidia-smi` / `fuser -v /dev/nvidia*` 找到该进程，训练前结束它。",
                card_ids=[],
            )
        )
    if len(gpus) >= 2:
        rest = [g["used_gb"] for g in gpus[1:]]
        avg = sum(rest) / len(rest)
        if gpus[0]["used_gb"] - avg >= max(2.0, 0.15 * gpus[0]["total_gb"]) and avg > 0.5:
            out.append(
                Cause(
                    id="smi.gpu0_heavier",
                    likelihood="possible",
                    title_en="GPU 0 uses much more memory than the others",
                    title_zh="GPU 0 显存占用明显高于其他卡",
                    because_en=f"GPU 0 {fmt_gib(gpus[0]['used_gb'])} vs about {fmt_gib(avg)} on the others: rank 0 does extra work "
                    "(evaluation, gathering logits, saving), or other ranks put CUDA contexts on GPU 0 (DataParallel also gathers there).",
                    because_zh=f"GPU 0 占用 {fmt_gib(gpus[0]['used_gb'])}，其他卡约 {fmt_gib(avg)}：rank 0 做了额外工作（评估、汇总 logits、保存），"
                    "或其他 rank 在 GPU 0 上建了 CUDA 上下文（DataParallel 也会在 0 号卡上汇总）。",
                    fix_en="Use DDP/DeepSpeed instead of DataParallel, set `torch.cuda.set_device(local_rank)` early, and reduce "
                    "`per_device_eval_batch_size` / use `eval_accumulation_steps`.",
                    fix_zh="用 DDP/DeepSpeed 代替 DataParallel，尽早调用 `torch.cuda.set_device(local_rank)`，减小 `per_device_eval_batch_size` "
                    "或使用 `eval_accumulation_steps`。",
                    card_ids=[],
                )
            )
    return out
