"""Chinese-aware tokenizer for BM25.

llama-index's default BM25 token pattern ``(?u)\\b\\w\\w+\\b`` treats a whole run of Chinese
characters as one "word" (a sentence up to the next punctuation mark), so a Chinese question
almost never shares a token with a card and scores zero. This tokenizer:

* splits the text into CJK runs and everything else;
* cuts CJK runs with jieba, using the glossary's domain terms as a user dictionary
  (梯度累积, 有效批次大小, 显存, ...), initialised lazily once, jieba's logging silenced;
  optionally adds character bigrams of each CJK run (``cjk_bigrams``; off by default:
  measured on the labelled set it did not help, see ``bench/eval_retrieval.py``);
* lowercases ASCII words and keeps ``snake_case`` config keys whole
  (``gradient_accumulation_steps`` is one token; jieba alone would split it on ``_``),
  and also emits the key's parts so "gradient accumulation steps" still matches;
* removes Chinese and English stopwords and single-character ASCII tokens.

No stemming: the cards and queries are short and the config keys must match exactly.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

from rag.glossary import user_dictionary

_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_ASCII_WORD = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")

EN_STOPWORDS: frozenset[str] = frozenset(
    """a an the and or but if then else of to in on at by for with from into onto over under
    is are was were be been being am do does did doing done have has had having
    i me my we our you your he she it its they them their this that these those there here
    what which who whom whose when where why how than so such as not no nor only very too
    can could should would will shall may might must just also about above after again
    against all any both each few more most other some same own up down out off once
    while during before between through until because s t don doesn didn isn aren wasn
    get gets got let lets please tell know want need use using used""".split()
)

ZH_STOPWORDS: frozenset[str] = frozenset(
    """的 了 吗 呢 吧 啊 呀 嘛 么 是 在 和 与 及 或 就 都 也 还 又 很 把 被 给 让 对 从 向 为 以
    这 那 这个 那个 这些 那些 这样 那样 这么 那么 我 你 他 她 它 我们 你们 他们 它们 自己
    一个 一些 有 没有 没 不 会 能 可以 要 想 应该 需要 如果 因为 所以 但是 但 而 并 且
    什么 怎么 怎么样 怎样 为什么 如何 哪 哪个 多少 几 吗？ 请问 请 一下 时候 情况 时
    之 其 等 个 上 下 中 里 后 前 再 才 已经 正在 过 着 得 地 到 说 看 做 用 下来 起来
    呢？ ， 。 ？ ！ ： ； 、""".split()
)

_lock = threading.Lock()
_jieba: Any = None


def _get_jieba() -> Any:
    """A private jieba Tokenizer with the domain user dictionary (built once, thread-safe)."""
    global _jieba
    if _jieba is None:
        with _lock:
            if _jieba is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                logging.getLogger("jieba").setLevel(logging.WARNING)
                tk = jieba.Tokenizer()
                tk.initialize()
                for word in user_dictionary():
                    if _CJK_RUN.search(word):
                        # high frequency so the whole term wins over its pieces
                        tk.add_word(word, freq=200_000)
                _jieba = tk
    return _jieba


def tokenize(text: str, *, cjk_bigrams: bool = False) -> list[str]:
    """Tokens of ``text`` for BM25 (indexing and querying alike)."""
    out: list[str] = []
    pos = 0
    lowered = text.lower()
    for m in _CJK_RUN.finditer(lowered):
        _ascii_tokens(lowered[pos : m.start()], out)
        _cjk_tokens(m.group(), out, cjk_bigrams)
        pos = m.end()
    _ascii_tokens(lowered[pos:], out)
    return out


def _ascii_tokens(chunk: str, out: list[str]) -> None:
    for word in _ASCII_WORD.findall(chunk):
        if "_" in word:
            out.append(word)
            out.extend(p for p in word.split("_") if len(p) > 1 and p not in EN_STOPWORDS)
        elif len(word) > 1 and word not in EN_STOPWORDS:
            out.append(word)


def _cjk_tokens(run: str, out: list[str], bigrams: bool) -> None:
    for word in _get_jieba().lcut(run, HMM=True):
        if word and word not in ZH_STOPWORDS:
            out.append(word)
    if bigrams and len(run) > 1:
        out.extend(run[i : i + 2] for i in range(len(run) - 1))


__all__ = ["tokenize", "EN_STOPWORDS", "ZH_STOPWORDS"]
