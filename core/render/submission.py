"""One-line descriptions of a measurement and its estimate, shared by replies, /review and notices."""

from __future__ import annotations

from core.catalog.loader import Catalog
from core.i18n import translate
from core.records import EstimateSnapshot, Measurement, Submission
from core.render.fmt import ctx_label


def setup_line(m: Measurement, catalog: Catalog) -> str:
    gpu = catalog.gpus.get(m.gpu_id)
    model = catalog.models.get(m.model_id)
    card = gpu.name if gpu else m.gpu_id
    if m.memory_gib and gpu and m.memory_gib != gpu.memory_gib:
        card += f" {m.memory_gib:g}GB"
    if m.gpu_count > 1:
        card = f"{m.gpu_count}x {card}"
    parts = [card, model.name if model else m.model_id, m.quant]
    if m.context:
        parts.append(f"ctx {ctx_label(m.context)}")
    if m.depth:
        parts.append(f"@{ctx_label(m.depth)}")
    fw = m.framework + (f" {m.framework_version}" if m.framework_version else "")
    parts.append(fw)
    if m.backend:
        parts.append(m.backend)
    if m.os:
        parts.append(m.os)
    return " · ".join(parts)


def speeds_line(m: Measurement, lang: str) -> str:
    text = translate("community.decode", lang, tps=m.decode_tps)
    if m.prefill_tps:
        text += " · " + translate("community.prefill", lang, tps=m.prefill_tps)
    if m.memory_used_gib:
        text += " · " + translate("community.memory_used", lang, gib=m.memory_used_gib)
    return text


def estimate_line(est: EstimateSnapshot | None, lang: str) -> str:
    if est is None:
        return translate("community.no_estimate", lang)
    low, mid, high = est.decode_low, est.decode_mid, est.decode_high
    return translate("community.estimated", lang, low=low, high=high, mid=mid)


def credit(sub: Submission) -> str:
    if sub.origin == "published":
        return sub.submitter.name or (sub.source or "published")
    return sub.submitter.name or sub.submitter.user_id


def summary(sub: Submission, catalog: Catalog, lang: str) -> list[str]:
    """#id, setup, speeds, who/when: the lines a moderator or a subscriber reads."""
    when = sub.source_date or sub.created_at.strftime("%Y-%m-%d")
    return [
        f"#{sub.id} {setup_line(sub.measurement, catalog)}",
        speeds_line(sub.measurement, lang),
        translate("community.by", lang, name=credit(sub), date=when),
    ]
