"""Readers and openings added in stop 47, one per class of message the blind22 threads (now dev) and the dev set's
myth-card openings showed; each case is the thread's own wording."""

from __future__ import annotations

import pytest

from rag.cards import load_cards
from rag.intents import about_host_ram_at_load, detect_misconceptions
from rag.slots import extract_slots


@pytest.fixture(scope="module")
def bot():  # type: ignore[no-untyped-def]
    from rag import Assistant

    return Assistant()


def test_myth_cards_are_known_by_their_title() -> None:
    cards = {c.id: c for c in load_cards()}
    assert cards["myth-more-gpus-pools-memory"].is_myth
    assert not cards["zero-stages-memory-savings"].is_myth


def test_a_myth_card_is_no_breakdown_of_memory(bot) -> None:  # type: ignore[no-untyped-def]
    # CPM-2-Finetune #4 opened "this is what the memory is made of: Memory is not pooled automatically."
    answer = bot.ask("finetune的最小配置是？\n\n单机4卡，4*22G显存是否够用？")
    assert "显存由这几部分组成" not in answer.first_screen or "不会自动合并" not in answer.first_screen


def test_a_card_that_only_mentions_memory_is_no_breakdown(bot) -> None:  # type: ignore[no-untyped-def]
    # OOTDiffusion #176 opened its breakdown with ZeRO-Offload's "offload_optimizer moves …"
    answer = bot.ask(
        "请问三张4090（24GB）可以对模型进行训练么？\n\n作者您好：\n我准备对您的模型进行训练，但我没有A100训练卡，"
        "请问我用3张4090卡可以进行训练么？若可以，如何设置Accelerate等相关参数呢，麻烦您教教我~"
    )
    assert "offload_optimizer" not in answer.first_screen.split("_")[0]


def test_gpus_counted_with_kuai_pool_their_memory_only_in_the_belief() -> None:
    # MiniGPT-4 #143
    keys = [
        r.key
        for r in detect_misconceptions(
            "请问如果一台主机上使用两块RTX 4090显卡，两块显卡的内存能否合并使用？\n\n目前4090显卡只有24GB内存，"
            "能否在一块主板上插上两块4090显卡，使得两块显卡的内存合并使用？"
        )
    ]
    assert "more_gpus_pool_memory" in keys
    assert "more_gpus_pool_memory" not in [r.key for r in detect_misconceptions("我在一块4090上训练，显存不够")]


def test_running_memory_is_the_hosts_ram() -> None:
    # Qwen-VL #455: "运行内存" is the host's RAM, its size and its trouble
    text = "使用的两台服务器都是128G的运行内存,观察最高占用到117G就停止了,求问大家多卡微调成功的内存都是多大的?"
    assert extract_slots(text, prose=True).host_ram_gb == 128
    assert about_host_ram_at_load(text)


def test_openrlhf_pretrain_flag_names_the_model_and_cards_times_size() -> None:
    # OpenRLHF #784: "train_ppo_llama_ray" in a log file name is no model; `--pretrain` is
    slots = extract_slots(
        '3机，24卡*80G，出现了OOM\nJOBLOG="$(realpath .)/train_ppo_llama_ray-${JOB_NAME}.log"\n'
        "   --reward_pretrain Meta-Llama-3-8B-Instruct \\\n   --pretrain Qwen2.5-3B-Instruct \\\n",
        prose=False,
    )
    assert slots.model_text == "Qwen2.5-3B-Instruct"
    prose = extract_slots("3机，24卡*80G，出现了OOM", prose=True)
    assert (prose.gpu_memory_gb, prose.world_size) == (80, 24)


def test_lr_zero_before_deepspeed_steps_is_the_loss_scale_warmup(bot) -> None:  # type: ignore[no-untyped-def]
    # ms-swift #943
    answer = bot.ask(
        "训练qwen14b，前面lr一直为0\n\ntried to get lr value before scheduler/optimizer started stepping, returning lr=0"
    )
    assert answer.sources and answer.sources[0].card_id == "deepspeed-fp16-overflow-skipped-steps"


