"""Make user-supplied text safe to put inside Markdown that the API returns.

Every Markdown string we return (answers, doctor reports, diagnoses, fact checks) may be rendered
by someone else's renderer — a wiki, an API client — that does not sanitise HTML. A key or value
copied from the user's input (``<img src=x onerror=…>``, ``[x](javascript:…)``) must therefore
arrive as inert text: HTML-escaped, Markdown-escaped, on one line, and short.
"""

from __future__ import annotations

import re
from typing import Any

#: How much of a user's value is echoed back in a message (the issue's "~80 characters").
ECHO_LIMIT = 80

_MD_SPECIAL = re.compile(r"([\\`*_\[\]()#|!~])")
_SCHEME = re.compile(r"(?i)\b(javascript|vbscript|data|file)\s*:")


def clip(value: Any, limit: int = ECHO_LIMIT) -> str:
    """``value`` as one line of at most ``limit`` characters (``…`` marks a cut)."""
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def escape_md(value: Any, limit: int = ECHO_LIMIT) -> str:
    """User text as inert Markdown: clipped, ``< > &`` as entities, Markdown syntax escaped, no URL schemes."""
    text = clip(value, limit)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return _SCHEME.sub(lambda m: m.group(1) + "&#58;", text)


def code_span_text(value: Any, limit: int = ECHO_LIMIT) -> str:
    """User text for inside a Markdown code span: clipped, one line, no backticks, ``< >`` as look-alikes.

    Markdown shows code spans literally (backslash escapes would appear as backslashes), so this keeps the
    text readable while staying inert in renderers that mishandle code spans.
    """
    text = clip(value, limit).replace("`", "'").replace("<", "‹").replace(">", "›")
    return _SCHEME.sub(lambda m: m.group(1) + "\u02d0", text)
