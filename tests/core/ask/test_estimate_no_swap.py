"""estimate --model never answers a neighbour the typed name isn't (issue 22, as the chat does)."""

from __future__ import annotations

import pytest

from core.ask.estimate_request import QueryError, run_query
from core.catalog.loader import default_catalog

CAT = default_catalog()


@pytest.mark.parametrize("typed", ["llama 9 13b", "olmo 2 13b", "smollm3 3b", "qwen3 40b"])
def test_a_name_the_reading_lacks_is_refused(typed: str) -> None:
    with pytest.raises(QueryError) as err:
        run_query({"model": typed, "gpu": "4090"}, CAT)
    assert "model" in (err.value.candidates or {}), err.value
    for mid in err.value.candidates["model"]:
        assert mid != "llama-2-13b" or "llama" in typed  # only the typed family is offered


def test_the_family_is_offered_when_the_size_is_wrong() -> None:
    with pytest.raises(QueryError) as err:
        run_query({"model": "llama 9 13b", "gpu": "4090"}, CAT)
    offered = err.value.candidates["model"]
    # The family is offered; a Llama of another version ("llama 9" vs Llama 2) is no reading of the
    # typed name, not even as a candidate (resolve._version_fits), and a size alone is no neighbour.
    assert offered and all("llama" in mid for mid in offered), offered
    assert "llama-2-13b" not in offered and "baichuan2-13b" not in offered


@pytest.mark.parametrize("typed", ["qwen3 32b", "Llama-2-13B", "llama 2 13b", "gemma 3 27b", "gpt-oss-120b"])
def test_a_name_that_fits_still_answers(typed: str) -> None:
    est = run_query({"model": typed, "gpu": "4090"}, CAT)
    assert est.request.model.id
