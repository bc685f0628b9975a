"""Launch commands → world size, nodes, visible GPUs and config files.

Launchers read: ``torchrun`` / ``python -m torch.distributed.run|launch`` (``--nproc_per_node``, ``--nnodes``),
``deepspeed`` (``--num_gpus``, ``--num_nodes``, ``--include host:0,1``, ``--hostfile``), ``accelerate launch``
(``--num_processes``, ``--num_machines``, ``--config_file``, ``--gpu_ids``), ``llamafactory-cli train x.yaml``
(torchrun under the hood when more than one GPU is visible or ``FORCE_TORCHRUN=1``; ``NNODES``/``NPROC_PER_NODE``),
and plain ``python script.py`` (one process). ``CUDA_VISIBLE_DEVICES=…`` before any of them.

The deepspeed launcher honours ``CUDA_VISIBLE_DEVICES`` only when none of ``--include/--exclude/--num_gpus/
--num_nodes`` is given (DeepSpeed PR #868, fixing issue #662, 2021); otherwise it logs "Detected CUDA_VISIBLE_DEVICES=…
but ignoring it because one or several of --include/--exclude/--num_gpus/--num_nodes cl args were used". Its own
log line ``nnodes=1, num_local_procs=4, node_rank=0`` says how many processes it started. torchrun starts exactly
``--nproc_per_node`` processes whatever is visible. LLaMA-Factory's ``cli.py`` re-launches itself with torchrun when
``FORCE_TORCHRUN`` is set or more than one device is visible.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from ..shell import LIGHTNING_RANK, assignment, continued
from ._text import line_at, safe
from .models import Artifact, Cause

_LAUNCHER = re.compile(
    r"(?P<env>(?:\b[A-Z_][A-Z0-9_]*=\S*\s+)*)(?P<cmd>(?:torchrun|python3?\s+-m\s+torch\.distributed\.(?:run|launch)|deepspeed"
    r"|accelerate\s+launch|llamafactory-cli\s+train|swift\s+(?:sft|pt|rlhf))(?=\s+(?:--?\w|[\w./~$-]+\.(?:py|ya?ml|json)\b))"
    r"|python3?(?:\s+-u)?\s+\S+\.py(?=\s|$|`))"
)
#: What may precede a command on its line: nothing, a shell prompt, a quote/backtick, a list marker, `&&` or `;`.
_COMMAND_START = re.compile(r"(?:^|[$#>`'\"(]|&&|;|^\s*[-*]|\|)\s*(?:call\s+)?$")  # (Windows cmd: `call python …`)
_ARGS = {
    "per_device_train_batch_size": "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps": "gradient_accumulation_steps",
    "zero_stage": "zero_stage",
    "cutoff_len": "seq_len",
    "max_seq_length": "seq_len",
    "max_seq_len": "seq_len",
    "model_max_length": "seq_len",
    "model_name_or_path": "model",
    "finetuning_type": "finetune",
    "lora_rank": "lora_rank",
}


def _logical_lines(text: str) -> list[tuple[int, int, str]]:
    """Lines with backslash continuations joined: (start, end, joined text). A line that starts with an option
    ("--nproc_per_node=8" on its own line, a command pasted without its backslashes) continues the one before."""
    out: list[tuple[int, int, str]] = []
    start = 0
    buf: list[str] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        if not buf:
            start = pos
        pos += len(line)
        stripped = line.rstrip("\r\n")
        if continued(stripped):
            buf.append(stripped.rstrip()[:-1])
            continue
        buf.append(stripped)
        if out and buf[0].strip().startswith("--"):
            first, _, joined = out[-1]
            out[-1] = (first, pos, joined + " " + " ".join(s.strip() for s in buf))
        else:
            out.append((start, pos, " ".join(s.strip() for s in buf)))
        buf = []
    if buf:
        out.append((start, pos, " ".join(s.strip() for s in buf)))
    return out


def _opts(tokens: list[str]) -> dict[str, str]:
    """``--key value`` and ``--key=value`` pairs (flags without a value map to "true"); ``-g 2`` as ``"-g"``."""
    out: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.startswith("--"):
            key, eq, val = t[2:].partition("=")
            key = key.replace("-", "_")
            if eq:
                out.setdefault(key, val)
            elif i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
                out.setdefault(key, tokens[i + 1])
                i += 1
            else:
                out.setdefault(key, "true")
        elif re.fullmatch(r"-[A-Za-z]{1,3}", t) and i + 1 < len(tokens) and re.fullmatch(r"\d{1,6}", tokens[i + 1]):
            out.setdefault(t, tokens[i + 1])  # a short option with a number ("-g 2"), kept under its dash
            i += 1
        i += 1
    return out


_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _expand(args: str, shell_vars: dict[str, str]) -> str:
    """``$NAME`` and ``${NAME}`` replaced by what the message set them to; unknown ones stay as written."""
    return _VARIABLE.sub(lambda v: shell_vars.get(v.group(1) or v.group(2), v.group(0)), args)


def _int(v: str | None) -> int | None:
    return int(v) if v is not None and re.fullmatch(r"\d{1,6}", v) else None


def _devices(value: str) -> list[str]:
    return [d for d in value.split(",") if d.strip() != ""]


#: Options by which a training script is given its devices (it may start one process per device, or drive them all
#: from one with DataParallel: MatchSum's ``--gpus=0,1,3``): Lightning's
#: ``--gpus 0,1,2,3`` / ``--devices 2`` (Trainer(devices=...)), Caffe's ``--gpu=0,1,2,3``, detectron2's
#: ``--num-gpus 8``. A list names the devices; a single number is a count only under a counting name (``--gpu 1``
#: is Caffe's device id, one GPU).
_DEVICE_LIST_OPTS = ("gpus", "gpu", "gpu_ids", "devices", "device_ids")
_DEVICE_COUNT_OPTS = ("gpus", "devices", "num_gpus", "ngpus", "n_gpus")


def _script_devices(opts: dict[str, str]) -> int | None:
    """How many devices a plain ``python script.py`` command gives the script by its own options, or None."""
    for key in _DEVICE_LIST_OPTS:
        ids = [d.strip() for d in opts.get(key, "").strip("[]").split(",")]
        if len(ids) >= 2 and all(re.fullmatch(r"\d{1,3}", d) for d in ids):
            return len(ids)
    for key in _DEVICE_COUNT_OPTS:
        if (n := _int(opts.get(key))) and n <= 1024:
            return n
    if "-nr" in opts and (g := _int(opts.get("-g"))) and g <= 64:
        # the mp.spawn tutorial's flags that many repos kept (YANMTT #7: `-n 1 -nr 0 -g 2`): nodes, this node's rank
        # and GPUs per node; a lone `-g` is no count
        return g * (_int(opts.get("-n")) or 1)
    return None


_DS_PROCS = re.compile(r"nnodes=(\d{1,5}), num_local_procs=(\d{1,5}), node_rank=\d{1,5}")
_DS_IGNORED = re.compile(r"Detected (?:CUDA_|NPU_|ASCEND_RT_)?VISIBLE_DEVICES=(\S{1,200}) but ignoring it because")


def _lightning_ranks(text: str) -> list[Artifact]:
    """Lightning's rank lines when one global rank is printed by more than one process: each node believes it is
    node 0 (SLURM started fewer tasks than devices × num_nodes, or NODE_RANK never reached the other nodes), so the
    group can never form and the run hangs at start."""
    seen: dict[int, int] = {}
    first = None
    world = 0
    for m in LIGHTNING_RANK.finditer(text):
        first = first or m
        rank = int(m.group(1))
        seen[rank] = seen.get(rank, 0) + 1
        world = max(world, int(m.group(2)))
    repeated = sorted(r for r, n in seen.items() if n > 1)
    if first is None or not repeated:
        return []
    return [
        Artifact(
            kind="launch_command",
            start=text.rfind("\n", 0, first.start()) + 1,
            end=first.end(),
            key_line=line_at(text, first.start()),
            fields={"launcher": "lightning", "lightning_repeated_ranks": repeated, "lightning_world": world},
            framework="pytorch-lightning",
            version_hint="Lightning process-group log (_init_dist_connection)",
        )
    ]


def _launcher_logs(text: str) -> list[Artifact]:
    """What the deepspeed launcher itself printed: the processes it started, and an ignored CUDA_VISIBLE_DEVICES;
    Lightning's rank lines when a rank repeats."""
    out: list[Artifact] = _lightning_ranks(text)
    m = _DS_PROCS.search(text)
    if m:
        nodes, procs = int(m.group(1)), int(m.group(2))
        out.append(
            Artifact(
                kind="launch_command",
                start=text.rfind("\n", 0, m.start()) + 1,
                end=m.end(),
                key_line=line_at(text, m.start()),
                fields={"launcher": "deepspeed", "world_size": nodes * procs, "num_nodes": nodes},
                framework="deepspeed",
                version_hint="deepspeed launcher log (launch.py)",
            )
        )
    m = _DS_IGNORED.search(text)
    if m:
        out.append(
            Artifact(
                kind="launch_command",
                start=text.rfind("\n", 0, m.start()) + 1,
                end=m.end(),
                key_line=line_at(text, m.start()),
                fields={
                    "launcher": "deepspeed",
                    "visible_devices": _devices(m.group(1)),
                    "ds_ignores_visible_devices": True,
                },
                framework="deepspeed",
                version_hint="deepspeed runner log (runner.py)",
            )
        )
    return out


