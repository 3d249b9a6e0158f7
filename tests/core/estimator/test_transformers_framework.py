"""Hugging Face transformers, MLC LLM and gpt-fast: priced when the user names them (efficiency
priors from their measured rows, catalogs/frameworks.toml `decode_prior`), never the plan's own pick
(`plan_pick = false`): for one user they are not what the plan would run."""

from __future__ import annotations

import pytest

from core.ask.estimate_request import run_query
from core.catalog.loader import Catalog, default_catalog
from core.estimator.plan import plan_for
from core.estimator.speed import calibration
from tests.fakes.scripts import load_script

bench = load_script("bench_accuracy_setups", reuse=True)
PRICED_ONLY = ("transformers", "mlc-llm", "gpt-fast")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


def _decode(catalog: Catalog, **request: object) -> float:
    est = run_query(request, catalog)
    rng = est.rows[0].decode_tps
    assert rng is not None
    return rng.mid


def test_priced_only_frameworks_are_in_the_catalog_but_never_a_pick(catalog: Catalog) -> None:
    for fid in PRICED_ONLY:
        assert fid in catalog.frameworks and not catalog.frameworks[fid].plan_pick, fid
    picks = {f for f, fw in catalog.frameworks.items() if fw.plan_pick}
    assert picks == {
        "llama.cpp", "ollama", "lmstudio", "vllm", "sglang", "exllamav2", "exllamav3", "mlx",
        "ktransformers", "ik_llama.cpp",
    }  # fmt: skip


@pytest.mark.parametrize(
    "request_",
    [
        {"gpu": "4090", "model": "qwen3 8b"},
        {"gpu": "4090", "model": "qwen3 8b", "quant": "AWQ", "os": "windows"},
        {"gpu": "4090", "model": "qwen3 8b", "quant": "HF-BF16", "os": "windows"},
        {"gpu": "3060", "model": "qwen3 8b", "quant": "BNB-NF4"},
        {"gpu": "a100 80g", "model": "llama 3 8b", "quant": "HF-BF16"},
        {"gpu": "m2 max", "model": "qwen3 8b"},
    ],
)
def test_the_plan_never_picks_a_priced_only_framework(catalog: Catalog, request_: dict[str, object]) -> None:
    est = run_query(request_, catalog)
    assert est.framework not in PRICED_ONLY
    for row in est.rows:
        plan = plan_for(est, row, catalog)
        assert plan.framework not in PRICED_ONLY, (request_, row.quant, plan)


def test_transformers_is_priced_with_its_prior(catalog: Catalog) -> None:
    # The measured rows put transformers' decode at llama.cpp's efficiency on a 4090 (tuned runs:
    # AutoAWQ's fused layers), its prefill at about half: priced so until a fit has rows of its own.
    cal = calibration(catalog)
    assert cal.decode.factors["framework"]["transformers"] == 1.0
    assert cal.prefill.factors["framework"]["transformers"] == 0.54
    ask = {"gpu": "4090", "model": "qwen3 8b", "quant": "HF-BF16", "ctx": "4k"}
    hf = _decode(catalog, **ask, framework="transformers")
    vllm = _decode(catalog, **ask, framework="vllm")
    assert 0.8 * vllm < hf < 1.2 * vllm
    hf_pp = run_query({**ask, "framework": "transformers"}, catalog).rows[0].prefill_tps
    vllm_pp = run_query({**ask, "framework": "vllm"}, catalog).rows[0].prefill_tps
    assert hf_pp is not None and vllm_pp is not None and hf_pp.mid < 0.7 * vllm_pp.mid


def test_the_named_transformers_plan_has_its_command(catalog: Catalog) -> None:
    est = run_query({"gpu": "4090", "model": "qwen3 8b", "framework": "transformers"}, catalog)
    assert est.framework == "transformers"
    assert {r.quant for r in est.rows} <= {
        "HF-BF16",
        "HF-FP16",
        "BNB-INT8",
        "BNB-NF4",
        "AWQ",
        "GPTQ-INT4",
        "GPTQ-INT8",
        "FP8",
    }
    plan = plan_for(est, est.rows[0], catalog, "transformers")
    assert plan.framework == "transformers" and plan.kind == "asked"
    assert "transformers" in plan.command and "Qwen/Qwen3-8B" in plan.command


def test_mlc_prices_its_own_4bit_format(catalog: Catalog) -> None:
    est = run_query({"gpu": "3060", "model": "qwen3 8b", "framework": "mlc-llm"}, catalog)
    assert est.framework == "mlc-llm"
    assert "MLC-Q4F16_1" in {r.quant for r in est.rows}
    row = next(r for r in est.rows if r.quant == "MLC-Q4F16_1")
    plan = plan_for(est, row, catalog, "mlc-llm")
    assert plan.command.startswith("mlc_llm serve HF://mlc-ai/Qwen3-8B-q4f16_1-MLC")


@pytest.mark.parametrize(
    ("text", "quant"),
    [
        ("int8 weight-only", "INT8-WO"),
        ("int4 weight-only (G=32)", "INT4-WO-G32"),
        ("int4 weight-only g64", "INT4-WO-G64"),
        ("q4f16_1 (MLC 4-bit)", "MLC-Q4F16_1"),
        ("AutoRound INT4", "GPTQ-INT4"),
        ("INT4 AutoRound (Intel/Qwen3-8B-int4-AutoRound)", "GPTQ-INT4"),
    ],
)
def test_the_bench_reads_the_quants_of_these_rows(catalog: Catalog, text: str, quant: str) -> None:
    assert bench.find_quant(text, catalog) == quant


@pytest.fixture(scope="module")
def outcomes(catalog: Catalog) -> dict[tuple[str, int], object]:
    rows = bench.load_all(bench.DEFAULT_CSVS)
    out = bench.run(rows, bench.load_holdout(bench.HOLDOUT_PATH), catalog)
    return {(o.row.file, o.row.line): o for o in out}


# (file, first line, last line) of rows refused before for an unknown framework or quant.
_PRICED = [
    ("measured_calibration.csv", 235, 236),  # HF transformers FP16 on a 4090
    ("measured_calibration.csv", 244, 245),  # ... on an A100
    ("measured_calibration.csv", 212, 223),  # AutoAWQ (HF transformers) on a 4090
    ("measured_calibration.csv", 185, 189),  # gpt-fast on an A100, one card
    ("measured_calibration.csv", 160, 160),  # MLC LLM q4f16_1 on a 4090
]


@pytest.mark.parametrize(("file", "first", "last"), _PRICED)
def test_the_rows_are_priced(
    outcomes: dict[tuple[str, int], object], file: str, first: int, last: int
) -> None:
    rows = [o for (f, line), o in outcomes.items() if f == file and first <= line <= last]
    assert rows
    refused = [(o.row.line, o.reason) for o in rows if o.reason]  # type: ignore[attr-defined]
    assert not refused, refused
