"""Diagnosis answers judged by reading, round 10 (bench/judged/diagnose-s10.yaml): general causes behind the misses,
each test built from the shape of a real message (thread named in the comment)."""

from __future__ import annotations

from typing import Any

from rag.cards import load_cards
from rag.citing import answers_another_setup, hardware_conflict
from rag.opening import read_asked
from rag.parts import split_message
from rag.retrieval import Hit
from rag.setup import read_setup
from tests.test_cards7_units import _cited, _hit

ALL = tuple(load_cards())
CARDS = {c.id: c for c in ALL}
FA_CARD = "hw-flash-attention-requires-ampere"
BF16_CARD = "hw-bf16-requires-ampere"
TF32_CARD = "hw-tf32-requires-ampere"


def _why_not(card_id: str, text: str) -> str:
    parts = split_message(text)
    return answers_another_setup(CARDS[card_id], read_asked(text, parts), read_setup(parts)[0])


# ---- a card whose cause is a pre-Ampere GPU does not answer a message on Ampere or newer ---------------------------
# OpenRLHF #384 (shape): DPO of glm-4-9b on "A100-80Gx8", bf16, ZeRO-3, OOM after a few dozen steps, fixed by turning
# flash_attn on. The FlashAttention-2-needs-Ampere card is retrieved first (the message names flash_attn) but its
# cause — a V100/T4 that lacks the feature — cannot be this user's.
OPENRLHF_DPO = (
    "dpo 训练显存 OOM\n我目前正在微调 glm-4-9b-chat，显卡为 `A100-80Gx8`\n"
    "按照如下参数训练 (bsize=128, micro_train_bsize=1, bf16, zero3, gradient_checkpointing)，仍然会在训练几十步后报 OOM\n"
    "```\ndeepspeed --module openrlhf.cli.train_dpo \\\n   --train_batch_size 128 \\\n   --micro_train_batch_size 1 \\\n"
    "   --bf16 \\\n   --max_len 2048 \\\n   --zero_stage 3 \\\n   --gradient_checkpointing\n```\n"
    "（补充）fixed 似乎是没开 `flash_attn`，会多占关键几 G 内存"
)


def test_an_ampere_requirement_card_does_not_answer_a_message_on_ampere_gpus():
    assert "older than Ampere" in _why_not(FA_CARD, OPENRLHF_DPO)
    assert "older than Ampere" in _why_not(BF16_CARD, "8 张 A100 80G 用 bf16 训练 qwen 7b，loss 是 nan，为什么？")
    assert "older than Ampere" in _why_not(TF32_CARD, "RTX 4090 24G, --tf32 True, training is slow, why?")
    assert "older than Ampere" in _why_not(FA_CARD, "Two H100 80GB, flash_attention_2, OOM at seq 32k")


def test_it_still_answers_an_older_or_unstated_gpu():
    # LLaMA-Factory #3508 / stanford_alpaca #133 shapes: the GPU lacks the feature, or no GPU is stated.
    assert (
        _why_not(FA_CARD, "V100 32G 训练 qwen14b 报错 RuntimeError: FlashAttention only supports Ampere GPUs or newer.")
        == ""
    )
    assert (
        _why_not(BF16_CARD, "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU")
        == ""
    )
    assert _why_not(TF32_CARD, "T4 16G: ValueError: --tf32 requires Ampere or a newer GPU arch") == ""
    # An older card named beside a newer one may be the one that fails.
    assert _why_not(BF16_CARD, "Worked on our A100, but on the 2080 Ti node bf16 fails with an error") == ""


