"""One-line descriptions of a measurement and its estimate, shared by replies, /review and notices.

Lines here are unescaped text: whoever sends them escapes them for the chat target (core/render/doc.py,
through render.message.one). What a person typed (names, versions, backends) is made one short line
first, so it can't add lines of its own to a reply or a notice.
"""

from __future__ import annotations

from core.catalog.loader import Catalog
from core.i18n import Lang, translate
from core.render.fmt import ctx_label
from core.storage.records import EstimateSnapshot, Measurement, Submission

NAME_MAX_CHARS = 64  # a display name longer than this is cut (Discord's own limit is 32)


def inline(text: str | None, max_chars: int = 200) -> str:
    """User text as one line: every run of whitespace (newlines included) one space, cut to length."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= max_chars else flat[: max_chars - 1] + "…"


def display_name(name: str | None) -> str:
    """A person's display name as shown in credits and notices ("" when there is none)."""
    return inline(name, NAME_MAX_CHARS)


def setup_line(m: Measurement, catalog: Catalog) -> str:
    gpu = catalog.gpus.get(m.gpu_id)
    model = catalog.models.get(m.model_id)
    card = gpu.name if gpu else inline(m.gpu_id, NAME_MAX_CHARS)
    if m.memory_gib and gpu and m.memory_gib != gpu.memory_gib:
        card += f" {m.memory_gib:g}GB"
    if m.gpu_count > 1:
        card = f"{m.gpu_count}x {card}"
    parts = [
        card,
        model.name if model else inline(m.model_id, NAME_MAX_CHARS),
        inline(m.quant, NAME_MAX_CHARS),
    ]
    if m.context:
        parts.append(f"ctx {ctx_label(m.context)}")
    if m.depth:
        parts.append(f"@{ctx_label(m.depth)}")
    fw = inline(m.framework) + (f" {inline(m.framework_version)}" if m.framework_version else "")
    parts.append(fw)
    if m.backend:
        parts.append(inline(m.backend))
    if m.os:
        parts.append(inline(m.os))
    return " · ".join(parts)


def speeds_line(m: Measurement, lang: Lang) -> str:
    text = translate("community.decode", lang, tps=m.decode_tps)
    if m.prefill_tps:
        text += " · " + translate("community.prefill", lang, tps=m.prefill_tps)
    if m.memory_used_gib:
        text += " · " + translate("community.memory_used", lang, gib=m.memory_used_gib)
    return text


def estimate_line(est: EstimateSnapshot | None, lang: Lang) -> str:
    if est is None:
        return translate("community.no_estimate", lang)
    low, mid, high = est.decode_low, est.decode_mid, est.decode_high
    return translate("community.estimated", lang, low=low, high=high, mid=mid)


def credit(sub: Submission) -> str:
    name = display_name(sub.submitter.name)
    if sub.origin == "published":
        return name or inline(sub.source) or "published"
    return name or inline(sub.submitter.user_id, NAME_MAX_CHARS)


def summary(sub: Submission, catalog: Catalog, lang: Lang) -> list[str]:
    """#id, setup, speeds, who/when: the lines a moderator or a subscriber reads."""
    when = sub.source_date or sub.created_at.strftime("%Y-%m-%d")
    return [
        f"#{sub.id} {setup_line(sub.measurement, catalog)}",
        speeds_line(sub.measurement, lang),
        translate("community.by", lang, name=credit(sub), date=when),
    ]
