"""The "Sources" view of an answer (the seed page's 来源链接): where each figure came from.

The card's spec sheet, the model's own repo and config, the GGUF listing the launch command names,
every measured anchor the answer shows (with its link), and what the speed model was fitted on.
tokbot collects and credits; it never passes another page's number off as its own.
"""

from __future__ import annotations

from core.anchors.anchor_index import AnchorIndex, Credit
from core.catalog.loader import Catalog
from core.catalog.published_files import published_file
from core.catalog.sections import sections
from core.estimator.estimate import Estimate, in_ram
from core.i18n import Lang, translate
from core.render.compact import setup_title
from core.render.doc import Doc, Para

MAX_MEASURED = 6  # links a phone screen still reads; the rest are in /export


def _hf(repo: str) -> str:
    return f"https://huggingface.co/{repo}" if repo else ""


def _first_source(text: str, limit: int = 140) -> str:
    """A catalog `source` cites several places ("a ; b ; c"): the first one, short enough for a phone
    (catalogs/README.md and the entry itself keep the whole citation)."""
    first = text.split(" ; ")[0].strip()
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _model_url(repo: str, source: str) -> str:
    # The model's own files (config.json is the architecture's source) before a secondary citation.
    if repo:
        return f"{_hf(repo)}/blob/main/config.json"
    return _first_source(source) or "-"


def _measured(est: Estimate, index: AnchorIndex | None) -> list[Credit]:
    """The credited runs behind the answer's anchor lines: the exact combination, else the nearest."""
    if index is None:
        return []
    setup, model = est.request.setup, est.request.model
    summaries = list(index.summaries(setup.gpu.id, setup.count, model.id, setup.memory_gib))
    if not summaries:
        near = index.nearest(setup.gpu.id, setup.count, model.id, limit=3, memory_gib=setup.memory_gib)
        summaries = [n.summary for n in near]
    seen: set[str] = set()
    out: list[Credit] = []
    for credit in (c for s in summaries for c in s.credits):
        key = credit.url or f"{credit.name}|{credit.date}"
        if key not in seen:
            seen.add(key)
            out.append(credit)
    return out[:MAX_MEASURED]


def _file_sizes(est: Estimate, lang: Lang) -> list[Para]:
    """Where the weights column's published file sizes were read, one line per repo with its quants
    (the rest of the table's quants are computed tensor by tensor)."""
    by_repo: dict[str, list[str]] = {}
    model = est.request.model
    for quant in dict.fromkeys(r.quant for r in est.rows):
        found = published_file(model, quant)
        if found is not None:
            by_repo.setdefault(found.url, []).append(quant)
    return [
        Para(translate("sources.file_sizes", lang, url=url, quants=", ".join(quants)))
        for url, quants in by_repo.items()
    ]


def sources_view(est: Estimate, catalog: Catalog, lang: Lang, index: AnchorIndex | None = None) -> Doc:
    gpu, model = est.request.setup.gpu, est.request.model
    none = translate("sources.none", lang)
    title = setup_title(est) if in_ram(est) else gpu.name
    parts = [Para(translate("sources.title", lang, model=model.name, gpu=title))]
    cpu = catalog.cpus.get(est.request.setup.host.cpu)
    if cpu is not None:
        # The named CPU's spec sheet (cores, memory channels, speeds): it priced the host side.
        parts.append(
            Para(translate("sources.cpu", lang, name=cpu.name, url=_first_source(cpu.source) or none))
        )
    if not (in_ram(est) and gpu.id == "cpu-only"):  # a CPU-only run has no card to cite
        parts.append(
            Para(translate("sources.card", lang, name=gpu.name, url=_first_source(gpu.source) or none))
        )
    parts += [
        Para(
            translate(
                "sources.model", lang, name=model.name, url=_model_url(model.hf_repo, model.source) or none
            )
        ),
    ]
    if model.gguf_repo:
        parts.append(Para(translate("sources.gguf", lang, url=_hf(model.gguf_repo))))
    parts.extend(_file_sizes(est, lang))
    credits = _measured(est, index)
    if credits:
        parts.append(Para(translate("sources.measured", lang)))
        for c in credits:
            parts.append(Para(f"· {c.name} {c.date}: {c.url or translate('sources.community', lang)}"))
    rows = sections(catalog).calibration.rows
    parts.append(Para(translate("sources.method", lang, n=rows or "?")))
    parts.append(Para(translate("sources.note", lang)))
    return tuple(parts)


__all__ = ["sources_view"]
