"""A registry of translatable component properties, so one language switch relabels the whole UI."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import gradio as gr

from calculators.i18n import CATALOGUE, label, t
from calculators.lang import Lang, as_lang

#: Any component or layout block (gr.Textbox, gr.Tab…): add() hands back what it was given, with its type.
BlockT = TypeVar("BlockT")


class Labels:
    def __init__(self, lang: Lang) -> None:
        self.lang = lang  # the language components are built in
        self.entries: list[tuple[Any, dict[str, Callable[[Lang], Any]]]] = []

    def add(self, component: BlockT, **props: str | Callable[[Lang], Any]) -> BlockT:
        """Register ``component``; each prop is a catalogue key (a form field's key gives its label) or a function
        lang → value."""
        getters = {p: (v if callable(v) else (lambda lang, k=v: _text(k, lang))) for p, v in props.items()}
        self.entries.append((component, getters))
        return component

    def text(self, key: str) -> str:
        return _text(key, self.lang)

    @property
    def components(self) -> list[Any]:
        return [c for c, _ in self.entries]

    def updates(self, lang: Lang) -> list[Any]:
        return [gr.update(**{p: g(lang) for p, g in getters.items()}) for _, getters in self.entries]


def _text(key: str, lang: Lang) -> str:
    """A component's text: the form label of a field ("train_batch_size"), else the catalogue string ``key``."""
    return label(key, as_lang(lang)) if "label." + key in CATALOGUE else t(key, as_lang(lang))
