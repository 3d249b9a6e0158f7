"""The card and model windows of the parser, grown word by word with prefix pruning, find exactly
what trying every window from the longest down found (the reference below is that older reader)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.catalog.loader import default_catalog
from core.understanding import card_names, parse_patterns
from core.understanding.name_index import Index, index_for

CATALOG = default_catalog()
INDEX = index_for(CATALOG)


def _gpu_window(ps: list[parse_patterns._Piece], i: int, j: int, index: Index) -> str | None:
    if ps[i].memory is not None or ps[j - 1].vendor:
        return None
    base = ""
    memory: float | None = None
    for p in ps[i:j]:
        if p.used:
            return None
        if p.vendor:
            continue
        if p.memory is not None:
            memory = p.memory
            continue
        base += p.text
    if not base:
        return None
    base = base.replace("+", "")
    if memory is not None and f"{base}{memory:g}g" in index.gpu_exact:
        return index.gpu_exact[f"{base}{memory:g}g"]
    return index.gpu_exact.get(base)


def _reference(ps: list[parse_patterns._Piece], i: int, stop: int) -> tuple[tuple[int, str] | None, int]:
    best_gpu: tuple[int, str] | None = None
    best_model = 0
    for j in range(stop, i, -1):
        if best_gpu is None:
            gid = _gpu_window(ps, i, j, INDEX)
            if gid is not None:
                best_gpu = (j, gid)
        window = ps[i:j]
        if not best_model and not any(p.used for p in window):
            if "".join(p.text for p in window) in INDEX.model_exact:
                best_model = j
    return best_gpu, best_model


_WORDS = [
    "nvidia", "rtx", "geforce", "mac", "mini", "studio", "apple", "4090", "3090", "ti", "super", "a100",
    "v100", "m4", "max", "pro", "ultra", "rx", "7900", "xtx", "32g", "80g", "24g", "128g", "pcie", "sxm",
    "qwen3", "32b", "30b", "a3b", "coder", "llama", "3.3", "70b", "deepseek", "r1", "gpt", "oss", "120b",
    "glm", "4.5", "air", "minimax", "m2", "titan", "v", "4060", "16g", "+", "max+", "395", "4090s", "跑",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_WORDS), st.booleans()), min_size=1, max_size=9))
def test_windows_match_the_reference(words: list[tuple[str, bool]]) -> None:
    ps = [parse_patterns._piece(w, 0, len(w), INDEX) for w, _used in words]
    for p, (_w, used) in zip(ps, words, strict=True):
        p.used = used and p.memory is None
    n = len(ps)
    for i in range(n):
        stop = min(n, i + 6)
        got = (
            card_names._longest_gpu_window(ps, i, stop, INDEX),
            card_names._longest_model_window(ps, i, stop, INDEX),
        )
        assert got == _reference(ps, i, stop), [p.text for p in ps]


def test_known_windows() -> None:
    ps = [parse_patterns._piece(w, 0, 1, INDEX) for w in ("nvidia", "rtx", "4090", "qwen3", "32b")]
    assert card_names._longest_gpu_window(ps, 0, 5, INDEX) == (3, "rtx-4090")
    assert card_names._longest_model_window(ps, 3, 5, INDEX) == 5
