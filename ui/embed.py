"""Snippets for embedding the app in a wiki page (iframe, or Gradio's <gradio-app> web component).

The web component needs Gradio's JavaScript. Public pages load it from Gradio's CDN; an
offline intranet cannot, so the snippet points at the bundle this very server already serves
under ``/assets/`` (the file that ``gradio/templates/frontend/gradio.js`` imports). Its name
carries a content hash, so it changes with the Gradio version: regenerate the snippet with
``python app.py --print-embed-snippet URL`` after upgrading Gradio.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import gradio


def web_component_asset() -> str:
    """'assets/index-XXXX.js': the module that defines <gradio-app>, relative to the app's root URL."""
    loader = Path(gradio.__file__).parent / "templates" / "frontend" / "gradio.js"
    m = re.search(r"""import\(\s*["']\./(assets/[^"']+\.js)["']\s*\)""", loader.read_text(encoding="utf-8"))
    if not m:
        raise RuntimeError(f"cannot find the web-component bundle in {loader}")
    return m.group(1)


def embed_snippets(public_url: str, height: int = 900) -> str:
    base = public_url.rstrip("/")
    src = escape(base + "/?embed=1", quote=True)
    js = escape(f"{base}/{web_component_asset()}", quote=True)
    return (
        "<!-- 1. iframe (simplest; works everywhere) -->\n"
        f'<iframe src="{src}" title="Batch &amp; memory assistant" width="100%" height="{height}" '
        'style="border:0" loading="lazy"></iframe>\n\n'
        "<!-- 2. web component: the script is served by the app itself (no CDN needed) -->\n"
        f'<script type="module" crossorigin src="{js}"></script>\n'
        f'<gradio-app src="{escape(base, quote=True)}" container="false" info="false"></gradio-app>\n'
    )
