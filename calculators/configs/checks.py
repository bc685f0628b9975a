"""Checks on a parsed config, collected as bilingual findings."""

from __future__ import annotations

import difflib
import math
from typing import Any

from ..batch import BatchConfigError, deepspeed_fill, resolve_batch
from ..errors import CalculatorError
from ..lang import Lang
from ..presets import count_params, get_model_shape
from .deepspeed_json import _offload_device
from .keys import (
    ACC_DS_KEYS,
    ACC_KEYS,
    DS_BATCH_KEYS,
    DS_OFFLOAD_KEYS,
    DS_REMOVED_TOP_KEYS,
    DS_REMOVED_ZERO_KEYS,
    DS_TOP_KEYS,
    DS_ZERO_KEYS,
    HF_AUTO_SOURCES,
    HF_KEYS,
    LF_KEYS,
)
from .models import Finding, ParsedConfig, Severity
from .values import _get, _int, _num, _truthy


class _Out:
    """Collects findings in both languages."""

    def __init__(self, parsed: ParsedConfig | None) -> None:
        self.parsed = parsed
        self.items: list[tuple[Severity, str, str, str, str, str, int | None, int | None]] = []

    def add(
        self,
        severity: Severity,
        key: str,
        en: str,
        zh: str,
        fix_en: str = "",
        fix_zh: str = "",
        line: int | None = None,
        column: int | None = None,
        at: str | None = None,
        parsed: ParsedConfig | None = None,
    ) -> None:
        src = parsed or self.parsed
        if line is None and src is not None:
            line, column = src.position(at or key)
        self.items.append((severity, key, en, zh, fix_en, fix_zh, line, column))

    def findings(self, lang: Lang) -> list[Finding]:
        order = {"error": 0, "warning": 1, "info": 2}
        out = [
            Finding(
                severity=s,
                key=k,
                message=zh if lang == "zh" else en,
                fix=fzh if lang == "zh" else fen,
                line=ln,
                column=col,
            )
            for s, k, en, zh, fen, fzh, ln, col in self.items
        ]
        return sorted(out, key=lambda f: order[f.severity])


_DS_LABELS = {
    "train_batch_size": "Train batch size",
    "train_micro_batch_size_per_gpu": "Micro batch size per gpu",
    "gradient_accumulation_steps": "Gradient accumulation steps",
}


def _close(key: str, known: frozenset[str]) -> str | None:
    m = difflib.get_close_matches(key, list(known), n=1, cutoff=0.8)
    return m[0] if m else None


def _check_values(out: _Out, pc: ParsedConfig) -> None:
    for key, value in pc.invalid.items():
        if key == "__duplicate_keys__":
            keys = value
            out.add(
                "error",
                keys[0],
                f"Duplicate keys: {keys}. DeepSpeed refuses the file: "
                f'"ValueError: Duplicate keys in DeepSpeed config: {keys}"; plain json.load keeps only the last one.',
                f'重复的键：{keys}。DeepSpeed 会拒绝该文件："ValueError: Duplicate keys in DeepSpeed config: {keys}"；'
                "普通的 json.load 只保留最后一个。",
                "Keep one occurrence of each key.",
                "每个键只保留一次。",
            )
            continue
        shown = repr(value)[:60]
        if isinstance(value, float) and math.isfinite(value) and not value.is_integer():
            en, zh = f"{key} = {shown} is not a whole number.", f"{key} = {shown} 不是整数。"
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            en, zh = f"{key} = {shown} is out of range.", f"{key} = {shown} 超出范围。"
        else:
            en = f"{key} has the wrong type: {shown} ({type(value).__name__}); a number is expected."
            zh = f"{key} 的类型不对：{shown}（{type(value).__name__}），应为数字。"
        if key == "zero_optimization.stage":
            en, zh = (
                f"zero_optimization.stage = {shown}: must be 0, 1, 2 or 3.",
                f"zero_optimization.stage = {shown}：必须是 0、1、2 或 3。",
            )
        if key in DS_BATCH_KEYS and isinstance(value, str):
            en += " DeepSpeed does not convert strings: the batch check fails with a TypeError at start-up."
            zh += "DeepSpeed 不会把字符串转成数字：启动时批次检查会抛出 TypeError。"
        severity: Severity = "error"
        if (
            pc.kind == "deepspeed"
            and key in DS_BATCH_KEYS
            and (value is True or (isinstance(value, float) and math.isfinite(value) and value > 0))
        ):
            # DeepSpeedConfig accepts these (recorded: ds_micro_true, ds_micro_fraction): the run starts
            severity = "warning"
            if value is True:
                en += " DeepSpeed itself accepts True and uses it as 1 (a Python bool is an int)."
                zh += "DeepSpeed 本身接受 True 并把它当作 1（Python 的 bool 是整数）。"
            else:
                en += (
                    f" DeepSpeed itself accepts {value:g} without rounding, so the global batch becomes fractional "
                    "and a torch DataLoader given this batch size refuses it."
                )
                zh += f"DeepSpeed 本身会原样接受 {value:g}，全局批次因此成为小数，而 torch DataLoader 不接受这样的批次大小。"
        out.add(
            severity,
            key,
            en,
            zh,
            "Write a plain positive integer, e.g. 16 (no quotes).",
            "写成不带引号的正整数，例如 16。",
        )


