"""Stated-value fidelity (issue #10), round 10: formats and phrasings the reader misread.

Each case is built from the *format* (a realistic message of that shape), not from one dev message's words.
Fast tier: text processing only, no model.
"""

from __future__ import annotations

from rag.parts import split_message
from rag.slots import extract_slots
from tests.message_reading import setup_of


# ---- GPU counts the message qualifies ------------------------------------------------------------------
def test_training_share_of_the_gpus_is_the_world_size():
    # GRPO/PPO recipes keep GPUs aside for the vLLM generator: the trainer's world size is the training share
    s = setup_of("I run GRPO on a node with 8 H100 GPUs (6 for training, 2 for vLLM generation), batch 2 per device.")
    assert s.get("world_size") == 6
    s = setup_of("单机8卡，其中7张卡用于训练，1张卡跑vllm，per_device_train_batch_size=2")
    assert s.get("world_size") == 7


def test_training_share_equal_to_all_gpus_changes_nothing():
    s = setup_of("I use 4 GPUs for training with per_device_train_batch_size 8")
    assert s.get("world_size") == 4


def test_one_named_card_plus_the_other_n():
    s = setup_of("训练时0号卡显存占用12G，另外3张卡只有9G，这正常吗？")
    assert s.get("world_size") == 4
    s = setup_of("GPU0 uses 20GB while the other 7 GPUs use 14GB each with DDP. Why?")
    assert s.get("world_size") == 8
    assert s.get("observed_memory_gb") == 20


def test_other_n_cards_without_a_named_first_card_is_n():
    s = setup_of("我有2张卡在跑别的任务，另外4张卡训练")
    assert s.get("world_size") != 5


def test_windows_dedicated_and_shared_report_is_no_gpu_count():
    # Task Manager's "24 GPU and 3.9 Shared": gigabytes of dedicated and shared memory, one card
    s = setup_of(
        "On my single 3090 the 7B fine-tune needs about 28 GB of VRAM ( 24 GPU and 3.9 Shared ) so it spills over."
    )
    assert s.get("world_size") in (None, 1)
    assert s.get("gpu") == "rtx-3090"


# ---- which GPU is the run's ----------------------------------------------------------------------------
def test_counted_cards_win_over_a_single_card_named_for_comparison():
    s = setup_of("显卡 L20 * 8 全参微调 14B 一直 OOM（在单卡H100 80G上同样的配置不会OOM），该怎么设置？")
    assert s.get("gpu_text") == "L20"
    assert s.get("gpu") == "l20"
    assert s.get("world_size") == 8
    s = setup_of("用单张32G的V100能跑batch 4，换成四张2080ti每张11G，batch还是只能开4，为什么？")
    assert "2080" in s.get("gpu_text")
    assert s.get("gpu_memory_gb") == 11
    assert s.get("world_size") == 4


def test_a_required_pair_of_cards_does_not_displace_the_users_single_card():
    s = setup_of("我只有一块24G的4090，README里写着需要2个A100，LoRA 能跑吗？")
    assert s.get("gpu") == "rtx-4090"
    assert s.get("gpu_memory_gb") == 24


def test_unknown_card_times_count_keeps_its_size_from_the_product():
    s = setup_of("硬件：A40 x 4 = 48G x 4，zero3 全参微调 8B 还是 OOM，另外试过单卡A100 80G 是可以的")
    assert s.get("gpu_text") == "A40"
    assert s.get("gpu_memory_gb") == 48
    assert s.get("world_size") == 4


# ---- the per-device batch in the user's own formula ----------------------------------------------------
def test_train_batch_size_in_own_formula_is_the_micro_batch():
    s = setup_of(
        "train_batch_size=2，gradient_accumulation_steps=8，用4张卡训练，"
        "总batch_size=train_batch_size * gradient_accumulation_steps * 卡数 = 64，对吗？"
    )
    assert s.get("train_micro_batch_size_per_gpu") == 2
    assert s.get("train_batch_size") == 64
    assert s.get("world_size") == 4  # "卡数 = 64" is the formula's result, not a GPU count


def test_train_batch_size_in_a_config_with_the_formula_in_prose():
    text = (
        "args:\n```yaml\ntrain_batch_size: 4\ngradient_accumulation_steps: 2\n```\n"
        "On 8 GPUs my global batch is train_batch_size x gradient_accumulation_steps x num_gpus, is that right?"
    )
    s = setup_of(text)
    assert s.get("train_micro_batch_size_per_gpu") == 4
    assert not s.has("train_batch_size")


def test_deepspeed_train_batch_size_without_such_formula_stays_the_total():
    s = setup_of('ds config has "train_batch_size": 64, "gradient_accumulation_steps": 4 on 8 GPUs')
    assert s.get("train_batch_size") == 64
    assert not s.has("train_micro_batch_size_per_gpu")


