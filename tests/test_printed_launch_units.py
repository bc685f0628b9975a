"""Setup values in what a dying run prints: the launch command as an argv list, NCCL's communicator size.

Real prints: DeepSpeed's launcher ends a failed run with
``[launch.py:321:sigkill_handler] ['/opt/conda/bin/python', '-u', 'main.py', '--local_rank=2', …]`` (Yi #163 pastes
one, cut off before its closing bracket); subprocess's ``CalledProcessError: Command '['/usr/bin/python', …]'
returned non-zero exit status 1``; NCCL's ``NCCL INFO comm 0x9658a90 rank 2 nranks 3 cudaDev 2 busId 63000``.
"""

from __future__ import annotations

from rag.parts import split_message
from rag.setup import read_setup

_SIGKILL = """34B 训练 OOM，正常吗？
```
torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.42 GiB. GPU 2 has a total capacty of 79.15 GiB of which 3.28 GiB is free.
172-24-138-192:28:28 [2] NCCL INFO comm 0x9658a90 rank 2 nranks 3 cudaDev 2 busId 63000 - Abort COMPLETE
[2023-11-23 15:32:12,549] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 28
[2023-11-23 15:32:12,549] [ERROR] [launch.py:321:sigkill_handler] ['/opt/conda/bin/python', '-u', 'main.py', '--local_rank=2', '--data_path', '/data/yi_example_dataset', '--model_name_or_path', '/models/Yi-34B', '--per_device_train_batch_size', '1', '--max_seq_len', '4096', '--learning_rate', '2e-6'
```"""


def test_argv_list_in_a_log_is_read_as_the_launch_command() -> None:
    setup, _ = read_setup(split_message(_SIGKILL))
    assert setup.get("train_micro_batch_size_per_gpu") == 1
    assert setup.get("seq_len") == 4096
    assert setup.get("model") == "yi-34b"
    assert setup.source("train_micro_batch_size_per_gpu") in ("log", "error")
    # "yi_example_dataset" holds "amp" but names no precision: none is read
    assert setup.get("precision") is None


def test_nccl_communicator_size_is_the_process_count() -> None:
    setup, _ = read_setup(split_message(_SIGKILL))
    assert setup.get("world_size") == 3


def test_called_process_error_command() -> None:
    message = (
        'Training dies at once:\n```\nTraceback (most recent call last):\n  File "x.py", line 1, in <module>\n'
        "subprocess.CalledProcessError: Command '['/usr/bin/python3', '-u', 'train.py', '--local_rank=0', "
        "'--per_device_train_batch_size', '8', '--gradient_accumulation_steps', '4', '--bf16']' returned non-zero "
        "exit status 1.\n```"
    )
    setup, _ = read_setup(split_message(message))
    assert setup.get("train_micro_batch_size_per_gpu") == 8
    assert setup.get("gradient_accumulation_steps") == 4


def test_a_list_of_plain_words_is_no_command() -> None:
    message = "```\nlabels: ['cat', 'dog', 'bird', 'fish', 'cow']\nRuntimeError: CUDA error\n```"
    setup, _ = read_setup(split_message(message))
    assert setup.get("train_micro_batch_size_per_gpu") is None
