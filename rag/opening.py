"""Whether a card's lead may open the answer to *this* question (issue #10: "the first sentence answers the act").

Retrieval ranks a card first for every message, and a card's lead answers the card's own question: "No. GA keeps one
gradient buffer" answers "does GA store a copy per micro-batch?", "This is Accelerate by design: …" explains what an
Accelerate user saw. Opening every answer with the top card's lead answers the wrong question whenever the act or the
card is off. A lead opens only when the card answers this question, read from structure, not from wordings:

* **kind** — a yes/no lead ("No.", "不会。", "Yes, …") answers a yes/no or is-it-normal question; a lead that explains
  an observation ("This is … by design", "The usual cause is …") answers a diagnosis, an is-it-normal or a *why*
  question; a plain statement answers anything. So "bf16 or fp16, which?" never opens with "It does not halve".
* **topic** — the card's titles, questions and symptoms name a mechanism, tool or setting (a glossary concept, not a
  symptom word) or a config key that the sentences that *ask* name; the pasted log and the description around them
  count only when the asking sentences name nothing.
* **symptom** — a question that asks about memory, loss or speed ("Is LoRA slower …?") is not answered by a card
  that speaks of none of it (the LoRA-memory card).
* **framework** — a lead whose first sentence is about one training stack (Accelerate, LLaMA-Factory, verl,
  torchtune, …) does not open for a message that names only other stacks (an espnet question does not open with
  "LLaMA-Factory uses …"). Backends that combine with any stack (DeepSpeed, FSDP) never conflict.

When no retrieved card passes, the composer opens with what the act itself can say from the user's own values.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Literal, cast

from pydantic import BaseModel, Field

from calculators.diagnose.hw_support import AMPERE_CHECK

from .acts import Act, asked_sentences, reports_symptom
from .cards import Card
from .evidence import HANG, card_in_family, symptom_family
from .glossary import find_terms
from .intents import MULTI_GPU
from .parts import Part, prose_of

LeadKind = Literal["verdict", "observation", "statement"]

# Yes/no words a lead can open with (English leads decide the kind; both languages' leads say the same thing).
_VERDICT_LEAD = re.compile(
    r"^(?:yes|no|not (?:true|normal|by half|automatically|necessarily|really|quite)|false|true|hardly|"
    r"essentially (?:no|yes)|it does not|it doesn'?t|they (?:cannot|can'?t|do not|don'?t)|usually not|rarely)\b",
    re.I,
)
# A lead that explains something the user saw: "This is expected", "This is Accelerate by design", "This is DeepSpeed's
# consistency assertion", "The usual cause is …", "Only GPU 0 filling up … is the signature of …", "… means …".
_OBSERVATION_LEAD = re.compile(
    r"^this is\b|^that is\b|\bby design\b|^the (?:usual|most common|common) (?:cause|reason)\b|\bthe signature of\b|"
    r"^an? [\w-]+ (?:at|during|in) [\w-]+ (?:time )?is usually\b|\bis usually not\b|^(?:a|the) (?:jump|spike|drop)\b",
    re.I,
)
# A model size ("7B", "llama2-7b", "Mixtral 8x7B is 46.7B"), either case.
_SIZE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?[Bb](?![\w/])|(?<=-)\d+(?:\.\d+)?[Bb](?![\w/])")
_WHY = re.compile(r"\bwhy\b|\bhow come\b|为什么|为啥|为何|怎么会|什么原因|原因是", re.I)
# Whole sentences (a comma does not end the question: "bf16 or fp16, which should I use?").
_SENTENCE = re.compile(r"(?<=[。！？!?\n；;])|(?<=[.])\s+")
# Config keys and backticked names ("accum_grad", "`gradient_accumulation_steps`"): a topic when the glossary has none.
_KEY = re.compile(r"`([^`\n]{3,60})`|\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b|\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+)\b")
#: The auxiliary verbs an English yes/no question opens with.
_AUX = r"(?:is|are|does|do|did|can|could|will|would|should|has|have|was|were)\b"
#: The second half of a choice question split off as its own asking sentence: "…, or does it mean …?".
_ALTERNATIVE = re.compile(r"\s*or\s+" + _AUX, re.I)
# A sentence that asks whether a claim holds ("Is … ?", "越大越好吗？", "是否…", "会不会…"), not which or how.
_POLAR = re.compile(
    r"^\W*" + _AUX + r"|[吗么嘛]\s*[?？]?\s*$|"
    r"是否|会不会|能不能|是不是|有没有|可不可以|对不对|要不要",
    re.I,
)

#: Training stacks a lead or a message can be about, and how a message names them. Stacks built on another one
#: imply it (LLaMA-Factory and TRL run the HF Trainer, which runs Accelerate). Compiled with re.ASCII: Chinese
#: users write a stack's name with no space around it ("从xtuner训练时", "用Trainer训练"), and a Unicode \b finds
#: no word boundary between a CJK character and a Latin letter.
_STACKS: dict[str, re.Pattern[str]] = {
    "accelerate": re.compile(r"\baccelerate(?: launch| config|\.|'s)|\baccelerator\b|\bAccelerate\b", re.A),
    # Case-sensitive: "the trainer" is any training loop, "Trainer" the class; "transformers" only as the library.
    "hf-trainer": re.compile(
        r"\bTrainer\b|TrainingArguments|\bHF [Tt]rainer\b|per_device_train_batch_size|from transformers\b|"
        r"import transformers\b|\btransformers(?:\s*(?:==|>=|<=|version|v?\d)|\.|/)|\bTransformers\b",
        re.A,
    ),
    # its example configs' paths name it too: examples/train_full/llama3_full_sft_ds3.yaml
    # ... and so do its own argument name `finetuning_type` and its pre-0.6 entry scripts (`src/train_bash.py`; its
    # predecessor ChatGLM-Efficient-Tuning's `src/train_sft.py`), which its users paste without naming it:
    # https://github.com/hiyouga/LLaMA-Factory/blob/main/src/llamafactory/hparams/finetuning_args.py
    "llamafactory": re.compile(
        r"llama[-_ ]?factory|\bllamafactory|\bexamples/train_(?:full|lora|qlora)/|\bfinetuning_type\b|"
        r"\bsrc/train_(?:bash|sft|pt|rm|ppo|dpo)\.py\b",
        re.I | re.A,
    ),
    "trl": re.compile(r"\btrl\b|\b(?:SFT|DPO|GRPO|PPO|Reward)(?:Trainer|Config)\b", re.I | re.A),
    "torchtune": re.compile(r"\btorchtune\b|\btune run\b", re.I | re.A),
    # verl's own settings name it too: rollout.n, ppo_mini_batch_size, the recipes' train_prompt_bsz
    "verl": re.compile(
        r"\bverl\b|actor_rollout_ref|\bDataProto\b|\brollout\.n\b|\bppo_(?:mini|micro)_batch_size|\btrain_prompt_(?:mini_)?bsz\b",
        re.I | re.A,
    ),
    # its own command-line flags name it too (Megatron-LM's megatron/training/arguments.py): --tensor-model-parallel-size,
    # --pipeline-model-parallel-size, --use-distributed-optimizer. Dashed only: verl's and vLLM's underscored
    # tensor_model_parallel_size is a rollout engine's setting, not a Megatron run.
    "megatron": re.compile(
        r"megatron|--(?:tensor|pipeline)-model-parallel-size\b|--use-distributed-optimizer\b", re.I | re.A
    ),
    "alpaca-lora": re.compile(r"alpaca[-_ ]?lora", re.I | re.A),
    "espnet": re.compile(r"\bespnet", re.I | re.A),
    "fairseq": re.compile(r"\bfairseq", re.I | re.A),
    "lightning": re.compile(r"\b(?:pytorch[-_ ])?lightning\b", re.I | re.A),
    "colossalai": re.compile(r"colossal[-_ ]?ai", re.I | re.A),
    "nemo": re.compile(r"\bnemo\b", re.I | re.A),
    "mmengine": re.compile(r"\bmm(?:engine|cv|det|seg)\b", re.I | re.A),
    "paddle": re.compile(r"paddle", re.I | re.A),
    "mindspore": re.compile(r"mindspore", re.I | re.A),
    "keras": re.compile(r"\bkeras\b|\btensorflow\b", re.I | re.A),
    "jax": re.compile(r"\bjax\b|\bflax\b", re.I | re.A),
    "axolotl": re.compile(r"\baxolotl\b", re.I | re.A),
    "swift": re.compile(r"\bms[-_]?swift\b|\bswift sft\b", re.I | re.A),
    "xtuner": re.compile(r"\bxtuner\b", re.I | re.A),
    "unsloth": re.compile(r"\bunsloth\b", re.I | re.A),
    # image / video diffusion training (diffusers and the trainers built on it): a card about latent tokens, VAEs and
    # text encoders answers these, not an LLM fine-tune that names LoRA and activations too
    "diffusion": re.compile(
        r"diffus|扩散|\bsdxl\b|\bsd[-_ ]?(?:1\.5|2\.1|3(?:\.5)?)\b|stable[-_ ]?video|cogvideo|hunyuan|\bwan[-_ ]?2\.\d|"
        r"\bflux\.?1?\b|\bimagen\b|dreambooth|kohya|sd-scripts|lora-scripts|fastvideo|finetrainers|musubi|\bDiT\b|"
        r"文生视频|图生视频|text[-_ ]to[-_ ]video|image[-_ ]to[-_ ]video|"
        # (novel-view and conditioned diffusion models: zero123-hf #5, ControlNet)
        r"zero123|zero-1-to-3|controlnet|"
        # (a VAE's latents are what these train on: "precompute and store the VAE encoder latents", OminiControl #125)
        r"\bvae\b",
        re.I | re.A,
    ),
    # its own per-GPU batch flags name it too (https://github.com/OpenRLHF/OpenRLHF cli/train_ppo_ray.py)
    "openrlhf": re.compile(r"open[-_ ]?rlhf|\bmicro_rollout_batch_size\b|\bmicro_train_batch_size\b", re.I | re.A),
}
_IMPLIES: dict[str, tuple[str, ...]] = {
    "llamafactory": ("hf-trainer", "accelerate"),
    "trl": ("hf-trainer", "accelerate"),
    "hf-trainer": ("accelerate",),
    "alpaca-lora": ("hf-trainer", "accelerate"),
    "axolotl": ("hf-trainer", "accelerate"),
    "swift": ("hf-trainer", "accelerate"),
    "unsloth": ("trl", "hf-trainer", "accelerate"),  # FastLanguageModel + TRL's SFTTrainer
}


#: GPU features a message can name (a card whose cause is a GPU lacking one answers a message that names it), and a
#: GPU older than Ampere named anywhere ("之前用H100跑通了代码，但切到V100": the V100 is the one that fails).
_FEATURES: dict[str, re.Pattern[str]] = {
    # ASCII boundaries: Chinese users glue names to the text ("用的是BF16，"), where a Unicode \b finds none.
    "bf16": re.compile(r"(?<![A-Za-z0-9])bf16(?![A-Za-z0-9])|bfloat16", re.I),
    "flash_attention": re.compile(r"flash[-_ ]?att(?:ention|n)?|(?<![A-Za-z0-9])fa2(?![A-Za-z0-9])", re.I),
    "pre_ampere_gpu": re.compile(
        r"(?<![A-Za-z0-9])(?:V100|P100|P40|P4|T4|K80|M40|TITAN ?(?:V|Xp?|RTX)|(?:RTX ?)?20[678]0(?: ?Ti)?|GTX ?\d{3,4}|"
        r"1080(?: ?Ti)?)(?![A-Za-z0-9])",
        re.I,
    ),
}


#: A message about more than one machine: the glossary's ways of saying so ("多机", "两台服务器", "2 nodes"), and what
#: only a multi-node launch sets (NODE_RANK, MASTER_ADDR, a hostfile, ``--nnodes 2``, ``num_machines: 2``).
SEVERAL_NODES = re.compile(
    r"多机|多节点|多台|[两二三四五六八几]\s*[台个]\s*(?:机器|服务器|节点|node)|跨机|跨节点|"
    r"multi[-_ ]?node|multiple (?:nodes|machines|servers)|\b(?:\d+|two|three|four|several) (?:\w+ )?(?:nodes|machines|servers)\b|"
    r"node_rank|master_addr|hostfile|\bnnodes\b\s*[= ]\s*(?:[2-9]|\d{2}|\$)|num_(?:machines|nodes)\b\W{0,3}(?:[2-9]|\d{2})",
    re.I,
)


#: Settings of a run that are never a default, and how a whole message names them: continued pretraining (LLaMA-Factory's
#: `stage: pt`, "增量预训练", domain-knowledge injection) and the process counts of a multi-node launch (Accelerate's
#: num_processes / num_machines / machine_rank, torchrun's nproc_per_node / nnodes). Cards about one of them are cited
#: only for a message that names it (rag.citing.named_setting_conflict).
SETTINGS_NAMED: dict[str, re.Pattern[str]] = {
    # ("预训练模型" / "pretrained" is any base model, and ".pt" a file: neither names a pretraining run)
    "pretraining": re.compile(
        r"pre-?training\b|continu\w* (?:pre-?)?train|增量预训练|继续预训练|二次预训练|做预训练|进行预训练|预训练(?:数据|语料|阶段)|"
        r"知识注入|领域知识|knowledge injection|stage\W{0,3}pt\b|run_pt|domain[- ](?:knowledge|adaptation|corpus)",
        re.I,
    ),
    "launch_counts": re.compile(
        r"accelerate|num_processes|num_machines|machine_rank|main_process_ip|torchrun|nproc[-_]per[-_]node|\bnnodes\b",
        re.I,
    ),
    # the AMP loop a user writes, or the learning rate asked about beside mixed precision (a Trainer's fp16 NaN names
    # neither: the GradScaler contract of a hand-written loop is not its cause)
    "amp_loop": re.compile(
        r"GradScaler|grad_scaler|\bscaler\s*\.|torch\.(?:cuda\.)?amp|autocast|(?<![A-Za-z])(?:amp|apex)(?![A-Za-z])|"
        r"unscale_|(?:fp16|bf16|mixed[- ]precision|半精度|混合精度)[^.。\n]{0,40}(?:learning[- ]rate|\blr\b|学习率)|"
        r"(?:learning[- ]rate|\blr\b|学习率)[^.。\n]{0,40}(?:fp16|bf16|mixed[- ]precision|半精度|混合精度)",
        re.I,
    ),
    # ("4 卡反而比 1 卡慢" names no pipeline: the bubble of one is not its cause)
    "pipeline_parallelism": re.compile(
        r"pipeline|pipe[-_ ]?parallel|(?<![A-Za-z])pp\s*[=:]?\s*\d|(?<![A-Za-z])pp(?![A-Za-z])|流水线|1f1b|gpipe|"
        r"PipelineModule|pipeline_model_parallel|num_stages",
        re.I,
    ),
}


#: How a message names the evaluation phase: the word, a Trainer evaluation setting (``eval_steps``, ``do_eval``,
#: ``per_device_eval_batch_size``), a validation or prediction step, or the glossary's Chinese forms.
#: Platforms other than NVIDIA GPUs on Linux, and how a message names them anywhere (prose, command, log or traceback):
#: AMD GPUs (ROCm builds of PyTorch report ``torch.version.hip``), Huawei Ascend NPUs (``torch_npu``, HCCL, 910B) and
#: Windows (a ``C:\\`` path, WSL). ASCII boundaries: Chinese users glue names to the text ("在AMD卡上").
PLATFORMS: dict[str, re.Pattern[str]] = {
    "amd": re.compile(
        r"(?<![A-Za-z0-9])(?:AMD|ROCm|HIP|Radeon|Instinct|MI\d{2,3}X?|RX ?\d{4}(?: ?XTX?)?)(?![A-Za-z0-9])|version\.hip",
        re.I,
    ),
    "ascend": re.compile(r"ascend|昇腾|华为|(?<![A-Za-z0-9])(?:NPUs?|torch_npu|HCCL|910[ABC]\d?)(?![A-Za-z0-9])", re.I),
    "windows": re.compile(
        r"windows|(?<![A-Za-z0-9])(?:win ?(?:10|11|32|64)|WSL2?|powershell|cmd\.exe)(?![A-Za-z0-9])|(?<![A-Za-z0-9])[C-H]:\\",
        re.I,
    ),
}

#: A message that names an adapter method or what only such a run has: LoRA/QLoRA/DoRA, PEFT, adapters, LoRA settings
#: (``lora_rank``, ``finetuning_type``), a 4/8-bit quantized base (bitsandbytes, ``load_in_4bit``, int4), in either
#: language (低秩, 适配器, 量化).
NAMES_ADAPTER = re.compile(
    r"lora|adapter|peft|finetuning_type|bitsandbytes|(?<![A-Za-z0-9])(?:bnb|int[48]|nf4|[48][- ]?bit)(?![A-Za-z0-9])|"
    r"load_in_[48]bit|quantiz|低秩|适配器|量化",
    re.I,
)

#: Sharding frameworks a card's title can be about, and how a whole message names them (ASCII boundaries: Chinese
#: users glue names to the text, "用deepspeed训练"). DeepSpeed is also named by its config's own keys
#: (``zero_optimization``, ``train_micro_batch_size_per_gpu``, the ``train_batch_size`` its assertion quotes), a ZeRO
#: stage ("ZeRO-3", "zero2", "stage3_gather_16bit_weights_on_model_save"), the usual config file names
#: (``ds_config.json``, ``ds_z3_config.json``, ``finetune_lora_ds.sh``) and the stacks that run only on it (OpenRLHF
#: and its ``micro_train_batch_size``, GPT-NeoX); FSDP by its names, PyTorch's class and function and the stacks that
#: shard with it by default (verl, torchtitan).
SHARDING: dict[str, re.Pattern[str]] = {
    "deepspeed": re.compile(
        r"deepspeed|(?<![A-Za-z0-9_])(?:ds[-_]?(?:z\d|zero|stage|config)|zero[-_ ]?(?:[0-3]|stage|offload|init|\+\+)|"
        r"zero_optimization|zero_stage|stage ?[23](?![0-9])|stage3_\w+|train_micro_batch_size_per_gpu|"
        r"micro_batch_per_gpu|offload_(?:optimizer|param)|micro_train_batch_size|gpt-?neox)|_ds(?:_\w+)?\.(?:sh|json|py)\b|"
        r"(?<![A-Za-z])(?-i:ZeRO)(?![a-z])|open[-_ ]?rlhf",
        re.I,
    ),
    # verl and torchtitan shard with FSDP by default; its sharded checkpoints are named by it too: PyTorch DCP's
    # ``.distcp`` files, verl's FSDP checkpoint manager's ``model_world_size_8_rank_0.pt``
    # (https://github.com/volcengine/verl verl/utils/checkpoint/fsdp_checkpoint_manager.py)
    "fsdp": re.compile(
        r"fsdp|fully[-_ ]?shard|(?<![A-Za-z0-9])(?:verl|actor_rollout_ref|torchtitan)(?![A-Za-z0-9])|\.distcp\b|"
        r"world_size_\d+_rank_\d+",
        re.I,
    ),
}
#: How a card's title subject names them ("HF Trainer + DeepSpeed", "ZeRO-3 hangs when …", "FSDP1 vs FSDP2").
SHARDING_IN_TITLE: dict[str, re.Pattern[str]] = {
    # one stage as the subject ("ZeRO-3 hangs …"), not the stages as a remedy ("How much ZeRO-1/2/3 save", "ZeRO-2
    # or ZeRO-3 for LoRA"): see rag.citing.sharding_conflict
    "deepspeed": re.compile(r"\bDeepSpeed\b|\bZeRO-?[0-3]\b(?!/)"),
    "fsdp": re.compile(r"\bFSDP\d?\b"),
}

#: Training stages after SFT a card's title can be about (RL from human feedback, preference optimisation), and how a
#: whole message names each: the stage, its algorithm's own settings and parts (PPO's critic and reward model, GRPO's
#: generations per prompt, DPO's chosen/rejected pairs), in either language. ASCII boundaries: "用ppo训练".
STAGES: dict[str, re.Pattern[str]] = {
    "ppo": re.compile(
        r"(?<![A-Za-z])(?:ppo|rlhf|critic|reward[_ ]model|rm_model|value[_ ]model)|奖励模型|强化学习|人类反馈", re.I
    ),
    "dpo": re.compile(r"(?<![A-Za-z])(?:dpo|orpo|simpo|kto|preference|chosen|rejected)|偏好", re.I),
    "grpo": re.compile(
        r"(?<![A-Za-z])(?:grpo|num_generations|generations? per prompt|completions?|rollout|dapo|gspo)|强化学习", re.I
    ),
}
#: How a card's title subject names them ("Why PPO needs so much memory", "GRPO batches count completions").
STAGES_IN_TITLE: dict[str, re.Pattern[str]] = {
    "ppo": re.compile(r"\bPPO\b|\bRLHF\b"),
    "dpo": re.compile(r"\bDPO\b"),
    "grpo": re.compile(r"\bGRPO\b"),
}

#: The GPU models a message can name (data-centre and RTX/GTX cards, AMD Instinct, Ascend 910), to tell a message
#: about several models from one about several cards of one model.
_GPU_MODEL = re.compile(
    r"(?<![A-Za-z0-9])(?:(?:RTX|GTX) ?)?(A100|A800|H100|H800|H200|H20|V100|P100|P40|T4|L4|L40S?|A10G?|A30|A40|A[456]000|"
    r"[1-5]0[5-9]0(?: ?Ti)?|MI\d{3}X?|910B)s?(?![A-Za-z0-9])",
    re.I,
)
#: ... and how it says that its GPUs are of different models without naming two ("不同型号的卡", "mixed GPUs", "do the
#: cards have to be the same").
_MIXED_GPUS = re.compile(
    r"不同型号|型号不同|不同的?(?:显卡|gpu)|(?:卡|显卡|gpu)\S{0,2}混用|混合\S{0,4}(?:卡|gpu)|异构|"
    r"different (?:gpu|card)s?|(?:different|mixed|heterogeneous) (?:\w+ )?(?:gpus|cards|gpu models|gpu types)|"
    r"(?:gpus|cards) (?:have to|must|need to) be the same|same (?:gpu|card) models?",
    re.I,
)


def names_mixed_gpus(text: str) -> bool:
    """Whether ``text`` names GPUs of two or more models ("一张3090一张4090", "A6000 and A100") or says its GPUs
    differ."""
    models = {re.sub(r"\s", "", m).upper() for m in _GPU_MODEL.findall(text)}
    return len(models) >= 2 or bool(_MIXED_GPUS.search(text))


NAMES_EVALUATION = re.compile(r"eval|predict|validat|评估|验证|预测|测试集", re.I)
#: A message that names saving a checkpoint or the model (in words or in a traceback's frames); "save memory" and
#: config keys such as `save_steps` do not.
NAMES_SAVING = re.compile(
    r"\bsav(?:e|ed|es|ing)\s+(?:the\s+|a\s+|my\s+|its\s+)?(?:final\s+|trained\s+|whole\s+|lora\s+)?"
    r"(?:model|checkpoints?|ckpt|weights|adapter|state)|\b(?:when|while|during|after|before|at)\s+saving\b|"
    r"save_pretrained|save_model|save_checkpoint|\bin _save\b|state_dict\(|torch\.save|保存|存储|存盘|存模型",
    re.I,
)
#: Model families with a card of their own ("Qwen3-Next / Qwen3.5 training very slow …"): the title's subject names
#: the family, and a message is about it only when it names the family or the kernels its card is about.
MODEL_FAMILIES: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "qwen3-linear-attention": (
        re.compile(r"Qwen3[-_ ]?Next|Qwen3\.5", re.I),
        re.compile(
            r"qwen[-_ ]?3[-_ ]?next|qwen[-_ ]?3[._]5|gated[-_ ]?delta|flash[-_ ]linear[-_ ]attention|\bfla\b|"
            r"causal[-_]conv1d|chunk_gated_delta_rule|linear[-_ ]attention|线性注意力",
            re.I,
        ),
    ),
}
#: A message that names a hang or a run that never gets going: stuck, frozen, a timeout, a failed connection or
#: launch, an NCCL error, a Ray cluster.
NAMES_HANG = re.compile(
    r"\bhang|\bstuck\b|freez|frozen|\btime[ds]? ?out|timeout|connect|rendezvous|nccl|\bray\b|\bnot (?:start|launch|respond)|"
    r"doesn'?t (?:start|launch)|\bno (?:output|progress|log)|\bwait(?:s|ing)\b|\bhostfile|master_addr|desired gpus|"
    r"卡住|卡在|卡死|卡主|不动|没反应|无响应|超时|连接|连不上|启动失败|无法启动|起不来|没有输出|没有日志",
    re.I,
)
#: A message that names speed or time anywhere: how fast, how long, throughput, utilisation.
NAMES_SPEED = re.compile(
    r"slow|(?<!deep)speed|fast(?!chat)|quick|throughput|\bit/s|\bs/it|/s\b|tflops|\bmfu\b|utili[sz]|\bidle\b|\btime\b|\btakes?\b|\btook\b|"
    r"\b(?:hours?|hrs?|minutes?|mins?|seconds?|secs?)\b|\beta\b|耗时|速度|慢|快|时间|时长|效率|利用率|小时|分钟|秒|加速|吞吐",
    re.I,
)

#: A launch of one process per GPU: torchrun and ``python -m torch.distributed.launch/run`` (``--nproc_per_node``),
#: ``accelerate launch``, the ``deepspeed`` launcher with its own flags or a script, ``FORCE_TORCHRUN``. Under such a
#: launch every process drives its own GPU, so nn.DataParallel (what the HF Trainer falls back to when several GPUs are
#: visible to one ``python`` process) is not in use (transformers ``TrainingArguments.n_gpu`` is 1 per process under
#: distributed launch; PyTorch docs "torchrun (Elastic Launch)").
PER_PROCESS_LAUNCH = re.compile(
    r"\btorchrun\b|torch\.distributed\.(?:launch|run)\b|nproc_per_node|\baccelerate\s+launch\b|FORCE_TORCHRUN|"
    r"(?:^|[\s;&|`$(])deepspeed\s+(?:--(?:num_gpus|num_nodes|include|exclude|hostfile|master_port|master_addr|"
    r"launcher|module)\b|(?!--)\S+\.py\b)",
    re.I | re.M,
)
#: How a message names single-process data or model parallelism itself (not DistributedDataParallel).
NAMES_ONE_PROCESS = re.compile(r"(?<![A-Za-z])DataParallel|\bDP\b|device_map|单进程", re.I)
#: A message about a quantized base or the fp32 upcast PEFT's ``prepare_model_for_kbit_training`` does: what a card on
#: that function answers.
NAMES_QUANTIZED_OR_UPCAST = re.compile(
    r"bitsandbytes|(?<![A-Za-z0-9])(?:bnb|int[48]|nf4|[48][- ]?bit|kbit|k-bit|qlora|gptq|awq)(?![A-Za-z0-9])|"
    r"load_in_[48]bit|quantiz|量化|prepare_model_for|upcast|\bfloat32\b|\bfp32\b|\.float\(\)|转\s*fp32",
    re.I,
)


#: What shows that PyTorch does not see or use the GPU: the errors and warnings it, transformers, accelerate and
#: bitsandbytes raise then (the torch-sees-no-gpu card's symptoms), a CPU build, or a user saying training runs on the
#: CPU or the GPU is not detected. The Ampere checks ("doesn't support bf16/gpu", "--tf32 requires Ampere") count too:
#: on an Ampere-or-newer GPU they mean CUDA is not visible (rag.citing.no_gpu_conflict keeps them from counting on an
#: older GPU).
NAMES_NO_GPU = re.compile(
    r"is_available\(\)|not compiled with cuda|can only be used on (?:cuda|mlu)|not supported on cpu|no nvidia driver|"
    r"driver on your system is too old|no cuda gpus? (?:are|is) available|cuda unknown error|compiled without gpu support|"
    r"no gpu found|cuda is required but not available|setting accelerator to cpu|\+cpu\b|cpu[- ]only|"
    r"\b(?:runs?|running|ran|trains?|training|trained) on (?:the )?cpu\b|"
    r"识别不到|检测不到|找不到\s*(?:gpu|显卡|cuda)|(?:跑|运行|训练)在\s*cpu|用的是\s*cpu|cpu\s*版",
    re.I,
)


def own_stacks(text: str) -> frozenset[str]:
    """The training stacks ``text`` names, without those they are built on."""
    return frozenset(name for name, rx in _STACKS.items() if rx.search(text))


def stacks_named(text: str) -> frozenset[str]:
    """The training stacks ``text`` names, with those they are built on."""
    named = set(own_stacks(text))
    for name in list(named):
        named.update(_IMPLIES.get(name, ()))
    return frozenset(named)


class AskedQuestion(BaseModel):
    """What the asking part of a message is about, read once per message."""

    text: str = Field(description="The whole sentences that ask (the title line too), or the prose when none asks.")
    concepts: list[str] = Field(default_factory=list, description="Mechanisms, tools and settings they name.")
    keys: list[str] = Field(default_factory=list, description="Config keys and backticked names they name.")
    prose_concepts: list[str] = Field(default_factory=list, description="Concepts of the whole prose.")
    asks_why: bool = False
    family: str = Field("generic", description="The symptom family the asked clauses name (memory/loss/speed).")
    asks_whether: bool = Field(False, description="A sentence asks whether a claim holds (a yes/no question).")
    reports: bool = Field(False, description="The prose reports something observed (an error, a slowdown).")
    stacks: list[str] = Field(default_factory=list, description="Training stacks the whole message names.")
    sizes: list[str] = Field(default_factory=list, description="Model sizes the whole message states ('7B').")
    message_keys: list[str] = Field(default_factory=list, description="Config keys the whole message names.")
    features: list[str] = Field(
        default_factory=list,
        description="GPU features the whole message names anywhere (bf16, flash_attention, a pre-Ampere GPU).",
    )
    several_gpus: bool = Field(False, description="The whole message names more than one GPU ('两张A40', '8 GPUs').")
    platforms: list[str] = Field(
        default_factory=list, description="Platforms other than NVIDIA on Linux the whole message names (PLATFORMS)."
    )
    message_words: str = Field(
        "", description="The whole message's ASCII words, lower-cased and space-joined (error texts are matched on it)."
    )
    names_adapter: bool = Field(
        False, description="The whole message names an adapter method or a quantized base (NAMES_ADAPTER)."
    )
    names_evaluation: bool = Field(
        False, description="The whole message names the evaluation phase (eval, validation, prediction, 评估, 验证)."
    )
    settings_named: list[str] = Field(
        default_factory=list,
        description="Settings a run never has by default that the whole message names (SETTINGS_NAMED: 'pretraining', "
        "'launch_counts', 'pipeline_parallelism', 'amp_loop').",
    )
    names_speed: bool = Field(
        False, description="The whole message names speed or time (slow, it/s, throughput, 耗时, 速度; NAMES_SPEED)."
    )
    names_saving: bool = Field(
        False, description="The whole message names saving a checkpoint or the model (NAMES_SAVING)."
    )
    model_families: list[str] = Field(
        default_factory=list, description="Model families with a card of their own the message names (MODEL_FAMILIES)."
    )
    names_hang: bool = Field(
        False, description="The whole message names a hang, a timeout or a failed connection or launch (NAMES_HANG)."
    )
    several_nodes: bool = Field(
        False,
        description="The whole message names more than one machine ('两台机器', '2 nodes', NODE_RANK, a hostfile).",
    )
    mixed_gpus: bool = Field(
        False, description="The whole message names GPUs of two or more models or says they differ (names_mixed_gpus)."
    )
    stages: list[str] = Field(
        default_factory=list, description="Training stages after SFT the whole message names anywhere (STAGES)."
    )
    sharding: list[str] = Field(
        default_factory=list, description="Sharding frameworks the whole message names anywhere (SHARDING)."
    )
    one_process_per_gpu: bool = Field(
        False,
        description="The whole message launches one process per GPU (PER_PROCESS_LAUNCH) and never names DataParallel "
        "or device_map (NAMES_ONE_PROCESS).",
    )
    names_quantized_or_upcast: bool = Field(
        False, description="The whole message names a quantized base or an fp32 upcast (NAMES_QUANTIZED_OR_UPCAST)."
    )
    names_no_gpu: bool = Field(False, description="The whole message shows PyTorch not seeing the GPU (NAMES_NO_GPU).")
    names_ampere_check: bool = Field(False, description="The whole message quotes an Ampere check (AMPERE_CHECK).")


def topic_concepts(text: str) -> list[str]:
    """Every glossary concept ``text`` names (symptoms too: they say what a question is about, if not its cause)."""
    return sorted({t.en[0] for t in find_terms(text) if t.en})


def _keys(text: str) -> list[str]:
    # "LoraAlpha", "lora_alpha" and "`lora_alpha`" are one key: compared lower-cased without underscores.
    return sorted({_squash(m.group(1) or m.group(2) or m.group(3)) for m in _KEY.finditer(text)})


def _squash(key: str) -> str:
    return re.sub(r"[_\s]", "", key.lower())


#: An asking sentence that points back at what was reported ("Is this phenomenon normal?", "这正常吗", "why does that
#: happen?") instead of naming it.
_POINTS_BACK = re.compile(r"\b(?:this|that|it)\b|这(?:个|种|样)?|此|该", re.I)


def _asked_family(asked: list[str], title: str, prose: str) -> str:
    """The symptom family the asking sentences name; when they name none but point back at what was reported, or
    when nothing is asked at all (an issue that only reports), the title's (an issue's title says what was
    observed: "dpo training loss stucks at 0.6931" is about a loss curve, not memory)."""
    family = symptom_family("\n".join(asked))
    if family == "generic" and (not asked or all(_POINTS_BACK.search(a) for a in asked)):
        family = symptom_family(title)
    if family == "generic" and HANG.search(prose):
        # a hang the body reports, asked about in words that name no symptom ("跑几个iter就卡住 … 请问是怎么回事",
        # GANet #44; "多卡时 … 总是会卡住 … 是怎么解决的呢", minimind-v #31): the question is about the hang
        family = "speed"
    return family


def read_asked(text: str, parts: list[Part]) -> AskedQuestion:
    """The asking sentences of a message and what they name (see the module docstring)."""
    prose = prose_of(parts)
    asked = asked_sentences(prose)
    sentences = [s.strip() for s in _SENTENCE.split(prose) if s and s.strip()]
    region = [s for s in sentences if any(a in s for a in asked)]
    title = next((ln.strip() for ln in prose.splitlines() if ln.strip()), "")
    if title and title not in region and len(title) <= 200:
        region.insert(0, title)
    region_text = "\n".join(region) if region else prose
    return AskedQuestion(
        text=region_text,
        concepts=topic_concepts(region_text),
        keys=_keys(region_text),
        prose_concepts=topic_concepts(prose),
        asks_why=bool(_WHY.search(region_text)),
        # The asked clause itself ("…训练太慢，如果增大到16，学习率需要调整吗？" asks about the learning rate, not speed),
        # or what it points back to: "The loss has always been 0 … Is this phenomenon normal?" asks about the title's.
        family=_asked_family(asked, title, prose),
        # ("does this refer to the total effective batch size, or does it mean that batch_size_forward itself is set
        # to 128?" (MoGe #144) offers two readings to choose from: no claim to say yes or no to)
        asks_whether=any(_POLAR.search(a) for a in asked) and not any(_ALTERNATIVE.match(a) for a in asked),
        reports=reports_symptom(prose),
        stacks=sorted(stacks_named(text)),
        sizes=sorted(sizes_in(text)),
        message_keys=_keys(text),
        features=sorted(f for f, rx in _FEATURES.items() if rx.search(text)),
        several_gpus=bool(re.search(MULTI_GPU, text, re.I)),
        platforms=sorted(p for p, rx in PLATFORMS.items() if rx.search(text)),
        several_nodes=bool(SEVERAL_NODES.search(text)),
        mixed_gpus=names_mixed_gpus(text),
        stages=sorted(st for st, rx in STAGES.items() if rx.search(text)),
        sharding=sorted(f for f, rx in SHARDING.items() if rx.search(text)),
        names_evaluation=bool(NAMES_EVALUATION.search(text)),
        settings_named=sorted(k for k, rx in SETTINGS_NAMED.items() if rx.search(text)),
        names_speed=bool(NAMES_SPEED.search(text)),
        names_hang=bool(NAMES_HANG.search(text)),
        names_saving=bool(NAMES_SAVING.search(text)),
        model_families=sorted(f for f, (_, named) in MODEL_FAMILIES.items() if named.search(text)),
        names_adapter=bool(NAMES_ADAPTER.search(text)),
        one_process_per_gpu=bool(PER_PROCESS_LAUNCH.search(text)) and not NAMES_ONE_PROCESS.search(text),
        names_quantized_or_upcast=bool(NAMES_QUANTIZED_OR_UPCAST.search(text)),
        names_no_gpu=bool(NAMES_NO_GPU.search(text)),
        names_ampere_check=bool(AMPERE_CHECK.search(text)),
        message_words=" ".join(re.findall(r"[a-z0-9_]+", text.lower())),
    )


def lead_en(card: Card) -> str:
    """A card's English lead (its first paragraph): the sentence an answer would open with; English decides its kind
    and sizes because both languages' leads say the same thing."""
    return card.body_en.strip().split("\n\n", 1)[0].strip().strip("*").strip()