# ---- "from A to B": asked vs done ----------------------------------------------------------------------
def test_change_asked_keeps_the_current_value():
    slots = extract_slots(
        "The README trains with batch size 32. How do I change per_device_train_batch_size from the default 1 to 32?",
        prose=True,
    )
    assert slots.train_micro_batch_size_per_gpu == 1


def test_change_done_uses_the_new_value():
    slots = extract_slots(
        "I changed per_device_train_batch_size from 1 to 8 and now it runs out of memory.", prose=True
    )
    assert slots.train_micro_batch_size_per_gpu == 8


def test_papers_batch_is_not_the_users_micro_batch():
    slots = extract_slots("In the paper, the batch size is 64. My run: 2 GPUs, gradient_accumulation_steps 4.")
    assert slots.train_micro_batch_size_per_gpu != 64


# ---- LoRA on a model loaded quantized ------------------------------------------------------------------
def test_lora_on_a_model_loaded_quantized_is_qlora():
    assert extract_slots("我的代码是量化加载模型后再训练 lora 的，合并的时候报错").finetune == "qlora"
    assert extract_slots("I train LoRA adapters on the quantized base model, then merging fails").finetune == "qlora"


def test_lora_without_quantization_stays_lora():
    assert extract_slots("I train LoRA adapters on llama-2-7b in bf16, then merging fails").finetune == "lora"
    assert extract_slots("lora 训练，没有量化加载模型").finetune == "lora"


# ---- settings in the shapes people write them ----------------------------------------------------------
def test_zero_stage_with_an_equals_sign_or_colon():
    assert extract_slots("when zero stage = 3, from_pretrained uses more memory").zero_stage == 3
    assert extract_slots("ZeRO stage: 2 with offload").zero_stage == 2


def test_double_equals_states_the_value():
    assert (
        extract_slots("If gradient_accumulation_steps == 1 the loss is divided by zero").gradient_accumulation_steps
        == 1
    )


def test_nodes_written_times_node_or_hyphenated():
    assert extract_slots("with 4xnode training each iteration is slower").num_nodes == 4
    assert extract_slots("we train on a 2-node cluster with HYBRID_SHARD").num_nodes == 2


def test_sharded_checkpoint_file_names_the_world_size():
    assert extract_slots("the actor folder has model_world_size_4_rank_0.pt … rank_3.pt").world_size == 4


def test_single_gpu_in_markdown_bold():
    s = extract_slots("I used an **A100-80G GPU** and it still runs out of memory")
    assert s.world_size == 1
    assert s.gpu_memory_gb == 80


def test_key_with_a_bracketed_note_before_its_value():
    assert extract_slots("we train with `train_batch_size(global batch size)=256` on 8 GPUs").train_batch_size == 256


def test_per_device_batch_written_after_its_number():
    assert extract_slots("2 GPUs with 16 samples per GPU, should I scale the lr?").train_micro_batch_size_per_gpu == 16
    assert extract_slots("4 GPUs, i.e., 8 for each GPU").train_micro_batch_size_per_gpu == 8


def test_measured_gigabytes_per_gpu_are_no_capacity():
    s = extract_slots("DDP: 1.2 s/it, 21.3GB per GPU; ZeRO-2: 1.4 s/it, 17.6GB per GPU")
    assert s.gpu_memory_gb is None
    assert extract_slots("8 GPUs with 32GB per GPU").gpu_memory_gb == 32


def test_model_name_with_a_size_word():
    assert extract_slots("LoRA on a RoBERTa-large model uses 12 GB").model_text == "RoBERTa-large"


def test_checkpoint_loaded_in_pasted_code():
    s = extract_slots("model = ViTModel.from_pretrained('./vit-huge-patch14-224-in21k').cuda()")
    assert s.model_text == "vit-huge-patch14-224-in21k"
    s = extract_slots('model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-13b-hf")')
    assert s.model == "llama-2-13b"


def test_log_with_a_collector_prefix_is_a_log_and_names_fp16_and_stage():
    text = (
        "training hangs after 10k steps:\n```\n"
        "1700000000000 worker-3 info [2023-11-14 05:04:21,527] [INFO] [stage2.py:1357:step] [deepspeed] "
        "OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1.0, reducing to 1.0\n```\nany idea?"
    )
    parts = split_message(text)
    assert [p.kind for p in parts] == ["prose", "log", "prose"]
    s = setup_of(text)
    assert s.get("zero_stage") == 2
    assert "fp16" in s.get("precision")


def test_megatron_index_map_names_the_sequence_length():
    text = (
        "how many iterations make one epoch?\n```\n"
        " > loading doc-idx mapping from data/pile_text_document_train_indexmap_1000000ns_4096sl_42s_doc_idx.npy\n"
        " > loading sample-idx mapping from data/pile_text_document_train_indexmap_1000000ns_4096sl_42s_sample_idx.npy\n"
        "    total number of samples: 1000123\n```"
    )
    assert setup_of(text).get("seq_len") == 4096


