"""Readers from blind26's misses (stop 51), each on the user's own words from the thread it came from."""

from __future__ import annotations

from typing import Any

from rag.parts import split_message
from rag.slots import classify_key
from tests.message_reading import setup_conflicts, setup_values


def test_a_sentence_opening_on_a_documents_run_is_not_the_users_however_long() -> None:
    # espnet #3719: the yaml comment's 4 V100s of 32 GB are not the user's 15 GB T4
    values = setup_values(
        "According to the comment at the beginning of the yaml file, the training of VITS on JSUT and the fine-tuning "
        "of VITS on JVS both succeeded on 4 GPUs (V100) with 32GB GPU memory. On the other hand, my machine is "
        "equipped only with a Tesla T4 GPU with 15GB GPU memory, apparently having a much smaller GPU memory amount."
    )
    assert values["gpu"] == "t4" and values["gpu_memory_gb"] == 15.0
    assert values["world_size"] == 1  # "a Tesla T4": the one name of the user's own, the V100s are the comment's


def test_the_authors_gpus_you_used_are_not_the_users() -> None:
    # jets #5
    values = setup_values(
        "I see you used 4 V100 GPUs to train. I only have a single RTX 3090 24GB and i still get CUDA out of memory "
        "with `batch_bins: 1000000`. Do you have the GPU usage stats?"
    )
    assert values["gpu"] == "rtx-3090" and values["gpu_memory_gb"] == 24.0 and values["world_size"] == 1
    assert "world_size" not in setup_conflicts(
        "I see you used 4 V100 GPUs to train. I only have a single RTX 3090 24GB and i still get CUDA out of memory"
    )


def test_the_user_coming_back_into_a_documents_sentence_keeps_their_setting() -> None:
    values = setup_values("According to the README I set the batch size to 8 on my 2 A100 GPUs and it OOMs.")
    assert values["train_micro_batch_size_per_gpu"] == 8 and values["world_size"] == 2


def test_the_card_of_an_earlier_try_gives_way_to_the_one_now() -> None:
    # tacotron2 #477: "Before, I had tried … RTX 2070 … Now, … 4 GPUs, each 16DB. (Tesla T4)"
    text = (
        "Before, I had tried training on single GPU with batch size of 8 (NVIDIA GeForce RTX 2070)\n\n"
        "Now, I'm training an English dataset having around 20k sentences. using 4 GPUs, each 16DB. (Tesla T4).\n"
        "I tried batch size of 64, however i get an OOM error of CUDA, but worked well with batch size 32."
    )
    values = setup_values(text)
    assert values["gpu"] == "t4" and values["world_size"] == 4
    assert 8 not in setup_conflicts(text).get("world_size", [])  # "batch size of 8 (NVIDIA …" counts no GPUs


def test_a_config_lines_false_does_not_turn_off_the_next_key() -> None:
    # axolotl #2217: `tf32: false` on the line before `gradient_checkpointing: true`
    values = setup_values(
        "OOM with a big model\n\n```yaml\nbf16: true\nfp16: false\ntf32: false\n\ngradient_checkpointing: true\n"
        "flash_attention: false\n```"
    )
    assert values["gradient_checkpointing"] == "full"


def test_a_list_of_zero_stages_names_no_stage_and_a_training_stage_is_not_zero() -> None:
    # axolotl #2217's title lists every stage; its output_dir "qwen_lora_stage1" is a training stage
    values = setup_values(
        "deepspeed zero1 zero2 zero 3 out of memory when big model\n\n```yaml\noutput_dir: ./qwen_lora_stage1\n"
        "adapter: lora\ndeepspeed: deepspeed/zero2.json\n```"
    )
    assert values["zero_stage"] == 2
    assert "zero_stage" not in setup_values("Deepspeed Zero2 and Zero3 both still OOM on 2 Titan RTX")
    assert setup_values("I use deepspeed_stage_2 in Lightning")["zero_stage"] == 2
    assert setup_values("Also tried deep speed stage 3.")["zero_stage"] == 3


def test_a_training_recipes_stage_is_not_zeros() -> None:
    # MIM-Refiner #11: "stage 3" of the recipe, in a message that never speaks of DeepSpeed
    values = setup_values(
        "Largest batch size for stage3 training\n\nHi! I am trying to set up stage 3 MIM-Refiner training with "
        "images of size (3, 224, 224) and found that I have to reduce the batch size to 64 to avoid OOM errors. "
        "I am using an A100 with 80 GB of memory."
    )
    assert "zero_stage" not in values and values["train_micro_batch_size_per_gpu"] == 64
    assert "zero_stage" not in setup_values("I use deepspeed for the stage 2 pretraining of LLaVA")


