"""Literal pieces a regex cannot match without, so that a substring test can rule out a regex scan.

Why: the setup reader tries dozens of regexes on every message (``rag.slots``); most of them name a word the
message does not contain ("offload", "梯度累积", "micro_batch"). ``x in text`` is a C loop with no backtracking,
so testing for such a word first and scanning only when it is there saves the regex's time on every message
while the regex still decides whenever it runs.

:func:`required_literals` reads the pattern as Python's own regex parser does and returns strings one of which
every match contains, or ``None`` when it finds none it can vouch for (an optional part, a class, a look-around,
a scoped flag: anything it does not understand counts as "could be anything"). For a case-insensitive pattern the
strings, and the text tested, are folded with :func:`fold_case`.
"""

from __future__ import annotations

import importlib
import re
from functools import lru_cache
from typing import Any

#: The parser ``re.compile`` itself uses (``re._parser`` since Python 3.11; typeshed has no stubs for it).
sre_parse: Any = importlib.import_module("re._parser")

#: Characters outside ASCII that a case-insensitive regex matches to an ASCII letter (Kelvin sign, long s, dotted
#: and dotless i), folded to that letter before ``lower()``; ``tests/test_perf5_units.py`` checks the list against
#: every code point.
_ASCII_CASE_PARTNERS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})

_REPEATS = (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, sre_parse.POSSESSIVE_REPEAT)

Literals = frozenset[str]


def fold_case(text: str) -> str:
    """``text`` lower-cased so that whatever a case-insensitive regex matches contains the folded literal."""
    return text.translate(_ASCII_CASE_PARTNERS).lower()


@lru_cache(maxsize=16)
def folded(text: str) -> str:
    """:func:`fold_case`, kept for the few texts in flight (the same message is tested by many patterns)."""
    return fold_case(text)


def _better(a: Literals | None, b: Literals | None) -> Literals | None:
    """The more selective of two constraints: longer shortest string, then fewer alternatives."""
    if a is None:
        return b
    if b is None:
        return a
    return a if (min(map(len, a)), -len(a)) >= (min(map(len, b)), -len(b)) else b


def _sequence(items: Any) -> Literals | None:
    """A sequence matches only if each of its items does: any one item's constraint holds for the whole."""
    best: Literals | None = None
    run: list[str] = []
    for op, av in items:
        if op is sre_parse.LITERAL:
            run.append(chr(av))
            continue
        if run:
            best = _better(best, frozenset(["".join(run)]))
            run = []
        best = _better(best, _item(op, av))
    if run:
        best = _better(best, frozenset(["".join(run)]))
    return best


def _item(op: Any, av: Any) -> Literals | None:
    if op is sre_parse.SUBPATTERN:
        _group, add_flags, del_flags, sub = av
        return None if add_flags or del_flags else _sequence(sub)
    if op is sre_parse.ATOMIC_GROUP:
        return _sequence(av)
    if op is sre_parse.BRANCH:
        alternatives = [_sequence(alt) for alt in av[1]]
        if any(a is None for a in alternatives):
            return None
        return frozenset().union(*[a for a in alternatives if a is not None])
    if op in _REPEATS:
        low, _high, sub = av
        return _sequence(sub) if low >= 1 else None
    if op is sre_parse.IN and av and all(o is sre_parse.LITERAL for o, _ in av):
        return frozenset(chr(c) for _, c in av)
    return None  # anchors, classes, "any", look-arounds, back-references: no literal to vouch for


@lru_cache(maxsize=4096)
def required_literals(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """Strings one of which every match of ``pattern`` contains (folded if it ignores case), or ``None``."""
    found = _sequence(sre_parse.parse(pattern.pattern, pattern.flags))
    if found is None or "" in found:
        return None
    if pattern.flags & re.IGNORECASE:
        found = frozenset(fold_case(s) for s in found)
    return tuple(sorted(found))


def could_match(pattern: re.Pattern[str], text: str) -> bool:
    """False only when ``pattern`` cannot match anywhere in ``text`` (a piece it needs is absent)."""
    needles = required_literals(pattern)
    if needles is None:
        return True
    haystack = folded(text) if pattern.flags & re.IGNORECASE else text
    return any(n in haystack for n in needles)


__all__ = ["could_match", "fold_case", "required_literals"]
