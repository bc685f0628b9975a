"""PyTorch out-of-memory messages (CUDA, ROCm/HIP, Ascend NPU), old and new formats, and what their numbers say.

Formats read (c10/cuda/CUDACachingAllocator.cpp and torch_npu's copy of it):

* torch 1.x / 2.0: ``CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.69 GiB total capacity;
  22.10 GiB already allocated; 17.06 MiB free; 22.50 GiB reserved in total by PyTorch)`` — very old builds
  print ``… MiB cached)`` instead of ``reserved in total by PyTorch``; torch_npu adds ``current active``.
* torch >= 2.1: ``Tried to allocate 22.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 11.06 MiB is
  free. [Process N has X memory in use.]* Including non-PyTorch memory, this process has … in use. Of the
  allocated memory … is allocated by PyTorch, and … is reserved by PyTorch but unallocated.`` (2.1 spelled
  "capacty"; ROCm builds say "HIP out of memory" and ``PYTORCH_HIP_ALLOC_CONF``).

The causes separate fragmentation (reserved-but-unallocated memory at least the size of the request), other
processes on the GPU, one huge request (logits b·s·V·4 bytes or an attention matrix b·h·s²·2 bytes), and a
genuine shortfall (live tensors fill the card).
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import CalculatorError
from ..presets import ModelShape, count_params, get_model_shape
from ._text import SIZE, flex, fmt_gib, gib, line_at
from .models import Artifact, Cause

HEADLINE = re.compile(
    r"(?:\b(CUDA|HIP|NPU|XPU|MPS)?\s*(out of memory)\.?\s*)?Tried\s+to\s+allocate\s+" + SIZE, re.IGNORECASE
)
_OLD = flex(r"\((GPU|NPU) (\d{1,4}); " + SIZE + r" total capacity; " + SIZE + r" already allocated;")
_OLD_FREE = flex(SIZE + r" free;")
_OLD_RESERVED = flex(SIZE + r" reserved in total by PyTorch")
_OLD_CACHED = flex(SIZE + r" cached\)")
_NEW = flex(r"(?:GPU|NPU|device) (\d{1,4}) has a total capac(?:i)?ty of " + SIZE + r" of which " + SIZE + r" is free")
_OTHER_PROC = flex(r"Process (\d{1,10}) has " + SIZE + r" memory in use")
_THIS_PROC = flex(r"this process has " + SIZE + r" memory in use")
_ALLOC_NEW = flex(
    r"Of the allocated memory "
    + SIZE
    + r" is allocated by PyTorch, and "
    + SIZE
    + r" is reserved by PyTorch but unallocated"
)
_WINDOW = 1500

# Where the allocation failed, read from the traceback printed just before the message (the frames nearest the
# error come last). Moving the model onto the GPU (torch's Module.to → _apply → convert, the Trainer's
# _move_model_to_device, loading a state dict) fails before any batch exists: the weights alone do not fit.
_LOAD_FRAMES = re.compile(
    r'modules[/\\]module\.py", line \d+, in (?:convert|_apply)\b|return t\.to\(\s*device|'
    r"\bin (?:_move_model_to_device|_load_state_dict_into_meta_model|set_module_tensor_to_device|_load_from_state_dict)\b"
)
# Adam's step (torch/optim/adam.py and adamw.py: the states created at the first step, `state["exp_avg_sq"] =
# torch.zeros_like(…)` in _init_group, and the step's own arithmetic, `exp_avg_sq.sqrt()`, `torch._foreach_sqrt(
# device_exp_avg_sqs)` in _multi_tensor_adamw; DeepSpeed's initialize_optimizer_states): weights, gradients and one
# micro-batch's activations fit, the optimizer step does not (Qwen3-VL #2053, LLaMA-Factory #1221, llama-cookbook #234).
_OPTIMIZER_STEP = re.compile(
    r"\bexp_avg(?:_sq)?s?\b|\bin _(?:multi|single)_tensor_adamw?\b|"
    r'optim[/\\]adamw?\.py", line \d+, in (?:_init_group|step|adamw?)\b|\bin initialize_optimizer_states\b'
)
# The evaluation pass (transformers Trainer.evaluation_loop / prediction_step, Lightning's validation_step): training
# steps fit and the evaluation runs out on top of what training still holds.
_EVAL_FRAMES = re.compile(
    r"\bin (?:evaluation_loop|prediction_step|prediction_loop|_maybe_log_save_evaluate|validation_step|"
    r"_evaluation_step|evaluate)\b"
)
# Saving a checkpoint or the model (the HF Trainer's save_model / _save_checkpoint, PEFT's get_peft_model_state_dict,
# FSDP's full state-dict hook, DeepSpeed's 16-bit gather, torch.save): training fits, the save gathers or copies the
# sharded state on top of it (card oom-at-checkpoint-save).
_SAVE_FRAMES = re.compile(
    r"\bin (?:save_model|_save_checkpoint|save_checkpoint|_save|save_pretrained|get_peft_model_state_dict|"
    r"_full_post_state_dict_hook|_zero3_consolidated_16bit_state_dict|save_16bit_model|"
    r"safe_save_model_for_hf_trainer|_save_to_state_dict)\b|"
    r'serialization\.py", line \d+, in save\b'
)
# … the HF Trainer's own evaluation frames, where its logits accumulation is the usual cause
_HF_EVAL_FRAMES = re.compile(r"\bin (?:evaluation_loop|prediction_step|prediction_loop)\b")
_LOOKBACK = 2500
# The user's own words placing the OOM in evaluation ("cuda out of memory will appear during the validation process",
# mmsegmentation #2108; "验证阶段显存不足", "eval的时候爆显存").
_OOM_WORDS = r"(?:OOM|out of memory|显存不足|显存溢出|爆显存|显存爆)"
_EVAL_WORDS = r"(?:validation|evaluation|evaluating|validating|eval)"
_SAID_IN_EVAL = re.compile(
    _OOM_WORDS + r"[^.。!?？\n]{0,50}?(?<!not )(?<!n't )\b(?:during|in|at|when)\s+(?:the\s+)?" + _EVAL_WORDS + r"\b|"
    r"\b(?:during|in|at|when)\s+(?:the\s+)?" + _EVAL_WORDS + r"\b[^.。!?？\n]{0,50}?" + _OOM_WORDS + "|"
    r"(?:验证|评估|评测|eval)\s*(?:阶段|时|的时候|过程中|期间)[^。！？\n]{0,20}?" + _OOM_WORDS,
    re.I,
)


def said_in_evaluation(prose: str) -> bool:
    """Whether the user says the out-of-memory happens in the evaluation / validation pass."""
    return bool(_SAID_IN_EVAL.search(prose))


# The user's own words placing the OOM in the save ("model.save_pretrained保存模型的时候报了" (ChatGLM-Tuning #191),
# "在保存的那一步出现OOM错误" (Chinese-LLaMA-Alpaca-2 #283), "OOM when saving the model").
_SAVE_WORDS = r"sav(?:e|ing)\s+(?:the\s+|a\s+)?(?:final\s+)?(?:model|checkpoints?|weights|adapter)"
_SAID_IN_SAVE = re.compile(
    _OOM_WORDS + r"[^.。!?？\n]{0,50}?(?<!not )(?<!n't )\b(?:during|while|when|at)\s+" + _SAVE_WORDS + r"\b|"
    r"\b(?:during|while|when)\s+" + _SAVE_WORDS + r"\b[^.。!?？\n]{0,50}?" + _OOM_WORDS + "|"
    r"保存\s*(?:模型|checkpoint|权重|ckpt)?\s*(?:的)?\s*(?:时|的时候|过程中|期间|那一步|这一步|阶段)[^。！？\n]{0,20}?(?:"
    + _OOM_WORDS
    + "|报了)",
    re.I,
)


def said_while_saving(prose: str) -> bool:
    """Whether the user says the out-of-memory happens while saving a checkpoint or the model."""
    return bool(_SAID_IN_SAVE.search(prose))


def _phase(before: str, after: str) -> str | None:
    """What the run was doing when the allocation failed ("load", "optimizer_step", "save", "eval"), from the traceback
    ``before`` the message; the optimizer's own lines also ``after`` it, where a paste put the frame below the error."""
    if _OPTIMIZER_STEP.search(before) or _OPTIMIZER_STEP.search(after):
        return "optimizer_step"
    if _LOAD_FRAMES.search(before):
        return "load"
    if _SAVE_FRAMES.search(before):  # (before eval: the Trainer saves from _maybe_log_save_evaluate)
        return "save"
    if _EVAL_FRAMES.search(before):
        return "eval"
    return None


