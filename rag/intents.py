"""What a question asks and which wrong belief it carries.

Rules, not a model: each misconception is a combination of terms that both
Chinese and English forum questions use, mapped to the knowledge card that
corrects it. A rule that fires must be answered head-on (verdict first).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .acts import WHY_ASK, asks_whether
from .slots import ZERO_MENTION, training_stage

GA = r"(?:gradient_accumulation_steps|梯度累[积加计]|累[积加计]步数|累[积加计]|\bga\b|grad(?:ient)?[-_ ]?acc\w*|accumulat\w*)"
MEM = r"(?:显存|内存|memory|vram|\boom(?:s|ed|ing)?\b|out of memory|爆|撑|装不下|放不下|(?<![a-z])fit)"
UP = r"(?:增大|增加|变大|调大|加大|更多|越大|提高|翻倍|变多|上升|increas\w*|rais\w*|bigger|larger|more|higher|doubl\w*|grow\w*|需要更多|占用更多)"
DOWN = r"(?:减少|降低|调小|减小|变小|改小|少一点|lower\w*|reduc\w*|decreas\w*|smaller|less|fewer)"
# "cut" as a verb ("cuts memory by half"), never "cutoff_len" / "cutoff length" (LLaMA-Factory's sequence length).
CUT = r"\bcut(?:s|ting)?\b(?![-_ ]?off)"
# "adds memory", "added", never "to address CUDA out of memory issues" (LFM #9)
ADD = r"\badd(?!ress)\w*"
SAVE = r"(?:省|节省|节约|降低显存|减少显存|save\w*|" + CUT + r"|reduc\w*)"
EFF = r"(?:有效批次|有效\s*batch|有效批大小|有效的?批|effective[-_ ]batch\w*|总\s*batch|global[-_ ]batch\w*|\btrain_batch_size)"
# (ASCII boundaries: "开了fp16显存没有减少" glues the name to Chinese, where a Unicode \b finds none; a file name's
# "zero3_bf16.json" is no precision switch, axolotl #1129)
PREC = r"(?:混合精度|半精度|mixed[-_ ]precision|(?<![A-Za-z0-9_])(?:bf|fp)-?16(?![A-Za-z0-9_])|\bamp\b)"
HALF = r"(?:减半|一半|halv\w*|\bhalf\b|显著|大幅|significantly|dramatically|省一半|节省|save\w*|" + CUT + r"|reduc\w*)"
# … not a size that grew or only differs ("int8 and fp16 occupy significantly different amounts of GPU memory",
# llama-cookbook #374: an observation of two runs, no belief that 16 bits halve anything)
HALF_NOT = (
    r"(?:显著|大幅|significantly|dramatically)\s*(?:different|more|higher|larger|bigger|increas\w*|不同|增加|更多|变大)"
)
# Memory that did not move when the precision changed ("the cuda memory and training time will not change", "spend the
# same time and gpu memory", "显存没有变化"): the user expected mixed precision to shrink it.
NO_CHANGE = (
    r"(?:\bnot? (?:change|reduc\w*|decreas\w*|drop\w*|differ\w*)|\bno (?:change|difference)|unchanged|"
    r"\b(?:doesn'?t|does not|didn'?t|did not) (?:change|reduce|decrease)|\bthe same\b|没有?(?:变化|变|减少|降低?)|不变|一样|没区别)"
)
# ("When I use `bf-16` … I do not see the memory gains I expect", Lightning #12591)
_GAIN_NOT_SEEN = (
    r"\b(?:do|does|did)(?:n'?t| not) see (?:the |any |such |much )?(?:gpu |cuda )?(?:memory|vram) "
    r"(?:gains?|savings?|reductions?|improvements?)|\bno (?:gpu |cuda )?(?:memory|vram) (?:gains?|savings?)"
)
_MEM_SAME = (
    MEM + r"[^。.?？!！\n]{0,40}" + NO_CHANGE + "|" + NO_CHANGE + r"[^。.?？!！\n]{0,40}" + MEM + "|" + _GAIN_NOT_SEEN
)
# The precision switch named next to it ("--fp16, but spend the same … memory", "set it to 16 or 32, the cuda memory
# … will not change"), not anywhere in the message: "FSDP uses the same memory as DDP" with AMP on is about sharding.
_PREC_NEAR = PREC + r"|\bprecision\b|--fp16|--bf16|16-mixed|半精度"


def precision_left_memory_unchanged(text: str) -> bool:
    """Memory the message says did not go down with the precision switch named beside it: the belief that mixed
    precision halves memory, reported (rag.compose opens with why it could not, automatic-mixed-precision-tutorials #1)."""
    for m in re.finditer(_MEM_SAME, text, re.I):
        if re.search(_PREC_NEAR, text[max(0, m.start() - 120) : m.end() + 60], re.I):
            return True
    return False


# "小 batch", "batch 太小" — not "减小/调小 batch" (reducing the batch to save memory is a remedy, not a small-batch run).
SMALL_BATCH = r"(?:(?<![减调改缩变])小的?\s*(?:batch|批|微批)|(?:batch|批次?|微批次?).{0,6}(?<![大减调改缩变])小|small\w*\s+(?:micro[-_ ]?)?batch\w*|(?:micro[-_ ]?)?batch\w*\s+(?:is|are|too)?\s*small)"
UPDATE_SIZE = r"(?:更新幅度|调整幅度|步子|幅度\S{0,3}小|smaller\s+(?:weight\s+)?updates?|updates?\s+(?:are|is|become)?\s*smaller|step size)"
BIG_BATCH = r"(?:大的?\s*(?:batch|批)|(?:batch|批次?).{0,6}大|larg\w*\s+batch\w*|big\w*\s+batch\w*|batch\w*\s+(?:is|are)?\s*(?:larger|bigger))"
GENERALIZE = r"(?:泛化|全局信息|效果更好|性能更好|generaliz\w*|global information|better (?:performance|model|results))"
MULTI_GPU = (
    r"(?:多卡|多张|两张|加卡|(?:两|[二三四五六八]|(?<!\d)\d+)\s*块.{0,12}?(?:显卡|卡|gpu)|(?<!\d)\d+\s*张|(?<!\d)\d+\s*卡|[两二三四五六八]张|more gpus|multiple (?:gpus|cards)|(?<!\d)\d+\s*gpus|"
    r"(?:two|three|four|eight) (?:\w+ )?(?:gpus|cards)|多\s*gpu|\d\s*[*x×]\s*(?:v100|a100|a800|h100|3090|4090|gpu)|"
    r"(?<!\d)\d+\s*(?:a100|a800|v100|h100|3090|4090|p4|titan)s?\b|\b(?:number|count) of (?:[\w-]+ ){0,3}(?:gpus|cards)\b)"
)
POOL = (
    r"(?:叠加|加起来|合并|合在一起|共享显存|显存.{0,4}(?:相加|翻倍)|合计|共\s*\d+\s*g|总显存(?!\s*[:：])|总共.{0,8}显存|平均分|"
    r"分到.{0,8}(?:卡|显卡)上|相当于\s*\d+\s*g|因为分割|add up|sum of|share memory|"
    # pooling said of memory ("pool the GPUs' memory", "combined VRAM"), not a config key ("combine: True") or a
    # resource pool in a traceback
    r"\b(?:pool|combin)(?:e|ed|es|ing|s)?\s+(?:the\s+|their\s+|all\s+|our\s+)?(?:\w+\s+)?(?:gpus?'?\s+)?(?:v?ram|memory)|"
    r"\b(?:v?ram|memory)\s+(?:is\s+|are\s+|gets?\s+|be\s+)?(?:pooled|combined)|\bpooled\b|"
    # a single card runs what several smaller ones cannot ("5张3090卡微调内存不足，但单机单卡a6000可以微调")
    r"(?:但|而|却)[^。，,.\n]{0,6}单卡[^。，,.\n]{0,12}(?:可以|能)\s*(?:跑|训练|微调|放下|装下|运行)|\bbut (?:on )?(?:a )?single (?:\w+ )?(?:gpu|card)\b[^.\n]{0,30}\b(?:works?|fits?|runs? fine)\b|"
    # ("in total 8 cuda contexts are present on the first GPU", stylegan2-ada-pytorch #70: a count of something else)
    r"total (?:amount of )?(?:gpu )?memory|a total of|in total(?!\s+\d+\s*(?!g(?:b|ib)?\b)[a-z])|require a \d+\s*gb? card|split (?:across|between|over) (?:the )?(?:gpus|cards)|"
    # more GPUs asked as the way out of an OOM: "if I increase the number of 24 GB GPUs the code will run?" (InstantMesh
    # #69), "多加几张卡就能跑吗"
    r"\bincreas\w* the (?:number|count) of (?:[\w-]+ ){0,3}(?:gpus|cards)\b[^.?\n]{0,40}\b(?:will|would|can|could)\b"
    r"[^.?\n]{0,20}\b(?:run|fit|work)|\b(?:add|adding) more (?:gpus|cards)\b[^.?\n]{0,30}\b(?:fit|avoid|solve|fix)\b|"
    r"(?:增加|多加|多用)(?:几张|更多的?|一些)?(?:显卡|卡|gpu)(?:的)?(?:数量|数)?[^。？?\n]{0,12}(?:就)?(?:能|可以)(?:跑|运行|训练|解决|放下|装下)|"
    # more cards expected to lower each card's memory: "即便我设置了4块卡进行训练，依然会报显存不足 … 我并没有节省显存资源"
    # (CWSAM #11), "deepspeed训练仍然会爆显存，感觉成了每张显卡分别训练" (ChatGLM-Efficient-Tuning #212)
    r"(?:即便|即使|就算|虽然)[^。\n]{0,12}(?:\d+|几|多|两|四|八)\s*[块张台]?(?:卡|显卡|gpu)[^。\n]{0,20}"
    r"(?:依然|还是|仍然|照样)[^。\n]{0,10}(?:显存不足|爆显存|oom)|(?:并)?没(?:有)?(?:节省|减少|降低)(?:显存|内存)|"
    r"每张(?:显)?卡(?:分别|各自)(?:训练|跑))"
)
# (not "keep track of the accumulated gradients" (optax #528): one accumulator is the truth, not the belief; not
# "使用的显存96gb" (ms-swift #4177): a card's memory is no stored copy)
STORE_COPY = r"(?:保存|存储|存下|(?<![显内])存\s*\d|份|副本|copies|copy|store\w*|keeps?(?!\s+track))"
GRAD = r"(?:梯度|gradient)"


# The change is said of memory itself ("increase memory", "显存越大", "cause OOM"), not of the batch that GA simulates
# ("simulate a larger batch with limited GPU memory").
_MEM_CHANGE = (
    r"(?:"
    + UP
    + r"|影响|导致|affect\w*|impact\w*|chang\w*|cost\w*|caus\w*|"
    + ADD
    + r")[^。.?？!！]{0,15}"
    + MEM
    + "|"
    + MEM
    + r"[^。.?？!！]{0,15}(?:"
    + UP
    + r"|affect\w*|impact\w*|chang\w*)"
)
_GA_EFFECT = (
    r"(?:" + UP + r"|影响|占用|消耗|affect\w*|impact\w*|chang\w*|需要|cost\w*|use\w* (?:more|extra)|" + ADD + ")"
)


def _pooling_near_gpus(text: str) -> bool:
    """Pooling words with several GPUs and memory within about a sentence of them ("4张3090合计96G"), not anywhere in
    the message ("reserved in total by PyTorch" in an OOM error, "8 GPUs" in the setup far above)."""
    for m in re.finditer(POOL, text, re.I):
        near = text[max(0, m.start() - 150) : m.end() + 150]
        if _has(MULTI_GPU, near) and _has(MEM + r"|(?<!\d)\d+\s*g(?:b|ib)?\b", near):
            return True
    return False


def _has(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.I) is not None


@dataclass(frozen=True)
class MisconceptionRule:
    """A wrong belief, the card that corrects it, and the verdict to lead with."""

    key: str
    card_id: str
    verdict_zh: str
    verdict_en: str

    def matches(self, text: str) -> bool:
        return _MATCHERS[self.key](text)


# GA set to a value to get out of an OOM that stayed: "gradient_accumulation_steps 已经调到2，还是OOM", "a smaller
# gradient_accumulate_step=5 仍然会有OOM", "per_device_gradient_accumulation_steps=2 … but it still gives … OOM": the run
# presupposes that GA moves the peak.
_STILL_OOM = (
    r"[^。!?？！\n]{0,60}?(?:还是|仍然|依然|仍|\bstill\b)[^。!?？！\n]{0,40}?"
    r"(?:oom|out of memory|爆显存|显存不足|显存不够|memory)"
)
_GA_SET_STILL_OOM = (
    # GA, then the change made to it: "gradient_accumulation_steps 已经调到2，还是OOM", "set GA to 1 … still OOMs"
    GA
    + r"[^。.!?？！\n]{0,25}?(?:调到|改到|改成|改为|设为|设成|设置为|设到|降到|\bset (?:it )?to|\bchanged? (?:it )?to|\bto\b)\s*\d+"
    + _STILL_OOM
    # the change, then GA and its value: "一个更小的gradient_accumulate_step=5，仍然会有OOM", "reduced to even the smallest
    # possible value for `gradient_accumulation_steps=2` … still". Not "batch size 1 with accumulation_steps=4 still
    # crashed": there the GA value is only part of the run that still failed.
    + r"|(?:更小|更少|最小|减小|减少|降低|调小|smaller|smallest|fewer|reduc\w*|lower\w*|decreas\w*)[^。!?？！\n]{0,60}?"
    + GA
    + r"\w*`?\s*[=:]?\s*\d+"
    + _STILL_OOM
)

_MATCHERS = {
    # GA + memory + "more/increase/affect" near GA: "GA 增大会增大显存吗", "does GA affect memory" — not every
    # question that names GA and memory ("bs=2 ga 4，显存够吗？" asks whether it fits).
    "ga_raises_memory": lambda t: (
        _has(GA, t)
        and _has(MEM, t)
        and _has(GA + r".{0,20}" + _GA_EFFECT + "|" + _GA_EFFECT + r".{0,20}" + GA, t)
        and _has(_MEM_CHANGE, t)
        and not _has(DOWN + r".{0,12}" + GA + "|" + GA + r".{0,12}" + DOWN, t)
    ),
    # a copy stored by the accumulation, in one sentence ("each device gets a copy of the model … gradients are
    # accumulated together" (Lightning #6984) describes data parallelism, not the belief)
    "ga_stores_copies": lambda t: (
        _has(GRAD, t)
        and _has(GA + r"[^.。?？!！\n]{0,60}?" + STORE_COPY + "|" + STORE_COPY + r"[^.。?？!！\n]{0,60}?" + GA, t)
    ),
    # the belief's words in one sentence ("global batch" in a config and "OOM" in a log say nothing of each other)
    "effective_batch_oom": lambda t: any(_has(EFF, s) and _has(MEM, s) for s in _sentences(t)),
    "lower_ga_saves_memory": lambda t: (
        (
            # a saving of memory, not any "reduce" ("gradient accumulation can reduce the number of backward ops")
            _has(GA, t)
            and _has(MEM + r"|省|节省|节约|save\w*", t)
            and _has(DOWN + r".{0,12}" + GA + "|" + GA + r".{0,12}" + DOWN, t)
        )
        or _has(_GA_SET_STILL_OOM, t)
    ),
    "mixed_precision_halves": lambda t: (
        any(_has(PREC, s) and _has(MEM, s) and _has(HALF, re.sub(HALF_NOT, "", s, flags=re.I)) for s in _sentences(t))
        or (_has(PREC, t) and precision_left_memory_unchanged(t))
    ),
    "small_batch_smaller_updates": lambda t: _has(SMALL_BATCH, t) and _has(UPDATE_SIZE, t),
    "bigger_batch_generalizes": lambda t: _has(BIG_BATCH, t) and _has(GENERALIZE, t),
    # "单卡要 16G，两张卡平均分到每张卡上": a capacity in GB stands for memory here.
    "more_gpus_pool_memory": _pooling_near_gpus,
}

RULES: tuple[MisconceptionRule, ...] = (
    MisconceptionRule(
        "ga_raises_memory",
        "myth-ga-stores-gradient-per-microbatch",
        "基本不会。峰值显存不随 gradient_accumulation_steps 增长：从 GA=1 到 GA≥2 最多多出一份梯度大小的缓冲"
        "（zero_grad(set_to_none=True) 时），GA=2 和 GA=64 一样。",
        "Essentially no. Peak memory does not grow with gradient_accumulation_steps: going from GA=1 to "
        "GA≥2 adds at most one gradient-sized buffer (with zero_grad(set_to_none=True)), the same at GA=2 "
        "and GA=64.",
    ),
    MisconceptionRule(
        "ga_stores_copies",
        "myth-ga-stores-gradient-per-microbatch",
        "不会。梯度累积只有一份梯度缓冲区，不会为每个微批次各存一份。",
        "No. Accumulation keeps one gradient buffer, not one copy per micro-batch.",
    ),
    MisconceptionRule(
        "effective_batch_oom",
        "myth-effective-batch-causes-oom",
        "不是。显存爆掉不是因为有效批次大小，而是模型状态 + 单个微批次的激活（micro batch × 序列长度）。",
        "No. OOM is not caused by the effective batch size but by the model states plus one micro-batch's activations (micro batch × sequence length).",
    ),
    MisconceptionRule(
        "lower_ga_saves_memory",
        "myth-lower-ga-saves-memory",
        "不会。调小 gradient_accumulation_steps 几乎不省显存，只会让有效批次变小。",
        "No. Lowering gradient_accumulation_steps saves essentially no memory; it only shrinks the effective batch.",
    ),
    MisconceptionRule(
        "mixed_precision_halves",
        "myth-mixed-precision-halves-memory",
        "不会减半。用 Adam 时混合精度几乎不省模型状态显存（fp32 主权重和优化器状态仍在），省的主要是激活。",
        "Not by half. With Adam, mixed precision barely shrinks model-state memory (the fp32 master weights and optimizer states remain); the saving is mostly in activations.",
    ),
    MisconceptionRule(
        "small_batch_smaller_updates",
        "myth-small-batch-smaller-updates",
        "不对。小批次不会让每次权重更新幅度变小，只会让梯度更噪、更新次数更多。",
        "No. Small batches do not make smaller weight updates; they make noisier gradients and more updates.",
    ),
    MisconceptionRule(
        "bigger_batch_generalizes",
        "myth-bigger-batch-generalizes-better",
        "不一定。更大的批次不会自动带来更好的泛化。",
        "Not automatically. Larger batches do not by themselves generalise better.",
    ),
    MisconceptionRule(
        "more_gpus_pool_memory",
        "myth-more-gpus-pools-memory",
        "不会。多卡不会把显存合并成一个大池子（DDP 和 ZeRO-1/2 每张卡都有完整权重）。",
        "No. More GPUs do not pool their memory (under DDP and ZeRO-1/2 every GPU holds the full weights).",
    ),
)


def detect_misconceptions(text: str) -> list[MisconceptionRule]:
    """Rules whose wrong belief the question carries, without duplicate cards."""
    out: list[MisconceptionRule] = []
    for rule in RULES:
        if rule.matches(text) and all(r.card_id != rule.card_id for r in out):
            out.append(rule)
    # "ga_raises_memory" and "lower_ga_saves_memory" are the same belief seen from two sides: keep one.
    if any(r.key == "lower_ga_saves_memory" for r in out):
        out = [r for r in out if r.key not in ("ga_raises_memory", "ga_stores_copies")]
    return out


# What the user wants computed.
_MEMORY_Q = (
    MEM
    + r"|够不够|够吗|能跑|能不能跑|跑得动|跑不动|(?<![a-z])fits?\b|enough|how much (?:gpu )?memory|需要多少|占多少|多大显存"
)
_BATCH_Q = (
    EFF
    + r"|train_batch_size|per_device_train_batch_size|train_micro_batch_size_per_gpu|"
    + GA
    + r"|学习率|learning[-_ ]rate|\blr\b|steps? per epoch|每个?\s*epoch|多少步|噪声|noise|收敛|converg\w*|"
    r"利用率|utili[sz]ation|batchnorm|批归一化"
)
_ZERO_Q = r"zero|offload|卸载|fsdp|deepspeed|sharding|分片"
_PREC_Q = PREC + r"|fp32|精度|precision"


_COMPARE = r"(?:哪个|哪一个|对比|比较|区别|差多少|差别|省多少|能省|省了|多少|which|compare|comparison|difference|differ|\bvs\.?\b|versus|how much|save|saves|help)"
_CKPT_Q = r"(?:gradient[-_ ]?checkpointing|activation[-_ ]?checkpointing|checkpointing|梯度检查点|重计算|recompute)"


@dataclass(frozen=True)
class Intents:
    memory: bool
    batch: bool
    zero: bool
    precision: bool
    small_batch: bool
    effective: bool = False  # asks about the effective / global batch itself
    compare_zero: bool = False  # "zero2 和 zero3 差多少", "which ZeRO stage"
    compare_checkpointing: bool = False  # "开了 gradient checkpointing 能省多少"
    compare_finetune: bool = False  # "LoRA vs full", "lora 和 qlora 区别"

    @property
    def any(self) -> bool:
        return self.memory or self.batch or self.zero or self.precision or self.small_batch or self.effective


# Asking what a tiny batch does to training. Not a bare "问题": "[问题/Issue]" is an issue-template tag and "有几个问题"
# announces questions.
_EFFECT_WORDS = (
    r"效果|会怎样|会怎么样|怎么样|影响|差(?!别|异|距|不多)|坏|有问题|会有.{0,4}问题|有什么问题|出问题|\bbad\b|\beffects?\b|\bhappens?\b|\bhurts?\b|"
    r"\bquality\b|\bworse\b|\bok\b"
)


def tiny_batch_question(text: str, micro: int | None, ga: int | None) -> bool:
    """'micro batch 只有 1，累积也只有 1，效果会不会很差': both knobs stated (as slots) and tiny, asking about the effect.

    Needs the slots (the numbers may come from an earlier turn), so the assistant applies it after merging them.
    """
    return (
        micro is not None
        and micro <= 2
        and (ga or 1) <= 2
        and any(_asks_effect(s) and _has(_BATCH_WORD, s) for s in _sentences(text))
    )


# The sentence that asks about an effect names the batch or accumulation, or the tiny value itself ("如果设置成1来训练就是
# 单张图片来训练，请问会对训练有影响吗？"): "NPU健康状态是否影响训练" (LLaMA-Factory #6428, micro 1 and GA 1 in its command)
# asks about the NPUs, "is it ok for lora" about the method.
_BATCH_WORD = (
    r"batch|批|\bbs\b|\bbsz\b|micro|设(?:置)?(?:成|为)\s*[12](?!\d)|\bset (?:it )?to [12]\b|单张|单个样本|"
    r"\bsingle (?:image|sample|example)\b|" + GA
)


# What a sentence that reports memory or counts steps speaks of: "内存溢出问题" ("an overflow problem", yolo3-pytorch #19,
# MhLiao/DB #151), "占用50G … 跟理论计算差的太多" (a gap in GB), "哪些参数影响step" (what sets the step count) use
# effect words about memory or steps, not about what a tiny batch does to training.
_NOT_AN_EFFECT = MEM + r"|占用|溢出|\d+(?:\.\d+)?\s*(?:G|GB|GiB|MiB)(?![A-Za-z])|(?<![A-Za-z])steps?(?![A-Za-z])|步数"


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[。！？!?\n])|(?<=\.)\s", text) if s.strip()]


