"""`DiscordAdapter`: slash commands, buttons, modals and mentions/DMs in; the router's responses out.

It only translates: an interaction or a message becomes an `Invocation` (or a button's action
string), `app.router` decides everything (including who may moderate), and each `Response` becomes
a message, an ephemeral reply, an edit, a modal or a file. The command tree is not synced here:
`python -m bot sync-discord` does that once (sync.py), not on every start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping
from typing import Any

import aiohttp
import discord
from discord import app_commands

from bot.adapter import AdapterOffline, Backoff, one_line
from bot.app import App
from bot.discord.capabilities import CAPABILITIES
from bot.discord.commands import I18nTranslator, build_commands
from bot.discord.convert import NO_MENTIONS, actor_of, lang_of, strip_mentions
from bot.discord.notifier import DiscordNotifier
from bot.discord.reply import Responder, files_of
from bot.discord.views import ActionButton, view_for
from core.commands.registry import BY_NAME, is_slow_action
from core.commands.spec import CommandSpec
from core.commands.types import ArgValue, Invocation, Response, Where

log = logging.getLogger(__name__)

TARGET = "discord"
DEFER_AFTER = 2.0  # s: anything not answered by then is deferred (Discord drops answers after 3 s)
READY_TIMEOUT = 60.0
STOP_GRACE = 10.0  # s that stop() waits for interactions still being answered


# What a network that is down or drops looks like from discord.py: worth connecting again. Anything
# else (a refused token, a missing privileged intent, a gateway close code for a bad state) is not.
NETWORK_ERRORS: tuple[type[BaseException], ...] = (
    OSError,  # DNS failure (aiohttp's ClientConnectorDNSError is one), refused, reset
    aiohttp.ClientError,
    asyncio.TimeoutError,
    discord.GatewayNotFound,
    discord.DiscordServerError,  # a 5xx from Discord: its outage, not our configuration
)


class DiscordStartError(RuntimeError):
    """The bot could not connect for a reason retrying won't fix: a bad token or missing intents."""


def _is_network(error: BaseException | None) -> bool:
    if isinstance(error, discord.ConnectionClosed):  # a gateway that went away without a bad-state code
        return error.code not in (4004, 4010, 4011, 4012, 4013, 4014)
    return isinstance(error, NETWORK_ERRORS)


class TokbotClient(discord.Client):
    def __init__(self, adapter: DiscordAdapter, **options: Any):
        intents = discord.Intents.default()
        # Mentions and DMs carry their text without the privileged message-content intent.
        intents.message_content = False
        intents.members = False
        intents.presences = False
        super().__init__(intents=intents, allowed_mentions=NO_MENTIONS, **options)
        self.adapter = adapter
        self.tree = app_commands.CommandTree(self)
        for command in build_commands():
            self.tree.add_command(command)
        self.tree.on_error = self._on_tree_error  # type: ignore[method-assign]

    async def setup_hook(self) -> None:
        # Buttons of any earlier message (a /review card from yesterday) are routed by custom_id.
        self.add_dynamic_items(ActionButton)
        await self.tree.set_translator(I18nTranslator())

    async def on_message(self, message: discord.Message) -> None:
        await self.adapter.on_message(message)

    async def _on_tree_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        log.error("slash command failed", exc_info=error)


