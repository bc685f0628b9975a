"""Fast tests of the user's own setup (issue #10, engine-fid2): every stated value read, none invented.

Each case is a fragment of a real message from a public thread (URL in the comment above it).
No embedding model: the readers (rag.parts, rag.setup, rag.slots, calculators.diagnose) are pure text.
"""

from __future__ import annotations

import pytest

from calculators.diagnose import diagnose
from calculators.diagnose.launch import causes, read
from rag.parts import split_message
from rag.setup import enough_for_memory, missing_for_memory, unsupported_method
from rag.slots import extract_slots
from tests.message_reading import setup_of

# ---- launch commands: a missing CUDA_VISIBLE_DEVICES is "all GPUs visible", never 0 -------------------
# https://github.com/om-ai-lab/VLM-R1/issues/197
VLM_R1 = (
    'torchrun --nproc_per_node="8" \\\n    --num_generations 8 \\\n    --per_device_train_batch_size 8 \\\n'
    "    --gradient_accumulation_steps 2 \\\n"
)


def test_torchrun_without_cuda_visible_devices_has_no_visible_count():
    [art] = read(VLM_R1)
    assert art.fields["world_size"] == 8
    assert "visible_devices" not in art.fields
    assert causes(art) == []  # not "8 processes but CUDA_VISIBLE_DEVICES lists 0 GPU(s)"
    assert not any("0 GPU" in c.because_en for c in diagnose(VLM_R1).causes)


def test_torchrun_with_fewer_visible_devices_than_processes_still_flagged():
    # the counter-case: a CUDA_VISIBLE_DEVICES that is written and lists fewer GPUs than processes
    [art] = read("CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 4 train.py --per_device_train_batch_size 2")
    assert art.fields["visible_devices"] == ["0", "1"]
    assert [c.id for c in causes(art)] == ["launch.more_processes_than_gpus"]


def test_deepspeed_num_gpus_without_visible_devices_is_not_an_ignored_visible_list():
    # deepspeed with --num_gpus and no CUDA_VISIBLE_DEVICES on the line
    [art] = read("deepspeed --num_gpus 4 src/train_bash.py --deepspeed ds_config.json --stage sft")
    assert art.fields["world_size"] == 4
    assert not any(c.id == "launch.ds_ignores_cuda_visible_devices" for c in causes(art))


def test_vlm_r1_setup_uses_eight_processes():
    s = setup_of("I'm unsure whether it refers to the global batch size.\n" + VLM_R1)
    assert (s.get("world_size"), s.get("train_micro_batch_size_per_gpu"), s.get("gradient_accumulation_steps")) == (
        8,
        8,
        2,
    )


# ---- P-Tuning and 8-/4-bit base weights: read, shown, never estimated as something else ----------------
# https://github.com/zai-org/ChatGLM-6B/issues/1289
CHATGLM_PTUNING = """[BUG/Help] 单机多卡训练（4张v100），学习率下降得很快

LR=3e-2
PRE_SEQ_LEN=128

deepspeed --master_port $MASTER_PORT main.py \\
    --deepspeed deepspeed.json \\
    --do_train \\
    --model_name_or_path /share/llm_models/glm/chatglm-6b \\
    --per_device_train_batch_size 4 \\
    --gradient_accumulation_steps 8 \\
    --learning_rate $LR \\
    --pre_seq_len $PRE_SEQ_LEN \\
    --quantization_bit 4 >> log/wf_train_0625.log 2>&1 &
"""


def test_chatglm_ptuning_script_is_ptuning_on_int4_not_qlora():
    s = setup_of(CHATGLM_PTUNING)
    assert s.get("finetune") == "ptuning"
    assert s.get("quantization") == "int4"
    assert s.get("seq_len") != 128  # PRE_SEQ_LEN is the prefix length, not the sequence length
    assert unsupported_method(s) == "ptuning"
    assert not enough_for_memory(s)
    assert missing_for_memory(s) == ["unsupported"]


