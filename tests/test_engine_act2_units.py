"""Fast checks for the question act and the composed first screen (issue #10, second pass).

The messages are cut from real threads in the dev set's sources (tests/data/real_questions): each case is how
users actually write the thing a rule reads, not a sentence written to fit the rule. No embedding model: the
assistant runs with a retriever that finds nothing, so only the engine's own steps are exercised.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from calculators.memory import estimate_memory
from calculators.memory_table import memory_table
from rag import levers
from rag.acts import classify_act
from rag.assistant import Assistant
from rag.cards import load_cards
from rag.compose import card_cause, gpu_display, with_article
from rag.intents import detect_intents, detect_misconceptions, tiny_batch_question
from rag.parts import prose_of, split_message


def act(text: str, **kw: Any) -> str:
    parts = split_message(text)
    kw.setdefault("has_misconception", bool(detect_misconceptions(prose_of(parts))))
    return classify_act(parts, **kw)


# ---- the act ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,expected",
    [
        # An issue-template tag is the tracker's form, not a symptom (ColossalAI #1132).
        ("[BUG]: Relationship between `BATCH_SIZE`, `LEARNING_RATE` and GPU amount", "explain"),
        # A hyphenated Out-Of-Memory is a reported failure (LLaMA-Factory #3106).
        (
            "I have 8 GPUs with 46 GB each. However, I run into Out-Of-Memory issues when trying to train, both with "
            "single_config and FSDP. Is there any way I can fine-tune Mixtral 8x7B with LoRA on my setup?",
            "diagnose",
        ),
        # A question without a question word asks for a verdict (yolov5 #1630).
        (
            "It seems to me that gradients are accumulated and summed each accumulate step.\n\nSo if we set any "
            "batch-size smaller than 64 we will have the same result as if we were using 64?",
            "yes_no",
        ),
        # "I wonder whether …" (mosaicml/diffusion #17).
        (
            "In SD-256.yaml, the learning rate is set to 1e-4, I wonder whether the learning rate will be scaled up with "
            "the increase of GPUs.",
            "yes_no",
        ),
        # Whether a setting must change with the batch: the answer is the setting (YOLOv4-pytorch #29, LaWGPT #127).
        ("batch size=1 ,训练太慢，如果增大到16，学习率需要调整吗？", "configure"),
        ("请问一下在多卡训练的时候，batch_size和micro_batch_size需要乘相应的显卡数吗", "configure"),
        # A why about the mechanism, no symptom of the user's in it (VLM-R1 #137).
        ("请问在GRPO中，显存占用和num_generations有关吗？为什么num_generations设置的越大，显存占用越高？", "explain"),
        # "Am I right?" checks the user's hypothesis, not an observation (detectron2 #934).
        (
            "Should I scale base LR x0.5 in 1st case and x2 in 2nd case or just keep the same base lr?\n\n"
            "My hypothesis is: no with DataParallel, yes with DistributedDataParallel. Am I right?",
            "yes_no",
        ),
        # No question, a claim that the docs are wrong (hello-agents #862).
        (
            '"batch_size": 2,  # 必须能被num_generations(8)整除\n这里的注释表述似乎有误。实际应当是 effective batch size 满足整除关系。',
            "yes_no",
        ),
        # An idle GPU is a symptom (LLaMA-Factory #7439).
        ("一张3090使用率99%，使劲工作，另一张4090使用率0，不参与计算。怎么能让他们都工作呢？", "diagnose"),
        # "how to set the learning rate" stays a setting even after "any idea" (nanoT5 #34).
        (
            "If you keep the batch_size = 128 and train with 8 GPUs, the effective batch_size is 128*8 = 1024, do you have "
            "any idea how to set the learning rate in that case?",
            "configure",
        ),
    ],
)
def test_act_of_real_phrasings(text, expected):
    assert act(text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        # The rules above must not pull real diagnoses, arithmetic or settings away.
        ("我的 loss 在 GA 从 1 调到 8 之后明显上升了，为什么？", "diagnose"),
        ("8 卡，per_device_train_batch_size=4，gradient_accumulation_steps=8，全局 batch 是多少？", "batch_arithmetic"),
        ("If I set micro_train_batch_size as 2 and use 8 gpu, the final batch size will be 16?", "batch_arithmetic"),
        ("How should I set gradient_accumulation_steps for 4 GPUs?", "configure"),
        ("Does gradient accumulation increase GPU memory?", "yes_no"),
        (
            "Why does GPU memory usage increase with the number of training steps? It goes from 20G to 40G and OOMs.",
            "diagnose",
        ),
    ],
)
def test_act_rules_keep_their_neighbours(text, expected):
    assert act(text) == expected


# ---- the small-batch card does not hijack the opening -------------------------------------------
def test_a_template_tag_is_not_a_question_about_tiny_batches():
    text = "[问题/Issue] 章节11.1.5：GRPO batch_size=2 的整除关系注释有误"
    assert not tiny_batch_question(text, 2, None)
    assert tiny_batch_question("micro batch 只有 1，累积也只有 1，训练出来效果会不会很差", 1, 1)


def test_reducing_the_batch_is_not_a_small_batch_question():
    assert not detect_intents("修改batch_size对模型效果有影响吗，考虑到显存占用太大，想减小batchsize").small_batch
    assert not detect_intents("显存不够，把 batch 调小了").small_batch
    assert detect_intents("batch 太小 loss 抖动很大").small_batch
    assert detect_intents("小batch训练会不会不稳定").small_batch


# ---- a cause line is a cause ---------------------------------------------------------------------
def test_card_cause_is_the_cause_after_the_colon_never_a_topic_title():
    cards = {c.id: c for c in load_cards()}
    assert card_cause(cards["ga-first-step-memory-jump"], "en") == ".grad and optimizer states are allocated lazily"
    assert card_cause(cards["ga-first-step-memory-jump"], "zh")
    for topic in (
        "zero-stages-memory-savings",
        "effective-batch-formula",
        "myth-lower-ga-saves-memory",
        "critical-batch-size",
        "deepspeed-batch-derivation",
        "tune-micro-batch-then-ga",
    ):
        # the title alone (without a stated cause) names a topic, never a cause
        assert card_cause(cards[topic], "en", stated=False) == "" and card_cause(cards[topic], "zh", stated=False) == ""


def test_a_cause_the_card_states_opens_a_diagnosis_its_title_cannot():
    """zero-stages-memory-savings is titled by its topic; its stated cause is what a ZeRO diagnosis opens with."""
    cards = {c.id: c for c in load_cards()}
    card = cards["zero-stages-memory-savings"]
    assert card_cause(card, "en").startswith("ZeRO stages 1–3 shard model states, not activations")
    assert card_cause(card, "zh").startswith("ZeRO 1–3 阶段只切分模型状态")
    assert not card_cause(card, "en").endswith(".")
    # myth cards keep no stated cause: their lead answers a belief, not a reported symptom
    assert all(c.cause_en is None for c in cards.values() if c.id.startswith("myth-"))


def test_a_card_states_its_cause_in_both_languages_or_neither():
    from rag.cards import DEFAULT_CARDS_DIR, CardError, parse_card

    path = DEFAULT_CARDS_DIR / "zero-stages-memory-savings.md"
    text = path.read_text(encoding="utf-8")
    one_sided = "\n".join(line for line in text.splitlines() if not line.startswith("cause_zh:"))
    parse_card(text, str(path))  # both: accepted
    with pytest.raises(CardError, match="cause_zh and cause_en"):
        parse_card(one_sided, str(path))


# ---- GPU names --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "preset,shown",
    [
        ("a100-80gb", "an A100 80GB"),
        ("rtx-3090", "an RTX 3090"),
        ("v100-32gb", "a V100 32GB"),
        ("t4", "a T4"),
        ("h100-80gb", "an H100 80GB"),
        ("rtx-2080ti", "an RTX 2080 Ti"),
        ("ascend-910b", "an Ascend 910B"),
    ],
)
def test_gpu_display_names_with_articles(preset, shown):
    assert with_article(gpu_display(preset)) == shown


def test_articles_for_user_wording():
    assert (
        with_article("3090") == "a 3090"
        and with_article("A800") == "an A800"
        and with_article("Tesla V100") == "a Tesla V100"
    )


# ---- nothing fits: say so and name the nearest settings ------------------------------------------
def test_nearest_fits_lists_single_changes_that_fit():
    cfg = {
        "model": "llama-2-7b",
        "gpu": "rtx-4090",
        "finetune": "full",
        "precision": "bf16-mixed",
        "train_micro_batch_size_per_gpu": 1,
        "seq_len": 1024,
    }
    found = levers.nearest_fits(cfg, estimate_memory)
    assert found and all(len(names) == 1 and est.fits for names, est in found)
    assert ["lora"] in [names for names, _ in found]


def test_nearest_fits_is_empty_when_no_lever_helps():
    cfg = {
        "model": "llama-2-70b",
        "gpu": "rtx-3090",
        "finetune": "full",
        "precision": "bf16-mixed",
        "train_micro_batch_size_per_gpu": 1,
        "seq_len": 1024,
    }
    assert levers.nearest_fits(cfg, estimate_memory) == []


def test_memory_table_says_none_instead_of_micro_batch_zero():
    est = estimate_memory(
        {
            "model": "llama-2-70b",
            "gpu": "rtx-3090",
            "finetune": "full",
            "precision": "bf16-mixed",
            "train_micro_batch_size_per_gpu": 1,
            "seq_len": 1024,
        }
    )
    assert est.max_micro_batch == 0
    en, zh = memory_table([("x", est)], "en"), memory_table([("x", est)], "zh")
    assert "even micro batch 1 does not fit" in en and "| 0 |" not in en
    assert "micro batch 1 也放不下" in zh


@pytest.fixture(scope="module")
def bot(bot_without_retrieval: Assistant) -> Assistant:
    return bot_without_retrieval


def _words(text: str) -> float:
    return len(re.findall(r"[A-Za-z0-9.,%]+", text)) + len(re.findall(r"[\u3400-\u9fff]", text)) / 2


def test_no_fit_answer_names_the_card_as_written_and_the_way_out(bot):
    ans = bot.ask("Full fine-tune of llama-2-7b on one RTX 4090: will it fit?")
    first = ans.first_screen
    assert first.startswith("**It does not fit") and "an RTX 4090" in first and "rtx-4090" not in first
    assert "Nearest settings that fit: LoRA" in first and "GiB per GPU" in first
    assert _words(first) <= 120
    assert [c for c in ans.tool_calls if c.label == "nearest_fit" and c.result["fits"]]


def test_when_nothing_fits_the_answer_says_what_would(bot):
    ans = bot.ask("llama-2-70b 全量微调，一张 3090，放得下吗？")
    assert ans.first_screen.startswith("**放不下") and "更多 GPU" in ans.first_screen
    assert "rtx-3090" not in ans.first_screen
    assert "| 0 |" not in ans.text


def test_effective_batch_is_not_an_effect_question():
    # Lightning #5636: "… increase the effective batch size …" with batch 1 asks about step counts, not tiny-batch effects.
    text = "my batch_size is one; accumulate_grad_batches should increase the effective batch size, but I still see 1000 steps"
    assert not tiny_batch_question(text, 1, None)
    assert tiny_batch_question("Is training with batch size 1 and no accumulation a bad idea?", 1, None)


def test_english_symptom_touching_chinese_is_read():
    # LLaMA-Factory #1998: "训练…会hang，无法计算loss" — Unicode \b sees no boundary between 会 and hang.
    assert (
        act("[bug] deepspeed zero3 +lora 训练mixtral模型会hang，无法计算loss\n\n我使用zero3+lora微调会停留在以下步骤")
        == "diagnose"
    )


def test_a_smell_in_a_launch_command_alone_does_not_make_a_diagnosis():
    # VLM-R1 #197: the command has more processes than visible GPUs, but the user asks for the global batch.
    text = (
        "Question about per_device_train_batch_size and global batch size?\n"
        '```\ntorchrun --nproc_per_node="8" --num_generations 8 --per_device_train_batch_size 8 '
        "--gradient_accumulation_steps 2\n```\nIf per_device_train_batch_size represents the batch size per GPU, "
        "I would expect the effective global batch size to be 8 * 8 * 2 = 128"
    )
    assert act(text, has_diagnosis=True) == "batch_arithmetic"
    assert (
        act("training fails with this command\n```\ntorchrun --nproc_per_node 8 train.py\n```", has_diagnosis=True)
        == "diagnose"
    )


def test_parameters_not_updated_is_a_reported_failure():
    # microsoft/LoRA #120: the how-to question follows a failure the user saw.
    text = (
        "When I use gradient checkpoint with LoRA, it seems that all gradients will be 'None', so lora_A and B will "
        "not be updated. besides, turn off gradient checkpoint option, it works well.\n\nHow can I use gradient "
        "checkpoint with LoRA?"
    )
    assert act(text) == "diagnose"


class _FixedRetriever:
    """Returns the given cards in order, as a retriever that ranked them so."""

    def __init__(self, cards: list[Any]) -> None:
        self.cards = cards

    def retrieve(self, query: str, k: int = 3) -> list[Any]:
        from types import SimpleNamespace

        return [SimpleNamespace(card=c, dense_score=0.75, bm25_rank=i + 1) for i, c in enumerate(self.cards[:k])]


def test_the_tiny_batch_card_does_not_open_an_answer_about_something_else():
    # ChatGLM2-6B #219: micro 10 × GA 16 and a question about what "epoch" means in the log; a retriever that ranks the
    # tiny-batch card first must not make the answer open with "both small means …".
    cards = {c.id: c for c in load_cards()}
    ranked = [cards["small-micro-batch-and-small-ga"], cards["hf-trainer-step-counts-optimizer-updates"]]
    bot = Assistant(cards=list(cards.values()), retriever=_FixedRetriever(ranked))
    ans = bot.ask(
        "我的 per_device_train_batch_size 是 10，gradient_accumulation_steps 是 16，训练集是20k条问答对，"
        "日志里一开始 epoch 就到 1 了。所以这里的 epoch 具体是指什么？"
    )
    assert ans.sources[0].card_id == "hf-trainer-step-counts-optimizer-updates"
    tiny = bot.ask("micro batch 只有 1，累积也只有 1，训练出来效果会不会很差")
    assert tiny.sources[0].card_id == "small-micro-batch-and-small-ga"


def test_a_plural_gpu_is_named_in_the_singular(bot):
    ans = bot.ask("Full fine-tune of llama-2-7b on 8 A100s with ZeRO-2, micro batch 1: does it fit?")
    assert "A100s" not in ans.first_screen.split("_")[0] and "an A100" in ans.first_screen
