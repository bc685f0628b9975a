"""Training speed as model FLOPs utilisation (MFU): is 2.5 s per step for this model on these GPUs slow?

Why a calculator: "is this iteration time good or slow?" (Megatron-DeepSpeed #199) and "how many days will 1T tokens
take?" have one standard answer, which people rarely compute: the FLOPs a step must do, divided by the time it took
and the GPUs' data-sheet peak. The convention is PaLM's (Chowdhery et al. 2022, appendix B): a decoder trains in
``6·N + 12·L·s·a`` FLOPs per token (``N`` parameters: 2·N forward and 4·N backward; ``L`` layers, ``s`` sequence
length and ``a`` = heads × head_dim for the attention scores and values: 4·L·s·a forward, twice that backward),
and MFU is what the run achieves of that against the peak; activation recomputation's extra forward is *hardware*
FLOPs (HFU), not model FLOPs. PaLM 540B's 238.3K tokens/s on 6144 TPU v4 chips is 46.2% MFU with this formula (a
test re-derives it). With frozen base weights (LoRA / QLoRA) the weight-gradient half of the backward is not done:
``4·N`` per token; the adapters' own FLOPs are negligible.

Peaks are dense (no sparsity) Tensor-Core figures from the vendors' data sheets (``PEAK_TFLOPS``, with sources): a
16-bit run is held against the bf16 / fp16 peak with FP32 accumulate (what PyTorch's matmuls use, half the FP16-
accumulate figure on GeForce cards), an fp32 run against plain FP32 (PyTorch does not use TF32 for matmuls by
default).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .errors import CalculatorError
from .i18n import t
from .lang import Lang
from .presets import get_gpu, gpu_display
from .validate import flag, positive_float, positive_int

MAX_PARAMS = 1e13
MAX_GPUS = 1_000_000
MAX_TOKENS_PER_STEP = 1e12
MAX_STEP_SECONDS = 1e7
MAX_TOKENS_PER_SECOND = 1e12
MAX_TFLOPS = 1e5
MAX_TOKEN_BUDGET = 1e16
DAY = 86_400.0

Precision = Literal["bf16", "fp16", "fp32"]


class PeakFlops(BaseModel):
    """One GPU's dense peak in TFLOP/s per precision (``None``: no Tensor-Core support for it) and where it is from."""

    model_config = ConfigDict(frozen=True)
    bf16: float | None
    fp16: float
    fp32: float
    form: str = Field("", description="The form factor the figure is for where they differ (SXM vs PCIe).")
    source: str


# Dense peaks (sparsity halved away) as the vendors' data sheets and architecture whitepapers give them; 16-bit is
# with FP32 accumulate (GeForce cards: half their FP16-accumulate figure). Cards before Volta have no Tensor Cores:
# their 16-bit matmuls run at no more than the FP32 rate, so fp16 is their FP32 figure. Cards whose vendor document
# was not found (H20, L20, RTX 4090 D, Ascend 910B, RTX 3060 / 3060 Ti / 3080 Ti / 4070) have no entry: the answer
# then gives TFLOP/s without an MFU. Where SXM and PCIe differ the SXM figure is used and named.
_GA102 = "NVIDIA Ampere GA102 GPU Architecture whitepaper v2.0, appendix"
_ADA = "NVIDIA Ada GPU Architecture whitepaper v2.1, appendix"
_TURING = "NVIDIA Turing GPU Architecture whitepaper, Table 1 / appendix (reference clocks)"
_A100WP = "NVIDIA A100 Tensor Core GPU Architecture whitepaper, Table 1"


def _peak(bf16: float | None, fp16: float, fp32: float, source: str, form: str = "") -> PeakFlops:
    return PeakFlops(bf16=bf16, fp16=fp16, fp32=fp32, form=form, source=source)


