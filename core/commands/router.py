"""The one command layer every adapter calls: an invocation or a button action in, responses out.

Adapters only translate (platform event -> `Invocation`, `Response` -> platform message). Every
decision — what a command means, who may do it, what to store, what to say — is made here, so the
console, Telegram and Discord behave the same and a rule is checked in one place.
"""

from __future__ import annotations

import importlib
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace

from core.commands.context import BotContext, language
from core.commands.types import COMMANDS, Invocation, Response, Where
from core.i18n import translate
from core.records import Actor

log = logging.getLogger(__name__)

Handler = Callable[[BotContext, Invocation], Awaitable[list[Response]]]

# command -> module in core.commands that implements it (one feature per module, like cogs).
_MODULES = {
    "ask": "ask",
    "help": "help",
    "submit": "submit",
    "review": "review",
    "approve": "review",
    "reject": "review",
    "withdraw": "review",
    "subscribe": "subscribe",
    "unsubscribe": "subscribe",
    "subscriptions": "subscribe",
    "accuracy": "accuracy",
    "export": "export",
}
# button action prefix -> module
_ACTIONS = {"v": "ask", "m": "review"}
CANCEL_WORDS = ("cancel", "stop")
_COMMAND_TEXT = re.compile(r"^/([A-Za-z_]+)(?:@\S+)?(?:\s+|$)(.*)$", re.DOTALL)

assert set(_MODULES) == set(COMMANDS), "every command needs a handler module"


def _module(name: str):  # noqa: ANN202 - a feature module from core.commands
    return importlib.import_module(f"core.commands.{name}")


class CommandRouter:
    def __init__(self, bot: BotContext):
        self.bot = bot

    def parse(
        self, actor: Actor, where: Where, text: str, lang: str | None = None, target: str = "plain"
    ) -> Invocation:
        """A raw line ("/submit@tokbot gpu=..." or a question) as an Invocation."""
        m = _COMMAND_TEXT.match(text.strip())
        if m:
            return Invocation(actor, where, m.group(1).lower(), m.group(2).strip(), lang, target)
        return Invocation(actor, where, "", text.strip(), lang, target)

    async def handle_text(
        self, actor: Actor, where: Where, text: str, lang: str | None = None, target: str = "plain"
    ) -> list[Response]:
        return await self.handle(self.parse(actor, where, text, lang, target))

    async def handle(self, inv: Invocation) -> list[Response]:
        started = time.perf_counter()
        inv = self._with_language(inv)
        name = inv.command or "ask"
        try:
            responses = await self._dispatch(inv)
        except Exception:  # noqa: BLE001 - one bad command must not take the bot down; it is logged
            log.exception("command %s failed", name)
            lang = language(inv.text, inv.lang)
            responses = [Response(translate("cmd.failed", lang), private=True, status="error")]
        self._observe(inv.actor.platform, name, responses, started)
        return responses

    async def handle_action(self, inv: Invocation) -> list[Response]:
        """A button press: `inv.text` is the button's action string."""
        started = time.perf_counter()
        inv = self._with_language(inv)
        prefix, _, rest = inv.text.partition(":")
        module = _ACTIONS.get(prefix)
        lang = language("", inv.lang)
        try:
            if module is None:
                responses = [Response(translate("cmd.unknown_action", lang), private=True, status="error")]
            else:
                responses = await _module(module).act(self.bot, inv, rest.split(":") if rest else [])
        except Exception:  # noqa: BLE001 - see handle()
            log.exception("action %r failed", inv.text)
            responses = [Response(translate("cmd.failed", lang), private=True, status="error")]
        self._observe(inv.actor.platform, f"button:{module or 'unknown'}", responses, started)
        return responses

    def _with_language(self, inv: Invocation) -> Invocation:
        """A chat that gives no language (console, a Telegram user without one) gets the bot's default."""
        return inv if inv.lang in ("en", "zh") else replace(inv, lang=self.bot.default_lang)

    async def _dispatch(self, inv: Invocation) -> list[Response]:
        dialogue = _module("submit")
        if not inv.command:
            if dialogue.in_dialogue(self.bot, inv):
                return await dialogue.continue_dialogue(self.bot, inv)
            return await _module("ask").run(self.bot, inv)
        if inv.command in CANCEL_WORDS:
            # Not a command of its own: the word that ends a guided /submit, typed with a slash.
            if dialogue.in_dialogue(self.bot, inv):
                return await dialogue.continue_dialogue(self.bot, replace(inv, command="", text="cancel"))
            return [Response(translate("cmd.nothing_to_cancel", language(inv.text, inv.lang)), private=True)]
        module = _MODULES.get(inv.command)
        if module is None:
            lang = language(inv.text, inv.lang)
            return [Response(translate("help.unknown", lang, name=inv.command), private=True, status="error")]
        return await _module(module).run(self.bot, inv)

    def _observe(self, platform: str, name: str, responses: list[Response], started: float) -> None:
        if self.bot.observe is None:
            return
        status = next((r.status for r in responses if r.status != "ok"), "ok")
        try:
            self.bot.observe(platform, name, status, time.perf_counter() - started)
        except Exception:  # noqa: BLE001 - metrics never break a reply
            log.exception("metrics hook failed")
