"""scripts/calibration_data.py: which engine a measurement row is fitted as."""

from __future__ import annotations

from tests.fakes.scripts import load_script  # noqa: E402

_load = load_script


data = _load("calibration_data")


def test_exllama_v1_rows_are_not_fitted_as_exllamav2() -> None:
    # turboderp/exllama (v1, 2023) rows: 9 t/s for a 70B GPTQ on one A100 priced ExLlamaV2 at 2.9x.
    assert data._framework_key("ExLlama", "ExLlama (v1)") == ""
    assert data._framework_key("ExLlama", "exllama (v1)") == ""


def test_exllamav2_and_v3_keep_their_keys() -> None:
    assert data._framework_key("ExLlama", "ExLlamaV2") == "exllamav2"
    assert data._framework_key("ExLlama", "exllama") == "exllamav2"
    assert data._framework_key("ExLlama", "ExLlamaV3 (sm_75 fork)") == "exllamav3"