def _asks_effect(sentence: str) -> bool:
    """The sentence asks what something does to training (an effect word), not about memory or step counts."""
    return _has(_EFFECT_WORDS, sentence) and not _has(_NOT_AN_EFFECT, sentence)


def stages_named(text: str) -> set[str]:
    """The ZeRO stages a message names ("zero2 和 zero3" → {"2", "3"}): two or more are stages compared or listed. A
    training recipe's stage ("stage 1 pretraining, stage 2 finetune", LLaVA) is none (rag.slots.training_stage)."""
    return {
        next(g for g in m.groups() if g is not None) for m in ZERO_MENTION.finditer(text) if not training_stage(text, m)
    }


def detect_intents(text: str) -> Intents:
    # "small" and "batch" in one sentence: "fine-tuning on a small custom dataset … Micro batch size: 2 … Gradient
    # accumulation: 4" (a long issue template) does not call its batch small.
    both_small = _has(GA, text) and any(
        _has(r"(?<!大)小|\bsmall\b|\btiny\b|\blow\b", s) and _has(r"batch|批", s) for s in _sentences(text)
    )
    small = _has(SMALL_BATCH, text) or both_small
    stages = stages_named(text)
    methods = {
        m.lower() for m in re.findall(r"qlora|lora|全量|全参|full[-_ ]?(?:fine[-_ ]?tun\w*|ft|parameter)", text, re.I)
    }
    return Intents(
        memory=_has(_MEMORY_Q, text),
        batch=_has(_BATCH_Q, text),
        zero=_has(_ZERO_Q, text),
        precision=_has(_PREC_Q, text),
        small_batch=small,
        effective=_has(EFF, text),
        compare_zero=len(stages) >= 2 or (_has(_ZERO_Q, text) and _has(r"哪个|哪一个|which|对比|比较|compare", text)),
        compare_checkpointing=_has(_CKPT_Q, text) and _has(_COMPARE, text),
        compare_finetune=len(methods) >= 2,
    )


