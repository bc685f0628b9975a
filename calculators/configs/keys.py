"""Hand-kept key tables (names only) used to spot typos and to recognise a pasted config.

Where a library can give the verdict itself (see the format modules' adapters) it is preferred to these tables."""

from __future__ import annotations

DS_BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
DS_TOP_KEYS = frozenset(
    {
        *DS_BATCH_KEYS,
        "activation_checkpointing",
        "aio",
        "autotuning",
        "bf16",
        "bfloat16",
        "checkpoint",
        "checkpoint_tag_validation",
        "comet",
        "communication_data_type",
        "compile",
        "csv_monitor",
        "data_efficiency",
        "data_types",
        "dataloader_drop_last",
        "disable_allgather",
        "domino",
        "dump_state",
        "expert_parallel",
        "flops_profiler",
        "fp16",
        "fp16_master_weights_and_grads",
        "gradient_clipping",
        "gradient_predivide_factor",
        "hybrid_engine",
        "load_universal_checkpoint",
        "memory_breakdown",
        "mics_hierarchical_params_gather",
        "mics_shard_size",
        "monitor_config",
        "optimizer",
        "pipeline",
        "prescale_gradients",
        "scheduler",
        "seq_parallel_communication_data_type",
        "steps_per_print",
        "tensor_parallel",
        "tensorboard",
        "timers",
        "torch_autocast",
        "train",
        "use_data_before_expert_parallelism",
        "vocabulary_size",
        "wall_clock_breakdown",
        "wandb",
        "weight_quantization",
        "zero_allow_untested_optimizer",
        "zero_force_ds_cpu_optimizer",
        "zero_optimization",
        "zero_quantized_gradients",
        "zero_quantized_weights",
    }
)
# DeepSpeedZeroConfig fields and aliases (deepspeed/runtime/zero/config.py, DeepSpeed 0.19.8), extra="forbid".
# Only used when DeepSpeed itself cannot be loaded: then DeepSpeedConfig gives the verdict.
DS_ZERO_KEYS = frozenset(
    {
        "allgather_bucket_size",
        "allgather_partitions",
        "allgather_sequential",
        "compute_grad_norm",
        "contiguous_gradients",
        "cpu_offload",
        "cpu_offload_param",
        "cpu_offload_use_pin_memory",
        "elastic_checkpoint",
        "enable_sanity_checks",
        "gather_16bit_weights_on_model_save",
        "ignore_unused_parameters",
        "leaf_module",
        "legacy_stage1",
        "load_from_fp32_weights",
        "log_trace_cache_warnings",
        "max_live_parameters",
        "max_reuse_distance",
        "memory_efficient_linear",
        "model_persistence_threshold",
        "module_granularity_threshold",
        "offload_optimizer",
        "offload_param",
        "overlap_comm",
        "override_module_apply",
        "param_persistence_threshold",
        "parameter_alignment",
        "pipeline_loading_checkpoint",
        "prefetch_bucket_size",
        "reduce_bucket_size",
        "reduce_scatter",
        "round_robin_gradients",
        "save_muon_momentum_buffer_in_memory",
        "stage",
        "stage3_allgather_sequential",
        "stage3_gather_16bit_weights_on_model_save",
        "stage3_gather_fp16_weights_on_model_save",
        "stage3_max_live_parameters",
        "stage3_max_reuse_distance",
        "stage3_model_persistence_threshold",
        "stage3_module_granularity_threshold",
        "stage3_param_persistence_threshold",
        "stage3_prefetch_bucket_size",
        "stage3_use_all_reduce_for_fetch_params",
        "sub_group_size",
        "use_all_reduce_for_fetch_params",
        "use_multi_rank_bucket_allreduce",
        "zenflow",
        "zero_hpz_partition_size",
        "zero_quantized_gradients",
        "zero_quantized_nontrainable_weights",
        "zero_quantized_weights",
    }
)
# Keys current DeepSpeed refuses with DeepSpeedConfigError (deepspeed/runtime/config.py
# _REMOVED_TOP_LEVEL_CONFIG_KEYS / _REMOVED_ZERO_CONFIG_KEYS, DeepSpeed 0.19.8; see
# https://github.com/deepspeedai/DeepSpeed/issues/8489).
DS_REMOVED_TOP_KEYS = frozenset(
    {
        "nebula",
        "compression_training",
        "amp",
        "quantize_training",
        "sparse_gradients",
        "eigenvalue",
        "sparse_attention",
        "elasticity",
        "graph_harvesting",
        "curriculum_learning",
        "progressive_layer_drop",
    }
)
DS_REMOVED_ZERO_KEYS = frozenset({"mics_shard_size", "mics_hierarchical_params_gather", "zeropp_loco_param"})
DS_OFFLOAD_KEYS = {
    "offload_param": frozenset({"device", "nvme_path", "buffer_count", "buffer_size", "max_in_cpu", "pin_memory"}),
    "offload_optimizer": frozenset(
        {
            "device",
            "nvme_path",
            "buffer_count",
            "pin_memory",
            "pipeline_read",
            "pipeline_write",
            "fast_init",
            "ratio",
            "pipeline",
            "super_offload",
            "cpuadam_cores_perc",
        }
    ),
}
# transformers TrainingArguments fields (v4 and v5) plus the usual script arguments.
HF_KEYS = frozenset(
    {
        "output_dir",
        "overwrite_output_dir",
        "do_train",
        "do_eval",
        "do_predict",
        "eval_strategy",
        "evaluation_strategy",
        "prediction_loss_only",
        "per_device_train_batch_size",
        "per_device_eval_batch_size",
        "per_gpu_train_batch_size",
        "gradient_accumulation_steps",
        "eval_accumulation_steps",
        "eval_delay",
        "torch_empty_cache_steps",
        "learning_rate",
        "weight_decay",
        "adam_beta1",
        "adam_beta2",
        "adam_epsilon",
        "max_grad_norm",
        "num_train_epochs",
        "max_steps",
        "lr_scheduler_type",
        "lr_scheduler_kwargs",
        "warmup_ratio",
        "warmup_steps",
        "log_level",
        "log_level_replica",
        "log_on_each_node",
        "logging_dir",
        "logging_strategy",
        "logging_first_step",
        "logging_steps",
        "logging_nan_inf_filter",
        "save_strategy",
        "save_steps",
        "save_total_limit",
        "save_safetensors",
        "save_on_each_node",
        "save_only_model",
        "restore_callback_states_from_checkpoint",
        "use_cpu",
        "no_cuda",
        "seed",
        "data_seed",
        "jit_mode_eval",
        "use_ipex",
        "bf16",
        "fp16",
        "fp16_opt_level",
        "half_precision_backend",
        "bf16_full_eval",
        "fp16_full_eval",
        "tf32",
        "local_rank",
        "ddp_backend",
        "tpu_num_cores",
        "debug",
        "dataloader_drop_last",
        "eval_steps",
        "dataloader_num_workers",
        "dataloader_prefetch_factor",
        "past_index",
        "run_name",
        "disable_tqdm",
        "remove_unused_columns",
        "label_names",
        "load_best_model_at_end",
        "metric_for_best_model",
        "greater_is_better",
        "ignore_data_skip",
        "fsdp",
        "fsdp_min_num_params",
        "fsdp_config",
        "fsdp_transformer_layer_cls_to_wrap",
        "accelerator_config",
        "deepspeed",
        "label_smoothing_factor",
        "optim",
        "optim_args",
        "adafactor",
        "group_by_length",
        "length_column_name",
        "report_to",
        "ddp_find_unused_parameters",
        "ddp_bucket_cap_mb",
        "ddp_broadcast_buffers",
        "dataloader_pin_memory",
        "dataloader_persistent_workers",
        "skip_memory_metrics",
        "use_legacy_prediction_loop",
        "push_to_hub",
        "resume_from_checkpoint",
        "hub_model_id",
        "hub_strategy",
        "hub_token",
        "hub_private_repo",
        "hub_always_push",
        "hub_revision",
        "gradient_checkpointing",
        "gradient_checkpointing_kwargs",
        "include_inputs_for_metrics",
        "include_for_metrics",
        "eval_do_concat_batches",
        "fp16_backend",
        "push_to_hub_model_id",
        "push_to_hub_organization",
        "push_to_hub_token",
        "mp_parameters",
        "auto_find_batch_size",
        "full_determinism",
        "torchdynamo",
        "ray_scope",
        "ddp_timeout",
        "torch_compile",
        "torch_compile_backend",
        "torch_compile_mode",
        "include_tokens_per_second",
        "include_num_input_tokens_seen",
        "neftune_noise_alpha",
        "optim_target_modules",
        "batch_eval_metrics",
        "eval_on_start",
        "use_liger_kernel",
        "liger_kernel_config",
        "eval_use_gather_object",
        "average_tokens_across_devices",
        "ddp_static_graph",
        "dataloader_in_order",
        "dataloader_multiprocessing_context",
        "parallelism_config",
        "project",
        "trackio_space_id",
        "trackio_bucket_id",
        "trackio_static_space_id",
        "train_sampling_strategy",
        "use_cache",
        "activation_checkpointing",
        "activation_checkpointing_kwargs",
        "enable_jit_checkpoint",
        "predict_with_generate",
        "generation_max_length",
        "generation_num_beams",
        "generation_config",
        "sortish_sampler",
        # common script arguments (run_clm.py, TRL SFTTrainer)
        "model_name_or_path",
        "config_name",
        "tokenizer_name",
        "cache_dir",
        "dataset_name",
        "dataset_config_name",
        "train_file",
        "validation_file",
        "max_seq_length",
        "max_length",
        "block_size",
        "model_max_length",
        "max_source_length",
        "max_target_length",
        "max_train_samples",
        "max_eval_samples",
        "torch_dtype",
        "trust_remote_code",
        "use_peft",
        "lora_r",
        "lora_alpha",
        "lora_dropout",
        "lora_target_modules",
        "load_in_4bit",
        "load_in_8bit",
        "attn_implementation",
        "packing",
        "dataset_text_field",
        "source_lang",
        "target_lang",
        "preprocessing_num_workers",
        "overwrite_cache",
        "use_fast_tokenizer",
        "low_cpu_mem_usage",
    }
)
# LLaMA-Factory hparams dataclass fields (src/llamafactory/hparams/*.py), on top of HF_KEYS.
LF_KEYS = frozenset(
    HF_KEYS
    | set(
        """
adapter_folder adapter_name_or_path add_special_tokens add_tokens additional_target apollo_layerwise apollo_proj
apollo_proj_type apollo_rank apollo_scale apollo_scale_front apollo_scale_type apollo_target apollo_update_interval
audio_sampling_rate badam_mask_mode badam_mode badam_start_block badam_switch_interval badam_switch_mode
badam_update_ratio badam_verbose batch_size block_diag_attn buffer_size cache_dir chunk_size compute_accuracy
compute_dtype cpu_infer create_new_adapter crop_to_patches cutoff_len data_shared_file_system dataset dataset_dir
default_system device_map disable_gradient_checkpointing disable_shuffling do_sample double_quantization
download_mode dpo_label_smoothing early_stopping_steps enable_liger_kernel enable_thinking eval_dataset
eval_num_beams eval_on_each_dataset export_device export_dir export_hub_model_id export_legacy_format
export_quantization_bit export_quantization_dataset export_quantization_maxlen export_quantization_nsamples
export_size finetuning_type flash_attn fp8 fp8_backend fp8_enable_fsdp_float8_all_gather freeze_extra_modules
freeze_language_model freeze_multi_modal_projector freeze_trainable_layers freeze_trainable_modules
freeze_vision_tower galore_layerwise galore_proj_type galore_rank galore_scale galore_target
galore_update_interval hf_hub_token ignore_pad_token_for_loss image_do_pan_and_scan image_max_pixels
image_min_pixels include_effective_tokens_per_second infer_backend infer_dtype init_special_tokens
interleave_probs kto_chosen_weight kto_rejected_weight lang ld_alpha length_penalty lora_alpha lora_dropout
lora_rank lora_target loraplus_lr_embedding loraplus_lr_ratio low_cpu_mem_usage mask_history max_length
max_new_tokens max_samples media_dir mix_strategy mixture_of_depths mode model_max_length model_name_or_path
model_revision module_dropout moe_aux_loss_coef ms_hub_token n_shot neat_packing new_special_tokens_config
num_beams offload_folder oft_block_size oft_rank oft_target om_hub_token overwrite_cache overwrite_output_dir
packing pissa_convert pissa_init pissa_iter placement_strategy plot_loss ppo_buffer_size ppo_epochs
ppo_score_norm ppo_target ppo_whiten_rewards pref_bco_weight pref_beta pref_ftx pref_loss
preprocessing_batch_size preprocessing_num_workers print_param_status pure_bf16 quantization_bit
quantization_device_map quantization_method quantization_type ray_init_kwargs ray_num_workers ray_run_name
ray_storage_filesystem ray_storage_path ref_model ref_model_adapters ref_model_quantization_bit
repetition_penalty resize_vocab resources_per_worker reward_model reward_model_adapters
reward_model_quantization_bit reward_model_type rope_scaling save_dir seed shift_attn simpo_gamma
skip_special_tokens split_special_tokens stage streaming swanlab_api_key swanlab_mode swanlab_project
swanlab_run_name swanlab_workspace task task_dir temperature template tokenized_path tool_format top_k top_p
train_from_scratch train_on_prompt trust_remote_code upcast_layernorm upcast_lmhead_output use_adam_mini
use_apollo use_audio_in_video use_badam use_dft_loss use_dora use_fast_tokenizer use_galore use_llama_pro
use_mca use_muon use_reentrant_gc use_rslora use_swanlab use_unsloth use_unsloth_gc use_v1_kernels val_size
video_fps video_max_pixels video_maxlen video_min_pixels vllm_config vllm_enforce_eager vllm_gpu_util
vllm_max_lora_rank vllm_maxlen
""".split()
    )
)
# accelerate ClusterConfig fields (commands/config/config_args.py) and deepspeed_config keys (DeepSpeedPlugin).
ACC_KEYS = frozenset(
    {
        "compute_environment",
        "distributed_type",
        "mixed_precision",
        "use_cpu",
        "debug",
        "num_processes",
        "machine_rank",
        "num_machines",
        "gpu_ids",
        "main_process_ip",
        "main_process_port",
        "rdzv_backend",
        "same_network",
        "main_training_function",
        "enable_cpu_affinity",
        "fp8_config",
        "deepspeed_config",
        "fsdp_config",
        "parallelism_config",
        "megatron_lm_config",
        "mpirun_config",
        "downcast_bf16",
        "tpu_name",
        "tpu_zone",
        "tpu_use_cluster",
        "tpu_use_sudo",
        "command_file",
        "commands",
        "tpu_vm",
        "tpu_env",
        "dynamo_config",
        "tpu_metrics_debug",
        "ipex_config",
    }
)
ACC_DS_KEYS = frozenset(
    {
        "deepspeed_config_file",
        "gradient_accumulation_steps",
        "gradient_clipping",
        "zero_stage",
        "offload_optimizer_device",
        "offload_param_device",
        "offload_optimizer_nvme_path",
        "offload_param_nvme_path",
        "zero3_init_flag",
        "zero3_save_16bit_model",
        "deepspeed_multinode_launcher",
        "deepspeed_hostfile",
        "deepspeed_exclusion_filter",
        "deepspeed_inclusion_filter",
        "deepspeed_moe_layer_cls_names",
        "transformer_moe_cls_names",
    }
)
# Accelerate's DeepSpeedPlugin._deepspeed_config_checks: these may not sit next to deepspeed_config_file.
ACC_IGNORED_WITH_FILE = (
    "gradient_accumulation_steps",
    "gradient_clipping",
    "zero_stage",
    "offload_optimizer_device",
    "offload_param_device",
    "offload_param_nvme_path",
    "offload_optimizer_nvme_path",
    "zero3_save_16bit_model",
)

