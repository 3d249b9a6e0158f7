"""Operating systems as people name them, and as a reply offers them: the one home for both.

The words ("win11", "ubuntu", "苹果") are data, catalogs/understanding.toml `[os]`; the estimator's
setup names (core/estimator/setup.py `OS_NAMES`) add "linux_desktop", a Linux box with the desktop
on the card, which a reply shows and switches as Linux.
"""

from __future__ import annotations

from typing import Literal

from core.understanding.vocab import Vocab

OsFamily = Literal["windows", "linux", "macos"]
_FAMILIES: dict[str, OsFamily] = {"windows": "windows", "linux": "linux", "macos": "macos"}


def os_named(word: str, vocab: Vocab) -> OsFamily | None:
    """The OS a word names, or None when it names none."""
    family = vocab.os_words.get(word.lower())
    return _FAMILIES.get(family) if family is not None else None


def os_family(os_name: str) -> str:
    """A setup OS name folded to the family a reply offers: "linux_desktop" is "linux"; a name
    outside the families comes back as it is (no switch is offered for it)."""
    if os_name.startswith("windows"):
        return "windows"
    if os_name.startswith("linux"):
        return "linux"
    return os_name
