"""Score `parse_question` against a corpus of questions with their expected reading.

Shared by the corpus test and `scripts/bench_understanding.py`, so both count "right" the same way.
A line of the corpus (JSONL): {"q", "gpu", "count", "memory", "model", "quants", "contexts", "os",
"framework", "intent"}; ids are catalog ids, null where the question names nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.catalog.loader import Catalog
from core.understanding.parse import ParsedQuestion, parse_question

FIELDS = ("gpu", "count", "memory", "model", "quants", "contexts", "os", "framework", "intent")


@dataclass(frozen=True, slots=True)
class CaseResult:
    question: str
    wrong: dict[str, tuple[Any, Any]]  # field -> (expected, got)
    seconds: float

    @property
    def right(self) -> bool:
        return not self.wrong


def load_corpus(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def reading(parsed: ParsedQuestion) -> dict[str, Any]:
    """The parse in the corpus's terms."""
    return {
        "gpu": parsed.gpu.best_id if parsed.gpu else None,
        "count": parsed.gpu_count,
        "memory": parsed.gpu.memory_gib if parsed.gpu else None,
        "model": parsed.model.best_id if parsed.model else None,
        "quants": list(parsed.quants),
        "contexts": list(parsed.contexts),
        "os": parsed.os,
        "framework": parsed.framework,
        "intent": parsed.intent,
    }


def score_case(case: dict[str, Any], catalog: Catalog) -> CaseResult:
    import time

    start = time.perf_counter()
    parsed = parse_question(case["q"], catalog)
    seconds = time.perf_counter() - start
    got = reading(parsed)
    wrong = {
        name: (case.get(name), got[name])
        for name in FIELDS
        if _norm(case.get(name, _default(name))) != _norm(got[name])
    }
    return CaseResult(case["q"], wrong, seconds)


def _default(name: str) -> Any:
    return {"count": 1, "quants": [], "contexts": [], "intent": "general"}.get(name)


def _norm(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value
