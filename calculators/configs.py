"""The config doctor: read a pasted training config, say what will break and what it costs.

Understands four kinds of config:

* a DeepSpeed config (JSON, possibly with ``"auto"`` values),
* Hugging Face ``TrainingArguments`` (a dict, JSON, or a command line such as
  ``torchrun --nproc_per_node 8 train.py --per_device_train_batch_size 4 ...``),
* an Accelerate config (YAML written by ``accelerate config``),
* a LLaMA-Factory training YAML.

The checks reproduce what the libraries themselves do, with their wording where
they print one (read from the sources, not guessed):

* DeepSpeed ``runtime/config.py``: ``_set_batch_related_parameters`` /
  ``_batch_assertion`` (via :mod:`calculators.batch`), ``'bfloat16 and fp16
  modes cannot be simultaneously enabled'``, duplicate keys rejected;
  ``runtime/zero/config.py``: ZeRO sections are pydantic models with
  ``extra="forbid"`` (an unknown key inside ``zero_optimization`` is an error,
  an unknown top-level key is silently ignored), ``"auto"`` inside them is
  dropped (non-strict mode) so the default applies, ``overlap_comm`` defaults
  to True only for stage 3; offload_param is "Valid only with stage 3", CPU
  optimizer offload works with stages 1-3, NVMe only with stage 3.
* transformers ``integrations/deepspeed.py``: ``HfTrainerDeepSpeedConfig.
  trainer_config_process`` / ``trainer_config_finalize`` fill ``"auto"`` and
  collect mismatches as ``- ds {key}={ds_val} vs hf {hf_key}={hf_val}``, then
  raise ``ValueError("Please correct the following DeepSpeed config values that
  mismatch TrainingArguments values: ...")``. ``fill_match`` only touches keys
  that are present: a *missing* key is neither filled nor compared.
* accelerate ``DeepSpeedPlugin.__post_init__``: a DeepSpeed config file without
  ``gradient_accumulation_steps`` gets ``1`` written into it, and
  ``Accelerator._prepare_deepspeed`` then prefers DeepSpeed's value over the
  Trainer's ("Gradient accumulation steps mismatch: ... Using DeepSpeed's value.").
* LLaMA-Factory: ``finetuning_type`` defaults to ``lora``, ``cutoff_len`` to
  2048, and gradient checkpointing is ON unless
  ``disable_gradient_checkpointing: true``.

Pure Python: no torch, no transformers import.
"""
from __future__ import annotations

import difflib
import json
import math
import re
import shlex
from bisect import bisect_right
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from . import safe_yaml
from .batch import BatchConfigError, deepspeed_fill, resolve_batch
from .errors import CalculatorError
from .memory import GiB, LORA_MODULES, MemoryConfig, MemoryEstimate, estimate_memory, make_config
from .presets import count_params, get_gpu, get_model_shape

Kind = Literal["deepspeed", "hf_training_args", "accelerate", "llamafactory"]
Severity = Literal["error", "warning", "info"]
KINDS = ("deepspeed", "hf_training_args", "accelerate", "llamafactory")
MAX_TEXT = 200_000

# ---------------------------------------------------------------------------------------------
# Known keys (names only), used to spot typos and to recognise a pasted config.

DS_BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
DS_TOP_KEYS = frozenset({
    *DS_BATCH_KEYS, "optimizer", "scheduler", "fp16", "bf16", "bfloat16", "amp", "zero_optimization",
    "gradient_clipping", "prescale_gradients", "gradient_predivide_factor", "sparse_gradients", "steps_per_print",
    "wall_clock_breakdown", "dump_state", "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer",
    "activation_checkpointing", "flops_profiler", "tensorboard", "wandb", "csv_monitor", "comet", "aio",
    "communication_data_type", "seq_parallel_communication_data_type", "data_types", "checkpoint", "elasticity",
    "autotuning", "compression_training", "data_efficiency", "curriculum_learning", "pipeline", "sparse_attention",
    "memory_breakdown", "eigenvalue", "progressive_layer_drop", "quantize_training", "dataloader_drop_last",
    "hybrid_engine", "nebula", "timers", "tensor_parallel", "compile", "weight_quantization", "torch_autocast",
    "use_data_before_expert_parallelism", "load_universal_checkpoint", "fp16_master_weights_and_grads",
    "graph_harvesting", "train", "zero_quantized_weights", "zero_quantized_gradients", "monitor_config",
    "disable_allgather", "mics_shard_size", "mics_hierarchical_params_gather", "vocabulary_size",
    "checkpoint_tag_validation", "expert_parallel", "domino",
})
# DeepSpeedZeroConfig fields and aliases (deepspeed/runtime/zero/config.py), extra="forbid".
DS_ZERO_KEYS = frozenset({
    "stage", "contiguous_gradients", "reduce_scatter", "reduce_bucket_size", "use_multi_rank_bucket_allreduce",
    "allgather_partitions", "allgather_bucket_size", "overlap_comm", "load_from_fp32_weights", "elastic_checkpoint",
    "offload_param", "offload_optimizer", "sub_group_size", "cpu_offload_param", "cpu_offload_use_pin_memory",
    "cpu_offload", "prefetch_bucket_size", "stage3_prefetch_bucket_size", "param_persistence_threshold",
    "stage3_param_persistence_threshold", "model_persistence_threshold", "max_live_parameters",
    "stage3_max_live_parameters", "max_reuse_distance", "stage3_max_reuse_distance",
    "gather_16bit_weights_on_model_save", "stage3_gather_16bit_weights_on_model_save",
    "module_granularity_threshold", "stage3_module_granularity_threshold", "use_all_reduce_for_fetch_params",
    "stage3_use_all_reduce_for_fetch_params", "stage3_gather_fp16_weights_on_model_save",
    "ignore_unused_parameters", "legacy_stage1", "round_robin_gradients", "zero_hpz_partition_size",
    "zero_quantized_weights", "zero_quantized_nontrainable_weights", "zero_quantized_gradients",
    "zeropp_loco_param", "mics_shard_size", "mics_hierarchical_params_gather", "memory_efficient_linear",
    "pipeline_loading_checkpoint", "override_module_apply", "log_trace_cache_warnings",
})
DS_OFFLOAD_KEYS = {
    "offload_param": frozenset({"device", "nvme_path", "buffer_count", "buffer_size", "max_in_cpu", "pin_memory"}),
    "offload_optimizer": frozenset({"device", "nvme_path", "buffer_count", "pin_memory", "pipeline_read",
                                    "pipeline_write", "fast_init", "ratio", "pipeline"}),
}
# transformers TrainingArguments fields (v4 and v5) plus the usual script arguments.
HF_KEYS = frozenset({
    "output_dir", "overwrite_output_dir", "do_train", "do_eval", "do_predict", "eval_strategy", "evaluation_strategy",
    "prediction_loss_only", "per_device_train_batch_size", "per_device_eval_batch_size", "per_gpu_train_batch_size",
    "gradient_accumulation_steps", "eval_accumulation_steps", "eval_delay", "torch_empty_cache_steps",
    "learning_rate", "weight_decay", "adam_beta1", "adam_beta2", "adam_epsilon", "max_grad_norm",
    "num_train_epochs", "max_steps", "lr_scheduler_type", "lr_scheduler_kwargs", "warmup_ratio", "warmup_steps",
    "log_level", "log_level_replica", "log_on_each_node", "logging_dir", "logging_strategy", "logging_first_step",
    "logging_steps", "logging_nan_inf_filter", "save_strategy", "save_steps", "save_total_limit",
    "save_safetensors", "save_on_each_node", "save_only_model", "restore_callback_states_from_checkpoint",
    "use_cpu", "no_cuda", "seed", "data_seed", "jit_mode_eval", "use_ipex", "bf16", "fp16", "fp16_opt_level",
    "half_precision_backend", "bf16_full_eval", "fp16_full_eval", "tf32", "local_rank", "ddp_backend",
    "tpu_num_cores", "debug", "dataloader_drop_last", "eval_steps", "dataloader_num_workers",
    "dataloader_prefetch_factor", "past_index", "run_name", "disable_tqdm", "remove_unused_columns",
    "label_names", "load_best_model_at_end", "metric_for_best_model", "greater_is_better", "ignore_data_skip",
    "fsdp", "fsdp_min_num_params", "fsdp_config", "fsdp_transformer_layer_cls_to_wrap", "accelerator_config",
    "deepspeed", "label_smoothing_factor", "optim", "optim_args", "adafactor", "group_by_length",
    "length_column_name", "report_to", "ddp_find_unused_parameters", "ddp_bucket_cap_mb", "ddp_broadcast_buffers",
    "dataloader_pin_memory", "dataloader_persistent_workers", "skip_memory_metrics", "use_legacy_prediction_loop",
    "push_to_hub", "resume_from_checkpoint", "hub_model_id", "hub_strategy", "hub_token", "hub_private_repo",
    "hub_always_push", "hub_revision", "gradient_checkpointing", "gradient_checkpointing_kwargs",
    "include_inputs_for_metrics", "include_for_metrics", "eval_do_concat_batches", "fp16_backend",
    "push_to_hub_model_id", "push_to_hub_organization", "push_to_hub_token", "mp_parameters",
    "auto_find_batch_size", "full_determinism", "torchdynamo", "ray_scope", "ddp_timeout", "torch_compile",
    "torch_compile_backend", "torch_compile_mode", "include_tokens_per_second", "include_num_input_tokens_seen",
    "neftune_noise_alpha", "optim_target_modules", "batch_eval_metrics", "eval_on_start", "use_liger_kernel",
    "liger_kernel_config", "eval_use_gather_object", "average_tokens_across_devices", "ddp_static_graph",
    "dataloader_in_order", "dataloader_multiprocessing_context", "parallelism_config", "project",
    "trackio_space_id", "trackio_bucket_id", "trackio_static_space_id", "train_sampling_strategy", "use_cache",
    "activation_checkpointing", "activation_checkpointing_kwargs", "enable_jit_checkpoint", "predict_with_generate",
    "generation_max_length", "generation_num_beams", "generation_config", "sortish_sampler",
    # common script arguments (run_clm.py, TRL SFTTrainer)
    "model_name_or_path", "config_name", "tokenizer_name", "cache_dir", "dataset_name", "dataset_config_name",
    "train_file", "validation_file", "max_seq_length", "max_length", "block_size", "model_max_length",
    "max_source_length", "max_target_length", "max_train_samples", "max_eval_samples", "torch_dtype",
    "trust_remote_code", "use_peft", "lora_r", "lora_alpha", "lora_dropout", "lora_target_modules",
    "load_in_4bit", "load_in_8bit", "attn_implementation", "packing", "dataset_text_field", "source_lang",
    "target_lang", "preprocessing_num_workers", "overwrite_cache", "use_fast_tokenizer", "low_cpu_mem_usage",
})
# LLaMA-Factory hparams dataclass fields (src/llamafactory/hparams/*.py), on top of HF_KEYS.
LF_KEYS = frozenset(HF_KEYS | set("""
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
vllm_max_lora_rank vllm_maxlen ddp_timeout hf_hub_token
""".split()))
# accelerate ClusterConfig fields (commands/config/config_args.py) and deepspeed_config keys (DeepSpeedPlugin).
ACC_KEYS = frozenset({
    "compute_environment", "distributed_type", "mixed_precision", "use_cpu", "debug", "num_processes",
    "machine_rank", "num_machines", "gpu_ids", "main_process_ip", "main_process_port", "rdzv_backend",
    "same_network", "main_training_function", "enable_cpu_affinity", "fp8_config", "deepspeed_config",
    "fsdp_config", "parallelism_config", "megatron_lm_config", "mpirun_config", "downcast_bf16", "tpu_name",
    "tpu_zone", "tpu_use_cluster", "tpu_use_sudo", "command_file", "commands", "tpu_vm", "tpu_env",
    "dynamo_config", "tpu_metrics_debug", "tpu_env", "ipex_config", "mpirun_config",
})
ACC_DS_KEYS = frozenset({
    "deepspeed_config_file", "gradient_accumulation_steps", "gradient_clipping", "zero_stage",
    "offload_optimizer_device", "offload_param_device", "offload_optimizer_nvme_path", "offload_param_nvme_path",
    "zero3_init_flag", "zero3_save_16bit_model", "deepspeed_multinode_launcher", "deepspeed_hostfile",
    "deepspeed_exclusion_filter", "deepspeed_inclusion_filter", "deepspeed_moe_layer_cls_names",
    "transformer_moe_cls_names",
})
# Accelerate's DeepSpeedPlugin._deepspeed_config_checks: these may not sit next to deepspeed_config_file.
ACC_IGNORED_WITH_FILE = ("gradient_accumulation_steps", "gradient_clipping", "zero_stage", "offload_optimizer_device",
                         "offload_param_device", "offload_param_nvme_path", "offload_optimizer_nvme_path",
                         "zero3_save_16bit_model")

