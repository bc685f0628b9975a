"""The query micro-batcher (rag.embedding.QueryBatcher): batches form, results go to the right caller,
errors reach every caller of the batch, and concurrent embeddings equal sequential ones on the real model."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from rag.embedding import DEFAULT_MAX_BATCH, QueryBatcher, batch_settings

QUERIES = [
    "does gradient accumulation increase memory",
    "梯度累积会增加显存吗",
    "how much memory for a 7B LoRA on a 3090",
    "ZeRO-3 offload per GPU memory",
    "effective batch with 8 GPUs micro 2 GA 4",
    "CUDA out of memory at step 0",
    "bf16 vs fp16 on A100",
    "per_device_train_batch_size 4 gradient_accumulation_steps 8 多少卡",
    "FSDP full shard memory for llama-2-13b",
    "why is my loss nan with fp16",
] * 2  # 20 queries, repeats included: equal texts must give equal vectors


def slow_lengths(calls: list[list[str]]):
    """An encoder whose vector is (length, first char code); slow enough that concurrent callers queue up."""

    def encode(texts: list[str]) -> list[list[float]]:
        calls.append(list(texts))
        time.sleep(0.02)
        return [[float(len(t)), float(ord(t[0]))] for t in texts]

    return encode


def test_concurrent_callers_share_batches_and_get_their_own_vectors() -> None:
    calls: list[list[str]] = []
    b = QueryBatcher(slow_lengths(calls), window_s=0.005, max_batch=8)
    texts = [f"q{'x' * i}" for i in range(24)]
    start = threading.Barrier(len(texts))

    def one(t: str) -> list[float]:
        start.wait()
        return b.embed(t)

    with ThreadPoolExecutor(len(texts)) as pool:
        got = list(pool.map(one, texts))
    b.close()
    assert got == [[float(len(t)), float(ord("q"))] for t in texts]
    assert sum(len(c) for c in calls) == len(texts)
    assert max(len(c) for c in calls) > 1, "concurrent queries were never batched"
    assert max(len(c) for c in calls) <= 8
    assert len(calls) < len(texts)


def test_one_caller_alone_is_one_batch_of_one() -> None:
    calls: list[list[str]] = []
    b = QueryBatcher(slow_lengths(calls), window_s=0.001)
    assert b.embed("abc") == [3.0, float(ord("a"))]
    assert b.embed("de") == [2.0, float(ord("d"))]
    b.close()
    assert calls == [["abc"], ["de"]]


def test_an_encoder_error_reaches_every_caller_of_the_batch_and_the_batcher_keeps_working() -> None:
    fail = {"on": True}

    def encode(texts: list[str]) -> list[list[float]]:
        time.sleep(0.02)
        if fail["on"]:
            raise ValueError("model failed")
        return [[1.0] for _ in texts]

    b = QueryBatcher(encode, window_s=0.01)
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(b.embed, f"t{i}") for i in range(4)]
        errors = [f.exception() for f in futures]
    assert all(isinstance(e, ValueError) for e in errors)
    fail["on"] = False
    assert b.embed("again") == [1.0]
    b.close()
    with pytest.raises(RuntimeError):
        b.embed("after close")


def test_batch_settings_from_the_environment() -> None:
    assert batch_settings({}) == (0.002, DEFAULT_MAX_BATCH)
    assert batch_settings({"BATCHBOT_EMBED_BATCH_WINDOW_MS": "0", "BATCHBOT_EMBED_MAX_BATCH": "8"}) == (0.0, 8)
    # out of range or not a number: the defaults (and a warning), never a crash at start
    assert batch_settings({"BATCHBOT_EMBED_BATCH_WINDOW_MS": "-1", "BATCHBOT_EMBED_MAX_BATCH": "0"}) == (
        0.002,
        DEFAULT_MAX_BATCH,
    )
    assert batch_settings({"BATCHBOT_EMBED_BATCH_WINDOW_MS": "abc", "BATCHBOT_EMBED_MAX_BATCH": "1e3"}) == (
        0.002,
        DEFAULT_MAX_BATCH,
    )


@pytest.fixture(scope="module")
def models():
    """The bundled model twice: with the micro-batcher (a wide window, so batches surely form) and without."""
    from rag.embedding import EmbeddingSettings, load_embedding

    settings = EmbeddingSettings(device="cpu")
    batched = load_embedding(settings, batch_window_s=0.05, max_batch=8)
    plain = load_embedding(settings, batch_window_s=0.0)
    yield batched, plain
    batched.query_batcher.close()


def test_concurrent_batched_embeddings_equal_sequential_ones(models) -> None:
    batched, plain = models
    assert plain.query_batcher is None
    sequential = np.array([plain.get_query_embedding(q) for q in QUERIES])
    start = threading.Barrier(len(QUERIES))

    def one(q: str) -> list[float]:
        start.wait()
        return batched.get_query_embedding(q)

    with ThreadPoolExecutor(len(QUERIES)) as pool:
        concurrent = np.array(list(pool.map(one, QUERIES)))
    sizes = batched.query_batcher.batch_sizes
    assert max(sizes) > 1, f"no batch formed: {sizes}"
    assert max(sizes) <= 8
    # padding to the longest query of a batch changes float rounding only (attention masks hide the pads)
    assert np.allclose(concurrent, sequential, atol=1e-5), float(np.abs(concurrent - sequential).max())
    # every caller got the vector of its own query: the nearest sequential vector is its own text's
    nearest = (concurrent @ sequential.T).argmax(axis=1)
    assert [QUERIES[i] for i in nearest] == QUERIES


def test_batched_model_is_still_a_llama_index_embedding(models) -> None:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    batched, _ = models
    assert isinstance(batched, BaseEmbedding)
    texts = batched.get_text_embedding_batch(QUERIES[:3])
    assert len(texts) == 3 and len(texts[0]) == len(batched.get_query_embedding(QUERIES[0]))
