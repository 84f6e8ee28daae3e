"""Statistics of a simulated run: percentiles, throughput, goodput, Little's law and the highest
arrival rate that still meets a percentile SLA.

* Percentiles: NumPy's linear interpolation (``np.percentile``, the definition vLLM's
  ``benchmark_serving`` prints) over requests (TTFT, TPOT, E2E, queue wait) or over every
  inter-token gap (ITL).
* Throughput over the run: N / (last finish − first arrival); output tokens the same way.
* Goodput (DistServe, Zhong et al. 2024): requests per second that meet BOTH the TTFT and the
  TPOT target (a request with one output token has no TPOT and meets it).
* How sure a run's statistic is (:func:`statistic_interval`): sectioning (batch means), the
  run's requests in arrival order cut into k contiguous sections.
* Little's law: the time-average number of requests in the system (waiting + running, from
  arrival to finish) equals throughput × mean E2E; on a run that starts and ends empty it holds
  exactly (∫N(t)dt = Σ E2E), a check on the simulator's bookkeeping.
* Highest sustainable rate: bisection on the Poisson (or gamma) rate, with the same seed at
  every rate (common random numbers: the arrival times scale as 1/λ), for the largest rate whose
  P-th percentile TTFT and TPOT meet the targets.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from calc.traffic.simulator import SimResult

PERCENTILES: tuple[int, ...] = (50, 90, 95, 99)
METRICS: tuple[str, ...] = ("ttft_s", "tpot_s", "itl_s", "e2e_latency_s", "queue_wait_s")


def percentile(values, q) -> float:
    """q-th percentile ignoring NaN (NaN if nothing is left).

    >>> percentile([1.0, 2.0, 3.0, 4.0, np.nan], 50)
    2.5
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(np.percentile(v, q)) if v.size else float("nan")


# Student's t at 0.975 for k − 1 degrees of freedom (two-sided 95 %), k the sections of statistic_interval
T_975 = {4: 2.776, 9: 2.262, 19: 2.093}
SECTIONS = 10
# Fewer requests a section: no interval. With 30 a section (a 400-request run) the long run fell inside in only
# 21-25 of 30 runs (bench/interval_coverage.py): a section's P95 from 30 requests is nearly its maximum.
MIN_PER_SECTION = 50


def statistic(values, stat: str) -> float:
    """A run's statistic: ``"mean"``, or ``"p95"`` (any ``"p<q>"``) as :func:`percentile` (NaN ignored;
    NaN if nothing is left).

    >>> statistic([1.0, 2.0, 3.0, 4.0, np.nan], "mean"), statistic([1.0, 2.0, 3.0, 4.0], "p50")
    (2.5, 2.5)
    """
    if stat == "mean":
        v = np.asarray(values, dtype=float)
        v = v[np.isfinite(v)]
        return float(v.mean()) if v.size else float("nan")
    return percentile(values, float(stat.removeprefix("p")))


