"""The model dropdowns say what each preset is: its id, then the parameter count the estimate itself uses."""

from __future__ import annotations

from calculators import MODEL_PRESETS, estimate_memory
from ui.calculators_tab import model_choices, preset_label
from ui.check_tab import model_choices_for_check


def test_every_preset_is_offered_by_id_with_its_count_in_both_languages() -> None:
    for lang in ("en", "zh"):
        values = [value for _, value in model_choices(lang)]
        assert values[: len(MODEL_PRESETS)] == list(MODEL_PRESETS)  # the value sent stays the bare id
        assert [v for _, v in model_choices_for_check(lang)][1:] == list(MODEL_PRESETS)
        for label_text, value in model_choices(lang)[: len(MODEL_PRESETS)]:
            assert label_text.startswith(value + " · ")  # typing the id still finds it


def test_the_label_count_is_the_estimates_count() -> None:
    """A dense model shows one figure, the one the memory estimate reports; a MoE shows total and active."""
    est = estimate_memory({"model": "llama-2-7b", "gpu": "a100-80gb"})
    shown = preset_label("llama-2-7b", "en")
    assert shown == f"llama-2-7b · {est.num_params / 1e9:.1f}B params" and "active" not in shown
    moe = preset_label("mixtral-8x7b", "en")
    assert moe == "mixtral-8x7b · 46.7B params (12.9B active)"  # the model card's 46.7B total / 12.9B active
    assert preset_label("mixtral-8x7b", "zh") == "mixtral-8x7b · 46.7B 参数（激活 12.9B）"
    assert preset_label("qwen2.5-0.5b", "en") == "qwen2.5-0.5b · 494M params"  # the model card's 0.49B
