"""Which model a message is about when its prose names it only by a file it runs and a pasted config names it by
``model_name_or_path`` (LLaMA-Factory's example yamls, their ``dataset:`` and ``template:`` keys): the config's model.

The messages have the shape users paste on trackers: a sentence naming the example yaml, then the yaml.
"""

from __future__ import annotations

from rag.parts import split_message
from rag.setup import read_setup
from rag.slots import extract_slots

YAML = """### model
model_name_or_path: /data/models/Qwen2.5-7B-Instruct/
### method
stage: sft
finetuning_type: lora
### dataset
dataset: identity,alpaca_en_demo
template: qwen
cutoff_len: 2048
"""


def _model(text: str) -> dict[str, object]:
    setup, _ = read_setup(split_message(text))
    return {k: setup.get(k) for k in ("model_text", "model", "num_params") if setup.has(k)}


def test_a_file_name_in_the_prose_loses_to_the_configs_model() -> None:
    got = _model("运行示例文件llama3_lora_sft.yaml，显存不够：\n```yaml\n" + YAML + "```")
    # the folder's trailing slash is no reason to lose the name
    assert got["model_text"] == "Qwen2.5-7B-Instruct" and got["model"] == "qwen2.5-7b", got


def test_a_file_name_alone_still_names_the_model() -> None:
    assert extract_slots("I ran llama3_lora_sft.yaml and it went OOM").model_text is not None


def test_a_dataset_names_no_model() -> None:
    assert extract_slots("dataset: identity,alpaca_en_demo\nfinetuning_type: lora").model_text is None
    assert extract_slots("--dataset alpaca_gpt4_en --per_device_train_batch_size 2").model_text is None
    assert extract_slots("I fine-tune alpaca 7b on one GPU").model_text == "alpaca 7b"  # a model, not a dataset key
