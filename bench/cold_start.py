"""Cold start: index build with and without the embedding cache, time to a ready server, peak RSS.

    .venv/bin/python bench/cold_start.py

Every measurement runs in a fresh Python process (imports included) with its own temporary
``BATCHBOT_CACHE_DIR``:

1. ``Assistant()`` with an empty cache folder (every passage embedded, cache file written);
2. ``Assistant()`` again with that folder (cache hit: no passage embedded);
3. ``python app.py --port X`` with the warm cache, polled until ``GET /`` answers 200 ("ready": the
   page, calculators and config check work; the model may still be loading on its thread), and then
   until its first ``/chat`` answer (the model loaded, the answer complete);
4. the phases of that start, each timed once in a fresh process in the order app.py does them:
   imports (gradio and the app's modules), cards, the model-setting check, Gradio build, launch —
   and on the background thread: torch/llama-index imports, model load, embedding cache + BM25.

Peak RSS: ``VmHWM`` from ``/proc/<pid>/status`` (Linux; no psutil needed) for the server, and
``resource.getrusage`` inside the Assistant processes.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

CHILD = r"""
import json, resource, time
t0 = time.perf_counter()
import rag.retrieval, rag.embedding  # noqa: F401
from rag import Assistant
t1 = time.perf_counter()
bot = Assistant()
t2 = time.perf_counter()
bot.ask("gradient_accumulation_steps 增大会增加显存吗")
t3 = time.perf_counter()
r = bot.retriever.cache_result
print(json.dumps({"import_s": t1 - t0, "build_s": t2 - t1, "first_ask_s": t3 - t2, "status": r.status,
                  "embedded": r.embedded, "passages": len(bot.retriever.dense_nodes),
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


PHASES = r"""
import json, sys, threading, time
T = {}
t0 = time.perf_counter()
def mark(name, since):
    T[name] = time.perf_counter() - since
    return time.perf_counter()
t = t0
import gradio  # noqa: F401
t = mark("import gradio", t)
from ui.build import build_app
t = mark("import app modules (ui, calculators)", t)
from rag.cards import load_cards
from rag.embedding import EmbeddingSettings, check_model_setting
cards = load_cards()
t = mark("cards (parse + validate)", t)
check_model_setting(EmbeddingSettings.from_env())
t = mark("model setting check", t)
B = {}
def background():
    s = time.perf_counter()
    import torch, sentence_transformers, llama_index.core  # noqa: F401
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding  # noqa: F401
    from rag import Assistant
    from rag.retrieval import Retriever
    B["bg: import torch, sentence-transformers, llama-index"] = time.perf_counter() - s
    s = time.perf_counter()
    from rag.embedding import load_embedding
    model = load_embedding(EmbeddingSettings.from_env())
    B["bg: model load"] = time.perf_counter() - s
    s = time.perf_counter()
    bot = Assistant(cards=cards, retriever=Retriever(cards=cards, embed_model=model, progress=False))
    B["bg: embedding cache + BM25 index"] = time.perf_counter() - s
    s = time.perf_counter()
    bot.ask("gradient_accumulation_steps 增大会增加显存吗")
    B["bg: first answer"] = time.perf_counter() - s
    B["bg: done at"] = time.perf_counter() - t0
th = threading.Thread(target=background)
th.start()
from rag.background import BackgroundAssistant
bot = BackgroundAssistant(lambda c: None, cards, batches_queries=True)
demo = build_app(bot)
t = mark("Gradio build (build_app)", t)
demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=int(sys.argv[1]), quiet=True)
t = mark("Gradio launch", t)
T["ready at"] = time.perf_counter() - t0
th.join()
demo.close()
print(json.dumps({"main": T, "background": B}))
"""


def phases_run(cache: str) -> dict:
    out = subprocess.run(
        [PY, "-c", PHASES, str(free_port())], cwd=ROOT, env=env_with(cache), capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def env_with(cache: str) -> dict[str, str]:
    # PYTHONPATH: the children import this checkout, not another one installed editable in the venv.
    env = dict(
        os.environ,
        BATCHBOT_CACHE_DIR=cache,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        GRADIO_ANALYTICS_ENABLED="False",
        PYTHONPATH=str(ROOT),
    )
    env.pop("BATCHBOT_EMBED_MODEL", None)
    return env


def assistant_run(cache: str) -> dict:
    t0 = time.perf_counter()
    out = subprocess.run([PY, "-c", CHILD], cwd=ROOT, env=env_with(cache), capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["process_s"] = time.perf_counter() - t0
    return res


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def vm_hwm_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def server_run(cache: str, timeout: float = 300) -> dict:
    port = free_port()
    feedback = tempfile.mkdtemp(prefix="batchbot-fb-")
    env = env_with(cache) | {"BATCHBOT_FEEDBACK_FILE": f"{feedback}/feedback.jsonl"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [PY, "app.py", "--port", str(port)], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    ready = answered = None
    try:
        while time.perf_counter() - t0 < timeout and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as resp:
                    if resp.status == 200:
                        ready = time.perf_counter() - t0
                        break
            except OSError:
                time.sleep(0.05)
        if ready is not None:
            answered = first_answer_s(port, t0)
        rss = vm_hwm_mib(proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    return {"ready_s": ready, "answer_s": answered, "peak_rss_mib": rss}


def first_answer_s(port: int, t0: float) -> float | None:
    """Seconds from the process start to the end of its first /chat answer (Gradio's two-step HTTP API)."""
    base = f"http://127.0.0.1:{port}/gradio_api/call/chat"
    body = json.dumps({"data": ["gradient_accumulation_steps 增大会增加显存吗", None, None]}).encode()
    req = urllib.request.Request(base, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as resp:
        event_id = json.loads(resp.read())["event_id"]
    with urllib.request.urlopen(f"{base}/{event_id}", timeout=300) as resp:
        text = resp.read().decode()
    return time.perf_counter() - t0 if "event: complete" in text and "GA" in text else None


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="batchbot-cache-") as cache:
        cold = assistant_run(cache)
        warm = assistant_run(cache)
        server = server_run(cache)
        phases = phases_run(cache)
    load = os.getloadavg()
    print(f"cores: {os.cpu_count()}; load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n")
    print(
        "| run (fresh process each) | imports s | Assistant() s | first ask s | cache | passages embedded | peak RSS MiB |"
    )
    print("|---|---:|---:|---:|---|---:|---:|")
    for name, r in [("empty embedding cache", cold), ("warm embedding cache", warm)]:
        print(
            f"| {name} | {r['import_s']:.1f} | {r['build_s']:.1f} | {r['first_ask_s']:.2f} | {r['status']} | "
            f"{r['embedded']}/{r['passages']} | {r['peak_rss_mib']:.0f} |"
        )
    print(
        f"\nindex build: {cold['build_s']:.1f} s without cache, {warm['build_s']:.1f} s with cache "
        f"({cold['build_s'] / warm['build_s']:.1f}x faster with the cache)"
    )
    ready = "did not become ready" if server["ready_s"] is None else f"{server['ready_s']:.1f} s"
    rss = "n/a" if server["peak_rss_mib"] is None else f"{server['peak_rss_mib']:.0f} MiB"
    answer = "no answer" if server["answer_s"] is None else f"{server['answer_s']:.1f} s"
    print(
        f"`python app.py --port X` (warm cache) to first HTTP 200 on /: {ready}; to its first /chat answer: "
        f"{answer}; server peak RSS {rss}"
    )
    print(
        "\nPhases (one fresh process, warm cache, each done once; bg = the model thread, concurrent with the rest):\n"
    )
    print("| phase | s |\n|---|---:|")
    for name, sec in list(phases["main"].items()) + list(phases["background"].items()):
        print(f"| {name} | {sec:.2f} |")


if __name__ == "__main__":
    main()
