"""The calculators as named tools: what the chat calls and what cards reference.

``run_tool(name, arguments)`` is the single entry point used by the assistant,
the app's API endpoints and the knowledge-card tests, so a tool's name and
argument names mean the same thing everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from .batch import back_solve_steps, resolve_batch, scale_learning_rate
from .configs import config_check_tool
from .deepspeed import estimate_zero2_model_states_mem_needs, estimate_zero3_model_states_mem_needs
from .errors import CalculatorError
from .host_ram import host_ram_at_load
from .memory import estimate_memory
from .sweep import sweep
from .throughput import training_throughput


class ZeroEstimate(BaseModel):
    cpu_bytes: int
    gpu_bytes: int


def _memory(args: dict[str, Any]) -> BaseModel:
    return estimate_memory(dict(args))


def _sweep(args: dict[str, Any]) -> BaseModel:
    if set(args) != {"config", "field", "values"}:
        raise CalculatorError("arguments", sorted(args), "config, field and values", "config、field 和 values")
    return sweep(args["config"], args["field"], args["values"])


def _fact_check(args: dict[str, Any]) -> BaseModel:
    from .factcheck import fact_check_tool  # imported on use: it reads the knowledge cards through rag.cards

    return fact_check_tool(args)


def _diagnose(args: dict[str, Any]) -> BaseModel:
    from .diagnose import diagnose  # imported here: the diagnoser is optional for the other tools

    return diagnose(**args)


def _zero(fn: Callable[..., tuple[int, int]]) -> Callable[[dict[str, Any]], BaseModel]:
    def run(args: dict[str, Any]) -> BaseModel:
        cpu, gpu = fn(**args)
        return ZeroEstimate(cpu_bytes=cpu, gpu_bytes=gpu)

    return run


TOOLS: dict[str, Callable[[dict[str, Any]], BaseModel]] = {
    "effective_batch": lambda args: resolve_batch(**args),
    "lr_scaling": lambda args: scale_learning_rate(**args),
    "steps_back_solve": lambda args: back_solve_steps(**args),
    "memory": _memory,
    "host_ram_load": lambda args: host_ram_at_load(**args),
    "throughput": lambda args: training_throughput(**args),
    "sweep": _sweep,
    "deepspeed_zero2": _zero(estimate_zero2_model_states_mem_needs),
    "deepspeed_zero3": _zero(estimate_zero3_model_states_mem_needs),
    "config_check": config_check_tool,
    "fact_check": _fact_check,
    "diagnose": _diagnose,
}


def run_tool(name: str, arguments: dict[str, Any]) -> BaseModel:
    """Run calculator ``name`` with keyword ``arguments``; unknown names or arguments raise CalculatorError."""
    if not isinstance(name, str) or name not in TOOLS:
        raise CalculatorError("name", name, ", ".join(TOOLS), "、".join(TOOLS))
    if not isinstance(arguments, dict) or not all(isinstance(k, str) for k in arguments):
        raise CalculatorError("arguments", arguments, "a dict of keyword arguments", "关键字参数字典")
    try:
        return TOOLS[name](arguments)
    except TypeError as exc:  # an unknown or missing keyword argument
        raise CalculatorError(
            "arguments", sorted(map(str, arguments)), f"the arguments of {name}: {exc}", f"{name} 的参数：{exc}"
        ) from None
