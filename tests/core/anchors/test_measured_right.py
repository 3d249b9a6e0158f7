"""Issue 20 item 3: measured anchors shown only for the card they ran on, and "nearest measured" only
when it is related (a same-kind model of similar size on the same card, or the same model on a close
card with the same number of cards). Written before the change, from the rule, not from the code."""

from __future__ import annotations

import csv
import re

import pytest

from core.anchors.seed import PUBLISHED_CSV, as_approved, published_anchors
from core.ask.answer import answer
from core.storage.records import Submission

from .builders import CATALOG, GPU, MODEL, index_of, make

PUBLISHED = index_of(*as_approved(published_anchors(CATALOG)))
_GB = re.compile(r"(\d+(?:\.\d+)?)\s*GB", re.I)


def _text(question: str, index: object = None) -> str:
    reply = answer(question, CATALOG, lang="en", anchors=index or PUBLISHED)  # type: ignore[arg-type]
    assert reply.status == "answer"  # an error reply has no anchor lines to check
    return reply.text


def _lines(text: str, start: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(start)]


# --- the published file: each row on the card (and memory) its source names -----------------------


def _published_rows() -> list[dict[str, str]]:
    with PUBLISHED_CSV.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_published_row_memory_matches_its_source_label() -> None:
    """A label naming a size ("RTX 4090 48GB (modded)", "RTX A4000 16GB", "A100 80GB") is the
    memory the row is filed under: the card's own, or the row's recorded per-card memory."""
    wrong = []
    for r in _published_rows():
        gpu = CATALOG.gpus[r["gpu_id"]]
        named = _GB.findall(r["gpu_label"])
        recorded = float(r.get("gpu_memory_gib") or gpu.memory_gib)
        if named and float(named[0]) != recorded:
            wrong.append((r["gpu_id"], recorded, r["gpu_label"]))
    assert wrong == []


def test_published_row_memory_is_a_size_the_card_comes_in() -> None:
    """Recorded memory other than the catalog's is a size of that chip: a unified-memory option, or
    a larger (modded) discrete card; never smaller (a 16 GB A4000 filed as the 48 GB A40)."""
    for r in _published_rows():
        gpu = CATALOG.gpus[r["gpu_id"]]
        mem = float(r.get("gpu_memory_gib") or gpu.memory_gib)
        if mem == gpu.memory_gib:
            continue
        if gpu.unified_memory:
            assert mem in gpu.memory_options_gib or mem > gpu.memory_gib, r
        else:
            assert gpu.memory_gib < mem <= 2 * gpu.memory_gib, r


def test_modded_4090_and_a4000_rows_are_refiled() -> None:
    rows = _published_rows()
    modded = [r for r in rows if "48GB (modded)" in r["gpu_label"]]
    assert modded and all(r["gpu_id"] == "rtx-4090" and r["gpu_memory_gib"] == "48" for r in modded)
    a4000 = [r for r in rows if "RTX A4000" in r["gpu_label"]]
    assert a4000 and all(r["gpu_id"] == "rtx-a4000" for r in a4000)
    # gparemsky's A100 reports are named by model-size tier ("A100_48GB", "A100_24GB"); the card is
    # the 80 GB A100 (MAIN_RUNME_benchmark.sh: "A100 (80GB running 48GB models)").
    a100 = [r for r in rows if "gparemsky" in r["source_label"] and r["gpu_id"].startswith("a100")]
    assert a100 and all(CATALOG.gpus[r["gpu_id"]].memory_gib == 80.0 for r in a100)


# --- exact "Measured" lines ---------------------------------------------------------------------


def test_24gb_4090_70b_shows_no_measured_from_the_48gb_card() -> None:
    text = _text("4090 llama 3.1 70b q4_k_m")
    assert not any("gparemsky" in line for line in _lines(text, "Measured:"))
    assert "48GB" not in "\n".join(_lines(text, "Nearest measured") + _lines(text, "Measured"))


def test_48gb_4090_70b_shows_the_modded_cards_runs() -> None:
    text = _text("4090 48g 魔改 llama 3.1 70b q4_k_m")
    assert any("gparemsky" in line and "19 tok/s" in line for line in _lines(text, "Measured:"))


def test_community_run_with_memory_counts_for_that_memory_only() -> None:
    index = index_of(make(1, 19.0, gpu="rtx-4090", model="llama-3.1-70b", memory_gib=48.0))
    small = _text("4090 llama 3.1 70b q4_k_m", index)
    big = _text("4090 48g 魔改 llama 3.1 70b q4_k_m", index)
    assert not _lines(small, "Measured: 1 run")
    assert _lines(big, "Measured: 1 run")


