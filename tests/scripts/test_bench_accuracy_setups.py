"""scripts/bench_accuracy_setups.py on a handful of rows: the tables' shape, the reasons a row is not
scored, the held-out split, and that it asks the estimator exactly as bench_accuracy.py does."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import pytest

COLUMNS = (
    "gpu,gpu_count,model,params_b,quant,model_size_gib,backend,framework,test,context_or_depth,"
    "tokens_per_s,flash_attn,source,date,notes,concurrency,offload,ram"
).split(",")


from tests.fakes.scripts import load_script  # noqa: E402

_load = load_script


bench = _load("bench_accuracy_setups")


def _row(**values: str) -> dict[str, str]:
    base = dict.fromkeys(COLUMNS, "")
    base.update(gpu_count="1", backend="CUDA", framework="llama.cpp", concurrency="1", date="2025-01")
    base.update(values)
    return base


ROWS = [
    # 1-2: scored, fully on GPU (decode and prefill)
    _row(gpu="NVIDIA GeForce RTX 4090", model="Llama-3.1-8B-Instruct", params_b="8.03", quant="Q4_K_M",
         test="tg", context_or_depth="128", tokens_per_s="130", source="https://example.org/a"),
    _row(gpu="NVIDIA GeForce RTX 4090", model="Llama-3.1-8B-Instruct", params_b="8.03", quant="Q4_K_M",
         test="pp", context_or_depth="512", tokens_per_s="9000", source="https://example.org/a"),
    # 3: a card no catalog has
    _row(gpu="Foo Accelerator 9000", model="Llama-3.1-8B-Instruct", quant="Q4_K_M", test="tg",
         context_or_depth="128", tokens_per_s="50", source="https://example.org/b"),
    # 4: CPU only
    _row(gpu="CPU only (AMD Ryzen 9 7950X)", model="Llama-3.1-8B-Instruct", quant="Q4_K_M", backend="CPU",
         test="tg", context_or_depth="128", tokens_per_s="12", offload="cpu", source="https://example.org/c"),
    # 5: concurrency
    _row(gpu="NVIDIA GeForce RTX 4090", model="Llama-3.1-8B-Instruct", quant="Q4_K_M", test="agg",
         context_or_depth="512", tokens_per_s="900", concurrency="8", source="https://example.org/d"),
    # 6: flagged: counted, never scored
    _row(gpu="NVIDIA GeForce RTX 4090", model="Llama-3.1-8B-Instruct", quant="Q4_K_M", test="tg",
         context_or_depth="128", tokens_per_s="20", notes="QUESTIONABLE: paging", source="https://example.org/e"),
    # 7-8: MoE expert offload, asked with the offload and the host RAM the row states
    _row(gpu="NVIDIA GeForce RTX 4090 24GB + AMD EPYC 9654", model="DeepSeek-R1", params_b="671",
         quant="Q4_K_M", test="tg", context_or_depth="128", tokens_per_s="10", offload="experts",
         ram="768 DDR5-4800", source="https://example.org/f"),
    _row(gpu="NVIDIA GeForce RTX 4090 24GB + AMD EPYC 9654", model="DeepSeek-R1", params_b="671",
         quant="Q4_K_M", test="pp", context_or_depth="512", tokens_per_s="50", offload="experts",
         ram="768 DDR5-4800", source="https://example.org/f"),
]  # fmt: skip


@pytest.fixture
def csv_path(tmp_path: Path) -> Path:
    path = tmp_path / "rows.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(ROWS)
    return path


def _line(text: str, section: str, label: str, phase: str) -> list[str]:
    body = text.split(f"== by {section}\n")[1].split("\n== ")[0]
    for line in body.splitlines():
        if line.startswith(label) and line[24:].startswith(phase):
            return line[24:].split()
    raise AssertionError(f"no {label!r} {phase} line in the {section} table")


def test_tables_count_rows_mapped_and_reasons(
    csv_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(["--csv", str(csv_path), "--holdout", str(tmp_path / "none.toml"), "--worst", "3"]) == 0
    out = capsys.readouterr().out
    for section in ("setup", "backend", "framework"):
        assert f"== by {section}" in out
    # phase rows excl mapped medAPE inside halfw bk≠
    gpu_decode = _line(out, "setup", "fully on GPU", "decode")
    assert gpu_decode[1:4] == ["3", "1", "1"]  # the 4090 row, the unknown card, the flagged row
    assert gpu_decode[4].endswith("%") and gpu_decode[5].endswith("%")
    assert "card 1" in " ".join(gpu_decode)
    assert _line(out, "setup", "fully on GPU", "prefill")[1:4] == ["1", "0", "1"]
    assert _line(out, "setup", "expert offload", "decode")[1:4] == ["1", "0", "1"]
    assert _line(out, "setup", "expert offload", "prefill")[1:4] == ["1", "0", "1"]
    assert _line(out, "setup", "CPU only", "decode")[1:4] == ["1", "0", "1"]
    # Priced by scripts/concurrency_rows.py (the chat's concurrent_for) and scored in its own section.
    assert _line(out, "setup", "concurrency>1", "decode")[1:4] == ["1", "0", "1"]
    assert "== concurrency > 1" in out and "N=5-8 aggregate" in out
    assert _line(out, "backend", "CPU", "decode")[1] == "1"
    reasons = out.split("== rows not scored, by reason")[1].split("\n== ")[0]
    assert "excluded: QUESTIONABLE" in reasons and "unknown card" in reasons
    assert "cpu-only" not in out and "CPU only" not in reasons
    worst = out.split("== worst 3 scored rows")[1].split("\ntime:")[0].strip().splitlines()[1:]
    assert len(worst) == 3 and all("measured" in w and "https://example.org/" in w for w in worst)


def test_offloaded_rows_are_asked_with_their_offload_and_host_ram(csv_path: Path) -> None:
    rows = bench.read_csv(csv_path)
    catalog = bench.default_catalog()
    decode, prefill = rows[6], rows[7]
    assert decode.setup == "expert offload" and decode.ram_gib == 768
    # The stated type, the EPYC 9654 platform's 12 channels the column leaves out.
    assert decode.host == bench.HostMemory("DDR5-4800", 12, None)
    query = bench._query(decode, catalog)
    assert isinstance(query, bench.EstimateQuery)
    assert (query.offload, query.ram_type, query.ram_channels) == ("experts", "DDR5-4800", 12)
    for row in (decode, prefill):
        outcome = bench.ask(row, "train", catalog)
        assert outcome.scored and outcome.low < outcome.mid < outcome.high, outcome.reason
    # The host is really used: the same row on a slow dual-channel DDR4 box decodes slower.
    slow = dataclasses.replace(decode, host=bench.HostMemory("DDR4-2133", 2, None))
    assert bench.ask(slow, "train", catalog).mid < bench.ask(decode, "train", catalog).mid


def test_cpu_only_row_is_scored_without_a_card(csv_path: Path) -> None:
    row = bench.read_csv(csv_path)[3]
    catalog = bench.default_catalog()
    query = bench._query(row, catalog)
    assert isinstance(query, bench.EstimateQuery) and query.gpu is None and query.offload == "cpu"
    outcome = bench.ask(row, "train", catalog)
    assert outcome.scored and outcome.low < outcome.mid < outcome.high, outcome.reason
    assert outcome.est_backend == "cpu"


@pytest.mark.parametrize(
    ("ram", "gpu", "expected"),
    [
        ("512 DDR4-2666 (2 sockets, 12 channels total)", "CPU only (2x Intel Xeon Gold 6138)",
         ("DDR4-2666", 6, 2)),
        ("DDR5 dual-channel (size/speed not stated)", "CPU only (AMD Ryzen 9 7950X)", ("DDR5", 2, None)),
        ("768 DDR5-5600 (TR Pro 8-channel platform)", "RTX 5090 + AMD Threadripper PRO 7985WX",
         ("DDR5-5600", 8, None)),
        ("", "NVIDIA GeForce RTX 5090 32GB + 2x AMD EPYC 9355", ("DDR5-6000", 12, 2)),
        ("128 LPDDR5X-8000 (unified, 256-bit)", "CPU only (AMD Ryzen AI Max+ 395)",
         ("LPDDR5X-8000", 4, None)),
        ("2x DDR4-2133 2ch", "NVIDIA GeForce RTX 3070", ("DDR4-2133", 2, None)),
        ("31 GB (type not stated)", "NVIDIA GeForce RTX 5070 12GB", (None, None, None)),
    ],
)  # fmt: skip
def test_host_memory(ram: str, gpu: str, expected: tuple[str | None, int | None, int | None]) -> None:
    assert bench.host_memory(ram, gpu) == bench.HostMemory(*expected)


def test_n_cpu_moe_from_the_notes_is_passed(csv_path: Path) -> None:
    row = dataclasses.replace(bench.read_csv(csv_path)[6], cpu_moe_layers=40)
    query = bench._query(row, bench.default_catalog())
    assert isinstance(query, bench.EstimateQuery) and query.cpu_moe_layers == 40
    match = bench._CPU_MOE.search("llama-server --n-cpu-moe 40 -ngl 99")
    assert match is not None and match.group(1) == "40"


def test_holdout_split_is_by_source_and_reproducible(csv_path: Path, tmp_path: Path) -> None:
    holdout = tmp_path / "holdout.toml"
    bench.main(["--csv", str(csv_path), "--holdout", str(holdout), "--write-holdout"])
    held = bench.load_holdout(holdout)
    keys = {bench.source_key(r["source"]) for r in ROWS}
    assert held == {k for k in keys if bench.held_out_by_rule(k)}
    assert bench.render_holdout(bench.read_csv(csv_path)) == holdout.read_text(encoding="utf-8")
    assert bench.source_key("https://github.com/o/r/blob/abc/x.md (a table)") == "github.com/o/r/files"
    assert bench.source_key("https://github.com/o/r/issues/7#issuecomment-1") == "github.com/o/r/issues/7"


def test_shipped_holdout_lists_only_sources_the_rule_holds_out() -> None:
    held = bench.load_holdout()
    assert held, "catalogs/measurements/holdout.toml is missing or empty"
    assert all(bench.held_out_by_rule(k) for k in held)


@pytest.mark.parametrize(
    ("test", "context", "notes", "llama_bench", "expected"),
    [
        ("pp", "2048@d32768", "", True, (32768, 2048)),
        ("tg", "32@d32768", "", True, (32784, 0)),
        ("tg", "128", "", True, (64, 0)),  # llama-bench tg128 starts empty
        ("tg", "4096", "", False, (4096, 0)),  # a framework's number is the prompt before decoding
        ("agg", "1024/256", "", False, (1152, 0)),
        ("pp", "512", "test=pp512", True, (0, 512)),
    ],
)
def test_test_lengths(
    test: str, context: str, notes: str, llama_bench: bool, expected: tuple[int, int]
) -> None:
    assert bench.test_lengths(test, context, notes, llama_bench) == expected


def test_asks_like_bench_accuracy_on_its_rows() -> None:
    """Every row bench_accuracy.py scores gets the very same mid here (same names, depth, prompt)."""
    if not bench.DEFAULT_CSVS[0].exists():
        pytest.skip("../shared/reference is not on this machine")
    calibration_data = _load("calibration_data")
    bench_accuracy = _load("bench_accuracy")
    ours = {
        (r.gpu_id, r.model_id, r.quant, r.test, r.tps, r.depth, r.prompt): r
        for r in bench.read_csv(bench.DEFAULT_CSVS[0])
    }
    catalog = bench.default_catalog()
    for ref in calibration_data.load_rows()[::6]:
        mine = ours[(ref.gpu_id, ref.model_id, ref.quant, ref.test, ref.tps, ref.depth, ref.prompt)]
        outcome = bench.ask(mine, "train", catalog)
        _, est = bench_accuracy.ask(ref)
        expected = est.decode_tps if ref.test == "tg" else est.prefill_tps
        assert outcome.scored and expected is not None and outcome.mid == expected.mid, (ref, outcome.reason)


def test_a_row_listed_as_not_comparable_is_flagged_and_others_are_not() -> None:
    # catalogs/measurements/not_comparable.toml: text-generation-webui's ExLlamav2_HF loader is not
    # the ExLlamaV2 the estimator prices; the same issue's other rows are untouched by that entry.
    listed = bench._not_comparable(
        "https://github.com/turboderp-org/exllamav3/issues/144", "svenpok: ExLlamav2_HF in text-gen-webui"
    )
    other = bench._not_comparable("https://github.com/turboderp-org/exllamav3/issues/144", "TabbyAPI, TP on")
    assert listed and not other
    assert not bench._not_comparable("https://example.com/x", "ExLlamav2_HF in text-gen-webui")
