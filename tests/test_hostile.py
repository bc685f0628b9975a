"""Hostile input against the real server (issue 19): ``python app.py`` in a subprocess, probed over HTTP.

Each case of the issue is a test, bounded in time and in the server's memory (RSS of the
server process and its children, read from /proc and sampled every 50 ms while the request
runs, so a short peak is seen too).

The server runs with ``BATCHBOT_BODY_TIMEOUT_S=3`` so the slow-client case takes seconds, not 30.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import pytest
from gradio_client import Client

ROOT = Path(__file__).resolve().parent.parent
MB = 1024 * 1024
RAW = re.compile(r"<(script|img|svg|iframe)|javascript:", re.I)

pytestmark = pytest.mark.slow


# ------------------------------------------------------------------------------------------- server
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants (0 once it has exited)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
        todo.extend(children.get(p, []))
    return total


class Server:
    def __init__(self, proc: subprocess.Popen, url: str, log: Path, feedback: Path, tmp: Path) -> None:
        self.proc, self.url, self.log, self.feedback, self.tmp = proc, url, log, feedback, tmp
        self.start_rss = _rss(proc.pid)

    def rss(self) -> int:
        return _rss(self.proc.pid)

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    @contextmanager
    def bounded(self, seconds: float, grow_mb: float) -> Iterator[None]:
        """The block must finish within ``seconds`` and the server's RSS peak stay within ``grow_mb`` of before."""
        before, peak, stop = self.rss(), [0], threading.Event()

        def sample() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], self.rss())
                stop.wait(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        start = time.monotonic()
        try:
            yield
        finally:
            elapsed = time.monotonic() - start
            stop.set()
            sampler.join()
        assert self.proc.poll() is None, "the server died"
        assert elapsed < seconds, f"took {elapsed:.1f} s (limit {seconds} s)"
        grown = (peak[0] - before) / MB
        assert grown < grow_mb, f"server RSS grew {grown:.0f} MB at peak (limit {grow_mb} MB)"


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("hostile")
    port = _free_port()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
        "BATCHBOT_FEEDBACK_FILE": str(tmp / "feedback.jsonl"),
        "BATCHBOT_BODY_TIMEOUT_S": "3",
        "BATCHBOT_LANG": "en",
        "PYTHONUNBUFFERED": "1",
    }
    log = tmp / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "app.py", "--port", str(port)], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"app.py exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            # The page answers while the model loads on its thread (rag/background.py); RSS bounds are
            # measured from a fully loaded server, so wait for the model too.
            if httpx.get(url + "/config", timeout=2).status_code == 200 and "assistant ready" in log.read_text():
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("app.py did not start within 240 s")
    srv = Server(proc, url, log, tmp / "feedback.jsonl", tmp)
    try:
        yield srv
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def client(server: Server) -> Client:
    return Client(server.url, verbose=False)


def _error(excinfo: Any) -> str:
    return str(excinfo.value)


def _config(server: Server) -> dict:
    return httpx.get(server.url + "/config", timeout=10).json()


def _fn_index(server: Server, *, api_name: str | None = None, trigger: str | None = None) -> tuple[int, int | None]:
    """(fn_index, trigger component id) of an event, found by api_name or by trigger ("like")."""
    for i, dep in enumerate(_config(server)["dependencies"]):
        targets = dep.get("targets") or []
        if (api_name and dep.get("api_name") == api_name) or (trigger and any(t[1] == trigger for t in targets)):
            return dep.get("id", i), (targets[0][0] if targets else None)
    raise LookupError(api_name or trigger)


