"""Named API endpoints for other programs (``gradio_client``): /effective_batch, /memory, /sweep, /check_config,
/diagnose, /fact_check.

/chat is registered by the app builder (it needs the assistant). Bad input raises
``gr.Error`` with the English and Chinese message, naming the field.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import gradio as gr
from gradio.events import api as gr_api  # gr.api itself; gradio's __all__ leaves it out, so mypy does not see gr.api

from calculators import CalculatorError, GiB, estimate_memory, resolve_batch, sweep
from calculators.configs import check_config
from calculators.limits import MAX_CONFIG_CHARS

from .i18n import normalize_lang

log = logging.getLogger("batchbot.api")


_SCHEME = re.compile(r"(?i)\b(javascript|vbscript|data|file)\s*:")


def inert(text: str) -> str:
    """Error text with user values made inert for HTML/Markdown renderers (``< > &`` as entities, no URL schemes).

    Gradio's toast renders error text as sanitised HTML, where the entities display as the
    characters; API clients that render it themselves get nothing executable.
    """
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SCHEME.sub(lambda m: m.group(1) + "&#58;", text)


def is_api_client(request: gr.Request | None) -> bool:
    """True when a queued event came from a program, not from the app's page in a browser.

    Why: the chat's simulated streaming (12 growing prefixes, 30 ms apart) is for eyes; a program
    calling /chat_ui waited 0.36 s per answer for nothing. gradio_client sends ``x-gradio-user: api``
    (MCP: ``mcp``); plain HTTP clients use ``/gradio_api/call/<api_name>``; the page's own client joins
    at ``/gradio_api/queue/join`` without that header. No request (a direct Python call): not an API client.
    """
    if request is None:
        return False
    try:
        headers = getattr(request, "headers", None) or {}
        if str(headers.get("x-gradio-user", "")).lower() in ("api", "mcp"):
            return True
        path = str(getattr(getattr(request, "url", None), "path", "") or "")
    except Exception:  # noqa: BLE001 - a request object without these attributes is treated as a page
        return False
    return "/call/" in path


def calculator_error(err: CalculatorError) -> gr.Error:
    ds = getattr(err, "deepspeed_message", None)
    en, zh = err.message("en"), err.message("zh")
    msg = f"[{err.field}] {en}\n[{err.field}] {zh}" + (f"\nDeepSpeed: {ds}" if ds else "")
    return gr.Error(inert(msg), title=f"Invalid input / 输入无效: {inert(err.field)[:80]}", print_exception=False)


def _unexpected(exc: Exception) -> gr.Error:
    from .chat import log_failure

    log_failure("API call failed", exc)  # one line, no user payload
    return gr.Error(
        f"Calculation failed ({type(exc).__name__}); check the inputs.\n计算失败（{type(exc).__name__}），请检查输入。",
        print_exception=False,
    )


@contextmanager
def _refusals() -> Iterator[None]:
    """CalculatorError → gr.Error naming the field; anything unexpected → a logged, generic gr.Error."""
    try:
        yield
    except CalculatorError as err:
        raise calculator_error(err) from None
    except gr.Error:
        raise
    except Exception as exc:
        raise _unexpected(exc) from None


def _check_dict(name: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise gr.Error(
            f"[{name}] must be a JSON object of MemoryConfig fields.\n[{name}] 必须是由 MemoryConfig 字段组成的 JSON 对象。",
            title=f"Invalid input / 输入无效: {name}",
            print_exception=False,
        )
    return value


def _gib_summary(d: dict[str, Any]) -> dict[str, float | None]:
    keys = (
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
    return {k: (None if d.get(k) is None else round(d[k] / GiB, 3)) for k in keys}


def effective_batch(
    train_batch_size: int | None = None,
    train_micro_batch_size_per_gpu: int | None = None,
    gradient_accumulation_steps: int | None = None,
    world_size: int = 1,
    seq_len: int | None = None,
    dataset_size: int | None = None,
    lang: str = "en",
) -> dict[str, Any]:
    """Resolve DeepSpeed's train_batch_size = micro × GA × world_size (empty fields are derived).

    Give any two of train_batch_size, train_micro_batch_size_per_gpu and gradient_accumulation_steps, plus
    world_size; inconsistent values are refused with DeepSpeed's own assertion text.

    Args:
        train_batch_size (int): the effective (global) batch, if known.
        train_micro_batch_size_per_gpu (int): samples per GPU per forward/backward (HF: per_device_train_batch_size).
        gradient_accumulation_steps (int): micro-batches summed before each optimizer step.
        world_size (int): number of data-parallel GPUs (all nodes together).
        seq_len (int): tokens per sample, to report tokens per optimizer step.
        dataset_size (int): samples in the dataset, to report optimizer steps per epoch.
        lang (str): "en" or "zh".
    """
    with _refusals():
        res = resolve_batch(
            train_batch_size=train_batch_size,
            train_micro_batch_size_per_gpu=train_micro_batch_size_per_gpu,
            gradient_accumulation_steps=gradient_accumulation_steps,
            world_size=world_size,
            seq_len=seq_len,
            dataset_size=dataset_size,
            lang=normalize_lang(lang, "en"),
        )
    return res.model_dump(mode="json")


def memory(config: dict[str, Any], lang: str = "en") -> dict[str, Any]:
    """Per-GPU memory for one MemoryConfig (e.g. {"model": "llama-2-7b", "gpu": "rtx-3090", "finetune": "lora"}).

    Bytes per category, plus a "gib" summary.
    """
    with _refusals():
        est = estimate_memory(dict(_check_dict("config", config)))
    d = est.model_dump(mode="json")
    d["gib"] = _gib_summary(d)
    return d


def sweep_endpoint(config: dict[str, Any], field: str, values: list[Any], lang: str = "en") -> dict[str, Any]:
    """Memory as one field moves, e.g. field="gradient_accumulation_steps", values=[1, 2, 4, 8]."""
    with _refusals():
        res = sweep(dict(_check_dict("config", config)), field, values)
    d = res.model_dump(mode="json")
    d["series_gib"] = [{"value": p.value, **_gib_summary(p.estimate.model_dump())} for p in res.points]
    return d


def check_config_endpoint(text: str, gpu: str | None = None, lang: str = "en") -> dict[str, Any]:
    """Check a pasted DeepSpeed JSON / TrainingArguments / LLaMA-Factory YAML; returns {"markdown", "report"}."""
    if not isinstance(text, str) or not text.strip():
        raise gr.Error(
            "[text] Paste a config to check.\n[text] 请粘贴要检查的配置。",
            title="Invalid input / 输入无效: text",
            print_exception=False,
        )
    if len(text) > MAX_CONFIG_CHARS:
        raise gr.Error(
            f"[text] Config too long (over {MAX_CONFIG_CHARS:,} characters).\n"
            f"[text] 配置太长（超过 {MAX_CONFIG_CHARS:,} 字符）。",
            title="Invalid input / 输入无效: text",
            print_exception=False,
        )
    lang = normalize_lang(lang, "en")
    with _refusals():
        report = check_config(text, gpu=gpu or None, lang=lang)
    out: dict[str, Any] = {"markdown": report.to_markdown(lang)}
    if hasattr(report, "model_dump"):
        with contextlib.suppress(Exception):  # the markdown is the contract; the structure is a bonus
            out["report"] = report.model_dump(mode="json")
    return out


def fact_check(text: str, lang: str = "") -> dict[str, Any]:
    """Fact-check an answer about batch size, gradient accumulation, precision or GPU memory (e.g. from a chatbot).

    Marks each claim that matches a known wrong belief or contradicts a calculator as "wrong" or "imprecise",
    with the correction and its sources; returns {"markdown", "counts", "claims"}. Unmatched claims are
    "unchecked", not "right".

    Args:
        text (str): the answer to check (Markdown, Chinese or English).
        lang (str): "en" or "zh" for the report; detected from the text when empty.
    """
    from calculators.agent_tools import fact_check as _fact_check

    with _refusals():
        return _fact_check(text, lang or None)


def diagnose_endpoint(text: str, lang: str = "en", setup: dict[str, Any] | None = None) -> dict[str, Any]:
    """Diagnose a pasted error / log / command / nvidia-smi table; returns {"markdown", "diagnosis"}.

    ``setup`` (optional) holds values already known, e.g. {"model": "llama-3-8b", "seq_len": 4096}.
    """
    from calculators.diagnose import diagnose

    from .diagnose_panel import MAX_PASTE

    if not isinstance(text, str) or not text.strip():
        raise gr.Error(
            "[text] Paste an error message, log, launch command or nvidia-smi output.\n"
            "[text] 请粘贴报错信息、日志、启动命令或 nvidia-smi 输出。",
            title="Invalid input / 输入无效: text",
            print_exception=False,
        )
    if len(text) > MAX_PASTE:
        raise gr.Error(
            "[text] Paste too long (over 2,000,000 characters); paste the part around the error.\n"
            "[text] 粘贴内容太长（超过 2,000,000 字符）；请只粘贴报错附近的部分。",
            title="Invalid input / 输入无效: text",
            print_exception=False,
        )
    lang = normalize_lang(lang, "en")
    with _refusals():
        d = diagnose(text, lang=lang, setup=setup)
    return {"markdown": d.to_markdown(lang), "diagnosis": d.model_dump(mode="json")}


def register_calculator_api() -> None:
    """Call inside a gr.Blocks context."""
    gr_api(effective_batch, api_name="effective_batch")
    gr_api(memory, api_name="memory")
    gr_api(sweep_endpoint, api_name="sweep")
    gr_api(check_config_endpoint, api_name="check_config")
    gr_api(fact_check, api_name="fact_check")
    gr_api(diagnose_endpoint, api_name="diagnose")
