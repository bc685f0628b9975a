"""Time and memory of the issue-19 attacks against a fresh `python app.py` (the numbers in docs/security.md).

    .venv/bin/python bench/security_probe.py

Starts the server on a free loopback port, asks one normal question, then sends each attack once and
prints how long the refusal took and the server's RSS (process and children, from /proc) after it.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# tests/ is not part of the installed package: the hostile-server helpers are imported from the checkout.
sys.path.insert(0, str(ROOT / "tests"))
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")

import httpx  # noqa: E402
from gradio_client import Client  # noqa: E402
from test_hostile import _free_port, _rss, billion_laughs  # noqa: E402


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="batchbot-probe-"))
    port = _free_port()
    env = {**os.environ, "BATCHBOT_FEEDBACK_FILE": str(tmp / "feedback.jsonl")}
    proc = subprocess.Popen(
        [sys.executable, "app.py", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=open(tmp / "server.log", "wb"),  # noqa: SIM115 (open while the server runs)
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(480):
            try:
                if httpx.get(url + "/config", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        c = Client(url, verbose=False)
        c.predict(question="Does gradient accumulation use more memory?", api_name="/chat")
        print(f"server RSS after start-up and one question: {_rss(proc.pid) // 2**20} MiB")

        def timed(label: str, fn) -> None:
            start = time.monotonic()
            with contextlib.suppress(Exception):  # refusals arrive as exceptions from gradio_client
                fn()
            print(f"{label}: {time.monotonic() - start:.3f} s, RSS {_rss(proc.pid) // 2**20} MiB")

        bomb = billion_laughs()
        fifo = tmp / "fifo"
        os.mkfifo(fifo)

        def big_body() -> None:
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(
                    f"POST /gradio_api/queue/join HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {600 * 2**20}\r\n\r\n{{".encode()
                )
                print("   ", s.recv(200).split(b"\r\n")[0].decode())

        timed(f"alias bomb ({len(bomb)} chars) /check_config", lambda: c.predict(text=bomb, api_name="/check_config"))
        timed(
            "alias bomb in /chat",
            lambda: c.predict(question=f"check\n```yaml\ntrain_batch_size: 8\n{bomb}\n```", api_name="/chat"),
        )
        timed(
            "hf_config=/dev/urandom /memory",
            lambda: c.predict(config={"hf_config": "/dev/urandom", "gpu": "t4"}, api_name="/memory"),
        )
        timed(
            "hf_config=FIFO /sweep",
            lambda: c.predict(
                config={"hf_config": str(fifo), "gpu": "t4"}, field="seq_len", values=[512], api_name="/sweep"
            ),
        )
        timed("600 MiB declared body", big_body)
        timed(
            "900,000-character GPU name /memory",
            lambda: c.predict(config={"model": "gpt2", "gpu": "G" * 900_000}, api_name="/memory"),
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
