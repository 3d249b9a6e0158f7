"""The chart is never empty and speaks the asker's language (issue 25)."""

from __future__ import annotations

import pytest

from core.ask.answer import answer, chart, estimate_for
from core.catalog.loader import Catalog, default_catalog
from core.render.chart import chart_grid, chart_svg


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


def test_one_cell_is_drawn_with_its_neighbours_against_usable_memory(catalog: Catalog) -> None:
    # The README's own example: one cell that doesn't fit; its chart used to be empty.
    query = answer("4090 qwen3 32b q4 32k", catalog).query
    assert query is not None
    est = estimate_for(query, catalog)
    assert len(est.rows) == 1
    grid = chart_grid(est, catalog)
    assert grid.asked == {("Q4_K_M", 32768)}
    assert len(grid.quants) >= 3 and "Q4_K_M" in grid.quants
    assert len(grid.contexts) >= 3 and 32768 in grid.contexts
    assert grid.anything_runs  # the speed panel has points (the shorter contexts fit)
    assert grid.cells[("Q4_K_M", 32768)] is est.rows[0]  # the asked cell keeps its own figures
    assert grid.usable_gib == pytest.approx(est.usable.total_gib)
    assert chart_grid(est).quants == ("Q4_K_M",)  # without a catalog: only what the answer has


def test_nothing_fits_still_draws_the_ways_out(catalog: Catalog) -> None:
    query = answer("3060 8gb llama 3 70b q8 128k", catalog).query
    assert query is not None
    grid = chart_grid(estimate_for(query, catalog), catalog)
    assert not grid.anything_runs
    assert any(grid.way_out_points(q) for q in grid.quants)
    svg = chart_svg(estimate_for(query, catalog), "en", catalog)
    assert "nothing fits as asked" in svg


def test_full_grid_is_drawn_as_it_is(catalog: Catalog) -> None:
    query = answer("V100 32G 27B 多少 token", catalog).query
    assert query is not None
    est = estimate_for(query, catalog)
    grid = chart_grid(est, catalog)
    assert grid.asked == frozenset() and len(grid.cells) == len(est.rows)


def test_svg_labels_are_in_the_asker_s_language(catalog: Catalog) -> None:
    query = answer("V100 32G 27B 多少 token", catalog).query
    assert query is not None
    est = estimate_for(query, catalog)
    zh = chart_svg(est, "zh", catalog)
    assert "生成速度 tok/s 随上下文" in zh and "上下文" in zh and "可用 31.6 GiB" in zh
    en = chart_svg(est, "en", catalog)
    assert "decode tok/s vs context" in en and "上下文" not in en


def test_png_for_the_chat_is_drawn_for_one_cell(catalog: Catalog) -> None:
    query = answer("4090 qwen3 32b q4 32k", catalog).query
    assert query is not None
    png = chart(query, catalog)
    assert png.startswith(b"\x89PNG") and len(png) > 20_000
