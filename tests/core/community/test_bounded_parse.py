"""A /submit read never holds the event loop: too long is refused up front, too slow is abandoned."""

from __future__ import annotations

import asyncio
import threading

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
    """A read still running at its budget is answered "too slow" while the loop serves other chats.
    The read blocks until the test lets it go, so it is past any budget on any machine."""
    release = threading.Event()

    def slow(*_args: object) -> SubmitReading:
        release.wait(60)  # releases the GIL, like the many short regex calls of a long parse
        return SubmitReading((), (), (), {})

    monkeypatch.setattr(bounded_parse, "read_submission", slow)
    ticks = 0

    async def other_chat() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0)
            ticks += 1

    ticker = asyncio.create_task(other_chat())
    try:
        reading = await read_submission_bounded("gpu=4090", CATALOG, bounds=ReadBounds(60000, 0.05))
        assert not release.is_set(), "answered while the read was still running: it was abandoned"
    finally:
        ticker.cancel()
        release.set()
    (note,) = reading.problems
    assert note.code == "submit.too_slow" and "0.05" in note.text("en")
    assert ticks >= 1  # other chats were served while the read ran


async def test_a_hostile_paste_is_read_whole() -> None:
    """A 60 KB run of "=" (a shape quadratic patterns took 20-50 s on) reads to the end, not "too
    slow": the budget here only guards against a hang; scripts/bench_parse.py has the ms per KB."""
    reading = await read_submission_bounded("=" * 60000, CATALOG, bounds=ReadBounds(60000, 60.0))
    assert all(n.code != "submit.too_slow" for n in reading.problems)