# A message *holds* a belief when it asserts or presupposes it, not when it asks about it:
# "I thought GA stores a copy per step, so …", "既然梯度累积会占更多显存，…", "ChatGPT told me …".
_BELIEF_CUES = re.compile(
    r"以为|听说|据说|不是说|明明|既然|因为.{0,20}所以|所以|网上说|别人说|有人说|看到说|文章说|教程说|chatgpt|gpt\s*说|"
    r"我猜|猜测|我怀疑|\bI (?:guess|suspect)\b|"
    r"\bI (?:thought|heard|read|believe|assumed?|was told|understand)\b|\bsupposedly\b|\bsince\b|\bbecause\b|"
    r"\bso (?:I|we)\b|\btherefore\b|\baccording to\b|\bchat ?gpt\b|\bthey say\b|\bpeople say\b|\bshouldn'?t\b",
    re.I,
)
_QUESTION = re.compile(
    r"[?？]|吗|么|呢|是否|会不会|是不是|能不能|有没有|^\s*(?:does|do|is|are|will|would|can|could|should|did|how|what|why)\b",
    re.I,
)


# A sentence that denies the belief ("GA is decoupled from memory", "不会增加显存") does not hold it.
_DENIAL = re.compile(
    r"不会|不应该|不该|并不|没有|无关|不影响|不增加|\bnot\b|n't\b|\bno\b|\bnever\b|decoupled|independent|"
    r"unrelated|regardless|doesn'?t|shouldn'?t|without",
    re.I,
)
# Quoted documentation is not the user's belief ("文档原文如下：", "the README says").
_QUOTED = re.compile(r"原文|文档|README|docs? (?:say|says|state)|the paper|论文|quote", re.I)


