"""Fixed by the lead in stop 34: a fit question that names the model but not the method.

"8 X A100 (80GB) for 13B finetune is sufficient ?" (lm-sys/FastChat#464) was answered "How much memory it needs
depends on … Tell me: the method; precision; …" and a card's general lead — no answer at all, in 47 of the 167 fit
questions of the real-question sets. The model states depend on nothing the user left out but the method, so the
answer now gives them for each method on the stated GPUs (a full fine-tune also sharded with ZeRO-3 when several
GPUs are stated without a sharding), says which leave room for activations, and still computes no total: the micro
batch and sequence length that would need are not assumed.

Below those, the setup readers and opening rules written this stop from blind9's fresh misses (blind9 moved from the
held-out set into the dev set at the start of the stop), each for a class of wording rather than one message.
"""

from __future__ import annotations

import re
from typing import Any

from calculators.presets import MODEL_PRESETS, count_params
from rag.intents import detect_intents, detect_misconceptions
from rag.parts import split_message
from rag.planner import plan_calls
from rag.setup import read_setup

FASTCHAT_464 = "8 X A100 (80GB) for 13B finetune is sufficient ?"


def _plan(text: str, act: str = "fit") -> Any:
    setup = read_setup(split_message(text))[0]
    return plan_calls(setup, act, detect_intents(text), detect_misconceptions(text), text)  # type: ignore[arg-type]


def _gib_values(text: str) -> list[float]:
    return [float(x.replace(",", "")) for x in re.findall(r"([\d,.]+) GiB", text)]


def test_the_model_without_a_method_plans_each_methods_states_and_no_total() -> None:
    plan = _plan(FASTCHAT_464)
    assert plan.method_unknown
    sweep = plan.by_label("method_sweep")
    assert sweep is not None and sweep.arguments["values"] == ["full", "lora", "qlora"]
    assert plan.by_label("main") is None  # no total: micro batch and sequence length are not stated
    sharded = plan.by_label("full_sharded")
    assert sharded is not None and sharded.arguments["zero_stage"] == 3 and sharded.arguments["world_size"] == 8
    keys = {a.key for a in plan.assumptions}
    assert "seq_len" not in keys and "train_micro_batch_size_per_gpu" not in keys and "finetune" in keys


def test_a_stated_method_precision_or_sharding_keeps_the_usual_estimate() -> None:
    assert not _plan("8 X A100 (80GB) for a 13B LoRA finetune is sufficient ?").method_unknown
    assert not _plan("8 X A100 (80GB) for 13B bf16 finetune is sufficient ?").method_unknown
    one = _plan("Can I fine-tune llama-2-7b on a single RTX 3090?")
    assert one.method_unknown and one.by_label("full_sharded") is None  # one GPU: nothing to shard


def test_a_yes_no_about_a_named_gpu_is_a_fit_question_but_another_belief_is_not() -> None:
    assert _plan(FASTCHAT_464, act="yes_no").method_unknown
    halves = "Mixed precision halves the memory, so a 13B model fits on one A100 80GB, right?"
    assert detect_misconceptions(halves) and not _plan(halves, act="yes_no").method_unknown


def test_the_opening_gives_each_methods_states_from_the_same_calls_as_the_table(bot_without_retrieval: Any) -> None:
    ans = bot_without_retrieval.ask(FASTCHAT_464)
    head = ans.text.split("\n\n")[0]
    assert head.startswith("**It depends on the method")
    calls = {c.label: c for c in ans.tool_calls}
    assert "main" not in calls  # no total per GPU anywhere on the first screen
    points = {p["value"]: p["estimate"] for p in calls["method_sweep"].result["points"]}
    params = count_params(MODEL_PRESETS["llama-2-13b"])
    full = sum(points["full"][k] for k in ("weights", "gradients", "optimizer_states"))
    assert abs(full / params - 16.0) < 0.01  # mixed-precision AdamW: 2 + 2 + 12 bytes per parameter (ZeRO paper)
    sharded = calls["full_sharded"].result
    assert abs(sum(sharded[k] for k in ("weights", "gradients", "optimizer_states")) * 8 - full) / full < 0.001
    shown = _gib_values(head)
    assert round(full / 2**30, 1) in shown and round(full / 8 / 2**30, 1) in shown
    assert "fits only sharded" in head  # 194 GiB per GPU unsharded, 24.2 GiB with ZeRO-3 over 8
    table = ans.text.split("Model states by method", 1)[1]
    assert f"{full / 2**30:,.1f} GiB" in table


