"""How far two careful people agree on the question act, and where the engine sits between them.

The act target of issue #10 (≥ 0.9) is only meaningful against the agreement of two annotators: a second, blind
labelling of a random sample of the dev set (``bench/judged/act-second-labels-*.yaml``: act, and the next most
plausible act) is compared with the dev labels and with the engine's acts.

    .venv/bin/python -m bench.act_agreement [--labels bench/judged/act-second-labels-s11.yaml]
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path
from typing import Any

import yaml

from bench.eval_answers import load_dev_set

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "bench" / "judged" / "act-second-labels-s11.yaml"


def agreement(second: list[dict[str, Any]], dev: dict[str, dict[str, Any]], engine: dict[str, str]) -> dict[str, Any]:
    """Rates over the doubly labelled questions, per language and overall."""
    rows: dict[str, Any] = {}
    for lang in ("zh", "en", "all"):
        sub = [s for s in second if s["id"] in dev and (lang == "all" or dev[s["id"]]["lang"] == lang)]
        n = len(sub) or 1
        rows[lang] = {
            "n": len(sub),
            "second_vs_dev": sum(dev[s["id"]]["act"] == s["act"] for s in sub) / n,
            "dev_in_second_top2": sum(dev[s["id"]]["act"] in (s["act"], s.get("second")) for s in sub) / n,
            "engine_vs_dev": sum(engine.get(s["id"]) == dev[s["id"]]["act"] for s in sub) / n,
            "engine_vs_second": sum(engine.get(s["id"]) == s["act"] for s in sub) / n,
            "engine_vs_either": sum(engine.get(s["id"]) in (s["act"], dev[s["id"]]["act"]) for s in sub) / n,
        }
    rows["disagreements"] = collections.Counter(
        f"{dev[s['id']]['act']}→{s['act']}" for s in second if s["id"] in dev and dev[s["id"]]["act"] != s["act"]
    ).most_common(10)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--labels", type=Path, default=DEFAULT)
    args = ap.parse_args()
    second = yaml.safe_load(args.labels.read_text(encoding="utf-8"))["labels"]
    dev = {q["id"]: q for q in load_dev_set()}
    from rag import Assistant

    bot = Assistant()
    engine = {s["id"]: str(bot.ask(dev[s["id"]]["question"]).act) for s in second if s["id"] in dev}
    res = agreement(second, dev, engine)
    print(
        "| lang | n | second vs dev labels | dev label in second's top 2 | engine vs dev | engine vs second | engine vs either |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for lang in ("zh", "en", "all"):
        r = res[lang]
        print(
            f"| {lang} | {r['n']} | {r['second_vs_dev']:.3f} | {r['dev_in_second_top2']:.3f} | {r['engine_vs_dev']:.3f} "
            f"| {r['engine_vs_second']:.3f} | {r['engine_vs_either']:.3f} |"
        )
    print("disagreements (dev → second):", ", ".join(f"{k} {v}" for k, v in res["disagreements"]))


if __name__ == "__main__":
    main()
