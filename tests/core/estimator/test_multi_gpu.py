"""Split modes over several cards (core/estimator/multi_gpu.py, issue 23): layer vs row vs tensor,
the link the reductions cross, what each framework runs, and the launch flag that asks for it."""

from __future__ import annotations

import pytest

from core.ask.estimate_request import QueryError, run_query
from core.catalog.loader import default_catalog
from core.catalog.sections import sections
from core.estimator import multi_gpu, speed
from core.estimator.plan import plan_for

CATALOG = default_catalog()
TABLE = sections(CATALOG).split_modes


def _decode(**query: object) -> float:
    est = run_query({"quant": ["Q4_K_M"], "ctx": [8192], **query}, CATALOG)
    rng = est.rows[0].decode_tps
    assert rng is not None
    return rng.mid


def test_links_follow_the_cards_form() -> None:
    g = CATALOG.gpus
    assert multi_gpu.link_of(g["rtx-3090"], 2) == "pcie"
    assert multi_gpu.link_of(g["h100-sxm"], 8) == "nvlink"
    assert multi_gpu.link_of(g["mi300x"], 8) == "xgmi"
    assert multi_gpu.link_of(g["dgx-spark-gb10"], 2) == "network"  # two boxes
    assert multi_gpu.link_of(g["rtx-3090"], 1) == ""


def test_each_framework_runs_its_own_modes() -> None:
    assert multi_gpu.split_for("llama.cpp", "llama.cpp", None, 2, TABLE) == "layer"
    assert multi_gpu.split_for("llama.cpp", "llama.cpp", "row", 2, TABLE) == "row"
    assert multi_gpu.split_for("ik_llama.cpp", "llama.cpp", "tensor", 2, TABLE) == "tensor"
    assert multi_gpu.split_for("ik_llama.cpp", "llama.cpp", "row", 2, TABLE) == "layer"  # ik has no row
    assert multi_gpu.split_for("vllm", "vllm", None, 4, TABLE) == "tensor"
    assert multi_gpu.split_for("vllm", "vllm", "layer", 4, TABLE) == "layer"  # pipeline parallel
    assert multi_gpu.split_for("ollama", "llama.cpp", "tensor", 2, TABLE) == "layer"  # no -sm in Ollama
    assert multi_gpu.split_for("llama.cpp", "llama.cpp", "tensor", 1, TABLE) == "layer"  # one card
    assert TABLE.mode_for("graph") == "tensor" and TABLE.mode_for("pipeline") == "layer"
    assert TABLE.mode_for("diagonal") is None


def test_tensor_split_reads_in_parallel_row_split_pays_its_syncs() -> None:
    # ik_llama.cpp PR #1057: Llama-3-70B on 4x 3090 with -sm graph ran TG 26 tok/s, where a layer split
    # of the same model reads every byte over one card's bandwidth (~17-19 tok/s, XiongjieDai rows).
    base = {"gpu": "3090", "count": 4, "model": "llama 3 70b"}
    layer = _decode(**base)
    graph = _decode(**base, framework="ik_llama.cpp", split_mode="graph")
    row = _decode(**base, split_mode="row")
    assert 15 <= layer <= 22
    assert graph > layer * 1.15
    assert row < graph


def test_nvlink_syncs_cost_less_than_pcie() -> None:
    base = {
        "gpu": "3090",
        "count": 2,
        "model": "qwen3 14b",
        "framework": "ik_llama.cpp",
        "split_mode": "graph",
    }
    assert _decode(**base, link="nvlink") > _decode(**base)


def test_prefill_reductions_bound_a_long_prompt_over_pcie() -> None:
    model = CATALOG.models["llama-3-70b"]
    costs = speed.calibration(CATALOG).split_costs
    pcie = multi_gpu.prefill_reduction_seconds(model, 8192, 2, "tensor", "pcie", costs)
    nvlink = multi_gpu.prefill_reduction_seconds(model, 8192, 2, "tensor", "nvlink", costs)
    assert pcie > 5 * nvlink > 0
    assert multi_gpu.prefill_reduction_seconds(model, 8192, 2, "layer", "pcie", costs) == 0.0


def test_a_mode_the_framework_lacks_is_refused_with_what_it_runs() -> None:
    with pytest.raises(QueryError, match="no 'row' split mode.*tensor, layer"):
        run_query(
            {"gpu": "3090", "count": 2, "model": "llama 3 70b", "framework": "vllm", "split_mode": "row"},
            CATALOG,
        )
    with pytest.raises(QueryError, match="unknown split mode"):
        run_query({"gpu": "3090", "count": 2, "model": "llama 3 70b", "split_mode": "diagonal"}, CATALOG)


def _command(**query: object) -> str:
    est = run_query({"ctx": [8192], **query}, CATALOG)
    return plan_for(est, est.rows[0], CATALOG).command


def test_the_command_asks_for_the_mode() -> None:
    base = {"gpu": "3090", "count": 2, "model": "llama 3 70b", "quant": ["Q4_K_M"]}
    assert "-sm graph" in _command(**base, framework="ik_llama.cpp", split_mode="tensor")
    assert "-sm tensor" in _command(**base, framework="llama.cpp", split_mode="tensor")
    assert "-sm row" in _command(**base, framework="llama.cpp", split_mode="row")
    assert "-sm layer" in _command(**base, framework="llama.cpp")


def test_llama_tensor_mode_with_a_quantized_cache_splits_by_layer_and_says_so() -> None:
    # docs/multi-gpu.md: -sm tensor with a quantized KV cache is a fatal error at start-up.
    query = {"gpu": "4090", "count": 4, "model": "gpt-oss-120b", "framework": "llama.cpp", "kv_type": "q8_0"}
    est = run_query({**query, "ctx": [8192], "split_mode": "tensor"}, CATALOG)
    plan = plan_for(est, est.rows[0], CATALOG)
    assert "-sm layer" in plan.command and "-sm tensor" not in plan.command
    assert any(n.code == "fw.llama.tensor_kv" for n in plan.notes)
    layer = run_query({**query, "ctx": [8192]}, CATALOG)
    assert est.rows[0].decode_tps == layer.rows[0].decode_tps  # priced as the command runs