# A saving the user's own run showed: "I configured the FP16 parameter, which reduced the memory" (DeepSpeed #1061).
_SAVING_SEEN = re.compile(
    r"\b(?:which|that|it) (?:reduced|decreased|lowered|cut|saved|halved)\b|降低了|减少了|省了|减半了", re.I
)
# A sentence that reports what the user measured or saw ("here's the memory as I increase GA", "显存占用一直在30G左右")
# is an observation for the diagnosis to explain, not a belief to correct — unless it says the belief outright.
_OBSERVATION = re.compile(
    r"(?<![\d.])\d+(?:\.\d+)?\s*(?:g|gb|gib|m|mb|mib)\b|\bI (?:tested|measured|observed|see|saw|found|noticed|got)\b|"
    r"\bhere(?:'s| is| are)\b|\bstill\b|发现|观察|测试|实测|监控|一直在|显示|"
    r"\bmemory usage (?:is|was|becomes|became|dropped|drops)\b|显存占用(?:是|为|只有|降到|变成)|"
    # what followed in the user's run ("…成正比，导致显存占用过大无法训练"; not "会导致", a claim) or what they already
    # did ("train_batch_size 我已经改到最小了", "I already reduced the batch"): a report of the run, not a claim
    r"(?<![会能])导致[^，,。.;；?？]{0,12}(?:无法|不能|跑不|训练不|oom|爆|溢出|不足|不够|过大)|无法训练|训练不了|跑不起来|我已经|已经(?:改|调|设|试|把)|"
    r"试过|\bI(?:'ve| have)? (?:already|tried)\b|"
    # a saving the user's run showed ("I configured the FP16 parameter, which reduced the memory", DeepSpeed #1061)
    + _SAVING_SEEN.pattern
    + r"|\b(?:so|and) (?:I|we) (?:can(?:no|')t|could(?:n'?t| not)) (?:train|run|fit)\b",
    re.I,
)
_STRONG_BELIEF = re.compile(
    # a hypothesis of the user's own is a belief too ("我猜测是因为保存了多个gradient导致的", "I suspect it stores …")
    r"以为|听说|据说|不是说|网上说|我猜|猜测|我怀疑|\bI (?:thought|heard|read|believe|assumed?|was told|guess|suspect)\b",
    re.I,
)


