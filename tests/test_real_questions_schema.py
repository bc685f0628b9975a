"""Schema of the real-question sets: the dev set (tests/data/real_questions/*.yaml) and the
held-out set (tests/data/heldout_real/*.yaml).

Why: bench/eval_answers.py scores answers against the `act`, `stated`, `misconception` and
`cards` labels of these files. A mislabelled or mistyped entry would make a right answer look
wrong (or a wrong one look right), so every file is checked against the README's schema here.
The held-out set only measures generalisation if none of its threads is also in the dev set, so
ids and source threads are unique across both folders (a thread is compared by repository name and
number, so a renamed owner such as microsoft/DeepSpeed -> deepspeedai/DeepSpeed is still the same thread).
Dev-set count floors live in tests/test_eval_answers.py; the held-out set's floors live here.
"""

from __future__ import annotations

import pathlib
import re

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[1]
FOLDER = REPO / "tests" / "data" / "real_questions"
HELDOUT = REPO / "tests" / "data" / "heldout_real"
FOLDERS = (FOLDER, HELDOUT)
CARDS = REPO / "knowledge" / "cards"

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
ID_RE = re.compile(r"^(zh|en)-[a-z0-9][a-z0-9._-]*$")
URL_RE = re.compile(r"^https?://[^\s/]+\.[^\s/]+/\S*$")

FIELDS_REQUIRED = {
    "id",
    "source",
    "lang",
    "framework",
    "question",
    "act",
    "stated",
    "misconception",
    "cards",
    "key_facts",
}
FIELDS_OPTIONAL = {"needed"}
FRAMEWORKS = {
    "deepspeed",
    "transformers",
    "accelerate",
    "llamafactory",
    "peft",
    "trl",
    "torchtune",
    "megatron",
    "pytorch",
    "bitsandbytes",
    "vllm",
    "other",
}
ACTS = {"diagnose", "is_normal", "yes_no", "fit", "batch_arithmetic", "configure", "explain"}
MISCONCEPTIONS = {
    "none",
    "ga_raises_memory",
    "ga_stores_copies",
    "effective_batch_oom",
    "lower_ga_saves_memory",
    "mixed_precision_halves",
    "small_batch_smaller_updates",
    "bigger_batch_generalizes",
    "more_gpus_pool_memory",
}
# key -> accepted Python types (bool is checked separately: it is a subclass of int).
STATED: dict[str, tuple[type, ...]] = {
    "model": (str,),
    "num_params": (float, int),
    "gpu": (str,),
    "gpu_memory_gb": (float, int),
    "world_size": (int,),
    "num_nodes": (int,),
    "train_micro_batch_size_per_gpu": (int,),
    "gradient_accumulation_steps": (int,),
    "train_batch_size": (int,),
    "zero_stage": (int,),
    "offload_optimizer": (bool,),
    "offload_param": (bool,),
    "precision": (str,),
    "seq_len": (int,),
    "finetune": (str,),
    "lora_rank": (int,),
    "gradient_checkpointing": (bool,),
    "flash_attention": (bool,),
    "pipeline_parallel_size": (int,),
    "tensor_parallel_size": (int,),
    "observed_memory_gb": (float, int),
    "learning_rate": (float, int),
}
PRECISIONS = {"fp16", "bf16", "fp32", "int8", "int4"}
FINETUNES = {"full", "lora", "qlora", "freeze", "ptuning"}


def _files(folder: pathlib.Path = FOLDER) -> list[pathlib.Path]:
    return sorted(folder.glob("*.yaml"))


def _entries(folders: tuple[pathlib.Path, ...] = FOLDERS) -> list[tuple[str, int, dict]]:
    """(folder/file name, index, entry) for every question of every file in `folders`."""
    out = []
    for folder in folders:
        for path in _files(folder):
            name = f"{folder.name}/{path.name}"
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            assert isinstance(data, dict) and set(data) == {"questions"}, (
                f"{name}: top level must be {{questions: [...]}}"
            )
            assert isinstance(data["questions"], list), f"{name}: questions must be a list"
            for i, q in enumerate(data["questions"]):
                out.append((name, i, q))
    return out


_GITHUB_THREAD = re.compile(r"^https?://github\.com/([^/]+)/([^/]+)/(?:issues|pull|discussions)/(\d+)", re.I)
#: Owners GitHub redirects to a new name (the repositories moved; old links still work).
_OWNER_MOVES = {"microsoft": "deepspeedai", "thudm": "zai-org", "pytorch": "meta-pytorch", "openllmai": "openrlhf"}
#: Single repositories that moved to another owner (the old owner keeps other repositories): volcengine/verl is
#: verl-project/verl, and search results still show both spellings.
_REPO_MOVES = {"volcengine/verl": "verl-project/verl"}


def thread_key(url: str) -> str:
    """The thread a source URL points at, ignoring anchors, a trailing slash, case, punctuation in the repository
    name and owners GitHub redirects (microsoft/DeepSpeed is deepspeedai/DeepSpeed, hiyouga/LLaMA-Factory is
    hiyouga/LlamaFactory, THUDM/ChatGLM3 is zai-org/ChatGLM3), so both spellings name one thread."""
    url = str(url).split("#")[0].rstrip("/").lower()
    m = _GITHUB_THREAD.match(url)
    if m:
        owner, repo, number = m.groups()
        owner, repo = _REPO_MOVES.get(f"{owner}/{repo}", f"{owner}/{repo}").split("/")
        return f"github:{_OWNER_MOVES.get(owner, owner)}/{re.sub(r'[-_.]', '', repo)}/{number}"
    return url


