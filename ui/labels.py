"""A registry of translatable component properties, so one language switch relabels the whole UI."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import gradio as gr

from .i18n import t

#: Any component or layout block (gr.Textbox, gr.Tab…): add() hands back what it was given, with its type.
BlockT = TypeVar("BlockT")


class Labels:
    def __init__(self, lang: str) -> None:
        self.lang = lang  # the language components are built in
        self.entries: list[tuple[Any, dict[str, Callable[[str], Any]]]] = []

    def add(self, component: BlockT, **props: str | Callable[[str], Any]) -> BlockT:
        """Register ``component``; each prop is a STRINGS key or a function lang → value."""
        getters = {p: (v if callable(v) else (lambda lang, k=v: t(k, lang))) for p, v in props.items()}
        self.entries.append((component, getters))
        return component

    def text(self, key: str) -> str:
        return t(key, self.lang)

    @property
    def components(self) -> list[Any]:
        return [c for c, _ in self.entries]

    def updates(self, lang: str) -> list[Any]:
        return [gr.update(**{p: g(lang) for p, g in getters.items()}) for _, getters in self.entries]