def test_a_batch_a_command_imitates_is_not_set() -> None:
    # LAPS #14: the question glued onto the command line asks whether 2 × 64 imitates a single-GPU 128
    text = (
        "CUDA_VISIBLE_DEVICES=0,1 python -m torch.distributed.run --nproc_per_node=2 train.py --dataset f30k "
        "--batch_size 64 --vit_type vit --aggr_ratio 0.4这个命令可以模拟出单卡batch_size=128的表现吧？"
    )
    assert [p.kind for p in split_message(text)] == ["command", "prose"]
    values = setup_values(text)
    assert values["train_micro_batch_size_per_gpu"] == 64 and values["world_size"] == 2
    assert "train_micro_batch_size_per_gpu" not in setup_conflicts(text)


def test_the_textbook_notion_of_a_batch_is_not_the_run() -> None:
    # peclr #17: "batch size 128 * accumulated_grad_batch 16= 2048 … the normal concept of batch size 2048"
    values = setup_values(
        "I have questions about the effective batch size, which is batch size 128 * accumulated_grad_batch 16= 2048. "
        "Does this mean the model see 128 sample a time and then calculates the gradient? I think such type of "
        "implementation differs from the normal concept of batch size 2048, where model sees 2048 sample at a time."
    )
    assert values["train_micro_batch_size_per_gpu"] == 128 and values["gradient_accumulation_steps"] == 16
    assert classify_key("accumulated_grad_batch") == "gradient_accumulation_steps"
    assert classify_key("accum_batch_size") == "train_batch_size"  # Caffe's: the batch accumulated to


def test_the_authors_experiment_asked_about_is_not_the_users_run() -> None:
    # iLRG #1: 4096 is the author's; the user's runs are 512 (40 GB) and 1024 (does not fit)
    values = setup_values(
        "您好，想问下您进行ResNet-50 on ImageNet的实验用的设备是什么呢，当batchSize为4096时显存占用为多少呢？\n"
        "我这边batchSize在512的时候显存占用达到了40G（单卡A800-80G），在batchSize为1024的时候80G的显存就不太够了"
    )
    assert values["train_micro_batch_size_per_gpu"] == 512 and values["observed_memory_gb"] == 40.0


def test_a_papers_batch_then_the_users_config_file() -> None:
    # CARL #11
    values = setup_values(
        "您好，我注意到论文里写训练时的batchsize设为了4，但是配置文件里batch_size是1。莫非您的batchsize是每张卡一个，"
        "四张卡合起来为4吗"
    )
    assert values["train_micro_batch_size_per_gpu"] == 1


def test_the_memory_a_run_is_under_is_the_cards_size() -> None:
    # TransT #103
    values = setup_values("你好，我想问一下在使用4GB的显存下，batchsize只能是2吗。还是我的设置有问题呢")
    assert values["gpu_memory_gb"] == 4.0 and "observed_memory_gb" not in values
    assert setup_values("训练时显存使用了4GB")["observed_memory_gb"] == 4.0


def test_a_french_gigabyte_and_a_peak_reading() -> None:
    # espnet #2798 ("RTX 2060 Super 8 Go"), StableCascade #92 ("peaking at 75457MiB")
    assert setup_values(" - GPU:  RTX 2060 Super 8 Go\n")["gpu_memory_gb"] == 8.0
    values = setup_values("with a batch size of 1, it seems to be peaking at 75457MiB of VRAM on an A100 with 80 GB")
    assert values["observed_memory_gb"] == 73.69


def test_an_oom_under_zero3_opens_with_its_estimate_not_with_cards_not_pooling(bot_without_retrieval: Any) -> None:
    # Qwen #614: "4张3070的卡共64g显存" holds the pooling belief, but the run is ZeRO-3, which does shard the weights
    # over the cards: the estimate of that sharded run is the cause, not "cards do not pool their memory"
    text = (
        "不使用flashattention，4张3070的卡共64g显存可以微调Qwen-14b-chat模型吗\n\n"
        "不使用flashattention，4张3070的卡共64g显存微调Qwen-14b-chat模型时报显存溢出。\n\n"
        "torchrun --nproc_per_node 4 finetune.py --model_name_or_path Qwen-14b-chat --bf16 True "
        "--per_device_train_batch_size 1 --gradient_accumulation_steps 8 --model_max_length 512 --use_lora "
        "--gradient_checkpointing --deepspeed finetune/ds_config_zero3.json"
    )
    head = bot_without_retrieval.ask(text).first_screen.split("\n", 1)[0]
    assert head.startswith("**放不下：每卡约") and "合并" not in head
    # without ZeRO-3 the belief is still the cause to open with
    ddp = bot_without_retrieval.ask("4张3090合计96G显存，全参微调7B还是OOM，为什么？").first_screen.split("\n", 1)[0]
    assert "合并" in ddp or "池" in ddp


