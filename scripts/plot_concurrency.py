"""Chart the concurrency curve (aggregate and per-user tok/s against users) beside measured runs.

    .venv/bin/python scripts/plot_concurrency.py [--out docs/concurrency_curves.png]

Three measured sweeps of catalogs/measurements/published_extra.csv and the reference files, each
priced through `core.estimator.concurrency.concurrent_for` (the chat's own function) exactly as
scripts/concurrency_rows.py prices the rows, at every user count from 1 to past the sweep's last
point with the sweep's own workload (lengths, request count, KV pool); the measured aggregates
(and per-user 1/TPOT where the row states it) are drawn on top, with the knee and the KV-bound
maximum the estimate gives.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import fit_concurrency as fitc  # noqa: E402

from core.catalog.loader import default_catalog  # noqa: E402
from core.estimator.concurrency import ServingRun  # noqa: E402

# (title, source substring, model substring): one vLLM sweep that levels off on compute, one that
# the KV pool caps, one MoE over four cards.
SWEEPS = (
    ("RTX 4090 · Mistral-7B BF16 · vLLM 256/128", "mushfiqrahman.dev", "Mistral-7B"),
    ("A100 80GB at 0.25 memory · Qwen2-7B · vLLM 1024/1024", "dennislee22", "Qwen2-7B"),
    ("4x MI100 · Qwen3-Coder-30B-A3B GPTQ · vLLM 1024/256", "mi100-llm-testing", "Qwen3-Coder"),
)


def _curve(item: fitc.Item, users: list[int]) -> tuple[list[float], list[float], int | None, int | None]:
    catalog = default_catalog()
    case = item.case
    agg, each = [], []
    knee = seqs = None
    for n in users:
        work = case.work
        run = work.run
        if run is not None:
            # The sweep's own request count per user count (one wave where it sent N at once).
            run = ServingRun(run.prompt, run.output, max(run.requests, n))
        got = replace(case, work=replace(work, users=n, run=run)).price(catalog)
        agg.append(got.aggregate_tps)
        each.append(got.per_user_tps)
        knee, seqs = got.knee_users, got.max_seqs
    return agg, each, knee, seqs


def main(argv: list[str] | None = None) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", default=str(fitc.bench.REPO / "docs" / "concurrency_curves.png"))
    args = parser.parse_args(argv)
    items, _ = fitc.load_items(default_catalog())
    fig, axes = plt.subplots(2, len(SWEEPS), figsize=(5.2 * len(SWEEPS), 7.5), squeeze=False)
    for col, (title, source, model) in enumerate(SWEEPS):
        rows = [it for it in items if source in it.case.row.source and model in it.case.row.model]
        rows.sort(key=lambda it: it.case.work.users)
        if not rows:
            continue
        top = max(it.case.work.users for it in rows)
        users = sorted({1, *range(2, int(top * 1.3) + 2, max(1, top // 40))})
        agg, each, knee, seqs = _curve(rows[-1], users)
        ax_a, ax_u = axes[0][col], axes[1][col]
        ax_a.plot(users, agg, label="estimate")
        ax_a.scatter([it.case.work.users for it in rows], [it.case.row.tps for it in rows],
                     color="black", zorder=3, label=f"measured ({rows[0].split})")  # fmt: skip
        ax_u.plot(users, each, label="estimate")
        measured = [(it.case.work.users, it.case.work.per_user) for it in rows if it.case.work.per_user]
        if measured:
            ax_u.scatter(*zip(*measured, strict=True), color="black", zorder=3, label="measured 1/TPOT")
        for ax in (ax_a, ax_u):
            if knee:
                ax.axvline(knee, color="grey", linestyle=":", label=f"knee {knee} users")
            if seqs and seqs <= users[-1]:
                ax.axvline(seqs, color="red", linestyle="--", label=f"KV-bound max {seqs} seqs")
            ax.set_xlabel("concurrent users")
            ax.legend(fontsize=7)
        ax_a.set_title(title, fontsize=9)
        ax_a.set_ylabel("aggregate output tok/s")
        ax_u.set_ylabel("per-user tok/s")
    fig.tight_layout()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
