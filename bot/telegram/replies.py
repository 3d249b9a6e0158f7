"""`Response`s as Telegram messages: HTML text, keyboards, photos, files, ForceReply questions, edits.

The command layer already rendered and escaped the text for Telegram (`target="telegram"`), so it is
sent with parse_mode=HTML as is. Only if Telegram still refuses the markup (a core bug) is the text
sent once more as plain text, so the person gets an answer anyway.
"""

from __future__ import annotations

import html
import logging
import re
from collections import OrderedDict
from dataclasses import dataclass

from telegram import Bot, ForceReply, InlineKeyboardMarkup, LinkPreviewOptions, Message, ReplyParameters
from telegram.constants import MessageLimit, ParseMode
from telegram.error import BadRequest, Forbidden, TelegramError

from bot.telegram.keyboards import deep_link, force_reply, inline_keyboard
from core.commands.types import Audience, Response
from core.i18n import Lang, translate

log = logging.getLogger(__name__)

_TAG = re.compile(r"<[^>]+>")
Markup = InlineKeyboardMarkup | ForceReply | None
# Tables are monospace text, and a link preview card under an estimate only pushes it off screen.
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
# How many group questions (ForceReply messages) are remembered so a reply to one can be told from
# a reply to any other bot message; older ones fall back to "not an answer", which is harmless
# (the person is asked again by typing the command).
ASKED_CAPACITY = 5_000


def plain(text: str) -> str:
    """HTML as Telegram would show it, for the fallback and for inline result titles."""
    return html.unescape(_TAG.sub("", text))


@dataclass(frozen=True, slots=True)
class Destination:
    """Where the responses to one update go, and what they answer."""

    chat_id: int
    private: bool
    user_id: str
    lang: Lang  # the language the router decided for this update's replies
    reply_to: int | None = None  # the message to quote (groups: the question or command)
    button_message: int | None = None  # the message whose button was pressed (for edit=True)
    thread_id: int | None = None  # forum topic, so an answer stays in the topic it was asked in


