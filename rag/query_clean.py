"""Clean a retrieval query of the noise that pasted errors and stack frames carry.

The assistant's query is the user's prose plus the key line of each pasted error (:func:`rag.parts.retrieval_query`),
and users paste the error again inside their prose, so the same error line comes twice and lines of the
traceback come along. Three kinds of noise, each printed by a library the same way whatever the cause:

* **library advice boilerplate**: every CUDA OOM message ends with "If reserved memory is >> allocated memory try
  setting max_split_size_mb to avoid fragmentation. See documentation for Memory Management and
  PYTORCH_CUDA_ALLOC_CONF" (PyTorch 1.x-2.0) or "If reserved but unallocated memory is large try setting
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation." (PyTorch >= 2.1), whether or not the
  memory is fragmented. Those words pulled the fragmentation card (and other allocator cards) to the top of every
  OOM question. The figures in the message are read instead: when the memory PyTorch reserved but did not allocate
  is a large share of the card (:data:`FRAGMENTED_SHARE`), the query says so in words.
* **stack frames**: ``File "...", line N, in f`` lines and the code lines under them (``Variable._execution_engine
  .run_backward(  # Calls into the C++ engine ...``) describe where the error surfaced, not what the user asks.
* **repeats and figures**: an error line that appears twice counts once (the assistant appends the key line of each
  pasted error, which the prose often quotes already; a title the user repeats in the body is left alone); sizes a library prints ("508.00 MiB", "23.65 GiB") and hex addresses are dropped, and so is all of an
  OOM message after "Tried to allocate" (figures and the advice above).

* **launch-command values**: in a pasted ``torchrun`` / ``deepspeed`` / ``accelerate launch`` / ``python`` /
  ``llamafactory-cli`` line, paths, numbers and ``$VARS`` name the user's files and sizes, not the problem (``--output_dir
  output/"$exp_name"``, ``--master_port=1112``); the flag names and word values stay (``--finetuning_type lora``).
  Measured on the real-question dev set (``bench/eval_retrieval_real.py``, fused hit@3 zh / en): 0.851 / 0.870 →
  0.864 / 0.881; dropping command lines altogether: 0.851 / 0.870.
  A command pasted over several lines (``nohup deepspeed ...`` ending in a backslash, then one ``--flag value`` a line) is one command:
  every continuation line loses its values too, and so does the log file it is redirected to (``> train.log 2>&1``).

The error line itself ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate") stays: it says what
happened and is in cards' symptoms.
"""

from __future__ import annotations

import re

from calculators.shell import continued

#: Reserved-but-unallocated memory (GiB) over total capacity from which an OOM message reads as fragmentation.
#: PyTorch's own advice says "if reserved memory is >> allocated memory"; a tenth of the card is a conservative
#: reading of ">>" at the moment of the failure (allocated ≈ the whole card), and the fragmentation card's
#: threads show gaps of several GiB on 24-80 GB cards.
FRAGMENTED_SHARE = 0.10

