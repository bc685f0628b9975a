"""Record what the real libraries say about every config in tests/data/configs/verdict_cases.json.

Run it again whenever a pin of deepspeed, transformers or accelerate changes in
requirements.txt (tests/test_configs_verdicts.py fails until you do):

    DS_BUILD_OPS=0 .venv/bin/python bench/record_library_verdicts.py

For each case and each data-parallel world size (1 and 8) it writes the verdict —
passed, or the step that raised, the exception's class and its exact text — to
tests/data/configs/verdicts.json, with the library versions that gave it.

* A DeepSpeed JSON alone is judged by ``DeepSpeedConfig(<path to the file>)`` itself,
  reading the file the way DeepSpeed does (hjson, duplicate keys refused), with
  ``deepspeed.comm``'s rank / world-size lookups answered as rank 0 of N: this code
  path is independent of the doctor's.
* DeepSpeed JSON + TrainingArguments (or a LLaMA-Factory YAML), and Accelerate YAMLs,
  go through the same library call sequence the doctor uses
  (calculators/configs/hf_args.py and accelerate_yaml.py): the Trainer's and
  accelerate launch's own functions in their order. There the recording pins the
  libraries' answers, and the test checks that the doctor's report states them.
"""

from __future__ import annotations

import json
import pathlib
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

from calculators.configs import library, parse_config  # noqa: E402
from calculators.configs.accelerate_yaml import accelerate_verdict  # noqa: E402
from calculators.configs.checks import _hidden_size  # noqa: E402
from calculators.configs.hf_args import hf_deepspeed_verdict, training_args_verdict  # noqa: E402
from calculators.configs.registry import _hf_fields  # noqa: E402

DATA = ROOT / "tests" / "data" / "configs"
WORLD_SIZES = (1, 8)


def deepspeed_alone(path: pathlib.Path, world_size: int) -> dict[str, object]:
    """DeepSpeedConfig(path) as rank 0 of ``world_size`` — DeepSpeed reads the file itself."""
    import deepspeed.runtime.config as cfgmod

    class RankZeroOf:
        def get_rank(self, *a: object, **k: object) -> int:
            return 0

        def get_world_size(self, *a: object, **k: object) -> int:
            return world_size

    old = cfgmod.dist
    cfgmod.dist = RankZeroOf()
    try:
        with library.quiet():
            cfgmod.DeepSpeedConfig(str(path))
    except Exception as exc:  # noqa: BLE001 - the verdict
        v = library.failure(exc)
        return {
            "fails": True,
            "step": "deepspeed.runtime.config.DeepSpeedConfig",
            "exception": v.exception,
            "message": v.message,
        }
    finally:
        cfgmod.dist = old
    return {"fails": False}


def as_record(v: library.LibraryVerdict) -> dict[str, object]:
    if not v.available:
        raise SystemExit(f"a library is missing, cannot record: {v.note_en}")
    if v.passed:
        return {"fails": False}
    return {"fails": True, "step": v.step, "exception": v.exception, "message": v.message}


def verdict(case: dict[str, str | None], world_size: int) -> dict[str, object]:
    cfg_path = DATA / str(case["config"])
    pc = parse_config(cfg_path.read_text(encoding="utf-8"))
    companion = (
        parse_config((DATA / case["training_args"]).read_text(encoding="utf-8")) if case.get("training_args") else None
    )
    if companion is not None and pc.kind != "deepspeed" and companion.kind == "deepspeed":
        pc, companion = companion, pc
    hidden = _hidden_size(case.get("model"))
    if pc.kind == "deepspeed":
        if companion is None:
            return deepspeed_alone(cfg_path, world_size)
        if companion.kind == "accelerate":
            return as_record(accelerate_verdict(companion.raw, world_size, pc.raw, hidden))
        return as_record(hf_deepspeed_verdict(pc.raw, _hf_fields(companion), world_size, hidden))
    if pc.kind in ("hf_training_args", "llamafactory"):
        if isinstance(pc.raw.get("deepspeed"), dict):
            return as_record(hf_deepspeed_verdict(pc.raw["deepspeed"], _hf_fields(pc), world_size, hidden))
        return as_record(training_args_verdict(_hf_fields(pc), world_size))
    return as_record(accelerate_verdict(pc.raw, world_size, None, hidden))


def main() -> None:
    cases = json.loads((DATA / "verdict_cases.json").read_text(encoding="utf-8"))
    start = time.perf_counter()
    out: dict[str, object] = {
        "versions": {n: library.version(n) for n in ("deepspeed", "transformers", "accelerate", "torch")},
        "world_sizes": list(WORLD_SIZES),
        "cases": {},
    }
    fails = 0
    for case in cases:
        rec = {str(ws): verdict(case, ws) for ws in WORLD_SIZES}
        out["cases"][case["name"]] = rec  # type: ignore[index]
        fails += sum(bool(r["fails"]) for r in rec.values())
    (DATA / "verdicts.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    n = len(cases) * len(WORLD_SIZES)
    print(
        f"{len(cases)} cases × {len(WORLD_SIZES)} world sizes = {n} verdicts, {fails} fail, {n - fails} pass "
        f"({time.perf_counter() - start:.1f} s) → tests/data/configs/verdicts.json"
    )


if __name__ == "__main__":
    main()
