"""Readers added in stop 38, each from a dev question of its class (fast unit tier)."""

from __future__ import annotations

from calculators.diagnose import diagnose
from rag.parts import split_message
from rag.setup import read_setup

# Lightning#6206 (dev): Trainer(gpus=2, num_nodes=2) under SLURM without --ntasks-per-node; both nodes print ranks 0/1.
LIGHTNING_REPEATED = (
    "GPU available: True, used: True\nTPU available: None, using: 0 TPU cores\n"
    "GPU available: True, used: True\nTPU available: None, using: 0 TPU cores\n"
    "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/4\ninitializing ddp: GLOBAL_RANK: 1, MEMBER: 2/4\n"
    "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/4\ninitializing ddp: GLOBAL_RANK: 0, MEMBER: 1/4"
)


def _setup(message: str):
    setup, _ = read_setup(split_message(message))
    return setup


def test_lightning_start_up_lines_are_a_log_and_their_world_size_beats_the_prose():
    message = f"Each node has two GPUs and I set gpus=2, num_nodes=2. It hangs here:\n\n```\n{LIGHTNING_REPEATED}\n```"
    parts = split_message(message)
    assert any(p.kind == "log" and "GLOBAL_RANK" in p.text for p in parts)
    world = _setup(message).values["world_size"]
    assert (world.value, world.source) == (4, "log")


def test_lightning_one_process_line_is_the_world_size_not_the_devices_setting():
    # litgpt#506 (dev): "I have set the devices to 8", and the log says one process started
    message = (
        "Finetune LLAMA-2-70b with Lora on 8 A100(80G). I have set the devices to 8. However, it still runs into OOM. "
        "In the initialization, it shows\n\n`Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/1\n"
        + "-"
        * 40
        + "\ndistributed_backend=nccl\nAll distributed processes registered. Starting with 1 processes`\n\n"
        "which seems to only use one of the GPUs?"
    )
    assert _setup(message).values["world_size"].value == 1


def test_deepspeed_world_info_dict_counts_the_gpus_it_lists():
    # LLaMA-Factory#1670 (dev): `deepspeed --include localhost:0,3`, and the launcher's log
    log = (
        "[2023-11-29 02:47:32,331] [INFO] [launch.py:145:main] WORLD INFO DICT: {'localhost': [0, 3]}\n"
        "[2023-11-29 02:47:32,332] [INFO] [launch.py:162:main] global_rank_mapping=defaultdict(<class 'list'>, "
        "{'localhost': [0, 1]})"
    )
    assert _setup(f"global_rank_mapping 还是从 gpu0 开始\n\n```\n{log}\n```").values["world_size"].value == 2
    two_hosts = (
        "[2024-01-01 00:00:00,000] [INFO] [launch.py:145:main] WORLD INFO DICT: {'a': [0, 1, 2, 3], 'b': [0, 1]}"
    )
    assert _setup(f"why?\n\n```\n{two_hosts}\n```").values["world_size"].value == 6


def test_repeated_lightning_ranks_diagnose_every_node_thinking_it_is_node_zero():
    d = diagnose(LIGHTNING_REPEATED)
    cause = next(c for c in d.causes if c.id == "launch.lightning_ranks_repeated")
    assert cause.card_ids == ["slurm-tasks-per-gpu-launch"]
    assert "0, 1" in cause.because_en and "4" in cause.because_en


def test_distinct_lightning_ranks_are_no_diagnosis():
    log = "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\ninitializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2"
    assert not any(c.id == "launch.lightning_ranks_repeated" for c in diagnose(log).causes)


def test_a_count_after_the_card_beats_the_article_before_it():
    # axolotl#1108 (dev): "I used an A6000 (48GiB) * 8 device for DPO training"
    from rag.slots import extract_slots

    assert extract_slots("I used an A6000 (48GiB) * 8 device for DPO training", prose=True).world_size == 8
    assert extract_slots("I have an A100 80GB and it OOMs", prose=True).world_size == 1


def test_each_has_n_gpus_after_named_nodes_is_per_node():
    # discuss.pytorch #72769 (dev): "two nodes: node-A and node-B, each has 4gpus"
    from rag.slots import extract_slots

    slots = extract_slots(
        "Assume we have two nodes: node-A and node-B, each has 4gpus. We set batch_size = 256", prose=True
    )
    assert (slots.num_nodes, slots.world_size) == (2, 8)


