"""rapidfuzz, imported on first use: most questions name their card and model exactly, and a bot
process that has answered none yet doesn't carry the library (~5 MiB resident, ~10 ms to import).

`ratio` / `wratio` are rapidfuzz's `fuzz.ratio` / `fuzz.WRatio`; `extract` is `process.extract`
with the scorer named ("ratio", "wratio") rather than passed, so callers never import rapidfuzz.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

ScorerName = Literal["ratio", "wratio"]

_lib: Any = None


def _rapidfuzz() -> Any:
    global _lib
    if _lib is None:
        import rapidfuzz.fuzz
        import rapidfuzz.process

        _lib = rapidfuzz
    return _lib


def _scorer(name: ScorerName) -> Any:
    fuzz = _rapidfuzz().fuzz
    return fuzz.WRatio if name == "wratio" else fuzz.ratio


def ratio(a: str, b: str) -> float:
    return float(_rapidfuzz().fuzz.ratio(a, b))


def wratio(a: str, b: str) -> float:
    return float(_rapidfuzz().fuzz.WRatio(a, b))


def extract(
    query: str, choices: Sequence[str], scorer: ScorerName, limit: int, score_cutoff: float | None = None
) -> list[tuple[str, float, int]]:
    """(choice, score, index) of the best `limit` choices, best first."""
    found = _rapidfuzz().process.extract(
        query, choices, scorer=_scorer(scorer), limit=limit, score_cutoff=score_cutoff
    )
    return [(str(choice), float(score), int(pos)) for choice, score, pos in found]
