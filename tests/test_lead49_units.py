"""Readers added in stop 49, one per class of message the blind24 threads (now dev) showed; each case is the thread's
own wording, cut to the part that matters."""

from __future__ import annotations

from calculators.configs import parse_config
from calculators.diagnose import detect_artifacts
from calculators.shell import shell_variables
from rag.slots import extract_printed, extract_slots
from tests.message_reading import setup_values


def test_a_stage_glued_to_zero_is_no_count_of_training_gpus() -> None:
    # DeepSpeed #1174: "I was using ZeRO3 for training" beside "8xA100"
    text = "I was using ZeRO3 for training a bert model.\n* Hardware platform: 8xA100+nvlink (aws, p4d instance)"
    assert setup_values(text)["world_size"] == 8
    # a count of the GPUs that train still is one
    assert setup_values("I have 8 GPUs: 6 for training and 2 for vLLM.")["world_size"] == 6


def test_a_length_written_as_a_product_with_1024() -> None:
    # unsloth #1291
    assert extract_slots("llama3.1-1B with a max_sequence_length of 128 * 1024 tokens").seq_len == 131072
    assert extract_slots("Qwen2.5-Coder-0.5B with a max_seq_length of 64 * 1024 tokens.").seq_len == 65536
    assert extract_slots("max_seq_length=8 * 1024").seq_len == 8192
    # a product with something else is not a length
    assert extract_slots("seq_len 2048 x 4 GPUs").seq_len == 2048


def test_a_variable_set_in_the_prose_reaches_the_launch_command() -> None:
    # LLaMA-Factory #2374: the device list in a variable, the launcher's --include names it
    text = (
        "### Reproduction\n\nCUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n\nlr=5e-5\n\n"
        "deepspeed --include localhost:$CUDA_VISIBLE_DEVICES src/train_bash.py \\\n    --deepspeed ds.json \\\n"
        "    --per_device_train_batch_size 4 \\\n    --gradient_accumulation_steps 4 \\\n    --fp16\n"
    )
    assert setup_values(text)["world_size"] == 8
    assert shell_variables("A=1\nexport B=0,1\n  C=x  \nnot D=2") == {"A": "1", "B": "0,1", "C": "x"}
    (launch,) = [a for a in detect_artifacts("deepspeed --include localhost:$GPUS train.py", {"GPUS": "0,1"})]
    assert launch.fields["world_size"] == 2
    # an unknown variable is no count: the config doctor's flag reader says it cannot tell
    parsed = parse_config("deepspeed --include localhost:$CUDA_VISIBLE_DEVICES train.py --deepspeed ds.json")
    assert parsed.world_size is None


def test_parallel_degrees_written_as_n_way() -> None:
    # torchtitan #735
    slots = extract_slots("GPU: 8x GPU\nDDP: 4-way Tensor Parallel * 2-way FSDP", prose=True)
    assert (slots.tensor_parallel_size, slots.world_size) == (4, 8)
    assert extract_slots("we train with 8-way pipeline parallelism", prose=True).pipeline_parallel_size == 8
    assert extract_slots("a 4-way data parallel run", prose=True).tensor_parallel_size is None


def test_memory_peaks_printed_by_ms_swift_and_by_memory_summary() -> None:
    # ms-swift #4191: the log's running peak grows from 63.16 to 73.75 across excerpts
    line = "{{'loss': 0.22, 'grad_norm': 1.3, 'memory(GiB)': {}, 'train_speed(iter/s)': 0.011}}"
    assert extract_printed(line.format(63.16) + "\n" + line.format(73.75)).observed_memory_gb == 73.75
    text = "dpo训练，显存逐渐增加\n```\n" + line.format(63.16) + "\n```\n[…]\n```\n" + line.format(73.75) + "\n```\n"
    assert setup_values(text)["observed_memory_gb"] == 73.75
    # torchtitan #735: torch.cuda.memory_summary()'s peak allocated
    summary = (
        "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n"
        "|---------------------------------------------------------------------------|\n"
        "| Allocated memory      |  13975 MiB |  18803 MiB |   2142 GiB |   2128 GiB |\n"
    )
    assert extract_printed(summary).observed_memory_gb == 18.36


def test_a_card_size_asked_whether_it_suffices() -> None:
    # llama3-Chinese-chat #28
    assert (
        extract_slots("请问微调llama3-8B-Instruct模型需要多大的显存呢\nfp16精度下20G也能够吗", prose=True).gpu_memory_gb
        == 20
    )
    assert extract_slots("How much vram needed to finetune 3b model? Is 12gb enough?", prose=True).gpu_memory_gb == 12
    assert extract_slots("24G能跑吗", prose=True).gpu_memory_gb == 24
    # XrayGLM #32: two sizes asked in turn, the first is the one to answer
    assert extract_slots("请问微调硬件最低要求为多大呢？12G / 24G够吗？", prose=True).gpu_memory_gb == 12
    # memory in use asked about is not the card's size
    used = extract_slots("训练占用了20G够吗", prose=True)
    assert (used.gpu_memory_gb, used.observed_memory_gb) == (None, 20)


