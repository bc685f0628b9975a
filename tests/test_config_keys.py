"""The config doctor's key tables list each key once (a frozenset hides a repeat at run time, so read the source)."""

from __future__ import annotations

import ast
from pathlib import Path

import calculators.configs.keys as keys

SOURCE = Path(keys.__file__).read_text(encoding="utf-8")


def _tables() -> dict[str, list[str]]:
    """Each module-level key table: the string literals of its set/list/tuple, or the words of its "...".split()."""
    out: dict[str, list[str]] = {}
    for node in ast.parse(SOURCE).body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or not isinstance(node.value, ast.AST):
            continue
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        if not isinstance(target, ast.Name) or not target.id.isupper():
            continue
        names: list[str] = []
        for sub in ast.walk(node.value):
            if isinstance(sub, (ast.Set, ast.List, ast.Tuple)) and not isinstance(node.value, ast.Dict):
                names += [e.value for e in sub.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            elif (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr == "split"
                and isinstance(sub.func.value, ast.Constant)
            ):
                names += str(sub.func.value.value).split()
        if names:
            out[target.id] = names
    return out


def test_the_tables_are_read() -> None:
    tables = _tables()
    assert {"DS_TOP_KEYS", "DS_ZERO_KEYS", "HF_KEYS", "LF_KEYS", "ACC_KEYS", "ACC_DS_KEYS"} <= set(tables)
    assert len(tables["LF_KEYS"]) > 150 and len(tables["ACC_KEYS"]) > 10


def test_no_table_lists_a_key_twice() -> None:
    for name, names in _tables().items():
        repeated = sorted({n for n in names if names.count(n) > 1})
        assert not repeated, f"{name} lists {repeated} more than once"
