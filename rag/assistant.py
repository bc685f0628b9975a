"""The assistant: question in, answer out — retrieval + calculators + composition, no generative model.

Order of an answer: the verdict on any wrong belief in the question, the
calculator numbers that prove it, the explanation from the best card, then
the sources. Every number comes from a calculator call listed in
``Answer.tool_calls``.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from typing import Any

from calculators import BatchConfigError, CalculatorError, run_tool
from calculators.batch import BatchResult
from calculators.memory import MemoryEstimate
from calculators.sweep import SweepResult

from .answer import Answer, Correction, Link, SourceRef, ToolCall
from .cards import Card, load_cards
from .formatting import batch_summary, gib, memory_summary, memory_table, sweep_line
from .intents import Intents, detect_intents, detect_misconceptions, tiny_batch_question
from .language import detect_language
from .planner import Plan, PlannedCall, plan_calls
from .slots import Slots, extract_slots

MAX_QUESTION_CHARS = 4000
MAX_CONFIG_CHARS = 50_000
MAX_HISTORY_TURNS = 20
SMALL_BATCH_MYTH = "myth-small-batch-smaller-updates"
SMALL_BATCH_CARD = "small-micro-batch-and-small-ga"
# Words that make a short message a follow-up even when it names nothing new ("那呢？", "what about that?").
_FOLLOW_UP = re.compile(r"^(?:那|那么|如果|要是|换成|改成|再|还有|呢)|呢[？?]?$|what about|how about|and (?:with|if|for)|instead", re.I)

_TEXT = {
    "empty": {"zh": "请输入一个问题，例如：“gradient_accumulation_steps 增大会增加显存吗？”",
              "en": "Please type a question, for example: “Does raising gradient_accumulation_steps increase GPU memory?”"},
    "too_long": {"zh": "问题太长（{n} 个字符，上限 {max}）。请只保留问题本身，配置可以单独粘贴。",
                 "en": "The question is too long ({n} characters, limit {max}). Keep just the question; paste a config on its own."},
    "off_topic": {"zh": "这个问题超出了我能回答的范围。我只回答训练配置的问题：batch size、梯度累积、精度、ZeRO/offload 分片，以及需要多少显存。例如：“7B 模型 LoRA 在 3090 上 micro batch 能开多大？”",
                  "en": "That is outside what I can answer. I answer training-setup questions: batch size, gradient accumulation, precision, ZeRO/offload sharding, and how much GPU memory it takes. For example: “How large a micro batch fits a 7B LoRA run on a 3090?”"},
    "numbers": {"zh": "计算结果", "en": "The numbers"},
    "explain": {"zh": "解释", "en": "Explanation"},
    "sources": {"zh": "来源", "en": "Sources"},
    "corrected": {"zh": "问题里的误解", "en": "What the question gets wrong"},
    "assumed": {"zh": "假设", "en": "Assumed"},
    "wrong": {"zh": "错误说法", "en": "Wrong"},
    "right": {"zh": "实际情况", "en": "Actually"},
    "ga_compare": {"zh": "GA=1 与 GA={ga} 的每卡显存（其他设置相同）：", "en": "Per-GPU memory at GA=1 and GA={ga}, everything else equal:"},
    "ga_same": {"zh": "两列完全相同：累积步数不改变峰值显存。改变显存的是 micro batch：",
                "en": "The two columns are identical: accumulation steps do not change peak memory. The micro batch does:"},
    "ga_differs": {"zh": "流水线并行时在途微批次会增加激活显存（见上表）。micro batch 的影响：",
                   "en": "With pipeline parallelism in-flight micro-batches add activations (see the table). The micro batch:"},
    "precision": {"zh": "全量微调时不同精度下的每卡显存：", "en": "Per-GPU memory of a full fine-tune by precision:"},
    "zero": {"zh": "不同 ZeRO stage 下的每卡显存：", "en": "Per-GPU memory by ZeRO stage:"},
    "checkpointing": {"zh": "不同梯度检查点设置下的每卡显存：", "en": "Per-GPU memory by gradient checkpointing:"},
    "finetune": {"zh": "全量微调、LoRA、QLoRA 的每卡显存：", "en": "Per-GPU memory: full fine-tune vs LoRA vs QLoRA:"},
    "fits": {"zh": "能放下：每卡约 {total}，{gpu} 有 {cap}；按这些设置最大 micro batch = {mm}。",
             "en": "It fits: about {total} per GPU on a {cap} {gpu}; the largest micro batch with these settings is {mm}."},
    "no_fit": {"zh": "放不下：每卡约 {total}，超出 {gpu} 的 {cap}。",
               "en": "It does not fit: about {total} per GPU, more than the {cap} of a {gpu}."},
    "per_gpu": {"zh": "每卡约需 {total}。", "en": "About {total} per GPU."},
    "small_compare": {"zh": "同样 10,000 条样本：micro=1、GA=1 每个 epoch 要 {a:,} 次优化器更新；micro=4、GA=8 只要 {b:,} 次。",
                      "en": "Same 10,000 samples: micro=1, GA=1 takes {a:,} optimizer steps per epoch; micro=4, GA=8 takes {b:,}."},
    "calc_error": {"zh": "计算器拒绝了这组参数：", "en": "The calculator rejected these values:"},
    "no_card": {"zh": "知识库里没有与此直接相关的解释；以上数字来自计算器。",
                "en": "No curated explanation matches this closely; the numbers above come from the calculators."},
}


def _t(key: str, lang: str, **kw: Any) -> str:
    return _TEXT[key][lang].format(**kw)


def _clean(text: str) -> str:
    """Drop control characters (keep newlines and tabs) and normalise width (全角 → half-width digits)."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")


