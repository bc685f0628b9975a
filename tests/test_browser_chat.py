"""The chat as people expect it, in Debian's chromium at desktop (1440×900) and phone (390×844) sizes (issue 15).

Enter sends and Shift+Enter adds a line; the question and its verdict stay in view when the answer ends, the
rest is folded; the phone keeps the input pinned at the bottom; examples and labels follow the UI language
(also inside ``?embed=1``); fonts are local and complete; a welcome with examples; history across a reload;
Send disabled and Stop while answering; the tab in the URL; 👍/👎 reasons beside the message; and the
``<gradio-app>`` web component with the JavaScript the app serves itself (docs/embed.md).

Screenshots go to test-output/screenshots/; with UPDATE_DOCS_SCREENSHOTS=1 the desktop and phone chat
pictures are copied to docs/screenshots/ for the README.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from conftest import free_port, launched
from test_browser import CHROMIUM, SIZES, TIMEOUT, browser, publish, shot, ui_ready  # noqa: F401  (fixture)

pytestmark = pytest.mark.browser

FIT_EN = "How much GPU memory does a full fine-tune of Llama-2-7B with AdamW need on one A100-80GB?"
GA_EN = "Does increasing gradient_accumulation_steps use more GPU memory?"
GA_ZH = "在3090显存受限的情况下，gradient_accumulation_steps 增大会增大显存吗？显存爆掉是因为有效批次大小吗？"
CJK = "[\u4e00-\u9fff]"


def new_page(browser: Any, size: str, locale: str = "en-US") -> tuple[Any, Any]:
    ctx = browser.new_context(locale=locale, viewport=SIZES[size])
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT)
    return ctx, page


def wait_answer_done(page: Any, n_user: int) -> None:
    """The n-th question got its answer and Send is enabled again."""
    page.wait_for_function(
        "n => document.querySelectorAll('#chatbot [data-testid=\"user\"]').length >= n"
        " && !document.querySelector('#send').disabled"
        " && !document.querySelector('#chatbot .pending, #chatbot [data-testid=\"pending\"]')",
        arg=n_user,
    )
    time.sleep(0.6)  # the save to browser storage and the scroll run right after


def in_view(page: Any, selector_or_locator: Any) -> bool:
    loc = page.locator(selector_or_locator) if isinstance(selector_or_locator, str) else selector_or_locator
    box = loc.bounding_box()
    vp = page.viewport_size
    return (
        bool(box)
        and box["y"] >= 0
        and box["y"] + box["height"] <= vp["height"] + 1
        and box["x"] >= 0
        and box["x"] + box["width"] <= vp["width"] + 1
    )


def overlapping(a: Any, b: Any) -> bool:
    """Whether two elements' boxes intersect (by more than a pixel)."""
    x, y = a.bounding_box(), b.bounding_box()
    if not x or not y:
        return False
    return (
        x["x"] + 1 < y["x"] + y["width"]
        and y["x"] + 1 < x["x"] + x["width"]
        and x["y"] + 1 < y["y"] + y["height"]
        and y["y"] + 1 < x["y"] + x["height"]
    )


