"""Accelerate config YAML (written by ``accelerate config``): the reader."""

from __future__ import annotations

import copy
import json
import os
import tempfile
from typing import Any

import yaml

from . import library
from .checks import _Out
from .keys import ACC_DS_KEYS, ACC_IGNORED_WITH_FILE, ACC_KEYS
from .library import LibraryVerdict
from .models import ParsedConfig
from .values import _int, _micro_ga_to_memory, _read_batch, _truthy, _unknown


def _parse_accelerate(pc: ParsedConfig) -> None:
    d = pc.raw
    pc.unknown_keys += _unknown(d, ACC_KEYS)
    n = d.get("num_processes")
    if n is not None:
        iv = _int(n)
        if iv is None or iv == 0 or iv < -1:
            pc.invalid["num_processes"] = n
        elif iv > 0:
            pc.world_size = iv
    dist = str(d.get("distributed_type", "")).upper()
    raw_ds = d.get("deepspeed_config")
    ds: dict[str, Any] = raw_ds if isinstance(raw_ds, dict) else {}
    if d.get("deepspeed_config") not in (None, {}) and not isinstance(d.get("deepspeed_config"), dict):
        pc.invalid["deepspeed_config"] = d.get("deepspeed_config")
    pc.unknown_keys += _unknown(ds, ACC_DS_KEYS, "deepspeed_config.")
    is_ds = dist == "DEEPSPEED" or bool(ds)
    mp = str(d.get("mixed_precision", "no")).lower()
    if mp in ("bf16", "fp16"):
        pc.memory["precision"] = f"{mp}-mixed" if is_ds else f"amp-{mp}"
    elif mp in ("no", "none", "false"):
        pc.memory["precision"] = "fp32"
    if is_ds:
        if isinstance(ds.get("deepspeed_config_file"), str):
            pc.deepspeed = ds["deepspeed_config_file"]
        stage = ds.get("zero_stage")
        if stage is not None:
            s = _int(stage)
            if s is None or not 0 <= s <= 3:
                pc.invalid["deepspeed_config.zero_stage"] = stage
            else:
                pc.memory["zero_stage"] = s
        elif not pc.deepspeed:
            pc.memory["zero_stage"] = 2  # DeepSpeedPlugin default (ACCELERATE_DEEPSPEED_ZERO_STAGE or 2)
        s = pc.memory.get("zero_stage", 0)
        if str(ds.get("offload_optimizer_device", "none")).lower() in ("cpu", "nvme") and s >= 1:
            pc.memory["offload_optimizer"] = True
        if str(ds.get("offload_param_device", "none")).lower() in ("cpu", "nvme") and s == 3:
            pc.memory["offload_param"] = True
        _read_batch(pc, ds, {"gradient_accumulation_steps": "gradient_accumulation_steps"}, strict=True)
        _micro_ga_to_memory(pc)
    elif dist == "FSDP":
        raw_fs = d.get("fsdp_config")
        fs: dict[str, Any] = raw_fs if isinstance(raw_fs, dict) else {}
        strategy = str(fs.get("fsdp_sharding_strategy", "FULL_SHARD")).upper()
        stage = {
            "FULL_SHARD": 3,
            "1": 3,
            "SHARD_GRAD_OP": 2,
            "2": 2,
            "NO_SHARD": 0,
            "3": 0,
            "HYBRID_SHARD": 3,
            "4": 3,
        }.get(strategy)
        if fs.get("fsdp_version") == 2 and "fsdp_reshard_after_forward" in fs:
            stage = 3 if _truthy(fs["fsdp_reshard_after_forward"]) else 2
        if stage is not None:
            pc.memory["zero_stage"] = stage
            if pc.memory.get("precision", "").startswith("amp-"):
                pc.memory["precision"] = pc.memory["precision"][4:] + "-mixed"
            pc.notes_en.append(f"FSDP {strategy} is estimated as the equivalent ZeRO stage {stage}.")
            pc.notes_zh.append(f"FSDP {strategy} 按等价的 ZeRO stage {stage} 估算。")
        if _truthy(fs.get("fsdp_offload_params")) and stage == 3:
            pc.memory["offload_param"] = pc.memory["offload_optimizer"] = True


# ---------------------------------------------------------------------------------------------
# Library adapter: accelerate's own config classes and launch-time code give the verdict.

ACC_PATH = (
    "accelerate launch --config_file (launch_command_parser → _validate_launch_command → "
    "prepare_deepspeed_cmd_env) → DeepSpeedPlugin() from that environment → set_mixed_precision → "
    "DeepSpeedPlugin.deepspeed_config_process (Accelerator._prepare_deepspeed) → deepspeed DeepSpeedConfig"
)
_YAML_NAME = "default_config.yaml"
_DS_NAME = "ds_config.json"


