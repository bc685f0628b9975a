"""diag9: a diagnosis opens with the cause for what the user reported, judged by reading 40 real diagnoses
(bench/judged/diagnose-s9.yaml). Each test is built from the shape of a real message (threads cited inline):

* an OOM message pasted without its "Tried to allocate" headline is still read, and 20 GiB of live tensors with
  1.47 GiB cached-but-free is a real shortfall, not fragmentation (blog.csdn.net/litchi0_0/article/details/146158524);
* DeepSpeed's see_memory_usage at 84.6% CPU RAM followed by its launcher tearing the job down is the host killing
  the run (deepspeed #4571);
* a pasted error whose message a card quotes opens with that card (embedding_model_exp #3: '--tf32 requires Ampere'
  is the TF32 card's error, not the bf16 card's);
* a report of uneven memory across GPUs ("一个卡是22g，其余都是10g左右", LLaMA-Factory #3908; "第一张卡显存占满了",
  ChatGLM-6B #710) opens with the GPU-0 imbalance causes;
* "what to paste" never asks for what the message already gives (qlora #184 pasted its model, method, GPUs and
  micro batch).
"""

from __future__ import annotations

from typing import Any

from calculators.diagnose import diagnose, host_kill, oom
from rag.cards import load_cards
from rag.compose import Results, paste_request
from rag.evidence import error_messages, quotes_error, read_evidence
from rag.parts import split_message
from rag.planner import Plan
from rag.setup import read_setup

CARDS = {c.id: c for c in load_cards()}

# blog.csdn.net/litchi0_0/article/details/146158524: the message from "GPU 0 has a total capacity" on.
HEADLESS_OOM = (
    "error:GPU 0 has a total capacity of 23.64 GiB of which 1.61 GiB is free. Process 1624541 has 22.02 GiB memory "
    "in use. Of the allocated memory 20.13 GiB is allocated by PyTorch, and 1.47 GiB is reserved by PyTorch but "
    "unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:"
    "True to avoid fragmentation. See documentation for Memory Management"
)


def test_an_oom_message_without_its_headline_is_read() -> None:
    (a,) = oom.read(HEADLESS_OOM)
    f = a.fields
    assert "oom_request_gb" not in f
    assert (f["gpu_memory_gb"], f["oom_allocated_gb"], f["oom_unallocated_gb"]) == (23.64, 20.13, 1.47)
    causes = oom.causes(a, {})
    assert causes[0].id == "oom.model_states" and causes[0].likelihood == "likely"
    assert "not fragmentation" in causes[0].because_en and "20.1 GiB" in causes[0].because_en
    assert all(c.id != "oom.fragmentation" for c in causes)


def test_a_headline_and_its_capacity_sentence_are_one_message() -> None:
    text = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 36.00 MiB. GPU 0 has a total capacity of "
        "22.38 GiB of which 16.81 MiB is free. Including non-PyTorch memory, this process has 22.36 GiB memory in use. "
        "Of the allocated memory 22.09 GiB is allocated by PyTorch, and 51.65 MiB is reserved by PyTorch but unallocated."
    )
    (a,) = oom.read(text)
    assert abs(a.fields["oom_request_gb"] - 36 / 1024) < 1e-3
    # A headless capacity sentence far from any headline is a second message.
    assert len(oom.read(text + "\n" + "x" * 2000 + "\n" + HEADLESS_OOM)) == 2


def test_a_large_cached_share_without_the_request_is_possible_fragmentation() -> None:
    text = (
        "GPU 0 has a total capacity of 79.15 GiB of which 120.00 MiB is free. Including non-PyTorch memory, this "
        "process has 79.02 GiB memory in use. Of the allocated memory 60.10 GiB is allocated by PyTorch, and 18.30 GiB "
        "is reserved by PyTorch but unallocated."
    )
    (a,) = oom.read(text)
    ids = {c.id: c.likelihood for c in oom.causes(a, {})}
    assert ids.get("oom.fragmentation") == "possible"


# deepspeed #4571: what the user pasted (the log lines) and what they said.
DS_TEARDOWN = (
    "[INFO] [utils.py:799:see_memory_usage] CPU Virtual Memory: used = 26.4 GB, percent = 84.6%\n"
    "[INFO] [launch.py:315:sigkill_handler] Killing subprocess 1080504"
)


