"""Concurrency: the real app server, N gradio_client clients × M questions at once, on loopback.

Each client is one session with its own setup (micro batch, GA, GPU count, model size), asked
as a question and then as follow-ups that pass back that session's ``history``. Every answer
must carry this client's own slots (never another session's), with zero errors.

    pytest -m slow tests/test_load.py -s                          # 8 clients × 6 questions
    .venv/bin/python tests/test_load.py --clients 20 --questions 25   # the bench size
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

MODELS = ["llama-2-7b", "llama-2-13b", "qwen2.5-7b", "mistral-7b"]
WORLD = [1, 2, 4, 8]
FOLLOW_UPS = [
    ("and with ZeRO-3?", {"zero_stage": 3}),
    ("what about ZeRO-2?", {"zero_stage": 2}),
    ("和 ZeRO-3 呢？", {"zero_stage": 3}),
    ("ZeRO-1 呢", {"zero_stage": 1}),
]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def setup_for(client: int, round_: int) -> tuple[str, dict[str, Any]]:
    """A distinct setup per (client, round): the numbers identify the session."""
    mb = client % 16 + 1
    ga = round_ % 7 + 2
    ws = WORLD[(client + round_) % len(WORLD)]
    model = MODELS[client % len(MODELS)]
    q = (
        f"How much GPU memory per GPU for a {model} full fine-tune with micro batch {mb}, "
        f"gradient_accumulation_steps {ga} on {ws} GPUs?"
    )
    return q, {"train_micro_batch_size_per_gpu": mb, "gradient_accumulation_steps": ga, "world_size": ws}


def _slots(answer: dict[str, Any]) -> dict[str, Any]:
    user = [h for h in answer.get("history", []) if h.get("role") == "user"]
    return {k: v["value"] for k, v in (user[-1].get("setup") or {}).items()} if user else {}


def run_client(url: str, client: int, questions: int, latencies: list[float], lock: threading.Lock) -> list[str]:
    """One session: setup, follow-ups, a new setup every 3 questions. Returns the problems seen."""
    from gradio_client import Client

    c = Client(url, verbose=False)
    problems: list[str] = []
    history: list[dict[str, Any]] | None = None
    expected: dict[str, Any] = {}
    for i in range(questions):
        if i % 3 == 0:
            q, expected = setup_for(client, i // 3)
            history = None
        else:
            q, change = FOLLOW_UPS[(client + i) % len(FOLLOW_UPS)]
            expected = {**expected, **change}
        t0 = time.perf_counter()
        try:
            text, answer = c.predict(q, history, api_name="/chat")
        except Exception as exc:  # noqa: BLE001 - counted as an error
            problems.append(f"client {client} q{i}: {type(exc).__name__}: {exc}")
            continue
        finally:
            with lock:
                latencies.append(time.perf_counter() - t0)
        if not isinstance(text, str) or not text.strip():
            problems.append(f"client {client} q{i}: empty answer")
        got = _slots(answer)
        wrong = {k: (got.get(k), v) for k, v in expected.items() if got.get(k) != v}
        if wrong:
            problems.append(f"client {client} q{i} {q!r}: slots (got, expected) {wrong}")
        history = answer.get("history")
    return problems


def load(url: str, clients: int, questions: int) -> dict[str, Any]:
    latencies: list[float] = []
    lock = threading.Lock()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        futures = [pool.submit(run_client, url, i, questions, latencies, lock) for i in range(clients)]
        problems = [p for f in futures for p in f.result()]
    wall = time.perf_counter() - t0
    lat = sorted(latencies)
    q = statistics.quantiles(lat, n=100, method="inclusive") if len(lat) > 1 else lat * 99
    return {
        "clients": clients,
        "questions": questions,
        "requests": len(lat),
        "errors": len(problems),
        "problems": problems,
        "p50_ms": q[49] * 1000,
        "p95_ms": q[94] * 1000,
        "max_ms": lat[-1] * 1000,
        "wall_s": wall,
        "throughput_rps": len(lat) / wall,
    }


def launch(assistant: Any = None) -> tuple[Any, str]:
    from app import build_app

    demo = build_app(assistant) if assistant is not None else build_app()  # queue limits as app.py (ui/limits.py)
    port = free_port()
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=port, quiet=True)
    return demo, f"http://127.0.0.1:{port}/"


def report(r: dict[str, Any]) -> str:
    return (
        f"| clients × questions | requests | errors | p50 ms | p95 ms | max ms | req/s |\n|---|---:|---:|---:|---:|---:|---:|\n"
        f"| {r['clients']} × {r['questions']} | {r['requests']} | {r['errors']} | {r['p50_ms']:.0f} | "
        f"{r['p95_ms']:.0f} | {r['max_ms']:.0f} | {r['throughput_rps']:.1f} |"
    )


@pytest.fixture(scope="module")
def server_url(request: pytest.FixtureRequest) -> Any:
    try:  # share the session's Assistant when conftest provides one
        assistant = request.getfixturevalue("assistant")
    except pytest.FixtureLookupError:
        assistant = None
    demo, url = launch(assistant)
    yield url
    demo.close()


@pytest.mark.slow
def test_concurrent_sessions_do_not_mix(server_url: str) -> None:
    r = load(server_url, clients=8, questions=6)
    print("\n" + report(r))
    assert r["requests"] == 8 * 6
    assert r["errors"] == 0, "\n".join(r["problems"][:10])


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--questions", type=int, default=25)
    ap.add_argument("--url", default=None, help="an already running app (default: launch one in this process)")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads for the in-process server")
    args = ap.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    demo = None
    url = args.url
    if url is None:
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
        demo, url = launch()
    res = load(url, args.clients, args.questions)
    print(report(res))
    for p in res["problems"][:20]:
        print("  ", p)
    if demo is not None:
        demo.close()
    sys.exit(1 if res["errors"] else 0)
