"""Fixed by the lead in stop 36: two runs with different GPU layouts in one message, and value readers from the dev
set's contradictions (blind11, moved from the held-out set at the start of the stop, and the older dev files). Each is
a class of wording, not one message.
"""

from __future__ import annotations

from typing import Any

from rag import runs
from rag.parts import split_message
from rag.setup import read_setup
from rag.slots import extract_slots
from tests.message_reading import setup_of


def _known(text: str) -> dict[str, Any]:
    return setup_of(text).known()


# ---- two runs, two GPU layouts: the failing one is the one asked about ------------------------------------------------
def test_a_layout_that_fails_beside_one_that_works_is_the_runs() -> None:
    # huggingface/transformers#14878 (title): 1 node works, 4 nodes OOM
    setup = setup_of("Model trains on 1 node 8xA100 but hits OOM in 4 nodes 8xA100")
    assert (setup.get("num_nodes"), setup.get("world_size")) == (4, 32)
    assert [c.value for c in setup.conflicts["world_size"]] == [8]  # the working run, shown next to it
    # modelscope/ms-swift#6549: "4机共32张 … 正常，16机共128张 … 卡在保存断点"
    known = _known(
        "在4机共32张H100的情况下，保存断点正常，可以合并lora权重。在16机共128张H100的情况下卡在保存断点位置不再更新日志。"
    )
    assert (known["num_nodes"], known["world_size"]) == (16, 128)


def test_one_layout_alone_is_read_as_before() -> None:
    assert runs.choices("I train on 2 nodes with 8 GPUs each and it OOMs.").get(runs.LAYOUT_KEY) is None
    # a single GPU beside nodes is no layout ("单卡24G" is per-GPU wording): no node count, no candidate
    assert runs.LAYOUT_KEY not in runs.candidates("单卡24G能跑，4卡就OOM")


def test_a_clause_that_only_counts_nodes_reads_on_into_the_gpu_count() -> None:
    # Megatron-LLaMA#11: "2个节点，8张卡（每个节点4卡）也跑不动"
    found = runs.candidates("单机2张卡跑不动，2个节点，8张卡（每个节点4卡）也跑不动")[runs.LAYOUT_KEY]
    assert [(c.value, c.outcome) for c in found] == [((1, 2), "fails"), ((2, 8), "fails")]


def test_a_failure_mentioned_again_without_an_outcome_is_still_the_failing_run() -> None:
    # the fails rule yields only to a run reported to work with the same value, not to a plain mention
    found = runs.candidates(
        "Model trains on 1 node 8xA100 but hits OOM in 4 nodes 8xA100. I train on 32 A100s split into 4 nodes."
    )[runs.LAYOUT_KEY]
    choice = runs.choose(found)
    assert choice is not None and choice.chosen.value == (4, 32) and choice.why == "fails"


def test_start_and_failure_words_in_chinese_and_english() -> None:
    assert runs.candidates("单服务器双4090微调成功，多机多卡2台服务器4张4090微调启动失败")[runs.LAYOUT_KEY][
        -1
    ].outcome == ("fails")
    assert runs.candidates("8 GPUs on 2 nodes hangs at init")[runs.LAYOUT_KEY][0].outcome == "fails"


# ---- node counts and totals ----------------------------------------------------------------------------------------
def test_nodes_then_a_per_node_product_with_the_cards_name() -> None:
    assert (extract_slots("hits OOM in 4 nodes 8xA100", prose=True).world_size) == 32
    assert (extract_slots("4 nodes of 8xA100", prose=True).world_size) == 32


def test_a_total_written_with_gong_or_totally_is_the_total() -> None:
    slots = extract_slots("在4机共32张H100的情况下", prose=True)
    assert (slots.num_nodes, slots.world_size) == (4, 32)
    assert extract_slots("2机共8卡", prose=True).world_size == 8
    assert extract_slots("then I need 4 nodes with totally 32 gpus?", prose=True).world_size == 32
    assert extract_slots("2机8卡", prose=True).world_size == 16  # unchanged: 2 × 8 (LLaMA-Factory #7066)


def test_a_launch_that_counts_the_nodes_settles_an_ambiguous_count() -> None:
    # ms-swift#2715: "2台服务器4张4090" with `NNODES=2 NPROC_PER_NODE=2`: 4 in all, not 2 × 4
    text = (
        "多机多卡2台服务器4张4090微调启动失败，CUDA out of memory\n\n"
        "NNODES=2 NODE_RANK=0 NPROC_PER_NODE=2 swift sft --model /m/Qwen2.5-14B --train_type lora --max_length 1024\n"
    )
    assert _known(text)["world_size"] == 4
    # a node count left to the platform (`NNODES="${WORLD_SIZE}"`) settles nothing: the launch's 8 is per node
    text = (
        "在16机共128张H100的情况下卡在保存断点位置。\n\n"
        'NNODES="${WORLD_SIZE}" NPROC_PER_NODE=8 megatron sft --load m --train_type lora\n'
    )
    assert _known(text)["world_size"] == 128