class Replier:
    def __init__(self, bot: Bot):
        self.bot = bot
        self.username: str | None = None  # the bot's @name, known after getMe
        self._asked: OrderedDict[tuple[int, int], None] = OrderedDict()  # (chat, message) questions

    def asked(self, chat_id: int, message_id: int) -> bool:
        """Whether that group message is a question the bot asked (a ForceReply prompt)."""
        return (chat_id, message_id) in self._asked

    def _remember_question(self, message: Message) -> Message:
        self._asked[(message.chat_id, message.message_id)] = None
        while len(self._asked) > ASKED_CAPACITY:
            self._asked.popitem(last=False)
        return message

    async def send(self, to: Destination, responses: list[Response]) -> list[Message]:
        sent: list[Message] = []
        moved = False
        for response in responses:
            if self._to_private_chat(to, response):
                message = await self._privately(to, response)
                if message is not None:
                    sent.append(message)
                    moved = True
                    continue
            try:
                message = await self._one(to, response)
            except Forbidden as exc:  # removed from the group or blocked: nothing more can be sent there
                log.warning(
                    "telegram chat refused the reply", extra={"chat_id": to.chat_id, "error": str(exc)}
                )
                break
            except TelegramError:  # one failed part (say, a photo) must not lose the rest of the answer
                log.exception(
                    "telegram reply failed", extra={"chat_id": to.chat_id, "status": response.status}
                )
                continue
            if message is not None:
                sent.append(message)
        if moved:  # say in the group where the answer went
            try:
                sent.append(
                    await self._text(
                        to,
                        translate("telegram.sent_privately", to.lang),
                        None,
                        ReplyParameters(to.reply_to, allow_sending_without_reply=True)
                        if to.reply_to is not None
                        else None,
                    )
                )
            except TelegramError:
                log.info("telegram pointer to the private chat failed", extra={"chat_id": to.chat_id})
        return sent

    @staticmethod
    def _to_private_chat(to: Destination, r: Response) -> bool:
        """Moderation material asked for in a group goes to the moderator's private chat: Telegram has
        no ephemeral messages, and pending submissions or the audit log are not for the whole group."""
        return not to.private and r.audience is Audience.ASKER_PRIVATELY and to.user_id.isdigit()

    async def _privately(self, to: Destination, r: Response) -> Message | None:
        """None when the moderator never opened a private chat with the bot: then the group it is."""
        dm = Destination(int(to.user_id), True, to.user_id, to.lang)
        try:
            return await self._one(dm, r)
        except Forbidden:
            return None
        except BadRequest as exc:  # "chat not found": same as never started
            log.info("telegram private chat unavailable", extra={"error": exc.message})
            return None

    async def _one(self, to: Destination, r: Response) -> Message | None:
        link = None
        if r.private_chat_topic and self.username:
            link = (
                translate("telegram.open_private", to.lang),
                deep_link(self.username, r.private_chat_topic),
            )
        markup = inline_keyboard(r.buttons, link)
        if r.edit and to.button_message is not None and r.text and r.photo is None and r.attachment is None:
            if await self._edit(to, r.text, markup):
                return None
        quote = None
        if to.reply_to is not None:  # the question may be deleted meanwhile: answer anyway
            quote = ReplyParameters(to.reply_to, allow_sending_without_reply=True)
        if r.photo is not None or r.attachment is not None:
            return await self._file(to, r, markup, quote)
        if r.prompt is not None:
            # The router remembers the question; the reply box makes answering it one tap in a group.
            question = r.text or r.prompt.title
            sent = await self._text(to, question, force_reply(r.prompt.placeholder), quote)
            return self._remember_question(sent)
        if not r.text:
            return None
        if markup is None and r.expects_reply and not to.private:
            # The guided /submit asks a question; in a group only a reply reaches the bot (privacy mode).
            return self._remember_question(await self._text(to, r.text, force_reply(), quote))
        return await self._text(to, r.text, markup, quote)

    async def _text(
        self,
        to: Destination,
        text: str,
        markup: Markup,
        quote: ReplyParameters | None,
    ) -> Message:
        if len(text) > MessageLimit.MAX_TEXT_LENGTH:
            log.warning("telegram reply over 4096 characters", extra={"length": len(text)})
        try:
            return await self.bot.send_message(
                to.chat_id,
                text,
                parse_mode=ParseMode.HTML,
                reply_markup=markup,
                reply_parameters=quote,
                link_preview_options=NO_PREVIEW,
                message_thread_id=to.thread_id,
            )
        except BadRequest as exc:
            if "parse entities" not in exc.message.lower():
                raise
            log.error("telegram refused the reply's HTML; sent as plain text", extra={"error": exc.message})
            return await self.bot.send_message(
                to.chat_id,
                plain(text),
                reply_markup=markup,
                reply_parameters=quote,
                link_preview_options=NO_PREVIEW,
                message_thread_id=to.thread_id,
            )

    async def _edit(self, to: Destination, text: str, markup: InlineKeyboardMarkup | None) -> bool:
        """Replace the message whose button was pressed; its keyboard goes (none is passed) unless the
        response brings one. False if it can't be edited, so the caller sends a new message instead."""
        try:
            await self.bot.edit_message_text(
                text,
                chat_id=to.chat_id,
                message_id=to.button_message,
                parse_mode=ParseMode.HTML,
                reply_markup=markup,
                link_preview_options=NO_PREVIEW,
            )
        except BadRequest as exc:
            if "not modified" in exc.message.lower():  # pressed twice: it already says this
                return True
            log.info("telegram edit refused; sending instead", extra={"error": exc.message})
            return False
        return True

    async def _file(
        self,
        to: Destination,
        r: Response,
        markup: Markup,
        quote: ReplyParameters | None,
    ) -> Message:
        caption: str | None = r.text or None
        if caption is not None and len(caption) > MessageLimit.CAPTION_LENGTH:
            await self._text(to, caption, None, quote)  # too long for a caption: its own message first
            caption = None
        if r.photo is not None:
            return await self.bot.send_photo(
                to.chat_id,
                r.photo,
                caption=caption,
                parse_mode=ParseMode.HTML,
                reply_markup=markup,
                reply_parameters=quote,
                message_thread_id=to.thread_id,
            )
        assert r.attachment is not None
        return await self.bot.send_document(
            to.chat_id,
            r.attachment.data,
            filename=r.attachment.filename,
            caption=caption,
            parse_mode=ParseMode.HTML,
            reply_markup=markup,
            reply_parameters=quote,
            message_thread_id=to.thread_id,
        )
