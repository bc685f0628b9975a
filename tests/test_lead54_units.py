"""Readers from blind29's misses (stop 54), each on the user's own words from the thread it came from."""

from __future__ import annotations

import pytest

from rag.compose import OOM_MID_RUN
from tests.message_reading import setup_values


@pytest.fixture(scope="module")
def bot():  # type: ignore[no-untyped-def]
    from rag import Assistant

    return Assistant()


def test_a_yes_or_no_question_form_negates_nothing() -> None:
    # TextClassifier #1: "有没尝试" asks whether the author tried it
    assert (
        setup_values("大佬有没尝试gradient checkpoint+Nvidia Apex联合使用的效果？")["gradient_checkpointing"] == "full"
    )
    assert setup_values("我没开gradient checkpoint，显存不够")["gradient_checkpointing"] == "none"


def test_fairseq_batch_formula_with_markdown_escaped_stars() -> None:
    # PLBART #19
    values = setup_values("the real batch size is max-sentences * update-freq * num_of_gpus=32\\*60\\*8=15360?")
    assert values["train_micro_batch_size_per_gpu"] == 32
    assert values["gradient_accumulation_steps"] == 60
    assert values["world_size"] == 8 and values["train_batch_size"] == 15360


def test_yolov5_nominal_batch_and_accumulate_steps_will_be() -> None:
    # YOLOv5 #464
    values = setup_values(
        "For example, if our nominal batch size, nbs=64 and actual batch size, bs=16, then accumulate steps will be 4."
    )
    assert values["train_batch_size"] == 64
    assert values["train_micro_batch_size_per_gpu"] == 16 and values["gradient_accumulation_steps"] == 4


def test_the_larger_of_two_gpu_counts_compared_is_the_run() -> None:
    # XLM #324: an epoch takes as long on 2 GPUs as on 1
    text = "the time it takes for an epoch is almost the same with 1 or 2 GPUs (same brand and model).\n\nThe logs with 1 GPU:"
    assert setup_values(text)["world_size"] == 2
    assert setup_values("用2卡或4卡训练速度一样")["world_size"] == 4
    # a batch beside a GPU count is no pair of counts (insightface #261)
    assert setup_values("In the paper, you use batchsize = 512 and 8 GPUs.")["world_size"] == 8


def test_nodes_named_by_their_card() -> None:
    # OpenRLHF #332: two machines of A800s, not two GPUs
    values = setup_values("How much memory(RAM) is required to train a 70B Llama2 model with two 80G A800 nodes?")
    assert values["num_nodes"] == 2 and values.get("world_size") != 2
    assert setup_values("I have 2 A100 nodes with 8 GPUs each")["world_size"] == 16
    # one machine of eight cards stays one machine
    values = setup_values("running on an 8xA100 machine with accelerate")
    assert values["world_size"] == 8 and values.get("num_nodes") in (None, 1)


def test_a_loss_scaler_line_in_the_prose_is_fp16() -> None:
    # MM-Diffusion #23 (OpenAI's guided-diffusion fp16_util.py)
    text = "I have a single A10 for training the model, from the start of the training, it says:\n\nFound NaN, decreased lg_loss_scale to 19.0\n\nis that normal?"
    assert setup_values(text)["precision"] == "amp-fp16"


def test_the_papers_card_and_models_are_not_the_users() -> None:
    # Contrastive-Clustering #49
    values = setup_values(
        "您好，想请问一下，我看到您论文中使用的显卡是Nvidia TITAN RTX 24G，不管是使用resnet34还是resnet50时batchsize都能达到"
        "256，我用24G的3090复现时resnet50的batchsize设置为256会报cuda out of memory，请问有什么解决方法吗？"
    )
    assert values["gpu"] == "rtx-3090" and values["model_text"] == "resnet50"


def test_the_model_changed_away_from_is_not_read_from_its_log_file_either() -> None:
    # verl #4494: the recipe's log file names the model the user changed away from
    text = (
        "I use training script from here [qwen2-7b-fsdp2.log](https://github.com/x/verl-data/blob/experiments/gsm8k/"
        "qwen2-7b-fsdp2.log), and just change qwen2-7b to qwen3-0.6b."
    )
    assert setup_values(text)["model"] == "qwen3-0.6b"


def test_lomo_data_max_length_is_the_sequence_length() -> None:
    assert setup_values("```yaml\ndata_max_length: 1024\nper_device_train_batch_size: 1\n```")["seq_len"] == 1024


