"""Whatever anyone types, the command layer answers calmly, within one platform message each, and a
non-moderator changes nothing."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.commands.registry import COMMANDS
from core.commands.types import ACTION_MAX_BYTES
from core.render.doc import fits
from tests.core.commands.conftest import Harness

WORDS = st.sampled_from([
    "4090", "V100 32G", "双3090", "llama 3 8b", "qwen3 32b", "gemma", "q4_k_m", "Q8_0", "32k", "decode=12",
    "decode=-5", "decode=1e9", "gpu=\"", "model=", "ctx=0", "count=99", "prefill=abc", "all", "#1", "42",
    "999999999999999999999", "<b>", "@everyone", "```", "取消", "cancel", "\\", "|", "=", "\n", "🙂",
])  # fmt: skip
TEXT = st.lists(st.one_of(WORDS, st.text(max_size=12)), max_size=8).map(" ".join)
LINE = st.tuples(st.sampled_from(["", *[f"/{c}" for c in COMMANDS], "/bogus", "/cancel"]), TEXT).map(
    lambda p: f"{p[0]} {p[1]}".strip()
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(LINE, min_size=1, max_size=4), target=st.sampled_from(["plain", "telegram", "discord"]))
def test_any_line_gets_calm_answers_that_fit_and_changes_nothing_it_shouldnt(lines, target):
    async def run() -> None:
        h = Harness()
        await h.storage.open()
        from core.commands.types import Where
        from core.records import Actor

        for line in lines:
            responses = await h.router.handle_text(
                Actor("telegram", "7", "Mallory"), Where("7"), line, target=target
            )
            assert responses, line
            for r in responses:
                assert r.status in ("ok", "error", "refused", "clarify"), (line, r.status)
                assert r.status != "error" or "went wrong on my side" not in r.text, ("crashed", line)
                assert fits(r.text, target), (line, len(r.text))
                for row in r.buttons:
                    for b in row:
                        assert len(b.action.encode()) <= ACTION_MAX_BYTES
        # Mallory is no moderator: nothing she typed approved, rejected or withdrew anything.
        assert all(s.status == "pending" for s in await h.storage.submissions())
        assert not [e for e in await h.storage.audit_log() if e.ok]

    asyncio.run(run())
