"""Retrieval quality of the query-embedding levers on the real-question dev set, all in one process.

    PYTHONPATH=. .venv/bin/python bench/eval_embedding_levers.py [--limits 128]

Same scoring as ``bench/eval_retrieval_real.py`` (hit@1 / hit@3 / hit@10 of the fused ranking per language),
for: the settings as they are, each ``--limits`` query length, int8 quantisation (its own Retriever, passages
embedded by the quantised model through its own cache file) and int8 with each limit. The queries are built
once (the setup reader is the slow part), so four variants cost little more than one run of that script.
Speed of the same levers: ``bench/embedding_levers.py``.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import bench.eval_retrieval_real as ev  # noqa: E402
from bench.eval_answers import load_dev_set  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limits", type=int, nargs="*", default=[128], help="query lengths in word pieces to try")
    ap.add_argument(
        "--quantize", nargs="*", default=["int8"], help="quantize modes to try (rag.embedding.QUANTIZE_MODES)"
    )
    ap.add_argument("--skip-base", action="store_true", help="leave out the unquantised variants")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from rag.embedding import EmbeddingSettings
    from rag.retrieval import Retriever

    ev.assistant_query = functools.lru_cache(maxsize=None)(ev.assistant_query)  # type: ignore[assignment]
    questions = load_dev_set()
    base = EmbeddingSettings.from_env()
    variants: list[tuple[str, EmbeddingSettings, int | None]] = []
    if not args.skip_base:
        variants += [("as set", base, None)] + [(f"query ≤ {n} pieces", base, n) for n in args.limits]
    for mode in args.quantize:
        q8 = base.model_copy(update={"quantize": mode})
        variants += [(mode, q8, None)] + [(f"{mode}, query ≤ {n} pieces", q8, n) for n in args.limits]
    retrievers: dict[str, Retriever] = {}
    rows = []
    for name, settings, limit in variants:
        key = settings.quantize
        if key not in retrievers:
            retrievers[key] = Retriever(settings=settings, progress=False)
            batcher = retrievers[key].embed_model.query_batcher
            if batcher is not None:  # embed on this thread: nothing runs concurrently here
                batcher.close()
                retrievers[key].embed_model._batcher = None
        r = retrievers[key]
        r.embed_model.limit_query_tokens(limit if limit is not None else settings.query_max_tokens)
        t0 = time.perf_counter()
        table = ev.summary(ev.evaluate(r, questions))
        rows.append((name, table, time.perf_counter() - t0))
        print(f"done: {name} ({rows[-1][2]:.0f} s)", file=sys.stderr, flush=True)
    load = os.getloadavg()
    print(f"model: {base.model}; {len(questions)} dev questions; load average {load[0]:.2f}\n")
    print("| variant | zh hit@1 | zh hit@3 | en hit@1 | en hit@3 | zh hit@10 | en hit@10 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, t, _ in rows:
        zh, en = t["fused/zh"], t["fused/en"]
        print(
            f"| {name} | {zh['hit@1']:.3f} | {zh['hit@3']:.3f} | {en['hit@1']:.3f} | {en['hit@3']:.3f} "
            f"| {zh['hit@10']:.3f} | {en['hit@10']:.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
