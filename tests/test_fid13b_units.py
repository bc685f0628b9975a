"""Stated values the readers missed or read against the user (stop 31, fid13): memory readings at points of a run,
a memory trace written as steps with amounts, and LoRA asked about without the quantization of an earlier QLoRA."""

from __future__ import annotations

from rag import runs
from rag.parts import split_message as split
from rag.setup import read_setup
from rag.slots import extract_slots


def _observed(text: str) -> float | None:
    return extract_slots(text, prose=True).observed_memory_gb


def test_a_reading_at_a_point_of_the_run_is_an_observation_and_the_peak_counts() -> None:
    # OpenRLHF #698: "~46 GB after prepare, after backward it's at 61 GB, then OOM in step": the run reached 61 GB.
    text = (
        "after the prepare call, the script takes ~46 GB, after backward pass happens it's at 61 GB and during "
        "the step function it goes out of memory."
    )
    choice = runs.choices(text)["observed_memory_gb"]
    assert float(choice.chosen.value) == 61.0
    assert _observed("the memory is at 30 GB after loading") == 30.0


def test_a_card_at_its_size_is_not_a_reading() -> None:
    assert _observed("I have an A100 80GB and the batch size is 4") is None


def test_a_step_trace_with_amounts_is_read_to_its_peak() -> None:
    # LLaMA-Factory #8642: "load_model（from_pretrained（67g）-->…-->梯度累计（100G）>trainer.train(OOM)"
    text = "load_model（from_pretrained（67g）-->init_adapter(67g)）-->梯度累计**（100G）**>trainer.train(OOM)"
    assert _observed(text) == 100.0
    assert _observed("init (20GB) -> forward (45GB) -> step (OOM)") == 45.0
    # an amount in parentheses that is no step of a trace is not read as one
    assert _observed("my card (24GB) is an RTX 4090") is None


def test_usage_called_normal_is_a_reading() -> None:
    assert _observed("模型加载完后，显存占用正常67G，开启了梯度累计") == 67.0


def test_lora_without_quantization_is_plain_lora_next_to_an_earlier_qlora() -> None:
    # xtuner #694: the QLoRA config fit in 24G; the question is about LoRA with the quantization removed.
    s = extract_slots(
        "我用xtuner的qlora配置用24G的显存是可以执行微调的，但是我希望尝试不量化的lora微调，显存不够是为什么", prose=True
    )
    assert (s.finetune, s.quantization) == ("lora", None)
    s = extract_slots("QLoRA works on my 24GB card, but LoRA without quantization runs out of memory", prose=True)
    assert (s.finetune, s.quantization) == ("lora", None)
    s = extract_slots("I fine-tune with QLoRA on a 24GB card and it runs out of memory", prose=True)
    assert (s.finetune, s.quantization) == ("qlora", "int4")


def test_a_paragraph_under_readme_says_is_the_documents_not_the_users_run() -> None:
    # ChatGLM-6B #400: the README's defaults are quoted; the user's own planned batch of 8 comes after.
    text = (
        "readme中这样说的\n在默认配置 quantization_bit=4、per_device_train_batch_size=1、gradient_accumulation_steps=16 下，"
        "等效为 16 的总批处理大小。\n\n我有80G显存，可以配per_device_train_batch_size=8、gradient_accumulation_steps=16 吗"
    )
    s = extract_slots(text, prose=True)
    assert (s.train_micro_batch_size_per_gpu, s.gpu_memory_gb) == (8, 80.0)
    # without the introduction the same paragraph is the user's own setting
    s = extract_slots(text.replace("readme中这样说的\n", ""), prose=True)
    assert s.train_micro_batch_size_per_gpu == 1


_UNSLOTH = """the settings of training_args are as follows:
```
training_args = GRPOConfig(
learning_rate = 5e-6,
per_device_train_batch_size = 1,
gradient_accumulation_steps = 4, # Increase to 4 for smoother training
num_generations = 8,
)
```
When starting training, unsloth will output:
```
==((====))== Unsloth - 2x faster free finetuning | Num GPUs used = 1
\\\\ /| Num examples = 7,473 | Num Epochs = 1 | Total steps = 1,000
O^O/ \\_/ \\ Batch size per device = 8 | Gradient accumulation steps = 4
\\/Data Parallel GPUs = 1 | Total batch size (8 x 4 x 1) = 32
```"""


def test_the_batch_a_framework_banner_prints_is_the_one_that_ran() -> None:
    setup, _ = read_setup(split(_UNSLOTH))
    assert setup.get("train_micro_batch_size_per_gpu") == 8
    assert setup.get("train_batch_size") == 32
    assert 1 in [v.value for v in setup.conflicts["train_micro_batch_size_per_gpu"]]
