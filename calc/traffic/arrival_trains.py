"""TTFT of a closed loop whose prompts fit one step: the distribution of the steps an arrival meets,
as a mixture (mean and quantile of the whole distribution, not of its parts one by one).

Mechanism (checked against :func:`calc.traffic.simulator.simulate`, bench/speculative_sim_vs_analytic.py):
in a closed loop a client sends its next request when its last one finishes, and requests finish
only at the END of an engine step, where every decoding sequence gets its token at once. So
completions come in clumps, N per step, Poisson of mean α = X·T̄ (X requests/s, T̄ the mean step;
per speculative step with τ tokens, α = X·T̄·τ), and each clump reaches the engine as a TRAIN: the
API server takes the requests one at a time, t_api apart (Efficiency.api_server_request_s). Then

  * the step a request finds in flight carries n prompts with probability P_α(n) (the prompts of
    one step are one clump, not a rate per second: a step of 250 ms brings no more of them than
    one of 20 ms) and is met in proportion to its length: w_n = P_α(n)·T_n / Σ P_α(j)·T_j, with T_n
    a step of n prompts beside the R decodes (T_0 the decode step); the request waits a uniform
    share of it, U·T_n;
  * its own step carries it and the M others of its clump, M ~ Poisson(α) (the size-biased clump
    of a Poisson count less the request itself), T_(1+M);
  * the i-th behind the head of its train (probability P(N ≥ i + 1)/α of a request) waits i·t_api
    at the API server, and then either still meets the step in flight the head waited in (the
    head's wait r > i·t_api: it rides in the head's step) or lands i·t_api − r into the head's own
    step, waits the rest of it, T_(1+M) − (i·t_api − r), and then its own step T_(1+M').

TTFT = t_api + t_req + (API wait) + (wait in the engine) + (own step): a mixture of uniform pieces
(the head's wait r on a grid of ``R_BINS`` bins), whose mean is the weighted mean and whose
quantile is found by bisection on the mixture's CDF. Where the old sum of quantiles of independent
parts (:func:`calc.traffic.queueing._ttft`) read the P95 16-28 % low, it is that a request's parts
are not independent: a long step in flight, a full own step and a wait at the API server come
together (a train follower waits at the API AND nearly a whole prompt step).
"""

from __future__ import annotations

import numpy as np

MAX_PROMPTS = 6  # prompts in a step counted one by one (the rest lumped into the last)
MAX_BEHIND = 4  # places behind a train's head counted
R_BINS = 6  # bins of the head's wait within its step in flight


def poisson_pmf(*, mean, count):
    """P(N = 0 … count − 1) of a Poisson of this ``mean`` (leading axis), the rest of the mass
    added to the last term.

    Mean 0.5, three terms: e^−0.5 = 0.6065, 0.5·e^−0.5 = 0.3033, the rest 1 − 0.9098 = 0.0902.

    >>> [round(x, 4) for x in poisson_pmf(mean=0.5, count=3).tolist()]
    [0.6065, 0.3033, 0.0902]
    """
    mu = np.asarray(mean, dtype=float)
    out = [np.exp(-mu)]
    for j in range(1, count):
        out.append(out[-1] * mu / j)
    p = np.stack(out)
    p[-1] = p[-1] + np.maximum(1.0 - p.sum(axis=0), 0.0)
    return p


def _pick(T, n):
    """T_n for an array of prompt counts n (capped at the last one counted)."""
    idx = np.minimum(np.asarray(n), T.shape[0] - 1).astype(int)
    shape = np.broadcast_shapes(idx.shape, T.shape[1:])
    return np.take_along_axis(np.broadcast_to(T, T.shape[:1] + shape), np.broadcast_to(idx, shape)[None], axis=0)[0]


def _follower(i, *, head_wait, head_own, T, t_api):
    """(engine wait, train members in its own step) of the i-th behind a train's head (the head
    arrives at 0, its step starts at ``head_wait`` and lasts ``head_own``; member j arrives at
    j·t_api). Steps follow one another: the step after one carries the members that arrived
    during it (T_c for c of them) or, none arriving, is a decode step T_0; member i joins the
    first step that starts at or after its arrival."""
    a_i = i * t_api
    start = np.asarray(head_wait, dtype=float)
    length = np.asarray(head_own, dtype=float)
    ride = a_i <= start  # it arrives before the head's step starts: it rides in it
    wait = np.where(ride, start - a_i, 0.0)
    # riding: the head, it and the members between them that arrived before the step started
    mates = np.where(ride, 2.0 + sum((j * t_api <= start).astype(float) for j in range(1, i)), 0.0)
    done = ride
    for _ in range(2 * i + 2):  # at most one decode step between members: i member steps, i gaps
        end = start + length
        here = (~done) & (a_i < end)  # it arrives during this step: joins the next one
        c = sum(((j * t_api >= start) & (j * t_api < end)).astype(float) for j in range(1, i))
        wait = np.where(here, end - a_i, wait)
        mates = np.where(here, 1.0 + c, mates)
        done = done | here
        start, length = end, np.where(c > 0, _pick(T, c), T[0])
    return wait, np.maximum(mates, 1.0)


