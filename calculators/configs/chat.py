"""Spotting a pasted config in a chat message (``extract_config_text``, ``looks_like_config``)."""

from __future__ import annotations

import re

from .keys import _STRONG_KEYS, DETECT_KEYS
from .models import MAX_TEXT
from .text import _FENCE

_YAML_LINE = re.compile(r"^\s*([A-Za-z_][\w.-]*)\s*:(\s|$)")
_FLAG = re.compile(r"--([A-Za-z_][\w-]*)")


def _has_keys(text: str, need: int = 2) -> bool:
    found = set(re.findall(r'"([A-Za-z_][\w.]*)"\s*:', text))
    found |= {m.group(1) for line in text.splitlines() if (m := _YAML_LINE.match(line))}
    found |= {f.replace("-", "_") for f in _FLAG.findall(text)}
    strong = found & _STRONG_KEYS
    return bool(strong) and len(found & DETECT_KEYS) >= min(need, 2) or len(strong) >= 2


def extract_config_text(message: str) -> str | None:
    """The config pasted in a chat message (fenced block, JSON object, launch command or YAML), or None."""
    if not isinstance(message, str) or not message.strip():
        return None
    message = message[:MAX_TEXT]
    for m in _FENCE.finditer(message):
        body = m.group(2)
        if _has_keys(body, need=1):
            return body.strip()
    start = message.find("{")
    end = message.rfind("}")
    if 0 <= start < end:
        cand = message[start : end + 1]
        if _has_keys(cand, need=1):
            return cand
    lines = message.splitlines()
    for i, line in enumerate(lines):
        if re.search(
            r"(^|\s)(torchrun|deepspeed|accelerate\s+launch|python3?|llamafactory-cli)\s", line + " "
        ) or line.strip().startswith("--"):
            block = [line]
            j = i
            while block[-1].rstrip().endswith("\\") and j + 1 < len(lines):
                j += 1
                block.append(lines[j])
            cand = "\n".join(block)
            if len(_FLAG.findall(cand)) and _has_keys(cand, need=1):
                return cand.strip()
    run: list[str] = []
    best: list[str] = []
    for line in lines + [""]:
        if _YAML_LINE.match(line) or (
            run
            and (
                line.startswith((" ", "\t"))
                or not line.strip()
                or line.lstrip().startswith("#")
                or line.lstrip().startswith("- ")
            )
        ):
            run.append(line)
        else:
            if len(run) > len(best):
                best = run
            run = []
    if len(run) > len(best):
        best = run
    while best and (not best[-1].strip() or best[-1].lstrip().startswith("#")):
        best.pop()
    if best and _has_keys("\n".join(best), need=2):
        return "\n".join(best).strip()
    return None


def looks_like_config(text: str) -> bool:
    """True when ``text`` contains a training config worth checking."""
    return extract_config_text(text) is not None
