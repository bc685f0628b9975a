"""Whether a retrieved card answers *this* message or another one (issue #10 "only relevant cards", issue #11).

Retrieval ranks cards by words, and a card about one setup shares most of its words with questions about another:
"Can a 24 GB card fully fine-tune a 7B model?" is retrieved for "8 × A100 80G, full fine-tune of a 7B model, OOM",
the ChatGLM P-Tuning card for a full fine-tune of Qwen. Such a card is not cited when the message states a setup that
contradicts what the card is about, read from structure, never from one question's wording:

* **method** — a card whose title is about adapters (LoRA, QLoRA, DoRA, P-Tuning) does not answer a message that
  states another method (a full fine-tune; P-Tuning for a LoRA run);
* **model size** — a card whose lead opens with one model size's numbers does not answer a message that states only
  other sizes (see :func:`rag.opening.size_fits`; a message that states no size may still be about it);
* **GPU memory** — a card whose lead opens with one GPU capacity ("A single 24 GB card …") does not answer a message
  that states a different one;
* **training stack** — a lead about one stack does not answer a message that names only others
  (:func:`rag.opening.stack_conflict`).
"""

from __future__ import annotations

import re

from .cards import Card
from .opening import AskedQuestion, first_sentence, lead_en, sizes_in, stack_conflict
from .setup import Setup

#: Adapter methods a card title can be about, as the setup's ``finetune`` values they answer. "alpaca-lora" (a
#: repository's name) is not LoRA the method.
_METHOD_IN_TITLE: dict[str, re.Pattern[str]] = {
    "lora": re.compile(r"(?<![\w-])(?:Q|Do)?LoRA\b", re.I),
    "ptuning": re.compile(r"\bP-?Tuning\b|\bprefix[-_ ]tuning\b", re.I),
}
#: The ``finetune`` values each method card answers (QLoRA is LoRA on a quantized base).
_ANSWERS: dict[str, frozenset[str]] = {"lora": frozenset({"lora", "qlora"}), "ptuning": frozenset({"ptuning"})}
# A GPU capacity in a lead's first sentence ("A single 24 GB card").
_CAPACITY = re.compile(r"(\d+(?:\.\d+)?)\s?(?:GB|GiB|G)\b")
#: Capacities within this fraction of each other are the same card (a "24 GB" 3090 reads 23.7 GiB).
_CAPACITY_TOLERANCE = 0.1


def card_methods(card: Card) -> frozenset[str]:
    """The adapter methods the card's title is about (empty for a card about no particular method)."""
    return frozenset(m for m, rx in _METHOD_IN_TITLE.items() if rx.search(card.title_en))


def method_conflict(card: Card, setup: Setup) -> bool:
    """The message states a fine-tuning method that none of the card's adapter methods is."""
    stated = setup.get("finetune")
    methods = card_methods(card)
    return bool(stated and methods) and not any(stated in _ANSWERS[m] for m in methods)


def size_conflict(card: Card, asked: AskedQuestion) -> bool:
    """The card's lead opens with model sizes and the message states only other ones."""
    sizes = sizes_in(first_sentence(lead_en(card)))
    return bool(sizes and asked.sizes) and not sizes & set(asked.sizes)


def capacity_conflict(card: Card, setup: Setup) -> bool:
    """The card's lead opens with a GPU capacity and the message states a different one."""
    stated = setup.get("gpu_memory_gb")
    capacities = [float(x) for x in _CAPACITY.findall(first_sentence(lead_en(card)))]
    if not stated or not capacities:
        return False
    return all(abs(c - float(stated)) > _CAPACITY_TOLERANCE * max(c, float(stated)) for c in capacities)


def answers_another_setup(card: Card, asked: AskedQuestion, setup: Setup) -> str:
    """Why ``card`` is about another setup than the message states ('' when nothing contradicts it)."""
    if method_conflict(card, setup):
        return f"the card is about {'/'.join(sorted(card_methods(card)))}, the message states {setup.get('finetune')}"
    if size_conflict(card, asked):
        return "the card's lead is about another model size"
    if capacity_conflict(card, setup):
        return "the card's lead is about another GPU capacity"
    if stack_conflict(card, asked):
        return "the card's lead is about another training stack"
    return ""