def test_an_oom_later_in_the_run_is_not_read_inside_other_words() -> None:
    assert OOM_MID_RUN.search("仍然会在一定数据出现OOM")
    assert OOM_MID_RUN.search("after 3 epochs it OOMs")
    assert not OOM_MID_RUN.search("after a few steps there is no room left")
    # FastChat #693: training worked; the OOM came at the final save
    assert OOM_MID_RUN.search(
        "The CUDA out of memory error occurred while saving in the last step of training 13B model"
    )
    assert OOM_MID_RUN.search("训练完保存模型的时候爆显存")


def test_a_lora_rank_of_zero_is_a_full_fine_tune() -> None:
    # ColossalAI #4470: ColossalAI Chat's reward-model script, LoRA off by its rank
    command = (
        "torchrun --standalone --nproc_per_node=1 train_reward_model.py \\\n--model llama \\\n--batch_size 1 \\\n"
        "--max_len 2048 \\\n--lora_rank 0 \\\n--loss_fn 'log_sig'"
    )
    assert setup_values(command)["finetune"] == "full"
    assert setup_values("python train.py --lora_rank 8 --use_lora True")["finetune"] == "lora"


def test_what_zero_saves_is_no_breakdown_for_a_message_without_zero(bot) -> None:  # type: ignore[no-untyped-def]
    # RealNet #2 asked what training a diffusion model needs; the ZeRO stages opened the breakdown
    answer = bot.ask(
        "请问训练diffusion model 需要多大的显存\n\n我对diffusion model了解不多，请问训练diffusion model 大概需要多大的显存，感谢您！"
    )
    assert "Stage 1" not in answer.first_screen


def test_a_precision_setting_asked_for_gets_no_memory_headline(bot) -> None:  # type: ignore[no-untyped-def]
    # verl #4494
    answer = bot.ask(
        "How to set model dtype bf16 when train models by GRPO?\n\nI use training script from here "
        "[qwen2-7b-fsdp2.log](https://github.com/x/verl-data/blob/experiments/gsm8k/qwen2-7b-fsdp2.log), and just "
        "change qwen2-7b to qwen3-0.6b. I see the warning: Flash Attention 2.0 only supports torch.float16 and "
        "torch.bfloat16 dtypes, but the current dype in Qwen2ForCausalLM is torch.float32.\n\n"
        "What should I do to set model's type bf16 in training?"
    )
    assert "GiB per GPU" not in answer.first_screen.split("\n")[0]


def test_gemma_1_presets_count_what_transformers_builds() -> None:
    # LLaMA-Factory #2580 fine-tuned Gemma-2b: a 256k vocabulary, so its logits are what runs out of memory
    import torch
    import transformers

    from calculators.memory import count_params
    from calculators.presets import MODEL_PRESETS, preset_for_name

    for name in ("gemma-2b", "gemma-7b"):
        shape = MODEL_PRESETS[name]
        config = transformers.GemmaConfig(
            hidden_size=shape.hidden_size,
            num_hidden_layers=shape.num_layers,
            num_attention_heads=shape.num_attention_heads,
            num_key_value_heads=shape.num_key_value_heads,
            intermediate_size=shape.intermediate_size,
            head_dim=256,
            vocab_size=shape.vocab_size,
        )
        with torch.device("meta"):
            model = transformers.GemmaForCausalLM(config)
        assert count_params(shape) == sum(p.numel() for p in model.parameters()), name
    assert preset_for_name("google/gemma-2b-it") == "gemma-2b"
    assert preset_for_name("gemma-1.1-7b-it") == "gemma-7b"
    assert preset_for_name("Gemma2-9B") == "gemma-2-9b"


def test_detectron2_images_per_batch_each_gpu_and_its_config_node() -> None:
    # detectron2 #102
    values = setup_values('Where to change "each GPU 2 images per batch" ?')
    assert values["train_micro_batch_size_per_gpu"] == 2
    values = setup_values(
        "do you mean if I train with 4GPUS and keep _C.SOLVER.IMS_PER_BATCH = 16 , then it will change?"
    )
    assert values["train_batch_size"] == 16 and values["world_size"] == 4


def test_a_long_run_of_word_characters_reads_in_linear_time() -> None:
    # _LORA_OFF and _FILE_NAME rescanned a run of word characters from each of its characters (quadratic) before they
    # matched from a run's start only (same matches)
    import time

    from rag.parts import split_message
    from rag.setup import read_setup

    for text in ("max-" * 7500, "2卡或" * 10000):
        start = time.perf_counter()
        read_setup(split_message(text[:30000]))
        assert time.perf_counter() - start < 6.0
