"""Fit the speed model's efficiencies on real measurements and write catalogs/calibration.toml.

    .venv/bin/python scripts/fit_calibration.py            # fit, cross-validate, write
    .venv/bin/python scripts/fit_calibration.py --dry-run  # print only

Decode and prefill are fitted separately by least squares on log(tokens/s), with a ridge penalty
that shrinks every architecture-family and quant-kind factor toward 1: a family with two rows can't
swing far. The (low, high) bands are quantiles of *leave-one-GPU-out* residuals, so they describe
how wrong the model is on a card it has never seen, not how well it memorizes the rows.
Needs numpy and scipy (`pip install -e .[fit]`); the bot itself does not.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import least_squares

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration_data import REPO, Row, load_rows, resolve_quant_id  # noqa: E402

from core.catalog.loader import default_catalog  # noqa: E402
from core.estimator import speed  # noqa: E402
from core.estimator.memory import GIB, kv_read_bytes  # noqa: E402
from core.estimator.token_bytes import bytes_per_token  # noqa: E402
from core.estimator.weights import weight_breakdown  # noqa: E402

CAL_PATH = REPO / "catalogs" / "calibration.toml"
BACKENDS = ("cuda", "rocm", "vulkan", "metal", "sycl")
RIDGE = {"arch": 4.0, "quant": 6.0, "moe": 4.0}
BAND_QUANTILES = (0.06, 0.94)
Params = dict[str, Any]  # fitted values: "eff" / "us" / "arch" / "kind" -> {name: value}, extras -> value


@dataclass
class Sample:
    row: Row
    gpu_bw: float
    arch: str
    kind: str
    moe: bool
    hbm: bool  # HBM cards reach a smaller share of their (much higher) peak in llama.cpp
    layers: int
    gpu_bytes: float  # decode: bytes per token
    flops: float  # prefill: FLOPs for the prompt
    tflops: float
    ubatches: int


def build_samples(test: str) -> list[Sample]:
    catalog = default_catalog()
    cal = speed.calibration(catalog) if "calibration" in catalog.tables else None
    out = []
    for row in load_rows():
        if row.test != test or row.gpu_id not in catalog.gpus or row.model_id not in catalog.models:
            continue
        gpu = catalog.gpus[row.gpu_id]
        model = catalog.models[row.model_id]
        quant_id = resolve_quant_id(row.quant, catalog)
        if quant_id is None:
            continue
        weights = weight_breakdown(model, catalog.quants[quant_id], catalog)
        active: float = weights.active_bytes_per_token
        if row.size_gib:
            # Our weight estimate rescaled to the file actually run.
            active *= row.size_gib * GIB / weights.total_bytes
        gpu_bytes = bytes_per_token(active, kv_read_bytes(model, row.depth, "f16", catalog))
        if test == "tg":
            flops = 0.0
        else:
            flops = 2.0 * model.active_params_b * 1e9 * row.prompt
            flops += speed.attention_flops_per_token(model, row.depth + row.prompt / 2) * row.prompt
        ratio = cal.fp32_fallback_ratio if cal else 0.03
        tflops = speed.matrix_tflops(gpu, cal) if cal else (gpu.fp16_tflops or gpu.bandwidth_gbs * ratio)
        out.append(
            Sample(
                row,
                gpu.bandwidth_gbs,
                gpu.arch_family,
                speed.quant_kind(quant_id),
                model.is_moe,
                speed.is_hbm(gpu),
                model.layers,
                gpu_bytes,
                flops,
                tflops,
                max(1, math.ceil(row.prompt / 512)),
            )
        )
    return out


class _LogFit:
    """Least squares on log(tokens/s) over parameters laid out as
    [backend eff | backend us | arch factors | quant-kind factors | extra factors], all in log space,
    with a ridge that pulls every factor toward 1. Subclasses give `predict` and the bounds."""

    EXTRAS: tuple[str, ...] = ()
    EFF0, EFF_RANGE = 0.5, (0.1, 1.0)
    US0, US_RANGE = 30.0, (1.0, 400.0)
    FACTOR_BOUND = 1.0
    F_SCALE = 0.15

    def __init__(self, samples: list[Sample]):
        self.samples = samples
        self.backends = sorted({s.row.backend for s in samples})
        self.archs = sorted({s.arch for s in samples})
        self.kinds = sorted({s.kind for s in samples})

    def _n_factors(self) -> int:
        return len(self.archs) + len(self.kinds) + len(self.EXTRAS)

    def unpack(self, x: np.ndarray) -> Params:
        nb, na, nk = len(self.backends), len(self.archs), len(self.kinds)
        params: Params = {
            "eff": dict(zip(self.backends, np.exp(x[:nb]), strict=True)),
            "us": dict(zip(self.backends, np.exp(x[nb : 2 * nb]), strict=True)),
            "arch": dict(zip(self.archs, np.exp(x[2 * nb : 2 * nb + na]), strict=True)),
            "kind": dict(zip(self.kinds, np.exp(x[2 * nb + na : 2 * nb + na + nk]), strict=True)),
        }
        for i, name in enumerate(self.EXTRAS):
            params[name] = float(np.exp(x[2 * nb + na + nk + i]))
        return params

    def predict(self, p: Params, s: Sample) -> float:
        raise NotImplementedError

    def residuals(self, x: np.ndarray) -> np.ndarray:
        p = self.unpack(x)
        res = [math.log(self.predict(p, s)) - math.log(s.row.tps) for s in self.samples]
        nb, na, nk = len(self.backends), len(self.archs), len(self.kinds)
        res += list(RIDGE["arch"] * x[2 * nb : 2 * nb + na] * 0.1)
        res += list(RIDGE["quant"] * x[2 * nb + na : 2 * nb + na + nk] * 0.1)
        res += list(RIDGE["moe"] * x[2 * nb + na + nk :] * 0.1)
        return np.array(res)

    def fit(self) -> Params:
        nb, nf = len(self.backends), self._n_factors()
        x0 = np.concatenate([np.full(nb, math.log(self.EFF0)), np.full(nb, math.log(self.US0)), np.zeros(nf)])
        lo = np.concatenate(
            [
                np.full(nb, math.log(self.EFF_RANGE[0])),
                np.full(nb, math.log(self.US_RANGE[0])),
                np.full(nf, -self.FACTOR_BOUND),
            ]
        )
        hi = np.concatenate(
            [
                np.full(nb, math.log(self.EFF_RANGE[1])),
                np.full(nb, math.log(self.US_RANGE[1])),
                np.full(nf, self.FACTOR_BOUND),
            ]
        )
        sol = least_squares(self.residuals, x0, bounds=(lo, hi), loss="soft_l1", f_scale=self.F_SCALE)
        return self.unpack(sol.x)


class DecodeFit(_LogFit):
    """log tps = -log(layers*us[b]*1e-6 + bytes / (bw*1e9*eff)), eff = e[b]*arch*kind*moe*hbm."""

    EXTRAS = ("moe", "hbm")
    EFF0, EFF_RANGE = 0.7, (0.2, 0.95)
    US0, US_RANGE = 30.0, (1.0, 400.0)
    FACTOR_BOUND = 1.0
    F_SCALE = 0.15

    def predict(self, p: Params, s: Sample) -> float:
        eff = p["eff"].get(s.row.backend, 0.6) * p["arch"].get(s.arch, 1.0) * p["kind"].get(s.kind, 1.0)
        if s.moe:
            eff *= p["moe"]
        if s.hbm:
            eff *= p["hbm"]
        eff = min(eff, 0.95)
        seconds: float = s.layers * p["us"].get(s.row.backend, 30.0) * 1e-6 + s.gpu_bytes / (
            s.gpu_bw * 1e9 * eff
        )
        return 1.0 / seconds


class PrefillFit(_LogFit):
    """log tps = log(prompt) - log(flops/(tflops*1e12*eff) + ubatches*layers*us*1e-6)."""

    EFF0, EFF_RANGE = 0.3, (0.01, 2.0)
    US0, US_RANGE = 50.0, (1.0, 2000.0)
    FACTOR_BOUND = 1.5
    F_SCALE = 0.2

    def predict(self, p: Params, s: Sample) -> float:
        eff = p["eff"].get(s.row.backend, 0.3) * p["arch"].get(s.arch, 1.0) * p["kind"].get(s.kind, 1.0)
        seconds: float = (
            s.flops / (s.tflops * 1e12 * eff)
            + s.ubatches * s.layers * p["us"].get(s.row.backend, 50.0) * 1e-6
        )
        return s.row.prompt / seconds


def leave_one_row_out(fit_cls: type[_LogFit], samples: list[Sample]) -> list[float]:
    """Residual of each row predicted by a fit without it: the spread for a card that has other
    measurements (its own tier, "card")."""
    out = []
    for i, held in enumerate(samples):
        train = samples[:i] + samples[i + 1 :]
        if not any(s.row.gpu_id == held.row.gpu_id for s in train):
            continue
        model = fit_cls(train)
        out.append(math.log(held.row.tps) - math.log(model.predict(model.fit(), held)))
    return out


def cross_validate(fit_cls: type[_LogFit], samples: list[Sample]) -> tuple[list[float], list[float]]:
    """Leave-one-GPU-out log residuals, split by whether the held-out card's family was seen."""
    seen: list[float] = []
    unseen: list[float] = []
    by_gpu: dict[str, list[Sample]] = defaultdict(list)
    for s in samples:
        by_gpu[s.row.gpu_id].append(s)
    for gpu_id, held in by_gpu.items():
        train = [s for s in samples if s.row.gpu_id != gpu_id]
        if len({s.row.backend for s in train}) == 0:
            continue
        model = fit_cls(train)
        params = model.fit()
        families = {(s.row.backend, s.arch) for s in train}
        for s in held:
            r = math.log(s.row.tps) - math.log(model.predict(params, s))
            (seen if (s.row.backend, s.arch) in families else unseen).append(r)
    return seen, unseen


