"""/ask and plain questions, and the follow-up buttons under an answer.

Button actions are "v:<view>:<key>[:<arg>]" (<= 64 bytes): q = one quant in full, f = frameworks
and their commands, s = speculative decoding, c = chart, o = the same answer for another OS,
k = the same answer with another KV cache type. The key points at the answer's query, kept in
memory (`FollowUps`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from core.ask_use_case import Reply, answer, answer_query, chart, estimate_for, follow_up
from core.catalog.loader import Catalog
from core.commands.context import BotContext
from core.commands.types import Button, Invocation, Response
from core.estimator.memory import default_os
from core.i18n import translate
from core.render.detail import focus_quant
from core.render.message import one
from core.understanding.language import question_language

VIEWS = {"f": "frameworks", "s": "speculative", "q": "quant", "c": "chart", "o": "os", "k": "kv"}
OS_CHOICES = ("linux", "windows")
KV_CHOICES = ("f16", "q8_0")
Rows = tuple[tuple[Button, ...], ...]


def _answer(bot: BotContext, text: str, lang: str | None, target: str) -> Reply:
    return answer(text, bot.catalog, lang=lang, target=target, anchors=bot.anchors, default_os=bot.default_os)


def _current_os(query: dict[str, Any], catalog: Catalog) -> str:
    asked = query.get("os")
    if asked:
        return "windows" if asked.startswith("windows") else "linux" if asked.startswith("linux") else asked
    gpu = catalog.gpus[query["gpu"]["id"]]
    return "windows" if default_os(gpu) == "windows" else "linux" if gpu.vendor != "Apple" else "macos"


def _shown_quant(query: dict[str, Any], catalog: Catalog) -> str | None:
    """No quant asked: the one the answer's command runs (estimate_for is cached, so this is cheap)."""
    try:
        return focus_quant(estimate_for(query, catalog))
    except Exception:  # noqa: BLE001 - without it the answer just has no "in full" button
        return None


def buttons_for(key: str, query: dict[str, Any], catalog: Catalog, lang: str) -> Rows:
    first = (query.get("quants") or [None])[0] or _shown_quant(query, catalog)
    views = [
        Button(translate("ask.button.frameworks", lang), f"v:f:{key}"),
        Button(translate("ask.button.speculative", lang), f"v:s:{key}"),
        Button(translate("ask.button.chart", lang), f"v:c:{key}"),
    ]
    if first:
        views.insert(0, Button(translate("ask.button.quant", lang, quant=first), f"v:q:{key}:{first}"[:64]))
    switches = []
    current = _current_os(query, catalog)
    if current in OS_CHOICES:
        other = OS_CHOICES[1 - OS_CHOICES.index(current)]
        switches.append(Button(translate(f"ask.button.os.{other}", lang), f"v:o:{key}:{other}"))
    kv = query.get("kv_type") or "f16"
    other_kv = KV_CHOICES[1] if kv == KV_CHOICES[0] else KV_CHOICES[0]
    switches.append(Button(translate("ask.button.kv", lang, kv=other_kv), f"v:k:{key}:{other_kv}"))
    return (tuple(views), tuple(switches))


def _with_buttons(bot: BotContext, reply: Reply, status: str = "ok") -> Response:
    buttons: Rows = ()
    full = reply.query.get("gpu", {}).get("id") and reply.query.get("model", {}).get("id")
    if reply.status == "answer" and full:
        key = bot.followups.put(reply.query)
        buttons = buttons_for(key, reply.query, bot.catalog, reply.query.get("lang", "en"))
    return Response(text=reply.text, buttons=buttons, status=status)


async def run(bot: BotContext, inv: Invocation) -> list[Response]:
    text = inv.text.strip()
    lang = question_language(text, bot.catalog, inv.lang or bot.default_lang)
    reply = _answer(bot, text, lang, inv.target)
    if reply.status == "help" and not text:
        from core.commands import help as help_cmd

        return await help_cmd.run(bot, inv)
    return [_with_buttons(bot, reply, {"answer": "ok", "help": "ok"}.get(reply.status, reply.status))]


async def act(bot: BotContext, inv: Invocation, parts: list[str]) -> list[Response]:
    """A follow-up button: parts = [view, key, (arg)]."""
    view = VIEWS.get(parts[0]) if parts else None
    query = bot.followups.get(parts[1]) if len(parts) > 1 else None
    lang = (query or {}).get("lang") or inv.lang or "en"
    if view is None or query is None:
        return [Response(translate("ask.expired", lang), private=True, status="error")]
    arg = parts[2] if len(parts) > 2 else None
    if view == "chart":
        try:
            # Drawing takes ~0.1-0.7 s of matplotlib: off the event loop, so other chats keep going.
            png = await asyncio.to_thread(chart, query, bot.catalog, lang, anchors=bot.anchors)
        except Exception:  # noqa: BLE001 - matplotlib missing or a bad query: say so, don't crash
            return [Response(translate("ask.no_chart", lang), private=True, status="error")]
        return [Response(text=translate("ask.chart_caption", lang), photo=png)]
    if view in ("os", "kv"):
        allowed = OS_CHOICES if view == "os" else KV_CHOICES
        if arg not in allowed:
            return [Response(translate("cmd.unknown_action", lang), private=True, status="error")]
        switched = dict(query, **({"os": arg} if view == "os" else {"kv_type": arg}))
        reply = answer_query(switched, bot.catalog, lang, inv.target, anchors=bot.anchors)
        response = _with_buttons(bot, reply, "ok" if reply.status == "answer" else reply.status)
        if view == "kv" and arg != "f16":
            note = one(inv.target, translate("ask.kv_note", lang, kv=arg))
            response = Response(note + "\n" + response.text, response.buttons, status=response.status)
        return [response]
    reply = follow_up(query, view, bot.catalog, lang=lang, target=inv.target, quant=arg, anchors=bot.anchors)
    return [Response(text=reply.text, status="ok" if reply.status == "answer" else reply.status)]
