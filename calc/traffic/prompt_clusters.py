"""Prompts come in clusters of engine steps, and the decoding batch follows them: what an open
loop's TPOT gains from it (checked against :func:`calc.traffic.simulator.simulate`,
bench/speculative_sim_vs_analytic.py, bench/sim_vs_analytic.py --shapes).

Mechanism, in steps (t counts engine steps). Under chunked prefill a step carries the prompts
that arrived while the step before it ran: n_t ~ Poisson(λ·T_(t−1)), and a prompt adds P = T_pf
to its step, T_t = T_dec + P·n_t. So n_t − n̄ = a·(n_(t−1) − n̄) + noise with a = λ·P = ρ_p (the
share of engine time the prompts take, :func:`calc.traffic.queueing.engine_load`) and noise of
variance n̄ = λ·T̄ (Poisson): an AR(1) chain, lag-1 autocorrelation of the step time ρ_p (Llama-3.1-70B
TP 4, 2048-token prompts at 85 % of capacity: ρ_p = 0.65 analytic, 0.67 in the simulator). Two
consequences that the step-average batch R = λ·(O − 1)·T̄ misses:

  1. counted per step, prompts arrive over-dispersed: the sum of n over many steps is the sum of
     the noises over (1 − a), index of dispersion D = 1/(1 − ρ_p)² (:func:`arrival_dispersion`;
     simulator, same case: 8.6 over windows of 50 steps, D = 8.0). The batch, the sequences that
     arrived within their lifetime of L = (O − 1)/τ steps, adds the cross terms of the sequences of
     one cluster that are still both alive, (D − 1)·n̄·∫S(v)²dv with S the survival of the
     lifetime (:func:`lifetime_overlap`): Var(R) = R·(1 + (D − 1)·θ), θ = ∫S²/E[L], before the
     feedback through the step time (× 1/(1 − ε), :func:`calc.traffic.queueing.engine_load`;
     simulator, same case: Var(R)/R = 9.9, this 6.2 × 1.57 = 9.7);
  2. a decoding sequence is counted in every step it decodes in, so its TPOT is the mean step
     weighted by the batch of each step, E[R·T]/E[R] (a size-biased mean), and the steps that
     carry prompts have larger batches: the sequences decoding in step t include the prompts of
     steps t − 1, t − 2, … (each still there with probability (1 − β)^(j−1), β = 1/L), which
     correlate with n_t as a^j: Cov(R_t, n_t) = Var(n)·a/(1 − a·(1 − β)), Var(n) = n̄/(1 − a²),
     and TPOT gains P·Cov(R_t, n_t)/R (:func:`prompt_cluster_tpot_s`).

A closed loop has neither: its clients come back per finished request, a fixed share of each
step, not per second (:func:`calc.traffic.queueing.closed_loop_ttft`).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np


def arrival_dispersion(*, prefill_utilization):
    """Index of dispersion D of the prompts per engine step over many steps (variance over mean of
    their sum), when each step carries the prompts that arrived during the step before and a prompt
    lengthens its step by T_pf (module docstring): D = 1/(1 − ρ_p)², ρ_p = λ·T_pf the share of
    engine time on prompts; 1 without prompts (Poisson), inf at ρ_p ≥ 1.

    ρ_p = 0.5: the prompts of one step bring half a prompt more into the next, and so on:
    D = 1/(1 − 0.5)² = 4.

    >>> float(arrival_dispersion(prefill_utilization=0.5))
    4.0
    """
    a = np.asarray(prefill_utilization, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(a < 1.0, 1.0 / np.maximum(1.0 - np.clip(a, 0.0, None), 1e-300) ** 2, np.inf)


def lifetime_overlap(*, cv):
    """θ = ∫S(v)² dv / E[L] of a lognormal lifetime L of coefficient of variation ``cv`` (S its
    survival function): the share of its life two sequences that start together are both still
    there, E[min(L₁, L₂)]/E[L] = 1 − G with G = 2Φ(σ/√2) − 1 the lognormal's Gini coefficient,
    σ² = ln(1 + cv²). Fixed lengths (cv = 0): 1.

    cv = 0.5: σ = √ln 1.25 = 0.4724, Φ(0.3340) = 0.6308, θ = 2 − 2 · 0.6308 = 0.738.

    >>> round(float(lifetime_overlap(cv=0.5)), 3)
    0.738
    """
    s = np.sqrt(np.log1p(np.asarray(cv, dtype=float) ** 2))
    return 2.0 - 2.0 * np.vectorize(NormalDist().cdf)(s / np.sqrt(2.0))


def clustered_peakedness(*, prefill_utilization, output_cv):
    """Var(R)/R of the decoding batch fed by clustered prompts, before the step time's feedback
    (module docstring, consequence 1): 1 + (D − 1)·θ, D = :func:`arrival_dispersion`,
    θ = :func:`lifetime_overlap` of the output length.

    ρ_p = 0.5 (D = 4), fixed output lengths (θ = 1): 1 + 3 · 1 = 4.

    >>> float(clustered_peakedness(prefill_utilization=0.5, output_cv=0.0))
    4.0
    """
    d = arrival_dispersion(prefill_utilization=prefill_utilization)
    return 1.0 + (d - 1.0) * lifetime_overlap(cv=output_cv)


def prompt_cluster_tpot_s(*, mean_step_s, prefill_utilization, running, lifetime_steps):
    """What a decoding sequence's TPOT gains because the steps that carry prompts have larger
    batches (module docstring, consequence 2), P·Cov(R_t, n_t)/R with P = ρ_p/λ and n̄ = λ·T̄:

        ΔTPOT = ρ_p² · T̄ / ((1 − ρ_p²) · (1 − ρ_p·(1 − β)) · R),  β = 1/L,

    T̄ the mean step per output token, R the step-average decoding batch, L its sequences'
    lifetime in steps. 0 without prompts or without a batch (a prefill-only engine), else inf at ρ_p ≥ 1.

    ρ_p = 0.5, T̄ = 40 ms, R = 50, L = 100 steps: 0.25 · 0.040 / (0.75 · 0.505 · 50) = 0.528 ms.

    >>> round(float(prompt_cluster_tpot_s(mean_step_s=0.040, prefill_utilization=0.5, running=50.0,
    ...                                   lifetime_steps=100.0)) * 1e3, 3)
    0.528
    """
    a = np.clip(np.asarray(prefill_utilization, dtype=float), 0.0, None)
    t = np.asarray(mean_step_s, dtype=float)
    r = np.asarray(running, dtype=float)
    beta = 1.0 / np.maximum(np.asarray(lifetime_steps, dtype=float), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = a ** 2 * t / ((1.0 - a ** 2) * (1.0 - a * (1.0 - beta)) * r)
    return np.where((r > 0) & (a > 0), np.where(a < 1.0, out, np.inf), 0.0)
