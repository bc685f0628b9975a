"""ret11 (issue #11): cards about one stack or several machines are not cited for messages about another setup.

Message shapes from the blind-mined dev files (ho*.yaml): a single-machine ``torchrun --nnodes 1`` full pre-training
that runs out of memory, a pre-0.6 LLaMA-Factory command (``src/train_bash.py --finetuning_type lora``) that never
names LLaMA-Factory, a plain HF Trainer script.
"""

from __future__ import annotations

import pytest

from rag.cards import load_cards
from rag.citing import answers_another_setup, node_count_conflict, title_stack_conflict
from rag.opening import SEVERAL_NODES, stacks_named
from tests.message_reading import read_message

CARDS = {c.id: c for c in load_cards()}

ONE_MACHINE_OOM = (
    "全量预训练 CUDA OOM\n我在做13b的全量继续预训练，资源是4*a100 80G，命令如下：\n"
    "torchrun --nnodes 1 --nproc_per_node 4 run_clm_pt.py --deepspeed ds_zero2.json "
    "--per_device_train_batch_size 1 --gradient_accumulation_steps 1 --fp16 --block_size 512\n"
    "torch.cuda.OutOfMemoryError: CUDA out of memory."
)
OLD_LLAMAFACTORY = (
    "基于Qwen-7B做pt，loss一直不下降，请问是什么原因？\n"
    "CUDA_VISIBLE_DEVICES=0 python src/train_bash.py --stage pt --model_name_or_path Qwen-7B --do_train "
    "--finetuning_type lora --per_device_train_batch_size 4 --gradient_accumulation_steps 4 --fp16"
)
PLAIN_TRAINER = (
    "I fine-tune with the transformers Trainer, per_device_train_batch_size=2 and gradient_accumulation_steps=8 on "
    "4 GPUs. What is my effective batch size?"
)
TWO_MACHINES = "两台8卡机器用 llamafactory-cli train 多机训练，第二台机器的 NODE_RANK 怎么设？"


@pytest.mark.parametrize(
    "text",
    [
        "python src/train_bash.py --stage sft --finetuning_type lora",
        "finetuning_type: full\nstage: sft",
        "CUDA_VISIBLE_DEVICES=0 python src/train_sft.py --do_train",
    ],
)
def test_llamafactorys_own_arguments_and_old_scripts_name_it(text: str) -> None:
    assert "llamafactory" in stacks_named(text)


@pytest.mark.parametrize("text", ["python train.py --do_train", "full fine-tuning type", "src/train.py"])
def test_other_scripts_do_not_name_llamafactory(text: str) -> None:
    assert "llamafactory" not in stacks_named(text)


@pytest.mark.parametrize(
    "text",
    [
        "两台机器训练",
        "多机多卡",
        "2 nodes with 8 GPUs",
        "torchrun --nnodes 2 --node_rank 0",
        "--nnodes=$NNODES",
        "MASTER_ADDR=10.0.0.1",
        "num_machines: 2",
        "multi-node training hangs",
    ],
)
def test_several_machines_are_named(text: str) -> None:
    assert SEVERAL_NODES.search(text)


@pytest.mark.parametrize(
    "text", ["torchrun --nnodes 1 --nproc_per_node 4 train.py", "--nnodes=1", "8 GPUs on one server", "单机8卡"]
)
def test_one_machine_is_not_several(text: str) -> None:
    assert not SEVERAL_NODES.search(text)


def test_the_multi_node_card_is_not_cited_for_a_one_machine_oom() -> None:
    asked, setup = read_message(ONE_MACHINE_OOM)
    card = CARDS["llamafactory-multi-node-launch"]
    assert node_count_conflict(card, asked)
    assert answers_another_setup(card, asked, setup)


def test_the_multi_node_card_answers_a_two_machine_question() -> None:
    asked, setup = read_message(TWO_MACHINES)
    assert answers_another_setup(CARDS["llamafactory-multi-node-launch"], asked, setup) == ""