@pytest.mark.parametrize(
    "text",
    [
        "[BUG] <ptuing log信息里的epoch应该不太对>",  # https://github.com/zai-org/ChatGLM2-6B/issues/219
        "[Help] 请问，ptuning时，pre_seq_len参数是用来做什么的？",  # https://github.com/zai-org/ChatGLM2-6B/issues/439
        "请问p-tuning 和 p-tuning V2 仅仅只修改prefix_projection 参数吗",  # https://github.com/zai-org/ChatGLM-6B/issues/1060
    ],
)
def test_ptuning_as_people_write_it(text):
    assert extract_slots(text).finetune == "ptuning"


@pytest.mark.parametrize(
    "text, bits",
    [
        # https://github.com/huggingface/peft/issues/282
        (
            "model = LlamaForCausalLM.from_pretrained('decapoda-research/llama-7b-hf', load_in_8bit=True, "
            "torch_dtype=torch.float16, device_map='auto')",
            "int8",
        ),
        # https://github.com/meta-llama/llama-cookbook/issues/792
        (
            "--gradient_accumulation_steps 4 --use_fast_kernels --quantization 8bit --use_peft --peft_method lora",
            "int8",
        ),
        # https://github.com/tloen/alpaca-lora/issues/221
        ("Can I train the lora in 8bit so that my 3090 can train a lora for 13B?", "int8"),
        # https://github.com/hiyouga/ChatGLM-Efficient-Tuning/issues/394
        ("请问下在4-bit量化模式Lora微调最小的显存要求", "int4"),
    ],
)
def test_quantized_base_weights(text, bits):
    assert extract_slots(text).quantization == bits


@pytest.mark.parametrize(
    "text",
    [
        'optim="paged_adamw_8bit", fp16=True',  # https://github.com/huggingface/trl/issues/1111 (an 8-bit optimizer)
        "Trying to understand how to use 8 Bit Adam from `bitsandbytes`",  # https://github.com/tloen/alpaca-lora/issues/97
        "from peft import prepare_model_for_int8_training, LoraConfig",  # https://github.com/huggingface/transformers/issues/23165
        # https://github.com/ssbuild/chatglm_finetuning/issues/253: switched off, and options named in comments
        "enable_lora = True\nenable_int8 = False # qlora int8\nenable_int4 = False # qlora int4",
        # https://github.com/InternLM/xtuner/issues/143: what the examples use, not the user's run
        "大部分的示例和config都是使用int8/int4进行lora训练；这边测试使用fp16进行lora训练",
    ],
)
def test_not_quantized_weights(text):
    assert extract_slots(text).quantization is None


def test_lora_on_int8_is_estimated_and_a_full_fine_tune_of_int8_weights_is_not():
    # (before stop 50 the calculator had no 8-bit base: "lora + int8" was refused; tests/test_lora_int8_units.py)
    s = setup_of("I load llama 7b with load_in_8bit=True and train LoRA with fp16 on one 3090")
    assert s.get("finetune") == "lora" and s.get("quantization") == "int8"
    assert unsupported_method(s) is None and enough_for_memory(s)
    full = setup_of("I load llama 7b with load_in_8bit=True and run a full fine-tune with fp16 on one 3090")
    assert full.get("quantization") == "int8" and unsupported_method(full) == "full + int8"
    assert not enough_for_memory(full)


def test_qlora_stays_estimable():
    s = setup_of("QLoRA on llama 7b, load_in_4bit=True, bf16, one 4090")
    assert s.get("finetune") == "qlora" and s.get("quantization") == "int4"
    assert unsupported_method(s) is None and enough_for_memory(s)


# ---- values about an earlier run or from hearsay are not the current setup ----------------------------
# https://github.com/zai-org/VisualGLM-6B/issues/80
VISUALGLM = (
    "运行微调文件，bash finetune/finetune_visualglm.sh，总是报错CUDA out of memory. 。总共4张卡，单卡11G的显存。"
    "另外采用lora方式按理说对显卡内存要求不高啊。之前int4单卡训练chatglm，单卡10G以内足够了.这个visul glm采用lora"
    "听别人讲需要30G以上，为啥要求这么高？是因为没有采用int吗？那该怎么调整？"
)


