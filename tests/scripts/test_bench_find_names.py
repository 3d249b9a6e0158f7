"""How scripts/bench_accuracy_setups.py reads the card and model names the measurement files give:
annotations in parentheses are dropped, a power limit picks the edition sold at that power, a row
that does not say which variant ran is not mapped, and a curated row the curator left without an id
is read by its name."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from core.catalog.loader import default_catalog
from tests.fakes.scripts import load_script

_load = load_script


bench = _load("bench_accuracy_setups")
CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("NVIDIA A100-80GB (330W power limit)", "a100-80g-sxm4"),  # no 330 W edition: the card itself
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition (power-limited to 300W)",
         "rtx-pro-6000-blackwell-max-q"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000-blackwell"),
        ("AMD Instinct MI250X (one GCD)", "mi250x"),
    ],
)  # fmt: skip
def test_find_gpu_reads_through_annotations(text: str, expected: str) -> None:
    found = bench.find_gpu(text, CATALOG)
    assert found is not None and found[0] == expected


@pytest.mark.parametrize(
    "text", ["NVIDIA Jetson Orin (edge GPU; Orin variant not stated)", "NVIDIA H100 (x2; variant not stated)"]
)
def test_find_gpu_does_not_guess_an_unstated_variant(text: str) -> None:
    assert bench.find_gpu(text, CATALOG) is None


@pytest.mark.parametrize(
    ("text", "params_b", "expected"),
    [
        ("Hunyuan-A13B (MoE)", 80.39, "hunyuan-a13b"),
        ("gemma-4-26B-A4B-it (MoE)", 26.0, "gemma-4-26b-a4b"),
        ("Nemotron-3-Nano-30B-A3B (hybrid MoE)", 30.0, "nemotron-3-nano-30b-a3b"),
    ],
)
def test_find_model_drops_annotations(text: str, params_b: float, expected: str) -> None:
    assert bench.find_model(text, params_b, CATALOG) == expected


def test_find_model_does_not_guess_an_unstated_model() -> None:
    assert bench.find_model("llama 3B", None, CATALOG) == "llama-3.2-3b"  # named: the resolver's pick
    assert bench.find_model("llama 3B (as labeled; exact model not stated)", None, CATALOG) is None


CURATED = (
    "gpu,gpu_count,model,params_b,quant,model_size_gib,backend,framework,test,context_or_depth,"
    "tokens_per_s,flash_attn,source,date,notes,gpu_id,gpu_query,model_id,model_query,quant_query"
).split(",")


def test_curated_row_without_ids_is_read_by_its_names(tmp_path: Path) -> None:
    path = tmp_path / bench.DEFAULT_CSVS[0].name  # the curated file's name: read as curated
    row = dict.fromkeys(CURATED, "")
    row.update(
        gpu="AMD Instinct MI250X (one GCD)", gpu_count="1", model="Hunyuan-A13B (MoE)", params_b="80.39",
        quant="Q4_K_M", backend="ROCm", framework="llama.cpp", test="tg", context_or_depth="0",
        tokens_per_s="20", source="https://example.org/x", notes="test=tg128",
    )  # fmt: skip
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CURATED)
        writer.writeheader()
        writer.writerow(row)
    (measured,) = bench.read_csv(path)
    query = bench._query(measured, CATALOG)
    assert not isinstance(query, str), query
    assert (query.gpu, query.model) == ("mi250x", "hunyuan-a13b")
