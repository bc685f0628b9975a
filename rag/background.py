"""An Assistant built on a background thread, so the web server answers while the model loads.

Why: building the Assistant (torch, sentence-transformers and llama-index imports, the model, the
embedding cache, BM25) is most of a cold start (bench/cold_start.py phases); the page, the calculators
and the config check do not need it. :class:`BackgroundAssistant` checks the cheap things at once
(cards parse, the model setting names something loadable) so a bad setting still stops the start
with its reason, then builds the rest on a thread. Anything that needs the Assistant (``ask``,
``retrieve``, ``retriever``…) waits for it: the first answer is the same as with a synchronous start,
only later.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from calculators.lang import Lang

from .cards import Card, load_cards

log = logging.getLogger("batchbot.startup")


class BackgroundAssistant:
    """Starts ``factory(cards)`` on a daemon thread; attribute access waits for the result.

    ``cards`` is available at once (the Knowledge tab lists them while the model loads). A failure in
    the thread is raised again to every caller of :meth:`wait` (and so of ``ask``).
    """

    def __init__(
        self, factory: Callable[[list[Card]], Any], cards: list[Card] | None = None, batches_queries: bool | None = None
    ) -> None:
        self.cards = cards if cards is not None else load_cards()
        #: What rag.embedding.assistant_lock needs before the model exists: will queries be micro-batched?
        self.batches_queries = batches_queries
        self._factory = factory
        self._ready = threading.Event()
        self._bot: Any = None
        self._error: BaseException | None = None
        self.started = time.perf_counter()
        self.build_s: float | None = None
        self._thread = threading.Thread(target=self._build, name="assistant-build", daemon=True)
        self._thread.start()

    def _build(self) -> None:
        try:
            self._bot = self._factory(self.cards)
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits
            self._error = exc
        finally:
            self.build_s = time.perf_counter() - self.started
            if self._error is None:
                log.info("assistant ready in %.1f s (built in the background)", self.build_s)
            self._ready.set()

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    @property
    def error(self) -> BaseException | None:
        return self._error if self._ready.is_set() else None

    def wait(self, timeout: float | None = None) -> Any:
        """The built Assistant (blocking); raises the build's exception, or TimeoutError."""
        if not self._ready.wait(timeout):
            raise TimeoutError("the assistant is still being built")
        if self._error is not None:
            raise self._error
        return self._bot

    def ask(self, question: str, history: list[dict[str, Any]] | None = None, lang_hint: Lang | None = None) -> Any:
        return self.wait().ask(question, history=history, lang_hint=lang_hint)

    def retrieve(self, query: str, k: int = 3) -> list[Any]:
        hits: list[Any] = self.wait().retrieve(query, k=k)
        return hits

    def __getattr__(self, name: str) -> Any:  # only for names not set above: retriever, helpers
        if name.startswith("__") or name in ("_bot", "_error", "_ready", "_factory", "_thread"):
            raise AttributeError(name)
        return getattr(self.wait(), name)
