"""calc.traffic.prompt_clusters: prompts come in clusters of engine steps (an AR(1) chain of
prompts per step, coefficient ρ_p), so an open loop's batch is more peaked and a decoding sequence
meets the prompt steps' larger batches. By hand, as properties, and against the simulator on the
cell of issue 21 that it closes (Llama-3.1-70B TP 4, EAGLE-3, 85 % of capacity: TPOT −21 % before)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calc.traffic.prompt_clusters import (arrival_dispersion, clustered_peakedness, lifetime_overlap,
                                          prompt_cluster_tpot_s)


class TestArrivalDispersion:
    def test_by_hand(self):
        # D = 1/(1 − ρ)²: ρ = 0 → 1 (Poisson); 0.5 → 4; 0.647 → 1/0.353² = 8.0251
        got = arrival_dispersion(prefill_utilization=np.array([0.0, 0.5, 0.647]))
        assert got.tolist() == pytest.approx([1.0, 4.0, 8.0251], rel=1e-4)

    def test_past_the_engine_inf(self):
        assert np.isinf(arrival_dispersion(prefill_utilization=1.0))

    @given(st.floats(0.0, 0.99), st.floats(0.0, 0.99))
    def test_rises_with_the_prompt_share(self, a, b):
        lo, hi = sorted((a, b))
        assert arrival_dispersion(prefill_utilization=lo) <= arrival_dispersion(prefill_utilization=hi)


class TestLifetimeOverlap:
    def test_by_hand(self):
        # cv = 0.5: σ = √ln 1.25 = 0.472381, σ/√2 = 0.334024, Φ = 0.630819, θ = 2 − 1.261638 = 0.738362;
        # fixed lengths: 1
        assert lifetime_overlap(cv=np.array([0.0, 0.5])).tolist() == pytest.approx([1.0, 0.738362], abs=2e-6)

    def test_exponential_like_spread_halves_it(self):
        # cv = 1: σ = √ln 2 = 0.832555, Φ(0.588705) = 0.721970, θ = 0.556059 (an exponential's is 1/2)
        assert float(lifetime_overlap(cv=1.0)) == pytest.approx(0.556059, abs=2e-6)

    @settings(max_examples=30)
    @given(st.floats(0.0, 3.0), st.floats(0.0, 3.0))
    def test_falls_with_the_spread_within_0_1(self, a, b):
        lo, hi = sorted((a, b))
        x, y = float(lifetime_overlap(cv=lo)), float(lifetime_overlap(cv=hi))
        assert 0.0 < y <= x <= 1.0


class TestClusteredPeakedness:
    def test_by_hand(self):
        # ρ = 0.5 (D = 4): fixed lengths 1 + 3 · 1 = 4; cv 0.5: 1 + 3 · 0.738362 = 3.215085
        got = clustered_peakedness(prefill_utilization=0.5, output_cv=np.array([0.0, 0.5]))
        assert got.tolist() == pytest.approx([4.0, 3.215085], abs=1e-5)

    def test_without_prompts_poisson(self):
        assert float(clustered_peakedness(prefill_utilization=0.0, output_cv=0.5)) == 1.0


class TestPromptClusterTPOT:
    def test_by_hand(self):
        # ρ = 0.5, T̄ = 40 ms, R = 50, L = 100 (β = 0.01): 0.25 · 0.040 / (0.75 · (1 − 0.495) · 50) = 0.528053 ms;
        # L → ∞: 0.25 · 0.040 / (0.75 · 0.5 · 50) = 0.533333 ms
        got = prompt_cluster_tpot_s(mean_step_s=0.040, prefill_utilization=0.5, running=50.0,
                                    lifetime_steps=np.array([100.0, 1e12]))
        assert (got * 1e3).tolist() == pytest.approx([0.528053, 0.533333], abs=1e-6)

    def test_nothing_without_prompts_or_batch(self):
        got = prompt_cluster_tpot_s(mean_step_s=0.04, prefill_utilization=np.array([0.0, 0.5]),
                                    running=np.array([[50.0], [0.0]]), lifetime_steps=100.0)
        assert got.shape == (2, 2)
        assert got[0, 0] == 0.0 and got[1, 1] == 0.0 and got[0, 1] > 0.0

    def test_past_the_engine_inf(self):
        assert np.isinf(prompt_cluster_tpot_s(mean_step_s=0.04, prefill_utilization=1.0, running=50.0,
                                              lifetime_steps=100.0))


def _open_case(model_i, spec, load):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import speculative_sim_vs_analytic as b  # noqa: PLC0415

    return b.open_case(*b.CASES[model_i], load, spec)


def test_open_loop_tpot_near_capacity_with_long_prompts_against_the_simulator():
    # bench/speculative_sim_vs_analytic.py: Llama-3.1-70B TP 4, 2048-token prompts, EAGLE-3, 85 % of
    # capacity: simulated TPOT 61.0 ms, analytic 48.4 ms (−21 %) before the prompt clusters, 58.6 ms after
    d = _open_case(1, "eagle3 k=3 a=0.7", 0.85)
    sim, ana = d["sim"][2], d["ana"][2]
    assert ana == pytest.approx(sim, rel=0.10)
