"""Hybrid card retrieval: dense (sentence embeddings) + BM25 (jieba-aware) + a learned card ranking, fused with RRF.

Pipeline for a question ``q``:

0. ``clean_query(q)`` (:mod:`rag.query_clean`) drops what pasted errors carry whatever the cause: library advice
   boilerplate (every CUDA OOM message's fragmentation hint), stack frames, repeated lines, printed sizes.
1. ``expand_query(q)`` (:mod:`rag.glossary`) appends English/Chinese equivalents of the
   domain terms found, so the English-only default embedding model and BM25 see both
   languages' words.
2. Dense: each card becomes several llama-index ``TextNode`` passages (title, each question,
   each symptom, each misconception; body paragraphs only if :data:`DENSE_BODY`; each short
   enough for the model's 256-word-piece window). Passages are
   embedded once with the configured passage prefix and cached on disk (:mod:`rag.cache`);
   the query is embedded with the query prefix. Card score = best passage cosine.
3. BM25: one ``TextNode`` per card holding titles + questions + misconceptions + body in
   both languages, indexed by bm25s through llama-index's ``BM25Retriever`` with our
   tokenizer (:mod:`rag.tokenize`) instead of its English token pattern. Cards with BM25
   score 0 get no BM25 rank.
4. Reciprocal rank fusion over the per-card rankings: ``sum 1/(RRF_K + rank)`` (see :data:`RRF_K`); for a Chinese
   message with pasted configs, commands or logs a third ranking joins: BM25 on its prose lines (:data:`PROSE_MODE`);
   and the card model's ranking (:mod:`rag.card_model`, learned from the real-question dev set) with weight
   :data:`LEARNED_WEIGHT`.
5. Rejection: the question is "not about our topics" when its relevance (best dense cosine
   of the expanded query) is below :data:`DEFAULT_THRESHOLD`; then :meth:`Retriever.retrieve`
   returns ``[]``. The number was calibrated with ``bench/eval_retrieval.py`` on the
   labelled questions (``topic: none`` vs on-topic), see the constant's comment.

No LLM is involved: nothing here reads ``llama_index.core.Settings.llm`` or
``Settings.embed_model`` (whose defaults would be OpenAI).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rag.cache import CacheResult, EmbeddingCache
from rag.card_model import CardModel, load_card_model
from rag.cards import Card, load_cards
from rag.embedding import EmbeddingSettings, load_embedding
from rag.glossary import expand_query
from rag.query_clean import clean_query, prose_only
from rag.tokenize import tokenize

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.schema import MetadataMode, TextNode

logger = logging.getLogger(__name__)

#: Reciprocal-rank-fusion constant: fused score = sum over the two rankings of 1 / (RRF_K + rank). The usual 60
#: flattens the top ranks, so a card both retrievers put around 5th beat the card one of them put first. Here the
#: two disagree by design (the English-only model reads a Chinese question only through glossary words; BM25 reads
#: jieba words and exact error strings), and each one's first card is the stronger evidence. Measured on the
#: real-question dev set (bench/eval_answers.py, hit@3 zh / en, same card selection): 60 → 0.714 / 0.842;
#: 10 → 0.760 / 0.847; 5 → 0.773 / 0.847; 3 → 0.799 / 0.842; 2 → 0.818 / 0.842; 1 → 0.818 / 0.836. On the labelled
#: and held-out sets (bench/eval_retrieval.py) 2 and 60 give the same hit@3 but one labelled zh question
#: (1.000 → 0.982), and hit@1 rises (labelled zh 0.873 → 0.891).
#: Re-measured (ret9) on the 637 questions of the base dev set after the cards, glossary and citing rules of later
#: rounds, whole engine (bench/eval_answers.py, hit@1/hit@3 zh / en): 2 → 0.593/0.821, 0.630/0.838; 2.5 →
#: 0.593/0.828, 0.627/0.844; 3 → 0.593/0.834, 0.630/0.847 (8 questions gained, 1 lost; act, fidelity and
#: contradictions unchanged); retrieval alone (bench/eval_retrieval_real.py fused hit@3): 2 → 0.814 / 0.846, 3 →
#: 0.827 / 0.852, 4 → 0.830 / 0.846, 5 → 0.824 / 0.849. On the 20 blind questions of dev-ret9.yaml (mined before any
#: ret9 change) 3 and 2 give the same hit@3 (0.900 / 0.900) and hit@1 zh 0.500 → 0.600. At 3 one retriever's first
#: place weighs as much as both retrievers' fifth (1/4 = 2/8); the tie goes to the dense rank.
RRF_K = 3

#: A third ranking for Chinese messages that paste configs, commands or logs: BM25 over the lines a person wrote
#: (:func:`rag.query_clean.prose_only`), fused with the other two. The English-only embedding model reads a Chinese
#: message only through the glossary's English words, so there BM25 carries the question, and on a long paste the
#: config keys every batch card holds (``per_device_train_batch_size``, ``deepspeed``) outweigh the one sentence
#: that says what went wrong. Measured with the real-question dev set (384, bench/eval_retrieval_real.py fused
#: hit@1/hit@3) and the 22 new questions of dev-ret3.yaml (mined after the other changes of this round, never
#: tuned on before the measurement): "off" dev zh 0.571/0.840, en 0.641/0.876, new zh 0.600/0.800, en 0.714/0.857;
#: for every language ("differs") dev zh 0.606/0.857 but en 0.632/0.847 (the dense model already reads English
#: prose; a second BM25 view outvotes it), new en 1.000; Chinese only ("zh") dev zh 0.606/0.857, en 0.641/0.876,
#: new zh 0.667/0.800, en 0.714/0.857; Chinese also when the message is all prose ("zh-always", which doubles BM25's
#: weight) dev zh 0.589/0.840. With the later glossary/card changes of the same round, "zh": dev zh 0.606/0.851, en
#: 0.651/0.876 (before the round 0.554/0.846, 0.646/0.876). Values: "zh" (default), "differs", "always", "zh-always",
#: "off".
PROSE_MODE = "zh"

#: Relevance threshold on the best dense cosine of the glossary-expanded question, for the
#: default model (all-MiniLM-L6-v2) and the passages of :func:`dense_passages` (no body paragraphs).
#: Calibrated with ``bench/eval_retrieval.py --calibrate`` on tests/data/labelled_questions.yaml
#: (98 questions): the 10 ``topic: none`` questions score 0.000-0.338 (Chinese ones with no domain
#: term score 0: nothing readable is left for the English-only model), the 88 on-topic ones
#: 0.454-0.92; 0.40 sits in the gap (midpoint 0.396), rejecting 10/10 off-topic and 0/88 on-topic
#: questions. The 331 real questions (bench/eval_answers.py) score 0.445 and up. (With body
#: paragraphs as passages the gap was 0.226-0.501 and the threshold 0.35.) Other models need their
#: own number (``BATCHBOT_RELEVANCE_THRESHOLD``).
DEFAULT_THRESHOLD = 0.40

ENV_THRESHOLD = "BATCHBOT_RELEVANCE_THRESHOLD"

#: Weight of the card model's ranking (rag.card_model) in the fusion, beside weight 1 for each retriever's. Chosen on
#: grouped 5-fold cross-validation of the dev set (`python -m bench.train_cards --cv-only --c 3,10,30 --weights 1,2,3`;
#: 1612 questions, 139 cards; the fused top 3 before any citing rule, hit@1 / hit@3 zh, en, at C=10): without it
#: 0.442 / 0.713, 0.532 / 0.769; weight 1 0.587 / 0.803, 0.653 / 0.860; 2 0.625 / 0.834, 0.674 / 0.884; 3 0.618 /
#: 0.848, 0.673 / 0.883 (a trade within a few questions: 2 keeps the better hit@1).
LEARNED_WEIGHT = 2.0

_MAX_CHUNK_CHARS = {"en": 700, "zh": 220}


@dataclass
class Hit:
    """One retrieved card. Ranks are 1-based; ``None`` when that retriever did not rank the card."""

    card: Card
    score: float
    dense_rank: int | None = None
    bm25_rank: int | None = None
    dense_score: float | None = None
    bm25_score: float | None = None
    prose_rank: int | None = None  # BM25 rank on the message's prose alone (see PROSE_MODE); None when not used
    learned_rank: int | None = None  # the card model's rank (rag.card_model); None without the model

    @property
    def id(self) -> str:
        return self.card.id


@dataclass
class SearchResult:
    query: str
    expanded_query: str
    hits: list[Hit]  # fused ranking, not thresholded
    relevance: float
    relevant: bool
    dense: list[Hit] = field(default_factory=list)
    bm25: list[Hit] = field(default_factory=list)


# --------------------------------------------------------------------------------------
# nodes
# --------------------------------------------------------------------------------------
@dataclass
class Rankings:
    """The per-card rankings of one query that :func:`fuse_ranks` combines (1-based; a ranking that does not rank a
    card leaves it out), with the scores behind the two retrievers' rankings."""

    cleaned: str
    expanded: str
    dense: dict[str, float]
    bm25: dict[str, float]
    dense_rank: dict[str, int]
    bm25_rank: dict[str, int]
    prose_rank: dict[str, int]
    learned_rank: dict[str, int]

    def fused(self, learned: dict[str, int] | None = None, weight: float | None = None) -> dict[str, float]:
        """RRF over the retrievers' rankings and the card model's (``learned`` replaces it, e.g. a fold's model in
        cross-validation; ``{}`` leaves it out), the card model weighted by ``weight`` (default
        :data:`LEARNED_WEIGHT`; other weights for bench/train_cards.py's sweep)."""
        learned = self.learned_rank if learned is None else learned
        rankings = [self.dense_rank, self.bm25_rank] + ([self.prose_rank] if self.prose_rank else [])
        weights = [1.0] * len(rankings)
        if learned:
            rankings.append(learned)
            weights.append(LEARNED_WEIGHT if weight is None else weight)
        return fuse_ranks(*rankings, weights=weights)

    def fused_order(self, learned: dict[str, int] | None = None, weight: float | None = None) -> list[str]:
        """Card ids by fused score (ties: the dense rank, then the id)."""
        return self.order_of(self.fused(learned, weight))

    def order_of(self, fused: dict[str, float]) -> list[str]:
        """The card ids of a fusion's scores, best first (ties: the dense rank, then the id)."""
        last = len(self.dense_rank) + 1
        return sorted(fused, key=lambda cid: (-fused[cid], self.dense_rank.get(cid, last), cid))