def test_typoed_batch_key():
    assert extract_slots("为什么我v100-32G，betch-size1都oom").train_micro_batch_size_per_gpu == 1
    assert extract_slots("qlora fsdp, bacth_size=2, 一段时间后oom").train_micro_batch_size_per_gpu == 2


def test_one_cards_use_beside_the_others_is_no_gpu_count():
    s = extract_slots("多卡训练，一个卡是30g，其余都是12g左右，batch_size=1")
    assert s.world_size != 1


def test_batch_value_defined_by_a_formula_is_the_total():
    s = extract_slots("论文里的batch_size=4096，指的是device_num*per_device_batch_size*gradient_accumulation_steps吗？")
    assert s.train_batch_size == 4096
    assert s.train_micro_batch_size_per_gpu is None


def test_lora_rank_glued_to_chinese():
    assert extract_slots("lora微调比全量慢，我设置的r=4").lora_rank == 4


def test_max_sequence_length_with_a_space():
    assert extract_slots("max_sequence length is 4096 on 8 GPUs").seq_len == 4096


def test_accelerate_deepspeed_log_names_the_per_device_batch():
    text = (
        "grad accumulation gets reset:\n```\n"
        "[2024-05-01 10:00:00,123][accelerate.accelerator][INFO] - Since you passed both train and evaluation "
        "dataloader, `is_train_batch_min` (here True will decide the `train_batch_size` (8).\n"
        "[2024-05-01 10:00:00,124][accelerate.accelerator][INFO] - Updating DeepSpeed's gradient accumulation "
        "steps to 1 from 4.\n```"
    )
    assert setup_of(text).get("train_micro_batch_size_per_gpu") == 8


def test_espnet_accum_grad_argument():
    assert extract_slots("the `accum_grad` argument is set to 4 in train.yaml").gradient_accumulation_steps == 4


def test_ga_value_in_brackets_in_a_formula():
    assert extract_slots("BATCH_SIZE = 2 x 4 x GRADIENT_ACC(8) = 64?").gradient_accumulation_steps == 8


def test_global_batch_size_hyphenated_is_no_micro_batch():
    s = extract_slots("Megatron with --global-batch-size=256 and a 350M transformer model on 8 GPUs")
    assert s.train_batch_size == 256
    assert s.train_micro_batch_size_per_gpu is None
    assert s.num_params == 350e6


def test_gradient_checkpointing_typo():
    assert extract_slots("error when training with gradient_checkpoining on").gradient_checkpointing == "full"


def test_moe_name_is_no_dense_size():
    s = extract_slots("training with xtuner config mixtral_8x7b_instruct_qlora_alpaca_e3.py on 8 GPUs")
    assert s.model == "mixtral-8x7b"
    assert s.num_params is None


def test_recipe_file_name_names_full_fine_tuning():
    assert extract_slots("xtuner train qwen1_5_7b_chat_full_alpaca_e3 --deepspeed deepspeed_zero3").finetune == "full"
    assert extract_slots("llamafactory-cli train examples/train_full/qwen2_full_sft.yaml").finetune == "full"
    assert extract_slots("use_full_fp16 true").finetune is None


# ---- counts and memory in the other common shapes ------------------------------------------------------
def test_chinese_count_after_the_card():
    assert extract_slots("A100两张，全参微调 7B 会 OOM 吗").world_size == 2
    assert extract_slots("显存24G的3090四块，lora 训练").world_size == 4


def test_english_node_words_and_per_node_counts():
    s = extract_slots("we train on two nodes with 8 GPUs each")
    assert (s.num_nodes, s.world_size) == (2, 16)
    s = extract_slots("two machines x 8 H100, ZeRO-3")
    assert (s.num_nodes, s.world_size) == (2, 16)
    assert extract_slots("I study machine learning on my laptop").num_nodes is None


def test_used_out_of_the_cards_total():
    s = extract_slots("nvidia-smi shows 23GB used of 24GB on my 3090")
    assert (s.observed_memory_gb, s.gpu_memory_gb) == (23, 24)
    s = extract_slots("GPU memory usage is 39GB/40GB right before the OOM")
    assert (s.observed_memory_gb, s.gpu_memory_gb) == (39, 40)
    assert extract_slots("the error is on GPU 2 of 8GB cards").observed_memory_gb is None  # no unit: no amount


def test_half_precision_flag_turned_off_with_a_space():
    assert extract_slots("--fp16 false --bf16 true --gradient_checkpointing").precision == "amp-bf16"


def test_batch_marked_total_after_its_value():
    s = extract_slots("batch_size: 64 (total), 4 GPUs")
    assert s.train_batch_size == 64
    assert s.train_micro_batch_size_per_gpu is None


