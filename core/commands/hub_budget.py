"""How many Hub look-ups one person and one chat may start (issue 24: 150 unknown repos from one user).

A look-up answered from memory (a model read for an earlier question, a failure remembered) costs
nothing; one that reaches the Hub is counted for the asker and for the chat, within a sliding
window (catalogs/hub.toml [limits.budget]). The counters are in memory: a restart gives everyone a
fresh window, which is harmless. The number of people and chats tracked is bounded (the oldest
are forgotten first), so a flood of new ids costs memory only up to that bound.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable

from core.catalog.hub_limits import BudgetLimits

KEYS_KEPT = 20_000  # people + chats whose windows are kept (a window is a few floats)


class _Windows:
    def __init__(self, limit: int, window_s: float) -> None:
        self.limit, self.window_s = limit, window_s
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    def room(self, key: str, now: float) -> bool:
        times = self._seen.get(key)
        if times is None:
            return self.limit > 0
        while times and now - times[0] >= self.window_s:
            times.popleft()
        return len(times) < self.limit

    def charge(self, key: str, now: float) -> None:
        times = self._seen.setdefault(key, deque())
        self._seen.move_to_end(key)
        times.append(now)
        while len(self._seen) > KEYS_KEPT:
            self._seen.popitem(last=False)


class HubBudget:
    def __init__(self, limits: BudgetLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._users = _Windows(limits.per_user, limits.window_s)
        self._chats = _Windows(limits.per_chat, limits.window_s)

    def spend(self, user: str, chat: str) -> bool:
        """Count one Hub look-up for `user` in `chat`; False (and nothing counted) when either's
        budget for the window is used up."""
        now = self._clock()
        if not (self._users.room(user, now) and self._chats.room(chat, now)):
            return False
        self._users.charge(user, now)
        self._chats.charge(chat, now)
        return True
