"""Calculators tab: effective batch and per-GPU memory with plots (the config doctor is in the Check tab).

The handlers are plain functions of plain values (tested without a browser);
errors come back as a Markdown line naming the field, never as a traceback.
"""

from __future__ import annotations

import inspect
import logging
import math
from typing import Any

import gradio as gr

from calculators import GPU_PRESETS, MODEL_PRESETS, CalculatorError, estimate_memory, resolve_batch, sweep
from calculators.i18n import label, t
from calculators.lang import Lang
from calculators.memory import LORA_MODULES, MemoryConfig, as_config
from calculators.presets import active_params, count_params

from .i18n import normalize_lang
from .labels import Labels
from .plots import PLOT_CSS, breakdown_svg, responsive, sweep_points, sweep_svg
from .render import batch_summary_md, field_error_md, md_escape
from .url_state import memory_in_url_js, parse_query, spec_of

log = logging.getLogger("batchbot.calculators")

CUSTOM = "__custom__"
MICRO_SWEEP = [1, 2, 4, 8, 16, 32]
GA_SWEEP = [1, 2, 4, 8, 16, 32, 64]

# Every MemoryConfig field, in form order.
MEMORY_FIELDS = (
    "model",
    "num_params",
    "hf_config",
    "hidden_size",
    "num_layers",
    "num_attention_heads",
    "vocab_size",
    "gpu",
    "gpu_memory_gb",
    "precision",
    "optimizer",
    "adamw_kernel",
    "zero_stage",
    "world_size",
    "num_nodes",
    "offload_optimizer",
    "offload_param",
    "pipeline_parallel_size",
    "finetune",
    "lora_rank",
    "lora_target_modules",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "seq_len",
    "gradient_checkpointing",
    "flash_attention",
    "cuda_context_gb",
    "reduce_bucket_size",
    "allgather_bucket_size",
    "overlap_comm",
    "zero_grad_set_to_none",
    "loss_implementation",
    "allocator_slack_fraction",
    "bitsandbytes_before_0_43_2",
    "optimizer_in_backward",
    "activation_offloading",
    "fsdp",
    "fsdp_cpu_offload",
    "fsdp_sync_each_batch",
    "fsdp_frozen_in_trainable_units",
    "lora_int8_base",
    "qlora_double_quant",
    "qlora_lm_head_4bit",
    "images_per_sample",
    "visual_tokens_in_seq_len",
    "image_height",
    "image_width",
    "image_max_pixels",
    "freeze_vision_tower",
    "freeze_projector",
)
assert set(MEMORY_FIELDS) == set(MemoryConfig.model_fields), "the form must cover every MemoryConfig field"

# The form starts from MemoryConfig's own defaults (one source of truth), except for a few
# choices that make a useful first picture: a 7B LoRA run on a 24 GB card with GA 8.
_FORM_CHOICES: dict[str, Any] = {
    "model": "llama-2-7b",
    "gpu": "rtx-3090",
    "finetune": "lora",
    "gradient_accumulation_steps": 8,
    "seq_len": 1024,
}
DEFAULTS: dict[str, Any] = {
    name: _FORM_CHOICES.get(name, MemoryConfig.model_fields[name].get_default(call_default_factory=True))
    for name in (
        "model",
        "gpu",
        "precision",
        "optimizer",
        "adamw_kernel",
        "zero_stage",
        "world_size",
        "num_nodes",
        "offload_optimizer",
        "offload_param",
        "pipeline_parallel_size",
        "finetune",
        "lora_rank",
        "lora_target_modules",
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
        "seq_len",
        "gradient_checkpointing",
        "flash_attention",
        "cuda_context_gb",
        "reduce_bucket_size",
        "allgather_bucket_size",
        "overlap_comm",
    )
}


# Optional numbers: 0 (what an empty gr.Number sends) means "not given".
OPTIONAL_NUMBERS = (
    "num_params",
    "hidden_size",
    "num_layers",
    "num_attention_heads",
    "vocab_size",
    "gpu_memory_gb",
    "image_height",
    "image_width",
    "image_max_pixels",
)


def _literal_choices(field: str) -> list[Any]:
    ann = MemoryConfig.model_fields[field].annotation
    return list(getattr(ann, "__args__", ()))


