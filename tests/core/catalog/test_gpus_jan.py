"""Cards people name in chat that the catalog lacked (January pass: Radeon PRO V620, Instinct MI350X /
MI355X, B300, Radeon 890M / 880M): each resolves to its own row by the names people type, the siblings
keep their names, and the headline figures are the sourced ones."""

from __future__ import annotations

import pytest

from core.catalog.loader import Catalog, default_catalog
from core.understanding.resolve import resolve_gpu


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        # AMD workstation / datacenter
        ("w7900", "radeon-pro-w7900"),  # the sibling keeps its name
        ("v620", "radeon-pro-v620"),
        ("Radeon PRO V620", "radeon-pro-v620"),
        ("mi355x", "mi355x"),
        ("MI350X", "mi350x"),
        ("MI325X", "mi325x"),  # the sibling keeps its name
        ("mi300x", "mi300x"),
        # NVIDIA datacenter
        ("A800", "a800-80g-sxm4"),  # bare A800 stays the SXM4 80 GB part (as A100 80G -> SXM4)
        ("A800 80G", "a800-80g-sxm4"),
        ("H800", "h800-sxm"),  # bare H800 stays SXM
        ("b300", "b300"),
        ("B200", "b200"),  # the sibling keeps its name
        ("GH200", "gh200-96g"),
        ("T4", "t4"),
        # Jetson
        ("jetson orin", "jetson-agx-orin-64g"),  # bare Orin stays the AGX 64 GB module
        ("orin nano", "jetson-orin-nano-8g"),
        # Intel
        # iGPUs
        ("890m", "radeon-890m"),
        ("Radeon 890M", "radeon-890m"),
        ("880m", "radeon-880m"),
        ("780m", "radeon-780m"),  # the older iGPU keeps its name
    ],
)
def test_new_cards_resolve(catalog: Catalog, typed: str, expected: str) -> None:
    res = resolve_gpu(typed, catalog)
    assert res.best_id == expected and res.confident, (typed, res.best_id, res.confident)


# (id, memory GiB, bandwidth GB/s, dense fp16 TFLOPS or None) as the cited sources give them.
_HEADLINE = [
    ("radeon-pro-v620", 32.0, 512.0, 40.55),
    ("mi355x", 288.0, 8000.0, 2516.6),  # 256 CUs x 4096 FLOPS/clock x 2.4 GHz (computed)
    ("mi350x", 288.0, 8000.0, 2306.9),  # the same at 2.2 GHz
    ("b300", 288.0, 8000.0, 2250.0),
    ("radeon-890m", 32.0, 120.0, 23.76),
    ("radeon-880m", 32.0, 120.0, 17.82),
]


@pytest.mark.parametrize(("gpu_id", "memory", "bandwidth", "fp16"), _HEADLINE)
def test_headline_figures(
    catalog: Catalog, gpu_id: str, memory: float, bandwidth: float, fp16: float | None
) -> None:
    gpu = catalog.gpus[gpu_id]
    assert (gpu.memory_gib, gpu.bandwidth_gbs, gpu.fp16_tflops) == (memory, bandwidth, fp16)


def test_strix_point_igpus_share_system_memory(catalog: Catalog) -> None:
    for gpu_id in ("radeon-890m", "radeon-880m"):
        gpu = catalog.gpus[gpu_id]
        assert gpu.unified_memory and gpu.segment == "soc" and gpu.memory_gib in gpu.memory_options_gib


def test_the_bare_cpu_name_stays_the_cpu(catalog: Catalog) -> None:
    # cpus.toml owns "HX 370": a CPU-only box is priced as a CPU until the question names the iGPU.
    res = resolve_gpu("HX 370", catalog)
    assert res.best_id is None or not res.confident, res


# Cards still missing (no clean bandwidth source read; see catalogs/README.md "Known gaps"): their
# names must not be read confidently as a sibling (Flex 170 -> Arc A770, Tesla T10 -> T4). W7800,
# W7700, A800 / H800 PCIe and Orin NX were added later: test_gpus_feb.py.
@pytest.mark.parametrize("typed", ["flex 170", "tesla t10"])
def test_missing_cards_are_not_read_as_a_sibling(catalog: Catalog, typed: str) -> None:
    res = resolve_gpu(typed, catalog)
    assert res.best_id is None or not res.confident, (typed, res.best_id)