def statistic_interval(values, stat: str, *, sections: int = SECTIONS) -> tuple[float, float]:
    """95 % interval of a run's statistic (``"mean"`` or ``"p95"`` …) over ``values`` in arrival order,
    by sectioning (batch means; Asmussen & Glynn, *Stochastic Simulation*, 2007, §IV.5): cut into k
    contiguous sections, x̂ the statistic of the whole, s the standard deviation of the k sections'
    statistics, x̂ ± t(k − 1, 0.975)·s/√k. Neighbouring requests of a queue are correlated; sections of
    many requests each are nearly independent, which the plain order-statistic interval of a
    percentile (independent draws) is not. (nan, nan) with fewer than :data:`MIN_PER_SECTION` a section.

    Checked on the simulator (``bench/interval_coverage.py``: the load test's default, Llama-2-7B A100,
    1,792 + 256 lognormal 0.5, Poisson, first quarter dropped; 30 runs a case against 3 × 20,000
    requests): P95 TTFT at 1 / 2 / 2.5 req/s with 1,000 requests, the long run inside the interval in
    30 / 27 / 20 of 30, half-width 5.7 / 11.1 / 14.1 % (the runs' own spread 1.3 / 6.0 / 12.5 %); 3,000
    requests 29 / 30, 7.8 %. Near capacity (2.5 req/s) too narrow: there the long run's own P95 moved
    7 % between 40,000 and 60,000 requests. 400 requests (30 a section): 21-25 of 30, hence
    :data:`MIN_PER_SECTION`.

    >>> lo, hi = statistic_interval(np.arange(500.0), "mean")   # sections of 50: means 24.5, 74.5, … 474.5
    >>> round(lo, 1), round(hi, 1)   # 249.5 ∓ 2.262 · 151.4 / √10 = 249.5 ∓ 108.3
    (141.2, 357.8)
    >>> statistic_interval(np.ones(499), "p95")   # 49.9 a section: too few
    (nan, nan)
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    k = int(sections)
    if k - 1 not in T_975 or v.size < k * MIN_PER_SECTION:
        return float("nan"), float("nan")
    whole = statistic(v, stat)
    parts = np.array([statistic(x, stat) for x in np.array_split(v, k)])
    half = T_975[k - 1] * float(parts.std(ddof=1)) / np.sqrt(k)
    return float(whole - half), float(whole + half)


def meets_slo(r: SimResult, *, ttft_slo_s: float, tpot_slo_s: float) -> np.ndarray:
    """Per request: TTFT ≤ target and (TPOT ≤ target or a single output token)."""
    tpot_ok = np.where(np.isnan(r.tpot_s), True, r.tpot_s <= tpot_slo_s)
    return (r.ttft_s <= ttft_slo_s) & tpot_ok & np.isfinite(r.e2e_latency_s)


def summarize(r: SimResult, *, ttft_slo_s: float = np.inf, tpot_slo_s: float = np.inf) -> dict[str, float]:
    """Flat dict: ``<metric>_mean`` and ``<metric>_p50/p90/p95/p99`` for :data:`METRICS`, plus
    throughputs, goodput, preemptions, the run's length, ``finished_requests`` and ``truncated``.

    A run cut at the simulator's step cap (``r.truncated``) is partial: latencies, throughputs and
    goodput count only the finished requests over the time until the last of them finished; the
    unfinished ones (the slowest) are left out, so its percentiles are lower bounds. (Throughputs
    used to divide every request's tokens by that time, overstating them.)"""
    out: dict[str, float] = {}
    for name in METRICS:
        v = getattr(r, name)
        fin = np.asarray(v, dtype=float)
        fin = fin[np.isfinite(fin)]
        out[f"{name}_mean"] = float(fin.mean()) if fin.size else float("nan")
        if name == "itl_s" and getattr(r, "itl_sketched", False):  # a quantile sketch: its mean kept exactly
            out[f"{name}_mean"] = float(r.itl_mean_s)
        for q in PERCENTILES:
            out[f"{name}_p{q}"] = float(np.percentile(fin, q)) if fin.size else float("nan")
    span = r.makespan_s
    ok = meets_slo(r, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s)
    done = np.isfinite(r.finish_s)  # every request, unless the run was cut at the step cap
    out["output_tokens_per_s"] = float(r.output_len[done].sum() / span) if span > 0 else float("nan")
    # prompt + output tokens over the run, as `vllm bench serve` reports "Total token throughput"
    out["total_tokens_per_s"] = (float((r.input_len[done].sum() + r.output_len[done].sum()) / span)
                                 if span > 0 else float("nan"))
    out["requests_per_s"] = float(done.sum() / span) if span > 0 else float("nan")
    out["goodput_requests_per_s"] = float(ok.sum() / span) if span > 0 else float("nan")
    out["slo_attainment"] = float(ok.mean())
    out["preemptions"] = int(r.total_preemptions)
    out["num_requests"] = int(r.num_requests)
    out["duration_s"] = float(span)
    out["finished_requests"] = int(done.sum())
    out["truncated"] = bool(r.truncated)
    return out


def littles_law(r: SimResult) -> tuple[float, float]:
    """(∫ N(t) dt from the arrival/finish events, Σ E2E): equal on a complete run.

    N(t) is counted from events (+1 at each arrival, −1 at each finish), independently of the
    simulator's per-request latencies; their agreement checks the bookkeeping."""
    t = np.concatenate([r.arrival_s, r.finish_s])
    step = np.concatenate([np.ones(r.num_requests), -np.ones(r.num_requests)])
    order = np.argsort(t, kind="stable")
    t, step = t[order], step[order]
    n_in = np.cumsum(step)
    area = float(np.sum(n_in[:-1] * np.diff(t)))
    return area, float(np.sum(r.e2e_latency_s))


@dataclass(frozen=True)
class RateSearch:
    """Result of :func:`max_sustainable_rate`: every rate tried and its percentiles."""

    rate_per_s: float  # highest rate found that meets the SLA (NaN if even the lowest fails)
    percentile: int
    rates_per_s: np.ndarray
    ttft_s: np.ndarray  # P-th percentile at each rate tried
    tpot_s: np.ndarray
    goodput_requests_per_s: np.ndarray
    meets: np.ndarray
    ttft_p95_s: np.ndarray = None  # P95 / P99 at each rate (for plots), whatever percentile judged
    ttft_p99_s: np.ndarray = None
    tpot_p95_s: np.ndarray = None
    tpot_p99_s: np.ndarray = None


def max_sustainable_rate(run: Callable[[float], SimResult], *, ttft_slo_s: float, tpot_slo_s: float, percentile: int = 95,
                         rate_lo: float, rate_hi: float, iterations: int = 8) -> RateSearch:
    """Largest rate in [rate_lo, rate_hi] whose P-th percentile TTFT and TPOT meet the targets
    (bisection; ``run(rate)`` simulates one rate, with the same seed each time).

    >>> def fake(rate):   # TTFT grows with the rate: meets 1 s up to 4 req/s
    ...     return _fake_result(ttft=rate / 4.0)
    >>> round(max_sustainable_rate(fake, ttft_slo_s=1.0, tpot_slo_s=1.0, rate_lo=1, rate_hi=10, iterations=20).rate_per_s, 3)
    4.0
    """
    if not 0 < rate_lo < rate_hi:
        raise ValueError(f"rate: need 0 < low < high (got {rate_lo}, {rate_hi})")
    tried: dict[float, tuple] = {}

    def check(rate: float) -> bool:
        r = run(rate)
        s = summarize(r, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s)
        tt, tp = s[f"ttft_s_p{percentile}"], s[f"tpot_s_p{percentile}"]
        # a run cut at the step cap left its slowest requests out: it cannot show that the rate is sustained
        ok = tt <= ttft_slo_s and (np.isnan(tp) or tp <= tpot_slo_s) and not s["truncated"]
        tried[rate] = (tt, tp, s["goodput_requests_per_s"], ok, s["ttft_s_p95"], s["ttft_s_p99"], s["tpot_s_p95"],
                       s["tpot_s_p99"])
        return ok

    best = float("nan")
    if check(rate_lo):
        best = rate_lo
        if check(rate_hi):
            best = rate_hi
        else:
            lo, hi = rate_lo, rate_hi
            for _ in range(iterations):
                mid = float(np.sqrt(lo * hi))  # geometric: rates span decades
                if check(mid):
                    lo = mid
                else:
                    hi = mid
            best = lo
    rates = np.array(sorted(tried))
    vals = np.array([tried[x] for x in rates], dtype=object).reshape(len(rates), 8)
    return RateSearch(rate_per_s=best, percentile=int(percentile), rates_per_s=rates,
                      ttft_s=vals[:, 0].astype(float), tpot_s=vals[:, 1].astype(float),
                      goodput_requests_per_s=vals[:, 2].astype(float), meets=vals[:, 3].astype(bool),
                      ttft_p95_s=vals[:, 4].astype(float), ttft_p99_s=vals[:, 5].astype(float),
                      tpot_p95_s=vals[:, 6].astype(float), tpot_p99_s=vals[:, 7].astype(float))


def _fake_result(*, ttft: float) -> SimResult:
    """A one-request :class:`SimResult` with the given TTFT (for examples and tests)."""
    z = np.zeros(1)
    return SimResult(arrival_s=z, input_len=np.ones(1, dtype=np.int64), output_len=np.ones(1, dtype=np.int64),
                     first_token_s=z + ttft, finish_s=z + ttft, ttft_s=z + ttft, tpot_s=z * np.nan,
                     e2e_latency_s=z + ttft, queue_wait_s=z, preemptions=np.zeros(1, dtype=np.int64), itl_s=np.zeros(0),
                     step_start_s=z, step_s=z + ttft, step_waiting=np.zeros(1, dtype=np.int64),
                     step_running=np.ones(1, dtype=np.int64), step_kv_blocks=np.zeros(1, dtype=np.int64),
                     step_prefill_tokens=np.ones(1, dtype=np.int64), step_decode_tokens=np.zeros(1, dtype=np.int64),
                     num_blocks=1, block_size=16, truncated=False)


__all__ = ["PERCENTILES", "METRICS", "percentile", "meets_slo", "summarize", "littles_law", "RateSearch",
           "max_sustainable_rate", "replace"]


def steady_means(r: SimResult, *, skip: int = 0) -> dict[str, float]:
    """Mean TTFT, TPOT and E2E (s) over the requests after the first ``skip`` (a closed loop's
    start-up), finished ones only; NaN where none finished (a run cut at its step cap), quietly.

    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> r = SimpleNamespace(ttft_s=np.array([9.0, 1.0, np.nan]), tpot_s=np.array([1.0, 0.5, np.nan]),
    ...                     e2e_latency_s=np.array([9.0, 3.0, np.nan]))
    >>> steady_means(r, skip=1)
    {'ttft_s': 1.0, 'tpot_s': 0.5, 'e2e_latency_s': 3.0}
    """
    out = {}
    for name in ("ttft_s", "tpot_s", "e2e_latency_s"):
        v = np.asarray(getattr(r, name), dtype=float)[skip:]
        v = v[np.isfinite(v)]
        out[name] = float(v.mean()) if v.size else float("nan")
    return out