# --- "Nearest measured" ---------------------------------------------------------------------------


def _near(*subs: Submission, gpu: str = GPU, model: str = MODEL) -> list[tuple[str, str, int]]:
    near = index_of(*subs).nearest(gpu, 1, model)
    return [(n.summary.gpu_id, n.summary.model_id, n.summary.gpu_count) for n in near]


def test_moe_is_never_nearest_for_a_dense_model() -> None:
    # gemma-3-27b is dense; qwen3-30b-a3b and gpt-oss-20b are MoE of similar total size.
    assert _near(make(1, 90.0, model="qwen3-30b-a3b"), make(2, 120.0, model="gpt-oss-20b")) == []


def test_dense_model_of_similar_size_on_the_same_card_is_nearest() -> None:
    assert _near(make(1, 22.0, model="qwen3-32b")) == [(GPU, "qwen3-32b", 1)]


def test_far_size_is_not_nearest() -> None:
    assert _near(make(1, 80.0, model="qwen3-8b"), make(2, 5.0, model="llama-3.1-405b")) == []


def test_four_card_box_is_not_nearest_for_one_card() -> None:
    subs = (
        make(1, 30.0, gpu="mi50-32g", count=4),  # same model, other card, 4 cards
        make(2, 30.0, model="qwen3-32b", count=4),  # same card, related model, 4 cards
        make(3, 30.0, count=4),  # same card and model on 4 cards
    )
    assert _near(*subs) == []


def test_same_model_on_a_card_with_far_more_memory_is_not_nearest() -> None:
    assert _near(make(1, 40.0, gpu="a100-80g-sxm4"), make(2, 40.0, gpu="h100-sxm")) == []


def test_same_model_on_a_close_card_is_nearest() -> None:
    near = _near(make(1, 25.0, gpu="tesla-v100-32g-sxm2"), make(2, 35.0, gpu="rtx-3090"))
    assert ("tesla-v100-32g-sxm2", MODEL, 1) in near and ("rtx-3090", MODEL, 1) in near


def test_3090_qwen3_32b_nearest_names_no_moe_and_no_multi_card_box() -> None:
    text = _text("3090 qwen3 32b q4")
    near = " ".join(_lines(text, "Nearest measured")).lower()
    for moe in ("gpt-oss", "a3b", "mixtral", "deepseek-v", "qwen3-30b"):
        assert moe not in near
    assert "4×" not in near and "8×" not in near


@pytest.mark.parametrize(
    "question",
    ["3090 qwen3 32b q4", "4090 qwen3 32b q4 32k", "3060 12g llama 3.1 8b", "4090 llama 3.1 70b q4_k_m"],
)
def test_nearest_lines_name_related_models_only(question: str) -> None:
    """Every model a nearest line names is of the asked kind (dense vs MoE) within 3x the size,
    or the asked model itself."""
    reply = answer(question, CATALOG, lang="en", anchors=PUBLISHED)
    assert reply.status == "answer"
    asked = CATALOG.models[reply.query.model_id] if reply.query and reply.query.model_id else None
    assert asked is not None
    for line in _lines(reply.text, "Nearest measured") + [
        line for line in reply.text.splitlines() if ", same model:" in line or line.startswith("same card,")
    ]:
        for m in CATALOG.models.values():
            if f" {m.name}:" in line and m.id != asked.id:
                assert m.is_moe == asked.is_moe, line
                assert max(m.params_b, asked.params_b) / min(m.params_b, asked.params_b) <= 3.0, line


def test_a_discrete_cards_run_is_never_nearest_for_a_mac_and_back() -> None:
    """Unified memory and a discrete card don't speak for each other, however close their memory
    and bandwidth (an RTX A6000 run under an M4 Max question, an M3 Max run under an A6000 one)."""
    a6000 = make(1, 34.0, gpu="rtx-a6000", model="qwen3-32b")
    assert _near(a6000, gpu="apple-m4-max-40c", model="qwen3-32b") == []
    mac = make(2, 14.0, gpu="apple-m3-max-40c", model="qwen3-32b")
    assert _near(mac, gpu="rtx-a6000", model="qwen3-32b") == []
    # a related card of the same kind still is
    assert _near(make(3, 30.0, gpu="rtx-6000-ada", model="qwen3-32b"), gpu="rtx-a6000", model="qwen3-32b")
