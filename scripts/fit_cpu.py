"""Fit the CPU efficiencies of catalogs/cpus.toml [efficiency] on the CPU-only measured rows (issue 11).

    .venv/bin/python scripts/fit_cpu.py [--write] [--rows]

The CPU-only rows of the three measurement files (read and asked exactly as
scripts/bench_accuracy_setups.py asks them) whose `gpu` column or notes name a CPU of
catalogs/cpus.toml are priced on that CPU. Two kinds of number are fitted, each as the median ratio
measured / estimated (so the median error of the group is centred), on the TRAIN split only
(catalogs/measurements/holdout.toml lists the held-out sources):
- prefill: the share of the CPU's FP32 vector peak (cores x clock x FLOP/cycle) llama.cpp's CPU
  kernels reach, per SIMD class (avx2 / avx512 / avx512_vnni / avx512_bf16 / amx); a class no train
  row covers gets the pooled figure (`default`);
- decode: a multiplier on the host bandwidth the speed model already reaches, per segment and memory
  kind ("desktop_ddr5", "server_ddr4", ...); a group no train row covers gets `default`.
Printed: median absolute % error of decode and prefill, before (no CPU named: the preset host and the
one [host] cpu_prefill_gflops) and after, in-sample (train rows, fitted on them), leave-one-CPU-out
(each CPU's train rows priced with a fit that never saw that CPU) and held-out (held-out rows, fit on
train). `--write` puts the fitted figures into catalogs/cpus.toml [efficiency.*]; `--rows` lists the rows.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_accuracy_setups as setups  # noqa: E402

from core.catalog.cpu import decode_group  # noqa: E402
from core.catalog.loader import Catalog, default_catalog  # noqa: E402
from core.understanding.cpu_words import _family_mention, find_cpus  # noqa: E402

CPUS_TOML = setups.REPO / "catalogs" / "cpus.toml"
PHASES = ("decode", "prefill")
ITERATIONS = 3  # decode is not exactly linear in the multiplier (compute and overhead terms): iterate
MIN_ROWS = 1  # a group with fewer train rows gets the pooled figure (leave-one-CPU-out shows the cost)
# ik_llama.cpp is priced as llama.cpp (bench_accuracy_setups.PRICED_AS) but its CPU kernels prefill
# 1.7-3.5x faster than llama.cpp's on the same box (the paired 7950X rows of ik_llama.cpp discussion
# 758): fitting on both would centre the figure between two engines and fit neither. The fit takes
# the other rows; the error table shows both.
NOT_FITTED = ("ik_llama.cpp",)
ATTENTION_GRID = (
    0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.8, 1.0,
)  # fmt: skip
# Mainline rows measured with the CPU flash-attention kernel llama.cpp replaced in 2026-01 (PR 19012,
# "ggml-cpu: Use tiled FA for prompt-processing": the old one was a vector kernel, 3.9x slower at
# d16384 on gpt-oss-20b). They are scored, but the attention share is fitted on the kernels people
# run now (the tiled FA, or no FA: the GEMM path).
PRE_TILED_FA_SOURCES = ("github.com/ikawrakow/ik_llama.cpp/discussions/758",)


@dataclasses.dataclass(frozen=True)
class CpuRow:
    row: setups.Measured
    cpu_id: str
    held_out: bool
    family_only: bool = False  # the CPU is a family word's typical part ("16 vCPU Xeon"): not fitted on

    @property
    def phase(self) -> str:
        return self.row.phase


Efficiency = dict[str, dict[str, float]]


def cpu_rows(catalog: Catalog) -> list[CpuRow]:
    """The scorable CPU-only rows that name a catalog CPU."""
    held = setups.load_holdout()
    out = []
    for m in setups.load_all(setups.DEFAULT_CSVS):
        if m.setup != "CPU only" or m.flagged or m.phase not in PHASES:
            continue
        cpu_id = setups.row_cpu(m)
        if cpu_id is None or cpu_id not in catalog.cpus:
            continue
        out.append(CpuRow(m, cpu_id, setups.source_key(m.source) in held, _family_only(m, catalog)))
    return out


def _family_only(m: setups.Measured, catalog: Catalog) -> bool:
    """The row names no catalog CPU, only a family ("AWS c5.4xlarge, 16 vCPU Xeon" -> the family's
    typical part): priced like a user who wrote that, but its figure says nothing of that part."""
    return all(find_cpus(t, catalog) == _family_mention(t, catalog) for t in (m.gpu, m.notes))


def with_efficiency(catalog: Catalog, eff: Efficiency) -> Catalog:
    """The catalog with other [efficiency] figures (a new object: per-catalog caches start fresh)."""
    cpus = {**catalog.tables["cpus"], "efficiency": eff}
    return dataclasses.replace(catalog, tables={**catalog.tables, "cpus": cpus})


def estimates(rows: Sequence[CpuRow], catalog: Catalog, named: bool = True) -> dict[int, float]:
    """Estimated mid tok/s per row (by index); `named=False` prices them as before the CPU was read."""
    saved = setups.row_cpu
    if not named:
        setups.row_cpu = lambda row: None
    try:
        out = {}
        for i, r in enumerate(rows):
            got = setups.ask(r.row, "train", catalog)
            if got.scored and got.mid > 0:
                out[i] = got.mid
        return out
    finally:
        setups.row_cpu = saved


def _group(r: CpuRow, catalog: Catalog) -> str:
    cpu = catalog.cpus[r.cpu_id]
    if r.phase == "prefill":
        return cpu.simd
    host = r.row.host
    kind = (host.ram_type or cpu.default_memory[0]).split("-")[0].upper()
    return decode_group(cpu, kind)


def _ratios(rows: Sequence[CpuRow], catalog: Catalog, eff: Efficiency) -> dict[tuple[str, str], list[float]]:
    """measured / estimated per (phase, group); prefill from rows without depth (attention apart)."""
    est = estimates(rows, with_efficiency(catalog, eff))
    ratios: dict[tuple[str, str], list[float]] = defaultdict(list)
    for i, r in enumerate(rows):
        if i in est and not (r.phase == "prefill" and r.row.depth > 0):
            ratios[(r.phase, _group(r, catalog))].append(r.row.tps / est[i])
    return ratios


def _scaled(old: dict[str, float], ratios: dict[str, list[float]]) -> dict[str, float]:
    """Each group's figure times its median ratio; `default` is the median of the groups' figures
    (one vote a group, so the CPU with most rows does not set it for the others)."""
    new = {
        g: old.get(g, old["default"]) * statistics.median(xs)
        for g, xs in ratios.items()
        if len(xs) >= MIN_ROWS
    }
    new["default"] = statistics.median(new.values()) if new else old["default"]
    return {**{k: v for k, v in old.items() if k == "attention" or k.startswith("engine/")}, **new}


def _d0_sibling(r: CpuRow, rows: Sequence[CpuRow]) -> int | None:
    """The index of the row of the same sweep at depth 0 (same source, CPU, model, quant, framework
    and prompt), or None."""
    m = r.row
    for i, o in enumerate(rows):
        n = o.row
        if n.depth == 0 and (n.source, n.model, n.quant, n.framework_raw, n.prompt, n.gpu) == (
            m.source,
            m.model,
            m.quant,
            m.framework_raw,
            m.prompt,
            m.gpu,
        ):
            return i
    return None


def _attention_pairs(rows: Sequence[CpuRow]) -> list[tuple[CpuRow, CpuRow]]:
    """(row at depth, its depth-0 sibling) for the prefill rows the attention share is fitted on:
    not the kernel llama.cpp replaced (PRE_TILED_FA_SOURCES)."""
    pairs = []
    for r in rows:
        if r.phase != "prefill" or r.row.depth == 0:
            continue
        if setups.source_key(r.row.source) in PRE_TILED_FA_SOURCES and r.row.framework == "llama.cpp":
            continue
        j = _d0_sibling(r, rows)
        if j is not None:
            pairs.append((r, rows[j]))
    return pairs


def _attention_share(rows: Sequence[CpuRow], catalog: Catalog, eff: Efficiency) -> float:
    """The share of the matrix rate CPU attention reaches: the grid value with the least median error
    of the slowdown with depth (pp@dN / pp@d0, estimated against measured, each row against its own
    sweep's depth-0 row, so the CPU's matmul rate cancels); none: 1.0, the matrix rate."""
    pairs = _attention_pairs(rows)
    if not pairs:
        return 1.0
    flat = [x for pair in pairs for x in pair]
    best: tuple[float, float] = (math.inf, 1.0)
    for share in ATTENTION_GRID:
        trial = {**eff, "prefill": {**eff["prefill"], "attention": share}}
        est = estimates(flat, with_efficiency(catalog, trial))
        errs = [
            abs((est[2 * k] / est[2 * k + 1]) / (deep.row.tps / d0.row.tps) - 1)
            for k, (deep, d0) in enumerate(pairs)
            if 2 * k in est and 2 * k + 1 in est
        ]
        if errs:
            best = min(best, (statistics.median(errs), share))
    return best[1]


# Skylake-SP's AVX-512 has no VNNI: an int8 dot product takes vpmaddubsw + vpmaddwd + vpaddd where
# VNNI's vpdpbusd is one instruction, about half the int8 rate in practice. No train row covers the
# class, so it is priced from its VNNI sibling's fitted share rather than the pooled default.
NO_VNNI_OF_VNNI = 0.5


def _engine_factors(rows: Sequence[CpuRow], catalog: Catalog, eff: Efficiency) -> dict[str, float]:
    """The "engine/<framework>" factors: median measured / estimated of each NOT_FITTED engine's
    depth-0 prefill rows, priced with the mainline fit (its own kernels' speed-up over llama.cpp's)."""
    picked = [r for r in rows if r.row.framework in NOT_FITTED and r.phase == "prefill" and r.row.depth == 0]
    neutral = {**eff, "prefill": {k: v for k, v in eff["prefill"].items() if not k.startswith("engine/")}}
    est = estimates(picked, with_efficiency(catalog, neutral))
    out = {}
    for fw in NOT_FITTED:
        xs = [picked[i].row.tps / v for i, v in est.items() if picked[i].row.framework == fw]
        if xs:
            out[f"engine/{fw}"] = statistics.median(xs)
    return out


def fit(rows: Sequence[CpuRow], catalog: Catalog, depth_rows: Sequence[CpuRow] | None = None) -> Efficiency:
    """Median measured / estimated per group, iterated from neutral figures (1.0); then the
    attention share on the slowdown with depth of `depth_rows` (default `rows`): ik_llama.cpp's
    sweeps count there, since the ratio cancels its faster matmuls and its CPU FA is tiled too."""
    eff: Efficiency = {"prefill": {"default": 1.0, "attention": 1.0}, "decode": {"default": 1.0}}
    for _ in range(ITERATIONS):
        ratios = _ratios(rows, catalog, eff)
        for phase in PHASES:
            eff[phase] = _scaled(eff[phase], {g: xs for (p, g), xs in ratios.items() if p == phase})
        eff["prefill"]["attention"] = _attention_share(
            rows if depth_rows is None else depth_rows, catalog, eff
        )
    if "avx512" not in eff["prefill"] and "avx512_vnni" in eff["prefill"]:
        eff["prefill"]["avx512"] = eff["prefill"]["avx512_vnni"] * NO_VNNI_OF_VNNI
    eff["prefill"].update(_engine_factors(rows if depth_rows is None else depth_rows, catalog, eff))
    return {phase: {k: round(v, 3) for k, v in sorted(table.items())} for phase, table in eff.items()}


def errors(rows: Sequence[CpuRow], est: dict[int, float], pick: Callable[[CpuRow], bool]) -> dict[str, str]:
    out = {}
    for phase in PHASES:
        errs = [
            abs(est[i] / r.row.tps - 1)
            for i, r in enumerate(rows)
            if i in est and pick(r) and r.phase == phase
        ]
        out[phase] = f"{statistics.median(errs) * 100:5.1f}% ({len(errs):2d})" if errs else "    —     "
    return out


def leave_one_cpu_out(rows: Sequence[CpuRow], catalog: Catalog) -> dict[int, float]:
    """Each train row priced with a fit on the train rows of every other CPU."""
    out: dict[int, float] = {}
    train = [r for r in rows if not r.held_out and r.row.framework not in NOT_FITTED and not r.family_only]
    for cpu_id in sorted({r.cpu_id for r in train}):
        others = [r for r in train if r.cpu_id != cpu_id]
        eff = fit(others, catalog, [r for r in rows if not r.held_out and r.cpu_id != cpu_id])
        mine = [(i, r) for i, r in enumerate(rows) if r.cpu_id == cpu_id and not r.held_out]
        # every row of that CPU (ik_llama.cpp too) priced with the fit that never saw the CPU
        est = estimates([r for _, r in mine], with_efficiency(catalog, eff))
        out.update({mine[j][0]: v for j, v in est.items()})
    return out


BAND_QUANTILES = (0.05, 0.95)
BAND_FLOOR = 0.06  # never narrower than +-6 %, as the GPU bands (fit_calibration.band)


def cpu_bands(rows: Sequence[CpuRow], loco: dict[int, float]) -> dict[str, dict[str, float]]:
    """The range a CPU-only figure carries: quantiles of measured / estimated over the train rows, each
    priced by the fit that never saw its CPU (the llama.cpp-priced rows the fit is for)."""
    out: dict[str, dict[str, float]] = {}
    for phase in ("decode", "prefill"):
        ratios = sorted(
            r.row.tps / loco[i]
            for i, r in enumerate(rows)
            if i in loco and r.phase == phase and not r.held_out and r.row.framework not in NOT_FITTED
        )
        if len(ratios) < 5:
            continue
        lo, hi = (ratios[round(q * (len(ratios) - 1))] for q in BAND_QUANTILES)
        out[phase] = {"low": round(min(lo, 1 - BAND_FLOOR), 3), "high": round(max(hi, 1 + BAND_FLOOR), 3)}
    return out


EXPLAINED = (
    "# prefill.<simd>: share of the CPU's FP32 vector peak a CPU prefill reaches (int8 / bf16 kernels go",
    "# past 1 where they beat FP32 FMA); prefill.attention: share of that rate attention at depth runs at;",
    "# decode.<segment>_<memory>: multiplier on the host bandwidth the speed model reaches CPU only;",
    "# default: a class / group no train row covers (the median of the fitted ones);",
    "# band.<phase>: the range a CPU-only figure on a named CPU carries (leave-one-CPU-out, 5-95 %).",
)


def _toml_key(key: str) -> str:
    """A bare TOML key, or a quoted one ("engine/ik_llama.cpp")."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else f'"{key}"'