def test_a_llamafactory_card_is_not_cited_for_a_plain_trainer_script() -> None:
    asked, setup = read_message(PLAIN_TRAINER)
    assert {"hf-trainer", "accelerate"} <= set(asked.stacks)
    assert title_stack_conflict(CARDS["llamafactory-batch-settings"], asked)
    # The HF Trainer's own card still answers it.
    assert answers_another_setup(CARDS["hf-trainer-step-counts-optimizer-updates"], asked, setup) == ""


def test_an_unnamed_llamafactory_run_keeps_the_llamafactory_card() -> None:
    asked, setup = read_message(OLD_LLAMAFACTORY)
    assert "llamafactory" in asked.stacks
    assert title_stack_conflict(CARDS["llamafactory-batch-settings"], asked) == ""
    # A card about the stack LLaMA-Factory is built on answers a LLaMA-Factory user.
    assert title_stack_conflict(CARDS["hf-trainer-step-counts-optimizer-updates"], asked) == ""


def test_a_message_that_names_no_stack_keeps_the_general_cards_but_not_one_stacks_own() -> None:
    """A card whose title is about one script family (LLaMA-Factory's batch settings) answers its users, who name it or
    paste its settings; a generic question gets the general cards (stop 29: dev hit@3 +0.009 / +0.005)."""
    asked, _ = read_message("batch size 和梯度累积怎么设？")
    assert not asked.stacks
    assert title_stack_conflict(CARDS["hf-trainer-step-counts-optimizer-updates"], asked) == ""
    assert "names no training stack" in title_stack_conflict(CARDS["llamafactory-batch-settings"], asked)
    theirs, _ = read_message(
        "per_device_train_batch_size 2, cutoff_len 4096, finetuning_type lora: batch size 和梯度累积怎么设？"
    )
    assert title_stack_conflict(CARDS["llamafactory-batch-settings"], theirs) == ""


