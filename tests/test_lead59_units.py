"""Readers from blind34's misses (stop 59), each on the user's own words from the thread it came from."""

from __future__ import annotations

from rag.acts import rule_act
from rag.parts import split_message
from rag.setup import read_setup
from tests.message_reading import setup_values


def test_a_bare_mixed_precision_takes_the_type_a_pasted_flag_names() -> None:
    # PaddleDetection #6880: "混合精度" in the prose, `--amp` in the launch command: one setting, not a conflict
    setup, _ = read_setup(
        split_message(
            "问题1：混合精度和正常多卡训练有什么区别吗\n"
            "```\npython -m paddle.distributed.launch --gpus 0,1,2,3,4,5,6,7 tools/train.py "
            "-c configs/ppyoloe/ppyoloe_plus_crn_s_80e_coco_HiXray.yml --eval --amp\n```"
        )
    )
    assert setup.get("precision") == "amp-fp16"
    assert "precision" not in setup.conflicts
    # a type the prose names and the command contradicts is still shown as a conflict
    setup, _ = read_setup(split_message("I use bf16 mixed precision.\n```\npython train.py --fp16\n```"))
    assert setup.conflicts.get("precision")


def test_a_size_with_its_decimal_after_the_unit() -> None:
    # RWKV-LM #117: "RWKV 1B5" is 1.5B; the name stays as written
    assert setup_values("I try to finetune the RWKV 1B5 model using this cmd")["num_params"] == 1.5e9
    values = setup_values("model_name_or_path: bigscience/bloom-7b1")
    assert values["num_params"] == 7.1e9
    assert values["model_text"] == "bloom-7b1"
    # a UUID's piece and Huawei's Ascend NPU are no size
    assert "num_params" not in setup_values("![img](https://x/assets/0271858f-c0b6-41b2-b027-db709926d)")
    assert "num_params" not in setup_values("用的是 NPU 910B3 训练")


def test_a_reward_model_told_in_prose_is_not_the_run_s_model() -> None:
    # ChatBLOOM #4: the 3B llama is trained; bloom-1b7-rm is only the reward model
    values = setup_values(
        "I tried to perform sft and ppo on a 3b llama model on 4xA100 (40g). In ppo stage (using bloom-1b7-rm as "
        "reward model), I always got OOM errors"
    )
    assert values["num_params"] == 3e9


def test_a_typo_of_batchsize() -> None:
    # yolov5_obb #439: "banchsize 48"
    assert setup_values("GPU：一张 3090  24G\nyolov5n模型\nbanchsize 48")["train_micro_batch_size_per_gpu"] == 48


def test_one_machine_s_gpus_are_no_count_of_machines() -> None:
    # moco #98: "256 batch size on 8-gpu machine"
    values = setup_values("lr=0.03 is for 256 batch size on 8-gpu machine")
    assert values["world_size"] == 8
    assert "num_nodes" not in values
    assert setup_values("we train on 2 nodes with 8 GPUs each")["num_nodes"] == 2


def test_a_per_gpu_count_times_the_gpus_makes_the_bare_batch_a_total() -> None:
    # mmdetection #3240: "2imgs/gpu, 8gpus, batchsize=16"
    values = setup_values("1)  2imgs/gpu, 8gpus, batchsize=16, lr = 0.02")
    assert values["train_micro_batch_size_per_gpu"] == 2
    assert values["train_batch_size"] == 16
    # a bare batch that is no such product stays the micro batch
    assert setup_values("batch size 16 on 8 GPUs")["train_micro_batch_size_per_gpu"] == 16
    # two per-GPU counts (training, validation) are no total (mmsegmentation #2108)
    values = setup_values("i use 4 gpus, 8 samples per gpu in training is ok, but 2 samples per gpu in validation")
    assert values["train_micro_batch_size_per_gpu"] == 8
    assert "train_batch_size" not in values


def test_how_many_gpus_someone_else_s_run_used_is_no_fit_question() -> None:
    # mmsegmentation #198, mmpretrain #371, espnet #2772
    for text in (
        "My question: How many gpus and how many images per gpu are used to train the provided checkpoints?",
        "In the results I can see mention of 8x V100; how many GPUs were they run on?",
        "Does it mean we always use the 32 sentences for training no matter how many GPUs I used?",
    ):
        assert rule_act(split_message(text)) != "fit", text
    assert rule_act(split_message("How many GPUs do I need to fine-tune llama 7b?")) == "fit"


