"""Stated-value fidelity (issue #10), round 13: a message that gives two values for one setting (two runs, two
readings) keeps both, picks the one the question is about by one rule (rag.runs), and says so on the first screen.

Each case is a message *shape* people write ("bs X OOMs, the most I can set is Y", "1 GPU uses A MB, 2 GPUs use B
MB", "model P OOMs, model Q works"), with words of its own, not a dev message. Fast tier: text processing only.
"""

from __future__ import annotations

from rag.compose import conflicts_line, setup_line, shown_conflicts
from rag.runs import candidates, choices
from rag.setup import OTHER_RUN_EVIDENCE
from rag.slots import extract_slots
from tests.message_reading import setup_of


def others(setup, key):
    return [v.value for v in setup.conflicts.get(key, []) if v.evidence == OTHER_RUN_EVIDENCE]


# ---- the rule ---------------------------------------------------------------------------------------------------
FAILS_THEN_WORKS = (
    "I launch the 13b recipe on 4 A100 40GB. With `--per_device_train_batch_size 8` it goes OOM right away, "
    "the maximum that runs is `--per_device_train_batch_size 6`. Is that expected?"
)


def test_every_clause_value_is_a_candidate_with_its_outcome():
    found = candidates(FAILS_THEN_WORKS)["train_micro_batch_size_per_gpu"]
    assert [(c.value, c.outcome) for c in found] == [(8, "fails"), (6, "works")]


def test_the_failing_run_is_chosen_over_the_working_one_and_the_other_is_kept():
    setup = setup_of(FAILS_THEN_WORKS)
    assert setup.get("train_micro_batch_size_per_gpu") == 8
    assert others(setup, "train_micro_batch_size_per_gpu") == [6]
    assert setup.why["train_micro_batch_size_per_gpu"] == "fails"


def test_the_first_screen_says_both_values_and_which_one_the_numbers_use():
    setup = setup_of(FAILS_THEN_WORKS)
    line = setup_line(setup, "en")
    assert "micro batch 8 (failing run; also 6)" in line  # the setup line holds the values computed for
    assert conflicts_line(setup, "en") == ""  # no second line: the first screen stays short
    zh = setup_line(setup, "zh")
    assert "micro batch 8（出错的那次；另有 6）" in zh
    assert shown_conflicts(setup.conflicts["train_micro_batch_size_per_gpu"]) == [6]


def test_works_then_fails_in_chinese_picks_the_failing_run_too():
    text = "用 4 张 3090，batch_size 设为 2 的时候可以正常跑，batch_size 改成 6 就爆显存了，这正常吗？"
    setup = setup_of(text)
    assert setup.get("train_micro_batch_size_per_gpu") == 6
    assert others(setup, "train_micro_batch_size_per_gpu") == [2]


def test_a_proposed_value_is_not_a_run():
    # "what if I set it to 16?" has no outcome: a question, not a run
    text = "bs 4 OOMs on my 3090. What if I set bs 16 with gradient checkpointing?"
    found = candidates(text).get("train_micro_batch_size_per_gpu", [])
    assert [c.value for c in found] == [4]


def test_a_conditional_that_reports_an_outcome_is_a_run():
    found = candidates("如果用 per_device_train_batch_size 8 就直接报错 OOM。")["train_micro_batch_size_per_gpu"]
    assert [(c.value, c.outcome) for c in found] == [(8, "fails")]


def test_several_memory_readings_keep_the_peak_and_show_the_other():
    text = (
        "Training on a single GPU with 4 samples per gpu, it uses 9200MB. "
        "With DDP on 2 GPUs it consumes 15020/14876 MB per card, samples per gpu still 4. Is this normal?"
    )
    setup = setup_of(text)
    assert abs(setup.get("observed_memory_gb") - 15020 / 1024) < 0.05
    assert [round(v, 1) for v in others(setup, "observed_memory_gb")] == [9.0]
    assert setup.why["observed_memory_gb"] == "peak"


def test_per_gpu_readings_in_mb_are_one_observation():
    assert extract_slots("it consumes 15020/14876 MB memory").observed_memory_gb == round(15020 / 1024, 2)