def first_sentence(lead: str) -> str:
    """The lead's first sentence, where a model size or a GPU capacity names the one setup the card is about."""
    return re.split(r"(?<=[.:;])\s", lead, maxsplit=1)[0]


def lead_kind(card: Card, without_preamble: bool = False) -> LeadKind:
    """What the card's lead does: gives a yes/no verdict, explains an observation, or states a fact
    (``without_preamble``: what it does once a bare "This is expected." is dropped)."""
    topic = card_topic(card)
    return cast(LeadKind, topic.lead_kind_bare if without_preamble else topic.lead_kind)


#: How much of a lead's first sentence names its subject ("This is Accelerate by design", "LLaMA-Factory uses …",
#: "In alpaca-lora's finetune.py"); a stack named later is scope ("…, and Windows builds of PyTorch …").
_SUBJECT_CHARS = 60


# A bare verdict on an observation before the fact itself ("This is expected. DoRA splits …", "这是预期行为。DoRA 把…"):
# without it the lead states the fact, which answers a comparison that reports nothing ("DoRA vs LoRA speed?").
_PREAMBLE = re.compile(
    r"^(\**)\s*(?:This is expected|That is expected|This is by design)\.\s+|^(\**)\s*(?:这是预期(?:行为|的)|这是设计如此)。\s*"
)


