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
