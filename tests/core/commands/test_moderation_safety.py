"""Issue 13's moderation and dialogue safety: "cancel" calls a reject off, a decision can be undone by
its moderator for a while, refused attempts are counted (not a row each) and /review audit filters,
the guided /submit is capped and throttled, and a group /submit's decision goes privately."""

from __future__ import annotations

import re

from core.commands.types import Where
from core.storage.records import Actor

SUBMIT = '/submit gpu="V100 32G" model="gemma 3 27b" quant=Q4_K_M ctx=8k decode=21.5 prefill=480'


def submission_id(text: str) -> int:
    m = re.search(r"#(\d+)", text)
    assert m, text
    return int(m.group(1))


async def _pending(h) -> int:
    [r] = await h.say("alice", SUBMIT)
    return submission_id(r.text)


async def test_cancel_answering_the_reject_prompt_keeps_it_pending(h):
    sid = await _pending(h)
    for word in ("cancel", "取消"):
        [prompt] = await h.press("bob", f"m:r:{sid}")
        assert prompt.prompt is not None and "cancel" in prompt.text.lower()
        [r] = await h.say("bob", word)
        assert "Cancelled" in r.text or "已取消" in r.text, r.text
        assert (await h.storage.get_submission(sid)).status == "pending"
    # A real reason still rejects.
    await h.press("bob", f"m:r:{sid}")
    [done] = await h.say("bob", "no log attached")
    assert f"Rejected #{sid}" in done.text
    assert (await h.storage.get_submission(sid)).reason == "no log attached"


async def test_moderator_undoes_own_reject_within_the_window(h):
    sid = await _pending(h)
    [done] = await h.say("bob", f"/reject {sid} oops")
    assert f"/undo {sid}" in done.text
    [[undo]] = [[b.action for b in row] for row in done.buttons]
    assert undo == f"m:u:{sid}"
    h.clock.advance(minutes=3)
    [back] = await h.press("bob", undo)
    assert "Undone" in back.text and (await h.storage.get_submission(sid)).status == "pending"
    assert {b.action for row in back.buttons for b in row} == {f"m:a:{sid}", f"m:r:{sid}"}
    log = await h.storage.audit_log(kind="decisions")
    assert [e.action for e in log] == ["undo:reject", "reject"]


async def test_undo_refused_late_by_others_and_by_non_moderators(h):
    sid = await _pending(h)
    await h.say("bob", f"/approve {sid}")
    [r] = await h.say("mallory", f"/undo {sid}")
    assert r.status == "refused"
    [r] = await h.press("mallory", f"m:u:{sid}")
    assert r.status == "refused"
    h.clock.advance(minutes=11)
    [r] = await h.say("bob", f"/undo {sid}")
    assert r.status == "refused" and "10 minutes" in r.text
    assert (await h.storage.get_submission(sid)).status == "approved"


async def test_undo_of_an_approval_takes_the_anchor_out(h):
    sid = await _pending(h)
    await h.say("bob", f"/approve {sid}")
    # `without` returns the very same index when the anchor isn't in it.
    assert h.bot.anchors.without(sid) is not h.bot.anchors
    await h.say("bob", f"/undo {sid}")
    assert h.bot.anchors.without(sid) is h.bot.anchors
    assert (await h.storage.get_submission(sid)).status == "pending"


async def test_a_flood_of_forged_presses_is_one_counted_row_and_audit_filters(h):
    sid = await _pending(h)
    for _ in range(300):
        await h.press("mallory", f"m:a:{sid}")
    await h.say("bob", f"/approve {sid}")
    rows = await h.storage.audit_log()
    assert len(rows) == 2
    refused = next(e for e in rows if not e.ok)
    assert refused.count == 300
    [view] = await h.say("bob", "/review audit refused")
    assert (
        "console:mallory" in view.text and "×300" in view.text and "approve #" not in view.text.split("\n")[0]
    )
    assert "console:bob approve" not in view.text
    [view] = await h.say("bob", "/review audit decisions")
    assert "console:bob approve" in view.text and "mallory" not in view.text
    [view] = await h.say("bob", "/review audit")
    assert "console:bob approve" in view.text and "console:mallory" in view.text


async def test_dialogue_text_is_capped_then_starts_over(h):
    await h.say("alice", "/submit")
    big = "x=1\n" * 8000  # 32 KB a message, two of them pass the 60 KB cap
    [first] = await h.say("alice", big)
    [second] = await h.say("alice", big)
    assert "60 KB" in second.text, second.text
    assert not h.bot.dialogues  # started over
    assert first.status != "error" or "went wrong" not in first.text


async def test_dialogue_messages_are_throttled_with_one_calm_reply(h):
    await h.say("alice", "/submit")
    replies = [await h.say("alice", "RTX 4090") for _ in range(10)]
    slow = [r for r in replies if r and "Slow down" in r[0].text]
    assert len(slow) == 1
    assert sum(1 for r in replies if not r) == 10 - 6 - 1  # the rest of the burst: read nothing, say nothing
    h.clock.advance(seconds=11)
    [r] = await h.say("alice", "RTX 4090")
    assert "Slow down" not in r.text


async def test_a_lone_surrogate_gets_a_sentence(h):
    [r] = await h.say("alice", "/submit gpu=4090 notes=\ud83d")
    assert "Unicode" in r.text and r.status == "error"
    await h.say("alice", "/submit")
    [r] = await h.say("alice", "4090 \udc00")
    assert "Unicode" in r.text


async def test_a_telegram_group_submit_gets_its_decision_privately(h):
    actor = Actor("telegram", "555", "Carol")
    [r] = await h.router.handle_text(actor, Where("-100200", private=False), SUBMIT)
    sid = submission_id(r.text)
    assert r.private_chat_topic == "submit"
    assert (await h.storage.get_submission(sid)).chat_id == "555"  # the private chat, not the group
    await h.router.handle_text(Actor("telegram", "900", "Mod"), Where("900"), f"/reject {sid} secret reason")
    items = await h.storage.claim_outbox("telegram", h.clock.now, limit=10)
    assert [(i.kind, i.chat_id) for i in items] == [("decision", "555")]