ENTRIES = _entries()
CARD_IDS = {p.stem for p in CARDS.glob("*.md")}


def _label(e: tuple[str, int, dict]) -> str:
    name, i, q = e
    return f"{name}[{i}]:{q.get('id', '?') if isinstance(q, dict) else '?'}"


def test_folder_has_files():
    assert _files(FOLDER), "no tests/data/real_questions/*.yaml"
    assert _files(HELDOUT), "no tests/data/heldout_real/*.yaml"
    assert ENTRIES, "no questions at all"


def test_ids_unique_across_files():
    seen: dict[str, str] = {}
    for name, i, q in ENTRIES:
        qid = q.get("id")
        assert qid not in seen, f"{name}[{i}]: id {qid} also in {seen.get(qid)}"
        seen[qid] = name


def test_sources_unique_across_files():
    """One thread is one question: the same thread twice would double-count it, and a thread in both the
    dev set and the held-out set would let tuning on the dev set leak into the held-out score."""
    seen: dict[str, str] = {}
    for name, i, q in ENTRIES:
        key = thread_key(q.get("source", ""))
        assert key not in seen, f"{name}[{i}]: source {q.get('source')} is the thread of {seen[key]}"
        seen[key] = f"{name}:{q.get('id')}"


def test_thread_key_names_one_thread():
    """The comparison above must see through the spellings GitHub redirects, or a shared thread slips by."""
    assert thread_key("https://github.com/microsoft/DeepSpeed/issues/3517#issuecomment-1") == thread_key(
        "https://github.com/deepspeedai/DeepSpeed/issues/3517/"
    )
    assert thread_key("https://github.com/hiyouga/LLaMA-Factory/issues/493") == thread_key(
        "https://github.com/hiyouga/LlamaFactory/issues/493"
    )
    assert thread_key("https://github.com/hiyouga/LlamaFactory/issues/493") != thread_key(
        "https://github.com/hiyouga/LlamaFactory/issues/4930"
    )
    assert thread_key("https://github.com/THUDM/ChatGLM3/issues/806") == thread_key(
        "https://github.com/zai-org/ChatGLM3/issues/806"
    )
    assert thread_key("https://github.com/huggingface/trl/issues/10") != thread_key(
        "https://github.com/huggingface/peft/issues/10"
    )
    assert thread_key("https://github.com/ssbuild/chatglm_finetuning/issues/131") != thread_key(
        "https://github.com/liucongg/ChatGLM-Finetuning/issues/131"
    )
    assert thread_key("https://github.com/volcengine/verl/issues/1200") == thread_key(
        "https://github.com/verl-project/verl/issues/1200"
    )
    assert thread_key("https://github.com/volcengine/veScale/issues/5") != thread_key(
        "https://github.com/verl-project/veScale/issues/5"
    )


def test_heldout_size_and_languages():
    """The held-out set is only a measurement if it is big enough per language (issue #10: >= 80, >= 35 each)."""
    held = [q for name, _, q in ENTRIES if name.startswith(HELDOUT.name + "/")]
    by_lang = {lang: sum(1 for q in held if q.get("lang") == lang) for lang in ("zh", "en")}
    assert len(held) >= 80, f"held-out set has {len(held)} questions"
    assert by_lang["zh"] >= 35 and by_lang["en"] >= 35, f"held-out set per language: {by_lang}"


_URL_IN_TEXT = re.compile(r"https?://github\.com/[^\s)\]\"'>`,]+", re.I)


def test_heldout_threads_not_card_sources():
    """A held-out thread must not be cited anywhere in knowledge/cards: a card written from the thread would have
    seen the answer, and the held-out numbers would no longer measure unseen questions."""
    cited = {thread_key(u) for p in CARDS.glob("*.md") for u in _URL_IN_TEXT.findall(p.read_text(encoding="utf-8"))}
    hits = [
        f"{q.get('id')} {q.get('source')}"
        for name, _, q in ENTRIES
        if name.startswith(HELDOUT.name + "/") and thread_key(q.get("source", "")) in cited
    ]
    assert not hits, "held-out threads cited by a card: " + "; ".join(hits)


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
    for key in (
        "world_size",
        "num_nodes",
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
        "train_batch_size",
        "seq_len",
        "lora_rank",
        "pipeline_parallel_size",
        "tensor_parallel_size",
    ):
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


def test_eval_ids_filter_reads_lists_and_files(tmp_path):
    """``bench/eval_answers.py --ids`` takes ``a,b`` or ``@file`` (comments and blank lines skipped)."""
    from bench.eval_answers import _id_list

    assert _id_list("zh-a-1, en-b-2,") == {"zh-a-1", "en-b-2"}
    f = tmp_path / "ids.txt"
    f.write_text("zh-a-1  # wrong act\n\nen-b-2\n", encoding="utf-8")
    assert _id_list(f"@{f}") == {"zh-a-1", "en-b-2"}
