"""DeepSpeed ZeRO-2 / ZeRO-3 model-state memory estimators, reimplemented.

These reproduce, formula for formula, DeepSpeed's own estimators:

* ``deepspeed/runtime/zero/stage_1_and_2.py::estimate_zero2_model_states_mem_needs``
  as of DeepSpeed PR #5099 (June 2024), which changed the no-offload GPU line from
  ``4*P + int(16*P/gpus)`` to ``2*P + int(18*P/gpus)`` (2 = fp16/bf16 params on every
  GPU; 18 = 2 fp16 grads + 4 fp32 grads + 4 fp32 master params + 8 Adam moments,
  partitioned). The published docs page ("Memory Requirements", ``memory.rst``) still
  prints the old 15.93 GB for 2851M params on 8 GPUs; the current code gives 11.28 GB.
* ``deepspeed/runtime/zero/stage3.py::estimate_zero3_model_states_mem_needs``.

DeepSpeed's stage-3 function returns ``(cpu_mem, gpu_mem, largest_layer_memory)``;
ours returns ``(cpu_bytes, gpu_bytes)`` and the table rows carry the third value.
They cover parameters, gradients and Adam states only -- no activations, no
temporary buffers, no CUDA context.

``zero2_table`` / ``zero3_table`` give the rows the ``*_all_cold`` functions print
("per CPU | per GPU | Options", GiB = 2**30 with two decimals).
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from .errors import CalculatorError
from .validate import _is_bool, _not_a_number, as_float, flag, positive_int

MAX_PARAMS = 1e15
MAX_GPUS_PER_NODE = 1024
MAX_NODES = 100_000
GIB = 2**30

__all__ = [
    "estimate_zero2_model_states_mem_needs",
    "estimate_zero3_model_states_mem_needs",
    "Zero2Option",
    "Zero3Option",
    "zero2_table",
    "zero3_table",
    "format_table",
]


def _param_count(field: str, value: Any, *, upper: float = MAX_PARAMS, upper_label: str = "1e15") -> float:
    """A parameter count: a finite real number in (0, upper]. Floats such as 2851e6 are allowed (DeepSpeed's docs use them)."""
    if (
        not _is_bool(value)
        and isinstance(value, Real)
        and math.isfinite(as_float(value))
        and 0 < as_float(value) <= upper
    ):
        return int(value) if isinstance(value, Integral) else float(value)
    accepted_en, accepted_zh = (
        f"a number of parameters > 0 and <= {upper_label}",
        f"参数数量，需 > 0 且 <= {upper_label}",
    )
    if _is_bool(value) or not isinstance(value, Real):
        raise _not_a_number(field, value, accepted_en, accepted_zh, "a number", "数字")
    raise CalculatorError(field, value, accepted_en, accepted_zh)


def _buffer_factor(value: Any) -> float:
    field = "additional_buffer_factor"
    accepted_en, accepted_zh = (
        "a number from 1.0 to 10.0 (DeepSpeed's default is 1.5)",
        "1.0 到 10.0 之间的数（DeepSpeed 默认 1.5）",
    )
    if _is_bool(value) or not isinstance(value, Real):
        raise _not_a_number(field, value, accepted_en, accepted_zh, "a number", "数字")
    v = as_float(value)
    if not (math.isfinite(v) and 1.0 <= v <= 10.0):
        raise CalculatorError(field, value, accepted_en, accepted_zh)
    return v


def _hardware(num_gpus_per_node: Any, num_nodes: Any) -> tuple[int, int]:
    return (
        positive_int("num_gpus_per_node", num_gpus_per_node, maximum=MAX_GPUS_PER_NODE),
        positive_int("num_nodes", num_nodes, maximum=MAX_NODES),
    )


def estimate_zero2_model_states_mem_needs(
    total_params: float,
    num_gpus_per_node: int = 1,
    num_nodes: int = 1,
    cpu_offload: bool = True,
    additional_buffer_factor: float = 1.5,
) -> tuple[int, int]:
    """ZeRO-2 (cpu_bytes, gpu_bytes) per CPU node / per GPU, exactly as DeepSpeed computes them.

    offload_optimizer=cpu:  gpu = 2P;  cpu = P * max(4 * total_gpus, 16) * buffer
    offload_optimizer=none: gpu = 2P + int(18P / total_gpus);  cpu = 4P * gpus_per_node * buffer
    """
    total_params = _param_count("total_params", total_params)
    num_gpus_per_node, num_nodes = _hardware(num_gpus_per_node, num_nodes)
    cpu_offload = flag("cpu_offload", cpu_offload)
    additional_buffer_factor = _buffer_factor(additional_buffer_factor)

    total_gpus = num_nodes * num_gpus_per_node
    if cpu_offload:
        gpu_mem = 2 * total_params
        cpu_mem = total_params * max(4 * total_gpus, 16) * additional_buffer_factor
    else:
        gpu_mem = 2 * total_params + int(18 * total_params / total_gpus)
        cpu_mem = total_params * 4 * num_gpus_per_node * additional_buffer_factor
    return int(cpu_mem), int(gpu_mem)


def _zero3(
    total_params: float,
    largest_layer_params: float,
    num_gpus_per_node: int,
    num_nodes: int,
    cpu_offload: bool,
    cpu_offload_params: bool,
    zero_init: bool,
    additional_buffer_factor: float,
) -> tuple[int, int, int]:
    """DeepSpeed's stage-3 arithmetic on already-validated inputs; returns (cpu, gpu, largest_layer_memory)."""
    total_gpus = num_nodes * num_gpus_per_node
    gpus_factor = 1 / num_nodes
    largest_layer_memory = 4 * largest_layer_params  # fp16 params gathered + fp16 grads of the largest layer
    if cpu_offload:
        if cpu_offload_params:
            gpu_mem = largest_layer_memory
            if zero_init:
                cpu_mem = total_params * 18 * gpus_factor * additional_buffer_factor
            else:
                cpu_mem = total_params * max(4 * num_gpus_per_node, 18 * gpus_factor) * additional_buffer_factor
        else:
            gpu_mem = largest_layer_memory + int(2 * total_params / total_gpus)
            if zero_init:
                cpu_mem = total_params * 16 * gpus_factor * additional_buffer_factor
            else:
                cpu_mem = total_params * max(4 * num_gpus_per_node, 16 * gpus_factor) * additional_buffer_factor
    else:
        gpu_mem = largest_layer_memory + int(18 * total_params / total_gpus)
        if zero_init:
            cpu_mem = largest_layer_params * 4 * num_gpus_per_node * additional_buffer_factor
        else:
            cpu_mem = total_params * 4 * num_gpus_per_node * additional_buffer_factor
    return int(cpu_mem), int(gpu_mem), int(largest_layer_memory)


def _validate_zero3(
    total_params: Any, largest_layer_params: Any, num_gpus_per_node: Any, num_nodes: Any, additional_buffer_factor: Any
) -> tuple[float, float, int, int, float]:
    total_params = _param_count("total_params", total_params)
    largest_layer_params = _param_count(
        "largest_layer_params",
        largest_layer_params,
        upper=float(total_params),
        upper_label=f"total_params ({total_params:g})",
    )
    num_gpus_per_node, num_nodes = _hardware(num_gpus_per_node, num_nodes)
    return total_params, largest_layer_params, num_gpus_per_node, num_nodes, _buffer_factor(additional_buffer_factor)


def estimate_zero3_model_states_mem_needs(
    total_params: float,
    largest_layer_params: float,
    num_gpus_per_node: int = 1,
    num_nodes: int = 1,
    cpu_offload: bool = True,
    cpu_offload_params: bool = True,
    zero_init: bool = True,
    additional_buffer_factor: float = 1.5,
) -> tuple[int, int]:
    """ZeRO-3 (cpu_bytes, gpu_bytes), exactly as DeepSpeed computes them (see module docstring).

    ``largest_layer_params`` is the largest single module's own parameters (DeepSpeed's
    ``model_to_params``); ``4 * largest_layer_params`` bytes are gathered on every GPU.
    """
    t, l, g, n, f = _validate_zero3(  # noqa: E741  (DeepSpeed's own names)
        total_params,
        largest_layer_params,
        num_gpus_per_node,
        num_nodes,
        additional_buffer_factor,
    )
    cpu, gpu, _ = _zero3(
        t,
        l,
        g,
        n,
        flag("cpu_offload", cpu_offload),
        flag("cpu_offload_params", cpu_offload_params),
        flag("zero_init", zero_init),
        f,
    )
    return cpu, gpu


def _gib(nbytes: int) -> float:
    return float(f"{nbytes / GIB:.2f}")  # the same rounding as DeepSpeed's f"{x/2**30:7.2f}"


def _device(on_cpu: bool) -> str:
    # DeepSpeed prints f"{OffloadDeviceEnum.cpu:4}", i.e. "cpu " padded to 4 characters.
    return "cpu " if on_cpu else "none"


class Zero2Option(BaseModel):
    """One row of DeepSpeed's ZeRO-2 estimate table."""

    model_config = ConfigDict(frozen=True)
    offload_optimizer: Literal["cpu", "none"]
    cpu_bytes: int
    gpu_bytes: int
    cpu_gib: float
    gpu_gib: float
    options: str


class Zero3Option(BaseModel):
    """One row of DeepSpeed's ZeRO-3 estimate table."""

    model_config = ConfigDict(frozen=True)
    offload_param: Literal["cpu", "none"]
    offload_optimizer: Literal["cpu", "none"]
    zero_init: bool
    cpu_bytes: int
    gpu_bytes: int
    largest_layer_bytes: int
    cpu_gib: float
    gpu_gib: float
    options: str


def zero2_table(
    total_params: float, num_gpus_per_node: int = 1, num_nodes: int = 1, additional_buffer_factor: float = 1.5
) -> list[Zero2Option]:
    """The rows ``estimate_zero2_model_states_mem_needs_all_cold`` prints, in its order."""
    rows = []
    for cpu_offload in (True, False):
        cpu, gpu = estimate_zero2_model_states_mem_needs(
            total_params, num_gpus_per_node, num_nodes, cpu_offload, additional_buffer_factor
        )
        rows.append(
            Zero2Option(
                offload_optimizer="cpu" if cpu_offload else "none",
                cpu_bytes=cpu,
                gpu_bytes=gpu,
                cpu_gib=_gib(cpu),
                gpu_gib=_gib(gpu),
                options=f"offload_optimizer={_device(cpu_offload)}",
            )
        )
    return rows


def zero3_table(
    total_params: float,
    largest_layer_params: float,
    num_gpus_per_node: int = 1,
    num_nodes: int = 1,
    additional_buffer_factor: float = 1.5,
) -> list[Zero3Option]:
    """The six rows ``estimate_zero3_model_states_mem_needs_all_cold`` prints, in its order."""
    t, l, g, n, f = _validate_zero3(  # noqa: E741  (DeepSpeed's own names)
        total_params,
        largest_layer_params,
        num_gpus_per_node,
        num_nodes,
        additional_buffer_factor,
    )
    rows = []
    for cpu_offload in (True, False):
        for cpu_offload_params in (True, False):
            if not cpu_offload and cpu_offload_params:
                continue
            for zero_init in (True, False):
                cpu, gpu, largest = _zero3(t, l, g, n, cpu_offload, cpu_offload_params, zero_init, f)
                options = (
                    f"offload_param={_device(cpu_offload_params)}, "
                    f"offload_optimizer={_device(cpu_offload)}, zero_init={1 if zero_init else 0}"
                )
                rows.append(
                    Zero3Option(
                        offload_param="cpu" if cpu_offload_params else "none",
                        offload_optimizer="cpu" if cpu_offload else "none",
                        zero_init=zero_init,
                        cpu_bytes=cpu,
                        gpu_bytes=gpu,
                        largest_layer_bytes=largest,
                        cpu_gib=_gib(cpu),
                        gpu_gib=_gib(gpu),
                        options=options,
                    )
                )
    return rows


def format_table(rows: list[Zero2Option] | list[Zero3Option]) -> str:
    """The rows as DeepSpeed prints them (header plus one line per option)."""
    lines = ["  per CPU  |  per GPU |   Options"]
    lines += [f" {r.cpu_bytes / GIB:7.2f}GB | {r.gpu_bytes / GIB:6.2f}GB | {r.options}" for r in rows]
    return "\n".join(lines)
