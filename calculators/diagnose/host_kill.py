"""Processes killed by the host (exit code -9, ``Killed``, ``Signals.SIGKILL``): almost always CPU RAM exhaustion.

Texts read: DeepSpeed launcher ``[launch.py:…:sigkill_handler] … exits with return code = -9``; torchrun
``failed (exitcode: -9) local_rank: 0 (pid: …)`` / ``Signal 9 (SIGKILL) received by PID …``;
``died with <Signals.SIGKILL: 9>``; a bare ``Killed`` line from the shell.

With CPU offload the CPU RAM needed comes from DeepSpeed's own estimators (``calculators.deepspeed``, a port of
``estimate_zero2_model_states_mem_needs`` / ``estimate_zero3_model_states_mem_needs``) when the parameter
count is known.
"""

from __future__ import annotations

import re
from typing import Any

from ..deepspeed import estimate_zero2_model_states_mem_needs, estimate_zero3_model_states_mem_needs
from ..errors import CalculatorError
from ._text import fmt_gib, line_at
from .models import Artifact, Cause

PATTERNS = [
    (re.compile(r"exits? with return code\s*=\s*-9"), "deepspeed"),
    (re.compile(r"exitcode\s*:\s*-9"), "torchrun"),
    (re.compile(r"Signal 9 \(SIGKILL\) received by PID \d+", re.IGNORECASE), "torchrun"),
    (re.compile(r"died with <?Signals\.SIGKILL: 9>?"), "pytorch"),
    (re.compile(r"Signals\.SIGKILL"), "pytorch"),
    (re.compile(r"^\s*Killed\s*$", re.MULTILINE), "shell"),
    (re.compile(r"Out of memory: Kill(?:ed)? process \d+"), "kernel"),
    # the user's own words for it: "训练报错，返回值是-9", "用deepspeed方式返回错误码-9", "the exit code is -9"
    (
        re.compile(
            r"(?:返回值|返回码|错误码|退出码|exit\s*(?:code|status)|return\s*code|returncode|error\s*code)"
            r"\s*(?:是|为|了|is|was|of|:|：|=)?\s*-9(?![\d.])",
            re.IGNORECASE,
        ),
        "prose",
    ),
]
_OFFLOAD = re.compile(
    r"offload_(?:optimizer|param)[\"'\s:]*\{?[^{}]{0,80}?[\"']?device[\"']?\s*[:=]\s*[\"']?(cpu|nvme)"
    r"|offload_(?:optimizer|param)_device\s*:\s*(cpu|nvme)|DeepSpeedCPUAdam|cpu_adam|ds_z3_offload|z3_offload",
    re.IGNORECASE,
)
_STAGE = re.compile(
    r"(?:\"stage\"\s*:\s*|zero_stage[\"']?\s*[:=,]\s*[\"']?|Creating .{0,30}ZeRO stage |ds_z|zero)([0-3])\b",
    re.IGNORECASE,
)
_LOADING = re.compile(r"Loading checkpoint shards")
# DeepSpeed's launcher logs "[launch.py:…:sigkill_handler] Killing subprocess N" when it tears the job down after a
# process died (deepspeed/launcher/launch.py); its see_memory_usage logs "CPU Virtual Memory:  used = 26.4 GB,
# percent = 84.6%" (deepspeed/runtime/utils.py). Together — host RAM nearly full, then the job torn down — they read
# as the host killing a process even when the paste stops before the "-9" line.
_DS_TEARDOWN = re.compile(r"sigkill_handler\]?\s*Killing subprocess \d+")
_CPU_VM = re.compile(r"CPU Virtual Memory:\s*used\s*=\s*([\d.]+)\s*GB,\s*percent\s*=\s*([\d.]+)\s*%")
#: Host RAM use (percent) from which a torn-down job reads as killed for memory.
HOST_RAM_FULL_PERCENT = 80.0


