"""/export [csv | json]: every approved measured anchor as a file (moderators)."""

from __future__ import annotations

from core.commands.context import BotContext
from core.commands.spec import Arg, ArgKind, CommandSpec, arg_text
from core.commands.types import Attachment, Audience, Invocation, Response, to_asker
from core.i18n import translate
from core.render.message import one

FORMATS = ("csv", "json")


async def run(bot: BotContext, inv: Invocation) -> list[Response]:
    from core.anchors.export import export_csv, export_json

    lang = inv.lang
    fmt = arg_text(inv.args, "format").lower() or FORMATS[0]
    if fmt not in FORMATS:
        return [to_asker(one(inv.target, translate("export.bad_format", lang, fmt=fmt)), status="error")]
    anchors = await bot.storage.submissions(status="approved", limit=bot.limits.export_max_rows)
    data = export_csv(anchors) if fmt == "csv" else export_json(anchors)
    mime = "text/csv" if fmt == "csv" else "application/json"
    return [
        Response(
            translate("export.done", lang, n=len(anchors), fmt=fmt.upper()),
            audience=Audience.ASKER_PRIVATELY,
            attachment=Attachment(f"tokbot-anchors.{fmt}", data, mime),
        )
    ]


SPEC = CommandSpec(
    "export",
    run,
    args=(Arg("format", ArgKind.WORD, "export.format", choices=FORMATS),),
    slow=True,
    private=True,
    moderator_only=True,
)
