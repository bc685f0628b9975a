"""HF Trainer ``{'loss': …, 'learning_rate': …, 'epoch': …}`` lines and DeepSpeed step / loss-scale lines.

Read: Trainer log dicts (``loss``, ``learning_rate``, ``grad_norm``, ``epoch``; the final ``train_runtime`` dict);
DeepSpeed ``[Rank 0] step=2000, skipped=1995, lr=[0.001], mom=[…]`` and fp16 ``OVERFLOW! Rank 0 Skipping step.
Attempted loss scale: 65536, reducing to 32768`` lines (``[deepscale]`` in older releases, ``[deepspeed]`` now).

What each pattern usually means: overflow only in the first steps is normal dynamic loss scaling; a scale
falling to 1 or almost every step skipped means fp16 cannot represent the gradients (use bf16); a learning rate
that reaches 0 while logs continue means the schedule was built for fewer steps than the run takes; loss 0.0 or
nan with fp16 means overflow; a loss near 0 after many epochs means memorisation.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .models import Artifact, Cause

_DICT = re.compile(r"\{'(?:loss|train_runtime|eval_loss)'[^{}\n]{0,600}\}")
_KV = re.compile(r"'(\w+)':\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|nan|inf|-inf)")
_STEP = re.compile(r"step=(\d{1,12}),\s*skipped=(\d{1,12}),\s*lr=\[([^\]]*)\]")
_OVERFLOW = re.compile(
    r"OVERFLOW!\s*Rank\s*\d+\s*Skipping step\.\s*Attempted loss scale:\s*(\d{1,30}(?:\.\d{1,12})?)(?:,\s*reducing to\s*(\d{1,30}(?:\.\d{1,12})?))?"
)
_MIN_SCALE = re.compile(r"Current loss scale already at minimum")
# The HF Trainer's start-up summary ("***** Running training *****", then "Num examples = 698", "Num Epochs = 3",
# "Total train batch size (w. parallel, distributed & accumulation) = 32", "Total optimization steps = 66").
_BANNER = {
    "banner_examples": re.compile(r"Num examples\s*=\s*(\d[\d,]{0,14})"),
    "banner_epochs": re.compile(r"Num Epochs\s*=\s*(\d[\d,]{0,8})"),
    "banner_total_batch": re.compile(r"Total train batch size[^=\n]{0,60}=\s*(\d[\d,]{0,10})"),
    "banner_steps": re.compile(r"Total optimization steps\s*=\s*(\d[\d,]{0,14})"),
}
# How many examples the user says their data has, outside the summary: "Number of raw training samples: 7473",
# "my training dataset, which is 7473", "7473 samples", "数据集有 7473 条".
_DATA_COUNT = re.compile(
    r"(?:samples?|examples?|dataset|training data|records|样本|数据集?|条数)[^\n\d=]{0,40}?(?<![\d.])(\d[\d,]{2,14})(?![\d.%])|"
    r"(?<![\d.])(\d[\d,]{2,14})\s*(?:raw\s+)?(?:training\s+)?(?:samples|examples|records|rows of data|条(?:样本|数据)?|个样本)",
    re.I,
)
# A schedule the user set that decays the LR after warmup: `--lr_scheduler_type "cosine"`, `lr_scheduler_type: linear`.
_DECAY_SCHEDULE = re.compile(
    r"lr_scheduler_type\W{0,4}(cosine(?:_with_restarts|_with_min_lr)?|linear|polynomial|inverse_sqrt)\b", re.I
)
#: The user's count must exceed the Trainer's by this factor to be another count (not a rounding or a split off).
_FEWER_FACTOR = 1.5


def _num(s: str) -> float | None:
    """A logged number; ``None`` for nan/inf (kept out of the JSON dump, counted separately)."""
    v = float(s)
    return v if math.isfinite(v) else None


def read(text: str) -> list[Artifact]:
    """At most one trainer_log and one deepspeed_log artifact, spanning all their lines."""
    out: list[Artifact] = []
    rows: list[dict[str, float | None]] = []
    spans: list[tuple[int, int]] = []
    final: dict[str, float | None] = {}
    for m in _DICT.finditer(text):
        d = {k: _num(v) for k, v in _KV.findall(m.group(0))}
        if "train_runtime" in d:
            final = d
        elif "loss" in d:
            rows.append(d)
        spans.append((m.start(), m.end()))
    if rows:
        f: dict[str, Any] = {
            "log_points": len(rows),
            "log_loss": [r["loss"] for r in rows][:2000],
            "log_nonfinite_loss": sum(1 for r in rows if r["loss"] is None),
            "log_lr": [r.get("learning_rate") for r in rows][:2000],
            "log_epoch": [r.get("epoch") for r in rows][:2000],
        }
        if decay := decay_schedule(text):
            f["named_decay_schedule"] = decay
        if any("grad_norm" in r for r in rows):
            f["log_grad_norm"] = [r.get("grad_norm") for r in rows][:2000]
        if final:
            f["log_finished"] = True
        out.append(
            Artifact(
                kind="trainer_log",
                start=spans[0][0],
                end=spans[-1][1],
                key_line=text[spans[0][0] : spans[0][1]][:240],
                fields=f,
                framework="transformers",
            )
        )
    steps = [(m, int(m.group(1)), int(m.group(2))) for m in _STEP.finditer(text)]
    overflows = [(m, float(m.group(1)), float(m.group(2)) if m.group(2) else None) for m in _OVERFLOW.finditer(text)]
    minimum = _MIN_SCALE.search(text)
    if steps or overflows:
        marks = [m.start() for m, *_ in steps] + [m.start() for m, *_ in overflows]
        ends = [m.end() for m, *_ in steps] + [m.end() for m, *_ in overflows]
        f = {"ds_overflow_events": len(overflows)}
        if overflows:
            f["ds_loss_scale_first"] = overflows[0][1]
            f["ds_loss_scale_last"] = overflows[-1][2] if overflows[-1][2] is not None else overflows[-1][1]
        if steps:
            f["ds_step"], f["ds_skipped"] = steps[-1][1], steps[-1][2]
            lr = steps[-1][0].group(3).split(",")[0].strip()
            if re.fullmatch(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", lr):
                f["ds_lr"] = float(lr)
        if minimum:
            f["ds_loss_scale_at_minimum"] = True
        first_mark = min(marks)
        line_end = text.find("\n", first_mark)
        out.append(
            Artifact(
                kind="deepspeed_log",
                start=text.rfind("\n", 0, first_mark) + 1,
                end=max(ends),
                key_line=text[first_mark : line_end if line_end > 0 else first_mark + 200][:240],
                fields=f,
                framework="deepspeed",
            )
        )
    return out


def _int(s: str) -> int:
    return int(s.replace(",", ""))


def decay_schedule(text: str) -> str | None:
    """The decaying LR schedule ``text`` sets (``--lr_scheduler_type "cosine"``), lower-cased; None if none."""
    m = _DECAY_SCHEDULE.search(text)
    return m.group(1).lower() if m else None


def user_example_count(text: str, rows: int) -> int | None:
    """The largest example count ``text`` states that is well above the Trainer's ``rows`` (None if none is)."""
    counts = [_int(m.group(1) or m.group(2)) for m in _DATA_COUNT.finditer(text)]
    bigger = [c for c in counts if c > _FEWER_FACTOR * rows]
    return max(bigger) if bigger else None


