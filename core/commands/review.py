"""Moderation: /review, /approve, /reject, /withdraw and their buttons.

Permission is checked here, on every action, whatever the button or command claims: a forged
callback from a non-moderator changes nothing, is refused, and is written to the audit log.
Button actions: "m:a:ID" approve, "m:r:ID" reject (asks for a reason), "m:w:ID" withdraw (asks),
"m:u:ID" undo (the deciding moderator's own approve / reject, for bot.limits.undo_minutes).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core.commands import feedback
from core.commands.context import BotContext
from core.commands.spec import ActionSpec, Arg, ArgKind, CommandSpec, arg_id, arg_text
from core.commands.types import Audience, Button, Invocation, Prompt, Response, to_asker
from core.commands.words import AUDIT_DECISION_WORDS, AUDIT_REFUSED_WORDS, AUDIT_WORDS, is_cancel
from core.i18n import Lang, translate
from core.render.message import one
from core.render.moderation import audit_text, decision_text, review_card
from core.storage.interface import AuditKind, DuplicateSubmission, NotFound, UndoRefused, WrongState
from core.storage.records import AuditEntry, Submission

# Moderation material (pending submissions, the audit log, exports) is `Audience.ASKER_PRIVATELY`:
# platforms without ephemeral messages (Telegram) send it to the moderator's private chat.


async def refuse(bot: BotContext, inv: Invocation, action: str, submission_id: int | None) -> list[Response]:
    """A moderator-only action by someone else: nothing happens, the attempt goes to the audit log."""
    # Aggregated (one row per actor, action and minute): a flood of forged presses can't push the real
    # decisions out of /review audit, nor write a row per press.
    await bot.storage.record_refused(
        AuditEntry(
            at=bot.clock(),
            actor=inv.actor,
            action=f"refused:{action}",
            submission_id=submission_id,
            ok=False,
            detail="not a moderator",
        )
    )
    return [to_asker(translate("review.not_moderator", inv.lang), status="refused")]


def _buttons(sub: Submission, lang: Lang) -> tuple[tuple[Button, ...], ...]:
    return (
        (
            Button(translate("review.button.approve", lang), f"m:a:{sub.id}", "success"),
            Button(translate("review.button.reject", lang), f"m:r:{sub.id}", "danger"),
        ),
    )


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


def _audit_view(view: str) -> tuple[bool, AuditKind | None]:
    """Whether "/review <view>" asks for the audit log, and which of its entries ("audit refused")."""
    first, _, rest = view.strip().lower().partition(" ")
    if first not in AUDIT_WORDS:
        return False, None
    rest = rest.strip()
    if rest in AUDIT_DECISION_WORDS:
        return True, "decisions"
    return True, ("refused" if rest in AUDIT_REFUSED_WORDS else None)


async def _audit(
    bot: BotContext, inv: Invocation, lang: Lang, kind: AuditKind | None = None
) -> list[Response]:
    entries = await bot.storage.audit_log(AUDIT_SHOWN, kind=kind)
    if not entries:
        return [to_asker(translate("review.audit_empty", lang))]
    return [Response(audit_text(entries, lang, inv.target, kind), audience=Audience.ASKER_PRIVATELY)]


def _cannot_decide(exc: NotFound | WrongState, submission_id: int, lang: Lang) -> list[Response]:
    """A decision or undo the storage refused: no such submission, or not in a state for it."""
    if isinstance(exc, NotFound):
        return [to_asker(translate("review.not_found", lang, id=submission_id), status="error")]
    state = translate(f"status.{exc.status}", lang)
    return [to_asker(translate("review.wrong_state", lang, id=submission_id, status=state), status="error")]


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
    except (NotFound, WrongState) as exc:
        return _cannot_decide(exc, submission_id, lang)
    if bot.anchors is not None:
        if verb == "approve":
            bot.anchors = bot.anchors.with_added(sub)
        elif verb == "withdraw":
            bot.anchors = bot.anchors.without(sub.id)
    if bot.on_outbox is not None:
        bot.on_outbox()
    text = decision_text(verb, sub, reason, bot.catalog, lang, inv.target, bot.limits.undo_minutes)
    undo = ((Button(translate("review.button.undo", lang), f"m:u:{sub.id}", "secondary"),),)
    return [Response(text, buttons=undo if verb in UNDOABLE else (), edit=True)]


UNDOABLE = ("approve", "reject")


async def undo(bot: BotContext, inv: Invocation) -> list[Response]:
    """/undo ID: the moderator's own approve or reject, within bot.limits.undo_minutes, back to pending
    (audited; the notices not yet delivered are dropped). The card comes back with its buttons."""
    lang, submission_id = inv.lang, arg_id(inv.args)
    if submission_id is None:
        usage = translate("cmd.undo.usage", lang)
        return [to_asker(translate("review.need_id", lang, usage=usage), status="error")]
    now, minutes = bot.clock(), bot.limits.undo_minutes
    try:
        outcome = await bot.storage.undo_decision(
            submission_id, inv.actor, now, now - timedelta(minutes=minutes)
        )
    except (NotFound, WrongState) as exc:
        return _cannot_decide(exc, submission_id, lang)
    except UndoRefused:
        return [
            to_asker(translate("review.undo_refused", lang, id=submission_id, minutes=minutes), "refused")
        ]
    except DuplicateSubmission as exc:
        state = translate("status.pending", lang)
        return [to_asker(translate("submission.duplicate", lang, id=exc.existing_id, status=state), "error")]
    sub = outcome.submission
    if bot.anchors is not None:
        bot.anchors = bot.anchors.without(sub.id)
    lines = [translate("review.undone", lang, id=sub.id, status=translate("status.pending", lang))]
    if outcome.notices_sent:
        lines.append(translate("review.undo_sent", lang, n=outcome.notices_sent))
    head = one(inv.target, *lines)
    card = review_card(sub, bot.catalog, lang, inv.target)
    return [Response(f"{head}\n\n{card}", buttons=_buttons(sub, lang), edit=True)]


async def review(bot: BotContext, inv: Invocation) -> list[Response]:
    if arg_text(inv.args, "view").lower() in feedback.FEEDBACK_WORDS:
        return await feedback.review_feedback(bot, inv)
    is_audit, kind = _audit_view(arg_text(inv.args, "view"))
    if is_audit:
        return await _audit(bot, inv, inv.lang, kind)
    return await _list(bot, inv, inv.lang)


async def decide(bot: BotContext, inv: Invocation) -> list[Response]:
    """/approve ID, /reject ID REASON, /withdraw ID REASON (a reason is asked for when missing)."""
    lang = inv.lang
    submission_id, reason = arg_id(inv.args), arg_text(inv.args, "reason")
    if submission_id is None:
        usage = translate(f"cmd.{inv.command}.usage", lang)
        return [to_asker(translate("review.need_id", lang, usage=usage), status="error")]
    if inv.command in ("reject", "withdraw") and is_cancel(reason):
        # The answer to "why reject?" was "cancel" (取消): the reject is called off, not given that reason.
        verb = translate(f"review.verb.{inv.command}", lang)
        return [to_asker(translate("review.cancelled", lang, id=submission_id, verb=verb))]
    if inv.command in ("reject", "withdraw") and not reason:
        title = translate(f"review.prompt.{inv.command}", lang, id=submission_id)
        hint = translate("review.prompt.cancel_hint", lang)
        prompt = Prompt(title, f"{inv.command} {submission_id}", placeholder=hint)
        return [Response(f"{title}\n{hint}", audience=Audience.ASKER, prompt=prompt, status="clarify")]
    return await _decide_submission(bot, inv, inv.command, submission_id, reason, lang)


_VERBS = {"a": "approve", "r": "reject", "w": "withdraw", "u": "undo"}


async def act(bot: BotContext, inv: Invocation, parts: list[str]) -> list[Response]:
    """A card's button: "m:a:ID" approve, "m:r:ID" reject, "m:w:ID" withdraw; checked like the command."""
    verb = _VERBS.get(parts[0]) if parts else None
    submission_id = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    if verb is None or submission_id is None:
        return [to_asker(translate("cmd.unknown_action", inv.lang), status="error")]
    if not bot.moderators.allows(inv.actor):
        return await refuse(bot, inv, verb, submission_id)
    pressed = replace(inv, command=verb, text=str(submission_id), args={"id": submission_id})
    return await (undo(bot, pressed) if verb == "undo" else decide(bot, pressed))


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
    CommandSpec("undo", undo, args=(_ID_ARG,), moderator_only=True),
)
