"""Issue 21's own questions (corpus_issue21*.jsonl, written before the code changed): the train split
must read right, the held-out split is measured (scripts/bench_understanding.py) and kept above a floor."""

from __future__ import annotations

from pathlib import Path

from core.catalog.loader import default_catalog
from core.understanding.corpus import load_corpus, score_case
from core.understanding.parse import parse_question

HERE = Path(__file__).parent


def _share(name: str) -> tuple[float, str]:
    catalog = default_catalog()
    results = [score_case(case, catalog) for case in load_corpus(HERE / name)]
    misses = "\n".join(f"{r.question}: {r.wrong}" for r in results if not r.right)
    return sum(r.right for r in results) / len(results), misses


def test_train_split() -> None:
    share, misses = _share("corpus_issue21.jsonl")
    assert share >= 0.95, misses


def test_held_out_split() -> None:
    share, misses = _share("corpus_issue21_heldout.jsonl")
    assert share >= 0.80, misses


def test_flags_are_read_and_not_names() -> None:
    parsed = parse_question(
        "llama-server -m x.gguf -c 65536 --n-cpu-moe 28 4090 qwen3 30b a3b", default_catalog()
    )
    assert parsed.contexts == (65536,)
    assert parsed.cpu_moe_layers == 28
    assert parsed.gpu_count == 1


def test_several_setups_note_the_other() -> None:
    parsed = parse_question(
        "A100国内很难买到，只能买4090，8张4090的卡能不能行？跑 qwen3 235b", default_catalog()
    )
    assert parsed.gpu is not None and parsed.gpu.best_id == "rtx-4090"
    assert parsed.gpu_count == 8
    assert ("other_setup", "a100") in parsed.notes


def test_mixed_box_is_not_split() -> None:
    parsed = parse_question("3090 + 3060, would qwen 72b fit?", default_catalog())
    assert [c.res.best_id for c in parsed.cards] == ["rtx-3090", "rtx-3060-12g"]