def read(text: str, shell_vars: dict[str, str] | None = None) -> list[Artifact]:
    """Every launch command line in ``text``, and the deepspeed launcher's own log lines. ``shell_vars``: variables
    the message set before ``text`` (in its prose, say), for ``$NAME`` in the commands."""
    out: list[Artifact] = _launcher_logs(text)
    exported: dict[str, str] = {}  # `export CUDA_VISIBLE_DEVICES=0,1` on a line of its own applies to later commands
    # every variable a line of its own sets, exported or not: what `$NAME` expands to
    shell_vars = dict(shell_vars or {})
    for start, end, line in _logical_lines(text):
        if len(line) > 20_000:
            continue
        if (set_here := assignment(line)) is not None:
            name, value, is_exported = set_here
            if value is not None:
                shell_vars[name] = value
                if is_exported:
                    exported[name] = value
            continue
        m = _LAUNCHER.search(line)
        if not m or not _COMMAND_START.search(line[: m.start()]) or line.lstrip().startswith("#"):
            continue
        cmd = " ".join(m.group("cmd").split())
        args = _expand(line[m.end() :], shell_vars)
        try:
            tokens = shlex.split(args, posix=True)
        except ValueError:
            tokens = args.split()
        env = {**exported, **dict(kv.split("=", 1) for kv in m.group("env").split())}
        opts = _opts(tokens)
        f: dict[str, Any] = {}
        if "CUDA_VISIBLE_DEVICES" in env:
            f["visible_devices"] = _devices(env["CUDA_VISIBLE_DEVICES"])
        if "ASCEND_RT_VISIBLE_DEVICES" in env:
            f["visible_devices"] = _devices(env["ASCEND_RT_VISIBLE_DEVICES"])
        visible = len(f["visible_devices"]) if "visible_devices" in f else None
        world = nodes = None
        nodes_written = False  # a node count the command writes (a default of 1 is not the user's setup)
        if cmd.startswith(("torchrun", "python -m torch", "python3 -m torch")):
            launcher = "torchrun" if "launch" not in cmd else "torch.distributed.launch"
            nproc = opts.get("nproc_per_node") or opts.get("nproc-per-node")
            nnodes_raw = opts.get("nnodes", "1")
            nodes_written = "nnodes" in opts
            nodes = _int(nnodes_raw.split(":")[-1])
            if per_node := _int(nproc):
                world = per_node * (nodes or 1)
            elif nproc in ("gpu", "auto") and visible:
                world = visible * (nodes or 1)
                f["torchrun_nproc"] = nproc
            elif nproc is None:
                world = nodes or 1  # torchrun's default is one process per node
        elif cmd == "deepspeed":
            launcher = "deepspeed"
            nodes = _int(opts.get("num_nodes") or opts.get("num_node")) or 1  # argparse accepts the abbreviation
            nodes_written = "num_nodes" in opts or "num_node" in opts
            if "include" in opts:
                hosts = [h for h in opts["include"].split("@") if h]
                counts = [len(_devices(h.split(":", 1)[1])) if ":" in h else None for h in hosts]
                if all(c is not None for c in counts):
                    world = sum(counts)  # type: ignore[arg-type]
                    nodes = len(hosts)
                    nodes_written = True
                f["ds_include"] = opts["include"]
            elif num_gpus := _int(opts.get("num_gpus")):
                world = num_gpus * nodes
            if "hostfile" in opts:
                f["ds_hostfile"] = opts["hostfile"]
            ignoring = any(k in opts for k in ("include", "exclude", "num_gpus", "num_nodes", "num_node"))
            if visible and ignoring:
                f["ds_ignores_visible_devices"] = True
            elif visible and world is None:
                world = visible * nodes  # honoured since DeepSpeed PR #868 when no resource flag is given
        elif cmd.startswith("accelerate"):
            launcher = "accelerate"
            nodes = _int(opts.get("num_machines")) or 1
            nodes_written = "num_machines" in opts
            world = _int(opts.get("num_processes"))
            if "config_file" in opts:
                f["config_file"] = opts["config_file"]
            if "gpu_ids" in opts:
                f["accelerate_gpu_ids"] = opts["gpu_ids"]
        elif cmd.startswith("llamafactory-cli"):
            launcher = "llamafactory-cli"
            cfg = next((t for t in tokens if t.endswith((".yaml", ".yml", ".json"))), None)
            if cfg:
                f["config_file"] = cfg
            nodes = _int(env.get("NNODES")) or 1
            nodes_written = "NNODES" in env
            nproc_env = _int(env.get("NPROC_PER_NODE"))
            if nproc_env:
                world = nproc_env * nodes
            elif visible:
                world = visible * nodes
        elif cmd.startswith("swift"):
            # ms-swift starts torchrun itself when NPROC_PER_NODE is set; each process then takes the visible GPUs
            # ÷ NPROC_PER_NODE, and with two or more it loads the model with device_map="auto" across them
            # (swift.utils is_mp / get_default_device_map), unless ZeRO-3 or FSDP shard it instead. The GPU count
            # stays the reading of the rest of the message (no world size from here).
            launcher = "swift"
            nproc_env = _int(env.get("NPROC_PER_NODE")) if "NPROC_PER_NODE" in env else 1  # ($VAR: unknown)
            sharded = "zero3" in opts.get("deepspeed", "") or "fsdp" in opts
            if visible and nproc_env and visible // nproc_env >= 2 and not sharded:
                f["swift_device_map"] = (visible, nproc_env)
                f["swift_nproc_written"] = "NPROC_PER_NODE" in env  # "NPROC_PER_NODE=1" is not "not set"
                if "deepspeed" in opts:
                    f["swift_deepspeed_with_mp"] = True  # ms-swift refuses: "DeepSpeed is not compatible with MP"
        else:
            launcher = "python"
            world, nodes = 1, 1
            nodes_written = True  # a plain python process runs on one node
            if visible and visible > 1:
                f["python_visible_unused"] = visible
            if own := _script_devices(opts):
                # the devices the script is given by its own option (Lightning's --gpus 0,1,2,3, Caffe's --gpu=0,1):
                # the GPUs the user states, though one python process may drive them all (DataParallel)
                f["script_devices"] = own
        f["launcher"] = launcher
        if world is not None:
            f["world_size"] = world
        if nodes is not None and nodes_written:
            f["num_nodes"] = nodes
        if "deepspeed" in opts and opts["deepspeed"] != "true":
            f["ds_config_file"] = opts["deepspeed"]
            f.setdefault("config_file", opts["deepspeed"])
        elif "deepspeed" in opts and launcher == "python":
            f["uses_deepspeed"] = True
        for key, name in _ARGS.items():
            if key in opts and opts[key] != "true":
                val = opts[key]
                f[name] = int(val) if name != "model" and name != "finetune" and _int(val) else val
        if opts.get("bf16") in ("true", "True") or opts.get("fp16") in ("true", "True"):
            f["precision"] = "bf16" if opts.get("bf16") in ("true", "True") else "fp16"
        out.append(
            Artifact(
                kind="launch_command",
                start=start,
                end=end,
                key_line=line[:240],
                fields=f,
                framework={"torchrun": "torchrun", "torch.distributed.launch": "torchrun"}.get(launcher, launcher),
            )
        )
    return out


