"""`bare_quants` in catalogs/frameworks.toml: what a bare width or precision word means with each
framework. Every target must be a quant the framework runs, checked when the file is loaded (against
its own `quants` list) and here (against the quant catalog, for frameworks that run a whole format)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.catalog.framework import BARE_QUANT_KEYS, Framework
from core.catalog.loader import CatalogError, _validate_list, default_catalog
from core.estimator.frameworks.quant_match import loads, quant_in

CATALOG = default_catalog()


def test_every_target_is_a_quant_the_framework_runs() -> None:
    for fw in CATALOG.frameworks.values():
        for key, target in fw.bare_quants.items():
            assert key in BARE_QUANT_KEYS, (fw.id, key)
            quant = CATALOG.quants.get(target)
            assert quant is not None, (fw.id, key, target)
            assert quant.format in fw.quant_formats, (fw.id, key, target)
            assert loads(fw, quant), (fw.id, key, target)
            assert not fw.quants or quant_in(quant, fw.quants), (fw.id, key, target)


def test_the_serving_frameworks_read_bare_widths() -> None:
    assert CATALOG.frameworks["vllm"].bare_quants["4"] == "AWQ"
    assert CATALOG.frameworks["transformers"].bare_quants["4"] == "BNB-NF4"
    assert CATALOG.frameworks["sglang"].bare_quants["bf16"] == "HF-BF16"
    assert "4" not in CATALOG.frameworks["ollama"].bare_quants  # the GGUF default stays


def _raw(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "toy",
        "name": "Toy",
        "aliases": ["toy"],
        "kind": "server",
        "engine": "toy",
        "quant_formats": ["serving"],
        "quants": ["HF-BF16", "AWQ"],
        "backends": ["cuda"],
        "overhead_gib": [1.0, 2.0],
        "os": ["linux"],
        "command": "toy {serve_model}",
    }
    return base | extra


def test_a_target_outside_the_frameworks_quants_fails_at_load() -> None:
    with pytest.raises(CatalogError, match="bare_quants"):
        _validate_list(Framework, [_raw(bare_quants={"4": "BNB-NF4"})], "frameworks.toml")


def test_an_unknown_key_fails_at_load() -> None:
    with pytest.raises(CatalogError, match="bare_quants"):
        _validate_list(Framework, [_raw(bare_quants={"four": "AWQ"})], "frameworks.toml")


def test_a_listed_target_loads() -> None:
    loaded = _validate_list(Framework, [_raw(bare_quants={"4": "AWQ", "bf16": "HF-BF16"})], "x.toml")
    assert loaded["toy"].bare_quants == {"4": "AWQ", "bf16": "HF-BF16"}


def test_the_shipped_file_names_the_field() -> None:
    text = (Path(__file__).parents[3] / "catalogs" / "frameworks.toml").read_text(encoding="utf-8")
    assert "bare_quants" in text
