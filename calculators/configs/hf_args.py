"""Hugging Face TrainingArguments (dict, JSON or a launch command line): the reader."""

from __future__ import annotations

import copy
import math
from types import SimpleNamespace
from typing import Any

from . import library
from .checks import _Out
from .keys import HF_DEFAULTS, HF_KEYS
from .library import LibraryVerdict
from .models import ParsedConfig
from .text import _scalar
from .values import _get, _int, _lora_targets, _micro_ga_to_memory, _model, _precision, _read_batch, _seq_len, _truthy

#: ms-swift's names for what TrainingArguments calls otherwise (2.x: --batch_size, --model_id_or_path, --sft_type,
#: --dtype; 3.x: --model, --train_type, --torch_dtype) and its built-in DeepSpeed configs (--deepspeed default-zero3).
_SWIFT_MODEL_KEYS = ("model", "model_id_or_path", "model_type")
#: The ms-swift arguments this reader uses (the others are reported as not checked).
_SWIFT_READ = frozenset(
    {"batch_size", "torch_dtype", "dtype", "train_type", "sft_type", "lora_rank", "quant_bits", "target_modules"}
    | {"lora_target_modules", *_SWIFT_MODEL_KEYS}
)
_SWIFT_DS = {
    "default-zero2": (2, False),
    "default-zero3": (3, False),
    "zero2": (2, False),
    "zero3": (3, False),
    "zero2_offload": (2, True),
    "zero3_offload": (3, True),
}


def _parse_hf(pc: ParsedConfig) -> None:
    d = pc.raw
    strict = pc.source_format != "flags"
    swift = pc.program == "ms-swift"  # `swift sft ...`: the same fields plus ms-swift's own names (_read_swift_names)
    batch_keys = {
        "per_device_train_batch_size": "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps": "gradient_accumulation_steps",
    }
    if swift and "per_device_train_batch_size" not in d:
        batch_keys["batch_size"] = "train_micro_batch_size_per_gpu"
    _read_batch(pc, d, batch_keys, strict=strict)
    _micro_ga_to_memory(pc)
    known = _SWIFT_READ if swift else frozenset()
    pc.unknown_keys += [k for k in d if k not in HF_KEYS and k not in known and not k.startswith("accelerate_")]
    ds = d.get("deepspeed")
    if isinstance(ds, (str, dict)) and ds:
        pc.deepspeed = ds
    prec = _precision(d.get("bf16"), d.get("fp16"), bool(pc.deepspeed))
    if swift:
        _swift_dtype_note(pc, d)
    elif prec is None and not pc.deepspeed:
        prec = "fp32"
        pc.notes_en.append(
            "Neither --bf16 nor --fp16: Trainer trains in fp32 (unless the script loads the model in 16-bit)."
        )
        pc.notes_zh.append("没有 --bf16 也没有 --fp16：Trainer 以 fp32 训练（除非脚本以 16 位加载模型）。")
    if prec and not swift:
        pc.memory["precision"] = prec
    if _truthy(d.get("gradient_checkpointing")):
        pc.memory["gradient_checkpointing"] = "full"
    elif swift and "gradient_checkpointing" not in d:
        _swift_checkpointing_default(pc)
    optim = d.get("optim")
    if isinstance(optim, str):
        o = optim.lower()
        if "8bit" in o:
            pc.memory["optimizer"] = "adamw-8bit"
        elif o.startswith("adafactor"):
            pc.memory["optimizer"] = "adafactor"
    if _truthy(d.get("adafactor")):
        pc.memory["optimizer"] = "adafactor"
    _seq_len(pc, d, ("max_seq_length", "max_length", "block_size", "model_max_length", "max_source_length"))
    _model(pc, d)
    attn = d.get("attn_implementation")
    if isinstance(attn, str) and attn.lower() == "eager":
        pc.memory["flash_attention"] = False
    if _truthy(d.get("use_peft")) or "lora_r" in d:
        pc.memory["finetune"] = "qlora" if _truthy(d.get("load_in_4bit")) else "lora"
        r = _int(d.get("lora_r"), strict=False)
        if r and r > 0:
            pc.memory["lora_rank"] = r
        _lora_targets(pc, d.get("lora_target_modules"))
    if isinstance(d.get("accelerate_num_processes"), int):
        pc.world_size = pc.world_size or d["accelerate_num_processes"]
    if swift:
        _read_swift_names(pc, d)


