"""engine-fid3 (issue #10): the setup a new real message states is read the way users write it, not only in the
dev set's wordings: GPU counts glued to a model number or given per node, form factors before a capacity, LoRA
switched off, source + target lengths, and the current clause of a sentence about an earlier run.

Each case is a wording found in public threads (the dev-fid3 file holds the threads themselves)."""

from __future__ import annotations

import pytest

from rag.parts import split_message
from rag.setup import own_prose, read_setup


def _read(text: str, key: str):
    setup, _ = read_setup(split_message(text))
    return setup.get(key)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("RTX4090双卡 Baichuan2-13B-Chat微调内存不足", 2),
        ("两台机器，每台8张A100", 16),
        ("2台8卡A100", 16),
        ("GPU：4*A100", 4),
        ("dual 3090s", 2),
        ("a pair of 3090s", 2),
        ("4 x NVIDIA A100-SXM4-80GB", 4),
        ("之前用8卡跑没问题，现在换成4卡就OOM了", 4),
        ("Previously I trained on 2 GPUs fine, but now on 4 GPUs I get OOM", 4),
        # neighbours that must not move
        ("用两张A100训练，OOM了", 2),
        ("OOM\n```\ndeepspeed --include=localhost:4,5,6,7 src/train_bash.py --stage sft\n```", 4),
        ("OOM\n```\ntorchrun --nproc_per_node 4 train.py --bf16 True\n```", 4),
    ],
)
def test_gpu_count_as_users_write_it(text, expected):
    assert _read(text, "world_size") == expected


def test_earlier_run_sentence_without_a_now_clause_stays_out():
    assert _read("之前用8卡跑没问题。OOM了怎么办", "world_size") is None
    assert "8卡" not in own_prose("之前用8卡跑没问题。")
    assert "4卡" in own_prose("之前用8卡跑没问题，现在换成4卡就OOM了")


@pytest.mark.parametrize(
    "text,expected",
    [
        ("使用4*A100-SXM4-40GB训练", 40),
        ("GPU: NVIDIA A100-PCIE-40GB", 40),
        ("Tesla V100-PCIE-16GB x 2", 16),
    ],
)
def test_capacity_after_a_form_factor(text, expected):
    assert _read(text, "gpu_memory_gb") == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("```\n--use_lora False\n```", "full"),
        ("I'm doing full fine-tuning (no LoRA) of Mistral 7B", "full"),
        ("I'm fine-tuning all parameters of the model", "full"),
        ("全部参数微调", "full"),
        ("```\n--freeze_llm False --use_llm_lora 0\n```", None),  # a part's LoRA off says nothing about the rest
        ("```\n--use_lora True --lora_rank 32\n```", "lora"),
        ("Now I use LoRA and still OOM", "lora"),
        ("I have no idea why LoRA runs out of memory", "lora"),
    ],
)
def test_lora_switched_off_is_not_lora(text, expected):
    assert _read(text, "finetune") == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("```\n--max_source_length 512 \\\n--max_target_length 512 \\\n```", 1024),
        ("```\n--source_max_len 1024 --target_max_len 256\n```", 1280),
        ("```\n--max_source_length 256\n```", 256),
        ("```\n--cutoff_len 2048 --max_source_length 512 --max_target_length 512\n```", 2048),
        ("上下文 32k 训练", 32768),
    ],
)
def test_sequence_length(text, expected):
    assert _read(text, "seq_len") == expected


def test_an_issue_template_text_box_is_read_as_the_users_words():
    # https://github.com/hiyouga/LlamaFactory/issues/6755 (the report sits in LLaMA-Factory's ```text box)
    text = (
        "全参数微调32B模型OOM\n\n### System Info\n\n- PEFT version: 0.12.0\n- GPU type: NVIDIA H100 NVL\n\n"
        "### Reproduction\n\n```text\n一张H100显卡，96G显存，全参数微调Qwen-2.5-instruct 32B，使用了zero-3-offload, "
        "batch_size为1，744G CPU memory\nexitcode -9\n查看dmesg发现OOM\n请问为什么会炸memory呀？理论上应该是够的\n```\n"
    )
    parts = split_message(text)
    assert [p.kind for p in parts].count("error") == 1 and "exitcode -9" in next(
        p.text for p in parts if p.kind == "error"
    )
    setup, _ = read_setup(parts)
    for key, value in {
        "world_size": 1,
        "gpu_memory_gb": 96.0,
        "finetune": "full",
        "zero_stage": 3,
        "offload_param": True,
        "train_micro_batch_size_per_gpu": 1,
        "num_params": 32e9,
    }.items():
        assert setup.get(key) == value, key


