"""Run every reader over a paste, then rank the causes they give: the entry point ``diagnose``.

Readers never raise on odd text; the orchestration bounds the work (only the last ``MAX_CHARS`` characters of
a huge paste are read — errors sit at the end of logs) and explains in both languages what it could not read.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from typing import Any

from ..errors import CalculatorError
from ..lang import Lang
from ..units import format_gib_value
from . import deepspeed_errors, host_kill, hw_support, launch, nccl, nvidia_smi, oom, train_log
from ._text import line_at, safe
from .models import Artifact, Cause, Diagnosis

MAX_CHARS = 200_000
#: At most this many artifacts of one kind are kept (the first 5 and the last 15): a log repeating one error
#: thousands of times must not produce a response thousands of artifacts long.
PER_KIND_HEAD, PER_KIND_TAIL = 5, 15
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):")
# "Error: ValueError: --tf32 requires …" (an issue title that prefixes the exception line, rl-swarm #199) is that line.
_EXC_LINE = re.compile(
    r"^\s*(?:\[rank\d+\]:\s*)?(?:[Ee]rror\s*:\s*)?((?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt)):\s?(.{0,300})$",
    re.MULTILINE,
)
_SETUP_KEYS = (
    "model",
    "num_params",
    "gpu",
    "gpu_memory_gb",
    "world_size",
    "num_nodes",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "train_batch_size",
    "zero_stage",
    "offload_optimizer",
    "offload_param",
    "precision",
    "seq_len",
    "finetune",
    "pipeline_parallel_size",
    "tensor_parallel_size",
    "observed_memory_gb",
    "vocab_size",
    "num_attention_heads",
    "lora_rank",
)


def _tracebacks(text: str, covered: list[Artifact]) -> list[Artifact]:
    """Python exceptions not already explained by a specific reader (kind traceback / unknown_error)."""
    out: list[Artifact] = []
    spans = [(a.start, a.end) for a in covered]
    seen: set[str] = set()
    for m in _EXC_LINE.finditer(text):
        exc, msg = m.group(1), m.group(2).strip()
        if (
            any(s - 300 <= m.start() <= e + 50 for s, e in spans)
            or exc in ("ChildFailedError",)
            or exc.endswith("ChildFailedError")
        ):
            continue
        if re.search(r"out of memory|OutOfMemoryError", exc + msg, re.IGNORECASE):
            continue
        key = f"{exc}: {msg[:120]}"
        if key in seen:
            continue
        seen.add(key)
        tb = _TRACEBACK.search(text, max(0, m.start() - 20_000), m.start())
        out.append(
            Artifact(
                kind="traceback" if tb else "unknown_error",
                start=tb.start() if tb else m.start(),
                end=m.end(),
                key_line=line_at(text, m.start()),
                fields={"exception": exc, "exception_message": msg[:300]},
                framework=None,
            )
        )
    return out[:5]


def detect_artifacts(text: str, shell_vars: dict[str, str] | None = None) -> list[Artifact]:
    """Every recognised piece of ``text`` in order of position; ``[]`` when nothing is recognised. Never raises.
    ``shell_vars``: variables the message set before ``text``, for ``$NAME`` in a launch command."""
    if not isinstance(text, str) or not text.strip():
        return []
    offset = max(0, len(text) - MAX_CHARS)
    body = text[offset:]
    found: list[Artifact] = []
    for reader in (
        oom.read,
        deepspeed_errors.read,
        host_kill.read,
        functools.partial(launch.read, shell_vars=shell_vars),
        nvidia_smi.read,
        train_log.read,
        train_log.read_banner,
        nccl.read,
    ):
        try:
            found.extend(reader(body))
        except Exception:  # a reader bug must not turn a paste into a traceback; the others still report
            continue
    with contextlib.suppress(Exception):
        found.extend(_tracebacks(body, found))
    found = _cap_per_kind(_drop_repeats(sorted(found, key=lambda a: (a.start, a.end))))
    if offset:
        found = [a.model_copy(update={"start": a.start + offset, "end": a.end + offset}) for a in found]
    return found


# Error kinds whose repeat says nothing new: the same message pasted as the issue title and again in the body.
_ONE_EACH = frozenset({"cuda_oom", "deepspeed_batch_assert", "config_error", "host_oom_kill", "nccl_timeout"})


def _drop_repeats(arts: list[Artifact]) -> list[Artifact]:
    """Keep the first of several errors with the same kind and the same values read from them.

    Users often paste an error into the title and again in the body; showing it twice under "What I read" wastes the
    first screen. Errors that differ in any value (another GPU index, another request size) are all kept.
    """
    seen: set[str] = set()
    out: list[Artifact] = []
    for a in arts:
        if a.kind in _ONE_EACH:
            key = a.kind + json.dumps(a.fields, sort_keys=True, default=str)
            if key in seen:
                continue
            seen.add(key)
        out.append(a)
    return out


def _cap_per_kind(arts: list[Artifact]) -> list[Artifact]:
    by_kind: dict[str, list[Artifact]] = {}
    for a in arts:
        by_kind.setdefault(a.kind, []).append(a)
    keep: set[int] = set()
    for same in by_kind.values():
        chosen = same if len(same) <= PER_KIND_HEAD + PER_KIND_TAIL else same[:PER_KIND_HEAD] + same[-PER_KIND_TAIL:]
        keep.update(id(a) for a in chosen)
    return [a for a in arts if id(a) in keep]


def _clean_setup(setup: Any) -> dict[str, Any]:
    if setup is None:
        return {}
    if not isinstance(setup, dict):
        raise CalculatorError(
            "setup",
            setup,
            "a dict of known values (model, world_size, seq_len, …) or nothing",
            "已知取值组成的字典（model、world_size、seq_len 等）或留空",
        )
    return {k: v for k, v in setup.items() if isinstance(k, str) and k in _SETUP_KEYS}


def _merged_setup(setup: dict[str, Any], artifacts: list[Artifact]) -> dict[str, Any]:
    """What the chat knows, completed by what the paste states (the chat's values win)."""
    merged: dict[str, Any] = {}
    for a in artifacts:
        for k, v in a.fields.items():
            if k in _SETUP_KEYS and k != "observed_memory_gb":
                merged.setdefault(k, v)
    merged.update(setup)
    return merged


_ORDER = {"likely": 0, "possible": 1}
#: torch.nn.DataParallel's gather warning: the HF Trainer wraps the model in DataParallel when several GPUs are
#: visible to a single process (a plain ``python`` launch), which piles activations and outputs onto GPU 0.
_DATAPARALLEL = re.compile(r"Was asked to gather along dimension 0, but all\s+input tensors were scalars")


def _dataparallel_cause() -> Cause:
    return Cause(
        id="launch.dataparallel",
        likelihood="likely",
        title_en="One process drives several GPUs with DataParallel",
        title_zh="单进程用 DataParallel 驱动多张卡",
        because_en='The warning "Was asked to gather along dimension 0" comes from torch.nn.DataParallel: the script was started '
        "with `python` while several GPUs were visible, so the HF Trainer replicated the model on every GPU and gathers "
        "outputs on GPU 0 — that GPU fills first, and memory is not pooled.",
        because_zh='警告 "Was asked to gather along dimension 0" 来自 torch.nn.DataParallel：脚本用 `python` 启动且可见多张卡，HF Trainer '
        "会在每张卡上复制模型并把输出汇总到 GPU 0——0 号卡先爆，显存也不会合并。",
        fix_en="For one GPU set `CUDA_VISIBLE_DEVICES=0`; for several use `torchrun --nproc_per_node N` (DDP) or DeepSpeed/FSDP.",
        fix_zh="单卡训练设置 `CUDA_VISIBLE_DEVICES=0`；多卡用 `torchrun --nproc_per_node N`（DDP）或 DeepSpeed/FSDP。",
        card_ids=["myth-more-gpus-pools-memory"],
    )


def _rank(causes: list[Cause]) -> list[Cause]:
    best: dict[str, Cause] = {}
    for c in causes:
        if c.id not in best or _ORDER[c.likelihood] < _ORDER[best[c.id].likelihood]:
            best[c.id] = c
    kept = list(best.values())
    return sorted(kept, key=lambda c: (_ORDER[c.likelihood], causes.index(c)))


_ACCEPTED_EN = (
    "PyTorch CUDA/HIP/NPU out-of-memory messages, DeepSpeed batch assertions and config errors, HF Trainer/DeepSpeed "
    "mismatch errors, exit code -9 / SIGKILL, torchrun / deepspeed / accelerate / llamafactory-cli commands, "
    "nvidia-smi tables, Trainer {'loss': …} logs and DeepSpeed step/OVERFLOW lines"
)
_ACCEPTED_ZH = (
    "PyTorch CUDA/HIP/NPU 显存不足报错、DeepSpeed batch 断言与配置错误、HF Trainer/DeepSpeed 取值不一致报错、退出码 -9 / SIGKILL、"
    "torchrun / deepspeed / accelerate / llamafactory-cli 启动命令、nvidia-smi 表格、Trainer {'loss': …} 日志以及 DeepSpeed "
    "step/OVERFLOW 行"
)


def _said_phase(context: str) -> str | None:
    """Where the user's words place an OOM whose traceback does not show it: the save, else evaluation."""
    if oom.said_while_saving(context):
        return "save"
    return "eval" if oom.said_in_evaluation(context) else None


def _with_context(artifacts: list[Artifact], context: str) -> list[Artifact]:
    """Values a summary needs that the user wrote around the paste: the example count their data has, the LR schedule
    they set, and that an OOM whose traceback does not show where it failed happened while saving or in evaluation."""
    out = []
    for a in artifacts:
        if a.kind == "cuda_oom" and "oom_phase" not in a.fields and (said := _said_phase(context)):
            a = a.model_copy(update={"fields": {**a.fields, "oom_phase": said, "oom_phase_said": True}})
        if (
            a.kind == "trainer_log"
            and "named_decay_schedule" not in a.fields
            and (decay := train_log.decay_schedule(context))
        ):
            # `--lr_scheduler_type "cosine"` written in the prose beside the pasted log (Qwen #672)
            a = a.model_copy(update={"fields": {**a.fields, "named_decay_schedule": decay}})
        if a.kind == "trainer_banner" and "banner_user_examples" not in a.fields:
            mine = train_log.user_example_count(context, a.fields["banner_examples"])
            if mine:
                a = a.model_copy(update={"fields": {**a.fields, "banner_user_examples": mine}})
        out.append(a)
    return out


def diagnose(text: str, *, lang: Lang = "en", setup: dict[str, Any] | None = None, context: str = "") -> Diagnosis:
    """Read ``text``, rank the likely causes with the user's numbers, and say what could not be read.

    ``setup`` carries values the chat already knows (setup vocabulary, e.g. ``model``, ``seq_len``,
    ``train_micro_batch_size_per_gpu``); they sharpen numbers such as the logits size. Raises
    :class:`CalculatorError` only for a non-string ``text``/bad ``setup``; any string gets a Diagnosis.
    """
    if not isinstance(text, str):
        raise CalculatorError("text", type(text).__name__, "the pasted text (a string)", "粘贴的文本（字符串）")
    if lang not in ("en", "zh"):
        raise CalculatorError("lang", lang, "'en' or 'zh'", "'en' 或 'zh'")
    known = _clean_setup(setup)
    if not text.strip():
        return Diagnosis(
            unrecognised_en="Nothing was pasted. Paste an error message, log, launch command or nvidia-smi output.",
            unrecognised_zh="没有粘贴任何内容。请粘贴报错信息、日志、启动命令或 nvidia-smi 输出。",
        )
    artifacts = detect_artifacts(text)
    if context:
        artifacts = _with_context(artifacts, context)
    ctx = _merged_setup(known, artifacts)
    found: list[Cause] = []
    for a in artifacts:
        try:
            if a.kind == "cuda_oom":
                found += oom.causes(a, ctx)
            elif a.kind in ("deepspeed_batch_assert", "config_error"):
                found += deepspeed_errors.causes(a, artifacts)
            elif a.kind == "host_oom_kill":
                found += host_kill.causes(a, ctx, artifacts)
            elif a.kind == "launch_command":
                found += launch.causes(a)
            elif a.kind == "nvidia_smi":
                found += nvidia_smi.causes(a)
            elif a.kind in ("trainer_log", "trainer_banner", "deepspeed_log"):
                found += train_log.causes(a)
            elif a.kind == "nccl_timeout":
                found += nccl.causes(a)
            elif a.kind in ("traceback", "unknown_error"):
                found += hw_support.causes(a, ctx)
        except CalculatorError:
            continue
    if _DATAPARALLEL.search(text[-MAX_CHARS:]):
        found.insert(0, _dataparallel_cause())
    notes_en: list[str] = []
    notes_zh: list[str] = []
    if len(text) > MAX_CHARS:
        notes_en.append(
            f"The paste has {len(text):,} characters; I read only the last {MAX_CHARS:,} (errors are usually at the end)."
        )
        notes_zh.append(f"粘贴内容共 {len(text):,} 个字符；我只读取了最后 {MAX_CHARS:,} 个（报错通常在末尾）。")
    for a in artifacts:
        if a.kind == "cuda_oom" and a.fields.get("oom_truncated"):
            notes_en.append(
                f"The out-of-memory message looks cut off after the request ({format_gib_value(a.fields['oom_request_gb'])}): paste "
                "the whole message (capacity, free, allocated, reserved) to tell fragmentation from a real shortfall."
            )
            notes_zh.append(
                f"显存不足报错在申请大小（{format_gib_value(a.fields['oom_request_gb'])}）之后被截断：请粘贴完整报错（容量、空闲、已分配、"
                "已预留），才能区分碎片和真正不够。"
            )
        if a.kind in ("traceback", "unknown_error"):
            exc = safe(a.fields["exception"], 60)
            notes_en.append(
                f"I recognised the error {exc} but have no diagnosis for it yet; the search over the knowledge cards may help."
            )
            notes_zh.append(f"我识别出了错误 {exc}，但还没有针对它的诊断；可以参考知识卡片的检索结果。")
    if not artifacts:
        notes_en.append(
            "I did not recognise an error, log, command or nvidia-smi table in this text. I can read: "
            + _ACCEPTED_EN
            + "."
        )
        notes_zh.append("没有在这段文本中识别出报错、日志、命令或 nvidia-smi 表格。我能读取：" + _ACCEPTED_ZH + "。")
    return Diagnosis(
        artifacts=artifacts,
        causes=_rank(found),
        unrecognised_en=" ".join(notes_en) or None,
        unrecognised_zh=" ".join(notes_zh) or None,
    )
