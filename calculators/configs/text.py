"""Reading pasted text: JSON / YAML / launch-command flags into a dict, with key positions for line numbers."""

from __future__ import annotations

import json
import re
import shlex
from bisect import bisect_right
from typing import Any, NamedTuple

import yaml

from .. import safe_yaml
from ..shell import exports_as_assignments
from .models import MAX_TEXT, ConfigParseError, SourceFormat

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_LAUNCHERS = ("torchrun", "deepspeed", "accelerate", "python", "python3", "llamafactory-cli", "swift")
#: ms-swift's training subcommands (swift/cli/main.py ROUTE_MAPPING): `swift sft ...` runs `python sft.py ...`, or
#: `torchrun --nproc_per_node $NPROC_PER_NODE sft.py ...` when NPROC_PER_NODE or NNODES is set.
_SWIFT_TRAIN = ("sft", "pt", "rlhf", "dpo", "orpo", "simpo")


def _line_starts(text: str) -> list[int]:
    return [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]


def _json_positions(text: str) -> dict[str, tuple[int, int]]:
    """Dotted key path → (line, column) of each key in a JSON text (1-based), best effort."""
    starts = _line_starts(text)
    out: dict[str, tuple[int, int]] = {}
    stack: list[list[Any]] = []  # [type, current_key]
    token = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]')
    tokens = list(token.finditer(text))
    for i, m in enumerate(tokens):
        t = m.group(0)
        if t in "{[":
            stack.append([t, None])
        elif t in "}]":
            if stack:
                stack.pop()
        elif t.startswith('"') and stack and stack[-1][0] == "{":
            nxt = tokens[i + 1].group(0) if i + 1 < len(tokens) else ""
            if nxt == ":":
                try:
                    key = json.loads(t)
                except ValueError:
                    continue
                stack[-1][1] = key
                path = ".".join(str(s[1]) for s in stack if s[0] == "{" and s[1] is not None)
                line = bisect_right(starts, m.start())
                out.setdefault(path, (line, m.start() - starts[line - 1] + 1))
    return out


def _yaml_positions(text: str) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    try:
        node = safe_yaml.compose(text)
    except yaml.YAMLError:
        return out

    def walk(n: Any, prefix: str) -> None:
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                key = f"{prefix}{k.value}"
                out.setdefault(key, (k.start_mark.line + 1, k.start_mark.column + 1))
                walk(v, key + ".")

    walk(node, "")
    return out


def _scalar(s: str) -> Any:
    """A command-line value as Python: ints, floats, booleans, null, else the string."""
    low = s.lower()
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    if low in ("none", "null"):
        return None
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        return s


class FlagsRead(NamedTuple):
    """What a launch command says: the script's arguments and what the launcher (or program) decides."""

    args: dict[str, Any]
    world_size: int | None
    notes_en: list[str]
    notes_zh: list[str]
    positions: dict[str, tuple[int, int]]
    program: str | None  # "ms-swift" for `swift sft ...`: its own argument names and defaults