def test_earlier_run_and_hearsay_values_are_not_read():
    s = setup_of(VISUALGLM)
    assert (s.get("world_size"), s.get("gpu_memory_gb"), s.get("finetune")) == (4, 11.0, "lora")
    assert not s.has("model") and not s.has("model_text")  # chatglm was the earlier run
    assert not s.has("quantization")  # so was int4
    assert not enough_for_memory(s)  # so no memory headline for a model the user is not training


def test_own_prose_keeps_the_text_it_keeps():
    from rag.setup import own_prose

    assert (
        own_prose("I use llama.cpp and torch.float16. Previously, I trained on 2 GPUs. Now 4 GPUs.")
        == "I use llama.cpp and torch.float16.  Now 4 GPUs."
    )


# ---- one setting, several values in the prose: the run the question is about ---------------------------
@pytest.mark.parametrize(
    "text, micro, ga, ga_from",
    [
        # https://github.com/GWxuan/TSP3D/issues/10: the failing try, then the one that runs
        (
            "我的设备是24G的3090，当我运行batch_size==7时，显存爆炸，我只有设置batch_size==4才能正常运行（此时显存使用20G）",
            4,
            None,
            None,
        ),
        # https://github.com/hiyouga/LlamaFactory/issues/10175: SFT 4, DPO 2 OOMs, then 1
        (
            "SFT的时候batch size可以设置为4\n换成dpo训练，即使batch size设为2也会OOM。batch size设为1的时候，只有gradient "
            "accumulation step小于64才不会OOM",
            1,
            None,
            None,
        ),
        # https://github.com/young-geng/EasyLM/issues/36: GA 1 works, GA 2 OOMs
        (
            "for llama 7b on tpu v3-8,\nwhen --optimizer.accumulate_gradient_steps=1, it is normal,\n"
            "but --optimizer.accumulate_gradient_steps=2, it occurs oom",
            None,
            2,
            1,
        ),
    ],
)
def test_the_last_tried_value_is_the_run(text, micro, ga, ga_from):
    s = extract_slots(text, prose=True)
    assert (s.train_micro_batch_size_per_gpu, s.gradient_accumulation_steps, s.ga_from) == (micro, ga, ga_from)


@pytest.mark.parametrize(
    "text, micro",
    [
        # https://github.com/NVIDIA-NeMo/Speech/issues/11939: a side-by-side comparison keeps the first
        ("The only difference is we use `micro_batch_size=8` vs `micro_batch_size=4`. There is no other difference", 8),
        # https://github.com/ZhuiyiTechnology/t5-pegasus/issues/8: the value inside someone else's quoted words
        (
            "finetune参数：batch_size = 2  总是报OOM异常\n“开源的T5 PEGASUS是base版，训练时最大长度为512，batch_size为96”",
            2,
        ),
        # https://github.com/lxztju/pytorch_classification/issues/43: "用单卡来跑的话" is the other setup
        ("我用3个12G的卡训练，只有设置batchsize为1才不会报错，但是用单卡来跑的话batchsize可以设置为6", 1),
    ],
)
def test_compared_or_quoted_values_do_not_replace(text, micro):
    assert extract_slots(text, prose=True).train_micro_batch_size_per_gpu == micro


def test_batch_change_with_total_is_the_per_gpu_batch():
    # https://github.com/bigcode-project/starcoder/issues/47
    s = extract_slots(
        "I get some impression that it becomes slow if I increase batch size from 1 to 32 with total 256.", prose=True
    )
    assert (s.train_micro_batch_size_per_gpu, s.train_batch_size, s.base_batch_size) == (32, 256, None)


