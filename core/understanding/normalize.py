"""Text normalisation shared by the resolver and the parser.

Chat text arrives full-width (`４０９０`, `ＲＴＸ`), mixed case, with units glued or spaced
(`32G`, `32 GB`, `32gib`). Everything is folded once into one form so that the catalog keys and the
user's words meet in the same spelling.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache

from core.understanding.vocab import shipped_doc

MAX_INPUT_CHARS = 500  # a question is a line or two; the rest of a pasted log only costs time

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")
# "32 GB", "32gb", "32GiB", "32G" -> "32g"; the lookahead keeps "gguf" and words like "go" intact.
# "2x32GB" and "32GBx2" (sticks or cards counted by "x") take the same spelling.
# "1TB", "1.5 TiB", "1T内存" / "2t ram" -> "1024g": server RAM is said in terabytes. A bare "1t" is
# left alone ("kimi k2 1t" counts parameters); only a t followed by b / ib or by a memory word is memory.
_TERA_UNIT = re.compile(
    r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*(?:tib|tb|t(?=\s*(?:内存|ram|memory|of ram|ddr)))(?![a-z])"
)
# "22528MiB" (nvidia-smi's total for a 22 GB card), "24564MiB", "81920 MB" -> GiB, rounded: the driver
# shows a little under the nominal size (issue 21: "22528MiB" was read as an 11 GB something).
# Before a RAM word ("24564MiB 内存不够") it is left as typed: 内存 there may be either memory.
_MEBI_UNIT = re.compile(r"(?<![a-z0-9.])(\d{4,7})\s*(?:mib|mb)(?![a-z])(?!\s*(?:内存|ram\b|memory))")
_MEMORY_UNIT = re.compile(r"(?:(?<![a-z0-9.])|(?<=\d[x*]))(\d+(?:\.\d+)?)\s*(?:gib|gb|g)(?!(?!x\d)[a-z])")
_SPACES = re.compile(r"\s+")
# "1070gtx", "3090rtx": the series word glued after the number reads as the card ("nvidia 1070gtx with
# 8vram", ToTheBeginning/PuLID#73); spaced ("3080 GTX") the parser already reads it.
# "a model with 13 billion parameters" (oobabooga/textgen#5363) -> "13b": the size said in words.
_BILLION = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*(?:billion|bn)(?:\s+param(?:eter)?s?)?(?![a-z])")
_SERIES_AFTER = re.compile(r"(?<![a-z0-9])(\d{3,4})(gtx|rtx)(?![a-z0-9])")
# Word pieces: runs of latin letters/digits (with the joiners people use inside names) or one CJK char.
_PIECE = re.compile(r"[a-z0-9][a-z0-9.+]*|[\u3400-\u9fff\uf900-\ufaff]")
_SPLIT = re.compile(r"[\s\-_:,;|()\[\]{}<>\"'`~!?@#$%^&=\\]+")
_MEM_TOKEN = re.compile(r"^(\d+(?:\.\d+)?)g$")
_FUSED_MEM = re.compile(r"^(.*?[a-z])(\d+(?:\.\d+)?)g$")
SIZE_TOKEN = re.compile(r"^(\d+(?:\.\d+)?)b$")
ACTIVE_TOKEN = re.compile(r"^a(\d+(?:\.\d+)?)b$")
MOE_TOKEN = re.compile(r"^(\d+)x(\d+(?:\.\d+)?)b$")


@cache
def _model_words() -> tuple[re.Pattern[str], dict[str, str]] | None:
    """The Chinese family names of catalogs/understanding.toml [model_words] as one pattern, longest
    first, and name -> family word. The shipped file: aliases and questions must fold alike, whatever
    catalog a test loads."""
    try:
        table = shipped_doc().get("model_words", {})
    except OSError:
        return None
    names = {unicodedata.normalize("NFKC", n).lower(): fam for fam, ns in table.items() for n in ns}
    if not names:
        return None
    alternation = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    # A version glued after the name stays glued ("百川2" -> "baichuan2"); a size after it is a word
    # of its own ("百川13b" -> "baichuan 13b").
    return re.compile(rf"({alternation})(\d+(?:\.\d+)?(?![\d.]*b\b))?"), names


def _fold_model_words(text: str) -> str:
    got = _model_words()
    if got is None or not any("\u3400" <= ch <= "\u9fff" for ch in text):
        return text
    pattern, names = got
    return pattern.sub(lambda m: f" {names[m.group(1)]}{m.group(2) or ''} ", text)


@lru_cache(maxsize=8192)
def clean(text: str) -> str:
    """NFKC, lower case, no control characters, one space between words, units as `32g`. Kept for
    the texts seen last: a question's words are cleaned again and again on the ask path (each word
    of a typed model name is compacted as a card key too), and the result depends on the text alone."""
    text = text[:MAX_INPUT_CHARS]
    text = unicodedata.normalize("NFKC", text).lower()
    text = _CONTROL.sub(" ", text).replace("×", "x")
    text = _TERA_UNIT.sub(lambda m: f"{float(m.group(1)) * 1024:g}g", text)
    text = _MEBI_UNIT.sub(lambda m: f"{round(int(m.group(1)) / 1024)}g", text)
    text = _MEMORY_UNIT.sub(r"\1g", text)
    text = _SERIES_AFTER.sub(r"\2 \1", text)
    text = _BILLION.sub(r"\1b", text)
    text = _fold_model_words(text)
    return _SPACES.sub(" ", text).strip()


def split_words(text: str) -> list[str]:
    """Split a cleaned string on separators, keeping `.` and `+` inside names (`qwen2.5`, `max+`)."""
    return [w.strip(".+") for w in _SPLIT.split(text) if w.strip(".+")]


def pieces(text: str) -> list[tuple[str, int, int]]:
    """Latin/digit runs and single CJK characters with their spans in `text` (already cleaned)."""
    return [(m.group(0).rstrip(".+"), m.start(), m.end()) for m in _PIECE.finditer(text)]


def memory_of(token: str) -> float | None:
    """`32g` -> 32.0; anything else -> None."""
    m = _MEM_TOKEN.match(token)
    return float(m.group(1)) if m else None


def split_fused_memory(token: str) -> tuple[str, float] | None:
    """`4060ti16g` -> ("4060ti", 16.0): a card name with its memory glued on."""
    m = _FUSED_MEM.match(token)
    if not m:
        return None
    return m.group(1), float(m.group(2))


def strip_org(word: str) -> str:
    """`Qwen/Qwen3-32B` -> `Qwen3-32B`: a Hugging Face repo id names the model after the slash."""
    return word.rsplit("/", 1)[-1] if "/" in word else word