# "auto" keys Hugging Face Trainer fills (transformers integrations/deepspeed.py), with the source of the value.
HF_AUTO_SOURCES: dict[str, tuple[str, str]] = {
    "train_micro_batch_size_per_gpu": ("per_device_train_batch_size", "per_device_train_batch_size"),
    "gradient_accumulation_steps": ("gradient_accumulation_steps", "gradient_accumulation_steps"),
    "train_batch_size": ("world_size × per_device_train_batch_size × gradient_accumulation_steps",
                         "world_size × per_device_train_batch_size × gradient_accumulation_steps"),
    "gradient_clipping": ("max_grad_norm (default 1.0)", "max_grad_norm（默认 1.0）"),
    "optimizer.params.lr": ("learning_rate (default 5e-5)", "learning_rate（默认 5e-5）"),
    "optimizer.params.betas": ("[adam_beta1, adam_beta2] (default [0.9, 0.999])",
                               "[adam_beta1, adam_beta2]（默认 [0.9, 0.999]）"),
    "optimizer.params.eps": ("adam_epsilon (default 1e-8)", "adam_epsilon（默认 1e-8）"),
    "optimizer.params.weight_decay": ("weight_decay (default 0.0)", "weight_decay（默认 0.0）"),
    "scheduler.params.warmup_min_lr": ("0 (not a Trainer argument)", "0（不是 Trainer 参数）"),
    "scheduler.params.warmup_max_lr": ("learning_rate", "learning_rate"),
    "scheduler.params.warmup_num_steps": ("warmup_steps (or warmup_ratio × total steps)",
                                          "warmup_steps（或 warmup_ratio × 总步数）"),
    "scheduler.params.total_num_steps": ("the number of training steps the Trainer computes",
                                         "Trainer 计算出的总训练步数"),
    "fp16.enabled": ("--fp16 (or --fp16_full_eval)", "--fp16（或 --fp16_full_eval）"),
    "bf16.enabled": ("--bf16 (or --bf16_full_eval)", "--bf16（或 --bf16_full_eval）"),
    "amp.enabled": ("--fp16 with --fp16_backend apex (transformers v4)", "--fp16 且 --fp16_backend apex（transformers v4）"),
    "amp.opt_level": ("--fp16_opt_level (transformers v4)", "--fp16_opt_level（transformers v4）"),
    "zero_optimization.reduce_bucket_size": ("hidden_size × hidden_size", "hidden_size × hidden_size"),
    "zero_optimization.stage3_prefetch_bucket_size": ("0.9 × hidden_size × hidden_size (ZeRO-3 only)",
                                                      "0.9 × hidden_size × hidden_size（仅 ZeRO-3）"),
    "zero_optimization.stage3_param_persistence_threshold": ("10 × hidden_size (ZeRO-3 only)",
                                                             "10 × hidden_size（仅 ZeRO-3）"),
    "zero_optimization.stage3_gather_16bit_weights_on_model_save": (
        "Accelerate's zero3_save_16bit_model (default false)", "Accelerate 的 zero3_save_16bit_model（默认 false）"),
}
HF_DEFAULTS = {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "max_grad_norm": 1.0,
               "learning_rate": 5e-5, "adam_beta1": 0.9, "adam_beta2": 0.999, "adam_epsilon": 1e-8,
               "weight_decay": 0.0}
DETECT_KEYS = frozenset({
    *DS_BATCH_KEYS, "zero_optimization", "per_device_train_batch_size", "distributed_type", "deepspeed_config",
    "num_processes", "mixed_precision", "finetuning_type", "lora_rank", "lora_target", "cutoff_len",
    "quantization_bit", "offload_optimizer", "offload_param", "gradient_checkpointing", "deepspeed",
    "zero_stage", "stage3_prefetch_bucket_size", "reduce_bucket_size", "nproc_per_node", "num_gpus",
    "model_name_or_path", "learning_rate", "bf16", "fp16",
})
_STRONG_KEYS = DETECT_KEYS - {"model_name_or_path", "learning_rate", "bf16", "fp16", "deepspeed"}

# ---------------------------------------------------------------------------------------------
# Models


class Finding(BaseModel):
    """One problem or remark about a config, in one language."""

    severity: Severity
    key: str
    message: str
    fix: str = ""
    line: int | None = None
    column: int | None = None


class ConfigParseError(CalculatorError):
    """The text is not a readable config; ``line``/``column`` point at the problem when known."""

    def __init__(self, en: str, zh: str, *, line: int | None = None, column: int | None = None,
                 fix_en: str = "", fix_zh: str = "", key: str = "config") -> None:
        ValueError.__init__(self, f"{en}\n{zh}")
        self.field, self.value = key, None
        self.en, self.zh = en, zh
        self.accepted_en = self.accepted_zh = ""
        self.line, self.column = line, column
        self.fix_en, self.fix_zh = fix_en, fix_zh


class ParsedConfig(BaseModel):
    """What a config says, in the calculators' terms."""

    model_config = ConfigDict(protected_namespaces=())

    kind: Kind
    raw: dict[str, Any]
    batch: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments for resolve_batch.")
    memory: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments for MemoryConfig.")
    auto_fields: list[str] = Field(default_factory=list, description="Dotted keys whose value is \"auto\".")
    unknown_keys: list[str] = Field(default_factory=list)
    world_size: int | None = Field(None, description="From a launcher (torchrun/deepspeed/accelerate) or num_processes.")
    deepspeed: str | dict[str, Any] | None = Field(None, description="The DeepSpeed config this config points to.")
    model_name: str | None = None
    source_format: Literal["json", "yaml", "flags", "dict"] = "dict"
    positions: dict[str, tuple[int, int]] = Field(default_factory=dict, description="Dotted key → (line, column).")
    invalid: dict[str, Any] = Field(default_factory=dict, description="Keys whose value has the wrong type.")
    notes_en: list[str] = Field(default_factory=list)
    notes_zh: list[str] = Field(default_factory=list)

    def position(self, key: str) -> tuple[int | None, int | None]:
        return self.positions.get(key, (None, None))


class ConfigReport(BaseModel):
    """Findings about one config (plus an optional TrainingArguments companion) and its memory estimate."""

    model_config = ConfigDict(protected_namespaces=())

    parsed: ParsedConfig | None
    findings: list[Finding]
    estimate: MemoryEstimate | None = None
    lang: Literal["en", "zh"] = "en"
    companion: ParsedConfig | None = Field(None, description="The second config given as training_args.")
    _by_lang: dict[str, list[Finding]] = PrivateAttr(default_factory=dict)
    _lever_lines: dict[str, list[str]] = PrivateAttr(default_factory=dict)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    def find(self, key: str, severity: str | None = None) -> list[Finding]:
        """Findings about ``key`` (optionally of one severity)."""
        return [f for f in self.findings if f.key == key and (severity is None or f.severity == severity)]

    def to_markdown(self, lang: str | None = None) -> str:
        """A readable report: verdict, findings by severity, then the memory table."""
        lang = "zh" if (lang or self.lang) == "zh" else "en"
        findings = self._by_lang.get(lang) or self.findings
        zh = lang == "zh"
        errors = [f for f in findings if f.severity == "error"]
        warnings = [f for f in findings if f.severity == "warning"]
        infos = [f for f in findings if f.severity == "info"]
        kind_names = {"deepspeed": ("DeepSpeed config", "DeepSpeed 配置"),
                      "hf_training_args": ("Hugging Face TrainingArguments", "Hugging Face TrainingArguments"),
                      "accelerate": ("Accelerate config", "Accelerate 配置"),
                      "llamafactory": ("LLaMA-Factory config", "LLaMA-Factory 配置")}
        what = kind_names[self.parsed.kind][1 if zh else 0] if self.parsed else ("config" if not zh else "配置")
        out = [f"## {'配置检查' if zh else 'Config check'}: {what}", ""]
        if errors:
            verdict = (f"❌ **{len(errors)} 个错误**：按现在的配置，训练会在启动时失败或不按你的预期运行。" if zh else
                       f"❌ **{len(errors)} error(s)**: as written, this run fails at start-up or does not do what you expect.")
        elif warnings:
            verdict = (f"⚠️ **没有错误，{len(warnings)} 个警告**：能跑，但请看下面的问题。" if zh else
                       f"⚠️ **No errors, {len(warnings)} warning(s)**: it should start, but read these first.")
        else:
            verdict = "✅ **没有发现问题。**" if zh else "✅ **No problems found.**"
        if self.estimate is not None and self.estimate.fits is not None:
            e = self.estimate
            need = _gib(e.total_per_gpu)
            cap = _gib(e.gpu_capacity)
            if e.fits:
                verdict += (f" 显存：约 {need} / {cap} GiB，放得下。" if zh else f" Memory: about {need} of {cap} GiB per GPU, fits.")
            else:
                verdict += (f" 显存：约 {need} GiB，超出 {cap} GiB 的显卡，放不下。" if zh else
                            f" Memory: about {need} GiB per GPU, more than the {cap} GiB card: does not fit.")
        out += [verdict, ""]
        for title_en, title_zh, group in (("Errors", "错误", errors), ("Warnings", "警告", warnings),
                                          ("Notes", "说明", infos)):
            if not group:
                continue
            out += [f"### {title_zh if zh else title_en}", ""]
            for f in group:
                where = ""
                if f.line is not None:
                    where = (f"（第 {f.line} 行，第 {f.column} 列）" if zh else f" (line {f.line}, column {f.column})")
                out.append(f"- **`{f.key}`**{where}: {f.message}")
                if f.fix:
                    out.append(f"  - {'建议' if zh else 'Fix'}: {f.fix}")
            out.append("")
        if self.estimate is not None:
            e = self.estimate
            out += [f"### {'每卡显存估算' if zh else 'Memory per GPU'} ({e.model_name})", ""]
            out += [f"| {'部分' if zh else 'Part'} | GiB |", "|---|---:|"]
            rows = [("weights", "权重"), ("gradients", "梯度"), ("optimizer_states", "优化器状态"),
                    ("activations", "激活"), ("other", "其他（通信缓冲、CUDA 上下文）")]
            for field, name_zh in rows:
                val = getattr(e, field)
                label = name_zh if zh else field.replace("_", " ")
                out.append(f"| {label} | {'?' if val is None else _gib(val)} |")
            out.append(f"| **{'合计' if zh else 'total'}** | **{'?' if e.total_per_gpu is None else _gib(e.total_per_gpu)}** |")
            if e.gpu_capacity is not None:
                out.append(f"| {e.gpu_name} {'容量' if zh else 'capacity'} | {_gib(e.gpu_capacity)} |")
            if e.cpu_total:
                out.append(f"| {'CPU 内存（offload，每节点）' if zh else 'CPU RAM (offload, per node)'} | {_gib(e.cpu_total)} |")
            out.append("")
            notes = e.assumptions_zh + e.notes_zh if zh else e.assumptions_en + e.notes_en
            for n in notes:
                out.append(f"- {n}")
            if notes:
                out.append("")
        return "\n".join(out).rstrip() + "\n"


def _gib(n: int | float | None) -> str:
    return "?" if n is None else f"{n / GiB:.1f}"


# ---------------------------------------------------------------------------------------------
# Reading text


_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_LAUNCHERS = ("torchrun", "deepspeed", "accelerate", "python", "python3", "llamafactory-cli")


def _line_starts(text: str) -> list[int]:
    return [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]


def _json_positions(text: str) -> dict[str, tuple[int, int]]:
    """Dotted key path → (line, column) of each key in a JSON text (1-based), best effort."""
    starts = _line_starts(text)
    out: dict[str, tuple[int, int]] = {}
    stack: list[list[Any]] = []  # [type, current_key]
    token = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]')
    tokens = list(token.finditer(text))
    for i, m in enumerate(tokens):
        t = m.group(0)
        if t in "{[":
            stack.append([t, None])
        elif t in "}]":
            if stack:
                stack.pop()
        elif t.startswith('"') and stack and stack[-1][0] == "{":
            nxt = tokens[i + 1].group(0) if i + 1 < len(tokens) else ""
            if nxt == ":":
                try:
                    key = json.loads(t)
                except ValueError:
                    continue
                stack[-1][1] = key
                path = ".".join(str(s[1]) for s in stack if s[0] == "{" and s[1] is not None)
                line = bisect_right(starts, m.start())
                out.setdefault(path, (line, m.start() - starts[line - 1] + 1))
    return out


def _yaml_positions(text: str) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    try:
        node = safe_yaml.compose(text)
    except yaml.YAMLError:
        return out

    def walk(n: Any, prefix: str) -> None:
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                key = f"{prefix}{k.value}"
                out.setdefault(key, (k.start_mark.line + 1, k.start_mark.column + 1))
                walk(v, key + ".")

    walk(node, "")
    return out


def _scalar(s: str) -> Any:
    """A command-line value as Python: ints, floats, booleans, null, else the string."""
    low = s.lower()
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    if low in ("none", "null"):
        return None
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        return s


def _parse_flags(text: str) -> tuple[dict[str, Any], int | None, list[str], list[str], dict[str, tuple[int, int]]]:
    """A launch command → (script arguments, world size, notes_en, notes_zh, positions)."""
    clean = re.sub(r"\\\r?\n", " ", text)
    try:
        tokens = shlex.split(clean, comments=True)
    except ValueError as exc:
        raise ConfigParseError(f"Cannot split the command line: {exc}.", f"无法解析命令行：{exc}。") from None
    while tokens and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", tokens[0]):
        tokens.pop(0)  # environment assignments such as CUDA_VISIBLE_DEVICES=0,1
    launcher: str | None = None
    launch_args: dict[str, Any] = {}
    i = 0
    if tokens:
        head = tokens[0].rsplit("/", 1)[-1]
        if head in ("torchrun", "deepspeed"):
            launcher, i = head, 1
        elif head == "accelerate" and len(tokens) > 1 and tokens[1] == "launch":
            launcher, i = "accelerate", 2
        elif head in ("python", "python3") and len(tokens) > 2 and tokens[1] == "-m" and \
                tokens[2] in ("torch.distributed.run", "torch.distributed.launch"):
            launcher, i = "torchrun", 3
        elif head in ("python", "python3"):
            i = 1
        elif head == "llamafactory-cli":
            i = 2 if len(tokens) > 1 else 1
    # launcher options run until the script (a .py file, -m module or the first non-option)
    while i < len(tokens) and launcher:
        tok = tokens[i]
        if not tok.startswith("-"):
            break
        if tok == "-m":
            i += 1
            break
        name, _, val = tok.lstrip("-").partition("=")
        name = name.replace("-", "_")
        if not val and i + 1 < len(tokens) and not tokens[i + 1].startswith("-") and \
                not tokens[i + 1].endswith(".py"):
            val = tokens[i + 1]
            i += 1
        launch_args[name] = _scalar(val) if val else True
        i += 1
    if i < len(tokens) and not tokens[i].startswith("-"):
        i += 1  # the script itself
    args: dict[str, Any] = {}
    positions: dict[str, tuple[int, int]] = {}
    starts = _line_starts(text)
    while i < len(tokens):
        tok = tokens[i]
        if not tok.startswith("--"):
            i += 1
            continue
        name, eq, val = tok[2:].partition("=")
        name = name.replace("-", "_")
        if not eq:
            if i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
                val = tokens[i + 1]
                i += 1
                args[name] = _scalar(val)
            else:
                args[name] = True
        else:
            args[name] = _scalar(val)
        at = text.find(tok.split("=")[0])
        if at >= 0:
            line = bisect_right(starts, at)
            positions.setdefault(name, (line, at - starts[line - 1] + 1))
        i += 1
    notes_en: list[str] = []
    notes_zh: list[str] = []
    ws: int | None = None

    def num(*names: str) -> int | None:
        for n in names:
            v = launch_args.get(n)
            if isinstance(v, int) and not isinstance(v, bool):
                return v
        return None

    if launcher == "torchrun":
        nproc, nnodes = num("nproc_per_node"), num("nnodes") or 1
        if nproc:
            ws = nproc * nnodes
        else:
            notes_en.append("torchrun without a numeric --nproc_per_node: world size unknown.")
            notes_zh.append("torchrun 没有给出数字形式的 --nproc_per_node：卡数未知。")
    elif launcher == "deepspeed":
        gpus, nodes = num("num_gpus", "num_accelerators"), num("num_nodes") or 1
        include = launch_args.get("include")
        if gpus is None and isinstance(include, str) and ":" in include:
            gpus = len(include.split(":", 1)[1].split(","))
        if gpus:
            ws = gpus * nodes
        else:
            notes_en.append("The deepspeed launcher without --num_gpus uses every visible GPU: world size unknown.")
            notes_zh.append("deepspeed 启动器不带 --num_gpus 时会使用所有可见 GPU：卡数未知。")
    elif launcher == "accelerate":
        ws = num("num_processes")
        if ws is None:
            notes_en.append("accelerate launch without --num_processes takes it from the accelerate config file.")
            notes_zh.append("accelerate launch 未给 --num_processes 时从 accelerate 配置文件读取。")
        for key in ("mixed_precision", "zero_stage", "gradient_accumulation_steps", "config_file"):
            if key in launch_args:
                args.setdefault(f"accelerate_{key}", launch_args[key])
    return args, ws, notes_en, notes_zh, positions


