"""The CPU a question or a request names ("7950X", "i9-13900K", "双路 Xeon Gold 6138", "2x EPYC 7763"),
with how many sockets it says.

Names come from catalogs/cpus.toml (name, aliases, and the name without its vendor / "Ryzen"
prefix), matched as whole words with optional separators between letter and digit groups ("i7
1165g7", "epyc9654"). A bare number ("9654") is no CPU in free text (it is too often something else)
but is one where a CPU is asked for by name (`estimate --cpu 9654`). SoCs whose CPU and GPU share one
memory ("Ryzen AI Max+ 395", Apple M-series) are cards in gpus.toml, never read here.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from core.cache.warm import per_catalog
from core.catalog.cpu import Cpu, CpuPlatform, platforms
from core.catalog.loader import Catalog
from core.catalog.sections import sections

_CHUNK = re.compile(r"[a-z]+|\d+|\+")
_VENDOR = re.compile(r"^(?:amd|intel)\s+", re.I)
# "2x", "2 x", "2×", "2*", "2路", "2颗" before the name; "x2", "*2" after it. Socket words ("dual",
# "双路") come from cpus.toml [socket_words].
_COUNT_BEFORE = r"(?P<n>[1-8])\s*(?:[x×*]|路|颗|sockets?\s+(?:of\s+)?)"
_COUNT_AFTER = r"[x×*]\s*(?P<n>[1-8])(?![0-9a-z])"


@per_catalog("understanding.cpu_sockets")
def _socket_patterns(catalog: Catalog) -> tuple[re.Pattern[str], re.Pattern[str], dict[str, int]]:
    words = {k.lower(): v for k, v in sections(catalog).socket_words.items()}
    alt = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) or "(?!)"
    before = re.compile(rf"(?:{_COUNT_BEFORE}|(?P<word>{alt}))[\s-]*(?:socket\s+)?$", re.I)
    after = re.compile(rf"^\s*(?:{_COUNT_AFTER}|(?P<word>{alt})|sockets?)", re.I)
    return before, after, words


@dataclass(frozen=True, slots=True)
class CpuMention:
    cpu_id: str
    sockets: int | None  # None: the question doesn't say
    start: int
    end: int
    platform: str = ""  # the family it was priced as, when the CPU isn't catalogued by name


def _keys(cpu: Cpu) -> set[str]:
    bare = _VENDOR.sub("", cpu.name)
    keys = {cpu.name, bare, *cpu.aliases}
    if bare.lower().startswith("ryzen threadripper"):
        keys.add(bare[len("Ryzen ") :])
    return {k.lower() for k in keys}


def _pattern(key: str) -> str:
    chunks = _CHUNK.findall(key)
    return r"[\s\-_]*".join(re.escape(c) for c in chunks)


@per_catalog("understanding.cpu_names")
def _index(catalog: Catalog) -> tuple[re.Pattern[str], dict[str, str]]:
    """One alternation of every name (longest first, so "7950X3D" wins over "7950X"), and the key
    each compact form ("ryzen97950x") maps to."""
    by_compact: dict[str, str] = {}
    patterns: dict[str, int] = {}  # regex of a key -> its compact length (longest tried first)
    for cpu in catalog.cpus.values():
        for key in _keys(cpu):
            compact = "".join(_CHUNK.findall(key))
            if compact.isdigit():
                continue  # a bare number: only by name (resolve_cpu), never in free text
            by_compact.setdefault(compact, cpu.id)
            patterns[_pattern(key)] = len(compact)
    body = "|".join(sorted(patterns, key=lambda p: patterns[p], reverse=True))
    return re.compile(rf"(?<![a-z0-9])(?:{body})(?![a-z0-9])", re.I), by_compact


def _sockets(text: str, start: int, end: int, catalog: Catalog) -> int | None:
    before_p, after_p, words = _socket_patterns(catalog)
    for m in (before_p.search(text[max(0, start - 16) : start]), after_p.match(text[end : end + 8])):
        if m is None:
            continue
        if m.group("n"):
            return int(m.group("n"))
        if m.group("word"):
            return words[m.group("word").lower()]
    return None


def find_cpus(text: str, catalog: Catalog) -> tuple[CpuMention, ...]:
    """Every CPU the text names, in order, with the sockets said next to it; with none named, a bare
    family word ("至强", "xeon", "EPYC") as the family's typical part (cpus.toml [family_words])."""
    if not catalog.cpus:
        return ()
    pattern, by_compact = _index(catalog)
    out = []
    for m in pattern.finditer(text):
        compact = "".join(_CHUNK.findall(m.group(0).lower()))
        cpu_id = by_compact.get(compact)
        if cpu_id is not None:
            out.append(CpuMention(cpu_id, _sockets(text, m.start(), m.end(), catalog), m.start(), m.end()))
    return tuple(out) or _platform_mention(text, catalog) or _family_mention(text, catalog)


@per_catalog("understanding.cpu_platforms")
def _platform_index(catalog: Catalog) -> tuple[tuple[re.Pattern[str], CpuPlatform], ...]:
    rows = platforms(catalog.tables.get("cpus", {}).get("platform", []))
    return tuple(
        (re.compile(rf"(?<![a-z0-9])(?:{p.pattern})(?![a-z0-9])", re.I), p)
        for p in rows
        if p.typical in catalog.cpus
    )


def _platform_mention(text: str, catalog: Catalog) -> tuple[CpuMention, ...]:
    """A CPU the catalog doesn't list, named by its family's numbering ("Xeon Platinum P-8136",
    "EPYC 9334"): the family's typical part, on its platform's channels, memory speed and vector
    units, marked so the reply says it was priced that way."""
    for pattern, platform in _platform_index(catalog):
        m = pattern.search(text)
        if m is not None:
            sockets = _sockets(text, m.start(), m.end(), catalog)
            return (CpuMention(platform.typical, sockets, m.start(), m.end(), platform.family),)
    return ()


