"""Step 2 of an answer: the user's training setup, every value with where it came from.

A value is *stated in this message* (prose), *read from* a pasted config, launch command, error
or log, *carried over* from an earlier turn, or *assumed* by the planner. Values in the current
message always win over earlier turns; when two parts of one message disagree (the prose says 8
GPUs, DeepSpeed's assertion says it saw 1) the first stays the setup value and the other is kept
as a conflict, because that disagreement is usually the diagnosis.

Every value is validated as strictly as user input, including values that come back from a
client's history: a forged turn cannot smuggle an unknown GPU or a world size of 1e12 into a
calculator call.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from calculators.presets import GPU_PRESETS, MODEL_PRESETS

from . import runs
from .parts import Part, prose_of
from .slots import (
    SWIFT_MEMORY,
    Slots,
    extract_printed,
    extract_slots,
    extract_smi,
    peft_all_params,
    per_device_formula,
    printed_batch,
)

Provenance = Literal["message", "config", "command", "error", "log", "nvidia_smi", "history", "assumed"]

#: Where a part's values come from, by part kind.
_PART_SOURCE: dict[str, Provenance] = {
    "config": "config",
    "command": "command",
    "traceback": "error",
    "error": "error",
    "log": "log",
    "nvidia_smi": "nvidia_smi",
    "code": "config",
}

_NAME = re.compile(r"^[\w .+/:()\-\u4e00-\u9fff]{1,80}$")


def _half_kind(precision: Any) -> str:
    """bf16 / fp16 / fp32 of a precision value: `--bf16` read by the config parser as "amp-bf16" and by the text
    patterns as "bf16" is one setting read twice, not two settings that disagree."""
    text = str(precision)
    return "bf16" if "bf16" in text else "fp16" if "fp16" in text else text


def _int(lo: int, hi: int) -> Callable[[Any], int | None]:
    def check(v: Any) -> int | None:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v != int(v):
            return None
        v = int(v)
        return v if lo <= v <= hi else None

    return check


def _float(lo: float, hi: float) -> Callable[[Any], float | None]:
    def check(v: Any) -> float | None:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return None
        return float(v) if lo <= v <= hi else None

    return check


def _one_of(*options: Any) -> Callable[[Any], Any]:
    return lambda v: v if isinstance(v, (str, bool)) and v in options else None


def _bool(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


def _name(v: Any) -> str | None:
    return v if isinstance(v, str) and _NAME.match(v) else None


#: The setup vocabulary (the dev set's "stated" keys) and the validator of each value.
VALIDATORS: dict[str, Any] = {
    "model": _one_of(*MODEL_PRESETS),
    "model_text": _name,
    "num_params": _float(1e3, 1e13),
    "gpu": _one_of(*GPU_PRESETS),
    "gpu_text": _name,
    "gpu_memory_gb": _float(1, 2000),
    "world_size": _int(1, 1_000_000),
    "num_nodes": _int(1, 100_000),
    "train_micro_batch_size_per_gpu": _int(1, 10_000_000),
    "gradient_accumulation_steps": _int(1, 10_000_000),
    "ga_from": _int(1, 10_000_000),
    "train_batch_size": _int(1, 10**12),
    "base_batch_size": _int(1, 10**12),
    "base_learning_rate": _float(1e-12, 10),
    "zero_stage": _int(0, 3),
    "fsdp": _one_of("full_shard", "shard_grad_op", "hybrid_shard", "no_shard"),
    "offload_optimizer": _bool,
    "offload_param": _bool,
    "precision": _one_of("fp32", "amp-fp16", "amp-bf16", "fp16-mixed", "bf16-mixed", "bf16"),
    "seq_len": _int(1, 10_000_000),
    "finetune": _one_of("full", "lora", "qlora", "ptuning", "freeze"),
    "quantization": _one_of("int8", "int4"),
    "lora_rank": _int(1, 65_536),
    "gradient_checkpointing": _one_of("none", "selective", "full"),
    "flash_attention": _bool,
    "adamw_kernel": _one_of("fused", "foreach"),
    "pipeline_parallel_size": _int(1, 100_000),
    "tensor_parallel_size": _int(1, 100_000),
    "sequence_parallel_size": _int(1, 100_000),
    "observed_memory_gb": _float(0.001, 100_000),
    "host_ram_gb": _float(1, 100_000),
    "images_per_sample": _int(1, 10_000),
    "image_width": _int(14, 100_000),
    "image_height": _int(14, 100_000),
    "image_max_pixels": _int(784, 10**9),
    "freeze_vision_tower": _bool,
}
SETUP_KEYS: tuple[str, ...] = tuple(VALIDATORS)


def valid_value(key: str, value: Any) -> Any | None:
    """``value`` if it is an acceptable value of ``key``, else None (unknown keys too)."""
    check = VALIDATORS.get(key)
    return None if check is None else check(value)


class SetupValue(BaseModel):
    """One setup value and its provenance."""

    value: Any
    source: Provenance
    evidence: str = Field("", description="The words or key it was read from, clipped.")


class Setup(BaseModel):
    """The setup the answer is computed for. ``values`` never holds an invalid value."""

    values: dict[str, SetupValue] = Field(default_factory=dict)
    conflicts: dict[str, list[SetupValue]] = Field(
        default_factory=dict, description="Other values one message gave for the same key."
    )
    why: dict[str, str] = Field(
        default_factory=dict,
        description="For a key the prose gives two runs' values of (rag.runs): why the setup value is the one the "
        "numbers use (fails: the failing run; peak: the largest memory reading; latest: the later run).",
    )

    def get(self, key: str, default: Any = None) -> Any:
        v = self.values.get(key)
        return default if v is None else v.value

    def has(self, key: str) -> bool:
        return key in self.values

    def source(self, key: str) -> Provenance | None:
        v = self.values.get(key)
        return None if v is None else v.source

    def put(self, key: str, value: Any, source: Provenance, evidence: str = "", *, override: bool = False) -> bool:
        """Add a validated value; a different value for a key already set becomes a conflict."""
        value = valid_value(key, value)
        if value is None:
            return False
        old = self.values.get(key)
        if old is None or override:
            self.values[key] = SetupValue(value=value, source=source, evidence=evidence[:80])
            return True
        if old.value != value and not (
            (key == "precision" and source == old.source and _half_kind(old.value) == _half_kind(value))
            or (key == "gpu_memory_gb" and abs(old.value - value) <= 0.08 * max(old.value, value))
        ):
            # the second: one card told in GB and as the GiB an OOM message prints ("40 GB" vs "39.45 GiB total
            # capacity"), not two cards
            self.conflicts.setdefault(key, []).append(SetupValue(value=value, source=source, evidence=evidence[:80]))
        return False

    def known(self) -> dict[str, Any]:
        """Every value except assumed ones."""
        return {k: v.value for k, v in self.values.items() if v.source != "assumed"}

    def from_message(self) -> dict[str, Any]:
        return {k: v.value for k, v in self.values.items() if v.source not in ("assumed", "history")}

    def carried(self) -> list[str]:
        return [k for k, v in self.values.items() if v.source == "history"]

    def merged_over(self, earlier: Setup) -> Setup:
        """This message's values win; earlier known values are carried over (source ``history``)."""
        out = self.model_copy(deep=True)
        for key, v in earlier.values.items():
            if v.source == "assumed" or key in out.values:
                continue
            if key == "num_params" and "model" in out.values or key == "model" and "num_params" in out.values:
                continue  # a new model replaces the old one, whichever way either was named
            if key == "model_text" and ("model" in out.values or "num_params" in out.values):
                continue
            if key in ("gpu", "gpu_text", "gpu_memory_gb") and any(
                k in out.values for k in ("gpu", "gpu_text", "gpu_memory_gb")
            ):
                continue  # a new GPU replaces the old one, whichever way either was named
            out.values[key] = SetupValue(value=v.value, source="history", evidence=v.evidence)
        return out

    def dump(self) -> dict[str, dict[str, Any]]:
        """JSON form for history and for API clients."""
        return {k: v.model_dump() for k, v in self.values.items()}

    @classmethod
    def load(cls, data: Any, rejected: list[str] | None = None) -> Setup:
        """A setup from a client's history, re-validated value by value; anything invalid is dropped
        (its key, clipped, is appended to ``rejected`` so the answer can say what it ignored)."""
        out = cls()
        if not isinstance(data, dict):
            return out
        for key, item in list(data.items())[:64]:
            if not isinstance(key, str) or not isinstance(item, dict):
                continue
            source = item.get("source")
            if source not in ("message", "config", "command", "error", "log", "nvidia_smi", "history"):
                continue
            evidence = item.get("evidence", "")
            if (
                not out.put(key, item.get("value"), source, evidence if isinstance(evidence, str) else "")
                and key not in out.values
                and rejected is not None
            ):
                rejected.append(key[:40])
        return out


