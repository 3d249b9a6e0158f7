"""Issue 24, /submit's edges: the ack echoes no invisible characters, and open dialogues are swept."""

from __future__ import annotations

from core.commands.submit import sweep_dialogues
from tests.core.commands.conftest import Harness

INVISIBLE = "\u200b\u200d\u202e\u2066\ufeff\U000e0041\U000e0042"


async def test_the_ack_echoes_no_invisible_characters(h: Harness) -> None:
    line = f'/submit gpu=4090 model="llama 3 8b" quant=Q4_K_M decode=50 version="b{INVISIBLE}5000"'
    [ack] = await h.say("alice", line)
    assert ack.status == "ok", ack.text
    assert not any(c in ack.text for c in INVISIBLE), ack.text.encode("unicode_escape")


async def test_stale_dialogues_are_swept(h: Harness) -> None:
    for n in range(50):
        await h.say(f"user{n}", "/submit")
    assert len(h.bot.dialogues) == 50
    h.clock.advance(minutes=h.bot.limits.dialogue_minutes + 1)
    await h.say("late", "/submit")  # a new dialogue sweeps the ones left open
    assert list(h.bot.dialogues) == [("console", "late", "late")]
    assert sweep_dialogues(h.bot) == 0  # at most once a minute
