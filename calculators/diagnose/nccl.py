"""NCCL watchdog timeouts: which collective timed out, and what that says about the cause.

Text read (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp, torch 1.13 – 2.x): ``[Rank 1] Watchdog caught collective
operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for
1800013 milliseconds before timing out.`` ``SeqNum`` counts the collectives this process group has issued, starting
at 1, so a timeout at SeqNum 1 is the group's very first collective (DDP's initial parameter broadcast, the first
barrier): the ranks never exchanged anything. A later one means they did talk, and one rank then fell behind.

A data-preprocessing progress bar in the same paste ("Grouping texts in chunks of 2049: 8% … 726000/9672101",
``Running tokenizer on dataset``, ``Map:``) is the usual rank that fell behind (nanotron #204): rank 0 tokenises
while the others wait at the first all-reduce.
"""

from __future__ import annotations

import re
from typing import Any

from ._text import line_at
from .models import Artifact, Cause

_WATCHDOG = re.compile(
    r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+), OpType=([A-Z_]+)"
    r"(?:[^)]*?Timeout\(ms\)=(\d+))?"
)
# The progress bars of dataset preprocessing (HF datasets' map, LLaMA-Factory, nanotron/Megatron grouping).
_PREPROCESS = re.compile(
    r"(Grouping texts in chunks of \d+|Running tokenizer on dataset|Tokenizing[^\n:]{0,40}|Map(?: \(num_proc=\d+\))?|"
    r"Converting format of dataset[^\n:]{0,40}|Packing[^\n:]{0,40})\s*:\s*\d{1,3}%",
    re.I,
)
#: SeqNum values that are the group's first collectives: nothing was ever exchanged before them.
FIRST_COLLECTIVES = 2


def read(text: str) -> list[Artifact]:
    """The first watchdog timeout in ``text`` (the other ranks repeat it), with the preprocessing it shows."""
    m = _WATCHDOG.search(text)
    if m is None:
        return []
    f: dict[str, Any] = {"nccl_seq": int(m.group(1)), "nccl_op": m.group(2)}
    if m.group(3):
        f["nccl_timeout_min"] = round(int(m.group(3)) / 60000, 1)
    if pre := _PREPROCESS.search(text):
        f["nccl_preprocessing"] = pre.group(1).strip()[:60]
    return [
        Artifact(
            kind="nccl_timeout",
            start=text.rfind("\n", 0, m.start()) + 1,
            end=m.end(),
            key_line=line_at(text, m.start()),
            fields=f,
            framework="pytorch",
        )
    ]


def causes(a: Artifact) -> list[Cause]:
    """The cause the timed-out collective points at."""
    f = a.fields
    seq, op = f["nccl_seq"], f["nccl_op"]
    wait_en = f" after {f['nccl_timeout_min']:g} minutes" if "nccl_timeout_min" in f else ""
    wait_zh = f"（等了 {f['nccl_timeout_min']:g} 分钟）" if "nccl_timeout_min" in f else ""
    inner_zh = f"，等了 {f['nccl_timeout_min']:g} 分钟" if "nccl_timeout_min" in f else ""
    if f.get("nccl_preprocessing"):
        step = f["nccl_preprocessing"]
        return [
            Cause(
                id="nccl.rank_preprocessing",
                likelihood="likely",
                title_en="One rank is still preprocessing the data while the others wait",
                title_zh="有一个 rank 还在预处理数据，其他 rank 在等它",
                because_en=f"The paste shows a preprocessing progress bar ({step}) and the others' {op} (SeqNum={seq}) "
                f"timed out{wait_en}: that rank never reached the collective in time.",
                because_zh=f"粘贴内容里有数据预处理的进度条（{step}），其他 rank 的 {op}（SeqNum={seq}）超时{wait_zh}："
                "这个 rank 没能按时到达这次集合通信。",
                fix_en="Preprocess (tokenise, group, pack) once before launching and load the cached result, or run it on "
                "the main process first (`main_process_first`) with a longer timeout (`ddp_timeout` / "
                "`init_process_group(timeout=...)`).",
                fix_zh="在启动训练前先做好分词、分组、打包并缓存，训练时直接加载；或者让主进程先处理（`main_process_first`），并调大超时"
                "（`ddp_timeout` / `init_process_group(timeout=...)`）。",
                card_ids=["hw-nccl-timeout-watchdog"],
            )
        ]
    if seq <= FIRST_COLLECTIVES:
        return [
            Cause(
                id="nccl.first_collective",
                likelihood="likely",
                title_en="The very first collective never completed: the ranks cannot reach each other",
                title_zh="第一个集合通信就没完成：各 rank 之间根本连不通",
                because_en=f"The timed-out collective is the group's first ({op}, SeqNum={seq}){wait_en}: nothing was ever "
                "exchanged, so this is not a slow step but a transport that does not work (P2P between these GPUs, "
                "shared memory in a container, or the network between nodes).",
                because_zh=f"超时的是这个进程组的第一个集合通信（{op}，SeqNum={seq}{inner_zh}）：各 rank 之间从没交换成功过，"
                "所以不是某一步太慢，而是通信通道不通（这些卡之间的 P2P、容器里的共享内存，或节点间网络）。",
                fix_en="Run with `NCCL_DEBUG=INFO` to see the transport; try `NCCL_P2P_DISABLE=1` (GPUs without working "
                "P2P), a larger `/dev/shm` (`--shm-size` / `--ipc=host` in Docker), and across nodes the right "
                "`NCCL_SOCKET_IFNAME` / InfiniBand settings.",
                fix_zh="加 `NCCL_DEBUG=INFO` 看用的是哪种通道；试 `NCCL_P2P_DISABLE=1`（P2P 不可用的卡），给容器更大的 `/dev/shm`"
                "（Docker 的 `--shm-size` / `--ipc=host`），多机时设置正确的 `NCCL_SOCKET_IFNAME` / InfiniBand 参数。",
                card_ids=["hw-nccl-timeout-watchdog", "hw-rtx40-p2p-nccl"],
            )
        ]
    return []