def strip_preamble(lead: str) -> str:
    """The lead without a bare "This is expected." before its fact (bold marks kept)."""
    return _PREAMBLE.sub(lambda m: m.group(1) or m.group(2) or "", lead, count=1)


def _kind_of(first: str) -> LeadKind:
    if _VERDICT_LEAD.search(first):
        return "verdict"
    if _OBSERVATION_LEAD.search(first):
        return "observation"
    return "statement"


def presupposes_nothing(asked: AskedQuestion, act: Act) -> bool:
    """The question reports no observation and asks no why: a lead's "This is expected." answers nothing asked."""
    return act not in _OBSERVATION_ACTS and not (asked.asks_why or asked.reports)


_QUOTED_TITLE = re.compile(r"'[^']*'|\"[^\"]*\"")
_MYTH = re.compile(r"^\s*Myth:\s*", re.I)
#: A title that opens with the error message it explains: '"FlashAttention only support fp16 and bf16 data type": …'.
_QUOTED_ERROR_TITLE = re.compile(r'^"([^"]{12,200})"')


def title_subject(title: str) -> str:
    """What a title is about: the part before its first colon outside quotes (after "Myth:" for a myth)."""
    title = _MYTH.sub("", title)
    colon = re.search(r":\s", _QUOTED_TITLE.sub(lambda m: "x" * len(m.group(0)), title))
    return title[: colon.start()] if colon else title


