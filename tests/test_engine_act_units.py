"""The question act and the held-belief check, fast (no embedding model, no assistant).

Phrasings written the way issue-tracker users write (a title, a description, then the question), not
copied from the dev set: each case pins one rule of rag/acts.py or rag/intents.py that the dev-set
figures (bench/eval_answers.py) rest on.
"""

from __future__ import annotations

import pytest

from rag.acts import asked_sentences, classify_act
from rag.intents import RULES, detect_misconceptions, holds_belief
from rag.parts import split_message

RULE = {r.key: r for r in RULES}


def act_of(text: str, **kw) -> str:
    parts = split_message(text)
    misconceptions = detect_misconceptions(text)
    return classify_act(parts, has_misconception=bool(misconceptions), **kw)


# ---- what is asked ---------------------------------------------------------------------------
def test_asked_sentences_are_the_questions_not_the_description():
    text = (
        "Training hangs at step 0 with ZeRO-3. When I launch on 2 nodes the log stops after init, "
        "which is odd. What is the reason?"
    )
    assert asked_sentences(text) == ["What is the reason?"]
    zh = "用4张卡训练，显存一直在涨，这是什么原因呢，能不能限制住"
    assert asked_sentences(zh) == ["这是什么原因呢，", "能不能限制住"]


# ---- diagnose: a symptom described, an error named ----------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "Exception: could not find the transformer layer class to wrap in the model",
        "`.half()` is not supported for quantized models, it worked last week with the same script",
        "8张A100 全参微调 13B 爆显存",  # a title that only states a symptom
        "Loss goes to NaN after 200 steps with fp16, what is the reason?",
        "显存一直在涨，为什么？我用的是 zero3",
        "多卡训练时第一张卡的显存占用比其他卡大很多，这个是什么原因",
    ],
)
def test_a_described_symptom_or_named_error_is_a_diagnosis(text):
    assert act_of(text) == "diagnose"


def test_why_about_a_rule_is_an_explanation_not_a_diagnosis():
    # No symptom: the user asks why a documented constraint exists.
    assert (
        act_of(
            "Why does the trainer require per_device_train_batch_size * num_processes to be divisible "
            "by num_generations? What if I have 2 GPUs?"
        )
        == "explain"
    )


# ---- yes/no: a question about an effect, even with a symptom as its motive ------------------------
@pytest.mark.parametrize(
    "text",
    [
        "把 batch size 调小一点会影响最终效果吗？因为显存不够，batch 大了会爆",
        "Will a smaller per-device batch affect the final accuracy? My 12GB card is too small for 16.",
    ],
)
def test_an_effect_question_is_yes_no_even_with_a_symptom_as_motive(text):
    assert act_of(text) == "yes_no"


# ---- is it normal -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "Memory goes from 3.1 GB to 3.6 GB after the first step. Is this supposed to happen?",
        "The progress bar counts optimizer steps, not batches. Is it a bug or intended?",
    ],
)
def test_asking_whether_an_observation_is_expected_is_is_normal(text):
    assert act_of(text) == "is_normal"


# ---- batch arithmetic and configure ---------------------------------------------------------------
def test_checking_an_effective_batch_on_ones_numbers_is_batch_arithmetic():
    assert (
        act_of(
            "If I understand correctly, with 4 GPUs I should set micro batch 2 and GA 8 "
            "for an effective batch size of 64?"
        )
        == "batch_arithmetic"
    )


@pytest.mark.parametrize(
    "text",
    [
        "How to convert the sharded FSDP checkpoint into a Hugging Face model?",
        "全量微调 7B 的启动脚本如何编写？超参数怎么设置？",
    ],
)
def test_how_to_do_something_is_configure(text):
    assert act_of(text) == "configure"


# ---- held beliefs: no correction for what the user did not assert ---------------------------------
def test_simulating_a_larger_batch_with_limited_memory_is_not_the_ga_memory_myth():
    text = "Gradient accumulation exists to simulate a larger batch size with limited GPU memory."
    assert not RULE["ga_raises_memory"].matches(text)
    # …while the belief itself still matches, asked or asserted.
    assert RULE["ga_raises_memory"].matches("Does increasing gradient accumulation steps increase GPU memory?")
    assert RULE["ga_raises_memory"].matches("梯度累积步数调大以后显存会变大吗")


