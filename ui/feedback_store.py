"""Where like/dislike feedback is stored: SQLite by default, a database URL for a shared server, JSONL for one process.

Why: feedback is the one thing several replicas behind a proxy must share (README "Serving a team"); a
JSONL file per replica splits it and two processes appending to one file on a network share can tear
lines. SQLite serialises writers with its own file lock, so every process on one host can write one
file; a database URL (SQLAlchemy, already installed with llama-index-core) serves replicas on several hosts.

Choice (:func:`database_store`), first match wins:

* ``BATCHBOT_FEEDBACK_DB`` = a database URL (``sqlite:///path``, ``postgresql://user@host/db`` with its
  driver installed): :class:`SqlAlchemyStore`;
* ``BATCHBOT_FEEDBACK_DB`` = a file path: :class:`SqliteStore` (stdlib ``sqlite3``, WAL mode);
* ``BATCHBOT_FEEDBACK_FILE`` set: no database; ``ui.feedback`` appends JSONL lines to that file as before
  (one process on one host only: development, tests);
* neither: :class:`SqliteStore` at ``feedback/feedback.sqlite3``, which first imports the records of a
  legacy ``feedback/feedback.jsonl`` beside it (once: ids are the primary key).

Records arrive validated (``ui.feedback.RatingRecord``/``ReasonRecord`` → dict with ``id`` and
``time``); every store keeps the whole record as ASCII JSON, plus the columns one queries by. Errors
are ``OSError`` (a path or database that cannot be written), which the chat shows in the user's language.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger("batchbot.feedback")

DEFAULT_DB_FILE = "feedback/feedback.sqlite3"
LEGACY_JSONL_FILE = "feedback/feedback.jsonl"
ENV_DB = "BATCHBOT_FEEDBACK_DB"
ENV_FILE = "BATCHBOT_FEEDBACK_FILE"
#: A writer waits this long for another process's write lock before the write fails (seconds).
BUSY_TIMEOUT_S = 10.0
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS feedback ("
    " id TEXT PRIMARY KEY, time TEXT NOT NULL, type TEXT NOT NULL,"
    " feedback_id TEXT, record TEXT NOT NULL)"
)


def record_json(rec: dict[str, Any]) -> str:
    """The record as ASCII JSON (U+2028, lone surrogates and the rest escaped), as the JSONL lines are."""
    return json.dumps(rec, ensure_ascii=True)


class FeedbackStore(Protocol):
    location: str

    def append(self, rec: dict[str, Any]) -> None: ...

    def records(self) -> list[dict[str, Any]]: ...


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Every whole record of a JSONL feedback file (torn or foreign lines skipped); [] when there is none."""
    out = []
    try:
        text = Path(path).read_text(encoding="ascii", errors="replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return []
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("id"), str) and rec.get("type") in ("rating", "reason"):
            out.append(rec)
    return out


