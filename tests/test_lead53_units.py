"""Readers and acts from blind28's misses (stop 53), each on the user's own words from the thread it came from."""

from __future__ import annotations

from typing import Any

from rag.acts import rule_act
from rag.parts import split_message
from tests.message_reading import setup_values


def test_nodes_with_their_gpus_per_server_in_brackets() -> None:
    # RepVGG #42: four servers of eight GPUs each
    values = setup_values("我使用4server(8gpu/server)进行分布式训练，目前设置参数为 (batch_size 1024, lr 0.4)")
    assert values["num_nodes"] == 4 and values["world_size"] == 32
    # LLaMA-Factory #5169: the run is the 8 × A100; the 2 nodes of 16 A100s were another try, and 16 is their total
    values = setup_values(
        "Hi, I'm trying to use qlora+fsdp for the llama3.1 70B model with 8xA100(640G). […]\n\n"
        "Also tried lora with deepspeed zero3 on 2 nodes(16xA100 80G), also got OOM."
    )
    assert values["world_size"] in (8, 16)


def test_nodes_times_gpus_times_memory_then_the_card() -> None:
    # ms-swift #2228: 16 nodes × 8 GPUs × 80 GB H800
    values = setup_values("我的机器是16*8*80G H800，应该不至于在max length=1024的情况下出现oom")
    assert values["num_nodes"] == 16 and values["world_size"] == 128 and values["gpu"] == "h800-80gb"


def test_two_precisions_offered_as_alternatives_name_neither_run() -> None:
    # transformers #30100: the run set fp16=True; "fp16/bf16=True" asks which style is mixed precision
    text = (
        "I loaded the modle in `float16` by setting `torch_dtype=torch.float16` in `.from_pretrained()`，and I set "
        "`fp16=True` in `TrainingArguments`, but an error occurred: **'Value Error: Attempting to scale FPl6 "
        "gradients.'**\n\nthen I tried to load the molde in `float32`，still keeping `fp16=True`, it worked "
        "successfully! But I found that the usage of the memory of GPU is the same as using `fp16=False`. So I think "
        "the mixed-precision-training was not used, right?\n\nI want to know: 1) model in float32, TrainingArguments "
        "setting fp16/bf16=True or 2) model in float16/bfloat16, TrainingArguments setting fp16/bf16=True, which style "
        "is mixed precision training?"
    )
    assert setup_values(text)["precision"] in ("amp-fp16", "fp16-mixed")
    # a flag switched on and off in one sentence is still a comparison, not the run
    assert setup_values("`use_fp16=true` and `use_fp16=false` require the same memory").get("precision") != "amp-fp16"


def test_the_model_changed_to_is_the_run() -> None:
    # verl #4494
    values = setup_values("I use training script from here, and just change qwen2-7b to qwen3-0.6b.")
    assert values["model"] == "qwen3-0.6b"
    assert setup_values("把qwen2-7b换成qwen3-0.6b后显存不够")["model"] == "qwen3-0.6b"


def test_another_familys_sized_model_is_not_a_llama() -> None:
    # litgpt #124: falcon-7B trained now, llama-7B trained before
    values = setup_values(
        "I'm using the pretrain code to train falcon-7B, I've already used lit-llama and trained llama-7B."
    )
    assert values.get("model") != "llama-2-7b" and values["num_params"] == 7e9
    assert setup_values("llama 7B 微调")["model"] == "llama-2-7b"


def test_the_card_it_works_on_is_the_comparison() -> None:
    # EasyR1 #156
    assert setup_values("标准配置下几个batch内存就会被耗光，H100上未出现该问题，A100上会出现")["gpu"].startswith("a100")
    assert setup_values("A100 works fine but on a V100 it OOMs")["gpu"].startswith("v100")


def test_batch_per_gpu_is_the_micro_batch() -> None:
    # FSTR #3
    assert setup_values("请问batch per gpu=1的时候，大约每张卡会占多大显存呀？")["train_micro_batch_size_per_gpu"] == 1


def test_fit_questions_as_people_ask_them() -> None:
    # LLaVA #842, Infinity #128, FSTR #3, ms-swift #2074
    for text in (
        "[Question] May I ask if 8 * 3090 supports fine-tuning training\n\n### Question\n\n"
        "May I ask if 8 * 3090 supports fine-tuning training",
        "When full-parameter fine-tuning the Infinity-2B model, are four 3090 GPUs (with a memory of 24GB each * 4) "
        "sufficient?",
        "显存占用？\n\n作者您好，请问batch per gpu=1的时候，大约每张卡会占多大显存呀？8卡2080ti能训练最优模型吗？谢谢",
        "I need to train llama 3.1 70B in 8 bit Qlora or something using 4 * A6000 GPUS = 192 GB total VRAM.\n"
        "Can I do it?\n\nOr what is the best way to train it using 192 GB total VRAM?",
        "我想在单卡24G上全参微调7B模型。可以吗？",
    ):
        assert rule_act(split_message(text)) == "fit", text
    # a bare "can I do it?" after a sentence that names no run asks nothing about memory
    assert rule_act(split_message("I want to log the loss every 10 steps. Can I do it?")) != "fit"


