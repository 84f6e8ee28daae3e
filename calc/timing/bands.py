"""Error bands: how far the calculator has been from real measurements in the same regime.

Each calibration measurement (``bench/calibration_report.py``: 2023-24 engines and vLLM 0.10-0.11
serving benchmarks; ``bench/memory_calibration_report.py``: vLLM start-up logs) gives a signed
error e = predicted / measured - 1, kept as its log r = ln(1 + e) = ln(predicted / measured). The
measurements are grouped by a :class:`BandKey`: load regime (single request, closed loop, open
loop, burst/static batch), GPU family, dense or MoE, and metric group (TTFT, TPOT, E2E,
throughput, memory).

A band around a predicted value v is the range of measured values that errors like these imply:

    low = v · exp(-r_hi),   high = v · exp(-r_lo)       (measured = predicted / (1 + e))

with r_lo, r_hi the :data:`QUANTILES` of r over the matching measurements, r_lo clamped to ≤ 0 and
r_hi to ≥ 0 so that low ≤ v ≤ high always. Where the exact cell has fewer than :data:`N_MIN`
measurements, the band comes from the first coarser cell of :data:`LADDER` that has enough (the
dimensions dropped in that order), and its log-width is multiplied by :data:`WIDEN` for each
dimension dropped; the label says so ("no measurements in this regime" / "few measurements").
The last rung (the metric group alone, every regime and GPU) always has measurements.

The table is precomputed (``calc/data/bands.json``, written by ``bench/make_bands.py`` from the
calibration reports) so that nothing here reruns a report: :func:`band_basis` looks a key up,
:func:`band` applies it. Every band names its measurements (``row:metric``).

>>> b = band_basis(BandKey("closed", "hopper", False, "ttft"))
>>> lo, hi = band(0.1, b)
>>> bool(lo <= 0.1 <= hi)
True
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import numpy as np

BANDS_PATH = Path(__file__).resolve().parents[1] / "data" / "bands.json"
# Every measurement behind the table with its own error and source (same script, same measurements).
MEASUREMENTS_PATH = BANDS_PATH.with_name("band_measurements.json")

REGIMES = ("single", "closed", "open", "burst")
# Start-up memory (weights, KV pool) does not depend on the load: one regime for the memory group.
MEMORY_REGIME = "any"
FAMILIES = ("ampere", "hopper", "cdna3", "ada", "blackwell", "other")
GROUPS = ("ttft", "tpot", "e2e", "throughput", "memory")
# Signed-error quantiles that bound a band: the central 90 % of the matching measurements.
QUANTILES = (0.05, 0.95)
# A cell with fewer measurements than this borrows a coarser cell's errors (LADDER).
N_MIN = 5
# Log-width multiplier per dimension dropped: a regime with no (or few) measurements of its own is
# assumed less certain than the pooled measurements it borrows from.
WIDEN = 1.25
# Which dimensions each rung keeps, finest first: drop dense/MoE, then the GPU family, then the
# load regime. The last rung always has measurements (every group is measured).
LADDER = (("regime", "family", "moe"), ("regime", "family"), ("regime",), ())

METRIC_GROUP = {
    "ttft_s": "ttft", "tpot_s": "tpot", "itl_s": "tpot", "e2e_latency_s": "e2e", "e2e_s": "e2e",
    "output_tokens_per_s": "throughput", "total_tokens_per_s": "throughput", "requests_per_s": "throughput",
    "goodput_requests_per_s": "throughput",
    "kv_pool": "memory", "kv_tokens": "memory", "kv_pool_bytes": "memory", "kv_pool_tokens": "memory",
    "max_concurrency": "memory", "num_kv_blocks": "memory",
}


@dataclass(frozen=True)
class BandKey:
    """The regime a number belongs to. ``moe``: the model routes tokens to experts."""

    regime: str
    family: str
    moe: bool
    group: str

    def cell(self, keep: tuple[str, ...]) -> str:
        """The table key of the rung that keeps the dimensions ``keep`` (``*`` for the others)."""
        parts = [self.regime if "regime" in keep else "*", self.family if "family" in keep else "*",
                 ("moe" if self.moe else "dense") if "moe" in keep else "*", self.group]
        return "/".join(parts)


@dataclass(frozen=True)
class BandBasis:
    """Where a band comes from: the cell used, its measurements and their errors."""

    key: BandKey
    cell: str
    n: int                      # measurements in the cell used
    n_exact: int                # measurements in the exact regime cell (0: none of its own)
    log_lo: float               # ≤ 0: ln(1 + e) at the low quantile, widened
    log_hi: float               # ≥ 0
    median_abs_error: float     # of the cell's measurements, |predicted / measured - 1|
    p90_abs_error: float
    label: str
    measurements: tuple[str, ...]

    def record(self) -> dict[str, Any]:
        """The JSON form (the CLI's ``band_basis`` entries)."""
        return {"regime": self.key.regime, "gpu_family": self.key.family, "moe": self.key.moe,
                "metric_group": self.key.group, "cell": self.cell, "n": self.n, "n_in_regime": self.n_exact,
                "median_abs_error": self.median_abs_error, "p90_abs_error": self.p90_abs_error,
                "error_low": math.expm1(self.log_lo), "error_high": math.expm1(self.log_hi),
                "label": self.label, "measurements": list(self.measurements)}


def gpu_family(architecture: str) -> str:
    """The band family of a GPU's ``architecture`` field (catalog or user-defined GPU).

    >>> gpu_family("hopper"), gpu_family("custom")
    ('hopper', 'other')
    """
    return architecture if architecture in FAMILIES else "other"


def load_regime(arrival: str, concurrency: float | None = None) -> str:
    """The band regime of a load: one client is a single request; ``closed`` loops of more
    clients; ``poisson``/``gamma`` arrivals are open loops; ``burst`` and static batches are bursts.

    >>> load_regime("closed", 1), load_regime("closed", 8), load_regime("gamma"), load_regime("static")
    ('single', 'closed', 'open', 'burst')
    """
    if arrival == "closed":
        return "single" if concurrency is not None and concurrency <= 1 else "closed"
    if arrival in ("poisson", "gamma", "open"):
        return "open"
    if arrival in ("burst", "static"):
        return "burst"
    raise ValueError(f"unknown arrival {arrival!r}")


def metric_group(metric: str) -> str:
    """The metric group of a result field (``ttft_s_p95`` → ``ttft``; ``open_loop_tpot_s`` → ``tpot``)."""
    name = metric.removeprefix("open_loop_")
    for suffix in ("_mean", "_p50", "_p90", "_p95", "_p99"):
        name = name.removesuffix(suffix)
    name = {"ttft_p95_s": "ttft_s"}.get(name, name)
    return METRIC_GROUP[name]


def _quantile(values: list[float], q: float) -> float:
    return float(np.quantile(np.asarray(values, dtype=float), q))


def build_table(measurements: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The band table from measurements ``{"id", "regime", "family", "moe", "group", "error"}``:
    for every cell of every rung of :data:`LADDER` that holds a measurement, its count, log-error
    quantiles (unclamped), median and p90 |error| and the measurement ids."""
    ms = sorted(measurements, key=lambda m: m["id"])
    cells: dict[str, list[dict[str, Any]]] = {}
    for m in ms:
        key = BandKey(m["regime"], m["family"], bool(m["moe"]), m["group"])
        for keep in LADDER:
            cells.setdefault(key.cell(keep), []).append(m)
    table = {}
    for cell, members in sorted(cells.items()):
        logs = [math.log1p(m["error"]) for m in members]
        abs_err = sorted(abs(m["error"]) for m in members)
        table[cell] = {"n": len(members),
                       "log_q_lo": round(_quantile(logs, QUANTILES[0]), 6),
                       "log_q_hi": round(_quantile(logs, QUANTILES[1]), 6),
                       "median_abs_error": round(_quantile(abs_err, 0.5), 6),
                       "p90_abs_error": round(_quantile(abs_err, 0.9), 6),
                       "measurements": [m["id"] for m in members]}
    return table


@lru_cache(maxsize=1)
def load_table(path: str = str(BANDS_PATH)) -> dict[str, Any]:
    """The precomputed table (``calc/data/bands.json``): ``{"source", "method", "cells"}``."""
    with open(path) as fh:
        return json.load(fh)


@lru_cache(maxsize=1)
def load_measurements(path: str = str(MEASUREMENTS_PATH)) -> dict[str, dict[str, Any]]:
    """Measurement id (``row:metric``) -> ``{"error", "source"}``: what a band is made of."""
    with open(path) as fh:
        return json.load(fh)["measurements"]


def band_basis(key: BandKey, cells: dict[str, Any] | None = None) -> BandBasis:
    """The band of ``key``: its own cell if it has :data:`N_MIN` measurements, else the first
    coarser rung that has, widened by :data:`WIDEN` per dimension dropped (module docstring)."""
    if key.group not in GROUPS:
        raise ValueError(f"unknown metric group {key.group!r}")
    if key.group == "memory":
        key = BandKey(MEMORY_REGIME, key.family, key.moe, key.group)
    cells = load_table()["cells"] if cells is None else cells
    exact = cells.get(key.cell(LADDER[0]), {}).get("n", 0)
    for dropped, keep in enumerate(LADDER):
        c = cells.get(key.cell(keep))
        if c is not None and (c["n"] >= N_MIN or keep == ()):
            break
    else:  # pragma: no cover - the table always has the group rung (a test checks it)
        raise KeyError(f"no measurements for metric group {key.group!r}")
    widen = WIDEN ** dropped
    where = f"{key.regime}, {key.family}, {'MoE' if key.moe else 'dense'}, {key.group}"
    if dropped == 0:
        label = f"{c['n']} measurements in this regime ({where})"
    else:
        own = "no measurements in this regime" if exact == 0 else f"few measurements in this regime ({exact})"
        label = (f"{own} ({where}): band from the {c['n']} measurements of {key.cell(keep)}, "
                 f"widened {widen:.3g}x")
    return BandBasis(key=key, cell=key.cell(keep), n=c["n"], n_exact=exact,
                     log_lo=min(c["log_q_lo"], 0.0) * widen, log_hi=max(c["log_q_hi"], 0.0) * widen,
                     median_abs_error=c["median_abs_error"], p90_abs_error=c["p90_abs_error"], label=label,
                     measurements=tuple(c["measurements"]))


def band(value: Any, basis: BandBasis) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) around predicted ``value`` (any shape, broadcast): the measured values that the
    basis' errors imply, low = value · exp(-log_hi), high = value · exp(-log_lo).

    >>> b = BandBasis(BandKey("single", "ampere", False, "ttft"), "x", 10, 10, -0.1, 0.2, 0.1, 0.2, "", ())
    >>> lo, hi = band([1.0, 2.0], b)
    >>> lo.round(4).tolist(), hi.round(4).tolist()
    ([0.8187, 1.6375], [1.1052, 2.2103])
    """
    v = np.asarray(value, dtype=float)
    return v * math.exp(-basis.log_hi), v * math.exp(-basis.log_lo)


def coverage(measurements: Iterable[dict[str, Any]], cells: dict[str, Any]) -> dict[str, float]:
    """How honest the bands are on the measurements: the fraction whose measured value lies in the
    band around its prediction, and the median half-width (high - low) / 2 / predicted."""
    inside, half = [], []
    for m in measurements:
        b = band_basis(BandKey(m["regime"], m["family"], bool(m["moe"]), m["group"]), cells)
        r = math.log1p(m["error"])  # measured inside [low, high] ⇔ r inside [log_lo, log_hi]
        inside.append(b.log_lo - 1e-12 <= r <= b.log_hi + 1e-12)
        half.append((math.exp(-b.log_lo) - math.exp(-b.log_hi)) / 2)
    return {"n": len(inside), "inside_fraction": float(np.mean(inside)),
            "median_half_width": float(np.median(half))}
