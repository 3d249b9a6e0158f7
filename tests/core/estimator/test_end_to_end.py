"""Issue 23: the end-to-end output rate of "N tokens in, M out" (prefill included) against hand
computations, and on a real row."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.estimator.end_to_end import end_to_end, for_row
from core.estimator.estimate import EstimateRequest, Range, estimate
from core.estimator.setup import build_setup

CATALOG = default_catalog()


def test_hand_computation() -> None:
    # TTFT 1.0 s at 2000 tok/s prefill (1000..3000: 2.0 s slow, 0.667 s fast); decode 30/40/50.
    got = end_to_end(500, Range(30.0, 40.0, 50.0), 1.0, Range(1000.0, 2000.0, 3000.0))
    assert got is not None
    assert got.tps.mid == pytest.approx(500 / (1.0 + 500 / 40), rel=1e-3)  # 37.04
    assert got.tps.low == pytest.approx(500 / (2.0 + 500 / 30), rel=1e-3)  # 26.79
    assert got.tps.high == pytest.approx(500 / (2 / 3 + 500 / 50), rel=1e-3)  # 46.88
    assert got.seconds == pytest.approx(13.5, abs=0.01)
    assert got.ttft_s == pytest.approx(1.0) and got.decode_mid == pytest.approx(40.0)


def test_without_a_prefill_range_the_ttft_is_one_figure() -> None:
    got = end_to_end(100, Range(10.0, 20.0, 40.0), 5.0, None)
    assert got is not None
    assert got.tps.mid == pytest.approx(100 / (5 + 5), rel=1e-3)
    assert got.tps.low == pytest.approx(100 / (5 + 10), rel=1e-3)
    assert got.tps.high == pytest.approx(100 / (5 + 2.5), rel=1e-3)


def test_the_rate_is_below_decode_and_nears_it_for_long_replies() -> None:
    decode = Range(40.0, 42.0, 44.0)
    short = end_to_end(50, decode, 1.2, None)
    long = end_to_end(50_000, decode, 1.2, None)
    assert short is not None and long is not None
    assert short.tps.mid < long.tps.mid < decode.mid
    assert long.tps.mid == pytest.approx(decode.mid, rel=0.01)


@pytest.mark.parametrize("bad", [0, -5])
def test_no_figure_for_no_output(bad: int) -> None:
    assert end_to_end(bad, Range(1.0, 2.0, 3.0), 1.0, None) is None


def test_no_figure_where_the_row_does_not_run() -> None:
    assert end_to_end(500, None, 1.0, None) is None
    assert end_to_end(500, Range(1.0, 2.0, 3.0), None, None) is None


def test_a_real_row_against_its_own_figures() -> None:
    setup = build_setup(CATALOG.gpus["rtx-4090"], CATALOG)
    request = EstimateRequest(setup, CATALOG.models["qwen3-8b"], ("Q4_K_M",), (8192,), prompt=2000)
    row = estimate(request, CATALOG).rows[0]
    assert row.decode_tps is not None and row.ttft_s is not None
    got = for_row(row, 500)
    assert got is not None
    # decode at the row's depth is already the reply's average: M / (ttft + M / decode), no more
    assert got.tps.mid == pytest.approx(500 / (row.ttft_s + 500 / row.decode_tps.mid), rel=1e-3)
    assert got.seconds == pytest.approx(row.ttft_s + 500 / row.decode_tps.mid, rel=1e-3)
    assert got.tps.low <= got.tps.mid <= got.tps.high