def test_without_an_outcome_split_the_whole_reading_stays_and_the_other_run_is_shown():
    text = "Model A: TP=4, PP=1, MFU 45%\nModel B: TP=4, PP=4, MFU 21%\nWhy is the second so slow?"
    setup = setup_of(text)
    kept = setup.get("pipeline_parallel_size")
    assert kept in (1, 4)
    assert others(setup, "pipeline_parallel_size") == [5 - kept]
    assert f"PP {kept} (also {5 - kept})" in setup_line(setup, "en")


def test_one_value_said_twice_is_not_two_runs():
    text = "bs 4 OOMs on my 3090. Again, with bs 4 and fp16 it still OOMs."
    assert "train_micro_batch_size_per_gpu" not in choices(text)
    assert "train_micro_batch_size_per_gpu" not in setup_of(text).conflicts


def test_a_failing_model_beside_one_that_works_is_the_model_computed():
    text = (
        "我用 4*V100 32G 做增量预训练，如果用 Baichuan2-13B 直接爆显存了。\n"
        "另外在 Qwen-7B 上 per_device_train_batch_size 1 可以跑，大概占用 28G。\n有办法跑 13B 吗？"
    )
    setup = setup_of(text)
    assert setup.get("num_params") == 13e9 or "13" in str(setup.get("model_text"))
    assert setup.why.get("model_text") == "fails" or setup.why.get("num_params") == "fails"
    line = setup_line(setup, "zh")
    assert "Baichuan2-13B（出错的那次；另有 Qwen-7B）" in line
    assert line.count("另有") == 1  # the model's name, preset and size: said once


def test_two_settings_with_other_runs_are_each_said_next_to_their_value():
    text = (
        "With micro batch 2 and GA 8 the run OOMs at step 10. "
        "With micro batch 1 and GA 16 it works fine. Why does the first one OOM?"
    )
    setup = setup_of(text)
    assert setup.get("train_micro_batch_size_per_gpu") == 2 and setup.get("gradient_accumulation_steps") == 8
    line = setup_line(setup, "en")
    assert "micro batch 2 (failing run; also 1)" in line and "GA 8 (failing run; also 16)" in line


# ---- a size binds to a model only in the same phrase -----------------------------------------------------------
def test_a_size_from_another_sentence_does_not_attach_to_a_named_model():
    text = (
        "Our lab GPU could not even load 13B models last month.\n"
        "For finetuning olmo (fp32, batch_size 4, sequence length 1024) 90% of the 24GB was used. "
        "How much would LoRA on this model need?"
    )
    slots = extract_slots(text)
    assert slots.model_text.lower() == "olmo"
    assert slots.num_params is None


def test_a_size_next_to_the_name_is_its_size():
    slots = extract_slots("I fine-tune an olmo model, 1.5B, with LoRA on one 3090 and it OOMs")
    assert slots.num_params == 1.5e9


def test_a_bare_size_without_a_named_model_is_the_size():
    assert extract_slots("Full fine-tuning a 13B model on 8 A100s OOMs").num_params == 13e9


def test_a_size_naming_a_class_of_models_elsewhere_does_not_attach():
    text = "We could only fit 7B-class models before.\nNow I fine-tune olmo with LoRA and it OOMs."
    assert extract_slots(text).num_params is None


def test_a_failing_model_named_only_by_a_script_does_not_replace_a_sized_model():
    text = "我在两张 4090 上微调 Mini-InternVL-Chat-2B，可以正常跑。\n换成 internvl_chat_finetune 脚本就报错 OOM。"
    setup = setup_of(text)
    assert setup.get("num_params") == 2e9 or "2B" in str(setup.get("model_text"))


def test_memory_readings_close_to_each_other_are_one_run():
    text = "On 4 A100s, GPU0 uses 54.5 GB and GPU1 uses 52.6 GB, then it OOMs at step 30. Why?"
    setup = setup_of(text)
    assert "observed_memory_gb" not in setup.conflicts