# ---- readers --------------------------------------------------------------------------------
def _put_slots(setup: Setup, slots: Slots, source: Provenance, evidence: str) -> None:
    for key, value in slots.stated().items():
        setup.put(key, value, source, evidence)


_MEMORY_KEYS = {
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "zero_stage",
    "fsdp",
    "offload_optimizer",
    "offload_param",
    "precision",
    "seq_len",
    "finetune",
    "lora_rank",
    "gradient_checkpointing",
    "flash_attention",
    "adamw_kernel",
    "pipeline_parallel_size",
    "world_size",
    "num_nodes",
    "model",
    "gpu",
}


_PRECISION_WORDS = re.compile(
    r"(?<![A-Za-z])(?:bf16|fp16|fp32|float16|bfloat16|float32|half|mixed_precision|amp)(?![A-Za-z])", re.I
)  # whole words: "yi_example_dataset" names no precision
#: Settings the config reader fills with the framework's default when the config leaves them out (LLaMA-Factory:
#: `finetuning_type` lora, `lora_rank` 8, `cutoff_len` 2048). A default is not something the user stated, and seq_len
#: and finetune are run settings that beat the prose (_RUN_SETTINGS): "全参数微调" in the prose next to a YAML without
#: `finetuning_type` must stay full. So these come from a config only when the config names them.
_NAMED_IN_CONFIG = {
    "seq_len": re.compile(
        r"cutoff_len|seq(?:uence)?[-_]?len|max_seq|max_length|max_len\b|block_size|max_source|"
        r"source_max|context_len|max_tokens|max_position",
        re.I,
    ),
    "finetune": re.compile(
        r"finetuning_type|train_type|sft_type|tuning_type|lora|peft|full|freeze|adapter|"
        r"quantiz|4bit|8bit|load_in|prefix|ptuning|p_tuning",
        re.I,
    ),
    "lora_rank": re.compile(r"rank|lora_r\b|\br\s*[:=]", re.I),
}


# A line a script, YAML file or shell command comments out: `# micro_batch_size = 6`, `#--per_device_train_batch_size 16`,
# `// "stage": 3`. Users keep their old settings that way; the run uses the lines that are not commented.
# Only a line that is a setting after its comment mark: a comment that describes the run ("# 6张A10, zero2 + offload",
# "#   tune run --nnodes 1 --nproc_per_node 2 …") still says what the run is.
_COMMENTED_LINE = re.compile(
    r"^[ \t]*(?:#+|//)[ \t]*(?:--?[A-Za-z][\w.-]*(?:[ \t]*[=:]|[ \t]+\S|[ \t]*\\?$)|[\"']?[A-Za-z_][\w.]*[\"']?[ \t]*[=:])"
    r"[^\n]*$",
    re.M,
)


# Values that only name something (a host, a job, a run): "--master_addr=qwen2-5vl-3b-…-bs-zero3-52zfi-master-0" names a
# pod, not the ZeRO stage the run uses (`--deepspeed zero2` in the same command, ms-swift #3327).
_NAME_ONLY_VALUE = re.compile(
    r"((?:--?|\b)(?:master[_-]addr(?:ess)?|MASTER_ADDR|hostname|host|job[_-]name|run[_-]name|wandb[_-]run[_-]name|"
    r"exp(?:eriment)?[_-]name)\s*[=: ]\s*)[\"']?[^\s\"'\\]+[\"']?",
    re.I,
)


# A unified diff of a config (GPT-NeoX #1354: `-    "stage": 1,` then `+    "stage": 3,`): the removed lines are the
# old setting, the added ones the run's.
_DIFF_REMOVED = re.compile(r"^-(?!-)[ \t]+\S.*$\n?", re.M)
_DIFF_ADDED = re.compile(r"^\+(?!\+)(?=[ \t]+\S)", re.M)


def _after_diff(text: str) -> str:
    """``text`` as it reads after a pasted diff is applied, when it holds both removed and added lines."""
    if _DIFF_REMOVED.search(text) and _DIFF_ADDED.search(text):
        return _DIFF_ADDED.sub(" ", _DIFF_REMOVED.sub("", text))
    return text


def _put_config(setup: Setup, part: Part, source: Provenance) -> None:
    """Values a pasted config or command states, read by the config doctor's own parser; then whatever the
    text itself states (`GRPOConfig(per_device_train_batch_size=1, …)`, `--micro_batch_size 4`), without the
    lines it comments out, and as it reads after a pasted diff is applied."""
    part = part.model_copy(update={"text": _after_diff(part.text)})
    live_text = _NAME_ONLY_VALUE.sub(r"\1", _COMMENTED_LINE.sub("", part.text))
    try:
        from calculators import configs

        parsed = configs.parse_config(part.text)
    except Exception:  # noqa: BLE001 - not a config the doctor reads: read the text as written
        _put_slots(setup, extract_slots(live_text), source, "")
        return
    if (parsed.model_name or parsed.memory.get("model")) and any(
        v.evidence == FILE_NAME_EVIDENCE for k, v in setup.values.items() if k in _MODEL_KEYS
    ):
        # the prose named the model only by a file name ("运行实例文件llama3_lora_sft.yaml"): the model this config
        # names (model_name_or_path) is the model
        for key in _MODEL_KEYS:
            setup.values.pop(key, None)
    for key, value in parsed.batch.items():
        if key != "world_size" or parsed.world_size is not None:
            setup.put(key, value, source, key)
    text_slots = extract_slots(live_text)
    for key, value in parsed.memory.items():
        if key == "precision" and not _PRECISION_WORDS.search(part.text):
            continue  # the parser's default, not something the config says
        if key == "precision" and value == "fp32" and text_slots.precision not in (None, "fp32"):
            continue  # a cut command (`--bf16 > log 2>&1 &` on its own line): the flag it shows, not the default
        if key in _NAMED_IN_CONFIG and not _NAMED_IN_CONFIG[key].search(part.text):
            continue  # the reader's framework default, not a value the config states
        if key == "lora_rank" and text_slots.lora_rank not in (None, value):
            continue  # alpaca-lora's `--lora_r=16` read as LLaMA-Factory (default rank 8): the flag as written wins
        if key == "seq_len" and text_slots.seq_len not in (None, value):
            continue  # ms-swift's `--max_length 1024` read as LLaMA-Factory (default cutoff_len 2048): as written wins
        if key == "finetune" and re.search(r"(?:finetuning|train|sft)_type\W{0,4}freeze", part.text, re.I):
            continue  # freeze tuning (some layers trained): neither full nor LoRA, so no method rather than a wrong one
        if key == "finetune" and text_slots.finetune == "ptuning":
            continue  # ChatGLM's P-Tuning script with `--quantization_bit 4`: not QLoRA
        if key in _MEMORY_KEYS and not (key == "world_size" and parsed.world_size is None):
            # ms-swift's gradient checkpointing on by default: the framework's value, not one the command states
            named = key != "gradient_checkpointing" or re.search(r"gradient[-_]checkpointing", part.text)
            setup.put(key, value, source, key if named else FRAMEWORK_DEFAULT_EVIDENCE)
    if parsed.model_name:  # before the text's own words ("template: llama3" names no model)
        setup.put("model_text", _last_segment(str(parsed.model_name))[:60], source, "model_name_or_path")
        _put_slots(setup, _model_only(str(parsed.model_name)), source, "model_name_or_path")
    _put_slots(setup, text_slots, source, "")
    if parsed.world_size is not None:
        setup.put("world_size", parsed.world_size, source, "launcher")


#: The keys that say which model it is.
_MODEL_KEYS = frozenset({"model_text", "model", "num_params"})
#: The evidence of a model the prose names only by a file name (a config or command naming one replaces it).
FILE_NAME_EVIDENCE = "file name"
#: A value the framework sets when the command does not (ms-swift turns gradient checkpointing on): shown as its default.
FRAMEWORK_DEFAULT_EVIDENCE = "framework default"