# An is-normal question that states what the user expected ("我以为会减半", "I thought it should halve"): that
# expectation is a belief the answer may correct; an observation alone ("显存翻倍，正常吗？") is not.
_STATED_EXPECTATION = re.compile(
    r"我以为|本以为|以为会|按理说|理论上|不是应该|应该是|应该会|I thought|I expected|I assumed|"
    r"should(?:n't| not)? (?:be|have|halve|drop|decrease|increase)|supposed to",
    re.I,
)


def states_expectation(text: str) -> bool:
    """Whether ``text`` says what the user expected to see, beside what they saw."""
    return _STATED_EXPECTATION.search(text) is not None


_GA_MEMORY_RULES = {"ga_raises_memory", "ga_stores_copies", "effective_batch_oom", "lower_ga_saves_memory"}
#: Beliefs a sentence may name only as what the user saw or already did: "the GPU memory usage is half of the normal
#: mode" with AMP (fairchem #397, measured), "To reduce activation memory I already use … +amp" (DeepSpeed #3652).
_REPORTABLE_RULES = _GA_MEMORY_RULES | {"mixed_precision_halves"}


def _claim_sentences(text: str) -> list[str]:
    """The sentences a belief is held, reported or denied in (split at 。！？ and at . ; before a space)."""
    return [s for s in re.split(r"(?<=[。！!？?\n])|(?<=[.;；])\s", text) if s.strip()]


