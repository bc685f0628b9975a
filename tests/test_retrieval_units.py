"""Retrieval-side units, fast (no embedding model): which retrieved cards an answer cites, the glossary's
expansions of how users write, the tokenizer. The measured effect on real questions is in
test_eval_answers.py (hit@1 / hit@3)."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from rag.assistant import BM25_TOP, CLOSE_TO_BEST
from rag.cards import load_cards
from rag.glossary import expand_query, find_terms
from rag.retrieval import Hit

CARDS = load_cards()
BY_ID = {c.id: c for c in CARDS}
NO_INTENTS = SimpleNamespace(small_batch=False)


@pytest.fixture(scope="module")
def bot(bot_without_retrieval):
    return bot_without_retrieval


def _hit(cid: str, dense: float, bm25_rank: int | None) -> Hit:
    return Hit(card=BY_ID[cid], score=0.0, dense_score=dense, bm25_rank=bm25_rank, dense_rank=1)


IDS = [c.id for c in CARDS[:3]]


# ---- which retrieved cards are cited ---------------------------------------------------------------
def test_card_far_below_best_dense_and_low_in_bm25_is_not_cited(bot):
    hits = [
        _hit(IDS[0], 0.70, 1),
        _hit(IDS[1], 0.70 - CLOSE_TO_BEST - 0.05, BM25_TOP + 3),
        _hit(IDS[2], 0.70 - CLOSE_TO_BEST - 0.05, None),
    ]
    assert [c.id for c in bot._cards_for([], hits, NO_INTENTS, None)] == [IDS[0]]


def test_card_bm25_ranks_at_the_top_is_cited_even_when_dense_is_far(bot):
    """A Chinese question reaches the English-only model only through glossary words; BM25's top card stays."""
    hits = [_hit(IDS[0], 0.70, 3), _hit(IDS[1], 0.40, 1), _hit(IDS[2], 0.40, BM25_TOP + 1)]
    assert [c.id for c in bot._cards_for([], hits, NO_INTENTS, None)] == [IDS[0], IDS[1]]


def test_card_close_in_dense_is_cited_without_bm25(bot):
    hits = [_hit(IDS[0], 0.70, 1), _hit(IDS[1], 0.70 - CLOSE_TO_BEST / 2, None)]
    assert [c.id for c in bot._cards_for([], hits, NO_INTENTS, None)] == IDS[:2]


def test_hit_without_bm25_rank_attribute_still_works(bot):
    """Other retrievers (test stubs) return hits with a dense score only."""

    @dataclass
    class Bare:
        card: object
        dense_score: float

    hits = [Bare(BY_ID[IDS[0]], 0.7), Bare(BY_ID[IDS[1]], 0.3)]
    assert [c.id for c in bot._cards_for([], hits, NO_INTENTS, None)] == [IDS[0]]


# ---- glossary: how users write requirement, growth and GPU-count questions -----------------------
@pytest.mark.parametrize(
    "text, expected",
    [
        ("全参数微调至少需要多少张A100？", "how much GPU memory"),
        ("训练越来越慢，显存占用慢慢增大", "keeps growing"),
        ("多卡的效果不如单卡", "global batch grows with GPU count"),
        ("用了四张卡训练，一个epoch的step数只有单卡的四分之一", "global batch grows with GPU count"),
        ("两张卡的显存能加起来用吗", "pool GPU memory"),
        ("训练进度条卡住不动", "hang"),
    ],
)
def test_glossary_reads_common_user_phrasings(text, expected):
    assert expected in expand_query(text)


def test_worse_results_alone_does_not_imply_gpu_count():
    """The GPU-count reading needs a GPU-count word too: "效果不如" alone is about anything."""
    assert "global batch grows with GPU count" not in expand_query("换了数据集之后效果不如以前")


def test_new_terms_are_whole_jieba_words():
    from rag.tokenize import tokenize

    assert "需要多少显存" in tokenize("全量微调需要多少显存")
    assert [t.en[0] for t in find_terms("显存越来越大")].count("keeps growing") == 1


# ---- fusion -------------------------------------------------------------------------------------
def test_one_retrievers_first_card_beats_a_card_both_put_sixth():
    """The two retrievers read different things; a first place is stronger evidence than two middling ranks."""
    from rag.retrieval import fuse_ranks

    dense = {"compromise": 6, "bm25-first": 40, "dense-first": 1}
    bm25 = {"compromise": 6, "bm25-first": 1}
    fused = fuse_ranks(dense, bm25)
    order = sorted(fused, key=lambda c: -fused[c])
    assert order.index("bm25-first") < order.index("compromise")
    assert order.index("dense-first") < order.index("compromise")
    # with the textbook k=60 the compromise card would win: the reason RRF_K is small here
    flat = fuse_ranks(dense, bm25, k=60)
    assert flat["compromise"] > flat["bm25-first"]


def test_fusion_sums_over_rankings_and_skips_unranked():
    from rag.retrieval import fuse_ranks

    fused = fuse_ranks({"a": 1, "b": 2}, {"a": 3}, k=2)
    assert fused == pytest.approx({"a": 1 / 3 + 1 / 5, "b": 1 / 4})


def test_a_generic_error_word_is_not_an_assertion_error():
    """ "报错" is any error; only "断言" / AssertionError means the DeepSpeed batch assertion."""
    assert "assertion error" not in expand_query("训练的时候报错了，怎么办")
    assert "断言错误" not in expand_query("I get an error when training")
    assert "assertion error" in expand_query("deepspeed 断言错误 train_batch_size")


# ---- glossary: the method named only in a script or config file name --------------------------------
def test_method_named_in_a_script_name_reaches_the_query():
    """OpenFedLLM #48 names DPO only as ``run_dpo.sh``; the terms' word boundaries exclude ``_`` (config keys stay
    whole), so the file name's words are read on their own."""
    from rag.glossary import file_name_words

    text = "I ran the run_dpo.sh with default settings but cuda oom was reported on a single 3090 GPU."
    assert file_name_words(text) == "run dpo"
    assert "DPO direct preference optimization" in expand_query(text)
    assert "LoRA" in expand_query("llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml")
    assert "ZeRO stage 3" in expand_query("bash examples/lora_multi_gpu/ds_zero3.sh")


def test_config_keys_and_plain_words_are_not_file_names():
    from rag.glossary import file_name_words

    assert file_name_words("--gradient_accumulation_steps 8 --per_device_train_batch_size 2") == ""
    assert file_name_words("python train.py --deepspeed ds_config.json") == "ds config"
    assert expand_query("--dpo_label_smoothing 0.1") == "--dpo_label_smoothing 0.1"  # a key, not a file name