def test_zero_stages_listed_are_compared_not_read_as_one(bot_without_retrieval: Any) -> None:
    # "zero2 和 zero3 … 差多少": each named stage's total, none assumed to be the run's
    zh = bot_without_retrieval.ask("zero2 和 zero3 在 8 张 A100 上训练 llama2-13b 每张卡显存差多少？").first_screen
    head = zh.split("\n", 1)[0]
    assert head.startswith("**按你比较的 ZeRO stage") and "（ZeRO-2）" in head and "（ZeRO-3）" in head
    assert "（ZeRO-0）" not in head and "没有给出" not in zh
    # axolotl #998: "Zero2 and Zero3 both still OOM" — neither stage fits the 24 GB Titan RTX
    en = bot_without_retrieval.ask(
        "QLoRA Mixtral 8x7b on 2 Titan RTX with flash attention: Deepspeed Zero2 and Zero3 both still OOM. Why?"
    ).first_screen.split("\n", 1)[0]
    assert en.startswith("**It does not fit at the ZeRO stages you name") and "(ZeRO-3)" in en


def test_the_pipeline_bubble_is_no_cause_for_a_message_without_pipeline_parallelism() -> None:
    # ETP-R1 #4: "为什么单卡训练时间要比多卡训练时间要短" never names pipeline parallelism
    from rag.cards import load_cards
    from rag.citing import named_setting_conflict
    from rag.opening import read_asked

    card = next(c for c in load_cards() if c.id == "pipeline-parallel-bubble-micro-batches")

    def asked(text: str) -> Any:
        return read_asked(text, split_message(text))

    assert named_setting_conflict(card, asked("我们尝试过 4 卡 进行实验，发现反而是1卡的时间最短。这是为什么呢？"))
    assert not named_setting_conflict(card, asked("开了流水线并行以后 4 卡反而比 1 卡慢，为什么？"))
    assert not named_setting_conflict(card, asked("With pipe-parallel-size 4 in gpt-neox training got slower"))


def test_release_months_thinking_and_distilled_models_name_their_presets() -> None:
    from calculators.presets import preset_for_name

    # Qwen3's 2507 updates keep the first release's shape; the only Qwen2 of 57B and Qwen3 of 30B are MoE
    assert preset_for_name("Qwen3-30B-A3B-Thinking-2507") == "qwen3-30b-a3b"
    assert preset_for_name("Qwen3-4B-Instruct-2507") == "qwen3-4b"
    assert preset_for_name("Qwen2-57B") == "qwen2-57b-a14b" and preset_for_name("qwen3-30b") == "qwen3-30b-a3b"
    # DeepSeek-R1's distilled models keep their bases' shapes (the DeepSeek-R1 README's table)
    assert preset_for_name("DeepSeek-R1-Distill-Qwen-14B") == "qwen2.5-14b"
    assert preset_for_name("deepseek-r1-distill-llama-70b") == "llama-3.1-70b"
    # a name merely close to one stays unresolved; a number that is no release month is not stripped
    assert preset_for_name("DeepSeek-R1-Distill-Qwen-7B") is None and preset_for_name("qwen3-30b-2048") is None


def test_the_amp_loop_card_answers_only_hand_written_loops_or_the_learning_rate() -> None:
    # The GradScaler contract is no cause of an HF Trainer run's fp16 NaN; it is of "AMP 导致 loss 为 nan" in a loop
    # the user wrote (FlyEgle/imageclassification #1) and of "if using fp16, does the learning rate need to change?"
    from rag.cards import load_cards
    from rag.citing import named_setting_conflict
    from rag.opening import read_asked

    card = next(c for c in load_cards() if c.id == "amp-loss-scaling-update-and-lr")

    def conflict(text: str) -> str:
        return named_setting_conflict(card, read_asked(text, split_message(text)))

    assert conflict("训练 Qwen-7B 时开了 --fp16，loss 一直是 0，grad_norm 是 nan")
    assert not conflict("AMP 导致 loss 为 nan：我在自己的代码里加了 AMP，训练一段时间后 loss 变成 nan")
    assert not conflict("Compared with fp32, if using fp16, does the learning rate parameters need to be changed?")
    assert not conflict("I call scaler.step(optimizer) and then optimizer.step(); the loss becomes nan")


def test_a_bold_list_item_is_the_users_write_up_not_a_pasted_error() -> None:
    # unsloth #3942: "1. **CUDA OOM during Model Loading:** …" is prose; an OOM while loading is not answered by a
    # training-time estimate that fits
    from rag.compose import OOM_AT_LOAD

    text = (
        "1. **CUDA OOM during Model Loading:** The process crashes during 4-bit quantization/loading, with GPU 0 "
        "running out of memory despite having 80GB VRAM."
    )
    assert [p.kind for p in split_message(text)] == ["prose"]
    assert OOM_AT_LOAD.search(text) and OOM_AT_LOAD.search("加载模型时就爆显存了")
    assert not OOM_AT_LOAD.search("out of memory at step 10 while training")


def test_a_training_recipes_stages_are_no_zero_stages_compared() -> None:
    from rag.intents import stages_named

    assert stages_named("zero2 和 zero3 在 8 张 A100 上训练 llama2-13b 每张卡显存差多少？") == {"2", "3"}
    assert stages_named("stage 1 pretraining works, stage 2 finetune OOM") == set()
