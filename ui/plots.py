"""Plots as self-contained inline SVG (no plotting dependency, works offline, escapes all text).

* :func:`breakdown_svg` — one stacked bar of the memory categories against the GPU capacity line.
* :func:`sweep_svg` — total per-GPU memory (and activations) as one knob moves, with the capacity line.
  The gradient-accumulation sweep is a flat line: the picture that ends the argument.
"""
from __future__ import annotations

from html import escape
from typing import Any, Sequence

from calculators import GiB
from calculators.units import format_gib, format_gib_value

CATEGORIES = ("weights", "gradients", "optimizer_states", "activations", "other")
COLORS = {"weights": "#4e79a7", "gradients": "#f28e2b", "optimizer_states": "#59a14f",
          "activations": "#e15759", "other": "#9c9c9c", "total": "#1f4e79", "capacity": "#d62728"}
NAMES = {
    "weights": {"zh": "权重", "en": "weights"},
    "gradients": {"zh": "梯度", "en": "gradients"},
    "optimizer_states": {"zh": "优化器状态", "en": "optimizer states"},
    "activations": {"zh": "激活", "en": "activations"},
    "other": {"zh": "其他", "en": "other"},
    "total": {"zh": "每卡合计", "en": "total per GPU"},
    "capacity": {"zh": "显卡容量", "en": "GPU capacity"},
    "unknown_act": {"zh": "激活未知（仅给了参数量）", "en": "activations unknown (only num_params given)"},
}
FONT = "font-family=\"'Noto Sans CJK SC','Noto Sans',sans-serif\""


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    import math
    exp = 10 ** math.floor(math.log10(v))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * exp >= v:
            return m * exp
    return 10 * exp


def _ticks(top: float, n: int = 5) -> list[float]:
    return [top * i / n for i in range(n + 1)]


def _fmt(v: float) -> str:
    return f"{v:.0f}" if v >= 10 or v == 0 else f"{v:.1f}"


def _wrap(svg_body: str, w: int, h: int, title: str, test_id: str) -> str:
    return (f'<div class="batchbot-plot" data-testid="{escape(test_id)}">'
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="100%" '
            f'style="max-width:{w}px;height:auto" role="img" aria-label="{escape(title)}" {FONT}>'
            f'<title>{escape(title)}</title><rect width="{w}" height="{h}" fill="white"/>'
            f'{svg_body}</svg></div>')


def breakdown_svg(est: Any, lang: str) -> str:
    """Stacked bar (GiB) of one MemoryEstimate, with a dashed GPU-capacity line."""
    d = est.model_dump() if hasattr(est, "model_dump") else dict(est)
    values = {c: (d.get(c) or 0) / GiB for c in CATEGORIES}
    total = sum(values.values())
    cap = d.get("gpu_capacity")
    cap_g = cap / GiB if cap else None
    top = _nice_max(max(total, cap_g or 0) * 1.08)
    w, h, left, right, tp, bottom = 620, 360, 60, 250, 40, 40
    ph = h - tp - bottom
    y = lambda v: tp + ph - v / top * ph  # noqa: E731
    title = ("每卡显存构成" if lang == "zh" else "Per-GPU memory breakdown") + f" · {d.get('model_name', '')}"
    body = [f'<text x="{w / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{escape(title)}</text>']
    for tv in _ticks(top):
        body.append(f'<line x1="{left}" x2="{w - right}" y1="{y(tv):.1f}" y2="{y(tv):.1f}" stroke="#e5e5e5"/>'
                    f'<text x="{left - 6}" y="{y(tv) + 4:.1f}" text-anchor="end" font-size="11">{_fmt(tv)}</text>')
    body.append(f'<text x="14" y="{tp + ph / 2}" font-size="11" transform="rotate(-90 14 {tp + ph / 2})" '
                f'text-anchor="middle">GiB</text>')
    bx, bw = left + 50, 140
    acc = 0.0
    for c in CATEGORIES:
        v = values[c]
        if v <= 0:
            continue
        y0, y1 = y(acc + v), y(acc)
        body.append(f'<rect class="seg-{c}" x="{bx}" y="{y0:.1f}" width="{bw}" height="{max(y1 - y0, 0.5):.1f}" '
                    f'fill="{COLORS[c]}"><title>{escape(NAMES[c][lang])}: {format_gib_value(v)}</title></rect>')
        if y1 - y0 > 13:
            body.append(f'<text x="{bx + bw / 2}" y="{(y0 + y1) / 2 + 4:.1f}" text-anchor="middle" font-size="11" '
                        f'fill="white">{v:.1f}</text>')
        acc += v
    body.append(f'<text x="{bx + bw / 2}" y="{y(total) - 6:.1f}" text-anchor="middle" font-size="12" '
                f'font-weight="bold">{format_gib_value(total)}</text>')
    if cap_g:
        body.append(f'<line class="capacity" x1="{left}" x2="{w - right}" y1="{y(cap_g):.1f}" y2="{y(cap_g):.1f}" '
                    f'stroke="{COLORS["capacity"]}" stroke-width="2" stroke-dasharray="6 4"/>'
                    f'<text x="{w - right - 4}" y="{y(cap_g) - 5:.1f}" text-anchor="end" font-size="11" '
                    f'fill="{COLORS["capacity"]}">{escape(NAMES["capacity"][lang])} {cap_g:.0f} GiB</text>')
    body.append(f'<line x1="{left}" x2="{w - right}" y1="{tp + ph}" y2="{tp + ph}" stroke="#333"/>')
    lx, ly = w - right + 20, tp + 10
    for i, c in enumerate(CATEGORIES):
        label = NAMES[c][lang] + (f" {values[c]:.2f}" if d.get(c) is not None else f" ({NAMES['unknown_act'][lang]})")
        body.append(f'<rect x="{lx}" y="{ly + i * 22}" width="12" height="12" fill="{COLORS[c]}"/>'
                    f'<text x="{lx + 18}" y="{ly + i * 22 + 11}" font-size="12">{escape(label)}</text>')
    if d.get("fits") is not None:
        verdict = (("✔ 放得下" if d["fits"] else "✘ 放不下") if lang == "zh" else ("✔ fits" if d["fits"] else "✘ does not fit"))
        body.append(f'<text x="{lx}" y="{ly + 6 * 22}" font-size="13" font-weight="bold" '
                    f'fill="{"#2e7d32" if d["fits"] else COLORS["capacity"]}">{escape(verdict)}</text>')
    return _wrap("".join(body), w, h, title, "breakdown-plot")


