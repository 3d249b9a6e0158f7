"""Offload as input (RAM type, channels, --offload), the ranking of ways out, one figure per cell."""

from __future__ import annotations

import pytest

from core.ask.estimate_request import run_query
from core.catalog.loader import default_catalog
from core.estimator.setup import SetupError, default_host, parse_ram_type

CATALOG = default_catalog()


def test_ram_type_and_channels_set_the_host_bandwidth() -> None:
    est = run_query({"gpu": "4090", "model": "gpt-oss-120b", "ram": 64, "ram_type": "DDR5-6000"}, CATALOG)
    assert est.request.setup.host.bandwidth_gbs == pytest.approx(96.0)  # 2 x 6000 x 8 / 1000
    assert parse_ram_type("lpddr5x-8533", CATALOG) == ("LPDDR5X", 8533)
    with pytest.raises(SetupError):
        parse_ram_type("DDR9-1", CATALOG)


def test_laptop_cards_get_the_laptop_host() -> None:
    laptop = next(g for g in CATALOG.gpus.values() if g.form == "laptop" and not g.unified_memory)
    assert default_host(laptop, CATALOG).name == "ddr5-2ch-laptop"


@pytest.mark.parametrize(
    ("card", "host"), [("rtx-5090", "ddr5-2ch"), ("rtx-5070", "ddr5-2ch"), ("rtx-4090", "ddr4-2ch")]
)
def test_a_card_generation_sold_beside_ddr5_gets_a_ddr5_box(card: str, host: str) -> None:
    """RTX 50 / RX 9000 cards launched when desktop platforms took DDR5 only; the RTX 40 era keeps
    the conservative DDR4 box (hosts.toml [defaults] "consumer:<arch_family>")."""
    assert default_host(CATALOG.gpus[card], CATALOG).name == host
    said = run_query({"gpu": card, "model": "gpt-oss-120b", "ram": 64, "ram_type": "DDR4-3200"}, CATALOG)
    assert said.request.setup.host.bandwidth_gbs == pytest.approx(51.2)  # what the user says wins


def test_expert_offload_as_asked_runs_with_its_command() -> None:
    est = run_query(
        {"gpu": "4090", "model": "gpt-oss-120b", "ram": 64, "ctx": ["32k"], "cpu_moe_layers": 26}, CATALOG
    )
    row = est.rows[0]
    assert row.status != "no_fit" and row.decode_tps is not None and row.prefill_tps is not None
    assert row.remedy is not None and row.remedy.cpu_moe_layers == 26
    assert row.decode_tps.mid == row.remedy.decode_mid  # one figure per cell
    everything = run_query({"gpu": "4090", "model": "gpt-oss-120b", "ram": 64, "offload": "experts"}, CATALOG)
    assert everything.rows[0].total_gib < row.total_gib  # --cpu-moe keeps less on the card


def test_cpu_only_reads_everything_from_ram() -> None:
    est = run_query(
        {"gpu": "3090", "model": "qwen3 30b a3b", "quant": "Q4_K_M", "ram": 64, "offload": "cpu"}, CATALOG
    )
    row = est.rows[0]
    # Every byte is in RAM: the row's memory figures are the RAM it needs against the usable RAM
    # (64 GiB less the OS's 4), not the card's (nothing on it).
    assert row.decode_tps is not None and row.weights_gib > 15
    assert abs(row.total_gib - (row.weights_gib + row.kv_gib + row.overhead_gib)) <= 0.02  # each rounded
    assert row.usable_gib == 60.0 and row.status == "smooth"
    from core.estimator.plan import plan_for

    assert "-ngl 0" in plan_for(est, row, CATALOG).command


def test_one_or_two_bit_quants_are_never_the_first_way_out_when_another_works() -> None:
    est = run_query({"gpu": "4090", "model": "qwen3 30b a3b", "quant": "Q8_0", "ctx": ["128k"]}, CATALOG)
    remedy = est.rows[0].remedy
    assert remedy is not None and not remedy.quality_warning
    low_bit = [o for o in remedy.alternatives if o.quality_warning]
    assert all(o.kind in ("lower_quant", "mac_wired_limit") for o in low_bit)


def test_more_cards_rank_after_expert_offload() -> None:
    est = run_query({"gpu": "4090", "model": "gpt-oss-120b", "ram": 64, "ctx": ["8k"]}, CATALOG)
    remedy = est.rows[0].remedy
    assert remedy is not None and remedy.kind == "expert_offload"


def test_way_out_is_priced_with_the_rows_split() -> None:
    # (DeepSeek R1 ships FP8: its ladder starts there, so a BF16 model gives the lower-quant way out.)
    est = run_query({"gpu": "H20", "count": 4, "model": "qwen3-235b-a22b", "framework": "vllm"}, CATALOG)
    table = {(r.quant, r.context): r.decode_tps.mid for r in est.rows if r.decode_tps}
    checked = 0
    for r in est.rows:
        if r.remedy is not None and r.remedy.kind == "lower_quant" and (r.remedy.quant, r.context) in table:
            assert r.remedy.decode_mid == table[(r.remedy.quant, r.context)]
            checked += 1
    assert checked


def test_natively_quantized_models_show_their_own_format_only() -> None:
    est = run_query({"gpu": "4090", "model": "gpt-oss-20b"}, CATALOG)
    assert {r.quant for r in est.rows} == {"MXFP4"}


def test_mac_wired_limit_carries_the_sysctl_command() -> None:
    ask = {"gpu": "M2 Ultra 192G", "model": "qwen3-235b-a22b", "quant": "Q5_K_M", "ctx": ["4k"]}
    est = run_query(ask, CATALOG)
    remedy = est.rows[0].remedy
    assert remedy is not None and remedy.kind == "mac_wired_limit" and remedy.wired_limit_mb > 150 * 1024
    from core.estimator.plan import plan_for

    assert plan_for(est, est.rows[0], CATALOG).command.startswith("sudo sysctl iogpu.wired_limit_mb=")


def test_a_lower_quant_under_a_raised_wired_limit_is_named_and_flagged() -> None:
    ask = {"gpu": "M2 Ultra 192G", "model": "deepseek v3", "quant": "Q4_K_M", "ctx": ["4k"]}
    remedy = run_query(ask, CATALOG).rows[0].remedy
    assert remedy is not None and remedy.kind == "lower_quant" and remedy.quant == "IQ2_XXS"
    assert remedy.wired_limit_mb and remedy.quality_warning


def test_ascend_cards_get_a_framework_with_a_command() -> None:
    est = run_query({"gpu": "Ascend 910B", "model": "qwen3 32b", "quant": "Q8_0", "ctx": ["8k"]}, CATALOG)
    from core.estimator.plan import plan_for

    assert plan_for(est, est.rows[0], CATALOG).command.startswith("llama-server")


def test_no_card_is_a_cpu_only_run() -> None:
    ask = {
        "model": "llama 3.1 8b",
        "quant": "Q4_K_M",
        "ram_type": "DDR5-4800",
        "ram_channels": 8,
        "ctx": ["8k"],
    }
    est = run_query(ask, CATALOG)
    row = est.rows[0]
    assert est.backend == "cpu" and row.status != "no_fit" and row.decode_tps is not None
    assert est.request.setup.host.bandwidth_gbs == pytest.approx(307.2)