def test_in_chinese_a_24_gb_card_fits_only_qlora(bot_without_retrieval: Any) -> None:
    ans = bot_without_retrieval.ask("想在单张 4090 上微调 llama2-13b，显存够吗？")
    head = ans.text.split("\n\n")[0]
    assert head.startswith("**取决于微调方式")
    clauses = dict(re.findall(r"(全量微调|LoRA|QLoRA) [\d,.]+ GiB([^；。]*)", head))
    assert "放不下" in clauses["全量微调"] and "放不下" in clauses["LoRA"]
    assert "给激活" in clauses["QLoRA"]


# ---- setup readers, from the fresh misses of blind9 (moved into the dev set this stop) ---------------------------
def _known(text: str) -> dict[str, Any]:
    return read_setup(split_message(text))[0].known()


def test_gpu_counts_written_as_servers_of_machines_each_with_and_bold_products() -> None:
    assert _known("Would 2 servers of 8 A100s GPU be sufficient?")["world_size"] == 16  # gpt-neox#707
    assert _known("two machines, each with 8x H100")["world_size"] == 16
    two_by_two = _known("I have **2*2 T4-15GB GPU**. When I am not using zero optimization, the task is running")
    assert two_by_two["world_size"] == 4 and two_by_two["gpu"] == "t4"  # DeepSpeed#2992: bold is no product
    assert _known("bs 2*8 GPUs = 16")["world_size"] == 8  # a batch formula's factor stays one


def test_one_gpu_beside_several_is_the_baseline_unless_it_is_the_failing_run() -> None:
    assert (
        _known("each epoch takes 21 seconds with 1 GPU. When using 2 GPUs, it also takes 21 seconds")["world_size"] == 2
    )  # accelerate#71
    assert _known("step time is smaller if you use 1 GPU instead of 4 GPUs")["world_size"] == 4
    assert _known("On 1 GPU it OOMs; with 4 GPUs it works fine")["world_size"] == 1
    assert _known("I only have 1 GPU, the recipe needs 8 GPUs")["world_size"] == 1


def test_rtx_6000_ada_as_users_write_it() -> None:
    s = _known("I am training Llama3-8B using 2 RTX A6000ada 48GB, but got OOM.")  # torchtitan#620
    assert s["gpu"] == "rtx-6000-ada" and s["world_size"] == 2
    from calculators.presets import GPU_PRESETS

    assert GPU_PRESETS["rtx-6000-ada"].memory_gib == 48 and GPU_PRESETS["rtx-6000-ada"].bf16
    assert _known("2 RTX A6000 48GB")["gpu"] == "rtx-a6000"  # the Ampere card stays itself


def test_a_pasted_toml_file_is_code_and_its_comments_are_not_the_users_setup() -> None:
    text = (
        "I am training Llama3-8B using 2 RTX A6000ada 48GB, but got OOM. Is there way to offload training memory to "
        "DRAM (using FSDP2?)\n\n# torchtitan Config.toml\n# NOTE: this toml config is a preset for 64 A100 GPUs.\n\n"
        '[job]\ndump_folder = "./outputs"\n\n[model]\nname = "llama3"\nflavor = "8B"\n'
    )
    kinds = [p.kind for p in split_message(text)]
    assert kinds == ["prose", "code"]
    s = _known(text)
    assert s["world_size"] == 2 and s["gpu"] == "rtx-6000-ada"
    assert "offload_optimizer" not in s  # asked for ("Is there way to offload"), not on
    assert [p.kind for p in split_message("I set bs = 2 and\nga = 4 on one GPU")] == ["prose"]


