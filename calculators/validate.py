"""Input checks shared by every calculator: one place that turns a bad number into a clear refusal."""
from __future__ import annotations

import math
from typing import Any

from .errors import CalculatorError


def positive_int(field: str, value: Any, *, maximum: int, minimum: int = 1) -> int:
    """``value`` as an int in ``[minimum, maximum]``; integral floats (``4.0``) are accepted, bools are not."""
    accepted_en = f"an integer from {minimum} to {maximum:,}"
    accepted_zh = f"{minimum} 到 {maximum:,} 之间的整数"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CalculatorError(field, value, accepted_en, accepted_zh)
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise CalculatorError(field, value, accepted_en, accepted_zh)
        value = int(value)
    if not minimum <= value <= maximum:
        raise CalculatorError(field, value, accepted_en, accepted_zh)
    return value


def positive_float(field: str, value: Any, *, maximum: float, minimum_exclusive: float = 0.0) -> float:
    """A finite float in ``(minimum_exclusive, maximum]``."""
    accepted_en = f"a number greater than {minimum_exclusive:g} and at most {maximum:g}"
    accepted_zh = f"大于 {minimum_exclusive:g} 且不超过 {maximum:g} 的数"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CalculatorError(field, value, accepted_en, accepted_zh)
    value = float(value)
    if not math.isfinite(value) or not minimum_exclusive < value <= maximum:
        raise CalculatorError(field, value, accepted_en, accepted_zh)
    return value
