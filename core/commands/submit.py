"""/submit: a measurement as key=value fields, pasted benchmark output, a sentence, or a guided
dialogue (plain /submit asks for each missing field in turn)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from core.commands.context import BotContext
from core.commands.spec import Arg, ArgKind, CommandSpec, arg_text
from core.commands.types import ArgValue, Invocation, Response, to_asker
from core.commands.words import is_cancel
from core.i18n import Lang, translate
from core.render.message import one
from core.render.submission import estimate_line, setup_line, speeds_line
from core.storage.records import NewSubmission

if TYPE_CHECKING:
    from core.community.validate import Draft

# What the guided form asks for, in order (the dialogue here, Discord's modal): the required fields.
FORM = ("gpu", "model", "quant", "decode")
# Fields a typed platform offers as options of their own (Discord); in text they are key=value.
TYPED_FIELDS: tuple[tuple[str, ArgKind], ...] = (
    ("gpu", ArgKind.GPU),
    ("model", ArgKind.MODEL),
    ("quant", ArgKind.WORD),
    ("decode", ArgKind.NUMBER),
    ("prefill", ArgKind.NUMBER),
    ("ctx", ArgKind.WORD),
    ("framework", ArgKind.WORD),
    ("notes", ArgKind.TEXT),
    ("evidence", ArgKind.TEXT),
)


@dataclass
class Dialogue:
    text: str = ""  # pasted output / key=value text gathered so far
    fields: dict[str, str] = field(default_factory=dict)  # answers to the questions asked
    asking: str | None = None
    lang: Lang = "en"
    updated_at: datetime | None = None
    # When this person's recent dialogue messages came (the throttle), and whether the one "slow
    # down" of the current burst was said already.
    recent: list[datetime] = field(default_factory=list)
    warned: bool = False

    def size(self) -> int:
        return len(self.text) + sum(len(v) for v in self.fields.values())


# A lone surrogate (half of a UTF-16 pair, e.g. from a cut emoji) can't be stored or sent as UTF-8.
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _bad_unicode(inv: Invocation, lang: Lang) -> list[Response]:
    return [to_asker(one(inv.target, translate("submission.bad_unicode", lang)), status="error")]


def _typed_fields(args: Mapping[str, ArgValue]) -> dict[str, str]:
    """Typed options as the submission reader's fields (a number as people write it: 21.5, not 21.50)."""
    out: dict[str, str] = {}
    for name, _kind in TYPED_FIELDS:
        value = args.get(name)
        if value is None:
            continue
        raw = f"{value:g}" if isinstance(value, float) else str(value).strip()
        if raw:
            out[name] = raw
    return out


# Issue 24: the rule questions are read by (core/understanding/normalize.py: zero-width, bidi
# marks and overrides, word joiners, BOM) plus Unicode tag characters, applied to the ack too: it
# echoes the names and notes as typed.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\U000e0000-\U000e007f]")
SWEEP_EVERY = timedelta(minutes=1)


def sweep_dialogues(bot: BotContext) -> int:
    """Drop every guided /submit left open past its time (issue 24: 2,000 were left after 20,000
    users), at most once a minute; returns how many were dropped."""
    now = bot.clock()
    if bot.dialogues_swept is not None and now - bot.dialogues_swept < SWEEP_EVERY:
        return 0
    bot.dialogues_swept = now
    stale = timedelta(minutes=bot.limits.dialogue_minutes)
    old = [k for k, d in bot.dialogues.items() if d.updated_at and now - d.updated_at > stale]
    for key in old:
        del bot.dialogues[key]
    return len(old)


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
    text, fields = arg_text(inv.args, "text"), _typed_fields(inv.args)
    if _LONE_SURROGATE.search(text) or any(_LONE_SURROGATE.search(v) for v in fields.values()):
        return _bad_unicode(inv, inv.lang)
    if not text and not fields:
        sweep_dialogues(bot)
        d = Dialogue(lang=inv.lang, updated_at=bot.clock())
        return _ask_next(bot, inv, d, FORM, intro=True)
    return await _attempt(bot, inv, Dialogue(text=text, fields=fields, lang=inv.lang, updated_at=bot.clock()))


async def continue_dialogue(bot: BotContext, inv: Invocation) -> list[Response]:
    d: Dialogue = bot.dialogues[_key(inv)]
    said = inv.text.strip()
    if is_cancel(said):
        del bot.dialogues[_key(inv)]
        return [Response(one(inv.target, translate("submission.dialogue.cancelled", d.lang)))]
    paced = _pace(bot, inv, d)
    if paced is not None:
        return paced
    if _LONE_SURROGATE.search(said):
        return _bad_unicode(inv, d.lang)
    if d.size() + len(said) > bot.limits.dialogue_max_chars:
        # Every message re-reads the whole text: past the cap the dialogue starts over instead.
        del bot.dialogues[_key(inv)]
        max_kb = bot.limits.dialogue_max_chars // 1000
        return [to_asker(one(inv.target, translate("submission.dialogue.too_long", d.lang, max_kb=max_kb)))]
    if "=" in said or "\n" in said or d.asking is None:
        d.text = f"{d.text}\n{said}".strip()  # pasted output or fields: read it as a whole
    else:
        d.fields[d.asking] = said
    d.updated_at = bot.clock()
    return await _attempt(bot, inv, d)


