"""A card's lead (its first paragraph) opens answers for every setup that retrieves the card, so it states the rule,
not one model's numbers: a worked example for a size the user did not give ("7B in bf16 ≈ 14 GB") follows the lead.
A card whose title is about a named model or size (Mixtral 8x7B, ChatGLM, 7B on 24 GB) may use its numbers."""

from __future__ import annotations

import re

import pytest

from rag.cards import load_cards

_SIZE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?B(?![\w/])")
_CARDS = load_cards()


def _lead(body: str) -> str:
    return body.strip().split("\n\n", 1)[0]


@pytest.mark.parametrize("card", _CARDS, ids=[c.id for c in _CARDS])
def test_a_lead_names_no_model_size_its_title_does_not(card) -> None:
    for title, body in ((card.title_en, card.body_en), (card.title_zh, card.body_zh)):
        title_sized = bool(_SIZE.search(title)) or "ChatGLM" in title
        sizes = _SIZE.findall(_lead(body))
        assert title_sized or not sizes, f"{card.id}: lead names {sizes}; move the example after the lead"
