"""Markdown for tool calls, sources, calculator results and cards.

Everything that may carry user text goes through :func:`md_escape` or a code
span/fence; the components that show it keep ``sanitize_html`` on as a second
line of defence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from calculators.i18n import t
from calculators.lang import Lang
from calculators.memory_table import memory_table as memory_columns_table
from calculators.memory_table import over_text, row_name
from calculators.units import format_gib

from .plots import memory_chart_svg

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")
_SCHEME = re.compile(r"(?i)\b(javascript|vbscript|data|file)\s*:")


def md_escape(text: Any) -> str:
    """Text shown literally in Markdown (no links, no HTML, no emphasis, no bare ``javascript:`` autolinks)."""
    s = str(text)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_SPECIAL.sub(lambda m: "\\" + m.group(1) if m.group(1) not in "<>" else m.group(1), s)
    return _SCHEME.sub(lambda m: m.group(1) + "&#58;", s)


def code_span(text: Any) -> str:
    s = str(text).replace("\n", " ")
    fence = "`" * (max((len(m) for m in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def inert_json(value: Any, limit: int | None = None) -> str:
    """JSON for a code block that stays inert in any renderer: ``<``, ``>`` and the ':' of a URL scheme as
    ``\\uXXXX`` escapes (still valid JSON, same value)."""
    text = json.dumps(value, ensure_ascii=False, indent=1, default=str)
    if limit is not None:
        text = text[:limit]
    text = text.replace("<", "\\u003c").replace(">", "\\u003e")
    return re.sub(r"(?i)(javascript|vbscript|data)\s*:", lambda m: m.group(1) + "\\u003a", text)


def code_block(text: str, lang: str = "") -> str:
    fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def safe_url(url: Any) -> str | None:
    s = str(url or "").strip()
    if re.match(r"^https?://[^\s<>\"'()]+$", s):
        return s
    return None


def link(title: Any, url: Any) -> str:
    u = safe_url(url)
    return f"[{md_escape(title)}]({u})" if u else md_escape(title)


def gib(value: int | float | None) -> str:
    return format_gib(value)  # calculators.units: the chat and the tab write the same figure


# ---------------------------------------------------------------- tool calls
def _table(rows: Iterable[tuple[str, str]], head: tuple[str, str]) -> str:
    out = [f"| {head[0]} | {head[1]} |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(out)


def memory_table(res: dict[str, Any], lang: Lang) -> str:
    """One estimate as a one-column table (rows, names, verdict and figures: calculators.memory_table)."""
    return memory_columns_table([(row_name("per_gpu", lang), res)], lang)


def batch_table(res: dict[str, Any], lang: Lang) -> str:
    keys = (
        "train_batch_size",
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
        "world_size",
        "tokens_per_optimizer_step",
        "optimizer_steps_per_epoch",
    )
    rows = [(code_span(k), f"{res[k]:,}") for k in keys if res.get(k) is not None]
    if res.get("formula"):
        rows.append((t("row_formula", lang), code_span(res["formula"])))
    return _table(rows, (t("col_field", lang), t("col_value", lang)))


def sweep_table(res: dict[str, Any], lang: Lang) -> str:
    field = res.get("field", "value")
    head = f"| {code_span(field)} | {row_name('total_per_gpu', lang)} | {row_name('activations', lang)} |"
    out = [head, "|---|---|---|"]
    for p in res.get("points", []):
        est = p.get("estimate", {})
        out.append(f"| {md_escape(p.get('value'))} | {gib(est.get('total_per_gpu'))} | {gib(est.get('activations'))} |")
    if res.get("gpu_capacity"):
        out.append(f"| {row_name('gpu_capacity', lang)} | {gib(res['gpu_capacity'])} | |")
    return "\n".join(out)


def _flat_scalars(d: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in d.items():
        if isinstance(v, dict):
            out += _flat_scalars(v, f"{prefix}{k}.")
        elif isinstance(v, (int, float, str, bool)) or v is None:
            out.append((f"{prefix}{k}", v))
    return out


def result_table(name: str, result: Any, lang: Lang) -> str:
    """A compact Markdown table for one calculator result (a dict from model_dump)."""
    if not isinstance(result, dict):
        return code_block(inert_json(result, 3000), "json")
    if "error" in result and len(result) <= 3:
        return "✘ " + md_escape(result.get("error"))
    if name == "memory" or "total_per_gpu" in result:
        return memory_table(result, lang)
    if name == "effective_batch" or "train_batch_size" in result:
        return batch_table(result, lang)
    if name == "sweep" or "points" in result:
        return sweep_table(result, lang)
    rows = []
    for k, v in _flat_scalars(result)[:20]:
        shown = gib(v) if isinstance(v, int) and k.endswith("_bytes") else md_escape(v)
        rows.append((code_span(k), shown))
    return _table(rows, (t("col_field", lang), t("col_value", lang)))


def tool_call_message(call: dict[str, Any], lang: Lang) -> dict[str, Any]:
    """One collapsible Chatbot message for one calculator call."""
    name = str(call.get("name", "?"))
    args = call.get("arguments") or {}
    parts = [f"**{t('arguments', lang)}**", code_block(inert_json(args), "json")]
    summary = str(call.get("summary_md") or "")
    parts.append(f"**{t('result', lang)}**")
    if re.search(r"(^|\n)\s*\|.*\|\s*\n\s*\|[-:| ]+\|", summary) and not call.get("error"):
        parts.append(summary)  # the assistant's own summary already is a result table
    else:
        parts.append(result_table(name, call.get("result"), lang))
        if summary:
            parts.append(summary)
    if name == "memory" and isinstance(call.get("result"), dict) and not call.get("error"):
        chart = memory_chart_svg(call["result"], lang)
        if chart:
            parts.insert(0, chart)  # the picture first, then the arguments and the table
    short_args = ", ".join(f"{k}={v}" for k, v in list(args.items())[:4] if not isinstance(v, (dict, list)))
    return {
        "role": "assistant",
        "content": "\n\n".join(parts),
        "metadata": {"title": t("tool_title", lang, name=name), "status": "done", "log": short_args[:120]},
    }


def sources_md(sources: list[dict[str, Any]], lang: Lang, answer_text: str = "") -> str:
    """A linked list of the answer's sources, leaving out those the answer text already links to."""
    todo = [
        s
        for s in sources or []
        if not all(str(u.get("url")) in answer_text for u in s.get("urls") or [] if isinstance(u, dict))
        or not s.get("urls")
    ]
    if not todo:
        return ""
    lines = [f"**{t('sources', lang)}**"]
    for s in todo:
        urls = s.get("urls") or []
        links = "; ".join(link(u.get("title") or u.get("url"), u.get("url")) for u in urls if isinstance(u, dict))
        title = md_escape(s.get("title") or s.get("card_id") or "")
        cid = code_span(s.get("card_id", "")) if s.get("card_id") else ""
        lines.append(f"- {title} {cid}" + (f" — {links}" if links else ""))
    return "\n".join(lines)