def _billions(n: int) -> str:
    return f"{n / 1e9:.1f}B" if n >= 0.995e9 else f"{n / 1e6:.0f}M"


def preset_label(name: str, lang: Lang) -> str:
    """``name`` with its parameter count (total and active for a MoE), so the list says what each id is.

    The count is the exact one the estimate uses (``count_params`` / ``active_params`` of the preset's shape);
    the id stays first so typing it in the dropdown still finds it, and the value sent is the bare id.
    """
    shape = MODEL_PRESETS[name]
    total, active = count_params(shape), active_params(shape)
    if active < total:
        return t("preset_params_moe", lang, name=name, total=_billions(total), active=_billions(active))
    return t("preset_params", lang, name=name, total=_billions(total))


def model_choices(lang: Lang) -> list[tuple[str, str]]:
    return [(preset_label(m, lang), m) for m in MODEL_PRESETS] + [(t("custom_model", lang), CUSTOM)]


def gpu_choices(lang: Lang) -> list[tuple[str, str]]:
    return [(f"{g} ({spec.memory_gib:g} GiB)", g) for g, spec in GPU_PRESETS.items()] + [
        (t("custom_gpu", lang), CUSTOM)
    ]


def _error(err: CalculatorError, lang: Lang) -> str:
    msg = err.message(lang)
    ds = getattr(err, "deepspeed_message", None)
    if ds:
        msg = f"{msg} (DeepSpeed: {ds})"
    return field_error_md(err.field, msg, lang)


def _unexpected(exc: Exception, lang: Lang) -> str:
    from .chat import log_failure

    log_failure("calculator failed", exc)  # one line, no user payload
    return "✘ " + t("calc_failed", lang, name=md_escape(type(exc).__name__))


def form_to_config(values: dict[str, Any]) -> dict[str, Any]:
    """Form values → MemoryConfig kwargs (empty optional fields dropped, presets mapped)."""
    cfg: dict[str, Any] = {}
    for f in MEMORY_FIELDS:
        v = values.get(f)
        if isinstance(v, str):
            v = v.strip()
        if v is None or v == "" or v == CUSTOM:
            continue
        if f in OPTIONAL_NUMBERS and v == 0:
            continue  # the browser shows an empty number box as 0: 0 means "not given"
        if f in ("zero_stage",) and isinstance(v, str) and v.isdigit():
            v = int(v)  # anything else goes on as given and is refused by name
        if (
            isinstance(v, float)
            and f
            not in (
                "num_params",
                "gpu_memory_gb",
                "cuda_context_gb",
                "allocator_slack_fraction",
                "reduce_bucket_size",
                "allgather_bucket_size",
            )
            and math.isfinite(v)
            and v == int(v)
        ):
            v = int(v)
        cfg[f] = v
    if "hf_config" in cfg or "num_params" in cfg:
        cfg.pop("model", None)  # a custom model wins over the preset dropdown
    if "hf_config" in cfg:
        cfg.pop("num_params", None)
    if "num_params" not in cfg:
        for f in ("hidden_size", "num_layers", "num_attention_heads", "vocab_size"):
            cfg.pop(f, None)
    return cfg


def run_memory(values: dict[str, Any], lang: Lang) -> tuple[str, str, str, str, str]:
    """(error_md, summary_md, breakdown_html, micro_sweep_html, ga_sweep_html)."""
    return _run_memory(values, normalize_lang(lang, "en"))[0]


def _takes_info(component: Any) -> bool:
    return "info" in inspect.signature(type(component).__init__).parameters


def field_marks(comps: dict[str, Any], bad_field: str | None, message: str) -> list[Any]:
    """One update per form field: the refused one gets a red border and, where the component has an
    ``info`` line (not gr.Code), the message right under its label; the others are cleared."""
    out = []
    for name, comp in comps.items():
        info: dict[str, Any] = {"info": message if name == bad_field else ""} if _takes_info(comp) else {}
        out.append(gr.update(elem_classes=["field-invalid"] if name == bad_field else [], **info))
    return out


def _error_field(err: CalculatorError) -> str:
    return str(err.field).split(".")[0]


