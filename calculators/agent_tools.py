"""The calculators as typed, documented functions for other people's agents (MCP, llama-index).

One function per tool, JSON in and JSON out, with a docstring an LLM can act on: the MCP server
(``ui/mcp_tools.py``, via Gradio) and the llama-index tools (``calculators/llamaindex_tools.py``)
both wrap these, so a tool behaves the same whichever way it is reached. Bad input raises
:class:`CalculatorError` (English + Chinese, naming the field); the wrappers turn it into an error result.
"""

from __future__ import annotations

from typing import Any

from .batch import resolve_batch, scale_learning_rate
from .configs import check_config
from .errors import CalculatorError
from .lang import Lang, is_lang
from .limits import MAX_CONFIG_CHARS, MAX_PASTE_CHARS
from .memory import GiB, estimate_memory
from .sweep import sweep
from .throughput import Precision
from .throughput import training_throughput as _training_throughput

_GIB_KEYS = (
    "weights",
    "gradients",
    "optimizer_states",
    "activations",
    "other",
    "total_per_gpu",
    "gpu_capacity",
    "headroom",
    "cpu_total",
)
MAX_TEXT_CHARS = MAX_CONFIG_CHARS  # a config or an answer to check (calculators.limits)


def _lang(lang: Any) -> Lang:
    if lang in (None, ""):
        return "en"
    if not is_lang(lang):
        raise CalculatorError("lang", lang, "'en' or 'zh'", "'en' 或 'zh'")
    return lang


def _config(config: Any) -> dict[str, Any]:
    if not isinstance(config, dict):
        raise CalculatorError(
            "config",
            config,
            'a JSON object of MemoryConfig fields, e.g. {"model": "llama-2-7b", "gpu": "rtx-3090", "finetune": "lora"}',
            "由 MemoryConfig 字段组成的 JSON 对象",
        )
    return dict(config)


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CalculatorError(name, value, "non-empty text", "非空文本")
    if len(value) > MAX_TEXT_CHARS:
        raise CalculatorError(
            name,
            f"{len(value)} characters",
            f"at most {MAX_TEXT_CHARS:,} characters",
            f"不超过 {MAX_TEXT_CHARS:,} 个字符",
        )
    return value


def gib_summary(d: dict[str, Any]) -> dict[str, float | None]:
    return {k: (None if d.get(k) is None else round(d[k] / GiB, 3)) for k in _GIB_KEYS}


def effective_batch(
    train_micro_batch_size_per_gpu: int | None = None,
    gradient_accumulation_steps: int | None = None,
    world_size: int = 1,
    train_batch_size: int | None = None,
    tensor_parallel_size: int = 1,
    pipeline_parallel_size: int = 1,
    sequence_parallel_size: int = 1,
    dataset_size: int | None = None,
    num_train_epochs: float | None = None,
    observed_steps: int | None = None,
    lang: str = "en",
) -> dict[str, Any]:
    """Resolve the effective (global) batch: train_batch_size = micro batch per GPU × gradient accumulation × GPUs.

    Give any two of train_batch_size, train_micro_batch_size_per_gpu and gradient_accumulation_steps (plus
    world_size); the third is derived exactly as DeepSpeed does, and inconsistent values are refused with
    DeepSpeed's own assertion text.

    Args:
        train_micro_batch_size_per_gpu (int): samples per GPU per forward/backward (HF: per_device_train_batch_size).
        gradient_accumulation_steps (int): micro-batches summed before each optimizer step.
        world_size (int): number of GPUs (all nodes together); the data-parallel size is this ÷ (TP × PP × SP).
        train_batch_size (int): the effective batch, if you want it checked or want a missing field derived.
        tensor_parallel_size (int): TP degree; GPUs in one TP/PP/SP group share a batch (data-parallel = GPUs ÷ TP×PP×SP).
        pipeline_parallel_size (int): PP degree.
        sequence_parallel_size (int): sequence/context-parallel degree (ms-swift, verl Ulysses, Megatron CP).
        dataset_size (int): samples in the dataset, for optimizer steps per epoch as the HF Trainer counts them.
        num_train_epochs (float): epochs, for the total steps ("Total optimization steps").
        observed_steps (int): the step count your run showed, to back-solve the batch it really used.
        lang (str): "en" or "zh" for the explanation.
    """
    res = resolve_batch(
        train_batch_size=train_batch_size,
        train_micro_batch_size_per_gpu=train_micro_batch_size_per_gpu,
        gradient_accumulation_steps=gradient_accumulation_steps,
        world_size=world_size,
        tensor_parallel_size=tensor_parallel_size,
        pipeline_parallel_size=pipeline_parallel_size,
        sequence_parallel_size=sequence_parallel_size,
        dataset_size=dataset_size,
        num_train_epochs=num_train_epochs,
        observed_steps=observed_steps,
        lang=_lang(lang),
    )
    return res.model_dump(mode="json")