def test_slurm_gres_is_each_nodes_gpus() -> None:
    # haotian-liu/LLaVA#655: `srun --gres=gpu:4 --ntasks-per-node=1 --nodes=2 deepspeed …`: 8 GPUs, not 2 tasks
    assert extract_slots("srun --gres=gpu:4 --ntasks-per-node=1 --nodes=2 deepspeed train.py").world_size == 8
    assert extract_slots("#SBATCH --gres=gpu:a100:8\n#SBATCH --nodes=4").world_size == 32


# ---- the devices a library requires are not the user's -----------------------------------------------------------------
def test_a_required_visible_devices_list_is_not_the_runs() -> None:
    # unslothai/unsloth#53: the warning names the current list (the user's) and the one Unsloth requires
    text = (
        "Hi, I got the following warning when using a single machine for multi-gpu training\n"
        "`UserWarning: Unsloth: 'CUDA_VISIBLE_DEVICES' is currently 0,1,2,3 but we require 'CUDA_VISIBLE_DEVICES=0'`\n"
        "How does this affect my training?"
    )
    assert _known(text)["world_size"] == 4


# ---- a shell script pasted without a fence -----------------------------------------------------------------------------
SCRIPT_7119 = """以下是我用megatron lora sft qwen3vl-235b-a22b 模型的配置（8x8H800-80G)，但是如果seq_len调整到 32k以上会OOM，可以怎么优化么：

#!/bin/bash
set -euo pipefail
# 单机模式检测，如果没有 MASTER_ADDR，则默认为单机
if [ -z "${MASTER_ADDR:-}" ]; then
    export NNODES=1
    export WORLD_SIZE=8
fi
echo "=== 分布式配置信息 ==="
MICRO_BATCH_SIZE=${MICRO_BATCH_SIZE:-1}
"""


def test_a_pasted_shell_script_is_code_not_prose() -> None:
    # ms-swift#7119: the script's single-node fallback is not the user's 8 × 8 H800
    parts = split_message(SCRIPT_7119)
    assert [p.kind for p in parts] == ["prose", "code"]
    assert parts[1].text.startswith("#!/bin/bash") and parts[1].text.rstrip().endswith(":-1}")
    known = read_setup(parts)[0].known()
    assert (known["num_nodes"], known["world_size"], known["seq_len"]) == (8, 64, 32768)


def test_prose_after_a_script_ends_it() -> None:
    parts = split_message("#!/bin/bash\nexport NNODES=2\ntorchrun train.py\n\n为什么第二个节点一直卡住不动呢？")
    assert [p.kind for p in parts][-1] == "prose"


# ---- wordings -------------------------------------------------------------------------------------------------------
def test_chinese_verbs_of_changing_a_setting() -> None:
    assert extract_slots("seq_len调整到32k以上会OOM", prose=True).seq_len == 32768
    assert extract_slots("batch size增加到16就OOM", prose=True).train_micro_batch_size_per_gpu == 16
    assert extract_slots("bs降到2可以跑", prose=True).train_micro_batch_size_per_gpu == 2


def test_a_projects_published_result_is_not_the_users_run() -> None:
    # NVIDIA/Megatron-LM#1031: the README's 768 GPUs beside the user's 128
    text = (
        "I saw that in your README, the throughput for 70B using TP8 PP2 and DP 48 on 768GPUs was 420.5 TFLOPs/s/GPU\n"
        "However, running on 70B on TP8 PP8 and DP2 on 128 GPUs (H100s) with activation checkpointing was only 296.5."
    )
    assert _known(text)["world_size"] == 128


def test_an_amount_then_usage_is_observed_memory() -> None:
    # unslothai/unsloth#5752
    assert extract_slots("I'm getting nearly OOM'd (constant ~15gb usage)", prose=True).observed_memory_gb == 15
    assert extract_slots("an 80GB usage limit", prose=True).observed_memory_gb is None


