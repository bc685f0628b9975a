"""Model shapes and GPU capacities the calculators know by name.

Shapes are copied from each model's public ``config.json`` on the Hugging Face
Hub; parameter counts are *derived* from the shape (see ``count_params``) and
tested against the published totals, so a typo in a preset fails a test.
``shape_from_hf_config`` reads a user's own ``config.json``.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .errors import CalculatorError


class ModelShape(BaseModel):
    """The architecture facts memory depends on.

    ``mlp="gated"`` is SwiGLU/GeGLU (three matrices, LLaMA-style);
    ``"plain"`` is the two-matrix GPT/BERT MLP.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "custom"
    architecture: Literal["decoder", "encoder", "encoder-decoder"] = "decoder"
    # Upper bounds are far beyond any real model; they keep absurd configs from overflowing the arithmetic.
    hidden_size: int = Field(gt=0, le=1_000_000)
    num_layers: int = Field(gt=0, le=100_000, description="Encoder layers for encoder-decoder models.")
    num_decoder_layers: int = Field(0, ge=0, le=100_000, description="Only for encoder-decoder models.")
    num_attention_heads: int = Field(gt=0, le=100_000)
    num_key_value_heads: int | None = Field(None, gt=0, le=100_000)
    head_dim: int | None = Field(None, gt=0, le=1_000_000)
    intermediate_size: int = Field(gt=0, le=10_000_000)
    vocab_size: int = Field(gt=0, le=100_000_000)
    mlp: Literal["gated", "plain"] = "gated"
    norm: Literal["rmsnorm", "layernorm"] = "rmsnorm"
    linear_bias: bool = Field(False, description="Every linear layer has a bias (GPT-2, BERT).")
    qkv_bias: bool = Field(False, description="Only the Q/K/V projections have a bias (Qwen2, ChatGLM).")
    tie_word_embeddings: bool = False
    learned_positions: int = Field(0, ge=0, description="Rows of a learned position table (GPT-2, BERT).")
    token_type_vocab: int = Field(0, ge=0)
    pooler: bool = False
    relative_attention_buckets: int = Field(0, ge=0, description="T5 relative position bias buckets.")

    @property
    def kv_heads(self) -> int:
        return self.num_key_value_heads or self.num_attention_heads

    @property
    def dim_per_head(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads

    @property
    def total_layers(self) -> int:
        return self.num_layers + self.num_decoder_layers


def _linear(n_in: int, n_out: int, bias: bool) -> int:
    return n_in * n_out + (n_out if bias else 0)


def _norm(shape: ModelShape) -> int:
    return shape.hidden_size * (2 if shape.norm == "layernorm" else 1)


def attention_params(shape: ModelShape) -> int:
    """Q, K, V and output projections of one attention block."""
    h, inner, kv_inner = shape.hidden_size, shape.num_attention_heads * shape.dim_per_head, shape.kv_heads * shape.dim_per_head
    qkv_bias = shape.linear_bias or shape.qkv_bias
    return (_linear(h, inner, qkv_bias) + 2 * _linear(h, kv_inner, qkv_bias)
            + _linear(inner, h, shape.linear_bias))


def mlp_params(shape: ModelShape) -> int:
    h, i, b = shape.hidden_size, shape.intermediate_size, shape.linear_bias
    if shape.mlp == "gated":
        return 2 * _linear(h, i, b) + _linear(i, h, b)
    return _linear(h, i, b) + _linear(i, h, b)


def layer_params(shape: ModelShape, cross_attention: bool = False) -> int:
    """Parameters of one transformer block (a decoder block of T5 adds cross-attention)."""
    blocks = 2 if cross_attention else 1
    norms = (3 if cross_attention else 2) * _norm(shape)
    return blocks * attention_params(shape) + mlp_params(shape) + norms


def embedding_params(shape: ModelShape) -> int:
    """Token/position tables, the untied LM head, final norms, pooler and relative biases."""
    h = shape.hidden_size
    n = shape.vocab_size * h + shape.learned_positions * h + shape.token_type_vocab * h
    if not shape.tie_word_embeddings:
        n += shape.vocab_size * h
    stacks = 2 if shape.architecture == "encoder-decoder" else 1
    n += stacks * _norm(shape)  # final norm of each stack (BERT's is the embedding LayerNorm)
    n += stacks * shape.relative_attention_buckets * shape.num_attention_heads
    if shape.pooler:
        n += _linear(h, h, True)
    return n


def count_params(shape: ModelShape) -> int:
    """Exact parameter count of the architecture described by ``shape``."""
    total = shape.num_layers * layer_params(shape) + embedding_params(shape)
    total += shape.num_decoder_layers * layer_params(shape, cross_attention=True)
    return total


def _llama(name: str, h: int, layers: int, heads: int, kv: int, inter: int, vocab: int, **kw: Any) -> ModelShape:
    return ModelShape(name=name, hidden_size=h, num_layers=layers, num_attention_heads=heads,
                      num_key_value_heads=kv, intermediate_size=inter, vocab_size=vocab, **kw)


def _gpt2(name: str, h: int, layers: int, heads: int) -> ModelShape:
    return ModelShape(name=name, hidden_size=h, num_layers=layers, num_attention_heads=heads,
                      intermediate_size=4 * h, vocab_size=50257, mlp="plain", norm="layernorm",
                      linear_bias=True, tie_word_embeddings=True, learned_positions=1024)


def _bert(name: str, h: int, layers: int, heads: int) -> ModelShape:
    return ModelShape(name=name, architecture="encoder", hidden_size=h, num_layers=layers,
                      num_attention_heads=heads, intermediate_size=4 * h, vocab_size=30522, mlp="plain",
                      norm="layernorm", linear_bias=True, tie_word_embeddings=True, learned_positions=512,
                      token_type_vocab=2, pooler=True)


MODEL_PRESETS: dict[str, ModelShape] = {
    s.name: s for s in [
        _llama("llama-2-7b", 4096, 32, 32, 32, 11008, 32000),
        _llama("llama-2-13b", 5120, 40, 40, 40, 13824, 32000),
        _llama("llama-2-70b", 8192, 80, 64, 8, 28672, 32000),
        _llama("llama-3-8b", 4096, 32, 32, 8, 14336, 128256),
        _llama("mistral-7b", 4096, 32, 32, 8, 14336, 32000),
        _llama("qwen2.5-7b", 3584, 28, 28, 4, 18944, 152064, qkv_bias=True),
        _llama("chatglm3-6b", 4096, 28, 32, 2, 13696, 65024, qkv_bias=True),
        _gpt2("gpt2", 768, 12, 12),
        _gpt2("gpt2-medium", 1024, 24, 16),
        _bert("bert-base", 768, 12, 12),
        _bert("bert-large", 1024, 24, 16),
        ModelShape(name="t5-3b", architecture="encoder-decoder", hidden_size=1024, num_layers=24,
                   num_decoder_layers=24, num_attention_heads=32, head_dim=128, intermediate_size=16384,
                   vocab_size=32128, mlp="plain", tie_word_embeddings=True, relative_attention_buckets=32),
    ]
}

# Published totals (model cards / papers), used by the tests to check the shapes above.
PUBLISHED_PARAMS: dict[str, float] = {
    "llama-2-7b": 6.74e9, "llama-2-13b": 13.0e9, "llama-2-70b": 69.0e9, "llama-3-8b": 8.03e9,
    "mistral-7b": 7.24e9, "qwen2.5-7b": 7.61e9, "chatglm3-6b": 6.24e9, "gpt2": 124e6,
    "gpt2-medium": 355e6, "bert-base": 110e6, "bert-large": 340e6, "t5-3b": 2.85e9,
}

_ALIASES = {
    "llama2-7b": "llama-2-7b", "llama-7b": "llama-2-7b", "llama2-13b": "llama-2-13b", "llama2-70b": "llama-2-70b",
    "llama3-8b": "llama-3-8b", "llama-3.1-8b": "llama-3-8b", "meta-llama-3-8b": "llama-3-8b",
    "qwen2.5-7b-instruct": "qwen2.5-7b", "qwen2-7b": "qwen2.5-7b", "mistral-7b-v0.1": "mistral-7b",
    "chatglm3": "chatglm3-6b", "gpt2-small": "gpt2", "bert-base-uncased": "bert-base",
    "bert-large-uncased": "bert-large", "t5-3b": "t5-3b",
}


class GPU(BaseModel):
    """A GPU's memory and whether it computes in bf16 (compute capability 8.0+)."""

    model_config = ConfigDict(frozen=True)
    name: str
    memory_gib: float
    bf16: bool


# Nominal capacities from NVIDIA's data sheets (binary GiB as nvidia-smi reports them, rounded).
GPU_PRESETS: dict[str, GPU] = {
    g.name: g for g in [
        GPU(name="rtx-3090", memory_gib=24, bf16=True),
        GPU(name="rtx-4090", memory_gib=24, bf16=True),
        GPU(name="a10", memory_gib=24, bf16=True),
        GPU(name="t4", memory_gib=16, bf16=False),
        GPU(name="v100-16gb", memory_gib=16, bf16=False),
        GPU(name="v100-32gb", memory_gib=32, bf16=False),
        GPU(name="a100-40gb", memory_gib=40, bf16=True),
        GPU(name="a100-80gb", memory_gib=80, bf16=True),
        GPU(name="h100-80gb", memory_gib=80, bf16=True),
        GPU(name="h200", memory_gib=141, bf16=True),
        GPU(name="l40s", memory_gib=48, bf16=True),
    ]
}

_GPU_ALIASES = {
    "3090": "rtx-3090", "rtx3090": "rtx-3090", "4090": "rtx-4090", "rtx4090": "rtx-4090",
    "v100": "v100-32gb", "a100": "a100-80gb", "a100-40g": "a100-40gb", "a100-80g": "a100-80gb",
    "h100": "h100-80gb", "a800": "a100-80gb", "h800": "h100-80gb", "a10g": "a10",
}


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-").split("/")[-1]


def get_model_shape(name: str) -> ModelShape:
    """A preset by name (case-insensitive, a few common aliases); CalculatorError if unknown."""
    key = _key(name)
    key = _ALIASES.get(key, key)
    if key not in MODEL_PRESETS:
        accepted = ", ".join(MODEL_PRESETS) + "; or num_params; or a Hugging Face config.json"
        raise CalculatorError("model", name, accepted, accepted.replace("; or", "；或"),
                              reason_en=f"Unknown model preset {name!r}.",
                              reason_zh=f"未知的模型预设 {name!r}。")
    return MODEL_PRESETS[key]


def get_gpu(name: str) -> GPU:
    """A GPU preset by name (``3090`` and ``RTX 3090`` work too); CalculatorError if unknown."""
    key = _key(name)
    key = _GPU_ALIASES.get(key, key)
    if key not in GPU_PRESETS:
        accepted = ", ".join(GPU_PRESETS) + "; or gpu_memory_gb"
        raise CalculatorError("gpu", name, accepted, accepted.replace("; or", "；或"),
                              reason_en=f"Unknown GPU {name!r}.", reason_zh=f"未知的 GPU {name!r}。")
    return GPU_PRESETS[key]


def _get(cfg: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        if cfg.get(k) is not None:
            return cfg[k]
    return default


#: A config.json is a few KiB; the largest public ones (with quantization maps) stay under 100 KiB.
MAX_HF_CONFIG_BYTES = 1_000_000


def _read_config_file(path: Path) -> dict[str, Any]:
    """A local config.json, for the Python API only (a ``pathlib.Path``, never a string from a user).

    Only regular files of at most :data:`MAX_HF_CONFIG_BYTES` are read, so a FIFO or
    ``/dev/urandom`` cannot hang or exhaust the process; errors name the problem, never the
    file's content.
    """
    if path.is_dir():
        path = path / "config.json"
    try:
        if not path.is_file():
            raise OSError("not a regular file")
        if path.stat().st_size > MAX_HF_CONFIG_BYTES:
            raise OSError(f"larger than {MAX_HF_CONFIG_BYTES:,} bytes")
        with path.open("rb") as fh:
            raw = fh.read(MAX_HF_CONFIG_BYTES + 1)
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError) as exc:
        reason = exc.strerror or str(exc) if isinstance(exc, OSError) else "not valid UTF-8 JSON"
        raise CalculatorError("model_config", path.name[:80], "a readable config.json file",
                              "可读取的 config.json 文件",
                              reason_en=f"Cannot read the model config (model_config) file ({reason}).",
                              reason_zh=f"无法读取模型配置文件（{reason}）。") from None
    if not isinstance(data, dict):
        raise CalculatorError("model_config", path.name[:80], "a JSON object", "JSON 对象")
    return data


def shape_from_hf_config(config: dict[str, Any] | str | Path) -> ModelShape:
    """Read a Hugging Face ``config.json`` into a ModelShape.

    ``config`` is the parsed dict or its JSON text. A ``pathlib.Path`` (Python API only)
    reads a local file; a *string* is never taken as a path, because strings arrive from
    HTTP clients and the browser, and reading server files for them would leak what exists
    and what it contains.

    Understands LLaMA-family keys (llama, mistral, qwen2, gemma, ...), GPT-2
    (``n_embd``/``n_layer``), BERT, T5 and ChatGLM. Anything it cannot read
    raises CalculatorError naming the missing key.
    """
    if isinstance(config, Path):
        config = _read_config_file(config)
    elif isinstance(config, str):
        text = config
        if len(text) > MAX_HF_CONFIG_BYTES:
            raise CalculatorError("model_config", f"{len(text):,} characters",
                                  f"config.json text of at most {MAX_HF_CONFIG_BYTES:,} characters",
                                  f"不超过 {MAX_HF_CONFIG_BYTES:,} 个字符的 config.json 文本")
        if not text.lstrip().startswith("{"):
            raise CalculatorError("model_config", text[:80], "the config.json content as a JSON object ({...})",
                                  "config.json 的 JSON 内容（{...}）",
                                  reason_en="The model config (model_config / hf_config) must be the content of config.json; file paths are not read.",
                                  reason_zh="模型配置（model_config / hf_config）须为 config.json 的内容；不会读取文件路径。")
        try:
            config = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise CalculatorError("model_config", text[:80], "valid JSON text of a config.json",
                                  "合法的 config.json JSON 文本",
                                  reason_en=f"The model config (model_config) is not valid JSON ({str(exc)[:120]}).",
                                  reason_zh=f"模型配置不是合法的 JSON（{str(exc)[:120]}）。") from None
    if not isinstance(config, dict):
        raise CalculatorError("model_config", config, "a dict parsed from config.json", "从 config.json 解析的字典")
    model_type = str(config.get("model_type", "")).lower()
    name = str(config.get("_name_or_path") or model_type or "custom")
    try:
        if model_type == "gpt2" or "n_embd" in config:
            h = int(config["n_embd"])
            return ModelShape(name=name, hidden_size=h, num_layers=int(config["n_layer"]),
                              num_attention_heads=int(config["n_head"]),
                              intermediate_size=int(config.get("n_inner") or 4 * h),
                              vocab_size=int(config["vocab_size"]), mlp="plain", norm="layernorm",
                              linear_bias=True, tie_word_embeddings=bool(config.get("tie_word_embeddings", True)),
                              learned_positions=int(config.get("n_positions", 1024)))
        if model_type == "t5" or "d_model" in config:
            gated = str(config.get("feed_forward_proj", "relu")).startswith("gated")
            return ModelShape(name=name, architecture="encoder-decoder", hidden_size=int(config["d_model"]),
                              num_layers=int(config["num_layers"]),
                              num_decoder_layers=int(config.get("num_decoder_layers") or config["num_layers"]),
                              num_attention_heads=int(config["num_heads"]), head_dim=int(config["d_kv"]),
                              intermediate_size=int(config["d_ff"]), vocab_size=int(config["vocab_size"]),
                              mlp="gated" if gated else "plain",
                              tie_word_embeddings=bool(config.get("tie_word_embeddings", True)),
                              relative_attention_buckets=int(config.get("relative_attention_num_buckets", 32)))
        if model_type in ("bert", "roberta", "xlm-roberta"):
            return ModelShape(name=name, architecture="encoder", hidden_size=int(config["hidden_size"]),
                              num_layers=int(config["num_hidden_layers"]),
                              num_attention_heads=int(config["num_attention_heads"]),
                              intermediate_size=int(config["intermediate_size"]),
                              vocab_size=int(config["vocab_size"]), mlp="plain", norm="layernorm",
                              linear_bias=True, tie_word_embeddings=True,
                              learned_positions=int(config.get("max_position_embeddings", 512)),
                              token_type_vocab=int(config.get("type_vocab_size", 2)), pooler=True)
        if model_type == "chatglm" or "multi_query_group_num" in config:
            return ModelShape(name=name, hidden_size=int(config["hidden_size"]), num_layers=int(config["num_layers"]),
                              num_attention_heads=int(config["num_attention_heads"]),
                              num_key_value_heads=int(config.get("multi_query_group_num") or config["num_attention_heads"]),
                              intermediate_size=int(config["ffn_hidden_size"]),
                              vocab_size=int(_get(config, "padded_vocab_size", "vocab_size")),
                              qkv_bias=bool(config.get("add_qkv_bias", True)))
        h = int(config["hidden_size"])
        heads = int(config["num_attention_heads"])
        return ModelShape(name=name, hidden_size=h, num_layers=int(config["num_hidden_layers"]),
                          num_attention_heads=heads,
                          num_key_value_heads=int(_get(config, "num_key_value_heads", default=heads)),
                          head_dim=_get(config, "head_dim"),
                          intermediate_size=int(config["intermediate_size"]), vocab_size=int(config["vocab_size"]),
                          qkv_bias=bool(config.get("attention_bias", False)) or model_type.startswith("qwen2"),
                          tie_word_embeddings=bool(config.get("tie_word_embeddings", False)))
    except KeyError as exc:
        raise CalculatorError("model_config", f"missing key {exc.args[0]!r}",
                              "a config.json with hidden size, layer count, heads, intermediate size and vocab size",
                              "包含 hidden size、层数、头数、intermediate size 和词表大小的 config.json",
                              reason_en=f"The model config lacks the key {exc.args[0]!r}.",
                              reason_zh=f"模型配置缺少键 {exc.args[0]!r}。") from None
    except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: int(inf)
        raise CalculatorError("model_config", str(exc)[:80], "positive integer sizes in config.json",
                              "config.json 中的正整数尺寸") from None
