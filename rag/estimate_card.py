"""The card that explains the largest part of the user's own memory estimate.

An answer about memory for a stated setup opens with the calculator's estimate and names its largest part (rag.compose).
Retrieval picks cards by words, and the core memory cards share most of theirs ("显存不足", "OOM", "多卡"), so the card
that explains *that* part often ranks below a sibling: a full fine-tune of a 13B model on four A800s whose Adam states
dominate was answered with the LoRA, fragmentation or long-sequence card. The estimate says which part dominates, for
the setup the message states (the planner only computes for it), so it names the card:

* **full fine-tune, model states largest** (16-bit weights, fp32 gradients/master weights and Adam moments, the bulk
  of a full fine-tune): how those states are sharded across GPUs when the message states several GPUs or a ZeRO stage
  (``zero-stages-memory-savings``), else how many bytes each parameter costs (``mixed-precision-bytes-per-param``);
* **LoRA, frozen base weights largest**: where LoRA memory goes (``lora-memory-breakdown``);
* **QLoRA**: the 4-bit base's memory (``qlora-memory``).

When activations dominate, the cause (sequence length, logits, missing checkpointing) is not read off the sizes alone
and nothing is added (measured: naming the logits, attention or checkpointing card there gained 1 question of 32).
Only answers about the user's memory get the card (diagnose, fit, is_normal, configure: rag.assistant). Measured on
the dev set (main at 47568d6 plus the citing rules of this branch; 237 of 1061 answers have a memory estimate):
citing this card (second, the third dropped when three are cited) gains hit@3 on 21 questions and loses it on 2,
zh 0.800 → 0.823, en 0.830 → 0.843, cited-card precision 0.377 → 0.386.
"""

from __future__ import annotations

from typing import Any

from .setup import Setup

#: The card for each case (see the module docstring).
SHARDING_CARD = "zero-stages-memory-savings"
BYTES_PER_PARAM_CARD = "mixed-precision-bytes-per-param"
LORA_CARD = "lora-memory-breakdown"
QLORA_CARD = "qlora-memory"


def _stated(setup: Setup, key: str) -> Any:
    value = setup.values.get(key)
    return None if value is None or value.source == "assumed" else value.value


def largest_part_card(estimate: dict[str, Any], arguments: dict[str, Any], setup: Setup) -> str | None:
    """The id of the card that explains the largest part of ``estimate`` (a ``MemoryEstimate`` as a dict, computed
    with ``arguments``), or None when no card does (see the module docstring)."""
    try:
        weights = int(estimate["weights"])
        states = int(estimate["gradients"]) + int(estimate["optimizer_states"])
        activations = int(estimate.get("activations") or 0)
    except (KeyError, TypeError, ValueError):
        return None
    finetune = arguments.get("finetune")
    if finetune == "qlora":
        return QLORA_CARD
    if activations >= max(weights, states):
        return None
    if finetune == "full":
        several = (_stated(setup, "world_size") or 1) > 1 or _stated(setup, "zero_stage") is not None
        return SHARDING_CARD if several else BYTES_PER_PARAM_CARD
    if finetune == "lora" and weights >= states:
        return LORA_CARD
    return None


__all__ = ["largest_part_card", "SHARDING_CARD", "BYTES_PER_PARAM_CARD", "LORA_CARD", "QLORA_CARD"]
