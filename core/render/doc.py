"""A reply as a few typed parts, rendered per chat target (plain console, Telegram HTML, Discord).

Builders produce a `Doc` (prose lines, monospace blocks, launch commands); `render(doc, target)`
turns it into the text one chat message carries. Escaping lives here and only here, so no builder
can forget it: Telegram gets HTML-escaped text, Discord gets markdown with every mention defused and
no backtick able to close a code block early.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Literal

Target = Literal["plain", "telegram", "discord"]
TARGETS: tuple[Target, ...] = ("plain", "telegram", "discord")

# One chat message, in characters; Telegram counts UTF-16 units after entity parsing, so counting
# the raw HTML (tags included) in code points with a margin stays under both.
LIMITS: dict[str, int] = {"plain": 4000, "telegram": 4096, "discord": 2000}
# The width a monospace block may take and still read on a phone without wrapping.
NARROW = 34

ZWSP = "\u200b"


@dataclass(frozen=True, slots=True)
class Para:
    """A line of prose in the asker's language; may contain text the user typed."""

    text: str


@dataclass(frozen=True, slots=True)
class Pre:
    """A monospace block (a table); lines are ASCII and padded to one display width."""

    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Cmd:
    """A shell command to copy, shown in its own block."""

    text: str


Part = Para | Pre | Cmd
Doc = tuple[Part, ...]


def display_width(text: str) -> int:
    if text.isascii() and text.isprintable():
        return len(text)  # what wcswidth gives, one column a character, without a call per character
    from wcwidth import wcswidth  # here: ~10 ms to import, and an ASCII table never needs it

    width = wcswidth(text)
    return width if width >= 0 else len(text)  # control characters: count them, never go negative


def pad_block(lines: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Right-strip then pad every line to the widest one, so the block is a clean rectangle."""
    stripped = [line.rstrip() for line in lines]
    widths = [display_width(line) for line in stripped]
    full = max(widths, default=0)
    return tuple(line + " " * (full - w) for line, w in zip(stripped, widths, strict=True))


# --- escaping ------------------------------------------------------------------------------------

# Discord: "@everyone", "@here", "<@id>", "<@&role>", "<#channel>" would ping or link; a zero-width
# space after the sigil keeps them readable and inert. Markdown specials are backslash-escaped in prose.
_DISCORD_MENTION = re.compile(r"@(?=everyone|here)|<(?=[@#])", re.IGNORECASE)
# In prose every Discord <...> syntax is defused too: timestamps <t:...>, commands </cmd:id>, emoji
# <:name:id> / <a:name:id>, guild navigation <id:browse>. (In a code block they don't render, and a
# shell command's "</dev/null" must copy as typed.)
_DISCORD_PROSE_MENTION = re.compile(r"@(?=everyone|here)|<(?=[@#:/]|[a-z]+:)", re.IGNORECASE)
# [ \t]*, not \s*: under MULTILINE a \s* would rescan a run of blank lines from every line start.
_DISCORD_LINE_START = re.compile(r"^([ \t]*)([>#-])", re.MULTILINE)
# Lone surrogates too: they can't be encoded as UTF-8, so a chat API call would fail on them.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _clean(text: str) -> str:
    """No control or bidi-override characters reach a chat, whatever the user typed."""
    return _CONTROL.sub("", text)


def defuse_mentions(text: str) -> str:
    return _DISCORD_MENTION.sub(lambda m: m.group(0) + ZWSP, text)


# The markdown specials \ * _ ~ | ` [ ] each get a backslash: a translation table, one C pass.
_DISCORD_MD_ESCAPES = str.maketrans({c: "\\" + c for c in "\\*_~|`[]"})


def discord_prose(text: str) -> str:
    escaped = _clean(text).translate(_DISCORD_MD_ESCAPES)
    lines = _DISCORD_LINE_START.sub(r"\1\\\2", escaped)
    return _DISCORD_PROSE_MENTION.sub(lambda m: m.group(0) + ZWSP, lines)


def discord_block(text: str) -> str:
    # Inside a code block nothing is markdown, but a backtick run could end the block early.
    return defuse_mentions(_clean(text).replace("`", "'"))


# --- rendering -----------------------------------------------------------------------------------


def _plain(doc: Doc) -> str:
    out: list[str] = []
    for part in doc:
        if isinstance(part, Para):
            out.append(_clean(part.text))
        elif isinstance(part, Pre):
            out.extend(_clean(line) for line in part.lines)
        else:
            out.append("$ " + _clean(part.text))
    return "\n".join(out)


def _telegram(doc: Doc) -> str:
    out: list[str] = []
    for part in doc:
        if isinstance(part, Para):
            out.append(html.escape(_clean(part.text), quote=False))
        elif isinstance(part, Pre):
            out.append("<pre>" + html.escape(_clean("\n".join(part.lines)), quote=False) + "</pre>")
        else:
            out.append("<pre>" + html.escape(_clean(part.text), quote=False) + "</pre>")
    return "\n".join(out)


def _discord(doc: Doc) -> str:
    out: list[str] = []
    for part in doc:
        if isinstance(part, Para):
            out.append(discord_prose(part.text))
        elif isinstance(part, Pre):
            out.append("```\n" + discord_block("\n".join(part.lines)) + "\n```")
        else:
            out.append("```sh\n" + discord_block(part.text) + "\n```")
    return "\n".join(out)


_RENDERERS = {"plain": _plain, "telegram": _telegram, "discord": _discord}


def render(doc: Doc, target: str = "plain") -> str:
    return _RENDERERS.get(target, _plain)(doc)


def limit_for(target: str) -> int:
    return LIMITS.get(target, LIMITS["plain"])


def fits(text: str, target: str) -> bool:
    # UTF-16 length: Telegram's unit; a non-BMP character (emoji) counts twice.
    return len(text.encode("utf-16-le")) // 2 <= limit_for(target)


def render_first_fitting(docs: list[Doc], target: str) -> str:
    """The first (richest) variant that fits one message; the last one cut to size as a backstop."""
    text = ""
    for doc in docs:
        text = render(doc, target)
        if fits(text, target):
            return text
    return truncate(docs[-1], target)


def truncate(doc: Doc, target: str) -> str:
    """Drop trailing parts until the message fits; a lone oversized part is cut on a line boundary."""
    parts = list(doc)
    while len(parts) > 1:
        text = render(tuple(parts), target)
        if fits(text, target):
            return text
        parts.pop()
    text = render(tuple(parts), target)
    if fits(text, target):
        return text
    # A single part too long to fit: keep whole lines of its plain prose.
    only = parts[0] if parts else Para("")
    raw = only.text if isinstance(only, Para | Cmd) else "\n".join(only.lines)
    budget = limit_for(target) // 2  # room for escaping that may double the size
    return render((Para(raw[:budget].rsplit("\n", 1)[0] if "\n" in raw[:budget] else raw[:budget]),), target)
