"""Answers a reader may still rate ("was this helpful?"): a short random key -> what was answered.

The 👍 / 👎 buttons carry only a key (a button payload holds 64 bytes); the vote is stored with what
the key points at: the question as asked, the query the estimate was made for, the reply's first
lines and the calibration that produced it. Anyone in the chat that got the answer may rate it (a
group's readers too), once each (the storage keeps one vote per person per answer); a press from
another chat reads as expired. In memory and bounded like the follow-ups: after a restart an old
answer's buttons say so.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass

from core.i18n import Lang

KEY_BYTES = 6  # 8 url-safe characters: "h:d:<key>" is far inside 64 bytes, and unguessable


@dataclass(frozen=True, slots=True)
class Answered:
    chat_id: str
    question: str
    query: str  # AskQuery.as_json() as JSON text ("{}" when the question could not be read)
    reply: str  # the reply's first lines, plain text
    engine_version: str
    lang: Lang


class AnswerLog:
    def __init__(self, capacity: int):
        self._items: OrderedDict[str, Answered] = OrderedDict()
        self._capacity = capacity

    def put(self, answered: Answered) -> str:
        key = secrets.token_urlsafe(KEY_BYTES)
        while key in self._items:
            key = secrets.token_urlsafe(KEY_BYTES)
        self._items[key] = answered
        while len(self._items) > self._capacity:
            self._items.popitem(last=False)
        return key

    def get(self, key: str, chat_id: str) -> Answered | None:
        item = self._items.get(key)
        return item if item is not None and item.chat_id == chat_id else None

    def __len__(self) -> int:
        return len(self._items)
