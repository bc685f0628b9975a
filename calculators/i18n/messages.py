"""The calculators' and the config doctor's own sentences (calculators/), in Chinese and English: one area of the one
catalogue (calculators.i18n), looked up with ``t("key", lang, **values)``.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {}