def test_deepspeed_teardown_with_host_ram_nearly_full_is_a_host_kill() -> None:
    (a,) = host_kill.read(DS_TEARDOWN)
    assert a.kind == "host_oom_kill" and a.fields["host_ram_percent"] == 84.6
    d = diagnose(DS_TEARDOWN, lang="en", setup={})
    assert d.causes[0].id == "host.cpu_ram_exhausted"
    assert "84.6%" in d.causes[0].because_en
    assert d.causes[0].card_ids[0] == "mem-host-ram-killed-loading-offload"


def test_a_teardown_with_host_ram_to_spare_is_not_a_host_kill() -> None:
    assert host_kill.read(DS_TEARDOWN.replace("percent = 84.6%", "percent = 31.0%")) == []
    # RAM near full but no teardown: a reading, not a kill.
    assert host_kill.read(DS_TEARDOWN.split("\n")[0]) == []


def test_a_card_that_quotes_the_pasted_error_is_about_it() -> None:
    # embedding_model_exp #3
    text = (
        '  File "/root/miniconda3/envs/e-finetune/lib/python3.9/site-packages/transformers/training_args.py", line 1771,'
        ' in __post_init__\n    raise ValueError("--tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7")\n'
        "ValueError: --tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7"
    )
    messages = error_messages(text)
    assert messages == ["--tf32 requires ampere or a newer gpu arch, cuda>=11 and torch>=1.7"]
    assert quotes_error(CARDS["hw-tf32-requires-ampere"], messages)
    assert not quotes_error(CARDS["hw-bf16-requires-ampere"], messages)
    assert error_messages("RuntimeError: boom") == []  # too short to name an error


def test_the_tf32_error_opens_with_the_tf32_card(bot_without_retrieval: Any) -> None:
    # The retriever finds nothing here, so the order comes from the quoted error alone: the bf16 card, ranked first by
    # retrieval for the real message, is what _quoted_error_first moves past (tested through the assistant's helper).
    bot = bot_without_retrieval
    text = "请问在运行ft_embedding.py时，报如下错误是什么原因呢？\nValueError: --tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7"
    parts = split_message(text)
    setup, _ = read_setup(parts)
    cards = [CARDS["hw-bf16-requires-ampere"], CARDS["hw-tf32-requires-ampere"], CARDS["zero3-saved-weights-empty"]]
    ordered = bot._quoted_error_first(cards, [], text, None, setup, "diagnose")
    assert [c.id for c in ordered[:2]] == ["hw-tf32-requires-ampere", "hw-bf16-requires-ampere"]
    # An error text many cards quote (the CUDA OOM headline) selects none of them.
    oom_text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity"
    assert bot._quoted_error_first(cards, [], oom_text, None, setup, "diagnose") == cards


def test_uneven_memory_across_gpus_opens_with_the_gpu0_causes(bot_without_retrieval: Any) -> None:
    for text in (
        "预训练codeqwen1.5-7b时显存分布异常，训练一段时间后爆OOM\n出现相同情况，一个卡是22g，其余都是10g左右，bitchsize=1",
        "用ptv2微调，多卡跑，为啥第一张卡显存占满了，报oom\n8*v100\nbatch size 1",
    ):
        ans = bot_without_retrieval.ask(text)
        assert ans.act == "diagnose"
        assert ans.sources and ans.sources[0].card_id == "mem-multi-gpu-gpu0-imbalance"
        assert ans.first_screen.startswith("**最可能的原因：DataParallel")


def _results(text: str, lang: str = "en") -> Results:
    parts = split_message(text)
    setup, _ = read_setup(parts)
    return Results(
        lang=lang,  # type: ignore[arg-type]
        act="diagnose",
        setup=setup,
        plan=Plan(),
        calls=[],
        cards=[],
        evidence=read_evidence(text, parts),
    )