def _chunks(text: str, limit: int) -> list[str]:
    """Paragraph-ish chunks of at most ~limit characters (never splits a line)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    out: list[str] = []
    cur = ""
    for ln in lines:
        if cur and len(cur) + len(ln) + 1 > limit:
            out.append(cur)
            cur = ln
        else:
            cur = f"{cur}\n{ln}" if cur else ln
    if cur:
        out.append(cur)
    return out


def _strip_md(text: str) -> str:
    return text.replace("**", "").replace("`", "")


#: Whether the body paragraphs are dense passages too. They are not: a user's message is matched against how users
#: ask (questions, symptoms), the title and the misconceptions; the body is technical explanation whose
#: paragraphs matched long pasted messages about other cards (a card's score is its best passage, so a card with
#: many body paragraphs had many chances). Measured on the real-question dev set (bench/eval_answers.py inputs,
#: hit@3 zh / en): with body 0.825 / 0.853, without 0.838 / 0.859; hit@1 0.494 / 0.627 → 0.519 / 0.638. BM25 still
#: indexes the body.
DENSE_BODY = False


def dense_passages(card: Card, langs: Sequence[str] = ("en", "zh"), body: bool | None = None) -> list[tuple[str, str]]:
    """(view name, text) passages of one card for the embedding model, in the given languages
    (body paragraphs only when ``body`` / :data:`DENSE_BODY` says so)."""
    body = DENSE_BODY if body is None else body
    out: list[tuple[str, str]] = []
    for lang in langs:
        title = card.title_en if lang == "en" else card.title_zh
        questions = card.questions_en if lang == "en" else card.questions_zh
        out.append((f"title_{lang}", title))
        out += [(f"q_{lang}{i}", q) for i, q in enumerate(questions)]
        symptoms = card.symptoms_en if lang == "en" else card.symptoms_zh
        out += [(f"sym_{lang}{i}", s) for i, s in enumerate(symptoms)]
        for i, m in enumerate(card.misconceptions):
            text = f"{m.wrong_en} {m.correction_en}" if lang == "en" else f"{m.wrong_zh} {m.correction_zh}"
            out.append((f"mis_{lang}{i}", text))
        if not body:
            continue
        text = card.body_en if lang == "en" else card.body_zh
        for j, chunk in enumerate(_chunks(_strip_md(text), _MAX_CHUNK_CHARS[lang])):
            out.append((f"body_{lang}{j}", chunk))
    return out


_CJK_RUNS = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]+")


def dense_query_text(expanded: str, multilingual: bool) -> str:
    """What the embedding model sees: the expanded query, minus Chinese for English-only models.

    An English-only model maps any Chinese text to nearly the same vector (so every Chinese
    question looked relevant); the glossary expansion already carries its meaning in English.
    """
    if multilingual:
        return expanded
    text = _CJK_RUNS.sub(" ", expanded)
    text = re.sub(r"\(\s*[;\s]*|[;\s]*\)", " ", text)
    text = re.sub(r"\s*;\s*(;\s*)*", "; ", text)
    return re.sub(r"\s+", " ", text).strip(" ;")


def bm25_text(card: Card) -> str:
    """Everything searchable about a card, both languages."""
    parts = [card.title_zh, card.title_en, *card.questions_zh, *card.questions_en, *card.symptoms_zh, *card.symptoms_en]
    for m in card.misconceptions:
        parts += [m.wrong_zh, m.wrong_en, m.correction_zh, m.correction_en]
    parts += [card.body_zh, card.body_en]
    return "\n".join(parts)


def _node(card: Card, view: str, text: str) -> TextNode:
    from llama_index.core.schema import TextNode

    return TextNode(
        id_=f"{card.id}#{view}",
        text=text,
        metadata={"card_id": card.id, "topics": list(card.topics), "view": view},
        excluded_embed_metadata_keys=["card_id", "topics", "view"],
        excluded_llm_metadata_keys=["card_id", "topics", "view"],
    )


# --------------------------------------------------------------------------------------
# BM25 through llama-index's BM25Retriever, with our tokenizer
# --------------------------------------------------------------------------------------
def _make_bm25_retriever(nodes: list[TextNode], top_k: int) -> Any:
    import bm25s
    from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
    from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict
    from llama_index.retrievers.bm25 import BM25Retriever

    class TokenizedBM25Retriever(BM25Retriever):  # type: ignore[misc]  # llama-index-retrievers-bm25 ships no types
        """``BM25Retriever`` whose corpus and queries go through :func:`rag.tokenize.tokenize`.

        The stock class tokenizes with a regex that scores Chinese as zero; the bm25s index and
        scoring are unchanged (no hand-written BM25).
        """

        def __init__(self, nodes: list[TextNode], similarity_top_k: int) -> None:
            corpus = [node_to_metadata_dict(n) | {"node_id": n.node_id} for n in nodes]
            bm25 = bm25s.BM25(corpus=corpus)
            bm25.index(
                [tokenize(n.get_content(metadata_mode=MetadataMode.NONE)) for n in nodes],
                show_progress=False,
            )
            super().__init__(existing_bm25=bm25, similarity_top_k=similarity_top_k, skip_stemming=True)

        def _scored_docs(self, query: str) -> list[tuple[dict[str, Any], float]]:
            """bm25s's ranking of the corpus entries for ``query``, zero scores left out."""
            tokens = tokenize(query)
            if not tokens:
                return []
            docs, scores = self.bm25.retrieve([tokens], k=self.similarity_top_k, show_progress=False, n_threads=0)
            return [
                (doc if isinstance(doc, dict) else self.corpus[int(doc)], float(score))
                for doc, score in zip(docs[0], scores[0], strict=True)
                if float(score) > 0.0
            ]

        def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            return [
                NodeWithScore(node=metadata_dict_to_node(d), score=score)
                for d, score in self._scored_docs(query_bundle.query_str)
            ]

        def card_scores(self, query: str) -> dict[str, float]:
            """Best BM25 score per card: the same scores as :meth:`_retrieve`, without rebuilding every node from
            its stored dict (that rebuild was most of the BM25 cost of an answer, ``bench/profile_ask.py``)."""
            out: dict[str, float] = {}
            for d, score in self._scored_docs(query):
                cid = d["card_id"]
                out[cid] = max(out.get(cid, 0.0), score)
            return out

    return TokenizedBM25Retriever(nodes, similarity_top_k=top_k)


