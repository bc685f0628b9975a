"""Measure the activation memory a Hugging Face model really keeps for backward.

Used by tests/test_activations_measured.py and bench/activations_vs_measured.py.
Builds tiny randomly initialised models from config objects only (no downloads),
runs one training-mode forward with labels under
``torch.autograd.graph.saved_tensors_hooks`` and counts every tensor autograd
saves for backward: deduplicated by underlying storage (``untyped_storage().data_ptr()``),
parameters, buffers and views of them excluded, each storage counted once at its
full ``nbytes``. The returned ``logits`` tensor (alive until the caller drops the
model output, i.e. through ``loss.backward()`` in the usual training loop) is
counted separately as ``output_bytes``.

``add_lora`` emulates LoRA/QLoRA fine-tuning (what PEFT does, without PEFT): every parameter
frozen, the target linears wrapped as ``base(x) + B(A(x))`` with a trainable rank-r adapter
(B zero-initialised), optionally in its own dtype (PEFT's fp32 adapters on a 16-bit model cast
``x`` first) and with dropout on the adapter's input (``lora_dropout``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from calculators.presets import ModelShape


@dataclass
class Measured:
    saved_bytes: int  # storages autograd keeps for backward (excluding parameters/buffers)
    output_bytes: int  # model outputs (logits) not already among the saved storages
    storages: dict[int, int] = field(repr=False, default_factory=dict)

    @property
    def total(self) -> int:
        return self.saved_bytes + self.output_bytes


def _state_ptrs(model: torch.nn.Module) -> set[int]:
    ptrs = {p.untyped_storage().data_ptr() for p in model.parameters()}
    ptrs |= {b.untyped_storage().data_ptr() for b in model.buffers()}
    return ptrs


def measure(model: torch.nn.Module, inputs: dict[str, torch.Tensor], backward: bool = False) -> Measured:
    """One forward (and optionally backward) of ``model(**inputs)``; the bytes saved for backward."""
    state = _state_ptrs(model)
    storages: dict[int, int] = {}
    keep: list[torch.Tensor] = []  # hold every packed tensor so no address is freed and reused mid-forward

    def pack(t: torch.Tensor) -> torch.Tensor:
        st = t.untyped_storage()
        ptr = st.data_ptr()
        if ptr and ptr not in state:
            storages[ptr] = max(storages.get(ptr, 0), st.nbytes())
        keep.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(**inputs)
    output_bytes = 0
    logits = getattr(out, "logits", None)
    if logits is not None and logits.untyped_storage().data_ptr() not in storages:
        output_bytes = logits.untyped_storage().nbytes()
    if backward:
        out.loss.backward()
    return Measured(sum(storages.values()), output_bytes, storages)


# ---------------------------------------------------------------- LoRA emulation


class LoRALinear(torch.nn.Module):
    """``base(x) + B(A(dropout(x.to(adapter dtype))))``, cast back to the base output's dtype."""

    def __init__(
        self, base: torch.nn.Linear, rank: int, adapter_dtype: torch.dtype | None = None, dropout: float = 0.0
    ):
        super().__init__()
        self.base = base
        dtype = adapter_dtype or base.weight.dtype
        self.A = torch.nn.Linear(base.in_features, rank, bias=False, dtype=dtype)
        self.B = torch.nn.Linear(rank, base.out_features, bias=False, dtype=dtype)
        torch.nn.init.zeros_(self.B.weight)
        self.dropout = torch.nn.Dropout(dropout) if dropout else torch.nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.base(x)
        return (out + self.B(self.A(self.dropout(x.to(self.A.weight.dtype))))).to(out.dtype)


def add_lora(
    model: torch.nn.Module,
    targets,
    rank: int = 8,
    adapter_dtype: torch.dtype | None = None,
    dropout: float = 0.0,
    input_requires_grad: bool = False,
) -> torch.nn.Module:
    """Freeze every parameter and wrap each ``nn.Linear`` attribute named in ``targets``."""
    for p in model.parameters():
        p.requires_grad_(False)
    for module in list(model.modules()):
        for name in targets:
            if isinstance(getattr(module, name, None), torch.nn.Linear):
                setattr(module, name, LoRALinear(getattr(module, name), rank, adapter_dtype, dropout))
    if input_requires_grad:
        model.enable_input_require_grads()  # what PEFT/HF call with gradient checkpointing
    return model


