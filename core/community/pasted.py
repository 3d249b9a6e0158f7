"""Read benchmark numbers out of what people paste: the easy way to `/submit`.

Recognised outputs (samples in tests/core/community/test_pasted.py, taken from GitHub issues):
- `llama-bench` markdown tables (`pp512`, `tg128`, `pp512 @ d4096`, the old `pp 512`), with the
  `ggml_cuda_init` device lines above them; one run per (model, settings, depth), pairing tg and pp;
- llama.cpp timing lines (`llama_perf_context_print:` / `llama_print_timings:` / llama-server's
  `print_timing`): `prompt eval time = ... tokens per second` and `eval time = ...`;
- `ollama run --verbose` stats (`prompt eval rate:`, `eval rate:`, `prompt eval count:`);
- vLLM / SGLang `Serving Benchmark Result` blocks, `benchmark_latency.py` and
  `benchmark_throughput.py` summaries.
Around any of them, log lines that name the card (`Device 0: NVIDIA GeForce RTX 4090, ...`,
`using device CUDA0 (...)`, `ggml_vulkan: 0 = ...`), the file type, the model file, n_ctx and the
build are read too. Everything is returned as the tool printed it (names unresolved): resolving and
checking is `validate.py`'s job. Nothing here raises on odd input.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from core.catalog.loader import Catalog
from core.catalog.sections import sections

# Caveat codes a run can carry; validate.py turns them into moderator flags.
BATCHED = "batched"  # measured under concurrent load: the per-request speed is below single-user speed
PARTIAL_OFFLOAD = "partial_offload"  # some layers ran from system RAM
LATENCY_INCLUDES_PREFILL = "latency_includes_prefill"  # decode derived from end-to-end latency
THROUGHPUT_ONLY = "throughput_only"  # an aggregate batch throughput: no single-user decode in it
QUANT_ASSUMED = "quant_assumed"  # the output does not say the quant; the tool's default was taken
MODEL_FROM_ARCH = "model_from_arch"  # llama-bench names the architecture and size, not the model


@dataclass(frozen=True, slots=True)
class PastedRun:
    """One measurement read from a tool's output; None where the output does not say."""

    tool: str  # "llama-bench" | "llama.cpp" | "ollama" | "vllm-serve" | "vllm-latency" | "vllm-throughput"
    decode_tps: float | None = None
    prefill_tps: float | None = None
    prompt_tokens: int | None = None  # prompt length of the prefill number
    depth: int | None = None  # tokens in the KV cache while decoding
    model: str | None = None  # as printed: "llama 8B", "Qwen3-8B-Q4_K_M.gguf", "qwen2.5:7b"
    quant: str | None = None  # a catalog-style quant id ("Q4_K_M") when the output says it
    params_b: float | None = None
    size_gib: float | None = None  # llama-bench's "size" column: the weights as loaded
    backend: str | None = None  # as printed: "CUDA", "Vulkan", "Metal,BLAS"
    n_gpu_layers: int | None = None
    flash_attn: bool | None = None
    kv_type: str | None = None
    context: int | None = None
    caveats: tuple[str, ...] = ()
    gen_tokens: int | None = None  # tokens the decode number generated (llama-bench's tg128: 128)


@dataclass(frozen=True, slots=True)
class Pasted:
    runs: tuple[PastedRun, ...]
    framework: str  # catalog framework id the tool belongs to
    gpu: str | None = None  # device name as printed ("NVIDIA GeForce RTX 4090")
    gpu_count: int | None = None
    version: str | None = None  # "b7340" for llama.cpp builds
    start: int = 0  # offset in the text where the tool output begins: what precedes is the user's words
    # Every device name in index order when the cards differ ("RTX 4090", "RTX 3090"); () when one kind.
    gpus: tuple[str, ...] = ()

    def fields(self, run: PastedRun) -> dict[str, str]:
        """The run as submission fields (canonical keys, text values), for merging with key=value."""
        out: dict[str, str] = {"framework": self.framework}
        pairs: list[tuple[str, object]] = [
            ("gpu", self.gpu),
            ("count", self.gpu_count),
            ("version", self.version),
            ("model", run.model),
            ("quant", run.quant),
            ("decode", run.decode_tps),
            ("prefill", run.prefill_tps),
            ("prompt", run.prompt_tokens),
            ("depth", run.depth),
            ("backend", run.backend),
            ("kv", run.kv_type),
            ("ctx", run.context),
        ]
        for key, value in pairs:
            if value is not None:
                out[key] = str(value)
        if run.flash_attn is not None:
            out["fa"] = "1" if run.flash_attn else "0"
        return out


