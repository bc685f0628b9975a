"""Readers and openings from blind27's misses (stop 52), each on the user's own words from the thread it came from."""

from __future__ import annotations

from typing import Any

from rag.parts import split_message
from tests.message_reading import setup_values


def test_a_command_written_on_the_fence_line_is_read() -> None:
    # LLaMA-Factory #3147: "```deepspeed --num_gpus 8 ../../src/train_bash.py \" — the command starts on the fence's
    # own line, which is no language tag
    text = (
        "全参数微调Qwen1.5-MoE-A2.7似乎卡住了\n\n```deepspeed --num_gpus 8 ../../src/train_bash.py \\\n"
        "    --deepspeed ../deepspeed/ds_z3_config.json \\\n    --per_device_train_batch_size 1 \\\n    --fp16\n```\n"
    )
    assert setup_values(text)["world_size"] == 8
    commands = [p for p in split_message(text) if p.kind == "command"]
    assert commands and commands[0].text.startswith("deepspeed --num_gpus 8")
    # a language tag is still only a tag
    tagged = split_message("run:\n```bash\ndeepspeed --num_gpus 4 train.py\n```\n")
    assert any(p.text.startswith("deepspeed --num_gpus 4") for p in tagged)
    assert not any(p.text.startswith("bash") for p in tagged)


def test_a_cards_size_after_a_slash_a_gpu_with_ram_and_a_discrete_gpu() -> None:
    # green-bit-llm #17, transformers #20348, ChatLM-mini-Chinese #40
    assert setup_values("I try to finetune llama-3 8B bpw_3 on a A100/40GB, but it is out of memory.")["gpu"] == (
        "a100-40gb"
    )
    assert setup_values("fine-tune whisper large on a GPU with 24gb of ram (both single GPU and multi GPU)")[
        "gpu_memory_gb"
    ] == (24.0)
    assert setup_values("初学者自己笔记本跑代码，帮忙指教一下，4G独显。")["gpu_memory_gb"] == 4.0
    # host RAM is not the card's: "a machine with 64GB of ram and a 3090"
    assert "gpu_memory_gb" not in setup_values("I have a machine with 64GB of ram and a 3090")


def test_a_bound_on_gpu_memory_is_no_cards_size() -> None:
    # TigerBot #108: "cpu memory（gpu memory 20G以下）" is what DeepSpeed's estimate needs, the cards are A100s
    values = setup_values(
        "目前基于tigerbot-70b-base，在8 * A100， 内存：500G, 使用deepspeed zero3，全参微调，无法跑通。"
        "请问cpu memory（gpu memory 20G以下）占用还可以优化吗？"
    )
    assert values.get("gpu_memory_gb") != 20.0 and values["gpu"] in ("a100-80gb", "a100-40gb")


def test_chinese_model_parallel_degree_is_tensor_parallel() -> None:
    # CPM-2-Finetune #23
    values = setup_values("我在微调时使用8块12G显存的GPU，模型并行度为8，报显存溢出错误")
    assert values["tensor_parallel_size"] == 8 and values["world_size"] == 8 and values["gpu_memory_gb"] == 12.0


def test_the_documentations_run_is_not_the_users_and_the_card_asked_about_is() -> None:
    # XVERSE-7B #2: the docs' 8 × A800 full fine-tune; the user asks about LoRA on a 4090 24GB
    values = setup_values(
        "我想对该模型进行微调，不知官方有没有测试\n\n在文档中，官方给出的所使用设备与13b同出一致，nvidia*8 80GB 的卡进行"
        "全量微调，这不亚于是在训练模型  8 * Nvidia A800 80 GB + DeepSpeed  我想问是否能用 nvidia 4090 24GB RAM "
        "进行lora权重微调，fp16微调训练"
    )
    assert values["gpu"] == "rtx-4090" and values["gpu_memory_gb"] == 24.0
    assert values["finetune"] == "lora" and "num_params" not in values  # "与13b同出一致" is the docs' other model
    # a paper's run the user asks to reproduce stays the run asked about (CoRe #2)
    paper = setup_values("论文里训练generator，batch size设为16，使用了8张A100，但是默认配置是1张GPU，32batch size。")
    assert paper["world_size"] == 8


def test_memory_that_jumps_during_evaluation_reads_the_peak() -> None:
    # ZipVoice #167: and "batchsize600s" is 600 seconds of audio per batch, no micro batch of 600
    values = setup_values(
        "训练dialog，batchsize600s，在训练时只占了50G，验证时直接到70G，是不是代码哪个地方没有设置好啊"
    )
    assert values["observed_memory_gb"] == 70.0 and "train_micro_batch_size_per_gpu" not in values
    assert setup_values("batch size 8, 3s per step")["train_micro_batch_size_per_gpu"] == 8


