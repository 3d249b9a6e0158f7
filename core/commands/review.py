"""Moderation: /review, /approve, /reject, /withdraw and their buttons.

Permission is checked here, on every action, whatever the button or command claims: a forged
callback from a non-moderator changes nothing, is refused, and is written to the audit log.
Button actions: "m:a:ID" approve, "m:r:ID" reject (asks for a reason), "m:w:ID" withdraw (asks).
"""

from __future__ import annotations

from dataclasses import replace

from core.commands.context import BotContext
from core.commands.spec import ActionSpec, Arg, ArgKind, CommandSpec, arg_id, arg_text
from core.commands.types import Audience, Button, Invocation, Prompt, Response, to_asker
from core.commands.words import AUDIT_WORDS
from core.i18n import Lang, translate
from core.records import AuditEntry, Submission
from core.render.message import one
from core.render.moderation import audit_text, decision_text, review_card
from core.storage.interface import NotFound, WrongState

# Moderation material (pending submissions, the audit log, exports) is `Audience.ASKER_PRIVATELY`:
# platforms without ephemeral messages (Telegram) send it to the moderator's private chat.


async def refuse(bot: BotContext, inv: Invocation, action: str, submission_id: int | None) -> list[Response]:
    """A moderator-only action by someone else: nothing happens, the attempt goes to the audit log."""
    await bot.storage.record_audit(AuditEntry(
        at=bot.clock(), actor=inv.actor, action=f"refused:{action}", submission_id=submission_id, ok=False,
        detail="not a moderator",
    ))  # fmt: skip
    return [to_asker(translate("review.not_moderator", inv.lang), status="refused")]


def _buttons(sub: Submission, lang: Lang) -> tuple[tuple[Button, ...], ...]:
    return ((
        Button(translate("review.button.approve", lang), f"m:a:{sub.id}", "success"),
        Button(translate("review.button.reject", lang), f"m:r:{sub.id}", "danger"),
    ),)  # fmt: skip


async def _list(bot: BotContext, inv: Invocation, lang: Lang) -> list[Response]:
    pending = await bot.storage.submissions(status="pending", origin="community")
    if not pending:
        return [to_asker(translate("review.empty", lang))]
    oldest_first = list(reversed(pending))[: bot.limits.review_page]
    head = translate("review.header", lang, shown=len(oldest_first), total=len(pending))
    out = [Response(one(inv.target, head), audience=Audience.ASKER_PRIVATELY)]
    for sub in oldest_first:
        card = review_card(sub, bot.catalog, lang, inv.target)
        out.append(Response(card, buttons=_buttons(sub, lang), audience=Audience.ASKER_PRIVATELY))
    return out


AUDIT_SHOWN = 20


async def _audit(bot: BotContext, inv: Invocation, lang: Lang) -> list[Response]:
    entries = await bot.storage.audit_log(AUDIT_SHOWN)
    if not entries:
        return [to_asker(translate("review.audit_empty", lang))]
    return [Response(audit_text(entries, lang, inv.target), audience=Audience.ASKER_PRIVATELY)]


async def _decide_submission(
    bot: BotContext, inv: Invocation, verb: str, submission_id: int, reason: str, lang: Lang
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
        return [to_asker(translate("review.not_found", lang, id=submission_id), status="error")]
    except WrongState as exc:
        state = translate(f"status.{exc.status}", lang)
        return [
            to_asker(translate("review.wrong_state", lang, id=submission_id, status=state), status="error")
        ]
    if bot.anchors is not None:
        if verb == "approve":
            bot.anchors = bot.anchors.with_added(sub)
        elif verb == "withdraw":
            bot.anchors = bot.anchors.without(sub.id)
    if bot.on_outbox is not None:
        bot.on_outbox()
    return [Response(decision_text(verb, sub, reason, bot.catalog, lang, inv.target), edit=True)]


async def review(bot: BotContext, inv: Invocation) -> list[Response]:
    if arg_text(inv.args, "view").lower() in AUDIT_WORDS:
        return await _audit(bot, inv, inv.lang)
    return await _list(bot, inv, inv.lang)


async def decide(bot: BotContext, inv: Invocation) -> list[Response]:
    """/approve ID, /reject ID REASON, /withdraw ID REASON (a reason is asked for when missing)."""
    lang = inv.lang
    submission_id, reason = arg_id(inv.args), arg_text(inv.args, "reason")
    if submission_id is None:
        usage = translate(f"cmd.{inv.command}.usage", lang)
        return [to_asker(translate("review.need_id", lang, usage=usage), status="error")]
    if inv.command in ("reject", "withdraw") and not reason:
        title = translate(f"review.prompt.{inv.command}", lang, id=submission_id)
        prompt = Prompt(title, f"{inv.command} {submission_id}")
        return [Response(title, audience=Audience.ASKER, prompt=prompt, status="clarify")]
    return await _decide_submission(bot, inv, inv.command, submission_id, reason, lang)


_VERBS = {"a": "approve", "r": "reject", "w": "withdraw"}


async def act(bot: BotContext, inv: Invocation, parts: list[str]) -> list[Response]:
    """A card's button: "m:a:ID" approve, "m:r:ID" reject, "m:w:ID" withdraw; checked like the command."""
    verb = _VERBS.get(parts[0]) if parts else None
    submission_id = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    if verb is None or submission_id is None:
        return [to_asker(translate("cmd.unknown_action", inv.lang), status="error")]
    if not bot.moderators.allows(inv.actor):
        return await refuse(bot, inv, verb, submission_id)
    return await decide(bot, replace(inv, command=verb, text=str(submission_id), args={"id": submission_id}))


_ID_ARG = Arg("id", ArgKind.ID, "id.submission", required=True)
_ANCHOR_ARG = Arg("id", ArgKind.ID, "id.anchor", required=True)
SPECS = (
    CommandSpec(
        "review",
        review,
        args=(Arg("view", ArgKind.TEXT, "review.view", typed_only=False),),
        slow=True,
        private=True,
        moderator_only=True,
        actions=(ActionSpec("m", act),),
    ),
    CommandSpec("approve", decide, args=(_ID_ARG,), moderator_only=True),
    CommandSpec(
        "reject", decide, args=(_ID_ARG, Arg("reason", description="reject.reason")), moderator_only=True
    ),
    CommandSpec(
        "withdraw",
        decide,
        args=(_ANCHOR_ARG, Arg("reason", description="withdraw.reason")),
        moderator_only=True,
    ),
)
