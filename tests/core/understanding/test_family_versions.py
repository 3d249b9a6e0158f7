"""A family version typed with the name ("gemma 3n", "qwen 3.5") that differs from a candidate's own
version ("gemma-4-e2b", "gemma-3-27b") is another model: the candidate is no reading of the name, so
a model the catalog lacks (Gemma 3n) is said to be missing, never answered as a neighbour. A version
word glued to a letter ("3n") stays part of the typed name in a question."""

from __future__ import annotations

import pytest

from core.catalog.loader import Catalog, default_catalog
from core.understanding.parse import parse_question
from core.understanding.resolve import resolve_model


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


@pytest.mark.parametrize(
    "question",
    [
        "gemma-3n-e2b on a 4060",
        "4060 能跑 gemma 3n e4b 吗",
        "google/gemma-3n-E4B-it on rtx 3090",
        "gemma 3n",
    ],
)
def test_gemma_3n_is_no_gemma_3_or_4(catalog: Catalog, question: str) -> None:
    m = parse_question(question, catalog).model
    assert m is not None, question  # a model was named: it is said to be missing, not dropped
    ids = [mid for mid, _score in m.candidates]
    assert m.best_id is None and not any(i.startswith(("gemma-4", "gemma-3-", "gemma-2")) for i in ids), m


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("gemma 3 12b", "gemma-3-12b"),  # the candidate's own version still reads
        ("gemma4 e2b", "gemma-4-e2b"),
        ("llama 3.3 70b", "llama-3.3-70b"),
    ],
)
def test_the_same_version_still_reads(catalog: Catalog, typed: str, expected: str) -> None:
    res = resolve_model(typed, catalog)
    assert res.best_id == expected and res.confident, res
