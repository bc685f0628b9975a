"""The vision side of a vision-language model: the ViT, its projector, and how many tokens an image becomes.

A VL model's preset (``calculators.presets``, e.g. ``qwen2-vl-7b``) is its language model's shape with a
:class:`VisionTower` attached; :func:`calculators.presets.count_params` adds :func:`vision_params` to the language
model's count. Shapes follow each model's public ``config.json`` and its modelling code in ``transformers`` (5.23):

* Qwen2-VL (``Qwen2VisionTransformerPretrainedModel``): Conv3d patch embedding (3 × 2 × 14 × 14, no bias), 32
  pre-LayerNorm blocks of width 1280 (fused qkv with bias, plain quick-GELU MLP of 4 × 1280), 2-D rotary positions
  (no parameters); ``PatchMerger``: LayerNorm, then Linear(4·1280, 4·1280) + GELU + Linear(4·1280, LM hidden) on each
  2 × 2 group of patches.
* Qwen2.5-VL (``Qwen2_5_VisionTransformerPretrainedModel``): the same layout with RMSNorm and a gated SiLU MLP of 3420
  (all linears with bias), window attention (no parameters).
* LLaVA-1.5: CLIP ViT-L/14 at 336 px (``CLIPVisionModel``: no-bias Conv2d, CLS token, 577 learned positions, pre and
  post LayerNorm, 24 blocks of 1024 with a 4096 quick-GELU MLP, q/k/v/out with bias) and the ``mlp2x_gelu``
  projector Linear(1024, LM hidden) + GELU + Linear(LM hidden, LM hidden).
* InternVL2 / 2.5 (InternViT-300M-448px): Conv2d with bias, CLS token, 1025 learned positions, 24 blocks of 1024
  (qkv with bias, GELU MLP 4096, LayerNorm, layer scale ls1/ls2), no final norm; ``mlp1``: LayerNorm(4·1024) +
  Linear(4·1024, LM hidden) + GELU + Linear(LM hidden, LM hidden) after a 0.5 pixel shuffle.
* Qwen3-VL (``Qwen3VLVisionModel``): Conv3d patch embedding with bias (3 × 2 × 16 × 16), 2304 learned positions
  (bilinearly resampled to each image's grid) besides 2-D rotary, pre-LayerNorm blocks (fused qkv with bias, plain
  tanh-GELU MLP, all linears with bias), the ``Qwen3VLVisionPatchMerger`` as Qwen2-VL's (LayerNorm on each patch, then
  Linear(4h, 4h) + GELU + Linear(4h, LM hidden)), and one more merger per ``deepstack_visual_indexes`` entry (three)
  whose LayerNorm runs on the 4h vector after the 2 × 2 shuffle (``use_postshuffle_norm``).
* GLM-4.1V (``Glm4vVisionModel``): Conv3d patch embedding with bias (3 × 2 × 14 × 14), an RMSNorm after it
  (``post_conv_layernorm``), 576 learned positions ((336/14)², resampled to each image's grid) besides 2-D rotary, 24
  pre-RMSNorm blocks of width 1536 without any bias (fused qkv, ``attention_bias`` false; a gated SiLU MLP whose width
  is ``out_hidden_size`` 4096, not ``intermediate_size``), a final RMSNorm; the merger: ``downsample`` Conv2d(1536,
  4096, 2 × 2, with bias) on each 2 × 2 group, then ``Glm4vVisionPatchMerger``: Linear(4096, 4096) + LayerNorm + GELU
  + a gated SiLU MLP of the LM's 13696 (no biases).
* GLM-4V-9B (EVA2-CLIP-E, ``visual.py`` of THUDM/glm-4v-9b, remote code): Conv2d patch embedding with bias, CLS
  token, 6401 learned positions ((1120/14)² + 1), 63 blocks of 1792 (qkv and output with bias, plain GELU MLP of
  15360 with biases, a LayerNorm after each sub-layer), then Conv2d(1792, 4096, 2 × 2, with bias) and the ``GLU``
  projector (Linear(4096, 4096) + LayerNorm + GELU + a gated SiLU MLP of 13696, no biases) and two learned vectors
  ``boi`` / ``eoi`` around each image.
* MiniCPM-V 2.6 (remote code of openbmb/MiniCPM-V-2_6; vLLM's ``MiniCPMV2_6``): SigLIP-400M as transformers'
  ``Idefics2VisionTransformer`` (Conv2d patch embedding with bias, 4900 learned positions ((980/14)²), 27 blocks of
  1152 with q/k/v/out and a tanh-GELU MLP of 4304, all with bias, two LayerNorms each, a final LayerNorm), then the
  ``Resampler`` (vLLM's ``Resampler2_5``): 64 learned queries of the LM width, ``kv_proj`` Linear(1152, 3584) without
  bias, one ``nn.MultiheadAttention(3584, 3584 // 128)``, LayerNorms ``ln_q`` / ``ln_kv`` / ``ln_post`` and a
  3584 × 3584 ``proj`` matrix (its 2-D sin-cos positions are a buffer, not parameters).

Tokens per image (what the language model's sequence grows by):

* Qwen2-VL / Qwen2.5-VL: the processor resizes each image to multiples of 28 px (``smart_resize`` in
  ``transformers/models/qwen2_vl/image_processing_qwen2_vl.py``, bounded by ``min_pixels`` / ``max_pixels``), the ViT
  sees one patch per 14 × 14 px and the merger makes one token of each 2 × 2 patches: ``(H/14)·(W/14)/4``.
* Qwen3-VL: the same processor class (``Qwen2VLImageProcessor``, mapped for ``qwen3_vl`` in transformers'
  ``image_processing_auto.py``) with the checkpoints' preprocessor_config.json: ``patch_size`` 16, ``merge_size`` 2,
  ``size`` {shortest_edge 65536, longest_edge 16777216}: multiples of 32 px, ``(H/16)·(W/16)/4`` tokens, the area
  between 256² and 4096² px.
* LLaVA-1.5: every image is resized to 336 × 336: (336/14)² = 576 tokens (the ViT also runs the CLS token, 577).
* GLM-4.1V: ``Glm4vImageProcessor`` (transformers ``models/glm4v/image_processing_glm4v.py``): ``smart_resize`` to
  multiples of 28 px with the image counted as two frames (``temporal_patch_size`` 2), so the area bound is half of
  ``size``: {shortest_edge 112·112, longest_edge 28·28·15000} (the class defaults) → between 6,272 and 5,880,000 px;
  ``(H/14)·(W/14)/4`` tokens.
* GLM-4V-9B: every image is resized to 1120 × 1120: (1120/14)² = 6400 patches (+ CLS), merged 2 × 2 to 1600, plus
  ``boi`` and ``eoi``: 1602 positions in the language model's sequence.
* MiniCPM-V 2.6 (``MiniCPMVImageProcessor.slice_image``, max_slice_nums 9, scale_resolution 448, patch 14): the
  whole image resized to about 448² px (multiples of 14) plus, when its area exceeds 448², a grid of slices (the number
  of slices ⌈area/448²⌉ ± 1, at most 9, the grid whose aspect ratio is closest), each resized to about 448² px; the
  resampler makes 64 tokens of each: ``64 · (1 + slices)`` tokens (plus a few marker tokens: ``<image>``,
  ``<slice>``, the image id), 64 to 640 per image.
* InternVL2: the image is cut into 448 × 448 tiles (1 to ``max_num`` = 12, the grid whose aspect ratio is closest,
  plus a 448 × 448 thumbnail when there is more than one tile; InternVL's ``dynamic_preprocess``, transformers'
  ``GotOcr2ImageProcessor.crop_to_patches``), 256 tokens per tile.

Pure Python: no torch import.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .errors import CalculatorError
from .validate import positive_int

Family = Literal["qwen2-vl", "qwen2.5-vl", "qwen3-vl", "llava", "internvl", "glm-4.1v", "glm-4v", "minicpm-v"]

#: Qwen2-VL image processor defaults (transformers ``Qwen2VLImageProcessor``: ``min_pixels`` 56·56,
#: ``max_pixels`` 28·28·1280).
QWEN_MIN_PIXELS = 56 * 56
QWEN_MAX_PIXELS = 28 * 28 * 1280
#: LLaMA-Factory's ``image_max_pixels`` default (``ProcessorArguments`` in src/llamafactory/hparams/model_args.py):
#: it overrides the processor's own bound for every image it feeds to Qwen2-VL / Qwen2.5-VL.
#: Qwen3-VL's preprocessor_config.json (Qwen/Qwen3-VL-*-Instruct): ``size`` {shortest_edge 65536, longest_edge
#: 16777216}, the processor's min_pixels / max_pixels.
QWEN3_MIN_PIXELS = 256 * 256
QWEN3_MAX_PIXELS = 4096 * 4096
LLAMAFACTORY_MAX_PIXELS = 768 * 768
#: GLM-4.1V's ``Glm4vImageProcessor`` size defaults; ``smart_resize`` counts an image as 2 frames, so the area an
#: image keeps is half of each.
GLM41V_MIN_PIXELS = 112 * 112 // 2
GLM41V_MAX_PIXELS = 28 * 28 * 15000 // 2
INTERNVL_MAX_TILES = 12
#: MiniCPM-V 2.6's preprocessor: slices per image and their target side.
MINICPMV_MAX_SLICES = 9
MINICPMV_SCALE_RESOLUTION = 448


class VisionTower(BaseModel):
    """A VL model's vision encoder and projector, as far as memory depends on them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: Family
    hidden_size: int = Field(gt=0, le=100_000)
    num_layers: int = Field(gt=0, le=1_000)
    num_heads: int = Field(gt=0, le=1_000)
    intermediate_size: int = Field(gt=0, le=1_000_000)
    mlp: Literal["gated", "plain"] = "plain"
    block_bias: bool = Field(True, description="The blocks' qkv, output and MLP linears have biases (GLM-4.1V: none).")
    norm: Literal["layernorm", "rmsnorm"] = "layernorm"
    patch_size: int = Field(14, gt=0, le=1_000)
    temporal_patch_size: int = Field(1, gt=0, le=16, description="Qwen2-VL's Conv3d takes 2 frames (an image twice).")
    patch_bias: bool = False
    class_token: bool = False
    position_rows: int = Field(0, ge=0, description="Learned position embedding rows (0: rotary).")
    pre_norm: bool = Field(False, description="CLIP's pre_layrnorm before the blocks.")
    post_norm: bool = Field(False, description="CLIP's post_layernorm after the blocks.")
    layer_scale: bool = Field(False, description="InternViT's ls1 / ls2 vectors per block.")
    deepstack_mergers: int = Field(
        0, ge=0, le=64, description="Qwen3-VL's extra mergers on intermediate blocks (post-shuffle LayerNorm)."
    )
    merge: int = Field(1, gt=0, le=8, description="Patches merged per side into one token (2: a 2 × 2 group).")
    projector: Literal["qwen-merger", "mlp2x", "internvl-mlp1", "glm-merger", "resampler"]
    queries: int = Field(0, ge=0, le=100_000, description="MiniCPM-V's resampler: learned queries (tokens per slice).")
    projector_intermediate_size: int = Field(
        0, ge=0, le=1_000_000, description="GLM's merger: its gated MLP width (the LM's intermediate size)."
    )
    boundary_tokens: int = Field(0, ge=0, le=8, description="GLM-4V's learned boi / eoi vectors around each image.")
    out_hidden_size: int = Field(gt=0, le=1_000_000, description="The language model's hidden size.")
    image_size: int = Field(0, ge=0, description="Fixed input side (CLIP 336, InternViT tile 448); 0: dynamic.")
    activation: Literal["quick_gelu", "gelu", "silu"] = "gelu"


