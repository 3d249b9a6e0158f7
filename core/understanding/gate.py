"""A cheap substring check in front of a regular expression: most questions hold none of a pattern's
words, and `"并发" in t` costs a fraction of a regex search over a long alternation.

`gated(pattern)` reads the compiled pattern once and finds literals one of which every match must
contain ("并发" in `(\\d+)\\s*并发`, one word of each branch of `vs|versus|对比`). A question with none
of them is not searched: `search`, `finditer` and `sub` answer exactly what the pattern would (no
match, the text unchanged). A pattern with a branch that needs no literal (`\\d+k`'s "k" is one; a
bare `\\d+` is none) is always searched.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

# The regex parser of the standard library (re._parser since 3.11); typeshed doesn't list it.
sre_constants: Any = importlib.import_module("re._constants")
sre_parse: Any = importlib.import_module("re._parser")

_LITERAL = sre_constants.LITERAL
_SUBPATTERN = sre_constants.SUBPATTERN
_BRANCH = sre_constants.BRANCH
_IN = sre_constants.IN
_AT = sre_constants.AT
_ANCHORS = (sre_constants.AT_BEGINNING, sre_constants.AT_BEGINNING_STRING)
_REPEATS = (
    sre_constants.MAX_REPEAT,
    sre_constants.MIN_REPEAT,
    getattr(sre_constants, "POSSESSIVE_REPEAT", None),
)

Keys = frozenset[str]


def _best(options: list[Keys]) -> Keys | None:
    """Of several sets, each of which every match must hit, the one cheapest and surest to rule a text
    out: the longest shortest literal, then the fewest literals."""
    if not options:
        return None
    return max(options, key=lambda s: (min(len(k) for k in s), -len(s)))


def _seq_keys(seq: Any) -> Keys | None:
    """Literals one of which any match of this sequence contains, or None when none can be named."""
    options: list[Keys] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            options.append(frozenset({"".join(run)}))
            run.clear()

    for op, av in seq:
        if op is _LITERAL:
            run.append(chr(av))
            continue
        close_run()
        inner: Keys | None = None
        if op is _SUBPATTERN:
            # "(?i:...)" folds case inside: its literals say nothing about the text as typed.
            inner = None if av[1] & re.IGNORECASE else _seq_keys(av[-1])
        elif op is _BRANCH:
            inner = _branch_keys(av[1])
        elif op in _REPEATS and av[0] >= 1:
            inner = _seq_keys(av[2])
        elif op is _IN and all(o is _LITERAL for o, _v in av):
            inner = frozenset(chr(v) for _o, v in av)  # "[动起]": one of these characters
        if inner:
            options.append(inner)
    close_run()
    return _best(options)


def _branch_keys(alternatives: list[Any]) -> Keys | None:
    keys: set[str] = set()
    for alt in alternatives:
        got = _seq_keys(alt)
        if not got:
            return None
        keys |= got
    return frozenset(keys)


def required_literals(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """Literals one of which every match of `pattern` contains (longest first), or None."""
    if pattern.flags & (re.IGNORECASE | re.VERBOSE):
        return None  # case folding and verbose layout change what a literal in the source means
    try:
        keys = _seq_keys(sre_parse.parse(pattern.pattern, pattern.flags))
    except Exception:  # noqa: BLE001 - a pattern this reader doesn't follow is simply not gated
        return None
    return tuple(sorted(keys, key=len, reverse=True)) if keys else None


@dataclass(frozen=True, slots=True)
class Gated:
    """A compiled pattern with the literals that must be in a text for it to match (None: no gate)."""

    pattern: re.Pattern[str]
    keys: tuple[str, ...] | None
    # The keys as one alternation of plain literals: the engine's first-character scan finds any of
    # sixty words faster than sixty `in` tests.
    keys_re: re.Pattern[str] | None = None

    def may_match(self, text: str) -> bool:
        if self.keys_re is None:
            return True
        return self.keys_re.search(text) is not None

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text) if self.may_match(text) else None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.pattern.finditer(text) if self.may_match(text) else iter(())

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
        return self.pattern.sub(repl, text) if self.may_match(text) else text


def gated(pattern: re.Pattern[str]) -> Gated:
    """The pattern behind its gate, or ungated where a gate would not pay: a pattern that starts with
    a literal, a character set or an anchor (the regex engine skips ahead by itself, faster) or a gate
    with a single latin character ("g" is in most questions: "32g")."""
    keys = required_literals(pattern)
    if keys is not None and (_starts_with_literal(pattern) or any(len(k) == 1 and k.isascii() for k in keys)):
        keys = None
    keys_re = re.compile("|".join(re.escape(k) for k in keys)) if keys else None
    return Gated(pattern, keys, keys_re)


def _starts_with_literal(pattern: re.Pattern[str]) -> bool:
    try:
        seq = sre_parse.parse(pattern.pattern, pattern.flags)
    except Exception:  # noqa: BLE001 - see required_literals
        return False
    return _fast_start(seq)


def _fast_start(seq: Any) -> bool:
    """Whether every match starts on a literal, a character set or an anchor: the engine then skips
    ahead to where a match can start by itself (a lookbehind or a \\b first defeats that)."""
    if len(seq) == 0:
        return False
    op, av = seq[0]
    if op in (_LITERAL, _IN) or op is _AT and av in _ANCHORS:
        return True
    if op is _SUBPATTERN:
        return _fast_start(av[-1])
    if op is _BRANCH:
        return all(_fast_start(alt) for alt in av[1])
    return False
