"""/model add REPO (moderators): read a model from the Hugging Face Hub into the bot's catalog overlay.

Also where the ask path meets the model source: `answer_for` answers a question, looking a model the
catalog doesn't hold up first (core.commands.model_lookup). What a question read answers that
question (and later ones naming its exact repo) and is not kept for everyone: only what `/model add`
reads is stored (storage.cache_model: shared by every process on it, loaded again at start by
`load_stored`, which skips what a question stored before issue 24).
"""

from __future__ import annotations

import logging

from core.ask.answer import Reply
from core.catalog.model_source import ModelSourceError, SourcedModel, parse_repo_ref
from core.commands.context import BotContext
from core.commands.model_lookup import (
    QUESTION_BUDGET_S,
    AskSettings,
    answer_with_hub,
    from_payload,
    shared_payload,
    storage_key,
    to_payload,
    why_failed,
)
from core.commands.spec import Arg, ArgKind, CommandSpec, arg_text
from core.commands.types import Invocation, Response, to_asker
from core.i18n import Lang, translate
from core.render.message import one

log = logging.getLogger(__name__)


async def remember(bot: BotContext, sourced: SourcedModel) -> None:
    """Keep a model read from the Hub in the database; a storage failure only costs the next process."""
    try:
        await bot.storage.cache_model(storage_key(sourced.provenance.repo), to_payload(sourced), bot.clock())
    except Exception:  # noqa: BLE001 - the answer is already there; the database copy is a cache
        log.exception("could not store the model read from %s", sourced.provenance.repo)


async def load_stored(bot: BotContext, payloads: list[str]) -> int:
    """Put stored models (storage payloads) into the overlay; a payload of another shape is skipped."""
    added = skipped = 0
    for payload in payloads:
        if not shared_payload(payload):
            skipped += 1
            continue
        try:
            bot.hub_models.add(from_payload(payload))
            added += 1
        except (ValueError, TypeError, KeyError):
            log.warning("a stored Hub model could not be read back; skipped")
    if skipped:
        log.warning(
            "%d stored Hub models were read for single questions, not added by a moderator: not loaded "
            "(add the ones wanted with /model add)",
            skipped,
        )
    bot.catalog = bot.hub_models.apply(bot.catalog)
    return added


async def answer_for(
    bot: BotContext, text: str, lang: Lang | None, target: str, who: tuple[str, str] | None = None
) -> Reply:
    """The reply to a question; a model the Hub gave answers it without joining the shared names.
    `who`: (person, chat) for the Hub budget; None for the operator's own command line."""
    how = AskSettings(lang, target, bot.anchors, bot.default_os, who)
    reply, bot.catalog = await answer_with_hub(bot.catalog, bot.hub_models, bot.model_source, text, how)
    return reply


async def run(bot: BotContext, inv: Invocation) -> list[Response]:
    lang = inv.lang
    words = arg_text(inv.args, "what").split()
    ref = parse_repo_ref(words[1]) if len(words) == 2 and words[0].lower() == "add" else None
    if ref is None:
        return [to_asker(one(inv.target, translate("model.add.usage", lang)), status="error")]
    source = bot.model_source
    if source is None:
        return [to_asker(one(inv.target, translate("model.add.no_source", lang)), status="error")]
    import asyncio

    try:
        sourced = await asyncio.wait_for(source.lookup(ref.repo), QUESTION_BUDGET_S)
    except TimeoutError:
        exc = ModelSourceError("timeout", ref.repo, f"no answer within {QUESTION_BUDGET_S:g} s")
        why = why_failed(exc, source, lang)
        return [
            to_asker(
                one(inv.target, translate("model.add.failed", lang, repo=ref.repo, why=why)), status="error"
            )
        ]
    except ModelSourceError as exc:
        why = why_failed(exc, source, lang)
        return [
            to_asker(
                one(inv.target, translate("model.add.failed", lang, repo=ref.repo, why=why)), status="error"
            )
        ]
    bot.hub_models.configure(bot.catalog)
    kept = bot.hub_models.add(sourced)
    bot.hub_models.misses.forget(sourced.provenance.repo)
    bot.catalog = bot.hub_models.apply(bot.catalog)
    await remember(bot, kept)
    done = translate("model.add.done", lang, name=kept.model.name, repo=kept.provenance.repo)
    return [Response(text=one(inv.target, done))]


SPEC = CommandSpec(
    "model",
    run,
    args=(Arg("what", ArgKind.TEXT, "model.what", required=True),),
    moderator_only=True,
)
