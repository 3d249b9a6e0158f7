"""`/submit` read off the event loop, within a size cap and a time budget.

`read_submission` is pure CPU work; on the event loop a slow read stalls every chat. Here it runs
in a small worker pool of its own, so bursts of pastes can't take the threads other work uses, and
the caller gets a reading (with a "too long" or "too slow" problem) instead of a wait.

Why a thread is enough: the parsers are linear (core/community/pasted.py), so each regex call is
short and the event loop gets the GIL back between them; the budget bounds a read that is slow as
a whole. A read that overruns keeps its thread until it ends (threads can't be killed), and its
result is dropped.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from core.catalog.loader import Catalog
from core.catalog.sections import sections
from core.community.validate import SubmitReading, read_submission
from core.i18n import Note

# Two readers: one slow paste can't hold up everyone else's /submit, and hostile bursts can't start
# an unbounded number of threads.
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="submit-read")


@dataclass(frozen=True, slots=True)
class ReadBounds:
    max_chars: int  # longer texts are refused before any parsing (said so in the reply)
    budget_seconds: float  # a read that takes longer is abandoned with a "too slow" problem


def read_bounds(catalog: Catalog) -> ReadBounds:
    s = sections(catalog).submit.submit
    return ReadBounds(s.text_max_chars, s.read_budget_seconds)


def _refused(note: Note) -> SubmitReading:
    return SubmitReading(drafts=(), problems=(note,), missing=(), candidates={})


def too_long(text: str, bounds: ReadBounds) -> SubmitReading | None:
    """The "too long" reading when `text` is over the cap, else None."""
    if len(text) <= bounds.max_chars:
        return None
    kb = round(len(text) / 1000)  # in the units of the cap (characters), so the two figures compare
    return _refused(Note("submit.text_too_long", {"kb": kb, "max_kb": bounds.max_chars // 1000}))


async def read_submission_bounded(
    text: str,
    catalog: Catalog,
    fields: dict[str, str] | None = None,
    bounds: ReadBounds | None = None,
) -> SubmitReading:
    """`read_submission` in a worker thread: refused when over the size cap, abandoned past the budget."""
    bounds = bounds or read_bounds(catalog)
    refused = too_long(text, bounds)
    if refused is not None:
        return refused
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(_POOL, read_submission, text, catalog, fields)
    # An abandoned read that fails later must not log "exception was never retrieved".
    future.add_done_callback(lambda f: None if f.cancelled() else f.exception())
    try:
        # shield: a timeout must not try to cancel the thread's future (it can't stop the thread).
        return await asyncio.wait_for(asyncio.shield(future), bounds.budget_seconds)
    except TimeoutError:
        return _refused(Note("submit.too_slow", {"seconds": bounds.budget_seconds}))
