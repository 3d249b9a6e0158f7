"""The notifier maps every Bot API failure to a Delivery and never raises (the worker relies on it)."""

from __future__ import annotations

import pytest

from bot.telegram.keyboards import callback_data, deep_link
from bot.telegram.notifier import chat_ref
from core.commands.types import Button
from tests.bot.telegram.conftest import Harness


@pytest.mark.parametrize(("status", "description", "outcome"), [
    (403, "Forbidden: bot was blocked by the user", "forbidden"),
    (400, "Bad Request: chat not found", "forbidden"),
    (400, "Bad Request: message is too long", "failed"),
    (502, "Bad Gateway", "retry"),
    (429, "Too Many Requests: retry after 7", "retry"),
])  # fmt: skip
async def test_failures_map_to_outcomes(tg: Harness, status: int, description: str, outcome: str):
    retry_after = 7 if status == 429 else None
    tg.fake.fail("sendMessage", status, description=description, retry_after=retry_after)
    result = await tg.adapter.notifier.deliver("1001", "New measured anchor #1")
    assert result.outcome == outcome and result.error
    assert result.retry_after == retry_after


async def test_sent_as_plain_text_to_the_numeric_chat(tg: Harness):
    result = await tg.adapter.notifier.deliver("1001", "Your measurement #3 was approved <3 & thanks")
    assert result.outcome == "sent"
    [call] = tg.fake.sent
    assert call.chat_id == 1001 and call.text.endswith("<3 & thanks") and "parse_mode" not in call.params


class _Broken:
    async def send_message(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError("This HTTPXRequest is not initialized!")


async def test_never_raises_on_the_unexpected(tg: Harness):
    tg.adapter.notifier.bot = _Broken()  # type: ignore[assignment]
    result = await tg.adapter.notifier.deliver("1001", "x")
    assert result.outcome == "retry" and "not initialized" in result.error


def test_notifier_pace_comes_from_the_catalog(tg: Harness):
    assert tg.adapter.notifier.platform == "telegram" and tg.adapter.notifier.per_second == 25.0


def test_helpers():
    assert chat_ref("-100123") == -100123 and chat_ref("@chan") == "@chan"
    assert callback_data(Button("ok", "m:a:12")) == "m:a:12"
    with pytest.raises(AssertionError):
        callback_data(Button("long", "v:" + "x" * 63))
    assert deep_link("tokbot", "subscribe") == "https://t.me/tokbot?start=subscribe"
    with pytest.raises(ValueError):
        deep_link("tokbot", "no spaces")
