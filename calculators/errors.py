"""Errors raised by the calculators.

Every refusal names the field, the bad value and what is accepted, in English
and Chinese, because the same message is shown to Python callers, to the chat
and next to a form field in the app. The bad value is echoed clipped to about
80 characters, so an error never grows with a hostile input.
"""

from __future__ import annotations

from typing import Any

from .lang import Lang
from .text_safety import ECHO_LIMIT, clip

#: Backstop for any one message part: a refusal must never grow with the input (a 10 MB GPU name
#: used to come back as a 20 MB error).
MAX_MESSAGE_PART = 2000


def _clip_echo(text: str, value: Any) -> str:
    """``text`` with long copies of the user's ``value`` clipped to :data:`ECHO_LIMIT` characters."""
    for echoed in {repr(value), str(value)}:
        if len(echoed) > ECHO_LIMIT and echoed in text:
            text = text.replace(echoed, clip(echoed))
    return text if len(text) <= MAX_MESSAGE_PART else text[: MAX_MESSAGE_PART - 1] + "…"


class CalculatorError(ValueError):
    """A calculator input was rejected.

    ``str(err)`` gives the English text followed by the Chinese one;
    ``err.message(lang)`` gives one language only.
    """

    def __init__(
        self,
        field: str,
        value: Any,
        accepted_en: str,
        accepted_zh: str | None = None,
        *,
        reason_en: str | None = None,
        reason_zh: str | None = None,
    ) -> None:
        self.field = field
        self.value = value
        self.accepted_en = _clip_echo(accepted_en, value)
        self.accepted_zh = _clip_echo(accepted_zh or accepted_en, value)
        shown = clip(repr(value))
        self.en = (
            _clip_echo(reason_en or f"Invalid value {shown} for '{field}'.", value) + f" Accepted: {self.accepted_en}."
        )
        self.zh = (
            _clip_echo(reason_zh or f"字段 '{field}' 的取值 {shown} 无效。", value) + f"可接受：{self.accepted_zh}。"
        )
        super().__init__(f"{self.en}\n{self.zh}")

    def message(self, lang: Lang = "en") -> str:
        """The message in one language ('zh' or 'en')."""
        return self.zh if lang == "zh" else self.en
