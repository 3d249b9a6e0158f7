"""Issue 23, "every row priced": the models, cards and framework names that published measurements
name and the catalog lacked. Each resolves to its own row (or, for a fork, to the engine whose
kernels it runs), questions in the chat's phrasing parse to it, and the bench prices the measured
rows it refused before; an engine added only to price rows is never the plan's pick."""

from __future__ import annotations

import pytest

from core.catalog.loader import Catalog, default_catalog
from core.understanding.parse import parse_question
from core.understanding.resolve import resolve_framework, resolve_gpu, resolve_model
from tests.fakes.scripts import load_script

bench = load_script("bench_accuracy_setups", reuse=True)


def _open(*values: object) -> object:
    """A case for a gap not closed yet: the catalog entry needs a source not read yet (Flex 170
    bandwidth, the Intel iGPUs' memory), a config not read (Qwen3Guard,
    Nemotron-Cascade-2). Strict: it fails the day the gap closes."""
    return pytest.param(*values, marks=pytest.mark.xfail(strict=True, reason="issue 23 gap still open"))


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("NVIDIA-Nemotron-3-Super-120B-A12B", "nemotron-3-super-120b-a12b"),
        ("nemotron 3 super", "nemotron-3-super-120b-a12b"),
        ("Devstral-2-123B-Instruct-2512", "devstral-2-123b"),
        ("devstral 2", "devstral-2-123b"),
        _open("Nemotron-Cascade-2-30B-A3B", "nemotron-cascade-2-30b-a3b"),
        _open("Qwen3Guard-Gen-8B", "qwen3guard-gen-8b"),
        ("nemotron 3 nano", "nemotron-3-nano-30b-a3b"),  # the older rows keep their names
        ("devstral small", "devstral-small-2505"),
        ("qwen3 8b", "qwen3-8b"),
    ],
)
def test_new_models_resolve(catalog: Catalog, typed: str, expected: str) -> None:
    res = resolve_model(typed, catalog)
    assert res.best_id == expected and res.confident, (typed, res.best_id, res.confident)


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        _open("Intel Data Center GPU Flex 170", "flex-170"),
        _open("Flex 170", "flex-170"),
        ("Radeon Pro W7800", "radeon-pro-w7800"),
        ("W7800", "radeon-pro-w7800"),
        ("W7900", "radeon-pro-w7900"),  # the sibling keeps its name
        ("Meteor Lake", "arc-graphics-meteor-lake"),
        ("Core Ultra 9 185H", "arc-graphics-meteor-lake"),
        ("Arc 140T", "arc-140t"),
    ],
)
def test_new_cards_resolve(catalog: Catalog, typed: str, expected: str) -> None:
    res = resolve_gpu(typed, catalog)
    assert res.best_id == expected and res.confident, (typed, res.best_id, res.confident)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        _open("Intel Data Center GPU Flex 170", "flex-170"),
        ("Intel Meteor Lake built-in Arc iGPU (MTL)", "arc-graphics-meteor-lake"),
        ("Intel Arc iGPU (Meteor Lake)", "arc-graphics-meteor-lake"),
        ("Intel Arc iGPU (Core Ultra 9 185H, Meteor Lake)", "arc-graphics-meteor-lake"),
        ("AMD Radeon Pro W7800", "radeon-pro-w7800"),
    ],
)
def test_bench_reads_the_new_cards(text: str, expected: str, catalog: Catalog) -> None:
    found = bench.find_gpu(text, catalog)
    assert found is not None and found[0] == expected


@pytest.mark.parametrize(("typed", "expected"), [("koboldcpp", "llama.cpp"), ("Rapid-MLX", "mlx")])
def test_forks_price_as_their_engine(catalog: Catalog, typed: str, expected: str) -> None:
    res = resolve_framework(typed, catalog)
    assert res.best_id == expected and res.confident


def test_kobold_united_is_still_no_framework(catalog: Catalog) -> None:
    parsed = parse_question("Got 7B on 2x 8GB 3060's, using Kobold United, about 3 tokens/second", catalog)
    assert parsed.framework is None


@pytest.mark.parametrize(
    ("question", "gpu", "count", "model"),
    [
        ("jetson orin 64gb qwen3 8b", "jetson-agx-orin-64g", 1, "qwen3-8b"),
        ("devstral 2 123b on 2x r9700", "radeon-ai-pro-r9700", 2, "devstral-2-123b"),
        ("nemotron 3 super 120b 4090 + 128gb ram", "rtx-4090", 1, "nemotron-3-super-120b-a12b"),
        _open("flex 170 跑 llama 2 7b q4_0 多快", "flex-170", 1, "llama-2-7b"),
        ("w7800 gemma 2 27b q6_k", "radeon-pro-w7800", 1, "gemma-2-27b"),
        _open("nemotron cascade 2 on a dgx spark", "dgx-spark-gb10", 1, "nemotron-cascade-2-30b-a3b"),
    ],
)
def test_questions_name_the_new_rows(
    catalog: Catalog, question: str, gpu: str, count: int, model: str
) -> None:
    parsed = parse_question(question, catalog)
    (card,) = parsed.cards
    assert (card.res.best_id, card.count) == (gpu, count), card
    assert parsed.model is not None and parsed.model.best_id == model, parsed.model


# (file, first line, last line) of measured rows refused before for a catalog gap.
_PRICED = [
    ("published_extra.csv", 718, 727),  # Nemotron-3-Super on Strix Halo
    ("published_extra.csv", 914, 919),  # Devstral 2 on 2x R9700
    ("measured_calibration_backends.csv", 45, 47),  # koboldcpp on a Radeon VII
    ("measured_calibration.csv", 247, 251),  # Rapid-MLX
    _open("measured_calibration.csv", 305, 307),  # Flex 170, Meteor Lake, Arrow Lake-H
    _open("measured_calibration_backends.csv", 114, 117),
    ("measured_calibration_backends.csv", 131, 131),
    ("measured_calibration_backends.csv", 2, 2),  # Radeon Pro W7800
]


@pytest.fixture(scope="module")
def outcomes(catalog: Catalog) -> dict[tuple[str, int], object]:
    rows = bench.load_all(bench.DEFAULT_CSVS)
    out = bench.run(rows, bench.load_holdout(bench.HOLDOUT_PATH), catalog)
    return {(o.row.file, o.row.line): o for o in out}


@pytest.mark.parametrize(("file", "first", "last"), _PRICED)
def test_the_rows_are_priced(
    outcomes: dict[tuple[str, int], object], file: str, first: int, last: int
) -> None:
    rows = [o for (f, line), o in outcomes.items() if f == file and first <= line <= last]
    assert rows
    refused = [(o.row.line, o.reason) for o in rows if o.reason]  # type: ignore[attr-defined]
    assert not refused, refused


def test_no_new_framework_is_a_plan_pick(catalog: Catalog) -> None:
    # Pricing the forks added names, not engines: the plan chooses among the same frameworks. Engines
    # priced only when named (transformers, MLC LLM, gpt-fast) carry plan_pick = false.
    assert {f for f, fw in catalog.frameworks.items() if fw.plan_pick} == {
        "llama.cpp", "ollama", "lmstudio", "vllm", "sglang", "exllamav2", "exllamav3", "mlx",
        "ktransformers", "ik_llama.cpp",
    }  # fmt: skip
