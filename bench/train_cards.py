"""Train the card model (rag/card_model.py) on the real-question dev set and measure it honestly.

    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python -m bench.train_cards           # CV report, then write the artifact
    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python -m bench.train_cards --cv-only # CV report only
    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python -m bench.train_cards --no-cv   # write the artifact only (~1 min)
    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python -m bench.train_cards --cv-only --by-file  # folds of whole files
    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python -m bench.train_cards --cv-only --c 3,10,30 --weights 1,2,3  # sweep

The figure that counts is grouped 5-fold cross-validation (folds split by source thread, bench.train_act's folds):
for each fold a model is fitted on the other four and the fused ranking (rag.retrieval.Rankings) of each held-back
question is scored with and without it — hit@1 / hit@3 of the fused top cards against the labelled cards, per
language, before any citing rule of rag.assistant. Scores of the fitted model on the dev set itself mean nothing.

Examples: every dev question once per labelled card (its text as the assistant's retrieval reads it,
rag.assistant.message_query then rag.query_clean.clean_query), and every card's own questions, symptoms and titles
(so that a card no dev question is labelled with is still a class). Only tests/data/real_questions/ is read; never
the held-out set. Deterministic: fixed folds, lbfgs from zeros, vocabulary and classes in sorted order.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression

from bench.train_act import folds, load_questions, thread_key
from rag.card_model import ARTIFACT, CardModel, idf_of, model_to_json, term_counts, tfidf
from rag.cards import Card, load_cards

#: Regularisation (scikit-learn's C). Grouped CV on the dev set (1612 questions, 139 cards; ``--cv-only --c 3,10,30
#: --weights 1,2,3``), the model alone hit@3 zh / en: C=3 0.790 / 0.843, C=10 0.818 / 0.854, C=30 0.821 / 0.855; fused
#: at weight 2: 0.825 / 0.881, 0.834 / 0.884, 0.829 / 0.881 — C=10.
#: Stop 38 (1664 questions, 144 cards, with the Chinese character bigrams of rag.card_model.term_counts): C=10 fused
#: hit@1 / hit@3 zh 0.644 / 0.842, en 0.664 / 0.869; C=30 at weight 2 0.640 / 0.842, 0.665 / 0.861, at weight 3 0.644 /
#: 0.843, 0.653 / 0.867 — C=10 and weight 2 stay.
SHIP_C = 10.0
#: A term must occur in at least this many examples to be in the vocabulary (``--cv-only --min-df 1``: fused hit@1 /
#: hit@3 zh 0.630 / 0.835, en 0.672 / 0.883 against 0.625 / 0.834, 0.674 / 0.884 at 2 — the same, with about twice the
#: vocabulary).
MIN_DF = 2
#: Weights smaller than this (absolute) are dropped from the artifact; see the CV report's "pruned" line.
PRUNE = 0.05


def retrieval_text(question: str) -> str:
    """The text the card model reads of a message: what rag.assistant hands retrieval, cleaned as retrieval cleans it."""
    from calculators.limits import MAX_QUESTION_CHARS
    from rag.assistant import message_query
    from rag.history import clean_text
    from rag.parts import split_message
    from rag.query_clean import clean_query
    from rag.setup import read_setup

    text = clean_text(question).strip()
    parts = split_message(text[: MAX_QUESTION_CHARS + 1])
    _, artifacts = read_setup(parts)
    return clean_query(clean_text(message_query(parts, artifacts)))


def card_examples(cards: list[Card]) -> list[tuple[str, str]]:
    """(text, card id) for each card's own questions, symptoms and titles."""
    out: list[tuple[str, str]] = []
    for c in cards:
        for text in [*c.questions_zh, *c.questions_en, *c.symptoms_zh, *c.symptoms_en, c.title_zh, c.title_en]:
            out.append((text, c.id))
    return out


def examples(items: list[dict[str, Any]], texts: list[str], card_ids: set[str]) -> list[tuple[str, str]]:
    """(text, card id) once per labelled card of each question (labels of cards that no longer exist dropped)."""
    return [(t, c) for q, t in zip(items, texts, strict=True) for c in q.get("cards") or [] if c in card_ids]


def fit(pairs: list[tuple[str, str]], c: float = SHIP_C, prune: float = PRUNE, min_df: int = MIN_DF) -> CardModel:
    """TF-IDF (rag.card_model.tfidf, so training reads text as answering does) + multinomial logistic regression."""
    counts = [term_counts(t) for t, _ in pairs]
    df: dict[str, int] = {}
    for cnt in counts:
        for term in cnt:
            df[term] = df.get(term, 0) + 1
    terms = sorted(t for t, n in df.items() if n >= min_df)
    vocab = {t: i for i, t in enumerate(terms)}
    idf = idf_of(np.array([df[t] for t in terms], dtype=np.float64), len(pairs)).astype(np.float32)
    rows, cols, vals = [], [], []
    for i, cnt in enumerate(counts):
        for j, v in sorted(tfidf(cnt, vocab, idf).items()):
            rows.append(i)
            cols.append(j)
            vals.append(v)
    x = csr_matrix((vals, (rows, cols)), shape=(len(pairs), len(terms)))
    y = [c_id for _, c_id in pairs]
    clf = LogisticRegression(C=c, max_iter=1000)
    clf.fit(x, y)
    classes = [str(k) for k in clf.classes_]
    weights = np.asarray(clf.coef_.T, dtype=np.float32)  # (terms, classes)
    weights[np.abs(weights) < prune] = 0.0
    return CardModel(classes, terms, idf, weights, np.asarray(clf.intercept_, dtype=np.float32))


