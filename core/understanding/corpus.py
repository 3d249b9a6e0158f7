"""Score `parse_question` against a corpus of questions with their expected reading.

Shared by the corpus test and `scripts/bench_understanding.py`, so both count "right" the same way.
A line of the corpus (JSONL): {"q", "gpu", "count", "memory", "model", "quants", "contexts", "os",
"framework", "intent"}; ids are catalog ids, null where the question names nothing. Reading fields a
line may add (absent: the default below): "cards" ([[id, count, memory], ...], default the one card
above), "host_ram", "ram_type", "kv_type", "machines", "notes" (note codes); and, checked only when
the line has them: "laptop", "size_b" (a size typed without a model name), "gpu_sure" / "model_sure"
(false: the name must be asked back or said unknown, whichever id ranks first), "ram_channels" (memory
channels said), "other_gpu" (a comparison's second card), "backends" (every backend named, in
order: "ROCm vs Vulkan" -> ["rocm", "vulkan"]), "users" (concurrent users said), "cpu_sockets"
("双路至强"), "cpu_moe" (`--n-cpu-moe N`), "gpu_util" (`--gpu-memory-utilization 0.7`),
"model_candidates" (ids the model's candidates must all hold: "deepseek" on a laptop offers the R1
distills). A line may say where the question was found ("source", a URL) and the class of miss it
tests ("class"); both are kept for people and not scored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.catalog.loader import Catalog
from core.understanding.hub_rule import model_need
from core.understanding.intent import intent_details
from core.understanding.parse import ParsedQuestion, parse_question

# Compared on every line of a corpus.
_ALWAYS = (
    "gpu",
    "count",
    "memory",
    "model",
    "quants",
    "contexts",
    "os",
    "framework",
    "intent",
    "cards",
    "host_ram",
    "ram_type",
    "kv_type",
    "machines",
    "notes",
)
# Compared only where a line has them.
_WHERE_GIVEN = (
    "laptop",
    "size_b",
    "gpu_sure",
    "model_sure",
    "ram_channels",
    "other_gpu",
    "backends",
    "users",
    "cpu_sockets",
    "cpu_moe",
    "gpu_util",
    "model_candidates",
)
OPTIONAL = frozenset(_WHERE_GIVEN)
FIELDS = (*_ALWAYS, *_WHERE_GIVEN)


@dataclass(frozen=True, slots=True)
class CaseResult:
    question: str
    wrong: dict[str, tuple[Any, Any]]  # field -> (expected, got)
    seconds: float
    checked: frozenset[str] = frozenset(FIELDS)  # the fields this line is scored on
    case: dict[str, Any] = field(default_factory=dict)  # the corpus line (its intent, its class)

    @property
    def right(self) -> bool:
        return not self.wrong


def load_corpus(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def reading(parsed: ParsedQuestion) -> dict[str, Any]:
    """The parse in the corpus's terms."""
    # The machine's cards: those named as either one ("A100/A800") or compared ("vs") are not in it.
    together = ("",) if parsed.intent == "compare" else ("", "+")
    cards = [[c.res.best_id, c.count, c.res.memory_gib] for c in parsed.cards if c.joiner in together]
    return {
        "gpu": parsed.gpu.best_id if parsed.gpu else None,
        "count": parsed.gpu_count,
        "memory": parsed.gpu.memory_gib if parsed.gpu else None,
        "model": parsed.model.best_id if parsed.model else None,
        "quants": list(parsed.quants),
        "contexts": list(parsed.contexts),
        "os": parsed.os,
        "framework": parsed.framework,
        "intent": parsed.intent,
        "cards": cards,
        "host_ram": parsed.host_ram_gib,
        "ram_type": parsed.host_ram_type,
        "kv_type": parsed.kv_type,
        "machines": parsed.machines,
        "notes": [code for code, _value in parsed.notes],
        "laptop": parsed.laptop,
        "size_b": parsed.size_b,
        "gpu_sure": parsed.gpu.confident if parsed.gpu else None,
        "model_sure": parsed.model.confident if parsed.model else None,
        "ram_channels": parsed.host_ram_channels,
        "other_gpu": _other_gpu(parsed),
        "backends": list(parsed.backends),
        "cpu_sockets": parsed.cpu_sockets,
        "cpu_moe": parsed.cpu_moe_layers,
        "gpu_util": parsed.gpu_memory_utilization,
    }


def _other_gpu(parsed: ParsedQuestion) -> str | None:
    """A comparison's second card ("4090 vs Titan RTX", "3060 和 4060 哪个快"): the card after the first."""
    if parsed.intent != "compare" or len(parsed.cards) < 2:
        return None
    return parsed.cards[1].res.best_id


def score_case(case: dict[str, Any], catalog: Catalog) -> CaseResult:
    import time

    start = time.perf_counter()
    parsed = parse_question(case["q"], catalog)
    seconds = time.perf_counter() - start
    got = reading(parsed)
    # "model_sure" is what the reply does with the name: after the Hub rule (a catalog reading that
    # lacks a word of the typed name, "zorblax a13b" vs Hunyuan-A13B, is not taken).
    after, _need = model_need(parsed.raw, parsed.model, catalog)
    if after is not None:
        got["model_sure"] = after.confident and after.best_id is not None
    got["users"] = intent_details(case["q"], catalog).users
    held = {cid for cid, _score in parsed.model.candidates} if parsed.model else set()
    want_candidates = case.get("model_candidates", [])
    got["model_candidates"] = [cid for cid in want_candidates if cid in held]
    if parsed.gpu is None:
        # Cards named only by their memory ("3张24GB的显卡"): the count the reply prices them at.
        got["count"] = intent_details(case["q"], catalog).memory_only_count
    checked = {name for name in FIELDS if name not in OPTIONAL or name in case}
    # An unsure name is asked back with candidates; which one ranks first is not the point.
    checked -= {kind for kind in ("gpu", "model") if case.get(f"{kind}_sure") is False}
    wrong = {
        name: (case.get(name, _default(name, case)), got[name])
        for name in FIELDS
        if name in checked and _norm(case.get(name, _default(name, case))) != _norm(got[name])
    }
    return CaseResult(case["q"], wrong, seconds, frozenset(checked), case)


def _default(name: str, case: dict[str, Any]) -> Any:
    if name == "cards":
        return [[case["gpu"], case.get("count", 1), case.get("memory")]] if case.get("gpu") else []
    return {"count": 1, "quants": [], "contexts": [], "intent": "general", "machines": 1, "notes": []}.get(
        name
    )


def _norm(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, list | tuple):
        return [_norm(v) for v in value]
    return value


def language_of(question: str) -> str:
    """ "zh" for a question with Chinese characters, else "en": the split the bench reports by."""
    return "zh" if any("\u3400" <= ch <= "\u9fff" for ch in question) else "en"
