"""N users at once (issue 11 item 4): the batched model, its fitted parameters and band from
catalogs/concurrency.toml, one computation for the chat line, `ask --json` and the bench."""

from __future__ import annotations

import re
import statistics
from types import ModuleType

import pytest

from core.ask.answer import answer
from core.ask.estimate_request import EstimateQuery, resolve_request
from core.catalog.loader import default_catalog
from core.estimator import concurrency
from core.estimator.estimate import estimate
from tests.fakes.scripts import load_script

CATALOG = default_catalog()


def _load(name: str) -> ModuleType:
    return load_script(name, reuse=True)


def _request(gpu: str, model: str, quant: str, framework: str, count: int = 1, depth: int = 1024):  # type: ignore[no-untyped-def]
    query = EstimateQuery(
        gpu=gpu,
        model=model,
        count=count,
        quant=[quant],
        ctx=[8192],
        depth=depth,
        framework=framework,
        os="linux",
    )
    return resolve_request(query, CATALOG)


@pytest.mark.parametrize(
    ("gpu", "model", "quant", "framework", "count"),
    [
        ("rtx 4090", "qwen3 8b", "Q4_K_M", "llama.cpp", 1),
        ("h100", "qwen3 30b a3b", "FP8", "vllm", 1),
        # Tensor parallel: one user must be the table's multi-card row (the split is the estimate's).
        ("h100", "llama 3.3 70b", "FP8", "vllm", 4),
    ],
)
def test_one_user_is_the_tables_single_stream_figure(
    gpu: str, model: str, quant: str, framework: str, count: int
) -> None:
    req = _request(gpu, model, quant, framework, count)
    row = estimate(req, CATALOG).rows[0]
    assert row.decode_tps is not None
    one = concurrency.concurrent_for(
        concurrency.Batch(req.setup, req.model, quant, 1, 1024, req.framework or framework), CATALOG
    )
    assert one.per_user_tps == one.aggregate_tps == row.decode_tps.mid


def test_parameters_and_band_come_from_the_catalog() -> None:
    table = CATALOG.tables["concurrency"]
    vllm = concurrency.params_for(CATALOG, "vllm", moe=True)
    assert vllm.batch_eff == pytest.approx(table["framework"]["vllm"]["moe"]["batch_eff"])
    assert vllm.routing == pytest.approx(table["framework"]["vllm"]["moe"]["routing"])
    band = table["default"]["band"]
    assert (vllm.low, vllm.high) == (band["low"], band["high"])
    # A framework the fit had no rows for is priced with the default (llama.cpp's) values.
    assert concurrency.params_for(CATALOG, "mlx", moe=False).batch_eff == pytest.approx(
        table["default"]["batch_eff"]
    )
    req = _request("rtx 4090", "qwen3 8b", "Q4_K_M", "llama.cpp")
    got = concurrency.concurrent_for(concurrency.Batch(req.setup, req.model, "Q4_K_M", 8, 1024), CATALOG)
    # The low end is the unrounded aggregate times the band, rounded once: within 0.1 of the printed
    # (rounded) aggregate times the band.
    assert got.aggregate_low == pytest.approx(got.aggregate_tps * band["low"], abs=0.1)
    assert got.per_user_high == pytest.approx(got.per_user_tps * band["high"], abs=0.15)


def test_more_users_more_in_all_less_each_and_moe_batches_read_more_experts() -> None:
    req = _request("rtx 4090", "qwen3 30b a3b", "Q4_K_M", "llama.cpp")
    speeds = [
        concurrency.concurrent_for(concurrency.Batch(req.setup, req.model, "Q4_K_M", n, 1024), CATALOG)
        for n in (1, 4, 16)
    ]
    assert speeds[0].aggregate_tps < speeds[1].aggregate_tps < speeds[2].aggregate_tps
    assert speeds[0].per_user_tps > speeds[1].per_user_tps > speeds[2].per_user_tps
    model = req.model
    # Shared routing (fitted < 1) touches fewer experts than independent tokens, more than one.
    assert concurrency.expert_share_read(model, 1) < concurrency.expert_share_read(model, 8**0.8)
    assert concurrency.expert_share_read(model, 8**0.8) < concurrency.expert_share_read(model, 8)


def test_a_serving_run_holds_its_prefills_and_its_last_wave() -> None:
    req = _request("h100", "qwen3 8b", "FP8", "vllm")

    def agg(run: concurrency.ServingRun | None) -> float:
        batch = concurrency.Batch(req.setup, req.model, "FP8", 32, 1536, "vllm")
        return concurrency.concurrent_for(batch, CATALOG, run=run).aggregate_tps

    steady = agg(None)
    full_waves = agg(concurrency.ServingRun(1024, 1024, 96))
    tail = agg(concurrency.ServingRun(1024, 1024, 100))  # 3 full waves and one of 4 requests
    assert tail < full_waves < steady


