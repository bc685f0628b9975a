"""Readers added in stop 48, one per class of message the blind23 threads (now dev) showed; each case is the thread's
own wording, cut to the part that matters."""

from __future__ import annotations

from rag import runs
from rag.parts import split_message
from rag.slots import extract_slots
from tests.message_reading import setup_values


def test_a_value_quoted_in_prose_is_read() -> None:
    # Qwen3-VL #2053 lists its settings as inline code; ms-swift #495 quotes its flags' values
    listed = extract_slots("- batch size：`1`\n- grad accum：`4`（也试过1）\n- max length：`8192`\n", prose=True)
    assert (listed.train_micro_batch_size_per_gpu, listed.gradient_accumulation_steps, listed.seq_len) == (1, 4, 8192)
    flags = extract_slots('训练使用的--max_length "8192"，--batch_size "1"', prose=True)
    assert (flags.seq_len, flags.train_micro_batch_size_per_gpu) == (8192, 1)
    # a quoted sentence is no value
    assert extract_slots('the error says "CUDA out of memory"', prose=True).seq_len is None


def test_max_token_len_is_the_sequence_length() -> None:
    # GLM-4 #16
    assert extract_slots("max_token_len=8000, bs=1", prose=True).seq_len == 8000


def test_a_printed_argv_wrapped_by_the_paste_is_one_command() -> None:
    # LLaVA #827: "'no\n'" broke the list, and the flags after it were lost
    text = (
        "```\n[ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train_mem.py', '--local_rank=0', "
        "'--per_device_train_batch_size', '1', '--evaluation_strategy', 'no\n', '--save_strategy', 'steps', "
        "'--learning_rate', '2e-5', '--model_max_length', '2048'] exits with return code = -9\n```"
    )
    assert setup_values(text)["seq_len"] == 2048


def test_whole_model_training_is_a_full_fine_tune() -> None:
    assert extract_slots("我在一个A100 80GB下进行全模型训练，告诉我显存不够", prose=True).finetune == "full"


def test_a_line_of_settings_takes_the_outcome_of_the_line_after_it() -> None:
    # GLM-4 #16: the ChatGLM3 run works, the GLM4 run that follows OOMs
    text = (
        "ChatGLM3的训练参数 ：Qlora(4-bit), max_token_len=32768, bs=1\n这是可以正常训练的，显存仅用了50G\n"
        "但来到了GLM4-9B\n训练参数 ：Qlora(4-bit), max_token_len=8000, bs=1\n这样训练的显存一直OOM"
    )
    choice = runs.choices(text)["seq_len"]
    assert (choice.chosen.value, choice.why) == (8000, "fails")
    # the next line states a value of its own: it reports its own run, not this one
    assert runs.choices("bs=4 on 8 GPUs.\nWith bs=2 it OOMs.")["train_micro_batch_size_per_gpu"].chosen.value == 2


def test_a_size_said_to_be_fine_is_not_the_failing_run() -> None:
    # RWKV-LM #146: "3B是可以的，7B就不行"
    assert (
        setup_values("我试的时候 3B是可以的，7B就不行。\n\n比如我用一张 A100  80G 全量训练7B，报显存不足")["num_params"]
        == 7e9
    )


def test_beside_a_run_that_works_the_other_run_is_asked_about() -> None:
    # ms-swift #2280: one node of 8 works ("正常step不会报错"), two nodes of 16 go wrong
    values = setup_values(
        "单机8卡训练qwen2-vl 7b正常step不会报错，更换2机16卡后，首先是worker机报warning，随后loss突然增大"
    )
    assert (values["world_size"], values["num_nodes"]) == (16, 2)
    # a run on fewer GPUs than the working one is not it
    assert runs.choices("8卡训练正常，我也试了4卡")["world_size"].why == "latest"
    # an error said not to happen is no failure
    assert runs._outcome("正常step不会报错") == "works"
    assert runs._outcome("training runs without errors") == "works"
    assert runs._outcome("这样训练的显存一直OOM") == "fails"


def test_the_cards_a_paper_used_are_not_the_users() -> None:
    # FlagEmbedding #1195: the user has 8 V100 32G; the paper trained on 24 A800
    slots = extract_slots(
        "目前手上有的资源是8张 V100（32G）。使用的基座模型是bge-m3，文中说到使用了24 张A800（80G）进行训练", prose=True
    )
    assert (slots.gpu, slots.gpu_memory_gb) == ("v100-32gb", 32)


