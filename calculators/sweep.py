"""Memory as one knob moves: the data behind the app's plots.

The accumulation-steps sweep is the picture that ends the argument: a flat line.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .errors import CalculatorError
from .memory import MemoryConfig, MemoryEstimate, as_config, estimate_memory, make_config

SWEEPABLE = (
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "zero_stage",
    "seq_len",
    "world_size",
    "gradient_checkpointing",
    "precision",
    "lora_rank",
    "flash_attention",
    "finetune",
    "optimizer",
)
MAX_POINTS = 256


class SweepPoint(BaseModel):
    value: Any
    estimate: MemoryEstimate


class SweepResult(BaseModel):
    field: str
    points: list[SweepPoint]
    gpu_capacity: int | None

    def series(self, category: str = "total_per_gpu") -> list[tuple[Any, int | None]]:
        """(value, bytes) pairs of one category, for plotting."""
        return [(p.value, getattr(p.estimate, category)) for p in self.points]


def sweep(config: MemoryConfig | dict[str, Any], field: str, values: list[Any]) -> SweepResult:
    """Estimate memory for each value of ``field``, everything else fixed."""
    base = as_config(config)
    if field not in SWEEPABLE:
        raise CalculatorError("field", field, ", ".join(SWEEPABLE), "、".join(SWEEPABLE))
    if not isinstance(values, (list, tuple)) or not 1 <= len(values) <= MAX_POINTS:
        raise CalculatorError(
            "values", values, f"a list of 1 to {MAX_POINTS} values", f"包含 1 到 {MAX_POINTS} 个值的列表"
        )
    data = base.model_dump()
    points = []
    for v in values:
        est = estimate_memory(make_config(**{**data, field: v}))
        points.append(SweepPoint(value=v, estimate=est))
    return SweepResult(field=field, points=points, gpu_capacity=points[0].estimate.gpu_capacity)
