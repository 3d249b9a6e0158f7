"""scripts/calibration_data.py: which engine a measurement row is fitted as."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def _load(name: str) -> ModuleType:
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


data = _load("calibration_data")


def test_exllama_v1_rows_are_not_fitted_as_exllamav2() -> None:
    # turboderp/exllama (v1, 2023) rows: 9 t/s for a 70B GPTQ on one A100 priced ExLlamaV2 at 2.9x.
    assert data._framework_key("ExLlama", "ExLlama (v1)") == ""
    assert data._framework_key("ExLlama", "exllama (v1)") == ""


def test_exllamav2_and_v3_keep_their_keys() -> None:
    assert data._framework_key("ExLlama", "ExLlamaV2") == "exllamav2"
    assert data._framework_key("ExLlama", "exllama") == "exllamav2"
    assert data._framework_key("ExLlama", "ExLlamaV3 (sm_75 fork)") == "exllamav3"