# --- shared log lines ---------------------------------------------------------------------------

_NUM = r"(\d+(?:\.\d+)?)"
_DEVICE = re.compile(r"^[ \t]*Device (\d+): ([^,\n]+)", re.M)
_FOUND = re.compile(r"found (\d+) (?:CUDA|ROCm|SYCL|Vulkan) devices", re.I)
_USING = re.compile(r"using device ([A-Za-z]+)(\d+) \(([^)\n]+)\)")
_VULKAN = re.compile(r"ggml_vulkan: (\d+) = ([^(\n|]+)")
_METAL = re.compile(r"(?:GPU name|found device):[ \t]*(Apple [^\n]+)")
_BUILD = re.compile(r"\bbuild: [0-9a-f]+ \((\d+)\)")
_FTYPE = re.compile(r"file type[ \t]*=[ \t]*([^\n]*[^\s])")
_PARAMS = re.compile(r"model params[ \t]*=[ \t]*" + _NUM + r"[ \t]*([BMK])")
_GENERAL_NAME = re.compile(r"general\.name[ \t]+str[ \t]*=[ \t]*([^\n]*[^\s])")
_MODEL_FILE = re.compile(r"(?:(?<!\S)(?:-m|--model)[ \t]+|loading model ')([^\s']+\.gguf)")
_N_CTX = re.compile(r"\bn_ctx(?:_slot)?\s*=\s*(\d+)")
_OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
_FLASH = re.compile(r"\bflash_attn\s*=\s*(\w+)")
# Any line with a llama.cpp/ggml log prefix starts the tool output ("ggml_init_cublas: ...").
_LOG_PREFIX = re.compile(
    r"^[ \t]*(?:ggml_\w+|llama_\w+|llm_\w+|print_info|load_tensors|system_info|slot \w+|srv \w+)[ \t]*:",
    re.M,
)
_LOG_LINES = (_LOG_PREFIX, _DEVICE, _FOUND, _USING, _VULKAN, _METAL, _BUILD, _FTYPE, _MODEL_FILE)
_GUESSED = re.compile(r"\(guessed\)", re.I)
# A quant code inside a file or tag name: "…-Q4_K_M.gguf", "…:8b-instruct-q4_K_M", "…-IQ3_XXS".
_QUANT_IN_NAME = re.compile(
    r"(?<![A-Za-z0-9])(UD-)?((?:I?Q\d(?:_[A-Z0-9]+)*)|BF16|F16|FP16|F32|MXFP4|FP8|AWQ|GPTQ(?:-INT\d)?)"
    r"(?![A-Za-z0-9])",
    re.I,
)


@cache
def _ftype_table(catalog: Catalog) -> dict[str, str]:
    return {k.lower(): v for k, v in sections(catalog).submit.llama_ftype.items()}


def ftype_quant(name: str, catalog: Catalog) -> str | None:
    """llama.cpp's file-type name ("Q4_K - Medium", "(guessed) Q8_0") -> a catalog quant id."""
    clean = _GUESSED.sub("", name).strip().lower()
    return _ftype_table(catalog).get(clean)


def quant_in_name(name: str) -> str | None:
    """The quant code a file or tag name carries ("Qwen3-8B-Q4_K_M.gguf" -> "Q4_K_M")."""
    found = None
    for m in _QUANT_IN_NAME.finditer(name.replace(".gguf", " ")):
        found = (m.group(1) or "").upper() + m.group(2).upper()
    return found


def strip_quant(name: str) -> str:
    """A file or repo name without its path, extension and quant code, as a model name to resolve."""
    base = name.rsplit("/", 1)[-1].removesuffix(".gguf")
    base = re.sub(r"-\d{5}-of-\d{5}$", "", base)  # split GGUF parts
    return _QUANT_IN_NAME.sub(" ", base).replace("_", " ").strip(" -.")


