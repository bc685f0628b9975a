"""Knowledge tab: list, search (``Assistant.retrieve``) and read the cards, each with its sources.

Issue #15: a row of the list is clicked to open its card (``gr.Dataframe`` select event, no separate
dropdown); search results are shown in rank order without the fusion score (0.031-0.033 means nothing to a
reader); the full list starts with the questions people ask most (gradient accumulation and memory, effective
batch, OOM), not alphabetically with BatchNorm.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import gradio as gr

from calculators.i18n import t
from calculators.lang import Lang
from calculators.text_safety import escape_md

from .labels import Labels
from .render import card_md

log = logging.getLogger("batchbot.knowledge")
MAX_QUERY_CHARS = 500

#: Topics in the order a reader meets them: what GA does to memory and to the batch first, then what fills
#: a GPU and how to shrink it, then training dynamics, framework step counting, RL, hardware, known bugs.
TOPIC_ORDER = (
    "grad_accum_memory",
    "effective_batch",
    "deepspeed_batch_config",
    "oom_consumer_gpu",
    "mixed_precision",
    "gradient_checkpointing",
    "zero_offload",
    "fsdp_sharding",
    "lora_qlora",
    "memory_over_time",
    "loss_normalization_ga",
    "lr_batch_scaling",
    "small_batch_effects",
    "framework_steps",
    "rl_batch",
    "hardware",
    "framework_bugs",
)


#: The three cards that answer the tab's most common questions (does GA cost memory, what is the effective
#: batch, is the effective batch what runs out of memory) open the list when they exist.
OPENERS = ("ga-how-accumulation-works", "effective-batch-formula", "myth-effective-batch-causes-oom")


def reading_order(cards: list[Any]) -> list[Any]:
    """:data:`OPENERS` first, then cards sorted by their earliest topic in :data:`TOPIC_ORDER`; within a
    topic, the card whose first topic it is comes first, then by id (a stable, explainable order)."""
    rank = {topic: i for i, topic in enumerate(TOPIC_ORDER)}
    opener = {cid: i for i, cid in enumerate(OPENERS)}

    def key(card: Any) -> tuple[int, int, int, str]:
        topics = list(card.topics) or [""]
        best = min(rank.get(x, len(rank)) for x in topics)
        return opener.get(card.id, len(opener)), best, 0 if rank.get(topics[0], len(rank)) == best else 1, card.id

    return sorted(cards, key=key)


class Knowledge:
    def __init__(self, assistant: Any, lock: threading.Lock) -> None:
        self.bot = assistant
        self.lock = lock
        self.cards = reading_order(list(getattr(assistant, "cards", []) or []))
        self.by_id = {c.id: c for c in self.cards}

    def table(self, ids: list[str], lang: Lang) -> dict[str, Any]:
        """The Dataframe value for these cards: position (rank for a search), title in the UI language, topics.
        The card ids travel in a gr.State beside it (a click reads the row number)."""
        head = [t("col_rank", lang), t("col_title", lang), t("col_topics", lang)]
        rows = []
        for i, cid in enumerate(ids, start=1):
            card = self.by_id[cid]
            rows.append([i, card.title_zh if lang == "zh" else card.title_en, ", ".join(card.topics)])
        return {"headers": head, "data": rows}

    def listing(self, lang: Lang) -> tuple[str, dict[str, Any], list[str]]:
        ids = [c.id for c in self.cards]
        return f"{t('cards_count', lang, n=len(ids))} · {t('kb_open_hint', lang)}", self.table(ids, lang), ids

    def search(self, query: str, lang: Lang) -> tuple[str, dict[str, Any], list[str], str | None, str]:
        """(count line, table, ids in table order, opened card id, card Markdown); an empty query lists every card."""
        q = (query or "").strip()[:MAX_QUERY_CHARS]
        if not q:
            head, table, ids = self.listing(lang)
            first = ids[0] if ids else None
            return head, table, ids, first, self.show(first, lang)
        try:
            with self.lock:
                hits = self.bot.retrieve(q, k=5)
        except Exception as exc:
            from .chat import log_failure

            log_failure("retrieve failed", exc)
            hits = []
        ids = [h.card.id for h in hits if h.card.id in self.by_id]
        if not ids:
            return t("no_results", lang), self.table([], lang), [], None, ""
        head = f"{t('search_count', lang, q=escape_md(q), n=len(ids))} · {t('kb_open_hint', lang)}"
        return head, self.table(ids, lang), ids, ids[0], self.show(ids[0], lang)

    def open_row(self, ids: list[str], lang: Lang, evt: gr.SelectData) -> tuple[str | None, str]:
        """A click on any cell of a row opens that row's card."""
        index = evt.index if isinstance(evt.index, (list, tuple)) else [evt.index]
        row = index[0] if index else None
        if not isinstance(row, int) or not 0 <= row < len(ids or []):
            return None, ""
        return ids[row], self.show(ids[row], lang)

    def relabel(
        self, ids: list[str], card_id: str | None, query: str, lang: Lang
    ) -> tuple[str, dict[str, Any], list[str], str | None, str]:
        """The tab in another language, keeping the list (or search) and the open card."""
        head, table, new_ids, first, _ = self.search(query, lang)
        keep = card_id if card_id in self.by_id else first
        return head, table, new_ids, keep, self.show(keep, lang)

    def show(self, card_id: str | None, lang: Lang) -> str:
        card = self.by_id.get(card_id or "")
        return card_md(card, lang) if card else ""