def read_banner(text: str) -> list[Artifact]:
    """The Trainer's start-up summary, and the example count the user states elsewhere (``banner_user_examples``)."""
    found = {k: rx.search(text) for k, rx in _BANNER.items()}
    examples = found["banner_examples"]
    if examples is None:
        return []
    marks = [m for m in found.values() if m is not None]
    start, end = min(m.start() for m in marks), max(m.end() for m in marks)
    fields: dict[str, Any] = {k: _int(m.group(1)) for k, m in found.items() if m is not None}
    mine = user_example_count(text[:start] + "\n" + text[end:], fields["banner_examples"])
    if mine:
        fields["banner_user_examples"] = mine
    return [
        Artifact(
            kind="trainer_banner",
            start=start,
            end=end,
            key_line=text[examples.start() : examples.end()][:240],
            fields=fields,
            framework="transformers",
        )
    ]


def _banner_causes(f: dict[str, Any]) -> list[Cause]:
    """Fewer examples in the Trainer's summary than the user's data has: packed (or filtered) before training."""
    rows, mine = f["banner_examples"], f.get("banner_user_examples")
    if not mine or rows <= 0:
        return []
    per_row = mine / rows
    epochs, batch, steps = f.get("banner_epochs"), f.get("banner_total_batch"), f.get("banner_steps")
    steps_en = steps_zh = ""
    if epochs and batch:
        est = math.ceil(rows / batch) * epochs
        logged_en = f" (the log says {steps})" if steps else ""
        logged_zh = f"（日志里是 {steps}）" if steps else ""
        steps_en = (
            f" Steps follow the rows: ⌈{rows} ÷ {batch} per step⌉ × {epochs} epochs ≈ {est} optimizer steps{logged_en}."
        )
        steps_zh = f"步数按行数算：⌈{rows} ÷ 每步 {batch}⌉ × {epochs} 个 epoch ≈ {est} 个优化器步{logged_zh}。"
    return [
        Cause(
            id="log.fewer_examples_than_data",
            likelihood="likely",
            title_en=f"The Trainer counts {rows} rows, not your {mine} examples: the data was packed (or filtered) before "
            "training",
            title_zh=f"Trainer 数到的是 {rows} 行而不是你的 {mine} 条：数据在训练前被 packing 拼接（或被过滤）了",
            because_en=f"`Num examples` is the length of the dataset the Trainer received. With packing (TRL SFT "
            f"`packing=True`, LLaMA-Factory `packing`) examples are concatenated into rows of max_length tokens, so "
            f"{mine} examples become {rows} rows (about {per_row:.1f} per row) and nothing is dropped.{steps_en}",
            because_zh=f"`Num examples` 是 Trainer 收到的数据集长度。开 packing（TRL SFT 的 `packing=True`、LLaMA-Factory 的 "
            f"`packing`）时，多条样本被拼接成长度为 max_length 的行，所以 {mine} 条样本变成 {rows} 行（每行约 {per_row:.1f} 条），"
            f"数据并没有丢。{steps_zh}",
            fix_en="Check `packing` in your config: with packing off, `Num examples` equals your example count. If packing "
            "is off, count the examples a length or template filter dropped.",
            fix_zh="检查配置里的 `packing`：关掉 packing 时 `Num examples` 就等于样本数；如果没开 packing，检查长度或模板过滤掉了多少样本。",
            card_ids=["sft-packing-memory-and-steps"],
        )
    ]