def test_per_device_batch_is_not_the_effective_batch():
    text = "When I set per_device_train_batch_size=8 the GPU memory went down, so weird"
    assert "effective_batch_oom" not in {m.key for m in detect_misconceptions(text)}


@pytest.mark.parametrize(
    "text",
    [
        "Here's the memory usage as I increase gradient_accumulation_steps: 41 GB, 47 GB, 55 GB.",
        "accumulate_grad 1，显存占用一直在30G左右，但后来突然就有一个卡爆了。",
    ],
)
def test_a_reported_measurement_is_not_a_held_belief(text):
    for m in detect_misconceptions(text):
        assert not holds_belief(text, m)


def test_a_stated_belief_is_still_held_even_with_numbers():
    text = "我以为梯度累积会把每个微批次的梯度都存一份，所以 GA=16 要 16 倍显存。"
    held = [m.key for m in detect_misconceptions(text) if holds_belief(text, m)]
    assert held


# ---- pooled-memory belief, written the way users write it ------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "我用了4张24G的卡，共96G显存，全参微调还是OOM",
        "I have 8 GPUs for a total amount of GPU memory of 40 GB * 8 = 320 GB, yet the 70B LoRA run goes OOM.",
        "单卡要 16G，我以为两张卡的话会平均分到每张卡上，每张只要 8G",
    ],
)
def test_pooled_memory_belief_is_recognised_in_users_phrasings(text):
    assert "more_gpus_pool_memory" in {m.key for m in detect_misconceptions(text)}


def test_several_gpus_without_a_pooling_claim_is_not_the_belief():
    text = "我用4张3090训练 7B LoRA，每张卡占用 20G，速度正常"
    assert "more_gpus_pool_memory" not in {m.key for m in detect_misconceptions(text)}


def test_a_diagnosis_opens_with_the_pooling_cause_not_with_no():
    from rag import Assistant
    from tests.test_pipeline_units import CARDS, StubRetriever

    bot = Assistant(cards=CARDS, retriever=StubRetriever())
    ans = bot.ask("我用4张3090，合计96G显存，全参微调 7B 还是 OOM，怎么回事？")
    assert ans.act == "diagnose"
    assert ans.first_screen.startswith("**最可能的原因：多卡不会")


# ---- batch arithmetic on the user's own numbers -------------------------------------------------------
@pytest.mark.parametrize(
    "text,size",
    [
        ("I have 2 million samples and 4 GPUs", 2_000_000),
        ("训练集是20k条问答对", 20_000),
        ("我有1000条数据，4张卡", 1000),
        ("数据集为1800多条", None),  # approximate: not a number the user stated
        ("about 2k samples", None),
        ("500 samples in one set and 1000 examples in the other", None),  # two counts: which one is unclear
        ("micro batch 4, GA 8", None),
    ],
)
def test_dataset_size_is_read_only_when_stated_exactly(text, size):
    from rag.planner import dataset_size_in

    assert dataset_size_in(text) == size


def test_steps_per_epoch_question_gets_the_arithmetic_first():
    from rag import Assistant
    from tests.test_pipeline_units import CARDS, StubRetriever

    bot = Assistant(cards=CARDS, retriever=StubRetriever())
    ans = bot.ask(
        "I have 1,000,000 samples, per_device_train_batch_size 2, gradient_accumulation_steps 4 on 8 GPUs. "
        "How many steps per epoch?"
    )
    assert ans.act == "batch_arithmetic"
    first = ans.first_screen.split("\n")[0]
    assert "2 × GA 4 × 8 GPUs = 64" in first and "15,625" in first  # 1,000,000 / 64 = 15,625


def test_fit_without_a_preset_architecture_still_answers_from_the_model_states():
    from rag import Assistant
    from tests.test_pipeline_units import CARDS, StubRetriever

    bot = Assistant(cards=CARDS, retriever=StubRetriever())
    big = bot.ask("Full fine-tune of a 30B model on one 80GB A100, bf16: does it fit?")
    assert big.act == "fit" and big.first_screen.startswith("**It does not fit: the model states alone")
    zh = bot.ask("全量微调一个 30B 的模型，单张 A100 80G，bf16，能放下吗？")
    assert zh.act == "fit" and zh.first_screen.startswith("**放不下：仅模型状态")


