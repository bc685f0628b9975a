"""Input size limits, one constant per kind of input, used by every entry point (chat, API, tools, UI).

Why one place: the same paste reached through the chat, the calculators tab, an API endpoint or an agent tool
must be accepted or refused the same way, with the same number in the message. Each limit is far above what a
person pastes (the 331 real questions in tests/data/real_questions are at most ~1,400 characters) and low enough
that the slowest reader stays fast on it (tests/test_configs.py, tests/test_diagnose.py time the worst cases).
"""

from __future__ import annotations

#: A chat message: the question plus what is pasted with it (a config, a traceback, a log excerpt).
MAX_QUESTION_CHARS = 30_000

#: One config file's text (DeepSpeed JSON, TrainingArguments flags or YAML, Accelerate YAML, LLaMA-Factory YAML).
MAX_CONFIG_CHARS = 100_000

#: A pasted error, log, launch command or nvidia-smi table for the diagnosis; only its tail is analysed
#: (``calculators.diagnose.causes.MAX_CHARS``), so a whole log can be pasted.
MAX_PASTE_CHARS = 2_000_000
