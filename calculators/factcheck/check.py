"""``fact_check(text)``: which claims of a pasted chatbot answer are wrong, imprecise or right, and why.

Each claim unit (bullet or sentence) is matched against the known wrong beliefs in :mod:`.rules` and its
numbers are recomputed by :mod:`.numbers`; the correction and sources come from the knowledge card the rule
names, so a fact check says exactly what the chat says. Pure Python: no torch, no model.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..errors import CalculatorError
from ..lang import Lang, detect_language, is_lang
from .models import Claim, FactCheck, SourceLink, Verdict
from .numbers import check_memory_claim, check_numbers
from .rules import RULES, BeliefRule
from .split import sentences_of, split_units

#: The longest answer we check (a long chatbot answer is ~5,000 characters).
MAX_CHARS = 20_000

_CJK = re.compile(r"[\u4e00-\u9fff]")
_REQUEST = re.compile(
    r"^\s*(?:这段?(?:回答|答案|话|内容)(?:说得)?对(?:吗|不对)|帮我(?:看看|检查|核查)(?:一下)?(?:这个|这段)?(?:回答|答案)?|"
    r"(?:please\s+)?(?:fact[- ]?check|check)\s+this(?:\s+answer)?|is this (?:answer )?(?:right|correct|true)|"
    r"(?:ChatGPT|GPT|AI|chatbot)\s*(?:的回答|说的|says?)\S{0,10})\s*[?？:：!！。.]*\s*",
    re.I,
)
# How general chatbots open, structure and close an answer.
_ANSWER_MARKERS = re.compile(
    r"总结|综上|总的来说|希望(?:这些|以上|对你)|以下(?:几个|几种|是)|可能会导致以下|可以采取以下|好的[，,]|好问题|"
    r"In summary|To summari[sz]e|In short|Summary:|Hope this helps|\bHere (?:are|is)\b|Great question|"
    r"Let me explain|Key (?:points|takeaways)",
    re.I,
)
# How users write: a question, a log, their own setup, what they did to their run ("I applied LoRA and DoRA to a
# ResNet-50 and noticed …": a report, though it says "Here are some profiling results"). A user's message is a question to answer, not a text to check.
_USER_MARKERS = re.compile(
    r"Traceback|Error:|error:|CUDA out of memory|^\s*(?:\$ |>>> )|\b(?:I'm|I am|I have|I've|I tried|"
    r"I use|my (?:model|config|script|training|gpu)|we are|we're|we've|when we|we (?:load|train|run|resume|use|want)|"
    r"(?:I|we) (?:noticed|observed|encountered|found|got|saw|ran|set|[a-z]+ed))\b|"
    r"我(?:的|用|在|想|试|跑|是)|请问|求助|为什么",
    re.I | re.M,
)


@lru_cache(maxsize=1)
def _cards() -> dict[str, Any]:
    from rag.cards import load_cards  # the cards are the single source of corrections and URLs

    return {c.id: c for c in load_cards()}


def detect_lang(text: str) -> Lang:
    """The answer's language, by the one detector the chat uses (calculators.lang.detect_language)."""
    return detect_language(text)


def strip_check_request(text: str) -> str:
    """The pasted answer without a leading request line such as "这段回答对吗？" or "check this answer:"."""
    return _REQUEST.sub("", text, count=1)


def looks_like_chatbot_answer(text: str) -> bool:
    """Whether a chat message is (or carries) a pasted answer to check rather than a question.

    True for an explicit request ("这段回答对吗？", "check this answer") followed by text, or for a long,
    structured text (lists, a summary) that makes several claims about batch or memory.
    """
    if not isinstance(text, str) or len(text) > MAX_CHARS:
        return False
    rest = strip_check_request(text)
    if rest != text and len(rest.strip()) >= 20:
        return True
    # A question mark where users put theirs (the opening or the end); answers use them in headings too.
    if len(text) < 300 or _USER_MARKERS.search(text) or re.search(r"[?？]", text[:150] + text[-150:]):
        return False
    units = split_units(text)
    topical = sum(1 for u, _, _ in units if re.search(r"batch|批|显存|memory|梯度|gradient|精度|precision", u, re.I))
    return len(units) >= 5 and topical >= 3 and bool(_ANSWER_MARKERS.search(text))


