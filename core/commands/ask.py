"""/ask and plain questions, and the follow-up buttons under an answer.

Button actions are "v:<view>:<key>[:<arg>]" (<= 64 bytes): q = one quant in full, f = frameworks
and their commands, s = speculative decoding, c = chart, o = the same answer for another OS,
k = the same answer with another KV cache type. The key points at the answer's query, kept in
memory (`FollowUps`). Every answer also gets 👍 / 👎 ("h:u:<key>" / "h:d:<key>", core.commands.feedback).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from core.ask.answer import Reply, answer, answer_query, chart, estimate_for, follow_up
from core.catalog.kv_cache import KvCacheType, is_kv_cache_type
from core.catalog.loader import Catalog
from core.catalog.platforms import os_family
from core.commands import feedback, model
from core.commands import help as help_cmd
from core.commands.context import BotContext
from core.commands.spec import ActionSpec, Arg, ArgKind, CommandSpec, arg_text
from core.commands.types import Button, Invocation, Response, to_asker
from core.commands.words import is_help_word
from core.estimator.memory import default_os, runs_one_os
from core.i18n import Lang, translate
from core.render.detail import focus_quant
from core.render.doc import fits
from core.render.message import one
from core.understanding.language import decide_language, english_words
from core.understanding.query import AskQuery

VIEWS = {
    "f": "frameworks",
    "s": "speculative",
    "q": "quant",
    "c": "chart",
    "o": "os",
    "k": "kv",
    "r": "sources",
}
OS_CHOICES = ("linux", "windows")
KV_CHOICES: tuple[KvCacheType, ...] = ("f16", "q8_0")
Rows = tuple[tuple[Button, ...], ...]


def _answer(bot: BotContext, text: str, lang: Lang, target: str) -> Reply:
    return answer(text, bot.catalog, lang=lang, target=target, anchors=bot.anchors, default_os=bot.default_os)


def _current_os(query: AskQuery, catalog: Catalog) -> str:
    """The OS family the answer is for, when the reply offers to switch it ("" when not): the asked
    one, else the one its setup assumed (a server's Linux, the card's usual OS). A card that runs one
    OS (an Apple chip, a datacenter board, a Jetson module) gets no switch, nor does a CPU-only
    answer (its figures don't move with the OS)."""
    if query.gpu_id is None:
        return ""
    gpu = catalog.gpus[query.gpu_id]
    if runs_one_os(gpu, catalog):
        return ""
    if query.os:
        return os_family(query.os)
    try:
        return os_family(estimate_for(query, catalog).request.setup.os)
    except Exception:  # noqa: BLE001 - a query the estimate can't price: the card's usual OS
        return os_family(default_os(gpu, catalog))


def _has_views(query: AskQuery, catalog: Catalog) -> bool:
    """A card and a model, or a CPU and a model (a CPU-only answer): a full answer, with its views."""
    return query.complete or (query.model_id is not None and query.hardware.cpu in catalog.cpus)


def _shown_quant(query: AskQuery, catalog: Catalog) -> str | None:
    """No quant asked: the one the answer's command runs (estimate_for is cached, so this is cheap)."""
    try:
        return focus_quant(estimate_for(query, catalog))
    except Exception:  # noqa: BLE001 - without it the answer just has no "in full" button
        return None


def buttons_for(key: str, query: AskQuery, catalog: Catalog, planned: str | None = None) -> Rows:
    """The follow-up buttons; `planned`: the quant the reply's plan runs, when it has one (the
    concurrency answer's plan may not be the single-user grid's pick)."""
    lang = query.lang
    first = query.quants[0] if query.quants else planned or _shown_quant(query, catalog)
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
    other_kv = KV_CHOICES[1] if query.kv_type == KV_CHOICES[0] else KV_CHOICES[0]
    switches.append(Button(translate("ask.button.kv", lang, kv=other_kv), f"v:k:{key}:{other_kv}"))
    switches.append(Button(translate("ask.button.sources", lang), f"v:r:{key}"))
    return (tuple(views), tuple(switches))


def followup_query(query: AskQuery, rows: tuple[dict[str, Any], ...]) -> AskQuery:
    """The query the follow-up buttons open. A "how many cards" reply's buttons are for the setup its
    conclusion names (the first row with a count: that quant on that many cards), not for the one
    card the question named, which may not even hold the model."""
    if query.intent != "cards_needed":
        return query
    best = next((r for r in rows if r.get("cards")), None)
    if best is None:
        return query
    card = replace(query.hardware.first, count=int(best["cards"]))
    hardware = replace(query.hardware, cards=(card,))
    return replace(query, hardware=hardware, quants=(str(best["quant"]),), intent="general")


def _switched(query: AskQuery, view: str, arg: str | None, target: str) -> AskQuery | None:
    """The query with the OS or KV cache type a switch button names; None for one it doesn't offer."""
    if view == "os" and arg in OS_CHOICES:
        return replace(query, os=arg, target=target)
    if view == "kv" and is_kv_cache_type(arg) and arg in KV_CHOICES:
        return replace(query, kv_type=arg, target=target)
    return None


def _with_buttons(
    bot: BotContext, inv: Invocation, reply: Reply, question: str, status: str = "ok"
) -> Response:
    """The reply with its follow-up buttons (a complete answer) and, under every answer, 👍 / 👎."""
    buttons: Rows = ()
    catalog = bot.catalog_for(reply.query) if reply.query is not None else bot.catalog
    if reply.status == "answer" and reply.query is not None and _has_views(reply.query, catalog):
        followed = followup_query(reply.query, reply.rows)
        key = bot.followups.put(followed, inv)
        planned = str(reply.plan["quant"]) if reply.plan and reply.plan.get("quant") else None
        buttons = buttons_for(key, followed, catalog, planned)
    if reply.status == "answer":
        lang = reply.query.lang if reply.query is not None else inv.lang
        buttons = (*buttons, feedback.buttons(feedback.remember(bot, inv, question, reply), lang))
    return Response(text=reply.text, buttons=buttons, status=status)


async def run(bot: BotContext, inv: Invocation) -> list[Response]:
    text = arg_text(inv.args, "question")
    # The router decided the chat's language; a question written in English words is still
    # answered in English where that is Chinese (the question's own words outrank the setting).
    lang = decide_language(text, inv.lang, inv.lang, english_words(bot.catalog))
    return await respond(bot, inv, text, lang)


async def respond(bot: BotContext, inv: Invocation, text: str, lang: Lang) -> list[Response]:
    """The answer to `text` in `lang`, with its buttons (`python -m bot ask --lang` comes in here with
    the language it was told). A model the catalog doesn't hold is looked up through the model
    source first (core.commands.model, issue 9)."""
    who = (inv.actor.key, f"{inv.actor.platform}:{inv.where.chat_id}")  # the Hub budget's keys
    reply = await model.answer_for(bot, text, lang, inv.target, who)
    if reply.status == "help" and (not text or is_help_word(text)):  # "帮助" alone: the whole /help
        return await help_cmd.run(bot, inv)
    status = {"answer": "ok", "help": "ok"}.get(reply.status, reply.status)
    response = _with_buttons(bot, inv, reply, text, status)
    if bot.page_url and reply.status == "answer":
        response = _with_page_link(response, bot.page_url, text, lang, inv.target)
    return [response]


def _with_page_link(response: Response, base: str, question: str, lang: Lang, target: str) -> Response:
    """The answer with a last line linking to the same question on the web page (bot/web), when the
    deployment has one (TOKBOT_PUBLIC_URL) and the line still fits in the message."""
    from urllib.parse import urlencode

    url = f"{base}/ask?{urlencode({'q': question, 'lang': lang})}"
    text = response.text + "\n" + one(target, translate("page.full_link", lang, url=url))
    if not fits(text, target):
        return response
    return replace(response, text=text)


async def act(bot: BotContext, inv: Invocation, parts: list[str]) -> list[Response]:
    """A follow-up button: parts = [view, key, (arg)]."""
    view = VIEWS.get(parts[0]) if parts else None
    query = bot.followups.get(parts[1], inv) if len(parts) > 1 else None
    lang = query.lang if query is not None else inv.lang
    if view is None or query is None:
        return [to_asker(translate("ask.expired", lang), status="error")]
    arg = parts[2] if len(parts) > 2 else None
    catalog = bot.catalog_for(query)  # a model read from the Hub for that question is in it
    if view == "chart":
        try:
            # Drawing takes ~0.1-0.7 s of matplotlib: off the event loop, so other chats keep going.
            png = await asyncio.to_thread(chart, query, catalog, anchors=bot.anchors)
        except Exception:  # noqa: BLE001 - matplotlib missing or a bad query: say so, don't crash
            return [to_asker(translate("ask.no_chart", lang), status="error")]
        return [Response(text=translate("ask.chart_caption", lang), photo=png)]
    if view in ("os", "kv"):
        switched = _switched(query, view, arg, inv.target)
        if switched is None:
            return [to_asker(translate("cmd.unknown_action", lang), status="error")]
        reply = answer_query(switched, catalog, anchors=bot.anchors)
        # The switched answer is rated on its own; its "question" is the switch (the query says the rest).
        said = f"({view}: {arg})"
        response = _with_buttons(bot, inv, reply, said, "ok" if reply.status == "answer" else reply.status)
        if view == "kv" and arg != "f16":
            note = one(inv.target, translate("ask.kv_note", lang, kv=arg))
            response = Response(note + "\n" + response.text, response.buttons, status=response.status)
        return [response]
    reply = follow_up(replace(query, target=inv.target), view, catalog, quant=arg, anchors=bot.anchors)
    return [Response(text=reply.text, status="ok" if reply.status == "answer" else reply.status)]


SPEC = CommandSpec(
    "ask",
    run,
    args=(Arg("question", ArgKind.TEXT, "ask.question", required=True),),
    group_menu=True,
    # Drawing a chart takes a while: platforms with an answer window defer those presses at once.
    # 👍 / 👎 under every answer are the answer's buttons too (core.commands.feedback).
    actions=(ActionSpec("v", act, slow=("v:c:",)), ActionSpec(feedback.PREFIX, feedback.act)),
)
