"""The Assistant built on a thread while the server starts (rag/background.py): cards at once, answers wait for
the build and equal a synchronous one's, a failed build reaches every caller, and the chat's lock follows the plan."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from rag.background import BackgroundAssistant
from rag.cards import load_cards
from rag.embedding import _NoLock, assistant_lock


class Echo:
    """A stand-in Assistant whose answers name the question (the real one is tested in test_assistant.py)."""

    def __init__(self, cards: list) -> None:
        self.cards = cards
        self.retriever = None

    def ask(self, question: str, history: Any = None, lang_hint: Any = None) -> str:
        return f"answer to {question}" + (f" in {lang_hint}" if lang_hint else "")

    def retrieve(self, query: str, k: int = 3) -> list:
        return [query] * k


def test_cards_at_once_answers_after_the_build() -> None:
    release = threading.Event()

    def slow(cards: list) -> Echo:
        release.wait(10)
        return Echo(cards)

    cards = load_cards()
    bot = BackgroundAssistant(slow, cards, batches_queries=True)
    assert bot.cards is cards and not bot.ready
    with pytest.raises(TimeoutError):
        bot.wait(timeout=0.05)
    got: list[str] = []
    asker = threading.Thread(target=lambda: got.append(bot.ask("GA?")))
    asker.start()
    time.sleep(0.1)
    assert got == []  # the question waits for the model
    release.set()
    asker.join(10)
    assert got == ["answer to GA?"] and bot.ready and bot.error is None
    assert bot.retrieve("x", k=2) == ["x", "x"]
    assert bot.ask("GA?", lang_hint="zh") == "answer to GA? in zh"  # the UI's language reaches the Assistant
    assert bot.retriever is None  # other attributes come from the built Assistant


def test_a_failed_build_reaches_every_caller() -> None:
    def broken(cards: list) -> Echo:
        raise RuntimeError("model file is corrupt")

    bot = BackgroundAssistant(broken, load_cards(), batches_queries=False)
    with pytest.raises(RuntimeError, match="corrupt"):
        bot.wait(timeout=10)
    with pytest.raises(RuntimeError, match="corrupt"):
        bot.ask("GA?")
    assert isinstance(bot.error, RuntimeError)


def test_the_chat_lock_follows_the_plan_before_the_model_exists() -> None:
    never = threading.Event()
    planned = BackgroundAssistant(lambda c: never.wait(5), load_cards(), batches_queries=True)
    assert isinstance(assistant_lock(planned), _NoLock)  # answered without waiting for the build
    unbatched = BackgroundAssistant(lambda c: never.wait(5), load_cards(), batches_queries=False)
    lock = assistant_lock(unbatched)
    assert lock.acquire(blocking=False) and not lock.acquire(blocking=False)  # a real lock
    never.set()
    assert not isinstance(assistant_lock(Echo([])), _NoLock)  # no batcher on its model: a real lock
