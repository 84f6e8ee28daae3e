"""TTFT of a closed loop whose prompts fit one step: the distribution of the steps an arrival meets,
as a mixture (mean and quantile of the whole distribution, not of its parts one by one).

Mechanism (checked against :func:`calc.traffic.simulator.simulate`, bench/speculative_sim_vs_analytic.py):
in a closed loop a client sends its next request when its last one finishes, and requests finish
only at the END of an engine step, where every decoding sequence gets its token at once. So
completions come in clumps, N per step, Poisson of mean α = X·T̄ (X requests/s, T̄ the mean step;
per speculative step with τ tokens, α = X·T̄·τ), and each clump reaches the engine as a TRAIN: the
API server takes the requests one at a time, t_api apart (Efficiency.api_server_request_s). Then

  * a request reaches the engine δ = t_api + t_req after the step end that finished its client's
    last request, so the step it finds in flight is not met in proportion to its length alone: the
    first step after that end, if it outlasts δ, with its rest T_n − δ, else one that started
    later within δ (:func:`step_in_flight`); T_n a step of n prompts beside the R decodes (T_0 the
    decode step), n from the chain over step kinds of :func:`step_chain_pmf` (the prompts of a step
    are the clumps of the step ENDS D before it, not a rate per second: a step of 250 ms brings no
    more of them than one of 20 ms, but it catches the clump of the end it started at whole, so a
    prompt step follows a prompt step more often than Poisson(α) says: Llama-3.1-70B TP 4 EAGLE-3
    C = 32, P(prompts | the step before had) 0.40 against 0.21 after a decode step, simulated);
  * a request is the i-th member of a clump of N (the i-th of its train), with probability
    P(N)·[N ≥ i + 1]/α: one head per clump, so a head's clump is not size-biased (Llama-3.1-70B
    TP 4, C = 128: 1.5 prompts in a head's step, in the simulator as here);
  * the members reach the engine t_api apart and each joins the first step that starts after it
    arrives (:func:`_train`): the head's step carries the members that came before it started and
    the prompts of other trains that reached the engine during the step in flight (Poisson, from
    the step ends δ before it); a member that comes after the start waits that step out;
  * a step carries at most the prompt tokens of its room (budget − the decodes' tokens): of an own
    step of N > room/I prompts the last ones finish a step later (:func:`spill_share`).

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
R_BINS = 6  # bins of the head's wait within its step in flight
FIRST_BINS = 3  # bins of the head's rest of the first step after its finish (its delay's spread)
MAX_OUTSIDERS = 3  # prompts of other trains in the head's step counted one by one (the rest lumped)
NEGLIGIBLE = 1e-9  # pieces of the mixture with less weight than this everywhere are left out


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


def step_chain_pmf(*, step_s, mean, delay_lo_s=None, delay_hi_s=None, iterations=30):
    """P(n prompts in a step), n = 0 … len − 1 (the rest lumped into the last), when a step's prompts
    depend on the step BEFORE it: a chain over step kinds (T_m = ``step_s[m]`` the step of m prompts).

    Completions come in clumps of Poisson(α) (α = ``mean``) at step ENDS, each reaching the engine D
    later (D uniform on [``delay_lo_s``, ``delay_hi_s``]); a prompt joins the step after the one it
    arrived in. The step after a step of length T_m (starting at s) carries the clumps of the step
    ends in [s − D, s + T_m − D]: the end at s itself when D < T_m (no end falls inside the step),
    and the earlier ends in a window min(D, T_m) before s, about one per T̄ (T̄ = Σ π(j)·T_j):
    c_m = P(D < T_m) + E[min(D, T_m)]/T̄ clumps. Every clump lands in exactly one step, so the mean
    prompts per step stays α: c is scaled to Σ π(m)·c_m = 1. The step after a step of m prompts
    carries Poisson(α·c_m); π, the stationary distribution, π(n) = Σ_m π(m)·Poisson(α·c_m)(n), by
    fixed-point iteration from Poisson(α). Without a delay (arrivals unrelated to the step ends),
    c_m = T_m/T̄. A long prompt step catches its start's clump whole, a decode step shorter than D
    misses it: prompt steps follow prompt steps more often than Poisson(α) says.

    Steps all of one length, no delay: Poisson(α) itself (α = 0.5: 0.6065, 0.3033, 0.0902 as poisson_pmf).

    >>> [round(x, 4) for x in step_chain_pmf(step_s=np.array([1.0, 1.0, 1.0]), mean=0.5).tolist()]
    [0.6065, 0.3033, 0.0902]
    """
    T = np.asarray(step_s, dtype=float)
    a = np.asarray(mean, dtype=float)
    k = T.shape[0]
    pi = poisson_pmf(mean=a, count=k)
    for _ in range(iterations):
        t_bar = np.maximum((pi * T).sum(axis=0), 1e-300)
        if delay_lo_s is None:
            c = T / t_bar
        else:
            c = clumps_caught(step_s=T, mean_step_s=t_bar, delay_lo_s=delay_lo_s, delay_hi_s=delay_hi_s)
        c = c / np.maximum((pi * c).sum(axis=0), 1e-300)
        pi = sum(pi[m] * poisson_pmf(mean=a * c[m], count=k) for m in range(k))
    return pi


def clumps_caught(*, step_s, mean_step_s, delay_lo_s, delay_hi_s):
    """Clumps of completions whose requests land in a step of length T (``step_s``) that follows
    steps of mean length T_b (``mean_step_s``), each request D after its step end, D uniform on
    [``delay_lo_s``, ``delay_hi_s``]: the end at the step's own start when D < T, and the ends in
    the window min(D, T) before it, one per T_b: c = P(D < T) + E[min(D, T)]/T_b
    (:func:`uniform_below`, :func:`uniform_min_mean`; :func:`step_chain_pmf` and
    :mod:`calc.traffic.chunk_queue` scale it so that every clump lands in one step).

    D uniform on [0, 100 ms], a 150 ms step after 20 ms steps: 1 + 50/20 = 3.5; a 20 ms step:
    0.2 + (20 − 2)/20 = 1.1.

    >>> round(float(clumps_caught(step_s=0.15, mean_step_s=0.02, delay_lo_s=0.0, delay_hi_s=0.1)), 3)
    3.5
    >>> round(float(clumps_caught(step_s=0.02, mean_step_s=0.02, delay_lo_s=0.0, delay_hi_s=0.1)), 3)
    1.1
    """
    lo, hi = np.asarray(delay_lo_s, dtype=float), np.asarray(delay_hi_s, dtype=float)
    before = uniform_min_mean(low=lo, high=hi, level=step_s)  # E[min(D, T)]
    return uniform_below(low=lo, high=hi, level=step_s) + before / mean_step_s


def _pick(T, n):
    """T_n for an array of prompt counts n (capped at the last one counted)."""
    idx = np.minimum(np.asarray(n), T.shape[0] - 1).astype(int)
    if idx.ndim == 0:
        return T[int(idx)]
    shape = np.broadcast_shapes(idx.shape, T.shape[1:])
    return np.take_along_axis(np.broadcast_to(T, T.shape[:1] + shape), np.broadcast_to(idx, shape)[None], axis=0)[0]


def _train(size, *, head_wait, T, t_api, outsiders=0.0):
    """[(engine wait, prompts in its own step)] of each member j = 0 … size − 1 of a train (member
    j reaches the engine at j·t_api; the head, j = 0, at 0 meets a step in flight that ends at
    ``head_wait``). Steps follow one another: each carries the members that arrived while the one
    before it ran (T_c for c of them) or, none arriving, is a decode step T_0; a member joins the
    first step that starts at or after its arrival. The head's step also carries ``outsiders``
    prompts of other trains that arrived during the step in flight."""
    arrive = [j * t_api for j in range(size)]
    start = np.asarray(head_wait, dtype=float)
    edge = np.full(np.shape(start), -np.inf)  # members arriving after this joined a later step
    out = [None] * size
    extra = outsiders
    for _ in range(2 * size + 1):  # at most one decode step between members: size member steps, gaps
        joins = [(a > edge) & (a <= start) for a in arrive]
        c = sum(x.astype(float) for x in joins) + extra
        extra = 0.0
        for j in range(size):
            if out[j] is None:
                out[j] = (np.where(joins[j], start - arrive[j], np.nan), np.where(joins[j], c, np.nan))
            else:
                w, n = out[j]
                out[j] = (np.where(joins[j], start - arrive[j], w), np.where(joins[j], c, n))
        edge, start = start, start + np.where(c > 0, _at(T, np.maximum(c, 1.0)), T[0])
    return [(np.nan_to_num(w), np.maximum(np.nan_to_num(n), 1.0)) for w, n in out]


def spill_share(*, prompts, fit):
    """Share of the requests of a step that N = ``prompts`` prompts compete for but whose room
    holds only ``fit`` of them (room / I) that finish in the NEXT step: first come first served,
    a request is equally likely at any of the N places, and the last N − fit (the fit-th one's
    rest as a partial chunk) wait a step: max(N − fit, 0)/N.

    Five prompts, room for 3.69: (5 − 3.69)/5 = 0.262.

    >>> round(float(spill_share(prompts=5, fit=3.69)), 3)
    0.262
    """
    n = np.maximum(np.asarray(prompts, dtype=float), 1.0)
    return np.clip((n - np.asarray(fit, dtype=float)) / n, 0.0, 1.0)


def _at(T, x):
    """T at a fractional prompt count x (linear between the counted ones, the last one beyond)."""
    x = np.clip(np.asarray(x, dtype=float), 0.0, T.shape[0] - 1.0)
    lo = np.floor(x)
    if x.ndim == 0:  # one count for every element: plain indexing
        i = int(lo)
        return T[i] + (x - lo) * (T[min(i + 1, T.shape[0] - 1)] - T[i])
    t_lo = _pick(T, lo)
    return t_lo + (x - lo) * (_pick(T, np.minimum(lo + 1.0, T.shape[0] - 1.0)) - t_lo)


def uniform_excess_mean(*, low, high, level):
    """E[(D − c)⁺] of D uniform on [``low``, ``high``] above the ``level`` c:
    ((high − c)⁺² − (low − c)⁺²) / (2·(high − low)); high = low is a point, (low − c)⁺.

    D uniform on [0, 100 ms], c = 50 ms: (50² − 0)/(2·100) = 12.5 ms (half the time 25 ms above).

    >>> round(float(uniform_excess_mean(low=0.0, high=0.1, level=0.05)), 4)
    0.0125
    """
    lo, hi, c = (np.asarray(x, dtype=float) for x in (low, high, level))
    w = hi - lo
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = (np.maximum(hi - c, 0.0) ** 2 - np.maximum(lo - c, 0.0) ** 2) / (2.0 * w)
    return np.where(w > 0, spread, np.maximum(lo - c, 0.0))


def uniform_min_mean(*, low, high, level):
    """E[min(D, c)] of D uniform on [``low``, ``high``]: E[D] − E[(D − c)⁺] (:func:`uniform_excess_mean`).

    D uniform on [0, 100 ms], c = 50 ms: 50 − 12.5 = 37.5 ms.

    >>> round(float(uniform_min_mean(low=0.0, high=0.1, level=0.05)), 4)
    0.0375
    """
    return 0.5 * (np.asarray(low, dtype=float) + np.asarray(high, dtype=float)) - uniform_excess_mean(
        low=low, high=high, level=level)


def uniform_below(*, low, high, level):
    """P(D < c) of D uniform on [``low``, ``high``]: clip((c − low)/(high − low), 0, 1) (a step at
    c = low when high = low).

    >>> round(float(uniform_below(low=0.0, high=0.1, level=0.03)), 3)
    0.3
    """
    lo, hi, c = (np.asarray(x, dtype=float) for x in (low, high, level))
    w = hi - lo
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(w > 0, np.clip((c - lo) / w, 0.0, 1.0), (c > lo).astype(float))


def delay_half_width_s(*, delay_s):
    """Half-width h of the spread of the delay D from a client's finish (a step end) to its request
    at the engine, D uniform on [δ − h, δ + h]: h = δ (``delay_s`` δ = t_api + t_req), D uniform on
    [0, 2δ].

    Why a spread: a served engine's step ends are not phase-locked to its clients. δ is the mean of
    a path of software latencies (the stream's last chunk, the client, HTTP, the API server's
    tokenizer and event loop, the hand-off to the engine: Efficiency.request_overhead_s and
    api_server_request_s are means), so a request lands at a phase of the step grid known only
    through δ. Why this width: with steps of one length T_0 (the decode steps the jump is made of),
    a request D after a step end meets the step that ends at the first multiple of T_0 above D:
    wait(T_0) = T_0·E[⌈D/T_0⌉] − δ. Known exactly (h = 0) it jumps up by a whole step each time T_0
    falls through δ/k (a faster engine, a slower first token). D uniform on [δ − h, δ + h] with
    T_0 in the window: wait = T_0·(1 + P(D > T_0)) − δ, slope 1 + (δ + h − 2·T_0)/(2h), which
    at the window's top T_0 = δ + h is (h − δ)/(2h): the wait never rises as the steps shorten
    only for h ≥ δ, and D ≥ 0 allows no more than h = δ. With D uniform on [0, 2δ]
    (x = 2δ/T_0, m = ⌊x⌋): wait + δ = 2δ·(m + 1)·(x − m/2)/x², whose x-derivative has the sign
    of x·(m − x) ≤ 0: monotone in T_0 at every T_0 (tests/test_arrival_trains.py).

    >>> round(float(delay_half_width_s(delay_s=0.05)), 3)
    0.05
    """
    return np.asarray(delay_s, dtype=float)


def step_in_flight(*, step_s, prompt_pmf, delay_s=None, delay_half_s=0.0):
    """The step a request meets in flight, as (first, r_lo, r_hi, later, r_later) per prompt count
    n of that step (arrays like ``step_s``, T_n on the leading axis, ``prompt_pmf`` P(n) beside it):
    with probability ``first[n]`` its rest is uniform on [r_lo[n], r_hi[n]]; with ``later[n]`` it is
    uniform on [r_later[n], T_n].

    ``delay_s`` None: an arrival at a time unrelated to the steps meets them in proportion to their
    length, P(n)·T_n / T̄ (T̄ = Σ P(j)·T_j), uniform within (later only, r_later = 0).

    ``delay_s`` δ: a closed-loop client sends its request when its last one finished, which is at
    a step's end, and it reaches the engine D later, D uniform on [δ − h, δ + h] (h =
    ``delay_half_s``, :func:`delay_half_width_s`; cut at 0). A step starts at that end: if it
    outlasts D, it is the one met, with its rest T_n − D: first[n] = P(n)·P(D < T_n), the rest
    uniform on [(T_n − δ − h)⁺, T_n − max(δ − h, 0)]. Otherwise (the rest of the probability) the
    step met starts later, no sooner than the shortest step T_0 after the end, and within the last
    T_n before D: over a window of min(T_n, (D − T_0)⁺), whose mean over D,
    w_n = E[(D − T_0)⁺] − E[(D − T_0 − T_n)⁺] (:func:`uniform_excess_mean`), weighs the kinds,
    P(n)·w_n, and whose mean where D > T_0, w_n / P(D > T_0), is the window of the rest.
    D ≫ T_n is the length-biased case; D < T_0 the first step. h = 0 is a delay known exactly, which
    jumps at δ = T_0 (a request that just misses the decode step started at its finish waits a
    whole step more); h > 0 spreads the jump over [T_0 − h, T_0 + h].

    Two kinds of step, a 10 ms decode (P = 0.9) and a 100 ms prompt step (P = 0.1), δ = 50 ms, h = 0:
    first: 0.1 (only the prompt step outlasts δ), rest 50 ms; later, 0.9 of the time: windows
    10 and 40 ms, weights 0.9 · 10 = 9 and 0.1 · 40 = 4: 0.9 · 9/13 = 0.623 and 0.9 · 4/13 = 0.277.

    >>> f, lo, hi, l, rl = step_in_flight(step_s=np.array([0.01, 0.1]), prompt_pmf=np.array([0.9, 0.1]), delay_s=0.05)
    >>> [round(x, 3) for x in f.tolist()], [round(x, 3) for x in l.tolist()], [round(x, 3) for x in hi.tolist()]
    ([0.0, 0.1], [0.623, 0.277], [0.0, 0.05])

    The same with h = 20 ms (D uniform on [30, 70] ms): the prompt step outlasts all of it (first
    0.1, rest uniform on [30, 70] ms); the decode step never. E[(D − 10 ms)⁺] = 40 ms;
    E[(D − 20 ms)⁺] = 30 ms, E[(D − 110 ms)⁺] = 0: windows 10 and 40 ms as before.

    >>> f, lo, hi, l, rl = step_in_flight(step_s=np.array([0.01, 0.1]), prompt_pmf=np.array([0.9, 0.1]),
    ...                                   delay_s=0.05, delay_half_s=0.02)
    >>> [round(x, 3) for x in f.tolist()], [round(x, 3) for x in l.tolist()], [round(x, 3) for x in lo.tolist()]
    ([0.0, 0.1], [0.623, 0.277], [0.0, 0.03])
    """
    T = np.asarray(step_s, dtype=float)
    p = np.asarray(prompt_pmf, dtype=float)
    if delay_s is None:
        z = np.zeros_like(p * T)
        return z, z, z, p * T / np.maximum((p * T).sum(axis=0), 1e-300), z
    d = np.asarray(delay_s, dtype=float)
    h = np.asarray(delay_half_s, dtype=float)
    lo, hi = np.maximum(d - h, 0.0), d + h
    first = p * uniform_below(low=lo, high=hi, level=T)
    window = uniform_excess_mean(low=lo, high=hi, level=T[0]) - uniform_excess_mean(low=lo, high=hi, level=T[0] + T)
    share = p * window / np.maximum((p * window).sum(axis=0), 1e-300)
    later = np.clip(1.0 - first.sum(axis=0), 0.0, 1.0) * share
    past = 1.0 - uniform_below(low=lo, high=hi, level=T[0])  # P(D > T_0)
    with np.errstate(divide="ignore", invalid="ignore"):
        w_past = np.where(past > 0, window / past, 0.0)
    return first, np.maximum(T - hi, 0.0), np.maximum(T - lo, 0.0), later, T - np.clip(w_past, 0.0, T)


def train_ttft_s(*, step_s, clump, fixed_s, api_s, q, fit=np.inf, delay_s=None, delay_half_s=None, input_cv=0.0):
    """(mean, q-quantile) of TTFT in a closed loop whose prompts fit one step (module docstring).

    ``step_s(n)``: a step with n ≥ 1 prompts beside the decodes (broadcasting array); ``step_s(0)``
    the decode step. ``clump`` α: completions (= prompts) per step of the OTHER clients (each
    clump here is of others: the step in flight's, the outsiders', the own clump's mates; in a
    closed loop the R − 1 sequences beside the request's own, the caller's). ``fixed_s``: t_api + t_req.
    ``api_s``: t_api, the spacing of a train. ``fit``: prompts the room of one step holds
    (room / I; ``step_s`` is the caller's to cap there): of an own step of N > fit prompts the
    share :func:`spill_share` finishes in the next step, which carries the N − fit spilled and the
    α that arrived meanwhile (T at N − fit + α). ``delay_s``: from a client's last finish to its
    request at the engine (t_api + t_req), the step in flight :func:`step_in_flight` (None: length-biased),
    spread uniformly ± ``delay_half_s`` (:func:`delay_half_width_s`).
    ``input_cv``: the prompts' lengths vary (lognormal CV): the step in flight and the other trains'
    prompts in the head's step count units of u = 1 + cv² mean prompts, Poisson(α/u) of them (the
    tokens' compound Poisson with its mean and variance); a request's own length is the caller's.

    Hand-worked, α → 0 (prompts rare): the step in flight is a decode step, T_0 = 10 ms, waited
    U·T_0; the own step alone, T_1 = 10 + 50 = 60 ms; fixed 50 ms. Mean 50 + 10/2 + 60 = 115 ms,
    P95 50 + 0.95 · 10 + 60 = 119.5 ms.

    >>> m, p = train_ttft_s(step_s=lambda n: 0.01 + 0.05 * n, clump=1e-9, fixed_s=0.05, api_s=0.02, q=0.95)
    >>> round(float(m), 4), round(float(p), 4)
    (0.115, 0.1195)
    """
    a = np.maximum(np.asarray(clump, dtype=float), 1e-12)
    t_api = np.asarray(api_s, dtype=float)
    steps = [np.asarray(step_s(n), dtype=float) for n in range(MAX_PROMPTS + 1)]  # each priced once
    T = np.stack([np.broadcast_to(x, np.broadcast_shapes(a.shape, x.shape)) for x in steps])
    # the prompts of other clients' steps vary in length: their tokens, a compound Poisson, as a
    # Poisson count of u = 1 + cv² mean prompts each (same mean and variance of the tokens)
    u = 1.0 + np.asarray(input_cv, dtype=float) ** 2
    T_in = np.stack([_at(T, n * u) for n in range(MAX_PROMPTS + 1)])
    if delay_s is not None and delay_half_s is None:
        delay_half_s = delay_half_width_s(delay_s=delay_s)
    if delay_s is not None:  # D uniform on [lo, hi]: the delay a request reaches the engine after its finish
        d_lo = np.maximum(np.asarray(delay_s, dtype=float) - delay_half_s, 0.0)
        d_hi = np.asarray(delay_s, dtype=float) + delay_half_s
    # prompt units of the step in flight: a step's prompts depend on the step before it (step_chain_pmf)
    p_n = step_chain_pmf(step_s=T_in, mean=a / u, delay_lo_s=None if delay_s is None else d_lo,
                         delay_hi_s=None if delay_s is None else d_hi)
    first, r_lo, r_hi, later, r_later = step_in_flight(step_s=T_in, prompt_pmf=p_n, delay_s=delay_s,
                                                       delay_half_s=delay_half_s)
    # the own clump: N ~ Poisson(α) completions at one step end, and a request is its i-th member
    # (i = 0 the head) with probability P(N)·[N ≥ i + 1]/α (each clump has one head, one second, …)
    p_size = poisson_pmf(mean=a, count=MAX_PROMPTS + 1)
    # The head's situations, one entry each (the kind n of the step in flight, its piece, the bin
    # of the head's wait, the outsiders o), stacked on a leading axis: the trains below are then
    # worked out once per train size for all of them (0.15 s → 10 ms of CPU per call; the same
    # pieces, summed in another order).
    ent_w, ent_r, ent_h, ent_o = [], [], [], []
    t_bar = np.maximum((p_n * T_in).sum(axis=0), 1e-300)
    for n in range(MAX_PROMPTS + 1):
        # the head's wait in the step in flight: uniform on [r_later, T_n] (in R_BINS bins), or the
        # rest T_n − D of the first step after its last finish, uniform on [r_lo, r_hi] (FIRST_BINS
        # bins). The other trains that reach the engine during the step in flight come from the
        # step ends D before it, about every T̄: Poisson(α·E[min(T_n, D)]/T̄) outsiders in the
        # head's step (δ = ∞: α·T_n/T̄); in the first step after the head's own step end, from the
        # ends D before that one, after the step that ended there (at least T_0 long):
        # Poisson(α·E[(D − T_0)⁺ | D < T_n]/T̄); prompt units of u. A later step in flight also
        # started at a step end, one for sure, not at a rate: its clump, Poisson(α·P(D < T_n)) more
        if delay_s is None:
            window = T_in[n]
        else:
            window = uniform_min_mean(low=d_lo, high=d_hi, level=T_in[n])
        mu_later = a / u * window / t_bar
        if delay_s is not None:  # the end at the start of a later step in flight is a step
            # end for sure: its clump lands in that step when D < T_n (step_chain_pmf)
            mu_later = mu_later + a / u * uniform_below(low=d_lo, high=d_hi, level=T_in[n])
        pieces = [(later[n], r_later[n], T_in[n] - r_later[n], R_BINS, mu_later)]
        if delay_s is not None:
            past = uniform_excess_mean(low=d_lo, high=np.clip(T_in[n], d_lo, d_hi), level=T[0])
            nb = FIRST_BINS if np.any(r_hi[n] > r_lo[n]) else 1  # a delay known exactly: one value
            pieces.append((first[n], r_lo[n], r_hi[n] - r_lo[n], nb, a / u * past / t_bar))
        for wr, r0, width, nb, mu in pieces:
            if not np.any(wr > NEGLIGIBLE):
                continue
            p_o = poisson_pmf(mean=mu, count=MAX_OUTSIDERS + 1)
            # bins b of the head's wait (within a bin of width width/nb) × outsiders o, on two leading axes
            sh = np.broadcast_shapes(np.shape(wr), np.shape(r0), np.shape(width), p_o.shape[1:], np.shape(u))
            one = (1,) * len(sh)
            b = ((np.arange(nb) + 0.5) / nb).reshape((nb, 1) + one)
            o = np.arange(p_o.shape[0], dtype=float).reshape((1, -1) + one)
            zero = np.zeros((nb, p_o.shape[0]) + sh)
            ent_w.append(zero + wr / nb * np.broadcast_to(p_o, p_o.shape[:1] + sh)[None])
            ent_r.append(zero + r0 + b * width)
            ent_h.append(zero + width / nb)
            ent_o.append(zero + o * u)
    shape = np.broadcast_shapes(np.shape(a), T.shape[1:], *(np.shape(x)[2:] for x in ent_w + ent_r + ent_h + ent_o))
    ent_w, ent_r, ent_h, ent_o = (np.concatenate([np.broadcast_to(x, x.shape[:2] + shape).reshape((-1,) + shape)
                                                  for x in xs]) for xs in (ent_w, ent_r, ent_h, ent_o))
    spread_axes = tuple(range(1, ent_w.ndim))
    Te = T[:, None]  # the step lengths beside the entries' axis
    wts, los, spans = [], [], []

    def add(weight, lo, span, prompts):
        """One piece per entry, split where the own step of ``prompts`` prompts spills into the next step."""
        p = spill_share(prompts=prompts, fit=fit)
        wts.extend([weight * (1.0 - p), weight * p])
        los.extend([lo, lo + _at(Te, np.maximum(prompts - fit, 0.0) + a)])
        spans.extend([span, span])

    for size in range(1, MAX_PROMPTS + 1):
        pw = ent_w * p_size[size] / a
        keep = np.any(pw > NEGLIGIBLE, axis=spread_axes)  # a share of the requests nothing shows: left out
        if not np.any(keep):
            continue
        pw, h = pw[keep], ent_h[keep]
        for i, (wait, mates) in enumerate(_train(size, head_wait=ent_r[keep], T=Te, t_api=t_api, outsiders=ent_o[keep])):
            add(pw, fixed_s + i * t_api + wait + _at(Te, mates) - h / 2.0, h, mates)
    rows = [np.broadcast_shapes(np.shape(w), np.shape(lo), np.shape(sp)) for w, lo, sp in zip(wts, los, spans)]
    W = np.concatenate([np.broadcast_to(x, r) for x, r in zip(wts, rows)])
    L = np.concatenate([np.broadcast_to(x, r) for x, r in zip(los, rows)])
    S = np.maximum(np.concatenate([np.broadcast_to(x, r) for x, r in zip(spans, rows)]), 1e-12)
    some = np.any(W > 0.0, axis=tuple(range(1, W.ndim)))  # no spill (fit = ∞): half the pieces weigh nothing
    W, L, S = W[some], L[some], S[some]
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