def _last_segment(path: str) -> str:
    """A model path's last folder: "/opt/modelscope/Meta-Llama-3-8B-Instruct/" names Meta-Llama-3-8B-Instruct."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def _model_only(name: str) -> Slots:
    s = extract_slots(_last_segment(name))
    return Slots(model=s.model, num_params=s.num_params)


_ARTIFACT_KEYS = {"ds_world_size_seen": "world_size"}


#: A launch that counts nodes: torchrun's `--nnodes`, ms-swift's and LLaMA-Factory's `NNODES=`, DeepSpeed's `--num_nodes`,
#: Slurm's `--nodes=2`.
#: (A number: `NNODES="${WORLD_SIZE}"` leaves the count to the platform, and the launch's count is per node.)
_NODE_COUNT_FLAG = re.compile(r"(?:--nnodes|\bNNODES|--num_nodes|--num_machines|--nodes)\s*[= ]\s*[\"']?\d", re.I)


def _launch_counts_nodes(parts: list[Part]) -> bool:
    """Whether a pasted launch command writes its node count as a number (:data:`_NODE_COUNT_FLAG`)."""
    return any(p.kind == "command" and _NODE_COUNT_FLAG.search(p.text) for p in parts)


def _reconcile_per_node(setup: Setup, parts: list[Part]) -> None:
    """ "8 A100s" in the prose and `--num_gpus 8 --num_nodes 3` in the command: the prose counted one node."""
    mine, nodes = setup.values.get("world_size"), setup.get("num_nodes")
    if mine is None or not nodes or nodes < 2:
        return
    others = setup.conflicts.get("world_size", [])
    total = next((o for o in others if o.value == mine.value * nodes and o.source in ("config", "command")), None)
    if total is None and mine.source == "message" and mine.value % nodes == 0 and _launch_counts_nodes(parts):
        # "2台服务器4张4090" read as 4 per node, and `NNODES=2 NPROC_PER_NODE=2` launches 4 in all: the prose's count
        # was the total (the words allow both; a launch that counts the nodes settles it)
        total = next((o for o in others if o.value == mine.value // nodes and o.source == "command"), None)
    if total is not None:
        setup.values["world_size"] = total
        setup.conflicts["world_size"] = [o for o in others if o is not total and o.value != total.value]
        if not setup.conflicts["world_size"]:
            del setup.conflicts["world_size"]


#: The evidence of a GPU count worked out as a pasted config's GPUs per node times the nodes the prose states.
PER_NODE_EVIDENCE = "config per node × stated nodes"


def _config_layout_on_stated_nodes(setup: Setup) -> None:
    """ "with a single node" in the prose, "# Config for 16 nodes of 8 H100s" above a pasted recipe: the recipe's GPU
    count is for its own node count, so the run's is the recipe's GPUs per node times the nodes the user states
    (open-r1 #579: 128 → 8); the recipe's total stays as the conflict shown next to it."""
    mine, ws = setup.values.get("num_nodes"), setup.values.get("world_size")
    if mine is None or ws is None or mine.source != "message" or ws.source not in ("config", "command"):
        return
    theirs = next((c for c in setup.conflicts.get("num_nodes", []) if c.source == ws.source), None)
    if theirs is None or theirs.value == mine.value or ws.value % theirs.value:
        return
    per_node = ws.value // theirs.value
    setup.values["world_size"] = SetupValue(value=per_node * mine.value, source=ws.source, evidence=PER_NODE_EVIDENCE)
    setup.conflicts.setdefault("world_size", []).insert(0, ws)


#: Settings a pasted config or launch command fixes for the run, where a sentence often describes something else: a
#: length in the prose is usually the data's ("每个长度在3000tokens左右" next to `cutoff_len: 4096`), a method the model
#: it starts from ("其中sft model是full parameter" next to `finetuning_type: lora`), a precision the one tried before or
#: asked about ("是否用fp16感觉没咋影响" next to `--fp32`, "设置bf16: true 报错 … 设置fp16: true，<command> --fp16 True").
_RUN_SETTINGS = ("seq_len", "finetune", "precision", "zero_stage")


def _run_settings_over_prose(setup: Setup) -> None:
    """For _RUN_SETTINGS, the config's or command's value is the setup value and the prose's the conflict."""
    for key in _RUN_SETTINGS:
        mine = setup.values.get(key)
        if mine is None or mine.source != "message":
            continue
        theirs = next((v for v in setup.conflicts.get(key, []) if v.source in ("config", "command")), None)
        if theirs is None or {mine.value, theirs.value} == {"qlora", "lora"}:
            continue  # "QLoRA" in the prose is the config's `finetuning_type: lora` on 4-bit weights: more precise
        if key == "precision" and _half_kind(mine.value) == _half_kind(theirs.value):
            continue  # "bf16" both: the prose's reading (pure, mixed) is no worse than the flag's
        setup.values[key] = theirs
        rest = [v for v in setup.conflicts[key] if v.value != theirs.value]
        setup.conflicts[key] = [mine] + rest


def _trainer_flag_over_accelerate_default(setup: Setup, parts: list[Part]) -> None:
    """Accelerate's `mixed_precision: 'no'` (fp32) beside a launch command's `--fp16` / `--bf16`: the HF Trainer's
    flag decides the run's precision (TrainingArguments set Accelerate's mixed precision), so the command's value is
    the setup's and the config's the conflict (LLaMA-Factory #713: `accelerate launch … --fp16`)."""
    mine = setup.values.get("precision")
    if mine is None or mine.source != "config" or mine.value != "fp32":
        return
    if not any(p.kind == "config" and re.search(r"mixed_precision\W{0,3}\s*[:=]", p.text) for p in parts):
        return
    theirs = next((v for v in setup.conflicts.get("precision", []) if v.source == "command"), None)
    if theirs is not None and _half_kind(theirs.value) in ("bf16", "fp16"):
        setup.values["precision"] = theirs
        rest = [v for v in setup.conflicts["precision"] if _half_kind(v.value) != _half_kind(theirs.value)]
        setup.conflicts["precision"] = [mine] + [v for v in rest if v.value != mine.value]


def _named_half_over_unnamed_mixed(setup: Setup) -> None:
    """Prose that says only "mixed precision" / "混合精度" (read as bf16 for want of a type) beside a command's or
    config's `--amp` / `--fp16` / `bf16: true`: the pasted flag names the type the prose left open, so it is the
    setup's precision and the two are no conflict (PaddleDetection #6880: "混合精度" and `--amp` was shown as "amp-fp16
    in the command but amp-bf16 in your message")."""
    value = setup.values.get("precision")
    if value is None:
        return
    named = [value, *setup.conflicts.get("precision", [])]
    theirs = next(
        (v for v in named if v.source in ("config", "command") and _half_kind(v.value) in ("bf16", "fp16")), None
    )
    if theirs is None:
        return
    setup.values["precision"] = theirs
    rest = [v for v in named if v is not theirs and v.value != theirs.value and v.source != "message"]
    if rest:
        setup.conflicts["precision"] = rest
    else:
        del setup.conflicts["precision"]


def _prose_batch_is_the_configs_global(setup: Setup) -> None:
    """ "OOM with batchsize 6" over a pasted `batch_size = 6` / `micro_batch_size = 2` (lit-llama, alpaca-lora): the
    prose's bare batch is the config's global batch, and the micro batch is the config's."""
    key = "train_micro_batch_size_per_gpu"
    mine, total = setup.values.get(key), setup.values.get("train_batch_size")
    if mine is None or mine.source != "message" or total is None or total.source not in ("config", "command"):
        return
    theirs = next((v for v in setup.conflicts.get(key, []) if v.source in ("config", "command")), None)
    if theirs is None or mine.value != total.value or theirs.value == total.value:
        return
    setup.values[key] = theirs
    setup.conflicts[key] = [v for v in setup.conflicts[key] if v.value != theirs.value and v.value != mine.value]
    if not setup.conflicts[key]:
        del setup.conflicts[key]


# `--train_batch_size=1` on a command line with no micro-batch flag: diffusers' training scripts (and the scripts built
# on them: kohya sd-scripts, FastVideo) define it as "Batch size (per device) for the training dataloader"; OpenRLHF,
# whose `--train_batch_size` is the global batch, always writes `--micro_train_batch_size` beside it, and DeepSpeed's
# global `train_batch_size` is a JSON key, not a flag.
_TRAIN_BATCH_FLAG = re.compile(r"(?<![\w-])--train_batch_size(?:=|\s)")
_MICRO_FLAG = re.compile(
    r"micro_train_batch_size|micro_batch|per_device_train_batch_size|per_gpu_train_batch_size", re.I
)


def _train_batch_flag_per_device(setup: Setup, parts: list[Part]) -> None:
    """A command's `--train_batch_size` with no micro-batch flag anywhere is the per-device batch (see above)."""
    total = setup.values.get("train_batch_size")
    if total is None or total.source != "command" or setup.has("train_micro_batch_size_per_gpu"):
        return
    text = "\n".join(p.text for p in parts)
    if not _TRAIN_BATCH_FLAG.search(text) or _MICRO_FLAG.search(text):
        return
    setup.values["train_micro_batch_size_per_gpu"] = SetupValue(
        value=total.value, source="command", evidence="--train_batch_size (per device)"
    )
    del setup.values["train_batch_size"]


# Encoder-decoder style scripts (ChatGLM's, early LLaMA-Factory's `--max_source_length 512 --max_target_length 512`,
# QLoRA's `--source_max_len 1024 --target_max_len 256`) cut the prompt and the answer separately: a training sequence
# is up to their sum.
_SOURCE_LEN = re.compile(
    r"(?<![\w-])-{0,2}(?:max_source_length|source_max_len|max_input_length)[\"']?\s*[:= ]\s*(\d{1,7})\b"
)
_OWN_LENGTH_KEY = re.compile(
    r"(?<![\w-])-{0,2}(?:cutoff_len|max_seq_len(?:gth)?|max_length|model_max_length|seq_len(?:gth)?|"
    r"block_size)[\"']?\s*[:= ]\s*\d",
    re.I,
)
_TARGET_LEN = re.compile(
    r"(?<![\w-])-{0,2}(?:max_target_length|target_max_len|max_output_length)[\"']?\s*[:= ]\s*(\d{1,7})\b"
)


def _line_start(text: str, pos: int) -> bool:
    """Whether only spaces stand between ``pos`` and the start of its line (a config's key, not a word in a sentence)."""
    return not text[text.rfind("\n", 0, pos) + 1 : pos].strip()


def _source_plus_target(setup: Setup, parts: list[Part]) -> None:
    """seq_len = source + target length when a pasted config or command sets both, or prose has both as lines of a
    config pasted without a fence (GLM-4#468: "lora.yaml\ncombine: True\nmax_input_length: 8192\n…"); a length the
    run sets under its own name (`cutoff_len`, `max_seq_length`) stays."""
    for part in parts:
        if part.kind not in ("config", "command", "code", "prose"):
            continue
        src, tgt = _SOURCE_LEN.search(part.text), _TARGET_LEN.search(part.text)
        if not (src and tgt) or _OWN_LENGTH_KEY.search(part.text):
            continue
        if part.kind == "prose" and not all(_line_start(part.text, m.start()) for m in (src, tgt)):
            continue
        source, total = _PART_SOURCE.get(part.kind, "message"), int(src.group(1)) + int(tgt.group(1))
        mine = setup.values.get("seq_len")
        if mine is not None and mine.value != total and mine.source == "message":
            setup.conflicts.setdefault("seq_len", []).append(mine)
        setup.put("seq_len", total, source, "max_source_length + max_target_length", override=True)
        if "seq_len" in setup.conflicts:  # the halves read on their own are not other values of the length
            halves = (int(src.group(1)), int(tgt.group(1)))
            setup.conflicts["seq_len"] = [
                c for c in setup.conflicts["seq_len"] if c.source == "message" or c.value not in halves
            ]
            if not setup.conflicts["seq_len"]:
                del setup.conflicts["seq_len"]
        return


# A process count the user wrote into the launch itself: `--nproc_per_node 4`, `--num_gpus=2`, `--num_processes 1`,
# `NPROC_PER_NODE=8`, `num_processes: 8` in an Accelerate config. (A count the launcher defaults to, such as plain
# `python train.py`, is not one.)
_EXPLICIT_COUNT = re.compile(
    r"(?:nproc[-_]per[-_]node|num[-_]gpus(?:_per_worker)?|num[-_]processes|NPROC_PER_NODE)[\"']?\s*[:= ]\s*[\"']?(\d{1,5})\b",
    re.I,
)


def _launch_count_over_prose(setup: Setup, parts: list[Part]) -> None:
    """ "I used two GPUs … one for training, another for vllm" with `accelerate launch --num_processes 1`: the count the
    launch states is the run's world size (the prose's count, usually the machine's GPUs, stays as the conflict shown
    next to it). A count only an error or log prints (DeepSpeed's assertion) does not move: that disagreement is the
    diagnosis."""
    mine = setup.values.get("world_size")
    if mine is None or mine.source != "message" or (setup.get("num_nodes") or 1) > 1:
        return
    explicit = {
        int(m.group(1))
        for p in parts
        if p.kind in ("command", "config", "code")
        for m in _EXPLICIT_COUNT.finditer(re.sub(r"(?m)^\s*#.*$", "", p.text))
    }  # not a commented-out launch
    theirs = next(
        (v for v in setup.conflicts.get("world_size", []) if v.source in ("command", "config") and v.value in explicit),
        None,
    )
    if theirs is None or len(explicit) != 1:
        return
    setup.values["world_size"] = theirs
    setup.conflicts["world_size"] = [mine] + [v for v in setup.conflicts["world_size"] if v.value != theirs.value]


# A DeepSpeed / MPI hostfile line: "worker-1 slots=8".
_HOSTFILE_LINE = re.compile(r"^[ \t]*[\w.-]+[ \t]+slots[ \t]*=[ \t]*(\d{1,3})[ \t]*$", re.M)
# `CUDA_VISIBLE_DEVICES=0,1,2,3` (also written in a sentence), or a bracketed device list ("with GPU [0,1,2,3]",
# `gpu_ids: [0, 1]`, `gpus=[0,1]`): the GPUs the user gave the run.
# (Unsloth's warning "'CUDA_VISIBLE_DEVICES' is currently 0,1,2,3 but we require 'CUDA_VISIBLE_DEVICES=0'": the
# current list is the user's, the required one the library's, see _visible_counts)
_VISIBLE = re.compile(
    r"CUDA_VISIBLE_DEVICES['\"]?\s*(?:=|\bis currently\b)\s*[\"']?(\d+(?:\s*,\s*\d+)*)|"
    r"(?i:\bgpu(?:s|_?ids?)?)\s*[=:]?\s*\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]|"
    # a script's own device option in prose or a command not recognised as one: Caffe's `caffe train --gpu=0,1,2,3`
    # (two or more ids: "--gpu 1" is one device's id)
    r"--(?:gpus?|gpu[-_]ids|devices)[=\s]\s*(\d{1,3}(?:,\d{1,3})+)\b"
)


def _devices(m: re.Match[str]) -> int:
    """How many devices a :data:`_VISIBLE` match lists."""
    return len((m.group(1) or m.group(2) or m.group(3)).split(","))


_REQUIRED_BEFORE = re.compile(r"requir\w*\s*['\"`]?$", re.I)


def _visible_counts(text: str) -> list[int]:
    """The device counts the text gives runs, in order (not a list a library says it requires)."""
    return [
        _devices(m)
        for m in _VISIBLE.finditer(text)
        if not _REQUIRED_BEFORE.search(text[max(0, m.start() - 16) : m.start()])
    ]


def _counts_from_hostfile_and_visible(setup: Setup, text: str) -> None:
    """The GPU count written as a hostfile (the sum of its slots, one node a line) or as the devices made visible,
    when nothing else stated one: "worker-1 slots=8 / worker-2 slots=8" is 2 nodes × 8; "I run
    CUDA_VISIBLE_DEVICES=0,1 python train.py" gives the run 2 GPUs (a launcher's own count, read elsewhere, wins)."""
    if setup.has("world_size"):
        return
    slots = [int(n) for n in _HOSTFILE_LINE.findall(text)]
    if slots and all(n > 0 for n in slots):
        setup.put("world_size", sum(slots), "config", "hostfile slots")
        if not setup.has("num_nodes"):
            setup.put("num_nodes", len(slots), "config", "hostfile lines")
        return
    visible = set(_visible_counts(text))
    if len(visible) == 1:
        setup.put("world_size", visible.pop(), "message", "CUDA_VISIBLE_DEVICES")


# "我有三张22g的2080TI", "I have 4 GPUs", "our server has 8 cards": the GPUs the user owns, not those a run is given.
_OWNED_COUNT = re.compile(
    r"(?:我|我们|服务器|机器|\bI\b|\bwe\b|server|machine)\s*(?:这边|上)?\s*(?:只|总共|一共|共|only\s+)?\s*(?:有|是|have|has|got)\s*"
    r"(?:only\s+)?(\d{1,2}|[一二两三四五六七八九十]|two|three|four|five|six|seven|eight)\s*(?:张|块|个)?",
    re.I,
)
_OWNED_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_OWNED_NUM.update({"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8})


def _visible_over_owned(setup: Setup, text: str) -> None:
    """ "我有三张22g的2080TI gpu" in the prose, `set CUDA_VISIBLE_DEVICES=0,1` before the launch: the count the
    user owns loses to the devices the failing run is given (the widest list: a one-device list beside it is the
    single-GPU run people contrast it with). The owned count is not kept: it is not the run's."""
    mine = setup.values.get("world_size")
    if mine is None or mine.source != "message" or mine.evidence == "CUDA_VISIBLE_DEVICES":
        return
    owned = {
        _OWNED_NUM.get(m.group(1).lower()) or int(m.group(1))
        for m in _OWNED_COUNT.finditer(text)
        if m.group(1).isdigit() or m.group(1).lower() in _OWNED_NUM
    }
    if mine.value not in owned:
        return
    visible = _visible_counts(text)
    # (a one-device list alone is the run: "只是先指定使用第二块gpu，因为我这边是4块A100" with CUDA_VISIBLE_DEVICES=1)
    if visible and max(visible) < mine.value and (max(visible) > 1 or len(set(visible)) == 1):
        setup.values["world_size"] = SetupValue(value=max(visible), source="message", evidence="CUDA_VISIBLE_DEVICES")


_LOADING_LINE = re.compile(
    r"^.*(?:model_name_or_path|base_model|pretrained_model|model_path|model_id|model_dir|load)\w*[\"']?\s*[:= ].*$",
    re.I | re.M,
)


def _loaded_model_over_prose(setup: Setup, parts: list[Part]) -> None:
    """ "chatglm-6B 可以 run，如果改为 Yi-34B-Chat 就报错" with `--model_name_or_path ../Yi-34B-Chat` in the command:
    the model the pasted launch loads is the run's; the prose's other model (a comparison, a misremembered name) is
    kept as the conflict shown next to it. Only a name the launch resolves to a model or a size replaces it."""
    mine = {k: v for k in _MODEL_KEYS if (v := setup.values.get(k)) is not None and v.source == "message"}
    if "model_text" not in mine:
        return
    source = next((v.source for v in setup.conflicts.get("model_text", []) if v.source in ("config", "command")), None)
    if source is None:
        return
    theirs = {
        k: next(v for v in setup.conflicts[k] if v.source == source)
        for k in _MODEL_KEYS
        if any(v.source == source for v in setup.conflicts.get(k, []))
    }
    theirs.update({k: v for k in _MODEL_KEYS - set(theirs) if (v := setup.values.get(k)) and v.source == source})
    if not ({"model", "num_params"} & set(theirs)) or "model_text" not in theirs:
        return
    loading = [
        line
        for p in parts
        if p.kind in ("config", "command", "code")
        for line in _LOADING_LINE.findall(re.sub(r"(?m)#.*$", "", p.text))
    ]  # the launch's model key names it (not a comment's "e.g. llama-13b")
    if not any(str(theirs["model_text"].value) in line for line in loading):
        return
    for key in _MODEL_KEYS:
        rest = [v for v in setup.conflicts.get(key, []) if key not in theirs or v.value != theirs[key].value]
        if key in mine:
            rest.insert(0, mine[key])
        if key in theirs:
            setup.values[key] = theirs[key]
        else:
            setup.values.pop(key, None)
        if rest:
            setup.conflicts[key] = rest
        else:
            setup.conflicts.pop(key, None)


def _printed_capacity_over_prose(setup: Setup) -> None:
    """ "single A100 8G0GB" (a typo) in the prose, "80.00 GiB total capacity" in the pasted CUDA OOM error: the
    capacity the error prints is the device's; a prose capacity far from it (more than 15%) yields to it and stays
    as the conflict. Close ones ("24G" beside "23.65 GiB total capacity") keep the user's round figure."""
    mine = setup.values.get("gpu_memory_gb")
    if mine is None or mine.source != "message":
        return
    printed = next(
        (v for v in setup.conflicts.get("gpu_memory_gb", []) if v.source in ("error", "log", "traceback")), None
    )
    if printed is None or abs(float(mine.value) - float(printed.value)) <= 0.15 * float(printed.value):
        return
    setup.values["gpu_memory_gb"] = printed
    setup.conflicts["gpu_memory_gb"] = [mine] + [v for v in setup.conflicts["gpu_memory_gb"] if v is not printed]


#: Counts a framework prints of the run it launched (Megatron-LM's "using world size: 16 and model-parallel size: 2",
#: DeepSpeed's config print): what ran, whatever a sentence said ("64*V100" in a title, Megatron-LM #60).
_PRINTED_LAYOUT = ("world_size", "tensor_parallel_size", "pipeline_parallel_size")


def _printed_layout_over_prose(setup: Setup) -> None:
    """The GPU count and parallel degrees a log or error prints beat the prose's; the prose's stay as conflicts."""
    for key in _PRINTED_LAYOUT:
        mine = setup.values.get(key)
        if mine is None or mine.source != "message":
            continue
        others = setup.conflicts.get(key, [])
        printed = next(
            (v for v in others if v.source in ("log", "error", "traceback") and v.evidence == "printed"), None
        )
        if printed is None:
            continue
        setup.values[key] = printed
        setup.conflicts[key] = [mine] + [v for v in others if v is not printed]


def _printed_batch_over_config(setup: Setup, parts: list[Part]) -> None:
    """`per_device_train_batch_size = 1` in the config, "Batch size per device = 8" in the banner the framework printed
    at start (Unsloth raises it to `num_generations`): the printed batch is the one that ran; the config's stays as
    the conflict."""
    banner = [(k, v, p.kind) for p in parts if p.kind in _PART_SOURCE for k, v in printed_batch(p.text).items()]
    for key, value, kind in banner:
        mine = setup.values.get(key)
        if mine is None or mine.value == value:
            continue
        theirs = setup.conflicts.get(key, [])
        printed = next((v for v in theirs if v.value == value), None) or SetupValue(
            value=value, source=_PART_SOURCE[kind], evidence="printed"
        )
        setup.values[key] = printed
        setup.conflicts[key] = [mine] + [v for v in theirs if v is not printed]


def _named_model_over_bare_size(setup: Setup) -> None:
    """ "我至少能微调70B的模型" in the prose, `model_name_or_path: …/deepseek-llm-7b-base` in the config: a bare size in a
    sentence loses to the model the run loads (the size is kept as a conflict, shown next to it)."""
    size, named = setup.values.get("num_params"), setup.values.get("model_text")
    if size is None or size.source != "message" or named is None or named.source not in ("config", "command"):
        return
    mine = setup.values.get("model")
    if mine is not None and mine.source == "message":
        return
    theirs = next((v for v in setup.conflicts.get("num_params", []) if v.source == named.source), None)
    if theirs is None and mine is None:
        return  # the config's name carries no size ("open_llama_3b_v2" read without one): the prose's stays
    setup.conflicts.setdefault("num_params", []).insert(0, size)
    if theirs is not None:
        setup.values["num_params"] = theirs
        setup.conflicts["num_params"] = [v for v in setup.conflicts["num_params"] if v is not theirs]
    else:
        del setup.values["num_params"]  # the named model (or its preset) gives the size


def _put_artifacts(setup: Setup, parts: list[Part]) -> list[Any]:
    """Values the diagnosis readers find in errors, logs, commands and nvidia-smi tables."""
    try:
        from calculators.diagnose import detect_artifacts
        from calculators.shell import shell_variables
    except ImportError:
        return []
    if all(p.kind == "prose" for p in parts):
        return []
    artifacts: list[Any] = []
    # the shell variables the message has set so far: `CUDA_VISIBLE_DEVICES=0,1,2,3` in the prose above `deepspeed
    # --include localhost:$CUDA_VISIBLE_DEVICES`
    shell_vars: dict[str, str] = {}
    for part in sorted(parts, key=lambda p: p.start):
        found: list[Any] = []
        if part.kind != "prose":
            try:
                found = detect_artifacts(part.text, shell_vars)
            except Exception:  # noqa: BLE001 - a reader bug must not cost the user an answer
                found = []
        shell_vars.update(shell_variables(part.text))
        source = _PART_SOURCE.get(part.kind, "error")
        for art in found:
            artifacts.append(art)
            fields = dict(getattr(art, "fields", None) or {})
            if fields.get("launcher") == "python" and (
                gave := fields.get("script_devices") or fields.get("python_visible_unused")
            ):
                # `CUDA_VISIBLE_DEVICES=0,1,2,3 python main.py`, `python train.py --gpus 0,1,2,3`: one process, but the
                # GPUs the user gave it are the count they state (the HF Trainer then runs DataParallel over all of
                # them: n_gpu = 4; Lightning spawns one process per device); "python starts one process" stays the
                # diagnosis where it applies (launch.python_single_process).
                fields["world_size"] = gave
            elif fields.get("launcher") == "python" and _helper_script(getattr(art, "key_line", "")):
                # `python prepare_panoptic_fpn.py` before `python tools/train_net.py --num-gpus 4` (detectron2 #987):
                # a data-preparation step runs no training, so its one process is no GPU count
                fields.pop("world_size", None)
                fields.pop("num_nodes", None)
            for key, value in fields.items():
                # DeepSpeed's batch assertion prints the world size it saw: next to the user's own count it is the
                # disagreement the diagnosis is about (kept as a conflict), alone it is the world size.
                key = _ARTIFACT_KEYS.get(key, key)
                if key in VALIDATORS:
                    setup.put(key, value, "command" if art.kind == "launch_command" else source, art.kind)
    return artifacts


#: The script of a plain ``python`` command that prepares data or converts files rather than trains.
_HELPER_SCRIPT = re.compile(
    r"(?:^|\s)python3?\s+(?:\S*/)?(?:\w*_)?(?:prepare|preprocess|convert|download|tokeni[sz]e|build_dataset|make_data)"
    r"\w*\.py\b",
    re.I,
)


def _helper_script(line: str) -> bool:
    """Whether a plain ``python`` command line runs a helper script (:data:`_HELPER_SCRIPT`), not a training one."""
    return bool(_HELPER_SCRIPT.search(line)) and "train" not in line.split(".py", 1)[0].rsplit("/", 1)[-1].lower()


# A sentence about an earlier run ("之前int4单卡训练chatglm，单卡10G以内足够了", "Previously I trained on 2 GPUs"): its
# values are the comparison, not the run the question is about.
_EARLIER_RUN = re.compile(
    r"^\W*(?:之前|以前|上次|先前|此前|previously|earlier,|before that|in the past|last time)", re.I
)
# Where a sentence about an earlier run turns to the current one: "…，现在换成4卡…", "…, but now on 4 GPUs …".
_NOW_CLAUSE = re.compile(
    r"[,，、]\s*(?:但是?|可是|而|不过)?\s*((?:现在|目前|如今|这次|这回)|(?:but\s+|and\s+)?(?:now|this time|currently)\b)",
    re.I,
)
# Hearsay inside a sentence ("这个visul glm采用lora听别人讲需要30G以上", "和别人沟通后得知8*A100(40G)可…"): from the
# marker to the end of the sentence is someone else's setup.
_HEARSAY = re.compile(
    r"听别人(?:讲|说)|听说|据说|别人说|和别人沟通后得知|(?:someone|others?|people) (?:said|told me|say)|"
    r"\bI(?:'ve)? heard\b|"
    # another thread's report: "#29 提到使用了一张40G的A100" (mPLUG-Owl #143, the user runs on an 80G one), "#12 中说",
    # "issue #29 mentions/says"
    r"(?<![\w#])#\d{1,6}\s*(?:中|里)?\s*(?:提到|说|讲|写)|\b(?:issue|thread|PR)\s*#?\d{1,6}\s+(?:says|said|mentions?|mentioned)\b|"
    # a project's published result: "I saw that in your README, the throughput for 70B … on 768GPUs was 420.5
    # TFLOPs/s/GPU" (Megatron-LM #1031, the user's run is on 128), "看到官方README里…"
    r"\bI (?:saw|see|read|noticed) (?:that )?(?:in|on) (?:your|the|their) (?:README|paper|docs?|documentation|blog|"
    r"benchmarks?|table)\b|看到(?:你们|官方)?的?(?:README|readme|文档|论文|博客)(?:里|中|上)",
    re.I,
)
# "deepspeed里面提到32g最多可以支持13B", "the README says 7B needs 80GB": what a document claims, up to the clause's
# end (the user's own clause may follow a comma: "文档说要8卡，我只有2张").
_DOC_CLAIM = re.compile(
    r"(?:里面|文档(?:里|中)?|官方|readme|论文(?:里|中)?|教程(?:里|中)?)\s*(?:有)?(?:提到|说|写着|写道)|"
    r"(?:the\s+)?(?:docs?|documentation|readme|paper|tutorial)\s+(?:says?|said|mentions?|claims?)\b|"
    r"according to (?:the\s+)?(?:docs?|documentation|readme|paper|guide|best practices?)|"
    # "[按照最佳实践](…) 20G可以微调7B模型": a guide's claim, introduced by "following / according to"
    r"(?:按照|根据|依照)\s*\[?\s*(?:官方)?(?:的)?\s*(?:最佳实践|文档|readme|教程|说明|指南)",
    re.I,
)
# … when what it claims is what a setup needs or supports ("最多可以支持13B", "7B needs 80GB"), not a value asked about.
_CAPABILITY = re.compile(
    r"最多|至少|最少|需要|支持|足够|够用|(?:能|可以)(?:跑|微调|训练)|requires?|needs?|supports?|enough|fits?\b|"
    r"\bcan (?:fine-?tune|train|run)\b",
    re.I,
)
_OWN_ESTIMATE = re.compile(r"估计|估算|计算|算下来|\bestimat\w*|\bcalculat\w*", re.I)
# "默认deepspeed的配置使用的是stage2吗？", "is the default stage 2?": a question about a default, not the run's value.
_DEFAULT_ASKED = re.compile(
    r"默认[^。？?！!\n，,]{0,20}(?:是|用的是|使用的是|为)\s*[^。？?！!\n，,]{1,15}吗\s*[？?]|"
    r"\bis (?:the|it) default\b[^?\n]{0,40}\?|\bthe default [\w\s]{1,20} is \w+\s*\?",
    re.I,
)
# Where a sentence ends: Chinese and ASCII end marks, line breaks, and ". " / "." before Chinese ("足够了.这个…").
_SENTENCE_END = re.compile(r"[。！？!?；;]+|\n|(?<=[A-Za-z0-9\u4e00-\u9fff）)])\.(?=\s+[A-Z]|[\u4e00-\u9fff])")


def own_prose(prose: str) -> str:
    """The user's prose without sentences about an earlier run and without hearsay: what the current setup is read
    from (the dev set's labels keep those values out of "stated"). The text that stays is unchanged."""
    out, start = [], 0
    for end in [m.end() for m in _SENTENCE_END.finditer(prose)] + [len(prose)]:
        sentence = prose[start:end]
        start = end
        if not sentence:
            continue
        if _EARLIER_RUN.search(sentence):
            # "之前用8卡跑没问题，现在换成4卡就OOM了": the clause from "now" on is the run in question.
            now = _NOW_CLAUSE.search(sentence)
            out.append(" " + sentence[now.start(1) :] if now else "\n" if sentence.endswith("\n") else " ")
            continue
        if _DEFAULT_ASKED.search(sentence):
            out.append("\n" if sentence.endswith("\n") else " ")
            continue
        pos = 0
        while doc := _DOC_CLAIM.search(sentence, pos):
            clause_end = re.search(r"[，,;；]|$", sentence[doc.end() :])
            cut = doc.end() + (clause_end.start() if clause_end else len(sentence))
            if not _CAPABILITY.search(sentence, doc.end(), cut) or _OWN_ESTIMATE.search(sentence, doc.end(), cut):
                # "论文里提到的batch_size=19200": a value the user asks about, kept; "根据文档估计的显卡资源70B模型大概需要
                # 600G": the user's own estimate for their run, made with the document's rule
                pos = doc.end()
                continue
            sentence = sentence[: doc.start()] + " " + sentence[cut:]
        if m := _HEARSAY.search(sentence):
            sentence = sentence[: m.start()] + ("\n" if sentence.endswith("\n") else " ")
        out.append(sentence)
    return "".join(out)


def _train_batch_per_device_in_formula(setup: Setup, prose: str) -> None:
    """`train_batch_size: 1` in a pasted config, "总batch = train_batch_size * GA * 卡数" in the prose: the user's own
    formula makes it the per-device batch (their script's name for it), so it is the micro batch here."""
    total = setup.values.get("train_batch_size")
    if total is None or setup.has("train_micro_batch_size_per_gpu") or per_device_formula(prose) is None:
        return
    setup.values["train_micro_batch_size_per_gpu"] = total
    del setup.values["train_batch_size"]


def _lora_on_4bit_is_qlora(setup: Setup) -> None:
    """LoRA on base weights loaded in 4 bits is QLoRA (LLaMA-Factory writes it `finetuning_type: lora` +
    `quantization_bit: 4`): the method the memory calculator models for it, from wherever the two values came."""
    method = setup.values.get("finetune")
    if method is not None and method.value == "lora" and setup.get("quantization") == "int4":
        setup.values["finetune"] = SetupValue(value="qlora", source=method.source, evidence=method.evidence)
        if "finetune" in setup.conflicts:
            setup.conflicts["finetune"] = [c for c in setup.conflicts["finetune"] if c.value != "qlora"]
            if not setup.conflicts["finetune"]:
                del setup.conflicts["finetune"]


# A launch command printed as Python's argv list when the run dies: DeepSpeed's launcher
# ("[launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', '--local_rank=0', '--per_device_train_batch_size',
# '4', …] exits with return code = 1") and subprocess's "CalledProcessError: Command '[…]' returned non-zero exit status".
# An argument the paste wrapped ("'--evaluation_strategy', 'no\n', '--save_strategy'", LLaVA #827) is still one argument.
_ARGV_ITEM = r"'[^'\n]{0,300}(?:\n[^'\n]{0,300})?'"
_PRINTED_ARGV = re.compile(rf"\[\s*{_ARGV_ITEM}(?:\s*,\s*{_ARGV_ITEM}){{3,400}}")


# DeepSpeed's runner logs the command it starts: "[runner.py:555:main] cmd = /usr/bin/python -u -m
# deepspeed.launcher.launch --world_info=… train.py --deepspeed ds.json --model_name_or_path …".
_RUNNER_CMD = re.compile(r"\]\s*cmd\s*=\s*(\S[^\n]*\s--[^\n]*)")


# VS Code's launch.json runs a script with its arguments as a JSON list: "args": ["--per_device_train_batch_size", "4",
# …] (LLaMA-Factory #2674): the command line the user launches, whatever part of the message it was pasted in.
_LAUNCH_JSON_ARGS = re.compile(r'"args"\s*:\s*\[((?:\s*"[^"\n]*"\s*,?){2,400})\s*\]')


def _argument_lists(part: Part, lists: re.Pattern[str], item: str) -> list[Part]:
    """Every quoted argument list ``lists`` finds in the part (each argument matched by ``item``), joined into a
    command part when it passes an option."""
    out = []
    for m in lists.finditer(part.text):
        args = re.findall(item, m.group(0))
        if any(a.startswith("--") for a in args):
            out.append(
                Part(
                    kind="command",
                    text=" ".join(a.strip() for a in args),
                    start=part.start + m.start(),
                    end=part.start + m.end(),
                )
            )
    return out


def _launch_json_commands(part: Part) -> list[Part]:
    """The argument lists of a pasted launch.json, as command parts."""
    return _argument_lists(part, _LAUNCH_JSON_ARGS, r'"([^"\n]*)"(?!\s*:)')


def _printed_commands(part: Part) -> list[Part]:
    """The launch commands a log or an error prints (argv lists, DeepSpeed's `cmd = …` line), as command parts."""
    out = [
        Part(kind="command", text=m.group(1), start=part.start + m.start(1), end=part.start + m.end(1))
        for m in _RUNNER_CMD.finditer(part.text)
    ]
    return out + _argument_lists(part, _PRINTED_ARGV, r"'([^'\n]*(?:\n[^'\n]*)?)'")


#: The evidence of a value another run in the same prose gives (rag.runs): shown next to the value the numbers use.
OTHER_RUN_EVIDENCE = "another run"


def _runs_in_prose(setup: Setup, prose: str, prose_slots: Slots, launched: bool = False) -> None:
    """Two values the prose gives for one setting (two runs, two readings): every value is kept, the one the question is
    about is the setup value and the others are conflicts shown next to it. The whole-prose reading stays the setup
    value unless :func:`rag.runs.choose` has a reason the whole reading lacks: a run reported to fail beside one
    reported to work (the failing one is asked about), or the peak of several memory readings. ``prose_slots``: the
    whole prose's reading, already made by the caller."""
    for key, choice in runs.choices(prose, adapter=prose_slots.finetune in ("lora", "qlora")).items():
        if key == "model":
            if not launched:  # a pasted launch or config names the model the run loads (_loaded_model_over_prose)
                _model_runs(setup, choice)
            continue
        if key == runs.LAYOUT_KEY:
            _layout_runs(setup, choice)
            continue
        mine = setup.values.get(key)
        if mine is None or mine.source != "message":
            continue
        read = [choice.chosen, *choice.others]
        if not any(c.value == mine.value for c in read):
            continue  # the whole reading understood the values otherwise (a total, a change): it stays alone
        works = {c.value for c in runs.candidates_of(choice) if c.outcome == "works"}
        if (choice.why == "fails" and mine.value in works) or choice.why == "peak":
            setup.values[key] = SetupValue(value=choice.chosen.value, source="message", evidence=choice.why)
            setup.why[key] = choice.why
        elif mine.value == choice.chosen.value:
            setup.why[key] = choice.why
        kept = setup.values[key].value
        others = [c.value for c in read if c.value != kept]
        if key == "observed_memory_gb":  # readings within 10% are one run's, card by card ("54.53 GB … 52.59 GB")
            others = [v for v in others if abs(float(v) - float(kept)) > 0.1 * max(float(v), float(kept))]
        known = {v.value for v in setup.conflicts.get(key, [])}
        for value in dict.fromkeys(others):
            if value not in known and valid_value(key, value) is not None:
                setup.conflicts.setdefault(key, []).append(
                    SetupValue(value=value, source="message", evidence=OTHER_RUN_EVIDENCE)
                )


def _layout_runs(setup: Setup, choice: runs.Choice) -> None:
    """Two GPU layouts counted in nodes, one reported to fail ("trains on 1 node 8xA100 but hits OOM in 4 nodes
    8xA100", "4机共32张 … 正常，16机共128张 … 卡在保存断点"): the failing one's nodes and GPU count are the setup's, the
    other run's are shown next to them. The same for a layout beside one reported to work ("单机8卡训练…正常…更换2机16卡后…",
    ms-swift #2280)."""
    if choice.why not in ("fails", "other_works"):
        return
    nodes, total = choice.chosen.value
    for key, value in (("num_nodes", nodes), ("world_size", total)):
        mine = setup.values.get(key)
        setup.why[key] = choice.why
        if mine is not None and mine.value == value:
            continue
        setup.values[key] = SetupValue(value=value, source="message", evidence=choice.why)
        if mine is not None:
            setup.conflicts.setdefault(key, []).insert(
                0, SetupValue(value=mine.value, source="message", evidence=OTHER_RUN_EVIDENCE)
            )
        setup.conflicts[key] = [c for c in setup.conflicts.get(key, []) if c.value != value]
        if not setup.conflicts[key]:
            del setup.conflicts[key]


def _model_runs(setup: Setup, choice: runs.Choice) -> None:
    """Two models in the prose, one reported to fail and the other not ("用Ziya-13B直接爆显存了 … 在ChatGLM-6B上只能设
    bs 1"): the failing one is the model the numbers use, name and size together; the other is shown next to it."""
    if choice.why != "fails":
        return
    chosen = {k: v for k, v in choice.chosen.bundle if valid_value(k, v) is not None}
    mine = {k: v for k in runs.MODEL_KEYS if (v := setup.values.get(k)) is not None}
    if not mine or any(v.source != "message" for v in mine.values()):
        return
    if not ({"model", "num_params"} & set(chosen)):
        return  # a name without a size (a script's, a folder's): less than the whole reading has
    if "model_text" not in chosen and (
        "model_text" in mine
        or "num_params" not in mine
        or not any(
            c.outcome == "works" and dict(c.bundle).get("num_params") == mine["num_params"].value
            for c in runs.candidates_of(choice)
        )
    ):
        # a bare size is less than the whole reading has, unless the whole reading took the size of a run reported to
        # work: "I can train a 7B model … but I can't train a 5B model" (GaLore #49) is about the 5B one, while "33b模型
        # 最少需要多少显存 … 微调6.7B的时候显存直接爆了" (DeepSeek-Coder #103) asks about the 33B one
        return
    if any(k not in mine or mine[k].value != v for k, v in chosen.items()):
        for key in runs.MODEL_KEYS:
            old = setup.values.pop(key, None)
            if key in chosen:
                setup.values[key] = SetupValue(value=chosen[key], source="message", evidence="fails")
            if old is not None and old.value != chosen.get(key):
                setup.conflicts.setdefault(key, []).insert(
                    0, SetupValue(value=old.value, source="message", evidence=OTHER_RUN_EVIDENCE)
                )
    for key in runs.MODEL_KEYS:
        if key in setup.values:
            setup.why[key] = "fails"
    for other in choice.others:  # the other runs' models, each under the first key both readings have
        theirs = dict(other.bundle)
        shared = next((k for k in runs.MODEL_KEYS if k in theirs and k in setup.values), None)
        if (
            shared is None
            or theirs[shared] == setup.values[shared].value
            or valid_value(shared, theirs[shared]) is None
        ):
            continue
        plain = re.sub(r"[^a-z0-9]", "", str(theirs[shared]).lower())
        if plain == re.sub(r"[^a-z0-9]", "", str(setup.values[shared].value).lower()):
            continue  # "Qwen2.5 7B" and "Qwen2.5-7B": one model spelt twice
        if all(v.value != theirs[shared] for v in setup.conflicts.get(shared, [])):
            setup.conflicts.setdefault(shared, []).append(
                SetupValue(value=theirs[shared], source="message", evidence=OTHER_RUN_EVIDENCE)
            )


#: The sentence that introduces a pasted config as someone else's: "accordingly your settings are:" (F5-TTS #632, the
#: authors' config, then "I'd use:" and the user's own), "the official config is", "论文/官方的配置是".
_REFERENCE_INTRO = re.compile(
    r"(?:\byour\b|\bthe\s+(?:official|original|default|paper'?s?|authors'?|recommended|reference)\b|官方|原始|原版|默认|"
    r"作者|论文)[^.。!?？\n]{0,60}(?:settings?|config\w*|hyper-?parameters?|配置|参数|设置)[^.。!?？\n]{0,30}$",
    re.I,
)


#: … unless the user says they ran it: "I used the official config:", "我用的是默认配置".
_RAN_IT = re.compile(
    r"\bI(?:'m| am)?\s+(?:use|used|using|ran|run|running|tried|set)\b|我(?:们)?(?:用|使用|采用|跑|设置)|用的是|使用的是",
    re.I,
)


#: The sentence that introduces a pasted block as a quotation of a paper or a document: "In the section 3.2, they said
#: that" (LOMO #16 quoting the ZeRO paper's GPT-2 example), "the paper says:", "论文里写道：".
_QUOTATION_INTRO = re.compile(
    r"(?:\b(?:they|he|she|it)|\bthe\s+(?:paper|authors?|docs?|documentation|readme|blog|tutorial))\s+"
    r"(?:said|says|wrote|writes|states?|stated|mentions?|mentioned|explains?|explained)(?:\s+that)?$|"
    r"(?:论文|文档|作者|官方|教程)\s*(?:中|里)?\s*(?:说|写道|写的是|提到)$",
    re.I,
)


#: The kinds of part that set values the way a config does: pasted configs, launch commands and code.
_PASTED_KINDS = ("config", "command", "code")
#: The evidence of a value read from a config the message quotes as someone else's (:func:`_own_configs_first`).
REFERENCE_EVIDENCE = "reference"


def _own_configs_first(parts: list[Part]) -> tuple[list[Part], list[Part]]:
    """The parts in order, except that a pasted config the prose before it introduces as someone else's (the authors',
    the official one) is read after the user's own, so the user's values are the setup and the reference's are shown
    as conflicts; with no config of the user's beside it, the reference is read in its place. A block introduced as a
    quotation of a paper or a document is no setting of the user's and is not read at all. Returns the parts to read,
    in order, and the references among them."""
    reference: set[int] = set()
    quoted: set[int] = set()
    for i, part in enumerate(parts):
        if part.kind in _PASTED_KINDS and i > 0 and parts[i - 1].kind == "prose":
            intro = parts[i - 1].text.rstrip().rstrip(":：,，").rstrip()
            if _QUOTATION_INTRO.search(intro):
                quoted.add(i)
            elif _REFERENCE_INTRO.search(intro) and not _RAN_IT.search(re.split(r"[.。!?？\n]", intro)[-1]):
                reference.add(i)  # (not "I used the official config:": the user ran it)
    if all(i in reference or i in quoted for i, p in enumerate(parts) if p.kind in _PASTED_KINDS):
        reference = set()
    later = [parts[i] for i in sorted(reference)]
    return [p for i, p in enumerate(parts) if i not in reference and i not in quoted] + later, later


def read_setup(parts: list[Part]) -> tuple[Setup, list[Any]]:
    """The setup the message states (prose first, then configs and commands, then errors and logs).

    Returns the setup and the diagnosis artifacts found on the way (empty without the readers).
    """
    setup = Setup()
    prose = own_prose(prose_of(parts))
    unnamed_half = False
    if prose:
        prose_slots = extract_slots(prose, prose=True)
        _put_slots(setup, prose_slots, "message", "")
        unnamed_half = prose_slots._precision_unnamed
        if prose_slots._model_from_file_name:
            for key in _MODEL_KEYS & set(setup.values):
                setup.values[key].evidence = FILE_NAME_EVIDENCE
        _runs_in_prose(setup, prose, prose_slots, launched=any(p.kind in _PASTED_KINDS for p in parts))
    ordered, references = _own_configs_first(parts)
    for part in ordered:
        reference = any(part is ref for ref in references)
        before = {k: len(v) for k, v in setup.conflicts.items()} if reference else {}
        if part.kind in _PASTED_KINDS:
            _put_config(setup, part, _PART_SOURCE[part.kind])
        for command in _launch_json_commands(part):
            _put_config(setup, command, "config")
        if reference:
            for key, values in setup.conflicts.items():
                for value in values[before.get(key, 0) :]:
                    value.evidence = REFERENCE_EVIDENCE  # shown as "in the config you quote as someone else's"
    for part in parts:
        if part.kind in ("log", "error", "traceback"):
            _put_slots(setup, extract_printed(part.text), _PART_SOURCE[part.kind], "printed")
            for command in _printed_commands(part):
                _put_config(setup, command, _PART_SOURCE[part.kind])
        elif part.kind == "nvidia_smi":
            _put_slots(setup, extract_smi(part.text), "nvidia_smi", "name")
    artifacts = _put_artifacts(setup, parts)
    _source_plus_target(setup, parts)
    _reconcile_per_node(setup, parts)
    _config_layout_on_stated_nodes(setup)
    _launch_count_over_prose(setup, parts)
    _counts_from_hostfile_and_visible(setup, "\n".join(p.text for p in parts))
    _visible_over_owned(setup, "\n".join(p.text for p in parts))
    _named_model_over_bare_size(setup)
    _loaded_model_over_prose(setup, parts)
    _printed_capacity_over_prose(setup)
    _printed_peak_over_parts(setup, parts)
    _printed_layout_over_prose(setup)
    _printed_batch_over_config(setup, parts)
    _run_settings_over_prose(setup)
    _trainer_flag_over_accelerate_default(setup, parts)
    if unnamed_half:
        _named_half_over_unnamed_mixed(setup)
    _prose_batch_is_the_configs_global(setup)
    _train_batch_flag_per_device(setup, parts)
    _lora_on_4bit_is_qlora(setup)
    _peft_printed_size(setup, parts)
    _train_batch_per_device_in_formula(setup, prose)
    if not (setup.has("model") or setup.has("num_params")) and setup.has("model_text"):
        _put_slots(setup, _model_only(setup.get("model_text")), setup.source("model_text") or "message", "model")
    return setup, artifacts


def _peft_printed_size(setup: Setup, parts: list[Part]) -> None:
    """A model no part names or sizes, but whose PEFT parameter count is pasted anywhere (in prose, a code block or a
    log: "trainable params: 1,126,400 || all params: 1,101,174,784", PEFT #1514): its size as printed."""
    if setup.has("model") or setup.has("num_params"):
        return
    printed = Slots()
    peft_all_params("\n".join(p.text for p in parts), printed)
    if printed.num_params:
        _put_slots(setup, printed, "log", "printed")


def _printed_peak_over_parts(setup: Setup, parts: list[Part]) -> None:
    """ms-swift prints its running memory peak in every log line (``'memory(GiB)': 63.16`` … ``73.75``): pasted as
    several log excerpts, the largest of them all is the run's peak, not the first excerpt's (ms-swift #4191)."""
    mine = setup.values.get("observed_memory_gb")
    if mine is None or mine.source not in ("log", "error"):
        return
    peaks = [float(m.group(1)) for p in parts if p.kind != "prose" for m in SWIFT_MEMORY.finditer(p.text)]
    if peaks and mine.value in peaks and max(peaks) > mine.value:
        setup.put("observed_memory_gb", max(peaks), mine.source, "memory(GiB)", override=True)
        setup.conflicts.pop("observed_memory_gb", None)


#: Methods the memory calculator (calculators.memory) models (LoRA also on an 8-bit base); P-Tuning, freezing
#: layers and a full fine-tune of 8-bit weights it does not.
CALCULATOR_METHODS = ("full", "lora", "qlora")


def shards_weights(setup: Setup) -> bool:
    """The run shards its weights across the GPUs (ZeRO-3, FSDP FULL_SHARD / HYBRID_SHARD): there the model states do
    add up over the cards, so "cards do not pool their memory" is no answer to its memory."""
    return setup.get("zero_stage") == 3 or setup.get("fsdp") in ("full_shard", "hybrid_shard")


def unsupported_method(setup: Setup) -> str | None:
    """The user's method when the memory calculator cannot express it ("ptuning", "freeze", "full + int8"), else None.

    A figure for a P-Tuning run or a full fine-tune of quantised weights computed as something else would be a number
    for a setup the user does not have, so the answer says in one line that it cannot compute one instead. LoRA on an
    8-bit base is modelled (calculators.memory ``lora_int8_base``)."""
    method, quant = setup.get("finetune"), setup.get("quantization")
    if method is not None and method not in CALCULATOR_METHODS:
        return str(method)
    if (quant == "int8" and method != "lora") or (quant == "int4" and method not in (None, "qlora")):
        return f"{method or 'full'} + {quant}"
    return None


def enough_for_memory(setup: Setup) -> bool:
    """A memory figure needs at least the model (or its size) plus the method or the precision, and a method the
    calculator models."""
    has_model = setup.has("model") or setup.has("num_params")
    has_method = setup.has("finetune") or setup.has("precision") or bool(setup.get("zero_stage"))
    return has_model and has_method and unsupported_method(setup) is None


def missing_for_memory(setup: Setup) -> list[str]:
    """What a memory figure still needs: "model", "method", or "unsupported" (a method the calculator lacks)."""
    if unsupported_method(setup) is not None:
        return ["unsupported"]
    out = []
    if not (setup.has("model") or setup.has("num_params")):
        out.append("model")
    if not (setup.has("finetune") or setup.has("precision") or bool(setup.get("zero_stage"))):
        out.append("method")
    return out