def _norm(t: VisionTower, width: int) -> int:
    return width * (2 if t.norm == "layernorm" else 1)


def vision_layer_params(t: VisionTower) -> int:
    """One ViT block: qkv + output projection (all with bias), the MLP (with biases), two norms, layer scale."""
    h, i, b = t.hidden_size, t.intermediate_size, int(t.block_bias)
    attn = 3 * (h * h + b * h) + h * h + b * h
    mlp = (2 if t.mlp == "gated" else 1) * (h * i + b * i) + i * h + b * h
    return attn + mlp + 2 * _norm(t, h) + (2 * h if t.layer_scale else 0)


def projector_params(t: VisionTower) -> int:
    """The merger / projector between the ViT and the language model."""
    h, out = t.hidden_size, t.out_hidden_size
    if t.projector == "qwen-merger":  # ln_q on each patch, then an MLP on the 2 x 2 group
        g = h * t.merge**2
        mlp = g * g + g + g * out + out
        return _norm(t, h) + mlp + t.deepstack_mergers * (_norm(t, g) + mlp)
    if t.projector == "resampler":  # queries, kv_proj (no bias), MultiheadAttention, ln_q / ln_kv / ln_post, proj
        return t.queries * out + h * out + 4 * (out * out + out) + 3 * 2 * out + out * out
    if t.projector == "glm-merger":  # Conv2d(h, out, merge) with bias; Linear(out, out) + LayerNorm; gated MLP
        c = t.projector_intermediate_size
        return h * t.merge**2 * out + out + out * out + 2 * out + 3 * out * c + t.boundary_tokens * out
    if t.projector == "mlp2x":
        return h * out + out + out * out + out
    g = h * t.merge**2  # InternVL mlp1: LayerNorm on the pixel-shuffled 4h vector
    return 2 * g + g * out + out + out * out + out


