"""Step-count questions: what the message states (``rag.step_counts``) and how the answer checks the count the run
showed against the arithmetic on the user's numbers (planner + compose, with the stub retriever: fast tier).

The messages have the shapes users paste on trackers: the HF Trainer banner, a launch command, prose with the
count the progress bar showed. The numbers are made up; each expected figure is worked out in the comment.
"""

from __future__ import annotations

import pytest

from rag.step_counts import StepCounts, dataset_size_in, read_step_counts

BANNER = """***** Running training *****
  Num examples = 900
  Num Epochs = 10
  Instantaneous batch size per device = 1
  Total train batch size (w. parallel, distributed & accumulation) = 16
  Gradient Accumulation steps = 8
  Total optimization steps = 560
"""


@pytest.mark.parametrize(
    "text,expected",
    [
        (BANNER, StepCounts(samples=900, epochs=10, observed_steps=560)),
        (
            "数据集大小约为33000条数据，epochs=3，4张GPU。实际进度条显示是193steps",
            StepCounts(samples_about=33000, epochs=3, observed_steps=193),
        ),
        ("我训练110条数据，epoch设置为300,为什么step也是300", StepCounts(samples=110, epochs=300, observed_steps=300)),
        (
            "600w数据，每个epoch显示需要训练150w步",
            StepCounts(samples=6_000_000, observed_steps=1_500_000, observed_per_epoch=True),
        ),
        (
            "it looked like while I had 9688 samples, I had 241700 steps",
            StepCounts(samples=9688, observed_steps=241_700),
        ),
        ("--num_train_epochs 3 --gradient_accumulation_steps 4 --max_steps 200", StepCounts(epochs=3)),
        ("wandb: train/epoch 4.51\nwandb: train/global_step 5", StepCounts()),
        ("DPOTrainer goes OOM after 300 steps", StepCounts()),
        ("梯度累计步数是128，数据并行4卡", StepCounts()),
    ],
)
def test_read_step_counts(text, expected):
    assert read_step_counts(text) == expected


@pytest.mark.parametrize("text", ["=" + "1" * 30_000, "steps = " + "1," * 15_000, "Num examples = " + "1" * 30_000])
def test_a_digit_run_too_long_for_a_float_is_no_count(text):
    assert read_step_counts(text) == StepCounts()


def test_dataset_size_stays_exact_only():
    assert dataset_size_in("数据集为1800多条") is None
    assert read_step_counts("数据集为1800多条 epoch为3 为什么step是351").samples_about == 1800
    assert dataset_size_in("训练样本数：14339") == 14339
    assert dataset_size_in("batch_size默认使用1 数据集为1800多条") is None  # "1 数据集" is not one sample


@pytest.fixture(scope="module")
def bot():
    from rag import Assistant
    from tests.test_pipeline_units import CARDS, StubRetriever

    return Assistant(cards=CARDS, retriever=StubRetriever())


def test_banner_count_matches_the_old_trainer_and_the_gpu_count_follows_from_the_banner(bot):
    # 16 ÷ (1 × 8) = 2 GPUs; 900 / 2 = 450 micro-batches per GPU; 450 // 8 = 56 (≤ 4.51), ⌈450 / 8⌉ = 57 (≥ 4.52);
    # × 10 epochs = 560 / 570: the banner's 560 is the transformers ≤ 4.51 count.
    ans = bot.ask(BANNER + "\n这些参数是怎么算出来的？")
    first = ans.first_screen
    assert "micro 1 × GA 8 × 2" in first and "= 16" in first
    assert "450" in first and "570" in first and "560" in first and "≤ 4.51" in first
    assert "DeepSpeed 会报错" not in first  # 16 != 1 * 8 * 1 was the old reading with one GPU assumed


def test_a_mismatch_back_solves_the_batch_the_run_used(bot):
    # 14,339 samples × 3 epochs ÷ 672 steps ≈ 64 per step = 8 × 8: something multiplies the batch by 8.
    ans = bot.ask(
        "训练step数和样本量的关系对不上\n训练样本数：14339\nper_device_train_batch_size=8（单卡训练）\nepoch=3\n"
        "但训练的总step=672，和预期差不多差了8倍，这是为何？"
    )
    first = ans.first_screen
    assert first.startswith("**全局批次 = micro 8 × GA 1 × 1 张卡 = 8")
    assert "5,379" in first  # ⌈14339 / 8⌉ = 1,793 per epoch × 3
    assert "每步 64 个样本（≈ 8 × 8）" in first
    assert "GA 未说明" in ans.text  # GA 1 is the default, and the answer says it assumed it


