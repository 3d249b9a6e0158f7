"""One page's answer, from its URL: the same command path as a chat question, then the page's data.

`python -m bot ask` and the chat adapters answer through `core.commands.model.answer_for` (the
reading, the Hub look-up for a model the catalog lacks, the anchors); the page does too, then
applies its switches (OS, KV type, quant, context) the way the chat's buttons do, and builds the
page's figures from that query (core/render/page.py).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.web.params import PageParams
from core.ask.answer import Reply, answer_query
from core.commands import model
from core.commands.ask import followup_query
from core.commands.context import BotContext
from core.i18n import Lang
from core.render.page import AnswerPage, answer_page
from core.understanding.language import decide_language, english_words
from core.understanding.query import AskQuery

log = logging.getLogger(__name__)

# Intents whose own reply is the answer (a table of models, of cards, a comparison, ...): the page
# shows that reply first, and the full page of the setup it leads to below it.
OWN_REPLY = frozenset({"which_model", "which_hardware", "compare", "ttft", "concurrency", "cards_needed"})


@dataclass(frozen=True, slots=True)
class PageAnswer:
    params: PageParams
    lang: Lang
    reply: Reply
    query: AskQuery | None  # the query the page's figures are for (the switches applied)
    page: AnswerPage | None  # None: no full answer (ask-back, help, an error, a model alone, ...)

    @property
    def own_reply(self) -> bool:
        return self.page is None or (self.reply.query is not None and self.reply.query.intent in OWN_REPLY)


def page_language(params: PageParams, bot: BotContext) -> Lang:
    """`?lang=` when given, else the question's own language (the chat's rule)."""
    if params.lang is not None:
        return params.lang
    return decide_language(params.question, None, bot.default_lang, english_words(bot.catalog))


def _has_views(query: AskQuery, bot: BotContext) -> bool:
    return query.complete or (query.model_id is not None and query.hardware.cpu in bot.catalog.cpus)


async def page_answer(bot: BotContext, params: PageParams) -> PageAnswer:
    lang = page_language(params, bot)
    reply = await model.answer_for(bot, params.question, lang, "plain")
    query = reply.query
    if reply.status != "answer" or query is None or not _has_views(query, bot):
        return PageAnswer(params, lang, reply, query, None)
    base = followup_query(query, reply.rows)
    switched = params.apply(base, bot.catalog)
    if switched != base and query.intent not in OWN_REPLY:
        # The chat's own answer for the switched query, as its OS / KV buttons give it.
        reply = answer_query(switched, bot.catalog, anchors=bot.anchors)
    try:
        page = answer_page(switched, bot.catalog, bot.anchors)
    except Exception:  # noqa: BLE001 - a query the estimate can't price: the chat reply alone
        log.warning("no page for %r", params.question, exc_info=True)
        page = None
    return PageAnswer(params, lang, reply, switched, page)