def _swift_dtype_note(pc: ParsedConfig, d: dict[str, Any]) -> None:
    """ms-swift does not train in TrainingArguments' fp32 default: without --torch_dtype it takes the model config's
    dtype and switches on bf16 or fp16 from it (swift/llm/argument/base_args/model_args.py _init_torch_dtype), so no
    precision is assumed, and the note says so."""
    if d.get("torch_dtype") or d.get("dtype") or _truthy(d.get("bf16")) or _truthy(d.get("fp16")):
        return
    pc.notes_en.append(
        "No --torch_dtype: ms-swift uses the dtype of the model's config and turns on bf16 (bfloat16 models) or "
        "fp16 (float16/float32 models) training from it."
    )
    pc.notes_zh.append(
        "没有 --torch_dtype：ms-swift 使用模型 config 里的 dtype，并据此开启 bf16（bfloat16 模型）或 fp16"
        "（float16/float32 模型）训练。"
    )


def _swift_checkpointing_default(pc: ParsedConfig) -> None:
    """ms-swift overrides TrainingArguments' default: gradient checkpointing is on unless the command turns it off (its
    command-line parameters: "gradient_checkpointing: 是否使用gradient_checkpointing，默认为True"). Without this a
    long-sequence `swift sft` run is computed with every layer's activations kept (ms-swift #4177: 182 GiB)."""
    pc.memory["gradient_checkpointing"] = "full"
    pc.notes_en.append("No --gradient_checkpointing: ms-swift turns gradient checkpointing on by default.")
    pc.notes_zh.append("没有 --gradient_checkpointing：ms-swift 默认开启梯度检查点。")


def _read_swift_names(pc: ParsedConfig, d: dict[str, Any]) -> None:
    """ms-swift's own argument names (ms-swift 3.x subclasses Seq2SeqTrainingArguments for the rest): its built-in
    DeepSpeed configs, the model (--model, or 2.x's --model_id_or_path / --model_type) and the method."""
    stage_offload = _SWIFT_DS.get(d["deepspeed"].lower()) if isinstance(d.get("deepspeed"), str) else None
    if stage_offload:
        pc.memory["zero_stage"] = stage_offload[0]
        if stage_offload[1]:
            pc.memory["offload_optimizer"] = True
    if "model" not in pc.memory and pc.model_name is None:
        name = next((d[k] for k in _SWIFT_MODEL_KEYS if isinstance(d.get(k), str) and d[k]), None)
        if name:
            _model(pc, {"model_name_or_path": name})
    method = str(d.get("train_type") or d.get("sft_type") or "").lower()
    if method not in ("lora", "full"):
        return
    quant = _int(d.get("quant_bits") or d.get("quantization_bit"), strict=False)
    pc.memory["finetune"] = "qlora" if method == "lora" and quant == 4 else method
    if method == "full":
        return
    r = _int(d.get("lora_rank"), strict=False)
    if r and r > 0:
        pc.memory["lora_rank"] = r
    targets = d.get("target_modules") or d.get("lora_target_modules")
    if targets is None and "train_type" in d:
        targets = "all-linear"  # ms-swift 3.x TunerArguments: target_modules defaults to ['all-linear']
    _lora_targets(pc, targets)


# ---------------------------------------------------------------------------------------------
# Library adapter: transformers' TrainingArguments and its DeepSpeed path give the verdict.

HF_PATH = (
    "transformers TrainingArguments → HfTrainerDeepSpeedConfig.trainer_config_process → accelerate "
    "DeepSpeedPlugin → set_mixed_precision → trainer_config_process (propagate_args_to_deepspeed) → "
    "trainer_config_finalize → DeepSpeedPlugin.deepspeed_config_process (Accelerator._prepare_deepspeed) → "
    "deepspeed DeepSpeedConfig"
)
ARGS_PATH = "transformers TrainingArguments"
PLACEHOLDER_HIDDEN = 4096
PLACEHOLDER_STEPS = 1000


class _AtWorldSize:
    """TrainingArguments seen from one rank of ``world_size`` data-parallel ranks (no process group)."""

    def __init__(self, args: Any, world_size: int) -> None:
        self._args, self.world_size = args, world_size

    def __getattr__(self, name: str) -> Any:
        return getattr(self._args, name)