# ---------------------------------------------------------------- 1, 2, 5, 9, 11 (welcome, history)
@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_enter_sends_verdict_stays_in_view_rest_folded(browser, app_server, size):
    ctx, page = new_page(browser, size)
    page.goto(app_server.url + "/?lang=en")
    chat = page.locator("#chatbot")
    # 11: an empty chat greets and offers examples in the UI language, shown whole (not cut off).
    chat.get_by_text("Hello!").wait_for()
    examples = chat.locator(".example-text")
    assert examples.count() == 3
    for i in range(3):
        assert examples.nth(i).evaluate(
            "e => e.scrollHeight <= e.clientHeight + 1 && e.scrollWidth <= e.clientWidth + 1"
        )
    assert not any(__import__("re").search(CJK, examples.nth(i).inner_text()) for i in range(3))
    # 5: on a phone the input is on the first screen, at the bottom, full width; nothing scrolls sideways.
    box = page.locator("#question textarea")
    assert in_view(page, "#question textarea") and in_view(page, "#send")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= SIZES[size]["width"]
    assert in_view(page, "#chat-hint")
    if size == "phone":
        q, s = box.bounding_box(), page.locator("#send").bounding_box()
        assert q["y"] + q["height"] > 0.8 * SIZES[size]["height"]  # at the bottom
        assert (s["x"] + s["width"]) - q["x"] > 0.85 * SIZES[size]["width"]  # full width
        assert chat.bounding_box()["height"] > 0.5 * SIZES[size]["height"]  # the chat uses the viewport
        assert in_view(page, "#lang-toggle")
    # 1: Shift+Enter adds a line, Enter sends; the hint says so.
    assert "Shift+Enter" in page.locator("#chat-hint").inner_text()
    box.click()
    box.type("My setup:")
    page.keyboard.press("Shift+Enter")
    box.type(FIT_EN)
    assert box.input_value() == "My setup:\n" + FIT_EN
    assert page.locator('#chatbot [data-testid="user"]').count() == 0  # not sent yet
    page.keyboard.press("Enter")
    wait_answer_done(page, 1)
    assert box.input_value() == ""
    user = page.locator("#chatbot .message-row.user-row").last
    assert "My setup:" in user.inner_text() and "A100-80GB" in user.inner_text()
    # 2: when the answer ends the question is at the top of the panel and the verdict under it is in view.
    wrap = chat.locator(".bubble-wrap")
    top_gap = user.bounding_box()["y"] - wrap.bounding_box()["y"]
    assert -2 <= top_gap <= 40, top_gap
    verdict = chat.get_by_text("does not fit").first
    assert in_view(page, verdict), "the verdict must be on screen when the answer ends"
    # ... and nothing of Gradio's sits on it: the panel's icons (top right), the scroll-to-end arrow.
    assert not overlapping(chat.locator(".icon-button-wrapper.top-panel").first, user.locator('[data-testid="user"]'))
    arrow = chat.locator(".scroll-down-button-container button")
    if arrow.count() and arrow.first.is_visible():
        bots = chat.locator('[data-testid="bot"]')
        assert not any(overlapping(arrow.first, bots.nth(i)) for i in range(bots.count()))
    # ... explanation and sources folded: titled, their links hidden until opened.
    titles = chat.locator("button.title, .title").all_inner_texts()
    joined = " | ".join(titles)
    assert "Sources" in joined and "Explanation" in joined, joined
    assert any("→" in t and "GiB" in t for t in titles), joined  # calculator titles say the result
    path = shot(page, f"chat_{size}_en.png")  # the resting state, for the README
    publish(path)
    links = chat.locator("a[href^='https://']")
    assert not any(links.nth(i).is_visible() for i in range(links.count()))
    chat.get_by_text("Sources", exact=True).last.click()
    chat.locator("a[href^='https://']").first.wait_for(state="visible")
    # 9: fonts: every face from the installed system fonts, no bundled (incomplete) web font loaded.
    bold = chat.locator("strong").first
    assert bold.evaluate("e => getComputedStyle(e).fontFamily").startswith('"Noto Sans"')
    assert page.evaluate("() => { const f = []; document.fonts.forEach(x => f.push(x.family)); return f; }") == []
    assert not page.evaluate(
        "performance.getEntriesByType('resource').map(r => r.name).filter(n => /\\.(woff2?|ttf|otf)(\\?|$)/.test(n))"
    )
    # 11: the conversation survives a reload (browser storage).
    page.reload()
    page.locator("#chatbot .message-row.user-row").first.wait_for()
    assert "A100-80GB" in page.locator("#chatbot").inner_text()
    ctx.close()


