"""The real app server, queried the way other programs do (gradio_client), plus its pure handlers."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest
from gradio_client import Client

SEED_ZH = "在3090显存受限的情况下，gradient_accumulation_steps 增大会增大显存吗？显存爆掉是因为有效批次大小吗？"


@pytest.fixture(scope="module")
def client(app_server):
    return Client(app_server.url, verbose=False)


def _text(message: dict) -> str:
    c = message.get("content")
    if isinstance(c, list):
        return "\n".join(p.get("text", "") for p in c if isinstance(p, dict))
    return str(c)


def _error_text(excinfo) -> str:
    return str(excinfo.value)


# ---------------------------------------------------------------- endpoints
def test_named_endpoints_exist(client):
    names = set(client.view_api(return_format="dict", print_info=False)["named_endpoints"])
    assert {"/chat", "/chat_ui", "/effective_batch", "/memory", "/sweep", "/check_config"} <= names


def test_chat_chinese_seed_question_has_verdict_and_tool_call(client):
    text, answer = client.predict(question=SEED_ZH, api_name="/chat")
    assert answer["language"] == "zh"
    assert "不会" in text
    assert answer["tool_calls"], "the numbers must come from a calculator call"
    assert any(c["name"] in ("memory", "sweep") for c in answer["tool_calls"])
    assert answer["sources"] and all(u["url"].startswith("http") for s in answer["sources"] for u in s["urls"])
    assert isinstance(answer["history"], list) and answer["history"]


def test_chat_ui_streams_tool_calls_as_collapsible_messages(client):
    messages = client.predict(SEED_ZH, [], api_name="/chat_ui")[0]
    folded = [m for m in messages if (m.get("metadata") or {}).get("title")]
    assert all(m["metadata"]["status"] == "done" for m in folded)  # Gradio shows them collapsed
    tools = [m for m in folded if m["metadata"]["title"].startswith("调用计算器")]
    assert tools, "each calculator call is its own message with a metadata title"
    assert any("memory" in m["metadata"]["title"] or "sweep" in m["metadata"]["title"] for m in tools)
    assert "```json" in _text(tools[0]) and "|---" in _text(tools[0])  # arguments + a result table
    answer = next(m for m in messages if m["role"] == "assistant" and not (m.get("metadata") or {}).get("title"))
    assert _text(answer).startswith("**基本不会")  # the verdict, open
    assert messages.index(answer) < messages.index(tools[0])  # the verdict comes first
    sources = [m for m in folded if m["metadata"]["title"] in ("参考来源", "来源")]
    assert sources and "https://" in _text(sources[0])  # linked sources, folded
    assert "https://" not in _text(answer) or len(_text(answer)) < 1200  # the open part is the first screen


def test_memory_endpoint_returns_numbers(client):
    r = client.predict(config={"model": "llama-2-7b", "gpu": "rtx-3090", "finetune": "lora"}, api_name="/memory")
    assert r["weights"] > 0 and r["total_per_gpu"] > r["weights"]
    assert r["gib"]["gpu_capacity"] == 24.0
    assert isinstance(r["fits"], bool)


def test_effective_batch_endpoint_returns_numbers(client):
    r = client.predict(
        train_micro_batch_size_per_gpu=2, gradient_accumulation_steps=8, world_size=4, api_name="/effective_batch"
    )
    assert r["train_batch_size"] == 64
    assert "train_batch_size" in r["derived"]


def test_sweep_endpoint_ga_line_is_flat_from_ga_2(client):
    """With zero_grad(set_to_none=True) GA>=2 keeps one gradient buffer through the next forward: a constant step
    from GA=1 to GA=2 (tiny for LoRA: only the adapters have gradients), then flat."""
    r = client.predict(
        config={"model": "llama-2-7b", "gpu": "rtx-3090", "finetune": "lora"},
        field="gradient_accumulation_steps",
        values=[1, 4, 16],
        api_name="/sweep",
    )
    totals = [p["total_per_gpu"] for p in r["series_gib"]]
    assert totals[1] == totals[2] and totals[0] <= totals[1] < totals[0] + 0.1


def test_negative_micro_batch_is_a_clear_error_naming_the_field(client):
    with pytest.raises(Exception) as exc:
        client.predict(train_micro_batch_size_per_gpu=-1, api_name="/effective_batch")
    msg = _error_text(exc)
    assert "train_micro_batch_size_per_gpu" in msg and "-1" in msg
    assert "可接受" in msg and "Accepted" in msg  # bilingual
    assert "Traceback" not in msg


def test_unknown_gpu_is_a_clear_error_naming_the_field(client):
    with pytest.raises(Exception) as exc:
        client.predict(config={"model": "llama-2-7b", "gpu": "rtx-9999"}, api_name="/memory")
    msg = _error_text(exc)
    assert "[gpu]" in msg and "rtx-9999" in msg and "rtx-3090" in msg


def test_memory_config_must_be_an_object(client):
    with pytest.raises(Exception) as exc:
        client.predict(config=[1, 2], api_name="/memory")
    assert "[config]" in _error_text(exc)


def test_chat_endpoint_rejects_empty_and_huge_questions(client):
    with pytest.raises(Exception) as exc:
        client.predict(question="   ", api_name="/chat")
    assert "question" in _error_text(exc).lower() or "问题" in _error_text(exc)
    with pytest.raises(Exception) as exc:
        client.predict(question="显存" * 15_001, api_name="/chat")  # calculators.limits.MAX_QUESTION_CHARS + 2
    assert "30000" in _error_text(exc)


def test_chat_ui_friendly_messages_for_empty_huge_and_nonsense(app_server):
    client = Client(app_server.url, verbose=False)  # a fresh session: no earlier turns to follow up on
    # The app's default UI language is Chinese: text without Chinese is answered in it (issue #15 item 6).
    for q, expect in (
        ("", "请输入一个问题"),
        ("?!?! ### ...", "没看懂"),
        ("asdfgh qwerty zxcvb", "超出了我能回答的范围"),
        ("显存" * 15_001, "30000"),
    ):
        messages = client.predict(q, [], api_name="/chat_ui")[0]
        assert messages, q[:10]
        assert expect in _text(messages[-1]) or expect in _text(messages[-1]).replace("，", ",")


def test_check_config_endpoint_is_clear(client):
    r = client.predict(
        text='{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 8}',
        api_name="/check_config",
    )
    assert r["markdown"].strip()


def test_two_sessions_do_not_mix_history(app_server):
    a = Client(app_server.url, verbose=False)
    b = Client(app_server.url, verbose=False)
    a.predict("在 rtx-3090 上用 llama-2-7b 做 LoRA 微调需要多少显存？", [], api_name="/chat_ui")
    b.predict("How much GPU memory does a full fine-tune of gpt2 need on an A100-80GB?", [], api_name="/chat_ui")
    follow_a = a.predict("那 micro batch 开到 4 呢？", [], api_name="/chat_ui")[0]
    follow_b = b.predict("And with micro batch 4?", [], api_name="/chat_ui")[0]
    tools_a = "\n".join(_text(m) for m in follow_a if (m.get("metadata") or {}).get("title"))
    tools_b = "\n".join(_text(m) for m in follow_b if (m.get("metadata") or {}).get("title"))
    assert '"llama-2-7b"' in tools_a and '"rtx-3090"' in tools_a and "gpt2" not in tools_a
    assert '"gpt2"' in tools_b and "llama-2-7b" not in tools_b
    # A fresh session has no history: the same follow-up has nothing to carry over.
    c = Client(app_server.url, verbose=False)
    fresh = c.predict("那 micro batch 开到 4 呢？", [], api_name="/chat_ui")[0]
    tools_c = "\n".join(_text(m) for m in fresh if (m.get("metadata") or {}).get("title"))
    assert '"rtx-3090"' not in tools_c and '"a100-80gb"' not in tools_c


# ---------------------------------------------------------------- handlers without a browser
def test_memory_form_error_names_the_field():
    from ui.calculators_tab import DEFAULTS, run_memory

    err, summary, bar, *_ = run_memory({**DEFAULTS, "train_micro_batch_size_per_gpu": -1}, "zh")
    assert "train_micro_batch_size_per_gpu" in err and "✘" in err and summary == "" and bar == ""
    err, *_ = run_memory({**DEFAULTS, "offload_param": True}, "en")
    assert "offload_param" in err or "zero_stage" in err or "config" in err


def test_memory_form_plots_show_capacity_and_ga_line_flat_from_ga_2():
    import re

    from ui.calculators_tab import DEFAULTS, run_memory

    err, summary, bar, micro, ga = run_memory(dict(DEFAULTS), "en")
    assert err == "" and "total per GPU" in summary
    assert 'class="capacity"' in bar and "seg-weights" in bar and "seg-activations" in bar
    ys = [float(y) for y in re.findall(r"L?[\d.]+,([\d.]+)", re.search(r'class="line-total" d="([^"]+)"', ga).group(1))]
    # GA=1 → GA=2 may step up by one gradient buffer (set_to_none); from GA=2 on the line is flat.
    assert len(set(ys[1:])) == 1, "memory vs gradient accumulation must be flat from GA=2"
    assert ys[0] >= ys[1]  # SVG y grows downwards: GA=1 is not above GA=2
    ys = [
        float(y) for y in re.findall(r"L?[\d.]+,([\d.]+)", re.search(r'class="line-total" d="([^"]+)"', micro).group(1))
    ]
    assert ys == sorted(ys, reverse=True) and len(set(ys)) > 1, "memory grows with the micro batch (y is inverted)"


def test_batch_form_inconsistent_values_explain_deepspeed_rule():
    from ui.calculators_tab import run_batch

    err, out = run_batch(100, 2, 8, 4, None, None, "en")
    assert "train_batch_size" in err and out == ""
    err, out = run_batch(None, 2, 8, 4, 1024, 10000, "zh")
    assert err == "" and "64" in out


def test_plot_text_is_escaped():
    from ui.plots import sweep_svg

    svg = sweep_svg("<script>x</script>", [("<b>", 1, 1)], None, "en", "<img src=x onerror=alert(1)>")
    assert "<script>" not in svg and "<img" not in svg and "&lt;img" in svg


class _Like(SimpleNamespace):
    pass


def test_feedback_appends_and_never_loses_lines(tmp_path, monkeypatch):
    from ui.chat import ChatController

    path = tmp_path / "fb" / "feedback.jsonl"
    path.parent.mkdir()
    path.write_text('{"earlier": true}\n', encoding="utf-8")
    monkeypatch.setenv("BATCHBOT_FEEDBACK_FILE", str(path))
    chat = ChatController(assistant=None)
    msgs = [{"role": "user", "content": "q?"}, {"role": "assistant", "content": [{"type": "text", "text": "a."}]}]
    fid, status, _ = chat.on_like(msgs, "en", _Like(index=1, value="a.", liked=False))
    assert fid and "✔" in status
    status, cleared = chat.on_reason(fid, "wrong numbers", "en")
    assert "✔" in status and cleared == ""
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert lines[0] == {"earlier": True}
    assert lines[1]["liked"] is False and lines[1]["question"] == "q?" and lines[1]["answer"] == "a."
    assert lines[2] == {**lines[2], "type": "reason", "feedback_id": fid, "reason": "wrong numbers"}


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_feedback_file_gives_a_clear_message(tmp_path, monkeypatch):
    _unwritable_check(tmp_path, monkeypatch)


def test_unwritable_feedback_path_gives_a_clear_message(tmp_path, monkeypatch):
    # A path whose parent is a regular file cannot be created, even by root.
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("BATCHBOT_FEEDBACK_FILE", str(blocker / "feedback.jsonl"))
    from ui.chat import ChatController

    fid, status, _ = ChatController(None).on_like(
        [{"role": "assistant", "content": "a"}], "zh", _Like(index=0, value="a", liked=True)
    )
    assert fid is None and "✘" in status and "不可写" in status and "not-a-dir" in status
    assert blocker.read_text() == "x"


def _unwritable_check(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "feedback.jsonl"
    path.write_text('{"earlier": true}\n')
    path.chmod(stat.S_IRUSR)
    monkeypatch.setenv("BATCHBOT_FEEDBACK_FILE", str(path))
    from ui.chat import ChatController

    fid, status, _ = ChatController(None).on_like(
        [{"role": "assistant", "content": "a"}], "en", _Like(index=0, value="a", liked=True)
    )
    assert fid is None and "not writable" in status
    assert path.read_text() == '{"earlier": true}\n'


def test_cli_flags_and_environment():
    from app import parse_args

    a = parse_args([], env={})
    assert (a.host, a.port, a.root_path, a.embed_model, a.embed) == ("127.0.0.1", 7860, "", None, False)
    env = {
        "BATCHBOT_HOST": "0.0.0.0",
        "BATCHBOT_PORT": "8080",
        "BATCHBOT_ROOT_PATH": "/wiki/batchbot/",
        "BATCHBOT_EMBED_MODEL": "/models/minilm",
        "BATCHBOT_EMBED": "1",
    }
    a = parse_args([], env=env)
    assert (a.host, a.port, a.root_path, a.embed_model, a.embed) == (
        "0.0.0.0",
        8080,
        "/wiki/batchbot",
        "/models/minilm",
        True,
    )
    a = parse_args(["--port", "9000", "--root-path", "x", "--host", "127.0.0.2"], env=env)
    assert (a.port, a.root_path, a.host) == (9000, "/x", "127.0.0.2")
    with pytest.raises(SystemExit):
        parse_args(["--port", "70000"], env={})


def test_embed_snippet_points_at_self_hosted_bundle():
    from ui.embed import embed_snippets, web_component_asset

    s = embed_snippets("https://wiki.example/batchbot/")
    assert 'src="https://wiki.example/batchbot/?embed=1"' in s
    assert f"https://wiki.example/batchbot/{web_component_asset()}" in s and "<gradio-app" in s


def test_empty_number_boxes_mean_not_given_but_zero_counts_are_refused():
    from ui.calculators_tab import DEFAULTS, run_batch, run_memory

    err, out = run_batch(0, 2, 8, 1, 0, 0, "en")  # the browser sends 0 for an empty optional box
    assert err == "" and "16" in out
    err, out = run_batch(None, 2, 8, 0, None, None, "en")
    assert "world_size" in err and out == ""
    err, *_ = run_memory({**DEFAULTS, "num_params": 0, "gpu_memory_gb": 0, "hidden_size": 0}, "en")
    assert err == ""