def band(residuals: list[float], floor: float = 0.08) -> dict[str, float]:
    lo, hi = np.quantile(residuals, BAND_QUANTILES) if residuals else (-0.3, 0.3)
    return {"low": round(math.exp(min(lo, -floor)), 3), "high": round(math.exp(max(hi, floor)), 3)}


def summarize(name: str, residuals: list[float]) -> str:
    ape = [abs(math.exp(r) - 1) for r in residuals]
    median, p90 = np.median(ape) * 100, np.quantile(ape, 0.9) * 100
    return f"{name}: n={len(residuals)} median APE={median:.1f}% p90={p90:.1f}%"


def render_toml(
    decode: Params,
    prefill: Params,
    d_bands: dict[str, dict[str, float]],
    p_bands: dict[str, dict[str, float]],
    seen_d: set[str],
    seen_p: set[str],
    cards_d: set[str],
    cards_p: set[str],
    seen_rows: tuple[Sequence[object], Sequence[object]] = ((), ()),
) -> str:
    lines = [
        "# Speed-model calibration, written by scripts/fit_calibration.py from",
        "# ../shared/reference/measured_calibration.csv (llama.cpp, one GPU, clean rows).",
        "# Do not edit by hand: rerun the script. Hand-set speed constants are in speed.toml.",
        "",
    ]
    backends = sorted(set(decode["eff"]) | set(prefill["eff"]) | set(BACKENDS))
    dflt_eff = float(np.median(list(decode["eff"].values())))
    dflt_us = float(np.median(list(decode["us"].values())))
    dflt_pp = float(np.median(list(prefill["eff"].values())))
    dflt_ppus = float(np.median(list(prefill["us"].values())))
    for b in backends:
        lines += [
            f"[backend.{b}]",
            f"bw_eff = {decode['eff'].get(b, dflt_eff):.4f}",
            f"us_per_layer = {decode['us'].get(b, dflt_us):.2f}",
            f"pp_eff = {prefill['eff'].get(b, dflt_pp):.4f}",
            f"pp_us_per_layer = {prefill['us'].get(b, dflt_ppus):.2f}",
            "",
        ]
    lines.append("[arch_decode]")
    lines += [f'"{k}" = {v:.4f}' for k, v in sorted(decode["arch"].items())]
    lines += ["", "[arch_prefill]"]
    lines += [f'"{k}" = {v:.4f}' for k, v in sorted(prefill["arch"].items())]
    lines += ["", "[quant_kind]"]
    lines += [f'"{k}" = {v:.4f}' for k, v in sorted(decode["kind"].items())]
    lines += ["", "[quant_kind_prefill]"]
    lines += [f'"{k}" = {v:.4f}' for k, v in sorted(prefill["kind"].items())]
    lines += ["", "[moe]", f"decode = {decode['moe']:.4f}", ""]
    lines += [
        "[meta]",
        f"decode_rows = {len(seen_rows[0])}",
        f"prefill_rows = {len(seen_rows[1])}",
        f"rows = {len(seen_rows[0]) + len(seen_rows[1])}",
        "",
    ]
    lines += ["[hbm]", f"decode = {decode['hbm']:.4f}", ""]
    lines += [
        "[seen]",
        f"decode = {sorted(seen_d)!r}".replace("'", '"'),
        f"prefill = {sorted(seen_p)!r}".replace("'", '"'),
        "",
    ]
    for phase, bands in (("decode", d_bands), ("prefill", p_bands)):
        for k, v in bands.items():
            lines += [f"[band.{phase}.{k}]", f"low = {v['low']}", f"high = {v['high']}", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()

    tg = build_samples("tg")
    pp = build_samples("pp")
    decode = DecodeFit(tg).fit()
    prefill = PrefillFit(pp).fit()
    print(f"decode rows {len(tg)}, prefill rows {len(pp)}")
    print(
        "decode params:",
        {
            k: ({kk: round(float(vv), 3) for kk, vv in v.items()} if isinstance(v, dict) else round(v, 3))
            for k, v in decode.items()
        },
    )
    print(
        "prefill params:", {k: {kk: round(float(vv), 3) for kk, vv in v.items()} for k, v in prefill.items()}
    )
    fit_res = [math.log(s.row.tps) - math.log(DecodeFit(tg).predict(decode, s)) for s in tg]
    print(summarize("decode in-sample", fit_res))
    d_seen, d_unseen = cross_validate(DecodeFit, tg)
    p_seen, p_unseen = cross_validate(PrefillFit, pp)
    print(summarize("decode LOGO seen-family", d_seen))
    print(summarize("decode LOGO unseen-family", d_unseen) if d_unseen else "decode unseen: none")
    print(summarize("prefill LOGO seen-family", p_seen))
    print(summarize("prefill LOGO unseen-family", p_unseen) if p_unseen else "prefill unseen: none")
    d_card = leave_one_row_out(DecodeFit, tg)
    p_card = leave_one_row_out(PrefillFit, pp)
    print(summarize("decode leave-one-row-out (card measured)", d_card))
    print(summarize("prefill leave-one-row-out (card measured)", p_card))
    d_bands = {
        "card": band(d_card),
        "seen": band(d_seen),
        "unseen": band(d_seen + d_unseen + [r * 1.5 for r in d_unseen]),
    }
    p_bands = {
        "card": band(p_card),
        "seen": band(p_seen),
        "unseen": band(p_seen + p_unseen + [r * 1.5 for r in p_unseen]),
    }
    print("bands", d_bands, p_bands)
    seen_d = {f"{s.row.backend}/{s.arch}" for s in tg}
    seen_p = {f"{s.row.backend}/{s.arch}" for s in pp}
    cards_d = {s.row.gpu_id for s in tg}
    cards_p = {s.row.gpu_id for s in pp}
    text = render_toml(decode, prefill, d_bands, p_bands, seen_d, seen_p, cards_d, cards_p, (tg, pp))
    if args.dry_run:
        print(text)
    else:
        CAL_PATH.write_text(text + "\n", encoding="utf-8")
        print(f"wrote {CAL_PATH}")


if __name__ == "__main__":
    main()
