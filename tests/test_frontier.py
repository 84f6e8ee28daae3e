"""calc/timing/frontier.py: SLA mask, best feasible point, knee, cost. Expected values by hand."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calc.spec.catalog import get_gpu, get_model
from calc.timing.estimate import estimate
from calc.timing.frontier import (COURSE_TPOT_SLO_S, COURSE_TTFT_SLO_S, best_feasible, concurrency_points,
                           cost_per_million_tokens_usd, knee_index, power, sla_feasible)
from calc.spec.inputs import ServingConfig


class TestSlaFeasible:
    def test_course_targets(self):
        assert (COURSE_TTFT_SLO_S, COURSE_TPOT_SLO_S) == (0.5, 0.05)  # course §3.4

    def test_boundary_counts_as_meeting(self):
        assert bool(sla_feasible(ttft_s=0.5, tpot_s=0.05, ttft_slo_s=0.5, tpot_slo_s=0.05))

    def test_each_target_alone_fails(self):
        m = sla_feasible(ttft_s=[0.501, 0.1, np.nan], tpot_s=[0.01, 0.0501, 0.01], ttft_slo_s=0.5, tpot_slo_s=0.05)
        assert m.tolist() == [False, False, False]

    def test_broadcast_over_slo_values(self):
        m = sla_feasible(ttft_s=np.array([0.1, 0.3, 0.6]), tpot_s=0.01, ttft_slo_s=np.array([[0.2], [0.5]]),
                         tpot_slo_s=0.05)
        assert m.tolist() == [[True, False, False], [True, True, False]]


class TestBestFeasible:
    def test_max_among_feasible(self):
        assert best_feasible(throughput=[10.0, 40.0, 30.0], feasible=[True, False, True]) == (2, 30.0)

    def test_tie_takes_lowest_concurrency(self):
        assert best_feasible(throughput=[10.0, 50.0, 50.0, 50.0], feasible=[True] * 4) == (1, 50.0)

    def test_none_feasible(self):
        i, v = best_feasible(throughput=[10.0, 20.0], feasible=[False, False])
        assert i == -1 and np.isnan(v)

    def test_nan_throughput_never_best(self):
        assert best_feasible(throughput=[np.nan, 5.0], feasible=[True, True]) == (1, 5.0)

    def test_rows(self):
        i, v = best_feasible(throughput=[[1.0, 3.0, 2.0], [4.0, 5.0, 6.0]],
                             feasible=[[True, True, True], [True, True, False]])
        assert i.tolist() == [1, 1] and v.tolist() == [3.0, 5.0]


class TestKnee:
    def test_littles_law_closed_form(self):
        # E2E = a + b·C (a fixed service time plus a shared bottleneck): X = C/(a + bC),
        # power = C/(a + bC)² peaks at C = a/b = 16 (d/dC = 0 -> a + bC = 2bC).
        c = np.arange(1.0, 129.0)
        e2e = 1.0 + c / 16.0
        assert c[knee_index(throughput=c / e2e, latency_s=e2e)] == 16.0

    def test_power(self):
        assert float(power(throughput=300.0, latency_s=0.5)) == 600.0

    def test_nan_skipped_and_all_nan(self):
        assert knee_index(throughput=[np.nan, 2.0, 3.0], latency_s=[1.0, 1.0, 1.0]) == 2
        assert knee_index(throughput=[np.nan], latency_s=[1.0]) == -1

    def test_rows(self):
        x = np.array([[1.0, 2.0, 2.1], [1.0, 1.5, 3.0]])
        assert knee_index(throughput=x, latency_s=np.ones_like(x)).tolist() == [2, 2]

    def test_on_the_model_sits_before_saturation(self):
        c = concurrency_points(top=512, n=128)
        r = estimate(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"),
                     ServingConfig(input_len=1024, output_len=256), concurrency=c).serving
        k = knee_index(throughput=r.output_tokens_per_s, latency_s=r.e2e_latency_s)
        x = r.output_tokens_per_s
        assert 0 < k < len(c) - 1
        # Elasticity d ln X / d ln C is about 1/2 at the knee (Little's law).
        el = np.gradient(np.log(x), np.log(c))
        assert 0.3 < el[k] < 0.7
        assert x[k] < np.nanmax(x)


class TestCost:
    def test_by_hand(self):
        # H100 $4.916/h, TP 2, 2,000 tokens/s: 4.916·2/3600/2000·1e6 = $1.3656 per million tokens
        assert float(cost_per_million_tokens_usd(price_usd_per_gpu_hour=4.916, num_gpus=2, tokens_per_s=2000.0)) \
            == pytest.approx(1.365555, rel=1e-5)

    def test_zero_or_nan_rate(self):
        v = cost_per_million_tokens_usd(price_usd_per_gpu_hour=1.0, num_gpus=1, tokens_per_s=[0.0, np.nan, 3600.0])
        assert np.isnan(v[0]) and np.isnan(v[1]) and v[2] == pytest.approx(1e6 / 3600 / 3600)


class TestConcurrencyPoints:
    def test_small_top_every_integer(self):
        assert concurrency_points(top=5).tolist() == [1, 2, 3, 4, 5]

    @settings(max_examples=60, deadline=None)
    @given(top=st.integers(1, 2_000_000), n=st.integers(16, 512))
    def test_properties(self, top, n):
        p = concurrency_points(top=top, n=n)
        assert p[0] == 1 and p[-1] == top
        assert np.all(np.diff(p) > 0)
        assert len(p) <= max(n, 1) and len(p) >= min(top, n) - 2


def test_the_frontier_percentile_between_its_nodes_is_the_models():
    """ui.perf.view.closed_loop_percentile works the closed loop's P95 out at 32 log-spaced client counts
    and at the engine's limit (calc.traffic.queueing.percentile_nodes) and reads it in between: at every
    point of the sweep within 6 % of closed_loop_ttft itself (the mean plus its excess), median under 1 %.
    Llama-3.1-8B H100, 2,500 + 256 tokens, lognormal CV 1, budget 1,024 (a slot wall at the KV pool)."""
    import numpy as np  # noqa: PLC0415

    from calc.spec.catalog import get_gpu, get_model  # noqa: PLC0415
    from calc.spec.inputs import Efficiency, ServingConfig  # noqa: PLC0415
    from calc.timing.speculative import drafter_and_kv_capacity  # noqa: PLC0415
    from calc.traffic.queueing import closed_loop_ttft  # noqa: PLC0415
    from ui.perf import view as V  # noqa: PLC0415
    from ui.perf.controls import Variant  # noqa: PLC0415

    arch, gpu, eff = get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"), Efficiency()
    sc = ServingConfig(input_len=2500, output_len=256, max_model_len=20_000, max_num_batched_tokens=1024)
    v = Variant("", sc, gpu, True, None, "lognormal", 1.0, arch.max_position_embeddings)
    p = V.probe(v, arch, eff)
    conc = V.sweep_concurrency([p], 32)
    mean = V.cached_estimate(v, arch, eff, conc).serving.ttft_s
    got = V.closed_loop_percentile(v, arch, eff, concurrency=conc, mean_s=mean, percentile=95.0)
    cut = v.cut
    _, kv = drafter_and_kv_capacity(p, None, gpu=gpu, serving=sc, efficiency=eff)
    exact = closed_loop_ttft(p.engine, input_len=cut.input_mean, output_len=cut.output_mean, concurrency=conc,
                             max_num_seqs=p.max_num_seqs, max_num_batched_tokens=p.max_num_batched_tokens,
                             kv_capacity_tokens=kv, input_cv=cut.input_cv, output_cv=cut.output_cv, percentile=95.0,
                             input_quantile_tokens=v.input_quantile_tokens(95.0))
    err = np.abs(got / (mean + exact.excess_s) - 1.0)
    assert float(err.max()) <= 0.06 and float(np.median(err)) <= 0.01
    assert bool(np.all(got > mean))