def test_accelerate_mixed_precision_no_is_fp32_and_the_trainer_flag_decides() -> None:
    from rag.slots import extract_slots

    assert extract_slots("mixed_precision: 'no'").precision == "fp32"
    assert extract_slots("--mixed_precision no").precision == "fp32"
    assert extract_slots("mixed_precision: fp16").precision == "amp-fp16"
    assert extract_slots("mixed precision training OOM").precision == "amp-bf16"
    llamafactory_713 = (
        "使用八卡A800对Baichuan13B模型进行sft微调，全参数微调会显存溢出。\n"
        "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\ndowncast_bf16: 'no'\n"
        "mixed_precision: 'no'\nnum_machines: 1\nnum_processes: 8\n\n训练程序：\n"
        "accelerate launch src/train_bash.py --stage sft --finetuning_type full --per_device_train_batch_size 1 --fp16\n"
    )
    setup = read_setup(split_message(llamafactory_713))[0]
    assert setup.get("precision") == "amp-fp16" and setup.source("precision") == "command"
    assert [v.value for v in setup.conflicts["precision"]] == ["fp32"]  # the config's, shown as the conflict


def test_the_method_that_worked_is_not_the_failing_runs() -> None:
    # LLaMA-Factory #6109: LoRA trained stably, the full SFT collapsed
    text = "我尝试了用lora方法进行sft，模型可以稳定训练，但是全量sft就会训崩。"
    assert _known(text)["finetune"] == "full"
    assert _known("用lora可以跑起来，全参数微调会显存溢出")["finetune"] == "full"
    assert _known("我用lora微调，显存溢出")["finetune"] == "lora"


def test_the_card_that_explains_the_deciding_figure_is_cited(assistant: Any) -> None:
    """The full fine-tune's states decide such a question: the card on bytes per parameter explains them on one GPU,
    the one on ZeRO sharding on several (rag.estimate_card), with the real retriever."""
    one = assistant.ask("Can I fine-tune llama-2-7b on a single RTX 3090?")
    assert "mixed-precision-bytes-per-param" in [s.card_id for s in one.sources]
    several = assistant.ask(FASTCHAT_464)
    assert "zero-stages-memory-savings" in [s.card_id for s in several.sources]


def test_an_oom_diagnosis_opens_with_a_card_that_speaks_of_memory() -> None:
    """CogVLM #450 (8 × A800, OOM): retrieval ranked "ZeRO-3 saves empty weights" first on a pasted command's words."""
    from rag.cards import load_cards
    from rag.compose import Results, opening_order
    from rag.planner import Plan
    from rag.setup import Setup

    by_id = {c.id: c for c in load_cards()}
    cards = [by_id[i] for i in ("zero3-saved-weights-empty", "oom-memory-budget-breakdown")]
    r = Results(lang="en", act="diagnose", setup=Setup(), plan=Plan(), calls=[], cards=cards, reported_oom=True)
    assert [c.id for c in opening_order(r)] == ["oom-memory-budget-breakdown", "zero3-saved-weights-empty"]
    r.reported_oom = False  # no OOM reported: retrieval's order stands
    assert [c.id for c in opening_order(r)] == ["zero3-saved-weights-empty", "oom-memory-budget-breakdown"]


def test_the_other_models_of_an_rl_run_and_its_save_path_name_no_model() -> None:
    # OpenRLHF #392: "我现在使用16B模型训练" with `--reward_pretrain …/Meta-Llama-3-8B-Instruct` and
    # `--save_path …/llama3-8b-rlhf` (copied from the recipe): the trained model is the 16B one
    text = (
        "我现在使用16B模型训练,请问为什么在训练的第一个step就CUDA out of memory？\n"
        "   --pretrain /share/checkpoints/models/deepseek \\\n"
        "   --reward_pretrain /share/checkpoints/Meta-Llama-3-8B-Instruct \\\n"
        "   --save_path /openrlhf/examples/checkpoint/llama3-8b-rlhf \\\n"
        "   --micro_train_batch_size 4 \\\n"
    )
    s = _known(text)
    assert s.get("num_params") == 16e9 and "model" not in s
    dpo = _known(
        "python train_dpo.py --model_name_or_path meta-llama/Llama-2-13b-hf --ref_model meta-llama/Llama-2-7b-hf"
    )
    assert dpo["model"] == "llama-2-13b"


