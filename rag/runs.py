"""Two values for one setting in one message: every candidate with where it was read, and one rule for the run the
question is about.

People describe two runs in one message ("`--per_device_train_batch_size 4` OOMs, the most I can set is 3", "one GPU
uses 8417MB, with DDP on 2 GPUs 13849MB", "QLoRA fits in 24G but plain LoRA does not", "32B: TP=8, PP=1 / 70B: TP=8,
PP=2"). The slot readers read the whole prose and keep one value per setting (some the first, some the last). This
module reads the prose again clause by clause with the same readers, so every reader feeds it without knowing, and
collects every value each clause states with its position and the outcome its clause reports (the run fails, the run
works). The GPU layout is one of them only where a clause counts nodes (:data:`LAYOUT_KEY`). :func:`choose` then
picks one value per setting by one rule:

1. a value proposed or inferred ("what if I set bs 8?", "so per gpu batch size is 512?") is not a run;
2. when one value is the run reported to fail (OOM, 爆显存, an error, a hang) and no run reported to work has it, the
   failing one: that is what the user asks about ("bs 4 OOMs, the most I can set is 3" is about 4; the failing value
   mentioned again without an outcome is the same run);
3. otherwise, for observed memory, the largest reading (the peak: "67G after loading … 100G … OOM");
4. otherwise, for the GPU layout counted in nodes, when one layout is reported to work and another's outcome is not
   said, the latter, if it has no fewer GPUs: the user describes the layout that works as the contrast to the one
   asked about ("单机8卡训练…正常…更换2机16卡后…loss突然增大", ms-swift #2280). (For every setting, this rule moved 9 dev
   values away from their labels and fixed none: a GPU count or a method named beside a working run is as often
   hearsay, a template field or the alternative asked about.)
5. otherwise the latest run.

For the GPU count, rule 2 holds only when the failing run has more GPUs than every working one ("2 V100 … can run
successfully … on 4*V100 … CUDA out of memory"): a run on fewer GPUs that failed is usually why the user moved to more
("on a single GPU … anything above that gives OOM … split the model across 2 GPUs", DeepSpeed #5645), and the
question is about the run on more.

The other values are returned too, so the answer can say on its first screen which one the numbers use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .slots import Slots, extract_slots, hearsay, lora_rank_in, says_equivalent_batch

#: Settings a message gives for two runs. Model identity (name, preset, size) moves as one. The GPU count only from a
#: clause without per-GPU wording (:data:`_PER_GPU`: "单卡24G" and "one GPU each" are no run on one GPU), and, as every
#: key, it replaces the whole reading only for a run reported to fail beside one reported to work, here only when the
#: failing run has more GPUs (see the module docstring; "2 V100 … can run successfully … on 4*V100 … CUDA out of
#: memory", DeepSpeed #4005). The sequence length since stop 35:
#: "max_length=2048时运行正常，当max_length=256时，报错" asks about 256. The LoRA rank since stop 48: "ChatGLM3 … rank=256 …
#: 可以正常训练 … GLM4-9B … rank=16 … 一直OOM" (GLM-4 #16) asks about 16.
RUN_KEYS: tuple[str, ...] = (
    "world_size",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "observed_memory_gb",
    "finetune",
    "pipeline_parallel_size",
    "tensor_parallel_size",
    "zero_stage",
    "seq_len",
    "lora_rank",
)
MODEL_KEYS: tuple[str, ...] = ("model_text", "model", "num_params")
#: The GPU layout of a run, read only from clauses that count nodes ("trains on 1 node 8xA100 but hits OOM in 4 nodes
#: 8xA100", "4机共32张H100 … 正常，16机共128张H100 … 卡在保存断点"): (nodes, GPUs in all). A node count is never
#: per-GPU wording, so two of them are two runs.
LAYOUT_KEY = "layout"

# Where a sentence ends, and where a clause inside it ends (a comma, a semicolon, "but"/"但是").
_SENTENCE = re.compile(r"[。！？!?]+|\n|(?<=[A-Za-z0-9\u4e00-\u9fff）)`])\.(?=\s|$|[\u4e00-\u9fff])")
_CLAUSE = re.compile(r"[，,;；]\s*|\s+(?:but|while|whereas|however)\s+|(?:但是|但|可是|而|不过)", re.I)

# What a clause says of the run it describes.
_FAILS = re.compile(
    # (written against Chinese, "显存一直OOM", where \b finds no word boundary)
    r"(?<![A-Za-z])OOM(?:s|ed)?(?![A-Za-z])|out[- ]of[- ]memory|爆|报错|不够|不足|溢出|(?<![A-Za-z])error|(?<![A-Za-z])fail|crash|\bkilled\b|cannot|can't|无法|跑不|不行|失败|"
    r"卡住|卡在|卡死|卡主|\bhang(?:s|ing)?\b|\bstuck\b|\bproblems?\b|有问题|出问题|出现问题|"
    r"\b(?:not|doesn'?t|didn'?t|does not|did not|won'?t) work",
    re.I,
)
_WORKS = re.compile(
    # (not the noun: "I'm re-producing your work by using one node with 8 GPUs", VideoMAE #64)
    r"(?<!not )(?<!n't )(?<!does not )(?<!your )(?<!our )(?<!their )(?<!the )(?<!this )(?<!great )(?<!excellent )"
    r"(?<!nice )(?<!amazing )\bworks?\b|(?<!not )\bworked\b|\bfine\b(?![-_ ]?tun)|\bok\b|\bokay\b|正常|可以(?:跑|运行|训练|执行)|可以的(?![吗话])|能跑|跑通|才能|够用|是够的|足够|"
    r"\bmax(?:imum)?\b|最大|最多|\bsucceed|\bsuccessful(?:ly)?\b|\brun[s]? (?:well|through)|\bit (?:runs|ran|trains|trained)\b(?! out)|成功|"
    r"\btrains (?:on|fine)\b|(?<!not )(?<!n't )\bas expected\b|\b(?:I|we) (?:can|could|was able to|were able to) (?:fine-?tune|train|run)\b",
    re.I,
)
# A clause that extends the one before it: "it always raises out-of-memory errors, even in batch size 1" (FastChat
# #3310), "显存溢出，即使 batch size 设为 1": the value belongs to the run the previous clause reports.
_EVEN = re.compile(r"^\s*(?:even|即使|哪怕|就算|甚至|连)", re.I)
# Wording about one GPU of several, not a run's GPU count.
_PER_GPU = re.compile(r"单卡|每卡|每张|单张|每个GPU|\beach\b|\bper[- ](?:gpu|card|device)|\bsingle[- ]gpu memory", re.I)
# A value the user proposes or works out, not a run they ran.
_NOT_A_RUN = re.compile(
    r"如果|假如|要是|可以吗|能否|行吗|\bshould I\b|\bcan I\b|\bcould I\b|\bwhat if\b|\bso\b[^.?!]*\?$|是不是|应该是",
    re.I,
)


@dataclass(frozen=True)
class Candidate:
    """One value a clause of the prose states for one setting (for the model: name, preset and size together)."""

    key: str
    value: Any
    pos: int
    outcome: str | None  # "fails", "works" or None
    bundle: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Choice:
    """The value the numbers use for one setting, why, and the others the message gives."""

    key: str
    chosen: Candidate
    others: tuple[Candidate, ...]
    why: str  # "fails" (the failing run over the working one), "peak" (the largest memory reading), "other_works" (the
    # layout not reported to work, beside one that works) or "latest"
    found: tuple[Candidate, ...] = ()


def candidates_of(choice: Choice) -> tuple[Candidate, ...]:
    """Every candidate the choice was made from, in reading order."""
    return choice.found


def _clauses(prose: str) -> list[tuple[int, int, str]]:
    """(sentence number, start, text) of every clause."""
    out: list[tuple[int, int, str]] = []
    start = 0
    ends = [m.end() for m in _SENTENCE.finditer(prose)] + [len(prose)]
    for n, end in enumerate(ends):
        sentence = prose[start:end]
        pos = 0
        for m in [*_CLAUSE.finditer(sentence), None]:
            stop = m.start() if m else len(sentence)
            text = sentence[pos:stop]
            if text.strip():
                out.append((n, start + pos, text))
            if m:
                pos = m.end()
        start = end
    return out


# A failure said not to happen ("正常step不会报错", "没有报错", "no OOM", "without errors"): the run works.
# Not a condition ("只有…才不会OOM") or an expectation ("应该不会报错", "I should have no problem running on 4 V100").
_NO_FAILURE = re.compile(
    r"(?<!才)(?<!应该)(?<!应当)(?:不会|没有|没|不再|未|并未)\s*(?:报错|出错|爆显存|OOM)|"
    r"(?<!should have )(?<!would have )\b(?:no|without(?: any)?)\s+(?:OOM|errors?)\b",
    re.I,
)
# A question whether another setting would fail too ("我4张40g的卡 batch 为1也会报错吗？", "would it also OOM with 4
# GPUs?"): no run the user ran.
_WOULD_IT_TOO = re.compile(r"(?:也|还)会[^，。,.;；]{0,12}吗\s*[？?]?\s*$|\bwould it (?:also|still)\b", re.I)


def _outcome(text: str) -> str | None:
    text = _NO_FAILURE.sub(" works ", text)
    fails, works = bool(_FAILS.search(text)), bool(_WORKS.search(text))
    return "fails" if fails and not works else "works" if works and not fails else None


def _model_bundle(slots: Slots) -> tuple[tuple[str, Any], ...]:
    return tuple((k, getattr(slots, k)) for k in MODEL_KEYS if getattr(slots, k) is not None)


def _value_of(slots: Slots, key: str) -> Any:
    """The value a clause's reading gives for one candidate key (the model: its bundle)."""
    if key == "model":
        return _model_bundle(slots)
    if key == LAYOUT_KEY:
        return (slots.num_nodes, slots.world_size) if slots.num_nodes is not None else None
    return getattr(slots, key, None)


def _layout(clauses: list[tuple[int, int, str]], read: list[Slots], i: int) -> tuple[int, int] | None:
    """(nodes, GPUs in all) of clause ``i``; a clause that only counts nodes reads on into the next clause of its
    sentence when that one counts the GPUs ("2个节点，8张卡（每个节点4卡）也跑不动")."""
    slots = read[i]
    if slots.num_nodes is None:
        return None
    if slots.world_size is not None:
        return (slots.num_nodes, slots.world_size)
    j = i + 1
    if j < len(clauses) and clauses[j][0] == clauses[i][0] and read[j].num_nodes is None and read[j].world_size:
        both = extract_slots(clauses[i][2] + "，" + clauses[j][2], prose=True)
        if both.num_nodes == slots.num_nodes and both.world_size is not None:
            return (both.num_nodes, both.world_size)
    return None


def _next_sentence_outcome(
    clauses: list[tuple[int, int, str]], read: list[Slots], outcomes: list[str | None], j: int, key: str
) -> str | None:
    """The outcome the sentence starting at clause ``j`` reports, when it states no value of ``key``: a line of
    settings followed by a line saying how that run went ("训练参数 ：…, max_token_len=8000, bs=1 / 这样训练的显存一直OOM",
    GLM-4 #16; "bs=4, 8 GPUs, zero2" on a line, "OOM at the first step" on the next)."""
    if j >= len(clauses) or not clauses[j - 1][2].endswith("\n"):
        return None  # only a line of its own: a sentence inside a paragraph has its outcome in it
    sentence = clauses[j][0]
    found = [k for k in range(j, len(clauses)) if clauses[k][0] == sentence]
    if any(_value_of(read[k], key) for k in found):
        return None
    # (a question, "Is there any suggestion for this problem?", reports no outcome)
    said = {outcomes[k] for k in found if not re.search(r"[？?]\s*$", clauses[k][2])} - {None}
    return said.pop() if len(said) == 1 else None


def candidates(prose: str, adapter: bool = False) -> dict[str, list[Candidate]]:
    """Every value each clause of ``prose`` states for :data:`RUN_KEYS` and the model, in reading order. A clause
    that states no outcome takes the outcome of the next clauses of its sentence, up to one that states another value
    of the same setting ("with `bs==2` on 2 GPUs, OOM occurs early"), or, when it begins "even …", of the clause
    before it ("it raises out-of-memory errors, even in batch size 1"). A sentence that states no outcome at all takes
    the outcome of the sentence after it when that one states no value of the setting (a line of settings, then a
    line saying how the run went). ``adapter``: the whole prose reads as a LoRA / QLoRA run, so a clause of its
    settings ("Qlora(4-bit), rank=16, …") names its rank without naming the method."""
    clauses = _clauses(prose)
    read = [extract_slots(text, prose=True) for _, _, text in clauses]
    if adapter:
        for (_, _, text), slots in zip(clauses, read, strict=True):
            if slots.lora_rank is None and (rank := lora_rank_in(text)) is not None:
                slots.lora_rank = rank
    outcomes = [_outcome(text) for _, _, text in clauses]
    out: dict[str, list[Candidate]] = {}
    for i, ((sentence, pos, text), slots) in enumerate(zip(clauses, read, strict=True)):
        if (_NOT_A_RUN.search(text) and outcomes[i] is None) or _WOULD_IT_TOO.search(text):
            continue  # "what if I set bs 8?" (but "如果用13B直接爆显存了" reports a run)
        # "in report 1.1, it says the default config is for 80G memory usage" (Open-Sora #409), "in your paper,
        # batch_size = 128, and used 4 GPU" (3DMPPE_POSENET #85): a document's figure or setting, no run of theirs
        heard = hearsay(prose, pos + len(text))
        values: list[tuple[str, Any, tuple[tuple[str, Any], ...]]] = [
            (k, getattr(slots, k), ())
            for k in RUN_KEYS
            if getattr(slots, k) is not None
            and not heard
            and not (k == "world_size" and _PER_GPU.search(text))
            and not (k == "train_micro_batch_size_per_gpu" and says_equivalent_batch(text))
        ]
        if bundle := _model_bundle(slots):
            values.append(("model", bundle[0][1], bundle))
        if (layout := _layout(clauses, read, i)) is not None:
            values.append((LAYOUT_KEY, layout, ()))
        for key, value, bun in values:
            outcome = outcomes[i]
            j = i + 1
            own = value if key != "model" else bun
            while outcome is None and j < len(clauses) and clauses[j][0] == sentence:
                other = _value_of(read[j], key)
                if other and other != own:
                    break
                outcome = outcomes[j]
                j += 1
            else:
                if outcome is None:
                    outcome = _next_sentence_outcome(clauses, read, outcomes, j, key)
            if outcome is None and i > 0 and clauses[i - 1][0] == sentence and _EVEN.match(text):
                outcome = outcomes[i - 1]
            out.setdefault(key, []).append(Candidate(key, value, pos, outcome, bun))
    return out


def _same(a: Candidate, b: Candidate) -> bool:
    if a.key != "model":
        return bool(a.value == b.value)
    da, db = dict(a.bundle), dict(b.bundle)
    if da.get("model") and da.get("model") == db.get("model"):
        return True
    ta, tb = (re.sub(r"[^a-z0-9]", "", str(d.get("model_text", "")).lower()) for d in (da, db))
    if ta and tb:
        return ta in tb or tb in ta
    return da.get("num_params") is not None and da.get("num_params") == db.get("num_params")


def _gpus(c: Candidate) -> int:
    """The GPU count of a layout candidate (nodes, GPUs in all)."""
    return int(c.value[1])


def choose(found: list[Candidate]) -> Choice | None:
    """The run the question is about among one setting's candidates (see the module's rule); None with one value."""
    distinct: list[Candidate] = []
    for c in found:
        if not any(_same(c, d) for d in distinct):
            distinct.append(c)
    if len(distinct) < 2:
        return None
    fails = [c for c in found if c.outcome == "fails"]
    rest = [c for c in found if c.outcome != "fails"]
    works = [c for c in rest if c.outcome == "works"]
    # (the GPU count of a failed run on no more GPUs than a working one is not the run asked about)
    fewer = bool(fails) and found[0].key == "world_size" and any(int(w.value) >= int(fails[-1].value) for w in works)
    if (
        fails
        and not fewer
        and all(_same(f, fails[-1]) for f in fails)
        and not any(_same(f, w) for f in fails for w in works)
    ):
        chosen, why = fails[-1], "fails"
    elif found[0].key == "observed_memory_gb":
        chosen, why = max(found, key=lambda c: float(c.value)), "peak"  # several readings of one run: its peak
    elif (
        found[0].key == LAYOUT_KEY
        and works
        and (unsaid := [c for c in found if c.outcome is None and not any(_same(c, w) for w in works)])
        and not any(_gpus(w) > _gpus(unsaid[-1]) for w in works)
    ):
        chosen, why = unsaid[-1], "other_works"  # the layout not reported to work is the one asked about
    else:
        chosen, why = found[-1], "latest"
    others = tuple(d for d in distinct if not _same(d, chosen))
    return Choice(found[0].key, chosen, others, why, tuple(found))


def choices(prose: str, adapter: bool = False) -> dict[str, Choice]:
    """One :class:`Choice` per setting the prose gives two or more values for (``adapter``: see :func:`candidates`)."""
    return {k: c for k, found in candidates(prose, adapter).items() if (c := choose(found)) is not None}