def test_chat_line_and_ask_json_show_the_same_figures_and_the_fitted_band() -> None:
    reply = answer("4090 qwen3 8b vllm 20 concurrent users", CATALOG)
    figures = next(r["concurrency"] for r in reply.rows if "concurrency" in r)
    m = re.search(
        r"~(\d+) tok/s in all, ~(\d+) tok/s each \(batched model, each chat ~\w+ deep; "
        r"likely (\d+)–(\d+) in all, (\d+)–(\d+)",
        reply.text,
    )
    assert m, reply.text
    shown = [int(g) for g in m.groups()]
    low, high = figures["aggregate_range"]
    each_low, each_high = figures["per_user_range"]
    want = [figures["aggregate_tps"], figures["per_user_tps"], low, high, each_low, each_high]
    assert shown == [round(x) for x in want]
    band = CATALOG.tables["concurrency"]["default"]["band"]
    assert low == pytest.approx(figures["aggregate_tps"] * band["low"], abs=0.15)
    assert high == pytest.approx(figures["aggregate_tps"] * band["high"], abs=0.15)


def test_unseen_phrasing_gets_the_band_in_chinese() -> None:
    reply = answer("两张 3090 跑 qwen2.5 14b，同时 12 个人用，总吞吐大概多少", CATALOG)
    assert reply.query is not None and reply.query.users == 12
    assert "12 个并发" in reply.text and "大致范围" in reply.text


def test_workload_of_a_row_from_its_notes() -> None:
    rows = _load("concurrency_rows")

    class Row:
        file, line, gpu, gpu_count, model, framework, backend, phase, tps, source = (
            "x.csv",
            2,
            "H100",
            1,
            "m",
            "vLLM",
            "CUDA",
            "decode",
            100.0,
            "s",
        )
        notes = "vllm bench serve: 100 req, ISL/OSL 1024/1024, mean TPOT 12.5 ms"

    work = rows.workload(Row(), "1024/1024", 32)
    assert work.run == concurrency.ServingRun(1024, 1024, 100) and work.per_user == 80.0
    assert work.depth == 1024 + 512
    Row.notes = "llama-batched-bench S_TG t/s (decode only, summed over B=8 sequences); PP 512, TG 32"
    work = rows.workload(Row(), "512", 8)
    assert work.run is None and work.depth == 528 and work.per_user is None
    assert rows.users_of(Row(), ()) == 8


def test_bench_prices_each_concurrent_row_as_the_chat_does() -> None:
    """Every mapped concurrency>1 row: the bench's figure is concurrent_for's for the row's setup
    (no second pricing path), and the shipped fit keeps the train rows' median error low."""
    fit = _load("fit_concurrency")
    if not fit.bench.DEFAULT_CSVS[0].exists():
        pytest.skip("../shared/reference is not on this machine")
    items, _ = fit.load_items(CATALOG)
    assert len(items) >= 30
    errors = []
    for item in items:
        case = item.case
        got = case.price(CATALOG)
        req, work = case.request, case.work
        batch = concurrency.Batch(
            req.setup,
            req.model,
            case.quant,
            work.users,
            work.depth,
            case.framework,
            backend=case.backend,
            kv_pool_gib=work.kv_pool_gib,
            memory_utilization=work.memory_utilization,
        )
        direct = concurrency.concurrent_for(batch, CATALOG, run=work.run)
        assert got == direct
        if item.split == "train":
            errors.append(abs(got.aggregate_tps / case.row.tps - 1))
    # In-sample after the fit: 14 %; the prior parameters gave 21 % (the code before the fit: 24 %).
    assert statistics.median(errors) < 0.2


def test_estimate_json_users_gives_the_chat_lines_figures() -> None:
    """`estimate --users N --json`: each fitting row carries the figures the chat's concurrency line
    gives for the same setup (one figure per cell); without --users the rows are as before."""
    from bot.cli.estimate import answer as estimate_answer

    # The chat prices each of the N users holding its prompt and a reply (512 + 512 tokens): the
    # same depth asked of `estimate`.
    request = {
        "gpu": "4090",
        "model": "qwen3 8b",
        "framework": "vllm",
        "quant": ["FP8"],
        "ctx": [8192],
        "depth": 1024,
    }
    result, ok = estimate_answer({**request, "users": 20})
    assert ok
    figures = result["rows"][0]["concurrency"]
    chat = answer("4090 qwen3 8b vllm fp8 20 concurrent users", CATALOG)
    line = next(r["concurrency"] for r in chat.rows if "concurrency" in r)
    assert {k: figures[k] for k in line} == line
    assert figures["kv_gib"] == pytest.approx(20 * result["rows"][0]["kv_gib"], abs=0.02)
    plain, _ = estimate_answer(request)
    assert "concurrency" not in plain["rows"][0]
    assert {k: v for k, v in result["rows"][0].items() if k != "concurrency"} == plain["rows"][0]