#: A title subject that ends with the message it explains in quotes: "Fixing DeepSpeed 'train_batch_size is not equal
#: to …'", "LoRA + fp16 'Attempting to unscale FP16 gradients'" (the subject is that message, not "… on V100/T4").
_QUOTED_SUBJECT_END = re.compile(r"""(?:'([^']{12,200})'|"([^"]{12,200})")\s*$""")
#: ... unless the subject calls it a log line or a warning ("accelerate + DeepSpeed logs '…'", "QLoRA warning '…'"):
#: the run goes on and users describe what followed ("GA got set to 1", "training is slow") more often than they
#: paste the line, while an error stops the run and is pasted.
_LOG_LINE = re.compile(r"\b(?:logs?|warn(?:s|ing)?|prints?)\b", re.I)


def error_grams(title: str) -> frozenset[str]:
    """Every four consecutive words (lower-cased, punctuation aside) of the message a title is about: one the title
    opens with in double quotes, or one its subject (:func:`title_subject`) ends with in quotes; empty when the title
    is about no quoted message."""
    m = _QUOTED_ERROR_TITLE.match(title)
    quoted = m.group(1) if m else None
    if quoted is None:
        subject = title_subject(title)
        end = _QUOTED_SUBJECT_END.search(subject)
        quoted = (end.group(1) or end.group(2)) if end and not _LOG_LINE.search(subject[: end.start()]) else None
    if not quoted:
        return frozenset()
    words = re.findall(r"[a-z0-9_]+", quoted.lower())
    return frozenset(" ".join(words[i : i + 4]) for i in range(max(len(words) - 3, 1)))