def _strip_fence(text: str) -> tuple[str, str]:
    m = _FENCE.search(text)
    if m:
        return m.group(2), m.group(1).lower()
    return text, ""


def _load_text(text: str) -> tuple[dict[str, Any], str, dict[str, tuple[int, int]], int | None, list[str], list[str],
                                   list[str]]:
    """Text → (dict, format, positions, world_size, notes_en, notes_zh, duplicate_keys)."""
    if len(text) > MAX_TEXT:
        raise ConfigParseError(f"The config is too long ({len(text):,} characters; at most {MAX_TEXT:,}).",
                               f"配置太长（{len(text):,} 个字符，最多 {MAX_TEXT:,}）。")
    body, lang = _strip_fence(text)
    stripped = body.strip()
    if not stripped:
        raise ConfigParseError("The config is empty.", "配置是空的。")
    first = stripped.split(None, 1)[0].rsplit("/", 1)[-1]
    if lang in ("bash", "sh", "shell", "console") or stripped.startswith("--") or first in _LAUNCHERS or \
            re.match(r"^[A-Za-z_][A-Za-z0-9_]*=\S*\s+\S", stripped):
        args, ws, n_en, n_zh, pos = _parse_flags(stripped)
        if not args and ws is None:
            raise ConfigParseError("No --training_flags found in the command line.", "命令行里没有找到训练参数（--xxx）。")
        return args, "flags", pos, ws, n_en, n_zh, []
    if stripped.startswith("{") or lang == "json":
        dups: list[str] = []

        def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            d: dict[str, Any] = {}
            for k, v in pairs:
                if k in d:
                    dups.append(k)
                d[k] = v
            return d

        try:
            data = json.loads(body, object_pairs_hook=hook)
        except json.JSONDecodeError as exc:
            raise _json_error(exc) from None
        except (ValueError, RecursionError) as exc:
            raise ConfigParseError(f"Not valid JSON: {exc}.", f"不是合法的 JSON：{exc}。") from None
        if not isinstance(data, dict):
            raise ConfigParseError("The JSON is not an object ({...}).", "这段 JSON 不是对象（{...}）。", line=1, column=1)
        return data, "json", _json_positions(body), None, [], [], dups
    try:
        data = safe_yaml.load(body)
    except safe_yaml.UnsafeYAMLError as exc:
        mark = exc.problem_mark
        raise ConfigParseError(f"Refused: {exc.problem}.", f"已拒绝：{exc.problem_zh}。",
                               line=mark.line + 1 if mark is not None else None,
                               column=mark.column + 1 if mark is not None else None,
                               fix_en="Write the values out instead of using anchors and aliases.",
                               fix_zh="请直接写出取值，不要使用锚点和别名。") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigParseError(f"Not valid YAML: {problem}.", f"不是合法的 YAML：{problem}。", line=line, column=col,
                               fix_en="Check indentation (spaces, not tabs) and that every key is followed by ': '.",
                               fix_zh="检查缩进（用空格而不是 Tab），以及每个键后面是否有“: ”。") from None
    except (ValueError, RecursionError) as exc:
        raise ConfigParseError(f"Not valid YAML: {exc}.", f"不是合法的 YAML：{exc}。") from None
    if not isinstance(data, dict):
        raise ConfigParseError("This is not a config: expected key: value pairs (YAML), a JSON object or --flags.",
                               "这不是配置：需要 key: value 形式的 YAML、JSON 对象或 --参数 命令行。")
    return data, "yaml", _yaml_positions(body), None, [], [], []


def _json_error(exc: json.JSONDecodeError) -> ConfigParseError:
    hint_en, hint_zh = "", ""
    if exc.msg.startswith("Expecting property name") or exc.msg.startswith("Expecting value"):
        before = exc.doc[:exc.pos].rstrip()
        if before.endswith(","):
            hint_en = " A trailing comma before a closing bracket is not allowed in JSON."
            hint_zh = "JSON 不允许在右括号前留下多余的逗号。"
    elif exc.msg.startswith("Expecting ',' delimiter"):
        hint_en = " A comma is probably missing at the end of the previous line."
        hint_zh = "上一行末尾很可能缺了逗号。"
    return ConfigParseError(
        f"Not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.{hint_en}",
        f"不是合法的 JSON：第 {exc.lineno} 行第 {exc.colno} 列，{exc.msg}。{hint_zh}",
        line=exc.lineno, column=exc.colno,
        fix_en=("Fix the JSON there. Note: the deepspeed launcher reads config files with hjson, which tolerates some "
                "of this, but Hugging Face Trainer and Accelerate use json.load and will refuse the file."),
        fix_zh=("在该位置修正 JSON。注意：deepspeed 自己用 hjson 读取配置文件，能容忍部分此类错误，"
                "但 Hugging Face Trainer 和 Accelerate 用 json.load 读取，会直接报错。"))


# ---------------------------------------------------------------------------------------------
# Recognising the kind


def _detect_kind(d: dict[str, Any]) -> Kind | None:
    keys = set(d)
    if keys & {"distributed_type", "compute_environment"} or (
            isinstance(d.get("deepspeed_config"), dict) and keys & {"num_processes", "mixed_precision", "num_machines"}):
        return "accelerate"
    if keys & {"finetuning_type", "lora_target", "cutoff_len", "quantization_bit", "template", "pure_bf16",
               "disable_gradient_checkpointing", "flash_attn"} or isinstance(d.get("stage"), str):
        return "llamafactory"
    if keys & {"zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size", "zero_allow_untested_optimizer",
               "steps_per_print", "wall_clock_breakdown", "zero_force_ds_cpu_optimizer", "amp"} or \
            isinstance(d.get("fp16"), dict) or isinstance(d.get("bf16"), dict) or isinstance(d.get("optimizer"), dict):
        return "deepspeed"
    if keys & (HF_KEYS - {"deepspeed"}) or "deepspeed" in keys:
        return "hf_training_args"
    return None


# ---------------------------------------------------------------------------------------------
# Values


