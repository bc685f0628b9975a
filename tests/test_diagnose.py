"""diagnose(): real pasted artifacts (tests/data/pastes, sources in SOURCES.md) read exactly and diagnosed.

Every case states what must be read and which cause must rank first; the other tests cover the contract
(shapes, tool and API registration), bad and huge input, both languages, and escaping of user text.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from calculators import CalculatorError, run_tool
from calculators.diagnose import Diagnosis, detect_artifacts, diagnose
from calculators.shell import shell_variables

PASTES = Path(__file__).parent / "data" / "pastes"
CASES = yaml.safe_load((PASTES / "cases.yaml").read_text(encoding="utf-8"))["cases"]
CARDS = {p.stem for p in (Path(__file__).parents[1] / "knowledge" / "cards").glob("*.md")}


def test_at_least_forty_real_artifacts_with_sources() -> None:
    sources = (PASTES / "SOURCES.md").read_text(encoding="utf-8")
    assert len(CASES) >= 40
    for case in CASES:
        assert (PASTES / case["file"]).is_file()
        assert case["source"].startswith("https://") and case["source"] in sources


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_real_paste(case: dict) -> None:
    text = (PASTES / case["file"]).read_text(encoding="utf-8")
    d = diagnose(text, setup=case.get("setup"))
    kinds = [a.kind for a in d.artifacts]
    assert case["kind"] in kinds, kinds
    art = next(a for a in d.artifacts if a.kind == case["kind"])
    for key, want in (case.get("fields") or {}).items():
        got = art.fields.get(key)
        if isinstance(want, float):
            assert got == pytest.approx(want, abs=0.011), (key, got)
        else:
            assert got == want, (key, got)
    assert 0 <= art.start < art.end <= len(text)
    if case.get("top_cause"):
        assert d.causes, d.to_markdown("en")
        assert d.causes[0].id == case["top_cause"], [c.id for c in d.causes]
    elif "top_cause" in case or case["kind"] in ("launch_command", "nvidia_smi"):
        pass
    for c in d.causes:
        assert set(c.card_ids) <= CARDS, c.card_ids
        assert c.title_zh and c.because_zh and c.fix_zh and c.title_en and c.because_en and c.fix_en


def test_old_and_new_oom_formats_are_told_apart() -> None:
    old = diagnose((PASTES / "oom_1x_fragmentation_35901.txt").read_text()).artifacts[0]
    new = diagnose((PASTES / "oom_2x_huge_request_cads4.txt").read_text()).artifacts[0]
    assert "torch<2.1" in old.version_hint and "torch>=2.1" in new.version_hint
    assert old.fields["observed_memory_gb"] == pytest.approx(1.06) and old.fields["gpu_memory_gb"] == pytest.approx(
        23.65
    )


def test_fragmentation_fix_names_the_allocator_setting_with_users_numbers() -> None:
    d = diagnose((PASTES / "oom_21_fragmentation_lerf73.txt").read_text())
    frag = d.causes[0]
    assert "expandable_segments:True" in frag.fix_en and "4.84 GiB" in frag.because_en and "3.00 GiB" in frag.because_en
    rocm = diagnose((PASTES / "hip_oom_free_mostly_175431.txt").read_text())
    assert any("PYTORCH_HIP_ALLOC_CONF" in c.fix_en for c in rocm.causes if c.id == "oom.fragmentation")


def test_logits_size_is_recognised_from_the_users_setup() -> None:
    # 2 × 4096 × 128256 × 4 bytes = 3.91 GiB: the logits of Llama-3 (vocabulary 128,256) in fp32
    text = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a total capacity of 79.15 GiB "
        "of which 2.10 GiB is free. Including non-PyTorch memory, this process has 77.04 GiB memory in use. Of the allocated "
        "memory 75.20 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated."
    )
    d = diagnose(text, setup={"model": "llama-3-8b", "seq_len": 4096, "train_micro_batch_size_per_gpu": 2})
    assert d.causes[0].id == "oom.logits", [c.id for c in d.causes]
    assert "128256" in d.causes[0].because_en
    without = diagnose(text)
    assert "oom.logits" not in [c.id for c in without.causes]


def test_batch_assertion_compares_seen_and_launched_world_size() -> None:
    d = diagnose((PASTES / "ds_batch_torchrun_starcoder41.txt").read_text())
    c = d.causes[0]
    assert "world_size=1" in c.title_en and "8" in c.title_en
    assert "256 != 4 × 8 × 1" in c.because_en
    assert "gradient_accumulation_steps=64" in c.fix_en  # consistent options from calculators.batch.resolve_batch


def test_host_kill_uses_deepspeeds_estimator() -> None:
    d = diagnose((PASTES / "kill_offload_dolly3456.txt").read_text(), setup={"num_params": 2.8e9})
    # ZeRO-2 with CPU offload, one GPU: P × max(4 × 1, 16) × 1.5 bytes
    assert d.artifacts[0].fields["host_cpu_needed_gb"] == pytest.approx(2.8e9 * 16 * 1.5 / 2**30, abs=0.01)
    assert "62.6 GiB" in d.causes[0].because_en
    assert "62.6 GiB" in d.causes[0].because_zh


def test_deepspeed_launcher_and_cuda_visible_devices() -> None:
    # ignored when a resource flag is given (DeepSpeed PR #868) ...
    d = diagnose("CUDA_VISIBLE_DEVICES=2,3 deepspeed --num_gpus 2 train.py --deepspeed ds_config.json")
    assert d.causes[0].id == "launch.ds_ignores_cuda_visible_devices"
    assert "--include localhost:2,3" in d.causes[0].fix_en
    # ... honoured otherwise
    d = diagnose("CUDA_VISIBLE_DEVICES=2,3 deepspeed train.py --deepspeed ds_config.json")
    assert not d.causes and d.artifacts[0].fields["world_size"] == 2


def test_lr_schedule_ending_early_is_flagged() -> None:
    lines = [
        f"{{'loss': {2.0 - i * 0.1:.2f}, 'learning_rate': {max(0.0, 2e-5 * (1 - i / 4)):.3g}, 'epoch': {i * 0.25:.2f}}}"
        for i in range(9)
    ]
    d = diagnose("\n".join(lines))
    assert d.causes[0].id == "log.lr_schedule_ended_early"


def test_truncated_oom_says_what_is_missing() -> None:
    d = diagnose("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.69 GiB total capa")
    assert d.artifacts and d.artifacts[0].fields["oom_truncated"]
    assert "cut off" in d.unrecognised_en and "截断" in d.unrecognised_zh


def test_new_format_oom_cut_before_the_allocated_line_is_still_read() -> None:
    """torch>=2.1 text ending after "… memory in use." (no "Of the allocated memory" line): found, marked truncated."""
    text = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "23.64 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process has 22.57 GiB memory in use."
    )
    d = diagnose(text)
    assert [a.kind for a in d.artifacts] == ["cuda_oom"]
    fields = d.artifacts[0].fields
    assert fields["oom_truncated"] and fields["gpu_memory_gb"] == 23.64 and fields["oom_process_in_use_gb"] == 22.57


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n",
        "hello world, how are you",
        "\x00\x01\x02" * 1000,
        "{" * 5000 + "}" * 5000,
        "Tried to allocate",
        "step=",
        "NVIDIA-SMI 1.0\n| 0 x On |",
    ],
)
def test_garbage_gets_a_clear_message_not_a_traceback(text: str) -> None:
    d = diagnose(text)
    assert isinstance(d, Diagnosis) and not d.causes
    assert d.unrecognised_en and d.unrecognised_zh
    assert d.to_markdown("zh") and d.to_markdown("en")


def test_huge_paste_is_bounded_and_still_finds_the_error_at_the_end() -> None:
    filler = "[INFO] step ok\n" * 70_000  # ~1 MB of log
    text = filler + (PASTES / "oom_2x_full_vsmtrans3.txt").read_text()
    assert len(text) > 1_000_000
    t0 = time.perf_counter()
    d = diagnose(text)
    assert time.perf_counter() - t0 < 5
    assert d.causes[0].id == "oom.model_states"
    assert text[d.artifacts[0].start : d.artifacts[0].end].count("Tried to allocate") == 1
    assert "1,0" in d.unrecognised_en


def test_pathological_input_is_fast() -> None:
    for text in (
        "CUDA out of memory. Tried to allocate 1 MiB " * 20_000,
        "--a " * 200_000,
        "| 0 " * 200_000,
        "{'loss': 1, " * 50_000,
        "A" * 1_000_000,
    ):
        t0 = time.perf_counter()
        diagnose(text)
        assert time.perf_counter() - t0 < 5, text[:40]


def test_bilingual_markdown_and_no_raw_html_from_input() -> None:
    evil = (
        "<img src=x onerror=alert(1)> CUDA_VISIBLE_DEVICES=0,1 deepspeed <script>x</script>.py --deepspeed "
        '"<b>ds</b>.json"\nValueError: Please correct the following DeepSpeed config values that mismatch TrainingArguments values:\n'
        "- ds <img>=1 vs hf <svg onload=x>=2\n" + (PASTES / "oom_21_fragmentation_lerf73.txt").read_text()
    )
    d = diagnose(evil)
    for lang in ("en", "zh"):
        md = d.to_markdown(lang)
        assert "<img" not in md and "<script" not in md and "<svg" not in md and "<b>" not in md
    assert "### What I read" in d.to_markdown("en") and "### 我读到的" in d.to_markdown("zh")
    assert "原因" in d.to_markdown("zh") and "Why" in d.to_markdown("en")


def test_contract_shapes_tool_and_bad_input() -> None:
    text = (PASTES / "ds_batch_anomalygpt19.txt").read_text()
    res = run_tool("diagnose", {"text": text, "lang": "zh"})
    assert isinstance(res, Diagnosis) and res.causes[0].id == "ds.world_size_mismatch"
    dumped = res.model_dump(mode="json")
    assert set(dumped) == {"artifacts", "causes", "unrecognised_en", "unrecognised_zh"}
    assert set(dumped["artifacts"][0]) == {"kind", "start", "end", "key_line", "fields", "framework", "version_hint"}
    with pytest.raises(CalculatorError) as err:
        run_tool("diagnose", {"text": 42})
    assert "text" in str(err.value) and "字符串" in str(err.value)
    with pytest.raises(CalculatorError):
        diagnose("x", setup=["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(CalculatorError):
        diagnose("x", lang="fr")


def test_detect_artifacts_never_raises_and_orders_by_position() -> None:
    text = (PASTES / "hf_mismatch_apps9.txt").read_text()
    arts = detect_artifacts(text)
    assert [a.kind for a in arts] == ["config_error", "launch_command"]
    assert arts[1].fields["launcher"] == "deepspeed" and arts[1].fields["config_file"] == "deepspeed_config.json"
    assert detect_artifacts(None) == []  # type: ignore[arg-type]


def test_no_torch_import() -> None:
    import subprocess
    import sys

    code = "import sys, calculators.diagnose as d; d.diagnose('x'); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parents[1])
    assert out.stdout.strip() == "False", out.stderr


REAL_QUESTIONS = sorted((Path(__file__).parent / "data" / "real_questions").glob("*.yaml"))


def _dev_questions() -> list[dict]:
    out = []
    for path in REAL_QUESTIONS:
        out += [
            q
            for q in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("questions", [])
            if q.get("act") == "diagnose"
        ]
    return out


def test_dev_set_diagnose_questions_with_pastes() -> None:
    """The answer-engine dev set: every diagnose question is read without error, in both languages, and where a
    paste states a value the set also records, the reading agrees with it."""
    questions = _dev_questions()
    if not questions:
        pytest.skip("no real-question dev set on this branch yet")
    with_artifacts = 0
    for q in questions:
        d = diagnose(q["question"])
        assert d.to_markdown("zh") and d.to_markdown("en")
        stated = q.get("stated") or {}
        with_artifacts += bool(d.artifacts)
        ooms = [a for a in d.artifacts if a.kind == "cuda_oom" and a.fields.get("gpu_memory_gb")]
        if ooms and stated.get("gpu_memory_gb"):
            assert ooms[0].fields["gpu_memory_gb"] == pytest.approx(stated["gpu_memory_gb"], rel=0.1), q["id"]
        launches = [a for a in d.artifacts if a.kind == "launch_command"]
        if (
            len(launches) == 1
            and launches[0].fields.get("world_size")
            and stated.get("world_size")
            and not any(a.kind == "deepspeed_batch_assert" for a in d.artifacts)
        ):
            fields = launches[0].fields
            if fields.get("launcher") == "python":
                # A plain `python` line is one process, or the inner command of an outer launcher (srun, a cluster
                # script) the paste does not show: only the visible GPUs it would leave unused are a reading.
                if fields.get("python_visible_unused"):
                    assert fields["python_visible_unused"] == stated["world_size"], q["id"]
            elif "$" in launches[0].key_line and str(fields["world_size"]) in shell_variables(q["question"]).values():
                # ChatGLM2-6B #605: "设置NUM_GPUS=8" in the prose, `NUM_GPUS=1` in the pasted script the command
                # expands: the paste's own count is what the launcher gets (and the disagreement is the diagnosis)
                continue
            else:
                assert fields["world_size"] == stated["world_size"], q["id"]
    assert with_artifacts >= len(questions) // 5


def test_nan_loss_is_counted_not_dumped() -> None:
    text = (
        "{'loss': 2.31, 'learning_rate': 1e-05, 'epoch': 0.1}\n{'loss': nan, 'learning_rate': 1e-05, 'epoch': 0.2}\n"
        "{'loss': nan, 'grad_norm': inf, 'learning_rate': 1e-05, 'epoch': 0.3}"
    )
    d = diagnose(text)
    art = d.artifacts[0]
    assert art.fields["log_nonfinite_loss"] == 2 and art.fields["log_loss"] == [2.31, None, None]
    assert d.causes[0].id == "log.loss_nan_or_zero" and "nan/inf" in d.causes[0].title_en
    import json

    json.dumps(d.model_dump(mode="json"), allow_nan=False)


def test_unused_keys_are_listed_and_training_yaml_is_spotted() -> None:
    d = diagnose((PASTES / "hf_unused_keys_webchat_llamafactory8301.txt").read_text(encoding="utf-8"))
    assert len(d.artifacts[0].fields["config_unused_keys"]) == 18
    assert "does not train" in d.causes[0].because_en and "不做训练" in d.causes[0].because_zh
    one = diagnose((PASTES / "hf_unused_key_new_option_llamafactory5328.txt").read_text(encoding="utf-8"))
    assert "does not train" not in one.causes[0].because_en


def test_repeated_errors_are_capped_per_kind() -> None:
    one = (PASTES / "oom_2x_full_vsmtrans3.txt").read_text(encoding="utf-8")
    # 300 errors that differ (each rank's own request size) are capped, head and tail kept.
    text = "".join(one.replace("226.00 MiB", f"{100 + i}.00 MiB") + "\n" for i in range(300))
    d = diagnose(text)
    assert len(d.artifacts) == 20 and all(a.kind == "cuda_oom" for a in d.artifacts)
    assert d.artifacts[-1].end > len(one) * 299  # the last occurrence is kept
    # The same error 300 times says nothing new: it is read once.
    same = diagnose((one + "\n") * 300)
    assert len(same.artifacts) == 1