def test_total_and_per_card_batch_in_chinese():
    s = extract_slots("总batch size 256，单卡batch 8，用的是8卡")
    assert (s.train_batch_size, s.train_micro_batch_size_per_gpu, s.world_size) == (256, 8, 8)
    assert extract_slots("总batch size 64，单卡batch 4").world_size != 1  # "单卡batch" is per card, no GPU count


def test_gpus_used_of_those_the_machine_has():
    assert setup_of("服务器有8张卡，我只用了其中2张卡跑 lora").get("world_size") == 2
    assert setup_of("I use 2 out of 8 GPUs for training and it OOMs").get("world_size") == 2
    assert setup_of("I have 8 GPUs but only use 4 GPUs for this run").get("world_size") == 4
    assert setup_of("8卡训练，只用了2天就跑完了").get("world_size") == 8  # days, not cards


def test_a_single_card_supposed_to_fail_is_no_subset():
    s = setup_of("单机两张4090，单卡24G，仅用一张卡是无法加载13B模型的，所以必须并行")
    assert s.get("world_size") == 2


# ---- the fine-tuning method the user runs --------------------------------------------------------------
def test_method_the_user_says_they_use_wins_over_one_compared():
    assert extract_slots("Is QLoRA slower than LoRA? I use LoRA with bf16 on one A100").finetune == "lora"
    assert extract_slots("全量微调和lora微调显存差多少？我用的是lora").finetune == "lora"


def test_method_switched_to_is_the_run():
    assert extract_slots("I switched from LoRA to full fine-tuning and now it OOMs").finetune == "full"
    assert extract_slots("从lora改成全参微调以后就OOM了").finetune == "full"


def test_own_lora_on_4bit_stays_qlora():
    assert extract_slots("I use LoRA on a model loaded with load_in_4bit=True").finetune == "qlora"


def test_observed_memory_phrasings():
    assert extract_slots("nvidia-smi显示每张卡用了30多G").observed_memory_gb == 30
    s = extract_slots("memory goes up to 70GB on each 80GB card")
    assert (s.observed_memory_gb, s.gpu_memory_gb) == (70, 80)
    s = extract_slots("peak memory 35.2 GB on a 40GB A100")
    assert (s.observed_memory_gb, s.gpu_memory_gb) == (35.2, 40)


def test_bare_batch_glued_to_chinese():
    s = extract_slots("我的batch是4，梯度累积2，相当于64吗")
    assert (s.train_micro_batch_size_per_gpu, s.gradient_accumulation_steps) == (4, 2)


def test_ga_and_seq_keys_glued_to_chinese():
    assert extract_slots("把ga开到16以后显存没变").gradient_accumulation_steps == 16
    assert extract_slots("我用的seq是2048").seq_len == 2048
    assert extract_slots("galore optimizer with 8 GPUs").gradient_accumulation_steps is None


def test_parallel_sizes_glued_to_chinese():
    s = extract_slots("megatron 训练，设置tp为2，pp为4")
    assert (s.tensor_parallel_size, s.pipeline_parallel_size) == (2, 4)


def test_allocated_of_total_and_mib_columns():
    s = extract_slots("GPU memory: 40GB allocated out of 80GB when it fails")
    assert (s.observed_memory_gb, s.gpu_memory_gb) == (40, 80)
    s = extract_slots("nvidia-smi says 81000MiB / 81920MiB on every card")
    assert s.gpu_memory_gb == 80 and s.observed_memory_gb == round(81000 / 1024, 2)
    assert extract_slots("OOM with 23.5 GB reserved on a 3090").observed_memory_gb == 23.5


def test_one_precision_flag_set_both_ways_is_compared_not_the_run():
    assert extract_slots("with `use_fp16=true` and `use_fp16=false` the 7B needs the same 28 GB").precision is None
    s = extract_slots("the model loads in full float 32; `fp16=True` and `fp16=False` use the same memory")
    assert s.precision == "fp32"
    assert extract_slots("bf16=True, fp16=False").precision == "amp-bf16"


# ---- the model a launch names --------------------------------------------------------------------------
def test_model_flag_in_an_inline_command_wins_over_a_data_sets_name():
    s = extract_slots(
        "running python finetune.py --base_model 'mosaicml/mpt-7b-instruct' --data_path 'yahma/alpaca-cleaned'"
    )
    assert s.model_text == "mpt-7b-instruct"
    assert s.num_params == 7e9


def test_moe_checkpoint_path_is_its_moe_preset():
    s = extract_slots("--model_name_or_path /mnt/models/mistralai_Mixtral-8x7B-Instruct-v0.1 --finetuning_type lora")
    assert s.model == "mixtral-8x7b"
    assert s.num_params is None
