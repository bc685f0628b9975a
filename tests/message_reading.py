"""What the citing and opening tests read of a message: its asked question and its setup, as the assistant reads them
(rag.parts → rag.setup, rag.opening). One helper for the test modules that check citing gates on message shapes."""

from __future__ import annotations

from rag.opening import AskedQuestion, read_asked
from rag.parts import split_message
from rag.setup import Setup, read_setup


def read_message(text: str) -> tuple[AskedQuestion, Setup]:
    """The asked question and the setup of ``text``."""
    parts = split_message(text)
    setup, _ = read_setup(parts)
    return read_asked(text, parts), setup
