"""/help: every command's syntax with an example, from catalogs/messages/commands.toml."""

from __future__ import annotations

from core.commands.context import BotContext, language
from core.commands.types import COMMANDS, Invocation, Response
from core.i18n import translate
from core.render.doc import Doc, Para
from core.render.message import split


def command_line(name: str, lang: str) -> str:
    return translate(
        "help.line", lang,
        usage=translate(f"cmd.{name}.usage", lang),
        summary=translate(f"cmd.{name}.summary", lang),
        example=translate(f"cmd.{name}.example", lang),
    )  # fmt: skip


def help_doc(lang: str, only: str | None = None) -> Doc:
    if only:
        name = only.lstrip("/").split("@")[0].lower()
        if name in COMMANDS:
            return (Para(command_line(name, lang)),)
        return (Para(translate("help.unknown", lang, name=name)), *help_doc(lang))
    return (
        Para(translate("help.title", lang)),
        *(Para(command_line(name, lang)) for name in COMMANDS),
        Para(translate("help.footer", lang)),
    )


def help_text(lang: str, only: str | None = None, target: str = "plain") -> list[str]:
    return split(help_doc(lang, only), target)


async def run(bot: BotContext, inv: Invocation) -> list[Response]:
    lang = language(inv.text, inv.lang)
    only = inv.text.strip().split()[0] if inv.text.strip() else None
    return [Response(text=t, private=True) for t in help_text(lang, only, inv.target)]