_OOM_LINE = (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 502.00 MiB (GPU 0; 79.15 GiB total capacity; "
    "77.62 GiB already allocated; 311.25 MiB free; 78.01 GiB reserved in total by PyTorch)"
)


def test_an_oom_in_the_save_points_at_the_save() -> None:
    # peft #447 (trimmed; its message line is cut in the thread): the Trainer's _save_checkpoint calls state_dict()
    from calculators.diagnose import diagnose

    trace = (
        'File "/usr/local/lib/python3.8/dist-packages/transformers/trainer.py", line 2291, in _maybe_log_save_evaluate\n'
        "    self._save_checkpoint(model, trial, metrics=metrics)\n"
        'File "/usr/local/lib/python3.8/dist-packages/transformers/trainer.py", line 2348, in _save_checkpoint\n'
        "    self.save_model(output_dir, _internal_call=True)\n"
        'File "/torch/nn/modules/module.py", line 1815, in state_dict\n'
        "    self._save_to_state_dict(destination, prefix, keep_vars)\n"
    )
    causes = diagnose(trace + _OOM_LINE).causes
    assert causes[0].id == "oom.at_save" and causes[0].card_ids[0] == "oom-at-checkpoint-save"
    assert "oom.model_states" not in [c.id for c in causes]
    # the same loop's evaluation is still evaluation
    evaluation = trace.replace("_save_checkpoint", "evaluate").replace("save_model", "evaluation_loop")
    evaluation = evaluation.replace("in state_dict", "in forward").replace("self._save_to_state_dict", "outputs = m")
    assert diagnose(evaluation + _OOM_LINE).causes[0].id == "oom.at_eval"


def test_an_oom_the_user_places_in_the_save_points_at_the_save() -> None:
    from calculators.diagnose import diagnose

    # ChatGLM-Tuning #191; Chinese-LLaMA-Alpaca-2 #283
    for said in (
        "16G*2的显存，训练时候没有报OOM，model.save_pretrained(training_args.output_dir)保存模型的时候报了",
        "模型精调训练完成，但是在保存的那一步出现OOM错误",
        "Training finishes, then I get CUDA out of memory while saving the model.",
    ):
        cause = diagnose(_OOM_LINE, context=said).causes[0]
        assert cause.id == "oom.at_save", said
    assert diagnose(_OOM_LINE, context="OOM during gradient checkpointing").causes[0].id != "oom.at_save"
    assert diagnose(_OOM_LINE, context="the OOM is not while saving the model").causes[0].id != "oom.at_save"


def test_the_save_card_needs_a_message_that_names_saving() -> None:
    from rag.cards import load_cards
    from rag.citing import model_family_conflict, save_conflict
    from tests.message_reading import read_message

    cards = {c.id: c for c in load_cards()}
    save = cards["oom-at-checkpoint-save"]
    # accelerate #1280: an FSDP OOM whose config says FULL_STATE_DICT, but nothing is being saved
    asked, _ = read_message(
        "I train a 4B gpt2 model in device1 and device2, OOM.\nfsdp_state_dict_type: FULL_STATE_DICT"
    )
    assert save_conflict(save, asked)
    # a command's save_steps and "save memory" name no save
    asked, _ = read_message("ZeRO-2 to save memory, OOM at step 3\n--save_steps 500 --save_total_limit 2")
    assert save_conflict(save, asked)
    for text in (
        "16G*2的显存，训练时候没有报OOM，model.save_pretrained保存模型的时候报了",
        "OOM after the last epoch while saving the model",
        'File "trainer.py", line 2348, in _save_checkpoint\ntorch.cuda.OutOfMemoryError: CUDA out of memory.',
    ):
        assert not save_conflict(save, read_message(text)[0]), text
    # the evaluation and memory-saving cards are not saving cards
    assert not save_conflict(cards["lora-zero-stage-choice"], read_message("LoRA OOM")[0])
    # the Qwen3.5 / Qwen3-Next card answers only messages naming those models or their kernels
    linear = cards["linear-attention-models-slow-fallback"]
    assert model_family_conflict(linear, read_message("gemma3-27b lora 双卡训练非常慢")[0])
    assert not model_family_conflict(linear, read_message("Qwen3.5-27B训练非常慢")[0])
    assert not model_family_conflict(linear, read_message("使用swift训练qwen3_next，效率很低")[0])
    assert not model_family_conflict(cards["training-speed-mfu"], read_message("gemma3 训练慢")[0])
