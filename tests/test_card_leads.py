"""A card's lead (its first paragraph) opens answers for every setup that retrieves the card, so it states the rule,
not one model's numbers: a worked example for a size the user did not give ("7B in bf16 ≈ 14 GB") follows the lead.
A card whose title is about a named model or size (Mixtral 8x7B, ChatGLM, 7B on 24 GB) may use its numbers."""

from __future__ import annotations

import re

import pytest

from rag.cards import MODEL_SIZE, load_cards

_CARDS = load_cards()


def _lead(body: str) -> str:
    return body.strip().split("\n\n", 1)[0]


@pytest.mark.parametrize("card", _CARDS, ids=[c.id for c in _CARDS])
def test_a_lead_names_no_model_size_its_title_does_not(card) -> None:
    for title, body in ((card.title_en, card.body_en), (card.title_zh, card.body_zh)):
        title_sized = bool(MODEL_SIZE.search(title)) or "ChatGLM" in title
        sizes = MODEL_SIZE.findall(_lead(body))
        assert title_sized or not sizes, f"{card.id}: lead names {sizes}; move the example after the lead"


_GPU_COUNT = re.compile(r"\b(?:on|with|across)\s+\d+\s+GPUs\b|用\s*\d+\s*张卡")
_EXAMPLE = re.compile(r"\be\.g\.|for example|例如|比如")


@pytest.mark.parametrize("card", _CARDS, ids=[c.id for c in _CARDS])
def test_a_lead_names_no_gpu_count_unless_as_an_example(card) -> None:
    """ "On 4 GPUs one step() moves the LR 4 steps" opened an answer to a user on 8 GPUs (accelerate #1382): a count
    in the lead is the user's only when it is labelled as an example."""
    for body in (card.body_en, card.body_zh):
        lead = _lead(body)
        for m in _GPU_COUNT.finditer(lead):
            assert _EXAMPLE.search(lead[: m.start()]), f"{card.id}: lead states {m.group(0)!r} as if it were the user's"


class _Ranked:
    """A retriever that ranked the given cards in this order (the real ranking is tested elsewhere)."""

    def __init__(self, ids: list[str]) -> None:
        by_id = {c.id: c for c in _CARDS}
        self.cards = [by_id[i] for i in ids]

    def retrieve(self, query: str, k: int = 3) -> list[object]:
        from types import SimpleNamespace

        return [SimpleNamespace(card=c, dense_score=0.75, bm25_rank=i + 1) for i, c in enumerate(self.cards[:k])]


def test_a_fit_question_without_a_model_explains_memory_with_a_general_card() -> None:
    """ "GPU requirements for the full fine-tune on 4*A6000?" names no model: the breakdown that follows what is
    needed comes from a card about memory in general, not the top card about 7B on a 24 GB card."""
    from rag import Assistant

    bot = Assistant(cards=_CARDS, retriever=_Ranked(["oom-7b-full-finetune-24gb", "oom-memory-budget-breakdown"]))
    ans = bot.ask("May I know the GPU requirements for the full fine-tuning? The paper used 4*A6000 (48GB).")
    assert ans.act == "fit"
    assert "24 GB" not in ans.first_screen and "7B" not in ans.first_screen
    assert "Peak memory" in ans.first_screen  # the general card's breakdown
