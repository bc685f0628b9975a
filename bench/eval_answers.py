"""Score the answer engine on the real-question dev set (tests/data/real_questions/*.yaml).

Per language it prints:
  act accuracy        answer.act == the labelled act
  fidelity            stated values the answer used / values the user stated, and how many it contradicted
                      (a different value in the answer's setup or in a main calculator call)
  assumed headlines   first screens with a memory figure computed by a calculator although the labels say the user
                      did not state enough for one (model or size, plus method or precision)
  strawman            answers with a "what the question gets wrong" correction where the user held no wrong belief
  card hit@1 / hit@3  an expected card among the answer's cited cards (questions that have expected cards)
  first screen        median and 90th percentile length in words (Chinese: 2 characters = 1 word)
  fit without figure  fit questions (by label) whose first screen gives no memory figure at all (GiB): a "tell me
                      more" that answers nothing yet
  no cause            diagnoses (by label) whose answer opens with "no known cause … matches this": a diagnosis that
                      names no cause (whether a named cause is the right one is what hit@1 and reading answers tell)

    .venv/bin/python bench/eval_answers.py                 # the table
    .venv/bin/python bench/eval_answers.py --show zh-llamafactory-493   # one answer in full, with its scoring
    .venv/bin/python bench/eval_answers.py --misses act     # the questions that miss one metric
    .venv/bin/python bench/eval_answers.py --json out.json  # every score, for tests and comparisons
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import re
import statistics
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import yaml  # noqa: E402

DEV_DIR = ROOT / "tests" / "data" / "real_questions"
_CJK = re.compile(r"[\u3400-\u9fff]")
#: A memory figure on a first screen ("24.2 GiB"), computed or read back.
_GIB_FIGURE = re.compile(r"\d\s*GiB")
#: Labels of the calls that carry the user's own setup (comparisons and levers change values on purpose).
_OWN_SETUP_LABELS = {"main", "effective_batch", "config_check"}
_ALIASES = {"learning_rate": "base_learning_rate"}


def load_dev_set(directory: Path = DEV_DIR) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for q in data.get("questions", []) or []:
            q = dict(q)
            q["_file"] = path.name
            out.append(q)
    return out


# ---- comparing a stated value with what the answer used --------------------------------------
def _alnum(s: Any) -> str:
    return re.sub(r"[^a-z0-9]", "", str(s).lower())


_GPU_FAMILY = re.compile(
    r"(a100|a800|h100|h800|h200|h20|v100|t4|a10g?|a6000|l40s?|l20|l4|4090d?|4080|3090|3080|2080ti|"
    r"2080|910b|mi\d+|p100|k80|a40|a30|a5000|a4000|30[5-8]0|10[5-8]0|20[67]0|40[67]0|5090|p40)",
    re.I,
)


def _gpu_family(s: Any) -> str:
    m = _GPU_FAMILY.search(str(s).replace(" ", "").replace("-", ""))
    fam = m.group(1).lower() if m else _alnum(s)
    return {"a800": "a100", "h800": "h100"}.get(fam, fam)


def _num_close(a: Any, b: Any, rel: float) -> bool:
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return False
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


def _precision_family(s: Any) -> str:
    s = str(s).lower()
    for fam in ("bf16", "fp16", "fp32", "int8", "int4"):
        if fam in s:
            return fam
    return s


def same_value(key: str, stated: Any, used: Any) -> bool:
    """Whether the answer's value ``used`` is the user's ``stated`` value (each key its own comparison)."""
    if key in ("model", "model_text"):
        a, b = _alnum(stated), _alnum(used)
        return bool(a and b) and (a in b or b in a)
    if key in ("gpu", "gpu_text"):
        return _gpu_family(stated) == _gpu_family(used)
    if key in ("num_params",):
        return _num_close(stated, used, 0.1)
    if key in ("gpu_memory_gb", "observed_memory_gb"):
        return _num_close(stated, used, 0.08)
    if key == "precision":
        return _precision_family(stated) == _precision_family(used)
    if key == "gradient_checkpointing":  # stated as a bool, used as none / selective / full
        return bool(stated) == (used not in (False, "none", None))
    if key in ("base_learning_rate", "learning_rate"):
        return _num_close(stated, used, 1e-6)
    if isinstance(stated, bool) or isinstance(used, bool):
        return bool(stated) == bool(used) and isinstance(used, bool)
    if isinstance(stated, (int, float)) and isinstance(used, (int, float)):
        return _num_close(stated, used, 1e-9)
    return _alnum(stated) == _alnum(used)


def _answer_values(answer: Any, key: str) -> list[Any]:
    """Every value the answer used for ``key``: its setup (not assumed) and the conflicts it shows."""
    setup = answer.setup
    vals = []
    keys = (
        [key]
        + (["model_text", "model"] if key == "model" else [])
        + (["model", "num_params"] if key == "num_params" else [])
        + (["gpu", "gpu_memory_gb"] if key == "gpu_memory_gb" else [])
        + (["gpu_text"] if key == "gpu" else [])
    )
    for k in dict.fromkeys(keys):
        item = setup.get(k)
        if item and item.get("source") != "assumed":
            v = item["value"]
            if k == "model" and key == "num_params":
                from calculators.presets import MODEL_PRESETS, PUBLISHED_PARAMS, count_params
                from calculators.vision import vision_params

                shape = MODEL_PRESETS.get(v)
                if shape is not None and shape.vision is not None:
                    # "Qwen2.5-VL-3B": the size in a VL model's name is its language model's (3.09B of 3.75B)
                    vals.append(count_params(shape) - vision_params(shape.vision))
                if v in PUBLISHED_PARAMS and (size := re.search(r"-(\d+(?:\.\d+)?)b(?:-|$)", v)):
                    # "Gemma-2b" names its size, 2.51B counted: the model named is the size stated
                    vals.append(float(size.group(1)) * 1e9)
                v = PUBLISHED_PARAMS.get(v, v)
            if k == "gpu" and key == "gpu_memory_gb":
                from calculators.presets import GPU_PRESETS

                v = GPU_PRESETS[v].memory_gib if v in GPU_PRESETS else v
            vals.append(v)
        # The other value the first screen shows for this key ("8 GPUs in your message, DeepSpeed saw 1").
        if k == key:
            vals.extend(v for v in (getattr(answer, "conflicts", None) or {}).get(k, []))
    return vals


def score_fidelity(q: dict[str, Any], answer: Any) -> tuple[int, int, int, list[str]]:
    """(used, stated, contradicted, notes) for one question."""
    stated = q.get("stated") or {}
    used = contradicted = 0
    notes: list[str] = []
    for key, value in stated.items():
        key = _ALIASES.get(key, key)
        if key == "precision" and str(value).lower() in ("int4", "int8"):
            # 4-/8-bit weights are the setup's `quantization` (or QLoRA), not the compute precision: never a contradiction.
            ft = answer.setup.get("finetune") or {}
            quant = answer.setup.get("quantization") or {}
            if (str(value).lower() == "int4" and ft.get("value") == "qlora" and ft.get("source") != "assumed") or (
                quant.get("value") == str(value).lower() and quant.get("source") != "assumed"
            ):
                used += 1
            else:
                notes.append(f"unused {key}={value!r}")
            continue
        vals = _answer_values(answer, key)
        # LoRA stated on 4-bit weights ("8G显存 int4可以lora微调吗") is QLoRA's run: the mirror of the int4 rule above.
        lora_on_int4 = (
            key == "finetune" and str(value).lower() == "lora" and str(stated.get("precision", "")).lower() == "int4"
        )
        if lora_on_int4:
            vals = ["lora" if v == "qlora" else v for v in vals]
        ok = any(same_value(key, value, v) for v in vals)
        if ok:
            used += 1
        else:
            notes.append(f"unused {key}={value!r} (answer: {vals!r})")
        bad = [v for v in vals if not same_value(key, value, v)] if not ok else []
        for call in answer.tool_calls:
            if call.label not in _OWN_SETUP_LABELS:
                continue
            args = call.arguments
            if (
                key in args
                and isinstance(args[key], (int, float, str, bool))
                and key not in ("model", "gpu")
                and not same_value(key, value, "lora" if lora_on_int4 and args[key] == "qlora" else args[key])
            ):
                bad.append(f"{call.name}.{key}={args[key]!r}")
        if bad and key not in ("model", "model_text", "gpu"):
            contradicted += 1
            notes.append(f"CONTRADICTED {key}={value!r}: {bad!r}")
    return used, len(stated), contradicted, notes


def enough_stated(stated: dict[str, Any]) -> bool:
    return ("model" in stated or "num_params" in stated) and any(
        k in stated for k in ("finetune", "precision", "zero_stage")
    )


def first_screen_words(text: str) -> float:
    cjk = len(_CJK.findall(text))
    latin = len(re.findall(r"[A-Za-z0-9_.\-/]+", text))
    return latin + cjk / 2


def computed_memory_in(answer: Any) -> bool:
    """Whether the first screen shows a memory figure we computed (not the user's own numbers read back)."""
    from rag.planner import SHARDED_LABELS

    for call in answer.tool_calls:
        if call.label in SHARDED_LABELS:
            # (the comparison of methods shows only these calls' model states, never their totals; a total can still
            # equal another figure by chance: LoRA's 45.9 GiB under ZeRO-3 for Megatron-LLM #52 is also the 80 − 34.1
            # GiB QLoRA leaves)
            continue
        res = call.result or {}
        total = res.get("total_per_gpu") if call.name == "memory" else None
        if total and f"{total / 2**30:,.1f} GiB" in answer.first_screen:
            return True
    return False


@functools.cache
def _no_cause_openings() -> tuple[str, ...]:
    """The openings that say no known cause was found, in both languages (from the one string catalogue)."""
    from calculators.i18n import t

    return tuple(t(key, lang) for key in ("known_related", "no_known_cause", "no_card_diag") for lang in ("zh", "en"))


def opens_without_cause(first_screen: str) -> bool:
    return first_screen.lstrip("*").startswith(_no_cause_openings())


def evaluate(questions: list[dict[str, Any]], bot: Any) -> list[dict[str, Any]]:
    rows = []
    for q in questions:
        t0 = time.perf_counter()
        answer = bot.ask(q["question"])
        elapsed = time.perf_counter() - t0
        used, n_stated, contradicted, notes = score_fidelity(q, answer)
        cited = [s.card_id for s in answer.sources]
        expected = list(q.get("cards") or [])
        rows.append(
            {
                "id": q["id"],
                "lang": q["lang"],
                "act": q["act"],
                "got_act": answer.act,
                "used": used,
                "stated": n_stated,
                "contradicted": contradicted,
                "fidelity_notes": notes,
                "assumed_headline": computed_memory_in(answer) and not enough_stated(q.get("stated") or {}),
                "strawman": bool(answer.corrections) and (q.get("misconception") or "none") == "none",
                "expected_cards": expected,
                "cited": cited,
                "hit1": bool(expected) and bool(cited) and cited[0] in expected,
                "hit3": bool(expected) and any(c in expected for c in cited[:3]),
                "first_words": first_screen_words(answer.first_screen),
                "refused": answer.refused,
                "fit_no_figure": q.get("act") == "fit" and not _GIB_FIGURE.search(answer.first_screen),
                "no_cause": q.get("act") == "diagnose" and opens_without_cause(answer.first_screen),
                "first_screen": answer.first_screen,
                "seconds": elapsed,
            }
        )
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for lang in ("zh", "en", "all"):
        sel = [r for r in rows if lang == "all" or r["lang"] == lang]
        if not sel:
            continue
        with_cards = [r for r in sel if r["expected_cards"]]
        words = sorted(r["first_words"] for r in sel)
        stated = sum(r["stated"] for r in sel)
        out[lang] = {
            "n": len(sel),
            "act_accuracy": sum(r["act"] == r["got_act"] for r in sel) / len(sel),
            "fidelity": sum(r["used"] for r in sel) / stated if stated else 1.0,
            "stated_values": stated,
            "contradicted": sum(r["contradicted"] for r in sel),
            "assumed_headlines": sum(r["assumed_headline"] for r in sel),
            "strawman": sum(r["strawman"] for r in sel),
            "with_cards": len(with_cards),
            "hit1": sum(r["hit1"] for r in with_cards) / len(with_cards) if with_cards else 0.0,
            "hit3": sum(r["hit3"] for r in with_cards) / len(with_cards) if with_cards else 0.0,
            "first_words_median": statistics.median(words),
            "first_words_p90": words[min(len(words) - 1, int(0.9 * len(words)))],
            "refused": sum(r["refused"] for r in sel),
            "fit_no_figure": sum(r["fit_no_figure"] for r in sel),
            "no_cause": sum(r.get("no_cause", False) for r in sel),
        }
    return out


def print_table(summary: dict[str, dict[str, float]]) -> None:
    cols = [
        ("n", "{:.0f}"),
        ("act_accuracy", "{:.3f}"),
        ("fidelity", "{:.3f}"),
        ("stated_values", "{:.0f}"),
        ("contradicted", "{:.0f}"),
        ("assumed_headlines", "{:.0f}"),
        ("strawman", "{:.0f}"),
        ("with_cards", "{:.0f}"),
        ("hit1", "{:.3f}"),
        ("hit3", "{:.3f}"),
        ("first_words_median", "{:.0f}"),
        ("first_words_p90", "{:.0f}"),
        ("refused", "{:.0f}"),
        ("fit_no_figure", "{:.0f}"),
        ("no_cause", "{:.0f}"),
    ]
    print("| lang | " + " | ".join(c for c, _ in cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for lang, s in summary.items():
        print(f"| {lang} | " + " | ".join(fmt.format(s[c]) for c, fmt in cols) + " |")


def _id_list(spec: str) -> set[str]:
    """``a,b,c`` or ``@file`` (one id per line, ``#`` comments) as a set of question ids."""
    text = Path(spec[1:]).read_text(encoding="utf-8") if spec.startswith("@") else spec.replace(",", "\n")
    return {line.split("#", 1)[0].strip() for line in text.splitlines()} - {""}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--show", help="print one question's answer and its scoring")
    ap.add_argument(
        "--misses",
        choices=["act", "fidelity", "contradicted", "headline", "strawman", "hit3", "words", "no_cause"],
        help="list the questions that miss this metric",
    )
    ap.add_argument("--json", help="write every row and the summary to this file")
    ap.add_argument("--dir", default=str(DEV_DIR))
    ap.add_argument(
        "--ids",
        help="score only these questions: comma-separated ids, or @FILE with one id per line (a quick re-check "
        "of the questions a change is about; the floors are only ever checked on the whole set)",
    )
    args = ap.parse_args(argv)

    from rag import Assistant

    questions = load_dev_set(Path(args.dir))
    if args.ids:
        wanted = _id_list(args.ids)
        unknown = wanted - {q["id"] for q in questions}
        if unknown:
            ap.error(f"unknown question ids: {', '.join(sorted(unknown))}")
        questions = [q for q in questions if q["id"] in wanted]
    bot = Assistant()
    if args.show:
        q = next(q for q in questions if q["id"] == args.show)
        answer = bot.ask(q["question"])
        print(answer.text)
        print("\n---- act:", answer.act, "expected:", q["act"])
        print("---- setup:", json.dumps(answer.setup, ensure_ascii=False))
        print("---- fidelity:", score_fidelity(q, answer))
        print("---- cited:", [s.card_id for s in answer.sources], "expected:", q.get("cards"))
        return 0
    rows = evaluate(questions, bot)
    summary = summarise(rows)
    if args.misses:
        key = args.misses
        for r in rows:
            miss = {
                "act": r["act"] != r["got_act"],
                "fidelity": r["used"] < r["stated"],
                "contradicted": r["contradicted"] > 0,
                "headline": r["assumed_headline"],
                "strawman": r["strawman"],
                "hit3": bool(r["expected_cards"]) and not r["hit3"],
                "words": r["first_words"] > 120,
                "no_cause": r["no_cause"],
            }[key]
            if miss:
                extra = {
                    "act": f"{r['act']} → got {r['got_act']}",
                    "fidelity": "; ".join(r["fidelity_notes"]),
                    "contradicted": "; ".join(r["fidelity_notes"]),
                    "headline": "",
                    "strawman": "",
                    "hit3": f"expected {r['expected_cards']} cited {r['cited']}",
                    "words": f"{r['first_words']:.0f} words",
                    "no_cause": f"cited {r['cited'][:1]} expected {r['expected_cards']}",
                }[key]
                print(f"{r['id']}: {extra}")
    print_table(summary)
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "rows": rows}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