def test_a_command_with_chinese_option_values_is_a_command() -> None:
    # ms-swift #1940: `--model_name 哈哈大模型 … --model_author 哈哈哈` kept the launch in prose, so the diagnosis of
    # NPROC_PER_NODE=1 with four visible GPUs never ran
    line = (
        "NPROC_PER_NODE=1 CUDA_VISIBLE_DEVICES=0,1,2,3  swift sft   --model_id_or_path /data/Qwen1.5-14B-Chat "
        "--sft_type lora --max_length 4096 --model_name 哈哈大模型 'HH Large Language Model' --model_author 哈哈哈 hhh "
        "--gradient_accumulation_steps 32 --batch_size 2"
    )
    parts = split_message("微调速度非常慢\n\n请问微调速度变慢跟这两句提醒有关系吗？\n\n" + line)
    assert [p.kind for p in parts] == ["prose", "command"]
    # prose that starts with a launcher's name stays prose
    assert [p.kind for p in split_message("deepspeed 报错：显存不足，怎么办？我用的是四张卡训练模型")] == ["prose"]
    from calculators.diagnose import diagnose

    cause = next(c for c in diagnose(line).causes if c.id == "launch.swift_device_map")
    assert "NPROC_PER_NODE=1" in cause.because_zh and "没有设置" not in cause.because_zh