def train_ttft_s(*, step_s, clump, fixed_s, api_s, q):
    """(mean, q-quantile) of TTFT in a closed loop whose prompts fit one step (module docstring).

    ``step_s(n)``: a step with n ≥ 1 prompts beside the decodes (broadcasting array); ``step_s(0)``
    the decode step. ``clump`` α: completions (= prompts) per step. ``fixed_s``: t_api + t_req.
    ``api_s``: t_api, the spacing of a train.

    Hand-worked, α → 0 (prompts rare): the step in flight is a decode step, T_0 = 10 ms, waited
    U·T_0; the own step alone, T_1 = 10 + 50 = 60 ms; fixed 50 ms. Mean 50 + 10/2 + 60 = 115 ms,
    P95 50 + 0.95 · 10 + 60 = 119.5 ms.

    >>> m, p = train_ttft_s(step_s=lambda n: 0.01 + 0.05 * n, clump=1e-9, fixed_s=0.05, api_s=0.02, q=0.95)
    >>> round(float(m), 4), round(float(p), 4)
    (0.115, 0.1195)
    """
    a = np.maximum(np.asarray(clump, dtype=float), 1e-12)
    t_api = np.asarray(api_s, dtype=float)
    T = np.stack([np.broadcast_to(step_s(n), np.broadcast_shapes(a.shape, np.shape(step_s(n)))).astype(float)
                  for n in range(MAX_PROMPTS + 1)])
    p_n = poisson_pmf(mean=a, count=MAX_PROMPTS + 1)  # prompts of a step (and others in one's own step)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = p_n * T / np.maximum((p_n * T).sum(axis=0), 1e-300)  # the step in flight, length-biased
    own = T[np.minimum(np.arange(1, MAX_PROMPTS + 1), MAX_PROMPTS)]  # T_(1+M), M = 0 … MAX_PROMPTS − 1
    p_m = p_n[:MAX_PROMPTS].copy()
    p_m[-1] = p_m[-1] + p_n[MAX_PROMPTS]
    # i places behind the head of its train: P(N ≥ i + 1)/α for a Poisson(α) clump N (Σ_i = E[N]/α = 1)
    at_least = 1.0 - np.cumsum(poisson_pmf(mean=a, count=MAX_BEHIND + 1), axis=0)  # P(N ≥ i + 1), i = 0 …
    p_i = at_least[:MAX_BEHIND] / a
    p_i = p_i / p_i.sum(axis=0)  # the places past MAX_BEHIND − 1 lumped in proportion
    wts, los, spans = [], [], []
    for n in range(MAX_PROMPTS + 1):
        for m in range(MAX_PROMPTS):
            wm = w[n] * p_m[m]
            # the head: waits U·T_n, then its own step
            wts.append(p_i[0] * wm)
            los.append(fixed_s + own[m])
            spans.append(T[n])
            for i in range(1, MAX_BEHIND):
                for b in range(R_BINS):
                    r = (b + 0.5) / R_BINS * T[n]  # the head's wait, within a bin of width T_n/R_BINS
                    wait, mates = _follower(i, head_wait=r, head_own=own[m], T=T, t_api=t_api)
                    pw = p_i[i] * wm / R_BINS
                    for m2 in range(MAX_PROMPTS):  # its own step: it, the train-mates in it, M' others
                        wts.append(pw * p_m[m2])
                        los.append(fixed_s + i * t_api + wait + _pick(T, mates + m2) - T[n] / R_BINS / 2.0)
                        spans.append(T[n] / R_BINS)
    shape = np.broadcast_shapes(*(np.shape(x) for x in wts + los + spans))
    W = np.stack([np.broadcast_to(x, shape) for x in wts])
    L = np.stack([np.broadcast_to(x, shape) for x in los])
    S = np.maximum(np.stack([np.broadcast_to(x, shape) for x in spans]), 1e-12)
    W = W / W.sum(axis=0)
    mean = (W * (L + S / 2.0)).sum(axis=0)
    if q is None:  # the mean alone (calc.traffic.train_table tabulates it)
        return mean, None

    def cdf(x):
        return (W * np.clip((x - L) / S, 0.0, 1.0)).sum(axis=0)

    lo, hi = L.min(axis=0), (L + S).max(axis=0)
    qq = np.asarray(q, dtype=float)
    for _ in range(40):  # to (hi − lo)·2⁻⁴⁰
        mid = 0.5 * (lo + hi)
        below = cdf(mid) < qq
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return mean, hi