# ---- precision: the one the user trains in, not a cast target or a default they changed -------------------
@pytest.mark.parametrize(
    "text, precision",
    [
        # https://github.com/huggingface/peft/issues/1149
        (
            "out of memory because peft casts data from 16 to 32 bits\nI'm trying to finetune an LLM in 16 bit. It should fit "
            "in GPU memory\n>     param.data = param.data.to(torch.float32)",
            "amp-fp16",
        ),
        # https://github.com/lllyasviel/ControlNet/issues/456
        (
            'will be "trainer = pl. Trainer (gpus = 1, precision = 32, callbacks = [logger])" in the precision is set to 16, '
            "for mixing precision training",
            "amp-fp16",
        ),
        # https://github.com/bigcode-project/bigcode-evaluation-harness/issues/192
        (
            "UserWarning: Input type into Linear4bit is torch.float16, but bnb_4bit_compute_dtype=torch.float32 (default).\n"
            "accelerate launch main.py --load_in_4bit --precision bf16 --batch_size 32",
            "amp-bf16",
        ),
        # https://github.com/huggingface/peft/issues/282: the dtype the model is loaded in stays the precision
        (
            "model = LlamaForCausalLM.from_pretrained('decapoda-research/llama-7b-hf', load_in_8bit=True, "
            "torch_dtype=torch.float16, device_map='auto')",
            "amp-fp16",
        ),
    ],
)
def test_precision_as_trained(text, precision):
    assert extract_slots(text).precision == precision


# ---- GPU counts: the user's own, not one they ask about or contrast with -------------------------------
def test_count_asked_about_is_not_the_users():
    # https://github.com/hiyouga/LlamaFactory/issues/260
    text = (
        "2. Can i use 3 gpu card to train one sequence, instead of train one sequence on each gpu?\n"
        "This is interesting because I use 8 V100 32G, which is also 240G, but encounter `CUDA out of memory` Error."
    )
    assert extract_slots(text).world_size == 8


def test_count_after_a_colon_with_a_classifier():
    # https://github.com/OpenMOSS/MOSS/issues/272
    from rag.history import clean_text

    text = "显卡配置：2张 V100 32G （共四张，有两张别人占用中，用完后可实现利用4卡V100）"
    assert extract_slots(text).world_size == 2
    assert extract_slots(clean_text(text)).world_size == 2  # as the assistant reads it (NFKC: "：" → ":")


def test_single_gpu_contrasted_with_a_multi_gpu_run_is_not_the_count():
    # https://github.com/hiyouga/LlamaFactory/issues/2530: the launch command (--include localhost:5,6,7) gives 3
    text = (
        "单机多卡执行SFT，训练多个数据集，经过测试发现效果很差，然而用单卡跑多个数据集效果就很好\n\n"
        "deepspeed  --include=localhost:5,6,7 --master_port=9901 src/train_bash.py \\\n"
        "    --deepspeed ds_config.json \\\n    --per_device_train_batch_size 2 \\\n    --fp16\n"
    )
    assert extract_slots(text.split("\n")[0]).world_size is None
    assert setup_of(text).get("world_size") == 3


def test_own_single_gpu_still_read():
    # https://github.com/liyih/CSCL/issues/4
    assert (
        extract_slots(
            "请问单卡训练与多卡训练的差距会很大吗\n\n非常感谢作者团队做出的贡献，我才有单卡5090训练模型"
            "其余实验条件与你的论文条件保持一致"
        ).world_size
        == 1
    )


# ---- values written as people write them -----------------------------------------------------------
def test_effective_batch_is_the_product():
    # https://github.com/PiotrNawrot/nanoT5/issues/34
    s = extract_slots(
        "Hi, if you keep the batch_size = 128 and try to train with multiple GPUs, e.g. 8 GPUs, the effective "
        "batch_size is 128*8 = 1024, do you have any idea how to set the learning rate in that case?"
    )
    assert (s.train_micro_batch_size_per_gpu, s.world_size, s.train_batch_size) == (128, 8, 1024)


def test_context_after_the_model_size():
    # https://github.com/hiyouga/LlamaFactory/issues/3993
    assert extract_slots("求教：Llama3-70B 8K全参数微调至少需要多少张A100 80G的卡？").seq_len == 8192


def test_checkpointing_field_default_false_is_off():
    # https://github.com/mst272/LLM-Dojo/issues/15
    text = 'gradient_checkpointing: bool = field(default=False, metadata={"help": "是否使用梯度累计"})'
    assert extract_slots(text).gradient_checkpointing == "none"


