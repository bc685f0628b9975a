"""Setup readings fixed by the lead in stop 32, from the dev-set messages of ho-blind6 (moved in from held-out)."""

from __future__ import annotations

from rag.slots import extract_slots


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
