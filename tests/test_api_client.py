"""Which chat events skip the simulated streaming: programs (gradio_client, MCP, /gradio_api/call), not the page."""

from __future__ import annotations

from types import SimpleNamespace

from ui.api import is_api_client


def req(path: str, **headers: str) -> SimpleNamespace:
    return SimpleNamespace(headers=headers, url=SimpleNamespace(path=path))


def test_programs_are_api_clients_and_the_page_is_not() -> None:
    assert is_api_client(req("/gradio_api/queue/join", **{"x-gradio-user": "api"}))  # gradio_client
    assert is_api_client(req("/gradio_api/queue/join", **{"x-gradio-user": "mcp"}))  # Gradio's MCP server
    assert is_api_client(req("/batchbot/gradio_api/call/chat_ui"))  # plain HTTP, behind a prefix
    assert not is_api_client(req("/gradio_api/queue/join"))  # the page's own client
    assert not is_api_client(req("/gradio_api/queue/join", **{"x-gradio-user": "someone"}))
    assert not is_api_client(None)  # a direct Python call
    assert not is_api_client(object())  # no headers, no url
