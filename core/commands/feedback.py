""" "Was this helpful?": 👍 / 👎 under every answer, the helpful share, the 👎 queue for moderators.

Button actions are "h:u:<key>" (helpful) and "h:d:<key>" (not helpful); the key points at the answer
in `bot.answers` (core.commands.answer_log). A vote is stored with the question, the query, the
reply's first lines, the engine version, the platform and the voter; pressing the other button
changes that person's vote on that answer (the storage keeps one per person per answer). The answer
keeps its buttons: the acknowledgement is a toast (Telegram's button notice, Discord's ephemeral
reply, a line in the console).
"""

from __future__ import annotations

import json

from core.ask.answer import Reply
from core.commands.answer_log import Answered
from core.commands.context import BotContext
from core.commands.types import Audience, Button, Invocation, Response, to_asker
from core.community.submit_limits import engine_version
from core.i18n import Lang, translate
from core.render.feedback import helpful_line, plain_head, unhelpful_text
from core.storage.records import Feedback

PREFIX = "h"
VOTES = {"u": True, "d": False}
REVIEW_SHOWN = 10
# /review's argument for the 👎 queue instead of the pending submissions.
FEEDBACK_WORDS: frozenset[str] = frozenset({"feedback", "helpful", "反馈"})


def remember(bot: BotContext, inv: Invocation, question: str, reply: Reply) -> str:
    """Keep what a vote on this answer needs; the key its buttons carry."""
    query = json.dumps(reply.query.as_json(), ensure_ascii=False) if reply.query is not None else "{}"
    lang: Lang = reply.query.lang if reply.query is not None else inv.lang
    return bot.answers.put(
        Answered(
            chat_id=inv.where.chat_id,
            question=question,
            query=query,
            reply=plain_head(reply.text, inv.target),
            engine_version=engine_version(bot.catalog),
            lang=lang,
        )
    )


def buttons(key: str, lang: Lang) -> tuple[Button, ...]:
    return (
        Button(translate("feedback.button.up", lang), f"{PREFIX}:u:{key}", "success"),
        Button(translate("feedback.button.down", lang), f"{PREFIX}:d:{key}", "danger"),
    )


async def act(bot: BotContext, inv: Invocation, parts: list[str]) -> list[Response]:
    """A 👍 / 👎 press: parts = [u | d, key]."""
    helpful = VOTES.get(parts[0]) if parts else None
    answered = bot.answers.get(parts[1], inv.where.chat_id) if len(parts) > 1 else None
    if helpful is None:
        return [to_asker(translate("cmd.unknown_action", inv.lang), status="error")]
    if answered is None:
        return [
            Response(
                translate("feedback.expired", inv.lang), audience=Audience.ASKER, toast=True, status="error"
            )
        ]
    first = await bot.storage.record_feedback(
        Feedback(
            answer_key=parts[1],
            voter=inv.actor,
            chat_id=inv.where.chat_id,
            helpful=helpful,
            question=answered.question,
            query=answered.query,
            reply=answered.reply,
            engine_version=answered.engine_version,
            lang=answered.lang,
            at=bot.clock(),
        )
    )
    key = f"feedback.{'thanks' if first else 'changed'}.{'up' if helpful else 'down'}"
    return [Response(translate(key, answered.lang), audience=Audience.ASKER, toast=True)]


async def helpful_share(bot: BotContext, lang: Lang) -> str:
    """The /accuracy line: how many readers found the answers helpful."""
    return helpful_line(await bot.storage.feedback_counts(), lang)


async def review_feedback(bot: BotContext, inv: Invocation) -> list[Response]:
    """/review feedback (moderators): the answers voted 👎, newest first."""
    counts = await bot.storage.feedback_counts()
    votes = await bot.storage.unhelpful_feedback(REVIEW_SHOWN)
    text = unhelpful_text(votes, counts.unhelpful, inv.lang, inv.target)
    return [Response(text, audience=Audience.ASKER_PRIVATELY)]


def is_answer(response: Response) -> bool:
    """Whether a response is an answer (every answer, and only an answer, carries 👍 / 👎): what
    `python -m bot ask` turns into exit status 0."""
    return any(b.action.startswith(f"{PREFIX}:") for row in response.buttons for b in row)
