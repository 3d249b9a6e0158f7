"""Quantization formats: ggml storage types and named quants with their per-tensor recipes."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal


@dataclass(frozen=True, slots=True)
class GgmlType:
    """A storage type: `block_bytes` bytes hold `block_size` weights.

    Mostly ggml's own types (`kind = "ggml"`, sizes from ggml's type traits); the serving formats'
    layouts (AWQ/GPTQ groups, bitsandbytes blocks, MLX groups, FP8) are described the same way with
    `kind = "serving"` so one size function covers every format.
    """

    id: str  # "Q4_K", "Q6_K", "F16", ...
    block_size: int
    block_bytes: int
    kind: Literal["ggml", "serving"] = "ggml"
    # llama.cpp's `tensor_type_fallback`: the type used when a row length is not a multiple of
    # `block_size` (e.g. Q4_K -> Q5_0); empty = F16.
    fallback: str = ""
    notes: str = ""
    source: str = ""

    @property
    def bits_per_weight(self) -> float:
        return self.block_bytes * 8 / self.block_size


@dataclass(frozen=True, slots=True)
class RecipeRule:
    """One conditional override of a quant's tensor type, applied in order (the last match wins).

    Mirrors a branch of llama.cpp's `llama_tensor_get_type`: e.g. Q4_K_M stores attn_v and ffn_down
    of the "use_more_bits" layers as Q6_K.
    """

    tensor: str  # a tensor class ("ffn_down_exps") or a llama.cpp category ("ffn_down", "attn_v")
    type: str  # storage type id
    # "all", "more_bits" (first 1/8, last 1/8, every third between), "first_8th", "first_16th",
    # "middle" (1/8 .. 7/8), "first:N" (layer index < N)
    layers: str = "all"
    # conditions that must all hold: "<key><op><int>", keys gqa, experts, layers, hidden,
    # native_mxfp4, tied; ops == != >= <= > <
    when: tuple[str, ...] = ()
    from_types: tuple[str, ...] = ()  # only when the type chosen so far is one of these


@dataclass(frozen=True, slots=True)
class Quant:
    id: str  # "Q4_K_M", "AWQ", "FP8", ...
    format: Literal["gguf", "serving", "mlx"]
    aliases: tuple[str, ...]
    # Effective bits per weight over a whole typical model, including the tensors kept at higher
    # precision: the fallback when per-tensor accounting is not possible.
    bpw: float
    # Per-tensor recipe: tensor class or category -> storage type id (a `GgmlType`), with the key
    # "default" for every quantizable 2-D tensor not named. Classes: token_embd, output, attn_q,
    # attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down, ffn_{gate,up,down}_exps (routed
    # experts), ffn_{gate,up,down}_shexp, norm (1-D), router, ... (see core/estimator/weights.py).
    recipe: dict[str, str] = field(default_factory=dict)
    quality: int = 50  # 0..100 rough quality rank, to pick "the next lower quant"
    min_compute_capability: float | None = None  # NVIDIA kernels that need it (FP8: 8.9)
    notes: str = ""
    # Conditional overrides after `recipe`, in order (llama.cpp's per-layer rules).
    rules: tuple[RecipeRule, ...] = ()
    extends: str = ""  # id of a quant whose recipe and rules come first (bartowski's _L variants)
    source: str = ""
    # The quant family: "EXL2" for every "EXL2-4.25"; a framework listing the family runs its members.
    family: str = ""
    # Framework ids that can load it; empty = every framework of its format. ik_llama.cpp's own
    # types (IQ2_K_R4, IQ5_K ...) are GGUF files that mainline llama.cpp, Ollama and LM Studio refuse.
    loaders: tuple[str, ...] = ()
    # A family whose bits per weight the quantizer takes freely (ExLlama's -b 4.25): the range it
    # accepts. Members "EXL2-4.25" are made on demand (`QuantTable`), priced at that bpw.
    free_bpw: tuple[float, float] | None = None


# --- quants with a free bits-per-weight (EXL2 / EXL3) ------------------------------------------------

# Storage types "BPW_4.25": a free bpw, kept exact in whole bytes per 800 weights (2 decimals).
BPW_TYPE_PREFIX = "BPW_"
_BPW_BLOCK = 800
# "EXL2-4.25", "exl2 4.25bpw", "EXL3 3.0 bpw", "exl2_4.0bpw", "4.65bpw exl2", "exl2 4.25" (a decimal).
_FAMILY = r"(exl[23])"
_NUM = r"(\d(?:\.\d{1,3})?)"
_FREE_BPW = (
    re.compile(rf"(?i)(?<![a-z0-9]){_FAMILY}\s*[-_]\s*{_NUM}(?:\s*bpw|(?![\d.]))(?!\s*b(?!pw))"),
    re.compile(rf"(?i)(?<![a-z0-9]){_FAMILY}\s+{_NUM}\s*bpw"),
    re.compile(rf"(?i)(?<![a-z0-9]){_FAMILY}\s+(\d\.\d{{1,3}})(?![\d.])(?!\s*b)"),
    re.compile(rf"(?i)(?<![a-z0-9.]){_NUM}\s*bpw\s*[-_]?\s*{_FAMILY}(?![a-z0-9])"),
)
_BARE_BPW = re.compile(rf"(?i)(?<![a-z0-9.]){_NUM}\s*bpw(?![a-z])")
_MEMBER_ID = re.compile(r"(?i)^(exl[23])-(\d+(?:\.\d+)?)$")


def bpw_text(bpw: float) -> str:
    """4 -> "4.0", 4.25 -> "4.25", 4.650 -> "4.65": the bpw as a member id writes it."""
    text = f"{round(bpw, 2):.2f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def member_id(family: str, bpw: float) -> str:
    return f"{family.upper()}-{bpw_text(bpw)}"


@dataclass(frozen=True, slots=True)
class BpwMention:
    """A free-bpw quant said in a text: its family ("" when only "4.65bpw" was said) and bpw."""

    family: str
    bpw: float
    span: tuple[int, int]


def free_bpw_mentions(text: str) -> tuple[BpwMention, ...]:
    """Every "exl2 4.25bpw"-like phrase in `text`, in order; a bare "4.65bpw" has no family."""
    found: list[BpwMention] = []
    taken: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return all(span[1] <= a or span[0] >= b for a, b in taken)

    for i, pattern in enumerate(_FREE_BPW):
        for m in pattern.finditer(text):
            family, num = (m.group(2), m.group(1)) if i == 3 else (m.group(1), m.group(2))
            if free(m.span()):
                taken.append(m.span())
                found.append(BpwMention(family.upper(), float(num), m.span()))
    for m in _BARE_BPW.finditer(text):
        if free(m.span()):
            taken.append(m.span())
            found.append(BpwMention("", float(m.group(1)), m.span()))
    return tuple(sorted(found, key=lambda f: f.span))


def bpw_type(type_id: str) -> GgmlType | None:
    """The storage type "BPW_4.25" (4.25 bits per weight, no block structure), or None."""
    if not type_id.startswith(BPW_TYPE_PREFIX):
        return None
    try:
        bpw = float(type_id[len(BPW_TYPE_PREFIX) :])
    except ValueError:
        return None
    if not 0 < bpw <= 16:
        return None
    return GgmlType(
        id=type_id,
        block_size=_BPW_BLOCK,
        block_bytes=round(bpw * _BPW_BLOCK / 8),
        kind="serving",
        notes="a free bits-per-weight layout (EXL2/EXL3 average over the quantized linear layers)",
    )


def bpw_type_id(bpw: float) -> str:
    return f"{BPW_TYPE_PREFIX}{bpw:.2f}"


class TypeTable(dict[str, GgmlType]):
    """The storage types by id; "BPW_4.25" exists for any bpw without being listed (so iterating
    shows only the catalog's own types)."""

    def __init__(self, items: Iterable[tuple[str, GgmlType]] = ()) -> None:
        super().__init__(items)
        self._made: dict[str, GgmlType] = {}

    def __missing__(self, key: str) -> GgmlType:
        made = self._make(key)
        if made is None:
            raise KeyError(key)
        return made

    def _make(self, key: str) -> GgmlType | None:
        hit = self._made.get(key)
        if hit is None and (hit := bpw_type(key)) is not None:
            self._made[key] = hit  # one object per id: callers cache on identity
        return hit

    def get(self, key: str, default: GgmlType | None = None) -> GgmlType | None:  # type: ignore[override]
        return super().get(key) or self._make(key) or default

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) or (isinstance(key, str) and self._make(key) is not None)


