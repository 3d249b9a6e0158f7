"""A question that names a CPU and a model but no card is answered as a CPU-only run on that CPU."""

from __future__ import annotations

from core.ask_use_case import answer, estimate_for
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


def test_a_cpu_and_a_model_is_a_cpu_only_answer() -> None:
    reply = answer("7950X 64G ddr5 能跑 qwen3 30b 吗", CATALOG)
    assert reply.status == "answer" and reply.query is not None
    assert "CPU only (AMD Ryzen 9 7950X)" in reply.text
    hw = reply.query.hardware
    assert (hw.cpu, hw.host_ram_gib, hw.host_ram_type) == ("ryzen-9-7950x", 64.0, "DDR5")
    est = estimate_for(reply.query, CATALOG)
    host = est.request.setup.host
    assert est.request.offload == "cpu" and host.cpu == "ryzen-9-7950x"
    assert (host.ram_gib, host.mt_s, host.channels) == (64.0, 5200, 2)
    assert reply.query.as_json()["cpu"] == "ryzen-9-7950x"


def test_unseen_english_phrasing_with_sockets() -> None:
    reply = answer("would dual EPYC 9654 with 1.5TB run deepseek r1 Q4_K_M, how many tok/s?", CATALOG)
    assert reply.status == "answer" and reply.query is not None
    assert "CPU only (2x AMD EPYC 9654)" in reply.text
    assert reply.query.as_json()["cpu_sockets"] == 2
    host = estimate_for(reply.query, CATALOG).request.setup.host
    assert (host.channels, host.sockets, host.ram_gib) == (12, 2, 1536.0)


def test_no_cpu_no_change() -> None:
    reply = answer("3090 能跑 qwen3 32b 吗", CATALOG)
    assert reply.query is not None and reply.query.as_json()["cpu"] is None
    assert estimate_for(reply.query, CATALOG).request.setup.host.name == "ddr4-2ch"


def test_a_model_alone_is_still_the_model_overview() -> None:
    reply = answer("qwen3 30b 需要多少显存", CATALOG)
    assert reply.query is not None and reply.query.hardware.cpu is None
    assert "CPU only" not in reply.text
