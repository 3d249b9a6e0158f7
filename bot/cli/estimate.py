"""`python -m bot estimate`: one request from flags, or a JSONL batch, answered as JSON or text."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from core.ask.estimate_request import QueryError, run_query
from core.catalog.loader import CatalogError, default_catalog
from core.estimator.concurrency import estimate_concurrency
from core.estimator.serialize import estimate_dict
from core.i18n import Lang

FLAG_KEYS = (
    "gpu",
    "model",
    "count",
    "memory",
    "quant",
    "ctx",
    "depth",
    "prompt",
    "os",
    "framework",
    "kv_type",
    "ram",
    "ram_type",
    "ram_channels",
    "sockets",
    "offload",
    "cpu_moe_layers",
    "gpu_layers",
    "backend",
    "cpu",
    "users",
    "split_mode",
    "link",
    "ubatch",
    "output",
)


def _request_from_args(args: argparse.Namespace) -> dict[str, Any]:
    raw = {key: getattr(args, key) for key in FLAG_KEYS}
    return {k: v for k, v in raw.items() if v is not None}


def _error(message: str, candidates: dict[str, list[str]] | None = None) -> dict[str, Any]:
    return {"error": message, "candidates": candidates or {}}


def answer(raw: Any, lang: Lang = "en") -> tuple[dict[str, Any], bool]:
    """(JSON answer, ok) for one request; never raises on bad input."""
    if not isinstance(raw, dict):
        return _error("each request must be a JSON object"), False
    catalog = default_catalog()
    try:
        est = run_query(raw, catalog)
    except QueryError as exc:
        return _error(str(exc), exc.candidates), False
    output = raw.get("output")  # validated by run_query (EstimateQuery.output)
    result = estimate_dict(est, catalog, lang, int(output) if output is not None else None)
    users = raw.get("users")
    if isinstance(users, int) and users > 1:
        # Added key per row (the rows keep their shape): the figures the chat's concurrency line gives.
        for row, figures in zip(result["rows"], estimate_concurrency(est, users, catalog), strict=True):
            row["concurrency"] = figures
    return result, True


def _text(result: dict[str, Any]) -> str:
    # A CPU-only run has no card memory: its rows' memory columns are system RAM ("memory": "ram").
    if result.get("memory") == "ram":
        head = f"{result['gpu']['name']} ({result['host']['ram_gib']:g} GiB RAM) · "
    elif result["gpu"].get("mix"):
        cards = result["gpu"]["mix"]
        total = sum(card["memory_gib"] for card in cards)
        head = " + ".join(card["name"] for card in cards) + f" ({total:g} GiB) · "
    else:
        head = f"{result['gpu']['count']}x {result['gpu']['name']} ({result['gpu']['memory_gib']:g} GiB) · "
    e2e = "e2e_tps" in result["plan"] or any("e2e_tps" in r for r in result["rows"])
    lines = [
        head + f"{result['model']['name']} · {result['framework']} ({result['backend']}) · {result['os']}",
        "assumed: " + "; ".join(result["assumptions"]),
        f"{'quant':<9} {'ctx':>6} {'weights':>7} {'KV':>6} {'total':>7} {'usable':>7} {'status':<7} "
        f"{'decode tok/s':>16} {'prefill':>7}" + (f" {'e2e':>5}" if e2e else ""),
    ]
    for r in result["rows"]:
        d = r["decode_tps"]
        speed = f"{d['low']:.0f}-{d['high']:.0f} ({d['mid']:.0f})" if d else "-"
        pp = f"{r['prefill_tps']['mid']:.0f}" if r["prefill_tps"] else "-"
        # `--output M`: the end-to-end output tok/s (prefill included), the mid only: the table stays narrow
        end = (f" {r['e2e_tps']['mid']:>5.0f}" if "e2e_tps" in r else f" {'-':>5}") if e2e else ""
        ctx = f"{r['context'] // 1024}K" if r["context"] % 1024 == 0 else str(r["context"])
        lines.append(
            f"{r['quant']:<9} {ctx:>6} {r['weights_gib']:>7.1f} {r['kv_gib']:>6.2f} {r['total_gib']:>7.1f} "
            f"{r['usable_gib']:>7.1f} {r['status']:<7} {speed:>16} {pp:>7}{end}"
        )
        if r["remedy"] and r["remedy"]["decode_tps"]:
            rem = r["remedy"]
            lines.append(
                f"{'':>17}-> {rem['kind']}: ~{rem['decode_tps']['mid']:.0f} tok/s "
                + " ".join(
                    f"{k}={v}"
                    for k, v in rem.items()
                    if k in ("kv_type", "quant", "layers_on_gpu", "cpu_moe_layers", "cards", "context")
                )
                + (" (1-2-bit: noticeably worse answers)" if rem.get("quality_warning") else "")
            )
        if r["command"]:
            lines.append(f"{'':>17}$ {r['command']}")
    return "\n".join(lines)


def _run_batch(path: str, lang: Lang, out: TextIO) -> int:
    failures = 0
    try:
        fh = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        print(json.dumps(_error(f"cannot read batch file: {exc}")), file=out)
        return 2
    with fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                result, ok = _error(f"line {line_no}: not valid JSON ({exc.msg})"), False
            else:
                result, ok = answer(raw, lang)
            failures += not ok
            print(json.dumps(result, ensure_ascii=False), file=out)
    return 1 if failures else 0


def run_estimate(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        default_catalog()
    except CatalogError as exc:
        print(f"catalog error: {exc}", file=sys.stderr)
        return 2
    if args.batch:
        return _run_batch(args.batch, args.lang, out)
    if not args.model or not (args.gpu or args.offload in (None, "cpu")):
        print(
            "estimate needs --model and --gpu (--model alone: a CPU-only run), or --batch FILE",
            file=sys.stderr,
        )
        return 2
    result, ok = answer(_request_from_args(args), args.lang)
    if args.json or not ok:
        print(
            json.dumps(result, ensure_ascii=False, indent=None if not args.json else 1),
            file=out if ok else sys.stderr,
        )
        return 0 if ok else 1
    print(_text(result), file=out)
    return 0
