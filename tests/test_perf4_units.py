"""Serving-cost settings of the query embedding (issue 17): int8 quantisation and the query length limit.

The cache key must change when the vectors do (int8) and only then (fp32 caches keep their key; a query limit
never touches cached passages); a query cut to N word pieces must be what the model reads; quantisation must
really replace the Linear layers and stay close to fp32.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from pydantic import ValidationError

from rag.embedding import (
    EmbeddingLoadError,
    EmbeddingSettings,
    _model_fingerprint,
    bundled_model_path,
    load_embedding,
    quantize_int8,
    truncate_to_tokens,
)

LONG_QUERY = (
    "CUDA out of memory with deepspeed zero stage 2 on 8 GPUs, micro batch 4, gradient accumulation 16, bf16, "
    "llama 7b full fine-tune, seq len 4096; does increasing gradient_accumulation_steps increase memory? " * 6
)


def test_fp32_identity_is_the_key_caches_already_have() -> None:
    s = EmbeddingSettings()
    old_parts = {
        "model": _model_fingerprint(s.model),
        "query_prefix": s.resolved_query_prefix,
        "passage_prefix": s.resolved_passage_prefix,
        "normalize": s.normalize,
        "multilingual": s.resolved_multilingual,
    }
    expected = hashlib.sha256(json.dumps(old_parts, sort_keys=True).encode()).hexdigest()
    assert s.identity() == expected
    assert EmbeddingSettings(query_max_tokens=64).identity() == expected  # queries only: passages unchanged


def test_int8_has_its_own_cache_key_on_cpu_only() -> None:
    fp32 = EmbeddingSettings(device="cpu")
    int8 = EmbeddingSettings(device="cpu", quantize="int8")
    assert int8.resolved_quantize == "int8"
    assert int8.identity() != fp32.identity()
    per_channel = EmbeddingSettings(device="cpu", quantize="int8-per-channel")
    assert len({per_channel.identity(), int8.identity(), fp32.identity()}) == 3
    on_gpu = EmbeddingSettings(device="cuda", quantize="int8")
    assert on_gpu.resolved_quantize == "none"
    assert on_gpu.identity() == EmbeddingSettings(device="cuda").identity()


def test_settings_from_env_and_refusals(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATCHBOT_EMBED_QUANTIZE", " INT8 ")
    monkeypatch.setenv("BATCHBOT_QUERY_MAX_TOKENS", "128")
    s = EmbeddingSettings.from_env()
    assert (s.quantize, s.query_max_tokens) == ("int8", 128)
    monkeypatch.setenv("BATCHBOT_EMBED_QUANTIZE", "fp16")
    with pytest.raises(EmbeddingLoadError, match="BATCHBOT_EMBED_QUANTIZE='fp16'"):
        EmbeddingSettings.from_env()
    with pytest.raises(ValidationError, match="quantize"):
        EmbeddingSettings(quantize="fp16")
    monkeypatch.delenv("BATCHBOT_EMBED_QUANTIZE")
    for bad in ("4", "x", "100000"):
        monkeypatch.setenv("BATCHBOT_QUERY_MAX_TOKENS", bad)
        with pytest.raises(EmbeddingLoadError, match="BATCHBOT_QUERY_MAX_TOKENS"):
            EmbeddingSettings.from_env()
    monkeypatch.delenv("BATCHBOT_QUERY_MAX_TOKENS")
    assert EmbeddingSettings.from_env().quantize == "none"
    assert EmbeddingSettings.from_env().query_max_tokens is None


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(bundled_model_path())


def test_truncate_to_tokens_keeps_short_text_and_cuts_long_text_to_n_pieces(tokenizer) -> None:
    short = "does GA increase memory?"
    assert truncate_to_tokens(tokenizer, short, 64) == short
    cut = truncate_to_tokens(tokenizer, LONG_QUERY, 50)
    assert LONG_QUERY.startswith(cut) and len(cut) < len(LONG_QUERY)
    assert len(tokenizer(cut, add_special_tokens=False)["input_ids"]) == 50
    assert truncate_to_tokens(tokenizer, LONG_QUERY, 0) == ""
    zh = "梯度累积会增加显存吗" * 40
    cut_zh = truncate_to_tokens(tokenizer, zh, 30)
    assert zh.startswith(cut_zh) and len(tokenizer(cut_zh, add_special_tokens=False)["input_ids"]) == 30


@pytest.mark.parametrize("per_channel", [False, True])
def test_quantize_int8_replaces_linear_layers_and_stays_close(per_channel: bool) -> None:
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32))
    x = torch.randn(8, 64)
    before = model(x).detach()
    q = quantize_int8(model, per_channel=per_channel)
    kinds = {type(m).__module__ for m in q.modules() if type(m).__name__ == "Linear"}
    assert kinds == {"torch.ao.nn.quantized.dynamic.modules.linear"}
    after = q(x).detach()
    assert not torch.equal(before, after)  # really int8 arithmetic
    cos = torch.nn.functional.cosine_similarity(before, after, dim=1)
    assert float(cos.min()) > 0.99


@pytest.fixture(scope="module")
def int8_limited():
    emb = load_embedding(EmbeddingSettings(device="cpu", quantize="int8", query_max_tokens=40), batch_window_s=0)
    yield emb


def test_loaded_model_is_quantised_and_reads_at_most_the_query_limit(int8_limited) -> None:
    st = int8_limited._model
    linear = [m for m in st.modules() if type(m).__name__ == "Linear"]
    assert linear and all("quantized.dynamic" in type(m).__module__ for m in linear)
    # The query vector is that of its first 40 word pieces ([CLS] and [SEP] included) ...
    cut = truncate_to_tokens(st.tokenizer, LONG_QUERY, 38)
    full = np.asarray(int8_limited.get_query_embedding(LONG_QUERY))
    direct = st.encode([cut], prompt_name="query", normalize_embeddings=True)[0]
    assert np.allclose(full, direct, atol=1e-5)
    # ... and not the vector of the whole text (which the model would read up to 256 pieces).
    whole = st.encode([LONG_QUERY], prompt_name="query", normalize_embeddings=True)[0]
    assert float(np.dot(full, whole)) < 0.999
    # Passages keep the model's own limit.
    assert st.max_seq_length == 256
    passage = np.asarray(int8_limited.get_text_embedding(LONG_QUERY))
    assert np.allclose(passage, st.encode([LONG_QUERY], normalize_embeddings=True)[0], atol=1e-5)