def _queue_call(
    server: Server,
    fn_index: int,
    data: list,
    session: str,
    *,
    trigger_id: int | None = None,
    event_data: dict | None = None,
    timeout: float = 60,
) -> dict:
    """One event through Gradio's queue, the way the browser sends it (join, then read the SSE stream)."""
    with httpx.Client(timeout=timeout) as c:
        r = c.post(
            f"{server.url}/gradio_api/queue/join",
            json={
                "data": data,
                "fn_index": fn_index,
                "session_hash": session,
                "event_data": event_data,
                "trigger_id": trigger_id,
            },
        )
        r.raise_for_status()
        with c.stream("GET", f"{server.url}/gradio_api/queue/data", params={"session_hash": session}) as s:
            for line in s.iter_lines():
                if line.startswith("data:"):
                    msg = json.loads(line[5:])
                    if msg.get("msg") == "process_completed":
                        return msg
    raise AssertionError("no process_completed message")


def billion_laughs(levels: int = 9, width: int = 9, head: str = "") -> str:
    """The YAML alias bomb of the issue: width**levels nodes once expanded, ~600 characters written."""
    lines = [head] if head else []
    lines.append("a: &a [" + ", ".join(['"lol"'] * width) + "]")
    prev = "a"
    for name in "bcdefghijk"[: levels - 1]:
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * width) + "]")
        prev = name
    return "\n".join(lines)


NORMAL_Q = "Does increasing gradient_accumulation_steps use more GPU memory?"
SECRET = "TOPSECRET-abc123-do-not-echo"


# ------------------------------------------------------------------- 1. YAML alias bomb
def test_alias_bomb_in_check_config_is_refused_fast(server: Server, client: Client) -> None:
    bomb = billion_laughs()
    assert len(bomb) < 700
    with server.bounded(seconds=10, grow_mb=150):
        r = client.predict(text=bomb, api_name="/check_config")
    assert "alias" in r["markdown"].lower() and len(r["markdown"]) < 5000
    assert len(json.dumps(r)) < 20_000, "the report is capped, not hundreds of MB"


def test_alias_bomb_in_chat_is_refused_fast(server: Server, client: Client) -> None:
    bomb = billion_laughs(head="train_batch_size: 8\ntrain_micro_batch_size_per_gpu: 1")
    question = f"Is this DeepSpeed config right?\n```yaml\n{bomb}\n```"
    with server.bounded(seconds=15, grow_mb=150):
        text, answer = client.predict(question=question, api_name="/chat")
    assert len(text) < 20_000 and len(json.dumps(answer)) < 100_000


def test_normal_user_is_not_stalled_behind_hostile_requests(server: Server) -> None:
    bomb = billion_laughs()
    hostile = Client(server.url, verbose=False)
    normal = Client(server.url, verbose=False)
    with server.bounded(seconds=30, grow_mb=250), ThreadPoolExecutor(4) as pool:
        attacks = [pool.submit(hostile.predict, text=bomb, api_name="/check_config") for _ in range(2)]
        attacks.append(
            pool.submit(hostile.predict, question=f"check\n```yaml\ntrain_batch_size: 8\n{bomb}\n```", api_name="/chat")
        )
        start = time.monotonic()
        text, _ = normal.predict(question=NORMAL_Q, api_name="/chat")
        waited = time.monotonic() - start
        for a in attacks:
            a.result(timeout=30)
    assert "No" in text or "not" in text
    assert waited < 15, f"a normal question waited {waited:.1f} s behind hostile ones"


# ------------------------------------------------------------------- 2. hf_config is never a server path
@pytest.fixture(scope="module")
def hostile_paths(server: Server) -> dict[str, str]:
    secret = server.tmp / "secret.json"
    secret.write_text(json.dumps({"model_type": "llama", "hidden_size": SECRET}), encoding="utf-8")
    fifo = server.tmp / "fifo"
    os.mkfifo(fifo)
    return {
        "ssh key": "/root/.ssh/id_rsa",
        "passwd": "/etc/passwd",
        "missing": "/no/such/file/config.json",
        "planted secret": str(secret),
        "urandom": "/dev/urandom",
        "fifo": str(fifo),
        "dir": str(server.tmp),
        "relative": "../../etc/passwd",
        "file url": "file:///etc/passwd",
    }