def _check_unknown(out: _Out, pc: ParsedConfig) -> None:
    for key in pc.unknown_keys:
        leaf = key.rsplit(".", 1)[-1]
        if pc.kind == "deepspeed" and (
            key in DS_REMOVED_TOP_KEYS or key in {f"zero_optimization.{k}" for k in DS_REMOVED_ZERO_KEYS}
        ):
            out.add(
                "error",
                key,
                f"'{key}' was removed from DeepSpeed (0.19.x): start-up fails with DeepSpeedConfigError "
                "(see https://github.com/deepspeedai/DeepSpeed/issues/8489).",
                f"'{key}' 已从 DeepSpeed（0.19.x）中移除：启动时会报 DeepSpeedConfigError"
                "（见 https://github.com/deepspeedai/DeepSpeed/issues/8489）。",
                "Remove it from the config.",
                "从配置中删除它。",
            )
            continue
        if pc.kind == "deepspeed" and key.startswith("zero_optimization."):
            parent = key.rsplit(".", 1)[0]
            known = (
                DS_ZERO_KEYS
                if parent == "zero_optimization"
                else DS_OFFLOAD_KEYS.get(parent.split(".")[-1], frozenset())
            )
            guess = _close(leaf, known)
            hint_en = f" Did you mean '{guess}'?" if guess else ""
            hint_zh = f"你是不是想写 '{guess}'？" if guess else ""
            extra_en = extra_zh = ""
            if leaf == "aio":
                extra_en = " ('aio' is a top-level DeepSpeed key, not part of zero_optimization.)"
                extra_zh = "（'aio' 是 DeepSpeed 的顶层键，不属于 zero_optimization。）"
            out.add(
                "error",
                key,
                f"Unknown key '{leaf}' in {parent}. DeepSpeed's ZeRO config is a pydantic model with extra='forbid': "
                f"start-up fails with a ValidationError ('Extra inputs are not permitted').{hint_en}{extra_en}",
                f"{parent} 中有未知键 '{leaf}'。DeepSpeed 的 ZeRO 配置是 extra='forbid' 的 pydantic 模型："
                f"启动时会报 ValidationError（'Extra inputs are not permitted'）。{hint_zh}{extra_zh}",
                f"Remove it or correct the spelling{' to ' + guess if guess else ''}.",
                f"删除该键或改正拼写{'为 ' + guess if guess else ''}。",
            )
            continue
        known = {
            "deepspeed": DS_TOP_KEYS,
            "hf_training_args": HF_KEYS,
            "llamafactory": LF_KEYS,
            "accelerate": ACC_KEYS if "." not in key else ACC_DS_KEYS,
        }[pc.kind]
        # ms-swift has argument names of its own (--model_type, --sft_type, ...): no "did you mean" toward
        # TrainingArguments' names for them.
        guess = None if pc.program == "ms-swift" else _close(leaf, known)
        sev: Severity
        if pc.kind == "deepspeed":
            sev = "warning"
            en = (
                f"Unknown top-level key '{key}': DeepSpeed ignores it silently and uses the default "
                "(HF docs: typos fall back to the default)."
            )
            zh = f"未知的顶层键 '{key}'：DeepSpeed 会静默忽略它并使用默认值（HF 文档：拼写错误会回退到默认值）。"
        elif pc.kind in ("llamafactory", "hf_training_args") and pc.source_format != "flags" and guess:
            sev = "error"
            en = (
                f"Unknown key '{key}'. LLaMA-Factory / HfArgumentParser refuse unknown keys: "
                f"\"ValueError: Some keys are not used by the HfArgumentParser: ['{key}']\"."
            )
            zh = (
                f"未知的键 '{key}'。LLaMA-Factory / HfArgumentParser 不接受未知键："
                f"\"ValueError: Some keys are not used by the HfArgumentParser: ['{key}']\"。"
            )
        elif pc.kind == "accelerate" and guess:
            sev = "warning"
            en, zh = f"Unknown key '{key}' in the Accelerate config.", f"Accelerate 配置中有未知键 '{key}'。"
        else:
            sev = "info"
            en = f"'{key}' is not a key this checker knows; it was not checked."
            zh = f"'{key}' 不是本检查器认识的键，未做检查。"
        if guess:
            en += f" Did you mean '{guess}'?"
            zh += f" 你是不是想写 '{guess}'？"
        out.add(sev, key, en, zh, f"Rename it to '{guess}'." if guess else "", f"改名为 '{guess}'。" if guess else "")


