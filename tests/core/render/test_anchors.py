"""The reply's anchor lines: measured runs, nearest runs, calibration, the call for runs; en + zh."""

from __future__ import annotations

import pytest

from core.anchors.calibrate import CalibrationInfo, calibrate
from core.ask.estimate_request import run_query
from core.render.anchors import anchor_section, calibration_line
from core.render.doc import Para, Pre, render
from tests.core.anchors.builders import CATALOG, index_of, make

EST = run_query({"gpu": "V100 32G", "model": "gemma-3-27b", "quant": ["Q4_K_M"], "ctx": [4096]}, CATALOG)


def _text(parts: tuple, target: str = "plain") -> str:  # noqa: ANN001
    return render(parts, target)


def test_exact_line_en() -> None:
    index = index_of(make(1, 20.0, name="alice", context=4096), make(2, 24.0, name="bob", context=4096),
                     make(3, 30.0, name="pub", origin="published", context=4096))  # fmt: skip
    text = _text(anchor_section(EST, index, CATALOG, "en"))
    assert "Measured: 3 runs, median 24 tok/s (20–30)" in text
    assert "by bob 2026-11" in text and "+1 more" in text  # two names shown, the rest counted
    assert "llama.cpp Q4_K_M 4K" in text
    assert "No real-machine record" not in text


def test_exact_line_zh() -> None:
    index = index_of(make(1, 20.0, name="小明"), make(2, 22.0, name="pub", origin="published"))
    text = _text(anchor_section(EST, index, CATALOG, "zh"))
    assert "实测:2 次,中位 21 tok/s" in text
    assert "小明 2026-11 实测" in text and "公开数据:pub 2024-05" in text
    assert "Measured" not in text


def test_call_for_submissions_when_nothing_measured() -> None:
    en = _text(anchor_section(EST, index_of(), CATALOG, "en"))
    zh = _text(anchor_section(EST, index_of(), CATALOG, "zh"))
    assert "No real-machine record for this combination yet" in en and "/submit" in en
    assert "本组合暂无真机记录" in zh and "署名" in zh


def test_only_published_still_asks_for_a_members_run() -> None:
    text = _text(anchor_section(EST, index_of(make(1, 22.0, origin="published")), CATALOG, "en"))
    assert "Measured: 1 run" in text and "/submit" in text


def test_nearest_lines_when_no_exact() -> None:
    index = index_of(make(1, 22.0, model="qwen3-32b", name="ann"), make(2, 25.0, gpu="tesla-v100-32g-sxm2"))
    parts = anchor_section(EST, index, CATALOG, "en")
    text = _text(parts)
    assert parts[0] == Para(text.splitlines()[0]) and "No real-machine record" in text.splitlines()[0]
    assert "Nearest measured: same card, Qwen3-32B: 22 tok/s (1 run, by ann 2026-11" in text
    assert "Tesla V100 SXM2 32GB, same model: 25 tok/s" in text
    zh = _text(anchor_section(EST, index, CATALOG, "zh"))
    assert "最接近的实测:同卡跑 Qwen3-32B:22 tok/s" in zh


def test_calibration_line_en_zh() -> None:
    info = CalibrationInfo(3, 1.08, 1.0, (1, 2, 3), decode_by_kind=(("kquant", 1.08),))
    assert "calibrated by 3 community measurements on this card (×1.08)" in calibration_line(info, "en")
    assert "not counted twice" in calibration_line(info, "en")
    assert "3 条群友实测校准(×1.08)" in calibration_line(info, "zh")
    spread = CalibrationInfo(1, 1.05, 1.0, (1,), decode_by_kind=(("kquant", 1.05), ("q8", 1.12)))
    assert "1 community measurement on" in calibration_line(
        spread, "en"
    ) and "×1.05–1.12" in calibration_line(spread, "en")


def test_section_has_calibration_when_applied() -> None:
    index = index_of(make(1, 40.0))
    est, info = calibrate(EST, index, CATALOG)
    text = _text(anchor_section(est, index, CATALOG, "en", info))
    assert "Speeds calibrated by 1 community measurement" in text


@pytest.mark.parametrize("target", ["plain", "telegram", "discord"])
def test_all_targets_prose_only(target: str) -> None:
    index = index_of(make(1, 20.0, name="<b>@everyone</b>"))
    parts = anchor_section(EST, index, CATALOG, "en")
    assert all(isinstance(p, Para) and not isinstance(p, Pre) for p in parts)
    text = _text(parts, target)
    if target == "telegram":
        assert "<b>" not in text and "&lt;b&gt;" in text
    if target == "discord":
        assert "@everyone" not in text  # defused
