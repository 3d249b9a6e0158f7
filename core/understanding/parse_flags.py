"""Serving flags pasted into a question: `-c 65536`, `--max-model-len 32768`, `--n-cpu-moe 28`,
`--gpu-memory-utilization 0.7` (issue 21: these were in the text and not used).

Read from the cleaned question before anything else of a fixed shape, and blanked with their values:
"28" of `--n-cpu-moe 28` is no card count and "0.7" no model version. The flag names are data:
catalogs/understanding.toml [flags].
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from core.understanding.question import MAX_CONTEXT, MIN_CONTEXT
from core.understanding.vocab import shipped_doc

CPU_MOE_ALL = -1  # `--cpu-moe`: every layer's experts in RAM (EstimateRequest.cpu_moe_layers' "all")
MAX_CPU_MOE = 512  # more layers than any model has is a typo
MIN_UBATCH, MAX_UBATCH = 16, 65536


@dataclass(frozen=True, slots=True)
class Flags:
    contexts: tuple[int, ...] = ()
    cpu_moe_layers: int | None = None
    gpu_memory_utilization: float | None = None
    split_word: str | None = None  # the word after `-sm` / `--split-mode` ("graph", "row", "tensor")
    ubatch: int | None = None  # `-ub 4096` (llama.cpp's physical batch)


@dataclass(frozen=True, slots=True)
class _FlagPatterns:
    context: re.Pattern[str] | None
    cpu_moe: re.Pattern[str] | None
    cpu_moe_all: re.Pattern[str] | None
    gpu_util: re.Pattern[str] | None
    split_mode: re.Pattern[str] | None
    ubatch: re.Pattern[str] | None


def _flag_re(names: list[str], value: str) -> re.Pattern[str] | None:
    if not names:
        return None
    alt = "|".join(re.escape(n.lower()) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![a-z0-9_-])(?:{alt})(?![a-z0-9_-]){value}")


@cache
def _patterns() -> _FlagPatterns:
    table = shipped_doc().get("flags", {})
    number = r"(?:\s*[= ]\s*|\s+)(\d{1,8})(?![0-9.])"
    return _FlagPatterns(
        context=_flag_re(table.get("context", []), rf"{number}(k?)"),
        cpu_moe=_flag_re(table.get("cpu_moe", []), number),
        cpu_moe_all=_flag_re(table.get("cpu_moe_all", []), ""),
        gpu_util=_flag_re(table.get("gpu_util", []), r"(?:\s*[= ]\s*|\s+)(0?\.\d+|1(?:\.0+)?)(?![0-9])"),
        split_mode=_flag_re(
            table.get("split_mode", []), r"(?:\s*[= ]\s*|\s+)(layer|row|tensor|graph)(?![a-z0-9])"
        ),
        ubatch=_flag_re(table.get("ubatch", []), number),
    )


def _blank(t: str, m: re.Match[str]) -> str:
    return t[: m.start()] + " " * (m.end() - m.start()) + t[m.end() :]


def read_flags(t: str) -> tuple[str, Flags]:
    """The flags in `t` (cleaned), and `t` with them blanked."""
    if "-" not in t and "_" not in t:
        return t, Flags()
    pats = _patterns()
    contexts: list[int] = []
    cpu_moe: int | None = None
    util: float | None = None
    for m in pats.context.finditer(t) if pats.context else ():
        value = int(m.group(1)) * (1024 if m.group(2) else 1)
        if MIN_CONTEXT <= value <= MAX_CONTEXT and value not in contexts:
            contexts.append(value)
        t = _blank(t, m)
    for m in pats.cpu_moe.finditer(t) if pats.cpu_moe else ():
        cpu_moe = int(m.group(1)) if 0 < int(m.group(1)) <= MAX_CPU_MOE else cpu_moe
        t = _blank(t, m)
    for m in pats.cpu_moe_all.finditer(t) if pats.cpu_moe_all else ():
        cpu_moe = CPU_MOE_ALL if cpu_moe is None else cpu_moe
        t = _blank(t, m)
    for m in pats.gpu_util.finditer(t) if pats.gpu_util else ():
        share = float(m.group(1))
        util = share if 0.0 < share <= 1.0 else util
        t = _blank(t, m)
    split, ubatch = _split_and_ubatch(t, pats)
    for pat in (pats.split_mode, pats.ubatch):
        t = pat.sub(lambda m: " " * (m.end() - m.start()), t) if pat else t
    return t, Flags(tuple(contexts), cpu_moe, util, split, ubatch)


def _split_and_ubatch(t: str, pats: _FlagPatterns) -> tuple[str | None, int | None]:
    """`-sm graph` (the mode word) and `-ub 4096` (16..65536; anything else is a typo, not read)."""
    split = next((m.group(1) for m in pats.split_mode.finditer(t)), None) if pats.split_mode else None
    ubs = [int(m.group(1)) for m in pats.ubatch.finditer(t)] if pats.ubatch else []
    ubatch = next((u for u in ubs if MIN_UBATCH <= u <= MAX_UBATCH), None)
    return split, ubatch
