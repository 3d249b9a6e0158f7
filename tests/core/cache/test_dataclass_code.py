"""The dataclass code table (core/cache/dataclass_code.py): a dataclass built from the table behaves
exactly as one compiled afresh, the table is written once and read back, and a broken table only
costs the compile. Child processes: the table is installed process-wide, before any dataclass."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

_CHILD = r"""
import dataclasses, json, sys
from core.cache import dataclass_code
installed = dataclass_code.install()

@dataclasses.dataclass(frozen=True, slots=True)
class Card:
    name: str
    memory_gib: float = 24.0
    tags: tuple[str, ...] = ()

a, b = Card("4090"), Card("4090", 24.0)
try:
    a.name = "x"
    frozen = False
except dataclasses.FrozenInstanceError:
    frozen = True
print(json.dumps({
    "installed": installed, "new": len(dataclass_code._NEW), "known": len(dataclass_code._KNOWN),
    "repr": repr(a), "eq": a == b, "hash": hash(a) == hash(b), "frozen": frozen,
    "replace": repr(dataclasses.replace(a, memory_gib=48.0)),
    "fields": [f.name for f in dataclasses.fields(Card)],
}))
"""


def _child(cache: str) -> dict[str, object]:
    env = {**os.environ, "TOKBOT_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _behaviour(run: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in run.items() if k not in {"installed", "new", "known"}}


def test_a_dataclass_from_the_table_behaves_as_one_compiled_afresh(tmp_path: Path) -> None:
    off = _child("off")
    assert off["installed"] is False
    first = _child(str(tmp_path))
    assert first["installed"] is True and first["new"] > 0
    assert len(list(tmp_path.glob("dataclass-code-*.marshal"))) == 1
    second = _child(str(tmp_path))
    assert second["new"] == 0  # every method came from the table
    assert _behaviour(second) == _behaviour(first) == _behaviour(off)
    assert off["repr"] == "Card(name='4090', memory_gib=24.0, tags=())" and off["frozen"] is True


def test_a_broken_table_only_costs_the_compile(tmp_path: Path) -> None:
    _child(str(tmp_path))
    (table,) = tmp_path.glob("dataclass-code-*.marshal")
    table.write_bytes(b"\x00 not marshal")
    again = _child(str(tmp_path))
    assert again["new"] > 0 and again["eq"] is True
    assert _child(str(tmp_path))["new"] == 0  # rewritten whole
