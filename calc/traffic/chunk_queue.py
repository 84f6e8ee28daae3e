"""TTFT of a closed loop whose prompts span several chunked-prefill steps (k = ⌈I / room⌉ > 1):
the prompts queue for the token budget, one prompt's chunks after another's.

Mechanism (vLLM V1's scheduler, :mod:`calc.traffic.simulator`): a step holds the decodes first,
then prompt tokens of the waiting queue, first come first served, up to the room r = budget −
decodes. A prompt of I > r tokens runs k − 1 FULL steps (T_full: r prompt tokens beside the
decodes) and a last step with the rest I_last = I − (k − 1)·r. If another prompt waits by then,
its first chunk fills that last step (a full step again, T_full); else the step is short
(T_last). A prompt that arrives while another's chunks run waits for them: the budget is a
single server of prompts whose service, back to back, is S = s·T_full (s = I / r steps of room).

Arrivals are not Poisson in time. A client sends its request when its last one finished, at a
step END, and it reaches the engine D later (D uniform on [0, 2δ], δ = t_api + t_req:
:func:`calc.traffic.arrival_trains.delay_half_width_s`); completions come α = X·T̄ per step,
whatever the step's length. A step of length T, as in :func:`calc.traffic.arrival_trains.step_chain_pmf`,
catches the requests of c(T, T_b) = P(D < T) + E[min(D, T)] / T_b clumps: its own start's, when
D < T, and those of the ends in the window D before its start, one per T_b (the mean step before
it). So a long prefill step does not collect arrivals in proportion to its length:

  * a busy period's FIRST full step follows decode steps (the budget was idle): c_first = c(T_full, T_0),
    the ends of the short steps in the window D before it (several clumps when D spans several of them);
  * a full step in a run of them follows a full step: c_next = c(T_full, T_full), about one clump;
  * every clump lands in one step: c̄ = Σ π·c over the kinds of step is one clump a step, so a step
    of kind x brings α·(R − 1)/R · c_x / c̄ arrivals (π: full steps α·(k − 1), of which α·(1 − ρ)
    open a busy period, last steps α, decode steps the rest, c(T_last, T̄) and c(T_0, T̄); (R − 1)/R:
    the clumps are of the other clients, the arrival theorem as calc.traffic.queueing.closed_loop_ttft).

So the budget's queue is one with an exceptional first service (Welch): a prompt served inside a busy
period brings ρ_b = α·(R − 1)/R · s·c_next / c̄ arrivals; the prompt that opens one brings e =
α·(R − 1)/R · (c_first − c_next) / c̄ more, caught by its first step. A busy period then serves
(1 + e)/(1 − ρ_b) prompts and the share of arrivals that find the budget busy (the share of prompts
whose last step another's first chunk fills, too) is ρ = (ρ_b + e)/(1 + e); ρ moves c̄ (the full steps
that open a busy period), so a few passes from ρ = 0 (``BUSY_PASSES``). The mean wait, by the work an
arrival finds (the busy period's time-average work, PASTA in steps; the extras wait the opener's whole
service and, Poisson, half of each other's):

  W = g·ρ_b·S / (2·(1 − ρ_b)) + S·e·(1 + e/2) / (1 + e)

Pollaczek-Khinchine's at the busy load (deterministic service S = s·T_full; spread prompts: the
caller's g carries 1 + c_s²) times the finite-source factor g ≤ 1 of :func:`finite_source_factor`
(only R clients can queue, and a queued one does not decode, so does not come back: near the budget's
capacity the queue is held short; the caller's, 1 for an unbounded queue), plus the extras' part.
With e = 0 it is P-K's. An arrival to an idle budget waits the step in flight, w_idle (the caller's:
a decode step's rest).

  TTFT (engine part) = (1 − ρ)·w_idle + W + (k − 1)·T_full + ρ·T_full + (1 − ρ)·T_last

and a share π_p = α·((1 − ρ)·k + ρ·s) of the steps carries prompt tokens (k steps alone, s
back to back). The decodes beside the chunks, and so T_full, T_last and the room, are the
caller's (:func:`calc.timing.serving._chunk_queue_ttft`: the clients waiting here do not decode).

Measured in the simulator (Qwen2.5-7B A100, 2048 in / 128 out, C = 32, fixed prompts, 6,000 requests):
a full step after decode steps catches 4.0 times the mean step's arrivals, a full step after a full
one 0.91, a decode step 0.71; the share of arrivals that found a prompt in prefill 0.59 (this ρ: 0.63; the older form 0.60).
P-K at the share ρ (the older form, every prompt's first step taken as c(T_full, T̄)) read the queue as
if every service opened a busy period: +10 / +17 % at C = 64 / 80 of the Llama-3.1-8B H100 case below
(budget 1024, 2500 in), where most services are inside one.
Checked against the simulator (``bench/sim_vs_analytic.py --chunks``), long runs of 14 closed
loops with lognormal output lengths and no preemption (Llama-2-7B A100 2048 and 3000 in,
Llama-3.1-8B A100 6000 in and H100 at budget 1024 with 2500 in, Qwen2.5-7B L40S 4000 in; k = 2 and
3, C = 4 … 64; 30·C requests, the first 10·C dropped): mean TTFT median 1.6 %, max 9.6 % (P-K at ρ:
5.1 %, 10.2 %; the older k chunk steps with no wait: median 21 %, max 47 %, all low); near the budget's
capacity (``bench/budget_queue_near_capacity.py``, C = 48 … 95, outputs CV 0.5) −1.2 … +7.2 %, −11 % at
C = 95; the share of steps with prompt tokens 0.203 against 0.198 simulated (Llama-2-7B, C = 16), 0.38
against 0.35 (C = 32).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from calc.traffic.arrival_trains import clumps_caught, uniform_below, uniform_min_mean

BUSY_PASSES = 3  # of ρ in chunk_queue's core (the busy periods' first steps)
MAX_LOAD = 0.95  # ρ is capped here: past it the budget's queue grows without bound (the caller's regime flag)


def _norm_cdf(x):
    """Φ(x), elementwise (math.erfc; only the tables below call it, once each)."""
    return 0.5 * np.vectorize(math.erfc, otypes=[float])(-np.asarray(x, dtype=float) / math.sqrt(2.0))


def _inverse_mills_table(lo=-8.0, hi=30.0, n=3801):
    """(a, M(a), h(a) = M(a) − a, 1 − Φ(a)) over a ∈ [lo, hi]: M(a) = φ(a) / (1 − Φ(a)), the standard
    normal's inverse Mills ratio, rising from φ(a) (a → −∞) to a + 1/a (a → ∞); h(a) the mean of a
    standard normal cut below at a, less a (exact, math.erfc; for :func:`finite_source_factor`)."""
    a = np.linspace(lo, hi, n)
    upper = _norm_cdf(-a)  # 1 − Φ(a) without the cancellation in the tail
    m = np.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi) / upper
    return a, m, m - a, upper


_MILLS_A, _MILLS_M, _MILLS_H, _MILLS_UPPER = _inverse_mills_table()


THINK_WINDOW_POWER = 1.5  # τ = S / (1 − ρ)^1.5: the window over which the queue sees its arrivals' count (below)


@functools.cache
def _lognormal_difference_table():
    """(ln t grid, cv grid, ψ(t, cv)): ψ = E[min(|M₁ − M₂|, t)] / t for M₁, M₂ independent unit-mean
    lognormals of coefficient of variation cv (σ² = ln(1 + cv²)). With U, V = (X₁ ∓ X₂)/√2 the
    standard normals of the two logs, |M₁ − M₂| = A·sinh(b|U|), A = 2·exp(σV/√2 − σ²/2), b = σ/√2,
    and for each V the mean over U is exact: A·e^{b²/2}·([Φ(u*−b) − Φ(−b)] − [Φ(u*+b) − Φ(b)])
    + 2t·(1 − Φ(u*)), u* = asinh(t/A)/b; V by 40-node Gauss–Hermite. Built on first use (≈ 0.1 s)."""
    log_t = np.linspace(math.log(1e-3), math.log(1e3), 121)
    cvs = np.linspace(0.0, 3.0, 61)
    v, wv = np.polynomial.hermite_e.hermegauss(40)
    wv = wv / wv.sum()
    t = np.exp(log_t)[:, None, None]
    sig = np.sqrt(np.log1p(cvs * cvs))[None, :, None]
    sig = np.maximum(sig, 1e-9)
    b = sig / math.sqrt(2.0)
    A = 2.0 * np.exp(b * v[None, None, :] - sig * sig / 2.0)
    u = np.arcsinh(t / A) / b
    eb = np.exp(b * b / 2.0)
    inside = A * eb * ((_norm_cdf(u - b) - _norm_cdf(-b)) - (_norm_cdf(u + b) - _norm_cdf(b)))
    mean_min = np.sum(wv * (inside + 2.0 * t * (1.0 - _norm_cdf(u))), axis=-1)
    psi = mean_min / t[..., 0]
    psi[:, 0] = 0.0  # cv = 0: the same length every time
    return log_t, cvs, psi


def think_time_variance(*, load, think_steps, service_steps, varying_steps, cv):
    """κ: the variance of the arrivals a finite-source queue (:func:`finite_source_factor`) sees over its
    own time scale when the clients' think times are m·(lognormal of CV ``cv``) + a fixed part, over
    that with exponential think times of the same mean Z (``think_steps``), the diffusion's (κ = 1).

    Mechanism: a busy server releases its clients at regular intervals (deterministic service), and
    each comes back its think time later, so the count of returns in a window τ has variance
    λ·E[min(D, τ)], D = |Z₁ − Z₂| the difference of two think times (Σ over the releases of p(1 − p),
    p the chance a release returns inside the window; Σ p² = E[(τ − D)⁺]): Poisson (λτ) for τ ≪ D,
    bounded at λ·E[D] for τ ≫ D, where only the think time's spread is left (E[D] / 2Z̄ is its Gini
    coefficient: ½ for an exponential, 0 for fixed times). So

      κ = ψ(τ / m, cv) / φ_exp(τ / Z),   φ_exp(x) = (1 − e^{−x}) / x,   τ = S / (1 − ρ)^1.5

    (ψ from :func:`_lognormal_difference_table`; only the ``varying_steps`` m part varies, the
    fixed part, δ/T̄, cancels in D). The window: between a busy period's S/(1 − ρ) and the heavy-traffic
    relaxation time S/(1 − ρ)², the exponent 1.5 chosen on the repairman event simulation of
    tests/test_finite_source.py (27 cells, N = 8-120, ρ 0.57-0.99, lognormal CV 0.3 / 0.5 / 0.8:
    the simulated wait over the exponential think times' against κ's, rms 21 → 7 %, max 67 → 15 %;
    with the window S/(1 − ρ)² rms 15 %, max 43 %). Near the population's capacity (τ ≫ Z)
    κ → 2·Gini (N = 30, ρ 0.99, CV 0.5: 0.52; simulated 1.78 s, κ = 1 +50 %, here −1 %); far
    from it (τ ≪ Z) κ → 1: a few returns per window look Poisson whatever the think times.
    ``cv`` None, NaN or ≤ 0 (the spread unknown): κ = 1, exponential think times. Broadcasts.

    Repairman N = 90, r = Z/S = 93, ρ = 0.927, think times lognormal CV 0.5 (all varying):
    τ = S / 0.073^1.5 = 50.7·S, τ/Z = 0.544: φ_exp = 0.771, ψ = 0.653, κ = 0.85 (2 seeds of 60,000
    services: simulated wait 0.550 s; κ = 1 0.712 s, +30 %; here 0.624 s, +14 %).

    >>> round(float(think_time_variance(load=0.927, think_steps=93.2, service_steps=1.0, varying_steps=93.2, cv=0.5)), 2)
    0.85
    >>> float(think_time_variance(load=0.9, think_steps=50.0, service_steps=1.0, varying_steps=50.0, cv=None))
    1.0
    """
    rho = np.clip(np.asarray(load, dtype=float), 0.0, 0.999)
    z = np.asarray(think_steps, dtype=float)
    tau = np.asarray(service_steps, dtype=float) / (1.0 - rho) ** THINK_WINDOW_POWER
    if cv is None:
        return np.ones(np.broadcast_shapes(np.shape(rho), np.shape(z), np.shape(tau)))
    c = np.asarray(cv, dtype=float)
    log_t, cvs, psi_table = _lognormal_difference_table()
    with np.errstate(divide="ignore", invalid="ignore"):
        x_t = np.log(tau / np.asarray(varying_steps, dtype=float))
        x = np.clip(x_t, log_t[0], log_t[-1])  # past the end E[min(D, t)] = E[D]: ψ ∝ 1/t (× t_end / t below)
        # bilinear in (ln t, cv)
        i = np.clip(np.nan_to_num((x - log_t[0]) / (log_t[1] - log_t[0])), 0.0, len(log_t) - 1.000001)
        j = np.clip(np.nan_to_num(c, nan=0.0) / (cvs[1] - cvs[0]), 0.0, len(cvs) - 1.000001)
        i0, j0 = np.floor(i).astype(int), np.floor(j).astype(int)
        fi, fj = i - i0, j - j0
        psi = ((1 - fi) * (1 - fj) * psi_table[i0, j0] + fi * (1 - fj) * psi_table[i0 + 1, j0]
               + (1 - fi) * fj * psi_table[i0, j0 + 1] + fi * fj * psi_table[i0 + 1, j0 + 1])
        psi = psi * np.exp(np.minimum(x - x_t, 0.0))
        u = tau / z
        phi_exp = np.where(u > 1e-6, -np.expm1(-u) / u, 1.0)
        kappa = psi / phi_exp
    return np.where(np.isfinite(c) & (c > 0.0) & np.isfinite(kappa), kappa, 1.0)


def finite_source_factor(*, load, think_steps, service_steps, think_variance=1.0):
    """g = W(R clients) / W(unbounded): the mean wait of a single server fed by a finite population
    over Pollaczek-Khinchine's at the same load ρ (deterministic service S, Poisson-like arrivals
    of variance rate λ; ``think_steps`` Z: the time a client spends away from the queue between two
    services, ``service_steps`` S, any one unit). Diffusion (heavy traffic): with n queued the
    arrival rate is λ₀ − n/Z (a queued client does not decode, so does not come back), so n is a
    reflected Ornstein-Uhlenbeck process, a normal of variance σ² = κ·λ·Z/2 = κ·ρ·r/2 (r = Z/S) cut at
    0, where an unbounded queue is a reflected Brownian motion (exponential, mean ρ / (2(1 − ρ)):
    P-K's W/S). κ (``think_variance``, :func:`think_time_variance`) scales the arrivals' variance,
    as the squared CVs do in the heavy-traffic G/G/1 (Kingman: W = (c_a² + c_s²)/2 · ρS/(1 − ρ)); 1 for
    exponential think times. The pushing rate at 0 is the idle share: (1 − ρ)/S = (v/2)·f(0), v = κρ/S,
    f(0) = M(a)/σ. At the same mean arrival rate ρ/S the cut normal's mean is σ·h(a), its cut a (in σ)
    given by M(a) = y = (1 − ρ)·√(2r/(κρ)), so

      g = κ·h(a)·M(a) = κ·(M(a) − a)·y,   W = g·ρ·S / (2(1 − ρ)) = S·σ·h(a)

    (:func:`_inverse_mills_table`, interpolated; past its end g = κ·(1 − 1/y²)). Few clients away
    for long (y → ∞, r ≫ R): g → κ, Kingman's queue; near the population's capacity (ρ → 1 at
    finite r) g → 0 and W → S·σ·|a| ≈ S·(R − r), the clients beyond what the server serves.
    Broadcasts.

    At a = 0, y = M(0) = √(2/π) (ρ = 1/2, r = 2/π, κ = 1): g = M(0)² = 2/π; far below capacity (ρ = 0.1,
    r = 10, y = 12.7) g = 0.9940, 1 − 1/y² = 0.9938 (the next term is of 1/y⁴). With κ = 0.85
    (:func:`think_time_variance`'s example, ρ = 0.927, r = 93.2): y = 0.073·√(2·93.2/(0.85·0.927)) = 1.12,
    g = 0.62 (κ = 1: y = 1.04, g = 0.71); P-K's 1.022·S, so W = 0.632·S (κ = 1: 0.722·S).

    >>> round(float(finite_source_factor(load=0.5, think_steps=2.0 / math.pi, service_steps=1.0)), 4), round(2 / math.pi, 4)
    (0.6366, 0.6366)
    >>> round(float(finite_source_factor(load=0.1, think_steps=10.0, service_steps=1.0)), 4)
    0.994
    >>> round(float(finite_source_factor(load=0.927, think_steps=93.2, service_steps=1.0, think_variance=0.85)), 2)
    0.62
    """
    rho = np.asarray(load, dtype=float)
    kappa = np.asarray(think_variance, dtype=float)
    r = np.asarray(think_steps, dtype=float) / np.asarray(service_steps, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = (1.0 - rho) * np.sqrt(2.0 * r / (rho * kappa))
        far = 1.0 - 1.0 / (y * y)
    g = np.interp(y, _MILLS_M, _MILLS_H) * y
    return kappa * np.clip(np.where(y > _MILLS_M[-1], far, np.where(np.isnan(y), 1.0, g)), 0.0, 1.0)


def finite_source_wait_quantile_s(*, mean_s, load, think_steps, service_steps, q, think_variance=1.0):
    """The q-quantile of the wait of :func:`finite_source_factor`'s queue, mean ``mean_s`` W̄: a share ρ
    waits, the work ahead of them that of a normal cut at a (the queue's reflected Ornstein-Uhlenbeck
    law, M(a) = y; its variance κ·ρ·r/2, ``think_variance`` κ), scaled to the mean: P(W > t) = ρ·(1 − Φ(a + t·ρ·h(a)/W̄)) / (1 − Φ(a)), so

      w_q = W̄·(v − a) / (ρ·h(a)),   1 − Φ(v) = (1 − q)·(1 − Φ(a)) / ρ   (0 where ρ ≤ 1 − q).

    Far from the population's capacity (a → ∞) the cut normal's tail is exponential of rate a and
    w_q → (W̄/ρ)·ln(ρ / (1 − q)), :func:`calc.traffic.queueing.wait_quantile_s`'s (used past the
    table's end); near it the tail is a normal's, far thinner. Broadcasts.

    Far from capacity (ρ = 0.1, r = 10⁴, y = 402: past the table) a mean wait of 10 ms that 10 % see:
    P95 = 0.1 · ln(2) = 69 ms; at the cut a = 0 (ρ = 1/2, r = 2/π) the tail is a half normal's:
    1 − Φ(v) = 0.05, v = 1.645, w_95 = W̄·1.645/(0.5·√(2/π)) = 4.12·W̄.

    >>> round(float(finite_source_wait_quantile_s(mean_s=0.01, load=0.1, think_steps=1e4, service_steps=1.0, q=0.95)), 4)
    0.0693
    >>> round(float(finite_source_wait_quantile_s(mean_s=1.0, load=0.5, think_steps=2 / math.pi, service_steps=1.0, q=0.95)), 2)
    4.12
    """
    w = np.asarray(mean_s, dtype=float)
    rho = np.asarray(load, dtype=float)
    tail = 1.0 - np.asarray(q, dtype=float)
    r = np.asarray(think_steps, dtype=float) / np.asarray(service_steps, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = (1.0 - rho) * np.sqrt(2.0 * r / (rho * np.asarray(think_variance, dtype=float)))
        a = np.interp(y, _MILLS_M, _MILLS_A)
        h = np.interp(y, _MILLS_M, _MILLS_H)
        upper_a = np.interp(y, _MILLS_M, _MILLS_UPPER)
        # v from 1 − Φ(v) = target, on the same table (ln(1 − Φ) falls with a)
        target = np.log(np.clip(tail * upper_a / rho, 1e-300, 1.0))
        v = np.interp(-target, -np.log(_MILLS_UPPER), _MILLS_A)
        cut = w * np.maximum(v - a, 0.0) / (rho * h)
        expo = w / rho * np.log(rho / tail)
    ok = (rho > tail) & (w > 0)
    return np.where(ok, np.where(y > _MILLS_M[-1], expo, cut), 0.0)


def budget_wait_quantile_s(*, mean_s, load, busy_load, think_steps, service_steps, varying_steps, cv, q):
    """The q-quantile of the token budget's wait (:func:`chunk_queue_ttft_s`'s W̄, ``mean_s``, that a share
    ρ = ``load`` of the prompts see) when the budget's queue grows, while it is busy, at the load
    ρ_b (``busy_load``, ≤ ρ; :func:`chunk_queue`: the arrivals during a service inside a busy period,
    a run of full steps), where ρ also counts the arrivals that a busy period's FIRST step catches (the
    ends of the short steps before it, :func:`chunk_queue`'s e).

    Mechanism: a long wait is a long busy period, and a busy period grows at ρ_b; the clumps at its
    start add a bounded part, a few services, the same for a long wait as for a short one. So the
    wait of a waiting prompt is t₀ + V, V the wait of a waiting client of the finite-source queue
    at ρ_b (:func:`finite_source_wait_quantile_s`'s cut normal, κ_b and g_b at ρ_b: conditional
    mean c_b = g_b·S/(2(1 − ρ_b)), S the service), and t₀ = W̄/ρ − c_b the clumps' part of the
    conditional mean W̄/ρ; in the units of W̄, c_b = (W̄/ρ)·(g_b/(1 − ρ_b)) / (g/(1 − ρ)), g and κ at ρ
    as :func:`calc.timing.serving._chunk_queue_ttft` takes them. P(wait > t) = ρ·P(V > t − t₀):

      w_q = t₀ + v,   P(V > v) = (1 − q)/ρ   (:func:`finite_source_wait_quantile_s` at q' = 1 − (1 − q)·ρ_b/ρ)

    and 0 where ρ ≤ 1 − q. At ρ_b = ρ it is :func:`finite_source_wait_quantile_s` at ρ (t₀ = 0);
    ρ_b is taken at most ρ and c_b at most W̄/ρ. Heavy traffic (ρ_b → ρ → 1) both coincide; at
    moderate load the exponential of mean W̄/ρ decays at 2(1 − ρ)/S where the queue's own decay is
    the busy load's: Llama-3.1-8B H100, budget 1024, 2500 in / 256 out lognormal CV 0.5, C = 48:
    ρ = 0.64, ρ_b = α·s = 0.183·2.56·47/48 = 0.46; the simulated TTFT's tail (3 seeds of 960
    requests, P80 → P98) falls by e in 116 ms, an M/D/1's at ρ_b in 99 ms (ρ_b·(e^{γS} − 1) = γS,
    S = 139 ms), at ρ in 167 ms, the exponential of mean W̄/ρ in 188 ms; below, W̄ = 0.120 s of
    a mean TTFT 0.331 s: P95 0.331 + 0.382 − 0.120 = 0.593 s (simulated 0.597 s; the exponential's
    0.474: 0.685 s). Broadcasts (NaN ρ_b: the old form at ρ).

    >>> w = budget_wait_quantile_s(mean_s=0.12, load=0.642, busy_load=0.459, think_steps=257.4, service_steps=2.556,
    ...                            varying_steps=255.0, cv=0.5, q=0.95)
    >>> same = budget_wait_quantile_s(mean_s=0.12, load=0.642, busy_load=0.642, think_steps=257.4, service_steps=2.556,
    ...                               varying_steps=255.0, cv=0.5, q=0.95)
    >>> old = finite_source_wait_quantile_s(mean_s=0.12, load=0.642, think_steps=257.4, service_steps=2.556, q=0.95,
    ...     think_variance=think_time_variance(load=0.642, think_steps=257.4, service_steps=2.556, varying_steps=255.0, cv=0.5))
    >>> round(float(w), 3), bool(np.isclose(same, old)), round(float(old), 3)
    (0.382, True, 0.474)
    """
    w = np.asarray(mean_s, dtype=float)
    rho = np.asarray(load, dtype=float)
    rho_b = np.asarray(busy_load, dtype=float)
    rho_b = np.where(np.isfinite(rho_b), np.minimum(rho_b, rho), rho)
    tail = 1.0 - np.asarray(q, dtype=float)
    shape = dict(think_steps=think_steps, service_steps=service_steps)

    def at(x):  # κ, g and g/(1 − x) of the finite-source queue at load x
        kappa = think_time_variance(load=x, varying_steps=varying_steps, cv=cv, **shape)
        g = finite_source_factor(load=x, think_variance=kappa, **shape)
        return kappa, g / (1.0 - np.minimum(x, MAX_LOAD))

    _, per = at(rho)
    kappa_b, per_b = at(rho_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = w / rho  # W̄/ρ, the waiting prompts' mean wait
        cond_b = cond * np.minimum(np.where(per > 0.0, per_b / per, 1.0), 1.0)
        v = finite_source_wait_quantile_s(mean_s=cond_b * rho_b, load=rho_b, q=1.0 - tail * rho_b / rho,
                                          think_variance=kappa_b, **shape)
    return np.where((rho > tail) & (w > 0), np.nan_to_num(cond - cond_b) + v, 0.0)


def chunk_queue_ttft_s(*, decode_step_s, full_step_s, last_step_s, chunks, service_steps, rate_rps, others,
                       delay_s, idle_wait_s, wait_factor=1.0):
    """(engine TTFT, ρ, share of steps with prompt tokens, mean step T̄, mean wait W, busy load ρ_b) of a prompt of ``chunks`` k > 1
    chunked steps in a closed loop (module docstring). ``decode_step_s`` T_0, ``full_step_s`` T_full,
    ``last_step_s`` T_last (the rest alone beside the decodes); ``service_steps`` s = I / room;
    ``rate_rps`` X (requests/s of the whole loop); ``others`` (R − 1)/R; ``delay_s`` δ = t_api + t_req;
    ``idle_wait_s`` the wait for the step in flight when no prompt is queued; ``wait_factor`` g, the
    finite-source factor on P-K's wait (:func:`finite_source_factor`; 1: an unbounded queue). Broadcasts.

    Rare prompts (X → 0): no queue, the k − 1 full steps and the short last one, after the idle
    wait: 5 + 150 + 20 = 175 ms.

    >>> t, rho, share, t_bar, _, _ = chunk_queue_ttft_s(decode_step_s=0.02, full_step_s=0.15, last_step_s=0.02, chunks=2,
    ...                                           service_steps=1.01, rate_rps=1e-9, others=1.0, delay_s=0.05,
    ...                                           idle_wait_s=0.005)
    >>> round(float(t), 4), float(rho) < 1e-6
    (0.175, True)
    """
    return chunk_queue(decode_step_s=decode_step_s, full_step_s=full_step_s, last_step_s=last_step_s, chunks=chunks,
                       service_steps=service_steps, others=others, delay_s=delay_s, idle_wait_s=idle_wait_s,
                       wait_factor=wait_factor)(rate_rps)


def chunk_queue(*, decode_step_s, full_step_s, last_step_s, chunks, service_steps, others, delay_s, idle_wait_s,
                wait_factor=1.0, multi_chunk_share=1.0):
    """:func:`chunk_queue_ttft_s` as a function of the rate X alone, the parts that do not move
    with X computed once (a caller that solves for X evaluates it many times). Its ``per_step``
    takes instead the prompts per step α = X·T̄, with T̄ = T_0 + α·P_pf (the same loop, X = α / T̄:
    smooth in α where T̄ = T_0 / (1 − X·P_pf) is steep in X near the budget's capacity)."""
    T0, Tf, Tl = (np.asarray(x, dtype=float) for x in (decode_step_s, full_step_s, last_step_s))
    k, s = (np.asarray(x, dtype=float) for x in (chunks, service_steps))
    d_hi = 2.0 * np.asarray(delay_s, dtype=float)
    # T̄ = T_0 / (1 − X·P_pf): a prompt's steps take P_pf more than the k decode steps they replace
    p_pf = (k - 1.0) * Tf + Tl - k * T0
    # clumps_caught(T, T̄) = P(D < T) + E[min(D, T)]/T̄ for the three kinds of step, split at T̄
    below = [uniform_below(low=0.0, high=d_hi, level=T) for T in (Tf, Tl, T0)]
    window = [uniform_min_mean(low=0.0, high=d_hi, level=T) for T in (Tf, Tl, T0)]
    c_next = clumps_caught(step_s=Tf, mean_step_s=Tf, delay_lo_s=0.0, delay_hi_s=d_hi)
    share = np.asarray(others, dtype=float)
    service = s * Tf / 2.0 * np.asarray(wait_factor, dtype=float)  # P-K's S/2, times g
    idle = np.asarray(idle_wait_s, dtype=float)
    # the parts of ρ and the TTFT that do not move with X; over prompts of several lengths ``chunks`` is
    # the mean k and ``multi_chunk_share`` the share with k ≥ 2 (those open a busy period with a full step)
    first = np.asarray(multi_chunk_share, dtype=float)
    full_steps, idle_last = (k - 1.0) * Tf, idle + Tl  # the k − 1 full steps; idle wait + short last step
    (b_f, b_l, b_d), (w_f, w_l, w_d) = below, window

    consts = (k, s, share, service, idle_last, full_steps, Tf, T0, p_pf, b_f, w_f, b_l, w_l, b_d, w_d, c_next, first)

    def core(a, t_bar, k, s, share, service, idle_last, full_steps, Tf, T0, p_pf, b_f, w_f, b_l, w_l, b_d, w_d,
             c_next, first):  # at α = X·T̄ prompts per step and the mean step T̄
        p_full, p_last = np.clip(a * (k - 1.0), 0.0, 1.0), np.clip(a, 0.0, 1.0)
        inv = 1.0 / t_bar
        # a busy period's first full step follows decode steps (the budget was idle): it catches the ends of
        # the steps of length T_0 in the window D before it, c_first = P(D < T_full) + E[min(D, T_full)]/T_0
        c_first = b_f + w_f / T0
        c_l, c_d = b_l + w_l * inv, b_d + w_d * inv
        p_dec = np.maximum(1.0 - p_full - p_last, 0.0)
        rho = np.zeros(np.broadcast_shapes(np.shape(a), np.shape(c_first)))
        for _ in range(BUSY_PASSES):  # the full steps that open a busy period depend on ρ: a few passes from ρ = 0
            opening = np.minimum(a * (1.0 - rho) * first, p_full)
            c_bar = opening * c_first + (p_full - opening) * c_next + p_last * c_l + p_dec * c_d
            norm = a * share / np.maximum(c_bar, 1e-300)  # arrivals per clump caught, every clump in one step
            rho_b = np.clip(norm * s * c_next, 0.0, MAX_LOAD)
            extra = norm * np.maximum(c_first - c_next, 0.0)
            rho = np.clip((rho_b + extra) / (1.0 + extra), 0.0, MAX_LOAD)
        wait = rho_b * service / (1.0 - rho_b) + s * Tf * extra * (1.0 + 0.5 * extra) / (1.0 + extra)
        ttft = (1.0 - rho) * idle_last + wait + full_steps + rho * Tf
        return ttft, rho, np.clip(a * ((1.0 - rho) * k + rho * s), 0.0, 1.0), t_bar, wait, rho_b

    def at(rate_rps):
        X = np.asarray(rate_rps, dtype=float)
        t_bar = T0 / np.maximum(1.0 - X * p_pf, 1e-3)
        return core(X * t_bar, t_bar, *consts)

    def per_step(prompts_per_step, index=None, shape=None):
        """At α prompts per step (T̄ = T_0 + α·P_pf). With ``index`` (into the flattened ``shape``;
        ``...`` all of them) instead the function of α of those elements alone, their constants taken once."""
        if index is None:
            a = np.asarray(prompts_per_step, dtype=float)
            return core(a, T0 + a * p_pf, *consts)
        if index is ...:  # all of them, flattened
            c = [np.broadcast_to(x, shape).ravel() for x in consts]
        else:
            c = [np.broadcast_to(x, shape).ravel()[index] for x in consts]
        return lambda a: core(a, c[7] + a * c[8], *c)

    at.per_step = per_step
    at.extra_step_s = p_pf  # P_pf
    return at
