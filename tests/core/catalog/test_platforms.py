"""OS names (core/catalog/platforms.py): one table of words, read the same by a question, by
`estimate --os` and by a `/submit` form; "linux_desktop" is Linux to a framework and to a reply."""

from __future__ import annotations

import pytest

from core.ask.estimate_request import EstimateQuery
from core.catalog.loader import default_catalog
from core.catalog.platforms import (
    OS_FAMILIES,
    SETUP_OS_NAMES,
    family_from_word,
    framework_os,
    os_family,
    os_from_word,
)
from core.community.submission_form import read_form
from core.understanding.parse import parse_question
from core.understanding.vocab import vocab_for

CATALOG = default_catalog()
WORDS = vocab_for(CATALOG).os_words


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("win11", "windows"),
        ("Windows", "windows"),
        ("wsl2", "windows"),  # WSL runs on the Windows desktop: its VRAM reserve is Windows's
        ("ubuntu", "linux"),
        ("linux_desktop", "linux_desktop"),
        ("mac", "macos"),
        ("OSX", "macos"),
        ("beos", None),
        ("", None),
    ],
)
def test_a_typed_word_names_one_os_wherever_it_is_typed(typed: str, expected: str | None) -> None:
    assert os_from_word(typed, WORDS) == expected
    if expected is None:
        with pytest.raises(ValueError):
            EstimateQuery(gpu="4090", model="qwen3 8b", os=typed or "?")
        return
    assert EstimateQuery(gpu="4090", model="qwen3 8b", os=typed).os == expected
    form, notes, bad = read_form(
        {"gpu": "4090", "model": "qwen3 8b", "quant": "Q4_K_M", "decode": "100", "os": typed}, CATALOG
    )
    assert (form.os, notes, bad) == (expected, [], set())


def test_a_question_reads_the_same_words_as_the_family() -> None:
    for word in ("win11", "ubuntu", "macos", "wsl"):
        expected = framework_os(os_from_word(word, WORDS) or "")
        assert (
            parse_question(f"4090 qwen3 8b {word}", CATALOG).os == expected == family_from_word(word, WORDS)
        )


def test_setup_names_fold_to_families() -> None:
    assert set(OS_FAMILIES) < set(SETUP_OS_NAMES)
    assert [os_family(n) for n in SETUP_OS_NAMES] == ["linux", "linux", "windows", "macos"]
    assert [framework_os(n) for n in ("linux_desktop", "windows", "macos", "plan9")] == [
        "linux",
        "windows",
        "macos",
        "linux",
    ]
    assert os_family("plan9") == "plan9"  # no switch is offered for it
