"""Readers changed in stop 44, each from a blind19 question of its class (now dev; fast unit tier)."""

from __future__ import annotations

import pytest

from rag.acts import rule_act
from rag.intents import detect_misconceptions
from rag.parts import split_message
from rag.slots import classify_key, extract_smi, k_tokens
from tests.message_reading import setup_values


# ---- observed memory ---------------------------------------------------------------------------------------------
def test_an_amount_of_gpu_memory_is_a_reading_not_a_card():
    # MoGe #144: "already consumes around 50 GB of GPU memory"; "80GB GPUs" is still the card's size
    assert (
        setup_values("using batch_size_forward = 4 already consumes around 50 GB of GPU memory")["observed_memory_gb"]
        == 50
    )
    s = setup_values("I am using 80GB GPUs with LoRA")
    assert s["gpu_memory_gb"] == 80 and "observed_memory_gb" not in s


def test_readings_held_over_steps_and_written_with_a_plus():
    # Diffusion-TTA #2, pcl.pytorch #32
    assert setup_values("The GPU memory remains at 19GB until step 14")["observed_memory_gb"] == 19
    assert (
        setup_values("it will gradully increases to 10000+MiB memory at about 800 iter")["observed_memory_gb"] == 9.77
    )


def test_a_batch_setting_then_about_how_much_it_takes():
    # LLaMA-Factory #836: "batchsize设置为1大概13G" next to an OOM error that says 18.24 GiB allocated
    s = setup_values("两张4090,训练阶段显存占用不多，batchsize设置为1大概13G")
    assert s["observed_memory_gb"] == 13 and s["train_micro_batch_size_per_gpu"] == 1
    # a requirement is no reading
    assert "observed_memory_gb" not in setup_values("batch size 为 8，约需要 40G")


def test_megatrons_memory_report_is_read_from_its_log():
    # Megatron-DeepSpeed #199: the per-rank report, in MiB; the peak is "max allocated"
    text = (
        "log:\n```\n[2023-08-08 14:29:00,841] [INFO] [logging.py:96:log_dist] [Rank 0] step=1, skipped=0\n"
        "steps: 1 loss: 12.6199 iter time (s): 5.400 samples/sec: 47.411\n"
        "[Rank 1] (after 1 iterations) memory (MB) | allocated: 882.568359375 | max allocated: 13808.224609375 | "
        "reserved: 14718.0 | max reserved: 14718.0\n```"
    )
    assert kinds(text) == ["prose", "log"]
    assert setup_values(text)["observed_memory_gb"] == 13.48


def kinds(text: str) -> list[str]:
    return [p.kind for p in split_message(text)]


def test_nvidia_smi_memory_columns_are_a_reading_and_a_size():
    # deepmd-kit #1218: the busiest GPU's use is the reading, its total the card's size
    table = (
        "| 35%   59C    P2   105W / 196W |   2360MiB /  4041MiB |     99%      Default |\n"
        "|  0%   35C    P8    15W / 196W |    194MiB /  4043MiB |      0%      Default |\n"
    )
    s = extract_smi(table)
    assert s.observed_memory_gb == 2.3 and s.gpu_memory_gb == 3.95
    # an idle table (taken before the run) reads nothing
    idle = "|  0%   30C    P0    53W /  300W |      1MiB /  46068MiB |      0%      Default |\n" * 2
    assert extract_smi(idle).observed_memory_gb is None


# ---- counts and lengths ------------------------------------------------------------------------------------------
def test_a_gpu_count_with_its_split_in_brackets():
    # Megatron-DeepSpeed #199: "64(8*8) 32GB V100"
    s = setup_values("I train the model with 64(8*8) 32GB V100 and the global_batch_size is 256")
    assert s["world_size"] == 64 and s["train_batch_size"] == 256 and s["gpu_memory_gb"] == 32
    assert setup_values("with 16 (2x8) A100 GPUs")["world_size"] == 16


def test_lengths_in_k():
    # a round ten that is no power of two is decimal (GLM-4 #483: "200k长度"); the built-in lengths are binary
    assert k_tokens(200) == 200_000 and k_tokens(100) == 100_000
    assert k_tokens(4) == 4096 and k_tokens(32) == 32768 and k_tokens(128) == 131072 and k_tokens(1.5) == 1536
    assert setup_values("我用了5台8卡80G的机器，按200k长度训练")["seq_len"] == 200_000


def test_config_keys_by_other_names():
    # MoGe's batch_size_forward is one forward pass's batch (a rollout's forward_batch_size stays not ours)
    assert classify_key("batch_size_forward") == "train_micro_batch_size_per_gpu"
    assert classify_key("forward_batch_size") is None
    # FlagEmbedding's passage_max_len, set in prose with a glued 为
    assert setup_values("推测你们训练时候的passage_max_len为512。")["seq_len"] == 512
    assert setup_values("gradient_accumulation_steps为4")["gradient_accumulation_steps"] == 4


