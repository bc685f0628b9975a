"""Readers added in stop 46, one per class of message the blind21 threads (now dev) showed; each case is the thread's
own wording."""

from __future__ import annotations

from rag import runs
from rag.parts import split_message
from rag.setup import read_setup
from rag.slots import extract_slots


def test_without_using_lora_is_full_fine_tuning() -> None:
    # TRL #1187
    slots = extract_slots(
        "I try to train a full 7B model with the DPO script on 4x4096(96Gb), without using Lora or quantization "
        "(it is a full model training). But I did train with fp16.",
        prose=True,
    )
    assert slots.finetune == "full"
    assert extract_slots("I train it with LoRA on one GPU", prose=True).finetune == "lora"
    # … and a bare mention of LoRA further on does not undo it
    later = extract_slots(
        "I try to train a full 7B model with the DPO script, without using Lora or quantization (it is a full model "
        "training).\n\nI used the dpo script from your example, and I only change the Lora and remove the "
        "quantization part.",
        prose=True,
    )
    assert later.finetune == "full"


def test_flash_attention_not_installed_is_off() -> None:
    # litgpt #282
    slots = extract_slots("I didn't install Flash Attention 2.\nI set micro_batch_size = 1", prose=True)
    assert slots.flash_attention is False
    assert extract_slots("I installed Flash Attention 2 last week", prose=True).flash_attention is True


def test_a_cost_in_gpu_mem_is_a_reading_not_the_cards_size() -> None:
    # litgpt #282's title
    slots = extract_slots("Using adapter-v2 finetune llama2-7b costs 64GB GPU mem", prose=True)
    assert slots.observed_memory_gb == 64 and slots.gpu_memory_gb is None
    assert extract_slots("I am using 80GB GPUs", prose=True).gpu_memory_gb == 80


def test_a_moe_name_in_a_launch_flag_sizes_by_its_total() -> None:
    # LLaMA-Factory #9222: "A3B" is the active count; memory holds all 30B
    slots = extract_slots("--model_name_or_path Qwen/Qwen3-Omni-30B-A3B-Instruct")
    assert slots.num_params == 30e9
    assert extract_slots("--model_name_or_path x/foo-1.5b-chat").num_params == 1.5e9


def test_two_bare_sizes_the_failing_one_is_the_run() -> None:
    # GaLore #49
    prose = (
        "I'm running out of memory whenever I use a sequence length longer than 512, even if I use a smaller model. "
        "I can train a 7B model w/ a 512 sequence length on 24G VRAM, but I can't train a 5B model w/ a 8192 "
        "sequence length. Thanks!"
    )
    setup, _ = read_setup(split_message(prose))
    assert setup.get("num_params") == 5e9
    assert setup.get("seq_len") == 8192
    assert 7e9 in [c.value for c in setup.conflicts.get("num_params", [])]


def test_paddle_launch_counts_machines_and_device_ids() -> None:
    # Paddle #45092: two machines of two GPUs each
    slots = extract_slots('python -m paddle.distributed.launch --ips="192.168.4.17,192.168.4.7" --gpus=0,1 train.py')
    assert (slots.num_nodes, slots.world_size) == (2, 4)
    assert extract_slots("python -m paddle.distributed.launch --gpus=0,1,2,3 train.py").world_size == 4
    assert extract_slots("deepspeed --num_gpus 4 train.py").world_size == 4


def test_a_documents_memory_figure_is_no_reading() -> None:
    # Open-Sora #409: the report's 80G is what the config should need; the user's run took 73GB
    prose = (
        "I use the default training config and I have 2 A100 80G.\n\nHowever, it raises the error, but in report "
        "1.1, it says the default config is for 80G memory usage.\n\nCurrently, when I use 480p with 48 frames, it "
        "takes around 73GB."
    )
    assert [c.value for c in runs.candidates(prose).get("observed_memory_gb", [])] == [73.0]
    setup, _ = read_setup(split_message(prose))
    assert setup.get("observed_memory_gb") == 73


def test_a_model_copy_beside_accumulated_gradients_is_no_belief_about_accumulation() -> None:
    # Lightning #6984 describes data parallelism; the belief needs the copies stored by the accumulation
    from rag.intents import detect_misconceptions

    ddp = (
        "In pytorch, each device gets a copy of the model and other states exactly like the original one. After "
        "backwards, gradients from all devices are accumulated together and broadcasted to every device."
    )
    assert "ga_stores_copies" not in [r.key for r in detect_misconceptions(ddp)]
    belief = "Doesn't gradient accumulation store a copy of the gradients for every micro-batch?"
    assert "ga_stores_copies" in [r.key for r in detect_misconceptions(belief)]


def test_the_authors_config_is_read_after_the_users_own() -> None:
    # F5-TTS #632: the authors' settings, then the user's
    message = (
        "You used 8xA100 80GB GPU's for model training, accordingly your settings are:\n\n```yaml\n"
        "batch_size_per_gpu: 38400\ngrad_accumulation_steps: 1\n```\n\nIf I want to use 8xA100 40GB GPU's for model "
        "training to reproduce your results, I'd use:\n\n```yaml\nbatch_size_per_gpu: 19200\n"
        "grad_accumulation_steps: 2\n```\n\nThen the overall steps should be the same."
    )
    setup, _ = read_setup(split_message(message))
    assert setup.get("train_micro_batch_size_per_gpu") == 19200
    assert setup.get("gradient_accumulation_steps") == 2
    quoted = setup.conflicts.get("train_micro_batch_size_per_gpu", [])
    assert [(c.value, c.evidence) for c in quoted] == [(38400, "reference")]
    # with only the reference pasted, its values are read
    alone, _ = read_setup(split_message(message.split("If I want")[0]))
    assert alone.get("train_micro_batch_size_per_gpu") == 38400


