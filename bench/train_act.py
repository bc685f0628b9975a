"""Train the question-act model (rag/act_model.py) on the real-question dev set and measure it honestly.

    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python -m bench.train_act            # CV report, then write the artifact
    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python -m bench.train_act --cv-only  # CV report only
    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python -m bench.train_act --score FILE.yaml  # rules vs shipped model, one file
    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python -m bench.train_act --lofo     # leave-one-file-out report only

Leave-one-file-out (``--lofo``) is the more honest of the two CV figures: each dev file was mined in one batch, so
holding a file out holds out its sources, its wordings and its miner; grouped 5-fold shares all three across folds.

The figure that counts is grouped 5-fold cross-validation (folds split by source thread, so a thread's
near-duplicates never sit on both sides), per language, for the rules alone, the model alone and the
combination. Accuracy of the fitted model on the dev set itself is near 1.0 and means nothing.
Caveat printed with the report: the rules were tuned on these same questions, so the rules' verdict as a
feature is more reliable here than on new messages; the CV figure of any combination that leans on it is
optimistic, the model-alone figure is not.

Deterministic: fixed fold assignment (sorted thread keys), lbfgs from zeros, no sampling.
Only tests/data/real_questions/ is read; never the held-out set.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression

from rag.act_model import ACT_ORDER, ARTIFACT, N_BUCKETS, ActInputs, features, load_act_model, model_to_json
from rag.acts import rule_act
from rag.intents import detect_misconceptions
from rag.parts import prose_of, split_message
from rag.planner import GA_MEMORY_KEYS
from rag.setup import enough_for_memory, read_setup

DEV_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "real_questions"
C_VALUES = (1.0, 10.0)
THRESHOLDS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01)
#: What ships, chosen on the grouped-CV table (dev set, 453 questions, 2026-12):
#:   rules alone                              0.830 zh / 0.871 en  (optimistic: the rules were tuned on these questions)
#:   model alone, text only, C=1              0.670 / 0.606        (≈ the rules on the held-out set, 0.667 / 0.625)
#:   model + rule feature, alone              0.830 / 0.863        (it learns to copy the rules: no new signal)
#:   rules, overridden by the text-only model
#:     when it is >= 0.9 sure                  0.844 / 0.871        <- ships (best CV; a small, cautious change)
#: Blind, on dev-actclf.yaml (20 new questions, before the model saw them): rules 0.727 / 0.556, shipped the same.
#: 2026-12, 637 questions, with the first / last asking sentence as feature blocks of their own (rag/act_model.py):
#:   rules alone                              0.788 / 0.848
#:   model alone, text only, C=1              0.681 / 0.633        (was 0.658 / 0.594 without the two blocks)
#:   rules, overridden by the model at >= 0.9  0.798 / 0.848        <- ships (0.8 scored 0.801 / 0.848: one question)
#: 2026-12, 668 questions, after the act10 rule readings (grouped CV, zh / en / all; before them: rules 0.783 / 0.852
#: / 0.819, shipped 0.793 / 0.852 / 0.823):
#:   rules alone                              0.814 / 0.855 / 0.835
#:   model alone, text only, C=1 / C=10       0.675 / 0.603 / 0.638  ·  0.700 / 0.623 / 0.660
#:   rules, overridden at >= 0.9, C=1         0.824 / 0.855 / 0.840   <- ships
#:   rules, overridden at >= 0.9, C=10        0.833 / 0.852 / 0.843   (2 questions of 668 better, also before the
#:     rule changes: 0.826 vs 0.823; not shipped: within noise, and the weaker regularisation fits the dev set
#:     itself to 0.92 / 0.93, which hides the dev misses the next rule work reads)
#: The rules' finer cues (symptom, why, fit, configure … hits) as struct features lifted the model alone to about
#: 0.74 but not the combination (0.829–0.832): not used.
#: 2026-12, 925 questions (the 222 oldest held-out ones moved in), after the act11 rule readings (grouped CV, zh / en;
#: before them: rules 0.777 / 0.801, shipped 0.792 / 0.808):
#:   rules alone                              0.823 / 0.831
#:   model alone, text only, C=1              0.692 / 0.668
#:   rules, overridden at >= 0.9, C=1         0.821 / 0.835   <- ships (0.8: 0.823 / 0.833, one question; not changed)
#:   model + rule feature, C=10, >= 0.7       0.821 / 0.829
#:   (zh includes one relabel, zh-firefly-119 explain -> batch_arithmetic: +0.002 of the zh figures)
#:   a title block (the first line as its own feature block), tried midway (rules then 0.792 / 0.814): model alone
#:   0.697 / 0.672 -> 0.704 / 0.658, shipped 0.805 / 0.818 -> 0.812 / 0.814 — a trade within noise: not used.
#: 2026-12 (act12), 941 questions: leave-one-file-out (``--lofo``; each dev file is one mining batch, so a held-out
#: file shares neither sources nor miner with training — the grouped 5-fold shares both), zh / en:
#:   before the act12 rule changes:  rules 0.827 / 0.831 · model alone C=1 0.692 / 0.670 · shipped 0.831 / 0.835
#:   after them:                     rules 0.833 / 0.833 · model alone C=1 0.692 / 0.670 · shipped 0.831 / 0.837
#:   per held-out file (rules, before): the five blind-mined ho* files 0.725–0.800, the oldest files 0.88–0.96 —
#:   the rules were written against the older ones; the ho* figures are the nearer guess of new messages.
#:   The model's overrides at >= 0.9 are near coin flips out of file (7 changed: 4 fixed, 3 broken).
#:   Tried, not shipped: the rules' cue patterns (symptom, why, fit, configure, … hits in the first / last / any
#:   asking sentence and the prose) as features lift the model alone to 0.759 / 0.767 out of file, but the
#:   combination stays 0.833 / 0.835 and the model then mostly imitates the rules (overrides at 0.9: 3).
#:   The rule readings are dev-tuned, so "rules" out of file is the dev figure itself: it measures nothing new.
#: 2026-12 (act15), 1234 questions, leave-one-file-out, zh / en (before -> after the act15 readers: a concession is no
#: question, a preamble joins the clause it announces, "whether <noun> is expected", fit as GPU counts / the authors'
#: hardware / 所需内存, symptoms in other words; the model retrained on the new asking sentences, labels unchanged):
#:   rules alone                              0.820 / 0.797  ->  0.840 / 0.817
#:   model alone, text only, C=1              0.711 / 0.666  ->  0.714 / 0.666
#:   rules, overridden at >= 0.9, C=1         0.825 / 0.802  ->  0.845 / 0.822   <- ships
#:   per ho-* file (shipped), before -> after: blind4-en 0.622 -> 0.667, blind4-zh 0.659 -> 0.795, blind5-en 0.720 ->
#:   0.800, blind5-zh 0.720 -> 0.760, blind6-en 0.741 -> 0.778, blind6-zh 0.840 -> 0.880, blind8-en 0.593 -> 0.852,
#:   blind8-zh 0.880 -> 0.960; the others unchanged. Every reader was written from a dev miss (most in blind4-8), so
#:   these files are no longer blind: tests/data/heldout_real/ says whether the readers carry over.
#: 2026-12 (stop 34), 1286 questions (blind9 added unchanged), leave-one-file-out, zh / en: rules alone 0.830 / 0.809;
#:   rules, overridden at >= 0.9, C=1 0.835 / 0.815 <- ships; at >= 0.8 0.837 / 0.818 (4 questions of 1286: not
#:   changed); blind9 out of file 0.600 / 0.630 (rules) -> 0.600 / 0.667 (shipped).
SHIP_C = 1.0
SHIP_OVERRIDE = 0.9
#: 2026-12 (stop 35), 1398 questions: the model's overrides at >= 0.8 beat >= 0.9 in both CVs (leave-one-file-out
#:   0.829 / 0.796 -> 0.832 / 0.800, rules alone 0.821 / 0.790; grouped 5-fold 0.829 / 0.796 -> 0.835 / 0.802: about 5
#:   questions of 1398), but at 0.8 the model overrode the rules on two hand-written cases that are not dev questions:
#:   an issue form's checklist above a message changed its act (tests/test_engine_act_units.py, the invariance the
#:   rules keep), and a short follow-up lost its memory call. Not shipped: 0.9 stays.
SHIP_WITH_RULE = False


def load_questions(
    folder: Path = DEV_DIR, exclude: tuple[str, ...] = (), only: tuple[str, ...] | None = None
) -> list[dict[str, Any]]:
    """Every labelled question of the dev folder (files named in ``exclude`` left out, e.g. a file to score blind;
    with ``only``, just those files — the artifact records which it was trained on)."""
    items: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.yaml")):
        if path.name in exclude or (only is not None and path.name not in only):
            continue
        for q in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("questions") or []:
            items.append({**q, "_file": path.name})
    return items


def thread_key(url: str) -> str:
    """The thread a question came from (anchors and query strings dropped): the CV group."""
    return re.sub(r"[#?].*$", "", url.strip()).rstrip("/").lower()


def act_inputs(text: str) -> ActInputs:
    """The flags ``rag.assistant`` passes to ``classify_act``, computed the same way (no retrieval needed)."""
    parts = split_message(text)
    prose = prose_of(parts)
    setup, _ = read_setup(parts)
    misconceptions = detect_misconceptions(prose)
    if re.search(r"pipeline|流水线|\bpp\b", prose, re.I):
        misconceptions = [m for m in misconceptions if m.key not in GA_MEMORY_KEYS]
    has_diagnosis = False
    pasted = [p for p in parts if p.kind in ("traceback", "error", "log", "command", "nvidia_smi")]
    if pasted:
        from calculators import CalculatorError
        from calculators.diagnose import diagnose

        try:
            result = diagnose("\n\n".join(p.text for p in pasted)[:20000], lang="en", setup=setup.known())
            has_diagnosis = bool(result.causes)
        except CalculatorError:
            has_diagnosis = False
    flags = {
        "has_diagnosis": has_diagnosis,
        "has_misconception": bool(misconceptions),
        "setup_enough": enough_for_memory(setup),
    }
    return ActInputs(parts=parts, rule_act=rule_act(parts, **flags), **flags)


def matrix(inputs: list[ActInputs], with_rule: bool) -> csr_matrix:
    rows, cols, vals = [], [], []
    for i, x in enumerate(inputs):
        vec = features(x if with_rule else x.model_copy(update={"rule_act": "-"}))
        rows.extend([i] * len(vec))
        cols.extend(vec.keys())
        vals.extend(vec.values())
    return csr_matrix((vals, (rows, cols)), shape=(len(inputs), N_BUCKETS), dtype=np.float64)


def fit(x: csr_matrix, y: list[str], c: float) -> LogisticRegression:
    """Multinomial logistic regression (lbfgs from zeros: deterministic for the same data)."""
    return LogisticRegression(C=c, max_iter=500, tol=1e-4, solver="lbfgs").fit(x, y)


def folds(groups: list[str], k: int = 5) -> list[int]:
    """Deterministic grouped folds: threads sorted by size (largest first), each to the smallest fold so far."""
    sizes = Counter(groups)
    fold_of: dict[str, int] = {}
    load = [0] * k
    for g in sorted(sizes, key=lambda g: (-sizes[g], g)):
        f = min(range(k), key=lambda i: (load[i], i))
        fold_of[g] = f
        load[f] += sizes[g]
    return [fold_of[g] for g in groups]


def combine(rule: str, classes: list[str], probs: np.ndarray, threshold: float) -> str:
    best = int(np.argmax(probs))
    return classes[best] if classes[best] != rule and probs[best] >= threshold else rule


def file_folds(items: list[dict[str, Any]]) -> list[int]:
    """Leave-one-file-out folds: each dev file was mined in one batch (its own sources, wordings and miner), so a
    held-out file is the closest the dev set has to messages from sources nobody read."""
    names = sorted({str(q["_file"]) for q in items})
    return [names.index(str(q["_file"])) for q in items]


def cross_validate(
    items: list[dict[str, Any]], inputs: list[ActInputs], fold: list[int] | None = None
) -> dict[str, Any]:
    """Accuracy per language of the rules, the model and their combinations, each question predicted by a model
    fitted without its fold (grouped 5-fold by thread unless ``fold`` is given, e.g. :func:`file_folds`)."""
    table = cross_predict(items, inputs, fold)
    y = [q["act"] for q in items]
    langs = [q["lang"] for q in items]

    def acc(pred: list[str], lang: str) -> float:
        sel = [i for i in range(len(items)) if langs[i] == lang]
        return sum(pred[i] == y[i] for i in sel) / len(sel)

    return {
        name: {"zh": acc(p, "zh"), "en": acc(p, "en"), "all": sum(a == b for a, b in zip(p, y, strict=True)) / len(y)}
        for name, p in table.items()
    }


def cross_predict(
    items: list[dict[str, Any]], inputs: list[ActInputs], fold: list[int] | None = None
) -> dict[str, list[str]]:
    """Each question's act under every combination, predicted by a model fitted without its fold."""
    y = [q["act"] for q in items]
    if fold is None:
        fold = folds([thread_key(q["source"]) for q in items])
    rules = [x.rule_act for x in inputs]
    table: dict[str, list[str]] = {"rules": rules}
    for with_rule in (False, True):
        x_all = matrix(inputs, with_rule)
        for c in C_VALUES:
            preds: dict[float, list[str]] = {t: [""] * len(items) for t in THRESHOLDS}
            print(f"  cv {'with' if with_rule else 'without'} rule feature, C={c}", file=sys.stderr, flush=True)
            for f in sorted(set(fold)):
                train = [i for i in range(len(items)) if fold[i] != f]
                test = [i for i in range(len(items)) if fold[i] == f]
                model = fit(x_all[train], [y[i] for i in train], c)
                proba = model.predict_proba(x_all[test])
                for t in THRESHOLDS:
                    for row, i in enumerate(test):
                        preds[t][i] = combine(rules[i], list(model.classes_), proba[row], t)
            tag = "model+rule" if with_rule else "model"
            for t in THRESHOLDS:
                name = f"{tag} C={c} " + ("alone" if t == 0.0 else "rules" if t > 1 else f"override>={t}")
                if t <= 1:
                    table[name] = preds[t]
    return table


