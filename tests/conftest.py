"""Server fixtures for the app tests: one assistant and one app server per test session."""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def launched(demo: Any, **launch_kwargs: Any) -> Iterator[str]:
    """``demo`` (a built app) served on a free loopback port for the ``with`` block; yields its base URL.

    The one way the tests start a Gradio server in this process (app_server, prefixed_server, the MCP server):
    launched without blocking, closed afterwards even when a test fails. ``launch_kwargs`` go to ``demo.launch``."""
    port = free_port()
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=port, quiet=True, **launch_kwargs)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        demo.close()


class Server:
    def __init__(self, demo: Any, url: str, port: int, feedback_file: Path) -> None:
        self.demo, self.url, self.port, self.feedback_file = demo, url.rstrip("/"), port, feedback_file


@pytest.fixture(scope="session")
def assistant() -> Any:
    """The real rag.Assistant, built once (a few seconds on CPU with a warm embedding cache)."""
    from rag import Assistant

    return Assistant()


class NoRetriever:
    """A retriever that finds no card: the answer engine's understanding and composition without the embedding
    model, so the tiers that use it run in seconds."""

    def retrieve(self, query: str, k: int = 3) -> list[Any]:
        return []


@pytest.fixture(scope="session")
def bot_without_retrieval() -> Any:
    """A real rag.Assistant over the real cards whose retriever finds nothing (see :class:`NoRetriever`)."""
    from rag import Assistant
    from rag.cards import load_cards

    return Assistant(cards=load_cards(), retriever=NoRetriever())


@pytest.fixture(scope="session")
def feedback_file() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="batchbot-feedback-"))
    path = d / "feedback.jsonl"
    old = os.environ.get("BATCHBOT_FEEDBACK_FILE")
    os.environ["BATCHBOT_FEEDBACK_FILE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("BATCHBOT_FEEDBACK_FILE", None)
    else:
        os.environ["BATCHBOT_FEEDBACK_FILE"] = old


@pytest.fixture(scope="session")
def app_server(assistant: Any, feedback_file: Path) -> Iterator[Server]:
    """build_app() launched once on a free loopback port."""
    from app import build_app

    demo = build_app(assistant, stream_delay=0.01)
    with launched(demo) as url:
        yield Server(demo, url, _port(url), feedback_file)


@pytest.fixture(scope="session")
def prefixed_server(assistant: Any, feedback_file: Path) -> Iterator[Server]:
    """A second instance with root_path=/batchbot, as `app.py --root-path /batchbot` runs it behind a proxy."""
    from app import build_app, parse_args

    args = parse_args(["--root-path", "batchbot/"], env={})
    assert args.root_path == "/batchbot"
    demo = build_app(assistant, stream_delay=0.01)
    with launched(demo, root_path=args.root_path) as url:
        yield Server(demo, url, _port(url), feedback_file)


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])
