"""catalogs/hub.toml's limits as typed records: what a Hub config may hold, how Hub work is bounded.

Anyone can publish a repo and any chat user can name it, so every number a config.json carries is
checked against a plausible range before any reader loops over it (`ConfigLimits`, used by
core.catalog.config_bounds), the Hub work runs on a small pool of its own with a bound per read
(`ReadLimits`, bot/hub/pool.py), and what one person or one chat may ask of the Hub, and how long
an answer or a failure is remembered, is data here too (`BudgetLimits`, `CacheLimits`). The
defaults are the shipped file's values, so a catalog folder without hub.toml (a test catalog) is
bounded the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def _default_ranges() -> dict[str, tuple[float, float]]:
    # The shape keys every reader loops or multiplies over; the shipped hub.toml lists them all.
    return {
        "num_hidden_layers": (1, 1024),
        "hidden_size": (1, 131072),
        "num_attention_heads": (1, 4096),
        "num_key_value_heads": (1, 4096),
        "head_dim": (1, 8192),
        "vocab_size": (1, 16777216),
        "intermediate_size": (0, 1048576),
        "moe_intermediate_size": (0, 1048576),
        "num_experts": (0, 16384),
        "n_routed_experts": (0, 16384),
        "num_local_experts": (0, 16384),
        "num_experts_per_tok": (0, 1024),
        "max_position_embeddings": (1, 134217728),
    }


@dataclass(frozen=True, slots=True)
class ConfigLimits:
    """[config]: the shape of a config.json read from the Hub."""

    max_bytes: int = 1_000_000  # the config.json file itself (real ones are 1-20 KB)
    max_depth: int = 16  # nesting of objects and lists (real ones: 4)
    max_nodes: int = 50_000  # values in the whole document
    max_list: int = 4096  # items of any one list (layer_types: one per layer)
    max_string: int = 65536  # characters of any one string (hybrid_override_pattern: one per layer)
    max_int: int = 1 << 40  # any integer the ranges below don't name (token ids, rope_theta, ...)
    max_float: float = 1e15  # any finite float (NaN and infinities are refused outright)
    max_params: int = 100_000_000_000_000  # the parameter count read (100T: far past any model)
    # key -> [min, max], checked wherever the key appears (text config, vision config, wrappers).
    ranges: dict[str, tuple[float, float]] = field(default_factory=_default_ranges)


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """[reads]: the Hub work's own pool and the bound on one read."""

    workers: int = 16  # threads of the Hub pool (never the event loop's default executor)
    queue: int = 64  # reads waiting for a worker; past it a read is refused at once ("busy")
    max_siblings: int = 20_000  # files of a repo listing taken into account
    search_hits: int = 50  # search results read at most


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """[budget]: look-ups that reach the Hub (cached answers are free), per person and per chat."""

    window_s: float = 3600.0
    per_user: int = 20
    per_chat: int = 60


@dataclass(frozen=True, slots=True)
class CacheLimits:
    """[cache]: what is remembered of the Hub's answers, and for how long."""

    asked: int = 256  # models read for one question, by exact repo id (least recently used out)
    catalogs: int = 8  # catalogs with one such model in them (each costs ~0.1 s to warm)
    shared: int = 1000  # models added by /model add (the overlay every question resolves against)
    source: int = 512  # the Hub adapter's own cache of reads, by repo
    # Failure kind -> seconds a failed look-up of that name is answered from memory.
    negative_ttl_s: dict[str, float] = field(
        default_factory=lambda: {
            "not_found": 3600.0,
            "unsupported": 3600.0,
            "malformed": 3600.0,
            "no_weights": 3600.0,
            "gated": 600.0,
            "timeout": 120.0,
            "unreachable": 30.0,
            "server_error": 30.0,
            "rate_limited": 60.0,
        }
    )
    negative: int = 4096  # failed names remembered at most
    search_ttl_s: float = 600.0  # a search's hits answer the same search this long
    searches: int = 1024  # searches remembered at most


@dataclass(frozen=True, slots=True)
class HubLimits:
    config: ConfigLimits = ConfigLimits()
    reads: ReadLimits = ReadLimits()
    budget: BudgetLimits = BudgetLimits()
    cache: CacheLimits = CacheLimits()
