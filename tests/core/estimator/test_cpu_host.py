"""A named CPU (catalogs/cpus.toml) as the host: its memory, its prefill rate, and no change without one."""

from __future__ import annotations

import pytest

from core.ask.estimate_request import EstimateQuery, QueryError, resolve_request, run_query
from core.catalog.loader import default_catalog
from core.estimator.estimate import estimate
from core.estimator.setup import HostSpec, SetupError, build_setup, cpu_only_setup, default_host

CATALOG = default_catalog()
CPUS = CATALOG.cpus
RTX_4090 = CATALOG.gpus["rtx-4090"]


def test_the_cpu_sets_the_host_memory_when_the_user_gives_none() -> None:
    host = default_host(RTX_4090, CATALOG, HostSpec(cpu=CPUS["ryzen-9-7950x"]))
    assert (host.ram_type, host.mt_s, host.channels, host.sockets) == ("DDR5", 5200, 2, 1)
    assert host.bandwidth_gbs == 83.2 and host.cpu == "ryzen-9-7950x" and host.ram_gib == 64.0
    epyc = default_host(RTX_4090, CATALOG, HostSpec(sockets=2, cpu=CPUS["epyc-9654"]))
    # 12 channels x 4800 x 8 = 460.8 per socket; the second socket adds hosts.toml [numa] 0.4.
    assert (epyc.channels, epyc.mt_s, epyc.sockets) == (12, 4800, 2)
    assert epyc.bandwidth_gbs == pytest.approx(460.8 * 1.4, abs=0.1)
    assert epyc.ram_gib == 1024.0  # 512 per server socket (cpus.toml [host_ram])


def test_what_the_user_says_wins_over_the_cpu() -> None:
    host = default_host(
        RTX_4090, CATALOG, HostSpec(ram_gib=192, ram_type="DDR5-6000", cpu=CPUS["ryzen-9-7950x"])
    )
    assert (host.ram_gib, host.mt_s, host.channels) == (192.0, 6000, 2)
    # A bare type on a CPU that takes both: the top speed that CPU supports for it.
    ddr4 = default_host(RTX_4090, CATALOG, HostSpec(ram_type="DDR4", cpu=CPUS["core-i7-12700h"]))
    assert (ddr4.ram_type, ddr4.mt_s) == ("DDR4", 3200)


def test_a_desktop_cpu_has_one_socket() -> None:
    with pytest.raises(SetupError, match="single-socket"):
        default_host(RTX_4090, CATALOG, HostSpec(sockets=2, cpu=CPUS["ryzen-9-7950x"]))


def test_no_cpu_named_is_the_preset_as_before() -> None:
    host = default_host(RTX_4090, CATALOG)
    assert (host.name, host.bandwidth_gbs, host.ram_gib, host.cpu) == ("ddr4-2ch", 51.2, 32.0, "")
    assert cpu_only_setup(CATALOG).gpu.name == "CPU only"


def test_a_server_cpu_means_linux_and_the_cpu_only_card_names_it() -> None:
    setup = build_setup(RTX_4090, CATALOG, host_spec=HostSpec(cpu=CPUS["epyc-9355"]))
    assert setup.os == "linux"
    assert build_setup(RTX_4090, CATALOG, host_spec=HostSpec(cpu=CPUS["ryzen-9-7950x"])).os == "windows"
    assert cpu_only_setup(CATALOG, host_spec=HostSpec(sockets=2, cpu=CPUS["xeon-gold-6138"])).gpu.name == (
        "CPU only (2x Intel Xeon Gold 6138)"
    )


def _cpu_only(cpu: str | None, **extra: object) -> tuple[float, float]:
    raw = {"model": "llama 3.1 8b", "quant": "Q4_K_M", "ctx": "8k", "offload": "cpu", **extra}
    if cpu is not None:
        raw["cpu"] = cpu
    row = run_query(raw, CATALOG).rows[0]
    assert row.decode_tps is not None and row.prefill_tps is not None
    return row.decode_tps.mid, row.prefill_tps.mid


def test_the_cpu_prices_the_prefill() -> None:
    laptop = _cpu_only("i7-1165G7")[1]
    desktop = _cpu_only("7950X")[1]
    amx = _cpu_only("Xeon Platinum 8480+")[1]
    assert laptop < desktop < amx
    assert desktop / laptop > 4  # 16 Zen 4 cores vs 4 Tiger Lake cores