def training_arguments(hf: dict[str, Any]) -> tuple[Any, list[str]]:
    """Build the installed ``TrainingArguments`` from the fields of ``hf`` it has (caller holds the lock).

    The hardware probes are answered as on an Ampere-or-newer NVIDIA GPU (the machine
    the user trains on), not as on this server's CPU. Returns (args, fields not passed).
    """
    import dataclasses

    ta = library.loaded("transformers.training_args")
    fields = {f.name for f in dataclasses.fields(ta.TrainingArguments) if f.init}
    kwargs = {k: v for k, v in hf.items() if k in fields and k != "deepspeed"}
    kwargs.setdefault("output_dir", "output")
    patched = {
        "is_torch_bf16_gpu_available": lambda *a, **k: True,
        "is_torch_tf32_available": lambda *a, **k: True,
        "enable_tf32": lambda *a, **k: None,
    }
    saved = {k: getattr(ta, k) for k in patched if hasattr(ta, k)}
    try:
        for k, v in patched.items():
            if k in saved:
                setattr(ta, k, v)
        args = ta.TrainingArguments(**kwargs)
    finally:
        for k, v in saved.items():
            setattr(ta, k, v)
    return args, sorted(set(hf) - set(kwargs))


def _versions() -> dict[str, str]:
    return {n: library.version(n) for n in ("transformers", "accelerate", "deepspeed")}


def training_args_verdict(hf: dict[str, Any], world_size: int) -> LibraryVerdict:
    """What constructing the installed ``TrainingArguments`` from ``hf`` says (no DeepSpeed config given)."""
    ws = max(1, int(world_size))
    if library.load("transformers.training_args") is None:
        return library.unavailable("transformers.training_args", ARGS_PATH, ws)
    versions = {"transformers": library.version("transformers")}
    with library.LOCK, library.quiet(), library.environment({}):
        try:
            training_arguments(hf)
        except Exception as exc:  # noqa: BLE001 - whatever transformers raises is its verdict
            return library.failure(exc, path=ARGS_PATH, step=ARGS_PATH, world_size=ws, versions=versions)
    return LibraryVerdict(available=True, passed=True, path=ARGS_PATH, world_size=ws, versions=versions)


