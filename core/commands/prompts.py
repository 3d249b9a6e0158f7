"""Questions the bot asked with a `Prompt`: "the next line from this person here answers it".

One implementation for every platform: the router remembers a prompt when it returns one, and
turns that person's next plain line in that chat into `/<prompt.command> <line>` (a rejection
reason becomes "/reject 42 <reason>"), so permissions and arguments are checked exactly as for a
typed command. Any command typed meanwhile drops the question: it is not an answer. Kept in memory,
bounded and short-lived: after a restart the line is an ordinary message, which is harmless.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.commands.types import Invocation, Prompt

Key = tuple[str, str, str]  # platform, user id, chat id


@dataclass(frozen=True, slots=True)
class _Pending:
    command: str
    expires: datetime


class PendingPrompts:
    def __init__(self, ttl: timedelta, capacity: int = 10_000):
        self.ttl = ttl
        self.capacity = capacity
        self._items: OrderedDict[Key, _Pending] = OrderedDict()

    @staticmethod
    def _key(inv: Invocation) -> Key:
        return (inv.actor.platform, inv.actor.user_id, inv.where.chat_id)

    def remember(self, inv: Invocation, prompt: Prompt, now: datetime) -> None:
        key = self._key(inv)
        self._items.pop(key, None)
        self._items[key] = _Pending(prompt.command, now + self.ttl)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def take(self, inv: Invocation, now: datetime) -> str | None:
        """The command this line answers, if this person was asked something here; removes it."""
        pending = self._items.pop(self._key(inv), None)
        if pending is None or pending.expires < now:
            return None
        return pending.command

    def forget(self, inv: Invocation) -> None:
        """The question was answered another way (a Discord modal) or superseded by a command."""
        self._items.pop(self._key(inv), None)

    def __len__(self) -> int:
        return len(self._items)
