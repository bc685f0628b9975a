"""Stated-value fidelity (issue #10), round 12: formats that messages mined blind by others are written in and that
the reader misread (contradicted values first).

Each case is built from the *format* (a message of that shape written for the test), not from one dev message's
words. Fast tier: text processing only, no model.
"""

from __future__ import annotations

from rag.parts import split_message
from rag.slots import extract_slots
from tests.message_reading import setup_of


def prose(text: str):
    return extract_slots(text, prose=True)


# ---- offload ------------------------------------------------------------------------------------------------
def test_no_offload_in_a_config_file_name_is_offload_off():
    # Chinese-LLaMA-Alpaca's scripts name their DeepSpeed config "ds_zero2_no_offload.json"
    s = prose('ds_config="ds_zero2_no_offload.json"\ntorchrun --nproc_per_node 2 run_sft.py')
    assert s.zero_stage == 2
    assert s.offload_optimizer is False
    # the offload config is still offload
    assert prose("deepspeed --num_gpus 2 train.py --deepspeed ds_zero2_offload.json").offload_optimizer is True


# ---- the method --------------------------------------------------------------------------------------------
def test_disabled_lora_is_a_full_fine_tune():
    assert prose("I disabled the LoRA and unfroze every layer of Qwen2-7B, now fp16 training fails").finetune == "full"
    assert prose("关闭lora之后全部参数都训练，显存就不够了").finetune == "full"
    # the adapter's own options named are not the method switched off
    assert prose("I disabled lora_dropout in my LoRA run").finetune == "lora"


# ---- sequence length ---------------------------------------------------------------------------------------
def test_context_len_with_k_and_block_size():
    s = prose("用了4张A10 bs=2 context len=4k，还是爆显存")
    assert s.seq_len == 4096
    assert s.train_micro_batch_size_per_gpu == 2
    assert prose("预训练时block开到1024就OOM了").seq_len == 1024
    assert prose("--block_size 512 --per_device_train_batch_size 1").seq_len == 512
    # another setting's value is not a length ("bs=1 context …")
    assert prose("bs=1 context is long").seq_len is None


# ---- GPU counts ----------------------------------------------------------------------------------------------
def test_count_before_capacity_before_card_name():
    s = prose("用2张48GB显存的A6000训练Qwen2-VL-7B时爆显存")
    assert s.world_size == 2
    assert prose("我有3张11g 2080ti，想微调一个7b模型").world_size == 3


def test_count_in_backticks_in_a_setup_list():
    s = prose("My setup:\n- `per_device_train_batch_size=4`\n- `4` GPUs for training\n- `num_generations=8`")
    assert s.world_size == 4


def test_chinese_count_glued_to_a_script_name():
    assert prose("用train_multi.py三张卡跑就报显存不足").world_size == 3


def test_one_node_of_gpus_times_the_nodes():
    s = prose("集群配置：单机8卡*80G显存 * 2机，跑70B全参数微调")
    assert (s.num_nodes, s.world_size) == (2, 16)


# ---- micro batch -----------------------------------------------------------------------------------------------
def test_batch_size_turned_down_to_a_small_value():
    assert prose("显存不够，batch size已经调到很小的2了还是不行").train_micro_batch_size_per_gpu == 2


def test_a_settings_value_in_backticks_is_not_a_gpu_count():
    s = prose("On a server with 2 available H100s the default `--per_device_train_batch_size 8` GPU memory runs out")
    assert s.world_size == 2


# ---- the model's size --------------------------------------------------------------------------------------------
def test_hf_cache_snapshot_path_names_the_repository():
    cmd = (
        "torchrun --nproc_per_node 2 train.py \\\n"
        "    --model_name_or_path /data/hub/models--meta-llama--Llama-3.2-1B-Instruct/snapshots/"
        "3b0c6b5e2f8a1d9c4e7f0a2b6c8d1e3f5a7b9c0d \\\n    --per_device_train_batch_size 2"
    )
    s = prose(cmd)
    assert s.model_text == "Llama-3.2-1B-Instruct"
    # a trailing checkpoint folder names no model either
    assert prose("--model_name_or_path /ckpt/Qwen2.5-14B/checkpoint-1200").model_text == "Qwen2.5-14B"


def test_printed_parameter_count_beats_a_config_names_round_size():
    s = prose(
        "args: Namespace(config='13b', plugin='zero2', batch_size=4)\nModel params: 12.85 B\nmax CUDA memory: 40 GB"
    )
    assert s.num_params == 12.85e9


