"""Readers from blind32's misses (stop 57), each on the user's own words from the thread it came from."""

from __future__ import annotations

from rag.acts import rule_act
from rag.parts import split_message
from tests.message_reading import setup_values


def test_a_shipped_config_s_gpu_count_is_not_the_user_s() -> None:
    # mmdetection #4993: the 1x schedule's 8 GPUs, then the user's one Titan XP
    values = setup_values(
        "In original COCO 1x schedule configuration, the learning rate is 0.02 for 8 GPUs and 2 imgs per GPU.\n"
        "I have one Titan XP GPU now.\n"
        "So following the Linear Scaling Rule, I changed the learning rate to 0.0025 and kept 2 imgs per GPU."
    )
    assert values["world_size"] == 1
    assert values["train_micro_batch_size_per_gpu"] == 2
    # the user's own run in the same words still counts
    assert setup_values("I train on 8 GPUs with 2 imgs per GPU")["world_size"] == 8


def test_reasonable_misspelt_still_asks_whether_it_is_normal() -> None:
    # mmdetection #4993
    parts = split_message("Got better results when trained with smaller LR/batch. Is it resonable to get such result?")
    assert rule_act(parts) == "is_normal"


def test_amp_names_mixed_precision_and_fp32_compared_with_it_is_the_baseline() -> None:
    # Paddle #42436: AMP O1 on a V100, compared with float32
    values = setup_values("使用AMP O1混合精度训练，混合精度训练和float32训练速度差不多（甚至稍微慢一些）")
    assert values["precision"] == "amp-fp16"
    # AMP with a dtype named is that dtype
    assert setup_values("torch.cuda.amp autocast with bf16, loss is nan")["precision"] == "amp-bf16"
    # fp32 alone is still fp32
    assert setup_values("我用float32训练，速度很慢")["precision"] == "fp32"


def test_a_count_a_recipe_needs_beside_the_one_card_the_user_owns() -> None:
    # TinyZero #33
    values = setup_values(
        "why do u need 2GPUs to run Qwen2.5 3B?\n\nBut my 4090 is 24GB ram, it's more than enough to run a 3B model right?"
    )
    assert values["world_size"] == 1
    # without the user's own card the needed count stays the one to compute with
    assert setup_values("why do you need 2 GPUs to run Qwen2.5 3B?")["world_size"] == 2


def test_batch_size_with_a_doubled_underscore_and_a_perfective() -> None:
    # transformers_tasks #48
    assert setup_values("为什么我batch__size调到了1,24g的显存还是不够")["train_micro_batch_size_per_gpu"] == 1
    assert setup_values("bs改成了4 还是爆显存")["train_micro_batch_size_per_gpu"] == 4


def test_detectron_rois_per_image_is_not_the_image_batch() -> None:
    # Detectron #106: BATCH_SIZE_PER_IM is RoIs sampled per image
    values = setup_values("I've modified the yaml to use single GPU and set `BATCH_SIZE_PER_IM: 128`")
    assert "train_micro_batch_size_per_gpu" not in values
    assert values["world_size"] == 1
    assert "train_micro_batch_size_per_gpu" not in setup_values("MODEL:\n  ROI_HEADS:\n    BATCH_SIZE_PER_IMAGE: 512\n")


def test_a_document_s_gpu_count_is_not_the_run_of_the_card_the_user_asks_about() -> None:
    # XVERSE-7B #2: the docs' 8 × A800, then "是否能用 nvidia 4090 … 进行lora"
    values = setup_values(
        "在文档中，官方给出的所使用设备与13b同出一致，nvidia*8 80GB 的卡进行全量微调，这不亚于是在训练模型  "
        "8 * Nvidia A800 80 GB + DeepSpeed  我想问是否能用 nvidia 4090 24GB RAM 进行lora权重微调，fp16微调训练"
    )
    assert "world_size" not in values
    assert values["gpu"] == "rtx-4090"
    # a paper's count with no card of the user's own is still the run asked about (insightface #261)
    assert setup_values("In the paper, you use batchsize = 512 and 8 GPUs. So does it mean 8 * 512?")["world_size"] == 8


def test_an_oom_of_a_model_without_a_preset_opens_with_what_its_states_leave() -> None:
    from rag import Assistant

    # litgpt #165: the bf16 base of a 40B model alone fills most of an 80 GB card
    answer = Assistant().ask(
        "falcon-40b out of memory\n\nHi! I am trying to finetne falcon-40b with a single A100 GPU of 80GB memory. I "
        "tried with decreasing the micro batch size to be 1 however it is still OOM for both adapter_v2 and lora with "
        "bfloat16-mixed / fp-16. Any suggestion on how to solve this issue without using multiple GPU? Thanks a lot!"
    )
    first = answer.first_screen.split("\n", 1)[0]
    assert "74.9 GiB" in first and "80.0 GiB" in first and "5.11 GiB" in first
    # the same run on a card its states leave most of: no such opening (activations, not states, would be the question)
    answer = Assistant().ask("falcon-7b lora out of memory on a single A100 80GB with micro batch 1 and bf16, why?")
    assert "leaving about" not in answer.first_screen
    # the method not stated (gpt-neox #616): an assumed full fine-tune's states are no figure for their run
    answer = Assistant().ask("Cuda OOM with 20B model on 8 x NVIDIA A100 80GB, only ZeRO stage 1 works. Why?")
    assert "leaving about" not in answer.first_screen and "does not fit" not in answer.first_screen.split("\n")[0]


def test_a_data_preparation_command_is_no_gpu_count() -> None:
    # detectron2 #987: `python prepare_panoptic_fpn.py`, then the training launch with --num-gpus 4
    from tests.message_reading import setup_conflicts

    text = (
        "* For dataset\npython prepare_panoptic_fpn.py\n\n* run training\n"
        "python tools/train_net.py --num-gpus 4 --config-file configs/COCO-PanopticSegmentation/panoptic_fpn_R_101_3x.yaml"
    )
    assert setup_values(text)["world_size"] == 4
    assert "world_size" not in setup_conflicts(text)
    # a plain python training script is still one process
    assert setup_values("python train.py --lr 1e-4")["world_size"] == 1
