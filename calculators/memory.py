"""Per-GPU training memory: model states, activations and the rest.

Model states follow the ZeRO paper (Rajbhandari et al. 2020, §3): with mixed
precision and Adam each trainable parameter costs 2 (16-bit weight) + 2
(16-bit gradient) + 12 (fp32 master weight, momentum, variance) bytes, and
ZeRO stages 1/2/3 divide the optimizer states / + gradients / + weights by the
data-parallel size. Hugging Face Trainer without DeepSpeed (torch autocast,
``amp-*`` here) keeps fp32 weights and gradients instead: 6 + 4 + 8 = 18 bytes
per parameter (HF "Model training anatomy"). The two regimes are kept apart
because published tables mix them up.

Activations come from :mod:`calculators.activations` (Korthikanti et al.
2022, generalised per architecture and checked against real measurements).
Gradient accumulation never enters the activation term: each micro-batch's
activations are freed by its backward pass and ``.grad`` accumulates in place.
It does decide whether the gradient buffer is alive during a forward pass: with
``zero_grad(set_to_none=True)`` (the PyTorch >= 2.0 default, and what HF Trainer
and DeepSpeed's ZeRO-1/2 optimizers do) no gradient exists during the first
micro-batch's forward, so at GA=1 the gradients only replace activations that
backward has already freed (peak = states without gradients + max(activations,
gradients)); at GA >= 2 the accumulated gradients sit beside the next
micro-batch's activations (+ the gradient buffer, the same for GA=2 and GA=64).
See :func:`_gradients_live_in_forward` and tests/test_memory_ga_set_to_none.py.

``amp-*`` full fine-tunes add what torch autocast keeps beyond pure 16-bit (fp32 residual stream and norm tensors,
one 16-bit input copy per linear: :mod:`calculators.autocast`, tests/test_amp_measured.py). torchtune's
``optimizer_in_backward`` keeps one parameter's gradient instead of the buffer, and ``activation_offloading`` moves
the blocks' activations to pinned CPU memory (tests/test_memory_offload_inbwd.py).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .activations import activation_bytes
from .autocast import autocast_extra_bytes
from .errors import CalculatorError
from .presets import (
    ModelShape,
    active_params,
    block_linear_weights,
    block_params,
    count_params,
    get_gpu,
    get_model_shape,
    layer_params,
    shape_from_hf_config,
)
from .units import GiB as GiB  # re-exported: calculators.memory.GiB predates calculators.units
from .units import format_gib
from .validate import positive_float, positive_int
from .vision import LLAMAFACTORY_MAX_PIXELS, image_tokens, vision_encoder_params, vision_params, vit_activation_bytes

Precision = Literal["fp32", "amp-fp16", "amp-bf16", "fp16-mixed", "bf16-mixed", "bf16"]
Optimizer = Literal["adamw", "adamw-8bit", "sgd-momentum", "adafactor"]
LORA_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
MAX_PARAMS = 1e13
MAX_MICRO = 65536
MAX_SEQ = 10**7

# Bytes per trainable parameter of the optimizer's own states (HF "Model training anatomy":
# AdamW 8, 8-bit AdamW 2, SGD with momentum 4). In pure bf16 the states are bf16 too.
_OPTIMIZER_STATE_BYTES = {"adamw": 8, "adamw-8bit": 2, "sgd-momentum": 4}
_OPTIMIZER_STATE_BYTES_BF16 = {"adamw": 4, "adamw-8bit": 2, "sgd-momentum": 2}


class MemoryConfig(BaseModel):
    """One training setup. Field names follow DeepSpeed / Hugging Face where they exist."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: str | None = Field(None, description="Preset name, e.g. llama-2-7b, qwen2.5-7b, gpt2.")
    num_params: float | None = Field(None, description="Total parameters, e.g. 7e9, when no preset fits.")
    hf_config: dict[str, Any] | str | None = Field(
        None,
        description="A Hugging Face config.json: the dict or its JSON text. File paths are not read "
        "(this field arrives from HTTP and the browser); read the file yourself with json.load.",
    )
    hidden_size: int | None = Field(None, description="With num_params: lets activations be estimated.")
    num_layers: int | None = None
    num_attention_heads: int | None = None
    vocab_size: int | None = None

    gpu: str | None = Field(None, description="GPU preset, e.g. rtx-3090, a100-80gb.")
    gpu_memory_gb: float | None = Field(None, description="GPU memory in GiB (as nvidia-smi reports it).")

    precision: Precision = "bf16-mixed"
    optimizer: Optimizer = "adamw"
    adamw_kernel: Literal["fused", "foreach"] = Field(
        "fused",
        description=(
            "How torch.optim.AdamW runs its step. 'fused' updates every state in place: fused=True, HF Trainer's "
            "default optim with torch >= 2.8 ('adamw_torch_fused'), DeepSpeed's FusedAdam / CPUAdam under ZeRO. "
            "'foreach' (torch.optim.AdamW's default on CUDA without fused=True: plain PyTorch and Accelerate "
            "scripts, HF Trainer optim='adamw_torch') builds sqrt(exp_avg_sq) for all parameters at once: one more "
            "buffer the size of the second moment, alive beside the gradients during the step (torch/optim/adam.py "
            "_multi_tensor_adam; measured on an H200, tests/test_gpu_measured.py)."
        ),
    )
    zero_stage: int = 0
    world_size: int = 1
    num_nodes: int = 1
    offload_optimizer: bool = False
    offload_param: bool = False
    pipeline_parallel_size: int = 1
    bitsandbytes_before_0_43_2: bool = Field(
        False,
        description=(
            "QLoRA with bitsandbytes < 0.43.2: MatMul4Bit saved its input for backward even though the frozen 4-bit "
            "weight needs no gradient (bitsandbytes/autograd/_functions.py: `ctx.tensors = (A, B)` in 0.43.1, "
            "`(None, B)` from 0.43.2), so every block keeps the inputs of its 4-bit linears."
        ),
    )
    fsdp: Literal["none", "full_shard", "shard_grad_op", "hybrid_shard", "no_shard"] = Field(
        "none",
        description=(
            "PyTorch FSDP sharding strategy (HF Trainer/Accelerate `fsdp`), instead of DeepSpeed ZeRO (zero_stage 0). "
            "full_shard ~ ZeRO-3, shard_grad_op ~ ZeRO-2 (parameters stay gathered from forward to backward), "
            "hybrid_shard = full_shard inside a node, replicated across nodes."
        ),
    )
    fsdp_cpu_offload: bool = Field(
        False,
        description="FSDP CPUOffload(offload_params=True): sharded parameters, "
        "gradients and the optimizer step live on the CPU.",
    )
    fsdp_sync_each_batch: bool = Field(
        False,
        description=(
            "Accelerate's GradientAccumulationPlugin(sync_each_batch=...). False (the default) wraps the GA micro-steps "
            "in FSDP's no_sync(), which accumulates *unsharded* gradients: a full gradient buffer at GA >= 2 (FSDP1, "
            "FullyShardedDataParallel). FSDP2 (fully_shard, fsdp_version 2) has no no_sync() and reduce-scatters every "
            "micro-batch: set True for FSDP2. Sources: https://pytorch.org/docs/stable/fsdp.html (no_sync), "
            "https://huggingface.co/docs/accelerate/concept_guides/gradient_synchronization (sync_each_batch)."
        ),
    )
    fsdp_frozen_in_trainable_units: bool = Field(
        False,
        description=(
            "LoRA/QLoRA under FSDP1 with use_orig_params=True when one wrapped unit holds both frozen base weights and "
            "adapters (e.g. LitGPT's Lightning FSDPStrategy wrapping each Block). The unit's flat parameter then "
            "requires a gradient, so FSDP keeps gradients for the whole unit (PyTorch FSDP docs, 'mixing frozen and "
            "non-frozen parameters ... the gradient memory usage will be higher than expected (namely, equivalent to not "
            "freezing those parameters)'), and the frozen linears save their inputs. False: adapters wrapped in units of "
            "their own, as HF Trainer does for PEFT models (peft.utils.other.fsdp_auto_wrap_policy)."
        ),
    )
    zero_grad_set_to_none: bool = Field(
        True,
        description=(
            "optimizer.zero_grad(set_to_none=...) between steps. True is the default of PyTorch >= 2.0 and of HF "
            "Trainer: gradients are freed after each optimizer step, so at GA=1 they never coexist with a forward "
            "pass's activations. False keeps zeroed gradient buffers alive all the time."
        ),
    )
    optimizer_in_backward: bool = Field(
        False,
        description=(
            "The optimizer step fused into backward (torchtune `optimizer_in_bwd: True`, OptimizerInBackward; the "
            "PyTorch tutorial 'How to save memory by fusing the optimizer step into the backward pass'): each "
            "parameter is updated by a post-accumulate-grad hook as soon as its gradient is ready and the gradient "
            "is freed, so no full gradient buffer exists, only about one parameter's gradient at a time. torchtune "
            "refuses it with gradient accumulation and with gradient clipping."
        ),
    )
    activation_offloading: bool = Field(
        False,
        description=(
            "torchtune `enable_activation_offloading: True` (OffloadActivations, a saved_tensors_hooks context "
            "around the model's forward): saved activations larger than 1 KiB go to pinned CPU memory in the forward "
            "and come back in the backward, except the output head's (and the loss, computed outside the context). "
            "torchtune's recipes require activation checkpointing with it, so only the blocks' inputs are offloaded. "
            "GPU keeps about one block's activations in flight (modelled: the block re-materialised in backward)."
        ),
    )

    images_per_sample: int = Field(
        0,
        ge=0,
        le=10_000,
        description=(
            "Vision-language presets (qwen2-vl-*, qwen2.5-vl-*, qwen3-vl-*, llava-1.5-*, internvl2-8b, glm-4.1v-9b, "
            "glm-4v-9b, minicpm-v-2.6, minicpm-llama3-v-2.5): images in each "
            "sample. Their visual tokens are added to seq_len (the text tokens) in the language model's activations; 0 counts none."
        ),
    )
    visual_tokens_in_seq_len: bool = Field(
        False,
        description=(
            "seq_len already counts the images' visual tokens: LLaMA-Factory's cutoff_len and ms-swift's max_length "
            "bound the whole sequence, image tokens included. Then seq_len is the language model's sequence and the "
            "visual tokens are not added (the vision tower's own activations still follow the images)."
        ),
    )
    image_height: int | None = Field(None, description="Pixels; Qwen2-VL / InternVL token counts depend on the size.")
    image_width: int | None = None
    image_max_pixels: int | None = Field(
        None,
        description=(
            "Qwen2-VL / Qwen2.5-VL / Qwen3-VL / GLM-4.1V resize bound (the processor's max_pixels; None: the default, "
            "28·28·1280 for Qwen2-VL / Qwen2.5-VL, 4096·4096 for Qwen3-VL, 28·28·15000 / 2 for GLM-4.1V, whose processor "
            "counts an image as two frames). "
            f"LLaMA-Factory passes its own image_max_pixels, default {LLAMAFACTORY_MAX_PIXELS:,} (768·768)."
        ),
    )
    freeze_vision_tower: bool = Field(
        True,
        description=(
            "Full fine-tunes of a VL preset: the ViT is frozen (no gradient, no optimizer state, 16-bit weights). "
            "The default of LLaMA-Factory (freeze_vision_tower=True) and ms-swift (freeze_vit=True)."
        ),
    )
    freeze_projector: bool = Field(
        True,
        description=(
            "Full fine-tunes of a VL preset: the projector / merger is frozen. LLaMA-Factory "
            "freeze_multi_modal_projector=True and ms-swift freeze_aligner=True by default."
        ),
    )

    finetune: Literal["full", "lora", "qlora"] = "full"
    qlora_lm_head_4bit: bool = Field(
        False,
        description=(
            "QLoRA with an untied LM head quantised too. Lightning's BitsandbytesPrecision (LitGPT --quantize bnb.*) "
            "replaces every nn.Linear, the LM head included, quantising an fp16 copy; bitsandbytes' MatMul4Bit then "
            "dequantises the head to fp16 and casts it to the compute dtype in forward and backward "
            "(`F.dequantize_4bit(B, state).to(A.dtype)`), so two V·h 16-bit copies are live at the loss peak. "
            "transformers' BitsAndBytesConfig keeps lm_head in 16 bits (llm_int8_skip_modules): False."
        ),
    )
    lora_int8_base: bool = Field(
        False,
        description=(
            "LoRA on a base loaded with bitsandbytes LLM.int8() (transformers load_in_8bit=True, LLaMA-Factory "
            "quantization_bit 8). The blocks' Linear weights are stored as int8, 1 byte each (bitsandbytes >= 0.45: "
            "Int8Params CB plus an fp32 scale per output row, SCB, under 0.1 % and not counted); biases, norms, "
            "embeddings and the LM head stay 16-bit. MatMul8bitLt saves its input for backward (ctx.tensors = "
            "(CAt, subA, A); CAt is None for a frozen weight), so every block keeps the inputs of its 8-bit linears, "
            "and backward dequantises one weight matrix at a time to the compute dtype (that transient, one matrix, "
            "is not counted)."
        ),
    )
    qlora_double_quant: bool = Field(
        True,
        description=(
            "QLoRA NF4 storage: True = double quantisation (bnb_4bit_use_double_quant=True, LitGPT bnb.nf4-dq): "
            "4.127 bits per weight; False (BitsAndBytesConfig's default, LitGPT bnb.nf4): an fp32 absmax per block of "
            "64 weights, 4.5 bits per weight (Dettmers et al. 2023, QLoRA, section 3)."
        ),
    )
    lora_rank: int = 8
    lora_target_modules: list[str] = Field(default_factory=lambda: ["q_proj", "v_proj"])

    train_micro_batch_size_per_gpu: int = 1
    gradient_accumulation_steps: int = 1
    seq_len: int = 2048
    gradient_checkpointing: Literal["none", "selective", "full"] = "none"
    flash_attention: bool = Field(
        True,
        description=(
            "Memory-efficient attention (FlashAttention or PyTorch SDPA, the transformers default since v4.36): "
            "no s×s score matrix is stored. False = eager attention (Korthikanti's 5·a·s/h term)."
        ),
    )

    loss_implementation: Literal["hf", "hf-keep-outputs", "chunked", "lm-head-chunks", "ce-chunks"] = Field(
        "hf",
        description=(
            "How the causal-LM loss is computed. 'hf': transformers' ForCausalLMLoss as HF Trainer calls it (the model "
            "output is dropped before backward): at the start of backward the fp32 log-softmax output, its fp32 "
            "gradient and the fp32 gradient of the logits coexist, 12 bytes per logit (measured). 'hf-keep-outputs': "
            "a loop that keeps `outputs` alive through loss.backward() also keeps the 16-bit (fp32) logits: 12 + 2 (4). "
            "'chunked': a chunked / fused linear cross-entropy (Liger, torchtune, Unsloth) that never materialises the "
            "full logits (its per-chunk buffer is not modelled). "
            "'lm-head-chunks': LitGPT's LoRA recipe (model(x, lm_head_chunk_size=128) + chunked_cross_entropy, no fp32 "
            "upcast): every chunk's logits and log-softmax output are kept, 2·B bytes per logit, plus one 128-token "
            "chunk's two gradients in backward. 'ce-chunks': LitGPT's full recipe (full logits, cross-entropy over "
            "128-row slices): the logits, the slices' gradients and their concatenation, 3·B per logit. B = 2 (16-bit) "
            "or 4; measured in tests/test_memory_logits.py."
        ),
    )
    allocator_slack_fraction: float = Field(
        0.10,
        description=(
            "What nvidia-smi shows above PyTorch's peak allocation (the caching allocator keeps freed blocks "
            "reserved, and fragmentation rounds blocks up), as a fraction of the peak. An assumption: it varies with "
            "the run; torch.cuda.max_memory_reserved() / max_memory_allocated() - 1 on your machine gives the real one."
        ),
    )
    cuda_context_gb: float = Field(
        1.0,
        description=(
            "CUDA context + kernels. HF 'Model training anatomy' says 1-2 GB (1.3 GB measured on a V100); CUDA lazy "
            "module loading makes it smaller. Set it to what nvidia-smi shows for an idle process on your machine."
        ),
    )
    reduce_bucket_size: float = Field(5e8, description="DeepSpeed reduce_bucket_size (elements).")
    allgather_bucket_size: float = Field(5e8, description="DeepSpeed allgather_bucket_size (elements).")
    overlap_comm: bool = False

    @field_validator("lora_target_modules")
    @classmethod
    def _modules(cls, v: list[str] | str) -> list[str]:
        if v == ["all"] or v == "all":
            return list(LORA_MODULES)
        bad = [m for m in v if m not in LORA_MODULES]
        if bad or not v:
            raise CalculatorError(
                "lora_target_modules",
                v,
                f"{', '.join(LORA_MODULES)} or ['all']",
                f"{', '.join(LORA_MODULES)} 或 ['all']",
            )
        # A module listed twice would be counted twice (1,000,000 copies of q_proj gave 2.1 trillion
        # trainable parameters); PEFT matches each module once, so a repeat is a mistake, not more adapters.
        repeated = sorted(m for m, n in Counter(v).items() if n > 1)
        if repeated:
            names = ", ".join(repeated)
            raise CalculatorError(
                "lora_target_modules",
                v,
                f"each module at most once ({', '.join(LORA_MODULES)})",
                f"每个模块最多列一次（{', '.join(LORA_MODULES)}）",
                reason_en=f"lora_target_modules lists {names} more than once.",
                reason_zh=f"lora_target_modules 中 {names} 重复出现。",
            )
        return list(v)

    @model_validator(mode="after")
    def _check(self) -> MemoryConfig:
        given = [x for x in (self.model, self.num_params, self.hf_config) if x is not None]
        if len(given) != 1:
            raise CalculatorError(
                "model",
                self.model,
                "exactly one of model (a preset name), num_params or hf_config",
                "model（预设名）、num_params、hf_config 三者恰好给一个",
            )
        if self.zero_stage not in (0, 1, 2, 3):
            raise CalculatorError("zero_stage", self.zero_stage, "0, 1, 2 or 3", "0、1、2 或 3")
        if self.offload_param and self.zero_stage != 3:
            raise CalculatorError(
                "offload_param",
                True,
                "offload_param only with zero_stage=3 (DeepSpeed offloads parameters only in ZeRO-3)",
                "仅在 zero_stage=3 时可用 offload_param（DeepSpeed 只在 ZeRO-3 卸载参数）",
            )
        if self.offload_optimizer and self.zero_stage == 0:
            raise CalculatorError(
                "offload_optimizer",
                True,
                "offload_optimizer with zero_stage 1, 2 or 3 (ZeRO-Offload)",
                "zero_stage 为 1、2 或 3 时才能 offload_optimizer（ZeRO-Offload）",
            )
        if self.fsdp != "none" and (
            self.zero_stage or self.offload_optimizer or self.offload_param or self.pipeline_parallel_size != 1
        ):
            raise CalculatorError(
                "fsdp",
                self.fsdp,
                "FSDP alone: zero_stage 0, no DeepSpeed offload, no pipeline "
                "parallelism (FSDP and DeepSpeed ZeRO are alternatives)",
                "单独使用 FSDP：zero_stage 为 0、不开 DeepSpeed offload、不用流水线并行（FSDP 与 ZeRO 二选一）",
            )
        if self.fsdp_frozen_in_trainable_units and (self.fsdp == "none" or self.finetune == "full"):
            raise CalculatorError(
                "fsdp_frozen_in_trainable_units",
                True,
                "only with an fsdp strategy and finetune "
                "'lora' or 'qlora' (frozen base weights sharing FSDP units with adapters)",
                "仅在设置了 fsdp 策略且 finetune 为 'lora' 或 'qlora' 时可用（冻结的基座权重与适配器同在一个 FSDP 单元）",
            )
        if self.lora_int8_base and self.finetune != "lora":
            raise CalculatorError("lora_int8_base", True, "only with finetune='lora'", "仅在 finetune='lora' 时可用")
        if self.qlora_lm_head_4bit and self.finetune != "qlora":
            raise CalculatorError(
                "qlora_lm_head_4bit", True, "only with finetune='qlora'", "仅在 finetune='qlora' 时可用"
            )
        if self.fsdp_cpu_offload and self.fsdp == "none":
            raise CalculatorError(
                "fsdp_cpu_offload",
                True,
                "fsdp_cpu_offload with an fsdp strategy",
                "需先设置 fsdp 策略才能使用 fsdp_cpu_offload",
            )
        if self.optimizer_in_backward and (
            self.gradient_accumulation_steps != 1
            or self.zero_stage
            or self.fsdp != "none"
            or self.pipeline_parallel_size != 1
        ):
            raise CalculatorError(
                "optimizer_in_backward",
                True,
                "gradient_accumulation_steps=1, no ZeRO, no FSDP, no pipeline parallelism (torchtune refuses "
                "optimizer_in_bwd with gradient accumulation; the sharded cases are not modelled)",
                "gradient_accumulation_steps=1，且不用 ZeRO、FSDP、流水线并行（torchtune 的 optimizer_in_bwd 不支持梯度累积；"
                "分片情形尚未建模）",
            )
        for name in ("world_size", "num_nodes"):
            if getattr(self, name) < 1:
                raise CalculatorError(name, getattr(self, name), "an integer ≥ 1", "≥ 1 的整数")
        if self.world_size % self.num_nodes:
            raise CalculatorError(
                "num_nodes",
                self.num_nodes,
                f"a divisor of world_size ({self.world_size})",
                f"world_size（{self.world_size}）的约数",
            )
        return self

    def __init__(self, **data: Any) -> None:
        """Like any pydantic model, but a bad field is a CalculatorError (a ValueError) naming it in en + zh."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _config_error(exc) from None


class MemoryEstimate(BaseModel):
    """Per-GPU bytes by category, plus CPU bytes for offload and whether it fits."""

    model_config = ConfigDict(protected_namespaces=())

    model_name: str
    num_params: int
    trainable_params: int
    weights: int
    gradients: int
    optimizer_states: int
    activations: int | None
    other: int
    total_per_gpu: int | None = Field(description="peak_allocated + CUDA context (fits/headroom use this).")
    peak_allocated: int | None = Field(
        None,
        description=(
            "What torch.cuda.max_memory_allocated() should report: model states + activations + buffers, no context."
        ),
    )
    nvidia_smi: int | None = Field(
        None,
        description=("What nvidia-smi should show: peak_allocated × (1 + allocator_slack_fraction) + CUDA context."),
    )
    cpu_total: int
    gpu_name: str | None
    gpu_capacity: int | None
    fits: bool | None
    headroom: int | None
    max_micro_batch: int | None
    details: dict[str, int] = Field(description="The pieces of 'activations' and 'other'.")
    gradients_live_during_forward: bool = Field(
        False,
        description=(
            "Whether the GPU gradient buffer coexists with a micro-batch's activations (GA >= 2, ZeRO-3, or "
            "set_to_none=False); if not, the peak holds max(activations, gradients) instead of their sum."
        ),
    )
    ga_extra_over_ga1: int | None = Field(
        None,
        description=(
            "Bytes per GPU that any GA >= 2 adds over GA=1 with everything else equal (constant in GA): at most one "
            "gradient buffer, plus FSDP no_sync's unsharded gradients. None when activations are unknown."
        ),
    )
    bytes_per_param: dict[str, float]
    gradient_accumulation_note_en: str
    gradient_accumulation_note_zh: str
    notes_en: list[str]
    notes_zh: list[str]
    assumptions_en: list[str]
    assumptions_zh: list[str]

    @property
    def model_states(self) -> int:
        return self.weights + self.gradients + self.optimizer_states

    def gib(self, field: str) -> float | None:
        value = getattr(self, field)
        return None if value is None else value / GiB


def _config_error(exc: ValidationError) -> CalculatorError:
    """The first problem pydantic found, as a CalculatorError; our own validators' errors pass through as raised."""
    err = exc.errors()[0]
    own = (err.get("ctx") or {}).get("error")
    if isinstance(own, CalculatorError):
        return own
    field = ".".join(str(p) for p in err["loc"]) or "config"
    value = err.get("input")
    accepted = err["msg"].removeprefix("Value error, ").removeprefix("Input should be ")
    return CalculatorError(field, value if not isinstance(value, dict) else "…", accepted, accepted)


