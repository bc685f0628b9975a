"""Units for the pasted-error readers: the same error pasted twice (issue title and body) is read once."""

from __future__ import annotations

from calculators.diagnose.causes import detect_artifacts

_OOM = (
    "CUDA out of memory. Tried to allocate 6.28 GiB (GPU {gpu}; 39.45 GiB total capacity; 31.41 GiB already "
    "allocated; 5.99 GiB free; 31.42 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory "
    "try setting max_split_size_mb to avoid fragmentation."
)


def test_title_and_body_repeat_of_one_oom_is_read_once() -> None:
    text = "显存不够：" + _OOM.format(gpu=1) + "\n\n" + _OOM.format(gpu=1) + "\n4张A100 40G的卡，还是报显存不够。"
    ooms = [a for a in detect_artifacts(text) if a.kind == "cuda_oom"]
    assert len(ooms) == 1
    assert ooms[0].fields["oom_request_gb"] == 6.28


def test_ooms_from_different_gpus_are_all_kept() -> None:
    text = "\n".join(_OOM.format(gpu=g) for g in (0, 1, 2))
    ooms = [a for a in detect_artifacts(text) if a.kind == "cuda_oom"]
    assert sorted(a.fields["oom_gpu_index"] for a in ooms) == [0, 1, 2]
