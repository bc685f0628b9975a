"""Fault injection: what happens when files and settings around the assistant are broken.

* embedding cache file corrupt or missing → rebuilt, a warning, the same vectors and results;
* a broken card file → CardError naming the file and the field; the Assistant refuses to start with it;
* ``BATCHBOT_EMBED_MODEL=/nonexistent`` → EmbeddingLoadError saying what is wrong and what is accepted;
* the feedback file not writable → a clear message in the UI language; earlier lines kept.

The embedding model is loaded once for the module and reused (``Retriever(embed_model=...)``);
a few cards keep the index builds fast.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rag.cards import DEFAULT_CARDS_DIR, CardError, load_cards
from rag.embedding import EmbeddingLoadError, EmbeddingSettings, load_embedding

CARD_IDS = ["effective-batch-formula", "myth-ga-stores-gradient-per-microbatch", "zero-stages-memory-savings"]


@pytest.fixture(scope="module")
def model() -> Any:
    return load_embedding(EmbeddingSettings())


@pytest.fixture(scope="module")
def cards() -> list[Any]:
    by_id = {c.id: c for c in load_cards()}
    return [by_id[i] for i in CARD_IDS]


def _retriever(cards: list[Any], model: Any, cache_dir: Path) -> Any:
    from rag.retrieval import Retriever

    return Retriever(cards=cards, settings=EmbeddingSettings(), cache_dir=cache_dir, progress=False, embed_model=model)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, model: Any, cards: list[Any]) -> Any:
    """A retriever built from scratch into a fresh cache folder (its cache file is the known-good one)."""
    r = _retriever(cards, model, tmp_path_factory.mktemp("cache"))
    assert r.cache_result.status == "miss" and r.cache_result.written
    return r


QUERIES = [
    "gradient_accumulation_steps 增大会增加显存吗",
    "what is the global batch with 8 GPUs",
    "ZeRO-3 显存节省多少",
]


# ---------------------------------------------------------------------------------------------
# embedding cache
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "wrong-arrays", "deleted"])
def test_damaged_embedding_cache_is_rebuilt(
    tmp_path: Path, model: Any, cards: list[Any], reference: Any, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    fresh = reference
    good = fresh.cache.path.read_bytes()
    path = tmp_path / fresh.cache.path.name
    path.write_bytes(good)
    assert _retriever(cards, model, tmp_path).cache_result.status == "hit"
    if damage == "garbage":
        path.write_bytes(b"\x00not an npz\xff" * 100)
    elif damage == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "wrong-arrays":
        np.savez(path, meta=np.array("{}"), keys=np.array(["x"]), vectors=np.zeros((3, 2)))
    else:
        path.unlink()

    with caplog.at_level(logging.WARNING, logger="rag.cache"):
        rebuilt = _retriever(cards, model, tmp_path)
    expected = "miss" if damage == "deleted" else "corrupt"
    assert rebuilt.cache_result.status == expected
    assert rebuilt.cache_result.embedded == len(rebuilt.dense_nodes)
    if damage != "deleted":
        assert any("corrupt" in r.getMessage() and str(path) in r.getMessage() for r in caplog.records), caplog.text
    assert np.allclose(rebuilt._matrix, fresh._matrix, atol=1e-5)
    for q in QUERIES:
        assert [h.id for h in rebuilt.search(q).hits] == [h.id for h in fresh.search(q).hits]
    # the file was rewritten and is now a clean hit
    again = _retriever(cards, model, tmp_path)
    assert again.cache_result.status == "hit" and again.cache_result.embedded == 0


def test_unwritable_cache_dir_keeps_vectors_in_memory(
    tmp_path: Path, model: Any, cards: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    cards = cards[:1]
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    with caplog.at_level(logging.WARNING, logger="rag.cache"):
        r = _retriever(cards, model, blocker / "cache")
    assert r.cache_result.written is False
    assert "not writable" in caplog.text
    assert r.search(QUERIES[0]).hits


# ---------------------------------------------------------------------------------------------
# broken cards
# ---------------------------------------------------------------------------------------------
def _cards_dir(tmp_path: Path) -> Path:
    d = tmp_path / "cards"
    d.mkdir()
    for cid in CARD_IDS[:2]:
        shutil.copy(DEFAULT_CARDS_DIR / f"{cid}.md", d / f"{cid}.md")
    return d


BREAKAGES = {
    # name: (edit of the card text, field the message must name)
    "bad-url": (lambda t: t.replace('url: "https://', 'url: "ftp://', 1), "sources.0.url"),
    "unknown-topic": (lambda t: t.replace("topics: [", "topics: [no_such_topic, ", 1), "topics"),
    "no-title-en": (
        lambda t: "\n".join(ln for ln in t.splitlines() if not ln.startswith("title_en:")) + "\n",
        "title_en",
    ),
    "extra-key": (lambda t: t.replace("---\n", "---\nsecret_key: 1\n", 1), "secret_key"),
    "yaml": (lambda t: t.replace("topics: [", "topics: [[", 1), "<front matter>"),
    "id-mismatch": (lambda t: t.replace("id: effective-batch-formula", "id: something-else", 1), "id"),
}


@pytest.mark.parametrize("name", sorted(BREAKAGES))
def test_broken_card_names_file_and_field(tmp_path: Path, name: str) -> None:
    d = _cards_dir(tmp_path)
    edit, field = BREAKAGES[name]
    target = d / "effective-batch-formula.md"
    text = target.read_text(encoding="utf-8")
    broken = edit(text)
    assert broken != text, "the breakage did not apply"
    target.write_text(broken, encoding="utf-8")
    with pytest.raises(CardError) as exc:
        load_cards(d)
    msg = str(exc.value)
    assert "effective-batch-formula.md" in msg and f"'{field}" in msg, msg


def test_assistant_refuses_to_start_with_a_broken_card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rag.assistant

    d = _cards_dir(tmp_path)
    target = d / "myth-ga-stores-gradient-per-microbatch.md"
    target.write_text(
        target.read_text(encoding="utf-8").replace("topics: [", "topics: [bogus_topic, ", 1), encoding="utf-8"
    )
    monkeypatch.setattr(rag.assistant, "load_cards", lambda: load_cards(d))
    with pytest.raises(CardError) as exc:
        rag.assistant.Assistant()
    msg = str(exc.value)
    assert "myth-ga-stores-gradient-per-microbatch.md" in msg and "'topics" in msg, msg


def test_empty_cards_dir_is_refused(tmp_path: Path) -> None:
    from rag.retrieval import Retriever

    with pytest.raises((CardError, ValueError)) as exc:
        Retriever(cards=load_cards(tmp_path), cache_dir=False, progress=False)
    assert "card" in str(exc.value).lower()


# ---------------------------------------------------------------------------------------------
# unreadable embedding model
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, words",
    [
        ("/nonexistent", ["/nonexistent", "does not exist", "BATCHBOT_EMBED_MODEL"]),
        ("/etc/hostname", ["/etc/hostname", "not a folder"]),
        ("/tmp", ["/tmp", "modules.json", "config.json"]),
    ],
)
def test_unreadable_embedding_model(
    monkeypatch: pytest.MonkeyPatch, cards: list[Any], value: str, words: list[str]
) -> None:
    if not Path(value).exists() and value != "/nonexistent":
        pytest.skip(f"{value} missing on this machine")
    monkeypatch.setenv("BATCHBOT_EMBED_MODEL", value)
    with pytest.raises(EmbeddingLoadError) as exc:
        load_embedding(EmbeddingSettings.from_env())
    for w in words:
        assert w in str(exc.value), str(exc.value)
    # the Assistant surfaces the same error at start-up, not a traceback from the loaders
    from rag import Assistant

    with pytest.raises(EmbeddingLoadError) as exc2:
        Assistant(cards=cards, cache_dir=None)
    assert value in str(exc2.value)


# ---------------------------------------------------------------------------------------------
# feedback file not writable (ui/feedback.py, ui/chat.py ChatController.on_like / on_reason)
# ---------------------------------------------------------------------------------------------
def _like(index: int = 1, liked: bool = True) -> Any:
    import gradio as gr

    return gr.LikeData(None, {"index": index, "value": "answer", "liked": liked})


UNWRITABLE = {"en": "not writable", "zh": "不可写"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_unwritable_feedback_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lang: str) -> None:
    import ui.feedback
    from ui.chat import ChatController

    path = tmp_path / "feedback.jsonl"
    monkeypatch.setenv("BATCHBOT_FEEDBACK_FILE", str(path))
    chat = ChatController(assistant=None)
    msgs = [{"role": "user", "content": "GA 会增加显存吗"}, {"role": "assistant", "content": "不会。"}]
    fid, status, _ = chat.on_like(msgs, lang, _like())
    assert fid and UNWRITABLE[lang] not in status
    before = path.read_text(encoding="utf-8")
    assert len(before.splitlines()) == 1

    # Permissions do not stop root, so the OS refusal is simulated at open() (what EACCES looks like).
    real_open = open

    def refusing_open(file: Any, mode: str = "r", *a: Any, **kw: Any) -> Any:
        if Path(file) == path and any(m in mode for m in "aw+"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, mode, *a, **kw)

    monkeypatch.setattr(ui.feedback, "open", refusing_open, raising=False)
    fid2, status2, _ = chat.on_like(msgs, lang, _like(liked=False))
    assert fid2 is None
    assert UNWRITABLE[lang] in status2 and str(path) in status2 and "Permission denied" in status2, status2
    status3, kept = chat.on_reason(fid, "too long", lang)
    assert UNWRITABLE[lang] in status3 and kept == "too long"  # the reason stays in the box to retry
    assert path.read_text(encoding="utf-8") == before  # earlier lines untouched

    monkeypatch.setattr(ui.feedback, "open", real_open, raising=False)
    fid4, status4, _ = chat.on_like(msgs, lang, _like())
    assert fid4 and UNWRITABLE[lang] not in status4
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and lines[0] == before.splitlines()[0]


def test_feedback_path_is_a_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ui.chat import ChatController

    monkeypatch.setenv("BATCHBOT_FEEDBACK_FILE", str(tmp_path))  # a folder, not a file
    fid, status, _ = ChatController(assistant=None).on_like([{"role": "assistant", "content": "x"}], "en", _like(0))
    assert fid is None and UNWRITABLE["en"] in status and str(tmp_path) in status


# ---------------------------------------------------------------------------------------------
# bench/gpu_check.py without CUDA
# ---------------------------------------------------------------------------------------------
def test_gpu_check_exits_cleanly_without_cuda() -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    out = subprocess.run(
        [sys.executable, str(root / "bench" / "gpu_check.py")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "no CUDA device is available" in out.stdout
    assert "Traceback" not in out.stderr


def test_app_refuses_to_start_with_the_reason_on_an_unreadable_model_path():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "BATCHBOT_EMBED_MODEL": "/nonexistent/model", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, str(root / "app.py"), "--port", "7999"], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2
    assert "cannot start" in proc.stderr and "/nonexistent/model" in proc.stderr
    assert "Traceback" not in proc.stderr