def _device(prefix: str | None, window: str) -> tuple[str, str]:
    p = (prefix or "CUDA").upper()
    if p == "HIP" or "PYTORCH_HIP_ALLOC_CONF" in window:
        return "HIP", "rocm"
    if p == "NPU" or "(NPU " in window:
        return "NPU", "ascend-npu"
    return p, "cuda"


def read(text: str) -> list[Artifact]:
    """Every OOM message in ``text``, with its numbers in GiB (``None`` where the paste was cut off)."""
    out: list[Artifact] = []
    heads = [
        m
        for m in HEADLINE.finditer(text)
        if m.group(2) or re.match(r"\s*(?:\((?:GPU|NPU) \d+;|\.\s*GPU \d+ has a total)", text[m.end() : m.end() + 40])
    ]
    # (start, end of the headline, device prefix, request in GiB) of every message; a torch >= 2.1 message pasted
    # without its "Tried to allocate …" headline (blog posts and issue titles often quote only "GPU 0 has a total
    # capacity of …") is still read, from its capacity sentence, with no request size.
    anchors: list[tuple[int, int, str | None, float | None]] = [
        (m.start(), m.end(), m.group(1), gib(m.group(3), m.group(4))) for m in heads
    ]
    covered = [(m.start(), m.start() + _WINDOW) for m in heads]
    for n in _NEW.finditer(text):
        if not any(a <= n.start() < b for a, b in covered):
            anchors.append((n.start(), n.start(), None, None))
            covered.append((n.start(), n.start() + _WINDOW))
    anchors.sort(key=lambda a: a[0])
    for i, (a_start, a_end, prefix, request) in enumerate(anchors):
        stop = anchors[i + 1][0] if i + 1 < len(anchors) else len(text)
        window = text[a_start : min(stop, a_start + _WINDOW)]
        dev, backend = _device(prefix, window)
        f: dict[str, Any] = {"oom_device": dev, "oom_backend": backend}
        # the traceback before this message, no further back than the end of the previous one
        before = text[max(anchors[i - 1][1] if i else 0, a_start - _LOOKBACK) : a_start]
        if phase := _phase(before, window):
            f["oom_phase"] = phase
            if phase == "eval" and _HF_EVAL_FRAMES.search(before):
                f["oom_eval_hf_trainer"] = True
        if request is not None:
            f["oom_request_gb"] = request
        hint = None
        end = a_end
        old = _OLD.search(window)
        new = _NEW.search(window)
        if old and (not new or old.start() < new.start()):
            hint = "torch<2.1 message format (… reserved in total by PyTorch)"
            f["oom_gpu_index"] = int(old.group(2))
            f["gpu_memory_gb"] = gib(old.group(3), old.group(4))
            f["oom_allocated_gb"] = gib(old.group(5), old.group(6))
            end = a_start + old.end()
            if fr := _OLD_FREE.search(window, old.end()):
                f["oom_free_gb"] = gib(fr.group(1), fr.group(2))
                end = max(end, a_start + fr.end())
            if rs := _OLD_RESERVED.search(window, old.end()):
                f["oom_reserved_gb"] = gib(rs.group(1), rs.group(2))
                end = max(end, a_start + rs.end())
            elif cs := _OLD_CACHED.search(window, old.end()):
                hint = "torch<=1.3 message format (… cached)"
                f["oom_cached_gb"] = gib(cs.group(1), cs.group(2))
                f["oom_reserved_gb"] = f["oom_allocated_gb"] + f["oom_cached_gb"]
                end = max(end, a_start + cs.end())
            if "oom_reserved_gb" not in f:
                f["oom_truncated"] = True
            else:
                f["oom_unallocated_gb"] = max(f["oom_reserved_gb"] - f["oom_allocated_gb"], 0.0)
            f["observed_memory_gb"] = f["oom_allocated_gb"]
        elif new:
            hint = "torch>=2.1 message format (… reserved by PyTorch but unallocated)"
            f["oom_gpu_index"] = int(new.group(1))
            f["gpu_memory_gb"] = gib(new.group(2), new.group(3))
            f["oom_free_gb"] = gib(new.group(4), new.group(5))
            end = a_start + new.end()
            if "capacty" in window[new.start() : new.end()]:
                hint = "torch 2.1 message format (spelled 'capacty')"
            others = [(int(p.group(1)), gib(p.group(2), p.group(3))) for p in _OTHER_PROC.finditer(window, new.end())]
            tp = _THIS_PROC.search(window, new.end())
            al = _ALLOC_NEW.search(window, new.end())
            if others and not tp and al:
                # Inside a container the PID namespace differs, so torch lists its own process by PID.
                reserved = gib(al.group(1), al.group(2)) + gib(al.group(3), al.group(4))
                own = [o for o in others if reserved <= o[1] <= reserved + 3.0]
                if len(own) == 1:
                    others.remove(own[0])
                    f["oom_process_in_use_gb"] = own[0][1]
                    f["oom_own_pid_listed"] = own[0][0]
            if others:
                f["oom_other_processes"] = [{"pid": pid, "gb": round(g, 3)} for pid, g in others]
                f["oom_other_processes_gb"] = sum(g for _, g in others)
            if tp:
                f["oom_process_in_use_gb"] = gib(tp.group(1), tp.group(2))
                f["observed_memory_gb"] = f["oom_process_in_use_gb"]
                end = max(end, a_start + tp.end())
            if al:
                f["oom_allocated_gb"] = gib(al.group(1), al.group(2))
                f["oom_unallocated_gb"] = gib(al.group(3), al.group(4))
                f["oom_reserved_gb"] = f["oom_allocated_gb"] + f["oom_unallocated_gb"]
                f.setdefault("observed_memory_gb", f.get("oom_process_in_use_gb", f["oom_reserved_gb"]))
            else:  # the message was cut before "Of the allocated memory …": read what is there
                f["oom_truncated"] = True
            if "oom_process_in_use_gb" in f and "oom_reserved_gb" in f:
                f["oom_non_pytorch_gb"] = max(f["oom_process_in_use_gb"] - f["oom_reserved_gb"], 0.0)
        else:
            f["oom_truncated"] = True
        f = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in f.items()}
        start = text.rfind("\n", 0, a_start) + 1
        out.append(
            Artifact(
                kind="cuda_oom",
                start=start,
                end=end,
                key_line=line_at(text, a_start),
                fields=f,
                framework="torch_npu" if backend == "ascend-npu" else "pytorch",
                version_hint=hint,
            )
        )
    return out