# ---- no quadratic regexes on long digit runs (a 30,000-character message is accepted) -----------------
@pytest.mark.parametrize("text", ["1" * 30_000, "1," * 15_000, "12G " * 7_000])
def test_reading_a_long_digit_run_stays_linear(text):
    import time

    from rag.parts import Part
    from rag.planner import dataset_size_in

    start = time.perf_counter()
    classify_act([Part(kind="prose", text=text, start=0, end=len(text))])
    for rule in detect_misconceptions(text):
        holds_belief(text, rule)
    dataset_size_in(text)
    # Linear work here is well under a second; the quadratic versions took minutes ("1," * 15000: 5 min).
    assert time.perf_counter() - start < 10


# ---- fit: a yes/no question whose verb is training on stated hardware ---------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        # an English capability question, even when the failure is its motive
        "[Question] Can full fine-tuning of a 13B model be done on two A6000 48G?\n\n"
        "I tried it and the program says memory is insufficient.",
        "OOM with 2 cards\nHello, I got cuda out of memory. I would like to ask:\n"
        "1. Can 2-card A10 with 48G in total train the 7B model with LoRA?\n2. Is the 24GB in the docs per card?",
        "does 4 H100 80g enough to finetune 34b yi ?",
        "how to train qwen-14b in one 4090 24G?",
        # Chinese: "能/可以 … sft 吗" about a GPU count or a model size
        "4卡 V100-32G 可以做13B模型sft吗？内存 512G，可以的话脚本怎么改？",
    ],
)
def test_a_capability_question_about_stated_hardware_is_fit(text):
    assert act_of(text) == "fit"


def test_is_there_a_way_after_an_oom_stays_a_fix_not_a_fit_question():
    text = (
        "I have 4 GPUs with 24 GB each. I run into Out-Of-Memory issues when training. "
        "Is there any way I can fine-tune Llama-2-13B with LoRA on my setup?"
    )
    assert act_of(text) != "fit"


def test_how_to_train_on_gpus_without_a_memory_size_is_not_fit():
    assert act_of("how to train llama2-7b on 2 GPUs with deepspeed?") != "fit"


# ---- a failure a question only supposes is not an observed symptom -------------------------------------------
def test_a_failure_named_as_a_possibility_is_not_observed():
    # "能防止溢出？" / "在不溢出的情况下…？" suppose an overflow; the user asks why a precision is recommended
    text = (
        "为什么推荐使用FP16呢？\n\n官方的recipes里推荐用的是BF16。请问用FP16训练而不是BF16是出于什么考量呢？"
        "BF16主要是能防止溢出？FP16在不溢出的情况下效果会好一点？"
    )
    assert act_of(text) == "explain"
    # the same failure reported as seen is a diagnosis
    assert act_of("用FP16训练时 loss 溢出了，为什么？") == "diagnose"


# ---- is_normal: the user's expectation held against what they measured ---------------------------------------
def test_shouldnt_x_after_a_measurement_asks_whether_it_is_expected():
    text = (
        "Memory of GA in DPO\n\nOn 4 GPUs I set A: per_device_train_batch_size=4, GA=1 and B: "
        "per_device_train_batch_size=2, GA=2, and the memory usage was about the same (60 GB). "
        "However, shouldn't setting B use clearly less memory than setting A?"
    )
    assert act_of(text) == "is_normal"
    # arithmetic in the expectation asks for the arithmetic, and a tag question after an OOM stays a diagnosis
    steps = (
        "I train on 1,000 samples with 4 GPUs and per_device_train_batch_size 5 and I get 1,000 steps. "
        "Shouldn't it be 1,000 / 5 / 4 = 50 steps?"
    )
    assert act_of(steps) != "is_normal"
    oom = "I have 2x A6000 with 48GB each, this should be enough for QLoRA, shouldn't it? But it OOMs at step 30."
    assert act_of(oom) == "diagnose"


def test_unreasonable_is_the_english_of_buheli():
    text = (
        "zero3 uses more memory than zero2\n\nWhen I run the sft script I find the memory usage of zero3 is "
        "larger than that of zero2, which seems unreasonable."
    )
    assert act_of(text) == "is_normal"


