"""The which-model list's per-model pick (core/estimator/usable_pick.py): the quant a practitioner
loads, not the biggest that fits. Figures are the estimator's own for the audit's setups (a 48 GB
M4 Pro at 8K: Qwen3-32B, Qwen3-30B-A3B, Llama-3.3-70B). Written before the rule."""

from __future__ import annotations

from core.catalog.loader import default_catalog
from core.estimator.usable_pick import PickRules, QuantRun, Tier, pick, pick_rules, worth
from core.render.intent_rows import config

CAT = default_catalog()
RULES = pick_rules(config(CAT, "which_model").get("pick", {}))
BASE = CAT.quants[RULES.baseline].bpw


def _runs(*rows: tuple[str, float, bool]) -> list[QuantRun]:
    return [QuantRun(q, CAT.quants[q].bpw, tps, tight) for q, tps, tight in rows]


def test_the_rules_come_from_the_catalog() -> None:
    assert RULES.baseline == "Q4_K_M"
    assert RULES.crawl_tps < RULES.upgrade_tps and RULES.crawl_tps < RULES.pace_tps
    assert RULES != PickRules(baseline="Q8_0")


def test_a_dense_32b_on_a_48gb_mac_is_q4_k_m_not_q8_0() -> None:
    runs = _runs(
        ("Q8_0", 5.7, True),
        ("Q6_K", 7.3, False),
        ("Q5_K_M", 8.3, False),
        ("Q4_K_M", 9.5, False),
        ("IQ4_XS", 10.5, False),
        ("Q3_K_M", 11.4, False),
        ("IQ3_XXS", 13.6, False),
    )
    got = pick(runs, RULES, BASE)
    assert got is not None and got.run.quant == "Q4_K_M"
    assert got.tier == Tier.USABLE


def test_a_moe_keeps_q8_0_while_it_stays_fast() -> None:
    runs = _runs(("Q8_0", 31.7, False), ("Q6_K", 38.2, False), ("Q4_K_M", 44.9, False))
    got = pick(runs, RULES, BASE)
    assert got is not None and got.run.quant == "Q8_0" and got.tier == Tier.USABLE


def test_a_bigger_quant_that_only_just_fits_is_passed_over() -> None:
    runs = _runs(("Q8_0", 38.0, True), ("Q6_K", 45.0, False), ("Q4_K_M", 55.0, False))
    got = pick(runs, RULES, BASE)
    assert got is not None and got.run.quant == "Q6_K"


def test_the_baseline_stays_when_it_is_tight_and_nothing_better_runs() -> None:
    runs = _runs(("Q4_K_M", 40.0, True), ("IQ4_XS", 43.0, False), ("IQ3_XXS", 50.0, False))
    got = pick(runs, RULES, BASE)
    assert got is not None and got.run.quant == "Q4_K_M" and got.tier == Tier.USABLE


def test_a_3_bit_file_only_when_nothing_of_4_bits_runs() -> None:
    got = pick(_runs(("Q3_K_M", 38.0, True), ("IQ3_XXS", 40.0, True)), RULES, BASE)
    assert got is not None and got.run.quant == "Q3_K_M" and got.tier == Tier.LOW_BIT
    four = pick(_runs(("IQ4_XS", 30.0, True), ("IQ3_XXS", 40.0, False)), RULES, BASE)
    assert four is not None and four.run.quant == "IQ4_XS" and four.tier == Tier.USABLE


def test_a_crawl_is_a_crawl_whatever_its_bits() -> None:
    got = pick(_runs(("Q3_K_M", 5.7, True), ("IQ3_XXS", 7.0, False)), RULES, BASE)
    assert got is not None and got.run.quant == "IQ3_XXS" and got.tier == Tier.CRAWL
    slow = pick(_runs(("Q4_K_M", 4.0, False)), RULES, BASE)
    assert slow is not None and slow.tier == Tier.CRAWL


def test_the_releases_own_format_first() -> None:
    runs = [QuantRun("MXFP4", 4.62, 52.0, False, native=True), *_runs(("Q8_0", 50.0, False))]
    got = pick(runs, RULES, BASE)
    assert got is not None and got.run.quant == "MXFP4" and got.tier == Tier.USABLE


def test_nothing_runs() -> None:
    assert pick([], RULES, BASE) is None


def test_worth_weighs_size_by_pace() -> None:
    mac_dense = worth(32.76, 32.76, 9.5, RULES)  # Qwen3-32B Q4_K_M on a 48 GB M4 Pro
    mac_moe = worth(30.53, 3.35, 31.7, RULES)  # Qwen3-30B-A3B Q8_0 there
    assert mac_moe > mac_dense
    assert worth(32.76, 32.76, 30.0, RULES) > worth(30.53, 3.35, 150.0, RULES)  # a 3090: the 32B first
    assert worth(14.77, 14.77, 40.0, RULES) > worth(15.71, 2.66, 145.0, RULES)  # a dense 14B coder first
    assert worth(27.0, 27.0, 12.0, RULES) > worth(8.03, 8.03, 22.0, RULES)  # a 27B at 12 over an 8B
