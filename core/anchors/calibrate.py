"""Move an estimate's speeds toward what the community measured on the same card, with shrinkage.

For every community anchor on the asked card we compare its measured speed with what the estimator
says *today* for that anchor's own setup (its quant, count, depth, prompt, framework): the ratio
says how far the formula is off on this card. The ratios are pooled in log space with weights (the
same model counts fully, other models less the further their size is) and a prior that pulls toward
"no change":

    log factor = sum(w_i * clamp(log(measured_i / estimated_i))) / (sum(w_i) + prior_strength)

so one odd submission moves the estimate a little and many consistent ones move it most of the way.
Constants live in catalogs/anchors.toml [calibration].

Only origin "community" anchors calibrate. Published measurements were already used to fit the
speed model (scripts/fit_calibration.py reads the same reference collection that
catalogs/published_anchors.csv comes from); counting them again here would double-count them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache, lru_cache

from core.anchors.anchor_index import AnchorIndex
from core.catalog.loader import Catalog
from core.catalog.sections import AnchorCalibration, sections
from core.estimator import speed
from core.estimator.estimate import Estimate, EstimateRequest, Range, Row, estimate
from core.estimator.setup import OS_NAMES, SetupError, build_setup
from core.estimator.ways_out.scaled import scaled_remedy
from core.i18n import Note
from core.storage.records import Measurement, Submission
from core.understanding.vocab import kv_spellings


@dataclass(frozen=True, slots=True)
class CalibrationInfo:
    """What calibration did, for the reply: "calibrated by N community measurements (x1.08)"."""

    n: int  # anchors that moved decode
    factor_decode: float  # the card-level factor (without the per-quant-kind preference)
    factor_prefill: float
    anchor_ids: tuple[int, ...]
    n_prefill: int = 0  # anchors that moved prefill (only runs that measured it)
    decode_by_kind: tuple[tuple[str, float], ...] = ()  # the factor each quant kind's rows got

    @property
    def applied(self) -> bool:
        return self.n > 0 or self.n_prefill > 0

    @property
    def decode_span(self) -> tuple[float, float]:
        """(lowest, highest) factor applied to any row's decode."""
        factors = [f for _, f in self.decode_by_kind] or [self.factor_decode]
        return min(factors), max(factors)


NONE = CalibrationInfo(0, 1.0, 1.0, ())


def settings(catalog: Catalog) -> AnchorCalibration:
    """catalogs/anchors.toml [calibration] (core/catalog/sections.py holds its defaults)."""
    return sections(catalog).anchors.calibration


@cache
def _engine(framework: str, catalog: Catalog) -> str:
    fw = catalog.frameworks.get(framework)
    return fw.engine if fw else framework


@lru_cache(maxsize=8192)
def anchor_estimate(catalog: Catalog, m: Measurement) -> tuple[float | None, float | None]:
    """(decode mid, prefill mid) the current estimator gives for the anchor's own setup; None where
    it can't price it (unknown id, or the estimator thinks it doesn't fit).

    Cached on (catalog, measurement): an anchor's measurement never changes after approval, so this
    is a per-anchor cache that also survives index swaps; a reloaded catalog (new calibration) is a
    new key, so the ratio always uses the current estimator.
    """
    gpu, model = catalog.gpus.get(m.gpu_id), catalog.models.get(m.model_id)
    if gpu is None or model is None or m.quant not in catalog.quants or m.decode_tps <= 0:
        return None, None
    os_name = m.os if m.os in OS_NAMES else None
    try:
        setup = build_setup(gpu, catalog, m.gpu_count, m.memory_gib, os_name)
    except SetupError:
        return None, None
    depth = max(m.depth or 0, 0)
    prompt = m.prompt_tokens or 512
    context = max(m.context or 4096, depth + prompt)
    request = EstimateRequest(
        setup=setup,
        model=model,
        quants=(m.quant,),
        contexts=(context,),
        depth=depth,
        prompt=prompt,
        framework=m.framework if m.framework in catalog.frameworks else None,
        kv_type=kv_spellings(catalog).priced(m.kv_type),  # "q8" and q5_1 (as q4_0) too
    )
    try:
        row = estimate(request, catalog).rows[0]
    except (ValueError, KeyError, ArithmeticError):
        # One odd approved setup must not turn every answer about this card into an error reply.
        return None, None
    decode = row.decode_tps.mid if row.decode_tps and row.decode_tps.mid > 0 else None
    prefill = row.prefill_tps.mid if row.prefill_tps and row.prefill_tps.mid > 0 else None
    return decode, prefill