def test_an_even_clause_belongs_to_the_failing_run_before_it():
    # FastChat#3310 (dev): OOM "even in batch size 1", against a working run at 16 with another model
    from rag import runs

    text = (
        "I'm trying to fine-tune LLama3-8B. However, it always raises out-of-memory errors, even in batch size 1 "
        "(4*A100). I can fine-tune LLama2-7b with batch size 16."
    )
    choice = runs.choices(text)["train_micro_batch_size_per_gpu"]
    assert (choice.chosen.value, choice.why) == (1, "fails")
    assert _setup(text).values["train_micro_batch_size_per_gpu"].value == 1


def test_fine_tune_is_not_a_report_that_the_run_is_fine():
    from rag import runs

    assert runs._outcome("I'm trying to fine-tune LLama3-8B") is None
    assert runs._outcome("it works fine") == "works"


# --- host RAM at load (calculators.host_ram), from Llama-Chinese #278 (dev): 70B on 4 nodes × 16 V100 32G, 1 TB RAM


def test_host_ram_is_the_subject_only_when_it_is_the_problem():
    from rag.intents import about_host_ram_at_load

    assert about_host_ram_at_load("内存1T。跑13B模型都没问题，跑70B的sft和lora都报内存不足？", host_ram_stated=True)
    assert not about_host_ram_at_load(
        "跑13B模型都没问题，跑70B的sft和lora都报内存不足？"
    )  # "内存" alone: maybe the GPU's
    assert not about_host_ram_at_load("llama2-7b模型用单机2张卡跑不动报内存不够")
    assert not about_host_ram_at_load("I'm training on 8 A100s with 80GB of RAM each which is more than enough space.")
    assert about_host_ram_at_load("70B模型sft和lora需要多大显存和内存")
    assert about_host_ram_at_load("Host RAM runs out while loading the checkpoint shards on 8 GPUs")
    assert not about_host_ram_at_load("每张RTX4090卡，24G显存，但依然提示内存不足")  # the card's memory
    assert not about_host_ram_at_load("I have 64GB RAM and 2x 3090. CUDA out of memory on step 1.")  # a spec in passing
    assert not about_host_ram_at_load("RAM usage grows every epoch with num_workers=8")  # creeping, not the load


def test_the_load_time_figure_needs_a_model_and_several_processes_per_node():
    from rag.intents import detect_intents
    from rag.planner import plan_calls

    text = "70B模型sft和lora需要多大显存和内存\n单机16卡*32G显存 * 4机\n内存1T\n跑70B的sft和lora都报内存不足"
    setup = _setup(text)
    assert setup.values["host_ram_gb"].value == 1024
    plan = plan_calls(setup, "diagnose", detect_intents(text), [], text, host_ram=True)
    call = next(c for c in plan.calls if c.name == "host_ram_load")
    assert call.arguments == {"num_params": 70e9, "processes_per_node": 16, "host_ram_gb": 1024.0}
    one = _setup("7B 单卡 内存不足")
    assert not any(
        c.name == "host_ram_load" for c in plan_calls(one, "diagnose", detect_intents(""), [], host_ram=True).calls
    )
    offload = _setup(
        '8卡训练 llama-2-7b 内存不足\n\n```json\n{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}\n```'
    )
    assert offload.get("offload_optimizer") is True
    assert not any(
        c.name == "host_ram_load" for c in plan_calls(offload, "diagnose", detect_intents(""), [], host_ram=True).calls
    )


def test_a_host_ram_report_opens_with_the_figure_per_node(assistant):
    text = "70B模型sft和lora需要多大显存和内存\n\n目前机器：\n单机16卡*32G显存 * 4机\n内存1T\n跑13B模型都没问题，跑70B的sft和lora都报内存不足？"
    answer = assistant.ask(text)
    first = answer.first_screen
    assert first.startswith("**加载时主机内存，每节点 16 个进程 × 70B 参数")
    assert "每节点 4,172.3 GiB（超过你的 1,024 GB）" in first
    assert answer.sources[0].card_id == "host-ram-load-scales-with-processes"


def test_one_occupied_card_is_not_a_count_of_one():
    # LLaMA-Factory #24 (dev): "用两张4090微调13b … 我有一张卡已经被占用了15G显存"
    from rag.slots import extract_slots

    text = "用两张4090微调13b的belle出现oom，单卡则不会\n\n但是我有一张卡已经被占用了15G显存，还剩8g左右"
    assert extract_slots(text, prose=True).world_size == 2


def test_the_cards_a_run_uses_of_those_the_machine_has():
    # Chinese-Vicuna #202 (dev): "有4张卡,单张是32G，我配置了3张"
    from rag.slots import extract_slots

    assert extract_slots("显卡是v100，有4张卡,单张是32G，我配置了3张", prose=True).world_size == 3
    assert extract_slots("I have 8 GPUs but only use 4 for training", prose=True).world_size == 4
    assert extract_slots("8卡训练，用了2个小时", prose=True).world_size == 8  # hours, not cards


