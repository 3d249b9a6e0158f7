"""What an adapter hands the command layer and what it gets back: platform-neutral.

An adapter turns a slash command, a message, a button press or a modal answer into an
`Invocation` (or an action string for a button), calls `CommandRouter`, and turns each `Response`
into the platform's message, keyboard, ephemeral reply or photo, as its `PlatformCapabilities`
allow. It never decides anything itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from core.i18n import Lang
from core.storage.records import Actor

ACTION_MAX_BYTES = 64  # Telegram's callback_data limit; Discord custom_id allows 100

ArgValue = str | int | float


@dataclass(frozen=True, slots=True)
class Where:
    """The conversation: a chat id and whether it is a private one (DM / private chat)."""

    chat_id: str
    private: bool = True


@dataclass(frozen=True, slots=True)
class Invocation:
    actor: Actor
    where: Where
    command: str  # a declared command's name, or "" for free text (a question or a dialogue answer)
    text: str = ""  # everything after the command name, as typed (empty for typed platform options)
    hint: Lang | None = None  # the platform's locale hint; None: the text and the bot's default decide
    target: str = "plain"  # how replies are marked up: plain | telegram | discord
    # Parsed arguments by the command's declared names (core.commands.spec): from typed platform
    # options as they came, or from `text` by core.commands.spec.parse_args. Filled by the router.
    args: Mapping[str, ArgValue] = field(default_factory=dict)
    # The language every reply to this invocation is in: decided once, by the router.
    lang: Lang = "en"
    # Whether the line was written as the answer to a question the bot asked (a `Prompt`): True (a
    # reply to the prompt message itself), False (known not to be: in a group, a reply to another
    # message or a mention), None (the platform can't tell: a private chat, the console). Only a line
    # that may be the answer takes a pending prompt, so a moderator's question in a group while a
    # reject reason is pending is answered as a question and the prompt stays.
    answering: bool | None = None


@dataclass(frozen=True, slots=True)
class Button:
    label: str
    action: str  # opaque to the adapter, <= ACTION_MAX_BYTES bytes; pass back to handle_action
    style: str = "secondary"  # primary | secondary | success | danger


@dataclass(frozen=True, slots=True)
class Prompt:
    """Ask the user for one line of text (Discord: a modal; Telegram: a ForceReply message;
    console: the next line). The answer goes back as `command` + " " + answer text; the router
    keeps the "next line answers this" state (core.commands.prompts)."""

    title: str
    command: str  # e.g. "reject 42": the answer is appended to this and dispatched as a command
    placeholder: str = ""


@dataclass(frozen=True, slots=True)
class Attachment:
    filename: str
    data: bytes
    mime: str


class Audience(Enum):
    """Who a response is for; each adapter delivers it as its platform can (PlatformCapabilities)."""

    CHAT = "chat"  # everyone in the conversation
    ASKER = "asker"  # only the person who asked: ephemeral where the platform has it, else the chat
    # Only the asker, and never the whole group (moderation material): ephemeral, or their private
    # chat on platforms without ephemeral messages, with a pointer left in the group.
    ASKER_PRIVATELY = "asker_privately"


@dataclass(frozen=True, slots=True)
class Response:
    text: str = ""
    buttons: tuple[tuple[Button, ...], ...] = ()  # rows of buttons
    audience: Audience = Audience.CHAT
    photo: bytes | None = None  # a PNG chart
    attachment: Attachment | None = None  # /export files
    prompt: Prompt | None = None  # the next line answers this as a command
    # The next plain line from this person continues a dialogue core keeps (the guided /submit);
    # where only a reply reaches the bot (Telegram groups) the adapter asks for one.
    expects_reply: bool = False
    # The topic of a button opening the asker's private chat with the bot (a /start payload), for
    # what can only be done there on platforms that can't write to someone first.
    private_chat_topic: str | None = None
    edit: bool = False  # replace the message whose button was pressed, instead of a new one
    status: str = "ok"  # ok | error | refused | clarify (for metrics and tests)
    # A short acknowledgement of a button press ("noted, thanks"): shown as the press's own notice where
    # the platform has one (Telegram's callback answer), instead of a message in the chat; elsewhere
    # it is an ASKER reply.
    toast: bool = False

    @property
    def private(self) -> bool:
        """Only the invoking user should see it (Discord: ephemeral)."""
        return self.audience is not Audience.CHAT


def to_asker(text: str, status: str = "ok") -> Response:
    """The most common reply: text only the asker needs to see."""
    return Response(text, audience=Audience.ASKER, status=status)


@dataclass(frozen=True, slots=True)
class PlatformCapabilities:
    """What a chat platform can do, declared by its adapter; core asks these instead of knowing
    platforms by name."""

    ephemeral: bool = False  # messages only the asker sees, in the chat (Discord interactions)
    unprompted_dm: bool = False  # may write to a person privately who never opened a chat with it
    # How to address a person's private conversation for a later notice, `{user_id}` filled in;
    # None: notices go to the chat the person used.
    private_address: str | None = None

    def notice_chat(self, actor: Actor, where: Where) -> str:
        """Where to tell this person something later: the private conversation they are in, else
        their private address where the platform has one (a channel should not fill with personal
        notices), else the chat they used."""
        if where.private or self.private_address is None:
            return where.chat_id
        return self.private_address.format(user_id=actor.user_id)
