"""ExLlamaV2 / ExLlamaV3 named without a quant: their own table (EXL2 / EXL3 members at a few bpw) and
the TabbyAPI command, never llama.cpp's GGUF ladder with an "ExLlama loads safetensors only" line."""

from __future__ import annotations

import re

import pytest

from core.ask.answer import answer
from core.ask.estimate_request import run_query
from core.catalog.loader import default_catalog
from core.estimator.estimate import default_quants

CATALOG = default_catalog()
FAMILY = {"exllamav2": "EXL2", "exllamav3": "EXL3"}


def _table_quants(text: str) -> list[str]:
    """The quant column of the reply's table (rows that start with a quant id and a GiB figure)."""
    return re.findall(r"^([A-Z][A-Z0-9_.-]*\d[A-Z0-9_.-]*)\s+\d+\.\d\s", text, re.MULTILINE)


@pytest.mark.parametrize("framework", ["exllamav2", "exllamav3"])
def test_default_quants_are_the_frameworks_own_family(framework: str) -> None:
    model = CATALOG.models["qwen3-14b"]
    names = default_quants(model, framework, CATALOG)
    assert len(names) >= 3
    assert all(CATALOG.quants[n].family == FAMILY[framework] for n in names), names


def test_estimate_for_exllamav2_prices_exl2_rows() -> None:
    est = run_query({"gpu": "3090", "model": "gemma 3 27b", "framework": "exllamav2"}, CATALOG)
    assert est.framework == "exllamav2"
    assert est.stands_in is None
    assert all(r.quant.startswith("EXL2-") for r in est.rows), [r.quant for r in est.rows]


@pytest.mark.parametrize(
    ("question", "family"),
    [
        ("exllamav2 gemma 3 27b on 3090", "EXL2"),
        ("tabbyapi qwen3 14b on 3090", "EXL2"),
        ("exllamav3 llama 3.3 70b 2x3090", "EXL3"),
        ("exl2 qwen3 32b 4090", "EXL2"),
        ("3090 用 exllamav2 跑 gemma 3 27b 多快", "EXL2"),
    ],
)
def test_named_exllama_answers_with_its_own_quants_and_command(question: str, family: str) -> None:
    text = answer(question, CATALOG).text
    quants = _table_quants(text)
    assert quants and all(q.startswith(family) for q in quants), (quants, text)
    assert "$ python main.py --model-name" in text, text
    assert ".gguf" not in text and "safetensors" not in text, text


def test_named_bpw_still_priced_as_asked() -> None:
    text = answer("exl2 4.65bpw qwen3 32b 4090", CATALOG).text
    assert "EXL2-4.65" in text and "$ python main.py" in text, text
