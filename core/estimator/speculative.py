"""Speculative-decoding options for a model on a framework: draft model, native MTP, n-gram, EAGLE.

Flag templates live in catalogs/frameworks.toml ([framework.speculative]); which drafts exist comes
from the model catalog (Model.draft_models, Model.mtp_layers). When the catalog names no draft, a
smaller model of the same family with the same vocabulary size is offered as an inferred draft:
an identical vocabulary is the best cheap proxy for a shared tokenizer, and the note says so.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cache
from typing import Literal

from core.catalog.framework import SpecSupport
from core.catalog.kv_cache import FULL_PRECISION_KV
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.quant import Quant
from core.catalog.sections import sections
from core.estimator.choice import Choice
from core.estimator.frameworks import render_command
from core.estimator.memory import kv_cache_bytes
from core.i18n import Note

SpecKind = Literal["draft", "mtp", "ngram", "eagle", "none"]
_GIB = 1024**3
# Bits per weight of a draft when the caller gives no quant: drafts are small, so people keep them
# at Q8_0 (8.5 bpw) in GGUF and at 16-bit in serving frameworks.
_DEFAULT_DRAFT_BPW = {"gguf": 8.5, "serving": 16.0, "mlx": 4.5}
# "About a tenth of the target's active size", with room for the 1B drafts of 8B models.
_MAX_DRAFT_SHARE = 0.15
_FRAMEWORK_FORMAT = {"vllm": "serving", "sglang": "serving", "exllamav2": "serving", "mlx": "mlx"}


@dataclass(frozen=True, slots=True)
class SpecOption:
    kind: SpecKind
    framework: str
    flags: str  # filled flags to add to the framework's launch command
    notes: tuple[Note, ...]
    draft_model: str | None = None  # catalog id of the draft
    draft_file: str = ""  # GGUF file name (llama.cpp family)
    draft_repo: str = ""  # Hugging Face repo (vLLM, SGLang, MLX, TabbyAPI)
    extra_memory_gib: float = 0.0  # approximate, weights of the draft / MTP layers only
    inferred: bool = False  # draft guessed from family + vocabulary, not listed in the catalog
    command: str = ""  # the whole launch command with the flags, program name included


def _draft_bpw(framework_id: str, quant: Quant | None, catalog: Catalog) -> float:
    if quant is not None:
        return quant.bpw
    fmt = _FRAMEWORK_FORMAT.get(framework_id, "gguf")
    fallback = catalog.quants.get("Q8_0") if fmt == "gguf" else None
    return fallback.bpw if fallback else _DEFAULT_DRAFT_BPW[fmt]


def weights_gib(params_b: float, bpw: float) -> float:
    return params_b * 1e9 * bpw / 8 / _GIB


def room_beside(choice: Choice) -> float:
    """GiB the recommended row leaves free on the card(s) for a draft: usable less what the row takes
    as the command runs it (its on-GPU way out, a quantized KV cache, included); 0 when any of the
    target is in system RAM (an offloaded target has no room to give, and a draft there is slower)."""
    row = choice.row
    if choice.place != "gpu" or choice.decode_mid is None:
        return 0.0
    total = row.total_gib
    if row.status == "no_fit":
        if row.remedy is None or row.remedy.total_gib is None:
            return 0.0
        total = row.remedy.total_gib
    return max(row.usable_gib - total, 0.0)


def draft_fits(
    draft: Model,
    weights: float,
    room_gib: float,
    ctx: int,
    catalog: Catalog,
    kv_type: str = FULL_PRECISION_KV,
) -> bool:
    """The draft's weights (`weights` GiB) and its own KV cache at the target's context fit in
    `room_gib` (the draft runs at the same context as the target, with its own cache)."""
    kv = kv_cache_bytes(draft, ctx, kv_type, catalog) / _GIB
    return weights + kv <= room_gib


def option_fits(option: SpecOption, room_gib: float, ctx: int, catalog: Catalog) -> bool:
    """A route fits beside the target: a draft with its KV cache, MTP layers by their weights; n-gram
    and EAGLE heads (small) always."""
    if option.kind == "draft" and option.draft_model in catalog.models:
        draft = catalog.models[option.draft_model or ""]
        return draft_fits(draft, option.extra_memory_gib, room_gib, ctx, catalog)
    return option.extra_memory_gib <= room_gib


def draft_candidates(model: Model, catalog: Catalog) -> tuple[tuple[Model, bool], ...]:
    """(draft, inferred) pairs: the catalog's drafts, else same family + same vocab, smallest first."""
    # A draft pays off only when it costs a small share of what the target reads per token (its
    # *active* size: gpt-oss-20b is no draft for gpt-oss-120b, 5.1B active), and it must share the
    # tokenizer (the same vocabulary size is the cheap proxy for a draft the catalog doesn't list;
    # a listed one was checked by whoever listed it: Gemma 3 1B's vocabulary is 64 image tokens short
    # of the 27B's and still drafts for it), so listed drafts are held to the size rule only.
    limit = model.active_params_b * _MAX_DRAFT_SHARE
    known = (catalog.models[d] for d in model.draft_models if d in catalog.models)
    listed = tuple(d for d in known if d.params_b <= limit)
    if listed:
        return tuple((d, False) for d in listed)
    same = [
        m
        for m in catalog.models.values()
        if m.id != model.id and m.family == model.family and m.vocab == model.vocab and m.params_b <= limit
    ]
    same.sort(key=lambda m: m.params_b)
    return tuple((d, True) for d in same[:1])


