"""The app in a real browser (Debian's chromium via Playwright): chat, calculators, iframes, reverse proxy, XSS.

Screenshots go to test-output/screenshots/ (gitignored); with UPDATE_DOCS_SCREENSHOTS=1 the Chinese seed
answer and the memory plots are also copied to docs/screenshots/ for the README.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import free_port, launched

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "test-output" / "screenshots"
SEED_ZH = "在3090显存受限的情况下，gradient_accumulation_steps 增大会增大显存吗？显存爆掉是因为有效批次大小吗？"
PREFIX = "/batchbot"
TIMEOUT = 90_000
#: The two viewports every browser test checks (issue #15: desktop and phone).
SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
    "accept-encoding",
    "content-encoding",
}


# ---------------------------------------------------------------- a real reverse proxy + test pages on loopback
class LoopbackSite:
    """aiohttp on 127.0.0.1: test pages with iframes, and PREFIX/* proxied (prefix stripped) to the prefixed app,
    like nginx `location /batchbot/ { proxy_pass http://127.0.0.1:PORT/; proxy_buffering off; }`."""

    def __init__(self, direct_url: str, upstream: str) -> None:
        self.direct_url, self.upstream = direct_url.rstrip("/"), upstream.rstrip("/")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _pages(self) -> dict[str, str]:
        frame = (
            '<!doctype html><meta charset="utf-8"><title>wiki page</title><h1>Internal wiki</h1>'
            '<iframe id="bot" src="{src}" style="width:1200px;height:900px;border:1px solid #ccc"></iframe>'
        )
        return {
            "/direct.html": frame.format(src=self.direct_url + "/?embed=1&lang=zh"),
            "/prefixed.html": frame.format(src=PREFIX + "/?embed=1&lang=en"),
        }

    def _run(self) -> None:
        from aiohttp import ClientSession, ClientTimeout, web

        asyncio.set_event_loop(self.loop)
        pages = self._pages()

        async def page(request: web.Request) -> web.Response:
            return web.Response(text=pages[request.path], content_type="text/html")

        async def redirect(request: web.Request) -> web.Response:
            raise web.HTTPMovedPermanently(PREFIX + "/")

        async def proxy(request: web.Request) -> web.StreamResponse:
            tail = request.match_info["tail"]
            target = f"{self.upstream}/{tail}" + (f"?{request.query_string}" if request.query_string else "")
            headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
            headers.update(
                {
                    "X-Forwarded-Host": request.host,
                    "X-Forwarded-Proto": "http",
                    "X-Forwarded-For": request.remote or "127.0.0.1",
                    "Accept-Encoding": "identity",
                }
            )
            body = await request.read()
            async with self.session.request(
                request.method, target, headers=headers, data=body or None, allow_redirects=False
            ) as up:
                resp = web.StreamResponse(
                    status=up.status, headers={k: v for k, v in up.headers.items() if k.lower() not in HOP_BY_HOP}
                )
                await resp.prepare(request)
                async for chunk in up.content.iter_any():  # unbuffered: server-sent events stream through
                    await resp.write(chunk)
                await resp.write_eof()
                return resp

        async def start() -> None:
            self.session = ClientSession(timeout=ClientTimeout(total=None, sock_read=None), auto_decompress=False)
            app = web.Application(client_max_size=50 * 2**20)
            app.router.add_get("/direct.html", page)
            app.router.add_get("/prefixed.html", page)
            app.router.add_get(PREFIX, redirect)
            app.router.add_route("*", PREFIX + "/{tail:.*}", proxy)
            self.runner = web.AppRunner(app, shutdown_timeout=2.0, access_log=None)
            await self.runner.setup()
            await web.TCPSite(self.runner, "127.0.0.1", self.port, shutdown_timeout=2.0).start()
            self.ready.set()

        self.loop.run_until_complete(start())
        self.loop.run_forever()

    def start(self) -> LoopbackSite:
        self.thread.start()
        assert self.ready.wait(20), "loopback site did not start"
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            await self.session.close()
            await self.runner.cleanup()

        with contextlib.suppress(Exception):  # an event stream still open: the daemon thread dies with the process
            asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(20)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def site(app_server, prefixed_server) -> Iterator[LoopbackSite]:
    s = LoopbackSite(app_server.url, prefixed_server.url).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing: apt-get install chromium fonts-noto-cjk (make browser-deps)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture()
def page_zh(browser):
    ctx = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 1100})
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT)
    yield page
    ctx.close()


def shot(page_or_locator: Any, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    page_or_locator.screenshot(path=str(path))
    return path


def publish(path: Path) -> None:
    """Copy a screenshot to docs/screenshots for the README, only when asked (UPDATE_DOCS_SCREENSHOTS=1)."""
    if os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1":
        docs = ROOT / "docs" / "screenshots"
        docs.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, docs / path.name)


def ui_ready(root: Any, lang: str) -> None:
    """Wait until the page shows the UI language asked for (a load event applies ``?lang=`` / Accept-Language).

    A message without Chinese is answered in the UI language at the moment it is sent, so a test that asks in
    English must not send before the English UI is there.
    """
    root.locator("#send").filter(has_text={"en": "Send", "zh": "发送"}[lang]).wait_for()


def ask(root: Any, question: str) -> None:
    root.locator("#question textarea").fill(question)
    root.locator("#send").click()


def last_bot_text(root: Any) -> str:
    return root.locator("#chatbot .message-row.bot-row").last.inner_text()


# ---------------------------------------------------------------- tests
def test_chinese_seed_question_shows_verdict_tool_call_and_sources(page_zh, app_server):
    page = page_zh
    page.goto(app_server.url + "/?lang=zh")
    ask(page, SEED_ZH)
    chat = page.locator("#chatbot")
    chat.get_by_text("调用计算器").first.wait_for()  # a collapsible tool-call message
    chat.get_by_text("来源").last.wait_for()  # sources under the answer
    expect_text = chat.inner_text()
    assert "不会" in expect_text
    chat.get_by_text("参考来源", exact=True).last.click()  # sources are folded under the verdict
    chat.locator("a[href^='https://']").nth(2).wait_for()
    assert page.locator("#send").inner_text().strip() == "发送"  # Chinese UI labels
    # Scroll the conversation to the verdict for the README picture.
    time.sleep(1.5)  # let the stream finish and autoscroll settle
    page.evaluate("() => { const w = document.querySelector('#chatbot .bubble-wrap'); if (w) w.scrollTop = 0; }")
    time.sleep(0.5)
    path = shot(page, "chat_zh.png")
    publish(path)


def test_feedback_like_with_reason_is_stored(page_zh, app_server):
    page = page_zh
    page.goto(app_server.url + "/?lang=zh")
    ui_ready(page, "zh")
    ask(page, "Does increasing gradient_accumulation_steps use more GPU memory?")
    page.locator("#chatbot").get_by_text("参考来源").last.wait_for()  # no Chinese in it: answered in the UI's Chinese
    before = (
        app_server.feedback_file.read_text(encoding="utf-8").splitlines() if app_server.feedback_file.exists() else []
    )
    page.locator("#chatbot button[aria-label='踩'], #chatbot button[aria-label='Dislike']").last.click()
    page.locator("#chat-status").get_by_text("已记录").wait_for()
    page.locator("#feedback-reason textarea").fill("想看 ZeRO-3 的数字")
    page.locator("#feedback-submit").click()
    page.locator("#chat-status").get_by_text("已记录反馈原因").wait_for()
    lines = app_server.feedback_file.read_text(encoding="utf-8").splitlines()
    assert lines[: len(before)] == before  # append only
    new = [json.loads(x) for x in lines[len(before) :]]
    assert new[0]["liked"] is False and "gradient_accumulation_steps" in new[0]["question"]
    assert new[1]["type"] == "reason" and new[1]["feedback_id"] == new[0]["id"]


def test_calculators_tab_plots_and_field_errors(page_zh, app_server):
    page = page_zh
    page.goto(app_server.url + "/?lang=en")
    page.get_by_role("tab", name="Calculators").click()
    page.locator("#memory-breakdown .plot-wide svg").wait_for()  # computed on open, no button
    page.locator("#memory-vs-ga .plot-wide svg path.line-total").wait_for(state="attached")  # a flat line: zero height
    assert page.locator("#memory-breakdown .plot-wide svg line.capacity").count() == 1
    assert page.locator("#memory-vs-micro .plot-wide svg path.line-total").count() == 1
    page.locator("#memory-breakdown").scroll_into_view_if_needed()
    shot(page, "calculators_en.png")
    plots = shot(page.locator("#memory-sweeps"), "memory_sweeps_en.png")
    publish(plots)
    # A bad value: the message names the field, next to the form; no traceback.
    page.locator("#m_micro input").fill("-2")  # recalculated on change
    err = page.locator("#memory-error")
    err.get_by_text("train_micro_batch_size_per_gpu").wait_for()
    # ... and next to the field itself: its message under the label, a red border.
    field = page.locator("#m_micro")
    field.get_by_text("Accepted: a whole number from 1 to 65536").wait_for()
    assert "field-invalid" in (field.get_attribute("class") or "")
    assert "field-invalid" not in (page.locator("#m_ga").get_attribute("class") or "")
    assert "Traceback" not in page.content()
    shot(page, "calculators_error_en.png")
    page.locator("#m_micro input").fill("2")  # fixed: the mark goes away
    page.locator("#memory-breakdown .plot-wide svg").wait_for()
    page.wait_for_function("() => !document.querySelector('#m_micro').className.includes('field-invalid')")
    page.locator("#batch-result").get_by_text("train_batch_size = 2 × 8 × 1 = 16").first.wait_for()


def test_language_toggle_relabels_the_ui(page_zh, app_server):
    page = page_zh
    page.goto(app_server.url + "/")  # zh-CN browser → Chinese
    page.get_by_role("tab", name="计算器").wait_for()
    page.locator("#lang-toggle").get_by_text("English").click()
    page.get_by_role("tab", name="Calculators").wait_for()
    page.get_by_role("tab", name="Knowledge").click()
    page.locator("#kb-query textarea, #kb-query input").first.fill("gradient accumulation memory")
    page.locator("#kb-search").click()
    page.locator("#kb-count").get_by_text("Top 5 results").wait_for()
    assert page.locator("#kb-card a[href^='https://']").count() >= 1
    shot(page, "knowledge_en.png")


def test_html_in_a_question_never_executes(page_zh, app_server):
    page = page_zh
    page.goto(app_server.url + "/?lang=en")
    ui_ready(page, "en")
    payload = (
        '<img src=x onerror="window.__xss=1"> <script>window.__xss=2</script> '
        '<svg onload="window.__xss=3"></svg> does gradient_accumulation_steps raise memory?'
    )
    ask(page, payload)
    page.locator("#chatbot").get_by_text("Sources").last.wait_for()
    time.sleep(1.0)
    assert page.evaluate("window.__xss") is None
    assert page.locator("#chatbot img[onerror], #chatbot script, #chatbot svg[onload]").count() == 0


def test_embedded_in_an_iframe_on_another_loopback_origin(browser, site, app_server):
    ctx = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT)
    page.goto(site.url + "/direct.html")
    frame = page.frame_locator("#bot")
    ui_ready(frame, "zh")
    ask(frame, SEED_ZH)
    frame.locator("#chatbot").get_by_text("调用计算器").first.wait_for()
    frame.locator("#chatbot").get_by_text("来源").last.wait_for()
    assert not frame.locator(".batchbot-header").is_visible()  # embed mode: no header
    assert frame.locator("footer").count() == 0 or not frame.locator("footer").first.is_visible()
    shot(page, "iframe_direct_zh.png")
    ctx.close()


def test_under_a_path_prefix_behind_a_reverse_proxy(browser, site, prefixed_server):
    ctx = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT)
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    page.goto(site.url + "/prefixed.html")
    frame = page.frame_locator("#bot")
    ui_ready(frame, "en")
    ask(frame, "Does increasing gradient_accumulation_steps use more GPU memory?")
    frame.locator("#chatbot").get_by_text("Calculator:").first.wait_for()
    frame.locator("#chatbot").get_by_text("Sources").last.wait_for()
    frame.get_by_role("tab", name="Calculators").click()
    frame.locator("#m_ga input").fill("4")  # a recalculation through the proxy
    frame.locator("#memory-vs-ga .plot-wide .current-label").filter(has_text="4 →").wait_for(state="attached")
    shot(page, "iframe_prefixed_en.png")
    app_requests = [u for u in seen if u.startswith(site.url) and not u.endswith("/prefixed.html")]
    assert app_requests and all(u.startswith(site.url + PREFIX + "/") for u in app_requests), [
        u for u in app_requests if not u.startswith(site.url + PREFIX + "/")
    ][:5]
    assert not [u for u in seen if f":{prefixed_server.port}" in u], "the browser must only talk to the proxy"
    ctx.close()


# A card carrying HTML/JS in every text field: the cards are Markdown written by wiki editors, so a
# careless or hostile edit must not run script in a reader's browser (knowledge tab or chat answer).
POISONED_CARD = """---
id: zz-html-injection-probe
topics: [grad_accum_memory]
title_zh: "探针 quuxprobe <img src=x onerror=\\"window.__xss=4\\">"
title_en: "Probe quuxprobe <img src=x onerror=\\"window.__xss=4\\">"
questions_zh: ["quuxprobe 梯度累积显存？", "quuxprobe 显存问题", "quuxprobe 是什么"]
questions_en: ["quuxprobe gradient accumulation memory?", "quuxprobe memory question", "what is quuxprobe"]
misconceptions: []
calculators: []
sources:
  - {title: "autograd <script>window.__xss=5</script>", url: "https://pytorch.org/docs/stable/notes/autograd.html"}
---
## 中文

**quuxprobe 直接回答 <script>window.__xss=6</script>。**

<img src=x onerror="window.__xss=7"> 正文 <svg onload="window.__xss=8"></svg>

## English

**quuxprobe direct answer <script>window.__xss=9</script>.**

<img src=x onerror="window.__xss=10"> body <a href="javascript:window.__xss=11">link</a>
"""


@pytest.fixture(scope="module")
def poisoned_server(tmp_path_factory) -> Iterator[Any]:
    from app import build_app
    from rag import Assistant
    from rag.cache import default_cache_dir
    from rag.cards import load_cards, parse_card

    cache = tmp_path_factory.mktemp("poisoned-cache")
    if default_cache_dir().is_dir():  # start from the warm cache: only the probe card is embedded
        shutil.copytree(default_cache_dir(), cache, dirs_exist_ok=True)
    cards = load_cards() + [parse_card(POISONED_CARD, "zz-html-injection-probe.md")]
    with launched(build_app(Assistant(cards=cards, cache_dir=str(cache)), stream_delay=0.0)) as url:
        yield url


def test_html_in_a_card_never_executes(page_zh, poisoned_server):
    page = page_zh
    page.goto(poisoned_server + "/?lang=en")
    page.get_by_role("tab", name="Knowledge").click()
    page.locator("#kb-query textarea, #kb-query input").first.fill("quuxprobe")
    page.locator("#kb-search").click()
    page.locator("#kb-card").get_by_text("quuxprobe direct answer").first.wait_for()  # the card is shown
    page.get_by_role("tab", name="Chat").click()
    ask(page, "quuxprobe: does gradient accumulation raise memory?")
    page.locator("#chatbot").get_by_text("Sources").last.wait_for()
    for title in ("Explanation", "Sources"):  # folded under the verdict
        page.locator("#chatbot").get_by_text(title, exact=True).last.click()
    page.locator("#chatbot").get_by_text("quuxprobe direct answer").last.wait_for()  # the card is in the answer
    time.sleep(1.0)
    assert page.evaluate("window.__xss") is None
    assert page.locator("script:has-text('__xss'), img[onerror], svg[onload], a[href^='javascript:']").count() == 0
    shot(page, "poisoned_card_en.png")