def train_and_write(items: list[dict[str, Any]], inputs: list[ActInputs], path: Path = ARTIFACT) -> str:
    y = [q["act"] for q in items]
    model = fit(matrix(inputs, SHIP_WITH_RULE), y, SHIP_C)
    classes = [str(c) for c in model.classes_]
    assert set(classes) <= set(ACT_ORDER)
    meta = {
        "trained_on": f"tests/data/real_questions ({len(items)} questions)",
        "files": sorted({str(q["_file"]) for q in items if "_file" in q}),
        "C": SHIP_C,
        "with_rule_feature": SHIP_WITH_RULE,
        "trainer": "bench/train_act.py",
        "sklearn": __import__("sklearn").__version__,
    }
    text = model_to_json(classes, model.coef_, model.intercept_, SHIP_OVERRIDE, SHIP_WITH_RULE, meta)
    path.write_text(text, encoding="utf-8")
    return text


def shipped_name() -> str:
    """The name, in :func:`cross_predict`'s table, of the combination that ships."""
    tag = "model+rule" if SHIP_WITH_RULE else "model"
    return f"{tag} C={SHIP_C} " + ("alone" if SHIP_OVERRIDE == 0.0 else f"override>={SHIP_OVERRIDE}")


def lofo_report(items: list[dict[str, Any]], inputs: list[ActInputs]) -> dict[str, Any]:
    """Leave-one-file-out: the table per language, then per held-out file the rules and the shipped combination,
    and the shipped combination's confusion (label -> predicted)."""
    preds = cross_predict(items, inputs, file_folds(items))
    y = [q["act"] for q in items]
    langs = [q["lang"] for q in items]

    def acc(pred: list[str], sel: list[int]) -> float:
        return sum(pred[i] == y[i] for i in sel) / max(1, len(sel))

    by_lang = {lang: [i for i in range(len(items)) if langs[i] == lang] for lang in ("zh", "en")}
    table = {
        name: {"zh": acc(p, by_lang["zh"]), "en": acc(p, by_lang["en"]), "all": acc(p, list(range(len(y))))}
        for name, p in preds.items()
    }
    print("leave-one-file-out (zh / en / all):")
    for name, s in sorted(table.items(), key=lambda kv: -kv[1]["all"]):
        print(f"{s['zh']:.3f} zh  {s['en']:.3f} en  {s['all']:.3f} all   {name}")
    ship = preds.get(shipped_name(), preds["rules"])
    print(f"per held-out file: n, rules, shipped ({shipped_name()})")
    for name in sorted({str(q["_file"]) for q in items}):
        sel = [i for i in range(len(items)) if items[i]["_file"] == name]
        print(f"  {name:24s} {len(sel):4d}  {acc(preds['rules'], sel):.3f}  {acc(ship, sel):.3f}")
    confusion = Counter(f"{y[i]}->{ship[i]}" for i in range(len(y)) if y[i] != ship[i])
    print("shipped confusion (label->predicted): " + ", ".join(f"{k} {v}" for k, v in confusion.most_common()))
    return {"table": table, "confusion": dict(confusion)}


