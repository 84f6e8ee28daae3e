"""Queueing models of the three traffic shapes a vLLM server sees, on the engine's own step time
(:func:`calc.timing.serving.decode_step`, :func:`calc.timing.serving.prefill_step`, i.e.
:class:`calc.timing.serving.EngineNumbers`): an open loop at an arrival rate λ (Poisson,
:func:`open_loop`), a closed loop of C clients (:func:`closed_loop_ttft`), a burst of N requests at
t = 0 (:func:`burst`). Chunked prefill (vLLM V1's default) is the modelled scheduler; every function
broadcasts. Checked against the request-level simulator (:mod:`calc.traffic.simulator`) by
``bench/sim_vs_analytic.py --shapes`` and tests/test_traffic_shapes.py.

Where a request's time to first token goes (every term a mechanism of the simulator):
  1. the API server, t_api of its time each (Efficiency.api_server_request_s), taken first come
     first served here: M/D/1 in an open loop, W_api = λ·t_api² / (2(1 − λ·t_api)); then t_req of
     latency, as the simulator takes requests that arrive spread out (only requests that arrive at
     one instant take turns there, Efficiency.api_server_final_share: :func:`burst`).
  2. the token budget, a queue of prompt tokens served room = budget − R per step. At full budget
     a token costs τ = T_full/room, so a prompt is a customer of service τ·I: M/G/1 in an open
     loop (Pollaczek–Khinchine, W_pf = λ·E[(τI)²] / (2(1 − λ·τ·I))), a finite-source queue in
     steps in a closed loop (clients come back per finished request, i.e. per step, not per
     second: :func:`finite_source_wait_s`); an arrival to an empty queue waits for the decode step
     in flight;
  3. its own prefill: k − 1 full chunks and the rest, in a last step that the prompts arriving
     behind it fill (:func:`own_prefill_s`); while prompts fit one step, at least the rest of the
     step in flight (T*/2, length-biased) and one step with the prompts that arrived during it;
  4. a free sequence slot, c = min(max_num_seqs, sequences the KV pool holds): the engine E2E as
     the service, waiting probability the diffusion's for the batch's peakedness z
     (:func:`peaked_wait_probability`; Hayward's Erlang C(c/z, a/z) was 2-5x the simulator's near
     the KV pool, bench/kv_edge_open_loop.py); in a closed loop
     the C − R clients beyond the batch wait (C − R)/X.
The decoding batch R solves R = λ·(O − 1)·T̄(R) with T̄ = T_dec(R)/(1 − ρ_p), ρ_p = λ·T_pf the share
of engine time the prompts' marginal cost takes; TPOT = T̄ + z·dT̄/dR + ΔT_cl, z = z₀/(1 − ε),
ε = λ·(O − 1)·dT̄/dR (a sequence decodes more often in crowded, slow steps); prompts come in clusters
of steps (:mod:`calc.traffic.prompt_clusters`: a long prompt step lets more prompts in for the next),
so the batch is more peaked than Poisson, z₀ = 1 + (D − 1)·θ, D = 1/(1 − ρ_p)², and the steps that
carry prompts carry larger batches, ΔT_cl = ρ_p²·T̄/((1 − ρ_p²)(1 − ρ_p(1 − β))·R). Percentiles: each random part (the waits
with the prompts behind, the own prompt's length, the API wait, the step in flight) at its own
quantile, combined as mean + √(Σ x⁺²) of the excesses x_i = q_i − mean_i, at the median
and below − √(Σ x⁻²) too (:func:`combined_excess_s`). A burst is three clocks (API server, token
budget, slots) per request, reduced over the N requests.

Where it is known to miss (``closed_form`` False, the simulator's regime): the batch reaching the
KV pool (vLLM preempts and recomputes), fixed-length closed loops of several clients (a
deterministic engine keeps them in an FCFS train, :func:`calc.timing.serving.fcfs_wave`), clients
queueing for the token budget. A burst of varied lengths just past the slots was +25 % without a flag
(bench/sim_vs_analytic.py --shapes; its full step priced as one prompt of `room` tokens and its
slots at the steady state's context): +8 % now. An open loop's TPOT near capacity with long
prompts was -14 % (Llama-3.1-70B TP 4 at 85 %; with EAGLE-3 -21 %) until the prompt clusters
(:mod:`calc.traffic.prompt_clusters`; in the simulator 60 against 53 sequences in the steps that
carry prompts, lag-1 autocorrelation of the step time 0.67 = ρ_p): -6 and -4 % now. With speculation the
open loop still prices a prompt beside plain decodes plus the decode step's speculative extra;
:func:`calc.timing.speculative.mixed_step_s` (one forward, verify rows beside the chunks, the
drafter over the prompt) brings Llama-3.1-8B EAGLE-3 at 85 % from -18 to -6 % TPOT but, inside
the batch's bisection, triples open_loop's time: not used there.

A closed loop whose prompts fit one step takes its TTFT from :mod:`calc.traffic.arrival_trains`:
requests finish in clumps at step ends and reach the engine as trains t_api apart; the parts of a
request's wait (a long step in flight, a full own step, a wait at the API server) come together,
so the mean and quantile are those of one mixture, not a sum of independent quantiles (which
read the P95 16-28 % low at C ≥ 32, bench/speculative_sim_vs_analytic.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from calc.timing.roofline import windowed_context_tokens
from calc.timing.serving import (EngineNumbers, closed_loop, decode_step, mean_decode_context_tokens, mean_over_prompts,
                                 prefill_step)
from calc.traffic.prompt_clusters import clustered_peakedness, prompt_cluster_tpot_s


def lognormal_moment(*, mean, cv, k):
    """E[X^k] of a lognormal of ``mean`` and coefficient of variation ``cv``:
    mean^k · (1 + cv²)^(k(k − 1)/2); cv = 0 is a fixed value.

    Mean 1000 tokens, CV 0.5: E[X²] = 1000² · 1.25 = 1.25e6.

    >>> float(lognormal_moment(mean=1000.0, cv=0.5, k=2))
    1250000.0
    """
    m = np.asarray(mean, dtype=float)
    return m ** k * (1.0 + np.asarray(cv, dtype=float) ** 2) ** (k * (k - 1) / 2.0)


def mg1_wait_s(*, rate_rps, service_s, service_m2_s2, service_m3_s3):
    """(mean, second moment) of the wait in an M/G/1 queue (first come first served):
    Pollaczek–Khinchine W = λ·E[S²] / (2(1 − ρ)) and Takács E[W²] = 2W² + λ·E[S³] / (3(1 − ρ)),
    ρ = λ·E[S]. ρ ≥ 1: inf.

    An API server taking 22 ms per request at 30 req/s (M/D/1, ρ = 0.66):
    W = 30 · 0.022² / (2 · 0.34) = 21.4 ms.

    >>> w, w2 = mg1_wait_s(rate_rps=30.0, service_s=0.022, service_m2_s2=0.022**2, service_m3_s3=0.022**3)
    >>> round(float(w) * 1e3, 1)
    21.4
    """
    lam = np.asarray(rate_rps, dtype=float)
    rho = lam * np.asarray(service_s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = lam * np.asarray(service_m2_s2, dtype=float) / (2.0 * (1.0 - rho))
        w2 = 2.0 * w ** 2 + lam * np.asarray(service_m3_s3, dtype=float) / (3.0 * (1.0 - rho))
    ok = rho < 1.0
    return np.where(ok, w, np.inf), np.where(ok, w2, np.inf)


def erlang_c(*, servers, offered_load):
    """Probability that an arrival waits in an M/M/c queue with c ``servers`` and offered load
    a = λ·E[S] (Erlang C), from the Erlang B recursion B_k = a·B_(k−1) / (k + a·B_(k−1)):
    C = B_c / (1 − (a/c)(1 − B_c)). a ≥ c: 1. Non-integer c is rounded down.

    c = 2, a = 1: B_2 = 0.2, C = 0.2 / (1 − 0.5 · 0.8) = 1/3.

    >>> round(float(erlang_c(servers=2, offered_load=1.0)), 4)
    0.3333
    """
    a = np.asarray(offered_load, dtype=float)
    c = np.floor(np.maximum(np.asarray(servers, dtype=float), 1.0))
    shape = np.broadcast_shapes(a.shape, c.shape)
    a, c = np.broadcast_to(a, shape), np.broadcast_to(c, shape)
    finite_c = np.where(np.isfinite(c), c, 1.0)
    b = np.ones(shape)
    for k in range(1, int(finite_c.max(initial=1.0)) + 1):  # the recursion, masked past each c
        b = np.where(k <= finite_c, a * b / (k + a * b), b)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = b / (1.0 - a / c * (1.0 - b))
    return np.where(np.isfinite(c) & (a < c), np.clip(out, 0.0, 1.0), np.where(np.isfinite(c), 1.0, 0.0))


def peaked_wait_probability(*, servers, offered_load, peakedness):
    """Share of arrivals that wait for one of c servers offered a = λ·E[S] by a batch of
    peakedness z = Var(N)/E[N] (N: busy servers were there infinitely many): the diffusion
    (Halfin–Whitt) limit with the peakedness in the square-root staffing (Whitt 1992,
    "Understanding the efficiency of multi-server service systems"),

        π = 1 / (1 + β·Φ(β)/φ(β)),   β = (c − a)/√(z·a);   a ≥ c: 1.

    Unlike Hayward's ErlangC(c/z, a/z), a Poisson stream of z-sized groups into ⌊c/z⌋ servers
    (bench/kv_edge_open_loop.py: 2-5x the simulator's share of arrivals that meet a full KV pool, as
    the batch's fluctuation is many sequences' common drift, not groups), it keeps c and the
    normal spread of the batch; an exact M/M/c (z = 1) needs a large c for it.

    c = 20, a = 10, z = 2.5: β = 10/5 = 2, Φ(2) = 0.97725, φ(2) = 0.05399, π = 1/(1 + 36.2) = 2.69 %
    (Hayward: ErlangC(8, 4) = 5.9 %).

    >>> round(float(peaked_wait_probability(servers=20, offered_load=10.0, peakedness=2.5)), 4)
    0.0269
    >>> round(float(erlang_c(servers=8, offered_load=4.0)), 3)
    0.059
    """
    c = np.asarray(servers, dtype=float)
    a = np.asarray(offered_load, dtype=float)
    z = np.asarray(peakedness, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        beta = (c - a) / np.sqrt(z * np.maximum(a, 1e-300))
        b = np.where(np.isfinite(beta) & (beta > 0), beta, 0.0)
        cdf = 0.5 * np.vectorize(math.erfc, otypes=[float])(-b / math.sqrt(2.0))
        ratio = b * cdf * math.sqrt(2.0 * math.pi) * np.exp(np.minimum(b * b / 2.0, 700.0))  # β·Φ(β)/φ(β)
        pi = 1.0 / (1.0 + ratio)
    return np.where(a >= c, 1.0, np.where(np.isfinite(beta), np.clip(pi, 0.0, 1.0), 0.0))


def normal_quantile(q):
    """z_q of the standard normal (scalar or array ``q`` in (0, 1)).

    >>> round(float(normal_quantile(0.95)), 4)
    1.6449
    """
    return np.vectorize(lambda p: NormalDist().inv_cdf(float(p)))(np.clip(np.asarray(q, dtype=float), 1e-12, 1 - 1e-12))


def wait_quantile_s(*, mean_s, p_wait, q):
    """The q-quantile of a queueing wait that is 0 with probability 1 − π and else exponential
    with mean W̄/π (the usual M/G/1 and M/M/c tail, P(W > t) = π·exp(−π·t/W̄)):
    w_q = (W̄/π)·ln(π/(1 − q)) where π > 1 − q, else 0.

    A wait of mean 0.1 s that half the requests see: P95 = 0.2 · ln(0.5/0.05) = 0.46 s.

    >>> round(float(wait_quantile_s(mean_s=0.1, p_wait=0.5, q=0.95)), 3)
    0.461
    """
    w = np.asarray(mean_s, dtype=float)
    pi = np.clip(np.asarray(p_wait, dtype=float), 0.0, 1.0)
    tail = 1.0 - np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = w / pi * np.log(pi / tail)
    return np.where((pi > tail) & (w > 0), x, 0.0)


def sum_wait_quantile_s(waits, q):
    """The q-quantile of W₁ + W₂, two independent queueing waits each 0 with probability 1 − πᵢ and
    else exponential of mean mᵢ = W̄ᵢ/πᵢ (:func:`wait_quantile_s`'s shape; ``waits``: one or two
    (W̄ᵢ, πᵢ) pairs). Its tail, with eᵢ = exp(−t/mᵢ),

        P(W₁ + W₂ > t) = π₁(1 − π₂)·e₁ + (1 − π₁)π₂·e₂ + π₁π₂·(m₁e₁ − m₂e₂)/(m₁ − m₂)

    (the last the sum of two exponentials; (1 + t/m)·e at m₁ = m₂), crosses 1 − q by bisection; 0
    where fewer than 1 − q wait at all. Unlike one mixture of mean W̄₁ + W̄₂ and probability
    1 − (1 − π₁)(1 − π₂), a rare long wait (a sequence slot near the KV pool's edge: 3 % of the requests,
    1.9 s each) is not spread over the frequent short ones (the token budget's: 47 %, 121 ms).

    Half wait 0.2 s on average beside nothing: :func:`wait_quantile_s`'s 0.461 s; and those two waits:

    >>> round(float(sum_wait_quantile_s([(0.1, 0.5), (0.0, 0.0)], 0.95)), 3)
    0.461
    >>> [round(float(x), 3) for x in (sum_wait_quantile_s([(0.0565, 0.467), (0.0557, 0.029)], 0.95),
    ...                              wait_quantile_s(mean_s=0.1122, p_wait=0.482, q=0.95))]
    [0.35, 0.527]
    """
    qq = np.asarray(q, dtype=float)
    parts = [(np.asarray(w, dtype=float), np.clip(np.asarray(p, dtype=float), 0.0, 1.0)) for w, p in waits]
    if len(parts) == 1:
        return wait_quantile_s(mean_s=parts[0][0], p_wait=parts[0][1], q=qq)
    (w1, p1), (w2, p2) = parts
    p1, p2 = np.where(w1 > 0, p1, 0.0), np.where(w2 > 0, p2, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        m1, m2 = np.where(p1 > 0, w1 / p1, 0.0), np.where(p2 > 0, w2 / p2, 0.0)
    tail = 1.0 - qq
    lo = np.zeros(np.broadcast(m1, m2, tail).shape)
    hi = 2.0 * np.maximum(m1, m2) * np.log(2.0 / np.maximum(tail, 1e-300)) + 1e-12  # S(hi) ≤ e^(−hi/2m₁) + e^(−hi/2m₂) ≤ 1 − q

    def over(t):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            e1 = np.where(m1 > 0, np.exp(-t / np.where(m1 > 0, m1, 1.0)), 0.0)
            e2 = np.where(m2 > 0, np.exp(-t / np.where(m2 > 0, m2, 1.0)), 0.0)
            near = np.abs(m1 - m2) <= 1e-9 * np.maximum(m1, m2)
            both = np.where(near, (1.0 + t / np.where(m1 > 0, m1, 1.0)) * e1, (m1 * e1 - m2 * e2) / np.where(near, 1.0, m1 - m2))
        return p1 * (1.0 - p2) * e1 + (1.0 - p1) * p2 * e2 + p1 * p2 * np.where((m1 > 0) & (m2 > 0), both, 0.0)

    for _ in range(44):  # [0, hi] to hi·2⁻⁴⁴
        mid = 0.5 * (lo + hi)
        up = over(mid) > tail
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    waits_at_all = 1.0 - (1.0 - p1) * (1.0 - p2)
    return np.where(np.isfinite(hi) & (waits_at_all > tail), 0.5 * (lo + hi), np.where(np.isfinite(hi), 0.0, np.inf))


@dataclass(frozen=True)
class EngineLoad:
    """What the engine's steps look like at a decoding batch R and a prompt rate λ (seconds)."""

    decode_step_s: np.ndarray  # T_dec: R decodes at the running context
    mean_step_s: np.ndarray  # T̄ = T_dec / (1 − ρ_p): the mean step
    tpot_s: np.ndarray  # what a decoding sequence sees: T̄ plus the batch's fluctuation
    batch_peakedness: np.ndarray  # z = Var(R) / R = z₀ / (1 − ε), z₀ of the prompt clusters
    prefill_s: np.ndarray  # T_pf: engine time one mean prompt adds to the steps it rides on
    prefill_utilization: np.ndarray  # ρ_p = λ·T_pf
    full_step_s: np.ndarray  # T_full: a step whose token budget is full (R decodes + the room)
    budget_utilization: np.ndarray  # ρ_q = λ·I·T_full / room
    residual_s: np.ndarray  # the decode step in flight when the budget queue is empty: (1 − ρ_q)·T_dec/2
    budget_wait_s: np.ndarray  # W_pf: prompt tokens ahead in the token budget (M/G/1)
    step_in_flight_s: np.ndarray  # T* = E[T²]/E[T]: the step an arrival lands in (length-biased)
    mix_step_s: np.ndarray  # T_mix: a step that carries the prompts of the step before
    mix_share: np.ndarray  # f: share of steps that carry prompts
    # speculative decoding: a step's time over a plain decode step of the same batch (verify + draft − decode)
    speculative_extra_s: np.ndarray = 0.0
    # the open loop's budget queue (budget_busy_periods): False where a run reaches a full budget that cannot drain
    # (congestion_wait_ratio's tip)
    full_budget_drains: np.ndarray = True
    # π of the budget's wait (0 with probability 1 − π, else exponential): 2W²/E[W²], the M/G/1's two moments
    budget_wait_probability: np.ndarray = 0.0


def _decode_s(e: EngineNumbers, speculative, *, batch, context_tokens):
    """A decode step's time per output token: plain, or speculative (calc.timing.speculative)."""
    if speculative is None:
        return decode_step(e, batch=batch, context_tokens=context_tokens).step_s
    from calc.timing.speculative import per_token_step  # noqa: PLC0415

    return per_token_step(e, speculative, batch=batch, context_tokens=context_tokens).step_s


def _mixed_s(e: EngineNumbers, speculative, **kw):
    """A speculative step with prompt chunks in it (:func:`calc.timing.speculative.mixed_step_s`)."""
    from calc.timing.speculative import mixed_step_s  # noqa: PLC0415

    return mixed_step_s(e, speculative, **kw)


def chunk_keys_before(*, input_len, chunk_tokens):
    """Keys of its own prompt before each chunk, x, when a prompt of I tokens is priced as I/c chunks
    of c tokens (what the token budget's steps hold), so that their attention is the prompt's own:
    I/c chunks read (I/c)·(c·x + c·(c + 1)/2) = I·x + I·(c + 1)/2 (query, key) pairs
    (:func:`calc.timing.roofline.causal_attention_pairs`), the prompt I·(I + 1)/2, so x = (I − c)/2.
    That is (k − 1)·c/2 only where I is k whole chunks; with a short last chunk (k − 1)·c/2 counts
    I·(c − r)/2 pairs too many (r the last chunk's tokens).

    Qwen2.5-7B on A100, a 2,048-token prompt in a room of 1,990 (chunks of 1,990 and 58 tokens):
    (2,048 − 1,990)/2 = 29 keys, where (k − 1)·c/2 read 995 and priced the prompt 2.3 % dear; in
    the simulator, at 90 % of capacity, the prompts took about 0.76 of the engine's time, the
    model 0.774, and the mean step T̄ = T_dec/(1 − ρ_p) turned the difference into 9 % (README).

    >>> x = chunk_keys_before(input_len=2048, chunk_tokens=1990)
    >>> float(x)
    29.0
    >>> from calc.timing.roofline import causal_attention_pairs
    >>> float(2048 / 1990 * causal_attention_pairs(new_tokens=1990, cached_tokens=x)) == float(
    ...     causal_attention_pairs(new_tokens=2048, cached_tokens=0))
    True
    """
    return (np.asarray(input_len, dtype=float) - np.asarray(chunk_tokens, dtype=float)) / 2.0


# Levels of the congestion chain (congestion_wait_ratio): every level to EXACT_LEVELS, then blocks 8 % longer
# each, to the level where the batch has relaxed (10 n₀) and the top's geometric tail
EXACT_LEVELS = 64
BLOCK_GROWTH = 1.08
# Above this quasi-stationary probability near n_c (congestion_wait_ratio's with_tip) a budget that stays full and
# cannot drain is reached in a run: the open loop's closed form does not hold there (the simulator's regime)
TIP_PROBABILITY = 1e-3


def congestion_wait_ratio(*, utilization, slowdown, relax_prompts, with_tip=False):
    """W / W_PK: how much longer prompts wait for the token budget when its service slows while they queue.

    While prompts queue, every step fills the budget's room and prompts finish prefill at the budget's
    full rate, faster than they arrive; the decode batch grows toward R* (the batch a budget that stays
    full keeps: each step starts (B − q·R*)/I prompts that decode for L steps, R* = L·B/(I + q·L),
    at most the slots), each step leaves less room for prompts and takes longer, so the queue drains
    slower the longer it is. A birth-death chain in the prompts n in the budget queue (arrivals λ,
    service S_n = S·(1 + κ·g(n))):

        g(n) = 1 − exp(−n/n₀),  n₀ = (1 − ρ)·τ_R / S,  κ = τ(R*)/τ(R) − 1,
        p_n ∝ Π_{k≤n} ρ·(1 + κ·g(k)),  W = E[(n − 1)⁺] / λ (Little),  W_ref = ρ·S/(1 − ρ) (κ = 0: M/M/1),
        ratio = W / W_ref = E[(n − 1)⁺]·(1 − ρ)/ρ²,

    ``utilization`` ρ (the budget's, at the batch over time), ``slowdown`` κ, ``relax_prompts`` n₀.
    The batch relaxes toward R* over τ_R, a decode's life in full steps (L·T_full); a queue of n
    prompts (n·S of work) that the drift (1 − ρ) of a busy budget climbs to has been busy about
    n·S/(1 − ρ) (a reflected Brownian motion conditioned to reach a level climbs it at the opposite
    drift), so its batch has relaxed g(n) of the way. Applied as a ratio to the M/G/1 wait, which
    keeps the prompts' length spread.

    Where ρ·(1 + κ) ≥ 1 a budget that stays full cannot drain: past the level n_c where
    ρ·(1 + κ·g(n_c)) = 1 the queue would climb on its own. That state is metastable: from an empty
    budget it is reached only if the chain's mass reaches n_c, which for a small ρ takes longer than
    any run (Llama-3.1-8B H100, 500 + 1,024 tokens, budget 512, 84 % of capacity, ρ = 0.27, κ ≈ 3:
    20,000 simulated requests keep a steady 124 ms TTFT). So the chain is cut at n_c (the quasi-
    stationary distribution below it), and ``with_tip`` also returns its probability at the top
    tenth of the levels below n_c (0 where the budget drains): where that is not negligible the
    queue does tip over in a run, and the caller says the closed form does not hold.

    κ = 0 is the M/M/1 (ratio 1); a slowdown lengthens the wait, more so near capacity:

    >>> [round(float(x), 3) for x in congestion_wait_ratio(utilization=np.array([0.5, 0.5, 0.7]),
    ...                                                    slowdown=np.array([0.0, 0.25, 0.25]), relax_prompts=30.0)]
    [1.0, 1.083, 1.251]

    By hand, a batch that grows at once (n₀ → 0: every queued state serves at S·(1 + κ)): an M/M/1 at
    ρ* = ρ·(1 + κ) but for the empty state, E[(n − 1)⁺] = ρ*²/(1 − ρ*); ρ = 0.5, κ = 0.2: ρ* = 0.6,
    ratio = 0.36/0.4 · 0.5/0.25 = 1.8. A batch that never grows (n₀ → ∞): 1.

    >>> round(float(congestion_wait_ratio(utilization=0.5, slowdown=0.2, relax_prompts=1e-9)), 3)
    1.8
    >>> round(float(congestion_wait_ratio(utilization=0.5, slowdown=0.2, relax_prompts=1e12)), 3)
    1.0

    A full budget that cannot drain, far away (ρ = 0.27, κ = 3, n₀ = 1,000: g(n_c) = (1/ρ − 1)/κ = 0.90,
    n_c ≈ 2,300) and near (ρ = 0.9, κ = 0.5, n₀ = 5: n_c ≈ 1.3; the ratio at least 1, the closed form off):

    >>> r, tip = congestion_wait_ratio(utilization=np.array([0.27, 0.9]), slowdown=np.array([3.0, 0.5]),
    ...                                relax_prompts=np.array([1000.0, 5.0]), with_tip=True)
    >>> [round(float(x), 3) for x in r], [bool(x > 1e-3) for x in tip]
    ([1.015, 1.0], [False, True])
    """
    rho = np.asarray(utilization, dtype=float)
    kappa = np.maximum(np.asarray(slowdown, dtype=float), 0.0)
    n0 = np.maximum(np.asarray(relax_prompts, dtype=float), 1e-9)
    shape = np.broadcast_shapes(rho.shape, kappa.shape, n0.shape)
    rho, kappa, n0 = (np.broadcast_to(x, shape)[..., None] for x in (rho, kappa, n0))
    top = np.maximum(10.0 * n0, 1000.0)  # the relaxed level: g = 1 − e^(−10)
    rho_top = rho * (1.0 + kappa)
    drains = rho_top < 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # n_c: ρ·(1 + κ·g(n_c)) = 1 (top cannot drain)
        g_c = np.clip((1.0 / rho - 1.0) / np.where(kappa > 0, kappa, 1.0), 0.0, 1.0)
        n_c = np.where(drains, np.inf, -n0 * np.log1p(-g_c))
    last_level = np.minimum(top, np.maximum(n_c, 1.0))
    # blocks [a, a + L): length 1 to EXACT_LEVELS, then 8 % of the level, to the top (the largest top sets the grid)
    edges = [float(k) for k in range(1, EXACT_LEVELS + 1)]
    while edges[-1] < float(np.max(last_level)) if last_level.size else False:
        edges.append(float(np.ceil(edges[-1] * BLOCK_GROWTH)))
    a = np.asarray(edges[:-1])
    length = np.diff(np.asarray(edges))
    mid = a + (length - 1.0) / 2.0
    inside = a < last_level  # blocks of this row's chain
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f = np.log(rho) + np.log1p(kappa * -np.expm1(-mid / n0))  # log p_k/p_(k−1) in the block
        f = np.where(inside, f, -np.inf)
        climb = np.cumsum(np.where(inside, f * length, 0.0), axis=-1)
        log_start = np.concatenate([np.zeros(shape + (1,)), climb[..., :-1]], axis=-1)  # log p_(a−1) / p_0
        # block mass Σ_(1≤i≤L) p_(a−1)·r^i, r = e^f, in logs: f + log((e^(L·f) − 1)/(e^f − 1)) (L where f = 0)
        small = np.abs(f) < 1e-12
        safe = np.where(small | ~inside, 1.0, f)
        log_geo = np.where(small, np.log(length), np.where(
            safe > 0, length * safe + np.log(-np.expm1(-length * safe)) - safe - np.log(-np.expm1(-safe)),
            np.log(-np.expm1(length * safe)) - np.log(-np.expm1(safe))))
        log_mass = np.where(inside, log_start + f + log_geo, -np.inf)
        # the tail past the top, where g = 1: geometric at ρ* (only where the top drains; else cut at n_c)
        log_last = climb[..., -1:]  # log p_top / p_0
        big = np.maximum(np.max(log_mass, axis=-1, keepdims=True), 0.0)  # every term relative to the largest
        big = np.maximum(big, np.where(drains, log_last, -np.inf))
        mass = np.exp(log_mass - big)
        last = np.exp(log_last - big)
        geo_top = rho_top / (1.0 - rho_top)
        t_mass = np.where(drains, last * geo_top, 0.0)
        t_first = np.where(drains, last * ((top - 1.0) * geo_top + geo_top / (1.0 - rho_top)), 0.0)
        total = np.exp(-big) + mass.sum(axis=-1, keepdims=True) + t_mass  # p_0 = e^(−big)
        waiting = (mass * np.maximum(mid - 1.0, 0.0)).sum(axis=-1, keepdims=True) + t_first
        ratio = waiting / total * (1.0 - rho) / rho ** 2
        near_top = inside & (a + length > 0.9 * last_level)  # the top tenth of the levels below n_c
        tip = np.where(drains, 0.0, (mass * near_top).sum(axis=-1, keepdims=True) / total)
    ok = (rho > 0) & (rho < 1)
    ratio = np.where(ok, np.maximum(ratio, 1.0), 1.0)[..., 0]  # a slower service never shortens the wait
    if with_tip:
        return ratio, np.where(ok, tip, 0.0)[..., 0]
    return ratio


def engine_load(e: EngineNumbers, *, input_len, output_len, input_cv=0.0, output_cv=0.0, running, rate_rps,
                max_num_batched_tokens, enable_chunked_prefill=True, speculative=None,
                cached_prompt_tokens=0.0, budget_busy_periods=False, max_running=np.inf) -> EngineLoad:
    """The engine's steps at R decoding sequences fed λ prompts/s (module docstring, terms 2–3).

    A decoding sequence's context is I + E[O²]/(2·E[O]) (longer outputs stay longer in the batch).
    The token budget is a queue of prompt tokens served room = budget − R per step: at full budget
    a token costs τ = T_full / room, so a prompt is an M/G/1 customer of service τ·I
    (ρ_q = λ·τ·I, lognormal lengths); an arrival to an empty queue waits for the decode step in
    flight (T_dec/2, while anything runs: 1 − exp(−R) of the time). TPOT: every step decodes R sequences and the prompts' marginal time T_pf
    (n = max(1, λ·T̄) prompts per step that carries them) takes ρ_p = λ·T_pf of the engine,
    T̄ = T_dec / (1 − ρ_p). The batch fluctuates, and a sequence decodes more often in crowded,
    slow steps: each sequence in the batch brings ε = λ·(O − 1)·dT̄/dR more arrivals over its life
    (a linear birth-death process: Var/mean = 1/(1 − ε)), on prompts that come in clusters of steps
    (Var/mean z₀ = :func:`calc.traffic.prompt_clusters.clustered_peakedness`), so Var(R) = z·R with
    z = z₀/(1 − ε) (simulator, bench/speculative_sim_vs_analytic.py open loops at 60-85 %: z 2.4-12
    against 2.5-14 here), and TPOT = E[R·T]/E[R] = T̄ + z·dT̄/dR + the prompt steps' larger batches
    (:func:`calc.traffic.prompt_clusters.prompt_cluster_tpot_s`). Without chunked prefill z₀ = 1.
    Without chunked prefill the prompts run in steps of their own (decodes stall).
    A prompt's attention is quadratic in its length (token j reads the j keys before it): over a
    prompt, Σ j ≈ I²/2 keys, so prompts of mean I and CV c_I read E[I²]/2 = (1 + c_I²)·I²/2 on
    average, c_I²·I/2 more per token than a prompt of the mean length; each chunk is priced with
    those keys before it (H cached + the earlier chunks' (k − 1)·c/2 + c_I²·I/2). Qwen2.5-7B on A100,
    2,048 + 128 tokens lognormal CV 1, 90 % of capacity: a prompt's prefill 2.8 % dearer, and the
    open loop's mean TTFT −15 → −4 %, P95 −22 → −7 %, TPOT −18 → −3 % against 4 × 4,000 simulated
    requests (bench/traffic_spread.py).
    ``budget_busy_periods`` (the open loop): the budget's service is priced as its busy periods
    run, two mechanisms measured in the simulator (Llama-3.1-8B H100, 2,500 + 256 tokens, budget
    1,024, 85 % of capacity, fixed lengths, 20,000 requests):
      1. its full steps carry the batch present over *time*, R·TPOT/T̄ (Little's law with the
         time each sequence spends decoding), not the per-step average R = λ·(O − 1)·T̄: long
         steps hold more sequences. Simulator: 39.4 decodes in the steps that carry prompts,
         34.4 per step on average; the model 33.1 per step, 37.5 over time;
      2. a busy period ends in a step whose room its prompts fill only in part, and that step
         still runs the whole batch's decodes: δ = T_dec/2 more than its tokens' share τ·r
         (the room left empty is on average half: 0.49-0.53 over the simulator's busy periods
         in three engines whose prompts span the room). Busy periods come λ·(1 − ρ) per second,
         so ρ = (ρ₀ + λ·δ)/(1 + λ·δ) (τ scaled by ρ/ρ₀). Where prompts are much shorter than the
         room the last step is emptier (0.89 with 1,024-token prompts in a room of 8,192), but
         there the steps that carry prompts are the mixed steps priced above; counted as
         1 − I/(2·room) (0.94 there) the open loop's P95 overshot the simulator by 17 % at 90 % of
         capacity (lognormal CV 1 and 0.5), at one half by 5 and 6 %.
      Together, the budget's busy share 0.669 → 0.691 (simulator 0.697); long runs
      (bench/traffic_spread.py --requests 20000) at 85-90 % of capacity: see the README.
      3. while prompts queue the decode batch grows toward the batch a full budget keeps (at most
         ``max_running``, the slots), so the queue drains slower the longer it is: the M/G/1 wait
         times :func:`congestion_wait_ratio` (κ from the full step at that batch, n₀ from a decode's
         life in full steps).
      4. the wait's tail from its own two moments: waits are 0 with probability 1 − π and else
         exponential of mean W/π, with π = 2W²/E[W²] (Takács's E[W²] = 2W² + λ·E[S³]/(3(1 − ρ))):
         π = ρ for exponential prompts (M/M/1), more for fixed lengths (a shorter tail), less for
         lognormal prompts of CV 1 (E[S³] = 8·S³: a longer tail) than the ρ used before.
      ``budget_busy_periods`` holds 1-3 (4 is every open loop's); the closed loops keep none of them.
    A closed loop keeps the per-step batch (its budget queue is :mod:`calc.traffic.chunk_queue`).
    ``speculative`` (a :class:`calc.timing.speculative.Drafter`): decode steps seen per output token
    (:func:`calc.timing.speculative.per_token_step`), so R = λ·(O − 1)·T̄ counts a step's τ tokens.
    ``cached_prompt_tokens`` H: each prompt also has H tokens found in the prefix cache
    (:mod:`calc.traffic.prefix_cache`), read as keys but not prefilled; I is what is computed.
    """
    I = np.asarray(input_len, dtype=float)
    H = np.asarray(cached_prompt_tokens, dtype=float)
    O = np.asarray(output_len, dtype=float)
    R = np.maximum(np.asarray(running, dtype=float), 0.0)
    lam = np.asarray(rate_rps, dtype=float)
    B = np.asarray(max_num_batched_tokens, dtype=float)
    chunked = np.asarray(enable_chunked_prefill, dtype=bool)
    cv_i = np.asarray(input_cv, dtype=float)
    m = np.maximum(O - 1.0, 0.0)
    ctx = I + H + O * (1.0 + np.asarray(output_cv, dtype=float) ** 2) / 2.0
    q_dec = 1.0 if speculative is None else speculative.num_speculative_tokens + 1.0  # budget tokens per decode
    tau_s = 1.0 if speculative is None else speculative.tokens_per_step  # tokens per sequence per step
    room = np.where(chunked, np.maximum(B - R * q_dec, 1.0), B)
    k = np.ceil(I / room)
    c = np.minimum(I, room)  # chunk of one prompt

    # Speculation: a step with prompt chunks is ONE forward (calc.timing.speculative.mixed_step_s): the
    # verify rows priced beside the chunks, the drafter's first pass over the chunks too. What a chunk
    # costs beyond the plain-decode pricing below, at the batch r (evaluated once per batch):
    # keys a chunk reads before its own: H cached, the prompt's earlier chunks, and the spread's share
    # (attention is quadratic in the prompt: E[I²]/2 = (1 + cv²)·I²/2 keys over a prompt's tokens)
    cached_c = H + chunk_keys_before(input_len=I, chunk_tokens=c) + cv_i ** 2 * I / 2.0

    def surcharge(r, t_spec, t_plain):
        if speculative is None:
            return 0.0
        rr = np.maximum(r, 1.0)
        mixed = _mixed_s(e, speculative, batch=rr, context_tokens=ctx, prompts=1.0, prompt_tokens=c, cached_tokens=cached_c)
        plain = prefill_step(e, prompts=1.0, prompt_tokens=c, decode_batch=rr, decode_context_tokens=ctx,
                             cached_tokens=cached_c).step_s
        return np.where(chunked & (r > 0), np.maximum((mixed - t_spec) - (plain - t_plain), 0.0), 0.0)

    def steps(r):
        t_dec = np.where(r > 0, _decode_s(e, speculative, batch=np.maximum(r, 1.0), context_tokens=ctx), 0.0)
        t_plain = np.where(r > 0, decode_step(e, batch=np.maximum(r, 1.0), context_tokens=ctx).step_s, 0.0)
        t_bar = t_dec
        extra_chunk = surcharge(r, t_dec * tau_s, t_plain)
        for _ in range(3):  # n prompts share a step that carries prompt tokens; n depends on T̄
            n = np.maximum(lam * np.maximum(t_bar * tau_s, 1e-6), 1.0)  # prompts per (speculative) step
            h = np.minimum(n * I, room)
            t_mix = prefill_step(e, prompts=h / c, prompt_tokens=c, decode_batch=np.where(chunked, r, 0.0),
                                 decode_context_tokens=ctx, cached_tokens=cached_c).step_s
            t_pf = np.where(chunked, np.maximum(t_mix - t_plain, 0.0) + extra_chunk * h / c, t_mix) * I / h
            rho_p = lam * t_pf
            with np.errstate(divide="ignore"):
                t_bar = np.where(rho_p < 1.0, np.maximum(t_dec, 1e-300) / np.maximum(1.0 - rho_p, 1e-300), np.inf)
            t_bar = np.where(t_dec > 0, t_bar, t_mix)
        return t_dec, t_bar, t_pf, rho_p, extra_chunk

    t_dec, t_bar, t_pf, rho_p, extra_chunk = steps(R)
    dR = np.maximum(0.01 * R, 0.5)
    with np.errstate(invalid="ignore"):  # inf − inf past the budget's capacity; 0 · inf where nothing decodes
        slope = (steps(R + dR)[1] - t_bar) / dR  # dT̄/dR
        eps = lam * m * slope
    # prompts come in clusters of steps (calc.traffic.prompt_clusters): the batch is more peaked,
    # and the steps that carry prompts carry larger batches (a size-biased mean)
    peak0 = np.where(chunked, clustered_peakedness(prefill_utilization=rho_p, output_cv=output_cv), 1.0)
    cluster = np.where(chunked, prompt_cluster_tpot_s(mean_step_s=t_bar, prefill_utilization=rho_p, running=R,
                                                      lifetime_steps=m / tau_s), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(eps < 1.0, peak0 / np.maximum(1.0 - eps, 1e-12), np.inf)
        tpot = t_bar + np.where(slope != 0, slope * z, 0.0) + cluster  # no batch to fluctuate: nothing
    # speculative decoding: a step lasts τ per-token decode times; a step with decodes costs that
    # much more than a plain decode step of R (verify + draft − decode)
    t_step = t_dec * tau_s
    extra = np.where(R > 0, np.maximum(t_step - decode_step(e, batch=np.maximum(R, 1.0), context_tokens=ctx).step_s,
                                       0.0), 0.0) if speculative is not None else np.zeros_like(t_dec)
    if budget_busy_periods:  # the batch over time: R·TPOT/T̄ (docstring, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            r_busy = np.where((t_bar > 0) & np.isfinite(tpot) & np.isfinite(t_bar), R * tpot / t_bar, R)
        room_busy = np.where(chunked, np.maximum(B - r_busy * q_dec, 1.0), B)
    else:
        r_busy, room_busy = R, room
    t_full = prefill_step(e, prompts=room_busy / c, prompt_tokens=c, decode_batch=np.where(chunked, r_busy, 0.0),
                          decode_context_tokens=ctx, cached_tokens=cached_c).step_s + np.where(chunked, extra, 0.0)
    t_full = t_full + extra_chunk * room_busy / c
    tau = t_full / room_busy
    if budget_busy_periods:  # each busy period's last step, half empty (docstring, 2)
        delta_s = np.where(chunked, t_step / 2.0, 0.0)
        rho0 = lam * tau * I
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = tau * np.where(rho0 > 0, (rho0 + lam * delta_s) / (1.0 + lam * delta_s) / np.maximum(rho0, 1e-300), 1.0)
    rho_q = lam * tau * I
    w, w2 = mg1_wait_s(rate_rps=lam, service_s=tau * I,
                       service_m2_s2=tau ** 2 * lognormal_moment(mean=I, cv=cv_i, k=2),
                       service_m3_s3=tau ** 3 * lognormal_moment(mean=I, cv=cv_i, k=3))
    # the wait's tail: 0 with probability 1 − π, else exponential of mean W/π, π = 2W²/E[W²] from Takács's second
    # moment (docstring, 4; M/M/1: π = ρ exactly)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_wait = np.where((w > 0) & np.isfinite(w2) & (w2 > 0), np.clip(2.0 * w ** 2 / w2, 0.0, 1.0), rho_q)
    drains = np.ones_like(w, dtype=bool)
    if budget_busy_periods:  # the batch grows while prompts queue (docstring, 3)
        life = m / tau_s  # a decode's life in steps
        r_star = np.minimum(life * B / np.maximum(I + q_dec * life, 1e-9), np.asarray(max_running, dtype=float))
        room_star = np.where(chunked, np.maximum(B - r_star * q_dec, 1.0), B)
        t_star_full = prefill_step(e, prompts=room_star / c, prompt_tokens=c,
                                   decode_batch=np.where(chunked, r_star, 0.0), decode_context_tokens=ctx,
                                   cached_tokens=cached_c).step_s + np.where(chunked, extra, 0.0)
        t_star_full = t_star_full + extra_chunk * room_star / c
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = np.where(chunked & (r_star > r_busy), (t_star_full / room_star) / (t_full / room_busy) - 1.0, 0.0)
            # in the chain's levels: an M/G/1 queue holds (1 + c_S²)/2 of an M/M/1's at the same load (diffusion
            # limit), so a chain level is (1 + c_S²)/2 prompts (fixed prompts: half, a batch that relaxes half as fast)
            n0 = (1.0 - rho_q) * life * t_full / np.maximum(tau * I, 1e-300) * 2.0 / (1.0 + cv_i ** 2)
        # n₀ capped at 10⁶ prompts (the chain's levels and memory bounded; a batch that slow moves the wait < 0.1 %
        # even at ρ = 0.99, κ = 0.5)
        ratio, tip = congestion_wait_ratio(
            utilization=np.clip(rho_q, 0.0, 1.0), slowdown=np.nan_to_num(kappa, posinf=0.0),
            relax_prompts=np.clip(np.nan_to_num(n0, nan=1.0, posinf=1e6), 1e-9, 1e6), with_tip=True)
        on = chunked & (rho_q > 0) & (rho_q < 1)
        drains = ~(on & (tip > TIP_PROBABILITY))  # a full budget that cannot drain is reached in a run
        w = w * np.where(on, ratio, 1.0)
    # a step is in flight only while something runs: with Poisson R running, 1 − exp(−R) of the time
    busy = -np.expm1(-R)
    res = busy * np.clip(1.0 - rho_q, 0.0, 1.0) * np.where(chunked, t_step, 0.0) / 2.0
    # steps while prompts fit them: a share f = 1 − exp(−λ·T̄) carries the n = λ·T̄/f prompts that
    # arrived during the step before, T_mix = T_dec + n·T_pf; an arrival lands in a step of T*
    f = -np.expm1(-lam * t_bar * tau_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_mix = np.where(f > 0, t_step + lam * t_bar * tau_s / f * t_pf, t_step)
        t_star = busy * np.where(t_bar > 0, (f * t_mix ** 2 + (1.0 - f) * t_step ** 2) / (t_bar * tau_s), 0.0)
    return EngineLoad(step_in_flight_s=t_star, mix_step_s=t_mix, mix_share=f, decode_step_s=t_step, mean_step_s=t_bar,
                      speculative_extra_s=extra, tpot_s=tpot, batch_peakedness=z, prefill_s=t_pf,
                      prefill_utilization=rho_p, full_step_s=t_full, budget_utilization=rho_q, residual_s=res,
                      budget_wait_s=w, full_budget_drains=drains, budget_wait_probability=p_wait)


def own_prefill_s(e: EngineNumbers, *, input_len, mean_input_len, running, context_tokens, rate_rps, wait_s,
                  max_num_batched_tokens, enable_chunked_prefill=True, quantile=None, decode_budget_tokens=1.0,
                  decode_extra_s=0.0, cached_prompt_tokens=0.0):
    """Engine time from the step that starts a prompt of I tokens to its first token, after it
    waited ``wait_s`` in the queue (module docstring, term 4). Its first k − 1 chunks fill the room
    (budget − R beside R decodes; T_full each), the rest r = I − (k − 1)·room runs in a last step
    that the prompts arriving behind it meanwhile (first come first served) fill up to the room:
    X·(1 − exp(−λ·t·Ī/X)) more tokens of X = room − r free, t = wait + (k − 1)·T_full, at the
    marginal cost (T_full − T_last)/X each (λ·t·Ī while few arrive; the whole room once many do).
    ``quantile`` q: instead of that mean, the q-quantile of the Poisson number N of prompts behind
    it, min(N_q·Ī, X) tokens (one prompt as long as the free room fills it).

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> from calc.timing.estimate import engine_numbers
    >>> from calc.timing.serving import prefill_step
    >>> e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"))
    >>> alone = own_prefill_s(e, input_len=1024, mean_input_len=1024, running=0, context_tokens=1024,
    ...                       rate_rps=0.0, wait_s=0.0, max_num_batched_tokens=8192)
    >>> bool(np.isclose(alone, prefill_step(e, prompts=1, prompt_tokens=1024).step_s))    # one step
    True
    """
    I = np.asarray(input_len, dtype=float)  # tokens computed, after H = cached_prompt_tokens found cached
    H = np.asarray(cached_prompt_tokens, dtype=float)
    R = np.asarray(running, dtype=float)
    chunked = np.asarray(enable_chunked_prefill, dtype=bool)
    B = np.asarray(max_num_batched_tokens, dtype=float)
    d = np.where(chunked, R, 0.0)
    room = np.where(chunked, np.maximum(B - R * decode_budget_tokens, 1.0), B)
    k = np.ceil(I / room)
    # speculative decoding: a step with decodes also verifies their drafts and drafts again
    extra = np.where(chunked & (R > 0), np.asarray(decode_extra_s, dtype=float), 0.0)
    # the k − 1 full chunks read 0, room, …, (k − 2)·room keys of the prompt before them: (k − 2)·room/2 on average
    full = prefill_step(e, prompts=1.0, prompt_tokens=np.minimum(room, I), decode_batch=d,
                        decode_context_tokens=context_tokens,
                        cached_tokens=H + np.maximum(k - 2.0, 0.0) / 2.0 * room).step_s + extra
    rest = I - (k - 1.0) * room
    last = prefill_step(e, prompts=1.0, prompt_tokens=rest, decode_batch=d, decode_context_tokens=context_tokens,
                        cached_tokens=H + (k - 1.0) * room).step_s + extra
    t_full = prefill_step(e, prompts=1.0, prompt_tokens=room, decode_batch=d, decode_context_tokens=context_tokens,
                          cached_tokens=H).step_s + extra
    free = np.maximum(room - rest, 0.0)
    t = np.asarray(wait_s, dtype=float) + (k - 1.0) * full
    mu = np.asarray(rate_rps, dtype=float) * t  # prompts arriving behind it, on average
    i_bar = np.asarray(mean_input_len, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if quantile is None:
            frac = np.where(free > 0, 1.0 - np.exp(-mu * i_bar / free), 0.0)
        else:
            frac = np.where(free > 0, np.minimum(poisson_quantile(mean=mu, q=quantile) * i_bar / free, 1.0), 0.0)
    return (k - 1.0) * full + last + frac * np.maximum(t_full - last, 0.0)


def poisson_quantile(*, mean, q, terms=256):
    """The q-quantile of N, Poisson of this mean, interpolated within the step where the CDF passes
    q: n − 1 + (q − P(N ≤ n − 1)) / P(N = n) (a count that moves smoothly with the mean; summed over
    ``terms`` terms, larger means by the normal approximation).

    Mean 0.12, q = 0.95: P(N = 0) = 0.887, P(N = 1) = 0.106: 0 + (0.95 − 0.887)/0.106 = 0.59.

    >>> [round(x, 2) for x in poisson_quantile(mean=[0.12, 0.04, 3.0], q=0.95).tolist()]
    [0.59, 0.0, 5.67]
    """
    mu = np.maximum(np.asarray(mean, dtype=float), 0.0)
    qq = np.asarray(q, dtype=float)
    shape = np.broadcast_shapes(mu.shape, qq.shape)
    pmf = np.exp(-mu) * np.ones(shape)
    below = np.zeros(shape)  # P(N ≤ j − 1)
    out = np.full(shape, np.nan)
    for j in range(terms):
        cross = np.isnan(out) & (below + pmf >= qq)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # pmf underflows far in the tail
            out = np.where(cross, j - 1.0 + (qq - below) / pmf, out)
        below = below + pmf
        pmf = pmf * mu / (j + 1)
        if not np.isnan(out).any():  # every count found: the terms left change nothing
            break
    normal = mu + normal_quantile(qq) * np.sqrt(mu)
    return np.maximum(np.where(np.isnan(out), normal, out), 0.0)

@dataclass(frozen=True)
class OpenLoop:
    """Steady state of an open loop at λ requests/s (module docstring); seconds, arrays.
    Past capacity (``stable`` False) the latencies are inf: the queue grows without bound."""

    ttft_s: np.ndarray  # mean
    ttft_percentile_s: np.ndarray  # at ``percentile``
    percentile: np.ndarray
    tpot_s: np.ndarray
    e2e_latency_s: np.ndarray
    running: np.ndarray  # R, sequences the engine holds
    slots: np.ndarray  # c = min(max_num_seqs, KV sequences at the running context)
    api_wait_s: np.ndarray
    budget_wait_s: np.ndarray
    slot_wait_s: np.ndarray
    step_residual_s: np.ndarray
    own_prefill_s: np.ndarray
    decode_step_s: np.ndarray
    prefill_utilization: np.ndarray  # ρ_p: share of engine time on prompts
    api_utilization: np.ndarray  # λ·t_api
    stable: np.ndarray
    slots_full_probability: np.ndarray  # P(R ≥ c) for the peaked batch
    closed_form: np.ndarray  # False where the batch reaches the slots often (KV wall: preemption) or past capacity
    batch_peakedness: np.ndarray = 1.0  # z = Var(R)/E[R] of the batch (engine_load)
    slot_wait_probability: np.ndarray = 0.0  # π: the share of arrivals that wait for a slot (W_slot's)
    budget_utilization: np.ndarray = 0.0  # ρ_q: share of time the token budget is busy with prompts (engine_load)
    # False where a run reaches a budget that stays full and cannot drain (its batch grown to what a full budget
    # keeps, congestion_wait_ratio's tip): the queue can tip over and keep growing; closed_form False there
    budget_drains: np.ndarray = True


# At or above this share of time the token budget busy with prompts (OpenLoop.budget_utilization, ρ_q), the
# pages and `estimate --rate` say that the TTFT is steep in the rate and that runs vary (near_capacity).
# Measured (issue 17), the models at each run's own rate against 2 seeds x 20,000 Poisson requests, first quarter
# dropped, lognormal lengths CV 0 / 0.5 / 1 (bench/traffic_spread.py's four engines at 30 / 60 / 75 / 85-90 % of
# capacity; the README's table):
#   before the budget's congestion (congestion_wait_ratio) and the wait's own tail: ρ_q ≤ 0.56 within 15 %, ρ_q
#     0.58-0.87 the model low, P95 by up to 30 %; one run of 100,000 requests at 85 / 90 %: P95 −29 / −37 %;
#   with them: every closed-form cell within 15 % (P95 max 14.5 %); the 100,000-request runs −12 / −17 % (CV 1),
#     −1 / −12 % (CV 0.5), −2 / +1 % (fixed) at 85 / 90 %.
# Left: near capacity the TTFT climbs steeply with the rate, and runs of 20,000 requests differ by their seed by up
# to 1.5x in P95 (Llama-3.1-8B, 2,500 + 256, budget 1,024, 85 %: 1,651 and 2,497 ms): the pages say so here.
NEAR_CAPACITY_BUDGET_UTILIZATION = 0.55


def near_capacity(budget_utilization):
    """True where the token budget is busy with prompts at least :data:`NEAR_CAPACITY_BUDGET_UTILIZATION`
    of the time: there the TTFT climbs steeply with the rate and simulated runs differ by their seed (the note above).

    >>> near_capacity(np.array([0.3, 0.55, 0.7])).tolist()
    [False, True, True]
    """
    return np.asarray(budget_utilization, dtype=float) >= NEAR_CAPACITY_BUDGET_UTILIZATION


# Above this share of time at the slots the batch meets the KV wall (bench/sim_vs_analytic.py --shapes:
# Llama-3.1-70B at 90 % of capacity preempts 89-180 times in 4,000 requests and waits 2-3x longer)
SLOTS_FULL_LIMIT = 1e-3


def _slots(e: EngineNumbers, *, input_len, output_len, output_cv, max_num_seqs, max_num_batched_tokens,
           kv_capacity_tokens, cached_prompt_tokens=0.0):
    """c = min(max_num_seqs, KV pool / tokens a running sequence holds), as closed_loop counts them."""
    ctx = mean_decode_context_tokens(input_len=np.asarray(input_len, dtype=float) + cached_prompt_tokens,
                                     output_len=output_len, output_cv=output_cv)
    kv_per_seq = windowed_context_tokens(context_tokens=np.maximum(ctx, 1.0),
                                         sliding_window=np.asarray(e.sliding_window, dtype=float) - 1.0
                                         + np.asarray(max_num_batched_tokens, dtype=float),
                                         sliding_fraction=e.sliding_fraction)
    kv = np.floor(np.asarray(kv_capacity_tokens, dtype=float) / kv_per_seq)
    return np.maximum(np.minimum(np.asarray(max_num_seqs, dtype=float), kv), 1.0)


def lognormal_quantile(*, mean, cv, q):
    """The q-quantile of a lognormal of this mean and CV: exp(μ + σ·z_q), σ² = ln(1 + cv²),
    μ = ln(mean) − σ²/2 (cv = 0: the mean). Mean 1000, CV 0.5: σ = √ln 1.25 = 0.4724, P95 =
    1000 · exp(0.4724 · 1.6449 − 0.1116) = 1945.

    >>> round(float(lognormal_quantile(mean=1000.0, cv=0.5, q=0.95)))
    1945
    """
    s2 = np.log1p(np.asarray(cv, dtype=float) ** 2)
    return np.asarray(mean, dtype=float) * np.exp(np.sqrt(s2) * normal_quantile(q) - s2 / 2.0)


def open_loop(e: EngineNumbers, *, input_len, output_len, rate_rps, max_num_seqs, max_num_batched_tokens,
              kv_capacity_tokens, input_cv=0.0, output_cv=0.0, enable_chunked_prefill=True,
              percentile=95.0, speculative=None, cached_prompt_tokens=0.0, input_quantile_tokens=None) -> OpenLoop:
    """Open loop at ``rate_rps`` (Poisson) with lognormal lengths of mean I, O and CVs (0: fixed).

    The decoding batch solves R = λ·(O − 1)·T̄(R) (decode tokens per second in = out; bisection
    on [0, c]; none there: past capacity). Then, in seconds,
      TTFT = t_api + W_api + t_req + (1 − ρ_q)·T_dec/2 + W + own(W),  W = W_pf + W_slot,
    W_api M/D/1, W_pf M/G/1 (:func:`engine_load`, its budget priced as its busy periods run), own(W) :func:`own_prefill_s`, and
    W_slot = (1 + cv_O²)/2 · π · z·E2E/(c − a), a = λ·E2E, π = 1/(1 + β·Φ(β)/φ(β)),
    β = (c − a)/√(z·a) (:func:`peaked_wait_probability`: the diffusion limit of c servers fed by a
    peaked batch, Var(R) = z·R; the wait of those who wait z·E2E/(c − a), the same limit's). TPOT = T̄ + z·dT̄/dR; E2E = TTFT + (O − 1)·TPOT.
    Percentile: three independent parts, each at its own quantile — the waits W (each 0 with
    probability 1 − π, else exponential; their sum's quantile, :func:`sum_wait_quantile_s`) together with own(W) that grows
    with them, the own prompt's length (lognormal), the API server's wait — combined as
    mean + √(Σ x⁺²), x_i = q_i − mean_i, at the median − √(Σ x⁻²) too (:func:`combined_excess_s`).

    Hand-worked API server (no engine work, to check the queueing arithmetic): 20 ms per request
    at 10 req/s (ρ = 0.2) waits 10 · 0.02² / (2 · 0.8) = 2.5 ms; at 1 req/s 1 · 0.02² / 1.96 = 0.2 ms.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> from calc.timing.estimate import engine_numbers
    >>> from calc.spec.inputs import Efficiency
    >>> e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"),
    ...                    efficiency=Efficiency(api_server_request_s=0.02, request_overhead_s=0.0))
    >>> r = open_loop(e, input_len=1024, output_len=256, rate_rps=[1.0, 10.0], max_num_seqs=256,
    ...               max_num_batched_tokens=8192, kv_capacity_tokens=400_000)
    >>> [round(float(x) * 1e3, 1) for x in r.api_wait_s]
    [0.2, 2.5]
    >>> bool(np.all(np.diff(r.ttft_s) > 0)), bool(np.all(r.ttft_percentile_s >= r.ttft_s))
    (True, True)

    ``cached_prompt_tokens`` H (prefix caching, :mod:`calc.traffic.prefix_cache`): of each prompt of
    ``input_len`` tokens, H are found in the cache; only I − H are prefilled (after H cached keys).
    ``input_quantile_tokens``: the percentile's own prompt length where the lengths are not a plain
    lognormal of mean I and CV ``input_cv`` (lengths cut to the window:
    :func:`calc.traffic.workload.cut_input_quantile`); None: that lognormal's quantile.
    """
    lam = np.asarray(rate_rps, dtype=float)
    H = np.asarray(cached_prompt_tokens, dtype=float)
    I, O, m, c, kw = _load_inputs(e, input_len=np.asarray(input_len, dtype=float) - H, output_len=output_len,
                                  input_cv=input_cv, output_cv=output_cv, max_num_seqs=max_num_seqs,
                                  kv_capacity_tokens=kv_capacity_tokens, max_num_batched_tokens=max_num_batched_tokens,
                                  enable_chunked_prefill=enable_chunked_prefill, speculative=speculative,
                                  cached_prompt_tokens=H)
    d, over = _decode_batch(e, rate_rps=lam, slots=c, **kw)
    load = engine_load(e, running=d, rate_rps=lam, budget_busy_periods=True, max_running=c, **kw)
    own = _own(e, load=load, running=d, rate_rps=lam, **kw)
    # a free sequence slot: M/G/c, service E2E, offered a = λ·E2E, peaked batch (the diffusion's
    # waiting probability with the peakedness, peaked_wait_probability)
    z = load.batch_peakedness
    with np.errstate(invalid="ignore"):  # 0 · inf where nothing decodes and the step is infinite: NaN, unstable
        e2e0 = load.residual_s + load.budget_wait_s + m * load.tpot_s + mean_over_prompts(
            lambda i: own(i, load.budget_wait_s), input_len=I, input_cv=input_cv)
    a = lam * e2e0
    with np.errstate(divide="ignore", invalid="ignore"):
        pw = np.where(np.isfinite(a), peaked_wait_probability(servers=c, offered_load=a, peakedness=z), 1.0)
        w_slot = np.where(pw > 0, (1.0 + np.asarray(output_cv, dtype=float) ** 2) / 2.0 * pw * z * e2e0
                          / np.maximum(c - a, 1e-12), 0.0)
    t_api = np.asarray(e.api_server_request_s, dtype=float)
    w_api, _ = mg1_wait_s(rate_rps=lam, service_s=t_api, service_m2_s2=t_api ** 2, service_m3_s3=t_api ** 3)
    q = np.asarray(percentile, dtype=float) / 100.0
    ctx = I + H + O * (1.0 + np.asarray(output_cv, dtype=float) ** 2) / 2.0
    floor = _batch_floor_s(e, load=load, input_len=I, others=lam * load.step_in_flight_s, running=d,
                           context_tokens=ctx, enable_chunked_prefill=enable_chunked_prefill, q=q, cached_tokens=H)
    i_q = None if input_quantile_tokens is None else np.asarray(input_quantile_tokens, dtype=float) - H
    mean, ttft_q, own_mean = _ttft(e, own=own, input_len=I, input_cv=input_cv, residual_s=load.residual_s,
                                   waits=((load.budget_wait_s, load.budget_wait_probability), (w_slot, pw)),
                                   api_wait=(w_api, lam * t_api), q=q, floor_s=floor, input_q=i_q)
    stable = ~over & np.isfinite(mean) & (a < c) & (lam * t_api < 1.0)
    # How often the peaked batch reaches the slots (normal, Var(R) = z·R): where the slots are the
    # KV pool, vLLM preempts and recomputes there instead of queueing, which this model does not follow
    with np.errstate(divide="ignore", invalid="ignore"):
        p_full = np.where(stable, 1.0 - np.vectorize(NormalDist().cdf)((c - a) / np.sqrt(z * np.maximum(a, 1e-12))), 1.0)
    def inf(x):  # past capacity the queue grows without bound
        return np.where(stable, x, np.inf)

    fixed = t_api + np.asarray(e.request_overhead_s, dtype=float)
    with np.errstate(invalid="ignore"):
        e2e = mean + m * load.tpot_s
        running = np.where(stable, lam * (e2e - fixed - w_api), c)
    return OpenLoop(ttft_s=inf(mean), ttft_percentile_s=inf(ttft_q), percentile=q * 100.0,
                    tpot_s=inf(load.tpot_s), e2e_latency_s=inf(e2e), running=running, slots=c,
                    api_wait_s=w_api, budget_wait_s=load.budget_wait_s, slot_wait_s=inf(w_slot),
                    step_residual_s=load.residual_s, own_prefill_s=own_mean, decode_step_s=load.decode_step_s,
                    prefill_utilization=load.prefill_utilization, api_utilization=lam * t_api, stable=stable,
                    slots_full_probability=p_full,
                    closed_form=stable & (p_full < SLOTS_FULL_LIMIT) & np.asarray(load.full_budget_drains, dtype=bool),
                    batch_peakedness=z, slot_wait_probability=pw, budget_utilization=load.budget_utilization,
                    budget_drains=np.asarray(load.full_budget_drains, dtype=bool))


def _load_inputs(e: EngineNumbers, *, input_len, output_len, input_cv, output_cv, max_num_seqs, kv_capacity_tokens,
                 max_num_batched_tokens, enable_chunked_prefill, speculative=None, cached_prompt_tokens=0.0):
    """(I, O, O − 1, slots c, the keyword arguments of :func:`engine_load`) of a load."""
    I = np.asarray(input_len, dtype=float)
    O = np.asarray(output_len, dtype=float)
    c = _slots(e, input_len=I, output_len=O, output_cv=output_cv, max_num_seqs=max_num_seqs,
               max_num_batched_tokens=max_num_batched_tokens, kv_capacity_tokens=kv_capacity_tokens,
               cached_prompt_tokens=cached_prompt_tokens)
    kw = dict(input_len=I, output_len=O, input_cv=input_cv, output_cv=output_cv,
              max_num_batched_tokens=max_num_batched_tokens, enable_chunked_prefill=enable_chunked_prefill,
              speculative=speculative)
    if np.any(np.asarray(cached_prompt_tokens) != 0):  # prefix caching (open_loop); absent: nothing changes
        kw["cached_prompt_tokens"] = cached_prompt_tokens
    return I, O, np.maximum(O - 1.0, 0.0), c, kw


def _decode_batch(e: EngineNumbers, *, rate_rps, slots, output_len, **kw):
    """(R, past capacity): the step-average decoding batch R = λ·(O − 1)·T̄(R) (decode tokens asked
    per second = made per second), by bisection on [0, c]; none there: past capacity."""
    lam = np.asarray(rate_rps, dtype=float)
    m = np.maximum(np.asarray(output_len, dtype=float) - 1.0, 0.0)
    c = np.asarray(slots, dtype=float)

    def excess(d):  # NaN where nothing decodes (m = 0) and the step is infinite (prompts past capacity): over
        step_s = engine_load(e, running=d, rate_rps=lam, output_len=output_len, **kw).mean_step_s
        with np.errstate(invalid="ignore"):
            return lam * m * step_s - d

    at_c = excess(c)
    over = ~(at_c <= 0)
    lo = np.zeros(np.broadcast_shapes(np.shape(c), np.shape(at_c)))
    if not np.any(m > 0):  # one output token (a prefill instance): nothing decodes, R = 0
        return lo, np.broadcast_to(over, lo.shape)
    hi = np.broadcast_to(c, lo.shape).astype(float)
    for _ in range(30):  # to c·2⁻³⁰ sequences
        mid = 0.5 * (lo + hi)
        up = excess(mid) > 0
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    return np.where(over, c, hi), over


def _steady_decode_batch(e: EngineNumbers, *, loop, slots, output_len, **kw):
    """The closed loop's step-average decoding batch, from its own steady state (Little's law over
    the decode phase): d = X·(O − 1)·TPOT, X and TPOT of ``loop``
    (:func:`calc.timing.serving.closed_loop`), at most ``slots``; where that loop has no TPOT
    (one output token, past the KV pool) the open-loop fixed point :func:`_decode_batch` at X.

    Why not that fixed point d = X·(O − 1)·T̄(d) everywhere: near saturation X·(O − 1)·T̄(d)
    runs almost parallel to d, so a 1 % change of X moves its root by tens of sequences
    (Llama-3.1-70B TP 4 n-gram, C = 128: X 2.887 → 2.855 requests/s moved the decode step 102 →
    87 ms); the loop that gave X already fixes how long its requests decode.

    X = 2 requests/s, 255 decode steps of 40 ms each: 2 · 255 · 0.04 = 20.4 sequences decoding.
    """
    X = np.asarray(loop.requests_per_s, dtype=float)
    m = np.maximum(np.asarray(output_len, dtype=float) - 1.0, 0.0)
    little = X * m * np.asarray(loop.tpot_s, dtype=float)
    if np.all(np.isfinite(little)):
        return np.minimum(little, slots)
    fallback, _ = _decode_batch(e, rate_rps=X, slots=slots, output_len=output_len, **kw)
    return np.where(np.isfinite(little), np.minimum(little, slots), fallback)


def _own(e: EngineNumbers, *, load: EngineLoad, running, rate_rps, input_len, output_len, output_cv,
         max_num_batched_tokens, enable_chunked_prefill, speculative=None, cached_prompt_tokens=0.0, **_):
    """own(I, wait, quantile=None): :func:`own_prefill_s` at this batch and rate."""
    ctx = np.asarray(input_len, dtype=float) + cached_prompt_tokens + np.asarray(output_len, dtype=float) * (
        1.0 + np.asarray(output_cv, dtype=float) ** 2) / 2.0

    def own(i, w, quantile=None):
        return own_prefill_s(e, input_len=i, wait_s=w, quantile=quantile, mean_input_len=input_len, running=running,
                             context_tokens=ctx, rate_rps=rate_rps, max_num_batched_tokens=max_num_batched_tokens,
                             enable_chunked_prefill=enable_chunked_prefill,
                             decode_budget_tokens=1.0 if speculative is None else speculative.num_speculative_tokens + 1.0,
                             decode_extra_s=load.speculative_extra_s, cached_prompt_tokens=cached_prompt_tokens)
    return own


def _own_quantile_len(*, input_len, input_cv, q, input_q=None):
    """The percentile's own prompt length: ``input_q`` where given (the cut lengths' own quantile,
    :func:`calc.traffic.workload.cut_input_quantile`), else the q-quantile of a lognormal of mean I and
    CV ``input_cv`` (:func:`lognormal_quantile`)."""
    return lognormal_quantile(mean=input_len, cv=input_cv, q=q) if input_q is None else input_q


def combined_excess_s(*excess_s, q):
    """How far the q-quantile of a sum of independent parts lies from its mean, from each part's own
    excess x_i = q_i − mean_i. Above the median (q > 0.5) the parts above their means add in
    quadrature, √(Σ (x_i⁺)²): the rule every upper percentile here is checked with. At the median
    and below, a skewed part (a wait that most requests skip, a lognormal prompt) is below its
    mean and the sum's median below the sum's mean: the parts below take off in quadrature,
    √(Σ (x_i⁺)²) − √(Σ (x_i⁻)²). Against long simulations (2 × 4,000+ requests, first quarter
    dropped; Llama-3.1-8B H100, Qwen2.5-7B and Llama-2-7B A100, lognormal CV 0.5-1): P50 of 8 closed
    loops +10 … +47 % (median 20 %) with the upper rule, −8 … +19 % (median |8| %) with this; of 9 open
    loops at 30-85 % of capacity +14 … +42 % (median 18 %) → −37 … +2 % (median |13| %).

    A wait of mean 40 ms that the median request skips (−40 ms) beside a prompt 30 ms longer at
    the quantile: at the median 30 − 40 = −10 ms; at P95 (each part's own P95 excess) only the parts above count.

    >>> round(float(combined_excess_s(-0.04, 0.03, q=0.5)), 3), round(float(combined_excess_s(-0.04, 0.03, q=0.95)), 3)
    (-0.01, 0.03)
    """
    up = np.sqrt(sum(np.maximum(np.asarray(x, dtype=float), 0.0) ** 2 for x in excess_s))
    down = np.sqrt(sum(np.minimum(np.asarray(x, dtype=float), 0.0) ** 2 for x in excess_s))
    return np.where(np.asarray(q, dtype=float) <= 0.5, up - down, up)


def _ttft(e: EngineNumbers, *, own, input_len, input_cv, residual_s, waits, api_wait, q, floor_s=(0.0, 0.0),
          input_q=None):
    """(mean, q-quantile, mean own prefill) of TTFT = t_api + W_api + t_req + residual + ΣW + own(ΣW)
    (``waits``: (mean, probability of waiting) pairs, ``api_wait`` the API server's). The quantile:
    the waits together with own(W) that grows with them, the prompts behind (Poisson), the own
    prompt's length (lognormal) and the API wait, each at its q-quantile, combined as
    :func:`combined_excess_s` (:func:`open_loop`). ``floor_s``: (mean, quantile) that the engine
    part is at least (the prompts that share one step, :func:`_batch_floor_s`), a part of its own.
    ``input_q``: the own prompt's length at the quantile (:func:`_own_quantile_len`)."""
    I = np.asarray(input_len, dtype=float)
    w = sum(x for x, _ in waits)
    w_api, p_api = api_wait
    fixed = np.asarray(e.api_server_request_s, dtype=float) + np.asarray(e.request_overhead_s, dtype=float)
    own_mean = mean_over_prompts(lambda i: own(i, w), input_len=I, input_cv=input_cv)  # the prompts' mean own time
    own_at_mean = own(I, w)  # the parts' quantiles below are read against the mean prompt's
    engine = residual_s + w + own_mean
    floor_mean, floor_q = floor_s
    lift = np.maximum(floor_mean - engine, 0.0)
    mean = fixed + w_api + engine + lift
    w_q = sum_wait_quantile_s(waits, q)
    with np.errstate(invalid="ignore"):  # past capacity: inf − inf, masked by the caller
        ex_wait = w_q + own(I, w_q) - (w + own_at_mean)
        ex_fill = own(I, w, quantile=q) - own_at_mean
        ex_len = own(_own_quantile_len(input_len=I, input_cv=input_cv, q=q, input_q=input_q), w) - own_at_mean
        ex_api = wait_quantile_s(mean_s=w_api, p_wait=p_api, q=q) - w_api
        ex_floor = np.where(lift > 0, floor_q - floor_mean, 0.0)
        spread = combined_excess_s(ex_wait, ex_fill, ex_len, ex_api, ex_floor, q=q)
    return mean, mean + spread, own_mean + lift


def _batch_floor_s(e: EngineNumbers, *, load: EngineLoad, input_len, others, running, context_tokens,
                   enable_chunked_prefill, q, cached_tokens=0.0):
    """(mean, q-quantile) of the engine time to the first token while prompts fit one step: the
    rest of the step in flight (T*/2; uniform within a T_mix step, time share π = f·T_mix/T̄, or a
    T_dec one) and then one step with our prompt and the ``others`` (Poisson) that arrived during
    it, beside the decodes: T*/2 + T_step(R, (1 + others)·I); the two parts' quantiles combine as
    in :func:`_ttft`."""
    chunked = np.asarray(enable_chunked_prefill, dtype=bool)

    def step(n):
        return prefill_step(e, prompts=1.0 + n, prompt_tokens=input_len, decode_batch=np.where(chunked, running, 0.0),
                            decode_context_tokens=context_tokens, cached_tokens=cached_tokens).step_s + np.where(chunked, load.speculative_extra_s, 0.0)

    others = np.asarray(others, dtype=float)
    mean = load.step_in_flight_s / 2.0 + step(others)
    t_mix, t_dec = load.mix_step_s, load.decode_step_s
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = np.clip(load.mix_share * t_mix / (load.mix_share * t_mix + (1.0 - load.mix_share) * t_dec), 0.0, 1.0)
        low = q / (pi / t_mix + (1.0 - pi) / np.maximum(t_dec, 1e-300))  # within a decode step's length
        high = t_mix * (1.0 - (1.0 - q) / pi)
        res_q = np.where(low <= t_dec, low, np.where(pi > 1.0 - q, high, t_dec))
    ex_res = np.maximum(np.nan_to_num(res_q) - load.step_in_flight_s / 2.0, 0.0)
    ex_others = step(poisson_quantile(mean=others, q=q)) - step(others)
    return mean, mean + np.sqrt(ex_res ** 2 + np.maximum(ex_others, 0.0) ** 2)


def finite_source_wait_s(*, customers, think_s, service_s, service_cv2=0.0):
    """(mean wait, probability of waiting) in a single FCFS server fed by C customers that each
    come back ``think_s`` after their service ends (a closed loop: the machine-repairman queue,
    which waits less than an open M/G/1 at the same rate because a customer in the queue is not
    also arriving). Mean value analysis, n = 1 … C (arrival theorem: an arrival sees the loop with
    n − 1 customers): W(n) = S·(1 + Q(n−1) − U(n−1)) + U(n−1)·S·(1 + C_s²)/2 (the one in service has
    its residual left, Reiser's approximation for general service), X(n) = n / (Z + W(n)),
    Q(n) = X(n)·W(n), U(n) = X(n)·S. The wait is W(C) − S; the probability of waiting U(C − 1).

    Two customers, service 1 s, think 1 s, exponential service (C_s² = 1): W(1) = 1, X(1) = 0.5,
    Q(1) = U(1) = 0.5; W(2) = 1 + 0.5 = 1.5, so the wait is 0.5 s (the exact M/M/1//2 value).

    >>> w, p = finite_source_wait_s(customers=2, think_s=1.0, service_s=1.0, service_cv2=1.0)
    >>> float(w), float(p)
    (0.5, 0.5)
    """
    C = np.asarray(customers, dtype=float)
    Z = np.asarray(think_s, dtype=float)
    S = np.asarray(service_s, dtype=float)
    r = (1.0 + np.asarray(service_cv2, dtype=float)) / 2.0
    shape = np.broadcast_shapes(C.shape, Z.shape, S.shape, r.shape)
    Q, U, W, U_prev = np.zeros(shape), np.zeros(shape), np.zeros(shape), np.zeros(shape)
    n_max = int(np.nanmax(np.where(np.isfinite(C), C, 1.0), initial=1.0))
    for n in range(1, n_max + 1):
        live = n <= C
        Wn = S * (1.0 + Q - U) + U * S * r
        with np.errstate(divide="ignore", invalid="ignore"):
            Xn = n / (Z + Wn)
        U_prev = np.where(live, U, U_prev)
        W = np.where(live, Wn, W)
        Q = np.where(live, Xn * Wn, Q)
        U = np.where(live, np.minimum(Xn * S, 1.0), U)
    return np.maximum(W - S, 0.0), U_prev


@dataclass(frozen=True)
class ClosedLoopTTFT:
    """TTFT of a closed loop of C clients in steady state, mean and a percentile (seconds)."""

    ttft_s: np.ndarray
    ttft_percentile_s: np.ndarray
    percentile: np.ndarray
    requests_per_s: np.ndarray  # X of :func:`calc.timing.serving.closed_loop`
    budget_wait_s: np.ndarray  # finite-source wait for the token budget
    api_wait_s: np.ndarray
    slot_wait_s: np.ndarray  # clients beyond the running batch: (C − R)/X
    own_prefill_s: np.ndarray
    # False where the steady state above does not describe the loop: identical requests (fixed
    # lengths) of C > 1 clients, which a deterministic engine keeps in a synchronized FCFS train
    # (calc.timing.serving.fcfs_wave; real clients' jitter dissolves it), or where closed_loop's
    # own flag is off (past the KV wall: preemption; clients queueing for the token budget)
    closed_form: np.ndarray

    @property
    def excess_s(self) -> np.ndarray:
        """The percentile's excess over the mean, P_q − mean: what the frontier and ``estimate`` add
        to the closed loop's mean they show (:func:`calc.timing.serving.closed_loop`'s, within
        ~1–5 % of :attr:`ttft_s`), so the two statistics come from one mean."""
        return np.asarray(self.ttft_percentile_s, dtype=float) - np.asarray(self.ttft_s, dtype=float)


def closed_loop_ttft(e: EngineNumbers, *, input_len, output_len, concurrency, max_num_seqs, max_num_batched_tokens,
                     kv_capacity_tokens, input_cv=0.0, output_cv=0.0, enable_chunked_prefill=True,
                     percentile=95.0, speculative=None, input_quantile_tokens=None) -> ClosedLoopTTFT:
    """Closed loop of C clients whose requests spread out (lengths that vary; the steady state of
    :func:`calc.timing.serving.closed_loop`, whose throughput X and running batch R it takes, and its
    decoding batch d = X·(O − 1)·TPOT, :func:`_steady_decode_batch`):
    the engine's steps at λ = X (:func:`engine_load`), then the TTFT terms of :func:`open_loop`
    with the queues of a finite population (:func:`finite_source_wait_s`): the token budget with
    service τ·I and the API server with t_api, each fed by the C clients whose cycle is C / X; the
    C − R clients beyond the batch wait (C − R)/X for a slot (Little). Where the prompt fits one
    step (chunked prefill, C > 1) the TTFT is instead the mixture of
    :func:`calc.traffic.arrival_trains.train_ttft_s` (clumps of α = X·T̄ completions per step, their
    API-server trains, the step in flight and the own step, speculative steps with the prompts in
    them priced by :func:`calc.timing.speculative.mixed_step_s`) + the slot wait, the own prompt's
    length spread beside it. Where the prompt spans k > 1 chunks (spread lengths, chunked, C > 1) the
    mean is closed_loop's (the prompts queue for the token budget: :mod:`calc.traffic.chunk_queue`,
    its wait W̄ and load ρ in ``budget_queue_wait_s`` / ``budget_queue_load``) plus the API
    server's wait, and the q-quantile is mean + :func:`combined_excess_s` over the budget wait (W̄, waiting with
    probability ρ, its tail that of the queue while busy at ρ_b, ``budget_queue_busy_load``:
    :func:`calc.traffic.chunk_queue.budget_wait_quantile_s`), the own prompt's length (own(I_q) − own(I)),
    the slot and the API waits. Qwen2.5-7B A100, 2048 / 128 lognormal CV 0.7, C = 32: P95 0.783 s
    against 0.906 s simulated (the exponential tail of mean W̄/ρ: 0.893 s), mean 0.440 / 0.405 s.

    ``input_quantile_tokens``: the own prompt's length at the percentile, as :func:`open_loop`'s.

    One client never queues: TTFT = t_api + t_req + its own prefill step (+ half a decode step
    only when others decode; none here).

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> from calc.timing.estimate import engine_numbers
    >>> from calc.timing.serving import prefill_step
    >>> e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"))
    >>> r = closed_loop_ttft(e, input_len=1024, output_len=256, concurrency=[1, 64], max_num_seqs=256,
    ...                      max_num_batched_tokens=8192, kv_capacity_tokens=400_000)
    >>> alone = 0.0145 + 0.030 + float(prefill_step(e, prompts=1, prompt_tokens=1024).step_s)
    >>> bool(np.isclose(r.ttft_s[0], alone)), bool(r.ttft_s[1] > r.ttft_s[0])
    (True, True)
    """
    C = np.asarray(concurrency, dtype=float)
    I, O, m, c, kw = _load_inputs(e, input_len=input_len, output_len=output_len, input_cv=input_cv,
                                  output_cv=output_cv, max_num_seqs=max_num_seqs, kv_capacity_tokens=kv_capacity_tokens,
                                  max_num_batched_tokens=max_num_batched_tokens,
                                  enable_chunked_prefill=enable_chunked_prefill, speculative=speculative)
    s = closed_loop(e, input_len=I, output_len=O, concurrency=C, max_num_seqs=max_num_seqs,
                    max_num_batched_tokens=max_num_batched_tokens, enable_chunked_prefill=enable_chunked_prefill,
                    kv_capacity_tokens=kv_capacity_tokens, fits=True, uniform_lengths=False, speculative=speculative,
                    output_cv=output_cv, input_cv=input_cv)
    X = s.requests_per_s
    d = _steady_decode_batch(e, loop=s, slots=np.minimum(c, C), **kw)
    load = engine_load(e, running=d, rate_rps=X, **kw)
    R = np.minimum(C, s.running)
    others = np.maximum(R - 1.0, 0.0) / np.maximum(R, 1.0)  # our own sequence neither decodes nor arrives behind us
    own = _own(e, load=load, running=d * others, rate_rps=X * others, **kw)
    room = np.where(np.asarray(enable_chunked_prefill, dtype=bool),
                    np.maximum(np.asarray(max_num_batched_tokens, dtype=float) - d, 1.0),
                    np.asarray(max_num_batched_tokens, dtype=float))
    # Clients come back when their requests finish, a fixed share of the decodes of every step:
    # prompts arrive at α = X·T̄ per step, not per second, so slow (full) steps bring no more of
    # them. The token budget is a finite-source queue in steps: service I/room steps, R clients
    # with a cycle of R/α steps; its wait in seconds is at full steps (T_full each).
    alpha = X * load.mean_step_s * (1.0 if speculative is None else speculative.tokens_per_step)  # per (speculative) step
    k = np.ceil(I / room)
    service = I / room
    cv2 = np.asarray(input_cv, dtype=float) ** 2
    w_pf, p_pf = np.zeros_like(service), np.zeros_like(service)
    for _ in range(3):  # the think time is the cycle less the time at the queue
        w_pf, p_pf = finite_source_wait_s(customers=R, think_s=np.maximum(R / alpha - service - w_pf, 0.0),
                                          service_s=service, service_cv2=cv2)
    w_pf = w_pf * load.full_step_s
    # the step in flight at an arrival: a share f = min(α·k, 1) of the steps carry a prompt
    t_mix = np.where(k > 1, load.full_step_s, own(I, 0.0))
    f = np.clip(alpha * k, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mix = f * t_mix + (1.0 - f) * load.decode_step_s
        residual = np.where((R > 1) & (mix > 0), (f * t_mix ** 2 + (1.0 - f) * load.decode_step_s ** 2) / (2.0 * mix), 0.0)
    own = _own(e, load=load, running=d * others, rate_rps=alpha / load.full_step_s * others, **kw)
    cycle = R / X
    t_api = np.asarray(e.api_server_request_s, dtype=float)
    ctx = I + O * (1.0 + np.asarray(output_cv, dtype=float) ** 2) / 2.0
    q = np.asarray(percentile, dtype=float) / 100.0
    floor = tuple(np.where(R > 1, x, 0.0) for x in _batch_floor_s(
        e, load=load, input_len=I, others=alpha * others, running=d * others, context_tokens=ctx,
        enable_chunked_prefill=enable_chunked_prefill, q=q))
    w_api, p_api = finite_source_wait_s(customers=C, think_s=np.maximum(C / X - t_api, 0.0), service_s=t_api)
    w_slot = np.maximum(C - R, 0.0) / X
    q = np.asarray(percentile, dtype=float) / 100.0
    mean, ttft_q, own_mean = _ttft(e, own=own, input_len=I, input_cv=input_cv,
                                   residual_s=residual,
                                   waits=((w_pf, p_pf), (w_slot, np.where(C > R, 1.0, 0.0))),
                                   api_wait=(w_api, p_api), q=q, floor_s=floor, input_q=input_quantile_tokens)
    # prompts that fit one step: completions come in clumps at step ends and reach the engine as
    # trains t_api apart; TTFT as one mixture (calc.traffic.arrival_trains), plus the wait for a
    # slot and the own prompt's length spread beside it
    fits = (k <= 1) & (R > 1) & np.asarray(enable_chunked_prefill, dtype=bool)
    if np.any(fits):
        from calc.traffic.arrival_trains import train_ttft_s  # noqa: PLC0415

        # a step holds the prompt tokens its room leaves beside the decodes (their drafts too), no more:
        # the prompts past it wait for the next step (arrival_trains.spill_share)
        fit = np.maximum(np.asarray(max_num_batched_tokens, dtype=float)
                         - d * (1.0 if speculative is None else speculative.num_speculative_tokens + 1.0), 1.0) / I

        def step_s(n):
            if n == 0:
                return load.decode_step_s
            p = np.minimum(float(n), fit)
            if speculative is not None:  # the verify rows and the drafter's pass priced beside the prompts
                return _mixed_s(e, speculative, batch=d, context_tokens=ctx, prompts=p, prompt_tokens=I)
            return prefill_step(e, prompts=p, prompt_tokens=I, decode_batch=d, decode_context_tokens=ctx).step_s

        # every clump the mixture counts is of OTHER clients (the prompts of the step in flight, the
        # outsiders, the own clump's mates, P(N)·[N > i]/α being P_α(N − 1)/N): they come from the
        # R − 1 sequences that decode beside ours (the arrival theorem of a closed network; as the
        # floor and the own step above, `others`). Llama-3.1-8B EAGLE-3 C = 8 (R = 8, α = 0.076):
        # simulated over 4,600 clump heads, 5.2-6.7 % meet a prompt step started at their finish
        # (α: 7.4 %, α·7/8: 6.4 %) and 2.8 % of the requests are not their clump's head (3.7 %, 3.2 %)
        t_mean, t_q = train_ttft_s(step_s=step_s, clump=alpha * others, fixed_s=t_api + np.asarray(e.request_overhead_s),
                                   api_s=t_api, q=q, fit=fit, delay_s=t_api + np.asarray(e.request_overhead_s),
                                   input_cv=input_cv)
        # the budget's queue is in the clump already (T_(1+M) holds the clump's prompts, those past the
        # room in the next step): only the clients beyond the batch wait besides
        w = w_slot
        w_q = wait_quantile_s(mean_s=w, p_wait=np.where(C > R, 1.0, 0.0), q=q)
        ex_len = own(_own_quantile_len(input_len=I, input_cv=input_cv, q=q, input_q=input_quantile_tokens), 0.0) - own(I, 0.0)
        mean = np.where(fits, t_mean + w, mean)
        # independent parts (the mixture, the slot wait, the own length) combine as in _ttft
        ttft_q = np.where(fits, t_mean + w + combined_excess_s(t_q - t_mean, w_q - w, ex_len, q=q), ttft_q)
    # prompts of k > 1 chunks (spread lengths, chunked, R > 1): they queue for the token budget, one
    # prompt's chunks after another's (calc.traffic.chunk_queue), and closed_loop's TTFT is that
    # queue's at its X (t_api, t_req and the slot wait in it): the mean is it plus the API server's
    # wait, and the quantile combines, as _ttft, the budget wait's (W̄ with probability ρ of waiting,
    # its tail at the busy load ρ_b: chunk_queue.budget_wait_quantile_s), the own prompt's length
    # (the extra chunk steps of an I_q-token prompt), the slot wait's and the API wait's excesses.
    spread = (np.asarray(input_cv, dtype=float) > 0) | (np.asarray(output_cv, dtype=float) > 0)
    multi = np.isfinite(s.budget_queue_wait_s) & spread  # fixed lengths: the FCFS train, flagged below
    if np.any(multi):
        w_b, rho = np.nan_to_num(s.budget_queue_wait_s), np.nan_to_num(s.budget_queue_load)
        from calc.traffic.chunk_queue import budget_wait_quantile_s  # noqa: PLC0415

        # the budget's queue of R clients: a normal tail near its capacity, not an exponential one
        # (chunk_queue.finite_source_factor: a client is away its decode steps and δ; service I/room steps),
        # its tail that of the queue while busy, one clump a full step (ρ_b), past a shift for the clumps
        # a busy period's first step catches (chunk_queue.budget_wait_quantile_s)
        m_steps = m / (1.0 if speculative is None else speculative.tokens_per_step)
        delay = t_api + np.asarray(e.request_overhead_s, dtype=float)
        z = m_steps + delay / load.mean_step_s
        ex_b = budget_wait_quantile_s(mean_s=w_b, load=rho, busy_load=s.budget_queue_busy_load, think_steps=z,
                                      service_steps=I / room, varying_steps=m_steps, cv=output_cv, q=q) - w_b
        ex_len = own(_own_quantile_len(input_len=I, input_cv=input_cv, q=q, input_q=input_quantile_tokens), 0.0) - own(I, 0.0)
        ex_slot = wait_quantile_s(mean_s=w_slot, p_wait=np.where(C > R, 1.0, 0.0), q=q) - w_slot
        ex_api = wait_quantile_s(mean_s=w_api, p_wait=p_api, q=q) - w_api
        m_b = np.asarray(s.ttft_s, dtype=float) + w_api
        mean = np.where(multi, m_b, mean)
        ttft_q = np.where(multi, m_b + combined_excess_s(ex_b, ex_len, ex_slot, ex_api, q=q),
                          ttft_q)
        w_pf = np.where(multi, w_b, w_pf)
    return ClosedLoopTTFT(ttft_s=mean, ttft_percentile_s=ttft_q, percentile=q * 100.0, requests_per_s=X,
                          budget_wait_s=w_pf, api_wait_s=w_api, slot_wait_s=w_slot, own_prefill_s=own_mean,
                          closed_form=s.closed_form & (spread | (C <= 1)))


def closed_loop_percentile_s(est, *, input_len, output_len, kv_capacity_tokens, input_cv=0.0, output_cv=0.0,
                             enable_chunked_prefill=True, percentile=95.0, speculative=None, input_quantile_tokens=None):
    """The closed loop's P-th percentile TTFT beside the mean an :class:`calc.timing.estimate.Estimate`
    ``est`` reports (its ``serving.ttft_s`` at its ``serving.concurrency``): that mean plus
    :attr:`ClosedLoopTTFT.excess_s` of :func:`closed_loop_ttft` on the same engine and limits, so
    ``estimate``'s mean and P95 (and ``simulate``'s analytic columns) come from one mean."""
    s = est.serving
    cl = closed_loop_ttft(est.engine, input_len=input_len, output_len=output_len, concurrency=s.concurrency,
                          max_num_seqs=est.max_num_seqs, max_num_batched_tokens=est.max_num_batched_tokens,
                          kv_capacity_tokens=kv_capacity_tokens, input_cv=input_cv, output_cv=output_cv,
                          enable_chunked_prefill=enable_chunked_prefill, percentile=percentile,
                          speculative=speculative, input_quantile_tokens=input_quantile_tokens)
    return np.asarray(s.ttft_s, dtype=float) + cl.excess_s


# Nodes of a sweep's closed-loop percentile (:func:`percentile_nodes`): each ~1 ms of CPU beside
# ~35 ms a call (the train mixture, :mod:`calc.traffic.arrival_trains`); 32 nodes over 1–1,024
# clients are 1.25× apart (tests/test_frontier.py holds the read between them to the exact model).
PERCENTILE_NODES = 32


def percentile_nodes(*, top, wall=None, points=PERCENTILE_NODES):
    """The client counts at which a sweep over 1 … ``top`` clients has its closed-loop percentile
    worked out (:func:`closed_loop_ttft`, read in between by :func:`interpolate_log_c`): ``points``
    integers log-spaced on [1, top], fewer where two round to one, and, where the engine's limit
    ``wall`` (the batch it can hold, R) lies inside, ⌊R⌋ and ⌊R⌋ + 1, 2, 4, 8, 16: past it the
    clients beyond the batch wait for a slot, a kink no line between far nodes follows, and the
    percentile's excess, √(a² + (b·(C − R))²) of a fixed part and the slot wait's, bends within a
    few clients of it.

    1 to 64 clients on 7 nodes (ratio 64^(1/6) = 2), a wall at 20.5:

    >>> percentile_nodes(top=64, points=7).tolist()
    [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
    >>> percentile_nodes(top=64, wall=20.5, points=7).tolist()
    [1.0, 2.0, 4.0, 8.0, 16.0, 20.0, 21.0, 22.0, 24.0, 28.0, 32.0, 36.0, 64.0]
    """
    top = max(float(top), 1.0)
    nodes = np.round(np.geomspace(1.0, top, int(points)))
    if wall is not None and np.isfinite(wall) and 1.0 <= float(wall) < top:
        past = np.floor(float(wall)) + np.array([0.0, 1.0, 2.0, 4.0, 8.0, 16.0])
        nodes = np.concatenate([nodes, past[past <= top]])
    return np.unique(nodes)


def interpolate_log_c(*, nodes, values, at):
    """``values`` known at the increasing client counts ``nodes``, read at ``at``: linear in log C
    between neighbouring nodes, held at the end values outside. Nodes whose value is not finite are
    left out; with none left, NaN.

    0.1 s at 10 clients and 0.3 s at 40: at 20 clients, halfway in log C, 0.2 s.

    >>> round(float(interpolate_log_c(nodes=np.array([10.0, 40.0]), values=np.array([0.1, 0.3]), at=20.0)), 12)
    0.2
    """
    x, y = np.asarray(nodes, dtype=float), np.asarray(values, dtype=float)
    ok = np.isfinite(y) & (x > 0)
    at = np.asarray(at, dtype=float)
    if not np.any(ok):
        return np.full(at.shape, np.nan)
    return np.interp(np.log(np.maximum(at, 1e-300)), np.log(x[ok]), y[ok])


@dataclass(frozen=True)
class Burst:
    """N requests sent at t = 0 (``vllm bench serve --request-rate inf``), over all N (seconds)."""

    ttft_s: np.ndarray  # mean
    ttft_percentile_s: np.ndarray
    percentile: np.ndarray
    makespan_s: np.ndarray  # first arrival to last finish
    requests_per_s: np.ndarray  # N / makespan
    slots: np.ndarray  # c
    bound_by: np.ndarray  # what sets the last request's first token: "api_server" | "token_budget" | "slots"


def burst(e: EngineNumbers, *, input_len, output_len, num_requests: int, max_num_seqs, max_num_batched_tokens,
          kv_capacity_tokens, input_cv=0.0, output_cv=0.0, percentile=95.0) -> Burst:
    """N requests at t = 0 through the API server and a chunked-prefill engine with c slots; the
    first token of request i (0-based, first come first served) is the latest of three clocks
    plus its own prefill step T_own (:func:`own_prefill_s`, alone, beside n/2 decodes, n = min(N, c_f)):
      API server:    t_api·(N·(1 − f) + f·(i + 1)) + t_req, f = Efficiency.api_server_final_share (the
                     requests take turns in its event loop and leave after N·(1 − f)·t_api, f·t_api
                     apart: calc.traffic.simulator.frontend_entry_s; f = 1: one after another);
      token budget:  N·(1 − f)·t_api + (i + 1)·τ·I + t_req, τ = T_full / room (from the first request out
                     of the API server the budget clears a prompt per τ·I; a full step holds room·k/I
                     chunks of I/k tokens, k = ⌈I / room⌉);
      slots (i ≥ c_f): t_a + (i − c_f + 1)/X, the engine's completions at its full-batch throughput X
                     (:func:`calc.timing.serving.closed_loop` at C = n; the FCFS wave for fixed
                     lengths, the spread state otherwise), from t_a = N·(1 − f)·t_api + t_0 − min(cv_O·(O − 1)·T_dec, c/X)/2:
                     the first batch finishes at t_0 = (n·I/room)·T_full + (O − 1 − n·I/room)·T_dec
                     (its prompts, then its decodes), all at once for fixed lengths, spread around
                     t_0 for varied ones. c_f ≥ c: while the first batch fills (n·I/room steps) a
                     sequence holds its prompt and half those steps' tokens, not I + O·(1 + cv²)/2, so
                     more fit (:func:`_slots` at that context); the ones past c are preempted later.
    Mean and percentile over the N first tokens; makespan = the last first token + (O − 1) decode
    steps of the draining batch (n/2 on average).
    ``num_requests`` is one whole number (the request axis is added and reduced here); every other
    input broadcasts.

    Hand-worked API-bound case: a GPU fast enough that only the API server counts, t_api = 20 ms,
    t_req = 0, 100 requests, one after another (f = 1): TTFT_i ≈ 0.02·(i + 1) + T_own, mean ≈ 0.02 · 50.5
    = 1.01 s + T_own; taking turns with f = 0.2, none is through before 0.02 · 80 = 1.6 s, then one every 4 ms,
    faster than the engine clears their prompts: the token budget sets the pace from there.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> from calc.timing.estimate import engine_numbers
    >>> from calc.spec.inputs import Efficiency
    >>> kw = dict(input_len=128, output_len=16, num_requests=100, max_num_seqs=256,
    ...           max_num_batched_tokens=8192, kv_capacity_tokens=1_000_000)
    >>> for f in (1.0, 0.2):
    ...     e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"), efficiency=Efficiency(
    ...         api_server_request_s=0.02, api_server_final_share=f, request_overhead_s=0.0))
    ...     b = burst(e, **kw)
    ...     print(round(float(b.ttft_s), 2), str(b.bound_by))
    1.02 api_server
    1.89 token_budget
    """
    I = np.asarray(input_len, dtype=float)[..., None]
    O = np.asarray(output_len, dtype=float)[..., None]
    cv_o = np.asarray(output_cv, dtype=float)[..., None]
    B = np.asarray(max_num_batched_tokens, dtype=float)[..., None]
    N = int(num_requests)
    m = np.maximum(O - 1.0, 0.0)
    c = _slots(e, input_len=I, output_len=O, output_cv=cv_o, max_num_seqs=np.asarray(max_num_seqs)[..., None],
               max_num_batched_tokens=B, kv_capacity_tokens=np.asarray(kv_capacity_tokens)[..., None])
    # while the first batch fills, a sequence holds its prompt and the tokens decoded since its
    # admission, one a step, half the fill's n·I/room steps on average: more of them fit than in the
    # steady state (I + O·(1 + cv²)/2 each); the sequences past c are preempted as they grow
    n_steady = np.minimum(float(N), c)
    fill_steps = n_steady * I / np.maximum(B - n_steady / 2.0, 1.0)
    c_fill = np.maximum(c, _slots(e, input_len=I, output_len=fill_steps, output_cv=0.0,
                                  max_num_seqs=np.asarray(max_num_seqs)[..., None], max_num_batched_tokens=B,
                                  kv_capacity_tokens=np.asarray(kv_capacity_tokens)[..., None]))
    n = np.minimum(float(N), c_fill)
    s = closed_loop(e, input_len=I, output_len=O, concurrency=n_steady, max_num_seqs=np.asarray(max_num_seqs)[..., None],
                    max_num_batched_tokens=B, enable_chunked_prefill=True,
                    kv_capacity_tokens=np.asarray(kv_capacity_tokens)[..., None], fits=True,
                    uniform_lengths=(np.asarray(input_cv)[..., None] == 0) & (cv_o == 0))
    X = s.requests_per_s
    ctx = mean_decode_context_tokens(input_len=I, output_len=O, output_cv=cv_o)
    half = n / 2.0  # decodes beside a prompt, on average, while the first batch fills
    room = np.maximum(B - half, 1.0)
    # a full step holds room / c chunks of c = I / k tokens (k = ⌈I / room⌉), as engine_load prices it:
    # not one prompt of `room` tokens, whose attention grows with room² (Llama-3.1-8B H100, budget
    # 8192, 1024-token prompts: 18 % slower steps than the simulator's)
    k = np.ceil(I / room)
    chunk = I / k
    t_full = prefill_step(e, prompts=room / chunk, prompt_tokens=chunk, decode_batch=half, decode_context_tokens=ctx,
                          cached_tokens=(k - 1.0) / 2.0 * chunk).step_s
    t_own = own_prefill_s(e, input_len=I, mean_input_len=I, running=half, context_tokens=ctx, rate_rps=0.0,
                          wait_s=0.0, max_num_batched_tokens=B)
    t_dec = decode_step(e, batch=n, context_tokens=ctx).step_s
    t_api = np.asarray(e.api_server_request_s, dtype=float)
    f_api = np.asarray(e.api_server_final_share, dtype=float)
    t_req = np.asarray(e.request_overhead_s, dtype=float)
    i = np.arange(N, dtype=float)
    first_out = t_api * N * (1.0 - f_api)  # the API server lets none through before (f = 1: 0)
    api = first_out + t_api * f_api * (i + 1.0) + t_req  # calc.traffic.simulator.frontend_entry_s
    budget = first_out + (i + 1.0) * t_full / room * I + t_req
    wave = n * I / room
    t0 = wave * t_full + np.maximum(m - wave, 0.0) * t_dec
    t_a = first_out + t0 - np.minimum(cv_o * m * t_dec, c / X) / 2.0
    slot = np.where(i >= c_fill, t_a + (i - c_fill + 1.0) / X, 0.0)
    start = np.maximum(np.maximum(api, budget), slot)
    ttft = start + t_own
    last = np.stack([api[..., -1], budget[..., -1], slot[..., -1]])
    names = np.array(["api_server", "token_budget", "slots"])
    # the last request decodes as the batch drains: on average half of it beside it
    makespan = ttft[..., -1] + (m * decode_step(e, batch=np.maximum(half, 1.0), context_tokens=ctx).step_s)[..., 0]
    q = np.asarray(percentile, dtype=float)
    return Burst(ttft_s=ttft.mean(axis=-1), ttft_percentile_s=np.percentile(ttft, q, axis=-1), percentile=q,
                 makespan_s=makespan, requests_per_s=N / makespan, slots=c[..., 0],
                 bound_by=names[np.argmax(last, axis=0)])
