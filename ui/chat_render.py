"""How one answer becomes chat messages: the first screen open, everything else folded.

Answers run 2,000–3,500 characters (about 3.7 chat-panel heights). People read the verdict, their
own numbers and what was assumed, and open the rest when they want it. So the answer's
``first_screen`` (rag/answer.py) is one open message, and every ``#### heading`` section of the
rest (the numbers, the explanation, the sources) and every calculator call is a collapsed message
(``metadata.status == "done"``, which Gradio's Chatbot shows folded) whose title says what is inside.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from calculators.i18n import t
from calculators.lang import Lang
from calculators.text_safety import escape_md

from .render import code_block, corrections_md, gib, sources_md, tool_call_message

_HEADING = re.compile(r"(?m)^#{2,4}\s+(.+?)\s*$")
_SOURCES_TITLES = ("sources", "来源", "参考来源")


class Section(BaseModel):
    """A ``#### heading`` section of an answer: shown as one folded message titled by its heading."""

    title: str
    body: str


def split_answer(text: str, first_screen: str) -> tuple[str, list[Section]]:
    """(the open part, the folded sections). Without a usable ``first_screen`` the part before the first
    heading stays open; an answer with no headings is all open."""
    text = text or ""
    head_end = len(first_screen) if first_screen and text.startswith(first_screen.strip()[:40]) else None
    headings = list(_HEADING.finditer(text))
    if head_end is None or head_end > len(text):
        head_end = headings[0].start() if headings else len(text)
    head = text[:head_end].strip()
    rest = text[head_end:]
    sections: list[Section] = []
    marks = list(_HEADING.finditer(rest))
    lead = rest[: marks[0].start()].strip() if marks else rest.strip()
    if lead:  # text between the first screen and the first heading
        if marks:
            sections.append(Section(title="", body=lead))
        else:
            head = (head + "\n\n" + lead).strip()
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(rest)
        body = rest[m.end() : end].strip()
        if body:
            sections.append(Section(title=m.group(1).strip(" *#"), body=body))
    return head, sections


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


_SHORT = {
    "train_micro_batch_size_per_gpu": "micro",
    "gradient_accumulation_steps": "GA",
    "seq_len": "seq",
    "zero_stage": "ZeRO",
    "world_size": "GPUs",
    "gradient_checkpointing": "checkpointing",
    "offload_optimizer": "offload",
    "finetune": "",
    "precision": "",
    "model": "",
    "gpu": "",
}


def _arg(k: str, v: Any) -> str:
    name = _SHORT.get(k, k)
    if isinstance(v, bool):
        return f"{name or k}{'' if v else ' off'}"
    return f"{name}={_fmt(v)}" if name else _fmt(v)


def call_title(call: dict[str, Any], main_args: dict[str, Any] | None, lang: Lang) -> str:
    """A calculator bubble's title that says what differs from the main call and what came out,
    e.g. ``GA=16 → 18.8 GiB``; the main call names the setup."""
    name = str(call.get("name", "?"))
    args = call.get("arguments") or {}
    result = call.get("result")
    res: dict[str, Any] = result if isinstance(result, dict) else {}
    prefix = t("tool_title", lang, name=name)
    if call.get("error") and not res:
        return f"{prefix} · ✘"
    if name == "memory" and res.get("total_per_gpu") is not None:
        if main_args is not None and args is not main_args:
            diff = [_arg(k, v) for k, v in args.items() if main_args.get(k) != v and not isinstance(v, (dict, list))]
        else:
            diff = [
                _arg(k, args[k])
                for k in (
                    "model",
                    "finetune",
                    "gpu",
                    "train_micro_batch_size_per_gpu",
                    "gradient_accumulation_steps",
                    "seq_len",
                )
                if k in args
            ]
        fits = res.get("fits")
        mark = "" if fits is None else (" ✔" if fits else " ✘")
        what = escape_md(", ".join(diff[:4])) if diff else ""
        return f"{prefix}: {what} → {gib(res['total_per_gpu'])}{mark}".replace(":  →", " →")
    if name == "sweep" and isinstance(res.get("points"), list) and res["points"]:
        field = str(res.get("field") or args.get("field") or "")
        pts = [(p.get("value"), (p.get("estimate") or {}).get("total_per_gpu")) for p in res["points"]]
        pts = [(v, x) for v, x in pts if x is not None]
        if pts:
            span = f"{_fmt(pts[0][0])}…{_fmt(pts[-1][0])}"
            return (
                f"{prefix}: {escape_md(_SHORT.get(field, field) or field)} {escape_md(span)} → "
                f"{gib(pts[0][1])}…{gib(pts[-1][1])}"
            )
    if name == "effective_batch" and res.get("formula"):
        return f"{prefix}: {escape_md(res['formula'])}"
    return prefix


def user_message_md(question: str) -> str:
    """The user's bubble: their prose as written, pasted configs, logs, commands and errors as code blocks
    (Markdown would otherwise fold a JSON config onto one line and turn ``#`` comments into headings)."""
    try:
        from rag.parts import split_message

        parts = split_message(question)
    except Exception:  # the bubble must show even if the reader fails
        return question
    out: list[str] = []
    for p in parts:
        if p.kind == "prose" or getattr(p, "fenced", False) and p.text.lstrip().startswith("```"):
            out.append(p.text)
        else:
            lang = "json" if p.text.lstrip().startswith(("{", "[")) else ""
            out.append(code_block(p.text, lang))
    return "\n\n".join(x for x in out if x.strip()) or question


def answer_messages(data: dict[str, Any], lang: Lang) -> list[dict[str, Any]]:
    """All chat messages for one answer (``Answer.model_dump()``): the open first screen, then folded sections,
    then the folded calculator calls."""
    text = data.get("text", "") or ""
    head, sections = split_answer(text, data.get("first_screen", "") or "")
    msgs: list[dict[str, Any]] = [{"role": "assistant", "content": head or text}]
    has_sources = False
    for s in sections:
        title = s.title or t("details", lang)
        if s.title.lower() in _SOURCES_TITLES:
            has_sources = True
            title = t("sources", lang)
        msgs.append({"role": "assistant", "content": s.body, "metadata": {"title": f"{title}", "status": "done"}})
    extra = corrections_md(data.get("corrections", []), text, lang)
    if extra:
        msgs.append(
            {"role": "assistant", "content": extra, "metadata": {"title": t("corrections", lang), "status": "done"}}
        )
    if not has_sources:
        src = sources_md(data.get("sources", []), lang, text)
        if src:
            body = src.split("\n", 1)[1] if "\n" in src else src
            msgs.append(
                {"role": "assistant", "content": body, "metadata": {"title": t("sources", lang), "status": "done"}}
            )
    calls = data.get("tool_calls", []) or []
    main = next((c.get("arguments") for c in calls if c.get("label") in ("main", "ga_low")), None)
    for call in calls:
        if call.get("error") and not call.get("result"):
            call = {**call, "result": {"error": call["error"]}}
        msg = tool_call_message(call, lang)
        msg["metadata"]["title"] = call_title(call, main, lang)
        msg["metadata"].pop("duration", None)  # the engine does not time single calls; no made-up timing
        msg["metadata"].pop("log", None)  # the arguments are inside; the title says what differs
        msgs.append(msg)
    return msgs
