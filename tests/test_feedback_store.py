"""Feedback in a database: SQLite by default (WAL), a path or URL setting, the same validation as the JSONL
file, legacy JSONL imported once, concurrent writers from threads and processes, and clear errors."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ui import feedback_store
from ui.feedback import append_feedback, feedback_path
from ui.feedback_store import SqlAlchemyStore, SqliteStore, database_store, redact_url

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "a\u2028b\u0085c\u2029d\ud800e\r\nf <script>x</script>"


def rating(i: int = 1, question: str = "GA 会增加显存吗", answer: str = "不会。") -> dict:
    return {
        "type": "rating",
        "liked": True,
        "feedback": "like",
        "message_index": i,
        "question": question,
        "answer": answer,
        "ui_lang": "zh",
    }


@pytest.fixture()
def db_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "fb" / "feedback.sqlite3"
    monkeypatch.delenv("BATCHBOT_FEEDBACK_FILE", raising=False)
    monkeypatch.setenv("BATCHBOT_FEEDBACK_DB", str(path))
    return path


def test_settings_choose_the_store(tmp_path: Path) -> None:
    assert database_store({"BATCHBOT_FEEDBACK_FILE": str(tmp_path / "f.jsonl")}) is None  # the JSONL file
    default = database_store({})
    assert isinstance(default, SqliteStore) and default.location == "feedback/feedback.sqlite3"
    assert isinstance(
        database_store({"BATCHBOT_FEEDBACK_DB": str(tmp_path / "x.db"), "BATCHBOT_FEEDBACK_FILE": "ignored.jsonl"}),
        SqliteStore,
    )
    url = database_store({"BATCHBOT_FEEDBACK_DB": "postgresql://bot:s3cret@db.internal/batchbot"})
    assert isinstance(url, SqlAlchemyStore) and "s3cret" not in url.location and "db.internal" in url.location
    assert redact_url("mysql://u:p@h/db") == "mysql://u:***@h/db"


def test_records_go_to_sqlite_in_wal_mode_with_the_same_validation(db_env: Path) -> None:
    rec = append_feedback(rating(question=HOSTILE, answer=HOSTILE))
    reason = append_feedback({"type": "reason", "feedback_id": rec["id"], "reason": "wrong numbers", "ui_lang": "en"})
    assert str(feedback_path()) == str(db_env)
    con = sqlite3.connect(db_env)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = con.execute("SELECT id, type, feedback_id, record FROM feedback ORDER BY rowid").fetchall()
    con.close()
    assert [(r[0], r[1], r[2]) for r in rows] == [(rec["id"], "rating", None), (reason["id"], "reason", rec["id"])]
    assert all(r[3].isascii() for r in rows)
    stored = json.loads(rows[0][3])
    assert stored["question"].startswith("a\u2028b\u0085c") and "\ud800" not in stored["question"]
    assert stored == json.loads(json.dumps(rec))
    for bad in (
        {**rating(), "message_index": -1},
        {**rating(), "liked": "yes"},
        {**rating(), "admin": True},
        {"type": "reason", "feedback_id": "../../etc", "reason": "x"},
    ):
        with pytest.raises(ValueError):
            append_feedback(bad)
    assert len(database_store().records()) == 2


def test_legacy_jsonl_is_imported_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    legacy = tmp_path / "feedback.jsonl"
    append_feedback(rating(1), legacy)
    append_feedback(rating(2), legacy)
    with open(legacy, "a", encoding="ascii") as fh:
        fh.write('{"id": "torn", "question": "crash mid-wri')  # a torn last line is skipped
    old = [json.loads(x) for x in legacy.read_text().splitlines()[:2]]
    store = SqliteStore(tmp_path / "feedback.sqlite3", legacy_jsonl=legacy)
    assert store.records() == old
    store.append({**old[0], "id": "f" * 32})
    again = SqliteStore(tmp_path / "feedback.sqlite3", legacy_jsonl=legacy)  # a restart: nothing twice
    assert [r["id"] for r in again.records()] == [old[0]["id"], old[1]["id"], "f" * 32]


def test_concurrent_writers_threads_and_processes(db_env: Path) -> None:
    errors: list[BaseException] = []

    def write(i: int) -> None:
        try:
            append_feedback(rating(i))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(20)]
    code = (
        "import sys; from ui.feedback import append_feedback\n"
        "for i in range(20): append_feedback({'type': 'rating', 'liked': False, 'feedback': 'dislike', "
        "'message_index': i, 'question': 'q', 'answer': 'a'})"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "BATCHBOT_FEEDBACK_DB": str(db_env)},
        )
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert not errors
    recs = database_store().records()
    assert len(recs) == 60 and len({r["id"] for r in recs}) == 60
    assert sum(1 for r in recs if r["liked"] is False) == 40


@pytest.mark.parametrize("lang,word", [("en", "not writable"), ("zh", "不可写")])
def test_an_unwritable_database_gives_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lang: str, word: str
) -> None:
    import gradio as gr

    from ui.chat import ChatController

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.delenv("BATCHBOT_FEEDBACK_FILE", raising=False)
    monkeypatch.setenv("BATCHBOT_FEEDBACK_DB", str(blocker / "feedback.sqlite3"))
    like = gr.LikeData(None, {"index": 1, "value": "a", "liked": True})
    fid, status, _ = ChatController(None).on_like(
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], lang, like
    )
    assert fid is None and "✘" in status and word in status and "not-a-dir" in status
    assert "Traceback" not in status
    assert blocker.read_text() == "x"


def test_a_database_url_through_sqlalchemy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sqlalchemy")
    monkeypatch.delenv("BATCHBOT_FEEDBACK_FILE", raising=False)
    monkeypatch.setenv("BATCHBOT_FEEDBACK_DB", f"sqlite:///{tmp_path / 'shared.db'}")
    rec = append_feedback(rating(question=HOSTILE))
    store = database_store()
    assert isinstance(store, SqlAlchemyStore)
    assert store.records() == [json.loads(json.dumps(rec))]
    bad = SqlAlchemyStore("nosuchdriver://h/db")
    with pytest.raises(OSError, match="cannot open the feedback database"):
        bad.append(rec)


def test_store_objects_are_reused_per_setting(tmp_path: Path) -> None:
    env = {"BATCHBOT_FEEDBACK_DB": str(tmp_path / "a.db")}
    assert database_store(env) is database_store(dict(env))
    assert feedback_store.DEFAULT_DB_FILE.endswith(".sqlite3")