def _check_batch(out: _Out, pc: ParsedConfig, ws: int | None, lang: Lang) -> None:
    b = pc.batch
    tb, mb, ga = (
        b.get("train_batch_size"),
        b.get("train_micro_batch_size_per_gpu"),
        b.get("gradient_accumulation_steps"),
    )
    if pc.kind == "deepspeed":
        auto = set(pc.auto_fields)
        if tb is None and mb is None and not ({"train_batch_size", "train_micro_batch_size_per_gpu"} & auto):
            if any(k in pc.invalid for k in DS_BATCH_KEYS):
                return
            out.add(
                "warning",
                "train_micro_batch_size_per_gpu",
                "Neither train_batch_size nor train_micro_batch_size_per_gpu is set. Plain DeepSpeed stops with "
                '"AssertionError: Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided" '
                '(Hugging Face Trainer does not add missing keys either: it only replaces "auto").',
                "train_batch_size 和 train_micro_batch_size_per_gpu 都没有设置。纯 DeepSpeed 会报 "
                '"AssertionError: Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"'
                '（Hugging Face Trainer 也不会补上缺失的键：它只替换 "auto"）。',
                'Add "train_micro_batch_size_per_gpu": "auto" (with HF Trainer) or a number.',
                '加上 "train_micro_batch_size_per_gpu": "auto"（配合 HF Trainer）或一个数字。',
            )
            return
    given = {
        k: v
        for k, v in (
            ("train_batch_size", tb),
            ("train_micro_batch_size_per_gpu", mb),
            ("gradient_accumulation_steps", ga),
        )
        if v is not None
    }
    if any(k in pc.invalid for k in DS_BATCH_KEYS) or (tb is None and mb is None):
        for key, value in given.items():  # DeepSpeed cannot do the arithmetic; still report non-positive values
            if value <= 0:
                msg = f"{_DS_LABELS[key]}: {value} has to be greater than 0"
                out.add(
                    "error",
                    key,
                    f'DeepSpeed stops with "AssertionError: {msg}".',
                    f'DeepSpeed 会报 "AssertionError: {msg}"。',
                    "Use a positive integer.",
                    "请使用正整数。",
                )
        return
    if ws is None and tb is not None and mb is not None and ga is not None and mb > 0 and ga > 0 and tb > 0:
        if tb % (mb * ga):
            out.add(
                "error",
                "train_batch_size",
                f"train_batch_size={tb} is not a multiple of micro × GA = {mb} × {ga} = {mb * ga}: DeepSpeed's "
                "check train_batch_size == micro × GA × world_size fails for every number of GPUs.",
                f"train_batch_size={tb} 不是 micro × GA = {mb} × {ga} = {mb * ga} 的整数倍：无论用几张卡，DeepSpeed "
                "的检查 train_batch_size == micro × GA × world_size 都不会通过。",
                f"Set train_batch_size to {mb * ga} × (number of GPUs), or drop it and let DeepSpeed derive it.",
                f"把 train_batch_size 设为 {mb * ga} × 卡数，或删掉它让 DeepSpeed 自行推导。",
            )
        else:
            n = tb // (mb * ga)
            out.add(
                "info",
                "train_batch_size",
                f"All three batch fields are fixed: this config only starts on exactly {n} data-parallel GPU(s) "
                f"({tb} = {mb} × {ga} × {n}).",
                f"三个批次字段都写死了：该配置只能在恰好 {n} 张数据并行 GPU 上启动（{tb} = {mb} × {ga} × {n}）。",
                'Omit train_batch_size (or use "auto" with HF Trainer) so it follows the GPU count.',
                '去掉 train_batch_size（或配合 HF Trainer 用 "auto"），让它随卡数变化。',
            )
        return
    world = ws or 1
    if any(v <= 0 for v in given.values()):
        try:
            t, m, g, _ = deepspeed_fill(tb, mb, ga, world)
        except ZeroDivisionError:
            # DeepSpeed's own derivation divides by the zero micro batch (ZeroDivisionError) before any check.
            t, m, g = (tb if tb is not None else 0), (mb if mb is not None else 0), (ga if ga is not None else 0)
        for value, key in (
            (t, "train_batch_size"),
            (m, "train_micro_batch_size_per_gpu"),
            (g, "gradient_accumulation_steps"),
        ):
            if value <= 0:
                msg = f"{_DS_LABELS[key]}: {value} has to be greater than 0"
                out.add(
                    "error",
                    key,
                    f'DeepSpeed stops with "AssertionError: {msg}".',
                    f'DeepSpeed 会报 "AssertionError: {msg}"。',
                    "Use positive integers for all batch fields.",
                    "所有批次字段都必须是正整数。",
                    at=key if key in given else next(iter(given)),
                )
                return
    try:
        res = resolve_batch(
            train_batch_size=tb,
            train_micro_batch_size_per_gpu=mb,
            gradient_accumulation_steps=ga,
            world_size=world,
            lang=lang,
        )
    except BatchConfigError as err:
        out.add(
            "error",
            err.field if err.field in given else "train_batch_size",
            f'DeepSpeed will stop at start-up with "AssertionError: {err.deepspeed_message}".',
            f'DeepSpeed 启动时会报 "AssertionError: {err.deepspeed_message}"。',
            err.en,
            err.zh,
        )
        return
    except CalculatorError as err:
        out.add("error", err.field, err.en, err.zh)
        return
    if pc.kind == "deepspeed" and res.derived:
        out.add(
            "info",
            res.derived[0],
            f"DeepSpeed derives {', '.join(res.derived)}: {res.formula}"
            + ("" if ws else " (assuming 1 GPU; give world_size for your launch)")
            + ".",
            f"DeepSpeed 会推导 {', '.join(res.derived)}：{res.formula}"
            + ("" if ws else "（按 1 张卡计算；请给出实际卡数）")
            + "。",
        )


