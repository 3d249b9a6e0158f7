"""A /submit read never holds the event loop: too long is refused up front, too slow is abandoned."""

from __future__ import annotations

import asyncio
import time

import pytest

from core.catalog.loader import default_catalog
from core.community import bounded_parse
from core.community.bounded_parse import ReadBounds, read_bounds, read_submission_bounded
from core.community.validate import SubmitReading

CATALOG = default_catalog()


async def test_a_normal_submission_reads_as_before() -> None:
    reading = await read_submission_bounded("gpu=4090 model=qwen3-8b quant=Q4_K_M decode=100", CATALOG)
    assert not reading.problems
    assert reading.drafts[0].measurement.gpu_id == "rtx-4090"


async def test_over_the_cap_is_refused_without_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_args: object) -> SubmitReading:
        raise AssertionError("must not be read")

    monkeypatch.setattr(bounded_parse, "read_submission", boom)
    cap = read_bounds(CATALOG).max_chars
    assert cap == 60000
    reading = await read_submission_bounded("\n" * (cap + 1), CATALOG)
    (note,) = reading.problems
    assert note.code == "submit.text_too_long"
    assert "60 KB" in note.text("en") and "60 KB" in note.text("zh")
    assert not reading.drafts and not reading.missing


async def test_at_the_cap_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    reading = await read_submission_bounded("\n" * 60000, CATALOG)
    assert not reading.problems and reading.missing  # read: nothing in it, so the fields are asked


async def test_a_slow_read_is_abandoned_and_the_loop_keeps_running(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(*_args: object) -> SubmitReading:
        time.sleep(0.6)  # releases the GIL, like the many short regex calls of a long parse
        return SubmitReading((), (), (), {})

    monkeypatch.setattr(bounded_parse, "read_submission", slow)
    ticks = 0

    async def other_chat() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(other_chat())
    start = time.perf_counter()
    reading = await read_submission_bounded("gpu=4090", CATALOG, bounds=ReadBounds(60000, 0.2))
    elapsed = time.perf_counter() - start
    ticker.cancel()
    (note,) = reading.problems
    assert note.code == "submit.too_slow" and "0.2" in note.text("en")
    assert elapsed < 0.5
    assert ticks >= 5  # other chats were served while the read ran


async def test_a_hostile_paste_is_read_well_inside_the_budget() -> None:
    start = time.perf_counter()
    reading = await read_submission_bounded("=" * 60000, CATALOG)
    assert time.perf_counter() - start < read_bounds(CATALOG).budget_seconds
    assert all(n.code != "submit.too_slow" for n in reading.problems)
