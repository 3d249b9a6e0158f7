"""Moderation text: a pending submission's /review card, its flags as sentences, the audit log.

Lines are escaped for the chat target here (through render.message.one): a card carries what the
submitter typed (evidence, notes).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from core.catalog.loader import Catalog
from core.i18n import Lang, translate
from core.records import AuditEntry, Submission
from core.render.message import one
from core.render.submission import estimate_line, summary

EVIDENCE_SHOWN = 300  # characters of a pasted log shown in /review (the whole log is stored)


def flag_texts(sub: Submission, lang: Lang) -> list[str]:
    """Each flag as a sentence with its numbers, in the moderator's language (the code when its
    numbers were not kept, e.g. a submission stored before they were)."""
    details = {code: params for code, params in sub.flag_details}
    out = []
    for code in sub.flags:
        try:
            params = json.loads(details[code]) if code in details else None
        except ValueError:
            params = None
        out.append(translate(f"submit.flag.{code}", lang, **params) if params is not None else code)
    return out


def review_card(sub: Submission, catalog: Catalog, lang: Lang, target: str) -> str:
    lines = summary(sub, catalog, lang)
    lines.append(estimate_line(sub.estimate, lang))
    if sub.flags:
        lines.append(translate("review.flags", lang, flags="; ".join(flag_texts(sub, lang))))
    m = sub.measurement
    if m.evidence:
        shown = m.evidence if len(m.evidence) <= EVIDENCE_SHOWN else m.evidence[:EVIDENCE_SHOWN] + "…"
        lines.append(translate("review.evidence", lang, evidence=shown))
    if m.notes:
        lines.append(translate("review.notes", lang, notes=m.notes))
    return one(target, *lines)


def audit_text(entries: Sequence[AuditEntry], lang: Lang, target: str) -> str:
    lines = [translate("review.audit_header", lang, n=len(entries))]
    for e in entries:
        who = f"{e.actor.platform}:{e.actor.name or e.actor.user_id}"
        about = f" #{e.submission_id}" if e.submission_id is not None else ""
        detail = f" ({e.detail})" if e.detail else ""
        lines.append(f"{e.at:%Y-%m-%d %H:%M} {who} {e.action}{about}{detail}")
    return one(target, *lines)


def decision_text(verb: str, sub: Submission, reason: str, catalog: Catalog, lang: Lang, target: str) -> str:
    """What the moderator sees once a submission is decided (it replaces the card)."""
    lines = [translate(f"review.done.{verb}", lang, id=sub.id), *summary(sub, catalog, lang)[:1]]
    if reason:
        lines.append(translate("review.reason", lang, reason=reason))
    return one(target, *lines)