def test_the_kv_pool_caps_a_paged_engines_running_batch() -> None:
    """vLLM holds as many sequences as its KV pool has room for: past that the aggregate is flat,
    each user's share falls as 1/N, and the knee and the KV-bound maximum are said."""
    req = _request("a100 80gb", "qwen2.5 7b", "BF16", "vllm")

    def at(users: int, pool: float | None = 5.0) -> concurrency.ConcurrentSpeed:
        batch = concurrency.Batch(req.setup, req.model, "BF16", users, 2048, "vllm", kv_pool_gib=pool)
        return concurrency.concurrent_for(batch, CATALOG)

    # 5 GiB at 2048 tokens of 56 KiB each: 45 sequences.
    assert at(64).max_seqs == 45
    assert at(64).aggregate_tps == at(200).aggregate_tps == at(45).aggregate_tps
    assert at(200).per_user_tps == pytest.approx(at(45).aggregate_tps / 200, abs=0.1)
    # The engine's own pool (0.92 of 80 GB less weights and reserve) is the scheduler's 256 cap.
    assert at(64, None).max_seqs == 256 and at(64, None).aggregate_tps > at(64).aggregate_tps
    knee = at(8).knee_users
    assert knee is not None and knee > 1
    before, after = at(knee - 1), at(knee)
    single = at(1).per_user_tps
    assert before.per_user_tps > single / 2 >= after.per_user_tps - 0.1


def test_llama_server_slots_are_not_capped_but_say_their_maximum() -> None:
    req = _request("rtx 4090", "qwen3 8b", "Q4_K_M", "llama.cpp")
    few = concurrency.concurrent_for(concurrency.Batch(req.setup, req.model, "Q4_K_M", 4, 32768), CATALOG)
    many = concurrency.concurrent_for(concurrency.Batch(req.setup, req.model, "Q4_K_M", 64, 32768), CATALOG)
    assert few.max_seqs == many.max_seqs and many.max_seqs is not None and many.max_seqs < 64
    assert many.aggregate_tps > few.aggregate_tps  # -np N allocates its slots; no scheduler queue
    cell = concurrency.as_json(many, "Q4_K_M")
    assert cell["max_seqs"] == many.max_seqs and cell["knee_users"] == many.knee_users


@pytest.mark.parametrize(
    ("context", "notes", "expected"),
    [
        ("1024/128", "vllm bench serve", (1024, 128)),
        ("8K/1K", "vllm bench serve", (8192, 1024)),
        ("", "vllm bench serve --random-input-len 2048 --random-output-len 256", (2048, 256)),
        ("", "sglang.bench_serving ISL 4K OSL 1K", (4096, 1024)),
        ("", "vllm bench serve, input 512 / output 64", (512, 64)),
        ("", "vllm bench serve, 1000 prompts, dataset random", (1024, 128)),
        ("", "vllm bench serve on ShareGPT", (215, 200)),
        ("", "SGLang batch 32 decode", (0, 0)),
    ],
)
def test_serving_lengths_from_the_ways_benchmarks_print_them(
    context: str, notes: str, expected: tuple[int, int]
) -> None:
    assert _load("concurrency_rows").lengths(context, notes) == expected


def test_a_logged_kv_pool_and_num_prompts_are_read() -> None:
    rows = _load("concurrency_rows")

    class Row:
        file, line, gpu, gpu_count, model, framework, backend, phase, tps, source = (
            "x.csv", 2, "A100", 2, "m", "vLLM", "CUDA", "decode", 100.0, "s",
        )  # fmt: skip
        notes = (
            "benchmark_serving.py --num-prompts 50 --gpu-memory-utilization 0.5; "
            "'Available KV cache memory: 5.01 GiB'"
        )

    work = rows.workload(Row(), "1024/1024", 50)
    assert work.run == concurrency.ServingRun(1024, 1024, 50)
    assert work.kv_pool_gib == pytest.approx(10.02) and work.memory_utilization == 0.5