def _pace(bot: BotContext, inv: Invocation, d: Dialogue) -> list[Response] | None:
    """None when this message may be read; else the burst's one "slow down" (its first extra
    message) or nothing at all (the ones after it), so a flood costs neither reads nor replies."""
    now, limits = bot.clock(), bot.limits
    window = timedelta(seconds=limits.dialogue_burst_seconds)
    d.recent = [t for t in d.recent if now - t < window]
    if len(d.recent) < limits.dialogue_burst:
        d.recent.append(now)
        d.warned = False
        return None
    if d.warned:
        return []
    d.warned = True
    n, seconds = limits.dialogue_burst, limits.dialogue_burst_seconds
    text = translate("submission.dialogue.slow_down", d.lang, n=n, seconds=seconds)
    return [to_asker(one(inv.target, text), status="refused")]


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
    return [Response(one(inv.target, *lines), status="clarify", expects_reply=True)]


async def _attempt(bot: BotContext, inv: Invocation, d: Dialogue) -> list[Response]:
    from core.community.bounded_parse import read_submission_bounded

    reading = await read_submission_bounded(d.text, bot.catalog, d.fields or None)
    lang = d.lang
    if reading.problems:
        # Each problem names its closest candidates itself (submit.unknown_gpu: "Closest: ..."):
        # listing them again under it said the same thing twice.
        lines = [n.text(lang) for n in reading.problems]
        if _key(inv) in bot.dialogues and d.asking:
            d.fields.pop(d.asking, None)
            return _ask_next(bot, inv, d, (d.asking,), before=lines)
        lines.append(translate("submission.hint", lang))
        return [to_asker(one(inv.target, *lines), status="error")]
    if reading.missing or not reading.drafts:
        missing = reading.missing or ("decode",)
        return _ask_next(bot, inv, d, tuple(missing), intro=_key(inv) not in bot.dialogues)
    bot.dialogues.pop(_key(inv), None)
    return await _store(bot, inv, reading.drafts, lang)


async def _store(bot: BotContext, inv: Invocation, drafts: Sequence[Draft], lang: Lang) -> list[Response]:
    from core.community.validate import fingerprint

    now = bot.clock()
    actor = inv.actor
    hour_ago = now - timedelta(hours=1)
    chat = bot.capabilities(actor.platform).notice_chat(actor, inv.where)
    lines: list[str] = []
    stored = 0
    for draft in drafts:
        m = draft.measurement
        fp = fingerprint(actor.key, m)
        # One atomic storage step (duplicate look-up, rate count, insert): concurrent /submit from one
        # user can't walk past the limit or store the same measurement twice (issue 13).
        outcome = await bot.storage.add_submission_checked(
            NewSubmission(
                measurement=m,
                submitter=actor,
                created_at=now,
                chat_id=chat,
                lang=lang,
                estimate=draft.estimate,
                flags=tuple(draft.flags),
                fingerprint=fp,
                flag_details=tuple(
                    (n.code.removeprefix("submit.flag."), json.dumps(n.params, default=str))
                    for n in draft.flag_notes
                ),
            ),
            since=hour_ago,
            limit=bot.limits.submissions_per_hour,
        )
        if outcome.result == "rate_limited":
            lines.append(translate("submission.rate_limited", lang, limit=bot.limits.submissions_per_hour))
            break
        sub = outcome.submission
        assert sub is not None
        if outcome.result == "duplicate":
            state = translate(f"status.{sub.status}", lang)
            lines.append(translate("submission.duplicate", lang, id=sub.id, status=state))
            continue
        stored += 1
        lines.append(translate("submission.received", lang, id=sub.id))
        lines.append(setup_line(m, bot.catalog))
        lines.append(speeds_line(m, lang) + " · " + estimate_line(draft.estimate, lang))
        lines += [translate("submission.flag_intro", lang) + " " + n.text(lang) for n in draft.flag_notes]
    if stored:
        lines.append(translate("submission.next", lang))
    lines = [_INVISIBLE.sub("", line) for line in lines]  # the ack echoes what was typed
    status = "ok" if stored else "error"
    caps = bot.capabilities(actor.platform)
    if stored and not inv.where.private and not caps.unprompted_dm:
        # The decision (and a rejection's reason) goes to the submitter's private chat, never to this
        # group; on a platform that can't write first, that chat must have been opened once.
        lines.append(translate("submission.decision_privately", lang))
        return [Response(one(inv.target, *lines), status=status, private_chat_topic=SPEC_NAME)]
    return [Response(one(inv.target, *lines), status=status)]


SPEC_NAME = "submit"


SPEC = CommandSpec(
    SPEC_NAME,
    run,
    args=(
        *(Arg(name, kind, f"submit.{name}", typed_only=True) for name, kind in TYPED_FIELDS),
        Arg("text", ArgKind.TEXT, "submit.text"),
    ),
    slow=True,
    group_menu=True,
    form=FORM,
    form_messages="submission.form",
)