_BOILERPLATE = re.compile(
    r"If reserved (?:but unallocated )?memory is (?:>>|large)[^.]*?(?:fragmentation|expandable_segments:True)\.?|"
    r"See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\.?|"
    r"(?:Including non-PyTorch memory, )?this process has [\d.]+ \w+ memory in use\.?|"
    r"Of the allocated memory [\d.]+ \w+ is allocated by PyTorch, and [\d.]+ \w+ is reserved by PyTorch but "
    r"unallocated\.?|"
    r"Process \d+ has [\d.]+ \w+ memory in use\.?|"
    r"# Calls into the C\+\+ engine to run the backward pass",
    re.I,
)
_FRAME = re.compile(
    r"^\s*(?:File \"[^\"]*\", line \d+|Traceback \(most recent call last\)|\^+\s*$|~+\s*$|"
    r"During handling of the above exception|The above exception was the direct cause)"
)
# A code line from a stack frame: indented or starting with a dotted call, ending in an open call or an assignment.
_CODE = re.compile(r"^\s*(?:return |raise |[\w.]+\s*=\s*)?[A-Za-z_][\w]*(?:\.[\w]+)+\(.*$")
# Sizes printed by a library ("508.00 MiB", "23.65 GiB") and addresses; not the user's "80G" or "batch_size=1".
_FIGURE = re.compile(r"(?<![\w.])\d+\.\d+\s*[KMGT]iB\b|(?<![\w.])\d+\s*(?:[KMGT]iB|bytes)\b|\b0x[0-9a-f]{6,}\b", re.I)
# Everything a CUDA OOM message prints after "Tried to allocate": figures and advice, printed for every OOM.
_OOM_TAIL = re.compile(r"(out of memory\.?\s*Tried to allocate)\b.*$", re.I)
_OOM_FIGURES = re.compile(
    r"([\d.]+)\s*GiB total capacity;\s*([\d.]+)\s*GiB already allocated;.*?([\d.]+)\s*GiB reserved in total", re.I
)
_OOM_FIGURES_NEW = re.compile(
    r"total capac\w* of ([\d.]+)\s*GiB.*?([\d.]+)\s*(GiB|MiB) is reserved by PyTorch but unallocated", re.I | re.S
)
_OOM_CONT = re.compile(
    r"total capac|already allocated|reserved in total|max_split_size_mb|PYTORCH_CUDA_ALLOC_CONF|"
    r"memory in use|allocated by PyTorch|reserved by PyTorch|unallocated|avoid fragmentation|"
    r"Memory Management"
)
# A launch command as users paste it (env assignments first, then the launcher).
_COMMAND = re.compile(
    r"^\s*(?:(?:nohup|sudo|time|srun|exec)\s+|(?:export\s+)?[A-Z_][A-Z0-9_]*=\S+\s+)*"
    r"(?:torchrun|deepspeed|accelerate launch|python3?|llamafactory-cli|swift|tune run|bash|sh)\b"
)
# A continuation line of a multi-line command: a flag first (``--cutoff_len 4096 \``).
_CONTINUATION = re.compile(r"^\s*--?[A-Za-z][\w.-]*(?:[=\s]|$)")
_COMMAND_MARK = re.compile(r"\s--?[A-Za-z]|\.py\b|\.ya?ml\b|\.sh\b")
_COMMAND_VALUE = re.compile(r"[/\\$]|^[\d.,:e+-]+$|=\S*[\d/]")
_ERROR = re.compile(r"(?:Error|Exception)\b|out of memory|RESOURCE_EXHAUSTED|Killed\b", re.I)
FRAGMENTED_WORDS = "memory fragmentation: reserved but unallocated memory is large"


def fragmented(text: str) -> bool:
    """Whether a CUDA OOM message in ``text`` shows a large reserved-but-unallocated gap (see :data:`FRAGMENTED_SHARE`)."""
    for m in _OOM_FIGURES.finditer(text):
        total, allocated, reserved = (float(x) for x in m.groups())
        if total > 0 and (reserved - allocated) / total >= FRAGMENTED_SHARE:
            return True
    for m in _OOM_FIGURES_NEW.finditer(text):
        total, gap, unit = float(m.group(1)), float(m.group(2)), m.group(3)
        gap = gap / 1024 if unit.lower() == "mib" else gap
        if total > 0 and gap / total >= FRAGMENTED_SHARE:
            return True
    return False


def clean_query(text: str) -> str:
    """``text`` without library boilerplate, stack frames, repeated lines and figures (see the module docstring)."""
    frag = fragmented(text)
    out: list[str] = []
    seen: set[str] = set()
    in_oom = False
    for raw in text.splitlines():
        if in_oom and _OOM_CONT.search(raw):  # the OOM message wrapped over lines by the terminal
            continue
        in_oom = bool(_OOM_TAIL.search(raw))
        if _FRAME.search(raw) or _CODE.match(raw):
            continue
        line = _OOM_TAIL.sub(r"\1", raw)
        line = _BOILERPLATE.sub(" ", line)
        line = _FIGURE.sub(" ", line)
        line = re.sub(r"[ \t]+", " ", line).strip()
        key = re.sub(r"\W+", "", line.lower())[:80]
        if not key:
            continue
        if _ERROR.search(line):  # the key line of an error the prose already quotes: count it once
            if key in seen:
                continue
            seen.add(key)
        out.append(line)
    if frag:
        out.append(FRAGMENTED_WORDS)
    cleaned: list[str] = []
    in_command = goes_on = False
    for line in out:
        # a pasted launch command spans lines (``\`` continuations, one flag a line): every line of it is a command
        in_command = _is_command(line) or (in_command and (goes_on or bool(_CONTINUATION.search(line))))
        goes_on = continued(line)
        cleaned.append(_command_words(line) if in_command else _split_inline_command(line))
    return "\n".join(x for x in cleaned if x.strip(" \\"))


# A launch command pasted after a prose lead-in on the same line ("命令是：CUDA_VISIBLE_DEVICES=0,1 llamafactory-cli train
# x.yaml", "my command: torchrun ..."): from the launcher (or the env assignments before it) on, the line is a command.
_INLINE_COMMAND = re.compile(
    r"[:：]\s*(?P<cmd>(?:(?:nohup|sudo)\s+|(?:export\s+)?[A-Z_][A-Z0-9_]*=\S+\s+)*"
    r"(?:torchrun|deepspeed|accelerate launch|python3?|llamafactory-cli|swift|tune run|bash|sh)\b.*)$"
)