@pytest.mark.parametrize(
    "text, stage",
    [
        # https://github.com/hiyouga/LlamaFactory/issues/1250: switched to ZeRO2 and that run OOMs
        ("使用Deepspeed ZeRO3配置会出现weight-2D xxxxx 报错\n后面改用Deepspeed ZeRO2 8卡会出现显存OOM", 2),
        # https://github.com/hiyouga/LlamaFactory/issues/3499: ZeRO2 is the fast comparison, the question is about stage 3
        (
            "deepspeed使用zero stage3，训练20个steps需要20分钟\ndeepspeed改成zero stage2，训练20个steps只要17秒\n"
            "为啥zero stage3 比 zero stage2慢这么多",
            3,
        ),
    ],
)
def test_zero_stage_switched_to(text, stage):
    assert extract_slots(text).zero_stage == stage


@pytest.mark.parametrize(
    "text, ga, ga_from",
    [
        # https://github.com/meta-pytorch/torchtune/issues/2134
        (
            "I am confused about the gradient accumulation parameter. When I increase the parameter from 4 to 8, I am getting "
            "OOM error which doesn't make much sense",
            8,
            4,
        ),
        # https://github.com/Lightning-AI/pytorch-lightning/issues/5636
        (
            "I only use a single GPU. So in this case, if I use the value 2 for the **accumulate_grad_batches**, the number of "
            "steps",
            2,
            None,
        ),
        # far from the key, a change of GPU count is not a change of GA
        ("I use gradient accumulation and moved the job from 2 to 8 GPUs", None, None),
    ],
)
def test_ga_written_around_the_key(text, ga, ga_from):
    s = extract_slots(text)
    assert (s.gradient_accumulation_steps, s.ga_from) == (ga, ga_from)


def test_printed_lines_that_fix_the_precision():
    from rag.slots import extract_printed

    # https://github.com/deepspeedai/DeepSpeed/issues/931
    log = (
        "[2023-04-28 06:51:29,903] [INFO] [loss_scaler.py:188:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
        "Attempted loss scale: 65536, but hysteresis is 2. Reducing hysteresis to 1"
    )
    assert extract_printed(log).precision == "fp16-mixed"
    # https://github.com/OptimalScale/LMFlow/issues/88
    err = "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0"
    assert extract_printed(err).precision == "amp-bf16"


def test_trl_global_batch_quoted_inline():
    # https://github.com/huggingface/trl/issues/2858
    text = (
        "my settings: `generation_num=8`, `per_device_train_batch_size=1`, `gradient_accumulation_steps=8` `ValueError: "
        "The global train batch size (1 x 1) must be evenly divisible by the number of generations per prompt (8)`"
    )
    assert extract_slots(text).world_size == 1


def test_llamafactory_z3_offload_config_offloads_parameters():
    # https://github.com/hiyouga/LlamaFactory/issues/6942
    s = extract_slots(
        "finetuning_type: full\ndeepspeed: config/deepspeed/ds_z3_offload.json # copied from llama-factory repo"
    )
    assert (s.offload_optimizer, s.offload_param) == (True, True)


def test_fully_finetuning_typo():
    # https://github.com/hiyouga/LlamaFactory/issues/260
    assert (
        extract_slots("When I use fully funetuning on BaiChuan-7B/13B, I encounter `CUDA out of memory`").finetune
        == "full"
    )


# ---- models: named by the run, not by a file name or a size the user only hopes for ----------------------
LLAMAFACTORY_7022 = """为什么我微调的时候，显存使用情况与官网提供的列表完全不同？

我的是Ubuntu 20.04.6 LTS 8张Tesla P4(8G)显卡，按照，官网上的表:
按照4bit微调，我至少能微调70B的模型，可是我实际中微调7b的模型，显卡占用率就满了

我用的配置文件是:examples/train_qlora/llama3_lora_sft_otfq.yaml
model_name_or_path: /home/hxgk/PyPro/LLaMA-Factory-main/models/deepseek-llm-7b-base/
quantization_bit: 4
quantization_method: bitsandbytes  # choices: [bitsandbytes (4/8), hqq (2/3/4/5/6/8), eetq (8)]

### method
stage: sft
finetuning_type: lora
lora_rank: 8
cutoff_len: 2048
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
bf16: true
"""


