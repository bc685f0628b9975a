"""Readers from blind30's misses (stop 55), each on the user's own words from the thread it came from."""

from __future__ import annotations

import pytest

from calculators.diagnose import diagnose
from tests.message_reading import setup_values


@pytest.fixture(scope="module")
def bot():  # type: ignore[no-untyped-def]
    from rag import Assistant

    return Assistant()


def test_the_maintainers_hardware_in_brackets_is_not_the_users() -> None:
    # mmselfsup #378: "8xA100 80G" is the maintainers' setting; the user's run is 256 per GPU on 2 GPUs
    values = setup_values(
        "How could I maintain the effective batch size as 4096 in config, as I don't have enough resource as your "
        "setting (8xA100 80G)?\n\nAnd, will the accuracy keep the same if effective batch size = 512  (256 batch size "
        "per gpu X 2 gpu )?"
    )
    assert values["world_size"] == 2 and values["train_micro_batch_size_per_gpu"] == 256
    # the user's own run after "your config" stays theirs
    assert setup_values("When I run your config on a Qwen2-7B with one A100 80G I get OOM.")["model_text"] == "Qwen2-7B"


def test_a_product_written_with_what_each_factor_counts() -> None:
    # VideoMAE #64
    values = setup_values("the effective batch size : 32 x 8 nodes x 8 gpus = 2048\n\nbut your paper denotes `1024`.")
    assert values["train_micro_batch_size_per_gpu"] == 32 and values["train_batch_size"] == 2048
    assert values["world_size"] == 64 and values["num_nodes"] == 8
    values = setup_values("batch 16 per gpu x 4 gpus x 2 accumulation steps = 128")
    assert (values["train_micro_batch_size_per_gpu"], values["gradient_accumulation_steps"]) == (16, 2)
    assert values["world_size"] == 4 and values["train_batch_size"] == 128
    # a product that does not come out as written is not read as one
    assert setup_values("32 x 8 nodes x 8 gpus = 1024").get("train_batch_size") != 1024


def test_the_batch_an_accumulating_run_is_equivalent_to_is_its_total() -> None:
    # yolov3 #1010
    values = setup_values(
        "My understanding is that the GPU memory is not enough to calculate 64 pictures at a time, so we calculate 16 "
        "pictures at a time, accumulate 4 times and then carry out back propagation, which is equivalent to using "
        "batchsize of 64，is that right？"
    )
    assert values["train_micro_batch_size_per_gpu"] == 16 and values["gradient_accumulation_steps"] == 4
    assert values["train_batch_size"] == 64
    # written before the accumulating run, the batch after "equivalent to" is still that run's micro batch
    values = setup_values("Is --batch_size 64 equivalent to --batch_size 8 and --accumulate_gradients 8?")
    assert values["train_micro_batch_size_per_gpu"] == 8 and "train_batch_size" not in values


def test_a_users_own_product_asked_about_opens_with_the_arithmetic(bot) -> None:  # type: ignore[no-untyped-def]
    answer = bot.ask(
        "The meaning of the accumulate\n\nMy understanding is that the GPU memory is not enough to calculate 64 "
        "pictures at a time, so we calculate 16 pictures at a time, accumulate 4 times and then carry out back "
        "propagation, which is equivalent to using batchsize of 64，is that right？"
    )
    assert answer.first_screen.startswith("**Global batch = micro 16 × GA 4 × 1 GPU = 64.**")


def test_the_learning_rate_of_the_run_asked_about() -> None:
    # mmsegmentation #2026: the original setting, then the one the user proposes
    values = setup_values(
        "the original setting is as following,\n\nsamples per GPU=2\nnums of GPUs=8 (batch size = 2 * 8 = 16)\n"
        'learning rate=0.02".\n\nAm I right that I should change it into\n\nsamples per GPU=8 (cannot be 16, because '
        'of OOM)\nnums of GPUs=1 (batch size = 8 * 1 = 8)\nlearning rate=0.01"?'
    )
    assert values["base_learning_rate"] == 0.01 and values["world_size"] == 1


def test_the_size_a_card_is_said_to_have() -> None:
    # LLaMA-Factory #1878: the V100 is the card the user cannot use; theirs are two 24 GB 4090s
    values = setup_values(
        "因为flashAttention2不支持V100。V100单卡有32G显存这个没法尝试公告的方案。目前我这边现有机器只有2张4090卡，"
        "但每张4090卡只有24G显存，我知道这是不够28G的"
    )
    assert values["gpu"] == "rtx-4090" and values["gpu_memory_gb"] == 24.0 and values["world_size"] == 2


def test_machines_of_a_card_times_its_count() -> None:
    # Qwen3 #201
    values = setup_values("lora微调72b模型需要多少2台8xA100 80G够吗")
    assert values["num_nodes"] == 2 and values["world_size"] == 16 and values["gpu"] == "a100-80gb"


def test_the_ddp_tutorial_flags_give_the_gpu_count() -> None:
    # YANMTT #7: `-n` nodes, `-nr` this node's rank, `-g` GPUs per node; --multistep_optimizer_steps accumulates
    values = setup_values(
        "```\npython3 pretrain_nmt.py -n 1 -nr 0 -g 2 --model_path models/bart_base \\\n--batch_size 4096 \\\n"
        "--multistep_optimizer_steps 4 \\\n--fp16\n```"
    )
    assert values["world_size"] == 2 and values["gradient_accumulation_steps"] == 4
    # a lone -g is no count
    assert setup_values("```\npython train.py -g 2 --batch_size 8\n```").get("world_size") != 2


