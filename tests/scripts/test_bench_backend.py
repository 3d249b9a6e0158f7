"""scripts/bench_accuracy_setups.py prices each row on the backend it was measured on (issue 11
item 3: before the backend input, rows measured on Vulkan / ROCm were priced on another backend)."""

from __future__ import annotations

import csv

from tests.scripts.test_bench_accuracy_setups import COLUMNS, _row, bench


def test_a_vulkan_row_is_priced_on_vulkan_and_the_old_way_is_still_there(tmp_path) -> None:
    path = tmp_path / "rows.csv"
    rows = [
        _row(gpu="AMD Radeon RX 7900 XTX", model="Llama-3.1-8B-Instruct", params_b="8.03", quant="Q4_K_M",
             backend="Vulkan", test="tg", context_or_depth="128", tokens_per_s="95",
             source="https://example.org/v"),
        _row(gpu="NVIDIA GeForce RTX 4090", model="Llama-3.1-8B-Instruct", params_b="8.03", quant="Q4_K_M",
             backend="SYCL", test="tg", context_or_depth="128", tokens_per_s="100",
             source="https://example.org/s"),
    ]  # fmt: skip
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    vulkan, sycl = bench.read_csv(path)
    catalog = bench.default_catalog()
    query = bench._query(vulkan, catalog)
    assert isinstance(query, bench.EstimateQuery) and query.backend == "vulkan"
    on_row = bench.ask(vulkan, "train", catalog)
    chosen = bench.ask(vulkan, "train", catalog, row_backend=False)
    assert on_row.scored and on_row.est_backend == "vulkan"
    assert chosen.scored and chosen.est_backend == "rocm" and chosen.mid != on_row.mid
    assert bench.figures([on_row]).backend_differs == 0 and bench.figures([chosen]).backend_differs == 1
    # A backend the card check refuses (SYCL on an NVIDIA card) is priced on the estimator's choice
    # and counted as priced on another backend, not dropped.
    fallback = bench.ask(sycl, "train", catalog)
    assert fallback.scored and fallback.est_backend == "cuda"
    assert bench.figures([fallback]).backend_differs == 1