def _parse_flags(text: str) -> FlagsRead:
    """A launch command → its arguments, world size, notes and the program it runs."""
    # (a shell's backslash continuations, Windows cmd's " ^"; variables exported on lines before the command, as
    # assignments in front of it; a batch file's `call` before the program)
    clean = re.sub(r"\\\r?\n|(?<=\s)\^\r?\n", " ", text)
    clean = exports_as_assignments(clean)
    clean = re.sub(r"^((?:[A-Z_][A-Z0-9_]*=\S*\s+)*)call\s+", r"\1", clean.lstrip(), flags=re.I)
    try:
        tokens = shlex.split(clean, comments=True)
    except ValueError as exc:
        raise ConfigParseError(f"Cannot split the command line: {exc}.", f"无法解析命令行：{exc}。") from None
    env: dict[str, str] = {}
    while tokens and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", tokens[0]):
        name, _, value = tokens.pop(0).partition("=")  # environment assignments such as CUDA_VISIBLE_DEVICES=0,1
        env[name] = value
    launcher: str | None = None
    program: str | None = None
    launch_args: dict[str, Any] = {}
    i = 0
    if tokens:
        head = tokens[0].rsplit("/", 1)[-1]
        if head in ("torchrun", "deepspeed"):
            launcher, i = head, 1
        elif head == "accelerate" and len(tokens) > 1 and tokens[1] == "launch":
            launcher, i = "accelerate", 2
        elif (
            head in ("python", "python3")
            and len(tokens) > 2
            and tokens[1] == "-m"
            and tokens[2] in ("torch.distributed.run", "torch.distributed.launch")
        ):
            launcher, i = "torchrun", 3
        elif head in ("python", "python3"):
            i = 1
        elif head == "llamafactory-cli":
            i = 2 if len(tokens) > 1 else 1
        elif head == "swift" and len(tokens) > 1 and tokens[1].replace("-", "_") in _SWIFT_TRAIN:
            program, i = "ms-swift", 2
    # launcher options run until the script (a .py file, -m module or the first non-option)
    while i < len(tokens) and launcher:
        tok = tokens[i]
        if not tok.startswith("-"):
            break
        if tok == "-m":
            i += 1
            break
        name, _, val = tok.lstrip("-").partition("=")
        name = name.replace("-", "_")
        if not val and i + 1 < len(tokens) and not tokens[i + 1].startswith("-") and not tokens[i + 1].endswith(".py"):
            val = tokens[i + 1]
            i += 1
        launch_args[name] = _scalar(val) if val else True
        i += 1
    if i < len(tokens) and not tokens[i].startswith("-"):
        i += 1  # the script itself
    args: dict[str, Any] = {}
    positions: dict[str, tuple[int, int]] = {}
    starts = _line_starts(text)
    while i < len(tokens):
        tok = tokens[i]
        if not tok.startswith("--"):
            i += 1
            continue
        name, eq, val = tok[2:].partition("=")
        name = name.replace("-", "_")
        if not eq:
            if i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
                val = tokens[i + 1]
                i += 1
                args[name] = _scalar(val)
            else:
                args[name] = True
        else:
            args[name] = _scalar(val)
        at = text.find(tok.split("=")[0])
        if at >= 0:
            line = bisect_right(starts, at)
            positions.setdefault(name, (line, at - starts[line - 1] + 1))
        i += 1
    notes_en: list[str] = []
    notes_zh: list[str] = []
    ws: int | None = None

    def num(*names: str) -> int | None:
        for n in names:
            v = launch_args.get(n)
            if isinstance(v, int) and not isinstance(v, bool):
                return v
        return None

    if launcher == "torchrun":
        nproc, nnodes = num("nproc_per_node"), num("nnodes") or 1
        if nproc:
            ws = nproc * nnodes
        else:
            notes_en.append("torchrun without a numeric --nproc_per_node: world size unknown.")
            notes_zh.append("torchrun 没有给出数字形式的 --nproc_per_node：卡数未知。")
    elif launcher == "deepspeed":
        gpus, nodes = num("num_gpus", "num_accelerators"), num("num_nodes") or 1
        include = launch_args.get("include")
        devices = include.split(":", 1)[1].split(",") if isinstance(include, str) and ":" in include else []
        if gpus is None and devices and all(d.strip().isdigit() for d in devices):
            gpus = len(devices)
        if gpus:
            ws = gpus * nodes
        elif devices:
            # `--include localhost:$CUDA_VISIBLE_DEVICES` (LLaMA-Factory #2374): the shell fills the list in
            notes_en.append("--include lists its GPUs through a shell variable: world size unknown from the command.")
            notes_zh.append("--include 的 GPU 列表来自 shell 变量：仅凭命令无法确定卡数。")
        else:
            notes_en.append("The deepspeed launcher without --num_gpus uses every visible GPU: world size unknown.")
            notes_zh.append("deepspeed 启动器不带 --num_gpus 时会使用所有可见 GPU：卡数未知。")
    elif launcher == "accelerate":
        ws = num("num_processes")
        if ws is None:
            notes_en.append("accelerate launch without --num_processes takes it from the accelerate config file.")
            notes_zh.append("accelerate launch 未给 --num_processes 时从 accelerate 配置文件读取。")
        for key in ("mixed_precision", "zero_stage", "gradient_accumulation_steps", "config_file"):
            if key in launch_args:
                args.setdefault(f"accelerate_{key}", launch_args[key])
    elif program == "ms-swift":
        ws = _swift_world_size(env, notes_en, notes_zh)
    return FlagsRead(args, ws, notes_en, notes_zh, positions, program)


def _swift_world_size(env: dict[str, str], notes_en: list[str], notes_zh: list[str]) -> int | None:
    """ms-swift starts torchrun only when NPROC_PER_NODE or NNODES is set (swift/cli/main.py use_torchrun); without
    them one process sees every visible GPU and splits the model over them with device_map (swift/utils/env.py is_mp):
    model parallelism, one GPU computing at a time, and one data-parallel rank."""
    nproc, nnodes = env.get("NPROC_PER_NODE", ""), env.get("NNODES", "")
    if nproc.isdigit() and int(nproc) > 0:
        return int(nproc) * (int(nnodes) if nnodes.isdigit() and int(nnodes) > 0 else 1)
    if "NPROC_PER_NODE" in env or "NNODES" in env:
        notes_en.append("NPROC_PER_NODE is not a number here: world size unknown.")
        notes_zh.append("这里的 NPROC_PER_NODE 不是数字：卡数未知。")
        return None
    notes_en.append(
        "No NPROC_PER_NODE: `swift` starts one process, not torchrun. With several visible GPUs that process splits "
        "the model over them with device_map (model parallelism: one GPU computes at a time, memory is uneven) and "
        "there is one data-parallel rank. Set NPROC_PER_NODE=<GPUs> for one process per GPU (add --deepspeed for a "
        "model too big for one GPU)."
    )
    notes_zh.append(
        "没有设置 NPROC_PER_NODE：`swift` 只启动一个进程，不走 torchrun。可见多张卡时，这个进程用 device_map 把模型"
        "按层切到各卡（模型并行：同一时刻只有一张卡在算，各卡显存不均），数据并行只有 1 个进程。想每卡一个进程，"
        "设 NPROC_PER_NODE=<卡数>（模型一张卡放不下时再加 --deepspeed）。"
    )
    return None