def _check_missing_ga(out: _Out, pc: ParsedConfig, ws: int | None) -> None:
    d = pc.raw
    if pc.kind != "deepspeed" or "gradient_accumulation_steps" in d:
        return
    tb, mb = pc.batch.get("train_batch_size"), pc.batch.get("train_micro_batch_size_per_gpu")
    world = ws or 1
    if tb is not None and mb is not None and tb > 0 and mb > 0:
        ds_en = f"plain DeepSpeed derives it as train_batch_size // micro // world_size = {tb} // {mb} // {world} = {tb // mb // world}"
        ds_zh = f"纯 DeepSpeed 会按 train_batch_size // micro // world_size = {tb} // {mb} // {world} = {tb // mb // world} 推导"
    elif tb is not None or mb is not None:
        ds_en, ds_zh = "plain DeepSpeed sets it to 1", "纯 DeepSpeed 会把它设为 1"
    else:
        ds_en, ds_zh = (
            "plain DeepSpeed derives it from the other two batch fields",
            "纯 DeepSpeed 会由另外两个批次字段推导",
        )
    auto_batch = bool({"train_batch_size", "train_micro_batch_size_per_gpu"} & set(pc.auto_fields))
    out.add(
        "warning",
        "gradient_accumulation_steps",
        f"gradient_accumulation_steps is missing: {ds_en}{' (world_size assumed 1)' if ws is None else ''}. "
        'Hugging Face Trainer does not fill a missing key (fill_match only replaces "auto"), and Accelerate\'s '
        "DeepSpeedPlugin then writes gradient_accumulation_steps=1 into the config; recent Accelerate prefers "
        "DeepSpeed's value over --gradient_accumulation_steps (\"Gradient accumulation steps mismatch: ... Using "
        "DeepSpeed's value.\")"
        + (
            ', while train_batch_size "auto" was already computed with the Trainer\'s GA, so the batch check can fail.'
            if auto_batch
            else "."
        ),
        f"缺少 gradient_accumulation_steps：{ds_zh}{'（按 1 张卡计算）' if ws is None else ''}。"
        'Hugging Face Trainer 不会填充缺失的键（fill_match 只替换 "auto"），随后 Accelerate 的 DeepSpeedPlugin '
        "会在配置里写入 gradient_accumulation_steps=1；新版 Accelerate 会优先使用 DeepSpeed 的值而不是 "
        '--gradient_accumulation_steps（"Gradient accumulation steps mismatch: ... Using DeepSpeed\'s value."）'
        + ('，而 train_batch_size 的 "auto" 已按 Trainer 的 GA 算好，批次检查可能失败。' if auto_batch else "。"),
        'With HF Trainer / Accelerate write "gradient_accumulation_steps": "auto"; otherwise write the number you want.',
        '配合 HF Trainer / Accelerate 时写 "gradient_accumulation_steps": "auto"；否则写明你想要的数值。',
    )


