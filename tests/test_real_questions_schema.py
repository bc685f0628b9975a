"""Schema of the real-question dev set (tests/data/real_questions/*.yaml).

Why: bench/eval_answers.py scores answers against the `act`, `stated`, `misconception` and
`cards` labels of these files. A mislabelled or mistyped entry would make a right answer look
wrong (or a wrong one look right), so every file is checked against the README's schema here.
Count floors live in tests/test_eval_answers.py, not here.
"""
from __future__ import annotations

import pathlib
import re

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[1]
FOLDER = REPO / "tests" / "data" / "real_questions"
CARDS = REPO / "knowledge" / "cards"

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
ID_RE = re.compile(r"^(zh|en)-[a-z0-9][a-z0-9._-]*$")
URL_RE = re.compile(r"^https?://[^\s/]+\.[^\s/]+/\S*$")

FIELDS_REQUIRED = {"id", "source", "lang", "framework", "question", "act", "stated",
                   "misconception", "cards", "key_facts"}
FIELDS_OPTIONAL = {"needed"}
FRAMEWORKS = {"deepspeed", "transformers", "accelerate", "llamafactory", "peft", "trl",
              "torchtune", "megatron", "pytorch", "bitsandbytes", "vllm", "other"}
ACTS = {"diagnose", "is_normal", "yes_no", "fit", "batch_arithmetic", "configure", "explain"}
MISCONCEPTIONS = {"none", "ga_raises_memory", "ga_stores_copies", "effective_batch_oom",
                  "lower_ga_saves_memory", "mixed_precision_halves", "small_batch_smaller_updates",
                  "bigger_batch_generalizes", "more_gpus_pool_memory"}
# key -> accepted Python types (bool is checked separately: it is a subclass of int).
STATED: dict[str, tuple[type, ...]] = {
    "model": (str,), "num_params": (float, int), "gpu": (str,), "gpu_memory_gb": (float, int),
    "world_size": (int,), "num_nodes": (int,), "train_micro_batch_size_per_gpu": (int,),
    "gradient_accumulation_steps": (int,), "train_batch_size": (int,), "zero_stage": (int,),
    "offload_optimizer": (bool,), "offload_param": (bool,), "precision": (str,),
    "seq_len": (int,), "finetune": (str,), "lora_rank": (int,), "gradient_checkpointing": (bool,),
    "flash_attention": (bool,), "pipeline_parallel_size": (int,), "tensor_parallel_size": (int,),
    "observed_memory_gb": (float, int), "learning_rate": (float, int),
}
PRECISIONS = {"fp16", "bf16", "fp32", "int8", "int4"}
FINETUNES = {"full", "lora", "qlora", "freeze", "ptuning"}


def _files() -> list[pathlib.Path]:
    return sorted(FOLDER.glob("*.yaml"))


def _entries() -> list[tuple[str, int, dict]]:
    out = []
    for path in _files():
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert isinstance(data, dict) and set(data) == {"questions"}, f"{path.name}: top level must be {{questions: [...]}}"
        assert isinstance(data["questions"], list), f"{path.name}: questions must be a list"
        for i, q in enumerate(data["questions"]):
            out.append((path.name, i, q))
    return out


ENTRIES = _entries()
CARD_IDS = {p.stem for p in CARDS.glob("*.md")}


def _label(e: tuple[str, int, dict]) -> str:
    name, i, q = e
    return f"{name}[{i}]:{q.get('id', '?') if isinstance(q, dict) else '?'}"


def test_folder_has_files():
    assert _files(), "no tests/data/real_questions/*.yaml"
    assert ENTRIES, "no questions at all"


def test_ids_unique_across_files():
    seen: dict[str, str] = {}
    for name, i, q in ENTRIES:
        qid = q.get("id")
        assert qid not in seen, f"{name}[{i}]: id {qid} also in {seen.get(qid)}"
        seen[qid] = name


def test_sources_unique_across_files():
    """One thread is one question: the same URL twice would double-count it."""
    seen: dict[str, str] = {}
    for name, i, q in ENTRIES:
        url = str(q.get("source", "")).split("#")[0].rstrip("/")
        assert url not in seen, f"{name}[{i}]: source {url} also used by {seen[url]}"
        seen[url] = q.get("id")


