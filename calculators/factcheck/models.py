"""Typed results of a fact check: one :class:`Claim` per sentence or bullet of the checked answer."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..lang import Lang
from ..text_safety import escape_md

Verdict = Literal["wrong", "imprecise", "right", "unchecked"]

#: How much of a claim is quoted back in Markdown (a whole sentence, still clipped and escaped).
QUOTE_LIMIT = 160


class SourceLink(BaseModel):
    title: str
    url: str


class Claim(BaseModel):
    """One claim of the checked answer and what we can say about it."""

    text: str = Field(description="the claim as written (a sentence or a bullet)")
    span: tuple[int, int] = Field(description="[start, end) character offsets in the checked text")
    verdict: Verdict
    rule: str | None = Field(None, description="which known belief or recomputation decided the verdict")
    correction_en: str | None = None
    correction_zh: str | None = None
    card_id: str | None = None
    sources: list[SourceLink] = []


class FactCheck(BaseModel):
    """Every claim of the answer; only ``wrong``/``imprecise``/``right`` ones were matched by a rule."""

    lang: Lang
    claims: list[Claim]

    @property
    def flagged(self) -> list[Claim]:
        return [c for c in self.claims if c.verdict in ("wrong", "imprecise")]

    def counts(self) -> dict[str, int]:
        out = {"wrong": 0, "imprecise": 0, "right": 0, "unchecked": 0}
        for c in self.claims:
            out[c.verdict] += 1
        return out

    def to_markdown(self, lang: Lang | None = None) -> str:
        """A report: wrong and imprecise claims first (quoted, escaped), each with its correction and sources."""
        zh = (lang or self.lang) == "zh"
        n = self.counts()
        if zh:
            lines = [
                f"**核查结果：{n['wrong']} 处错误，{n['imprecise']} 处不严谨，{n['right']} 处正确，"
                f"{n['unchecked']} 处未核查（没有匹配到已知规则，不代表正确）。**"
            ]
        else:
            lines = [
                f"**Fact check: {n['wrong']} wrong, {n['imprecise']} imprecise, {n['right']} right, "
                f"{n['unchecked']} unchecked (no known rule matched; that does not make them right).**"
            ]
        label = {
            "wrong": ("❌ 错误", "❌ Wrong"),
            "imprecise": ("⚠️ 不严谨", "⚠️ Imprecise"),
            "right": ("✅ 正确", "✅ Right"),
        }
        for verdict in ("wrong", "imprecise", "right"):
            for c in self.claims:
                if c.verdict != verdict:
                    continue
                head = label[verdict][0 if zh else 1]
                lines.append(f"\n{head}: “{escape_md(c.text, QUOTE_LIMIT)}”")
                corr = c.correction_zh if zh else c.correction_en
                if corr and verdict != "right":
                    lines.append(f"- {'更正' if zh else 'Correction'}: {corr}")
                elif corr:
                    lines.append(f"- {corr}")
                if c.sources:
                    links = "; ".join(f"[{s.title}]({s.url})" for s in c.sources[:3])
                    lines.append(
                        f"- {'来源' if zh else 'Sources'}: {links}" + (f" (card `{c.card_id}`)" if c.card_id else "")
                    )
        if not self.flagged and not n["right"]:
            lines.append(
                "\n"
                + (
                    "没有发现与已知误区或计算器矛盾的说法。"
                    if zh
                    else "No claim matched a known wrong belief or contradicted a calculator."
                )
            )
        return "\n".join(lines)
