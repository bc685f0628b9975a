"""/fact_check over HTTP (gradio_client against the real app server), including the refusal of bad input."""

from __future__ import annotations

import pytest
from gradio_client import Client


@pytest.fixture(scope="module")
def client(app_server):
    return Client(app_server.url, verbose=False)


def test_fact_check_endpoint(client):
    out = client.predict(
        text="Lower gradient_accumulation_steps to reduce memory. Gradient checkpointing saves memory.",
        lang="en",
        api_name="/fact_check",
    )
    assert out["counts"]["wrong"] == 1
    (claim,) = out["claims"]
    assert claim["card_id"] == "myth-lower-ga-saves-memory" and claim["sources"][0]["url"].startswith("https://")
    assert "Lower gradient" in out["markdown"]


def test_fact_check_endpoint_refuses_empty_text_in_both_languages(client):
    with pytest.raises(Exception) as exc:
        client.predict(text="  ", api_name="/fact_check")
    msg = str(exc.value)
    assert "text" in msg and "Accepted" in msg and "可接受" in msg and "Traceback" not in msg


def test_agent_endpoints_exist(client):
    names = set(client.view_api(return_format="dict", print_info=False)["named_endpoints"])
    assert {"/fact_check", "/memory_estimate", "/memory_sweep", "/config_check", "/card_search"} <= names
