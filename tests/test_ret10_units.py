"""ret10: paste noise in the retrieval query (rag.query_clean) and the GRPO step-count card (issue #11)."""

from __future__ import annotations

from rag.cards import load_cards
from rag.glossary import expand_query
from rag.query_clean import clean_query


# ---- a launch command pasted after a prose lead-in on the same line ----------------------------------
def test_inline_command_after_a_lead_in_loses_its_values():
    """LlamaFactory issues paste "命令是：CUDA_VISIBLE_DEVICES=0,1,2 NCCL_P2P_DISABLE=1 ... llamafactory-cli train x.yaml"
    on one line: the env assignments and paths are the user's, and NCCL_P2P_DISABLE alone pulled the RTX 40 card."""
    text = (
        "单机多卡会把模型加载到每一个卡上，有没有解决办法\n"
        "命令是：CUDA_VISIBLE_DEVICES=0,1,2 NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=1 llamafactory-cli train "
        "examples/contrast/re_baichuanchat_sft.yaml"
    )
    cleaned = clean_query(text)
    assert "单机多卡会把模型加载到每一个卡上" in cleaned
    assert "命令是：llamafactory-cli train" in cleaned
    assert "NCCL_P2P_DISABLE" not in cleaned and "CUDA_VISIBLE_DEVICES" not in cleaned
    assert "RTX 40" not in expand_query(cleaned)
    assert clean_query("my command: torchrun --nproc_per_node 8 train.py --stage dpo") == (
        "my command: torchrun --nproc_per_node train.py --stage dpo"
    )


def test_a_colon_without_a_command_is_left_alone():
    for line in ("Error: python is not found", "问题：deepspeed 训练很慢", "RuntimeError: CUDA error: out of memory"):
        assert clean_query(line) == line


# ---- a method named only in a script or config path inside a command ----------------------------------
def test_method_in_a_script_path_survives_the_command_cleaner():
    """VLM-R1 #133 launches ``src/open_r1/grpo_text.py``: the path is the user's, the file name says GRPO."""
    cleaned = clean_query('torchrun --nproc_per_node="8" src/open_r1/grpo_text.py --output_dir output/$RUN_NAME')
    assert "grpo_text.py" in cleaned and "open_r1" not in cleaned and "RUN_NAME" not in cleaned
    assert "GRPO" in expand_query(cleaned)
    assert "llama3_lora_sft.yaml" in clean_query("llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml")


def test_a_generic_script_path_still_goes():
    cleaned = clean_query("deepspeed --num_gpus 8 /home/me/LLaMA-Factory/src/train_bash.py --output_dir /data/out")
    assert "train_bash" not in cleaned and "/home" not in cleaned


# ---- the GRPO card answers "why so many steps" ---------------------------------------------------------
def test_grpo_card_states_the_step_count_and_cites_the_sampler():
    card = next(c for c in load_cards() if c.id == "trl-grpo-batch-counts-completions")
    assert "mini_repeat_count=num_generations" in card.body_en and "mini_repeat_count=num_generations" in card.body_zh
    assert any("total number of optimizer steps" in s for s in card.symptoms_en)
    assert any("grpo_trainer.py" in s.url for s in card.sources)