def _lr_never_stepped(first_loss: float) -> Cause:
    """The logged learning rate still exactly 0 at the first two log points (LLaMA-Factory #964: fp16, warmup 100,
    ``'loss': 243687.9, 'learning_rate': 0.0``). The HF Trainer steps the scheduler only after an optimizer step that
    was not skipped (``accelerator.optimizer_step_was_skipped``, transformers 4.36.0, 4.46.0 and 5.23.0), and
    DeepSpeed skips both on an fp16 overflow, so a warmup that starts at 0 stays there while every step overflows."""
    huge_en = f" The first logged loss, {first_loss:g}, is the overflow showing." if first_loss >= 1000 else ""
    huge_zh = f"第一个记录的 loss {first_loss:g} 就是溢出的表现。" if first_loss >= 1000 else ""
    return Cause(
        id="log.lr_never_stepped",
        likelihood="likely",
        title_en="The learning rate is still 0.0 at every logged step: every optimizer step so far was skipped (fp16 "
        "overflow), so the scheduler never left its warmup start",
        title_zh="学习率在每个记录点都还是 0.0：到目前为止每个优化器步都被跳过了（fp16 溢出），调度器一直停在 warmup 起点",
        because_en="After a few steps a warmup schedule gives a learning rate above 0, but the HF Trainer calls "
        "`lr_scheduler.step()` only when the optimizer step was not skipped, and fp16 loss scaling (torch GradScaler or "
        "DeepSpeed) skips a step whose gradients overflow. A rate of exactly 0.0 at two log points means no step has "
        f"updated the weights yet.{huge_en}",
        because_zh="warmup 几步之后学习率本应大于 0，但 HF Trainer 只在优化器步没被跳过时才调用 `lr_scheduler.step()`，而 "
        "fp16 的 loss scaling（torch GradScaler 或 DeepSpeed）遇到梯度溢出就跳过这一步。两个记录点的学习率都正好是 0.0，"
        f"说明还没有一步真正更新过权重。{huge_zh}",
        fix_en="Train in bf16 (Ampere or newer; some models, Baichuan2 and ChatGLM among them, overflow in fp16) or fp32. "
        "A few skipped steps at the start are normal loss-scale calibration; a rate still 0 after tens of steps is not.",
        fix_zh="改用 bf16（Ampere 及更新的卡；Baichuan2、ChatGLM 等模型在 fp16 下会溢出）或 fp32。开头跳过几步是 loss scale "
        "在校准，属正常；几十步后学习率仍是 0 就不正常了。",
        card_ids=["deepspeed-fp16-overflow-skipped-steps", "fp16-vs-bf16-stability"],
    )


