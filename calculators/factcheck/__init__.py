"""Fact-check a pasted chatbot answer about batch size, accumulation and GPU memory.

>>> from calculators.factcheck import fact_check
>>> [c.verdict for c in fact_check("增大 gradient_accumulation_steps 会保存 4 个微批次的梯度，显存变成 4 倍。").claims]
['wrong']
"""

from .check import MAX_CHARS, detect_lang, fact_check, fact_check_tool, looks_like_chatbot_answer, strip_check_request
from .models import Claim, FactCheck, SourceLink

__all__ = [
    "Claim",
    "FactCheck",
    "MAX_CHARS",
    "SourceLink",
    "detect_lang",
    "fact_check",
    "fact_check_tool",
    "looks_like_chatbot_answer",
    "strip_check_request",
]
