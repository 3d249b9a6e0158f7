"""An `Estimate` as plain JSON-ready data: the stable shape of `python -m bot estimate --json`."""

from __future__ import annotations

from typing import Any

from core.catalog.loader import Catalog
from core.estimator.choice import Choice, choose
from core.estimator.end_to_end import EndToEnd, end_to_end, for_row
from core.estimator.estimate import Estimate, Range, Row
from core.estimator.memory import GIB
from core.estimator.plan import Plan, plan_for
from core.estimator.ways_out.remedy import Remedy
from core.estimator.ways_out.reprice import as_request
from core.estimator.weights import WeightBreakdown, weight_breakdown
from core.i18n import Lang


def _range(r: Range | None) -> dict[str, float] | None:
    return None if r is None else {"low": r.low, "mid": r.mid, "high": r.high}


def _remedy(r: Remedy | None) -> dict[str, Any] | None:
    if r is None:
        return None
    out: dict[str, Any] = {
        "kind": r.kind,
        "decode_tps": None
        if r.decode_mid is None
        else {"low": r.decode_low, "mid": r.decode_mid, "high": r.decode_high},
        "total_gib": r.total_gib,
    }
    extra = {
        "kv_type": r.kv_type,
        "quant": r.quant,
        "layers_on_gpu": r.layers_on_gpu,
        "layers_total": r.layers_total,
        "cpu_moe_layers": r.cpu_moe_layers,
        "cards": r.cards,
        "host_gib": r.host_gib,
        "context": r.context,
        "wired_limit_mb": r.wired_limit_mb,
        "quality_warning": r.quality_warning,
    }
    out.update({k: v for k, v in extra.items() if v})
    if r.alternatives:
        out["alternatives"] = [_remedy(a) for a in r.alternatives]
    return out


def _file_source(wb: WeightBreakdown) -> dict[str, Any] | None:
    """Where `file_gib` came from: the published file (repo, parts, link); None when computed."""
    found = wb.published
    if found is None:
        return None
    return {
        "repo": found.repo,
        "files": list(found.files),
        "bytes": found.bytes,
        "url": found.source or found.url,
    }


def _e2e(got: EndToEnd | None) -> dict[str, Any]:
    """The end-to-end keys of a row or plan asked with an output length (none where it doesn't run)."""
    return {} if got is None else {"e2e_tps": _range(got.tps), "e2e_s": got.seconds}


def row_dict(
    est: Estimate, row: Row, catalog: Catalog, lang: Lang = "en", output: int | None = None
) -> dict[str, Any]:
    """`output`: tokens of reply asked (`estimate --output M`): adds `e2e_tps` and `e2e_s`."""
    # The chat's plan for this row (core.estimator.plan): the same framework and command it shows.
    plan = plan_for(est, row, catalog, est.request.framework)
    wb = weight_breakdown(est.request.model, catalog.quants[row.quant], catalog)
    # A published file is the download itself; otherwise every tensor once, computed.
    file_bytes = wb.published.bytes if wb.published is not None else wb.total_bytes
    return {
        "quant": row.quant,
        "context": row.context,
        "depth": row.depth,
        # The download (the GGUF file: every tensor, token embeddings included) next to what sits on
        # the GPU; they differ by the embedding table llama.cpp keeps in RAM and by offload.
        "file_gib": round(file_bytes / GIB, 2),
        "file_source": _file_source(wb),
        "weights_gib": row.weights_gib,
        "kv_gib": row.kv_gib,
        "overhead_gib": row.overhead_gib,
        "total_gib": row.total_gib,
        "usable_gib": row.usable_gib,
        "status": row.status,
        "decode_tps": _range(row.decode_tps),
        "prefill_tps": _range(row.prefill_tps),
        "ttft_s": row.ttft_s,  # the prompt from an empty context
        # The same prompt sent into the row's full context (absent where the request named a depth).
        "deep_prefill_tps": _range(row.deep_prefill_tps),
        "deep_ttft_s": row.deep_ttft_s,
        "beyond_native_context": row.beyond_native,
        "framework": row.framework,
        "command": plan.command,
        # A command for another framework than the one priced (it can't run this row): said which.
        **({"command_framework": plan.framework} if plan.command and plan.framework != row.framework else {}),
        "remedy": _remedy(row.remedy),
        "notes": [n.text(lang) for n in (*row.notes, *plan.notes)],
        **(_e2e(for_row(row, output)) if output else {}),
    }