def test_a_fenced_traceback_or_config_stays_one_part():
    tb = (
        '```\nTraceback (most recent call last):\n  File "train.py", line 3, in <module>\n    main()\n'
        "torch.cuda.OutOfMemoryError: CUDA out of memory.\n```"
    )
    assert [p.kind for p in split_message(tb)] == ["traceback"]
    log = "```\n{'loss': 1.2, 'learning_rate': 1e-05, 'epoch': 0.1}\n{'loss': 1.1, 'learning_rate': 1e-05, 'epoch': 0.2}\n```"
    assert [p.kind for p in split_message(log)] == ["log"]


@pytest.mark.parametrize(
    "text,key,expected",
    [
        ("128卡 H20\n训练参数如下", "world_size", 128),  # a three-digit count is a count
        ("用3090卡跑lora", "world_size", None),  # a four-digit number before 卡 is the card's model
        ("I'm using a 80GB A100 GPU.", "world_size", 1),  # "a 80GB": one card, not "8" + "0GB"
        ("I have a 24GB 3090 and a 16GB 4080", "world_size", None),
        ("8*A800，在zero3下70B训8k只能设bs=1", "seq_len", 8192),
    ],
)
def test_counts_and_lengths_in_sentences(text, key, expected):
    assert _read(text, key) == expected


def test_deepspeed_offload_device_none_is_off():
    text = (
        '```\n{"zero_optimization": {"stage": 3, "offload_param": {"device": "none", "pin_memory": true},\n'
        '  "offload_optimizer": {"device": "cpu"}}}\n```'
    )
    setup, _ = read_setup(split_message(text))
    assert setup.get("offload_param") is False and setup.get("offload_optimizer") is True
    assert _read("zero3 offload 还是 OOM", "offload_param") is True


@pytest.mark.parametrize(
    "text,expected",
    [
        ("```\nswift sft --model Qwen/Qwen2.5-7B --train_type full --torch_dtype bfloat16\n```", "full"),
        ("```\n--tuner_backend peft --train_type full\n```", "full"),
        ("```\n--sft_type lora --lora_rank 8\n```", "lora"),
        ("```\nfinetuning_type: freeze\n```", "freeze"),  # its own method since fid4: no figure, never "full"
    ],
)
def test_the_frameworks_method_key_decides(text, expected):
    assert _read(text, "finetune") == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("基础模型为Chinese-Alpaca-2-7B，使用4090微调", "Chinese-Alpaca-2-7B"),
        ("微调internvl-chat-V1-5：", "internvl-chat-V1-5"),
        ("I fine-tune meta-llama/Llama-2-13b-hf with FSDP", "Llama-2-13b-hf"),
        ("a QLoRA finetune on a 30B model WizardLM-30B-fp16 by splitting", "WizardLM-30B-fp16"),
        ("model = LlamaForCausalLM.from_pretrained(path)", "Llama"),  # a class, not an id
        ("python -m llama_recipes.finetuning --use_peft", "llama"),  # a package named after the family
    ],
)
def test_whole_model_ids(text, expected):
    assert _read(text, "model_text") == expected


def test_the_launch_count_is_the_runs_world_size():
    # https://github.com/huggingface/trl/issues/2864: two GPUs on the machine, one training process (the other is vLLM's)
    text = (
        "I used two GPUs with 32GB of memory, one device for training, another for vllm.\n"
        "```shell\nexport CUDA_VISIBLE_DEVICES=0,1\naccelerate launch --num_processes 1 train.py --config x.yaml\n```"
    )
    setup, _ = read_setup(split_message(text))
    assert setup.get("world_size") == 1 and [c.value for c in setup.conflicts["world_size"]] == [2]
    # a commented-out launch is not the run's; DeepSpeed's printed world size stays the conflict, not the value
    assert (
        _read(
            "4*A100 (80G)\n```\n# torchrun --nproc_per_node=3\naccelerate launch src/train_sft.py --fp16\n```",
            "world_size",
        )
        == 4
    )
    assert (
        _read(
            "we use 4 GPUs.\nAssertionError: Check batch related parameters. train_batch_size is not equal to "
            "micro_batch_per_gpu * gradient_acc_step * world_size 64 != 4 * 16 * 1",
            "world_size",
        )
        == 4
    )


def test_a_fenced_oom_message_stays_one_error():
    text = (
        "```\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
        "See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n```"
    )
    assert [p.kind for p in split_message(text)] == ["error"]
