"""Step 1 of an answer: split the user's message into typed parts.

Real questions arrive the way people write on issue trackers: a few sentences of prose around
pasted tracebacks, training logs, launch commands, ``nvidia-smi`` tables and configs. Each kind
goes to its own reader — configs to the config doctor, errors / logs / commands / nvidia-smi to
the diagnosis readers — and retrieval sees only the prose plus the key line of each error, never
hundreds of log lines.

Pure text processing: no model, no torch.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from calculators.shell import EXPORT_LINE, continued

PartKind = Literal["prose", "config", "traceback", "error", "log", "command", "nvidia_smi", "code"]

#: What retrieval sees of a long message (the prose first, then key error lines).
MAX_QUERY_CHARS = 1500


class Part(BaseModel):
    """One piece of the message: its kind, its text and where it was in the message."""

    kind: PartKind
    text: str
    start: int
    end: int
    fenced: bool = False

    @property
    def key_line(self) -> str:
        """The one line that says what happened (the exception line of a traceback), for retrieval."""
        if self.kind not in ("traceback", "error"):
            return ""
        lines = [ln.strip() for ln in self.text.splitlines() if ln.strip()]
        errs = [ln for ln in lines if _ERROR_LINE.search(ln)]
        return (errs[-1] if errs else lines[-1] if lines else "")[:300]


# The fence's info string is a language tag ("```bash"); a command written on the fence's own line ("```deepspeed
# --num_gpus 8 train.py \\", LLaMA-Factory #3147) is the paste's first line, so the body starts on it.
_FENCE = re.compile(r"^[ \t]*(```|~~~)(?:[ \t]*[\w+#.-]*[ \t]*\n)?(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
# A launch command pasted between single backticks over several lines (ms-swift #4177: "`swift sft \\\n --model …
# --packing True`"): a fenced paste in all but the fence, so it is read as a command, not as prose.
_INLINE_COMMAND = re.compile(
    r"(?<![`\w])`(?!`)((?:(?:[A-Z_]+=\S*\s+)*)(?:swift|llamafactory-cli|torchrun|deepspeed|accelerate\s+launch|"
    r"python3?|bash|sh|tune\s+run|xtuner)\s[^`]*?\\[ \t]*\n[^`]*)`(?!`)"
)

_TRACEBACK_START = re.compile(r"^\s*Traceback \(most recent call last\):", re.M)
_ERROR_LINE = re.compile(
    r"(?:^|\s|\])(?:(?-i:[\w.]*[A-Z]\w*(?:Error|Exception|Interrupt))\b:?|CUDA out of memory|out of memory|OutOfMemory|"
    r"AssertionError|Killed\b|SIGKILL|Signals\.SIGKILL|exit(?:code| code|ed with)\s*[:=]?\s*-?\d+|ChildFailedError|"
    r"NCCL (?:error|WARN)|RuntimeError|ValueError|KeyError|TypeError|(?-i:ERROR|FAILED)\b|fatal\b|"
    r"is not equal to|!=\s*\d+\s*\*)",
    re.I,
)
# The rest of a CUDA OOM message wrapped over lines: part of the error, never its key line.
_ERROR_CONT = re.compile(
    r"GiB total capacity|already allocated|reserved in total by PyTorch|max_split_size_mb|"
    r"PYTORCH_CUDA_ALLOC_CONF|GiB memory in use|is allocated by PyTorch|reserved by PyTorch but "
    r"unallocated|total capac\w* of [\d.]+ GiB"
)
_TB_BODY = re.compile(r"^(?:\s+|File \"|During handling|The above exception|\^|~|\s*\.\.\.|\s*[│╭╰])")
# Rich's boxed traceback (accelerate, typer and LLaMA-Factory CLIs): "╭───── Traceback (most recent call last) ─────╮",
# "│ /opt/conda/…/config.py:891 in _batch_assertion │", "╰──────╯".
_RICH_FRAME = re.compile(r"^\s*(?:╭─+\s*Traceback|│.{2,}│\s*$|╰─{3,})")
_LOG_LINE = re.compile(
    r"^\s*(?:\{'(?:loss|train_loss|eval_loss|learning_rate|epoch|grad_norm)'|\[(?:INFO|WARNING|ERROR|DEBUG)|"
    r"\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\[rank\d+\]|\d\d/\d\d/\d{4} \d\d:\d\d|\d\d:\d\d:\d\d[ ,.-]|"
    r"(?:INFO|WARNING|WARN|DEBUG)\s*[:\]|-]|.*\d+%\|.*\|\s*\d+/\d+|.*\b\d+/\d+ \[\d\d:\d\d|.*(?:it/s|s/it)\]|"
    r"\s*(?:step|iteration|epoch)s?\s*[:=]?\s*\d+.*(?:loss|lr)\b|"
    # Megatron's per-rank memory report: "[Rank 0] (after 1 iterations) memory (MB) | allocated: 882.5 | …"
    r"\s*\[Rank \d+\] \(after \d+ iterations\) memory \(MB\)|"
    # DeepSpeed's fp16 loss scaler: "Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768"
    r"\s*\[?Rank \d+\]? Skipping step\. Attempted loss scale|"
    # a log collector's prefix before the framework's own stamp: "1622513061366 localhost info [2021-06-01 05:04:21,527] [INFO]"
    r".{0,60}\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d+\]\s*\[(?:INFO|WARNING|ERROR|DEBUG)\]|"
    # Megatron / GPT-NeoX print_rank_0 lines: " > loading doc-idx mapping from …", " > building train, validation …"
    r"\s*> (?:loading|building|finished|dataset split|setting|initializ|compiling|padded vocab|number of)\b|"
    # what Megatron-LM / GPT-NeoX / DeepSpeed print of their arguments at start-up: "using world size: 16 and
    # model-parallel size: 2", "------------------------ arguments ------------------------", and each argument as
    # "  micro_batch_size ................ 8" (megatron/training/arguments.py _print_args, DeepSpeedConfig.print)
    # Lightning's start-up lines: "GPU available: True, used: True", "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/4",
    # "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1]", "All distributed processes registered. Starting with 1 processes"
    r"(?:GPU|TPU|IPU|HPU) available: |initializing (?:ddp|distributed): GLOBAL_RANK|LOCAL_RANK: \d+ - CUDA_VISIBLE_DEVICES|"
    r"All distributed processes registered|distributed_backend=|"
    r"using world size:\s*\d|using torch\.(?:float16|bfloat16|float32) for parameters|-{4,}\s*arguments\s*-{4,}|"
    r"\s+[A-Za-z_][\w.]*\s\.{3,}\s*\S)",
    re.I,
)
# An error line that ends on an operator: the terminal wrapped the expression, the next line finishes it.
_WRAPPED_MID_EXPRESSION = re.compile(r"(?:[*+/=×,]|!=|==|<|>)\s*$")
# … or mid-sentence, on a word an error message never ends with ("train_batch_size is not" / "equal to …").
_WRAPPED_MID_SENTENCE = re.compile(r"\b(?:is|are|not|to|of|the|a|an|and|or|with|for|than|be)\s*$", re.I)


def _wrapped(line: str) -> bool:
    """Whether an error ``line`` stops mid-expression or mid-sentence: the next line is its rest."""
    return bool(_WRAPPED_MID_EXPRESSION.search(line) or _WRAPPED_MID_SENTENCE.search(line))


# A line that is only "..." or "…": where the user cut lines out of a paste.
_ELLIPSIS_LINE = re.compile(r"^\s*(?:\.{3}|…)\s*$")
# A traceback's frame pasted without its "Traceback (most recent call last):" header (trimmed by the user).
_FRAME = re.compile(r'^\s*File "[^"\n]+", line \d+')
_COMMAND = re.compile(
    # (not a YAML key: "deepspeed: examples/deepspeed/ds_z2_config.json" is a line of LLaMA-Factory's config)
    # (Windows batch files: `call python train.py ^`)
    # (`nohup torchrun … &`, GLM-4#468: a launch kept running in the background)
    r"^\s*(?:\$\s+|#\s+)?(?:call\s+|nohup\s+)?(?:(?:[A-Z_][A-Z0-9_]*=\S*\s+)*)(?:torchrun(?![\w:-])|deepspeed(?![\w:-])|accelerate\s+launch|python3?\s|"
    r"python3?\s+-m\s|llamafactory-cli|llamafactory|bash\s+\S+\.sh|sh\s+\S+\.sh|srun|mpirun|tune\s+run|"
    # ms-swift's command lines: `swift sft …`, `megatron sft …`
    r"(?:swift|megatron)\s+(?:sft|pt|rlhf|export|infer)\b|"
    r"CUDA_VISIBLE_DEVICES=)",
    re.I,
)
# gpustat's line per GPU: "[0] Tesla V100-SXM2-32GB | 45°C, 100 % | 32507 / 32510 MB | user(32497M)".
_GPUSTAT = r"^\s*\[\d{1,3}\]\s+[^|\n]+\|[^|\n]*%\s*\|\s*\d+\s*/\s*\d+\s*MB\b"
_SMI = re.compile(
    r"NVIDIA-SMI|^\s*\|\s*\d+\s+.*\|\s*\d+MiB\s*/\s*\d+MiB|^\s*\+-{5,}|^\s*\|={5,}|MiB\s*/\s*\d+MiB|" + _GPUSTAT, re.M
)
_SMI_LINE = re.compile(r"^\s*[|+]|MiB|NVIDIA-SMI|^\s*$|" + _GPUSTAT)


def _classify_block(text: str) -> PartKind:
    """The kind of a fenced block or a run of pasted lines."""
    if _SMI.search(text) and len(re.findall(r"MiB", text)) >= 1 and text.count("|") >= 4:
        return "nvidia_smi"
    if re.search(_GPUSTAT, text, re.M):
        return "nvidia_smi"
    if _TRACEBACK_START.search(text):
        return "traceback"
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "code"
    if _is_command(lines[0]):
        return "command"
    if _looks_like_config(text):
        return "config"
    log = sum(bool(_LOG_LINE.match(ln)) for ln in lines)
    err = sum(bool(_ERROR_LINE.search(ln)) for ln in lines)
    if err and err >= log:
        return "error"
    if log * 2 >= len(lines) or log >= 3:
        return "log"
    if err:
        return "error"
    return "code"


def _looks_like_config(text: str) -> bool:
    """True when the config doctor can read ``text`` as a config (JSON / YAML / flags it knows)."""
    try:
        from calculators import configs
    except ImportError:  # pragma: no cover - calculators always ships with rag
        return False
    snippet = configs.extract_config_text(text)
    if snippet is None or len(snippet.strip()) < 0.5 * len(text.strip()):
        return False
    try:
        configs.parse_config(snippet)
    except Exception:  # noqa: BLE001 - any parse failure means "not a config"
        return False
    return True


def _is_command(line: str) -> bool:
    """A launch command, not prose that starts with a launcher's name ("deepspeed 报错：…"). Chinese in a line with
    three options or more is their values (ms-swift #1940: `--model_name 哈哈大模型 … --model_author 哈哈哈`)."""
    if not _COMMAND.match(line) or (len(_CJK.findall(line)) > 3 and len(_OPTION.findall(line)) < 3):
        return False
    return bool(re.search(r"\s--?\w|\.py\b|\.sh\b|\.ya?ml\b|\.json\b|\s-m\s|\\\s*$|\s\^\s*$|\btrain\b", line))


_CJK = re.compile(r"[\u4e00-\u9fff]")
_OPTION = re.compile(r"\s--[A-Za-z]")


# A launch command that starts inside a line of prose, after the sentence that introduces it ("…，torchrun --nproc…",
# "I run: deepspeed train.py --deepspeed ds.json").
_COMMAND_INSIDE = re.compile(
    r"(?:[，,:：；;。]|\bwith|\busing|\brun|用|运行|执行|命令)\s*`?"
    r"(?=(?:llamafactory-cli|torchrun|deepspeed|accelerate\s+launch|python3?)\s+\S+[^\n]*\s--\w)",
    re.I,
)


# A Chinese sentence glued onto the end of a command line: four CJK characters or more, after a flag's value, and
# ending the line as a sentence (a question or full stop) — not a flag's Chinese value (`--model_author 哈哈哈`).
_PROSE_AFTER_COMMAND = re.compile(r"(?<=[\w.)\]'\"])(?=[\u4e00-\u9fff]{4}[^\n]*[。？?！!]\s*$)")


def _command_inside(line: str) -> int | None:
    """Where a launch command with flags starts inside a prose line, or None."""
    m = _COMMAND_INSIDE.search(line)
    if m is None or m.end() == 0 or not line[: m.end()].strip():
        return None
    return m.end() if _is_command(line[m.end() :]) else None


# The user's own sentence that quotes an error ("I use 8 V100 32G but encounter `CUDA out of memory`"): prose.
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|my|we|our|me)\b|`[^`]*(?:error|out of memory)[^`]*`", re.I)
# "It can train `batch=64 subdivisions=16` on GTX1080ti, but out of memory on RTX2080ti.": the user's sentence about an
# error, not the error (a sentence-cased first word and the words people join clauses with).
_USER_SENTENCE = re.compile(
    r"^\s*(?-i:[A-Z][a-z]+)\s+[^\n]*\b(?:but|when|while|because|although|though|whenever)\b[^\n]*[.?!]\s*$", re.I
)
_EXCEPTION_AT = re.compile(r"^\s*(?:[\w.]*(?:Error|Exception)\b:?|Traceback|RuntimeError|CUDA out of memory\.|torch\.)")


# A sentence in Chinese with an exception glued straight after it, no space between.
_GLUED_ERROR = re.compile(
    r"^[^\n]*?[\u4e00-\u9fff\uff0c\uff1a\u3002](?=(?:torch\.[\w.]*|[A-Z]\w*)(?:Error|Exception)\b|CUDA out of memory|RuntimeError)"
)


# A Markdown list item whose text opens in bold: a line of the user's own write-up, not a pasted message.
_MARKDOWN_ITEM = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s+\*\*[^*\n]+\*\*")


def _line_kind(line: str, first: bool = False) -> PartKind | None:
    if _FRAME.match(line) or _RICH_FRAME.match(line):
        return "traceback"
    if _is_command(line) or EXPORT_LINE.match(line):
        return "command"
    if _LOG_LINE.match(line):
        return "log"
    if _MARKDOWN_ITEM.match(line):
        return None  # "1. **CUDA OOM during Model Loading:** The process crashes …" (unsloth #3942): the user's list
    if _ERROR_CONT.search(line) and not re.search(r"[\u4e00-\u9fff]{6,}", line):
        return "error"
    if (
        _ERROR_LINE.search(line)
        and not re.search(r"[\u4e00-\u9fff]{6,}", line)
        and not re.match(r"^\s*(?:why|how|what|i |my |we |is |does |can |so |but |and )", line, re.I)
        and not _USER_SENTENCE.match(line)
        and not (_FIRST_PERSON.search(line) and not _EXCEPTION_AT.match(line))
        and not (first and not _EXCEPTION_AT.match(line) and len(line) < 120)
    ):
        return "error"
    if _SMI_LINE.match(line) and ("|" in line or "+--" in line) and line.strip():
        return "nvidia_smi"
    return None


# A TOML / INI file pasted without a fence (torchtitan's and others' train configs): its section headers, `key = value`
# lines and `#` comments. "# NOTE: this toml config is a preset for 64 A100 GPUs." is the file's, not the user's setup.
_TOML_SECTION = re.compile(r"^\s*\[\[?[A-Za-z_][\w.\-]*\]\]?\s*(?:#.*)?$")
_TOML_KEY = re.compile(r"^\s*[A-Za-z_][\w.\-]*\s*=\s*\S")
_TOML_COMMENT = re.compile(r"^\s*#")


def _toml_run(lines: list[str], i: int) -> int:
    """How many lines from ``i`` on form a pasted TOML file (0 when they do not): section headers, keys and comments
    (blank lines between them), at least one header and two keys, so a prose line "bs = 2" stays prose."""
    j, headers, keys, last = i, 0, 0, i
    while j < len(lines):
        ln = lines[j]
        if _TOML_SECTION.match(ln):
            headers += 1
        elif _TOML_KEY.match(ln):
            keys += 1
        elif not (_TOML_COMMENT.match(ln) or not ln.strip()):
            break
        if ln.strip():
            last = j + 1
        j += 1
    return last - i if headers and keys >= 2 and (_TOML_SECTION.match(lines[i]) or _TOML_COMMENT.match(lines[i])) else 0


# A shell script pasted without a fence starts with its shebang ("#!/bin/bash") and runs while its lines are shell:
# comments, blank lines, assignments, `if … fi`, commands. A line of prose (six Chinese characters in a row outside a
# comment or a quoted string, or an English sentence ending in "?") ends it.
_SHEBANG = re.compile(r"^\s*#!\s*/\S*(?:env\s+)?(?:ba|z)?sh\b")
_QUOTED_OR_COMMENT = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|(?:^|\s)#.*$")
_SENTENCE_LINE = re.compile(r"^\s*(?-i:[A-Z][a-z]+)\s[^=${}|<>]*[.?!]\s*$")


def _script_run(lines: list[str], i: int) -> int:
    """How many lines from ``i`` on form a pasted shell script (0 unless line ``i`` is a shebang)."""
    if not _SHEBANG.match(lines[i]):
        return 0
    j, last = i + 1, i + 1
    while j < len(lines):
        bare = _QUOTED_OR_COMMENT.sub("", lines[j])
        if re.search(r"[\u4e00-\u9fff]{6,}", bare) or _SENTENCE_LINE.match(lines[j]):
            break
        if lines[j].strip():
            last = j + 1
        j += 1
    return last - i


def _unfenced_parts(text: str, offset: int) -> list[Part]:
    """Parts of text outside code fences: tracebacks, error/log/command/smi runs, configs, prose."""
    parts: list[Part] = []
    lines = text.splitlines(keepends=True)
    pos = 0
    i = 0
    prose_start: int | None = None

    def flush_prose(end: int) -> None:
        nonlocal prose_start
        if prose_start is not None and text[prose_start:end].strip():
            parts.extend(_split_config_out(text[prose_start:end], offset + prose_start))
        prose_start = None

    while i < len(lines):
        line = lines[i]
        if _TRACEBACK_START.match(line):
            start = pos
            j = i + 1
            end = pos + len(line)
            while j < len(lines):
                ln = lines[j]
                if not ln.strip():
                    # A blank line ends the traceback unless more indented frames follow.
                    if j + 1 < len(lines) and _TB_BODY.match(lines[j + 1]):
                        end += len(ln)
                        j += 1
                        continue
                    break
                if _TB_BODY.match(ln) or _ERROR_LINE.search(ln) or re.match(r"^[\w.]+:\s", ln):
                    end += len(ln)
                    j += 1
                    # the exception line ends the traceback, with the rest of it when the terminal wrapped it
                    if not _TB_BODY.match(ln) and _ERROR_LINE.search(ln):
                        while j < len(lines) and lines[j].strip() and _wrapped(lines[j - 1]):
                            end += len(lines[j])
                            j += 1
                        break
                    continue
                break
            flush_prose(start)
            parts.append(
                Part(kind="traceback", text=text[start:end].rstrip("\n"), start=offset + start, end=offset + end)
            )
            pos = end
            i = j
            continue
        # The message's first line is usually its title ("llama2 13b out of memory on A800"): prose unless it is
        # the error itself.
        if (
            (glued := _GLUED_ERROR.match(line))
            and glued.end() < len(line.rstrip())
            and _line_kind(line, first=offset == 0 and pos == 0) == "error"
        ):
            # "运行34b模型时torch.cuda.OutOfMemoryError: …": the title's words, then the error pasted onto the same line
            lines[i : i + 1] = [line[: glued.end()], line[glued.end() :]]
            line = lines[i]
        if n_toml := _toml_run(lines, i) or _script_run(lines, i):
            start, end = pos, pos + sum(len(ln) for ln in lines[i : i + n_toml])
            flush_prose(start)
            parts.append(Part(kind="code", text=text[start:end].rstrip("\n"), start=offset + start, end=offset + end))
            pos, i = end, i + n_toml
            continue
        kind = _line_kind(line, first=offset == 0 and pos == 0)
        if kind is None and (cut := _command_inside(line)):
            # "如果设置fp16: true，llamafactory-cli train --fp16 True …": the sentence, then the command it introduces;
            # "… with `deepspeed --num_gpus 4 train.py`: how much memory?": an inline code span ends the command there
            close = line.find("`", cut) if line[cut - 1] == "`" else -1
            pieces = [line[:cut], line[cut:close], line[close:]] if close > cut else [line[:cut], line[cut:]]
            lines[i : i + 1] = pieces
            line = lines[i]
        if kind == "command" and (tail := _PROSE_AFTER_COMMAND.search(line)):
            # "… --aggr_ratio 0.4这个命令可以模拟出单卡batch_size=128的表现吧？" (LAPS #14): the command, then the question
            # about it glued on without a space; its "batch_size=128" is no flag of the command
            lines[i : i + 1] = [line[: tail.start()], line[tail.start() :]]
            line = lines[i]
        if kind is not None:
            start = pos
            end = pos + len(line)
            j = i + 1
            exception_seen = False  # a traceback's exception line is in: only its wrapped rest may follow
            while j < len(lines):
                ln = lines[j]
                nk = _line_kind(ln)
                cont = kind == "command" and (continued(lines[j - 1]) or ln.lstrip().startswith("--"))
                # a frame's source line, and the exception line that ends the traceback
                frame = (
                    kind == "traceback"
                    and not exception_seen
                    and bool(ln.strip())
                    and bool(_TB_BODY.match(ln) or nk == "error")
                )
                # "..." where the user cut lines out of a printed argument list
                cont = cont or (kind == "log" and bool(_ELLIPSIS_LINE.match(ln)))
                # an error message wrapped by the terminal mid-expression ("… world_size 64 != 4 *" / "8 * 1") or
                # mid-sentence ("train_batch_size is not" / "equal to …"), also after a traceback's exception line
                cont = cont or ((kind == "error" or exception_seen) and bool(ln.strip()) and _wrapped(lines[j - 1]))
                if nk == kind or cont or frame or (kind == "nvidia_smi" and _SMI_LINE.match(ln) and ln.strip()):
                    end += len(ln)
                    j += 1
                    if frame and nk == "error" and not _TB_BODY.match(ln):
                        exception_seen = True
                    continue
                break
            flush_prose(start)
            block = text[start:end]
            if kind == "nvidia_smi" and not _SMI.search(block):
                kind = "code" if block.count("|") >= 2 else "error"
            parts.append(Part(kind=kind, text=block.rstrip("\n"), start=offset + start, end=offset + end))
            pos = end
            i = j
            continue
        if prose_start is None:
            prose_start = pos
        pos += len(line)
        i += 1
    flush_prose(pos)
    return parts


_LEADING_COMMENTS = re.compile(r"(?:^[ \t]*#[^\n]*\n)+\Z", re.M)


def _split_config_out(text: str, offset: int) -> list[Part]:
    """Prose that may contain a bare JSON/YAML config: the config becomes its own part."""
    try:
        from calculators import configs

        snippet = configs.extract_config_text(text)
    except ImportError:  # pragma: no cover
        snippet = None
    if snippet and snippet.strip():
        at = text.find(snippet)
        if at >= 0 and _looks_like_config(snippet):
            # the file's own `#` comment lines right above it ("# Config for 16 nodes of 8 H100s with FSDP1" heading
            # a recipe) belong to the file, not to the user's sentences
            if lead := _LEADING_COMMENTS.search(text[:at]):
                snippet, at = text[lead.start() : at] + snippet, lead.start()
            out: list[Part] = []
            before, after = text[:at], text[at + len(snippet) :]
            if before.strip():
                out.append(Part(kind="prose", text=before.strip(), start=offset, end=offset + at))
            out.append(Part(kind="config", text=snippet, start=offset + at, end=offset + at + len(snippet)))
            if after.strip():
                out.extend(_split_config_out(after, offset + at + len(snippet)))
            return out
    return [Part(kind="prose", text=text.strip(), start=offset, end=offset + len(text))]


# A sentence as people write one, in Chinese ("一张H100显卡，96G显存，全参数微调…") or English ("I am fine-tuning … on 4
# GPUs and it runs out of memory."): no code syntax, several words.
_CODE_SYNTAX = re.compile(r"[{}\[\]=<>]|\(\)|^\s*(?:File \"|at |\w+\.\w+\()|\.py\b|::|->|^\s*[-+|#>$]", re.M)
_EN_SENTENCE = re.compile(r"^\s*(?-i:[A-Z][a-z']*)(?:\s+[A-Za-z0-9'’,-]+){5,}[^\n]*[.?!]?\s*$")


def _mostly_sentences(body: str) -> bool:
    """Whether most lines of a fenced block are the user's own sentences (LLaMA-Factory's and others' issue templates
    put the whole report in a ```text box), so it is read line by line like unfenced text."""
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if not lines or len(lines) > 40:
        return False
    said = sum(
        1
        for ln in lines
        if not _CODE_SYNTAX.search(ln)
        and _line_kind(ln) is None
        and (len(_CJK.findall(ln)) >= 6 or _EN_SENTENCE.match(ln))
    )
    return said * 2 >= len(lines)


def _pastes(text: str) -> list[tuple[re.Match[str], int]]:
    """The fenced blocks and the multi-line inline-code commands, in order, each with the group that holds its body;
    an inline command inside a fenced block is the block's."""
    fences = [(m, 2) for m in _FENCE.finditer(text)]
    inline = [
        (m, 1)
        for m in _INLINE_COMMAND.finditer(text)
        if not any(f.start() <= m.start() < f.end() or m.start() <= f.start() < m.end() for f, _ in fences)
    ]
    return sorted(fences + inline, key=lambda pair: pair[0].start())


def split_message(text: str) -> list[Part]:
    """The message as ordered parts. Never raises; empty text gives []."""
    if not text or not text.strip():
        return []
    parts: list[Part] = []
    pos = 0
    for m, group in _pastes(text):
        if m.start() > pos:
            parts.extend(_unfenced_parts(text[pos : m.start()], pos))
        body = m.group(group)
        if body.strip():
            kind = _classify_block(body)
            if kind in ("error", "log", "code") and _mostly_sentences(body):
                # an issue template's ```text box holding the user's own sentences around an error line
                parts.extend(
                    p.model_copy(update={"fenced": p.kind != "prose"}) for p in _unfenced_parts(body, m.start(group))
                )
            else:
                start = m.start(group)
                parts.append(Part(kind=kind, text=body.rstrip("\n"), start=start, end=start + len(body), fenced=True))
        pos = m.end()
    if pos < len(text):
        parts.extend(_unfenced_parts(text[pos:], pos))
    return _merge_adjacent(parts)


def _merge_adjacent(parts: list[Part]) -> list[Part]:
    """Neighbouring unfenced parts of the same kind are one paste (a log interrupted by a blank line)."""
    out: list[Part] = []
    for p in parts:
        if out and out[-1].kind == p.kind and p.kind != "prose" and not p.fenced and not out[-1].fenced:
            prev = out[-1]
            out[-1] = Part(kind=p.kind, text=prev.text + "\n" + p.text, start=prev.start, end=p.end)
        else:
            out.append(p)
    return out


def prose_of(parts: list[Part]) -> str:
    """The user's own words, without any pasted material."""
    return "\n".join(p.text for p in parts if p.kind == "prose")


def retrieval_query(parts: list[Part]) -> str:
    """What retrieval sees: the prose plus the key line of each error (never whole logs or configs), and the
    variables a launch exports on lines of their own (`export CUDA_VISIBLE_DEVICES=0,1,2,3`: what the user set up,
    read as prose before such lines joined the command after them)."""
    words = [
        p.text if p.kind == "prose" else "\n".join(ln for ln in p.text.splitlines() if EXPORT_LINE.match(ln))
        for p in parts
        if p.kind in ("prose", "command")
    ]
    keys = [p.key_line for p in parts if p.key_line]
    query = "\n".join([*(w for w in words if w), *dict.fromkeys(keys)]).strip()
    return query[:MAX_QUERY_CHARS]
