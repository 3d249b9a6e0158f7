"""Build the `Setup` an estimate runs on: the card, how many, its memory, the OS and the host.

Every value the user did not give gets a sensible default (see `memory.default_os` and the host
presets in catalogs/hosts.toml); the estimate states each assumption in its notes. A CPU the user
named (catalogs/cpus.toml) stands in for the preset: its memory type, top speed and channels.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import cache

from core.catalog.cpu import Cpu
from core.catalog.gpu import Gpu
from core.catalog.loader import Catalog
from core.catalog.platforms import SETUP_OS_NAMES
from core.catalog.pricing_sections import HostPreset
from core.catalog.sections import sections
from core.estimator.estimate import Host, Setup
from core.estimator.memory import default_os, runs_one_os, server_os

OS_NAMES = SETUP_OS_NAMES  # core/catalog/platforms.py


class SetupError(ValueError):
    """The setup asked for cannot exist (e.g. macOS on a GeForce card); message is user-facing."""


# GiB of RAM per socket for a named CPU whose segment cpus.toml [host_ram] does not list.
_HOST_RAM_FALLBACK_GIB = 64.0


@dataclass(frozen=True, slots=True)
class HostSpec:
    """What the user said about the box around the card (None: not said): its RAM size and type
    ("DDR5-6000"), memory channels per socket, sockets, and the CPU when they named one."""

    ram_gib: float | None = None
    ram_type: str | None = None
    channels: int | None = None
    sockets: int | None = None
    cpu: Cpu | None = None


NO_HOST_SPEC = HostSpec()


@cache
def _hosts(catalog: Catalog) -> tuple[dict[str, HostPreset], dict[str, str]]:
    table = sections(catalog).hosts
    return {h.id: h for h in table.host}, dict(table.defaults)


_RAM_TYPE = re.compile(r"^\s*((?:LP)?DDR\dX?)\s*[- ]?\s*(\d{3,5})?\s*(?:MT/?S|MHZ)?\s*$")


def parse_ram_type(text: str, catalog: Catalog) -> tuple[str, int]:
    """("DDR5", 6000) from "DDR5-6000", "ddr5 6000", "LPDDR5X-8533"; a bare type gets the speed most
    machines of that type run (hosts.toml [ram_types]). SetupError when it is no RAM type."""
    m = _RAM_TYPE.match(text.upper())
    speeds = sections(catalog).hosts.ram_types
    if not m or m.group(1) not in speeds:
        raise SetupError(f"RAM type {text!r} is not like DDR4-3200, DDR5-6000 or LPDDR5X-8533")
    mt_s = int(m.group(2) or speeds[m.group(1)])
    if not 800 <= mt_s <= 12800:
        raise SetupError(f"RAM speed {mt_s} MT/s is not plausible")
    return m.group(1), mt_s


def _preset(gpu: Gpu, catalog: Catalog, ram_gib: float | None = None, cards: int = 1) -> HostPreset | None:
    hosts, defaults = _hosts(catalog)
    # A laptop card sits in a laptop whatever its segment says (hosts.toml [defaults] laptop).
    # A card generation sold only beside DDR5 platforms has its own key ("consumer:blackwell").
    family = f"{gpu.segment}:{gpu.arch_family}"
    key = "laptop" if gpu.form == "laptop" and "laptop" in defaults else family
    key = key if key in defaults else gpu.segment
    # Several desktop cards sit in a box with more RAM than a one-card PC ("consumer:multi"); a
    # preset already sized for the RAM (DDR5, 64 GiB) needs no key of its own.
    multi = f"{gpu.segment}:multi"
    if cards > 1 and multi in defaults and key != "laptop":
        multi_preset = hosts.get(defaults[multi])
        current = hosts.get(defaults.get(key, ""))
        if multi_preset is not None and (
            current is None or current.default_ram_gib < multi_preset.default_ram_gib
        ):
            key = multi
    preset = hosts.get(defaults.get(key, "ddr4-2ch")) or next(iter(hosts.values()), None)
    if preset is not None and ram_gib and ram_gib > preset.max_ram_gib:
        # More RAM than that machine takes: a multi-channel server (hosts.toml [defaults] large_ram).
        preset = hosts.get(defaults.get("large_ram", ""), preset)
    return preset


def default_host(gpu: Gpu, catalog: Catalog, spec: HostSpec = NO_HOST_SPEC, cards: int = 1) -> Host:
    """The box around the card: the preset for its form / segment, with what the user said (`spec`)
    on top. Bandwidth is the peak channels x MT/s x 8 bytes; a second socket counts only as far as a
    NUMA-blind runtime gains from it (hosts.toml [numa]). A named CPU replaces the preset."""
    ram_gib, ram_type, channels, sockets = spec.ram_gib, spec.ram_type, spec.channels, spec.sockets
    if spec.cpu is not None and not gpu.unified_memory:
        return _cpu_host(spec.cpu, catalog, spec)
    preset = _preset(gpu, catalog, ram_gib if ram_type is None and channels is None else None, cards)
    if gpu.unified_memory or preset is None:
        # Unified memory: the "host" is the same memory; offload has nowhere else to go.
        return Host(ram_gib or 0.0, gpu.bandwidth_gbs, "unified")
    ram = float(ram_gib or preset.default_ram_gib)
    stated = bool(ram_gib)  # the size is the user's, not the preset's guess
    if ram_type is None and channels is None and sockets is None:
        return Host(
            ram,
            preset.bandwidth_gbs,
            preset.id,
            preset.ram_type,
            preset.mt_s,
            preset.channels,
            ram_stated=stated,
        )
    kind, mt_s = parse_ram_type(ram_type, catalog) if ram_type else (preset.ram_type, preset.mt_s)
    ch = int(channels or preset.channels)
    n_sockets = _checked(ch, sockets)
    bandwidth = _bandwidth(ch, mt_s, n_sockets, catalog)
    return Host(ram, bandwidth, "custom", kind, mt_s, ch, n_sockets, ram_stated=stated)


def _checked(channels: int, sockets: int | None) -> int:
    if not 1 <= channels <= 24:
        raise SetupError(f"{channels} memory channels is not plausible (1-24 per socket)")
    n_sockets = int(sockets or 1)
    if not 1 <= n_sockets <= 8:
        raise SetupError(f"{n_sockets} sockets is not plausible")
    return n_sockets


def numa_gain(catalog: Catalog) -> float:
    return sections(catalog).hosts.numa.extra_socket_gain


def _bandwidth(channels: int, mt_s: int, sockets: int, catalog: Catalog) -> float:
    return round(channels * mt_s * 8 / 1000 * (1 + numa_gain(catalog) * (sockets - 1)), 1)


def _cpu_host(cpu: Cpu, catalog: Catalog, spec: HostSpec) -> Host:
    """The host a named CPU implies: what the user said, the rest from the CPU (its default memory
    at the top speed it supports, its channels per socket); RAM size by segment (cpus.toml [host_ram])."""
    ram_gib, ram_type, channels, sockets = spec.ram_gib, spec.ram_type, spec.channels, spec.sockets
    if sockets is not None and sockets > cpu.max_sockets:
        raise SetupError(f"{cpu.name} is a single-socket CPU: it can't run {sockets} sockets")
    if ram_type:
        kind, mt_s = parse_ram_type(ram_type, catalog)
        top = cpu.memory_speed(kind)
        if top is not None and not re.search(r"\d{3,5}", ram_type):
            mt_s = top  # a bare "DDR4" on a CPU that takes it: the speed that CPU supports
    else:
        kind, mt_s = cpu.default_memory
    ch = int(channels or cpu.channels)
    n_sockets = _checked(ch, sockets)
    sizes = sections(catalog).cpus.host_ram
    ram = float(ram_gib or sizes.get(cpu.segment, _HOST_RAM_FALLBACK_GIB)) * (n_sockets if not ram_gib else 1)
    bandwidth = _bandwidth(ch, mt_s, n_sockets, catalog)
    return Host(ram, bandwidth, cpu.id, kind, mt_s, ch, n_sockets, cpu=cpu.id, ram_stated=bool(ram_gib))


def build_setup(
    gpu: Gpu,
    catalog: Catalog,
    count: int = 1,
    memory_gib: float | None = None,
    os_name: str | None = None,
    host_spec: HostSpec = NO_HOST_SPEC,
    serving: bool = False,
) -> Setup:
    """The setup of `count` cards of `memory_gib` each (None: the card's) on `os_name` (None: the
    card's usual OS, or a server's: see `_assumed_os`), in the box `host_spec` describes; `serving`:
    the question is about serving (vLLM / SGLang named, or N concurrent users)."""
    if count < 1 or count > 64:
        raise SetupError(f"card count must be between 1 and 64, not {count}")
    os_resolved = os_name or default_os(gpu, catalog)
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
    # Unified memory: the "host" RAM is the card's own memory.
    spec = dataclasses.replace(host_spec, ram_gib=memory) if gpu.unified_memory else host_spec
    host = default_host(gpu, catalog, spec, count)
    server = os_name is None and _is_server(gpu, catalog, count, host, host_spec, serving)
    if server:
        # A server CPU, server RAM, 4+ cards or a serving question: a server, and servers run Linux
        # (the GeForce default of Windows would take the desktop's share of VRAM and rule out
        # vLLM / SGLang / KTransformers).
        os_resolved = server_os(catalog)
    only = runs_one_os(gpu, catalog)
    return Setup(
        gpu, count, memory, os_resolved, host, os_assumed=os_name is None, os_server=server, os_only=only
    )


def build_mixed_setup(
    cards: list[tuple[Gpu, float, int]],
    catalog: Catalog,
    os_name: str | None = None,
    host_spec: HostSpec = NO_HOST_SPEC,
    serving: bool = False,
) -> Setup:
    """Mixed cards, (card, memory GiB, count) each, priced card by card for a llama.cpp layer split:
    the usable memory is the sum of each card's (one card of the mean memory per card gives the same
    sum: what a card keeps back does not depend on its size), each card holds layers in proportion to
    its memory and reads them at its own bandwidth, so a token takes sum(share / bandwidth): the slow
    card's share dominates. Cards are in CUDA's default order, fastest (by bandwidth) first."""
    flat = sorted(
        ((gpu, float(memory or gpu.memory_gib)) for gpu, memory, count in cards for _ in range(count)),
        key=lambda c: -c[0].bandwidth_gbs,
    )
    total = sum(memory for _, memory in flat)
    base = flat[-1][0]  # the slowest card: its kernels and family price the mix
    shares = [(gpu, memory / total) for gpu, memory in flat]
    bandwidth = 1 / sum(share / gpu.bandwidth_gbs for gpu, share in shares)
    fp16 = base.fp16_tflops
    if all(g.fp16_tflops and g.fp16_fp32acc_half_rate == base.fp16_fp32acc_half_rate for g, _ in shares):
        fp16 = 1 / sum(share / (g.fp16_tflops or 1.0) for g, share in shares)
    capabilities = [g.compute_capability for g, _ in flat if g.compute_capability is not None]
    mixed = dataclasses.replace(
        base,
        id="+".join(gpu.id for gpu, _ in flat),
        name=_mix_name(flat),
        aliases=(),
        memory_gib=total / len(flat),
        memory_options_gib=(),
        bandwidth_gbs=round(bandwidth, 1),
        fp16_tflops=fp16,
        compute_capability=min(capabilities) if capabilities else base.compute_capability,
    )
    setup = build_setup(mixed, catalog, len(flat), total / len(flat), os_name, host_spec, serving)
    return dataclasses.replace(setup, mix=tuple((gpu.name, memory) for gpu, memory in flat))


def _mix_name(flat: list[tuple[Gpu, float]]) -> str:
    """ "2× GeForce RTX 3090 + GeForce RTX 3060 12GB": each kind of card once, with its count."""
    counts: dict[str, int] = {}
    for gpu, memory in flat:
        label = gpu.name if memory == gpu.memory_gib else f"{gpu.name} {memory:g}GB"
        counts[label] = counts.get(label, 0) + 1
    return " + ".join(f"{n}× {label}" if n > 1 else label for label, n in counts.items())


def mixable(gpus: list[Gpu]) -> bool:
    """Cards a layer split prices card by card: two or more discrete cards of one vendor."""
    return len(gpus) > 1 and len({g.vendor for g in gpus}) == 1 and not any(g.unified_memory for g in gpus)


def _is_server(gpu: Gpu, catalog: Catalog, count: int, host: Host, spec: HostSpec, serving: bool) -> bool:
    """Whether the box is a server (hosts.toml [os]): a server CPU named, RAM past `server_ram_gib`
    (or more than a desktop takes), `server_cards` cards or more, or a serving question. An Apple
    chip is never one: it runs macOS."""
    if gpu.vendor == "Apple":
        return False
    rules = sections(catalog).hosts.os
    server_cpu = spec.cpu is not None and spec.cpu.segment == "server"
    big_ram = not gpu.unified_memory and (
        host.ram_gib >= rules.server_ram_gib or host.name == _hosts(catalog)[1].get("large_ram")
    )
    return server_cpu or big_ram or count >= rules.server_cards or serving


def is_serving(framework: str | None, users: int | None, catalog: Catalog) -> bool:
    """A serving question: a serving framework named (hosts.toml [os] serving_frameworks), or users."""
    return bool(users) or (framework or "") in sections(catalog).hosts.os.serving_frameworks


def cpu_only_setup(catalog: Catalog, os_name: str | None = None, host_spec: HostSpec = NO_HOST_SPEC) -> Setup:
    """No GPU at all (a valid setup: `estimate --offload cpu` without --gpu): a stand-in card with no
    memory, so every byte is read from system RAM; the host is a desktop's unless the user says (or
    names the CPU: then its memory, and the card's name says which CPU)."""
    cpu, sockets = host_spec.cpu, host_spec.sockets
    name = (
        "CPU only"
        if cpu is None
        else f"CPU only ({f'{sockets}x ' if sockets and sockets > 1 else ''}{cpu.name})"
    )
    host_probe = Gpu(
        id="cpu-only",
        vendor="Intel",
        name=name,
        aliases=(),
        memory_gib=0.0,
        bandwidth_gbs=0.0,
        arch="CPU",
        arch_family="cpu",
        segment="consumer",
    )
    host = default_host(host_probe, catalog, host_spec)
    gpu = dataclasses.replace(host_probe, bandwidth_gbs=host.bandwidth_gbs)
    os_resolved = "linux" if os_name in (None, "macos", "mac") else os_name
    if os_resolved not in OS_NAMES:
        raise SetupError(f"unknown OS {os_name!r}: use linux, windows or macos")
    return Setup(gpu, 1, 0.0, os_resolved, host, os_assumed=os_name is None)
