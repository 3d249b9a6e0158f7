"""Questions the bot asked with ForceReply, so that the answer can be dispatched as a command.

A `Prompt` ("Why reject #5?") is answered by replying to the bot's message; the reply becomes
`/<prompt.command> <answer>`. Kept in memory, bounded and short-lived: after a restart the reply is
read as an ordinary message, which is harmless (the moderator presses Reject again).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pending:
    command: str
    user_id: str  # only the person who was asked may answer (others' replies are ordinary messages)
    expires: float


class Prompts:
    def __init__(self, ttl_seconds: float = 1800.0, capacity: int = 10_000):
        self.ttl = ttl_seconds
        self.capacity = capacity
        self._by_message: OrderedDict[tuple[str, int], Pending] = OrderedDict()
        # In a private chat the next line answers the latest question even without a reply quote,
        # like the console: people often just type instead of swiping to reply.
        self._latest_private: dict[str, int] = {}

    def remember(self, chat_id: str, message_id: int, command: str, user_id: str, private: bool) -> None:
        self._by_message[(chat_id, message_id)] = Pending(command, user_id, time.monotonic() + self.ttl)
        if private:
            self._latest_private[chat_id] = message_id
        while len(self._by_message) > self.capacity:
            (old_chat, old_id), _ = self._by_message.popitem(last=False)
            if self._latest_private.get(old_chat) == old_id:
                del self._latest_private[old_chat]

    def take(self, chat_id: str, user_id: str, reply_to: int | None, private: bool) -> str | None:
        """The command waiting for this message's text, if it answers a question; removes it."""
        # A reply quoting some other message is about that message, not an answer to the question.
        message_id = reply_to
        if message_id is None and private:
            message_id = self._latest_private.get(chat_id)
        if message_id is None:
            return None
        pending = self._by_message.get((chat_id, message_id))
        if pending is None or pending.user_id != user_id:
            return None
        del self._by_message[(chat_id, message_id)]
        if self._latest_private.get(chat_id) == message_id:
            del self._latest_private[chat_id]
        if pending.expires < time.monotonic():
            return None
        return pending.command

    def __len__(self) -> int:
        return len(self._by_message)
