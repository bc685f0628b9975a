"""retbatch13: a myth card ("Myth: …") that retrieval finds is cited only when the message holds its belief (a
misconception rule matched) or asks what the card's lead answers (rag.opening.lead_answers): an OOM report that only
mentions accumulation is not told "lowering GA does not save memory"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rag.opening import read_asked
from rag.parts import split_message


@pytest.fixture(scope="module")
def bot() -> Any:
    from rag import Assistant

    return Assistant()


def _asked(text: str) -> Any:
    return read_asked(text, split_message(text))


def test_a_myth_card_is_not_cited_for_a_question_about_something_else(bot: Any) -> None:
    card = bot._by_id["myth-lower-ga-saves-memory"]
    asked = _asked("Is it possible to pretrain MPT-7B on a single A100 80GB? I use gradient accumulation 8.")
    assert bot._unheld_myth(card, set(), asked, "fit")


def test_a_myth_card_stays_when_its_belief_is_held_or_asked_about(bot: Any) -> None:
    card = bot._by_id["myth-lower-ga-saves-memory"]
    asked = _asked("Will lowering gradient_accumulation_steps from 8 to 1 fix my CUDA out of memory?")
    assert not bot._unheld_myth(card, {card.id}, asked, "yes_no")  # the belief's rule matched
    assert not bot._unheld_myth(card, set(), asked, "yes_no")  # its lead answers what they ask
    # a card that is not a myth is never dropped by this rule
    other = bot._by_id["tune-micro-batch-then-ga"]
    assert not bot._unheld_myth(other, set(), _asked("Is it possible to pretrain MPT-7B on one A100?"), "fit")


def _dev_question(qid: str) -> str:
    import yaml

    for path in sorted(Path("tests/data/real_questions").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for q in data["questions"] if isinstance(data, dict) else data:
            if q["id"] == qid:
                return str(q["question"])
    raise KeyError(qid)


def test_a_fit_question_that_mentions_accumulation_is_not_told_the_ga_myth(bot: Any) -> None:
    # en-llm-foundry-468 ("MPT-7B on single A100 80GB"): cited both memory myths before, neither belief is stated
    answer = bot.ask(_dev_question("en-llm-foundry-468"))
    cited = [s.card_id for s in answer.sources]
    assert cited and not any(c.startswith("myth-") for c in cited)