# ---- a failure named as a goal or a risk is not observed --------------------------------------------------------
def test_a_failure_to_avoid_or_a_risk_is_not_a_reported_symptom():
    # "so as not to use too much memory": the goal of a feature request, not what the user saw
    request = (
        "Is there a way to set the global batch size, say 256, and have the per-GPU batch and accumulation computed "
        "automatically? It would also need a maximum per-GPU batch so as not to use too much memory."
    )
    assert act_of(request) != "diagnose"
    # "It may cause performance degradation": a claim about code, answered with a verdict
    claim = (
        "gradient accumulation\n\nI noticed that your code uses gradient accumulation instead of batch size 8. "
        "The BN layer still sees the small batch. It may cause performance degradation."
    )
    assert act_of(claim) == "yes_no"


def test_kashu_is_the_gpu_count_not_a_hang():
    # "还是卡数" = "or the GPU count"; "还是卡住" would be a hang
    text = "8卡学习率为0.0004，那么单卡应该除以8吗？学习率是与batchsize还是卡数成比例缩放呢"
    assert act_of(text) != "diagnose"


def test_how_i_can_do_something_asks_for_the_setting():
    text = (
        "Trainer with 2 GPUs and ZeRO-2 saves a large folder global_step_100 of 30GB at each checkpoint. "
        "How I can automatically not save this folder? I only need the adapter."
    )
    assert act_of(text) == "configure"


def test_a_performance_drop_is_a_symptom():
    text = (
        "ZeRO-Offload and a 1B model\n\nThe performance drops significantly when using ZeRO-Offload to train a 1B model: "
        "120s per epoch with offload, 20s without it."
    )
    assert act_of(text) == "diagnose"


# ---- batch_arithmetic: the count asked for in the words users write it with ------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        # a quoted name of the quantity between "the" and "global batch size"
        'What is the expected "global batch size"?\n\nThe recipe says to keep the global batch size constant when '
        "scaling the GPUs. I run it on 4x A6000 and need to know it to set the accumulation steps.",
        # per GPU or global
        "Batch size in the paper\n\nTable 3 gives a batch size of 1024 for pretraining. Could you clarify if this batch "
        "size is per GPU or global over all GPUs?",
        "论文里 batch size 为 512，请问是单卡的还是所有卡总的？",
        # the number of iterations in one epoch
        "I want to know how to find out the number of iterations needed to see all of my data for one epoch.",
        # "tell me what the actual batch size is" outside the sentence with the question mark
        "Assuming nnodes = 2 and 4 GPUs per node, data.train_batch_size: 8, rollout.n: 4.\n"
        "Please tell me what the actual batch size is, and when are the gradients updated?",
    ],
)
def test_the_count_asked_for_is_batch_arithmetic(text):
    assert act_of(text) == "batch_arithmetic"


# ---- yes/no after a condition or a conjunction; "any reason to" asks for the reason ----------------------------
def test_a_yes_no_question_after_a_leading_condition():
    text = (
        "if num_generations is doubled, will the completions per step double too? And does each backward pass "
        "use more memory because of it?"
    )
    assert act_of(text) == "yes_no"
    # a choice after the condition is not a yes/no question
    choice = (
        "Dropout with accumulation\n\nI was wondering how dropout masks are handled here. If a model uses dropout, "
        "are the masks drawn per micro-batch or per optimizer step?"
    )
    assert act_of(choice) != "yes_no"


def test_is_there_any_reason_not_to_asks_for_the_reason():
    text = (
        "grad accumulation vs per-device batch\n\nI use per_device batch 1 and accumulation 16 to prototype on one GPU. "
        "Is there any reason not to use per_device batch 16 and accumulation 1 instead?"
    )
    assert act_of(text) == "explain"


# ---- diagnose: symptoms in the words users write them with; a question about the cause -------------------------
@pytest.mark.parametrize(
    "text",
    [
        # "不起作用" / "没有起到作用": a setting that had no effect
        "weight_decay 在 lora 下面不起作用\n\n我测试下来好像没有起到作用，加上之后 loss 曲线和不加时一样",
        # "outof memory" as users type the OutOfMemoryError
        "使用2*A800 80G 全参数finetune qwen-14b发现CUDA outof memory",
        # "是因为显存不够吗？" asks about the cause of the kill, not whether it fits
        "显卡3090，显存24G，加载模型 qwen-14b 时程序被kill了，没有其他提示信息，是因为显存不够吗？",
    ],
)
def test_symptoms_users_write_and_a_cause_question_are_a_diagnosis(text):
    assert act_of(text) == "diagnose"


