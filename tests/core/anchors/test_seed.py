"""Published anchors from catalogs/published_anchors.csv: mapped ids, stable fingerprints, dates."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.anchors.anchor_index import AnchorIndex
from core.anchors.seed import PUBLISHED_CSV, as_approved, published_anchors

from .builders import CATALOG

REPO = Path(__file__).resolve().parents[3]
REFERENCE = REPO.parent / "shared" / "reference" / "measured_calibration.csv"


def test_rows_map_to_catalog_and_are_published() -> None:
    subs = published_anchors(CATALOG)
    # 139 from measured_calibration.csv, 178 from measured_calibration_backends.csv (43) and
    # catalogs/measurements/published_extra.csv (134): fully on the cards, one stream. 317 since the
    # MI50 Nemotron-3-Nano-30B-A3B row (llama.cpp#18896) maps to its catalog entry; 318 since the
    # Apple M5 Max entry gives its measured row a card; 339 with the 2026-12-01 published_extra.csv
    # additions (issue 11 item 9, second batch: rows fully on the card, one stream); 520 once the
    # catalog knows GLM-4.7-Flash, NVFP4, MLX-6BIT and the other issue-11 names (14 more rows map);
    # 542 with Ministral 3 8B/14B, Mistral-Large-2407 and R1-Distill-Qwen-1.5B in the catalog (22 more);
    # 568 with issue 23's multi-GPU split-mode batch and the Devstral 2 entry (26 more); 574 with the
    # Nemotron-3-Super (5 Strix Halo rows) and Command R+ 08-2024 (6x 3090) entries; 584 with the
    # torchao weight-only quants (INT8-WO, INT4-WO-G64: 4 A100 rows) and AutoRound read as GPTQ-INT4
    # (6 Arc 140V rows); 614 with XiongjieDai's Llama-3-8B rows on 2-8 cards (30 setups x quant);
    # 610 without the 4 rows catalogs/measurements/not_comparable.toml lists (text-generation-webui's
    # ExLlamav2_HF loader, an early ExLlamaV3 build, a gfx906 vLLM fork).
    assert len(subs) == 610
    for s in subs:
        m = s.measurement
        assert m.gpu_id in CATALOG.gpus and m.model_id in CATALOG.models and m.quant in CATALOG.quants
        assert s.origin == "published" and s.chat_id == "" and s.submitter.platform == "published"
        assert s.source and s.source.startswith("https://") and s.source_date
        assert m.decode_tps > 0 and s.submitter.name
    assert any(s.measurement.prefill_tps for s in subs)  # tg rows carry their pp pair


def test_fingerprints_stable_and_unique() -> None:
    a, b = published_anchors(CATALOG), published_anchors(CATALOG)
    assert [s.fingerprint for s in a] == [s.fingerprint for s in b]
    assert len({s.fingerprint for s in a}) == len(a)
    assert all(s.fingerprint.startswith("published:") for s in a)


def test_known_row_and_date() -> None:
    subs = published_anchors(CATALOG)
    row = next(s for s in subs if s.submitter.name == "XiongjieDai" and s.source_date == "2024-05")
    assert row.created_at == datetime(2024, 5, 1, tzinfo=UTC)
    assert row.measurement.framework == "llama.cpp" and row.submitter.user_id == "github.com"


def test_rows_of_the_other_measurement_files() -> None:
    """published_extra.csv: llama.cpp's DGX Spark bench, tg32 @ d32768 paired with its pp2048."""
    subs = published_anchors(CATALOG)
    row = next(
        s
        for s in subs
        if s.measurement.gpu_id == "dgx-spark-gb10"
        and s.measurement.model_id == "gpt-oss-20b"
        and s.measurement.depth == 32768
    )
    m = row.measurement
    assert (m.decode_tps, m.prefill_tps, m.prompt_tokens) == (59.85, 1899.37, 2048)
    assert m.framework == "llama.cpp" and m.backend == "cuda" and m.flash_attn is True
    assert (row.source or "").endswith("/benches/dgx-spark.md") and row.source_date == "2025-11"
    assert row.submitter.name == "ggml-org"


def test_rows_outside_the_catalog_are_dropped(tmp_path: Path) -> None:
    text = PUBLISHED_CSV.read_text(encoding="utf-8").splitlines()
    header, first = text[0], text[1]
    bad = first.replace(first.split(",")[1], "no-such-gpu", 1)
    path = tmp_path / "p.csv"
    path.write_text("\n".join([header, first, bad]) + "\n", encoding="utf-8")
    assert len(published_anchors(CATALOG, path)) == 1


def test_as_approved_builds_an_index() -> None:
    subs = as_approved(published_anchors(CATALOG))
    assert all(s.id < 0 and s.status == "approved" for s in subs)
    index = AnchorIndex(subs, CATALOG)
    assert len(index) == len(subs)


@pytest.mark.skipif(not REFERENCE.exists(), reason="shared reference data not present (CI)")
def test_generated_file_is_up_to_date() -> None:
    script = REPO / "scripts" / "build_published_anchors.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
