"""Diagnose what users paste: OOM messages, DeepSpeed/HF/Accelerate errors, SIGKILLs, launch commands,
nvidia-smi tables and training logs. Pure Python + pydantic (no torch import).

>>> d = diagnose("AssertionError: Check batch related parameters. train_batch_size is not equal to "
...              "micro_batch_per_gpu * gradient_acc_step * world_size 256 != 4 * 8 * 1")
>>> d.causes[0].id
'ds.world_size_mismatch'
"""

from .causes import MAX_CHARS, detect_artifacts, diagnose
from .models import Artifact, ArtifactKind, Cause, Diagnosis

__all__ = ["Artifact", "ArtifactKind", "Cause", "Diagnosis", "detect_artifacts", "diagnose", "MAX_CHARS"]
