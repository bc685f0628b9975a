"""Readers from blind33's misses (stop 58), each on the user's own words from the thread it came from."""

from __future__ import annotations

from rag.acts import rule_act
from rag.lr_change import read_lr_change
from rag.opening import stacks_named
from rag.parts import split_message
from tests.message_reading import setup_values


def test_a_count_of_cards_after_batch_size_is_no_batch() -> None:
    # SiamCAR #50: "batch size 三块卡2080Ti的内存勉强够用" is three cards, not a batch of 3
    values = setup_values("batch size 三块卡2080Ti的内存勉强够用的样子.")
    assert "train_micro_batch_size_per_gpu" not in values
    assert values["world_size"] == 3
    # a batch with its value is still read
    assert setup_values("batch size 4 on 8 GPUs")["train_micro_batch_size_per_gpu"] == 4


def test_memory_after_the_card_s_name_is_the_card_s() -> None:
    # SiamCAR #50: "一块2080Ti的11G的内存" is the card's memory, not the host's RAM
    assert "host_ram_gb" not in setup_values("感觉一块2080Ti的11G的内存就能够满足96的batch size")
    # TheChosenOne #5: "a 16GB RAM GPU"
    values = setup_values("I'm running out of CUDA memory, using a batch size of 1, using a 16GB RAM GPU")
    assert values["gpu_memory_gb"] == 16.0
    assert "host_ram_gb" not in values
    # the host's RAM beside a card stays the host's
    assert setup_values("I have 32GB RAM and a 3090")["host_ram_gb"] == 32.0


def test_bf16_written_with_a_dash() -> None:
    # Lightning #12591
    assert setup_values("When I use `bf-16` and check the `dtype` of the model")["precision"] == "amp-bf16"


def test_what_a_board_takes_is_no_count_of_cards() -> None:
    # Qwen #846: two 4090s on a board that takes four
    values = setup_values(
        "GPU: NVIDIA RTX 4090 24G 涡轮显卡 *2\n主板：INTEL C621服务器主板 (最大支持4张GPU) \n能跑 13b 的微调吗？"
    )
    assert values["world_size"] == 2
    assert "world_size" not in setup_values("the motherboard supports up to 4 GPUs")


def test_not_enough_or_too_much_is_a_sizing_question_not_a_failure() -> None:
    # Qwen #846: "( 不够或者太少)" after asking what to change in the planned box
    parts = split_message(
        "[BUG] 想做14b 和 72b 的微调，请教多少配置合适？\n我目前了解下想买\nGPU: NVIDIA RTX 4090 24G 涡轮显卡 *2\n"
        "能跑 13b 的微调吗？能跑 72b 的微调吗？\n上面的配置有什么需要调整的吗？( 不够或者太少)"
    )
    assert rule_act(parts) == "fit"


def test_a_device_line_gives_the_card_s_memory() -> None:
    # ultralytics #5294: the device line YOLOv5 prints, retyped
    values = setup_values(
        "I get NaN when training on NVIDIA GeForce GTX 1660 SUPER, 6144MiB (Python-3.9.16 torch-2.0.1)"
    )
    assert values["gpu_memory_gb"] == 6.0
    assert setup_values("YOLOv5 🚀 v7.0 torch-2.0.1+cu118 CUDA:0 (Tesla T4, 15102MiB)")["gpu_memory_gb"] == 14.75


def test_a_size_glued_to_the_family_name() -> None:
    # Qwen #708
    assert setup_values("请问lora微调72Bqwen需要多大内存，A800服务器")["num_params"] == 72e9


def test_stylegan_batch_and_batch_gpu() -> None:
    # stylegan3 #412: --batch is the total over GPUs, --batch-gpu each GPU's
    values = setup_values("you set the --batch to 32 and the --batch-gpu to 16. what effect it have?")
    assert values["train_batch_size"] == 32
    assert values["train_micro_batch_size_per_gpu"] == 16


def test_batch_size_set_through_it() -> None:
    # musubi-tuner #446
    values = setup_values(
        "I am trying out a higher batch size than 1 for the first time in forever, and set it to 18 aka my amount "
        "of training images."
    )
    assert values["train_micro_batch_size_per_gpu"] == 18


def test_a_learning_rate_changed_to_and_a_config_s_rate_beside_it() -> None:
    # mmdetection #4993: the 1x schedule's 0.02 is the config's; the user set 0.0025
    text = (
        "In original COCO 1x schedule configuration, the learning rate is 0.02 for 8 GPUs and 2 imgs per GPU.\n"
        "I have one Titan XP GPU now.\n"
        "So following the Linear Scaling Rule, I changed the learning rate to 0.0025 and kept 2 imgs per GPU.\n"
        "Then I got a better result than your model.\nIs it resonable to get such result?"
    )
    assert setup_values(text)["base_learning_rate"] == 0.0025
    assert setup_values("学习率改成1e-4")["base_learning_rate"] == 1e-4
    # the rule applied is read as an LR-scaling question: 8 GPUs to one, 0.02 to 0.0025 (the linear factor)
    change = read_lr_change(text)
    assert change is not None
    assert (change.old_scale, change.new_scale, change.basis) == (8, 1, "gpus")
    assert change.proposed_factor == 0.125
    # a result question without the rule named is not
    assert read_lr_change("I have one GPU, the paper used 8 GPUs. Is it reasonable to get such result?") is None


