"""CPUs the catalog doesn't list, read as their family's typical part (cpus.toml [[platform]])."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.understanding.cpu_words import find_cpus, resolve_cpu
from core.understanding.parse import parse_question

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("text", "cpu_id", "sockets"),
    [
        ("Xeon 6980P qwen3 30b a3b", "xeon-6980p", None),  # now a catalogued row of its own
        ("双路 Xeon 6972P 跑 deepseek r1", "xeon-6980p", 2),
        ("2x Xeon Platinum P-8136 deepseek r1", "xeon-gold-6138", 2),  # Skylake-SP numbering
        ("xeon gold 6130 纯cpu qwen3 30b", "xeon-gold-6138", None),
        ("2路 Xeon Platinum 8275CL", "xeon-gold-6248", 2),  # Cascade Lake
        ("xeon gold 6342 512g ram", "xeon-gold-6338", None),  # Ice Lake
        ("Xeon Platinum 8470Q cpu only", "xeon-platinum-8480", None),  # Sapphire Rapids
        ("至强铂金 8592+ 跑 kimi k2", "xeon-platinum-8580", None),  # Emerald Rapids
        ("EPYC 7K62 双路", "epyc-7532", 2),  # Rome
        ("epyc 7713 512gb ddr4", "epyc-7543", None),  # Milan
        ("EPYC 9334 纯cpu跑 qwen3 235b", "epyc-9554", None),  # Genoa
        ("Core i5-14400F 32gb ram qwen3 8b", "core-i5-13400", None),
        ("i7-14700F 64G 内存", "core-i7-14700k", None),
    ],
)
def test_uncatalogued_cpu_priced_on_its_family(text: str, cpu_id: str, sockets: int | None) -> None:
    assert [(m.cpu_id, m.sockets) for m in find_cpus(text, CATALOG)] == [(cpu_id, sockets)]


@pytest.mark.parametrize(
    ("name", "cpu_id"),
    [("Xeon 6980P", "xeon-6980p"), ("2x Xeon Platinum P-8136", "xeon-gold-6138"), ("EPYC 9334", "epyc-9554")],
)
def test_estimate_cpu_flag_reads_family(name: str, cpu_id: str) -> None:
    assert resolve_cpu(name, CATALOG).cpu_id == cpu_id


def test_question_says_it_was_priced_as_the_family() -> None:
    parsed = parse_question("EPYC 9334 纯cpu qwen3 30b", CATALOG)
    assert parsed.cpu == "epyc-9554"
    assert ("cpu_platform", "EPYC 9334") in parsed.notes