def nearest_fits(cfg: dict[str, Any], lang: Lang, limit: int = 4) -> list[tuple[str, Any]]:
    """(description, MemoryEstimate) of the nearest settings that fit, nearest first.

    The candidates come from :mod:`rag.levers` (the chat uses the same list): each single change that fits,
    else the first accumulated combination that does. Candidates the calculator refuses are skipped."""
    from rag import levers  # lazy: the tab's pure functions import without the retrieval stack

    singles: list[tuple[str, Any]] = []
    combos: list[tuple[str, Any]] = []
    base = {k: v for k, v in as_config(cfg).model_dump().items() if v is not None}  # validated, typed values
    for names, candidate in levers.candidates(base):
        if len(names) > 1 and (singles or combos):
            break  # combinations come after the single changes (nearer); the first combination that fits is enough
        try:
            est = estimate_memory(candidate)
        except CalculatorError:
            continue
        if est.fits:
            (singles if len(names) == 1 else combos).append((levers.describe(names, lang), est))
    return singles[:limit] if singles else combos[:1]


def _run_memory(values: dict[str, Any], lang: Lang) -> tuple[tuple[str, str, str, str, str], str | None, str]:
    """run_memory's outputs plus the refused field (or None) and its message, for marking the form."""
    from .render import memory_summary_md, nearest_fits_md

    try:
        cfg = form_to_config(values)
        est = estimate_memory(cfg)
        checked = as_config(cfg)  # validated: "2" from a client is the number 2 here
        micro, ga = checked.train_micro_batch_size_per_gpu, checked.gradient_accumulation_steps
        micro_values = sorted(set(MICRO_SWEEP) | {micro})
        ga_values = sorted(set(GA_SWEEP) | {ga})
        by_micro = sweep(cfg, "train_micro_batch_size_per_gpu", micro_values)
        by_ga = sweep(cfg, "gradient_accumulation_steps", ga_values)
        way_out = nearest_fits_md(est, nearest_fits(cfg, lang), lang) if est.fits is False else ""
    except CalculatorError as err:
        return (_error(err, lang), "", "", "", ""), _error_field(err), err.message(lang)
    except Exception as exc:  # never a traceback
        return (_unexpected(exc, lang), "", "", "", ""), None, ""
    micro_title = t("plot.micro_title", lang)
    ga_title = t("plot.ga_title", lang)
    summary = memory_summary_md(est, lang)
    if way_out:
        summary = way_out + "\n\n" + summary
    plots = [breakdown_svg(est, lang, narrow=n) for n in (False, True)]
    micro_plots = [
        sweep_svg(
            "train_micro_batch_size_per_gpu",
            sweep_points(by_micro),
            by_micro.gpu_capacity,
            lang,
            micro_title,
            current=micro,
            narrow=n,
        )
        for n in (False, True)
    ]
    ga_plots = [
        sweep_svg(
            "gradient_accumulation_steps", sweep_points(by_ga), by_ga.gpu_capacity, lang, ga_title, current=ga, narrow=n
        )
        for n in (False, True)
    ]
    return ("", summary, responsive(*plots), responsive(*micro_plots), responsive(*ga_plots)), None, ""


def _opt_int(v: Any) -> Any:
    """An optional form number: None, "" and 0 (an empty gr.Number in the browser) mean "not given"."""
    if v is None or v == "" or v == 0:
        return None
    if isinstance(v, float) and math.isfinite(v) and v == int(v):  # inf/nan go on and are refused by name
        return int(v)
    return v


def _int(v: Any) -> Any:
    """A form number that is validated as given (0 and negatives reach the calculator and are refused)."""
    if v is None or v == "":
        return None
    return int(v) if isinstance(v, float) and math.isfinite(v) and v == int(v) else v


def run_batch(tb: Any, micro: Any, ga: Any, ws: Any, seq_len: Any, dataset_size: Any, lang: Lang) -> tuple[str, str]:
    """(error_md, result_md)."""
    return _run_batch(tb, micro, ga, ws, seq_len, dataset_size, normalize_lang(lang, "en"))[0]