def holds_belief(text: str, rule: MisconceptionRule) -> bool:
    """True when ``text`` asserts or presupposes the wrong belief of ``rule`` (not merely asks about it,
    denies it, or quotes a document that states it)."""
    if _QUOTED.search(text):
        return False
    sentences = _claim_sentences(text)
    title = text.lstrip().split("\n", 1)[0].strip() if "\n" in text.strip() else ""
    for sentence in sentences:
        if not rule.matches(sentence) or _DENIAL.search(sentence):
            continue
        if rule.key in _REPORTABLE_RULES and _OBSERVATION.search(sentence) and not _STRONG_BELIEF.search(sentence):
            continue
        if rule.key in _GA_MEMORY_RULES and sentence.strip() == title and not _STRONG_BELIEF.search(sentence):
            continue  # an issue title names what was seen ("VRAM usage increase with more gradient accumulation steps")
        if _BELIEF_CUES.search(sentence) or not _QUESTION.search(sentence):
            return True
    return False


def saving_reported(text: str, rule: MisconceptionRule) -> bool:
    """Whether ``text`` tells a saving its run showed from what ``rule`` is about ("I configured the FP16 parameter,
    which reduced the memory … after adding ZeRO-2 the memory was exceeded", DeepSpeed #1061), asserting no belief:
    the saving happened, so correcting it answers nothing the user asked (unlike a remedy that did not help, which
    :func:`belief_reported` also covers and an answer does explain)."""
    if rule.key not in _REPORTABLE_RULES or holds_belief(text, rule):
        return False
    sentences = _claim_sentences(text)
    return any(rule.matches(s) and _SAVING_SEEN.search(s) for s in sentences)


