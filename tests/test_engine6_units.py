"""engine6: a card's lead opens the answer only when it answers *this* question (issue #10, rag/opening.py).

The messages are real users' wordings or close variants of them (threads cited inline); the cards are the real
knowledge base. The gate is read from structure — the lead's kind against the act, what the asking sentences name
against what the card is about, the symptom asked about, the training stack — so each test holds for a family of
messages, and the last tests check that confident openings that were right stay as they were.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.openings_diff import changed, first_sentence
from rag.acts import Act
from rag.cards import load_cards
from rag.compose import Results, opening_order, verdict
from rag.evidence import read_evidence
from rag.intents import RULES, detect_intents
from rag.opening import AskedQuestion, lead_answers, lead_kind, opening_card, read_asked, stacks_named
from rag.parts import split_message
from rag.planner import plan_calls
from rag.setup import read_setup

ALL = tuple(load_cards())
CARDS = {c.id: c for c in ALL}


def _asked(text: str) -> AskedQuestion:
    return read_asked(text, split_message(text))


def _passes(card_id: str, text: str, act: Act) -> bool:
    return lead_answers(CARDS[card_id], _asked(text), act, ALL).passes


def _results(text: str, act: Act, card_ids: list[str], lang: str = "en", **extra: Any) -> Results:
    """Real pieces of one answer (setup, plan, asked question) with the given retrieved cards."""
    parts = split_message(text)
    setup, _ = read_setup(parts)
    plan = plan_calls(setup, act, detect_intents(text), [], text)
    return Results(
        lang=lang,  # type: ignore[arg-type]
        act=act,
        setup=setup,
        plan=plan,
        calls=[],
        cards=[CARDS[c] for c in card_ids],
        asked=read_asked(text, parts),
        all_cards=ALL,
        **extra,
    )


# ---- what a lead does ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "card_id,kind",
    [
        ("myth-ga-stores-gradient-per-microbatch", "verdict"),  # "No. Accumulation keeps a single gradient buffer"
        ("myth-mixed-precision-halves-memory", "verdict"),  # "It does not halve memory."
        ("host-ram-load-scales-with-processes", "verdict"),  # "Yes, this is how …"
        ("accelerate-scheduler-steps-per-process", "observation"),  # "This is Accelerate by design: …"
        ("gradient-checkpointing-peft-no-grad-error", "observation"),  # "The usual cause is …"
        ("hf-trainer-warmup-scheduler-steps", "statement"),
        ("fp16-vs-bf16-stability", "statement"),
    ],
)
def test_lead_kind(card_id: str, kind: str) -> None:
    assert lead_kind(CARDS[card_id]) == kind


# ---- the asking sentences -------------------------------------------------------------------------
def test_a_comma_does_not_cut_the_question_from_what_it_asks_about() -> None:
    a = _asked("bf16 or fp16, which should I use for fine-tuning Llama-2-7B on an A100?")
    assert {"bf16", "fp16"} <= set(a.concepts)
    assert not a.asks_whether


def test_polar_questions_and_why_questions_are_told_apart() -> None:
    assert _asked("默认参数batchsize为啥这么大，实验中越大越好吗").asks_whether
    assert _asked("LengthGroupedSampler: why longest examples go first?").asks_why
    assert not _asked("请教一下，sft 用 bf16 还是 fp16 好呢？").asks_whether


def test_stacks_are_read_case_sensitively_where_a_word_is_also_a_class() -> None:
    assert "hf-trainer" not in stacks_named("the trainer computes steps from the paper's batch size")
    assert {"hf-trainer", "accelerate"} <= stacks_named("I use the HF Trainer with TrainingArguments")
    assert {"llamafactory", "hf-trainer"} <= stacks_named("llamafactory-cli train examples/llama3_lora.yaml")


# ---- the gate ------------------------------------------------------------------------------------
def test_a_yes_no_lead_opens_only_a_question_about_its_claim() -> None:
    # "bf16 or fp16, which?" is not "does mixed precision halve memory?" (the brief's "不会减半" opening).
    assert not _passes("myth-mixed-precision-halves-memory", "请教一下，sft 用 bf16 还是 fp16 好呢？", "explain")
    assert _passes("myth-mixed-precision-halves-memory", "混合精度训练能让显存减半吗？", "yes_no")
    # a GA-memory "No." does not answer whether the scheduler steps per micro-step
    scheduler = "使用梯度累积的时候，学习率调度器是每个 micro step 都 step 一次，还是每次 optimizer step 才 step 一次？"
    assert not _passes("myth-ga-stores-gradient-per-microbatch", scheduler, "explain")


def test_an_observation_lead_needs_an_observation_or_a_why() -> None:
    # LLaMA-Factory-style question with no observation: Accelerate's "This is … by design" explains nothing asked
    scheduler = "使用梯度累积的时候，学习率调度器是每个 micro step 都 step 一次，还是每次 optimizer step 才 step 一次？"
    assert not _passes("accelerate-scheduler-steps-per-process", scheduler, "explain")
    assert _passes("hf-trainer-warmup-scheduler-steps", scheduler, "explain")
    picked = opening_card(
        [CARDS["accelerate-scheduler-steps-per-process"], CARDS["hf-trainer-warmup-scheduler-steps"]],
        _asked(scheduler),
        "explain",
        ALL,
    )
    assert picked is not None and picked.id == "hf-trainer-warmup-scheduler-steps"
    # huggingface/transformers#13794: a why question about what a card explains as by design
    assert _passes(
        "group-by-length-longest-batch-first", "LengthGroupedSampler: why longest examples go first?", "explain"
    )


def test_a_bare_this_is_expected_is_dropped_for_a_question_that_reports_nothing() -> None:
    # nbasyl/DoRA#28 "What is the training speed of Dora compared to Lora?": the DoRA card's fact answers it
    text = "What is the training speed of DoRA compared to LoRA?"
    assert _passes("dora-slower-more-memory", text, "explain")
    r = _results(text, "explain", ["dora-slower-more-memory"])
    assert verdict(r).startswith("**DoRA splits the weight update")
    zh = _results("DoRA 和 LoRA 训练速度比怎么样？", "explain", ["dora-slower-more-memory"], lang="zh")
    assert verdict(zh).startswith("**DoRA 把权重更新拆成")
    # a report keeps it: "my DoRA run is slower than LoRA, is this normal?" is answered "This is expected."
    seen = _results("My DoRA run is much slower than LoRA, is this normal?", "is_normal", ["dora-slower-more-memory"])
    assert verdict(seen).startswith("**This is expected.")


def test_a_lead_about_another_training_stack_does_not_open() -> None:
    # espnet/espnet#1489-like: reconfiguring accum_grad in espnet is not answered by "LLaMA-Factory uses …"
    espnet = "In espnet, how should I reconfigure `accum_grad` when I go from 4 GPUs to 2 GPUs?"
    assert not _passes("llamafactory-batch-settings", espnet, "configure")
    assert _passes(
        "llamafactory-batch-settings", "LLaMA-Factory 里 gradient_accumulation_steps 怎么设置？", "configure"
    )


def test_a_lead_about_one_script_family_opens_only_where_the_message_is_about_it() -> None:
    # FlagEmbedding#412-like: a paper's "batch_size" names no stack; "In alpaca-lora's finetune.py …" is not its answer
    paper = "论文里提到的batch_size=19200，是 卡数*per_device_batch_size*accumulation_steps 算出来的吗？"
    assert not _passes("alpaca-lora-ga-from-world-size", paper, "yes_no")
    # naming a setting of that script family (micro_batch_size) or the family itself lets it open
    own = "batch_size=128 and micro_batch_size=4 on 8 GPUs: what is gradient_accumulation_steps?"
    assert _passes("alpaca-lora-ga-from-world-size", own, "batch_arithmetic")
    assert _passes("alpaca-lora-ga-from-world-size", "alpaca-lora 多卡时 batch_size 要乘卡数吗？", "yes_no")
    # verl's own settings name verl; a file name is not a setting
    assert stacks_named("if rollout.n is doubled, will the samples used for training double too?") >= {"verl"}
    assert not _passes(
        "alpaca-lora-ga-from-world-size",
        "train_multi_gpu.py 里多卡的 num_update_steps_per_epoch 为什么没有除以卡数？",
        "explain",
    )
    # a lead that names the HF Trainer is about a stack most users run without naming it: it may still open
    assert _passes(
        "gpu-count-changes-batch-steps-lr",
        "从 8 卡换成 4 卡后，学习率和 batch 要怎么改？每个 epoch 的步数会变吗？",
        "configure",
    )


def test_a_card_that_speaks_of_another_symptom_does_not_open() -> None:
    assert not _passes("lora-memory-breakdown", "Is LoRA slower than full fine-tuning?", "yes_no")
    assert _passes(
        "lora-memory-breakdown", "How much GPU memory does LoRA save compared to full fine-tuning?", "explain"
    )


def test_a_card_the_question_names_nothing_of_does_not_open() -> None:
    espnet = "How should I reconfigure `accum_grad` when I go from 4 GPUs to 2 GPUs?"
    assert not _passes("dataparallel-single-process-trainer", espnet, "configure")


def test_a_fit_question_is_opened_only_by_a_card_about_memory() -> None:
    yi = (
        "Yi-34B SFT 请问有在Factory做过SFT的吗？这个有没有配置要求？通过Accelerate多卡训练，GPU、系统内存有配置参考吗？"
    )
    assert not _passes("hw-windows-no-nccl", yi, "fit")
    assert _passes("qlora-memory", "QLoRA 微调 Yi-34B 需要多少显存？", "fit")


def test_a_card_about_one_model_size_opens_only_for_that_size() -> None:
    # hiyouga/LLaMA-Factory#1585 (Yi-34B) must not open with "a single 24 GB card cannot fully fine-tune 7B"
    assert not _passes("oom-7b-full-finetune-24gb", "请问 Yi-34B 微调有没有配置要求？", "explain")
    assert _passes("oom-7b-full-finetune-24gb", "Can I fully fine-tune llama2-7b on one 24GB card?", "explain")


def test_the_symptom_is_read_from_the_asked_clause() -> None:
    # "batch size=1 ,训练太慢，如果增大到16，学习率需要调整吗？" asks about the learning rate; the slowness is context
    assert _asked("batch size=1 ,训练太慢，如果增大到16，学习率需要调整吗？").family == "generic"
    assert _asked("Is LoRA slower than full fine-tuning?").family == "speed"
    assert _passes("lr-linear-scaling-rule", "batch size=1 ,训练太慢，如果增大到16，学习率需要调整吗？", "configure")


def test_memory_words_alone_do_not_reject_a_card_but_a_slowdown_does() -> None:
    # almost every message names memory; a question about speed or the loss curve tells cards apart
    assert _passes(
        "trl-grpo-batch-counts-completions",
        "GRPO 的 per_device_train_batch_size 是按 prompt 还是按补全算的？显存不够",
        "explain",
    )
    assert not _passes("lora-memory-breakdown", "LoRA 为什么比全量微调还慢？", "explain")


def test_a_diagnosis_keeps_its_selected_cause_and_names_none_outside_the_symptom() -> None:
    bf16 = "Training Llama with bf16 on a V100 fails with: Your setup doesn't support bf16/gpu. GPU memory is fine."
    r = _results(bf16, "diagnose", ["hw-bf16-requires-ampere"], evidence=read_evidence(bf16, split_message(bf16)))
    assert verdict(r).startswith("**Most likely cause:")
    slow = "Why is my LoRA run slower than full fine-tuning? It takes about the same time per step."
    r = _results(slow, "diagnose", ["lora-memory-breakdown"], evidence=read_evidence(slow, split_message(slow)))
    assert verdict(r).startswith("**No known cause in the knowledge base speaks of what you describe.**")


# ---- the opening -----------------------------------------------------------------------------------
def test_the_card_that_answers_moves_to_the_front_and_opens() -> None:
    text = "With gradient accumulation, does the LR scheduler step every micro step or every optimizer step?"
    r = _results(text, "explain", ["accelerate-scheduler-steps-per-process", "hf-trainer-warmup-scheduler-steps"])
    r.cards = opening_order(r)
    assert r.cards[0].id == "hf-trainer-warmup-scheduler-steps"
    assert verdict(r).startswith("**The Trainer's LR schedule runs in optimizer steps")


def test_no_card_answers_then_the_closest_are_named_not_quoted() -> None:
    text = "bf16 or fp16, which should I use?"
    r = _results(text, "explain", ["myth-mixed-precision-halves-memory"])
    assert opening_order(r) == r.cards
    v = verdict(r)
    assert v.startswith("**Nothing in the knowledge base answers exactly this.**")
    assert "It does not halve" not in v and CARDS["myth-mixed-precision-halves-memory"].title_en.rstrip(".?") in v


def test_a_fit_question_with_a_model_and_no_method_says_what_the_figure_depends_on() -> None:
    # hiyouga/LLaMA-Factory#1585: "Yi-34B … 这个有没有配置要求？" opened with the host-RAM card's "是的，…"
    r = _results("请问 Yi-34B 微调有没有配置要求？", "fit", ["host-ram-load-scales-with-processes"], lang="zh")
    v = verdict(r)
    assert v.startswith("**需要多少显存取决于") and "是的" not in v
    assert "模型或参数量" not in v  # the model was given: it is not asked for again


def test_right_confident_openings_stay() -> None:
    r = _results("Does gradient accumulation store a gradient copy per micro-batch?", "yes_no", [])
    r.cards = [CARDS["myth-ga-stores-gradient-per-microbatch"]]
    assert verdict(r).startswith("**No.")
    text = "Should I use bf16 or fp16 for training on an A100? fp16 keeps overflowing."
    r = _results(text, "explain", ["fp16-vs-bf16-stability"])
    assert verdict(r).startswith("**Use bf16 when you can")


def test_a_belief_opens_an_explanation_only_when_it_is_held_or_asked_about() -> None:
    # "sft或者pt用bf16还是fp16好呢？" (QwenLM/Qwen#776) touched the halving belief and opened "不会减半".
    rule = next(m for m in RULES if m.key == "mixed_precision_halves")
    which = _results(
        "请教一下，sft 用 bf16 还是 fp16 好呢？", "explain", [rule.card_id], lang="zh", misconceptions=[rule]
    )
    assert not verdict(which).startswith("**不会减半")
    about_memory = "训练时用 bf16 还是 fp16？混合精度能省一半显存吧，哪个更好？"
    r = _results(about_memory, "explain", [rule.card_id], lang="zh", misconceptions=[rule])
    assert verdict(r).startswith("**不会减半")
    held = _results("bf16 vs fp16?", "explain", [rule.card_id], misconceptions=[rule], held=frozenset({rule.key}))
    assert verdict(held).startswith("**Not by half.")


def test_a_yes_no_question_about_the_belief_keeps_its_verdict(bot_without_retrieval: Any) -> None:
    a = bot_without_retrieval.ask("混合精度训练会让显存减半吗？")
    assert a.act == "yes_no" and a.first_screen.startswith("**不会减半")


# ---- the bench -------------------------------------------------------------------------------------
def test_openings_diff_compares_first_sentences() -> None:
    assert first_sentence("**No. One buffer.** More text") == "No."
    assert first_sentence("**不会。梯度累积只有一份**") == "不会。"
    old = {"q": {"lang": "en", "act": "explain", "got_act": "explain", "first_screen": "**No.** x"}}
    new = {"q": {"lang": "en", "act": "explain", "got_act": "explain", "first_screen": "**Use bf16.** x"}}
    assert [d["id"] for d in changed(old, new)] == ["q"] and changed(old, old) == []


def test_a_fit_question_without_a_figure_shows_a_breakdown_only_from_a_card_about_memory() -> None:
    # "how to train llama2-7b on an A100 80G?" names no method: what is needed, then what memory is made of — from a
    # card whose title says so, never nn.DataParallel's GPU-0 card, and never a colon with nothing after it
    text = "How do I train llama2-7b on a single A100 80G? How much memory will it take?"
    dp = verdict(_results(text, "fit", ["dataparallel-single-process-trainer"]))
    assert dp.startswith("**How much memory it needs depends on") and dp.endswith(
        "Tell me: the method; precision; micro batch; sequence length.**"
    ), dp
    # a method's own breakdown ("Where LoRA memory goes") is about a setup the message does not state (stop 49: LOcc
    # #7 asked about batch 8 and got QLoRA's); the general card's is shown
    lora = verdict(_results(text, "fit", ["dataparallel-single-process-trainer", "lora-memory-breakdown"]))
    assert "Until then" not in lora and "LoRA freezes" not in lora, lora
    general = verdict(
        _results(
            text, "fit", ["dataparallel-single-process-trainer", "lora-memory-breakdown", "oom-memory-budget-breakdown"]
        )
    )
    assert "Until then, this is what the memory is made of:**" in general and "LoRA freezes" not in general, general
    stated = verdict(_results(text + " With LoRA.", "fit", ["lora-memory-breakdown"]))
    assert "LoRA" in stated, stated
