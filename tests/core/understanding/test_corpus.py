"""The corpus of realistic questions: at least 90 % must be read fully right."""

from __future__ import annotations

from pathlib import Path

from core.catalog.loader import default_catalog
from core.understanding.corpus import load_corpus, score_case

CORPUS = Path(__file__).with_name("corpus.jsonl")


def test_corpus_is_big_enough() -> None:
    assert len(load_corpus(CORPUS)) >= 150


def test_corpus_share_right() -> None:
    catalog = default_catalog()
    results = [score_case(case, catalog) for case in load_corpus(CORPUS)]
    share = sum(r.right for r in results) / len(results)
    misses = "\n".join(f"{r.question}: {r.wrong}" for r in results if not r.right)
    assert share >= 0.90, f"{share:.1%} right; misses:\n{misses}"


def test_corpus_ids_exist() -> None:
    catalog = default_catalog()
    for case in load_corpus(CORPUS):
        assert case["gpu"] is None or case["gpu"] in catalog.gpus, case
        assert case["model"] is None or case["model"] in catalog.models, case
        for quant in case["quants"]:
            assert quant in catalog.quants, case
        assert case["framework"] is None or case["framework"] in catalog.frameworks, case
