"""Setup readings fixed by the lead in stop 32, from the dev-set messages of ho-blind6 (moved in from held-out)."""

from __future__ import annotations

from rag.slots import extract_slots
from tests.message_reading import setup_of


def _card(text: str) -> tuple[str | None, float | None, int | None]:
    s = extract_slots(text, prose=True)
    return s.gpu, s.gpu_memory_gb, s.world_size


def test_a_size_in_brackets_after_counted_cards_is_their_total() -> None:
    # LLaMA-Factory #5169: "8xA100(640G)" is eight 80 GB cards, not one 640 GB card.
    assert _card("the llama3.1 70B model with 8xA100(640G)") == ("a100-80gb", 80.0, 8)
    assert _card("4*V100(128G)")[:2] == ("v100-32gb", 32.0)
    assert _card("4张A100(80G)")[:2] == ("a100-80gb", 80.0)  # one card's size stays one card's size


def test_two_geforce_cards_at_twice_their_size_are_the_modded_cards() -> None:
    # 48 GB RTX 4090s (modded in China) are common; "2张4090 48G" may well be two of them: kept as written.
    assert _card("2张4090 48G")[1] == 48.0


def test_a_size_above_every_card_is_no_cards_size() -> None:
    assert _card("one A100 (640G)")[1] is None


def test_a_length_in_brackets_after_how_the_user_calls_it() -> None:
    assert extract_slots("In my case, the context length is large(32k), I use fa2", prose=True).seq_len == 32768
    assert extract_slots("序列长度比较长(8k)", prose=True).seq_len == 8192


def test_flash_attention_not_installed_is_off() -> None:
    # LLaMA-Factory #2191: "（flash_att 暂时还未安装成功）" — the run uses no FlashAttention.
    assert extract_slots("请问如何解决？ （flash_att 暂时还未安装成功）", prose=True).flash_attention is False
    assert extract_slots("flash-attn is not installed on this machine", prose=True).flash_attention is False
    assert extract_slots("flash attention 安装失败了", prose=True).flash_attention is False
    assert extract_slots("用了flash attention，没有OOM", prose=True).flash_attention is True
    assert extract_slots("I use flash attention 2 and it works", prose=True).flash_attention is True


def test_cards_times_their_size_is_a_count_of_cards_not_of_machines() -> None:
    # SeeClick #24: "I have a 49GB*4 machine" is four 48 GB cards (nvidia-smi's 49140MiB) in one machine.
    s = extract_slots("I have a 49GB*4 machine, however, when I ran the shell, it was out of memory", prose=True)
    assert (s.world_size, s.num_nodes, s.gpu_memory_gb) == (4, None, 49.0)
    s = extract_slots("I have 4*80GB", prose=True)
    assert (s.world_size, s.gpu_memory_gb) == (4, 80.0)
    assert extract_slots("用了2台机器", prose=True).num_nodes == 2


def test_accumulation_steps_counted_before_the_name() -> None:
    # sd-scripts #366: "16 repeats, 5 epochs (in gui), 16 grad accum steps"
    assert (
        extract_slots("16 repeats, 5 epochs (in gui), 16 grad accum steps.", prose=True).gradient_accumulation_steps
        == 16
    )
    assert extract_slots("with 8 accumulation steps", prose=True).gradient_accumulation_steps == 8
    assert extract_slots("4步梯度累积", prose=True).gradient_accumulation_steps == 4


def test_max_length_written_with_a_space_and_max_seq_size() -> None:
    assert extract_slots("can't run while batch size=1,max length=1024", prose=True).seq_len == 1024
    assert extract_slots("Currently, I cap the max_seq size = 800, but", prose=True).seq_len == 800


def test_a_kill_said_in_words_is_read_as_the_host_killing_the_process() -> None:
    # VisualGLM-6B #263 "训练报错，返回值是-9", ChatGLM-6B #736 "返回错误码-9 啥意思": the user's words for SIGKILL.
    from calculators.diagnose.host_kill import read

    for text in ("训练报错，返回值是-9，请问如何处理", "用deepspeed方式返回错误码-9 啥意思", "the exit code is -9"):
        assert [a.kind for a in read(text)] == ["host_oom_kill"], text
    for text in ("exit code -90", "the loss returned 9", "exit code 1"):
        assert read(text) == [], text


def test_a_setting_said_with_she_zhi_de() -> None:
    # Qwen #465: "参数model_max_length 设置的1024."
    assert extract_slots("显卡一张3090 24G的。参数model_max_length 设置的1024.", prose=True).seq_len == 1024
    assert extract_slots("batch_size设置了4", prose=True).train_micro_batch_size_per_gpu == 4


def test_one_gpus_memory_is_no_count_of_one() -> None:
    # METER #8: "When I run METER on 8 a100, I find 1 gpu'memory is 93%"
    text = "When I run METER on 8 a100, I find  1 gpu'memory is 93% and others are 61%."
    assert extract_slots(text, prose=True).world_size == 8


def test_the_configs_default_count_is_not_the_users() -> None:
    # PaddleDetection #5871: the configs are for eight cards; the user trains on one.
    text = "请问所有配置文件里面的学习率设置都是默认对应八卡嘛？在bs不动的情况下我单卡训练的话是不是只需要将初始学习率除以8即可？"
    assert extract_slots(text, prose=True).world_size == 1
    assert extract_slots("默认8卡，我用4卡跑", prose=True).world_size == 4


