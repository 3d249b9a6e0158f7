"""Moderation text: a pending submission's /review card, its flags as sentences, the audit log, a
decision.

Lines are escaped for the chat target here (through render.message.one): a card carries what the
submitter typed (evidence, notes).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from core.catalog.loader import Catalog
from core.i18n import Lang, translate
from core.render.message import one
from core.render.submission import estimate_line, summary
from core.storage.interface import AuditKind
from core.storage.records import AuditEntry, Submission

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


def audit_text(entries: Sequence[AuditEntry], lang: Lang, target: str, kind: AuditKind | None = None) -> str:
    """The audit log, newest first. People by platform and id, never their display name: a name is
    chosen by its owner (it can imitate a moderator's) and changes; the id is who it was."""
    view = translate(f"review.audit_view.{kind or 'all'}", lang)
    lines = [translate("review.audit_header_view", lang, n=len(entries), view=view)]
    for e in entries:
        who = f"{e.actor.platform}:{e.actor.user_id}"
        about = f" #{e.submission_id}" if e.submission_id is not None else ""
        detail = f" ({e.detail})" if e.detail else ""
        times = f" {translate('review.audit_times', lang, count=e.count)}" if e.count > 1 else ""
        lines.append(f"{e.at:%Y-%m-%d %H:%M} {who} {e.action}{about}{detail}{times}")
    return one(target, *lines)


def decision_text(
    verb: str, sub: Submission, reason: str, catalog: Catalog, lang: Lang, target: str, undo_minutes: int = 0
) -> str:
    """What the moderator sees once a submission is decided (it replaces the card), with how long
    they may undo it (approve and reject only)."""
    lines = [translate(f"review.done.{verb}", lang, id=sub.id), *summary(sub, catalog, lang)[:1]]
    if reason:
        lines.append(translate("review.reason", lang, reason=reason))
    if undo_minutes and verb in ("approve", "reject"):
        lines.append(translate("review.undo_hint", lang, minutes=undo_minutes, id=sub.id))
    return one(target, *lines)