PEAK_TFLOPS: dict[str, PeakFlops] = {
    "rtx-3090": _peak(71, 71, 35.6, _GA102 + ' "GeForce RTX 3090"'),
    "rtx-3070": _peak(40.6, 40.6, 20.3, _GA102 + ' "GeForce RTX 3070"'),
    "rtx-3080": _peak(59.5, 59.5, 29.8, _GA102 + " Table 1 (RTX 3080)"),
    "rtx-a6000": _peak(154.8, 154.8, 38.7, _GA102 + ' "RTX A6000"'),
    "a40": _peak(149.7, 149.7, 37.4, "NVIDIA A40 data sheet; " + _GA102 + " (A40)"),
    "rtx-a5000": _peak(111.1, 111.1, 27.8, "NVIDIA RTX A5000 data sheet (222.2 sparse, halved)"),
    "rtx-a4000": _peak(76.7, 76.7, 19.2, "NVIDIA RTX A4000 data sheet (153.4 sparse, halved)"),
    "a10": _peak(125, 125, 31.2, "NVIDIA A10 data sheet (250 sparse, halved)"),
    "a100-40gb": _peak(312, 312, 19.5, "NVIDIA A100 data sheet; " + _A100WP),
    "a100-80gb": _peak(312, 312, 19.5, "NVIDIA A100 data sheet; " + _A100WP),
    "a800-80gb": _peak(312, 312, 19.5, "NVIDIA A800 data sheet (A100 silicon)"),
    "rtx-4090": _peak(165.2, 165.2, 82.6, _ADA + ' "GeForce RTX 4090"'),
    "rtx-4080": _peak(97.5, 97.5, 48.7, _ADA + ' "GeForce RTX 4080"'),
    "l4": _peak(121, 121, 30.3, "NVIDIA L4 data sheet (242 sparse, halved); " + _ADA + " (L4)"),
    "l40s": _peak(362.05, 362.05, 91.6, "NVIDIA L40S data sheet"),
    "rtx-6000-ada": _peak(
        364.2, 364.2, 91.1, "NVIDIA Ada professional GPU architecture whitepaper v1.1 (RTX 6000 Ada)"
    ),
    "h100-80gb": _peak(989.5, 989.5, 67, "NVIDIA H100 data sheet (1,979 sparse, halved; PCIe 756.5)", "SXM"),
    "h800-80gb": _peak(989.5, 989.5, 67, "NVIDIA H800 data sheet (as H100 SXM)", "SXM"),
    "h200": _peak(989.5, 989.5, 67, "NVIDIA H200 data sheet (1,979 sparse, halved; NVL 835.5)", "SXM"),
    "rtx-5090": _peak(209.5, 209.5, 104.8, "NVIDIA RTX Blackwell GPU Architecture whitepaper, Table 3"),
    "mi300x": _peak(1307.4, 1307.4, 163.4, "AMD Instinct MI300X data sheet"),
    "v100-16gb": _peak(None, 125, 15.7, "NVIDIA V100 data sheet; " + _A100WP + " (PCIe: 112)", "SXM2"),
    "v100-32gb": _peak(None, 125, 15.7, "NVIDIA V100 data sheet; " + _A100WP + " (PCIe: 112)", "SXM2"),
    "t4": _peak(None, 65, 8.1, "NVIDIA T4 data sheet (mixed precision FP16/FP32)"),
    "titan-rtx": _peak(None, 130.5, 16.3, _TURING + " (TU102, as Quadro RTX 6000)"),
    "titan-v": _peak(None, 110, 13.8, "NVIDIA TITAN V launch specifications (110 Tensor TFLOPS, 13.8 FP32)"),
    "rtx-2080ti": _peak(None, 53.8, 13.4, _TURING + " (RTX 2080 Ti)"),
    "rtx-2080": _peak(None, 40.3, 10.1, _TURING + " (RTX 2080)"),
    "rtx-2070": _peak(None, 29.9, 7.5, _TURING + " (RTX 2070)"),
    "gtx-1080ti": _peak(None, 11.3, 11.3, _TURING + " (GTX 1080 Ti; no Tensor Cores)"),
    "gtx-1080": _peak(None, 8.9, 8.9, "NVIDIA GP104 whitepaper (no Tensor Cores)"),
    "p100": _peak(None, 10.6, 10.6, _A100WP + " (P100 SXM2; no Tensor Cores)", "SXM2"),
    "p40": _peak(None, 12, 12, "NVIDIA Tesla P40 data sheet (no Tensor Cores)"),
    "k80": _peak(None, 4.37, 4.37, "NVIDIA Tesla K80 data sheet (8.73 per two-GPU board; no Tensor Cores)"),
}