@pytest.mark.parametrize(
    "text",
    [
        "settings for multi-node training\n\nHi, thanks for the code. I am trying to reproduce your results on 2 nodes. "
        "I am wondering how did you set the learning rate warmup for multi-node (16 A100) training.",
        "Where the max_length is set\n\nMay I ask where is the max_length argument set in the code? "
        "I can't find it after reading the scripts.",
        "请问 gradient_accumulation_steps 在哪里设置？脚本里没找到",
    ],
)
def test_the_authors_setting_and_where_a_knob_is_set_are_configure(text):
    assert act_of(text) == "configure"


def test_why_we_of_a_design_question_is_not_the_users_run():
    text = "[QUESTION] Why we force zero_stage=3 when using cpu offload for params?\n\nI notice there are two choices."
    assert act_of(text) == "explain"


@pytest.mark.parametrize(
    "text, key",
    [
        # Jittor #602 shape: the growth is what the user saw, and what followed in their run is said with it.
        ("deepspeed 里用梯度累加时显存占用和累加步数成正比，导致显存占用过大，13B 模型无法训练", "ga_raises_memory"),
        (
            "With my trainer GPU memory increases with gradient accumulation steps, so I can't train the 7B model",
            "ga_raises_memory",
        ),
        # OpenRLHF #277 shape: the batch named as a remedy already tried, next to the memory that ran out.
        (
            "显存开始不够了，global_batch_size 我已经改到最小了，因为是 lora 合并的模型，所以用不了 zero3",
            "effective_batch_oom",
        ),
    ],
)
def test_a_consequence_or_a_remedy_tried_is_a_report_not_a_held_belief(text, key):
    assert key in {m.key for m in detect_misconceptions(text)}
    assert not holds_belief(text, RULE[key])


def test_a_hypothesis_of_the_users_own_is_a_held_belief_even_next_to_a_measurement():
    # bert4keras #477 shape: an OOM on a 6G card reported, then the user's guess at the cause, asked as a question.
    text = "用了梯度累积之后 6G 的卡连 batch_size=4 都 OOM，我猜测是因为每一步都保存了一份梯度导致的，请问是这个原因么"
    assert holds_belief(text, RULE["ga_stores_copies"])
    assert holds_belief(
        "I suspect accumulation keeps a copy of the gradients for every step, is that right?", RULE["ga_stores_copies"]
    )


def test_the_belief_said_outright_is_still_held_next_to_a_report():
    assert holds_belief("我以为梯度累积步数越大显存占用越大，我已经试过 GA=1 和 GA=8", RULE["ga_raises_memory"])
    assert holds_belief("有效批次太大会导致显存爆掉，所以要把 global batch 调小", RULE["effective_batch_oom"])


# ---- act10: turning a feature on/off, choosing between settings, the first question that asks what it means -------
@pytest.mark.parametrize(
    "text",
    [
        # xtuner #823 / LLaMA-Factory #1801 / DeepSpeed #6007 shapes: how to switch something on or off
        "请问 deepspeed 里如何启动 activation checkpointing 呢？",
        "zero3 训练会保存很大的 optimizer states 文件，怎样才能不保存它们呢？",
        "How can I not save the global_step folder? I only need the LoRA adapter.",
        # Baichuan2 #176 / Qwen #776 shapes: a choice between two settings
        "继续预训练时 bf16 和 fp16 如何选择呢",
        "lora 微调用 bf16 还是 fp16 更好呢？",
        # GLM-4 #782 shape: the extra work a setup needs
        "单卡显存不够，能用两张卡一起微调吗，需要做哪些额外配置？",
    ],
)
def test_switching_a_feature_or_choosing_a_setting_is_configure(text):
    assert act_of(text) == "configure"