def _split_inline_command(line: str) -> str:
    """``line`` with a launch command that follows a prose lead-in reduced to its words (see :func:`_command_words`)."""
    m = _INLINE_COMMAND.search(line)
    if not m or not _COMMAND_MARK.search(m.group("cmd")):
        return line
    return (line[: m.start("cmd")] + _command_words(m.group("cmd"))).rstrip()


def _is_command(line: str) -> bool:
    """A launcher word first and something only a command has (a flag, a script or a config file)."""
    return bool(_COMMAND.match(line) and _COMMAND_MARK.search(line))


# A script or config file given by its path in a command (``src/open_r1/grpo_text.py``, ``examples/train_lora/
# llama3_lora_sft.yaml``): the name after the last separator, without ``$VARS``.
_SCRIPT_PATH = re.compile(r"""(?:^|[/\\=])([A-Za-z][\w.-]*\.(?:py|sh|ya?ml|json))["']?$""")


def _names_a_method(file_name: str) -> bool:
    """Whether the words of a script or config file's name name a mechanism or method the glossary knows
    (``grpo_text.py``, ``llama3_lora_sft.yaml``), not only generic words (``train_bash.py``, ``ds_config.json``)."""
    from .evidence import named_concepts  # evidence imports the glossary and the cards; only needed here
    from .glossary import file_name_words

    return bool(named_concepts(file_name_words(file_name)))


def _command_words(line: str) -> str:
    """A launch command without its values: paths, numbers, ``$VARS`` and ``--key=<number or path>`` go, flag names
    and word values (``--finetuning_type lora``, ``--deepspeed``, ``--bf16``) stay."""
    out: list[str] = []
    redirect = False
    for tok in line.split():
        if redirect or tok in ("\\", "&", "|") or tok.startswith(("2>", "1>")):
            redirect = False
            continue
        if tok in (">", ">>", "tee"):  # a log file the output goes to: its name is the user's, not the problem's
            redirect = True
            continue
        if not _COMMAND_VALUE.search(tok):
            out.append(tok)
        elif (m := _SCRIPT_PATH.search(tok)) and _names_a_method(m.group(1)):
            out.append(m.group(1))  # the file's own name names the method (grpo_text.py, llama3_lora_sft.yaml)
    return " ".join(out)


_CJK_WORDS = re.compile(r"[\u3400-\u9fff]{2,}")
_EN_WORD = re.compile(r"\b[A-Za-z][a-z]+\b")
_CONFIG_LINE = re.compile(
    r"""^\s*(?:--?[A-Za-z]|["']?[A-Za-z0-9_.\-]+["']?\s*[:=]\s*\S|[{}\[\]]|#{2,}|\[?\d{4}-\d\d-\d\d|\|)"""
)


def prose_only(text: str) -> str:
    """The lines of a cleaned query a person wrote: Chinese sentences, or English lines of several words that are not a
    config entry (``key: value``, ``"key": value``, ``--flag``), a log line (a timestamp first) or a table row.

    Why: users paste whole configs and launch commands; their keys (``per_device_train_batch_size``,
    ``gradient_accumulation_steps``, ``deepspeed``) are in most cards, so on a long paste they outweigh the one
    sentence that says what went wrong ("加载数据时候直接被kill"). The retriever ranks the cards a second time on
    these lines alone (:mod:`rag.retrieval`). Error lines (``ValueError: ...``) say what happened and stay."""
    keep = []
    for line in text.splitlines():
        if _ERROR.search(line) and not _is_command(line):
            keep.append(line)
            continue
        if _CONFIG_LINE.match(line) or _is_command(line):
            continue
        line = _before_flags(line)
        if _CJK_WORDS.search(line) or len(_EN_WORD.findall(line)) >= 4:
            keep.append(line)
    return "\n".join(keep)


#: A command-line flag (``--model_name_or_path``, ``--fp16``) standing as its own word.
_FLAG = re.compile(r"(?<!\S)--[A-Za-z][\w.-]*")


def _before_flags(line: str) -> str:
    """``line`` up to a launch command pasted inside a sentence ("如果设置fp16: true,llamafactory-cli train --stage sft
    --do_train ..."): from the first of two or more ``--flags`` on the line, the rest is a command, not prose, and its
    flag names (in most batch cards) would outvote the sentence, as a whole pasted command would."""
    flags = list(_FLAG.finditer(line))
    if len(flags) < 2:
        return line
    return line[: flags[0].start()].rstrip()


__all__ = ["clean_query", "prose_only", "fragmented", "FRAGMENTED_SHARE", "FRAGMENTED_WORDS"]
