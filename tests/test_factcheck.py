"""fact_check on the seed exchange (the chatbot answer this product was born from) and on edge cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from calculators import CalculatorError, run_tool
from calculators.factcheck import fact_check, looks_like_chatbot_answer, strip_check_request
from calculators.text_safety import escape_md

# The two GPT-4o answers of the seed exchange this product was born from (2024-11-29), verbatim.
DATA = Path(__file__).resolve().parent / "data" / "factcheck"


def _seed_second_answer() -> str:
    return (DATA / "seed_answer2_zh.md").read_text(encoding="utf-8")


def test_seed_first_answer_myths_flagged():
    result = fact_check((DATA / "seed_answer1_zh.md").read_text(encoding="utf-8"))
    rules = {c.rule for c in result.flagged}
    assert {"small_batch_smaller_updates", "bigger_batch_generalizes"} <= rules
    assert all(c.verdict == "wrong" for c in result.flagged)


# The seed's second answer: its five wrong beliefs, each with the card that corrects it.
SEED_WRONG = {
    "所以整个梯度的存储会占用 4 * X 的显存": ("wrong", "myth-ga-stores-gradient-per-microbatch"),
    "有效批次大小过大：如果": ("wrong", "myth-effective-batch-causes-oom"),
    "适当减少累积步数，有助于减少显存消耗": ("wrong", "myth-lower-ga-saves-memory"),
    "可以显著减少显存占用": ("wrong", "myth-mixed-precision-halves-memory"),
    "有效批次大小 是 train_micro_batch_size_per_gpu 和 gradient_accumulation_steps 的乘积": (
        "imprecise",
        "effective-batch-formula",
    ),
}
# Correct sentences of the same answer that must never be flagged.
SEED_RIGHT = [
    "减少 train_micro_batch_size_per_gpu：降低每个微批次的大小",
    "梯度检查点（Gradient Checkpointing）：使用梯度检查点技术",
    "gradient_accumulation_steps 表示在进行一次权重更新之前，需要积累多少个微批次的梯度。",
    "通常每个微批次的显存消耗是固定的",
    "大模型（例如 7B 模型）本身就占用了大量的显存。",
    "除了模型参数，优化器（如 Adam）还需要存储与每个参数相关的状态信息",
]


def test_seed_five_wrong_claims_flagged_with_the_right_card():
    result = fact_check(_seed_second_answer())
    assert result.lang == "zh"
    for needle, (verdict, card) in SEED_WRONG.items():
        hits = [c for c in result.claims if needle in c.text]
        assert hits, needle
        assert hits[0].verdict == verdict and hits[0].card_id == card, (needle, hits[0])
        assert hits[0].correction_zh and hits[0].correction_en and hits[0].sources
        assert all(s.url.startswith("https://") for s in hits[0].sources)


def test_seed_correct_sentences_not_flagged():
    result = fact_check(_seed_second_answer())
    for needle in SEED_RIGHT:
        for c in result.claims:
            if needle in c.text:
                assert c.verdict not in ("wrong", "imprecise"), (needle, c.rule)


def test_correct_statements_are_never_wrong():
    for text in [
        "Gradient accumulation does not increase peak memory; each backward adds into the same .grad buffer.",
        "梯度累积不会增加峰值显存，每个微批次的激活在反向后释放。",
        "The effective batch size is micro batch × gradient_accumulation_steps × number of GPUs.",
        "With pipeline parallelism, more micro-batches in flight keep more activations, so memory grows with them.",
        "Lower the micro batch and increase gradient_accumulation_steps to save memory.",
        "对 LoRA 来说，冻结的基座权重用 bf16 存储，比 fp32 省一半权重显存。",
        "Large batches often generalize worse unless the learning rate is retuned.",
    ]:
        assert not fact_check(text).flagged, text


def test_effective_batch_recomputed_with_the_stated_gpu_count():
    text = "You train on 4 GPUs with per_device_train_batch_size=4 and gradient_accumulation_steps=8. The effective batch is 4 × 8 = 32."
    flagged = fact_check(text).flagged
    assert len(flagged) == 1 and "128" in flagged[0].correction_en and "128" in flagged[0].correction_zh
    # Without a stated GPU count the number is not judged (but the two-factor formula is not claimed either).
    assert not fact_check("With micro batch 4 and GA 8 on one GPU, the effective batch is 4 × 8 = 32.").flagged


def test_arithmetic_error_is_wrong():
    (claim,) = fact_check("有效批次：4 × 8 × 2 = 56。").flagged
    assert claim.rule == "arithmetic" and "64" in claim.correction_zh


def test_markdown_escapes_quoted_claims():
    text = "Mixed precision halves memory <img src=x onerror=alert(1)> [x](javascript:alert(1))."
    md = fact_check(text).to_markdown("en")
    assert "<img" not in md and "javascript:" not in md
    assert escape_md("<b>", 160) in "&lt;b&gt;"
    assert "Wrong" in md and "Sources" in md


@pytest.mark.parametrize("bad", [None, 3, "", "   ", "x" * 20_001])
def test_bad_input_is_a_bilingual_calculator_error(bad):
    with pytest.raises(CalculatorError) as err:
        fact_check(bad)
    assert err.value.field == "text" and err.value.message("zh") != err.value.message("en")


def test_tool_registered_and_rejects_unknown_arguments():
    out = run_tool("fact_check", {"text": "Mixed precision training halves GPU memory with Adam."})
    assert out.flagged[0].card_id == "myth-mixed-precision-halves-memory"
    with pytest.raises(CalculatorError):
        run_tool("fact_check", {"answer": "x"})


def test_looks_like_chatbot_answer():
    assert looks_like_chatbot_answer(
        "这段回答对吗？\n增大梯度累积会保存 4 份梯度，所以显存会变成 4 倍，这是梯度累积的代价。"
    )
    assert looks_like_chatbot_answer(
        "check this answer: Lowering gradient accumulation steps saves memory on small GPUs."
    )
    assert looks_like_chatbot_answer(_seed_second_answer())
    assert not looks_like_chatbot_answer("增大梯度累积会增加显存吗？")
    assert not looks_like_chatbot_answer("Does GA=16 OOM on a 3090?")
    assert strip_check_request("这段回答对吗？\n混合精度能省一半显存").startswith("混合精度")


def test_app_box_handler():
    from ui.factcheck_box import run_fact_check

    md = run_fact_check("这段回答对吗？\n使用混合精度训练可以让显存减半。", "zh")
    assert "错误" in md and "myth-mixed-precision-halves-memory" in md
    assert run_fact_check("", "en").startswith("ℹ")
    assert run_fact_check("x" * 20_001, "en").startswith("✘")


def test_memory_figure_below_model_states_is_wrong_only_for_a_stated_setup():
    (claim,) = fact_check("7B 模型用 AdamW 混合精度全量微调，大约需要 28 GB 显存。").flagged
    assert claim.rule == "memory_below_model_states" and "112" in claim.correction_zh
    for right_or_unstated in [
        "A full fine-tune of a 7B model with AdamW in mixed precision needs about 120 GB.",  # above the states
        "A full fine-tune of a 7B model with AdamW in mixed precision does not fit on a 24GB card.",  # negated
        "With ZeRO-3 on 8 GPUs a full fine-tune of a 7B model with AdamW in mixed precision needs 14 GB per GPU.",
        "A full fine-tune of a 7B model needs about 28 GB.",  # optimizer unstated
    ]:
        assert not fact_check(right_or_unstated).flagged, right_or_unstated


def test_real_user_questions_do_not_look_like_chatbot_answers():
    """Users' own long messages (logs, configs, commands) are questions to answer, never texts to fact-check."""
    import yaml

    folder = Path(__file__).resolve().parent / "data" / "real_questions"
    questions = [
        q["question"]
        for f in sorted(folder.glob("*.yaml"))
        for q in (yaml.safe_load(f.read_text(encoding="utf-8")) or {}).get("questions", [])
    ]
    if not questions:
        pytest.skip("no real-question set in this checkout")
    wrongly = [q[:80] for q in questions if looks_like_chatbot_answer(q)]
    assert not wrongly


