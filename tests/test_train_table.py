"""calc.traffic.train_table: the stored table is the mixture's (a sample of nodes recomputed), the
interpolation stays within its stated error of calc.traffic.arrival_trains.train_ttft_s, the
edges clip, and calc.timing.serving.closed_loop uses it for spread arrivals only."""

from __future__ import annotations

import numpy as np
import pytest

from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import ServingConfig
from calc.timing.estimate import estimate
from calc.traffic.arrival_trains import train_ttft_s
from calc.traffic.train_table import AXES, DELAY_NODES, TABLE_PATH, axis_values, reduced_mean, train_mean_s


def test_stored_table_is_the_mixture_on_a_sample_of_nodes():
    """Stale file (arrival_trains or AXES changed): run bench/make_train_table.py."""
    with np.load(TABLE_PATH) as z:
        h, axes, delay = z["h"], z["axes"], z["delay_nodes"]
    assert h.shape == (*(n for _, _, n in AXES), DELAY_NODES.size) and np.allclose(axes, np.array(AXES))
    assert np.array_equal(delay, DELAY_NODES)
    rng = np.random.default_rng(0)
    idx = tuple(rng.integers(0, n, 60) for _, _, n in AXES)
    a, p, t = (axis_values(i)[j] for i, j in enumerate(idx))
    jd = rng.integers(0, DELAY_NODES.size, 60)
    got = reduced_mean(clump=a, prompt_ratio=p, api_ratio=t, delay_ratio=DELAY_NODES[jd])
    assert got == pytest.approx(h[(*idx, jd)], rel=1e-6)


def test_at_a_node_the_interpolation_is_the_mixture():
    # node (α, P/T_0, t_api/T_0, δ/T_0) = AXES values 10, 20, 9 and DELAY_NODES[5] = 2; T_0 = 20 ms,
    # fixed 30 ms, δ = 2 · 20 = 40 ms
    a, p, t = axis_values(0)[10], axis_values(1)[20], axis_values(2)[9]
    ref, _ = train_ttft_s(step_s=lambda n: 0.02 + p * 0.02 * n, clump=np.array(a), fixed_s=0.03, api_s=t * 0.02,
                          q=None, delay_s=0.04)
    got = train_mean_s(decode_step_s=0.02, prompt_s=p * 0.02, clump=a, fixed_s=0.03, api_s=t * 0.02, delay_s=0.04)
    assert float(got) == pytest.approx(float(ref), rel=1e-6)


def test_interpolation_within_its_stated_error_on_random_configurations():
    """bench/train_table_check.py on 3,000: max 8.0 % (α ≤ 4), 17.7 % (α to 32), p99 2.9 % / 3.3 %,
    with δ 2-200 ms (the largest where a step T_n = T_0 + n·P ends near δ at small P/T_0 and large α)."""
    rng = np.random.default_rng(7)
    n = 400

    def lu(lo, hi):
        return np.exp(rng.uniform(np.log(lo), np.log(hi), n))

    a, p, t = lu(1e-3, 4.0), lu(*AXES[1][:2]), lu(*AXES[2][:2])
    t0, fixed, delay = lu(0.005, 0.1), rng.uniform(0.0, 0.06, n), lu(2e-3, 0.2)
    ref, _ = train_ttft_s(step_s=lambda k: t0 + p * t0 * k, clump=a, fixed_s=fixed, api_s=t * t0, q=None,
                          delay_s=delay)
    err = np.abs(train_mean_s(decode_step_s=t0, prompt_s=p * t0, clump=a, fixed_s=fixed, api_s=t * t0,
                              delay_s=delay) / ref - 1.0)
    assert err.max() < 0.09 and np.percentile(err, 99) < 0.05  # 6.8 %, 3.7 % on these 400


def test_alpha_to_zero_is_half_a_decode_step_then_one_prompt_step():
    # T_0 = 10 ms, P = 50 ms, fixed 50 ms, α → 0: 50 + 10/2 + (10 + 50) = 115 ms, whatever t_api,
    # δ long (length-biased: the step in flight waited half; 10 s reads as the edge δ/T_0 = 1000)
    # or δ = 5 ms (D uniform on [0, 10 ms]: the decode step started at the finish met, its rest
    # 10 ms − D, 5 ms on average)
    got = train_mean_s(decode_step_s=0.01, prompt_s=0.05, clump=[1e-9, 1e-4], fixed_s=0.05, api_s=[0.0, 0.02],
                       delay_s=[[10.0], [0.005]])
    assert got.ravel().tolist() == pytest.approx([0.115] * 4, rel=5e-3)
    # δ = 8 ms, D uniform on [0, 16] ms: within the first decode step 10/16 of the time (rest 5 ms on
    # average), else in the next one: E[(D − 10 ms)⁺] = 6²/32 = 1.125 ms over 6/16, a window of 3 ms,
    # rest uniform on [7, 10] ms (8.5): 0.625 · 5 + 0.375 · 8.5 = 6.3125 ms, 50 + 6.3125 + 60 = 116.31 ms.
    # δ = 12 ms, D on [0, 24] ms: 10/24 in the first (5 ms); E[(D − 10)⁺] − E[(D − 20)⁺] =
    # (14² − 4²)/48 = 3.75 ms over 14/24, a window of 6.43 ms, rest mean 10 − 3.21 = 6.79 ms:
    # 0.4167 · 5 + 0.5833 · 6.786 = 6.042 ms, 116.04 ms (a delay known exactly: 112 and 119 ms)
    got = train_mean_s(decode_step_s=0.01, prompt_s=0.05, clump=1e-9, fixed_s=0.05, api_s=0.02, delay_s=[0.008, 0.012])
    assert got.tolist() == pytest.approx([0.1163125, 0.1160417], rel=5e-3)


def test_edges_clip():
    # beyond the grid the value of its edge: α 100 reads as α 32, t_api/T_0 0 as 1e-3
    kw = dict(decode_step_s=0.02, prompt_s=0.04, fixed_s=0.0, delay_s=0.05)
    assert float(train_mean_s(clump=100.0, api_s=0.01, **kw)) == float(train_mean_s(clump=32.0, api_s=0.01, **kw))
    assert float(train_mean_s(clump=1.0, api_s=0.0, **kw)) == pytest.approx(float(train_mean_s(clump=1.0, api_s=2e-5, **kw)))
    # δ/T_0 past 1000 reads as 1000, below 0 (not met) as 0
    kw = dict(decode_step_s=0.02, prompt_s=0.04, fixed_s=0.0, clump=1.0, api_s=0.01)
    assert float(train_mean_s(delay_s=100.0, **kw)) == float(train_mean_s(delay_s=20.0, **kw))


def test_closed_loop_spread_arrivals_take_the_train_mixture():
    """Llama-3.1-8B H100 1024/256 C = 128, spread lengths: the long-run simulator's mean TTFT is
    185 ms (bench/sim_vs_analytic.py --long); the old own + d_ttft gave 124 ms, the trains 181 ms.
    The FCFS wave (uniform lengths) does not use them."""
    arch, gpu = get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm")
    sc = ServingConfig(input_len=1024, output_len=256, concurrency=128)
    spread = estimate(arch, gpu, sc, uniform_lengths=False).serving
    assert 0.16 < float(spread.ttft_s) < 0.21
    # Little: X = C / E2E still holds with the new TTFT
    assert float(spread.requests_per_s) == pytest.approx(128 / float(spread.e2e_latency_s), rel=1e-9)
