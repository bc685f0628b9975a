"""The diagnoser in the app: the /diagnose endpoint function and the "Paste an error or log" panel (no server)."""

from __future__ import annotations

from pathlib import Path

import gradio as gr
import pytest

from ui.api import diagnose_endpoint, register_calculator_api
from ui.calculators_tab import build_calculators_tab, wire_calculators_tab
from ui.check_tab import build_check_tab, wire_check_tab
from ui.diagnose_panel import run_diagnose
from ui.labels import Labels

PASTE = (Path(__file__).parent / "data" / "pastes" / "ds_batch_torchrun_starcoder41.txt").read_text(encoding="utf-8")


def test_endpoint_returns_markdown_and_structure() -> None:
    out = diagnose_endpoint(PASTE, lang="zh")
    assert out["diagnosis"]["causes"][0]["id"] == "ds.world_size_mismatch"
    assert "### 我读到的" in out["markdown"]
    en = diagnose_endpoint(PASTE, lang="en-US", setup={"model": "llama-3-8b"})
    assert "### What I read" in en["markdown"]


@pytest.mark.parametrize("bad", ["", "   ", None, "x" * 2_000_001])
def test_endpoint_refuses_bad_text_clearly(bad) -> None:
    with pytest.raises(gr.Error) as err:
        diagnose_endpoint(bad)  # type: ignore[arg-type]
    assert "[text]" in str(err.value) and "粘贴" in str(err.value)


def test_endpoint_refuses_bad_setup_naming_the_field() -> None:
    with pytest.raises(gr.Error) as err:
        diagnose_endpoint(PASTE, setup=[1, 2])  # type: ignore[arg-type]
    assert "setup" in str(err.value)


def test_panel_handler_never_raises() -> None:
    assert "Paste" in run_diagnose("", "en") and "粘贴" in run_diagnose(None, "zh")
    assert "too long" in run_diagnose("x" * 2_000_001, "en")
    assert "DeepSpeed" in run_diagnose(PASTE, "zh")
    assert "nothing recognised" in run_diagnose("just some words", "en")


def test_panel_and_endpoint_are_in_the_app() -> None:
    with gr.Blocks() as demo:
        lang_state = gr.State("en")
        L = Labels("en")
        handles = build_calculators_tab(L)
        wire_calculators_tab(handles, lang_state)
        wire_check_tab(build_check_tab(L), lang_state)
        register_calculator_api()
    ids = {getattr(b, "elem_id", None) for b in demo.blocks.values()}
    assert {"diagnose-paste", "d_text", "run-diagnose", "diagnose-report", "config-doctor"} <= ids
    api_names = {getattr(fn, "api_name", None) for fn in demo.fns.values()}
    assert "diagnose" in api_names
    box = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "d_text")
    assert (
        box.label == "Paste a CUDA OOM message, DeepSpeed / HF error, launch command, nvidia-smi output or training log"
    )
    zh = [u for u in L.updates("zh") if isinstance(u, dict) and u.get("label") == "粘贴报错或日志"]
    assert zh


def test_diagnose_over_http(app_server) -> None:
    """The real app, queried the way other programs do."""
    from gradio_client import Client

    c = Client(app_server.url, verbose=False)
    assert "/diagnose" in c.view_api(return_format="dict", print_info=False)["named_endpoints"]
    out = c.predict(text=PASTE, lang="en", setup=None, api_name="/diagnose")
    assert out["diagnosis"]["causes"][0]["id"] == "ds.world_size_mismatch"
    with pytest.raises(Exception) as err:
        c.predict(text="   ", lang="zh", setup=None, api_name="/diagnose")
    assert "粘贴" in str(err.value)