def _lr_held_at_peak(schedule: str, lr: float) -> Cause:
    """A decaying schedule set, and the logged LR flat at its peak (Qwen #672: `--lr_scheduler_type "cosine"`, 0.0003
    from epoch 72 to 160). With the HF Trainer and DeepSpeed, a scheduler block in the DeepSpeed config builds the
    scheduler instead (transformers ``deepspeed_optim_sched``), and DeepSpeed's WarmupLR holds the peak after warmup."""
    return Cause(
        id="log.lr_held_at_peak",
        likelihood="likely",
        title_en=f"The learning rate stays at {lr:g} although the schedule is {schedule}: a scheduler block in the "
        "DeepSpeed config (WarmupLR) replaces the Trainer's",
        title_zh=f"设的是 {schedule}，学习率却一直停在 {lr:g}：DeepSpeed 配置里的 scheduler 块（WarmupLR）取代了 Trainer 的调度器",
        because_en=f"A {schedule} schedule lowers the LR after warmup, but the last logged points all show {lr:g}, the "
        "peak. With the HF Trainer and DeepSpeed, a `scheduler` block in ds_config makes DeepSpeed build the scheduler "
        "and `--lr_scheduler_type` is not used; WarmupLR (in many repos' bundled ds_config files) stays at "
        "`warmup_max_lr` after warmup.",
        because_zh=f"{schedule} 调度在 warmup 后会降低学习率，但最后几个记录点都是峰值 {lr:g}。HF Trainer 配 DeepSpeed 时，"
        "ds_config 里只要有 `scheduler` 块，调度器就由 DeepSpeed 按它来建，`--lr_scheduler_type` 不再使用；很多仓库自带的 "
        "ds_config 用的 WarmupLR 在 warmup 后一直停在 `warmup_max_lr`。",
        fix_en="Delete the `scheduler` block from the DeepSpeed config (the Trainer then builds its own schedule), or use "
        'WarmupDecayLR / WarmupCosineLR with "auto" values.',
        fix_zh='删掉 DeepSpeed 配置里的 `scheduler` 块（Trainer 就会自己建调度器），或改用参数写 "auto" 的 '
        "WarmupDecayLR / WarmupCosineLR。",
        card_ids=["deepspeed-config-scheduler-overrides-trainer"],
    )


