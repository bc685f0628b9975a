"""Which language to answer in: Chinese if the question is written in Chinese, else English."""
from __future__ import annotations

import re

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def detect_language(text: str) -> str:
    """'zh' when Han characters carry the sentence, else 'en'.

    Config keys (``gradient_accumulation_steps``) and model names are English
    words inside Chinese questions, so a few Han characters are enough: users
    who write any Chinese sentence around them expect a Chinese answer.
    """
    han = len(_HAN.findall(text))
    if han == 0:
        return "en"
    latin_words = len(_LATIN_WORD.findall(text))
    return "zh" if han >= 2 or han >= latin_words else "en"
