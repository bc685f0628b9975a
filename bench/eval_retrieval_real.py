"""Retrieval alone on the real-question dev set: where the expected cards rank, per retriever and language.

    .venv/bin/python bench/eval_retrieval_real.py              # hit@1 / hit@3 / hit@10: fused, BM25 only, dense only
    .venv/bin/python bench/eval_retrieval_real.py --misses     # questions whose expected cards are not in the fused top 3

``bench/eval_answers.py`` scores the cards an answer *cites* (diagnosis and misconception cards first, then the
retrieved cards that pass the ``CLOSE_TO_BEST`` / ``BM25_TOP`` cut), which needs the whole engine (minutes). This
script runs only the retriever, on the same query the assistant builds (the message's prose plus the key line of
each pasted error, :func:`rag.parts.retrieval_query`, plus the setup reader's key lines), so a change to the
glossary, the tokenizer, the cards or the fusion can be measured in well under a minute, and a miss can be sorted
by cause: ranked 4+ (which retriever lost it) or not retrieved at all. Uses the model from ``BATCHBOT_EMBED_*``
(default: the bundled all-MiniLM-L6-v2) and the normal embedding cache.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # bench/ is not part of the installed package (bench.eval_answers below)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bench.eval_answers import DEV_DIR, load_dev_set  # noqa: E402

MODES = ("fused", "bm25", "dense")
DEPTH = 10


def assistant_query(question: str) -> str:
    """The retrieval query :meth:`rag.assistant.Assistant._answer` builds for ``question``."""
    from calculators.limits import MAX_QUESTION_CHARS
    from rag.history import clean_text
    from rag.parts import retrieval_query, split_message
    from rag.setup import read_setup

    text = clean_text(question).strip()
    parts = split_message(text[: MAX_QUESTION_CHARS + 1])
    _, artifacts = read_setup(parts)
    query = retrieval_query(parts)
    extra = [getattr(a, "key_line", "") for a in artifacts]
    if extra:
        query = (query + "\n" + "\n".join(dict.fromkeys(x for x in extra if x)))[:1500]
    return clean_text(query)


def first_rank(ids: list[str], expected: list[str]) -> int | None:
    return next((i for i, cid in enumerate(ids, 1) if cid in expected), None)


def evaluate(retriever: Any, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for q in questions:
        expected = list(q.get("cards") or [])
        if not expected:
            continue
        res = retriever.search(assistant_query(q["question"]), k=DEPTH)
        ranked = {
            "fused": [h.id for h in res.hits],
            "bm25": [h.id for h in res.bm25],
            "dense": [h.id for h in res.dense],
        }
        rows.append(
            {
                "id": q["id"],
                "lang": q["lang"],
                "expected": expected,
                "relevant": res.relevant,
                "top": ranked["fused"][:3],
                **{m: first_rank(ids, expected) for m, ids in ranked.items()},
            }
        )
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for lang in ("zh", "en"):
        sel = [r for r in rows if r["lang"] == lang]
        for mode in MODES:
            rk = [r[mode] for r in sel]
            out[f"{mode}/{lang}"] = {
                "n": len(sel),
                **{f"hit@{k}": sum(1 for r in rk if r is not None and r <= k) / max(1, len(sel)) for k in (1, 3, 10)},
            }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=str(DEV_DIR))
    ap.add_argument("--misses", action="store_true")
    ap.add_argument("--json", help="write the rows and the summary to this file")
    args = ap.parse_args(argv)

    import logging

    logging.basicConfig(level=logging.WARNING)
    from rag.retrieval import Retriever

    retriever = Retriever(progress=False)
    rows = evaluate(retriever, load_dev_set(Path(args.dir)))
    table = summary(rows)
    print(f"model: {retriever.settings.model}\n")
    print("| retriever | lang | n | hit@1 | hit@3 | hit@10 |\n|---|---|---:|---:|---:|---:|")
    for key, s in table.items():
        mode, lang = key.split("/")
        print(f"| {mode} | {lang} | {s['n']:.0f} | {s['hit@1']:.3f} | {s['hit@3']:.3f} | {s['hit@10']:.3f} |")
    if args.misses:
        print("\nfused misses at 3 (rank of the first expected card: fused / bm25 / dense; '-' = beyond 10):")
        for r in rows:
            if r["fused"] is None or r["fused"] > 3:
                f = lambda v: "-" if v is None else str(v)  # noqa: E731
                print(
                    f"  {r['id']}: {f(r['fused'])}/{f(r['bm25'])}/{f(r['dense'])} expected {r['expected']} "
                    f"top {r['top']}"
                )
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": table, "rows": rows}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
