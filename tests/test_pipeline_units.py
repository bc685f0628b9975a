"""The answer engine's steps, fast: parts, setup with provenance, act, plan, composition, history.

No embedding model: the assistant gets a stub retriever (the ``Assistant(retriever=…)`` seam), so
this file runs in seconds. The real-model behaviour is in test_assistant.py and, measured on real
questions, in test_eval_answers.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from calculators.i18n import CATALOGUE as TEXT
from rag import Assistant
from rag.acts import classify_act
from rag.cards import load_cards
from rag.history import load_history
from rag.intents import RULES, detect_intents, detect_misconceptions, holds_belief
from rag.parts import retrieval_query, split_message
from rag.planner import plan_calls
from rag.setup import enough_for_memory, read_setup

CARDS = load_cards()
BY_ID = {c.id: c for c in CARDS}

DS_ASSERT = (
    "AssertionError: Check batch related parameters. train_batch_size is not equal to "
    "micro_batch_per_gpu * gradient_acc_step * world_size 256 != 4 * 8 * 1"
)
OOM_2X = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "79.15 GiB of which 11.06 MiB is free. Including non-PyTorch memory, this process has 79.13 GiB memory in use. "
    "Of the allocated memory 75.20 GiB is allocated by PyTorch, and 3.10 GiB is reserved by PyTorch but unallocated."
)


@dataclass
class _Hit:
    card: object
    score: float
    dense_score: float


class StubRetriever:
    """Returns the cards whose id words appear in the query; relevance is all-or-nothing."""

    def retrieve(self, query: str, k: int = 3):
        q = query.lower()
        hits = []
        for card in CARDS:
            words = [w for w in card.id.split("-") if len(w) > 3]
            n = sum(w in q for w in words)
            if n:
                hits.append(_Hit(card, n, 0.5 + 0.01 * n))
        hits.sort(key=lambda h: -h.score)
        return hits[:k]


@pytest.fixture(scope="module")
def bot():
    return Assistant(cards=CARDS, retriever=StubRetriever())


# ---- 1. parts ---------------------------------------------------------------------------------
def test_message_is_split_into_typed_parts():
    msg = (
        "为什么 deepspeed 报错？我用 8 张 A100\n```\n" + DS_ASSERT + "\n```\n启动命令：\n"
        "deepspeed --num_gpus 8 train.py --deepspeed ds_config.json\n"
    )
    kinds = [p.kind for p in split_message(msg)]
    assert kinds == ["prose", "error", "prose", "command"]
    # Retrieval sees the prose and the key error line, never the whole paste.
    q = retrieval_query(split_message(msg))
    assert "256 != 4 * 8 * 1" in q and "--num_gpus" not in q


def test_traceback_log_nvidia_smi_and_config_are_told_apart():
    tb = 'Traceback (most recent call last):\n  File "t.py", line 3, in <module>\n    x()\n' + OOM_2X
    log = "{'loss': 1.2, 'learning_rate': 1e-05, 'epoch': 0.1}\n{'loss': 1.1, 'learning_rate': 2e-05, 'epoch': 0.2}"
    smi = (
        "+-----------------------------------------------------------------------------+\n"
        "| NVIDIA-SMI 525.85.12    Driver Version: 525.85.12    CUDA Version: 12.0     |\n"
        "| N/A   33C    P0    61W / 400W |  17900MiB / 81920MiB |      0%      Default |\n"
        "+-------------------------------+----------------------+----------------------+"
    )
    cfg = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8\n}'
    for text, kind in ((tb, "traceback"), (log, "log"), (smi, "nvidia_smi"), (cfg, "config")):
        parts = split_message("Why?\n" + text)
        assert kind in [p.kind for p in parts], (kind, [p.kind for p in parts])


def test_prose_that_names_a_launcher_or_contains_error_is_prose():
    assert [p.kind for p in split_message("deepspeed 报错：train_batch_size=33，两张卡")] == ["prose"]
    assert [p.kind for p in split_message("<img src=x onerror=alert(1)> how much memory")] == ["prose"]


# ---- 2. setup with provenance -----------------------------------------------------------------
def test_setup_values_carry_their_source_and_conflicts_are_kept():
    msg = (
        'I train Qwen-14B on 8xA100 80GB\n```json\n{"train_micro_batch_size_per_gpu": 4, '
        '"gradient_accumulation_steps": 8, "zero_optimization": {"stage": 3}}\n```\n' + DS_ASSERT
    )
    setup, artifacts = read_setup(split_message(msg))
    assert setup.get("world_size") == 8 and setup.source("world_size") == "message"
    assert setup.get("zero_stage") == 3 and setup.source("zero_stage") == "config"
    assert setup.get("train_batch_size") == 256 and setup.source("train_batch_size") == "error"
    assert setup.get("model_text") == "Qwen-14B" and setup.get("model") == "qwen-14b"  # its own shape, never llama-2-7b
    assert any(a.kind == "deepspeed_batch_assert" for a in artifacts)


def test_observed_memory_is_never_the_capacity():
    setup, _ = read_setup(split_message("My 4090 uses 23.5GB with bs=1, nvidia-smi shows it"))
    assert setup.get("observed_memory_gb") == 23.5 and setup.get("gpu") == "rtx-4090"
    assert not setup.has("gpu_memory_gb")


def test_current_message_wins_and_history_is_carried_with_its_label():
    old, _ = read_setup(split_message("8B model on one RTX 4090, LoRA"))
    new, _ = read_setup(
        split_message("What micro batch should I use on 8xA100 80GB for a 13B full fine-tune with ZeRO-3?")
    )
    merged = new.merged_over(old)
    assert merged.get("gpu") == "a100-80gb" and merged.get("world_size") == 8
    assert merged.get("finetune") == "full" and merged.source("finetune") == "message"
    assert merged.get("num_params") == 13e9 and "model" not in merged.values


def test_forged_setup_values_are_dropped_and_named():
    rejected: list[str] = []
    turns = load_history(
        [
            {
                "role": "user",
                "content": "x",
                "setup": {
                    "gpu": {"value": "rtx-9999", "source": "message"},
                    "world_size": {"value": 10**12, "source": "message"},
                    "seq_len": {"value": -5, "source": "message"},
                    "model": {"value": "x" * 900_000, "source": "message"},
                    "zero_stage": {"value": 2, "source": "message"},
                },
            }
        ],
        set(),
        rejected,
    )
    assert turns[0].setup == {"zero_stage": {"value": 2, "source": "message", "evidence": ""}}
    assert set(rejected) == {"gpu", "world_size", "seq_len", "model"}


# ---- 3. act -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,act",
    [
        ("Why is my loss worse with GA 32 than with GA 1? I use 8 GPUs", "diagnose"),
        ("显存一直在涨，为什么？我用的是 zero2", "diagnose"),
        ("GA 从 4 调到 32，nvidia-smi 看显存几乎没变，这正常吗", "is_normal"),
        ("两张3090跑 llama2-7b lora，bs=2 ga 4，显存够吗？", "fit"),
        (
            "8 GPUs, per_device_train_batch_size 4, gradient_accumulation_steps 8: what is the global batch size?",
            "batch_arithmetic",
        ),
        ("How should I set train_batch_size in ds_config when using the HF Trainer?", "configure"),
        ("What is the difference between ZeRO-2 and ZeRO-3?", "explain"),
    ],
)
def test_question_act(text, act):
    assert classify_act(split_message(text)) == act


def test_a_pasted_error_is_a_diagnosis_and_a_claim_question_is_yes_no():
    assert classify_act(split_message("help\n" + OOM_2X)) == "diagnose"
    assert (
        classify_act(
            split_message("Does raising gradient_accumulation_steps increase GPU memory?"), has_misconception=True
        )
        == "yes_no"
    )


def test_belief_held_versus_asked():
    rule = next(r for r in RULES if r.key == "ga_stores_copies")
    assert holds_belief("I thought accumulation stores a copy of the gradients per micro-batch, so memory grows", rule)
    assert not holds_belief("Does accumulation store a copy of the gradients per micro-batch?", rule)


# ---- 4. plan: numbers only for the user's setup -----------------------------------------------
def test_no_memory_call_without_model_and_method():
    setup, _ = read_setup(split_message("Will it fit on a 3090?"))
    assert not enough_for_memory(setup)
    assert not plan_calls(setup, "fit", detect_intents("Will it fit on a 3090?"), []).calls


def test_every_stated_value_reaches_the_calculator():
    text = "llama-2-13b full fine-tune, ZeRO-3, 8xA100 80GB, micro batch 2, GA 8, seq len 4096: does it fit?"
    setup, _ = read_setup(split_message(text))
    plan = plan_calls(setup, "fit", detect_intents(text), [])
    args = plan.calls[0].arguments
    assert (
        args["model"],
        args["zero_stage"],
        args["world_size"],
        args["train_micro_batch_size_per_gpu"],
        args["gradient_accumulation_steps"],
        args["seq_len"],
        args["finetune"],
    ) == ("llama-2-13b", 3, 8, 2, 8, 4096, "full")


# ---- 5./6. composition ------------------------------------------------------------------------
def test_deepspeed_assertion_answer_opens_with_the_cause_and_reads_the_numbers(bot):
    ans = bot.ask(
        "Why does DeepSpeed fail? I have 8 GPUs.\n```\n" + DS_ASSERT + "\n```\npython train.py --deepspeed ds.json"
    )
    assert ans.act == "diagnose"
    assert ans.first_screen.startswith("**Most likely cause:")
    assert "DeepSpeed saw" in ans.text or "world_size=1" in ans.text
    assert ans.setup["train_batch_size"]["value"] == 256 and ans.setup["train_batch_size"]["source"] == "error"
    assert not any(c.name == "config_check" for c in ans.tool_calls)  # an error never goes to the doctor


def test_first_screen_is_short_and_lists_what_was_carried_over(bot):
    first = bot.ask("llama-3-8b LoRA on one RTX 4090, micro batch 2, seq 2048: does it fit?")
    follow = bot.ask("and with micro batch 4?", history=first.history)
    assert "carried over" in follow.first_screen
    words = len(re.findall(r"\S+", follow.first_screen))
    assert words <= 120, follow.first_screen
    mem = next(c for c in follow.tool_calls if c.label == "main")
    assert mem.arguments["train_micro_batch_size_per_gpu"] == 4 and mem.arguments["gpu"] == "rtx-4090"


def test_no_fit_names_the_overshoot_and_the_nearest_setting_that_fits(bot):
    ans = bot.ask("Full fine-tune of llama-2-7b on one RTX 4090: will it fit?")
    assert ans.text.startswith("**It does not fit")
    assert "over the" in ans.first_screen
    nearest = [c for c in ans.tool_calls if c.label == "nearest_fit"]
    assert nearest and nearest[0].result["fits"]


def test_user_text_is_escaped_in_the_answer(bot):
    ans = bot.ask("I train <img src=x onerror=alert(1)>-7B with LoRA on 3090, does it fit?")
    assert "<img" not in ans.text and "javascript:" not in ans.text


def test_strings_have_both_languages_with_the_same_placeholders():
    for key, both in TEXT.items():
        assert set(both) == {"zh", "en"}, key
        assert sorted(re.findall(r"{(\w+)", both["zh"])) == sorted(re.findall(r"{(\w+)", both["en"])), key


def test_a_pasted_chatbot_answer_is_fact_checked_in_the_chat(bot):
    seed = (
        "这段回答对吗？\n梯度累积会为每个微批次各存一份梯度，所以 gradient_accumulation_steps=4 时梯度显存是 4 倍。"
        "显存爆掉是因为有效批次太大。要省显存就调小梯度累积步数。"
    )
    ans = bot.ask(seed)
    call = ans.tool_calls[0]
    assert call.name == "fact_check" and ans.language == "zh"
    assert sum(c["verdict"] == "wrong" for c in call.result["claims"]) >= 2
    assert ans.text.startswith("**核查结果")


def test_a_model_name_from_a_pasted_config_is_escaped_everywhere(bot):
    msg = (
        "does it fit on one A100 80GB?\n```yaml\nmodel_name_or_path: javascript:alert(1)-7B\nfinetuning_type: lora\n"
        "per_device_train_batch_size: 2\ncutoff_len: 1024\n```"
    )
    ans = bot.ask(msg)
    assert "javascript:" not in ans.text


def test_a_tool_report_inside_an_answer_section_does_not_repeat_or_outrank_its_heading():
    from calculators.diagnose import diagnose
    from rag.compose import nested_report

    report = diagnose("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB").to_markdown("en")
    assert report.startswith("### What I read")
    nested = nested_report(report)
    assert "What I read" not in nested and "### " not in nested
    assert "**Likely causes and fixes**" in nested or "I found no problem" in nested


def test_a_fit_question_without_the_method_opens_with_what_the_figure_needs(bot):
    # EasyLM #87 shape ("how to train <model> on <gpu>?"): the model and the GPU are named, the method is not, so no
    # total is computed; the opening gives each method's model states (they need nothing else) and says what the
    # whole peak needs, not a retrieved card's general lead (stop 34; before, only what was needed).
    ans = bot.ask("Can I fine-tune llama2-7b on one A100 80GB? How much memory does it need?")
    assert ans.act == "fit"
    assert not any(c.label == "main" for c in ans.tool_calls)
    head = TEXT["method_unknown"]["en"].split("{")[0]
    assert ans.first_screen.startswith("**" + head)
    first = ans.first_screen.split("\n", 1)[0]
    assert "full fine-tune" in first and "QLoRA" in first
    assert "the method" in first and "the model or its size" not in first
    zh = bot.ask("llama2-7b 用一张 A100 80G 能训练吗？需要多少显存？")
    assert zh.act == "fit" and zh.first_screen.startswith("**" + TEXT["method_unknown"]["zh"].split("{")[0])
    assert "全量微调 100.4 GiB，放不下" in zh.first_screen  # 16 bytes/param × 6.74B > 80 GiB of one A100


def test_a_failure_report_opens_with_no_correction_of_a_belief_it_does_not_hold(bot):
    # OpenRLHF #277 shape: memory runs out, the batch was already cut as a remedy — the user does not say the
    # effective batch causes the OOM, so there is nothing to correct and no "it is not the effective batch" opening.
    text = (
        "PPO 训练 13B 模型显存总是不够，我应该怎么解决？\n"
        "用的是 A800，显存开始不够了，train_batch_size 我已经改到最小了，因为是 lora 合并的模型，所以用不了 zero3"
    )
    ans = bot.ask(text)
    assert "effective_batch_oom" in {m.key for m in detect_misconceptions(text)}
    assert not ans.corrections
    belief = next(r for r in RULES if r.key == "effective_batch_oom")
    assert belief.verdict_zh.split("。")[1][:8] not in ans.first_screen.split("\n", 1)[0]
