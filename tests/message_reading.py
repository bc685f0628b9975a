"""What the tests read of a message: its asked question and its setup, as the assistant reads them (rag.parts →
rag.setup, rag.opening). One place for the helpers the reader and citing-gate test modules share."""

from __future__ import annotations

from rag.opening import AskedQuestion, read_asked
from rag.parts import split_message
from rag.setup import Setup, read_setup


def read_message(text: str) -> tuple[AskedQuestion, Setup]:
    """The asked question and the setup of ``text``."""
    parts = split_message(text)
    setup, _ = read_setup(parts)
    return read_asked(text, parts), setup


def setup_of(text: str) -> Setup:
    """The setup the assistant reads from ``text`` (values with their provenance and conflicts)."""
    return read_setup(split_message(text))[0]


def setup_values(text: str) -> dict[str, object]:
    """The values of :func:`setup_of`, without their provenance."""
    return {k: v.value for k, v in setup_of(text).values.items()}


def setup_conflicts(text: str) -> dict[str, list[object]]:
    """The other values the setup keeps per key (another run's, a config's), as plain values."""
    return {k: [c.value for c in v] for k, v in setup_of(text).conflicts.items()}