@pytest.mark.parametrize("entry", ENTRIES, ids=_label)
def test_entry_schema(entry):
    name, i, q = entry
    assert isinstance(q, dict), "entry must be a mapping"
    keys = set(q)
    assert keys >= FIELDS_REQUIRED, f"missing {FIELDS_REQUIRED - keys}"
    assert keys <= FIELDS_REQUIRED | FIELDS_OPTIONAL, f"unknown fields {keys - FIELDS_REQUIRED - FIELDS_OPTIONAL}"

    assert isinstance(q["id"], str) and ID_RE.match(q["id"]), f"bad id {q['id']!r}"
    assert q["id"].startswith(q["lang"] + "-"), f"id {q['id']} does not start with its lang"
    assert isinstance(q["source"], str) and URL_RE.match(q["source"]), f"bad source {q['source']!r}"
    assert q["lang"] in ("zh", "en")
    assert q["framework"] in FRAMEWORKS, f"framework {q['framework']!r}"

    text = q["question"]
    assert isinstance(text, str) and text.strip(), "empty question"
    assert len(text) <= 6000, f"question has {len(text)} characters (max 6000)"
    has_cjk = bool(CJK.search(text))
    assert has_cjk == (q["lang"] == "zh"), f"lang {q['lang']} but Chinese characters: {has_cjk}"

    assert q["act"] in ACTS, f"act {q['act']!r}"
    assert q["misconception"] in MISCONCEPTIONS, f"misconception {q['misconception']!r}"


@pytest.mark.parametrize("entry", ENTRIES, ids=_label)
def test_entry_stated(entry):
    _, _, q = entry
    stated = q["stated"]
    assert isinstance(stated, dict), "stated must be a mapping ({} when nothing is stated)"
    for key, value in stated.items():
        assert key in STATED, f"stated key {key!r} not in the vocabulary"
        types = STATED[key]
        if bool in types:
            assert isinstance(value, bool), f"{key} must be true/false, got {value!r}"
        else:
            assert not isinstance(value, bool) and isinstance(value, types), f"{key}: {value!r} is not {types}"
    if "zero_stage" in stated:
        assert 0 <= stated["zero_stage"] <= 3
    for key in ("world_size", "num_nodes", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                "train_batch_size", "seq_len", "lora_rank", "pipeline_parallel_size", "tensor_parallel_size"):
        if key in stated:
            assert stated[key] >= 1, f"{key} must be >= 1"
    for key in ("num_params", "gpu_memory_gb", "observed_memory_gb", "learning_rate"):
        if key in stated:
            assert stated[key] > 0, f"{key} must be > 0"
    if "num_params" in stated:
        assert stated["num_params"] >= 1e6, "num_params is a count of parameters (7B -> 7e9)"
    if "precision" in stated:
        assert stated["precision"] in PRECISIONS, f"precision {stated['precision']!r}"
    if "finetune" in stated:
        assert stated["finetune"] in FINETUNES, f"finetune {stated['finetune']!r}"
    if "gpu_memory_gb" in stated and "observed_memory_gb" in stated:
        assert stated["observed_memory_gb"] <= stated["gpu_memory_gb"] * 1.1, "observed memory above capacity"


@pytest.mark.parametrize("entry", ENTRIES, ids=_label)
def test_entry_cards_and_facts(entry):
    _, _, q = entry
    cards = q["cards"]
    assert isinstance(cards, list)
    for cid in cards:
        assert cid in CARD_IDS, f"card {cid!r} not in knowledge/cards/"
    assert len(cards) == len(set(cards)), "duplicate card ids"
    needed = q.get("needed", "")
    if not cards:
        assert isinstance(needed, str) and needed.strip(), "cards is [] but `needed` does not say what is missing"
    facts = q["key_facts"]
    assert isinstance(facts, list) and 1 <= len(facts) <= 3, "key_facts: 1-3 facts"
    for f in facts:
        assert isinstance(f, str) and f.strip()
        assert not CJK.search(f), "key_facts are written in English"
