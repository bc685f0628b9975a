"""Readers added in stop 45, one per class of message the blind20 threads (now dev) showed; each case is the thread's
own wording."""

from __future__ import annotations

from rag.parts import split_message
from rag.setup import read_setup
from rag.slots import extract_slots

# InternVL #434: the fine-tune script sets the global batch and the per-device batch as shell variables and divides
# them; its comment block is the default config's, not the run's.
INTERNVL_434 = """我使用deepspeed框架在16*A100对InternVL2-40B调试时，出现OOM的错误。

```
GPUS=16
GPUS_PER_NODE=8
BATCH_SIZE=64
PER_DEVICE_BATCH_SIZE=1
GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))

# number of gpus: 16
# batch size per gpu: 2
# gradient accumulation steps: 4
# total batch size: 128
# epoch: 1
deepspeed --num_gpus ${NUM_PROCESSES} --master_port=${MASTER_PORT} \\
  internvl/train/internvl_chat_finetune.py
```"""


def test_a_bare_batch_size_beside_a_per_device_one_is_the_global_batch() -> None:
    setup, _ = read_setup(split_message(INTERNVL_434))
    assert setup.get("train_batch_size") == 64
    assert setup.get("train_micro_batch_size_per_gpu") == 1


def test_hf_per_device_flag_in_a_sentence_leaves_a_bare_batch_size_alone() -> None:
    # ms-swift #4710: the title's "batch_size 为1" is the per-GPU batch they cannot get, not a global batch of 1
    slots = extract_slots(
        "Deepspeed zero3 多 GPU 训练没法设置 batch_size 为1\n\n训练脚本指定：`--per_device_train_batch_size 1`时实际 "
        "batch_size = 2，导致显存 OOM，我需要设置整体的 batch_size 为 1，应该怎么办呢？",
        prose=True,
    )
    assert slots.train_micro_batch_size_per_gpu == 1 and slots.train_batch_size is None


def test_one_sample_per_card_is_the_micro_batch_and_makes_batch_size_global() -> None:
    # Light-R1 #39
    slots = extract_slots(
        "我使用的是和您一样的配置：12nodes96GPU, 保持batch_size为96，即每张卡放一个sample。", prose=True
    )
    assert slots.train_micro_batch_size_per_gpu == 1
    assert slots.train_batch_size == 96


def test_a_per_card_batch_key_stays_per_card() -> None:
    # ms-swift #1825: "单卡batchsize为4" is the per-card batch, not a global batch of 4 beside "batchsize为384"
    slots = extract_slots(
        "例如batchsize为384的实验，12机(单卡batchsize为4)和6机 (单卡batchsize为8)训练同样数据量的耗时几乎相同",
        prose=True,
    )
    assert slots.train_micro_batch_size_per_gpu == 4 and slots.train_batch_size in (None, 384)


def test_the_per_card_share_of_a_global_batch_is_the_micro_batch() -> None:
    # FlagEmbedding #153: the paper's batch_size=19200 over 24 cards
    slots = extract_slots(
        "在此基础上如何实现19200这么大的batch_size呢（假设24卡，单卡bs也需要19200/24=800, 即使是80G的机器也扛不住）。",
        prose=True,
    )
    assert slots.train_micro_batch_size_per_gpu == 800 and slots.world_size == 24


def test_an_example_in_a_script_comment_is_not_the_run() -> None:
    # Megatron-LM #509: a 7B script whose comments name llama-13b's sizes
    slots = extract_slots(
        "I checked this issue in both the 7b model and the 600M model.\n"
        "# 7 B\nHIDDEN_SIZE=4096 # e.g. llama-13b: 5120\nNUM_LAYERS=32 # e.g. llama-13b: 40\n"
    )
    assert slots.model is None and slots.num_params == 7e9


def test_pyslowfast_shards_are_machines() -> None:
    # SlowFast #145
    slots = extract_slots("python tools/run_net.py --cfg configs/Kinetics/C2D_8x8_R50.yaml --shard_id 1 --num_shards 2")
    assert slots.num_nodes == 2
    assert extract_slots("dataset.save_to_disk(path, num_shards=4)").num_nodes is None


# ms-swift #4177: the launch command pasted between single backticks over many lines
SWIFT_4177 = """qwen3 14b zero3_offload oom

训练命令行
`swift sft \\
    --model ${model_path} \\
    --train_type full \\
    --torch_dtype bfloat16 \\
    --per_device_train_batch_size 1 \\
    --gradient_accumulation_steps 1 \\
    --max_length 16384 \\
    --deepspeed 'zero3_offload' \\
    --packing True \\
    --attn_impl flash_attn`
多机多卡使用zero3_offload训练14b模型，每次到第一个epoch完就爆显存oom"""


def test_a_multi_line_command_in_single_backticks_is_a_command() -> None:
    from rag.parts import split_message

    parts = split_message(SWIFT_4177)
    assert [p.kind for p in parts] == ["prose", "command", "prose"]
    assert parts[1].text.startswith("swift sft") and parts[1].text.endswith("--attn_impl flash_attn")


def test_ms_swift_checkpointing_default_is_shown_as_the_frameworks() -> None:
    from rag.compose import setup_line
    from rag.setup import FRAMEWORK_DEFAULT_EVIDENCE

    setup, _ = read_setup(split_message(SWIFT_4177))
    assert setup.get("gradient_checkpointing") == "full"
    assert setup.values["gradient_checkpointing"].evidence == FRAMEWORK_DEFAULT_EVIDENCE
    assert setup.get("seq_len") == 16384 and setup.get("finetune") == "full"
    assert "梯度检查点 full（框架默认值" in setup_line(setup, "zh")
    explicit, _ = read_setup(split_message(SWIFT_4177.replace("--packing True", "--gradient_checkpointing true")))
    assert explicit.values["gradient_checkpointing"].evidence != FRAMEWORK_DEFAULT_EVIDENCE
