"""The assistant usable from Python without the UI.

>>> from rag import Assistant                      # doctest: +SKIP
>>> bot = Assistant()
>>> bot.retrieve("增大梯度累积会增加显存吗", k=3)
>>> bot.ask("Does raising gradient_accumulation_steps increase GPU memory?").text
"""

from .answer import Answer, Correction, Link, SourceRef, ToolCall
from .assistant import Assistant

__all__ = ["Answer", "Assistant", "Correction", "Link", "SourceRef", "ToolCall"]