@per_catalog("understanding.cpu_families")
def _family_index(catalog: Catalog) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    words = {k.lower(): v for k, v in sections(catalog).cpu_family_words.items() if v in catalog.cpus}
    if not words:
        return None, words
    alt = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![a-z0-9])(?:{alt})(?![a-z0-9])", re.I), words


# DDR5 said, or 10-12 memory channels: the family's DDR5 generation (cpus.toml [family_words_ddr5]).
_DDR5_BOX = re.compile(r"ddr5|(?<![0-9])1[0-2]\s*-?\s*(?:通道|channels?|ch)(?![a-z])", re.I)


def _family_mention(text: str, catalog: Catalog) -> tuple[CpuMention, ...]:
    pattern, words = _family_index(catalog)
    m = pattern.search(text) if pattern is not None else None
    if m is None:
        return ()
    cpu_id = words[m.group(0).lower()]
    if _DDR5_BOX.search(text):
        ddr5 = {k.lower(): v for k, v in sections(catalog).cpu_family_words_ddr5.items() if v in catalog.cpus}
        cpu_id = ddr5.get(m.group(0).lower(), cpu_id)
    return (CpuMention(cpu_id, _sockets(text, m.start(), m.end(), catalog), m.start(), m.end()),)


@dataclass(frozen=True, slots=True)
class CpuResolution:
    cpu_id: str | None
    sockets: int | None
    candidates: tuple[str, ...]  # closest ids when not found (best first)
    platform: str = ""  # the family it was priced as (not catalogued by name)


def resolve_cpu(text: str, catalog: Catalog) -> CpuResolution:
    """The one CPU a name means (`estimate --cpu`): a catalog name or alias, bare numbers too
    ("9654"); else the closest names as candidates."""
    if text.strip().lower() in catalog.cpus:
        return CpuResolution(text.strip().lower(), None, ())  # a catalog id ("epyc-9654")
    compact = "".join(_CHUNK.findall(text.lower()))
    for cpu in catalog.cpus.values():
        if any("".join(_CHUNK.findall(k)) == compact for k in _keys(cpu)):
            return CpuResolution(cpu.id, None, ())
    found = find_cpus(text, catalog)
    if len(found) == 1 and found[0].platform:
        return CpuResolution(found[0].cpu_id, found[0].sockets, (), found[0].platform)
    if len(found) == 1 and _only_sockets_left(text, found[0], catalog):
        return CpuResolution(found[0].cpu_id, found[0].sockets, ())
    # Not sure ("Ryzen 9 7960X" names a Threadripper's number under another family): the closest
    # names go back, the one found first, never a silent swap.
    keys = {"".join(_CHUNK.findall(k)): cpu.id for cpu in catalog.cpus.values() for k in _keys(cpu)}
    close = difflib.get_close_matches(compact, list(keys), n=12, cutoff=0.6)
    ids = tuple(dict.fromkeys([*(f.cpu_id for f in found), *(keys[c] for c in close)]))[:5]
    return CpuResolution(None, None, ids)


_FILLER_WORDS = frozenset(
    {"amd", "intel", "cpu", "cpus", "processor", "processors", "socket", "sockets", "x"}
)
_COUNTS = re.compile(r"[1-8]\s*(?:[x×*]|路|颗)|[x×*]\s*[1-8](?![0-9])")


def _only_sockets_left(text: str, mention: CpuMention, catalog: Catalog) -> bool:
    """Nothing but vendor, socket and the CPU's own name words around the name ("2x AMD EPYC 9654
    CPU", "Xeon Platinum 8480"); "Ryzen 9 7960X" leaves a "9" no Threadripper name has."""
    rest = (text[: mention.start] + " " + text[mention.end :]).lower()
    for word in sorted(_socket_patterns(catalog)[2], key=len, reverse=True):
        rest = rest.replace(word, " ")
    own = {c for key in _keys(catalog.cpus[mention.cpu_id]) for c in _CHUNK.findall(key)}
    return all(c in own or c in _FILLER_WORDS for c in _CHUNK.findall(_COUNTS.sub(" ", rest)) if c != "+")


_BARE_SIZE = re.compile(
    r"(?<![\w.])(\d{1,4}(?:\.\d+)?)\s*(gb|gib|g|tb)(?![a-z0-9])(?!\s*(?:显存|vram))", re.I
)


@dataclass(frozen=True, slots=True)
class CpuReading:
    """The host CPU a question names; `ram_gib`: a bare size ("7950X 64G") when no card is named,
    which can only be the box's RAM."""

    cpu_id: str | None = None
    sockets: int | None = None
    ram_gib: float | None = None
    typed: str = ""  # the name as typed, when it was priced as its family (`platform`)
    platform: str = ""


def read_cpu(text: str, catalog: Catalog, has_card: bool) -> CpuReading:
    found = find_cpus(text, catalog)
    if not found:
        return CpuReading()
    first = found[0]
    ram = None
    if not has_card:
        rest = text[first.end :] + " " + text[: first.start]
        scale = {"tb": 1024.0}
        sizes = [float(m.group(1)) * scale.get(m.group(2).lower(), 1.0) for m in _BARE_SIZE.finditer(rest)]
        ram = next((s for s in sizes if 4 <= s <= 8192), None)
    typed = text[first.start : first.end] if first.platform else ""
    return CpuReading(first.cpu_id, first.sockets, ram, typed, first.platform)