def _run_batch(
    tb: Any, micro: Any, ga: Any, ws: Any, seq_len: Any, dataset_size: Any, lang: Lang
) -> tuple[tuple[str, str], str | None, str]:
    """run_batch's outputs plus the refused field (or None) and its message, for marking the form."""
    lang = normalize_lang(lang, "en")  # the form's handler passes the session's language state as it is
    try:
        res = resolve_batch(
            train_batch_size=_opt_int(tb),
            train_micro_batch_size_per_gpu=_int(micro),
            gradient_accumulation_steps=_int(ga),
            world_size=1 if _int(ws) is None else _int(ws),
            seq_len=_opt_int(seq_len),
            dataset_size=_opt_int(dataset_size),
            lang=lang,
        )
    except CalculatorError as err:
        return (_error(err, lang), ""), _error_field(err), err.message(lang)
    except Exception as exc:
        return (_unexpected(exc, lang), ""), None, ""
    return ("", batch_summary_md(res, lang)), None, ""


def _heading(key: str, lang: Lang) -> str:
    """A form section's heading: the string in bold, first letter capitalised ("model" → "**Model**")."""
    text = t(key, lang)
    return f"**{text[:1].upper()}{text[1:]}**"


def build_calculators_tab(L: Labels) -> dict[str, Any]:
    """Lay out the tab (inside a gr.Tab); returns the components for :func:`wire_calculators_tab`.

    Memory comes first (the question most people open the tab with), its result right under the form and
    already computed for the default form (no empty tab). The effective-batch form below shares the memory
    form's micro batch, GA, world_size and seq_len (one value each, never two that disagree) and adds only
    what is its own: a target train_batch_size and the dataset size."""
    lang = L.lang

    def F(field: str) -> str:
        return label(field, lang)

    first_mem, _, _ = _run_memory(dict(DEFAULTS), lang)

    # ---------------------------------------------------------------- memory
    L.add(gr.Markdown(f"### {L.text('memory_header')}"), value=lambda lg: f"### {t('memory_header', lg)}")
    L.add(gr.Markdown(L.text("calc_live_help")), value="calc_live_help")
    comps: dict[str, Any] = {}

    def reg(field: str, comp: Any, **extra: Any) -> Any:
        comps[field] = comp
        return L.add(comp, label=field, **extra)

    with gr.Row():
        with gr.Column(min_width=240):
            L.add(gr.Markdown(_heading("model_section", lang)), value=lambda lg: _heading("model_section", lg))
            reg(
                "model",
                gr.Dropdown(model_choices(lang), value=DEFAULTS["model"], label=F("model"), elem_id="m_model"),
                choices=model_choices,
            )
            reg(
                "finetune",
                gr.Radio(
                    _literal_choices("finetune"), value=DEFAULTS["finetune"], label=F("finetune"), elem_id="m_finetune"
                ),
            )
            reg(
                "precision",
                gr.Dropdown(
                    _literal_choices("precision"),
                    value=DEFAULTS["precision"],
                    label=F("precision"),
                    elem_id="m_precision",
                ),
            )
            reg(
                "optimizer",
                gr.Dropdown(
                    _literal_choices("optimizer"),
                    value=DEFAULTS["optimizer"],
                    label=F("optimizer"),
                    elem_id="m_optimizer",
                ),
            )
            reg(
                "adamw_kernel",
                gr.Radio(
                    _literal_choices("adamw_kernel"),
                    value=DEFAULTS["adamw_kernel"],
                    label=F("adamw_kernel"),
                    elem_id="m_adamw_kernel",
                ),
            )
        with gr.Column(min_width=240):
            L.add(gr.Markdown(f"**{L.text('hardware_section')}**"), value=lambda lg: f"**{t('hardware_section', lg)}**")
            reg(
                "gpu",
                gr.Dropdown(gpu_choices(lang), value=DEFAULTS["gpu"], label=F("gpu"), elem_id="m_gpu"),
                choices=gpu_choices,
            )
            reg("zero_stage", gr.Radio([0, 1, 2, 3], value=0, label=F("zero_stage"), elem_id="m_zero"))
            with gr.Row():
                reg("world_size", gr.Number(1, label=F("world_size"), precision=0, elem_id="m_ws", minimum=1))
                reg("num_nodes", gr.Number(1, label=F("num_nodes"), precision=0, elem_id="m_nodes"))
            with gr.Row():
                reg("offload_optimizer", gr.Checkbox(False, label=F("offload_optimizer"), elem_id="m_off_opt"))
                reg("offload_param", gr.Checkbox(False, label=F("offload_param"), elem_id="m_off_param"))
        with gr.Column(min_width=240):
            L.add(gr.Markdown(f"**{L.text('training_section')}**"), value=lambda lg: f"**{t('training_section', lg)}**")
            reg(
                "train_micro_batch_size_per_gpu",
                gr.Number(
                    DEFAULTS["train_micro_batch_size_per_gpu"],
                    precision=0,
                    label=F("train_micro_batch_size_per_gpu"),
                    elem_id="m_micro",
                ),
            )
            reg(
                "gradient_accumulation_steps",
                gr.Number(
                    DEFAULTS["gradient_accumulation_steps"],
                    precision=0,
                    label=F("gradient_accumulation_steps"),
                    elem_id="m_ga",
                ),
            )
            reg("seq_len", gr.Number(DEFAULTS["seq_len"], precision=0, label=F("seq_len"), elem_id="m_seq"))
            reg(
                "gradient_checkpointing",
                gr.Radio(
                    _literal_choices("gradient_checkpointing"),
                    value="none",
                    label=F("gradient_checkpointing"),
                    elem_id="m_ckpt",
                ),
            )
            reg("flash_attention", gr.Checkbox(True, label=F("flash_attention"), elem_id="m_flash"))
    with L.add(gr.Accordion(L.text("advanced_section"), open=False), label="advanced_section"):
        with gr.Row():
            reg("num_params", gr.Number(None, label=F("num_params"), elem_id="m_num_params"))
            reg("hidden_size", gr.Number(None, precision=0, label=F("hidden_size"), elem_id="m_hidden"))
            reg("num_layers", gr.Number(None, precision=0, label=F("num_layers"), elem_id="m_layers"))
            reg("num_attention_heads", gr.Number(None, precision=0, label=F("num_attention_heads"), elem_id="m_heads"))
            reg("vocab_size", gr.Number(None, precision=0, label=F("vocab_size"), elem_id="m_vocab"))
        reg("hf_config", gr.Code(None, language="json", label=F("hf_config"), elem_id="m_hf_config", lines=4))
        with gr.Row():
            reg("gpu_memory_gb", gr.Number(None, label=F("gpu_memory_gb"), elem_id="m_gpu_mem"))
            reg("pipeline_parallel_size", gr.Number(1, precision=0, label=F("pipeline_parallel_size"), elem_id="m_pp"))
            reg("cuda_context_gb", gr.Number(DEFAULTS["cuda_context_gb"], label=F("cuda_context_gb"), elem_id="m_ctx"))
        with gr.Row():
            reg("lora_rank", gr.Number(DEFAULTS["lora_rank"], precision=0, label=F("lora_rank"), elem_id="m_rank"))
            reg(
                "lora_target_modules",
                gr.CheckboxGroup(
                    list(LORA_MODULES),
                    value=DEFAULTS["lora_target_modules"],
                    label=F("lora_target_modules"),
                    elem_id="m_lora_mods",
                ),
            )
        with gr.Row():
            reg(
                "reduce_bucket_size",
                gr.Number(DEFAULTS["reduce_bucket_size"], label=F("reduce_bucket_size"), elem_id="m_rbs"),
            )
            reg(
                "allgather_bucket_size",
                gr.Number(DEFAULTS["allgather_bucket_size"], label=F("allgather_bucket_size"), elem_id="m_abs"),
            )
            reg("overlap_comm", gr.Checkbox(False, label=F("overlap_comm"), elem_id="m_overlap"))
        with gr.Row():
            reg("fsdp", gr.Radio(_literal_choices("fsdp"), value="none", label=F("fsdp"), elem_id="m_fsdp"))
            reg("fsdp_cpu_offload", gr.Checkbox(False, label=F("fsdp_cpu_offload"), elem_id="m_fsdp_off"))
            reg("fsdp_sync_each_batch", gr.Checkbox(False, label=F("fsdp_sync_each_batch"), elem_id="m_fsdp_sync"))
            reg(
                "fsdp_frozen_in_trainable_units",
                gr.Checkbox(False, label=F("fsdp_frozen_in_trainable_units"), elem_id="m_fsdp_frozen"),
            )
        with gr.Row():
            reg("lora_int8_base", gr.Checkbox(False, label=F("lora_int8_base"), elem_id="m_lora_int8"))
            reg("qlora_double_quant", gr.Checkbox(True, label=F("qlora_double_quant"), elem_id="m_qlora_dq"))
            reg("qlora_lm_head_4bit", gr.Checkbox(False, label=F("qlora_lm_head_4bit"), elem_id="m_qlora_head"))
        with gr.Row():
            reg("zero_grad_set_to_none", gr.Checkbox(True, label=F("zero_grad_set_to_none"), elem_id="m_set_to_none"))
            reg(
                "loss_implementation",
                gr.Radio(
                    _literal_choices("loss_implementation"),
                    value="hf",
                    label=F("loss_implementation"),
                    elem_id="m_loss_impl",
                ),
            )
            reg("allocator_slack_fraction", gr.Number(0.10, label=F("allocator_slack_fraction"), elem_id="m_slack"))
            reg(
                "bitsandbytes_before_0_43_2",
                gr.Checkbox(False, label=F("bitsandbytes_before_0_43_2"), elem_id="m_bnb_old"),
            )
        with gr.Row():
            reg("optimizer_in_backward", gr.Checkbox(False, label=F("optimizer_in_backward"), elem_id="m_opt_in_bwd"))
            reg("activation_offloading", gr.Checkbox(False, label=F("activation_offloading"), elem_id="m_act_offload"))
        with gr.Row():  # vision-language presets only
            reg(
                "images_per_sample",
                gr.Number(0, precision=0, label=F("images_per_sample"), elem_id="m_images", minimum=0),
            )
            reg(
                "visual_tokens_in_seq_len",
                gr.Checkbox(False, label=F("visual_tokens_in_seq_len"), elem_id="m_vis_in_seq"),
            )
            reg("image_height", gr.Number(None, precision=0, label=F("image_height"), elem_id="m_img_h"))
            reg("image_width", gr.Number(None, precision=0, label=F("image_width"), elem_id="m_img_w"))
            reg("image_max_pixels", gr.Number(None, precision=0, label=F("image_max_pixels"), elem_id="m_img_max"))
        with gr.Row():  # the checkboxes on their own row: their labels name two frameworks' keys and need the width
            reg("freeze_vision_tower", gr.Checkbox(True, label=F("freeze_vision_tower"), elem_id="m_freeze_vit"))
            reg("freeze_projector", gr.Checkbox(True, label=F("freeze_projector"), elem_id="m_freeze_proj"))
    m_err = gr.Markdown(first_mem[0], elem_id="memory-error", elem_classes=["field-error"])
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=300):
            m_summary = gr.Markdown(first_mem[1], elem_id="memory-summary")
        with gr.Column(scale=1, min_width=300):
            m_bar = gr.HTML(first_mem[2], elem_id="memory-breakdown", js_on_load=None, css_template=PLOT_CSS)
    with gr.Row(equal_height=False, elem_id="memory-sweeps"):
        with gr.Column(min_width=300):
            m_micro = gr.HTML(first_mem[3], elem_id="memory-vs-micro", js_on_load=None, css_template=PLOT_CSS)
        with gr.Column(min_width=300):
            m_ga = gr.HTML(first_mem[4], elem_id="memory-vs-ga", js_on_load=None, css_template=PLOT_CSS)

    # ---------------------------------------------------------------- effective batch (shares the fields above)
    first_batch, _, _ = _run_batch(
        None,
        DEFAULTS["train_micro_batch_size_per_gpu"],
        DEFAULTS["gradient_accumulation_steps"],
        DEFAULTS["world_size"],
        DEFAULTS["seq_len"],
        None,
        lang,
    )
    L.add(gr.Markdown(f"### {L.text('batch_header')}"), value=lambda lg: f"### {t('batch_header', lg)}")
    L.add(gr.Markdown(L.text("batch_shared_help")), value="batch_shared_help")
    with gr.Row():
        b_tb = L.add(
            gr.Number(None, label=F("train_batch_size"), precision=0, elem_id="b_tb"), label="train_batch_size"
        )
        b_ds = L.add(gr.Number(None, label=F("dataset_size"), precision=0, elem_id="b_ds"), label="dataset_size")
    b_err = gr.Markdown(first_batch[0], elem_id="batch-error", elem_classes=["field-error"])
    b_out = gr.Markdown(first_batch[1], elem_id="batch-result")

    return dict(
        batch=(
            b_tb,
            comps["train_micro_batch_size_per_gpu"],
            comps["gradient_accumulation_steps"],
            comps["world_size"],
            comps["seq_len"],
            b_ds,
            b_err,
            b_out,
        ),
        memory=(comps, m_err, m_summary, m_bar, m_micro, m_ga),
    )


