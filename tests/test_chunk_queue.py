"""The token budget's queue of a closed loop whose prompts span several chunks (calc.traffic.chunk_queue.chunk_queue):
a queue with an exceptional first service (Welch), hand-checked where its clumps are trivial."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calc.traffic.chunk_queue import chunk_queue

BASE = dict(decode_step_s=0.02, full_step_s=0.1, last_step_s=0.05, chunks=3.0, service_steps=2.5, others=1.0,
            idle_wait_s=0.005)


def test_without_delays_it_is_pollaczek_khinchine():
    # delay 0: every step catches exactly one clump of completions (c = P(D < T) + E[min(D, T)]/T_b = 1 + 0),
    # so a busy period's first step brings no extras (e = 0) and the wait is P-K's for a deterministic service.
    # α = 0.1 prompts per step: ρ = ρ_b = α·s = 0.1 · 2.5 = 0.25; S = s·T_full = 2.5 · 0.1 = 0.25 s;
    # W = ρ·S / (2(1 − ρ)) = 0.25 · 0.25 / 1.5 = 0.041667 s;
    # TTFT = (1 − ρ)(w_idle + T_last) + W + (k − 1)·T_full + ρ·T_full
    #      = 0.75 · 0.055 + 0.041667 + 0.2 + 0.025 = 0.307917 s
    ttft, rho, share, t_bar, wait, rho_b = chunk_queue(**BASE, delay_s=0.0).per_step(0.1)
    assert float(rho) == pytest.approx(0.25) and float(rho_b) == pytest.approx(0.25)
    assert float(wait) == pytest.approx(0.25 * 0.25 / 1.5)
    assert float(ttft) == pytest.approx(0.75 * 0.055 + 0.25 * 0.25 / 1.5 + 0.2 + 0.025)
    # T̄ = T_0 + α·P_pf, P_pf = (k − 1)·T_full + T_last − k·T_0 = 0.2 + 0.05 − 0.06 = 0.19 s
    assert float(t_bar) == pytest.approx(0.02 + 0.1 * 0.19)
    # prompt steps: α·((1 − ρ)·k + ρ·s) = 0.1 · (0.75 · 3 + 0.25 · 2.5) = 0.2875
    assert float(share) == pytest.approx(0.2875)


@settings(max_examples=60, deadline=None)
@given(alpha=st.floats(0.005, 0.3), delay=st.floats(0.001, 0.2), wait_factor=st.floats(0.3, 2.0))
def test_the_opening_step_brings_the_extras(alpha, delay, wait_factor):
    # with delays a busy period's first full step follows decode steps and catches more (c_first > c_next):
    # e = (ρ − ρ_b)/(1 − ρ) extras, and the wait is P-K's at the busy load plus their part S·e(1 + e/2)/(1 + e)
    q = chunk_queue(**BASE, delay_s=delay, wait_factor=wait_factor)
    ttft, rho, _, _, wait, rho_b = (float(x) for x in q.per_step(alpha))
    if rho >= 0.95 or rho_b >= 0.95:  # the cap (MAX_LOAD): past it the caller flags the regime
        return
    assert rho >= rho_b - 1e-12
    e = (rho - rho_b) / (1.0 - rho)
    S = 2.5 * 0.1
    pk = wait_factor * rho_b * S / (2.0 * (1.0 - rho_b))
    assert wait == pytest.approx(pk + S * e * (1.0 + e / 2.0) / (1.0 + e), rel=1e-9, abs=1e-12)
    assert ttft >= 0.2 + 0.005  # the k − 1 full steps and at least the idle wait or a full last step


def test_more_prompts_per_step_wait_longer():
    rates = np.linspace(0.01, 0.3, 30)
    out = chunk_queue(**BASE, delay_s=0.05).per_step(rates)
    ttft, rho, wait = out[0], out[1], out[4]
    assert np.all(np.diff(rho) > 0) and np.all(np.diff(wait) > 0) and np.all(np.diff(ttft) > 0)