class SqliteStore:
    """Stdlib ``sqlite3`` in WAL mode: readers never block the writer; writers from several processes
    queue on SQLite's lock (``busy_timeout``). One connection per call: no connection crosses threads."""

    def __init__(self, path: str | Path, legacy_jsonl: str | Path | None = None) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        self._ready = False
        self._init_lock = threading.Lock()
        self._legacy = Path(legacy_jsonl) if legacy_jsonl else None

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            raise OSError(f"cannot open the feedback database: {exc}") from None
        return con

    def _initialised(self) -> bool:
        return self._ready

    def _init(self, con: sqlite3.Connection) -> None:
        if self._ready:
            return
        with self._init_lock:
            if self._initialised():  # another thread may have finished while this one waited for the lock
                return
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            con.execute(_SCHEMA)
            if self._legacy is not None and self._legacy.is_file():
                self._migrate(con, self._legacy)
            self._ready = True

    def _migrate(self, con: sqlite3.Connection, legacy: Path) -> None:
        recs = read_jsonl(legacy)
        con.execute("BEGIN IMMEDIATE")
        try:
            before = con.total_changes
            con.executemany(
                "INSERT OR IGNORE INTO feedback (id, time, type, feedback_id, record) VALUES (?, ?, ?, ?, ?)",
                [(r["id"], str(r.get("time", "")), r["type"], r.get("feedback_id"), record_json(r)) for r in recs],
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        added = con.total_changes - before
        if added:
            log.info("feedback: imported %d records from %s", added, legacy)

    def append(self, rec: dict[str, Any]) -> None:
        con = self._connect()
        try:
            self._init(con)
            con.execute(
                "INSERT INTO feedback (id, time, type, feedback_id, record) VALUES (?, ?, ?, ?, ?)",
                (rec["id"], rec["time"], rec["type"], rec.get("feedback_id"), record_json(rec)),
            )
        except sqlite3.Error as exc:
            raise OSError(f"feedback database not writable: {exc}") from None
        finally:
            con.close()

    def records(self) -> list[dict[str, Any]]:
        con = self._connect()
        try:
            self._init(con)
            rows = con.execute("SELECT record FROM feedback ORDER BY rowid").fetchall()
        except sqlite3.Error as exc:
            raise OSError(f"feedback database not readable: {exc}") from None
        finally:
            con.close()
        return [json.loads(r[0]) for r in rows]


def redact_url(url: str) -> str:
    """A database URL without its password, for messages and logs."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


class SqlAlchemyStore:
    """Any database SQLAlchemy reaches (``postgresql://…`` with its driver installed, ``sqlite:///…``), for
    replicas on several hosts. One engine per process (its connection pool)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.location = redact_url(url)
        self._engine: Any = None
        self._lock = threading.Lock()

    def _get_engine(self) -> Any:
        with self._lock:
            if self._engine is None:
                try:
                    import sqlalchemy as sa

                    engine = sa.create_engine(self.url, pool_pre_ping=True)
                    with engine.begin() as con:
                        con.execute(sa.text(_SCHEMA))
                except Exception as exc:  # noqa: BLE001 - a bad URL, a missing driver, a refused connection
                    raise OSError(
                        f"cannot open the feedback database {self.location}: {type(exc).__name__}: "
                        f"{str(exc).splitlines()[0][:200] if str(exc) else ''}"
                    ) from None
                self._engine = engine
            return self._engine

    def append(self, rec: dict[str, Any]) -> None:
        import sqlalchemy as sa

        engine = self._get_engine()
        try:
            with engine.begin() as con:
                con.execute(
                    sa.text(
                        "INSERT INTO feedback (id, time, type, feedback_id, record) "
                        "VALUES (:id, :time, :type, :fid, :record)"
                    ),
                    {
                        "id": rec["id"],
                        "time": rec["time"],
                        "type": rec["type"],
                        "fid": rec.get("feedback_id"),
                        "record": record_json(rec),
                    },
                )
        except Exception as exc:  # noqa: BLE001
            raise OSError(f"feedback database not writable: {type(exc).__name__}") from None

    def records(self) -> list[dict[str, Any]]:
        import sqlalchemy as sa

        engine = self._get_engine()
        with engine.connect() as con:
            rows = con.execute(sa.text("SELECT record FROM feedback ORDER BY time, id")).fetchall()
        return [json.loads(r[0]) for r in rows]


_stores: dict[str, FeedbackStore] = {}
_stores_lock = threading.Lock()


def database_store(env: dict[str, str] | None = None) -> FeedbackStore | None:
    """The database the settings name, or None when ``BATCHBOT_FEEDBACK_FILE`` asks for the JSONL file.

    One object per setting per process (a SQLAlchemy engine holds a connection pool).
    """
    env = dict(os.environ if env is None else env)
    db, file = env.get(ENV_DB, "").strip(), env.get(ENV_FILE, "").strip()
    if not db and file:
        return None
    with _stores_lock:
        store = _stores.get(db)
        if store is None:
            if db and _URL.match(db):
                store = SqlAlchemyStore(db)
            elif db:
                store = SqliteStore(Path(db).expanduser())
            else:
                store = SqliteStore(DEFAULT_DB_FILE, legacy_jsonl=LEGACY_JSONL_FILE)
            _stores[db] = store
        return store