def fuse_ranks(
    *rankings: dict[str, int], k: float | None = None, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Reciprocal rank fusion: card id → sum over the rankings that rank it of weight / (k + rank) (1-based ranks;
    every weight 1 unless ``weights`` gives one per ranking)."""
    k = RRF_K if k is None else k
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    if len(weights) != len(rankings):
        raise ValueError(f"fuse_ranks: {len(rankings)} rankings but {len(weights)} weights")
    fused: dict[str, float] = {}
    for ranks, w in zip(rankings, weights, strict=True):
        for cid, r in ranks.items():
            fused[cid] = fused.get(cid, 0.0) + w / (k + r)
    return fused


# --------------------------------------------------------------------------------------
# the retriever
# --------------------------------------------------------------------------------------
class Retriever:
    """Hybrid retriever over the knowledge cards. Build once, query many times.

    ``cards``: defaults to :func:`rag.cards.load_cards`. ``settings``: defaults to
    :meth:`EmbeddingSettings.from_env`. ``cache_dir``: embedding cache folder (default
    ``BATCHBOT_CACHE_DIR`` or ``~/.cache/batchbot``); ``cache_dir=False`` disables the cache.
    ``embed_model``: an already loaded llama-index embedding to reuse (skips loading).
    ``threshold``: relevance threshold (default ``BATCHBOT_RELEVANCE_THRESHOLD`` or
    :data:`DEFAULT_THRESHOLD`).
    ``card_model``: the learned card ranking (default: the shipped one, :func:`rag.card_model.load_card_model`;
    ``False``: none, the two retrievers alone).
    """

    def __init__(
        self,
        cards: Sequence[Card] | None = None,
        settings: EmbeddingSettings | None = None,
        cache_dir: str | Path | None | bool = None,
        progress: bool = True,
        *,
        embed_model: BaseEmbedding | None = None,
        threshold: float | None = None,
        card_model: CardModel | bool | None = None,
    ) -> None:
        self.cards: list[Card] = list(cards) if cards is not None else load_cards()
        if not self.cards:
            raise ValueError("Retriever needs at least one card")
        self.settings = settings or EmbeddingSettings.from_env()
        self.progress = progress
        if threshold is None:
            env = os.environ.get(ENV_THRESHOLD, "").strip()
            threshold = float(env) if env else DEFAULT_THRESHOLD
        self.threshold = float(threshold)
        self._by_id = {c.id: c for c in self.cards}
        self.card_model: CardModel | None = (
            load_card_model() if card_model is None or card_model is True else card_model or None
        )

        log = logger.info if progress else logger.debug
        # --- dense -----------------------------------------------------------------------
        self.embed_model = embed_model if embed_model is not None else self._load_model(log)
        self.multilingual = self.settings.resolved_multilingual
        langs = ("en", "zh") if self.multilingual else ("en",)
        self.dense_nodes: list[TextNode] = [
            _node(c, view, text) for c in self.cards for view, text in dense_passages(c, langs)
        ]
        texts = [n.get_content(metadata_mode=_embed_mode()) for n in self.dense_nodes]
        enabled = cache_dir is not False
        self.cache = EmbeddingCache(
            self.settings.identity(), cache_dir if isinstance(cache_dir, (str, Path)) else None, enabled=enabled
        )
        log(
            "embedding %d passages of %d cards (cache: %s)",
            len(texts),
            len(self.cards),
            self.cache.path if enabled else "off",
        )
        self.cache_result: CacheResult = self.cache.get_or_compute(texts, self._embed_passages)
        log("embeddings: cache %s, %d passages embedded", self.cache_result.status, self.cache_result.embedded)
        self._matrix = self.cache_result.vectors.astype(np.float32)
        norms = np.linalg.norm(self._matrix, axis=1, keepdims=True)
        self._matrix = self._matrix / np.maximum(norms, 1e-12)
        for node, vec in zip(self.dense_nodes, self._matrix, strict=True):
            node.embedding = vec.tolist()
        self._node_card = np.array([self._card_index(n.metadata["card_id"]) for n in self.dense_nodes])

        # --- lexical -----------------------------------------------------------------------
        self.bm25_nodes: list[TextNode] = [_node(c, "all", bm25_text(c)) for c in self.cards]
        self._bm25 = _make_bm25_retriever(self.bm25_nodes, top_k=len(self.bm25_nodes))
        log("retriever ready: %d cards, %d dense passages", len(self.cards), len(self.dense_nodes))

    # ---- construction helpers ---------------------------------------------------------
    def _load_model(self, log: Callable[..., None]) -> BaseEmbedding:
        log("loading embedding model %s", self.settings.model)
        model: BaseEmbedding = load_embedding(self.settings)
        return model

    def _embed_passages(self, texts: list[str]) -> list[list[float]]:
        return self.embed_model.get_text_embedding_batch(texts, show_progress=self.progress)

    def _card_index(self, card_id: str) -> int:
        return next(i for i, c in enumerate(self.cards) if c.id == card_id)

    # ---- scoring ----------------------------------------------------------------------
    def _dense_card_scores(self, expanded: str) -> np.ndarray:
        text = dense_query_text(expanded, self.multilingual)
        if not text:  # nothing the model can read: no similarity at all
            return np.zeros(len(self.cards), dtype=np.float32)
        q = np.asarray(self.embed_model.get_query_embedding(text), dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        sims = self._matrix @ q
        best = np.full(len(self.cards), -1.0, dtype=np.float32)
        np.maximum.at(best, self._node_card, sims)
        return best

    def _bm25_card_scores(self, expanded: str) -> dict[str, float]:
        scores: dict[str, float] = self._bm25.card_scores(expanded)
        return scores

    def rankings(self, query: str) -> Rankings:
        """Every ranking that the fusion reads for ``query`` (each over all cards it scores)."""
        cleaned = clean_query(query)
        expanded = expand_query(cleaned)
        dense = self._dense_card_scores(expanded)
        bm25 = self._bm25_card_scores(expanded)
        dense_order = sorted(range(len(self.cards)), key=lambda i: (-dense[i], self.cards[i].id))
        bm25_order = sorted(bm25, key=lambda cid: (-bm25[cid], cid))
        return Rankings(
            cleaned=cleaned,
            expanded=expanded,
            dense={self.cards[i].id: float(dense[i]) for i in range(len(self.cards))},
            bm25=bm25,
            dense_rank={self.cards[i].id: r for r, i in enumerate(dense_order, 1)},
            bm25_rank={cid: r for r, cid in enumerate(bm25_order, 1)},
            prose_rank=self._prose_ranks(cleaned),
            learned_rank=self.card_model.ranks(cleaned, self._by_id) if self.card_model is not None else {},
        )

    def search(self, query: str, k: int = 3) -> SearchResult:
        """Full result: fused ranking (top k), per-retriever rankings, relevance and decision."""
        rk = self.rankings(query)

        def hit(cid: str, score: float) -> Hit:
            return Hit(
                card=self._by_id[cid],
                score=score,
                dense_rank=rk.dense_rank.get(cid),
                bm25_rank=rk.bm25_rank.get(cid),
                dense_score=rk.dense[cid],
                bm25_score=rk.bm25.get(cid),
                prose_rank=rk.prose_rank.get(cid),
                learned_rank=rk.learned_rank.get(cid),
            )

        fused = rk.fused()
        order = rk.order_of(fused)
        hits = [hit(cid, fused[cid]) for cid in order[:k]]
        relevance = max(rk.dense.values())
        dense_top = sorted(rk.dense_rank, key=rk.dense_rank.__getitem__)[:k]
        bm25_top = sorted(rk.bm25_rank, key=rk.bm25_rank.__getitem__)[:k]
        return SearchResult(
            query=query,
            expanded_query=rk.expanded,
            hits=hits,
            relevance=relevance,
            relevant=relevance >= self.threshold,
            dense=[hit(cid, rk.dense[cid]) for cid in dense_top],
            bm25=[hit(cid, rk.bm25[cid]) for cid in bm25_top],
        )

    def _prose_ranks(self, cleaned: str) -> dict[str, int]:
        """BM25 ranks on the prose lines of ``cleaned`` when :data:`PROSE_MODE` says this message gets them, else {}."""
        prose = prose_only(cleaned).strip()
        if not prose or PROSE_MODE == "off":
            return {}
        zh = bool(_CJK_RUNS.search(prose))
        differs = prose != cleaned.strip()
        wanted = {"always": True, "differs": differs, "zh": zh and differs, "zh-always": zh}.get(PROSE_MODE, False)
        if not wanted:
            return {}
        scores = self._bm25_card_scores(expand_query(prose))
        return {cid: r for r, cid in enumerate(sorted(scores, key=lambda c: (-scores[c], c)), 1)}

    # ---- public API -------------------------------------------------------------------
    def retrieve(self, query: str, k: int = 3) -> list[Hit]:
        """Top-k cards by RRF of dense and BM25; ``[]`` when the question is below the threshold."""
        res = self.search(query, k)
        return res.hits if res.relevant else []

    def retrieve_dense(self, query: str, k: int = 3) -> list[Hit]:
        """Top-k cards by dense similarity alone (no threshold); for evaluation."""
        return self.search(query, k).dense

    def retrieve_bm25(self, query: str, k: int = 3) -> list[Hit]:
        """Top-k cards by BM25 alone (cards with score 0 left out; no threshold); for evaluation."""
        return self.search(query, k).bm25

    def relevance(self, query: str) -> float:
        return float(self._dense_card_scores(expand_query(clean_query(query))).max())

    def is_relevant(self, hits_or_query: Sequence[Hit] | str) -> bool:
        """For a query string: relevance ≥ threshold. For hits from :meth:`retrieve`: non-empty."""
        if isinstance(hits_or_query, str):
            return self.relevance(hits_or_query) >= self.threshold
        return len(hits_or_query) > 0


def _embed_mode() -> MetadataMode:
    from llama_index.core.schema import MetadataMode

    return MetadataMode.EMBED


__all__ = [
    "Retriever",
    "Hit",
    "SearchResult",
    "DEFAULT_THRESHOLD",
    "RRF_K",
    "PROSE_MODE",
    "fuse_ranks",
    "dense_passages",
    "bm25_text",
]