class CardTopic(BaseModel):
    """What is read off one card to decide whether it answers a message: computed once per card object
    (:func:`card_topic`), never per message, since a card's text does not change while it is loaded."""

    concepts: frozenset[str] = Field(description="Concepts its titles, questions and symptoms name.")
    text: str = Field(description="All its text, lower-cased without underscores or spaces (where keys are found).")
    stacks: frozenset[str] = Field(description="Training stacks its lead's subject names, with those they build on.")
    lead: str = Field(description="Its English lead (lead_en).")
    lead_first: str = Field(description="The lead's first sentence (first_sentence).")
    lead_kind: str = Field(description="What the lead does (verdict/observation/statement).")
    lead_kind_bare: str = Field(description="What the lead does once a bare 'This is expected.' is dropped.")
    lead_sizes: frozenset[str] = Field(description="Model sizes the lead's first sentence states.")
    lead_own_stacks: frozenset[str] = Field(description="Training stacks the lead's subject names, on their own.")
    lead_keys: frozenset[str] = Field(description="Settings the lead names (_own_keys), shared keys aside.")
    title_subject: str = Field(description="What its English title is about (title_subject).")
    title_stacks: frozenset[str] = Field(description="Training stacks the title's subject names, on their own.")
    error_grams: frozenset[str] = Field(description="4-grams of the error message its title quotes (error_grams).")


