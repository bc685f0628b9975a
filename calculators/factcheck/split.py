"""Split a pasted answer (Markdown, Chinese or English) into claims: bullets and sentences with their spans.

A bullet is one claim unit (its sentences often lean on its heading, e.g. "有效批次过大：… 这会导致 OOM");
prose is split into sentences. Headings, code fences and very short fragments are not claims.
"""

from __future__ import annotations

import re

_BULLET = re.compile(r"^\s*(?:[•·\-*+]|\d{1,2}[.)、]|[（(]\d{1,2}[)）])\s+")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s|\*\*[^*]{0,40}\*\*\s*[:：]?\s*$)")
# A sentence ends at 。！？ or at . ! ? followed by whitespace (not inside "2.5" or "e.g.").
_SENT_END = re.compile(r"[。！？；]|(?<!e\.g)(?<!i\.e)[.!?](?=\s|$)")
_MIN_CHARS = 6


def _sentences(text: str, base: int) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    start = 0
    for m in _SENT_END.finditer(text):
        out.append((text[start : m.end()], start, m.end()))
        start = m.end()
    if start < len(text):
        out.append((text[start:], start, len(text)))
    res = []
    for s, a, _b in out:
        stripped = s.strip()
        if len(stripped) >= _MIN_CHARS:
            lead = len(s) - len(s.lstrip())
            res.append((stripped, base + a + lead, base + a + lead + len(stripped)))
    return res


def split_units(text: str) -> list[tuple[str, int, int]]:
    """Claim units ``(text, start, end)``: each bullet whole, each prose sentence alone."""
    units: list[tuple[str, int, int]] = []
    pos = 0
    in_fence = False
    for line in text.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        body = line.rstrip("\r\n")
        if body.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence or not body.strip() or _HEADING.match(body):
            continue
        m = _BULLET.match(body)
        if m:
            content = body[m.end() :].strip()
            if len(content) >= _MIN_CHARS:
                a = start + body.index(content)
                units.append((content, a, a + len(content)))
            continue
        units.extend(_sentences(body, start))
    return units


def sentences_of(unit: str) -> list[tuple[str, int, int]]:
    """Sentences inside one unit, offsets relative to the unit."""
    return _sentences(unit, 0) or [(unit, 0, len(unit))]
