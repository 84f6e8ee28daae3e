"""What a deployment costs: replicas to carry a rate, dollars per hour, dollars per million input
and output tokens. Pure broadcasting functions (scalars or arrays in, broadcast shape out).
"""

from __future__ import annotations

import numpy as np

SECONDS_PER_HOUR = 3600.0


def replicas_needed(*, rate_rps, capacity_rps_per_replica):
    """Independent copies behind a load balancer needed to carry ``rate_rps``:
    N = ceil(λ / X), X = one replica's requests/s at its SLA-meeting concurrency. 0 capacity: inf.

    40 req/s over replicas that each carry 7.5 req/s: ceil(5.33) = 6.

    >>> replicas_needed(rate_rps=40.0, capacity_rps_per_replica=[7.5, 40.0, 0.0]).tolist()
    [6.0, 1.0, inf]
    """
    x = np.asarray(capacity_rps_per_replica, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        # Round the quotient to 9 significant digits first: 40 / (40 / 6) must be 6, not 7.
        q = np.asarray(rate_rps, dtype=float) / x
        n = np.ceil(np.round(q, 9))
    return np.where(np.isfinite(x) & (x > 0), np.maximum(n, 1.0), np.inf)


def deployment_usd_per_hour(*, price_usd_per_gpu_hour, gpus_total):
    """Dollars per hour of the whole deployment = price per GPU-hour × GPUs (replicas × TP).

    >>> float(deployment_usd_per_hour(price_usd_per_gpu_hour=3.78, gpus_total=6))
    22.68
    """
    return np.asarray(price_usd_per_gpu_hour, dtype=float) * np.asarray(gpus_total, dtype=float)


def usd_per_million_tokens(*, usd_per_hour, tokens_per_s, share=1.0):
    """Dollars per million tokens when ``share`` of the bill is charged to a token stream of
    ``tokens_per_s``: usd/h × share ÷ (3600 s/h × tokens/s) × 10⁶. NaN where no tokens flow.

    The planner splits the bill between input and output tokens by the share of engine time
    each takes (prefill vs decode, ``ServingResult.prefill_fraction``), the way API prices are
    quoted per input and per output token; with ``share = 1`` every dollar is charged to one
    stream (the frontier page's "cost per million output tokens").

    $22.68/h, 40 req/s × 200 output tokens = 8,000 tok/s, 70 % of engine time decoding:
    22.68 × 0.7 / (3600 × 8000) × 10⁶ = $0.5513 per million output tokens.

    >>> round(float(usd_per_million_tokens(usd_per_hour=22.68, tokens_per_s=8000.0, share=0.7)), 4)
    0.5513
    """
    rate = np.asarray(tokens_per_s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(usd_per_hour, dtype=float) * np.asarray(share, dtype=float) / (SECONDS_PER_HOUR * rate) * 1e6
    return np.where(rate > 0, out, np.nan)


def slot_wait_s(*, rate_rps, capacity_rps, slots, service_cv2=0.0):
    """Mean wait of a request for a free sequence slot in one replica receiving ``rate_rps``
    (Poisson) with ``slots`` sequence slots, each busy for one request's E2E, so its capacity is
    X = slots / E2E and its utilization ρ = λ / X. M/G/c: Sakasegawa's approximation of M/M/c,
    Lq ≈ ρ^√(2(c + 1)) / (1 − ρ), times Allen–Cunneen's (1 + C_s²) / 2 for the service time's
    squared coefficient of variation (0: every request the same length); Wq = Lq / λ. ρ ≥ 1: inf.

    One replica of 64 slots at 95 % (20 of 21 req/s), fixed lengths:
    20 / 21 = 0.952; 0.952^√130 = 0.573; Lq = 0.573 / 0.048 = 12.0; Wq = 0.5 · 12.0 / 20 = 0.30 s.
    At 50 % (10.5 req/s): 0.5^11.4 / 0.5 · 0.5 / 10.5 = 3.5e-5 s.

    >>> [round(float(w), 5) for w in slot_wait_s(rate_rps=[20.0, 10.5], capacity_rps=21.0, slots=64)]
    [0.301, 4e-05]
    """
    lam = np.asarray(rate_rps, dtype=float)
    x = np.asarray(capacity_rps, dtype=float)
    c = np.maximum(np.asarray(slots, dtype=float), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = lam / x
        lq = rho ** np.sqrt(2.0 * (c + 1.0)) / (1.0 - rho)
        w = (1.0 + np.asarray(service_cv2, dtype=float)) / 2.0 * lq / lam
    return np.where((rho < 1.0) & (x > 0) & (lam > 0), w, np.where(lam > 0, np.inf, 0.0))


def wait_quantile_s(*, rate_rps, capacity_rps, servers, quantile, service_cv2=0.0):
    """Wait in queue at ``quantile`` (0 < q < 1) of an M/G/c queue: Poisson arrivals at λ =
    ``rate_rps`` to c = ``servers`` servers that together complete X = ``capacity_rps`` requests/s
    (ρ = λ / X). The Erlang-C tail: a request waits with probability P_w and, if it waits, for an
    exponential time of mean 1 / (X − λ) (exact for M/M/c), so

        P(W > t) = P_w · exp(−t / m),  m = (1 + C_s²)/2 / (X − λ),  P_w ≈ ρ^(√(2(c + 1)) − 1),
        W_q = m · ln(P_w / (1 − q)) where P_w > 1 − q, else 0.

    P_w is Sakasegawa's approximation (the one :func:`slot_wait_s` uses: its mean wait is P_w · m,
    exactly this tail's mean; exact for c = 1, where P_w = ρ); the (1 + C_s²)/2 factor is Allen and
    Cunneen's for a general service time. ρ ≥ 1: inf. Sources: Kleinrock, Queueing Systems I
    (1975) §3.5 (Erlang C, the exponential conditional wait); Sakasegawa, Ann. Inst. Stat. Math.
    29 (1977); Allen, Probability, Statistics and Queueing Theory (1990).

    One replica of 32 slots at 84 % (20 of 23.8 req/s), fixed lengths (C_s² = 0), P99:
    P_w = 0.84^(√66 − 1) = 0.84^7.12 = 0.29; m = 0.5 / 3.8 = 0.131 s;
    W_99 = 0.131 · ln(0.29 / 0.01) = 0.131 · 3.37 = 0.44 s. At P50 the median request does not wait.

    >>> [round(float(w), 2) for w in wait_quantile_s(rate_rps=20.0, capacity_rps=23.8, servers=32,
    ...                                                quantile=[0.99, 0.5])]
    [0.44, 0.0]
    """
    lam = np.asarray(rate_rps, dtype=float)
    x = np.asarray(capacity_rps, dtype=float)
    c = np.maximum(np.asarray(servers, dtype=float), 1.0)
    q = np.asarray(quantile, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rho = lam / x
        p_wait = rho ** (np.sqrt(2.0 * (c + 1.0)) - 1.0)
        m = (1.0 + np.asarray(service_cv2, dtype=float)) / 2.0 / (x - lam)
        w = np.where(p_wait > 1.0 - q, m * np.log(p_wait / (1.0 - q)), 0.0)
    return np.where((rho < 1.0) & (x > 0), w, np.where(lam > 0, np.inf, 0.0))


def ttft_quantile_wait_s(*, rate_rps, capacity_rps, slots, prefill_s, quantile, service_cv2=0.0):
    """What a request waits, at ``quantile``, beyond the closed loop's full-batch TTFT, in one
    replica receiving ``rate_rps`` (Poisson): the wait for a free sequence slot (M/G/c, c = slots,
    capacity X: :func:`wait_quantile_s`) plus the wait behind other prompts that arrived just
    before it and take the prefill room first (M/D/1: one prompt at a time, ``prefill_s`` =
    T_pf, the engine time one prompt costs; capacity 1 / T_pf). The two quantiles are added (both
    waits are non-negative and grow together with the load; the quantile of their sum is usually lower).

    An estimate, not a bound: what it leaves out is the spread of the engine's own TTFT (a prompt
    that lands in a step beside other prompts' chunks, or behind a long prefill step). Measured
    against 4,000-request steady-state simulations of 60 planner rows (Llama-3.1-8B, 70B,
    DeepSeek-V3, Qwen3-8B; P50 to P99; first quarter dropped), the full-batch TTFT + this wait is
    0.62–3.2× the simulated percentile, median 0.97; the engine's own TTFT alone is 0.83–3.0× the
    full-batch TTFT at the percentile. So the planner sizes every configuration with it and the
    simulator (:func:`calc.plan.percentiles.check_top`) judges the rows it lists.

    One replica of 32 slots at 84 % (20 of 23.8 req/s: slot wait W_99 = 0.442 s, as in
    :func:`wait_quantile_s`), prompts of T_pf = 20 ms: the prefill room is busy ρ = 20 · 0.02 = 40 % of the
    time, so P_w = 0.4, m = 0.5 / (50 − 20) = 0.0167 s and W_99 = 0.0167 · ln(0.4 / 0.01) = 0.062 s;
    with the slot wait, 0.442 + 0.062 = 0.504 s.

    >>> round(float(ttft_quantile_wait_s(rate_rps=20.0, capacity_rps=23.8, slots=32, prefill_s=0.02,
    ...                                  quantile=0.99)), 3)
    0.504
    """
    lam = np.asarray(rate_rps, dtype=float)
    pf = np.asarray(prefill_s, dtype=float)
    with np.errstate(divide="ignore"):
        pf_capacity = np.where(pf > 0, 1.0 / pf, np.inf)
    slot = wait_quantile_s(rate_rps=lam, capacity_rps=capacity_rps, servers=slots, quantile=quantile,
                           service_cv2=service_cv2)
    prefill = np.where(np.isfinite(pf_capacity), wait_quantile_s(rate_rps=lam, capacity_rps=pf_capacity, servers=1,
                                                                 quantile=quantile, service_cv2=0.0), 0.0)
    return slot + prefill


def replicas_for_ttft(*, rate_rps, capacity_rps_per_replica, slots, ttft_s, ttft_slo_s, service_cv2=0.0,
                      quantile=None, prefill_s=0.0):
    """(replicas, wait in s): enough replicas to carry the rate, N0 = ceil(λ / X)
    (:func:`replicas_needed`), and more where a request's wait would push ``ttft_s`` + wait past
    the target. ``quantile`` None (the SLA on the mean): the mean wait for a free sequence slot
    (:func:`slot_wait_s`); a quantile q: the wait at q (:func:`ttft_quantile_wait_s`: the slot's
    Erlang-C tail plus the prefill queue of prompts ``prefill_s`` each). Either depends on the
    utilization ρ = λ / (N·X) alone and rises in it: the highest ρ* whose wait fits target − TTFT
    (bisection, 40 halvings) gives N = max(N0, ceil(λ / (ρ*·X))), the least that meets it, and
    never more at a lower rate. Where TTFT alone misses the target: N0 and its wait.

    20 req/s on replicas of 64 slots and 21 req/s capacity with a 0.1 s TTFT, target 0.2 s: one
    replica (95 %) waits 0.30 s; ρ* = 0.91 (W = 0.1 s), so two (48 %, wait ~0). Judged at P99
    the tail needs the same two: at 48 % a request waits with probability 0.48^10.4 ≈ 5e-4 < 1 %.

    >>> n, w = replicas_for_ttft(rate_rps=20.0, capacity_rps_per_replica=21.0, slots=64, ttft_s=0.1, ttft_slo_s=0.2)
    >>> int(n), float(w) < 1e-4
    (2, True)
    >>> n, w = replicas_for_ttft(rate_rps=20.0, capacity_rps_per_replica=21.0, slots=64, ttft_s=0.1, ttft_slo_s=0.2,
    ...                          quantile=0.99)
    >>> int(n), float(w)
    (2, 0.0)
    """
    x = np.asarray(capacity_rps_per_replica, dtype=float)
    c = np.maximum(np.asarray(slots, dtype=float), 1.0)
    room = np.asarray(ttft_slo_s, dtype=float) - np.asarray(ttft_s, dtype=float)
    n0 = replicas_needed(rate_rps=rate_rps, capacity_rps_per_replica=x)

    def wait(lam):
        if quantile is None:
            return slot_wait_s(rate_rps=lam, capacity_rps=x, slots=c, service_cv2=service_cv2)
        return ttft_quantile_wait_s(rate_rps=lam, capacity_rps=x, slots=c, prefill_s=prefill_s, quantile=quantile,
                                    service_cv2=service_cv2)

    lo = np.zeros(np.broadcast_shapes(np.shape(x), np.shape(c), np.shape(room), np.shape(prefill_s)))
    hi = np.ones_like(lo)
    for _ in range(40):  # the highest utilization whose wait fits the room left by TTFT
        mid = 0.5 * (lo + hi)
        ok = wait(mid * x) <= room
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.ceil(np.round(np.asarray(rate_rps, dtype=float) / (lo * x), 9))
    replicas = np.where(np.isfinite(n0) & (room > 0) & (lo > 0), np.maximum(n0, need), n0)
    n = np.where(np.isfinite(replicas), replicas, 1.0)
    return replicas, np.where(np.isfinite(n0), wait(np.asarray(rate_rps, dtype=float) / n), np.nan)