def test_a_hang_with_its_memory_still_held_is_about_the_hang() -> None:
    # GANet #44: "跑几个iter就卡住（显存仍然占用，但什么反应都没有）… 请问是怎么回事"
    from rag.evidence import symptom_family
    from rag.opening import read_asked

    text = (
        "sync_bn\n\n作者你好，我正在我的一个立体匹配的工程里用sync_bn。但是在使用syncbn的时候跑总是跑几个iter就卡住"
        "（显存仍然占用，但什么反应都没有），我现在的环境是ubuntu+RTX 2080Ti+cuda10，请问是怎么回事"
    )
    assert symptom_family(text) == "speed"
    assert read_asked(text, split_message(text)).family == "speed"
    # an OOM is still a memory symptom, hang words or not
    assert symptom_family("训练卡住然后报 CUDA out of memory") == "memory"


def test_a_large_variant_of_a_vision_network_is_no_language_model() -> None:
    # BEVDet #249: "关于大模型BEVDet-base训练显存 … bevdet-tiny （256*704， swin-t）"
    from rag.network_kind import names_non_llm_network

    assert names_non_llm_network(
        "关于大模型BEVDet-base训练显存\n我在训练bevdet-tiny （256*704， swin-t）时每张3090只能放到4"
    )
    assert not names_non_llm_network("大模型微调需要多少显存")


def test_a_log_s_batch_counter_sets_no_batch() -> None:
    # PaddleSpeech #384: "epoch: 0, batch: 35100, train loss: 13.707798" beside `--batch_size=8`
    assert "train_micro_batch_size_per_gpu" not in setup_values("epoch: 0, batch: 35100, train loss: 13.707798")
    assert "train_micro_batch_size_per_gpu" not in setup_values("Epoch 3, batch: 120/500")
    assert setup_values("batch=16 and the loss is nan")["train_micro_batch_size_per_gpu"] == 16


def test_older_consumer_cards_are_read_with_their_memory() -> None:
    # keras_Realtime_Multi-Person_Pose_Estimation #52: "I have tried on gtx 970 and run out of all 4GB"
    from calculators.presets import GPU_PRESETS

    for text, preset, gib in (
        ("I have tried on gtx 970 and run out of all 4GB", "gtx-970", 4),
        ("[Platform] GTX TITAN X (12G), CUDA-7.5", "gtx-titan-x", 12),
        ("GPU: GTX 1660 SUPER", "gtx-1660", 6),
        ("显卡是 gtx1050ti", "gtx-1050ti", 4),
        ("one RTX 2060 super", "rtx-2060-super", 8),
    ):
        assert setup_values(text)["gpu"] == preset, text
        assert GPU_PRESETS[preset].memory_gib == gib
        assert not GPU_PRESETS[preset].bf16
    assert setup_values("a TITAN Xp")["gpu"] == "titan-xp"


def test_host_ram_at_load_without_a_gpu_count_is_per_process() -> None:
    # Yi #255: "34b lora加载模型的时候需要多少内存 … 机器有314G内存，在载入模型那一步就内存不够了" (no GPU count)
    from calculators import host_ram_at_load

    one = host_ram_at_load(34e9, host_ram_gb=314)
    assert one.processes_per_node is None
    assert one.copy_fp32_bytes == 4 * 34e9 and one.copy_16bit_bytes == 2 * 34e9
    text = one.to_markdown("en")
    assert "126.7 GiB per process in fp32" in text and "processes per node" not in text
    # with a stated count, the node's figure multiplies
    assert host_ram_at_load(34e9, 8).node_fp32_bytes == 8 * 4 * 34e9


def test_two_runs_with_the_same_total_keep_the_learning_rate() -> None:
    # mmdetection #3240: 2 per GPU on 8 GPUs and 16 per GPU on 1 GPU are both a batch of 16
    from rag.lr_change import read_lr_change

    change = read_lr_change(
        "About scaling lr according batchsize, I have a litte qusetion.\n"
        "1)  2imgs/gpu, 8gpus, batchsize=16, lr = 0.02\n"
        "2)  16imgs/gpu, 1gpu, batchsize=16, whether the lr should also be 0.02?"
    )
    assert change is not None and change.basis == "kept" and change.base_learning_rate == 0.02
    # the same GPU counts without per-GPU counts that make up the batch: the global batch is unknown
    change = read_lr_change("8 GPUs, batchsize=16, lr = 0.02\n1 GPU, batchsize=16, should the lr also be 0.02?")
    assert change is None or change.basis != "kept"


def test_more_cards_expected_to_save_memory_is_the_pooling_belief() -> None:
    # CWSAM #11: "即便我设置了4块卡进行训练，依然会报显存不足的错误 … 我并没有节省显存资源"
    from rag.intents import detect_misconceptions

    text = (
        "继续使用单卡会爆显存，于是我设置 4 卡进行分布式训练。然而，我发现每张显卡都具有相同的显存占用。也就是说即便我设置了"
        "4块卡进行训练，依然会报显存不足的错误。我并没有节省显存资源"
    )
    assert "more_gpus_pool_memory" in [m.key for m in detect_misconceptions(text)]
    assert not detect_misconceptions("单卡训练显存不足，batch 调到 1 也不行")