@pytest.mark.parametrize("endpoint", ["/memory", "/sweep"])
def test_hf_config_paths_are_refused_fast_without_leaks(
    server: Server, client: Client, hostile_paths: dict[str, str], endpoint: str
) -> None:
    messages = {}
    with server.bounded(seconds=20, grow_mb=100):
        for name, path in hostile_paths.items():
            kwargs: dict[str, Any] = {"config": {"hf_config": path, "gpu": "rtx-3090"}, "api_name": endpoint}
            if endpoint == "/sweep":
                kwargs.update(field="gradient_accumulation_steps", values=[1, 2])
            start = time.monotonic()
            with pytest.raises(Exception) as exc:
                client.predict(**kwargs)
            assert time.monotonic() - start < 5, f"{name}: slow refusal"
            messages[name] = _error(exc)
    for name, msg in messages.items():
        assert "file paths are not read" in msg and "不会读取文件路径" in msg, name
        assert SECRET not in msg and "No such file" not in msg and "Permission" not in msg, name
        assert "Traceback" not in msg, name
    # The same words for a file that exists, one that does not, a FIFO and a device: nothing leaks.
    assert len(set(messages.values())) == 1, messages
    # No worker is left blocked on the FIFO or /dev/urandom: a normal call still answers at once.
    with server.bounded(seconds=5, grow_mb=50):
        r = client.predict(config={"model": "llama-2-7b", "gpu": "rtx-3090", "finetune": "lora"}, api_name="/memory")
    assert r["total_per_gpu"] > 0


def test_hf_config_as_json_text_still_works(client: Client) -> None:
    cfg = {
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "vocab_size": 32000,
    }
    r = client.predict(config={"hf_config": json.dumps(cfg), "gpu": "rtx-3090", "finetune": "lora"}, api_name="/memory")
    assert 6e9 < r["num_params"] < 7.5e9 and r["total_per_gpu"] > 0


# ------------------------------------------------------------------- 3. raw user text in returned Markdown
XSS = "<img src=x onerror=alert(1)> [x](javascript:alert(1)) <script>alert(1)</script>"


def test_check_config_markdown_escapes_user_keys_and_values(client: Client) -> None:
    text = json.dumps(
        {
            "<script>alert(1)</script>": 1,
            "train_batch_size": "<img src=x onerror=alert(1)>",
            "optimizer": {"type": "javascript:alert(1)"},
        }
    )
    r = client.predict(text=text, api_name="/check_config")
    assert not RAW.search(r["markdown"]), r["markdown"][:500]


def test_chat_config_answer_escapes_user_keys(client: Client) -> None:
    q = (
        'My ds_config: {"train_batch_size": 16, "<script>alert(1)</script>": 2, '
        '"gradient_accumulation_steps": "javascript:alert(1)"} is it right?'
    )
    text, _ = client.predict(question=q, api_name="/chat")
    assert not RAW.search(text), text[:500]


OWN_CHART = re.compile(r'<div class=\\"batchbot-plot\\" data-testid=\\"chat-memory-chart\\".*?</svg></div>', re.S)
RAW_IN_CHART = re.compile(r"<(script|img|iframe|foreignObject)|javascript:|onerror=", re.IGNORECASE)


