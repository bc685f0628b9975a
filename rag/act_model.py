"""A small trained model of the question act, next to the rules of :mod:`rag.acts`.

Why: the act rules were written against the wordings of the real-question dev set and lose about 0.2 of their
accuracy on messages they never saw. A linear model over character n-grams of what the user asks (and of the
rest of their prose), plus the structure of the message (what was pasted) and the rules' own verdict, is
trained by ``bench/train_act.py`` on the dev set's labelled questions.

How far to trust it: a model fitted on the dev set scores close to 1.0 *on the dev set* — that number says
nothing. The trainer reports grouped 5-fold cross-validation (folds split by source thread) for the rules, the
model and their combination; what ships, and the ``override`` threshold below, were chosen on that figure.

What the CV showed (453 questions; zh / en): rules 0.830 / 0.871 (optimistic — tuned on these questions); the
model alone 0.670 / 0.606, about what the rules score on new messages (held-out 0.667 / 0.625), so neither is
better on unseen wordings; the rules overridden when the text-only model is at least 0.9 sure 0.844 / 0.871.
That last is what ships: a cautious revision, not a replacement. With the rules' verdict as a feature the model
learns to copy the rules (0.830 / 0.863) — no new signal. The MiniLM query embedding as extra features lifted
the model alone (0.660 / 0.668) but not the combination, so it is not used.

Since 2026-12 (637 questions) the first and the last asking sentence are feature blocks of their own: the model
alone went from 0.658 / 0.594 to 0.681 / 0.633 in grouped CV (an ask-only variant without the prose block, and
one without the in-word character n-grams, both scored lower than before).

At answer time this is pure Python + numpy: the artifact (``rag/act_model.json``: hashed feature weights,
float16, base64) is read once. Without it the rules' verdict stands and one warning is logged.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from .parts import Part, prose_of

log = logging.getLogger(__name__)

ARTIFACT = Path(__file__).with_name("act_model.json")
#: ``BATCHBOT_ACT_MODEL=off`` turns the model off (rules alone), e.g. to compare the two with bench/eval_answers.py.
ENV_SWITCH = "BATCHBOT_ACT_MODEL"
#: The acts, in the order of the model's rows (the same as ``rag.acts.ACTS``).
ACT_ORDER: tuple[str, ...] = ("diagnose", "is_normal", "yes_no", "fit", "batch_arithmetic", "configure", "explain")
#: Hashed feature space: 2**15 buckets (crc32, stable across runs and machines).
N_BUCKETS = 1 << 15
#: At most this much prose is read (issue reports run long; the asking sentences are read in full).
MAX_PROSE_CHARS = 3000

_CJK = re.compile(r"[\u3400-\u9fff]+")
_LATIN_WORD = re.compile(r"[a-z_][a-z0-9_']*|0+")
_DIGITS = re.compile(r"\d+")
_ARITH = re.compile(r"\d\s*[*×xX]\s*\d|\d\s*=\s*\d|!=|≠")


class ActInputs(BaseModel):
    """What the act model reads of a message: its parts and the flags the pipeline already computed."""

    model_config = ConfigDict(frozen=True)

    parts: list[Part]
    rule_act: str
    has_diagnosis: bool = False
    has_misconception: bool = False
    setup_enough: bool = False


def _norm(text: str) -> str:
    """Lower case, every number as one "0": a new batch size or GPU count reads like the ones seen in training."""
    return _DIGITS.sub("0", text.lower())


def _ngrams(text: str, prefix: str) -> list[str]:
    """Chinese: character 1–3-grams of each run of Han characters; English: words, word bigrams and character
    2–5-grams inside words (so "OOMs", "OOMed" and "oom" share most of their features)."""
    out: list[str] = []
    for run in _CJK.findall(text):
        for n in (1, 2, 3):
            out.extend(f"{prefix}c{n}:{run[i : i + n]}" for i in range(len(run) - n + 1))
    words = _LATIN_WORD.findall(_CJK.sub(" ", text))
    out.extend(f"{prefix}w:{w}" for w in words)
    out.extend(f"{prefix}b:{a} {b}" for a, b in zip(words, words[1:], strict=False))
    for w in words:
        padded = f" {w} "
        for n in (2, 3, 4, 5):
            out.extend(f"{prefix}l{n}:{padded[i : i + n]}" for i in range(len(padded) - n + 1))
    return out


def _block_texts(parts: list[Part], rule_act: str, flags: dict[str, bool]) -> tuple[str, str, list[str]]:
    """What the three feature blocks read: the asking sentences and all prose (normalised), and the ``struct``
    names (what was pasted, flags, the rules' verdict)."""
    ask_text, prose_text, struct, _, _ = _texts(parts, rule_act, flags)
    return ask_text, prose_text, struct


def _texts(parts: list[Part], rule_act: str, flags: dict[str, bool]) -> tuple[str, str, list[str], str, str]:
    """:func:`_block_texts` and the two sentences that weigh most: the first that asks (else the first line, an issue
    title) and the last that asks. An n-gram there gets its own feature: "how to" in the title is not "how to"
    in the fifth question of a long report (grouped CV, 637 questions: model alone 0.658 / 0.594 -> 0.681 / 0.633)."""
    from .acts import asked_sentences  # acts imports this module lazily: no cycle at import

    prose = prose_of(parts)[:MAX_PROSE_CHARS]
    asks = asked_sentences(prose)
    ask_text = _norm("\n".join(asks))
    struct = [f"rule:{rule_act}"] + [f"flag:{k}" for k, v in flags.items() if v]
    struct += [f"part:{k}" for k in sorted({p.kind for p in parts if p.kind != "prose"})]
    struct.append("asks:none" if not asks else ("asks:one" if len(asks) == 1 else "asks:many"))
    n = len(prose)
    struct.append("len:short" if n < 80 else "len:mid" if n < 300 else "len:long")
    stripped = prose.rstrip()
    if stripped.endswith(("?", "？")):
        struct.append("ends:question")
    if _ARITH.search(prose):
        struct.append("arith")
    if asks and asks[0] == prose.strip().split("\n", 1)[0].strip():
        struct.append("title:asks")
    first = asks[0] if asks else prose.strip().split("\n", 1)[0]
    last = asks[-1] if asks else ""
    return ask_text, _norm(prose), struct, _norm(first), _norm(last)


def _bucket_counts(parts: list[Part], rule_act: str, flags: dict[str, bool]) -> dict[str, list[str]]:
    """The message's features in five blocks (each normalised on its own, so a long report's prose does not
    drown what it asks): ``ask`` (the asking sentences), ``prose`` (all prose), ``first`` and ``last`` (the first
    and the last asking sentence), ``struct`` (what was pasted, flags, the rules' verdict)."""
    ask_text, prose_text, struct, first, last = _texts(parts, rule_act, flags)
    return {
        "ask": _ngrams(ask_text, "a"),
        "prose": _ngrams(prose_text, "p"),
        "first": _ngrams(first, "f"),
        "last": _ngrams(last, "l"),
        "struct": struct,
    }


def features_reference(inputs: ActInputs) -> dict[int, float]:
    """:func:`features` as first written (every n-gram a string, hashed whole); kept to test the fast one."""
    flags = {
        "diagnosis": inputs.has_diagnosis,
        "misconception": inputs.has_misconception,
        "setup_enough": inputs.setup_enough,
    }
    vector: dict[int, float] = {}
    for block, names in _bucket_counts(inputs.parts, inputs.rule_act, flags).items():
        unique = set(names)
        if not unique:
            continue
        weight = 1.0 if block == "struct" else 1.0 / np.sqrt(len(unique))
        for name in unique:
            bucket = zlib.crc32(f"{block}|{name}".encode()) % N_BUCKETS
            vector[bucket] = vector.get(bucket, 0.0) + float(weight)
    return vector


def _gram_sets(text: str) -> dict[str, set[str]]:
    """The distinct n-grams of :func:`_ngrams`, by kind (``c1``…``c3``, ``w``, ``b``, ``l2``…``l5``), without
    their prefixes: a feature's name is ``{prefix}{kind}:{gram}`` and the kind never contains ``:``."""
    out: dict[str, set[str]] = {k: set() for k in ("c1", "c2", "c3", "w", "b", "l2", "l3", "l4", "l5")}
    for run in _CJK.findall(text):
        for n in (1, 2, 3):
            out[f"c{n}"].update(run[i : i + n] for i in range(len(run) - n + 1))
    words = _LATIN_WORD.findall(_CJK.sub(" ", text))
    out["w"].update(words)
    out["b"].update(f"{a} {b}" for a, b in zip(words, words[1:], strict=False))
    for w in set(words):  # a repeated word gives the same grams
        padded = f" {w} "
        for n in (2, 3, 4, 5):
            out[f"l{n}"].update(padded[i : i + n] for i in range(len(padded) - n + 1))
    return out


def features(inputs: ActInputs) -> dict[int, float]:
    """Hashed, block-normalised binary features of a message (the trainer and the loader share this).

    The same buckets and weights as :func:`features_reference` (``tests/test_perf5_units.py``), faster: the
    n-grams are kept as sets per kind and each is hashed from its kind's CRC-32 state (``crc32(b, crc32(a)) ==
    crc32(a + b)``) instead of building and hashing every ``block|prefix kind:gram`` string."""
    flags = {
        "diagnosis": inputs.has_diagnosis,
        "misconception": inputs.has_misconception,
        "setup_enough": inputs.setup_enough,
    }
    ask_text, prose_text, struct, first, last = _texts(inputs.parts, inputs.rule_act, flags)
    vector: dict[int, float] = {}
    for block, prefix, text in (
        ("ask", "a", ask_text),
        ("prose", "p", prose_text),
        ("first", "f", first),
        ("last", "l", last),
    ):
        grams = _gram_sets(text)
        count = sum(len(g) for g in grams.values())
        if not count:
            continue
        weight = float(1.0 / np.sqrt(count))
        for kind, kind_grams in grams.items():
            state = zlib.crc32(f"{block}|{prefix}{kind}:".encode())
            for gram in kind_grams:
                bucket = zlib.crc32(gram.encode(), state) % N_BUCKETS
                vector[bucket] = vector.get(bucket, 0.0) + weight
    for name in set(struct):
        bucket = zlib.crc32(f"struct|{name}".encode()) % N_BUCKETS
        vector[bucket] = vector.get(bucket, 0.0) + 1.0
    return vector


class ActModel(BaseModel):
    """Weights of the linear act model as the trainer wrote them, and how its verdict meets the rules'."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    classes: tuple[str, ...]
    weights: Any  # numpy (classes × N_BUCKETS) float32
    bias: Any  # numpy (classes,) float32
    #: The model replaces the rules' verdict only when its probability for its own pick is at least this.
    override: float
    #: Whether the rules' verdict is one of the features (else it is blanked to "-", as in training).
    with_rule: bool = False

    def probabilities(self, inputs: ActInputs) -> dict[str, float]:
        vector = features(inputs if self.with_rule else inputs.model_copy(update={"rule_act": "-"}))
        idx = np.fromiter(vector.keys(), dtype=np.int64, count=len(vector))
        val = np.fromiter(vector.values(), dtype=np.float32, count=len(vector))
        logits = self.weights[:, idx] @ val + self.bias
        logits = logits - logits.max()
        p = np.exp(logits)
        p = p / p.sum()
        return {c: float(x) for c, x in zip(self.classes, p, strict=True)}

    def decide(self, inputs: ActInputs) -> str:
        probs = self.probabilities(inputs)
        best = max(probs, key=lambda c: probs[c])
        return best if best != inputs.rule_act and probs[best] >= self.override else inputs.rule_act


def model_from_json(data: dict[str, Any]) -> ActModel:
    """An :class:`ActModel` from the trainer's JSON (weights as base64 float16, row-major)."""
    classes = tuple(data["classes"])
    if data.get("n_buckets") != N_BUCKETS or not set(classes) <= set(ACT_ORDER):
        raise ValueError("act model artifact does not match this code (n_buckets or classes differ)")
    raw = np.frombuffer(base64.b64decode(data["weights_f16"]), dtype=np.float16)
    weights = raw.astype(np.float32).reshape(len(classes), N_BUCKETS)
    bias = np.asarray(data["bias"], dtype=np.float32)
    return ActModel(
        classes=classes,
        weights=weights,
        bias=bias,
        override=float(data["override"]),
        with_rule=bool(data.get("with_rule", False)),
    )


def model_to_json(
    classes: list[str],
    weights: np.ndarray,
    bias: np.ndarray,
    override: float,
    with_rule: bool,
    meta: dict[str, Any],
) -> str:
    """The artifact's text (deterministic: the same weights give the same bytes)."""
    payload = {
        "classes": list(classes),
        "n_buckets": N_BUCKETS,
        "override": override,
        "with_rule": with_rule,
        "bias": [round(float(b), 5) for b in bias],
        "weights_f16": base64.b64encode(np.asarray(weights, dtype=np.float16).tobytes()).decode("ascii"),
        "meta": meta,
    }
    return json.dumps(payload, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


@lru_cache(maxsize=1)
def load_act_model(path: str = str(ARTIFACT)) -> ActModel | None:
    """The shipped model, read once; ``None`` (rules alone, one warning) when the artifact is missing or broken."""
    try:
        return model_from_json(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as err:
        log.warning("act model not loaded (%s): the question act comes from the rules alone", err)
        return None


def revise_act(
    parts: list[Part],
    rule_act: str,
    *,
    has_diagnosis: bool = False,
    has_misconception: bool = False,
    setup_enough: bool = False,
) -> str:
    """The act after the model has seen the rules' verdict: the rules' verdict when no model is loaded or it is
    not confident enough (see :attr:`ActModel.override`)."""
    if os.environ.get(ENV_SWITCH, "").strip().lower() in ("0", "off", "false", "no"):
        return rule_act
    model = load_act_model()
    if model is None:
        return rule_act
    inputs = ActInputs(
        parts=parts,
        rule_act=rule_act,
        has_diagnosis=has_diagnosis,
        has_misconception=has_misconception,
        setup_enough=setup_enough,
    )
    return model.decide(inputs)
