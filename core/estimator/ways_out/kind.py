"""The kind of a way out, named once: every other module compares against these members (or reads
the registry's facts about them), never against a bare string."""

from __future__ import annotations

from enum import StrEnum


class WayOutKind(StrEnum):
    """What a `Remedy` is. A StrEnum because its value is the wire format: `estimate --json`, stored
    data and the `reply.remedy.<kind>` message keys carry exactly these strings, and a member
    compares, hashes and formats as its string."""

    KV_QUANT = "kv_quant"
    MAC_WIRED_LIMIT = "mac_wired_limit"
    SHORTER_CTX = "shorter_ctx"
    EXPERT_OFFLOAD = "expert_offload"
    OFFLOAD = "offload"
    LOWER_QUANT = "lower_quant"
    MORE_CARDS = "more_cards"
    MORE_RAM = "more_ram"  # CPU only: the system RAM the run needs
    # Not ways out, but what a row's `remedy` can say too (core/estimator/ways_out/outcomes.py):
    NONE = "none"  # nothing gets this row running
    HOST_SHORT = "host_short"  # an offload the user asked for that the system RAM is too small for
    CPU = "cpu"  # the CPU-only run the user asked for, as placed
