"""How "N机M卡" / "N nodes M GPUs" become a GPU count: M is per node unless it is above a node's usual 8.

Real usage differs by number: "双机16卡" is 16 GPUs in all (LLaMA-Factory #4916, "单机八卡和双机16卡", two 8-GPU
nodes), while "2机8卡" is two 8-GPU nodes (LLaMA-Factory #7066: the model was to be cut into 16 shards).
"""

from __future__ import annotations

import pytest

from rag.parts import split_message
from rag.setup import read_setup


@pytest.mark.parametrize(
    ("message", "world_size", "nodes"),
    [
        ("我们用两机16卡训练 qwen 7b，zero3，为什么OOM", 16, 2),
        ("4机32卡训练llama", 32, 4),
        ("使用deepspeed进行2机8卡训练时，怎么把模型切成16份呢？", 16, 2),
        ("两台机器，每台8张A100", 16, 2),
        ("2 nodes x 16 GPUs", 32, 2),  # "x" makes 16 a per-node count
        ("2 nodes with 8 GPUs each", 16, 2),
        ("单机8卡训练", 8, 1),
        ("两台机器就卡在这里不动了，每台机器都是8卡a800，并且单独单机多卡可以训练", 16, 2),  # count said per node
        ("we have 2 nodes; each node has 8 GPUs", 16, 2),
        ("2个节点，共16卡", 16, 2),
    ],
)
def test_nodes_and_gpus(message: str, world_size: int, nodes: int) -> None:
    setup, _ = read_setup(split_message(message))
    assert (setup.get("world_size"), setup.get("num_nodes")) == (world_size, nodes)
