"""Turn the text of a `/submit` into raw fields, one set per measurement (nothing resolved yet).

Three ways in, combinable:
- `key=value` fields with shell-like quoting: `gpu="RTX 4090" model='llama 3 8b' decode=128.5`;
  keys have aliases (catalogs/submit.toml [keys]);
- pasted tool output (`pasted.py`): llama-bench tables, llama.cpp timings, ollama --verbose, vLLM;
- a plain sentence: "4090 llama 3 8b q4_k_m 128 tok/s", "双3090 跑 llama3 70b q4 17 token/s",
  read with the question parser plus a speed regex.
Precedence when they disagree: the `fields` the caller passes (a form) > key=value > the paste >
the sentence. The paste's log lines are more exact than a sentence, and what someone types as a
field is a deliberate correction of both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from core.catalog.loader import Catalog
from core.community.pasted import MODEL_FROM_ARCH, Pasted, PastedRun, read_pasted
from core.understanding.parse import parse_question
from core.understanding.resolve import Resolution


@dataclass(frozen=True, slots=True)
class RawRun:
    """One measurement's fields as text (canonical keys), with where each came from."""

    fields: dict[str, str]
    origin: dict[str, str]  # key -> "form" | "field" | "paste" | "sentence"
    caveats: tuple[str, ...] = ()  # pasted.py caveat codes
    tool: str | None = None  # the pasted tool, when the run came from a paste
    n_gpu_layers: int | None = None
    params_b: float | None = None  # parameter count the paste printed (checks the model reading)
    # Names the sentence parser already resolved (its words aren't kept): key -> Resolution.
    resolved: dict[str, Resolution] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ParsedSubmission:
    runs: tuple[RawRun, ...]
    unknown_keys: tuple[str, ...] = ()  # `foo=bar` with a key we don't know (likely a typo)
    pasted: Pasted | None = None
    text: str = ""  # the (length-capped) text that was read


@cache
def _settings(catalog: Catalog) -> dict:
    return catalog.tables.get("submit", {})


@cache
def _aliases(catalog: Catalog) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, names in _settings(catalog).get("keys", {}).items():
        out[key] = key
        for name in names:
            out[name.lower()] = key
    return out


# key=value: the key stands alone before "=" (no spaces around it, as people type fields); values
# are "double", 'single', “curly” quoted or bare up to whitespace.
_KV = re.compile(
    r"(?:(?<=\s)|^)([A-Za-z_\u4e00-\u9fff]+)[=＝]"
    r"(?:\"([^\"]*)\"|'([^']*)'|“([^”]*)”|「([^」]*)」|(\S+))"
)
# Python reprs in logs (vLLM's Namespace(...), "with config: model='...', ...") look like fields.
_REPR_LINE = re.compile(r"Namespace\(|with config:|\bconfig=")


def _split_fields(text: str, catalog: Catalog) -> tuple[dict[str, str], list[str], str]:
    """(known fields, unknown keys, the text with every field blanked)."""
    aliases = _aliases(catalog)
    fields: dict[str, str] = {}
    unknown: list[str] = []
    out = []
    for line in text.splitlines(keepends=True):
        if _REPR_LINE.search(line):
            out.append(line)
            continue

        def take(m: re.Match[str]) -> str:
            key = m.group(1).lower()
            value = next(g for g in m.groups()[1:] if g is not None)
            if m.group(6) is not None:
                value = value.rstrip(",;，；")
            canonical = aliases.get(key)
            if canonical is None:
                unknown.append(m.group(1))
                return m.group(0)
            fields[canonical] = value.strip()
            return " " * len(m.group(0))

        out.append(_KV.sub(take, line))
    return fields, unknown, "".join(out)


# --- sentences -----------------------------------------------------------------------------------

_NUMBER = r"(\d+(?:\.\d+)?)"
_UNIT = r"(?:个\s*)?(?:tokens?|toks?|tk|t)\s*(?:/\s*|\s+per\s+|\s*每\s*)(?:s|secs?|seconds?|秒)(?![a-z])"
_SPEED = re.compile(
    rf"{_NUMBER}\s*(?:{_UNIT}|tps(?![a-z])|tokens?\s+a\s+second)|每秒\s*{_NUMBER}\s*(?:个\s*)?(?:tokens?|toks?|t)",
    re.I,
)
_PREFILL_WORDS = re.compile(r"(pp\d*|prefill|pre-fill|prompt|预填充|预处理|提示词|首字)", re.I)
_DECODE_WORDS = re.compile(r"(tg\d*|decode|decoding|generation|gen|eval|生成|输出|解码|推理)", re.I)
_BEFORE = re.compile(r"(\w+)[ \t]*[:：=]?[ \t]*$")
_AFTER = re.compile(r"[ \t]*[-(（:：]?[ \t]*(\w+)")


def _marker(window: str, last: bool) -> str | None:
    """ "prefill" / "decode" for the marker word nearest the number in `window`."""
    hits = [(m.start(), "prefill") for m in _PREFILL_WORDS.finditer(window)]
    hits += [(m.start(), "decode") for m in _DECODE_WORDS.finditer(window)]
    if not hits:
        return None
    hits.sort()
    return hits[-1][1] if last else hits[0][1]


