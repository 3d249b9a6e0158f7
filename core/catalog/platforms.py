"""Operating systems: the one home for their names and the rules between them.

Three names make a family, the OS a framework runs on and a reply offers ("windows", "linux",
"macos"). A setup (core/estimator/setup.py) adds "linux_desktop": a Linux box whose desktop is drawn
on the card, which reserves VRAM like Windows does but runs what Linux runs. Every module folds a
setup name to its family here, and reads a typed OS word ("win11", "ubuntu", "苹果", "wsl") through
`os_from_word` with the words of catalogs/understanding.toml `[os]` (the vocabulary's `os_words`),
so a question, `estimate --os` and a `/submit` form read the same word the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, TypeGuard, get_args

OsFamily = Literal["linux", "windows", "macos"]
OS_FAMILIES: Final[tuple[OsFamily, ...]] = get_args(OsFamily)

SetupOs = Literal["linux", "linux_desktop", "windows", "macos"]
SETUP_OS_NAMES: Final[tuple[SetupOs, ...]] = get_args(SetupOs)


def is_os_family(value: object) -> TypeGuard[OsFamily]:
    return value in OS_FAMILIES


def is_setup_os(value: object) -> TypeGuard[SetupOs]:
    return value in SETUP_OS_NAMES


def os_family(os_name: str) -> str:
    """A setup OS name folded to the family a reply offers ("linux_desktop" is "linux"); a name
    outside the families comes back as it is (no switch is offered for it)."""
    if os_name.startswith("windows"):
        return "windows"
    if os_name.startswith("linux"):
        return "linux"
    return os_name


def framework_os(os_name: str) -> OsFamily:
    """The family a framework's rules are written for; an unknown name is taken as Linux (the
    headless default of every serving framework)."""
    family = os_family(os_name)
    return family if is_os_family(family) else "linux"


def os_from_word(word: str, os_words: Mapping[str, str]) -> SetupOs | None:
    """The OS a typed word names: a setup name as it is, else the family the vocabulary's words give
    it ("win11" -> windows, "ubuntu" -> linux, "mac" -> macos); None when it names none."""
    key = word.strip().lower()
    if is_setup_os(key):
        return key
    family = os_words.get(key)
    return family if is_os_family(family) else None


def family_from_word(word: str, os_words: Mapping[str, str]) -> OsFamily | None:
    """The family a typed word names (a question's OS): "linux_desktop" is Linux."""
    named = os_from_word(word, os_words)
    return None if named is None else framework_os(named)