def _weight(sub: Submission, est: Estimate, engine: str, cfg: AnchorCalibration, catalog: Catalog) -> float:
    """How much one anchor says about this estimate, before the quant-kind preference."""
    m, request = sub.measurement, est.request
    model, other = request.model, catalog.models.get(m.model_id)
    if other is None:
        return 0.0
    if other.id == model.id:
        w = cfg.same_model
    else:
        ratio = abs(math.log(other.params_b / model.params_b))
        if ratio > math.log(cfg.max_params_ratio):
            return 0.0
        w = min(cfg.other_model_max, math.exp(-cfg.other_model_decay * ratio))
        if other.is_moe != model.is_moe:
            w *= cfg.moe_mismatch
    if m.gpu_count != request.setup.count:
        w *= cfg.other_count
    if _engine(m.framework, catalog) != engine:
        w *= cfg.other_framework
    return w


def _pool(terms: list[tuple[float, float]], cfg: AnchorCalibration) -> float:
    """exp(sum w*lr / (sum w + k)), clamped: the shrunken factor for (weight, log ratio) pairs."""
    if not terms:
        return 1.0
    total = sum(w for w, _ in terms)
    log_factor = sum(w * lr for w, lr in terms) / (total + cfg.prior_strength)
    return min(cfg.factor_max, max(cfg.factor_min, math.exp(log_factor)))


def _scaled(r: Range, factor: float, digits: int) -> Range:
    return Range(round(r.low * factor, digits), round(r.mid * factor, digits), round(r.high * factor, digits))


def calibrate(est: Estimate, index: AnchorIndex, catalog: Catalog) -> tuple[Estimate, CalibrationInfo]:
    """The estimate with decode (and prefill) speeds scaled toward community measurements on the
    same card, and what was done. Rows that don't fit (no speed) are returned untouched."""
    cfg = settings(catalog)
    gpu_id = est.request.setup.gpu.id
    engine = _engine(est.framework, catalog)
    clamp = cfg.max_log_ratio
    decode: list[tuple[Submission, float, float]] = []  # (anchor, weight, log ratio)
    prefill: list[tuple[Submission, float, float]] = []
    for sub in index.on_gpu(gpu_id, origin="community"):
        m = sub.measurement
        # Another backend on the same card (Vulkan vs ROCm) is another speed model: not comparable.
        if m.backend and m.backend.lower() != est.backend:
            continue
        w = _weight(sub, est, engine, cfg, catalog)
        if w < cfg.min_weight:
            continue
        est_decode, est_prefill = anchor_estimate(catalog, m)
        if est_decode is not None:
            decode.append((sub, w, max(-clamp, min(clamp, math.log(m.decode_tps / est_decode)))))
        if est_prefill is not None and m.prefill_tps and m.prefill_tps > 0:
            prefill.append((sub, w, max(-clamp, min(clamp, math.log(m.prefill_tps / est_prefill)))))
    if not decode and not prefill:
        return est, NONE

    factor_prefill = _pool([(w, lr) for _, w, lr in prefill], cfg)
    by_kind: dict[str, float] = {}
    for row in est.rows:
        kind = speed.quant_kind(row.quant)
        if row.decode_tps is not None and kind not in by_kind:
            # Anchors whose quant prices like this row's (same dequantization cost) say more about it.
            terms = [
                (w * (cfg.same_quant_kind if speed.quant_kind(s.measurement.quant) == kind else 1.0), lr)
                for s, w, lr in decode
            ]
            by_kind[kind] = _pool(terms, cfg)

    def kind_factor(quant: str) -> float:
        kind = speed.quant_kind(quant)
        if kind not in by_kind:
            by_kind[kind] = _pool(
                [
                    (w * (cfg.same_quant_kind if speed.quant_kind(s.measurement.quant) == kind else 1.0), lr)
                    for s, w, lr in decode
                ],
                cfg,
            )
        return by_kind[kind]

    def scale(row: Row) -> Row:
        if row.decode_tps is None:
            # Doesn't fit: its ways out that run wholly on the card(s) move like the table's cells
            # would for that setup, so the way-out line and the table show one figure.
            if row.remedy is None or not decode:
                return row
            return replace(row, remedy=scaled_remedy(row.remedy, lambda q: kind_factor(q or row.quant)))
        fd = by_kind.get(speed.quant_kind(row.quant), 1.0)
        pre = _scaled(row.prefill_tps, factor_prefill, 0) if row.prefill_tps else None
        ttft = round(row.ttft_s / factor_prefill, 2) if row.ttft_s is not None else None
        return replace(row, decode_tps=_scaled(row.decode_tps, fd, 1), prefill_tps=pre, ttft_s=ttft)

    info = CalibrationInfo(
        n=len(decode),
        factor_decode=round(_pool([(w, lr) for _, w, lr in decode], cfg), 3),
        factor_prefill=round(factor_prefill, 3),
        anchor_ids=tuple(sorted({s.id for s, _, _ in decode} | {s.id for s, _, _ in prefill})),
        n_prefill=len(prefill),
        decode_by_kind=tuple((k, round(f, 3)) for k, f in by_kind.items()),
    )
    note = Note("anchors.assume", {"n": info.n, "factor": f"{info.factor_decode:.2f}"})
    scaled = replace(est, rows=tuple(scale(r) for r in est.rows), assumptions=(*est.assumptions, note))
    return scaled, info
