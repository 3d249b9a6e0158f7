"""/help: every command's syntax with an example, from catalogs/messages/commands.toml."""

from __future__ import annotations

from core.commands.context import BotContext
from core.commands.spec import Arg, ArgKind, CommandSpec, arg_text
from core.commands.types import Invocation, Response, to_asker
from core.i18n import Lang, translate
from core.render.doc import Doc, Para
from core.render.message import split


def command_line(spec: CommandSpec, lang: Lang) -> str:
    return translate(
        "help.line", lang,
        usage=translate(spec.usage_key, lang),
        summary=translate(spec.summary_key, lang),
        example=translate(spec.example_key, lang),
    )  # fmt: skip


def help_doc(lang: Lang, only: str | None = None) -> Doc:
    # The registry imports every command module, this one included: read it when asked.
    from core.commands.registry import BY_NAME, SPECS

    if only:
        name = only.lstrip("/").split("@")[0].lower()
        if name in BY_NAME:
            return (Para(command_line(BY_NAME[name], lang)),)
        return (Para(translate("help.unknown", lang, name=name)), *help_doc(lang))
    return (
        Para(translate("help.title", lang)),
        *(Para(command_line(spec, lang)) for spec in SPECS),
        Para(translate("help.footer", lang)),
    )


def help_text(lang: Lang, only: str | None = None, target: str = "plain") -> list[str]:
    return split(help_doc(lang, only), target)


async def run(bot: BotContext, inv: Invocation) -> list[Response]:
    only = arg_text(inv.args, "command") or None
    return [to_asker(t) for t in help_text(inv.lang, only, inv.target)]


SPEC = CommandSpec("help", run, args=(Arg("command", ArgKind.COMMAND, "help.command"),), group_menu=True)
