"""cite14: a card whose title's subject is a sharding framework (FSDP, DeepSpeed / one ZeRO stage) is not cited for a
message that never names it, its config keys or a stack that runs on it (DeepSpeed cards still may explain a
diagnosis: many scripts launch DeepSpeed unnamed); the card on GPUs of different models is cited only for a message
that names two models or says they differ. Message shapes from the dev set's misses (a MiniCPM-V LoRA run on V100s,
an OpenRLHF batch question, a verl run)."""

from __future__ import annotations

import pytest

from rag.cards import load_cards
from rag.citing import answers_another_setup, mixed_gpu_conflict, sharding_conflict
from rag.opening import names_mixed_gpus
from tests.message_reading import read_message

CARDS = {c.id: c for c in load_cards()}


# a LoRA run on four V100s that names no sharding framework (the shape of the MiniCPM-V question)
UNNAMED = "Lora 微调 minicpm-v，单机多卡 V100，4卡都报 OOM。batch_size=1，gradient_accumulation_steps调大，不起作用，什么原因？"


def test_an_fsdp_card_is_not_cited_for_a_run_that_never_names_fsdp_in_any_act() -> None:
    asked, setup = read_message(UNNAMED)
    card = CARDS["fsdp-ga-no-sync-memory"]
    for act in ("diagnose", "configure", "explain"):
        assert sharding_conflict(card, asked, act)
        assert answers_another_setup(card, asked, setup, act)


@pytest.mark.parametrize(
    "text",
    [
        "FSDP training with GA=2 OOMs while GA=1 fits, why?",
        "用 accelerate 的 fully_shard 训练，梯度累积后显存变大",
        # verl shards with FSDP by default
        "verl PPO: actor_rollout_ref.actor.ppo_mini_batch_size=16, memory grows with accumulation",
        # the sharded checkpoints it writes: verl's FSDP checkpoint manager, PyTorch DCP
        "the actor directory contains many shards like model_world_size_8_rank_0.pt, how to convert them?",
        "my checkpoint folder only has __0_0.distcp files",
    ],
)
def test_an_fsdp_card_answers_a_message_that_names_fsdp_or_a_stack_on_it(text: str) -> None:
    asked, _ = read_message(text)
    assert "fsdp" in asked.sharding
    assert not sharding_conflict(CARDS["fsdp-ga-no-sync-memory"], asked, "diagnose")


def test_a_deepspeed_card_is_held_to_the_framework_outside_diagnoses_only() -> None:
    asked, _ = read_message(UNNAMED)
    card = CARDS["deepspeed-hf-auto-values"]
    assert sharding_conflict(card, asked, "configure")
    assert sharding_conflict(CARDS["zero3-load-time-memory-peak"], asked, "explain")
    # a diagnosis may be of a script that launches DeepSpeed unnamed (a tiny saved model, a hang)
    assert not sharding_conflict(CARDS["zero3-saved-weights-empty"], asked, "diagnose")


@pytest.mark.parametrize(
    "text",
    [
        "How should I set train_micro_batch_size_per_gpu and gradient_accumulation_steps in ds_config.json?",
        "What is the difference between train_batch_size and micro_train_batch_size in OpenRLHF?",
        "用 ZeRO-3 训练时 batch 怎么设？",
        "bash finetune_lora_ds.sh 的 batch 该怎么设",
    ],
)
def test_a_deepspeed_card_answers_a_message_that_names_deepspeed_its_keys_or_a_stack_on_it(text: str) -> None:
    asked, _ = read_message(text)
    assert "deepspeed" in asked.sharding
    assert not sharding_conflict(CARDS["deepspeed-batch-derivation"], asked, "configure")


def test_zero_as_a_word_or_the_trainer_batch_size_does_not_name_deepspeed() -> None:
    asked, _ = read_message(
        "loss goes to zero after optimizer.zero_grad(); per_device_train_batch_size 8, what is wrong?"
    )
    assert asked.sharding == []


def test_cards_on_the_stages_as_a_remedy_or_on_a_quoted_error_are_not_held_to_the_framework() -> None:
    asked, _ = read_message(UNNAMED)
    for cid in (
        "zero-stages-memory-savings",
        "zero-offload-cpu",
        "multi-gpu-oom-single-gpu-fits",
        "lora-zero-stage-choice",
    ):
        assert not sharding_conflict(CARDS[cid], asked, "fit"), cid
    quoting = [c for c in CARDS.values() if c.id.startswith("fsdp-auto-wrap")]
    assert quoting and not sharding_conflict(quoting[0], asked, "diagnose")