def test_config_model_over_a_bare_size_and_a_file_name():
    # https://github.com/hiyouga/LlamaFactory/issues/7022
    s = setup_of(LLAMAFACTORY_7022)
    assert s.get("model_text") == "deepseek-llm-7b-base"
    assert s.get("num_params") in (None, 7e9) and s.get("model") != "llama-2-70b"
    assert [v.value for v in s.conflicts.get("num_params", [])][:1] == [70e9]  # shown as the other size


def test_file_name_is_not_a_model_unless_nothing_else_names_one():
    assert (
        extract_slots("I fine-tune Qwen-14B with examples/train_qlora/llama3_lora_sft_otfq.yaml").model_text
        == "Qwen-14B"
    )
    # https://github.com/EleutherAI/gpt-neox/issues/892: the size only in the linked config's name
    s = extract_slots(
        "Fine-tuning gpt-neox on 8 A100s\nyour config [here](https://github.com/EleutherAI/gpt-neox/blob/main/"
        "configs/20B.yml) mentions 96 A100 machines"
    )
    assert (s.model_text, s.num_params) == ("gpt-neox", 20e9)


def test_size_after_a_change():
    # https://github.com/zyushun/Adam-mini/issues/13
    assert extract_slots("我尝试将7B的模型压缩到5.7B，在尝试24G现存的单卡上进行微调还是会OOM").num_params == 5.7e9


def test_nodes_the_user_marks_as_theirs():
    # https://github.com/PaddlePaddle/PaddleDetection/issues/2183
    s = extract_slots("（截图：单机8卡配置）\n上述图片给出的是单机8卡的，如果我现在2机8卡应该如何设置学习率")
    assert (s.num_nodes, s.world_size) == (2, 16)


@pytest.mark.parametrize(
    "text, key, value",
    [
        # https://github.com/huanghoujing/person-reid-triplet-loss-baseline/issues/28
        (
            "假如--ids_per_batch=32，--ims_per_id=4，那么就意味着一个batch的大小是128",
            "train_micro_batch_size_per_gpu",
            128,
        ),
        # https://github.com/JIA-Lab-research/MGM/issues/111: "totol" as written
        (
            "per_device_train_batch_size=16，gradient_accumulation_steps=2，totol_batch_size = 128",
            "train_batch_size",
            128,
        ),
    ],
)
def test_values_as_written(text, key, value):
    assert getattr(extract_slots(text), key) == value


def test_gradient_checkpointing_warning_means_it_is_on():
    from rag.slots import extract_printed

    # https://github.com/LlamaChinese/Llama-Chinese/issues/242 (transformers prints it when GC is on)
    log = "`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`..."
    assert extract_printed(log).gradient_checkpointing == "full"


def test_config_length_and_method_over_a_sentence_about_the_data_or_the_base_model():
    # https://github.com/hiyouga/LlamaFactory/issues/5626
    text = (
        "PPO训练速度很慢，数据集只有1100个，每个长度在3000tokens左右，预估1个epoch要7小时\nppo脚本如下，其中sft model是full parameter\n"
        "```\n### method\nstage: ppo\ndo_train: true\nfinetuning_type: lora\nlora_target: all\n### dataset\ncutoff_len: 4096\n"
        "### train\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 8\nbf16: true\n```\n双卡运行\n"
    )
    s = setup_of(text)
    assert (s.get("seq_len"), s.get("finetune"), s.get("world_size")) == (4096, "lora", 2)
    assert [v.value for v in s.conflicts["seq_len"]][:1] == [3000]  # still shown


def test_qlora_in_prose_stays_over_config_lora():
    # https://github.com/hiyouga/ChatGLM-Efficient-Tuning/issues/394 pattern: QLoRA is LoRA on 4-bit weights
    s = setup_of("请问下在4-bit量化模式Lora微调最小的显存要求\n```\nfinetuning_type: lora\nquantization_bit: 4\n```")
    assert s.get("finetune") == "qlora"