def read(text: str) -> list[Artifact]:
    """One artifact for the first kill marker found (the later ones repeat it), with what the paste says about offload."""
    hits = []
    for pattern, fw in PATTERNS:
        m = pattern.search(text)
        if m:
            hits.append((m.start(), m.end(), fw))
    teardown = _DS_TEARDOWN.search(text)
    usage = [m for m in _CPU_VM.finditer(text) if teardown is None or m.start() < teardown.start()]
    ram = usage[-1] if usage else None
    if not hits and teardown is not None and ram is not None and float(ram.group(2)) >= HOST_RAM_FULL_PERCENT:
        hits.append((teardown.start(), teardown.end(), "deepspeed"))
    if not hits:
        return []
    start, end, fw = min(hits)
    f: dict[str, Any] = {"host_signal": "SIGKILL (-9)"}
    if ram is not None:
        f["host_ram_used_gb"] = float(ram.group(1))
        f["host_ram_percent"] = float(ram.group(2))
    off = _OFFLOAD.search(text)
    if off:
        f["offload_optimizer"] = True
        if re.search(r"offload_param|ds_z3_offload|z3_offload", text, re.IGNORECASE):
            f["offload_param"] = True
        f["host_offload_device"] = (off.group(1) or off.group(2) or "cpu").lower()
    st = _STAGE.search(text)
    if st:
        f["zero_stage"] = int(st.group(1))
    if _LOADING.search(text[:start]):
        f["host_while_loading"] = True
    return [
        Artifact(
            kind="host_oom_kill",
            start=text.rfind("\n", 0, start) + 1,
            end=end,
            key_line=line_at(text, start),
            fields=f,
            framework=fw,
        )
    ]