def _hidden_size(model: str | None) -> int | None:
    if not model:
        return None
    try:
        return get_model_shape(model).hidden_size
    except CalculatorError:
        return None


def _check_auto(out: _Out, pc: ParsedConfig, hf: dict[str, Any] | None, ws: int | None, model: str | None) -> None:
    if pc.kind != "deepspeed":
        return
    stage = pc.memory.get("zero_stage", 0)
    h = _hidden_size(model)
    for key in pc.auto_fields:
        src = HF_AUTO_SOURCES.get(key)
        if src is None:
            if key.startswith("zero_optimization."):
                out.add(
                    "warning",
                    key,
                    f'"auto" for {key}: Hugging Face Trainer does not fill this key, and DeepSpeed drops "auto" '
                    "inside its ZeRO config, so the DeepSpeed default is used.",
                    f'{key} 设为 "auto"：Hugging Face Trainer 不会填这个键，DeepSpeed 会在 ZeRO 配置中丢弃 "auto"，'
                    "因此使用 DeepSpeed 默认值。",
                    "Write the value you want.",
                    "写明你想要的数值。",
                )
            else:
                out.add(
                    "error",
                    key,
                    f'"auto" for {key}: neither Hugging Face Trainer nor Accelerate fills this key, so the string '
                    '"auto" reaches DeepSpeed.',
                    f'{key} 设为 "auto"：Hugging Face Trainer 和 Accelerate 都不会填这个键，字符串 "auto" 会原样传给 DeepSpeed。',
                    "Write a concrete value.",
                    "写一个具体的值。",
                )
            continue
        en_src, zh_src = src
        value = _auto_value(key, hf, ws, h, stage)
        if (
            key
            in ("zero_optimization.stage3_prefetch_bucket_size", "zero_optimization.stage3_param_persistence_threshold")
            and stage != 3
        ):
            en_v = ' Not filled below ZeRO-3: DeepSpeed drops the "auto" and keeps its default.'
            zh_v = ' 非 ZeRO-3 时不会填充：DeepSpeed 丢弃 "auto" 并使用默认值。'
        elif value is not None:
            en_v, zh_v = f" → {value}.", f" → {value}。"
        else:
            en_v = zh_v = ""
        out.add(
            "info",
            key,
            f'"auto": Hugging Face Trainer fills {key} from {en_src}{en_v or "."}',
            f'"auto"：Hugging Face Trainer 会用 {zh_src} 填充 {key}{zh_v or "。"}',
        )
    if pc.auto_fields:
        out.add(
            "info",
            "auto",
            f'{len(pc.auto_fields)} "auto" value(s): only Hugging Face Trainer / Accelerate replace them. With a '
            'plain deepspeed.initialize() the batch keys stay the string "auto" and start-up fails.',
            f'{len(pc.auto_fields)} 个 "auto" 值：只有 Hugging Face Trainer / Accelerate 会替换它们。直接调用 '
            'deepspeed.initialize() 时批次字段仍是字符串 "auto"，启动会失败。',
        )


