"""The dev set's answer-level figures with the card model cross-validated: each dev question is answered by a card
model that never saw its file.

The card model (rag/card_model.py) is trained on the dev set, so ``bench/eval_answers.py`` on the dev set scores it
on its own training data (hit@3 near 0.95). Rules that act on the retrieved cards (which to cite, which opens) must
be judged on rankings like the ones new messages get. This script splits the dev files into five folds of whole files
(bench/train_cards.py --by-file), fits a model on four, answers the fifth with it (the rest of the engine unchanged),
and prints the usual table over all folds — the dev figure to compare citing changes with.

    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python -m bench.eval_answers_cv [--json out.json]   # about 5 minutes
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from bench.eval_answers import evaluate, print_table, summarise
from bench.train_act import folds, load_questions
from bench.train_cards import card_examples, examples, fit, retrieval_text
from rag.cards import load_cards


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="write every row and the summary to this file")
    ap.add_argument("-k", type=int, default=5)
    args = ap.parse_args(argv)
    from rag import Assistant

    items = load_questions()
    cards = load_cards()
    ids = {c.id for c in cards}
    texts = [retrieval_text(q["question"]) for q in items]
    fold = folds([q["_file"] for q in items], args.k)
    bot = Assistant()
    own = card_examples(cards)
    rows: list[dict[str, Any]] = []
    for f in range(args.k):
        train = [i for i in range(len(items)) if fold[i] != f]
        bot.retriever.card_model = fit(examples([items[i] for i in train], [texts[i] for i in train], ids) + own)
        rows += evaluate([items[i] for i in range(len(items)) if fold[i] == f], bot)
    summary = summarise(rows)
    print_table(summary)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"summary": summary, "rows": rows}, fh, ensure_ascii=False, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