def test_the_method_of_the_run_that_worked_is_not_the_failing_runs() -> None:
    # transformers #27121: LoRA "everything is ok"; the OOM is the FSDP + bf16 run (method not said).
    text = (
        "- I used this script to fine-tune codellama with Lora and everything is ok, and I got the expected results.\n"
        "- I want to fine-tune codellama with fsdp and bf16, but I met the OOM problem although I set the batch size to 1."
    )
    assert extract_slots(text, prose=True).finetune is None
    assert extract_slots("LoRA works fine but full fine-tuning OOMs", prose=True).finetune == "full"
    assert extract_slots("lora没问题，全量微调就爆显存", prose=True).finetune == "full"
    # the failing run names LoRA too, or nothing failed: LoRA stays
    assert (
        extract_slots("I used lora, everything is ok. Then with lora rank 64 I got OOM", prose=True).finetune == "lora"
    )
    assert extract_slots("qlora可以跑，但是速度很慢", prose=True).finetune == "qlora"


# ---- FSDP: the run's sharding, read and computed (46 dev messages name FSDP; none was read before stop 32)
def test_fsdp_strategy_as_frameworks_write_it() -> None:
    assert extract_slots("I want to fine-tune codellama with fsdp and bf16, but OOM", prose=True).fsdp == "full_shard"
    assert extract_slots("fsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n").fsdp == "shard_grad_op"
    assert extract_slots("fsdp_sharding_strategy: 4").fsdp == "hybrid_shard"  # Accelerate's numbers
    assert extract_slots('torchrun train.py --fsdp "full_shard auto_wrap" --bf16 True').fsdp == "full_shard"


def test_fsdp_offered_as_a_choice_or_beside_zero_is_not_read() -> None:
    for text in (
        "Should I use FSDP or DeepSpeed?",
        "I use deepspeed zero3 instead of FSDP",
        "ZeRO-3 vs FSDP memory",
        "training with zero stage 3 and fsdp",
        "no fsdp here",
    ):
        assert extract_slots(text, prose=True).fsdp is None, text


def test_an_fsdp_run_is_computed_as_fsdp_and_its_way_out_is_fsdps_own() -> None:
    from calculators import estimate_memory
    from rag.levers import candidates
    from rag.planner import plan_calls

    text = "Full fine-tuning llama-2-7b on 4 A100 40GB with FSDP (full_shard), micro batch 1, OOM. Why?"
    setup = setup_of(text)
    assert setup.get("fsdp") == "full_shard"
    assert "FSDP FULL_SHARD" in setup_line(setup, "en")
    from rag.intents import detect_intents

    plan = plan_calls(setup, "diagnose", detect_intents(text), [], text, reported_oom=True)
    main = next(c for c in plan.calls if c.name == "memory")
    assert main.arguments["fsdp"] == "full_shard"
    sharded = estimate_memory(main.arguments).peak_allocated
    unsharded = estimate_memory({**main.arguments, "fsdp": "none"}).peak_allocated
    assert sharded < unsharded / 2  # the states are split over the 4 GPUs
    names = [n for names, _ in candidates(main.arguments) for n in names]
    assert "zero3" not in names and "offload" not in names and "fsdp_offload" in names


def test_a_conflict_names_where_each_value_was_read() -> None:
    # "single A100 8G0GB" (a typo) in the prose, 80 GiB in the pasted error: each value with its own source.
    text = (
        "Getting this error on a single A100 8GB\n\n"
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 774.00 MiB (GPU 0; 80.00 GiB total "
        "capacity; 71.96 GiB already allocated; 791.50 MiB free; 72.18 GiB reserved in total by PyTorch)"
    )
    line = conflicts_line(setup_of(text), "en")
    assert line in ("", "Note: GPU memory is 80 GB from the error but 8 GB in your message.") or (
        "in your message" in line and "from the error" in line and "in your message (" not in line
    ), line


from rag.compose import conflicts_line, setup_line  # noqa: E402


def test_lightning_and_litgpt_settings() -> None:
    # LitGPT #291: `override_max_seq_length = 1024` in the finetune script's settings. (`devices = 4` is not read as
    # the run's count: lit-llama #381 pastes the documentation's `devices = 4` while running on 8 GPUs.)
    s = extract_slots("devices = 8\noverride_max_seq_length = 1024\nmicro_batch_size = 1\n")
    assert (s.seq_len, s.train_micro_batch_size_per_gpu) == (1024, 1)


def test_the_launch_tried_last_with_its_outcome_is_the_run() -> None:
    assert extract_slots("--nproc-per-node 2 is what I use", prose=True).world_size == 2
    assert extract_slots("nproc_per_node=8 works but nproc_per_node=4 OOMs", prose=True).world_size == 4
    # OpenVLA #125: the second launch, introduced as a new try, is the one asked about
    text = (
        "I set ----nproc-per-node to 1, and found the total number of batches processed by one process was 6506. "
        "However, when I set ----nproc-per-node to 2, I found that each process still processed 6506 batches."
    )
    assert extract_slots(text, prose=True).world_size == 2