def _auto_value(key: str, hf: dict[str, Any] | None, ws: int | None, h: int | None, stage: int) -> Any:
    if key == "zero_optimization.reduce_bucket_size" and h:
        return h * h
    if key == "zero_optimization.stage3_prefetch_bucket_size" and h and stage == 3:
        return int(0.9 * h * h)
    if key == "zero_optimization.stage3_param_persistence_threshold" and h and stage == 3:
        return 10 * h
    if hf is None:
        return None
    table = {
        "train_micro_batch_size_per_gpu": hf["per_device_train_batch_size"],
        "gradient_accumulation_steps": hf["gradient_accumulation_steps"],
        "gradient_clipping": hf["max_grad_norm"],
        "optimizer.params.lr": hf["learning_rate"],
        "optimizer.params.betas": [hf["adam_beta1"], hf["adam_beta2"]],
        "optimizer.params.eps": hf["adam_epsilon"],
        "optimizer.params.weight_decay": hf["weight_decay"],
        "scheduler.params.warmup_min_lr": 0,
        "scheduler.params.warmup_max_lr": hf["learning_rate"],
        "fp16.enabled": hf["fp16"],
        "bf16.enabled": hf["bf16"],
    }
    if key == "train_batch_size" and ws is not None:
        try:
            return ws * hf["per_device_train_batch_size"] * hf["gradient_accumulation_steps"]
        except TypeError:
            return None
    return table.get(key)


def _check_precision(out: _Out, pc: ParsedConfig, hf: dict[str, Any] | None) -> None:
    d = pc.raw
    if pc.kind == "deepspeed":
        fp16 = _get(d, "fp16.enabled")
        bf16 = _get(d, "bf16.enabled") if isinstance(d.get("bf16"), dict) else _get(d, "bfloat16.enabled")
        if hf is not None:
            fp16 = hf["fp16"] if fp16 == "auto" else fp16
            bf16 = hf["bf16"] if bf16 == "auto" else bf16
        if fp16 is True and bf16 is True:
            out.add(
                "error",
                "bf16.enabled" if isinstance(d.get("bf16"), dict) else "fp16.enabled",
                'fp16 and bf16 are both enabled. DeepSpeed stops with "AssertionError: bfloat16 and fp16 modes '
                'cannot be simultaneously enabled".',
                'fp16 和 bf16 同时开启。DeepSpeed 会报 "AssertionError: bfloat16 and fp16 modes cannot be '
                'simultaneously enabled"。',
                "Keep one: bf16 on Ampere or newer (A100, RTX 30xx/40xx, H100), fp16 on V100/T4.",
                "只保留一个：Ampere 及更新的卡（A100、RTX 30/40 系、H100）用 bf16，V100/T4 用 fp16。",
            )
        elif "fp16" not in d and "bf16" not in d and "bfloat16" not in d:
            out.add(
                "info",
                "fp16",
                "No fp16/bf16 section: DeepSpeed trains in fp32 (both default to disabled), which needs about twice "
                "the weight/gradient memory and is much slower on tensor cores.",
                "没有 fp16/bf16 配置段：DeepSpeed 以 fp32 训练（两者默认关闭），权重/梯度显存约为两倍，且无法充分利用 Tensor Core。",
                'Add "bf16": {"enabled": "auto"} (or true).',
                '加上 "bf16": {"enabled": "auto"}（或 true）。',
            )
    elif pc.kind in ("hf_training_args", "llamafactory") and _truthy(d.get("fp16")) and _truthy(d.get("bf16")):
        out.add(
            "error",
            "bf16",
            'fp16 and bf16 are both set. TrainingArguments raises "ValueError: At most one of fp16 and bf16 can '
            'be True, but not both".',
            '同时设置了 fp16 和 bf16。TrainingArguments 会报 "ValueError: At most one of fp16 and bf16 can be '
            'True, but not both"。',
            "Keep only one of them.",
            "只保留其中一个。",
        )