def score_file(path: Path) -> None:
    """Rules vs the shipped model on one YAML file (blind when the model was not fitted on it)."""
    items = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("questions") or []
    model = load_act_model()
    rows = []
    for q in items:
        x = act_inputs(q["question"])
        shipped = model.decide(x) if model is not None else x.rule_act
        rows.append((q["id"], q["lang"], q["act"], x.rule_act, shipped))
    for lang in ("zh", "en"):
        sel = [r for r in rows if r[1] == lang]
        if sel:
            r_acc = sum(r[2] == r[3] for r in sel) / len(sel)
            m_acc = sum(r[2] == r[4] for r in sel) / len(sel)
            print(f"{lang}: n={len(sel)} rules {r_acc:.3f} shipped {m_acc:.3f}")
    for r in rows:
        if r[2] != r[3] or r[2] != r[4]:
            print(f"  {r[0]}: want {r[2]} rules {r[3]} shipped {r[4]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cv-only", action="store_true")
    ap.add_argument("--no-cv", action="store_true", help="only fit and write the artifact")
    ap.add_argument("--score", type=Path)
    ap.add_argument("--json", type=Path, help="write the CV table here")
    ap.add_argument(
        "--lofo", action="store_true", help="leave-one-file-out CV (each dev file one mining batch) instead of 5-fold"
    )
    ap.add_argument("--exclude", action="append", default=[], help="a dev file (name) to leave out, to score it blind")
    ap.add_argument("--out", type=Path, default=ARTIFACT, help="where to write the artifact")
    args = ap.parse_args(argv)
    if args.score:
        score_file(args.score)
        return 0
    items = load_questions(exclude=tuple(args.exclude))
    inputs = [act_inputs(q["question"]) for q in items]
    print(
        f"{len(items)} questions, {len(set(thread_key(q['source']) for q in items))} threads; acts {Counter(q['act'] for q in items)}"
    )
    if args.lofo:
        report = lofo_report(items, inputs)
        if args.json:
            args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    elif not args.no_cv:
        table = cross_validate(items, inputs)
        for name, s in sorted(table.items(), key=lambda kv: -kv[1]["all"]):
            print(f"{s['zh']:.3f} zh  {s['en']:.3f} en  {s['all']:.3f} all   {name}")
        print(
            "caveat: the rules were tuned on these questions; CV of the combinations that lean on them is optimistic."
        )
        if args.json:
            args.json.write_text(json.dumps(table, indent=1), encoding="utf-8")
    if not (args.cv_only or args.lofo):
        train_and_write(items, inputs, args.out)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
