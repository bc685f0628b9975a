"""A ranking of the cards learned from real questions and the cards labelled as answering them.

Why: the two retrievers read a message only through words it shares with a card. The English-only default embedding
model reads a Chinese question through glossary words alone, and BM25 through the jieba words and error strings the
card happens to quote. People describe one cause in many ways that no card quotes ("跑着跑着显存越来越大", "loss 变成
0 了", "256 != 4 * 8 * 1"), and the real-question dev set holds about 1,600 of them, each labelled with the card(s)
whose topic answers it. A linear model over those wordings (TF-IDF over the BM25 tokenizer's tokens, multinomial
logistic regression; the cards' own questions, symptoms and titles join as examples so that every card is a class)
ranks the cards for a new message, and that ranking joins the fusion in :mod:`rag.retrieval` as a third voice
(:data:`rag.retrieval.LEARNED_WEIGHT`).

How far to trust it: on the dev set it was trained on it is near perfect, which says nothing. ``bench/train_cards.py``
reports grouped 5-fold cross-validation (folds split by source thread) of the fused ranking with and without it, and
the held-out set (never trained on) says whether it carries over; both figures are in the README.

At answer time this is pure Python + numpy: the artifact (``rag/card_model.json``: vocabulary, idf and the weights
that matter, zlib + base64) is read once. Without it, or with ``BATCHBOT_CARD_MODEL=off``, retrieval fuses the two
retrievers alone and one warning is logged.
"""

from __future__ import annotations

import base64
import json
import logging
import math
import os
import re
import zlib
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .tokenize import tokenize

log = logging.getLogger(__name__)

ARTIFACT = Path(__file__).with_name("card_model.json")
#: ``BATCHBOT_CARD_MODEL=off`` leaves the learned ranking out of retrieval (for A/B runs of bench/eval_answers.py).
ENV_SWITCH = "BATCHBOT_CARD_MODEL"
#: At most this much of the cleaned query is read (the query cleaner already keeps the prose and key error lines).
MAX_CHARS = 3000


_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")


def term_counts(text: str) -> Counter[str]:
    """The BM25 tokenizer's tokens of ``text`` (jieba words, ASCII words, config keys) and the character bigrams of its
    Chinese runs ("§显存", "§存爆"), counted. The bigrams reach wordings jieba cuts differently ("爆显存" / "显存爆了");
    grouped CV on 1664 dev questions (``python -m bench.train_cards --cv-only``, fused hit@1 / hit@3): zh 0.627 / 0.839
    without them, 0.644 / 0.842 with them; en 0.665 / 0.860 → 0.664 / 0.869 (0.642 / 0.842, 0.663 / 0.867 after the
    stop's later reader changes)."""
    head = text[:MAX_CHARS]
    counts = Counter(tokenize(head))
    for run in _CJK_RUN.findall(head):
        counts.update("§" + run[i : i + 2] for i in range(len(run) - 1))
    return counts


def tfidf(counts: Counter[str], vocab: dict[str, int], idf: np.ndarray) -> dict[int, float]:
    """Sublinear TF-IDF, L2-normalised, over the vocabulary (unknown tokens ignored): column → value.
    The trainer builds its matrix with this same function, so training and answering read a message alike."""
    row = {vocab[t]: (1.0 + math.log(c)) * float(idf[vocab[t]]) for t, c in counts.items() if t in vocab}
    norm = math.sqrt(sum(v * v for v in row.values())) or 1.0
    return {j: v / norm for j, v in row.items()}


def idf_of(doc_freq: np.ndarray, n_docs: int) -> np.ndarray:
    """Smoothed inverse document frequency (scikit-learn's formula: ln((1 + n) / (1 + df)) + 1)."""
    return np.log((1.0 + n_docs) / (1.0 + doc_freq)) + 1.0


