"""The latency–throughput frontier: which points of a concurrency sweep meet the SLA, the best of
them, the knee, and what a million tokens cost. Pure broadcasting functions over the arrays of
:class:`calc.timing.serving.ServingResult` (the sweep runs along the last axis).

Course §3.4: a chat SLA is TTFT < 500 ms and TPOT < 50 ms; offline batch work wants the most
tokens/s. The frontier makes the trade visible: more concurrency buys throughput with latency.
"""

from __future__ import annotations

import numpy as np

SECONDS_PER_HOUR = 3600.0
COURSE_TTFT_SLO_S = 0.500  # course §3.4: 首Token延迟 < 500ms
COURSE_TPOT_SLO_S = 0.050  # course §3.4: 单Token延迟 < 50ms


def sla_feasible(*, ttft_s, tpot_s, ttft_slo_s, tpot_slo_s):
    """A point meets the SLA when TTFT ≤ its target and TPOT ≤ its target (NaN TTFT = not served:
    no; NaN TPOT with a TTFT = one output token, no inter-token time: the TPOT target holds).

    The targets are compared with the model's steady-state *mean* latencies; percentile SLAs
    (P90/P99, course §3.6) need a distribution the closed-loop model does not produce.

    >>> sla_feasible(ttft_s=[0.2, 0.6, 0.2, np.nan, 0.2], tpot_s=[0.04, 0.04, 0.06, 0.01, np.nan],
    ...              ttft_slo_s=0.5, tpot_slo_s=0.05).tolist()
    [True, False, False, False, True]
    """
    ttft = np.asarray(ttft_s, dtype=float)
    tpot = np.asarray(tpot_s, dtype=float)
    with np.errstate(invalid="ignore"):
        return (ttft <= ttft_slo_s) & ((tpot <= tpot_slo_s) | (np.isnan(tpot) & np.isfinite(ttft)))


def best_feasible(*, throughput, feasible, axis=-1):
    """Index and value of the highest throughput among feasible points, along ``axis``.

    Ties go to the first (lowest-concurrency) point: past the engine's limit throughput is flat
    and only latency grows, so the earliest point of the plateau is the one to run at. Where no
    point is feasible the index is -1 and the value NaN.

    >>> best_feasible(throughput=[100.0, 300.0, 500.0, 500.0], feasible=[True, True, False, True])
    (3, 500.0)
    >>> best_feasible(throughput=[[1.0, 2.0], [3.0, 4.0]], feasible=[[True, False], [False, False]])
    (array([ 0, -1]), array([ 1., nan]))
    """
    x = np.asarray(throughput, dtype=float)
    ok = np.asarray(feasible, dtype=bool) & np.isfinite(x)
    masked = np.where(ok, x, -np.inf)
    idx = np.argmax(masked, axis=axis)
    any_ok = ok.any(axis=axis)
    best = np.take_along_axis(masked, np.expand_dims(idx, axis), axis=axis).squeeze(axis)
    idx = np.where(any_ok, idx, -1)
    best = np.where(any_ok, best, np.nan)
    return (int(idx), float(best)) if np.ndim(idx) == 0 else (idx, best)


def power(*, throughput, latency_s):
    """Kleinrock's *power* of an operating point: throughput ÷ latency (higher is better).

    >>> float(power(throughput=600.0, latency_s=2.0))
    300.0
    """
    return np.asarray(throughput, dtype=float) / np.asarray(latency_s, dtype=float)


def knee_index(*, throughput, latency_s, axis=-1):
    """The knee of a concurrency sweep: the point of maximum power = throughput / latency.

    Definition and why: Kleinrock (1979, "Power and deterministic rules of thumb for
    probabilistic problems in computer communications", ICC) showed that the operating point
    maximizing throughput/delay is the one to run a queueing system at; BBR congestion control
    (Cardwell et al., ACM Queue 2016) targets the same point. In a closed loop of C clients,
    Little's law gives X = C / E2E, so  d ln X/d ln C + d ln E2E/d ln C = 1, and at maximum power
    both elasticities equal 1/2: below the knee a doubling of concurrency buys more than
    2^0.5 − 1 = 41 % extra throughput for less than 41 % extra latency; past it, less throughput
    for more latency (course §3.6: "find the knee by load testing"). Use the end-to-end latency
    of a request (TTFT + (O − 1)·TPOT) as ``latency_s`` to keep Little's law exact. NaN points
    are skipped; -1 where every point is NaN.

    >>> c = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    >>> x = np.array([100.0, 190.0, 330.0, 450.0, 500.0])   # tokens/s saturating
    >>> int(knee_index(throughput=x, latency_s=c / x))       # Little's law: E2E = C / X
    2
    """
    p = power(throughput=throughput, latency_s=latency_s)
    ok = np.isfinite(p)
    idx = np.argmax(np.where(ok, p, -np.inf), axis=axis)
    idx = np.where(ok.any(axis=axis), idx, -1)
    return int(idx) if np.ndim(idx) == 0 else idx


def cost_per_million_tokens_usd(*, price_usd_per_gpu_hour, num_gpus, tokens_per_s):
    """Dollars per million tokens = price per GPU-hour × GPUs / 3600 s/h / (tokens/s) × 1e6.

    One A100 at $1.844/h producing 1,000 output tokens/s: 1.844 / 3600 / 1000 × 1e6 = $0.512.

    >>> round(float(cost_per_million_tokens_usd(price_usd_per_gpu_hour=1.844, num_gpus=1, tokens_per_s=1000.0)), 4)
    0.5122
    """
    rate = np.asarray(tokens_per_s, dtype=float)
    usd_per_s = np.asarray(price_usd_per_gpu_hour, dtype=float) * np.asarray(num_gpus) / SECONDS_PER_HOUR
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rate > 0, usd_per_s / rate * 1e6, np.nan)


def concurrency_points(*, top, n=256):
    """About ``n`` distinct integer concurrencies from 1 to ``top`` on a geometric grid: every
    integer while the geometric step is below 1, then geometric (a log axis shows them evenly).

    >>> concurrency_points(top=10, n=256).tolist()
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    >>> p = concurrency_points(top=4096, n=256); len(p), int(p[0]), int(p[-1])
    (256, 1, 4096)
    """
    top = int(max(top, 1))
    if top <= n:
        return np.arange(1, top + 1, dtype=np.int64)
    # k leading integers 1..k, then n - k geometric points from k + 1 to top with ratio r: choose
    # the smallest k whose first geometric step is at least one client.
    for k in range(1, n):
        r = (top / (k + 1)) ** (1.0 / (n - k - 1))
        if (k + 1) * (r - 1.0) >= 1.0:
            break
    pts = np.round(np.geomspace(k + 1, top, n - k)).astype(np.int64)
    return np.unique(np.concatenate([np.arange(1, k + 1, dtype=np.int64), pts]))
