"""One GiB formatter: the chat, the calculators tab, the config doctor and the diagnosis write the same figure."""
from __future__ import annotations

import pytest

from calculators.units import GiB, format_gib, format_gib_value, gib_number


@pytest.mark.parametrize(("nbytes", "text"), [
    (0.02 * GiB, "0.02 GiB"), (1.236 * GiB, "1.24 GiB"), (9.87 * GiB, "9.87 GiB"), (14.23 * GiB, "14.2 GiB"),
    (79.15 * GiB, "79.2 GiB"), (1024 * GiB, "1,024.0 GiB"), (0, "0.00 GiB")])
def test_three_significant_figures(nbytes: float, text: str) -> None:
    assert format_gib(nbytes) == text
    assert format_gib_value(nbytes / GiB) == text
    assert gib_number(nbytes) + " GiB" == text


def test_unknown() -> None:
    assert format_gib(None) == "—" and gib_number(None) == "?" and format_gib(None, unknown="unknown") == "unknown"


def test_the_chat_and_the_calculators_tab_agree() -> None:
    from rag.formatting import gib as chat_gib
    from ui.render import gib as tab_gib
    for nbytes in (0.5 * GiB, 14.23 * GiB, 123.456 * GiB):
        assert chat_gib(nbytes, "en") == tab_gib(nbytes) == chat_gib(nbytes, "zh") == format_gib(nbytes)


def test_the_diagnosis_uses_it() -> None:
    from calculators.diagnose._text import fmt_gib
    assert fmt_gib(14.23) == "14.2 GiB" and fmt_gib(1.236) == "1.24 GiB"
