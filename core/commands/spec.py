"""A command declared once, whole: `CommandSpec`.

Each feature module in core.commands declares its commands here-shaped (name, typed arguments,
slow / private / moderator-only, where it may be used, its buttons' action prefixes, its help text),
and `core.commands.registry` lists them. The router, /help, Discord's slash commands, modals and
deferrals, Telegram's handlers and menus and the console are all generated from these, so adding a
command is one module plus its messages.

Arguments are parsed once: typed platform options (Discord) arrive as values already; text
(Telegram, the console, a Discord mention) goes through `parse_args`, the one text parser.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from core.commands.types import ArgValue, Invocation, Response

if TYPE_CHECKING:
    from core.commands.context import BotContext

Handler = Callable[["BotContext", Invocation], Awaitable[list[Response]]]
# A button press: the action string's parts after the prefix ("v:c:1f" -> ["c", "1f"]).
ActionHandler = Callable[["BotContext", Invocation, list[str]], Awaitable[list[Response]]]

_ID = re.compile(r"^#?(\d{1,12})$")


class ArgKind(Enum):
    TEXT = "text"  # free text: the rest of the line
    WORD = "word"  # one word
    ID = "id"  # a positive whole number, "42" or "#42"
    NUMBER = "number"  # a non-negative number (typed platforms only: text reads it in context)
    GPU = "gpu"  # a card name, completed from the catalog
    MODEL = "model"  # a model name, completed from the catalog
    CARD_OR_MODEL = "card_or_model"  # a card, a model or both (completed from both)
    TARGET = "target"  # CARD_OR_MODEL, or everything (/subscribe all)
    COMMAND = "command"  # one of the declared commands' names (/help submit)


class Place(Enum):
    ANYWHERE = "anywhere"
    # Only where a notice can reach the person later: a private chat, unless the platform can write
    # to someone first (PlatformCapabilities.unprompted_dm).
    PRIVATE_CHAT = "private_chat"


@dataclass(frozen=True, slots=True)
class Arg:
    name: str
    kind: ArgKind = ArgKind.TEXT
    description: str = ""  # message code suffix: the description is `discord.opt.<description>`
    required: bool = False
    choices: tuple[str, ...] = ()  # the values a platform may offer as a fixed list
    # A field only typed platforms ask for separately (Discord's /submit options); in text it is
    # part of the free-text argument, read by the command itself (key=value, pasted output).
    typed_only: bool = False

    @property
    def description_key(self) -> str:
        return f"discord.opt.{self.description or self.name}"

    @property
    def completes(self) -> str | None:
        """What autocompletion offers for it: "gpu", "model", "any" (cards and models), or None."""
        kinds = {ArgKind.GPU: "gpu", ArgKind.MODEL: "model"}
        if self.kind in (ArgKind.CARD_OR_MODEL, ArgKind.TARGET):
            return "any"
        return kinds.get(self.kind)


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """A family of buttons: their action strings start with `prefix` + ":"."""

    prefix: str
    act: ActionHandler
    slow: tuple[str, ...] = ()  # action string prefixes whose answer takes a while (a chart)

    def is_slow(self, action: str) -> bool:
        return action.startswith(self.slow) if self.slow else False


@dataclass(frozen=True, slots=True)
class CommandSpec:
    name: str
    run: Handler
    args: tuple[Arg, ...] = ()
    slow: bool = False  # may pass a platform's answer window (Discord's 3 s): always defer
    private: bool = False  # its first answer is only for the asker (a deferral is ephemeral too)
    moderator_only: bool = False  # the router refuses (and audits) anyone else
    place: Place = Place.ANYWHERE
    group_menu: bool = False  # listed in a group chat's command menu (Telegram), not only privately
    form: tuple[str, ...] = ()  # the args a guided form asks for, in order (Discord modal, dialogue)
    # Message codes of that form: <form_messages>.title, .<arg>, .<arg>.example, .more, .more.example.
    form_messages: str = ""
    actions: tuple[ActionSpec, ...] = ()

    @property
    def usage_key(self) -> str:
        return f"cmd.{self.name}.usage"

    @property
    def summary_key(self) -> str:
        return f"cmd.{self.name}.summary"

    @property
    def example_key(self) -> str:
        return f"cmd.{self.name}.example"

    def arg(self, name: str) -> Arg:
        return next(a for a in self.args if a.name == name)

    @property
    def free_text(self) -> Arg | None:
        """The argument that takes free text in a text line (what a form's "anything else" box fills)."""
        return next((a for a in self.args if a.kind is ArgKind.TEXT and not a.typed_only), None)


def parse_args(spec: CommandSpec, text: str) -> dict[str, ArgValue]:
    """A text line's arguments by the spec's names: single-value arguments take one word each, in
    order, a TEXT argument takes the rest. A word that doesn't read as its kind ends the parse (the
    command then finds the argument missing and shows its usage)."""
    out: dict[str, ArgValue] = {}
    rest = text.strip()
    for arg in (a for a in spec.args if not a.typed_only):
        if not rest:
            break
        if arg.kind in (ArgKind.TEXT, ArgKind.GPU, ArgKind.MODEL, ArgKind.CARD_OR_MODEL, ArgKind.TARGET):
            out[arg.name] = rest
            break
        word, *after = rest.split(maxsplit=1)
        value = _word_value(arg.kind, word)
        if value is None:
            break
        out[arg.name] = value
        rest = after[0].strip() if after else ""
    return out


def _word_value(kind: ArgKind, word: str) -> ArgValue | None:
    if kind is ArgKind.ID:
        m = _ID.match(word)
        return int(m.group(1)) if m else None
    if kind is ArgKind.NUMBER:
        try:
            return float(word)
        except ValueError:
            return None
    return word


def arg_text(args: Mapping[str, ArgValue], name: str) -> str:
    """A text argument, stripped; "" when it was not given."""
    value = args.get(name)
    return str(value).strip() if value is not None else ""


def arg_id(args: Mapping[str, ArgValue], name: str = "id") -> int | None:
    value = args.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