def test_printed_offload_fractions_of_zero_are_no_offload():
    s = prose("args: Namespace(plugin='gemini', offload_optim_frac=0.0, offload_param_frac=0.0, tp=2)")
    assert not s.offload_optimizer and not s.offload_param


# ---- micro batch vs global batch -----------------------------------------------------------------------------------
def test_named_micro_batch_makes_bare_batch_size_the_global_one():
    text = (
        "I set the micro batch size to 2, the only value that does not OOM, and the batch size to 2 as well. "
        "It's worth noting that with another repo I could use a batch size of 256 and a micro batch size of 8."
    )
    assert prose(text).train_micro_batch_size_per_gpu == 2


def test_prose_batch_equal_to_the_configs_global_batch():
    msg = (
        "OOM on A10 with batch size 16\n\nI changed the settings to this:\n\n```\n"
        "batch_size = 16\nmicro_batch_size = 4\ngradient_accumulation_steps = batch_size // micro_batch_size\n```\n"
        "still OOM, why?"
    )
    s = setup_of(msg)
    assert s.get("train_micro_batch_size_per_gpu") == 4
    assert s.get("train_batch_size") == 16
    assert 16 not in [v.value for v in s.conflicts.get("train_micro_batch_size_per_gpu", [])]


def test_lora_r_flag_beats_a_readers_default_rank():
    msg = (
        "I have one A100 and ran:\n```\npython finetune.py \\\n    --base_model='huggyllama/llama-13b' \\\n"
        "    --cutoff_len=1024 \\\n    --lora_r=32 \\\n    --micro_batch_size=4\n```\nand it OOMs."
    )
    assert setup_of(msg).get("lora_rank") == 32


def test_gpt2_large_and_a_stated_model_size():
    assert prose("Training a gpt2 large (774M) with Megatron on one V100 OOMs").num_params == 774e6
    assert prose("gpt2-xl does not fit on my 3090").num_params == 1.5e9
    s = prose("I finetuned gpt-2-simple with a model size of 355M on Colab")
    assert s.num_params == 355e6 and s.model is None and s.model_text == "gpt-2"
    # the medium preset and the base one stay
    assert prose("gpt2 medium on a T4").model == "gpt2-medium"
    assert prose("plain gpt2 with 124M params").model == "gpt2"


def test_megatron_examples_gpus_per_worker():
    msg = "NUM_WORKERS=1\nNUM_GPUS_PER_WORKER=4\nMP_SIZE=2\n\nscript --model-parallel-size 2 --batch-size 2"
    assert prose(msg).world_size == 4
    s = prose("NUM_WORKERS=2\nNUM_GPUS_PER_WORKER=8\n")
    assert (s.num_nodes, s.world_size) == (2, 16)


def test_flag_in_backticks_after_didnt_use_is_off():
    assert prose("I didn't use `--use-flash-attn` because my V100 does not support it").flash_attention is False


# ---- the GPU -------------------------------------------------------------------------------------------------------
def test_a_gpu_the_user_is_without_is_not_theirs():
    s = prose("Full fine-tuning without H100 GPUs?\n\nI only have 4 * NVIDIA L40S cards, 48GB each.")
    assert s.gpu == "l40s" and s.world_size == 4


def test_visible_devices_beat_what_i_only_have():
    msg = (
        "I only have 6 * A6000 GPUs.\nI tried `CUDA_VISIBLE_DEVICES=0,1,2,3 accelerate launch --config_file zero3.yaml "
        "train.py` and it reported OOM."
    )
    assert setup_of(msg).get("world_size") == 4


def test_memory_used_or_needed_is_not_the_cards_capacity():
    s = prose("服务器是两台A100，我看全参微调7B的模型使用显存为90G，但还是报超出显存")
    assert s.gpu_memory_gb is None
    assert prose("所需显存为60G，我的卡显存为24G").gpu_memory_gb == 24


# ---- the model the launch loads ------------------------------------------------------------------------------------
def test_the_launched_model_beats_another_one_named_in_the_prose():
    msg = (
        "用 baichuan2-7B 全量训练可以 run，改为 Qwen2-72B 就报显存不足。\n"
        "```\ntorchrun --nproc_per_node 8 train.py \\\n    --model_name_or_path /models/Qwen2-72B-Instruct \\\n"
        "    --per_device_train_batch_size 1\n```"
    )
    s = setup_of(msg)
    assert s.get("model_text") == "Qwen2-72B-Instruct"
    assert "baichuan2-7B" in [v.value for v in s.conflicts.get("model_text", [])]
    # a model named only in a comment of the script is not the one it loads
    msg2 = (
        "finetuning LLAMA2-7b OOMs:\n```\n# e.g. llama-13b: 5120\nHIDDEN_SIZE=4096\nMICRO_BATCH_SIZE=1\n"
        "torchrun pretrain_gpt.py --hidden-size $HIDDEN_SIZE\n```"
    )
    assert setup_of(msg2).get("model") == "llama-2-7b"


