"""Readers from blind31's misses (stop 56), each on the user's own words from the thread it came from."""

from __future__ import annotations

from rag.cards import load_cards
from tests.message_reading import setup_values

# lora-scripts #261: kohya sd-scripts' start-up lines under a lora-scripts config for a full SDXL fine-tune
_KOHYA_RUN = (
    '[screenshots]\nmodel_train_type = "sdxl-finetune"\n'
    'vae = "F:\\\\lora-scripts-v1.6.2\\\\sd-models\\\\sdxl_vae.safetensors"\n'
    "train_batch_size = 1\ngradient_checkpointing = true\n\n"
    "running training / 学習開始\n"
    "  num examples / サンプル数: 320\n"
    "  num batches per epoch / 1epochのバッチ数: 320\n"
    "  num epochs / epoch数: 20\n"
    "  batch size per device / バッチサイズ: 1\n"
    "  gradient accumulation steps / 勾配を合計するステップ数 = 1\n"
)


def test_kohya_start_up_lines_give_the_per_device_batch_not_the_epoch_count_above_it() -> None:
    values = setup_values("我 4090 无论分辨率还有batchsize设置多小都爆显存。\n\n" + _KOHYA_RUN)
    assert values["train_micro_batch_size_per_gpu"] == 1
    assert values["gradient_accumulation_steps"] == 1
    # a number on the line above is not "<n> per device"
    assert setup_values("num epochs: 20\nbatch size per device: 1")["train_micro_batch_size_per_gpu"] == 1
    assert setup_values("we use 8 per device")["train_micro_batch_size_per_gpu"] == 8
    # older releases print "gradient ccumulation"; the total line is the global batch
    values = setup_values(
        "  gradient ccumulation steps / 勾配を合計するステップ数 = 4\n"
        "  total train batch size (with parallel & distributed & accumulation) / 総バッチサイズ（並列学習、勾配合計含む）: 8\n"
    )
    assert values["gradient_accumulation_steps"] == 4 and values["train_batch_size"] == 8


def test_lora_scripts_method_is_its_train_type_not_its_name() -> None:
    assert setup_values("我 4090 爆显存。\n\n" + _KOHYA_RUN)["finetune"] == "full"
    assert setup_values('model_train_type = "sdxl-lora"\ntrain_batch_size = 2')["finetune"] == "lora"
    assert setup_values('model_train_type = "sd-dreambooth"')["finetune"] == "full"
    # the tool's name in a path is no method
    assert "finetune" not in setup_values('vae = "F:\\\\lora-scripts-v1.6.2\\\\sdxl_vae.safetensors"\nOOM on a 4090')
    assert setup_values("I train a LoRA on SDXL with kohya")["finetune"] == "lora"


def test_fsdp_said_to_be_off_is_not_the_run_s_sharding() -> None:
    # StableCascade #26
    assert "fsdp" not in setup_values("These results occur with fsdp and EMA turned off. Is this level normal?")
    assert "fsdp" not in setup_values("FSDP disabled, still OOM on 48GB")
    assert "fsdp" not in setup_values("fsdp 关掉了以后还是爆显存")
    assert setup_values("I use FSDP and it is slow")["fsdp"] == "full_shard"


def test_bert_multi_gpu_counts_gpus_as_num_gpu_cores() -> None:
    # bert-multi-gpu #31
    values = setup_values(
        "Situation 1 (multi-gpu): train_batch_size = 8, num_gpu_cores = 4, num_train_epochs = 1\n"
        "global_batch_size = train_batch_size * num_gpu_cores = 32"
    )
    assert values["world_size"] == 4


def test_the_dtype_mismatch_card_names_bf16_and_fp16_meeting() -> None:
    # ChatGLM-Efficient-Tuning #348: "expected scalar type BFloat16 but found Half" is bf16 meeting fp16, not fp32
    card = next(c for c in load_cards() if c.id == "dtype-mismatch-half-float")
    for text in (card.title_en, card.body_en):
        assert "BFloat16 is bf16" in text or "`BFloat16 … Half`" in text
    assert "BFloat16 即 bf16" in card.title_zh