@pytest.mark.parametrize(
    "question",
    [
        f"{XSS} how much memory does llama-2-7b need on rtx-3090",
        f"How much memory for llama-2-7b LoRA on {XSS}",
        f"{XSS} 增大梯度累积会增加显存吗",
        f"zero-3 with {XSS} GPUs, micro batch 2",
    ],
)
def test_chat_answers_do_not_echo_raw_html(client: Client, question: str) -> None:
    text, answer = client.predict(question=question, api_name="/chat")
    assert not RAW.search(text), text[:500]
    for field in ("corrections", "assumptions"):
        assert not RAW.search(json.dumps(answer.get(field), ensure_ascii=False)), field
    # The browser endpoint: every assistant message (answer and calculator calls). The user's own
    # bubble is their text, shown back to them by the sanitising Chatbot (docs/security.md).
    messages = client.predict(question, [], api_name="/chat_ui")[0]
    for m in messages:
        if m["role"] == "assistant":
            body = json.dumps(m.get("content"), ensure_ascii=False)
            # Our own memory chart is an inline SVG (ui/plots.py): it may be there, but the user's markup may not
            # be inside it either; everything outside it is held to the full rule.
            for chart in OWN_CHART.findall(body):
                assert not RAW_IN_CHART.search(chart), chart[:500]
            outside = OWN_CHART.sub("", body)
            assert not RAW.search(outside), outside[:500]


def test_api_errors_do_not_echo_raw_html(client: Client) -> None:
    for config in (
        {"model": "llama-2-7b", "gpu": "<script>alert(1)</script>"},
        {"model": "<img src=x onerror=alert(1)>", "gpu": "rtx-3090"},
        {"model": "llama-2-7b", "gpu": "rtx-3090", "precision": "javascript:alert(1)"},
        {"model": "llama-2-7b", "gpu": "rtx-3090", "<svg onload=alert(1)>": 1},
    ):
        with pytest.raises(Exception) as exc:
            client.predict(config=config, api_name="/memory")
        msg = _error(exc)
        assert not RAW.search(msg), msg
        assert "Accepted" in msg or "可接受" in msg


# ------------------------------------------------------------------- 4. size limits
def _raw_request(server: Server, head: str, body: bytes = b"") -> bytes:
    """Send a hand-written request (a lying Content-Length is impossible with httpx) and read the reply."""
    port = int(server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
        reply = b""
        while b"\r\n\r\n" not in reply or len(reply) < 200:
            part = sock.recv(65536)
            if not part:
                break
            reply += part
    return reply


def test_huge_declared_body_is_refused_before_reading(server: Server) -> None:
    """The issue's 600 MB /chat body: refused on its Content-Length, before a byte is read."""
    with server.bounded(seconds=5, grow_mb=30):
        reply = _raw_request(
            server,
            f"POST /gradio_api/queue/join HTTP/1.1\nHost: x\nContent-Type: application/json\n"
            f"Content-Length: {600 * MB}\n",
            b'{"data": [',
        )
    assert b" 413 " in reply.split(b"\r\n", 1)[0] and b"1,048,576" in reply, reply[:300]


def test_huge_chunked_body_is_refused_at_the_limit(server: Server) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(64):  # 64 MiB offered; the server stops reading after 1 MiB
            yield b" " * MB

    with server.bounded(seconds=10, grow_mb=40):
        try:
            r = httpx.post(
                server.url + "/gradio_api/queue/join",
                content=chunks(),
                headers={"Content-Type": "application/json"},
                timeout=10,
            )
            status = r.status_code
        except httpx.HTTPError:  # the server may close the connection while we are still sending
            status = 413
    assert status == 413


def test_uploads_are_refused(server: Server) -> None:
    with server.bounded(seconds=10, grow_mb=40):
        r = httpx.post(server.url + "/gradio_api/upload", files={"files": ("x.txt", b"hello")}, timeout=10)
        assert r.status_code == 413 and "no file uploads" in r.text
        reply = _raw_request(
            server,
            f"POST /gradio_api/upload HTTP/1.1\nHost: x\nContent-Type: multipart/form-data; "
            f"boundary=x\nContent-Length: {50 * MB}\n",
            b"--x\r\n",
        )
    assert b" 413 " in reply.split(b"\r\n", 1)[0], reply[:300]


def test_long_values_are_clipped_in_errors(server: Server, client: Client) -> None:
    for config in ({"model": "llama-2-7b", "gpu": "G" * 900_000}, {"model": "M" * 900_000, "gpu": "rtx-3090"}):
        with server.bounded(seconds=10, grow_mb=100), pytest.raises(Exception) as exc:
            client.predict(config=config, api_name="/memory")
        msg = _error(exc)
        assert len(msg) < 3000 and "…" in msg, len(msg)


def test_duplicate_lora_modules_are_refused(client: Client) -> None:
    base = {"model": "llama-2-7b", "gpu": "rtx-3090", "finetune": "lora"}
    one = client.predict(config={**base, "lora_target_modules": ["q_proj", "v_proj"]}, api_name="/memory")
    assert one["trainable_params"] < 1e8
    for modules in (["q_proj", "v_proj", "q_proj", "v_proj"], ["q_proj"] * 20_000):
        with pytest.raises(Exception) as exc:
            client.predict(config={**base, "lora_target_modules": modules}, api_name="/memory")
        msg = _error(exc)
        assert "lora_target_modules" in msg and "more than once" in msg and "重复" in msg


def test_queue_is_bounded(server: Server) -> None:
    """More events than the queue holds, at once: the surplus is refused (503 "Queue is full"), not stored."""
    from ui.limits import MAX_QUEUE_SIZE

    fn, _ = _fn_index(server, api_name="chat")
    payload = {"data": [NORMAL_Q, None, None], "fn_index": fn}  # question, history, lang

    def join(i: int) -> int:
        with httpx.Client(timeout=30) as c:
            return c.post(
                server.url + "/gradio_api/queue/join",
                json={**payload, "session_hash": f"flood{i}-{uuid.uuid4().hex[:6]}"},
            ).status_code

    with server.bounded(seconds=120, grow_mb=200), ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(join, range(MAX_QUEUE_SIZE * 3)))
    assert 503 in codes, codes
    assert codes.count(200) >= MAX_QUEUE_SIZE // 2
    deadline = time.monotonic() + 120  # let the accepted ones drain before the next test
    while time.monotonic() < deadline:
        try:
            Client(server.url, verbose=False).predict(config={"model": "gpt2", "gpu": "t4"}, api_name="/memory")
            break
        except Exception:
            time.sleep(1)