def test_without_a_cpu_the_prefill_is_the_one_constant() -> None:
    # [host] cpu_prefill_gflops: 2 x active params x prompt / rate, the figure before CPUs were named.
    request = resolve_request(
        EstimateQuery(model="llama 3.1 8b", quant=["Q4_K_M"], ctx=[8192], offload="cpu"), CATALOG
    )
    row = estimate(request, CATALOG).rows[0]
    rate = float(CATALOG.tables["estimator"]["host"]["cpu_prefill_gflops"]) * 1e9
    seconds = 2 * request.model.active_params_b * 1e9 * 512 / rate
    assert row.prefill_tps is not None
    assert row.prefill_tps.mid == pytest.approx(512 / seconds, rel=0.02)


def test_the_cpu_memory_sets_the_decode() -> None:
    ddr4 = _cpu_only("5950X")[0]
    ddr5 = _cpu_only("9950X")[0]
    server = _cpu_only("EPYC 9654")[0]
    assert ddr4 < ddr5 < server


def test_an_unknown_cpu_is_an_error_with_candidates() -> None:
    with pytest.raises(QueryError, match="unknown CPU 'ryzen 7950'") as info:
        run_query({"model": "llama 3.1 8b", "cpu": "ryzen 7950"}, CATALOG)
    assert "ryzen-9-7950x" in info.value.candidates["cpu"]


def test_sockets_in_the_cpu_name_count() -> None:
    request = resolve_request(EstimateQuery(model="qwen3 30b", cpu="2x EPYC 7763"), CATALOG)
    assert request.setup.host.sockets == 2 and request.setup.host.cpu == "epyc-7763"
    assert request.offload == "cpu"


def test_the_assumptions_name_the_cpu() -> None:
    est = run_query({"model": "qwen3 30b", "cpu": "2x EPYC 9654", "quant": "Q4_K_M"}, CATALOG)
    assert any(n.code == "assume.cpu" and "2x AMD EPYC 9654" in n.text("en") for n in est.assumptions)
    plain = run_query({"model": "qwen3 30b", "quant": "Q4_K_M"}, CATALOG)
    assert not any(n.code == "assume.cpu" for n in plain.assumptions)


def _cpu_row(depth: int | None, prompt: int = 512, cpu: str = "ryzen-9-7950x"):  # type: ignore[no-untyped-def]
    query = EstimateQuery(
        model="qwen3-30b-a3b", quant=["IQ4_XS"], ctx=[32768], cpu=cpu, depth=depth, prompt=prompt
    )
    return estimate(resolve_request(query, CATALOG), CATALOG).rows[0]


def test_a_cpu_prefill_pays_attention_at_depth_at_the_fitted_share() -> None:
    """Issue 23: a CPU prompt sent into a deep context is slower (attention's FLOPs grow with the
    depth), but at the share fitted on sweeps of today's kernels (cpus.toml [efficiency.prefill]
    attention), not a tenth of the matmul rate: measured 7950X Qwen3-30B-A3B pp512 @ d8192 is
    60-224 tok/s (llama.cpp / ik_llama.cpp, ik discussion 357)."""
    empty, at_8k = _cpu_row(0), _cpu_row(8192)
    assert empty.prefill_tps is not None and at_8k.prefill_tps is not None
    assert 40 < at_8k.prefill_tps.mid < empty.prefill_tps.mid
    grid = _cpu_row(None)  # the grid's row: the prompt from empty, and the same at the full 32K
    assert grid.ttft_s == empty.ttft_s
    assert grid.deep_ttft_s is not None and grid.deep_ttft_s > grid.ttft_s


def test_an_unnamed_cpu_prefill_at_depth_pays_attention_too() -> None:
    query = EstimateQuery(model="qwen3-30b-a3b", quant=["IQ4_XS"], ctx=[32768], offload="cpu", ram=64)
    grid = estimate(resolve_request(query, CATALOG), CATALOG).rows[0]
    assert grid.deep_prefill_tps is not None and grid.prefill_tps is not None
    assert grid.deep_prefill_tps.mid < grid.prefill_tps.mid
