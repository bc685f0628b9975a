"""Stop 33 (fid15): stated values read by one reader per class of phrasing, beyond the dev set's wording.

Each class is tested with phrasings the dev set does not have (other numbers, GPU names, order, spacing) and with
negatives: a count in an example or a formula, a size quoted from a README, a guide's claim."""

from __future__ import annotations

import pytest

from rag.slots import extract_slots
from tests.message_reading import setup_of


def _prose(text: str):
    return extract_slots(text, prose=True)


# ---- count × GPU noun: the count, vendor words, a model name (hyphenated too), a card's size before any model word --
@pytest.mark.parametrize(
    ("text", "world"),
    [
        ("I am training on 8 A-100 GPUs.", 8),
        ("we fine-tune on 4 H-100 cards", 4),
        ("on a node with 6 NVIDIA RTX A6000 GPUs (48GB VRAM)", 6),
        ("using 3 Tesla V100s for this", 3),
        ("服务器是3个48G的A6000", 3),
        ("GPU是6个24G的P4090", 6),
        ("手上有2块16GB显存的T4", 2),
        ("two boxes: 2 16G A4000", 2),
        ("8*A10040G的卡还是报错", 8),
    ],
)
def test_count_at_a_gpu_name(text: str, world: int) -> None:
    assert _prose(text).world_size == world


def test_a_hyphenated_model_number_is_no_count_and_names_the_card() -> None:
    s = _prose("the run uses 4 A-100 GPUs")
    assert s.world_size == 4 and s.gpu == "a100-80gb"
    assert _prose("one V-100 32G").gpu == "v100-32gb"


@pytest.mark.parametrize(
    ("text", "gb"),
    [
        ("GPU是5个24G的P4090", 24.0),
        ("我们有3个48G的A6000", 48.0),
        ("2 16G A4000 cards", 16.0),
        ("单卡（32G），微调", 32.0),
    ],
)
def test_the_size_between_a_count_and_its_card_is_one_cards(text: str, gb: float) -> None:
    assert _prose(text).gpu_memory_gb == gb


@pytest.mark.parametrize(
    ("text", "world", "nodes"),
    [
        ("3*8 v100训练", 24, 3),
        ("2x8 GPUs, zero3", 16, 2),
        ("用了4*8卡", 32, 4),
        ("2 × 8 H100 nodes", 16, 2),
        ("3*8*A100 (40G)", 24, 3),
    ],
)
def test_nodes_times_gpus_as_one_product(text: str, world: int, nodes: int) -> None:
    s = _prose(text)
    assert (s.world_size, s.num_nodes) == (world, nodes)


def test_a_batch_formula_is_no_node_product() -> None:
    assert _prose("bs 2*8 GPUs = 16").world_size != 16


def test_a_per_node_key_is_times_the_nodes_the_sentences_state() -> None:
    s = _prose("3台8卡h800 爆显存\nGPUS_PER_NODE=8\nNNODES=${NNODES:-1}")
    assert (s.world_size, s.num_nodes) == (24, 3)
    # set per node with one node stated: the count stays
    assert _prose("NPROC_PER_NODE=4\nNNODES=1").world_size == 4


# ---- counts given as an example, or one card's capacity beside several -----------------------------------------------
def test_a_count_given_as_an_example_is_not_the_run() -> None:
    assert _prose("I have 2 GPUs. Would more help, e.g. 8 GPUs?").world_size == 2
    assert _prose("我用4张卡，用更多卡比如8卡会更快吗").world_size == 4
    # … but when it is the only count, it is still the one to compute with
    assert _prose("比如用8卡训练，batch多大").world_size == 8


def test_one_named_card_beside_several_is_what_one_card_holds() -> None:
    assert _prose("一张A-100上最多放13B，在 32卡上batch最大为256").world_size == 32
    assert _prose("I use one A100").world_size == 1


@pytest.mark.parametrize(
    ("text", "world"),
    [("device number = 8, micro batch size = 16", 8), ("number of devices: 4", 4), ("设备数为2", 2)],
)
def test_device_number(text: str, world: int) -> None:
    assert _prose(text).world_size == world


# ---- a formula with its numbers: each name takes the number in its place -------------------------------------------
@pytest.mark.parametrize(
    ("text", "micro", "ga", "world", "total"),
    [
        ("the batch is batch_size*gradient_accumulation_steps = 8*64 = 512", 8, 64, None, 512),
        ("global = bs x grad_acc x n_gpus = 4 x 8 x 2 = 64", 4, 8, 2, 64),
        ("micro_batch_size * gradient_accumulation_steps * num_gpus = 2*4*8", 2, 4, 8, 64),
        ("per_device_train_batch_size*gradient_accumulation_steps = 16*2 = 32", 16, 2, None, 32),
    ],
)
def test_named_factors_bound_in_order(text: str, micro: int, ga: int, world: int | None, total: int) -> None:
    s = _prose(text)
    assert (s.train_micro_batch_size_per_gpu, s.gradient_accumulation_steps, s.world_size, s.train_batch_size) == (
        micro,
        ga,
        world,
        total,
    )


def test_a_formula_whose_result_disagrees_is_not_bound() -> None:
    s = _prose("batch_size*gradient_accumulation_steps = 8*64 = 500")
    assert s.train_batch_size != 500 and s.train_micro_batch_size_per_gpu != 8