def sentence_speeds(text: str) -> tuple[float | None, float | None, str]:
    """(decode, prefill, text with the speeds blanked) from a free sentence.

    A speed is a number with a token-rate unit; what it measures is read from a marker word next to
    it (pp/prefill/预填充 or tg/decode/生成). Unmarked numbers are decode (what people quote).
    """
    decode = prefill = None
    blanked = text
    prev_end = 0
    for m in _SPEED.finditer(text):
        value = float(m.group(1) or m.group(2))
        # A marker word right before the number ("pp512 3500 t/s") names it; else one right after
        # the unit ("120 t/s decode"); else the nearest one since the previous speed.
        before = _BEFORE.search(text, prev_end, m.start())
        kind = _marker(before.group(1), last=True) if before else None
        after = _AFTER.match(text, m.end())
        if kind is None and after:
            kind = _marker(after.group(1), last=False)
        if kind is None:
            kind = _marker(text[prev_end : m.start()], last=True) or "decode"
        if kind == "prefill":
            prefill = prefill if prefill is not None else value
        else:
            decode = decode if decode is not None else value
        blanked = blanked[: m.start()] + " " * (m.end() - m.start()) + blanked[m.end() :]
        prev_end = m.end()
    return decode, prefill, blanked


_COMMAND = re.compile(r"^\s*/submit(?:@\w+)?", re.I)


def _sentence_fields(text: str, catalog: Catalog) -> tuple[dict[str, str], dict[str, Resolution]]:
    limit = int(_settings(catalog).get("submit", {}).get("sentence_max_chars", 300))
    text = _COMMAND.sub(" ", text)[:limit]
    resolved: dict[str, Resolution] = {}
    if not text.strip():
        return {}, resolved
    decode, prefill, rest = sentence_speeds(text)
    fields: dict[str, str] = {}
    if decode is not None:
        fields["decode"] = str(decode)
    if prefill is not None:
        fields["prefill"] = str(prefill)
    if not rest.strip():
        return fields, resolved
    q = parse_question(rest, catalog)
    if q.gpu is not None and (q.gpu.best_id or q.gpu.candidates):
        # The parser doesn't keep the words that named the card: the field carries the id (or the
        # closest candidate) for display, the Resolution itself goes along for validation.
        fields["gpu"] = q.gpu.best_id or q.gpu.candidates[0][0]
        resolved["gpu"] = q.gpu
        if q.gpu.memory_gib:
            fields["memory"] = f"{q.gpu.memory_gib:g}"
        if q.gpu_count > 1:
            fields["count"] = str(q.gpu_count)
    if q.model is not None and (q.model.best_id or q.model.candidates):
        fields["model"] = q.model.best_id or q.model.candidates[0][0]
        resolved["model"] = q.model
    if q.quants:
        fields["quant"] = q.quants[0]
    if q.contexts:
        fields["ctx"] = str(q.contexts[0])
    if q.framework:
        fields["framework"] = q.framework
    if q.os:
        fields["os"] = q.os
    return fields, resolved


# --- entry point ---------------------------------------------------------------------------------


def _merge(layers: list[tuple[str, dict[str, str]]]) -> tuple[dict[str, str], dict[str, str]]:
    fields: dict[str, str] = {}
    origin: dict[str, str] = {}
    for name, layer in layers:  # lowest precedence first
        for key, value in layer.items():
            if value != "":
                fields[key] = value
                origin[key] = name
    return fields, origin


def _paste_run(pasted: Pasted, run: PastedRun) -> RawRun:
    fields = pasted.fields(run)
    return RawRun(
        fields,
        dict.fromkeys(fields, "paste"),
        run.caveats,
        run.tool,
        run.n_gpu_layers,
        run.params_b,
    )


def parse_submission(text: str, catalog: Catalog, form: dict[str, str] | None = None) -> ParsedSubmission:
    """Read `text` (and optional `form` fields, which win) into one RawRun per measurement."""
    limit = int(_settings(catalog).get("submit", {}).get("text_max_chars", 60000))
    text = (text or "")[:limit]
    aliases = _aliases(catalog)
    form_fields: dict[str, str] = {}
    unknown: list[str] = []
    for key, value in (form or {}).items():
        canonical = aliases.get(str(key).lower())
        if canonical is None:
            unknown.append(str(key))
        elif value is not None:
            form_fields[canonical] = str(value).strip()

    typed, unknown_typed, rest = _split_fields(text, catalog)
    unknown.extend(unknown_typed)
    pasted = read_pasted(rest, catalog)
    # The sentence is what the submitter wrote before the tool output ("my 4090: <paste>"); inside a
    # log, card and model words are noise the log lines already cover.
    sentence, resolved = _sentence_fields(rest[: pasted.start] if pasted else rest, catalog)

    base_runs: list[RawRun] = [_paste_run(pasted, r) for r in pasted.runs] if pasted else [RawRun({}, {})]
    runs = []
    for base in base_runs:
        fields, origin = _merge(
            [("sentence", sentence), ("paste", base.fields), ("field", typed), ("form", form_fields)]
        )
        caveats = base.caveats
        if origin.get("model") != "paste":
            # The submitter named the model: llama-bench's architecture guess no longer matters.
            caveats = tuple(c for c in caveats if c != MODEL_FROM_ARCH)
        kept = {k: r for k, r in resolved.items() if origin.get(k) == "sentence"}
        runs.append(RawRun(fields, origin, caveats, base.tool, base.n_gpu_layers, base.params_b, kept))
    return ParsedSubmission(tuple(runs), tuple(dict.fromkeys(unknown)), pasted, text)
