"""Readers changed in stop 43, each from a blind18 question of its class (now dev; fast unit tier)."""

from __future__ import annotations

from calculators.diagnose.launch import read as read_launch
from rag.evidence import symptom_family
from rag.slots import classify_key, extract_slots
from tests.message_reading import setup_values


# ---- GPU counts ------------------------------------------------------------------------------------------------
def test_a_scripts_own_device_list_is_its_gpu_count():
    # Lightning's `--gpus 0,1,2,3` / `--devices 2`: the GPUs the user gives the script
    assert setup_values("python train.py --gpus 0,1,2,3")["world_size"] == 4
    assert setup_values("python main.py --devices 2")["world_size"] == 2
    # Caffe #4465, a command in prose: "invoke caffe with the `--gpu=0,1,2,3` option"
    assert (
        setup_values("If you then invoke caffe with the `--gpu=0,1,2,3` option, it takes 25 iterations")["world_size"]
        == 4
    )
    # one device's id is one GPU; the command itself stays one python process (MatchSum #11 drives its
    # `--gpus=0,1,3` with DataParallel), with the "one process" diagnosis where the GPUs are only made visible
    assert setup_values("python train.py --gpu 1")["world_size"] == 1
    (launch,) = read_launch("python train_matching.py --mode=train --gpus=0,1,3")
    assert launch.fields["world_size"] == 1 and launch.fields["script_devices"] == 3
    (launch,) = read_launch("CUDA_VISIBLE_DEVICES=0,1 python train.py")
    assert launch.fields.get("python_visible_unused") == 2 and "script_devices" not in launch.fields


def test_an_ascend_card_name_is_no_count_and_no_model_size():
    # LLaMA-Factory #4758 ("16卡910-64G"), written the other way round: the 910 is the card's name
    s = setup_values("昇腾910-64G 16卡")
    assert s["world_size"] == 16 and s["gpu_memory_gb"] == 64
    s = setup_values("16卡910B训练qwen 7b")
    assert s["gpu"] == "ascend-910b" and s["world_size"] == 16 and "num_params" not in s


def test_the_users_own_count_wins_over_a_papers():
    # fairseq #2033: "trained with 8 GPUs … If I only have 2 GPU, … set the update frequency to 4?"
    s = setup_values(
        "if a paper says the training is done with max-token 4000, trained with 8 GPUs, then the effective batch "
        "size is 4000x8 =32000. If I only have 2 GPU, then should I set the update frequency to 4?"
    )
    assert s["world_size"] == 2 and s["gradient_accumulation_steps"] == 4


# ---- accumulation by other names ---------------------------------------------------------------------------------
def test_update_freq_and_num_microbatches_are_accumulation():
    assert extract_slots("fairseq-train data-bin --update-freq 4 --max-tokens 4000").gradient_accumulation_steps == 4
    assert extract_slots("2. Specify trainer.num_microbatches = 16").gradient_accumulation_steps == 16
    assert classify_key("update_freq") == classify_key("num_microbatches") == "gradient_accumulation_steps"


# ---- what a question asks about ----------------------------------------------------------------------------------
def test_faster_names_speed():
    # Lightning #11933: "bfloat16 running 4x slower than fp32 … shouldn't it work faster than fp32 on A100 GPUs?"
    assert symptom_family("But shouldn't it work faster than fp32 on A100 GPUs?") == "speed"
    assert symptom_family("开了 bf16 为什么没有变快？") == "speed"
    assert symptom_family("accelerate加速，微调bce模型报错") == "generic"  # the library, not a speed
    assert symptom_family("Does bf16 use less memory?") == "memory"


def test_a_length_before_its_name_and_full_written_apart():
    # InternVL #214: "full- parameters fine tune 1-5用4096的max_length显存大概要多少？"
    s = setup_values("full- parameters fine tune 1-5用4096的max_length显存大概要多少？")
    assert s["seq_len"] == 4096 and s["finetune"] == "full"
    assert setup_values("full parameter fine-tuning with 4096 max length")["seq_len"] == 4096


def test_full_and_lora_offered_as_options_is_no_method():
    # OpenRLHF #254: "Is it possible to run train_ppo_llama.sh … with 4 40G A100 (full fine-tuning/LoRA)?"
    assert extract_slots("with 4 40G A100 (full fine-tuning/LoRA)?", prose=True).finetune is None
    assert extract_slots("全参还是lora微调比较好？", prose=True).finetune is None
    # the user's own method still wins, and a full fine-tune beside LoRA as the alternative asked about stays full
    assert extract_slots("I use LoRA. Should I switch to full fine-tuning or LoRA?", prose=True).finetune == "lora"
    assert extract_slots("全量微调72B遇到OOM，还是说72B只能lora方式微调？", prose=True).finetune == "full"


