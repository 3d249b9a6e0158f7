"""The ways-out registry: every kind has one class, its facts say what the string sets used to say,
and every way out a reply can name has its message."""

from __future__ import annotations

from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.registry import WAYS_OUT, facts, way_out
from core.i18n import messages


def _kinds(fact: str) -> set[str]:
    return {str(k) for k in WayOutKind if getattr(facts(k), fact)}


def test_every_kind_has_exactly_one_class() -> None:
    assert {w.kind for w in WAYS_OUT} | {WayOutKind.NONE, WayOutKind.HOST_SHORT, WayOutKind.CPU} == set(
        WayOutKind
    )
    assert all(way_out(k).kind == k for k in WayOutKind)


def test_the_facts_are_the_sets_the_views_read() -> None:
    # What plan.py, render/ and calibrate.py used to spell as sets of strings.
    assert _kinds("runs_here") == {"kv_quant", "offload", "expert_offload"}
    assert _kinds("has_command") == {
        "kv_quant",
        "offload",
        "expert_offload",
        "mac_wired_limit",
        "lower_quant",
        "shorter_ctx",
    }
    assert _kinds("on_card") == {"kv_quant", "mac_wired_limit", "shorter_ctx", "lower_quant", "more_cards"}
    assert _kinds("in_ram") == {"offload", "expert_offload"}


def test_the_registry_is_in_rank_order() -> None:
    # Ties in rank keep the registry's order, so the order is quality first like the tiers.
    tiers = [w.facts.tier for w in WAYS_OUT]
    assert tiers == sorted(tiers)


def test_every_way_out_a_reply_names_has_its_message() -> None:
    shipped = messages()
    for kind in (*(w.kind for w in WAYS_OUT), WayOutKind.NONE, WayOutKind.HOST_SHORT):
        assert f"reply.remedy.{kind}" in shipped, kind


def test_a_kind_is_its_wire_string() -> None:
    # estimate --json and stored data carry the plain strings.
    assert WayOutKind.KV_QUANT == "kv_quant" and f"{WayOutKind.MORE_CARDS}" == "more_cards"