def _device(text: str) -> tuple[str | None, int | None, tuple[str, ...]]:
    """(first device's name, device count, every name in index order when they differ)."""
    names: dict[str, str] = {}
    for m in _DEVICE.finditer(text):
        names[m.group(1)] = m.group(2).strip()
    for m in _USING.finditer(text):
        names.setdefault(m.group(2), m.group(3).strip())
    for m in _VULKAN.finditer(text):
        names.setdefault(m.group(1), m.group(2).strip())
    found = [int(m.group(1)) for m in _FOUND.finditer(text)]
    count = max([len(names), *found]) if names or found else None
    if not names:
        metal = _METAL.search(text)
        return (metal.group(1).strip(), 1, ()) if metal else (None, count, ())
    # Mixed cards ("4090 + 3090") are not one setup the estimator can price: the first is named, and
    # the whole mix goes along so it is kept with the submission (submit_parse.py).
    ordered = tuple(names[k] for k in sorted(names, key=lambda k: int(k) if k.isdigit() else 0))
    mix = ordered if len(set(ordered)) > 1 else ()
    return next(iter(names.values())), count, mix


@dataclass(frozen=True, slots=True)
class _Context:
    """What the log lines around the numbers say."""

    gpu: str | None
    count: int | None
    version: str | None
    quant: str | None
    params_b: float | None
    model: str | None
    n_ctx: int | None
    partial: bool
    flash_attn: bool | None
    first: int  # where the first recognised log line starts (len(text) when none)
    gpus: tuple[str, ...] = ()  # every device name when the cards differ

    def start(self, start: int) -> int:
        return min(start, self.first)


def _context(text: str, catalog: Catalog) -> _Context:
    gpu, count, mix = _device(text)
    build = _BUILD.search(text)
    quant = None
    if m := _FTYPE.search(text):
        quant = ftype_quant(m.group(1), catalog)
    model = None
    if m := _MODEL_FILE.search(text):
        model = m.group(1)
        quant = quant or quant_in_name(model)
    elif m := _GENERAL_NAME.search(text):
        model = m.group(1)
    params = None
    if m := _PARAMS.search(text):
        params = float(m.group(1)) * {"B": 1.0, "M": 1e-3, "K": 1e-6}[m.group(2)]
    n_ctx = None
    for m in _N_CTX.finditer(text):
        n_ctx = int(m.group(1))  # the last one: n_ctx_slot (per request) follows the context's n_ctx
    partial = any(int(a) < int(b) for a, b in _OFFLOADED.findall(text))
    fa = None
    if m := _FLASH.search(text):
        fa = {"1": True, "on": True, "enabled": True, "true": True}.get(
            m.group(1).lower(), False if m.group(1).lower() in ("0", "off", "disabled", "false") else None
        )
    first = min(
        (m.start() for pat in _LOG_LINES if (m := pat.search(text)) is not None),
        default=len(text),
    )
    version = f"b{build.group(1)}" if build else None
    return _Context(gpu, count, version, quant, params, model, n_ctx, partial, fa, first, mix)


# --- llama-bench ---------------------------------------------------------------------------------

_TEST = re.compile(r"^(pp|tg)(\d+)(?:@d(\d+))?$")  # spaces removed first: "pp 512", "tg128 @ d4096"
_SPEED_CELL = re.compile(r"^\s*" + _NUM)
# "qwen3moe 30B.A3B Q4_K - Medium": architecture, size (MoE: total.Aactive), file type.
_ARCH_MODEL = re.compile(
    r"^(\S+)\s+(\d+(?:\.\d+)?(?:x\d+(?:\.\d+)?)?[BMK](?:\.A\d+(?:\.\d+)?[BMK])?)\s+(.*)$"
)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _bench_table(text: str) -> tuple[list[dict[str, str]], int] | None:
    """Rows of the first llama-bench table (header names -> cells) and where it starts."""
    if "t/s" not in text or "|" not in text:
        return None  # no header can be there: skip the walk over every line
    lines = text.splitlines(keepends=True)
    offset = 0
    header: list[str] | None = None
    rows: list[dict[str, str]] = []
    start = 0
    for line in lines:
        stripped = line.strip()
        if header is None:
            if stripped.startswith("|") and "model" in stripped and "test" in stripped and "t/s" in stripped:
                header = [c.lower() for c in _cells(stripped)]
                start = offset
        elif stripped.startswith("|"):
            cells = _cells(stripped)
            if set("".join(cells)) <= set("-: "):
                pass  # the |---|---:| rule
            elif len(cells) == len(header):
                rows.append(dict(zip(header, cells, strict=True)))
        elif stripped and rows:
            break  # the table ended (a "build:" line or prose)
        offset += len(line)
    if header is None or not rows:
        return None
    return rows, start


