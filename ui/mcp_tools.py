"""The agent-facing tools as API endpoints, which Gradio's MCP server (``launch(mcp_server=True)``) lists.

Gradio turns every public endpoint into an MCP tool named after its Python function, described by its
docstring (the ``Args:`` lines become the parameter descriptions) and typed by its annotations. So this
module registers one endpoint per tool with a clear name — effective_batch and fact_check live in
``ui/api.py`` beside the other HTTP endpoints; memory_estimate, memory_sweep, config_check and card_search
are registered here — and hides the app's other public endpoints (the chat, the older /memory, /sweep and
/check_config that return the same numbers) from the MCP tool list, so an agent sees each tool once.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import gradio as gr

from calculators import CalculatorError, agent_tools

from .api import calculator_error

#: The MCP tool names, which are also their HTTP api_names.
MCP_TOOLS = ("effective_batch", "memory_estimate", "memory_sweep", "config_check", "fact_check", "card_search")
# TODO(diagnose): add "diagnose" when calculators.diagnose is on main (another helper is writing it).


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
    for fn in (agent_tools.memory_estimate, agent_tools.memory_sweep, agent_tools.config_check):
        gr.api(_refusing(fn), api_name=fn.__name__)

    def card_search(query: str, k: int = 3, lang: str = "en") -> list[dict]:
        return agent_tools.card_search(query, k, lang, assistant=assistant)

    card_search.__doc__ = agent_tools.card_search.__doc__
    gr.api(_refusing(card_search), api_name="card_search", concurrency_id="assistant")


def hide_other_endpoints_from_mcp(demo: gr.Blocks) -> None:
    """Mark every public endpoint that is not one of MCP_TOOLS as "not a tool" for Gradio's MCP server.

    Gradio 6.31 lists a function as an MCP tool unless its ``_mcp_type`` attribute names something else
    (what ``gr.mcp.resource``/``gr.mcp.prompt`` set); the HTTP API is unchanged.
    """
    for block_fn in demo.fns.values():
        if block_fn.fn is None or block_fn.api_name in MCP_TOOLS:
            continue
        target = getattr(block_fn.fn, "__func__", block_fn.fn)
        try:
            target._mcp_type = "http_only"
        except (AttributeError, TypeError):  # a builtin; it cannot be marked, and is not one of ours
            pass
