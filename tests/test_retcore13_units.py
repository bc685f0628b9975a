"""retcore13: a card about one platform (AMD GPUs with ROCm, Ascend NPUs, Windows) is cited only for a message that
names that platform, and the RTX 40-series P2P card not for a message whose stated GPUs are all other models
(rag.citing.platform_conflict). Message shapes from the dev set: full fine-tunes on A800s that ran out of memory,
LoRA runs on 4090s, a Windows traceback."""

from __future__ import annotations

from rag.cards import load_cards
from rag.citing import answers_another_setup, platform_conflict, unnamed_adapter_conflict
from rag.opening import read_asked
from rag.parts import split_message
from rag.setup import read_setup

CARDS = {c.id: c for c in load_cards()}
AMD, ASCEND, WINDOWS, RTX40 = (
    CARDS["hw-amd-rocm-training"],
    CARDS["hw-ascend-npu-training"],
    CARDS["hw-windows-no-nccl"],
    CARDS["hw-rtx40-p2p-nccl"],
)


def _read(text: str):
    parts = split_message(text)
    setup, _ = read_setup(parts)
    return setup, read_asked(text, parts)


def test_platform_cards_need_their_platform_named() -> None:
    setup, asked = _read(
        "baichuan2-13b全参数训练，4 * A800 80G显卡，deepspeed --include localhost:4,5,6,7 报 out of memory"
    )
    assert asked.platforms == []
    for card in (AMD, ASCEND, WINDOWS):
        assert platform_conflict(card, setup, asked)
        assert answers_another_setup(card, asked, setup, "diagnose")
    # the memory cards are not about a platform
    assert platform_conflict(CARDS["zero-stages-memory-savings"], setup, asked) == ""


def test_a_platform_named_anywhere_keeps_its_card() -> None:
    setup, asked = _read("在昇腾910B上用 torch_npu 微调 Qwen2-7B，报 HCCL 错误")
    assert "ascend" in asked.platforms and platform_conflict(ASCEND, setup, asked) == ""
    assert platform_conflict(AMD, setup, asked)
    setup, asked = _read("Fine-tuning on two MI250X with ROCm 6.0 fails: torch.version.hip is set")
    assert asked.platforms == ["amd"] and platform_conflict(AMD, setup, asked) == ""
    text = 'Traceback:\n  File "C:\\Users\\me\\train.py", line 3\nRuntimeError: Distributed package doesn\'t have NCCL built in'
    setup, asked = _read(text)
    assert "windows" in asked.platforms and platform_conflict(WINDOWS, setup, asked) == ""


def test_platform_words_inside_other_words_do_not_name_it() -> None:
    # "hip" in "ownership", "amd" in "amdahl", "npu" in "input", a step count 910: no platform
    _, asked = _read("Amdahl's law and ownership of the input pipeline: at step 910 memory grows, why?")
    assert asked.platforms == []


def test_rtx40_card_needs_an_rtx40_gpu_when_gpus_are_stated() -> None:
    setup, asked = _read("8卡 A800 80G 全量微调 Qwen-14B，deepspeed zero2 一直 OOM")
    assert platform_conflict(RTX40, setup, asked)
    setup, asked = _read("4张4090 用 deepspeed 训练 LoRA，NCCL 初始化后卡住不动")
    assert platform_conflict(RTX40, setup, asked) == ""
    # no GPU stated: the card may still be about their run
    setup, asked = _read("多卡训练时 NCCL 卡住不动，设置 NCCL_P2P_DISABLE=1 之后好了，为什么？")
    assert platform_conflict(RTX40, setup, asked) == ""


def test_lora_memory_cards_do_not_explain_a_diagnosis_that_never_names_an_adapter() -> None:
    text = "OOM when finetuning Llama3.2-90B on 8xA100 80GB with trl. Why does it run out of memory?"
    setup, asked = _read(text)
    assert not asked.names_adapter
    for cid in ("lora-memory-breakdown", "lora-zero-stage-choice", "qlora-memory"):
        assert unnamed_adapter_conflict(CARDS[cid], setup, asked, "diagnose")
        # a fit or explain question about the same setup may still be weighing LoRA
        assert unnamed_adapter_conflict(CARDS[cid], setup, asked, "fit") == ""
    # a LoRA card about an error answers whoever pastes the error, method named or not
    assert unnamed_adapter_conflict(CARDS["lora-ddp-find-unused-parameters"], setup, asked, "diagnose") == ""


