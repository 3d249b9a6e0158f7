"""Backend as input (issue 11 item 3): the named backend prices the speed and band, picks the
framework and the command notes, and every view of the question shows the same figures."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.ask.answer import answer, estimate_for, follow_up
from core.ask.estimate_request import QueryError, run_query
from core.catalog.loader import default_catalog
from core.estimator import speed
from core.estimator.band import band_for
from core.estimator.frameworks import check_backend, evaluate, recommend
from core.estimator.memory import default_os
from core.estimator.placement import framework_query
from core.estimator.serialize import estimate_dict
from core.estimator.token_bytes import decode_bytes
from core.estimator.weights import weight_breakdown
from tests.core.estimator.test_one_figure_per_cell import (
    test_every_view_of_one_question_shows_the_same_figures as every_view_agrees,
)

CATALOG = default_catalog()
CAL = speed.calibration(CATALOG)


def _est(**kw: object):
    return run_query({"model": "qwen3 8b", "quant": "Q4_K_M", "ctx": "8k", **kw}, CATALOG)


def test_the_named_backend_prices_decode_prefill_and_the_band() -> None:
    est = _est(gpu="rtx 4090", os="linux", backend="vulkan")
    assert est.backend == "vulkan"
    row = est.rows[0]
    gpu = est.request.setup.gpu
    band = band_for(gpu, "vulkan", CAL, "decode", "llama.cpp", moe=est.request.model.is_moe)
    assert row.decode_tps is not None
    # The band's high end, or the bandwidth roofline where that is lower (speed.peak_tps).
    model = est.request.model
    weights = weight_breakdown(model, CATALOG.quants[row.quant], CATALOG)
    read = decode_bytes(model, weights, row.depth, est.request.kv_type, CATALOG)
    roofline = gpu.bandwidth_gbs * 1e9 / read
    expected = min(band.high, max(roofline / row.decode_tps.mid, 1.0))
    assert row.decode_tps.high / row.decode_tps.mid == pytest.approx(expected, rel=0.05)
    cuda = _est(gpu="rtx 4090", os="linux")
    assert cuda.backend == "cuda" and cuda.rows[0].decode_tps != row.decode_tps
    assert cuda.rows[0].prefill_tps != row.prefill_tps
    assert [a.code for a in est.assumptions if "backend" in a.code] == ["assume.backend_given"]
    assert [a.code for a in cuda.assumptions if "backend" in a.code] == ["assume.backend"]


def test_under_vulkan_a_framework_without_it_is_never_chosen() -> None:
    # AWQ on a 4090 would be vLLM's; asked on Vulkan, nothing that runs AWQ has Vulkan.
    est = _est(gpu="rtx 4090", os="linux", backend="vulkan")
    q = framework_query(est.request, "Q4_K_M", 8192, "smooth", None, CATALOG)
    assert q.backend == "vulkan"
    assert recommend(q, catalog=CATALOG).framework == "llama.cpp"
    vllm = evaluate(CATALOG.frameworks["vllm"], replace(q, quant=CATALOG.quants["AWQ"]))
    assert not vllm.runnable and vllm.notes[0].code == "fw.gate.asked_backend"
    llama = evaluate(CATALOG.frameworks["llama.cpp"], q)
    assert llama.runnable and llama.backend == "vulkan"
    assert "fw.llamacpp.vulkan_build" in [n.code for n in llama.notes]
    # Not asked: the same card gets no Vulkan note, and CUDA.
    plain = evaluate(CATALOG.frameworks["llama.cpp"], replace(q, backend=None))
    assert plain.backend == "cuda" and "fw.llamacpp.vulkan_build" not in [n.code for n in plain.notes]


def test_sglang_is_refused_on_vulkan_but_runs_on_rocm_linux() -> None:
    with pytest.raises(QueryError, match="no 'vulkan' backend"):
        _est(gpu="mi300x", framework="sglang", backend="vulkan", quant="HF-BF16")
    est = run_query(
        {"gpu": "mi300x", "model": "qwen3 8b", "framework": "sglang", "backend": "rocm", "ctx": "8k"}, CATALOG
    )
    assert est.backend == "rocm" and est.framework == "sglang"


def test_the_default_per_card_stays_the_way_llama_cpp_users_run_it() -> None:
    gpus = CATALOG.gpus
    assert speed.choose_backend(gpus["rx-7900-xtx"], "windows", CATALOG) == "vulkan"
    assert speed.choose_backend(gpus["rx-7900-xtx"], "linux", CATALOG) == "rocm"
    assert speed.choose_backend(gpus["rtx-4090"], "windows", CATALOG) == "cuda"
    assert speed.choose_backend(gpus["ryzen-ai-max-395"], "linux", CATALOG) == "vulkan"
    # On every card's default OS the default backend is one the card check accepts: a user who
    # names the default with --backend is never refused.
    for gpu in gpus.values():
        os_name = default_os(gpu, CATALOG)
        chosen = speed.choose_backend(gpu, os_name, CATALOG)
        assert check_backend(chosen, gpu, os_name, CATALOG).ok, (gpu.id, os_name, chosen)


def test_windows_rocm_follows_the_hip_build_targets() -> None:
    gpus = CATALOG.gpus
    assert check_backend("rocm", gpus["rx-7900-xtx"], "windows", CATALOG).ok
    assert check_backend("rocm", gpus["rx-6800-xt"], "windows", CATALOG).ok
    mi50 = check_backend("rocm", gpus["mi50-32g"], "windows", CATALOG)
    assert not mi50.ok and mi50.why == "windows_hip" and "vulkan" in mi50.possible
    assert check_backend("rocm", gpus["mi50-32g"], "linux", CATALOG).ok


@pytest.mark.parametrize(
    "question",
    ["7900 xtx qwen3 32b on vulkan", "rtx 4090 qwen3 32b q4 32k vulkan", "3090 llama 3.3 70b 用vulkan"],
)
def test_every_view_agrees_when_the_backend_is_named(question: str) -> None:
    every_view_agrees(question)
    reply = answer(question, CATALOG)
    assert reply.query is not None and reply.query.backend == "vulkan"
    est = estimate_for(reply.query, CATALOG)
    assert est.backend == "vulkan" and estimate_dict(est, CATALOG)["backend"] == "vulkan"
    frameworks = follow_up(reply.query, "frameworks", CATALOG)
    assert frameworks.status == "answer" and "llama.cpp (llama-server)" in frameworks.text.splitlines()[1]
    # The other-OS button keeps the asked backend where that OS runs it.
    other = replace(reply.query, os="linux")
    assert estimate_for(other, CATALOG).backend == "vulkan"