def _strip_fence(text: str) -> tuple[str, str]:
    m = _FENCE.search(text)
    if m:
        return m.group(2), m.group(1).lower()
    return text, ""


def _load_text(
    text: str,
) -> tuple[
    dict[str, Any], SourceFormat, dict[str, tuple[int, int]], int | None, list[str], list[str], list[str], str | None
]:
    """Text → (dict, format, positions, world_size, notes_en, notes_zh, duplicate_keys, program of a command)."""
    if len(text) > MAX_TEXT:
        raise ConfigParseError(
            f"The config is too long ({len(text):,} characters; at most {MAX_TEXT:,}).",
            f"配置太长（{len(text):,} 个字符，最多 {MAX_TEXT:,}）。",
        )
    body, lang = _strip_fence(text)
    stripped = body.strip()
    if not stripped:
        raise ConfigParseError("The config is empty.", "配置是空的。")
    first = stripped.split(None, 1)[0].rsplit("/", 1)[-1]
    if (
        lang in ("bash", "sh", "shell", "console")
        or stripped.startswith("--")
        or first in _LAUNCHERS
        or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=\S*\s+\S", stripped)
    ):
        flags = _parse_flags(stripped)
        if not flags.args and flags.world_size is None:
            raise ConfigParseError(
                "No --training_flags found in the command line.", "命令行里没有找到训练参数（--xxx）。"
            )
        return flags.args, "flags", flags.positions, flags.world_size, flags.notes_en, flags.notes_zh, [], flags.program
    if stripped.startswith("{") or lang == "json":
        dups: list[str] = []

        def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            d: dict[str, Any] = {}
            for k, v in pairs:
                if k in d:
                    dups.append(k)
                d[k] = v
            return d

        try:
            data = json.loads(body, object_pairs_hook=hook)
        except json.JSONDecodeError as exc:
            raise _json_error(exc) from None
        except (ValueError, RecursionError) as exc:
            raise ConfigParseError(f"Not valid JSON: {exc}.", f"不是合法的 JSON：{exc}。") from None
        if not isinstance(data, dict):
            raise ConfigParseError(
                "The JSON is not an object ({...}).", "这段 JSON 不是对象（{...}）。", line=1, column=1
            )
        return data, "json", _json_positions(body), None, [], [], dups, None
    try:
        data = safe_yaml.load(body)
    except safe_yaml.UnsafeYAMLError as exc:
        mark = exc.problem_mark
        raise ConfigParseError(
            f"Refused: {exc.problem}.",
            f"已拒绝：{exc.problem_zh}。",
            line=mark.line + 1 if mark is not None else None,
            column=mark.column + 1 if mark is not None else None,
            fix_en="Write the values out instead of using anchors and aliases.",
            fix_zh="请直接写出取值，不要使用锚点和别名。",
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigParseError(
            f"Not valid YAML: {problem}.",
            f"不是合法的 YAML：{problem}。",
            line=line,
            column=col,
            fix_en="Check indentation (spaces, not tabs) and that every key is followed by ': '.",
            fix_zh="检查缩进（用空格而不是 Tab），以及每个键后面是否有“: ”。",
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ConfigParseError(f"Not valid YAML: {exc}.", f"不是合法的 YAML：{exc}。") from None
    if not isinstance(data, dict):
        raise ConfigParseError(
            "This is not a config: expected key: value pairs (YAML), a JSON object or --flags.",
            "这不是配置：需要 key: value 形式的 YAML、JSON 对象或 --参数 命令行。",
        )
    return data, "yaml", _yaml_positions(body), None, [], [], [], None


def _json_error(exc: json.JSONDecodeError) -> ConfigParseError:
    hint_en, hint_zh = "", ""
    if exc.msg.startswith("Expecting property name") or exc.msg.startswith("Expecting value"):
        before = exc.doc[: exc.pos].rstrip()
        if before.endswith(","):
            hint_en = " A trailing comma before a closing bracket is not allowed in JSON."
            hint_zh = "JSON 不允许在右括号前留下多余的逗号。"
    elif exc.msg.startswith("Expecting ',' delimiter"):
        hint_en = " A comma is probably missing at the end of the previous line."
        hint_zh = "上一行末尾很可能缺了逗号。"
    return ConfigParseError(
        f"Not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.{hint_en}",
        f"不是合法的 JSON：第 {exc.lineno} 行第 {exc.colno} 列，{exc.msg}。{hint_zh}",
        line=exc.lineno,
        column=exc.colno,
        fix_en=(
            "Fix the JSON there. Note: the deepspeed launcher reads config files with hjson, which tolerates some "
            "of this, but Hugging Face Trainer and Accelerate use json.load and will refuse the file."
        ),
        fix_zh=(
            "在该位置修正 JSON。注意：deepspeed 自己用 hjson 读取配置文件，能容忍部分此类错误，"
            "但 Hugging Face Trainer 和 Accelerate 用 json.load 读取，会直接报错。"
        ),
    )
