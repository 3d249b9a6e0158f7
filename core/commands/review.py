"""Moderation: /review, /approve, /reject, /withdraw and their buttons.

Permission is checked here, on every action, whatever the button or command claims: a forged
callback from a non-moderator changes nothing, is refused, and is written to the audit log.
Button actions: "m:a:ID" approve, "m:r:ID" reject (asks for a reason), "m:w:ID" withdraw (asks).
"""

from __future__ import annotations

import json
import re

from core.commands.context import BotContext, language
from core.commands.types import Button, Invocation, Prompt, Response
from core.i18n import translate
from core.records import AuditEntry, Submission
from core.render.message import one
from core.render.submission import estimate_line, summary
from core.storage.interface import NotFound, WrongState

_ID = re.compile(r"^#?(\d{1,12})(?:\s+(.*))?$", re.DOTALL)
# Moderation material (pending submissions, the audit log, exports): platforms without ephemeral
# messages (Telegram) send it to the moderator's private chat rather than to a group.
MODERATION = {"moderation": "1"}
EVIDENCE_SHOWN = 300  # characters of a pasted log shown in /review (the whole log is stored)


async def refuse(bot: BotContext, inv: Invocation, action: str, submission_id: int | None) -> list[Response]:
    """A moderator-only action by someone else: nothing happens, the attempt goes to the audit log."""
    await bot.storage.record_audit(AuditEntry(
        at=bot.clock(), actor=inv.actor, action=f"refused:{action}", submission_id=submission_id, ok=False,
        detail="not a moderator",
    ))  # fmt: skip
    lang = language(inv.text, inv.lang)
    return [Response(translate("review.not_moderator", lang), private=True, status="refused")]


def _buttons(sub: Submission, lang: str) -> tuple[tuple[Button, ...], ...]:
    return ((
        Button(translate("review.button.approve", lang), f"m:a:{sub.id}", "success"),
        Button(translate("review.button.reject", lang), f"m:r:{sub.id}", "danger"),
    ),)  # fmt: skip


def flag_texts(sub: Submission, lang: str) -> list[str]:
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


def review_card(bot: BotContext, sub: Submission, lang: str, target: str) -> str:
    lines = summary(sub, bot.catalog, lang)
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


async def _list(bot: BotContext, inv: Invocation, lang: str) -> list[Response]:
    pending = await bot.storage.submissions(status="pending", origin="community")
    if not pending:
        return [Response(translate("review.empty", lang), private=True)]
    oldest_first = list(reversed(pending))[: bot.limits.review_page]
    head = translate("review.header", lang, shown=len(oldest_first), total=len(pending))
    out = [Response(one(inv.target, head), private=True, extra=MODERATION)]
    for sub in oldest_first:
        card = review_card(bot, sub, lang, inv.target)
        out.append(Response(card, buttons=_buttons(sub, lang), private=True, extra=MODERATION))
    return out


AUDIT_SHOWN = 20


async def _audit(bot: BotContext, inv: Invocation, lang: str) -> list[Response]:
    entries = await bot.storage.audit_log(AUDIT_SHOWN)
    if not entries:
        return [Response(translate("review.audit_empty", lang), private=True)]
    lines = [translate("review.audit_header", lang, n=len(entries))]
    for e in entries:
        who = f"{e.actor.platform}:{e.actor.name or e.actor.user_id}"
        target = f" #{e.submission_id}" if e.submission_id is not None else ""
        detail = f" ({e.detail})" if e.detail else ""
        lines.append(f"{e.at:%Y-%m-%d %H:%M} {who} {e.action}{target}{detail}")
    return [Response(one(inv.target, *lines), private=True, extra=MODERATION)]


async def _decide_submission(
    bot: BotContext, inv: Invocation, verb: str, submission_id: int, reason: str, lang: str
) -> list[Response]:
    now = bot.clock()
    try:
        if verb == "approve":
            sub = await bot.storage.approve(submission_id, inv.actor, now)
        elif verb == "reject":
            sub = await bot.storage.reject(submission_id, inv.actor, reason, now)
        else:
            sub = await bot.storage.withdraw(submission_id, inv.actor, reason, now)
    except NotFound:
        return [Response(translate("review.not_found", lang, id=submission_id), private=True, status="error")]
    except WrongState as exc:
        state = translate(f"status.{exc.status}", lang)
        return [
            Response(
                translate("review.wrong_state", lang, id=submission_id, status=state),
                private=True,
                status="error",
            )
        ]
    if bot.anchors is not None:
        if verb == "approve":
            bot.anchors = bot.anchors.with_added(sub)
        elif verb == "withdraw":
            bot.anchors = bot.anchors.without(sub.id)
    if bot.on_outbox is not None:
        bot.on_outbox()
    lines = [translate(f"review.done.{verb}", lang, id=sub.id), *summary(sub, bot.catalog, lang)[:1]]
    if reason:
        lines.append(translate("review.reason", lang, reason=reason))
    return [Response(one(inv.target, *lines), edit=True)]


def _parse(text: str) -> tuple[int | None, str]:
    m = _ID.match(text.strip())
    if not m:
        return None, ""
    return int(m.group(1)), (m.group(2) or "").strip()


async def run(bot: BotContext, inv: Invocation) -> list[Response]:
    lang = language(inv.text, inv.lang)
    submission_id, reason = _parse(inv.text)
    if not bot.moderators.allows(inv.actor):
        return await refuse(bot, inv, inv.command, submission_id)
    if inv.command == "review":
        if inv.text.strip().lower() in ("audit", "log", "日志"):
            return await _audit(bot, inv, lang)
        return await _list(bot, inv, lang)
    if submission_id is None:
        usage = translate(f"cmd.{inv.command}.usage", lang)
        return [Response(translate("review.need_id", lang, usage=usage), private=True, status="error")]
    if inv.command in ("reject", "withdraw") and not reason:
        title = translate(f"review.prompt.{inv.command}", lang, id=submission_id)
        return [
            Response(
                title, private=True, prompt=Prompt(title, f"{inv.command} {submission_id}"), status="clarify"
            )
        ]
    return await _decide_submission(bot, inv, inv.command, submission_id, reason, lang)


_VERBS = {"a": "approve", "r": "reject", "w": "withdraw"}


async def act(bot: BotContext, inv: Invocation, parts: list[str]) -> list[Response]:
    verb = _VERBS.get(parts[0]) if parts else None
    submission_id = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    lang = language("", inv.lang)
    if verb is None or submission_id is None:
        return [Response(translate("cmd.unknown_action", lang), private=True, status="error")]
    return await run(bot, Invocation(inv.actor, inv.where, verb, str(submission_id), inv.lang, inv.target))