def test_a_bf16_card_does_not_answer_a_run_in_fp16_and_a_flash_card_not_one_with_it_off():
    # transformers #871 (shape): run_glue on a V100 with --fp16 — "spend the same time and gpu memory, why fp16 does
    # not work". The V100 lacks bf16, but the run does not use bf16: the bf16 card's cause is not theirs.
    fp16_v100 = (
        "fp16 is not work\nGPU:v100\n```\npython ./examples/run_glue.py --model_type bert --max_seq_length 128 "
        "--per_gpu_train_batch_size=8 --fp16\n```\nand i also run with --fp16, but spend the same time and gpu memory"
    )
    assert "bf16" in _why_not(BF16_CARD, fp16_v100)
    # Time-LLM #41 (shape): fp16 on a V100 *because* it has no bf16 — the message names bf16, the card may answer.
    assert (
        _why_not(
            BF16_CARD,
            "I'm using an Nvidia v100 GPU. I have changed the --mixed_precision to FP16 instead of BF16 since this GPU "
            "card can't work on BF16. During the training phase I'm getting nan losses.",
        )
        == ""
    )
    # LLaMA-Factory #460 (shape): a Chinese message names BF16 glued to the text; it asks about bf16 vs fp16.
    assert (
        _why_not(
            BF16_CARD, "为什么推荐使用FP16呢？我看Llama-2官方的recipes里推荐用的是BF16，用FP16训练是出于什么考量呢？"
        )
        == ""
    )
    # EasyR1 #430 (shape): FlashAttention "disabled" in the config and still the FlashAttention2 error on a V100 after
    # an H100: the card is the answer.
    assert (
        _why_not(
            FA_CARD,
            "v100不兼容flash atten，使用xformer仍然报错\n之前用H100跑通了代码，但切到V100显示不支持flash atten2，"
            "我在新的环境下没有下载flash atten，并在配置文件中指定attn_implementation: xformers，禁用所有atten参数后还是报同样的错误\n"
            "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error",
        )
        == ""
    )
    # Cards that name no GPU generation are untouched.
    assert hardware_conflict(CARDS["oom-attention-flash-attention"], read_setup(split_message(OPENRLHF_DPO))[0]) == ""


def test_the_attention_memory_card_opens_the_a100_dpo_oom(bot_without_retrieval: Any) -> None:
    hits = [
        _hit(FA_CARD, 0.62, 1),
        _hit("oom-attention-flash-attention", 0.61, 2),
        _hit("zero-stages-memory-savings", 0.60, 3),
    ]
    cited = _cited(bot_without_retrieval, OPENRLHF_DPO, hits)
    assert cited[0] == "oom-attention-flash-attention"
    assert FA_CARD not in cited


def test_flash_attention_turned_off_by_its_value_reads_off():
    # LLaMA-Factory writes `flash_attn: disabled` (v0.8.3+) or `off`; scripts `use_flash_attn=False`.
    for text in ("flash_attn: disabled", "use_flash_attn=False", "V100 32G, flash_attn disabled, OOM"):
        assert read_setup(split_message(text))[0].get("flash_attention") is False, text
    for text in ("--flash_attn fa2", "flash_attn: auto", "attn_implementation: flash_attention_2"):
        assert read_setup(split_message(text))[0].get("flash_attention") is True, text


# ---- the Trainer's start-up summary counts fewer examples than the user's data has -------------------------------
# alignment-handbook #220 (shape): "Number of raw training samples: 7473" in the prose, then the Trainer log
# "Num examples = 698 … Total train batch size … = 32 … Total optimization steps = 66": packed rows, not lost data.
BANNER = (
    "[INFO|trainer.py:2314] >> ***** Running training *****\n"
    "[INFO|trainer.py:2315] >>   Num examples = 698\n"
    "[INFO|trainer.py:2316] >>   Num Epochs = 3\n"
    "[INFO|trainer.py:2317] >>   Instantaneous batch size per device = 2\n"
    "[INFO|trainer.py:2320] >>   Total train batch size (w. parallel, distributed & accumulation) = 32\n"
    "[INFO|trainer.py:2321] >>   Gradient Accumulation steps = 4\n"
    "[INFO|trainer.py:2322] >>   Total optimization steps = 66\n"
)


def test_a_summary_with_fewer_rows_than_the_data_is_read_as_packing():
    from calculators.diagnose import diagnose

    d = diagnose(BANNER, context="I print the total amount of my training dataset, which is 7473")
    cause = d.causes[0]
    assert cause.id == "log.fewer_examples_than_data"
    assert "698" in cause.title_en and "7473" in cause.title_en
    assert "66" in cause.because_en  # ⌈698 ÷ 32⌉ × 3 = 66, the logged step count
    assert cause.card_ids == ["sft-packing-memory-and-steps"]
    # The same count, or none, is not a discrepancy; the summary alone is still read back.
    assert not diagnose(BANNER, context="my dataset has 700 samples").causes
    assert [a.kind for a in diagnose(BANNER).artifacts] == ["trainer_banner"]
    assert not diagnose(BANNER).causes


def test_the_engine_opens_with_it(bot_without_retrieval: Any) -> None:
    q = (
        "why num examples is much less than the total amount of my training dataset?\n"
        "Number of raw training samples: 7473\n\n" + BANNER + "\nI am afraid I only trained on 698 of 7473 samples"
    )
    ans = bot_without_retrieval.ask(q)
    assert ans.act == "diagnose"
    assert "698" in ans.text.split("\n\n")[0] and "pack" in ans.text.split("\n\n")[0]