def test_sequence_parallel_gpus_are_one_data_parallel_replica(bot):
    # 4 GPUs ÷ SP 4 = 1 replica: 16 × 32 × 1 = 512 per step; 33,000 / 16 = 2,063 micro-batches, ⌈/32⌉ = 65 × 3 = 195
    # (⌊⌋: 64 × 3 = 192); the run's 193 is within 2 %.
    ans = bot.ask(
        "数据集大小约为33000条数据，epochs=3，4张GPU。\nNPROC_PER_NODE=4 swift pt --model Qwen/Qwen2.5-7B "
        "--per_device_train_batch_size 16 --gradient_accumulation_steps 32 --num_train_epochs 3 "
        "--sequence_parallel 4\n如果正常计算应该是48步，但是实际进度条显示是193steps。请问step数如何计算？"
    )
    first = ans.first_screen
    assert "1 个数据并行副本（4 张卡 ÷ SP 4）= 512" in first
    assert "195" in first and "192" in first and "基本一致" in first


def test_tensor_parallel_divides_the_gpus_without_contradicting_them(bot):
    ans = bot.ask("2 nodes x 8 GPUs, tensor_parallel_size 2, micro batch 4, GA 1. What is my global batch?")
    assert "8 data-parallel replicas (16 GPUs ÷ TP 2) = 32" in ans.first_screen
    call = next(c for c in ans.tool_calls if c.name == "effective_batch")
    assert call.arguments["world_size"] == 16 and call.result["data_parallel_size"] == 8


def test_grpo_factor_is_named_by_the_ratio(bot):
    # 5,498 / 196 ≈ 28.1 per step = 224 ÷ 8 (num_generations 8).
    ans = bot.ask(
        "I ran it on 7 GPUs with num_generations 8, per_device_train_batch_size 8, gradient_accumulation_steps 4. "
        "Num examples = 5,498, 1 epoch. Why Total optimization steps=196?"
    )
    assert "(≈ 224 ÷ 8)" in ans.first_screen and "num_generations" in ans.first_screen


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "8 steps per epoch on a 64 image dataset\nI set repeats to 1, so why am I only getting 8 steps?",
            StepCounts(samples=64, observed_steps=8, observed_per_epoch=True),
        ),
        ("I see 12 steps with 600 samples, is that right?", StepCounts(samples=600, observed_steps=12)),
        ("eval every 5 steps per epoch", StepCounts()),  # not at the start of a line: a schedule, not a count
    ],
)
def test_a_count_in_a_title_or_after_a_verb_of_seeing(text, expected):
    assert read_step_counts(text) == expected


def test_back_solve_steps_arithmetic_and_refusals():
    from calculators import CalculatorError, back_solve_steps

    per_epoch = back_solve_steps(dataset_size=64, observed_steps=8, num_train_epochs=3, per_epoch=True)
    assert per_epoch.samples_per_step == 8 and per_epoch.num_train_epochs is None  # per epoch: epochs do not enter
    one = back_solve_steps(dataset_size=250, observed_steps=40, num_train_epochs=40)
    assert one.samples_per_step == 250 and one.one_step_per_epoch
    many = back_solve_steps(dataset_size=14_339, observed_steps=672, num_train_epochs=3)
    assert many.samples_per_step == 64.0 and not many.one_step_per_epoch  # 43,017 / 672 = 64.01
    assert "≈ 64 samples per step" in many.to_markdown("en")
    for bad in ({"dataset_size": 100, "observed_steps": 0}, {"dataset_size": -1, "observed_steps": 3}):
        with pytest.raises(CalculatorError):
            back_solve_steps(**bad)


def test_steps_without_batch_settings_back_solve_the_batch_the_run_used(bot):
    # 250 samples × 40 epochs ÷ 40 steps = 250 per step: one step per epoch, an effective batch of at least 250.
    ans = bot.ask("我的数据只有250条，num_train_epochs设成40，为什么总步数也是40步？")
    first = ans.first_screen
    assert first.startswith("**你的运行显示 40 步：250 个样本 × 40 个 epoch ÷ 40 步 ≈ 每步 250 个样本")
    assert "step 数等于 epoch 数" in first and "gradient_accumulation_steps" in first
    assert [c.name for c in ans.tool_calls if c.name in ("effective_batch", "steps_back_solve")] == ["steps_back_solve"]


def test_per_epoch_count_without_batch_settings_in_english(bot):
    # 64 samples ÷ 8 steps per epoch = 8 per step.
    ans = bot.ask("8 steps per epoch on a 64 image dataset\nI set repeats to 1, so why am I only getting 8 steps?")
    assert ans.first_screen.startswith("**Your run shows 8 steps per epoch: 64 samples ÷ 8 steps ≈ 8 samples per step.")
    assert "micro batch × GA × data-parallel GPUs" in ans.first_screen
