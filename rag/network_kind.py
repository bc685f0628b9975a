"""Whether a message is about a network the memory calculators do not model: a detector, a segmenter, a GAN, a pose
or speech model — not a language model sized by its parameter count and sequence length.

The calculators estimate a transformer language model from its parameters, method, precision, micro batch and
sequence length. For "what's the minimum GPU memory for training the model? I have tried on gtx 970 and run out of
all 4GB" (keras_Realtime_Multi-Person_Pose_Estimation #52) asking for "the method (full/LoRA/QLoRA) and sequence
length" is the wrong question: the answer there is to measure the per-sample cost and lower the batch (what the
thread's reply says). Diffusion runs have their own card (rag.compose._OWN_MEMORY_STACKS) and are not read here.
"""

from __future__ import annotations

import re

#: Networks and tasks of vision and speech training repositories, as their users name them.
_NON_LLM = re.compile(
    r"yolo\w*|detectron\w*|mmdet\w*|mmseg\w*|mmcv|faster[-_ ]?r-?cnn|mask[-_ ]?r-?cnn|retina[-_ ]?net|\bssd\b|"
    r"resnet\w*|\bu-?net\b|\bunet\b|\bcnn\b|卷积|segmentation|object detection|detector|pose[-_ ]?estimation|"
    r"stylegan\w*|cyclegan|pix2pix|\bgan\b|denois\w*|super[-_ ]?resolution|re-?id\b|tracking|"
    # (3D and bird's-eye-view detection, transformer backbones and detectors: BEVDet #249 "bevdet-tiny（256*704， swin-t）")
    r"bevdet\w*|bevformer|\bbev\b|mmdet3d|point[-_ ]?cloud|swin\b|swin[-_]|\bdetr\b|deeplab\w*|hrnet\w*|\bfcos\b|"
    r"centernet|panoptic|paddleseg|paddledetection|pp-?liteseg|"
    r"目标检测|检测模型|检测网络|分割|姿态|超分|去噪|重识别|跟踪|图像分类|点云|"
    r"\basr\b|\btts\b|speech|语音|espnet|wenet|icefall|tacotron|\bvits\b|conformer|wav2vec|hubert",
    re.I,
)
#: … and what names a language model (or fine-tuning one) anywhere in the message.
_LLM = re.compile(
    r"\bllms?\b|大模型|语言模型|language model|\btokens?\b|\blora\b|qlora|\bpeft\b|\bsft\b|llama|qwen|glm|baichuan|"
    r"mistral|mixtral|\bgpt|bloom|falcon|internlm|deepseek|gemma|\bphi-?\d|\bt5\b|bert|diffus|扩散|"
    r"(?<![\d.])\d+(?:\.\d+)?\s*[bB]\b",
    re.I,
)


def names_non_llm_network(text: str) -> bool:
    """Whether ``text`` names a vision or speech network or task and nothing of a language model."""
    # ("关于大模型BEVDet-base训练显存", BEVDet #249: "大模型" is the large variant of the network it names, no LLM)
    text = re.sub(r"大模型(?=\s*(?:" + _NON_LLM.pattern + "))", "", text, flags=re.I)
    return bool(_NON_LLM.search(text)) and not _LLM.search(text)
