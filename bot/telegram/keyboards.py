"""`Response` buttons as Telegram reply markup: inline keyboards, deep-link buttons, ForceReply."""

from __future__ import annotations

import re

from telegram import ForceReply, InlineKeyboardButton, InlineKeyboardMarkup

from core.commands.types import ACTION_MAX_BYTES, Button

DEEP_LINK_HOST = "https://t.me"
# Telegram accepts only these characters in a /start payload, at most 64 of them.
_PAYLOAD = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
PLACEHOLDER_MAX = 64  # ForceReply.input_field_placeholder limit


def callback_data(button: Button) -> str:
    """The button's action, unchanged: the router re-checks every action, so it is passed as is."""
    size = len(button.action.encode())
    # A longer payload is rejected by Telegram with a 400 for the whole message; fail loudly in tests
    # instead, since the command layer promises ACTION_MAX_BYTES.
    assert 0 < size <= ACTION_MAX_BYTES, f"callback_data {button.action!r} is {size} bytes"
    return button.action


def deep_link(username: str, payload: str, host: str = DEEP_LINK_HOST) -> str:
    if not _PAYLOAD.match(payload):
        raise ValueError(f"not a valid /start payload: {payload!r}")
    return f"{host}/{username}?start={payload}"


def inline_keyboard(
    rows: tuple[tuple[Button, ...], ...], link: tuple[str, str] | None = None
) -> InlineKeyboardMarkup | None:
    """Rows of callback buttons, plus one URL button row (label, url) if given; None when empty."""
    keyboard = [
        [InlineKeyboardButton(b.label, callback_data=callback_data(b)) for b in row] for row in rows if row
    ]
    if link is not None:
        keyboard.append([InlineKeyboardButton(link[0], url=link[1])])
    return InlineKeyboardMarkup(keyboard) if keyboard else None


def force_reply(placeholder: str = "") -> ForceReply:
    # selective: in a group only the person who was asked gets the reply box, not everyone.
    return ForceReply(selective=True, input_field_placeholder=placeholder[:PLACEHOLDER_MAX] or None)