def wire_calculators_tab(handles: dict[str, Any], lang_state: Any) -> None:
    """Recalculate on every change (and on a language switch): the result on screen always belongs to the
    form on screen; a refused value clears the result instead of leaving a stale one."""
    b_tb, b_micro, b_ga, b_ws, b_seq, b_ds, b_err, b_out = handles["batch"]
    batch_comps = {
        "train_batch_size": b_tb,
        "train_micro_batch_size_per_gpu": b_micro,
        "gradient_accumulation_steps": b_ga,
        "world_size": b_ws,
        "seq_len": b_seq,
        "dataset_size": b_ds,
    }

    def on_batch(*args: Any) -> tuple[Any, ...]:
        outputs, bad, message = _run_batch(*args)
        return (*outputs, *field_marks(batch_comps, bad, message))

    gr.on(
        [c.change for c in batch_comps.values()] + [lang_state.change],
        on_batch,
        [b_tb, b_micro, b_ga, b_ws, b_seq, b_ds, lang_state],
        [b_err, b_out, *batch_comps.values()],
        api_visibility="private",
        trigger_mode="always_last",
        show_progress="hidden",
    )
    comps, m_err, m_summary, m_bar, m_micro, m_ga = handles["memory"]
    fields = list(comps)

    def on_memory(*args: Any) -> tuple[Any, ...]:
        *vals, lang = args
        outputs, bad, message = _run_memory(dict(zip(fields, vals, strict=True)), lang)
        return (*outputs, *field_marks(comps, bad, message))

    # A shareable link (issue #15 item 11): every change writes the fields that differ from the initial form
    # into the URL, in the browser, with no server round trip.
    gr.on(
        [comps[f].change for f in fields],
        None,
        [comps[f] for f in fields],
        None,
        js=memory_in_url_js(initial_form(comps)),
        api_visibility="private",
        show_progress="hidden",
    )
    gr.on(
        [comps[f].change for f in fields] + [lang_state.change],
        on_memory,
        [comps[f] for f in fields] + [lang_state],
        [m_err, m_summary, m_bar, m_micro, m_ga] + [comps[f] for f in fields],
        api_visibility="private",
        trigger_mode="always_last",
        show_progress="hidden",
    )


