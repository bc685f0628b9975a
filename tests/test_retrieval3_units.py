"""Fast tests for the retrieval changes of issue #10 (round 3): multi-line launch commands in the query cleaner, the
prose-only view of a query, and glossary forms for how users name multi-node hangs, killed processes, uneven GPU
memory and verl configs. No model is loaded.

The commands are shaped like the ones users paste into issue threads (``nohup deepspeed ... \\`` over many lines,
``FORCE_TORCHRUN=1 NNODES=2 ... llamafactory-cli train x.yaml``).
"""

from __future__ import annotations

from rag.glossary import expand_query, find_terms
from rag.query_clean import clean_query, prose_only

MULTILINE = "\n".join(
    [
        "使用--cache_path加载数据时候直接被kill",
        "nohup deepspeed --num_gpus 8 src/train_bash.py \\",
        "    --model_name_or_path /workspace/models/Yi-6B/ \\",
        "    --finetuning_type full \\",
        "    --cutoff_len 4096 \\",
        "    --bf16 \\",
        "    > train.log 2>&1 &",
        "之后如上用命令行多卡调，但直接kill。",
    ]
)


def test_multiline_command_loses_its_values_on_every_line():
    out = clean_query(MULTILINE)
    assert "/workspace" not in out and "4096" not in out and "train.log" not in out
    assert "--finetuning_type full" in out and "--cutoff_len" in out and "--bf16" in out
    # the prose around the command is untouched
    assert "使用--cache_path加载数据时候直接被kill" in out and "之后如上用命令行多卡调" in out


def test_env_prefixed_and_nohup_commands_are_commands():
    out = clean_query(
        "FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.1.3 llamafactory-cli train qwen_lora.yaml"
    )
    assert "10.0.1.3" not in out and "llamafactory-cli train" in out


def test_flag_lines_after_prose_are_not_taken_for_a_command():
    text = "I set the flags below\n--lr is 1e-4 for me"
    assert clean_query(text) == text


def test_prose_only_keeps_sentences_and_errors_and_drops_configs_and_commands():
    text = "\n".join(
        [
            "多卡训练显存负载不均衡，两张卡打满，其他两张空余很多",
            "per_device_train_batch_size: 8",
            '"gradient_accumulation_steps": 4,',
            "torchrun --nproc_per_node 4 train.py --deepspeed ds.json",
            "--learning_rate 1e-5",
            "[2024-05-01 10:00:00,123] [INFO] [config.py:1063:print] train_batch_size 32",
            "ValueError: Your setup doesn't support bf16/gpu.",
            "I run the notebook on 8 V100 GPUs, but an error occured:",
            "首先我在单卡运行CUDA_VISIBLE_DEVICES=0 python train.py 得到缓存数据。",
        ]
    )
    out = prose_only(text).splitlines()
    assert out == [
        "多卡训练显存负载不均衡，两张卡打满，其他两张空余很多",
        "ValueError: Your setup doesn't support bf16/gpu.",
        "I run the notebook on 8 V100 GPUs, but an error occured:",
        "首先我在单卡运行CUDA_VISIBLE_DEVICES=0 python train.py 得到缓存数据。",
    ]


def _canon(text: str) -> set[str]:
    return {t.en[0] for t in find_terms(text) if t.en}


def test_machines_are_nodes():
    assert "multi-node" in _canon("两台机器就卡在这里不动了，单机多卡可以训练")
    assert "multi-node" in _canon("多机多卡训练时卡住")
    assert "multi-node" not in _canon("单机多卡训练卡住")


def test_killed_in_english_and_chinese():
    assert "process killed" in _canon("loading model was Killed")
    assert "process killed" in _canon("加载数据时候直接被kill")
    assert "process killed" not in _canon("the skill of the model")


def test_uneven_memory_in_english():
    assert "uneven GPU memory" in _canon("with DDP the graphics card memory usage is extremely uneven")
    assert "uneven GPU memory" in _canon("多卡训练，显存分布不均匀")


def test_verl_config_keys_name_verl():
    out = expand_query("in the config `train_prompt_bsz=512` and `trainer.total_epochs=1`, why thousands of steps?")
    assert "verl" in out
    assert "verl" not in expand_query("Trainer total steps are wrong with per_device_train_batch_size 4")


def test_config_keys_alone_do_not_name_verl():
    """``train_batch_size`` is DeepSpeed's, OpenRLHF's and verl's: only verl's own keys name verl."""
    out = expand_query("I am curious about micro_train_batch_size and train_batch_size args in PPO")
    assert "verl" not in out


def test_killed_on_many_gpus_points_at_host_ram_per_process():
    assert "host RAM per process" in _canon("单卡能跑，之后用命令行多卡调，但直接kill")
    assert "host RAM per process" not in _canon("单卡训练时直接被kill")