def test_a_pasted_config_diff_is_read_as_applied():
    # GPT-NeoX #1354 (dev): "why GPU OOM with zero3+offload" above a diff of the config
    message = (
        "why GPU OOM with zero3+offload for 13B with 4*2080ti 22g cards\n\n```\n"
        '   "zero_optimization": {\n-    "stage": 1,\n+    "stage": 3,\n     "allgather_partitions": true\n   }\n```'
    )
    assert _setup(message).values["zero_stage"].value == 3


def test_a_run_that_starts_as_expected_works_and_the_failing_one_is_asked_about():
    # LLaMA-Factory #46 (dev): lora starts "as expected", full goes OOM
    text = (
        "When I use finetuning_type='lora', the training is starting as expected. But when I use "
        "finetuning_type='full', it's leading to OOM."
    )
    assert _setup(text).values["finetune"].value == "full"


def test_host_ram_size_is_the_hosts_not_a_cards():
    from rag.slots import extract_slots

    assert extract_slots("目前机器：单机16卡*32G显存 * 4机\n内存1T", prose=True).host_ram_gb == 1024
    assert extract_slots("I only have 64GB of RAM on this machine", prose=True).host_ram_gb == 64
    assert extract_slots("I'm training on 8 A100s with 80GB of RAM each", prose=True).host_ram_gb is None
    assert extract_slots("3090 24G内存不够", prose=True).host_ram_gb is None
    assert extract_slots("24G显卡内存不足", prose=True).host_ram_gb is None


def test_a_rich_traceback_and_its_wrapped_assertion_are_one_error():
    # StarCoder #77 (dev): Rich's boxed traceback, then DeepSpeed's batch assertion wrapped over three lines
    message = (
        "hardware requirements for finetuning\n\n"
        "│ ❱  942 │   │   self._batch_assertion()                              │\n"
        "│ /opt/conda/lib/python3.7/site-packages/deepspeed/runtime/config.py: │\n"
        "╰─────────────────────────────────────────────────────────────────────╯\n"
        "AssertionError: Check batch related parameters. train_batch_size is not\n"
        "equal to micro_batch_per_gpu * gradient_acc_step * world_size 64 != 4 *\n"
        "8 * 1\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exi"
    )
    parts = split_message(message)
    assert parts[1].kind == "traceback" and parts[1].text.endswith("8 * 1")
    setup = _setup(message)
    assert [
        setup.get(k) for k in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
    ] == [
        64,
        4,
        8,
    ]
    assert any(c.id == "ds.world_size_mismatch" for c in diagnose(parts[1].text).causes)


def test_a_plain_traceback_keeps_its_wrapped_exception_line():
    message = (
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    engine = init()\n'
        "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu *\n"
        "gradient_acc_step * world_size 256 != 4 * 8 * 1\nthen my prose"
    )
    tb = split_message(message)[0]
    assert tb.kind == "traceback" and tb.text.endswith("256 != 4 * 8 * 1")


def test_a_vl_models_oom_cites_the_visual_tokens_card(assistant):
    # ms-swift #3285 (dev): Qwen2-VL-7B OOM on one GPU in a multi-node ms-swift run; retrieval read NCCL and launch words
    text = (
        "swift 3.x 多模态模型训练多机多卡 OOM，2.x 正常\n\n在多节点训练 Qwen2-VL-7B 的时候，swift 3.x 环境多机多卡训练 OOM，"
        "主节点显示 GPU 4 OOM，而且其他的GPU显存占用非常低10个g都不到\n\n切换到 2.x 环境后训练正常"
    )
    cited = [s.card_id for s in assistant.ask(text).sources]
    assert "vlm-image-tokens-memory" in cited[:3]


def test_a_text_model_oom_does_not_cite_it(assistant):
    cited = [s.card_id for s in assistant.ask("llama-2-7b 全参微调 8 张 A100 OOM，怎么办？").sources]
    assert "vlm-image-tokens-memory" not in cited


def test_a_grpo_loss_of_zero_opens_with_the_grpo_card(assistant):
    # Tina #1 (dev): a TRL-based GRPO recipe whose message names no stack; the card's lead must not be kept from it
    text = (
        "The loss has always been 0\n\nHello, I would like to ask that during the process of training and reproducing "
        "with the default configuration of recipes/DeepSeek-R1-Distill-Qwen-1.5B/grpo/model_curated_deepscaler.yaml, I "
        "found that the loss was still 0 after 300 steps. Is this phenomenon normal?"
    )
    answer = assistant.ask(text)
    assert answer.sources[0].card_id == "trl-grpo-loss-near-zero"
    assert answer.first_screen.startswith("**A logged GRPO loss of 0.0")
