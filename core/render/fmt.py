"""Small, fast formatters shared by every view: context labels, speeds, sizes, aligned tables.

Cells are ASCII on purpose: their width is their length on every phone font, so a table stays a
rectangle; anything in Chinese goes in prose lines outside the block.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from core.estimator.estimate import Range
from core.render.doc import pad_block

NO_FIT = "x"
TIGHT = "*"
ROPE = "^"
OVER = "!"  # memory view: the need is above what the card lets you use


@lru_cache(maxsize=256)
def ctx_label(tokens: int) -> str:
    """4096 -> "4K", 131072 -> "128K", 1048576 -> "1M", 40960 -> "40K", 8000 -> "8000"."""
    if tokens >= 1_048_576 and tokens % 1_048_576 == 0:
        return f"{tokens // 1_048_576}M"
    if tokens % 1024 == 0:
        return f"{tokens // 1024}K"
    if tokens % 1000 == 0:
        return f"{tokens // 1000}k"
    return str(tokens)


def num(value: float) -> str:
    """A speed or size in as few characters as stays honest: 7.5, 42, 130."""
    if value < 0.05:
        return "0"
    if value < 10:
        return f"{value:.1f}"
    return f"{value:.0f}"


def gib(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def speed_range(r: Range) -> str:
    if r.high < 10:
        return f"{r.low:.1f}-{r.high:.1f}"
    return f"{r.low:.0f}-{r.high:.0f}"


def _widths(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    return [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(len(header))]


def table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> tuple[str, ...]:
    """Columns separated by one space; the first `left` columns left-aligned, the rest right-aligned."""
    widths = _widths(header, rows)
    lines = []
    for row in (header, *rows):
        cells = [row[i].ljust(widths[i]) if i < left else row[i].rjust(widths[i]) for i in range(len(header))]
        lines.append(" ".join(cells))
    return pad_block(lines)


def table_width(header: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
    return sum(_widths(header, rows)) + len(header) - 1