class CardModel:
    """The shipped model: a vocabulary, its idf, and one weight per (term, card) that the trainer kept."""

    def __init__(self, classes: list[str], terms: list[str], idf: np.ndarray, weights: np.ndarray, bias: np.ndarray):
        self.classes = classes
        self.vocab = {t: i for i, t in enumerate(terms)}
        self.idf = idf
        self.weights = weights  # (terms, classes), float32
        self.bias = bias

    def scores(self, text: str) -> dict[str, float]:
        """Card id → linear score (higher = more likely the card that answers ``text``)."""
        return self._scores(tfidf(term_counts(text), self.vocab, self.idf))

    def _scores(self, row: dict[int, float]) -> dict[str, float]:
        s = self.bias.copy()
        for j, v in row.items():
            s += v * self.weights[j]
        return {c: float(x) for c, x in zip(self.classes, s, strict=True)}

    def ranks(self, text: str, known: Iterable[str] | None = None) -> dict[str, int]:
        """Card id → 1-based rank for ``text``; only cards in ``known`` when given. {} when no term of the text is in
        the vocabulary (the model would only repeat its prior). The text is tokenized once (jieba is the cost)."""
        row = tfidf(term_counts(text), self.vocab, self.idf)
        if not row:
            return {}
        scores = self._scores(row)
        keep = set(known) if known is not None else set(scores)
        order = sorted((c for c in scores if c in keep), key=lambda c: (-scores[c], c))
        return {c: r for r, c in enumerate(order, 1)}


def _pack(arr: np.ndarray) -> str:
    return base64.b64encode(zlib.compress(arr.tobytes(), 9)).decode("ascii")


def _unpack(text: str, dtype: Any) -> np.ndarray:
    return np.frombuffer(zlib.decompress(base64.b64decode(text)), dtype=dtype)


def model_to_json(
    classes: list[str], terms: list[str], idf: np.ndarray, weights: np.ndarray, bias: np.ndarray, meta: dict[str, Any]
) -> str:
    """The artifact's text; only non-zero weights are stored (term index, class index, float16). Deterministic."""
    rows, cols = np.nonzero(weights)
    payload = {
        "classes": list(classes),
        "terms": list(terms),
        "idf_f16": _pack(np.asarray(idf, dtype=np.float16)),
        "rows_u16": _pack(rows.astype(np.uint16)),
        "cols_u16": _pack(cols.astype(np.uint16)),
        "vals_f16": _pack(weights[rows, cols].astype(np.float16)),
        "bias": [round(float(b), 5) for b in bias],
        "meta": meta,
    }
    return json.dumps(payload, ensure_ascii=False, indent=0, sort_keys=True) + "\n"


def model_from_json(data: dict[str, Any]) -> CardModel:
    classes, terms = list(data["classes"]), list(data["terms"])
    idf = _unpack(data["idf_f16"], np.float16).astype(np.float32)
    rows = _unpack(data["rows_u16"], np.uint16).astype(np.int64)
    cols = _unpack(data["cols_u16"], np.uint16).astype(np.int64)
    vals = _unpack(data["vals_f16"], np.float16).astype(np.float32)
    if len(idf) != len(terms) or not (len(rows) == len(cols) == len(vals)) or len(data["bias"]) != len(classes):
        raise ValueError("card model: array sizes do not match its vocabulary and classes")
    weights = np.zeros((len(terms), len(classes)), dtype=np.float32)
    weights[rows, cols] = vals
    return CardModel(classes, terms, idf, weights, np.asarray(data["bias"], dtype=np.float32))


@lru_cache(maxsize=1)
def load_card_model(path: str = str(ARTIFACT)) -> CardModel | None:
    """The shipped model, read once; ``None`` (retrieval without it, one warning) when missing, broken or switched
    off."""
    if os.environ.get(ENV_SWITCH, "").strip().lower() in ("off", "0", "false", "no"):
        return None
    try:
        return model_from_json(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError, zlib.error) as err:
        log.warning("card model not loaded (%s): retrieval fuses the dense and BM25 rankings alone", err)
        return None
