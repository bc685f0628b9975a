"""On-disk cache of passage embeddings.

One ``.npz`` file per embedding-model identity (:meth:`EmbeddingSettings.identity`: model
path + config-file hash + prefixes + normalize) in ``BATCHBOT_CACHE_DIR`` or
``~/.cache/batchbot/``. Inside: the vectors, and for each the SHA-256 of the exact passage
text that was embedded, plus a content hash of the whole passage set.

* hit: every current passage hash is in the file → no model call;
* miss: no file → embed everything, write the file;
* stale: the file is for the same model but some passages changed (a card was edited,
  added or removed) → a warning is logged, only the changed passages are re-embedded and the
  file is rewritten with exactly the current set;
* corrupt: unreadable file, wrong shapes, wrong model identity inside → warning, rebuilt;
* an unwritable cache directory → warning, vectors are kept in memory only.

Nothing here ever raises because of the cache; the worst case is recomputing.
Writes are atomic (temporary file + ``os.replace``). A crash between the two leaves a
``.tmp-*.npz``; at start (each :meth:`EmbeddingCache.get_or_compute`) such files older than
:data:`STALE_TMP_SECONDS` are deleted — old enough that no live writer still owns them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
ENV_CACHE_DIR = "BATCHBOT_CACHE_DIR"
#: A temporary cache file untouched this long belongs to a writer that died (a write takes < 1 s).
STALE_TMP_SECONDS = 600.0


def default_cache_dir() -> Path:
    env = os.environ.get(ENV_CACHE_DIR, "").strip()
    return Path(env).expanduser() if env else Path.home() / ".cache" / "batchbot"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(text_hash(t).encode() + b"\n")
    return h.hexdigest()


@dataclass
class CacheResult:
    vectors: np.ndarray
    status: str  # "hit" | "miss" | "stale" | "corrupt" | "disabled"
    path: Path | None
    embedded: int  # how many passages went through the model this time
    written: bool = False
    messages: list[str] = field(default_factory=list)


class EmbeddingCache:
    """Get-or-compute passage vectors for one model identity."""

    def __init__(self, model_identity: str, cache_dir: str | Path | None = None, enabled: bool = True):
        self.model_identity = model_identity
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
        self.enabled = enabled

    @property
    def path(self) -> Path:
        return self.cache_dir / f"embeddings-{self.model_identity[:24]}.npz"

    # ---- reading ----------------------------------------------------------------------
    def _read(self) -> tuple[dict[str, np.ndarray] | None, str]:
        """(hash → vector, status) where status is "ok", "missing" or "corrupt"."""
        path = self.path
        if not path.exists():
            return None, "missing"
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                keys = [str(k) for k in data["keys"]]
                vectors = np.asarray(data["vectors"], dtype=np.float32)
            if meta.get("format") != FORMAT_VERSION or meta.get("model_identity") != self.model_identity:
                raise ValueError("model identity or format version does not match")
            if vectors.ndim != 2 or vectors.shape[0] != len(keys) or not np.isfinite(vectors).all():
                raise ValueError(f"bad vector array shape {vectors.shape} for {len(keys)} keys")
            return dict(zip(keys, vectors, strict=True)), "ok"
        except Exception as exc:  # noqa: BLE001 - any unreadable file is rebuilt
            logger.warning("embedding cache %s is corrupt (%s: %s); rebuilding it", path, type(exc).__name__, exc)
            return None, "corrupt"

    # ---- writing ----------------------------------------------------------------------
    def remove_stale_temp_files(self, older_than: float = STALE_TMP_SECONDS) -> int:
        """Delete ``.tmp-*.npz`` left in the cache directory by a crashed write; returns how many."""
        import time

        removed = 0
        try:
            candidates = list(self.cache_dir.glob(".tmp-*.npz"))
        except OSError:
            return 0
        now = time.time()
        for tmp in candidates:
            try:
                if tmp.is_file() and not tmp.is_symlink() and now - tmp.stat().st_mtime > older_than:
                    tmp.unlink()
                    removed += 1
            except OSError:
                continue
        if removed:
            logger.info("removed %d stale temporary file(s) from the embedding cache %s", removed, self.cache_dir)
        return removed

    def _write(self, keys: list[str], vectors: np.ndarray, content: str) -> bool:
        meta = {"format": FORMAT_VERSION, "model_identity": self.model_identity, "content_hash": content}
        tmp_name = None
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=self.cache_dir)
            with os.fdopen(fd, "wb") as f:
                np.savez(f, meta=np.array(json.dumps(meta)), keys=np.array(keys), vectors=vectors.astype(np.float32))
            os.replace(tmp_name, self.path)
            return True
        except OSError as exc:
            logger.warning(
                "embedding cache directory %s is not writable (%s); keeping embeddings in memory only",
                self.cache_dir,
                exc,
            )
            if tmp_name:
                with contextlib.suppress(OSError):
                    os.unlink(tmp_name)
            return False

    # ---- main entry -------------------------------------------------------------------
    def get_or_compute(self, texts: Sequence[str], embed: Callable[[list[str]], list[list[float]]]) -> CacheResult:
        """Vectors for ``texts`` (in order), computing only those not cached."""
        keys = [text_hash(t) for t in texts]
        content = content_hash(texts)
        if not self.enabled:
            vecs = _as_matrix(embed(list(texts)), len(texts))
            return CacheResult(vecs, "disabled", None, len(texts))

        self.remove_stale_temp_files()
        cached, read_status = self._read()
        if cached is not None and all(k in cached for k in keys) and len(cached) == len(set(keys)):
            return CacheResult(np.stack([cached[k] for k in keys]), "hit", self.path, 0)

        if cached is None:
            status = "miss" if read_status == "missing" else "corrupt"
            cached = {}
        else:
            status = "stale"
            changed = sum(1 for k in set(keys) if k not in cached)
            logger.warning(
                "embedding cache %s is stale (%d of %d passages changed, %d no longer used); re-embedding the changed ones",
                self.path,
                changed,
                len(set(keys)),
                len(set(cached) - set(keys)),
            )
        todo = [i for i, k in enumerate(keys) if k not in cached]
        # embed each distinct missing text once
        uniq: dict[str, int] = {}
        for i in todo:
            uniq.setdefault(keys[i], i)
        if uniq:
            new = _as_matrix(embed([texts[i] for i in uniq.values()]), len(uniq))
            dim = new.shape[1]
            if cached and next(iter(cached.values())).shape[0] != dim:
                logger.warning("embedding cache %s has vectors of another size; rebuilding it", self.path)
                return self.get_or_compute_fresh(texts, embed)
            for k, v in zip(uniq, new, strict=False):
                cached[k] = v
        vectors = np.stack([cached[k] for k in keys]).astype(np.float32)
        distinct = list(dict.fromkeys(keys))
        written = self._write(distinct, np.stack([cached[k] for k in distinct]), content)
        return CacheResult(vectors, status, self.path if written else None, len(uniq), written)

    def get_or_compute_fresh(
        self, texts: Sequence[str], embed: Callable[[list[str]], list[list[float]]]
    ) -> CacheResult:
        vecs = _as_matrix(embed(list(texts)), len(texts))
        keys = [text_hash(t) for t in texts]
        distinct = dict(zip(keys, vecs, strict=True))
        written = self._write(list(distinct), np.stack(list(distinct.values())), content_hash(texts))
        return CacheResult(vecs, "corrupt", self.path if written else None, len(texts), written)


def _as_matrix(vectors: list[list[float]] | np.ndarray, n: int) -> np.ndarray:
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(f"embedding function returned shape {arr.shape} for {n} texts")
    return arr


__all__ = ["EmbeddingCache", "CacheResult", "default_cache_dir", "text_hash", "content_hash", "ENV_CACHE_DIR"]
