"""The catalog's settings files as typed sections, validated once, every default in one place.

`catalogs/*.toml` beyond the four entry lists (GPUs, models, quants, frameworks) hold tables the
modules read: word lists, limits, the calibration's fitted numbers. Each file a module reads is a
frozen dataclass here, validated by pydantic against the dataclass itself (as the loader does for the
entries), so a bad edit fails with the file and field named, and a module reads
`sections(catalog).hub.search["forks"]` instead of a chain of `.get(..., {})` with its own default.
A catalog loaded from a folder without one of these files (a tiny test catalog) gets the section's
defaults. Built once per catalog (and kept in the warm cache with it).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, TypeVar

from core.cache.warm import per_catalog
from core.catalog.hub_limits import HubLimits
from core.catalog.loader import Catalog, CatalogError
from core.catalog.pricing_sections import (
    CalibrationFit,
    ConcurrencySection,
    CpusSection,
    EagleDraftsSection,
    EstimatorSection,
    HostsSection,
    SpeedSection,
    SplitFit,
    SplitModesSection,
)

T = TypeVar("T")

Words = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HubSection:
    """catalogs/hub.toml: the words a model name is compared by, and how the Hub is searched."""

    names: dict[str, Words] = field(default_factory=dict)  # ignore, tools, variant
    search: dict[str, Words] = field(default_factory=dict)  # forks, fork_words
    limits: HubLimits = HubLimits()  # config ranges, the Hub pool, budgets, caches (issue 24)

    def name_words(self, key: str) -> frozenset[str]:
        return frozenset(w.lower() for w in self.names.get(key, ()))

    def search_words(self, key: str) -> frozenset[str]:
        return frozenset(w.lower() for w in self.search.get(key, ()))


@dataclass(frozen=True, slots=True)
class AnchorCalibration:
    """catalogs/anchors.toml [calibration]: how community anchors move an estimate (anchors/calibrate)."""

    prior_strength: float = 3.0
    max_log_ratio: float = 0.693
    factor_min: float = 0.6
    factor_max: float = 1.6
    same_model: float = 1.0
    other_model_max: float = 0.5
    other_model_decay: float = 1.5
    max_params_ratio: float = 4.0
    moe_mismatch: float = 0.5
    same_quant_kind: float = 1.5
    other_count: float = 0.5
    other_framework: float = 0.5
    min_weight: float = 0.02


@dataclass(frozen=True, slots=True)
class AnchorNearest:
    """catalogs/anchors.toml [nearest]: which measured runs are shown as the nearest ones."""

    max_params_ratio: float = 3.0
    same_model_family_bonus: float = 0.2
    same_family_bonus: float = 0.3
    other_vendor_penalty: float = 0.7
    max_distance: float = 2.5
    max_memory_ratio: float = 1.5
    max_bandwidth_ratio: float = 1.5
    other_count_distance: float = 0.2
    max_count_ratio: float = 2.0


@dataclass(frozen=True, slots=True)
class AnchorPublished:
    skip_flags: Words = ()  # published rows carrying one of these flags are not anchors


@dataclass(frozen=True, slots=True)
class AnchorsSection:
    calibration: AnchorCalibration = AnchorCalibration()
    nearest: AnchorNearest = AnchorNearest()
    published: AnchorPublished = AnchorPublished()


@dataclass(frozen=True, slots=True)
class ModelOnlyView:
    """A question naming only a model: the cards and quants its overview shows."""

    cards: Words = ()
    context: int = 32768
    quants: Words = ("Q4_K_M",)


@dataclass(frozen=True, slots=True)
class GpuOnlyView:
    """A question naming only a card: the models its overview shows."""

    models: Words = ()
    quant: str = "Q4_K_M"
    context: int = 8192


@dataclass(frozen=True, slots=True)
class CpuOnlyView:
    """A CPU-only answer: framework notes it drops, and notes it words its own way."""

    hide_notes: frozenset[str] = frozenset()
    say_instead: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ReplySection:
    """catalogs/reply.toml."""

    model_only: ModelOnlyView = ModelOnlyView()
    gpu_only: GpuOnlyView = GpuOnlyView()
    cpu_only: CpuOnlyView = CpuOnlyView()


@dataclass(frozen=True, slots=True)
class SubmitRules:
    """catalogs/submit.toml [submit]: what a /submit is read and checked against."""

    required: Words = ("gpu", "model", "quant", "decode")
    max_count: int = 16
    min_context: int = 128
    max_context: int = 10485760
    default_context: int = 4096
    max_speed: float = 100000.0
    max_memory_gib: float = 4096.0
    min_prefill_tokens: int = 32
    evidence_max_chars: int = 4000
    notes_max_chars: int = 500
    text_max_chars: int = 60000
    read_budget_seconds: float = 2.0
    sentence_max_chars: int = 300
    ceiling_margin: float = 1.15
    tensor_parallel_engines: Words = ()
    speculative_words: Words = ()
    far_low_factor: float = 0.5
    far_high_factor: float = 1.6


@dataclass(frozen=True, slots=True)
class SubmitSection:
    """catalogs/submit.toml."""

    submit: SubmitRules = SubmitRules()
    keys: dict[str, Words] = field(default_factory=dict)  # field -> the names people give it
    backends: dict[str, str] = field(default_factory=dict)  # as tools print them -> backend id
    kv_priced_as: dict[str, str] = field(default_factory=dict)  # unpriced llama.cpp KV types
    llama_ftype: dict[str, str] = field(default_factory=dict)  # llama.cpp file-type name -> quant id


@dataclass(frozen=True, slots=True)
class CommunitySection:
    """catalogs/community.toml: limits of the bot's community features and the outbox worker.
    Kept as mappings: core/commands/context.py BotLimits and core/community/worker.py OutboxSettings
    are the typed readers, with their own defaults for a key the file leaves out."""

    limits: dict[str, Any] = field(default_factory=dict)
    outbox: dict[str, Any] = field(default_factory=dict)
    subscriptions: dict[str, Words] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BackendsSection:
    """catalogs/backends.toml: llama.cpp backends as named, aliased and typed in a question."""

    names: dict[str, str] = field(default_factory=dict)  # id -> display name
    aliases: dict[str, str] = field(default_factory=dict)  # "hip" -> rocm
    words: dict[str, Words] = field(default_factory=dict)  # id -> words of a question
    windows_hip: dict[str, Any] = field(default_factory=dict)  # gfx targets of the Windows HIP build


@dataclass(frozen=True, slots=True)
class CalibrationMeta:
    """What the fitted calibration says about itself (catalogs/calibration.toml [meta]) and a digest
    of the whole table, which names the calibration an estimate came from."""

    rows: int | None = None
    digest: str = ""


@dataclass(frozen=True, slots=True)
class DeployRules:
    """catalogs/deploy.toml [deploy]: the card counts a which-hardware answer gives."""

    counts: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)  # per node 1/2/4/8, then whole nodes
    node_cards: int = 8
    whole_node: Words = ()  # model ids served on a whole node of datacenter cards
    fp8_archs: Words = ("hopper", "blackwell")  # arch families counted at FP8 first
    value_words: Words = ()  # "性价比", "best value": prices aren't known, said plainly

    def deployable(self, count: int) -> int | None:
        """The smallest deployable count of at least `count` (None: more than the largest)."""
        return next((c for c in sorted(self.counts) if c >= count), None)


@dataclass(frozen=True, slots=True)
class DeploySection:
    """catalogs/deploy.toml."""

    deploy: DeployRules = DeployRules()


@dataclass(frozen=True, slots=True)
class Sections:
    hub: HubSection
    anchors: AnchorsSection
    reply: ReplySection
    submit: SubmitSection
    community: CommunitySection
    backends: BackendsSection
    calibration: CalibrationMeta
    socket_words: dict[str, int]  # catalogs/cpus.toml [socket_words]: "双路" -> 2
    cpu_family_words: dict[str, str]  # catalogs/cpus.toml [family_words]: "至强" -> a typical Xeon's id
    # catalogs/cpus.toml [family_words_ddr5]: the same words when the question says DDR5 / 12 channels
    cpu_family_words_ddr5: dict[str, str]
    # catalogs/cpus.toml [assumed]: the CPU a CPU-only question that names none is priced on ("纯cpu")
    cpu_assumed: dict[str, str]
    # What the estimator prices with (core/catalog/pricing_sections.py).
    estimator: EstimatorSection
    speed: SpeedSection
    fit: CalibrationFit  # catalogs/calibration.toml as a whole (`calibration` is what it says of itself)
    concurrency: ConcurrencySection
    hosts: HostsSection
    cpus: CpusSection
    eagle_drafts: EagleDraftsSection
    deploy: DeploySection = DeploySection()
    split_modes: SplitModesSection = SplitModesSection()
    split_fit: SplitFit = SplitFit()


def _typed(kind: type[T], raw: Any, where: str) -> T:
    from pydantic import TypeAdapter, ValidationError  # only when a catalog is validated

    try:
        return TypeAdapter(kind).validate_python(raw or {}, strict=False)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise CatalogError(f"{where}: {problems}") from exc


def _calibration_meta(table: dict[str, Any]) -> CalibrationMeta:
    digest = hashlib.sha256(json.dumps(table, sort_keys=True, default=str).encode()).hexdigest()[:10]
    rows = table.get("meta", {}).get("rows") if isinstance(table.get("meta"), dict) else None
    return CalibrationMeta(rows=int(rows) if isinstance(rows, int | float) else None, digest=digest)


@per_catalog("catalog.sections")
def sections(catalog: Catalog) -> Sections:
    """The typed settings of `catalog` (defaults for a file it lacks)."""
    t = catalog.tables
    return Sections(
        hub=_typed(HubSection, t.get("hub"), "hub.toml"),
        anchors=_typed(AnchorsSection, t.get("anchors"), "anchors.toml"),
        reply=_typed(ReplySection, t.get("reply"), "reply.toml"),
        submit=_typed(SubmitSection, t.get("submit"), "submit.toml"),
        community=_typed(CommunitySection, t.get("community"), "community.toml"),
        backends=_typed(BackendsSection, t.get("backends"), "backends.toml"),
        calibration=_calibration_meta(t.get("calibration", {})),
        socket_words=_typed(dict[str, int], t.get("cpus", {}).get("socket_words"), "cpus.toml socket_words"),
        cpu_family_words=_typed(
            dict[str, str], t.get("cpus", {}).get("family_words"), "cpus.toml family_words"
        ),
        cpu_family_words_ddr5=_typed(
            dict[str, str], t.get("cpus", {}).get("family_words_ddr5"), "cpus.toml family_words_ddr5"
        ),
        cpu_assumed=_typed(dict[str, str], t.get("cpus", {}).get("assumed"), "cpus.toml assumed"),
        estimator=_typed(EstimatorSection, t.get("estimator"), "estimator.toml"),
        speed=_typed(SpeedSection, t.get("speed"), "speed.toml"),
        fit=_typed(CalibrationFit, t.get("calibration"), "calibration.toml"),
        concurrency=_typed(ConcurrencySection, t.get("concurrency"), "concurrency.toml"),
        hosts=_typed(HostsSection, t.get("hosts"), "hosts.toml"),
        cpus=_typed(CpusSection, _cpu_settings(t.get("cpus", {})), "cpus.toml"),
        eagle_drafts=_typed(EagleDraftsSection, t.get("eagle_drafts"), "eagle_drafts.toml"),
        deploy=_typed(DeploySection, t.get("deploy"), "deploy.toml"),
        split_modes=_typed(SplitModesSection, t.get("split_modes"), "split_modes.toml"),
        split_fit=_typed(SplitFit, t.get("multi_gpu_fit", {}).get("fit"), "multi_gpu_fit.toml [fit]"),
    )


def _cpu_settings(table: dict[str, Any]) -> dict[str, Any]:
    # The [[cpu]] entries are the loader's (Catalog.cpus); [socket_words] is read above.
    return {k: v for k, v in table.items() if k in ("host_ram", "efficiency")}