def test_an_adapter_named_anywhere_keeps_the_lora_memory_cards() -> None:
    for text in (
        "用 lora 微调 qwen-7b，单卡 4090 还是爆显存，为什么？",
        "4bit 量化加载 llama-13b 训练，显存还是不够，怎么回事？",
        "finetuning_type: lora\nper_device_train_batch_size: 1\n训练到一半 OOM 了",
        "from peft import get_peft_model ... CUDA out of memory, why?",
    ):
        setup, asked = _read(text)
        assert asked.names_adapter or setup.get("finetune"), text
        assert unnamed_adapter_conflict(CARDS["lora-memory-breakdown"], setup, asked, "diagnose") == "", text


def _estimate(setup_text: str, **arguments):
    from calculators import run_tool

    setup, _ = read_setup(split_message(setup_text))
    return run_tool("memory", arguments).model_dump(), arguments, setup


def test_the_largest_part_of_a_full_fine_tune_names_the_states_cards() -> None:
    from rag.estimate_card import BYTES_PER_PARAM_CARD, SHARDING_CARD, largest_part_card

    # a full fine-tune of a 13B model with AdamW: fp32 master weights and Adam moments dominate
    args = dict(model="llama-2-13b", finetune="full", precision="bf16-mixed", seq_len=512)
    result, arguments, setup = _estimate("全参数微调 13B，8 张 A800，还是 OOM", world_size=8, **args)
    assert result["gradients"] + result["optimizer_states"] > result["weights"]
    assert largest_part_card(result, arguments, setup) == SHARDING_CARD
    # one GPU and no ZeRO stage stated: what each parameter costs
    result, arguments, setup = _estimate("单卡全量微调 13B 要多少显存？", **args)
    assert largest_part_card(result, arguments, setup) == BYTES_PER_PARAM_CARD


def test_the_largest_part_of_a_lora_run_names_the_lora_card_and_activations_name_none() -> None:
    from rag.estimate_card import LORA_CARD, QLORA_CARD, largest_part_card

    args = dict(model="qwen2.5-32b", finetune="lora", precision="bf16-mixed", seq_len=512)
    result, arguments, setup = _estimate("4 张 4090 LoRA 微调 Qwen2.5-32B 显存不足", **args)
    assert result["weights"] > max(result["activations"], result["gradients"] + result["optimizer_states"])
    assert largest_part_card(result, arguments, setup) == LORA_CARD
    # a 7B LoRA run at a 32k context: activations dominate, the sizes alone name no cause
    args = dict(model="llama-2-7b", finetune="lora", precision="bf16-mixed", seq_len=32768)
    result, arguments, setup = _estimate("LoRA 7B 32k 上下文 OOM", **args)
    assert result["activations"] > result["weights"]
    assert largest_part_card(result, arguments, setup) is None
    args = dict(model="llama-2-7b", finetune="qlora", precision="bf16-mixed", seq_len=512)
    result, arguments, setup = _estimate("QLoRA 7B", **args)
    assert largest_part_card(result, arguments, setup) == QLORA_CARD
    # an estimate without its parts names nothing
    assert largest_part_card({}, arguments, setup) is None


def test_the_answer_cites_the_card_of_its_estimates_largest_part(bot_without_retrieval) -> None:
    answer = bot_without_retrieval.ask("8 张 A800 80G 全参数微调 llama-2-13b，micro batch 1，还是 OOM，为什么？")
    assert "zero-stages-memory-savings" in [s.card_id for s in answer.sources]
    answer = bot_without_retrieval.ask("使用4090*4（24G）对 Qwen2.5-32B 做 LoRA 微调（bf16），显存不足，怎么解决？")
    assert "lora-memory-breakdown" in [s.card_id for s in answer.sources]
    # no estimate (no model stated): nothing is added
    answer = bot_without_retrieval.ask("what does gradient accumulation do?")
    assert not {"zero-stages-memory-savings", "lora-memory-breakdown"} & {s.card_id for s in answer.sources}


def test_a_yes_no_question_with_an_estimate_beside_it_gets_no_estimate_card(bot_without_retrieval) -> None:
    # the planner computes their memory to show what GA does to it; the question is about GA, not about the estimate
    answer = bot_without_retrieval.ask(
        "Full fine-tuning llama-2-13b on 8 A100 80GB with micro batch 1 and GA 16: "
        "does a larger gradient_accumulation_steps increase memory?"
    )
    assert answer.act == "yes_no" and any(c.name == "memory" for c in answer.tool_calls)
    assert "zero-stages-memory-savings" not in [s.card_id for s in answer.sources]
