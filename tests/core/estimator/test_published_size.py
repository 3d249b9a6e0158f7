"""The estimator on published GGUF files: the weights column and file_gib from the file, the per-tensor
figure where nobody published the quant, printed-rounded sizes and implausible files."""

from __future__ import annotations

import dataclasses

import pytest

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.catalog.published_files import PublishedFile, catalog_files
from core.estimator.serialize import estimate_dict
from core.estimator.weights import gguf_meta_bytes, weight_breakdown, with_published
from core.render.detail import quant_detail
from core.render.doc import Para

CAT = default_catalog()
GIB = 2**30


def test_a_curated_published_file_sets_the_weights_column() -> None:
    # bartowski's gemma-2-27b IQ2_XS is larger than llama.cpp's default IQ2_XS mix: the file counts.
    model, quant = CAT.models["gemma-2-27b"], CAT.quants["IQ2_XS"]
    found = catalog_files()["gemma-2-27b"]["IQ2_XS"]
    wb = weight_breakdown(model, quant, CAT)
    assert wb.published == found and wb.file_bytes == found.bytes
    assert abs(wb.file_bytes - (wb.computed_total_bytes + gguf_meta_bytes(model.vocab))) > found.tolerance
    # GPU: the tensors less the embedding table kept in host RAM (+ the tied head's GPU copy).
    tensors = found.bytes - gguf_meta_bytes(model.vocab)
    head = wb.output_bytes if wb.output_tied else 0
    assert wb.gpu_bytes_full_offload == pytest.approx(tensors - wb.token_embd_bytes + head, abs=model.layers)
    assert (
        sum(wb.layer_bytes)
        + wb.token_embd_bytes
        + wb.other_bytes
        + (0 if wb.output_tied else wb.output_bytes)
        == wb.total_bytes
    )


def test_a_rounded_size_the_computation_matches_keeps_the_finer_figure() -> None:
    # ggml-org's gpt-oss-20b MXFP4 "12.1 GB" (a PR quoting it): the per-tensor 11.27 GiB agrees with
    # it within its rounding, so the bytes stay per-tensor and the file is only named.
    model, quant = CAT.models["gpt-oss-20b"], CAT.quants["MXFP4"]
    wb = weight_breakdown(model, quant, CAT)
    assert wb.published is not None and wb.published.repo == "ggml-org/gpt-oss-20b-GGUF"
    assert wb.total_bytes == wb.computed_total_bytes and wb.total_gib == pytest.approx(11.27, rel=0.005)


def test_an_implausible_file_is_not_used() -> None:
    model, quant = CAT.models["qwen3-8b"], CAT.quants["Q4_K_M"]
    wb = dataclasses.replace(weight_breakdown(model, quant, CAT), published=None, computed_total_bytes=0)
    wrong = PublishedFile("Q4_K_M", "someone/Other-GGUF", ("x-Q4_K_M.gguf",), wb.file_bytes * 2)
    assert with_published(wb, wrong, model.vocab) is wb
    close = PublishedFile("Q4_K_M", "someone/X-GGUF", ("x-Q4_K_M.gguf",), wb.file_bytes + 50 * 2**20)
    used = with_published(wb, close, model.vocab)
    assert used.published == close and used.total_bytes == pytest.approx(wb.total_bytes + 50 * 2**20, abs=64)
    assert used.active_bytes_per_token > wb.active_bytes_per_token  # speed reads the larger layers


def test_json_and_in_full_name_where_the_size_came_from() -> None:
    reply = answer("3090 gemma 2 27b IQ2_XS", CAT)
    assert reply.status == "answer" and reply.query is not None, reply.text
    est = estimate_for(reply.query, CAT)
    found = catalog_files()["gemma-2-27b"]["IQ2_XS"]
    rows = [r for r in estimate_dict(est, CAT)["rows"] if r["quant"] == "IQ2_XS"]
    assert rows and rows[0]["file_gib"] == round(found.bytes / GIB, 2)
    assert rows[0]["file_source"]["repo"] == found.repo
    text = " ".join(p.text for p in quant_detail(est, "IQ2_XS", CAT, "en") if isinstance(p, Para))
    assert found.repo in text and "File size" in text
    # A model nobody's file is known for: computed, and "in full" says so.
    reply = answer("4090 跑 qwen3 14b", CAT)
    assert reply.status == "answer" and reply.query is not None, reply.text
    est = estimate_for(reply.query, CAT)
    assert all(r["file_source"] is None for r in estimate_dict(est, CAT)["rows"])
    detail = quant_detail(est, None, CAT, "zh")
    assert any("按张量逐个计算" in p.text for p in detail if isinstance(p, Para))
