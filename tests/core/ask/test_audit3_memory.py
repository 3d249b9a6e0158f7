"""Memory fixes from the third practitioner audit (2026-12-03): a Mac's wired limit is never set
below macOS's default share, and a small unified-memory module keeps a share of its memory for the
OS, not a desktop SoC's 6 GiB."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


def _lines(question: str) -> list[str]:
    return answer(question, CATALOG).text.split("\n")


@pytest.mark.parametrize(
    "question",
    [
        "m3 max 128g gpt-oss-120b mlx vs gguf speed",
        "m3 max 128g gpt-oss-120b mlx",
        # held out
        "M4 Max 128GB gpt-oss 120b mlx 4bit",
    ],
)
def test_a_lower_quant_under_the_default_share_raises_no_limit(question: str) -> None:
    assert not any("wired_limit_mb" in line for line in _lines(question))


def test_a_raised_limit_is_above_the_default_share() -> None:
    # DeepSeek R1 IQ2_XXS on a 192 GB M2 Ultra needs more than the default 144 GiB.
    line = next(x for x in _lines("mac studio m2 ultra 192g deepseek r1 q2") if "wired_limit_mb=" in x)
    value = int(line.split("wired_limit_mb=")[1].split()[0].rstrip(")"))
    assert value > 144 * 1024


@pytest.mark.parametrize(
    ("question", "usable"),
    [
        ("jetson orin nano 8gb llama 3.2 3b speed", "Usable 5.2 of 8 GiB"),
        ("AI Max+ 395 128G qwen3 32b", "Usable 122.0 of 128 GiB"),
    ],
)
def test_a_small_module_keeps_a_share_for_the_os(question: str, usable: str) -> None:
    assert any(line.startswith(usable) for line in _lines(question)), _lines(question)[:12]


def test_an_8gb_jetson_runs_a_3b_q4_k_m() -> None:
    lines = _lines("jetson orin nano 8gb llama 3.2 3b speed")
    row = next(line for line in lines if line.startswith("Q4_K_M"))
    assert row.split()[2] != "x"