def _placement(plan: Plan, choice: Choice) -> dict[str, Any]:
    q = plan.placement
    out: dict[str, Any] = {"kind": choice.place, "gpus": q.gpu_count}
    if q.n_cpu_moe:
        out["cpu_moe_layers"] = q.n_cpu_moe
    if q.n_gpu_layers != "all":
        out["gpu_layers"] = q.n_gpu_layers
        out["layers_total"] = q.model.layers
    if q.cpu_only:
        out["kind"] = "cpu"
    elif out["kind"] == "gpu" and q.n_cpu_moe:
        # A row that runs offloaded as placed (`--offload experts|layers|auto`) has no way out to
        # choose: its placement says where the weights are.
        out["kind"] = "experts"
    elif out["kind"] == "gpu" and q.n_gpu_layers != "all" and q.n_gpu_layers < q.model.layers:
        out["kind"] = "layers"
    return out


def plan_decode(choice: Choice) -> dict[str, float] | None:
    """The decode range the plan runs at: its row's, or its way out's when the row doesn't fit."""
    row, remedy = choice.row, choice.row.remedy
    if row.status != "no_fit" or remedy is None:
        return _range(row.decode_tps)
    if remedy.decode_mid is None:
        return None
    return {"low": remedy.decode_low or 0.0, "mid": remedy.decode_mid, "high": remedy.decode_high or 0.0}


def plan_dict(
    est: Estimate,
    catalog: Catalog,
    lang: Lang = "en",
    chosen: tuple[Choice, Plan] | None = None,
    output: int | None = None,
) -> dict[str, Any]:
    """The one plan an answer recommends (core/estimator/choice.py picks the row, plan.py its
    command): what the chat's `$` line runs, with its figures, assumptions and why. `chosen`: a
    choice and plan a caller already made from `est` (the concurrency answer's). `output`: tokens
    of reply asked ("2000 in 500 out"): adds the end-to-end `e2e_tps` and `e2e_s`."""
    choice, plan = chosen or _chosen(est, catalog)
    first = _first_token_row(est, choice, catalog)
    return {
        "framework": plan.framework,
        "quant": plan.quant,
        "context": plan.context,
        "kv_type": plan.placement.kv_cache,
        "placement": _placement(plan, choice),
        "command": plan.command,
        "decode_tps": plan_decode(choice),
        "prefill_tps": _range(first.prefill_tps) if first is not None else None,
        "ttft_s": first.ttft_s if first is not None else None,
        "assumptions": [n.text(lang) for n in est.assumptions],
        "why": choice.why.text(lang),
        "step": choice.step,
        "said_plainly": [n.text(lang) for n in choice.notes],
        "notes": [n.text(lang) for n in plan.notes],
        "ways_out": _ways_out(est, choice, catalog),
        **(_e2e(_plan_e2e(choice, first, output)) if output else {}),
    }


def _plan_e2e(choice: Choice, first: Row | None, output: int) -> EndToEnd | None:
    """The plan's end-to-end figures: its decode (a way out's where the row needs one) after the
    time to first token of the row its prefill comes from."""
    decode = plan_decode(choice)
    if decode is None or first is None:
        return None
    return end_to_end(
        output, Range(decode["low"], decode["mid"], decode["high"]), first.ttft_s, first.prefill_tps
    )