#: card_topic's cache: id(card) -> (the card, kept so that its id is not reused, and its topic).
_TOPICS: dict[int, tuple[Card, CardTopic]] = {}
_TOPICS_MAX = 4096


def card_topic(card: Card) -> CardTopic:
    """What a card is about (its titles, questions and symptoms), its lead and its title, read once per card."""
    hit = _TOPICS.get(id(card))
    if hit is not None and hit[0] is card:
        return hit[1]
    about = "\n".join(
        [card.title_en, card.title_zh, *card.questions_en, *card.questions_zh, *card.symptoms_en, *card.symptoms_zh]
    )
    lead = lead_en(card)
    first = first_sentence(lead)
    subject = first[:_SUBJECT_CHARS]
    title = title_subject(card.title_en)
    topic = CardTopic(
        concepts=frozenset(topic_concepts(about)),
        text=_squash(about + "\n" + card.body),
        stacks=stacks_named(subject),
        lead=lead,
        lead_first=first,
        # (a myth card's lead always opens with its verdict on the belief, worded or not as a bare "No":
        # "Memory is not pooled automatically.")
        lead_kind="verdict" if card.is_myth else _kind_of(first),
        lead_kind_bare="verdict" if card.is_myth else _kind_of(first_sentence(strip_preamble(lead))),
        lead_sizes=frozenset(sizes_in(first)),
        lead_own_stacks=own_stacks(subject),
        lead_keys=frozenset(_own_keys(lead)),
        title_subject=title,
        title_stacks=own_stacks(title),
        error_grams=error_grams(card.title_en),
    )
    if len(_TOPICS) >= _TOPICS_MAX:
        _TOPICS.clear()
    _TOPICS[id(card)] = (card, topic)
    return topic


