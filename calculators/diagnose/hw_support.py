"""'Requires Ampere' errors on a GPU that is Ampere or newer: PyTorch does not see CUDA.

transformers raises ``--tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7`` when
``is_torch_tf32_available()`` is False, and (<= 4.34) ``Your setup doesn't support bf16/gpu`` when
``is_torch_bf16_gpu_available()`` is False (src/transformers/utils/import_utils.py, training_args.py). Both return False
first when ``torch.cuda.is_available()`` is False or ``torch.version.cuda`` is None, and only then check the compute
capability (>= 8.0). So on a GPU of compute capability 8.0+ (the presets' ``bf16`` flag: RTX 30/40, A10, A100/A800,
H100/H800/H20/H200, L4/L20/L40S, RTX A6000 — NVIDIA's CUDA GPUs table, developer.nvidia.com/cuda-gpus) the error
means PyTorch cannot use CUDA there (rl-swarm #199: an RTX 4090 that "meets the requirements"), not that the card
lacks the feature. On an older GPU (V100, T4, 2080 Ti) the cards' own cause stands, so no cause is added here.
"""

from __future__ import annotations

import re
from typing import Any

from ..presets import GPU_PRESETS
from .models import Artifact, Cause

#: The checks a library runs before it allows TF32 or bf16 (transformers' "--tf32 requires Ampere or a newer GPU arch",
#: "Your setup doesn't support bf16/gpu", PyTorch's "Bfloat16 is only supported on GPUs with compute capability of at
#: least 8.0"): group 1 is TF32's, group 2 bf16's. rag.opening reads the same wordings in a whole message.
AMPERE_CHECK = re.compile(
    r"(--tf32 requires ampere)|(requires ampere|support bf16/gpu|only supported on gpus with compute capability)",
    re.I,
)
#: Presets that are not NVIDIA GPUs (their bf16 flag says nothing about CUDA's checks).
_NOT_CUDA = frozenset({"mi300x", "ascend-910b"})


def causes(a: Artifact, setup: dict[str, Any]) -> list[Cause]:
    """The cause of an Ampere check that failed on a stated Ampere-or-newer GPU; [] otherwise."""
    text = f"{a.fields.get('exception', '')}: {a.fields.get('exception_message', '')}"
    m = AMPERE_CHECK.search(text)
    gpu = GPU_PRESETS.get(str(setup.get("gpu") or ""))
    if m is None or gpu is None or gpu.name in _NOT_CUDA or not gpu.bf16:
        return []
    what = "TF32" if m.group(1) else "bf16"
    name = gpu.name.upper().replace("RTX-", "RTX ")
    return [
        Cause(
            id="hw.cuda_not_visible",
            likelihood="likely",
            title_en=f"The {name} supports {what}: PyTorch does not see CUDA",
            title_zh=f"{name} 支持 {what}：是 PyTorch 没有用上 CUDA",
            because_en=f"The check fails on a GPU of compute capability 8.0 or newer such as the {name} only when "
            "`torch.cuda.is_available()` is False or PyTorch is a build without CUDA: a CPU-only wheel, a driver older "
            "than the wheel's CUDA, or `CUDA_VISIBLE_DEVICES` hiding the GPU.",
            because_zh=f"在 {name} 这类算力 ≥ 8.0 的卡上，这个检查只有在 `torch.cuda.is_available()` 为 False 或 PyTorch 是不带 CUDA 的"
            "版本时才会失败：装成了 CPU 版 PyTorch、驱动比 PyTorch 自带的 CUDA 旧，或 `CUDA_VISIBLE_DEVICES` 把卡藏起来了。",
            fix_en='Run `python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"`; '
            "install the CUDA build of PyTorch that your driver supports (`nvidia-smi` shows the highest CUDA version).",
            fix_zh='运行 `python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"`；'
            "安装与驱动匹配的 CUDA 版 PyTorch（`nvidia-smi` 显示驱动支持的最高 CUDA 版本）。",
            card_ids=["hw-tf32-requires-ampere" if what == "TF32" else "hw-bf16-requires-ampere"],
        )
    ]
