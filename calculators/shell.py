"""How a pasted shell (or Windows cmd) launch spreads over lines: one place for the readers of commands.

The message splitter (``rag.parts``), the retrieval query cleaner (``rag.query_clean``), the launch-command reader
(``calculators.diagnose.launch``) and the config doctor's flag parser (``calculators.configs.text``) all need to know
when a command goes on in the next line and which lines export a variable to the commands after them. The line a
launched process prints of its rank (Lightning's) is here too: the setup reader (``rag.slots``) takes the world size
from it and the launch reader diagnoses a rank printed twice, so both read one wording.
"""

from __future__ import annotations

import re

_EXPORT = r"^\s*(?:export|set)\s+([A-Z_][A-Z0-9_]*)=(\S*)"
#: A variable exported on a line of its own for the commands after it: `export CUDA_VISIBLE_DEVICES=0,1,2,3`
#: (Windows cmd: `set …`); groups: the name, the value.
EXPORT_LINE = re.compile(_EXPORT + r"\s*$")
_EXPORT_BEFORE_COMMAND = re.compile(_EXPORT + r"\s*\n", re.M)
#: A shell variable set on a line of its own without `export` (`CUDA_VISIBLE_DEVICES=0,1,2,3` above `deepspeed
#: --include localhost:$CUDA_VISIBLE_DEVICES`, LLaMA-Factory #2374): the shell still expands it in later lines.
SHELL_ASSIGNMENT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)=(\S+)\s*$")


def assignment(line: str) -> tuple[str, str | None, bool] | None:
    """What a line of its own sets: the variable, its value without quotes (None for `export NAME=`) and whether it
    is exported; None for any other line."""
    if m := EXPORT_LINE.match(line):
        return m.group(1), m.group(2).strip("\"'") if m.group(2) else None, True
    if m := SHELL_ASSIGNMENT.match(line):
        return m.group(1), m.group(2).strip("\"'"), False
    return None


def shell_variables(text: str) -> dict[str, str]:
    """The variables lines of their own set in ``text`` (``NAME=value`` or ``export NAME=value``), the last wins."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if (a := assignment(line)) is not None and a[1] is not None:
            out[a[0]] = a[1]
    return out


#: Lightning's line per process (lightning/fabric/utilities/distributed.py, _init_dist_connection: "Initializing
#: distributed: GLOBAL_RANK: {rank}, MEMBER: {rank + 1}/{world_size}"; "initializing ddp: …" before 1.6); groups: the
#: global rank, the world size.
LIGHTNING_RANK = re.compile(
    r"initializing (?:ddp|distributed):\s*GLOBAL_RANK:\s*(\d{1,5}),\s*MEMBER:\s*\d{1,5}/(\d{1,5})", re.I
)


def continued(line: str) -> bool:
    """A command line that goes on in the next: a shell's trailing backslash, or Windows cmd's " ^"."""
    end = line.rstrip()
    return end.endswith("\\") or end.endswith(" ^")


def exports_as_assignments(text: str) -> str:
    """``text`` with each exported variable's line turned into an assignment in front of what follows it
    (`export A=1` / `python t.py` → `A=1 python t.py`), the form a command line's own environment takes."""
    return _EXPORT_BEFORE_COMMAND.sub(r"\1=\2 ", text)
