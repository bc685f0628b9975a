"""Where one ``Assistant.ask`` spends its CPU: cProfile over the real dev questions, grouped by stage.

    PYTHONPATH=. .venv/bin/python bench/profile_ask.py [--threads 1] [--every N] [--top 25]

Questions: ``tests/data/real_questions/*.yaml`` (the dev set; never the held-out set). One warm-up pass
(unprofiled), then one profiled pass. Each stage is the *cumulative* time of the functions that start it
(a function called inside another stage's function is counted in both only where the stages nest, e.g.
tokenisation inside the embedding call: the table says which rows are parts of which). Shares are of the
profiled total of ``Assistant.ask``. cProfile adds overhead per Python call, so Python-heavy stages look
relatively larger than they are; ``bench/latency.py`` gives unprofiled times.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# cProfile sees only the calling thread: embed queries there, not on the micro-batcher's thread.
os.environ.setdefault("BATCHBOT_EMBED_BATCH_WINDOW_MS", "0")

#: (label, file suffix, function name): a stage's time = cumulative time of that function.
STAGES: list[tuple[str, str, str]] = [
    ("retrieval: Retriever.search", "rag/retrieval.py", "search"),
    ("  query embedding (Retriever._dense_card_scores)", "rag/retrieval.py", "_dense_card_scores"),
    ("    sentence-transformers encode", "sentence_transformers/base/model.py", "encode"),
    ("      tokenisation (preprocess)", "sentence_transformers/base/model.py", "preprocess"),
    ("      forward pass (model forward)", "sentence_transformers/base/model.py", "forward"),
    ("  BM25 (Retriever._bm25_card_scores, incl. prose)", "rag/retrieval.py", "_bm25_card_scores"),
    ("    jieba cut (rag.tokenize)", "rag/tokenize.py", "tokenize"),
    ("  query cleaning (rag.query_clean.clean_query)", "rag/query_clean.py", "clean_query"),
    ("  glossary expansion (rag.glossary.expand_query)", "rag/glossary.py", "expand_query"),
    ("message split (rag.parts.split_message)", "rag/parts.py", "split_message"),
    ("retrieval query (rag.parts.retrieval_query)", "rag/parts.py", "retrieval_query"),
    ("setup reader (rag.setup.read_setup)", "rag/setup.py", "read_setup"),
    ("act classifier (rag.acts.classify_act)", "rag/acts.py", "classify_act"),
    ("intents (rag.intents.detect_intents)", "rag/intents.py", "detect_intents"),
    ("misconceptions (rag.intents.detect_misconceptions)", "rag/intents.py", "detect_misconceptions"),
    ("planner (rag.planner.plan_calls)", "rag/planner.py", "plan_calls"),
    ("calculators (Assistant._run)", "rag/assistant.py", "_run"),
    ("diagnosis (Assistant._diagnose)", "rag/assistant.py", "_diagnose"),
    ("config doctor (Assistant._check_configs)", "rag/assistant.py", "_check_configs"),
    ("composition (rag.compose.compose)", "rag/compose.py", "compose"),
    ("history (rag.history.load_history)", "rag/history.py", "load_history"),
    ("text cleaning (rag.history.clean_text)", "rag/history.py", "clean_text"),
]


def stage_times(stats: pstats.Stats) -> dict[str, tuple[float, int]]:
    """Cumulative seconds and primitive call count of each stage's function."""
    raw = stats.stats  # type: ignore[attr-defined]
    out: dict[str, tuple[float, int]] = {}
    for label, suffix, name in STAGES:
        total, calls = 0.0, 0
        for (path, _line, func), (cc, _nc, _tt, ct, _callers) in raw.items():
            if func == name and path.replace("\\", "/").endswith(suffix):
                total += ct
                calls += cc
        out[label] = (total, calls)
    return out


def regex_time(stats: pstats.Stats) -> float:
    """Own time of compiled-regex methods (search, sub, findall, finditer, match, fullmatch, split)."""
    raw = stats.stats  # type: ignore[attr-defined]
    names = ("re.Pattern", "_sre.SRE_Pattern")
    methods = ("search", "sub", "findall", "finditer", "match", "fullmatch", "split", "subn")
    return sum(
        tt
        for (path, _line, func), (_cc, _nc, tt, _ct, _c) in raw.items()
        if path == "~" and any(f"'{m}' of '{n}" in func for m in methods for n in names)
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (app.py's default is 1)")
    ap.add_argument("--every", type=int, default=1, help="every N-th dev question only (a spread over all files)")
    ap.add_argument("--top", type=int, default=25, help="functions by own time to list")
    ap.add_argument("--save", help="write the raw profile (pstats) here")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    from bench.eval_answers import load_dev_set
    from rag import Assistant

    questions = [q["question"] for q in load_dev_set()]
    questions = questions[:: max(1, args.every)]
    bot = Assistant()
    for q in questions:  # warm-up
        bot.ask(q)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    for q in questions:
        bot.ask(q)
    prof.disable()
    wall = time.perf_counter() - t0
    if args.save:
        prof.dump_stats(args.save)
    stats = pstats.Stats(prof)
    ask_total = stage_times_for(stats, "rag/assistant.py", "ask")
    load = os.getloadavg()
    print(
        f"questions: {len(questions)}; torch threads: {torch.get_num_threads()}; profiled wall {wall:.1f} s "
        f"({wall / len(questions) * 1000:.1f} ms/answer under cProfile); load average {load[0]:.2f}\n"
    )
    print("| stage (cumulative; indented rows are parts of the row above) | s | ms/answer | share of ask |")
    print("|---|---:|---:|---:|")
    for label, (sec, _calls) in stage_times(stats).items():
        print(f"| {label} | {sec:.2f} | {sec / len(questions) * 1000:.2f} | {sec / ask_total:.1%} |")
    rx = regex_time(stats)
    print(
        f"| compiled-regex methods, own time (all stages) | {rx:.2f} | {rx / len(questions) * 1000:.2f} | {rx / ask_total:.1%} |"
    )
    print(f"| **Assistant.ask** | {ask_total:.2f} | {ask_total / len(questions) * 1000:.2f} | 100% |\n")
    print(f"Top {args.top} functions by own time:\n")
    stats.sort_stats("tottime").print_stats(args.top)
    return 0


def stage_times_for(stats: pstats.Stats, suffix: str, name: str) -> float:
    raw = stats.stats  # type: ignore[attr-defined]
    return sum(
        ct for (path, _l, func), (_cc, _nc, _tt, ct, _c) in raw.items() if func == name and path.endswith(suffix)
    )


if __name__ == "__main__":
    raise SystemExit(main())