# ---- a Windows batch file's launch ---------------------------------------------------------------------------------
BAT_410 = """你好，我使用的是windows四卡3090机器，每张显卡24G显存，因为是win平台，就写了一个bat脚本来运行
`@echo off
set CUDA_VISIBLE_DEVICES=0,1,2,3

call python  supervised_finetuning.py ^
    --model_type baichuan ^
    --model_name_or_path .\\pretrainModel ^
    --per_device_train_batch_size 4 ^
    --use_peft True ^
    --model_max_length 6144 ^
    --gradient_accumulation_steps 1 ^
    --lora_rank 8 ^
    --torch_dtype float16 ^
    --fp16 ^
    --device_map auto
`"""


def test_a_windows_cmd_launch_with_caret_continuations_is_one_command() -> None:
    # shibing624/MedicalGPT#410: before, the lines were split into prose and one-flag "configs", and the doctor
    # computed a full fine-tune in fp32 for a LoRA run with --fp16
    parts = split_message(BAT_410)
    commands = [p for p in parts if p.kind == "command"]
    assert len(commands) == 1 and "--device_map auto" in commands[0].text
    assert commands[0].text.startswith("set CUDA_VISIBLE_DEVICES=0,1,2,3\ncall python")  # the variable it exports too
    known = read_setup(parts)[0].known()
    assert (known["finetune"], known["precision"], known["seq_len"], known["world_size"]) == (
        "lora",
        "amp-fp16",
        6144,
        4,
    )


def test_the_config_doctor_reads_a_caret_continued_command() -> None:
    from calculators.configs.text import _parse_flags

    read = _parse_flags(
        "call python train.py ^\n    --per_device_train_batch_size 4 ^\n    --fp16 ^\n    --use_peft True"
    )
    assert read.args["per_device_train_batch_size"] == 4 and read.args["fp16"] is True and read.args["use_peft"] is True


def test_gpt2_large_and_xl_are_presets_with_their_published_shapes() -> None:
    # huggingface/transformers#14878 fine-tunes gpt2-large: before, "no preset … activations unknown"
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from calculators.presets import MODEL_PRESETS, count_params

    for name, (h, layers, heads) in {"gpt2-large": (1280, 36, 20), "gpt2-xl": (1600, 48, 25)}.items():
        with torch.device("meta"):  # the real model's parameters, no memory
            model = GPT2LMHeadModel(GPT2Config(n_embd=h, n_layer=layers, n_head=heads))
        assert count_params(MODEL_PRESETS[name]) == sum(p.numel() for p in model.parameters())
    assert extract_slots("--model_name_or_path gpt2-large").model == "gpt2-large"


def test_the_full_weights_note_is_not_given_for_fsdp_that_shards_them() -> None:
    # open-r1#579's answer said "ZeRO-0: every one of the 128 GPUs still holds the full weights" beside FULL_SHARD's
    # 0.95 GiB of weights per GPU
    from calculators.memory import estimate_memory

    def notes(fsdp: str) -> list[str]:
        est = estimate_memory(
            {"model": "qwen2.5-7b", "gpu": "h100-80gb", "world_size": 8, "fsdp": fsdp, "finetune": "full"}
        )
        return [n for n in est.notes_en if "full weights" in n]

    assert notes("full_shard") == [] and notes("hybrid_shard") == []
    assert notes("no_shard") and notes("no_shard")[0].startswith("FSDP NO_SHARD")
    assert notes("none") and notes("none")[0].startswith("ZeRO-0")


RECIPE_579 = """I tried to run context 20k (32B) in the recipe with a single node and OOM got an error.

# Config for 16 nodes of 8 H100s with FSDP1
# Model arguments
model_name_or_path: Qwen/Qwen2.5-32B-Instruct
torch_dtype: bfloat16
bf16: true
gradient_accumulation_steps: 8
max_seq_length: 20480
"""


def test_a_recipes_gpu_count_is_scaled_to_the_nodes_the_user_states() -> None:
    # huggingface/open-r1#579: the recipe's header is for 16 nodes of 8; the user runs it on one node
    from rag.compose import conflicts_line
    from rag.setup import PER_NODE_EVIDENCE

    setup = setup_of(RECIPE_579)
    assert (setup.get("num_nodes"), setup.get("world_size")) == (1, 8)
    assert setup.values["world_size"].evidence == PER_NODE_EVIDENCE
    assert "8 per node × the 1 node(s) you state (the config itself says 128)" in conflicts_line(setup, "en")
    # stated in the prose, the count is the user's and nothing is scaled
    assert _known("I run it on 1 node with 4 GPUs.\n\n" + RECIPE_579.split("\n\n", 1)[1])["world_size"] == 4


