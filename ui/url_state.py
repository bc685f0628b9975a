"""The Calculators tab's memory form in the page URL (issue #15 item 11: a link that reopens the same calculation).

Only the fields that differ from the form's initial values go into the query, under their MemoryConfig names
(``?tab=calculators&model=llama-3-8b&gradient_accumulation_steps=8``), so a link stays short and readable.
Writing happens in the browser (:func:`memory_in_url_js`, ``history.replaceState`` like the tab's own
parameter); reading happens on the server at page load (:func:`parse_query`), which keeps only values the
form itself could hold: an unknown name or a bad value is dropped, never a traceback.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gradio as gr

# Longest value read from a link: a pasted config.json (hf_config) fits; anything longer is not a form value.
MAX_VALUE_CHARS = 20_000


@dataclass(frozen=True)
class FieldSpec:
    """What one form field accepts, read off its component, so a link is checked by the form's own rules."""

    kind: str  # "choice" | "multi" | "bool" | "int" | "float" | "text"
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None


def spec_of(comp: Any) -> FieldSpec:
    """The FieldSpec of a Gradio form component (Dropdown/Radio, CheckboxGroup, Checkbox, Number, Code)."""
    if isinstance(comp, gr.Checkbox):
        return FieldSpec("bool")
    if isinstance(comp, gr.CheckboxGroup | gr.Dropdown | gr.Radio):
        values = tuple(c[1] if isinstance(c, tuple) else c for c in comp.choices)
        return FieldSpec("multi" if isinstance(comp, gr.CheckboxGroup) else "choice", values)
    if isinstance(comp, gr.Number):
        return FieldSpec("int" if comp.precision == 0 else "float", (), comp.minimum, comp.maximum)
    return FieldSpec("text")


def format_value(value: Any) -> str:
    """One form value as URL text; the browser side (:func:`memory_in_url_js`) writes the same text.

    Booleans are "true"/"false", lists are comma lists, whole floats lose their ".0" (JavaScript has no
    float/int distinction, so 5e8 is "500000000" on both sides); None is ""."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(format_value(v) for v in value)
    if isinstance(value, float) and math.isfinite(value) and value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def _is_empty(value: Any, default: Any) -> bool:
    """An empty box: None or "", and 0 where the field starts empty (the browser sends an empty Number as 0)."""
    return value is None or value == "" or (default is None and value == 0 and not isinstance(value, bool))


def serialise(values: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, str]:
    """The query parameters for a form: each field whose value differs from its initial one, in form order."""
    out: dict[str, str] = {}
    for name, default in defaults.items():
        value = values.get(name)
        if _is_empty(value, default):
            continue
        text = format_value(value)
        if text != format_value(default):
            out[name] = text
    return out


def _number(raw: str, spec: FieldSpec) -> int | float | None:
    """A number box's value, or None when the form could not hold it (not a number, not whole, out of range)."""
    try:
        num = float(raw)
    except ValueError:
        return None
    if not math.isfinite(num):
        return None
    if spec.minimum is not None and num < spec.minimum:
        return None
    if spec.maximum is not None and num > spec.maximum:
        return None
    if spec.kind == "int":
        return int(num) if num == int(num) else None
    return num


def parse_value(raw: str, spec: FieldSpec) -> tuple[bool, Any]:
    """(ok, value) for one URL value; ok is False for a value the form's component would not hold."""
    raw = raw.strip()
    if len(raw) > MAX_VALUE_CHARS:
        return False, None
    if spec.kind == "bool":
        low = raw.lower()
        return (True, low == "true") if low in ("true", "false") else (False, None)
    if spec.kind == "choice":
        match = [c for c in spec.choices if format_value(c) == raw]
        return (True, match[0]) if match else (False, None)
    if spec.kind == "multi":
        parts = [p.strip() for p in raw.split(",") if p.strip()]
        by_text = {format_value(c): c for c in spec.choices}
        if any(p not in by_text for p in parts):
            return False, None
        return True, [c for c in spec.choices if format_value(c) in parts]  # the form's order, no duplicates
    if spec.kind in ("int", "float"):
        num = _number(raw, spec)
        return (num is not None), num
    return bool(raw), raw


def parse_query(params: Mapping[str, str], specs: Mapping[str, FieldSpec]) -> dict[str, Any]:
    """The form values a link asks for: known fields with values their component accepts; the rest is dropped."""
    out: dict[str, Any] = {}
    for name, spec in specs.items():
        raw = params.get(name)
        if raw is None:
            continue
        ok, value = parse_value(str(raw), spec)
        if ok:
            out[name] = value
    return out


# Runs in the browser on every change of the memory form; receives the form's values (in FIELDS order) and
# returns them unchanged. Mirrors serialise()/format_value(): only fields that differ from the initial form,
# the other query parameters (tab, lang, embed, ...) kept. Not inside <gradio-app>: there the URL is the host page's.
_MEMORY_IN_URL_JS = """(...vals) => {
  try {
    if (document.querySelector('gradio-app[src]')) return vals;
    const fields = __FIELDS__, defaults = __DEFAULTS__;
    const fmt = (v) => v === null || v === undefined ? '' : typeof v === 'boolean' ? (v ? 'true' : 'false')
      : Array.isArray(v) ? v.map(fmt).join(',') : String(v);
    const u = new URL(window.location.href);
    fields.forEach((name, i) => {
      const v = vals[i], d = defaults[name];
      const empty = v === null || v === undefined || v === '' || (d === null && v === 0);
      if (empty || fmt(v) === fmt(d)) u.searchParams.delete(name);
      else u.searchParams.set(name, fmt(v));
    });
    if (u.toString() !== window.location.href) window.history.replaceState(window.history.state, '', u.toString());
  } catch (e) {}
  return vals;
}"""


def memory_in_url_js(defaults: Mapping[str, Any]) -> str:
    """The browser function that writes the form's changed fields into the URL (fields in ``defaults`` order)."""
    return _MEMORY_IN_URL_JS.replace("__FIELDS__", json.dumps(list(defaults))).replace(
        "__DEFAULTS__", json.dumps(dict(defaults))
    )