def _arch_model(cell: str, catalog: Catalog) -> tuple[str, str | None]:
    """ "llama 8B Q4_K - Medium" -> ("llama 8B", "Q4_K_M"); "qwen3moe 30B.A3B Q4_K - Medium" too."""
    m = _ARCH_MODEL.match(cell)
    if not m:
        return cell, None
    arch, size, ftype = m.groups()
    size = size.replace(".A", " A")  # "30B.A3B" -> "30B A3B": the resolver reads active params apart
    return f"{arch} {size}", ftype_quant(ftype, catalog)


def _to_int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _llama_bench(text: str, ctx: _Context, catalog: Catalog) -> Pasted | None:
    table = _bench_table(text)
    if table is None:
        return None
    rows, start = table
    return _bench_runs(rows, start, ctx, catalog)


def _bench_runs(rows: list[dict[str, str]], start: int, ctx: _Context, catalog: Catalog) -> Pasted:
    """llama-bench rows (column name -> cell, as the markdown table names them) as runs."""
    groups: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
    for row in rows:
        test = _TEST.match(re.sub(r"\s+", "", row.get("test", "")))
        speed = _SPEED_CELL.match(row.get("t/s", ""))
        if not test or not speed:
            continue  # pp512+tg128 mixes both phases; ignore
        kind, tokens, depth = test.group(1), int(test.group(2)), int(test.group(3) or 0)
        # Every column but the test and its speed is a setting (ngl, fa, nkvo, threads, ...): rows
        # that differ in any of them are different runs.
        settings = tuple((k, v) for k, v in row.items() if k not in ("test", "t/s"))
        g = groups.setdefault((*settings, ("depth", str(depth))), {"row": row, "depth": depth})
        # The first pp of a depth is taken (pp512 before pp4096): the standard prompt length.
        g.setdefault(kind, (float(speed.group(1)), tokens))
    runs: list[PastedRun] = []
    for g in groups.values():
        row = g["row"]
        model, quant = _arch_model(row.get("model", ""), catalog)
        params = None
        if m := re.match(_NUM + r"\s*([BMK])", row.get("params", "")):
            params = float(m.group(1)) * {"B": 1.0, "M": 1e-3, "K": 1e-6}[m.group(2)]
        size = None
        if m := re.match(_NUM + r"\s*([GMK])iB", row.get("size", "")):
            size = float(m.group(1)) / {"G": 1.0, "M": 1024.0, "K": 1024.0**2}[m.group(2)]
        ngl = _to_int(row.get("ngl"))
        fa_cell = row.get("fa")
        caveats = [MODEL_FROM_ARCH]
        if ctx.partial:
            caveats.append(PARTIAL_OFFLOAD)
        kv = row.get("type_k")
        runs.append(
            PastedRun(
                tool="llama-bench",
                decode_tps=g["tg"][0] if "tg" in g else None,
                gen_tokens=g["tg"][1] if "tg" in g else None,
                prefill_tps=g["pp"][0] if "pp" in g else None,
                prompt_tokens=g["pp"][1] if "pp" in g else None,
                depth=g["depth"],
                model=model,
                quant=quant or ctx.quant,
                params_b=params,
                size_gib=size,
                backend=row.get("backend"),
                n_gpu_layers=ngl,
                flash_attn=None if fa_cell is None else fa_cell.strip() not in ("0", "off"),
                kv_type=kv,
                caveats=tuple(caveats),
            )
        )
    # Only decode counts as a measurement; a table of pp rows alone still comes back (as one run
    # without decode) so the reply can say the decode number is missing.
    with_decode = [r for r in runs if r.decode_tps is not None]
    return Pasted(
        tuple(with_decode or runs[:1]),
        "llama.cpp",
        ctx.gpu,
        ctx.count,
        ctx.version,
        ctx.start(start),
    )


# --- llama-bench -o csv / json / jsonl -----------------------------------------------------------

