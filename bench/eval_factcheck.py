"""Precision and recall of ``calculators.factcheck.fact_check`` on the hand-labelled chatbot answers.

    .venv/bin/python bench/eval_factcheck.py [--misses]

Data: ``tests/data/factcheck/answers_*.yaml`` (``answers_holdout.yaml`` is reported apart: the rules were
not tuned on it) — each answer is a list of lines labelled W (wrong),
I (imprecise) or R (right / no claim). A flag (verdict wrong or imprecise) is a true positive when it
overlaps a W/I line and a false positive when it overlaps only R lines. Recall = share of W/I lines
overlapped by at least one flag. Also runs over the bodies of our own knowledge cards (correct text that
quotes the myths to deny them), where every flag is a false positive. ``tests/test_factcheck_eval.py`` asserts precision ≥ 0.95.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

import yaml  # noqa: E402

from calculators.factcheck import fact_check  # noqa: E402

DATA_DIR = ROOT / "tests" / "data" / "factcheck"


@dataclass
class Score:
    answers: int = 0
    lines: int = 0
    labelled_bad: int = 0
    true_pos: int = 0
    false_pos: int = 0
    found_bad: int = 0
    false_positives: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        flagged = self.true_pos + self.false_pos
        return self.true_pos / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        return self.found_bad / self.labelled_bad if self.labelled_bad else 1.0


def load_answers(data_dir: Path = DATA_DIR, pattern: str = "answers_*.yaml") -> list[dict]:
    out: list[dict] = []
    for path in sorted(data_dir.glob(pattern)):
        for item in yaml.safe_load(path.read_text(encoding="utf-8")):
            labels = [label for label, _ in item["lines"]]
            if not set(labels) <= {"W", "I", "R"}:
                raise ValueError(f"{path.name} {item['id']}: labels must be W, I or R, not {set(labels)}")
            out.append(item)
    return out


def score(answers: list[dict]) -> Score:
    s = Score()
    for item in answers:
        s.answers += 1
        texts = [text for _, text in item["lines"]]
        text = "\n".join(texts)
        spans, pos = [], 0
        for label, line in item["lines"]:
            spans.append((label, pos, pos + len(line)))
            pos += len(line) + 1
        s.lines += len(spans)
        result = fact_check(text)
        hit_bad: set[int] = set()
        for claim in result.flagged:
            a, b = claim.span
            over = [i for i, (_, x, y) in enumerate(spans) if a < y and x < b]
            bad = [i for i in over if spans[i][0] in ("W", "I")]
            if bad:
                s.true_pos += 1
                hit_bad.update(bad)
            else:
                s.false_pos += 1
                s.false_positives.append(f"{item['id']}: [{claim.rule}] {claim.text}")
        for i, (label, _, _) in enumerate(spans):
            if label in ("W", "I"):
                s.labelled_bad += 1
                if i in hit_bad:
                    s.found_bad += 1
                else:
                    s.misses.append(f"{item['id']}: {texts[i]}")
    return s


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--misses", action="store_true", help="list the wrong lines that were not flagged")
    args = p.parse_args()
    for name, pattern in (
        ("all", "answers_*.yaml"),
        ("tuned on (en, zh)", "answers_[ez][nh].yaml"),
        ("held out", "answers_holdout.yaml"),
    ):
        s = score(load_answers(pattern=pattern))
        print(f"## {name}: answers {s.answers}, lines {s.lines}, labelled wrong/imprecise {s.labelled_bad}")
        print(f"flags {s.true_pos + s.false_pos}: true {s.true_pos}, false {s.false_pos}")
        print(f"precision {s.precision:.3f}  recall {s.recall:.3f} ({s.found_bad}/{s.labelled_bad})")
        for fp in s.false_positives:
            print("FALSE POSITIVE", fp)
        if args.misses:
            for m in s.misses:
                print("MISS", m)
    # Our own cards: correct text that quotes and denies the myths; every flag here is a false positive.
    from rag.cards import load_cards

    claims = flags = 0
    for card in load_cards():
        result = fact_check(card.body)
        claims += len(result.claims)
        for c in result.flagged:
            flags += 1
            print(f"FALSE POSITIVE (card {card.id}): [{c.rule}] {c.text[:120]}")
    print(f"## card bodies: {claims} claims, {flags} flagged (all false positives)")
    # The key facts of the real-question set: correct statements from maintainers' replies.
    facts = [
        (q["id"], k)
        for f in sorted((ROOT / "tests" / "data" / "real_questions").glob("*.yaml"))
        for q in (yaml.safe_load(f.read_text(encoding="utf-8")) or {}).get("questions", [])
        for k in q.get("key_facts") or []
    ]
    flagged = [(qid, c) for qid, k in facts for c in fact_check(k).flagged]
    for qid, c in flagged:
        print(f"FLAG (key fact {qid}): [{c.rule}] {c.text[:120]} -> {c.correction_en}")
    print(f"## real-question key facts: {len(facts)} statements, {len(flagged)} flagged")


if __name__ == "__main__":
    main()
