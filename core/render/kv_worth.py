"""The line for "is a q4 KV cache worth it?" ("q8 kv cache 值得吗", "should I quantize the kv cache"):
the cache's size at the plan's context for each type the estimator prices, the trade-off in plain
words (the claim's sources sit beside the message, catalogs/messages/reply.toml [reply.kv_worth]),
and which type the plan runs and what it buys there: a bigger quant than f16 leaves room for, or
nothing but free memory.

Every figure is the estimator's: the sizes are `kv_cache_bytes` (what the table's KV column is made
of) and "fits" is a row of `estimate` priced with that cache type at that context, never a second
formula here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from core.catalog.kv_cache import FULL_PRECISION_KV, KV_CACHE_TYPES, KvCacheType
from core.catalog.loader import Catalog
from core.estimator.choice import Choice
from core.estimator.estimate import Estimate, Row, estimate
from core.estimator.memory import GIB, kv_cache_bytes
from core.estimator.plan import Plan
from core.i18n import Lang, translate
from core.render.fmt import ctx_label, gib

Verdict = Literal["lets", "lets_alone", "q8_enough", "no_gain", "keep_would", "keep", "none", "offload"]
_Q8: KvCacheType = "q8_0"
_Q4: KvCacheType = "q4_0"


@dataclass(frozen=True, slots=True)
class KvWorth:
    """What the line says: the cache per type at `context`, and the plan's type and its verdict."""

    context: int
    sizes: tuple[tuple[KvCacheType, float], ...]  # (type, GiB) in KV_CACHE_TYPES order
    kv: str  # the cache type the plan's command runs
    quant: str  # the quant it loads
    verdict: Verdict
    other: str = ""  # the quant the verdict names beside the plan's (f16's best, q8_0's better one)


def _on_card(row: Row) -> bool:
    """A row that runs fully on the card(s) as priced: no way out, no offload."""
    return row.status != "no_fit" and row.decode_tps is not None and row.remedy is None


class _Rows:
    """The plan's context priced once per cache type, over the table's quants and the plan's."""

    def __init__(self, est: Estimate, plan: Plan, catalog: Catalog) -> None:
        table = est.request.quants or tuple(dict.fromkeys(r.quant for r in est.rows))
        self.quants = tuple(dict.fromkeys((*table, plan.quant)))
        self.request = replace(est.request, quants=self.quants, contexts=(plan.context,))
        self.catalog = catalog
        self._by_type: dict[str, dict[str, Row]] = {}

    def rows(self, kv: KvCacheType) -> dict[str, Row]:
        if kv not in self._by_type:
            priced = estimate(replace(self.request, kv_type=kv), self.catalog)
            self._by_type[kv] = {r.quant: r for r in priced.rows}
        return self._by_type[kv]

    def fits(self, kv: KvCacheType, quant: str) -> bool:
        row = self.rows(kv).get(quant)
        return row is not None and _on_card(row)

    def best(self, kv: KvCacheType) -> str | None:
        """The quant with the most bits that runs fully on the card with this cache."""
        quants = self.catalog.quants
        on = [q for q, r in self.rows(kv).items() if _on_card(r) and q in quants]
        return max(on, key=lambda q: quants[q].bpw) if on else None


def _kept(rows: _Rows, quant: str) -> tuple[Verdict, str]:
    """The plan keeps f16: what q8_0 would let run instead, when that is more bits than the plan's
    quant and more than f16 fits."""
    better = rows.best(_Q8)
    quants = rows.catalog.quants
    bigger = better is not None and quant in quants and quants[better].bpw > quants[quant].bpw
    if better is not None and bigger and not rows.fits(FULL_PRECISION_KV, better):
        return "keep_would", better
    return ("keep", "") if rows.fits(FULL_PRECISION_KV, quant) else ("none", "")


def _verdict(rows: _Rows, kv: KvCacheType, quant: str) -> tuple[Verdict, str]:
    if kv == FULL_PRECISION_KV:
        return _kept(rows, quant)
    if not rows.fits(kv, quant):
        return "none", ""
    if rows.fits(FULL_PRECISION_KV, quant):
        return "no_gain", ""
    if kv == _Q4 and rows.fits(_Q8, quant):
        return "q8_enough", ""
    f16 = rows.best(FULL_PRECISION_KV)
    return ("lets", f16) if f16 is not None else ("lets_alone", "")


def kv_worth(est: Estimate, choice: Choice, plan: Plan, catalog: Catalog) -> KvWorth | None:
    """The figures of the line for the plan `choice` / `plan` of `est`; None without a plan."""
    if not plan.command or plan.context <= 0:
        return None
    model = est.request.model
    sizes = tuple((t, kv_cache_bytes(model, plan.context, t, catalog) / GIB) for t in KV_CACHE_TYPES)
    kv: KvCacheType = plan.placement.kv_cache
    if choice.place != "gpu":
        return KvWorth(plan.context, sizes, kv, plan.quant, "offload")
    verdict, other = _verdict(_Rows(est, plan, catalog), kv, plan.quant)
    return KvWorth(plan.context, sizes, kv, plan.quant, verdict, other)


def kv_worth_line(worth: KvWorth, lang: Lang) -> str:
    ctx = ctx_label(worth.context)
    sizes = " · ".join(translate("reply.kv_worth.size", lang, kv=t, gib=gib(g)) for t, g in worth.sizes)
    verdict = translate(
        f"reply.kv_worth.{worth.verdict}", lang, kv=worth.kv, quant=worth.quant, ctx=ctx, other=worth.other
    )
    return translate("reply.kv_worth", lang, ctx=ctx, sizes=sizes, verdict=verdict)
