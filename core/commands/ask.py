"""/ask and plain questions, and the follow-up buttons under an answer."""

from __future__ import annotations

from typing import Any

from core.answer import Reply, answer, chart, follow_up
from core.commands.context import BotContext
from core.commands.types import Button, Invocation, Response
from core.i18n import translate

# Button action prefix "v": "v:<view>:<key>[:<quant>]" (views below), always <= 64 bytes.
VIEWS = {"f": "frameworks", "s": "speculative", "q": "quant", "c": "chart"}


def _answer(bot: BotContext, text: str, lang: str | None, target: str) -> Reply:
    if bot.anchors is not None:
        try:
            return answer(text, bot.catalog, lang=lang, target=target, anchors=bot.anchors)  # type: ignore[call-arg]
        except TypeError:  # an answer() without anchor support: plain estimate
            pass
    return answer(text, bot.catalog, lang=lang, target=target)


def _buttons(key: str, query: dict[str, Any], lang: str) -> tuple[tuple[Button, ...], ...]:
    first = (query.get("quants") or [None])[0]
    row = [
        Button(translate("ask.button.frameworks", lang), f"v:f:{key}"),
        Button(translate("ask.button.speculative", lang), f"v:s:{key}"),
        Button(translate("ask.button.chart", lang), f"v:c:{key}"),
    ]
    if first:
        row.insert(0, Button(translate("ask.button.quant", lang, quant=first), f"v:q:{key}:{first}"[:64]))
    return (tuple(row),)


async def run(bot: BotContext, inv: Invocation) -> list[Response]:
    text = inv.text.strip()
    reply = _answer(bot, text, inv.lang if inv.lang in ("en", "zh") and not text else None, inv.target)
    if reply.status == "help" and not text:
        from core.commands import help as help_cmd

        return await help_cmd.run(bot, inv)
    buttons: tuple[tuple[Button, ...], ...] = ()
    full = reply.query.get("gpu", {}).get("id") and reply.query.get("model", {}).get("id")
    if reply.status == "answer" and full:
        key = bot.followups.put(reply.query)
        buttons = _buttons(key, reply.query, reply.query.get("lang", "en"))
    status = {"answer": "ok", "help": "ok"}.get(reply.status, reply.status)
    return [Response(text=reply.text, buttons=buttons, status=status)]


async def act(bot: BotContext, inv: Invocation, parts: list[str]) -> list[Response]:
    """A follow-up button: parts = [view, key, (quant)]."""
    view = VIEWS.get(parts[0]) if parts else None
    query = bot.followups.get(parts[1]) if len(parts) > 1 else None
    lang = (query or {}).get("lang") or inv.lang or "en"
    if view is None or query is None:
        return [Response(translate("ask.expired", lang), private=True, status="error")]
    if view == "chart":
        try:
            png = chart(query, bot.catalog, lang)
        except Exception:  # noqa: BLE001 - matplotlib missing or a bad query: say so, don't crash
            return [Response(translate("ask.no_chart", lang), private=True, status="error")]
        return [Response(text=translate("ask.chart_caption", lang), photo=png)]
    quant = parts[2] if len(parts) > 2 else None
    reply = follow_up(query, view, bot.catalog, lang=lang, target=inv.target, quant=quant)
    return [Response(text=reply.text, status="ok" if reply.status == "answer" else reply.status)]