def corrections_md(corrections: list[dict[str, Any]], answer_text: str, lang: Lang) -> str:
    todo = [c for c in corrections or [] if c.get("correction") and str(c["correction"]) not in answer_text]
    if not todo:
        return ""
    lines = [f"**{t('corrections', lang)}**"]
    for c in todo:
        lines.append(f"- ~~{md_escape(c.get('wrong', ''))}~~ → {md_escape(c.get('correction', ''))}")
    return "\n".join(lines)


# ---------------------------------------------------------------- calculators tab
def memory_summary_md(est: Any, lang: Lang) -> str:
    d = est.model_dump() if hasattr(est, "model_dump") else dict(est)
    head = f"### {md_escape(d.get('model_name'))}" + (f" · {md_escape(d['gpu_name'])}" if d.get("gpu_name") else "")
    params = (
        f"{'参数量' if lang == 'zh' else 'parameters'}: {d['num_params'] / 1e9:.3g}B · "
        f"{'可训练' if lang == 'zh' else 'trainable'}: {d['trainable_params'] / 1e6:,.1f}M"
    )
    parts = [head, params, memory_table(d, lang)]
    parts.append(
        "> " + md_escape(d["gradient_accumulation_note_zh" if lang == "zh" else "gradient_accumulation_note_en"])
    )
    notes = d["notes_zh" if lang == "zh" else "notes_en"] + d["assumptions_zh" if lang == "zh" else "assumptions_en"]
    if notes:
        parts.append("\n".join(f"- {md_escape(n)}" for n in notes))
    return "\n\n".join(parts)


