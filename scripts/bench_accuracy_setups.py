"""Score the shipped estimator on every measured setup, not just fully-on-GPU llama.cpp (issue 11).

    .venv/bin/python scripts/bench_accuracy_setups.py [--csv PATH ...] [--worst N] [--write-holdout]

Reads the three measurement files (../shared/reference/measured_calibration.csv, its
measured_calibration_backends.csv, catalogs/measurements/published_extra.csv), asks the estimator
each row the way `bench_accuracy.py` does (by names, through `resolve_request` and `estimate`, at the
row's depth and prompt length, with the row's card count, framework and RAM), and prints, per
backend, per framework and per setup (fully on GPU / expert offload / layer offload / CPU only /
concurrency > 1), for decode and prefill apart: rows, rows mapped (and why the others were not, by
reason), median absolute % error of mid, share inside [low, high] and the median band half-width;
then the worst rows, and the same headline figures for the train and held-out parts of the split in
catalogs/measurements/holdout.toml. Rows flagged QUESTIONABLE or ANOMALY are counted and left out.

Each row is priced on the backend it was measured on (`backend` of the request, as `estimate
--backend` takes it; rows whose backend column names none are left to the estimator's choice, and
the bk≠ column counts rows priced on another backend); `--chosen-backend` prices every row on the
estimator's own choice instead, as before the backend input existed. What the estimator can't take
is said, not guessed. Concurrent rows (concurrency > 1) are priced by scripts/concurrency_rows.py
through the chat's own concurrent_for (N users, the row's lengths, serving run or steady batch) and
get their own section (by framework, N, dense/MoE). Offloaded and CPU-only rows are
asked with the offload they ran (`offload` experts / layers / cpu, `--n-cpu-moe` from the notes) and
the host RAM type, channels and sockets their `ram` column (or, unstated, their CPU) gives, and
scored on the decode and prefill figures of that forced setup, as `python -m bot estimate` prints.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import re
import statistics
import sys
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.ask.estimate_request import EstimateQuery, QueryError, resolve_request  # noqa: E402
from core.catalog.loader import Catalog, default_catalog  # noqa: E402
from core.catalog.quant import QuantTable, free_bpw_quant  # noqa: E402
from core.estimator.estimate import Estimate, estimate  # noqa: E402
from core.understanding.cpu_words import find_cpus  # noqa: E402
from core.understanding.resolve import resolve_framework, resolve_gpu, resolve_model, resolve_quant  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO.parent / "shared" / "reference"
DEFAULT_CSVS = (
    REFERENCE / "measured_calibration.csv",
    REFERENCE / "measured_calibration_backends.csv",
    REPO / "catalogs" / "measurements" / "published_extra.csv",
)
HOLDOUT_PATH = REPO / "catalogs" / "measurements" / "holdout.toml"
# The split rule (also written into holdout.toml): a source is held out when the first hex digit
# of sha256(SALT + source key) is 0-3, i.e. 4 of 16 = 25 % of sources.
HOLDOUT_SALT = "tokbot-holdout-v1:"
HOLDOUT_DIGITS = "0123"

# Doubtful rows (catalogs/measurements/README.md): counted, never scored.
EXCLUDE_FLAGS = ("QUESTIONABLE", "ANOMALY")
BACKENDS = ("CUDA", "ROCm", "Vulkan", "Metal", "SYCL", "CPU", "other")
FRAMEWORKS = (
    "llama.cpp",
    "Ollama",
    "MLX",
    "vLLM",
    "SGLang",
    "ktransformers",
    "ik_llama.cpp",
    "LM Studio",
    "ExLlama",
    "other",
)
SETUPS = ("fully on GPU", "expert offload", "layer offload", "CPU only", "concurrency>1")
PHASES = ("decode", "prefill")
# Frameworks the estimator has no entry for, priced as the engine they are built on (stats keep
# them apart: the gap to llama.cpp's figure is what a fit for them would have to close).
# Forks the catalog has no entry for, priced as the framework they fork. Empty now: ktransformers and
# ik_llama.cpp have their own entries (ik's rows price with the fit's "ik_llama.cpp" factors).
PRICED_AS: dict[str, str] = {}
# The `offload` the estimator is asked with for each offloaded setup (EstimateQuery.offload).
OFFLOAD_FOR_SETUP = {"expert offload": "experts", "layer offload": "layers", "CPU only": "cpu"}
# RAM size passed for an offloaded row whose source does not state it (only the room check uses it).
UNSTATED_RAM_GIB = 1536.0
# The memory a host CPU's platform runs when the row's `ram` column does not say: (CPU name pattern,
# RAM type, channels per socket). Only platforms the measured rows name; the first match wins.
PLATFORM_RAM: tuple[tuple[re.Pattern[str], str, int], ...] = (
    (re.compile(r"EPYC 9\d55"), "DDR5-6000", 12),  # Zen 5 Turin
    (re.compile(r"EPYC 9\d\d4"), "DDR5-4800", 12),  # Zen 4 Genoa
    (re.compile(r"Xeon (?:Gold|Platinum)"), "DDR5-4800", 8),  # Sapphire Rapids
    (re.compile(r"Threadripper PRO 79"), "DDR5-5600", 8),
    (re.compile(r"i9-10900X"), "DDR4-2933", 4),
)
_HOST_WORDS = re.compile(r"xeon|epyc|threadripper|ryzen|core i\d|i\d-\d|cpu|ddr", re.I)


# --- reading the CSVs -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostMemory:
    """The host RAM a row states (or its CPU's platform implies); None where neither says."""

    ram_type: str | None  # "DDR5-4800", "LPDDR5X" (a bare type: the estimator's usual speed)
    channels: int | None  # per socket
    sockets: int | None


@dataclass(frozen=True, slots=True)
class Measured:
    """One CSV row, normalised: what was run and what was measured."""

    file: str
    line: int
    gpu: str  # the device as the source names it (or the curated gpu_query)
    gpu_id: str  # curated id (measured_calibration.csv only), else ""
    gpu_count: int
    model: str
    model_id: str
    params_b: float | None
    quant: str
    backend: str  # one of BACKENDS
    framework: str  # one of FRAMEWORKS
    framework_raw: str
    test: str  # tg / pp / agg / other
    phase: str  # decode / prefill / other
    setup: str  # one of SETUPS
    depth: int
    prompt: int
    tps: float
    ram_gib: float | None
    source: str
    notes: str
    host: HostMemory = field(default_factory=lambda: HostMemory(None, None, None))
    cpu_moe_layers: int | None = None  # llama.cpp --n-cpu-moe, from the notes

    @property
    def flagged(self) -> str:
        own = next((f for f in EXCLUDE_FLAGS if f in self.notes), "")
        return own or ("QUESTIONABLE" if _not_comparable(self.source, self.notes) else "")


NOT_COMPARABLE_PATH = REPO / "catalogs" / "measurements" / "not_comparable.toml"


@cache
def _not_comparable_rows() -> tuple[tuple[str, str], ...]:
    """(source, notes) fragments of rows that measure another engine or build than the one priced
    (catalogs/measurements/not_comparable.toml: the shared reference files are not edited here)."""
    if not NOT_COMPARABLE_PATH.exists():
        return ()
    table = tomllib.loads(NOT_COMPARABLE_PATH.read_text(encoding="utf-8"))
    return tuple((str(r["source"]), str(r["notes"])) for r in table.get("row", []))


def _not_comparable(source: str, notes: str) -> bool:
    return any(src in source and part in notes for src, part in _not_comparable_rows())


def backend_name(raw: str, gpu: str) -> str:
    r = raw.lower()
    for key, name in (("cuda", "CUDA"), ("rocm", "ROCm"), ("hip", "ROCm"), ("vulkan", "Vulkan")):
        if key in r:
            return name
    for key, name in (("metal", "Metal"), ("sycl", "SYCL"), ("cpu", "CPU")):
        if key in r:
            return name
    if "apple" in gpu.lower():
        return "Metal"  # the reference leaves Metal blank on some Apple rows
    return "other"


def framework_name(raw: str) -> str:
    r = raw.lower()
    if r.startswith("ik_llama"):
        return "ik_llama.cpp"
    if r.startswith("lm studio"):
        return "LM Studio"  # before llama.cpp: "LM Studio (llama.cpp Vulkan runtime)"
    for key, name in (("ollama", "Ollama"), ("ktransformers", "ktransformers"), ("vllm-mlx", "other")):
        if r.startswith(key):
            return name
    for key, name in (("mlx", "MLX"), ("vllm", "vLLM"), ("sglang", "SGLang"), ("exllama", "ExLlama")):
        if r.startswith(key):
            return name
    return "llama.cpp" if r.startswith("llama.cpp") else "other"


def setup_name(offload: str, backend: str, gpu: str, concurrency: int, test: str) -> str:
    if concurrency > 1 or test == "agg":
        return "concurrency>1"
    if offload == "experts":
        return "expert offload"
    if offload in ("layers", "auto"):
        return "layer offload"
    if offload == "cpu" or backend == "CPU" or gpu.lower().startswith("cpu only"):
        return "CPU only"
    return "fully on GPU"


_TEST_IN_NOTES = re.compile(r"test=\s*(tg|pp)\s*(\d+)(?:\s*@\s*d(\d+))?")
_AT_DEPTH = re.compile(r"^(\d+)\s*@\s*d(\d+)$")
_ISL_OSL = re.compile(r"^(\d+)\s*/\s*(\d+)$")
_RANGE = re.compile(r"^(\d+)k?\s*-\s*(\d+)k?$", re.I)


def test_lengths(test: str, context: str, notes: str, llama_bench: bool) -> tuple[int, int]:
    """(depth, prompt) for a row, the way calibration_data reads `test=tgN @ dD` from the notes:
    decode is priced at the average depth over the generated tokens, prefill from depth D."""
    m = _TEST_IN_NOTES.search(notes)
    ctx = context.strip()
    if m:
        n, d = int(m.group(2)), int(m.group(3) or 0)
        if not m.group(3) and ctx.isdigit() and not llama_bench:
            d = int(ctx)
    elif (at := _AT_DEPTH.match(ctx)) is not None:
        n, d = int(at.group(1)), int(at.group(2))
    elif (io := _ISL_OSL.match(ctx)) is not None:
        return (int(io.group(1)) + int(io.group(2)) // 2, 0) if test != "pp" else (0, int(io.group(1)))
    elif (rg := _RANGE.match(ctx)) is not None:
        scale = 1024 if "k" in ctx.lower() else 1
        mid = (int(rg.group(1)) + int(rg.group(2))) * scale // 2
        return (mid, 0) if test != "pp" else (0, mid)
    elif ctx.isdigit():
        n = int(ctx)
        if test == "pp":
            return 0, n
        # llama-bench tgN starts empty; a framework's bare number is the prompt before decoding.
        return (n // 2, 0) if llama_bench else (n, 0)
    else:
        return 0, 512
    return (d + n // 2, 0) if test != "pp" else (d, n)


def _main_csv_depth(row: dict[str, str]) -> tuple[int, int]:
    """measured_calibration.csv: context_or_depth is the depth; the test length is in the notes
    (exactly calibration_data._test_lengths)."""
    depth0 = int(row["context_or_depth"] or 0) if row["context_or_depth"].isdigit() else 0
    m = _TEST_IN_NOTES.search(row["notes"])
    if not m:
        return depth0, 512
    n = int(m.group(2))
    d = int(m.group(3)) if m.group(3) else depth0
    return (d + n // 2, 0) if row["test"] != "pp" else (d, n)


_RAM = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(tb|gb|gib)?", re.I)
_RAM_TB = re.compile(r"(\d+(?:\.\d+)?)\s*TB", re.I)


def ram_gib(text: str) -> float | None:
    """System RAM size from the `ram` column ("768 DDR5-5600 (...)", "31 GB", "1.5 TB visible")."""
    if "unified" in text.lower():
        return None
    if (tb := _RAM_TB.search(text)) is not None:
        return float(tb.group(1)) * 1024
    m = _RAM.match(text)
    return float(m.group(1)) if m else None


_RAM_TYPE = re.compile(r"\b((?:LP)?DDR\dX?)(?:[- ]?(\d{4}))?", re.I)
_CHANNEL_WORDS = {"single": 1, "dual": 2, "triple": 3, "quad": 4, "hexa": 6, "octa": 8}
_CHANNELS = re.compile(r"(\d+|single|dual|triple|quad|hexa|octa)[- ]?(?:ch\b|channels?)(\s+total)?", re.I)
_BUS_BITS = re.compile(r"(\d{3})-bit")
_SOCKETS = re.compile(r"(\d)\s*sockets?")
_TWO_CPUS = re.compile(r"\b2x (?:AMD|Intel|Xeon)")
_CPU_MOE = re.compile(r"--n-cpu-moe[ =](\d+)")


def _channels(ram: str, sockets: int) -> int | None:
    """Channels per socket: "8 channels per socket", "dual-channel", "12 channels total" over 2
    sockets, a unified "256-bit" bus (64 bits a channel)."""
    if (m := _CHANNELS.search(ram)) is not None:
        word = m.group(1).lower()
        n = _CHANNEL_WORDS[word] if word in _CHANNEL_WORDS else int(word)
        return max(1, n // sockets) if m.group(2) else n
    if (bus := _BUS_BITS.search(ram)) is not None:
        return int(bus.group(1)) // 64
    return None


def host_memory(ram: str, gpu: str) -> HostMemory:
    """RAM type, channels per socket and sockets from the `ram` column ("512 DDR4-2666 (2 sockets,
    12 channels total)"), what it leaves out from the CPU the `gpu` column names (`PLATFORM_RAM`,
    "+ 2x AMD EPYC 9355")."""
    so = _SOCKETS.search(ram)
    sockets = int(so.group(1)) if so else (2 if _TWO_CPUS.search(gpu) else None)
    kind = _RAM_TYPE.search(ram)
    ram_type = (kind.group(1).upper() + (f"-{kind.group(2)}" if kind.group(2) else "")) if kind else None
    channels = _channels(ram, sockets or 1)
    implied = next(((t, c) for pattern, t, c in PLATFORM_RAM if pattern.search(gpu)), None)
    if implied is not None:
        # A stated type wins; the platform's channel count holds only for its own RAM generation.
        if ram_type is None:
            ram_type, channels = implied[0], channels or implied[1]
        elif channels is None and implied[0].startswith(ram_type.split("-")[0]):
            channels = implied[1]
    return HostMemory(ram_type, channels, sockets)


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def read_csv(path: Path) -> list[Measured]:
    out: list[Measured] = []
    with path.open(newline="", encoding="utf-8") as fh:
        for line, r in enumerate(csv.DictReader(fh), start=2):
            tps = _float(r["tokens_per_s"])
            if tps is None or tps <= 0:
                continue
            curated = "gpu_query" in r
            gpu = (r.get("gpu_query") or r["gpu"]) if curated else r["gpu"]
            fw = framework_name(r["framework"])
            backend = backend_name(r["backend"], r["gpu"])
            test = r["test"] if r["test"] in ("tg", "pp", "agg") else "other"
            concurrency = int(_float(r.get("concurrency") or "1") or 1)
            llama_bench = fw in ("llama.cpp", "ik_llama.cpp") and "server" not in r["framework"]
            depth, prompt = (
                _main_csv_depth(r)
                if curated
                else test_lengths(test, r["context_or_depth"], r["notes"], llama_bench)
            )
            out.append(
                Measured(
                    file=path.name,
                    line=line,
                    gpu=gpu,
                    gpu_id=r.get("gpu_id", ""),
                    gpu_count=int(_float(r["gpu_count"] or "1") or 1),
                    model=(r.get("model_query") or r["model"]) if curated else r["model"],
                    model_id=r.get("model_id", ""),
                    params_b=_float(r["params_b"]),
                    quant=(r.get("quant_query") or r["quant"]) if curated else r["quant"],
                    backend=backend,
                    framework=fw,
                    framework_raw=r["framework"],
                    test=test,
                    phase={"tg": "decode", "agg": "decode", "pp": "prefill"}.get(test, "other"),
                    setup=setup_name(r.get("offload", ""), backend, r["gpu"], concurrency, test),
                    depth=depth,
                    prompt=prompt,
                    tps=tps,
                    ram_gib=ram_gib(r.get("ram", "")),
                    source=r["source"],
                    notes=r["notes"],
                    host=host_memory(r.get("ram", ""), r["gpu"]),
                    cpu_moe_layers=int(n.group(1)) if (n := _CPU_MOE.search(r["notes"])) else None,
                )
            )
    return out


# --- the held-out split ---------------------------------------------------------------------------

_URL = re.compile(r"https?://\S+")


_REPO_FILE = re.compile(r"^(github\.com/[^/]+/[^/]+)/(?:blob|tree|raw)/")


def source_key(source: str) -> str:
    """What a source is split by: its first URL without query, fragment or trailing punctuation
    (so two comments of one thread stay on one side), files in a GitHub repository by the
    repository (one benchmark log per run: the sibling runs sit in the next file), else the text."""
    m = _URL.search(source)
    if not m:
        return source.strip().lower()
    url = m.group(0).split("#")[0].split("?")[0].rstrip(").,;").lower()
    url = url.removeprefix("https://").removeprefix("http://").removeprefix("www.")
    repo = _REPO_FILE.match(url)
    return f"{repo.group(1)}/files" if repo else url


def held_out_by_rule(key: str) -> bool:
    return hashlib.sha256((HOLDOUT_SALT + key).encode()).hexdigest()[0] in HOLDOUT_DIGITS


def load_holdout(path: Path = HOLDOUT_PATH) -> frozenset[str]:
    if not path.exists():
        return frozenset()
    with path.open("rb") as fh:
        return frozenset(tomllib.load(fh).get("held_out", {}).get("sources", ()))


def render_holdout(rows: Sequence[Measured]) -> str:
    keys = sorted({source_key(r.source) for r in rows})
    held = [k for k in keys if held_out_by_rule(k)]
    held_rows = sum(1 for r in rows if source_key(r.source) in set(held))
    lines = [
        "# Held-out split of the measurements (issue 11, item 9), written by",
        "# scripts/bench_accuracy_setups.py --write-holdout. Do not edit by hand: rerun it.",
        "#",
        "# How it was made: every row of ../shared/reference/measured_calibration.csv,",
        "# measured_calibration_backends.csv and catalogs/measurements/published_extra.csv is keyed by",
        "# its source (the first URL in `source`, lower-cased, without scheme, www., query, #fragment or",
        "# trailing punctuation; files of a GitHub repository (blob/tree/raw URLs) as one source,",
        '# "github.com/OWNER/REPO/files"; a source without URL by its text).',
        f'# A source is held out when sha256("{HOLDOUT_SALT}" + key) starts',
        f"# with a hex digit in {HOLDOUT_DIGITS!r}: 4 of 16, about 25 % of sources. The rule was fixed",
        "# without regard to any error figure and depends on nothing but the key, so rerunning after new",
        "# rows are added keeps every old source on its side and sorts each new one by the same rule.",
        "# Whole sources are held out (not rows) so a fit never sees a sibling row of the same table.",
        "# Fits train on the rows whose source is not listed here and report figures on the rest.",
        "",
        "[held_out]",
        f'rule = \'sha256("{HOLDOUT_SALT}" + source_key)[0] in "{HOLDOUT_DIGITS}"\'',
        f"source_count = {len(held)}  # of {len(keys)} sources",
        f"row_count = {held_rows}  # of {len(rows)} rows",
        "sources = [",
    ]
    lines += [f'  "{k}",' for k in held]
    lines += ["]", ""]
    return "\n".join(lines)


# --- asking the estimator -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    row: Measured
    split: str  # train / held-out
    reason: str  # "" when scored; "excluded: ..." when flagged; else why it could not be mapped
    low: float = 0.0
    mid: float = 0.0
    high: float = 0.0
    est_backend: str = ""
    moe: bool | None = None  # the resolved model is a mixture of experts (None: not resolved)

    @property
    def scored(self) -> bool:
        return not self.reason

    @property
    def error(self) -> float:
        return abs(self.mid / self.row.tps - 1)

    @property
    def inside(self) -> bool:
        return self.low <= self.row.tps <= self.high

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2 / self.mid


_PARENS = re.compile(r"\s*\([^)]*\)")
_MEMORY = re.compile(r"(\d+)\s*GB", re.I)
# Words a source adds to a card's name that no catalog alias carries.
_NOISE = re.compile(r'"[^"]*"|\biGPU\b|\bFounders Edition\b', re.I)


def _variants(text: str) -> list[str]:
    """The name as given, without its parentheses, and what the parentheses hold: "AMD Radeon 8060S
    (Ryzen AI Max+ 395, 128GB)" is known by its chip, "Apple M2 Ultra (76-core GPU)" by its name."""
    text = re.sub(r"\s+", " ", _NOISE.sub("", text)).strip()
    bare = _PARENS.sub("", text).strip()
    inner = [p.split(",")[0].strip() for p in re.findall(r"\(([^)]*)\)", text)]
    return list(dict.fromkeys(v for v in (text, bare, *inner) if v))


# A source that says it does not know which variant ran ("Jetson Orin (variant not stated)", "H100
# (x2; variant not stated)", "llama 3B (as labeled; exact model not stated)"): the variants differ
# in memory, bandwidth or shapes, so no row is picked.
_UNSTATED = re.compile(r"\b(?:variant|exact model) not stated\b", re.I)
# "(330W power limit)", "(power-limited to 300W)": the same card run below its stock power.
_POWER_LIMIT = re.compile(r"(\d{2,4})\s*W\s+power[- ]limit|power[- ]limited\s+to\s+(\d{2,4})\s*W", re.I)


def _power_limited(gpu_id: str, text: str, catalog: Catalog) -> str:
    """The row of the same chip and memory sold at the stated power limit ("RTX PRO 6000 at 300 W" is
    the Max-Q edition's budget), else the card itself: the estimator has no power-limit input, and a
    power cap lowers clocks (prefill), not the memory interface that bounds decode."""
    m = _POWER_LIMIT.search(text)
    if m is None:
        return gpu_id
    watts = int(m.group(1) or m.group(2))
    card = catalog.gpus[gpu_id]
    twins = [
        g.id
        for g in catalog.gpus.values()
        if g.tdp_w == watts
        and (g.vendor, g.arch, g.memory_gib, g.bandwidth_gbs, g.compute_capability)
        == (card.vendor, card.arch, card.memory_gib, card.bandwidth_gbs, card.compute_capability)
    ]
    return twins[0] if len(twins) == 1 else gpu_id


@cache
def find_gpu(text: str, catalog: Catalog) -> tuple[str, float | None] | None:
    """(card id, memory GiB named) when one reading is clearly best, else None: a fuzzy best guess
    would score the estimator on a card it wasn't asked about."""
    if _UNSTATED.search(text):
        return None
    mem = _MEMORY.search(text)
    for variant in _variants(text):
        res = resolve_gpu(variant, catalog)
        if res.best_id and res.confident and _model_numbers_agree(variant, res.best_id, catalog):
            gpu_id = _power_limited(res.best_id, text, catalog)
            return gpu_id, res.memory_gib or (float(mem.group(1)) if mem else None)
    return None


_MODEL_NUMBER = re.compile(r"\b(?=[a-z]*\d)[a-z0-9]+\b")
_NOT_A_MODEL_NUMBER = re.compile(r"^\d+(gb|gib|g|w|x)$|^gfx\d+|^\d+-?core$|^\d+$")


def _model_numbers_agree(text: str, gpu_id: str, catalog: Catalog) -> bool:
    """Every model number the text names ("B70", "4090D") is in the card's names: the resolver is
    confident that "Arc Pro B70" is the B60, a different chip."""
    gpu = catalog.gpus[gpu_id]
    names = " ".join((gpu.id, gpu.name, *gpu.aliases)).lower()
    numbers = [t for t in _MODEL_NUMBER.findall(text.lower()) if not _NOT_A_MODEL_NUMBER.match(t)]
    return all(re.search(rf"\b{re.escape(t)}", names) for t in numbers)


_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*[bB]\b")


@cache
def find_model(text: str, params_b: float | None, catalog: Catalog) -> str | None:
    """The model id when the resolver is confident *and* its family word and size agree with the
    row (the resolver reads "Mistral-Large-Instruct-2407" as Mistral 7B, "Nemotron-3-Nano-30B-A3B"
    as Qwen3-30B-A3B: scoring those would blame the speed model for a naming miss)."""
    if _UNSTATED.search(text):
        return None
    for variant in _variants(text.removeprefix("Meta-")):
        res = resolve_model(variant, catalog)
        if not (res.best_id and res.confident):
            continue
        model = catalog.models[res.best_id]
        word = re.split(r"[^a-z]+", variant.lower())[0]
        names = " ".join((model.id, model.name, model.family, *model.aliases)).lower()
        if word and word not in names:
            return None
        size = params_b or (float(s.group(1)) if (s := _SIZE.search(variant)) else None)
        if size and not 0.75 <= size / model.params_b <= 1.33:
            return None
        return res.best_id
    return None


@cache
def find_quant(text: str, catalog: Catalog) -> str | None:
    # "EXL2-4.25bpw", "EXL2 3.0 bpw": a free-bpw family member, priced at that bpw.
    member = free_bpw_quant(text, catalog.quants) if isinstance(catalog.quants, QuantTable) else None
    if member:
        return member
    for variant in _variants(text):
        res = resolve_quant(variant, catalog)
        if res.best_id and res.confident:
            return res.best_id
    # Unsloth's "UD-IQ4_XS" is IQ4_XS with a few tensors kept at higher bits: priced as the base type
    # when the catalog has no UD entry of its own (its UD-Q*_K_XL ones resolve above).
    bare = re.sub(r"^UD[-_]", "", text.strip(), flags=re.I)
    return find_quant(bare, catalog) if bare != text.strip() else None


def _second_card(gpu: str, catalog: Catalog) -> bool:
    """ "RTX 5090 + RTX 4090" is two different cards (no estimate takes that); "+ EPYC 9355" is the host."""
    parts = gpu.split(" + ")[1:]
    return any(not _HOST_WORDS.search(p) and find_gpu(p, catalog) is not None for p in parts)


def _pre_check(row: Measured, catalog: Catalog) -> str:
    """Why a row can't be asked at all, before any name is resolved ("" when it can)."""
    if row.flagged:
        return f"excluded: {row.flagged}"
    if row.phase == "other":
        return f"test kind {row.test!r} (not tg/pp/agg)"
    return ""


def _card(row: Measured, catalog: Catalog) -> tuple[str | None, float | None] | str:
    """(card name or id, memory GiB named) the row is asked with, (None, None) for a CPU-only run,
    or why the card is not known."""
    if row.setup == "CPU only":
        return None, None
    curated = row.file == DEFAULT_CSVS[0].name
    # The curated file names each card and model as a user would (gpu_query / model_query), and
    # bench_accuracy.py asks by those names: "M3 16G" carries the memory size the id does not.
    # A curated row whose card the curator left unmapped (no catalog row at the time) is read by its
    # name like the other files' rows.
    if curated and row.gpu_id:
        return row.gpu or row.gpu_id, None
    if _second_card(row.gpu, catalog):
        # "RTX 5090 32GB + RTX 4090 24GB + AMD EPYC 9355": the cards asked as the mix a user types
        # ("5090+4090", each priced at its own memory and speed), the host CPU apart (row_cpu).
        cards = [p for p in row.gpu.split(" + ") if not _HOST_WORDS.search(p)]
        return "+".join(cards), None
    gpu = find_gpu(row.gpu.split(" + ")[0], catalog)
    return "unknown card" if gpu is None else gpu


def row_cpu(row: Measured) -> str | None:
    """The catalog CPU (cpus.toml) an offloaded or CPU-only row ran on: the one its `gpu` column
    names ("CPU only (AMD Ryzen 9 7950X)", "RTX 5090 + AMD EPYC 9355"), else its notes; None when
    neither names a known CPU (then priced as before, on the host its RAM column gives)."""
    if row.setup not in OFFLOAD_FOR_SETUP:
        return None
    catalog = default_catalog()
    for text in (row.gpu, row.notes):
        if found := find_cpus(text, catalog):
            return found[0].cpu_id
    return None


def _host_fields(row: Measured) -> dict[str, Any]:
    """The offload and host RAM fields of the request: none for a row fully on the GPU (asked
    exactly as bench_accuracy.py asks), the forced offload and the stated host for the others."""
    offload = OFFLOAD_FOR_SETUP.get(row.setup)
    if offload is None:
        return {"ram": row.ram_gib}
    # The run proves the RAM held the offloaded part; a user would say how much they have.
    fields: dict[str, Any] = {"offload": offload, "ram": row.ram_gib or UNSTATED_RAM_GIB}
    host = row.host
    fields.update(ram_type=host.ram_type, ram_channels=host.channels, sockets=host.sockets)
    fields["cpu"] = row_cpu(row)  # its memory where the RAM column doesn't say, its cores for prefill
    if offload == "experts" and row.cpu_moe_layers is not None:
        fields["cpu_moe_layers"] = row.cpu_moe_layers
    return fields


# How a multi-card row split the model: the `split=` the collector wrote into its notes, else the
# `-sm X` / `--split-mode X` of its command line (catalogs/measurements/README.md); and its link.
_SPLIT_NOTE = re.compile(r"\bsplit=(layer|row|tensor|graph|tp|pp)\b", re.I)
_SPLIT_FLAG = re.compile(r"(?:-sm|--split-mode)[ =](layer|row|tensor|graph)\b", re.I)
_LINK_NOTE = re.compile(r"\blink=(pcie|nvlink|xgmi|network)\b", re.I)
_SPLIT_WORDS = {"graph": "tensor", "tp": "tensor", "pp": "layer"}


def row_split(row: Measured) -> str | None:
    """The split mode a multi-card row ran ("layer" / "row" / "tensor"); None where it doesn't say."""
    if row.gpu_count < 2:
        return None
    m = _SPLIT_NOTE.search(row.notes) or _SPLIT_FLAG.search(row.notes)
    return _SPLIT_WORDS.get(m.group(1).lower(), m.group(1).lower()) if m else None


def row_link(row: Measured) -> str | None:
    m = _LINK_NOTE.search(row.notes) if row.gpu_count > 1 else None
    return m.group(1).lower() if m else None


_UBATCH = re.compile(r"(?:-ub|--ubatch-size|n_ubatch|ubatch)\s*[= ]?\s*(\d{2,5})\b")


def row_ubatch(row: Measured) -> int | None:
    """The -ub the row's command line (or log) states; None: it ran llama.cpp's default."""
    m = _UBATCH.search(row.notes)
    return int(m.group(1)) if m and 16 <= int(m.group(1)) <= 65536 else None


def split_label(o: Outcome) -> str:
    """A multi-card row's group: its split (as asked, else the framework's default) and its link."""
    r = o.row
    split = row_split(r) or ("tensor" if r.framework in ("vLLM", "SGLang", "ExLlama") else "layer")
    name = "ik" if r.framework == "ik_llama.cpp" else r.framework  # the table's label column is narrow
    return f"{name} {split}" + (f" {row_link(r)}" if row_link(r) else "")


def request_backend(row: Measured) -> str | None:
    """The backend id the row ran on, as the request takes it; None where the column names none."""
    return None if row.backend == "other" else row.backend.lower()


def _query(row: Measured, catalog: Catalog, row_backend: bool = True) -> EstimateQuery | str:
    """The estimate request for a row, or the reason there is none. `row_backend`: price it on the
    backend it was measured on (else on the estimator's own choice)."""
    curated = row.file == DEFAULT_CSVS[0].name
    gpu = _card(row, catalog)
    if isinstance(gpu, str):
        return gpu
    model_id = (
        (row.model or row.model_id)
        if curated and row.model_id
        else find_model(row.model, row.params_b, catalog)
    )
    if not model_id:
        return "unknown model"
    quant = find_quant(row.quant, catalog)
    if quant is None:
        return "unknown quant"
    framework = estimator_framework(row)
    if not resolve_framework(framework, catalog).found:
        return "framework unknown to the estimator"
    return EstimateQuery(
        gpu=gpu[0],
        model=model_id,
        count=row.gpu_count if gpu[0] and "+" not in gpu[0] else None,
        memory=gpu[1],
        quant=[quant],
        ctx=[max(4096, row.depth + max(row.prompt, 512))],
        depth=row.depth,
        prompt=max(row.prompt, 1),
        os="linux",
        framework=framework,
        backend=request_backend(row) if row_backend else None,
        split_mode=row_split(row),
        link=row_link(row),
        ubatch=row_ubatch(row),
        **_host_fields(row),
    )


def estimator_framework(row: Measured) -> str:
    """The framework name the estimate is asked with (`PRICED_AS` for forks it has no entry for)."""
    raw = row.framework_raw.lower()
    if row.framework in PRICED_AS:
        return PRICED_AS[row.framework]
    if row.framework == "LM Studio":
        return "mlx" if "mlx" in raw else "lmstudio"
    if row.framework == "ExLlama":
        return "exllamav3" if "v3" in raw else "exllamav2"
    # PyTorch engines priced when named: "HF transformers (FP16 baseline)", "AutoAWQ (HF
    # transformers)" run in transformers; "torchao + torch.compile (gpt-fast style generate.py)" is
    # gpt-fast's loop; "MLC LLM" is one name in two words. TinyChat (AWQ) is an engine of its own.
    for key, name in (("transformers", "transformers"), ("gpt-fast", "gpt-fast"), ("mlc llm", "mlc-llm")):
        if key in raw and not raw.startswith("ktransformers"):
            return name
    return row.framework_raw.split(" (")[0].split(" ")[0]


def _figures(row: Measured, est: Estimate) -> tuple[float, float, float] | str:
    """(low, mid, high) the estimate gives for the measured phase, or why it gives none. Offloaded
    rows are asked with their offload forced, so the row's own figures are the offloaded ones."""
    first = est.rows[0]
    if first.status == "no_fit":
        return (
            "estimated as not fitting"
            if row.setup == "fully on GPU"
            else "estimated as not fitting offloaded"
        )
    rng = first.decode_tps if row.phase == "decode" else first.prefill_tps
    return (rng.low, rng.mid, rng.high) if rng else "no figure"


def ask(row: Measured, split: str, catalog: Catalog, row_backend: bool = True) -> Outcome:
    reason = _pre_check(row, catalog)
    query = _query(row, catalog, row_backend) if not reason else reason
    if isinstance(query, str):
        return Outcome(row, split, query)
    if row.setup == "concurrency>1":
        return _concurrent_outcome(row, split, query, catalog)
    try:
        est = estimate(resolve_request(query, catalog), catalog)
    except QueryError as exc:
        if query.backend is None:
            return Outcome(row, split, f"request refused: {str(exc).split(':')[0]}")
        # The backend it ran on is one the estimator's framework entry or card check lacks (a fork
        # priced as another framework, SYCL on an NVIDIA card): priced on the estimator's own
        # choice, and counted in bk≠.
        return ask_on_chosen_backend(row, split, query, catalog)
    return _outcome(row, split, est)


def _concurrent_outcome(row: Measured, split: str, query: EstimateQuery, catalog: Catalog) -> Outcome:
    """N users at once: priced by scripts/concurrency_rows.py through the chat's own concurrent_for."""
    import concurrency_rows  # the scripts directory is on sys.path

    got = concurrency_rows.price(row, query, catalog, concurrency_rows.PATHS)
    if isinstance(got, str):
        return Outcome(row, split, got)
    moe = got.case.request.model.is_moe
    return Outcome(row, split, "", got.low, got.mid, got.high, est_backend=row.backend, moe=moe)


def _outcome(row: Measured, split: str, est: Estimate) -> Outcome:
    figures = _figures(row, est)
    if isinstance(figures, str):
        return Outcome(row, split, figures, est_backend=est.backend, moe=est.request.model.is_moe)
    return Outcome(row, split, "", *figures, est_backend=est.backend, moe=est.request.model.is_moe)


def ask_on_chosen_backend(row: Measured, split: str, query: EstimateQuery, catalog: Catalog) -> Outcome:
    try:
        est = estimate(resolve_request(query.model_copy(update={"backend": None}), catalog), catalog)
    except QueryError as exc:
        return Outcome(row, split, f"request refused: {str(exc).split(':')[0]}")
    return _outcome(row, split, est)


def run(
    rows: Iterable[Measured], held: frozenset[str], catalog: Catalog, row_backend: bool = True
) -> list[Outcome]:
    return [
        ask(r, "held-out" if source_key(r.source) in held else "train", catalog, row_backend)
        for r in rows
        if r.phase in PHASES or r.phase == "other"
    ]


# --- the tables -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Figures:
    rows: int
    excluded: int
    mapped: int
    median_error: float | None
    inside: float | None
    half_width: float | None
    backend_differs: int
    reasons: tuple[tuple[str, int], ...]


def figures(outcomes: Sequence[Outcome]) -> Figures:
    scored = [o for o in outcomes if o.scored]
    excluded = sum(1 for o in outcomes if o.reason.startswith("excluded"))
    reasons = Counter(o.reason for o in outcomes if o.reason and not o.reason.startswith("excluded"))
    differs = sum(1 for o in scored if o.est_backend and o.est_backend.lower() != o.row.backend.lower())
    return Figures(
        rows=len(outcomes),
        excluded=excluded,
        mapped=len(scored),
        median_error=statistics.median(o.error for o in scored) if scored else None,
        inside=sum(o.inside for o in scored) / len(scored) if scored else None,
        half_width=statistics.median(o.half_width for o in scored) if scored else None,
        backend_differs=differs,
        reasons=tuple(reasons.most_common()),
    )


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:.1f}%"


_SHORT = {
    "unknown card": "card",
    "unknown model": "model",
    "unknown quant": "quant",
    "framework unknown to the estimator": "framework",
    "estimated as not fitting": "no-fit",
    "estimated as not fitting offloaded": "no-fit-offloaded",
    "unsupported setup: concurrency > 1": "concurrency",
    "unsupported setup: two different cards": "mixed-cards",
}

HEADER = (
    f"{'':<24}{'phase':<8}{'rows':>5}{'excl':>5}{'mapped':>7}{'medAPE':>8}{'inside':>8}{'halfw':>7}"
    f"{'bk≠':>5}  not mapped (reason count)"
)


def table_line(label: str, phase: str, f: Figures) -> str:
    why = ", ".join(f"{_SHORT.get(r, r)} {n}" for r, n in f.reasons)
    return (
        f"{label:<24}{phase:<8}{f.rows:>5}{f.excluded:>5}{f.mapped:>7}{_pct(f.median_error):>8}"
        f"{_pct(f.inside):>8}{_pct(f.half_width):>7}{f.backend_differs:>5}  {why}"
    )


def grouped_table(
    title: str, outcomes: Sequence[Outcome], key: Callable[[Outcome], str], order: Sequence[str] = ()
) -> list[str]:
    """One line per group and phase, groups in `order` (or sorted when none is given)."""
    by: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by[(key(o), o.row.phase)].append(o)
    lines = [f"== by {title}", HEADER]
    for group in order or sorted({g for g, _ in by}):
        for phase in PHASES:
            if (group, phase) in by:
                lines.append(table_line(group, phase, figures(by[(group, phase)])))
    return lines


def worst_lines(outcomes: Sequence[Outcome], n: int) -> list[str]:
    scored = sorted((o for o in outcomes if o.scored), key=lambda o: -o.error)
    lines = [f"== worst {n} scored rows (|mid/measured - 1|)"]
    for o in scored[:n]:
        r = o.row
        lines.append(
            f"  {o.mid / r.tps:5.2f}x {r.phase:<7} {r.setup:<14} {r.framework:<12} {r.backend:<6} "
            f"{r.gpu[:38]} ×{r.gpu_count} | {r.model[:30]} | {r.quant[:16]} | d={r.depth} p={r.prompt} "
            f"measured {r.tps:g} est {o.mid:g} [{o.low:g}, {o.high:g}] est-backend {o.est_backend} "
            f"({r.source[:90]})"
        )
    return lines


def reason_lines(outcomes: Sequence[Outcome]) -> list[str]:
    counts = Counter((o.reason, o.row.phase) for o in outcomes if o.reason)
    lines = ["== rows not scored, by reason (decode / prefill / other)"]
    for reason in sorted({r for r, _ in counts}, key=lambda r: -sum(counts[(r, p)] for p in PHASES)):
        lines.append(
            f"  {counts[(reason, 'decode')]:>4} / {counts[(reason, 'prefill')]:>4} / "
            f"{counts[(reason, 'other')]:>3}  {reason}"
        )
    return lines


def split_lines(outcomes: Sequence[Outcome]) -> list[str]:
    lines = ["== train vs held-out (catalogs/measurements/holdout.toml)", HEADER]
    for split in ("train", "held-out"):
        part = [o for o in outcomes if o.split == split]
        for phase in PHASES:
            lines.append(
                table_line(f"{split} all", phase, figures([o for o in part if o.row.phase == phase]))
            )
        for setup in ("fully on GPU", "expert offload"):
            for phase in PHASES:
                sel = [o for o in part if o.row.phase == phase and o.row.setup == setup]
                if sel:
                    lines.append(table_line(f"{split} {setup}", phase, figures(sel)))
        for fw_label, is_fw in (("llama.cpp", True), ("other fw", False)):
            sel = [
                o
                for o in part
                if o.row.phase == "decode"
                and o.row.setup == "fully on GPU"
                and (o.row.framework == "llama.cpp") == is_fw
            ]
            lines.append(table_line(f"{split} GPU {fw_label}", "decode", figures(sel)))
    return lines


# Prefill by prompt length (issue 23): the share attention takes grows with the tokens a prefill
# attends over, so the error is read per length class; "at depth" is a prompt sent into a context
# already holding tokens (llama-bench -d, sweep-bench), "long" a prompt of 16K or more from empty.
PROMPT_CLASSES = ("p<=1K", "p 1K-4K", "p 4K-16K", "long p>=16K", "at depth")


def prompt_class(row: Measured) -> str:
    if row.depth > 0:
        return "at depth"
    if row.prompt <= 1024:
        return "p<=1K"
    if row.prompt <= 4096:
        return "p 1K-4K"
    return "p 4K-16K" if row.prompt < 16384 else "long p>=16K"


def prompt_length_lines(outcomes: Sequence[Outcome]) -> list[str]:
    """Prefill rows per split, setup kind (CPU only apart) and prompt-length class."""
    lines = ["== prefill by prompt length (train / held-out; CPU only apart from the rest)", HEADER]
    for split in ("train", "held-out"):
        for kind in ("GPU", "CPU only"):
            for cls in PROMPT_CLASSES:
                sel = [
                    o
                    for o in outcomes
                    if o.split == split
                    and o.row.phase == "prefill"
                    and (o.row.setup == "CPU only") == (kind == "CPU only")
                    and prompt_class(o.row) == cls
                ]
                if sel:
                    lines.append(
                        table_line(
                            f"{split.replace('held-out', 'held')} {kind[:3]} {cls}", "prefill", figures(sel)
                        )
                    )
    return lines


def report(outcomes: Sequence[Outcome], worst: int) -> list[str]:
    files = Counter(o.row.file for o in outcomes)
    lines = [
        "rows read: " + ", ".join(f"{name} {n}" for name, n in files.items()) + f"; total {len(outcomes)}"
    ]
    lines.append(
        "columns: rows | excl = flagged QUESTIONABLE/ANOMALY | mapped = scored"
        " | medAPE = median |mid/measured-1| | inside = share in [low, high]"
        " | halfw = median (high-low)/2/mid | bk≠ = priced on another backend than measured"
    )
    all_phases = [o for o in outcomes if o.row.phase in PHASES]
    lines += grouped_table("setup", all_phases, lambda o: o.row.setup, SETUPS)
    lines += grouped_table("backend", all_phases, lambda o: o.row.backend, BACKENDS)
    lines += grouped_table("framework", all_phases, lambda o: o.row.framework, FRAMEWORKS)
    on_gpu = [o for o in all_phases if o.row.setup == "fully on GPU"]
    llama = [o for o in on_gpu if o.row.framework == "llama.cpp"]
    lines += grouped_table("backend, fully on GPU, llama.cpp only", llama, lambda o: o.row.backend, BACKENDS)
    # Rows priced on another backend than they ran on (none unless --chosen-backend, or no backend named).
    lines += grouped_table(
        "measured backend > backend the estimate priced (fully on GPU, llama.cpp, scored rows)",
        [o for o in llama if o.scored],
        lambda o: f"{o.row.backend} > {o.est_backend}",
    )
    lines += grouped_table(
        "framework × dense/MoE (fully on GPU, scored rows)",
        [o for o in on_gpu if o.scored],
        lambda o: f"{o.row.framework} {'MoE' if o.moe else 'dense'}",
    )
    lines += split_lines(all_phases)
    multi = [o for o in all_phases if o.row.gpu_count > 1 and o.row.setup == "fully on GPU"]
    lines += grouped_table(
        "multi-GPU single stream, train / held-out",
        multi,
        lambda o: f"{'train' if o.split == 'train' else 'held'} {o.row.phase}",
    )
    lines += grouped_table("multi-GPU single stream, framework × split × link", multi, split_label)
    lines += prompt_length_lines(all_phases)
    import concurrency_rows  # the scripts directory is on sys.path

    lines += concurrency_rows.report_lines(all_phases)
    lines += reason_lines(outcomes)
    lines += worst_lines(all_phases, worst)
    return lines


def load_all(paths: Sequence[Path]) -> list[Measured]:
    rows: list[Measured] = []
    for path in paths:
        rows += read_csv(path)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--csv", action="append", type=Path, help="score these files instead (repeatable)")
    parser.add_argument("--holdout", type=Path, default=HOLDOUT_PATH, help="the split file to read")
    parser.add_argument("--worst", type=int, default=15)
    parser.add_argument(
        "--chosen-backend",
        action="store_true",
        help="price every row on the backend the estimator chooses, not the one it was measured on",
    )
    parser.add_argument(
        "--write-holdout",
        action="store_true",
        help="(re)write catalogs/measurements/holdout.toml by the rule",
    )
    args = parser.parse_args(argv)
    rows = load_all(args.csv or DEFAULT_CSVS)
    import concurrency_rows  # the scripts directory is on sys.path

    saved, concurrency_rows.PATHS = concurrency_rows.PATHS, tuple(args.csv or DEFAULT_CSVS)
    try:  # concurrent rows read two more columns of the files scored; put back for other callers
        return _score(args, rows)
    finally:
        concurrency_rows.PATHS = saved


def _score(args: argparse.Namespace, rows: list[Measured]) -> int:
    if args.write_holdout:
        args.holdout.write_text(render_holdout(rows), encoding="utf-8")
        print(f"wrote {args.holdout}")
    held = load_holdout(args.holdout)
    unlisted = {source_key(r.source) for r in rows if held_out_by_rule(source_key(r.source))} - held
    catalog = default_catalog()
    t0 = time.perf_counter()
    outcomes = run(rows, held, catalog, row_backend=not args.chosen_backend)
    for line in report(outcomes, args.worst):
        print(line)
    if unlisted and held:
        print(
            f"note: {len(unlisted)} held-out-by-rule sources are not in {args.holdout.name}: "
            "rerun --write-holdout"
        )
    print(f"time: {time.perf_counter() - t0:.1f} s for {len(outcomes)} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
