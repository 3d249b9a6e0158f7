"""Detail views for follow-ups and the chart."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.ask.answer import answer, chart, follow_up
from core.catalog.loader import default_catalog
from core.understanding.query import AskQuery, CardSpec, Hardware


@pytest.fixture(scope="module")
def catalog():
    return default_catalog()


@pytest.fixture(scope="module")
def query(catalog):
    return answer("V100 32G gemma 3 27b 多少 token", catalog).query


@pytest.mark.parametrize("target", ["plain", "telegram", "discord"])
@pytest.mark.parametrize("view", ["quant", "frameworks", "speculative"])
def test_views_render_and_fit(catalog, query, view: str, target: str) -> None:
    reply = follow_up(replace(query, lang="en", target=target), view, catalog, quant="Q4_K_M")
    assert reply.status == "answer", reply.text
    assert len(reply.text) <= (2000 if target == "discord" else 4096)


def test_quant_detail_has_the_seed_columns(catalog, query) -> None:
    text = follow_up(replace(query, lang="zh"), "quant", catalog, quant="Q6_K").text
    assert "ctx" in text and "KV" in text and "total" in text and "tok/s" in text
    assert "128K" in text and "KV 量化" in text  # 128K doesn't fit at f16 KV: its way out is shown
    assert "llama-server" in text


def test_frameworks_view_lists_every_runnable_command(catalog, query) -> None:
    text = follow_up(replace(query, lang="en"), "frameworks", catalog, quant="Q4_K_M").text
    assert "llama-server" in text and "ollama" in text and "vllm serve" in text
    assert "no —" in text  # frameworks that can't run it say why


def test_speculative_view(catalog, query) -> None:
    text = follow_up(replace(query, lang="en"), "speculative", catalog).text
    assert "draft" in text and "gemma-3-1b" in text


def test_unknown_view_and_bad_query_never_raise(catalog, query) -> None:
    assert follow_up(query, "nope", catalog).status == "help"
    bad = AskQuery(Hardware((CardSpec("no-such"),)), model_id=query.model_id)
    assert follow_up(bad, "quant", catalog).status == "error"
    assert follow_up(replace(query, model_id=None), "quant", catalog).status == "error"


def test_chart_png(catalog, query) -> None:
    pytest.importorskip("matplotlib")
    png = chart(query, catalog)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