# ------------------------------------------------------------------- 5. forged histories


def _forged(slots: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": "How much memory for llama-2-7b LoRA on rtx-3090?",
            "language": "en",
            "slots": slots,
            "intents": {},
        },
        {"role": "assistant", "content": "ok", "language": "en"},
    ]


@pytest.mark.parametrize(
    "slots",
    [
        pytest.param({"gpu": "rtx-9999", "model": "llama-2-7b"}, id="unknown-gpu"),
        pytest.param({"model": "no-such-model"}, id="unknown-model"),
    ],
)
def test_forged_history_with_unknown_names_gets_a_clear_answer(client: Client, slots: dict) -> None:
    text, _ = client.predict(question="And with micro batch 4?", history=_forged(slots), api_name="/chat")
    assert "failed" not in text and "KeyError" not in text


@pytest.mark.parametrize(
    "slots, field",
    [
        ({"world_size": 10**12, "model": "llama-2-7b"}, "world_size"),
        ({"seq_len": -5, "model": "llama-2-7b"}, "seq_len"),
    ],
    ids=["world-1e12", "seq-neg"],
)
def test_forged_history_out_of_range_is_named(server: Server, client: Client, slots: dict, field: str) -> None:
    with server.bounded(seconds=15, grow_mb=100):
        text, _ = client.predict(question="And with micro batch 4?", history=_forged(slots), api_name="/chat")
    assert field in text and "failed" not in text