def accelerate_verdict(
    raw: dict[str, Any], world_size: int | None, ds: dict[str, Any] | None = None, hidden_size: int | None = None
) -> LibraryVerdict:
    """What ``accelerate launch --config_file <this YAML> train.py`` and the script's Accelerator say.

    The YAML is written to a private temporary folder (accelerate reads configs from
    files) and parsed by accelerate's own ``ClusterConfig``; ``launch_command``'s three
    lines that list the DeepSpeed fields are repeated here (the rest of it starts
    processes). With DeepSpeed, the plugin is built from the environment the launcher
    would export, as the training script's ``Accelerator()`` does. The batch size per
    GPU comes from the script's DataLoader: when the DeepSpeed config leaves it "auto"
    it is taken as 1 here (said in the note).
    """
    ws = None if world_size is None else max(1, int(world_size))
    for mod in (
        "accelerate.commands.launch",
        "accelerate.utils.launch",
        "accelerate.utils",
        "deepspeed.runtime.config",
    ):
        if library.load(mod) is None:
            return library.unavailable(mod, ACC_PATH, ws or 1)
    launch = library.loaded("accelerate.commands.launch")
    ulaunch = library.loaded("accelerate.utils.launch")
    acc = library.loaded("accelerate.utils")
    versions = {n: library.version(n) for n in ("accelerate", "deepspeed")}
    notes_en: list[str] = []
    notes_zh: list[str] = []
    used_ws = ws or 1
    step = ""
    with library.LOCK, library.quiet(), library.environment({}), tempfile.TemporaryDirectory() as tmp:

        def clean(text: str) -> str:
            return text.replace(tmp + os.sep, "").replace(tmp, "")

        try:
            cfg = copy.deepcopy(raw)
            dsc = cfg.get("deepspeed_config")
            if isinstance(dsc, dict) and isinstance(dsc.get("deepspeed_config_file"), str):
                path = os.path.join(tmp, _DS_NAME)
                with open(path, "w", encoding="utf-8") as fh:
                    json.dump(ds if ds is not None else {"zero_optimization": {}}, fh)
                if ds is None:
                    notes_en.append(
                        f"The DeepSpeed config file {dsc['deepspeed_config_file']!r} itself was not given: "
                        "only the Accelerate side was checked."
                    )
                    notes_zh.append(
                        f"没有提供 DeepSpeed 配置文件 {dsc['deepspeed_config_file']!r} 本身：只检查了 Accelerate 部分。"
                    )
                dsc["deepspeed_config_file"] = path
            ypath = os.path.join(tmp, _YAML_NAME)
            with open(ypath, "w", encoding="utf-8") as fh:
                yaml.safe_dump(cfg, fh)
            argv = ["--config_file", ypath] + (["--num_processes", str(ws)] if ws else []) + ["train.py"]
            step = "accelerate launch (ClusterConfig, _validate_launch_command)"
            args = launch.launch_command_parser().parse_args(argv)
            args, defaults, mp_from_config_flag = launch._validate_launch_command(args)
            n = getattr(args, "num_processes", None)
            used_ws = n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else used_ws
            if not (args.use_deepspeed and not args.cpu):
                return LibraryVerdict(
                    available=True,
                    passed=True,
                    path=ACC_PATH,
                    world_size=used_ws,
                    versions={"accelerate": versions["accelerate"]},
                )
            fields = list(defaults.deepspeed_config.keys()) if defaults else []
            if mp_from_config_flag:
                fields.append("mixed_precision")
            args.deepspeed_fields_from_accelerate_config = ",".join(fields)
            _, env = ulaunch.prepare_deepspeed_cmd_env(args)
            with library.environment({k: v for k, v in env.items() if k.startswith("ACCELERATE_")}):
                step = "accelerate DeepSpeedPlugin"
                plugin = acc.DeepSpeedPlugin()
                step = "accelerate DeepSpeedPlugin.set_mixed_precision"
                plugin.set_mixed_precision(os.environ.get("ACCELERATE_MIXED_PRECISION", "no"))
            if ds is None and isinstance(dsc, dict) and "deepspeed_config_file" in dsc:
                return LibraryVerdict(
                    available=True,
                    passed=True,
                    path=ACC_PATH,
                    world_size=used_ws,
                    versions=versions,
                    note_en=" ".join(notes_en),
                    note_zh="".join(notes_zh),
                )
            ga_acc = 1  # Accelerator(gradient_accumulation_steps=1) unless the script says otherwise
            plugin.fill_match("gradient_accumulation_steps", must_match=False, gradient_accumulation_steps=ga_acc)
            micro = plugin.get_value("train_micro_batch_size_per_gpu")
            if micro == "auto":
                micro = 1
                notes_en.append(
                    'The batch size per GPU comes from your DataLoader ("auto" in the DeepSpeed config): '
                    "taken as 1 here."
                )
                notes_zh.append('每卡批次来自你的 DataLoader（DeepSpeed 配置中为 "auto"）：此处按 1 计。')
            kwargs: dict[str, Any] = {
                "gradient_clipping": 1.0,
                "zero_optimization.stage3_gather_16bit_weights_on_model_save": False,
            }
            ga = plugin.get_value("gradient_accumulation_steps")
            if micro is not None:
                kwargs["train_micro_batch_size_per_gpu"] = micro
                kwargs["train_batch_size"] = library.mirrored(lambda: micro * ga * used_ws)
            # Accelerator._prepare_deepspeed: hidden-size "auto" keys from model.config (a placeholder here when the
            # model is unknown), and a DummyOptim / DummyScheduler's defaults when the config names an optimizer /
            # scheduler (accelerate requires them then).
            h = hidden_size or 4096
            kwargs.update(
                {
                    "zero_optimization.reduce_bucket_size": h * h,
                    "zero_optimization.stage3_prefetch_bucket_size": int(0.9 * h * h),
                    "zero_optimization.stage3_param_persistence_threshold": 10 * h,
                }
            )
            if "optimizer" in plugin.deepspeed_config:
                kwargs.update({"optimizer.params.lr": 0.001, "optimizer.params.weight_decay": 0})
                if "scheduler" in plugin.deepspeed_config:
                    kwargs.update(
                        {
                            "scheduler.params.warmup_min_lr": 0,
                            "scheduler.params.warmup_max_lr": 0.001,
                            "scheduler.params.warmup_num_steps": 1,
                        }
                    )
            step = "accelerate DeepSpeedPlugin.deepspeed_config_process"
            plugin.deepspeed_config_process(must_match=False, **kwargs)
            step = "deepspeed DeepSpeedConfig"
            library.deepspeed_config(plugin.deepspeed_config, used_ws)
        except SystemExit as exc:  # argparse refusing a value
            return library.failure(
                ValueError(f"accelerate launch refused the arguments (exit {exc.code})"),
                path=ACC_PATH,
                step=step,
                world_size=used_ws,
                versions=versions,
            )
        except Exception as exc:  # noqa: BLE001 - whatever the libraries raise is their verdict
            v = library.failure(
                exc,
                path=ACC_PATH,
                step=step,
                world_size=used_ws,
                versions=versions,
                note_en=" ".join(notes_en),
                note_zh="".join(notes_zh),
            )
            v.message = clean(v.message)
            return v
    return LibraryVerdict(
        available=True,
        passed=True,
        path=ACC_PATH,
        world_size=used_ws,
        versions=versions,
        note_en=" ".join(notes_en),
        note_zh="".join(notes_zh),
    )