def test_an_oom_with_model_and_gpu_but_no_method_opens_with_each_methods_states(bot_without_retrieval: Any) -> None:
    # LMOps #160: a full fine-tune's states alone (~100 GiB) exceed a 32 GB V100, which decides whether the run can fit
    head = bot_without_retrieval.ask(
        "[MiniLLM] sft of llama2-7b out of memory on V100\n\nI use 1 node 4 V100（32G） to sft on llama2-7b, but got out "
        "of memory error. Should I using a more larger GPU? or I have something wrong?"
    ).first_screen.split("\n", 1)[0]
    assert head.startswith("**Model states alone (weights, gradients, optimizer states) per GPU (a V100")
    assert "full fine-tune" in head and "LoRA" in head and "ZeRO-3" in head
    # when every method's states fit the card they are not what ran out: no such opening
    small = bot_without_retrieval.ask(
        "Training Qwen2.5-3B-Instruct on 4 A100 80GB runs out of memory after a few hundred steps. Why?"
    ).first_screen
    assert "by method (the message" not in small
    zh = bot_without_retrieval.ask("用 2 张 3090 训练 llama-2-13b 爆显存了，为什么？").first_screen
    assert zh.startswith("**仅模型状态") and "按微调方式" in zh


def test_the_card_instead_of_which_the_user_trains_is_not_theirs() -> None:
    # rasat #10: "four 24GB graphic cards instead of one 40 GB A100" — "one" is no "on"; the 24 GB cards are theirs
    values = setup_values(
        "Out of memory with default configs/train.json on 4*24GB GPU\n\nI tried to train t5-3b […]\n\n"
        "I tried to use four 24GB graphic cards instead of one 40 GB A100 to train the model, do you have any "
        "experience with torch.distributed.launch to make it happen?"
    )
    assert values["gpu_memory_gb"] == 24.0 and "gpu" not in values
    # a card the user names as theirs keeps its own size
    assert setup_values("I train on one A100 40GB and it OOMs")["gpu"] == "a100-40gb"


def test_whisper_sizes_are_their_published_parameter_counts() -> None:
    # transformers #20348 "fine-tune whisper large on a GPU with 24gb of ram"; OpenAI's whisper README table
    assert setup_values("I've been trying to fine-tune whisper large on a GPU with 24gb of ram")["num_params"] == 1.55e9
    assert setup_values("finetuning openai/whisper-large-v3-turbo OOM")["num_params"] == 809e6
    assert setup_values("微调 whisper-medium 显存不够")["num_params"] == 769e6
    assert "num_params" not in setup_values("whisper inference is slow on my laptop")


def test_the_gpus_a_process_selects_from_are_not_the_runs_count() -> None:
    # kaldi #4819: every nnet3 process picks one of the visible GPUs
    values = setup_values(
        "how to reduce the memory used by the training process?\n\n"
        "LOG (nnet3-chain-train2[5.5.0~1-be22]:SelectGpuIdAuto():cu-device.cc:438) Selecting from 8 GPUs\n"
        "LOG (nnet3-chain-train2[5.5.0~1-be22]:SelectGpuIdAuto():cu-device.cc:453) cudaSetDevice(0): "
        "Tesla V100-PCIE-32GB        free:28113M, used:4397M, total:32510M, free/total:0.864752\n"
    )
    assert values.get("world_size") != 8 and values["gpu"] == "v100-32gb"


def test_models_named_without_a_size_take_their_published_totals() -> None:
    # Qwen-VL #242, starcoder #14 (santacoder), CPM-2-Finetune #23, CogVLM / CogVLM2, MOSS
    assert setup_values("How much GPU memory does the full-parameter finetuning of Qwen-VL request?")["num_params"] == (
        9.6e9
    )
    assert setup_values("fine-tuning sanatacoder on three datasets, now santacoder with PEFT")["num_params"] == 1.1e9
    assert setup_values("请问CPM-2 100000模型微调需要多大显存")["num_params"] == 11e9
    assert setup_values("CogVLM 用 lora 微调要多少显存")["num_params"] == 17e9
    assert setup_values("CogVLM2 全量微调 8 张 A100 够吗")["num_params"] == 19e9
    assert setup_values("MOSS 微调需要几张 A100")["num_params"] == 16e9
    # a size in the name still wins, and Qwen2-VL is not Qwen-VL
    assert setup_values("cogvlm-17b lora")["num_params"] == 17e9
    assert setup_values("Qwen2-VL-7B lora").get("num_params") != 9.6e9


