"""A fake Telegram Bot API on 127.0.0.1 (aiohttp), for end-to-end tests and benchmarks.

The real python-telegram-bot client is pointed at it with `base_url`, polls it with long polling and
sends to it; tests inject updates, look at what was sent, and make a method fail on purpose.

    fake = FakeTelegram()
    await fake.start()                      # fake.base_url -> ApplicationBuilder().base_url(...)
    alice = fake.user(1001, "Alice")
    fake.message(alice, "V100 32G gemma 3 27b")          # a private-chat message
    [reply] = await fake.wait_sent(1)                     # what the bot sent (method, chat_id, text, params)
    fake.fail("sendMessage", 429, retry_after=1)          # the next sendMessage gets a 429 once
    await fake.stop()

Covered: getMe, deleteWebhook, getUpdates (offset, long-poll timeout, limit), setMyCommands,
deleteMyCommands, sendMessage, editMessageText, editMessageReplyMarkup, answerCallbackQuery,
answerInlineQuery, sendPhoto, sendDocument, sendChatAction. Errors are shaped like Telegram's
({"ok": false, "error_code", "description", "parameters": {"retry_after"}}), so PTB raises its real
RetryAfter / Forbidden / BadRequest.

The update builders (`Updates`) are plain functions of dicts and are also used by handler-level
tests that feed `Update.de_json(...)` straight to `Application.process_update`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from telegram.request import BaseRequest, RequestData

TOKEN = "123456789:TEST-token-for-the-fake-telegram-api"
BOT_ID = 777000
BOT_USERNAME = "tokbot_test_bot"

# PTB form-encodes parameters and JSON-encodes only non-string values, so these are the fields to
# decode; everything else (text, caption, callback data, queries) stays the string it was.
_DECODED = {
    "chat_id", "message_id", "offset", "limit", "timeout", "reply_markup", "reply_parameters", "commands",
    "scope", "results", "button", "entities", "caption_entities", "allowed_updates", "link_preview_options",
    "cache_time", "is_personal", "show_alert", "drop_pending_updates", "message_thread_id",
    "disable_notification", "protect_content", "reply_to_message_id",
}  # fmt: skip
_MENTION = re.compile(r"@[A-Za-z0-9_]{3,}")
_SENDS = {"sendMessage", "sendPhoto", "sendDocument"}


def utf16_len(text: str) -> int:
    """Telegram counts entity offsets in UTF-16 code units (a CJK char is 1, an emoji 2)."""
    return len(text.encode("utf-16-le")) // 2


@dataclass
class Call:
    """One request the bot made."""

    method: str
    params: dict[str, Any]
    at: float  # time.perf_counter() when it arrived
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # field -> (filename, data)
    result: Any = None  # what the fake answered (a message dict for sends)
    error: int | None = None  # the HTTP status when the fake made it fail

    @property
    def chat_id(self) -> Any:
        return self.params.get("chat_id")

    @property
    def text(self) -> str:
        return str(self.params.get("text") or self.params.get("caption") or "")

    @property
    def message(self) -> dict[str, Any]:
        return self.result if isinstance(self.result, dict) else {}

    @property
    def buttons(self) -> list[dict[str, Any]]:
        """Every inline button of the sent message, row after row."""
        markup = self.params.get("reply_markup") or {}
        return [b for row in markup.get("inline_keyboard", []) for b in row]


@dataclass
class Failure:
    method: str
    status: int
    description: str
    retry_after: int | None = None
    times: int = 1
    chat_id: Any = None  # only requests to this chat fail (None: any)


class Updates:
    """Builders of Bot API update dicts: users, chats, messages, button presses, inline queries."""

    def __init__(self, bot_username: str = BOT_USERNAME, bot_id: int = BOT_ID):
        self.bot_username = bot_username
        self.bot_id = bot_id
        self._update_ids = itertools.count(1)
        self._message_ids: dict[int, itertools.count] = {}
        self._ids = itertools.count(1)

    @staticmethod
    def user(
        user_id: int,
        first_name: str,
        username: str | None = None,
        language_code: str = "en",
        last_name: str | None = None,
    ) -> dict[str, Any]:
        user: dict[str, Any] = {
            "id": user_id,
            "is_bot": False,
            "first_name": first_name,
            "language_code": language_code,
        }
        if username:
            user["username"] = username
        if last_name:
            user["last_name"] = last_name
        return user

    @staticmethod
    def private_chat(user: dict[str, Any]) -> dict[str, Any]:
        return {"id": user["id"], "type": "private", "first_name": user["first_name"]}

    @staticmethod
    def group(chat_id: int = -100123, title: str = "LLM hardware") -> dict[str, Any]:
        return {"id": chat_id, "type": "supergroup", "title": title}

    def bot_user(self) -> dict[str, Any]:
        return {"id": self.bot_id, "is_bot": True, "first_name": "tokbot", "username": self.bot_username}

    def next_message_id(self, chat_id: int) -> int:
        return next(self._message_ids.setdefault(chat_id, itertools.count(1)))

    def next_update_id(self) -> int:
        return next(self._update_ids)

    def message(
        self,
        user: dict[str, Any],
        text: str,
        chat: dict[str, Any] | None = None,
        reply_to: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """An update with a text message; a leading /command and @mentions get their entities."""
        chat = chat or self.private_chat(user)
        message: dict[str, Any] = {
            "message_id": self.next_message_id(chat["id"]), "date": int(time.time()), "chat": chat,
            "from": user, "text": text,
        }  # fmt: skip
        entities = []
        if text.startswith("/"):
            entities.append({"type": "bot_command", "offset": 0, "length": utf16_len(text.split()[0])})
        for m in _MENTION.finditer(text):
            entities.append(
                {"type": "mention", "offset": utf16_len(text[: m.start()]), "length": utf16_len(m.group())}
            )
        if entities:
            message["entities"] = entities
        if reply_to is not None:
            message["reply_to_message"] = reply_to
        return {"update_id": self.next_update_id(), "message": message}

    def callback(self, user: dict[str, Any], message: dict[str, Any], data: str) -> dict[str, Any]:
        """A press of a button (callback_data `data`) under `message` (a message dict the bot sent)."""
        return {"update_id": self.next_update_id(), "callback_query": {
            "id": str(next(self._ids)), "from": user, "chat_instance": "ci", "data": data, "message": message,
        }}  # fmt: skip

    def inline(self, user: dict[str, Any], query: str) -> dict[str, Any]:
        return {"update_id": self.next_update_id(), "inline_query": {
            "id": str(next(self._ids)), "from": user, "query": query, "offset": "",
        }}  # fmt: skip


class FakeTelegram:
    def __init__(self, token: str = TOKEN, bot_username: str = BOT_USERNAME, bot_id: int = BOT_ID):
        self.token = token
        self.build = Updates(bot_username, bot_id)
        self.calls: list[Call] = []
        self.pending: list[dict[str, Any]] = []  # updates not yet confirmed by an offset
        self.injected_at: dict[int, float] = {}  # update_id -> perf_counter() when injected
        self.failures: list[Failure] = []
        self._chats: dict[int, dict[str, Any]] = {}
        self._arrived = asyncio.Event()
        self._changed = asyncio.Condition()
        self._closing = False
        self._runner: web.AppRunner | None = None
        self.port = 0

    # --- lifecycle -----------------------------------------------------------------------------
    async def start(self) -> FakeTelegram:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def stop(self) -> None:
        self._closing = True
        self._arrived.set()  # end a long poll in progress
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def file_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/file/bot"

    # --- injecting -----------------------------------------------------------------------------
    def user(
        self,
        user_id: int,
        first_name: str,
        username: str | None = None,
        language_code: str = "en",
        last_name: str | None = None,
    ) -> dict[str, Any]:
        return self.build.user(user_id, first_name, username, language_code, last_name)

    def group(self, chat_id: int = -100123, title: str = "LLM hardware") -> dict[str, Any]:
        return self.build.group(chat_id, title)

    def register(self, update: dict[str, Any]) -> dict[str, Any]:
        """Learn the update's chat (so replies there carry its type); handler tests call this and then
        `process_update` themselves instead of queueing."""
        for key in ("message", "callback_query"):
            if key in update:
                chat = update[key].get("chat") or update[key].get("message", {}).get("chat")
                if chat:
                    self._chats[chat["id"]] = chat
        return update

    def push(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue an update for the next getUpdates (and wake a long poll)."""
        self.register(update)
        self.pending.append(update)
        self.injected_at[update["update_id"]] = time.perf_counter()
        self._arrived.set()
        return update

    def message(
        self,
        user: dict[str, Any],
        text: str,
        chat: dict[str, Any] | None = None,
        reply_to: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Inject a message; returns the message dict (to reply to it later)."""
        return self.push(self.build.message(user, text, chat, reply_to))["message"]

    def press(self, user: dict[str, Any], message: dict[str, Any], data: str) -> dict[str, Any]:
        return self.push(self.build.callback(user, message, data))

    def inline(self, user: dict[str, Any], query: str) -> dict[str, Any]:
        return self.push(self.build.inline(user, query))

    def fail(
        self,
        method: str,
        status: int = 429,
        *,
        retry_after: int | None = None,
        description: str = "",
        times: int = 1,
        chat_id: Any = None,
    ) -> None:
        """Make the next `times` calls of `method` (to `chat_id`, if given) fail like Telegram would."""
        if status == 429 and retry_after is None:
            retry_after = 1
        default = {
            429: f"Too Many Requests: retry after {retry_after}",
            403: "Forbidden: bot was blocked by the user",
            400: "Bad Request: chat not found",
        }.get(status, "Internal Server Error")  # fmt: skip
        self.failures.append(Failure(method, status, description or default, retry_after, times, chat_id))

    # --- looking ---------------------------------------------------------------------------------
    def of(self, *methods: str) -> list[Call]:
        """Successful calls of these methods, in order."""
        return [c for c in self.calls if c.method in methods and c.error is None]

    @property
    def sent(self) -> list[Call]:
        """Messages the bot sent (text, photo, document), successful ones only."""
        return self.of(*_SENDS)

    def sent_to(self, chat_id: int) -> list[Call]:
        return [c for c in self.sent if c.chat_id == chat_id]

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(predicate), timeout)

    async def wait_sent(self, n: int, timeout: float = 10.0, chat_id: Any = None) -> list[Call]:
        """Until at least n messages were sent (to `chat_id`, if given); returns them."""

        def sent() -> list[Call]:
            return self.sent if chat_id is None else self.sent_to(chat_id)

        await self.wait_for(lambda: len(sent()) >= n, timeout)
        return sent()

    async def wait_calls(self, method: str, n: int = 1, timeout: float = 10.0) -> list[Call]:
        await self.wait_for(lambda: len(self.of(method)) >= n, timeout)
        return self.of(method)

    # --- serving -------------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return _error(401, "Unauthorized")
        params, files = await _read(request)
        status, body = await self.answer(request.match_info["method"], params, files)
        return web.json_response(body, status=status)

    async def answer(
        self, method: str, params: dict[str, Any], files: dict[str, tuple[str, bytes]] | None = None
    ) -> tuple[int, dict[str, Any]]:
        """One Bot API call -> (HTTP status, JSON body); shared by the HTTP server and `request()`."""
        call = Call(method, params, time.perf_counter(), files or {})
        if method == "getUpdates":  # not recorded: a poll every few ms would drown the calls list
            return 200, {"ok": True, "result": await self._get_updates(params)}
        failure = self._failure(method, params)
        if failure is not None:
            call.error = failure.status
            await self._record(call)
            extra = {"retry_after": failure.retry_after} if failure.retry_after is not None else None
            return failure.status, _error_body(failure.status, failure.description, extra)
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            return 404, _error_body(404, "Not Found: method not found")
        call.result = handler(params, call.files)
        await self._record(call)
        return 200, {"ok": True, "result": call.result}

    def request(self) -> RecordingRequest:
        """A PTB transport that answers in-process, without sockets (handler-level tests):
        `ApplicationBuilder().request(fake.request()).get_updates_request(fake.request()).updater(None)`."""
        return RecordingRequest(self)

    async def _record(self, call: Call) -> None:
        self.calls.append(call)
        async with self._changed:
            self._changed.notify_all()

    def _failure(self, method: str, params: dict[str, Any]) -> Failure | None:
        for failure in self.failures:
            if (
                failure.method == method
                and failure.times > 0
                and (failure.chat_id is None or failure.chat_id == params.get("chat_id"))
            ):
                failure.times -= 1
                return failure
        return None

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        if offset:  # Telegram forgets every update below the offset: they were handled
            self.pending = [u for u in self.pending if u["update_id"] >= offset]
        if not self.pending and not self._closing:
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), float(params.get("timeout") or 0))
            except TimeoutError:
                pass
        return self.pending[: int(params.get("limit") or 100)]

    def _chat(self, chat_id: Any) -> dict[str, Any]:
        if chat_id in self._chats:
            return self._chats[chat_id]
        kind = "private" if isinstance(chat_id, int) and chat_id > 0 else "supergroup"
        return {"id": chat_id, "type": kind}

    def _new_message(self, params: dict[str, Any], **content: Any) -> dict[str, Any]:
        chat = self._chat(params.get("chat_id"))
        message: dict[str, Any] = {
            "message_id": self.build.next_message_id(chat["id"]), "date": int(time.time()), "chat": chat,
            "from": self.build.bot_user(), **content,
        }  # fmt: skip
        markup = params.get("reply_markup")
        if isinstance(markup, dict) and "inline_keyboard" in markup:  # Telegram echoes only inline keyboards
            message["reply_markup"] = markup
        return message

    # Bot API methods: (params, files) -> result. ------------------------------------------------
    def _m_getMe(self, params: dict[str, Any], files: dict[str, Any]) -> dict[str, Any]:
        return {
            **self.build.bot_user(),
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": True,
        }

    def _m_deleteWebhook(self, params: dict[str, Any], files: dict[str, Any]) -> bool:
        if params.get("drop_pending_updates"):
            self.pending.clear()
        return True

    def _m_setMyCommands(self, params: dict[str, Any], files: dict[str, Any]) -> bool:
        return True

    def _m_deleteMyCommands(self, params: dict[str, Any], files: dict[str, Any]) -> bool:
        return True

    def _m_sendChatAction(self, params: dict[str, Any], files: dict[str, Any]) -> bool:
        return True

    def _m_answerCallbackQuery(self, params: dict[str, Any], files: dict[str, Any]) -> bool:
        return True

    def _m_answerInlineQuery(self, params: dict[str, Any], files: dict[str, Any]) -> bool:
        return True

    def _m_sendMessage(self, params: dict[str, Any], files: dict[str, Any]) -> dict[str, Any]:
        return self._new_message(params, text=params.get("text", ""))

    def _m_sendPhoto(self, params: dict[str, Any], files: dict[str, Any]) -> dict[str, Any]:
        size = len(files.get("photo", ("", b""))[1])
        photo = [
            {
                "file_id": f"photo{size}",
                "file_unique_id": f"p{size}",
                "width": 800,
                "height": 500,
                "file_size": size,
            }
        ]
        return self._new_message(params, photo=photo, **_caption(params))

    def _m_sendDocument(self, params: dict[str, Any], files: dict[str, Any]) -> dict[str, Any]:
        name, data = files.get("document", ("file", b""))
        document = {
            "file_id": f"doc{len(data)}",
            "file_unique_id": f"d{len(data)}",
            "file_name": name,
            "file_size": len(data),
        }
        return self._new_message(params, document=document, **_caption(params))

    def _m_editMessageText(self, params: dict[str, Any], files: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params.get("chat_id"))
        message: dict[str, Any] = {
            "message_id": params.get("message_id"),
            "date": int(time.time()),
            "edit_date": int(time.time()),
            "chat": chat,
            "from": self.build.bot_user(),
            "text": params.get("text", ""),
        }
        if isinstance(params.get("reply_markup"), dict):
            message["reply_markup"] = params["reply_markup"]
        return message

    def _m_editMessageReplyMarkup(self, params: dict[str, Any], files: dict[str, Any]) -> bool:
        return True


def _caption(params: dict[str, Any]) -> dict[str, Any]:
    return {"caption": params["caption"]} if params.get("caption") else {}


def _error_body(status: int, description: str, parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if parameters:
        body["parameters"] = parameters
    return body


def _error(status: int, description: str, parameters: dict[str, Any] | None = None) -> web.Response:
    return web.json_response(_error_body(status, description, parameters), status=status)


class RecordingRequest(BaseRequest):
    """PTB's transport seam (`BaseRequest.do_request`): every call goes to the fake's handlers in
    process and is recorded in `fake.calls`, exactly as over HTTP."""

    def __init__(self, fake: FakeTelegram):
        self.fake = fake

    @property
    def read_timeout(self) -> float | None:
        return None

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = None,
        write_timeout: Any = None,
        connect_timeout: Any = None,
        pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        params: dict[str, Any] = dict(request_data.parameters) if request_data else {}
        files: dict[str, tuple[str, bytes]] = {}
        for part, content in (request_data.multipart_data if request_data else {}).items():
            data = content[1] if isinstance(content[1], bytes) else content[1].read()
            files[part] = (content[0], data)
        for key, value in list(params.items()):
            if isinstance(value, str) and value.startswith("attach://") and value[9:] in files:
                files[key] = files[value[9:]]
        status, body = await self.fake.answer(url.rsplit("/", 1)[-1], params, files)
        return status, json.dumps(body).encode()


async def _read(request: web.Request) -> tuple[dict[str, Any], dict[str, tuple[str, bytes]]]:
    params: dict[str, Any] = {}
    files: dict[str, tuple[str, bytes]] = {}
    if request.content_type == "application/json":
        raw = await request.json()
        return (raw if isinstance(raw, dict) else {}), files
    if request.can_read_body:
        form = await request.post()
        for key, value in form.items():
            if isinstance(value, web.FileField):
                files[key] = (value.filename, value.file.read())
            else:
                params[key] = _decode(key, str(value))
    for key, value in request.query.items():  # GET with query parameters
        params.setdefault(key, _decode(key, value))
    # PTB sends an uploaded file's field as "attach://<name>"; resolve it to the file's own field name.
    for key, value in list(params.items()):
        if isinstance(value, str) and value.startswith("attach://") and value[9:] in files:
            files[key] = files[value[9:]]
    return params, files


def _decode(key: str, value: str) -> Any:
    if key not in _DECODED:
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value  # "@channelname" and the like