# "auto" keys Hugging Face Trainer fills (transformers integrations/deepspeed.py), with the source of the value.
HF_AUTO_SOURCES: dict[str, tuple[str, str]] = {
    "train_micro_batch_size_per_gpu": ("per_device_train_batch_size", "per_device_train_batch_size"),
    "gradient_accumulation_steps": ("gradient_accumulation_steps", "gradient_accumulation_steps"),
    "train_batch_size": (
        "world_size × per_device_train_batch_size × gradient_accumulation_steps",
        "world_size × per_device_train_batch_size × gradient_accumulation_steps",
    ),
    "gradient_clipping": ("max_grad_norm (default 1.0)", "max_grad_norm（默认 1.0）"),
    "optimizer.params.lr": ("learning_rate (default 5e-5)", "learning_rate（默认 5e-5）"),
    "optimizer.params.betas": (
        "[adam_beta1, adam_beta2] (default [0.9, 0.999])",
        "[adam_beta1, adam_beta2]（默认 [0.9, 0.999]）",
    ),
    "optimizer.params.eps": ("adam_epsilon (default 1e-8)", "adam_epsilon（默认 1e-8）"),
    "optimizer.params.weight_decay": ("weight_decay (default 0.0)", "weight_decay（默认 0.0）"),
    "scheduler.params.warmup_min_lr": ("0 (not a Trainer argument)", "0（不是 Trainer 参数）"),
    "scheduler.params.warmup_max_lr": ("learning_rate", "learning_rate"),
    "scheduler.params.warmup_num_steps": (
        "warmup_steps (or warmup_ratio × total steps)",
        "warmup_steps（或 warmup_ratio × 总步数）",
    ),
    "scheduler.params.total_num_steps": (
        "the number of training steps the Trainer computes",
        "Trainer 计算出的总训练步数",
    ),
    "fp16.enabled": ("--fp16 (or --fp16_full_eval)", "--fp16（或 --fp16_full_eval）"),
    "bf16.enabled": ("--bf16 (or --bf16_full_eval)", "--bf16（或 --bf16_full_eval）"),
    "amp.enabled": (
        "--fp16 with --fp16_backend apex (transformers v4)",
        "--fp16 且 --fp16_backend apex（transformers v4）",
    ),
    "amp.opt_level": ("--fp16_opt_level (transformers v4)", "--fp16_opt_level（transformers v4）"),
    "zero_optimization.reduce_bucket_size": ("hidden_size × hidden_size", "hidden_size × hidden_size"),
    "zero_optimization.stage3_prefetch_bucket_size": (
        "0.9 × hidden_size × hidden_size (ZeRO-3 only)",
        "0.9 × hidden_size × hidden_size（仅 ZeRO-3）",
    ),
    "zero_optimization.stage3_param_persistence_threshold": (
        "10 × hidden_size (ZeRO-3 only)",
        "10 × hidden_size（仅 ZeRO-3）",
    ),
    "zero_optimization.stage3_gather_16bit_weights_on_model_save": (
        "Accelerate's zero3_save_16bit_model (default false)",
        "Accelerate 的 zero3_save_16bit_model（默认 false）",
    ),
}
HF_DEFAULTS = {
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "max_grad_norm": 1.0,
    "learning_rate": 5e-5,
    "adam_beta1": 0.9,
    "adam_beta2": 0.999,
    "adam_epsilon": 1e-8,
    "weight_decay": 0.0,
}
DETECT_KEYS = frozenset(
    {
        *DS_BATCH_KEYS,
        "zero_optimization",
        "per_device_train_batch_size",
        "distributed_type",
        "deepspeed_config",
        "num_processes",
        "mixed_precision",
        "finetuning_type",
        "lora_rank",
        "lora_target",
        "cutoff_len",
        "quantization_bit",
        "offload_optimizer",
        "offload_param",
        "gradient_checkpointing",
        "deepspeed",
        "zero_stage",
        "stage3_prefetch_bucket_size",
        "reduce_bucket_size",
        "nproc_per_node",
        "num_gpus",
        "model_name_or_path",
        "learning_rate",
        "bf16",
        "fp16",
    }
)
_STRONG_KEYS = DETECT_KEYS - {"model_name_or_path", "learning_rate", "bf16", "fp16", "deepspeed"}
