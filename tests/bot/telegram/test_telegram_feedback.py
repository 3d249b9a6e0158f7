"""👍 / 👎 on Telegram through the real adapter and the fake Bot API: the vote is acknowledged as the
button's own notice (answerCallbackQuery text), nothing is posted in the chat, the answer keeps its
keyboard; a slow button (the chart) is still answered at once."""

from __future__ import annotations

from tests.bot.telegram.conftest import QUESTION, Harness
from tests.fakes.telegram_api import BOT_USERNAME


async def test_vote_is_the_buttons_notice_and_nothing_is_posted(tg: Harness, app):
    alice, carol = tg.fake.user(1001, "Alice"), tg.fake.user(1003, "Carol")
    group = tg.fake.group()
    mention = await tg.say(alice, f"@{BOT_USERNAME} {QUESTION}", group)
    [answer] = tg.fake.sent
    assert mention["chat"]["id"] == group["id"]
    up = next(b["callback_data"] for b in answer.buttons if b["callback_data"].startswith("h:u:"))
    down = next(b["callback_data"] for b in answer.buttons if b["callback_data"].startswith("h:d:"))
    assert [b["text"] for b in answer.buttons if b["callback_data"].startswith("h:")] == [
        "👍 Helpful",
        "👎 Not helpful",
    ]
    start = len(tg.fake.calls)
    await tg.press(alice, answer.message, up)
    await tg.press(carol, answer.message, down)
    calls = tg.new(start)
    assert [c.method for c in calls] == ["answerCallbackQuery", "answerCallbackQuery"]
    assert "noted as helpful" in calls[0].params["text"] and "not helpful" in calls[1].params["text"]
    counts = await app.storage.feedback_counts()
    assert (counts.helpful, counts.unhelpful) == (1, 1)
    start = len(tg.fake.calls)
    await tg.press(alice, answer.message, down)  # changes alice's vote, still one per person
    [changed] = tg.new(start)
    assert "Changed" in changed.params["text"]
    assert (await app.storage.feedback_counts()).unhelpful == 2


async def test_slow_button_is_answered_before_it_runs(tg: Harness):
    alice = tg.fake.user(1001, "Alice")
    await tg.say(alice, QUESTION)
    [answer] = tg.fake.sent
    frameworks = next(b for b in answer.buttons if b["callback_data"].startswith("v:f:"))
    chart = next(b for b in answer.buttons if b["callback_data"].startswith("v:c:"))
    start = len(tg.fake.calls)
    await tg.press(alice, answer.message, chart["callback_data"])
    assert tg.new(start)[0].method == "answerCallbackQuery" and "text" not in tg.new(start)[0].params
    start = len(tg.fake.calls)
    await tg.press(alice, answer.message, frameworks["callback_data"])
    methods = [c.method for c in tg.new(start)]
    assert "answerCallbackQuery" in methods and "sendMessage" in methods