# The OOM message of a genuine shortfall (30.35 of 31.75 GiB allocated, 0.2 GiB cached), as a V100 32 GB prints it.
SHORTFALL_OOM = (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 250.00 MiB (GPU 1; 31.75 GiB total capacity; "
    "30.35 GiB already allocated; 209.75 MiB free; 30.55 GiB reserved in total by PyTorch)"
)


@pytest.mark.parametrize(
    ("setup", "cards"),
    [
        ({"finetune": "qlora"}, ["oom-memory-budget-breakdown", "qlora-memory"]),
        ({"finetune": "lora", "num_params": 7e9}, ["oom-memory-budget-breakdown", "lora-memory-breakdown"]),
        (
            {"finetune": "full", "num_params": 13e9},
            ["oom-memory-budget-breakdown", "mixed-precision-bytes-per-param", "zero-stages-memory-savings"],
        ),
        ({}, ["oom-memory-budget-breakdown", "zero-stages-memory-savings"]),
    ],
)
def test_a_shortfall_cites_what_the_runs_model_states_are_made_of(setup: dict, cards: list[str]) -> None:
    from calculators.diagnose import oom

    (artifact,) = oom.read(SHORTFALL_OOM)
    cause = next(c for c in oom.causes(artifact, setup) if c.id == "oom.model_states")
    assert cause.card_ids == cards
    assert all(cid in CARDS for cid in cause.card_ids)
    # The GA myth is corrected only when the message holds it (rag.intents), not with every shortfall.
    assert "myth-lower-ga-saves-memory" not in cause.card_ids


def test_the_full_fine_tune_card_is_not_cited_for_a_lora_run() -> None:
    from rag.citing import card_methods, method_conflict

    full = CARDS["oom-7b-full-finetune-24gb"]
    assert card_methods(full) == {"full"}
    _, lora = read_message(
        "4090 24G 用 LoRA 微调 llama 7B，--finetuning_type lora，per_device_train_batch_size 4 还是 OOM"
    )
    assert lora.get("finetune") == "lora"
    assert method_conflict(full, lora)
    _, whole = read_message("单张 3090 全量微调 7B，--finetuning_type full，batch 1 也 OOM")
    assert whole.get("finetune") == "full"
    assert not method_conflict(full, whole)
    # A title that compares LoRA with a full fine-tune is the LoRA card, as before.
    assert card_methods(CARDS["lora-training-speed-vs-full-finetune"]) == {"lora"}


def test_the_tiny_batch_card_is_not_cited_when_the_run_is_not_called_tiny() -> None:
    # Same shape as ChatGLM2-6B #219 (micro 10 × GA 16, a question about the log's epoch): the retriever ranks the
    # tiny-batch card first; it is not cited at all, while a message that says both are small still opens with it.
    from rag import Assistant
    from tests.test_engine_act2_units import _FixedRetriever

    ranked = [CARDS["small-micro-batch-and-small-ga"], CARDS["hf-trainer-step-counts-optimizer-updates"]]
    bot = Assistant(cards=list(CARDS.values()), retriever=_FixedRetriever(ranked))
    ans = bot.ask(
        "我的 per_device_train_batch_size 是 10，gradient_accumulation_steps 是 16，日志里一开始 epoch 就到 1 了。"
        "这里的 epoch 具体是指什么？"
    )
    assert "small-micro-batch-and-small-ga" not in [s.card_id for s in ans.sources]
    tiny = bot.ask("micro batch 只有 1，累积也只有 1，训练出来效果会不会很差")
    assert tiny.sources[0].card_id == "small-micro-batch-and-small-ga"


def test_small_and_batch_must_meet_in_one_sentence() -> None:
    from rag.intents import detect_intents

    # An issue template (LLaDA fine-tune OOM shape): a small dataset, then the batch and GA fields on their own lines.
    template = (
        "I am fine-tuning an 8B model on a small custom dataset, but I get CUDA OOM.\n"
        "Micro batch size: 2 per device\nGradient accumulation: 4\nReduced batch size (no effect)"
    )
    assert not detect_intents(template).small_batch
    assert detect_intents("batch size 很小，梯度累积也只有 1，效果会差吗").small_batch
    assert detect_intents("Both my micro batch is small and GA is 1. Is that bad?").small_batch


def test_the_evaluation_oom_card_needs_a_message_that_names_evaluation() -> None:
    from rag.citing import phase_conflict

    card = CARDS["mem-eval-oom-accumulated-logits"]
    training, _ = read_message("用 4090 做 LoRA 微调，训练到第 3 步就 CUDA out of memory，batch 已经是 1 了")
    assert phase_conflict(card, training)
    for text in (
        "训练正常，一到评估阶段就显存溢出",
        "Training runs fine but it OOMs when evaluation starts",
        "--do_eval --per_device_eval_batch_size 8 ... CUDA out of memory",
    ):
        asked, _ = read_message(text)
        assert phase_conflict(card, asked) == "", text
    # Cards about training are not touched.
    assert phase_conflict(CARDS["oom-memory-budget-breakdown"], training) == ""


def test_openrlhf_is_named_by_its_name_or_its_own_batch_flags() -> None:
    """OpenRLHF's batch card is for OpenRLHF runs: named, or pasted with its per-GPU flags (micro_train_batch_size,
    micro_rollout_batch_size), not for any RL batch question."""
    generic, _ = read_message("PPO 训练时 batch size 应该怎么设？显存不够")
    assert "names no training stack" in title_stack_conflict(CARDS["openrlhf-ppo-batch-sizes"], generic)
    flags, _ = read_message(
        "--micro_train_batch_size 2 --train_batch_size 128 --micro_rollout_batch_size 4, how many updates?"
    )
    assert "openrlhf" in flags.stacks
    assert title_stack_conflict(CARDS["openrlhf-ppo-batch-sizes"], flags) == ""


def test_a_card_about_one_error_message_is_cited_only_when_the_message_quotes_it() -> None:
    """'"FlashAttention only support fp16 and bf16 data type": …' answers users who paste that error, not every fp16
    question; four consecutive words of the error in the message (any case, any punctuation) are enough."""
    from rag.citing import error_title_conflict

    card = CARDS["flash-attention-fp16-bf16-only"]
    general, _ = read_message("fp16 和 bf16 训练哪个更好？我的卡是 A100")
    assert error_title_conflict(card, general)
    pasted, _ = read_message("训练报错 RuntimeError: FlashAttention only support fp16 and bf16 data type，怎么办？")
    assert error_title_conflict(card, pasted) == ""
    assert error_title_conflict(CARDS["zero-stages-memory-savings"], general) == ""  # no error in its title