def test_two_runs_that_differ_in_memory_are_no_belief_that_16_bits_halve_it() -> None:
    from rag.intents import detect_misconceptions

    # llama-cookbook #374
    said = "When running quickstart.ipynb, loading model in int8 and fp16 occupy significantly different amounts of GPU memory."
    assert "mixed_precision_halves" not in {r.key for r in detect_misconceptions(said)}
    believed = "I thought fp16 would significantly reduce GPU memory, but it did not."
    assert "mixed_precision_halves" in {r.key for r in detect_misconceptions(believed)}


def test_the_precision_sweep_of_a_lora_run_on_an_8_bit_base_runs() -> None:
    from rag import Assistant

    answer = Assistant().ask(
        "I fine-tune llama2 7B with LoRA on one A100 40G, base loaded with load_in_8bit=True, per_device_train_batch_size "
        "1. I switched to fp16 because I thought mixed precision halves the GPU memory, but memory did not go down. Why?"
    )
    assert "rejected" not in answer.text and "Invalid value" not in answer.text


def test_lr_scaling_reads_the_reference_the_new_scale_and_the_proposal() -> None:
    from rag.lr_change import read_lr_change

    rt = read_lr_change("4卡学习率为0.0001，那么单卡应该除以4吗")  # RT-DETR #79
    assert rt is not None and (rt.old_scale, rt.new_scale, rt.basis) == (4, 1, "gpus")
    assert rt.base_learning_rate == 0.0001 and rt.proposed_factor == 0.25
    # mmsegmentation #2026: two global batches written as products, and the rate proposed
    mm = read_lr_change(
        'samples per GPU=2\nnums of GPUs=8 (batch size = 2 * 8 = 16)\nlearning rate=0.02".\n\nAm I right that I '
        'should change it into\n\nsamples per GPU=8\nnums of GPUs=1 (batch size = 8 * 1 = 8)\nlearning rate=0.01"?'
    )
    assert mm is not None and (mm.old_scale, mm.new_scale, mm.basis) == (16, 8, "batch")
    assert (mm.base_learning_rate, mm.proposed_learning_rate) == (0.02, 0.01)
    # PaddleSeg #3744: the user's two cards against the paper's four
    ps = read_lr_change(
        "在复现时，始终达不到论文的精度，我是用的两卡2080ti，lr和iters都没改，相对于四卡 学习率需要调整吗？"
    )
    assert ps is not None and (ps.old_scale, ps.new_scale) == (4, 2)
    # HAT #9: the total batch kept
    hat = read_lr_change(
        "Should I change the lr if I use 4 GPUs while retaining the same total batchsize, i.e., 8 for each GPU?"
    )
    assert hat is None or hat.basis == "kept"
    # no learning rate asked about, or only one scale: nothing to compute
    assert read_lr_change("4卡训练，单卡会不会OOM？") is None
    assert read_lr_change("I only have one GPU, Do I need to change lr = 0.001 to 0.000125？") is None
    # "lr = 1 GPU's lr * 8" is no learning rate of 1
    nt = read_lr_change(
        "scale it linearly w.r.t num GPU => (lr = 1 GPU's lr * 8) on 8 GPUs. How to set the learning rate?"
    )
    assert nt is None or nt.base_learning_rate is None


def test_lr_scaling_answer_opens_with_the_rules_arithmetic() -> None:
    from rag import Assistant

    bot = Assistant()
    zh = bot.ask("4卡学习率为0.0001，那么单卡应该除以4吗")
    assert zh.first_screen.startswith("**对，") and "0.0001 × 1/4 = 2.5e-05" in zh.first_screen
    assert "IMS_PER_BATCH" in zh.first_screen  # a total batch keeps the rate
    call = next(c for c in zh.tool_calls if c.name == "lr_scaling")
    assert call.arguments == {
        "base_batch_size": 4,
        "new_batch_size": 1,
        "per_gpu_held": True,
        "base_learning_rate": 0.0001,
    }
    en = bot.ask("I trained with lr 0.1. If I change the batch size from 256 to 64, what learning rate should I use?")
    assert "0.1 × 1/4 = 0.025" in en.first_screen and "0.1 × √(1/4) = 0.05" in en.first_screen
    wrong = bot.ask(
        "I trained with lr 0.1. If I change the batch size from 256 to 64, should the learning rate be 0.01?"
    )
    assert "neither rule" in wrong.first_screen


