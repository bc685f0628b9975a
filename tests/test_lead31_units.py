"""Setup readings fixed by the lead in stop 31, each from a dev-set message that contradicted a stated value."""

from __future__ import annotations

from calculators.diagnose.launch import read as read_launch
from rag.slots import extract_slots


def _nodes_and_world(text: str) -> tuple[int | None, int | None]:
    s = extract_slots(text, prose=True)
    return s.num_nodes, s.world_size


def test_a_product_of_nodes_and_gpus_counted_in_zhang_is_the_total() -> None:
    # LLaMA-Factory #4616: "使用了 16 *8=128 张 A800" is 128 GPUs on 16 nodes, not 8 (nor nothing).
    assert _nodes_and_world("使用了 16 *8=128 张 A800，cutoff_len 刚开始设置为 8192") == (16, 128)
    assert _nodes_and_world("用了16*8张A800") == (16, 128)
    assert _nodes_and_world("用了2*8张卡") == (2, 16)


def test_a_product_whose_written_result_disagrees_is_not_read() -> None:
    assert _nodes_and_world("用了 2*4=9 张卡")[1] is None


def test_a_launcher_without_a_node_flag_states_no_node_count() -> None:
    # `deepspeed src/train.py …` runs on the hostfile's nodes or one: no node count is written, so none is read.
    fields = {
        k: v
        for a in read_launch("deepspeed src/train.py --stage dpo --per_device_train_batch_size 1")
        for k, v in a.fields.items()
    }
    assert "num_nodes" not in fields
    fields = {k: v for a in read_launch("deepspeed --num_nodes 2 --num_gpus 8 train.py") for k, v in a.fields.items()}
    assert fields["num_nodes"] == 2 and fields["world_size"] == 16


def test_hex_ids_in_links_name_no_model_size() -> None:
    # LLaMA-Factory #2172: an image link ".../e8bfda6b-42fe-426b-…" is no 426B model beside "wizardcoder-33b".
    text = (
        "![image](https://github.com/hiyouga/LLaMA-Factory/assets/69145326/e8bfda6b-42fe-426b-b6b9-3605f4e8ffc9)\n"
        "full ft wizardcoder-33b"
    )
    assert extract_slots(text, prose=True).num_params == 33e9


def test_a_capacity_glued_to_the_card_name() -> None:
    # Qwen #916: "单机8*32GV100" is eight 32 GB V100s (the "100G" said later is an estimate, not the card).
    s = extract_slots("单机8*32GV100 QLora微调", prose=True)
    assert (s.gpu, s.gpu_memory_gb, s.world_size) == ("v100-32gb", 32.0, 8)


def test_a_papers_setting_is_not_the_users() -> None:
    assert extract_slots("DiffusionDPO 论文中使用的 bs=2048", prose=True).train_micro_batch_size_per_gpu is None
    assert (
        extract_slots("the paper uses batch_size=64, I use batch_size=8", prose=True).train_micro_batch_size_per_gpu
        == 8
    )


def test_lora_switched_off_after_its_name_is_a_full_fine_tune() -> None:
    assert extract_slots("Fine-tuning the u-net with LoRA disabled and fp16 AMP", prose=True).finetune == "full"
    assert extract_slots("lora 关掉以后全参训练", prose=True).finetune == "full"


def test_a_papers_setting_the_question_asks_about_is_read() -> None:
    # FlagEmbedding #412: the paper's batch is what the user asks about.
    text = "您好，论文里提到的batch_size=19200，指的是Device_num*per_device_batch_size*accumulation_steps这样计算出来的结果吗"
    s = extract_slots(text, prose=True)
    assert 19200 in (s.train_batch_size, s.train_micro_batch_size_per_gpu)


def test_machines_counted_as_hosts_or_servers() -> None:
    # LLaMA-Factory #3914: "1台主机 … 两块卡" states one node (no launcher flag says it any more).
    assert _nodes_and_world("1台主机，centos7；两块卡，A6000，各40G内存") == (1, 2)
    assert _nodes_and_world("2台服务器，每台8卡") == (2, 16)


def test_one_card_in_gb_and_in_the_oom_messages_gib_is_no_conflict() -> None:
    from rag.setup import Setup

    setup = Setup()
    setup.put("gpu_memory_gb", 40.0, "message")
    setup.put("gpu_memory_gb", 39.45, "error")
    assert "gpu_memory_gb" not in setup.conflicts
    setup.put("gpu_memory_gb", 24.0, "error")
    assert [v.value for v in setup.conflicts["gpu_memory_gb"]] == [24.0]


def test_a_verdict_leads_fact_without_its_verdict_word() -> None:
    from rag.compose import _without_verdict

    assert (
        _without_verdict("No. The effective batch does not set memory.") == "The effective batch does not set memory."
    )
    assert _without_verdict("不是。有效批次本身不决定显存。") == "有效批次本身不决定显存。"
    assert _without_verdict("基本没用。调小 GA 只在降到 1 时省一份梯度。") == "调小 GA 只在降到 1 时省一份梯度。"
    assert _without_verdict("Peak memory is set by the micro batch.") == ""
