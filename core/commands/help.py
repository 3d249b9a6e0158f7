"""/help [COMMAND]: every command's syntax with an example (the text: core/render/help.py)."""

from __future__ import annotations

from core.commands.context import BotContext
from core.commands.spec import Arg, ArgKind, CommandSpec, arg_text
from core.commands.types import Invocation, Response, to_asker
from core.render.help import help_text


async def run(bot: BotContext, inv: Invocation) -> list[Response]:
    # The registry imports every command module, this one included: read it when asked.
    from core.commands.registry import SPECS

    only = arg_text(inv.args, "command") or None
    return [to_asker(t) for t in help_text(SPECS, inv.lang, only, inv.target)]


SPEC = CommandSpec("help", run, args=(Arg("command", ArgKind.COMMAND, "help.command"),), group_menu=True)