def test_a_quoted_paper_passage_sets_nothing() -> None:
    # LOMO #16 quotes the ZeRO paper's GPT-2 example (batch 32, 1K tokens) before asking about LLaMA-7B
    message = (
        "I read the paper `ZeRO: Memory Optimizations Toward Training Trillion Parameter Models`. In the section 3.2, "
        "they said that \n```\nActivations can take up a significant amount of memory [7] during training. \nAs a "
        "concrete example, the 1.5B parameter GPT-2 model trained with sequence length of 1K and batch size of 32 \n"
        "requires about 60GB of memory. \n```\nCan you explain why the activations of LLaMA-7b take 45 GB?"
    )
    setup, _ = read_setup(split_message(message))
    assert setup.get("train_micro_batch_size_per_gpu") is None
    assert setup.get("seq_len") is None


def test_a_gpu_machine_with_an_article_is_one_machine() -> None:
    # transformers #27299: "on a 8 gpu machine" is one machine of 8 GPUs, not 8 machines
    slots = extract_slots("thus on a 8 gpu machine the minimum effective batch size is 8.", prose=True)
    assert (slots.num_nodes, slots.world_size) == (None, 8)
    assert extract_slots("we train on a 4-node cluster", prose=True).num_nodes == 4


def test_an_oom_reported_in_its_own_clause_before_the_question_is_reported() -> None:
    # LLaMA-Factory #3094: the "？" closes the sentence, the OOM clause itself asks nothing
    from rag.intents import reports_oom

    assert reports_oom("用两张4090显卡微调chatglm3-6b模型out of memory，用的是lora + zero3的方式，请问哪里错了？")
    assert not reports_oom("lora微调，会OOM吗？")
    assert not reports_oom("全参微调7B，24G显存够吗，会OOM吗？")
    assert not reports_oom("If I set bs 8, will it OOM?")


def test_a_megatron_launch_sizes_the_network_by_its_shape() -> None:
    # DeepSpeed #237: `pretrain_gpt2.py` runs the shape its flags give (60 × 6144, about 27B), not GPT-2
    slots = extract_slots("python pretrain_gpt2.py --model-parallel-size 8 --num-layers 60 --hidden-size 6144")
    assert slots.model is None
    assert slots.num_params == 60 * 12 * 6144**2
    gated = extract_slots("NUM_LAYERS=32\nHIDDEN_SIZE=4096\nFFN_HIDDEN_SIZE=11008\n--swiglu")
    assert gated.num_params == 32 * (4 * 4096**2 + 3 * 4096 * 11008)  # LLaMA-7B's blocks, embeddings not given
    named = extract_slots("--model_name_or_path meta-llama/Llama-2-7b-hf --num-layers 24 --hidden-size 1024")
    assert named.model == "llama-2-7b" and named.num_params is None  # a named model keeps its preset


def test_parameter_counts_show_three_significant_digits() -> None:
    from rag.formatting import billions

    assert [billions(n) for n in (60 * 12 * 6144**2, 6.7e9, 1e12, 124e6)] == ["27.2B", "6.7B", "1000B", "0.124B"]


def test_a_script_choosing_among_shapes_gives_no_size() -> None:
    # Megatron-LM #6314's script sets the shape per MODEL_SIZE branch; which one runs is not in the text
    slots = extract_slots(
        "if   [ ${MODEL_SIZE} == 7 ];   then HIDDEN_SIZE=4096;  NUM_LAYERS=10;\n"
        "elif [ ${MODEL_SIZE} == 13 ];  then HIDDEN_SIZE=5120;  NUM_LAYERS=40;\nfi\n"
        "--num-layers ${NUM_LAYERS} --hidden-size ${HIDDEN_SIZE}"
    )
    assert slots.num_params is None


def test_pooling_words_count_only_near_the_gpus_and_memory() -> None:
    from rag.intents import detect_misconceptions

    def keys(text: str) -> list[str]:
        return [r.key for r in detect_misconceptions(text)]

    assert "more_gpus_pool_memory" in keys("我有4张3090，合计96G显存，为什么还是OOM？")
    # LLaMA-Factory #260's first message: "in total" is the OOM error's, far from any GPU count
    far = (
        "I use 8 V100 for full fine-tuning.\n\n" + "Some unrelated words about the data set. " * 8 + "\n\n"
        "`OutOfMemoryError: CUDA out of memory. Tried to allocate 26.08 GiB (GPU 0; 31.75 GiB total capacity; "
        "26.15 GiB reserved in total by PyTorch)`"
    )
    assert "more_gpus_pool_memory" not in keys(far)


def test_a_figure_no_single_gpu_holds_says_to_shard() -> None:
    # LMFlow #682: a 70B full SFT with no GPU named opened with a bare "About 1,028.8 GiB per GPU."
    from rag import Assistant

    bot = Assistant()
    answer = bot.ask(
        "Training 70b model\n\nIf I want a 70b SFT model, how should I set the parameters? For full-parameter "
        "training, I currently use your framework to allocate at least one batch_size to each GPU."
    )
    assert "No single GPU has that much" in answer.first_screen and "ZeRO-3" in answer.first_screen
    small = bot.ask("How much GPU memory does a full fine-tune of a 7B model in bf16 need?")
    assert "No single GPU" not in small.first_screen
