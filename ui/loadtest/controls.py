"""Controls of the load-test page (URL-bound specs; drawn by :func:`ui.state.render_control`).
Nothing here imports streamlit. Keys start with ``lt_`` (no clash with the sidebar), except the
SLA every page shares (:mod:`ui.traffic`). Defaults: Poisson arrivals, lognormal lengths
(ShareGPT-like spread)."""

from __future__ import annotations

from calc.traffic.workload import ARRIVALS, LENGTH_KINDS
from ui.controls import Control
from ui.traffic import SLA_STAT, SLA_TPOT_MS, SLA_TTFT_MS

LT_ARRIVAL = Control("lt_arrival", "select", "poisson", options=ARRIVALS)
LT_RATE = Control("lt_rate", "number", 4.0, lo=0.01, hi=10_000.0, step=0.5, integer=False)
LT_CV = Control("lt_cv", "slider", 2.0, lo=0.1, hi=10.0, step=0.1, integer=False)
LT_CONCURRENCY = Control("lt_concurrency", "number", 32, lo=1, hi=4096, step=1)
LT_REQUESTS = Control("lt_requests", "slider", 1000, lo=100, hi=5000, step=100)
LT_LENGTHS = Control("lt_lengths", "select", "lognormal", options=LENGTH_KINDS)
LT_INPUT = Control("lt_input_len", "number", 1024, lo=1, hi=1_000_000, step=64)
LT_OUTPUT = Control("lt_output_len", "number", 256, lo=1, hi=100_000, step=16)
LT_SPREAD = Control("lt_spread", "slider", 0.5, lo=0.0, hi=2.0, step=0.05, integer=False)
LT_SEED = Control("lt_seed", "number", 0, lo=0, hi=1_000_000, step=1)
LT_SWEEP = Control("lt_sweep", "toggle", True)

LOADTEST = (LT_ARRIVAL, LT_RATE, LT_CV, LT_CONCURRENCY, LT_REQUESTS, LT_LENGTHS, LT_INPUT, LT_OUTPUT, LT_SPREAD,
            SLA_TTFT_MS, SLA_TPOT_MS, SLA_STAT, LT_SEED, LT_SWEEP)
# The arrival processes a control applies to (calc.traffic.workload.arrivals): the rate drives the
# open processes, the CV only Gamma's gaps, the clients only the closed loop; the max-rate search
# sweeps an open process's rate. Elsewhere the control is drawn disabled (its value kept in the link).
APPLIES_TO: dict[str, tuple[str, ...]] = {LT_RATE.key: ("poisson", "gamma"), LT_CV.key: ("gamma",),
                                          LT_CONCURRENCY.key: ("closed",), LT_SWEEP.key: ("poisson", "gamma")}


def applies(key: str, arrival: str) -> bool:
    """Whether control ``key`` changes a run with ``arrival`` arrivals.

    >>> applies("lt_rate", "closed"), applies("lt_concurrency", "closed"), applies("lt_cv", "poisson")
    (False, True, False)
    >>> applies("lt_requests", "burst")
    True
    """
    return arrival in APPLIES_TO.get(key, (arrival,))


# Shown translated (ui.labelled), the link keeps the token: option o of control k reads t("opt.k.o").
TRANSLATED = (LT_ARRIVAL.key, LT_LENGTHS.key, SLA_STAT.key)
SWEEP_REQUESTS = 400  # per rate of the sustainable-rate search (cheaper than the main run)
