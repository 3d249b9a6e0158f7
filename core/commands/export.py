"""/export [csv | json]: every approved measured anchor as a file (moderators)."""

from __future__ import annotations

from core.commands.context import BotContext, language
from core.commands.review import MODERATION, refuse
from core.commands.types import Attachment, Invocation, Response
from core.i18n import translate
from core.render.message import one


async def run(bot: BotContext, inv: Invocation) -> list[Response]:
    from core.anchors.export import export_csv, export_json

    lang = language(inv.text, inv.lang)
    if not bot.moderators.allows(inv.actor):
        return await refuse(bot, inv, "export", None)
    fmt = (inv.text.strip().lower() or "csv").split()[0]
    if fmt not in ("csv", "json"):
        text = one(inv.target, translate("export.bad_format", lang, fmt=fmt))  # the typed FORMAT, escaped
        return [Response(text, private=True, status="error")]
    anchors = await bot.storage.submissions(status="approved", limit=bot.limits.export_max_rows)
    data = export_csv(anchors) if fmt == "csv" else export_json(anchors)
    mime = "text/csv" if fmt == "csv" else "application/json"
    return [
        Response(
            translate("export.done", lang, n=len(anchors), fmt=fmt.upper()),
            private=True,
            attachment=Attachment(f"tokbot-anchors.{fmt}", data, mime),
            extra=MODERATION,
        )
    ]