class Throughput(BaseModel):
    """What one training step achieves: FLOPs per token by the PaLM convention, TFLOP/s per GPU, MFU against the
    data-sheet peak, and the days a token budget takes at this speed."""

    num_params: float
    num_gpus: int
    tokens_per_second: float = Field(description="Tokens trained per second, all GPUs together.")
    tokens_per_second_per_gpu: float
    step_time_s: float | None = None
    tokens_per_step: float | None = None
    frozen_base: bool = Field(False, description="LoRA / QLoRA: 4·N per token instead of 6·N.")
    attention_flops_per_token: float = Field(0.0, description="12·L·s·a; 0 when layers, length or width are unknown.")
    model_flops_per_token: float
    hardware_flops_per_token: float = Field(description="Model FLOPs plus recomputation's extra forward.")
    activation_checkpointing: bool = False
    achieved_tflops_per_gpu: float = Field(description="Model FLOPs per second per GPU, in TFLOP/s.")
    gpu: str | None = None
    precision: Precision = "bf16"
    peak_tflops: float | None = Field(None, description="The GPU's dense peak for the precision, TFLOP/s.")
    peak_source: str = ""
    bf16_emulated: bool = Field(False, description="bf16 on a GPU without bf16 Tensor Cores (pre-Ampere).")
    mfu: float | None = None
    hfu: float | None = Field(None, description="Hardware FLOPs utilisation, only with activation checkpointing.")
    token_budget: float | None = None
    days_for_budget: float | None = None

    @property
    def implausible(self) -> bool:
        """Above 100% of peak: a step trained fewer tokens than batch × length (the length is a maximum) or the time
        is a micro-batch's, not the optimizer step's."""
        return self.mfu is not None and self.mfu > 1.0

    def _gpu_name(self) -> str:
        """'V100 32GB (SXM2)': the card, and the form factor its peak is for where SXM and PCIe differ."""
        if not self.gpu:
            return ""
        peak = PEAK_TFLOPS.get(self.gpu)
        return gpu_display(self.gpu) + (f" ({peak.form})" if peak is not None and peak.form else "")

    def to_markdown(self, lang: Lang = "en") -> str:
        params = _short(self.num_params)
        factor = "4" if self.frozen_base else "6"
        per_token = t(
            "mfu.per_token",
            lang,
            factor=factor,
            params=params,
            gflop=f"{(self.model_flops_per_token - self.attention_flops_per_token) / 1e9:,.3g}",
        )
        if self.attention_flops_per_token:
            per_token += t("mfu.attention", lang, tflop=f"{self.attention_flops_per_token / 1e9:,.3g}")
        if self.step_time_s is not None and self.tokens_per_step is not None:
            rate = t(
                "mfu.step",
                lang,
                tokens=f"{self.tokens_per_step:,.0f}",
                pflop=f"{self.model_flops_per_token * self.tokens_per_step / 1e15:,.3g}",
                secs=f"{self.step_time_s:g}",
            )
        else:
            rate = t("mfu.rate", lang, tps=f"{self.tokens_per_second:,.0f}")
        head = t(
            "mfu.achieved",
            lang,
            per_token=per_token,
            rate=rate,
            gpus=self.num_gpus if lang == "zh" else f"{self.num_gpus} GPU" + ("s" if self.num_gpus != 1 else ""),
            tflops=f"{self.achieved_tflops_per_gpu:,.3g}",
            tps_gpu=f"{self.tokens_per_second_per_gpu:,.0f}",
        )
        parts = [head]
        if self.mfu is not None and self.peak_tflops is not None:
            parts.append(
                t(
                    "mfu.of_peak",
                    lang,
                    mfu=f"{self.mfu:.1%}",
                    peak=f"{self.peak_tflops:g}",
                    gpu=self._gpu_name(),
                    precision=self.precision,
                )
            )
            if self.hfu is not None:
                parts.append(t("mfu.hfu", lang, hfu=f"{self.hfu:.1%}"))
            if self.implausible:
                parts.append(t("mfu.implausible", lang))
        elif self.gpu:
            parts.append(t("mfu.no_peak", lang, gpu=gpu_display(self.gpu)))
        if self.bf16_emulated:
            parts.append(t("mfu.bf16_emulated", lang, gpu=gpu_display(self.gpu) if self.gpu else ""))
        if self.days_for_budget is not None and self.token_budget is not None:
            parts.append(t("mfu.days", lang, budget=_short(self.token_budget), days=f"{self.days_for_budget:,.1f}"))
        return ("" if lang == "zh" else " ").join(parts)


