"""Like/dislike feedback, appended to a local JSONL file.

One JSON object per line; the file is only ever opened in append mode, so
earlier lines are never rewritten or lost. A reason given later is a separate
line pointing at the feedback's id.
"""
from __future__ import annotations

import json
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

DEFAULT_FEEDBACK_FILE = "feedback/feedback.jsonl"
MAX_FIELD_CHARS = 8000
_lock = threading.Lock()


def feedback_path() -> Path:
    return Path(os.environ.get("BATCHBOT_FEEDBACK_FILE") or DEFAULT_FEEDBACK_FILE)


def _clip(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
        return value[:MAX_FIELD_CHARS] + "…"
    return value


def append_feedback(record: dict[str, Any], path: Path | None = None) -> dict[str, Any]:
    """Append one record (with id and timestamp added); raises OSError when the file cannot be written."""
    path = path or feedback_path()
    rec = {"id": uuid.uuid4().hex, "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **{k: _clip(v) for k, v in record.items()}}
    line = json.dumps(rec, ensure_ascii=False, default=str) + "\n"
    with _lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
    return rec
