"""/accuracy [CARD | MODEL]: tokbot's estimates against approved community measurements."""

from __future__ import annotations

from core.commands import feedback
from core.commands.context import BotContext
from core.commands.spec import Arg, ArgKind, CommandSpec, arg_text
from core.commands.subscribe import named_target
from core.commands.types import Invocation, Response, to_asker
from core.community.accuracy import accuracy
from core.i18n import translate
from core.render.accuracy import accuracy_text
from core.render.message import one


async def run(bot: BotContext, inv: Invocation) -> list[Response]:
    lang = inv.lang
    text = arg_text(inv.args, "scope")
    subs = await bot.storage.submissions(status="approved", origin="community")
    scope = translate("accuracy.scope_all", lang)
    if text:
        gpu_id, model_id, problems = named_target(bot, text, lang)
        if problems:
            return [to_asker(one(inv.target, *problems), status="clarify")]
        subs = [
            s
            for s in subs
            if (gpu_id is None or s.measurement.gpu_id == gpu_id)
            and (model_id is None or s.measurement.model_id == model_id)
        ]
        names = [
            bot.catalog.gpus[gpu_id].name if gpu_id else "",
            bot.catalog.models[model_id].name if model_id else "",
        ]
        scope = " + ".join(n for n in names if n)
    text = accuracy_text(accuracy(subs), scope, lang, inv.target)
    return [Response(text + "\n" + one(inv.target, await feedback.helpful_share(bot, lang)))]


SPEC = CommandSpec(
    "accuracy",
    run,
    args=(Arg("scope", ArgKind.CARD_OR_MODEL, "accuracy.scope"),),
    slow=True,
    group_menu=True,
)