# ---------------------------------------------------------------- 6 (language), 11 (examples ask)
def examples_whole(page: Any) -> None:
    """Every example card shows its whole question: nothing clipped, nothing off screen sideways."""
    # One read of every card in the page (not count() then nth(i)): a language switch re-renders the cards, and
    # a card looked up by index after that waited for an element that no longer existed.
    page.locator("#chatbot .example-text").first.wait_for()
    cards = page.locator("#chatbot .example-text").evaluate_all(
        """els => els.map(e => { const r = e.getBoundingClientRect();
            return {clipped: e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1,
                    x: r.x, right: r.x + r.width}; })"""
    )
    assert cards, "no example cards"
    width = page.viewport_size["width"]
    for card in cards:
        assert not card["clipped"] and card["x"] >= 0 and card["right"] <= width + 1, card


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_examples_and_labels_follow_the_ui_language_also_embedded(browser, app_server, size):
    ctx, page = new_page(browser, size, locale="zh-CN")
    page.goto(app_server.url + "/")
    examples = page.locator("#chatbot .example-text")
    examples.first.wait_for()
    assert all(__import__("re").search(CJK, x) for x in examples.all_inner_texts())
    examples_whole(page)
    assert "Enter 发送" in page.locator("#chat-hint").inner_text()
    page.locator("#lang-toggle").get_by_text("English").click()
    page.locator("#chat-hint").get_by_text("Enter to send").wait_for()
    page.locator("#chatbot").get_by_text("Does increasing gradient_accumulation_steps").wait_for()
    assert not any(__import__("re").search(CJK, x) for x in examples.all_inner_texts())
    examples_whole(page)
    # An example asks itself.
    page.locator("#chatbot .example-text").first.click()
    wait_answer_done(page, 1)
    assert "gradient_accumulation_steps" in page.locator("#chatbot .message-row.user-row").last.inner_text()
    # ?embed=1: no header, but the small language switch stays (docs/embed.md). A fresh browser context: this one
    # keeps the conversation above (browser storage), and a conversation hides the example cards.
    ctx.close()
    ctx, page = new_page(browser, size, locale="zh-CN")
    page.goto(app_server.url + "/?embed=1&lang=zh")
    small = page.locator("#lang-toggle-embed")
    small.wait_for()
    assert small.is_visible() and not page.locator(".batchbot-header").is_visible()
    page.get_by_role("tab", name="对话").wait_for()
    assert in_view(page, small) and in_view(page, "#question textarea")
    examples_whole(page)
    shot(page, f"embed_{size}_zh.png")
    small.get_by_text("English").click()
    page.get_by_role("tab", name="Chat").wait_for()
    page.locator("#chat-hint").get_by_text("Enter to send").wait_for()
    page.locator("#chatbot").get_by_text("Does increasing gradient_accumulation_steps").wait_for()
    # Without ?embed=1 the small switch is not shown (the header has the full one).
    page.goto(app_server.url + "/?lang=zh")
    page.locator("#lang-toggle").wait_for()
    assert not page.locator("#lang-toggle-embed").is_visible()
    ctx.close()


# ---------------------------------------------------------------- 6 (answer language, GiB), 8 (a pasted config as code)
DS_JSON = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8,\n  "zero_optimization": {"stage": 2}\n}'
OUR_GB = __import__("re").compile(r"(?<![\w.-])\d+(?:\.\d+)?\s?GB\b")  # "12.3 GB"; not a GPU's name ("A100-80GB")


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_json_pasted_in_the_chinese_ui_gets_a_chinese_answer_with_gib(browser, app_server, size):
    ctx, page = new_page(browser, size, locale="zh-CN")
    page.goto(app_server.url + "/?lang=zh")
    ui_ready(page, "zh")
    page.locator("#chatbot .example-text").first.wait_for()
    page.locator("#question textarea").fill(DS_JSON)  # no Chinese in the message
    page.locator("#send").click()
    wait_answer_done(page, 1)
    user = page.locator("#chatbot .message-row.user-row").last
    assert user.locator("pre code, pre").count() >= 1  # shown as code, lines kept
    assert '"gradient_accumulation_steps": 8' in user.locator("pre").first.inner_text()
    bot = page.locator("#chatbot .message-row.bot-row")
    first = bot.first.inner_text()
    assert len(__import__("re").findall(CJK, first)) >= 10, first[:300]  # answered in Chinese
    # The same message in the English UI is answered in English; Chinese text always in Chinese.
    page.locator("#lang-toggle").get_by_text("English").click()
    page.locator("#chat-hint").get_by_text("Enter to send").wait_for()
    page.locator("#question textarea").fill(FIT_EN)
    page.locator("#send").click()
    wait_answer_done(page, 2)
    answer = page.locator("#chatbot .message-row.bot-row").filter(has_text="does not fit").last
    answer.wait_for()
    assert "GiB" in answer.inner_text() and not OUR_GB.search(answer.inner_text())
    n = page.locator("#chatbot .message-row.bot-row").count()
    page.locator("#question textarea").fill(GA_ZH)
    page.locator("#send").click()
    wait_answer_done(page, 3)
    verdict = page.locator("#chatbot .message-row.bot-row").nth(n).inner_text()
    assert __import__("re").search(CJK + "{6}", verdict), verdict[:300]
    # GiB for our own figures everywhere: the chat's answers and titles, the calculators.
    bots = " ".join(page.locator("#chatbot .message-row.bot-row").all_inner_texts())
    titles = " ".join(page.locator("#chatbot .title, #chatbot button.title").all_inner_texts())
    assert not OUR_GB.search(bots) and not OUR_GB.search(titles), OUR_GB.findall(bots + titles)[:5]
    page.get_by_role("tab", name="Calculators").click()
    page.locator("#memory-summary").get_by_text("total per GPU").first.wait_for()
    calc = page.locator("#tab-calculators").inner_text() + " ".join(
        page.locator("#tab-calculators svg text").all_text_contents()
    )
    assert "GiB" in calc and not OUR_GB.search(calc), OUR_GB.findall(calc)[:5]
    ctx.close()


