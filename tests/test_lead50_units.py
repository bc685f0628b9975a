"""Readers from blind25's misses (stop 50), each on the user's own words from the thread it came from."""

from __future__ import annotations

from tests.message_reading import setup_conflicts, setup_values


def test_a_papers_gpu_count_is_not_the_users() -> None:
    # NeMo #6649: the paper's 32 V100s are hearsay; the user's run is on a single GPU with GA 32
    values = setup_values(
        "The paper of CitriNet said they used 32 V100 GPUs, with a batch size of 32 per GPU.\n"
        "then, the gradients of each GPU are accumulated and updated together?\n"
        "When I trained CitriNet-384 model with single gpu, with batch size of 32, then grad_accumulation=32 "
        "will be same condition with paper?"
    )
    assert values["world_size"] == 1
    assert values["train_micro_batch_size_per_gpu"] == 32 and values["gradient_accumulation_steps"] == 32


def test_a_count_the_user_runs_beside_a_papers_still_counts() -> None:
    values = setup_values("The paper said they used 32 V100 GPUs. I train on 4 V100 GPUs with batch size 8.")
    assert values["world_size"] == 4


def test_alpaca_loras_cutoff_length_with_a_hyphen_is_the_sequence_length() -> None:
    # FastChat #1193
    values = setup_values(
        "Finetune VICUNA-7b with 4*v100(32G)\n\nMine got OOM error even micro-batch = 1 and cutoff-length = 64. "
        "Also tried deep speed stage 3."
    )
    assert values["seq_len"] == 64 and values["world_size"] == 4 and values["gpu_memory_gb"] == 32


def test_a_product_written_out_gives_one_cards_size() -> None:
    # FastChat #453: "4*24=96 gb vram" is four 24 GB cards, not one 96 GB card
    values = setup_values(
        "Hi,, I have been trying to reproduce vicuna in 4xL4 which is 4*24=96 gb vram. What approach should I follow?"
    )
    assert values["gpu_memory_gb"] == 24 and values["world_size"] == 4 and values["gpu"] == "l4"


def test_per_gpu_use_times_the_gpus_is_not_cards_times_their_size() -> None:
    # llama-cookbook #37: "18*8 = 144GB" multiplies 18 GB used by the 8 GPUs; each card has 24 GB
    values = setup_values(
        "Hi, I am trying to fine-tune LLama 13B model on g5.48xlarge instance type (8 GPUs, 24GB per GPU) and "
        "running into CUDA OOM issue.\nWhy does the backward pass consume more than 18*8 = 144GB GPU memory for such "
        "few parameters?"
    )
    assert values["gpu_memory_gb"] == 24 and values["world_size"] == 8
    # and a formula's factors are no cards: "7 x 4 x 4 = 112 GB" (test_fid9_units)
    assert "gpu_memory_gb" not in setup_values("fine-tuning a 7B model requires about 7 x 4 x 4 = 112 GB of VRAM")


def test_a_papers_setting_and_what_a_batch_amounts_to_are_not_the_run() -> None:
    # 3DMPPE_POSENET #85: the run is batch_size 32 on two GPUs; 64 is what the user thinks it amounts to and
    # 128 on 4 GPUs is the paper's
    values = setup_values(
        "If I use only two GPUs for training, Can it be worse training than original training?\n\n"
        "To the best of my knowledge about this module, If I code on train.py like:\n\n"
        "`gpu_ids = 0,1`,\n`batch_size = 32`\n\nThen it works like `batch_size = 64` (Is it right?)\n\n"
        "But in your paper, batch_size = 128, and used 4 GPU.\n\n"
        "So I'm worried that It(two GPUs, batch_size=32) can make a difference with the original training."
    )
    assert values["world_size"] == 2 and values["train_micro_batch_size_per_gpu"] == 32
    assert setup_conflicts("Then it works like `batch_size = 64`. I run batch_size = 32 on 2 GPUs") == {}


def test_a_documents_gpu_count_is_the_run_asked_about_when_the_user_states_none() -> None:
    # insightface #261 asks what the paper's "batchsize = 512 and 8 GPUs" means: that run is the subject
    values = setup_values(
        "About settings of batch size\n\nIn the paper, you use batchsize = 512 and 8 GPUs.\n\n"
        "So does it mean (1). the REAL batchsize = 8 * 512 = 4096?\n\nor it means (2). each GPU use batch 64 and "
        "64 * 8 = 512?\n\nwhich one is true?"
    )
    assert values["world_size"] == 8


def test_detectron2_and_mmdetection_batch_keys() -> None:
    from rag.slots import classify_key

    # detectron2 config/defaults.py: SOLVER.IMS_PER_BATCH is "Number of images per batch across all machines"
    assert classify_key("SOLVER.IMS_PER_BATCH") == "train_batch_size"
    assert classify_key("TEST.IMS_PER_BATCH") is None
    # mmdetection 2.x: data = dict(samples_per_gpu=2, ...) is the batch on each GPU
    assert classify_key("samples_per_gpu") == "train_micro_batch_size_per_gpu"
    assert "train_batch_size" in setup_values("When I set IMS_PER_BATCH = 32, the training takes 2 days.")


def test_an_amount_being_used_is_observed_memory() -> None:
    # F5-TTS #379: the card has 24 GB, 12.4 GB of it in use
    values = setup_values(
        "In my GPU I have 24Gb of Vram, but I see how only 12.4 Gb are being used, my dataset is around 9hours"
    )
    assert values["gpu_memory_gb"] == 24 and values["observed_memory_gb"] == 12.4


def test_the_later_of_two_global_batches_tried_is_the_run() -> None:
    # detectron2 #3520: 32 took 2 days, 128 is estimated at 7: the question is about 128
    values = setup_values(
        "When I set IMS_PER_BATCH = 32, the training takes 2 days. When I set IMS_PER_BATCH = 128, the estimated "
        "training time takes 7 days, which feels very unreasonable"
    )
    assert values["train_batch_size"] == 128
