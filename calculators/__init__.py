"""Deterministic calculators for batch size and GPU memory.

Pure Python (pydantic in, pydantic out); importing this package does not import torch.

>>> from calculators import resolve_batch, estimate_memory, MemoryConfig
>>> resolve_batch(train_micro_batch_size_per_gpu=2, gradient_accumulation_steps=8, world_size=4).train_batch_size
64
"""

from .batch import (
    BatchConfigError,
    BatchResult,
    StepsBackSolve,
    back_solve_steps,
    learning_rate_guidance,
    resolve_batch,
    resolve_hf_batch,
    scale_learning_rate,
)
from .errors import CalculatorError
from .host_ram import HostRamLoad, host_ram_at_load
from .memory import GiB, MemoryConfig, MemoryEstimate, estimate_memory, make_config
from .presets import (
    GPU_PRESETS,
    MODEL_PRESETS,
    ModelShape,
    count_params,
    get_gpu,
    get_model_shape,
    shape_from_hf_config,
)
from .sweep import SweepResult, sweep
from .throughput import PEAK_TFLOPS, Throughput, training_throughput
from .tools import TOOLS, run_tool

__all__ = [
    "BatchConfigError",
    "BatchResult",
    "resolve_batch",
    "resolve_hf_batch",
    "StepsBackSolve",
    "back_solve_steps",
    "learning_rate_guidance",
    "scale_learning_rate",
    "CalculatorError",
    "HostRamLoad",
    "host_ram_at_load",
    "GiB",
    "MemoryConfig",
    "MemoryEstimate",
    "estimate_memory",
    "make_config",
    "GPU_PRESETS",
    "MODEL_PRESETS",
    "ModelShape",
    "count_params",
    "get_gpu",
    "get_model_shape",
    "shape_from_hf_config",
    "SweepResult",
    "PEAK_TFLOPS",
    "Throughput",
    "training_throughput",
    "sweep",
    "TOOLS",
    "run_tool",
]
