"""End to end: the real TelegramAdapter polls the fake Bot API over HTTP on 127.0.0.1, with the
rate limiter on, SQLite storage and the outbox worker delivering notices through the notifier."""

from __future__ import annotations

import asyncio
import re

from bot.app import App
from bot.telegram import TelegramAdapter
from tests.bot.telegram.conftest import MODERATOR, QUESTION, SUBMISSION
from tests.fakes.telegram_api import FakeTelegram


def submission_id(text: str) -> int:
    return int(re.search(r"Received as #(\d+)", text).group(1))  # type: ignore[union-attr]


async def test_question_answered_with_a_table(fake: FakeTelegram, live: tuple[App, TelegramAdapter]):
    alice = fake.user(1001, "Alice")
    fake.message(alice, QUESTION)
    [reply] = await fake.wait_sent(1, chat_id=1001)
    assert reply.params["parse_mode"] == "HTML"
    assert re.search(r"<pre>quant .*Q4_K_M", reply.text, re.DOTALL)
    assert [c.method for c in fake.calls[:2]] == ["getMe", "setMyCommands"]


async def _submit(fake: FakeTelegram, user: dict) -> int:
    fake.message(user, SUBMISSION)
    sent = await fake.wait_sent(1, chat_id=user["id"])
    return submission_id(sent[-1].text)


async def test_submit_review_approve_notifies_submitter_and_subscriber(
    fake: FakeTelegram, live: tuple[App, TelegramAdapter]
):
    app, _ = live
    alice, bob, carol = fake.user(1001, "Alice"), fake.user(MODERATOR, "Bob"), fake.user(1003, "Carol")
    fake.message(carol, "/subscribe V100 32G")
    assert "Subscribed" in (await fake.wait_sent(1, chat_id=1003))[-1].text
    sid = await _submit(fake, alice)
    fake.message(bob, "/review")

    def cards() -> list:
        approve = f"m:a:{sid}"
        mine = fake.sent_to(MODERATOR)
        return [c for c in mine if any(b.get("callback_data") == approve for b in c.buttons)]

    await fake.wait_for(lambda: bool(cards()))
    card = cards()[0]
    fake.press(bob, card.message, f"m:a:{sid}")
    [edit] = await fake.wait_calls("editMessageText")
    assert f"Approved #{sid}" in edit.params["text"]
    assert (await app.storage.get_submission(sid)).status == "approved"

    assert await app.worker.run_once() == 2  # the submitter's decision and carol's anchor notice
    alice_notice = fake.sent_to(1001)[-1]
    assert f"#{sid}" in alice_notice.text and "approved" in alice_notice.text
    assert "parse_mode" not in alice_notice.params, "notices are plain text"
    assert f"New measured anchor #{sid}" in fake.sent_to(1003)[-1].text
    assert (await app.storage.outbox_stats()).sent == 2


async def test_forged_approval_is_refused_and_logged(fake: FakeTelegram, live: tuple[App, TelegramAdapter]):
    app, _ = live
    alice, mallory = fake.user(1001, "Alice"), fake.user(666, "Mallory")
    sid = await _submit(fake, alice)
    fake.message(mallory, "hello")
    [answer] = await fake.wait_sent(1, chat_id=666)
    fake.press(mallory, answer.message, f"m:a:{sid}")
    await fake.wait_calls("answerCallbackQuery")
    refusal = (await fake.wait_sent(2, chat_id=666))[-1]
    assert "Only moderators" in refusal.text
    assert (await app.storage.get_submission(sid)).status == "pending"
    audit = await app.storage.audit_log()
    assert any(e.action == "refused:approve" and e.actor.key == "telegram:666" and not e.ok for e in audit)
    assert await app.worker.run_once() == 0, "nothing approved, nobody notified"


async def test_rate_limited_reply_is_retried(fake: FakeTelegram, live: tuple[App, TelegramAdapter]):
    fake.fail("sendMessage", 429, retry_after=1)
    loop = asyncio.get_running_loop()
    started = loop.time()
    fake.message(fake.user(1001, "Alice"), QUESTION)
    [reply] = await fake.wait_sent(1, chat_id=1001, timeout=15)
    assert "<pre>" in reply.text
    assert [c.error for c in fake.calls if c.method == "sendMessage"] == [429, None]
    assert loop.time() - started >= 1.0, "waited out retry_after"


async def test_forbidden_notice_deactivates_the_subscription(
    fake: FakeTelegram, live: tuple[App, TelegramAdapter]
):
    app, _ = live
    alice, bob, carol = fake.user(1001, "Alice"), fake.user(MODERATOR, "Bob"), fake.user(1003, "Carol")
    fake.message(carol, "/subscribe everything")
    await fake.wait_sent(1, chat_id=1003)
    sid = await _submit(fake, alice)
    fake.message(bob, f"/approve {sid}")
    await fake.wait_sent(1, chat_id=MODERATOR)
    fake.fail("sendMessage", 403, chat_id=1003)  # carol blocked the bot meanwhile
    assert await app.worker.run_once() == 2
    assert app.worker.counts.forbidden == 1 and app.worker.counts.sent == 1
    assert not [s for s in await app.storage.subscriptions_of("telegram", "1003") if s.active]
    assert (await app.storage.outbox_stats()).dead == 1


async def test_stop_is_clean_and_idempotent(fake: FakeTelegram, live: tuple[App, TelegramAdapter]):
    _, adapter = live
    fake.message(fake.user(1001, "Alice"), QUESTION)
    await fake.wait_sent(1)
    await adapter.stop()
    await adapter.stop()
    assert not adapter.application.running
    fake.message(fake.user(1001, "Alice"), "/help")
    await asyncio.sleep(0.2)
    assert len(fake.sent) == 1, "no polling after stop"