@pytest.mark.parametrize(
    "text",
    [
        # ms-swift #3953 / Megatron-LM #1487 shapes: what it means / why, then how to change it
        "请问这里 train_micro_batch_size_per_gpu 写成 auto 是什么意思呀？命令行传的值还生效吗？如何手动修改呢？",
        "Why does the trainer force overlap_comm=False when offloading? Is it recommended to set it myself?",
    ],
)
def test_a_first_question_about_meaning_makes_the_how_to_after_it_part_of_the_explanation(text):
    assert act_of(text) == "explain"


def test_a_definition_offered_for_confirmation_is_yes_no():
    # FlagEmbedding #412 shape: "X 指的是 A*B*C 这样算出来的吗" checks a reading; "X 是什么意思" asks for it.
    assert act_of("论文里的 batch size 4096，指的是卡数*每卡batch*累积步数这样算出来的总数吗") == "yes_no"
    assert act_of("论文里的 batch size 4096 是什么意思？") == "explain"


@pytest.mark.parametrize(
    "text",
    [
        # LLaMA-Factory #3789 / xtuner #918 shapes: whether a setting exists that does it
        "checkpoint 目录里的 global_step 文件夹很大，想问一下这是优化器状态吗？配置里有参数可以关掉这个保存吗？",
        "多卡训练时日志里的步数没有除以梯度累积，请问有相关的设置可以让步数按优化器更新来算吗？",
        # LLaMA-Factory #6182 shape
        "I found the multi-node SFT examples. But is there any example for continued pretraining on two nodes?",
    ],
)
def test_asking_whether_a_setting_or_an_example_exists_is_configure(text):
    assert act_of(text) == "configure"


@pytest.mark.parametrize(
    "text",
    [
        # Whisper-Finetune #23 shape: a stated requirement, then whether the user's cards carry it
        "全参数微调 13B 大概要 60G 显存，如果使用两张 40G 的显卡可以吗？",
        # LLaMA-Factory #4199 shape
        "请问 4 张 24G 的 3090 是否支持 7b 模型的全参微调呢？",
    ],
)
def test_whether_the_stated_hardware_carries_the_run_is_fit(text):
    assert act_of(text) == "fit"


@pytest.mark.parametrize(
    "text",
    [
        "At the first 100 steps grad_norm is nan, then it is 3.9. Isn't it normal with fp16 loss scaling?",
        "With GA=4 the progress bar moves once every 4 batches. Is this as expected?",
    ],
)
def test_isnt_it_normal_and_as_expected_ask_whether_an_observation_is_normal(text):
    assert act_of(text) == "is_normal"


@pytest.mark.parametrize(
    "text",
    [
        "Does mixed precision halve GPU memory for a full fine-tune of llama-2-7b?",
        "Will lowering gradient accumulation steps save memory when I fine-tune a 13B model?",
    ],
)
def test_a_yes_no_about_a_belief_is_not_a_fit_question_because_it_names_a_model(text):
    # the capability reading ("does … fine-tune … 7b?") must not swallow a question about a wrong belief
    assert act_of(text) == "yes_no"


# ---- act11: a symptom next to another question -------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        # a figure asked first, then why the user's own run failed: the cause answers both
        "请问qwen-7b的lora微调需要多大显存？我用两张3090，batch 1 也爆显存了，为啥会这样呢",
        "How much VRAM does a 13B LoRA run need? I have 2x 24GB cards and it OOMs at step 1, why does my run fail?",
    ],
)
def test_a_figure_asked_next_to_why_my_run_failed_is_a_diagnosis(text):
    assert act_of(text) == "diagnose"


def test_a_figure_asked_without_a_why_stays_fit():
    assert act_of("请问qwen-7b的lora微调需要多大显存？我只有一张3090") == "fit"


@pytest.mark.parametrize(
    "text",
    [
        "Memory grows with DDP\nOne GPU takes 9GB, with 2 GPUs each takes 12GB. I wonder if this  is normal?",
        "Loss curve fluctuates a lot\nI trained on 4 GPUs with GA 2 and the loss jumps between 2 and 5. "
        "Not sure if this is expected since I only changed the accumulation.",
    ],
)
def test_wondering_whether_an_observation_is_normal_is_is_normal(text):
    assert act_of(text) == "is_normal"


