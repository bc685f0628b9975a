"""Turn a library's verdict into the doctor's findings, and keep our own checks honest about it.

Why: the libraries decide whether a run starts (issue #13). When one raises, the
report quotes its exact exception text first, then our explanation and fix. Our own
checks that claimed "will fail" become advice when the library accepts the config,
and "not confirmed" when the library stopped earlier on another error. When no
library could be loaded, our own checks stand alone and the report says so.
"""

from __future__ import annotations

import re
from typing import Any

from .library import LibraryVerdict
from .models import ParsedConfig

# (pattern on the library's message, key or None (taken from group "key"), explanation en, zh, fix en, zh)
_EXPLAIN: list[tuple[re.Pattern[str], str | None, str, str, str, str]] = [
    (re.compile(p, re.S), k, en, zh, fen, fzh)
    for p, k, en, zh, fen, fzh in [
        (
            r"Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided",
            "train_micro_batch_size_per_gpu",
            'No batch size at all. Hugging Face Trainer and Accelerate only replace "auto"; they do not add a missing key.',
            '完全没有批次大小。Hugging Face Trainer 和 Accelerate 只替换 "auto"，不会补上缺失的键。',
            'Add "train_micro_batch_size_per_gpu": "auto" (with HF Trainer) or a number.',
            '加上 "train_micro_batch_size_per_gpu": "auto"（配合 HF Trainer）或一个数字。',
        ),
        (
            r"train_batch_size is not equal to micro_batch_per_gpu \* gradient_acc_step \* world_size",
            "train_batch_size",
            "DeepSpeed requires train_batch_size = micro batch × gradient accumulation × data-parallel GPUs, exactly.",
            "DeepSpeed 要求 train_batch_size 严格等于 微批次 × 梯度累积 × 数据并行卡数。",
            'Drop train_batch_size (DeepSpeed derives it) or set it to "auto" with HF Trainer.',
            '删掉 train_batch_size（DeepSpeed 会自动推导），或配合 HF Trainer 设为 "auto"。',
        ),
        (
            r"bfloat16 and fp16 modes cannot be simultaneously enabled",
            "bf16.enabled",
            'Both fp16 and bf16 are enabled. DeepSpeed reads the strings "true"/"True" as true too.',
            'fp16 和 bf16 同时启用。DeepSpeed 也会把字符串 "true"/"True" 当作 true。',
            "Enable only one: bf16 on Ampere or newer GPUs, fp16 otherwise. Write JSON booleans (true/false, no quotes).",
            "只启用一个：Ampere 及更新的 GPU 用 bf16，否则用 fp16。写 JSON 布尔值（true/false，不加引号）。",
        ),
        (
            r"^1 validation error for \w+\n(?P<key>\w+)\n\s+Input should be greater than 0",
            None,
            'This size must be a positive number: 0 and -1 do not mean "default" or "unlimited" in DeepSpeed\'s ZeRO config.',
            "该大小必须是正数：在 DeepSpeed 的 ZeRO 配置里，0 和 -1 并不表示“默认”或“不限”。",
            "Remove the key to get DeepSpeed's default (5e8), or write a positive integer such as 2e8.",
            "删掉该键以使用 DeepSpeed 默认值（5e8），或写一个正整数，例如 2e8。",
        ),
        (
            r"Partial offloading only supported for ZeRO Stage 3",
            "zero_optimization.offload_optimizer.ratio",
            "offload_optimizer.ratio (partial optimizer offload, ZeRO++/SuperOffload) works only with ZeRO stage 3.",
            "offload_optimizer.ratio（部分优化器 offload）只支持 ZeRO stage 3。",
            "Remove ratio (the whole optimizer is offloaded) or use stage 3.",
            "删掉 ratio（整个优化器都 offload），或改用 stage 3。",
        ),
        (
            r"\n(?P<key>[\w.]+)\n\s+Extra inputs are not permitted",
            None,
            "DeepSpeed's ZeRO config is a pydantic model with extra='forbid': a key it does not know (a typo, or one from "
            "another DeepSpeed version) stops start-up.",
            "DeepSpeed 的 ZeRO 配置是 extra='forbid' 的 pydantic 模型：它不认识的键（拼写错误或其他版本的键）会导致启动失败。",
            "Correct the spelling or remove the key.",
            "改正拼写或删除该键。",
        ),
        (
            r"'(?:zero_optimization\.)?(?P<key>[\w.]+)' is no longer supported|removed; '(?P<key2>[\w.]+)'",
            None,
            "This setting was removed from current DeepSpeed; the message above names what to use instead.",
            "该设置已从当前 DeepSpeed 中移除；上面的消息给出了替代方案。",
            "Remove it from the config (see the linked DeepSpeed issue).",
            "从配置中删除它（参见消息中链接的 DeepSpeed issue）。",
        ),
        (
            r"has been removed|Apex AMP integration has been removed",
            None,
            "This setting was removed from current DeepSpeed; the message above names what to use instead.",
            "该设置已从当前 DeepSpeed 中移除；上面的消息给出了替代方案。",
            "Remove that block from the config.",
            "从配置中删除该部分。",
        ),
        (
            r"gradient_allreduce_op='sum' is not supported",
            "gradient_allreduce_op",
            "Summing (instead of averaging) gradients is not supported with this ZeRO stage / feature.",
            "对梯度求和（而不是求平均）在该 ZeRO stage / 特性下不受支持。",
            'Remove gradient_allreduce_op (default "mean").',
            '删掉 gradient_allreduce_op（默认 "mean"）。',
        ),
        (
            r"mismatch TrainingArguments\s+values:\n- ds (?P<key>[\w.]+)=",
            None,
            "Hugging Face Trainer compares every explicit DeepSpeed value it also controls with the TrainingArguments "
            "(integrations/deepspeed.py, fill_match) and refuses disagreements.",
            "Hugging Face Trainer 会把它也能控制的每个显式 DeepSpeed 值与 TrainingArguments 比较（integrations/deepspeed.py 的 "
            "fill_match），不一致就拒绝启动。",
            'Set those DeepSpeed values to "auto" (the Trainer fills them), or make both sides agree.',
            '把这些 DeepSpeed 值设为 "auto"（由 Trainer 填充），或让两边一致。',
        ),
        (
            r"`(?P<key>[\w.]+)` not found in kwargs",
            None,
            '"auto" on a key that neither Hugging Face Trainer nor Accelerate fills: it reaches DeepSpeed as the string "auto".',
            '在 Hugging Face Trainer 和 Accelerate 都不会填充的键上用了 "auto"：它会以字符串 "auto" 传给 DeepSpeed。',
            "Write a value (or remove the key for DeepSpeed's default).",
            "写一个具体值（或删掉该键以使用 DeepSpeed 默认值）。",
        ),
        (
            r"Please specify the ZeRO optimization config in the DeepSpeed config",
            "zero_optimization",
            "Accelerate's DeepSpeedPlugin (used by HF Trainer too) requires a zero_optimization section in the DeepSpeed config.",
            "Accelerate 的 DeepSpeedPlugin（HF Trainer 也用它）要求 DeepSpeed 配置里有 zero_optimization 部分。",
            'Add "zero_optimization": {"stage": 0} (or the stage you want).',
            '加上 "zero_optimization": {"stage": 0}（或你想要的 stage）。',
        ),
        (
            r"When using `deepspeed_config_file`, the following accelerate config variables will be ignored",
            "deepspeed_config.deepspeed_config_file",
            "With deepspeed_config_file, Accelerate refuses DeepSpeed settings in its own YAML, mixed_precision included: "
            "they belong in the DeepSpeed JSON.",
            "使用 deepspeed_config_file 时，Accelerate 不接受其 YAML 中的 DeepSpeed 设置（包括 mixed_precision）：它们应写在 DeepSpeed JSON 里。",
            "Remove those keys (and mixed_precision) from the Accelerate YAML; set fp16/bf16, stage, offload and GA in the "
            "DeepSpeed JSON.",
            "从 Accelerate YAML 中删掉这些键（以及 mixed_precision）；在 DeepSpeed JSON 中设置 fp16/bf16、stage、offload 和 GA。",
        ),
        (
            r"`--mixed_precision` arg cannot be set to `(?P<mp>\w+)`",
            "mixed_precision",
            "The precision asked for by the Trainer / Accelerate contradicts the one enabled in the DeepSpeed config.",
            "Trainer / Accelerate 要求的精度与 DeepSpeed 配置中启用的精度相矛盾。",
            'Use "auto" for fp16.enabled and bf16.enabled in the DeepSpeed config, or make both agree.',
            '在 DeepSpeed 配置中把 fp16.enabled 和 bf16.enabled 设为 "auto"，或让两边一致。',
        ),
        (
            r"At most one of fp16 and bf16 can be True",
            "bf16",
            "TrainingArguments refuses --fp16 and --bf16 together.",
            "TrainingArguments 不允许同时使用 --fp16 和 --bf16。",
            "Keep one: --bf16 on Ampere or newer GPUs, else --fp16.",
            "只保留一个：Ampere 及更新的 GPU 用 --bf16，否则用 --fp16。",
        ),
        (
            r"had unknown keys \(\['(?P<key>[^']+)'",
            None,
            "accelerate's ClusterConfig refuses keys it does not know (a typo, or a key from another accelerate version).",
            "accelerate 的 ClusterConfig 不接受它不认识的键（拼写错误或其他版本的键）。",
            "Correct or remove the key (or regenerate the file with `accelerate config`).",
            "改正或删除该键（或用 `accelerate config` 重新生成文件）。",
        ),
        (
            r"Duplicate keys in DeepSpeed config: \['(?P<key>[^']+)'",
            None,
            "A key appears twice; DeepSpeed reads config files with a hook that refuses duplicates.",
            "某个键出现了两次；DeepSpeed 读取配置文件时会拒绝重复的键。",
            "Keep one occurrence of each key.",
            "每个键只保留一次。",
        ),
        (
            r"not supported between instances of 'str'|unsupported operand type\(s\).*'str'|must be real number, not str|"
            r"'str' object",
            None,
            'A string reached DeepSpeed where it needs a number: usually "auto" (only Hugging Face Trainer / Accelerate fill '
            "it, plain DeepSpeed does not) or a quoted number.",
            'DeepSpeed 需要数字的地方收到了字符串：通常是 "auto"（只有 Hugging Face Trainer / Accelerate 会填充，纯 DeepSpeed 不会）'
            "或带引号的数字。",
            "With HF Trainer, give the TrainingArguments too (training_args) to check that path; otherwise write numbers.",
            "如果配合 HF Trainer，请同时给出 TrainingArguments（training_args）以检查该路径；否则请写具体数字。",
        ),
    ]
]