def _check_offload(out: _Out, pc: ParsedConfig) -> None:
    if pc.kind == "deepspeed":
        zd = pc.raw.get("zero_optimization")
        if not isinstance(zd, dict):
            return
        stage = _int(zd.get("stage", 0))
        opt = _offload_device(zd, "offload_optimizer", "cpu_offload")
        par = _offload_device(zd, "offload_param", "cpu_offload_param")
        prefix = "zero_optimization."
    elif pc.kind == "accelerate":
        zd = pc.raw.get("deepspeed_config")
        if not isinstance(zd, dict):
            return
        stage = pc.memory.get("zero_stage")
        opt = str(zd.get("offload_optimizer_device", "none")).lower()
        par = str(zd.get("offload_param_device", "none")).lower()
        prefix = "deepspeed_config."
    else:
        return
    if stage is None:
        return
    valid = ("none", "cpu", "nvme", None)
    for name, dev in (("offload_optimizer", opt), ("offload_param", par)):
        if dev not in valid:
            key = f"{prefix}{name}.device" if pc.kind == "deepspeed" else f"{prefix}{name}_device"
            out.add(
                "error",
                key,
                f"Offload device {dev!r} is not one of none, cpu, nvme.",
                f"offload 设备 {dev!r} 不是 none、cpu、nvme 之一。",
                'Use "cpu" or "nvme".',
                '请用 "cpu" 或 "nvme"。',
            )
    opt_on, par_on = opt in ("cpu", "nvme"), par in ("cpu", "nvme")
    key_opt = f"{prefix}offload_optimizer" if pc.kind == "deepspeed" else f"{prefix}offload_optimizer_device"
    key_par = f"{prefix}offload_param" if pc.kind == "deepspeed" else f"{prefix}offload_param_device"
    # DeepSpeed starts with these and ignores or reinterprets the setting (DeepSpeedConfig accepts them, recorded in
    # tests/data/configs/verdicts.json): warnings, not failures.
    if par_on and stage != 3:
        out.add(
            "warning",
            key_par,
            f'Ignored: offload_param with ZeRO stage {stage}: parameter offload is "Valid only with stage 3" (DeepSpeed '
            "docs). Stages 0-2 ignore it silently, so you get none of the memory you expect to save.",
            f'已忽略：ZeRO stage {stage} 下设置了 offload_param：参数 offload "仅在 stage 3 有效"（DeepSpeed 文档）。'
            "stage 0-2 会静默忽略它，预期节省的显存一点也不会省下。",
            'Use "stage": 3, or remove offload_param.',
            '改用 "stage": 3，或删除 offload_param。',
        )
    if opt_on and stage == 0:
        out.add(
            "warning",
            key_opt,
            "Ignored: offload_optimizer with ZeRO disabled (stage 0): ZeRO-Offload is part of the ZeRO optimizer, so it is ignored.",
            "已忽略：ZeRO 关闭（stage 0）时设置了 offload_optimizer：ZeRO-Offload 属于 ZeRO 优化器，会被忽略。",
            'Use "stage": 2 (or 3) with offload_optimizer.',
            '配合 offload_optimizer 使用 "stage": 2（或 3）。',
        )
    elif opt == "nvme" and stage < 3:
        out.add(
            "warning",
            key_opt,
            f'NVMe optimizer offload with ZeRO stage {stage} starts, but it is not what the docs support: "NVMe offloading is available only with ZeRO stage 3" '
            "(DeepSpeed docs).",
            f'ZeRO stage {stage} 下使用 NVMe 优化器 offload 能启动，但不是文档支持的用法："NVMe offloading is available only with ZeRO stage 3"（DeepSpeed 文档）。',
            'Use "stage": 3, or offload to "cpu".',
            '改用 "stage": 3，或 offload 到 "cpu"。',
        )
    elif opt_on and stage == 1:
        out.add(
            "warning",
            key_opt,
            'CPU optimizer offload with ZeRO stage 1: current DeepSpeed accepts it (docs: "CPU offloading is '
            'available with ZeRO stage 1, 2, 3"), but Accelerate and older docs say stage 2+ only, and stage 2 '
            "also partitions gradients at no extra communication cost.",
            'ZeRO stage 1 下使用 CPU 优化器 offload：新版 DeepSpeed 接受（文档："CPU offloading is available with '
            'ZeRO stage 1, 2, 3"），但 Accelerate 和旧文档写的是仅 stage 2 及以上，而且 stage 2 还能免费切分梯度。',
            'Use "stage": 2 with offload_optimizer.',
            '配合 offload_optimizer 使用 "stage": 2。',
        )