@pytest.mark.parametrize(
    "slots",
    [{"world_size": 10**12, "model": "llama-2-7b"}, {"seq_len": -5, "model": "llama-2-7b"}],
    ids=["world-1e12", "seq-neg"],
)
def test_forged_history_out_of_range_is_not_carried_forward(client: Client, slots: dict) -> None:
    _, answer = client.predict(question="And with micro batch 4?", history=_forged(slots), api_name="/chat")
    carried = [{k: v["value"] for k, v in (h.get("setup") or {}).items()} for h in answer["history"]]
    assert all(s.get("world_size", 1) <= 1_000_000 and s.get("seq_len", 1) >= 1 for s in carried), carried


def test_forged_history_megabyte_value_is_not_echoed(server: Server, client: Client) -> None:
    with server.bounded(seconds=20, grow_mb=200):
        text, answer = client.predict(
            question="And with micro batch 4?", history=_forged({"model": "x" * 900_000}), api_name="/chat"
        )
    assert len(json.dumps(answer)) < 200_000


def test_failed_requests_log_one_line_without_payload(server: Server, client: Client) -> None:
    marker = "PAYLOAD" + uuid.uuid4().hex
    before = len(server.log_text())
    for slots in ({"gpu": "rtx-9999" + marker, "model": "llama-2-7b"}, {"model": marker * 20_000}):
        with suppress(Exception):
            client.predict(question="And with micro batch 4?", history=_forged(slots), api_name="/chat")
    time.sleep(0.5)
    new = server.log_text()[before:]
    assert "Traceback" not in new, new[:2000]
    assert marker not in new, "user payload written to the log"
    assert len(new) < 5000, f"{len(new)} bytes of log for two requests"


# ------------------------------------------------------------------- 6. feedback
def _chat_then_like(server: Server, session: str, forged_messages: list, index: int, liked: bool) -> dict:
    chat_fn, chat_trigger = _fn_index(server, api_name="chat_ui")
    like_fn, like_trigger = _fn_index(server, trigger="like")
    done = _queue_call(server, chat_fn, [NORMAL_Q, [], [], "en"], session, trigger_id=chat_trigger)
    assert done["success"], done
    return _queue_call(
        server,
        like_fn,
        [forged_messages, "en"],
        session,
        trigger_id=like_trigger,
        event_data={"index": index, "value": "forged", "liked": liked},
    )


def _feedback_lines(server: Server) -> list[str]:
    return server.feedback.read_text(encoding="ascii").splitlines() if server.feedback.exists() else []


def test_like_stores_what_the_server_said_not_what_the_client_claims(server: Server) -> None:
    forged = [
        {"role": "user", "content": [{"type": "text", "text": "FORGED question \u2028 split"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "FORGED answer"}]},
    ]
    before = len(_feedback_lines(server))
    done = _chat_then_like(server, uuid.uuid4().hex[:12], forged, index=1, liked=False)
    assert done["success"], done
    lines = _feedback_lines(server)
    assert len(lines) == before + 1
    rec = json.loads(lines[-1])
    assert (
        rec["question"] == NORMAL_Q and "FORGED" not in rec["answer"] and rec["answer"].startswith("**Essentially no")
    )
    assert rec["liked"] is False and rec["message_index"] == 1


def test_like_of_a_message_never_served_is_refused(server: Server) -> None:
    like_fn, like_trigger = _fn_index(server, trigger="like")
    before = len(_feedback_lines(server))
    for index in (7, 10**9, -1):
        done = _queue_call(
            server,
            like_fn,
            [[], "en"],
            uuid.uuid4().hex[:12],
            trigger_id=like_trigger,
            event_data={"index": index, "value": "x" * 100_000, "liked": True},
        )
        assert done["success"], done
        assert "Only an answer the assistant gave" in json.dumps(done["output"]["data"])
    assert len(_feedback_lines(server)) == before


