"""The agent-facing tools as API endpoints, which Gradio's MCP server (``launch(mcp_server=True)``) lists.

Gradio turns every public endpoint into an MCP tool named after its Python function, described by its
docstring (the ``Args:`` lines become the parameter descriptions) and typed by its annotations. So this
module registers one endpoint per tool with a clear name — effective_batch and fact_check live in
``ui/api.py`` beside the other HTTP endpoints; memory_estimate, memory_sweep, training_throughput,
learning_rate_scaling, config_check,
card_search and
diagnose (HTTP name /diagnose_tool, since /diagnose is the UI's endpoint) are registered here — and hides the
app's other public endpoints (the chat, the older /memory, /sweep, /check_config and /diagnose that return the
same results) from the MCP tool list, so an agent sees each tool once.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

import gradio as gr
from gradio.events import api as register_endpoint  # gr.api, imported from where gradio defines it

from calculators import CalculatorError, agent_tools

from .api import calculator_error

#: The MCP tool names and the HTTP api_names of their endpoints.
MCP_TOOLS = (
    "effective_batch",
    "memory_estimate",
    "memory_sweep",
    "training_throughput",
    "learning_rate_scaling",
    "config_check",
    "diagnose",
    "fact_check",
    "card_search",
)
MCP_API_NAMES = tuple("diagnose_tool" if name == "diagnose" else name for name in MCP_TOOLS)


def _refusing(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with CalculatorError turned into gr.Error (English + Chinese), which MCP returns as an error result."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except CalculatorError as err:
            raise calculator_error(err) from None

    return run


def register_agent_tools(assistant: Any) -> None:
    """Call inside a gr.Blocks context, after the other endpoints are registered."""
    for fn in (
        agent_tools.memory_estimate,
        agent_tools.memory_sweep,
        agent_tools.training_throughput,
        agent_tools.learning_rate_scaling,
        agent_tools.config_check,
    ):
        register_endpoint(_refusing(fn), api_name=fn.__name__)
    register_endpoint(_refusing(agent_tools.diagnose), api_name="diagnose_tool")

    def card_search(query: str, k: int = 3, lang: str = "en") -> list[dict[str, Any]]:
        return agent_tools.card_search(query, k, lang, assistant=assistant)

    card_search.__doc__ = agent_tools.card_search.__doc__
    register_endpoint(_refusing(card_search), api_name="card_search", concurrency_id="assistant")


def hide_other_endpoints_from_mcp(demo: gr.Blocks) -> None:
    """Mark every public endpoint that is not one of MCP_TOOLS as "not a tool" for Gradio's MCP server.

    Gradio 6.31 lists a function as an MCP tool unless its ``_mcp_type`` attribute names something else
    (what ``gr.mcp.resource``/``gr.mcp.prompt`` set); the HTTP API is unchanged.
    """
    for block_fn in demo.fns.values():
        if block_fn.fn is None or block_fn.api_name in MCP_API_NAMES:
            continue
        target: Any = getattr(block_fn.fn, "__func__", block_fn.fn)
        with contextlib.suppress(AttributeError, TypeError):  # a builtin cannot be marked, and is not one of ours
            target._mcp_type = "http_only"
