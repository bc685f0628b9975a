"""YAML from untrusted users, parsed without the ways one request can take a server down.

PyYAML's ``safe_load`` still expands aliases: a 600-character "billion laughs" document
(``a: &a [x, x, …]``, ``b: &b [*a, *a, …]`` …) becomes hundreds of millions of nodes, gigabytes
of memory and minutes of CPU once anything walks or serialises the result. Training configs
(DeepSpeed, Accelerate, LLaMA-Factory) never need anchors, so this loader refuses every alias,
and caps the number of nodes and the nesting depth while composing, before anything is built.
"""

from __future__ import annotations

from typing import Any

import yaml

#: More nodes than any real training config has (LLaMA-Factory's largest examples have < 200).
MAX_NODES = 20_000
#: Deeper nesting than any real config (DeepSpeed's deepest is 3-4 levels).
MAX_DEPTH = 64


class UnsafeYAMLError(yaml.YAMLError):
    """The document uses a feature refused for untrusted input (alias, too many nodes, too deep)."""

    def __init__(self, problem: str, problem_zh: str, mark: Any = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_zh = problem_zh
        self.problem_mark = mark
        self.context_mark = None

    def __str__(self) -> str:
        return self.problem


class _GuardedLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases and counts nodes and depth as it composes."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._nodes = 0
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D401 - PyYAML hook
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise UnsafeYAMLError(
                "YAML aliases (*name) are not accepted here", "这里不接受 YAML 别名（*name）", event.start_mark
            )
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise UnsafeYAMLError(
                f"the YAML has more than {MAX_NODES:,} values",
                f"YAML 中的值超过 {MAX_NODES:,} 个",
                self.peek_event().start_mark,
            )
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise UnsafeYAMLError(
                f"the YAML is nested deeper than {MAX_DEPTH} levels",
                f"YAML 嵌套超过 {MAX_DEPTH} 层",
                self.peek_event().start_mark,
            )
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load(text: str) -> Any:
    """``yaml.safe_load`` for untrusted text: no aliases, bounded size. Raises ``yaml.YAMLError``."""
    loader = _GuardedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def compose(text: str) -> Any:
    """``yaml.compose`` (nodes with line/column marks) under the same guards."""
    loader = _GuardedLoader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()
