"""A CPU in the catalog (catalogs/cpus.toml): what a CPU-only run, or the CPU side of an offload, runs on.

The CPU gives the host its memory when the user says nothing about their RAM (type, speed, channels)
and the matrix rate a CPU prefill runs at; the fitted efficiencies in cpus.toml [efficiency] turn the
spec figures into what llama.cpp reaches.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

CpuVendor = Literal["Intel", "AMD"]
# desktop: AM4/AM5/LGA1200/1700/1851; hedt: Threadripper, Xeon W, X299; server: EPYC, Xeon Scalable / E5.
CpuSegment = Literal["desktop", "hedt", "server", "laptop"]
# Ordered weakest first: the widest extension llama.cpp's CPU kernels use on the chip.
Simd = Literal["avx2", "avx512", "avx512_vnni", "avx512_bf16", "amx"]
SIMD_CLASSES: tuple[Simd, ...] = ("avx2", "avx512", "avx512_vnni", "avx512_bf16", "amx")

_MEMORY = re.compile(r"^((?:LP)?DDR\dX?)-(\d{4})$")


@dataclass(frozen=True, slots=True)
class Cpu:
    id: str  # stable catalog id, e.g. "ryzen-9-7950x"
    name: str  # "AMD Ryzen 9 7950X"
    aliases: tuple[str, ...]  # what people type: "7950X", "R9 7950X"
    vendor: CpuVendor
    segment: CpuSegment
    arch: str  # microarchitecture: "Zen 4", "Sapphire Rapids"
    cores: int  # per socket, all kinds
    threads: int
    base_ghz: float
    boost_ghz: float
    memory: tuple[str, ...]  # "DDR5-5200", ...: supported types at their top speed, default first
    channels: int  # 64-bit memory channels per socket
    simd: Simd
    flop_per_cycle: int  # peak FP32 FMA FLOP per (P-)core per cycle
    e_cores: int = 0  # efficiency cores among `cores` (Intel hybrid)
    e_core_flop_per_cycle: int = 0
    max_sockets: int = 1
    year: int | None = None
    notes: str = ""
    source: str = ""

    @property
    def default_memory(self) -> tuple[str, int]:
        """("DDR5", 5200): the memory a box with this CPU runs when its owner doesn't say."""
        return memory_kind(self.memory[0])

    def memory_speed(self, kind: str) -> int | None:
        """The top MT/s the CPU supports for a memory type ("DDR4"), None when it takes no such RAM."""
        for text in self.memory:
            k, mt_s = memory_kind(text)
            if k == kind:
                return mt_s
        return None

    def peak_bandwidth_gbs(self, sockets: int = 1) -> float:
        """channels x MT/s x 8 bytes per socket at the default memory, decimal GB/s (no NUMA discount)."""
        return self.channels * self.default_memory[1] * 8 / 1000 * sockets

    @property
    def peak_gflops(self) -> float:
        """FP32 vector peak of one socket at the mean of base and boost clock: all-core vector clocks
        sit between the two (servers near base, desktops near boost)."""
        clock = (self.base_ghz + self.boost_ghz) / 2
        p_cores = self.cores - self.e_cores
        return clock * (p_cores * self.flop_per_cycle + self.e_cores * self.e_core_flop_per_cycle)


def memory_kind(text: str) -> tuple[str, int]:
    """("LPDDR5X", 7500) from "LPDDR5X-7500"."""
    m = _MEMORY.match(text)
    if m is None:
        raise ValueError(f"memory {text!r} is not like DDR5-5600")
    return m.group(1), int(m.group(2))


def decode_group(cpu: Cpu, ram_type: str) -> str:
    """The [efficiency.decode] key a CPU-only decode is scaled by: its segment and memory generation
    ("desktop_ddr5", "server_ddr4", "laptop_lpddr")."""
    kind = "lpddr" if ram_type.startswith("LP") else ram_type.lower()[:4]
    return f"{cpu.segment}_{kind}"


def prefill_gflops(cpu: Cpu, sockets: int, shares: Mapping[str, float], numa_gain: float) -> float:
    """The matrix rate a CPU-only prefill runs at: the vector peak x the fitted share its SIMD class
    reaches (`shares`: cpus.toml [efficiency.prefill]); a second socket adds only what NUMA-blind
    threads gain."""
    share = float(shares.get(cpu.simd, shares.get("default", 0.25)))
    return cpu.peak_gflops * share * (1 + numa_gain * (max(sockets, 1) - 1))


def decode_scale(cpu: Cpu, ram_type: str, scales: Mapping[str, float]) -> float:
    """Multiplier on the host bandwidth a CPU-only decode reaches, by segment and memory kind
    (`scales`: cpus.toml [efficiency.decode]; 1.0, today's figure, for a group no row covers)."""
    return float(scales.get(decode_group(cpu, ram_type), scales.get("default", 1.0)))


@dataclass(frozen=True, slots=True)
class CpuPlatform:
    """A CPU family read by its model numbering (catalogs/cpus.toml [[platform]]): a CPU the catalog
    doesn't list by name is priced as `typical`, the family's catalogued part, and the reply says so."""

    id: str
    family: str  # "EPYC 9004 (Genoa: 12 x DDR5-4800, AVX-512)": what the note names
    pattern: str  # case-blind regex over the typed name, matched as whole words
    typical: str  # a [[cpu]] id
    source: str = ""


def platforms(rows: object) -> tuple[CpuPlatform, ...]:
    """The [[platform]] rows of cpus.toml, typed; a row that isn't a table of strings is an error."""
    if not isinstance(rows, list):
        return ()
    out = []
    for row in rows:
        if not isinstance(row, dict) or not all(isinstance(v, str) for v in row.values()):
            raise ValueError(f"cpus.toml platform row {row!r} is not a table of strings")
        out.append(CpuPlatform(**row))
    return tuple(out)
