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


def replicas_for_ttft(*, rate_rps, capacity_rps_per_replica, slots, ttft_s, ttft_slo_s, service_cv2=0.0):
    """(replicas, slot wait in s): enough replicas to carry the rate, N0 = ceil(λ / X)
    (:func:`replicas_needed`), and more where a request's wait for a free sequence slot
    (:func:`slot_wait_s`) would push ``ttft_s`` + wait past the target. That wait depends on the
    utilization ρ = λ / (N·X) alone, W(ρ) = (1 + C_s²)/2 · ρ^(√(2(c + 1)) − 1) / ((1 − ρ)·X), rising
    in ρ: the highest ρ* with W(ρ*) ≤ target − TTFT (bisection, 40 halvings) gives
    N = max(N0, ceil(λ / (ρ*·X))), the least that meets it, and never more at a lower rate. Where
    TTFT alone misses the target: N0 and its wait.

    20 req/s on replicas of 64 slots and 21 req/s capacity with a 0.1 s TTFT, target 0.2 s: one
    replica (95 %) waits 0.30 s; ρ* = 0.91 (W = 0.1 s), so two (48 %, wait ~0).

    >>> n, w = replicas_for_ttft(rate_rps=20.0, capacity_rps_per_replica=21.0, slots=64, ttft_s=0.1, ttft_slo_s=0.2)
    >>> int(n), float(w) < 1e-4
    (2, True)
    """
    x = np.asarray(capacity_rps_per_replica, dtype=float)
    c = np.maximum(np.asarray(slots, dtype=float), 1.0)
    room = np.asarray(ttft_slo_s, dtype=float) - np.asarray(ttft_s, dtype=float)
    n0 = replicas_needed(rate_rps=rate_rps, capacity_rps_per_replica=x)
    lo = np.zeros(np.broadcast_shapes(np.shape(x), np.shape(c), np.shape(room)))
    hi = np.ones_like(lo)
    for _ in range(40):  # the highest utilization whose wait fits the room left by TTFT
        mid = 0.5 * (lo + hi)
        ok = slot_wait_s(rate_rps=mid * x, capacity_rps=x, slots=c, service_cv2=service_cv2) <= room
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.ceil(np.round(np.asarray(rate_rps, dtype=float) / (lo * x), 9))
    replicas = np.where(np.isfinite(n0) & (room > 0) & (lo > 0), np.maximum(n0, need), n0)
    n = np.where(np.isfinite(replicas), replicas, 1.0)
    wait = slot_wait_s(rate_rps=np.asarray(rate_rps, dtype=float) / n, capacity_rps=x, slots=c,
                       service_cv2=service_cv2)
    return replicas, np.where(np.isfinite(n0), wait, np.nan)
