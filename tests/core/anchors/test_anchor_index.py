"""AnchorIndex: exact lookups, per-quant summaries, nearest setups, and swaps after approve/withdraw."""

from __future__ import annotations

from datetime import UTC, datetime

from core.anchors.anchor_index import AnchorIndex, summarize

from .builders import CATALOG, GPU, MODEL, index_of, make


def test_exact_only_approved_and_only_this_combination() -> None:
    index = index_of(
        make(1, 24.0),
        make(2, 25.0, status="pending"),
        make(3, 26.0, status="withdrawn"),
        make(4, 40.0, count=2),
        make(5, 30.0, model="qwen3-32b"),
    )
    assert [s.id for s in index.exact(GPU, 1, MODEL)] == [1]
    assert [s.id for s in index.exact(GPU, 2, MODEL)] == [4]
    assert index.exact("rtx-3090", 1, MODEL) == ()
    assert len(index) == 3 and 2 not in index


def test_summary_median_range_credits_per_quant() -> None:
    old = datetime(2026, 1, 5, tzinfo=UTC)
    index = index_of(
        make(1, 20.0, name="alice", when=old),
        make(2, 24.0, name="bob", context=4096),
        make(3, 30.0, name="carol", context=4096),
        make(4, 12.0, name="dave", quant="Q8_0"),
        make(5, 22.0, name="pub", origin="published"),
    )
    q4, q8 = index.summaries(GPU, 1, MODEL)  # most runs first; never one median across quants
    assert (q4.quant, q4.count, q4.median_decode, q4.low_decode, q4.high_decode) == (
        "Q4_K_M",
        4,
        23.0,
        20.0,
        30.0,
    )
    assert q8.quant == "Q8_0" and q8.count == 1
    assert q4.community == 3
    assert [c.name for c in q4.credits] == ["carol", "bob", "alice", "pub"]  # newest first
    assert q4.credits[2].date == "2026-01"
    published = next(c for c in q4.credits if c.origin == "published")
    assert published.date == "2024-05" and published.url == "https://example.org/bench"
    assert q4.contexts[0] == 4096


def test_nearest_same_card_picks_similar_size() -> None:
    index = index_of(
        make(1, 80.0, model="qwen3-8b"),
        make(2, 22.0, model="qwen3-32b"),
        make(3, 9.0, model="llama-3-70b"),
    )
    near = index.nearest(GPU, 1, MODEL, limit=3)
    same_gpu = [n.summary.model_id for n in near if n.relation == "same_gpu"]
    assert same_gpu[0] == "qwen3-32b"  # 32B is nearer 27B than 8B or 70B
    assert "qwen3-8b" not in same_gpu  # 27/8 = 3.3x apart: beyond max_params_ratio


def test_nearest_same_model_prefers_same_family_card() -> None:
    index = index_of(
        make(1, 35.0, gpu="rtx-4090"),
        make(2, 30.0, gpu="rtx-3090"),
        make(3, 25.0, gpu="tesla-v100-32g-sxm2"),
        make(4, 33.0, gpu="rx-7900-xtx"),
    )
    near = index.nearest(GPU, 1, MODEL, limit=4)
    assert [n.relation for n in near] == ["same_model"] * 4
    assert near[0].summary.gpu_id == "tesla-v100-32g-sxm2"
    assert near[-1].summary.gpu_id == "rx-7900-xtx"  # another vendor is furthest


def test_nearest_alternates_kinds_and_puts_other_count_first() -> None:
    index = index_of(
        make(1, 22.0, model="qwen3-32b"),
        make(2, 25.0, model="qwen2.5-32b"),
        make(3, 25.0, gpu="tesla-v100-32g-sxm2"),
        make(4, 26.0, count=2),
    )
    near = index.nearest(GPU, 1, MODEL, limit=3)
    assert [n.relation for n in near] == ["other_count", "same_gpu", "same_model"]


def test_nearest_prefers_asked_quant_of_a_setup() -> None:
    index = index_of(make(1, 22.0, model="qwen3-32b"), make(2, 12.0, model="qwen3-32b", quant="Q8_0"))
    assert index.nearest(GPU, 1, MODEL, quant="Q8_0")[0].summary.quant == "Q8_0"
    assert index.nearest(GPU, 1, MODEL, quant="Q4_K_M")[0].summary.quant == "Q4_K_M"


def test_with_added_and_without_make_new_versions() -> None:
    base = index_of(make(1, 24.0))
    added = base.with_added(make(2, 26.0, name="bob"))
    assert [s.id for s in base.exact(GPU, 1, MODEL)] == [1]  # the old index is unchanged
    assert [s.id for s in added.exact(GPU, 1, MODEL)] == [1, 2]
    assert added.summaries(GPU, 1, MODEL)[0].count == 2
    assert added.version != base.version and added != base
    removed = added.without(1).without(2)
    assert removed.exact(GPU, 1, MODEL) == () and removed.summaries(GPU, 1, MODEL) == ()
    assert removed.nearest(GPU, 2, MODEL) == ()
    assert removed.without(99) is removed
    assert base.with_added(make(3, 1.0, status="pending")).exact(GPU, 1, MODEL) == base.exact(GPU, 1, MODEL)
    # Re-adding an id replaces it (an edited anchor), never duplicates it.
    replaced = added.with_added(make(2, 28.0, name="bob"))
    assert sorted(s.measurement.decode_tps for s in replaced.exact(GPU, 1, MODEL)) == [24.0, 28.0]


def test_from_submissions_and_on_gpu_origin_filter() -> None:
    index = AnchorIndex.from_submissions([make(1, 24.0), make(2, 22.0, origin="published")], CATALOG)
    assert [s.id for s in index.on_gpu(GPU, origin="community")] == [1]
    assert len(index.on_gpu(GPU)) == 2


def test_summarize_is_usable_alone() -> None:
    s = summarize([make(1, 10.0), make(2, 14.0)])
    assert s.median_decode == 12.0 and s.count == 2