def vision_encoder_params(t: VisionTower) -> int:
    """The ViT alone (patch embedding, CLS, positions, blocks, norms), without the projector."""
    h = t.hidden_size
    n = 3 * t.temporal_patch_size * t.patch_size**2 * h + (h if t.patch_bias else 0)
    n += (h if t.class_token else 0) + t.position_rows * h
    n += (_norm(t, h) if t.pre_norm else 0) + (_norm(t, h) if t.post_norm else 0)
    return n + t.num_layers * vision_layer_params(t)


def vision_params(t: VisionTower) -> int:
    """ViT + projector: what a VL model adds to its language model's parameter count."""
    return vision_encoder_params(t) + projector_params(t)


def qwen_resize(
    height: int, width: int, factor: int = 28, min_pixels: int = QWEN_MIN_PIXELS, max_pixels: int = QWEN_MAX_PIXELS
) -> tuple[int, int]:
    """The size Qwen2-VL's processor gives an image: each side a multiple of ``factor`` (patch × merge), the area
    kept within [min_pixels, max_pixels] at about the same aspect ratio (the rule of transformers' ``smart_resize``)."""
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def _ensure_divide(length: float, divisor: int) -> int:
    return max(round(length / divisor) * divisor, divisor)


def _minicpm_resize(width: float, height: float, side: int, patch: int, upscale: bool) -> tuple[int, int]:
    """MiniCPM-V's ``find_best_resize``: an image larger than side² (or any, with ``upscale``) is scaled to about
    side² px at its aspect ratio; both sides rounded to multiples of the patch."""
    if width * height > side * side or upscale:
        r = width / height
        height = int(side / math.sqrt(r))
        width = int(height * r)
    return _ensure_divide(width, patch), _ensure_divide(height, patch)