def plan_end_to_end(est: Estimate, catalog: Catalog, choice: Choice, output: int) -> EndToEnd | None:
    """What `plan_dict(..., output=M)` gives as `e2e_tps` / `e2e_s`, for the reply's line."""
    return _plan_e2e(choice, _first_token_row(est, choice, catalog), output)


def _first_token_row(est: Estimate, choice: Choice, catalog: Catalog) -> Row | None:
    """The row the plan's prefill and time to first token come from: the chosen row when it fits,
    else its way out priced as a request of its own (a way out carries only its decode figures);
    None when the plan doesn't run here."""
    row = choice.row
    if row.status != "no_fit":
        return row
    remedy = row.remedy
    if remedy is None or remedy.decode_mid is None:
        return None
    one = as_request(est.request, row, remedy, catalog)
    if one is None:
        return None
    from core.estimator.estimate import estimate  # estimate.py imports the plan: on use only

    got = estimate(one, catalog).rows[0]
    return got if got.status != "no_fit" else None


def _ways_out(est: Estimate, choice: Choice, catalog: Catalog) -> list[dict[str, Any]]:
    """Every other row at the plan's context that doesn't fit as it is but runs here with its way
    out, as a plan of its own (the same `plan_for`, so the figures and command are the engine's):
    what the chat's "If it doesn't fit" line says, with the command each one would run."""
    out = []
    for row in est.rows:
        if row is choice.row or row.context != choice.row.context or row.status != "no_fit":
            continue
        remedy = row.remedy
        if remedy is None or remedy.decode_mid is None:
            continue
        other = plan_for(est, row, catalog, est.request.framework)
        if not other.command:
            continue
        out.append(
            {
                "quant": other.quant,
                "context": other.context,
                "kind": str(remedy.kind),
                "decode_tps": {
                    "low": remedy.decode_low or 0.0,
                    "mid": remedy.decode_mid,
                    "high": remedy.decode_high or 0.0,
                },
                "command": other.command,
            }
        )
    return out


def _chosen(est: Estimate, catalog: Catalog) -> tuple[Choice, Plan]:
    choice = choose(est, catalog)
    return choice, plan_for(est, choice.row, catalog, est.request.framework)


def estimate_dict(
    est: Estimate, catalog: Catalog, lang: Lang = "en", output: int | None = None
) -> dict[str, Any]:
    """`output`: tokens of reply asked (`estimate --output M`): each row and the plan get the
    end-to-end output rate beside pure decode."""
    setup, model = est.request.setup, est.request.model
    return {
        "gpu": {
            "id": setup.gpu.id,
            "name": setup.gpu.name,
            "memory_gib": setup.memory_gib,
            "count": setup.count,
            # Mixed cards only: each card and its memory, in llama.cpp's order (`gpu` is their average).
            **({"mix": [{"name": name, "memory_gib": gib} for name, gib in setup.mix]} if setup.mix else {}),
        },
        "model": {
            "id": model.id,
            "name": model.name,
            "params_b": model.params_b,
            "active_params_b": model.active_params_b,
        },
        "os": setup.os,
        "framework": est.framework,
        "backend": est.backend,
        "kv_type": est.request.kv_type,
        "host": {
            "ram_gib": setup.host.ram_gib,
            "bandwidth_gbs": setup.host.bandwidth_gbs,
            "preset": setup.host.name,
            "ram_type": setup.host.ram_type,
            "mt_s": setup.host.mt_s,
            "channels": setup.host.channels,
            "sockets": setup.host.sockets,
            "cpu": setup.host.cpu or None,
        },
        "offload": est.request.offload,
        "usable_gib": round(est.usable.total_gib, 2),
        # A CPU-only run: every memory figure (usable_gib, the rows' totals) is system RAM.
        **({"memory": "ram"} if est.request.offload == "cpu" else {}),
        "assumptions": [n.text(lang) for n in est.assumptions],
        "rows": [row_dict(est, r, catalog, lang, output) for r in est.rows],
        "plan": plan_dict(est, catalog, lang, output=output),
    }