#: Findings about the call itself (bad world_size, unreadable training_args), not about what the libraries judge.
_NOT_CONFIG = frozenset({"world_size", "training_args", "config", "<checker-error>"})


def explain(message: str) -> tuple[str | None, str, str, str, str]:
    """The key a library message is about, and our explanation and fix (en, zh), or empty strings."""
    for pattern, key, en, zh, fen, fzh in _EXPLAIN:
        m = pattern.search(message)
        if m:
            groups = {k: v for k, v in m.groupdict().items() if v}
            found = key or groups.get("key") or groups.get("key2")
            return found, en, zh, fen, fzh
    return None, "", "", "", ""


def _full_key(key: str | None, pc: ParsedConfig | None) -> str | None:
    """A bare ZeRO field name (from a pydantic error) → its dotted path in the user's config."""
    if key is None or pc is None or "." in key:
        return key
    if key not in pc.raw and isinstance(pc.raw.get("zero_optimization"), dict) and key in pc.raw["zero_optimization"]:
        return f"zero_optimization.{key}"
    return key


def short_path(path: str) -> str:
    return path.split(" → ")[-1] if " → " in path else path


def library_finding(
    v: LibraryVerdict,
    pc: ParsedConfig | None,
    own: list[tuple[Any, ...]],
) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]]:
    """The error finding for a failed verdict (as an _Out item), and the own items it replaces."""
    key, en, zh, fen, fzh = explain(v.message)
    key = _full_key(key, pc)
    matched = [it for it in own if it[0] == "error" and (it[1] == key or (v.message and v.message in it[2]))]
    if matched:
        own_en, own_zh = matched[0][2], matched[0][3]
        if not en:
            en, zh = own_en, own_zh
        elif v.message not in own_en and "AssertionError" not in own_en and "ValueError" not in own_en:
            en, zh = f"{en} {own_en}", f"{zh}{own_zh}"  # ours adds what this config's numbers mean
        if matched[0][4]:  # our fix names the numbers for this config (e.g. the consistent train_batch_size)
            fen, fzh = matched[0][4], matched[0][5]
    line, col = matched[0][6:8] if matched else (None, None)
    key = key or (matched[0][1] if matched else "library")
    exact = " ⏎ ".join(s for s in v.message.splitlines() if s.strip()) or v.exception
    where = f"at data-parallel world size {v.world_size}"
    where_zh = f"数据并行卡数 {v.world_size} 时"
    msg_en = f'{v.step or short_path(v.path)} raises {v.exception}: "{exact}" ({v.versions_text()}, {where}).' + (
        f" Why: {en}" if en else ""
    )
    msg_zh = f'{v.step or short_path(v.path)} 抛出 {v.exception}："{exact}"（{v.versions_text()}，{where_zh}）。' + (
        f"原因：{zh}" if zh else ""
    )
    return ("error", key, msg_en, msg_zh, fen, fzh, line, col), matched


