"""scripts/fit_cpu.py and the CPU mapping of bench_accuracy_setups.py: CPU-only rows priced on their CPU."""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import bench_accuracy_setups as setups  # noqa: E402
import fit_cpu  # noqa: E402

from core.catalog.loader import default_catalog  # noqa: E402

CATALOG = default_catalog()


def _row(gpu: str, notes: str = "", setup: str = "CPU only") -> setups.Measured:
    return setups.Measured(
        file="x.csv", line=2, gpu=gpu, gpu_id="", gpu_count=1, model="Llama-3.1-8B-Instruct",
        model_id="", params_b=8.0, quant="Q4_K_M", backend="CPU", framework="llama.cpp",
        framework_raw="llama.cpp", test="tg", phase="decode", setup=setup, depth=0, prompt=512,
        tps=10.0, ram_gib=None, source="https://example.org", notes=notes,
    )  # fmt: skip


def test_a_row_is_priced_on_the_cpu_it_names() -> None:
    assert setups.row_cpu(_row("CPU only (2x Intel Xeon Gold 6138)")) == "xeon-gold-6138"
    assert setups.row_cpu(_row("NVIDIA RTX 3070", "CPU Only; Ryzen 7 5800X")) == "ryzen-7-5800x"
    assert setups.row_cpu(_row("RTX 5090 32GB + AMD EPYC 9355", setup="expert offload")) == "epyc-9355"
    assert setups.row_cpu(_row("CPU only (Apple M2 Max, ARM NEON cores)")) is None
    assert setups.row_cpu(_row("NVIDIA RTX 4090 + 7950X", setup="fully on GPU")) is None


def test_every_cpu_row_is_asked_with_its_cpu() -> None:
    if not setups.DEFAULT_CSVS[0].exists():
        pytest.skip("../shared/reference is not on this machine")
    rows = fit_cpu.cpu_rows(CATALOG)
    assert len({r.cpu_id for r in rows if not r.held_out}) >= 5
    for r in rows:
        got = setups.ask(r.row, "train", CATALOG)
        assert "CPU" not in got.reason, (r.cpu_id, got.reason)  # the id resolves: no "unknown CPU"


def test_write_replaces_only_the_efficiency_tables(tmp_path: Path) -> None:
    path = tmp_path / "cpus.toml"
    shutil.copy(fit_cpu.CPUS_TOML, path)
    eff = {"prefill": {"amx": 0.5, "default": 0.4, "attention": 0.2}, "decode": {"default": 0.9}}
    bands = {"decode": {"low": 0.7, "high": 1.3}}
    fit_cpu.write(eff, ["a summary line"], bands, path)
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    assert doc["efficiency"] == {**eff, "band": bands}
    assert len(doc["cpu"]) == len(CATALOG.cpus) and doc["socket_words"]["双路"] == 2


def test_cpu_bands_are_the_spread_of_cross_validated_ratios() -> None:
    rows = [fit_cpu.CpuRow(_row("CPU only (AMD Ryzen 9 7950X)"), "ryzen-9-7950x", False) for _ in range(20)]
    loco = {i: 10.0 * (0.8 + 0.02 * i) for i in range(20)}  # measured 10: ratios 1/0.8 .. 1/1.18
    band = fit_cpu.cpu_bands(rows, loco)["decode"]
    assert 0.8 < band["low"] < 1 < band["high"] < 1.3
    assert "prefill" not in fit_cpu.cpu_bands(rows, loco), "no prefill rows: no prefill band"
