"""Load on the real server: N concurrent sessions × M questions over Gradio's HTTP API, one asyncio process.

    .venv/bin/python bench/load.py                              # 1, 20 and 100 sessions × 25 questions
    .venv/bin/python bench/load.py --sessions 20 --questions 25 --url http://127.0.0.1:7860/

Why a separate generator: ``tests/test_load.py`` drives ``gradio_client`` from one thread per
client; at 20 clients that client (threads, its own SSE reader per job) spends CPU on the same
2 cores as the server and hides what the server can do. Here every session is an asyncio task
sharing one ``httpx.AsyncClient``; each question is Gradio's two-step call
(``POST /gradio_api/call/chat`` → ``{"event_id"}``, then ``GET /gradio_api/call/chat/<event_id>``,
a server-sent-event stream ending in ``event: complete`` with ``[text, answer]``). The generator's
own CPU time is printed next to the wall time, so it can be seen not to be the bottleneck.

Bounded: ``--questions`` per session and ``--time-limit`` seconds per level (unfinished sessions are
cancelled and counted). Every answer is checked like tests/test_load.py does: it must carry this
session's own setup (micro batch, GA, GPUs, ZeRO stage after follow-ups), else it is an error.

The machine is shared, so absolute figures move with its load; each run first measures a
same-process baseline (``Assistant.ask`` in a loop, no server, one thread) and prints the server's
answers/s as a fraction of it. Without ``--url`` the server is ``python app.py`` in a subprocess with
a temporary feedback store (started after the baseline, so the two never compete).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout, not another one installed in the venv
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MODELS = ["llama-2-7b", "llama-2-13b", "qwen2.5-7b", "mistral-7b"]
WORLD = [1, 2, 4, 8]
FOLLOW_UPS = [
    ("and with ZeRO-3?", {"zero_stage": 3}),
    ("what about ZeRO-2?", {"zero_stage": 2}),
    ("和 ZeRO-3 呢？", {"zero_stage": 3}),
    ("ZeRO-1 呢", {"zero_stage": 1}),
]


def setup_for(session: int, round_: int) -> tuple[str, dict[str, Any]]:
    """A distinct setup per (session, round): the numbers identify the session in its answers."""
    mb = session % 16 + 1
    ga = round_ % 7 + 2
    ws = WORLD[(session + round_) % len(WORLD)]
    model = MODELS[session % len(MODELS)]
    q = (
        f"How much GPU memory per GPU for a {model} full fine-tune with micro batch {mb}, "
        f"gradient_accumulation_steps {ga} on {ws} GPUs?"
    )
    return q, {"train_micro_batch_size_per_gpu": mb, "gradient_accumulation_steps": ga, "world_size": ws}


def script(session: int, questions: int) -> list[tuple[str, dict[str, Any], bool]]:
    """(question, expected slots, starts a new conversation) for one session: a setup, then follow-ups."""
    out: list[tuple[str, dict[str, Any], bool]] = []
    expected: dict[str, Any] = {}
    for i in range(questions):
        if i % 3 == 0:
            q, expected = setup_for(session, i // 3)
            out.append((q, expected, True))
        else:
            q, change = FOLLOW_UPS[(session + i) % len(FOLLOW_UPS)]
            expected = {**expected, **change}
            out.append((q, expected, False))
    return out


def answer_slots(answer: dict[str, Any]) -> dict[str, Any]:
    """The setup the assistant read for the last user turn (what the answer's numbers are for)."""
    user = [h for h in answer.get("history", []) if isinstance(h, dict) and h.get("role") == "user"]
    return {k: v["value"] for k, v in (user[-1].get("setup") or {}).items()} if user else {}


@dataclass
class Level:
    sessions: int
    questions: int
    latencies: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    cpu_s: float = 0.0
    unfinished: int = 0

    @property
    def answers(self) -> int:
        return len(self.latencies)

    def pct(self, p: int) -> float:
        lat = sorted(self.latencies)
        if not lat:
            return float("nan")
        if len(lat) == 1:
            return lat[0]
        return statistics.quantiles(lat, n=100, method="inclusive")[p - 1]


async def _read_result(resp: Any) -> tuple[str, Any]:
    """The last SSE event of a /gradio_api/call GET: ("complete", data) or ("error", data)."""
    event, data = "", None
    async for line in resp.aiter_lines():
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:") and event in ("complete", "error"):
            raw = line[5:].strip()
            try:
                data = json.loads(raw)
            except ValueError:
                data = raw
            return event, data
    return event or "closed", data


async def ask(client: Any, base: str, question: str, history: list | None, session_hash: str | None) -> tuple[str, Any]:
    body: dict[str, Any] = {"data": [question, history, None]}
    if session_hash:
        body["session_hash"] = session_hash
    r = await client.post(f"{base}gradio_api/call/chat", json=body)
    if r.status_code != 200:
        return "http", f"{r.status_code} {r.text[:200]}"
    event_id = r.json()["event_id"]
    async with client.stream("GET", f"{base}gradio_api/call/chat/{event_id}") as resp:
        if resp.status_code != 200:
            return "http", f"GET {resp.status_code}"
        return await _read_result(resp)


async def run_session(client: Any, base: str, session: int, level: Level, reuse_session: bool) -> None:
    history: list | None = None
    # One Gradio session per conversation, as the page and gradio_client keep one: without a session_hash
    # Gradio builds a new session state (the config of every component of the app) for every call.
    session_hash = uuid.uuid4().hex[:11] if reuse_session else None
    for i, (q, expected, fresh) in enumerate(script(session, level.questions)):
        if fresh:
            history = None
        t0 = time.perf_counter()
        try:
            event, data = await ask(client, base, q, history, session_hash)
        except Exception as exc:  # noqa: BLE001 - a failed request is counted, the run goes on
            level.problems.append(f"session {session} q{i}: {type(exc).__name__}: {exc}")
            continue
        level.latencies.append(time.perf_counter() - t0)
        if event == "complete" and isinstance(data, list) and len(data) == 1 and isinstance(data[0], list):
            data = data[0]  # gr.api returns its (text, answer) tuple as one output
        if event != "complete" or not isinstance(data, list) or len(data) != 2:
            level.problems.append(f"session {session} q{i}: {event}: {str(data)[:200]}")
            continue
        text, answer = data
        if not isinstance(text, str) or not text.strip() or not isinstance(answer, dict):
            level.problems.append(f"session {session} q{i}: empty answer")
            continue
        got = answer_slots(answer)
        wrong = {k: (got.get(k), v) for k, v in expected.items() if got.get(k) != v}
        if wrong:
            level.problems.append(f"session {session} q{i} {q!r}: slots (got, expected) {wrong}")
        history = answer.get("history")


async def run_level(base: str, sessions: int, questions: int, time_limit: float, reuse_session: bool = True) -> Level:
    import httpx

    level = Level(sessions, questions)
    limits = httpx.Limits(max_connections=2 * sessions + 10, max_keepalive_connections=2 * sessions + 10)
    timeout = httpx.Timeout(time_limit, connect=30.0)
    async with httpx.AsyncClient(limits=limits, timeout=timeout) as client:
        tasks = [asyncio.create_task(run_session(client, base, s, level, reuse_session)) for s in range(sessions)]
        c0, t0 = time.process_time(), time.perf_counter()
        done, pending = await asyncio.wait(tasks, timeout=time_limit)
        level.wall_s, level.cpu_s = time.perf_counter() - t0, time.process_time() - c0
        for t in pending:
            t.cancel()
        level.unfinished = len(pending)
        await asyncio.gather(*pending, return_exceptions=True)
    if level.unfinished:
        level.problems.append(f"{level.unfinished} sessions unfinished after {time_limit:.0f} s")
    return level


_BOT: Any = None


def baseline(seconds: float) -> dict[str, float]:
    """Bare ``Assistant.ask`` answers/s in this process, one thread, the same questions, no server."""
    global _BOT
    import torch

    torch.set_num_threads(1)  # as app.py (BATCHBOT_TORCH_THREADS default 1)
    from rag import Assistant

    bot = _BOT = _BOT or Assistant()
    qs = [q for s in range(20) for q, _, _ in script(s, 3)]
    for q in qs[:5]:
        bot.ask(q)
    lat: list[float] = []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        q = qs[len(lat) % len(qs)]
        a = time.perf_counter()
        bot.ask(q)
        lat.append(time.perf_counter() - a)
    wall = time.perf_counter() - t0
    lat.sort()
    return {
        "answers_per_s": len(lat) / wall,
        "p50_ms": statistics.median(lat) * 1000,
        "p95_ms": statistics.quantiles(lat, n=100, method="inclusive")[94] * 1000,
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(extra: list[str], timeout: float = 180) -> tuple[subprocess.Popen, str]:
    port = free_port()
    tmp = tempfile.mkdtemp(prefix="batchbot-load-")
    env = dict(
        os.environ,
        GRADIO_ANALYTICS_ENABLED="False",
        PYTHONPATH=str(ROOT),
        BATCHBOT_FEEDBACK_FILE=f"{tmp}/feedback.jsonl",
        BATCHBOT_FEEDBACK_DB=f"{tmp}/feedback.sqlite3",
    )
    proc = subprocess.Popen(
        [sys.executable, "app.py", "--port", str(port), "--no-mcp", *extra],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/"
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.stderr.read()[-2000:] if proc.stderr else ''}")
        try:
            with urllib.request.urlopen(url + "gradio_api/info", timeout=5) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("server did not become ready")


def warm(url: str) -> None:
    """A few answers first: the server's first answer pays lazy imports and allocations."""
    asyncio.run(run_level(url, 2, 3, 120))


def table(levels: list[Level], base: dict[str, float] | None) -> str:
    out = [
        "| sessions × questions | answers | errors | p50 ms | p95 ms | max ms | answers/s | of baseline | "
        "generator CPU |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for lv in levels:
        rate = lv.answers / lv.wall_s if lv.wall_s else 0.0
        share = f"{rate / base['answers_per_s']:.0%}" if base else "-"
        mx = max(lv.latencies) * 1000 if lv.latencies else float("nan")
        out.append(
            f"| {lv.sessions} × {lv.questions} | {lv.answers} | {len(lv.problems)} | {lv.pct(50) * 1000:.0f} | "
            f"{lv.pct(95) * 1000:.0f} | {mx:.0f} | {rate:.1f} | {share} | {lv.cpu_s / lv.wall_s:.0%} |"
        )
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[1, 20, 100], help="concurrent sessions per level")
    ap.add_argument("--questions", type=int, default=25, help="questions per session")
    ap.add_argument("--time-limit", type=float, default=300.0, help="seconds per level before sessions are cancelled")
    ap.add_argument("--url", default=None, help="an already running app (default: start python app.py)")
    ap.add_argument("--baseline-s", type=float, default=10.0, help="seconds of bare Assistant.ask (0: skip)")
    ap.add_argument(
        "--no-session",
        action="store_true",
        help="send no session_hash (each call a new Gradio session, as a bare HTTP client does)",
    )
    ap.add_argument("--server-arg", action="append", default=[], help="extra argument for app.py (repeatable)")
    args = ap.parse_args()
    if any(s < 1 or s > 500 for s in args.sessions) or not 1 <= args.questions <= 1000:
        ap.error("sessions must be 1-500 and questions 1-1000")
    base = baseline(args.baseline_s) if args.baseline_s > 0 else None
    proc = None
    url = args.url
    if url is None:
        t0 = time.perf_counter()
        proc, url = start_server(args.server_arg)
        print(f"server ready in {time.perf_counter() - t0:.1f} s at {url}")
    url = url if url.endswith("/") else url + "/"
    try:
        warm(url)
        levels = [
            asyncio.run(run_level(url, s, args.questions, args.time_limit, not args.no_session)) for s in args.sessions
        ]
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    after = baseline(args.baseline_s) if base else None
    load = os.getloadavg()
    print(f"cores: {os.cpu_count()}; load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if base and after:
        for name, b in (("before", base), ("after", after)):
            print(
                f"same-process baseline {name} the load (bare Assistant.ask, 1 thread, no server): "
                f"{b['answers_per_s']:.1f} answers/s, p50 {b['p50_ms']:.0f} ms, p95 {b['p95_ms']:.0f} ms"
            )
        base = {"answers_per_s": (base["answers_per_s"] + after["answers_per_s"]) / 2}
        print('"of baseline": answers/s over the mean of the two baselines')
    print(table(levels, base))
    for lv in levels:
        for p in lv.problems[:5]:
            print(f"  [{lv.sessions} sessions] {p}")
    return 1 if any(lv.problems for lv in levels) else 0


if __name__ == "__main__":
    sys.exit(main())