def _short(n: float) -> str:
    """600000000 → '600M', 1e12 → '1T': a count as people write it."""
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.3g}{suffix}"
    return f"{n:.3g}"


def peak_for(gpu: str, precision: Precision | None) -> tuple[float, Precision, bool, str] | None:
    """The dense peak TFLOP/s of preset ``gpu`` for ``precision``, the precision it is for, whether bf16 would run
    emulated, and the source; ``None`` when the table has no figure for the GPU. ``precision=None`` is the card's
    16-bit peak (bf16 where it has bf16 Tensor Cores, else fp16); a stated bf16 on a card without them is held
    against its fp16 peak, flagged."""
    peak = PEAK_TFLOPS.get(gpu)
    if peak is None:
        return None
    if precision == "fp32":
        return peak.fp32, "fp32", False, peak.source
    if precision != "fp16" and peak.bf16 is not None:
        return peak.bf16, "bf16", False, peak.source
    return peak.fp16, "fp16", precision == "bf16", peak.source


def training_throughput(
    num_params: float,
    num_gpus: int,
    *,
    step_time_s: float | None = None,
    tokens_per_step: float | None = None,
    tokens_per_second: float | None = None,
    gpu: str | None = None,
    peak_tflops: float | None = None,
    precision: Precision | None = None,
    num_layers: int | None = None,
    seq_len: int | None = None,
    attention_width: int | None = None,
    frozen_base: bool = False,
    activation_checkpointing: bool = False,
    token_budget: float | None = None,
) -> Throughput:
    """MFU of a run of ``num_params`` parameters on ``num_gpus`` GPUs, from ``tokens_per_step`` (global: all GPUs, one
    optimizer step) trained in ``step_time_s`` seconds, or from ``tokens_per_second``. The peak is ``peak_tflops``
    when given, else the data-sheet figure of preset ``gpu`` for ``precision``. ``num_layers``, ``seq_len`` and
    ``attention_width`` (heads × head_dim) add the attention FLOPs; ``token_budget`` gives the days it takes."""
    params = positive_float("num_params", num_params, maximum=MAX_PARAMS)
    gpus = positive_int("num_gpus", num_gpus, maximum=MAX_GPUS)
    if precision is not None and precision not in ("bf16", "fp16", "fp32"):
        raise CalculatorError("precision", precision, "bf16, fp16 or fp32", "bf16、fp16 或 fp32")
    step = tokens = None
    if tokens_per_second is not None:
        if step_time_s is not None:
            raise CalculatorError(
                "tokens_per_second",
                tokens_per_second,
                "either tokens_per_second, or step_time_s with tokens_per_step, not both",
                "tokens_per_second 与 step_time_s + tokens_per_step 二选一",
            )
        rate = positive_float("tokens_per_second", tokens_per_second, maximum=MAX_TOKENS_PER_SECOND)
        if tokens_per_step is not None:
            tokens = positive_float("tokens_per_step", tokens_per_step, maximum=MAX_TOKENS_PER_STEP)
    elif step_time_s is not None and tokens_per_step is not None:
        step = positive_float("step_time_s", step_time_s, maximum=MAX_STEP_SECONDS)
        tokens = positive_float("tokens_per_step", tokens_per_step, maximum=MAX_TOKENS_PER_STEP)
        rate = tokens / step
    else:
        missing = "step_time_s" if step_time_s is None else "tokens_per_step"
        raise CalculatorError(
            missing,
            None,
            "step_time_s (seconds per optimizer step) with tokens_per_step (all GPUs), or tokens_per_second",
            "step_time_s（每个优化器步的秒数）加 tokens_per_step（所有卡合计），或 tokens_per_second",
        )
    attention = 0.0
    shape = (num_layers, seq_len, attention_width)
    if any(v is not None for v in shape):
        if any(v is None for v in shape):
            raise CalculatorError(
                "num_layers",
                shape,
                "num_layers, seq_len and attention_width together (or none of them)",
                "num_layers、seq_len、attention_width 三者同时给出（或都不给）",
            )
        layers = positive_int("num_layers", num_layers, maximum=100_000)
        length = positive_int("seq_len", seq_len, maximum=100_000_000)
        width = positive_int("attention_width", attention_width, maximum=10_000_000)
        attention = 12.0 * layers * length * width
    frozen, recompute = flag("frozen_base", frozen_base), flag("activation_checkpointing", activation_checkpointing)
    weights = (4.0 if frozen else 6.0) * params
    model_flops = weights + attention
    # recomputation repeats the forward: 2·N for the weights and a third of the attention's 12·L·s·a
    hardware_flops = model_flops + (2.0 * params + attention / 3.0 if recompute else 0.0)
    achieved = model_flops * rate / gpus / 1e12

    name = None
    used: Precision = precision or "bf16"
    emulated = False
    source = ""
    peak = None
    if gpu is not None:
        try:
            name = get_gpu(gpu).name
        except CalculatorError as err:
            raise CalculatorError(
                "gpu",
                gpu,
                err.accepted_en.replace("gpu_memory_gb", "peak_tflops"),
                err.accepted_zh.replace("gpu_memory_gb", "peak_tflops"),
            ) from None
    if peak_tflops is not None:
        peak = positive_float("peak_tflops", peak_tflops, maximum=MAX_TFLOPS)
        source = "stated"
    elif name is not None and (found := peak_for(name, precision)) is not None:
        peak, used, emulated, source = found
    budget = None if token_budget is None else positive_float("token_budget", token_budget, maximum=MAX_TOKEN_BUDGET)
    return Throughput(
        num_params=params,
        num_gpus=gpus,
        tokens_per_second=rate,
        tokens_per_second_per_gpu=rate / gpus,
        step_time_s=step,
        tokens_per_step=tokens,
        frozen_base=frozen,
        attention_flops_per_token=attention,
        model_flops_per_token=model_flops,
        hardware_flops_per_token=hardware_flops,
        activation_checkpointing=recompute,
        achieved_tflops_per_gpu=achieved,
        gpu=name,
        precision=used,
        peak_tflops=peak,
        peak_source=source,
        bf16_emulated=emulated,
        mfu=None if peak is None else achieved / peak,
        hfu=None if peak is None or not recompute else hardware_flops * rate / gpus / 1e12 / peak,
        token_budget=budget,
        days_for_budget=None if budget is None else budget / rate / DAY,
    )
