"""/submit: a measurement as key=value fields, pasted benchmark output, a sentence, or a guided
dialogue (plain /submit asks for each missing field in turn)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from core.commands.context import BotContext, language
from core.commands.types import Invocation, Response
from core.i18n import translate
from core.records import Actor, NewSubmission
from core.render.message import one
from core.render.submission import estimate_line, setup_line, speeds_line

CANCEL = {"cancel", "stop", "quit", "/cancel", "取消", "算了", "退出"}


@dataclass
class Dialogue:
    text: str = ""  # pasted output / key=value text gathered so far
    fields: dict[str, str] = field(default_factory=dict)  # answers to the questions asked
    asking: str | None = None
    lang: str = "en"
    updated_at: datetime | None = None


def notice_chat(actor: Actor, chat_id: str, private: bool) -> str:
    """Where to tell this person something later. Discord: their DMs unless they are in one already
    (a channel should not fill with personal notices); the console: the user's own name."""
    if actor.platform == "console":
        return actor.user_id
    if actor.platform == "discord" and not private:
        return f"user:{actor.user_id}"
    return chat_id


def _key(inv: Invocation) -> tuple[str, str, str]:
    return (inv.actor.platform, inv.actor.user_id, inv.where.chat_id)


def in_dialogue(bot: BotContext, inv: Invocation) -> bool:
    d = bot.dialogues.get(_key(inv))
    if d is None:
        return False
    if d.updated_at and bot.clock() - d.updated_at > timedelta(minutes=bot.limits.dialogue_minutes):
        del bot.dialogues[_key(inv)]
        return False
    return True


async def run(bot: BotContext, inv: Invocation) -> list[Response]:
    lang = language(inv.text, inv.lang)
    text = inv.text.strip()
    if not text:
        d = Dialogue(lang=lang, updated_at=bot.clock())
        return _ask_next(bot, inv, d, ("gpu", "model", "quant", "decode"), intro=True)
    return await _attempt(bot, inv, Dialogue(text=text, lang=lang, updated_at=bot.clock()))


async def continue_dialogue(bot: BotContext, inv: Invocation) -> list[Response]:
    d: Dialogue = bot.dialogues[_key(inv)]
    said = inv.text.strip()
    if said.lower() in CANCEL:
        del bot.dialogues[_key(inv)]
        return [Response(one(inv.target, translate("submission.dialogue.cancelled", d.lang)))]
    if "=" in said or "\n" in said or d.asking is None:
        d.text = f"{d.text}\n{said}".strip()  # pasted output or fields: read it as a whole
    else:
        d.fields[d.asking] = said
    d.updated_at = bot.clock()
    return await _attempt(bot, inv, d)


def _ask_next(
    bot: BotContext,
    inv: Invocation,
    d: Dialogue,
    missing: tuple[str, ...],
    intro: bool = False,
    before: list[str] | None = None,
) -> list[Response]:
    d.asking = missing[0]
    bot.dialogues[_key(inv)] = d
    lines = list(before or [])
    if intro:
        lines.append(translate("submission.dialogue.intro", d.lang))
    lines.append(translate(f"submission.dialogue.ask.{d.asking}", d.lang))
    return [Response(one(inv.target, *lines), status="clarify", extra={"expects_reply": "1"})]


async def _attempt(bot: BotContext, inv: Invocation, d: Dialogue) -> list[Response]:
    from core.community.bounded_parse import read_submission_bounded

    reading = await read_submission_bounded(d.text, bot.catalog, d.fields or None)
    lang = d.lang
    if reading.problems:
        lines = [n.text(lang) for n in reading.problems]
        for kind, ids in reading.candidates.items():
            table = bot.catalog.gpus if kind == "gpu" else bot.catalog.models if kind == "model" else {}
            names = ", ".join(table[i].name if i in table else i for i in ids[:3])
            if names:
                lines.append(translate("submission.candidates", lang, field=kind, names=names))
        if _key(inv) in bot.dialogues and d.asking:
            d.fields.pop(d.asking, None)
            return _ask_next(bot, inv, d, (d.asking,), before=lines)
        lines.append(translate("submission.hint", lang))
        return [Response(one(inv.target, *lines), private=True, status="error")]
    if reading.missing or not reading.drafts:
        missing = reading.missing or ("decode",)
        return _ask_next(bot, inv, d, tuple(missing), intro=_key(inv) not in bot.dialogues)
    bot.dialogues.pop(_key(inv), None)
    return await _store(bot, inv, reading.drafts, lang)


async def _store(bot: BotContext, inv: Invocation, drafts, lang: str) -> list[Response]:  # noqa: ANN001
    from core.community.validate import fingerprint

    now = bot.clock()
    actor = inv.actor
    hour_ago = now - timedelta(hours=1)
    recent = await bot.storage.count_submissions_since(actor.platform, actor.user_id, hour_ago)
    chat = notice_chat(actor, inv.where.chat_id, inv.where.private)
    lines: list[str] = []
    stored = 0
    for draft in drafts:
        m = draft.measurement
        if recent + stored >= bot.limits.submissions_per_hour:
            lines.append(translate("submission.rate_limited", lang, limit=bot.limits.submissions_per_hour))
            break
        fp = fingerprint(actor.key, m)
        dup = await bot.storage.find_duplicate(fp)
        if dup is not None:
            state = translate(f"status.{dup.status}", lang)
            lines.append(translate("submission.duplicate", lang, id=dup.id, status=state))
            continue
        sub = await bot.storage.add_submission(NewSubmission(
            measurement=m, submitter=actor, created_at=now, chat_id=chat, lang=lang,
            estimate=draft.estimate, flags=tuple(draft.flags), fingerprint=fp,
            flag_details=tuple((n.code.removeprefix("submit.flag."), json.dumps(n.params, default=str))
                               for n in draft.flag_notes),
        ))  # fmt: skip
        stored += 1
        lines.append(translate("submission.received", lang, id=sub.id))
        lines.append(setup_line(m, bot.catalog))
        lines.append(speeds_line(m, lang) + " · " + estimate_line(draft.estimate, lang))
        lines += [translate("submission.flag_intro", lang) + " " + n.text(lang) for n in draft.flag_notes]
    if stored:
        lines.append(translate("submission.next", lang))
    status = "ok" if stored else "error"
    return [Response(one(inv.target, *lines), status=status)]