def _gpus(setup: dict[str, Any], others: list[Artifact]) -> tuple[int, int, bool]:
    nodes = setup.get("num_nodes") if isinstance(setup.get("num_nodes"), int) else None
    world = setup.get("world_size") if isinstance(setup.get("world_size"), int) else None
    for a in others:
        if a.kind == "launch_command":
            world = world or a.fields.get("world_size")
            nodes = nodes or a.fields.get("num_nodes")
    stated = world is not None
    nodes = nodes or 1
    world = world or nodes
    return max(world // nodes, 1), nodes, stated


def causes(a: Artifact, setup: dict[str, Any], others: list[Artifact]) -> list[Cause]:
    """Host-RAM exhaustion, with DeepSpeed's CPU estimate when the parameter count and stage are known."""
    f = {**a.fields}
    for key in ("zero_stage", "offload_optimizer", "offload_param"):
        if key in setup and key not in f:
            f[key] = setup[key]
    params = setup.get("num_params")
    per_node, nodes, gpus_stated = _gpus(setup, others)
    est_en = est_zh = ""
    if isinstance(params, (int, float)) and params > 0 and f.get("offload_optimizer"):
        stage_stated = "zero_stage" in f
        stage = f.get("zero_stage", 3 if f.get("offload_param") else 2)
        try:
            if stage == 3:
                cpu, _ = estimate_zero3_model_states_mem_needs(
                    params,
                    max(params * 0.02, 1),
                    per_node,
                    nodes,
                    cpu_offload=True,
                    cpu_offload_params=bool(f.get("offload_param")),
                )
            else:
                cpu, _ = estimate_zero2_model_states_mem_needs(params, per_node, nodes, cpu_offload=True)
            f["host_cpu_needed_gb"] = round(cpu / 2**30, 2)
            est_en = (
                f" DeepSpeed's own estimator (ZeRO-{stage}, offload, {per_node} GPU(s)/node, {nodes} node(s), "
                f"{params / 1e9:.3g}B params) gives {fmt_gib(cpu / 2**30)} of CPU RAM per node for model states alone."
            )
            est_zh = (
                f" DeepSpeed 自带估算器（ZeRO-{stage}，offload，每节点 {per_node} 卡，{nodes} 个节点，{params / 1e9:.3g}B 参数）"
                f"给出每节点仅模型状态就需要 {fmt_gib(cpu / 2**30)} 内存。"
            )
            if not gpus_stated or not stage_stated:
                est_en += (
                    " (Not stated, so assumed: "
                    + ", ".join(
                        ([] if gpus_stated else ["one GPU on one node"]) + ([] if stage_stated else [f"ZeRO-{stage}"])
                    )
                    + "; tell me the real values to recompute.)"
                )
                est_zh += (
                    "（未说明，因此假设："
                    + "，".join(([] if gpus_stated else ["单节点单卡"]) + ([] if stage_stated else [f"ZeRO-{stage}"]))
                    + "；告诉我实际值即可重新计算。）"
                )
        except CalculatorError:
            pass
    elif f.get("offload_optimizer"):
        est_en = (
            " With the optimizer offloaded, DeepSpeed's estimator puts CPU RAM per node at about 16–18 bytes × parameters "
            "× 1.5 (more with several GPUs per node without zero.Init); tell me the model size for the number."
        )
        est_zh = "优化器 offload 时，DeepSpeed 估算器给出每节点内存约为 16–18 字节 × 参数量 × 1.5（每节点多卡且未用 zero.Init 时更多）；告诉我模型大小即可算出具体数字。"
    a.fields.update({k: v for k, v in f.items() if k == "host_cpu_needed_gb"})
    out = [
        Cause(
            id="host.cpu_ram_exhausted",
            likelihood="likely",
            title_en="The operating system killed the process: CPU RAM ran out",
            title_zh="进程被操作系统杀掉：CPU 内存耗尽",
            because_en="Exit code -9 / SIGKILL is the Linux OOM killer (or a container memory limit), not a GPU error"
            + (
                " — and the run offloads to CPU, which moves optimizer states (and parameters) into host RAM."
                if f.get("offload_optimizer")
                else "."
            )
            + est_en
            + (
                f" DeepSpeed logged CPU RAM at {f['host_ram_percent']:g}% ({f['host_ram_used_gb']:g} GB used) before the kill."
                if "host_ram_percent" in f
                else ""
            ),
            because_zh="退出码 -9 / SIGKILL 是 Linux OOM killer（或容器内存上限）所为，不是显卡报错"
            + (
                "——而且这次训练开启了 CPU offload，优化器状态（和参数）都放在内存里。"
                if f.get("offload_optimizer")
                else "。"
            )
            + est_zh
            + (
                f" DeepSpeed 在被杀前记录的内存占用为 {f['host_ram_percent']:g}%（已用 {f['host_ram_used_gb']:g} GB）。"
                if "host_ram_percent" in f
                else ""
            ),
            fix_en="Confirm with `dmesg -T | grep -i kill` (or the container's memory limit). Then: add RAM / raise the container limit, "
            "offload only the optimizer (not the parameters), use `zero3_init_flag`/zero.Init so each rank does not load a full copy, "
            "offload to NVMe, or use more nodes so each holds a smaller shard.",
            fix_zh="用 `dmesg -T | grep -i kill`（或容器内存上限）确认。然后：加内存 / 提高容器上限；只 offload 优化器不 offload 参数；开启 "
            "`zero3_init_flag`/zero.Init 避免每个 rank 都加载一份完整模型；offload 到 NVMe；或用更多节点让每个节点分片更小。",
            card_ids=["mem-host-ram-killed-loading-offload", "zero-offload-cpu"],
        )
    ]
    if f.get("host_while_loading"):
        out.insert(
            0,
            Cause(
                id="host.loading_full_copies",
                likelihood="likely",
                title_en="Killed while loading the checkpoint: every rank loads a full copy into RAM",
                title_zh="加载权重时被杀：每个 rank 都在内存里加载一份完整模型",
                because_en=f'The kill follows "Loading checkpoint shards"; with {per_node} process(es) per node each reads the whole '
                "model into CPU RAM first (2 bytes/param in bf16, 4 in fp32, per process).",
                because_zh=f'被杀发生在 "Loading checkpoint shards" 之后；每节点 {per_node} 个进程时每个进程都会先把整个模型读进内存'
                "（bf16 每参数 2 字节，fp32 4 字节，按进程计）。",
                fix_en="Load in bf16 (`torch_dtype=torch.bfloat16`), use `low_cpu_mem_usage=True`, ZeRO-3 with zero.Init "
                "(`zero3_init_flag: true` / HF `deepspeed` set before `from_pretrained`), or add swap/RAM.",
                fix_zh="以 bf16 加载（`torch_dtype=torch.bfloat16`），使用 `low_cpu_mem_usage=True`，ZeRO-3 配合 zero.Init（`zero3_init_flag: true`，"
                "或在 `from_pretrained` 之前设置好 HF 的 deepspeed 配置），或增加 swap/内存。",
                card_ids=["zero-offload-cpu"],
            ),
        )
    return out