def causes(a: Artifact) -> list[Cause]:
    """Launch mistakes visible from the command alone."""
    f = a.fields
    out: list[Cause] = []
    # No CUDA_VISIBLE_DEVICES on the line means every GPU is visible (a number we do not know), never zero GPUs.
    vis: list[str] | None = f.get("visible_devices") if "visible_devices" in f else None
    world = f.get("world_size")
    if f.get("ds_ignores_visible_devices") and vis:
        out.append(
            Cause(
                id="launch.ds_ignores_cuda_visible_devices",
                likelihood="likely",
                title_en="The deepspeed launcher ignores CUDA_VISIBLE_DEVICES here",
                title_zh="这里 deepspeed 启动器会忽略 CUDA_VISIBLE_DEVICES",
                because_en=f"CUDA_VISIBLE_DEVICES={safe(','.join(vis))} is set, but with --include/--exclude/--num_gpus/--num_nodes "
                'the deepspeed launcher ignores it and picks GPUs from those flags (it prints "Detected CUDA_VISIBLE_DEVICES=… '
                'but ignoring it"), so other GPUs than you meant may be used.',
                because_zh=f"设置了 CUDA_VISIBLE_DEVICES={safe(','.join(vis))}，但只要给了 --include/--exclude/--num_gpus/--num_nodes，"
                'deepspeed 启动器就会忽略它，按这些参数选卡（日志会打印 "Detected CUDA_VISIBLE_DEVICES=… but ignoring it"），'
                "实际用到的卡可能不是你想要的。",
                fix_en=f"Use `deepspeed --include localhost:{safe(','.join(vis))} …`, or keep CUDA_VISIBLE_DEVICES and drop "
                "--num_gpus/--num_nodes/--include/--exclude.",
                fix_zh=f"改用 `deepspeed --include localhost:{safe(','.join(vis))} …`，或保留 CUDA_VISIBLE_DEVICES 并去掉 "
                "--num_gpus/--num_nodes/--include/--exclude。",
                card_ids=["deepspeed-batch-assertion-error"],
            )
        )
    if (
        vis is not None
        and isinstance(world, int)
        and f.get("launcher") in ("torchrun", "torch.distributed.launch", "accelerate")
    ):
        per_node = world // max(f.get("num_nodes") or 1, 1)
        if per_node > len(vis):
            out.append(
                Cause(
                    id="launch.more_processes_than_gpus",
                    likelihood="likely",
                    title_en="More processes per node than visible GPUs",
                    title_zh="每节点进程数多于可见 GPU 数",
                    because_en=f"{per_node} processes per node but CUDA_VISIBLE_DEVICES lists {len(vis)} GPU(s): several ranks share a GPU "
                    "(or fail with 'invalid device ordinal').",
                    because_zh=f"每节点 {per_node} 个进程，但 CUDA_VISIBLE_DEVICES 只列了 {len(vis)} 张卡：多个 rank 共用一张卡（或报 "
                    "'invalid device ordinal'）。",
                    fix_en=f"Make the process count equal the visible GPUs ({len(vis)}).",
                    fix_zh=f"让进程数等于可见 GPU 数（{len(vis)}）。",
                    card_ids=[],
                )
            )
    if repeated := f.get("lightning_repeated_ranks"):
        ranks = ", ".join(str(r) for r in repeated[:4])
        world_n = f.get("lightning_world") or 0
        out.append(
            Cause(
                id="launch.lightning_ranks_repeated",
                likelihood="likely",
                title_en="Every node thinks it is node 0: Lightning's ranks repeat",
                title_zh="每个节点都以为自己是 0 号节点：Lightning 的 rank 重复了",
                because_en=f"The log prints GLOBAL_RANK {ranks} more than once (of {world_n} expected): processes on different "
                "nodes took the same ranks, so the process group never forms and the run waits at start. Under SLURM the "
                "task count must be devices × num_nodes: Lightning ≥ 1.8 takes the ranks from the SLURM tasks, and ≤ 1.7 "
                "spawned its own processes when the count differed, every node then taking NODE_RANK's default, 0.",
                because_zh=f"日志里 GLOBAL_RANK {ranks} 出现了不止一次（预期 {world_n} 个进程）：不同节点上的进程拿到了相同的 rank，"
                "进程组永远建不起来，训练卡在启动。SLURM 下任务数必须等于 devices × num_nodes：Lightning ≥ 1.8 按 SLURM "
                "任务分配 rank；≤ 1.7 在任务数不符时自己起进程，每个节点都取 NODE_RANK 的默认值 0。",
                fix_en="In the sbatch script set `#SBATCH --nodes` = num_nodes and `#SBATCH --ntasks-per-node` = devices and "
                "launch with `srun python train.py`; without SLURM, give each node its own NODE_RANK.",
                fix_zh="sbatch 脚本里写 `#SBATCH --nodes` = num_nodes、`#SBATCH --ntasks-per-node` = devices，并用 "
                "`srun python train.py` 启动；不用 SLURM 时给每个节点设置各自的 NODE_RANK。",
                card_ids=["slurm-tasks-per-gpu-launch"],
            )
        )
    if f.get("swift_device_map"):
        visible, procs = f["swift_device_map"]
        each = visible // procs
        alone = procs == 1 and not f.get("swift_nproc_written")
        refused = bool(f.get("swift_deepspeed_with_mp"))
        out.append(
            Cause(
                id="launch.swift_device_map",
                likelihood="likely",
                title_en="ms-swift splits the model over the GPUs with device_map (one GPU computes at a time)",
                title_zh="ms-swift 用 device_map 把模型按层切到多张卡上（同一时刻只有一张卡在算）",
                because_en=(
                    f"{visible} GPUs are visible and "
                    + (
                        "NPROC_PER_NODE is not set, so `swift sft` runs one process"
                        if alone
                        else f"NPROC_PER_NODE={procs}"
                    )
                    + f"; ms-swift then loads the model with device_map='auto' over {each} GPUs per process "
                    "(swift.utils is_mp: visible GPUs ÷ processes ≥ 2). "
                    + (
                        'With --deepspeed ms-swift stops at once: "DeepSpeed is not compatible with MP".'
                        if refused
                        else "The layers run one GPU after another, so only one GPU is busy at a time and memory is "
                        "uneven (the first or last GPU can run out while others have room)."
                    )
                ),
                because_zh=(
                    f"可见 {visible} 张卡，"
                    + ("没有设置 NPROC_PER_NODE，`swift sft` 只启动一个进程" if alone else f"NPROC_PER_NODE={procs}")
                    + f"；ms-swift 此时用 device_map='auto' 把模型按层切到每个进程的 {each} 张卡上"
                    "（swift.utils is_mp：可见卡数 ÷ 进程数 ≥ 2）。"
                    + (
                        '加了 --deepspeed 时 ms-swift 会直接报错："DeepSpeed is not compatible with MP"。'
                        if refused
                        else "各层依次在不同卡上计算，所以同一时刻只有一张卡在算，各卡显存也不均（可能某一张先 OOM，其他卡还有空间）。"
                    )
                ),
                fix_en=f"For data parallel on {visible} GPUs set `NPROC_PER_NODE={visible}` (one process per GPU); add "
                "`--deepspeed zero2`/`zero3` if one GPU cannot hold the model.",
                fix_zh=f"要在 {visible} 张卡上数据并行，设置 `NPROC_PER_NODE={visible}`（每卡一个进程）；单卡放不下模型时再加 "
                "`--deepspeed zero2`/`zero3`。",
                card_ids=["device-map-auto-distributed-error" if refused else "device-map-uneven-memory"],
            )
        )
    if f.get("launcher") == "python" and (
        f.get("python_visible_unused") or f.get("uses_deepspeed") or f.get("ds_config_file")
    ):
        n = f.get("python_visible_unused")
        deepspeed = bool(f.get("uses_deepspeed") or f.get("ds_config_file"))
        # Without DeepSpeed, a Trainer script started with python and several visible GPUs runs nn.DataParallel
        # (transformers Trainer._wrap_model when args.n_gpu > 1, checked 4.46.0 and 5.23.0): GPU 0 fills first.
        dp_en = (
            ""
            if deepspeed
            else " A Trainer-based script then wraps the model in nn.DataParallel (Trainer._wrap_model when more than "
            "one GPU is visible): one process scatters each batch from GPU 0 and gathers every output and the loss "
            "back there, so GPU 0 runs out first while the others stay low."
        )
        dp_zh = (
            ""
            if deepspeed
            else "基于 HF Trainer 的脚本此时会用 nn.DataParallel 包装模型（Trainer._wrap_model：可见多卡时）：一个进程从 "
            "GPU 0 切分每个 batch，再把所有输出和 loss 汇总回 GPU 0，所以 0 号卡先爆显存，其他卡占用很低。"
        )
        out.append(
            Cause(
                id="launch.python_single_process",
                likelihood="likely" if n else "possible",
                title_en="`python script.py` starts one process",
                title_zh="`python script.py` 只启动一个进程",
                because_en="A plain `python` launch runs a single process, so DeepSpeed/Trainer see world_size=1"
                + (f" even though {n} GPUs are visible." if n else ".")
                + dp_en,
                because_zh="直接用 `python` 启动只有一个进程，DeepSpeed/Trainer 看到的 world_size=1"
                + (f"，尽管可见 {n} 张卡。" if n else "。")
                + dp_zh,
                fix_en=f"Use `torchrun --nproc_per_node {n or 'N'} script.py …` or `deepspeed --num_gpus {n or 'N'} script.py …`.",
                fix_zh=f"改用 `torchrun --nproc_per_node {n or 'N'} script.py …` 或 `deepspeed --num_gpus {n or 'N'} script.py …`。",
                card_ids=["deepspeed-batch-assertion-error" if deepspeed else "dataparallel-single-process-trainer"],
            )
        )
    return out