def test_the_author_greeted_is_not_the_author_quoted() -> None:
    # FSTR #3: "作者您好，请问batch per gpu=1的时候…" asks about the user's own batch of one
    values = setup_values(
        "作者您好，请问batch per gpu=1的时候，大约每张卡会占多大显存呀？8卡2080ti能训练最优模型吗？谢谢"
    )
    assert values["train_micro_batch_size_per_gpu"] == 1 and values["world_size"] == 8


def test_an_oom_that_came_after_the_run_trained_gets_no_does_not_fit(bot_without_retrieval: Any) -> None:
    # ms-swift #2228: full fine-tune of qwen2-7b-vl on 16 × 8 H800, OOM only on some samples; no sharding stated, so the
    # estimate assumes none, which the run that trained until then contradicts
    text = (
        "我全量微调qwen2-7b-vl时候发现，即使我的max length开的很低，仍然会在一定数据出现OOM的情况。\n\n"
        "我的机器是16*8*80G H800，应该不至于在max length=1024的情况下出现oom"
    )
    head = bot_without_retrieval.ask(text).first_screen
    assert "放不下" not in head.split("\n")[0]
    # the same run without "only on some samples" still opens with the estimate's verdict
    plain = bot_without_retrieval.ask("我全量微调qwen2-7b，机器是16*8*80G H800，出现OOM").first_screen
    assert "放不下" in plain.split("\n")[0]


def test_a_batch_of_the_users_micro_alone_opens_with_no_arithmetic(bot_without_retrieval: Any) -> None:
    # litgpt #265: "micro 4 × GA 1 (assumed) × 1 GPU = 4" restates the user's one number
    head = bot_without_retrieval.ask(
        "Training with finetune/lora.py takes longer with larger micro_batch_size\n\nFine tuning with "
        "micro_batch_size set to 4 takes just a little less than 4x the time with micro_batch_size set to 1 on an RTX "
        "4090. Should max_iters be set to 50000 / micro_batch_size?"
    ).first_screen
    assert "× GA 1 × 1" not in head
    # with the user's own accumulation the arithmetic stays
    assert (
        "32"
        in bot_without_retrieval.ask(
            "micro batch 4, gradient accumulation 8, one GPU: what is my global batch?"
        ).first_screen
    )


def test_more_gpus_asked_as_the_way_out_of_an_oom_gets_the_pooling_verdict(bot_without_retrieval: Any) -> None:
    # InstantMesh #69
    head = bot_without_retrieval.ask(
        "GPU requirements for Finetuning\n\nI have 4 A10G 24 GB GPUs and tried to use 1 example for finetuning for now, "
        "but I am still getting the CUDA out of memory error. Question is that for each GPU is there any GPU memory "
        "requirement or if I increase the number of 24 GB GPUs the code will run?"
    ).first_screen
    assert head.startswith("**No. More GPUs do not pool their memory")


def test_a_saving_the_run_showed_is_no_belief_to_correct(bot_without_retrieval: Any) -> None:
    # DeepSpeed #1061: fp16 reduced memory (observed); ZeRO-2 with offload raised it
    head = bot_without_retrieval.ask(
        "When using deepspeed, I configured the FP16 parameter, which reduced the memory of my large model training "
        "graphics. However, after adding zero's second-stage function, the memory was exceeded. Why? Can't these two "
        "functions be used at the same time?"
    ).first_screen
    assert "does not halve" not in head and "barely shrinks" not in head
    # a remedy the user tried that cannot work is still answered as one (transformers #20855)
    tried = bot_without_retrieval.ask(
        "I had reduced to even the smallest possible value for `per_device_gradient_accumulation_steps=2` with "
        "`per_device_train_batch_size=1`, but it still give memory resource exhaustion OOM error."
    ).first_screen
    assert tried.startswith("**What you tried does not lower memory the way you expected")


def test_a_batch_of_one_that_errors_names_batchnorm_to_retrieval() -> None:
    # ResNeSt #116: "batch设2时显存不够，设1时会报错" — an error (not an OOM) at batch 1 is BatchNorm's one-sample batch
    from rag.glossary import expand_query

    assert "BatchNorm" in expand_query("batch设2时显存不够，设1时会报错，请问该修改那些部分")
    assert "BatchNorm" in expand_query("with batch size 1 I get an error")
    assert "BatchNorm" not in expand_query("batch size 16 gives an OOM error")
