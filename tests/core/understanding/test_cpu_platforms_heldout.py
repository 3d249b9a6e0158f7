"""Held-out phrasings for the CPU family reading (written before the code; run at the end)."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.understanding.cpu_words import find_cpus

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("text", "cpu_id"),
    [
        ("dual xeon silver 4114 256g", "xeon-gold-6138"),
        ("EPYC 9474F 单路 768G", "epyc-9554"),
        ("i9 14900F cpu only", "core-i9-14900k"),
    ],
)
def test_heldout_family(text: str, cpu_id: str) -> None:
    assert [m.cpu_id for m in find_cpus(text, CATALOG)] == [cpu_id]