def write(
    eff: Efficiency, summary: list[str], bands: dict[str, dict[str, float]], path: Path = CPUS_TOML
) -> None:
    """Replace the [efficiency.*] tables of cpus.toml (everything from [efficiency] to the first [[cpu]])."""
    text = path.read_text(encoding="utf-8")
    start, end = text.index("[efficiency]\n"), text.index("[[cpu]]")
    lines = ["[efficiency]", *(f"# {s}" for s in summary), *EXPLAINED, ""]
    for phase in ("prefill", "decode"):
        lines.append(f"[efficiency.{phase}]")
        lines += [f"{_toml_key(k)} = {v}" for k, v in eff[phase].items()]
        lines.append("")
    for phase, band in bands.items():
        lines += [f"[efficiency.band.{phase}]", f"low = {band['low']}", f"high = {band['high']}", ""]
    path.write_text(text[:start] + "\n".join(lines) + "\n" + text[end:], encoding="utf-8")


def _print_rows(rows: Sequence[CpuRow], before: dict[int, float], after: dict[int, float]) -> None:
    for i, r in enumerate(rows):
        m = r.row
        print(
            f"  {'held' if r.held_out else 'train'} {m.phase:<7} {r.cpu_id:<22} {m.model[:24]:<24} "
            f"{m.quant[:10]:<10} "
            f"d={m.depth:<6} p={m.prompt:<5} measured {m.tps:8.2f} before {before.get(i, 0):8.2f} "
            f"after {after.get(i, 0):8.2f}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="write the fitted figures into catalogs/cpus.toml")
    ap.add_argument("--rows", action="store_true", help="list every row with its before / after figure")
    args = ap.parse_args(argv)
    catalog = default_catalog()
    rows = cpu_rows(catalog)
    train = [r for r in rows if not r.held_out]
    eff = fit([r for r in train if r.row.framework not in NOT_FITTED and not r.family_only], catalog, train)
    before = estimates(rows, catalog, named=False)
    after = estimates(rows, with_efficiency(catalog, eff))
    loco = leave_one_cpu_out(rows, catalog)
    bands = cpu_bands(rows, loco)
    cpus = sorted({r.cpu_id for r in train})
    print(
        f"CPU-only rows naming a catalog CPU: {len(rows)} "
        f"({len(train)} train, {len(rows) - len(train)} held out)"
    )
    print(f"train CPUs: {', '.join(cpus)}; fitted without {', '.join(NOT_FITTED)} rows")
    print(f"fitted: {eff}")
    print(f"bands (leave-one-CPU-out, 5-95 %): {bands}")
    table: list[tuple[str, dict[str, str]]] = []
    for subset, keep in (
        ("llama.cpp-priced rows", lambda r: r.row.framework not in NOT_FITTED),
        ("all rows", None),
    ):
        print(f"{'median |est/measured - 1| (rows), ' + subset:<56} {'decode':>12} {'prefill':>12}")
        for label, est, held in (
            ("in-sample (train), before", before, False),
            ("in-sample (train), after", after, False),
            ("leave-one-CPU-out (train), after", loco, False),
            ("held-out, before", before, True),
            ("held-out, after (fit on train)", after, True),
        ):
            e = errors(rows, est, lambda r, h=held, k=keep: r.held_out == h and (k is None or k(r)))
            table.append((f"{subset}, {label}", e))
            print(f"  {label:<54} {e['decode']:>12} {e['prefill']:>12}")
    if args.rows:
        _print_rows(rows, before, after)
    if args.write:
        summary = [
            f"{label}: decode {e['decode'].strip()}, prefill {e['prefill'].strip()}" for label, e in table
        ]
        summary.insert(
            0, f"scripts/fit_cpu.py on {len(train)} train rows ({', '.join(cpus)}); median error (rows):"
        )
        write(eff, [re.sub(r"\s+", " ", s) for s in summary], bands)
        print(f"wrote {CPUS_TOML}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
