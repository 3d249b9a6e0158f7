"""Speed bands: the (low, high) multipliers around a mid decode or prefill figure.

Each band is the spread of cross-validated residuals (log measured / estimated) of the setups like
this one, written per tier by scripts/fit_calibration.py into catalogs/calibration.toml [band.*]:

- "card": a card the fit had rows for; "seen": an unmeasured card of a measured backend x family;
  "unseen": a family the data never saw (llama.cpp and the frameworks on its kernels);
- "framework": another framework the fit had rows for; "framework_unseen": one it never saw.

Under each tier the fit writes narrower sub-tiers where the residuals are dense enough (at least
`BAND_MIN_ROWS` cross-validated rows in the script): per backend ("card/cuda"), then per backend and
model kind ("card/cuda/dense", "card/vulkan/moe"), and per framework and kind ("framework/mlx/moe").
`band_for` takes the most specific tier the fit wrote and falls back to its parent otherwise, so a
thin tier is priced with the wider pooled spread, never with a spread fitted on a handful of rows.

A setup's band also holds the better-known tiers' bands (`NESTED`): an unmeasured card is never
narrower than a measured one. Several cards ("multi", "multi/framework") spread wider than one:
layer split adds a hand-off per card and tensor parallel an all-reduce whose cost differs by link;
their band is the single-card band widened to the multi-card residuals' spread, never narrower.
"""

from __future__ import annotations

from core.catalog.gpu import Gpu
from core.catalog.pricing_sections import Band
from core.estimator.speed import LLAMA_CPP_KERNELS, Calibration  # speed imports this lazily: no cycle


def model_kind(moe: bool | None) -> str:
    """The sub-tier suffix for a model kind: MoE decode spreads wider than dense (expert routing,
    the share of expert bytes a token reads); "" when the caller doesn't know the model."""
    if moe is None:
        return ""
    return "moe" if moe else "dense"


def tier_chain(tier: str, backend: str, framework: str, moe: bool | None = None) -> tuple[str, ...]:
    """The band keys to try for one base tier, narrowest first, ending with the pooled tier:
    ("card/cuda/moe", "card/cuda", "card"); a framework tier keys on the framework, not the backend."""
    what = framework if tier.startswith("framework") and tier != "framework_unseen" else backend
    if tier == "framework_unseen":
        return (tier,)
    kind = model_kind(moe)
    chain = [f"{tier}/{what}/{kind}"] if kind else []
    return (*chain, f"{tier}/{what}", tier)


def base_tier(
    gpu_id: str,
    pair: str,
    framework: str,
    seen_cards: frozenset[str] | set[str],
    seen_pairs: frozenset[str] | set[str],
    seen_frameworks: frozenset[str] | set[str],
    bands: dict[str, Band] | dict[str, dict[str, float]],
) -> str:
    """Which of the five pooled tiers a setup falls in; the fit script judges its rows by the same
    function, so the figures it prints are the bands the estimate then shows."""
    if framework not in LLAMA_CPP_KERNELS:
        if framework in seen_frameworks:
            return "framework"
        if "framework_unseen" in bands:
            return "framework_unseen"
    if gpu_id in seen_cards and "card" in bands:
        return "card"
    return "seen" if pair in seen_pairs else "unseen"


# Tiers from the best known to the least: a setup's band holds every better-known tier's band of the
# same backend, framework and kind, so an unmeasured card is never priced narrower than a measured one
# (nor an unseen framework than a seen one) where a thin tier's quantiles happen to come out tighter.
NESTED = {"seen": ("card",), "unseen": ("card", "seen"), "framework_unseen": ("framework",)}


def pick(bands: dict[str, Band], chain: tuple[str, ...]) -> Band | None:
    """The first band of `chain` the fit wrote."""
    return next((bands[key] for key in chain if key in bands), None)


def _union(a: Band, b: Band | None) -> Band:
    return a if b is None else Band(low=min(a.low, b.low), high=max(a.high, b.high))


def resolve(
    bands: dict[str, Band], tier: str, backend: str, framework: str, moe: bool | None, count: int = 1
) -> Band:
    """The band of one base tier (`base_tier`) for a backend, framework and model kind: the most
    specific sub-tier written, widened to hold the better-known tiers' (`NESTED`) and, on several
    cards, the multi-card spread ("multi" for llama.cpp's kernels, "multi/framework" for the rest)."""
    found = pick(bands, tier_chain(tier, backend, framework, moe))
    if found is None:
        raise KeyError(f"no band for tier {tier!r}")
    for better in NESTED.get(tier, ()):
        found = _union(found, pick(bands, tier_chain(better, backend, framework, moe)))
    if count > 1:
        # llama.cpp's kernels: the backend's multi-card spread where the fit wrote one ("multi/cuda").
        llama = framework in LLAMA_CPP_KERNELS
        keys = (f"multi/{backend}", "multi") if llama else ("multi/framework", "multi")
        found = _union(found, pick(bands, keys))
    return found


def band_for(
    gpu: Gpu,
    backend: str,
    cal: Calibration,
    phase: str = "decode",
    framework: str = "llama.cpp",
    *,
    moe: bool | None = None,
    count: int = 1,
) -> Band:
    """The spread of cross-validated residuals for setups like this one (see the module doc):
    `moe` picks the model-kind sub-tier where the fit wrote one (None: the backend's band), `count`
    above 1 widens to the multi-card spread where the fit wrote one."""
    decode = phase == "decode"
    bands = cal.decode_band if decode else cal.prefill_band
    tier = base_tier(
        gpu.id,
        f"{backend}/{gpu.arch_family}",
        framework,
        cal.seen_decode_cards if decode else cal.seen_prefill_cards,
        cal.seen_decode if decode else cal.seen_prefill,
        cal.seen_decode_frameworks if decode else cal.seen_prefill_frameworks,
        bands,
    )
    return resolve(bands, tier, backend, framework, moe, count)
