"""Typed inputs and outputs of the config doctor: findings, the parsed config, the report (and its Markdown)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..errors import CalculatorError
from ..i18n import t
from ..lang import Lang, as_lang
from ..limits import MAX_CONFIG_CHARS
from ..memory import MemoryEstimate
from ..text_safety import escape_md
from ..units import gib_number

Kind = Literal["deepspeed", "hf_training_args", "accelerate", "llamafactory"]
Severity = Literal["error", "warning", "info"]
SourceFormat = Literal["json", "yaml", "flags", "dict"]
KINDS = ("deepspeed", "hf_training_args", "accelerate", "llamafactory")
MAX_TEXT = MAX_CONFIG_CHARS  # one config's text (calculators.limits)


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

    def __init__(
        self,
        en: str,
        zh: str,
        *,
        line: int | None = None,
        column: int | None = None,
        fix_en: str = "",
        fix_zh: str = "",
        key: str = "config",
    ) -> None:
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
    auto_fields: list[str] = Field(default_factory=list, description='Dotted keys whose value is "auto".')
    unknown_keys: list[str] = Field(default_factory=list)
    world_size: int | None = Field(
        None, description="From a launcher (torchrun/deepspeed/accelerate) or num_processes."
    )
    deepspeed: str | dict[str, Any] | None = Field(None, description="The DeepSpeed config this config points to.")
    model_name: str | None = None
    program: str | None = Field(
        None, description="The program a command line runs when it is not a plain script: 'ms-swift' (swift sft)."
    )
    source_format: SourceFormat = "dict"
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
    lang: Lang = "en"
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

    def to_markdown(self, lang: Lang | None = None) -> str:
        """A readable report: verdict, findings by severity, then the memory table."""
        lg = as_lang(lang or self.lang)
        findings = self._by_lang.get(lg) or self.findings
        zh = lg == "zh"
        errors = [f for f in findings if f.severity == "error"]
        warnings = [f for f in findings if f.severity == "warning"]
        infos = [f for f in findings if f.severity == "info"]
        if self.parsed and self.parsed.program == "ms-swift":
            what = t("doctor.kind_ms_swift", lg)  # its TrainingArguments fields, read by the HF reader
        else:
            what = t(f"doctor.kind_{self.parsed.kind}" if self.parsed else "doctor.kind_none", lg)
        out = [f"## {t('config_check', lg)}: {what}", ""]
        if errors:
            verdict = t("doctor.errors_verdict", lg, n=len(errors))
        elif warnings:
            verdict = t("doctor.warnings_verdict", lg, n=len(warnings))
        else:
            verdict = t("doctor.no_problems", lg)
        if self.estimate is not None and self.estimate.fits is not None:
            e = self.estimate
            need = _gib(e.total_per_gpu)
            cap = _gib(e.gpu_capacity)
            verdict += t("doctor.fits" if e.fits else "doctor.no_fit", lg, need=need, cap=cap)
        out += [verdict, ""]
        for title, group in (("doctor.errors", errors), ("doctor.warnings", warnings), ("doctor.notes", infos)):
            if not group:
                continue
            out += [f"### {t(title, lg)}", ""]
            for f in group:
                where = ""
                if f.line is not None:
                    where = t("doctor.where", lg, line=f.line, column=f.column)
                out.append(f"- **{escape_md(f.key)}**{where}: {_md(f.message)}")
                if f.fix:
                    out.append(t("doctor.fix", lg, fix=_md(f.fix)))
            out.append("")
        if self.estimate is not None:
            e = self.estimate
            out += [t("doctor.memory_heading", lg, model=escape_md(e.model_name)), ""]
            out += [t("doctor.part_head", lg), "|---|---:|"]
            rows = [
                ("weights", "权重"),
                ("gradients", "梯度"),
                ("optimizer_states", "优化器状态"),
                ("activations", "激活"),
                ("other", "其他（通信缓冲、CUDA 上下文）"),
            ]
            for field, name_zh in rows:
                val = getattr(e, field)
                label = name_zh if zh else field.replace("_", " ")
                out.append(f"| {label} | {'?' if val is None else _gib(val)} |")
            total = "?" if e.total_per_gpu is None else _gib(e.total_per_gpu)
            out.append(t("doctor.total_row", lg, total=total))
            if e.gpu_capacity is not None:
                out.append(t("doctor.capacity_row", lg, gpu=escape_md(e.gpu_name), cap=_gib(e.gpu_capacity)))
            if e.cpu_total:
                out.append(t("doctor.cpu_row", lg, cpu=_gib(e.cpu_total)))
            out.append("")
            notes = e.assumptions_zh + e.notes_zh if zh else e.assumptions_en + e.notes_en
            for n in notes:
                out.append(f"- {_md(n)}")
            if notes:
                out.append("")
        return "\n".join(out).rstrip() + "\n"


def _md(text: str) -> str:
    """A finding's text as inert Markdown: it quotes the user's keys and values and the libraries' messages
    (which echo them), so it is escaped whole (HTML, Markdown syntax, URL schemes) and kept to one line."""
    return escape_md(text, limit=4_000)


def _gib(n: int | float | None) -> str:
    return gib_number(n)
