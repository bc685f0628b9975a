"""Entry points: ``check_config`` and the ``config_check`` tool. Never raise for bad input."""

from __future__ import annotations

from typing import Any

from ..errors import CalculatorError
from ..lang import Lang, as_lang
from ..memory import GiB, MemoryEstimate
from ..presets import get_gpu
from .accelerate_yaml import _check_accelerate
from .checks import (
    _check_auto,
    _check_batch,
    _check_missing_ga,
    _check_offload,
    _check_overlap,
    _check_precision,
    _check_unknown,
    _check_values,
    _check_zero3_small,
    _hidden_size,
    _Out,
)
from .hf_args import _check_mismatch, _hf_values
from .keys import HF_DEFAULTS
from .levers import _memory, _memory_kwargs
from .models import ConfigParseError, ConfigReport, ParsedConfig
from .registry import library_verdict, parse_config
from .values import _int, resolve_model_preset
from .verdict import reconcile


def check_config(
    config: str | dict[str, Any] | ParsedConfig,
    *,
    gpu: str | float | None = None,
    world_size: int | None = None,
    model: str | float | None = None,
    lang: Lang = "en",
    training_args: str | dict[str, Any] | ParsedConfig | None = None,
    use_libraries: bool = True,
) -> ConfigReport:
    """Check a training config; never raises for bad input (problems become findings).

    ``training_args`` is an optional second config, typically the TrainingArguments
    (flags, dict or LLaMA-Factory YAML) used together with a DeepSpeed JSON.
    With ``use_libraries`` (the default) DeepSpeed / Transformers / Accelerate give the
    start-up verdict (see :mod:`.library`); without it, or when they cannot be loaded,
    only our own checks run.
    """
    report_lang = as_lang(lang)
    out = _Out(None)
    parsed: ParsedConfig | None = None
    companion: ParsedConfig | None = None
    estimate: MemoryEstimate | None = None
    try:
        parsed = parse_config(config)
        out.parsed = parsed
        if training_args is not None:
            try:
                companion = parse_config(training_args)
            except CalculatorError as err:
                _parse_failure(out, err, "training_args")
        if companion is not None and parsed.kind != "deepspeed" and companion.kind == "deepspeed":
            parsed, companion = (
                companion,
                parsed,
            )  # the DeepSpeed JSON is the one the Trainer's values are checked against
            out.parsed = parsed
        estimate = _run_checks(out, parsed, companion, gpu, world_size, model, report_lang, use_libraries)
    except CalculatorError as err:
        _parse_failure(out, err, "config")
    except Exception as exc:  # noqa: BLE001 - the doctor must answer, whatever was pasted
        out.add(
            "error",
            INTERNAL_ERROR_KEY,
            f"The checker failed on this input ({type(exc).__name__}: {exc}).",
            f"检查器处理该输入时出错（{type(exc).__name__}: {exc}）。",
        )
    report = ConfigReport(
        parsed=parsed, findings=out.findings(report_lang), estimate=estimate, lang=report_lang, companion=companion
    )
    report._by_lang = {"en": out.findings("en"), "zh": out.findings("zh")}
    return report


INTERNAL_ERROR_KEY = (
    "<checker-error>"  # not a possible config key, so a user's key "internal" cannot be mistaken for it
)


def _parse_failure(out: _Out, err: CalculatorError, key: str) -> None:
    if isinstance(err, ConfigParseError):
        out.add(
            "error",
            key if err.field == "config" else err.field,
            err.en,
            err.zh,
            err.fix_en,
            err.fix_zh,
            line=err.line,
            column=err.column,
        )
    else:
        out.add("error", err.field, err.en, err.zh)