def _int(v: Any, strict: bool = True) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        return int(v)
    if not strict and isinstance(v, str) and re.fullmatch(r"-?\d+", v.strip()):
        return int(v)
    return None


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _truthy(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in ("true", "1", "yes", "on")
    return bool(v) and not isinstance(v, (dict, list))


def _get(d: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(d, dict):
            return None
        d = d.get(part)
    return d


def _collect_auto(d: Any, prefix: str = "") -> list[str]:
    out: list[str] = []
    if isinstance(d, dict):
        for k, v in d.items():
            key = f"{prefix}{k}"
            if isinstance(v, str) and v.strip().lower() == "auto":
                out.append(key)
            elif isinstance(v, dict):
                out += _collect_auto(v, key + ".")
    return out


_MODEL_SUFFIXES = ("-instruct", "-chat", "-hf", "-base", "-it", "-sft")


def resolve_model_preset(name: Any) -> str | None:
    """A model name or Hub id (``meta-llama/Meta-Llama-3-8B-Instruct``) → a preset name, or None."""
    if not isinstance(name, str) or not name.strip() or len(name) > 300:
        return None
    candidates = [name]
    key = name.strip().lower().replace("_", "-").split("/")[-1]
    for _ in range(3):
        for suf in _MODEL_SUFFIXES:
            if key.endswith(suf):
                key = key[: -len(suf)]
        candidates.append(key)
    candidates += [re.sub(r"-\d{4}$", "", key), key.replace("meta-llama-3.1", "llama-3.1")]
    for c in candidates:
        try:
            return get_model_shape(c).name
        except CalculatorError:
            continue
    return None


def _precision(bf16: Any, fp16: Any, deepspeed: bool) -> str | None:
    if _truthy(bf16):
        return "bf16-mixed" if deepspeed else "amp-bf16"
    if _truthy(fp16):
        return "fp16-mixed" if deepspeed else "amp-fp16"
    return None


# ---------------------------------------------------------------------------------------------
# Per-kind readers


def _read_batch(pc: ParsedConfig, d: dict[str, Any], mapping: dict[str, str], strict: bool) -> None:
    for src, dst in mapping.items():
        if src not in d or d[src] is None:
            continue
        v = d[src]
        if isinstance(v, str) and v.strip().lower() == "auto":
            continue
        iv = _int(v, strict=strict)
        if iv is None:
            pc.invalid[src] = v
        else:
            pc.batch[dst] = iv


def _unknown(keys: Any, known: frozenset[str], prefix: str = "") -> list[str]:
    return [f"{prefix}{k}" for k in keys if k not in known]


def _parse_deepspeed(pc: ParsedConfig) -> None:
    d = pc.raw
    _read_batch(pc, d, {k: k for k in DS_BATCH_KEYS}, strict=True)
    pc.unknown_keys += _unknown(d, DS_TOP_KEYS)
    zero = d.get("zero_optimization")
    stage: int | None = 0
    zd: dict[str, Any] = {}
    if isinstance(zero, bool):
        stage = 1 if zero else 0  # deprecated boolean form: True means stage 1
    elif isinstance(zero, dict):
        zd = zero
        pc.unknown_keys += _unknown(zd, DS_ZERO_KEYS, "zero_optimization.")
        raw_stage = zd.get("stage", 0)
        stage = _int(raw_stage)
        if stage is None or not 0 <= stage <= 3:
            if not (isinstance(raw_stage, str) and raw_stage == "auto"):
                pc.invalid["zero_optimization.stage"] = raw_stage
            stage = None
        for sub, known in DS_OFFLOAD_KEYS.items():
            if isinstance(zd.get(sub), dict):
                pc.unknown_keys += _unknown(zd[sub], known, f"zero_optimization.{sub}.")
    elif zero is not None:
        pc.invalid["zero_optimization"] = zero
    mem = pc.memory
    if stage is not None:
        mem["zero_stage"] = stage
        dev_opt = _offload_device(zd, "offload_optimizer", "cpu_offload")
        dev_par = _offload_device(zd, "offload_param", "cpu_offload_param")
        if dev_opt in ("cpu", "nvme") and stage >= 1:
            mem["offload_optimizer"] = True
        if dev_par in ("cpu", "nvme") and stage == 3:
            mem["offload_param"] = True
        for key in ("reduce_bucket_size", "allgather_bucket_size"):
            v = _num(zd.get(key))
            if v is not None and v > 0:
                mem[key] = v
            elif key in zd and zd[key] != "auto" and v is None:
                pc.invalid[f"zero_optimization.{key}"] = zd[key]
        if isinstance(zd.get("overlap_comm"), bool):
            mem["overlap_comm"] = zd["overlap_comm"]
    fp16 = _get(d, "fp16.enabled")
    bf16 = _get(d, "bf16.enabled") if isinstance(d.get("bf16"), dict) else _get(d, "bfloat16.enabled")
    if fp16 == "auto" or bf16 == "auto":
        precision = _precision(bf16 is True, fp16 is True, True)
    else:
        precision = _precision(bf16, fp16, True) or "fp32"
    if precision:
        mem["precision"] = precision
    if "train_micro_batch_size_per_gpu" in pc.batch and pc.batch["train_micro_batch_size_per_gpu"] > 0:
        mem["train_micro_batch_size_per_gpu"] = pc.batch["train_micro_batch_size_per_gpu"]
    if "gradient_accumulation_steps" in pc.batch and pc.batch["gradient_accumulation_steps"] > 0:
        mem["gradient_accumulation_steps"] = pc.batch["gradient_accumulation_steps"]
    opt_type = _get(d, "optimizer.type")
    if isinstance(opt_type, str) and opt_type.lower() in ("sgd",):
        mem["optimizer"] = "sgd-momentum"


def _offload_device(zd: dict[str, Any], key: str, legacy: str) -> str | None:
    sub = zd.get(key)
    if isinstance(sub, dict):
        dev = sub.get("device")
        return dev.lower() if isinstance(dev, str) else None
    if zd.get(legacy) is True:
        return "cpu"
    return None


def _seq_len(pc: ParsedConfig, d: dict[str, Any], keys: tuple[str, ...]) -> None:
    for k in keys:
        if k in d and d[k] is not None:
            v = _int(d[k], strict=pc.source_format == "flags")
            if v is None or v <= 0:
                pc.invalid[k] = d[k]
            else:
                pc.memory["seq_len"] = v
            return


def _model(pc: ParsedConfig, d: dict[str, Any]) -> None:
    name = d.get("model_name_or_path")
    if isinstance(name, str):
        pc.model_name = name
        preset = resolve_model_preset(name)
        if preset:
            pc.memory["model"] = preset


def _micro_ga_to_memory(pc: ParsedConfig) -> None:
    mb = pc.batch.get("train_micro_batch_size_per_gpu")
    ga = pc.batch.get("gradient_accumulation_steps")
    if mb is not None and mb > 0:
        pc.memory["train_micro_batch_size_per_gpu"] = mb
    if ga is not None and ga > 0:
        pc.memory["gradient_accumulation_steps"] = ga


def _parse_hf(pc: ParsedConfig) -> None:
    d = pc.raw
    strict = pc.source_format != "flags"
    _read_batch(pc, d, {"per_device_train_batch_size": "train_micro_batch_size_per_gpu",
                        "gradient_accumulation_steps": "gradient_accumulation_steps"}, strict=strict)
    _micro_ga_to_memory(pc)
    pc.unknown_keys += [k for k in d if k not in HF_KEYS and not k.startswith("accelerate_")]
    ds = d.get("deepspeed")
    if isinstance(ds, (str, dict)) and ds:
        pc.deepspeed = ds
    prec = _precision(d.get("bf16"), d.get("fp16"), bool(pc.deepspeed))
    if prec is None and not pc.deepspeed:
        prec = "fp32"
        pc.notes_en.append("Neither --bf16 nor --fp16: Trainer trains in fp32 (unless the script loads the model in 16-bit).")
        pc.notes_zh.append("没有 --bf16 也没有 --fp16：Trainer 以 fp32 训练（除非脚本以 16 位加载模型）。")
    if prec:
        pc.memory["precision"] = prec
    if _truthy(d.get("gradient_checkpointing")):
        pc.memory["gradient_checkpointing"] = "full"
    optim = d.get("optim")
    if isinstance(optim, str):
        o = optim.lower()
        if "8bit" in o:
            pc.memory["optimizer"] = "adamw-8bit"
        elif o.startswith("adafactor"):
            pc.memory["optimizer"] = "adafactor"
    if _truthy(d.get("adafactor")):
        pc.memory["optimizer"] = "adafactor"
    _seq_len(pc, d, ("max_seq_length", "max_length", "block_size", "model_max_length", "max_source_length"))
    _model(pc, d)
    attn = d.get("attn_implementation")
    if isinstance(attn, str) and attn.lower() == "eager":
        pc.memory["flash_attention"] = False
    if _truthy(d.get("use_peft")) or "lora_r" in d:
        pc.memory["finetune"] = "qlora" if _truthy(d.get("load_in_4bit")) else "lora"
        r = _int(d.get("lora_r"), strict=False)
        if r and r > 0:
            pc.memory["lora_rank"] = r
        _lora_targets(pc, d.get("lora_target_modules"))
    if isinstance(d.get("accelerate_num_processes"), int):
        pc.world_size = pc.world_size or d["accelerate_num_processes"]


def _lora_targets(pc: ParsedConfig, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, str):
        items = [s.strip() for s in value.split(",") if s.strip()]
    elif isinstance(value, list):
        items = [str(s) for s in value]
    else:
        return
    if any(s in ("all", "all-linear") for s in items):
        pc.memory["lora_target_modules"] = ["all"]
        return
    known = [s for s in items if s in LORA_MODULES]
    if known:
        pc.memory["lora_target_modules"] = known
    if len(known) < len(items):
        pc.notes_en.append(f"LoRA targets not modelled in the estimate: {', '.join(s for s in items if s not in LORA_MODULES)}.")
        pc.notes_zh.append(f"估算中未计入的 LoRA 目标模块：{', '.join(s for s in items if s not in LORA_MODULES)}。")


_LF_DS_NAMES = re.compile(r"ds_z([0-3])(_offload)?_config\.json$")


def _parse_llamafactory(pc: ParsedConfig) -> None:
    d = pc.raw
    _read_batch(pc, d, {"per_device_train_batch_size": "train_micro_batch_size_per_gpu",
                        "gradient_accumulation_steps": "gradient_accumulation_steps"}, strict=True)
    _micro_ga_to_memory(pc)
    pc.unknown_keys += [k for k in d if k not in LF_KEYS]
    ds = d.get("deepspeed")
    if isinstance(ds, (str, dict)) and ds:
        pc.deepspeed = ds
        m = _LF_DS_NAMES.search(ds) if isinstance(ds, str) else None
        if m:
            stage = int(m.group(1))
            pc.memory["zero_stage"] = stage
            if m.group(2):
                pc.memory["offload_optimizer"] = True
                if stage == 3:
                    pc.memory["offload_param"] = True
            pc.notes_en.append(f"ZeRO stage {stage}{' with CPU offload' if m.group(2) else ''} read from the name of "
                               f"LLaMA-Factory's shipped DeepSpeed config {ds.rsplit('/', 1)[-1]}.")
            pc.notes_zh.append(f"ZeRO stage {stage}{'（含 CPU offload）' if m.group(2) else ''} 取自 LLaMA-Factory "
                               f"自带 DeepSpeed 配置的文件名 {ds.rsplit('/', 1)[-1]}。")
    if _truthy(d.get("pure_bf16")):
        pc.memory["precision"] = "bf16"
    else:
        prec = _precision(d.get("bf16"), d.get("fp16"), bool(pc.deepspeed))
        pc.memory["precision"] = prec or "fp32"
    ft = d.get("finetuning_type", "lora")
    qbit = _int(d.get("quantization_bit"))
    if "quantization_bit" in d and d["quantization_bit"] is not None and qbit is None:
        pc.invalid["quantization_bit"] = d["quantization_bit"]
    if ft == "lora":
        pc.memory["finetune"] = "qlora" if qbit == 4 else "lora"
        if qbit is not None and qbit != 4:
            pc.notes_en.append(f"quantization_bit={qbit}: the estimate models only 4-bit NF4; the base weights are counted as 16-bit.")
            pc.notes_zh.append(f"quantization_bit={qbit}：估算只建模 4 位 NF4；基座权重按 16 位计。")
        r = _int(d.get("lora_rank", 8))
        if r is None or r <= 0:
            pc.invalid["lora_rank"] = d.get("lora_rank")
        else:
            pc.memory["lora_rank"] = r
        _lora_targets(pc, d.get("lora_target", "all"))
    elif ft == "full":
        pc.memory["finetune"] = "full"
    elif ft in ("freeze", "oft"):
        pc.notes_en.append(f"finetuning_type={ft} is not modelled; the estimate treats it as full fine-tuning (an upper bound).")
        pc.notes_zh.append(f"finetuning_type={ft} 未单独建模；估算按全参微调计（上界）。")
        pc.memory["finetune"] = "full"
    else:
        pc.invalid["finetuning_type"] = ft
    if "finetuning_type" not in d:
        pc.notes_en.append("finetuning_type not set: LLaMA-Factory's default is lora.")
        pc.notes_zh.append("未设置 finetuning_type：LLaMA-Factory 默认是 lora。")
    if "cutoff_len" in d:
        _seq_len(pc, d, ("cutoff_len",))
    else:
        pc.memory["seq_len"] = 2048
        pc.notes_en.append("cutoff_len not set: LLaMA-Factory's default is 2048.")
        pc.notes_zh.append("未设置 cutoff_len：LLaMA-Factory 默认是 2048。")
    if _truthy(d.get("disable_gradient_checkpointing")):
        pc.memory["gradient_checkpointing"] = "none"
    else:
        pc.memory["gradient_checkpointing"] = "full"
        pc.notes_en.append("LLaMA-Factory enables gradient checkpointing unless disable_gradient_checkpointing: true.")
        pc.notes_zh.append("除非设置 disable_gradient_checkpointing: true，LLaMA-Factory 默认开启梯度检查点。")
    fa = d.get("flash_attn")
    if isinstance(fa, str) and fa.lower() == "disabled":
        pc.memory["flash_attention"] = False
    _model(pc, d)


def _parse_accelerate(pc: ParsedConfig) -> None:
    d = pc.raw
    pc.unknown_keys += _unknown(d, ACC_KEYS)
    n = d.get("num_processes")
    if n is not None:
        iv = _int(n)
        if iv is None or iv == 0 or iv < -1:
            pc.invalid["num_processes"] = n
        elif iv > 0:
            pc.world_size = iv
    dist = str(d.get("distributed_type", "")).upper()
    ds = d.get("deepspeed_config") if isinstance(d.get("deepspeed_config"), dict) else {}
    if d.get("deepspeed_config") not in (None, {}) and not isinstance(d.get("deepspeed_config"), dict):
        pc.invalid["deepspeed_config"] = d.get("deepspeed_config")
    pc.unknown_keys += _unknown(ds, ACC_DS_KEYS, "deepspeed_config.")
    is_ds = dist == "DEEPSPEED" or bool(ds)
    mp = str(d.get("mixed_precision", "no")).lower()
    if mp in ("bf16", "fp16"):
        pc.memory["precision"] = f"{mp}-mixed" if is_ds else f"amp-{mp}"
    elif mp in ("no", "none", "false"):
        pc.memory["precision"] = "fp32"
    if is_ds:
        if isinstance(ds.get("deepspeed_config_file"), str):
            pc.deepspeed = ds["deepspeed_config_file"]
        stage = ds.get("zero_stage")
        if stage is not None:
            s = _int(stage)
            if s is None or not 0 <= s <= 3:
                pc.invalid["deepspeed_config.zero_stage"] = stage
            else:
                pc.memory["zero_stage"] = s
        elif not pc.deepspeed:
            pc.memory["zero_stage"] = 2  # DeepSpeedPlugin default (ACCELERATE_DEEPSPEED_ZERO_STAGE or 2)
        s = pc.memory.get("zero_stage", 0)
        if str(ds.get("offload_optimizer_device", "none")).lower() in ("cpu", "nvme") and s >= 1:
            pc.memory["offload_optimizer"] = True
        if str(ds.get("offload_param_device", "none")).lower() in ("cpu", "nvme") and s == 3:
            pc.memory["offload_param"] = True
        _read_batch(pc, ds, {"gradient_accumulation_steps": "gradient_accumulation_steps"}, strict=True)
        _micro_ga_to_memory(pc)
    elif dist == "FSDP":
        fs = d.get("fsdp_config") if isinstance(d.get("fsdp_config"), dict) else {}
        strategy = str(fs.get("fsdp_sharding_strategy", "FULL_SHARD")).upper()
        stage = {"FULL_SHARD": 3, "1": 3, "SHARD_GRAD_OP": 2, "2": 2, "NO_SHARD": 0, "3": 0,
                 "HYBRID_SHARD": 3, "4": 3}.get(strategy)
        if fs.get("fsdp_version") == 2 and "fsdp_reshard_after_forward" in fs:
            stage = 3 if _truthy(fs["fsdp_reshard_after_forward"]) else 2
        if stage is not None:
            pc.memory["zero_stage"] = stage
            if pc.memory.get("precision", "").startswith("amp-"):
                pc.memory["precision"] = pc.memory["precision"][4:] + "-mixed"
            pc.notes_en.append(f"FSDP {strategy} is estimated as the equivalent ZeRO stage {stage}.")
            pc.notes_zh.append(f"FSDP {strategy} 按等价的 ZeRO stage {stage} 估算。")
        if _truthy(fs.get("fsdp_offload_params")) and stage == 3:
            pc.memory["offload_param"] = pc.memory["offload_optimizer"] = True


# ---------------------------------------------------------------------------------------------
# Public parsing API


def parse_config(text_or_dict: str | dict[str, Any] | ParsedConfig, kind: str | None = None) -> ParsedConfig:
    """Read a DeepSpeed / TrainingArguments / Accelerate / LLaMA-Factory config.

    Raises :class:`ConfigParseError` (a :class:`CalculatorError`) with ``line``
    and ``column`` when the text cannot be read or the kind cannot be told.
    """
    if isinstance(text_or_dict, ParsedConfig):
        return text_or_dict
    if kind is not None and kind not in KINDS:
        raise CalculatorError("kind", kind, ", ".join(KINDS), "、".join(KINDS))
    positions: dict[str, tuple[int, int]] = {}
    ws: int | None = None
    notes_en: list[str] = []
    notes_zh: list[str] = []
    dups: list[str] = []
    if isinstance(text_or_dict, dict):
        data, fmt = text_or_dict, "dict"
    elif isinstance(text_or_dict, str):
        data, fmt, positions, ws, notes_en, notes_zh, dups = _load_text(text_or_dict)
    else:
        raise ConfigParseError(f"A config must be text or a dict, not {type(text_or_dict).__name__}.",
                               f"配置必须是文本或字典，而不是 {type(text_or_dict).__name__}。")
    data = {str(k): v for k, v in data.items()}
    detected = kind or _detect_kind(data)
    if detected is None:
        raise ConfigParseError(
            "Not recognised as a DeepSpeed, TrainingArguments, Accelerate or LLaMA-Factory config (no known training keys).",
            "无法识别为 DeepSpeed、TrainingArguments、Accelerate 或 LLaMA-Factory 配置（没有已知的训练参数）。",
            fix_en="Paste the whole file, or give kind= explicitly.", fix_zh="请粘贴完整文件，或显式指定 kind=。")
    pc = ParsedConfig(kind=detected, raw=data, source_format=fmt, positions=positions, world_size=ws,
                      auto_fields=_collect_auto(data), notes_en=notes_en, notes_zh=notes_zh)
    if dups:
        pc.invalid["__duplicate_keys__"] = sorted(set(dups))
    {"deepspeed": _parse_deepspeed, "hf_training_args": _parse_hf, "accelerate": _parse_accelerate,
     "llamafactory": _parse_llamafactory}[detected](pc)
    if pc.world_size is not None and pc.world_size > 0:
        pc.memory["world_size"] = pc.world_size
    return pc


# ---------------------------------------------------------------------------------------------
# Checks


class _Out:
    """Collects findings in both languages."""

    def __init__(self, parsed: ParsedConfig | None) -> None:
        self.parsed = parsed
        self.items: list[tuple[str, str, str, str, str, str, int | None, int | None]] = []

    def add(self, severity: str, key: str, en: str, zh: str, fix_en: str = "", fix_zh: str = "",
            line: int | None = None, column: int | None = None, at: str | None = None,
            parsed: ParsedConfig | None = None) -> None:
        src = parsed or self.parsed
        if line is None and src is not None:
            line, column = src.position(at or key)
        self.items.append((severity, key, en, zh, fix_en, fix_zh, line, column))

    def findings(self, lang: str) -> list[Finding]:
        order = {"error": 0, "warning": 1, "info": 2}
        out = [Finding(severity=s, key=k, message=zh if lang == "zh" else en, fix=fzh if lang == "zh" else fen,
                       line=ln, column=col) for s, k, en, zh, fen, fzh, ln, col in self.items]
        return sorted(out, key=lambda f: order[f.severity])


_DS_LABELS = {"train_batch_size": "Train batch size", "train_micro_batch_size_per_gpu": "Micro batch size per gpu",
              "gradient_accumulation_steps": "Gradient accumulation steps"}


def _close(key: str, known: frozenset[str]) -> str | None:
    m = difflib.get_close_matches(key, list(known), n=1, cutoff=0.8)
    return m[0] if m else None


def _check_values(out: _Out, pc: ParsedConfig) -> None:
    for key, value in pc.invalid.items():
        if key == "__duplicate_keys__":
            keys = value
            out.add("error", keys[0], f"Duplicate keys: {keys}. DeepSpeed refuses the file: "
                    f"\"ValueError: Duplicate keys in DeepSpeed config: {keys}\"; plain json.load keeps only the last one.",
                    f"重复的键：{keys}。DeepSpeed 会拒绝该文件：\"ValueError: Duplicate keys in DeepSpeed config: {keys}\"；"
                    "普通的 json.load 只保留最后一个。",
                    "Keep one occurrence of each key.", "每个键只保留一次。")
            continue
        shown = repr(value)[:60]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            en, zh = f"{key} = {shown} is out of range.", f"{key} = {shown} 超出范围。"
        else:
            en = f"{key} has the wrong type: {shown} ({type(value).__name__}); a number is expected."
            zh = f"{key} 的类型不对：{shown}（{type(value).__name__}），应为数字。"
        if key == "zero_optimization.stage":
            en, zh = f"zero_optimization.stage = {shown}: must be 0, 1, 2 or 3.", f"zero_optimization.stage = {shown}：必须是 0、1、2 或 3。"
        if key in DS_BATCH_KEYS and isinstance(value, str):
            en += " DeepSpeed does not convert strings: the batch check fails with a TypeError at start-up."
            zh += "DeepSpeed 不会把字符串转成数字：启动时批次检查会抛出 TypeError。"
        out.add("error", key, en, zh, "Write a plain positive integer, e.g. 16 (no quotes).",
                "写成不带引号的正整数，例如 16。")


def _check_unknown(out: _Out, pc: ParsedConfig) -> None:
    for key in pc.unknown_keys:
        leaf = key.rsplit(".", 1)[-1]
        if pc.kind == "deepspeed" and key.startswith("zero_optimization."):
            parent = key.rsplit(".", 1)[0]
            known = DS_ZERO_KEYS if parent == "zero_optimization" else DS_OFFLOAD_KEYS.get(parent.split(".")[-1], frozenset())
            guess = _close(leaf, known)
            hint_en = f" Did you mean '{guess}'?" if guess else ""
            hint_zh = f"你是不是想写 '{guess}'？" if guess else ""
            extra_en = extra_zh = ""
            if leaf == "aio":
                extra_en = " ('aio' is a top-level DeepSpeed key, not part of zero_optimization.)"
                extra_zh = "（'aio' 是 DeepSpeed 的顶层键，不属于 zero_optimization。）"
            out.add("error", key,
                    f"Unknown key '{leaf}' in {parent}. DeepSpeed's ZeRO config is a pydantic model with extra='forbid': "
                    f"start-up fails with a ValidationError ('Extra inputs are not permitted').{hint_en}{extra_en}",
                    f"{parent} 中有未知键 '{leaf}'。DeepSpeed 的 ZeRO 配置是 extra='forbid' 的 pydantic 模型："
                    f"启动时会报 ValidationError（'Extra inputs are not permitted'）。{hint_zh}{extra_zh}",
                    f"Remove it or correct the spelling{' to ' + guess if guess else ''}.",
                    f"删除该键或改正拼写{'为 ' + guess if guess else ''}。")
            continue
        known = {"deepspeed": DS_TOP_KEYS, "hf_training_args": HF_KEYS, "llamafactory": LF_KEYS,
                 "accelerate": ACC_KEYS if "." not in key else ACC_DS_KEYS}[pc.kind]
        guess = _close(leaf, known)
        if pc.kind == "deepspeed":
            sev = "warning"
            en = (f"Unknown top-level key '{key}': DeepSpeed ignores it silently and uses the default "
                  "(HF docs: typos fall back to the default).")
            zh = f"未知的顶层键 '{key}'：DeepSpeed 会静默忽略它并使用默认值（HF 文档：拼写错误会回退到默认值）。"
        elif pc.kind in ("llamafactory", "hf_training_args") and pc.source_format != "flags" and guess:
            sev = "error"
            en = (f"Unknown key '{key}'. LLaMA-Factory / HfArgumentParser refuse unknown keys: "
                  f"\"ValueError: Some keys are not used by the HfArgumentParser: ['{key}']\".")
            zh = (f"未知的键 '{key}'。LLaMA-Factory / HfArgumentParser 不接受未知键："
                  f"\"ValueError: Some keys are not used by the HfArgumentParser: ['{key}']\"。")
        elif pc.kind == "accelerate" and guess:
            sev = "warning"
            en, zh = f"Unknown key '{key}' in the Accelerate config.", f"Accelerate 配置中有未知键 '{key}'。"
        else:
            sev = "info"
            en = f"'{key}' is not a key this checker knows; it was not checked."
            zh = f"'{key}' 不是本检查器认识的键，未做检查。"
        if guess:
            en += f" Did you mean '{guess}'?"
            zh += f" 你是不是想写 '{guess}'？"
        out.add(sev, key, en, zh, f"Rename it to '{guess}'." if guess else "", f"改名为 '{guess}'。" if guess else "")


def _check_batch(out: _Out, pc: ParsedConfig, ws: int | None, lang: str) -> None:
    b = pc.batch
    tb, mb, ga = b.get("train_batch_size"), b.get("train_micro_batch_size_per_gpu"), b.get("gradient_accumulation_steps")
    if pc.kind == "deepspeed":
        auto = set(pc.auto_fields)
        if tb is None and mb is None and not ({"train_batch_size", "train_micro_batch_size_per_gpu"} & auto):
            if any(k in pc.invalid for k in DS_BATCH_KEYS):
                return
            out.add("warning", "train_micro_batch_size_per_gpu",
                    "Neither train_batch_size nor train_micro_batch_size_per_gpu is set. Plain DeepSpeed stops with "
                    "\"AssertionError: Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided\" "
                    "(Hugging Face Trainer does not add missing keys either: it only replaces \"auto\").",
                    "train_batch_size 和 train_micro_batch_size_per_gpu 都没有设置。纯 DeepSpeed 会报 "
                    "\"AssertionError: Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided\""
                    "（Hugging Face Trainer 也不会补上缺失的键：它只替换 \"auto\"）。",
                    'Add "train_micro_batch_size_per_gpu": "auto" (with HF Trainer) or a number.',
                    '加上 "train_micro_batch_size_per_gpu": "auto"（配合 HF Trainer）或一个数字。')
            return
    given = {k: v for k, v in (("train_batch_size", tb), ("train_micro_batch_size_per_gpu", mb),
                               ("gradient_accumulation_steps", ga)) if v is not None}
    if any(k in pc.invalid for k in DS_BATCH_KEYS) or (tb is None and mb is None):
        for key, value in given.items():  # DeepSpeed cannot do the arithmetic; still report non-positive values
            if value <= 0:
                msg = f"{_DS_LABELS[key]}: {value} has to be greater than 0"
                out.add("error", key, f"DeepSpeed stops with \"AssertionError: {msg}\".",
                        f"DeepSpeed 会报 \"AssertionError: {msg}\"。", "Use a positive integer.", "请使用正整数。")
        return
    if ws is None and tb is not None and mb is not None and ga is not None:
        if mb > 0 and ga > 0 and tb > 0:
            if tb % (mb * ga):
                out.add("error", "train_batch_size",
                        f"train_batch_size={tb} is not a multiple of micro × GA = {mb} × {ga} = {mb * ga}: DeepSpeed's "
                        "check train_batch_size == micro × GA × world_size fails for every number of GPUs.",
                        f"train_batch_size={tb} 不是 micro × GA = {mb} × {ga} = {mb * ga} 的整数倍：无论用几张卡，DeepSpeed "
                        "的检查 train_batch_size == micro × GA × world_size 都不会通过。",
                        f"Set train_batch_size to {mb * ga} × (number of GPUs), or drop it and let DeepSpeed derive it.",
                        f"把 train_batch_size 设为 {mb * ga} × 卡数，或删掉它让 DeepSpeed 自行推导。")
            else:
                n = tb // (mb * ga)
                out.add("info", "train_batch_size",
                        f"All three batch fields are fixed: this config only starts on exactly {n} data-parallel GPU(s) "
                        f"({tb} = {mb} × {ga} × {n}).",
                        f"三个批次字段都写死了：该配置只能在恰好 {n} 张数据并行 GPU 上启动（{tb} = {mb} × {ga} × {n}）。",
                        "Omit train_batch_size (or use \"auto\" with HF Trainer) so it follows the GPU count.",
                        "去掉 train_batch_size（或配合 HF Trainer 用 \"auto\"），让它随卡数变化。")
            return
    world = ws or 1
    if any(v <= 0 for v in given.values()):
        t, m, g, _ = deepspeed_fill(tb, mb, ga, world)
        for value, key in ((t, "train_batch_size"), (m, "train_micro_batch_size_per_gpu"), (g, "gradient_accumulation_steps")):
            if value <= 0:
                msg = f"{_DS_LABELS[key]}: {value} has to be greater than 0"
                out.add("error", key, f"DeepSpeed stops with \"AssertionError: {msg}\".",
                        f"DeepSpeed 会报 \"AssertionError: {msg}\"。",
                        "Use positive integers for all batch fields.", "所有批次字段都必须是正整数。",
                        at=key if key in given else next(iter(given)))
                return
    try:
        res = resolve_batch(train_batch_size=tb, train_micro_batch_size_per_gpu=mb, gradient_accumulation_steps=ga,
                            world_size=world, lang="zh" if lang == "zh" else "en")
    except BatchConfigError as err:
        out.add("error", err.field if err.field in given else "train_batch_size",
                f"DeepSpeed will stop at start-up with \"AssertionError: {err.deepspeed_message}\".",
                f"DeepSpeed 启动时会报 \"AssertionError: {err.deepspeed_message}\"。",
                err.en, err.zh)
        return
    except CalculatorError as err:
        out.add("error", err.field, err.en, err.zh)
        return
    if pc.kind == "deepspeed" and res.derived:
        out.add("info", res.derived[0],
                f"DeepSpeed derives {', '.join(res.derived)}: {res.formula}"
                + ("" if ws else " (assuming 1 GPU; give world_size for your launch)") + ".",
                f"DeepSpeed 会推导 {', '.join(res.derived)}：{res.formula}" + ("" if ws else "（按 1 张卡计算；请给出实际卡数）") + "。")


def _check_missing_ga(out: _Out, pc: ParsedConfig, ws: int | None) -> None:
    d = pc.raw
    if pc.kind != "deepspeed" or "gradient_accumulation_steps" in d:
        return
    tb, mb = pc.batch.get("train_batch_size"), pc.batch.get("train_micro_batch_size_per_gpu")
    world = ws or 1
    if tb is not None and mb is not None and tb > 0 and mb > 0:
        ds_en = f"plain DeepSpeed derives it as train_batch_size // micro // world_size = {tb} // {mb} // {world} = {tb // mb // world}"
        ds_zh = f"纯 DeepSpeed 会按 train_batch_size // micro // world_size = {tb} // {mb} // {world} = {tb // mb // world} 推导"
    elif tb is not None or mb is not None:
        ds_en, ds_zh = "plain DeepSpeed sets it to 1", "纯 DeepSpeed 会把它设为 1"
    else:
        ds_en, ds_zh = "plain DeepSpeed derives it from the other two batch fields", "纯 DeepSpeed 会由另外两个批次字段推导"
    auto_batch = bool({"train_batch_size", "train_micro_batch_size_per_gpu"} & set(pc.auto_fields))
    out.add("warning", "gradient_accumulation_steps",
            f"gradient_accumulation_steps is missing: {ds_en}{' (world_size assumed 1)' if ws is None else ''}. "
            "Hugging Face Trainer does not fill a missing key (fill_match only replaces \"auto\"), and Accelerate's "
            "DeepSpeedPlugin then writes gradient_accumulation_steps=1 into the config; recent Accelerate prefers "
            "DeepSpeed's value over --gradient_accumulation_steps (\"Gradient accumulation steps mismatch: ... Using "
            "DeepSpeed's value.\")" + (", while train_batch_size \"auto\" was already computed with the Trainer's GA, "
                                       "so the batch check can fail." if auto_batch else "."),
            f"缺少 gradient_accumulation_steps：{ds_zh}{'（按 1 张卡计算）' if ws is None else ''}。"
            "Hugging Face Trainer 不会填充缺失的键（fill_match 只替换 \"auto\"），随后 Accelerate 的 DeepSpeedPlugin "
            "会在配置里写入 gradient_accumulation_steps=1；新版 Accelerate 会优先使用 DeepSpeed 的值而不是 "
            "--gradient_accumulation_steps（\"Gradient accumulation steps mismatch: ... Using DeepSpeed's value.\"）"
            + ("，而 train_batch_size 的 \"auto\" 已按 Trainer 的 GA 算好，批次检查可能失败。" if auto_batch else "。"),
            'With HF Trainer / Accelerate write "gradient_accumulation_steps": "auto"; otherwise write the number you want.',
            '配合 HF Trainer / Accelerate 时写 "gradient_accumulation_steps": "auto"；否则写明你想要的数值。')


def _hidden_size(model: str | None) -> int | None:
    if not model:
        return None
    try:
        return get_model_shape(model).hidden_size
    except CalculatorError:
        return None


def _check_auto(out: _Out, pc: ParsedConfig, hf: dict[str, Any] | None, ws: int | None, model: str | None) -> None:
    if pc.kind != "deepspeed":
        return
    stage = pc.memory.get("zero_stage", 0)
    h = _hidden_size(model)
    for key in pc.auto_fields:
        src = HF_AUTO_SOURCES.get(key)
        if src is None:
            if key.startswith("zero_optimization."):
                out.add("warning", key,
                        f"\"auto\" for {key}: Hugging Face Trainer does not fill this key, and DeepSpeed drops \"auto\" "
                        "inside its ZeRO config, so the DeepSpeed default is used.",
                        f"{key} 设为 \"auto\"：Hugging Face Trainer 不会填这个键，DeepSpeed 会在 ZeRO 配置中丢弃 \"auto\"，"
                        "因此使用 DeepSpeed 默认值。", "Write the value you want.", "写明你想要的数值。")
            else:
                out.add("error", key,
                        f"\"auto\" for {key}: neither Hugging Face Trainer nor Accelerate fills this key, so the string "
                        "\"auto\" reaches DeepSpeed.",
                        f"{key} 设为 \"auto\"：Hugging Face Trainer 和 Accelerate 都不会填这个键，字符串 \"auto\" 会原样传给 DeepSpeed。",
                        "Write a concrete value.", "写一个具体的值。")
            continue
        en_src, zh_src = src
        value = _auto_value(key, hf, ws, h, stage)
        if key in ("zero_optimization.stage3_prefetch_bucket_size",
                   "zero_optimization.stage3_param_persistence_threshold") and stage != 3:
            en_v = " Not filled below ZeRO-3: DeepSpeed drops the \"auto\" and keeps its default."
            zh_v = " 非 ZeRO-3 时不会填充：DeepSpeed 丢弃 \"auto\" 并使用默认值。"
        elif value is not None:
            en_v, zh_v = f" → {value}.", f" → {value}。"
        else:
            en_v = zh_v = ""
        out.add("info", key,
                f"\"auto\": Hugging Face Trainer fills {key} from {en_src}{en_v or '.'}",
                f"\"auto\"：Hugging Face Trainer 会用 {zh_src} 填充 {key}{zh_v or '。'}")
    if pc.auto_fields:
        out.add("info", "auto",
                f"{len(pc.auto_fields)} \"auto\" value(s): only Hugging Face Trainer / Accelerate replace them. With a "
                "plain deepspeed.initialize() the batch keys stay the string \"auto\" and start-up fails.",
                f"{len(pc.auto_fields)} 个 \"auto\" 值：只有 Hugging Face Trainer / Accelerate 会替换它们。直接调用 "
                "deepspeed.initialize() 时批次字段仍是字符串 \"auto\"，启动会失败。")


def _hf_values(hf: dict[str, Any] | None) -> dict[str, Any] | None:
    if hf is None:
        return None
    vals = dict(HF_DEFAULTS)
    for k in HF_DEFAULTS:
        if hf.get(k) is not None:
            v = hf[k]
            vals[k] = _scalar(v) if isinstance(v, str) else v
    vals["fp16"] = _truthy(hf.get("fp16")) or _truthy(hf.get("fp16_full_eval"))
    vals["bf16"] = _truthy(hf.get("bf16")) or _truthy(hf.get("bf16_full_eval"))
    vals["auto_find_batch_size"] = _truthy(hf.get("auto_find_batch_size"))
    return vals


def _auto_value(key: str, hf: dict[str, Any] | None, ws: int | None, h: int | None, stage: int) -> Any:
    if key == "zero_optimization.reduce_bucket_size" and h:
        return h * h
    if key == "zero_optimization.stage3_prefetch_bucket_size" and h and stage == 3:
        return int(0.9 * h * h)
    if key == "zero_optimization.stage3_param_persistence_threshold" and h and stage == 3:
        return 10 * h
    if hf is None:
        return None
    table = {"train_micro_batch_size_per_gpu": hf["per_device_train_batch_size"],
             "gradient_accumulation_steps": hf["gradient_accumulation_steps"],
             "gradient_clipping": hf["max_grad_norm"], "optimizer.params.lr": hf["learning_rate"],
             "optimizer.params.betas": [hf["adam_beta1"], hf["adam_beta2"]], "optimizer.params.eps": hf["adam_epsilon"],
             "optimizer.params.weight_decay": hf["weight_decay"], "scheduler.params.warmup_min_lr": 0,
             "scheduler.params.warmup_max_lr": hf["learning_rate"], "fp16.enabled": hf["fp16"],
             "bf16.enabled": hf["bf16"]}
    if key == "train_batch_size" and ws is not None:
        try:
            return ws * hf["per_device_train_batch_size"] * hf["gradient_accumulation_steps"]
        except TypeError:
            return None
    return table.get(key)


def _check_mismatch(out: _Out, ds: ParsedConfig, hf_pc: ParsedConfig, ws: int | None) -> None:
    """HfTrainerDeepSpeedConfig.trainer_config_process / fill_match, reproduced."""
    hf = _hf_values(hf_pc.raw)
    assert hf is not None
    d = ds.raw
    lines: list[tuple[str, str]] = []
    soft = hf["auto_find_batch_size"]
    checks: list[tuple[str, Any, str, bool]] = [
        ("train_micro_batch_size_per_gpu", hf["per_device_train_batch_size"], "per_device_train_batch_size", not soft),
        ("gradient_accumulation_steps", hf["gradient_accumulation_steps"], "gradient_accumulation_steps", True),
    ]
    ga = hf["gradient_accumulation_steps"]
    tb_hf = ws * hf["per_device_train_batch_size"] * ga if ws is not None else None
    checks.append(("train_batch_size", tb_hf, "train_batch_size (calculated)", not soft))
    checks += [("gradient_clipping", hf["max_grad_norm"], "max_grad_norm", True),
               ("optimizer.params.lr", hf["learning_rate"], "learning_rate", True),
               ("optimizer.params.betas", [hf["adam_beta1"], hf["adam_beta2"]], "adam_beta1+adam_beta2", True),
               ("optimizer.params.eps", hf["adam_epsilon"], "adam_epsilon", True),
               ("optimizer.params.weight_decay", hf["weight_decay"], "weight_decay", True),
               ("scheduler.params.warmup_max_lr", hf["learning_rate"], "learning_rate", True),
               ("fp16.enabled", hf["fp16"], "fp16|fp16_full_eval", True),
               ("bf16.enabled", hf["bf16"], "bf16|bf16_full_eval", True)]
    for ds_key, hf_val, hf_key, must in checks:
        parent, _, leaf = ds_key.rpartition(".")
        node = _get(d, parent) if parent else d
        if not isinstance(node, dict) or not must:
            continue
        ds_val = node.get(leaf)
        if ds_val is None or ds_val == "auto":
            continue
        if hf_val is None:  # train_batch_size with an unknown world size
            mb, g = hf["per_device_train_batch_size"], ga
            if isinstance(ds_val, int) and isinstance(mb, int) and isinstance(g, int) and mb * g > 0 and ds_val % (mb * g) == 0:
                out.add("info", ds_key,
                        f"train_batch_size={ds_val} matches the TrainingArguments only on {ds_val // (mb * g)} GPU(s) "
                        f"({mb} × {g} per GPU).",
                        f"train_batch_size={ds_val} 只有在 {ds_val // (mb * g)} 张卡时才与 TrainingArguments 一致"
                        f"（每卡 {mb} × {g}）。", parsed=ds)
                continue
            hf_val = f"world_size × {mb} × {g}"
        if ds_val != hf_val:
            lines.append((ds_key, f"- ds {ds_key}={ds_val} vs hf {hf_key}={hf_val}"))
    if lines:
        body = "\n".join(line for _, line in lines)
        text = ("Please correct the following DeepSpeed config values that mismatch TrainingArguments values:\n"
                f"{body}\nThe easiest method is to set these DeepSpeed config values to 'auto'.")
        out.add("error", lines[0][0],
                f"Hugging Face Trainer will raise (once the model is loaded, in trainer_config_finalize):\nValueError: {text}",
                f"Hugging Face Trainer 会在模型加载后（trainer_config_finalize 中）报错：\nValueError: {text}",
                "Set these keys to \"auto\" in the DeepSpeed config so the Trainer fills them, or make both sides agree.",
                "把 DeepSpeed 配置里的这些键设为 \"auto\" 让 Trainer 来填，或让两边的值一致。", parsed=ds)


def _check_precision(out: _Out, pc: ParsedConfig, hf: dict[str, Any] | None) -> None:
    d = pc.raw
    if pc.kind == "deepspeed":
        fp16 = _get(d, "fp16.enabled")
        bf16 = _get(d, "bf16.enabled") if isinstance(d.get("bf16"), dict) else _get(d, "bfloat16.enabled")
        if hf is not None:
            fp16 = hf["fp16"] if fp16 == "auto" else fp16
            bf16 = hf["bf16"] if bf16 == "auto" else bf16
        if fp16 is True and bf16 is True:
            out.add("error", "bf16.enabled" if isinstance(d.get("bf16"), dict) else "fp16.enabled",
                    "fp16 and bf16 are both enabled. DeepSpeed stops with \"AssertionError: bfloat16 and fp16 modes "
                    "cannot be simultaneously enabled\".",
                    "fp16 和 bf16 同时开启。DeepSpeed 会报 \"AssertionError: bfloat16 and fp16 modes cannot be "
                    "simultaneously enabled\"。",
                    "Keep one: bf16 on Ampere or newer (A100, RTX 30xx/40xx, H100), fp16 on V100/T4.",
                    "只保留一个：Ampere 及更新的卡（A100、RTX 30/40 系、H100）用 bf16，V100/T4 用 fp16。")
        elif "fp16" not in d and "bf16" not in d and "bfloat16" not in d:
            out.add("info", "fp16",
                    "No fp16/bf16 section: DeepSpeed trains in fp32 (both default to disabled), which needs about twice "
                    "the weight/gradient memory and is much slower on tensor cores.",
                    "没有 fp16/bf16 配置段：DeepSpeed 以 fp32 训练（两者默认关闭），权重/梯度显存约为两倍，且无法充分利用 Tensor Core。",
                    'Add "bf16": {"enabled": "auto"} (or true).', '加上 "bf16": {"enabled": "auto"}（或 true）。')
    elif pc.kind in ("hf_training_args", "llamafactory"):
        if _truthy(d.get("fp16")) and _truthy(d.get("bf16")):
            out.add("error", "bf16",
                    "fp16 and bf16 are both set. TrainingArguments raises \"ValueError: At most one of fp16 and bf16 can "
                    "be True, but not both\".",
                    "同时设置了 fp16 和 bf16。TrainingArguments 会报 \"ValueError: At most one of fp16 and bf16 can be "
                    "True, but not both\"。", "Keep only one of them.", "只保留其中一个。")


def _check_offload(out: _Out, pc: ParsedConfig) -> None:
    if pc.kind == "deepspeed":
        zd = pc.raw.get("zero_optimization")
        if not isinstance(zd, dict):
            return
        stage = _int(zd.get("stage", 0))
        opt = _offload_device(zd, "offload_optimizer", "cpu_offload")
        par = _offload_device(zd, "offload_param", "cpu_offload_param")
        prefix = "zero_optimization."
    elif pc.kind == "accelerate":
        zd = pc.raw.get("deepspeed_config")
        if not isinstance(zd, dict):
            return
        stage = pc.memory.get("zero_stage")
        opt = str(zd.get("offload_optimizer_device", "none")).lower()
        par = str(zd.get("offload_param_device", "none")).lower()
        prefix = "deepspeed_config."
    else:
        return
    if stage is None:
        return
    valid = ("none", "cpu", "nvme", None)
    for name, dev in (("offload_optimizer", opt), ("offload_param", par)):
        if dev not in valid:
            key = f"{prefix}{name}.device" if pc.kind == "deepspeed" else f"{prefix}{name}_device"
            out.add("error", key, f"Offload device {dev!r} is not one of none, cpu, nvme.",
                    f"offload 设备 {dev!r} 不是 none、cpu、nvme 之一。", "Use \"cpu\" or \"nvme\".", "请用 \"cpu\" 或 \"nvme\"。")
    opt_on, par_on = opt in ("cpu", "nvme"), par in ("cpu", "nvme")
    key_opt = f"{prefix}offload_optimizer" if pc.kind == "deepspeed" else f"{prefix}offload_optimizer_device"
    key_par = f"{prefix}offload_param" if pc.kind == "deepspeed" else f"{prefix}offload_param_device"
    if par_on and stage != 3:
        out.add("error", key_par,
                f"offload_param with ZeRO stage {stage}: parameter offload is \"Valid only with stage 3\" (DeepSpeed "
                "docs). Stages 0-2 ignore it silently, so you get none of the memory you expect to save.",
                f"ZeRO stage {stage} 下设置了 offload_param：参数 offload \"仅在 stage 3 有效\"（DeepSpeed 文档）。"
                "stage 0-2 会静默忽略它，预期节省的显存一点也不会省下。",
                "Use \"stage\": 3, or remove offload_param.", "改用 \"stage\": 3，或删除 offload_param。")
    if opt_on and stage == 0:
        out.add("error", key_opt,
                "offload_optimizer with ZeRO disabled (stage 0): ZeRO-Offload is part of the ZeRO optimizer, so it is ignored.",
                "ZeRO 关闭（stage 0）时设置了 offload_optimizer：ZeRO-Offload 属于 ZeRO 优化器，会被忽略。",
                "Use \"stage\": 2 (or 3) with offload_optimizer.", "配合 offload_optimizer 使用 \"stage\": 2（或 3）。")
    elif opt == "nvme" and stage < 3:
        out.add("error", key_opt,
                f"NVMe optimizer offload with ZeRO stage {stage}: \"NVMe offloading is available only with ZeRO stage 3\" "
                "(DeepSpeed docs).",
                f"ZeRO stage {stage} 下使用 NVMe 优化器 offload：\"NVMe offloading is available only with ZeRO stage 3\"（DeepSpeed 文档）。",
                "Use \"stage\": 3, or offload to \"cpu\".", "改用 \"stage\": 3，或 offload 到 \"cpu\"。")
    elif opt_on and stage == 1:
        out.add("warning", key_opt,
                "CPU optimizer offload with ZeRO stage 1: current DeepSpeed accepts it (docs: \"CPU offloading is "
                "available with ZeRO stage 1, 2, 3\"), but Accelerate and older docs say stage 2+ only, and stage 2 "
                "also partitions gradients at no extra communication cost.",
                "ZeRO stage 1 下使用 CPU 优化器 offload：新版 DeepSpeed 接受（文档：\"CPU offloading is available with "
                "ZeRO stage 1, 2, 3\"），但 Accelerate 和旧文档写的是仅 stage 2 及以上，而且 stage 2 还能免费切分梯度。",
                "Use \"stage\": 2 with offload_optimizer.", "配合 offload_optimizer 使用 \"stage\": 2。")


def _check_accelerate(out: _Out, pc: ParsedConfig) -> None:
    if pc.kind != "accelerate":
        return
    ds = pc.raw.get("deepspeed_config")
    if isinstance(ds, dict) and ds.get("deepspeed_config_file"):
        clash = [k for k in ACC_IGNORED_WITH_FILE if k in ds]
        if clash:
            names = [k for k in ACC_IGNORED_WITH_FILE] + ["mixed_precision"]
            out.add("error", f"deepspeed_config.{clash[0]}",
                    f"deepspeed_config_file is given together with {clash}. Accelerate raises \"ValueError: When using "
                    f"`deepspeed_config_file`, the following accelerate config variables will be ignored: {names}.\"",
                    f"deepspeed_config_file 与 {clash} 同时给出。Accelerate 会报 \"ValueError: When using "
                    f"`deepspeed_config_file`, the following accelerate config variables will be ignored: {names}.\"",
                    "Move these settings into the DeepSpeed JSON file and delete them here.",
                    "把这些设置移到 DeepSpeed JSON 文件里，并从这里删除。")
        if "mixed_precision" in pc.raw and str(pc.raw["mixed_precision"]).lower() != "no":
            out.add("warning", "mixed_precision",
                    "mixed_precision next to deepspeed_config_file: Accelerate expects precision in the DeepSpeed file "
                    "(set fp16/bf16 \"enabled\" to \"auto\" there) and may refuse the combination.",
                    "mixed_precision 与 deepspeed_config_file 同时出现：Accelerate 期望精度写在 DeepSpeed 文件里"
                    "（在那里把 fp16/bf16 的 \"enabled\" 设为 \"auto\"），并可能拒绝这种组合。",
                    "Remove mixed_precision here, or set the DeepSpeed file's fp16/bf16 enabled to \"auto\".",
                    "删掉这里的 mixed_precision，或把 DeepSpeed 文件中的 fp16/bf16 enabled 设为 \"auto\"。")
    n = pc.raw.get("num_processes")
    machines = _int(pc.raw.get("num_machines", 1)) or 1
    if isinstance(n, int) and n > 0 and machines > 1 and n % machines:
        out.add("error", "num_processes",
                f"num_processes={n} is the total over all machines and is not divisible by num_machines={machines}.",
                f"num_processes={n} 是所有机器上的进程总数，不能被 num_machines={machines} 整除。",
                f"Use a multiple of {machines} (GPUs per machine × machines).", f"请用 {machines} 的倍数（每机卡数 × 机器数）。")


def _check_overlap(out: _Out, pc: ParsedConfig, capacity: int | None) -> None:
    if pc.kind != "deepspeed":
        return
    zd = pc.raw.get("zero_optimization")
    if not isinstance(zd, dict):
        return
    stage = _int(zd.get("stage", 0))
    if stage not in (1, 2):
        return
    if zd.get("overlap_comm") is not True:
        return
    ag = _num(zd.get("allgather_bucket_size"))
    rb = _num(zd.get("reduce_bucket_size"))
    ag = 5e8 if ag is None else ag
    rb = 5e8 if rb is None else rb
    need = 4.5 * (ag + rb) * 2  # HF docs: 4.5x both bucket sizes, 2-byte gradients: 5e8 + 5e8 -> 9 GB
    if need < 2e9 and not (capacity and need > 0.1 * capacity):
        return
    out.add("warning", "zero_optimization.overlap_comm",
            f"overlap_comm=true with allgather_bucket_size={ag:.3g} and reduce_bucket_size={rb:.3g}: overlap_comm uses "
            f"4.5× both bucket sizes (HF DeepSpeed docs), about {need / 1e9:.1f} GB of GPU memory "
            "(the docs' example: 5e8 each → 9 GB).",
            f"overlap_comm=true，allgather_bucket_size={ag:.3g}，reduce_bucket_size={rb:.3g}：overlap_comm 会占用两个桶大小的 "
            f"4.5 倍（HF DeepSpeed 文档），约 {need / 1e9:.1f} GB 显存（文档示例：各 5e8 → 9 GB）。",
            "If memory is tight, lower both bucket sizes to 2e8 (≈3.6 GB) or set overlap_comm to false.",
            "显存紧张时，把两个桶大小降到 2e8（约 3.6 GB），或把 overlap_comm 设为 false。")


def _check_zero3_small(out: _Out, pc: ParsedConfig, model: str | None, stage: int | None) -> None:
    if stage != 3 or not model:
        return
    try:
        n = count_params(get_model_shape(model))
    except CalculatorError:
        return
    if n >= 1e9:
        return
    key = "zero_optimization.stage" if pc.kind == "deepspeed" else (
        "deepspeed_config.zero_stage" if pc.kind == "accelerate" else "deepspeed")
    out.add("warning", key,
            f"ZeRO-3 for {model} ({n / 1e6:.0f}M parameters): the model states are small, so ZeRO-3's per-layer "
            "all-gathers cost more than they save; it is usually slower than ZeRO-2 and, with its prefetch/persistence "
            "buffers, can even use more memory.",
            f"{model}（{n / 1e6:.0f}M 参数）使用 ZeRO-3：模型状态本来就小，ZeRO-3 每层的 all-gather 通信开销大于节省；"
            "通常比 ZeRO-2 慢，加上预取/常驻缓冲区，显存甚至可能更多。",
            "Use ZeRO-2 (or plain DDP) for models under ~1B parameters.", "约 1B 参数以下的模型请用 ZeRO-2（或普通 DDP）。")


# ---------------------------------------------------------------------------------------------
# Memory


def _memory(out: _Out, pc: ParsedConfig, kw: dict[str, Any], lang: str) -> MemoryEstimate | None:
    if "model" not in kw and "num_params" not in kw:
        name = f" ('{pc.model_name}' is not a preset)" if pc.model_name else ""
        name_zh = f"（'{pc.model_name}' 不是预设）" if pc.model_name else ""
        out.add("info", "model",
                f"No memory estimate: the model is unknown{name}. Give model= (e.g. llama-3-8b, qwen2.5-7b) and gpu= "
                "(e.g. rtx-3090, a100-80gb) to get one.",
                f"没有显存估算：模型未知{name_zh}。请提供 model=（如 llama-3-8b、qwen2.5-7b）和 gpu=（如 rtx-3090、a100-80gb）。")
        return None
    if "gpu" not in kw and "gpu_memory_gb" not in kw:
        out.add("info", "gpu", "No GPU given: the estimate below cannot say whether it fits. Give gpu= (e.g. rtx-4090, a100-80gb).",
                "没有给出 GPU：下面的估算无法判断是否放得下。请提供 gpu=（如 rtx-4090、a100-80gb）。")
    try:
        est = estimate_memory(make_config(**kw))
    except CalculatorError as err:
        out.add("warning", err.field, f"No memory estimate: {err.en}", f"无法估算显存：{err.zh}")
        return None
    if est.fits is None:
        return est
    if est.fits:
        out.add("info", "memory",
                f"Fits: about {_gib(est.total_per_gpu)} of {_gib(est.gpu_capacity)} GiB per GPU "
                f"({_gib(est.headroom)} GiB spare; largest micro batch that fits ≈ {est.max_micro_batch}).",
                f"放得下：每卡约 {_gib(est.total_per_gpu)} / {_gib(est.gpu_capacity)} GiB"
                f"（剩余 {_gib(est.headroom)} GiB；可容纳的最大微批次约 {est.max_micro_batch}）。")
        return est
    lever = _best_lever(kw, est)
    short = -(est.headroom or 0)
    if lever:
        en, zh, new = lever
        out.add("error", "memory",
                f"Does not fit: about {_gib(est.total_per_gpu)} GiB per GPU on a {_gib(est.gpu_capacity)} GiB "
                f"{est.gpu_name} ({_gib(short)} GiB short). Biggest lever that fits: {en} → about "
                f"{_gib(new.total_per_gpu)} GiB ({_gib(new.headroom)} GiB spare).",
                f"放不下：每卡约 {_gib(est.total_per_gpu)} GiB，{est.gpu_name} 只有 {_gib(est.gpu_capacity)} GiB"
                f"（差 {_gib(short)} GiB）。最有效且能放下的办法：{zh} → 约 {_gib(new.total_per_gpu)} GiB"
                f"（剩余 {_gib(new.headroom)} GiB）。", en, zh)
    else:
        out.add("error", "memory",
                f"Does not fit: about {_gib(est.total_per_gpu)} GiB per GPU on a {_gib(est.gpu_capacity)} GiB "
                f"{est.gpu_name} ({_gib(short)} GiB short), and no single change (checkpointing, smaller micro batch, "
                "LoRA, ZeRO-3/offload, QLoRA) nor all of them together make it fit.",
                f"放不下：每卡约 {_gib(est.total_per_gpu)} GiB，{est.gpu_name} 只有 {_gib(est.gpu_capacity)} GiB"
                f"（差 {_gib(short)} GiB），梯度检查点、减小微批次、LoRA、ZeRO-3/offload、QLoRA 单独或全部叠加都放不下。",
                "Use more GPUs (with ZeRO-3) or GPUs with more memory, or a shorter sequence length.",
                "增加 GPU（配合 ZeRO-3）、换更大显存的卡，或缩短序列长度。")
    return est


def _try(kw: dict[str, Any], **changes: Any) -> MemoryEstimate | None:
    new = {**kw, **changes}
    if new.get("zero_stage", 0) > 0 and str(new.get("precision", "")).startswith("amp-"):
        new["precision"] = new["precision"][4:] + "-mixed"  # moving to DeepSpeed changes the precision regime
    if new.get("offload_param") and new.get("zero_stage") != 3:
        new["offload_param"] = False
    try:
        return estimate_memory(make_config(**new))
    except CalculatorError:
        return None


def _levers(kw: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    out: list[tuple[str, str, dict[str, Any]]] = []
    if kw.get("gradient_checkpointing", "none") != "full":
        out.append(("enable gradient checkpointing (--gradient_checkpointing)", "开启梯度检查点（--gradient_checkpointing）",
                    {"gradient_checkpointing": "full"}))
    mb, ga = kw.get("train_micro_batch_size_per_gpu", 1), kw.get("gradient_accumulation_steps", 1)
    m = mb // 2
    while m >= 1:
        if mb % m == 0:
            g = ga * (mb // m)
            out.append((f"micro batch {mb} → {m} with gradient_accumulation_steps {ga} → {g} (same effective batch)",
                        f"微批次 {mb} → {m}，gradient_accumulation_steps {ga} → {g}（有效批次不变）",
                        {"train_micro_batch_size_per_gpu": m, "gradient_accumulation_steps": g}))
        m //= 2
    if kw.get("finetune", "full") == "full":
        out.append(("LoRA instead of full fine-tuning (rank 8 on all linear layers)", "用 LoRA 代替全参微调（rank 8，所有线性层）",
                    {"finetune": "lora", "lora_rank": kw.get("lora_rank", 8), "lora_target_modules": ["all"]}))
    stage, ws = kw.get("zero_stage", 0), kw.get("world_size", 1)
    if ws > 1 and stage < 3:
        out.append((f"ZeRO-3 across the {ws} GPUs", f"在 {ws} 张卡上使用 ZeRO-3", {"zero_stage": 3}))
    if not kw.get("offload_optimizer"):
        s = max(stage, 2)
        out.append((f"ZeRO-{s} with offload_optimizer to CPU", f"ZeRO-{s} 并把优化器 offload 到 CPU",
                    {"zero_stage": s, "offload_optimizer": True}))
    if not kw.get("offload_param"):
        out.append(("ZeRO-3 with optimizer and parameter offload to CPU", "ZeRO-3，并把优化器和参数都 offload 到 CPU",
                    {"zero_stage": 3, "offload_optimizer": True, "offload_param": True}))
    if kw.get("finetune", "full") != "qlora":
        out.append(("QLoRA (4-bit base model, LoRA rank 8 on all linear layers)", "QLoRA（4 位基座模型，rank 8，所有线性层）",
                    {"finetune": "qlora", "lora_rank": kw.get("lora_rank", 8),
                     "lora_target_modules": kw.get("lora_target_modules", ["all"]),
                     "offload_param": False, "offload_optimizer": False}))
    return out


def _best_lever(kw: dict[str, Any], est: MemoryEstimate) -> tuple[str, str, MemoryEstimate] | None:
    levers = _levers(kw)
    for en, zh, ch in levers:
        new = _try(kw, **ch)
        if new is not None and new.fits:
            return en, zh, new
    # nothing alone: stack them in order
    acc: dict[str, Any] = {}
    names_en: list[str] = []
    names_zh: list[str] = []
    seen_micro = False
    for en, zh, ch in levers:
        if "train_micro_batch_size_per_gpu" in ch:
            if seen_micro:
                continue
            ch = {"train_micro_batch_size_per_gpu": 1,
                  "gradient_accumulation_steps": kw.get("gradient_accumulation_steps", 1) * kw.get("train_micro_batch_size_per_gpu", 1)}
            en = f"micro batch 1 with gradient_accumulation_steps {ch['gradient_accumulation_steps']}"
            zh = f"微批次 1、gradient_accumulation_steps {ch['gradient_accumulation_steps']}"
            seen_micro = True
        acc.update(ch)
        names_en.append(en)
        names_zh.append(zh)
        new = _try(kw, **acc)
        if new is not None and new.fits:
            return " + ".join(names_en), " + ".join(names_zh), new
    return None


def _memory_kwargs(pc: ParsedConfig, companion: ParsedConfig | None, gpu: Any, ws: int | None,
                   model: Any) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    if companion is not None:
        kw.update(companion.memory)
    kw.update(pc.memory)
    if companion is not None and pc.kind == "deepspeed":
        # the DeepSpeed JSON decides precision only when explicit; "auto" defers to the Trainer flags
        hfv = _hf_values(companion.raw) or {}
        if "precision" not in pc.memory:
            p = _precision(hfv.get("bf16"), hfv.get("fp16"), True)
            if p:
                kw["precision"] = p
        for src, dst in (("per_device_train_batch_size", "train_micro_batch_size_per_gpu"),
                         ("gradient_accumulation_steps", "gradient_accumulation_steps")):
            v = _int(hfv.get(src), strict=False)
            if v is not None and v > 0 and (dst in pc.auto_fields or dst not in kw):
                kw[dst] = v
    if model is not None:
        preset = resolve_model_preset(model) if isinstance(model, str) else None
        kw.pop("model", None)
        if preset:
            kw["model"] = preset
        elif isinstance(model, (int, float)) and not isinstance(model, bool):
            kw["num_params"] = float(model)
        elif isinstance(model, str):
            m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([bBmM])\s*", model)
            if m:
                kw["num_params"] = float(m.group(1)) * (1e9 if m.group(2) in "bB" else 1e6)
    if gpu is not None:
        if isinstance(gpu, (int, float)) and not isinstance(gpu, bool):
            kw["gpu_memory_gb"] = float(gpu)
        else:
            kw["gpu"] = str(gpu)
    if ws is not None:
        kw["world_size"] = ws
    if kw.get("offload_param") and kw.get("zero_stage") != 3:
        kw.pop("offload_param")
    if kw.get("offload_optimizer") and not kw.get("zero_stage"):
        kw.pop("offload_optimizer")
    allowed = set(MemoryConfig.model_fields)
    return {k: v for k, v in kw.items() if k in allowed}


# ---------------------------------------------------------------------------------------------
# Entry points


def check_config(config: str | dict[str, Any] | ParsedConfig, *, gpu: str | float | None = None,
                 world_size: int | None = None, model: str | float | None = None, lang: str = "en",
                 training_args: str | dict[str, Any] | ParsedConfig | None = None) -> ConfigReport:
    """Check a training config; never raises for bad input (problems become findings).

    ``training_args`` is an optional second config, typically the TrainingArguments
    (flags, dict or LLaMA-Factory YAML) used together with a DeepSpeed JSON.
    """
    lang = "zh" if lang == "zh" else "en"
    out = _Out(None)
    parsed: ParsedConfig | None = None
    companion: ParsedConfig | None = None
    estimate: MemoryEstimate | None = None
    try:
        parsed = parse_config(config)
        out.parsed = parsed
        if training_args is not None:
            try:
                companion = parse_config(training_args)
            except CalculatorError as err:
                _parse_failure(out, err, "training_args")
        if companion is not None and parsed.kind != "deepspeed" and companion.kind == "deepspeed":
            parsed, companion = companion, parsed  # the DeepSpeed JSON is the one the Trainer's values are checked against
            out.parsed = parsed
        estimate = _run_checks(out, parsed, companion, gpu, world_size, model, lang)
    except CalculatorError as err:
        _parse_failure(out, err, "config")
    except Exception as exc:  # noqa: BLE001 - the doctor must answer, whatever was pasted
        out.add("error", INTERNAL_ERROR_KEY, f"The checker failed on this input ({type(exc).__name__}: {exc}).",
                f"检查器处理该输入时出错（{type(exc).__name__}: {exc}）。")
    report = ConfigReport(parsed=parsed, findings=out.findings(lang), estimate=estimate, lang=lang, companion=companion)
    report._by_lang = {"en": out.findings("en"), "zh": out.findings("zh")}
    return report


INTERNAL_ERROR_KEY = "<checker-error>"  # not a possible config key, so a user's key "internal" cannot be mistaken for it


def _parse_failure(out: _Out, err: CalculatorError, key: str) -> None:
    if isinstance(err, ConfigParseError):
        out.add("error", key if err.field == "config" else err.field, err.en, err.zh, err.fix_en, err.fix_zh,
                line=err.line, column=err.column)
    else:
        out.add("error", err.field, err.en, err.zh)


def _run_checks(out: _Out, pc: ParsedConfig, companion: ParsedConfig | None, gpu: Any, world_size: Any,
                model: Any, lang: str) -> MemoryEstimate | None:
    ws: int | None = None
    if world_size is not None:
        ws = _int(world_size)
        if ws is None or ws <= 0:
            out.add("error", "world_size", f"world_size={world_size!r} must be a positive integer.",
                    f"world_size={world_size!r} 必须是正整数。")
            ws = None
    ws = ws or pc.world_size or (companion.world_size if companion else None)
    if pc.notes_en:
        for en, zh in zip(pc.notes_en, pc.notes_zh):
            out.add("info", "assumption", en, zh)
    if companion is not None:
        for en, zh in zip(companion.notes_en, companion.notes_zh):
            out.add("info", "assumption", en, zh, parsed=companion)
    _check_values(out, pc)
    _check_unknown(out, pc)
    if companion is not None:
        cout = _Out(companion)
        _check_values(cout, companion)
        _check_unknown(cout, companion)
        _check_precision(cout, companion, None)
        out.items += [(s, f"training_args.{k}", en, zh, fe, fz, ln, col) for s, k, en, zh, fe, fz, ln, col in cout.items]
    hf_raw = companion.raw if companion is not None and companion.kind in ("hf_training_args", "llamafactory") else None
    hf = _hf_values(hf_raw)
    # batch: the DeepSpeed view, with "auto" filled from the Trainer's values when known
    if pc.kind == "deepspeed" and hf is not None:
        filled = ParsedConfig(**pc.model_dump())
        for key, src in (("train_micro_batch_size_per_gpu", "per_device_train_batch_size"),
                         ("gradient_accumulation_steps", "gradient_accumulation_steps")):
            v = _int(hf[src], strict=False)
            if key in pc.auto_fields and v is not None:
                filled.batch[key] = v
        if "train_batch_size" in pc.auto_fields and ws is not None:
            mb, g = filled.batch.get("train_micro_batch_size_per_gpu"), filled.batch.get("gradient_accumulation_steps")
            if isinstance(mb, int) and isinstance(g, int):
                filled.batch["train_batch_size"] = ws * mb * g
        _check_batch(out, filled, ws, lang)
    elif pc.kind in ("hf_training_args", "llamafactory"):
        view = ParsedConfig(**pc.model_dump())
        view.batch.setdefault("train_micro_batch_size_per_gpu", HF_DEFAULTS["per_device_train_batch_size"])
        if "per_device_train_batch_size" not in pc.raw and "per_device_train_batch_size" not in pc.invalid:
            out.add("info", "per_device_train_batch_size",
                    "per_device_train_batch_size not set: Hugging Face's default is 8 per GPU.",
                    "未设置 per_device_train_batch_size：Hugging Face 默认每卡 8。")
            view.memory.setdefault("train_micro_batch_size_per_gpu", 8)
            pc.memory.setdefault("train_micro_batch_size_per_gpu", 8)
        _check_batch(out, view, ws, lang)
        _effective_batch_note(out, view, ws)
    else:
        _check_batch(out, pc, ws, lang)
    _check_missing_ga(out, pc, ws)
    _check_auto(out, pc, hf, ws, _model_for(pc, companion, model))
    if companion is not None and pc.kind == "deepspeed" and hf_raw is not None:
        _check_mismatch(out, pc, companion, ws)
    _check_precision(out, pc, hf)
    _check_offload(out, pc)
    _check_accelerate(out, pc)
    if pc.kind in ("hf_training_args", "llamafactory", "accelerate") and isinstance(pc.deepspeed, str) \
            and "zero_stage" not in pc.memory:
        out.add("info", "deepspeed",
                f"The DeepSpeed config {pc.deepspeed!r} itself was not given: the estimate assumes no ZeRO sharding. "
                "Paste it too (as training_args, or as config with these arguments as training_args) to check both.",
                f"没有提供 DeepSpeed 配置 {pc.deepspeed!r} 本身：估算按不使用 ZeRO 分片计算。"
                "请一并粘贴（作为 training_args，或把它作为 config、把这些参数作为 training_args），以便同时检查两者。")
    kw = _memory_kwargs(pc, companion, gpu, ws, model)
    capacity = None
    if "gpu" in kw:
        try:
            capacity = int(get_gpu(kw["gpu"]).memory_gib * GiB)
        except CalculatorError as err:
            out.add("warning", "gpu", err.en, err.zh)
            kw.pop("gpu")
    _check_overlap(out, pc, capacity)
    stage = kw.get("zero_stage")
    _check_zero3_small(out, pc, kw.get("model"), stage)
    return _memory(out, pc, kw, lang)


def _model_for(pc: ParsedConfig, companion: ParsedConfig | None, model: Any) -> str | None:
    if isinstance(model, str):
        r = resolve_model_preset(model)
        if r:
            return r
    return pc.memory.get("model") or (companion.memory.get("model") if companion else None)


def _effective_batch_note(out: _Out, view: ParsedConfig, ws: int | None) -> None:
    mb = view.batch.get("train_micro_batch_size_per_gpu")
    ga = view.batch.get("gradient_accumulation_steps", 1)
    if not (isinstance(mb, int) and isinstance(ga, int) and mb > 0 and ga > 0):
        return
    if ws:
        out.add("info", "effective_batch",
                f"Effective batch = per_device × GA × GPUs = {mb} × {ga} × {ws} = {mb * ga * ws} samples per optimizer step.",
                f"有效批次 = 每卡批次 × GA × 卡数 = {mb} × {ga} × {ws} = {mb * ga * ws} 个样本/每次优化器更新。")
    else:
        out.add("info", "effective_batch",
                f"Effective batch = {mb} × {ga} × (number of GPUs) = {mb * ga} per GPU; give world_size for the total.",
                f"有效批次 = {mb} × {ga} × 卡数 = 每卡 {mb * ga}；给出 world_size 可得到总数。")


def config_check_tool(args: dict[str, Any]) -> ConfigReport:
    """The ``config_check`` tool: ``{"config": text|dict, "gpu"?, "world_size"?, "model"?, "lang"?, "training_args"?}``."""
    if not isinstance(args, dict):
        raise CalculatorError("arguments", args, "a dict of keyword arguments", "关键字参数字典")
    allowed = {"config", "gpu", "world_size", "model", "lang", "training_args"}
    extra = sorted(set(args) - allowed)
    if extra or "config" not in args:
        raise CalculatorError("arguments", sorted(args), "config (required), gpu, world_size, model, lang, training_args",
                              "config（必填）、gpu、world_size、model、lang、training_args")
    return check_config(args["config"], gpu=args.get("gpu"), world_size=args.get("world_size"), model=args.get("model"),
                        lang=args.get("lang", "en"), training_args=args.get("training_args"))


# ---------------------------------------------------------------------------------------------
# Spotting a pasted config in a chat message


_YAML_LINE = re.compile(r"^\s*([A-Za-z_][\w.-]*)\s*:(\s|$)")
_FLAG = re.compile(r"--([A-Za-z_][\w-]*)")


def _has_keys(text: str, need: int = 2) -> bool:
    found = set(re.findall(r'"([A-Za-z_][\w.]*)"\s*:', text))
    found |= {m.group(1) for line in text.splitlines() if (m := _YAML_LINE.match(line))}
    found |= {f.replace("-", "_") for f in _FLAG.findall(text)}
    strong = found & _STRONG_KEYS
    return bool(strong) and len(found & DETECT_KEYS) >= min(need, 2) or len(strong) >= 2


def extract_config_text(message: str) -> str | None:
    """The config pasted in a chat message (fenced block, JSON object, launch command or YAML), or None."""
    if not isinstance(message, str) or not message.strip():
        return None
    message = message[:MAX_TEXT]
    for m in _FENCE.finditer(message):
        body = m.group(2)
        if _has_keys(body, need=1):
            return body.strip()
    start = message.find("{")
    end = message.rfind("}")
    if 0 <= start < end:
        cand = message[start:end + 1]
        if _has_keys(cand, need=1):
            return cand
    lines = message.splitlines()
    for i, line in enumerate(lines):
        if re.search(r"(^|\s)(torchrun|deepspeed|accelerate\s+launch|python3?|llamafactory-cli)\s", line + " ") or \
                line.strip().startswith("--"):
            block = [line]
            j = i
            while block[-1].rstrip().endswith("\\") and j + 1 < len(lines):
                j += 1
                block.append(lines[j])
            cand = "\n".join(block)
            if len(_FLAG.findall(cand)) and _has_keys(cand, need=1):
                return cand.strip()
    run: list[str] = []
    best: list[str] = []
    for line in lines + [""]:
        if _YAML_LINE.match(line) or (run and (line.startswith((" ", "\t")) or not line.strip()
                                               or line.lstrip().startswith("#") or line.lstrip().startswith("- "))):
            run.append(line)
        else:
            if len(run) > len(best):
                best = run
            run = []
    if len(run) > len(best):
        best = run
    while best and (not best[-1].strip() or best[-1].lstrip().startswith("#")):
        best.pop()
    if best and _has_keys("\n".join(best), need=2):
        return "\n".join(best).strip()
    return None


def looks_like_config(text: str) -> bool:
    """True when ``text`` contains a training config worth checking."""
    return extract_config_text(text) is not None