class Gate(BaseModel):
    """Whether a card's lead may open the answer, and why not when it may not (for the bench and the tests)."""

    passes: bool
    why: str = ""


#: Acts whose question a yes/no lead can answer.
_VERDICT_ACTS: frozenset[str] = frozenset({"yes_no", "is_normal", "diagnose"})
#: Acts whose question a lead that explains an observation can answer (and any *why* question).
_OBSERVATION_ACTS: frozenset[str] = frozenset({"yes_no", "is_normal", "diagnose"})


#: Stacks most users run without naming them (a "trainer" question is usually the HF Trainer's): a lead about one of
#: them may open for a message that names no stack. Every other stack is one script family or framework of its own.
_UNNAMED_STACKS = frozenset({"hf-trainer", "accelerate"})
#: Keys every stack has: naming one says nothing about which stack the message is about.
_SHARED_KEYS = frozenset(
    _squash(k)
    for k in (
        "batch_size",
        "train_batch_size",
        "gradient_accumulation_steps",
        "per_device_train_batch_size",
        "lr",
        "world_size",
    )
)
#: A file name is not a setting ("train_multi_gpu.py" names no key of alpaca-lora's "finetune.py").
_FILE = re.compile(r"\.(?:py|sh|json|ya?ml|md|txt|cfg|toml)$")


def stack_conflict(card: Card, asked: AskedQuestion) -> bool:
    """The lead is about a training stack and the message names only other ones."""
    mine = card_topic(card).stacks
    theirs = frozenset(asked.stacks)
    return bool(mine and theirs and not (mine & theirs))


def _own_keys(text: str) -> set[str]:
    """The settings ``text`` names, a dotted path also by its last part (`actor.ppo_mini_batch_size`)."""
    return {k.rsplit(".", 1)[-1] for k in _keys(text) if not _FILE.search(k)} - _SHARED_KEYS


def unnamed_stack(card: Card, asked: AskedQuestion) -> bool:
    """The lead is about one script family or framework of its own, and the message names no stack and none of the
    settings the lead names: "In alpaca-lora's finetune.py `batch_size` is global …" does not open for a paper's
    "batch_size=19200" or a DeepSeek-Coder fit question, while a message with `micro_batch_size` in it is that
    script family's. (Only for the opening; :func:`unnamed_title_stack` decides citing by the title.)"""
    return _narrow_and_unnamed(card_topic(card).lead_own_stacks, card, asked)