def belief_reported(text: str, rule: MisconceptionRule) -> bool:
    """Whether ``text`` names what ``rule`` is about only as a report of the user's run (what they saw, what followed,
    what they already tried), never asserting the belief: "显存开始不够了，train_batch_size 我已经改到最小了"."""
    if rule.key not in _REPORTABLE_RULES or holds_belief(text, rule):
        return False
    sentences = _claim_sentences(text)
    return any(rule.matches(s) and _OBSERVATION.search(s) for s in sentences)


# An out-of-memory the user ran into (not one they ask about): the OOM words, in a sentence that does not ask.
_OOM_SEEN = re.compile(
    # ("CUDA outof memory", LLaMA-Factory #469: the space lost)
    r"out\s?of\s?memory|outofmemoryerror|(?<![A-Za-z])oom(?:s|ed|ing)?(?![A-Za-z])|爆显存|显存爆|显存不足|显存溢出|显存不够",
    re.I,
)

# "内存不足" is host RAM as often as GPU memory; next to the GPU it is the GPU's ("每张RTX4090卡，24G显存，但依然提示内存不足",
# LLaMA-Factory #1970; "CUDA 内存不足"), unless the sentence speaks of the host (a kill, the CPU, system RAM).
_GPU_RAM_SHORT = re.compile(
    r"(?:显存|显卡|gpu|cuda|\d\s*卡|卡\s*\d|双卡|单卡|多卡).{0,40}内存不足|内存不足.{0,20}(?:显存|显卡|gpu)", re.I
)
_HOST_RAM = re.compile(r"被杀|kill|-9\b|cpu|主机内存|系统内存|物理内存|swap|dataloader|num_workers", re.I)