def test_output_dir_names_no_quantization():
    s = prose("--finetuning_type full --output_dir saves/Qwen-72B-int4-Chat/lora/train_1 --fp16 True")
    assert s.finetune == "full" and s.quantization is None


# ---- precision and capacity next to a pasted error -----------------------------------------------------------------
def test_launch_flag_beats_a_cast_mentioned_in_a_sentence():
    text = (
        "It only ran once when I used model.cuda().half(), but the outputs were garbage.\n"
        "I launch it with: torchrun --nproc_per_node=2 train.py --fp16 True --per_device_train_batch_size 2"
    )
    assert prose(text).precision in ("amp-fp16", "fp16-mixed")
    text = "I launch with **torchrun train.py --bf16 True** and earlier tried model.half()"
    assert prose(text).precision == "amp-bf16"


def test_printed_total_capacity_beats_a_far_off_prose_capacity():
    msg = (
        "OOM on a single H100 8GB (typo for 80) while loading a 13B model\n\n"
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 500.00 MiB (GPU 0; 79.11 GiB total "
        "capacity; 77.20 GiB already allocated; 300.50 MiB free; 78.00 GiB reserved in total by PyTorch)"
    )
    s = setup_of(msg)
    assert abs(s.get("gpu_memory_gb") - 79.11) < 0.5
    # a round prose figure close to the printed one stays
    msg2 = msg.replace("single H100 8GB (typo for 80)", "24GB RTX 4090").replace("79.11 GiB", "23.65 GiB")
    assert setup_of(msg2).get("gpu_memory_gb") == 24


# ---- a guide quoted under an intro line ----------------------------------------------------------------------------
def test_a_guides_requirements_quoted_under_an_intro_line_are_not_the_setup():
    text = (
        "GPU: 2x RTX 6000 Ada\n\nI'm following a blog post. The blog mentions the following:\n"
        "Full fine-tuning needs ~8x80GB GPUs\nLoRA needs ~4X80GB GPUs\n\nWhy do I get OOM?"
    )
    s = prose(text)
    assert s.world_size == 2
    assert s.gpu_memory_gb != 80
    assert prose("LoRA needs ~2x40GB GPUs, but I have 24GB GPUs").gpu_memory_gb == 24


def test_a_count_supposed_by_increasing_to_is_not_the_runs():
    s = prose("By increasing the number of video cards to 8 * L4, would the OOM I get on 2 * L4 go away?")
    assert s.world_size == 2
    assert prose("QLoRA 70B OOM | 4 * NVIDIA A10G 24 Gb").world_size == 4


# ---- a title glued to the error ------------------------------------------------------------------------------------
def test_chinese_title_glued_to_the_error_keeps_its_words():

    msg = "微调13b模型时torch.cuda.OutOfMemoryError: CUDA out of memory\n\n还请帮忙看看"
    kinds = [(p.kind, p.text) for p in split_message(msg)]
    assert kinds[0] == ("prose", "微调13b模型时")
    assert kinds[1][0] == "error" and kinds[1][1].startswith("torch.cuda.OutOfMemoryError")
    assert setup_of(msg).get("num_params") == 13e9


def test_of_two_batches_compared_the_one_with_accumulation_is_the_run():
    s = prose("Is training with --batch_size 128 the same as training with --batch_size 16 and --accum_grad 8?")
    assert (s.train_micro_batch_size_per_gpu, s.gradient_accumulation_steps) == (16, 8)
    s = prose("Is batch size 32 equivalent to batch size 4 with gradient accumulation 8?")
    assert s.train_micro_batch_size_per_gpu == 4


def test_the_maintainers_model_in_second_person_is_not_the_users():
    text = (
        "Could you share the settings you used when training Qwen2-72B? When I run your config on a Qwen2-7B with "
        "one A100 80G I get OOM."
    )
    assert prose(text).model_text == "Qwen2-7B"
    # named alone, it is still read
    assert prose("Does your repo support Baichuan2-13B?").model == "baichuan2-13b"