def test_asking_the_reader_about_a_model_is_no_chatbot_asked() -> None:
    # ms-swift #1048: "请问DeepSeek-v2-Chat SFT大概需要多少资源" names the model; "问了deepseek，说…" asks a chatbot
    assert setup_values("[HELP] 请问DeepSeek-v2-Chat SFT大概需要多少资源\n\n8*80G够用吗")["model"] == "deepseek-v2"
    assert "model" not in setup_values("问了deepseek，说单张4090D训练没有问题")


def test_quadro_turing_cards_are_presets_without_bf16() -> None:
    # openvla #103: "GPU: Quadro RTX 8000" … "Current CUDA Device does not support bfloat16"
    from calculators.presets import get_gpu

    assert setup_values("- GPU: Quadro RTX 8000\n")["gpu"] == "quadro-rtx-8000"
    assert get_gpu("Quadro RTX 8000").memory_gib == 48 and not get_gpu("rtx8000").bf16
    assert get_gpu("Quadro RTX 6000").memory_gib == 24
    assert setup_values("RTX 6000 Ada 48GB")["gpu"] == "rtx-6000-ada"  # the Ada card stays the Ada card


def test_how_many_cards_a_fine_tune_needs_is_a_fit_question() -> None:
    # CPM-Bee #15: "比如说至少多少内存" is an example, not a comparison that reports a symptom; "最少要几张3090呀" asks
    from rag.acts import rule_act

    text = (
        "微调GPU需求\n\n微调10B模型有推荐的GPU要求么，比如说至少多少内存l? 20G内存和单张3090是推理的需求吧，如果要跑"
        "finetune 10B模型，最少要几张3090呀, 支持QLora, ptuning这种节约计算的形式么?"
    )
    assert rule_act(split_message(text)) == "fit"
    # "前几张卡运行" tells which cards ran, it asks nothing (LLaMA-Factory #2664)
    told = "设置了4,5,6,7号卡，但是为什么实际执行的时候还是以0,1,2,3前四张卡运行的。不管设置几号卡，程序总是默认前几张卡运行"
    assert rule_act(split_message(told)) != "fit"


def test_gradient_accumulation_alone_gets_no_deepspeed_complaint(bot_without_retrieval: Any) -> None:
    # Lightning #4653: no DeepSpeed anywhere, so DeepSpeed's "Either train_batch_size or train_micro_batch_size_per_gpu
    # needs to be provided" answers a config nobody pasted
    answer = bot_without_retrieval.ask(
        "accumulate_grad_batches ignores last batches in epoch if number of steps is not divisible by "
        "accumulate_grad_batches?\n\nSuppose I have accumulate_grad_batches=256 and number of steps in my epoch is 260."
        " Loss is updated only on step number 256 every epoch. I suppose it means that the last 4 batches grads are "
        "ignored. Is that correct?"
    )
    assert "Either train_batch_size" not in answer.text and "DeepSpeed raises" not in answer.first_screen


def test_states_that_leave_a_card_almost_nothing_open_an_oom_and_no_other_models_size_does(
    bot_without_retrieval: Any,
) -> None:
    # transformers #20348: whisper large's full fine-tune states (1.55B × 16 B = 23.1 GiB) leave 0.9 GiB of a 24 GB card
    head = bot_without_retrieval.ask(
        "Ability to fine-tune whisper large on a GPU with 24 gb of ram\n\nI've been trying to fine-tune whisper large on"
        " a GPU with 24gb of ram (both single GPU and multi GPU) and I run out of memory while training (with batch "
        "size set to 1 and max-length of audio set to 2.5 seconds)."
    ).first_screen.split("\n", 1)[0]
    assert head.startswith("**Model states alone") and "full fine-tune 23.1 GiB, leaving 0.90 GiB" in head
    assert "7B" not in head


def test_a_stated_tensor_parallel_degree_is_said_to_be_outside_the_estimate(bot_without_retrieval: Any) -> None:
    # CPM-2-Finetune #23: the calculator models no tensor parallelism; the figures must not pass for TP-sharded ones
    answer = bot_without_retrieval.ask(
        "请问CPM-2模型微调需要多大显存，我在微调时使用8块12G显存的GPU，模型并行度为8，报显存溢出错误"
    )
    assert "张量并行（TP 8）不在估算内" in answer.first_screen
    assert "tensor parallelism" not in bot_without_retrieval.ask("Full fine-tune llama-2-7b on 8 A100 80GB").text
