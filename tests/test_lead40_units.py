"""Readers changed in stop 40, each from a dev question of its class (fast unit tier)."""

from __future__ import annotations

import re

from rag.acts import asked_sentences, rule_act
from rag.evidence import symptom_family
from rag.intents import POOL, detect_misconceptions
from rag.opening import read_asked
from rag.parts import prose_of, split_message

# GLM-4 #468 (dev): the issue form's environment printout ends in filled-in "是否…: 支持" lines.
GLM4_FORM = (
    "lora 微调，两张v100 显卡，单卡16G内存，微调一会loss 就一直为0 了\n\n"
    "### System Info / 系統信息\n\n"
    "CUDA Version: 12.1\n"
    "是否支持BF16数字格式: 支持\n"
    "当前显卡型号: Tesla V100-PCIE-16GB\n"
    "是否支持TensorCore: 支持\n\n"
    "### Reproduction / 复现过程\n\n"
    "官方lora 微调脚本\n"
    "export CUDA_VISIBLE_DEVICES=0,1\n"
    "nohup torchrun --standalone --nnodes=1 --nproc_per_node=2 finetune.py data/ glm-4-9b-chat/ configs/lora.yaml &\n"
)


def test_a_filled_in_form_line_asks_nothing():
    parts = split_message(GLM4_FORM)
    assert asked_sentences(prose_of(parts)) == []
    assert rule_act(parts) == "diagnose"
    # an open form question still asks
    assert asked_sentences("是否支持多卡训练？") == ["是否支持多卡训练？"]


def test_a_config_key_or_a_resource_pool_is_no_pooled_memory_belief():
    for text in ("combine: True", "self.resource_pool_manager.create_resource_pool()", "data_root=/data/x_combined"):
        assert not re.search(POOL, text, re.I), text
    for text in ("can I pool the memory of 2 GPUs?", "the combined VRAM of 4 cards", "is GPU memory pooled?"):
        assert re.search(POOL, text, re.I), text
    held = detect_misconceptions("两张v100 显卡，单卡16G内存\ncombine: True\nmax_input_length: 8192")
    assert "more_gpus_pool_memory" not in {m.key for m in held}
    # GLM-4's environment printout: one card's total memory, not cards pooled
    held = detect_misconceptions("两张v100 显卡，单卡16G内存\n当前显卡的总显存: 15.7725830078125 GB")
    assert "more_gpus_pool_memory" not in {m.key for m in held}
    assert re.search(POOL, "4张3090总显存96G还是OOM", re.I)
    assert re.search(POOL, "单张卡的显存不够，但主机上多张卡的总显存是足够的", re.I)  # ms-swift #118 (dev)


def test_an_issue_that_asks_nothing_is_about_what_its_title_reports():
    # TRL #1962: no question at all; the title reports a loss curve, so a memory card's lead does not answer it
    text = "issue with precompute_ref_log_probs and dpo training loss stucks at 0.6931\n\nWhen using the option, ..."
    assert read_asked(text, split_message(text)).family == "loss"


def test_loss_as_a_variable_in_code_is_no_loss_symptom():
    assert symptom_family("deepspeed zero2多机训练在self.accelerator.backward(loss)卡住") == "speed"
    assert symptom_family("loss.backward() hangs") == "speed"
    assert symptom_family("the training loss is nan") == "loss"
    assert symptom_family("it does not reduce the loss. It stays") == "loss"


def test_a_gpu_size_is_no_memory_symptom():
    assert symptom_family("Lora微调，为什么2张V100 32G显存，跟4张V100的训练速度一样？") == "speed"
    assert symptom_family("两张v100 显卡，单卡16G内存，微调一会 loss 就一直为0 了") == "loss"
    assert symptom_family("训练时显存占用了 20G，正常吗") == "memory"


def _gate(text: str, card_id: str, act: str = "diagnose") -> str:
    from rag.cards import load_cards
    from rag.citing import answers_another_setup
    from tests.message_reading import read_message

    card = next(c for c in load_cards() if c.id == card_id)
    asked, setup = read_message(text)
    return answers_another_setup(card, asked, setup, act)  # type: ignore[arg-type]


# LLaMA-Factory #2958 (dev): a ZeRO-2 run on two nodes hangs in backward.
ZERO2_HANG = (
    "deepspeed zero2多机训练在self.accelerator.backward(loss)卡住\n\n"
    "```json\n"
    '{"zero_optimization": {"stage": 2, "overlap_comm": false}, "train_micro_batch_size_per_gpu": "auto"}\n'
    "```\n"
)


