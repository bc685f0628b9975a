"""ms-swift launch commands (`swift sft ...`): read as ms-swift, not as a plain TrainingArguments script.

ms-swift starts torchrun only when NPROC_PER_NODE or NNODES is set (swift/cli/main.py use_torchrun); without them one
process splits the model over every visible GPU with device_map (swift/utils/env.py is_mp). Without --torch_dtype it
trains in the model config's dtype (bf16 or fp16), never TrainingArguments' fp32 default
(swift/llm/argument/base_args/model_args.py _init_torch_dtype). Its own argument names (--model_type, --sft_type,
--model_id_or_path) are not typos of TrainingArguments' names.
"""

from __future__ import annotations

from calculators.configs import parse_config
from calculators.configs.doctor import check_config

SWIFT_2X = """swift sft \\
    --model_type internvl2-8b \\
    --model_id_or_path /data/models/InternVL2-8B \\
    --sft_type lora \\
    --num_train_epochs 3 \\
    --max_length 4096 \\
    --batch_size 2 \\
    --gradient_accumulation_steps 16"""

SWIFT_3X = (
    "CUDA_VISIBLE_DEVICES=0,1,2,3 NPROC_PER_NODE=4 swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type lora "
    "--deepspeed default-zero3 --per_device_train_batch_size 2 --gradient_accumulation_steps 4 --torch_dtype bfloat16"
)


def test_swift_without_nproc_is_one_process_and_says_so() -> None:
    pc = parse_config(SWIFT_2X)
    assert pc.program == "ms-swift" and pc.kind == "hf_training_args"
    assert pc.world_size is None
    assert any("NPROC_PER_NODE" in n and "device_map" in n for n in pc.notes_en)
    assert any("NPROC_PER_NODE" in n and "device_map" in n for n in pc.notes_zh)
    # ms-swift's 2.x names are read, not flagged
    assert pc.batch == {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 16}
    assert pc.memory["finetune"] == "lora" and pc.memory["seq_len"] == 4096
    assert "model_id_or_path" not in pc.unknown_keys and "sft_type" not in pc.unknown_keys


def test_swift_precision_is_not_assumed_fp32() -> None:
    pc = parse_config(SWIFT_2X)
    assert "precision" not in pc.memory
    assert not any("fp32" in n for n in pc.notes_en)
    assert any("torch_dtype" in n for n in pc.notes_en)


def test_swift_nproc_per_node_is_the_world_size_and_builtin_deepspeed_names_are_read() -> None:
    pc = parse_config(SWIFT_3X)
    assert pc.world_size == 4
    assert pc.memory["zero_stage"] == 3 and pc.memory["model"] == "qwen2.5-7b"
    assert pc.memory["lora_target_modules"] == ["all"]  # ms-swift 3.x default target_modules all-linear
    assert not any("NPROC_PER_NODE" in n for n in pc.notes_en)
    two_nodes = parse_config("NNODES=2 NPROC_PER_NODE=8 swift sft --model x --per_device_train_batch_size 1")
    assert two_nodes.world_size == 16


def test_doctor_names_ms_swift_and_suggests_no_renames() -> None:
    report = check_config(SWIFT_2X, lang="en").to_markdown()
    assert "ms-swift" in report
    assert "Did you mean" not in report and "model_name_or_path" not in report
    zh = check_config(SWIFT_2X, lang="zh").to_markdown().replace("\\", "")  # Markdown escapes the underscores
    assert "你是不是想写" not in zh and "NPROC_PER_NODE" in zh


def test_plain_script_flags_still_get_the_fp32_note() -> None:
    pc = parse_config("torchrun --nproc_per_node 2 train.py --per_device_train_batch_size 4 --output_dir o")
    assert pc.program is None and pc.world_size == 2
    assert pc.memory.get("precision") == "fp32"
