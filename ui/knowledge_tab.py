"""Knowledge tab: list, search (``Assistant.retrieve``) and read the cards, each with its sources."""
from __future__ import annotations

import logging
import threading
from typing import Any

import gradio as gr

from calculators.text_safety import escape_md

from .i18n import t
from .labels import Labels
from .render import card_md, cards_table_md

log = logging.getLogger("batchbot.knowledge")
MAX_QUERY_CHARS = 500


class Knowledge:
    def __init__(self, assistant: Any, lock: threading.Lock) -> None:
        self.bot = assistant
        self.lock = lock
        self.cards = list(getattr(assistant, "cards", []) or [])
        self.by_id = {c.id: c for c in self.cards}

    def card_choices(self, lang: str, ids: list[str] | None = None) -> list[tuple[str, str]]:
        ids = ids if ids is not None else [c.id for c in self.cards]
        return [(f"{i} — {self.by_id[i].title_zh if lang == 'zh' else self.by_id[i].title_en}", i)
                for i in ids if i in self.by_id]

    def listing(self, lang: str) -> str:
        return f"{t('cards_count', lang, n=len(self.cards))}\n\n" + cards_table_md([(c, None) for c in self.cards], lang)

    def search(self, query: str, lang: str) -> tuple[str, Any, str]:
        """(list_md, dropdown update, card_md) for a query; an empty query lists every card."""
        q = (query or "").strip()[:MAX_QUERY_CHARS]
        if not q:
            first = self.cards[0].id if self.cards else None
            return self.listing(lang), gr.update(choices=self.card_choices(lang), value=first), self.show(first, lang)
        try:
            with self.lock:
                hits = self.bot.retrieve(q, k=5)
        except Exception as exc:
            from .chat import log_failure
            log_failure("retrieve failed", exc)
            hits = []
        rows = [(h.card, float(h.score)) for h in hits]
        if not rows:
            return t("no_results", lang), gr.update(choices=self.card_choices(lang), value=None), ""
        head = t("search_count", lang, q=escape_md(q), n=len(rows))
        ids = [c.id for c, _ in rows]
        return head + "\n\n" + cards_table_md(rows, lang), gr.update(choices=self.card_choices(lang, ids), value=ids[0]), \
            self.show(ids[0], lang)

    def show(self, card_id: str | None, lang: str) -> str:
        card = self.by_id.get(card_id or "")
        return card_md(card, lang) if card else ""


def build_knowledge_tab(L: Labels, kb: Knowledge) -> dict[str, Any]:
    lang = L.lang
    with gr.Row():
        q = L.add(gr.Textbox(label=L.text("search"), placeholder=L.text("search_placeholder"), scale=4,
                             elem_id="kb-query", max_length=MAX_QUERY_CHARS),
                  label="search", placeholder="search_placeholder")
        btn = L.add(gr.Button(L.text("search_button"), variant="primary", scale=1, elem_id="kb-search"),
                    value="search_button")
        all_btn = L.add(gr.Button(L.text("show_all"), scale=1, elem_id="kb-all"), value="show_all")
    with gr.Row():
        with gr.Column(scale=2):
            listing = gr.Markdown(kb.listing(lang), elem_id="kb-list")
        with gr.Column(scale=3):
            first = kb.cards[0].id if kb.cards else None
            pick = L.add(gr.Dropdown(kb.card_choices(lang), value=first, label=L.text("card_select"), elem_id="kb-pick"),
                         label="card_select", choices=kb.card_choices)
            card = gr.Markdown(kb.show(first, lang), elem_id="kb-card")
    return dict(query=q, search=btn, all=all_btn, listing=listing, pick=pick, card=card)


def wire_knowledge_tab(h: dict[str, Any], kb: Knowledge, lang_state: Any) -> None:
    outs = [h["listing"], h["pick"], h["card"]]
    h["search"].click(kb.search, [h["query"], lang_state], outs, api_visibility="private")
    h["query"].submit(kb.search, [h["query"], lang_state], outs, api_visibility="private")
    h["all"].click(lambda lang: kb.search("", lang), [lang_state], outs, api_visibility="private")
    h["pick"].change(kb.show, [h["pick"], lang_state], [h["card"]], api_visibility="private")