def test_megatron_s_own_flags_name_it() -> None:
    assert "megatron" in stacks_named(
        "torchrun pretrain_gpt.py --tensor-model-parallel-size 2 --use-distributed-optimizer"
    )
    # verl's rollout setting is vLLM's, not a Megatron run
    assert "megatron" not in stacks_named("actor_rollout_ref.rollout.tensor_model_parallel_size=2")


def test_a_vision_network_is_told_how_to_measure_not_asked_for_a_sequence_length() -> None:
    from rag import Assistant
    from rag.network_kind import names_non_llm_network
    from tests.test_pipeline_units import CARDS, StubRetriever

    assert names_non_llm_network("我用yolov5训练目标检测，显卡是GTX 1650 4G")
    assert not names_non_llm_network("用 LoRA 微调 llama-2-7b 做目标检测数据的问答")
    bot = Assistant(cards=CARDS, retriever=StubRetriever())
    answer = bot.ask("我用yolov5训练目标检测，显卡是GTX 1650 4G，batch size要设多大才能放下？")
    first = answer.first_screen
    assert "max_memory_allocated" in first and "GTX 1650" in first and "4.00 GiB" in first
    assert "微调方式" not in first  # not the language-model inputs list ("the method (full/LoRA/QLoRA) …")


def test_lora_over_two_cards_fits_only_sharded() -> None:
    # Qwen #846: 14B on two 24 GB 4090s; LoRA's 16-bit base is 26 GiB on one card, half that under ZeRO-3
    from rag import Assistant
    from tests.test_pipeline_units import CARDS, StubRetriever

    answer = Assistant(cards=CARDS, retriever=StubRetriever()).ask(
        "GPU: NVIDIA RTX 4090 24G 涡轮显卡 *2\n能跑 14b 的微调吗？"
    )
    head = answer.first_screen.split("\n\n")[0]
    calls = {c.label: c for c in answer.tool_calls}
    one = sum(
        calls["method_sweep"].result["points"][1]["estimate"][k] for k in ("weights", "gradients", "optimizer_states")
    )
    two = sum(calls["lora_sharded"].result[k] for k in ("weights", "gradients", "optimizer_states"))
    assert abs(two * 2 - one) / one < 0.01  # the frozen base split over the two cards
    assert "LoRA 26.2 GiB（2 卡 ZeRO-3 / FSDP 切分后 13.1 GiB），只有切分后能放下" in head


def test_asking_the_cause_of_this_problem_is_a_diagnosis() -> None:
    # LISA #81: a title that asks yes/no, then the cause of what was reported
    parts = split_message(
        "batch-size=1 training faster than batch-size=2?\n\nWith batch size 2 each epoch takes 3 hours, with batch "
        "size 1 only 2 hours. Do you have any ideas on the cause of this problem? Maybe CPUs limit the speed?"
    )
    assert rule_act(parts) == "diagnose"


def test_anything_i_can_do_asks_for_help_not_a_verdict() -> None:
    # NeMo #2718: an OOM reported, then "Is there anything i can do to handle this?"
    parts = split_message(
        "Training Conformer-medium with batch size 32 runs out of memory on my 16GB card after a few epochs.\n"
        "Is there anything i can do to handle this?"
    )
    assert rule_act(parts) == "diagnose"


def test_memory_gains_not_seen_with_mixed_precision() -> None:
    from rag.intents import precision_left_memory_unchanged

    # Lightning #12591, and a Chinese report with the name glued to the text
    assert precision_left_memory_unchanged(
        "When I use `bf16` and check the model, I do not see the memory gains I expect"
    )
    assert precision_left_memory_unchanged("开了fp16显存没有减少")
    # a memory figure with the precision is no report of an unchanged memory
    assert not precision_left_memory_unchanged("I use fp16 and the memory is 20GB")


def test_peft_s_printed_parameter_count_sizes_an_unnamed_model() -> None:
    line = "trainable params: 1,126,400 || all params: 1,101,174,784 || trainable%: 0.10229075496156657"
    assert setup_values("LoRA training is slow, why?\n```\n" + line + "\n```")["num_params"] == 1_101_174_784
    # a named model keeps its preset; 4-bit loading makes the printed count unreliable (packed weights, qlora #184)
    assert "num_params" not in setup_values("Fine-tuning llama-2-7b with LoRA\n" + line)
    assert "num_params" not in setup_values("load_in_4bit=True, QLoRA\n" + line)


def test_a_config_file_s_bf16_is_no_precision_switch_and_a_batch_that_did_not_fit_is_no_setting() -> None:
    from rag.intents import precision_left_memory_unchanged

    # axolotl #1129: "deepspeed/zero3_bf16.json" beside memory that stays the same is about sharding
    assert not precision_left_memory_unchanged(
        "memory usage stays roughly the same, even if deepspeed/zero3_bf16.json is used"
    )
    # PEFT #148: batch size 1 ran; 2 did not fit
    values = setup_values(
        "my memory consumption is around 34 GB with batch size 1. I'm not able to even fit batch_size=2."
    )
    assert values["train_micro_batch_size_per_gpu"] == 1