def build_knowledge_tab(L: Labels, kb: Knowledge) -> dict[str, Any]:
    lang = L.lang
    with gr.Row():
        q = L.add(
            gr.Textbox(
                label=L.text("search"),
                placeholder=L.text("search_placeholder"),
                scale=4,
                elem_id="kb-query",
                max_length=MAX_QUERY_CHARS,
                min_width=200,
            ),
            label="search",
            placeholder="search_placeholder",
        )
        btn = L.add(
            gr.Button(L.text("search_button"), variant="primary", scale=1, elem_id="kb-search", min_width=80),
            value="search_button",
        )
        all_btn = L.add(gr.Button(L.text("show_all"), scale=1, elem_id="kb-all", min_width=80), value="show_all")
    head, table, ids = kb.listing(lang)
    first = ids[0] if ids else None
    with gr.Row(equal_height=False):
        with gr.Column(scale=2, min_width=300):
            count = gr.Markdown(head, elem_id="kb-count")
            listing = gr.Dataframe(
                value=table,
                interactive=False,
                wrap=True,
                elem_id="kb-list",
                max_height=640,
                show_search="none",
                column_widths=["12%", "60%", "28%"],
            )
        with gr.Column(scale=3, min_width=300):
            card = gr.Markdown(kb.show(first, lang), elem_id="kb-card")
    shown_ids = gr.State(ids)
    card_id = gr.State(first)
    return dict(
        query=q, search=btn, all=all_btn, count=count, listing=listing, card=card, ids=shown_ids, card_id=card_id
    )


def wire_knowledge_tab(h: dict[str, Any], kb: Knowledge, lang_state: Any) -> None:
    outs = [h["count"], h["listing"], h["ids"], h["card_id"], h["card"]]
    h["search"].click(kb.search, [h["query"], lang_state], outs, api_visibility="private")
    h["query"].submit(kb.search, [h["query"], lang_state], outs, api_visibility="private")
    h["all"].click(lambda lang: kb.search("", lang), [lang_state], outs, api_visibility="private").then(
        lambda: "", None, [h["query"]], api_visibility="private"
    )
    h["listing"].select(kb.open_row, [h["ids"], lang_state], [h["card_id"], h["card"]], api_visibility="private")
    lang_state.change(kb.relabel, [h["ids"], h["card_id"], h["query"], lang_state], outs, api_visibility="private")
