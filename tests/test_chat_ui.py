"""The chat's rendering and handler without a browser: first screen open, the rest folded, titles that say
what differs, pasted configs as code, Send disabled while answering, and what browser storage may restore."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import gradio as gr
import pytest

from ui.chat import ChatController
from ui.chat_layout import KEEP_MESSAGES, _from_storage, _to_storage, examples_for
from ui.chat_render import answer_messages, call_title, split_answer, user_message_md

FIT_Q = "How much GPU memory does a full fine-tune of Llama-2-7B with AdamW need on one A100-80GB?"
GA_Q = "在3090显存受限的情况下，gradient_accumulation_steps 增大会增大显存吗？显存爆掉是因为有效批次大小吗？"


def _text(m: dict[str, Any]) -> str:
    return m["content"] if isinstance(m["content"], str) else str(m["content"])


def test_split_answer_keeps_the_first_screen_open_and_folds_each_heading():
    text = "**No.** Verdict.\n\n_Your setup: x_\n\n#### The numbers\n| a | b |\n\n#### Explanation\nWhy.\n\n#### Sources\n- s"
    head, sections = split_answer(text, "**No.** Verdict.\n\n_Your setup: x_")
    assert head == "**No.** Verdict.\n\n_Your setup: x_"
    assert [s.title for s in sections] == ["The numbers", "Explanation", "Sources"]
    assert sections[1].body == "Why."
    # No first screen: what comes before the first heading stays open; no heading: all open.
    assert split_answer(text, "")[0] == head
    assert split_answer("Just one paragraph.", "") == ("Just one paragraph.", [])


def test_memory_call_titles_say_what_differs_and_the_result():
    main = {
        "model": "llama-2-7b",
        "gpu": "rtx-3090",
        "train_micro_batch_size_per_gpu": 1,
        "gradient_accumulation_steps": 1,
    }
    high = {**main, "gradient_accumulation_steps": 16}
    call = {
        "name": "memory",
        "label": "ga_high",
        "arguments": high,
        "result": {"total_per_gpu": int(18.8 * 2**30), "fits": True},
    }
    title = call_title(call, main, "en")
    assert title.endswith("GA=16 → 18.8 GiB ✔"), title
    assert "llama" not in title  # only what differs from the main call
    first = call_title(
        {"name": "memory", "arguments": main, "result": {"total_per_gpu": 40 * 2**30, "fits": False}}, main, "zh"
    )
    assert "llama-2-7b" in first and "40.0 GiB ✘" in first
    sweep = {
        "name": "sweep",
        "arguments": {"field": "train_micro_batch_size_per_gpu"},
        "result": {
            "field": "train_micro_batch_size_per_gpu",
            "points": [
                {"value": 1, "estimate": {"total_per_gpu": 19 * 2**30}},
                {"value": 8, "estimate": {"total_per_gpu": 56.7 * 2**30}},
            ],
        },
    }
    assert call_title(sweep, main, "en").endswith("micro 1…8 → 19.0 GiB…56.7 GiB")


def test_call_titles_escape_user_text():
    main = {"model": "x"}
    call = {
        "name": "memory",
        "arguments": {"model": "<img src=x onerror=alert(1)>"},
        "result": {"total_per_gpu": 2**30},
    }
    assert "<img" not in call_title(call, main, "en")


def test_pasted_config_and_error_become_code_blocks():
    q = (
        'My run OOMs, config:\n{\n  "train_micro_batch_size_per_gpu": 4,\n  "zero_optimization": {"stage": 2}\n}\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\nwhy?"
    )
    md = user_message_md(q)
    assert md.startswith("My run OOMs, config:")
    assert '```json\n{\n  "train_micro_batch_size_per_gpu": 4,' in md  # indentation kept
    assert "```\ntorch.OutOfMemoryError" in md
    assert md.rstrip().endswith("why?")


def test_storage_round_trip_and_garbage():
    msgs = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "metadata": {"title": "t"}}]
    saved = _to_storage(msgs, [{"role": "user", "content": "q"}])
    assert _from_storage(saved) == (msgs, [{"role": "user", "content": "q"}])
    many = _to_storage([{"role": "user", "content": str(i)} for i in range(KEEP_MESSAGES + 10)], [])
    assert len(many["messages"]) == KEEP_MESSAGES and many["messages"][-1]["content"] == str(KEEP_MESSAGES + 9)
    for junk in (
        None,
        "x",
        {"messages": "x"},
        {"messages": [{"role": "system", "content": "x"}]},
        {"messages": [{"role": "user", "content": {"a": 1}}]},
        {"messages": [], "history": "x"},
    ):
        assert _from_storage(junk) == ([], [])


def test_examples_follow_the_ui_language():
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in e["text"]) for e in examples_for("zh"))
    assert not any(any("\u4e00" <= ch <= "\u9fff" for ch in e["text"]) for e in examples_for("en"))


@pytest.mark.slow
def test_real_answer_first_screen_open_rest_folded(assistant):
    ans = assistant.ask(FIT_Q).model_dump()
    msgs = answer_messages(ans, ans["language"])
    assert msgs[0]["content"] == ans["first_screen"].strip()
    assert "metadata" not in msgs[0]
    folded = msgs[1:]
    assert folded and all(m["metadata"]["status"] == "done" for m in folded)  # Gradio shows these collapsed
    assert sum(len(_text(m)) for m in folded) > 2 * len(msgs[0]["content"])  # most of the text is folded
    titles = [m["metadata"]["title"] for m in folded]
    assert "Sources" in titles
    assert any("→" in t and "GiB" in t for t in titles), titles  # calculator titles carry results
    assert all("duration" not in m["metadata"] for m in folded)


@pytest.mark.slow
def test_respond_disables_send_while_answering_and_ignores_a_second_submit(assistant):
    chat = ChatController(assistant, stream_delay=0.0)
    req = SimpleNamespace(session_hash="s1")
    run = chat.respond(GA_Q, [], [], "zh", req)
    first = next(run)
    assert first[4]["interactive"] is False and first[5]["visible"] is True  # Send off, Stop on
    again = list(chat.respond("another question", [], [], "zh", req))  # Enter pressed again
    assert len(again) == 1 and all(isinstance(x, type(gr.skip())) for x in again[0]), again
    other = list(chat.respond("另一个问题：ZeRO-3 省显存吗？", [], [], "zh", SimpleNamespace(session_hash="s2")))
    assert other[-1][4]["interactive"] is True  # other sessions unaffected
    steps = list(run)
    last = steps[-1]
    assert last[4]["interactive"] is True and last[5]["visible"] is False
    assert _text(last[0][0]) == GA_Q and last[0][1]["content"].startswith("**基本不会")
    # Finished: the same session may ask again.
    assert list(chat.respond("ZeRO-2 呢？", last[0], last[1], "zh", req))[-1][4]["interactive"] is True


@pytest.mark.slow
def test_stop_frees_the_session_and_the_stopped_run_never_lands(assistant):
    chat = ChatController(assistant, stream_delay=0.0)
    req = SimpleNamespace(session_hash="s3")
    run = chat.respond(GA_Q, [], [], "zh", req)
    msgs, *_ = next(run)  # the question and a pending bubble are shown
    assert msgs[-1]["metadata"]["status"] == "pending"
    shown, status, send, stop = chat.stop(msgs, "zh", req)  # Stop pressed (Gradio cancels the event)
    assert [m["role"] for m in shown] == ["user"] and "已停止" in status
    assert send["interactive"] is True and stop["visible"] is False
    rest = list(run)  # the step that was running still finishes...
    assert len(rest) == 1 and len(rest[0][0]) == 1  # ...but ends as Stop left it: no answer
    assert "已停止" in rest[0][3] and rest[0][4]["interactive"] is True
    again = list(chat.respond("ZeRO-2 呢？", shown, [], "zh", req))  # the session can ask again
    assert again[-1][0][-1]["role"] == "assistant" and again[-1][4]["interactive"] is True


def test_a_stopped_run_does_not_overwrite_a_newer_one():
    class Slow:
        def ask(self, q: str, history: Any = None) -> Any:
            raise RuntimeError("not reached")

    chat = ChatController(Slow(), stream_delay=0.0)
    req = SimpleNamespace(session_hash="s4")
    old = chat.respond("does GA raise memory?", [], [], "en", req)
    next(old)
    chat.stop([], "en", req)
    newer = chat._claim("s4")  # a new question of the same session is running
    assert newer is not None
    assert chat._stopped("s4", newer) is False
    old.close()  # the old run closed late must not free the newer one
    assert chat._busy.get("s4") is newer


# ---------------------------------------------------------------- issue #15 item 6: the answer follows the UI language
JSON_PASTE = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8,\n  "zero_optimization": {"stage": 2}\n}'
LOG_PASTE = (
    'Traceback (most recent call last):\n  File "train.py", line 12, in <module>\n    loss.backward()\n'
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "23.69 GiB of which 1.02 GiB is free."
)


@pytest.mark.parametrize(
    "text, ui, expected",
    [
        (JSON_PASTE, "zh", "zh"),
        (JSON_PASTE, "en", "en"),
        (LOG_PASTE, "zh", "zh"),
        ("Does GA raise memory?", "zh", "zh"),
        ("Does GA raise memory?", "en", "en"),
        ("梯度累积会增加显存吗？", "en", "zh"),
        ("梯度累积会增加显存吗？", "zh", "zh"),
        ("gradient_accumulation_steps 增大会增大显存吗", "en", "zh"),
        ("12345 ???", "zh", "zh"),
        ("12345 ???", "en", "en"),
        (JSON_PASTE, None, "en"),
        ("梯度累积会增加显存吗？", None, "zh"),
        ("12345", None, "en"),
    ],
)
def test_answer_language_chinese_text_gets_chinese_other_text_the_ui_language(text, ui, expected):
    from calculators.lang import answer_language

    assert answer_language(text, ui) == expected


def test_guard_question_refuses_in_the_answer_language():
    from ui.chat import guard_question

    too_long = "x " * 20_000
    refusal, lang = guard_question(too_long, "zh")
    assert lang == "zh" and refusal and "字符" in refusal  # an English-only paste in the Chinese UI
    refusal, lang = guard_question("显存 " * 10_000, "en")
    assert lang == "zh"


class RecordingAssistant:
    """Keeps what ChatController passed to ask(); answers with the real assistant."""

    def __init__(self, real: Any) -> None:
        self.real, self.hints = real, []

    def ask(self, question: str, history: Any = None, lang_hint: Any = None) -> Any:
        self.hints.append(lang_hint)
        return self.real.ask(question, history=history, lang_hint=lang_hint)


@pytest.mark.slow
def test_a_json_pasted_in_the_chinese_ui_gets_a_chinese_answer(assistant):
    """The real assistant: the UI language decides for text without Chinese, Chinese text is always answered in
    Chinese, and without a hint the detector decides as before."""
    zh = assistant.ask(JSON_PASTE, lang_hint="zh")
    assert zh.language == "zh" and __import__("re").search("[\u4e00-\u9fff]{4}", zh.first_screen), zh.first_screen
    assert assistant.ask(JSON_PASTE).language == "en"
    assert assistant.ask(JSON_PASTE, lang_hint="en").language == "en"
    assert assistant.ask(LOG_PASTE, lang_hint="zh").language == "zh"
    assert assistant.ask(GA_Q, lang_hint="en").language == "zh"
    assert (
        assistant.ask("Does increasing gradient_accumulation_steps use more GPU memory?", lang_hint="zh").language
        == "zh"
    )
    # The chat handler passes the UI language; the /chat API takes it as an optional field.
    rec = RecordingAssistant(assistant)
    chat = ChatController(rec, stream_delay=0.0)
    *_, last = chat.respond(JSON_PASTE, [], [], "zh", SimpleNamespace(session_hash="lang1"))
    assert rec.hints == ["zh"] and last[1][-1]["language"] == "zh"
    text, answer = chat.api_chat(JSON_PASTE, None, "zh")
    assert answer["language"] == "zh" and rec.hints[-1] == "zh"
    text, answer = chat.api_chat(JSON_PASTE)
    assert answer["language"] == "en" and rec.hints[-1] is None
    with pytest.raises(gr.Error) as err:
        chat.api_chat(JSON_PASTE, None, "fr")
    assert "zh" in str(err.value) and "lang" in str(err.value)


@pytest.mark.slow
def test_the_chat_api_takes_the_ui_language_on_the_real_server(app_server):
    """/chat over HTTP (gradio_client): the optional lang answers a JSON in Chinese; a bad lang is refused clearly."""
    from gradio_client import Client

    client = Client(app_server.url, verbose=False)
    _, answer = client.predict(question=JSON_PASTE, lang="zh", api_name="/chat")
    assert answer["language"] == "zh"
    _, answer = client.predict(question=JSON_PASTE, api_name="/chat")
    assert answer["language"] == "en"
    with pytest.raises(Exception) as err:
        client.predict(question=JSON_PASTE, lang="fr", api_name="/chat")
    assert "'lang' must be" in str(err.value) and "必须是" in str(err.value)