def hf_deepspeed_verdict(
    ds: dict[str, Any], hf: dict[str, Any], world_size: int, hidden_size: int | None = None
) -> LibraryVerdict:
    """The Hugging Face Trainer path for a DeepSpeed JSON + TrainingArguments, up to ``deepspeed.initialize``.

    Runs the real functions in the Trainer's order (transformers ``training_args.py``
    section "DeepSpeed", ``trainer.py`` ``propagate_args_to_deepspeed``,
    ``integrations/deepspeed.py`` ``deepspeed_init``, accelerate
    ``Accelerator._prepare_deepspeed``), then ``DeepSpeedConfig`` at ``world_size``.
    Unknown to us here, and replaced by placeholders said in the notes: the model's
    hidden size (for "auto" bucket sizes) and the number of training steps when
    ``max_steps`` is not given (it depends on the dataset).
    """
    ws = max(1, int(world_size))
    for mod in (
        "transformers.training_args",
        "transformers.integrations.deepspeed",
        "accelerate.utils",
        "deepspeed.runtime.config",
    ):
        if library.load(mod) is None:
            return library.unavailable(mod, HF_PATH, ws)
    integ = library.loaded("transformers.integrations.deepspeed")
    acc = library.loaded("accelerate.utils")
    notes_en: list[str] = []
    notes_zh: list[str] = []
    versions = _versions()
    step = ""
    with library.LOCK, library.quiet(), library.environment({}):
        try:
            step = "transformers TrainingArguments"
            args, _ = training_arguments(hf)
            a = _AtWorldSize(args, ws)
            first = integ.HfTrainerDeepSpeedConfig(copy.deepcopy(ds))
            step = "transformers HfTrainerDeepSpeedConfig.trainer_config_process"
            first.trainer_config_process(a)
            step = "accelerate DeepSpeedPlugin"
            plugin = acc.DeepSpeedPlugin(hf_ds_config=first)
            step = "accelerate DeepSpeedPlugin.set_mixed_precision"
            plugin.set_mixed_precision(args.mixed_precision)
            second = integ.HfTrainerDeepSpeedConfig(plugin.hf_ds_config.config)
            plugin.hf_ds_config, plugin.deepspeed_config = second, second.config
            second.trainer_config_process(a)
            steps = args.max_steps if isinstance(args.max_steps, int) and args.max_steps > 0 else None
            if steps is None:
                explicit = second.get_value("scheduler.params.total_num_steps")
                steps = (
                    explicit
                    if isinstance(explicit, int) and not isinstance(explicit, bool) and explicit > 0
                    else PLACEHOLDER_STEPS
                )
                if second.get_value("scheduler") is not None:
                    notes_en.append(
                        "max_steps is not given, so the number of training steps (from the dataset size) "
                        "is unknown here: scheduler total_num_steps was not compared."
                    )
                    notes_zh.append(
                        "未给出 max_steps，训练总步数（取决于数据集大小）在此未知：未比较 scheduler 的 total_num_steps。"
                    )
            h = hidden_size or PLACEHOLDER_HIDDEN
            model = SimpleNamespace(config=SimpleNamespace(hidden_size=h))
            step = "transformers HfTrainerDeepSpeedConfig.trainer_config_finalize"
            second.trainer_config_finalize(a, model, steps)
            kwargs: dict[str, Any] = {
                "gradient_clipping": 1.0,
                "zero_optimization.stage3_gather_16bit_weights_on_model_save": False,
            }
            plugin.fill_match(
                "gradient_accumulation_steps",
                must_match=False,
                gradient_accumulation_steps=args.gradient_accumulation_steps,
            )
            micro = plugin.get_value("train_micro_batch_size_per_gpu")
            ga = plugin.get_value("gradient_accumulation_steps")
            if micro is not None and micro != "auto" and ga is not None and ga != "auto":
                kwargs["train_micro_batch_size_per_gpu"] = micro
                kwargs["train_batch_size"] = library.mirrored(lambda: micro * ga * ws)
            kwargs.update(
                {
                    "zero_optimization.reduce_bucket_size": h * h,
                    "zero_optimization.stage3_prefetch_bucket_size": int(0.9 * h * h),
                    "zero_optimization.stage3_param_persistence_threshold": 10 * h,
                }
            )
            # deepspeed_optim_sched: a DummyOptim (lr=0.001, weight_decay=0) when the config names an optimizer,
            # else the Trainer's own optimizer (and zero_allow_untested_optimizer=True); a DummyScheduler
            # (warmup_num_steps=0 → max(1, 0), no total_num_steps) when the config names a scheduler.
            if "optimizer" in plugin.deepspeed_config:
                opt_lr = 0.001
                kwargs.update({"optimizer.params.lr": opt_lr, "optimizer.params.weight_decay": 0})
            else:
                opt_lr = args.learning_rate
                plugin.deepspeed_config["zero_allow_untested_optimizer"] = True
            if "scheduler" in plugin.deepspeed_config:
                kwargs.update(
                    {
                        "scheduler.params.warmup_min_lr": 0,
                        "scheduler.params.warmup_max_lr": opt_lr,
                        "scheduler.params.warmup_num_steps": 1,
                    }
                )
            step = "accelerate DeepSpeedPlugin.deepspeed_config_process"
            plugin.deepspeed_config_process(must_match=False, **kwargs)
            filled = copy.deepcopy(plugin.deepspeed_config)
            step = "deepspeed DeepSpeedConfig"
            library.deepspeed_config(plugin.deepspeed_config, ws)
        except Exception as exc:  # noqa: BLE001 - whatever the libraries raise is their verdict
            return library.failure(
                exc,
                path=HF_PATH,
                step=step,
                world_size=ws,
                versions=versions,
                note_en=" ".join(notes_en),
                note_zh="".join(notes_zh),
            )
        finally:
            integ.unset_hf_deepspeed_config()
    if hidden_size is None and any(
        isinstance(filled.get("zero_optimization"), dict)
        and k in ds.get("zero_optimization", {})
        and ds["zero_optimization"][k] == "auto"
        for k in ("reduce_bucket_size", "stage3_prefetch_bucket_size", "stage3_param_persistence_threshold")
    ):
        notes_en.append(
            'The model is unknown here: "auto" bucket sizes were filled from a placeholder hidden size '
            f"{PLACEHOLDER_HIDDEN}; the real values are hidden_size² etc."
        )
        notes_zh.append(
            f'此处不知道模型："auto" 的 bucket 大小按占位的 hidden_size {PLACEHOLDER_HIDDEN} 填充；'
            "真实值为 hidden_size² 等。"
        )
    return LibraryVerdict(
        available=True,
        passed=True,
        path=HF_PATH,
        world_size=ws,
        versions=versions,
        note_en=" ".join(notes_en),
        note_zh="".join(notes_zh),
        filled=_jsonable(filled),
    )


def _jsonable(d: Any) -> Any:
    if isinstance(d, dict):
        return {str(k): _jsonable(v) for k, v in d.items()}
    if isinstance(d, list):
        return [_jsonable(v) for v in d]
    if isinstance(d, float) and not math.isfinite(d):
        return None
    return d if isinstance(d, (str, int, float, bool)) or d is None else str(d)


# ---------------------------------------------------------------------------------------------
# Checks only this format needs