def memory_estimate(config: dict[str, Any], lang: str = "en") -> dict[str, Any]:
    """Estimate per-GPU training memory (weights, gradients, optimizer states, activations) for one setup.

    Peak memory is model states plus ONE micro-batch's activations; gradient_accumulation_steps does not
    multiply it. Returns bytes per category and a "gib" summary, whether it fits the GPU and the largest
    micro batch that fits.

    Args:
        config (dict): MemoryConfig fields, e.g. {"model": "llama-2-7b", "gpu": "rtx-3090", "finetune": "lora",
            "precision": "bf16-mixed", "train_micro_batch_size_per_gpu": 2, "seq_len": 2048, "zero_stage": 0,
            "world_size": 1, "gradient_checkpointing": "full"}; use "num_params" (e.g. 7e9) when no model preset fits.
        lang (str): "en" or "zh".
    """
    _lang(lang)
    d = estimate_memory(_config(config)).model_dump(mode="json")
    d["gib"] = gib_summary(d)
    return d


def memory_sweep(config: dict[str, Any], field: str, values: list[Any]) -> dict[str, Any]:
    """Estimate memory while one setting changes, e.g. gradient_accumulation_steps over [1, 4, 16].

    Args:
        config (dict): MemoryConfig fields, as for memory_estimate.
        field (str): the setting to vary, e.g. "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
            "seq_len", "zero_stage", "precision", "world_size".
        values (list): the values to try (at most a few dozen).
    """
    res = sweep(_config(config), field, values)
    d = res.model_dump(mode="json")
    d["series_gib"] = [{"value": p.value, **gib_summary(p.estimate.model_dump())} for p in res.points]
    return d


def training_throughput(
    num_params: float,
    num_gpus: int,
    step_time_s: float | None = None,
    tokens_per_step: float | None = None,
    tokens_per_second: float | None = None,
    gpu: str | None = None,
    peak_tflops: float | None = None,
    precision: str | None = None,
    num_layers: int | None = None,
    seq_len: int | None = None,
    attention_width: int | None = None,
    frozen_base: bool = False,
    activation_checkpointing: bool = False,
    token_budget: float | None = None,
    lang: str = "en",
) -> dict[str, Any]:
    """Is this training speed normal? Model FLOPs utilisation (MFU) from the step time, PaLM's convention.

    FLOPs per token = 6 × parameters (4 × with frozen base weights, LoRA/QLoRA) + 12 × layers × seq_len ×
    attention_width; MFU = those FLOPs per second per GPU ÷ the GPU's dense data-sheet peak. Returns the numbers and a
    "markdown" sentence; days for a token budget when given.

    Args:
        num_params (float): the model's parameters, e.g. 7e9 (a MoE: the activated ones).
        num_gpus (int): all GPUs of the run.
        step_time_s (float): seconds per optimizer step; give tokens_per_step with it.
        tokens_per_step (float): tokens of one optimizer step over all GPUs (global batch × sequence length).
        tokens_per_second (float): instead of the two above, the run's tokens per second over all GPUs.
        gpu (str): GPU preset such as "a100-80gb", "v100", "rtx-4090", for its data-sheet peak.
        peak_tflops (float): the peak to use instead of the preset's (TFLOP/s per GPU).
        precision (str): "bf16", "fp16" or "fp32"; default: the card's 16-bit Tensor-Core peak.
        num_layers (int): layers, with seq_len and attention_width, to count the attention FLOPs.
        seq_len (int): sequence length.
        attention_width (int): attention heads × head dim.
        frozen_base (bool): base weights frozen (LoRA / QLoRA).
        activation_checkpointing (bool): full recomputation (adds hardware FLOPs utilisation, HFU).
        token_budget (float): tokens to train, for the days it takes at this speed.
        lang (str): "en" or "zh" for the markdown.
    """
    lang_ = _lang(lang)
    if precision not in (None, "bf16", "fp16", "fp32"):
        raise CalculatorError("precision", precision, "bf16, fp16 or fp32", "bf16、fp16 或 fp32")
    used: Precision | None = precision  # type: ignore[assignment]  # checked just above
    res = _training_throughput(
        num_params,
        num_gpus,
        step_time_s=step_time_s,
        tokens_per_step=tokens_per_step,
        tokens_per_second=tokens_per_second,
        gpu=gpu or None,
        peak_tflops=peak_tflops,
        precision=used,
        num_layers=num_layers,
        seq_len=seq_len,
        attention_width=attention_width,
        frozen_base=frozen_base,
        activation_checkpointing=activation_checkpointing,
        token_budget=token_budget,
    )
    return {**res.model_dump(mode="json"), "markdown": res.to_markdown(lang_)}


def learning_rate_scaling(
    base_batch_size: int,
    new_batch_size: int,
    base_learning_rate: float | None = None,
    per_gpu_held: bool = False,
    lang: str = "en",
) -> dict[str, Any]:
    """Which learning rate for a new effective batch? The linear rule (Goyal et al. 2017, SGD with warmup: lr × k) and
    the square-root rule (Malladi et al. 2022, Adam: lr × √k), k = new ÷ base. Heuristics, not laws.

    Returns the factors, the two learning rates when base_learning_rate is given, and a "markdown" sentence.

    Args:
        base_batch_size (int): the effective (global) batch the known-good learning rate was set for.
        new_batch_size (int): the effective batch of the new run.
        base_learning_rate (float): the known-good learning rate, if known.
        per_gpu_held (bool): the two sizes are GPU counts at an unchanged per-GPU batch (e.g. 8 GPUs → 1).
        lang (str): "en" or "zh" for the markdown.
    """
    lang_ = _lang(lang)
    res = scale_learning_rate(base_batch_size, new_batch_size, base_learning_rate, per_gpu_held)
    return {**res.model_dump(mode="json"), "markdown": res.to_markdown(lang_)}