def test_a_warning_about_some_sequences_is_no_sequence_length() -> None:
    # mlx-examples #517: trained at 8K+ tokens; the warning's 2048 is a threshold in the tool's code
    values = setup_values(
        "- I'm using 8K+ context size when fine tuning..\n\n```\npython ./lora.py \\\n    --train \\\n"
        "    --batch-size 1\nTraining\n[WARNING] Some sequences are longer than 2048 tokens. Consider pre-splitting "
        "your data to save memory.\n```"
    )
    assert values["seq_len"] == 8192


def test_a_learning_rate_still_zero_in_the_first_logs_is_skipped_steps() -> None:
    # LLaMA-Factory #964: fp16 Baichuan2, warmup 100, every step overflowing
    log = (
        "```\n{'loss': 243687.9, 'learning_rate': 0.0, 'epoch': 0.0}\n"
        "{'loss': 141.6975, 'learning_rate': 0.0, 'epoch': 0.0}\n```"
    )
    ids = [c.id for c in diagnose(log).causes]
    assert ids[0] == "log.lr_never_stepped"
    # a schedule that decayed to 0 at the end of a run is not this
    late = "```\n{'loss': 0.41, 'learning_rate': 0.0, 'epoch': 2.98}\n{'loss': 0.40, 'learning_rate': 0.0, 'epoch': 3.0}\n```"
    assert "log.lr_never_stepped" not in [c.id for c in diagnose(late).causes]


def test_lora_on_4_bits_is_no_conflict_and_one_model_note(bot) -> None:  # type: ignore[no-untyped-def]
    answer = bot.ask(
        "微调Baicuan2时learning_rate始终为0\n\n用了 https://huggingface.co/hiyouga/Baichuan-13B-sft 的实例脚本\n```\n"
        "CUDA_VISIBLE_DEVICES=1 python src/train_bash.py \\\n    --stage sft \\\n"
        "    --model_name_or_path ~/dl/BaiCuan/Baichuan2-13B-Base \\\n    --finetuning_type lora \\\n"
        "    --quantization_bit 4 \\\n    --fp16\n```\n输出一直是：\n```\n"
        "{'loss': 243687.9, 'learning_rate': 0.0, 'epoch': 0.0}\n{'loss': 141.6975, 'learning_rate': 0.0, 'epoch': 0.0}\n```"
    )
    screen = answer.first_screen
    assert "学习率在每个记录点都还是 0.0" in screen.split("\n")[0]
    assert "qlora，但" not in screen and screen.count("注意：模型") <= 1


def test_the_size_written_after_an_unsized_name_picks_the_model() -> None:
    # TRL #3456: the title's "Qwen3 0.6 model", then three sizes compared in the follow-up
    values = setup_values(
        "Out of Memory when GRPO fine-tune Qwen3 0.6 model on 80G A100 GPU\n\nit's not weird out of memory for "
        "Qwen3 4B.\n- Qwen3 0.6B: 49273MiB /  81920MiB\n- Qwen3 1.7B: 78147MiB /  81920MiB"
    )
    assert values["model"] == "qwen3-0.6b"


def test_a_decaying_schedule_set_and_the_lr_flat_at_its_peak() -> None:
    # Qwen #672: cosine set in the prose, the pasted log flat at 0.0003 from epoch 72 to 160
    log = (
        "```\n" + "".join(f"{{'loss': 0.2, 'learning_rate': 0.0003, 'epoch': {e}.0}}\n" for e in range(72, 78)) + "```"
    )
    said = '参数设置：--lr_scheduler_type "cosine" ，--num_train_epochs 200'
    causes = diagnose(log, context=said).causes
    assert causes[0].id == "log.lr_held_at_peak"
    assert causes[0].card_ids == ["deepspeed-config-scheduler-overrides-trainer"]
    # without a decaying schedule named, a flat LR is a constant schedule, not this
    assert "log.lr_held_at_peak" not in [c.id for c in diagnose(log).causes]


def test_the_single_gpu_a_slow_ddp_run_is_compared_with_is_not_the_run() -> None:
    # 4D-Humans #139
    assert "world_size" not in setup_values(
        "Slow training with DDP\n\nHello, why is the training speed of using the DDP strategy slower than that of a "
        "single GPU?How to fix this"
    )
    assert setup_values("I only have one GPU and training is slow")["world_size"] == 1


def test_a_batch_written_as_a_product_is_the_product() -> None:
    # Cream #214 (TinyCLIP): not a micro batch of 4
    values = setup_values(
        "I wonder if I utilize 8 A100 80GB to improve the batch size to 4*1024, can it be reproduced?"
    )
    assert values["train_batch_size"] == 4096 and "train_micro_batch_size_per_gpu" not in values
    # mmsegmentation #2026: mmcv's samples per GPU, two runs written out, the later one asked about
    values = setup_values(
        "original setting is as following,\n\nsamples per GPU=2\nnums of GPUs=8 (batch size = 2 * 8 = 16)\n"
        'learning rate=0.02".\n\nAm I right that I should change it into\n\nsamples per GPU=8 (cannot be 16, because '
        'of OOM)\nnums of GPUs=1 (batch size = 8 * 1 = 8)\nlearning rate=0.01"?'
    )
    assert values["train_batch_size"] == 8 and values["train_micro_batch_size_per_gpu"] == 8
    assert "train_batch_size" not in setup_values("batch size = 2 * 8 = 17")


def test_how_many_cards_nvidia_smi_shows_busy_is_no_gpu_count() -> None:
    # RemoteSensingTeacher #15: a 2 × 3090 run hung; one card still busy
    values = setup_values(
        "nvidia-smi显示只有一个卡在占用（之前是两个）：\n请问您有没有遇到过这种情况，我的配置是3090*2（24G），"
        "batch size是2*2per gpu,请问这样是显存爆了吗"
    )
    assert values["world_size"] == 2 and values["train_micro_batch_size_per_gpu"] == 2
    assert values["train_batch_size"] == 4
