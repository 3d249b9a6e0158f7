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

Nothing typed is lost on the way: a count or a mix written into the card ("2x 3090", "3090+3060")
becomes the count (a mix is kept in the notes and flagged); an Ollama tag says its quant ("qwen3:8b"
is Q4_K_M, Ollama's default); llama-bench's "llama 8B" is resolved with its params and size columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from core.catalog.loader import Catalog
from core.catalog.sections import sections
from core.community.arch_model import resolve_arch_model
from core.community.card_count import read_cards
from core.community.pasted import (
    MODEL_FROM_ARCH,
    OLLAMA_DEFAULT_QUANT,
    QUANT_ASSUMED,
    Pasted,
    PastedRun,
    ollama_tag,
    quant_in_name,
    read_pasted,
)
from core.understanding.parse import parse_question
from core.understanding.resolution import Resolution


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
    gpu_mix: tuple[str, ...] = ()  # each card as written when the box mixes cards ("3090", "3060")
    size_gib: float | None = None  # weight size the paste printed (llama-bench's size column)


@dataclass(frozen=True, slots=True)
class ParsedSubmission:
    runs: tuple[RawRun, ...]
    unknown_keys: tuple[str, ...] = ()  # `foo=bar` with a key we don't know (likely a typo)
    pasted: Pasted | None = None
    text: str = ""  # the (length-capped) text that was read


@cache
def _aliases(catalog: Catalog) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, names in sections(catalog).submit.keys.items():
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

    for line in text.splitlines(keepends=True):
        # Most lines of a paste hold no "=": kept without a regex call (a 60 KB paste is many lines).
        if ("=" not in line and "＝" not in line) or _REPR_LINE.search(line):
            out.append(line)
        else:
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
    limit = sections(catalog).submit.submit.sentence_max_chars
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


# --- what the fields imply -----------------------------------------------------------------------

MIXED_GPUS = "mixed_gpus"  # caveat: the box mixes cards; the estimate prices the first one


def _split_cards(layer: dict[str, str], catalog: Catalog) -> tuple[dict[str, str], tuple[str, ...]]:
    """A layer with "2x 3090" read as gpu=3090 count=2 (a count given beside it wins), and the mix."""
    cards = read_cards(layer["gpu"], catalog) if layer.get("gpu") else None
    if cards is None:
        return layer, ()
    out = {**layer, "gpu": cards.name}
    if not out.get("count"):
        out["count"] = str(cards.count)
    return out, cards.mix


def _imply_quant(fields: dict[str, str], origin: dict[str, str]) -> bool:
    """Fill a missing quant from the model's name: a file or tag that carries one ("…-Q8_0.gguf",
    "qwen2.5:7b-q8_0"), else an Ollama library tag's default. True when the quant is an assumption."""
    model = fields.get("model", "")
    if fields.get("quant") or not model:
        return False
    is_tag = ":" in model and origin.get("model") != "sentence"
    quant = ollama_tag(model)[1] if is_tag else quant_in_name(model)
    if quant is not None:
        fields["quant"], origin["quant"] = quant, origin.get("model", "field")
        return False
    if is_tag or fields.get("framework", "").strip().lower() == "ollama":
        fields["quant"], origin["quant"] = OLLAMA_DEFAULT_QUANT, origin.get("model", "field")
        return True
    return False


def _keep_mix(fields: dict[str, str], origin: dict[str, str], mix: tuple[str, ...]) -> None:
    """A mix of cards is kept, as written, in the notes the moderator reads (the measurement has one
    card id and a count)."""
    label = "cards: " + " + ".join(mix)
    fields["notes"] = f"{fields['notes']} · {label}" if fields.get("notes") else label
    origin.setdefault("notes", origin.get("gpu", "field"))


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
        gpu_mix=pasted.gpus,
        size_gib=run.size_gib,
    )


def _run(
    base: RawRun,
    layers: list[tuple[str, dict[str, str]]],
    sentence_resolved: dict[str, Resolution],
    catalog: Catalog,
) -> RawRun:
    """One measurement from its layers (lowest precedence first): merged, with what they imply."""
    mixes: dict[str, tuple[str, ...]] = {"paste": base.gpu_mix}
    split: list[tuple[str, dict[str, str]]] = []
    for name, layer in layers:
        layer, mix = _split_cards(layer, catalog)
        split.append((name, layer))
        mixes[name] = mix or mixes.get(name, ())
    fields, origin = _merge(split)
    caveats = base.caveats
    if origin.get("model") != "paste":
        # The submitter named the model: llama-bench's architecture guess no longer matters.
        caveats = tuple(c for c in caveats if c != MODEL_FROM_ARCH)
    if _imply_quant(fields, origin):
        caveats = (*caveats, QUANT_ASSUMED)
    mix = mixes.get(origin.get("gpu", ""), ())
    if mix:
        _keep_mix(fields, origin, mix)
        caveats = (*caveats, MIXED_GPUS)
    kept = {k: r for k, r in sentence_resolved.items() if origin.get(k) == "sentence"}
    if MODEL_FROM_ARCH in caveats and fields.get("model"):
        arch = resolve_arch_model(fields["model"], base.params_b, base.size_gib, fields.get("quant"), catalog)
        if arch is not None:
            kept["model"] = arch
    caveats = tuple(dict.fromkeys(caveats))
    return RawRun(
        fields, origin, caveats, base.tool, base.n_gpu_layers, base.params_b, kept, mix, base.size_gib
    )


def parse_submission(text: str, catalog: Catalog, form: dict[str, str] | None = None) -> ParsedSubmission:
    """Read `text` (and optional `form` fields, which win) into one RawRun per measurement."""
    limit = sections(catalog).submit.submit.text_max_chars
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
    runs = [
        _run(
            base,
            [("sentence", sentence), ("paste", base.fields), ("field", typed), ("form", form_fields)],
            resolved,
            catalog,
        )
        for base in base_runs
    ]
    return ParsedSubmission(tuple(runs), tuple(dict.fromkeys(unknown)), pasted, text)
