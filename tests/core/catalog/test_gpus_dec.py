"""Cards people name in chat that the catalog lacked (December pass): each resolves to its own row by
the names people type, and its headline figures are the sourced ones (a unit slip or a sibling's
numbers would show here first)."""

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
        # AMD consumer
        ("rx 6800", "rx-6800"),
        ("RX6800", "rx-6800"),
        ("6800 16g", "rx-6800"),
        ("rx 6700", "rx-6700"),
        ("6700 10g", "rx-6700"),
        ("6750xt", "rx-6750-xt"),
        ("RX 6750 XT", "rx-6750-xt"),
        ("6650 xt", "rx-6650-xt"),
        ("6950xt", "rx-6950-xt"),
        ("7700 xt", "rx-7700-xt"),
        ("7900 gre", "rx-7900-gre"),
        ("RX7900GRE", "rx-7900-gre"),
        ("rx 9070", "rx-9070"),
        ("9060 xt", "rx-9060-xt-16g"),
        ("9060xt 16g", "rx-9060-xt-16g"),
        ("9060 xt 8g", "rx-9060-xt-8g"),
        ("rx 580", "rx-580-8g"),
        ("rx580 8g", "rx-580-8g"),
        ("rx 590", "rx-590"),
        ("rx 570", "rx-570"),
        ("5700xt", "rx-5700-xt"),
        ("vega 64", "rx-vega-64"),
        ("vega 56", "rx-vega-56"),
        # AMD workstation / datacenter
        ("w6800", "radeon-pro-w6800"),
        ("MI250", "mi250"),
        ("MI250X", "mi250x"),  # the sibling keeps its name
        # NVIDIA
        ("quadro rtx 8000", "quadro-rtx-8000"),
        ("RTX 8000", "quadro-rtx-8000"),
        ("quadro rtx 6000", "quadro-rtx-6000"),
        ("quadro rtx 5000", "quadro-rtx-5000"),
        ("quadro rtx 4000", "quadro-rtx-4000"),
        ("quadro p6000", "quadro-p6000"),
        ("P6000", "quadro-p6000"),
        ("tesla m40", "tesla-m40-24g"),
        ("m40 24g", "tesla-m40-24g"),
        ("cmp 170hx", "cmp-170hx"),
        ("A800", "a800-80g-sxm4"),
        ("H800", "h800-sxm"),
        ("rtx 5050", "rtx-5050"),
        ("rtx pro 4000", "rtx-pro-4000-blackwell"),
        ("rtx pro 4500 blackwell", "rtx-pro-4500-blackwell"),
        ("rtx pro 5000", "rtx-pro-5000-blackwell"),
        ("1070 ti", "gtx-1070-ti"),
        ("1070", "gtx-1070"),  # the sibling keeps its name
        ("titan xp", "titan-xp"),
        ("jetson orin", "jetson-agx-orin-64g"),  # bare Orin stays on the AGX 64 GB module
        ("H100", "h100-sxm"),
        # Intel
        ("a380", "arc-a380"),
        ("Arc A580", "arc-a580"),
        ("b570", "arc-b570"),
        ("Meteor Lake", "arc-graphics-meteor-lake"),
        ("Core Ultra 7 155H iGPU", "arc-graphics-meteor-lake"),
        ("155h igpu", "arc-graphics-meteor-lake"),
        ("Arc 140T", "arc-140t"),
        ("Core Ultra 9 285H", "arc-140t"),
    ],
)
def test_new_cards_resolve(catalog: Catalog, typed: str, expected: str) -> None:
    res = resolve_gpu(typed, catalog)
    assert res.best_id == expected and res.confident, (typed, res.best_id, res.confident)


# (id, memory GiB, bandwidth GB/s) as the cited sources give them.
_HEADLINE = [
    ("rx-6800", 16.0, 512.0),
    ("rx-6700", 10.0, 320.0),
    ("rx-6750-xt", 12.0, 432.0),
    ("rx-6650-xt", 8.0, 280.0),
    ("rx-6950-xt", 16.0, 576.0),
    ("quadro-rtx-8000", 48.0, 672.0),
    ("tesla-m40-24g", 24.0, 288.0),
]


@pytest.mark.parametrize(("gpu_id", "memory", "bandwidth"), _HEADLINE)
def test_headline_figures(catalog: Catalog, gpu_id: str, memory: float, bandwidth: float) -> None:
    gpu = catalog.gpus[gpu_id]
    assert (gpu.memory_gib, gpu.bandwidth_gbs) == (memory, bandwidth)


def test_a_bare_cpu_name_stays_the_cpu(catalog: Catalog) -> None:
    # cpus.toml owns "155H": a CPU-only box is priced as a CPU until the question names the iGPU.
    assert resolve_gpu("155H", catalog).best_id is None or not resolve_gpu("155H", catalog).confident


def test_igpus_share_system_memory(catalog: Catalog) -> None:
    for gpu_id in ("arc-graphics-meteor-lake", "arc-140t"):
        gpu = catalog.gpus[gpu_id]
        assert gpu.unified_memory and gpu.segment == "soc", gpu_id
