"""Plots as self-contained inline SVG (no plotting dependency, works offline, escapes all text).

* :func:`breakdown_svg` — one stacked bar of the memory categories against the GPU capacity line.
* :func:`sweep_svg` — total per-GPU memory (and activations) as one knob moves, with the capacity line.
  The gradient-accumulation sweep is a flat line: the picture that ends the argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

from calculators import GiB
from calculators.i18n import t
from calculators.lang import Lang
from calculators.memory_table import CATEGORIES, short_name, verdict_text
from calculators.memory_table import over_text as over_text  # re-exported: the chart's verdict is the tables' one
from calculators.units import format_gib, format_gib_value, gib_value_number

# Categorical colours (Tableau 10). The GPU-capacity line is drawn in the text colour (``currentColor``),
# dashed, so it never shares a hue with a category (issue #15: capacity and activations were both red)
# and it stays visible in dark mode; "does not fit" is marked in the over-capacity colour below.
COLORS = {
    "weights": "#4e79a7",
    "gradients": "#f28e2b",
    "optimizer_states": "#59a14f",
    "activations": "#e15759",
    "other": "#9c9c9c",
    "total": "#4e79a7",
    "capacity": "currentColor",
    "current": "#b07aa1",
    "over": "#c2410c",
    "fits": "#2e7d32",
}
FONT = "font-family=\"'Noto Sans CJK SC','Noto Sans',sans-serif\""
# Text, axes and grid use the page's text colour: no white box in dark mode.
INK = 'fill="currentColor"'
GRID = 'stroke="currentColor" stroke-opacity="0.15"'
AXIS = 'stroke="currentColor" stroke-opacity="0.7"'


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    exp = 10.0 ** math.floor(math.log10(v))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * exp >= v:
            return m * exp
    return 10 * exp


def _ticks(top: float, n: int = 5) -> list[float]:
    return [top * i / n for i in range(n + 1)]


def _fmt(v: float) -> str:
    return f"{v:.0f}" if v >= 10 or v == 0 else f"{v:.1f}"


def y_top(values_gib: Sequence[float], capacity_gib: float | None, current_gib: float | None = None) -> float:
    """The top of the y-axis: enough to show the capacity line and the current setting with room above them,
    but not so far that a sweep running to 250 GiB squashes the part near the capacity (issue #15).
    Points above the top are drawn on the top edge and labelled with their value."""
    highest = max(list(values_gib) + [0.0])
    if not capacity_gib:
        return _nice_max(highest * 1.08)
    focus = max(capacity_gib * 1.4, (current_gib or 0.0) * 1.15)  # the region the reader decides in
    return _nice_max(max(capacity_gib * 1.15, min(highest * 1.08, focus)))


def _wrap(svg_body: str, w: int, h: int, title: str, test_id: str, max_width: int | None = None) -> str:
    return (
        f'<div class="batchbot-plot" data-testid="{escape(test_id)}" style="width:100%">'
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="100%" '
        f'style="max-width:{max_width or w}px;height:auto;color:inherit" role="img" aria-label="{escape(title)}" '
        f"{FONT}><title>{escape(title)}</title>"
        f"{svg_body}</svg></div>"
    )


def _title(title: str, w: int, narrow: bool) -> tuple[str, int]:
    """The chart title as SVG text (two lines on a narrow chart when it has a parenthesis) and the y where the
    plot area may start."""
    size = 13 if narrow else 15
    head, sep, tail = title.partition(" (") if narrow and len(title) > 34 else (title, "", "")
    if not sep:
        head, sep, tail = title.partition("（") if narrow and len(title) > 20 else (title, "", "")
        tail = ("（" + tail) if sep else ""
    else:
        tail = "(" + tail
    out = f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="{size}" font-weight="bold" {INK}>{escape(head)}</text>'
    if tail:
        out += f'<text x="{w / 2}" y="37" text-anchor="middle" font-size="{size - 1}" {INK}>{escape(tail)}</text>'
    return out, 52 if tail else 40


def responsive(wide: str, narrow: str) -> str:
    """Both layouts of a chart; the ``PLOT_CSS`` media query shows one (a phone gets the narrow one, whose
    text stays readable instead of a 620-unit drawing shrunk to 150 px)."""
    return f'<div class="plot-wide">{wide}</div><div class="plot-narrow">{narrow}</div>'


#: For gr.HTML(css_template=...): which layout of a :func:`responsive` chart shows.
PLOT_CSS = (
    ".plot-narrow { display: none; } "
    "@media (max-width: 640px) { .plot-wide { display: none; } .plot-narrow { display: block; } }"
)


def _gib_or_none(v: Any) -> float | None:
    return None if v is None else v / GiB


def stack(d: dict[str, Any]) -> tuple[list[tuple[str, float, float, int | None]], float]:
    """The bar's segments as (category, base GiB, size GiB, lane) and the peak it reaches.

    When gradients are not alive during the forward pass (GA=1 with ``zero_grad(set_to_none=True)``), the
    backward pass creates gradients as it frees activations: the two never peak together and the estimate's
    total counts only the larger (see ``calculators.memory._peak``). They are then drawn side by side on the
    same base (lanes 0 and 1), so the bar's top is the real peak, not their sum."""
    values = {c: (d.get(c) or 0) / GiB for c in CATEGORIES}
    out: list[tuple[str, float, float, int | None]] = []
    base = 0.0
    together = d.get("gradients_live_during_forward", True) or not values["gradients"] or not values["activations"]
    for c in ("weights", "optimizer_states", "other") + (("gradients", "activations") if together else ()):
        if values[c] > 0:
            out.append((c, base, values[c], None))
            base += values[c]
    if not together:
        out += [("gradients", base, values["gradients"], 0), ("activations", base, values["activations"], 1)]
        base += max(values["gradients"], values["activations"])
    return out, base


def breakdown_svg(est: Any, lang: Lang, narrow: bool = False) -> str:
    """Stacked bar (GiB) of one MemoryEstimate, with a dashed GPU-capacity line (``narrow``: legend below)."""
    d = est.model_dump() if hasattr(est, "model_dump") else dict(est)
    values = {c: (d.get(c) or 0) / GiB for c in CATEGORIES}
    segments, total = stack(d)
    cap = d.get("gpu_capacity")
    cap_g = cap / GiB if cap else None
    top = _nice_max(max(total, cap_g or 0) * 1.08)
    w, h, left, right, tp, bottom = (360, 480, 44, 16, 40, 200) if narrow else (620, 360, 60, 250, 40, 40)
    ph = h - tp - bottom

    def y(v: float) -> float:
        return tp + ph - v / top * ph

    title = t("plot.breakdown_title", lang) + f" · {d.get('model_name', '')}"
    head, _ = _title(title, w, False)
    body = [head.replace('font-size="15"', 'font-size="13"') if narrow else head]
    for tv in _ticks(top):
        body.append(
            f'<line x1="{left}" x2="{w - right}" y1="{y(tv):.1f}" y2="{y(tv):.1f}" {GRID}/>'
            f'<text x="{left - 6}" y="{y(tv) + 4:.1f}" text-anchor="end" font-size="11" {INK}>{_fmt(tv)}</text>'
        )
    body.append(
        f'<text x="14" y="{tp + ph / 2}" font-size="11" transform="rotate(-90 14 {tp + ph / 2})" '
        f'text-anchor="middle" {INK}>GiB</text>'
    )
    bx, bw = (left + 60, 150) if narrow else (left + 50, 140)
    for c, base, v, lane in segments:
        y0, y1 = y(base + v), y(base)
        sx, sw = (bx, bw) if lane is None else (bx + lane * bw / 2, bw / 2)
        body.append(
            f'<rect class="seg-{c}" x="{sx:.1f}" y="{y0:.1f}" width="{sw:.1f}" height="{max(y1 - y0, 0.5):.1f}" '
            f'fill="{COLORS[c]}"><title>{escape(short_name(c, lang))}: {format_gib_value(v)}</title></rect>'
        )
        if y1 - y0 > 13:
            body.append(
                f'<text x="{sx + sw / 2:.1f}" y="{(y0 + y1) / 2 + 4:.1f}" text-anchor="middle" font-size="11" '
                f'fill="white">{gib_value_number(v)}</text>'
            )
    if any(lane is not None for *_, lane in segments):
        body.append(
            f'<text x="{bx + bw / 2}" y="{tp + ph + 16}" text-anchor="middle" font-size="10" {INK}>'
            f"{escape(t('plot.not_together', lang))}</text>"
        )
    body.append(
        f'<text x="{bx + bw / 2}" y="{y(total) - 6:.1f}" text-anchor="middle" font-size="12" '
        f'font-weight="bold" {INK}>{format_gib_value(total)}</text>'
    )
    if cap_g:
        body.append(
            f'<line class="capacity" x1="{left}" x2="{w - right}" y1="{y(cap_g):.1f}" y2="{y(cap_g):.1f}" '
            f'stroke="{COLORS["capacity"]}" stroke-width="2" stroke-dasharray="6 4"/>'
            f'<text x="{w - right - 4}" y="{y(cap_g) - 5:.1f}" text-anchor="end" font-size="11" '
            f"{INK}>{escape(short_name('gpu_capacity', lang))} {format_gib_value(cap_g)}</text>"
        )
    body.append(f'<line x1="{left}" x2="{w - right}" y1="{tp + ph}" y2="{tp + ph}" {AXIS}/>')
    lx, ly = (left, tp + ph + 30) if narrow else (w - right + 20, tp + 10)
    for i, c in enumerate(CATEGORIES):
        label = short_name(c, lang) + (
            f" {gib_value_number(values[c])}" if d.get(c) is not None else f" ({t('plot.unknown_act', lang)})"
        )
        body.append(
            f'<rect x="{lx}" y="{ly + i * 22}" width="12" height="12" fill="{COLORS[c]}"/>'
            f'<text x="{lx + 18}" y="{ly + i * 22 + 11}" font-size="12" {INK}>{escape(label)}</text>'
        )
    i = len(CATEGORIES)
    if cap_g:
        body.append(
            f'<line x1="{lx}" x2="{lx + 12}" y1="{ly + i * 22 + 6}" y2="{ly + i * 22 + 6}" '
            f'stroke="{COLORS["capacity"]}" stroke-width="2" stroke-dasharray="4 2"/>'
            f'<text x="{lx + 18}" y="{ly + i * 22 + 11}" font-size="12" {INK}>'
            f"{escape(short_name('gpu_capacity', lang))} {gib_value_number(cap_g)}</text>"
        )
        i += 1
    if d.get("fits") is not None:
        body.append(
            f'<text class="verdict" x="{lx}" y="{ly + i * 22 + 14}" font-size="13" font-weight="bold" '
            f'fill="{COLORS["fits"] if d["fits"] else COLORS["over"]}">{escape(verdict_text(d, lang))}</text>'
        )
    return _wrap("".join(body), w, h, title, "breakdown-plot")


def sweep_svg(
    field: str,
    points: Sequence[tuple[Any, float | None, float | None]],
    capacity: int | None,
    lang: Lang,
    title: str,
    current: Any = None,
    narrow: bool = False,
) -> str:
    """Line plot of (value, total_bytes, activation_bytes) points, evenly spaced on x, with the capacity line.

    ``current`` (a value among the points) is marked with a vertical line and its total. The y-axis stops a
    little above the capacity (see :func:`y_top`); points beyond it sit on the top edge with their value."""
    pts = [(v, tot, act) for v, tot, act in points if tot is not None]
    head, tp = _title(title, 360 if narrow else 620, narrow)
    w, h, left, right, bottom = (360, 350, 42, 12, 96) if narrow else (620, 320, 60, 20, 70)
    pw, ph = w - left - right, h - tp - bottom
    body = [head]
    if not pts:
        msg = t("plot.unknown_act", lang)
        body.append(f'<text x="{w / 2}" y="{h / 2}" text-anchor="middle" font-size="13" {INK}>{escape(msg)}</text>')
        return _wrap("".join(body), w, h, title, f"sweep-{field}")
    cap_g = capacity / GiB if capacity else None
    cur_i = next((i for i, p in enumerate(pts) if current is not None and p[0] == current), None)
    cur_g = pts[cur_i][1] / GiB if cur_i is not None else None
    top = y_top([p[1] / GiB for p in pts], cap_g, cur_g)
    n = len(pts)

    def x(i: int) -> float:
        return left + (pw * (i / (n - 1)) if n > 1 else pw / 2)

    def y(v: float) -> float:
        return tp + ph - min(v, top) / top * ph

    for tv in _ticks(top):
        body.append(
            f'<line x1="{left}" x2="{w - right}" y1="{y(tv):.1f}" y2="{y(tv):.1f}" {GRID}/>'
            f'<text x="{left - 6}" y="{y(tv) + 4:.1f}" text-anchor="end" font-size="11" {INK}>{_fmt(tv)}</text>'
        )
    body.append(f'<line x1="{left}" x2="{w - right}" y1="{tp + ph}" y2="{tp + ph}" {AXIS}/>')
    body.append(
        f'<text x="14" y="{tp + ph / 2}" font-size="11" transform="rotate(-90 14 {tp + ph / 2})" '
        f'text-anchor="middle" {INK}>GiB</text>'
    )
    body.append(
        f'<text x="{left + pw / 2}" y="{tp + ph + 34}" text-anchor="middle" font-size="12" {INK}>{escape(field)}</text>'
    )
    for i, (v, _, _) in enumerate(pts):
        bold = 'font-weight="bold" ' if i == cur_i else ""
        body.append(
            f'<text x="{x(i):.1f}" y="{tp + ph + 16}" text-anchor="middle" font-size="11" '
            f"{bold}{INK}>{escape(str(v))}</text>"
        )
    if cur_i is not None:
        cx = x(cur_i)
        anchor = "start" if cur_i < n / 2 else "end"
        dx = 6 if anchor == "start" else -6
        body.append(
            f'<line class="current" x1="{cx:.1f}" x2="{cx:.1f}" y1="{tp}" y2="{tp + ph}" '
            f'stroke="{COLORS["current"]}" stroke-width="1.5" stroke-dasharray="3 3"/>'
            f'<text class="current-label" x="{cx + dx:.1f}" y="{tp + 12}" text-anchor="{anchor}" font-size="11" '
            f'font-weight="bold" fill="{COLORS["current"]}">{escape(t("plot.current", lang))}: '
            f"{escape(str(pts[cur_i][0]))} → {format_gib_value(cur_g or 0.0)}</text>"
        )
    if cap_g:
        body.append(
            f'<line class="capacity" x1="{left}" x2="{w - right}" y1="{y(cap_g):.1f}" y2="{y(cap_g):.1f}" '
            f'stroke="{COLORS["capacity"]}" stroke-width="2" stroke-dasharray="6 4"/>'
        )
    for key, idx in (("total", 1), ("activations", 2)):
        shown = [(i, p[0], b) for i, p in enumerate(pts) if (b := p[idx]) is not None]
        if not shown:
            continue
        coords = [(x(i), y(b / GiB)) for i, _, b in shown]
        path = " ".join(f"{'M' if j == 0 else 'L'}{cx:.1f},{cy:.1f}" for j, (cx, cy) in enumerate(coords))
        dash = ' stroke-dasharray="2 3"' if key == "activations" else ""
        body.append(
            f'<path class="line-{key}" d="{path}" fill="none" stroke="{COLORS[key]}" stroke-width="2.5"{dash}/>'
        )
        for (cx, cy), (i, value, b) in zip(coords, shown, strict=True):
            g = b / GiB
            tip = f"<title>{escape(field)}={escape(str(value))}: {format_gib_value(g)}</title>"
            if g > top:  # off the scale: a triangle on the top edge with the value
                body.append(
                    f'<path class="off-scale" d="M{cx - 5:.1f},{tp + 6} L{cx + 5:.1f},{tp + 6} L{cx:.1f},{tp - 2} Z" '
                    f'fill="{COLORS[key]}">{tip}</path>'
                )
                if key == "total":
                    body.append(
                        f'<text x="{cx:.1f}" y="{tp + 18}" text-anchor="middle" font-size="10" {INK}>{_fmt(g)}</text>'
                    )  # written like the axis it sits on
            else:
                r = 5.5 if i == cur_i and key == "total" else 3.5
                body.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r}" fill="{COLORS[key]}">{tip}</circle>')
    legend = [("total", short_name("total_per_gpu", lang)), ("activations", short_name("activations", lang))]
    if cap_g:
        legend.append(("capacity", f"{short_name('gpu_capacity', lang)} {format_gib_value(cap_g)}"))
    for i, (k, text) in enumerate(legend):
        lx, ly = (left + (i % 2) * 160, h - 26 + (i // 2) * 17) if narrow else (left + i * 180, h - 12)
        body.append(
            f'<rect x="{lx}" y="{ly - 9}" width="14" height="4" fill="{COLORS[k]}"/>'
            f'<text x="{lx + 20}" y="{ly}" font-size="11" {INK}>{escape(text)}</text>'
        )
    return _wrap("".join(body), w, h, title, f"sweep-{field}")


def memory_chart_svg(result: Any, lang: Lang) -> str:
    """A small horizontal stacked bar for a memory answer in the chat: the categories, the capacity mark and
    the verdict with the overshoot. ``result`` is a MemoryEstimate or its ``model_dump()``; "" when there is
    nothing to draw (no total)."""
    d = result.model_dump() if hasattr(result, "model_dump") else dict(result or {})
    if not d.get("total_per_gpu"):
        return ""
    values = {c: (d.get(c) or 0) / GiB for c in CATEGORIES}
    segments, total = stack(d)
    cap_g = _gib_or_none(d.get("gpu_capacity"))
    top = max(total, cap_g or 0) * 1.05 or 1.0
    w, h, left, right, bar_y, bar_h = 520, 104, 8, 8, 40, 22
    pw = w - left - right

    def x(v: float) -> float:
        return left + v / top * pw

    title = t("plot.chart_title", lang) + f" · {d.get('model_name', '')}"
    body = [
        f'<text x="{left}" y="15" font-size="12" font-weight="bold" {INK}>{escape(title)}: '
        f"{format_gib(d['total_per_gpu'])}</text>"
    ]
    verdict = verdict_text(d, lang)
    if verdict:
        body.append(
            f'<text class="verdict" x="{left}" y="31" font-size="11" font-weight="bold" '
            f'fill="{COLORS["fits"] if d["fits"] else COLORS["over"]}">{escape(verdict)}</text>'
        )
    for c, base, v, lane in segments:
        sy, sh = (bar_y, bar_h) if lane is None else (bar_y + lane * bar_h / 2, bar_h / 2)
        body.append(
            f'<rect class="seg-{c}" x="{x(base):.1f}" y="{sy:.1f}" width="{max(x(base + v) - x(base), 0.5):.1f}" '
            f'height="{sh:.1f}" fill="{COLORS[c]}"><title>{escape(short_name(c, lang))}: {format_gib_value(v)}</title></rect>'
        )
    if cap_g:
        cx = x(cap_g)
        anchor = "end" if cx > w / 2 else "start"
        body.append(
            f'<line class="capacity" x1="{cx:.1f}" x2="{cx:.1f}" y1="{bar_y - 4}" y2="{bar_y + bar_h + 4}" '
            f'stroke="{COLORS["capacity"]}" stroke-width="2" stroke-dasharray="4 2"/>'
            f'<text x="{cx + (-4 if anchor == "end" else 4):.1f}" y="{bar_y + bar_h + 15}" text-anchor="{anchor}" '
            f'font-size="11" {INK}>{escape(short_name("gpu_capacity", lang))} {format_gib_value(cap_g)}</text>'
        )
    lx: float = left
    for c in CATEGORIES:
        if values[c] <= 0:
            continue
        text = f"{short_name(c, lang)} {gib_value_number(values[c])}"
        body.append(
            f'<rect x="{lx}" y="{h - 11}" width="9" height="9" fill="{COLORS[c]}"/>'
            f'<text x="{lx + 12}" y="{h - 3}" font-size="10" {INK}>{escape(text)}</text>'
        )
        lx += 22 + sum(10 if ord(ch) > 0x2E80 else 5.6 for ch in text)
    return _wrap("".join(body), w, h, title, "chat-memory-chart", max_width=w)


def sweep_points(result: Any) -> list[tuple[Any, int | None, int | None]]:
    return [(p.value, p.estimate.total_per_gpu, p.estimate.activations) for p in result.points]
