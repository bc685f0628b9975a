"""Small shared helpers for the readers: sizes in PyTorch's units, flexible whitespace, safe echoes."""

from __future__ import annotations

import re

from ..text_safety import escape_md
from ..units import format_gib_value

#: A size as PyTorch's allocator prints it ("20.00 MiB", "0 bytes", "1.5 GiB").
SIZE = r"(\d{1,12}(?:\.\d{1,6})?)\s*(bytes|B|KiB|MiB|GiB|TiB|KB|MB|GB)\b"
_UNIT_GIB = {
    "bytes": 2**-30,
    "B": 2**-30,
    "KiB": 2**-20,
    "KB": 2**-20,
    "MiB": 2**-10,
    "MB": 2**-10,
    "GiB": 1.0,
    "GB": 1.0,
    "TiB": 1024.0,
}


def gib(number: str, unit: str) -> float:
    """A (number, unit) pair from :data:`SIZE` in GiB."""
    return float(number) * _UNIT_GIB[unit]


def fmt_gib(value: float) -> str:
    """GiB with a sensible number of decimals (0.02 GiB, 1.24 GiB, 79.2 GiB)."""
    return format_gib_value(value)


def flex(pattern: str) -> re.Pattern[str]:
    """A pattern in which each literal space also matches line breaks and indentation (wrapped pastes)."""
    return re.compile(pattern.replace(" ", r"\s*"), re.IGNORECASE)


def line_at(text: str, pos: int, limit: int = 240) -> str:
    """The line containing ``pos`` (stripped, clipped to ``limit``)."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    return text[start:end].strip()[:limit]


def safe(value: object, limit: int = 60) -> str:
    """User-supplied text to embed in a cause: escaped for Markdown and clipped."""
    return escape_md(value, limit)