# ---- a card about several GPUs does not answer a message on one GPU ----------------------------------------------
# stanford_alpaca #56 (shape): "CUDA out of memory for a single core A100 80G GPU" was answered with "GPU 0 holds the
# master model (DataParallel)" and "Can different GPU models train together in data parallel".
def test_a_card_about_several_gpus_does_not_answer_one_gpu():
    one = "CUDA out of memory for a single core A100 80G GPU. Can i fix this by changing anything?"
    for card_id in ("dataparallel-single-process-trainer", "mem-multi-gpu-gpu0-imbalance", "hw-mixed-gpu-models"):
        assert "one" in _why_not(card_id, one), card_id
    # Several GPUs, or a count the prose does not give, keep them.
    assert _why_not("mem-multi-gpu-gpu0-imbalance", "4 张 V100，0 号卡显存是其他卡的两倍，为什么？") == ""
    assert _why_not("dataparallel-single-process-trainer", "CUDA out of memory on A100 80G, why?") == ""
    # GLM-4 #324 (shape): "two A40s, I want to use one of them" — and the run was DataParallel over both.
    glm = (
        "我的服务器上有两张A40，我想使用其中一张进行微调，但是当其中一张显卡的显存占用达到大概20G的时候，另一张显卡也会被使用。\n"
        "UserWarning: Was asked to gather along dimension 0, but all input tensors were scalars"
    )
    assert _why_not("dataparallel-single-process-trainer", glm) == ""
    # Cards whose subject is not several GPUs are untouched.
    assert _why_not("oom-memory-budget-breakdown", one) == ""


# ---- a diagnosis does not open with a yes/no verdict on a belief the user did not state ---------------------------
# dev.to "You Set batch_size=1, Enabled Gradient Accumulation, and It Still Crashes" (shape): the top card was the
# "lowering GA saves memory" myth, and the answer opened "The closest known fact: Hardly at all. Lowering GA …".
class _FixedRetriever:
    """Returns the given cards in order, as a retriever that ranked them so."""

    def __init__(self, ids: list[str]) -> None:
        self.ids = ids

    def retrieve(self, query: str, k: int = 3) -> list[Any]:
        return [Hit(card=CARDS[c], score=0.0, dense_score=0.75, bm25_rank=i + 1) for i, c in enumerate(self.ids[:k])]


def test_a_myth_card_does_not_open_a_diagnosis_as_the_closest_fact() -> None:
    from rag import Assistant
    from rag.compose import _verdict_without_cause

    assert _verdict_without_cause(CARDS["myth-lower-ga-saves-memory"], "en")
    assert not _verdict_without_cause(CARDS["mem-creeping-growth-over-steps"], "en")
    q = (
        "I trained ViT-L/16 on a single RTX 3090 (24GB). Batch size 1 with accumulation_steps=4 still crashed with "
        "CUDA OOM at step 4 or 5. Where was the memory going?"
    )
    ranked = ["myth-lower-ga-saves-memory", "myth-effective-batch-causes-oom", "mem-creeping-growth-over-steps"]
    ans = Assistant(cards=list(ALL), retriever=_FixedRetriever(ranked)).ask(q)
    first = ans.text.split("\n\n")[0]
    assert ans.act == "diagnose"
    assert "Hardly at all" not in first and "No." not in first
    assert "creeps up" in first  # the one card that names a cause of the symptom


# ---- mixed precision that left memory unchanged; "cutoff length" is not "cut" -----------------------------------
def test_precision_that_left_memory_unchanged_is_the_mixed_precision_belief():
    from rag.intents import detect_misconceptions

    def keys(text: str) -> list[str]:
        return [r.key for r in detect_misconceptions(text)]

    # ControlNet #456 and transformers #871 (shapes).
    assert "mixed_precision_halves" in keys(
        "Question about training with mixed precision. I set precision to 16 for mixing precision training, however "
        "whether I set it to 16 or 32, the cuda memory and training time will not change, what is the reason?"
    )
    assert "mixed_precision_halves" in keys("i also run with --fp16, but spend the same time and gpu memory, why?")
    # FSDP vs DDP using the same memory, with AMP named far away, is about sharding.
    assert "mixed_precision_halves" not in keys(
        "FSDP consumes the same amount of memory as DDP, why? Is it because FSDP only supports nn.Sequential models? "
        "I replaced the DDP in the code with FSDP as follows, and use the AMP mode of pytorch."
    )
    # LLaMA-Factory #7137 (shape): "cutoff length" does not say mixed precision cuts memory.
    assert "mixed_precision_halves" not in keys(
        "Fine-tuning eating memory. compute type= bf16. After some steps (depends on batch size and cutoff length) "
        "VRAM empty size starts to shrink by a few hundred MB every 10-15 steps"
    )