def initial_form(comps: dict[str, Any]) -> dict[str, Any]:
    """The memory form as it opens (every field, in form order): what a link leaves out means this."""
    return {name: comp.value for name, comp in comps.items()}


def checked_link_values(asked: dict[str, Any], initial: dict[str, Any]) -> dict[str, Any]:
    """The link's values less those the calculator refuses by name, checked together as the form would send them.

    A refused field goes back to its initial value and the rest is checked again, so one bad value does not
    cost the others; a value that is valid but does not fit stays (the form then shows "does not fit")."""
    kept = dict(asked)
    for _ in range(len(asked) + 1):
        try:
            estimate_memory(form_to_config({**initial, **kept}))
        except CalculatorError as err:
            bad = _error_field(err)
            if bad not in kept:
                break  # refused for a field the link did not set: the form shows it as usual
            kept.pop(bad)
            continue
        except Exception:
            break  # not the link's doing to judge here; the form reports it after loading
        break
    return kept


def memory_from_url(handles: dict[str, Any]) -> tuple[Any, None, list[Any]]:
    """(fn, inputs, outputs) for a demo.load that fills the memory form from the page's query parameters.

    Fields the link does not name (or names with a value the form would not take) are left as they are;
    the fields it sets fire their change events, so the form recalculates as after typing."""
    comps = handles["memory"][0]
    specs = {name: spec_of(comp) for name, comp in comps.items()}
    initial = initial_form(comps)

    def load(request: gr.Request) -> list[Any]:
        params = getattr(request, "query_params", None) or {}
        try:
            values = checked_link_values(parse_query(params, specs), initial)
        except Exception as exc:  # never a traceback on page load
            log.warning("link settings ignored: %s", type(exc).__name__)
            values = {}
        return [gr.update(value=values[name]) if name in values else gr.update() for name in comps]

    return load, None, list(comps.values())