def test_what_to_paste_leaves_out_what_the_message_gives() -> None:
    bare = paste_request(_results("OOM"), "memory")
    for item in ("the model and its size", "the method", "micro batch", "sequence length", "the GPU model and count"):
        assert item in bare
    # qlora #184: 30B QLoRA, r=256, 2 x 3090, per-device batch 1 — all stated; ask only for what is not.
    given = _results(
        "OOM on 2x24GB GPU with a 30B model. On a 2x 3090 Ubuntu system, I am trying to run a QLoRA finetune on a 30B "
        "model with a per-device batch size of 1, bf16."
    )
    asked = paste_request(given, "memory")
    assert asked.startswith("To narrow it down, paste: ")
    for item in ("the model and its size", "the method", "micro batch", "precision", "the GPU model and count"):
        assert item not in asked
    assert "sequence length" in asked
    # LLaMA-Factory #7300: GPUs, nodes and the launch command given: no request for them.
    zh = _results(
        "多机多卡训练时卡住，两台机器每台都是8卡a800\n"
        "FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.1.3 MASTER_PORT=29500 llamafactory-cli train x.yaml",
        "zh",
    )
    speed = paste_request(zh, "speed")
    assert "启动命令" not in speed and "GPU 型号和卡数" not in speed and "每步耗时" in speed


def test_an_rl_memory_report_opens_with_its_stage_not_the_one_model_estimate(bot_without_retrieval: Any) -> None:
    # ChatGLM-Efficient-Tuning #111: PPO with LoRA on 8 x A100 40G, max_source_length 256, OOM at 38900MiB.
    ppo = bot_without_retrieval.ask(
        "PPO训练：max_source_length=256能正常训练，此时显存已经占用38900MiB。GPUs: A100(40G)*8，6b模型，lora，"
        "batch_size=1。为什么显存占用这么大呢？训到400+samples就OOM了"
    )
    assert ppo.act == "diagnose"
    assert ppo.sources[0].card_id == "ppo-four-models-memory"
    assert "应能放下" not in ppo.first_screen and "GiB" not in ppo.first_screen.split("\n")[0]
    # ms-swift #7125: GRPO with vLLM colocated; without 'colocate' the vLLM card is not the cause.
    grpo = "Qwen3-235B-A22B GRPO OOM，128卡 H20\n--rlhf_type grpo --use_vllm true --vllm_mode colocate --vllm_gpu_memory_utilization 0.7 --train_type lora"
    ans = bot_without_retrieval.ask(grpo)
    assert ans.sources[0].card_id == "grpo-vllm-colocate-memory"
    plain = bot_without_retrieval.ask(grpo.replace("--vllm_mode colocate ", ""))
    assert not plain.sources or plain.sources[0].card_id != "grpo-vllm-colocate-memory"


def test_memory_that_grew_with_ga_opens_with_what_keeps_each_step_alive(bot_without_retrieval: Any) -> None:
    # jittor #602: an observation, not a question whether GA adds memory.
    seen = bot_without_retrieval.ask(
        "optimize.backward 使用梯度累加显存占用和梯度累加步长成正比，导致显存占用过大无法训练GPT2-XL"
    )
    assert seen.act == "diagnose"
    assert seen.first_screen.startswith("**最可能的原因：有东西让每个微批次的计算图或梯度一直留在显存里")
    assert "loss.item()" in seen.first_screen
    assert "mem-creeping-growth-over-steps" in [s.card_id for s in seen.sources]
    # The question whether it does keeps its verdict.
    asked = bot_without_retrieval.ask("梯度累积步数越大，显存占用越大吗？")
    assert asked.first_screen.startswith("**基本不会")


def test_ga_growth_under_pipeline_parallelism_names_the_pipeline(bot_without_retrieval: Any) -> None:
    # gpt-neox #1123 (its measurements and its question about pipeline parallel values).
    ans = bot_without_retrieval.ask(
        '[BUG?] Higher "gradient_accumulation_steps" still increases memory usage a lot\n\nHello, I am seeing a high '
        "increase in GPU memory usage the larger I make `gradient_accumulation_steps`.\n\ngrad accum -> memory\n"
        "1 -> 54 GB\n2 -> 60.6 GB\n4 -> 70.4 GB\n8 -> OOM\n\nI am using 64 gpus (16 nodes). I am wondering if this "
        "phenomenon depends on the model and pipeline parallel values too?"
    )
    assert ans.act == "diagnose"
    assert ans.first_screen.startswith("**Most likely cause: pipeline parallelism.**")
    assert "FSDP no_sync" not in ans.first_screen.split("\n")[0]


