"""/subscribe, /unsubscribe, /subscriptions: hear about new measured anchors.

A subscription names a card, a model, both, or everything. Notices go where the person can be
reached privately: on a platform that can't write to someone first (Telegram: a bot may only write
to someone who opened a chat with it) subscribing happens in that private chat (`Place.PRIVATE_CHAT`;
a group gets a pointer there instead).
"""

from __future__ import annotations

from core.commands.context import BotContext
from core.commands.spec import Arg, ArgKind, CommandSpec, Place, arg_text
from core.commands.types import Invocation, Response, to_asker
from core.commands.words import EVERYTHING_WORDS
from core.i18n import Lang, translate
from core.render.candidates import candidate_names
from core.render.message import one
from core.storage.records import Subscription
from core.understanding.parse import parse_question


def _target_name(bot: BotContext, gpu_id: str | None, model_id: str | None, lang: Lang) -> str:
    names = []
    if gpu_id:
        names.append(bot.catalog.gpus[gpu_id].name if gpu_id in bot.catalog.gpus else gpu_id)
    if model_id:
        names.append(bot.catalog.models[model_id].name if model_id in bot.catalog.models else model_id)
    return " + ".join(names) if names else translate("subscribe.everything", lang)


def named_target(bot: BotContext, text: str, lang: Lang) -> tuple[str | None, str | None, list[str]]:
    """(gpu_id, model_id, problems) for what the user named; problems name the closest candidates."""
    parsed = parse_question(text, bot.catalog)
    problems: list[str] = []
    ids: dict[str, str | None] = {"gpu": None, "model": None}
    for kind, res in (("gpu", parsed.gpu), ("model", parsed.model)):
        if res is None:
            continue
        if res.best_id is not None and res.confident:
            ids[kind] = res.best_id
            continue
        names = candidate_names((c for c, _ in res.candidates), bot.catalog, lang, kind)
        problems.append(translate(f"subscribe.unsure.{kind}", lang, names=names or "-"))
    if not problems and ids["gpu"] is None and ids["model"] is None:
        usage = translate("cmd.subscribe.usage", lang)
        problems.append(translate("subscribe.nothing_named", lang, usage=usage))
    return ids["gpu"], ids["model"], problems


async def _subscription_change(bot: BotContext, inv: Invocation) -> list[Response]:
    """/subscribe and /unsubscribe: both name what they are about the same way."""
    lang = inv.lang
    text = arg_text(inv.args, "target")
    if not text:
        usage = translate(f"cmd.{inv.command}.usage", lang)
        return [to_asker(translate("subscribe.need_target", lang, usage=usage), status="error")]
    everything = text.lower() in EVERYTHING_WORDS
    gpu_id = model_id = None
    if not everything:
        gpu_id, model_id, problems = named_target(bot, text, lang)
        if problems:
            return [to_asker(one(inv.target, *problems), status="clarify")]
    what = _target_name(bot, gpu_id, model_id, lang)
    if inv.command == "unsubscribe":
        n = await bot.storage.unsubscribe(inv.actor.platform, inv.actor.user_id, gpu_id, model_id, everything)
        key = "subscribe.removed" if n else "subscribe.none_removed"
        return [to_asker(one(inv.target, translate(key, lang, n=n, what=what)))]
    current = await bot.storage.subscriptions_of(inv.actor.platform, inv.actor.user_id)
    if len(current) >= bot.limits.max_subscriptions:
        limit = bot.limits.max_subscriptions
        return [to_asker(translate("subscribe.too_many", lang, limit=limit), status="error")]
    chat = bot.capabilities(inv.actor.platform).notice_chat(inv.actor, inv.where)
    sub, created = await bot.storage.subscribe(
        Subscription(
            platform=inv.actor.platform,
            user_id=inv.actor.user_id,
            chat_id=chat,
            gpu_id=gpu_id,
            model_id=model_id,
            lang=lang,
            created_at=bot.clock(),
        )
    )
    key = "subscribe.added" if created else "subscribe.already"
    return [to_asker(one(inv.target, translate(key, lang, what=what)))]


async def subscriptions(bot: BotContext, inv: Invocation) -> list[Response]:
    lang = inv.lang
    subs = await bot.storage.subscriptions_of(inv.actor.platform, inv.actor.user_id)
    if not subs:
        return [to_asker(translate("subscribe.list_empty", lang))]
    lines = [translate("subscribe.list_header", lang, n=len(subs))]
    lines += [f"- {_target_name(bot, s.gpu_id, s.model_id, lang)}" for s in subs]
    return [to_asker(one(inv.target, *lines))]


_TARGET = Arg("target", ArgKind.TARGET, "target", required=True)
SPECS = (
    CommandSpec(
        "subscribe", _subscription_change, args=(_TARGET,), place=Place.PRIVATE_CHAT, group_menu=True
    ),
    CommandSpec("unsubscribe", _subscription_change, args=(_TARGET,)),
    CommandSpec("subscriptions", subscriptions),
)