def config_check(
    config: str, gpu: str | None = None, world_size: int | None = None, lang: str = "en"
) -> dict[str, Any]:
    """Check a pasted training config: DeepSpeed JSON, HF TrainingArguments flags or a LLaMA-Factory YAML.

    Finds batch inconsistencies DeepSpeed would reject, risky settings and whether it fits the GPU; returns
    {"markdown": a readable report, "findings": [...]}.

    Args:
        config (str): the config text as pasted.
        gpu (str): GPU preset such as "rtx-3090" or "a100-80gb", if known.
        world_size (int): number of GPUs, if the config does not say.
        lang (str): "en" or "zh".
    """
    lang = _lang(lang)
    report = check_config(_text("config", config), gpu=gpu or None, world_size=world_size, lang=lang)
    return {"markdown": report.to_markdown(lang), "findings": [f.model_dump(mode="json") for f in report.findings]}


def fact_check(text: str, lang: str | None = None) -> dict[str, Any]:
    """Fact-check an answer about batch size, gradient accumulation, precision or GPU memory (e.g. from a chatbot).

    Splits the answer into claims and marks each that matches a known wrong belief or contradicts a calculator
    as "wrong" or "imprecise", with the correction and its sources. Unmatched claims are "unchecked", not "right".

    Args:
        text (str): the answer to check (Markdown, Chinese or English).
        lang (str): "en" or "zh" for the report; detected from the text when empty.
    """
    from .factcheck import fact_check as _fact_check

    result = _fact_check(_text("text", text), lang or None)
    return {
        "markdown": result.to_markdown(),
        "counts": result.counts(),
        "claims": [c.model_dump(mode="json") for c in result.claims if c.verdict != "unchecked"],
    }


def diagnose(text: str, lang: str = "en", setup: dict[str, Any] | None = None) -> dict[str, Any]:
    """Diagnose a failed training run from a pasted error, log, launch command or nvidia-smi table.

    Reads the paste (CUDA OOM messages, DeepSpeed batch assertions, NCCL/launch errors, host OOM kills, ...),
    ranks the likely causes with the user's own numbers and says what to change; returns
    {"markdown": a readable diagnosis, "diagnosis": the structured result}.

    Args:
        text (str): the pasted error / log / command / nvidia-smi output, as is.
        lang (str): "en" or "zh".
        setup (dict): values already known, e.g. {"model": "llama-3-8b", "seq_len": 4096, "world_size": 8}.
    """
    from .diagnose import diagnose as _diagnose  # imported on use, like the run_tool entry

    lang = _lang(lang)
    if not isinstance(text, str) or not text.strip():
        raise CalculatorError(
            "text",
            text,
            "a pasted error message, log, launch command or nvidia-smi output",
            "报错信息、日志、启动命令或 nvidia-smi 输出",
        )
    if len(text) > MAX_PASTE_CHARS:
        raise CalculatorError(
            "text",
            f"{len(text)} characters",
            f"at most {MAX_PASTE_CHARS:,} characters: paste the part around the error",
            f"不超过 {MAX_PASTE_CHARS:,} 个字符：请只粘贴报错附近的部分",
        )
    d = _diagnose(text, lang=lang, setup=setup)
    return {"markdown": d.to_markdown(lang), "diagnosis": d.model_dump(mode="json")}


def card_search(query: str, k: int = 3, lang: str = "en", *, assistant: Any) -> list[dict[str, Any]]:
    """Search the bilingual knowledge cards (each fact with its public source) for a question.

    Args:
        query (str): the question, in Chinese or English.
        k (int): how many cards (1-10).
        lang (str): "en" or "zh" for titles and corrections.
    """
    lang = _lang(lang)
    query = _text("query", query)
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 10:
        raise CalculatorError("k", k, "an integer from 1 to 10", "1 到 10 的整数")
    out = []
    for hit in assistant.retrieve(query, k=k):
        card = hit.card
        m = card.misconceptions[0] if card.misconceptions else None
        out.append(
            {
                "id": card.id,
                "title": card.title_zh if lang == "zh" else card.title_en,
                "score": round(float(hit.score), 4),
                "correction": (m.correction_zh if lang == "zh" else m.correction_en) if m else None,
                "sources": [{"title": s.title, "url": s.url} for s in card.sources],
            }
        )
    return out


TOOL_FUNCTIONS = (
    effective_batch,
    memory_estimate,
    memory_sweep,
    training_throughput,
    learning_rate_scaling,
    config_check,
    diagnose,
    fact_check,
)