def test_memory_short_next_to_the_gpu_is_an_oom_report() -> None:
    from rag.intents import reports_oom

    # LLaMA-Factory #1970: title and expected behaviour.
    assert reports_oom("RTX4090双卡 Baichuan2-13B-Chat微调内存不足")
    assert reports_oom("每张RTX4090卡，24G显存，但依然提示内存不足")
    # Host RAM: killed, or no GPU in the sentence.
    assert not reports_oom("8卡训练时内存不足被kill")
    assert not reports_oom("加载模型时内存不足，机器只有32G内存")
    assert not reports_oom("双卡训练会不会内存不足？")


def test_a_13b_lora_on_two_4090s_that_runs_short_opens_with_the_estimate(bot_without_retrieval: Any) -> None:
    ans = bot_without_retrieval.ask(
        "RTX4090双卡 Baichuan2-13B-Chat微调内存不足\n```\naccelerate launch src/train_bash.py \\\n    --stage sft \\\n"
        "    --model_name_or_path /root/autodl-tmp/Baichuan2-13B-Chat \\\n    --finetuning_type lora \\\n"
        "    --cutoff_len 1024 \\\n    --gradient_accumulation_steps 4 \\\n    --bf16 True \\\n"
        "    --per_device_train_batch_size 1\n```\n每张RTX4090卡，24G显存，但依然提示内存不足"
    )
    assert ans.act == "diagnose"
    assert ans.first_screen.startswith("**放不下：")
    assert "权重" in ans.first_screen.split("\n")[0]


def test_a_data_amount_is_not_a_model_size() -> None:
    from rag.slots import extract_slots

    # nanotron #204: "When I use a large dataset (~10B tokens), I encounter an NCCL Timeout error."
    assert (
        extract_slots(
            "When I use a large dataset (~10B tokens), I encounter an NCCL Timeout error.", prose=True
        ).num_params
        is None
    )
    assert extract_slots("训练数据 100B token，显存不够", prose=True).num_params is None
    assert extract_slots("pretrain on 10B tokens with a 1B model", prose=True).num_params == 1e9


def test_an_nccl_timeout_at_the_first_collective_is_a_transport_that_does_not_work() -> None:
    # xtuner #792
    text = (
        "[rank1]:[E ProcessGroupNCCL.cpp:523] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
        "OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800013 milliseconds before timing out."
    )
    d = diagnose(text, lang="en", setup={})
    assert d.artifacts[0].kind == "nccl_timeout" and d.artifacts[0].fields["nccl_timeout_min"] == 30.0
    assert d.causes[0].id == "nccl.first_collective" and "SeqNum=1" in d.causes[0].because_en
    # A later collective with nothing else in the paste: no reader cause (the card's straggler explanation opens).
    assert diagnose(text.replace("SeqNum=1", "SeqNum=5121"), lang="en", setup={}).causes == []


def test_an_nccl_timeout_next_to_a_preprocessing_bar_is_that_rank_preprocessing() -> None:
    # nanotron #204
    text = (
        "[default0]:Grouping texts in chunks of 2049:   8%|▊         | 726000/9672101 [02:32<30:38, 4866.01 examples/s]"
        "[default2]:[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600888 milliseconds before timing out."
    )
    d = diagnose(text, lang="zh", setup={})
    assert d.causes[0].id == "nccl.rank_preprocessing"
    assert "Grouping texts in chunks of 2049" in d.causes[0].because_zh and "10 分钟" in d.causes[0].because_zh


def test_a_requires_ampere_error_on_an_ampere_gpu_means_cuda_is_not_visible() -> None:
    # rl-swarm #199: the title prefixes the exception line with "Error: ".
    text = "Error: ValueError: --tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7"
    d = diagnose(text, lang="en", setup={"gpu": "rtx-4090"})
    assert d.causes[0].id == "hw.cuda_not_visible"
    assert "RTX 4090 supports TF32" in d.causes[0].title_en and "torch.cuda.is_available()" in d.causes[0].because_en
    assert d.causes[0].card_ids == ["hw-tf32-requires-ampere"]
    # On a T4 or without a stated GPU the card's own cause stands: no reader cause.
    assert diagnose(text, lang="en", setup={"gpu": "t4"}).causes == []
    assert diagnose(text, lang="en", setup={}).causes == []
    bf16 = "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0"
    assert diagnose(bf16, lang="zh", setup={"gpu": "a100-80gb"}).causes[0].card_ids == ["hw-bf16-requires-ampere"]
    assert diagnose(bf16, lang="zh", setup={"gpu": "rtx-2080ti"}).causes == []