@pytest.mark.parametrize(
    "text",
    [
        "1000条数据，per_device_train_batch_size 2，gradient_accumulation_steps 4，4张卡，训练3个epoch应该是多少个step呢？",
        'Does the "batch_size" in the config refer to the total batch size of all GPUs? I set 256 on 4 GPUs.',
        "多卡训练时batch_size是配置里写的值，还是要再乘以显卡数\n我用2张卡，batch_size设为16",
        "With 4 GPUs, is the batch_size the value in the yaml, or multiplied by the number of GPUs?",
        "如果batch_size设为64，有4张卡，那么是每张卡16还是每张卡64呢",
    ],
)
def test_asking_for_a_step_count_or_whether_the_batch_is_global_is_arithmetic(text):
    assert act_of(text) == "batch_arithmetic"


@pytest.mark.parametrize(
    "text",
    [
        "请问Llama-3-70B全参微调显存需要多少？",
        "请问sft阶段需要的显存是个什么规模呀？我试了2张A100 40G",
        "How much GPU mem needed for a 13B model?",
        "How much is required to fine-tune the 13B model with LoRA?",
        "What resources are needed to train a 34B model with QLoRA?",
        "两张4090，每张24G显存，可以进行qwen-14b-chat的lora微调吗",
        "Is it possible to do pretraining of a 7B model on a single H100 80GB? I get OOM with micro batch 1.",
    ],
)
def test_the_memory_figure_asked_in_other_word_orders_is_fit(text):
    assert act_of(text) == "fit"


@pytest.mark.parametrize(
    "text",
    [
        "加载 tokenized 数据时进程直接被kill\n用 8 卡跑 pt，数据 200G",  # a report with no question
        "训练到第 3000 步时 NCCL 超时\n8卡 A100，torch 2.4",
        "开了 bf16 反而占用更多显存",
        "用lora微调13b，为什么显存占用没有很明显的减少？",
        "Checkpoints saved with ZeRO-3 have corrupted weight shapes",
        "LoRA layers not trained when gradient_checkpointing=True",
        "微调qwen-7b占用显存40g以上，什么原因",  # the cause of a figure the user measured
    ],
)
def test_reports_of_a_failure_without_a_why_word_or_a_question_are_a_diagnosis(text):
    assert act_of(text) == "diagnose"


def test_the_reason_for_a_design_without_a_measurement_stays_an_explanation():
    assert act_of("ZeRO-3 为什么要在前向时 all-gather 参数，什么原因") == "explain"


@pytest.mark.parametrize(
    "text",
    [
        "Hi, how can I train my model on Intel Gaudi? Could you share an example?",
        "数据太长用qlora微调时显存溢出，能设置多卡qlora微调吗",
    ],
)
def test_how_can_i_train_on_a_device_and_whether_a_setting_does_it_are_configure(text):
    assert act_of(text) == "configure"


def test_can_i_train_a_model_on_stated_hardware_stays_fit():
    assert act_of("Can I train a 13B model with LoRA on one 24GB card?") == "fit"


@pytest.mark.parametrize(
    "text",
    [
        "Should I change the learning rate when training on 4 nodes instead of 1?",
        "8卡时学习率是2e-4，用2卡训练时学习率需要进行相应调整吗",
        "Does the warmup need to be scaled with the number of GPUs?",
    ],
)
def test_whether_a_setting_must_change_is_a_verdict_first(text):
    assert act_of(text) == "yes_no"


def test_what_to_change_it_to_is_still_configure():
    assert act_of("Going from 8 to 2 GPUs, how should I set the learning rate?") == "configure"


@pytest.mark.parametrize(
    "text",
    [
        "34b全参微调最少需要多少显存？我微调7b时两张卡都到了40G，为什么消耗这么高",
        "8张V100 32G的卡还是报显存不够。请问设备条件是什么",
    ],
)
def test_a_why_about_the_size_of_the_figure_or_the_hardware_asked_for_is_fit(text):
    assert act_of(text) == "fit"


def test_hardware_named_as_a_limit_is_not_a_question_about_it():
    assert act_of("由于硬件条件限制，单卡只有16GB显存，可以用多张卡微调吗，需要做哪些额外配置？") == "configure"


