"""Controls of the load-test page (URL-bound specs; drawn by :func:`ui.state.render_control`).
Nothing here imports streamlit. Keys start with ``lt_`` (no clash with the sidebar), except the
SLA and the traffic every page shares (:mod:`ui.traffic`). Defaults: Poisson arrivals, lognormal lengths
(ShareGPT-like spread)."""

from __future__ import annotations

from calc.traffic.workload import ARRIVALS
from ui.controls import CONCURRENCY, Control
from ui.traffic import LENGTH_SPREAD, LENGTHS, RATE, REPLICAS, SLA_STAT, SLA_TPOT_MS, SLA_TTFT_MS

LT_ARRIVAL = Control("lt_arrival", "select", "poisson", options=ARRIVALS)
LT_CV = Control("lt_cv", "slider", 2.0, lo=0.1, hi=10.0, step=0.1, integer=False)
LT_REQUESTS = Control("lt_requests", "slider", 1000, lo=100, hi=5000, step=100)
LT_SEED = Control("lt_seed", "number", 0, lo=0, hi=1_000_000, step=1)
LT_SWEEP = Control("lt_sweep", "toggle", True)
# The benchmark client's cap on an open loop (vllm bench serve --max-concurrency beside --request-rate): drawn
# in the clients' column when the arrivals are open; empty = no cap (calc.traffic.workload).
LT_CAP = Control("lt_max_concurrency", "number", None, lo=1, hi=100_000, step=1, optional=True)

# In page order (rows of 4, 5, 5); the rate, the replicas and the SLA are the ones every page shares
# (ui.traffic), the prompt and output lengths and the closed loop's clients (the concurrency) the sidebar's.
CLIENTS = CONCURRENCY  # drawn on the page as a copy of the sidebar's control (ui.mirror), not a page control
LAYOUT = (LT_ARRIVAL, RATE, REPLICAS, CLIENTS, LT_CV, LT_REQUESTS, LENGTHS, LENGTH_SPREAD, LT_SEED,
          SLA_TTFT_MS, SLA_TPOT_MS, SLA_STAT, LT_SWEEP)
LOADTEST = tuple(c for c in LAYOUT if c is not CLIENTS) + (LT_CAP,)  # the page's URL controls
# The arrival processes a control applies to (calc.traffic.workload.arrivals): the rate drives the
# open processes, and the replicas split it; the CV only Gamma's gaps, the clients only the closed
# loop (per engine); the max-rate search sweeps an open process's rate. Elsewhere the control is
# drawn disabled (its value kept in the link).
APPLIES_TO: dict[str, tuple[str, ...]] = {RATE.key: ("poisson", "gamma"), REPLICAS.key: ("poisson", "gamma"),
                                          LT_CV.key: ("gamma",), CLIENTS.key: ("closed",),
                                          LT_CAP.key: ("poisson", "gamma", "burst"),
                                          LT_SWEEP.key: ("poisson", "gamma")}


def applies(key: str, arrival: str) -> bool:
    """Whether control ``key`` changes a run with ``arrival`` arrivals.

    >>> applies("rate", "closed"), applies("concurrency", "closed"), applies("lt_cv", "poisson")
    (False, True, False)
    >>> applies("lt_requests", "burst")
    True
    """
    return arrival in APPLIES_TO.get(key, (arrival,))


# Shown translated (ui.labelled), the link keeps the token: option o of control k reads t("opt.k.o").
TRANSLATED = (LT_ARRIVAL.key, LENGTHS.key, SLA_STAT.key)
SWEEP_REQUESTS = 400  # per rate of the sustainable-rate search (cheaper than the main run)
