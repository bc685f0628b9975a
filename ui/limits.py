"""Limits a public endpoint needs, in one place: request body size, body read time, uploads, the queue.

Why: without them one request could take the server down for everyone (a 600 MB /chat body
was accepted and held 2 GB; 50 MB uploads were stored although the app has no file inputs; the
queue had no maximum). Gradio 6 has settings for uploads (``max_file_size``) and the queue
(``max_size``, concurrency limits) but none for the size of a JSON request body or for a client
that sends its body slowly, so :class:`BodyLimitMiddleware` adds those at the ASGI level.

The numbers are documented in docs/security.md; change them here, nowhere else.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger("batchbot.limits")

#: Largest request body accepted (bytes). The biggest legitimate input is a 100,000-character
#: config for /check_config: at most ~600 kB even as \\uXXXX-escaped Chinese in JSON.
MAX_BODY_BYTES = 1024 * 1024
#: A client must finish sending its body within this many seconds (slow-body clients);
#: the environment variable BATCHBOT_BODY_TIMEOUT_S overrides it.
BODY_TIMEOUT_S = 30.0
#: Events waiting in Gradio's queue; the next one is refused with "queue is full". Sized for 100
#: concurrent API sessions with one answer in flight each (with 8 running, 92 wait: more than the earlier 64; bench/load.py --sessions 100, README "Serving a team"). Not more:
#: each event from a new session costs Gradio a session state (the config of every component, kept even
#: when the event is refused: tests/test_hostile.py's flood of 3 × 128 grew the server by 208 MB, over
#: its 200 MB bound), and a waiting event holds its request body (at most MAX_BODY_BYTES).
MAX_QUEUE_SIZE = 100
#: Events of one kind running at once (Gradio's worker threads per concurrency id). Chosen from
#: bench/load.py, 20 sessions, on 2 cores: see README "Serving a team" for the table per setting.
#: More running answers put more queries into one batched embedding forward pass
#: (rag.embedding.QueryBatcher), while each runs slower under the GIL; BATCHBOT_CONCURRENCY overrides it.
CONCURRENCY_LIMIT = 8
ENV_CONCURRENCY = "BATCHBOT_CONCURRENCY"
#: The app has no file inputs; Gradio's own upload limit is set as low as it goes, and
#: BodyLimitMiddleware refuses POST .../upload outright.
MAX_FILE_SIZE = "1kb"

_Scope = dict[str, Any]
_Receive = Callable[[], Awaitable[dict[str, Any]]]
_Send = Callable[[dict[str, Any]], Awaitable[None]]


def launch_settings() -> dict[str, Any]:
    """Keyword arguments for ``Blocks.launch`` that install the limits (and keep monitoring off)."""
    from starlette.middleware import Middleware

    return {
        "max_file_size": MAX_FILE_SIZE,
        "enable_monitoring": False,
        "app_kwargs": {"middleware": [Middleware(BodyLimitMiddleware, timeout=body_timeout())]},
    }


def concurrency_limit(env: dict[str, str] | None = None) -> int:
    """CONCURRENCY_LIMIT, or BATCHBOT_CONCURRENCY when it is an integer from 1 to 64 (else a warning)."""
    raw = (os.environ if env is None else env).get(ENV_CONCURRENCY, "").strip()
    if not raw:
        return CONCURRENCY_LIMIT
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if 1 <= value <= 64:
        return value
    log.warning("%s=%r is not an integer from 1 to 64; using %d", ENV_CONCURRENCY, raw, CONCURRENCY_LIMIT)
    return CONCURRENCY_LIMIT


def body_timeout(env: dict[str, str] | None = None) -> float:
    """BODY_TIMEOUT_S, or BATCHBOT_BODY_TIMEOUT_S when it is a number from 1 to 600."""
    raw = (os.environ if env is None else env).get("BATCHBOT_BODY_TIMEOUT_S", "")
    try:
        value = float(raw)
    except ValueError:
        return BODY_TIMEOUT_S
    return value if 1 <= value <= 600 else BODY_TIMEOUT_S


async def _refuse(send: _Send, status: int, en: str, zh: str) -> None:
    body = json.dumps({"detail": f"{en}\n{zh}", "error": f"{en}\n{zh}"}, ensure_ascii=True).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyLimitMiddleware:
    """Pure ASGI middleware: refuse uploads, bodies over ``max_body`` bytes, and bodies slower than ``timeout`` s.

    A declared ``Content-Length`` over the limit is refused before a byte is read; a chunked or
    lying body is read up to the limit (never more is held in memory) and then refused. The body
    is buffered (at most ``max_body`` bytes) and replayed to the app, so handlers see it unchanged.
    """

    def __init__(
        self, app: Callable[..., Awaitable[None]], max_body: int = MAX_BODY_BYTES, timeout: float = BODY_TIMEOUT_S
    ) -> None:
        self.app, self.max_body, self.timeout = app, max_body, timeout

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        method = scope.get("method", "GET")
        path = str(scope.get("path", "")).rstrip("/")
        if method == "POST" and path.endswith("/upload"):
            log.info("refused an upload (the app has no file inputs)")
            await _refuse(send, 413, "This app accepts no file uploads.", "本应用不接受文件上传。")
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                await _refuse(send, 400, "Invalid Content-Length header.", "Content-Length 请求头无效。")
                return
            if int(declared) > self.max_body:
                log.info("refused a request body of %s bytes", int(declared))
                await _refuse(
                    send,
                    413,
                    f"Request body too large (limit {self.max_body:,} bytes).",
                    f"请求体过大（上限 {self.max_body:,} 字节）。",
                )
                return
        if (
            method in ("GET", "HEAD", "OPTIONS", "DELETE")
            and declared in (None, b"0")
            and b"chunked" not in headers.get(b"transfer-encoding", b"")
        ):
            await self.app(scope, receive, send)  # no body; keeps SSE disconnect detection untouched
            return
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return
                    part = message.get("body", b"")
                    size += len(part)
                    if size > self.max_body:
                        log.info("refused a streamed request body over %s bytes", self.max_body)
                        await _refuse(
                            send,
                            413,
                            f"Request body too large (limit {self.max_body:,} bytes).",
                            f"请求体过大（上限 {self.max_body:,} 字节）。",
                        )
                        return
                    chunks.append(part)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            log.info("refused a request body not received within %.0f s", self.timeout)
            await _refuse(
                send,
                408,
                f"Request body not received within {self.timeout:.0f} s.",
                f"请求体未在 {self.timeout:.0f} 秒内收到。",
            )
            return
        body = b"".join(chunks)
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
