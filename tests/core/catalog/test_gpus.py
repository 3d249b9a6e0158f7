"""Consistency checks for catalogs/gpus.toml and catalogs/hosts.toml.

Every failure names the GPU id and the field, so a bad edit points straight at the row to fix.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.catalog.gpu import Gpu
from core.catalog.loader import Catalog, load_catalog
from core.estimator.speed import choose_backend
from core.understanding.resolve import resolve_gpu

REPO_ROOT = Path(__file__).resolve().parents[3]
REFERENCE_CSV = REPO_ROOT.parent / "shared" / "reference" / "gpus.csv"

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

# Lower bounds for peak bandwidth by memory family (GB/s). Deliberately loose: they catch unit
# slips (GiB/s vs GB/s, per-stack vs total, a missing digit), not small disagreements between sources.
MIN_BANDWIDTH_BY_MEMORY = {
    "HBM": 300.0,
    "GDDR7": 300.0,
    "GDDR6X": 400.0,
    "GDDR6": 150.0,
    "GDDR5X": 250.0,
    "GDDR5": 100.0,
    "LPDDR": 50.0,
    "unified": 50.0,
}


def normalise(alias: str) -> str:
    """How a chat message is matched against aliases: case-, space-, hyphen- and underscore-blind."""
    return re.sub(r"[\s\-_]", "", alias.lower())


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def gpus(catalog: Catalog) -> list[Gpu]:
    return list(catalog.gpus.values())


def _problems(gpus: list[Gpu], check: Callable[[Gpu], str | None]) -> list[str]:
    out: list[str] = []
    for gpu in gpus:
        problem = check(gpu)
        if problem:
            out.append(f"{gpu.id}: {problem}")
    return out


def test_ids_are_unique_slugs(gpus: list[Gpu]) -> None:
    bad = [f"{g.id}: id is not a lowercase-hyphen slug" for g in gpus if not SLUG.match(g.id)]
    assert not bad, "\n".join(bad)
    # load_catalog already rejects duplicate ids; this guards the count as well.
    assert len({g.id for g in gpus}) == len(gpus)


def test_memory_and_bandwidth_positive(gpus: list[Gpu]) -> None:
    def check(g: Gpu) -> str | None:
        if not g.memory_gib > 0:
            return f"memory_gib must be > 0 (got {g.memory_gib})"
        if not g.bandwidth_gbs > 0:
            return f"bandwidth_gbs must be > 0 (got {g.bandwidth_gbs})"
        return None

    bad = _problems(gpus, check)
    assert not bad, "\n".join(bad)


def _memory_family(memory_type: str) -> str | None:
    text = memory_type.upper()
    for family in ("HBM", "GDDR7", "GDDR6X", "GDDR6", "GDDR5X", "GDDR5", "LPDDR"):
        if family in text:
            return family
    if "UNIFIED" in text:
        return "unified"
    return None


def test_bandwidth_plausible_for_memory_type(gpus: list[Gpu]) -> None:
    def check(g: Gpu) -> str | None:
        family = _memory_family(g.memory_type)
        if family is None:
            return f"memory_type {g.memory_type!r} not recognised (add it to MIN_BANDWIDTH_BY_MEMORY)"
        low = MIN_BANDWIDTH_BY_MEMORY[family]
        if g.bandwidth_gbs < low:
            return f"bandwidth_gbs {g.bandwidth_gbs} too low for {family} (expected >= {low})"
        if g.bandwidth_gbs > 10_000:
            return f"bandwidth_gbs {g.bandwidth_gbs} above any shipping part (GB/s, not MB/s?)"
        return None

    bad = _problems(gpus, check)
    assert not bad, "\n".join(bad)


def test_nvidia_has_compute_capability(gpus: list[Gpu]) -> None:
    def check(g: Gpu) -> str | None:
        if g.vendor == "NVIDIA" and g.compute_capability is None:
            return "compute_capability missing (every NVIDIA row needs one)"
        if g.vendor != "NVIDIA" and g.compute_capability is not None:
            return "compute_capability is CUDA-only but the vendor is not NVIDIA"
        return None

    bad = _problems(gpus, check)
    assert not bad, "\n".join(bad)


def test_gfx_target_only_on_amd(gpus: list[Gpu]) -> None:
    def check(g: Gpu) -> str | None:
        if g.gfx_target is not None:
            if g.vendor != "AMD":
                return "gfx_target is ROCm-only but the vendor is not AMD"
            if not re.fullmatch(r"gfx[0-9a-f]{3,4}", g.gfx_target):
                return f"gfx_target {g.gfx_target!r} is not an LLVM gfx name"
        return None

    bad = _problems(gpus, check)
    assert not bad, "\n".join(bad)


def test_memory_gib_is_one_of_the_options(gpus: list[Gpu]) -> None:
    def check(g: Gpu) -> str | None:
        if g.memory_options_gib and g.memory_gib not in g.memory_options_gib:
            return f"memory_gib {g.memory_gib} not in memory_options_gib {list(g.memory_options_gib)}"
        if list(g.memory_options_gib) != sorted(set(g.memory_options_gib)):
            return "memory_options_gib must be sorted ascending without duplicates"
        return None

    bad = _problems(gpus, check)
    assert not bad, "\n".join(bad)


def test_unified_memory_systems_are_soc_or_embedded(gpus: list[Gpu]) -> None:
    def check(g: Gpu) -> str | None:
        if g.unified_memory and g.segment not in ("soc", "embedded"):
            return f"unified_memory is true but segment is {g.segment!r} (expected soc or embedded)"
        if g.vendor == "Apple" and not g.unified_memory:
            return "Apple silicon must set unified_memory = true"
        return None

    bad = _problems(gpus, check)
    assert not bad, "\n".join(bad)


def test_half_rate_flag_only_on_geforce(gpus: list[Gpu]) -> None:
    geforce_families = {"turing", "ampere", "ada", "blackwell"}

    def check(g: Gpu) -> str | None:
        if g.fp16_fp32acc_half_rate and not (
            g.vendor == "NVIDIA" and g.segment == "consumer" and g.arch_family in geforce_families
        ):
            return "fp16_fp32acc_half_rate is only for GeForce (consumer NVIDIA Turing..Blackwell)"
        if g.fp16_fp32acc_half_rate and not g.name.startswith("GeForce"):
            return "fp16_fp32acc_half_rate set on a card that is not GeForce-branded"
        return None

    bad = _problems(gpus, check)
    assert not bad, "\n".join(bad)


def test_pascal_has_no_fp16_but_fp32(gpus: list[Gpu]) -> None:
    # Pascal consumer cards and P4/P40 have 1:64 FP16; an FP16 figure would wreck prefill estimates.
    def check(g: Gpu) -> str | None:
        if g.arch_family == "pascal" and not g.id.startswith("tesla-p100"):  # GP100: 2:1 FP16
            if g.fp16_tflops is not None:
                return "fp16_tflops must stay empty on Pascal (1:64 FP16)"
            if g.fp32_tflops is None:
                return "fp32_tflops needed on Pascal (llama.cpp prefill runs in FP32)"
        return None

    bad = _problems(gpus, check)
    assert not bad, "\n".join(bad)


def test_compute_figures_plausible(gpus: list[Gpu]) -> None:
    def check(g: Gpu) -> str | None:
        for name in ("fp16_tflops", "fp32_tflops", "int8_tops"):
            value = getattr(g, name)
            if value is not None and not 0 < value < 10_000:
                return f"{name} {value} out of range"
        if g.fp16_tflops is not None and g.fp32_tflops is not None and g.fp16_tflops < g.fp32_tflops * 0.99:
            return f"fp16_tflops {g.fp16_tflops} below fp32_tflops {g.fp32_tflops}"
        if g.year is not None and not 2010 <= g.year <= 2030:
            return f"year {g.year} implausible"
        if g.tdp_w is not None and not 5 <= g.tdp_w <= 1500:
            return f"tdp_w {g.tdp_w} implausible"
        return None

    bad = _problems(gpus, check)
    assert not bad, "\n".join(bad)


def test_every_row_cites_a_source(gpus: list[Gpu]) -> None:
    bad = [f"{g.id}: source is empty" for g in gpus if not g.source.strip()]
    assert not bad, "\n".join(bad)


def test_aliases_unique_after_normalisation(gpus: list[Gpu]) -> None:
    owner: dict[str, str] = {}
    clashes: list[str] = []
    for g in gpus:
        keys = {normalise(a): a for a in g.aliases}
        keys.setdefault(normalise(g.id), g.id)
        for key, original in keys.items():
            if not key:
                clashes.append(f"{g.id}: empty alias")
            elif key in owner and owner[key] != g.id:
                clashes.append(f"{g.id}: alias {original!r} also maps to {owner[key]}")
            else:
                owner[key] = g.id
    assert not clashes, "\n".join(clashes)


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("4090", "rtx-4090"),
        ("RTX4090", "rtx-4090"),
        ("4090 24G", "rtx-4090"),
        ("V100 32G", "tesla-v100-32g-pcie"),
        ("v100s", "tesla-v100s-32g-pcie"),
        ("魔改2080ti 22g", "rtx-2080-ti-22g-mod"),
        ("2080ti 22g", "rtx-2080-ti-22g-mod"),
        ("3090ti", "rtx-3090-ti"),
        ("4070 super", "rtx-4070-super"),
        ("4070s", "rtx-4070-super"),
        ("4060ti 16g", "rtx-4060-ti-16g"),
        ("mac studio m2 ultra", "apple-m2-ultra"),
        ("m3 max", "apple-m3-max-40c"),
        ("strix halo", "ryzen-ai-max-395"),
        ("AI Max+ 395", "ryzen-ai-max-395"),
        ("395", "ryzen-ai-max-395"),
        ("DGX Spark", "dgx-spark-gb10"),
        ("A100 80G", "a100-80g-sxm4"),
        ("H100", "h100-sxm"),
        ("P40", "tesla-p40"),
        ("MI50", "mi50-16g"),
        ("7900xtx", "rx-7900-xtx"),
        ("3060", "rtx-3060-12g"),
        ("V100", "tesla-v100-16g-pcie"),
    ],
)
def test_chat_group_names_resolve(gpus: list[Gpu], typed: str, expected: str) -> None:
    index = {normalise(a): g.id for g in gpus for a in g.aliases}
    assert index.get(normalise(typed)) == expected, f"alias {typed!r} should map to {expected}"


def test_reference_ids_present(catalog: Catalog) -> None:
    if not REFERENCE_CSV.is_file():
        pytest.skip(f"reference data not available at {REFERENCE_CSV}")
    with REFERENCE_CSV.open(newline="", encoding="utf-8") as fh:
        reference_ids = [row["id"] for row in csv.DictReader(fh)]
    missing = [rid for rid in reference_ids if rid not in catalog.gpus]
    assert not missing, f"reference ids missing from gpus.toml: {missing}"


# ---- hosts.toml ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hosts(catalog: Catalog) -> dict[str, Any]:
    assert "hosts" in catalog.tables, "catalogs/hosts.toml missing"
    return catalog.tables["hosts"]


def test_host_bandwidth_is_theoretical(hosts: dict[str, Any]) -> None:
    bad: list[str] = []
    seen: set[str] = set()
    for host in hosts["host"]:
        hid = host.get("id", "?")
        if not SLUG.match(hid) or hid in seen:
            bad.append(f"{hid}: id must be a unique slug")
        seen.add(hid)
        for key in ("name", "aliases", "bandwidth_gbs", "default_ram_gib", "channels", "mt_s"):
            if key not in host:
                bad.append(f"{hid}: missing {key}")
        if {"channels", "mt_s", "bandwidth_gbs"} <= host.keys():
            expected = host["channels"] * host["mt_s"] * 8 / 1000
            if abs(host["bandwidth_gbs"] - expected) > 0.05:
                bad.append(
                    f"{hid}: bandwidth_gbs {host['bandwidth_gbs']} != channels x MT/s x 8 B = {expected}"
                )
        if host.get("default_ram_gib", 0) <= 0:
            bad.append(f"{hid}: default_ram_gib must be > 0")
    assert not bad, "\n".join(bad)


def test_host_defaults_point_at_hosts(hosts: dict[str, Any]) -> None:
    ids = {h["id"] for h in hosts["host"]}
    defaults = hosts["defaults"]
    for segment in ("consumer", "workstation", "datacenter"):
        assert defaults.get(segment) in ids, f"hosts.toml [defaults].{segment} must name a host id"
    unknown = {k: v for k, v in defaults.items() if v not in ids}
    assert not unknown, f"hosts.toml [defaults] names unknown hosts: {unknown}"


# ---- cards people name: each resolves from how it is typed (issue 10) -------------------------


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        # Laptop GeForce: "laptop", "mobile", "笔记本", "移动版", "游戏本", with or without memory.
        ("3050 laptop", "rtx-3050-laptop"),
        ("笔记本3050", "rtx-3050-laptop"),
        ("3050 laptop 6G", "rtx-3050-laptop"),
        ("RTX 3060 Laptop", "rtx-3060-laptop"),
        ("3060 mobile", "rtx-3060-laptop"),
        ("移动版3060", "rtx-3060-laptop"),
        ("3070 laptop", "rtx-3070-laptop"),
        ("3070笔记本", "rtx-3070-laptop"),
        ("RTX 3070 Laptop GPU", "rtx-3070-laptop"),
        ("3080 laptop 16G", "rtx-3080-laptop"),
        ("3080m", "rtx-3080-laptop"),
        ("游戏本3080", "rtx-3080-laptop"),
        ("4050 laptop", "rtx-4050-laptop"),
        ("4050 6G 笔记本", "rtx-4050-laptop"),
        ("RTX 4050 Mobile", "rtx-4050-laptop"),
        ("4060 8g 笔记本", "rtx-4060-laptop"),
        ("4060 laptop", "rtx-4060-laptop"),
        ("笔记本 RTX 4060", "rtx-4060-laptop"),
        ("4070 laptop", "rtx-4070-laptop"),
        ("4070 移动版", "rtx-4070-laptop"),
        ("4080 Laptop GPU", "rtx-4080-laptop"),
        ("笔记本4080", "rtx-4080-laptop"),
        ("4090 laptop", "rtx-4090-laptop"),
        ("笔记本 4090", "rtx-4090-laptop"),
        ("4090 mobile", "rtx-4090-laptop"),
        ("笔记本RTX4090 16G", "rtx-4090-laptop"),
        ("5070 laptop", "rtx-5070-laptop"),
        ("笔记本5070", "rtx-5070-laptop"),
        ("5080 Laptop", "rtx-5080-laptop"),
        ("5080 移动版", "rtx-5080-laptop"),
        ("5090 laptop", "rtx-5090-laptop"),
        ("笔记本5090 24G", "rtx-5090-laptop"),
        ("RTX 5090 Laptop GPU", "rtx-5090-laptop"),
        # China-market 5090s.
        ("RTX 5090 D", "rtx-5090d"),
        ("5090D", "rtx-5090d"),
        ("5090d 32g", "rtx-5090d"),
        ("5090D V2", "rtx-5090d-v2"),
        ("5090 D 24G", "rtx-5090d-v2"),
        ("RTX 3050 6G", "rtx-3050-6g"),
        # Jetson.
        ("Jetson AGX Orin", "jetson-agx-orin-64g"),
        ("AGX Orin 64GB", "jetson-agx-orin-64g"),
        ("AGX Orin 32G", "jetson-agx-orin-32g"),
        ("Jetson AGX Orin 32GB", "jetson-agx-orin-32g"),
        ("Orin Nano", "jetson-orin-nano-8g"),
        ("Jetson Orin Nano 8GB", "jetson-orin-nano-8g"),
        ("orin nano super", "jetson-orin-nano-super-8g"),
        # Huawei Ascend.
        ("昇腾910B", "ascend-910b3"),
        ("Ascend 910B", "ascend-910b3"),
        ("华为910B", "ascend-910b3"),
        ("910B2", "ascend-910b2"),
        ("910B 32G", "ascend-910b4"),
        # Intel.
        ("A770", "arc-a770-16g"),
        ("A770 16G", "arc-a770-16g"),
        ("A770 8G", "arc-a770-8g"),
        ("Arc A770 8GB", "arc-a770-8g"),
        ("B580", "arc-b580"),
        ("Arc B580 12GB", "arc-b580"),
        ("Arc Pro B60", "arc-pro-b60"),
        ("B60 24G", "arc-pro-b60"),
        ("英特尔B60", "arc-pro-b60"),
        # AMD.
        ("MI50", "mi50-16g"),
        ("mi50 32g", "mi50-32g"),
        ("Instinct MI60", "mi60"),
        ("R9700", "radeon-ai-pro-r9700"),
        ("Radeon AI PRO R9700", "radeon-ai-pro-r9700"),
        ("R9700 32G", "radeon-ai-pro-r9700"),
        ("RX 5500 XT", "rx-5500-xt"),
        ("5500xt 4g", "rx-5500-xt"),
        ("6600XT", "rx-6600-xt"),
        ("RX 6600 XT 8GB", "rx-6600-xt"),
        # China datacenter NVIDIA.
        ("L20", "l20"),
        ("英伟达L20", "l20"),
        ("L20 48G", "l20"),
        ("H20", "h20"),
        ("H20 96G", "h20"),
        ("英伟达H20", "h20"),
        ("H20 141G", "h20-141g"),
        ("H20 141GB", "h20-141g"),
        # RTX PRO 6000 Blackwell editions.
        ("RTX PRO 6000", "rtx-pro-6000-blackwell"),
        ("RTX PRO 6000 Workstation", "rtx-pro-6000-blackwell"),
        ("RTX PRO 6000 Server", "rtx-pro-6000-blackwell-server"),
        ("RTX PRO 6000 服务器版", "rtx-pro-6000-blackwell-server"),
        ("PRO 6000 Max-Q", "rtx-pro-6000-blackwell-max-q"),
        # Unified-memory boxes.
        ("DGX Spark", "dgx-spark-gb10"),
        ("GB10", "dgx-spark-gb10"),
        ("AI MAX+ 395", "ryzen-ai-max-395"),
        ("395", "ryzen-ai-max-395"),
        ("Strix Halo", "ryzen-ai-max-395"),
        ("锐龙AI Max+ 395", "ryzen-ai-max-395"),
        # Apple Max chips: the bare name is the full chip; a size only the binned chip ships picks it.
        ("M4 Max", "apple-m4-max-40c"),
        ("M4 Max 64G", "apple-m4-max-40c"),
        ("m4 max 36g", "apple-m4-max-32c"),
        ("M3 Max", "apple-m3-max-40c"),
        ("M3 Max 96G", "apple-m3-max-30c"),
    ],
)
def test_named_cards_resolve(catalog: Catalog, typed: str, expected: str) -> None:
    res = resolve_gpu(typed, catalog)
    assert res.best_id == expected, f"{typed!r} resolved to {res.best_id}, expected {expected}"
    assert res.confident, f"{typed!r} -> {expected} should be a sure reading"


@pytest.mark.parametrize(
    "number", ["3050", "3060", "3070", "3080", "4060", "4070", "4080", "4090", "5070", "5080", "5090"]
)
def test_bare_number_stays_the_desktop_card(catalog: Catalog, number: str) -> None:
    # A laptop row must never swallow the desktop name: "4090" alone is the desktop card.
    for typed in (number, f"RTX {number}", f"{number}显卡"):
        res = resolve_gpu(typed, catalog)
        assert res.best_id is not None and not res.best_id.endswith("-laptop"), f"{typed!r} -> {res.best_id}"


def _laptops(gpus: list[Gpu]) -> list[Gpu]:
    return [g for g in gpus if g.id.endswith("-laptop")]


def test_laptop_rows_are_marked_and_not_faster_than_the_desktop_card(gpus: list[Gpu]) -> None:
    laptops = _laptops(gpus)
    assert len(laptops) >= 12
    bad: list[str] = []
    for g in laptops:
        if g.form != "laptop":
            bad.append(f"{g.id}: form must be 'laptop' (the engine tells laptops apart by it)")
        if "Laptop GPU" not in g.name:
            bad.append(f"{g.id}: name should be NVIDIA's '... Laptop GPU'")
        if g.tdp_w is None or g.tdp_w > 175:
            bad.append(f"{g.id}: tdp_w {g.tdp_w} is not a laptop TGP (max of the range, <= 175 W)")
        number = g.id.removeprefix("rtx-").removesuffix("-laptop")
        desktops = [d for d in gpus if d.id.startswith(f"rtx-{number}") and d.form != "laptop"]
        # Ampere laptops can out-bus a cut-down desktop variant (laptop 3060: 192-bit vs the 3060 8GB's
        # 128-bit), so compare with the fastest desktop card of that number.
        if desktops and g.bandwidth_gbs > max(d.bandwidth_gbs for d in desktops):
            bad.append(f"{g.id}: bandwidth {g.bandwidth_gbs} above every desktop {number}")
    assert not bad, "\n".join(bad)


def test_framework_limits_are_said_where_cuda_does_not_run(gpus: list[Gpu]) -> None:
    # The reply quotes notes; a card without CUDA must say which runtime it uses instead.
    def check(g: Gpu) -> str | None:
        if g.vendor == "Huawei" and "CANN" not in g.notes:
            return "Ascend notes must name the CANN backend"
        if g.vendor == "Intel" and g.arch_family != "gaudi" and "SYCL" not in g.notes:
            return "Intel Arc notes must name SYCL/Vulkan"
        if g.gfx_target == "gfx906" and g.segment == "datacenter" and "Vulkan" not in g.notes:
            return "gfx906 (MI50/MI60) notes must say ROCm dropped it and Vulkan works"
        return None

    bad = _problems(gpus, check)
    assert not bad, "\n".join(bad)


def test_every_vendor_has_a_backend_choice(catalog: Catalog, gpus: list[Gpu]) -> None:
    # speed.toml picks the llama.cpp backend by vendor; a vendor missing there would crash estimates.
    for g in gpus:
        for os_name in ("linux", "windows"):
            assert choose_backend(g, os_name, catalog), f"{g.id}: no backend on {os_name}"