def unnamed_title_stack(card: Card, asked: AskedQuestion, title_stacks: frozenset[str]) -> bool:
    """The card's title is about one script family or framework of its own (OpenRLHF's batch flags, verl's batch
    sizes), and the message names no stack and none of the settings the card's lead names: such a card answers its
    own users, not every batch question (it is not cited)."""
    return _narrow_and_unnamed(title_stacks, card, asked)


def _narrow_and_unnamed(named: frozenset[str], card: Card, asked: AskedQuestion) -> bool:
    if asked.stacks or not named or named & _UNNAMED_STACKS:  # "HF Trainer, LLaMA-Factory and Accelerate fix …"
        return False
    return not card_topic(card).lead_keys & {k.rsplit(".", 1)[-1] for k in asked.message_keys if not _FILE.search(k)}


#: A topic is shown by concepts worth this much together: one named by at most a fifth of the cards, or two or more
#: commoner ones ("gradient accumulation" + "learning rate scheduler"). "GPU memory" or "batch size" alone, named by
#: half the cards, shows nothing about which card answers.
_TOPIC_WEIGHT = math.log(5.0)


_WEIGHTS: dict[tuple[str, ...], dict[str, float]] = {}


def _concept_weights(cards: tuple[Card, ...]) -> dict[str, float]:
    """log(cards / cards naming the concept): how much sharing a concept says about a card (inverse document
    frequency over the cards' titles, questions and symptoms); computed once per card set."""
    key = tuple(c.id for c in cards)
    if key not in _WEIGHTS:
        df: Counter[str] = Counter()
        for card in cards:
            df.update(card_topic(card).concepts)
        n = max(len(cards), 1)
        _WEIGHTS[key] = {concept: math.log(n / k) for concept, k in df.items()}
    return _WEIGHTS[key]


def topic_weight(card: Card, concepts: list[str], all_cards: tuple[Card, ...]) -> float:
    """How much the concepts a question names say that ``card`` is about it."""
    weights = _concept_weights(all_cards)
    shared = set(concepts) & card_topic(card).concepts
    return sum(weights.get(c, 0.0) for c in shared)


def _shares(card: Card, concepts: list[str], keys: list[str], all_cards: tuple[Card, ...]) -> bool | None:
    """Whether the card is about what these concepts and keys name; None when they name nothing to compare.

    Concepts the cards tell apart (one named by at most a fifth of them) must be shared to that weight; a question that
    names only common ones ("batch size", "GPU memory") cannot tell cards apart, and one of them shared is enough."""
    topic = card_topic(card)
    if any(k in topic.text for k in keys):
        return True
    if not concepts:
        return False if keys else None
    weights = _concept_weights(all_cards)
    if any(weights.get(c, 0.0) >= _TOPIC_WEIGHT for c in concepts):
        return topic_weight(card, concepts, all_cards) >= _TOPIC_WEIGHT
    return bool(set(concepts) & topic.concepts)


def on_topic(card: Card, asked: AskedQuestion, all_cards: tuple[Card, ...], strict: bool = False) -> bool:
    """The card is about something the asking sentences name. When they name nothing, the whole prose decides
    (``strict``, for a yes/no lead: it does not, and the card fails); when that names nothing either, retrieval's
    ranking stands."""
    asked_shares = _shares(card, asked.concepts, asked.keys, all_cards)
    if asked_shares is not None:
        return asked_shares
    if strict:
        return False
    prose_shares = _shares(card, asked.prose_concepts, [], all_cards)
    return True if prose_shares is None else prose_shares


#: Symptom families that tell cards apart. Nearly every message in this domain speaks of memory ("显存"), so a
#: memory question says little about which card answers it; a slowdown or a loss curve does.
_TELLING_FAMILIES = frozenset({"speed", "loss"})


def symptom_fits(card: Card, asked: AskedQuestion) -> bool:
    """The asking sentences speak of a slowdown or a loss curve and the card does too (or they speak of neither)."""
    return asked.family not in _TELLING_FAMILIES or card_in_family(card, asked.family)


def sizes_in(text: str) -> set[str]:
    """Model sizes written in ``text``, normalised ("7 b" and "7B" are one size), to compare a card with a message."""
    return {re.sub(r"\s", "", m.group(0)).upper() for m in _SIZE.finditer(text)}


def size_fits(card: Card, asked: AskedQuestion) -> bool:
    """A card whose lead opens with one model size's numbers ("A single 24 GB card cannot fully fine-tune a 7B
    model") answers only a message that states that size: for another model they are a number for a setup the user
    did not state. Sizes a title gives as examples (MoE totals, the Ascend 910B chip) do not count."""
    sizes = card_topic(card).lead_sizes
    return not sizes or bool(sizes & set(asked.sizes))


def lead_answers(card: Card, asked: AskedQuestion, act: Act, all_cards: tuple[Card, ...]) -> Gate:
    """Whether ``card``'s lead answers this question (see the module docstring)."""
    kind = lead_kind(card)
    # An explanation asked as "…越大越好吗？" is also a yes/no question (the act model tells the two apart least well).
    if kind == "verdict" and act not in _VERDICT_ACTS and not (act == "explain" and asked.asks_whether):
        return Gate(passes=False, why=f"a yes/no lead for a {act} question")
    if kind == "observation" and presupposes_nothing(asked, act):
        if lead_kind(card, without_preamble=True) == "observation":
            return Gate(passes=False, why=f"a lead about an observation for a {act} question")
        kind = "statement"  # it opens without its "This is expected." (rag.compose strips it)
    if stack_conflict(card, asked):
        return Gate(passes=False, why="the lead is about another training stack")
    if unnamed_stack(card, asked):
        return Gate(passes=False, why="the lead is about a training stack the message does not name")
    if act == "fit" and not card_in_family(card, "memory"):
        # "Does it fit / how much memory?" is answered by a card about memory (not "NCCL supports Linux only").
        return Gate(passes=False, why="a fit question and a card that does not speak of memory")
    if not symptom_fits(card, asked):
        return Gate(passes=False, why=f"the question asks about {asked.family}, the card does not")
    if not size_fits(card, asked):
        return Gate(passes=False, why="the card's lead is about a model size the message does not state")
    if not on_topic(card, asked, all_cards, strict=kind == "verdict"):
        return Gate(passes=False, why="the card names nothing the question asks about")
    return Gate(passes=True)


def opening_card(cards: list[Card], asked: AskedQuestion, act: Act, all_cards: tuple[Card, ...]) -> Card | None:
    """The first retrieved card whose lead answers this question, or None."""
    return next((c for c in cards if lead_answers(c, asked, act, all_cards).passes), None)
