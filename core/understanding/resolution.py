"""A name read as catalog ids: a `Resolution` (best id, ranked candidates, how sure), and the
fuzzy scoring every resolver shares."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from core.catalog.loader import Catalog
from core.catalog.sections import sections
from core.understanding import fuzzy

CONFIDENT_SCORE = 88.0  # a fuzzy reading at least this good, and
CONFIDENT_MARGIN = 6.0  # at least this far ahead of the next card/model, is taken without asking
MIN_SCORE = 72.0  # below this a fuzzy reading is only a "did you mean"
POPULARITY_MARGIN = 10  # "27b" alone: the most popular reading must lead by this much
TOP = 5

Scorer = fuzzy.ScorerName  # "ratio" or "wratio" (core/understanding/fuzzy.py)


@dataclass(frozen=True, slots=True)
class Resolution:
    best_id: str | None
    candidates: tuple[tuple[str, float], ...] = ()  # (id, score 0..100), best first
    confident: bool = False  # one reading is clearly best: answer without asking back
    memory_gib: float | None = None  # GPU only: a memory size the text named ("V100 32G" -> 32)
    also: tuple[str, ...] = ()  # other plausible readings worth a mention ("also: Gemma 2 27B")
    # GPU only: a Mac named by its product and no chip or no size it is sold in ("mac studio"): the
    # candidates are the chips it ships with, and the reply asks which (`core.ask.answer._ask_back`).
    product: str = ""

    @property
    def found(self) -> bool:
        return self.best_id is not None


NOTHING = Resolution(None)


def _rank(scored: dict[str, float]) -> tuple[tuple[str, float], ...]:
    return tuple(sorted(scored.items(), key=lambda kv: -kv[1])[:TOP])


def _fuzzy(query: str, choices: tuple[str, ...], ids: tuple[str, ...], scorer: Scorer) -> dict[str, float]:
    best: dict[str, float] = {}
    if not query or not choices:
        return best
    for _choice, score, pos in fuzzy.extract(query, choices, scorer, limit=24):
        gid = ids[pos]
        if score > best.get(gid, -1.0):
            best[gid] = float(score)
    return best


def _from_scores(scored: dict[str, float], memory: float | None = None) -> Resolution:
    ranked = _rank(scored)
    if not ranked or ranked[0][1] < MIN_SCORE:
        return Resolution(None, ranked, False, memory)
    best, score = ranked[0]
    runner = ranked[1][1] if len(ranked) > 1 else 0.0
    confident = score >= CONFIDENT_SCORE and score - runner >= CONFIDENT_MARGIN
    also = tuple(gid for gid, s in ranked[1:3] if s >= score - CONFIDENT_MARGIN)
    return Resolution(best, ranked, confident, memory, also)


TEXTS_REMEMBERED = 4096


@lru_cache(maxsize=16)
def _hub_words(catalog: Catalog, key: str) -> frozenset[str]:
    return sections(catalog).hub.name_words(key)