def sweep_svg(field: str, points: Sequence[tuple[Any, float | None, float | None]], capacity: int | None,
              lang: str, title: str) -> str:
    """Line plot of (value, total_bytes, activation_bytes) points, evenly spaced on x, with the capacity line."""
    pts = [(v, tot, act) for v, tot, act in points if tot is not None]
    w, h, left, right, tp, bottom = 620, 320, 60, 20, 40, 70
    pw, ph = w - left - right, h - tp - bottom
    body = [f'<text x="{w / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{escape(title)}</text>']
    if not pts:
        msg = NAMES["unknown_act"][lang]
        body.append(f'<text x="{w / 2}" y="{h / 2}" text-anchor="middle" font-size="13">{escape(msg)}</text>')
        return _wrap("".join(body), w, h, title, f"sweep-{field}")
    cap_g = capacity / GiB if capacity else None
    top = _nice_max(max([p[1] / GiB for p in pts] + [cap_g or 0]) * 1.08)
    n = len(pts)
    x = lambda i: left + (pw * (i / (n - 1)) if n > 1 else pw / 2)  # noqa: E731
    y = lambda v: tp + ph - v / top * ph  # noqa: E731
    for tv in _ticks(top):
        body.append(f'<line x1="{left}" x2="{w - right}" y1="{y(tv):.1f}" y2="{y(tv):.1f}" stroke="#e5e5e5"/>'
                    f'<text x="{left - 6}" y="{y(tv) + 4:.1f}" text-anchor="end" font-size="11">{_fmt(tv)}</text>')
    body.append(f'<line x1="{left}" x2="{w - right}" y1="{tp + ph}" y2="{tp + ph}" stroke="#333"/>')
    body.append(f'<text x="14" y="{tp + ph / 2}" font-size="11" transform="rotate(-90 14 {tp + ph / 2})" '
                f'text-anchor="middle">GiB</text>')
    body.append(f'<text x="{left + pw / 2}" y="{h - 30}" text-anchor="middle" font-size="12">{escape(field)}</text>')
    for i, (v, _, _) in enumerate(pts):
        body.append(f'<text x="{x(i):.1f}" y="{tp + ph + 16}" text-anchor="middle" font-size="11">{escape(str(v))}</text>')
    for key, idx in (("total", 1), ("activations", 2)):
        coords = [(x(i), y(p[idx] / GiB)) for i, p in enumerate(pts) if p[idx] is not None]
        if not coords:
            continue
        path = " ".join(f"{'M' if j == 0 else 'L'}{cx:.1f},{cy:.1f}" for j, (cx, cy) in enumerate(coords))
        body.append(f'<path class="line-{key}" d="{path}" fill="none" stroke="{COLORS[key]}" stroke-width="2.5"/>')
        for (cx, cy), p in zip(coords, [p for p in pts if p[idx] is not None]):
            body.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="3.5" fill="{COLORS[key]}">'
                        f'<title>{escape(field)}={escape(str(p[0]))}: {format_gib(p[idx])}</title></circle>')
    if cap_g:
        body.append(f'<line class="capacity" x1="{left}" x2="{w - right}" y1="{y(cap_g):.1f}" y2="{y(cap_g):.1f}" '
                    f'stroke="{COLORS["capacity"]}" stroke-width="2" stroke-dasharray="6 4"/>')
    lx, ly = left, h - 12
    legend = [("total", NAMES["total"][lang]), ("activations", NAMES["activations"][lang])]
    if cap_g:
        legend.append(("capacity", f"{NAMES['capacity'][lang]} {cap_g:.0f} GiB"))
    for i, (k, text) in enumerate(legend):
        body.append(f'<rect x="{lx + i * 180}" y="{ly - 9}" width="14" height="4" fill="{COLORS[k]}"/>'
                    f'<text x="{lx + i * 180 + 20}" y="{ly}" font-size="11">{escape(text)}</text>')
    return _wrap("".join(body), w, h, title, f"sweep-{field}")


def sweep_points(result: Any) -> list[tuple[Any, int | None, int | None]]:
    return [(p.value, p.estimate.total_per_gpu, p.estimate.activations) for p in result.points]