def test_darknet_batch_and_subdivisions_in_a_users_sentence():
    # https://github.com/AlexeyAB/darknet/issues/5474
    text = (
        "I already set `loss_scale=128`, but still can't save GPU memory.\n"
        "It can train `batch=64 subdivisions=16` on GTX1080ti, but out of memory on RTX2080ti."
    )
    assert [p.kind for p in split_message(text)] == ["prose"]
    s = setup_of(text)
    assert (
        s.get("train_batch_size"),
        s.get("train_micro_batch_size_per_gpu"),
        s.get("gradient_accumulation_steps"),
    ) == (64, 4, 16)


def test_an_error_line_stays_an_error():
    parts = split_message(
        "My run fails:\nRuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB, but only 2 MiB free."
    )
    assert [p.kind for p in parts] == ["prose", "error"]


@pytest.mark.parametrize(
    "text, key, value",
    [
        # https://github.com/HLTCHKUST/VG-GPLMs/issues/1: "120 batch size with 4 GPUs" is the batch over all GPUs
        (
            "In the paper, it says, 120 batch size with 4 GPUs.  So can each GPU load up to 30 examples",
            "train_batch_size",
            120,
        ),
        # https://github.com/huggingface/transformers/issues/35838
        ("I'm having the same issue trying to finetune a MarianMT model:", "model_text", "MarianMT"),
        # https://github.com/deepspeedai/DeepSpeed/issues/4892
        ("Train model with NPU\nHi, how can I train my model on Ascend NPU?", "gpu_text", "Ascend NPU"),
    ],
)
def test_more_names_and_batches(text, key, value):
    assert getattr(extract_slots(text), key) == value


def test_accumulation_written_as_what_it_does():
    # https://discuss.pytorch.org/t/how-to-increase-the-batch-size-but-keep-the-gpu-memory/26275
    text = "since the .backward will accumulate the gradient ,can I use loss.backward twice then optim.step?"
    assert extract_slots(text).gradient_accumulation_steps == 2


def test_trainable_parameter_count_of_a_whole_model_is_its_size():
    from rag.slots import extract_printed

    # https://github.com/huggingface/open-r1/issues/483
    banner = "[INFO|trainer.py:2414] 2025-03-06 12:04:09,915 >>   Number of trainable parameters = 7,615,616,512"
    assert extract_printed(banner).num_params == 7615616512
    # a LoRA run prints its adapters' count: not the model's size
    assert extract_printed("  Number of trainable parameters = 4,194,304").num_params is None


def test_a_worked_out_value_asked_about_is_not_the_setting():
    # https://github.com/zdou0830/METER/issues/18
    text = (
        "total batchsize is 4096, GPU num is 8, so per gpu batch size is 512?\n"
        "But I use A100 GPU, the batch size only can be set 16?"
    )
    s = extract_slots(text, prose=True)
    assert (s.train_batch_size, s.world_size, s.train_micro_batch_size_per_gpu) == (4096, 8, 16)


def test_one_cards_size_is_not_a_count():
    # https://github.com/ghosthamlet/gpt2-ml-torch/issues/11
    text = "我的一张显卡大小是8g，如果把单卡1个batch需要的显存大小11g分到两个显卡上，相当于16g显卡，这是否可行？"
    assert extract_slots(text).world_size == 2


def test_peak_of_one_memory_report():
    # https://github.com/hiyouga/LlamaFactory/issues/1250
    assert extract_slots("监控显卡平均显存占用在60G左右，部分单卡到75G左右").observed_memory_gb == 75.0


def test_a_quoted_code_comment_is_not_the_users_setting():
    # https://github.com/TMElyralab/MuseV/issues/107
    text = (
        "我看注释中有这么一句\n`gradient_accumulation_steps 按8卡估计,实际使用了16卡*2accumulation*7单卡batch_size = 224 batch_size`,\n"
        "是经过实验证明2accumulation,和7单卡batch_size效果不好吗?"
    )
    assert extract_slots(text, prose=True).train_micro_batch_size_per_gpu is None


def test_a_markdown_quote_list_of_own_settings_is_still_read():
    # https://github.com/deepspeedai/DeepSpeed/issues/7298
    text = "> 2x 8-GPU nodes\n> zero stage 2\n> autotp_size = 2\n> per_device_train_batch_size = 4\n"
    s = extract_slots(text)
    assert (s.tensor_parallel_size, s.train_micro_batch_size_per_gpu) == (2, 4)
