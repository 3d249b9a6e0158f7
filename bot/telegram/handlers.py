"""Telegram updates -> `Invocation`s -> the command router -> `Replier`. Translation only: every
decision (what a command means, who may approve) is the router's.

What reaches the router:
- a command from `COMMANDS` as /cmd, or /cmd@thisbot in groups (PTB drops /cmd@otherbot);
- /start (private welcome = /help; `/start subscribe` from the deep link explains /subscribe);
- free text: any in a private chat; in a group only a mention of the bot or a reply to it (with privacy
  mode on Telegram sends nothing else anyway), so a reply to the guided /submit question gets through;
- a reply answering a ForceReply question (a `Prompt`): free text like any other; the router knows
  it answers the question (core.commands.prompts);
- button presses (callback_data is the action string, checked by the router like any command);
- inline queries (`@thisbot V100 27B` in any chat): one article with the answer.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from typing import Any

from telegram import (
    CallbackQuery,
    Chat,
    InlineQueryResultArticle,
    InlineQueryResultsButton,
    InputTextMessageContent,
    Message,
    MessageEntity,
    Update,
    User,
)
from telegram.constants import ChatType, ParseMode
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    InlineQueryHandler,
    MessageHandler,
    filters,
)

from bot.app import App
from bot.telegram.replies import NO_PREVIEW, Destination, Replier, plain
from core.commands.registry import COMMANDS, SPECS, is_slow_action
from core.commands.spec import Place
from core.commands.types import Invocation, Response, Where
from core.i18n import Lang, translate
from core.storage.records import Actor

log = logging.getLogger(__name__)

TARGET = "telegram"
CALLBACK_TEXT_MAX = 200  # Telegram's limit for a callback answer's notice
INLINE_CACHE_SECONDS = 30  # answers change only when anchors do; short so a new anchor shows soon
# Deep-link payload -> the command /help explains: the commands that only work in a private chat
# (their refusal in a group links here with `Response.private_chat_topic`).
START_PAYLOADS = {spec.name: spec.name for spec in SPECS if spec.place is Place.PRIVATE_CHAT}


def actor_of(user: User) -> Actor:
    name = user.full_name or (f"@{user.username}" if user.username else str(user.id))
    return Actor("telegram", str(user.id), name)


def where_of(chat: Chat) -> Where:
    return Where(str(chat.id), private=chat.type == ChatType.PRIVATE)


def lang_of(user: User | None) -> Lang | None:
    """The user's app language as a hint; None when Telegram didn't say (then the bot's default)."""
    code = (user.language_code or "") if user is not None else ""
    if not code:
        return None
    return "zh" if code.lower().startswith("zh") else "en"


class Handlers:
    def __init__(self, app: App, replier: Replier):
        self.app = app
        self.router = app.router
        self.replier = replier
        self.username = ""  # set by bind() from getMe
        self.bot_id = 0
        self._mention: re.Pattern[str] | None = None

    def bind(self, me: User) -> None:
        """Learn the bot's own name (getMe): needed for mentions, /cmd@name and deep links."""
        self.username = me.username or ""
        self.bot_id = me.id
        self.replier.username = self.username or None
        name = re.escape(self.username)
        self._mention = re.compile(rf"@{name}\b", re.IGNORECASE) if self.username else None

    def install(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        new_message = filters.UpdateType.MESSAGE  # edits of old messages are not new questions
        application.add_handler(CommandHandler("start", self.on_start, filters=new_message))
        application.add_handler(CommandHandler(list(COMMANDS), self.on_command, filters=new_message))
        application.add_handler(MessageHandler(filters.COMMAND & new_message, self.on_unknown_command))
        application.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND & new_message, self.on_text))
        application.add_handler(CallbackQueryHandler(self.on_callback))
        application.add_handler(InlineQueryHandler(self.on_inline))
        application.add_error_handler(self.on_error)

    # --- messages ------------------------------------------------------------------------------
    async def on_command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, user = update.message, update.effective_user
        if message is None or user is None or not message.text:
            return
        inv = self.router.parse(actor_of(user), where_of(message.chat), message.text, lang_of(user), TARGET)
        await self._run(update.update_id, message, inv)

    async def on_start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, user = update.message, update.effective_user
        if message is None or user is None:
            return
        payload = context.args[0] if context.args else ""
        topic = START_PAYLOADS.get(payload, "")
        inv = Invocation(actor_of(user), where_of(message.chat), "help", topic, lang_of(user), TARGET)
        await self._run(update.update_id, message, inv)

    async def on_unknown_command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/bogus: answered in a private chat, or in a group when addressed to this bot by name;
        a group's other /commands belong to other bots."""
        message, user = update.message, update.effective_user
        if message is None or user is None or not message.text:
            return
        head = message.text.split(maxsplit=1)[0]
        _, _, addressee = head.partition("@")
        if message.chat.type != ChatType.PRIVATE and addressee.lower() != self.username.lower():
            return
        inv = self.router.parse(actor_of(user), where_of(message.chat), message.text, lang_of(user), TARGET)
        await self._run(update.update_id, message, inv)

    async def on_text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, user = update.message, update.effective_user
        if message is None or user is None or message.text is None:
            return
        private = message.chat.type == ChatType.PRIVATE
        where, actor, lang = where_of(message.chat), actor_of(user), lang_of(user)
        replied = message.reply_to_message
        text = message.text
        answering: bool | None = None  # a private chat: the next line may answer a question
        if not private:
            author = replied.from_user if replied is not None else None
            to_bot = author is not None and author.id == self.bot_id
            if not (to_bot or self._mentioned(message)):
                return
            if self._mention is not None:
                text = self._mention.sub(" ", text)
            # In a group only a reply to the question itself answers it (a reject reason): a mention
            # or a reply to another answer is a question of its own.
            answering = (
                replied is not None and to_bot and self.replier.asked(message.chat.id, replied.message_id)
            )
        inv = Invocation(actor, where, "", text.strip(), lang, TARGET, answering=answering)
        await self._run(update.update_id, message, inv)

    def _mentioned(self, message: Message) -> bool:
        if not self.username:
            return False
        kinds: list[str | None] = [MessageEntity.MENTION, MessageEntity.TEXT_MENTION]
        for entity, said in message.parse_entities(kinds).items():
            if entity.type == MessageEntity.TEXT_MENTION and entity.user is not None:
                if entity.user.id == self.bot_id:
                    return True
            elif said.lower() == f"@{self.username.lower()}":
                return True
        return False

    async def _run(self, update_id: int, message: Message, inv: Invocation) -> None:
        started = time.perf_counter()
        responses = await self.router.handle(inv)
        private = message.chat.type == ChatType.PRIVATE
        to = Destination(
            message.chat.id,
            private,
            inv.actor.user_id,
            self.router.language(inv),  # what the router decided for the replies themselves
            reply_to=None if private else message.message_id,
            thread_id=message.message_thread_id if message.is_topic_message else None,
        )
        await self.replier.send(to, responses)
        self._log(update_id, inv.command or "text", inv, responses, started)

    # --- buttons -------------------------------------------------------------------------------
    async def on_callback(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is None:
            return
        # Until answered the button shows a spinner: a slow action (a chart) is answered at once; a
        # quick one after it ran, so its acknowledgement (a vote noted) is the button's own notice.
        slow = is_slow_action(query.data or "")
        if slow:
            await self._answer_callback(query, update.update_id)
        message = query.message
        if message is None:  # a button under an inline-mode message: we never put any there
            return
        started = time.perf_counter()
        user, chat = query.from_user, message.chat
        # The action goes to the router as it came: it checks permission itself (a forged "m:a:5" from
        # someone who is not a moderator is refused and audited there, never pre-filtered here).
        inv = Invocation(actor_of(user), where_of(chat), "", query.data or "", lang_of(user), TARGET)
        responses = await self.router.handle_action(inv)
        if not slow:
            toasts = [r for r in responses if r.toast and r.text]
            await self._answer_callback(query, update.update_id, " ".join(r.text for r in toasts))
            responses = [r for r in responses if not (r.toast and r.text)]
        private = chat.type == ChatType.PRIVATE
        to = Destination(
            chat.id,
            private,
            inv.actor.user_id,
            self.router.language(inv),
            reply_to=None if private else message.message_id,
            button_message=message.message_id,
            thread_id=getattr(message, "message_thread_id", None)
            if getattr(message, "is_topic_message", False)
            else None,
        )
        await self.replier.send(to, responses)
        self._log(update.update_id, f"button:{inv.text.partition(':')[0]}", inv, responses, started)

    @staticmethod
    async def _answer_callback(query: CallbackQuery, update_id: int, text: str = "") -> None:
        try:
            await query.answer(text[:CALLBACK_TEXT_MAX] or None)
        except TelegramError as exc:  # too old to answer: the action itself may still work
            log.info("callback answer failed", extra={"update_id": update_id, "error": str(exc)})

    # --- inline mode ---------------------------------------------------------------------------
    async def on_inline(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.inline_query
        if query is None:
            return
        started = time.perf_counter()
        text = query.query.strip()
        actor = actor_of(query.from_user)
        # "ask", not free text: an inline query is never the answer to a /submit dialogue question.
        inv = Invocation(
            actor, Where(actor.user_id, private=True), "ask", text, lang_of(query.from_user), TARGET
        )
        lang = self.router.language(inv)
        if not text:  # nothing typed yet: a hint above the (empty) results, nothing computed
            hint = InlineQueryResultsButton(
                text=translate("telegram.inline_hint", lang), start_parameter="inline"
            )
            await query.answer([], cache_time=INLINE_CACHE_SECONDS, button=hint)
            return
        responses = await self.router.handle(inv)
        answer = next((r.text for r in responses if r.text), "")
        results = []
        if answer:
            lines = [line for line in plain(answer).splitlines() if line.strip()]
            results.append(InlineQueryResultArticle(
                id=hashlib.sha1(text.encode()).hexdigest()[:32],
                title=(lines[0] if lines else translate("telegram.inline_title", lang))[:120],
                description=" ".join(lines[1:3])[:200] or translate("telegram.inline_title", lang),
                input_message_content=InputTextMessageContent(answer, parse_mode=ParseMode.HTML,
                                                              link_preview_options=NO_PREVIEW),
            ))  # fmt: skip
        await query.answer(results, cache_time=INLINE_CACHE_SECONDS)
        self._log(update.update_id, "inline", inv, responses, started)

    # --- errors and logs -----------------------------------------------------------------------
    async def on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        update_id = update.update_id if isinstance(update, Update) else None
        log.error("telegram update failed", exc_info=context.error, extra={"update_id": update_id})

    @staticmethod
    def _log(update_id: int, kind: str, inv: Invocation, responses: list[Response], started: float) -> None:
        status = next((r.status for r in responses if r.status != "ok"), "ok")
        log.debug("telegram update handled", extra={
            "update_id": update_id, "kind": kind, "chat_id": inv.where.chat_id, "user": inv.actor.key,
            "status": status, "responses": len(responses),
            "ms": round((time.perf_counter() - started) * 1000, 1),
        })  # fmt: skip