def _hf_values(hf: dict[str, Any] | None) -> dict[str, Any] | None:
    if hf is None:
        return None
    vals = dict(HF_DEFAULTS)
    for k in HF_DEFAULTS:
        if hf.get(k) is not None:
            v = hf[k]
            vals[k] = _scalar(v) if isinstance(v, str) else v
    vals["fp16"] = _truthy(hf.get("fp16")) or _truthy(hf.get("fp16_full_eval"))
    vals["bf16"] = _truthy(hf.get("bf16")) or _truthy(hf.get("bf16_full_eval"))
    vals["auto_find_batch_size"] = _truthy(hf.get("auto_find_batch_size"))
    return vals


def _check_mismatch(out: _Out, ds: ParsedConfig, hf_pc: ParsedConfig, ws: int | None) -> None:
    """HfTrainerDeepSpeedConfig.trainer_config_process / fill_match, reproduced."""
    hf = _hf_values(hf_pc.raw)
    assert hf is not None
    d = ds.raw
    lines: list[tuple[str, str]] = []
    soft = hf["auto_find_batch_size"]
    checks: list[tuple[str, Any, str, bool]] = [
        ("train_micro_batch_size_per_gpu", hf["per_device_train_batch_size"], "per_device_train_batch_size", not soft),
        ("gradient_accumulation_steps", hf["gradient_accumulation_steps"], "gradient_accumulation_steps", True),
    ]
    ga = hf["gradient_accumulation_steps"]
    mb_hf = hf["per_device_train_batch_size"]
    numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (mb_hf, ga))
    tb_hf = ws * mb_hf * ga if ws is not None and numeric else None
    checks.append(("train_batch_size", tb_hf, "train_batch_size (calculated)", not soft))
    checks += [
        ("gradient_clipping", hf["max_grad_norm"], "max_grad_norm", True),
        ("optimizer.params.lr", hf["learning_rate"], "learning_rate", True),
        ("optimizer.params.betas", [hf["adam_beta1"], hf["adam_beta2"]], "adam_beta1+adam_beta2", True),
        ("optimizer.params.eps", hf["adam_epsilon"], "adam_epsilon", True),
        ("optimizer.params.weight_decay", hf["weight_decay"], "weight_decay", True),
        ("scheduler.params.warmup_max_lr", hf["learning_rate"], "learning_rate", True),
        ("fp16.enabled", hf["fp16"], "fp16|fp16_full_eval", True),
        ("bf16.enabled", hf["bf16"], "bf16|bf16_full_eval", True),
    ]
    for ds_key, hf_val, hf_key, must in checks:
        parent, _, leaf = ds_key.rpartition(".")
        node = _get(d, parent) if parent else d
        if not isinstance(node, dict) or not must:
            continue
        ds_val = node.get(leaf)
        if ds_val is None or ds_val == "auto":
            continue
        if hf_val is None:  # train_batch_size with an unknown world size
            mb, g = hf["per_device_train_batch_size"], ga
            if (
                isinstance(ds_val, int)
                and isinstance(mb, int)
                and isinstance(g, int)
                and mb * g > 0
                and ds_val % (mb * g) == 0
            ):
                out.add(
                    "info",
                    ds_key,
                    f"train_batch_size={ds_val} matches the TrainingArguments only on {ds_val // (mb * g)} GPU(s) "
                    f"({mb} × {g} per GPU).",
                    f"train_batch_size={ds_val} 只有在 {ds_val // (mb * g)} 张卡时才与 TrainingArguments 一致"
                    f"（每卡 {mb} × {g}）。",
                    parsed=ds,
                )
                continue
            hf_val = f"world_size × {mb} × {g}"
        if ds_val != hf_val:
            lines.append((ds_key, f"- ds {ds_key}={ds_val} vs hf {hf_key}={hf_val}"))
    if lines:
        body = "\n".join(line for _, line in lines)
        text = (
            "Please correct the following DeepSpeed config values that mismatch TrainingArguments values:\n"
            f"{body}\nThe easiest method is to set these DeepSpeed config values to 'auto'."
        )
        out.add(
            "error",
            lines[0][0],
            f"Hugging Face Trainer will raise (once the model is loaded, in trainer_config_finalize):\nValueError: {text}",
            f"Hugging Face Trainer 会在模型加载后（trainer_config_finalize 中）报错：\nValueError: {text}",
            'Set these keys to "auto" in the DeepSpeed config so the Trainer fills them, or make both sides agree.',
            '把 DeepSpeed 配置里的这些键设为 "auto" 让 Trainer 来填，或让两边的值一致。',
            parsed=ds,
        )
