"""Stated-value fidelity (issue #10): every number the user stated is read, with where it came from.

Each case is a snippet of a real message from the dev set's sources (tests/data/real_questions), cut to the part that
states the value. Fast tier: text processing only, no model.
"""
from __future__ import annotations

import pytest

from rag.parts import split_message
from rag.setup import read_setup
from rag.slots import classify_key, extract_printed, extract_slots


def setup_of(text: str):
    setup, _ = read_setup(split_message(text))
    return setup


# ---- keys spelt every framework's way -----------------------------------------------------------------
@pytest.mark.parametrize("key, expected", [
    ("per_device_train_batch_size", "train_micro_batch_size_per_gpu"),
    ("PER_DEVICE_BATCH_SIZE", "train_micro_batch_size_per_gpu"),           # InternVL shell scripts
    ("device_train_microbatch_size", "train_micro_batch_size_per_gpu"),    # OLMo
    ("micro_train_batch_size", "train_micro_batch_size_per_gpu"),          # OpenRLHF
    ("per_gpu_train_batch_size", "train_micro_batch_size_per_gpu"),        # old transformers examples
    ("global_train_batch_size", "train_batch_size"),
    ("GRADIENT_ACCUMULATIONS", "gradient_accumulation_steps"),             # open-instruct
    ("accumulate_grad_batches", "gradient_accumulation_steps"),            # Lightning
    ("per_device_eval_batch_size", None),
    ("rollout_batch_size", None),
    ("eval_accumulation_steps", None),
    ("max_new_tokens", None),
])
def test_classify_key(key, expected):
    assert classify_key(key) == expected


def test_env_style_settings_in_prose():
    # allenai/open-instruct#464
    s = extract_slots("for 8 GPUs, I should set NUM_PROCESSES=8, PER_DEVICE_BATCH_SIZE=1, GRADIENT_ACCUMULATIONS=16 "
                      "for an effective batch size of 128?")
    assert (s.train_micro_batch_size_per_gpu, s.gradient_accumulation_steps, s.world_size) == (1, 16, 8)


def test_bare_batch_size_next_to_micro_batch_is_global():
    # tloen/alpaca-lora#397: --batch_size is the global batch there
    setup = setup_of("what is micro_batch_size?\n```\npython finetune.py \\\n    --batch_size 128 \\\n"
                     "    --micro_batch_size 4\n```")
    assert setup.get("train_micro_batch_size_per_gpu") == 4
    assert setup.get("train_batch_size") == 128


def test_hf_trainer_banner_in_a_log():
    # LlamaChinese/Llama-Chinese#242
    log = ("[INFO|trainer.py:1715] 2023-10-19 09:44:55,247 >>   Instantaneous batch size per device = 1\n"
           "[INFO|trainer.py:1718] 2023-10-19 09:44:55,247 >>   Total train batch size (w. parallel, distributed & "
           "accumulation) = 64\n[INFO|trainer.py:1719] 2023-10-19 09:44:55,247 >>   Gradient Accumulation steps = 8")
    setup = setup_of("为什么显存这么大\n" + log)
    assert setup.get("train_micro_batch_size_per_gpu") == 1 and setup.source("train_micro_batch_size_per_gpu") == "log"
    assert setup.get("train_batch_size") == 64 and setup.get("gradient_accumulation_steps") == 8


def test_trl_global_batch_error():
    # huggingface/open-r1#249
    s = extract_printed("ValueError: The global train batch size (7 x 1) must be evenly divisible by the number of "
                        "generations per prompt (8).")
    assert (s.world_size, s.train_micro_batch_size_per_gpu) == (7, 1)


# ---- GPUs: the user's own card, its size, names beyond the presets -------------------------------------------
@pytest.mark.parametrize("text, gpu, gpu_text, memory", [
    # haotian-liu/LLaVA#157: the A100/H100 are what flash-attention needs; the user's cards are the 3090s
    ("the flash-attention requires A100 or H100 when Head dim > 64. I fine-tune the LLaVA-7B model on two RTX-3090s.",
     "rtx-3090", "RTX-3090s", None),
    # hiyouga/LLaMA-Factory#3708: a count glued to the name, the name glued to the next word
    ("4张3090lora微调Qwen7B爆显存", "rtx-3090", "3090", None),
    # Neutralzz/BiLLa#37: a card without a preset is kept as written, never mapped to another card
    ("我们在8*P100上进行第二阶段的全参数微调", None, "P100", None),
    # tloen/alpaca-lora#191: the 16 GB V100, not the 32 GB preset; "using 9G" is use, not size
    ("I am using V100 with 16G memory. ... while only using 9G memory.", "v100-16gb", "V100", 16.0),
    # hpcaitech/ColossalAI#6272: a modded 22 GB 2080 Ti matches no preset: its size is kept, the 11 GB preset is not
    ("I got resource with 1T cpu mem and 4 2080ti22GB cards", None, "2080ti", 22.0),
    # hiyouga/LLaMA-Factory#747
    ("using 3 sets of machines containing 8 A100s (40G)", "a100-40gb", "A100s", 40.0),
])
def test_gpu_as_named(text, gpu, gpu_text, memory):
    s = extract_slots(text)
    assert (s.gpu, s.gpu_text, s.gpu_memory_gb) == (gpu, gpu_text, memory)


def test_capacity_is_not_a_requirement_and_reads_mib():
    # hiyouga/ChatGLM-Efficient-Tuning#394: the readme's "8G" is a requirement; the card says 11264MiB
    s = extract_slots("根据readme中的表格，最小运行显存为8G。\n我的服务器配置为4块 NVIDIA GeForce RTX 2080，显存为11264MiB")
    assert s.gpu_memory_gb == 11.0 and s.gpu_text == "NVIDIA GeForce RTX 2080"


def test_observed_use_is_never_capacity():
    # zai-org/GLM-4#324
    s = extract_slots("我的服务器上有两张A40，当其中一张显卡的显存占用达到大概20G的时候，另一张显卡也会被使用")
    assert s.gpu_memory_gb is None and s.observed_memory_gb == 20.0


# ---- parts: the user's sentences that quote an error stay prose ---------------------------------------------
def test_sentence_quoting_an_error_is_prose():
    # hiyouga/LLaMA-Factory#260
    parts = split_message("My device:\nV100 32G\n\nThis is interesting because I use 8 V100 32G, which is also 240G, "
                          "but encounter `CUDA out of memory` Error. I use deepspeed Zero-2.")
    assert [p.kind for p in parts] == ["prose"]


def test_title_line_is_prose_and_a_wrapped_oom_stays_one_error():
    # Alpha-VLLM/LLaMA2-Accessory#26 (title); SCIR-HI/Med-ChatGLM#11 (an OOM wrapped over lines)
    parts = split_message("llama2 13b out of memory on A800\nI run the script.")
    assert parts[0].kind == "prose" and "A800" in parts[0].text
    oom = ("OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 39.56\n"
           "GiB total capacity; 37.88 GiB already allocated; 32.56 MiB free; 38.21 GiB\n"
           "reserved in total by PyTorch) If reserved memory is >> allocated memory try\n")
    parts = split_message("显存不够，请问怎么办\n" + oom)
    assert [p.kind for p in parts] == ["prose", "error"]
    setup = setup_of("显存不够，请问怎么办\n" + oom)
    assert setup.get("gpu_memory_gb") == pytest.approx(39.56) and setup.source("gpu_memory_gb") == "error"