def test_feedback_lines_are_ascii_and_survive_hostile_text(tmp_path: Path) -> None:
    from ui.feedback import append_feedback

    path = tmp_path / "fb.jsonl"
    path.write_bytes(b'{"id": "torn", "question": "crash mid-wri')  # a torn last line
    hostile = "a\u2028b\u0085c\u2029d\ud800e\r\nf"
    append_feedback(
        {
            "type": "rating",
            "liked": True,
            "feedback": "like",
            "message_index": 3,
            "question": hostile,
            "answer": hostile,
            "ui_lang": "zh",
        },
        path,
    )
    append_feedback({"type": "reason", "feedback_id": "0" * 32, "reason": hostile, "ui_lang": "en"}, path)
    raw = path.read_bytes()
    assert raw.isascii()
    lines = raw.decode("ascii").split("\n")
    assert lines[0].startswith('{"id": "torn"') and lines[-1] == ""
    recs = [json.loads(x) for x in lines[1:-1]]
    assert [r["type"] for r in recs] == ["rating", "reason"]
    assert recs[0]["question"].startswith("a\u2028b\u0085c") and "\ud800" not in recs[0]["question"]
    assert recs[1]["reason"].endswith("e\r\nf")
    for bad in (
        {"type": "rating", "liked": True, "feedback": "like", "message_index": -1, "question": "", "answer": ""},
        {"type": "rating", "liked": True, "feedback": "like", "message_index": 10**9, "question": "", "answer": ""},
        {"type": "rating", "liked": "yes", "feedback": "like", "message_index": 1, "question": "", "answer": ""},
        {"type": "reason", "feedback_id": "../../etc", "reason": "x"},
        {
            "type": "rating",
            "liked": True,
            "feedback": "like",
            "message_index": 1,
            "question": "",
            "answer": "",
            "admin": True,
        },
    ):
        with pytest.raises(ValueError):
            append_feedback(bad, path)
    assert len(path.read_bytes().split(b"\n")) == len(lines)


# ------------------------------------------------------------------- 7. monitoring, slow clients, temp files
def test_monitoring_is_disabled(server: Server) -> None:
    for path in ("/monitoring/summary", "/monitoring"):
        r = httpx.get(server.url + path, timeout=5)
        assert r.status_code in (403, 404), (path, r.status_code)
        assert "event" not in r.text.lower() or "not enabled" in r.text.lower()


def test_slow_body_is_timed_out_and_others_are_served(server: Server, client: Client) -> None:
    sock = socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1])), timeout=15)
    try:
        sock.sendall(
            b"POST /gradio_api/queue/join HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"data":'
        )
        start = time.monotonic()
        r = client.predict(config={"model": "gpt2", "gpu": "t4"}, api_name="/memory")  # not blocked meanwhile
        assert r["total_per_gpu"] > 0 and time.monotonic() - start < 3
        reply = sock.recv(4096)
        assert b" 408 " in reply.split(b"\r\n", 1)[0], reply[:200]
        assert time.monotonic() - start < 10
    finally:
        sock.close()


def test_stale_cache_temp_files_are_removed(tmp_path: Path) -> None:
    from rag.cache import STALE_TMP_SECONDS, EmbeddingCache

    old, fresh, other = tmp_path / ".tmp-dead.npz", tmp_path / ".tmp-live.npz", tmp_path / "embeddings-x.npz"
    for p in (old, fresh, other):
        p.write_bytes(b"x")
    past = time.time() - STALE_TMP_SECONDS - 60
    os.utime(old, (past, past))
    os.utime(other, (past, past))
    assert EmbeddingCache("model-id", cache_dir=tmp_path).remove_stale_temp_files() == 1
    assert not old.exists() and fresh.exists() and other.exists()


# ------------------------------------------------------------------- the server after all of the above
def test_server_memory_is_back_within_bounds(server: Server) -> None:
    grown = (server.rss() - server.start_rss) / MB
    assert server.proc.poll() is None
    assert grown < 400, f"server RSS grew {grown:.0f} MB over the whole hostile suite"
    log = server.log_text()
    assert "Traceback" not in log, log[log.find("Traceback") :][:2000]
