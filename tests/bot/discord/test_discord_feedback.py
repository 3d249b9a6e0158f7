"""👍 / 👎 on Discord, through the real discord.py client against the fake Discord: the vote is an
ephemeral acknowledgement and the answer keeps every button; /review feedback shows it."""

from __future__ import annotations

from tests.bot.discord.test_discord_e2e import ALICE, BOB, CAROL, bot, fake  # noqa: F401 - fixtures

QUESTION = "V100 32G gemma 3 27b q4 8k"


async def test_vote_is_ephemeral_and_the_answer_keeps_its_buttons(fake, bot):  # noqa: F811
    app, _ = bot
    token = await fake.slash("ask", {"question": QUESTION}, user_id=ALICE)
    [answer] = await fake.answers(token)
    up = next(c for c in answer.custom_ids if c.startswith("h:u:"))
    down = next(c for c in answer.custom_ids if c.startswith("h:d:"))
    message = fake.message(fake.channel_id, answer.data)
    press = await fake.press(up, message, user_id=ALICE)
    [thanks] = await fake.answers(press)
    assert thanks.type == 4 and thanks.ephemeral and "noted as helpful" in thanks.content
    # Another reader in the channel votes too, on the same message: one vote each.
    press = await fake.press(down, message, user_id=CAROL)
    [noted] = await fake.answers(press)
    assert noted.ephemeral and "not helpful" in noted.content
    counts = await app.storage.feedback_counts()
    assert (counts.helpful, counts.unhelpful) == (1, 1)
    assert not any(r.type == 7 for r in fake.replies[press]), "the answer is not edited: its buttons stay"
    review = await fake.slash("review", {"view": "feedback"}, user_id=BOB)
    [queue] = await fake.answers(review)
    assert "gemma 3 27b" in queue.content and "discord" in queue.content and "newest first" in queue.content
