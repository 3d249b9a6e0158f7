"""The console's buttons: every message's buttons stay pressable, numbered `!N` for the session.

A chat keeps each message's buttons under it: pressing one of an answer's buttons leaves the others
there, and deciding one /review card leaves the other cards' buttons. The console does the same: a
button's number never changes, and only a message that is replaced (a decided card, `Response.edit`)
loses its buttons. The oldest are forgotten past MAX_KEPT (as the command layer forgets old answers).
"""

from __future__ import annotations

from collections import OrderedDict

from core.commands.types import Button

MAX_KEPT = 500


class ButtonBoard:
    def __init__(self) -> None:
        self._buttons: OrderedDict[int, tuple[int, Button]] = OrderedDict()  # number -> (message, button)
        self._next_number = 1
        self._next_message = 1

    def new_message(self) -> int:
        self._next_message += 1
        return self._next_message - 1

    def add(self, message: int, rows: tuple[tuple[Button, ...], ...]) -> list[str]:
        """Number the message's buttons; one printed line per row ("[!3 Chart] [!4 ...]")."""
        printed = []
        for row in rows:
            labels = []
            for button in row:
                number = self._next_number
                self._next_number += 1
                self._buttons[number] = (message, button)
                labels.append(f"[!{number} {button.label}]")
            if labels:
                printed.append(" ".join(labels))
        while len(self._buttons) > MAX_KEPT:
            self._buttons.popitem(last=False)
        return printed

    def press(self, number: int) -> tuple[int, Button] | None:
        return self._buttons.get(number)

    def retire(self, message: int) -> None:
        """The message was replaced: its buttons are gone."""
        for number in [n for n, (m, _) in self._buttons.items() if m == message]:
            del self._buttons[number]
