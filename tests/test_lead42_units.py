"""Answers changed in stop 42, each from a dev question of its class (fast unit tier)."""

from __future__ import annotations

from rag.compose import _grpo_generations, _observed_steps
from rag.slots import extract_slots


def _steps(dataset: int, observed: int, total: int, epochs: float = 1) -> dict[str, float]:
    return {
        "dataset_size": dataset,
        "num_train_epochs": epochs,
        "observed_steps": observed,
        "samples_per_observed_step": round(dataset * epochs / observed, 1),
        "train_batch_size": total,
    }


def test_grpo_steps_give_the_completions_per_prompt():
    # TRL #3442: GRPOConfig, 4 GPUs x 1 x GA 1, 1,283 prompts, "Total optimization steps = 1,283"
    res = _steps(1283, 1283, 4)
    en = _observed_steps(res, "en", grpo=True)
    assert "4 ÷ 1 = 4 completions per prompt" in en and "num_generations = 4." in en
    assert "num_generations = 4" in _observed_steps(res, "zh", grpo=True)
    # the same numbers outside GRPO get the usual list of causes, not a GRPO verdict
    assert "num_generations = 4" not in _observed_steps(res, "en", grpo=False)


def test_grpo_factor_only_when_whole():
    assert _grpo_generations(1.0, 8) == 8
    assert _grpo_generations(2.0, 16) == 8
    assert _grpo_generations(1.5, 4) is None  # 2.67: no whole number of completions
    assert _grpo_generations(4.0, 4) is None  # steps as the settings give: nothing to explain
    assert _grpo_generations(8.0, 4) is None  # more prompts per step than the batch: not repetition


# ---- readers, from blind17's contradictions (now dev) ------------------------------------------------------------
def test_unsloth_full_finetuning_false_is_no_full_fine_tune():
    # Unsloth #3942: FastModel.from_pretrained(load_in_4bit = True, full_finetuning = False)
    s = extract_slots(
        "model, tokenizer = FastModel.from_pretrained(\n    load_in_4bit = True,\n    full_finetuning = False,\n)"
    )
    assert (s.finetune, s.quantization) == ("qlora", "int4")
    assert extract_slots("full_finetuning = True").finetune == "full"
    assert extract_slots("full finetuning of llama").finetune == "full"


def test_a_list_of_supported_families_is_no_model():
    # TRL #962: "it only works on GPT, BERT and T5" quotes accelerate's Megatron-LM page; the user trains ~100B
    s = extract_slots("I am using TRL to train LLM (~100B) models. But it only works on GPT, BERT and T5.")
    assert (s.model, s.model_text, s.num_params) == (None, None, 100e9)
    assert extract_slots("I fine-tune BERT and T5").model == "bert-base"  # two named: still the user's
    assert extract_slots("I train qwen-7b; it supports llama, qwen and chatglm").model == "qwen-7b"  # Qwen (v1) 7B


def test_a_data_set_named_after_a_family_is_no_model():
    # ChatGLM3 #767: "下载alpaca数据集 … 原始的alpaca还是…"
    assert (
        extract_slots("1.下载alpaca数据集并整理。数据集是使用原始的alpaca还是更改过格式的alpaca？").model_text is None
    )
    assert extract_slots("fine-tune llama on the alpaca dataset").model_text == "llama"
    assert extract_slots("Chinese-Alpaca-2-7B 训练").num_params == 7e9


def test_the_length_that_runs_before_going_longer():
    # TRL #962: "extend the sequence length from 4k to even longer, it will cause OOM"
    assert extract_slots("When I want to extend the sequence length from 4k to even longer, it OOMs").seq_len == 4096
    assert extract_slots("increase max_seq_len from 2048 to 8192").seq_len == 8192


def test_nodes_with_cards_sized_before_their_name():
    # torchtune #863: "2 nodes with 4x 80GB A100"
    s = extract_slots("I have 2 nodes with 4x 80GB A100, and currently used accelerate")
    assert (s.world_size, s.num_nodes, s.gpu_memory_gb) == (8, 2, 80)


def test_a_size_after_the_product_sign_is_no_count():
    # Monkey #49: "8卡a100*40G"
    s = extract_slots("8卡a100*40G")
    assert (s.world_size, s.gpu, s.gpu_memory_gb) == (8, "a100-40gb", 40)
    assert extract_slots("A100*8").world_size == 8


def test_a_chinese_count_after_a_list_number():
    # ChatGLM3 #767: "3.四卡分布训练loss为0"
    assert extract_slots("单卡显存为40g：\n3.四卡分布训练loss为0").world_size == 4


def test_flash_attention_that_failed_to_import_is_off():
    # Qwen #1002: the model's loader tries the import and warns that it failed
    assert extract_slots("Warning: import flash_attn fail, please install FlashAttention").flash_attention is False
    assert extract_slots("ModuleNotFoundError: No module named 'flash_attn'").flash_attention is False
    assert extract_slots("Try importing flash-attention for faster inference...").flash_attention is None
    assert extract_slots("I use flash attention").flash_attention is True


def test_per_card_memory_as_a_range_or_plus_is_a_reading():
    # Qwen #887: "4台8卡80G，每张显存60-70G … Baichuan2-13B … 每张显存是50G+"
    s = extract_slots("4台8卡80G，每张显存60-70G。")
    assert (s.world_size, s.gpu_memory_gb, s.observed_memory_gb) == (32, 80, 70)
    s = extract_slots("每张显存是50G+")
    assert (s.gpu_memory_gb, s.observed_memory_gb) == (None, 50)
    assert extract_slots("每张显存80G").gpu_memory_gb == 80


def test_a_size_written_with_a_hyphen_before_model():
    # accelerate #1515: "i can load and train a 65-b model on a 4*A100 machine"
    s = extract_slots("i can load and train a 65-b model on a 4*A100 machine")
    assert (s.num_params, s.world_size) == (65e9, 4)


def test_a_transformers_class_in_a_log_is_not_the_model_named():
    # Unsloth #1801: the title quotes "LlamaForCausalLM does not accept …"; the user fine-tunes unsloth/phi-4
    s = extract_slots(
        "VRAM spikes after LlamaForCausalLM does not accept num_items_in_batch. I fine-tune unsloth/phi-4"
    )
    assert s.model_text == "phi-4"
    assert extract_slots("LlamaForCausalLM OOM").model_text == "Llama"  # the only name there is


def test_one_assumed_value_is_said_in_the_singular():
    # DeepSpeed #6679's answer read "The sequence length are values I assumed"
    from rag import Assistant

    a = Assistant().ask(
        "I fine-tune chatglm3-6b with LoRA in fp16, micro batch 1, on one 3090 and get CUDA out of memory."
    )
    assert "The sequence length is a value I assumed; yours is probably larger" in a.first_screen


def test_an_effect_asked_about_something_else_is_no_tiny_batch_question():
    # LLaMA-Factory #6428: micro 1 and GA 1 in the command, "NPU健康状态是否影响训练" asks about the NPUs
    from rag.intents import tiny_batch_question

    assert not tiny_batch_question(
        "Ascend NPU 910B3采用deepspeed引擎训练，Q1:未调用NPU，Q2:NPU健康状态是否影响训练。", 1, 1
    )
    assert not tiny_batch_question("Yes , i will use lora as PEFT ,is it ok for lora", 1, 1)
    assert tiny_batch_question("batch size 1 and GA 1, is that bad for quality?", 1, 1)