# ---------------------------------------------------------------- tiny models + matching ModelShape


def tiny_llama(
    hidden=64, layers=2, heads=4, kv_heads=2, inter=176, vocab=512, attn="eager", dtype=torch.float32, seed=0
):
    from transformers import AutoModelForCausalLM, LlamaConfig

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        hidden_size=hidden,
        intermediate_size=inter,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        vocab_size=vocab,
        max_position_embeddings=1024,
        tie_word_embeddings=False,
    )
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation=attn, dtype=dtype).train()
    shape = ModelShape(
        name=f"tiny-llama-h{hidden}-l{layers}-a{heads}-kv{kv_heads}",
        hidden_size=hidden,
        num_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        intermediate_size=inter,
        vocab_size=vocab,
    )
    return model, shape


def tiny_gpt2(
    hidden=64, layers=2, heads=4, vocab=512, positions=512, attn="eager", dtype=torch.float32, activation="gelu", seed=0
):
    from transformers import AutoModelForCausalLM, GPT2Config

    torch.manual_seed(seed)
    cfg = GPT2Config(
        n_embd=hidden,
        n_layer=layers,
        n_head=heads,
        vocab_size=vocab,
        n_positions=positions,
        activation_function=activation,
    )
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation=attn, dtype=dtype).train()
    shape = ModelShape(
        name=f"tiny-gpt2-h{hidden}-l{layers}-a{heads}",
        hidden_size=hidden,
        num_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        vocab_size=vocab,
        mlp="plain",
        norm="layernorm",
        linear_bias=True,
        tie_word_embeddings=True,
        learned_positions=positions,
    )
    return model, shape


def tiny_bert(hidden=64, layers=2, heads=4, vocab=512, positions=512, attn="eager", dtype=torch.float32, seed=0):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(seed)
    cfg = BertConfig(
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        vocab_size=vocab,
        max_position_embeddings=positions,
    )
    model = BertForMaskedLM._from_config(cfg, attn_implementation=attn, dtype=dtype).train()
    shape = ModelShape(
        name=f"tiny-bert-h{hidden}-l{layers}-a{heads}",
        architecture="encoder",
        hidden_size=hidden,
        num_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        vocab_size=vocab,
        mlp="plain",
        norm="layernorm",
        linear_bias=True,
        tie_word_embeddings=True,
        learned_positions=positions,
        token_type_vocab=2,
        pooler=False,
    )
    return model, shape


def tiny_t5(hidden=64, layers=2, heads=4, d_kv=16, d_ff=256, vocab=512, dtype=torch.float32, seed=0):
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    cfg = T5Config(
        d_model=hidden,
        d_kv=d_kv,
        d_ff=d_ff,
        num_layers=layers,
        num_decoder_layers=layers,
        num_heads=heads,
        vocab_size=vocab,
        feed_forward_proj="relu",
        tie_word_embeddings=True,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
    )
    model = T5ForConditionalGeneration._from_config(cfg, attn_implementation="eager", dtype=dtype).train()
    shape = ModelShape(
        name=f"tiny-t5-h{hidden}-l{layers}-a{heads}",
        architecture="encoder-decoder",
        hidden_size=hidden,
        num_layers=layers,
        num_decoder_layers=layers,
        num_attention_heads=heads,
        head_dim=d_kv,
        intermediate_size=d_ff,
        vocab_size=vocab,
        mlp="plain",
        tie_word_embeddings=True,
        relative_attention_buckets=32,
    )
    return model, shape


def inputs_for(shape: ModelShape, batch: int, seq: int, seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, shape.vocab_size, (batch, seq), generator=g)
    if shape.architecture == "encoder-decoder":
        return {"input_ids": ids, "labels": torch.randint(0, shape.vocab_size, (batch, seq), generator=g)}
    return {"input_ids": ids, "labels": ids.clone()}