# ---------------------------------------------------------------------------------------------
# Checks only this format needs


def _check_accelerate(out: _Out, pc: ParsedConfig) -> None:
    if pc.kind != "accelerate":
        return
    ds = pc.raw.get("deepspeed_config")
    if isinstance(ds, dict) and ds.get("deepspeed_config_file"):
        clash = [k for k in ACC_IGNORED_WITH_FILE if k in ds]
        if clash:
            names = [k for k in ACC_IGNORED_WITH_FILE] + ["mixed_precision"]
            out.add(
                "error",
                f"deepspeed_config.{clash[0]}",
                f'deepspeed_config_file is given together with {clash}. Accelerate raises "ValueError: When using '
                f'`deepspeed_config_file`, the following accelerate config variables will be ignored: {names}."',
                f'deepspeed_config_file 与 {clash} 同时给出。Accelerate 会报 "ValueError: When using '
                f'`deepspeed_config_file`, the following accelerate config variables will be ignored: {names}."',
                "Move these settings into the DeepSpeed JSON file and delete them here.",
                "把这些设置移到 DeepSpeed JSON 文件里，并从这里删除。",
            )
        if "mixed_precision" in pc.raw and str(pc.raw["mixed_precision"]).lower() != "no":
            out.add(
                "warning",
                "mixed_precision",
                "mixed_precision next to deepspeed_config_file: Accelerate expects precision in the DeepSpeed file "
                '(set fp16/bf16 "enabled" to "auto" there) and may refuse the combination.',
                "mixed_precision 与 deepspeed_config_file 同时出现：Accelerate 期望精度写在 DeepSpeed 文件里"
                '（在那里把 fp16/bf16 的 "enabled" 设为 "auto"），并可能拒绝这种组合。',
                'Remove mixed_precision here, or set the DeepSpeed file\'s fp16/bf16 enabled to "auto".',
                '删掉这里的 mixed_precision，或把 DeepSpeed 文件中的 fp16/bf16 enabled 设为 "auto"。',
            )
    n = pc.raw.get("num_processes")
    machines = _int(pc.raw.get("num_machines", 1)) or 1
    if isinstance(n, int) and n > 0 and machines > 1 and n % machines:
        out.add(
            "error",
            "num_processes",
            f"num_processes={n} is the total over all machines and is not divisible by num_machines={machines}.",
            f"num_processes={n} 是所有机器上的进程总数，不能被 num_machines={machines} 整除。",
            f"Use a multiple of {machines} (GPUs per machine × machines).",
            f"请用 {machines} 的倍数（每机卡数 × 机器数）。",
        )
