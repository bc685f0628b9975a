"""A Diagnosis as Markdown: what was read (shown back so the user sees it understood), then causes and fixes.

Every value that came from the paste goes through ``calculators.text_safety.escape_md``; cause texts were built
with user strings already escaped (``_text.safe``) and otherwise contain only our wording and numbers.
"""

from __future__ import annotations

from typing import Any

from ..i18n import t
from ..lang import Lang, as_lang
from ..text_safety import code_span_text, escape_md
from .models import Artifact, Diagnosis

_KIND = {
    "cuda_oom": ("GPU out-of-memory error", "显存不足报错"),
    "deepspeed_batch_assert": ("DeepSpeed batch assertion", "DeepSpeed batch 断言"),
    "config_error": ("Configuration error", "配置错误"),
    "host_oom_kill": ("Process killed (SIGKILL / -9)", "进程被杀（SIGKILL / -9）"),
    "launch_command": ("Launch command", "启动命令"),
    "nvidia_smi": ("nvidia-smi table", "nvidia-smi 表格"),
    "trainer_log": ("Trainer log", "Trainer 日志"),
    "trainer_banner": ("Trainer start-up summary", "Trainer 启动摘要"),
    "deepspeed_log": ("DeepSpeed log", "DeepSpeed 日志"),
    "nccl_timeout": ("NCCL watchdog timeout", "NCCL 看门狗超时"),
    "traceback": ("Python traceback", "Python 报错堆栈"),
    "unknown_error": ("Error line", "报错行"),
}
_SHOWN = {
    "cuda_oom": [
        "oom_device",
        "oom_request_gb",
        "gpu_memory_gb",
        "oom_free_gb",
        "oom_allocated_gb",
        "oom_reserved_gb",
        "oom_unallocated_gb",
        "oom_process_in_use_gb",
        "oom_other_processes_gb",
        "oom_non_pytorch_gb",
    ],
    "deepspeed_batch_assert": [
        "train_batch_size",
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
        "ds_world_size_seen",
    ],
    "config_error": ["config_error"],
    "host_oom_kill": ["host_signal", "offload_optimizer", "offload_param", "zero_stage", "host_cpu_needed_gb"],
    "launch_command": [
        "launcher",
        "world_size",
        "num_nodes",
        "visible_devices",
        "config_file",
        "ds_include",
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
        "precision",
    ],
    "nvidia_smi": ["gpu", "gpu_memory_gb"],
    "trainer_log": ["log_points"],
    "trainer_banner": ["banner_examples", "banner_epochs", "banner_total_batch", "banner_steps"],
    "deepspeed_log": ["ds_overflow_events", "ds_loss_scale_first", "ds_loss_scale_last", "ds_step", "ds_skipped"],
    "nccl_timeout": ["nccl_seq", "nccl_op", "nccl_timeout_min", "nccl_preprocessing"],
    "traceback": ["exception"],
    "unknown_error": ["exception"],
}


def _value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list):
        return ",".join(str(x) for x in v[:16])
    return str(v)


def _artifact_line(a: Artifact, lang: Lang) -> str:
    en, zh = _KIND[a.kind]
    parts = [f"{k}={escape_md(_value(a.fields[k]), 40)}" for k in _SHOWN.get(a.kind, []) if k in a.fields]
    if a.kind == "nvidia_smi":
        parts += [
            f"GPU{g['index']} {g['used_gb']:.1f}/{g['total_gb']:.1f} GiB" for g in a.fields.get("smi_gpus", [])[:8]
        ]
        parts.append(t("diagnosis.processes", lang, n=len(a.fields.get("smi_processes", []))))
    if a.kind == "config_error" and a.fields.get("mismatches"):
        parts += [
            f"{escape_md(r['ds_key'], 40)}: ds {escape_md(r['ds_value'], 20)} / hf {escape_md(r['hf_value'], 20)}"
            for r in a.fields["mismatches"][:6]
        ]
    if a.kind == "trainer_log":
        loss = [x for x in a.fields.get("log_loss", []) if isinstance(x, float)]
        if loss:
            parts.append(f"loss {loss[0]:.4g} → {loss[-1]:.4g}")
    label = zh if lang == "zh" else en
    hint = f" ({escape_md(a.version_hint, 80)})" if a.version_hint else ""
    line = f"- **{label}**{hint}: `{code_span_text(a.key_line, 120)}`"
    return line + ("\n  " + "; ".join(parts) if parts else "")


def diagnosis_markdown(d: Diagnosis, lang: Lang) -> str:
    """The Markdown report in one language (``zh`` or ``en``)."""
    lang = as_lang(lang)
    zh = lang == "zh"
    out: list[str] = []
    out.append(t("diagnosis.what_read", lang))
    if d.artifacts:
        out += [_artifact_line(a, lang) for a in d.artifacts[:12]]
        if len(d.artifacts) > 12:
            out.append(t("diagnosis.not_shown", lang, n=len(d.artifacts) - 12))
    else:
        out.append(t("diagnosis.nothing_recognised", lang))
    out.append("")
    if d.causes:
        out.append(t("diagnosis.causes_heading", lang))
        for i, c in enumerate(d.causes, 1):
            tag = t("diagnosis." + c.likelihood, lang)
            title, because, fix = (c.title_zh, c.because_zh, c.fix_zh) if zh else (c.title_en, c.because_en, c.fix_en)
            out.append(f"{i}. **{title}** ({tag})")
            out.append(t("diagnosis.why_and_fix", lang, because=because, fix=fix))
    elif d.artifacts:
        out.append(t("diagnosis.no_problem", lang))
    note = d.unrecognised_zh if zh else d.unrecognised_en
    if note:
        out.append("")
        out.append(t("diagnosis.not_read", lang, note=note))
    return "\n".join(out).strip() + "\n"
