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
        # verl / Hydra overrides: dotted keys, GPUs set per node
        (
            "python3 -m verl.trainer.main_ppo trainer.nnodes=2 trainer.n_gpus_per_node=8 data.train_batch_size=256",
            16,
            2,
        ),
        ("(Assuming that trainer.nnodes = 3 and trainer.gpus_per_node = 1) what is the actual batch size?", 3, 3),
        ("torchrun --nnodes 2 --nproc_per_node 8 finetuning.py --enable_fsdp", 16, 2),
        ("a Reformer with 768 nodes per layer trained on 8xV100", 8, None),  # a layer's units, not machines
        # one product: nodes x GPUs per node x the GPU (llama-factory discussions write "3*8*A100 (40G)")
        ("Is it possible to fine tune the llama-2-70B for a 3*8*A100 (40G) configuration?", 24, 3),
        ("We train on 2x8xH100 with micro batch 4", 16, 2),
        ("batch 4 x 8 x 2048 tokens on one GPU", 1, None),  # a product of sizes, not of machines
        # Slurm: `--ntasks-per-node` / `--gpus-per-node` count per node, `--nodes` the machines (xtuner's srun lines)
        ("srun -p $PARTITION --nodes=2 --gres=gpu:8 --ntasks-per-node=8 xtuner train cfg --launcher slurm", 16, 2),
        ("#SBATCH --nodes=4\n#SBATCH --gpus-per-node=8\nsrun python train.py", 32, 4),
    ],
)
def test_nodes_and_gpus(message: str, world_size: int, nodes: int | None) -> None:
    setup, _ = read_setup(split_message(message))
    assert (setup.get("world_size"), setup.get("num_nodes")) == (world_size, nodes)


def test_llama_recipes_batch_size_training_is_the_per_gpu_batch() -> None:
    """llama-recipes' `--batch_size_training` is each GPU's batch (its train config's `batch_size_training`)."""
    setup, _ = read_setup(
        split_message("torchrun --nnodes 2 --nproc_per_node 8 finetuning.py --batch_size_training 16")
    )
    assert setup.get("train_micro_batch_size_per_gpu") == 16


def test_a_dotted_key_of_a_rollout_section_is_not_the_training_batch() -> None:
    from rag.slots import classify_key

    assert classify_key("actor.ppo_micro_batch_size_per_gpu") == "train_micro_batch_size_per_gpu"
    assert classify_key("rollout.log_prob_micro_batch_size_per_gpu") is None
    assert classify_key("trainer.nnodes") == "num_nodes"


@pytest.mark.parametrize(
    ("message", "world_size"),
    [
        # espnet #1489: the recipe's count is not the user's
        ("current default recipe requires 4 gpus. if you do not have 4 gpus, reconfigure. If I only have one gpu?", 1),
        ("官方说需要8卡，我只有2张卡怎么办", 2),
        ("The README uses 8 GPUs but I have 2 GPUs. What GA should I use?", 2),
        ("the recipe requires 4 gpus, what GA should I set?", 4),  # the only count written
        ("8卡A100训练，为什么OOM", 8),
    ],
)
def test_the_users_own_gpu_count_wins_over_a_required_one(message: str, world_size: int) -> None:
    setup, _ = read_setup(split_message(message))
    assert setup.get("world_size") == world_size
