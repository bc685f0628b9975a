"""Bytes as GiB, written one way everywhere (chat, calculators tab, config doctor, diagnosis, plots' labels).

Why one function: the chat said "14.2 GiB" where the calculators tab said "14.23 GiB" for the same estimate. The rule
is three significant figures for ordinary sizes: two decimals below 10 GiB (0.02 GiB, 1.24 GiB, 9.87 GiB), one from
10 GiB up (14.2 GiB, 79.2 GiB, 1,024.0 GiB), thousands separated.
"""

from __future__ import annotations

GiB = 2**30


def gib_number(nbytes: float | None, unknown: str = "?") -> str:
    """``nbytes`` in GiB without the unit (for tables whose header says GiB); ``unknown`` for None."""
    if nbytes is None:
        return unknown
    return _digits(nbytes / GiB)


def format_gib(nbytes: float | None, unknown: str = "—") -> str:
    """``nbytes`` as "14.2 GiB" / "1.24 GiB"; ``unknown`` for None."""
    if nbytes is None:
        return unknown
    return f"{_digits(nbytes / GiB)} GiB"


def format_gib_value(gib: float) -> str:
    """A size already in GiB (read from a pasted message), written like :func:`format_gib`."""
    return f"{_digits(gib)} GiB"


def gib_value_number(gib: float) -> str:
    """A size already in GiB (a chart's value), without the unit, written like :func:`gib_number`."""
    return _digits(gib)


def _digits(value: float) -> str:
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.2f}"
