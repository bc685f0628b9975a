"""Effective batch size with DeepSpeed's exact semantics.

DeepSpeed (``deepspeed/runtime/config.py``, ``_set_batch_related_parameters``
and ``_batch_assertion``) fills in the missing one of ``train_batch_size``,
``train_micro_batch_size_per_gpu`` and ``gradient_accumulation_steps`` using
integer division, then asserts
``train_batch_size == micro × gradient_accumulation_steps × world_size``, where
``world_size`` is the data-parallel size. We reproduce that order and wording so
our verdict matches what a DeepSpeed user sees, and then add what DeepSpeed does
not say: which values would be consistent.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, Field

from .errors import CalculatorError
from .i18n import t
from .lang import Lang
from .validate import positive_float, positive_int

MAX_BATCH = 10**9
MAX_WORLD = 10**6
MAX_SEQ = 10**8
MAX_DATASET = 10**13


class BatchConfigError(CalculatorError):
    """The batch fields are inconsistent (DeepSpeed would raise an AssertionError at start-up).

    ``deepspeed_message`` is DeepSpeed's own wording; ``str(err)`` adds a plain
    explanation and consistent alternatives in the requested language.
    """

    def __init__(
        self,
        deepspeed_message: str,
        explanation_en: str,
        explanation_zh: str,
        lang: Lang,
        field: str = "train_batch_size",
        value: object = None,
    ) -> None:
        ValueError.__init__(self, f"{deepspeed_message}\n{explanation_zh if lang == 'zh' else explanation_en}")
        self.deepspeed_message = deepspeed_message
        self.field, self.value, self.lang = field, value, lang
        self.en, self.zh = explanation_en, explanation_zh
        self.accepted_en = "values with train_batch_size = micro × GA × world_size"
        self.accepted_zh = "满足 train_batch_size = micro × GA × world_size 的取值"


class KnobChange(BaseModel):
    """What happens to the effective batch and per-GPU memory when one knob moves."""

    change_en: str
    change_zh: str
    train_batch_size: int
    memory_en: str
    memory_zh: str


class LearningRateGuidance(BaseModel):
    """Heuristic learning rates for a new effective batch; heuristics, not laws.

    Without a known-good ``base_learning_rate`` only the factors are given.
    """

    base_learning_rate: float | None
    base_batch_size: int
    new_batch_size: int
    linear_factor: float = Field(description="Goyal et al. 2017: scale lr by k (SGD; use with warmup).")
    sqrt_factor: float = Field(description="Square-root rule, often better for Adam (Malladi et al. 2022).")
    linear_rule_lr: float | None = None
    sqrt_rule_lr: float | None = None
    note_en: str
    note_zh: str
    sources: list[str]

    def to_markdown(self, lang: Lang = "en") -> str:
        """The note in ``lang``: what the chat's tool summary and the agent tool's "markdown" show."""
        return self.note_zh if lang == "zh" else self.note_en


class BatchResult(BaseModel):
    """A consistent DeepSpeed batch configuration and what follows from it."""

    train_batch_size: int
    train_micro_batch_size_per_gpu: int
    gradient_accumulation_steps: int
    world_size: int = Field(description="GPUs (processes), as given.")
    data_parallel_size: int = Field(description="world_size ÷ (TP × PP × SP): the GPUs that each take their own batch.")
    derived: list[str] = Field(description="Which of the three fields were filled in, DeepSpeed-style.")
    formula: str
    samples_per_optimizer_step: int
    tokens_per_optimizer_step: int | None = None
    optimizer_steps_per_epoch: int | None = Field(
        None,
        description="Per epoch, HF Trainer from transformers 4.52 (and accelerate-style loops): "
        "ceil(micro-batches per GPU / GA).",
    )
    optimizer_steps_per_epoch_before_4_52: int | None = Field(
        None, description="Per epoch, HF Trainer up to transformers 4.51: max(micro-batches per GPU // GA, 1)."
    )
    micro_batches_per_epoch_per_gpu: int | None = None
    dataset_size: int | None = None
    num_train_epochs: float | None = None
    total_optimizer_steps: int | None = Field(
        None,
        description="ceil(num_train_epochs × optimizer_steps_per_epoch): the Trainer's 'Total optimization steps'.",
    )
    total_optimizer_steps_before_4_52: int | None = None
    observed_steps: int | None = Field(None, description="The step count the user's run showed.")
    samples_per_observed_step: float | None = Field(
        None, description="dataset_size × num_train_epochs ÷ observed_steps: the batch the run really used per step."
    )
    what_if: list[KnobChange]
    learning_rate: LearningRateGuidance | None = None
    notes_en: list[str] = []
    notes_zh: list[str] = []


def deepspeed_fill(tb: int | None, mb: int | None, ga: int | None, ws: int) -> tuple[int, int, int, list[str]]:
    """DeepSpeed's ``_set_batch_related_parameters``: the same branch order and integer division."""
    if tb is not None and mb is not None and ga is not None:
        return tb, mb, ga, []
    if tb is not None and mb is not None:
        return tb, mb, (tb // mb) // ws, ["gradient_accumulation_steps"]
    if tb is not None and ga is not None:
        return tb, (tb // ws) // ga, ga, ["train_micro_batch_size_per_gpu"]
    if mb is not None and ga is not None:
        return mb * ga * ws, mb, ga, ["train_batch_size"]
    if tb is not None:
        return tb, tb // ws, 1, ["train_micro_batch_size_per_gpu", "gradient_accumulation_steps"]
    if mb is not None:
        return mb * ws, mb, 1, ["train_batch_size", "gradient_accumulation_steps"]
    raise BatchConfigError(
        "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided",
        "DeepSpeed needs train_batch_size or train_micro_batch_size_per_gpu (gradient_accumulation_steps alone is not enough).",
        "DeepSpeed 需要 train_batch_size 或 train_micro_batch_size_per_gpu 之一（只给 gradient_accumulation_steps 不够）。",
        "en",
        field="train_micro_batch_size_per_gpu",
    )


def _divisors(n: int, limit: int = 8) -> list[int]:
    out = [d for d in range(1, min(n, 4096) + 1) if n % d == 0]
    return out[:limit]


def _consistent_options(tb: int, mb: int, ga: int, ws: int) -> tuple[list[str], list[str]]:
    """Plain-language alternatives that satisfy the DeepSpeed equation."""
    en, zh = [], []
    en.append(f"keep micro={mb}, GA={ga}, world_size={ws} → train_batch_size={mb * ga * ws}")
    zh.append(f"保持 micro={mb}、GA={ga}、world_size={ws} → train_batch_size={mb * ga * ws}")
    if tb % (mb * ws) == 0 and tb // (mb * ws) > 0:
        g = tb // (mb * ws)
        en.append(f"keep train_batch_size={tb} and micro={mb} → gradient_accumulation_steps={g}")
        zh.append(f"保持 train_batch_size={tb} 和 micro={mb} → gradient_accumulation_steps={g}")
    if tb % (ga * ws) == 0 and tb // (ga * ws) > 0:
        m = tb // (ga * ws)
        en.append(f"keep train_batch_size={tb} and GA={ga} → train_micro_batch_size_per_gpu={m}")
        zh.append(f"保持 train_batch_size={tb} 和 GA={ga} → train_micro_batch_size_per_gpu={m}")
    if tb % ws == 0:
        pairs = [f"{d}×{tb // ws // d}" for d in _divisors(tb // ws)]
        en.append(f"with world_size={ws}, micro × GA must equal {tb // ws} (micro×GA: {', '.join(pairs)})")
        zh.append(f"world_size={ws} 时 micro × GA 必须等于 {tb // ws}（可选 micro×GA：{', '.join(pairs)}）")
    else:
        en.append(
            f"train_batch_size={tb} is not divisible by world_size={ws}: no micro/GA pair works; "
            f"check how many GPUs the launcher really starts"
        )
        zh.append(
            f"train_batch_size={tb} 不能被 world_size={ws} 整除：任何 micro/GA 组合都不成立；"
            f"请检查启动器实际启动了几张卡"
        )
    return en, zh


def _check_assertions(tb: int, mb: int, ga: int, ws: int, lang: Lang) -> None:
    """DeepSpeed's ``_batch_assertion``, same order and wording."""
    for value, label, field in (
        (tb, "Train batch size", "train_batch_size"),
        (mb, "Micro batch size per gpu", "train_micro_batch_size_per_gpu"),
        (ga, "Gradient accumulation steps", "gradient_accumulation_steps"),
    ):
        if value <= 0:
            ds = f"{label}: {value} has to be greater than 0"
            raise BatchConfigError(
                ds,
                f"DeepSpeed derived {field}={value} by integer division; the values given do not divide evenly. "
                f"Give all three values explicitly or pick values that divide.",
                f"DeepSpeed 用整除推导出 {field}={value}；给定的值无法整除。请显式给出三个值，或选择能整除的值。",
                lang,
                field=field,
                value=value,
            )
    if tb != mb * ga * ws:
        ds = (
            "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
            f"gradient_acc_step * world_size {tb} != {mb} * {ga} * {ws}"
        )
        opts_en, opts_zh = _consistent_options(tb, mb, ga, ws)
        raise BatchConfigError(
            ds,
            f"train_batch_size must be micro × GA × world_size = {mb} × {ga} × {ws} = {mb * ga * ws}, not {tb}. "
            "Consistent choices: " + "; ".join(opts_en) + ".",
            f"train_batch_size 必须等于 micro × GA × world_size = {mb} × {ga} × {ws} = {mb * ga * ws}，而不是 {tb}。"
            "一致的取值：" + "；".join(opts_zh) + "。",
            lang,
            value=tb,
        )


def _what_if(mb: int, ga: int, ws: int) -> list[KnobChange]:
    tb = mb * ga * ws
    changes = [
        KnobChange(
            change_en="double gradient_accumulation_steps",
            change_zh="gradient_accumulation_steps 翻倍",
            train_batch_size=tb * 2,
            memory_en="per-GPU memory unchanged (activations are freed after each micro-batch; .grad accumulates in place)",
            memory_zh="每卡显存不变（每个微批次反向后激活即释放；梯度在同一个 .grad 缓冲区里原地累加）",
        ),
        KnobChange(
            change_en="double train_micro_batch_size_per_gpu",
            change_zh="train_micro_batch_size_per_gpu 翻倍",
            train_batch_size=tb * 2,
            memory_en="activation memory roughly doubles; model states unchanged",
            memory_zh="激活显存约翻倍；模型状态不变",
        ),
        KnobChange(
            change_en="double the number of data-parallel GPUs",
            change_zh="数据并行 GPU 数翻倍",
            train_batch_size=tb * 2,
            memory_en="per-GPU activations unchanged; model states per GPU shrink only with ZeRO/FSDP sharding",
            memory_zh="每卡激活不变；只有 ZeRO/FSDP 分片时每卡模型状态才会变小",
        ),
    ]
    if mb % 2 == 0:
        changes.insert(
            0,
            KnobChange(
                change_en="halve micro batch and double GA",
                change_zh="微批次减半、GA 翻倍",
                train_batch_size=tb,
                memory_en="same effective batch, about half the activation memory, more (smaller) forward/backward passes",
                memory_zh="有效批次不变，激活显存约减半，前向/反向次数变多",
            ),
        )
    return changes


def learning_rate_guidance(
    base_learning_rate: float | None, base_batch_size: int, new_batch_size: int, *, per_gpu_held: bool = False
) -> LearningRateGuidance:
    """Linear and square-root scaling of a known-good learning rate (or just the factors) to a new effective batch.
    ``per_gpu_held``: the two sizes are GPU counts at an unchanged per-GPU batch ("4卡学习率为0.0001，单卡应该除以4吗"),
    so the effective batch changes by their ratio."""
    k = new_batch_size / base_batch_size
    lin, sq = k, math.sqrt(k)
    if base_learning_rate is None:
        what_en = f"multiply the learning rate by {lin:.3g} (linear rule) or by {sq:.3g} (square-root rule)"
        what_zh = f"学习率乘以 {lin:.3g}（线性规则）或乘以 {sq:.3g}（平方根规则）"
    else:
        what_en = (
            f"linear rule (Goyal et al. 2017, SGD, with warmup) gives {base_learning_rate * lin:.3g}; "
            f"square-root rule (common for Adam, Malladi et al. 2022) gives {base_learning_rate * sq:.3g}"
        )
        what_zh = (
            f"线性缩放规则（Goyal et al. 2017，SGD，配合 warmup）给出 {base_learning_rate * lin:.3g}；"
            f"平方根规则（Adam 常用，Malladi et al. 2022）给出 {base_learning_rate * sq:.3g}"
        )
    return LearningRateGuidance(
        base_learning_rate=base_learning_rate,
        base_batch_size=base_batch_size,
        new_batch_size=new_batch_size,
        linear_factor=lin,
        sqrt_factor=sq,
        linear_rule_lr=None if base_learning_rate is None else base_learning_rate * lin,
        sqrt_rule_lr=None if base_learning_rate is None else base_learning_rate * sq,
        note_en=(
            (
                f"GPUs {base_batch_size} → {new_batch_size} at the same per-GPU batch, so the effective batch ×{k:g}"
                if per_gpu_held
                else f"Effective batch {base_batch_size} → {new_batch_size} (×{k:g})"
            )
            + f": {what_en}. Both are heuristics: "
            "validate with a short run; beyond the critical batch size (McCandlish et al. 2018) larger batches "
            "stop helping."
        ),
        note_zh=(
            (
                f"每卡批次不变，卡数 {base_batch_size} → {new_batch_size}，有效批次 ×{k:g}"
                if per_gpu_held
                else f"有效批次 {base_batch_size} → {new_batch_size}（×{k:g}）"
            )
            + f"：{what_zh}。二者都是经验规则，需要短跑验证；"
            "超过临界批次（McCandlish et al. 2018）后继续增大批次收益很小。"
        ),
        sources=[
            "https://arxiv.org/abs/1706.02677",
            "https://arxiv.org/abs/2205.10287",
            "https://arxiv.org/abs/1812.06162",
        ],
    )


def scale_learning_rate(
    base_batch_size: int,
    new_batch_size: int,
    base_learning_rate: float | None = None,
    per_gpu_held: bool = False,
) -> LearningRateGuidance:
    """The learning-rate tool: :func:`learning_rate_guidance` on checked numbers (whole batch sizes or GPU counts, a
    learning rate in (0, 10)), so a bad value is a clear error instead of a division by zero."""
    old = positive_int("base_batch_size", base_batch_size, maximum=MAX_BATCH)
    new = positive_int("new_batch_size", new_batch_size, maximum=MAX_BATCH)
    lr = None if base_learning_rate is None else positive_float("base_learning_rate", base_learning_rate, maximum=10.0)
    if not isinstance(per_gpu_held, bool):
        raise CalculatorError("per_gpu_held", per_gpu_held, "true or false", "true 或 false")
    return learning_rate_guidance(lr, old, new, per_gpu_held=per_gpu_held)


def _batch_field(field: str, value: Any) -> int:
    """A DeepSpeed batch field as a whole number. True and fractions are refused even though DeepSpeed
    (0.19.x, deepspeed/runtime/config.py ``_batch_assertion``) accepts them, so the refusal says what
    DeepSpeed would do with them: Python's True is the int 1, and 2.5 passes its arithmetic unrounded."""
    try:
        return positive_int(field, value, maximum=MAX_BATCH)
    except CalculatorError as err:
        if isinstance(value, bool) and value:
            extra_en = (
                " DeepSpeed itself would accept True and use it as 1 (a Python bool is an int); write 1 if you mean 1."
            )
            extra_zh = "DeepSpeed 本身会接受 True 并把它当作 1（Python 的 bool 是整数）；如果你想要 1，请写 1。"
        elif isinstance(value, float) and math.isfinite(value) and value > 0 and not value.is_integer():
            near = sorted({max(1, math.floor(value)), math.ceil(value)})
            extra_en = (
                f" DeepSpeed itself would accept {value:g} without rounding (its batch check only multiplies "
                f"and compares), so the global batch becomes fractional, and a torch DataLoader given this "
                f"batch size refuses it; write {' or '.join(map(str, near))}."
            )
            extra_zh = (
                f"DeepSpeed 本身会原样接受 {value:g}（其批次检查只做乘法和比较），全局批次因此成为小数，"
                f"而 torch DataLoader 不接受这样的批次大小；请写 {' 或 '.join(map(str, near))}。"
            )
        else:
            raise
        raise CalculatorError(
            field,
            value,
            err.accepted_en,
            err.accepted_zh,
            reason_en=err.en.split(" Accepted:")[0] + extra_en,
            reason_zh=err.zh.split("可接受：")[0] + extra_zh,
        ) from None


class TrainerStepCounts(BaseModel):
    """Optimizer steps the Hugging Face Trainer runs for a dataset (``trainer_step_counts``)."""

    micro_per_gpu: int
    per_epoch: int
    per_epoch_floor: int
    total: int | None = None
    total_floor: int | None = None


def trainer_step_counts(
    dataset_size: int, micro: int, ga: int, world_size: int, epochs: float | None = None
) -> TrainerStepCounts:
    """The Trainer's step counts, as ``Trainer.set_initial_training_values`` computes them.

    Each of the ``world_size`` ranks gets ceil(dataset_size / world_size) samples from the DistributedSampler (it pads
    by repeating samples) and ceil(that / micro) micro-batches; steps per epoch are
    ``len_dataloader // GA + int(len_dataloader % GA > 0)`` from transformers 4.52 and ``max(len_dataloader // GA, 1)``
    up to 4.51 (bisected on release wheels, see the card ``hf-trainer-step-counts-optimizer-updates``); the total
    is ``ceil(num_train_epochs × steps per epoch)``. ``tests/test_batch_steps_library.py`` checks this against the
    installed transformers and torch.
    """
    micro_per_gpu = math.ceil(math.ceil(dataset_size / world_size) / micro)
    per_epoch = micro_per_gpu // ga + int(micro_per_gpu % ga > 0)
    per_epoch_floor = max(micro_per_gpu // ga, 1)
    return TrainerStepCounts(
        micro_per_gpu=micro_per_gpu,
        per_epoch=per_epoch,
        per_epoch_floor=per_epoch_floor,
        total=None if epochs is None else math.ceil(epochs * per_epoch),
        total_floor=None if epochs is None else math.ceil(epochs * per_epoch_floor),
    )


class StepsBackSolve(BaseModel):
    """The batch a run used per optimizer step, back-solved from its samples and the steps it showed, when the
    message gives no batch setting ("why only 5 steps per epoch on a 20 image dataset?")."""

    dataset_size: int
    num_train_epochs: float | None = Field(None, description="Epochs the shown total covers; None when per epoch.")
    observed_steps: int
    per_epoch: bool = Field(description="Whether the shown count is per epoch.")
    samples_per_step: float = Field(description="dataset_size × epochs ÷ observed_steps, rounded to 0.1.")
    one_step_per_epoch: bool = Field(
        description="The run takes one step per epoch: its effective batch is at least the dataset."
    )

    def to_markdown(self, lang: Lang = "en") -> str:
        key = "steps_backsolve_epoch" if self.per_epoch else "steps_backsolve_total"
        per = f"{self.samples_per_step:,.1f}".removesuffix(".0")
        text = t(
            key,
            lang,
            samples=f"{self.dataset_size:,}",
            epochs=f"{self.num_train_epochs or 1:g}",
            observed=f"{self.observed_steps:,}",
            per=per,
        )
        sep = "" if lang == "zh" else " "
        if self.one_step_per_epoch:
            return text + sep + t("steps_backsolve_one_per_epoch", lang, samples=f"{self.dataset_size:,}")
        if self.samples_per_step < 1:
            return text + sep + t("steps_backsolve_below_one", lang)
        return text + sep + t("steps_backsolve_product", lang, per=per)


def back_solve_steps(
    dataset_size: int,
    observed_steps: int,
    num_train_epochs: float | None = None,
    per_epoch: bool = False,
) -> StepsBackSolve:
    """Samples per optimizer step = samples × epochs ÷ the steps the run showed (per epoch: samples ÷ steps).

    A step is one optimizer update (the HF Trainer's ``global_step``, DeepSpeed's ``global_steps``), so this is the
    product micro batch × GA × data-parallel GPUs the run really used — up to the rounding of each epoch's last,
    partial step. ``per_epoch`` says the count is per epoch, and then ``num_train_epochs`` does not enter.
    """
    ds = positive_int("dataset_size", dataset_size, maximum=MAX_DATASET)
    observed = positive_int("observed_steps", observed_steps, maximum=MAX_DATASET)
    if not isinstance(per_epoch, bool):
        raise CalculatorError("per_epoch", per_epoch, "true or false", "true 或 false")
    epochs = None if num_train_epochs is None else positive_float("num_train_epochs", num_train_epochs, maximum=1e6)
    if per_epoch:
        epochs = None
    per_epoch_steps = observed if per_epoch else observed / (epochs or 1)
    return StepsBackSolve(
        dataset_size=ds,
        num_train_epochs=epochs,
        observed_steps=observed,
        per_epoch=per_epoch,
        samples_per_step=round(ds * (epochs or 1) / observed, 1),
        one_step_per_epoch=math.isclose(per_epoch_steps, 1.0),
    )


def resolve_batch(
    train_batch_size: int | None = None,
    train_micro_batch_size_per_gpu: int | None = None,
    gradient_accumulation_steps: int | None = None,
    world_size: int = 1,
    *,
    seq_len: int | None = None,
    dataset_size: int | None = None,
    base_learning_rate: float | None = None,
    base_batch_size: int | None = None,
    per_device_train_batch_size: int | None = None,
    num_train_epochs: float | None = None,
    observed_steps: int | None = None,
    tensor_parallel_size: int = 1,
    pipeline_parallel_size: int = 1,
    sequence_parallel_size: int = 1,
    lang: Lang = "en",
) -> BatchResult:
    """Resolve DeepSpeed's three batch fields and explain the result.

    ``per_device_train_batch_size`` (Hugging Face Trainer's name) is accepted as
    the same thing as ``train_micro_batch_size_per_gpu``. Raises
    :class:`BatchConfigError` with DeepSpeed's assertion text when the values
    are inconsistent, and :class:`CalculatorError` for invalid numbers.

    ``world_size`` is the number of GPUs (processes). Tensor-, pipeline- and sequence/context-parallel groups share
    one batch, so the data-parallel size in the equation is ``world_size ÷ (TP × PP × SP)`` (DeepSpeed's
    ``dp_world_size``, the HF Trainer's ``get_total_train_batch_size``); with none given it is ``world_size``.

    With ``dataset_size`` it counts optimizer steps the way the Hugging Face Trainer does (the DistributedSampler
    gives each GPU ceil(samples / GPUs) samples, the dataloader ceil(that / micro) micro-batches, and each
    optimizer step takes GA of them; transformers 4.52 changed the last, partial group from dropped to counted).
    With ``num_train_epochs`` too it gives the total, and with ``observed_steps`` (what the run showed) the batch the
    run really used per step, so a mismatch points at the factor the formula misses.
    """
    if lang not in ("en", "zh"):
        raise CalculatorError("lang", lang, "'en' or 'zh'", "'en' 或 'zh'")
    if per_device_train_batch_size is not None:
        if train_micro_batch_size_per_gpu is not None and train_micro_batch_size_per_gpu != per_device_train_batch_size:
            raise CalculatorError(
                "per_device_train_batch_size",
                per_device_train_batch_size,
                "the same value as train_micro_batch_size_per_gpu (they are one setting)",
                "与 train_micro_batch_size_per_gpu 相同的值（二者是同一个设置）",
            )
        train_micro_batch_size_per_gpu = per_device_train_batch_size
    gpus = positive_int("world_size", world_size, maximum=MAX_WORLD)
    tp = positive_int("tensor_parallel_size", tensor_parallel_size, maximum=MAX_WORLD)
    pp = positive_int("pipeline_parallel_size", pipeline_parallel_size, maximum=MAX_WORLD)
    sp = positive_int("sequence_parallel_size", sequence_parallel_size, maximum=MAX_WORLD)
    if gpus % (tp * pp * sp):
        raise CalculatorError(
            "world_size",
            gpus,
            f"a multiple of TP × PP × SP = {tp * pp * sp} (each data-parallel replica spans that many GPUs)",
            f"TP × PP × SP = {tp * pp * sp} 的整数倍（每个数据并行副本占这么多张卡）",
        )
    ws = gpus // (tp * pp * sp)
    tb = None if train_batch_size is None else _batch_field("train_batch_size", train_batch_size)
    mb = (
        None
        if train_micro_batch_size_per_gpu is None
        else _batch_field("train_micro_batch_size_per_gpu", train_micro_batch_size_per_gpu)
    )
    ga = (
        None
        if gradient_accumulation_steps is None
        else _batch_field("gradient_accumulation_steps", gradient_accumulation_steps)
    )
    seq = None if seq_len is None else positive_int("seq_len", seq_len, maximum=MAX_SEQ)
    ds = None if dataset_size is None else positive_int("dataset_size", dataset_size, maximum=MAX_DATASET)

    try:
        tb, mb, ga, derived = deepspeed_fill(tb, mb, ga, ws)
    except BatchConfigError as err:
        raise BatchConfigError(err.deepspeed_message, err.en, err.zh, lang, field=err.field) from None
    _check_assertions(tb, mb, ga, ws, lang)
    if tb > MAX_BATCH:
        raise CalculatorError("train_batch_size", tb, f"at most {MAX_BATCH:,}", f"不超过 {MAX_BATCH:,}")

    notes_en = [
        f"Effective batch = micro × GA × data-parallel GPUs = {mb} × {ga} × {ws} = {tb} samples per optimizer step."
    ]
    notes_zh = [f"有效批次 = 微批次 × 梯度累积步数 × 数据并行卡数 = {mb} × {ga} × {ws} = {tb} 个样本/每次优化器更新。"]
    if ws != gpus:
        split = " × ".join(f"{name} {n}" for name, n in (("TP", tp), ("PP", pp), ("SP", sp)) if n > 1)
        notes_en.append(f"Data-parallel GPUs = {gpus} GPUs ÷ ({split}) = {ws}: a parallel group shares one batch.")
        notes_zh.append(f"数据并行卡数 = {gpus} 张卡 ÷ ({split}) = {ws}：一个并行组共用一份数据。")
    if ws > 1:
        notes_en.append(
            f"Not micro × GA = {mb * ga}: every one of the {ws} data-parallel GPUs contributes its own micro-batches."
        )
        notes_zh.append(f"不是 micro × GA = {mb * ga}：{ws} 张数据并行卡每张都贡献自己的微批次。")
    epochs = None if num_train_epochs is None else positive_float("num_train_epochs", num_train_epochs, maximum=1e6)
    observed = None if observed_steps is None else positive_int("observed_steps", observed_steps, maximum=MAX_DATASET)
    counts = None if ds is None else trainer_step_counts(ds, mb, ga, ws, epochs)
    if counts is not None:
        notes_en.append(
            f"{ds:,} samples → {counts.micro_per_gpu:,} micro-batches per GPU per epoch → {counts.per_epoch:,} "
            f"optimizer steps per epoch (⌈{counts.micro_per_gpu:,} / {ga}⌉; HF Trainer in transformers ≤ 4.51 "
            f"counts ⌊{counts.micro_per_gpu:,} / {ga}⌋ = {counts.per_epoch_floor:,})."
        )
        notes_zh.append(
            f"{ds:,} 个样本 → 每卡每个 epoch {counts.micro_per_gpu:,} 个微批次 → 每个 epoch {counts.per_epoch:,} 次"
            f"优化器更新（⌈{counts.micro_per_gpu:,} / {ga}⌉；transformers ≤ 4.51 的 HF Trainer 按 "
            f"⌊{counts.micro_per_gpu:,} / {ga}⌋ = {counts.per_epoch_floor:,} 计）。"
        )
    per_observed = None
    if observed is not None and ds is not None:
        per_observed = round(ds * (epochs or 1) / observed, 1)
    lr = None
    if base_learning_rate is not None or base_batch_size is not None:
        if base_batch_size is None:
            raise CalculatorError(
                "base_batch_size",
                base_batch_size,
                "the effective batch the base_learning_rate was tuned for",
                "base_learning_rate 所对应的有效批次",
            )
        lr = learning_rate_guidance(
            None
            if base_learning_rate is None
            else positive_float("base_learning_rate", base_learning_rate, maximum=100.0),
            positive_int("base_batch_size", base_batch_size, maximum=MAX_BATCH),
            tb,
        )
    return BatchResult(
        train_batch_size=tb,
        train_micro_batch_size_per_gpu=mb,
        gradient_accumulation_steps=ga,
        world_size=gpus,
        data_parallel_size=ws,
        derived=derived,
        formula=f"train_batch_size = {mb} × {ga} × {ws} = {tb}",
        samples_per_optimizer_step=tb,
        tokens_per_optimizer_step=None if seq is None else tb * seq,
        optimizer_steps_per_epoch=None if counts is None else counts.per_epoch,
        optimizer_steps_per_epoch_before_4_52=None if counts is None else counts.per_epoch_floor,
        micro_batches_per_epoch_per_gpu=None if counts is None else counts.micro_per_gpu,
        dataset_size=ds,
        num_train_epochs=epochs,
        total_optimizer_steps=None if counts is None else counts.total,
        total_optimizer_steps_before_4_52=None if counts is None else counts.total_floor,
        observed_steps=observed,
        samples_per_observed_step=per_observed,
        what_if=_what_if(mb, ga, ws),
        learning_rate=lr,
        notes_en=notes_en,
        notes_zh=notes_zh,
    )


def resolve_hf_batch(
    per_device_train_batch_size: int, gradient_accumulation_steps: int = 1, world_size: int = 1, **kwargs: Any
) -> BatchResult:
    """Hugging Face Trainer's view: total batch = per_device × GA × world_size (the same equation)."""
    return resolve_batch(
        train_micro_batch_size_per_gpu=per_device_train_batch_size,
        gradient_accumulation_steps=gradient_accumulation_steps,
        world_size=world_size,
        **kwargs,
    )
