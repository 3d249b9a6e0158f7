"""Consistency checks for catalogs/gpus.toml and catalogs/hosts.toml.

Every failure names the GPU id and the field, so a bad edit points straight at the row to fix.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from core.catalog.gpu import Gpu
from core.catalog.loader import Catalog, load_catalog

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


def _problems(gpus: list[Gpu], check) -> list[str]:
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
def hosts(catalog: Catalog) -> dict:
    assert "hosts" in catalog.tables, "catalogs/hosts.toml missing"
    return catalog.tables["hosts"]


def test_host_bandwidth_is_theoretical(hosts: dict) -> None:
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


def test_host_defaults_point_at_hosts(hosts: dict) -> None:
    ids = {h["id"] for h in hosts["host"]}
    defaults = hosts["defaults"]
    for segment in ("consumer", "workstation", "datacenter"):
        assert defaults.get(segment) in ids, f"hosts.toml [defaults].{segment} must name a host id"
    unknown = {k: v for k, v in defaults.items() if v not in ids}
    assert not unknown, f"hosts.toml [defaults] names unknown hosts: {unknown}"
