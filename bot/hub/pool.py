"""The Hub work's own small pool of threads: never the event loop's default executor (issue 24).

huggingface_hub is blocking, so each read runs in a thread. Before this pool they ran in the default
executor that `asyncio.to_thread` shares with `loop.getaddrinfo` (every new HTTP connection of the
chat clients) and the Chart button: 24 runaway reads filled it, and the whole bot stalled. Here
the Hub has `workers` threads of its own and at most `queue` reads waiting; a read past that is
refused at once ("busy") instead of queueing behind the others. The threads are daemons and are
never joined: a read still running when the process stops doesn't hold its shutdown (an executor's
threads are joined at exit, so no `concurrent.futures` executor would do). What a read may cost is
bounded where it runs (config ranges, a file-size cap, per-request timeouts, a cooperative
deadline: bot/hub/hf_read.py); the pool bounds how many there are.
"""

from __future__ import annotations

import asyncio
import itertools
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from core.catalog.model_source import ModelSourceError

T = TypeVar("T")
_Job = tuple[Callable[[], Any], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]
_names = itertools.count(1)


class HubPool:
    def __init__(self, workers: int, waiting: int) -> None:
        self.workers = max(1, workers)
        self._jobs: queue.Queue[_Job | None] = queue.Queue(maxsize=max(1, waiting))
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._closed = False

    def _start(self) -> None:
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            while len(self._threads) < self.workers:
                thread = threading.Thread(target=self._work, name=f"tokbot-hub-{next(_names)}", daemon=True)
                thread.start()
                self._threads.append(thread)

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            call, loop, future = job
            try:
                result: Any = call()
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task as it is
                _settle(loop, future, None, exc)
            else:
                _settle(loop, future, result, None)

    async def run(self, what: str, call: Callable[[], T]) -> T:
        """`call()` on a Hub thread; ModelSourceError("busy") when every worker and slot is taken."""
        if self._closed:
            raise ModelSourceError("busy", what, "the bot is shutting down")
        self._start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        try:
            self._jobs.put_nowait((call, loop, future))
        except queue.Full as exc:
            raise ModelSourceError("busy", what, "too many Hub look-ups at once") from exc
        # The awaiting task may be cancelled (its time budget); the thread finishes on its own and
        # its answer is dropped (`_settle` skips a future that is done).
        return await future

    def alive(self) -> int:
        """Hub threads alive now (at most `workers`)."""
        return sum(t.is_alive() for t in self._threads)

    def close(self) -> None:
        """Refuse new reads and let idle workers end; a read in flight is not waited for."""
        self._closed = True
        for _ in self._threads:
            try:
                self._jobs.put_nowait(None)
            except queue.Full:
                break


def _settle(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], result: Any, exc: BaseException | None
) -> None:
    def done() -> None:
        if future.done():
            return
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(result)

    try:
        loop.call_soon_threadsafe(done)
    except RuntimeError:  # the loop is closed: nobody is waiting any more
        pass
