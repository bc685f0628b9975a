"""Retrieval-side units, fast (no embedding model): which retrieved cards an answer cites, the glossary's
expansions of how users write, the tokenizer. The measured effect on real questions is in
test_eval_answers.py (hit@1 / hit@3)."""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from rag import Assistant
from rag.assistant import BM25_TOP, CLOSE_TO_BEST
from rag.cards import load_cards
from rag.glossary import expand_query, find_terms
from rag.retrieval import Hit

CARDS = load_cards()
BY_ID = {c.id: c for c in CARDS}
NO_INTENTS = SimpleNamespace(small_batch=False)


class _NoRetriever:
    def retrieve(self, query: str, k: int = 3):
        return []


@pytest.fixture(scope="module")
def bot():
    return Assistant(cards=CARDS, retriever=_NoRetriever())


def _hit(cid: str, dense: float, bm25_rank: int | None) -> Hit:
    return Hit(card=BY_ID[cid], score=0.0, dense_score=dense, bm25_rank=bm25_rank, dense_rank=1)


IDS = [c.id for c in CARDS[:3]]


# ---- which retrieved cards are cited ---------------------------------------------------------------
def test_card_far_below_best_dense_and_low_in_bm25_is_not_cited(bot):
    hits = [_hit(IDS[0], 0.70, 1), _hit(IDS[1], 0.70 - CLOSE_TO_BEST - 0.05, BM25_TOP + 3),
            _hit(IDS[2], 0.70 - CLOSE_TO_BEST - 0.05, None)]
    assert [c.id for c in bot._cards_for([], hits, NO_INTENTS, None)] == [IDS[0]]


def test_card_bm25_ranks_at_the_top_is_cited_even_when_dense_is_far(bot):
    """A Chinese question reaches the English-only model only through glossary words; BM25's top card stays."""
    hits = [_hit(IDS[0], 0.70, 3), _hit(IDS[1], 0.40, 1), _hit(IDS[2], 0.40, BM25_TOP + 1)]
    assert [c.id for c in bot._cards_for([], hits, NO_INTENTS, None)] == [IDS[0], IDS[1]]


def test_card_close_in_dense_is_cited_without_bm25(bot):
    hits = [_hit(IDS[0], 0.70, 1), _hit(IDS[1], 0.70 - CLOSE_TO_BEST / 2, None)]
    assert [c.id for c in bot._cards_for([], hits, NO_INTENTS, None)] == IDS[:2]


def test_hit_without_bm25_rank_attribute_still_works(bot):
    """Other retrievers (test stubs) return hits with a dense score only."""
    @dataclass
    class Bare:
        card: object
        dense_score: float

    hits = [Bare(BY_ID[IDS[0]], 0.7), Bare(BY_ID[IDS[1]], 0.3)]
    assert [c.id for c in bot._cards_for([], hits, NO_INTENTS, None)] == [IDS[0]]