def _trainer_causes(f: dict[str, Any]) -> list[Cause]:
    loss = [x for x in f["log_loss"]]  # None where the log said nan/inf
    lrs = [x for x in f["log_lr"] if isinstance(x, float)]
    epochs = [x for x in f["log_epoch"] if isinstance(x, float)]
    out: list[Cause] = []
    bad = f.get("log_nonfinite_loss", 0)
    first = next((x for x in loss if x is not None), None)
    zeros_after = len(loss) >= 3 and first is not None and first > 0.05 and all(x == 0.0 for x in loss[-2:])
    if (bad and first is not None) or zeros_after:
        what = "nan/inf" if bad else "exactly 0.0"
        out.append(
            Cause(
                id="log.loss_nan_or_zero",
                likelihood="likely",
                title_en=f"The loss became {what}: numerical overflow",
                title_zh=f"loss 变成 {what}：数值溢出",
                because_en=f"The logged loss goes from {first:g} to {what} over {len(loss)} points; with fp16 this is gradient/activation "
                "overflow (the optimizer steps are being skipped or the weights are already nan).",
                because_zh=f"记录的 loss 从 {first:g} 变成 {what}（共 {len(loss)} 个点）；fp16 下这是梯度/激活溢出（优化器步被跳过或权重已是 nan）。",
                fix_en="Train in bf16 (Ampere or newer) or fp32, lower the learning rate, keep gradient clipping (max_grad_norm 1.0), and "
                "restart from a checkpoint before the first nan.",
                fix_zh="改用 bf16（Ampere 及更新 GPU）或 fp32，降低学习率，保留梯度裁剪（max_grad_norm 1.0），从第一次出现 nan 之前的 checkpoint 重新开始。",
                card_ids=["fp16-vs-bf16-stability"],
            )
        )
    # (not the end of a schedule that decays to 0: the log's first points are early in the run)
    early = not epochs or epochs[0] < 0.5
    if len(lrs) >= 2 and lrs[0] == lrs[1] == 0.0 and early and first is not None:
        out.append(_lr_never_stepped(first))
    decay, tail = f.get("named_decay_schedule"), lrs[-5:]
    if decay and len(lrs) >= 5 and len(set(tail)) == 1 and tail[0] > 0 and tail[0] == max(lrs):
        out.append(_lr_held_at_peak(decay, tail[0]))
    if len(lrs) >= 3:
        peak = max(lrs)
        zero_at = next((i for i, x in enumerate(lrs) if peak > 0 and x <= peak * 1e-3 and i > lrs.index(peak)), None)
        if zero_at is not None and zero_at < len(lrs) - 1 and all(x <= peak * 1e-3 for x in lrs[zero_at:]):
            out.append(
                Cause(
                    id="log.lr_schedule_ended_early",
                    likelihood="likely",
                    title_en="The learning rate reached 0 before training ended",
                    title_zh="学习率在训练结束前就降到了 0",
                    because_en=f"The LR falls from {peak:.3g} to ~0 at log point {zero_at + 1} of {len(lrs)} and stays there: the scheduler "
                    "was built for fewer optimizer steps than the run takes, so the remaining steps do nothing.",
                    because_zh=f"学习率从 {peak:.3g} 在第 {zero_at + 1}/{len(lrs)} 个记录点降到约 0 并保持：调度器按更少的优化器步数构建，剩余的步骤不再更新。",
                    fix_en="Compute total steps from optimizer steps (samples ÷ (micro × GA × world_size) × epochs), not from micro-batches; "
                    'with DeepSpeed\'s scheduler set total_num_steps to "auto"; check max_steps vs num_train_epochs.',
                    fix_zh="总步数应按优化器步计算（样本数 ÷ (micro × GA × world_size) × epoch 数），而不是按微批次；使用 DeepSpeed 调度器时把 "
                    'total_num_steps 设为 "auto"；检查 max_steps 与 num_train_epochs。',
                    card_ids=["deepspeed-hf-auto-values", "effective-batch-formula"],
                )
            )
        elif f.get("log_finished") and lrs[-1] < lrs[-2] and lrs[-1] >= 0.2 * peak:
            out.append(
                Cause(
                    id="log.lr_schedule_not_finished",
                    likelihood="possible",
                    title_en="Training ended while the learning rate was still high",
                    title_zh="训练结束时学习率仍然较高",
                    because_en=f"The last logged LR is {lrs[-1]:.3g} ({lrs[-1] / peak:.0%} of the peak {peak:.3g}) although training finished: "
                    "the schedule was built for more steps than were run.",
                    because_zh=f"最后记录的学习率为 {lrs[-1]:.3g}（峰值 {peak:.3g} 的 {lrs[-1] / peak:.0%}），但训练已结束：调度器按更多步数构建。",
                    fix_en="Make the scheduler's total steps equal the optimizer steps actually run (check GA and world size in the count).",
                    fix_zh="让调度器的总步数等于实际运行的优化器步数（计数时考虑 GA 和 world size）。",
                    card_ids=["effective-batch-formula"],
                )
            )
    finite = [x for x in loss if x is not None]
    if len(finite) >= 4 and not out:
        for i in range(3, len(finite)):
            base = sorted(finite[max(0, i - 5) : i])[len(finite[max(0, i - 5) : i]) // 2]
            if base > 0 and finite[i] >= 2.0 * base and finite[i] - base >= 0.5:
                out.append(
                    Cause(
                        id="log.loss_spike",
                        likelihood="possible",
                        title_en="A sudden loss jump",
                        title_zh="loss 突然跳升",
                        because_en=f"Loss jumps from about {base:.4g} to {finite[i]:.4g} at log point {i + 1}: usually a too-high learning "
                        "rate (often right after warmup), a bad batch, or fp16 overflow.",
                        because_zh=f"loss 在第 {i + 1} 个记录点从约 {base:.4g} 跳到 {finite[i]:.4g}：通常是学习率过高（常在 warmup 结束后）、"
                        "异常批次或 fp16 溢出。",
                        fix_en="Lower the peak LR or lengthen warmup, keep gradient clipping, inspect the batch at that step, prefer bf16.",
                        fix_zh="降低峰值学习率或延长 warmup，保留梯度裁剪，检查该步的数据，优先使用 bf16。",
                        card_ids=["fp16-vs-bf16-stability"],
                    )
                )
                break
        if not out and finite[-1] < 0.01 and finite[0] > 0.2 and epochs and epochs[-1] >= 3:
            out.append(
                Cause(
                    id="log.memorising",
                    likelihood="possible",
                    title_en="Loss near zero after many epochs: the model memorises the data",
                    title_zh="多个 epoch 后 loss 接近 0：模型在背训练数据",
                    because_en=f"Loss {finite[-1]:.4g} at epoch {epochs[-1]:g}: training loss this low means the data is memorised; it says "
                    "nothing about quality on new inputs.",
                    because_zh=f"第 {epochs[-1]:g} 个 epoch 时 loss 为 {finite[-1]:.4g}：训练 loss 这么低说明在背数据，不代表对新输入的效果。",
                    fix_en="Hold out an eval set and stop when eval loss rises; use fewer epochs (1–3 for fine-tuning) or more data.",
                    fix_zh="留出验证集，验证 loss 上升时停止；减少 epoch（微调通常 1–3 个）或增加数据。",
                    card_ids=[],
                )
            )
        elif not out and len(set(finite[-5:])) == 1 and len(finite) >= 5:
            out.append(
                Cause(
                    id="log.loss_flat",
                    likelihood="possible",
                    title_en="The loss does not move",
                    title_zh="loss 完全不动",
                    because_en=f"The last {min(5, len(finite))} logged losses are identical ({finite[-1]:g}): nothing is being updated "
                    "(LR 0, frozen/no trainable parameters, or every step skipped).",
                    because_zh=f"最后 {min(5, len(finite))} 个 loss 完全相同（{finite[-1]:g}）：参数没有更新（学习率为 0、参数被冻结/无可训练参数，或每步都被跳过）。",
                    fix_en="Check trainable parameters (`model.print_trainable_parameters()`), the logged LR and skipped steps.",
                    fix_zh="检查可训练参数（`model.print_trainable_parameters()`）、记录的学习率和被跳过的步数。",
                    card_ids=[],
                )
            )
    return out


def _ds_causes(f: dict[str, Any]) -> list[Cause]:
    out: list[Cause] = []
    n = f.get("ds_overflow_events", 0)
    step, skipped = f.get("ds_step"), f.get("ds_skipped")
    last = f.get("ds_loss_scale_last")
    mostly_skipped = step is not None and step >= 20 and skipped is not None and skipped >= 0.5 * step
    collapsed = f.get("ds_loss_scale_at_minimum") or (last is not None and last <= 1)
    if mostly_skipped or collapsed:
        # (the log may say the scale hit its minimum without printing the scale: "Current loss scale already at minimum")
        fell_en = f"the loss scale fell to {last:g}" if last is not None else "the loss scale reached its minimum"
        fell_zh = f"loss scale 降到了 {last:g}" if last is not None else "loss scale 已降到最小值"
        what_en = f"{skipped} of {step} steps were skipped" if mostly_skipped else fell_en
        what_zh = f"{step} 步中跳过了 {skipped} 步" if mostly_skipped else fell_zh
        out.append(
            Cause(
                id="log.fp16_overflow_persistent",
                likelihood="likely",
                title_en="fp16 overflows on (almost) every step",
                title_zh="fp16 几乎每一步都溢出",
                because_en=f"DeepSpeed's dynamic loss scaling could not find a working scale: {what_en}. Skipped steps do not update the "
                "model, so the run is not training.",
                because_zh=f"DeepSpeed 的动态 loss scale 找不到可用的缩放值：{what_zh}。被跳过的步不更新模型，训练实际上没有进行。",
                fix_en='Switch to bf16 (`"bf16": {"enabled": true}`, Ampere or newer) or fp32; models pre-trained in bf16 (T5, most '
                "LLMs) overflow in fp16. Otherwise lower the LR and check the data.",
                fix_zh='改用 bf16（`"bf16": {"enabled": true}`，Ampere 及更新 GPU）或 fp32；用 bf16 预训练的模型（T5、大多数大模型）在 fp16 '
                "下会溢出。否则降低学习率并检查数据。",
                card_ids=["fp16-vs-bf16-stability"],
            )
        )
    elif n:
        out.append(
            Cause(
                id="log.fp16_overflow_warmup",
                likelihood="likely",
                title_en="Occasional OVERFLOW messages are normal fp16 loss scaling",
                title_zh="偶尔出现 OVERFLOW 是 fp16 loss scale 的正常行为",
                because_en=f"{n} overflow event(s), scale {f.get('ds_loss_scale_first', 0):g} → {last:g}: dynamic loss scaling starts high "
                "(2^16 by default) and halves until gradients fit; a few skipped steps, mostly at the start, are expected.",
                because_zh=f"{n} 次溢出，scale {f.get('ds_loss_scale_first', 0):g} → {last:g}：动态 loss scale 从较大值（默认 2^16）开始，溢出就减半直到"
                "梯度能表示；开头少量跳步是正常的。",
                fix_en="Nothing to fix while skipped steps stay a small fraction and the scale stays well above 1; if they keep coming, use bf16.",
                fix_zh="只要跳过的步数占比很小且 scale 远大于 1 就无需处理；若持续出现，改用 bf16。",
                card_ids=["fp16-vs-bf16-stability"],
            )
        )
    return out


def causes(a: Artifact) -> list[Cause]:
    """Causes for a trainer log, the Trainer's start-up summary or a DeepSpeed log."""
    if a.kind == "trainer_banner":
        return _banner_causes(a.fields)
    return _trainer_causes(a.fields) if a.kind == "trainer_log" else _ds_causes(a.fields)