# ---- GPUs users name -----------------------------------------------------------------------------------------------
def test_common_cards_are_read_as_their_presets():
    # (their memory and bf16: tests/test_memory_presets.py::test_gpu_presets)
    assert setup_values("I am trying to run this code on an NVIDIA RTX A5000")["gpu"] == "rtx-a5000"
    assert setup_values("4张3070的卡")["gpu"] == "rtx-3070"
    assert setup_values("单卡3060 12G")["gpu"] == "rtx-3060"
    assert setup_values("10块Tesla K80 12GB")["gpu"] == "k80"
    assert setup_values("GTX 1080Ti x2")["gpu"] == "gtx-1080ti"
    assert setup_values("one TITAN RTX")["gpu"] == "titan-rtx"


# ---- beliefs and acts ----------------------------------------------------------------------------------------------


def test_a_measurement_held_against_a_norm_asks_whether_it_is_normal():
    # Megatron-DeepSpeed #199
    text = (
        "I train the model with 64 V100 and the global_batch_size is 256. I find the iteration time is about 2.5s per "
        "iteration. Is this time for per iteration good or it's slow?"
    )
    assert rule_act(split_message(text)) == "is_normal"
    # "good or bad to use X" asks about a choice, not about a measurement
    assert rule_act(split_message("Is it good or bad to use bf16 for a 7B LoRA?")) != "is_normal"


def test_the_cards_memory_said_as_cuda_or_vram_memory_is():
    # TRL #1619: "my cuda memory is 40GB"; "the vram usage is 16GB" stays a reading
    s = setup_values("max_length is 1024 ,batch size is 16 ,my cuda memory is 40GB,  what should i do")
    assert s["gpu_memory_gb"] == 40 and s["train_micro_batch_size_per_gpu"] == 16
    assert setup_values("my VRAM is 16GB")["gpu_memory_gb"] == 16
    s = setup_values("the vram usage is 16GB")
    assert s["observed_memory_gb"] == 16 and "gpu_memory_gb" not in s


def test_a_choice_between_two_readings_is_not_a_yes_no_question():
    # MoGe #144 asks which batch a paper's 128 is; the myth card's "No. The effective batch does not set memory" does
    # not answer it
    from rag.opening import read_asked

    text = (
        "When you mention a batch size of 128, does this refer to the total effective batch size, i.e.\n\n"
        "batch_size_total = batch_size_forward × gradient_accumulation_steps × accelerator.num_processes\n\n"
        "or does it mean that batch_size_forward itself is set to 128?"
    )
    assert not read_asked(text, split_message(text)).asks_whether
    yes_no = "Does gradient accumulation increase memory?"
    assert read_asked(yes_no, split_message(yes_no)).asks_whether


def test_an_environment_reports_form_factor_names_the_same_card():
    # Lightning #11933: "using A100 GPUs" in the prose, "A100-SXM4-40GB" in the environment report below it
    s = setup_values("I'm training a model using A100 GPUs.\n\n- GPU:\n\t\t- A100-SXM4-40GB")
    assert s["gpu"] == "a100-40gb" and s["gpu_memory_gb"] == 40
    assert setup_values("using A100s. env: A100-PCIE-40GB")["gpu"] == "a100-40gb"


def test_ms_swift_checkpoints_by_default():
    # ms-swift's command-line parameters: gradient_checkpointing "默认为True"
    from calculators.configs import parse_config

    pc = parse_config("swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type full --max_length 8192")
    assert pc.memory.get("gradient_checkpointing") == "full"
    assert any("ms-swift" in n and "checkpointing" in n for n in pc.notes_en)
    off = parse_config("swift sft --model Qwen/Qwen2.5-7B-Instruct --gradient_checkpointing false")
    assert off.memory.get("gradient_checkpointing") != "full"


@pytest.mark.parametrize(
    "text,key,holds",
    [
        # LFM #9: "use gradient accumulation during training to address CUDA out of memory issues"
        (
            "I am attempting to use gradient accumulation during training to address CUDA out of memory issues.",
            "ga_raises_memory",
            "Does gradient accumulation add memory?",
        ),
        # optax #528 asks whether MultiSteps costs one parameter-sized buffer (it does): "keep track of the accumulated
        # gradients" is no belief that accumulation stores a copy per micro-batch, which would open with "No."
        (
            "When using `optax.MultiSteps` is there an overhead memory consumption equal to the size of the model's "
            "parameters? A new array of zeros is created in order to keep track of the accumulated gradients over "
            "multiple steps.",
            "ga_stores_copies",
            "Does gradient accumulation store a copy of the gradients per step?",
        ),
        # ms-swift #4177: "使用的显存96gb" next to gradient_accumulation_steps opened "不会。梯度累积只有一份梯度缓冲区"
        (
            "--gradient_accumulation_steps 1 \\\n多机多卡训练14b模型爆显存oom\n使用的显存96gb，显存占用第一个step 50g",
            "ga_stores_copies",
            "梯度累积是不是每一步都存2份梯度？",
        ),
    ],
)
def test_words_that_name_no_belief(text, key, holds):
    assert key not in {m.key for m in detect_misconceptions(text)}
    assert key in {m.key for m in detect_misconceptions(holds)}
