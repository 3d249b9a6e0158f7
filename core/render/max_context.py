"""The line for "how long a context can I fit" ("4090 qwen3 14b q4 kv 能开多长上下文", "max context
3090 gemma 3 27b"): the longest context the plan's quant holds on the card(s) for each KV cache type
worth naming, and where that passes the model's native window (rope scaling) or its limit.

The figures are the plan row's own memory sums with its KV cache re-sized by `kv_cache_bytes` (what
the table's KV column is made of); a run with weights in RAM has no such line (its context moves
the split)."""

from __future__ import annotations

from dataclasses import dataclass

from core.catalog.kv_cache import FULL_PRECISION_KV, KvCacheType
from core.catalog.loader import Catalog
from core.estimator.estimate import Estimate, Row, in_ram
from core.estimator.memory import GIB, kv_cache_bytes
from core.estimator.plan import Plan
from core.estimator.ways_out.kind import WayOutKind
from core.i18n import Lang, translate
from core.render.fmt import ctx_label

K = 1024
# The contexts tried: what people set (-c 8192 ... 262144), and 1M for the models that reach it.
LADDER = tuple(k * K for k in (4, 8, 12, 16, 24, 32, 40, 48, 64, 96, 128, 160, 192, 256, 384, 512, 1024))


@dataclass(frozen=True, slots=True)
class Longest:
    kv: KvCacheType
    context: int  # 0: not even the shortest fits
    beyond_native: bool
    capped: bool  # the model's own limit stopped it, not the memory


def _types(asked: KvCacheType) -> tuple[KvCacheType, ...]:
    """f16 and q8_0 (the near-lossless pair), and the type asked when it is another (q4_0)."""
    said: tuple[KvCacheType, ...] = (FULL_PRECISION_KV, "q8_0")
    return said if asked in said else (*said, asked)


def _plan_row(est: Estimate, plan: Plan) -> Row | None:
    """The table's row the command loads: its quant at its context, fitting on the card(s) as it is or
    with an 8-bit KV cache (the sums other than the cache are the same either way)."""
    row = next((r for r in est.rows if r.quant == plan.quant and r.context == plan.context), None)
    if row is None or (row.remedy is not None and row.remedy.kind != WayOutKind.KV_QUANT):
        return None
    return row if row.status != "no_fit" or row.remedy is not None else None


def longest(est: Estimate, plan: Plan, catalog: Catalog) -> tuple[Longest, ...]:
    """For each KV type, the longest context of LADDER the plan's quant holds fully on the card(s):
    the row's own sums with its KV cache swapped for that type at that length (the weights, buffers
    and driver reserve stay; the compute buffer's small growth with the context is left out, hence
    the "~"). () for a run with weights in RAM or no plan."""
    placed = plan.placement
    row = _plan_row(est, plan)
    if row is None or in_ram(est) or not plan.command or placed.n_gpu_layers != "all" or placed.n_cpu_moe:
        return ()
    model = est.request.model
    limit = max(model.max_context, model.rope_scaled_context or model.max_context)
    ladder = tuple(c for c in LADDER if c < limit) + (limit,)
    room = (row.usable_gib - (row.total_gib - row.kv_gib)) * GIB
    out = []
    for kv in _types(est.request.kv_type):
        fits = [c for c in ladder if kv_cache_bytes(model, c, kv, catalog) <= room]
        best = max(fits, default=0)
        out.append(Longest(kv, best, best > model.max_context, best == limit))
    return tuple(out)


def max_context_line(found: tuple[Longest, ...], quant: str, native: int, lang: Lang) -> str:
    if not found:
        return ""
    parts = []
    for f in found:
        key = "none" if f.context == 0 else "capped" if f.capped else "fits"
        parts.append(translate(f"reply.max_ctx.{key}", lang, kv=f.kv, ctx=ctx_label(f.context)))
    line = translate("reply.max_ctx", lang, quant=quant, items=" · ".join(parts))
    if any(f.beyond_native for f in found):
        line += translate("reply.max_ctx.rope", lang, native=ctx_label(native))
    return line