def _g(v: float) -> str:
    return fmt_gib(v)


def _preset_shape(setup: dict[str, Any]) -> ModelShape | None:
    """The shape of the model the setup names, when it is a preset."""
    if isinstance(setup.get("model"), str):
        try:
            return get_model_shape(setup["model"])
        except CalculatorError:
            return None
    return None


def _vocab(setup: dict[str, Any]) -> int | None:
    vocab = setup.get("vocab_size")
    if isinstance(vocab, int) and vocab > 0:
        return vocab
    return shape.vocab_size if (shape := _preset_shape(setup)) else None


def _params(setup: dict[str, Any]) -> float | None:
    """The model's parameter count: the one stated, else its preset's."""
    n = setup.get("num_params")
    if isinstance(n, (int, float)) and n > 0:
        return float(n)
    return float(count_params(shape)) if (shape := _preset_shape(setup)) else None


def _pos_int(setup: dict[str, Any], key: str) -> int | None:
    v = setup.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def _near(a: float, b: float, tol: float = 0.12) -> bool:
    return b > 0 and abs(a - b) / b <= tol


def causes(a: Artifact, setup: dict[str, Any]) -> list[Cause]:
    """Ranked causes for one OOM artifact, each with the numbers read from it."""
    f = a.fields
    req = f.get("oom_request_gb")  # None: the paste began after "Tried to allocate …"
    total = f.get("gpu_memory_gb")
    free = f.get("oom_free_gb")
    alloc = f.get("oom_allocated_gb")
    unalloc = f.get("oom_unallocated_gb")
    reserved = f.get("oom_reserved_gb")
    env = "PYTORCH_HIP_ALLOC_CONF" if f.get("oom_backend") == "rocm" else "PYTORCH_CUDA_ALLOC_CONF"
    if f.get("oom_backend") == "ascend-npu":
        env = "PYTORCH_NPU_ALLOC_CONF"
    out: list[Cause] = []
    phase = _phase_cause(
        f.get("oom_phase"), setup, said=bool(f.get("oom_phase_said")), hf_trainer=bool(f.get("oom_eval_hf_trainer"))
    )
    if total is None:
        return [phase] if phase else out

    # 0. the device reports more free memory than requested: the most telling fact when present
    if req is not None and free is not None and free >= 1.05 * req and free - req >= 0.2:
        clear = free >= req + 0.5 and free >= 1.25 * req
        out.append(
            Cause(
                id="oom.free_exceeds_request",
                likelihood="likely" if clear else "possible",
                title_en="The GPU reports more free memory than was requested",
                title_zh="显卡报告的空闲显存比申请的还多",
                because_en=f"{_g(free)} free but {_g(req)} could not be allocated: the free memory is not usable by this process "
                "(a per-process memory fraction, MIG/vGPU limits, or it is not contiguous), or another process took it "
                "between the check and the allocation.",
                because_zh=f"空闲 {_g(free)}，却分配不了 {_g(req)}：这部分空闲显存本进程用不了（进程显存上限、MIG/vGPU 限制或不连续），"
                "或者在检查与分配之间被其他进程占用。",
                fix_en="Check `torch.cuda.set_per_process_memory_fraction`, MIG/vGPU settings and other jobs on the GPU; try "
                f"`{env}=expandable_segments:True`.",
                fix_zh=f"检查 `torch.cuda.set_per_process_memory_fraction`、MIG/vGPU 设置以及该卡上的其他任务；可尝试 `{env}=expandable_segments:True`。",
                card_ids=["oom-cuda-context-fragmentation"],
            )
        )
    # 1. other processes on the same GPU
    others = f.get("oom_other_processes_gb")
    in_use = f.get("oom_process_in_use_gb")
    if others and others >= max(0.5, 0.05 * total):
        pids = ", ".join(str(p["pid"]) for p in f["oom_other_processes"][:4])
        out.append(
            Cause(
                id="oom.other_processes",
                likelihood="likely",
                title_en="Other processes hold memory on this GPU",
                title_zh="同一张卡上有其他进程占用显存",
                because_en=f"The message lists other processes (PID {pids}) using {_g(others)} of the {_g(total)} card; "
                f"your process had only {_g(in_use or reserved or 0)}.",
                because_zh=f"报错列出了其他进程（PID {pids}）占用 {_g(others)}（整卡 {_g(total)}）；你的进程只用了 {_g(in_use or reserved or 0)}。",
                fix_en="Stop or move the other processes (`nvidia-smi` shows them), or pin each job to its own GPU with "
                "`CUDA_VISIBLE_DEVICES`. In multi-GPU runs, a PID per rank on GPU 0 usually means some rank creates "
                "a CUDA context on GPU 0: call `torch.cuda.set_device(local_rank)` before any CUDA work.",
                fix_zh="结束或迁走这些进程（`nvidia-smi` 可见），或用 `CUDA_VISIBLE_DEVICES` 让每个任务独占一张卡。多卡训练中若 GPU 0 上"
                "每个 rank 各有一个 PID，通常是某些 rank 在 GPU 0 上建了 CUDA 上下文：在任何 CUDA 操作前调用 "
                "`torch.cuda.set_device(local_rank)`。",
                card_ids=["oom-cuda-context-fragmentation"],
            )
        )
    else:
        accounted = in_use if in_use is not None else (reserved if reserved is not None else None)
        if accounted is not None and free is not None:
            hidden = total - accounted - free
            limit = max(1.0, 0.12 * total) if in_use is not None else max(2.0, 0.2 * total)
            strong = in_use is not None or hidden >= max(4.0, 0.25 * total)
            if hidden >= limit:
                out.append(
                    Cause(
                        id="oom.other_processes",
                        likelihood="likely" if strong else "possible",
                        title_en="Memory used outside this process",
                        title_zh="显存被本进程以外占用",
                        because_en=f"Capacity {_g(total)} − this process {_g(accounted)} − free {_g(free)} leaves {_g(hidden)} "
                        "used by something else (another process, a display, or another rank's CUDA context).",
                        because_zh=f"总容量 {_g(total)} − 本进程 {_g(accounted)} − 空闲 {_g(free)}，还有 {_g(hidden)} 被别的东西占用"
                        "（其他进程、显示输出，或其他 rank 的 CUDA 上下文）。",
                        fix_en="Run `nvidia-smi` while the job runs and stop other processes on that GPU; give each job its own "
                        "GPU with `CUDA_VISIBLE_DEVICES`; in multi-GPU runs call `torch.cuda.set_device(local_rank)` early.",
                        fix_zh="训练时运行 `nvidia-smi` 查看并结束该卡上的其他进程；用 `CUDA_VISIBLE_DEVICES` 让任务独占显卡；多卡训练时尽早调用 "
                        "`torch.cuda.set_device(local_rank)`。",
                        card_ids=["oom-cuda-context-fragmentation"],
                    )
                )

    # 2. fragmentation: cached-but-unallocated memory at least as large as the request
    ver = "recent torch_npu" if f.get("oom_backend") == "ascend-npu" else "torch >= 2.1"
    frag_likely = unalloc is not None and req is not None and unalloc >= req and unalloc >= max(0.5, 0.05 * total)
    if unalloc is not None and (frag_likely or unalloc >= max(0.5, 0.1 * total)):
        likely = frag_likely
        out.append(
            Cause(
                id="oom.fragmentation",
                likelihood="likely" if likely else "possible",
                title_en="Fragmentation: memory is reserved by PyTorch but unusable for this request",
                title_zh="显存碎片：PyTorch 已预留但无法用于这次申请",
                because_en=f"{_g(unalloc)} is reserved by PyTorch but unallocated, "
                + (
                    f"more than the {_g(req)} requested: "
                    if likely and req is not None
                    else (f"while {_g(req)} was requested: " if req is not None else "a large share of the card: ")
                )
                + "the cached blocks are split into pieces too small for one contiguous block.",
                because_zh=f"PyTorch 预留但未分配的显存有 {_g(unalloc)}，"
                + (
                    f"比这次申请的 {_g(req)} 还多："
                    if likely and req is not None
                    else (f"这次申请 {_g(req)}：" if req is not None else "占了整卡不小的一部分：")
                )
                + "缓存块被切碎，凑不出一块连续的内存。",
                fix_en=f"Set `{env}=expandable_segments:True` before starting ({ver}; older: `max_split_size_mb:128`). "
                "Variable sequence lengths fragment most: bucket or pad to a few lengths.",
                fix_zh=f"启动前设置 `{env}=expandable_segments:True`（{ver}；更早版本用 `max_split_size_mb:128`）。"
                "序列长度变化大时碎片最严重：按长度分桶或填充到少数几种长度。",
                card_ids=["oom-cuda-context-fragmentation"],
            )
        )

    # 3. one huge request: logits or an attention matrix (a guess at what the tensor is, which a traceback in the
    # optimizer step, the model load or the evaluation loop answers instead)
    huge = (
        phase is None
        and req is not None
        and (req >= 0.2 * total or (free is not None and req > free + (unalloc or 0) + 0.5 and req >= 1.0))
    )
    if huge and req is not None:
        b, s, v = _pos_int(setup, "train_micro_batch_size_per_gpu"), _pos_int(setup, "seq_len"), _vocab(setup)
        heads = _pos_int(setup, "num_attention_heads")
        matched = None
        if b and s and v:
            for nbytes, label in ((4, "fp32"), (2, "bf16/fp16")):
                size = b * s * v * nbytes / 2**30
                if _near(req, size):
                    matched = ("oom.logits", size, f"{b}×{s}×{v}×{nbytes} B ({label})")
                    break
        if matched is None and b and s and heads:
            for nbytes in (4, 2):
                size = b * heads * s * s * nbytes / 2**30
                if _near(req, size):
                    matched = ("oom.attention_matrix", size, f"{b}×{heads}×{s}²×{nbytes} B")
                    break
        if matched and matched[0] == "oom.logits":
            out.append(
                Cause(
                    id="oom.logits",
                    likelihood="likely",
                    title_en="The request is the logits tensor (batch × sequence × vocabulary)",
                    title_zh="这次申请的是 logits 张量（批次 × 序列 × 词表）",
                    because_en=f"{_g(req)} matches {matched[2]} = {_g(matched[1])}: the logits (and their fp32 copy for the loss) "
                    "are the largest single tensors in LLM training.",
                    because_zh=f"{_g(req)} 与 {matched[2]} = {_g(matched[1])} 吻合：logits（及计算 loss 时的 fp32 副本）是大模型训练中最大的单个张量。",
                    fix_en="Lower the micro-batch or sequence length (raise gradient_accumulation_steps to keep the effective batch: "
                    "GA does not raise peak memory), or use a chunked/fused cross-entropy (e.g. Liger kernel, "
                    "`enable_liger_kernel`) that never materialises the full logits.",
                    fix_zh="降低微批次或序列长度（用更大的 gradient_accumulation_steps 保持有效批次：GA 不增加峰值显存），或使用分块/融合的"
                    "交叉熵（如 Liger kernel，`enable_liger_kernel`），不再生成完整 logits。",
                    card_ids=["oom-logits-large-vocab", "tune-micro-batch-then-ga"],
                )
            )
        elif matched:
            out.append(
                Cause(
                    id="oom.attention_matrix",
                    likelihood="likely",
                    title_en="The request is an attention score matrix (batch × heads × seq²)",
                    title_zh="这次申请的是注意力分数矩阵（批次 × 头数 × 序列²）",
                    because_en=f"{_g(req)} matches {matched[2]} = {_g(matched[1])}: eager attention materialises it; it grows with seq².",
                    because_zh=f"{_g(req)} 与 {matched[2]} = {_g(matched[1])} 吻合：eager 注意力会生成这个矩阵，随序列长度平方增长。",
                    fix_en='Use FlashAttention / SDPA (`attn_implementation="flash_attention_2"` or `"sdpa"`), which never stores it; '
                    "or shorten the sequence.",
                    fix_zh='使用 FlashAttention / SDPA（`attn_implementation="flash_attention_2"` 或 `"sdpa"`），不会存这个矩阵；或缩短序列。',
                    card_ids=["oom-attention-flash-attention"],
                )
            )
        else:
            out.append(
                Cause(
                    id="oom.huge_request",
                    likelihood="likely" if req >= 0.2 * total else "possible",
                    title_en="One very large tensor was requested",
                    title_zh="一次申请了一个非常大的张量",
                    because_en=f"A single {_g(req)} request on a {_g(total)} card"
                    + (f" with {_g(free)} free" if free is not None else "")
                    + ". In LLM training this is usually the logits (micro-batch × seq_len × vocab × 4 bytes) or "
                    "an eager attention matrix (micro-batch × heads × seq_len² × 2 bytes).",
                    because_zh=f"一次申请 {_g(req)}，整卡 {_g(total)}"
                    + (f"，空闲 {_g(free)}" if free is not None else "")
                    + "。大模型训练中这通常是 logits（微批次 × 序列长度 × 词表 × 4 字节）或 eager 注意力矩阵"
                    "（微批次 × 头数 × 序列长度² × 2 字节）。",
                    fix_en="Tell me micro-batch, sequence length and the model (vocabulary) to confirm which one. Either way: lower "
                    "micro-batch or sequence length (raise GA to keep the effective batch), use FlashAttention/SDPA, and a "
                    "chunked cross-entropy for large vocabularies.",
                    fix_zh="告诉我微批次、序列长度和模型（词表大小）即可确认是哪一个。两种情况都可以：降低微批次或序列长度（用更大的 GA 保持"
                    "有效批次），使用 FlashAttention/SDPA，大词表使用分块交叉熵。",
                    card_ids=["oom-logits-large-vocab", "oom-attention-flash-attention"],
                )
            )

    # 4. genuine shortfall: live tensors fill the card and the request is ordinary
    crowded = any(c.id == "oom.other_processes" and c.likelihood == "likely" for c in out)
    short = (
        alloc is not None
        and not huge
        and not (unalloc is not None and frag_likely)
        and (alloc >= 0.75 * total or (free is not None and free - (req or 0.0) < 0.2 and not crowded))
    )
    if phase is not None:
        out.append(phase)  # where it failed says more than "live tensors fill the card"
    elif short and alloc is not None:  # (short implies it; said again for the type checker)
        num_params = setup.get("num_params")
        extra_en = extra_zh = ""
        if isinstance(num_params, (int, float)) and num_params > 0 and setup.get("finetune") in (None, "full"):
            states = 16 * num_params / 2**30
            extra_en = (
                f" Full fine-tuning with mixed-precision Adam needs about 16 bytes/parameter of model states: "
                f"{num_params / 1e9:.3g}B params → {_g(states)} before activations."
            )
            extra_zh = f" 混合精度 Adam 全参微调的模型状态约 16 字节/参数：{num_params / 1e9:.3g}B 参数 → {_g(states)}（不含激活）。"
        out.append(
            Cause(
                id="oom.model_states",
                likelihood="possible" if crowded or alloc < 0.5 * total else "likely",
                title_en="Genuine shortfall: live tensors fill the GPU",
                title_zh="确实不够：存活张量占满了显存",
                because_en=f"PyTorch had {_g(alloc)} allocated of {_g(total)} "
                + (f"when a further {_g(req)} was requested" if req is not None else "when the allocation failed")
                + (
                    f", with only {_g(unalloc)} reserved but unallocated (not fragmentation)"
                    if unalloc is not None and unalloc < max(0.5, 0.1 * total)
                    else ""
                )
                + ": model states (weights, gradients, optimizer) plus one micro-batch's activations do not fit."
                + extra_en,
                because_zh=f"PyTorch 已分配 {_g(alloc)}（整卡 {_g(total)}），"
                + (f"再申请 {_g(req)} 失败" if req is not None else "分配失败")
                + (
                    f"，预留未分配的只有 {_g(unalloc)}（不是碎片）"
                    if unalloc is not None and unalloc < max(0.5, 0.1 * total)
                    else ""
                )
                + "：模型状态（权重、梯度、优化器）加一个"
                "微批次的激活放不下。" + extra_zh,
                fix_en="Reduce the micro-batch (and raise gradient_accumulation_steps to keep the effective batch — GA does not raise "
                "peak memory), enable gradient checkpointing, shard with ZeRO-2/3 or FSDP across GPUs, offload the optimizer, "
                "or use LoRA/QLoRA.",
                fix_zh="减小微批次（同时增大 gradient_accumulation_steps 保持有效批次——GA 不增加峰值显存），开启梯度检查点，用 ZeRO-2/3 或 "
                "FSDP 在多卡间分片，把优化器 offload 到 CPU，或改用 LoRA/QLoRA。",
                card_ids=_shortfall_cards(setup.get("finetune"), bool(extra_en)),
            )
        )

    return out