# A record's fields about the test and its timing, not its settings: what the markdown table prints
# as its "test" and "t/s" columns (the per-repetition sample lists are left out as lists).
_RECORD_TIMING = frozenset(
    {"n_prompt", "n_gen", "n_depth", "test_time", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts"}
)
# Places a JSON value is tried from before giving up: a paste of many "{" lines that never close
# would otherwise be decoded to its end once per line (quadratic).
_JSON_ATTEMPTS = 4
_JSON_START = re.compile(r"^[ \t]*[\[{]", re.M)
_CSV_NAME = re.compile(r"\w+")


def _csv_records(text: str) -> tuple[list[dict[str, Any]], int] | None:
    """The records of llama-bench's CSV (a header naming model_type and avg_ts, one line a test)."""
    lines = text.splitlines(keepends=True)
    offset = 0
    for i, line in enumerate(lines):
        offset += len(line)
        if "avg_ts" not in line or "model_type" not in line or "," not in line:
            continue
        header = [h.strip() for h in next(csv.reader([line]))]
        if not all(_CSV_NAME.fullmatch(h) for h in header):
            continue  # a JSONL record names them too: not a CSV header
        records: list[dict[str, Any]] = []
        for data in lines[i + 1 :]:
            cells = next(csv.reader([data]), [])
            if len(cells) != len(header):
                break  # the CSV ended (a blank line, a build line, prose)
            records.append(dict(zip(header, cells, strict=True)))
        return (records, offset - len(line)) if records else None
    return None


def _json_records(text: str) -> tuple[list[dict[str, Any]], int] | None:
    """The records of llama-bench's JSON (one array) or JSONL (one object a line)."""
    decoder = json.JSONDecoder()
    records: list[dict[str, Any]] = []
    first, end, failures = len(text), 0, 0
    for m in _JSON_START.finditer(text):
        pos = m.end() - 1
        if pos < end:
            continue  # inside a value already read
        try:
            value, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            failures += 1
            if failures >= _JSON_ATTEMPTS:
                break
            continue
        values = value if isinstance(value, list) else [value]
        found = [v for v in values if isinstance(v, dict) and "avg_ts" in v]
        if found:
            first = min(first, pos)
            records += found
    return (records, first) if records else None


def _record_test(rec: dict[str, Any]) -> str:
    """The markdown table's test name for a record: "pp512", "tg128", "pp512 @ d4096"."""
    n_prompt, n_gen, depth = (int(float(rec.get(k) or 0)) for k in ("n_prompt", "n_gen", "n_depth"))
    test = f"pp{n_prompt}" if n_gen == 0 else f"tg{n_gen}" if n_prompt == 0 else f"pp{n_prompt}+tg{n_gen}"
    return f"{test} @ d{depth}" if depth else test


def _flag(value: Any) -> str:
    """A JSON boolean as the table prints it (1 / 0); numbers and text as they are."""
    return ("1" if value else "0") if isinstance(value, bool) else str(value)


def _record_row(rec: dict[str, Any]) -> dict[str, str] | None:
    """One CSV / JSON record as the markdown table's row: the columns `_bench_runs` reads, and every
    other setting as a column of its own (runs that differ in one are different runs)."""
    try:
        row = {
            k: _flag(v) for k, v in rec.items() if k not in _RECORD_TIMING and not isinstance(v, list | dict)
        }
        row["test"], row["t/s"] = _record_test(rec), str(float(rec["avg_ts"]))
        if rec.get("model_size"):
            row["size"] = f"{float(rec['model_size']) / 1024**3:.2f} GiB"
        if rec.get("model_n_params"):
            row["params"] = f"{float(rec['model_n_params']) / 1e9:.2f} B"
    except (KeyError, TypeError, ValueError):
        return None
    row["model"], row["backend"] = str(rec.get("model_type", "")), str(rec.get("backends", ""))
    for key, column in (("n_gpu_layers", "ngl"), ("flash_attn", "fa")):
        if key in rec:
            row[column] = _flag(rec[key])
    return row


def _record_facts(pasted: Pasted, records: list[dict[str, Any]]) -> Pasted:
    """The card(s) and build a record names, where no log line around it did."""
    rec = records[0]
    names = [n.strip() for n in str(rec.get("gpu_info") or "").split(",") if n.strip()]
    build = str(rec.get("build_number") or "")
    return replace(
        pasted,
        gpu=pasted.gpu or (names[0] if names else None),
        gpu_count=pasted.gpu_count or (len(names) if names else None),
        version=pasted.version or (f"b{build}" if build.isdigit() else None),
    )


def read_bench_records(text: str, catalog: Catalog) -> Pasted | None:
    """llama-bench's `-o csv`, `-o json` and `-o jsonl` output as runs, read exactly as its markdown
    table is (one run per settings and depth, pp and tg paired); None when there is none. Never raises.

    Not one of `read_pasted`'s readers: /submit reads what it read before, and the console's paste
    grouping (bot/cli/console_input.py) knows no CSV lines. The ask path reads both.
    """
    if "avg_ts" not in text:
        return None  # every record has it: skip the walk over the lines
    text = text.replace("\r\n", " \n").replace("\r", "\n")
    try:
        got = _csv_records(text) or _json_records(text)
        if got is None:
            return None
        records, start = got
        rows = [r for r in map(_record_row, records) if r is not None]
        if not rows:
            return None
        return _record_facts(_bench_runs(rows, start, _context(text, catalog), catalog), records)
    except (ValueError, IndexError, KeyError, ZeroDivisionError, RecursionError, csv.Error):
        return None


# --- llama.cpp timing lines ----------------------------------------------------------------------

_TIMING = (
    r"[ \t]*=[ \t]*"
    + _NUM
    + r"[ \t]*ms[ \t]*/[ \t]*(\d+)[ \t]*(?:tokens|runs)[ \t]*\([ \t]*"
    + _NUM
    + r"[ \t]*ms per token,[ \t]*"
)
_PROMPT_EVAL = re.compile(r"prompt eval time" + _TIMING + r"([\d.]+|inf|nan)[ \t]*tokens per second\)")
_EVAL = re.compile(
    r"(?<!prompt )(?<![a-z])eval time" + _TIMING + r"([\d.]+|inf|nan)[ \t]*tokens per second\)"
)


def _rate(ms: str, count: str) -> float | None:
    """Tokens per second from the ms/count pair (the printed rate is rounded; inf when ms is 0)."""
    t, n = float(ms), int(count)
    return round(n * 1000.0 / t, 2) if t > 0 and n > 0 else None


def _llama_timings(text: str, ctx: _Context, catalog: Catalog) -> Pasted | None:
    evals = list(_EVAL.finditer(text))
    if not evals:
        return None
    # A server log holds one block per request: the last one is the run the submitter just made.
    last = evals[-1]
    prompts = [m for m in _PROMPT_EVAL.finditer(text) if m.start() < last.start()]
    prompt = prompts[-1] if prompts else None
    prefill = prompt_tokens = None
    depth = None
    if prompt is not None:
        prompt_tokens = int(prompt.group(2))
        min_tokens = sections(catalog).submit.submit.min_prefill_tokens
        if prompt_tokens >= min_tokens:
            prefill = _rate(prompt.group(1), prompt.group(2))
        # Decode reads the prompt's KV plus, on average, half of what it generated.
        depth = prompt_tokens + int(last.group(2)) // 2
    model = ctx.model
    quant = ctx.quant
    if model and model.endswith(".gguf"):
        quant = quant or quant_in_name(model)
        model = strip_quant(model)
    start = min(m.start() for m in (prompt, last) if m is not None)
    run = PastedRun(
        tool="llama.cpp",
        decode_tps=_rate(last.group(1), last.group(2)),
        prefill_tps=prefill,
        prompt_tokens=prompt_tokens if prefill is not None else None,
        depth=depth,
        model=model,
        quant=quant,
        params_b=ctx.params_b,
        flash_attn=ctx.flash_attn,
        context=ctx.n_ctx,
        caveats=(PARTIAL_OFFLOAD,) if ctx.partial else (),
    )
    return Pasted((run,), "llama.cpp", ctx.gpu, ctx.count, ctx.version, ctx.start(start))


# --- ollama --verbose ----------------------------------------------------------------------------

_OLLAMA_EVAL_RATE = re.compile(r"^[ \t]*eval rate:[ \t]*" + _NUM + r"[ \t]*tokens/s", re.M)
_OLLAMA_PROMPT_RATE = re.compile(r"^[ \t]*prompt eval rate:[ \t]*" + _NUM + r"[ \t]*tokens/s", re.M)
_OLLAMA_PROMPT_COUNT = re.compile(r"^[ \t]*prompt eval count:[ \t]*(\d+)[ \t]*token", re.M)
_OLLAMA_EVAL_COUNT = re.compile(r"^[ \t]*eval count:[ \t]*(\d+)[ \t]*token", re.M)
_OLLAMA_TOTAL = re.compile(r"^[ \t]*total duration:", re.M)
_OLLAMA_RUN = re.compile(r"ollama run\s+(?:--verbose\s+)?([^\s\"']+)(?:\s+--verbose)?")
_OLLAMA_LAYERS = re.compile(r"GPU loaded layers:\s*(\d+)/(\d+)")
_OLLAMA_LIBRARY = re.compile(r"llm library:\s*(\w+)")


OLLAMA_DEFAULT_QUANT = "Q4_K_M"  # what an Ollama library tag without a quant downloads


def ollama_tag(tag: str) -> tuple[str, str | None]:
    """ "qwen2.5:7b-instruct-q4_K_M" -> ("qwen2.5 7b", "Q4_K_M"); "llama3" -> ("llama3", None)."""
    name, _, variant = tag.rpartition("/")[-1].partition(":")
    quant = quant_in_name(variant) if variant else None
    size = re.match(r"(\d+(?:\.\d+)?[bm])", variant or "", re.I)
    return (f"{name} {size.group(1)}" if size else name), quant


def _ollama(text: str, ctx: _Context, catalog: Catalog) -> Pasted | None:
    rates = list(_OLLAMA_EVAL_RATE.finditer(text))
    if not rates:
        return None
    last = rates[-1]  # one stats block per answer in a session: the last is the latest
    before = text[: last.end()]
    prompt_rates = list(_OLLAMA_PROMPT_RATE.finditer(before))
    prompt_counts = list(_OLLAMA_PROMPT_COUNT.finditer(before))
    eval_counts = list(_OLLAMA_EVAL_COUNT.finditer(before))
    totals = [m.start() for m in _OLLAMA_TOTAL.finditer(before)]
    prompt_tokens = int(prompt_counts[-1].group(1)) if prompt_counts else None
    min_tokens = sections(catalog).submit.submit.min_prefill_tokens
    prefill = None
    if prompt_rates and prompt_tokens is not None and prompt_tokens >= min_tokens:
        prefill = float(prompt_rates[-1].group(1))
    depth = None
    if prompt_tokens is not None:
        depth = prompt_tokens + (int(eval_counts[-1].group(1)) // 2 if eval_counts else 0)
    model = quant = None
    caveats: list[str] = []
    if m := _OLLAMA_RUN.search(text):
        model, quant = ollama_tag(m.group(1))
        if quant is None:
            # A library tag without a quant downloads the default build; said as an assumption so
            # the moderator can check.
            quant = OLLAMA_DEFAULT_QUANT
            caveats.append(QUANT_ASSUMED)
    if any(int(a) < int(b) for a, b in _OLLAMA_LAYERS.findall(text)) or ctx.partial:
        caveats.append(PARTIAL_OFFLOAD)
    library = _OLLAMA_LIBRARY.search(text)
    run = PastedRun(
        tool="ollama",
        decode_tps=float(last.group(1)),
        prefill_tps=prefill,
        prompt_tokens=prompt_tokens if prefill is not None else None,
        depth=depth,
        model=model,
        quant=quant,
        backend=library.group(1) if library else None,
        caveats=tuple(caveats),
    )
    start = totals[-1] if totals else last.start()
    if m := _OLLAMA_RUN.search(text):
        start = min(start, m.start())
    return Pasted((run,), "ollama", ctx.gpu, ctx.count, ctx.version, ctx.start(start))


# --- vLLM / SGLang benchmarks --------------------------------------------------------------------

# The title after its last "=": a run of "=" is scanned once, not once per "=" in it (quadratic).
_SERVE_HEADER = re.compile(r"=[ \t]*Serving Benchmark Result")


def _metric(text: str, label: str) -> float | None:
    m = re.search(r"^[ \t]*" + re.escape(label) + r"[ \t]*:?[ \t]+" + _NUM + r"[ \t]*$", text, re.M)
    return float(m.group(1)) if m else None


_LAT = re.compile(r"^[ \t]*Avg latency:[ \t]*" + _NUM + r"[ \t]*seconds", re.M)
_THROUGHPUT = re.compile(
    r"Throughput:[ \t]*" + _NUM + r"[ \t]*requests/s,[ \t]*" + _NUM + r"[ \t]*(?:total )?tokens/s"
)
_ARG_INT = r"(?:--{dash}[ \t]*[= ][ \t]*|{under}[ \t]*=[ \t]*)(\d+)"
_SERVE_MODEL = re.compile(r"(?:--model[= ][ \t]*|\bmodel[ \t]*=[ \t]*')([^\s',)]+)")
_TP = re.compile(r"(?:--tensor-parallel-size[= ]|-tp[= ]|\btensor_parallel_size\s*=\s*)(\d+)")


def _arg(text: str, dash: str, under: str) -> int | None:
    m = re.search(_ARG_INT.format(dash=re.escape(dash), under=re.escape(under)), text)
    return int(m.group(1)) if m else None


def _repo_quant(repo: str) -> str | None:
    """A serving quant a repo name announces ("…-AWQ", "…-FP8", "…-GPTQ-Int4")."""
    low = repo.lower()
    for word, quant in (("awq", "AWQ"), ("gptq-int8", "GPTQ-INT8"), ("gptq", "GPTQ-INT4"), ("fp8", "FP8")):
        if word in low:
            return quant
    return None


def _vllm(text: str, ctx: _Context, catalog: Catalog) -> Pasted | None:
    framework = "sglang" if "sglang" in text.lower() else "vllm"
    model_m = _SERVE_MODEL.search(text)
    model = model_m.group(1) if model_m else None
    quant = _repo_quant(model) if model else None
    tp = _TP.search(text)
    count = int(tp.group(1)) if tp else ctx.count
    header = _SERVE_HEADER.search(text)
    if header is not None:
        block = text[header.end() :]
        tpot = _metric(block, "Mean TPOT (ms)")
        if tpot is None or tpot <= 0:
            return None
        concurrency = re.search(r"Max(?:imum)? request concurrency:[ \t]*(\S+)", block)
        single = concurrency is not None and concurrency.group(1) == "1"
        # The single-user decode speed is 1000 / TPOT: the time between output tokens of one
        # request. "Output token throughput" is the sum over all concurrent requests (and counts the
        # prefill time in its denominator), so it is not what one user sees. Under concurrency > 1
        # TPOT is slowed by batching: the number is a lower bound, flagged for the moderator.
        decode = round(1000.0 / tpot, 2)
        prefill = prompt = None
        requests = _metric(block, "Successful requests")
        inputs = _metric(block, "Total input tokens")
        ttft = _metric(block, "Mean TTFT (ms)")
        if single and requests and inputs and ttft:
            # One request at a time: TTFT is the prefill of its prompt (plus one decode step).
            prompt = int(inputs / requests)
            prefill = round(prompt / (ttft / 1000.0), 1)
        run = PastedRun(
            tool="vllm-serve",
            decode_tps=decode,
            prefill_tps=prefill,
            prompt_tokens=prompt,
            model=model,
            quant=quant,
            caveats=() if single else (BATCHED,),
        )
        header_start = len(text[: header.start()].rstrip("=")) if header.start() else 0
        start = model_m.start() if model_m and model_m.start() < header_start else header_start
        return Pasted((run,), framework, ctx.gpu, count, None, ctx.start(start))
    lat = _LAT.search(text)
    if lat is not None:
        output_len = _arg(text, "--output-len", "output_len")
        batch = _arg(text, "--batch-size", "batch_size") or 1
        if output_len is None:
            return None
        # Each sequence of the batch got output_len tokens in that time, prefill included: the
        # per-request decode is slightly underestimated (flagged), and batched when batch > 1.
        caveats = [LATENCY_INCLUDES_PREFILL] + ([BATCHED] if batch > 1 else [])
        run = PastedRun(
            tool="vllm-latency",
            decode_tps=round(output_len / float(lat.group(1)), 2),
            prompt_tokens=None,
            depth=_arg(text, "--input-len", "input_len"),
            model=model,
            quant=quant,
            caveats=tuple(caveats),
        )
        start = min(lat.start(), model_m.start()) if model_m else lat.start()
        return Pasted((run,), framework, ctx.gpu, count, None, ctx.start(start))
    thr = _THROUGHPUT.search(text)
    if thr is not None:
        # Offline batch throughput: many sequences at once, no per-request speed in it. Returned
        # without a decode number so the reply can say why it can't be used.
        run = PastedRun(tool="vllm-throughput", model=model, quant=quant, caveats=(THROUGHPUT_ONLY,))
        return Pasted((run,), framework, ctx.gpu, count, None, ctx.start(thr.start()))
    return None


# --- entry point ---------------------------------------------------------------------------------


def read_pasted(text: str, catalog: Catalog) -> Pasted | None:
    r"""The benchmark output in `text`, or None when there is none. Never raises.

    Every pattern reads within a line (`[ \t]*`, never `\s*` across lines) and starts at a literal
    or a line start, so the time is linear in the text: a run of blank lines or of "=" is scanned
    once (scripts/bench_parse.py measures the worst shapes).
    """
    # Windows line ends as " \n" (same length: offsets into `text` stay valid), so line patterns
    # need no "\r" of their own.
    text = text.replace("\r\n", " \n").replace("\r", "\n")
    try:
        ctx = _context(text, catalog)
        for reader in (_llama_bench, _vllm, _ollama, _llama_timings):
            pasted = reader(text, ctx, catalog)
            if pasted is not None:
                return replace(pasted, gpus=ctx.gpus) if ctx.gpus else pasted
    except (ValueError, IndexError, KeyError, ZeroDivisionError):
        return None
    return None