def minicpm_slice_grid(
    height: int, width: int, max_slices: int = MINICPMV_MAX_SLICES, side: int = MINICPMV_SCALE_RESOLUTION
) -> tuple[int, int] | None:
    """(columns, rows) MiniCPM-V cuts an image into (``get_sliced_grid``), None when it is not sliced: ⌈area/side²⌉
    slices (at most ``max_slices``) or one fewer or more, the grid whose log aspect ratio is closest to the image's
    (the first found on a tie)."""
    log_ratio = math.log(width / height)
    multiple = min(math.ceil(width * height / (side * side)), max_slices)
    if multiple <= 1:
        return None
    best, best_error = (1, 1), float("inf")
    for n in (multiple - 1, multiple, multiple + 1):
        if n == 1 or n > max_slices:
            continue
        for cols in range(1, n + 1):
            if n % cols == 0 and (error := abs(log_ratio - math.log(cols / (n // cols)))) < best_error:
                best, best_error = (cols, n // cols), error
    return best


def minicpm_vit_patches(height: int, width: int, patch: int = 14, side: int = MINICPMV_SCALE_RESOLUTION) -> int:
    """Patches the ViT runs on for one image: the resized whole image plus every slice (``slice_image``)."""
    grid = minicpm_slice_grid(height, width, side=side)
    w, h = _minicpm_resize(width, height, side, patch, upscale=grid is None)
    n = (w // patch) * (h // patch)
    if grid is None:
        return n
    cols, rows = grid
    sw, sh = _minicpm_resize(
        _ensure_divide(width, cols) / cols, _ensure_divide(height, rows) / rows, side, patch, upscale=True
    )
    return n + cols * rows * (sw // patch) * (sh // patch)


def internvl_tiles(height: int, width: int, max_num: int = INTERNVL_MAX_TILES, tile: int = 448) -> int:
    """448-px tiles InternVL cuts an image into, thumbnail included: the (columns, rows) grid with 1..max_num tiles
    whose aspect ratio is closest to the image's (on a tie the larger grid when the image covers more than half of
    it), plus one thumbnail when the grid has more than one tile."""
    aspect = width / height
    grids = sorted(
        {(c, r) for c in range(1, max_num + 1) for r in range(1, max_num + 1) if c * r <= max_num},
        key=lambda g: g[0] * g[1],
    )
    best, best_diff = (1, 1), float("inf")
    for c, r in grids:
        diff = abs(aspect - c / r)
        if diff < best_diff:
            best, best_diff = (c, r), diff
        elif diff == best_diff and width * height > 0.5 * tile * tile * c * r:
            best = (c, r)
    blocks = best[0] * best[1]
    return blocks + (1 if blocks > 1 else 0)


class ImageTokens(BaseModel):
    """What one image costs: tokens in the language model's sequence and patches through the ViT."""

    model_config = ConfigDict(frozen=True)

    llm_tokens: int
    vit_tokens: int = Field(description="Sequence positions the ViT runs on (all tiles/frames, CLS included).")
    rule_en: str
    rule_zh: str


def image_tokens(
    t: VisionTower, height: int | None = None, width: int | None = None, max_pixels: int | None = None
) -> ImageTokens:
    """Tokens one image of ``height`` × ``width`` pixels adds (LLaVA-1.5's fixed 336 px needs no size)."""
    if t.family == "llava":
        side = t.image_size // t.patch_size
        return ImageTokens(
            llm_tokens=side * side,
            vit_tokens=side * side + 1,
            rule_en=f"every image is resized to {t.image_size}×{t.image_size}: ({t.image_size}/{t.patch_size})² = "
            f"{side * side} tokens",
            rule_zh=f"每张图缩放到 {t.image_size}×{t.image_size}：({t.image_size}/{t.patch_size})² = {side * side} 个 token",
        )
    if t.family == "glm-4v":
        side = t.image_size // t.patch_size
        merged = (side // t.merge) ** 2
        return ImageTokens(
            llm_tokens=merged + t.boundary_tokens,
            vit_tokens=side * side + (1 if t.class_token else 0),
            rule_en=f"every image is resized to {t.image_size}×{t.image_size}: ({t.image_size}/{t.patch_size}/"
            f"{t.merge})² = {merged} tokens + {t.boundary_tokens} (begin/end of image)",
            rule_zh=f"每张图缩放到 {t.image_size}×{t.image_size}：({t.image_size}/{t.patch_size}/{t.merge})² = "
            f"{merged} 个 token + {t.boundary_tokens}（图像起止）",
        )
    if height is None or width is None:
        raise CalculatorError("image_size", None, "the image height and width in pixels", "图像的高和宽（像素）")
    height = positive_int("image_height", height, maximum=100_000)
    width = positive_int("image_width", width, maximum=100_000)
    if t.family == "minicpm-v":
        grid = minicpm_slice_grid(height, width)
        slices = grid[0] * grid[1] if grid else 0
        per = t.queries
        return ImageTokens(
            llm_tokens=per * (1 + slices),
            vit_tokens=minicpm_vit_patches(height, width, t.patch_size, t.image_size),
            rule_en=f"{height}×{width} px → the whole image + {slices} slices of about {t.image_size} px, × {per} "
            "tokens each",
            rule_zh=f"{height}×{width} 像素 → 整图 + {slices} 个约 {t.image_size} 像素的切片，每个 {per} 个 token",
        )
    if t.family == "internvl":
        tiles = internvl_tiles(height, width)
        per_tile = (t.image_size // t.patch_size // t.merge) ** 2
        side = t.image_size // t.patch_size
        return ImageTokens(
            llm_tokens=tiles * per_tile,
            vit_tokens=tiles * (side * side + (1 if t.class_token else 0)),
            rule_en=f"{height}×{width} px → {tiles} tiles of {t.image_size} px (thumbnail included) × {per_tile} tokens",
            rule_zh=f"{height}×{width} 像素 → {tiles} 个 {t.image_size} 像素切片（含缩略图）× {per_tile} 个 token",
        )
    factor = t.patch_size * t.merge
    qwen3, glm = t.family == "qwen3-vl", t.family == "glm-4.1v"
    if glm and min(height, width) < factor:  # GLM's smart_resize first scales a side under 28 px up to 28
        scale = max(factor / height, factor / width)
        height, width = int(height * scale), int(width * scale)
    default_max = GLM41V_MAX_PIXELS if glm else QWEN3_MAX_PIXELS if qwen3 else QWEN_MAX_PIXELS
    bound = max_pixels or default_max
    floor = GLM41V_MIN_PIXELS if glm else QWEN3_MIN_PIXELS if qwen3 else QWEN_MIN_PIXELS
    h, w = qwen_resize(height, width, factor, min_pixels=floor, max_pixels=bound)
    patches = (h // t.patch_size) * (w // t.patch_size)
    tokens = patches // t.merge**2
    return ImageTokens(
        llm_tokens=tokens,
        vit_tokens=patches,
        rule_en=f"{height}×{width} px → resized to {h}×{w} (max_pixels {bound:,}) → ({h}/{t.patch_size})·"
        f"({w}/{t.patch_size})/{t.merge**2} = {tokens} tokens",
        rule_zh=f"{height}×{width} 像素 → 缩放为 {h}×{w}（max_pixels {bound:,}）→ ({h}/{t.patch_size})·"
        f"({w}/{t.patch_size})/{t.merge**2} = {tokens} 个 token",
    )


#: Bytes one ViT block keeps for backward per token, as multiples of B·h and B·i (B bytes per value), counted with
#: torch.autograd.graph.saved_tensors_hooks on tiny transformers 5.23 towers with SDPA attention, fp32 and bf16
#: (tests/test_vlm12_units.py): Qwen2-VL 11h + 3i (LayerNorm, quick-GELU keeps its input and sigmoid), Qwen2.5-VL
#: 13h + 4i (RMSNorm keeps an fp32 copy of its input, + 4h bytes at 16 bits; gated SiLU MLP), CLIP 8h + 3i,
#: InternViT 10h + 2i (exact GELU), Qwen3-VL 11h + 2i (LayerNorm, tanh GELU keeps only its input; tests/test_vlm13_units.py),
#: GLM-4.1V 13h + 4i (i its MLP width, out_hidden_size; RMSNorm and gated SiLU as Qwen2.5-VL; tests/test_vlm14_units.py).
#: SigLIP (MiniCPM-V 2.6, measured on transformers' Idefics2VisionTransformer) 8h + 2i (tanh GELU keeps only its input).
#: GLM-4V-9B's EVA2-CLIP (remote code, not run here) is NOT measured: SigLIP's 8h + 2i is assumed (the same linears
#: and an exact GELU, which also keeps only its input; its LayerNorms sit after each sub-layer instead of before).
_VIT_LAYER: dict[str, tuple[int, int]] = {
    "qwen2-vl": (11, 3),
    "qwen2.5-vl": (13, 4),
    "qwen3-vl": (11, 2),
    "llava": (8, 3),
    "internvl": (10, 2),
    "glm-4.1v": (13, 4),
    "glm-4v": (8, 2),
    "minicpm-v": (8, 2),
}
#: Outside the blocks, per token: the patch convolution's input (3·t·p² pixels) and the norms / merger around the
#: blocks (measured: Qwen2-VL about 5h, Qwen2.5-VL about 6h, CLIP 2h, InternViT h, Qwen3-VL about 5h plus 3h for each
#: deepstack merger: its post-shuffle LayerNorm, fc1 and GELU inputs on a 4h vector per 2 × 2 group). GLM's merger
#: (measured on GLM-4.1V): about 6h plus out + c per ViT token (its out-wide and c-wide inputs on each 2 × 2 group),
#: and 3h more at 16 bits (fp32 copies in its RMSNorms); GLM-4V (assumed): CLIP's 2h plus the same merger. SigLIP
#: (measured): h; MiniCPM-V's resampler (assumed, not measured): h + 4·out per ViT position.
_VIT_OUTSIDE_H: dict[str, int] = {
    "qwen2-vl": 5,
    "qwen2.5-vl": 6,
    "qwen3-vl": 5,
    "llava": 2,
    "internvl": 1,
    "glm-4.1v": 6,
    "glm-4v": 2,
    "minicpm-v": 1,
}


def vit_activation_bytes(t: VisionTower, vit_tokens: int, bytes_per_value: int, checkpointing: str = "none") -> int:
    """Activations a *trained* vision tower keeps for backward over ``vit_tokens`` positions (all images of a
    micro-batch). A frozen tower keeps none: its weights need no gradient and the pixels none either.
    ``checkpointing="full"`` (or "selective", not modelled separately for the ViT): each block keeps its input, and
    one block is re-materialised during backward."""
    b, h, i = bytes_per_value, t.hidden_size, t.intermediate_size
    ch, ci = _VIT_LAYER[t.family]
    layer = b * (ch * h + ci * i) + (4 * h if t.norm == "rmsnorm" and b == 2 else 0)
    outside_h = _VIT_OUTSIDE_H[t.family] + 3 * t.deepstack_mergers
    outside = b * (3 * t.temporal_patch_size * t.patch_size**2 + outside_h * h)
    if t.projector == "resampler":  # kv_proj's input, ln_kv's input and output, k and v (assumed, not measured)
        outside += b * (h + 4 * t.out_hidden_size)
    if t.projector == "glm-merger":
        outside += b * (t.out_hidden_size + t.projector_intermediate_size) + (
            6 * h if t.norm == "rmsnorm" and b == 2 else 0
        )
    if checkpointing == "none":
        return vit_tokens * (t.num_layers * layer + outside)
    return vit_tokens * (t.num_layers * b * h + layer + outside)
