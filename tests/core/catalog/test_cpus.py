"""catalogs/cpus.toml: spec sanity (bandwidth arithmetic, sources, aliases) and the loader."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from core.catalog.cpu import SIMD_CLASSES, decode_group, memory_kind, prefill_gflops
from core.catalog.loader import CATALOG_DIR, CatalogError, default_catalog, load_catalog
from core.understanding.cpu_words import _CHUNK, _keys

CATALOG = default_catalog()
CPUS = CATALOG.cpus


def test_the_catalog_holds_the_measured_and_the_commonly_named_cpus() -> None:
    measured = {
        "ryzen-9-7950x", "ryzen-9-5950x", "ryzen-7-7700x", "ryzen-7-8840u", "core-i9-13900k",
        "core-i9-14900k", "core-i7-1165g7", "xeon-gold-6138", "xeon-platinum-8480", "epyc-9355",
        "epyc-9654", "threadripper-pro-7975wx", "threadripper-pro-7965wx", "xeon-gold-6454s",
        "xeon-gold-6430", "core-i9-13900hk", "core-i9-10900x", "ryzen-7-7800x3d", "ryzen-5-3500",
        "xeon-e5-2697a-v4", "threadripper-3970x",
    }  # fmt: skip
    assert measured <= set(CPUS)
    assert 60 <= len(CPUS) <= 120
    assert {c.segment for c in CPUS.values()} == {"desktop", "hedt", "server", "laptop"}


@pytest.mark.parametrize(
    ("cpu_id", "gbs"),
    [
        ("ryzen-9-7950x", 83.2),  # 2 x 5200 x 8
        ("epyc-9654", 460.8),  # 12 x 4800 x 8
        ("epyc-9355", 576.0),  # 12 x 6000 x 8
        ("xeon-gold-6138", 127.968),  # 6 x 2666 x 8
        ("xeon-platinum-8480", 307.2),  # 8 x 4800 x 8
        ("threadripper-pro-7975wx", 332.8),  # 8 x 5200 x 8
        ("core-i7-1165g7", 68.256),  # LPDDR4X-4266 on a 128-bit bus: 2 x 64-bit
    ],
)
def test_peak_bandwidth_is_channels_times_speed_times_eight(cpu_id: str, gbs: float) -> None:
    assert CPUS[cpu_id].peak_bandwidth_gbs() == pytest.approx(gbs)


def test_every_entry_is_sourced_and_plausible() -> None:
    for cpu in CPUS.values():
        assert re.match(r"https://\S+\.\S+", cpu.source), cpu.id
        assert cpu.cores <= cpu.threads <= 2 * cpu.cores, cpu.id
        assert 0.4 <= cpu.base_ghz <= cpu.boost_ghz <= 6.2, cpu.id
        assert 0 <= cpu.e_cores < cpu.cores, cpu.id
        assert (cpu.e_cores > 0) == (cpu.e_core_flop_per_cycle > 0), cpu.id
        assert cpu.flop_per_cycle in (16, 32, 64), cpu.id  # 16: an all-E-core part (N100)
        assert cpu.simd in SIMD_CLASSES, cpu.id
        assert cpu.year is not None and 2015 <= cpu.year <= 2026, cpu.id
        kinds = [memory_kind(m) for m in cpu.memory]  # raises on a malformed "DDR5-5600"
        assert all(1600 <= mt_s <= 8533 for _, mt_s in kinds), cpu.id
        # Desktops and laptops have two 64-bit channels (the N100 one); HEDT 4 or 8; servers 4, 6, 8, 12.
        allowed = {"desktop": {2}, "laptop": {1, 2}, "hedt": {4, 8}, "server": {4, 6, 8, 12}}[cpu.segment]
        assert cpu.channels in allowed, cpu.id
        assert (cpu.max_sockets == 2) == (cpu.segment == "server"), cpu.id


def test_one_microarchitecture_one_simd_class_and_flop_rate() -> None:
    by_arch: dict[str, set[tuple[str, int]]] = {}
    for cpu in CPUS.values():
        by_arch.setdefault(cpu.arch, set()).add((cpu.simd, cpu.flop_per_cycle))
    assert {arch: v for arch, v in by_arch.items() if len(v) > 1} == {}
    assert CPUS["xeon-platinum-8480"].simd == "amx" and CPUS["ryzen-9-7950x"].simd == "avx512_bf16"
    assert CPUS["core-i9-14900k"].simd == "avx2" and CPUS["xeon-gold-6138"].simd == "avx512"


def test_ids_names_and_aliases_are_unique_across_cpus() -> None:
    owners: Counter[str] = Counter()
    for cpu in CPUS.values():
        for key in {"".join(_CHUNK.findall(k)) for k in _keys(cpu)}:
            owners[key] += 1
    assert [k for k, n in owners.items() if n > 1] == []


def test_unified_memory_chips_stay_gpus() -> None:
    # "Ryzen AI Max+ 395" and Apple M-series are one chip with one memory: cards in gpus.toml.
    names = " ".join(c.name.lower() for c in CPUS.values())
    assert "ai max" not in names and "apple" not in names


def test_efficiency_covers_every_class_with_a_plausible_figure() -> None:
    eff = CATALOG.tables["cpus"]["efficiency"]
    assert 0.0 < float(eff["prefill"]["default"]) < 3.0
    assert 0.0 < float(eff["prefill"]["attention"]) <= 1.0
    assert all(0.05 < float(v) < 3.0 for v in eff["decode"].values())
    for cpu in CPUS.values():
        rate = prefill_gflops(cpu, 1, eff["prefill"], 0.4)
        # Between a 4-core laptop and a 128-core Zen 5 server, never zero or absurd.
        assert 50 < rate < 60_000, cpu.id
    # A second socket adds only the NUMA gain.
    gold = CPUS["xeon-gold-6138"]
    shares = eff["prefill"]
    assert prefill_gflops(gold, 2, shares, 0.4) == pytest.approx(1.4 * prefill_gflops(gold, 1, shares, 0.4))


def test_decode_groups_by_segment_and_memory_kind() -> None:
    assert decode_group(CPUS["ryzen-9-7950x"], "DDR5") == "desktop_ddr5"
    assert decode_group(CPUS["ryzen-7-8840u"], "LPDDR5X") == "laptop_lpddr"
    assert decode_group(CPUS["epyc-7763"], "DDR4") == "server_ddr4"


def test_a_bad_entry_names_the_file_and_the_entry(tmp_path: Path) -> None:
    shutil.copytree(CATALOG_DIR, tmp_path / "catalogs")
    path = tmp_path / "catalogs" / "cpus.toml"
    path.write_text(path.read_text(encoding="utf-8").replace("cores = 16\n", 'cores = "many"\n', 1))
    with pytest.raises(CatalogError, match=r"cpus\.toml: .*cores"):
        load_catalog(tmp_path / "catalogs")


def test_a_catalog_without_cpus_loads_with_none(tmp_path: Path) -> None:
    shutil.copytree(CATALOG_DIR, tmp_path / "catalogs")
    (tmp_path / "catalogs" / "cpus.toml").unlink()
    assert load_catalog(tmp_path / "catalogs").cpus == {}


def test_platform_rows_name_a_catalogued_typical_part_and_cite_a_source() -> None:
    from core.catalog.cpu import platforms

    catalog = CATALOG
    rows = platforms(catalog.tables["cpus"].get("platform", []))
    assert len(rows) >= 10
    for row in rows:
        assert row.typical in catalog.cpus, row.id
        assert row.source.startswith("https://"), row.id
        re.compile(row.pattern)