def _plain(text: str) -> str:
    """Text without Markdown emphasis and code marks, which are not words (and ``**`` is not a product)."""
    return re.sub(r"\*\*|__|`", "", text)


def _claim(
    text: str,
    span: tuple[int, int],
    verdict: Verdict,
    rule: str | None = None,
    card_id: str | None = None,
    correction: tuple[str, str] | None = None,
) -> Claim:
    sources: list[SourceLink] = []
    en = zh = None
    if card_id:
        card = _cards()[card_id]
        sources = [SourceLink(title=s.title, url=s.url) for s in card.sources]
        if card.misconceptions:
            en, zh = card.misconceptions[0].correction_en, card.misconceptions[0].correction_zh
        if verdict == "right":
            en, zh = f"Consistent with the card “{card.title_en}”.", f"与卡片“{card.title_zh}”一致。"
    if correction:
        en, zh = correction
    return Claim(
        text=text,
        span=span,
        verdict=verdict,
        rule=rule,
        correction_en=en,
        correction_zh=zh,
        card_id=card_id,
        sources=sources,
    )


def _rule_claim(rule: BeliefRule, text: str, span: tuple[int, int]) -> Claim:
    return _claim(text, span, rule.verdict, rule.key, rule.card_id)


def fact_check(text: str, lang: str | None = None) -> FactCheck:
    """Check a pasted answer (Markdown, zh or en): every claim unit with a verdict, correction and sources.

    Raises :class:`CalculatorError` (English and Chinese) for non-text, empty or over-long input.
    """
    if not isinstance(text, str):
        raise CalculatorError("text", type(text).__name__, "the answer to check, as text", "要核查的回答文本")
    if not text.strip():
        raise CalculatorError("text", text, "a non-empty answer to check", "非空的回答文本")
    if len(text) > MAX_CHARS:
        raise CalculatorError(
            "text", f"{len(text)} characters", f"at most {MAX_CHARS:,} characters", f"不超过 {MAX_CHARS} 个字符"
        )
    if lang is not None and lang not in ("zh", "en"):
        raise CalculatorError("lang", lang, "'zh', 'en' or empty (detect)", "'zh'、'en' 或留空（自动判断）")
    claims: list[Claim] = []
    for unit, start, end in split_units(text):
        found: list[Claim] = []
        plain_unit = _plain(unit)
        for sent, a, b in sentences_of(unit):
            span = (start + a, start + b)
            plain = _plain(sent)
            num = check_numbers(plain, text)
            if num:
                found.append(_claim(sent, span, "wrong", num[0], "effective-batch-formula", (num[1], num[2])))
                continue
            mem = check_memory_claim(plain)
            if mem:
                found.append(_claim(sent, span, "wrong", mem[0], "mixed-precision-bytes-per-param", (mem[1], mem[2])))
                continue
            for rule in RULES:
                if rule.sentence_level and rule.matches(plain, plain_unit, text):
                    found.append(_rule_claim(rule, sent, span))
                    break
        if not any(c.verdict in ("wrong", "imprecise") for c in found):
            unit_rule = next(
                (r for r in RULES if not r.sentence_level and r.matches(plain_unit, plain_unit, text)), None
            )
            if unit_rule:
                found = [c for c in found if c.verdict != "right"] + [_rule_claim(unit_rule, unit, (start, end))]
        claims.extend(found or [_claim(unit, (start, end), "unchecked")])
    return FactCheck(lang=lang if is_lang(lang) else detect_lang(text), claims=claims)


def fact_check_tool(args: dict[str, Any]) -> FactCheck:
    """The ``fact_check`` tool: ``{"text": str, "lang"?: "zh"|"en"}``."""
    allowed = {"text", "lang"}
    if not isinstance(args, dict) or set(args) - allowed or "text" not in args:
        raise CalculatorError(
            "arguments", sorted(args) if isinstance(args, dict) else args, "text (required), lang", "text（必填）、lang"
        )
    return fact_check(args["text"], args.get("lang"))
