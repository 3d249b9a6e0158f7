"""One figure per cell (issue 11): the table, the way-out line, "in full" and the JSON of one question
come from one computation, so the same setup shows the same tok/s in every view."""

from __future__ import annotations

import re

import pytest

from core.ask.answer import answer, estimate_for, follow_up
from core.catalog.loader import default_catalog
from core.estimator.estimate import Estimate
from core.estimator.serialize import estimate_dict
from core.render.fmt import ctx_label, num

CATALOG = default_catalog()
QUESTIONS = (
    "8x H20 deepseek r1",
    "4090 qwen3 32b q4 32k",
    "3090 llama 3.3 70b",
    "4090 gpt-oss-120b 64gb ram",
    "M2 Ultra 192G deepseek v3",
    "rtx 2060 6gb gemma 3 12b",
)
WAY_OUT = re.compile(r"(?:→|->)\s*(?:~|约\s*)(\d+(?:\.\d+)?)\s*tok/s")


def _table(text: str) -> dict[tuple[str, str], str]:
    """(quant, context label) -> the cell as printed (marks stripped; "x" = doesn't fit). The table
    is quants x contexts, or contexts x quants when one quant is shown."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] in (["quant", "GiB"], ["ctx", "GiB"]))
    by_ctx = lines[start].startswith("ctx")
    columns = lines[start].split()[2:]
    cells: dict[tuple[str, str], str] = {}
    for line in lines[start + 1 :]:
        parts = line.split()
        if len(parts) != len(columns) + 2:
            break
        for column, cell in zip(columns, parts[2:], strict=True):
            key = (column, parts[0]) if by_ctx else (parts[0], column)
            cells[key] = cell.rstrip("*^")
    return cells


def _remedy_figures(est: Estimate) -> set[str]:
    out = set()
    for row in est.rows:
        if row.remedy is not None:
            for option in (row.remedy, *row.remedy.alternatives):
                if option.decode_mid is not None:
                    out.add(num(option.decode_mid))
    return out


@pytest.mark.parametrize("question", QUESTIONS)
def test_every_view_of_one_question_shows_the_same_figures(question: str) -> None:
    reply = answer(question, CATALOG)
    assert reply.status == "answer" and reply.query is not None
    est = estimate_for(reply.query, CATALOG)
    by_cell = {(r.quant, ctx_label(r.context)): r for r in est.rows}
    table = _table(reply.text)
    assert table
    for key, cell in table.items():
        row = by_cell[key]
        assert cell == ("x" if row.decode_tps is None else num(row.decode_tps.mid)), key
    # The way-out line prices each way out as the table would price that setup.
    figures = _remedy_figures(est)
    for shown in WAY_OUT.findall(reply.text):
        assert num(float(shown)) in figures, (question, shown)
    # The JSON rows are the same rows.
    rows = estimate_dict(est, CATALOG)["rows"]
    for data, row in zip(rows, est.rows, strict=True):
        mid = None if row.decode_tps is None else row.decode_tps.mid
        assert (data["decode_tps"] or {}).get("mid") == mid
    # "In full" for each quant shown: its way-out figures are the estimate's.
    for quant in {q for q, _ in table}:
        view = follow_up(reply.query, "quant", CATALOG, quant)
        assert view.status == "answer"
        for shown in WAY_OUT.findall(view.text):
            assert num(float(shown)) in figures, (question, quant, shown)


def test_a_calibrated_answer_moves_the_way_out_with_the_table() -> None:
    """Community anchors on the card scale the table; a way out on the card moves with it (issue 11:
    "the table says Q5_K_M 133, the way-out line 144")."""
    from core.anchors.calibrate import calibrate
    from tests.core.anchors.builders import index_of, make

    reply = answer("V100 32G gemma 3 27b", CATALOG)
    assert reply.query is not None
    est = estimate_for(reply.query, CATALOG)
    anchors = index_of(make(1, 40.0, context=4096), make(2, 41.0, context=4096, name="bob"))
    scaled, info = calibrate(est, anchors, CATALOG)
    assert info.n
    by_cell = {(r.quant, r.context): r for r in scaled.rows}
    checked = 0
    for row in scaled.rows:
        remedy = row.remedy
        if remedy is None or remedy.kind != "kv_quant" or remedy.decode_mid is None:
            continue
        before = next(r for r in est.rows if (r.quant, r.context) == (row.quant, row.context)).remedy
        assert before is not None and before.decode_mid is not None
        fits = [r for r in scaled.rows if r.quant == row.quant and r.decode_tps is not None]
        if fits:
            # The same quant's factor moved the table's cells and this way out alike.
            first = fits[0]
            original = next(r for r in est.rows if (r.quant, r.context) == (first.quant, first.context))
            assert original.decode_tps is not None and first.decode_tps is not None
            factor = first.decode_tps.mid / original.decode_tps.mid
            assert remedy.decode_mid == pytest.approx(before.decode_mid * factor, rel=0.02)
            checked += 1
    assert by_cell and checked
