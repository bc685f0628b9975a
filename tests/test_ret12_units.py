"""ret12: what the citing and opening rules read off a card (its lead, title subject, stacks, quoted error) is computed
once per card object (rag.opening.card_topic), not once per message and card."""

from __future__ import annotations

from rag.cards import load_cards
from rag.opening import card_topic, error_grams, first_sentence, lead_en, title_subject

CARDS = {c.id: c for c in load_cards()}


def test_card_topic_is_read_once_per_card_and_equals_a_fresh_reading() -> None:
    card = CARDS["myth-more-gpus-pools-memory"]
    topic = card_topic(card)
    assert card_topic(card) is topic
    assert topic.lead == lead_en(card) and topic.lead_first == first_sentence(lead_en(card))
    assert topic.title_subject == title_subject(card.title_en)
    assert not topic.title_subject.startswith("Myth")
    # a copy of the card is another object: read again, to the same result
    copy = card.model_copy()
    assert card_topic(copy) is not topic and card_topic(copy) == topic


def test_error_grams_are_read_from_a_quoted_error_title_only() -> None:
    grams = error_grams('"FlashAttention only support fp16 and bf16 data type": why it appears')
    assert "flashattention only support fp16" in grams and "and bf16 data type" in grams
    assert error_grams("Why more GPUs still OOM") == frozenset()
    quoting = [c for c in CARDS.values() if c.title_en.startswith('"')]
    assert quoting and all(card_topic(c).error_grams for c in quoting)
