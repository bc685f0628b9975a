"""Retrieval quality on the labelled questions: hybrid vs BM25 vs dense, per language.

    .venv/bin/python bench/eval_retrieval.py [--data tests/data/labelled_questions.yaml]
                                             [--threshold 0.3] [--calibrate] [--misses]

A hit at k = any of the top-k cards has the question's expected topic in its ``topics``.
Reports hit@1, hit@3 and MRR (over the top 10) per language for the hybrid (RRF) ranking,
BM25 alone and dense alone, as a Markdown table; then the rejection numbers of the
relevance threshold: share of ``topic: none`` questions rejected, share of on-topic
questions wrongly rejected. ``--calibrate`` prints the relevance scores of both groups and
the thresholds that separate them. Uses the embedding model from ``BATCHBOT_EMBED_*``
(default: the bundled all-MiniLM-L6-v2) and the normal embedding cache.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import yaml  # noqa: E402

DEFAULT_DATA = ROOT / "tests" / "data" / "labelled_questions.yaml"
MODES = ("hybrid", "bm25", "dense")
LANGS = ("zh", "en")


@dataclass
class Question:
    question: str
    lang: str
    topic: str


def load_questions(path: str | Path = DEFAULT_DATA) -> list[Question]:
    rows = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or []
    if isinstance(rows, dict):  # {questions: [...]} or a plain list
        rows = rows.get("questions") or []
    return [Question(str(r["question"]), str(r["lang"]), str(r["topic"])) for r in rows]


def first_hit_rank(hits, topic: str) -> int | None:
    for i, h in enumerate(hits, 1):
        if topic in h.card.topics:
            return i
    return None


def evaluate(retriever, questions: list[Question], depth: int = 10) -> dict:
    """Per mode and language: hit@1, hit@3, MRR, n; plus relevance scores and the misses."""
    ranks: dict[tuple[str, str], list[int | None]] = {(m, lang): [] for m in MODES for lang in LANGS}
    on_scores: list[tuple[float, Question]] = []
    none_scores: list[tuple[float, Question]] = []
    misses: list[tuple[Question, list[str]]] = []
    for q in questions:
        res = retriever.search(q.question, k=depth)
        if q.topic == "none":
            none_scores.append((res.relevance, q))
            continue
        on_scores.append((res.relevance, q))
        for mode, hits in (("hybrid", res.hits), ("bm25", res.bm25), ("dense", res.dense)):
            r = first_hit_rank(hits, q.topic)
            ranks[(mode, q.lang)].append(r)
            if mode == "hybrid" and (r is None or r > 3):
                misses.append((q, [f"{h.card.id}{list(h.card.topics)}" for h in hits[:3]]))
    table: dict[tuple[str, str], dict[str, float]] = {}
    for key, rs in ranks.items():
        n = len(rs)
        table[key] = {
            "n": n,
            "hit@1": sum(1 for r in rs if r is not None and r <= 1) / n if n else float("nan"),
            "hit@3": sum(1 for r in rs if r is not None and r <= 3) / n if n else float("nan"),
            "mrr": sum(1.0 / r for r in rs if r is not None) / n if n else float("nan"),
        }
    return {"table": table, "on": on_scores, "none": none_scores, "misses": misses}


def rejection(result: dict, threshold: float) -> dict[str, float]:
    none = [s for s, _ in result["none"]]
    on = [s for s, _ in result["on"]]
    return {
        "none_n": len(none),
        "none_rejected": sum(1 for s in none if s < threshold),
        "on_n": len(on),
        "on_rejected": sum(1 for s in on if s < threshold),
    }


def markdown_table(result: dict) -> str:
    t = result["table"]
    lines = [
        "| method | lang | n | hit@1 | hit@3 | MRR |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for mode in MODES:
        for lang in LANGS:
            row = t[(mode, lang)]
            lines.append(
                f"| {mode} | {lang} | {row['n']} | {row['hit@1']:.3f} | {row['hit@3']:.3f} | {row['mrr']:.3f} |"
            )
    return "\n".join(lines)


def calibration_report(result: dict) -> str:
    on = sorted(s for s, _ in result["on"])
    none = sorted(s for s, _ in result["none"])
    out = []
    if none:
        out.append(
            f"topic=none relevance: min {none[0]:.3f}  max {none[-1]:.3f}  " + " ".join(f"{s:.3f}" for s in none)
        )
    if on:
        out.append(
            f"on-topic relevance: min {on[0]:.3f}  5th pct {on[max(0, len(on) // 20 - 1)]:.3f}  "
            f"lowest: " + " ".join(f"{s:.3f}" for s in on[:8])
        )
    out.append("threshold → none rejected / on-topic wrongly rejected:")
    for th in [x / 100 for x in range(20, 66, 2)]:
        r = rejection(result, th)
        out.append(f"  {th:.2f}: {r['none_rejected']}/{r['none_n']}  {r['on_rejected']}/{r['on_n']}")
    for s, q in sorted(result["none"], key=lambda x: -x[0])[:8]:
        out.append(f"  none {s:.3f}  {q.question}")
    for s, q in sorted(result["on"], key=lambda x: x[0])[:8]:
        out.append(f"  on   {s:.3f}  [{q.topic}] {q.question}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--threshold", type=float, default=None, help="default: the retriever's")
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--misses", action="store_true", help="list hybrid misses at 3")
    ap.add_argument("--cache-dir", default=None)
    args = ap.parse_args(argv)

    import logging

    logging.basicConfig(level=logging.WARNING)
    from rag.retrieval import Retriever

    questions = load_questions(args.data)
    retriever = Retriever(cache_dir=args.cache_dir, progress=False)
    th = retriever.threshold if args.threshold is None else args.threshold
    result = evaluate(retriever, questions)
    print(f"model: {retriever.settings.model}\n")
    print(markdown_table(result))
    r = rejection(result, th)
    print(
        f"\nrelevance threshold {th:.2f}: rejected {r['none_rejected']}/{r['none_n']} topic=none questions; "
        f"wrongly rejected {r['on_rejected']}/{r['on_n']} on-topic questions"
    )
    if args.calibrate:
        print("\n" + calibration_report(result))
    if args.misses:
        print("\nhybrid misses at 3:")
        for q, top in result["misses"]:
            print(f"  [{q.lang}] [{q.topic}] {q.question}\n      → {top}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
