"""BM25 per card: llama-index's ``retrieve()`` (every node rebuilt from its stored dict) vs ``card_scores``.

Both read the same bm25s index; this checks the scores are identical on the real dev questions and times the two
in one process. Usage: ``PYTHONPATH=. .venv/bin/python bench/bm25_card_scores.py``.
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def main() -> None:
    from llama_index.core.schema import QueryBundle

    from bench.eval_answers import load_dev_set
    from rag import Assistant
    from rag.glossary import expand_query
    from rag.query_clean import clean_query

    bm25 = Assistant().retriever._bm25
    queries = [expand_query(clean_query(q["question"])) for q in load_dev_set()]

    def via_nodes(query: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for nws in bm25.retrieve(QueryBundle(query_str=query)):
            cid = nws.node.metadata["card_id"]
            out[cid] = max(out.get(cid, 0.0), float(nws.score or 0.0))
        return out

    same = sum(via_nodes(q) == bm25.card_scores(q) for q in queries)
    print(f"identical scores: {same} of {len(queries)} queries")
    for _ in range(2):
        t0 = time.perf_counter()
        for q in queries:
            via_nodes(q)
        t1 = time.perf_counter()
        for q in queries:
            bm25.card_scores(q)
        t2 = time.perf_counter()
        old, new = (t1 - t0) / len(queries) * 1e3, (t2 - t1) / len(queries) * 1e3
        print(
            f"retrieve() {old:.2f} ms  card_scores {new:.2f} ms  ratio {new / old:.2f}  (load {os.getloadavg()[0]:.1f})"
        )


if __name__ == "__main__":
    main()