# The host's RAM as the subject of a problem or a question, not a spec in passing ("64GB RAM, 2x3090, CUDA OOM"). In
# Chinese threads "内存" is as often the GPU's memory ("需要多大内存的GPU", "2张卡跑不动报内存不够"), so it counts only
# beside an explicit host word, a host RAM size the message states ("内存1T … 报内存不足"), or "显存和内存" (both asked).
# In English a bare "RAM" is the GPU's as often ("8 A100s with 80GB of RAM each"): only host/system/CPU RAM, or RAM
# usage / running out of RAM.
_HOST_KILL = re.compile(r"\bKilled\b|exit\s*code:?\s*-9|return code\s*=\s*-9|SIGKILL|被\s*kill|被杀", re.I)
_HOST_RAM_NOUN = re.compile(
    r"(?:host|system|CPU|cpu) (?:RAM|memory)|(?<![Vv])\bRAM (?:usage|use|consumption|OOM|runs? out|ran out|is full|explod\w*)|"
    r"out of (?:host |system |CPU )?RAM\b|主机内存|系统内存|物理内存|运行内存|CPU\s*内存|cpu\s*内存|内存条",
    re.I,
)
_HOST_RAM_TROUBLE = re.compile(
    r"runs? out|ran out|out of|\bOOM|full|exceed\w*|\bgrow\w*|increas\w*|spik\w*|explod\w*|\busage\b|\bused\b|"
    r"how much|enough|不足|不够|爆|溢出|满|耗尽|占用|暴涨|上涨|增长|需要多少|多大|够不够|够吗",
    re.I,
)
_RAM_SHORT = re.compile(r"(?<!显卡)内存(?:不足|不够|爆|溢出|满了|耗尽|被占满|OOM)|爆内存", re.I)
_BOTH_ASKED = re.compile(r"显存(?:和|与|、|跟|以及)(?:主机)?内存|内存(?:和|与|、|跟|以及)显存")
_RAM_OVER_TIME = re.compile(
    r"dataloader|num_workers|\bworkers?\b|逐渐|慢慢|一直.{0,2}(?:增长|上涨|涨|增加)|越来越|keeps? (?:growing|increasing|rising)|"
    r"over time|memory leak|泄漏|泄露|每个?\s*(?:epoch|step)|every (?:epoch|step)|跑到.{0,12}(?:step|步)|"
    r"(?:while|during) (?:the )?training|训练(?:过程)?中",
    re.I,
)


# "尽可能使用CPU内存来防止CUDA OOM": the GPU ran out, host RAM is the remedy asked about.
_GPU_IS_THE_PROBLEM = re.compile(r"CUDA|显存|\bGPU memory|\bVRAM", re.I)


def about_host_ram_at_load(text: str, host_ram_stated: bool = False) -> bool:
    """Whether the message reports a problem with, or asks about, the host's RAM (not the GPU's memory): what the
    load-time host RAM figure (calculators.host_ram) answers. ``host_ram_stated``: the message states the host's RAM
    ("内存1T"), which makes a bare "内存不足" the host's. RAM that creeps up while training (data-loader workers, a leak)
    is another cause (cards mem-dataloader-workers-host-ram, mem-creeping-growth-over-steps)."""
    if _RAM_OVER_TIME.search(text):
        return False
    if _HOST_KILL.search(text) or _BOTH_ASKED.search(text):
        return True
    for s in re.split(r"(?<=[。！？!?\n])|(?<=\.)\s", text):
        if _HOST_RAM_NOUN.search(s) and _HOST_RAM_TROUBLE.search(s) and not _GPU_IS_THE_PROBLEM.search(s):
            return True
        if host_ram_stated and _RAM_SHORT.search(s) and not _GPU_RAM_SHORT.search(s):
            return True
    return False


def reports_oom(text: str) -> bool:
    """Whether the message reports an out-of-memory it hit: an OOM word in a sentence that is not a question
    ("lora 微调均OOM", "CUDA out of memory. Tried to allocate"), not "会不会 OOM?" / "will it OOM?"."""
    for sentence in re.split(r"(?<=[。！？!?\n])|(?<=\.)\s", text):
        if not _oom_seen(sentence):
            continue
        # "一直 OOM，为什么？", "why does it OOM?": asking why presupposes the OOM happened
        if not asks_whether(sentence) or WHY_ASK.search(sentence):
            return True
        # "用两张4090显卡微调chatglm3-6b模型out of memory，用的是lora + zero3的方式，请问哪里错了？": the question mark ends
        # the sentence, the OOM is reported in a clause of its own that asks nothing
        if any(
            _oom_seen(clause)
            and not asks_whether(clause)
            # (not a condition: "如果不加--quantization_bit 4 就爆显存" reports another run than the one read)
            and not re.search(r"如果|要是|假如|若是", clause)
            for clause in re.split(r"[，,;；]", sentence)[:-1]
        ):
            return True
    return False


def _oom_seen(text: str) -> bool:
    """An out-of-memory word, or GPU memory said to be short where the host's RAM is not named."""
    return bool(_OOM_SEEN.search(text) or (_GPU_RAM_SHORT.search(text) and not _HOST_RAM.search(text)))
