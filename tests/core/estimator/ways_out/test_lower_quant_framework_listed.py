"""A smaller-quant way out stays within what the priced framework loads: ExLlamaV2's EXL2 row is never
told to switch to AWQ (ExLlamaV2 can't load it), while its own lower EXL2 members and the GPTQ it
does load may be offered; llama.cpp's ways out are unchanged."""

from __future__ import annotations

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


def _ways_out(question: str) -> str:
    return next((line for line in answer(question, CATALOG).text.split("\n") if line.startswith("If it")), "")


def test_exllama_is_never_offered_awq() -> None:
    for question in (
        "exllamav2 qwen3 32b on 3090",
        "tabbyapi llama 3.3 70b 2x 3090",
        "exl2 gemma 3 27b 4090",
    ):
        assert "AWQ" not in _ways_out(question), question


def test_llama_cpp_still_steps_down_its_own_ladder() -> None:
    assert "Q8_0 32K:" in _ways_out("4090 qwen3 32b q8")