def test_the_questions_of_an_issue_form_are_not_the_users_questions():
    text = (
        "[Bug] SFTTrainer counts the effective batch wrongly\n"
        "1. Did you update? `pip install --upgrade unsloth unsloth_zoo` -- Yes\n"
        "2. `Colab` or `Kaggle` or local / cloud -- local\n"
        "4. Which notebook? Please link! -- NA\n"
        "5. Which Unsloth version, TRL version, transformers version, PyTorch version? -- Unsloth 2025.8.5\n"
        "6. Which trainer? `SFTTrainer`, `GRPOTrainer` etc -- SFTTrainer\n\n"
        "If I set per_device_train_batch_size = 4 and gradient_accumulation_steps = 4, the log still shows a total "
        "batch of 4."
    )
    assert act_of(text) == "diagnose"


def test_an_issue_forms_checklist_does_not_change_the_act_of_the_message_under_it():
    form = (
        "1. Did you update? `pip install --upgrade unsloth unsloth_zoo` -- Yes\n"
        "4. Which notebook? Please link! -- NA\n"
        "5. Which Unsloth version, TRL version, transformers version, PyTorch version? -- Unsloth 2025.8.5\n"
        "6. Which trainer? `SFTTrainer`, `GRPOTrainer` etc -- GRPOTrainer\n\n"
    )
    body = "Training Qwen2.5-7B with LoRA rank 16 on a single A100, the trainer reports 3 epochs."
    title = "GRPO epochs\n"
    assert act_of(title + form + body) == act_of(title + body)
    assert act_of("### Is there an existing issue for this?\n- [X] I have searched\n" + body) == act_of(body)


@pytest.mark.parametrize(
    "text",
    [
        "Which micro batch to use with my own DataLoader\nWhat batch size should be used when I build the loader myself "
        "and only wrap the model with deepspeed.initialize()? Should I keep the micro batch size there?",
        "I only have one 24GB card, if there any setting allow me to use gradient accumulation?",
    ],
)
def test_which_value_should_be_used_and_whether_a_setting_exists_are_configure(text):
    assert act_of(text) == "configure"


def test_a_clause_opening_with_does_not_describes_and_like_to_ask_if_asks():
    text = (
        "I would like to ask if fp16 could make the loss NaN. The repo uses bf16, but my card, a V100, "
        "does not support this precision."
    )
    assert asked_sentences(text) == ["I would like to ask if fp16 could make the loss NaN."]


# ---- what an issue pastes without asking: a report, not a fit question (act12, leave-one-file-out) ----------------
def _rule_of(text: str) -> str:
    """The rules' verdict with the flags the pipeline computes (setup read, calculators' diagnosis)."""
    from bench.train_act import act_inputs

    return act_inputs(text).rule_act


def test_a_bare_setup_typed_in_chat_still_asks_whether_it_fits():
    from bench.train_act import act_inputs

    x = act_inputs("8卡 A100 80G 全参数训练 llama2-13b，zero3，micro batch 4，bf16")
    assert x.setup_enough
    assert x.rule_act == "fit"


@pytest.mark.parametrize(
    "text",
    [
        # an issue title that reports an outcome in words no symptom pattern knows, then the command it ran
        "使用qwen-14B全参数微调时出现grad_norm全为0的情况\n\n命令为：\n"
        "deepspeed --num_gpus 8 src/train_bash.py --model_name_or_path Qwen/Qwen-14B --finetuning_type full "
        "--per_device_train_batch_size 4 --gradient_accumulation_steps 8 --bf16 --deepspeed ds_z3.json",
        # the same shape in English, with the config pasted
        "Mistral-7B full finetune on 4x A100 80GB gives identical memory for LoRA and full\n\n"
        '```json\n{"zero_optimization": {"stage": 3}, "bf16": {"enabled": true}, '
        '"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4}\n```',
    ],
)
def test_an_issue_that_pastes_what_it_ran_and_asks_nothing_reports_a_problem(text):
    assert _rule_of(text) == "diagnose"


def test_a_setting_word_in_a_description_is_not_a_configure_question():
    # a feature request that "suggests" something and asks nothing: no setting is asked for
    text = (
        "FSDP should let users switch between ZeRO-1, ZeRO-2 and full sharding\n\n"
        "DeepSpeed is hard to set up while FSDP is easy for LLMs, but FSDP has no ZeRO-1 or ZeRO-2 mode. "
        "We suggest adding a sharding flavour option so users can move between them."
    )
    assert _rule_of(text) != "configure"
