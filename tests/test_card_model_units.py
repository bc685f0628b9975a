"""The learned card ranking (rag/card_model.py), its artifact and how retrieval fuses it."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from rag.card_model import ARTIFACT, CardModel, load_card_model, model_from_json, model_to_json, term_counts
from rag.retrieval import LEARNED_WEIGHT, RRF_K, Rankings, fuse_ranks

DEV = Path(__file__).resolve().parent / "data" / "real_questions"


def _tiny() -> CardModel:
    terms = ["oom", "显存", "loss"]
    weights = np.array([[2.0, 0.0], [1.5, 0.0], [0.0, 3.0]], dtype=np.float32)
    return CardModel(["mem", "loss-card"], terms, np.ones(3, dtype=np.float32), weights, np.zeros(2, dtype=np.float32))


def test_scores_follow_the_weights_of_the_terms_present():
    model = _tiny()
    assert model.ranks("训练时 显存 OOM 了") == {"mem": 1, "loss-card": 2}
    assert model.ranks("why is my loss nan") == {"loss-card": 1, "mem": 2}
    assert model.ranks("why is my loss nan", known={"mem"}) == {"mem": 1}


def test_a_message_with_no_known_term_gets_no_ranking():
    assert _tiny().ranks("completely unrelated words") == {}


def test_the_artifact_round_trips(tmp_path):
    model = _tiny()
    text = model_to_json(model.classes, list(model.vocab), model.idf, model.weights, model.bias, {"files": []})
    back = model_from_json(json.loads(text))
    assert back.classes == model.classes and back.vocab == model.vocab
    assert np.allclose(back.weights, model.weights) and np.allclose(back.idf, model.idf)
    assert model_to_json(back.classes, list(back.vocab), back.idf, back.weights, back.bias, {"files": []}) == text


def test_a_missing_or_broken_artifact_leaves_retrieval_without_the_model(tmp_path, caplog):
    load_card_model.cache_clear()
    with caplog.at_level(logging.WARNING, logger="rag.card_model"):
        assert load_card_model(str(tmp_path / "missing.json")) is None
    bad = tmp_path / "bad.json"
    data = json.loads(ARTIFACT.read_text(encoding="utf-8"))
    data["bias"] = data["bias"][:-1]
    bad.write_text(json.dumps(data), encoding="utf-8")
    assert load_card_model(str(bad)) is None
    assert "card model not loaded" in caplog.text
    load_card_model.cache_clear()


def test_the_switch_turns_the_model_off(monkeypatch):
    load_card_model.cache_clear()
    monkeypatch.setenv("BATCHBOT_CARD_MODEL", "off")
    assert load_card_model() is None
    load_card_model.cache_clear()


def test_the_shipped_model_ranks_every_card():
    from rag.cards import load_cards

    model = load_card_model()
    assert model is not None
    assert {c.id for c in load_cards()} <= set(model.classes)
    assert len(model.ranks("DeepSpeed ZeRO-3 OOM with gradient accumulation 8")) == len(model.classes)


def test_fusion_weights_the_learned_ranking():
    fused = fuse_ranks({"a": 1, "b": 2}, {"b": 1}, weights=[1.0, 2.0])
    assert fused["a"] == pytest.approx(1 / (RRF_K + 1))
    assert fused["b"] == pytest.approx(1 / (RRF_K + 2) + 2 / (RRF_K + 1))
    with pytest.raises(ValueError):
        fuse_ranks({"a": 1}, weights=[1.0, 2.0])


def test_the_learned_first_card_passes_the_card_both_retrievers_rank_first_when_they_rank_it_second():
    rk = Rankings(
        cleaned="q",
        expanded="q",
        dense={"a": 0.9, "b": 0.8, "c": 0.1},
        bm25={"a": 5.0, "b": 4.0},
        dense_rank={"a": 1, "b": 2, "c": 3},
        bm25_rank={"a": 1, "b": 2},
        prose_rank={},
        learned_rank={"b": 1, "c": 2, "a": 3},
    )
    assert rk.fused_order({}) == ["a", "b", "c"]
    # k=3, w=2: a 2/4 + 2/6 = 0.83; b 2/5 + 2/4 = 0.90; c 1/6 + 2/5 = 0.57
    assert (RRF_K, LEARNED_WEIGHT) == (3, 2.0)
    assert rk.fused_order() == ["b", "a", "c"]


def test_tokens_are_the_bm25_tokenizers():
    assert term_counts("gradient_accumulation_steps 显存 显存")["显存"] == 2
    assert "gradient_accumulation_steps" in term_counts("gradient_accumulation_steps")


def test_the_committed_model_was_trained_on_every_dev_file():
    """A dev file added without retraining leaves its labels out: run ``python -m bench.train_cards --no-cv`` and
    commit rag/card_model.json."""
    files = set(json.loads(ARTIFACT.read_text(encoding="utf-8"))["meta"]["files"])
    assert files == {p.name for p in DEV.glob("*.yaml")}


@pytest.mark.slow
def test_retraining_reproduces_the_committed_rankings(tmp_path):
    """bench/train_cards.py is deterministic: a fresh fit ranks the same top three cards for every dev question."""
    train = pytest.importorskip("bench.train_cards")
    from rag.cards import load_cards

    files = tuple(json.loads(ARTIFACT.read_text(encoding="utf-8"))["meta"]["files"])
    items = train.load_questions(only=files)
    texts = [train.retrieval_text(q["question"]) for q in items]
    train.train_and_write(items, texts, load_cards(), tmp_path / "card_model.json")
    fresh = model_from_json(json.loads((tmp_path / "card_model.json").read_text(encoding="utf-8")))
    shipped = load_card_model()
    assert shipped is not None
    differ = [
        q["id"] for q, t in zip(items, texts, strict=True) if list(fresh.ranks(t))[:3] != list(shipped.ranks(t))[:3]
    ]
    assert not differ, f"retrained model ranks differently for {differ[:5]}"
