"""'Was this helpful?': 👍 / 👎 under every answer, one vote per person per answer, /accuracy's share,
/review feedback for moderators."""

from __future__ import annotations

import json

from core.community.submit_limits import engine_version

QUESTION = "V100 32G gemma 3 27b"


def votes(response):
    """The 👍 / 👎 row's actions."""
    return [b.action for row in response.buttons for b in row if b.action.startswith("h:")]


async def test_every_answer_has_helpful_buttons_and_nothing_else_does(h):
    [answer] = await h.say("alice", QUESTION)
    up, down = votes(answer)
    assert up.startswith("h:u:") and down.startswith("h:d:") and up[4:] == down[4:]
    assert [b.label for b in answer.buttons[-1]] == ["👍 Helpful", "👎 Not helpful"]
    [zh] = await h.say("alice", "V100 32G 跑 gemma 3 27b 多少 token")
    assert [b.label for b in zh.buttons[-1]] == ["👍 有帮助", "👎 没帮助"]
    [model_only] = await h.say("alice", "gemma 3 27b")  # an answer without follow-ups still gets them
    assert len(votes(model_only)) == 2
    [clarify] = await h.say("alice", "hello there")
    assert votes(clarify) == []


async def test_a_vote_is_stored_with_the_answer_and_changeable(h):
    [answer] = await h.say("alice", QUESTION)
    up, down = votes(answer)
    [thanks] = await h.press("alice", up)
    assert thanks.toast and thanks.private and "noted as helpful" in thanks.text
    assert (await h.storage.feedback_counts()).helpful == 1
    [changed] = await h.press("alice", down)
    assert changed.toast and "Changed" in changed.text
    counts = await h.storage.feedback_counts()
    assert (counts.helpful, counts.unhelpful) == (0, 1), "one vote per person per answer"
    [vote] = await h.storage.unhelpful_feedback()
    assert vote.question == QUESTION and vote.voter.platform == "console" and vote.voter.user_id == "alice"
    assert vote.engine_version == engine_version(h.catalog) and vote.engine_version.startswith("cal-")
    assert json.loads(vote.query)["gpu"]["id"] == "tesla-v100-32g-pcie"
    assert vote.reply.splitlines()[0] == answer.text.splitlines()[0] and len(vote.reply.splitlines()) <= 4
    assert vote.at == h.clock.now


async def test_others_in_the_chat_vote_once_each_and_other_chats_cannot(h):
    [answer] = await h.say("alice", QUESTION, platform="telegram", private=False, chat="-100")
    up, down = votes(answer)
    await h.press("alice", up, platform="telegram", chat="-100")
    await h.press("carol", down, platform="telegram", chat="-100")
    counts = await h.storage.feedback_counts()
    assert (counts.helpful, counts.unhelpful) == (1, 1)
    [expired] = await h.press("mallory", up, platform="telegram", chat="-999")
    assert expired.status == "error" and "can't be rated" in expired.text
    assert (await h.storage.feedback_counts()).total == 2
    [forged] = await h.press("alice", "h:x:whatever", platform="telegram", chat="-100")
    assert forged.status == "error"


async def test_accuracy_shows_the_helpful_share(h):
    [none] = await h.say("alice", "/accuracy")
    assert "No reader has rated an answer yet" in none.text
    for user, pick in (("alice", 0), ("bob", 0), ("carol", 0), ("dave", 1)):
        [answer] = await h.say(user, QUESTION)
        await h.press(user, votes(answer)[pick])
    [report] = await h.say("alice", "/accuracy")
    assert "Readers found 75% of answers helpful (👍 3 · 👎 1)." in report.text


async def test_review_feedback_lists_unhelpful_answers_newest_first(h):
    [empty] = await h.say("bob", "/review feedback")
    assert "No answer has been voted not helpful" in empty.text
    for user, question in (("alice", QUESTION), ("carol", "4090 llama 3 8b q4")):
        [answer] = await h.say(user, question)
        await h.press(user, votes(answer)[1])
        h.clock.advance(minutes=5)
    [queue] = await h.say("bob", "/review feedback")
    assert queue.private and "newest first (2 of 2)" in queue.text
    assert queue.text.index("4090 llama 3 8b q4") < queue.text.index(QUESTION)
    assert "RTX 4090" in queue.text and "V100" in queue.text, "the reply's first lines"
    [refused] = await h.say("alice", "/review feedback")
    assert refused.status == "refused"