class DiscordAdapter:
    platform = "discord"

    def __init__(self, app: App, token: str, *, backoff: Backoff | None = None, **client_options: Any):
        """`client_options` go to discord.Client (tests shorten guild_ready_timeout); `backoff` paces
        reconnections after the gateway connection dropped (default: TOKBOT_RECONNECT_* settings)."""
        self.app = app
        app.bot.platforms[self.platform] = CAPABILITIES
        self.token = token.strip()
        self.backoff = backoff or Backoff.from_settings(app.settings)
        client_options.setdefault("max_ratelimit_timeout", 30.0)  # longer waits come back as "retry"
        self._client_options = client_options
        self.client = TokbotClient(self, **client_options)
        self.notifier = DiscordNotifier(self.client)
        self._task: asyncio.Task[None] | None = None  # the gateway connection (Client.connect)
        self._watch: asyncio.Task[None] | None = None  # reconnects it when it drops
        self._closing = asyncio.Event()
        self._inflight: set[asyncio.Task[Any]] = set()

    @property
    def running(self) -> bool:
        """For /healthz: connected to the gateway now (False while reconnecting)."""
        return self._watch is not None and self.client.is_ready() and not self.client.is_closed()

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Log in, connect the gateway, return once READY; then a watcher reconnects it with
        back-off whenever the network drops it. Discord out of reach (DNS, refused, timed out, a 5xx)
        raises AdapterOffline, which the runner retries; a refused token or intent DiscordStartError."""
        self._closing.clear()
        await self._connect()
        self.app.add_notifier(self.notifier)
        self._watch = asyncio.create_task(self._keep_connected(), name="discord-reconnect")
        log.info("discord connected as %s (%s guilds)", self.client.user, len(self.client.guilds))

    async def _connect(self) -> None:
        """One connection on a fresh client (a closed discord.py client can't be logged in again)."""
        if self.client.is_closed():
            self.client = TokbotClient(self, **self._client_options)
            self.notifier.client = self.client
        try:
            await self.client.login(self.token)
        except discord.LoginFailure as exc:
            await self.client.close()
            raise DiscordStartError(
                "Discord refused TOKBOT_DISCORD_TOKEN (401): copy the token again from "
                "the Developer Portal's Bot page"
            ) from exc
        except NETWORK_ERRORS as exc:
            await self.client.close()
            raise AdapterOffline(f"Discord unreachable: {one_line(exc)}") from exc
        # reconnect=False: a network failure ends the task and `_keep_connected` paces the next try
        # with the deployment's back-off (discord.py's own would log a traceback per attempt). Gateway
        # requests to reconnect or resume are still handled inside connect().
        self._task = asyncio.create_task(self.client.connect(reconnect=False), name="discord-gateway")
        ready = asyncio.create_task(self.client.wait_until_ready())
        done, _ = await asyncio.wait(
            {self._task, ready}, timeout=READY_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        if ready in done:
            return
        ready.cancel()
        error = self._task.exception() if self._task in done else None
        await self._close_client()
        if isinstance(error, discord.PrivilegedIntentsRequired):
            raise DiscordStartError("Discord requires a privileged intent this bot lacks") from error
        if error is None or _is_network(error):  # None: no READY within READY_TIMEOUT
            raise AdapterOffline(
                f"could not connect to the Discord gateway: {error or 'timed out'}"
            ) from error
        raise DiscordStartError(f"could not connect to the Discord gateway: {error}") from error

    async def _keep_connected(self) -> None:
        """Wait for the gateway task to end; a network failure (or a close Discord asked for) is
        reconnected with back-off. A stop() ends the wait at once; a failure retrying won't fix is
        logged and leaves the platform down (/healthz degraded) rather than looping."""
        while not self._closing.is_set():
            error = await _ended(self._task) if self._task is not None else None
            if self._closing.is_set():
                return
            if error is not None and not _is_network(error):
                log.error("discord gateway closed for good: %s", one_line(error))
                return
            if not await self._reconnect(one_line(error) if error is not None else "closed by Discord"):
                return

    async def _reconnect(self, reason: str) -> bool:
        """Connect again, one warning line per attempt; True once connected, False when stopping or
        refused for good."""
        attempt = 0
        while True:
            attempt += 1
            delay = self.backoff.delay(attempt)
            log.warning("discord connection lost (%s); retry %d in %.1f s", reason, attempt, delay)
            if await self._wait_closing(delay):
                return False
            try:
                await self._connect()
            except AdapterOffline as exc:
                reason = one_line(exc)
                continue
            except DiscordStartError as exc:
                log.error("discord reconnect refused: %s", exc)
                return False
            log.info("discord reconnected after %d attempts", attempt)
            return True

    async def _wait_closing(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self._closing.wait(), timeout=seconds)
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        self._closing.set()
        if self._inflight:
            await asyncio.wait(set(self._inflight), timeout=STOP_GRACE)
        if self._watch is not None:  # waiting for a drop, backing off or reconnecting: ends here
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
            self._watch = None
        await self._close_client()  # a clean close (1000) of the gateway connection, then its task

    async def _close_client(self) -> None:
        await self.client.close()
        if self._task is not None:
            try:
                await self._task
            except Exception:  # noqa: BLE001 - closing: the gateway task's end is not news
                log.debug("gateway task ended with an error", exc_info=True)
            self._task = None

    # -- interactions ------------------------------------------------------------------------------

    def invocation(
        self,
        interaction: discord.Interaction,
        command: str,
        text: str = "",
        args: Mapping[str, ArgValue] | None = None,
    ) -> Invocation:
        where = Where(str(interaction.channel_id), private=interaction.guild_id is None)
        lang = lang_of(interaction.locale)
        return Invocation(actor_of(interaction.user), where, command, text, lang, TARGET, dict(args or {}))

    async def run_command(
        self, interaction: discord.Interaction, spec: CommandSpec, args: Mapping[str, ArgValue]
    ) -> None:
        """A slash command (or its form), with its options as typed arguments."""
        inv = self.invocation(interaction, spec.name, args=args)
        await self._answer(
            interaction, inv, self.app.router.handle(inv), slow=spec.slow, ephemeral=spec.private
        )

    async def run_action(self, interaction: discord.Interaction, action: str) -> None:
        """A button press; the router checks the action and the presser's rights."""
        inv = self.invocation(interaction, "", action)
        await self._answer(interaction, inv, self.app.router.handle_action(inv), slow=is_slow_action(action))

    async def run_line(self, interaction: discord.Interaction, line: str) -> None:
        """A prompt modal's answer, as the command line it completes ("/reject 42 no log")."""
        inv = self.app.router.parse(
            actor_of(interaction.user),
            Where(str(interaction.channel_id), private=interaction.guild_id is None),
            line,
            lang_of(interaction.locale),
            TARGET,
        )
        spec = BY_NAME.get(inv.command)
        slow, ephemeral = (spec.slow, spec.private) if spec is not None else (False, False)
        await self._answer(interaction, inv, self.app.router.handle(inv), slow=slow, ephemeral=ephemeral)

    async def _answer(
        self,
        interaction: discord.Interaction,
        inv: Invocation,
        work: Awaitable[list[Response]],
        slow: bool,
        ephemeral: bool = False,
    ) -> None:
        current = asyncio.current_task()
        if current is not None:  # stop() waits for the whole answer, sending included
            self._track(current)
        task = asyncio.ensure_future(work)
        responder = Responder(interaction)
        try:
            if slow:
                await responder.defer(ephemeral=ephemeral)
            else:
                done, _ = await asyncio.wait({task}, timeout=DEFER_AFTER)
                if not done:  # unexpectedly slow (a cold cache, a busy database): keep the interaction alive
                    await responder.defer(ephemeral=ephemeral, thinking=not responder.is_component)
            await responder.send_all(await task)
            if responder.showed_form:  # its answer comes as a modal submit, not as the next message
                self.app.bot.prompts.forget(inv)
        except discord.HTTPException:
            log.exception("answering interaction %s failed", interaction.id)

    def _track(self, task: asyncio.Future[Any]) -> None:
        self._inflight.add(task)  # type: ignore[arg-type]
        task.add_done_callback(self._inflight.discard)

    # -- mentions and DMs --------------------------------------------------------------------------

    async def on_message(self, message: discord.Message) -> None:
        me = self.client.user
        if me is None or message.author.bot or message.author.id == me.id:
            return
        private = message.guild is None
        if not private and not any(u.id == me.id for u in message.mentions):
            return  # a channel message not addressed to the bot (its text isn't even delivered)
        text = strip_mentions(message.content, me.id)
        if not text:
            return
        task = asyncio.current_task()
        if task is not None:
            self._track(task)
        actor = actor_of(message.author)
        where = Where(str(message.channel.id), private=private)
        async with message.channel.typing():
            responses = await self.app.router.handle_text(actor, where, text, None, TARGET)
        for response in responses:
            sent_in = await self._reply(message, response, private)
            if response.prompt is not None and sent_in is not None and sent_in != message.channel.id:
                # Asked in the person's DMs: the answer comes there, so the question waits there.
                moved = Invocation(actor, Where(str(sent_in), private=True), "", target=TARGET)
                self.app.bot.prompts.remember(moved, response.prompt, self.app.bot.clock())

    async def _reply(self, message: discord.Message, response: Response, private: bool) -> int | None:
        """Send one response; the channel it went to (None if it failed)."""
        kwargs = _message_kwargs(response, with_view=True)
        sent_in = message.channel.id
        try:
            if kwargs is None:
                pass
            elif response.private and not private:
                # Only the asker should see it: their DMs rather than the channel.
                try:
                    sent = await message.author.send(**kwargs)
                    sent_in = sent.channel.id
                except discord.Forbidden:
                    log.info("DMs closed for %s; answering in the channel", message.author.id)
                    # Without buttons: a moderation card's buttons don't belong in a public channel.
                    public = _message_kwargs(response, with_view=False) or {}
                    await message.reply(mention_author=False, **public)
            else:
                await message.reply(mention_author=False, **kwargs)
        except discord.HTTPException:
            log.exception("reply in channel %s failed", message.channel.id)
            return None
        return sent_in


async def _ended(task: asyncio.Task[None]) -> BaseException | None:
    """Wait for the gateway task; the error it ended with (None: a clean close). Shielded: cancelling
    the watcher (stop) must leave the connection to close cleanly, not cancel it mid-frame."""
    try:
        await asyncio.shield(task)
    except Exception as exc:  # noqa: BLE001 - returned to be classified: reconnect or give up
        return exc
    return None


def _message_kwargs(response: Response, with_view: bool) -> dict[str, Any] | None:
    """send()/reply() arguments for a response; None when there is nothing to send."""
    kwargs: dict[str, Any] = {"allowed_mentions": NO_MENTIONS}
    if response.text:
        kwargs["content"] = response.text
    files = files_of(response)
    if files:
        kwargs["files"] = files
    view = view_for(response) if with_view else None
    if view is not None:
        kwargs["view"] = view
    return kwargs if len(kwargs) > 1 else None
