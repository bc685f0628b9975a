"""Which language to answer in: the one detector lives in calculators.lang (shared with the fact check and the UI)."""

from __future__ import annotations

from calculators.lang import detect_language

__all__ = ["detect_language"]