def test_single_gpu_beside_multi_node_is_per_gpu_wording() -> None:
    # open-r1#579: "multi-node and single-node on a single GPU should, occupancy does not seem to be different"
    text = (
        "under data parallelism, multi-node and single-node on a single GPU should, occupancy does not seem to differ"
    )
    assert extract_slots(text, prose=True).world_size is None
    assert extract_slots("I only have a single GPU", prose=True).world_size == 1


def test_an_exported_visible_devices_line_belongs_to_the_launch_after_it() -> None:
    # hiyouga/LLaMA-Factory#140: `export CUDA_VISIBLE_DEVICES=0,…,7` then `python src/train_sft.py …` (one process,
    # the eight GPUs the user gave it); "单机单卡正常" is the working run it is compared with
    text = (
        "单机多卡sft训练报错\n\n单机单卡正常\n\n单机多卡，设置CUDA_VISIBLE_DEVICES后训练报错：\n\n"
        "export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\npython src/train_sft.py \\\n    --finetuning_type lora \\\n"
        "    --per_device_train_batch_size 4\n"
    )
    parts = split_message(text)
    assert [p.kind for p in parts][-1] == "command" and parts[-1].text.startswith("export CUDA_VISIBLE_DEVICES")
    assert read_setup(parts)[0].get("world_size") == 8
    assert extract_slots("单机多卡sft训练报错，单机单卡正常", prose=True).world_size is None
    assert extract_slots("单机单卡能跑", prose=True).world_size == 1


def test_per_node_counts_beside_a_node_count() -> None:
    # EleutherAI/gpt-neox#734, hiyouga/LLaMA-Factory#406, volcengine/verl#3358, QwenLM/Qwen-VL#204, OpenRLHF#812
    assert (
        extract_slots("I want train a 13B model with 4 nodes, each node have 8*A100 GPUs", prose=True).world_size == 32
    )
    slots = extract_slots("10结点，每个结点8张卡", prose=True)
    assert (slots.num_nodes, slots.world_size) == (10, 80)
    assert extract_slots("When I use two nodes and each nodes with 16 GPUs", prose=True).world_size == 32
    assert extract_slots("两个节点，一个节点4 GPU，正常训练。", prose=True).world_size == 8
    assert extract_slots("training with two computational nodes. each node has 8 gpus.", prose=True).world_size == 16
    assert extract_slots("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8").world_size == 16


def test_problem_and_not_work_report_a_failing_run() -> None:
    # meta-llama/llama-cookbook#223 (title): "problem with 8 gpus one node but it's ok with 4 gpus one node"
    setup = setup_of("Run finetuning.py problem with 8 gpus one node but it's ok with 4 gpus one node")
    assert setup.get("world_size") == 8
    assert runs._outcome("It not work") == "fails" and runs._outcome("it does not work") == "fails"
    assert runs._outcome("It works") == "works" and runs._outcome("8卡有问题") == "fails"


def test_one_visible_device_beside_the_gpus_the_user_owns_is_the_run() -> None:
    # 01-ai/Yi#392: "只是先指定使用第二块gpu,因为我这边是4块A100" with `CUDA_VISIBLE_DEVICES=1 bash run_sft.sh`
    text = "运行官网代码进行微调，只是先指定使用底二块gpu,因为我这边是4块A100,代码如下:\n```\nCUDA_VISIBLE_DEVICES=1 bash run.sh\n```"
    assert _known(text)["world_size"] == 1


def test_retrieval_still_sees_the_exported_variables_where_they_were() -> None:
    from rag.parts import retrieval_query

    parts = split_message(
        "单机多卡，设置CUDA_VISIBLE_DEVICES后训练报错：\n\nexport CUDA_VISIBLE_DEVICES=0,1\npython train.py --bf16\n\n为什么？"
    )
    query = retrieval_query(parts)
    assert "export CUDA_VISIBLE_DEVICES=0,1" in query and "--bf16" not in query
    assert query.index("报错") < query.index("export") < query.index("为什么")


def test_is_it_normal_wordings() -> None:
    # bitsandbytes#465, tablemaster-mmocr#32, pai-megatron-patch#382
    from rag.acts import rule_act

    for text in (
        "When shifting from fp16 to fp4 I have an immediate x2 performance drop. Is it an expected behaviour or I have "
        "a problem on my side?",
        "at first step of 100, grad_norm is nan. isn't it nomal?",
        "8卡的时候每张卡跑4个microbatch，16卡每张卡跑2个microbatch，loss对不上，sft的代码存在问题吗，还是本身就该是这样？",
    ):
        assert rule_act(split_message(text)) == "is_normal", text
