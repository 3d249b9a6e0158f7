"""What an adapter hands the command layer and what it gets back: platform-neutral.

An adapter turns a slash command, a message, a button press or a modal answer into an
`Invocation` (or an action string for a button), calls `CommandRouter`, and turns each `Response`
into the platform's message, keyboard, ephemeral reply or photo. It never decides anything itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.records import Actor

# Every command the bot has, in the order /help lists them. Both chat adapters register exactly
# these (tests check it); "ask" is also what a plain question means.
COMMANDS: tuple[str, ...] = (
    "ask",
    "submit",
    "review",
    "approve",
    "reject",
    "withdraw",
    "subscribe",
    "unsubscribe",
    "subscriptions",
    "accuracy",
    "export",
    "help",
)

ACTION_MAX_BYTES = 64  # Telegram's callback_data limit; Discord custom_id allows 100


@dataclass(frozen=True, slots=True)
class Where:
    """The conversation: a chat id and whether it is a private one (DM / private chat)."""

    chat_id: str
    private: bool = True


@dataclass(frozen=True, slots=True)
class Invocation:
    actor: Actor
    where: Where
    command: str  # one of COMMANDS, or "" for free text (a question or a dialogue answer)
    text: str = ""  # everything after the command name
    lang: str | None = None  # the platform's locale hint; None: detect from the text
    target: str = "plain"  # how replies are marked up: plain | telegram | discord


@dataclass(frozen=True, slots=True)
class Button:
    label: str
    action: str  # opaque to the adapter, <= ACTION_MAX_BYTES bytes; pass back to handle_action
    style: str = "secondary"  # primary | secondary | success | danger


@dataclass(frozen=True, slots=True)
class Prompt:
    """Ask the user for one line of text (Discord: a modal; Telegram: a ForceReply message;
    console: the next line). The answer goes back as `command` + " " + answer text."""

    title: str
    command: str  # e.g. "reject 42": the answer is appended to this and dispatched as a command
    placeholder: str = ""


@dataclass(frozen=True, slots=True)
class Attachment:
    filename: str
    data: bytes
    mime: str


@dataclass(frozen=True, slots=True)
class Response:
    text: str = ""
    buttons: tuple[tuple[Button, ...], ...] = ()  # rows of buttons
    private: bool = False  # only the invoking user should see it (Discord ephemeral)
    photo: bytes | None = None  # a PNG chart
    attachment: Attachment | None = None  # /export files
    prompt: Prompt | None = None
    edit: bool = False  # replace the message whose button was pressed, instead of a new one
    status: str = "ok"  # ok | error | refused | clarify (for metrics and tests)
    extra: dict[str, str] = field(default_factory=dict)