def test_a_logged_nccl_error_is_an_error_message_a_card_can_quote() -> None:
    from rag.evidence import error_messages

    line = (
        "[rank6]:[E ProcessGroupNCCL.cpp:523] [Rank 6] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)"
    )
    assert error_messages(line)[0].startswith("watchdog caught collective operation timeout")


def test_a_question_that_points_back_asks_about_the_titles_symptom() -> None:
    from rag.opening import read_asked

    text = "The loss has always been 0\n\nAfter 300 steps with the default GRPO recipe the loss was still 0. Is this normal?"
    assert read_asked(text, split_message(text)).family == "loss"
    lr = "训练太慢\n\n如果把 batch 增大到16，学习率需要调整吗？"  # asks about the learning rate, not the slowdown
    assert read_asked(lr, split_message(lr)).family == "generic"


def test_a_step_count_the_progress_bar_says_is_read() -> None:
    from rag.step_counts import read_step_counts

    # TRL #455: "The progress bar says 489 total steps. But the training set contains 8861 samples … 3 epochs"
    counts = read_step_counts(
        "The progress bar says 489 total steps. But the training set contains 8861 samples, 3 epochs"
    )
    assert (counts.observed_steps, counts.samples, counts.epochs) == (489, 8861, 3.0)
    assert read_step_counts("after 300 steps the loss is 0").observed_steps is None
    assert read_step_counts("it should be 500 steps").observed_steps is None


def test_gpus_pooling_memory_held_gets_its_verdict_and_each_methods_states(bot_without_retrieval: Any) -> None:
    # gpt-neox #707: "Would 2 servers of 8 A100s GPU be sufficient? … a total memory of 1280GB"
    text = (
        "Would 2 servers of 8 A100s GPU be sufficient for fine-tuning GPT-NeoX-20B? Since 2 servers of 8 A100 GPUs "
        "has a total memory of 1280GB, it should be more than enough."
    )
    assert _plan(text, act="yes_no").method_unknown
    ans = bot_without_retrieval.ask(text)
    assert ans.first_screen.startswith("**No. More GPUs do not pool their memory")
    assert "over 16 GPUs), fits only sharded" in ans.first_screen


def test_a_size_and_method_without_a_gpu_or_preset_open_with_the_model_states(bot_without_retrieval: Any) -> None:
    # Qwen #504 asked "全量微调 Qwen-14B 需要多少显存" (since stop 50 a preset, so a full figure); a model without a
    # preset architecture and no GPU: the states are still the answer's floor
    ans = bot_without_retrieval.ask("全量微调 Aquila-34B 需要多少显存？")
    head = ans.first_screen.split("\n", 1)[0]
    assert head.startswith("**仅模型状态")
    states = _gib_values(head)[0]
    assert abs(states - 34e9 * 16 / 2**30) < 0.2  # 16 bytes per parameter, mixed-precision AdamW
    preset = bot_without_retrieval.ask("全量微调 Qwen-14B 需要多少显存？").first_screen.split("\n", 1)[0]
    assert preset.startswith("**每卡约需") and "没有哪张单卡" in preset


def test_an_rl_run_without_its_method_gets_the_trained_models_states_and_no_verdict(bot_without_retrieval: Any) -> None:
    # ChatBLOOM #4: "sft and ppo on a 3b llama model on 4xA100 (40g)": PPO's other models are not in the states
    text = "I tried to perform sft and ppo on a 3b llama model on 4xA100 (40g). How much GPU memory does ppo need?"
    ans = bot_without_retrieval.ask(text)
    head = ans.first_screen.split("\n", 1)[0]
    assert head.startswith("**It depends on the method") and "leaving" not in head and "fit" not in head
    assert any(a.startswith("PPO also holds") for a in ans.assumptions)


def test_a_question_about_host_ram_gets_no_gpu_states(bot_without_retrieval: Any) -> None:
    # Yi #255: "34b lora加载模型的时候需要多少内存 … 机器有314G内存": host RAM, which GPU model states do not answer
    ans = bot_without_retrieval.ask(
        "请问34b lora加载模型的时候需要多少内存？机器有314G内存，在载入模型那一步就内存不够了"
    )
    assert "每卡就约" not in ans.first_screen