def _check_overlap(out: _Out, pc: ParsedConfig, capacity: int | None) -> None:
    if pc.kind != "deepspeed":
        return
    zd = pc.raw.get("zero_optimization")
    if not isinstance(zd, dict):
        return
    stage = _int(zd.get("stage", 0))
    if stage not in (1, 2):
        return
    if zd.get("overlap_comm") is not True:
        return
    ag = _num(zd.get("allgather_bucket_size"))
    rb = _num(zd.get("reduce_bucket_size"))
    ag = 5e8 if ag is None else ag
    rb = 5e8 if rb is None else rb
    need = 4.5 * (ag + rb) * 2  # HF docs: 4.5x both bucket sizes, 2-byte gradients: 5e8 + 5e8 -> 9 GB
    if need < 2e9 and not (capacity and need > 0.1 * capacity):
        return
    out.add(
        "warning",
        "zero_optimization.overlap_comm",
        f"overlap_comm=true with allgather_bucket_size={ag:.3g} and reduce_bucket_size={rb:.3g}: overlap_comm uses "
        f"4.5× both bucket sizes (HF DeepSpeed docs), about {need / 1e9:.1f} GB of GPU memory "
        "(the docs' example: 5e8 each → 9 GB).",
        f"overlap_comm=true，allgather_bucket_size={ag:.3g}，reduce_bucket_size={rb:.3g}：overlap_comm 会占用两个桶大小的 "
        f"4.5 倍（HF DeepSpeed 文档），约 {need / 1e9:.1f} GB 显存（文档示例：各 5e8 → 9 GB）。",
        "If memory is tight, lower both bucket sizes to 2e8 (≈3.6 GB) or set overlap_comm to false.",
        "显存紧张时，把两个桶大小降到 2e8（约 3.6 GB），或把 overlap_comm 设为 false。",
    )


def _check_zero3_small(out: _Out, pc: ParsedConfig, model: str | None, stage: int | None) -> None:
    if stage != 3 or not model:
        return
    try:
        n = count_params(get_model_shape(model))
    except CalculatorError:
        return
    if n >= 1e9:
        return
    key = (
        "zero_optimization.stage"
        if pc.kind == "deepspeed"
        else ("deepspeed_config.zero_stage" if pc.kind == "accelerate" else "deepspeed")
    )
    out.add(
        "warning",
        key,
        f"ZeRO-3 for {model} ({n / 1e6:.0f}M parameters): the model states are small, so ZeRO-3's per-layer "
        "all-gathers cost more than they save; it is usually slower than ZeRO-2 and, with its prefetch/persistence "
        "buffers, can even use more memory.",
        f"{model}（{n / 1e6:.0f}M 参数）使用 ZeRO-3：模型状态本来就小，ZeRO-3 每层的 all-gather 通信开销大于节省；"
        "通常比 ZeRO-2 慢，加上预取/常驻缓冲区，显存甚至可能更多。",
        "Use ZeRO-2 (or plain DDP) for models under ~1B parameters.",
        "约 1B 参数以下的模型请用 ZeRO-2（或普通 DDP）。",
    )