def test_amp_that_did_not_lower_memory_is_a_remedy_that_failed(bot) -> None:  # type: ignore[no-untyped-def]
    # automatic-mixed-precision-tutorials-pytorch #1
    answer = bot.ask(
        "Memory usage was not decreased when using amp\n\nHi, \n\nI was trying your code couple of days ago. It turned "
        "out when i used the '--amp' parameter, the memory usage was not decreased (around 10G of of my 2080Ti 11G). "
        "The training time was also almost the same without amp. \n\nHow did you get the results? \n\nThank you."
    )
    assert answer.first_screen.startswith("**What you tried does not lower memory")
    assert "fp32 master weights" in answer.first_screen


def test_llamafactory_names_no_llama_for_a_bare_size() -> None:
    # LLaMA-Factory #5815: "72B模型 … 用llamafactory" was sized as llama-2-70b
    slots = extract_slots(
        "需要finetune 72B模型+32k context  用llamafactory总是爆显存，大家有什么好的办法吗？", prose=True
    )
    assert (slots.model, slots.num_params) == (None, 72e9)
    assert extract_slots("I fine-tune a 7B llama model", prose=True).model == "llama-2-7b"


def test_a_size_hyphened_to_a_family_name_is_the_models() -> None:
    # Fengshenbang-LM #111: "闻仲2.0-GPT2-3.5B-chinese" is a 3.5B model on GPT-2's architecture, not GPT-2 (124M)
    slots = extract_slots("Finetune闻仲2.0-GPT2-3.5B-chinese显存爆炸，似乎offload_param没有生效", prose=True)
    assert (slots.model, slots.num_params) == (None, 3.5e9)
    assert extract_slots("I train gpt2 on my data", prose=True).model == "gpt2"


def test_qwen_underscore_sizes_and_file_names_glued_to_chinese() -> None:
    # LLaMA-Factory #2064: "Qwen-1_8B" is 1.8B, not 8B
    assert extract_slots("--model_name_or_path /Qwen-1_8B --do_train", prose=False).num_params == 1.8e9
    # LLaMA-Factory #3757: "llama3_lora_sft.yaml看起来是做sft的" is a file name, the model is Qwen1.5-1.8B
    slots = extract_slots(
        "其中examples/lora_multi_gpu/llama3_lora_sft.yaml看起来是做sft的\n4块40GB A100， 对Qwen1.5-1.8B做增量预训练都会OOM！！！",
        prose=True,
    )
    assert slots.model_text == "Qwen1.5-1.8B" and slots.num_params == 1.8e9


def test_machines_of_cards_times_size() -> None:
    # LLaMA-Factory #1551: "2台2*80G的A800" is two machines of two 80 GB cards
    slots = extract_slots("您好，我现在用2台2*80G的A800多机多卡模式来微调baichuan2-13B-Chat模型", prose=True)
    assert (slots.num_nodes, slots.world_size, slots.gpu_memory_gb) == (2, 4, 80)


def test_markdown_bold_in_prose_is_read_as_written() -> None:
    # Lightning #3706
    slots = extract_slots(
        "However when I use **2 GPUs** with **DDP** backend and **batch size** of **512** on each GPU.", prose=True
    )
    assert (slots.world_size, slots.train_micro_batch_size_per_gpu) == (2, 512)
    # … a power is no emphasis, and a "resulting" batch is the total (open-unlearning #164)
    assert extract_slots("loss scale 2**16 and 2**8 with 4 GPUs", prose=True).world_size == 4
    table = (
        "- **Hardware:** 2 GPUs  \n- **Details:** 8 per device, 4 grad accum steps    \n- **Resulting Batch Size:** 32"
    )
    assert extract_slots(table, prose=True).train_micro_batch_size_per_gpu == 8