def _phase_cause(
    phase: str | None, setup: dict[str, Any], said: bool = False, hf_trainer: bool = False
) -> Cause | None:
    """The cause that where the allocation failed points to (moving the model onto the GPU, Adam's step, the
    evaluation loop): in each, the training micro-batch is not what ran out, so the usual "lower the batch" does not
    help and the cause says what does. ``said``: the user's words placed it there, not a traceback; ``hf_trainer``:
    the traceback is in the HF Trainer's evaluation loop (its logits card first, else the custom-loop card)."""
    if phase == "load":
        return Cause(
            id="oom.at_load",
            likelihood="likely",
            title_en="Out of memory while moving the model onto the GPU, before any batch",
            title_zh="把模型搬到 GPU 上时就显存不足（还没开始跑任何 batch）",
            because_en="The traceback ends in moving the weights to the device (Module.to → convert / loading the state "
            "dict): the weights of every model this process places on the GPU do not fit. Micro-batch, sequence length "
            "and LoRA rank play no part yet. Pipelines that load several models per GPU (RLHF/PPO: actor, reference, "
            "critic and reward) or load in fp32 hit this first.",
            because_zh="调用栈停在把权重搬到设备上（Module.to → convert / 加载 state dict）：这个进程放到这张卡上的所有模型的"
            "权重本身就放不下。此时微批次、序列长度和 LoRA rank 都还没起作用。每张卡加载多个模型的流程（RLHF/PPO："
            "actor、reference、critic、reward）或以 fp32 加载时最先遇到。",
            fix_en="Load in bf16/fp16 (torch_dtype) instead of fp32; shard the weights at load time with ZeRO-3 "
            "(zero.Init: the Trainer does it when the DeepSpeed config is set before from_pretrained); put fewer or "
            "smaller models on each GPU (offload the reference/reward models, use a smaller critic); or use a GPU with "
            "more memory. Lowering the batch does not help here.",
            fix_zh="用 bf16/fp16（torch_dtype）而不是 fp32 加载；用 ZeRO-3 在加载时就分片权重（zero.Init：在 from_pretrained "
            "之前设置好 DeepSpeed 配置时 Trainer 会这样做）；每张卡放更少或更小的模型（offload reference/reward 模型、"
            "用更小的 critic）；或换显存更大的卡。这里减小 batch 没有用。",
            card_ids=["zero3-load-time-memory-peak", "oom-memory-budget-breakdown"],
        )
    if phase == "optimizer_step":
        trainable = _params(setup) if setup.get("finetune") in (None, "full") else None
        extra_en = extra_zh = ""
        if isinstance(trainable, (int, float)) and trainable > 0:
            states = 8 * trainable / 2**30
            extra_en = (
                f" For {trainable / 1e9:.3g}B trainable parameters the two moments are {_g(states)} before sharding."
            )
            extra_zh = f" {trainable / 1e9:.3g}B 可训练参数的两个动量即 {_g(states)}（未分片时）。"
        return Cause(
            id="oom.optimizer_step",
            likelihood="likely",
            title_en="Out of memory inside the optimizer step: Adam's states and the step's temporaries",
            title_zh="显存不足发生在优化器更新（optimizer.step）里：Adam 的状态和更新时的临时张量",
            because_en="The traceback is in Adam's step (exp_avg / exp_avg_sq). Adam's two fp32 moments take 8 bytes per "
            "trainable parameter and are created at the first optimizer.step(); the default foreach implementation on "
            "CUDA also needs about one more parameter-sized set of temporaries during the step (torch.optim docs). The "
            "weights, gradients and one micro-batch's activations fit; the step does not." + extra_en,
            because_zh="调用栈停在 Adam 的 step 里（exp_avg / exp_avg_sq）。Adam 的两个 fp32 动量每个可训练参数占 8 字节，"
            "在第一次 optimizer.step() 时才创建；CUDA 上默认的 foreach 实现在更新时还要多约一份参数大小的临时张量"
            "（torch.optim 文档）。权重、梯度和一个微批次的激活放得下，更新这一步放不下。" + extra_zh,
            fix_en="Shard the optimizer states across GPUs (ZeRO-1/2/3 or FSDP), offload them to CPU (ZeRO-Offload), use "
            "an 8-bit optimizer, or train fewer parameters (LoRA); `foreach=False` trims the step's temporaries. "
            "Lowering the micro-batch frees activations, not optimizer states.",
            fix_zh="把优化器状态分片到多卡（ZeRO-1/2/3 或 FSDP）、offload 到 CPU（ZeRO-Offload）、用 8-bit 优化器，或少训练一些参数"
            "（LoRA）；`foreach=False` 可以省掉更新时的临时张量。减小微批次省的是激活，不是优化器状态。",
            card_ids=["zero-stages-memory-savings", "zero-offload-cpu", "eight-bit-optimizers"],
        )
    if phase == "save":
        return Cause(
            id="oom.at_save",
            likelihood="likely",
            title_en="Out of memory while saving a checkpoint or the model, not in a training step",
            title_zh="显存不足发生在保存 checkpoint / 模型时，不是训练步",
            because_en=(
                "You say it runs out while saving"
                if said
                else "The traceback runs through the save (save_model / _save_checkpoint / state_dict)"
            )
            + ": training fits, and saving gathers or copies the sharded state on top of what training holds. A full "
            "FSDP state dict without offload_to_cpu and rank0_only materialises every parameter on every GPU; PEFT's "
            "save_pretrained calls state_dict() on the whole model before keeping the adapter; rank-0 full saves "
            "(FSDP, ZeRO-3's 16-bit gather) need the whole model in one process's host RAM.",
            because_zh=(
                "你说是在保存时显存不足" if said else "调用栈经过保存（save_model / _save_checkpoint / state_dict）"
            )
            + "：训练放得下，保存时要在训练占用之上再把分片的状态收集或拷贝出来。FSDP 的完整 state_dict 不加 offload_to_cpu "
            "和 rank0_only 时每张卡都聚合出全部参数；PEFT 的 save_pretrained 先对整个模型调用 state_dict() 再筛出 adapter；"
            "rank 0 完整保存（FSDP、ZeRO-3 的 16 位收集）要在一个进程的主机内存里放下整个模型。",
            fix_en="Under FSDP save with FullStateDictConfig(offload_to_cpu=True, rank0_only=True), or save a "
            "SHARDED_STATE_DICT and merge it offline; skip the optimizer state (save_only_model=True, transformers >= "
            "4.36) and save less often; under ZeRO-3 turn off stage3_gather_16bit_weights_on_model_save and run "
            "zero_to_fp32.py afterwards. Lowering the training micro-batch does not help here.",
            fix_zh="FSDP 下用 FullStateDictConfig(offload_to_cpu=True, rank0_only=True) 保存，或保存 SHARDED_STATE_DICT 之后离线"
            "合并；不存优化器状态（save_only_model=True，transformers >= 4.36）并降低保存频率；ZeRO-3 下关掉 "
            "stage3_gather_16bit_weights_on_model_save，事后用 zero_to_fp32.py 合并。这里减小训练的微批次没有用。",
            card_ids=["oom-at-checkpoint-save", "fsdp-sharded-checkpoint-merge"],
        )
    if phase == "eval":
        return Cause(
            id="oom.at_eval",
            likelihood="likely",
            title_en="Out of memory in the evaluation pass, not in a training step",
            title_zh="显存不足发生在评估（evaluation）阶段，不是训练步",
            because_en=(
                "You say it runs out during evaluation"
                if said
                else "The traceback runs through the evaluation loop (evaluation_loop / prediction_step / validation_step)"
            )
            + ": training steps fit, and evaluation runs out on top of what training still holds. The HF "
            "Trainer keeps every evaluation batch's logits (micro-batch × sequence × vocabulary) on the GPU until "
            "eval_accumulation_steps moves them to the CPU (unset: all of them, to the end); per_device_eval_batch_size "
            "(default 8) is separate from the training batch; generate() in evaluation adds a KV cache.",
            because_zh=(
                "你说是在评估阶段显存不足"
                if said
                else "调用栈经过评估循环（evaluation_loop / prediction_step / validation_step）"
            )
            + "：训练步放得下，评估在训练仍"
            "占着的显存之上又申请。HF Trainer 会把每个评估 batch 的 logits（微批次 × 序列长度 × 词表）留在 GPU 上，直到 "
            "eval_accumulation_steps 把它们搬到 CPU（不设置则一直累积到评估结束）；per_device_eval_batch_size（默认 8）"
            "与训练 batch 无关；评估里调用 generate() 还要 KV cache。",
            fix_en="Set eval_accumulation_steps (1–8) and preprocess_logits_for_metrics (e.g. argmax) so full logits are "
            "not kept; lower per_device_eval_batch_size; in a custom loop run evaluation under torch.no_grad() and move "
            "outputs to the CPU. Lowering the training micro-batch does not help here.",
            fix_zh="设置 eval_accumulation_steps（1–8）和 preprocess_logits_for_metrics（如取 argmax），不保留完整 logits；"
            "调小 per_device_eval_batch_size；自己写的循环里评估要放在 torch.no_grad() 下并把输出搬到 CPU。这里减小训练"
            "的微批次没有用。",
            card_ids=(
                ["mem-eval-oom-accumulated-logits", "eval-oom-custom-loop-no-grad"]
                if hf_trainer
                else ["eval-oom-custom-loop-no-grad", "mem-eval-oom-accumulated-logits"]
            ),
        )
    return None


#: The card that explains the model states of a run with each adapter method (what the weights, gradients and
#: optimizer of the run are made of), cited with the genuine-shortfall cause.
_METHOD_STATES_CARD = {"lora": "lora-memory-breakdown", "qlora": "qlora-memory"}


def _shortfall_cards(finetune: Any, states_figure: bool) -> list[str]:
    """The cards of a genuine shortfall: the memory budget first, then what the run's model states are made of — the
    adapter method's card for LoRA/QLoRA, else the 16 bytes/parameter card when the cause quotes that figure and the
    ZeRO card that shards it. (The GA myth card is not among them: the message did not say that lowering GA saves
    memory, and rag.intents cites it when it does.)"""
    if finetune in _METHOD_STATES_CARD:
        return ["oom-memory-budget-breakdown", _METHOD_STATES_CARD[finetune]]
    if states_figure:
        return ["oom-memory-budget-breakdown", "mixed-precision-bytes-per-param", "zero-stages-memory-savings"]
    return ["oom-memory-budget-breakdown", "zero-stages-memory-savings"]