class QuantTable(dict[str, Quant]):
    """The quants by id; a member of a free-bpw family ("EXL2-4.25") exists for every bpw in the
    family's range without being listed: made from the family entry, its linear layers at that bpw."""

    def __init__(self, items: Iterable[tuple[str, Quant]] = ()) -> None:
        super().__init__(items)
        self._made: dict[str, Quant] = {}

    def __missing__(self, key: str) -> Quant:
        made = self._make(key)
        if made is None:
            raise KeyError(key)
        return made

    def get(self, key: str, default: Quant | None = None) -> Quant | None:  # type: ignore[override]
        return super().get(key) or self._make(key) or default

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) or (isinstance(key, str) and self._make(key) is not None)

    def member(self, family: str, bpw: float) -> Quant | None:
        """The family's member at `bpw` ("EXL2", 4.25 -> EXL2-4.25); None outside its range."""
        return self._make(member_id(family, bpw))

    def _make(self, key: str) -> Quant | None:
        m = _MEMBER_ID.match(key)
        if m is None:
            return None
        qid = member_id(m.group(1), float(m.group(2)))
        hit = self._made.get(qid)
        if hit is not None:
            return hit
        base = super().get(m.group(1).upper())
        if base is None or base.free_bpw is None:
            return None
        bpw = round(float(m.group(2)), 2)
        low, high = base.free_bpw
        if not low <= bpw <= high:
            return None
        recipe = dict(base.recipe) | {"default": bpw_type_id(bpw)}
        made = replace(
            base,
            id=qid,
            aliases=(),
            bpw=bpw,
            recipe=recipe,
            quality=self._quality_at(bpw, base.quality),
            family=base.family or base.id,
            free_bpw=None,
            notes=f"{base.id} at {bpw_text(bpw)} bpw over the quantized linear layers. {base.notes}".strip(),
        )
        self._made[qid] = made
        if qid != key:
            self._made[key] = made
        return made

    def _quality_at(self, bpw: float, fallback: int) -> int:
        """The quality rank of the GGUF quant nearest in bpw: a 4.25 bpw EXL2 sits with Q4_K_S/IQ4_XS."""
        gguf = [q for q in self.values() if q.format == "gguf" and not q.loaders]
        if not gguf:
            return fallback
        return min(gguf, key=lambda q: abs(q.bpw - bpw)).quality


def free_bpw_quant(text: str, quants: QuantTable, family: str = "") -> str | None:
    """The member id a text names ("exl2 4.25bpw" -> "EXL2-4.25"; "4.65bpw" -> `family`'s member
    when one is given); None when the text names no free-bpw quant or the bpw is outside the range."""
    mentions = free_bpw_mentions(text)
    if len(mentions) != 1:
        return None
    found = mentions[0]
    made = quants.member(found.family or family, found.bpw) if (found.family or family) else None
    return made.id if made else None