def _valid_history(history: Any) -> list[dict[str, Any]]:
    """The turns of ``history`` this assistant wrote; anything malformed is dropped, never trusted.

    History comes back from browsers and API clients, so each turn is re-validated:
    role and content strings, a known language, slots that parse as :class:`Slots`,
    intents as booleans.
    """
    if not isinstance(history, list):
        return []
    fields = set(Intents.__dataclass_fields__)
    out: list[dict[str, Any]] = []
    for turn in history:
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant"):
            continue
        clean: dict[str, Any] = {"role": turn["role"], "content": _clean(str(turn.get("content", "")))[:4000]}
        if turn.get("language") in ("zh", "en"):
            clean["language"] = turn["language"]
        if turn["role"] == "user" and isinstance(turn.get("slots"), dict):
            try:
                clean["slots"] = Slots(**turn["slots"]).stated()
            except (TypeError, ValueError):
                pass
            intents = turn.get("intents")
            clean["intents"] = ({k: bool(v) for k, v in intents.items() if k in fields}
                                if isinstance(intents, dict) else {})
        out.append(clean)
    return out


class Assistant:
    """Answers batch/accumulation/precision/sharding/memory questions from cards and calculators.

    >>> bot = Assistant()                       # doctest: +SKIP
    >>> bot.ask("增大梯度累积会增加显存吗").text   # doctest: +SKIP
    """

    def __init__(self, cards: list[Card] | None = None, *, retriever: Any = None, embed_model: str | None = None,
                 cache_dir: str | None = None, progress: bool = False) -> None:
        self.cards = cards if cards is not None else load_cards()
        self._by_id = {c.id: c for c in self.cards}
        if retriever is None:
            from .embedding import EmbeddingSettings
            from .retrieval import Retriever
            settings = EmbeddingSettings.from_env(**({"model": embed_model} if embed_model else {}))
            retriever = Retriever(cards=self.cards, settings=settings, cache_dir=cache_dir, progress=progress)
        self.retriever = retriever

    # ---- public API -------------------------------------------------------------------------
    def retrieve(self, query: str, k: int = 3) -> list[Any]:
        """The k best cards for ``query`` (empty when nothing is relevant enough)."""
        return self.retriever.retrieve(_clean(query or ""), k=k)

    def ask(self, question: str, history: list[dict[str, Any]] | None = None) -> Answer:
        """Answer one question; pass ``answer.history`` back for a follow-up."""
        history = _valid_history(history)[-2 * MAX_HISTORY_TURNS:]
        prev_lang = next((h["language"] for h in reversed(history) if "language" in h), None)
        if not isinstance(question, str):
            question = "" if question is None else str(question)
        text = _clean(question).strip()
        lang = detect_language(text) if re.search(r"[A-Za-z\u4e00-\u9fff]", text) else (prev_lang or "en")
        if not text:
            return self._refusal(_t("empty", lang), lang, history, text)
        config_answer = self._maybe_config(text, lang, history)
        if config_answer is not None:
            return config_answer
        if len(text) > MAX_QUESTION_CHARS:
            return self._refusal(_t("too_long", lang, n=len(text), max=MAX_QUESTION_CHARS), lang, history, text[:200])
        return self._answer(text, lang, history)

    # ---- steps ------------------------------------------------------------------------------
    def _answer(self, text: str, lang: str, history: list[dict[str, Any]]) -> Answer:
        prev = next((h for h in reversed(history) if h.get("role") == "user" and "slots" in h), None)
        slots = extract_slots(text)
        intents = detect_intents(text)
        misconceptions = detect_misconceptions(text)
        hits = self.retrieve(text, k=3)
        on_topic = bool(hits or misconceptions or intents.any or slots.stated())
        if not on_topic and not (prev is not None and _FOLLOW_UP.search(text)):
            return self._refusal(_t("off_topic", lang), lang, history, text)
        if prev is not None and not misconceptions:
            # A follow-up ("那用 ZeRO-3 呢？", "and with 4 GPUs?") keeps earlier slots and intents.
            slots = slots.merged_over(Slots(**prev["slots"]))
            old = prev.get("intents", {})
            intents = Intents(**{k: getattr(intents, k) or old.get(k, False) for k in intents.__dataclass_fields__})
        if not intents.small_batch and tiny_batch_question(text, slots.train_micro_batch_size_per_gpu,
                                                           slots.gradient_accumulation_steps):
            intents = replace(intents, small_batch=True)

        plan = plan_calls(slots, intents, misconceptions)
        calls = [self._run(c, lang) for c in plan.calls]
        cards = self._cards_for(misconceptions, hits, intents)
        corrections = [self._correction(m, lang) for m in misconceptions if m.card_id in self._by_id]

        parts: list[str] = []
        if corrections:
            parts += [f"**{c.verdict}**" for c in corrections]
        else:
            verdict = self._memory_verdict(plan, calls, lang)
            if verdict:
                parts.append(verdict)
            if cards:
                parts.append(self._direct_answer(cards[0], lang))
        numbers = self._numbers_section(plan, calls, lang)
        if corrections:
            parts.append(f"#### {_t('corrected', lang)}\n" + "\n".join(
                f"- ❌ {_t('wrong', lang)}：{c.wrong}\n  ✅ {_t('right', lang)}：{c.correction}" if lang == "zh" else
                f"- ❌ {_t('wrong', lang)}: {c.wrong}\n  ✅ {_t('right', lang)}: {c.correction}" for c in corrections))
        if numbers:
            parts.append(f"#### {_t('numbers', lang)}\n{numbers}")
        assumptions = plan.assumptions_zh if lang == "zh" else plan.assumptions_en
        if assumptions:
            sep = "；" if lang == "zh" else "; "
            parts.append(f"_{_t('assumed', lang)}{'：' if lang == 'zh' else ': '}{sep.join(assumptions)}._")
        if cards:
            parts.append(f"#### {_t('explain', lang)}\n{self._explanation(cards, lang)}")
        else:
            parts.append(_t("no_card", lang))
        sources = [self._source(c, lang) for c in cards]
        if sources:
            parts.append(f"#### {_t('sources', lang)}\n" + "\n".join(
                f"- {s.title}: " + ", ".join(f"[{u.title}]({u.url})" for u in s.urls) for s in sources))
        answer_text = "\n\n".join(parts)
        new_history = history + [
            {"role": "user", "content": text, "language": lang, "slots": slots.stated(),
             "intents": {k: getattr(intents, k) for k in intents.__dataclass_fields__}},
            {"role": "assistant", "content": answer_text, "language": lang},
        ]
        return Answer(text=answer_text, language=lang, sources=sources, tool_calls=calls, corrections=corrections,
                      assumptions=assumptions, history=new_history)

    def _maybe_config(self, text: str, lang: str, history: list[dict[str, Any]]) -> Answer | None:
        """A pasted DeepSpeed / HF / LLaMA-Factory config is answered by the config doctor."""
        try:
            from calculators import configs
        except ImportError:
            return None
        snippet = configs.extract_config_text(text)
        if snippet is None:
            return None
        if len(snippet) > MAX_CONFIG_CHARS:
            return self._refusal(_t("too_long", lang, n=len(snippet), max=MAX_CONFIG_CHARS), lang, history, text[:200])
        slots = extract_slots(text.replace(snippet, " "))
        args: dict[str, Any] = {"config": snippet, "lang": lang}
        # The words around the config may name what the config cannot: the GPU, the model, the GPU count.
        for key in ("gpu", "model", "world_size"):
            if getattr(slots, key) is not None:
                args[key] = getattr(slots, key)
        call = self._run(PlannedCall("config_check", args), lang)
        body = call.summary_md or call.error or ""
        new_history = history + [{"role": "user", "content": text[:2000], "language": lang, "slots": slots.stated(),
                                  "intents": {}}, {"role": "assistant", "content": body, "language": lang}]
        return Answer(text=body, language=lang, tool_calls=[call], history=new_history)

    def _run(self, call: PlannedCall, lang: str) -> ToolCall:
        """Run one calculator; a refusal becomes a visible error, never an exception."""
        args = dict(call.arguments)
        if call.name == "effective_batch":
            args["lang"] = lang
        try:
            if call.name == "config_check":
                from calculators.configs import config_check_tool
                result = config_check_tool(args)
            else:
                result = run_tool(call.name, args)
        except BatchConfigError as err:
            return ToolCall(name=call.name, arguments=call.arguments, error=f"{err.deepspeed_message}\n{err.message(lang)}",
                            summary_md=f"{_t('calc_error', lang)}\n\n```\n{err.deepspeed_message}\n```\n{err.message(lang)}")
        except CalculatorError as err:
            return ToolCall(name=call.name, arguments=call.arguments, error=err.message(lang),
                            summary_md=f"{_t('calc_error', lang)} {err.message(lang)}")
        return ToolCall(name=call.name, arguments=call.arguments, result=result.model_dump(mode="json"),
                        summary_md=self._summary(result, lang))

    @staticmethod
    def _summary(result: Any, lang: str) -> str:
        if isinstance(result, MemoryEstimate):
            return memory_summary(result, lang)
        if isinstance(result, BatchResult):
            return batch_summary(result, lang)
        if isinstance(result, SweepResult):
            return sweep_line(result, lang)
        if hasattr(result, "to_markdown"):
            return result.to_markdown(lang)
        return ""

    @staticmethod
    def _memory_verdict(plan: Plan, calls: list[ToolCall], lang: str) -> str:
        """'It fits / does not fit' from the main memory call, the direct answer to 'will it fit?'."""
        main = next((t for c, t in zip(plan.calls, calls) if c.label == "main" and t.result), None)
        if main is None or main.result.get("total_per_gpu") is None:
            return ""
        r = main.result
        total = gib(r["total_per_gpu"], lang)
        if r.get("fits") is None:
            return f"**{_t('per_gpu', lang, total=total)}**"
        key = "fits" if r["fits"] else "no_fit"
        return "**" + _t(key, lang, total=total, gpu=r["gpu_name"], cap=gib(r["gpu_capacity"], lang),
                         mm=r.get("max_micro_batch")) + "**"

    def _numbers_section(self, plan: Plan, calls: list[ToolCall], lang: str) -> str:
        by_label = {c.label: t for c, t in zip(plan.calls, calls)}
        out: list[str] = []
        for label in ("effective_batch",):
            if label in by_label:
                out.append(by_label[label].summary_md)
        if "effective_batch_compare" in by_label:
            a, b = by_label["effective_batch"].result, by_label["effective_batch_compare"].result
            if a and b and a.get("optimizer_steps_per_epoch") and b.get("optimizer_steps_per_epoch"):
                out.append(_t("small_compare", lang, a=a["optimizer_steps_per_epoch"], b=b["optimizer_steps_per_epoch"]))
        if "ga_low" in by_label and "ga_high" in by_label:
            low, high = by_label["ga_low"], by_label["ga_high"]
            if low.result and high.result:
                ga = high.arguments["gradient_accumulation_steps"]
                e1, e2 = MemoryEstimate(**low.result), MemoryEstimate(**high.result)
                eff = "有效批次" if lang == "zh" else "effective batch"
                mb = low.arguments["train_micro_batch_size_per_gpu"] * low.arguments.get("world_size", 1)
                out.append(_t("ga_compare", lang, ga=ga) + "\n\n" + memory_table(
                    [(f"GA=1 ({eff} {mb})", e1), (f"GA={ga} ({eff} {mb * ga})", e2)], lang))
                same = e1.total_per_gpu == e2.total_per_gpu
                sweep = by_label.get("micro_sweep")
                line = sweep.summary_md if sweep is not None and sweep.result else ""
                out.append(_t("ga_same" if same else "ga_differs", lang) + " " + line)
                out.append(e2.gradient_accumulation_note_zh if lang == "zh" else e2.gradient_accumulation_note_en)
            else:
                out.append(low.summary_md or high.summary_md)
        if "main" in by_label:
            out.append(by_label["main"].summary_md)
        for label, heading, name in (("precision_sweep", "precision", "{}"), ("zero_sweep", "zero", "ZeRO-{}"),
                                     ("checkpointing_sweep", "checkpointing", "{}"),
                                     ("finetune_sweep", "finetune", "{}")):
            call = by_label.get(label)
            if call is not None and call.result:
                columns = [(name.format(p["value"]), MemoryEstimate(**p["estimate"])) for p in call.result["points"]]
                out.append(_t(heading, lang) + "\n\n" + memory_table(columns, lang))
        return "\n\n".join(s for s in out if s)

    def _cards_for(self, misconceptions: list[Any], hits: list[Any], intents: Intents) -> list[Card]:
        """Cards to explain with: the ones that correct detected beliefs first, then the best retrieved."""
        chosen: list[Card] = [self._by_id[m.card_id] for m in misconceptions if m.card_id in self._by_id]
        for hit in hits:
            if hit.card.id not in {c.id for c in chosen}:
                chosen.append(hit.card)
        if intents.small_batch and not any("small_batch_effects" in c.topics for c in chosen[:2]) \
                and SMALL_BATCH_CARD in self._by_id:
            chosen = [c for c in chosen if c.id != SMALL_BATCH_CARD]
            chosen.insert(0, self._by_id[SMALL_BATCH_CARD])
        if intents.small_batch and SMALL_BATCH_MYTH in self._by_id and SMALL_BATCH_MYTH not in {c.id for c in chosen}:
            # The usual wrong answer to "both small?" is "smaller weight updates": correct it unasked.
            chosen.insert(1, self._by_id[SMALL_BATCH_MYTH])
        return chosen[:3]

    def _correction(self, rule: Any, lang: str) -> Correction:
        card = self._by_id[rule.card_id]
        m = card.misconceptions[0]
        return Correction(key=rule.key, card_id=card.id, verdict=rule.verdict_zh if lang == "zh" else rule.verdict_en,
                          wrong=m.wrong_zh if lang == "zh" else m.wrong_en,
                          correction=m.correction_zh if lang == "zh" else m.correction_en)

    @staticmethod
    def _direct_answer(card: Card, lang: str) -> str:
        body = (card.body_zh if lang == "zh" else card.body_en).strip()
        return body.split("\n\n", 1)[0]

    @staticmethod
    def _explanation(cards: list[Card], lang: str) -> str:
        first = (cards[0].body_zh if lang == "zh" else cards[0].body_en).strip()
        parts = first.split("\n\n", 1)
        text = parts[1] if len(parts) > 1 else parts[0]
        for card in cards[1:]:
            title = card.title_zh if lang == "zh" else card.title_en
            direct = (card.body_zh if lang == "zh" else card.body_en).strip().split("\n\n", 1)[0]
            text += f"\n\n**{title}** — {direct.strip('*')}"
        return text

    @staticmethod
    def _source(card: Card, lang: str) -> SourceRef:
        return SourceRef(card_id=card.id, title=card.title_zh if lang == "zh" else card.title_en,
                         urls=[Link(title=s.title, url=str(s.url)) for s in card.sources])

    @staticmethod
    def _refusal(message: str, lang: str, history: list[dict[str, Any]], question: str) -> Answer:
        new_history = history + [{"role": "user", "content": question[:2000], "language": lang},
                                 {"role": "assistant", "content": message, "language": lang}]
        return Answer(text=message, language=lang, refused=True, history=new_history)
