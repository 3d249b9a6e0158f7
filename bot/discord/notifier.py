"""Notices (a decision on someone's submission, a new anchor they subscribed to) sent by the worker.

chat_id is "user:<id>" (the person's DMs; the command layer picks this for anything said in a guild
channel) or a channel id (a DM channel the person used). `deliver` never raises: every failure is a
`Delivery` the worker knows how to retry or give up on.
"""

from __future__ import annotations

import logging

import aiohttp
import discord

from bot.discord.convert import NO_MENTIONS
from core.community.delivery import Delivery

log = logging.getLogger(__name__)

MESSAGE_MAX = 2000


def _retry_after(exc: discord.HTTPException) -> float | None:
    """How long Discord asked us to wait (the Retry-After header), when it said."""
    response = getattr(exc, "response", None)
    raw = response.headers.get("Retry-After") if response is not None else None
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None


class DiscordNotifier:
    platform = "discord"
    per_second = 40.0  # under Discord's 50 requests/s global limit (catalogs/community.toml wins)

    def __init__(self, client: discord.Client):
        self.client = client

    async def _channel(self, chat_id: str) -> discord.abc.Messageable:
        if chat_id.startswith("user:"):
            # A DM channel is created (or found) for the user; no need to fetch the whole user.
            return await self.client.create_dm(discord.Object(int(chat_id.removeprefix("user:"))))
        return self.client.get_channel(int(chat_id)) or self.client.get_partial_messageable(int(chat_id))  # type: ignore[return-value]

    async def deliver(self, chat_id: str, text: str) -> Delivery:
        try:
            channel = await self._channel(chat_id)
            await channel.send(text[:MESSAGE_MAX], allowed_mentions=NO_MENTIONS)
            return Delivery("sent")
        except ValueError:
            return Delivery("failed", error=f"not a Discord chat id: {chat_id!r}")
        except discord.RateLimited as exc:  # a rate limit longer than the client's max_ratelimit_timeout
            return Delivery("retry", retry_after=exc.retry_after, error="rate limited")
        except (discord.Forbidden, discord.NotFound) as exc:
            # DMs closed, the bot blocked, or the channel/user gone: writing again won't help.
            return Delivery("forbidden", error=f"{exc.status} {exc.text}".strip())
        except discord.HTTPException as exc:
            if exc.status == 429:
                return Delivery("retry", retry_after=_retry_after(exc), error="429")
            if exc.status >= 500:
                return Delivery("retry", error=f"{exc.status} {exc.text}".strip())
            return Delivery("failed", error=f"{exc.status} {exc.text}".strip())
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            return Delivery("retry", error=repr(exc))
        except Exception as exc:  # noqa: BLE001 - the Notifier contract: never raise
            log.exception("discord notice to %s failed", chat_id)
            return Delivery("failed", error=repr(exc))
