"""Name completion: prefix, word-prefix and fuzzy matches, popular ones first, values that read back."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.commands.complete import _entries, complete
from core.understanding.parse import parse_question
from core.understanding.resolve import resolve_gpu, resolve_model


@pytest.fixture(scope="module")
def catalog():
    return default_catalog()


def ids(catalog, kind, pairs):
    table = catalog.gpus if kind == "gpu" else catalog.models
    by_value = {}
    for entry in table.values():
        by_value.update({entry.name: entry.id, entry.id: entry.id})
        by_value.update({alias: entry.id for alias in entry.aliases})
    return [by_value[value] for _, value in pairs]


def test_prefix_and_alias(catalog):
    assert ids(catalog, "gpu", complete(catalog, "gpu", "409"))[0] == "rtx-4090"
    v100 = ids(catalog, "gpu", complete(catalog, "gpu", "v100"))
    assert v100[:2] and all(i.startswith("tesla-v100") for i in v100[:4])
    assert ids(catalog, "model", complete(catalog, "model", "gemma 3 27"))[0] == "gemma-3-27b"


def test_fuzzy_typos(catalog):
    assert ids(catalog, "model", complete(catalog, "model", "qwne3 32b"))[0].startswith("qwen3")
    assert "rtx-3090" in ids(catalog, "gpu", complete(catalog, "gpu", "rtx3900"))[:5]


def test_empty_prefix_lists_popular_and_mixes_kinds(catalog):
    models = complete(catalog, "model", "")
    assert len(models) == 25
    top = [catalog.models[i].popularity for i in ids(catalog, "model", models[:5])]
    assert min(top) >= 80
    mixed = complete(catalog, "any", "", include_all=True)
    assert mixed[0] == ("all", "all") and len(mixed) == 25
    assert complete(catalog, "any", "al", include_all=True)[0] == ("all", "all")
    assert ("all", "all") not in complete(catalog, "any", "v100", include_all=True)


def test_limits_and_labels(catalog):
    for kind in ("gpu", "model", "any"):
        for prefix in ("", "a", "rtx", "zzzzzz", "显卡"):
            pairs = complete(catalog, kind, prefix, limit=10)
            assert len(pairs) <= 10
            assert all(0 < len(label) <= 100 and 0 < len(value) <= 100 for label, value in pairs)
    assert complete(catalog, "gpu", "4090", limit=0) == []


def test_every_value_reads_back_as_its_entry(catalog):
    """A picked value goes into /submit (resolve_*) and /subscribe, /accuracy (the question parser)."""
    for gpu in catalog.gpus.values():
        [(_, value)] = [
            p for p in complete(catalog, "gpu", gpu.name, limit=25) if ids(catalog, "gpu", [p]) == [gpu.id]
        ]
        assert resolve_gpu(value, catalog).best_id == gpu.id
        assert parse_question(value, catalog).gpu.best_id == gpu.id
    for model in catalog.models.values():
        pairs = [
            p for p in complete(catalog, "model", model.name) if ids(catalog, "model", [p]) == [model.id]
        ]
        assert pairs, model.id
        assert resolve_model(pairs[0][1], catalog).best_id == model.id


def test_a_keystroke_reuses_the_name_index(catalog):
    """What keeps completion cheap per keystroke: the name index is built once per catalog, never
    per prefix (the ms per keystroke is scripts/bench_understanding.py's figure, not a test)."""
    complete(catalog, "any", "warm up")
    built = _entries.cache_info().misses
    for prefix in ("r", "rt", "rtx", "rtx 4", "rtx 40", "qw", "qwen3", "deepsek", "m3 max", ""):
        assert len(complete(catalog, "any", prefix)) <= 25
    assert _entries.cache_info().misses == built
