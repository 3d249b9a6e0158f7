"""Build the `Setup` an estimate runs on: the card, how many, its memory, the OS and the host.

Every value the user did not give gets a sensible default (see `memory.default_os` and the host
presets in catalogs/hosts.toml); the estimate states each assumption in its notes.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from core.catalog.gpu import Gpu
from core.catalog.loader import Catalog
from core.estimator.estimate import Host, Setup
from core.estimator.memory import default_os

OS_NAMES = ("linux", "linux_desktop", "windows", "macos")


class SetupError(ValueError):
    """The setup asked for cannot exist (e.g. macOS on a GeForce card); message is user-facing."""


@cache
def _hosts(catalog: Catalog) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    table = catalog.tables.get("hosts", {})
    return {h["id"]: h for h in table.get("host", [])}, dict(table.get("defaults", {}))


def default_host(gpu: Gpu, catalog: Catalog, ram_gib: float | None = None) -> Host:
    hosts, defaults = _hosts(catalog)
    preset = hosts.get(defaults.get(gpu.segment, "ddr4-2ch")) or next(iter(hosts.values()), None)
    if gpu.unified_memory or preset is None:
        # Unified memory: the "host" is the same memory; offload has nowhere else to go.
        return Host(ram_gib or 0.0, gpu.bandwidth_gbs, "unified")
    return Host(float(ram_gib or preset["default_ram_gib"]), float(preset["bandwidth_gbs"]), preset["id"])


def build_setup(
    gpu: Gpu,
    catalog: Catalog,
    count: int = 1,
    memory_gib: float | None = None,
    os_name: str | None = None,
    ram_gib: float | None = None,
) -> Setup:
    if count < 1 or count > 64:
        raise SetupError(f"card count must be between 1 and 64, not {count}")
    os_resolved = os_name or default_os(gpu)
    if os_resolved == "mac":
        os_resolved = "macos"
    if os_resolved not in OS_NAMES:
        raise SetupError(f"unknown OS {os_name!r}: use linux, windows or macos")
    # A Mac chip runs macOS and a discrete card is not driven from macOS: rather than refuse a
    # request that names the wrong OS (scripts often pass one OS for everything), use the one
    # the hardware runs; the answer's assumptions line shows it.
    if gpu.vendor == "Apple":
        os_resolved = "macos"
    elif os_resolved == "macos":
        os_resolved = "linux"
    memory = float(memory_gib or gpu.memory_gib)
    if memory <= 0 or memory > 4096:
        raise SetupError(f"memory size {memory_gib} GiB is not plausible")
    if gpu.unified_memory:
        count = 1
    host = default_host(gpu, catalog, ram_gib if not gpu.unified_memory else memory)
    return Setup(gpu, count, memory, os_resolved, host, os_assumed=os_name is None)