_LOAD_OOM = (
    'File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 987, in convert\n'
    "    return t.to(device, dtype if t.is_floating_point() or t.is_complex() else None, non_blocking)\n"
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 250.00 MiB (GPU 6; 31.75 GiB total capacity; "
    "30.95 GiB already allocated; 21.75 MiB free; 30.98 GiB reserved in total by PyTorch)"
)


def test_an_oom_while_moving_the_model_to_the_gpu_is_no_batch_problem() -> None:
    # alpaca-rlhf #6 (DeepSpeed-Chat step 3): the traceback ends in Module.to → convert
    from calculators.diagnose import diagnose

    causes = diagnose(_LOAD_OOM).causes
    assert causes[0].id == "oom.at_load"
    assert "oom.model_states" not in [c.id for c in causes]
    # the same message after a forward pass is the usual shortfall
    forward = _LOAD_OOM.replace("in convert", "in forward").replace("return t.to(device", "return F.linear(input")
    assert "oom.model_states" in [c.id for c in diagnose(forward).causes]


def test_an_oom_in_the_optimizer_step_names_the_optimizer() -> None:
    # Qwen3-VL #2053: the first optimizer.step() allocates exp_avg_sq
    from calculators.diagnose import diagnose

    text = (
        'File "/usr/lib/python3/site-packages/torch/optim/adam.py", line 168, in _init_group\n'
        '    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.56 GiB. GPU 0 has a total capacity of 79.10 "
        "GiB of which 2.10 GiB is free. Including non-PyTorch memory, this process has 76.99 GiB memory in use. Of the "
        "allocated memory 74.20 GiB is allocated by PyTorch, and 1.30 GiB is reserved by PyTorch but unallocated."
    )
    causes = diagnose(text, setup={"num_params": 7e9, "finetune": "full"}).causes
    cause = next(c for c in causes if c.id == "oom.optimizer_step")
    assert "52.2 GiB" in cause.because_en  # 8 bytes × 7e9 parameters
    # llama-cookbook #234: the foreach step's temporaries, not "live tensors fill the card, lower the batch"
    foreach = (
        'File "/home/u/.local/lib/python3.11/site-packages/torch/optim/adamw.py", line 599, in _multi_tensor_adamw\n'
        "    exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)\n"
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 98.00 MiB. GPU 5 has a total capacty of "
        "15.77 GiB of which 5.12 MiB is free. Including non-PyTorch memory, this process has 15.76 GiB memory in use. "
        "Of the allocated memory 13.76 GiB is allocated by PyTorch, and 540.64 MiB is reserved by PyTorch but "
        "unallocated."
    )
    ids = [c.id for c in diagnose(foreach).causes]
    assert ids[0] == "oom.optimizer_step" and "oom.model_states" not in ids
    # tigerbot via DAMO-ConvAI #135: the frame pasted below the message; the 16.5 GiB request is no logits guess
    below = (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.53 GiB (GPU 1; 79.15 GiB total "
        "capacity; 74.40 GiB already allocated; 4.02 GiB free; 74.41 GiB reserved in total by PyTorch)\n"
        "    state['exp_avg_sq'] = torch.zeros_like(p, memory_format=torch.preserve_format)\n"
    )
    ids = [c.id for c in diagnose(below).causes]
    assert ids[0] == "oom.optimizer_step" and "oom.huge_request" not in ids


def test_conditions_expectations_and_questions_are_no_outcomes() -> None:
    # LLaMA-Factory #10175: "只有…才不会OOM" is a condition, not a run that works
    assert runs._outcome("只有gradient accumulation step小于64才不会OOM") == "fails"
    # DeepSpeed #3659: an expectation
    assert runs._outcome("I should have no problem running on 4 V100") != "works"
    # GLM-4 #321: "would 4 cards fail too?" is no run on 4 cards
    assert "world_size" not in runs.candidates("我4张40g的卡 batch 为1也会报错吗？")
    # METER #30: the question after a line of settings says nothing of how that run went
    found = runs.candidates("if I set num_gpus=1 num_nodes=1\nIs there any suggestion for this problem?")["world_size"]
    assert found[0].outcome is None


def test_an_oom_in_the_evaluation_loop_points_at_evaluation() -> None:
    from calculators.diagnose import diagnose

    text = (
        'File "/usr/local/lib/python3.10/site-packages/transformers/trainer.py", line 3203, in evaluation_loop\n'
        "    losses, logits, labels = self.prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys)\n"
        'File "/usr/local/lib/python3.10/site-packages/transformers/trainer.py", line 3470, in prediction_step\n'
        "    outputs = model(**inputs)\n"
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.81 GiB (GPU 0; 79.15 GiB total capacity; "
        "70.11 GiB already allocated; 5.20 GiB free; 72.80 GiB reserved in total by PyTorch)"
    )
    assert diagnose(text).causes[0].id == "oom.at_eval"


def test_the_lora_rank_of_the_failing_run_is_the_one_asked_about() -> None:
    # GLM-4 #16: ChatGLM3 with rank=256 trains, GLM4-9B with rank=16 OOMs
    values = setup_values(
        "ChatGLM3的训练参数 ：Qlora(4-bit), rank=256, max_token_len=32768, bs=1\n这是可以正常训练的，显存仅用了50G\n"
        "但来到了GLM4-9B\n训练参数 ：Qlora(4-bit), rank=16, max_token_len=8000, bs=1\n这样训练的显存一直OOM"
    )
    assert (values["lora_rank"], values["seq_len"]) == (16, 8000)


def test_an_oom_the_user_places_in_validation_points_at_evaluation() -> None:
    # mmsegmentation #2108: no traceback, the user's words say where
    from calculators.diagnose import diagnose

    oom = (
        "RuntimeError: CUDA out of memory. Tried to allocate 8.67 GiB (GPU 0; 23.70 GiB total capacity; 9.21 GiB "
        "already allocated; 4.45 GiB free; 17.61 GiB reserved in total by PyTorch)"
    )
    said = "The training is ok, but cuda out of memory will appear during the validation process."
    cause = diagnose(oom, context=said).causes[0]
    assert cause.id == "oom.at_eval" and cause.because_en.startswith("You say")
    assert diagnose(oom, context="验证阶段显存不足，训练是正常的").causes[0].id == "oom.at_eval"
    # an OOM in training, with evaluation mentioned as fine, is not placed there
    assert diagnose(oom, context="OOM at step 10 of training; evaluation is fine.").causes[0].id != "oom.at_eval"
    assert diagnose(oom, context="It is OOM in training, not in evaluation.").causes[0].id != "oom.at_eval"


def test_the_eval_cause_cites_the_trainer_card_only_for_the_trainers_loop() -> None:
    from calculators.diagnose import diagnose

    oom = (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.81 GiB (GPU 0; 79.15 GiB total capacity; "
        "70.11 GiB already allocated; 5.20 GiB free; 72.80 GiB reserved in total by PyTorch)"
    )
    trainer = 'File "/x/transformers/trainer.py", line 3203, in evaluation_loop\n    losses = 1\n' + oom
    lightning = 'File "/x/lightning/loops.py", line 90, in validation_step\n    out = self.model(x)\n' + oom
    assert diagnose(trainer).causes[0].card_ids[0] == "mem-eval-oom-accumulated-logits"
    assert diagnose(lightning).causes[0].card_ids[0] == "eval-oom-custom-loop-no-grad"
