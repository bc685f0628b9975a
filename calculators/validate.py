"""Input checks shared by every calculator: one place that turns a bad value into a clear refusal."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

from .errors import CalculatorError


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"  # numpy.bool_ too


def _not_a_number(
    field: str, value: Any, accepted_en: str, accepted_zh: str, kind_en: str, kind_zh: str
) -> CalculatorError:
    return CalculatorError(
        field,
        value,
        accepted_en,
        accepted_zh,
        reason_en=f"'{field}' must be {kind_en}, got {type(value).__name__} {value!r:.60}.",
        reason_zh=f"'{field}' 必须是{kind_zh}，收到 {type(value).__name__} {value!r:.60}。",
    )


def positive_int(field: str, value: Any, *, maximum: int, minimum: int = 1) -> int:
    """``value`` as an int in ``[minimum, maximum]``; integral floats (``4.0``) are accepted, bools and 7.5 are not."""
    top = f"{maximum:,}" if maximum >= 100_000 else str(maximum)
    accepted_en = f"a whole number from {minimum} to {top}"
    accepted_zh = f"{minimum} 到 {top} 之间的整数"
    if _is_bool(value) or not isinstance(value, Real):
        raise _not_a_number(field, value, accepted_en, accepted_zh, "a whole number", "整数")
    if not isinstance(value, Integral):
        v = as_float(value)
        if not math.isfinite(v) or not v.is_integer():
            raise _not_a_number(field, value, accepted_en, accepted_zh, "a whole number", "整数")
        value = int(v)
    whole = int(value)
    if not minimum <= whole <= maximum:
        raise CalculatorError(field, whole, accepted_en, accepted_zh)
    return whole


def positive_float(field: str, value: Any, *, maximum: float, minimum_exclusive: float = 0.0) -> float:
    """A finite number in ``(minimum_exclusive, maximum]``."""
    accepted_en = f"a number greater than {minimum_exclusive:g} and at most {maximum:g}"
    accepted_zh = f"大于 {minimum_exclusive:g} 且不超过 {maximum:g} 的数"
    if _is_bool(value) or not isinstance(value, Real):
        raise _not_a_number(field, value, accepted_en, accepted_zh, "a number", "数字")
    v = as_float(value)
    if not math.isfinite(v) or not minimum_exclusive < v <= maximum:
        raise CalculatorError(field, value, accepted_en, accepted_zh)
    return v


def as_float(value: Real) -> float:
    """float(value), with ints too large for a float (10**400) mapped to inf instead of raising OverflowError."""
    try:
        return float(value)
    except OverflowError:
        return -math.inf if value < 0 else math.inf  # only huge ints and Fractions overflow a float


def flag(field: str, value: Any) -> bool:
    """A real bool (not 0/1, not "true")."""
    if not isinstance(value, bool):
        raise CalculatorError(field, value, "True or False", "True 或 False")
    return value