def test_a_train_batch_size_flag_without_a_micro_flag_is_per_device():
    # FastVideo #151 / diffusers #8560: `accelerate launch train.py --train_batch_size=1 --gradient_accumulation_steps=4`
    s = setup_values(
        "accelerate launch train_dreambooth_lora_sd3.py \\\n  --train_batch_size=1 \\\n  --gradient_accumulation_steps=4"
    )
    assert s["train_micro_batch_size_per_gpu"] == 1 and "train_batch_size" not in s
    # OpenRLHF writes its micro batch beside it: there `--train_batch_size` stays the global batch
    s = setup_values(
        "deepspeed --module openrlhf.cli.train_sft \\\n  --train_batch_size 64 \\\n  --micro_train_batch_size 2"
    )
    assert s["train_batch_size"] == 64 and s["train_micro_batch_size_per_gpu"] == 2


def test_a_batch_set_with_an_auxiliary_verb():
    # ChatBLOOM #1: "My batch_size had set to 1 and a lower max_len, but still running into OOM on my 32G GPU"
    assert (
        extract_slots("My batch_size had set to 1 and a lower max_len", prose=True).train_micro_batch_size_per_gpu == 1
    )
    assert extract_slots("the batch size was 8 and it OOMs", prose=True).train_micro_batch_size_per_gpu == 8


def test_fp32_after_than_is_the_baseline():
    # pytorch/xla #1955: "Mixed precision training slower than float32"
    assert extract_slots("Mixed precision training slower than float32", prose=True).precision != "fp32"
    assert extract_slots("混合精度训练比fp32还慢", prose=True).precision != "fp32"
    assert extract_slots("I train in fp32. It is slower than I expected", prose=True).precision == "fp32"


# ---- what opens the answer -----------------------------------------------------------------------------------------
def test_a_memory_belief_named_on_the_way_does_not_answer_a_speed_question(assistant):
    # Lightning #11933: "fp16 uses less memory and runs faster … bf16 … 4x slower than fp32 … shouldn't it work
    # faster than fp32 on A100 GPUs?" opened "Yes, this is expected: … mixed precision barely shrinks … memory"
    a = assistant.ask(
        "bfloat16 running 4x slower than fp32\n\nI've used both fp16 and fp32 precision to train the model and things "
        "work as expected: fp16 uses less memory and runs faster than when using fp32. However, when I try to switch "
        "to bf16 through `Trainer(precision='bf16')`, training speed is dramatically lower than with fp32. But "
        "shouldn't it work faster than fp32 on A100 GPUs? Any help would be hugely appreciated."
    )
    first = a.first_screen.split("\n\n")[0]
    assert "model-state memory" not in first and "Tensor Cores" in first


def test_a_diffusion_card_answers_diffusion_runs_only(assistant):
    # the diffusion card shares LoRA, activations and "full fine-tune" with LLM cards: an LLM LoRA OOM (KnowLM #63's
    # kind) does not list latent tokens among its causes, a CogVideoX question gets the card first
    llm = assistant.ask("用 lora 微调 llama2-7b，micro batch 4，序列长度 4096，单卡还是 OOM 了，为什么？")
    assert "diffusion-video-finetune-memory" not in [s.card_id for s in llm.sources] and "latent" not in llm.text
    video = assistant.ask("請問要finetune CogVideoX-5B-I2V-v1.5，需要多少memory")
    assert [s.card_id for s in video.sources][:1] == ["diffusion-video-finetune-memory"]


def test_a_diffusion_fit_question_opens_with_what_diffusion_memory_is_made_of(assistant):
    # FastVideo #142: the LLM inputs list ("the model or its size; precision; micro batch; sequence length") is the
    # wrong list for a video DiT; the diffusion card says what its memory depends on (frames and resolution)
    a = assistant.ask(
        "How much GPU memory is required to full-finetuning Hunyuan model? I'm using two A100 80G GPUs to conduct "
        "full fine-tuning on the Hunyuan model and keep getting OOM."
    )
    assert a.first_screen.startswith("**Diffusion fine-tuning memory has three parts")
    assert "sequence length" not in a.first_screen.split("\n\n")[0]
