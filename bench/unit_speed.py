"""Each function issue 17 made faster, against its plain version, in one process on the real dev questions.

    PYTHONPATH=. .venv/bin/python bench/unit_speed.py [--rounds 3] [--embedding]

The plain versions are the code as it was (kept beside the new one, or copied here where the module now has only
the fast one); ``tests/test_perf5_units.py`` checks that both give the same results. Rounds alternate plain and
fast so the machine's load hits both alike; the table gives the median of the rounds. ``--embedding`` also times the
model's ``eval()`` (called before every query embedding) with and without ``rag.embedding.keep_eval_mode``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def clean_text_reference(text: str) -> str:
    """``rag.history.clean_text`` before issue 17: a per-character pass over every message."""
    text = unicodedata.normalize("NFKC", text)
    text = text.encode("utf-8", "replace").decode("utf-8") if any(0xD800 <= ord(c) <= 0xDFFF for c in text) else text
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")


def slot_match_unguarded(rule: Any, text: str) -> re.Match[str] | None:
    """``rag.slots.SlotRule.match`` before issue 17: every pattern scanned."""
    from rag import slots

    for pattern in rule.patterns:
        for m in pattern.finditer(text):
            if rule.accept(m, text):
                return m
            if rule.accept is slots._always:
                break
    return None


def slot_rules() -> list[Any]:
    """The SlotRule table of ``rag.slots``: every rule the module holds, alone or in a tuple/list of rules."""
    from rag import slots

    found: list[Any] = []
    for value in vars(slots).values():
        for rule in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(rule, slots.SlotRule) and rule not in found:
                found.append(rule)
    return found


def _time(fn: Callable[[Any], object], inputs: Sequence[Any]) -> float:
    t0 = time.perf_counter()
    for x in inputs:
        fn(x)
    return (time.perf_counter() - t0) / len(inputs) * 1000


def compare(
    label: str, plain: Callable[[Any], object], fast: Callable[[Any], object], inputs: Sequence[Any], rounds: int
) -> None:
    a, b = [], []
    for _ in range(rounds):
        a.append(_time(plain, inputs))
        b.append(_time(fast, inputs))
    pa, fb = statistics.median(a), statistics.median(b)
    print(f"| {label} | {len(inputs)} | {pa:.3f} | {fb:.3f} | {fb / pa:.2f}× |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--embedding", action="store_true", help="also time eval() with/without keep_eval_mode (loads the model)"
    )
    args = ap.parse_args(argv)

    from bench.eval_answers import load_dev_set
    from rag import glossary
    from rag.act_model import ActInputs, features, features_reference
    from rag.history import clean_text
    from rag.parts import prose_of, split_message
    from rag.query_clean import clean_query
    from rag.setup import own_prose

    questions = [q["question"] for q in load_dev_set()]
    queries = [glossary.expand_query(clean_query(q)) for q in questions]
    parts = [split_message(q) for q in questions]
    acts = [ActInputs(parts=p, rule_act="explain") for p in parts]
    slot_texts = [own_prose(prose_of(p)) for p in parts] + [x.text for p in parts for x in p if x.kind != "prose"]
    rules = slot_rules()

    print(
        f"{len(questions)} dev questions; median of {args.rounds} alternating rounds; load average {os.getloadavg()[0]:.2f}\n"
    )
    print("| function (per call) | inputs | plain ms | fast ms | fast vs plain |")
    print("|---|---:|---:|---:|---:|")
    compare(
        "glossary `find_terms` (message)", glossary.find_terms_unfiltered, glossary.find_terms, questions, args.rounds
    )
    compare(
        "glossary `find_terms` (expanded query)",
        glossary.find_terms_unfiltered,
        glossary.find_terms,
        queries,
        args.rounds,
    )
    compare("act model `features`", features_reference, features, acts, args.rounds)
    compare("history `clean_text`", clean_text_reference, clean_text, questions, args.rounds)
    compare(
        f"slots: all {len(rules)} SlotRules' `match` on one text",
        lambda t: [slot_match_unguarded(r, t) for r in rules],
        lambda t: [r.match(t) for r in rules],
        slot_texts,
        args.rounds,
    )
    if args.embedding:
        import torch

        torch.set_num_threads(1)
        from rag.embedding import EmbeddingSettings, load_embedding

        st = load_embedding(EmbeddingSettings.from_env(), batch_window_s=0.0)._model
        walk = type(st).eval  # the library's eval(): every module (and transformers' parameter walk) each call
        compare(
            "`model.eval()` as sentence-transformers calls it before each encode",
            lambda _: walk(st),
            lambda _: st.eval(),
            range(200),
            args.rounds,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