def reconcile(items: list[tuple[Any, ...]], v: LibraryVerdict | None, pc: ParsedConfig | None) -> list[tuple[Any, ...]]:
    """Our findings after the library's verdict: its error first, our "will fail" claims downgraded to advice."""
    if v is None:
        return items
    out: list[tuple[Any, ...]] = []
    if not v.available:
        out.append(("info", "library", v.note_en, v.note_zh, "", "", None, None))
        return out + items
    replaced: list[tuple[Any, ...]] = []
    if v.failed:
        finding, replaced = library_finding(v, pc, items)
        out.append(finding)
    else:
        out.append(
            (
                "info",
                "library",
                f"{short_path(v.path)} accepts this config at data-parallel world size {v.world_size} "
                f"({v.versions_text()}): it starts. Everything below is advice.",
                f"{short_path(v.path)} 在数据并行卡数 {v.world_size} 时接受该配置（{v.versions_text()}）：可以启动。"
                "以下内容均为建议。",
                "",
                "",
                None,
                None,
            )
        )
    if v.note_en:
        out.append(("info", "assumption", v.note_en, v.note_zh, "", "", None, None))
    for it in items:
        if any(it is r for r in replaced):
            continue
        if v.failed and v.message and v.message in it[2]:
            continue  # our own check predicted exactly this message: the library's finding above says it
        sev, key, en, zh, fen, fzh, line, col = it
        if sev == "error" and key not in _NOT_CONFIG:
            sev = "warning"
            if v.failed:
                en = f"Not confirmed by the library (it stopped at the error above first); check again after fixing it: {en}"
                zh = f"未经库确认（它先在上面的错误处停下）；修正后请再检查：{zh}"
            else:
                en = f"Advice (the library accepts this, the run starts): {en}"
                zh = f"建议（库接受该配置，训练可以启动）：{zh}"
        out.append((sev, key, en, zh, fen, fzh, line, col))
    return out