# ---------------------------------------------------------------- 11 (Stop, Send disabled)
class SlowAssistant:
    """The real assistant, a few seconds slower: time to see Send disabled and to press Stop."""

    def __init__(self, real: Any, delay: float) -> None:
        self.real, self.delay = real, delay

    def ask(self, *args: Any, **kwargs: Any) -> Any:
        time.sleep(self.delay)
        return self.real.ask(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


#: Long enough for a loaded 2-core machine to check Send and press Stop before the answer would land.
SLOW_S = 8.0


@pytest.fixture(scope="module")
def slow_server(assistant) -> Iterator[str]:
    from app import build_app

    with launched(build_app(SlowAssistant(assistant, SLOW_S), stream_delay=0.0)) as url:
        yield url


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_send_disabled_and_stop_while_answering(browser, slow_server, size):
    ctx, page = new_page(browser, size)
    page.goto(slow_server + "/?lang=en")
    ui_ready(page, "en")
    stop = page.locator("#stop")
    assert not stop.is_visible()
    page.locator("#question textarea").fill(GA_EN)
    page.locator("#send").click()
    stop.wait_for(state="visible")
    assert page.locator("#send").is_disabled()
    assert in_view(page, stop)
    page.locator("#question textarea").fill("typed while waiting")
    page.locator("#question textarea").press("Enter")  # ignored while answering
    stop.click()
    page.locator("#chat-status").get_by_text("Stopped").wait_for()
    assert in_view(page, "#chat-status")  # not under the pinned input on a phone
    page.wait_for_function("() => !document.querySelector('#send').disabled")
    assert not stop.is_visible()
    assert page.locator('#chatbot [data-testid="user"]').count() == 1
    assert page.locator("#question textarea").input_value() == "typed while waiting"  # what was typed is kept
    assert "Error" not in page.locator("#chat-status").inner_text()
    assert "Searching the knowledge cards" not in page.locator("#chatbot").inner_text()  # no stuck spinner
    time.sleep(SLOW_S + 0.5)  # the cancelled answer never lands
    assert "Sources" not in page.locator("#chatbot").inner_text()
    # The next question runs normally.
    page.locator("#question textarea").fill(GA_EN)
    page.locator("#question textarea").press("Enter")
    page.locator("#chatbot").get_by_text("Sources").last.wait_for()
    wait_answer_done(page, 2)
    ctx.close()


# ---------------------------------------------------------------- 11 (feedback beside the message, link)
@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_feedback_reasons_beside_the_message_are_stored(browser, app_server, size):
    ctx, page = new_page(browser, size)
    page.goto(app_server.url + "/?lang=en")
    ui_ready(page, "en")
    page.locator("#question textarea").fill(GA_EN)
    page.locator("#question textarea").press("Enter")
    wait_answer_done(page, 1)
    fb = app_server.feedback_file
    before = fb.read_text(encoding="utf-8").splitlines() if fb.exists() else []
    answer_row = page.locator("#chatbot .message-row.bot-row").last
    page.locator("#chatbot button[aria-label='Feedback']").last.click()
    option = page.locator("#chatbot .extra-feedback-option").get_by_text("Wrong number")
    option.wait_for()
    ob, ab = option.bounding_box(), answer_row.bounding_box()
    assert ab["y"] - 60 <= ob["y"] <= ab["y"] + ab["height"] + 80  # beside its message
    wrap = page.locator("#chatbot .bubble-wrap").bounding_box()  # none cut off by the panel's edge
    options = page.locator("#chatbot .extra-feedback-option:visible")
    assert options.count() == 3
    for i in range(3):
        b = options.nth(i).bounding_box()
        assert wrap["y"] <= b["y"] and b["y"] + b["height"] <= wrap["y"] + wrap["height"], (b, wrap)
    option.click()
    page.locator("#chat-status").get_by_text("Feedback recorded").wait_for()
    reason = page.locator("#feedback-reason textarea")
    reason.wait_for()
    assert reason.bounding_box()["y"] < page.locator("#question textarea").bounding_box()["y"]  # under the chat
    assert in_view(page, reason) and in_view(page, "#feedback-submit") and in_view(page, "#chat-status")
    assert not overlapping(reason, page.locator("#question textarea"))  # on a phone: above the pinned input
    reason.fill("the GA=1 row")
    page.locator("#feedback-submit").click()
    page.locator("#chat-status").get_by_text("Reason recorded").wait_for()
    new = [json.loads(x) for x in fb.read_text(encoding="utf-8").splitlines()[len(before) :]]
    assert new[0]["feedback"] == "Wrong number" and new[0]["liked"] is None
    assert new[0]["question"] == GA_EN
    assert len(new) == 2, [(r["type"], r.get("feedback"), r.get("liked"), r.get("question", "")[:30]) for r in new]
    # one rating per click
    assert new[1]["type"] == "reason" and new[1]["feedback_id"] == new[0]["id"]
    ctx.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_open_tab_is_in_the_url(browser, app_server, size):
    ctx, page = new_page(browser, size)
    page.goto(app_server.url + "/?lang=en")
    for tab_id, name in (("calculators", "Calculators"), ("check", "Check / diagnose")):
        page.get_by_role("tab", name=name).click()
        page.wait_for_function("t => location.search.includes('tab=' + t)", arg=tab_id)
        assert "lang=en" in page.url
        link = page.url
        other = ctx.new_page()
        other.set_default_timeout(TIMEOUT)
        other.goto(link)
        other.get_by_role("tab", name=name, selected=True).wait_for()
        other.close()
    ctx.close()


# ---------------------------------------------------------------- the <gradio-app> web component, self-hosted JS
@pytest.fixture(scope="module")
def wiki_page(app_server, tmp_path_factory) -> Iterator[str]:
    """A wiki page on another loopback origin with exactly what `app.py --print-embed-snippet URL` prints."""
    from ui.embed import embed_snippets

    root = tmp_path_factory.mktemp("wiki")
    snippet = embed_snippets(app_server.url)
    web_component = snippet.split("<!-- 2.", 1)[1].split("-->", 1)[1]
    (root / "wc.html").write_text(
        f'<!doctype html><meta charset="utf-8"><title>wiki page</title><h1>Internal wiki</h1>{web_component}',
        encoding="utf-8",
    )

    class Quiet(SimpleHTTPRequestHandler):
        def __init__(self, *a: Any, **k: Any) -> None:
            super().__init__(*a, directory=str(root), **k)

        def log_message(self, *a: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/wc.html"
    finally:
        server.shutdown()


def test_gradio_app_web_component_with_self_hosted_js(browser, app_server, wiki_page):
    ctx, page = new_page(browser, "desktop")
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    page.goto(wiki_page)
    page.locator("gradio-app #question textarea").wait_for()
    ui_ready(page, "en")  # the browser's en-US
    page.locator("#question textarea").fill(GA_EN)
    page.locator("#question textarea").press("Enter")
    page.locator("#chatbot").get_by_text("Sources").last.wait_for()
    assert "Internal wiki" in page.locator("h1").first.inner_text()  # the wiki page is still there
    page.get_by_role("tab", name="Calculators").click()
    time.sleep(0.5)
    assert page.url == wiki_page  # the wiki's URL is left alone
    assert all(u.startswith("http://127.0.0.1:") for u in seen if u.startswith("http")), [
        u for u in seen if not u.startswith("http://127.0.0.1:")
    ][:5]  # no CDN: the JS is self-hosted
    assert any(u.startswith(app_server.url + "/assets/index-") for u in seen)
    shot(page, "web_component_en.png")
    ctx.close()