@pytest.mark.parametrize(
    "text,rule,flagged",
    [
        # Correct statements from maintainers' replies that the rules once flagged (real questions qlora#133, LlamaFactory#615).
        (
            "If only the split changes (larger micro batch, smaller GA, same effective batch) the optimisation is the "
            "same and only speed/memory differ; if the effective batch grows, the learning rate usually needs adjusting",
            None,
            False,
        ),
        (
            "Activations scale with per_device_train_batch_size x sequence length (4 x 1024); lower the per-device "
            "batch and raise gradient_accumulation_steps to keep the effective batch",
            None,
            False,
        ),
        # The beliefs themselves are still caught.
        ("Lowering gradient_accumulation_steps saves GPU memory.", "lower_ga_saves_memory", True),
        (
            "The effective batch size = per_device_train_batch_size × gradient_accumulation_steps.",
            "effective_batch_formula_without_gpus",
            True,
        ),
    ],
)
def test_split_changes_and_scaling_notes_are_not_beliefs(text, rule, flagged):
    from calculators.factcheck import fact_check

    rules = {c.rule for c in fact_check(text).flagged}
    assert bool(rules) is flagged and (rule is None or rule in rules), rules


def test_a_product_with_a_unit_on_a_factor_is_read_whole() -> None:
    """'1 x 4 GPUs x 64 x 8192 = 2,097,152' is one right product (a maintainer's reply, LLaMA-Factory #6209), not a
    wrong '64 x 8192 = 2,097,152'; a wrong four-factor product is still caught."""
    from calculators.factcheck import fact_check

    assert not fact_check("GA gives 1 x 4 GPUs x 64 x 8192 = 2,097,152 tokens per step.").flagged
    wrong = fact_check("GA gives 1 x 4 x 64 x 8192 = 1,048,576 tokens per step.").flagged
    assert [c.rule for c in wrong] == ["arithmetic"]


def test_there_is_in_a_pasted_warning_is_not_an_answer_marker() -> None:
    """DeepSpeed's allocator warning ('... when there is high memory pressure ...') pasted under a short Chinese
    report is a question, not a chatbot answer ('there is' once matched 'Here is')."""
    warning = (
        "2 pytorch allocator cache flushes since last step. this happens when there is high memory pressure and is "
        "detrimental to performance. if this is happening frequently consider adjusting settings to reduce memory "
        "consumption. If you are unable to make the cache flushes go away consider adding "
        "get_accelerator().empty_cache() calls in your training loop to ensure that all ranks flush their caches"
    )
    text = (
        "OOM 问题, 显卡是A100 40G\n\n用 zero2 微调 8B 模型，batch 设为1 也会报OOM。\n用zero3训练会变得很慢，出现这个问题：\n\n"
        + warning
    )
    assert not looks_like_chatbot_answer(text)