def test_a_zero3_card_does_not_answer_a_run_that_states_another_stage():
    assert "ZeRO-3" in _gate(ZERO2_HANG, "zero3-small-model-overhead")
    assert "ZeRO-3" in _gate(ZERO2_HANG, "zero3-slow-training-and-generation")
    assert _gate(ZERO2_HANG, "hw-nccl-timeout-watchdog") == ""
    # the stages as a choice stay, and a message that names ZeRO-3 anywhere keeps the ZeRO-3 cards
    assert "ZeRO-3" not in _gate(ZERO2_HANG, "lora-zero-stage-choice")
    assert _gate(ZERO2_HANG.replace("卡住", "卡住，换成 zero3 也一样"), "zero3-small-model-overhead") == ""


def test_a_memory_card_does_not_explain_a_slowdown_or_a_hang():
    slow = "Lora微调，为什么2张V100 32G显存，跟4张V100的训练速度一样？"
    assert "memory" in _gate(slow, "lora-memory-breakdown")
    assert _gate(slow, "lora-training-speed-vs-full-finetune") == ""  # speaks of both
    assert _gate(slow, "gpu-count-changes-batch-steps-lr") == ""  # neither: stays
    assert _gate(slow, "lora-memory-breakdown", act="explain") == ""  # only a diagnosis is gated


# axolotl #1717 (dev): Accelerate prints the defaults it used; its advice line is no setting.
ACCELERATE_DEFAULTS = (
    "accelerate launch -m axolotl.cli.train lora-sft.yml\n"
    "The following values were not passed to `accelerate launch` and had defaults used instead:\n"
    "        `--num_processes` was set to a value of `2`\n"
    "                More than one GPU was found, enabling multi-GPU training.\n"
    "                If this was unintended please pass in `--num_processes=1`.\n"
    "        `--num_machines` was set to a value of `1`\n"
    "        `--mixed_precision` was set to a value of `'no'`\n"
    "        `--dynamo_backend` was set to a value of `'no'`\n"
)


def test_accelerates_printout_of_defaults_gives_the_process_count_not_its_advice():
    from rag.slots import extract_slots

    slots = extract_slots(ACCELERATE_DEFAULTS)
    assert slots.world_size == 2
    assert slots.num_nodes == 1
    # the launcher's mixed_precision default is not the run's precision (the Trainer sets its own)
    assert slots.precision is None
    assert extract_slots("accelerate launch --mixed_precision no train.py").precision == "fp32"


def test_trls_precompute_is_no_recompute():
    from rag.slots import extract_slots

    assert (
        extract_slots("When using the `precompute_ref_log_probs=True` option", prose=True).gradient_checkpointing
        is None
    )
    assert extract_slots("--recompute-activations").gradient_checkpointing == "full"


def test_llama_chinese_load_in_bits_and_a_context_written_as_shangwen():
    from rag.slots import extract_slots

    assert extract_slots("deepspeed finetune_clm_lora.py --load_in_bits 4 --lora_r 8").quantization == "int4"
    assert extract_slots("8*A100只能微调2k上文", prose=True).seq_len == 2048
    assert extract_slots("如上文所述，显存不够", prose=True).seq_len is None


def test_a_full_fine_tune_the_user_does_not_do_is_no_method():
    from rag.slots import extract_slots

    # LLaMA-Factory #352 (dev): "如果不是全参微调应该使用那个微调指令"
    assert extract_slots("请问一下如果不是全参微调应该使用那个微调指令避免爆显存?", prose=True).finetune is None
    assert extract_slots("instead of full fine-tuning I use lora", prose=True).finetune == "lora"
    assert extract_slots("关于全参微调的问题", prose=True).finetune == "full"


def test_a_card_about_continued_pretraining_or_multi_node_counts_needs_a_message_that_names_it():
    # LLaMA-Factory #4225 (dev): LoRA 增量预训练; a LoRA OOM on a 预训练模型 is no pretraining run
    assert _gate("Lora方式对Qwen1.5-7B进行增量预训练，loss值下降幅度很小", "lora-continued-pretraining-loss-flat") == ""
    assert "pretraining" in _gate("用 LoRA 微调预训练模型 Qwen-7B，显存不够", "lora-continued-pretraining-loss-flat")
    # open-r1 #219 (dev): "How to set num_processes if i want to train on multi node"
    assert (
        _gate("How to set num_processes if i want to train on multi node", "accelerate-multi-node-num-processes") == ""
    )
    assert "launch counts" in _gate(
        "deepspeed --hostfile hostfile 两台机器训练卡住", "accelerate-multi-node-num-processes"
    )
