"""A small fake Discord (REST + websocket gateway) on 127.0.0.1 for end-to-end tests of discord.py bots.

The real discord.py client is pointed at it with `point_discord_py_at(fake, monkeypatch)` (two
internals: `discord.http.Route.BASE` and `DiscordWebSocket.DEFAULT_GATEWAY`; see the canary test).
It answers what a bot needs to log in, connect, answer interactions (callback, followups, edits),
open DMs and send messages, records every request, and lets a test dispatch INTERACTION_CREATE /
MESSAGE_CREATE events and make chosen channels fail (403 / 429 / 500).

    fake = FakeDiscord(); await fake.start(); ...; await fake.close()
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestServer

API = "/api/v10"
TIMESTAMP = "2025-01-01T00:00:00.000000+00:00"
EVERYTHING = "2147483647"  # permissions: all bits a bot could need


def user_payload(user_id: int, name: str, bot: bool = False) -> dict[str, Any]:
    return {
        "id": str(user_id),
        "username": name,
        "global_name": name,
        "discriminator": "0",
        "avatar": None,
        "bot": bot,
        "public_flags": 0,
    }


@dataclass
class Call:
    """One REST request the bot made."""

    method: str
    path: str  # without the /api/v10 prefix
    json: Any = None
    files: list[tuple[str, int]] = field(default_factory=list)  # (filename, size)
    query: dict[str, str] = field(default_factory=dict)
    auth: str = ""


@dataclass
class Reply:
    """Something the bot said in answer to one interaction (its callback, a followup or an edit)."""

    kind: str  # "callback" | "followup" | "edit" | "delete"
    type: int | None  # callback type: 4 message, 5 deferred, 6 deferred update, 7 update, 9 modal
    data: dict[str, Any]
    files: list[tuple[str, int]]

    @property
    def content(self) -> str:
        return self.data.get("content") or ""

    @property
    def ephemeral(self) -> bool:
        return bool((self.data.get("flags") or 0) & 64)

    @property
    def custom_ids(self) -> list[str]:
        return [
            c["custom_id"]
            for row in self.data.get("components") or []
            for c in row.get("components", [])
            if "custom_id" in c
        ]


class FakeDiscord:
    def __init__(
        self,
        bot_id: int = 900000000000000001,
        app_id: int = 900000000000000002,
        guild_id: int = 900000000000000010,
        channel_id: int = 900000000000000011,
        roles: dict[int, str] | None = None,
    ):
        self.bot_id, self.app_id, self.guild_id, self.channel_id = bot_id, app_id, guild_id, channel_id
        self.roles = roles or {}
        self.valid_token: str | None = None  # None: any token logs in; else only this one
        self.calls: list[Call] = []
        self.replies: dict[str, list[Reply]] = {}  # interaction token -> what the bot answered
        self.messages: dict[int, list[dict[str, Any]]] = {}  # channel id -> messages the bot sent
        self.dm_channels: dict[int, int] = {}  # user id -> DM channel id
        self.failures: dict[int, tuple[int, dict[str, Any], dict[str, str]]] = {}  # channel -> response
        self.commands: dict[str, list[dict[str, Any]]] = {}  # "global" / guild id -> synced commands
        self.identified = asyncio.Event()
        self.resume_url: str | None = None  # READY's resume_gateway_url (default: the gateway itself)
        self._ids = itertools.count(910000000000000000)
        self._seq = itertools.count(1)
        self._sockets: list[web.WebSocketResponse] = []
        self._changed = asyncio.Condition()
        self.server: TestServer | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", API + "/{tail:.*}", self._rest)
        self.server = TestServer(app, host="127.0.0.1")
        await self.server.start_server()

    async def close(self) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self.server is not None:
            await self.server.close()

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.port}{API}"

    @property
    def gateway_url(self) -> str:
        assert self.server is not None
        return f"ws://127.0.0.1:{self.server.port}/gateway"

    def next_id(self) -> int:
        return next(self._ids)

    # -- payloads --------------------------------------------------------------------------------

    def bot_user(self) -> dict[str, Any]:
        return user_payload(self.bot_id, "tokbot", bot=True)

    def channel(self) -> dict[str, Any]:
        return {
            "id": str(self.channel_id),
            "type": 0,
            "guild_id": str(self.guild_id),
            "name": "general",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
        }

    def guild(self) -> dict[str, Any]:
        everyone = {
            "id": str(self.guild_id),
            "name": "@everyone",
            "permissions": "1071698660929",
            "position": 0,
        }
        roles = [everyone] + [
            {"id": str(rid), "name": name, "permissions": "0", "position": 1}
            for rid, name in self.roles.items()
        ]
        for role in roles:
            role.update(color=0, hoist=False, managed=False, mentionable=False, flags=0)
        return {
            "id": str(self.guild_id),
            "name": "llm-lab",
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": "1",
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "roles": roles,
            "emojis": [],
            "features": [],
            "mfa_level": 0,
            "application_id": None,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "vanity_url_code": None,
            "description": None,
            "banner": None,
            "premium_tier": 0,
            "preferred_locale": "en-US",
            "public_updates_channel_id": None,
            "nsfw_level": 0,
            "stickers": [],
            "premium_progress_bar_enabled": False,
            "member_count": 3,
            "channels": [self.channel()],
            "members": [],
            "threads": [],
            "voice_states": [],
            "presences": [],
            "joined_at": TIMESTAMP,
            "large": False,
            "unavailable": False,
        }

    def message(
        self, channel_id: int, data: dict[str, Any], author: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return {
            "id": str(self.next_id()),
            "channel_id": str(channel_id),
            "author": author or self.bot_user(),
            "content": data.get("content") or "",
            "timestamp": TIMESTAMP,
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "type": 0,
            "flags": data.get("flags") or 0,
            "components": data.get("components") or [],
        }

    def _who(self, user_id: int, name: str, roles: list[int] | None, guild: bool) -> dict[str, Any]:
        user = user_payload(user_id, name)
        if not guild:
            return {"user": user}
        return {
            "member": {
                "user": user,
                "roles": [str(r) for r in roles or []],
                "joined_at": TIMESTAMP,
                "deaf": False,
                "mute": False,
                "flags": 0,
                "permissions": EVERYTHING,
                "nick": None,
                "avatar": None,
                "premium_since": None,
                "pending": False,
            }
        }

    def _interaction(
        self,
        type_: int,
        data: dict[str, Any],
        user_id: int,
        name: str,
        roles: list[int] | None,
        guild: bool,
        locale: str,
        message: dict[str, Any] | None,
    ) -> dict[str, Any]:
        token = f"itoken{self.next_id()}"
        payload: dict[str, Any] = {
            "id": str(self.next_id()),
            "application_id": str(self.app_id),
            "type": type_,
            "data": data,
            "token": token,
            "version": 1,
            "locale": locale,
            "app_permissions": EVERYTHING,
            "entitlements": [],
            "attachment_size_limit": 10 * 1024 * 1024,
            **self._who(user_id, name, roles, guild),
        }
        if guild:
            payload.update(
                guild_id=str(self.guild_id),
                channel_id=str(self.channel_id),
                channel=self.channel(),
                guild_locale="en-US",
                context=0,
                authorizing_integration_owners={"0": str(self.guild_id)},
            )
        else:
            dm = self.dm_channels.setdefault(user_id, self.next_id())
            payload.update(
                channel_id=str(dm),
                context=1,
                authorizing_integration_owners={"1": str(user_id)},
                channel={"id": str(dm), "type": 1, "recipients": [user_payload(user_id, name)]},
            )
        if message is not None:
            payload["message"] = message
        self.replies[token] = []
        return payload

    # -- driving the bot -------------------------------------------------------------------------

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        await self.identified.wait()
        frame = json.dumps({"op": 0, "t": event, "s": next(self._seq), "d": data})
        for ws in list(self._sockets):
            await ws.send_str(frame)

    async def slash(
        self,
        name: str,
        options: dict[str, Any] | None = None,
        *,
        user_id: int,
        user_name: str = "",
        roles: list[int] | None = None,
        guild: bool = True,
        locale: str = "en-US",
    ) -> str:
        """Dispatch a slash command; returns the interaction token (the key of `self.replies`)."""
        types = {str: 3, int: 4, bool: 5, float: 10}
        opts = [{"name": k, "type": types[type(v)], "value": v} for k, v in (options or {}).items()]
        data = {"id": str(self.next_id()), "name": name, "type": 1, "options": opts}
        payload = self._interaction(
            2, data, user_id, user_name or f"user{user_id}", roles, guild, locale, None
        )
        await self.dispatch("INTERACTION_CREATE", payload)
        return payload["token"]

    async def press(
        self,
        custom_id: str,
        message: dict[str, Any],
        *,
        user_id: int,
        user_name: str = "",
        roles: list[int] | None = None,
        guild: bool = True,
        locale: str = "en-US",
    ) -> str:
        """Dispatch a button press on `message` (a message payload the bot sent)."""
        data = {"custom_id": custom_id, "component_type": 2}
        payload = self._interaction(
            3, data, user_id, user_name or f"user{user_id}", roles, guild, locale, message
        )
        await self.dispatch("INTERACTION_CREATE", payload)
        return payload["token"]

    async def wait_for(self, check: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Until `check()` is truthy (re-checked after every request the bot makes)."""

        async def until() -> Any:
            async with self._changed:
                while not (result := check()):
                    await self._changed.wait()
                return result

        return await asyncio.wait_for(until(), timeout)

    async def answers(self, token: str, count: int = 1, timeout: float = 10.0) -> list[Reply]:
        """The bot's visible answers to one interaction (deferrals left out), once there are `count`."""

        def visible() -> list[Reply] | None:
            shown = [r for r in self.replies.get(token, []) if r.kind != "delete" and r.type not in (5, 6)]
            return shown if len(shown) >= count else None

        return await self.wait_for(visible, timeout)

    def fail_channel(
        self,
        channel_id: int,
        status: int,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.failures[channel_id] = (status, body or {"message": "failed", "code": 0}, headers or {})

    # -- gateway ---------------------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45000}}))
        try:
            async for msg in ws:
                if msg.type != aiohttp.WSMsgType.TEXT:
                    continue
                frame = json.loads(msg.data)
                if frame["op"] == 1:
                    await ws.send_str(json.dumps({"op": 11}))
                elif frame["op"] == 2:
                    ready = {
                        "v": 10,
                        "user": self.bot_user(),
                        "guilds": [{"id": str(self.guild_id), "unavailable": True}],
                        "session_id": "fake-session",
                        "resume_gateway_url": self.resume_url or self.gateway_url,
                        "application": {"id": str(self.app_id), "flags": 0},
                        "private_channels": [],
                        "relationships": [],
                    }
                    await ws.send_str(json.dumps({"op": 0, "t": "READY", "s": next(self._seq), "d": ready}))
                    await ws.send_str(
                        json.dumps({"op": 0, "t": "GUILD_CREATE", "s": next(self._seq), "d": self.guild()})
                    )
                    self.identified.set()
        finally:
            self._sockets.remove(ws)
        return ws

    # -- REST ------------------------------------------------------------------------------------

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        body, files = await _read_body(request)
        call = Call(
            request.method, path, body, files, dict(request.query), request.headers.get("Authorization", "")
        )
        self.calls.append(call)
        try:
            status, data, headers = self._route(call)
        finally:
            async with self._changed:
                self._changed.notify_all()
        if status == 204:
            return web.Response(status=204)
        # discord.py only parses JSON when the Content-Type is exactly application/json.
        return web.Response(
            status=status,
            body=json.dumps(data).encode(),
            headers={"Content-Type": "application/json", **headers},
        )

    def _route(self, call: Call) -> tuple[int, Any, dict[str, str]]:  # noqa: C901 - one table of routes
        parts = call.path.strip("/").split("/")
        m, body = call.method, call.json or {}
        if m == "GET" and parts == ["users", "@me"]:
            if self.valid_token is not None and call.auth != f"Bot {self.valid_token}":
                return 401, {"message": "401: Unauthorized", "code": 0}, {}
            return 200, self.bot_user(), {}
        if m == "GET" and parts == ["oauth2", "applications", "@me"]:
            return (
                200,
                {
                    "id": str(self.app_id),
                    "name": "tokbot",
                    "description": "",
                    "icon": None,
                    "bot_public": True,
                    "bot_require_code_grant": False,
                    "verify_key": "00",
                    "owner": user_payload(1, "owner"),
                    "flags": 0,
                    "team": None,
                },
                {},
            )
        if m == "GET" and len(parts) == 2 and parts[0] == "users":
            return 200, user_payload(int(parts[1]), f"user{parts[1]}"), {}
        if m == "PUT" and parts[:2] == ["applications", str(self.app_id)] and parts[-1] == "commands":
            where = parts[3] if len(parts) == 5 else "global"
            synced = [
                {
                    **c,
                    "id": str(self.next_id()),
                    "application_id": str(self.app_id),
                    "version": "1",
                    "default_member_permissions": None,
                    "dm_permission": True,
                    "nsfw": False,
                }
                for c in body
            ]
            if where != "global":
                for c in synced:
                    c["guild_id"] = where
            self.commands[where] = synced
            return 200, synced, {}
        if m == "POST" and parts[0] == "interactions" and parts[-1] == "callback":
            return self._callback(parts[2], body, call.files)
        if parts[0] == "webhooks" and len(parts) >= 3:
            return self._webhook(m, parts[2], parts[3:], body, call.files)
        if m == "POST" and parts == ["users", "@me", "channels"]:
            user_id = int(body["recipient_id"])
            dm = self.dm_channels.setdefault(user_id, self.next_id())
            return (
                200,
                {
                    "id": str(dm),
                    "type": 1,
                    "last_message_id": None,
                    "recipients": [user_payload(user_id, f"user{user_id}")],
                },
                {},
            )
        if m == "POST" and parts[0] == "channels" and parts[-1] == "messages":
            channel_id = int(parts[1])
            if channel_id in self.failures:
                return self.failures[channel_id]
            msg = self.message(channel_id, body)
            self.messages.setdefault(channel_id, []).append(msg)
            return 200, msg, {}
        if m == "POST" and parts[0] == "channels" and parts[-1] == "typing":
            return 204, None, {}
        return 404, {"message": f"fake discord: no route {m} {call.path}", "code": 0}, {}

    def _callback(
        self, token: str, body: dict[str, Any], files: list[tuple[str, int]]
    ) -> tuple[int, Any, dict]:
        type_ = body.get("type")
        data = body.get("data") or {}
        self.replies.setdefault(token, []).append(Reply("callback", type_, data, files))
        interaction = {
            "id": str(self.next_id()),
            "type": type_,
            "response_message_loading": type_ == 5,
            "response_message_ephemeral": bool((data.get("flags") or 0) & 64),
        }
        resource: dict[str, Any] = {"type": type_}
        if type_ in (4, 7):
            msg = self.message(self.channel_id, data)
            resource["message"] = msg
            interaction["response_message_id"] = msg["id"]
        return 200, {"interaction": interaction, "resource": resource}, {}

    def _webhook(
        self, method: str, token: str, rest: list[str], body: dict[str, Any], files: list[tuple[str, int]]
    ) -> tuple[int, Any, dict]:
        kind = {"POST": "followup", "PATCH": "edit", "DELETE": "delete"}.get(method, method.lower())
        self.replies.setdefault(token, []).append(Reply(kind, None, body, files))
        if method == "DELETE":
            return 204, None, {}
        return 200, self.message(self.channel_id, body), {}


async def _read_body(request: web.Request) -> tuple[Any, list[tuple[str, int]]]:
    """JSON, or discord.py's multipart (payload_json + files[n])."""
    if request.content_type.startswith("multipart/"):
        payload: Any = None
        files = []
        reader = await request.multipart()
        async for part in reader:
            data = await part.read()  # type: ignore[union-attr]
            if part.name == "payload_json":  # type: ignore[union-attr]
                payload = json.loads(data)
            else:
                files.append((part.filename or "", len(data)))  # type: ignore[union-attr]
        return payload, files
    raw = await request.read()
    return (json.loads(raw) if raw else None), []


def point_discord_py_at(fake: FakeDiscord, monkeypatch: Any) -> None:  # noqa: ANN401 - pytest's MonkeyPatch
    """Redirect discord.py's REST and gateway to the fake (internals pinned by the canary test)."""
    import discord
    import yarl

    monkeypatch.setattr(discord.http.Route, "BASE", fake.base_url)
    monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(fake.gateway_url))