def nearest_fits_md(est: Any, options: list[tuple[str, Any]], lang: Lang) -> str:
    """The "no" with a way out: how far over the capacity the setting is, and the nearest settings that fit,
    each with its own numbers. ``options`` are (description, MemoryEstimate) pairs, nearest first."""
    d = est.model_dump() if hasattr(est, "model_dump") else dict(est)
    if d.get("fits") is not False:
        return ""
    name = str(d.get("gpu_name") or "")
    if not name or name.endswith("GiB GPU"):  # a custom capacity: its name is only the size again
        name = t("the_gpu", lang)
    head = t(
        "no_fit_head",
        lang,
        total=gib(d.get("total_per_gpu")),
        gpu=md_escape(name),
        cap=gib(d.get("gpu_capacity")),
        over=over_text(d.get("headroom"), lang),
    )
    if not options:
        return head + "\n\n" + t("nothing_fits", lang)
    rows = [
        t("nearest_fits_head", lang, per_gpu=row_name("per_gpu", lang)),
        "|---|---|---|",
    ]
    for what, e in options:
        rows.append(f"| {md_escape(what)} | {gib(e.total_per_gpu)} | {gib(e.headroom)} |")
    intro = t("nearest_fits_intro", lang)
    return "\n\n".join([head, intro, "\n".join(rows)])


def batch_summary_md(res: Any, lang: Lang) -> str:
    d = res.model_dump() if hasattr(res, "model_dump") else dict(res)
    parts = [f"### {code_span(d['formula'])}", batch_table(d, lang)]
    notes = d["notes_zh" if lang == "zh" else "notes_en"]
    if notes:
        parts.append("\n".join(f"- {md_escape(n)}" for n in notes))
    if d.get("derived"):
        parts.append(t("derived", lang) + ", ".join(code_span(x) for x in d["derived"]))
    rows = [
        (
            md_escape(w["change_zh" if lang == "zh" else "change_en"]),
            f"{w['train_batch_size']:,}",
            md_escape(w["memory_zh" if lang == "zh" else "memory_en"]),
        )
        for w in d.get("what_if", [])
    ]
    if rows:
        parts.append(
            "\n".join([t("what_if_head", lang), "|---|---|---|"] + [f"| {a} | {b} | {c} |" for a, b, c in rows])
        )
    return "\n\n".join(parts)


def field_error_md(field: str, message: str, lang: Lang) -> str:
    return t("error_in_field", lang, field=field, msg=md_escape(message))


# ---------------------------------------------------------------- cards
def card_title(card: Any, lang: Lang) -> str:
    return str(card.title_zh if lang == "zh" else card.title_en)


def card_md(card: Any, lang: Lang) -> str:
    other: Lang = "en" if lang == "zh" else "zh"
    parts = [
        f"## {md_escape(card_title(card, lang))}",
        f"*{md_escape(card_title(card, other))}* · {code_span(card.id)} · "
        + ", ".join(code_span(x) for x in card.topics),
    ]
    # Card bodies are our own Markdown; the Markdown component still sanitizes any HTML in them.
    parts.append(card.body_zh if lang == "zh" else card.body_en)
    if getattr(card, "misconceptions", None):
        lines = [f"### {t('misconceptions', lang)}"]
        for m in card.misconceptions:
            wrong = m.wrong_zh if lang == "zh" else m.wrong_en
            corr = m.correction_zh if lang == "zh" else m.correction_en
            lines.append(f"- ✘ {md_escape(wrong)}\n  ✔ {md_escape(corr)}")
        parts.append("\n".join(lines))
    parts.append(f"### {t('sources', lang)}\n" + "\n".join(f"- {link(s.title, s.url)}" for s in card.sources))
    return "\n\n".join(parts)
