"""/subscribe, /unsubscribe, /subscriptions: hear about new measured anchors.

A subscription names a card, a model, both, or everything. Notices go where the person can be
reached privately: on Telegram a bot may only write to someone who opened a chat with it, so
subscribing happens in that private chat (a group gets a pointer there instead).
"""

from __future__ import annotations

from core.commands.context import BotContext, language
from core.commands.submit import notice_chat
from core.commands.types import Invocation, Response
from core.i18n import translate
from core.records import Subscription
from core.render.message import one
from core.understanding.parse import parse_question

EVERYTHING = {"all", "everything", "*", "全部", "所有", "全部订阅"}


def _target_name(bot: BotContext, gpu_id: str | None, model_id: str | None, lang: str) -> str:
    names = []
    if gpu_id:
        names.append(bot.catalog.gpus[gpu_id].name if gpu_id in bot.catalog.gpus else gpu_id)
    if model_id:
        names.append(bot.catalog.models[model_id].name if model_id in bot.catalog.models else model_id)
    return " + ".join(names) if names else translate("subscribe.everything", lang)


def named_target(bot: BotContext, text: str, lang: str) -> tuple[str | None, str | None, list[str]]:
    """(gpu_id, model_id, problems) for what the user named; problems name the closest candidates."""
    parsed = parse_question(text, bot.catalog)
    problems: list[str] = []
    ids: dict[str, str | None] = {"gpu": None, "model": None}
    named = (("gpu", parsed.gpu, bot.catalog.gpus), ("model", parsed.model, bot.catalog.models))
    for kind, res, table in named:
        if res is None:
            continue
        if res.best_id is not None and res.confident:
            ids[kind] = res.best_id
            continue
        names = ", ".join(table[c].name for c, _ in res.candidates[:3] if c in table)
        problems.append(translate(f"subscribe.unsure.{kind}", lang, names=names or "-"))
    if not problems and ids["gpu"] is None and ids["model"] is None:
        usage = translate("cmd.subscribe.usage", lang)
        problems.append(translate("subscribe.nothing_named", lang, usage=usage))
    return ids["gpu"], ids["model"], problems


async def run(bot: BotContext, inv: Invocation) -> list[Response]:
    lang = language(inv.text, inv.lang)
    if inv.command == "subscriptions":
        return await _list(bot, inv, lang)
    text = inv.text.strip()
    everything = text.lower() in EVERYTHING
    if not text:
        usage = translate(f"cmd.{inv.command}.usage", lang)
        return [Response(translate("subscribe.need_target", lang, usage=usage), private=True, status="error")]
    if everything:
        gpu_id = model_id = None
    else:
        gpu_id, model_id, problems = named_target(bot, text, lang)
        if problems:
            return [Response(one(inv.target, *problems), private=True, status="clarify")]
    if inv.command == "unsubscribe":
        n = await bot.storage.unsubscribe(inv.actor.platform, inv.actor.user_id, gpu_id, model_id, everything)
        key = "subscribe.removed" if n else "subscribe.none_removed"
        what = _target_name(bot, gpu_id, model_id, lang)
        return [Response(one(inv.target, translate(key, lang, n=n, what=what)), private=True)]
    if inv.actor.platform in bot.limits.private_only and not inv.where.private:
        return [
            Response(
                translate("subscribe.private_only", lang),
                private=True,
                status="refused",
                extra={"deep_link": "subscribe"},
            )
        ]
    current = await bot.storage.subscriptions_of(inv.actor.platform, inv.actor.user_id)
    if len(current) >= bot.limits.max_subscriptions:
        return [
            Response(
                translate("subscribe.too_many", lang, limit=bot.limits.max_subscriptions),
                private=True,
                status="error",
            )
        ]
    sub, created = await bot.storage.subscribe(Subscription(
        platform=inv.actor.platform, user_id=inv.actor.user_id,
        chat_id=notice_chat(inv.actor, inv.where.chat_id, inv.where.private),
        gpu_id=gpu_id, model_id=model_id, lang=lang, created_at=bot.clock(),
    ))  # fmt: skip
    key = "subscribe.added" if created else "subscribe.already"
    return [
        Response(
            one(inv.target, translate(key, lang, what=_target_name(bot, gpu_id, model_id, lang))),
            private=True,
        )
    ]


async def _list(bot: BotContext, inv: Invocation, lang: str) -> list[Response]:
    subs = await bot.storage.subscriptions_of(inv.actor.platform, inv.actor.user_id)
    if not subs:
        return [Response(translate("subscribe.list_empty", lang), private=True)]
    lines = [translate("subscribe.list_header", lang, n=len(subs))]
    lines += [f"- {_target_name(bot, s.gpu_id, s.model_id, lang)}" for s in subs]
    return [Response(one(inv.target, *lines), private=True)]
