"""The real discord.py client, end to end, against the fake Discord on 127.0.0.1 (REST + gateway)."""

from __future__ import annotations

import re

import pytest

from bot.app import build_app
from bot.discord.adapter import DiscordAdapter, DiscordStartError
from bot.settings import Settings
from core.storage.memory import MemoryStorage
from tests.fakes.discord_api import FakeDiscord, point_discord_py_at

TOKEN = "MTAxMjM0NTY3ODkwMTIzNDU2Nzg5.GaBcDe.abcdefghijklmnopqrstuvwxyz0123456789AB"
ALICE, BOB, CAROL, MALLORY, DANA = 101, 102, 103, 104, 105
MOD_ROLE = 777000000000000001


@pytest.fixture
async def fake(monkeypatch):
    fake = FakeDiscord(roles={MOD_ROLE: "moderators"})
    await fake.start()
    point_discord_py_at(fake, monkeypatch)
    yield fake
    await fake.close()


@pytest.fixture
async def bot(fake, tmp_path):
    settings = Settings(
        discord_token=TOKEN,
        moderators=f"discord:{BOB}",
        moderator_roles=str(MOD_ROLE),
        db_path=tmp_path / "t.db",
    )
    app = build_app(settings, storage=MemoryStorage())
    await app.start()
    adapter = DiscordAdapter(app, TOKEN, guild_ready_timeout=0.05)
    await adapter.start()
    yield app, adapter
    await adapter.stop()
    await app.close()


async def submit_one(fake: FakeDiscord) -> int:
    token = await fake.slash(
        "submit",
        {
            "gpu": "Tesla V100 PCIe 32GB",
            "model": "gemma-3-27b-it",
            "quant": "Q4_K_M",
            "decode": 21.5,
            "ctx": "8k",
        },
        user_id=ALICE,
        user_name="alice",
    )
    [received] = await fake.answers(token)
    assert "Received as #" in received.content, received.content
    return int(re.search(r"Received as #(\d+)", received.content).group(1))


async def review_card(fake: FakeDiscord, sid: int, user_id: int, roles: list[int] | None = None):
    token = await fake.slash("review", user_id=user_id, roles=roles)
    answers = await fake.answers(token, 2)
    card = next(a for a in answers if f"m:a:{sid}" in a.custom_ids)
    assert card.ephemeral
    return card


async def test_ready_and_ask_answers_with_a_code_block_table(fake, bot):
    app, adapter = bot
    assert adapter.client.user.id == fake.bot_id
    assert app.notifiers["discord"] is adapter.notifier
    assert not any(c.method == "PUT" for c in fake.calls), "the tree is not synced on start"
    token = await fake.slash("ask", {"question": "V100 32G gemma 3 27b q4 8k"}, user_id=ALICE)
    [answer] = await fake.answers(token)
    assert "```" in answer.content and "gemma-3-27b" in answer.content
    assert not answer.ephemeral and len(answer.content) <= 2000
    assert answer.data["allowed_mentions"] == {"parse": []}
    assert any(cid.startswith("v:") for cid in answer.custom_ids), "follow-up buttons"


async def test_submit_review_approve_then_dms_to_submitter_and_subscriber(fake, bot):
    app, _ = bot
    sub = await fake.slash("subscribe", {"target": "Tesla V100 PCIe 32GB"}, user_id=CAROL, user_name="carol")
    [subscribed] = await fake.answers(sub)
    assert "Subscribed" in subscribed.content and subscribed.ephemeral
    sid = await submit_one(fake)
    card = await review_card(fake, sid, BOB)
    press = await fake.press(f"m:a:{sid}", fake.message(fake.channel_id, card.data), user_id=BOB)
    [decided] = await fake.answers(press)
    assert decided.type == 7, "the card is edited in place"
    assert f"Approved #{sid}" in decided.content
    # The approve/reject buttons go once decided; only the moderator's Undo is left.
    [[undo]] = [[b["custom_id"] for b in row["components"]] for row in decided.data["components"]]
    assert undo == f"m:u:{sid}"
    assert (await app.storage.get_submission(sid)).status == "approved"

    assert await app.worker.run_once() == 2
    alice_dm, carol_dm = fake.dm_channels[ALICE], fake.dm_channels[CAROL]
    assert f"Your measurement #{sid} was approved" in fake.messages[alice_dm][0]["content"]
    assert f"New measured anchor #{sid}" in fake.messages[carol_dm][0]["content"]


async def test_forged_approve_from_non_moderator_is_refused_and_audited(fake, bot):
    app, _ = bot
    sid = await submit_one(fake)
    # Discord only delivers a press of a button that is on the message, so the forged press comes
    # with a message carrying that custom_id (discord.py drops the press otherwise).
    button = {"type": 2, "style": 3, "label": "Approve", "custom_id": f"m:a:{sid}"}
    forged = {"content": "x", "components": [{"type": 1, "components": [button]}]}
    press = await fake.press(f"m:a:{sid}", fake.message(fake.channel_id, forged), user_id=MALLORY)
    [refused] = await fake.answers(press)
    assert refused.type == 4 and refused.ephemeral and "Only moderators" in refused.content
    assert (await app.storage.get_submission(sid)).status == "pending"
    [entry] = [e for e in await app.storage.audit_log() if e.action == "refused:approve"]
    assert entry.actor.user_id == str(MALLORY) and entry.submission_id == sid and not entry.ok


async def test_moderator_by_role_can_approve(fake, bot):
    app, _ = bot
    sid = await submit_one(fake)
    card = await review_card(fake, sid, DANA, roles=[MOD_ROLE])
    press = await fake.press(
        f"m:a:{sid}", fake.message(fake.channel_id, card.data), user_id=DANA, roles=[MOD_ROLE]
    )
    [decided] = await fake.answers(press)
    assert f"Approved #{sid}" in decided.content
    assert (await app.storage.get_submission(sid)).decided_by.user_id == str(DANA)


async def test_bad_token_is_a_clear_error(fake, tmp_path):
    fake.valid_token = "something-else"
    app = build_app(Settings(discord_token=TOKEN, db_path=tmp_path / "t.db"), storage=MemoryStorage())
    with pytest.raises(DiscordStartError, match="refused TOKBOT_DISCORD_TOKEN"):
        await DiscordAdapter(app, TOKEN, guild_ready_timeout=0.05).start()