def test_a_global_batch_that_should_be_n() -> None:
    s = _prose(
        "The README says Global Batch Size (per_device_train_batch_size * gradient_accumulation_steps) should be 256. "
        "The script has --per_device_train_batch_size 32 --gradient_accumulation_steps 1. So is it 32, not 256?"
    )
    assert s.train_batch_size == 256


# ---- lengths, observed memory ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "seq"),
    [
        ("context size: 1024 input, 512 target = 1536 total", 1536),
        ("max length 2048 input + 256 output", 2304),
        ("context size 4096", 4096),
    ],
)
def test_length_as_input_and_target(text: str, seq: int) -> None:
    assert _prose(text).seq_len == seq


def test_observed_per_card_times_cards_is_no_capacity() -> None:
    text = "On one GPU the memory used is about 9GB; however, with DDP on 8 GPUs the memory used is 8*14GB!"
    setup = setup_of(text)
    assert setup.get("observed_memory_gb") == 14.0
    assert setup.get("gpu_memory_gb") != 14.0


# ---- sizes: quoted from a README, a guide's claim -------------------------------------------------------------------
def test_a_size_in_a_sentence_quoted_from_the_readme_is_not_the_model() -> None:
    s = _prose(
        "From `supports training causal language models of up to 70B parameters` in the README I expected it to work. "
        "How do I train the largest OPT model (30b params)?"
    )
    assert s.num_params == 30e9


def test_a_guide_claim_is_not_the_users_model_size() -> None:
    setup = setup_of(
        "[按照最佳实践](https://example.org/guide) 24G可以微调14B模型，我有40G，但是无法微调 3B版本的模型。"
    )
    assert setup.get("num_params") == 3e9


# ---- a ZeRO stage: the pasted config is the run's, a stage the prose mentions is the comparison ---------------------
def test_zero_stage_of_the_pasted_config_over_the_prose() -> None:
    text = (
        "I read that ZeRO stage 3 is not supported here. My accelerate config is:\n"
        "```\ndeepspeed_config:\n  zero_stage: 1\ndistributed_type: DEEPSPEED\nnum_processes: 4\n```\n"
        "Why does it OOM?"
    )
    setup = setup_of(text)
    assert setup.get("zero_stage") == 1
    assert 3 in [v.value for v in setup.conflicts.get("zero_stage", [])]


@pytest.mark.parametrize(
    ("text", "world"),
    [
        ("getting OOM on 4 nvidia GPUs with 80GB memory each", 4),
        ("my 2 nvidia gpus run out of memory", 2),
        ("机器环境：4090显卡x4", 4),
        ("A6000 cards x 3, zero2", 3),
        ("gpu：2卡3090", 2),
        ("昇腾910B npu4卡训练", 4),
        ("在A800（80G，2张）上训练失败", 2),
        ("则需要三个24G显存", 3),
    ],
)
def test_more_ways_to_count_cards(text: str, world: int) -> None:
    assert _prose(text).world_size == world


def test_numbers_after_a_colon_without_a_card_are_no_count() -> None:
    assert _prose("batch：8，epoch：2，lr：1e-4").world_size is None
    assert _prose("model: llama 7b, steps: 8 x 100").world_size is None


# ---- observed memory: usage phrases, growth verbs, a reading that did not move ---------------------------------------
@pytest.mark.parametrize(
    ("text", "gb"),
    [
        ("训练时显存占用8G，到了保存时突然增到30GB+", 30.0),
        ("显存会慢慢增加到18G左右", 18.0),
        ("显存一下飙升到70GiB", 70.0),
        ("the mem-usage of GPU is around 21G", 21.0),
        ("the memory usage of each GPU is about 6.5 GB.", 6.5),
        ("I doubled the batch but the GPU memory is still 12G?", 12.0),
        ("the memory jumps from ~10000MB to ~20480MB", 20.0),
        ("with 2 GPUs I get 20480-21504 MiB GPU VRAM used per GPU", 21.0),
        ("12288MB in use", 12.0),
    ],
)
def test_observed_memory_phrasings(text: str, gb: float) -> None:
    s = _prose(text)
    assert s.observed_memory_gb == pytest.approx(gb, rel=0.01) and s.gpu_memory_gb is None


@pytest.mark.parametrize(
    ("text", "gb"),
    [("但是显卡只有12G，没法跑", 12.0), ("on a single GPU(11GB) without DDP", 11.0), ("显卡为 24G", 24.0)],
)
def test_capacity_phrasings(text: str, gb: float) -> None:
    s = _prose(text)
    assert s.gpu_memory_gb == gb and s.observed_memory_gb is None


def test_a_capacity_is_no_reading_and_a_change_of_other_settings_is_no_memory() -> None:
    assert _prose("my GPU memory is 24GB").observed_memory_gb is None
    assert _prose("I changed the learning rate from 1e-4 to 2e-4").observed_memory_gb is None


def test_cards_times_their_size_after_use_is_the_capacity() -> None:
    s = _prose("使用2*24g的单机多卡微调直接oom")
    assert s.gpu_memory_gb == 24.0 and s.observed_memory_gb is None


def test_a_documents_rule_the_user_estimates_with_keeps_the_size() -> None:
    setup = setup_of(
        "根据文档估计的显卡资源34B 模型大概需要300G，目前已经使用了双机 A100 80G总共16卡，但是每张卡仍然会OOM"
    )
    assert setup.get("num_params") == 34e9
