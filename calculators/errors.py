"""Errors raised by the calculators.

Every refusal names the field, the bad value and what is accepted, in English
and Chinese, because the same message is shown to Python callers, to the chat
and next to a form field in the app.
"""
from __future__ import annotations

from typing import Any


class CalculatorError(ValueError):
    """A calculator input was rejected.

    ``str(err)`` gives the English text followed by the Chinese one;
    ``err.message(lang)`` gives one language only.
    """

    def __init__(self, field: str, value: Any, accepted_en: str, accepted_zh: str | None = None,
                 *, reason_en: str | None = None, reason_zh: str | None = None) -> None:
        self.field = field
        self.value = value
        self.accepted_en = accepted_en
        self.accepted_zh = accepted_zh or accepted_en
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        self.en = (reason_en or f"Invalid value {shown} for '{field}'.") + f" Accepted: {self.accepted_en}."
        self.zh = (reason_zh or f"字段 '{field}' 的取值 {shown} 无效。") + f"可接受：{self.accepted_zh}。"
        super().__init__(f"{self.en}\n{self.zh}")

    def message(self, lang: str = "en") -> str:
        """The message in one language ('zh' or 'en')."""
        return self.zh if lang == "zh" else self.en