@pytest.mark.parametrize(
    ("text", "mixed"),
    [
        ("一张3090使用率99%，另一张4090使用率0，不参与计算", True),
        ("I have some A6000-45G and A100-40G cards, can I finetune?", True),
        ("hangs with multiple RTX 4090 GPUs, works fine when I swap in 2080tis", True),
        ("do multiple cards have to be the same or would mixing work?", True),
        ("不同型号的显卡能一起训练吗", True),
        ("8 x A100 80G full fine-tune OOM", False),
        ("4 张 V100，LoRA 训练 OOM", False),
    ],
)
def test_a_message_about_gpus_of_different_models(text: str, mixed: bool) -> None:
    assert names_mixed_gpus(text) is mixed
    asked, _ = read_message(text)
    assert bool(mixed_gpu_conflict(CARDS["hw-mixed-gpu-models"], asked)) is not mixed


class _Ranked:
    """A retriever that ranked the given cards in this order (the real ranking is tested elsewhere)."""

    def __init__(self, ids: list[str]) -> None:
        self.cards = [CARDS[i] for i in ids]

    def retrieve(self, query: str, k: int = 3) -> list[object]:
        from types import SimpleNamespace

        return [SimpleNamespace(card=c, dense_score=0.75, bm25_rank=i + 1) for i, c in enumerate(self.cards[:k])]


def test_cards_dropped_for_another_setup_leave_room_for_a_later_retrieved_card_that_answers() -> None:
    """Six retrieved cards about setups the message does not state (P-Tuning, AMD, Ascend, Windows, FSDP, GPUs of
    different models) are all dropped; the seventh, about where LoRA's memory goes, is still looked at and cited."""
    from rag import Assistant
    from rag.assistant import RETRIEVE_K

    dropped = [
        "ptuning-v2-chatglm-memory",
        "hw-amd-rocm-training",
        "fsdp-ga-no-sync-memory",
        "hw-mixed-gpu-models",
        *[c.id for c in CARDS.values() if "ascend" in c.id or "windows" in c.id][:2],
    ]
    assert len(dropped) == 6 and len(dropped) < RETRIEVE_K
    bot = Assistant(cards=list(CARDS.values()), retriever=_Ranked([*dropped, "lora-memory-breakdown"]))
    text = "LoRA fine-tuning Llama-2-7B on 4 V100 32GB GPUs, batch size 1, still CUDA out of memory. Why?"
    cited = [s.card_id for s in bot.ask(text).sources]
    assert "lora-memory-breakdown" in cited
    assert not set(dropped) & set(cited)


@pytest.mark.parametrize(
    ("cid", "text"),
    [
        ("ppo-four-models-memory", "sft 7B model_max_length=90000 24 A100 OOM，请问是配置问题吗"),
        (
            "trl-grpo-batch-counts-completions",
            "per_device_train_batch_size 4, GA 8 on 8 GPUs: what is my effective batch?",
        ),
        ("trl-dpo-batch-memory", "Full fine-tune of Llama-2-7B on 8 A100s OOMs at batch 2"),
    ],
)
def test_a_card_about_an_rl_or_preference_stage_is_not_cited_for_a_message_that_never_names_it(
    cid: str, text: str
) -> None:
    from rag.citing import stage_conflict

    asked, setup = read_message(text)
    assert stage_conflict(CARDS[cid], asked)
    assert answers_another_setup(CARDS[cid], asked, setup, "diagnose")


@pytest.mark.parametrize(
    ("cid", "text"),
    [
        ("ppo-four-models-memory", "用 ppo 训练 7B，actor 和 critic 都放不下"),
        ("ppo-four-models-memory", "RLHF with a 7B reward model runs out of memory"),
        ("trl-grpo-batch-counts-completions", "GRPOTrainer with num_generations=8: how many prompts per step?"),
        ("trl-dpo-batch-memory", "DPO 训练比 SFT 多用了很多显存"),
        ("trl-dpo-batch-memory", "training on chosen/rejected pairs doubles my memory"),
    ],
)
def test_a_stage_card_answers_a_message_that_names_its_stage(cid: str, text: str) -> None:
    from rag.citing import stage_conflict

    asked, _ = read_message(text)
    assert not stage_conflict(CARDS[cid], asked)
