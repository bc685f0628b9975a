"""Pull the numbers and names a question states (model, GPU, batch, GA, GPUs, ZeRO, ...).

Each pattern covers how people actually write in forums, in both languages:
``7B``, ``70亿``, ``3090``, ``两张卡``, ``8卡``, ``bs=2``, ``ga 4``, ``zero2``,
``开了offload``. Only what the text states is returned; defaults are added
later by the composer, which says which values it assumed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, PrivateAttr

from calculators.presets import GPU_PRESETS, MODEL_PRESETS, PUBLISHED_PARAMS, preset_for_name
from calculators.shell import LIGHTNING_RANK

from .regex_literals import could_match

#: Chinese numerals people write counts with ("两张卡", "单卡", "十六卡"); rag.lr_change reads them too.
CN_DIGITS = {
    "零": 0,
    "一": 1,
    "单": 1,
    "两": 2,
    "二": 2,
    "双": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
    "十六": 16,
    "三十二": 32,
    "六十四": 64,
}
NUM = r"(\d+|十六|三十二|六十四|[一两二三四五六七八九十单双])"
# Verbs of changing a setting to a value: "seq_len调整到 32k", "batch size增加到16", "bs降到2".
_CHANGED_TO = r"调整到|调整为|调整成|增加到|增大到|提高到|降到|降低到|减小到|减少到"
# Separators between a key and its value: "bs=2", "bs 2", "micro batch 设为 2", "ga开到16".
SEP = (
    r"\s*(?:==|=|:|：|为|是|设为|设置为|设成|设置成|设置的|设置了|设的|设了|开到|开成|调到|调成|"
    + _CHANGED_TO
    + r"|改成|改为|也只有|只有|只开|才|仅|都是|of|to|is|set to|(?:is|was|are)\s+set\s+to|only|"
    # ("batchSize在512的时候显存占用达到了40G" (iLRG #1): "在" with a value and "when", not "在4张卡上")
    + r"在(?=\s*\d+\s*(?:的时候|时|下)))?\s*"
)
# ("ds_zero2_no_offload.json": a file name's "no_" turns off what follows it)
# ("有没尝试 gradient checkpoint", "是不是开了…": the yes-or-no question form negates nothing, TextClassifier #1)
_NEG = re.compile(r"((?<!有)没|未|(?<!是)不|关|no\b|(?<![A-Za-z0-9])no_|not\b|without|disable|off\b|false)", re.I)


def _num(token: str) -> int:
    if token.isdigit():
        return int(token)
    return CN_DIGITS[token] if token in CN_DIGITS else _EN_NUM[token.lower()]


class Slots(BaseModel):
    """What a question said about a training setup; None = not stated."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())
    #: The model was read only from a file name ("运行实例文件llama3_lora_sft.yaml"): a config's or command's
    #: model_name_or_path names the model better (rag.setup lets it replace this one).
    _model_from_file_name: bool = PrivateAttr(default=False)
    #: The precision was read from a bare "mixed precision" / "混合精度" that names no half type (bf16 stands in): a
    #: config's or command's fp16 / bf16 names it (rag.setup lets it replace this one, with no conflict shown).
    _precision_unnamed: bool = PrivateAttr(default=False)

    model: str | None = None
    num_params: float | None = None
    gpu: str | None = None
    gpu_memory_gb: float | None = None
    train_micro_batch_size_per_gpu: int | None = None
    gradient_accumulation_steps: int | None = None
    train_batch_size: int | None = None
    base_batch_size: int | None = None
    base_learning_rate: float | None = None
    world_size: int | None = None
    num_nodes: int | None = None
    zero_stage: int | None = None
    #: PyTorch FSDP's sharding strategy ("full_shard", "shard_grad_op", "hybrid_shard", "no_shard"): the alternative
    #: to ZeRO that HF Trainer / Accelerate / torchtune users run.
    fsdp: str | None = None
    offload_optimizer: bool | None = None
    offload_param: bool | None = None
    precision: str | None = None
    seq_len: int | None = None
    finetune: str | None = None
    lora_rank: int | None = None
    gradient_checkpointing: str | None = None
    flash_attention: bool | None = None
    #: How torch.optim.AdamW steps: "fused" (adamw_torch_fused, fused=True) or "foreach" (HF Trainer's
    #: optim adamw_torch, a plain torch.optim.AdamW): the foreach step holds one more second-moment-sized buffer.
    adamw_kernel: str | None = None
    pipeline_parallel_size: int | None = None
    tensor_parallel_size: int | None = None
    sequence_parallel_size: int | None = None
    #: The model name as the user wrote it ("Qwen-14B", "baichuan2 13b"), shown back and kept when no preset fits.
    model_text: str | None = None
    #: The GPU as the user named it ("Tesla P4", "TITAN RTX", "V100 32G"), shown back and kept when no preset fits.
    gpu_text: str | None = None
    #: Memory the user saw in use (nvidia-smi, "already allocated", "占用 17.9G"): never the GPU's capacity.
    observed_memory_gb: float | None = None
    #: The node's host RAM (CPU memory) the user states ("内存1T", "64GB of RAM"): never a GPU's memory.
    host_ram_gb: float | None = None
    #: "GA 从 1 调到 2" / "GA 1 -> 32": the earlier GA of a change the user describes.
    ga_from: int | None = None
    #: Base weights loaded in 8 or 4 bits ("load_in_8bit=True", "--quantization_bit 4", "int8"): "int8" / "int4".
    #: Not the compute precision (fp16/bf16 still say how the trainable part and the activations are kept).
    quantization: str | None = None
    #: Vision-language training: images in each sample, their size in pixels (as written "W×H"), the Qwen2-VL
    #: processor's max_pixels bound, and whether the vision tower is frozen (freeze_vision_tower / freeze_vit).
    images_per_sample: int | None = None
    image_width: int | None = None
    image_height: int | None = None
    image_max_pixels: int | None = None
    freeze_vision_tower: bool | None = None

    def stated(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v is not None}

    def merged_over(self, earlier: Slots) -> Slots:
        """A follow-up keeps the earlier slots and changes only what it names."""
        return Slots(**{**earlier.stated(), **self.stated()})


# ---- the extraction table's machinery ---------------------------------------------------------------------
#: A rule's converter: the match and the whole text in, one value per slot of the rule out (None: leave that slot).
Convert = Callable[[re.Match[str], str], tuple[Any, ...]]


def _always(m: re.Match[str], text: str) -> bool:
    return True


@dataclass(frozen=True)
class SlotRule:
    """One extraction run: the slots a wording sets, the patterns that find it (tried in order: the first pattern
    with an accepted match is used), and how the match becomes the values. Most settings are read this way; the
    ones whose reading depends on the rest of the text (GPU counts, precision, the fine-tuning method) keep their
    own named functions below.

    ``only_if_unset``: an earlier rule or step that already set a slot wins. ``accept``: a match that is someone
    else's (a quotation, a "total" batch) is skipped and the next match tried."""

    slots: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]
    convert: Convert
    accept: Callable[[re.Match[str], str], bool] = _always
    only_if_unset: bool = False

    def match(self, text: str) -> re.Match[str] | None:
        """The first accepted match. A pattern whose required literal is absent is not scanned (it cannot match:
        :func:`rag.regex_literals.could_match`)."""
        for pattern in self.patterns:
            if not could_match(pattern, text):
                continue
            for m in pattern.finditer(text):
                if self.accept(m, text):
                    return m
                if self.accept is _always:
                    break
        return None

    def apply(self, text: str, slots: Slots) -> bool:
        """Set the rule's slots from its first accepted match; whether it matched (even when no value was kept)."""
        m = self.match(text)
        if m is None:
            return False
        for slot, value in zip(self.slots, self.convert(m, text), strict=True):
            if value is not None and not (self.only_if_unset and getattr(slots, slot) is not None):
                setattr(slots, slot, value)
        return True


def _apply_each(rules: Sequence[SlotRule], text: str, slots: Slots) -> None:
    """Every rule in turn; a later one overwrites an earlier one's slot unless it is ``only_if_unset``."""
    for rule in rules:
        rule.apply(text, slots)


def _apply_first(rules: Sequence[SlotRule], text: str, slots: Slots) -> None:
    """Alternative wordings of one setting: only the first rule whose pattern matches is used."""
    for rule in rules:
        if rule.apply(text, slots):
            return


def _group_int(n: int = 1) -> Convert:
    return lambda m, text: (int(m.group(n)),)


def _first_group_int(m: re.Match[str], text: str) -> tuple[Any, ...]:
    """The first group that matched, as an int (alternatives that put the number in different groups)."""
    return (int(next(g for g in m.groups() if g is not None)),)


def _group_num(m: re.Match[str], text: str) -> tuple[Any, ...]:
    return (_num(m.group(1)),)


def _constant(*values: Any) -> Convert:
    return lambda m, text: values


_MODEL_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"llama[-_ ]?2[-_ ]?(?:chat[-_ ]?)?70b", re.I), "llama-2-70b"),
    (re.compile(r"llama[-_ ]?2[-_ ]?(?:chat[-_ ]?)?13b", re.I), "llama-2-13b"),
    (re.compile(r"llama[-_ ]?2[-_ ]?(?:chat[-_ ]?)?7b", re.I), "llama-2-7b"),
    (re.compile(r"llama[-_ ]?3(?:\.\d)?[-_ ]?(?:instruct[-_ ]?)?8b", re.I), "llama-3-8b"),
    (re.compile(r"qwen[-_ ]?2(?:\.5)?[-_ ]?7b", re.I), "qwen2.5-7b"),
    (re.compile(r"mistral(?:[-_ ]?7b)?", re.I), "mistral-7b"),
    (re.compile(r"chatglm[-_ ]?3?(?:[-_ ]?6b)?", re.I), "chatglm3-6b"),
    (re.compile(r"gpt[-_ ]?2[-_ ]?medium", re.I), "gpt2-medium"),
    (re.compile(r"gpt[-_ ]?2\b(?![-_ ]?(?:medium|large|xl))", re.I), "gpt2"),
    (re.compile(r"bert[-_ ]?large", re.I), "bert-large"),
    (re.compile(r"bert(?:[-_ ]?base)?\b", re.I), "bert-base"),
    (re.compile(r"t5[-_ ]?3b", re.I), "t5-3b"),
]
#: "llama" as a model's family word, not inside a tool's name ("LLaMA-Factory", "llamafactory", "LlamaBoard", "llama.cpp").
LLAMA_WORD = r"llama(?![-_ ]?(?:factory|board|\.cpp))"
# Model names people write, beyond the presets: family + optional version + size ("Qwen-14B", "baichuan2-13b-chat").
_MODEL_NAME = re.compile(
    # a vision-language variant is one word with its family whatever the separator: "qwen3vl", "Qwen3 VL", "glm4v"
    r"(?<![A-Za-z0-9])((?:(?:code)?qwen(?:1\.5|2\.5|2|3)?(?:[-_ ]?vl(?![A-Za-z]))?|chatglm[23]?|glm-?4(?:v(?![A-Za-z]))?|baichuan[2]?|internlm[23]?(?:\.5)?|"
    # "llama factory" / LLaMA-Factory is the framework, not a model
    r"llama[-_ ]?[23](?:\.[0-9])?|"
    + LLAMA_WORD
    + r"|code[-_ ]?llama|vicuna|alpaca|mistral|mixtral|gemma[23]?|phi-?[1-4](?:\.5)?|yi(?=[-_ ]?\d)|"
    r"deepseek(?:[-_ ]?(?:v[23]|coder|llm|r1))?|falcon|bloomz?|gpt[-_ ]?neox|pythia|opt(?=[-_ ]?\d)|gpt[-_ ]?j|"
    # ("MiniCPM-V 2.6", "minicpm-v2_6": the V and its version joined by any separator)
    r"roberta|bert|flan[-_ ]?t5|t5|starcoder2?|olmo|minicpm(?:[-_ ]?v(?:[-_ ]?\d(?:[._]\d)?)?(?![A-Za-z0-9]))?|internvl[23]?(?:\.5)?|llava(?=[-_ ]?v?\d)|knowlm|santacoder|"
    # translation and vision models people fine-tune too: "MarianMT", "vit-base", "GPT-3 6.7B"
    r"marian(?:mt)?|vit(?=[-_ ](?:base|large|huge|small|tiny|[bslh]\b))(?:[-_ ](?:base|large|huge|small|tiny|[bslh]))?|gpt-?3(?:\.5)?|"
    # more families people name in issues ("galactica 30b", "mt0-xxl", "GPT-Neo", "SmolLM-135M", "Zephyr 7B Beta",
    # "DialoGPT-medium", "resnet152", "bge-m3", "Wav2Vec2")
    r"galactica|mt[05](?=[-_ ]?(?:small|base|large|xl|xxl)\b)(?:[-_ ]?(?:small|base|large|xl|xxl))?|gpt[-_ ]?neo(?![-_ ]?x)|"
    r"tinyllama|mpt(?=[-_ ]?\d)|smollm[23]?|zephyr|dialogpt(?:[-_ ](?:small|medium|large))?|resnet[-_ ]?\d{2,3}|"
    r"bge(?=[-_ ](?:m3|small|base|large|reranker))(?:[-_ ](?:m3|small|base|large|reranker))?|wav2vec\s?2(?:\.0)?)"
    r"(?:[-_ ]?(?:chat|instruct|base))?"
    r"(?:[-_ ]?(?:\d+(?:\.\d+)?[xX])?\d+(?:\.\d+)?\s?[bBmM](?![a-zA-Z0-9]))?(?:[-_ ]?(?:chat|instruct|base|it|hf))?)",
    re.I,
)
# ("a 65-b model", accelerate #1515: a hyphen before the unit when "model" follows)
# ("lora微调72Bqwen", Qwen #708: a family's name glued after the size)
_PARAMS_B = re.compile(
    r"(?<![A-Za-z0-9_.])(\d+(?:\.\d+)?)(?:\s*|-(?=[bB]\s+models?\b))[bB]"
    r"(?:(?![a-zA-Z0-9])|(?=(?:qwen|llama|baichuan|chatglm|glm|mistral|internlm|deepseek|gemma)))",
)
#: What follows a "10B" that counts data rather than parameters.
_DATA_AMOUNT = re.compile(
    r"\s*(?:tokens?\b|samples?\b|examples?\b|words?\b|characters?\b|chars?\b|条|个\s*token)", re.I
)
_PARAMS_YI = re.compile(r"(\d+(?:\.\d+)?)\s*亿")
# "a 400M model", "a 400M transformer model", "125M GPT-2 model": one architecture word may stand between
_PARAMS_M = re.compile(
    r"(?<![A-Za-z0-9_.])(\d+(?:\.\d+)?)\s*[mM]\s*(?:(?:transformer|gpt|bert|llama|decoder|encoder|language|"
    r"parameter)[-\w]*\s+)?(?:params|parameters|参数|的模型|model)",
    re.I,
)


def _word(pattern: str) -> re.Pattern[str]:
    """``pattern`` not glued to other Latin letters or digits (Chinese characters may touch it: 8卡A100)."""
    return re.compile(r"(?:(?<=\d[xX×*])|(?<![A-Za-z0-9]))(?:" + pattern + r")(?![A-Za-z0-9])", re.I)


_GPU_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (_word(r"(?:rtx\s*)?3090(?:\s*ti)?"), "rtx-3090"),
    (_word(r"(?:rtx\s*)?4090\s*d"), "rtx-4090d"),
    (_word(r"(?:rtx\s*)?4090"), "rtx-4090"),
    (_word(r"(?:rtx\s*)?4080(?:\s*super)?"), "rtx-4080"),
    (_word(r"(?:rtx\s*)?2080\s*ti"), "rtx-2080ti"),
    (_word(r"(?:rtx\s*)?a?6000[\s-]*ada"), "rtx-6000-ada"),
    (_word(r"(?:rtx\s*)?a6000"), "rtx-a6000"),
    (_word(r"a800"), "a800-80gb"),
    (_word(r"h800"), "h800-80gb"),
    (_word(r"a100[-_ ]?(?:80|80g|80gb)|a100(?![-_ ]?40)"), "a100-80gb"),
    (_word(r"a100[-_ ]?40(?:g|gb)?"), "a100-40gb"),
    (_word(r"h100"), "h100-80gb"),
    (_word(r"h200"), "h200"),
    (_word(r"h20"), "h20"),
    (_word(r"v100s?[-_ ]?16(?:g|gb)?"), "v100-16gb"),
    (_word(r"v100s?"), "v100-32gb"),
    (_word(r"l40s?"), "l40s"),
    (_word(r"(?:nvidia\s*)?a40"), "a40"),
    (_word(r"(?:nvidia\s*)?titan[\s-]*xp"), "titan-xp"),
    (_word(r"l20"), "l20"),
    (_word(r"l4"), "l4"),
    (_word(r"a10g?"), "a10"),
    (_word(r"t4"), "t4"),
    (_word(r"mi300x?"), "mi300x"),
    (_word(r"(?:rtx\s*)?a5000"), "rtx-a5000"),
    (_word(r"(?:rtx\s*)?a4000"), "rtx-a4000"),
    (_word(r"(?:rtx\s*)?3060\s*ti"), "rtx-3060ti"),
    (_word(r"(?:rtx\s*)?3060"), "rtx-3060"),
    (_word(r"(?:rtx\s*)?3070(?:\s*ti)?"), "rtx-3070"),
    (_word(r"(?:rtx\s*)?3080\s*ti"), "rtx-3080ti"),
    (_word(r"(?:rtx\s*)?3080"), "rtx-3080"),
    (_word(r"(?:rtx\s*)?4070"), "rtx-4070"),
    (_word(r"(?:rtx\s*)?5090"), "rtx-5090"),
    (_word(r"(?:rtx\s*)?2070(?:\s*super)?"), "rtx-2070"),
    (_word(r"(?:rtx\s*)?2080(?:\s*super)?"), "rtx-2080"),
    (_word(r"titan[\s-]*rtx"), "titan-rtx"),
    (_word(r"(?:quadro\s*)?rtx\s*8000"), "quadro-rtx-8000"),
    (_word(r"(?:quadro\s*)?rtx\s*6000(?![\s-]*ada)"), "quadro-rtx-6000"),
    (_word(r"titan[\s-]*v"), "titan-v"),
    (_word(r"(?:gtx\s*)?1080\s*ti"), "gtx-1080ti"),
    (_word(r"(?:gtx\s*)?1080"), "gtx-1080"),
    (_word(r"gtx\s*970"), "gtx-970"),
    (_word(r"(?:gtx\s*)?titan\s*x"), "gtx-titan-x"),
    (_word(r"(?:gtx\s*)?1050\s*ti"), "gtx-1050ti"),
    (_word(r"(?:gtx\s*)?1060"), "gtx-1060"),
    (_word(r"(?:gtx\s*)?1070(?:\s*ti)?"), "gtx-1070"),
    (_word(r"(?:gtx\s*)?1650(?:\s*super)?"), "gtx-1650"),
    (_word(r"(?:gtx\s*)?1660(?:\s*ti|\s*super)?"), "gtx-1660"),
    (_word(r"(?:rtx\s*)?2060\s*super"), "rtx-2060-super"),
    (_word(r"(?:rtx\s*)?2060"), "rtx-2060"),
    (_word(r"p100"), "p100"),
    (_word(r"p40"), "p40"),
    (_word(r"k80"), "k80"),
    (_word(r"(?:ascend\s*)?910b\d?"), "ascend-910b"),
]
#: A GPU as people name it, with its vendor words: "Tesla V100", "RTX A5000", "TITAN RTX", "2080ti", "8*P100",
#: "AMD MI250", "tpu v3-8". Bare numbers only for the consumer series (1060 … 5090), never any 4-digit number.
_GPU_NAME = re.compile(
    r"(?:(?<=\d[xX×*])|(?<![A-Za-z0-9]))((?:(?:nvidia|amd|tesla|geforce|quadro)[\s-]*)*"
    r"(?:(?:(?:rtx|gtx)[\s-]*(?:a?6000[\s-]*ada|a\d{4}|\d{4}(?:\s*ti|\s*super)?|9[5-8]0(?:\s*ti)?|titan(?:[\s-]*(?:xp|x|rtx|v)(?![A-Za-z0-9]))?)|titan[\s-]*(?:xp|x|rtx|v)|"
    r"a6000[\s-]*ada|"
    r"[ah]-?100s?|[ah]800|h200|h20|v-?100s?|p100|p40|p4|t4|k80|k40|a10g?|a30|a40|a6000|a5000|a4000|l40s?|l20|l4|mi\d{2,3}x?|"
    r"(?:昇腾\s*)910[a-c]?\d?|(?:ascend\s*)?910b\d?|ascend\s*(?:910[a-c]?\d?|npus?)|tpu[\s-]*v\d(?:-\d+)?)(?:s(?![A-Za-z0-9]))?(?:[-\s]*(?:pcie|sxm\d?|nvl))*(?![A-Za-z0-9])|"
    # consumer cards by number: "3090", "2080ti", "4090lora微调" (glued to the next word), "2080ti22GB"
    r"(?:10[5-8]0|16[56]0|20[6-8]0|30[5-9]0|40[6-9]0|50[7-9]0)(?:\s*ti|\s*super|d)?(?:s(?![A-Za-z0-9]))?(?!\d(?!\d?\s*g)))"
    r"(?=\d{1,3}\s*(?:g|gb)\b|\D|$))",
    re.I,
)
# A capacity written next to the name: "V100 32G", "A100 (40G)", "A100-40GB", "V100 with 16G memory", "2080ti22GB".
_GPU_CAP_AFTER = re.compile(
    # ("A100 GPUs (40GB)", "A100 cards with 40GB": the plural noun between the name and its size)
    # ("显卡A100:40G", GLM-4 #288: a colon between them)
    # ("8卡a100*40G", Monkey #49: a product sign between them, the size unit making it no count; "A100/40GB")
    # ("每张4090卡只有24G显存", "V100单卡有32G显存", LLaMA-Factory #1878: the size the card "has")
    r"^\s*(?:(?:gpus?|cards?|显卡|单卡|卡)\s*)?(?:[-_(（:：*/]\s*|with\s+|显存\s*|(?:只|都|也)?有\s*)?"
    r"(\d{1,3}(?:\.\d+)?)\s*(?:g|gb|gib|(?-i:Go))(?!(?!x\d)[a-z])",
    re.I,
)
_GPU_CAP_BEFORE = re.compile(r"(\d{1,3}(?:\.\d+)?)\s*(?:g|gb|gib)\s*(?:的|显存的|memory|vram)?\s*[-\s]*$", re.I)
# Words before a GPU name that make it the user's own card, or someone else's / a hypothetical one.
_GPU_MINE = re.compile(
    r"(?:\d|[一两二三四五六七八九十单双]|two|three|four|six|eight)\s*(?:张|块|台|x|×|\*|个)?\s*$|"
    r"(?:\bI(?:'m| am)? (?:use|using|have|run|train\w*)|\bmy\b|\bon\b|\bwith\b|我(?:用|有|的|使用)|使用|用的是|用了|单张|单卡|"
    # ("是否能用 nvidia 4090 24GB 进行lora": the card the question asks about)
    r"(?:能|可以|可否|能否|能不能)(?:用|在))"
    r"[^.。,，;；]{0,12}$",
    re.I,
)
_GPU_OTHERS = re.compile(
    # ("wiki中提到单卡是3090的24g，如果只有20g" (minimind #386): the documentation's card, not the user's)
    # ("需要多少2台8xA100 80G够吗", "需要几张A100": how many of the card the user would use, not another's card)
    r"(?:假如|如果|要是|\bif\b|require[sd]?|need(?:s|ed)?|需要(?!多少|几)|推荐|官方|作者|author|instead of|than|比|"
    # ("文中说到使用了24 张A800（80G）进行训练" (FlagEmbedding #1195): the paper's cards, not the user's 8 V100)
    r"而不是|比如|e\.g\.|such as|like|(?:wiki|readme|文档|教程|论文|文中|文章|原文)\s*(?:中|里|上)?\s*(?:提到|说到|写到|写|说))"
    r"[^.。,，;；]{0,14}$",
    re.I,
)


# Words that introduce a quotation of a comment or a document: "我看注释中有这么一句 `…`", "the README says `…`".
_QUOTE_INTRO = re.compile(
    r"(?:这么一句|这样一句|这句话|原文(?:如下)?|注释(?:中|里)?(?:写着|写道)?|文档(?:中|里)?(?:写着|写道)?|"
    r"\breadme says|\bdocs? says?|\bit says|\bcomment says)\s*[:：]?\s*$",
    re.I,
)


# A line that introduces someone else's text quoted on the lines under it, to the end of the paragraph: "Phil Schmid's
# guide mentions the following:", "The README says:". (Not "文档原文如下：": there the quoted default configuration is
# the one the user runs and asks about, zh-chatglm6b-1149.)
_BLOCK_QUOTE_INTRO = re.compile(
    r"(?:guide|readme|docs?|documentation|paper|blog|article|tutorial|author|post|model card)\S*\s+(?:\w+\s+){0,2}?"
    r"(?:mentions?|says?|states?|writes?|recommends?|claims?|lists?|reads?)\s+(?:the following|this|that)?\s*:[ \t]*$|"
    # "readme中这样说的", "教程里是这么写的：": the paragraph under it is the document's, not the user's run
    r"(?:readme|文档|教程|论文|博客|官方\S{0,4}?)\s*(?:中|里|上)?\s*(?:是)?(?:这样|这么)(?:说|写)的?\s*[:：]?[ \t]*$",
    re.I | re.M,
)


def _quoted(text: str, pos: int, lines: bool = True) -> bool:
    """Whether ``pos`` is inside a quotation ("“…使用6张3090训练…”", a "> " quoted line, a comment quoted in backticks
    after "注释中有这么一句"): someone else's words. ``lines=False``: "> " lines are not counted (people also use them
    to list their own settings)."""
    line_start = text.rfind("\n", 0, pos) + 1
    if text.count("“", 0, pos) > text.count("”", 0, pos) or (lines and text[line_start:pos].lstrip().startswith(">")):
        return True
    paragraph = text.rfind("\n\n", 0, pos)
    if _BLOCK_QUOTE_INTRO.search(text, paragraph + 1 if paragraph >= 0 else 0, line_start):
        return True  # "the guide mentions the following:\n…16x80GB GPUs…": the lines under it are the guide's
    tick = text.rfind("`", 0, pos)
    if tick < 0 or text.count("`", 0, pos) % 2 == 0:
        return False
    if _QUOTE_INTRO.search(text[max(0, tick - 30) : tick]):
        return True
    # "from `allowing users to fine-tune … up to 20B parameters` in the README": a sentence in backticks that the words
    # after it say is a document's
    close = text.find("`", pos)
    return close > 0 and len(text[tick + 1 : close].split()) >= 4 and bool(_QUOTE_SOURCE_AFTER.match(text, close + 1))


_QUOTE_SOURCE_AFTER = re.compile(
    r"\s*(?:in|from|of|on)\s+(?:the\s+|your\s+|their\s+)?(?:readme|docs?|documentation|paper|blog|model card|wiki)\b",
    re.I,
)


def extract_gpu(text: str) -> Slots:
    """Only the GPU a text names (an nvidia-smi table's "Tesla P100-PCIE..."), none of the other patterns."""
    slots = Slots()
    if mentions := _gpu_mentions(text):
        _, name, cap = mentions[0]
        slots.gpu_text, slots.gpu = re.sub(r"\s+", " ", name)[:40], _gpu_preset(name, cap)
    return slots


def extract_smi(text: str) -> Slots:
    """What an nvidia-smi table shows: the GPU's name, and each GPU's "used / total" memory column — the busiest GPU's
    use is the reading (the one that runs out first), its total the card's size ("2360MiB / 4041MiB", deepmd-kit
    #1218). A total no card has (a MIG slice, a cut-off column) sizes nothing."""
    slots = extract_gpu(text)
    rows = [(int(m.group(3)), int(m.group(4))) for m in _USED_OF_TOTAL.finditer(text) if m.group(3)]
    if rows:
        used, total = max(rows)
        # (an idle table, every GPU under 512 MiB, was taken before the run: no reading of it)
        if _is_card_size(_amount_gb(str(total), "MiB")) and 512 <= used <= total:
            slots.observed_memory_gb = _amount_gb(str(used), "MiB")
            slots.gpu_memory_gb = _amount_gb(str(total), "MiB")
    return slots


# A GPU name glued to the word before it: "GPU3090", "4V100" (a count), "8A100", "8*32GV100" (its size).
_GLUED_GPU = re.compile(
    r"(?<![A-Za-z0-9_.])(gpu|\d{1,2}|\d{1,3}(?:g|gb))(?=(?:[ahv]100|[ah]800|h200|h20|p100|v100s?|t4|a10g?|a40|a30|l40s?|l20)(?![A-Za-z0-9])|"
    r"(?<=gpu)(?:10[5-8]0|16[56]0|20[6-8]0|30[5-9]0|40[6-9]0|50[7-9]0)(?!\d))",
    re.I,
)


def _spaced_gpu_names(text: str) -> str:
    """``text`` with a space between a GPU name and the word or count glued before it (same length plus one per
    name, so only for reading names and their sizes)."""
    return _GLUED_GPU.sub(lambda m: m.group(1) + " ", text)


# "How to fine-tune without A100 GPUs", "没有A100": a card the user does not have.
_GPU_LACKED = re.compile(
    r"(?:without|\bw/o|\bno|\bnot have|n't have|没有|不用|缺少)\s*(?:any\s+)?(?:nvidia\s+)?$", re.I
)


def _gpu_mentions(text: str) -> list[tuple[int, str, float | None]]:
    """Every GPU named in ``text``: (score, name as written, capacity written next to it); the user's own first.

    A size that is part of an observation ("3090(17GB memory per card is used)") is not the card's capacity."""
    text = _spaced_gpu_names(text)
    used = [m.span() for m in _OBSERVED.finditer(text)]
    out = []
    counts: list[int] = []
    for i, m in enumerate(_GPU_NAME.finditer(text)):
        before = text[max(0, m.start() - 24) : m.start()]
        after = _GPU_CAP_AFTER.match(text[m.end() : m.end() + 24])
        if after and any(a <= m.end() + after.start(1) < b for a, b in used):
            after = None
        cap = after or _GPU_CAP_BEFORE.search(before[-12:])
        mine = _GPU_MINE.search(before)
        # someone else's card: named after "if / requires / 官方", quoted, or in a document's or another person's run
        others = bool(_GPU_OTHERS.search(before) or _quoted(text, m.start()) or hearsay(text, m.start()))
        score = (
            3
            if mine and not mine.group(0)[:1].isdigit() and mine.group(0)[:1] not in "一两二三四五六七八九十双"
            else 2
            if mine
            else 0
        ) - (3 if others or _GPU_LACKED.search(before) else 0)
        if _GPU_WORKED_AFTER.match(text, m.end()):
            score -= 2  # "H100上未出现该问题，A100上会出现" (EasyR1 #156): the card it works on is the comparison
        if _earlier_run(text, m.start()):
            score -= (
                1  # "Before, I had tried … on single GPU (RTX 2070). Now, … 4 GPUs (Tesla T4)": the run now asked about
            )
        out.append((score, -i, m.group(1).strip(), _one_card(text, m, float(cap.group(1))) if cap else None))
        theirs = others or bool(_NOT_THEIRS_BEFORE.search(before))
        counts.append(0 if theirs else _count_at_mention(text, m))
    if len(out) > 1 and any(c > 1 for c in counts):
        # "A40 * 4 … (单卡A100 80G 不会 OOM)", "四张Titan Xp … 单张V100": the cards counted several times are the run in
        # question; a card named once as a single one is the comparison (the count read is the several, too)
        many = {_gpu_family_key(o[2]) for o, c in zip(out, counts, strict=True) if c > 1}
        out = [
            (o[0] - 3, *o[1:]) if c == 1 and _gpu_family_key(o[2]) not in many else o
            for o, c in zip(out, counts, strict=True)
        ]
    if len(out) > 1:  # "Ascend NPU" names the vendor; a model number named anywhere else ("910B3") says which card
        out = [o for o in out if not re.fullmatch(r"ascend\s*npus?", o[2], re.I)] or out
    out.sort(reverse=True)
    return [(score, name, cap) for score, _, name, cap in out]


# What follows a card the run works on: "H100上未出现该问题", "on the A100 it works fine".
_GPU_WORKED_AFTER = re.compile(
    r"\s*(?:上面?|上边)?\s*(?:[未没]有?|不会?)(?:出现|遇到|发生|复现)|\s*(?:上面?)?\s*(?:(?:都|是|一切)?正常|没(?:有)?问题)|"
    r"\s+(?:works?|worked|runs?|ran) (?:fine|well|ok|without (?:any )?(?:problem|issue|error))|\s+(?:is|was) fine\b|"
    r"\s+(?:has|had|have) no (?:such )?(?:problem|issue)",
    re.I,
)


# A sentence that opens on an earlier try, which the message then leaves for the run it asks about.
_EARLIER_RUN_START = re.compile(
    r"\s*(?:before(?:\s+that)?\s*,|previously\b|earlier\b|at first\b|originally\b|initially\b|"
    r"I (?:had )?(?:first|previously|originally) (?:tried|trained|used|ran)\b|之前|以前|原来|起初|一开始|刚开始)",
    re.I,
)


def _earlier_run(text: str, pos: int) -> bool:
    """Whether the sentence holding ``pos`` opens on an earlier try ("Before, I had tried …", "之前用单卡…")."""
    begin = _sentence_start(text, pos)
    return begin is not None and bool(_EARLIER_RUN_START.match(text, begin))


def _one_card(text: str, m: re.Match[str], gb: float) -> float | None:
    """One card's memory from a size written next to its name: "8xA100(640G)" writes the cards added up.

    A size no card of that name has, which the count at the mention divides into one that it has, is the total;
    any other size above the largest card is no card's size at all. Two GeForce cards at twice their size stay
    as written: "2张4090 48G" are the 48 GB cards modded in China."""
    if _gpu_preset(m.group(1), gb) is not None:
        return gb
    n = _count_at_mention(text, m)
    modded = n == 2 and re.search(r"(?:rtx|gtx|\b[1-5]0[6-9]0)", m.group(1), re.I)
    if n > 1 and not modded and _gpu_preset(m.group(1), gb / n) is not None:
        return gb / n
    return gb if gb <= max(_CARD_SIZES) * 1.08 else None


_SINGLE_BEFORE = re.compile(
    r"(?:单卡|单张|单块|一张|一块|\bsingle|\bone|(?<![\d.])1\s*[x×*]?)\s*(?:\d{1,3}\s*(?:g|gb)\s*的?\s*)?$", re.I
)


def _count_at_mention(text: str, m: re.Match[str]) -> int:
    """How many of the card a mention counts ("4张Titan Xp", "A40 * 4", "单卡A100"); 0 when none is written."""
    before = text[max(0, m.start() - 24) : m.start()]
    if _SINGLE_BEFORE.search(before):
        return 1
    if b := _COUNT_BEFORE.search(before):
        d, w, c = b.groups()
        return int(d) if d else _COUNT_WORD.get(w.lower(), 0) if w else _num(c)
    if a := _COUNT_AFTER.match(text[m.end() : m.end() + 16]):
        return _num(a.group(1) or a.group(2))
    return 0


def _gpu_preset(name: str, capacity: float | None) -> str | None:
    """The preset a GPU name means; with a capacity, the preset variant of that size, or None when none has it."""
    name = re.sub(r"(?<=\d)s$", "", name.strip())  # "A100s", "RTX-3090s"
    name = re.sub(r"(?<=^[AHVahv])-(?=\d)", "", name)  # "A-100", "V-100"
    for pattern, preset in _GPU_PATTERNS:
        if pattern.search(name):
            if capacity is None or abs(GPU_PRESETS[preset].memory_gib - capacity) <= 0.08 * capacity:
                return preset
            family = preset.split("-")[0] if preset[0] in "av" else preset
            for other in GPU_PRESETS:
                if other.startswith(family) and abs(GPU_PRESETS[other].memory_gib - capacity) <= 0.08 * capacity:
                    return other
            return None
    return None


_GB = r"(\d{1,4}(?:\.\d+)?)\s*(?:g|gb|gib|gi|G)(?![a-z])"
# Capacity: "24G 显存的卡", "24GB GPU", "显存 24G", "80GB A100", "(24GB)".
_GPU_MEM = re.compile(
    # "80G单卡"; "GPUs with 32GB of memory", "per 80GB of VRAM" (not "occupy > 14 GB of memory": an amount)
    r"(?:with|has|have|having|per)\s+" + _GB + r"\s+of\s+(?:gpu\s+)?(?:memory|vram)|"
    # ("a GPU with 24gb of ram" (transformers #20348): RAM on the card named just before is its memory)
    r"\b(?:gpus?|cards?)\s+with\s+"
    + _GB
    + r"\s+of\s+ram\b|"
    + _GB
    + r"\s*(?:的)?\s*(?:ram\s+(?=gpu|card|graphics))?(?:(?:nvidia|tesla)\s*)*(?:显存|现存|独显|vram|memory|gpu|卡|显卡|单卡|单张|card|graphics|npus?\b|nvidia|tesla)|"
    # (not "模型使用显存为120G", "所需显存为…": the memory used or needed, not the card's)
    # ("my cuda memory is 40GB" (TRL #1619), "my VRAM is 16GB")
    r"(?<!使用)(?<!占用)(?<!所需)(?<!需要)(?<!消耗)(?:显存|现存|vram|(?:gpu|cuda) memory(?: is| of)?|显卡(?:大小|显存|内存)?)\s*"
    r"(?:只有|是|为|有|:|：|=|of|is)?\s*"
    + _GB
    + r"|(?:显存|现存|vram|gpu memory)\s*(?:只有|是|为|有|:|：|=|of)?\s*(\d{4,6})\s*MiB"
    # an environment report's device name with its size: "CUDA device(s): NVIDIA vGPU-32GB"
    + r"|(?<![A-Za-z])v?gpu-"
    + _GB
    # the size in brackets after the card: "单卡（32G）", "one GPU (24GB)"
    + r"|(?:卡|显卡|gpus?|cards?)\s*[(（]\s*"
    + _GB
    + r"\s*(?:显存|vram|memory)?\s*[)）]"
    # the size right after a count of cards: "4台8卡80G" (Qwen #887)
    + r"|(?<=[\d两二三四五六七八九十双]卡)\s*"
    + _GB
    + r"(?![+＋])",
    re.I,
)
# Cards times their size, or the size times the cards: "单机双卡 2*24GB", "4张卡，12G*4" (one card's size, whatever
# word before says it adds them up); only sizes cards come in, and never inside a sum ("0.04G * 2 = 0.08G").
_CARDS_TIMES_GB = re.compile(
    # ("3机，24卡*80G": the count's measure word between the count and the sign, OpenRLHF #784)
    r"(?<![A-Za-z0-9_.])\d{1,2}\s*(?:张卡|卡|张|块)?\s*[*x×]\s*(\d{1,3})\s*(?:g|gb|gib)(?![a-z])(?!\s*[*x×=])|"
    r"(?<![A-Za-z0-9_.])(\d{1,3})\s*(?:g|gb|gib)\s*[*x×]\s*\d{1,2}(?![\d.%])(?!\s*=)|"
    # "4xL4 which is 4*24=96 gb vram" (FastChat #453): the product written out, its factor the card's size
    r"(?<![A-Za-z0-9_.])\d{1,2}\s*[*x×]\s*(\d{1,3})\s*=\s*\d{1,4}\s*(?:g|gb|gib)(?![a-z])",
    re.I,
)
# (49: how a 48 GB card is written from nvidia-smi's "49140MiB", "a 49GB*4 machine")
_CARD_SIZES = {4, 6, 8, 10, 11, 12, 16, 20, 22, 24, 32, 40, 48, 49, 64, 80, 94, 96, 141, 192}


def _is_card_size(gb: float) -> bool:
    """Whether a total in GB is some card's memory (within 8 %: nvidia-smi's 81920MiB, a 4041MiB 4 GB card)."""
    return any(abs(gb - size) <= 0.08 * size for size in _CARD_SIZES)


# "最小运行显存为8G", "requires 24GB": a requirement, not the user's card.
_REQUIREMENT = re.compile(
    r"(?:最小|最低|至少|需要|要求|推荐|minimum|min\.?|require[sd]?|needs?|at least|recommend\w*)\s*\S{0,6}\s*$", re.I
)
_GPU_MEM_EACH = re.compile(
    _GB
    + r"\s*(?:per|each|/)\s*(?:gpu|card|device)?|(?:每张|每块|每个|每卡|单卡|各自?(?=\s*(?:有|是|为)?\s*\d))\s*(?:卡|显卡|gpu)?\s*(?:的)?\s*(?:显存)?\s*(?:是|为|有)?\s*"
    + _GB
    + r"(?!\s*[+＋])",  # "每张显存是50G+": a reading, not the card's size
    re.I,
)
# Observed use: "占用 17.9G", "uses 17.9G", "nvidia-smi shows 23 GB", "22.1 GiB already allocated".
# ("用了30多G": "多" after the number, more than it)
# (not an AWS instance type: "using 6 g5.4xlarge A10 GPUs", "2 g4dn.12xlarge")
_USE_GB = (
    r"(\d{1,4}(?:\.\d+)?)(?:\s*[-~～到]\s*(\d{1,4}(?:\.\d+)?))?\s*多?个?\s*(?:g|gb|gib|gi)(?![a-z])"
    r"(?!\d[a-z]{0,3}\.\d*x?large)"
)
_OBSERVED = re.compile(
    # ("突然增到60GB+", "逐渐增加到20G左右", "飙升到37GiB", "验证时直接到70G" (ZipVoice #167): grown to)
    # ("每张显存60-70G", "每张显存是50G+" (Qwen #887): a per-card amount told as a range or "N+" is a reading)
    r"(?:(?:每张|每块|每卡|每个)\s*(?:卡)?\s*(?:的)?\s*显存\s*(?:是|为)?\s*"
    r"(?=\d{1,4}(?:\.\d+)?\s*(?:[-~～到]\s*\d|多?\s*(?:g|gb|gib)\s*[+＋]))|"
    r"(?:占用了?|占了?|用了|使用了?|吃了|到了|(?:涨|增|增加|增长|升|飙升|上升)(?:到|至)|达到|显示|消耗了?|维持在|(?<=卡)到|(?<=显存)到|(?<=直接|一下)到)\s*(?:也|都|还|一直|始终|正常)?\s*(?:在|为|是|维持在)?|"
    r"uses?|using|used(?:\s+(?:is|was|are|were))?|shows?|showing|"
    # "after backward pass happens it's at 61 GB": a reading at a point of the run
    r"(?:\bit'?s|\bit (?:is|was)|\bmemory (?:is|was)|\busage (?:is|was)) at|"
    # "the GPU memory is still 9G": a reading that did not move; "bumps from ~22000MB to ~44000MB": the one it reached
    r"\bmemory (?:is|was|stays?|stayed|remains?|remained) still|"
    # "The GPU memory remains at 19GB until 14" (Diffusion-TTA #2): a reading held over steps
    r"\bmemory (?:stays?|stayed|remains?|remained) at|"
    r"\bfrom\s*~?\s*\d+(?:\.\d+)?\s*(?:mb|mib|gb|gib|g)?\s+to|"
    # "显存波动特别大，从20多G到接近80G" (CogVideo #199): the reading it reaches
    r"从\s*\d+(?:\.\d+)?\s*多?\s*(?:g|gb|gib)\s*(?:左右)?\s*(?:到|涨到|增加到|升到)\s*(?:接近|近)?|"
    # "it costs about ~34G. and then rises to ~53G" (bitsandbytes #324)
    r"\bcosts?|\bcosting|\brises to|\brose to|\brisen to|"
    # "batchsize设置为1大概13G" (LLaMA-Factory #836): a batch setting, then about how much it takes
    r"(?:batch[-_ ]?size|\bbs)\s*(?:设置为|设为|为|=|是)\s*\d{1,4}\s*(?:的时候|时)?\s*[,，]?\s*(?=大概|大约|约)|"
    r"(?:I )?see|seeing|consum\w*|takes?|taking|occup\w*|allocated|reach\w*|grows? to|went up to|peak(?:s|ed|ing)? at|"
    r"increase[sd]? (?:from \d+(?:\.\d+)?\s*gb? )?to|loads? (?:the )?GPU with|goes up to|went up to|climbs? to|"
    # "peak memory 35.2 GB", "peak GPU memory: 70GB", "max memory allocated 20GB"
    r"peak (?:gpu )?mem(?:ory)?(?: usage)?(?: is| was| of|:)?|max(?:imum)? memory allocated(?: is| was|:)?|"
    # "the mem usage per gpu is about 13G", "memory usage: 20GB"
    # ("the mem-usage of GPU is around 34G", "the memory usage of per GPU is about 8.4 GB")
    # ("the vram usage is about 35G", accelerate #2299)
    r"(?:gpu\s+)?(?:mem(?:ory)?|v?ram)[-_\s]usage(?:\s+(?:per|of|of each|on each|of per|on)\s+(?:the\s+)?(?:gpu|card|device)s?)?"
    # ("huge memory usage (160GB VRAM)": the reading in brackets)
    r"\s*(?:is|was|of|:|：|[(（])?)\s*"
    # ("consuming about ~51GB")
    r"(?:(?:about|around|~|约|大约|大概|近|接近)\s*){0,2}"
    # in MB as nvidia-smi shows it: "显存已经占用38900MiB"; one reading per GPU: "consumes 13849/13237 MB"
    # ("uses about 7000+MiB memory", pcl.pytorch #32: "+" after the amount)
    + r"(?:(\d{4,6})(?:\s*/\s*\d{4,6})*\s*\+?\s*(?:MB|MiB)\b|"
    + _USE_GB
    # (not "I am using 80GB H100s": the card's size; "costs 64GB GPU mem" (litgpt #282) is a reading)
    # ("consumes around 50 GB of GPU memory" (MoGe #144) is an amount of the card's memory)
    # ("在使用4GB的显存下，batchsize只能是2吗" (TransT #103): the card's size the run is under, not a reading)
    + r"(?!\s*(?:of\s+)?(?:nvidia\s+|tesla\s+)?(?:[AHLVT]\d{2,3}|rtx|gpus?\b(?!\s*(?:mem(?:ory)?\b|vram))|cards?\b|显卡|卡|的卡|"
    + r"的?显存(?:的)?(?:条件|情况)?下)))|"
    # "the memory used is 4*16GB": the cards times what each one uses ("使用4*32g的单机多卡" is the cards' size)
    + r"\bmemory\s+used\s+(?:is|was|are|were)\s+(?:about\s+|around\s+|~\s*)?\d{1,2}\s*[*x×]\s*"
    + _USE_GB
    + "|"
    + _GB
    + r"\s*(?:(?:of\s+)?(?:gpu\s+)?memory\s*)?(?:(?:per|each|/)\s*(?:card|gpu|device)\s*)?(?:is\s+|was\s+|are\s+|were\s+)?"
    # ("only 12.4 Gb are being used", F5-TTS #379)
    r"(?:being\s+)?"
    # ("constant ~15gb usage", "15GB VRAM usage": the amount, then that it is the usage)
    r"(?:already allocated|allocated|reserved|in use|used|已分配|已使用|的占用|(?:vram\s+|gpu\s+|memory\s+)?usage\b(?!\s*(?:limit|cap|budget)))|"
    # "I get 33300-33700 MiB GPU VRAM used per GPU": an amount in MB, then that it is in use
    r"(?<![\d.])(\d{4,6})(?:\s*[-~]\s*(\d{4,6}))?\s*(?:MB|MiB)\s*(?:of\s+)?(?:gpu\s+)?(?:vram|memory)?\s*"
    r"(?:already allocated|allocated|reserved|in use|used)|"
    # "显存39825MB" next to a run's settings: a measurement, in MB
    r"(?:显存|显存占用|memory usage)\s*[:：]?\s*(\d{4,6})\s*(?:MB|MiB)|"
    # a step-by-step trace of memory: "load_model(67g)-->梯度累计（100G）>trainer.train(OOM)", "init (20GB) -> step (75GB)"
    r"(?<=[\w)）*])\s*\**[(（]\s*(\d{1,4}(?:\.\d+)?)\s*(?:g|gb|gib)\s*[)）](?=\**\s*(?:-*>|→|\)|）))",
    re.I,
)


def _observed_gb(m: re.Match[str]) -> float:
    """The amount an observation names; the top of a range ("占35-39G" → 39); MB in GB."""
    gb = max(float(g) for g in m.groups() if g is not None)
    in_mb = m.group(0).lower().endswith(("mb", "mib")) or _MB_AMOUNT.match(m.group(0))
    return round(gb / 1024, 2) if in_mb else gb


_MB_AMOUNT = re.compile(r"\d{4,6}(?:\s*[-~]\s*\d{4,6})?\s*(?:MB|MiB)\b", re.I)


# How people set a batch in a sentence: "batchsize最多设置为2", "batch_size默认使用1", "batch_size==4", "batch 为1".
_SET_WORDS = (
    r"(?:==|=|:|：|为|是|设为|设置为|设置成|设置到|设成|设到|开到|开成|调到|调成|"
    + _CHANGED_TO
    + r"|改成|改为|使用|用|也只有|只有|只开|才|仅|都是|of|to|is|set to|"
    r"(?:only\s+)?can\s+(?:only\s+)?be\s+set(?:\s+to)?|only)"
)
# ("batch size已经调到非常小的3了": a word on how small between the setting and its value)
# ("batch size最大只能设置到16": two such words)
_SET = (
    r"\s*(?:(?:最多|最大|可以|默认|只能|要|也|都|就|只|已经)\s*){0,2}"
    # ("My batch_size had set to 1", "batch size has been set to 2", "batch size was 8")
    + r"(?:(?:had|has|have|was|were|been|already|also)\s+){0,3}"
    + r"(?:(?<=was\s)|(?<=were\s)|"
    + _SET_WORDS
    + r")"
    # ("batch__size调到了1": the perfective 了 after the verb)
    + r"(?:(?<=[到成为])了)?"
    + r"\s*(?:(?:非常|很|最|极)?小的\s*)?"
)
_MICRO = re.compile(
    r"(?<![A-Za-z_])(?:(?:train_micro_batch_size_per_gpu|per_device_train_batch_size|micro[-_ ]?batch(?:[-_ ]?size)?(?:[-_ ]?per[-_ ]?gpu)?|"
    r"微批次?(?:大小)?|per[-_ ]?(?:gpu|device)[-_ ]?batch(?:[-_ ]?size)?|(?:每卡|单卡)\s*(?:的)?\s*batch(?:[-_ ]?size)?|\bbs|b[ei]tch[-_ ]?size|bacth[-_ ]?size|bathc[-_ ]?size|btach[-_ ]?size|banch[-_ ]?size|batch(?:__|[-_ ])?size(?:\s+(?:per|on each|of each|for each|on every)\s+(?:device|gpu|card|process|rank))?|batch\s+(?:per|on each|for each)\s+(?:device|gpu|card)|批大小|批次大小|batch\s*的\s*大小|"
    # mmcv / mmdet / mmseg's samples_per_gpu, written out ("samples per GPU=2", mmsegmentation #2026)
    r"(?:samples|imgs|images)[-_ ]per[-_ ](?:gpu|device|card)|batch[-_]gpu\b)"
    r"(?:" + _SET + r"|" + SEP + r")|"
    # a bare "batch" only with a word that sets it ("batch 为1", "batch改成1", "batch=16"), never "batch 1800"
    r"(?<![-_A-Za-z0-9])batch(?![-_ ]?size)\s*(?:最多|可以|默认|只能|要|也|都|就|只|已经)?\s*"
    r"(?:==|=|:|：|为|是|设为|设置为|设置成|设成|改成|改为|调到|调成)\s*)" + NUM + r"(?!\d|\.\d)"
    # ("batch size 三块卡2080Ti的内存勉强够用": a count of cards after the key, not its value)
    r"(?!\s*[块张台个]?\s*(?:显?卡|gpus?(?![a-z])))",
    re.I,
)
_GA = re.compile(
    r"(?:gradient_accumulation_steps|grad(?:ient)?[-_ ]?acc(?:um(?:ulation)?)?(?:[-_ ]?steps?)?|(?<![A-Za-z0-9_])ga(?![A-Za-z0-9_])|梯度累[积加计](?:步数)?|"
    # ESPnet / neural_sp's `accum_grad`, `accum_grad_n_step`
    r"累[积加计](?:步数)?|accumulation[-_ ]?steps?|accumulate(?:[-_ ]steps?)?|accum_grad(?:_n_steps?)?|"
    # fairseq's --update-freq ("update frequency 4"), T5X's / Megatron's num_microbatches: accumulation by other names
    r"update[-_ ]freq(?:uency)?|num_microbatches)"
    # ("then accumulate steps will be 4", YOLOv5 #464)
    r"(?:`?\s*(?:argument|option|parameter|flag)\b)?(?:\s+(?:will|would|should)\s+be)?"
    + r"(?:\s*\(\s*(?=\d+\s*\))|"
    + SEP
    + r")"
    + NUM,
    # "1X3XGRADIENT_ACC(4)": the value in brackets after the key
    re.I,
)
_GA_CHANGE = re.compile(
    r"(?:gradient_accumulation_steps|grad(?:ient)?[-_ ]?acc\w*(?:[-_ ]?steps?)?|(?<![A-Za-z0-9_])ga(?![A-Za-z0-9_])|梯度累[积加计](?:步数)?|累[积加计](?:步数)?)"
    r"[^\d\->→=\n]{0,12}?(?:从|from)?\s*(\d+)\s*(?:->|→|=>|到|to|变成|变为|改成|改为|调到|调成|增加到|增大到|加到|提高到|降到|减到)\s*(\d+)",
    re.I,
)
# "the gradient accumulation parameter. When I increase the parameter from 4 to 8, I am getting OOM": further away, but
# only with "from"/"从" and never a count of GPUs or GB.
_GA_CHANGE_FAR = re.compile(
    r"(?:gradient_accumulation_steps|grad(?:ient)?[-_ ]?acc\w*(?:[-_ ]?steps?)?|梯度累[积加计](?:步数)?)"
    r"[^\d\n]{0,48}?(?:从|\bfrom)\s*(\d+)\s*(?:->|→|到|to)\s*(\d+)(?!\s*(?:gpus?|卡|张|块|nodes?|g\b|gb|gib|%))",
    re.I,
)
# "if I use the value 2 for the **accumulate_grad_batches**": the value before the key.
_GA_VALUE_FOR = re.compile(
    r"\bvalue\s+(\d+)\s+(?:for|as)\s+(?:the\s+)?\W{0,2}(?:accumulate_grad_batches|gradient_accumulation_steps|"
    r"grad(?:ient)?[-_ ]?accum\w*)",
    re.I,
)
# "can I use loss.backward twice then optim.step?": accumulation, written as what it does.
_GA_BACKWARD = re.compile(r"backward(?:\(\))?\s+(twice|(\d+)\s*times)\b[^?!\n]{0,30}\bstep", re.I)
# ("4步梯度累积", "8 steps of accumulation", "16 grad accum steps": the value before the name)
_GA_AFTER = re.compile(
    NUM + r"\s*(?:(?:步|steps?)\s*(?:的|of)?\s*(?:梯度)?(?:累[积加计]|accumulation)|"
    r"(?:grad(?:ient)?[-_ ]?)?accum(?:ulation)?[-_ ]?steps?\b)",
    re.I,
)
# (YOLOv5's `nbs`, its nominal batch: the batch train.py accumulates micro-batches up to)
_TRAIN_BATCH = re.compile(
    # (StyleGAN2-ADA / StyleGAN3's `--batch`, the total over GPUs beside `--batch-gpu`, each GPU's)
    r"(?<![A-Za-z_])(?:train_batch_size|nbs(?![A-Za-z_])|(?<=--)batch(?![-_\w])|global[-_ ]?batch(?:[-_ ]?size)?|total[-_ ]?batch(?:[-_ ]?size)?|"
    r"有效\s*(?:批次?|batch)(?:[-_ ]?size|大小)?|总\s*(?:的)?\s*batch[-_ ]?size|effective[-_ ]?batch(?:[-_ ]?size)?|全局\s*(?:批次?|batch)(?:[-_ ]?size|大小)?)"
    # "train_batch_size(global batch size)=64", "Global Batch Size (per_device_train_batch_size *
    # gradient_accumulation_steps) should be 128": a note in brackets between the key and its value
    + r"(?:\s*[(（][^()（）\n]{1,80}[)）])?(?:\s*(?:should|would|must|will)\s+be)?"
    + SEP
    + r"(\d+)",
    re.I,
)
#: A batch changed in one phrase, the old and the new: "有效 batch 从 32 变成 128", "effective batch from 32 to 128",
#: "batch size from 256 to 64" (rag.lr_change reads it too).
BATCH_CHANGE = re.compile(
    r"(?:batch|批次?|批大小)\D{0,16}?(?:从|from)\s*(\d+)\s*(?:变成|变为|改成|改为|增加到|增大到|加到|提高到|调到|扩大到|减少到|降到|到|to|->|→)\s*(\d+)",
    re.I,
)
_BATCH_CHANGE_FROM = re.compile(
    r"(?:从|from)\s*(?:(?:an?\s+|the\s+)?(?:effective|global|total|有效|全局)?\s*(?:batch|批次?)(?:[-_ ]?size|大小)?\s*(?:of\s*)?)"
    r"(\d+)\s*(?:变成|变为|改成|改为|增加到|增大到|加到|提高到|调到|扩大到|减少到|降到|到|to|->|→)\s*(\d+)",
    re.I,
)
_LR = re.compile(
    # ("I changed the learning rate to 0.0025", mmdetection #4993; "学习率改成 1e-4")
    r"(?:learning[-_ ]?rate|\blr\b|学习率)\s*(?:=|:|：|为|是|of|is set to|is|set to|to|设为|设置为|改为|改成|调到|调成|调整为|调整到)?\s*"
    r"(\d+(?:\.\d+)?(?:e-?\d+)?)",
    re.I,
)
# A GPU as a count's noun: its vendor words, then a model ("NVIDIA RTX A6000", "A-100", "Tesla V100s", "4090D").
_GPU_BRAND = r"(?:(?:nvidia|amd|tesla|geforce|quadro)[\s-]*)*"
_GPU_MODEL = (
    r"(?:(?:rtx|gtx)[\s-]*)?(?:[ahvplk]-?\d{2,3}[gs]?|[tlp]4|[ah]800s?|h20s?|a\d{4}s?|mi\d{2,3}x?|910b\d?|"
    r"(?:10[5-8]0|16[56]0|20[6-8]0|30[5-9]0|40[6-9]0|50[7-9]0)(?:\s*ti|\s*super|d)?s?)"
    r"(?:(?![A-Za-z0-9])|(?=\d{2,3}\s*(?:g|gb)(?![A-Za-z])))"  # "4张A10040G的卡": the size glued to the name
)
# A card's size between the count and the noun: "4张24GB显存的4090", "5个24G的P4090", "2 16G A4000".
_COUNT_MEM = r"\d{1,3}\s*(?:g|gb|gib)\s*(?:显存)?\s*(?:的)?\s*"
_COUNT_SIZE = re.compile(r"(\d{1,3})\s*(?:g|gb|gib)(?![A-Za-z])", re.I)
# "2 A100 nodes", "two 80G A800 nodes" (OpenRLHF #332): a count of machines named by their card (_NODES reads it).
_NODE_WORD = r"(?:nodes?|servers?)\b"
_NODES_NEXT = r"s?\s+" + _NODE_WORD
_NOT_NODES = rf"(?!{_NODES_NEXT})"
_NODES_AFTER_NAME = re.compile(_NODES_NEXT, re.I)
_GPUS = re.compile(
    # (not the number of a card's name: "昇腾910-64G 16卡" is 16 cards of the 64 GB Ascend 910)
    r"(?<![A-Za-z]-)(?<!昇腾)(?<!ascend)(?<!ascend\s)(?:(?<![=A-Za-z0-9_.:：])|(?<=[:：])(?=\S{1,3}[张块卡])|(?<=npu|gpu)(?=\d{1,2}\s*[张块卡])|(?<=[:：])(?=\d{1,3}\s*[*x×]\s*[A-Za-z])|(?<=[\dA-Za-z.])(?=[两二三四五六七八九十双]))(?:(?<!(?<![A-Za-z\d])\d[,，、])(?=\d)|(?!\d))"
    + NUM
    # ("`2` GPUs for training": the count in backticks; "4张24GB显存的4090"; "xx.py两张卡": a Chinese count glued to a name)
    + r"(?![\d.])(?:(?<=`\d)`|(?<=`\d\d)`)?"
    # ("64(8*8) 32GB V100" (Megatron-DeepSpeed #199): the count, then how it splits into nodes in brackets)
    + r"(?:\s*[(（]\s*\d{1,3}\s*[*x×]\s*\d{1,3}\s*[)）])?"
    + r"[ \u3000]*(?:张|块儿?|个|x|×|\*|-)?[ \u3000]*"
    # the noun: "卡", "GPUs", a GPU's name with its vendor words ("8 NVIDIA RTX A6000 GPUs", "8 A-100"); after a card's
    # size any model-like word ("5个24G的P4090": the size makes it a card)
    # ("8 nvidia GPUs with 40GB memory each": vendor words before the noun; "两个16G显存": cards counted by their memory)
    r"(?:(?:"
    + _COUNT_MEM
    + r")?(?:"
    + _GPU_BRAND
    + r"(?:"
    + _GPU_MODEL
    + r"\s*)?(?:卡|显卡|gpus?(?![A-Za-z])|cards?(?![A-Za-z]))|"
    + _GPU_BRAND
    + _GPU_MODEL
    + _NOT_NODES
    + r")|"
    + _COUNT_MEM
    + r"(?:[A-Za-z]{0,2}\d{2,4}[A-Za-z]{0,2}(?![A-Za-z0-9])"
    + _NOT_NODES
    + r"|(?<=显存)))",
    re.I,
)
_EN_NUM = {
    "two": 2,
    "three": 3,
    "four": 4,
    "six": 6,
    "eight": 8,
    "sixteen": 16,
    "dual": 2,
    "a pair of": 2,
    "twin": 2,
    "quad": 4,
}
_GPUS_EN = re.compile(
    r"\b(two|three|four|six|eight|sixteen|dual|a pair of|twin|quad)\s+(?:[\w-]+\s+)?(?:gpus?|npus?|cards?|"
    r"(?:a100s?|h100s?|v100s?|3090s?|4090s?|a800s?)" + _NOT_NODES + r")\b",
    re.I,
)
# TRL GRPO: "The global train batch size (7 x 1) must be evenly divisible by ..." (processes x per-device batch).
_TRL_GLOBAL = re.compile(r"global (?:train|eval) batch size \((\d+) x (\d+)\)", re.I)
#: `WORLD_SIZE=1 CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun --nproc_per_node=4 …`: the environment a launch command sets
#: before torchrun is overwritten by torchrun's own count (it exports WORLD_SIZE = nnodes × nproc_per_node to each
#: process), so the run has 4 processes (alpaca-lora #332). Matched right after the key.
_LAUNCHER_AFTER = r"\s*[=:]\s*\d+\s[^\n]*?(?:torchrun|torch\.distributed\.(?:run|launch)|nproc[-_]per[-_]node)"
_LAUNCHER_SETS_WORLD = re.compile(_LAUNCHER_AFTER, re.I)
_GPUS_WORD = re.compile(
    # (not a factor of a product, "micro*GA*num_gpus = 128", nor a phrase's count, "8 GPUs = 491,520"; nor the
    # environment a launch command sets before its launcher, _LAUNCHER_AFTER)
    r"(?<![\w)][*×])(?<![\w)]\s[*×])(?:world_size(?!"
    + _LAUNCHER_AFTER
    + r")|nproc[-_]per[-_]node|num_gpus|num_processes|--gpus|(?<![A-Za-z_])(?<!\d\s)gpus(?=\s*=))"
    + SEP
    # (not the first id of a device list, PaddlePaddle's `--gpus=0,1`: _GPU_IDS_FLAG counts it)
    + r"(\d+)(?!\s*,\s*\d{1,2}(?![\d.]))",
    re.I,
)
_NODES = re.compile(
    # "2 nodes", "4xnode", "a 4-node cluster", "2台机器" (not "a 49GB*4 machine": four cards in one machine)
    r"(?<![A-Za-z0-9.])(?<!g[*x×])(?<!gb[*x×])(?<!gb\s[*x×])(?<!gb[*x×]\s)(?<!gb\s[*x×]\s)("
    + NUM[1:-1]
    + r"|(?i:two|three|four|six|eight|sixteen)(?=\s+(?:[\w-]+\s+){0,2}(?:nodes?|machines?|servers?)\b))"
    # ("on 8-gpu machine", "an 8 GPU node": one machine's GPUs; "2 GPU nodes" counts nodes)
    + r"(?![-\s]*(?i:gpu)\s+(?i:machine|node|server)\b(?!s))"
    + r"\s*(?:个|台|[x×-]\s*)?\s*(?:(?i:computational|compute|physical|worker|training|gpu|separate)\s+)?"
    # the GPU each node holds, between the count and the word: "two 80G A800 nodes" (OpenRLHF #332)
    + r"(?:(?:\d{2,3}\s*gb?[ \t]+)?(?:nvidia[ \t]+)?[ahlvt]\d{2,3}[a-z]?(?:-\d{2,3}\s*gb?)?[ \t]+(?="
    + _NODE_WORD
    + r"))?"
    + r"(?:nodes?\b|machines?\b(?!\s+learning)|servers?\b|[节结]点|机器|台机|(?<=台)\s*(?:主机|服务器)|"
    + r"机(?=\s*\d|\s*[一两二三四五六七八]))"
    # "768 nodes per layer": a network's units, not machines
    r"(?!\s*(?:per|in each|in every|of each|of the)\s+(?:hidden\s+)?layer)",
    re.I,
)
# "2机8卡", "2 nodes x 8 GPUs", "2x 8-GPU nodes", "2台8卡": nodes × GPUs per node.
_NODES_X_GPUS = re.compile(
    # (not the digits of a card's name: "A100 nodes with 8 GPUs")
    r"(?<![A-Za-z0-9.])"
    + NUM
    + r"\s*(?:(?:个|台)?\s*(?:nodes?|[节结]点|机器?|台机器?|machines?|服务器|主机|servers?|hosts?)|台(?=\s*\d{1,2}\s*(?:[卡张块]|[x×*]\s*[A-Za-z])))\s*"
    r"(?:[,，]\s*)?(?:x|×|\*|each with|with|of|每台|每个|每个[节结]点|每台服务器|每台机器|共计|总共|一共|共|(?:with )?(?:totally|in total))?\s*"
    + NUM
    # ("4 nodes 8xA100": the per-node count written as a product with the card's name; "2 nodes with 4x 80GB A100":
    # with the card's size before its name)
    + r"\s*(?:[x×*]\s*(?:\d{2,3}\s*G(?:i?B)?\s+)?(?=[A-Za-z]))?(?:(?:张|块)\s*(?:[A-Za-z]{1,5}\s*\d{2,4}[A-Za-z]{0,3}\s*)?(?:卡|显卡)?|卡|"
    r"(?:[A-Za-z]{1,6}[-\s]?\d{2,4}[A-Za-z]{0,3}s?\s*)?(?:gpus?|cards?)|[ahv]100s?|[ah]800s?|h20s?|h200s?|[34]090s?)|"
    + r"(\d+)\s*[x×*]\s*(\d+)[- ]?(?:gpu|card)s?\s*(?:nodes?|machines?|[节结]点)|"
    # "4台A800*8的机器", "2台 H100x8": nodes, then the GPU times its count per node
    + r"(\d{1,3})\s*台\s*(?:[A-Za-z]{1,5}\s*\d{2,4}[A-Za-z]{0,3})\s*[*x×]\s*(\d{1,2})(?![\d.])|"
    # "2台2*80G的A800": nodes, then the GPUs per node times their size (LLaMA-Factory #1551)
    + r"(\d{1,3})\s*台\s*(\d{1,2})\s*[*x×]\s*\d{2,3}\s*G(?:i?B)?(?![A-Za-z])",
    re.I,
)
# A GPU count said to be per node: "每台机器都是8卡", "每个节点8张", "8 GPUs per node", "each node has 8 GPUs".
_PER_NODE_COUNT = re.compile(
    r"每(?:一)?(?:台|个)?(?:机器|[节结]点|服务器|主机|台|机)\s*(?:上)?\s*(?:都)?(?:是|有|为)?\s*(\d+)\s*(?:张|块)?\s*(?:[A-Za-z]?\d{0,4}\s*)?(?:卡|显卡|gpus?)|"
    r"(\d+)\s*(?:x\s*)?(?:[A-Za-z]+\d*\s+)?(?:gpus?|cards?)\s*(?:per|each|on each|in each)\s*(?:node|machine|server|host)|"
    # "4server(8gpu/server)" (RepVGG #42)
    r"(\d+)\s*(?:gpus?|cards?|卡)\s*/\s*(?:node|machine|server|host|台|机)|"
    r"each (?:node|machine|server|host)s? (?:has|have|with|contains?) (\d+)|"
    # "two nodes: node-A and node-B, each has 4gpus" (discuss.pytorch #72769): "each has" after the nodes are named
    r"\bnodes?\b[^.\n]{0,60}?,\s*each (?:one )?(?:has|have|with) (\d+)\s*(?:x\s*)?(?:[A-Za-z]+\d*\s+)?(?:gpus?|cards?)|"
    # "两个节点，一个节点4 GPU": a count for one node beside a node count
    r"(?:一个|单个)(?:[节结]点|机器|服务器)\s*(?:上)?\s*(?:有|是)?\s*(\d+)\s*(?:张|块)?\s*(?:[A-Za-z]?\d{0,4}\s*)?(?:卡|显卡|gpus?)|"
    # "two nodes with 8 GPUs each", "two machines x 8 H100"
    r"(\d+)\s*(?:[A-Za-z]+\d*\s+)?(?:gpus?|cards?)\s+each\b|(?:nodes?|machines?|servers?)\s*[x×*]\s*(\d+)|"
    # "4 nodes, each 4 A100 gpu", "2 machines, each with 8 GPUs"
    # ("two machines, each with 8x H100": the card's name in place of the noun)
    r"(?:nodes?|machines?|servers?)\s*[,，]?\s*each\s+(?:with\s+|has\s+)?(\d+)\s*(?:x\s*)?"
    r"(?:(?:[A-Za-z]+\d*\s+)?(?:gpus?|cards?)|" + _GPU_BRAND + _GPU_MODEL + ")",
    re.I,
)


def _stated_per_node(text: str) -> int | None:
    """The GPU count the text says one node has (:data:`_PER_NODE_COUNT`), or None."""
    m = _PER_NODE_COUNT.search(text)
    return _num(next(g for g in m.groups() if g)) if m else None


# Words that make the second number of "N nodes … M GPUs" a per-node count.
_PER_NODE_MARK = re.compile(r"[x×*]|each|with|每", re.I)
# Words that make it the total: "4机共32张", "4 nodes with totally 32 gpus".
_TOTAL_MARK = re.compile(r"共|total", re.I)
_ZERO = re.compile(
    # "zero stage = 3", "ZeRO stage: 2" as well as "zero3", "zero-stage-2"
    r"zero[-_ ]?(?:stage)?(?:\s*(?:==?|:|：|is)\s*|[-_ ]?)([0-3])(?![\dA-Za-z])|"
    # ("qwen_lora_stage1", "campo_7b_stage1.sh", XMem's `--stage 2`: a training stage, not ZeRO's)
    r"(?:(?<![A-Za-z0-9_-])|(?<=zero[-_])|(?<=deepspeed[-_])|(?<=ds[-_])|(?<=config[-_])|(?<=optimizer_))"
    r"stage[-_ ]?([0-3])(?![\dA-Za-z])|"
    r"(?<![A-Za-z0-9])(?:ds[-_]?)?z([0-3])(?![\dA-Za-z])|(?<![A-Za-z0-9])ds[-_]?([0-3])(?![\dA-Za-z])",
    re.I,
)
#: A ZeRO stage as people write it ("zero2", "ZeRO stage: 3", "ds_z3", a bare "stage 2").
ZERO_MENTION = _ZERO
# Between two stages a list names: "zero1 zero2 zero 3 out of memory" (axolotl #2217), "zero2/3", "ZeRO-2 和 ZeRO-3".
_STAGE_LIST_SEP = re.compile(r"(?:\s*(?:[,，、/&|]|\band\b|\bor\b|和|或者?|以及|还是)\s*|\s+)$", re.I)


# What shows a message is about DeepSpeed's stages at all, so that a bare "stage 3" is ZeRO's.
_ZERO_CONTEXT = re.compile(r"deep\s?speed|\bzero|ds_config|ds[-_ ]?z[0-3]|offload", re.I)
# A stage of a training recipe: "stage3 training", "stage 2 pretraining", "stage1 SFT脚本", "stage_2_full_….sh".
_TRAINING_STAGE_AFTER = re.compile(
    r"[\s_-]*(?:(?:MIM[-\w]*\s+)?(?:training|train\b|pre-?train|fine-?tun|sft\b|align|full_|lora_|脚本|训练|预训练|微调))",
    re.I,
)


def training_stage(text: str, m: re.Match[str]) -> bool:
    """A bare "stage N" (no "ZeRO" in it) that names a step of a training recipe, not one of DeepSpeed's: the words
    after it say so ("Largest batch size for stage3 training", MIM-Refiner #11), or they say so of another bare stage
    in a message that never speaks of DeepSpeed ("… the default value for the batch size in stage 3 is 1024"). With
    neither, "双卡40g stage2 就没有问题" (Baichuan-7B #92) is ZeRO's."""
    if m.group(2) is None:
        return False
    if _TRAINING_STAGE_AFTER.match(text, m.end()):
        return True
    return not _ZERO_CONTEXT.search(text) and any(
        z.group(2) is not None and _TRAINING_STAGE_AFTER.match(text, z.end()) for z in _ZERO.finditer(text)
    )


def _in_stage_list(text: str, m: re.Match[str]) -> bool:
    """Whether a ZeRO mention is one of several stages listed together: the list names no one stage of a run."""
    nxt = _ZERO.search(text, m.end(), m.end() + 16)
    if nxt and _STAGE_LIST_SEP.match(text[m.end() : nxt.start()]) and nxt.groups() != m.groups():
        return True
    before = text[max(0, m.start() - 16) : m.start()]
    prev = list(_ZERO.finditer(before))
    return bool(prev and _STAGE_LIST_SEP.match(before[prev[-1].end() :]) and prev[-1].groups() != m.groups())


# A DeepSpeed config's own key, pasted in a sentence: `"zero_optimization": {"stage": 3, ...`.
_ZERO_KEY = re.compile(
    r"[\"']stage[\"']\s*:\s*([0-3])(?!\d)|zero_stage\s*[:=]\s*([0-3])(?!\d)|"
    # the YAML block, unquoted: `zero_optimization:\n  stage: 3`
    r"zero_optimization[\"']?\s*:\s*\{?\s*[\"']?stage[\"']?\s*:\s*([0-3])(?!\d)",
    re.I,
)
_OFFLOAD = re.compile(r"offload|卸载", re.I)
_OFFLOAD_OFF = re.compile(
    # the device inline (`{device: none}`) or on the next, indented line of a YAML block (`offload_optimizer:\n  device: none`)
    # (Lightning's `DeepSpeedStrategy(offload_parameters=False)`, OpenRLHF's `adam_offload: bool = False`)
    r"[\"']?(?:offload_(?:optimizer|param)(?:eters)?|adam_offload)(?:_device)?[\"']?\s*(?::\s*bool\s*)?[:=]\s*"
    r"(?:(?:\{\s*|\n[ \t]+)[\"']?device[\"']?\s*:\s*)?"
    r"[\"']?(?:none|false|null|no)\b",
    re.I,
)
# A key that names the parameters' offload alone (`"offload_param": {"device": "cpu"}`, `offload_param_device: cpu`):
# the parameters move, which says nothing of the optimizer states.
_OFFLOAD_PARAM_KEY = re.compile(r"offload_param", re.I)
# A generic switch turned off (`cpu_offload: false`, `offload = None`); the two DeepSpeed keys are read one by one.
# (ColossalAI's fractions printed in its args, `offload_optim_frac=0.0`: nothing offloaded)
_OFFLOAD_SWITCH_OFF = re.compile(
    r"offload(?!_(?:optimizer|param))\w*\s*[:=]\s*[\"']?(?:none|false|null|no|0(?:\.0+)?(?![\d.]))\b", re.I
)
# "offloading to CPU is impossible due to low RAM" (DeepSpeed #2996): offload ruled out, as "no offload" is.
_OFFLOAD_RULED_OUT = re.compile(
    r"offload(?:ing)?(?:\s+(?:to|on)\s+(?:the\s+)?(?:cpu|nvme|ram|host))?\s+(?:is|was|would be|isn't|is not)\s+"
    r"(?:impossible|not possible|not an option|out of the question|not feasible|infeasible)",
    re.I,
)
# "ds_z3_offload.json" / "ZeRO-3 offload": LLaMA-Factory's and DeepSpeed's stage-3 offload configs move parameters too.
_OFFLOAD_PARAM = re.compile(
    r"offload[-_ ]?param|param(?:eter)?s?[-_ ]?offload|参数卸载|卸载参数|(?:(?<![A-Za-z])z|zero)[-_ ]?(?:stage[-_ ]?)?3[-_ ]?offload",
    re.I,
)
_SEQ = re.compile(
    r"(?<![A-Za-z_])(?:seq(?:uence)?[-_ ]?len(?:gth)?|(?<![A-Za-z0-9_])seq(?![A-Za-z0-9_])|max_seq_len(?:gth)?|max[-_ ]?seq(?:uence)?[-_ ]len(?:gth)?|cutoff[-_ ]?len(?:gth)?|max_length|model_max_length|"
    r"max[-_ ]?len(?:gth)?(?![A-Za-z])|max[-_ ]?seq(?:uence)?[-_ ]?size|"  # "训练maxlen为32768", "max length=1024"
    r"max[-_ ]?tokens?[-_ ]?len(?:gth)?|"  # "max_token_len=8000" (GLM-4 #16)
    r"context(?:\s*(?:len(?:gth)?|size))?|序列长度|上下文(?:长度)?|文本长度|长度|ctx|"
    # run_clm's `--block_size 512`, "block开到512": the training sequence length
    r"block[-_ ]?size|block(?=\s*(?:开到|开成|设为|设置为|设成|调到|改成|改为|=|:|：)))\s*(?:已经?|都|也)?"
    # ("For sequence length > 8192 … OOM", "max_length超过4096就OOM": the length from which it fails)
    + r"(?:\s*(?:>=?|≥|超过|大于|\bover\b|\babove\b)\s*|"
    + SEP
    + ")"
    # "the context length is large(32k)": the value in brackets after how the user calls it
    + r"(?:(?:very\s+|quite\s+|so\s+)?(?:large|long|big|huge|很长|较长|比较长)\s*[(（]\s*)?"
    + r"(\d+(?:\.\d+)?)\s*(k)?",
    re.I,
)
_SEQ_TOKENS = re.compile(
    # (not another setting's value: "bs=1 context len=2k")
    # ("只能微调2k上文": 上文, the preceding text a model sees, is its context)
    # ("用4096的max_length", "with 4096 max length": the value before the setting's name)
    # (not a rate: "3300token/s/gpu" (Baichuan-7B #75), "5000 tokens per second", "tokens/step")
    r"(?<![=:：\d.])(\d+(?:\.\d+)?)\s*(k)?\+?\s*(?:(?:tokens|token(?!s))(?!\s*(?:/|per\s+(?:sec|second|step|gpu|iter)|每秒|每步))|"
    r"(?:的)?(?:序列|文本|上下文|token\s*)?长度|上下文|上文|context|ctx|"
    r"(?:的\s*)?(?:max[-_ ]?(?:seq(?:uence)?[-_ ]?)?len(?:gth)?|seq(?:uence)?[-_ ]?len(?:gth)?|cutoff[-_ ]?len(?:gth)?|model_max_length)"
    r"(?![A-Za-z_]))",
    re.I,
)
# What some of the data is, not a setting: mlx-examples' "[WARNING] Some sequences are longer than 2048 tokens"
# (the user trained at 8K+), "部分样本超过 4096 个 token".
_DATA_LONGER_THAN = re.compile(
    r"(?:\b(?:some|many|several|a few|most|\d+)\s+(?:of\s+(?:the|my)\s+)?(?:sequences|samples|examples|texts|inputs|"
    r"documents|records)\s+(?:are|were|is|was)\s+(?:longer|more)\s+than|(?:部分|有些|很多|一些)(?:样本|数据|序列|文本)"
    r"(?:长度)?(?:超过|大于|长于))\s*$",
    re.I,
)
# "increase the max_seq_length from 4096 to 8192", "cutoff_len 从 2048 改到 4096": the later length is the run's.
_SEQ_CHANGE = re.compile(
    r"(?<![A-Za-z_])(?:max_seq(?:uence)?_len(?:gth)?|seq(?:uence)?[-_ ]?len(?:gth)?|cutoff[-_ ]?len(?:gth)?|max_length|model_max_length|"
    r"context(?:\s*length)?|序列长度|上下文(?:长度)?)\D{0,12}?(?:从|\bfrom)\s*\d+(?:\.\d+)?\s*k?\s*"
    r"(?:->|→|到|改到|改成|增加到|加到|\bto)\s*(\d+(?:\.\d+)?)\s*(k)?(?![A-Za-z0-9])",
    re.I,
)
# "extend the sequence length from 4k to even longer", "序列长度从 4k 加到更长": the length that runs is the one named.
_SEQ_FROM_OPEN = re.compile(
    r"(?<![A-Za-z_])(?:max_seq(?:uence)?_len(?:gth)?|seq(?:uence)?[-_ ]?len(?:gth)?|cutoff[-_ ]?len(?:gth)?|max_length|"
    r"context(?:\s*length)?|序列长度|上下文(?:长度)?)\D{0,12}?(?:从|\bfrom)\s*(\d+(?:\.\d+)?)\s*(k)?\s*"
    r"(?:到|加到|增加到|\bto)\s*(?:even\s+|much\s+)?(?:longer|larger|more|bigger|更长|更大|更多)",
    re.I,
)
# ("我设置的r=2": Chinese glued before the key, so no \b)
_RANK = re.compile(
    # (not a model name's "-R1": "deepseek-r1-32b", "DeepSeek-R1-Distill-Qwen-7B" are no LoRA rank 1)
    r"(?:lora[-_ ]?rank|lora[-_ ]?r|(?<![A-Za-z0-9_-])rank|(?<![A-Za-z0-9_-])r)\s*(?:=|:|：|为)?\s*(\d+)(?![\w-]|\.\d)",
    re.I,
)


def lora_rank_in(text: str) -> int | None:
    """The LoRA rank ``text`` writes ("rank=16", "lora_r: 8"), read without asking whether it names the method."""
    return int(m.group(1)) if (m := _RANK.search(text)) else None


_CKPT = re.compile(
    r"gradient[-_ ]?checkpoint(?:ing)?\b|gradient[-_ ]?checkpoin(?:ing|tng|itng)\b|activation[-_ ]?checkpointing|checkpointing|梯度检查点|重计算|"
    # (not TRL's "precompute_ref_log_probs")
    r"(?<![A-Za-z])recompute|(?<![A-Za-z])recomputation",
    re.I,
)
_FLASH = re.compile(r"flash[-_ ]?att(?:ention|n)?(?:[-_ ]?2)?|\bfa2\b|\bsdpa\b", re.I)
_EAGER = re.compile(r"\beager\b", re.I)
# The value after the name turns it off: "flash_attn: disabled" (LLaMA-Factory >= 0.8.3), "flash_attn: off"
# (0.7.0-0.8.2), "use_flash_attn=False", "flash_attention disabled".
# So does a package that is not installed: "flash_att 暂时还未安装成功", "flash-attn is not installed".
_FLASH_OFF = re.compile(
    r"[`'\"]?\s*(?:[:=]\s*|\s+(?:is\s+|was\s+)?)[`'\"]?(?:false|off|disabled?|none|no)\b"
    r"|[^,，。.;；\n]{0,8}?(?:(?:未|没有?)(?:能)?(?:安装|装)|安装(?:失败|不上|不了)|装不上|"
    r"(?:is|was)?\s*(?:not|n't)\s+(?:been\s+)?installed|fail(?:s|ed)?\s+to\s+(?:install|build)|can(?:no|')?t\s+(?:install|build))",
    re.I,
)
_TP = re.compile(
    # ("模型并行度为8" (CPM-2-Finetune #23): Megatron's model_parallel_size, the tensor-parallel degree)
    r"(?:tensor[-_ ]?(?:model[-_ ]?)?parallel(?:ism)?(?:[-_ ]?size)?|张量并行|模型并行(?:度|数)?|(?<![A-Za-z0-9_])tp)"
    + SEP
    + r"(\d+)",
    re.I,
)
# "--sequence_parallel 4" (ms-swift), "ulysses_sequence_parallel_size: 2" (verl), "sequence_parallel_size: 4"
# (LLaMA-Factory, 360-LLaMA-Factory), "context_parallel_size 2" (Megatron, accelerate): GPUs that share one sequence,
# so one data-parallel replica. Megatron's boolean "--sequence-parallel" (a TP memory optimisation) has no number.
_SP = re.compile(
    r"(?:(?:ulysses[-_ ]?)?sequence[-_ ]?parallel(?:ism)?(?:[-_ ]?(?:size|degree))?|context[-_ ]?parallel(?:[-_ ]?size)?|"
    r"序列并行|上下文并行|\bsp_size|\bcp_size)" + SEP + r"(\d+)",
    re.I,
)
_PP = re.compile(
    r"(?:pipeline[-_ ]?parallel(?:ism)?(?:[-_ ]?size)?|流水线并行|(?<![A-Za-z0-9_])pp)" + SEP + r"(\d+)", re.I
)


# "怎样使用 DeepSpeed 的 offload 功能", "how do I enable CPU offload": a feature asked how to turn on is not on.
_ASKED_HOW_TO = re.compile(
    r"(?:怎样|怎么|如何|how\s+(?:do\s+I|can\s+I|should\s+I|to|would\s+I))\s*"
    r"(?:使用|开启|启用|打开|配置|设置|加上|用|use|enable|turn\s+on|set\s+up|configure|add|activate)[^。.?？!！\n]{0,24}$|"
    # "Is there way to offload training memory to DRAM?", "how can I offload …": the offload asked for, not on
    r"(?:is\s+there\s+(?:a\s+|any\s+)?ways?\s+to|how\s+(?:do\s+I|can\s+I|to)|can\s+I)\s*$",
    re.I,
)
# "without any offloading", "no CPU offload", "w/o gradient checkpointing": a negation a few words back.
# ("I didn't use ```use-flash-attn```": the flag named in backticks after "n't use"; "I didn't install Flash
# Attention 2", litgpt #282)
_NEG_PHRASE = re.compile(
    r"(?:without|\bw/o|\bno|not using|not use|n[o']t\s+(?:use|using|enable|turn on|install(?:ed)?))\s+"
    r"(?:any\s+|using\s+|the\s+|cpu\s+|`{1,3}\s*|-{1,2}|use[-_])*$",
    re.I,
)


def _negated(text: str, start: int) -> bool:
    """Whether a negation comes right before ``start`` on its line (a config's previous line, "tf32: false", negates
    nothing of the next key: axolotl #2217's `gradient_checkpointing: true`)."""
    line = text.rfind("\n", 0, start) + 1
    window = text[max(line, start - 8) : start]
    return bool(_NEG.search(window) or _NEG_PHRASE.search(text[max(line, start - 24) : start]))


# The size inside a model name glued to it: "Qwen7B", "Baichuan13b", "yi34B", "vicuna_13b".
_NAME_SIZE = re.compile(
    r"(?<![0-9.])(\d+(?:\.\d+)?)\s?[bB]$|(?<![0-9.])(\d+(?:\.\d+)?)\s?[bB](?=[-_ ](?:chat|instruct|base|it|hf))", re.I
)
# a size in millions ending a model's name: "BLOOM 560M", "bloom-560m", "pythia-410m-deduped" is no size (not at the end)
_NAME_SIZE_M = re.compile(r"(?<![0-9.])(\d+(?:\.\d+)?)\s?[mM]$")


# A size word or version after a model's name, set apart by a space: "Phi-3 mini", "bert large",
# "MiniCPM-Llama3-V 2.5" (a preset must confirm it).
_SIZE_WORD_AFTER = re.compile(
    r"[ \t]+(mini|small|medium|large|base|tiny|xl|xxl|\d{1,2}(?:[._]\d)?)(?![A-Za-z0-9])", re.I
)


#: A checkpoint's training progress after the name: "TinyLlama-1.1B-step-50K-105b" (105B tokens seen, axolotl #1191),
#: "TinyLlama-1.1B-intermediate-step-480k-1T".
_CHECKPOINT_TAIL = re.compile(r"[-_](?:intermediate|step)[-_].*$", re.I)


def _name_core(name: str) -> str:
    """A model's name without its checkpoint's training progress (which counts tokens, not parameters)."""
    # ("Qwen-1_8B": Qwen's own spelling of 1.8B, LLaMA-Factory #2064)
    return re.sub(r"(?<![0-9])(\d)_(\d)(?=[bB](?![A-Za-z]))", r"\1.\2", _CHECKPOINT_TAIL.sub("", name))


def _name_size(name: str) -> float | None:
    """The parameter count a model's name carries ("Qwen-14B-Chat" → 14e9, "BLOOM 560M" → 560e6), else None."""
    name = _name_core(name)
    if size := _NAME_SIZE.search(name):
        if _active_count_at(name, size.start()):
            return None  # "Qwen3-VL-30B-A3B-Instruct": A3B is a mixture of experts' active count, not its size
        return float(next(g for g in size.groups() if g is not None)) * 1e9
    if size := _NAME_SIZE_M.search(name):
        return float(size.group(1)) * 1e6
    return None


def _active_count_at(name: str, start: int) -> bool:
    """Whether the size at ``start`` is a mixture of experts' active count ("…-30B-A3B": the "3B" after "-A")."""
    return bool(re.search(r"[-_ ]a$", name[:start], re.I))


def _first_size_in(name: str) -> float | None:
    """The first size in billions inside a name ("Qwen3-Omni-30B-A3B-Instruct" → 30e9): a mixture of experts'
    active count ("A3B") is not its size."""
    for m in re.finditer(r"(?<![0-9.])(\d+(?:\.\d+)?)[bB](?![A-Za-z])", name):
        if not _active_count_at(name, m.start()):
            return float(m.group(1)) * 1e9
    return None


# A file or script name ("examples/train_qlora/llama3_lora_sft_otfq.yaml", "ds_z3_offload.json") names no model.
_MODEL_FLAG = re.compile(
    r"--(?:base_model|model_name_or_path|pretrained_model_name_or_path|model_name|model_id|model_path|pretrain)[\s=]+[\"']?"
    r"([\w./-]{2,120})[\"']?",
    re.I,
)
# and its YAML / config form ("dataset: identity,alpaca_gpt4_en" names no alpaca model)
_DATA_FLAG = re.compile(
    r"(?:--|^[ \t]*)(?:data_path|dataset|dataset_name|train_file|data_dir)(?:[ \t]*[:=][ \t]*|[ \t]+)[\"']?[\w./,-]{1,200}[\"']?",
    re.I | re.M,
)
# and the other models an RL / distillation run loads (OpenRLHF's `--reward_pretrain`, TRL's `reward_model_path`,
# `--ref_model`, a teacher): "我现在使用16B模型训练 … --reward_pretrain …/Meta-Llama-3-8B-Instruct" trains the 16B one
_OTHER_MODEL_FLAG = re.compile(
    r"(?:--|^[ \t]*)(?:reward|critic|ref|reference|teacher|judge|rm|value)_?(?:pretrain|model|model_path|"
    r"model_name_or_path|path)(?:[ \t]*[:=][ \t]*|[ \t]+)[\"']?[\w./-]{1,200}[\"']?",
    re.I | re.M,
)
# and their prose form: "(using bloom-1b7-rm as reward model)" beside "a 3b llama model" (ChatBLOOM #4), "用 xxx 作为
# 奖励模型"
_OTHER_MODEL_PROSE = re.compile(
    r"[\w./-]{2,120}\s+(?:as\s+(?:the\s+|a\s+|our\s+)?|作为\s*|当作?\s*)"
    r"(?:reward|critic|reference|ref|teacher|judge|value|奖励|评论家|参考|教师|价值)\s*(?:models?\b|模型)",
    re.I,
)
# (Chinese glued after the extension ends the name: "llama3_lora_sft.yaml看起来是做sft的", LLaMA-Factory #3757)
# (from a run's start only, as _LORA_OFF: the same matches, without rescanning a long run from each of its characters)
_FILE_NAME = re.compile(r"(?<![\w./-])[\w./-]+\.(?:ya?ml|json|py|sh|txt|cfg|toml)(?![A-Za-z0-9_])")
# "我尝试将7B的模型压缩到5.7B", "pruned the 7B model to 5.7B": the size after the change.
_SIZE_CHANGE = re.compile(
    r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?\s*[bB](?![a-zA-Z0-9])[^,，。.;；\n\d]{0,8}?"
    r"(?:压缩到|压缩成|裁剪到|剪枝到|蒸馏到|减到|变成|(?:pruned|compressed|distilled|reduced)?\s*to|->|→)\s*"
    r"(\d+(?:\.\d+)?)\s*[bB](?![a-zA-Z0-9])",
    re.I,
)


# The Hugging Face cache's layout, ".../models--Qwen--Qwen2.5-VL-3B-Instruct/snapshots/<commit>": the model is the
# repository named in the folder, not the commit hash (whose "1b98…" is no size); a path's trailing
# "snapshots/<hash>" or "checkpoint-500" folders name no model either.
_HF_CACHE_DIR = re.compile(r"models--[\w.-]+?--([\w.-]+)")
_NOT_A_NAME_DIR = re.compile(r"[0-9a-f]{7,64}|snapshots|checkpoint-\d+|main", re.I)


def _path_model_name(path: str) -> str:
    """The model a ``--model_name_or_path`` value names: its last folder that is not a hash or a checkpoint."""
    if m := _HF_CACHE_DIR.search(path):
        return m.group(1)
    segments = [p for p in path.rstrip("/").split("/") if p]
    while len(segments) > 1 and _NOT_A_NAME_DIR.fullmatch(segments[-1]):
        segments.pop()
    return segments[-1] if segments else path


# A model's hub id under an organisation that publishes models ("bigscience/mt0-xxl"); data sets some of them publish
# too ("HuggingFaceH4/ultrachat_200k", "allenai/c4") are left out by their names.
_HUB_MODEL = re.compile(
    r"(?<![\w./-])(meta-llama|mistralai|Qwen|bigscience|EleutherAI|tiiuae|microsoft|google|google-t5|google-bert|"
    r"facebook|FacebookAI|THUDM|zai-org|baichuan-inc|01-ai|deepseek-ai|internlm|openchat|HuggingFaceH4|"
    r"HuggingFaceTB|TinyLlama|stabilityai|CompVis|runwayml|openai|allenai|mosaicml|bigcode|NousResearch|lmsys|"
    r"huggyllama|decapoda-research|openlm-research|togethercomputer|Salesforce|nvidia|OpenGVLab|llava-hf|liuhaotian|"
    r"unsloth|TheBloke|openbmb|BAAI|intfloat|hfl|IDEA-CCNL|fnlp|Skywork|xverse|moonshotai|ibm-granite|"
    r"OpenAssistant|WizardLM|codellama|upstage|cerebras|databricks|state-spaces|tencent|apple)/"
    r"(?!\S*(?:data|ultrachat|ultrafeedback|\bc4\b|gsm8k|mmlu|sharegpt|helpsteer|orca|wiki|pile\b|[-_]\d+k\b))"
    r"([A-Za-z0-9][\w.-]{1,95})(?![\w/-])",
    re.I,
)


def _model(text: str, slots: Slots) -> None:
    # (another model of the run, told in prose, is neither its name nor its size)
    text = _OTHER_MODEL_PROSE.sub(lambda f: " " * len(f.group(0)), text)
    named = _FILE_NAME.sub(lambda f: " " * len(f.group(0)), text)
    # a data set's id ("--data_path 'yahma/alpaca-cleaned'") names no model
    named = _DATA_FLAG.sub(lambda f: " " * len(f.group(0)), named)
    named = _OTHER_MODEL_FLAG.sub(lambda f: " " * len(f.group(0)), named)
    # where the run saves ("--save_path …/checkpoint/llama3-8b-rlhf", a name copied from a recipe) names no model
    named = _OUTPUT_DIR.sub(lambda f: " " * len(f.group(0)), named)
    if flag := _MODEL_FLAG.search(named):
        # `--base_model 'mosaicml/mpt-7b-instruct'`: the launch names the model; no family word elsewhere replaces it
        name = _path_model_name(flag.group(1))
        # (OpenRLHF's `--pretrain` names a folder as often as a model: "/share/checkpoints/models/deepseek" leaves the
        # message's "16B模型" standing; only a name with its size, "Qwen2.5-3B-Instruct", is read from it)
        bare_pretrain = flag.group(0).lower().startswith("--pretrain") and _first_size_in(name) is None
        if re.search(r"[A-Za-z]{2}", name) and not name.startswith("$") and not bare_pretrain:
            slots.model_text = name[:60]
            moe = _MOE_NAME.search(name)
            if preset := preset_for_name(name) or (
                moe and preset_for_name(f"{moe.group(1)}-{moe.group(2)}x{moe.group(3)}b")
            ):
                slots.model = preset
            elif moe:
                pass  # experts x expert size is no dense size
            elif n := _name_size(name) or _first_size_in(name):
                slots.num_params = n
            return
    _model_named(named, slots)
    if slots.model is None and slots.model_text is None and (hub := _HUB_MODEL.search(named)):
        # "bigscience/mt0-xxl", "CompVis/stable-diffusion-v1-4": a hub id of a model publisher names the model, though
        # its family is none of the above (its size only when the name carries one)
        slots.model_text = hub.group(2)[:60]
        if preset := preset_for_name(hub.group(2)):
            slots.model = preset
        else:
            slots.num_params = _name_size(hub.group(2)) or slots.num_params
        return
    if slots.model is None and slots.num_params is None and slots.model_text is None:
        _model_named(_DATA_FLAG.sub(lambda f: " " * len(f.group(0)), text), slots)  # only a file name names it
        # ("internvl2_2b_finetune.sh"): better than none
        slots._model_from_file_name = slots.model_text is not None or slots.model is not None
    elif slots.model is None and slots.num_params is None:
        sized = Slots()
        _model_named(text, sized)  # "gpt-neox" in the prose, its size only in the config it links ("configs/20B.yml")
        if sized.model is None and sized.num_params:
            slots.num_params = sized.num_params
    if (m := _SIZE_CHANGE.search(named)) and slots.model is None:
        slots.num_params = float(m.group(1)) * 1e9
    if slots.model_text is None and slots.model is None and (m := _FROM_PRETRAINED.search(text)):
        name = m.group(1).rstrip("/").rsplit("/", 1)[-1]
        if re.search(r"[A-Za-z]{2}", name):
            slots.model_text = name[:60]
            if preset := preset_for_name(name):
                slots.model, slots.num_params = preset, None


# A model id as people paste it, beyond the families above: a hyphenated name with a size segment ("WizardLM-30B-fp16",
# "Chinese-Alpaca-2-7B", "Nous-Hermes-13b").
# Chinese glued to either side ("运行SUS-Chat-34B，", "VisualGLM-6B的finetune") ends the id as a space would.
_SIZED_NAME = re.compile(
    r"(?<![A-Za-z0-9_./-])([A-Za-z][A-Za-z0-9.]*(?:[-_][A-Za-z0-9.]+)*[-_]\d+(?:\.\d+)?[bB](?:[-_][A-Za-z0-9.]+)*)"
    r"(?![A-Za-z0-9_/-])"
)
_NAME_CHARS = re.compile(r"[A-Za-z0-9._-]*")
# The segments a model id adds around its family word: "Chinese-" before "Alpaca-2-7B", "-V2.5" after "miniCPM".
_NAME_LEFT = re.compile(r"(?<![A-Za-z0-9._/-])(?:[A-Za-z0-9]+[-_])+$")
_NAME_RIGHT = re.compile(r"(?:[-_][A-Za-z0-9]+|\.\d+[A-Za-z]?(?![A-Za-z]))*")


def _run_length(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Length of ``pattern``'s match at ``pos`` (the patterns above match the empty string, so always one)."""
    m = pattern.match(text, pos)
    return len(m.group(0)) if m else 0


# The size a checkpoint names in words after its family: "RoBERTa-large", "bert-base", "t5-small", "whisper-medium".
_SIZE_WORDS = re.compile(r"(?:[-_](?:large|base|small|tiny|medium|mini|xl|xxl|huge|giant))+", re.I)
# A checkpoint loaded by its id or folder in pasted code: `SwinModel.from_pretrained('./swin-large-patch4-…')`.
_FROM_PRETRAINED = re.compile(
    r"from_pretrained\(\s*(?:pretrained_model_name_or_path\s*=\s*)?[rf]?[\"']([^\"'\s]{2,120})[\"']"
)


def _whole_name(text: str, m: re.Match[str]) -> str:
    """The whole model id a family match sits in: "Chinese-Alpaca-2-7B" around "Alpaca", "miniCPM-V2.5" around
    "miniCPM" (hyphens, dots and underscores join it; a space, a slash or other punctuation ends it)."""
    start, end = m.start(1), m.end(1)
    if start > 0 and text[start - 1].isascii() and text[start - 1].isalnum():
        return m.group(1).strip()  # glued to other letters ("LlamaForCausalLM"): the family word alone
    if left := _NAME_LEFT.search(text, 0, start):
        start = left.start()
    whole = text[start : end + _run_length(_NAME_RIGHT, text, end)].strip("-_.")
    extra = whole[: m.start(1) - start] + whole[m.end(1) - start :]
    if (
        not re.search(r"\d", extra)
        and not re.search(r"\d", m.group(1))
        and not _SIZE_WORDS.fullmatch(whole[m.end(1) - start :])
    ):
        return m.group(1).strip()  # "llama_recipes", "alpaca_zh_demo": a package or data set named after the family
    if _NAME_SIZE.search(m.group(1).strip()) and not _NAME_SIZE.search(whole):
        return text[
            start:end
        ].strip()  # "qwen2.5-7b-instruct_lora_sft": the run's name after the model's; keep the size
    return whole


_MOE_NAME = re.compile(r"([A-Za-z]+)[-_ ]?(\d+)\s*x\s*(\d+(?:\.\d+)?)\s*b(?![A-Za-z])", re.I)


# "a galactica 30b model (gpt-2 like)", "a llama-style model", "(LLaMA based)": the family the model resembles, not
# the model the user trains.
_RESEMBLES = re.compile(
    r"[(（]\s*[^()（）\n]{1,30}?[-\s]?(?:like|style|based|architecture|similar)\s*[)）]|"
    r"(?<![\w-])[\w.]{2,20}-(?:like|style)(?![\w-])",
    re.I,
)


# "When i am fine tuning 7B model … I tested on LLama 2 chat 13B with …": the model of a side test told after the
# user's own run does not replace the size the run was stated with.
_OWN_BARE_SIZE = re.compile(
    r"(?:fine[- ]?tun\w*|train\w*|微调|训练)\s*(?:an?\s+|the\s+|a\s+)?(\d+(?:\.\d+)?)\s*[bB](?![A-Za-z0-9])", re.I
)
_SIDE_TEST = re.compile(
    r"(?<![A-Za-z])(?:I|we)\s+(?:also\s+)?(?:tested|tried|compared)\s+(?:it\s+)?(?:on|with)\b|"
    r"(?:我|我们)?(?:也|还)?(?:测试了|试了|对比了)",
    re.I,
)


# What a chatbot or hearsay says someone else's run needs: "问了deepseek，说单张4090D训练1.3B参数量的模型都没有问题（显存
# 占用12G）" (minimind #177: the user's model is 25M and OOMs at 22.4 GiB). Its size and memory are not the user's run.
_CHATBOTS = r"chatgpt|gpt[-\s]?\d\w*|deepseek|claude|gemini"
_HEARSAY_BEFORE = re.compile(
    r"(?:问了?\s*(?:一下\s*)?(?:" + _CHATBOTS + r"|gpt|kimi|豆包|文心一言|通义千问|ai|大模型)"
    r"[^。.;；\n]{0,8}?(?:说|回答|答)|网上(?:有人)?说|听说|据说|"
    # the author's own experiment the user asks about: "想问下您进行ResNet-50 on ImageNet的实验…当batchSize为4096时显存
    # 占用为多少呢？" (iLRG #1; the user's runs are 512 and 1024)
    r"您们?(?:在|的)?(?:进行|做|跑)了?[^。.;；\n]{0,30}?(?:实验|训练)|"
    r"\b(?:" + _CHATBOTS + r")\s+(?:says|said|told me|claims?|claimed)\b|"
    # a document's claim: "in report 1.1, it says the default config is for 80G memory usage" (Open-Sora #409)
    r"\b(?:report|paper|readme|docs?|documentation|blog|guide|tutorial|model card)\b[^。;；?？\n]{0,20}?"
    r"\b(?:says|said|claims?|claimed|states?|stated|mentions?|mentioned)\b|"
    # a document's own setting: "But in your paper, batch_size = 128, and used 4 GPU" (3DMPPE_POSENET #85)
    r"\b(?:in|from|according to)\s+(?:your|the|their|its|this|that)\s+(?:original\s+)?"
    r"(?:paper|readme|docs?|documentation|report|model card)\b|"
    # "我看到您论文中使用的显卡是Nvidia TITAN RTX 24G … 我用24G的3090复现时…" (Contrastive-Clustering #49)
    r"(?:您|你们?)的?(?:论文|文章|paper)\s*(?:中|里)?|"
    # the maintainers' hardware: "I don't have enough resource as your setting (8xA100 80G)" (mmselfsup #378)
    # (the hardware then written out; not "when I run your config on a Qwen2-7B", the user's own run)
    r"\byour\s+(?:original\s+|official\s+)?(?:settings?|setup|environment|hardware)\s*[(（:：])"
    # (the claim's sentence only: an English full stop ends it as 。 does, "… 32 V100 GPUs. I train on 4 V100s")
    # (nor once the user's own run comes back into it: "According to the README I set the batch size to 8")
    r"(?:(?!\bbut\b|\bI\b|\bmy\b|\bwe\b|但是|可是|然而|而我|我的|我用|我在|我这|我自己|[.?!]\s)[^。;；\n]){0,60}$",
    re.I,
)


# (not "请问DeepSeek-v2-Chat SFT大概需要多少资源" (ms-swift #1048): "请问" / "想问" asks the reader about the model)
_ASKED_BOT_BEFORE = re.compile(r"(?:(?<![请想])问了?|咨询了?|请教了?|\basked|\bask)\s*(?:一下|了)?\s*$", re.I)


# A sentence that opens as someone else's run or a document's claim, however long it runs before the value: "According
# to the comment at the beginning of the yaml file, the training … both succeeded on 4 GPUs (V100) with 32GB" (espnet
# #3719: the user's card is a 15 GB T4), "I see you used 4 V100 GPUs to train. I only have a single RTX 3090" (jets #5).
_CLAIM_SENTENCE_START = re.compile(
    r"\s*(?:according to\b|as (?:stated|mentioned|described|shown|reported|written) in\b|"
    r"(?:in|from) (?:your|the|their) (?:original )?(?:paper|readme|docs?|documentation|report|model card|blog)\b|"
    r"I (?:see|saw|read|noticed) (?:that )?(?:you|the authors?|the paper|your paper)\b|"
    # a shipped config's own setting: "In original COCO 1x schedule configuration, the learning rate is 0.02 for 8 GPUs
    # and 2 imgs per GPU. … I have one Titan XP GPU now." (mmdetection #4993)
    r"(?:in|for|with) (?:the |your |this |that )?(?:original|official|default|provided|released)\b[^,;。，\n]{0,40}?"
    r"\b(?:config(?:uration)?s?|schedules?|settings?|recipes?|setup)\b|"
    r"you (?:guys )?(?:used|trained|ran|mentioned|said|reported)\b|"
    r"the (?:authors?|paper) (?:used|trained|ran|says|said|mentions?|mentioned|reports?|reported)\b|"
    r"(?:论文|原文|文中|文章)(?:中|里)?(?:提到|说|写|用了|使用了?)|"
    # ("在文档中，官方给出的所使用设备…8 * Nvidia A800 80 GB" (XVERSE-7B #2): the documentation's run)
    # (not a bare "论文里": "论文里训练generator，batch size设为16，使用了8张A100 … 应该设置num gpu为8？" (CoRe #2) asks
    # about the paper's run itself; the paper's run with its verb is above)
    r"(?:在\s*)?(?:官方\s*)?(?:文档|readme|教程|wiki|官网|模型卡)\s*(?:中|里|上)|"
    r"官方(?:给出|提到|说|写|用了?|使用了?|推荐|的))",
    re.I,
)
# Words after such an opening that bring the user's own run back into the sentence ("According to the README I set …").
_OWN_RUN_AGAIN = re.compile(r"\b(?:but|however|I|my|we|our)\b|但是|可是|然而|而我|我", re.I)
_SENTENCE_END_BEFORE = re.compile(r"[。！？!?\n]|[.;](?=\s)")


def _sentence_start(text: str, pos: int) -> int | None:
    """Where the sentence holding ``pos`` begins; None when it would begin more than 300 characters before it (no
    sentence: a pasted log or config)."""
    lo = max(0, pos - 300)
    ends = list(_SENTENCE_END_BEFORE.finditer(text, lo, pos))
    if ends:
        return ends[-1].end()
    return 0 if lo == 0 else None


def _claim_sentence(text: str, start: int) -> bool:
    """Whether the sentence holding ``start`` opens as a document's or another person's run (see above) and the
    user's own run does not come back into it before ``start``."""
    begin = _sentence_start(text, start)
    if begin is None:
        return False
    m = _CLAIM_SENTENCE_START.match(text, begin)
    return m is not None and not _OWN_RUN_AGAIN.search(text, m.end(), start)


def hearsay(text: str, start: int) -> bool:
    """Whether the value at ``start`` sits in a sentence that reports what a chatbot, a document or hearsay claims."""
    return bool(_HEARSAY_BEFORE.search(text, max(0, start - 80), start)) or _claim_sentence(text, start)


_QWEN_ZH = re.compile(r"(?:通义)?千问\s*(?:(\d(?:\.\d)?)\s*[-_ ]\s*)?(\d{1,3}(?:\.\d)?)\s*[bB](?![A-Za-z0-9])")


# A script's own report of the model's size: "Model params: 6.28 B", "Total parameters = 1.3B", "模型参数量: 7.24B".
_PARAMS_REPORTED = re.compile(
    r"(?:(?:model|total|all|number of)\s*(?:params|parameters|param count)|模型参数量?)\s*[:=：]\s*"
    r"(\d+(?:\.\d+)?)\s*([BM])(?![A-Za-z])",
    re.I,
)


# GPT-2's larger sizes, which the presets lack: 774M (large) and 1.5B (XL), as the model cards give them
# (https://huggingface.co/openai-community/gpt2-large, https://huggingface.co/openai-community/gpt2-xl).
_GPT2_BIG = re.compile(r"gpt[-_ ]?2[-_ ]?(large|xl)(?![A-Za-z])", re.I)
# Whisper's sizes (no preset: an encoder-decoder speech model), as the "Available models" table of OpenAI's whisper
# README gives them (https://github.com/openai/whisper): tiny 39M, base 74M, small 244M, medium 769M, large (v1–v3)
# 1550M, turbo (large-v3-turbo) 809M.
_WHISPER = re.compile(
    r"whisper[-_ ]?(?:(large)[-_ ]?v3[-_ ]?(turbo)|(tiny|base|small|medium|turbo|large)(?:[-_ ]?v[123])?)(?![A-Za-z])",
    re.I,
)
_WHISPER_PARAMS = {"tiny": 39e6, "base": 74e6, "small": 244e6, "medium": 769e6, "large": 1.55e9, "turbo": 809e6}
# Models people name without a size, which no preset stands for, and the total their authors publish:
# Qwen-VL 9.6B (Qwen-VL paper, arXiv 2308.12966, Table 1: ViT 1.9B + adapter 0.08B + LLM 7.7B), CogVLM 17B (CogVLM
# README: 10B visual + 7B language parameters), CogVLM2 19B (both cogvlm2-llama3-chat-19B releases), MOSS 16B
# (OpenMOSS/MOSS README: "moss-moon系列模型具有160亿参数"), SantaCoder 1.1B (bigcode/santacoder model card), CPM-2 11B
# (CPM-2 paper, arXiv 2106.10715: 11 billion parameters; its MoE version has 198B and is not matched).
_PUBLISHED_SIZES: tuple[tuple[re.Pattern[str], float], ...] = (
    (re.compile(r"(?<![A-Za-z0-9.])qwen[-_ ]?vl(?![-_ ]?(?:max|plus|\d))", re.I), 9.6e9),
    (re.compile(r"(?<![A-Za-z0-9])cogvlm(?![-_ ]?\d)(?![A-Za-z])", re.I), 17e9),
    (re.compile(r"(?<![A-Za-z0-9])cogvlm[-_ ]?2(?![\d.])", re.I), 19e9),
    (re.compile(r"(?<![A-Za-z0-9])moss(?:[-_ ]moon[-_ ]003)?(?![A-Za-z0-9])", re.I), 16e9),
    (re.compile(r"(?<![A-Za-z0-9])santa[-_ ]?coder(?![A-Za-z0-9])", re.I), 1.1e9),
    (re.compile(r"(?<![A-Za-z0-9])cpm[-_ ]?2(?![\d.]|[-_ ]?moe)", re.I), 11e9),
)


def _published(text: str) -> tuple[re.Match[str], float] | None:
    """The first name in ``text`` that :data:`_PUBLISHED_SIZES` knows, with its published total."""
    return next(((m, n) for rx, n in _PUBLISHED_SIZES if (m := rx.search(text))), None)


def published_total(name: str) -> float | None:
    """The total its authors publish for a model named without a size (:data:`_PUBLISHED_SIZES`; a vision-language
    model's includes its vision encoder), or None."""
    found = _published(name)
    return found[1] if found else None


# A size the user says their model has: "with model size of 774M", "model size: 1.5B", "a 355M-parameter model".
_SIZE_SAID = re.compile(
    r"model\s*size\s*(?:of|is|=|:)?\s*(\d+(?:\.\d+)?)\s*([BM])(?![A-Za-z])|"
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*([BM])[-\s]?param(?:eter)?s?\b",
    re.I,
)


# A size written right after a family's name: "gpt2(2.6B)", "GPT-2 (1.5B)" (Megatron-LM #60 trains a 2.6B GPT-2).
# ("闻仲2.0-GPT2-3.5B-chinese", Fengshenbang-LM #111: a hyphen joins the size to the family's name)
_SIZE_ATTACHED = re.compile(r"\s*[-_(（]?\s*(\d+(?:\.\d+)?)\s*([BM])(?![A-Za-z])", re.I)
# ... or written just before the family's name: "a 4B gpt2 model", "a 3.5B GPT-2 model" (a size the family's base preset
# does not have is the user's model, built on that architecture)
_SIZE_BEFORE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([BM])[-\s]?$", re.I)


_YOURS_BEFORE = re.compile(r"\byou(?:'ve)?\b[^.?!。？！\n]{0,24}$|\byour\s+$", re.I)


# A size that names a class of models, not one model: "6B models", "13B+ models", "7B and larger models", "70B级别的模型".
_CLASS_OF_MODELS = re.compile(
    r"\s*\+?\s*(?:(?:and|or)\s+(?:larger|bigger|smaller|above|up)\s+|-?(?:class|scale|sized?)\s+|parameter\s+)?"
    r"models\b|\s*(?:以上|以下|级别|量级|左右)的?模型",
    re.I,
)
_PHRASE_END = re.compile(r"\.(?:\s|$)|[。!?！？;；\n]")


def _size_binds(text: str, name: str | None, m: re.Match[str]) -> bool:
    """Whether a bare size is the size of the model ``name`` the text names. A size written as a class of models
    ("I was unable to run 6B models … For finetuning santacoder …") is that model's only in the same phrase as its
    name; other sizes are the named model's as before ("How many A100s to tune a 13B model? I want to train llama2")."""
    if not name or not _CLASS_OF_MODELS.match(text, m.end()):
        return True
    for n in re.finditer(re.escape(name), text):
        lo, hi = (n.end(), m.start()) if n.end() <= m.start() else (m.start(), n.start())
        if hi - lo <= 40 and not _PHRASE_END.search(text[lo:hi]):
            return True
    return False


_HAS_SIZE = re.compile(r"\d(?:\.\d+)?\s?[bBmM](?![A-Za-z])")


def _letters(name: str) -> str:
    """The family word a model name starts with ("Qwen2.5Vl7B" → "qwen", "Qwenvl" → "qwenvl")."""
    return re.match(r"[a-z]*", name.lower()).group(0) or name.lower()  # type: ignore[union-attr]


_CLASS_AFTER = re.compile(r"(?:For[A-Z]\w*|Model\b|Config\b|Tokenizer\w*|DecoderLayer|Attention\w*|MLP\b|RMSNorm)")
_DATASET_AFTER = re.compile(r"[-_ ]?(?:数据集|数据|语料|格式|data[-_ ]?sets?\b|data\b|corpus\b)", re.I)
# What joins the names of a list: "GPT, BERT and T5", "LLaMA、Qwen 和 ChatGLM".
_LIST_JOIN = re.compile(r"\s*(?:[,，、/]\s*(?:and|or|和|或|及)?|and|or|和|或|及)\s*", re.I)


# Names of a list before its first family match ("GPT, " in "GPT, BERT and T5": GPT alone is no family the reader knows).
_LIST_ITEMS_BEFORE = re.compile(r"(?:(?<![\w.-])[A-Za-z][\w.-]{1,15}\s*[,，、]\s*)+$")


def _list_items_before(text: str, start: int) -> int:
    m = _LIST_ITEMS_BEFORE.search(text, max(0, start - 60), start)
    return len(re.findall(r"[,，、]", m.group(0))) if m else 0


def _family_lists(text: str, found: list[re.Match[str]]) -> list[re.Match[str]]:
    """The family names in a list of three or more sizeless ones: "it only works on GPT, BERT and T5" (accelerate's
    Megatron-LM page, quoted in TRL #962) names what a tool supports, not the model trained."""
    groups: list[list[re.Match[str]]] = []
    for f in found:
        if groups and _LIST_JOIN.fullmatch(text, groups[-1][-1].end(), f.start()):
            groups[-1].append(f)
        else:
            groups.append([f])
    return [
        f
        for g in groups
        if len(g) + _list_items_before(text, g[0].start()) >= 3 and not any(_HAS_SIZE.search(f.group(0)) for f in g)
        for f in g
    ]


_SWAP_BEFORE = re.compile(
    r"(?:\b(?:chang|replac|switch|swapp?)(?:e|ed|es|ing)?|把|将)\s*(?:the\s+model\s+)?(?:from\s+)?$", re.I
)
_SWAP_BETWEEN = re.compile(r"\s*(?:to|with|by|for|->|→|换成|改成|改为|替换为|替换成|换为)\s*", re.I)


def _whole_end(text: str, f: re.Match[str]) -> int:
    """Where the run of name characters (letters, digits, ``._-``) after a family match ends: "qwen2-7b" in "change
    qwen2-7b to …", "meta-llama" before its "/"."""
    return f.end(1) + _run_length(_NAME_CHARS, text, f.end(1))


_BARE_SIZE_AFTER = re.compile(r"[ _-]?(\d{1,3}(?:\.\d)?)\s*(?:model\b|模型)", re.I)


def _model_named(text: str, slots: Slots) -> None:
    text = _RESEMBLES.sub(" ", text)
    if (own := _OWN_BARE_SIZE.search(text)) and (side := _SIDE_TEST.search(text, own.end())):
        text = text[: side.start()]
    if (moe := _MOE_NAME.search(text)) and (
        preset := preset_for_name(f"{moe.group(1)}-{moe.group(2)}x{moe.group(3)}b")
    ):
        # "mistralai_Mixtral-8x7B-Instruct-v0.1", "Mixtral 8x7B": the MoE preset, never the family's dense model
        slots.model_text, slots.model, slots.num_params = moe.group(0), preset, None
        return
    # an organisation or folder before a slash ("meta-llama/Llama-2-13b-hf") is not the model when a name follows
    # "问了deepseek，说…", "I asked chatgpt": a chatbot asked is no model trained (minimind #177)
    found = [
        f
        for f in _MODEL_NAME.finditer(text)
        if _HAS_SIZE.search(f.group(0)) or not _ASKED_BOT_BEFORE.search(text, max(0, f.start() - 12), f.start())
    ]
    # "LlamaForCausalLM does not accept …" (Unsloth #1801 on phi-4): a transformers class named in a log is the
    # architecture code a model reuses, not the model when the message names one
    named = [f for f in found if not _CLASS_AFTER.match(text, f.end())]
    found = named or found
    # "下载alpaca数据集 … 原始的alpaca还是…": a data set named after a family is no model, wherever it is named again
    data_sets = {f.group(1).lower() for f in found if _DATASET_AFTER.match(text, f.end())}
    found = [f for f in found if f.group(1).lower() not in data_sets]
    if listed := _family_lists(text, found):
        for f in listed:  # out of every later search too (the presets' own patterns)
            text = text[: f.start()] + " " * (f.end() - f.start()) + text[f.end() :]
        found = [f for f in found if f not in listed]
    # "just change qwen2-7b to qwen3-0.6b" (verl #4494), "把qwen2-7b换成qwen3-0.6b": the model changed away from is not
    # the run's, wherever else it is named ("[qwen2-7b-fsdp2.log](…)": the recipe's log file)
    swapped = {
        f.group(0).lower()
        for i, f in enumerate(found)
        if i + 1 < len(found)
        and found[i + 1].group(0).lower() != f.group(0).lower()
        and _SWAP_BEFORE.search(text[max(0, f.start() - 16) : f.start()])
        and _SWAP_BETWEEN.fullmatch(text[_whole_end(text, f) : found[i + 1].start()])
    }
    found = [f for f in found if f.group(0).lower() not in swapped] or found
    if len({f.group(0).lower() for f in found}) > 1:
        # "您论文中 … 不管是使用resnet34还是resnet50 …，我用24G的3090复现时resnet50" (Contrastive-Clustering #49): the
        # models a paper or README ran are not the user's when the user names one of their own
        unheard = [f for f in found if not hearsay(text, f.start())]
        found = unheard or found
    if len({f.group(0).lower() for f in found}) > 1:
        # "the hyper-parameters when you trained llama-13b? … when I initialize a llama-7b": the maintainers' model
        # (second person) is not the user's when the user names another
        mine = [f for f in found if not _YOURS_BEFORE.search(text[max(0, f.start() - 32) : f.start()])]
        found = mine or found
    m = next(
        (m for m in found if not text.startswith("/", _whole_end(text, m))),
        found[0] if found else None,
    )
    if m is not None and not _HAS_SIZE.search(_whole_name(text, m)[:60]):
        # "Qwenvl2.5VL-7B … Qwen2.5Vl7B", "InternVL2 … InternVL2-2B": a name without its size, written again with one
        # in the same family, is that sized model (the first one; another family never replaces it)
        word = _letters(m.group(1))
        same_family = [
            f
            for f in found
            if f is not m
            and (_letters(f.group(1)).startswith(word) or word.startswith(_letters(f.group(1))))
            and _HAS_SIZE.search(_whole_name(text, f)[:60])
        ]
        # "GRPO fine-tune Qwen3 0.6 model" (TRL #3456, then "Qwen3 4B", "Qwen3 0.6B", "Qwen3 1.7B"): the number written
        # after the unsized name says which of them
        if bare := _BARE_SIZE_AFTER.match(text, _whole_end(text, m)):
            same_family = [
                f
                for f in same_family
                if re.search(rf"(?<![\d.]){re.escape(bare.group(1))}\s*[bB]", _whole_name(text, f))
            ] or same_family
        m = same_family[0] if same_family else m
    if m is None and (zh := _QWEN_ZH.search(text)):
        # "千问2.5-32B", "通义千问 14B": Qwen written in Chinese, kept as the user wrote it
        slots.model_text = zh.group(0)
        slots.num_params = float(zh.group(2)) * 1e9
        if preset := preset_for_name(f"qwen{zh.group(1) or ''}-{zh.group(2)}b"):
            slots.model, slots.num_params = preset, None
        return
    if m is None and (sized := _SIZED_NAME.search(text)):
        slots.model_text = sized.group(1)[:60]
        if size := _NAME_SIZE.search(_name_core(slots.model_text)):
            slots.num_params = float(next(g for g in size.groups() if g is not None)) * 1e9
    if m is not None:
        slots.model_text = _whole_name(text, m)[:60]
        if size := _NAME_SIZE.search(_name_core(slots.model_text)):
            slots.num_params = float(next(g for g in size.groups() if g is not None)) * 1e9
        slots.num_params = _name_size(slots.model_text) or slots.num_params
    if slots.model_text and (moe := _MOE_NAME.search(slots.model_text)):
        # "mixtral_8x7b_instruct_full_oasst1_e3": experts x expert size is no dense size ("7b" alone is wrong)
        slots.num_params = None
        if preset := preset_for_name(f"{moe.group(1)}-{moe.group(2)}x{moe.group(3)}b"):
            slots.model = preset
            return
    if (
        slots.model_text
        and not preset_for_name(slots.model_text)
        and (at := text.find(slots.model_text)) >= 0
        and (after := _SIZE_WORD_AFTER.match(text, at + len(slots.model_text)))
        and preset_for_name(f"{slots.model_text}-{after.group(1)}")
    ):
        slots.model_text = text[at : after.end()][:60]  # "Phi-3 mini": the word a space sets apart is the name's
    if slots.model_text and (preset := preset_for_name(slots.model_text)):
        slots.model, slots.num_params = preset, None  # a preset's exact shape (MoE total/active too), not its size
        return
    if big := _GPT2_BIG.search(text):
        # GPT-2 large / XL (no preset): their published sizes
        slots.model_text = slots.model_text or big.group(0)
        slots.num_params = 774e6 if big.group(1).lower() == "large" else 1.5e9
        return
    if whisper := _WHISPER.search(text):
        # "fine-tune whisper large on a GPU with 24gb of ram" (transformers #20348): Whisper's published sizes
        slots.model_text = slots.model_text or whisper.group(0)
        slots.num_params = _WHISPER_PARAMS[(whisper.group(2) or whisper.group(3)).lower()]
        return
    # (within the model's name when one was read: "qwen2.5-vl … Qwen2.5-VL-main/qwen-vl-finetune/" is no Qwen-VL)
    if slots.num_params is None and (published := _published(slots.model_text or text)):
        # "How much GPU memory does the full-parameter finetuning of Qwen-VL request?": the size its authors publish
        slots.model_text = slots.model_text or published[0].group(0)
        slots.num_params = published[1]
        return
    own_size = slots.model_text if slots.model_text and _name_size(slots.model_text) else None
    for pattern, name in _MODEL_PATTERNS:
        if (family := pattern.search(text)) and own_size and family.group(0).lower() not in own_size.lower():
            continue  # "Ziya-LLaMA-13B … 另外在ChatGLM-6B上": another family's preset is not the sized model named
        if family:
            slots.model, slots.num_params = name, None  # the preset carries its size
            said = (
                _SIZE_ATTACHED.match(text, family.end())
                or _SIZE_BEFORE.search(text, max(0, family.start() - 12), family.start())
                or _SIZE_SAID.search(text)
            )
            if said and name in PUBLISHED_PARAMS:
                amount, unit = [g for g in said.groups() if g is not None]
                n = float(amount) * (1e9 if unit.lower() == "b" else 1e6)
                if abs(n - PUBLISHED_PARAMS[name]) / PUBLISHED_PARAMS[name] > 0.1:
                    # "gpt-2-simple with model size of 774M": the family's base preset is not the size the user runs
                    slots.model, slots.num_params = None, n
                    slots.model_text = slots.model_text or family.group(0)
            return
    if r := _PARAMS_REPORTED.search(text):
        # "Model params: 6.28 B" printed by the script: the model's exact size, over a config's round "7b"
        slots.num_params = float(r.group(1)) * (1e9 if r.group(2).lower() == "b" else 1e6)
        return
    # "~10B tokens" (nanotron #204), "100B token 的数据" count data, not parameters; "bf16"'s "16 b" is no size.
    # With a named model, a size naming a class of models counts only in its phrase (_size_binds).
    sizes = [
        *(
            m
            for m in _PARAMS_B.finditer(text)
            if not re.search(r"\b(?:bf|fp)$", text[: m.start()], re.I)
            and m.group(0).upper() != "910B"  # Huawei's Ascend 910B NPU ("16卡910B"), not a 910-billion model
            and not _DATA_AMOUNT.match(text, m.end())
            and not _quoted(text, m.start(), lines=False)  # "`… models of up to 20B parameters` in the README"
            and not hearsay(text, m.start())
        ),
        *_PARAMS_YI.finditer(text),
        *_PARAMS_M.finditer(text),
    ]
    if own_size:
        pass  # "BLOOM 560M & BLOOM 1.1B": the named model's own size is its count, never another size in the message
    elif m := next((m for m in sizes if _size_binds(text, slots.model_text, m)), None):
        slots.num_params = float(m.group(1)) * {"亿": 1e8}.get(m.group(0)[-1], 1e9 if m.re is _PARAMS_B else 1e6)
    # ("train falcon-7B, I've already … trained llama-7B" (litgpt #124): another family named with its size keeps its own)
    other_family = own_size is not None and not re.search(r"qwen|" + LLAMA_WORD, own_size, re.I)
    if slots.num_params and not other_family:
        if "qwen" in text.lower() and abs(slots.num_params - 7e9) < 1e9:
            slots.model, slots.num_params = "qwen2.5-7b", None
        elif re.search(LLAMA_WORD, text, re.I):  # (LLaMA-Factory #5815 fine-tunes a 72B, no llama)
            for name in ("llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b"):
                if abs(PUBLISHED_PARAMS[name] - slots.num_params) / PUBLISHED_PARAMS[name] < 0.1:
                    slots.model, slots.num_params = name, None
                    break


# A memory size that adds several cards up: "合计96G显存", "共160G", "96GB in total", "combined 48 GB".
_POOLED_BEFORE = re.compile(
    r"(?:合计|总共|一共|共计|总计|共|总|total(?: of)?|combined|altogether|in all)\s*(?:有|是|为|:|：)?\s*$", re.I
)
_POOLED_AFTER = re.compile(r"\s*(?:显存)?\s*(?:in total|total|combined|altogether|in all|加起来|总共|合计)", re.I)


_TASK_MANAGER = re.compile(
    r"(?:dedicated\s+gpu\s+memory|专用\s*gpu\s*内存)\s*(?:usage)?\s*[:：]?\s*(\d{1,4}(?:\.\d+)?)\s*(?:GB|G)?\s*/\s*"
    r"(\d{1,4}(?:\.\d+)?)\s*(?:GB|G)\b",
    re.I,
)
# "23GB used of 24GB", "39GB/40GB", "30GB out of 80GB": memory in use out of the card's (the total a card size).
_USED_OF_TOTAL = re.compile(
    r"(?<![\d.])(\d{1,3}(?:\.\d+)?)\s*(?:(?:GB|GiB|G)\s*(?:(?:used|in use|allocated|reserved)\s*)?|used\s*|in use\s*)"
    r"(?:/|\bof\b|\bout of\b)\s*"
    r"(\d{1,3}(?:\.\d+)?)\s*(?:GB|GiB|G)\b|"
    # nvidia-smi's memory column pasted in prose: "81000MiB / 81920MiB"
    r"(?<![\d.])(\d{3,6})\s*MiB\s*/\s*(\d{4,6})\s*MiB",
    re.I,
)
_THEN_AMOUNT = re.compile(
    r"(?:\bthen|\blater|afterwards|然后|之后|后来|再)[^.。;；\n\d]{0,40}?(\d{1,6}(?:\.\d+)?)\s*(MB|MiB|GB|GiB|G)\b",
    re.I,
)
# Two or more memory amounts joined by arrows, not followed by a card ("24GB -> 80GB GPU" changes the card).
_AMOUNT = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d{1,6}(?:\.\d+)?)\s*(MiB|MB|GiB|GB|G)(?![a-z])", re.I)
_ARROW_TRACE = re.compile(
    _AMOUNT.pattern + r"(?:\s*(?:-+>|→|=+>)\s*" + _AMOUNT.pattern + r")+(?!\s*(?:gpus?|cards?|显卡|卡|vram))",
    re.I,
)


def _amount_gb(amount: str, unit: str) -> float:
    """An amount as written ("33,306" MiB) in GB."""
    value = float(amount.replace(",", ""))
    return round(value / 1024, 2) if unit.lower() in ("mb", "mib") else value


_REPORT_END = re.compile(r"\n|[。；;!?！？]|\.(?:\s|$)")


def _gpu(text: str, slots: Slots) -> None:
    mentions = _gpu_mentions(text)
    if mentions and mentions[0][0] < 0 and _gpu_sizes(text, Slots()) is not None:
        # "I tried to use four 24GB graphic cards instead of one 40 GB A100" (rasat #10): the only card named is one
        # the user does not use, and the size of their own is stated apart from it: that size, and no card's name
        mentions = []
    if mentions:
        _, name, cap = mentions[0]
        # A capacity written next to another mention of the same card ("8*(v100 32G)") sizes it too.
        family = _gpu_family_key(name)
        cap = (
            cap
            if cap is not None
            else next((c for _, n, c in mentions if c is not None and _gpu_family_key(n) == family), None)
        )
        slots.gpu_text = re.sub(r"\s+", " ", name)[:40]
        slots.gpu = _gpu_preset(name, cap)
        if cap is not None and 1 <= cap <= 2000:
            slots.gpu_memory_gb = cap
    observed = next((o for o in _OBSERVED.finditer(text) if not hearsay(text, o.start())), None)
    if observed:
        gb = _observed_gb(observed)
        # "平均显存占用在60G左右，部分单卡到75G左右": the peak of one report is what ran out of memory; a report ends
        # with its line or sentence ("seqlen 1024 占用 17.9G\nseqlen 2048 占用 26.1G" measures one run per line, and the
        # other values read are the first line's)
        stop = _REPORT_END.search(text, observed.end(), min(len(text), observed.end() + 40))
        for more in _OBSERVED.finditer(text, observed.end(), stop.start() if stop else observed.end() + 40):
            gb = max(gb, _observed_gb(more))
        # "The first iteration uses 2400 MB … and then the second and other iterations 2800 MB": the amount it grows to
        end = _REPORT_END.search(text, observed.end(), min(len(text), observed.end() + 160))
        for later in _THEN_AMOUNT.finditer(text, observed.end(), end.start() if end else observed.end() + 160):
            amount = float(later.group(1))
            gb = max(gb, round(amount / 1024, 2) if later.group(2).lower() in ("mb", "mib") else amount)
        if 0 < gb <= 2000:
            slots.observed_memory_gb = gb
    if slots.observed_memory_gb is None and (trace := _ARROW_TRACE.search(text)):
        # "I observed 13,740MiB -> 33,306Mib -> CUDA out of memory" (PEFT #832): a chain of readings, the last the peak
        gb = max(_amount_gb(a.group(1), a.group(2)) for a in _AMOUNT.finditer(trace.group(0)))
        if 0 < gb <= 2000:
            slots.observed_memory_gb = gb
    if m := _TASK_MANAGER.search(text):
        # Windows Task Manager's "Dedicated GPU memory 7.8/8.0 GB": the card's own memory, used of total (the
        # "Shared GPU memory" beside it is system RAM, never the card's size)
        used, total = float(m.group(1)), float(m.group(2))
        if 0 < used <= total <= 2000:
            slots.observed_memory_gb = slots.observed_memory_gb or used
            slots.gpu_memory_gb = slots.gpu_memory_gb or total
    if m := _USED_OF_TOTAL.search(text):
        used, total = (
            (float(m.group(1)), float(m.group(2)))
            if m.group(1)
            else (_amount_gb(m.group(3), "MiB"), _amount_gb(m.group(4), "MiB"))
        )
        if 0 < used <= total and _is_card_size(total):
            slots.observed_memory_gb = slots.observed_memory_gb or used
            slots.gpu_memory_gb = slots.gpu_memory_gb or total
    _gpu_sizes(text, slots)


# The device line YOLOv5 / ultralytics and others print, "CUDA:0 (NVIDIA GeForce GTX 1660 SUPER, 6144MiB)", as logged or
# retyped ("training on NVIDIA GeForce GTX 1660 SUPER, 6144MiB", ultralytics #5294): the card's total memory.
_DEVICE_MIB = re.compile(r"(?:CUDA:\d+\s*\(|NVIDIA|GeForce|Tesla|Quadro)[^,()\n]{1,40},\s*(\d{4,6})\s*MiB\b", re.I)


def _gpu_sizes(text: str, slots: Slots) -> float | None:
    """The card's size written apart from any card's name ("4*24GB GPU", "24G 显存", "24G能跑吗"), unless ``slots``
    already holds one; the size found (or held)."""
    used_spans = [m.span() for m in _OBSERVED.finditer(text)]
    if slots.gpu_memory_gb is None and (line := _DEVICE_MIB.search(text)):
        gb = _amount_gb(line.group(1), "MiB")
        if _is_card_size(gb):
            slots.gpu_memory_gb = gb
    if slots.gpu_memory_gb is None:
        for m in _CARDS_TIMES_GB.finditer(text):
            if _quoted(text, m.start()) or _REQUIREMENT.search(text[max(0, m.start() - 16) : m.start()]):
                continue  # a guide's "needs ~16x80GB GPUs" (quoted under "the guide mentions the following:")
            gb = float(next(g for g in m.groups() if g is not None))
            if m.group(3) is not None:
                count_, _, total = (int(n) for n in re.findall(r"\d+", m.group(0)))
                if count_ * gb != total or re.search(r"[*x×]\s*$", text[max(0, m.start() - 3) : m.start()]):
                    continue  # "7 x 4 x 4 = 112 GB": a formula's factors, not cards times their size
                if _count_elsewhere(text, int(gb), m.span()):
                    continue  # "8 GPUs … more than 18*8 = 144GB" (llama-cookbook #37): per-GPU use times the cards
            lead = int(re.match(r"\d+", m.group(0)).group(0)) if m.group(1) is not None else 0  # type: ignore[union-attr]
            if lead in _CARD_SIZES and _count_elsewhere(text, int(gb), m.span()):
                gb = float(lead)  # "8 v100, totally I got 32 *8 G": the factor the count matches is the count
            if gb in _CARD_SIZES and not any(a < m.end() and m.start() < b for a, b in used_spans):
                slots.gpu_memory_gb = gb
                count = int(re.findall(r"\d+", m.group(0))[-1 if m.group(2) is not None else 0])
                if slots.world_size is None and 1 <= count <= 64 and count != gb:
                    slots.world_size = count  # "4*80GB", "a 49GB*4 machine": that many cards of that size
                if slots.gpu and abs(GPU_PRESETS[slots.gpu].memory_gib - gb) > 0.08 * gb:
                    slots.gpu = _gpu_preset(slots.gpu_text or slots.gpu, gb)
                break
    if slots.gpu_memory_gb is None:
        each = list(_GPU_MEM_EACH.finditer(text))
        for m in [*each, *_GPU_MEM.finditer(text)]:
            if any(a < m.end() and m.start() < b for a, b in used_spans):
                continue  # "占用了 20G 显存" is use, not the card's size
            if m in each and float(next(g for g in m.groups() if g is not None)) not in _CARD_SIZES:
                continue  # "FSDP: 2.93 s, 23.8GB per GPU": a measured amount per GPU, no card's size
            if _REQUIREMENT.search(text[max(0, m.start() - 16) : m.start()]) or _quoted(text, m.start()):
                continue
            if _POOLED_BEFORE.search(text[max(0, m.start() - 8) : m.start()]) or _POOLED_AFTER.match(text, m.end()):
                continue  # "4张3090，合计96G显存": the cards added up, not one card's size
            if _BOUND_AFTER.match(text, m.end()):
                continue  # "cpu memory（gpu memory 20G以下）" (TigerBot #108): a bound on what is needed, no card's size
            gb = float(next(g for g in m.groups() if g is not None))
            if m.group(0).lower().endswith("mib"):
                gb = round(gb / 1024, 2)
            if 2 <= gb <= 200 and gb != slots.observed_memory_gb:
                slots.gpu_memory_gb = gb
                if slots.gpu and abs(GPU_PRESETS[slots.gpu].memory_gib - gb) > 0.08 * gb:
                    slots.gpu = _gpu_preset(slots.gpu_text or slots.gpu, gb)
                break
    if slots.gpu_memory_gb is None:
        # "5个24G的P4090", "2 16G A4000": the size written between a count and its card is one card's
        for m in _GPUS.finditer(text):
            size = _COUNT_SIZE.search(m.group(0), len(m.group(1)))
            if size and float(size.group(1)) in _CARD_SIZES and not _quoted(text, m.start()):
                slots.gpu_memory_gb = float(size.group(1))
                break
    if slots.gpu_memory_gb is None:
        # "fp16精度下20G也能够吗", "24G能跑吗", "is 12gb enough?": a card's size asked whether it suffices
        for m in _SIZE_ENOUGH.finditer(text):
            gb = float(m.group(1) or m.group(2))
            if gb in _CARD_SIZES and not _quoted(text, m.start()) and gb != slots.observed_memory_gb:
                slots.gpu_memory_gb = gb
                break
    return slots.gpu_memory_gb


_BOUND_AFTER = re.compile(r"\s*(?:以下|以内|以上|or (?:less|more)|and (?:below|above)|at most|at least)", re.I)
_SIZE_ENOUGH = re.compile(
    # ("12G / 24G够吗" (XrayGLM #32): the sizes asked in turn, the first is the one to answer)
    r"(?<![\d.])(\d{1,3})\s*(?:G|GB|GiB)(?:\s*(?:/|或者?|还是|or)\s*\d{1,3}\s*(?:G|GB|GiB))*(?:\s*的)?\s*(?:显存|的卡|卡)?\s*(?:也|就|真的)?\s*(?:能够|够|足够|够用|能跑|跑得动|可以跑|能训练|可以训练|能微调|可以微调)(?:吗|么|嘛|不)|"
    r"\bis\s+(\d{1,3})\s*(?:G|GB|GiB)\s*(?:of\s+)?(?:v?ram\s+|gpu memory\s+|memory\s+)?enough\b",
    re.I,
)


def _count_elsewhere(text: str, n: int, span: tuple[int, int]) -> bool:
    """Whether the text states ``n`` GPUs outside ``span`` ("with 8 v100, …")."""
    return any(
        _num(m.group(1)) == n and not (span[0] <= m.start() < span[1])
        for m in _GPUS.finditer(text)
        if m.group(1) != "单"
    )


def _gpu_family_key(name: str) -> str:
    """The card a name means, without vendor words and form factor: "A100s", "NVIDIA A100-SXM4" are one family (an
    environment report's "A100-SXM4-40GB" sizes the "A100 GPUs" of the prose, Lightning #11933)."""
    key = re.sub(r"^(?:nvidia|amd|tesla|geforce|quadro|rtx|gtx|\s|-)+", "", name.lower())
    return re.sub(r"[-\s]*(?:pcie|sxm\d?|nvl)\b.*$", "", key).rstrip("s")[:6]


# "total batchsize is 4096", "effective batch size of 128", "总batch_size": not the micro batch.
_TOTAL_BEFORE = re.compile(r"(?:total|global|effective|overall|resulting|有效|全局|总)[-_ ]?\s*$", re.I)
_TOTAL_AFTER = re.compile(r"\s*[(（]\s*(?:total|global|effective|in total|总|全局|有效)\s*[)）]", re.I)
_MICRO_AND_BATCH = re.compile(r"--?micro_batch_size[\s=]+(\d+)")
_BATCH_FLAG = re.compile(r"--?batch_size[\s=]+(\d+)")


_PRODUCT = re.compile(r"(?:\s*[*x×]\s*\d+)+\s*=\s*(\d+)(?![\d.])")


# "In your paper, the batch size is 16", "论文里 batch size 是 16": a value of the paper or the README, not the user's run.
_PAPER_BEFORE = re.compile(
    # ("作者您好，请问batch per gpu=1的时候…" (FSTR #3) greets the author: what follows is the user's own question)
    r"(?:\b(?:your|the|in the|in your|their)\s+(?:paper|readme|repo's|original (?:paper|code))|论文|官方|原文|作者(?![您你]好))"
    # (the sentence turns to the user's own files or run: "论文里写…batchsize设为了4，但是配置文件里batch_size是1", CARL #11)
    r"(?:(?!\bbut\b|\bI\b|\bmy\b|\bwe\b|但是|可是|然而|而我|我的)[^.。;；?？!！\n]){0,30}$",
    re.I,
)


def _own_micro(m: re.Match[str], text: str) -> bool:
    """Not a "total" batch (before it, or "(total)" right after the value), not a quotation, not the paper's."""
    return (
        not _TOTAL_AFTER.match(text, m.end())
        and not _TOTAL_BEFORE.search(text[max(0, m.start() - 12) : m.start()])
        and not _PAPER_BEFORE.search(text[max(0, m.start() - 40) : m.start()])
        and not _quoted(text, m.start(), lines=False)
        and not _equivalent_at(text, m.start())
        and not hearsay(text, m.start())
        and not _SECONDS_AFTER.match(text, m.end())
        and not _TIMES_AFTER.match(text, _value_end(m))
        and not _progress_counter(m, text)
    )


# A training log's progress line: "epoch: 0, batch: 35100, train loss: 13.7" (PaddleSpeech #384), "Epoch 3, batch:
# 120/500": the bare "batch" there counts the batches done, it sets no batch.
_EPOCH_BEFORE_ON_LINE = re.compile(r"\bepoch\b\W{0,3}\d", re.I)


def _progress_counter(m: re.Match[str], text: str) -> bool:
    if not re.match(r"batch(?![-_ ]?size)", m.group(0), re.I):
        return False
    line_start = text.rfind("\n", 0, m.start()) + 1
    line_end = text.find("\n", m.end())
    line = text[line_start : len(text) if line_end < 0 else line_end]
    return bool(
        _EPOCH_BEFORE_ON_LINE.search(text, line_start, m.start())
        or re.search(r"\bloss\b\W{0,3}\d", line, re.I)
        or re.match(r"\s*/\s*\d", text[m.end() :])
    )


def _value_end(m: re.Match[str]) -> int:
    """Where the match's first captured value ends ("200" in "200 batchsize per GPU * 8"); its end if none."""
    return m.end(next((i for i in range(1, (m.lastindex or 0) + 1) if m.group(i)), 0))


# "improve the batch size to 4*1024" (Cream #214): a batch written as a product is the product (read as a total by
# _BATCH_AS_PRODUCT), never its first factor
_TIMES_AFTER = re.compile(r"\s*[*×]\s*\d")
_BATCH_AS_PRODUCT = re.compile(
    r"(?<![A-Za-z_])(?:batch[-_ ]?size|bs)\s*(?:to|=|:|of|is|为|是|设为|改成|改为)?\s*(\d{1,5})\s*[*×]\s*(\d{1,5})"
    r"(?![\d.]|\s*[*×xX]\s*\d)(?:\s*=\s*(\d{1,7})(?![\d.]))?",
    re.I,
)


def _batch_product(m: re.Match[str], text: str) -> tuple[Any, ...]:
    """The product of :data:`_BATCH_AS_PRODUCT`; None where a written result disagrees with it."""
    product = int(m.group(1)) * int(m.group(2))
    return (product if m.group(3) is None or int(m.group(3)) == product else None,)


# "batchsize600s" (ZipVoice #167): a batch measured in seconds of audio (lhotse's max_duration), no count of samples
_SECONDS_AFTER = re.compile(r"\s*(?:s|secs?|seconds?|秒)(?![A-Za-z0-9])", re.I)


# "how do I change per_device_train_batch_size from (the default) 1 to 16?": the run's value is the one it has now;
# "I changed the batch size from 1 to 16 and it OOMs" is told as done: the new value is the run's.
_MICRO_FROM_TO = re.compile(
    r"(?<![A-Za-z_])(?:train_micro_batch_size_per_gpu|per_device_train_batch_size|micro[-_ ]?batch(?:[-_ ]?size)?|"
    r"per[-_ ]?(?:gpu|device)[-_ ]?batch(?:[-_ ]?size)?|batch[-_ ]?size)\s*(?:value\s*)?(?:from|从)\s*"
    r"(?:the\s+)?(?:default\s*(?:value\s*)?(?:of\s*)?|默认(?:的|值)?\s*)?(\d+)\s*"
    r"(?:as|to|into|->|→|变成|改成|改为|调到|到)\s*(\d+)(?![\d.])",
    re.I,
)
_ASKING_HOW = re.compile(
    r"\b(?:how (?:do|can|should|to)|should I|can I|is it ok to)\b|怎么|如何|是否|要不要|能不能|可以吗", re.I
)


def _change_asked(text: str, m: re.Match[str]) -> bool:
    """Whether the sentence of a "from A to B" change asks how to make it (A is still the run's value)."""
    start = max(text.rfind(c, 0, m.start()) for c in ".。!！\n") + 1
    end = min((i for i in (text.find(c, m.end()) for c in ".。!！\n") if i >= 0), default=len(text))
    sentence = text[start : end + 1]
    return bool(_ASKING_HOW.search(sentence) or "?" in sentence or "？" in sentence)


# "I changed the batch_size from 16 to 8, and it works", "从16改成8就可以跑了": the change is told as the fix, so
# the run the question is about (the one that failed) is the value changed from.
_FIXED_AFTER = re.compile(
    # (each run of spaces is taken whole, `\s*+`: read with search() over a pasted progress bar's thousands of spaces,
    # optional words between plain `\s*` would try every split of the run)
    r"\s*+(?:[,，]\s*+)?(?:(?:and|then|so)\s*+)?(?:now\s++)?(?:(?:it|that|this|training)\s*+)?(?:now\s++)?"
    r"(?:works?|worked|runs?\b|ran\b|fits?\b|is fine|was fine|succeeded|no longer (?:oom|crash))(?!\s*(?:out|into|oom|slow|fail|crash))|"
    r"\s*+(?:[,，]\s*+)?(?:(?:之后|以后|后)\s*+)?(?:就|才)\s*(?:可以|能|正常|不会|没有?(?:问题|报错)|跑通)",
    re.I,
)


def _change_fixed(text: str, m: re.Match[str]) -> bool:
    """Whether a "from A to B" change is followed by its having worked (then A is the failing run asked about)."""
    return bool(_FIXED_AFTER.match(text, m.end()))


def _micro_and_flag(m: re.Match[str], text: str) -> tuple[Any, ...]:
    # alpaca-lora style: --batch_size is the global batch, --micro_batch_size the per-step batch.
    b = _BATCH_FLAG.search(text)
    return int(m.group(1)), int(b.group(1)) if b else None


def _train_batch_or_product(m: re.Match[str], text: str) -> tuple[Any, ...]:
    product = _PRODUCT.match(text, m.end())  # "the effective batch_size is 128*8 = 1024": the result
    return (int(product.group(1)) if product else int(m.group(1)),)


def _learning_rate(m: re.Match[str], text: str) -> tuple[Any, ...]:
    lr = float(m.group(1))
    return (lr if 0 < lr < 10 else None,)


# "8 for each GPU", "2 GPUs with 8 Batch per GPU", "16 samples per device": a per-device batch written after its number.
_MICRO_AFTER = re.compile(
    # (the number on the same line: kohya's "num epochs / epoch数: 20" above "batch size per device / バッチサイズ: 1")
    r"(?<![\d.])(\d{1,4})[ \t]*(?:batch(?:es)?(?:[-_ ]?size)?|samples?|images?|imgs?|pictures?|sequences?|examples?)?[ \t]*"
    # ("4 images per batch each gpu", "each GPU 2 images per batch": detectron2 users, detectron2 #102)
    # ("2imgs/gpu, 8gpus, batchsize=16", mmdetection #3240)
    r"(?:per batch\s+)?(?:(?:per|for each|on each|for every|each)\s+|(?<=[A-Za-z])/\s*)(?:gpu|device|card)\b|"
    r"\beach\s+(?:gpu|device|card)\s+(\d{1,4})\s*(?:images?|samples?)\s+per\s+batch\b",
    re.I,
)
# "600000 iterations times batches of 12": the batch each step takes, as people say it (not "a batch of 1800 samples",
# a chunk of the data, nor "batches of 4 GPUs").
_BATCH_OF = re.compile(r"\bbatches of (\d{1,4})(?![\d.,])(?!\s*(?:gpus?|nodes?|steps?|epochs?)\b)", re.I)
# "trying out a higher batch size than 1 …, and set it to 18" (musubi-tuner #446): the value a later "it" takes
_MICRO_SET_IT = re.compile(r"\bbatch[-_ ]?size\b[^.?!\n]{0,60}?\bset it to (\d{1,4})(?![\d.])", re.I)
_MICRO_RULES = (
    SlotRule(("train_micro_batch_size_per_gpu", "train_batch_size"), (_MICRO_AND_BATCH,), _micro_and_flag),
    SlotRule(("train_micro_batch_size_per_gpu",), (_MICRO,), _group_num, accept=_own_micro),
    SlotRule(("train_micro_batch_size_per_gpu",), (_MICRO_AFTER,), _first_group_int, accept=_own_micro),
    SlotRule(("train_micro_batch_size_per_gpu",), (_BATCH_OF,), _group_int(), accept=_own_micro),
    SlotRule(("train_micro_batch_size_per_gpu",), (_MICRO_SET_IT,), _group_int(), accept=_own_micro),
)
_GA_RULES = (
    SlotRule(
        ("ga_from", "gradient_accumulation_steps"),
        (_GA_CHANGE, _GA_CHANGE_FAR),
        lambda m, text: (int(m.group(1)), int(m.group(2))),
    ),
    SlotRule(("gradient_accumulation_steps",), (_GA_VALUE_FOR,), _group_int()),
    SlotRule(
        ("gradient_accumulation_steps",),
        (_GA_BACKWARD,),
        lambda m, text: (2 if m.group(1).lower() == "twice" else int(m.group(2)),),
    ),
    SlotRule(("gradient_accumulation_steps",), (_GA, _GA_AFTER), _group_num),
)
_BATCH_RULES = (
    SlotRule(("train_batch_size",), (_TRAIN_BATCH,), _train_batch_or_product, only_if_unset=True),
    SlotRule(
        ("train_batch_size",),
        (_BATCH_AS_PRODUCT,),
        _batch_product,
        accept=lambda m, text: not _quoted(text, m.start(), lines=False) and not hearsay(text, m.start()),
        only_if_unset=True,
    ),
    SlotRule(
        ("base_batch_size", "train_batch_size"),
        (BATCH_CHANGE, _BATCH_CHANGE_FROM),
        lambda m, text: (int(m.group(1)), int(m.group(2))),
    ),
    SlotRule(("base_learning_rate",), (_LR,), _learning_rate),
)


def _batch(text: str, slots: Slots) -> None:
    _apply_first(_MICRO_RULES, text, slots)
    _apply_first(_GA_RULES, text, slots)
    _apply_each(_BATCH_RULES, text, slots)


# "GPU num is 8", "number of GPUs: 8", "GPU数量为8", "显卡数 4", "device number = 8".
_GPU_NUM = re.compile(
    r"(?:(?:gpu|device)s?\s*(?:num|count|number)|num(?:ber)?\s*of\s*(?:gpus?|cards?|devices)|"
    r"(?:gpu|显卡|卡|设备)\s*(?:数量|个数|数))" + SEP + r"(\d+)",
    re.I,
)
# "3 groups with 8 A100 graphics cards (total of 24 ...)", "共 16 张卡", "总共8卡": the total, whatever else was said.
_GPU_TOTAL = re.compile(
    r"(?:total(?: of)?|in total|altogether|一共|总共|共计|共)\s*(\d+)\s*(?:张|块|个)?\s*(?:[\w-]+\s+){0,2}?"
    r"(?:卡|显卡|gpus?(?![A-Za-z])|cards?(?![A-Za-z])|graphics)",
    re.I,
)
# "后来变成单卡", "switched to 4 GPUs": a later count replaces the earlier one.
_GPU_CHANGE = re.compile(
    r"(?:变成|变为|改成|改为|换成|改用|切到|switch(?:ed)? to|moved to|now (?:on|with|using))\s*"
    r"(单|\d+)\s*(?:张|块)?\s*(?:卡|gpus?(?![A-Za-z]))",
    re.I,
)
# "1 8xH100 node": nodes, then GPUs per node.
_NODES_OF_GPUS = re.compile(r"(?<![A-Za-z0-9.])(\d+)\s+(\d+)\s*[x×*]\s*[A-Za-z]*\d*\s*nodes?(?![A-Za-z])", re.I)
# "3*8*A100 (40G)", "2x8xH100", "4 × 8 × A800", "2*8 v100", "2x8 GPUs", "2*8卡": nodes × GPUs per node × the GPU,
# written as one product (not a factor of a batch formula, "bs 2*8 GPUs = 16", see _nodes_times_gpus).
_NODES_TIMES_GPUS = re.compile(
    r"(?<![A-Za-z0-9_.])(\d{1,3})\s*\\?[x×*]\s*(\d{1,2})(?:\s*\\?[x×*]\s*|\s*)"  # "3\*8*A100": Markdown-escaped
    # ("16*8*80G H800" (ms-swift #2228): the card's memory between the count and its name)
    r"(?:\d{2,3}\s*G(?:i?B)?\s*(?:的\s*)?)?"
    r"(?:" + _GPU_BRAND + _GPU_MODEL + r"|gpus?(?![A-Za-z])|cards?(?![A-Za-z])|显?卡)(?!\s*[*x×=])",
    re.I,
)
_FORMULA_BEFORE = re.compile(r"(?:batch|bs|size|accum\w*|ga|steps?)\s*[:=]?\s*$|[*×=]\s*$", re.I)


def _nodes_times_gpus(text: str) -> re.Match[str] | None:
    return next(
        (
            m
            for m in _NODES_TIMES_GPUS.finditer(text)
            # ("I have **2*2 T4-15GB GPU**": Markdown bold is no multiplication)
            if not _FORMULA_BEFORE.search(re.sub(r"\*\*|__", "", text[max(0, m.start() - 16) : m.start()]))
        ),
        None,
    )


# "单机16卡*32G显存 * 4机", "每台8卡 x 2台": the GPUs of one node, then times the nodes.
_PER_NODE_TIMES_NODES = re.compile(
    r"(?:单机|单台|单[节结]点|每台(?:机器)?|每机|每个?[节结]点)\s*(\d{1,2})\s*(?:张|块)?\s*(?:[A-Za-z]{0,4}\d{0,4}\s*)?(?:卡|显卡|gpus?)"
    r"[^\n。；;,，]{0,24}?[*x×]\s*(\d{1,3})\s*(?:台|个)?\s*(?:机器?|[节结]点|nodes?|machines?)",
    re.I,
)
# "使用了 16 *8=128 张 A800", "用了2*8张卡": nodes × GPUs per node written as a product (its result, when written,
# must agree), counted in 张/块 — the total is the product, not the last factor.
_PRODUCT_COUNT = re.compile(
    r"(?<![A-Za-z0-9_.])(\d{1,3})\s*\\?[x×*]\s*(\d{1,2})\s*(?:=\s*(\d{1,4})\s*)?(?:张|块)", re.I
)
_GPUS_PER_WORKER = re.compile(r"(?<![A-Za-z_])NUM_GPUS_PER_(?:WORKER|NODE)\s*=\s*[\"']?(\d{1,2})\b")
_NUM_WORKERS = re.compile(r"(?<![A-Za-z_])NUM_(?:WORKERS|NODES)\s*=\s*[\"']?(\d{1,4})\b")
_COUNT_WORD = {
    "one": 1,
    "single": 1,
    "a single": 1,
    "a": 1,
    "an": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "six": 6,
    "eight": 8,
    "sixteen": 16,
}
_COUNT_BEFORE = re.compile(
    # ("batch_size调成2,4张80g的A100": after a comma, a count with its measure word is still a count)
    r"(?:(?:(?<![A-Za-z0-9_.,，、/=:：])|(?<=[,，])(?=\d{1,2}\s*[张块台]))(\d{1,4})(?![\d.])|"
    r"\b(one|a single|single|two|three|four|six|eight|sixteen|an?)\b|"
    r"([一两二三四五六七八九十单双]))\s*(?:张|块|个|台|x|×|\*)?\s*(?:\(\s*)?"
    r"(?:core\s+|available\s+|idle\s+)?(?:nvidia\s+|tesla\s+)?(?:\d{1,3}\s*(?:g|gb|gib)\s*(?:显存)?\s*(?:的)?\s*)?(?:\*\*|__)?$",
    re.I,
)
_COUNT_AFTER = re.compile(
    # ("3090显卡x2", "A40（46G，4张）": the noun, or the size and a comma, between the card and its count; "RTX 4090 24G
    # 涡轮显卡 *2", Qwen #846: a two-character kind of card before the noun)
    r"^\s*\)?\s*(?:[-_(（]?\s*\d{1,3}\s*(?:g|gb|gib)\s*[)）,，]?\s*)?(?:(?:gpus?|[\u4e00-\u9fff]{0,2}显卡|cards?)\s*)?(?:[*x×]\s*(\d{1,4})(?![\d.])(?!\s*(?:g|gb|gib)(?![A-Za-z]))|"
    # "A100两张", "3090 4块": the Chinese count after the card
    r"(?:显卡|卡)?\s*(\d{1,2}|[一两二三四五六七八九十])\s*(?:张|块))",
    re.I,
)


def _count_at_gpu_names(text: str) -> int | None:
    """The count written at a GPU's name: "one 32GB V100", "single A100-80G", "2 16G A4000", "A100 80G * 1"; several
    of one card over a single one named beside them ("单张V100 … 换成四张2080ti": the cards the run is on), unless
    the several are someone else's ("README 里写着需要2个A100")."""
    found = _counts_at_gpu_names(text)
    return next((n for n, theirs in found if n > 1 and not theirs), found[0][0] if found else None)


_BATCH_VALUE_BEFORE = re.compile(r"(?:batch[ _-]?size|\bbs|\bbatch)\s*(?:of|=|:|is|为|是|设为)?\s*$", re.I)


def _own_gpu_names(text: str) -> set[str]:
    """The GPU names ``text`` gives outside quotes and hearsay ("the yaml comment says 4 V100s … my machine has only a
    Tesla T4": one name of the user's own)."""
    return {
        g.group(1).lower()
        for g in _GPU_NAME.finditer(text)
        if not (_quoted(text, g.start()) or hearsay(text, g.start()))
    }


def _counts_at_gpu_names(text: str) -> list[tuple[int, bool]]:
    out = []
    for m in _GPU_NAME.finditer(text):
        if _quoted(text, m.start()) or hearsay(text, m.start()):
            continue  # a quote, or a paper's / README's run ("the paper said they used 32 V100 GPUs")
        if _NODES_AFTER_NAME.match(text, m.end()):
            continue  # "two 80G A800 nodes": machines, counted by _NODES
        window = text[max(0, m.start() - 24) : m.start()]
        before = _COUNT_BEFORE.search(window)
        after = _COUNT_AFTER.match(text[m.end() : m.end() + 16])
        if before and before.group(2) and before.group(2).lower() in ("a", "an") and after:
            before = None  # "I used an A6000 (48GiB) * 8 device" (axolotl #1108): the article names the card
        if before:
            d, w, c = before.groups()
            if w and w.lower() in ("a", "an") and len(_own_gpu_names(text)) > 1:
                continue  # "a 24GB 3090 and a 16GB 4080": two cards, not one
            lead = window[: before.start()]
            if d and _BATCH_VALUE_BEFORE.search(lead):
                continue  # "with batch size of 8 (NVIDIA GeForce RTX 2070)" (tacotron2 #477): the batch, then the card
            theirs = bool(
                _NOT_THEIRS_BEFORE.search(lead)
                or _GPU_OTHERS.search(lead)
                or _INCREASED_TO.search(text[max(0, m.start() - 64) : m.start() - len(window) + before.start()])
            )
            out.append((int(d) if d else _COUNT_WORD[w.lower()] if w else _num(c), theirs))
            continue
        if after:
            out.append((_num(after.group(1) or after.group(2)), bool(_GPU_OTHERS.search(window))))
    return out


# A GPU count the user asks about or supposes: "Can i use 3 gpu card …", "如果用4张卡", "能否用两张卡".
_COUNT_PROPOSED = re.compile(
    r"(?:\b(?:can|could|should|shall) (?:i|we) (?:use|train with|run on|use a|have)|"
    r"能否|能不能|是否可以|可否)[^.。,，;；?？!！\n]{0,16}$",
    re.I,
)
_SELECTED_FROM = re.compile(r"\b(?:selecting|choosing|select|choose) (?:one )?(?:from|among)\s*$", re.I)
_EXAMPLE_BEFORE = re.compile(
    r"(?:\be\.?g\.?|\bfor (?:example|instance)|\bsuch as|比如|例如|譬如)\s*[,，:：]?\s*(?:(?:on|with|用|使用)\s*)?$",
    re.I,
)
_COMPARED_BEFORE = re.compile(
    r"(?:比|相比|\bthan|compared (?:to|with)|instead of|还是|或者|或是|\bor)\s*(?:用|使用|在|on|with)?\s*$", re.I
)
_OR_AFTER = re.compile(r"\s*(?:的\S{0,6}?)?\s*(?:还是|或者|或是|\bor\b)", re.I)
_ONE_CARD_AMOUNT = re.compile(
    r"\s*(?:的显存)?\s*(?:是|占用?了?|用了|到了?)\s*\d+(?:\.\d+)?\s*(?:g|gb|gib)\b[^。.!?？\n]{0,12}(?:其余|其他|其它|另外|别的)",
    re.I,
)
# What follows "一张卡" when it is one of the cards, not a count of one: its size ("我的一张显卡大小是8g"), or that it is
# occupied ("我有一张卡已经被占用了15G显存", LLaMA-Factory #24).
# ("nvidia-smi显示只有一个卡在占用（之前是两个）", RemoteSensingTeacher #15: how many cards nvidia-smi shows busy)
_EACH_CARD = re.compile(
    r"\s*(?:的)?\s*(?:大小|显存|内存|容量)|\s*(?:已经|已)?\s*被(?:别的|其他|其它)?\s*(?:程序|进程|任务)?\s*占|"
    r"\s*(?:还)?(?:在|有)\s*(?:占用|跑|运行|工作|计算)"
)
# What the run did against what was set: "但实际会只使用一张显卡", "却只用了一张卡".
_ACTUALLY_BEFORE = re.compile(r"(?:实际上?|却|结果)\s*(?:会|还是|也)?\s*$")
_MULTI_GPU = re.compile(
    r"多卡|多张卡|多\s*gpu|multi[-_ ]?gpus?|multiple gpus|more gpus|多机|multi[-_ ]?nodes?\b|multiple nodes", re.I
)
# … unless the user says the single GPU is theirs: "我才有单卡", "I only have one GPU".
_OWN_SINGLE = re.compile(
    r"我\S{0,3}(?:只有|才有|有|用|使用)\s*(?:一张|一块|单卡|单张)|\bI (?:only )?(?:have|use|own) (?:a single|one|1) gpu",
    re.I,
)


# "my 4090 is 24GB ram", "我的3090只有24G": the one card the user owns, named in the singular.
_MY_ONE_CARD = re.compile(
    r"\bmy\s+(?:nvidia\s+|geforce\s+)?"
    + _GPU_MODEL
    + r"\s+(?:is|has|only has)\b|我的\s*"
    + _GPU_MODEL
    + r"\s*(?:只有|是|有)",
    re.I,
)


# "但是如果单卡训练是不爆显存的", "faster than on one GPU": a single GPU supposed or compared, not the run's count.
_SUPPOSED_BEFORE = re.compile(
    # ("slower than that of a single GPU", 4D-Humans #139)
    r"(?:如果|假如|要是|若是?|换成|\bif\b|\bthan(?:\s+(?:that|those|the one)\s+(?:of|on|with|using))?|instead of|"
    r"compared (?:to|with)|相比|比)\s*(?:用|是|只用|使用|在|on|with|a)?\s*$",
    re.I,
)
_PROBLEM = re.compile(r"oom|out[- ]of[- ]memory|爆|报错|error|fail|crash|hang|卡住", re.I)
_SWITCHED = re.compile(
    r"(?:改用|换成|换用|改成|改为|切换到|switch(?:ed)? to|moved to|then (?:used|tried))\s*(?:deepspeed\s*)?$", re.I
)


# The cards a run uses, said after the machine's ("有4张卡 … 我配置了3张", "I have 8 GPUs but only use 4").
_USED_OF_OWNED = re.compile(
    r"(?:配置了|只用了?|用了|使用了|选了|指定了)\s*(\d{1,3}|[一两二三四五六七八九十])\s*(?:张|块|个\s*(?=卡|显卡|gpu|GPU))|"
    r"\bbut (?:I )?(?:only )?(?:use|used|using|run on|ran on) (\d{1,3}|one|two|three|four|six)\b",
    re.I,
)
# "上述图片给出的是单机8卡的，如果我现在2机8卡": the mention the user marks as theirs.
_MINE_BEFORE = re.compile(r"(?:我|我们|我现在|现在|目前|\bI\b|\bmy\b|\bwe\b|\bnow\b)[^.。,，;；\n]{0,12}$", re.I)


# "current default recipe requires 4 gpus", "官方说需要8卡", "if you do not have 4 gpus": a count someone else set or
# one the user lacks, right before the count (a "需要" further back is about something else).
_NOT_THEIRS_BEFORE = re.compile(
    # ("配置文件里面的学习率都是默认对应八卡嘛？…我单卡训练": the configs' count, not the user's)
    r"(?:requires?|required|needs?|recommends?|recommended|default|official|官方\S{0,4}|需要|要求|推荐|"
    r"默认(?:对应|使用|用的?|是|为|都是)?|"
    r"(?:do|does|don't|doesn't) not have|don't have|without|没有)\s*(?:at least|至少)?\s*$",
    re.I,
)


# "by increasing the number of video cards to 8 * A10G", "scaling up to 16 GPUs": a count supposed, not the run's.
_INCREASED_TO = re.compile(
    r"(?:increas|rais|scal|upgrad|go)\w*\s+(?:up\s+)?(?:(?:the\s+)?(?:number|count)\s+of\s+[\w ]{0,24}?\s*)?to\s*$|"
    r"(?:增加|加到|扩展|扩大)\S{0,8}?(?:到|至)\s*$",
    re.I,
)


def _own_mention(text: str, pattern: re.Pattern[str]) -> re.Match[str] | None:
    """The first match of ``pattern`` that the user marks as theirs, else the first match."""
    found = list(pattern.finditer(text))
    return next(
        (m for m in found if _MINE_BEFORE.search(text[max(0, m.start() - 14) : m.start()])), found[0] if found else None
    )


def _trl_global(m: re.Match[str], text: str) -> tuple[Any, ...]:
    """TRL's check, "The global train batch size (7 x 1) must be …": processes x per-device batch (train only)."""
    train = "train" in m.group(0).lower()
    return (int(m.group(1)), int(m.group(2))) if train else (None, None)


#: Counts written the way launchers and people write them, read before the phrase patterns of _parallel.
_COUNT_FIRST_RULES = (
    # TRL's check quoted inline ("ValueError: The global train batch size (1 x 1) must be evenly divisible …")
    SlotRule(("world_size",), (_TRL_GLOBAL,), lambda m, text: _trl_global(m, text)[:1]),
    SlotRule(("world_size",), (_GPUS_EN,), lambda m, text: (_EN_NUM[m.group(1).lower()],)),
)
#: `--num_gpus 4`, "GPU num is 8": a count by name, over a count read from a phrase.
_COUNT_NAMED_RULE = SlotRule(
    ("world_size",),
    (_GPUS_WORD, _GPU_NUM),
    _group_int(),
    # "GA * 卡数 = 32": a factor of the user's formula, its result is no GPU count
    accept=lambda m, text: not re.search(r"(?:[*×]|\sx)\s*$", text[max(0, m.start() - 4) : m.start()]),
)
# "an epoch takes about the same with 1 or 2 GPUs" (XLM #324), "2卡或4卡": the counts compared; the larger is the run in
# question (the one expected to be faster or to fit).
_GPU_ALTERNATIVES = re.compile(
    r"(?<![\w.])(\d{1,2})\s*(?:or|vs\.?|versus)\s*(\d{1,2})\s*(?:gpus?|cards?)(?![A-Za-z])|"
    r"(?<![\w.])(\d{1,2})\s*(?:gpus?|cards?)\s*(?:or|and|vs\.?|versus)\s*(\d{1,2})\s*(?:gpus?|cards?)(?![A-Za-z])|"
    r"(?<![A-Za-z0-9_.])(\d{1,2})\s*(?:张|块)?卡\s*(?:或|或者|还是|和|与|跟)\s*(\d{1,2})\s*(?:张|块)?卡|"
    r"(?<![A-Za-z0-9_.])(\d{1,2})\s*(?:或|或者|还是)\s*(\d{1,2})\s*(?:张|块)?卡",
    re.I,
)


# "8 GPUs or 4 GPUs, which is better?": a choice asked about, neither is the run
_CHOICE_ASKED = re.compile(r"[?？]|\bwhich\b|\bshould\b|哪|选", re.I)


def _sentence_with_mark(text: str, pos: int) -> str:
    """The sentence around ``pos`` with its end mark ("?" tells a question)."""
    start = max(text.rfind(c, 0, pos) for c in "\n。！!?？.") + 1
    ends = [i for i in (text.find(c, pos) for c in "\n。！!?？") if i >= 0]
    return text[start : (min(ends) + 1 if ends else len(text))]


#: "共 16 张卡" (the total), then "后来变成单卡" (a change): each later one wins.
_COUNT_LAST_RULES = (
    SlotRule(("world_size",), (_GPU_TOTAL,), _group_int()),
    SlotRule(("world_size",), (_GPU_CHANGE,), _group_num),
)
# "4-way Tensor Parallel * 2-way FSDP" (torchtitan #735), "8-way pipeline parallelism": the degree written first.
_WAY = r"(?<![\w.])(\d{1,3})[- ]?way[- ](?:%s)(?![A-Za-z])"
_PP_WAY = re.compile(_WAY % "pipeline|PP", re.I)
_TP_WAY = re.compile(_WAY % "tensor|TP", re.I)
_PARALLEL_SIZE_RULES = (
    SlotRule(("num_nodes",), (re.compile(r"单机|single[-_ ]node|one node", re.I),), _constant(1), only_if_unset=True),
    SlotRule(("pipeline_parallel_size",), (_PP, _PP_WAY), _group_int()),
    SlotRule(("tensor_parallel_size",), (_TP, _TP_WAY), _group_int()),
    SlotRule(("sequence_parallel_size",), (_SP,), _group_int()),
)


# "8 80G GPU (7 for training and 1 for vllm)", "8卡（6张用于训练，2张跑vLLM）": the GPUs the trainer runs on.
_TRAINING_SUBSET = re.compile(
    # (not a digit glued to a word: "I was using ZeRO3 for training" names a stage, DeepSpeed #1174)
    r"(?<![A-Za-z0-9_.])" + NUM + r"(?![\d.])\s*(?:张|块|个)?\s*(?:卡|显卡|gpus?(?![A-Za-z])|cards?(?![A-Za-z]))?\s*"
    r"(?:(?:are\s+)?(?:used\s+)?for|用于|用来|用作|做|跑)\s*(?:the\s+)?(?:training|trainer|train\b|policy training|训练)",
    re.I,
)
# "主卡占用10GB，另外3个卡占用8GB", "GPU0 uses 10GB and the other 3 GPUs 8GB": one card named, then "the other N".
_OTHER_CARDS = re.compile(
    r"(?:另外|其余|其他|其它|剩下的?|剩余的?|\bthe other|\bthe remaining|\bthe rest of the)\s*" + NUM + r"(?![\d.])",
    re.I,
)
_ONE_CARD_NAMED = re.compile(
    r"主卡|第一张卡|第一块卡|0号卡|卡\s*0(?!\d)|(?:gpu|cuda|rank)\s*[:#]?\s*0(?![\d.])|\b(?:the )?(?:first|main|master) (?:gpu|card)",
    re.I,
)
# verl's (and other FSDP trainers') sharded checkpoint files name the world size that saved them.
_SHARD_FILE_WORLD = re.compile(r"world_size_(\d{1,4})_rank_\d+", re.I)
# "我有4张卡，只用了2张", "8卡机器上只用了其中4张卡", "I only use 2 GPUs", "I use 2 out of 8 GPUs": the run's share.
_USED_SUBSET = re.compile(
    r"(?:只用了?|只使用了?|仅用了?|仅使用了?|(?:用|使用)了?其中(?:的)?|\bonly\s+(?:use|used|using|run on)|"
    r"\b(?:use|used|using|run on|ran on)(?=\s+\d+\s+(?:out\s+)?of\b))\s*(?:其中(?:的)?)?\s*"
    + NUM
    + r"(?![\d.])\s*(?:张|块|个)?\s*(?:卡|显卡|gpus?(?![A-Za-z])|cards?(?![A-Za-z]))?"
    r"(?:\s*(?:out\s+)?of\s+(?:the\s+|my\s+|them\b)?(\d+)?)?",
    re.I,
)
# Windows' GPU memory report "( 24 GPU and 3.9 Shared )": gigabytes of dedicated and shared memory, not a GPU count.
_SHARED_AFTER = re.compile(r"\s*(?:memory\s*)?(?:and|\+|,|/)\s*\d+(?:\.\d+)?\s*(?:g|gb|gib)?\s*shared", re.I)


def _gpu_count_fixes(text: str, slots: Slots) -> None:
    """A count the message qualifies: the training share of the GPUs, the ones used of those the machine has, or one
    named card plus "the other N"."""
    if slots.world_size is None:
        return
    for m in _USED_SUBSET.finditer(text):
        n = _num(m.group(1))
        counted = bool(re.search(r"张|块|卡|gpu|card", text[m.end(1) : m.end()], re.I)) or m.group(2) is not None
        if _SUPPOSED_BEFORE.search(text[max(0, m.start() - 10) : m.start()]) or re.match(
            r"[^。.;；\n]{0,12}(?:无法|不能|不够|不行|不足|装不下|can't|cannot|is not enough|isn't enough)",
            text[m.end() :],
        ):
            continue  # "仅用一张卡，我们是无法加载…": a count supposed to show it cannot work
        if _ACTUALLY_BEFORE.search(text[max(0, m.start() - 8) : m.start()]):
            continue  # "我脚本写的用4张显卡跑，但实际会只使用一张显卡然后爆内存" (ms-swift #1086): the symptom, not the run
        if counted and 1 <= n < slots.world_size and not _quoted(text, m.start()):
            slots.world_size = n
            return
    for m in _TRAINING_SUBSET.finditer(text):
        n = _num(m.group(1))
        if 1 <= n < slots.world_size and not _quoted(text, m.start()):
            slots.world_size = n
            return
    for m in _OTHER_CARDS.finditer(text):
        n = _num(m.group(1))
        if (
            n == slots.world_size
            and re.match(r"\s*(?:个|张|块)?\s*(?:卡|显卡|gpus?(?![A-Za-z])|cards?(?![A-Za-z]))", text[m.end() :], re.I)
            and _ONE_CARD_NAMED.search(text, 0, m.start())
        ):
            slots.world_size = n + 1
            return


_RUN_FAILED = re.compile(r"\boom(?:s|ed|ing)?\b|out[- ]of[- ]memory|爆|报错|\berror|\bfail|crash|raised|崩", re.I)
_RUN_WORKED = re.compile(
    r"\bworks?\b|\bworked\b|\bfine\b|\bok\b|no problem|succeed|正常|没问题|可以(?:跑|运行|训练)?|能跑|跑通", re.I
)


def _failing_count(text: str, counts: list[tuple[re.Match[str], int]]) -> int | None:
    """ "batch size 2 with 1 GPU, it works, batch size 2 in each GPU with 8 GPUs, it raised OOM": of two GPU counts,
    one told as working and one as failing, the failing run is the one asked about."""
    if len({n for _, n in counts}) < 2:
        return None
    outcomes = []
    for i, (m, n) in enumerate(counts):
        end = counts[i + 1][0].start() if i + 1 < len(counts) else len(text)
        clause = text[m.end() : min(end, m.end() + 60)]
        clause = re.split(r"[.。!！?？;；\n]", clause)[0]
        failed, worked = _RUN_FAILED.search(clause), _RUN_WORKED.search(clause)
        outcomes.append((n, bool(failed) and not worked, bool(worked) and not failed))
    failing = [n for n, f, _ in outcomes if f]
    if failing and any(w for _, _, w in outcomes) and len(set(failing)) == 1:
        return failing[0]
    return None


def _own_card_after(text: str, pos: int) -> bool:
    """A card the user names for their own run after a document's count: "官方给出的…8 * Nvidia A800 80 GB … 我想问是否能用
    nvidia 4090 24GB" (XVERSE-7B #2) asks about one 4090, not about the documentation's eight A800s."""
    return any(not hearsay(text, g.start()) for g in _GPU_NAME.finditer(text, pos))


# How many cards a board, chassis or server can take ("最大支持4张GPU", "supports up to 8 GPUs"): not a count it has.
_CAPACITY_BEFORE = re.compile(
    r"(?:最大|最多)\s*(?:支持|可以?(?:插|装|接|放)|能(?:插|装|接|放))\s*$|支持最多\s*$|"
    r"\b(?:supports?|holds?|fits?|takes?|accommodates?)\s+(?:up\s+to|a\s+max(?:imum)?\s+of)\s+$",
    re.I,
)


def _parallel(text: str, slots: Slots) -> None:
    m: re.Match[str] | None
    _apply_each(_COUNT_FIRST_RULES, text, slots)
    counts: list[tuple[re.Match[str], int]] = []
    examples: list[int] = []
    # (position, count) of a paper's or README's count: the run asked about only when the user states none
    heard: list[tuple[int, int]] = []
    for m in _GPUS.finditer(text):
        if m.group(1) == "单" or _quoted(text, m.start()):
            continue  # "单卡" is the fallback below (people contrast it with their multi-GPU run); quotes are others'.
        if hearsay(text, m.start()):
            # "The paper of CitriNet said they used 32 V100 GPUs … with single gpu" (NeMo #6649): the paper's run, not
            # theirs; "In the paper, you use batchsize = 512 and 8 GPUs. So does it mean …" (insightface #261) asks
            # about that run itself
            heard.append((m.start(), _num(m.group(1))))
            continue
        if m.group(1) in ("一", "1") and re.search(r"(?:每|各)\s*$", text[max(0, m.start() - 3) : m.start()]):
            continue  # "把模型加载到每一个卡上", "每1张卡": "each card", not a count of one
        if (_EACH_CARD.match(text, m.end()) or _ONE_CARD_AMOUNT.match(text, m.end())) and (
            m.group(1) in ("一", "1") or m.group(1).lower() in ("one",)
        ):
            continue  # "我的一张显卡大小是8g", "一个卡是22g，其余都是10g": one card's size or use, not how many
        if _COUNT_PROPOSED.search(text[max(0, m.start() - 30) : m.start()]):
            continue  # "Can i use 3 gpu card to train one sequence?": a count they ask about, not the one they have
        if _SELECTED_FROM.search(text[max(0, m.start() - 20) : m.start()]):
            continue  # Kaldi's "SelectGpuIdAuto(): Selecting from 8 GPUs": the GPUs visible, each process uses one
        if _EXAMPLE_BEFORE.search(text[max(0, m.start() - 24) : m.start()]):
            examples.append(_num(m.group(1)))  # "would a larger cluster help, eg 8xV100?": only if nothing else is
            continue
        if _COMPARED_BEFORE.search(text[max(0, m.start() - 8) : m.start()]) or _OR_AFTER.match(text, m.end()):
            continue  # "两块儿卡比一块卡还要慢", "是一块卡还是多块卡的step": a count compared with, or one of a choice
        if re.match(r"\s*(?:memory|mem\b|vram|显存|内存)", text[m.end() :], re.I) and re.search(
            r"[*x×]\s*\d{1,3}\s*(?:g|gb|gib)\b", m.group(0), re.I
        ):
            continue  # "32 *8 G GPU memory": the memory, sized per card times the cards, not a count of 32
        if m.group(1) in ("一", "1") and re.match(r"['’]", text[m.end() : m.end() + 1]):
            continue  # "on 8 a100, I find 1 gpu'memory is 93%": one of the cards' memory, not a count of one
        if _SHARED_AFTER.match(text, m.end()):
            continue  # "( 24 GPU and 3.9 Shared )": Windows' dedicated and shared GPU memory in GB
        if _CAPACITY_BEFORE.search(text[max(0, m.start() - 24) : m.start()]):
            continue  # "服务器主板 (最大支持4张GPU)" (Qwen #846): what a board or chassis takes, not the cards in it
        n = _num(m.group(1))
        # "3090" itself matches the GPU names; a count is small and not part of the model number.
        if 1 <= n <= 4096 and not re.match(r"\d{4,}", m.group(0)):
            counts.append((m, n))
    if any(n > 1 for _, n in counts):
        # "在一张V-100上存1.3B … 在 64卡上batch最大为512": one card named by its model beside several is what one card
        # holds, not the run's count (as at the names, _count_at_gpu_names)
        counts = [(m, n) for m, n in counts if n != 1 or not re.search(_GPU_MODEL + r"\s*$", m.group(0), re.I)]
    if counts:
        # "the recipe requires 4 gpus … If I only have one gpu": the count the user marks as theirs wins over one a
        # recipe or README requires; otherwise the first.
        own = [n for m, n in counts if _MINE_BEFORE.search(text[max(0, m.start() - 14) : m.start()])]
        others = [
            n
            for m, n in counts
            if not _NOT_THEIRS_BEFORE.search(text[max(0, m.start() - 24) : m.start()])
            and not _INCREASED_TO.search(text[max(0, m.start() - 64) : m.start()])
        ]
        slots.world_size = next(iter(own or others), None)
        several = [n for n in others if n > 1]
        if not own and slots.world_size == 1 and several and not _OWN_SINGLE.search(text):
            # "each epoch takes 21 seconds with 1 GPU. When using 2 GPUs, it also takes 21 seconds": one GPU beside
            # several is the baseline the multi-GPU run is compared with, as "单卡" is below
            slots.world_size = several[0]
        if (failing := _failing_count(text, counts)) is not None:
            slots.world_size = failing
        elif slots.world_size and (used := _USED_OF_OWNED.search(text)):
            # "有4张卡,单张是32G，我配置了3张" (Chinese-Vicuna #202): the cards the run uses, of those the machine has
            n_used = _COUNT_WORD.get((used.group(2) or "").lower()) or _num(used.group(1) or used.group(2))
            if 1 <= n_used < slots.world_size:
                slots.world_size = n_used
    if slots.world_size is None and (at_names := _count_at_gpu_names(text)) and 1 <= at_names <= 4096:
        slots.world_size = at_names
    # "单卡" last: people contrast it with their multi-GPU run ("单卡能跑，用3个12G的卡就爆了").
    if (
        slots.world_size is None
        and any(
            not _quoted(text, m.start()) and not _SUPPOSED_BEFORE.search(text[max(0, m.start() - 20) : m.start()])
            for m in re.finditer(r"单卡(?!\s*(?:的)?\s*(?:batch|bs|占用))|single[-_ ]gpu|one gpu|1 gpu", text, re.I)
        )
        and (not _MULTI_GPU.search(text) or _OWN_SINGLE.search(text))
    ):  # "单机多卡效果很差，然而用单卡跑效果就很好": the run in question is the multi-GPU one
        slots.world_size = 1
    if slots.world_size is None and counts and _MY_ONE_CARD.search(text):
        # "why do u need 2GPUs to run Qwen2.5 3B? … my 4090 is 24GB ram" (TinyZero #33): the count a recipe needs,
        # beside the one card the user owns
        slots.world_size = 1
    if slots.world_size is None and (counts or examples):
        # only a required count, or one given as an example, was written: still the one to compute with
        slots.world_size = counts[0][1] if counts else examples[0]
    if slots.world_size is None and heard and 1 <= heard[0][1] <= 4096 and not _own_card_after(text, heard[0][0]):
        slots.world_size = heard[0][1]
    _COUNT_NAMED_RULE.apply(text, slots)
    if slots.world_size == 1 and re.search(r"另一张|另外一张|另一块|the other (?:gpu|card)", text, re.I):
        slots.world_size = 2  # "一张显卡休息，另外一张显卡使劲工作": two cards
    if m := _PER_NODE_TIMES_NODES.search(text):
        slots.num_nodes, slots.world_size = int(m.group(2)), int(m.group(1)) * int(m.group(2))
    elif m := _NODES_OF_GPUS.search(text) or _nodes_times_gpus(text):
        slots.num_nodes, slots.world_size = int(m.group(1)), int(m.group(1)) * int(m.group(2))
    elif (m := _PRODUCT_COUNT.search(text)) and (
        m.group(3) is None or int(m.group(3)) == int(m.group(1)) * int(m.group(2))
    ):
        first, second = int(m.group(1)), int(m.group(2))
        slots.world_size = first * second
        if second <= 8 < first * second:
            slots.num_nodes = first  # "16*8": 16 nodes of 8
    elif m := _own_mention(text, _NODES_X_GPUS):
        a, b = next((m.group(i), m.group(i + 1)) for i in (1, 3, 5, 7) if m.group(i))
        nodes, per_node = _num(a), _num(b)
        if nodes == 1 and re.match(r"[一单]个", m.group(0)):
            # "两个节点，一个节点4 GPU": one node's GPUs, beside the node count of the run
            nodes = max((n for x in _NODES.finditer(text) if (n := _num(x.group(1))) <= 1024), default=1)
        slots.num_nodes, slots.world_size = nodes, nodes * per_node
        if b == "单" and _MULTI_GPU.search(text) and not _OWN_SINGLE.search(text):
            # "单机多卡sft训练报错，单机单卡正常": the single card is the working run the multi-GPU one is compared with
            slots.world_size = None
        each = _stated_per_node(text)
        if _TOTAL_MARK.search(m.group(0)) or (each is not None and nodes * each == per_node):
            # "4机共32张H100", "4 nodes with totally 32 gpus", "2个节点，8张卡（每个节点4卡）": the total
            slots.world_size = per_node
        elif per_node > 8 and per_node % nodes == 0 and not _PER_NODE_MARK.search(m.group(0)):
            # "双机16卡", "4机32卡": a count above a node's usual 8 with no "each/每/x" is the total
            # (LLaMA-Factory #4916 "单机八卡和双机16卡"); "2机8卡" stays 2 × 8 (LLaMA-Factory #7066: 16 shards).
            slots.world_size = per_node
    elif (
        (m := _NODES.search(text))
        and _num(m.group(1)) <= 1024  # ("四卡3090机器": a card's model number)
        # (not "on a 8 gpu machine", "an 8-GPU node" (transformers #27299): one machine of that many GPUs)
        and not (
            re.search(r"gpu", m.group(0), re.I)
            and re.search(r"\b(?:a|an|one|single)\s+$", text[max(0, m.start() - 8) : m.start()], re.I)
        )
    ):
        slots.num_nodes = _num(m.group(1))
        if slots.world_size and (slots.world_size < slots.num_nodes or _stated_per_node(text) == slots.world_size):
            # "8卡 2机", "两台机器 … 每台机器都是8卡", "2 nodes, 8 GPUs per node": the count was per node
            slots.world_size *= slots.num_nodes
    if (
        (alt := _GPU_ALTERNATIVES.search(text))
        and (slots.world_size is None or str(slots.world_size) in alt.groups())
        and not _CHOICE_ASKED.search(_sentence_with_mark(text, alt.start()))
    ):
        slots.world_size = max(int(g) for g in alt.groups() if g)  # (the smaller count is the baseline)
    _apply_each(_COUNT_LAST_RULES, text, slots)
    if slots.world_size is None and (m := _GPUS_PER_WORKER.search(text)):
        # DeepSpeedExamples' Megatron scripts: `NUM_WORKERS=1` (nodes) × `NUM_GPUS_PER_WORKER=2`
        workers = int(w.group(1)) if (w := _NUM_WORKERS.search(text)) else 1
        slots.world_size = int(m.group(1)) * workers
        if workers > 1:
            slots.num_nodes = workers
    if slots.world_size is None and (m := _SHARD_FILE_WORLD.search(text)):
        slots.world_size = int(m.group(1))  # FSDP/verl shard files "model_world_size_8_rank_0.pt": saved by 8 ranks
    _gpu_count_fixes(text, slots)
    if m := _ZERO_KEY.search(text) or next(
        (z for z in _ZERO.finditer(text) if not _in_stage_list(text, z) and not training_stage(text, z)), None
    ):
        slots.zero_stage = int(next(g for g in m.groups() if g is not None))
        # "ZeRO3 会报错 … 后面改用 ZeRO2 会出现显存OOM": the stage switched to is the run in question when the problem is
        # there ("改成zero stage2，训练只要17秒" is the comparison)
        for later in _ZERO.finditer(text, m.end()):
            if _SWITCHED.search(text[max(0, later.start() - 16) : later.start()]) and _PROBLEM.search(
                text, later.end(), later.end() + 30
            ):
                slots.zero_stage = int(next(g for g in later.groups() if g is not None))
    # DeepSpeed's `"offload_param": {"device": "none"}` and Accelerate's `offload_param_device: none`: named, turned off.
    off = [o.span() for o in _OFFLOAD_OFF.finditer(text)]
    on = [
        o
        for o in _OFFLOAD.finditer(text)
        if not any(a <= o.start() < b for a, b in off)
        and not _ASKED_HOW_TO.search(text[max(0, o.start() - 30) : o.start()])
    ]
    optimizer_on = [o for o in on if not _OFFLOAD_PARAM_KEY.match(text, o.start())]
    if (m := next(iter(on), None)) and _OFFLOAD_RULED_OUT.match(text, m.start()):
        slots.offload_optimizer = slots.offload_param = False
    elif (
        (m := next(iter(optimizer_on), None)) and not _negated(text, m.start()) and not _OFFLOAD_SWITCH_OFF.search(text)
    ):
        slots.offload_optimizer = True
        if any(not any(a <= p.start() < b for a, b in off) for p in _OFFLOAD_PARAM.finditer(text)):
            slots.offload_param = True
    elif on and not optimizer_on and not _negated(text, on[0].start()) and not _OFFLOAD_SWITCH_OFF.search(text):
        slots.offload_param = True  # only `offload_param` turned on: the optimizer states are not said to move
    elif (
        (m := next(iter(on), None)) is not None
        and _negated(text, m.start())
        and re.match(r"offload(?:ing)?\b", text[m.start() :], re.I)
    ):
        slots.offload_optimizer = slots.offload_param = False  # "without any offloading", "no offload": none at all
    for key, name in (("offload_optimizer", "(?:offload_optimizer|adam_offload)"), ("offload_param", "offload_param")):
        if getattr(slots, key) is None and any(re.match(r"\W*" + name, text[a:b], re.I) for a, b in off):
            setattr(slots, key, False)
    # Accelerate's `offload_optimizer_device: none` / `offload_param_device: none`: stated off.
    if slots.offload_optimizer is None and re.search(
        r"offload_optimizer(?:_device)?\s*[:=]\s*[\"']?(?:none|false|null|no)\b", text, re.I
    ):
        slots.offload_optimizer = False
    if slots.offload_param is None and re.search(
        r"offload_param(?:_device)?\s*[:=]\s*[\"']?(?:none|false|null|no)\b", text, re.I
    ):
        slots.offload_param = False
    _apply_each(_PARALLEL_SIZE_RULES, text, slots)


# ("half" only as a precision: "half precision", ".half()"; "Exactly half of the training steps" is none)
_PRECISION_MENTION = re.compile(
    # ("When I use `bf-16`", Lightning #12591: with a dash)
    r"(?P<bf16>bf-?16|bfloat16)|(?P<fp16>fp-?16|float16|半精度|(?<![A-Za-z0-9_])amp(?![A-Za-z0-9_])|\bhalf(?=[- ]?precision\b|\(\))|(?<![\w.])16[- ]?bits?\b)|"
    r"(?P<fp32>\bfp32\b|float32|float 32|全精度|单精度)|"
    # Lightning: precision=16, precision="16-mixed", "32-true", "bf16-mixed", "the precision is set to 16"
    r"precision[\"']?\s*(?:=|:|：|(?:is\s+)?(?:set|changed?)\s+(?:it\s+)?to|to|is|as|为|设为|设置为|改为|改成)?\s*[\"']?"
    r"(?:(?P<l16>16)|(?P<l32>32))(?:-mixed|-true)?(?!\d)",
    re.I,
)
# The type a tensor is cast to or is found in ("peft casts data from 16 to 32 bits", "param.data.to(torch.float32)",
# "转换为fp32", "Input type into Linear4bit is torch.float16"): not the precision the user trains in.
_CAST_TO = re.compile(
    r"(?:cast\w*|convert\w*|upcast\w*)\b[^.\n]{0,30}\bto\s*(?:torch\.)?$|\.to\(\s*(?:torch\.)?$|"
    r"\b(?:is|got|but|and)\s+torch\.$|(?:转换|转|cast)\S{0,3}(?:为|成|到)\s*$",
    re.I,
)
# "is set to 16", "改成 bf16": the value the user set, over a default shown earlier ("precision = 32" in the code).
_SET_TO = re.compile(r"(?:set|changed?|switch(?:ed)?)\s+(?:it\s+)?to|设为|设置为|改为|改成|换成", re.I)
# "no_fp16", "V100 doesn't support bf16", "downcast_bf16: 'no'", "use_fp16=false", "bnb_4bit_compute_dtype=torch.bfloat16"
_PRECISION_OFF_BEFORE = re.compile(
    r"(?:no[_-]|not\s|without\s|n't support\s|not support\s|不支持|disable\w*\s|instead of\s|"
    r"rather than\s|compute_dtype\W{0,3}(?:torch\.)?|downcast_)[^\s,，、。;；]{0,12}$",
    re.I,
)
_PRECISION_OFF_AFTER = re.compile(
    # (a launch flag with its value after a space: "--fp16 false --bf16 true")
    r"^\w*[\"']?\s*[:=]\s*[\"']?(?:no|false|flase|none|0)\b|^[\"']?\s*:\s*\{\s*[\"']enabled[\"']\s*:\s*false|"
    r"^\w*[ \t]+(?:false|flase)\b",
    re.I,
)
# "V100 上 bf16不支持，用fp16", "bf16 is not supported on my card": what the card cannot do. Not a precision the run
# uses, and not a switch turned off either (the run may be fp16 or fp32: nothing is concluded from it).
_FLAG_KEY = re.compile(r"\w*[\"']?\s*[:=]")
_PRECISION_UNSUPPORTED_AFTER = re.compile(
    r"^\s*(?:也|都)?(?:不支持|不能用|用不了|不可用|is not supported|isn't supported|not supported|unsupported)", re.I
)


_HALF = r"(?:bf16|bfloat16|fp16|float16|半精度|混合精度|mixed[-_ ]precision|amp)"
_VS = r"\s*(?:vs\.?|versus|对比|compared (?:to|with)|相比)\s*"
_HALF_VS_FP32 = re.compile(
    rf"(?<![A-Za-z]){_HALF}{_VS}(?:fp32|float32|全精度|单精度)\b|\bfp32{_VS}{_HALF}(?![A-Za-z])|"
    # "Mixed precision training slower than float32", "bf16 比 fp32 还慢": fp32 after "than" is the baseline
    rf"(?<![A-Za-z]){_HALF}[\w ]{{0,30}}?\b(?:slower|faster|worse|better)\s+than\s+(?:even\s+)?(?:pure\s+)?"
    rf"(?:fp32|float32)\b|(?<![A-Za-z]){_HALF}[^。.\n]{{0,12}}比\s*(?:fp32|float32|全精度|单精度)|"
    # "混合精度训练和float32训练速度差不多" (Paddle #42436): the two runs compared, the half one the user's
    rf"(?<![A-Za-z]){_HALF}(?:训练)?\s*(?:和|与|跟|同)\s*(?:fp32|float32|全精度|单精度)",
    re.I,
)


#: How close a flag switched on and the same flag switched off must be to be one comparison (a sentence).
_FLAG_PAIR_SPAN = 100
_HALF_NAME = r"(?:fp16|bf16|float16|bfloat16|half)"
_PRECISION_ALTERNATIVE = re.compile(r"\s*/\s*" + _HALF_NAME + r"(?![A-Za-z0-9])", re.I)
_PRECISION_ALTERNATIVE_BEFORE = re.compile(r"(?<![A-Za-z0-9])" + _HALF_NAME + r"\s*/\s*$", re.I)
_SWITCHED_ON = re.compile(r"[\"']?\s*(?:[:=]\s*|\s+)[\"']?(?:true|1)\b", re.I)


_FLAG_ASKED_BEFORE = re.compile(
    r"(?:应该|要不要|是否|需不需要|该不该|should\s+(?:i|we)|do\s+(?:i|we)\s+need\s+to)\s*(?:用|使用|开|加|设置?|use|set|pass|add)?\s*$",
    re.I,
)


def _precision(text: str, slots: Slots) -> None:
    """The first precision the text names for training, skipping ones it turns off or names for something else."""
    low = text.lower()
    deepspeed = bool(re.search(r"deepspeed|zero|train_micro_batch_size_per_gpu|\bds\b", low))
    if re.search(r"pure[-_ ]?bf16|纯\s*bf16", low):
        slots.precision = "bf16"
        return
    switched_off = False
    mentions = list(_PRECISION_MENTION.finditer(text))
    # "setting fp16/bf16=True", "model in float16/bfloat16": two precisions offered as alternatives name neither run
    # (transformers #30100 set `fp16=True`, then asked which of "fp16/bf16=True" styles is mixed precision)
    listed = [
        m
        for m in mentions
        if _PRECISION_ALTERNATIVE.match(text, m.end()) or _PRECISION_ALTERNATIVE_BEFORE.search(text[: m.start()])
    ]
    if listed and len(listed) < len(mentions):
        mentions = [m for m in mentions if m not in listed]
    # "AMP" names mixed precision, not its dtype: "torch.cuda.amp … bf16" is bf16 (fp16 only when nothing else is named)
    if any(m.lastgroup in ("bf16", "fp16") and m.group(0).lower() != "amp" for m in mentions):
        mentions = [m for m in mentions if m.group(0).lower() != "amp"]
    # "`use_fp16=true` and `use_fp16=false` require the same memory": one flag set both ways is what the user
    # compares, not the run's precision (another mention, "full float 32", may say it)
    # (side by side: "set fp16=True … the memory is the same as using fp16=False" two sentences apart states the run)
    flags: dict[tuple[str, str], list[tuple[int, bool]]] = {}
    for m in mentions:
        if m.lastgroup in ("bf16", "fp16") and (key := _FLAG_KEY.match(text, m.end())):
            glued = re.search(r"[\w.-]*$", text[max(0, m.start() - 24) : m.start()])
            name = (glued.group(0) if glued else "") + m.group(0) + key.group(0)
            flags.setdefault((m.lastgroup, name.lower()), []).append(
                (m.start(), not _PRECISION_OFF_AFTER.match(text[m.end() : m.end() + 40]))
            )
    both = {
        kind
        for (kind, _), seen in flags.items()
        if any(on and not off and abs(a - b) <= _FLAG_PAIR_SPAN for a, on in seen for b, off in seen)
    }
    if both:
        mentions = [m for m in mentions if m.lastgroup not in both]
    # (a key switched on, "fp16: true", "--bf16 True", is set too: over "…_bf16_0524/…" in an output path beside it)
    set_to = [
        m
        for m in mentions
        if _SET_TO.search(m.group(0))
        or _SET_TO.search(text[max(0, m.start() - 14) : m.start()])
        or _SWITCHED_ON.match(text, m.end())
    ]
    if set_to and set_to[0] is not mentions[0]:
        mentions = set_to + [m for m in mentions if m not in set_to]
    # "when I used model().cuda().half() … torchrun … --bf16 True": a launch flag is the run's, over a cast in a sentence
    # (not a flag asked about: "如果base模型是bf16，我训练启动的时候的参数应该用--bf16吗？… lora训练的时候指定了--fp16",
    # LLaMA-Factory #2029, trained with --fp16)
    flagged = [
        m
        for m in mentions
        if text[max(0, m.start() - 2) : m.start()] == "--"
        and not _FLAG_ASKED_BEFORE.search(text[max(0, m.start() - 16) : m.start() - 2])
    ]
    if flagged and flagged[0] is not mentions[0]:
        mentions = flagged + [m for m in mentions if m not in flagged]
    # "混合精度 vs fp32 显存对比", "fp32 vs bf16 memory": fp32 is the baseline the half precision is measured against;
    # the precision the question is about is the half one.
    if _HALF_VS_FP32.search(text):
        mentions = [m for m in mentions if m.lastgroup not in ("fp32", "l32")] or mentions
        if not any(m.lastgroup in ("bf16", "fp16", "l16") for m in mentions):
            slots.precision = "bf16-mixed" if deepspeed else "amp-bf16"  # "混合精度" alone: bf16 as below
            slots._precision_unnamed = True
            return
    for m in mentions:
        if _CAST_TO.search(text[max(0, m.start() - 48) : m.start()]):
            continue
        if m.lastgroup in ("bf16", "fp16") and (
            re.search(r"no[_-]$", text[max(0, m.start() - 3) : m.start()], re.I)
            or _PRECISION_OFF_AFTER.match(text[m.end() : m.end() + 40])
        ):
            switched_off = True  # "no_fp16", "fp16": {"enabled": false}
            continue
        if (
            _PRECISION_OFF_BEFORE.search(text[max(0, m.start() - 24) : m.start()])
            or _PRECISION_OFF_AFTER.match(text[m.end() : m.end() + 40])
            or _PRECISION_UNSUPPORTED_AFTER.match(text[m.end() : m.end() + 24])
        ):
            continue
        kind = m.lastgroup
        if kind == "bf16":
            slots.precision = "bf16-mixed" if deepspeed else "amp-bf16"
        elif kind in ("fp16", "l16"):
            slots.precision = "fp16-mixed" if deepspeed else "amp-fp16"
        else:
            slots.precision = "fp32"
        return
    # (Accelerate's `mixed_precision: 'no'` turns it off: fp32, as `--mixed_precision no` does)
    off = re.compile(r"[\"']?\s*[:=\s]\s*[\"']?no\b")
    named = [
        m
        for m in re.finditer(r"混合精度|mixed[-_ ]precision", low)
        if not (_PRECISION_OFF_AFTER.match(low[m.end() : m.end() + 40]) or off.match(low, m.end()))
    ]
    if named:
        slots.precision = "bf16-mixed" if deepspeed else "amp-bf16"
        slots._precision_unnamed = True
    elif switched_off or re.search(r"mixed[-_]precision" + off.pattern, low):
        slots.precision = "fp32"  # half precision turned off and no other named: fp32 training
    else:
        # a loss-scaler line pasted into the prose ("it says: Found NaN, decreased lg_loss_scale to 19.0"): fp16
        _apply_first(_PRINTED_PRECISION_RULES, text, slots)


# "Llama3-70B 8K全参数微调": a context length written right after the model's size.
_SIZE_THEN_CONTEXT = re.compile(r"(?<![\d.])\d+(?:\.\d+)?\s*[bB]\s+(\d+)()\s*[kK](?![A-Za-z0-9])")


# "70B训8k只能设bs=1", "训练32k的时候OOM": a length in k right after the verb is the training length.
_TRAIN_AT_K = re.compile(r"训(?:练)?(?:到|在)?\s*(\d+(?:\.\d+)?)\s*([kK])(?![A-Za-z0-9])")


# "context size: 256 input, 256 target = 512 total", "256 prompt + 256 response tokens": a length told as its input and
# its target part, which one training sequence holds together.
_LENGTH_PARTS_AFTER = re.compile(
    r"\s*(?:tokens?\s*)?(?:of\s+)?(?:input|source|prompt|输入)s?\s*(?:\+|,|，|and|和)\s*(\d{1,6})\s*(?:tokens?\s*)?"
    r"(?:of\s+)?(?:target|output|answer|response|completion|label|输出)s?(?:\s*=\s*(\d{1,7}))?",
    re.I,
)


def k_tokens(k: float) -> int:
    """A length written in k as tokens: "4k", "32k", "1.5k" are 1024 × k (4096, 32768, 1536: the lengths models are
    built with), but a round ten that is no power of two is decimal: "200k长度" (GLM-4 #483) is 200,000, not 204,800."""
    if k == int(k) and int(k) % 10 == 0 and int(k) & (int(k) - 1):
        return int(k) * 1000
    return int(k * 1024)


#: A length written as a product with 1024 or 1000, right after its first factor: "128 * 1024 tokens".
_TIMES_KILO = re.compile(r"\s*[*×xX]\s*(1024|1000)(?![\d.])")


def _times_kilo(value: float, text: str, end: int) -> float:
    """``value`` times the 1024 or 1000 written right after it ("a max_seq_length of 64 * 1024 tokens", unsloth
    #1291); ``value`` itself otherwise."""
    if value <= 1024 and (times := _TIMES_KILO.match(text, end)):
        return value * int(times.group(1))
    return value


def _length(m: re.Match[str], text: str) -> tuple[Any, ...]:
    """ "2048", "4k", "1.5k" → tokens; a number no run uses is no length."""
    value = float(k_tokens(float(m.group(1)))) if m.group(2) else float(m.group(1))
    if not m.group(2):
        value = _times_kilo(value, text, m.end())
    if (parts := _LENGTH_PARTS_AFTER.match(text, m.end())) and not m.group(2):
        total = value + int(parts.group(1))
        if parts.group(2) is None or int(parts.group(2)) == total:
            value = total
    return (int(value) if 1 <= value <= 10**7 else None,)


_SEQ_RULES = (
    SlotRule(("seq_len",), (_SEQ_CHANGE, _SEQ_FROM_OPEN), _length),
    SlotRule(
        ("seq_len",),
        (_SEQ, _SEQ_TOKENS, _TRAIN_AT_K),
        _length,
        accept=lambda m, text: not _DATA_LONGER_THAN.search(text, max(0, m.start() - 60), m.start()),
    ),
    SlotRule(("seq_len",), (_SIZE_THEN_CONTEXT,), lambda m, text: (k_tokens(int(m.group(1))),)),
)


def _sequence(text: str, slots: Slots) -> None:
    _apply_first(_SEQ_RULES, text, slots)


# "如果不是全参微调应该用哪个指令", "not a full fine-tune", "instead of full fine-tuning": the method the user does not use.
_FULL_NOT_BEFORE = re.compile(
    r"(?:不是|不用|不做|不想|并非|而非|非|没有|没|\bnot(?: an?)?|\bno|instead of|rather than)\s*$", re.I
)
_FULL = re.compile(
    r"全量|全参|全(?:模型)?微调|全模型训练|全部微调|full[-_ ]?\s?(?:scale[-_ ]?)?(?:fine[-_ ]?tun|ft\b|parameters?|params?\b|sft|training)|fully f[iu]ne[-_ ]?tun|"
    r"full finetun|fully fine[-_ ]?tun|(?:fine[-_ ]?tune|train)\s+the\s+full\s+model|"
    # "train a full 7B model", "it is a full model training" (TRL #1187)
    r"(?:fine[-_ ]?tune|train)\s+a\s+full\s+(?:\d+(?:\.\d+)?\s*[bB]\s+)?model|full\s+model\s+(?:training|fine[-_ ]?tun)|"
    r"finetuning_type\W{0,4}full|"
    # "fine-tuning all parameters of the model", "train the whole model", "全部参数微调", "所有参数都参与训练"
    r"(?:fine[-_ ]?tun\w*|train\w*|updat\w*)\s+(?:all\s+(?:the\s+)?(?:model(?:'s)?\s+)?(?:parameters|params|weights)|"
    r"the\s+(?:entire|whole)\s+model)|(?:全部|所有)参数\s*(?:都)?\s*(?:参与)?\s*(?:微调|训练|更新)",
    re.I,
)
# Unsloth's `full_finetuning = False`: the full fine-tune turned off (an adapter is trained).
_FULL_SET_OFF = re.compile(r"\w*\s*[=:]\s*(?:False|false|0)\b")
# (not the name of akegarasu's lora-scripts, the SD training GUI that also runs full fine-tunes: a path
# "F:\\lora-scripts-v1.6.2\\sd-models" says nothing of the method; its `model_train_type` does, _KOHYA_TRAIN_TYPE)
_LORA = re.compile(r"q?lora(?![-_ ]?scripts)|\bpeft\b|get_peft_model|finetuning_type\W{0,4}lora", re.I)
# lora-scripts' (kohya sd-scripts GUI) method key: `model_train_type = "sdxl-finetune"` / "sd-lora" / "flux-lora" /
# "sd-dreambooth" (mikazuki/app/api.py picks sdxl_train.py, train_network.py … from it): a fine-tune or DreamBooth run
# trains the whole U-Net, a LoRA one an adapter.
_KOHYA_TRAIN_TYPE = re.compile(
    r"\bmodel_train_type[\"']?\s*[:=]\s*[\"']?[\w.]+(?:-[\w.]+)*?-(lora|finetune|dreambooth)\b", re.I
)
# A method the user names as the other option, not theirs: "rather than lora", "also tried LoRA", "alternatives … LoRA".
_OTHER_METHOD = re.compile(
    r"(?:rather than|instead of|not|without|alternatives?|considering|also tried|tried using|tried|"
    r"而不是|不用|不使用|没用|不是|换成|试过|也试了?|是否|能否|可否|要不要)[^.。;；\n]{0,40}$",
    re.I,
)
# … where only a question word puts it there ("是否可以lora微调13b模型？"): the method asked about, which is the setup
# to answer for unless the message states another one ("全参数微调是否可行……是否可以多阶段lora微调？").
_ASKED_METHOD = re.compile(r"(?:是否|能否|可否|要不要)[^.。;；\n]{0,40}$")
# "without any PEFT and Quantization": the whole model is trained.
# The method key frameworks write: LLaMA-Factory's `finetuning_type`, ms-swift's `train_type` (`sft_type` before 3.0).
_METHOD_KEY = re.compile(
    r"(?<![\w-])-{0,2}(?:finetuning|train|sft|tuning)_type[\"']?\s*(?:[:=]|\s)\s*[\"']?(full|lora|qlora|freeze)\b", re.I
)
# A LoRA switch set off: `--use_lora False`, `use_lora=0`, `--use-peft false`, `use_llm_lora: 0` (InternVL's LLM LoRA).
# (matched from a token's start only: scanned from every character, a long run of word characters took seconds)
_LORA_OFF = re.compile(r"(?<![\w-])[\w-]*(?:lora|peft)[\w-]*[\"']?\s*(?:[:=]|\s)\s*[\"']?(?:false|no|none|0)\b", re.I)
# … the plain switch (not a part-specific one such as `use_backbone_lora`): the whole model is trained; so is a LoRA
# rank of 0 (ColossalAI Chat's `--lora_rank 0`, DeepSpeed-Chat's `--lora_dim 0`: their default, no LoRA; ColossalAI #4470)
_USE_LORA_OFF = re.compile(
    r"(?<![\w-])-{0,2}(?:use[-_](?:lora|peft)[\"']?\s*(?:[:=]|\s)\s*[\"']?(?:false|no|0)|"
    r"lora[-_](?:rank|dim)[\"']?\s*(?:[:=]|\s)\s*0)\b",
    re.I,
)
# QLoRA as a switch: FastChat's `--q_lora True`, open-instruct's `--use_qlora`, "Q-LoRA" (never a file: "q_lora.py").
_QLORA = re.compile(r"(?<![\w/.])-{0,2}(?:use_)?q[-_]?lora(?![\w.])", re.I)
# Freeze tuning (LLaMA-Factory's `finetuning_type: freeze`) as people write it: "freeze微调", "freeze tuning".
_FREEZE = re.compile(
    r"(?<![A-Za-z_])freeze[-_ ]?(?:tuning|微调|训练|方式|fine[-_ ]?tun\w*)|冻结(?:部分)?(?:层|参数)?微调", re.I
)
# ("when I disable the lora and set requires_grad=True", "关闭lora", "去掉了LoRA": the adapter switched off)
_NO_ADAPTER = re.compile(
    r"(?:without|no|不用|不使用|没有用|没用|disabled?|disabling|turn(?:ed|ing)?\s+off|switch(?:ed|ing)?\s+off|"
    r"关闭了?|关掉了?|去掉了?|不加)\s*(?:(?:using|use|applying)\s+)?(?:any\s+|the\s+)?(?:peft|lora|adapters?|适配器)"
    r"(?![A-Za-z0-9_])|"
    # the switch after the name: "with LoRA disabled", "LoRA turned off", "lora 关掉"
    r"(?<![A-Za-z0-9_])(?:peft|lora|adapters?|适配器)\s+(?:(?:is|was)\s+)?(?:disabled|turned\s+off|switched\s+off)|"
    r"(?<![A-Za-z0-9_])(?:peft|lora|适配器)\s*(?:关闭|关掉|去掉)",
    re.I,
)


# P-Tuning (v2): ChatGLM's ptuning/ scripts, whose flag is `--pre_seq_len` (the prefix length, not the sequence length).
_PTUNING = re.compile(
    r"(?<![A-Za-z])p[-_ ]?tun?ing(?:[-_ ]?v2)?|(?<![A-Za-z])pre_seq_len\b|(?<![A-Za-z0-9_])ptv2(?![A-Za-z0-9])", re.I
)
# Base weights loaded in 8 / 4 bits: "load_in_8bit=True", "--quantization 8bit", "--quantization_bit 4", "int8", "4-bit",
# "8比特". Never an 8-bit optimizer ("adamw_8bit", "8 bit Adam", "Adam8bit") or a function name
# ("prepare_model_for_int8_training").
_QUANT = re.compile(
    # (Llama-Chinese's finetune scripts: `--load_in_bits 4`)
    r"load_in_(?P<lq>[48])bit|(?:quantization_bit|load_in_bits)\W{0,3}(?P<qb>[48])(?!\d)|"
    r"(?<![A-Za-z_])(?:int(?P<int>[48])|(?P<bits>[48])[-_ ]?bits?|(?P<cn>[48四八])\s*比特)(?![A-Za-z0-9_])",
    re.I,
)
_QUANT_NOT_BEFORE = re.compile(
    r"(?:adam\w*|optim\w*|非|no[-_ ]|not\s|without\s|不用|不使用|没有?开?|"
    # set aside in the question: "如果不考虑 int4/8 量化", "excluding 4-bit", "leaving aside int8"
    r"不考虑|不算|不包括|抛开|撇开|exclud\w*\s|ignoring\s|(?:leaving|setting) aside\s)\W{0,2}$|\$\{?\w*$",
    re.I,
)
# … nor a flag set from a shell variable (`--load-in-4bit $load_in_4bit`): its value is not in the message.
_QUANT_NOT_AFTER = re.compile(
    r"^\W{0,2}(?:adam|optim)|^\w*[\"']?\s*[:=]\s*[\"']?(?:false|flase|no|none|0)\b|^\w*[\"']?(?:\s*=\s*|\s+)[\"']?\$",
    re.I,
)
# Someone else's setup named before it: "the examples use int8/int4", "官方示例都是 int4".
_QUANT_OTHERS = re.compile(
    r"(?:示例|例子|官方|官网|文档|readme|paper|论文|examples?|tutorial|教程)[^.。;；\n]{0,20}$", re.I
)


def _quantization(text: str, slots: Slots) -> None:
    """The bits the base weights are loaded in, from the first mention that is the user's own and switched on."""
    for m in _QUANT.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if "#" in text[line_start : m.start()] and not text[line_start : m.start()].lstrip().startswith("#!"):
            continue  # a comment next to a setting ("enable_int8 = False # qlora int8")
        if (
            _QUANT_NOT_BEFORE.search(text[max(0, m.start() - 12) : m.start()])
            or _QUANT_NOT_AFTER.match(text[m.end() : m.end() + 24])
            or _QUANT_OTHERS.search(text[max(0, m.start() - 30) : m.start()])
            or _quoted(text, m.start())
        ):
            continue
        digit = next(g for g in m.groups() if g is not None)
        slots.quantization = "int8" if digit in ("8", "八") else "int4"
        return


_COMMENT = re.compile(r"(?<=\S)[ \t]+#\s.*$", re.M)


# An environment report's package line ("- PEFT version: 0.12.0", "peft==0.10.0"): installed, not the method used.
_PACKAGE_LINE = re.compile(
    r"^(?![^\n]*lora)[ \t>*-]*`?[\w .-]{1,30}`?\s*(?:version)?\s*[:=]=?\s*v?\d+\.\d+[\w.+-]*[ \t]*$", re.I | re.M
)


# "量化加载的模型", "train 里是量化加载的", "the model is loaded quantized", "on the quantized base model": the base weights
# are quantized (no bit count written).
_QUANTIZED_LOAD = re.compile(
    r"量化加载|加载量化|以量化(?:方式|形式)?加载|量化后的(?:基座|底座)?模型|量化的(?:基座|底座)?模型|"
    r"\bload(?:ed|ing|s)?\s+(?:it\s+|the\s+(?:base\s+)?model\s+)?(?:in\s+)?quantized\b|"
    r"\bquantized\s+(?:base\s+)?(?:model|weights)\b",
    re.I,
)


# A recipe's file name names its method: LLaMA-Factory's "llama3_full_sft.yaml", xtuner's
# "mixtral_8x7b_instruct_full_oasst1_e3.py" (`<model>_<method>_<dataset>_e<epochs>`).
_RECIPE_FULL = re.compile(r"[a-z0-9]_full_(?:sft|pt|dpo|ppo|kto|rm|orpo)\b|[a-z0-9]_full_[a-z0-9]+_e\d+\b", re.I)


_METHOD_WORD = r"(qlora|lora|full[- ](?:fine[- ]?tun\w*|parameter\w*|finetun\w*)|全参(?:数)?|全量)"
# "I use LoRA", "I'm using QLoRA", "我用的是lora", "我使用全参微调": the method the user says they run.
_OWN_METHOD = re.compile(
    r"(?:\bI(?:'m| am)?\s+(?:use|using|run|running|do|doing|train with|training with)|我用的是?|我使用的?是?|我用|我在用|我采用的?是?)"
    r"\s*(?:the\s+|a\s+)?" + _METHOD_WORD,
    re.I,
)
# "switched from LoRA to full fine-tuning", "从lora改成全参": the method switched to is the run in question.
_METHOD_SWITCH = re.compile(
    r"(?:switch(?:ed|ing)?|mov(?:ed|ing)|chang(?:ed|ing)|went)\s+from\s+(?:qlora|lora|full[\w -]{0,20}?)\s+to\s+"
    + _METHOD_WORD
    + r"|从\s*(?:qlora|lora|全参(?:数)?|全量)\S{0,6}?(?:改成|换成|改为|切换到|切到|换到)\s*"
    + _METHOD_WORD,
    re.I,
)


# "不量化的lora", "LoRA without quantization", "unquantized LoRA": plain LoRA, a QLoRA named beside it the run before.
_PLAIN_LORA = re.compile(
    r"(?:不(?:做|进行|使用|用)?量化的?|非量化的?|未量化的?|\bun-?quantized|\bnon-?quantized)\s*(?:的)?\s*lora(?![a-z])|"
    r"\blora\s*(?:\(\s*)?(?:without|with no|w/o)\s+(?:any\s+)?quantization|lora\s*(?:微调)?\s*(?:不量化|不做量化)",
    re.I,
)


_LORA_ASIDE = re.compile(r"还是|或者|或是|只能|而不是|不用|\bor\b|instead of|rather than|\bnot\b", re.I)
_LORA_REJECTED = re.compile(
    r"[^.。,，;；?？\n]{0,12}?(?:\b(?:is|are|was)\s+not\b|\bisn'?t\b|不是|不行|不适合|不够|不好)", re.I
)


_OUTPUT_DIR = re.compile(r"(?<![\w-])-{0,2}(?:output_dir|save_dir|logging_dir|save_path)[\"']?\s*[:= ]\s*\S+", re.I)


_WORKED = re.compile(
    r"\b(?:everything (?:is|was|went) (?:ok|okay|fine|well)|works? (?:fine|well)|worked(?: fine| well)?|ran fine|runs fine|"
    r"no problems?)\b|没问题|都正常|运行正常|能跑|可以跑|跑通|(?:可以|能)(?:稳定|正常)训练|训练正常",
    re.I,
)
_FAILED = re.compile(r"\booms?\b|out[- ]of[- ]memory|爆显存|显存不足|显存溢出|训崩|报错|\berror\b|\bfail", re.I)
# clauses: "lora没问题，全量微调就爆显存", "LoRA works fine, but full fine-tuning OOMs"
_SENTENCE_END = re.compile(r"[.。;；!！?？\n，,]|\s(?=but\b)")


def _sentence_at(text: str, i: int) -> str:
    start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, i)), default=0)
    end = _SENTENCE_END.search(text, i)
    return text[start : end.start() if end else len(text)]


def _in_worked_sentence(text: str, i: int) -> bool:
    sentence = _sentence_at(text, i)
    if not (_WORKED.search(sentence) or _FAILED.search(sentence)) and (end := _SENTENCE_END.search(text, i)):
        # "我尝试了用lora方法进行sft，模型可以稳定训练": the outcome in the clause right after the method's
        sentence = _sentence_at(text, end.end())
    return bool(_WORKED.search(sentence)) and not _FAILED.search(sentence)


def _failing_sentences(text: str) -> list[str]:
    """The sentences that report the failure ("but I met the OOM problem"); none when nothing failed."""
    return [s for s in _SENTENCE_END.split(text) if _FAILED.search(s)]


# Accelerate's `fsdp_sharding_strategy: FULL_SHARD` (or its number, 1-5), HF Trainer's `--fsdp "full_shard auto_wrap"`,
# `sharding_strategy=ShardingStrategy.SHARD_GRAD_OP`: the strategy written.
_FSDP_STRATEGY = re.compile(
    r"(?:fsdp_sharding_strategy|sharding_strategy)[\"']?\s*[:=]\s*[\"']?(?:ShardingStrategy\.)?"
    r"(full_shard|shard_grad_op|no_shard|hybrid_shard(?:_zero2)?|_hybrid_shard_zero2|[1-5])\b"
    r"|(?:--fsdp|\bfsdp)[\"']?\s*[=:]?\s*[\"'\[]?\s*[\"']?(full_shard|shard_grad_op|no_shard|hybrid_shard(?:_zero2)?)\b",
    re.I,
)
_FSDP_NUMBERED = {"1": "full_shard", "2": "shard_grad_op", "3": "no_shard", "4": "hybrid_shard", "5": "hybrid_shard"}
# FSDP named: "fsdp", "FSDP2", "fully_shard(", "FullyShardedDataParallel" (FULL_SHARD is the default of both APIs)
_FSDP_NAMED = re.compile(r"(?<![A-Za-z_])fsdp2?(?![A-Za-z])|FullyShardedDataParallel|\bfully_shard\b", re.I)
# ... but not as one choice of several or a proposal ("FSDP or DeepSpeed?", "instead of FSDP", "should I use FSDP")
_FSDP_NOT_USED_BEFORE = re.compile(
    r"(?:instead of|rather than|compared? (?:to|with)|\bvs\.?|versus|\bor|should i (?:use|try)|whether|"
    r"是否|要不要|还是|或者|而不是|比)\s*(?:pytorch\s*)?$",
    re.I,
)
# … or said to be off: "with fsdp and EMA turned off" (StableCascade #26), "FSDP disabled", "fsdp 关掉"
_FSDP_NOT_USED_AFTER = re.compile(
    r"\s*(?:or|vs\.?|versus|还是|或者|和\s*deepspeed|and deepspeed)\b|"
    r"(?:\s*(?:and|&|和|/)\s*[\w-]{1,12})?\s*(?:(?:is|was|were|are)\s+)?(?:turned\s+off|switched\s+off|disabled)\b|"
    r"(?:\s*(?:和|/)\s*[\w-]{1,12})?\s*(?:都)?(?:关闭|关掉|没开|不开)",
    re.I,
)


def _fsdp(text: str, slots: Slots) -> None:
    """The FSDP strategy of the run: the one written, or FULL_SHARD (the default) when FSDP is named as what the run
    uses. Never next to a ZeRO stage (the two are alternatives: which one ran is not clear) or when offered as a choice."""
    if slots.zero_stage:
        return
    if (m := _FSDP_STRATEGY.search(text)) and not _quoted(text, m.start()):
        raw = (m.group(1) or m.group(2)).lower().lstrip("_")
        slots.fsdp = _FSDP_NUMBERED.get(raw, "hybrid_shard" if raw.startswith("hybrid") else raw)
        return
    for m in _FSDP_NAMED.finditer(text):
        if (
            _negated(text, m.start())
            or _quoted(text, m.start())
            or _FSDP_NOT_USED_BEFORE.search(text[max(0, m.start() - 24) : m.start()])
            or _FSDP_NOT_USED_AFTER.match(text, m.end())
        ):
            continue
        slots.fsdp = "full_shard"
        return


# Full fine-tuning and LoRA offered as the two options of one question ("full fine-tuning/LoRA", "全参还是lora",
# "LoRA or full fine-tune?"): the question is about both, so neither is the method (the answer gives each).
_OR_WORD = r"\s*(?:/|\bor\b|\bvs\.?|\bversus\b|还是|或者|或)\s*"
_METHODS_OFFERED = re.compile(
    r"(?:" + _FULL.pattern + r")\w*" + _OR_WORD + r"\W{0,2}q?lora(?![A-Za-z])|"
    r"(?<![A-Za-z])q?lora(?:[-_ ]?(?:fine[-_ ]?tun\w*|微调|训练))?" + _OR_WORD + r"(?:" + _FULL.pattern + r")",
    re.I,
)


def _finetune(text: str, slots: Slots) -> None:
    text = _COMMENT.sub("", text)  # "enable_int4 = False # qlora int4": a comment names options, not the method used
    text = _PACKAGE_LINE.sub("", text)
    low = text.lower()
    # "--output_dir saves/Qwen-72B-int4-Chat/…": where a run saves (a name copied from another run), not its weights' bits
    _quantization(_OUTPUT_DIR.sub("", text), slots)
    # "(no LoRA)", "--use_lora False", `use_llm_lora: 0`: the method named and turned off.
    off = [m.span() for m in _NO_ADAPTER.finditer(text)] + [m.span() for m in _LORA_OFF.finditer(text)]
    lora = [
        m
        for m in _LORA.finditer(text)
        if not _OTHER_METHOD.search(text[max(0, m.start() - 48) : m.start()])
        and not any(a <= m.start() < b for a, b in off)
    ]
    if lora and (failing := _failing_sentences(text)):
        # "I used this script to fine-tune codellama with Lora and everything is ok … I want to fine-tune with fsdp and
        # bf16, but I met the OOM problem": the method of the run that worked is not the failing run's
        lora = (
            [m for m in lora if not _in_worked_sentence(text, m.start())]
            if not any(_LORA.search(s) for s in failing)
            else lora
        )
    # a full fine-tune the user states (not "官方给出的…进行全量微调": the documentation's run)
    fulls = [m for m in _FULL.finditer(text) if not hearsay(text, m.start())]
    full_stated = bool(fulls)
    if full_stated:
        # "全量微调72B遇到OOM … 还是说72B只能lora方式微调？", "(full parameter)? … so lora is not the best option": next to a
        # stated full fine-tune, LoRA named as the alternative asked about or ruled out is not the method used.
        lora = [
            m
            for m in lora
            if not _LORA_ASIDE.search(re.split(r"[.。;；\n]", text[max(0, m.start() - 30) : m.start()])[-1])
            and not _LORA_REJECTED.match(text[m.end() : m.end() + 40])
        ]
    asked = [
        m
        for m in _LORA.finditer(text)
        if _ASKED_METHOD.search(text[max(0, m.start() - 48) : m.start()])
        and not _OTHER_METHOD.search(_ASKED_METHOD.sub("", text[max(0, m.start() - 48) : m.start()]))
        and not any(a <= m.start() < b for a, b in off)
    ]
    if not lora and asked and not (full_stated or _METHOD_KEY.search(text) or _FREEZE.search(text)):
        lora = asked
    ptuning = [m for m in _PTUNING.finditer(text) if not _OTHER_METHOD.search(text[max(0, m.start() - 48) : m.start()])]
    if ptuning and (not lora or ptuning[0].start() < lora[0].start()):
        slots.finetune = "ptuning"  # the calculators have no P-Tuning: the answer says so instead of a number
        return
    if kohya := _KOHYA_TRAIN_TYPE.search(text):
        slots.finetune = "lora" if kohya.group(1).lower() == "lora" else "full"
        return
    if key := _METHOD_KEY.search(text):
        # the framework's own method key decides (`--train_type full` next to `--tuner_backend peft`)
        slots.finetune = key.group(1).lower()  # "freeze" too: the answer says it has no figure for it
        if slots.finetune == "qlora" and slots.quantization is None:
            slots.quantization = "int4"
        if slots.finetune == "lora" and slots.quantization == "int4":
            slots.finetune = "qlora"  # LLaMA-Factory's QLoRA: `finetuning_type: lora` + `quantization_bit: 4`
        if slots.finetune in ("lora", "qlora") and (r := _RANK.search(text)):
            slots.lora_rank = int(r.group(1))
        return
    # "I use LoRA", "switched from LoRA to full fine-tuning": the user's own method, read once for both uses below
    own = _OWN_METHOD.search(text) or _METHOD_SWITCH.search(text)
    if _METHODS_OFFERED.search(text) and not own:
        return  # "with 4 40G A100 (full fine-tuning/LoRA)?": both asked about, neither is the run's method
    full = (
        next(
            (
                m
                for m in fulls
                if not _FULL_NOT_BEFORE.search(text[max(0, m.start() - 12) : m.start()])
                and not _FULL_SET_OFF.match(text, m.end())
            ),
            None,
        )
        or _NO_ADAPTER.search(text)
        or _USE_LORA_OFF.search(text)
    )
    if full and (not lora or (_NO_ADAPTER.search(text) and full_stated)):
        # (a full fine-tune stated and the adapter said to be off, "train a full 7B model … without using Lora", wins
        # over a bare mention of LoRA elsewhere: "I only change the Lora and remove the quantization part")
        slots.finetune = "full"
    elif (
        "qlora" in low
        or any(not any(a <= q.start() < b for a, b in off) for q in _QLORA.finditer(text))
        # 4-bit base weights as _quantization read them (not a commented-out, someone else's or `$variable` one)
        or slots.quantization == "int4"
        or "nf4" in low
    ):
        slots.finetune = "qlora"
    elif lora:
        slots.finetune = "lora"
        q = _QUANTIZED_LOAD.search(text)
        if slots.quantization is None and q and not _negated(text, q.start()):
            slots.finetune = "qlora"  # LoRA trained on a model loaded quantized, bits unsaid: QLoRA's recipe
    elif full:
        slots.finetune = "full"
    elif _FREEZE.search(text):
        slots.finetune = "freeze"  # some layers trained, the rest frozen: neither full nor LoRA
    elif _RECIPE_FULL.search(text):
        slots.finetune = "full"
    if own:
        # "I use LoRA" beside a QLoRA/LoRA comparison, "switched from LoRA to full fine-tuning": the user's own method
        word = own.group(own.lastindex or 1).lower()
        method = "qlora" if "qlora" in word else "lora" if "lora" in word else "full"
        if method != slots.finetune and not (method == "lora" and slots.finetune == "qlora" and slots.quantization):
            slots.finetune = method
            if method != "qlora" and slots.quantization == "int4" and not _QUANT.search(text):
                slots.quantization = None
    if slots.finetune == "qlora" and _PLAIN_LORA.search(text):
        # "xtuner的qlora配置…可以, 但是我希望尝试不量化的lora": the run asked about drops the quantization
        slots.finetune, slots.quantization = "lora", None
    if slots.finetune == "qlora" and slots.quantization is None:
        slots.quantization = "int4"  # QLoRA is LoRA on 4-bit base weights
    if slots.finetune in ("lora", "qlora") and (m := _RANK.search(text)):
        slots.lora_rank = int(m.group(1))


# `gradient_checkpointing: bool = field(default=False, …)`, `gradient_checkpointing=False`: the key is named, turned off.
_KEY_OFF = re.compile(
    r"\w*[\"']?\s*(?:(?::\s*bool\s*)?[:=]\s*(?:field\(\s*default\s*=\s*)?[\"']?(?:false|no|none|0)\b|"
    r"\s+(?:false|none)\b)",  # a launch flag: `--gradient_checkpointing false`
    re.I,
)


def _checkpointing(m: re.Match[str], text: str) -> tuple[Any, ...]:
    if _negated(text, m.start()) or _KEY_OFF.match(text, m.end()):
        return ("none",)
    return ("selective" if re.search(r"selective|选择性", text, re.I) else "full",)


_CKPT_RULE = SlotRule(("gradient_checkpointing",), (_CKPT,), _checkpointing)
# A log that says the package could not be imported, wherever the prose mentions it first: "Warning: import flash_attn
# fail, please install FlashAttention" (Qwen #1002), "No module named 'flash_attn'".
_FLASH_IMPORT_FAILED = re.compile(
    r"import\s+flash[-_]?attn\w*\s+fail|No module named\s+['\"]?flash[-_]?attn|"
    r"flash[-_]?attn\w*\s+(?:is\s+)?not\s+(?:available|found)",
    re.I,
)
_TRY_IMPORT_BEFORE = re.compile(r"\btry(?:ing)?\s+(?:to\s+)?import(?:ing)?\s+$", re.I)
_ATTENTION_RULES = (
    SlotRule(("flash_attention",), (_FLASH_IMPORT_FAILED,), _constant(False)),
    SlotRule(
        ("flash_attention",),
        (_FLASH,),
        lambda m, text: (not (_negated(text, m.start()) or _FLASH_OFF.match(text, m.end())),),
        # "Try importing flash-attention for faster inference...": a model's loading message, not the setting
        accept=lambda m, text: not _TRY_IMPORT_BEFORE.search(text, max(0, m.start() - 20), m.start()),
    ),
    SlotRule(("flash_attention",), (_EAGER,), _constant(False)),
)


# HF Trainer's `--optim adamw_torch_fused` / `optim: adamw_torch` and a plain `torch.optim.AdamW(…)` (foreach on CUDA
# unless `fused=True`).
_ADAMW_FUSED = re.compile(r"adamw_torch_fused|(?:torch\.optim\.)?AdamW\([^\n]{0,200}?fused\s*=\s*True", re.I)
_ADAMW_FOREACH = re.compile(
    r"(?:--optim\b|\boptim\s*[:=])\s*[\"']?adamw_torch(?![\w])|torch\.optim\.AdamW\((?![^\n]{0,200}?fused\s*=\s*True)",
    re.I,
)
_OPTIMIZER_RULES = (
    SlotRule(("adamw_kernel",), (_ADAMW_FUSED,), _constant("fused")),
    SlotRule(("adamw_kernel",), (_ADAMW_FOREACH,), _constant("foreach")),
)


def _memory_features(text: str, slots: Slots) -> None:
    _CKPT_RULE.apply(text, slots)
    _apply_first(_ATTENTION_RULES, text, slots)
    _apply_first(_OPTIMIZER_RULES, text, slots)


# ---- named settings: `PER_DEVICE_BATCH_SIZE=1`, `--per_gpu_train_batch_size=8`, `"gradient_accumulation_steps": 8`,
# `accumulate_grad_batches: 2`, `set micro_train_batch_size as 2`. Every framework spells its keys its own way; the
# words inside a key say what it is, so the key is split into words and classified instead of listed.
_ASSIGN = re.compile(
    # (not a factor of a product written out, "micro*GA*num_gpus = 128"; a Markdown "**key**" is still a key)
    # ("batch size 128 * accumulated_grad_batch 16= 2048" (peclr #17): after a number, a factor named with its value)
    r"(?<![A-Za-z0-9_.$\-])(?<![A-Za-z_)][*×])(?<![A-Za-z_)]\s[*×])(?<![A-Za-z_)][*×]\s)(?<![A-Za-z_)]\s[*×]\s)"
    # (a Chinese verb needs no space around it: "micro_train_batch_size设置为2")
    # (a key never ends a sentence: "an unchangeable batchsize. 31995 steps …" sets nothing)
    # (detectron2's "_C.SOLVER.IMS_PER_BATCH = 16": a config node's leading underscore)
    r"-{0,2}((?:_[A-Z]\.)?[A-Za-z][A-Za-z0-9_.\-]{0,60}?)(?<![.\-])[\"']?\s*(?:=|:|：|\s*(?:设置为|设置成|设为|设成|改为|改成|为)\s*|"
    r"\s(?:is|as|to|of|为|是|设为|设置为)\s"
    r"(?:(?:the|original|default|a|an)\s){0,2}|\s(?=\d))\s*"
    r"[\"']?(\d+(?:\.\d+)?(?:[eE]-?\d+)?|one|two|three|four|eight|sixteen)\b(?![.\d]*\s*(?:%|[kKmMgGbB]\b))"
)
_KEY_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_WORD_NUM = {"one": 1, "two": 2, "three": 3, "four": 4, "eight": 8, "sixteen": 16}
#: Key words that make a batch key something other than the training batch (evaluation, generation, RL rollouts).
_NOT_TRAIN = {
    "eval",
    "evaluation",
    "test",
    "valid",
    "validation",
    "val",
    "infer",
    "inference",
    "generation",
    "gen",
    "rollout",
    "prompt",
    "predict",
    "prediction",
    "forward",
    "logprobs",
    "ref",
    "reward",
    "critic",
    "sample",
    "samples",
    "vllm",
    "max",
    "min",
    "buffer",
    "dataloader",
    "step",
    "steps",
}


def _key_words(key: str) -> list[str]:
    return [w.lower() for w in _KEY_WORDS.findall(key.replace("-", "_").replace(".", "_"))]


_SEQ_KEYS = {
    "passage_max_len",  # FlagEmbedding's: the passage side is the longer one (query_max_len is the query's)
    "max_seq_len",
    "max_seq_length",
    "ctx_len",  # RWKV-LM's train.py
    "ctxlen",
    "seq_len",
    "seq_length",
    "cutoff_len",
    "max_length",
    "model_max_length",
    "max_len",
    "block_size",
    "sequence_len",
    "sequence_length",
    "max_source_length",
    "context_length",
    "max_seq",
    "max_words",
    "max_tokens_per_sample",
    "max_position",
    "override_max_seq_length",  # LitGPT's finetune scripts
    "data_max_length",  # LOMO's config (LOMO #53)
}


def classify_key(key: str) -> str | None:
    """The setup key a config / command / env key names, from the words in it; None when it names none of ours.

    ``per_device_train_batch_size``, ``PER_DEVICE_BATCH_SIZE``, ``device_train_microbatch_size``,
    ``micro_train_batch_size`` → the micro batch; ``global_train_batch_size``, ``train_batch_size`` (DeepSpeed's
    name for the global batch) → the global batch; ``GRADIENT_ACCUMULATIONS``, ``accumulate_grad_batches``,
    ``grad_accum`` → GA; ``eval_batch_size``, ``rollout_batch_size`` → None.
    """
    if "." in key.strip("."):
        # A dotted key (verl's trainer.nnodes, Hydra overrides): the whole key, else its last segment when the
        # prefix names no eval / rollout / inference section (rollout.log_prob_micro_batch_size_per_gpu is not ours).
        whole = _classify_words(key)
        prefix, _, last = key.strip(".").rpartition(".")
        # (verl's actor_rollout_ref.actor.* is the actor's training section: "rollout" there names the worker group)
        actor = prefix.rpartition(".")[2].lower() == "actor"
        if whole is not None or (set(_key_words(prefix)) & _NOT_TRAIN and not actor):
            return whole
        return _classify_words(last)
    return _classify_words(key)


def _classify_words(key: str) -> str | None:
    # (OpenRLHF's micro_train_bsize; RWKV-LM's --micro_bsz)
    words = ["batch" if w in ("bsize", "bsz") else w for w in _key_words(key)]
    if "batch" in words and re.search(r"bsi?ze?", key, re.I):
        words.append("size")
    if not words or len(words) > 9:
        return None
    joined = "_".join(words)
    ws = set(words)
    if "accum" in joined or "accumulat" in joined:
        if ws & (_NOT_TRAIN - {"steps", "step"}):
            return None  # eval_accumulation_steps
        # Caffe's accum_batch_size is the batch gradients are accumulated to, not a number of steps
        # (peclr #17's "accumulated_grad_batch 16" names Lightning's accumulate_grad_batches: no "size", a count)
        batch_size = "batch" in joined and ("size" in ws or "batchsize" in ws) and "batches" not in ws
        return "train_batch_size" if batch_size else "gradient_accumulation_steps"
    if joined in ("update_freq", "num_microbatches", "multistep_optimizer_steps"):
        # fairseq's --update-freq; T5X's / Megatron's num_microbatches; YANMTT's --multistep_optimizer_steps (its
        # train_nmt.py prints "gradients will be accumulated over N batches")
        return "gradient_accumulation_steps"
    if joined in _SEQ_KEYS or joined.replace("lenght", "length") in _SEQ_KEYS:
        return "seq_len"  # ("--model_max_lenght=1638": the common misspelling, Qwen #634)
    if joined == "batch_size_forward":
        return "train_micro_batch_size_per_gpu"  # MoGe's one forward pass's batch (not a rollout's forward_batch_size)
    if joined.endswith(("batch_size_per_im", "batch_size_per_image")):
        # Detectron's / detectron2's ROI_HEADS.BATCH_SIZE_PER_IM(AGE): RoIs sampled per image for the box head, not
        # images (Detectron #106; the image batch is IMS_PER_BATCH)
        return None
    if joined == "ims_per_batch":
        # detectron2's SOLVER.IMS_PER_BATCH: "Number of images per batch across all machines" (config/defaults.py)
        return "train_batch_size"
    if joined in ("samples_per_gpu", "imgs_per_gpu"):
        return "train_micro_batch_size_per_gpu"  # mmdetection 2.x data.samples_per_gpu (1.x imgs_per_gpu)
    if ws & _NOT_TRAIN:
        return None
    if ("batch" in joined and ("size" in ws or "batchsize" in ws or "microbatch" in joined)) or words[-1] == "bs":
        if ws & {"micro", "microbatch", "device", "gpu", "per"}:
            return "train_micro_batch_size_per_gpu"
        if ws & {"global", "total", "totol", "effective"} or joined in (
            "train_batch_size",
            "train_batchsize",  # "train_batchsize=64" next to "per device batch size=1 / 2 / 4"
            "global_batch_size",
        ):
            return "train_batch_size"
        # llama-recipes' --batch_size_training is per GPU
        if joined in ("batch_size", "bs", "batchsize", "per_device_batch_size", "batch_size_training"):
            return "train_micro_batch_size_per_gpu"
        return None
    # "batch_per_device=7" (LLaVA #425), Qwen-VL-Series-Finetune's BATCH_PER_DEVICES=8: a batch per device, no "size"
    if words[0] == "batch" and len(words) == 3 and words[1] == "per" and words[2] in ("device", "devices", "gpu"):
        return "train_micro_batch_size_per_gpu"
    if joined in (
        "nproc_per_node",
        "num_processes",
        "num_gpus",
        "world_size",
        "n_gpu",
        "n_gpus",
        "gpu_num",
        "num_gpu",
        "nproc",
        "gpus_per_node",  # verl's trainer.n_gpus_per_node, per node like nproc_per_node
        "ntasks_per_node",  # Slurm's srun/sbatch: one task per GPU, per node
        "num_of_gpus",
        "number_of_gpus",
        "gpu_count",
        "ngpus",
        "n_gpus_per_node",
        "num_devices",  # Qwen-VL-Series-Finetune's NUM_DEVICES=8
        "devices",  # Lightning's Trainer(devices=8, num_nodes=1): per node, like num_gpus
        "num_gpus_per_node",
        "num_gpu_cores",  # bert-multi-gpu's --num_gpu_cores (its TPU-style name for the GPU count)
    ):
        return "world_size"
    if joined in ("nnodes", "num_nodes", "num_machines", "n_nodes", "nodes"):
        return "num_nodes"
    if joined in ("learning_rate", "lr"):
        return "base_learning_rate"
    if joined in ("zero_stage", "zero_optimization_stage"):
        return "zero_stage"
    if joined in ("lora_rank", "lora_r"):
        return "lora_rank"
    if joined in (
        "tensor_parallel_size",
        "tensor_model_parallel_size",
        "tp_size",
        "tp",
        "autotp_size",
        "model_parallel_size",
        "mp_size",  # CogVLM / SAT's finetune scripts: `MP_SIZE=4` splits the model over 4 GPUs (CogVLM #368)
    ):
        return "tensor_parallel_size"
    if joined in ("pipeline_parallel_size", "pipeline_model_parallel_size", "pp_size", "pp"):
        return "pipeline_parallel_size"
    if joined in (
        "sequence_parallel_size",
        "sequence_parallel",
        "ulysses_sequence_parallel_size",
        "context_parallel_size",
        "sp_size",
        "cp_size",
    ):
        return "sequence_parallel_size"
    return None


# A dataclass field's default: `per_device_train_batch_size: int = field(default=1, ...)`.
_FIELD_DEFAULT = re.compile(
    r"(?<![\w.])([A-Za-z_]\w{0,60})\s*:\s*[\w\[\], .]{1,30}=\s*(?:field\(\s*default\s*=\s*)?"
    r"(\d+(?:\.\d+)?(?:[eE]-?\d+)?)\b"
)


# A setting passed a variable with its value in a comment: `per_device_train_batch_size=args.batch_size #4,`,
# `--gradient_accumulation_steps $GA  # 8`: the comment says what the variable holds.
_COMMENTED_VALUE = re.compile(
    r"(?<![\w.])-{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(?:=|\s)\s*\$?\{?[A-Za-z_][\w.\[\]'\"]*\}?\s*,?\s*\\?\s*#\s*"
    r"(\d+(?:\.\d+)?(?:e-?\d+)?)(?![\w.])"
)


# A paper's own setting in the same sentence ("the paper uses bs=2048", "论文中使用的 bs=2048").
_PAPER_VALUE_BEFORE = re.compile(
    r"(?:\b(?:the|in the|their|your)\s+(?:\w+\s+)?paper\b|论文|原文)[^.。;；?？!！,，\n]{0,30}$", re.I
)

_ASKED_AFTER = re.compile(r"[^.。;；!！\n]{0,80}?(?:\?|？|吗)")


def _counts_per_node(key: str) -> bool:
    """A GPU count set under this name counts one node's GPUs when a node count is set beside it: `nproc_per_node`,
    `n_gpus_per_node`, and the launchers' and Lightning's `num_gpus` / `gpus` (DeepSpeed's `--num_gpus` and
    Lightning's `gpus`/`devices` are per node; METER #30 `num_gpus=4 num_nodes=8` trains on 32). `world_size` and
    Accelerate's `num_processes` are the total."""
    words = set(_key_words(key))
    return (
        {"per", "node"} <= words
        or (bool(words & {"gpu", "gpus", "ngpus"}) and not words & {"world", "processes"})
        or words == {"devices"}  # Lightning's Trainer(devices=8, num_nodes=2)
    )


#: A device-id list where a GPU count could stand: PaddlePaddle's launcher `--gpus=0,1` (the GPUs of each machine).
_GPU_IDS_FLAG = re.compile(r"--(?:gpus|devices)[= ][\"']?(\d{1,2}(?:\s*,\s*\d{1,2})+)(?![\d.])")
#: PaddlePaddle's launcher `--ips="192.168.4.17,192.168.4.7"`: the machines of one multi-node run.
_NODE_IPS = re.compile(r"--ips[= ][\"']?((?:\d{1,3}(?:\.\d{1,3}){3})(?:\s*,\s*\d{1,3}(?:\.\d{1,3}){3})+)")
# Slurm's generic resource request: `--gres=gpu:4`, `#SBATCH --gres=gpu:a100:8`, `--gpus-per-node=8` (GPUs per node).
_GRES_GPUS = re.compile(r"--gres[= ]gpu:(?:[A-Za-z][\w-]*:)?(\d{1,2})\b|--gpus-per-node[= ](\d{1,2})\b")


#: Inside Lightning's `Trainer(` / `Fabric(` call, where a bare `devices=` is the run's GPUs per node.
_IN_TRAINER_CALL = re.compile(r"\b(?:Trainer|Fabric)\s*\([^()]*$")


# "每张卡放一个sample", "每卡1条数据", "每张卡上放 2 个样本": the samples one GPU takes per step, i.e. the micro batch;
# so is "单卡bs也需要19200/24=800" (FlagEmbedding #153: the per-card share of a paper's batch_size=19200 on 24 cards).
_PER_CARD_SAMPLES = re.compile(
    r"每张?卡上?(?:放|跑|处理|是|有|分到)?\s*(\d{1,4}|一|两|二|四|八)\s*(?:个|条)?\s*(?:sample|样本|数据)|"
    r"单卡(?:的)?\s*(?:bs|batch[_ ]?size|batch)\s*(?:也|就|都)?\s*(?:需要|要|是|为|=|：|:)?\s*"
    r"(?:\d+\s*/\s*\d+\s*=\s*)?(\d{1,6})(?![\d./])",
    re.I,
)
_CN_COUNT = {"一": 1, "两": 2, "二": 2, "四": 4, "八": 8}
_SHARD_ID = re.compile(r"--shard_id\b")
_PER_CARD_BEFORE = re.compile(r"(?:单卡|每张?卡)(?:的|上)?\s*$")


def _names_the_device_batch(key: str) -> bool:
    """`micro_batch_size`, or a script's shell variable `PER_DEVICE_BATCH_SIZE`: a key that says it is one device's
    and sits beside a global one. (Not HF's `--per_device_train_batch_size` in a sentence: "没法设置 batch_size 为1 …
    `--per_device_train_batch_size 1` 时实际 batch_size = 2" (ms-swift #4710) uses the bare name for the per-GPU one.)"""
    words = set(_key_words(key))
    shell_variable = key.isupper() and "per" in words and bool(words & {"device", "gpu", "devices", "gpus"})
    return "micro" in "".join(words) or shell_variable


# A batch the user could not run: "not able to even fit batch_size=2", "can't use bs=4".
_FAILED_TRY_BEFORE = re.compile(
    r"(?:not able to|unable to|can(?:'|no)?t|could(?:n'?t| not))\s+(?:even\s+)?(?:fit|run|use|train with)\s+(?:a\s+)?$",
    re.I,
)


def _assignments(text: str, slots: Slots) -> None:
    """Values set by name; the first setting of a key wins (a later `--per_device_eval_batch_size` never does)."""
    seen: set[str] = set()
    per_node_key = False
    found = [
        (m, classify_key(m.group(1)))
        for m in sorted(
            [*_ASSIGN.finditer(text), *_FIELD_DEFAULT.finditer(text), *_COMMENTED_VALUE.finditer(text)],
            key=lambda m: m.start(),
        )
    ]
    # alpaca-lora style: next to an explicit micro batch, a bare `batch_size` is the global batch; so beside InternVL's
    # `PER_DEVICE_BATCH_SIZE=1` (its `BATCH_SIZE=64` is the global batch its script divides by it), and beside "即每张卡
    # 放一个sample" (Light-R1 #39: "batch_size为96，即每张卡放一个sample" on 96 GPUs).
    per_card = next(
        (
            m
            for m in _PER_CARD_SAMPLES.finditer(text)
            if not _quoted(text, m.start(), lines=False) and not _equivalent_at(text, m.start())
        ),
        None,
    )
    explicit_micro = per_card is not None or any(
        key == "train_micro_batch_size_per_gpu" and _names_the_device_batch(m.group(1)) for m, key in found
    )
    for m, key in found:
        if key is None and m.group(1).lstrip("-").lower() == "num_shards" and _SHARD_ID.search(text):
            key = "num_nodes"  # PySlowFast's `--shard_id 0 --num_shards 2`: the machines of one run
        if key == "train_micro_batch_size_per_gpu" and _TOTAL_BEFORE.search(text[max(0, m.start() - 12) : m.start()]):
            key = "train_batch_size"  # "total batchsize is 4096"
        if (
            explicit_micro
            and key == "train_micro_batch_size_per_gpu"
            and "_".join(_key_words(m.group(1))) in ("batch_size", "batchsize", "bs", "bsize")
            and not _PER_CARD_BEFORE.search(
                text[max(0, m.start() - 6) : m.start()]
            )  # "单卡batchsize为4" stays per card
        ):
            key = "train_batch_size"
        if key is None or key in seen or _quoted(text, m.start(), lines=False):
            continue
        if key in _BATCH_KEYS and _equivalent_at(text, m.start()):
            continue  # "模拟出单卡batch_size=128的表现" (LAPS #14): the batch imitated, not one set
        if key in _BATCH_KEYS and _FAILED_TRY_BEFORE.search(text[max(0, m.start() - 32) : m.start()]):
            continue  # "with batch size 1. I'm not able to even fit batch_size=2" (PEFT #148): a try, not the run
        if key == "world_size" and _LAUNCHER_SETS_WORLD.match(text, m.end(1)):
            continue
        if (
            key == "world_size"
            and m.group(1).lower().lstrip("-") == "devices"
            and not _IN_TRAINER_CALL.search(text[max(0, m.start() - 400) : m.start()])
        ):
            continue  # a script's own `devices = 4` (lit-llama #381 quotes the docs' default; the user runs 8 GPUs)
        if key == "num_nodes" and re.search(r"\sof\s", m.group(0)):
            continue  # "16 nodes of 8 H100s": the count after "of" is each node's
        if _PAPER_VALUE_BEFORE.search(text[max(0, m.start() - 40) : m.start()]) and not _ASKED_AFTER.match(
            text, m.end()
        ):
            # "DiffusionDPO 论文中使用的 bs=2048": the paper's setting, not the user's — unless the sentence asks about
            # it ("论文里提到的batch_size=19200，指的是…吗": the value the question is about)
            continue
        raw = m.group(2)
        value: float = _WORD_NUM[raw] if raw in _WORD_NUM else float(raw)
        if key == "train_batch_size" and (product := _PRODUCT.match(text, m.end())):
            value = float(product.group(1))  # "effective batch_size is 128*8 = 1024"
        if key == "seq_len":
            value = _times_kilo(value, text, m.end())
        if not math.isfinite(value) or value > 1e15:
            continue  # "1e309": not a setting anyone runs
        if key != "base_learning_rate":
            if value != int(value):
                continue
            value = int(value)
        elif not 0 < value < 10:
            continue
        if key == "zero_stage" and value > 3:
            continue
        seen.add(key)
        setattr(slots, key, value)
        if key == "world_size" and _counts_per_node(m.group(1)):
            per_node_key = True
    if per_card is not None and "train_micro_batch_size_per_gpu" not in seen:
        count = per_card.group(1) or per_card.group(2)
        slots.train_micro_batch_size_per_gpu = _CN_COUNT.get(count) or int(count)
    if "world_size" not in seen and (ids := _GPU_IDS_FLAG.search(text)):
        slots.world_size, per_node_key = ids.group(1).count(",") + 1, True
    if slots.num_nodes is None and (ips := _NODE_IPS.search(text)):
        slots.num_nodes = ips.group(1).count(",") + 1  # PaddlePaddle's `--ips="10.0.0.1,10.0.0.2"`: one per machine
    if gres := _GRES_GPUS.search(text):
        # Slurm's `--gres=gpu:4` is each node's GPUs, whatever `--ntasks-per-node=1` says (one task that runs a launcher)
        slots.world_size, per_node_key = int(gres.group(1) or gres.group(2)), True
    # `trainer.nnodes=2 trainer.n_gpus_per_node=8`: a count set per node, times the nodes set beside it, is the total;
    # so is `GPUS_PER_NODE=8` under "2台8卡" (nodes read from the sentences, `NNODES` left to a variable).
    if per_node_key and slots.world_size and slots.num_nodes and slots.num_nodes > 1:
        slots.world_size *= slots.num_nodes


# ---- what training frameworks print: the HF Trainer banner, TRL's and DeepSpeed's batch checks ----------
_BANNER = [
    (re.compile(r"Instantaneous batch size per device\s*=\s*(\d+)", re.I), "train_micro_batch_size_per_gpu"),
    (
        re.compile(r"Total train batch size \(w\. parallel, distributed & accumulation\)\s*=\s*(\d+)", re.I),
        "train_batch_size",
    ),
    (re.compile(r"Gradient Accumulation steps\s*=\s*(\d+)", re.I), "gradient_accumulation_steps"),
    # Unsloth's start-up banner: "Batch size per device = 8 | Gradient accumulation steps = 4",
    # "Total batch size (8 x 4 x 1) = 32"
    (re.compile(r"(?<![A-Za-z] )\bBatch size per device\s*=\s*(\d+)", re.I), "train_micro_batch_size_per_gpu"),
    # kohya sd-scripts' (and lora-scripts') start-up lines, English / Japanese: "batch size per device / バッチサイズ: 1",
    # "gradient accumulation steps / 勾配を合計するステップ数 = 1" ("gradient ccumulation" in older releases), "total train
    # batch size (with parallel & distributed & accumulation) / 総バッチサイズ（並列学習、勾配合計含む）: 4" (train_network.py)
    (re.compile(r"^\s*batch size per device / バッチサイズ:\s*(\d+)", re.M), "train_micro_batch_size_per_gpu"),
    (
        re.compile(r"^\s*gradient a?ccumulation steps / 勾配を合計するステップ数\s*=\s*(\d+)", re.M),
        "gradient_accumulation_steps",
    ),
    (re.compile(r"^\s*total train batch size \([^)\n]*\) / 総バッチサイズ[^:\n]*:\s*(\d+)", re.M), "train_batch_size"),
    (re.compile(r"Total batch size \((?:\d+ x )+\d+\)\s*=\s*(\d+)", re.I), "train_batch_size"),
]
# DeepSpeed's stage-3 optimizer named in a traceback or log.
_ZERO3_CLASS = re.compile(r"DeepSpeedZeroOptimizer_Stage3|stage3\.py|partition_parameters\.py")


# DeepSpeed's config print at start-up (deepspeed/runtime/config.py DeepSpeedConfig.print: "  {arg} {dots} {value}",
# the dots filling the name to 29 characters, none for longer names):
# "[INFO] [config.py:988:print]   train_micro_batch_size_per_gpu  2", "  zero_optimization_stage ...... 2".
_DS_PRINTED = re.compile(
    r"^[^\n]*?\s(train_batch_size|train_micro_batch_size_per_gpu|gradient_accumulation_steps|zero_optimization_stage|"
    r"world_size)\s+\.*\s*(\d{1,7})\s*$",
    re.M,
)
# … and its precision switches: older releases print `fp16_enabled ... True`, newer ones the config objects
# (`float16_config ... enabled=True …`, `bfloat16_config ... enabled=True …`).
_DS_PRINTED_HALF = re.compile(
    r"^[^\n]*?\s(fp16_enabled|bfloat16_enabled|float16_config|bfloat16_config)\s+\.*\s*(?:enabled=)?True\b", re.M
)
_DS_PRINTED_KEYS = {"zero_optimization_stage": "zero_stage"}
# Megatron-LM's (and GPT-NeoX's) argument print at start-up (megatron/training/arguments.py _print_args:
# "  {arg} {dots} {value}"): the same layout, always with dots; `batch_size` is the per-GPU batch of old Megatron
# releases, `model_parallel_size` their tensor-parallel degree.
_MEGATRON_PRINTED = re.compile(
    r"^\s+(micro_batch_size|global_batch_size|batch_size|tensor_model_parallel_size|pipeline_model_parallel_size|"
    r"model_parallel_size|seq_length|world_size)\s\.{3,}\s*(\d{1,7})\s*$",
    re.M,
)
_MEGATRON_PRINTED_KEYS = {
    "micro_batch_size": "train_micro_batch_size_per_gpu",
    "batch_size": "train_micro_batch_size_per_gpu",
    "global_batch_size": "train_batch_size",
    "tensor_model_parallel_size": "tensor_parallel_size",
    "model_parallel_size": "tensor_parallel_size",
    "pipeline_model_parallel_size": "pipeline_parallel_size",
    "seq_length": "seq_len",
}
_MEGATRON_RECOMPUTE = re.compile(r"^\s+(?:checkpoint_activations|recompute_activations)\s\.{3,}\s*True\s*$", re.M)
# … and its parallel layout: "using world size: 16, data-parallel size: 8, …, tensor-model-parallel size: 2,
# pipeline-model-parallel size: 1" (older releases: "using world size: 16 and model-parallel size: 2").
_MEGATRON_LAYOUT = re.compile(r"using world size:\s*(\d+)([^\n]*)")
_MEGATRON_TP = re.compile(r"(?<!pipeline-)(?:tensor-)?model-parallel[- ]size:\s*(\d+)")
_MEGATRON_PP = re.compile(r"pipeline-model-parallel size:\s*(\d+)")


def _printed_arguments(text: str, slots: Slots) -> None:
    """What DeepSpeed and Megatron-LM print of their arguments at start-up (one "  {arg} {dots} {value}" layout), the
    first value of each setting; then Megatron's parallel layout line and DeepSpeed's precision switch."""
    for pattern, names in ((_DS_PRINTED, _DS_PRINTED_KEYS), (_MEGATRON_PRINTED, _MEGATRON_PRINTED_KEYS)):
        for m in pattern.finditer(text):
            key, value = names.get(m.group(1), m.group(1)), int(m.group(2))
            if getattr(slots, key) is None and value > 0 and not (key == "zero_stage" and value > 3):
                setattr(slots, key, value)
    if slots.gradient_checkpointing is None and _MEGATRON_RECOMPUTE.search(text):
        slots.gradient_checkpointing = "full"
    if layout := _MEGATRON_LAYOUT.search(text):
        slots.world_size = int(layout.group(1))  # what the launched run has, whatever the configs said
        if (tp := _MEGATRON_TP.search(layout.group(2))) and slots.tensor_parallel_size is None:
            slots.tensor_parallel_size = int(tp.group(1))
        if (pp := _MEGATRON_PP.search(layout.group(2))) and slots.pipeline_parallel_size is None:
            slots.pipeline_parallel_size = int(pp.group(1))
    if slots.precision is None and (half := _DS_PRINTED_HALF.search(text)):
        slots.precision = "bf16-mixed" if half.group(1).startswith("bfloat16") else "fp16-mixed"


def printed_batch(text: str) -> dict[str, int]:
    """The batch a framework's start-up banner prints (its fixed wording: the batch that ran, whatever was configured)."""
    return {
        key: int(m.group(1))
        for pattern, key in _BANNER
        if key in ("train_micro_batch_size_per_gpu", "train_batch_size") and (m := pattern.search(text))
    }


def extract_printed(text: str) -> Slots:
    """Setup values in what a framework printed (a log or an error), read only from lines whose wording is fixed by
    the framework; never the free-text patterns, which would read step counts and timings as a setup."""
    slots = Slots()
    _apply_each(_PRINTED_RULES, text, slots)
    _printed_arguments(text, slots)
    _apply_first(_PRINTED_PRECISION_RULES, text, slots)
    _traceback_paths(text, slots)
    return slots


# What a traceback's frame paths show of the run: the model whose remote code runs (transformers copies it to
# "transformers_modules/<model folder>/modeling_….py") and PEFT's adapter code ("peft/tuners/lora/…").
_REMOTE_CODE_FOLDER = re.compile(r"transformers_modules[/\\]([^/\\\s\"']{2,80})[/\\]")
_PEFT_FRAME = re.compile(
    r"[/\\]peft[/\\](?:tuners[/\\](lora|prefix_tuning|p_tuning|prompt_tuning|ia3)\b|peft_model\.py|mapping\.py)"
)


# PEFT's print_trainable_parameters(): "trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%: 0.06"
# (peft/peft_model.py). "all params" is the model's size (its adapters are tiny) — except under bitsandbytes 4-bit,
# where PEFT releases before the Params4bit correction count each packed weight once for two (qlora #184 printed
# 16.9B for a 30B model): a message that names 4-bit loading gets no size from it.
_PEFT_ALL_PARAMS = re.compile(r"trainable params:?\s*[\d,]+\s*\|\|\s*all params:?\s*(\d{1,3}(?:,\d{3})+|\d+)", re.I)
# (Looser on purpose than the method reader's QLoRA / int4 reading: any mention of 4-bit, even a commented-out or
# someone else's flag, makes the printed count doubtful, and a doubtful size is worse than none.)
_FOUR_BIT = re.compile(r"4[-_ ]?bit|qlora|\bnf4\b|load_in_4bit|bnb_4bit", re.I)


def peft_all_params(text: str, slots: Slots) -> None:
    """The model's size from PEFT's printed parameter count, when nothing else in ``text`` sized the model."""
    if slots.model is None and slots.num_params is None and (m := _PEFT_ALL_PARAMS.search(text)):
        count = float(m.group(1).replace(",", ""))
        if count >= 1e8 and not _FOUR_BIT.search(text):
            slots.num_params = count


def _traceback_paths(text: str, slots: Slots) -> None:
    if slots.model is None and slots.num_params is None and (folder := _REMOTE_CODE_FOLDER.search(text)):
        named = extract_slots(folder.group(1).replace("_", "-"))
        if named.model or named.num_params:
            slots.model, slots.num_params, slots.model_text = named.model, named.num_params, named.model_text
    if slots.finetune is None and (peft := _PEFT_FRAME.search(text)) and peft.group(1) in (None, "lora"):
        slots.finetune = "lora"  # PEFT's own frames (LoRA, its common method, unless another tuner's are shown)


def _trainable_params(m: re.Match[str], text: str) -> tuple[Any, ...]:
    # the HF Trainer banner's count: a billion or more trainable parameters is the whole model (adapters are far
    # smaller), so it is the model's size
    count = float(m.group(1).replace(",", ""))
    return (count if count >= 1e9 else None,)


_TRAINABLE_PRINTED = re.compile(r"Number of trainable parameters\s*=\s*(\d{1,3}(?:,\d{3})+|\d+)")
# transformers prints this only when gradient checkpointing is on during training.
_GC_PRINTED = re.compile(r"`use_cache=True` is incompatible with gradient checkpointing")
# Only fp16 training scales the loss: DeepSpeed's "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536"
# (loss_scaler.py), apex's "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to …", OpenAI's
# guided / improved diffusion's fp16_util.py "Found NaN, decreased lg_loss_scale to 19.0" (MM-Diffusion #23).
_FP16_PRINTED = re.compile(
    r"OVERFLOW! Rank \d+ Skipping step|Attempted loss scale|loss_scaler\.py|"
    r"Gradient overflow\.\s+Skipping step|decreased lg_loss_scale to",
    re.I,
)
# transformers' TrainingArguments check: "Your setup doesn't support bf16/gpu." — the user asked for bf16.
_HALF_UNSUPPORTED = re.compile(r"Your setup doesn't support (bf16|fp16)/(?:gpu|cpu|npu|xpu)", re.I)


# NCCL's communicator lines, "NCCL INFO comm 0x9658a90 rank 2 nranks 3 cudaDev 2 …": the largest communicator spans
# every process (tensor- or pipeline-parallel groups are smaller ones).
_NCCL_NRANKS = re.compile(r"NCCL INFO.{0,80}?\bnranks (\d{1,5})\b")


def _largest(group: int) -> Convert:
    """The largest count any match of the rule's pattern prints (every process prints its line)."""
    return lambda m, text: (max(int(n.group(group)) for n in m.re.finditer(text)),)


# Lightning's process-group line (calculators.shell.LIGHTNING_RANK: "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/4"),
# and Fabric's "All distributed processes registered. Starting with 1 processes" (lightning/fabric/strategies/ddp.py,
# _setup_distributed → _init_dist_connection): the world size the launched run has, whatever `devices=8` said.
_LIGHTNING_STARTING = re.compile(r"All distributed processes registered\.\s*Starting with (\d{1,5}) processes")
# The deepspeed launcher's start-up lines (deepspeed/launcher/launch.py main): "WORLD INFO DICT: {'localhost': [0, 3]}"
# lists the GPU ids used on every host, so their count is the world size (the ids are physical ones, not a count).
_DS_WORLD_INFO = re.compile(r"WORLD INFO DICT:\s*(\{[^{}\n]{1,2000}\})")


def _ds_world_info(m: re.Match[str], text: str) -> tuple[Any, ...]:
    hosts = re.findall(r"\[([\d,\s]*)\]", m.group(1))
    count = sum(len(re.findall(r"\d+", ids)) for ids in hosts)
    return (count if count > 0 else None,)


#: What frameworks print (read from logs and errors only, by extract_printed).
# PyTorch's OOM message (torch >= 2.1) pasted without its "Tried to allocate" head: "GPU 0 has a total capacity of
# 23.64 GiB of which 1.61 GiB is free. Process 1624541 has 22.02 GiB memory in use." — the card's size and, when one
# process is listed (or "this process"), the memory the run held.
_TOTAL_CAPACITY = re.compile(
    r"(?:GPU|NPU|device) \d{1,4} has a total capac(?:i)?ty of (\d{1,4}(?:\.\d+)?) GiB of which", re.I
)
_PROCESS_IN_USE = re.compile(r"(?:this process|Process \d{1,10}) has (\d{1,4}(?:\.\d+)?) GiB memory in use", re.I)


def _process_in_use(m: re.Match[str], text: str) -> tuple[Any, ...]:
    listed = _PROCESS_IN_USE.findall(text[max(0, m.start() - 400) : m.end() + 400])
    own = re.search(r"this process has (\d{1,4}(?:\.\d+)?) GiB", text, re.I)
    if own:
        return (float(own.group(1)),)
    return (float(m.group(1)),) if len(set(listed)) == 1 else (None,)


# Megatron's per-rank memory report, in MB: "[Rank 0] (after 1 iterations) memory (MB) | allocated: 882.5 | max allocated:
# 13808.2 | reserved: 14718.0 | max reserved: 14718.0" (megatron/training/utils.py report_memory): the peak the
# run's tensors reached is "max allocated".
_MEGATRON_MEMORY = re.compile(r"memory \(MB\) \| allocated: [\d.]+ \| max allocated: (\d+(?:\.\d+)?)")


def _megatron_memory(m: re.Match[str], text: str) -> tuple[Any, ...]:
    return (_amount_gb(m.group(1), "MB"),)


# ms-swift's training log lines, "{'loss': 0.22, …, 'memory(GiB)': 73.75, …}": the running peak of
# max_memory_reserved over the node's GPUs, in GiB (swift/trainers/patcher.py, swift/utils/torch_utils.py
# get_max_reserved_memory; get_max_cuda_memory in 2.x), so the largest value printed is the run's peak.
SWIFT_MEMORY = re.compile(r"['\"]memory\(GiB\)['\"]\s*:\s*['\"]?(\d+(?:\.\d+)?)")
# torch.cuda.memory_summary()'s row "| Allocated memory | 13975 MiB | 18803 MiB | 2142 GiB | 2128 GiB |": current,
# peak, total allocated, total freed; the peak is what the run needed at most.
_SUMMARY_PEAK = re.compile(
    r"^\|\s*Allocated memory\s*\|\s*[\d.]+\s*[KMG]iB\s*\|\s*(\d+(?:\.\d+)?)\s*([KMG]iB)\s*\|", re.M
)


def _swift_memory(m: re.Match[str], text: str) -> tuple[Any, ...]:
    return (max(float(n.group(1)) for n in m.re.finditer(text)),)


def _summary_peak(m: re.Match[str], text: str) -> tuple[Any, ...]:
    value, unit = float(m.group(1)), m.group(2)
    return (round(value / 1024, 2) if unit == "MiB" else round(value / 2**20, 4) if unit == "KiB" else value,)


# Megatron-LM / GPT-NeoX name their dataset index files by samples, sequence length and seed:
# "…_train_indexmap_24000000ns_2048sl_1234s_doc_idx.npy" (megatron/data/gpt_dataset.py, _build_index_mappings).
_INDEXMAP_SEQ = re.compile(r"_indexmap_\d+ns_(\d{2,6})sl_\d+s_")
_PRINTED_RULES = (
    SlotRule(("world_size",), (_NCCL_NRANKS,), _largest(1)),
    SlotRule(("world_size",), (LIGHTNING_RANK,), _largest(2)),
    SlotRule(("world_size",), (_LIGHTNING_STARTING,), _group_int()),
    SlotRule(("world_size",), (_DS_WORLD_INFO,), _ds_world_info),
    SlotRule(("seq_len",), (_INDEXMAP_SEQ,), _group_int()),
    # accelerate's DeepSpeed prepare: "`is_train_batch_min` (here True will decide the `train_batch_size` (16)." — the
    # per-device batch it fills `train_micro_batch_size_per_gpu` with (accelerator.py, _prepare_deepspeed)
    SlotRule(
        ("train_micro_batch_size_per_gpu",),
        (re.compile(r"will decide the `train_batch_size` \((\d+)\)"),),
        _group_int(),
    ),
    # DeepSpeed logs name the ZeRO optimizer's file: "[stage2.py:1357:step]" (deepspeed/runtime/zero/stage2.py in
    # the 0.3-0.5 releases), "[stage3.py:…]"; stage_1_and_2.py names no single stage
    SlotRule(("zero_stage",), (re.compile(r"\[stage([23])\.py:\d+"),), _group_int()),
    *(SlotRule((key,), (pattern,), _group_int()) for pattern, key in _BANNER),
    SlotRule(("zero_stage",), (_ZERO3_CLASS,), _constant(3)),
    SlotRule(("world_size", "train_micro_batch_size_per_gpu"), (_TRL_GLOBAL,), _trl_global),
    SlotRule(("num_params",), (_TRAINABLE_PRINTED,), _trainable_params),
    SlotRule(("gradient_checkpointing",), (_GC_PRINTED,), _constant("full")),
    SlotRule(("gpu_memory_gb",), (_TOTAL_CAPACITY,), lambda m, text: (float(m.group(1)),)),
    SlotRule(("observed_memory_gb",), (_PROCESS_IN_USE,), _process_in_use),
    SlotRule(("observed_memory_gb",), (_MEGATRON_MEMORY,), _megatron_memory, only_if_unset=True),
    SlotRule(("observed_memory_gb",), (SWIFT_MEMORY,), _swift_memory, only_if_unset=True),
    SlotRule(("observed_memory_gb",), (_SUMMARY_PEAK,), _summary_peak, only_if_unset=True),
)
_PRINTED_PRECISION_RULES = (
    SlotRule(
        ("precision",),
        (_FP16_PRINTED,),
        lambda m, text: ("fp16-mixed" if re.search(r"deepspeed|zero", text, re.I) else "amp-fp16",),
    ),
    SlotRule(
        ("precision",),
        (_HALF_UNSUPPORTED,),
        lambda m, text: ("amp-bf16" if m.group(1).lower() == "bf16" else "amp-fp16",),
    ),
)


#: What a setting is said to amount to, not how it is set: "Then it works like `batch_size = 64` (Is it right?)"
#: (3DMPPE_POSENET #85: batch_size 32 on two GPUs), "相当于 batch_size=64".
_EQUIVALENT_BEFORE = re.compile(
    # (not "equivalent to": "Is --batch_size 64 equivalent to --batch_size 8 and --accumulate_gradients 8?" names the
    # accumulating run after it)
    # ("这个命令可以模拟出单卡batch_size=128的表现吧" (LAPS #14), "the normal concept of batch size 2048" (peclr #17): the
    # run imitated or the textbook notion, not the one set)
    r"(?:works?\s+like|acts?\s+like|相当于|等价于|等效于|模拟出?|\bsimulates?|\bemulates?|\bmimics?|"
    r"\b(?:concept|notion|definition) of)\s*(?:单卡|单张卡|一张卡|a\s+)?`?\s*$",
    re.I,
)


_BATCH_KEYS = frozenset({"train_micro_batch_size_per_gpu", "train_batch_size"})


def _equivalent_at(text: str, pos: int) -> bool:
    """Whether the setting at ``pos`` is written as what a run amounts to or imitates (:data:`_EQUIVALENT_BEFORE`)."""
    return bool(_EQUIVALENT_BEFORE.search(text[max(0, pos - 16) : pos]))


def says_equivalent_batch(text: str) -> bool:
    """Whether ``text`` says what a batch setting amounts to ("it works like `batch_size = 64`", "相当于 batch 64")."""
    return any(
        _equivalent_at(text, m.start()) for m in re.finditer(r"(?:--)?(?:batch[-_ ]?size|\bbs\b|batch)", text, re.I)
    )


def _not_a_setting(text: str, start: int) -> bool:
    """A value written as a total, as what the setting amounts to, or as a document's claim, not the user's run."""
    before = text[max(0, start - 16) : start]
    return bool(_TOTAL_BEFORE.search(before[-12:]) or _equivalent_at(text, start) or hearsay(text, start))


def _mentions(text: str, pattern: re.Pattern[str] | None, key: str) -> list[tuple[int, int]]:
    """(position, value) of every setting of ``key`` in ``text``: by the phrase pattern (None: a setting written only
    as its key, "IMS_PER_BATCH = 128") and by a named key."""
    out = []
    for m in pattern.finditer(text) if pattern is not None else ():
        if not _not_a_setting(text, m.start()):
            out.append((m.start(), _num(m.group(1))))
    for m in _ASSIGN.finditer(text):
        raw = m.group(2)
        if (
            classify_key(m.group(1)) == key
            and not _not_a_setting(text, m.start())
            and (raw in _WORD_NUM or raw.isdigit())
        ):
            out.append((m.start(), _WORD_NUM.get(raw) or int(raw)))
    return sorted(set(out))


# "batch size from 1 to 32" without "effective"/"global": the user changed the per-GPU batch.
_MICRO_CHANGE = re.compile(
    r"(?<![A-Za-z_])(?:batch[-_ ]?size|bs|batch)\s*(?:从|from)\s*(\d+)\s*(?:变成|变为|改成|改为|增加到|增大到|加到|"
    r"提高到|调到|扩大到|减少到|降到|到|to|->|→)\s*(\d+)",
    re.I,
)


# Between two tried values, what makes the later one the run in question: an outcome ("OOM", "正常", "才能运行").
_OUTCOME = re.compile(
    r"oom|out[- ]of[- ]memory|爆|报错|error|fail|crash|normal|正常|才能|才不会|works?\b|fine\b|ok\b|可以运行|跑通", re.I
)
# … and what makes the two a side-by-side comparison instead ("A vs B", "设置1 … 设置2", "B: …").
# ("It's worth noting that when training X with another repo, I was able to …", "以前/之前 …": an earlier or other run
# recalled for contrast)
_COMPARED = re.compile(
    r"\bvs\.?\b|versus|compared|对比|相比|设置\s*\d|setting\s*\d|方案|\b[AB]\s*:|的话|worth noting|"
    r"\b(?:by|in) contrast\b|\bpreviously\b|\bin the past\b|以前|之前",
    re.I,
)
# A value proposed in a question or a hypothetical ("如果 train_batch_size设置为8可以吗？", "what if I set bs=8?").
_PROPOSED = re.compile(r"如果|假如|要是|\bif\b|可以吗|能否|行吗|should I|can I|could I", re.I)


_SO = re.compile(r"\bso\b|那么|所以|是不是|应该是|也就是", re.I)


# "… However, when I set --nproc-per-node to 2": a new try introduced as one, with or without its outcome yet
_NEW_TRY = re.compile(
    r"\b(?:however|but|then|now|next)\b,?\s+(?:when|if|after|once)\s+I\s+"
    r"(?:set|change|changed|use|used|increase|increased|decrease|decreased|tried|try|switch|switched)\b"
    # a second "When I set …" sentence after the first one's outcome (detectron2 #3520)
    r"|(?:[.!?]\s+|\n)(?:and\s+)?when\s+I\s+(?:set|change|changed|use|used|increase|increased|switch|switched)\b"
    r"|(?:但是|可是|然后|后来)\s*(?:当|在)?\s*我(?:把|将|设|改|用)",
    re.I,
)


def _replaces(text: str, earlier: tuple[int, float], later: tuple[int, float]) -> bool:
    """Whether the ``later`` mention is a new try that replaces the ``earlier`` one (see _latest_in_prose)."""
    between = text[earlier[0] : later[0]]
    line_start = max(text.rfind(c, 0, later[0]) for c in "\n。？！?!") + 1
    return (
        bool(_OUTCOME.search(between) or _NEW_TRY.search(between))
        and not _COMPARED.search(between)
        and not _PROPOSED.search(text[line_start : later[0] + 40])
        and not _quoted(text, later[0])
    )


def _inferred(text: str, pos: int) -> bool:
    """A value the user worked out and asks about ("total batchsize is 4096, GPU num is 8, so per gpu batch size is
    512?"): a question sentence that concludes with "so" / "那么" / "是不是"."""
    start = max(text.rfind(c, 0, pos) for c in "\n。？！?!") + 1
    ends = [i for i in (text.find(c, pos) for c in "\n。？！?!") if i >= 0]
    end = min(ends) if ends else len(text)
    return end < len(text) and text[end] in "?？" and bool(_SO.search(text[start:pos]))


#: A setting's value as the prose mentions it: a count, or a rate.
_Num = TypeVar("_Num", int, float)


def _latest(text: str, mentions: list[tuple[int, _Num]]) -> tuple[int, _Num] | None:
    """The mention that the run in question uses, when the prose tried several values; else None."""
    mentions = [m for m in mentions if not _quoted(text, m[0])]
    if len({v for _, v in mentions}) < 2:
        return None
    stated = [m for m in mentions if not _inferred(text, m[0])]
    if stated and len(stated) < len(mentions):
        return stated[-1] if len({v for _, v in stated}) == 1 else _latest(text, stated) or stated[0]
    current = mentions[0]
    for later in mentions[1:]:
        if later[1] != current[1] and _replaces(text, current, later):
            current = later
    return current if current != mentions[0] else None


_WITH_TOTAL = re.compile(
    r"\s*,?\s*(?:with|and|,)\s+(?:an?\s+|the\s+)?total(?:\s+batch(?:[-_ ]?size)?)?\s*(?:of\s+|is\s+|=\s*)?(\d+)", re.I
)


# Darknet's cfg: `batch=64 subdivisions=16` — 64 images per step, processed 64/16 at a time (gradients accumulated).
_DARKNET = re.compile(r"(?<![\w.])batch\s*=\s*(\d+)\s*[,;]?\s*subdivisions\s*=\s*(\d+)", re.I)
# "In the paper, it says, 120 batch size with 4 GPUs": the batch over all the GPUs.
_BATCH_WITH_GPUS = re.compile(
    r"(?<![\w.])(\d+)\s*batch[-_ ]?size\s+(?:with|on|over|across|using)\s+(\d+)\s*(?:gpus?|cards?)\b", re.I
)


# The global batch written as the product of the settings that make it: "batch size = gradient_accumulation_steps*
# per_device_train_batch_size*num_gpus = 128", "总batch_size=train_batch_size * gradient_accumulation_steps * devices = 2".
_NAMED_PRODUCT = re.compile(
    r"(?<![\w.])([A-Za-z_][\w.]{0,50}(?:\s*[*×]\s*[A-Za-z_][\w.]{0,50}){1,4})\s*=\s*(\d{1,7})(?![\d.])"
    r"(?!\s*[*×x]\s*\d)"  # "= 12*40 = 480": the factors' own numbers, read by _named_factors
)
_DEVICE_FACTOR = re.compile(r"^(?:devices?|device_num|num_devices|n_devices|gpus|gpu_num|num_gpus?|world_size)$", re.I)


# A formula written out with its numbers: "batch_size*gradient_accumulation_steps = 12*40 = 480", "bs x GA x gpus =
# 4 x 8 x 2 = 64": each name takes the number in its place, the result is the total.
# (fairseq's "max-sentences * update-freq * num_of_gpus=32\\*60\\*8=15360", PLBART #19: hyphenated names, and the
# backslash Markdown needs before a literal "*")
_NAMED_FACTORS = re.compile(
    r"(?<![\w.-])([A-Za-z_][\w.-]*(?:(?:\s*\\?[*×]\s*|\s+x\s+)[A-Za-z_][\w.-]*){1,3})\s*\)?\s*(?:=|is|equals)\s*"
    r"(\d{1,6}(?:(?:\s*\\?[*×]\s*|\s*x\s*)\d{1,6}){1,3})(?![\d.])(?:\s*=\s*(\d{1,7})(?![\d.]))?",
    re.I,
)
_FORMULA_BATCH = re.compile(r"^(?:\w*batch\w*|bs|mbs|micro\w*|bsz)$", re.I)


def _factor_key(name: str) -> str:
    """The setup key a factor of a batch formula names ("" for none)."""
    if _FORMULA_GA.match(name):
        return "gradient_accumulation_steps"
    if _FORMULA_DEVICES.match(name):
        return "world_size"
    if _FORMULA_BATCH.match(name) or _FORMULA_PER_DEVICE.match(name):
        return "train_micro_batch_size_per_gpu"
    return ""


def _named_factors(text: str, slots: Slots) -> bool:
    """Binds each named factor to its number; whether a formula was read."""
    for m in _NAMED_FACTORS.finditer(text):
        names = [f.strip() for f in re.split(r"\s*\\?[*×]\s*|\s+x\s+", m.group(1))]
        nums = [int(n) for n in re.split(r"\s*\\?[*×x]\s*", m.group(2).strip())]
        if len(names) != len(nums) or _quoted(text, m.start()):
            continue
        keys = [_factor_key(n) for n in names]
        if "" in keys or len(set(keys)) != len(keys) or "gradient_accumulation_steps" not in keys:
            continue  # every factor one setting, the accumulation steps among them: a batch formula
        product = math.prod(nums)
        if m.group(3) is not None and int(m.group(3)) != product:
            continue
        for key, n in zip(keys, nums, strict=True):
            setattr(slots, key, n)
        slots.train_batch_size = product
        return True
    return False


def _named_product(text: str) -> tuple[int, str] | None:
    """The total of a product of named batch settings (a batch, GA, GPU count) and the batch factor's setup key."""
    for m in _NAMED_PRODUCT.finditer(text):
        factors = [f.strip() for f in re.split(r"[*×]", m.group(1))]
        keys = ["world_size" if _DEVICE_FACTOR.match(f) else classify_key(f) for f in factors]
        batch = [k for k in keys if k in ("train_micro_batch_size_per_gpu", "train_batch_size")]
        kinds = {"batch" if k in batch else k for k in keys}
        if len(kinds) == len(factors) and kinds <= {"batch", "gradient_accumulation_steps", "world_size"} and batch:
            return int(m.group(2)), batch[0]
    return None


def _batch_as_frameworks_write_it(text: str, slots: Slots) -> None:
    # The HF Trainer banner pasted into the prose without a fence ("Total train batch size (w. parallel, distributed
    # & accumulation) = 72"): its fixed wording is as safe here as in a log.
    for pattern, key in _BANNER:
        if getattr(slots, key) is None and (m := pattern.search(text)):
            setattr(slots, key, int(m.group(1)))
    if not _named_factors(text, slots) and (product := _named_product(text)) is not None:
        total, factor = product
        if factor == "train_batch_size" and slots.train_batch_size not in (None, total):
            # the repo's `train_batch_size` is a factor of the total: the per-device batch the user set
            slots.train_micro_batch_size_per_gpu = slots.train_micro_batch_size_per_gpu or slots.train_batch_size
        slots.train_batch_size = total
    if m := _DARKNET.search(text):
        batch, subdivisions = int(m.group(1)), int(m.group(2))
        slots.train_batch_size = batch
        if subdivisions and batch % subdivisions == 0:
            slots.train_micro_batch_size_per_gpu, slots.gradient_accumulation_steps = (
                batch // subdivisions,
                subdivisions,
            )
    elif m := _BATCH_WITH_GPUS.search(text):
        slots.train_batch_size, slots.world_size = int(m.group(1)), int(m.group(2))
        if slots.train_micro_batch_size_per_gpu == slots.train_batch_size:
            slots.train_micro_batch_size_per_gpu = None


_MICRO_NAMED = re.compile(r"micro[-_ ]?batch", re.I)
_BARE_BATCH_AT = re.compile(r"(?:b[ei]tch|bacth|bathc|btach|banch|batch)(?:[-_ ]?size)?(?![-_ ]?per)|bs\b", re.I)


_GA_KEY_AT = re.compile(
    r"(?:gradient_accumulation_steps|grad(?:ient)?[-_ ]?accum\w*|accum\w*|ga\b|梯度累[积加计])\w*\s*(?:=|:|：|of)?\s*\d",
    re.I,
)
_AND_GA = re.compile(
    r"\s*(?:`\s*)?(?:,|，|\band\b|\bwith\b|\+|和|加上?|配合)\s*(?:an?\s+|the\s+)?(?:`\s*)?(?:--)?", re.I
)


def _paired_with_ga(text: str, micro: list[tuple[int, int]]) -> int | None:
    """The one micro batch of several that a gradient-accumulation setting is written with ("8 and GA 8"), else None."""
    paired = set()
    for pos, value in micro:
        m = _MICRO.match(text, pos)
        end = m.end() if m else pos
        joint = _AND_GA.match(text, end)
        if joint and _GA_KEY_AT.match(text, joint.end()):
            paired.add(value)
    return next(iter(paired)) if len(paired) == 1 else None


def _latest_in_prose(text: str, slots: Slots) -> None:
    """Prose that tries several values for one setting ("batch_size==7 时显存爆炸，只有设置 batch_size==4 才能运行",
    "GA=1 is normal, but GA=2 OOMs"): the last one is the run the question is about; an earlier GA is kept as the GA
    the user changed from. A config or a command sets each key once, so only prose is read this way."""
    if _MICRO_AND_BATCH.search(text):
        return
    micro = _mentions(text, _MICRO, "train_micro_batch_size_per_gpu")
    if _MICRO_NAMED.search(text):
        # "I set the micro batch size to 1 … a batch size of 1 … the batch size to 384 and the micro batch size to 6":
        # where the prose names the micro batch, a bare "batch size" is the global one, not another micro value
        bare = [m for m in micro if _BARE_BATCH_AT.match(text, m[0])]
        micro = [m for m in micro if not _BARE_BATCH_AT.match(text, m[0])]
        named = {v for _, v in micro}
        if len(named) == 1 and bare and slots.train_micro_batch_size_per_gpu in {v for _, v in bare} - named:
            # "… is a batchsize of 1600 and micro batch size of 200 (with 8 GPUs)": the one micro batch named as such
            slots.train_batch_size = slots.train_batch_size or slots.train_micro_batch_size_per_gpu
            slots.train_micro_batch_size_per_gpu = next(iter(named))
    if latest := _latest(text, micro):
        slots.train_micro_batch_size_per_gpu = latest[1]
    elif len({v for _, v in micro}) > 1 and (paired := _paired_with_ga(text, micro)) is not None:
        # "Is --batch_size 64 equivalent to --batch_size 8 and --accumulate_gradients 8?": of the batches compared, the
        # one written with its accumulation is the accumulating run the question is about
        slots.train_micro_batch_size_per_gpu = paired
    if (m := _MICRO_CHANGE.search(text)) and not _TOTAL_BEFORE.search(text[max(0, m.start() - 16) : m.start()]):
        old, new = int(m.group(1)), int(m.group(2))
        slots.train_micro_batch_size_per_gpu = old if _change_fixed(text, m) else new
        if (slots.base_batch_size, slots.train_batch_size) == (old, new):
            slots.base_batch_size = slots.train_batch_size = None  # read as a change of the effective batch
        if total := _WITH_TOTAL.match(text, m.end()):
            slots.train_batch_size = int(total.group(1))  # "from 1 to 32 with total 256"
    if (m := _MICRO_FROM_TO.search(text)) and not _TOTAL_BEFORE.search(text[max(0, m.start() - 16) : m.start()]):
        asked_or_fixed = _change_asked(text, m) or _change_fixed(text, m)
        slots.train_micro_batch_size_per_gpu = int(m.group(1)) if asked_or_fixed else int(m.group(2))
    # "I set --nproc-per-node to 1 … However, when I set --nproc-per-node to 2": the later launch is the one asked about
    if latest := _latest(text, _mentions(text, _GPUS_WORD, "world_size")):
        slots.world_size = latest[1]
    ga = _mentions(text, _GA, "gradient_accumulation_steps")
    if (latest := _latest(text, ga)) and not _GA_CHANGE.search(text) and not _GA_CHANGE_FAR.search(text):
        slots.ga_from, slots.gradient_accumulation_steps = ga[0][1], latest[1]
    # "When I set IMS_PER_BATCH = 32, the training takes 2 days. When I set IMS_PER_BATCH = 128, … 7 days" (detectron2
    # #3520): a global batch key set twice, the later run is the one asked about
    if latest := _latest(text, _mentions(text, None, "train_batch_size")):
        slots.train_batch_size = latest[1]
    # "(batch size = 2 * 8 = 16)" … "change it into … (batch size = 8 * 1 = 8)" (mmsegmentation #2026)
    products = [(m.start(), v) for m in _BATCH_AS_PRODUCT.finditer(text) if (v := _batch_product(m, text)[0])]
    if latest := _latest(text, products):
        slots.train_batch_size = latest[1]
    # "original setting … learning rate=0.02. Am I right that I should change it into … learning rate=0.01?"
    # (mmsegmentation #2026): the rate of the run asked about
    rates = [
        (m.start(), lr)
        for m in _LR.finditer(text)
        if (lr := _learning_rate(m, text)[0]) is not None and not _not_a_setting(text, m.start())
    ]
    if latest_rate := _latest(text, rates):
        slots.base_learning_rate = latest_rate[1]
    elif len({lr for _, lr in rates}) == 1 and slots.base_learning_rate not in {lr for _, lr in rates}:
        # "In original … configuration, the learning rate is 0.02 … I changed the learning rate to 0.0025"
        # (mmdetection #4993): the shipped config's rate is no setting of theirs; the one they set is
        slots.base_learning_rate = rates[0][1]


# The user's own formula for the total batch: "总batch_size = train_batch_size * GA * 卡数", "global = bs x grad_acc x
# n_gpus". A batch key multiplied by the accumulation steps *and* the device count is the per-device batch there,
# whatever the framework calls it (DeepSpeed's `train_batch_size` is the total; the user's formula says otherwise).
_FORMULA = re.compile(
    r"[A-Za-z_\u4e00-\u9fff][\w\u4e00-\u9fff]*(?:(?:\s*[*×]\s*|\s+x\s+)[A-Za-z_\u4e00-\u9fff][\w\u4e00-\u9fff]*){2,4}"
)
_FORMULA_GA = re.compile(
    r"^(?:gradient_accumulation(?:_steps)?|grad_acc\w*|ga|accum\w*|accumulation_steps|update[-_]freq|梯度累[积加计]\w*)$",
    re.I,
)
_FORMULA_DEVICES = re.compile(
    r"^(?:n_?gpus?|num_gpus?|num[-_]of[-_]gpus|gpus?|num_devices|n_devices|devices?|device_num|device_count|world_size|nproc\w*|"
    r"num_processes|"
    r"卡数|显卡数|gpu数|gpu数量|卡的数量|显卡数量|设备数)$",
    re.I,
)


def _factors(m: re.Match[str]) -> list[str]:
    """A formula's factors, without Chinese glued to either end ("指的是Device_num", "accumulation_steps这样")."""
    out = []
    for f in re.split(r"\s*[*×]\s*|\s+x\s+", m.group(0)):
        f = re.sub(r"^[\u4e00-\u9fff]+(?=[A-Za-z_])", "", f.strip())
        out.append(re.sub(r"(?<=[A-Za-z0-9_])[\u4e00-\u9fff]+$", "", f))
    return out


def per_device_formula(text: str) -> re.Match[str] | None:
    """The user's formula that multiplies ``train_batch_size`` by the accumulation steps and the device count."""
    for m in _FORMULA.finditer(text):
        factors = _factors(m)
        if (
            "train_batch_size" in (f.lower() for f in factors)
            and any(_FORMULA_GA.match(f) for f in factors)
            and any(_FORMULA_DEVICES.match(f) for f in factors)
        ):
            return m
    return None


_FORMULA_PER_DEVICE = re.compile(
    r"^(?:per_device\w*|micro\w*|\w*per_(?:gpu|device)\w*|bs_per\w*|local_batch\w*|max[-_]sentences|每卡\w*)$", re.I
)


def _total_by_formula(text: str, slots: Slots) -> None:
    """ "batch_size=19200，指的是Device_num*per_device_batch_size*accumulation_steps吗": a batch value the formula right
    after it multiplies out of the per-device batch, the accumulation steps and the devices is the total."""
    micro = slots.train_micro_batch_size_per_gpu
    if micro is None or slots.train_batch_size is not None:
        return
    for m in _FORMULA.finditer(text):
        factors = _factors(m)
        if not (
            any(_FORMULA_PER_DEVICE.match(f) for f in factors)
            and any(_FORMULA_GA.match(f) for f in factors)
            and any(_FORMULA_DEVICES.match(f) for f in factors)
        ):
            continue
        before = text[max(0, m.start() - 30) : m.start()]
        if (n := re.search(r"(\d+)\D{0,24}$", before)) and int(n.group(1)) == micro:
            slots.train_batch_size, slots.train_micro_batch_size_per_gpu = micro, None
            return


# "batch_size: 32 (total)", "batch size 256（全局）": the value is marked as the total batch right after it.
_BATCH_MARKED_TOTAL = re.compile(
    r"(?<![A-Za-z_])(?:batch[-_ ]?size|bs|batch)\s*(?:=|:|：|is|of|为|是)?\s*(\d+)" + _TOTAL_AFTER.pattern, re.I
)


# The global batch written as numbers with what each counts: "the effective batch size : 32 x 8 nodes x 8 gpus =
# 2048" (VideoMAE #64), "16 per GPU x 4 GPUs x 2 accumulation steps = 128". A bare number is the per-GPU batch.
_UNIT_PRODUCT = re.compile(
    r"(?<![\w.])(\d{1,6}(?:\s*[A-Za-z/ ]{0,24}?)?(?:(?:\s+[xX]\s+|\s*[×*]\s*)\d{1,6}(?:\s*[A-Za-z/ ]{0,24}?)?){1,3})"
    r"\s*=\s*(\d{1,7})(?![\d.])"
)
_UNIT_KINDS = (
    ("num_nodes", re.compile(r"^(?:nodes?|machines?|servers?|hosts?)$", re.I)),
    (
        "train_micro_batch_size_per_gpu",
        re.compile(
            r"^(?:(?:batch(?:[-_ ]?size)?|samples?|images?|imgs?|sequences?)\s+)?(?:per|/|each|on each)\s*(?:gpu|device|card)$",
            re.I,
        ),
    ),
    (
        "world_size",
        re.compile(r"^(?:gpus?|cards?|devices?)(?:\s+(?:per|each|on each)\s+(?:node|machine|server))?$", re.I),
    ),
    (
        "gradient_accumulation_steps",
        re.compile(r"^(?:(?:grad(?:ient)?\s+)?accum\w*(?:\s+steps?)?|GA(?:\s+steps?)?|accumulation\s+steps?)$", re.I),
    ),
)


def _unit_product(text: str, slots: Slots) -> None:
    """Reads :data:`_UNIT_PRODUCT`: the per-GPU batch, accumulation and total from the user's own arithmetic, and the
    GPUs and nodes where nothing else named them. A GPU or node count must be among the factors, so "2 * 8 = 16" alone
    (a batch, a GPU count or two sizes) is not read."""
    for m in _UNIT_PRODUCT.finditer(text):
        parts = re.split(r"\s+[xX]\s+|\s*[×*]\s*", m.group(1).strip())
        found: dict[str, int] = {}
        bare: list[int] = []
        for part in parts:
            n, unit = re.match(r"(\d+)\s*(.*)$", part).groups()  # type: ignore[union-attr]
            unit = unit.strip()
            kind = next((k for k, pattern in _UNIT_KINDS if pattern.match(unit)), "" if unit else "bare")
            if not kind or kind in found:
                break
            if kind == "bare":
                bare.append(int(n))
            else:
                found[kind] = int(n)
        else:
            if len(bare) > 1 or "world_size" not in found or math.prod([*found.values(), *bare]) != int(m.group(2)):
                continue
            if bare:
                if "train_micro_batch_size_per_gpu" in found:
                    continue
                found["train_micro_batch_size_per_gpu"] = bare[0]
            slots.train_micro_batch_size_per_gpu = found["train_micro_batch_size_per_gpu"]
            slots.gradient_accumulation_steps = found.get(
                "gradient_accumulation_steps", slots.gradient_accumulation_steps
            )
            slots.train_batch_size = int(m.group(2))
            if slots.world_size is None:
                slots.world_size = found["world_size"] * found.get("num_nodes", 1)
                slots.num_nodes = found.get("num_nodes", slots.num_nodes)
            return


# "we calculate 16 pictures at a time, accumulate 4 times …, which is equivalent to using batchsize of 64" (yolov3
# #1010): after accumulation is named, the batch a run is "equivalent to" is its total, and the micro batch is the count
# done "at a time" whose product with the steps makes it. (Before it, "Is --batch_size 64 equivalent to --batch_size 8
# and --accumulate 8?", the batch after "equivalent to" is the accumulating run: not read here.)
_ACCUMULATED_EQUIVALENT = re.compile(
    r"(?:accum\w*|累积|累加|\bGA\b)[^\n]{0,200}?(?:equivalent|equal|same as|相当于|等价于|等效于)\s*(?:to\s+)?(?:using\s+|having\s+)?"
    r"(?:an?\s+)?(?:effective\s+|global\s+|total\s+)?(?:batch[-_ ]?size|batch|bs)\s*(?:of\s+|=\s*|is\s+|为\s*)?(\d{1,6})"
    r"(?![\d.])",
    re.I,
)
_AT_A_TIME = re.compile(
    r"(?<![\w.])(\d{1,5})\s*(?:pictures?|images?|imgs?|samples?|examples?|sequences?)\s+(?:at\s+(?:a|one)\s+time|"
    r"per\s+(?:forward|pass|step))",
    re.I,
)


def _accumulated_equivalent(text: str, slots: Slots) -> None:
    """Reads :data:`_ACCUMULATED_EQUIVALENT`: the total an accumulating run amounts to, and its micro batch when a count
    done "at a time" times the steps makes that total (a micro batch read as the total itself is dropped)."""
    ga = slots.gradient_accumulation_steps
    if not ga or ga < 2 or not (m := _ACCUMULATED_EQUIVALENT.search(text)):
        return
    total = int(m.group(1))
    micro = next((n for a in _AT_A_TIME.finditer(text) if (n := int(a.group(1))) * ga == total), None)
    read = slots.train_micro_batch_size_per_gpu
    if micro is None and read is not None and read != total:
        if read * ga == total and slots.train_batch_size is None:
            slots.train_batch_size = total  # "--batch_size 8 and --accumulate 8, is it equivalent to batch size 64?"
        return
    slots.train_batch_size = total
    slots.train_micro_batch_size_per_gpu = micro


def _per_gpu_count_times_gpus(text: str, slots: Slots) -> None:
    """A bare batch equal to a per-GPU count the message also gives × its GPUs (× GA): "2imgs/gpu, 8gpus,
    batchsize=16" (mmdetection #3240) is 2 per GPU and 16 in all, not 16 per GPU."""
    bare, gpus = slots.train_micro_batch_size_per_gpu, slots.world_size
    if bare is None or not gpus or gpus < 2 or slots.train_batch_size is not None:
        return
    accumulated = slots.gradient_accumulation_steps or 1
    per_gpu_counts = [int(next(g for g in m.groups() if g is not None)) for m in _MICRO_AFTER.finditer(text)]
    if bare in per_gpu_counts:
        return  # told per GPU itself ("8 samples per gpu in training … 2 samples per gpu in validation", mmseg #2108)
    for per_gpu in per_gpu_counts:
        if per_gpu * gpus * accumulated == bare:
            slots.train_micro_batch_size_per_gpu, slots.train_batch_size = per_gpu, bare
            return


def _batch_in_own_formula(text: str, slots: Slots) -> None:
    if (m := _BATCH_MARKED_TOTAL.search(text)) and slots.train_batch_size is None:
        slots.train_batch_size = int(m.group(1))
        if slots.train_micro_batch_size_per_gpu == slots.train_batch_size:
            slots.train_micro_batch_size_per_gpu = None
    _total_by_formula(text, slots)
    _unit_product(text, slots)
    _accumulated_equivalent(text, slots)
    _per_gpu_count_times_gpus(text, slots)
    if slots.train_batch_size is None or slots.train_micro_batch_size_per_gpu is not None:
        return
    if m := per_device_formula(text):
        slots.train_micro_batch_size_per_gpu, slots.train_batch_size = slots.train_batch_size, None
        if total := re.match(r"\s*=\s*(\d+)(?![\d.])", text[m.end() :]):
            slots.train_batch_size = int(total.group(1))


# Vision-language settings. The size of the images: "图片大小是640*640", "images are resized to 768×768", "分辨率
# 1920x1080" (width × height, as resolutions are written).
_IMAGE_SIZE = re.compile(
    r"(?:图片|图像|照片|images?|pictures?|photos?|frames?|分辨率|resolution|resized?\s+to|尺寸)[^\n\d]{0,16}?"
    r"(?<![\d.])(\d{2,5})\s*[x×*X]\s*(\d{2,5})(?!\d|\.\d)",
    re.I,
)
# The Qwen2-VL processor's bound: `image_max_pixels: 262144` (LLaMA-Factory), `MAX_PIXELS=1003520` (ms-swift's
# environment variable), `max_pixels=1280*28*28` (qwen-vl-utils, the processor).
_MAX_PIXELS = re.compile(r"(?<![A-Za-z])(?:image_)?max_pixels\b[\s\"']*[:=]\s*[\"']?(\d+(?:\s*\*\s*\d+)*)", re.I)
_IMAGE_COUNT = re.compile(
    r"(?:每(?:个|条)?(?:样本|数据|对话|样例|sample)\S{0,6}?)(\d{1,3})\s*(?:张|幅)(?:图|图片|图像)|"
    r"(?<![\d.])(\d{1,3})\s+images?\s+(?:per|in each|in every|for each|in one|in a)\s+"
    r"(?:sample|example|prompt|conversation|turn|query|instance)|"
    r"images?[_ ]per[_ ]sample\W{0,4}(\d{1,3})",
    re.I,
)
_FREEZE_VIT = re.compile(r"\b(?:freeze_vision_tower|freeze_vit)\b[\s\"']*[:= ]\s*[\"']?(true|false|1|0)\b", re.I)


def _pixel_product(expr: str) -> int:
    n = 1
    for factor in re.split(r"\s*\*\s*", expr.strip()):
        n *= int(factor)
    return n


_IMAGE_RULES = (
    SlotRule(
        ("image_width", "image_height"),
        (_IMAGE_SIZE,),
        lambda m, text: (
            (int(m.group(1)), int(m.group(2))) if min(int(m.group(1)), int(m.group(2))) >= 14 else (None, None)
        ),
    ),
    SlotRule(("image_max_pixels",), (_MAX_PIXELS,), lambda m, text: (_pixel_product(m.group(1)),)),
    SlotRule(
        ("images_per_sample",),
        (_IMAGE_COUNT,),
        lambda m, text: (int(next(g for g in m.groups() if g is not None)) or None,),
    ),
    SlotRule(("freeze_vision_tower",), (_FREEZE_VIT,), lambda m, text: (m.group(1).lower() in ("true", "1"),)),
)


# The host's RAM as people write it: "内存1T", "内存 512G", "机器内存 256GB", "64GB of RAM", "RAM: 128 GB", "system memory
# is 256GB". Not GPU memory: "显存", "显卡内存", "GPU memory", "VRAM" never match ("内存" right after 显卡/GPU/卡 is the
# card's).
_HOST_RAM_SIZE = re.compile(
    r"(?<!显卡)(?<!GPU)(?<!gpu)(?<!卡)(?:主机|系统|物理|机器|运行|CPU\s*|cpu\s*)?内存\s*(?:大小)?\s*(?:是|为|有|只有|共|总共|:|：)?\s*"
    r"(\d{1,5}(?:\.\d+)?)\s*(TB|T|GB|G|GiB|TiB)(?![A-Za-z])|"
    r"(\d{1,5}(?:\.\d+)?)\s*(TB|T|GB|G|GiB|TiB)\s*(?:的)?\s*(?:主机|系统|物理|运行|CPU\s*)?内存|"
    # ("a 16GB RAM GPU", TheChosenOne #5: the card's)
    r"(\d{1,5}(?:\.\d+)?)\s*(TB|T|GB|G|GiB|TiB)\s*(?:of\s+)?(?:system\s+|host\s+|CPU\s+|cpu\s+|DDR\d\s+)?(?<![Vv])RAM\b"
    r"(?!\s*(?:GPU|graphics|video|card))|"
    r"(?<![Vv])\b(?:RAM|system memory|host memory|CPU memory|CPU RAM)\s*(?:is|of|:|=)?\s*(\d{1,5}(?:\.\d+)?)\s*(TB|T|GB|G|GiB|TiB)\b"
)


# A card's name or count just before the size: "3090 24G内存" is the card's memory in loose wording.
# ("一块2080Ti的11G的内存": with the card's 的 between them)
_GPU_JUST_BEFORE = re.compile(r"(?:[AHVLT]\d{2,3}|\d{4}(?:\s*ti)?|[卡显]|gpu)s?\s*(?:with\s*|[(（]\s*|的\s*)?$", re.I)
# "8 A100s with 80GB of RAM each": the size is each card's.
_EACH_AFTER = re.compile(r"\s*(?:each|per (?:GPU|card|device)|apiece|每张|每卡|每块)", re.I)


def _host_ram(text: str, slots: Slots) -> None:
    m = next(
        (
            x
            for x in _HOST_RAM_SIZE.finditer(text)
            if not _GPU_JUST_BEFORE.search(text[max(0, x.start() - 16) : x.start()])
            and not _EACH_AFTER.match(text, x.end())
        ),
        None,
    )
    if m is None:
        return
    value, unit = next((m.group(i), m.group(i + 1)) for i in (1, 3, 5, 7) if m.group(i))
    gb = float(value) * (1024 if unit.upper().startswith("T") else 1)
    if 1 <= gb <= 100_000:
        slots.host_ram_gb = gb


def _images(text: str, slots: Slots) -> None:
    for rule in _IMAGE_RULES:
        rule.apply(text, slots)


# RWKV's and BLOOM's way of writing a size with its decimal after the unit: "RWKV 1B5", "RWKV-4-Raven-1B5-v11.pth",
# "bloom-7b1" are 1.5B and 7.1B (BlinkDL/RWKV-LM, bigscience/bloom-7b1 on the HF Hub).
# After a word and a separator only, not after two hex digits: a UUID's piece ("…c0b6-41b2") is no size; nor is
# Huawei's Ascend "910B3" NPU.
_UNIT_THEN_DECIMAL = re.compile(
    r"(?<=[A-Za-z]{2}[-_ ])(?<![0-9a-fA-F]{2}[-_ ])(?!910[bB])(\d{1,3})([bB])(\d)(?![A-Za-z0-9.])"
)

# UUIDs and long hex digests (image links, commit hashes, run ids) hold digit-letter runs like "426b" or "7b" that are
# no model size.
_HEX_ID = re.compile(
    r"(?<![0-9A-Za-z])(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{12,64})(?![0-9A-Za-z])",
    re.I,
)


# Accelerate's printout of the defaults it used ("The following values were not passed to `accelerate launch` and had
# defaults used instead: `--num_processes` was set to a value of `2` … If this was unintended please pass in
# `--num_processes=1`."; accelerate commands/launch.py, _validate_launch_command): each value is what the run used,
# read as the flag it names; the advice after it is no setting.
_ACCELERATE_DEFAULT = re.compile(r"`(--[\w-]+)` was set to a value of `'?([^'`\n]*)'?`")
_ACCELERATE_ADVICE = re.compile(r"If this was unintended please pass in `--[\w-]+=\d+`\.?")


def _accelerate_defaults(text: str) -> str:
    """The text with Accelerate's printout of defaults written as the flags it reports (see ``_ACCELERATE_DEFAULT``).
    Its `--mixed_precision` is the launcher's default, not the run's precision: the HF Trainer sets its own from
    ``bf16`` / ``fp16`` in its arguments, so that line says nothing."""
    if "was set to a value of" not in text and "If this was unintended" not in text:
        return text

    def flag(m: re.Match[str]) -> str:
        return " " if m.group(1) in ("--mixed_precision", "--dynamo_backend") else f"{m.group(1)} {m.group(2)}"

    return _ACCELERATE_DEFAULT.sub(flag, _ACCELERATE_ADVICE.sub(" ", text))


# A script's comment that gives another value as an example (Megatron-LM #509: "HIDDEN_SIZE=4096 # e.g. llama-13b:
# 5120" in a 7B script): the example's model and numbers are not the run's.
_EXAMPLE_COMMENT = re.compile(r"#[ \t]*(?:e\.?g\.?|for example|for instance|例如|比如)(?![\w])[^\n]*", re.I)


# A Megatron / GPT-NeoX launch that gives the network's shape instead of a model name: `--num-layers 60 --hidden-size
# 6144` (DeepSpeed #237), `NUM_LAYERS=32`, `"num_layers": 44`; the feed-forward width (`--ffn-hidden-size`, else 4 ×
# hidden; gated with `--swiglu`) and a padded vocabulary when given.
_SHAPE_FLAG = r"(?:--|(?<![\w-])[\"']?)(?i:{name})[\"']?\s*(?:[:=]\s*|\s+)[\"']?(\d{{1,6}})\b"
_SHAPE_LAYERS = re.compile(_SHAPE_FLAG.format(name=r"num[-_]layers"))
_SHAPE_HIDDEN = re.compile(_SHAPE_FLAG.format(name=r"hidden[-_]size"))
_SHAPE_FFN = re.compile(_SHAPE_FLAG.format(name=r"ffn[-_]hidden[-_]size"))
_SHAPE_VOCAB = re.compile(_SHAPE_FLAG.format(name=r"padded[-_]vocab[-_]size"))
_SWIGLU = re.compile(r"--swiglu\b|\bswiglu\b\s*[:=]\s*true", re.I)


def _network_shape(text: str, slots: Slots) -> None:
    """The parameter count of a transformer given by its shape (12·L·h² with a 4h feed-forward: attention 4h² plus
    feed-forward 2·h·ffn, or 3·h·ffn gated; plus the embedding when the vocabulary is given), when the text names no
    model but a script's file name ("pretrain_gpt2.py" runs whatever shape its flags give)."""
    if slots.num_params is not None or (slots.model is not None and not slots._model_from_file_name):
        return
    layers = {m.group(1) for m in _SHAPE_LAYERS.finditer(text)}
    hidden = {m.group(1) for m in _SHAPE_HIDDEN.finditer(text)}
    if len(layers) != 1 or len(hidden) != 1:
        return  # no shape, or a script that picks one of several (`if [ ${MODEL_SIZE} == 7 ]; then … elif …`)
    n_layers, h = int(layers.pop()), int(hidden.pop())
    if not (1 <= n_layers <= 512 and 64 <= h <= 65536):
        return
    ffn = int(f.group(1)) if (f := _SHAPE_FFN.search(text)) else 4 * h
    per_layer = 4 * h * h + (3 if _SWIGLU.search(text) else 2) * h * ffn
    vocab = int(v.group(1)) if (v := _SHAPE_VOCAB.search(text)) else 0
    slots.num_params = float(n_layers * per_layer + vocab * h)
    slots.model, slots.model_text, slots._model_from_file_name = None, f"{n_layers}-layer {h}-hidden transformer", False


# Markdown emphasis in prose ("when I use **2 GPUs** with **DDP** backend and **batch size** of **512** on each GPU",
# Lightning #3706), not a power ("2**16"): the words between the marks are read as written.
_BOLD = re.compile(r"(?<![\w*])\*\*(?=\S)([^*\n]{1,80}?)(?<=\S)\*\*(?![\w*])")
# A value quoted in prose ("- batch size：`1`", "- max length：`8192`", Qwen3-VL #2053; `--max_length "8192"`,
# ms-swift #495): read as the value it quotes. Only a short code span without spaces, and only a number in double
# quotes, so a quoted sentence stays a sentence.
_QUOTED_VALUE = re.compile(r"`([^`\s]{1,80})`|(?<![\w\"])\"(\d+(?:\.\d+)?)\"(?![\w\"])")


def extract_slots(text: str, prose: bool = False) -> Slots:
    """Every setup fact the text states; unknown stays None. ``prose``: the user's own sentences (not a pasted
    config or command), where a later value of a setting replaces an earlier one."""
    text = _HEX_ID.sub(lambda m: " " * len(m.group(0)), text)  # "…/e8bfda6b-42fe-426b-…": no 426B model in an id
    text = _EXAMPLE_COMMENT.sub(lambda m: " " * len(m.group(0)), text)  # "# e.g. llama-13b: 5120" is not the run
    text = _accelerate_defaults(text)
    written: dict[str, str] = {}  # "1.5B" read → "1B5" as written

    def _decimal_first(m: re.Match[str]) -> str:
        read = f"{m.group(1)}.{m.group(3)}{m.group(2)}"
        written[read] = m.group(0)
        return read

    text = _UNIT_THEN_DECIMAL.sub(_decimal_first, text)
    if prose:
        text = _BOLD.sub(lambda m: f"  {m.group(1)}  ", text)  # offsets kept for the readers that look around a match
        text = _QUOTED_VALUE.sub(lambda m: f" {m.group(1) or m.group(2)} ", text)  # offsets kept, as above
    slots = Slots()
    for step in (
        _model,
        _network_shape,
        _gpu,
        _batch,
        _parallel,
        _precision,
        _sequence,
        _finetune,
        _memory_features,
        _assignments,
        _batch_as_frameworks_write_it,
        _images,
        _host_ram,
    ):
        step(text, slots)
    if prose:
        _latest_in_prose(text, slots)
    _batch_in_own_formula(text, slots)
    _fsdp(text, slots)  # last: a ZeRO stage read anywhere above rules it out
    if slots.model_text:
        for read, as_written in written.items():  # the name as the user wrote it ("bloom-7b1", not "bloom-7.1b")
            slots.model_text = slots.model_text.replace(read, as_written)
    return slots


assert set(MODEL_PRESETS) >= {name for _, name in _MODEL_PATTERNS}
assert set(GPU_PRESETS) >= {name for _, name in _GPU_PATTERNS}