def test_the_lr_scaling_tool_refuses_bad_numbers_clearly() -> None:
    import pytest

    from calculators import CalculatorError, run_tool

    out = run_tool("lr_scaling", {"base_batch_size": 256, "new_batch_size": 64, "base_learning_rate": 0.1})
    assert out.linear_rule_lr == pytest.approx(0.025) and out.sqrt_rule_lr == pytest.approx(0.05)  # type: ignore[attr-defined]
    for bad in (
        {"base_batch_size": 0, "new_batch_size": 64},
        {"base_batch_size": 8, "new_batch_size": 4, "base_learning_rate": -1},
    ):
        with pytest.raises(CalculatorError):
            run_tool("lr_scaling", bad)


def test_the_linear_rule_gives_goyal_et_al_s_published_rate() -> None:
    import pytest

    from calculators import scale_learning_rate

    # Goyal et al. 2017 (arXiv:1706.02677) §2.1 / §5: η = 0.1·kn/256; ResNet-50 at kn = 8k uses η = 3.2
    assert scale_learning_rate(256, 8192, 0.1).linear_rule_lr == pytest.approx(3.2)
    # mmsegmentation #2026, MengzhangLI: 2 × 8 = 16 → 8 × 1 = 8 halves 0.02 to 0.01
    assert scale_learning_rate(16, 8, 0.02).linear_rule_lr == pytest.approx(0.01)


def test_lr_scaling_reads_whose_gpu_count_with_ascii_question_marks() -> None:
    from rag.lr_change import read_lr_change

    # PaddleDetection #5871 as the chat normalises it (full-width "？" to "?"): the configs' 8 cards, the user's 1
    asked = "请问所有配置文件里面的学习率设置都是默认对应八卡嘛?在bs不动的情况下我单卡训练的话是不是只需要将初始学习率除以8即可?"
    got = read_lr_change(asked)
    assert got is not None and (got.old_scale, got.new_scale, got.proposed_factor) == (8, 1, 0.125)


def test_one_gpu_the_run_ended_up_on_is_no_gpu_count() -> None:
    # ms-swift #1086: the script sets 4 GPUs; only one in use is the symptom
    assert setup_values("虽然我脚本写的用4张显卡跑，但实际会只使用一张显卡然后爆内存")["world_size"] == 4
    assert setup_values("服务器有8张卡，我只用了其中2张")["world_size"] == 2
    assert setup_values("I have 4 GPUs but the training only uses one GPU and OOMs")["world_size"] == 4
    assert setup_values("我只用一张卡训练，会OOM吗")["world_size"] == 1


def test_a_count_in_total_of_something_else_holds_no_pooling_belief() -> None:
    from rag.intents import detect_misconceptions

    said = (
        "When using more than 1 GPU, multiple cuda contexts are created on GPU 0. E.g. When using 8 GPUs, in total 8 "
        "cuda contexts are present on the first GPU. One with large memory usage, and 7 with 1227 MB."
    )  # stylegan2-ada-pytorch #70
    assert "more_gpus_pool_memory" not in {r.key for r in detect_misconceptions(said)}
    held = "I have 4 GPUs with 24 GB, so in total 96 GB of memory should fit a 30B model, right?"
    assert "more_gpus_pool_memory" in {r.key for r in detect_misconceptions(held)}


def test_a_precision_flag_asked_about_is_not_the_one_the_run_set() -> None:
    # LLaMA-Factory #2029: asks whether to pass --bf16, trained with --fp16
    said = (
        "如果base模型是bf16，我训练启动的时候的参数应该用--bf16吗？\nbase模型是bf16的，然后lora训练的时候指定了--fp16"
    )
    assert setup_values(said)["precision"] == "amp-fp16"
    assert setup_values("should I use --bf16? I train with --fp16 now")["precision"] == "amp-fp16"
    assert setup_values("I launch with --bf16 and it OOMs")["precision"] == "amp-bf16"


def test_a_kept_global_batch_keeps_the_rate_and_plans_no_scaling() -> None:
    from rag import Assistant

    # HAT #9: the total batch kept; no tool call may show "multiply the learning rate by 0.5" beside the opening
    answer = Assistant().ask(
        "Should I change the lr if I use 4 GPUs while retaining the same total batchsize, i.e., 8 for each GPU?"
        "\nIf I use 2 GPUs with 8 Batch per GPU (total Batch = 16), does the learning rate need to be adjusted?"
    )
    assert answer.first_screen.startswith("**Keep the learning rate")
    assert not any(c.name == "lr_scaling" for c in answer.tool_calls)