def _run_checks(
    out: _Out,
    pc: ParsedConfig,
    companion: ParsedConfig | None,
    gpu: Any,
    world_size: Any,
    model: Any,
    lang: Lang,
    use_libraries: bool = True,
) -> MemoryEstimate | None:
    ws: int | None = None
    if world_size is not None:
        ws = _int(world_size)
        if ws is None or ws <= 0:
            out.add(
                "error",
                "world_size",
                f"world_size={world_size!r} must be a positive integer.",
                f"world_size={world_size!r} 必须是正整数。",
            )
            ws = None
    ws = ws or pc.world_size or (companion.world_size if companion else None)
    if pc.notes_en:
        for en, zh in zip(pc.notes_en, pc.notes_zh, strict=False):
            out.add("info", "assumption", en, zh)
    if companion is not None:
        for en, zh in zip(companion.notes_en, companion.notes_zh, strict=False):
            out.add("info", "assumption", en, zh, parsed=companion)
    _check_values(out, pc)
    _check_unknown(out, pc)
    if companion is not None:
        cout = _Out(companion)
        _check_values(cout, companion)
        _check_unknown(cout, companion)
        _check_precision(cout, companion, None)
        out.items += [
            (s, f"training_args.{k}", en, zh, fe, fz, ln, col) for s, k, en, zh, fe, fz, ln, col in cout.items
        ]
    hf_raw = companion.raw if companion is not None and companion.kind in ("hf_training_args", "llamafactory") else None
    hf = _hf_values(hf_raw)
    # batch: the DeepSpeed view, with "auto" filled from the Trainer's values when known
    if pc.kind == "deepspeed" and hf is not None:
        filled = ParsedConfig(**pc.model_dump())
        for key, src in (
            ("train_micro_batch_size_per_gpu", "per_device_train_batch_size"),
            ("gradient_accumulation_steps", "gradient_accumulation_steps"),
        ):
            v = _int(hf[src], strict=False)
            if key in pc.auto_fields and v is not None:
                filled.batch[key] = v
        if "train_batch_size" in pc.auto_fields and ws is not None:
            mb, g = filled.batch.get("train_micro_batch_size_per_gpu"), filled.batch.get("gradient_accumulation_steps")
            if isinstance(mb, int) and isinstance(g, int):
                filled.batch["train_batch_size"] = ws * mb * g
        _check_batch(out, filled, ws, lang)
    elif pc.kind in ("hf_training_args", "llamafactory"):
        view = ParsedConfig(**pc.model_dump())
        view.batch.setdefault("train_micro_batch_size_per_gpu", HF_DEFAULTS["per_device_train_batch_size"])
        if "per_device_train_batch_size" not in pc.raw and "per_device_train_batch_size" not in pc.invalid:
            out.add(
                "info",
                "per_device_train_batch_size",
                "per_device_train_batch_size not set: Hugging Face's default is 8 per GPU.",
                "未设置 per_device_train_batch_size：Hugging Face 默认每卡 8。",
            )
            view.memory.setdefault("train_micro_batch_size_per_gpu", 8)
            pc.memory.setdefault("train_micro_batch_size_per_gpu", 8)
        _check_batch(out, view, ws, lang)
        _effective_batch_note(out, view, ws)
    else:
        _check_batch(out, pc, ws, lang)
    _check_missing_ga(out, pc, ws)
    _check_auto(out, pc, hf, ws, _model_for(pc, companion, model))
    if companion is not None and pc.kind == "deepspeed" and hf_raw is not None:
        _check_mismatch(out, pc, companion, ws)
    _check_precision(out, pc, hf)
    _check_offload(out, pc)
    _check_accelerate(out, pc)
    if (
        pc.kind in ("hf_training_args", "llamafactory", "accelerate")
        and isinstance(pc.deepspeed, str)
        and "zero_stage" not in pc.memory
    ):
        out.add(
            "info",
            "deepspeed",
            f"The DeepSpeed config {pc.deepspeed!r} itself was not given: the estimate assumes no ZeRO sharding. "
            "Paste it too (as training_args, or as config with these arguments as training_args) to check both.",
            f"没有提供 DeepSpeed 配置 {pc.deepspeed!r} 本身：估算按不使用 ZeRO 分片计算。"
            "请一并粘贴（作为 training_args，或把它作为 config、把这些参数作为 training_args），以便同时检查两者。",
        )
    kw = _memory_kwargs(pc, companion, gpu, ws, model)
    capacity = None
    if "gpu" in kw:
        try:
            capacity = int(get_gpu(kw["gpu"]).memory_gib * GiB)
        except CalculatorError as err:
            out.add("warning", "gpu", err.en, err.zh)
            kw.pop("gpu")
    _check_overlap(out, pc, capacity)
    stage = kw.get("zero_stage")
    _check_zero3_small(out, pc, kw.get("model"), stage)
    estimate = _memory(out, pc, kw, lang)
    if use_libraries:
        verdict = library_verdict(pc, companion, ws, _hidden_size(_model_for(pc, companion, model)))
        out.items = reconcile(out.items, verdict, pc)
        if verdict is not None and verdict.available and ws is None and pc.kind != "accelerate":
            out.add(
                "info",
                "world_size",
                "The number of GPUs was not given: the libraries judged this config as rank 0 of 1 data-parallel "
                "GPU. Give world_size (or paste the launch command) for your launch.",
                "没有给出 GPU 数量：各库按 1 张数据并行 GPU（rank 0）判断该配置。请给出 world_size（或粘贴启动命令）。",
            )
    return estimate


def _model_for(pc: ParsedConfig, companion: ParsedConfig | None, model: Any) -> str | None:
    if isinstance(model, str):
        r = resolve_model_preset(model)
        if r:
            return r
    return pc.memory.get("model") or (companion.memory.get("model") if companion else None)


def _effective_batch_note(out: _Out, view: ParsedConfig, ws: int | None) -> None:
    mb = view.batch.get("train_micro_batch_size_per_gpu")
    ga = view.batch.get("gradient_accumulation_steps", 1)
    if not (isinstance(mb, int) and isinstance(ga, int) and mb > 0 and ga > 0):
        return
    if ws:
        out.add(
            "info",
            "effective_batch",
            f"Effective batch = per_device × GA × GPUs = {mb} × {ga} × {ws} = {mb * ga * ws} samples per optimizer step.",
            f"有效批次 = 每卡批次 × GA × 卡数 = {mb} × {ga} × {ws} = {mb * ga * ws} 个样本/每次优化器更新。",
        )
    else:
        out.add(
            "info",
            "effective_batch",
            f"Effective batch = {mb} × {ga} × (number of GPUs) = {mb * ga} per GPU; give world_size for the total.",
            f"有效批次 = {mb} × {ga} × 卡数 = 每卡 {mb * ga}；给出 world_size 可得到总数。",
        )


def config_check_tool(args: dict[str, Any]) -> ConfigReport:
    """The ``config_check`` tool: ``{"config": text|dict, "gpu"?, "world_size"?, "model"?, "lang"?, "training_args"?}``."""
    if not isinstance(args, dict):
        raise CalculatorError("arguments", args, "a dict of keyword arguments", "关键字参数字典")
    allowed = {"config", "gpu", "world_size", "model", "lang", "training_args"}
    extra = sorted(set(args) - allowed)
    if extra or "config" not in args:
        raise CalculatorError(
            "arguments",
            sorted(args),
            "config (required), gpu, world_size, model, lang, training_args",
            "config（必填）、gpu、world_size、model、lang、training_args",
        )
    return check_config(
        args["config"],
        gpu=args.get("gpu"),
        world_size=args.get("world_size"),
        model=args.get("model"),
        lang=args.get("lang", "en"),
        training_args=args.get("training_args"),
    )