def as_config(config: Any) -> MemoryConfig:
    """A MemoryConfig from a MemoryConfig or a dict of its fields; anything else is a clear CalculatorError."""
    if isinstance(config, MemoryConfig):
        return config
    if not isinstance(config, dict) or not all(isinstance(k, str) for k in config):
        raise CalculatorError(
            "config",
            config,
            "a MemoryConfig or a dict of its fields (string keys)",
            "MemoryConfig 或以字段名（字符串）为键的字典",
        )
    return make_config(**config)


def make_config(**kwargs: Any) -> MemoryConfig:
    """``MemoryConfig(**kwargs)``; kept as a function for callers that build configs from dicts."""
    return MemoryConfig(**kwargs)


def _resolve_shape(cfg: MemoryConfig) -> tuple[ModelShape | None, int, str, list[str], list[str]]:
    """The architecture (or None) and the parameter count, with assumptions made."""
    a_en: list[str] = []
    a_zh: list[str] = []
    shape: ModelShape | None = None
    if cfg.model is not None:
        shape = get_model_shape(cfg.model)
    elif cfg.hf_config is not None:
        shape = shape_from_hf_config(cfg.hf_config)
    if shape is not None:
        _refuse_unmodelled(cfg, shape)
        if shape.is_moe:
            n, act = count_params(shape), active_params(shape)
            no_emb = (act - shape.vocab_size * shape.hidden_size) / 1e9
            a_en.append(
                f"mixture of experts: {n / 1e9:.2f}B parameters in total (all {shape.num_experts} experts are "
                f"stored, receive gradients and have optimizer states), {act / 1e9:.2f}B active per token "
                f"({shape.experts_per_token} experts; {no_emb:.2f}B without the token-embedding table); "
                "activations follow the active experts"
            )
            a_zh.append(
                f"混合专家模型：共 {n / 1e9:.2f}B 参数（全部 {shape.num_experts} 个专家都要存储、都有梯度和优化器状态），"
                f"每个 token 激活 {act / 1e9:.2f}B（{shape.experts_per_token} 个专家；不计词嵌入表为 {no_emb:.2f}B）；"
                "激活显存按被激活的专家计算"
            )
        return shape, count_params(shape), shape.name, a_en, a_zh
    n = int(positive_float("num_params", cfg.num_params, maximum=MAX_PARAMS, minimum_exclusive=0))
    if n < 1:
        raise CalculatorError("num_params", cfg.num_params, "at least 1 parameter", "至少 1 个参数")
    if cfg.hidden_size and cfg.num_layers:
        h = positive_int("hidden_size", cfg.hidden_size, maximum=10**6)
        layers = positive_int("num_layers", cfg.num_layers, maximum=10**5)
        heads = positive_int("num_attention_heads", cfg.num_attention_heads or max(1, h // 128), maximum=10**5)
        vocab = positive_int("vocab_size", cfg.vocab_size or 32000, maximum=10**8)
        if cfg.num_attention_heads is None:
            a_en.append(f"attention heads assumed {heads} (head size 128)")
            a_zh.append(f"注意力头数假定为 {heads}（每头 128 维）")
        if cfg.vocab_size is None:
            a_en.append("vocabulary assumed 32,000 tokens")
            a_zh.append("词表大小假定为 32,000")
        shape = ModelShape(
            name=f"{n / 1e9:g}B",
            hidden_size=h,
            num_layers=layers,
            num_attention_heads=heads,
            intermediate_size=4 * h,
            vocab_size=vocab,
            mlp="plain",
        )
        return shape, n, shape.name, a_en, a_zh
    return None, n, f"{n / 1e9:g}B params", a_en, a_zh


def _refuse_unmodelled(cfg: MemoryConfig, shape: ModelShape) -> None:
    """Multi-head latent attention (DeepSeek-V2/V3) is measured for full fine-tunes in 16-bit / fp32 weights only:
    LoRA/QLoRA adapters on its q_a/q_b/kv_a/kv_b projections and autocast's fp32 extras are not, so those
    setups get a clear refusal instead of a guessed number."""
    if not shape.is_mla:
        return
    if cfg.finetune != "full":
        raise CalculatorError(
            "finetune",
            cfg.finetune,
            "full (DeepSeek-V2/V3 multi-head latent attention)",
            "full（DeepSeek-V2/V3 多头潜在注意力）",
            reason_en=f"{shape.name}: {cfg.finetune} on multi-head latent attention (q_a/q_b/kv_a/kv_b projections) "
            "is not modelled yet; a number would be a guess. Full fine-tuning is modelled.",
            reason_zh=f"{shape.name}：多头潜在注意力（q_a/q_b/kv_a/kv_b 投影）上的 {cfg.finetune} 尚未建模，"
            "给出的数字只能是猜测。全参数微调已建模。",
        )
    if cfg.precision.startswith("amp-"):
        raise CalculatorError(
            "precision",
            cfg.precision,
            "fp32, fp16-mixed, bf16-mixed or bf16 (DeepSeek-V2/V3)",
            "fp32、fp16-mixed、bf16-mixed 或 bf16（DeepSeek-V2/V3）",
            reason_en=f"{shape.name}: torch.autocast's fp32 extras are not measured for multi-head latent attention; "
            "a number would be a guess. DeepSpeed/FSDP-style bf16-mixed is modelled.",
            reason_zh=f"{shape.name}：多头潜在注意力在 torch.autocast 下额外的 fp32 张量尚未实测，给出的数字只能是猜测。"
            "bf16-mixed（DeepSpeed/FSDP 方式）已建模。",
        )


def _lora_trainable(shape: ModelShape | None, n: int, rank: int, modules: list[str]) -> int:
    """LoRA adds r·(in + out) parameters per adapted matrix (Hu et al. 2021)."""
    if shape is None:
        h, layers, inter = 4096, max(1, round(n / (12 * 4096**2))), 4 * 4096
        kv = h
    else:
        h, layers, inter = shape.hidden_size, shape.total_layers, shape.intermediate_size
        kv = shape.kv_heads * shape.dim_per_head
    inner = h if shape is None else shape.num_attention_heads * shape.dim_per_head
    dims = {
        "q_proj": (h, inner),
        "k_proj": (h, kv),
        "v_proj": (h, kv),
        "o_proj": (inner, h),
        "gate_proj": (h, inter),
        "up_proj": (h, inter),
        "down_proj": (inter, h),
    }
    if shape is not None and shape.mlp == "plain":
        dims["gate_proj"] = (0, 0)  # plain MLPs have no gate matrix
    return layers * sum(rank * (dims[m][0] + dims[m][1]) for m in modules)


def _state_bytes(cfg: MemoryConfig, shape: ModelShape | None, n: int) -> tuple[dict[str, float], int, float, float]:
    """Bytes per parameter for (weights, gradients, optimizer) and the trainable count.

    Returns (bytes_per_param, trainable, frozen_weight_bytes, adafactor_state_bytes).
    """
    p = cfg.precision
    if p == "fp32":
        w, g, master = 4.0, 4.0, 0.0
    elif p.startswith("amp-"):
        w, g, master = 6.0, 4.0, 0.0  # fp32 weights + a 16-bit copy for the forward (HF docs)
    elif p.endswith("-mixed"):
        w, g, master = 2.0, 2.0, 4.0  # ZeRO paper: 16-bit weights/grads, fp32 master in the optimizer
    else:
        w, g, master = 2.0, 2.0, 0.0  # pure bf16
    table = _OPTIMIZER_STATE_BYTES_BF16 if p == "bf16" else _OPTIMIZER_STATE_BYTES
    opt = float(table.get(cfg.optimizer, 0.0)) + master
    trainable = n
    frozen = 0.0
    if cfg.finetune != "full":
        trainable = _lora_trainable(shape, n, cfg.lora_rank, cfg.lora_target_modules)
        base = n
        if cfg.finetune == "qlora":
            # NF4: 4 bits + an fp32 absmax per 64 weights (4.5 bits), or with double quantisation an 8-bit absmax
            # per 64 and an fp32 one per 256 of those (4.127 bits) (Dettmers et al. 2023); embeddings, LM head and
            # norms stay 16-bit.
            kept = n - (block_params(shape) if shape else int(n * 0.95))
            if cfg.qlora_lm_head_4bit and shape is not None and not shape.tie_word_embeddings:
                kept -= shape.vocab_size * shape.hidden_size  # the LM head is quantised with the blocks
            bits = 4.127 if cfg.qlora_double_quant else 4.5
            frozen = (n - kept) * (bits / 8) + kept * 2
        elif cfg.lora_int8_base:
            # LLM.int8(): 1 byte per block Linear weight, everything else 16-bit (transformers' bitsandbytes test
            # of bloom-1b7: fp16 / 8-bit footprint 1.540025, tests/test_lora_int8_units.py)
            quantised = block_linear_weights(shape) if shape else int(n * 0.95)
            frozen = quantised * 1.0 + (n - quantised) * 2.0
        else:
            frozen = base * (4.0 if p == "fp32" else 2.0)
        # Adapters train in fp32 (PEFT default), with the chosen optimizer.
        w, g = 4.0, 4.0
        opt = float(_OPTIMIZER_STATE_BYTES.get(cfg.optimizer, 0.0))
    adafactor = 0.0
    if cfg.optimizer == "adafactor":
        # Factored second moment: one row and one column vector per matrix (Shazeer & Stern 2018).
        h = shape.hidden_size if shape else 4096
        adafactor = 4.0 * 2 * trainable / h
    return {"weights": w, "gradients": g, "optimizer_states": opt}, trainable, frozen, adafactor


def _comm_buffers(cfg: MemoryConfig, grad_bytes_full: int, largest_layer: int) -> dict[str, int]:
    """Communication buffers that scale with the config, not with the batch."""
    out: dict[str, int] = {}
    if cfg.zero_stage == 0 and cfg.world_size > 1:
        # DDP's reducer keeps flat buckets the size of all gradients unless gradient_as_bucket_view=True.
        out["ddp_gradient_buckets"] = grad_bytes_full
    elif cfg.zero_stage in (1, 2) and cfg.world_size > 1:
        factor = 4.5 if cfg.overlap_comm else 1.0  # HF DeepSpeed docs: overlap_comm uses 4.5x the bucket sizes
        out["zero_buckets"] = int(2 * (cfg.reduce_bucket_size + cfg.allgather_bucket_size) * factor)
    elif cfg.zero_stage == 3:
        out["zero3_gathered_layer"] = 2 * largest_layer
        if cfg.world_size > 1:
            out["zero3_reduce_bucket"] = int(2 * cfg.reduce_bucket_size)
    return out


def _frozen_block_bytes(cfg: MemoryConfig, shape: ModelShape | None, n: int, frozen: float) -> float:
    """Bytes of the frozen weights inside the transformer blocks (where LoRA puts its adapters); the embeddings,
    final norm and LM head form FSDP units of their own with no adapter, so they never get a gradient."""
    if shape is None:
        return frozen
    in_blocks = block_params(shape)
    if cfg.finetune == "qlora":
        return in_blocks * (4.127 if cfg.qlora_double_quant else 4.5) / 8
    if cfg.lora_int8_base:
        linear = block_linear_weights(shape)
        return linear * 1.0 + (in_blocks - linear) * 2.0
    return frozen * in_blocks / n


def _fsdp_states(
    cfg: MemoryConfig,
    bpp: dict[str, float],
    trainable: float,
    frozen: float,
    adafactor: float,
    largest_layer: int,
    gpus_per_node: int,
    frozen_in_blocks: float,
) -> tuple[float, float, float, float, dict[str, int], int]:
    """Per-GPU (weights, sharded gradients, optimizer, CPU bytes, buffers, no_sync gradients) under PyTorch FSDP.

    FSDP keeps each unit's parameters as a flat sharded tensor in the dtype the model was loaded in (fp32 for
    the ``amp-*`` / fp32 regimes; its MixedPrecision casts a gathered unit to 16 bits for compute), gradients
    sharded in that dtype, and the optimizer states of its shard (PyTorch FSDP docs,
    https://pytorch.org/docs/stable/fsdp.html, v2.x). While a unit computes, its full parameters are
    all-gathered; with the default ``backward_prefetch=BACKWARD_PRE`` the next unit's are gathered too, and
    a unit's unsharded gradient exists until its reduce-scatter: 3 × the largest unit in the compute dtype
    (HF auto-wrap makes each transformer block a unit). ``shard_grad_op`` keeps the gathered 16-bit
    parameters of every unit from forward to backward. With GA and ``no_sync()`` (Accelerate's default,
    ``sync_each_batch=False``) gradients accumulate unsharded (FSDP docs, ``no_sync``): the last element
    returned, the unsharded gradient bytes every GA >= 2 window holds (0 when no_sync cannot apply). They take
    the place of the sharded gradients, not their sum: after ``zero_grad(set_to_none=True)`` no sharded gradient
    exists, and the synchronising micro-step reduce-scatters each unit's unsharded gradient into its shard and
    frees it. With ``fsdp_frozen_in_trainable_units`` a unit's frozen weights get gradients too (its flat
    parameter requires one), in the dtype they are stored in.
    """
    compute = 4 if cfg.precision == "fp32" else 2
    w_bytes = bpp["weights"] - (2 if cfg.precision.startswith("amp-") else 0)  # the 16-bit copy is per gathered unit
    shard = {
        "full_shard": cfg.world_size,
        "shard_grad_op": cfg.world_size,
        "hybrid_shard": gpus_per_node,
        "no_shard": 1,
    }[cfg.fsdp]
    weights = (frozen + trainable * w_bytes) / shard
    grads_full = trainable * bpp["gradients"]
    if cfg.finetune != "full" and cfg.fsdp_frozen_in_trainable_units:
        grads_full += frozen_in_blocks  # the frozen part of each block's flat-parameter gradient, weights' dtype
    grads = grads_full / shard
    optim = (trainable * bpp["optimizer_states"] + adafactor) / shard
    buffers: dict[str, int] = {}
    if cfg.fsdp in ("full_shard", "hybrid_shard") and shard > 1:
        buffers["fsdp_gathered_units"] = 3 * compute * largest_layer
    elif cfg.fsdp == "shard_grad_op" and shard > 1:
        buffers["fsdp_gathered_params"] = int(compute * (frozen / 2 + trainable))  # every unit, fwd -> bwd
    no_sync = int(grads_full) if not cfg.fsdp_sync_each_batch and shard > 1 else 0
    cpu = 0.0
    if cfg.fsdp_cpu_offload:
        cpu, weights, grads, optim = weights + grads + optim, 0.0, 0.0, 0.0
    return weights, grads, optim, cpu, buffers, no_sync


def _gradients_live_in_forward(cfg: MemoryConfig) -> bool:
    """Whether the GPU gradient buffer exists while a micro-batch's activations are alive.

    * No ZeRO (plain PyTorch, DDP, HF Trainer/Accelerate): ``optimizer.zero_grad(set_to_none=True)``
      frees every ``.grad`` after the step, so at GA=1 the forward pass runs without gradients and
      backward creates them while it frees activations. At GA >= 2 the gradients accumulated by the
      previous micro-batches are alive during the next forward. ``set_to_none=False`` keeps zeroed
      buffers alive at GA=1 too. Measured on tiny models: tests/test_memory_ga_set_to_none.py.
    * ZeRO-1/2 (DeepSpeed ``runtime/zero/stage_1_and_2.py``, v0.19.6, commit edaa7221): ``step()``
      frees the 16-bit gradients of every parameter (``free_grad_in_param_list``,
      ``averaged_gradients[i] = None``) and the contiguous partition buffer ``grads_in_partition`` is
      allocated lazily by the first backward (``copy_grads_in_partition``) and released at the end of
      each backward (``_release_ipg_buffers``) once its views are handed on; so the same rule holds
      whatever the user's ``set_to_none`` (the engine, not the user, zeroes gradients).
    * ZeRO-3 (``runtime/zero/stage3.py``, same version): ``grad_partitions_flat_buffer`` is a
      ``torch.zeros`` allocated once at initialisation and kept for the whole run: always alive.
    """
    if cfg.zero_stage == 3 or cfg.optimizer_in_backward:  # in backward: one gradient beside the activations
        return True
    if cfg.gradient_accumulation_steps >= 2:
        return True
    return cfg.zero_stage == 0 and not cfg.zero_grad_set_to_none


def _peak(fixed_without_grads: int, grads: int, act: int, grads_live: bool, step_extra: int = 0) -> int:
    """Peak of model states + activations: gradients and activations coexist only when ``grads_live``.

    Otherwise backward creates gradients as it frees activations, and the peak is the larger of
    the two (measured: the GA=1 peak is the forward's or the optimizer step's, never their sum).
    ``step_extra``: what the optimizer step holds beside the gradients, relative to ``fixed``
    (foreach AdamW's sqrt(exp_avg_sq), less autocast's 16-bit weight copies, gone by then); no
    activation is alive at the step.
    """
    return fixed_without_grads + max((grads if grads_live else 0) + act, grads + step_extra)


def _step_extra(cfg: MemoryConfig, bpp: dict[str, float], optim: float, trainable: float) -> tuple[int, int]:
    """(allocated by, freed before) the optimizer step, relative to the forward's model states beside the gradients.

    + torch.optim.AdamW's foreach step builds sqrt(exp_avg_sq) for all parameters at once: one copy of the
      second moment (its share of ``optim``, the per-GPU optimizer bytes, which also hold the fp32 master
      weights under mixed precision). DeepSpeed steps with its own fused kernels under ZeRO; offloaded states
      step on the CPU (``optim`` is 0).
    - autocast's 16-bit weight copies (counted in the weights for the forward) are saved by each linear for its
      backward and freed with it: none is alive at the step (measured on an H200, 1.1B: fp32 weights, gradients,
      Adam states and the foreach buffer, 20 B per parameter; tests/test_gpu_measured.py).
    """
    foreach = copies = 0.0
    if cfg.optimizer == "adamw" and cfg.adamw_kernel == "foreach" and not cfg.zero_stage and bpp["optimizer_states"]:
        full_bf16 = cfg.precision == "bf16" and cfg.finetune == "full"
        v_bytes = (_OPTIMIZER_STATE_BYTES_BF16 if full_bf16 else _OPTIMIZER_STATE_BYTES)["adamw"] / 2
        foreach = optim * v_bytes / bpp["optimizer_states"]
    if cfg.precision.startswith("amp-") and cfg.finetune == "full" and cfg.fsdp == "none":
        copies = 2 * trainable / (cfg.world_size if cfg.zero_stage == 3 else 1)
    return int(foreach), int(copies)


def _validate_numbers(cfg: MemoryConfig) -> None:
    positive_int("train_micro_batch_size_per_gpu", cfg.train_micro_batch_size_per_gpu, maximum=MAX_MICRO)
    positive_int("gradient_accumulation_steps", cfg.gradient_accumulation_steps, maximum=10**9)
    positive_int("seq_len", cfg.seq_len, maximum=MAX_SEQ)
    positive_int("world_size", cfg.world_size, maximum=10**6)
    positive_int("num_nodes", cfg.num_nodes, maximum=10**5)
    positive_int("pipeline_parallel_size", cfg.pipeline_parallel_size, maximum=10**4)
    positive_int("lora_rank", cfg.lora_rank, maximum=65536)
    positive_float("cuda_context_gb", cfg.cuda_context_gb, maximum=64, minimum_exclusive=-1e-9)
    positive_float("allocator_slack_fraction", cfg.allocator_slack_fraction, maximum=10, minimum_exclusive=-1e-9)
    positive_float("reduce_bucket_size", cfg.reduce_bucket_size, maximum=1e12)
    positive_float("allgather_bucket_size", cfg.allgather_bucket_size, maximum=1e12)
    if cfg.gpu_memory_gb is not None:
        positive_float("gpu_memory_gb", cfg.gpu_memory_gb, maximum=100_000)


def _visual_tokens(cfg: MemoryConfig, shape: ModelShape | None) -> tuple[int, int, str, str]:
    """(language-model tokens, ViT positions) the stated images add to one sample, and the rule in en / zh; zeros
    when the model is no VL preset or no image is stated."""
    if shape is None or shape.vision is None or not cfg.images_per_sample:
        return 0, 0, "", ""
    one = image_tokens(shape.vision, cfg.image_height, cfg.image_width, cfg.image_max_pixels)
    k = cfg.images_per_sample
    return k * one.llm_tokens, k * one.vit_tokens, one.rule_en, one.rule_zh


def _vision_trained(cfg: MemoryConfig, shape: ModelShape | None) -> bool:
    return shape is not None and shape.vision is not None and cfg.finetune == "full" and not cfg.freeze_vision_tower


def _activations(cfg: MemoryConfig, shape: ModelShape | None, micro: int) -> tuple[int | None, dict[str, int], int]:
    """(activation bytes at peak, their parts, what full checkpointing's re-materialised block and the logits would
    have added had they been alive together: the assumptions say it)."""
    if shape is None:
        return None, {}, 0
    llm_extra, vit_tokens, _, _ = _visual_tokens(cfg, shape)
    if llm_extra and not cfg.visual_tokens_in_seq_len:  # the visual tokens stand in the sequence beside the text
        cfg = cfg.model_copy(update={"seq_len": cfg.seq_len + llm_extra})
    bpv = 4 if cfg.precision == "fp32" else 2
    # Frozen base: frozen linears' inputs are not saved (QLoRA: same activations) -- unless FSDP puts the frozen
    # weights in a flat parameter that requires a gradient (fsdp_frozen_in_trainable_units): then they are saved.
    lora = cfg.finetune != "full" and not (cfg.fsdp != "none" and cfg.fsdp_frozen_in_trainable_units)
    act = activation_bytes(
        shape,
        micro,
        cfg.seq_len,
        bytes_per_value=bpv,
        flash_attention=cfg.flash_attention,
        checkpointing=cfg.gradient_checkpointing,
        trainable_linears=frozenset(cfg.lora_target_modules) if lora else None,
        lora_rank=cfg.lora_rank,
        # PEFT keeps adapters in fp32 and casts each adapter's input to fp32: one copy per
        # adapter on a 16-bit model (measured in tests/test_activations_measured.py).
        lora_input_copy=lora and bpv == 2,
        lora_bytes=4,
    )
    total, layers = act.total, act.layers
    embeddings, amp_logits, amp_per_layer = act.embeddings, 0, 0
    if _autocast_modelled(cfg, shape):
        # torch.autocast keeps an fp32 residual stream, fp32 norm tensors and one 16-bit copy of the input per
        # linear (calculators/autocast.py, measured in tests/test_amp_measured.py); CUDA's op lists.
        amp = autocast_extra_bytes(
            shape,
            micro,
            cfg.seq_len,
            flash_attention=cfg.flash_attention,
            checkpointing=cfg.gradient_checkpointing,
        )
        layers += amp.layers
        embeddings += amp.embeddings
        amp_logits = amp.logits
        amp_per_layer = sum(amp.terms.values())
        total += amp.total
    if (cfg.finetune == "qlora" and cfg.bitsandbytes_before_0_43_2) or cfg.lora_int8_base:
        # One saved input per group of 4-bit (bitsandbytes < 0.43.2) or 8-bit (MatMul8bitLt, every version from
        # 0.39) linears sharing it (Q/K/V, output projection, gate/up, down); the first block's Q/K/V input needs
        # no gradient and is not saved.
        inner = shape.num_attention_heads * shape.dim_per_head
        per_layer = bpv * micro * cfg.seq_len * (2 * shape.hidden_size + inner + shape.intermediate_size)
        kept = per_layer * shape.total_layers - bpv * micro * cfg.seq_len * shape.hidden_size
        layers += kept
        total += kept
    logits = act.logits
    if shape.architecture == "decoder":
        # activation_bytes counts what the loss *saves* ((B + 4)·b·s·V: the logits and the fp32 log-softmax).
        # The peak comes at the start of backward, when the fp32 log-softmax output, its fp32 gradient and the
        # fp32 gradient of the logits coexist: 12 B per logit (+ B while the caller keeps the logits), measured
        # with transformers 5.23 in tests/test_memory_logits.py. (Versions that built a shifted contiguous fp32
        # copy, `shift_logits = logits[..., :-1, :].contiguous()`, keep 4 B more.)
        impl = cfg.loss_implementation
        per_logit = {
            "hf": 12,
            "hf-keep-outputs": 12 + bpv,
            "chunked": 0,
            "lm-head-chunks": 2 * bpv,
            "ce-chunks": 3 * bpv,
        }[impl]
        n_logits = micro * cfg.seq_len * shape.vocab_size
        logits = act.logits + amp_logits - (bpv + 4) * n_logits + per_logit * n_logits
        if impl == "lm-head-chunks":  # the gradient of one chunk's log-softmax output and of its logits
            logits += 2 * bpv * micro * min(128, cfg.seq_len) * shape.vocab_size
        if cfg.finetune == "qlora" and cfg.qlora_lm_head_4bit and not shape.tie_word_embeddings:
            logits += 2 * 2 * shape.vocab_size * shape.hidden_size  # fp16 dequantised head + its compute-dtype cast
        total = total - act.logits - amp_logits + logits
    else:
        logits += amp_logits
    pp = cfg.pipeline_parallel_size
    if pp > 1:
        # 1F1B: the first stage holds activations of up to `pp` in-flight micro-batches (Narayanan et al. 2021).
        in_flight = min(cfg.gradient_accumulation_steps, pp)
        layers = layers // pp * in_flight
        total = layers + embeddings + logits
    details = {"activations_layers": layers, "activations_embeddings": embeddings, "activations_logits": logits}
    if cfg.activation_offloading:
        # torchtune OffloadActivations: the blocks' saved tensors live in CPU memory; the GPU holds the block being
        # re-materialised / brought back in backward (plus, with full checkpointing, that block's input).
        bpv_in = bpv * micro * cfg.seq_len * shape.hidden_size
        in_flight = act.per_layer + amp_per_layer + (bpv_in if cfg.gradient_checkpointing == "full" else 0)
        on_gpu = min(layers, in_flight)
        details["activations_offloaded_to_cpu"] = layers - on_gpu
        details["activations_layers"] = on_gpu
        total -= layers - on_gpu
    overlap = 0
    if act.recompute:
        # Full checkpointing re-materialises one block during its backward, which runs after the loss's and the LM
        # head's backward have freed the logits and their gradients: the two are never alive together, so the peak
        # holds the larger (measured on an H200, Llama-2-7B shape, LoRA bf16 seq 2048: checkpointed layer inputs +
        # 12 B per logit, exactly; bench/results/gpu_check_h200_7b.json, tests/test_gpu_measured.py).
        overlap = min(act.recompute + amp_per_layer, details["activations_layers"], logits)
        details["activations_layers"] -= overlap
        total -= overlap
    if vit_tokens and _vision_trained(cfg, shape) and shape.vision is not None:
        vit = vit_activation_bytes(shape.vision, micro * vit_tokens, bpv, cfg.gradient_checkpointing)
        details["activations_vision_tower"] = vit
        total += vit
    return total, details, overlap


def _vision_states(
    cfg: MemoryConfig, shape: ModelShape, trainable: int, frozen: float, a_en: list[str], a_zh: list[str]
) -> tuple[int, float]:
    """A VL preset's vision tower and projector: frozen parts leave the trainable count for the frozen weights (16-bit,
    fp32 under fp32 / autocast, where the model is loaded in fp32); the assumptions say what was counted."""
    vis = shape.vision
    assert vis is not None
    tower, proj = vision_encoder_params(vis), vision_params(vis) - vision_encoder_params(vis)
    if cfg.finetune == "full":
        frozen_params = (tower if cfg.freeze_vision_tower else 0) + (proj if cfg.freeze_projector else 0)
        trainable -= frozen_params
        frozen += frozen_params * (4 if cfg.precision == "fp32" or cfg.precision.startswith("amp-") else 2)
    state_en = (
        "frozen"
        if cfg.finetune != "full" or cfg.freeze_vision_tower
        else "trained (gradients, optimizer states and its activations counted)"
    )
    state_zh = (
        "冻结" if cfg.finetune != "full" or cfg.freeze_vision_tower else "参与训练（计入梯度、优化器状态和其激活）"
    )
    proj_en = "frozen" if cfg.finetune != "full" or cfg.freeze_projector else "trained"
    proj_zh = "冻结" if cfg.finetune != "full" or cfg.freeze_projector else "训练"
    a_en.append(
        f"vision tower {tower / 1e6:,.0f}M parameters, {state_en}; projector {proj / 1e6:,.0f}M, {proj_en} "
        "(LLaMA-Factory freeze_vision_tower / freeze_multi_modal_projector and ms-swift freeze_vit / freeze_aligner "
        "default to True)"
    )
    a_zh.append(
        f"视觉编码器 {tower / 1e6:,.0f}M 参数，{state_zh}；投影层 {proj / 1e6:,.0f}M，{proj_zh}（LLaMA-Factory 的 "
        "freeze_vision_tower / freeze_multi_modal_projector 与 ms-swift 的 freeze_vit / freeze_aligner 默认均为 True）"
    )
    if cfg.finetune != "full" and not cfg.freeze_vision_tower:
        # LLaMA-Factory / ms-swift then put adapters on the ViT's linears too: their few parameters and the ViT's
        # activations are not modelled here
        a_en.append(
            "LoRA on the vision tower (freeze_vision_tower / freeze_vit off) is not modelled: its adapters and its "
            "activations are missing from this estimate"
        )
        a_zh.append("视觉编码器上的 LoRA（关闭 freeze_vision_tower / freeze_vit）未建模：其适配器和激活不在本估算内")
    llm_extra, vit_tokens, rule_en, rule_zh = _visual_tokens(cfg, shape)
    if llm_extra and cfg.visual_tokens_in_seq_len:
        a_en.append(
            f"images: {cfg.images_per_sample} per sample, {rule_en}: {llm_extra:,} visual tokens counted within the "
            f"sequence length {cfg.seq_len:,}"
            + (" (more than the whole sequence length)" if llm_extra > cfg.seq_len else "")
        )
        a_zh.append(
            f"图像：每个样本 {cfg.images_per_sample} 张，{rule_zh}：{llm_extra:,} 个视觉 token 算在序列长度 {cfg.seq_len:,} 之内"
            + ("（超过了整个序列长度）" if llm_extra > cfg.seq_len else "")
        )
    elif llm_extra:
        a_en.append(
            f"images: {cfg.images_per_sample} per sample, {rule_en}: {llm_extra:,} visual tokens added to the "
            f"{cfg.seq_len:,} text tokens ({cfg.seq_len + llm_extra:,} in the language model)"
        )
        a_zh.append(
            f"图像：每个样本 {cfg.images_per_sample} 张，{rule_zh}：{llm_extra:,} 个视觉 token 加在 {cfg.seq_len:,} 个文本 "
            f"token 上（语言模型序列共 {cfg.seq_len + llm_extra:,}）"
        )
    else:
        a_en.append(
            "no image count given: the images' visual tokens are not in the sequence (Qwen2-VL: (H/14)·(W/14)/4 per "
            "image, LLaVA-1.5: 576, InternVL2: 256 per 448-px tile); give images_per_sample and the image size"
        )
        a_zh.append(
            "未给出图像数量：视觉 token 不在序列内（Qwen2-VL 每张图 (H/14)·(W/14)/4 个，LLaVA-1.5 为 576 个，InternVL2 每个 "
            "448 像素切片 256 个）；请给出每个样本的图像数和图像尺寸"
        )
    return trainable, frozen


def _largest_trainable_param(cfg: MemoryConfig, shape: ModelShape | None, n: int) -> int:
    """Elements of the largest single trainable parameter tensor (the one gradient optimizer-in-backward keeps)."""
    if shape is None:
        return int(n / 32)  # no shape: a coarse guess, said in the assumptions
    h, i = shape.hidden_size, shape.intermediate_size
    if cfg.finetune != "full":
        return cfg.lora_rank * max(h, i)  # LoRA B (or A) matrix of the widest adapted linear
    inner = shape.num_attention_heads * shape.dim_per_head
    mats = [shape.vocab_size * h, h * i, h * inner]
    if shape.mlp == "plain" and shape.architecture == "decoder" and shape.norm == "layernorm":
        mats.append(3 * h * h)  # GPT-2's fused c_attn
    if shape.is_moe:
        mats.append(shape.num_experts * 2 * shape.expert_intermediate_size * h)  # fused expert gate/up tensor
    if shape.is_mla:  # q_proj / q_b_proj and kv_b_proj of multi-head latent attention
        a = shape.num_attention_heads
        mats.append((shape.q_lora_rank or h) * a * (shape.qk_nope_head_dim + shape.qk_rope_head_dim))
        mats.append(shape.kv_lora_rank * a * (shape.qk_nope_head_dim + shape.v_head_dim))
    return max(mats)


def _autocast_modelled(cfg: MemoryConfig, shape: ModelShape) -> bool:
    """Whether autocast's fp32 terms are added: ``amp-*`` full fine-tunes of decoder / encoder models."""
    return cfg.precision.startswith("amp-") and cfg.finetune == "full" and shape.architecture != "encoder-decoder"


def estimate_memory(config: MemoryConfig | dict[str, Any]) -> MemoryEstimate:
    """Estimate per-GPU (and offloaded CPU) memory for one training setup.

    Accepts a MemoryConfig or a dict of its fields. Raises CalculatorError
    (a ValueError) naming the field, the bad value and what is accepted.
    """
    cfg = as_config(config)
    _validate_numbers(cfg)
    shape, n, model_name, a_en, a_zh = _resolve_shape(cfg)
    bpp, trainable, frozen, adafactor = _state_bytes(cfg, shape, n)
    if shape is not None and shape.vision is not None:
        trainable, frozen = _vision_states(cfg, shape, trainable, frozen, a_en, a_zh)
    ws, stage = cfg.world_size, cfg.zero_stage
    pp = cfg.pipeline_parallel_size
    n_stage = n / pp  # each pipeline stage holds 1/pp of the layers
    trainable_stage = trainable / pp

    weights_full = frozen / pp + trainable_stage * bpp["weights"]
    grads_full = trainable_stage * bpp["gradients"]
    optim_full = trainable_stage * bpp["optimizer_states"] + adafactor / pp
    weights = weights_full / ws if stage == 3 else weights_full
    grads = grads_full / ws if stage >= 2 else grads_full
    optim = optim_full / ws if stage >= 1 else optim_full

    cpu_per_gpu = 0.0
    notes_en: list[str] = []
    notes_zh: list[str] = []
    largest_layer = max(layer_params(shape), shape.vocab_size * shape.hidden_size) if shape else int(n_stage / 32)
    if cfg.offload_optimizer:
        cpu_per_gpu += optim
        optim = 0.0
        if stage >= 2:
            cpu_per_gpu += grads_full / ws * (4 / bpp["gradients"]) if bpp["gradients"] else 0  # fp32 grad partition
            grads = 0.0
            if cfg.gradient_accumulation_steps > 1:
                notes_en.append(
                    "With offload and GA>1 DeepSpeed also keeps a pinned CPU buffer of accumulated gradients."
                )
                notes_zh.append("开启 offload 且 GA>1 时，DeepSpeed 还会在 CPU 上保留一份累积梯度的锁页缓冲区。")
    if cfg.offload_param:
        cpu_per_gpu += weights
        weights = 2.0 * largest_layer  # the layer being gathered for compute
    gpus_per_node = ws // cfg.num_nodes
    fsdp_buffers: dict[str, int] = {}
    fsdp_nosync = 0  # FSDP no_sync(): unsharded accumulated gradients at any GA >= 2
    if cfg.fsdp != "none":
        weights, grads, optim, cpu_fsdp, fsdp_buffers, fsdp_nosync = _fsdp_states(
            cfg,
            bpp,
            trainable,
            frozen,
            adafactor,
            largest_layer,
            gpus_per_node,
            _frozen_block_bytes(cfg, shape, n, frozen),
        )
        cpu_per_gpu += cpu_fsdp
    if cfg.optimizer_in_backward:
        # Each gradient is freed by its parameter's update inside backward: at most one parameter's gradient is
        # alive (measured: the largest, to the byte; tests/test_memory_offload_inbwd.py).
        grads = bpp["gradients"] * _largest_trainable_param(cfg, shape, n)
    grads_ga1 = grads  # what GA=1 holds; GA >= 2 under no_sync holds the unsharded gradients instead
    grads_ga_n = fsdp_nosync or grads
    if cfg.gradient_accumulation_steps >= 2:
        grads = grads_ga_n

    act, details, overlap = _activations(cfg, shape, cfg.train_micro_batch_size_per_gpu)
    cpu_per_gpu += details.get("activations_offloaded_to_cpu", 0)
    comm = _comm_buffers(cfg, int(grads_full), largest_layer) if cfg.fsdp == "none" else fsdp_buffers
    details.update(comm)
    if fsdp_nosync and cfg.gradient_accumulation_steps >= 2:
        details["fsdp_no_sync_unsharded_grads"] = fsdp_nosync  # counted as the gradients, not in 'other'
    details["cuda_context"] = int(cfg.cuda_context_gb * GiB)
    other = sum(comm.values()) + details["cuda_context"]

    gpu_name, capacity = None, None
    if cfg.gpu is not None:
        gpu = get_gpu(cfg.gpu)
        gpu_name, capacity = gpu.name, int(gpu.memory_gib * GiB)
        if cfg.precision in ("amp-bf16", "bf16-mixed", "bf16") and not gpu.bf16:
            notes_en.append(
                f"{gpu.name} has no native bf16 (needs compute capability 8.0+): use fp16 with loss scaling."
            )
            notes_zh.append(f"{gpu.name} 不支持原生 bf16（需要算力 8.0+）：请用 fp16 配合 loss scaling。")
    if cfg.gpu_memory_gb is not None:
        gpu_name = gpu_name or f"{cfg.gpu_memory_gb:g} GiB GPU"
        capacity = int(cfg.gpu_memory_gb * GiB)

    fixed = int(weights) + int(optim) + other  # everything but gradients and activations
    grads_live = _gradients_live_in_forward(cfg)
    step_alloc, step_freed = _step_extra(cfg, bpp, optim, trainable_stage)
    if step_alloc:
        details["optimizer_step_temporary"] = step_alloc
    step = step_alloc - step_freed
    total = None if act is None else _peak(fixed, int(grads), act, grads_live, step)
    # What going from GA=1 to GA>=2 adds at peak (0 when the gradients are alive at GA=1 anyway).
    ga1 = cfg.model_copy(update={"gradient_accumulation_steps": 1})
    ga_extra = (
        None
        if act is None
        else (
            _peak(fixed, int(grads_ga_n), act, True, step)
            - _peak(fixed, int(grads_ga1), act, _gradients_live_in_forward(ga1), step)
        )
    )
    fits = headroom = max_micro = None
    if capacity is not None and total is not None:
        headroom = capacity - total
        fits = headroom >= 0
        max_micro = _max_micro_batch(cfg, shape, fixed, int(grads), grads_live, capacity, step)
    if act is None:
        notes_en.append(
            "Activations unknown: only num_params was given. Add hidden_size and num_layers (or a preset / config.json) to estimate them."
        )
        notes_zh.append(
            "激活显存未知：只给了参数量。补充 hidden_size 和 num_layers（或预设名 / config.json）即可估算。"
        )
    if overlap:
        a_en.append(
            "full checkpointing: the block re-materialised in backward is never alive together with the loss's logits, "
            f"so the peak counts the larger of the two ({format_gib(overlap)} less than their sum; measured on an H200)"
        )
        a_zh.append(
            f"完全重计算：反向时重算的那一层激活与损失的 logits 不会同时存在，峰值只计两者中较大者（比两者之和少 {format_gib(overlap)}；H200 实测）"
        )
    if step_alloc:
        at_step = act is not None and grads + step > (grads if grads_live else 0) + act
        a_en.append(
            f"torch.optim.AdamW foreach step: sqrt(exp_avg_sq) for every parameter at once, {format_gib(step_alloc)} "
            "beside the gradients during the step"
            + (
                " (this step is the peak here; fused=True or HF Trainer's adamw_torch_fused avoids it)"
                if at_step
                else ""
            )
        )
        a_zh.append(
            f"torch.optim.AdamW foreach 步：一次为所有参数算 sqrt(exp_avg_sq)，优化器步期间在梯度之外多占 {format_gib(step_alloc)}"
            + ("（此处峰值就在这一步；fused=True 或 HF Trainer 的 adamw_torch_fused 可避免）" if at_step else "")
        )
    if cfg.optimizer_in_backward:
        a_en.append(
            "optimizer step in backward: each gradient is freed right after its parameter's update, so only the "
            "largest parameter's gradient is counted, beside the activations (no gradient accumulation possible)"
        )
        a_zh.append(
            "优化器步骤融合进反向：每个梯度在其参数更新后立即释放，只计最大的单个参数的梯度，与激活同时存在（不能梯度累积）"
        )
    if cfg.activation_offloading and act is not None:
        a_en.append(
            f"activation offloading: {format_gib(details['activations_offloaded_to_cpu'])} of block activations in "
            "pinned CPU memory (in cpu_total); the GPU keeps one block's activations in flight, the output head's "
            "and the loss's (torchtune OffloadActivations)"
        )
        a_zh.append(
            f"激活卸载：{format_gib(details['activations_offloaded_to_cpu'])} 的块激活放在锁页 CPU 内存（计入 cpu_total）；"
            "GPU 上保留一个块的在途激活以及输出头和损失的激活（torchtune OffloadActivations）"
        )
    if cfg.precision.startswith("amp-") and shape is not None:
        if _autocast_modelled(cfg, shape):
            a_en.append(
                "autocast: fp32 residual stream and norm tensors, one 16-bit copy of the input per linear "
                "(CUDA's autocast op lists; measured on CPU within 3%)"
            )
            a_zh.append(
                "autocast：残差流与归一化张量为 fp32，每个线性层各保存一份 16 位输入副本（按 CUDA 的 autocast 算子表；CPU 实测误差 3% 内）"
            )
        else:
            notes_en.append(
                "autocast's fp32 activations are not modelled for LoRA/QLoRA or encoder-decoder models: "
                "activations are counted as pure 16-bit (an underestimate)."
            )
            notes_zh.append(
                "LoRA/QLoRA 或编码器-解码器模型在 autocast 下的 fp32 激活尚未建模：激活按纯 16 位计算（偏低）。"
            )
    if pp > 1:
        notes_en.append(
            f"Pipeline parallelism ({pp} stages): the first stage keeps activations of up to min(GA, {pp}) in-flight micro-batches — the one case where GA raises activation memory."
        )
        notes_zh.append(
            f"流水线并行（{pp} 段）：第一段最多同时保留 min(GA, {pp}) 个在途微批次的激活——这是 GA 会增加激活显存的唯一情形。"
        )
    if stage in (1, 2) and cfg.precision.endswith("-mixed") and cfg.finetune == "full" and not cfg.offload_optimizer:
        notes_en.append(
            "Model states follow the ZeRO paper (2 + 2 + 12 B/param). DeepSpeed's own estimator "
            "(calculators.deepspeed) also counts an fp32 gradient partition: 2Ψ + 18Ψ/N for ZeRO-2."
        )
        notes_zh.append(
            "模型状态按 ZeRO 论文计算（2 + 2 + 12 字节/参数）。DeepSpeed 自带的估算器（calculators.deepspeed）"
            "还计入一份 fp32 梯度分片：ZeRO-2 为 2Ψ + 18Ψ/N。"
        )
    if ws > 1 and stage < 3 and cfg.fsdp in ("none", "no_shard"):
        # (FSDP's other strategies shard the weights the table shows: the note would contradict them)
        scheme = f"ZeRO-{stage}" if cfg.fsdp == "none" else f"FSDP {cfg.fsdp.upper()}"
        notes_en.append(
            f"{scheme}: every one of the {ws} GPUs still holds the full weights; adding GPUs does not pool their memory."
        )
        notes_zh.append(f"{scheme}：{ws} 张卡每张都保存完整权重；加卡不会把显存合并成一个大池子。")

    ga_en, ga_zh = _ga_notes(cfg, ga_extra, int(grads))
    if fsdp_nosync:
        ga_en += (
            f" FSDP: with GA ≥ 2 Accelerate/HF Trainer run the micro-steps under no_sync(), which accumulates "
            f"unsharded gradients ({format_gib(fsdp_nosync)} per GPU, included above); "
            "GradientAccumulationPlugin(sync_each_batch=True) (fsdp_sync_each_batch) keeps them sharded."
        )
        ga_zh += (
            f" FSDP：GA ≥ 2 时 Accelerate/HF Trainer 在 no_sync() 中执行微步，梯度以未分片形式累加（每卡 "
            f"{format_gib(fsdp_nosync)}，已计入上面的差值）；GradientAccumulationPlugin(sync_each_batch=True)"
            "（fsdp_sync_each_batch）可保持分片。"
        )
    if pp > 1:
        ga_en += " Caveat: with pipeline parallelism, up to min(GA, stages) micro-batches are in flight at once."
        ga_zh += " 例外：流水线并行时最多有 min(GA, 段数) 个微批次同时在途。"
    if total is not None:
        a_en.append(
            f"nvidia-smi figure: peak allocated + {cfg.allocator_slack_fraction:.0%} allocator cache/fragmentation "
            f"(an assumption; set allocator_slack_fraction) + {cfg.cuda_context_gb:g} GiB CUDA context"
        )
        a_zh.append(
            f"nvidia-smi 数值 = PyTorch 峰值分配 + {cfg.allocator_slack_fraction:.0%} 的缓存分配器保留/碎片（假设值，"
            f"可设 allocator_slack_fraction）+ {cfg.cuda_context_gb:g} GiB CUDA 上下文"
        )
    if cfg.finetune != "full":
        a_en.append(
            f"{cfg.finetune}: base weights frozen, adapters (rank {cfg.lora_rank} on {', '.join(cfg.lora_target_modules)}) trained in fp32"
        )
        a_zh.append(
            f"{cfg.finetune}：基座权重冻结，适配器（rank {cfg.lora_rank}，作用于 {', '.join(cfg.lora_target_modules)}）以 fp32 训练"
        )
    return MemoryEstimate(
        model_name=model_name,
        num_params=n,
        trainable_params=int(trainable),
        weights=int(weights),
        gradients=int(grads),
        optimizer_states=int(optim),
        activations=act,
        other=other,
        total_per_gpu=total,
        peak_allocated=None if total is None else total - details["cuda_context"],
        nvidia_smi=None
        if total is None
        else int((total - details["cuda_context"]) * (1 + cfg.allocator_slack_fraction)) + details["cuda_context"],
        cpu_total=int(cpu_per_gpu * gpus_per_node),
        gpu_name=gpu_name,
        gpu_capacity=capacity,
        fits=fits,
        headroom=headroom,
        max_micro_batch=max_micro,
        details=details,
        bytes_per_param=bpp,
        gradients_live_during_forward=grads_live,
        ga_extra_over_ga1=ga_extra,
        gradient_accumulation_note_en=ga_en,
        gradient_accumulation_note_zh=ga_zh,
        notes_en=notes_en,
        notes_zh=notes_zh,
        assumptions_en=a_en,
        assumptions_zh=a_zh,
    )


def _ga_notes(cfg: MemoryConfig, ga_extra: int | None, grads: int) -> tuple[str, str]:
    """The gradient-accumulation sentence of every estimate, with the GA=1 vs GA>=2 difference in GiB."""
    ga = cfg.gradient_accumulation_steps
    en = (
        f"gradient_accumulation_steps={ga}: activations do not grow with GA (each micro-batch's activations are "
        "freed after its backward pass) and gradients accumulate in place into one parameter-sized buffer, so "
        "GA=2 and GA=64 need the same memory; the peak is set by the micro batch × sequence length and the model "
        "states, not by the effective batch size."
    )
    zh = (
        f"gradient_accumulation_steps={ga}：激活不随 GA 增长（每个微批次的激活在其反向传播后即释放），梯度原地累加到"
        "一个与参数同大小的缓冲区，所以 GA=2 与 GA=64 显存相同；峰值由微批次 × 序列长度和模型状态决定，而不是有效批次大小。"
    )
    if ga_extra is None:
        return en, zh
    if grads == 0:
        en += " No gradient buffer is kept on the GPU in this setup (offloaded), so GA=1 needs the same."
        zh += " 本配置下 GPU 上不保留梯度缓冲区（已卸载），所以 GA=1 也一样。"
    elif cfg.zero_stage == 3:
        en += " Under ZeRO-3 DeepSpeed keeps its gradient partition buffer allocated all the time, so GA=1 needs the same."
        zh += " ZeRO-3 下 DeepSpeed 的梯度分片缓冲区一直存在，所以 GA=1 也一样。"
    elif cfg.zero_stage == 0 and not cfg.zero_grad_set_to_none:
        en += " With zero_grad(set_to_none=False) the gradient buffer exists at GA=1 too, so GA=1 needs the same."
        zh += " 使用 zero_grad(set_to_none=False) 时梯度缓冲区在 GA=1 也一直存在，所以 GA=1 也一样。"
    else:
        who = (
            "zero_grad(set_to_none=True), the PyTorch ≥ 2.0 and HF Trainer default"
            if cfg.zero_stage == 0
            else f"DeepSpeed ZeRO-{cfg.zero_stage} frees them after each optimizer step"
        )
        who_zh = (
            "zero_grad(set_to_none=True)，PyTorch ≥ 2.0 与 HF Trainer 的默认"
            if cfg.zero_stage == 0
            else f"DeepSpeed ZeRO-{cfg.zero_stage} 在每次优化器更新后释放梯度"
        )
        en += (
            f" One exception, constant in GA: at GA=1 ({who}) no gradients exist during the forward pass, while at "
            f"GA≥2 the accumulated gradients ({format_gib(grads)} here) coexist with the next micro-batch's "
            f"activations, so GA≥2 needs {format_gib(ga_extra)} more than GA=1 in this setup (at most one gradient buffer)."
        )
        zh += (
            f" 唯一的例外与 GA 大小无关：GA=1 时（{who_zh}）前向期间没有梯度；GA≥2 时已累加的梯度（此处 "
            f"{format_gib(grads)}）与下一个微批次的激活同时存在，所以本配置下 GA≥2 比 GA=1 多 {format_gib(ga_extra)}"
            "（至多一份梯度缓冲区）。"
        )
    return en, zh


def _max_micro_batch(
    cfg: MemoryConfig,
    shape: ModelShape | None,
    fixed: int,
    grads: int,
    grads_live: bool,
    capacity: int,
    step_extra: int = 0,
) -> int:
    """Largest micro batch whose total fits (0 if even 1 does not); activations grow with the micro batch."""

    def fits(m: int) -> bool:
        act, _, _ = _activations(cfg, shape, m)
        return _peak(fixed, grads, act or 0, grads_live, step_extra) <= capacity

    if not fits(1):
        return 0
    lo, hi = 1, 2
    while hi <= MAX_MICRO and fits(hi):
        lo, hi = hi, hi * 2
    hi = min(hi, MAX_MICRO + 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo
