"""Known wrong beliefs about batch size, accumulation and memory, as precise rules over one claim.

The vocabulary (what counts as "gradient accumulation", "effective batch", "bigger") is imported from
``rag.intents`` so the chat and the fact check recognise the same words. The rules here are stricter than
the chat's question rules: a question "does GA raise memory?" carries the belief whatever its wording, but an
answer sentence only carries it when it *asserts* it — so every rule refuses sentences that negate
(不会 / does not / rather than …) or name the real exceptions (pipeline parallelism, offload, set_to_none).
Precision over recall: a correct sentence must never be marked wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from rag.intents import BIG_BATCH, DOWN, EFF, GA, GENERALIZE, MULTI_GPU, POOL, PREC, SMALL_BATCH, UP, UPDATE_SIZE

# The effective batch, but not inside HF's per_device_train_batch_size (which EFF's train_batch_size matches).
EFFX = rf"(?<!per_device_){EFF}"
# Memory words, stricter than the chat's MEM (no "fit": "GA lets you fit a larger batch" is right).
MEMX = r"(?:显存|内存|memory|vram|\boom\b|out of memory)"
# A claim that denies, contrasts or quotes a myth is not asserting it.
NEG_CORE = (
    r"(?:不会|不能|不决定|不取决|不等于|不代表|不意味|不存在|并不|并非|而非|而不是|不是|不需要|不用|不再|不影响|不改变|不变|不增加|几乎不|基本不|没有|无关|不占|误区|误解|"
    r"\bnot\b|n[’']t\b|\bno\b|\bnever\b|unchanged|independent|regardless|rather than|instead of|"
    r"stays? (?:the )?same|myth|misconception)"
)
NEG = r"(?:" + NEG_CORE + r"|\bwithout\b)"
# A sentence that contrasts or qualifies ("only if", "但", "除非") is judged as a whole, never clause by clause.
CONTRAST = r"(?:\bbut\b|however|\bonly\b|unless|whereas|但|不过|只有|除非|而是|然而)"
# The genuine exceptions where accumulation does cost memory (card ga-memory-exceptions).
EXCEPTION = (
    r"(?:流水线|pipeline|no_sync|offload|卸载|set_to_none|一份|一个梯度|one (?:extra )?(?:gradient|buffer)|"
    r"常数|constant|第一步|first (?:optimizer )?step|1F1B|GPipe)"
)
DOWN2 = r"(?:" + DOWN[3:-1] + r"|更小|小一些|少一些|降到|降低到|fewer)"
UP_WORD = UP
MICRO = r"(?:micro|微批|per[_-]device|per-gpu|单个批次)"
GPU_TERM = (
    r"(?:卡数|张卡|块卡|\d+\s*(?:张|块)?\s*卡|多卡|显卡数|[Gg][Pp][Uu]\s*(?:数|个数|数量)|(?<![_-])\bgpus?\b(?!_)|world_size|world size|进程数|"
    r"num_processes|nproc|\bdevices\b|process(?:es)?\b|进程|\bDP\b|dp_size|节点|\bnodes?\b|data[-_ ]parallel|数据并行|replicas?|并行度|副本数)"
)
SINGLE_GPU = r"(?:单卡|单张|单块|单\s*GPU|一张卡|一块卡|single[- ]GPU|one GPU|\b1 GPU|一个 GPU)"
PRODUCT = r"(?:乘积|乘以|相乘|\bproduct\b|multipl(?!es?\b)\w*|\btimes\b|[×✕*]|\s[xX]\s)"  # "a multiple of" divides
UP2 = r"(?:" + UP[3:-1] + r"|提到|升到|加到|增到|调到更大)"
GA_UP = (
    rf"(?:{UP2}(?:(?!{DOWN2}).){{0,8}}{GA}|{GA}(?:(?!{DOWN2}).){{0,10}}{UP2}|"
    r"(?:more|更多的?)\s*\w+\s+(?:are\s+|is\s+|get\s+)?accumulated)"
)
GA_DOWN = (
    # ("a smaller batch with gradient accumulation keeps the peak bounded": the batch is what gets smaller, not GA)
    rf"(?:{DOWN2}(?:(?!{UP}|batch|批).){{0,12}}{GA}|{GA}\S{{0,4}}\s?(?:{DOWN2})|"
    rf"{GA}\s*(?:从|from)\s*\d+\s*(?:{DOWN2}|(?:to|到)\s*\d+))"
)
# Memory itself going up: no punctuation between, and not "memory allows … raise the micro batch".
MEM_UP = (
    rf"(?:{MEMX}(?:(?!{DOWN2}|micro|batch|批|把|允许|allow)[^，,。；;:：]){{0,16}}{UP}|"
    rf"{UP}(?:(?!{DOWN2})[^，,。；;:：]){{0,6}}{MEMX}|占用更多|更多显存|显存需求|memory requirements? grows?)"
)
SAVE_MEM = r"(?:省显存|节省|节约|省内存|降低显存|减少显存|save\w* (?:gpu )?memory|reduc\w* (?:gpu )?memory|trades? time for memory|时间换空间)"
COPIES = (
    r"(?:(?:保存|存储|存下|存)\S{0,3}\s*(?:\d+|N|多|每)\s*(?:个|份)\s*(?:微批次?|micro[-_ ]?batch\w*)?\S{0,4}梯度|"
    r"\d+\s*[×x*✕]\s*X\b|(?:\d+|N)\s*(?:份|倍)\s*的?梯度|梯度\S{0,6}(?:\d+|N)\s*(?:份|倍)|"
    r"(?:stor\w*|keep\w*|sav\w*|hold\w*)\s+(?:the\s+)?(?:gradients?\s+(?:of|for|from)\s+(?:each|every|all(?: \d+| N)?|\d+|N)\s+"
    r"micro[-_ ]?batch\w*|(?:\d+|N|separate|multiple)\s+(?:copies|sets)\s+of\s+(?:the\s+)?gradients?)|"
    r"(?:\d+|N)\s*(?:x|×|times)\s+(?:the\s+)?gradient memory|gradient memory is (?:\d+|N)\s*(?:x|×|times)|"
    r"gradients?\s+(?:of|from|for)\s+(?:each|every|all(?: \d+| N)?|\d+|N)\s+micro[-_ ]?batch\w*\s+(?:are|is)\s+(?:kept|stored|saved|held)|梯度(?:累积)?信息\S{0,4}(?:变多|增多|更多))"
)
OOM_WORDS = rf"(?:{MEMX}|爆掉|爆了|显存需求|需要存储更多|更多的激活|more activations)"
LARGE = r"(?:过大|太大|很大|变大|越大|更大|增大|再增大|too (?:large|big)|larger|bigger|increas\w*|grows?)"
# The effective batch itself being large (not "for the same effective batch, a larger micro batch").
EFF_LARGE = (
    rf"(?:{EFFX}(?:(?!micro|微批|per[_-]device)[^，,。；;]){{0,20}}{LARGE}(?!\s*(?:micro|微批))|"
    rf"{LARGE}\s*(?:的)?\s*{EFFX})"
)
# "use gradient accumulation for a larger effective batch" is the right advice, not the OOM myth.
# ("gradient accumulation can recover a larger effective batch": GA as the subject that restores it)
GA_AS_MEANS = (
    # ("a smaller per-device batch (more gradient accumulation) are the levers": the accumulation that makes up for it)
    rf"(?:[(（]\s*(?:more|larger|higher|更多的?|更大的?)\s*{GA}[^)）]{{0,20}}[)）]|"
    rf"(?:use|using|with|via|by|through|用|使用|通过|借助|靠)\s*(?:the\s+)?{GA}|"
    rf"{GA}\s+(?:can\s+|could\s+|will\s+|helps?\s+(?:to\s+)?|lets? you\s+)?"
    r"(?:recovers?|reach(?:es)?|restores?|regains?|keeps?|gives?|provides?|achieves?|maintains?)\b)"
)
HALF2 = (
    r"(?:减半|一半|halv\w*|\bhalf\b|显著|大幅|大大|significantly|dramatically|substantially|greatly|50\s*%|两倍|2\s*倍|"
    r"\btwice\b|by a factor of 2)"
)
PREC_NUANCE = (
    r"(?:激活|activation|推理|inference|部署|deploy|lora|冻结|frozen|权重|weights?\b|master|主权重|optimizer stat|"
    r"优化器状态|速度|speed|"
    # the dtype weights are loaded in (host RAM halves from fp32 to bf16: zh-moss-rlhf-12), not mixed-precision training
    r"\bload(?:ing|ed)?\b|加载|host (?:ram|memory))"
)
IMPROVE = r"(?:提高|提升|改善|更好|增强|improv\w*|better|boost\w*|enhanc\w*)"
WORSE = r"(?:worse|hurt\w*|\bgap\b|更差|变差|下降|sharp|尖锐)"
GLOBAL_INFO = r"(?:全局信息|global information)"
BOTH_SMALL = r"(?:都很小|都设置得很小|都较小|都太小|都小|both (?:are |set )?(?:very |too )?small)"
MEM_NO_CHANGE = (
    r"(?:不会增加|不增加|不会(?:让|使)?\S{0,4}(?:增加|增大|提高|变大)|不会改变|基本不变|几乎不变|几乎一样|基本一样|"
    r"does(?: not|n[’']t) (?:increase|raise|change|affect|grow)|won[’']t (?:increase|raise|change)|"
    r"not increase|unchanged|stays? (?:the same|flat|constant)|(?:essentially|roughly|almost) the same)"
)


def has(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.I) is not None


Verdict = Literal["wrong", "imprecise", "right"]


@dataclass(frozen=True)
class BeliefRule:
    """A rule over one claim: ``matches(sentence, unit, answer)`` where unit is the bullet and answer the whole text."""

    key: str
    card_id: str
    verdict: Verdict
    matches: Callable[[str, str, str], bool]
    sentence_level: bool = True  # False: judged on the whole bullet (its heading carries the subject)


def _ga_indirect(s: str, unit: str, ans: str) -> bool:
    """'GA does not raise memory directly but indirectly through the effective batch' (the seed's opening)."""
    if not has(GA, unit):
        return False
    for clause in re.split(r"[，,;；]", s):
        if has(r"间接|indirect", clause) and has(EFFX, clause) and not has(NEG, clause):
            return True
    return False


def _ga_stores_copies(s: str, unit: str, ans: str) -> bool:
    return has(GA, unit) and has(COPIES, s) and not has(NEG_CORE, s) and not has(EXCEPTION, s)


#: A split change (smaller GA with a larger micro batch, effective batch kept) states neither that lowering GA alone
#: saves memory nor that the effective batch causes OOM: "larger micro batch, smaller GA, same effective batch: only
#: speed/memory differ".
SAME_EFFECTIVE = (
    r"same effective batch|effective batch (?:stays|is unchanged|unchanged)|有效批次(?:不变|相同|一样)|保持有效批次"
)


def _clauses(s: str) -> list[str]:
    """The clauses of a plain (uncontrasted) sentence; a contrasted one stays whole."""
    if has(CONTRAST, s):
        return [s]
    return [c for c in re.split(r"[，,;；]|\bso\b|所以|因此", s) if c.strip()]


#: The growth named as a symptom whose cause the sentence gives ("memory proportional to GA steps means the framework
#: keeps each micro-batch's graph alive", "显存随累积步数增加，说明…"): a diagnosis, not the belief.
SYMPTOM_EXPLAINED = r"(?:\b(?:means|indicates|suggests|points to|is a sign of)\b|说明|意味着|表明)"


def _ga_raises_memory(s: str, unit: str, ans: str) -> bool:
    if (
        has(NEG, s)
        or has(SYMPTOM_EXPLAINED, s)
        or has(EXCEPTION, s)
        or has(SAVE_MEM, s)
        or has(GA_AS_MEANS, s)
        or (has(MICRO + r"|序列|seq|max_length|cutoff_len", s) and not has(GA, s))
    ):
        return False
    proportional = has(MEMX, s) and has(
        rf"随着\S{{0,12}}{GA}\S{{0,6}}(?:增加|增大)|与\S{{0,4}}{GA}\S{{0,6}}成正比|"
        rf"proportional to (?:the )?(?:number of )?{GA}|"
        rf"scales? (?:linearly )?with (?:the )?(?:number of )?{GA}",
        s,
    )
    return (has(GA_UP, s) or has(GA_UP, unit)) and has(MEM_UP, s) or proportional


def _effective_batch_oom(s: str, unit: str, ans: str) -> bool:
    if (has(MICRO, s) and not has(GA, s)) or has(EXCEPTION, s) or has(SAVE_MEM, s) or has(GA_AS_MEANS, s):
        return False
    if has(SAME_EFFECTIVE, s):
        return False
    if has(EFF_LARGE, s) and has(OOM_WORDS, s) and not has(NEG, s):
        return True
    return any(has(EFF_LARGE, c) and has(OOM_WORDS, c) and not has(NEG, c) for c in _clauses(s))


def _effective_batch_oom_unit(s: str, unit: str, ans: str) -> bool:
    return (
        has(EFF_LARGE, unit)
        and has(OOM_WORDS, unit)
        and not has(NEG, unit)
        and not has(SAVE_MEM, unit)
        and not has(GA_AS_MEANS, unit)
        and not (has(MICRO, unit) and not has(GA, unit))
        and not has(EXCEPTION, unit)
        and not has(SAME_EFFECTIVE, unit)
    )


def _lower_ga_saves_memory(s: str, unit: str, ans: str) -> bool:
    # "saves at most one gradient-sized buffer, only at GA=1" (set_to_none) is the nuanced truth, not the myth.
    return (
        has(GA_DOWN, s)
        and has(MEMX + r"|省|节省|save|\boom\b", s)
        and not has(NEG, s)
        and not has(GA_UP, s)
        and not has(EXCEPTION + r"|at most|最多|only when|只在|只有在", s)
        and not has(SAME_EFFECTIVE, s)
    )


def _mixed_precision_halves(s: str, unit: str, ans: str) -> bool:
    if not has(PREC, s) or has(PREC_NUANCE, s):
        return False
    return any(has(MEMX, c) and has(HALF2, c) and not has(NEG, c) for c in _clauses(s))


def _small_batch_smaller_updates(s: str, unit: str, ans: str) -> bool:
    small = has(SMALL_BATCH, s) or has(BOTH_SMALL, s) or has(SMALL_BATCH + "|" + BOTH_SMALL, unit)
    return small and has(UPDATE_SIZE, s) and not has(NEG, s)


def _bigger_batch_generalizes(s: str, unit: str, ans: str) -> bool:
    if has(NEG, s) or has(WORSE, s):
        return False
    return (has(BIG_BATCH, s) and has(GENERALIZE, s) and has(IMPROVE, s)) or (
        has(GLOBAL_INFO, s) and has(r"批|batch", s)
    )


def _more_gpus_pool(s: str, unit: str, ans: str) -> bool:
    return (
        has(MULTI_GPU, s)
        and has(MEMX, s)
        and has(POOL, s)
        and not has(NEG, s)
        # sharding and model parallelism (device_map, pipeline, tensor) do split the model over the GPUs
        and not has(
            r"zero-?3|fsdp|分片|shard|device_map|模型并行|model[- ]parallel|pipeline|流水线|tensor[- ]parallel|张量并行",
            s,
        )
    )


def _formula_without_gpus(s: str, unit: str, ans: str) -> bool:
    """'effective batch = micro × GA' with no data-parallel factor, in an answer that never says single GPU.

    The effective batch, GA and the product must sit in one clause (split at semicolons): "activations scale with
    batch x sequence length; raise GA to keep the effective batch" states no formula."""
    cleaned = re.sub(r"每张卡|每卡|每个 ?GPU|per[ -]GPU|per[_-]device|_per_gpu", " ", s, flags=re.I)
    # ("micro batch x sequence length": the activations' product, not the effective batch's)
    unlengthed = re.sub(
        rf"{PRODUCT}\s*(?:the\s+)?(?:\(?\s*(?:sequence|seq|max|prompt|序列|长度|tokens?)\w*)", " ", s, flags=re.I
    )
    in_one_clause = any(
        has(EFFX, c) and has(MICRO + r"|batch[_ ]size|批大小|批次大小", c) and has(GA, c) and has(PRODUCT, c)
        for c in re.split(r"[;；]", unlengthed)
    )
    # "train_batch_size = 16 x 2 x 8 = 256": a product of three numbers has the third factor, though it names no GPU
    three_factors = re.search(r"\d\s*[x×*]\s*\d+\s*[x×*]\s*\d", s)
    return (
        in_one_clause
        and not three_factors
        and not has(GPU_TERM, cleaned)
        and not has(SINGLE_GPU, ans)
        and not has(NEG, s)
    )


def _ga_memory_unchanged(s: str, unit: str, ans: str) -> bool:
    return (
        has(GA + "|" + EFFX, s)
        and has(MEMX + "|峰值|peak", s)
        and has(MEM_NO_CHANGE, s)
        and not has(GA_DOWN, s)
        or (
            has(GA_DOWN, s)
            and has(MEMX, s)
            and has(r"不会|几乎不|基本不|does(?: not|n[’']t)|won[’']t|hardly|barely", s)
        )
    )


def _formula_with_gpus(s: str, unit: str, ans: str) -> bool:
    cleaned = re.sub(r"每张卡|每卡|每个 ?GPU|per[ -]GPU|per[_-]device|_per_gpu", " ", s, flags=re.I)
    return (
        has(EFFX, s)
        and has(MICRO + r"|batch[_ ]size|批大小", s)
        and has(GA, s)
        and has(PRODUCT, s)
        and has(GPU_TERM, cleaned)
    )


#: In priority order: the first rule that matches a claim decides it.
RULES: tuple[BeliefRule, ...] = (
    BeliefRule("ga_indirect_via_effective_batch", "myth-ga-stores-gradient-per-microbatch", "wrong", _ga_indirect),
    BeliefRule("ga_stores_copies", "myth-ga-stores-gradient-per-microbatch", "wrong", _ga_stores_copies),
    BeliefRule("lower_ga_saves_memory", "myth-lower-ga-saves-memory", "wrong", _lower_ga_saves_memory),
    BeliefRule("effective_batch_oom", "myth-effective-batch-causes-oom", "wrong", _effective_batch_oom),
    BeliefRule("ga_raises_memory", "myth-ga-stores-gradient-per-microbatch", "wrong", _ga_raises_memory),
    BeliefRule("mixed_precision_halves", "myth-mixed-precision-halves-memory", "wrong", _mixed_precision_halves),
    BeliefRule(
        "small_batch_smaller_updates", "myth-small-batch-smaller-updates", "wrong", _small_batch_smaller_updates
    ),
    BeliefRule("bigger_batch_generalizes", "myth-bigger-batch-generalizes-better", "wrong", _bigger_batch_generalizes),
    BeliefRule("more_gpus_pool_memory", "myth-more-gpus-pools-memory", "wrong", _more_gpus_pool),
    BeliefRule("effective_batch_formula_without_gpus", "effective-batch-formula", "imprecise", _formula_without_gpus),
    BeliefRule(
        "effective_batch_oom",
        "myth-effective-batch-causes-oom",
        "wrong",
        _effective_batch_oom_unit,
        sentence_level=False,
    ),
    BeliefRule("ga_memory_unchanged", "myth-ga-stores-gradient-per-microbatch", "right", _ga_memory_unchanged),
    BeliefRule("effective_batch_formula_with_gpus", "effective-batch-formula", "right", _formula_with_gpus),
)