@cache
def _eagle_heads(catalog: Catalog) -> dict[str, str]:
    """Catalog model id -> its published EAGLE-3 head (catalogs/eagle_drafts.toml)."""
    return {head.model: head.repo for head in sections(catalog).eagle_drafts.eagle}


def eagle_head(model: Model, catalog: Catalog) -> str:
    """The published EAGLE-3 draft head for `model`, "" when none is known: a head is trained on
    one target's hidden states, so a neighbour's head (or a placeholder) is no answer."""
    return _eagle_heads(catalog).get(model.id, "")


def _draft_gguf(draft: Model, quant_id: str) -> str:
    return f"{draft.gguf_file_stem or draft.name}-{quant_id}.gguf"


def _base_command(model: Model, framework_id: str, catalog: Catalog) -> str:
    """The target's launch command up to the speculative flags, when the caller has none: the
    framework's program and the target model (a GGUF at Q4_K_M for llama.cpp, the repo otherwise)."""
    fw = catalog.frameworks[framework_id]
    program = fw.command.split("{", 1)[0].strip()
    repo = model.hf_repo or model.name
    if fw.engine == "llama.cpp" and program.startswith("llama-server"):
        stem = model.gguf_file_stem or model.name
        return f"llama-server -m {stem}-{model.native_quant or 'Q4_K_M'}.gguf -ngl 99"
    if fw.engine in ("vllm", "sglang") or program.endswith(("--model-path", "--model", "serve")):
        return f"{program} {repo}"
    return ""


def speculative_options(
    model: Model,
    framework_id: str,
    catalog: Catalog,
    quant: Quant | None = None,
    base_command: str | None = None,
) -> list[SpecOption]:
    """Every speculative-decoding route for `model` on `framework_id`, best first.

    `quant` is the quant the draft would be stored in (default: Q8_0 for GGUF frameworks, 16-bit
    for serving ones); it only sets the draft memory estimate and the draft file name.
    `base_command`: the target's own launch command (the reply's); each option's `command` is it
    with the option's flags (default: the framework's program with the target model).
    """
    options = _speculative_options(model, framework_id, catalog, quant)
    base = base_command if base_command is not None else _base_command(model, framework_id, catalog)
    if not base:
        return options
    return [dataclasses.replace(o, command=f"{base} {o.flags}") if o.flags else o for o in options]


def _speculative_options(
    model: Model,
    framework_id: str,
    catalog: Catalog,
    quant: Quant | None = None,
) -> list[SpecOption]:
    fw = catalog.frameworks[framework_id]
    params = {"framework": fw.name, "model": model.name}
    gain = Note("fw.spec.gain", params)
    spec: SpecSupport | None = fw.speculative
    if spec is None:
        return [SpecOption("none", fw.id, "", (Note("fw.spec.unsupported", params),))]
    out: list[SpecOption] = []
    bpw = _draft_bpw(framework_id, quant, catalog)
    draft_quant_id = quant.id if quant is not None else "Q8_0"

    if model.mtp_layers:
        mtp_gib = weights_gib(model.params_b / model.layers * model.mtp_layers, bpw)
        mtp_params = params | {"layers": model.mtp_layers, "gib": mtp_gib}
        if spec.mtp:
            method = spec.mtp_methods.get(model.family, spec.mtp_default_method)
            flags = render_command(spec.mtp, {"mtp_method": method})
            mtp_notes = (Note("fw.spec.mtp", mtp_params), gain)
            out.append(SpecOption("mtp", fw.id, flags, mtp_notes, extra_memory_gib=mtp_gib))
        else:
            out.append(SpecOption("mtp", fw.id, "", (Note("fw.spec.mtp_unsupported", params),)))

    drafts = draft_candidates(model, catalog)
    if spec.draft:
        for draft, inferred in drafts:
            file = _draft_gguf(draft, draft_quant_id)
            repo = draft.hf_repo or draft.name
            values = {"draft_file": file, "draft_repo": repo, "draft_ngl": "99"}
            gib = weights_gib(draft.params_b, bpw)
            notes = [Note("fw.spec.draft", params | {"draft": draft.name, "gib": gib})]
            if inferred:
                notes.append(Note("fw.spec.draft_inferred", params | {"draft": draft.name}))
            notes.append(gain)
            out.append(
                SpecOption(
                    "draft",
                    fw.id,
                    render_command(spec.draft, values),
                    tuple(notes),
                    draft_model=draft.id,
                    draft_file=file,
                    draft_repo=repo,
                    extra_memory_gib=gib,
                    inferred=inferred,
                )
            )

    head = eagle_head(model, catalog) if spec.eagle else ""
    if head:
        eagle_notes = (Note("fw.spec.eagle", params | {"repo": head}), gain)
        flags = render_command(spec.eagle, {"eagle_repo": head})
        out.append(SpecOption("eagle", fw.id, flags, eagle_notes, draft_repo=head))

    if spec.ngram:
        notes_list = [Note("fw.spec.ngram", params)]
        if not model.mtp_layers:
            code = "fw.spec.no_mtp" if drafts else "fw.spec.none_in_catalog"
            notes_list.insert(0, Note(code, params))
        out.append(SpecOption("ngram", fw.id, render_command(spec.ngram, {}), tuple(notes_list)))
    elif not model.mtp_layers and not drafts:
        out.append(SpecOption("ngram", fw.id, "", (Note("fw.spec.none_in_catalog", params),)))
    return out
