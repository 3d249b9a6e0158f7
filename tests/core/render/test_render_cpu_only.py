"""The views of a CPU-only estimate, rendered from the estimator directly (no question parsed): RAM
figures and wording, the CPU's name, a CPU launch command; and a card's views stay the card's."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.catalog.loader import default_catalog
from core.estimator.estimate import Estimate, EstimateRequest, estimate
from core.estimator.setup import HostSpec, build_setup, cpu_only_setup
from core.i18n import Lang
from core.render.compact import compact_reply
from core.render.detail import frameworks_view, quant_detail, speculative_view
from core.render.doc import render
from core.render.sources import sources_view
from core.understanding.query import AskQuery, Hardware

CATALOG = default_catalog()


def _cpu_estimate(
    cpu: str, ram: float, model: str, quants: tuple[str, ...] = (), sockets: int | None = None
) -> Estimate:
    setup = cpu_only_setup(CATALOG, host_spec=HostSpec(ram_gib=ram, sockets=sockets, cpu=CATALOG.cpus[cpu]))
    request = EstimateRequest(setup, CATALOG.models[model], quants, (4096, 32768), offload="cpu")
    return estimate(request, CATALOG)


def _views(est: Estimate, lang: Lang) -> dict[str, str]:
    query = AskQuery(Hardware(), model_id=est.request.model.id, lang=lang)
    return {
        "compact": compact_reply(est, CATALOG, query),
        "memory": compact_reply(est, CATALOG, replace(query, intent="memory")),
        "quant": render(quant_detail(est, None, CATALOG, lang), "plain"),
        "frameworks": render(frameworks_view(est, None, CATALOG, lang), "plain"),
        "speculative": render(speculative_view(est, None, CATALOG, lang), "plain"),
        "sources": render(sources_view(est, CATALOG, lang), "plain"),
    }


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_view_of_a_cpu_only_estimate_speaks_of_ram_and_the_cpu(lang: Lang) -> None:
    est = _cpu_estimate("ryzen-9-7950x", 64, "qwen3-30b-a3b")
    views = _views(est, lang)
    ram = "Usable RAM 60.0 of 64 GiB" if lang == "en" else "可用内存 60.0 / 64 GiB"
    for name in ("compact", "memory", "quant"):
        assert ram in views[name], name
    for name, text in views.items():
        assert "VRAM" not in text and "显存" not in text and "-ngl 99" not in text, (name, text)
        assert "CPU only (" not in text, name  # the CPU's own name, not the stand-in card's
    assert views["compact"].startswith("AMD Ryzen 9 7950X · Qwen3-30B-A3B · llama.cpp (CPU)")
    # Priced by the CPU fit (fitted on CPU-only runs): never "no CPU data yet".
    assert "cpus.toml" in views["compact"] and "no CPU data" not in views["compact"]
    assert "暂无 CPU 实测" not in views["compact"]
    assert ("RAM needed, GiB" if lang == "en" else "所需内存 GiB") in views["memory"]
    assert "AMD Ryzen 9 7950X" in views["sources"] and "techpowerup" in views["sources"]
    commands = [
        line for text in views.values() for line in text.splitlines() if line.startswith("$ llama-server")
    ]
    assert commands and all(" -ngl 0" in c and " -t 16" in c for c in commands)


def test_the_table_shows_the_ram_each_quant_needs() -> None:
    est = _cpu_estimate("ryzen-9-7950x", 64, "qwen3-30b-a3b", ("Q4_K_M", "Q8_0"))
    text = _views(est, "en")["memory"]
    for row in est.rows:
        assert f"{row.total_gib:.1f}" in text  # the RAM the run needs, weights + KV + buffer


def test_two_sockets_spread_the_threads_over_the_numa_nodes() -> None:
    est = _cpu_estimate("epyc-9654", 1536, "deepseek-r1", ("Q4_K_M",), sockets=2)
    text = _views(est, "en")["compact"]
    assert text.startswith("2x AMD EPYC 9654 · DeepSeek-R1")
    command = next(line for line in text.splitlines() if line.startswith("$ llama-server"))
    assert command.endswith(" -t 192 --numa distribute")
    assert "× 2 sockets" in text


def test_a_cpu_only_row_that_does_not_fit_offers_no_card() -> None:
    est = _cpu_estimate("ryzen-9-7950x", 32, "qwen3-32b", ("Q8_0",))
    row = est.rows[0]
    assert row.status == "no_fit" and row.remedy is not None
    kinds = {o.kind for o in (row.remedy, *row.remedy.alternatives)}
    assert kinds <= {"kv_quant", "shorter_ctx", "lower_quant", "more_ram"} and "lower_quant" in kinds
    text = _views(est, "zh")["quant"]
    assert "换 " in text and "张卡" not in text and "显卡" not in text


def test_a_card_estimate_keeps_the_card_layout() -> None:
    setup = build_setup(CATALOG.gpus["rtx-4090"], CATALOG)
    est = estimate(EstimateRequest(setup, CATALOG.models["qwen3-32b"], ("Q4_K_M",), (4096,)), CATALOG)
    views = _views(est, "en")
    assert views["compact"].startswith("GeForce RTX 4090 · Qwen3-32B · llama.cpp\n")
    assert "Usable 22.6 of 24 GiB" in views["compact"] and "Usable RAM" not in views["compact"]
    assert "-ngl 99" in views["compact"] and " -t " not in views["compact"]
    assert "CPU specs" not in views["sources"]
