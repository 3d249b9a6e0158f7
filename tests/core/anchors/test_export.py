"""The open data set: CSV and JSON of approved anchors, with names, credit and no private fields."""

from __future__ import annotations

import json
from dataclasses import replace

from core.anchors.export import FIELDS, export_csv, export_json, parse_csv
from core.storage.records import EstimateSnapshot, Submission

from .builders import CATALOG, make


def _anchors() -> list[Submission]:
    log = "llama_perf_context_print: eval time\n" * 5000
    with_log = make(
        3,
        21.5,
        name="小明",
        evidence=log,
        notes="x" * 1000,
        flash_attn=True,
        prefill_tps=812.0,
        prompt_tokens=512,
    )
    with_log = replace(with_log, estimate=EstimateSnapshot(18.0, 24.0, 30.0, engine_version="cal-7"))
    return [
        make(2, 24.0, name="alice", evidence="https://example.org/log/1", context=4096, backend="cuda"),
        with_log,
        make(4, 22.0, name="XiongjieDai", origin="published"),
        make(5, 99.0, status="pending"),
        make(6, 99.0, status="withdrawn"),
    ]


def test_json_and_csv_round_trip() -> None:
    anchors = _anchors()
    data = json.loads(export_json(anchors, CATALOG))
    rows = data["anchors"]
    assert data["schema"] == 1 and data["fields"] == list(FIELDS)
    assert [r["id"] for r in rows] == [2, 3, 4]  # approved only, by id
    assert parse_csv(export_csv(anchors, CATALOG)) == rows  # the CSV holds exactly what the JSON holds
    first = rows[0]
    assert first["gpu_name"] == "Tesla V100 PCIe 32GB" and first["model_name"] == "gemma-3-27b-it"
    assert first["credit"] == "alice" and first["context"] == 4096 and first["decode_tps"] == 24.0
    assert first["evidence_url"] == "https://example.org/log/1"
    published = rows[2]
    assert published["origin"] == "published" and published["source"] == "https://example.org/bench"
    assert published["date"] == "2024-05"
    assert rows[1]["flash_attn"] is True and rows[1]["estimate_decode_mid"] == 24.0
    assert rows[1]["engine_version"] == "cal-7"


def test_no_private_fields_and_no_big_logs() -> None:
    anchors = _anchors()
    blob = export_json(anchors, CATALOG).decode() + export_csv(anchors, CATALOG).decode("utf-8-sig")
    for sub in anchors:
        assert sub.submitter.user_id not in blob  # only display names leave
    assert "chat" not in json.loads(export_json(anchors, CATALOG))["anchors"][0]
    assert "eval time" not in blob  # a pasted log is never exported, only its size
    row = json.loads(export_json(anchors, CATALOG))["anchors"][1]
    assert row["evidence_url"] is None and row["evidence_log_chars"] > 100_000
    assert len(row["notes"]) == 300
    assert row["credit"] == "小明"


def test_csv_opens_in_spreadsheets() -> None:
    data = export_csv(_anchors(), CATALOG)
    assert data.startswith(b"\xef\xbb\xbf")  # BOM: Excel reads the Chinese names right
    assert data.decode("utf-8-sig").splitlines()[0] == ",".join(FIELDS)


def test_default_catalog_when_none_given() -> None:
    assert json.loads(export_json(_anchors()))["anchors"][0]["gpu_name"] == "Tesla V100 PCIe 32GB"
