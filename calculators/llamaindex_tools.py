"""Our tools as llama-index ``FunctionTool``s, for teams building their own agent.

    from calculators.llamaindex_tools import build_tools
    agent = FunctionAgent(tools=build_tools(), llm=...)        # the one line

Kept out of ``import calculators`` so the calculators never import llama-index. Each tool wraps the same
function as the MCP server (:mod:`calculators.agent_tools`); bad input returns
``{"error": {"field", "message_en", "message_zh"}}`` instead of raising, so the agent's LLM reads why and
can retry, rather than the agent loop stopping on an exception.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from llama_index.core.tools import FunctionTool

from . import agent_tools
from .errors import CalculatorError


def error_result(err: CalculatorError) -> dict[str, Any]:
    return {"error": {"field": err.field, "message_en": err.message("en"), "message_zh": err.message("zh")}}


def _safe(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except CalculatorError as err:
            return error_result(err)

    return run


def _card_search(assistant: Any) -> Callable[..., list[dict[str, Any]] | dict[str, Any]]:
    lock, holder = threading.Lock(), {"bot": assistant}

    def card_search(query: str, k: int = 3, lang: str = "en") -> list[dict[str, Any]] | dict[str, Any]:
        with lock:
            if holder["bot"] is None:  # built on first use: it loads the embedding model
                from rag import Assistant

                holder["bot"] = Assistant()
        return agent_tools.card_search(query, k, lang, assistant=holder["bot"])

    card_search.__doc__ = agent_tools.card_search.__doc__
    return card_search


def build_tools(assistant: Any = None, *, card_search: bool = True) -> list[FunctionTool]:
    """effective_batch, memory_estimate, memory_sweep, training_throughput, learning_rate_scaling, config_check,
    diagnose, fact_check and (optionally) card_search.

    ``assistant``: a ``rag.Assistant`` to search cards with (one is built on the first card search otherwise).
    """
    fns: list[Callable[..., Any]] = list(agent_tools.TOOL_FUNCTIONS)
    if card_search:
        fns.append(_card_search(assistant))
    return [FunctionTool.from_defaults(fn=_safe(fn), name=fn.__name__) for fn in fns]
