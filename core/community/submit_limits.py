"""The constants `/submit` is checked against (catalogs/submit.toml), and the name of the
calibration an estimate came from."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from core.catalog.kv_cache import KvSpellings
from core.catalog.loader import Catalog
from core.catalog.sections import sections
from core.understanding.vocab import kv_spellings, vocab_for


@dataclass(frozen=True, slots=True)
class SubmitLimits:
    required: tuple[str, ...]
    max_count: int
    min_context: int
    max_context: int
    default_context: int
    max_speed: float
    max_memory_gib: float
    evidence_max_chars: int
    notes_max_chars: int
    ceiling_margin: float
    far_low: float
    far_high: float
    tp_engines: frozenset[str]
    speculative: re.Pattern[str]
    backends: dict[str, str]
    kv: KvSpellings  # how cache types are spelt, and what an unpriced one is priced as
    os_words: Mapping[str, str]  # typed OS words -> family (catalogs/understanding.toml [os])


@cache
def limits(catalog: Catalog) -> SubmitLimits:
    table = sections(catalog).submit
    s = table.submit
    words = "|".join(re.escape(w) for w in s.speculative_words) or "(?!)"
    return SubmitLimits(
        required=s.required,
        max_count=s.max_count,
        min_context=s.min_context,
        max_context=s.max_context,
        default_context=s.default_context,
        max_speed=s.max_speed,
        max_memory_gib=s.max_memory_gib,
        evidence_max_chars=s.evidence_max_chars,
        notes_max_chars=s.notes_max_chars,
        ceiling_margin=s.ceiling_margin,
        far_low=s.far_low_factor,
        far_high=s.far_high_factor,
        tp_engines=frozenset(s.tensor_parallel_engines),
        speculative=re.compile(rf"(?<![a-z])(?:{words})", re.I),
        backends=dict(table.backends),
        kv=kv_spellings(catalog),
        os_words=vocab_for(catalog).os_words,
    )


@cache
def engine_version(catalog: Catalog) -> str:
    """Names the calibration an estimate came from: its row count plus a hash of its content, so two
    fits with the same number of rows still differ (accuracy reports group by this)."""
    meta = sections(catalog).calibration
    return f"cal-{meta.rows if meta.rows is not None else '?'}r-{meta.digest}"
