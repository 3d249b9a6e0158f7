"""The one command layer every adapter calls: an invocation or a button action in, responses out.

Adapters only translate (platform event -> `Invocation`, `Response` -> platform message). Every
decision — what a command means, who may do it, what to store, what to say — is made here, so the
console, Telegram and Discord behave the same and a rule is checked in one place.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import replace

from core.commands import ask, submit
from core.commands.context import BotContext
from core.commands.faults import is_storage_fault, record_fault
from core.commands.registry import ACTION_OWNERS, ACTIONS, BY_NAME
from core.commands.review import refuse
from core.commands.spec import CommandSpec, Place, arg_id, parse_args
from core.commands.types import Audience, Invocation, Response, Where, to_asker
from core.commands.words import CANCEL_WORDS
from core.i18n import Lang, translate
from core.storage.records import Actor
from core.understanding.language import decide_language

log = logging.getLogger(__name__)

_COMMAND_TEXT = re.compile(r"^/([A-Za-z_]+)(?:@\S+)?(?:\s+|$)(.*)$", re.DOTALL)


class CommandRouter:
    def __init__(self, bot: BotContext):
        self.bot = bot

    def parse(
        self, actor: Actor, where: Where, text: str, lang: Lang | None = None, target: str = "plain"
    ) -> Invocation:
        """A raw line ("/submit@tokbot gpu=..." or a question) as an Invocation; `lang` is the
        platform's hint."""
        m = _COMMAND_TEXT.match(text.strip())
        if m:
            return Invocation(actor, where, m.group(1).lower(), m.group(2).strip(), lang, target)
        return Invocation(actor, where, "", text.strip(), lang, target)

    async def handle_text(
        self, actor: Actor, where: Where, text: str, lang: Lang | None = None, target: str = "plain"
    ) -> list[Response]:
        return await self.handle(self.parse(actor, where, text, lang, target))

    def language(self, inv: Invocation) -> Lang:
        """The language of every reply to `inv`: decided here, once, by one rule (adapters that say
        something themselves, like a pointer to a private chat, ask this too)."""
        said = inv.text or " ".join(str(v) for v in inv.args.values() if isinstance(v, str))
        return decide_language(said, inv.hint, self.bot.default_lang)

    def prepare(self, inv: Invocation) -> Invocation:
        """The invocation with its language decided and, for text, its arguments parsed."""
        spec = BY_NAME.get(inv.command or "ask")
        args = inv.args
        if spec is not None and not args and inv.text:
            args = parse_args(spec, inv.text)
        return replace(inv, args=args, lang=self.language(inv))

    async def handle(self, inv: Invocation) -> list[Response]:
        started = time.perf_counter()
        inv = self.prepare(inv)
        name = inv.command or "ask"
        try:
            responses = await self._dispatch(inv)
        except Exception as exc:  # noqa: BLE001 - one bad command must not take the bot down; it is logged
            responses = self._failed(inv, exc, f"command {name}")
        self._remember_prompts(inv, responses)
        self._observe(inv.actor.platform, name, responses, started)
        return responses

    async def handle_action(self, inv: Invocation) -> list[Response]:
        """A button press: `inv.text` is the button's action string."""
        started = time.perf_counter()
        inv = replace(inv, lang=decide_language("", inv.hint, self.bot.default_lang))
        prefix, _, rest = inv.text.partition(":")
        action = ACTIONS.get(prefix)
        try:
            if action is None:
                responses = [to_asker(translate("cmd.unknown_action", inv.lang), status="error")]
            else:
                responses = await action.act(self.bot, inv, rest.split(":") if rest else [])
        except Exception as exc:  # noqa: BLE001 - see handle()
            responses = self._failed(inv, exc, f"action {inv.text[:40]!r}")
        self._remember_prompts(inv, responses)
        self._observe(
            inv.actor.platform, f"button:{ACTION_OWNERS.get(prefix, 'unknown')}", responses, started
        )
        return responses

    def _failed(self, inv: Invocation, exc: Exception, what: str) -> list[Response]:
        """A database fault gets its own reply and one log line a minute; anything else is a bug."""
        if is_storage_fault(exc):
            record_fault(self.bot, exc, what)
            return [to_asker(translate("cmd.storage_failed", inv.lang), status="error")]
        log.exception("%s failed", what)
        return [to_asker(translate("cmd.failed", inv.lang), status="error")]

    async def _dispatch(self, inv: Invocation) -> list[Response]:
        if not inv.command:
            return await self._free_text(inv)
        self.bot.prompts.forget(inv)  # a command typed instead of an answer: the question is dropped
        if inv.command in CANCEL_WORDS:
            # Not a command of its own: the word that ends a guided /submit, typed with a slash.
            if submit.in_dialogue(self.bot, inv):
                return await submit.continue_dialogue(self.bot, replace(inv, command="", text="cancel"))
            return [to_asker(translate("cmd.nothing_to_cancel", inv.lang))]
        spec = BY_NAME.get(inv.command)
        if spec is None:
            return [to_asker(translate("help.unknown", inv.lang, name=inv.command), status="error")]
        refused = await self._refusal(spec, inv)
        if refused is not None:
            return refused
        return await spec.run(self.bot, inv)

    async def _free_text(self, inv: Invocation) -> list[Response]:
        """A line that is no command: the answer to a question the bot asked, the next step of a
        dialogue, or a question."""
        command = None if inv.answering is False else self.bot.prompts.take(inv, self.bot.clock())
        if command is not None:
            line = self.parse(inv.actor, inv.where, f"/{command} {inv.text}", inv.hint, inv.target)
            return await self._dispatch(self.prepare(line))
        if submit.in_dialogue(self.bot, inv):
            return await submit.continue_dialogue(self.bot, inv)
        return await ask.run(self.bot, inv)

    async def _refusal(self, spec: CommandSpec, inv: Invocation) -> list[Response] | None:
        """What the declaration rules out here: someone not a moderator, a private-only command in
        a group of a platform that can't reach the person privately later."""
        if spec.moderator_only and not self.bot.moderators.allows(inv.actor):
            return await refuse(self.bot, inv, spec.name, arg_id(inv.args))
        caps = self.bot.capabilities(inv.actor.platform)
        if spec.place is Place.PRIVATE_CHAT and not inv.where.private and not caps.unprompted_dm:
            text = translate(f"{spec.name}.private_only", inv.lang)
            return [Response(text, audience=Audience.ASKER, status="refused", private_chat_topic=spec.name)]
        return None

    def _remember_prompts(self, inv: Invocation, responses: list[Response]) -> None:
        for response in responses:
            if response.prompt is not None:
                self.bot.prompts.remember(inv, response.prompt, self.bot.clock())

    def _observe(self, platform: str, name: str, responses: list[Response], started: float) -> None:
        if self.bot.observe is None:
            return
        status = next((r.status for r in responses if r.status != "ok"), "ok")
        try:
            self.bot.observe(platform, name, status, time.perf_counter() - started)
        except Exception:  # noqa: BLE001 - metrics never break a reply
            log.exception("metrics hook failed")