def _hits(order: list[str], expected: list[str]) -> tuple[bool, bool]:
    return bool(order) and order[0] in expected, any(c in expected for c in order[:3])


def cross_validate(
    items: list[dict[str, Any]],
    texts: list[str],
    cards: list[Card],
    k: int = 5,
    by_file: bool = False,
    cs: tuple[float, ...] = (SHIP_C,),
    weights: tuple[float | None, ...] = (None,),
    min_df: int = MIN_DF,
) -> None:
    """Print grouped k-fold hit@1 / hit@3 of the fused ranking without and with the fold's model, per language.
    ``by_file``: folds of whole dev files (each file was mined and labelled in one batch, so a held-back file shares
    neither its sources nor its labeller's habits with the training folds: the stricter figure). ``cs`` and
    ``weights`` sweep the regularisation and the model's weight in the fusion (None: rag.retrieval.LEARNED_WEIGHT)."""
    from rag.retrieval import Retriever

    retriever = Retriever(cards=cards, progress=False, card_model=False)
    ranks = [retriever.rankings(t) for t in texts]
    fold = folds([q["_file"] if by_file else thread_key(str(q.get("source", q["id"]))) for q in items], k)
    ids = {c.id for c in cards}
    own = card_examples(cards)
    table: dict[str, dict[str, list[tuple[bool, bool]]]] = {}
    for f in range(k):
        train = [i for i in range(len(items)) if fold[i] != f]
        pairs = examples([items[i] for i in train], [texts[i] for i in train], ids) + own
        models = {c: fit(pairs, c=c, min_df=min_df) for c in cs}
        for i in (i for i in range(len(items)) if fold[i] == f):
            expected = [c for c in items[i].get("cards") or [] if c in ids]
            if not expected:
                continue
            row = table.setdefault(items[i]["lang"], {})
            row.setdefault("base", []).append(_hits(ranks[i].fused_order({}), expected))
            for c, model in models.items():
                learned = model.ranks(texts[i], ids)
                tag = "" if cs == (SHIP_C,) else f" C={c:g}"
                row.setdefault(f"model alone{tag}", []).append(
                    _hits(sorted(learned, key=learned.__getitem__), expected)
                )
                for w in weights:
                    wtag = "" if w is None else f" w={w:g}"
                    row.setdefault(f"fused{tag}{wtag}", []).append(_hits(ranks[i].fused_order(learned, w), expected))
    print(
        f"grouped {k}-fold CV ({'whole files' if by_file else 'threads'}), fused top cards before citing rules (hit@1 / hit@3):"
    )
    for lang, row in sorted(table.items()):
        for name, hits in row.items():
            n = len(hits)
            print(f"  {lang} {name:20s} n={n}  {sum(h[0] for h in hits) / n:.3f} / {sum(h[1] for h in hits) / n:.3f}")


def train_and_write(
    items: list[dict[str, Any]], texts: list[str], cards: list[Card], out: Path = ARTIFACT
) -> CardModel:
    model = fit(examples(items, texts, {c.id for c in cards}) + card_examples(cards))
    files = sorted({q["_file"] for q in items})
    meta = {"files": files, "questions": len(items), "c": SHIP_C, "min_df": MIN_DF, "prune": PRUNE}
    out.write_text(model_to_json(model.classes, list(model.vocab), model.idf, model.weights, model.bias, meta), "utf-8")
    kept = int(np.count_nonzero(model.weights))
    print(
        f"wrote {out} ({out.stat().st_size // 1024} KiB): {len(model.classes)} cards, {len(model.vocab)} terms, {kept} weights"
    )
    return model


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cv-only", action="store_true")
    ap.add_argument("--no-cv", action="store_true")
    ap.add_argument("--by-file", action="store_true", help="CV folds of whole dev files instead of threads")
    ap.add_argument("--min-df", type=int, default=MIN_DF, help="CV only: a term must occur in this many examples")
    ap.add_argument("--c", default="", help="CV sweep of the regularisation, e.g. 3,10,30 (default: SHIP_C)")
    ap.add_argument("--weights", default="", help="CV sweep of the fusion weight, e.g. 1,2,3 (default: LEARNED_WEIGHT)")
    args = ap.parse_args(argv)
    items = load_questions()
    cards = load_cards()
    texts = [retrieval_text(q["question"]) for q in items]
    if not args.no_cv:
        cs = tuple(float(x) for x in args.c.split(",") if x) or (SHIP_C,)
        weights = tuple(float(x) for x in args.weights.split(",") if x) or (None,)
        cross_validate(items, texts, cards, by_file=args.by_file, cs=cs, weights=weights, min_df=args.min_df)
    if not args.cv_only:
        train_and_write(items, texts, cards)
    return 0


if __name__ == "__main__":
    sys.exit(main())
