"""Fast tests for the retrieval query cleaning (rag/query_clean.py) and the glossary / jieba dictionary additions.

The error texts are real PyTorch / DeepSpeed messages as users paste them (two OOM message formats, a truncated key
line, a stack frame); no model is loaded.
"""

from __future__ import annotations

import pytest

from rag.glossary import expand_query, user_dictionary
from rag.query_clean import FRAGMENTED_WORDS, clean_query, fragmented
from rag.tokenize import tokenize

# PyTorch <= 2.0 wording (one line, as pasted).
OOM_OLD = (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 508.00 MiB (GPU 0; 23.65 GiB total "
    "capacity; 22.93 GiB already allocated; 180.06 MiB free; 22.95 GiB reserved in total by PyTorch) If reserved "
    "memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for "
    "Memory Management and PYTORCH_CUDA_ALLOC_CONF"
)
# PyTorch >= 2.1 wording, wrapped over lines as a terminal prints it (and with PyTorch's own 'capacty' typo).
OOM_NEW = (
    "OutOfMemoryError: CUDA out of memory. Tried to allocate 36.00 MiB. GPU 0 has a total capacty of 22.38 GiB of "
    "which 16.81 MiB is free. Including non-PyTorch memory, this\nprocess has 22.36 GiB memory in use. Of the "
    "allocated memory 22.09 GiB is allocated by PyTorch, and 51.65 MiB is reserved by PyTorch but unallocated. "
    "If reserved but\nunallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See "
    "documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"
)


def test_oom_keeps_the_error_and_drops_the_advice_and_figures():
    out = clean_query("多卡微调报错：内存不足\n" + OOM_OLD)
    assert "CUDA out of memory. Tried to allocate" in out
    assert "多卡微调报错" in out
    for gone in ("max_split_size_mb", "fragmentation", "508.00", "GiB", "PYTORCH_CUDA_ALLOC_CONF"):
        assert gone not in out, gone


def test_new_oom_format_continuation_lines_are_dropped():
    out = clean_query(OOM_NEW)
    assert "Tried to allocate" in out
    for gone in ("max_split_size_mb", "fragmentation", "non-PyTorch", "reserved by PyTorch but unallocated", "MiB"):
        assert gone not in out, gone


def test_truncated_key_line_loses_its_advice_too():
    # the assistant's key line is clipped at 300 characters, mid-word
    out = clean_query(OOM_OLD[:280])
    assert out.endswith("Tried to allocate")


def test_fragmentation_is_read_from_the_figures_not_the_advice():
    # 51.65 MiB unallocated of 22.38 GiB: not fragmented, although the message talks about fragmentation
    assert not fragmented(OOM_NEW)
    assert not fragmented(OOM_OLD)  # 22.95 reserved vs 22.93 allocated
    gap = (
        "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.35 GiB total capacity; 61.20 GiB already "
        "allocated; 1.10 GiB free; 76.90 GiB reserved in total by PyTorch)"
    )
    assert fragmented(gap)
    assert FRAGMENTED_WORDS in clean_query(gap)
    new_gap = (
        "CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 0.5 "
        "GiB is free. Of the allocated memory 17.10 GiB is allocated by PyTorch, and 5.80 GiB is reserved by "
        "PyTorch but unallocated."
    )
    assert fragmented(new_gap)


def test_stack_frames_and_code_lines_are_dropped():
    text = (
        "训练到一半报错\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/site-packages/transformers/trainer.py", line 2662, in training_step\n'
        "    self.scaler.scale(loss).backward()\n"
        " Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
        "AssertionError: Check batch related parameters. train_batch_size is not equal to "
        "micro_batch_per_gpu * gradient_acc_step * world_size 16 != 2 * 1 * 1"
    )
    out = clean_query(text)
    assert "训练到一半报错" in out
    assert "AssertionError: Check batch related parameters" in out
    assert "16 != 2 * 1 * 1" in out  # the user's own numbers in the error stay
    for gone in ("Traceback", 'File "', "run_backward", "scaler.scale"):
        assert gone not in out, gone


def test_an_error_quoted_in_the_prose_and_appended_as_key_line_counts_once():
    err = "RuntimeError: CUDA error: an illegal memory access was encountered"
    out = clean_query(f"I got\n{err}\nwhen training\n{err}")
    assert out.count("illegal memory access") == 1


def test_user_numbers_and_a_repeated_title_are_kept():
    text = (
        "per_device_train_batch_size=1, but almost all of my GPU memory is used\n"
        "4*A800 80G, zero2, RTX 4090 24G\n"
        "per_device_train_batch_size=1, but almost all of my GPU memory is used"
    )
    out = clean_query(text)
    assert "per_device_train_batch_size=1" in out and "80G" in out and "4090" in out and "zero2" in out
    assert out.count("almost all of my GPU memory") == 2  # only error lines are de-duplicated


@pytest.mark.parametrize("text", ["", "   ", "\n\n"])
def test_empty_input(text):
    assert clean_query(text) == ""


def test_user_dictionary_keeps_terms_whole():
    words = set(user_dictionary())
    for term in ("梯度累积", "混合精度", "显存溢出", "卡住", "多机多卡"):
        assert term in words, term
    toks = tokenize("开了混合精度和梯度累积以后显存溢出，多机多卡训练卡住")
    for term in ("混合精度", "梯度累积", "显存溢出", "多机多卡", "卡住"):
        assert term in toks, (term, toks)


def test_glossary_expands_chinese_framework_terms_to_english():
    assert "gradient accumulation" in expand_query("梯度累积设成 8 会怎样")
    assert "out of memory" in expand_query("一跑就显存溢出")
    assert "mixed precision" in expand_query("混合精度训练")


def test_launch_command_keeps_flags_and_word_values_drops_paths_and_numbers():
    cmd = (
        "CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=2 --master_port=25001 llava/train/train_mem.py "
        "--model_name_or_path /data/models/llama-7b --finetuning_type lora --deepspeed ds_zero3.json --bf16 True "
        '--per_device_train_batch_size 4 --output_dir output/"$exp_name"'
    )
    out = clean_query("OOM with this command\n" + cmd)
    assert "OOM with this command" in out
    for kept in (
        "torchrun",
        "--finetuning_type lora",
        "--deepspeed ds_zero3.json",
        "--bf16 True",
        "--per_device_train_batch_size",
    ):
        assert kept in out, kept
    for gone in ("/data/models", "25001", "train_mem.py", "$exp_name", "CUDA_VISIBLE_DEVICES", " 4 "):
        assert gone not in out, gone
    # prose that merely starts with a launcher-like word is not a command
    assert clean_query("python version 3.10, bf16 on 2 GPUs") == "python version 3.10, bf16 on 2 GPUs"


def test_glossary_number_pattern_matches_and_stays_out_of_jieba():
    # "共\d+G" (the cards' own way to say pooled memory) was escaped into a literal and never matched
    assert "pool GPU memory" in expand_query("4张3090 24G显存共96G显存，为什么还是不够")
    assert "pool GPU memory" not in expand_query("4张3090 24G显存")
    assert not any("\\" in w for w in user_dictionary())
