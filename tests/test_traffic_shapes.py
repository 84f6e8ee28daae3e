"""calc.traffic.queueing: the analytic model of each traffic shape (open loop at a rate, closed loop
of C clients, burst at t = 0) against the request-level simulator on a bounded subset of
`bench/sim_vs_analytic.py --shapes` (mean and P95 TTFT within 15 %), queueing formulas against
hand-worked values, and properties (TTFT rises with the load; finite below capacity, inf past it)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.timing.estimate import engine_numbers, estimate
from calc.traffic.queueing import (burst, closed_loop_ttft, erlang_c, finite_source_wait_s, lognormal_moment,
                                   lognormal_quantile, mg1_wait_s, open_loop, poisson_quantile, sum_wait_quantile_s,
                                   wait_quantile_s)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import sim_vs_analytic  # noqa: E402

M8, QWEN, M70 = sim_vs_analytic.SHAPES_CASES

# (case, lengths CV, shape, load / clients / requests): a spread of the --shapes grid, about 30 s
SUBSET = [(M8, 0.7, "open", 0.5), (M8, 0.0, "open", 0.9), (QWEN, 0.0, "open", 0.7), (QWEN, 0.7, "open", 0.9),
          (M70, 0.7, "open", 0.5), (M8, 0.7, "closed", 8), (QWEN, 0.7, "closed", 32), (M70, 0.7, "closed", 8),
          (M8, 0.0, "burst", 64), (QWEN, 0.0, "burst", 512), (M70, 0.7, "burst", 512),
          (M8, 0.7, "burst", 512)]  # just past the slots: +25 / +23 % until the fill's slots and chunked full steps


@pytest.mark.parametrize("case,cv,shape,x", SUBSET, ids=[f"{c[0].split('/')[1]}-cv{cv}-{s}-{x}" for c, cv, s, x in SUBSET])
def test_analytic_ttft_within_15_percent_of_the_simulator(case, cv, shape, x):
    # at 90 % of capacity one 4,000-request run is not the long run (its own arrivals move its load more than the
    # models differ): three runs of 20,000 pooled, each asked at its own rate (compare_shape's seeds)
    near = shape == "open" and x >= 0.9
    d = sim_vs_analytic.compare_shape(*case, cv, shape, x, **(dict(num_requests=20_000, seeds=(1, 2, 3)) if near else {}))
    assert d["closed_form"]
    assert d["mean_s"] == pytest.approx(d["sim_mean_s"], rel=0.15)
    assert d["p95_s"] == pytest.approx(d["sim_p95_s"], rel=0.15)


def _full_batch(case):
    est, _, _ = sim_vs_analytic.shapes_setup(*case)
    return est


def test_the_kv_wall_is_flagged_not_hidden():
    # Llama-3.1-70B FP8 TP 2 at 90 % of capacity: the batch reaches the KV pool and vLLM preempts
    # (89 preemptions in 4,000 simulated requests, mean TTFT 1.4 s against 0.87 s here): flagged.
    est = _full_batch(M70)
    kw = dict(input_len=3000, output_len=300, max_num_seqs=est.max_num_seqs,
              max_num_batched_tokens=est.max_num_batched_tokens, kv_capacity_tokens=est.memory.kv_pool_tokens)
    r = open_loop(est.engine, rate_rps=np.array([0.7, 0.9]) * float(est.serving.requests_per_s), **kw)
    assert r.closed_form.tolist() == [True, False]
    assert bool(np.all(r.stable))
    # fixed lengths in a closed loop of several clients: the deterministic FCFS train, flagged
    c = closed_loop_ttft(est.engine, concurrency=[1, 8], **kw)
    assert c.closed_form.tolist() == [True, False]


class TestQueueingByHand:
    def test_md1_wait(self):
        # M/D/1, S = 22 ms at 30 req/s: ρ = 0.66, W = λ·S²/(2(1 − ρ)) = 30·0.000484/0.68 = 21.35 ms
        w, w2 = mg1_wait_s(rate_rps=30.0, service_s=0.022, service_m2_s2=0.022 ** 2, service_m3_s3=0.022 ** 3)
        assert float(w) == pytest.approx(30 * 0.000484 / 0.68)
        # Takács: E[W²] = 2W² + λ·S³/(3(1 − ρ))
        assert float(w2) == pytest.approx(2 * float(w) ** 2 + 30 * 0.022 ** 3 / (3 * 0.34))

    def test_mg1_past_capacity_is_inf(self):
        w, _ = mg1_wait_s(rate_rps=[10.0, 50.0], service_s=0.022, service_m2_s2=0.022 ** 2, service_m3_s3=0.022 ** 3)
        assert np.isfinite(w[0]) and np.isinf(w[1])

    def test_erlang_c(self):
        # one server: the probability of waiting is ρ; two servers at a = 1: 1/3 (textbook M/M/2)
        assert erlang_c(servers=[1, 1], offered_load=[0.3, 0.8]).tolist() == pytest.approx([0.3, 0.8])
        assert float(erlang_c(servers=2, offered_load=1.0)) == pytest.approx(1 / 3)
        # c = 3, a = 2: B_3 = (8/6) / (1 + 2 + 2 + 8/6) = 4/19; C = B/(1 − (2/3)(1 − B)) = 12/25 (Erlang C table 0.444...)
        b3 = (8 / 6) / (1 + 2 + 2 + 8 / 6)
        assert float(erlang_c(servers=3, offered_load=2.0)) == pytest.approx(b3 / (1 - 2 / 3 * (1 - b3)))
        assert float(erlang_c(servers=4, offered_load=5.0)) == 1.0

    def test_finite_source_mm1_two_customers(self):
        # M/M/1//2, μ = 1, think rate 1: states 0,1,2 with p ∝ 1, 2, 2; L = (2 + 4)/5 = 1.2,
        # throughput X = μ·(1 − p0) = 0.8, sojourn L/X... exact wait via the arrival theorem = 0.5 s
        w, p = finite_source_wait_s(customers=2, think_s=1.0, service_s=1.0, service_cv2=1.0)
        assert (float(w), float(p)) == pytest.approx((0.5, 0.5))

    def test_finite_source_one_customer_never_waits(self):
        w, p = finite_source_wait_s(customers=[1, 1], think_s=[0.1, 5.0], service_s=0.3)
        assert w.tolist() == [0.0, 0.0] and p.tolist() == [0.0, 0.0]

    def test_finite_source_approaches_the_open_queue(self):
        # many customers with a long think time: Poisson arrivals at λ = C/(Z + …) → M/M/1
        C, Z, S = 2000, 2000 / 0.5, 1.0  # λ ≈ 0.5 / s, ρ ≈ 0.5: open M/M/1 wait ρS/(1 − ρ) = 1 s
        w, _ = finite_source_wait_s(customers=C, think_s=Z, service_s=S, service_cv2=1.0)
        assert float(w) == pytest.approx(1.0, rel=0.02)

    def test_wait_quantile(self):
        # P(W > t) = π·exp(−π t / W̄): W̄ = 0.1, π = 0.5 → P95 = 0.2·ln(10); π below 5 %: 0
        assert wait_quantile_s(mean_s=[0.1, 0.1], p_wait=[0.5, 0.04], q=0.95).tolist() == pytest.approx(
            [0.2 * math.log(10), 0.0])

    @pytest.mark.parametrize("waits", [((0.0565, 0.467), (0.0557, 0.029)), ((0.05, 0.3), (0.05, 0.3)),
                                       ((0.2, 1.0), (0.01, 0.2)), ((0.1, 0.5), (0.0, 0.0))])
    def test_two_waits_quantile_matches_their_sum_drawn(self, waits):
        # W1 + W2, each 0 with probability 1 − π and else exponential of mean W̄/π: 2 million draws
        rng = np.random.default_rng(0)
        n = 2_000_000
        total = sum(np.where(rng.random(n) < p, rng.exponential(w / p, n), 0.0) if p > 0 else np.zeros(n) for w, p in waits)
        got = sum_wait_quantile_s(list(waits), [0.5, 0.9, 0.95])
        assert got.tolist() == pytest.approx(np.quantile(total, [0.5, 0.9, 0.95]).tolist(), rel=0.01, abs=1e-4)

    def test_poisson_quantile(self):
        # mean 2: P(N ≤ 4) = 0.947, P(N = 5) = 0.0361 → 4 + (0.95 − 0.947)/0.0361
        cdf4 = sum(math.exp(-2) * 2 ** k / math.factorial(k) for k in range(5))
        p5 = math.exp(-2) * 2 ** 5 / 120
        assert float(poisson_quantile(mean=2.0, q=0.95)) == pytest.approx(4 + (0.95 - cdf4) / p5)

    def test_lognormal(self):
        # CV 1: σ² = ln 2; E[X²] = mean²·2; median = mean/√2
        assert float(lognormal_moment(mean=10.0, cv=1.0, k=2)) == pytest.approx(200.0)
        assert float(lognormal_quantile(mean=10.0, cv=1.0, q=0.5)) == pytest.approx(10 / math.sqrt(2))
        assert float(lognormal_quantile(mean=10.0, cv=0.0, q=0.95)) == 10.0


ENGINE = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"))
KW = dict(input_len=1024, output_len=256, max_num_seqs=256, max_num_batched_tokens=8192, kv_capacity_tokens=400_000)


class TestOpenLoop:
    def test_broadcasts_over_rate_and_lengths(self):
        r = open_loop(ENGINE, rate_rps=np.array([1.0, 4.0, 8.0])[:, None], **{**KW, "input_len": [512, 2048]})
        assert r.ttft_s.shape == r.ttft_percentile_s.shape == r.tpot_s.shape == (3, 2)
        assert bool(np.all(np.diff(r.ttft_s, axis=0) > 0)) and bool(np.all(r.ttft_s[:, 1] > r.ttft_s[:, 0]))

    def test_low_rate_is_one_request_alone(self):
        # at 0.01 req/s nobody queues: t_api + t_req + the prompt's own step (nothing decodes beside it)
        from calc.timing.serving import prefill_step
        r = open_loop(ENGINE, rate_rps=0.01, **KW)
        alone = 0.0145 + 0.030 + float(prefill_step(ENGINE, prompts=1, prompt_tokens=1024).step_s)
        assert float(r.ttft_s) == pytest.approx(alone, rel=0.02)

    def test_api_server_bounds_the_rate(self):
        e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"),
                           efficiency=Efficiency(api_server_request_s=0.1))  # 10 requests/s at most
        r = open_loop(e, rate_rps=[5.0, 10.0], **{**KW, "input_len": 64, "output_len": 4})
        assert r.stable.tolist() == [True, False] and np.isinf(r.ttft_s[1])
        # M/D/1 at ρ = 0.5: W = 5·0.01/(2·0.5) = 50 ms
        assert float(r.api_wait_s[0]) == pytest.approx(0.05)


CATALOG = [("meta-llama/Llama-3.1-8B", "h100-sxm", 1), ("Qwen/Qwen2.5-7B", "a100-80gb", 1),
           ("meta-llama/Llama-3.1-70B", "h100-sxm", 4), ("mistralai/Mistral-7B-v0.1", "l40s", 1)]
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.sampled_from(CATALOG), st.integers(64, 4096), st.integers(2, 1024), st.sampled_from([0.0, 0.5, 1.0]))
def test_open_loop_ttft_rises_with_rate_finite_below_capacity_inf_past(mgt, I, O, cv):
    model, gpu, tp = mgt
    est = estimate(get_model(model), get_gpu(gpu), ServingConfig(input_len=I, output_len=O, tensor_parallel_size=tp,
                                                                  max_model_len=8192), concurrency=np.nan)
    X = float(est.serving.requests_per_s)
    rates = X * np.array([0.05, 0.2, 0.4, 0.6, 0.8, 2.0])
    r = open_loop(est.engine, input_len=I, output_len=O, rate_rps=rates, input_cv=cv, output_cv=cv,
                  max_num_seqs=est.max_num_seqs, max_num_batched_tokens=est.max_num_batched_tokens,
                  kv_capacity_tokens=est.memory.kv_pool_tokens)
    finite = np.isfinite(r.ttft_s)
    assert bool(np.all(np.diff(r.ttft_s[finite]) >= -1e-12)) and bool(np.all(np.diff(finite.astype(int)) <= 0))  # non-decreasing (inf past capacity)
    assert bool(np.all(np.isfinite(r.ttft_s[:2]))) and bool(np.all(r.stable[:2]))  # well below capacity
    assert bool(np.isinf(r.ttft_s[-1])) and not bool(r.stable[-1]) and not bool(r.closed_form[-1])  # twice it
    ok = np.isfinite(r.ttft_s)
    assert bool(np.all(r.ttft_percentile_s[ok] >= r.ttft_s[ok]))


@SETTINGS
@given(st.sampled_from(CATALOG[:2]), st.integers(64, 4096), st.integers(2, 512))
def test_closed_loop_and_burst_ttft_rise_with_clients_and_requests(mgt, I, O):
    model, gpu, tp = mgt
    est = estimate(get_model(model), get_gpu(gpu), ServingConfig(input_len=I, output_len=O, tensor_parallel_size=tp,
                                                                  max_model_len=8192), concurrency=np.nan)
    kw = dict(input_len=I, output_len=O, max_num_seqs=est.max_num_seqs, input_cv=0.5, output_cv=0.5,
              max_num_batched_tokens=est.max_num_batched_tokens, kv_capacity_tokens=est.memory.kv_pool_tokens)
    c = closed_loop_ttft(est.engine, concurrency=[1, 4, 16, 64], **kw)
    assert bool(np.all(np.diff(c.ttft_s) >= -1e-9 * c.ttft_s[1:]))
    means = [float(burst(est.engine, num_requests=n, **kw).ttft_s) for n in (1, 16, 256)]
    assert means == sorted(means)


class TestCliRate:
    OPTS = {"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "input_len": 1024, "output_len": 256}

    def test_rate_adds_the_open_loop_and_keeps_the_closed_loop_fields(self):
        from calc.cli.estimate import estimate_record
        plain = estimate_record(dict(self.OPTS))
        with_rate = estimate_record({**self.OPTS, "rate": 8})
        assert {k: with_rate[k] for k in plain} == plain
        est = estimate(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"),
                       ServingConfig(input_len=1024, output_len=256))
        r = open_loop(est.engine, input_len=1024, output_len=256, rate_rps=8.0, max_num_seqs=est.max_num_seqs,
                      max_num_batched_tokens=est.max_num_batched_tokens, kv_capacity_tokens=est.memory.kv_pool_tokens)
        assert with_rate["open_loop_ttft_s"] == pytest.approx(float(r.ttft_s))
        assert with_rate["open_loop_ttft_p95_s"] == pytest.approx(float(r.ttft_percentile_s))
        assert with_rate["open_loop_stable"] is True and with_rate["open_loop_closed_form"] is True

    def test_rate_says_when_the_token_budget_is_busy_near_capacity(self):
        # Llama-3.1-8B H100, 2,500 + 256 tokens, budget 1,024: the long-run grid's engine whose TTFT near capacity
        # (ρ_q 0.70 at 85 %) climbs steeply with the rate and whose simulated runs differ by their seed (1.5x in P95)
        from calc.cli.estimate import estimate_record
        from calc.traffic.queueing import NEAR_CAPACITY_BUDGET_UTILIZATION
        opts = {**self.OPTS, "input_len": 2500, "max_num_batched_tokens": 1024}
        low, high = estimate_record({**opts, "rate": 2}), estimate_record({**opts, "rate": 5})
        assert low["open_loop_near_capacity"] is False and high["open_loop_near_capacity"] is True
        assert low["open_loop_budget_utilization"] < NEAR_CAPACITY_BUDGET_UTILIZATION
        assert NEAR_CAPACITY_BUDGET_UTILIZATION <= high["open_loop_budget_utilization"] < 1.0
        # the open loop's own ρ_q (engine_load's budget_utilization), as `estimate --rate` reports it
        est = estimate(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"),
                       ServingConfig(input_len=2500, output_len=256, max_num_batched_tokens=1024))
        r = open_loop(est.engine, input_len=2500, output_len=256, rate_rps=5.0, max_num_seqs=est.max_num_seqs,
                      max_num_batched_tokens=1024, kv_capacity_tokens=est.memory.kv_sequence_tokens)
        assert high["open_loop_budget_utilization"] == pytest.approx(float(r.budget_utilization), rel=1e-9)

    def test_rate_past_capacity_is_null_and_flagged(self):
        from calc.cli.estimate import estimate_record
        r = estimate_record({**self.OPTS, "rate": 500})
        assert r["open_loop_ttft_s"] is None and r["open_loop_stable"] is False

    @pytest.mark.parametrize("bad", [0, -1, "x", True, 1e9])
    def test_bad_rate_is_a_usage_error(self, bad):
        from calc.cli.args import UsageError
        from calc.cli.estimate import estimate_record
        with pytest.raises(UsageError, match="rate"):
            estimate_record({**self.OPTS, "rate": bad})


def test_open_loop_prompt_cost_with_speculation_is_the_mixed_step():
    # A prompt that fits one step, few arrivals (one prompt per step that carries one): its marginal
    # engine time is that of ONE forward with the verify rows beside it and the drafter over it,
    # mixed_step_s(1 prompt, R) − speculative_step(R) (not a prefill beside plain decodes plus the
    # decode step's speculative extra, which is 2-4 ms less for Llama-3.1-8B EAGLE-3 at R = 20-100)
    from calc.spec.speculative import parse_speculative_config
    from calc.timing.speculative import drafter_for, mixed_step_s, speculative_step
    from calc.traffic.queueing import engine_load

    e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"))
    d = drafter_for(e, parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}))
    ctx = 1024 + 256 / 2  # I + O·(1 + 0)/2
    load = engine_load(e, input_len=1024, output_len=256, running=40.0, rate_rps=1.0, max_num_batched_tokens=8192,
                       speculative=d)
    want = mixed_step_s(e, d, batch=40.0, context_tokens=ctx, prompts=1.0, prompt_tokens=1024) \
        - speculative_step(e, d, batch=40.0, context_tokens=ctx).step_s
    assert float(load.prefill_s) == pytest.approx(float(want), rel=1e-9)


def test_open_loop_prompt_cost_counts_the_spread_prompts_quadratic_attention():
    # Token j of a prompt reads the j keys before it: Σ j ≈ I²/2 over the prompt, so prompts of mean I
    # and CV c read E[I²]/2 = (1 + c²)·I²/2 keys, as if each token had c²·I/2 = 1,000 more keys before
    # it (I = 2,000, c = 1). One prompt per step, nothing decoding: the marginal cost is that step.
    from calc.timing.serving import prefill_step
    from calc.traffic.queueing import engine_load

    kw = dict(input_len=2000, output_len=1, running=0.0, rate_rps=0.01, max_num_batched_tokens=8192)
    spread = engine_load(ENGINE, input_cv=1.0, **kw).prefill_s
    fixed = engine_load(ENGINE, input_cv=0.0, **kw).prefill_s
    assert float(fixed) == pytest.approx(float(prefill_step(ENGINE, prompts=1, prompt_tokens=2000).step_s), rel=1e-9)
    assert float(spread) == pytest.approx(
        float(prefill_step(ENGINE, prompts=1, prompt_tokens=2000, cached_tokens=1000).step_s), rel=1e-9)
    assert float(spread) > float(fixed)


def test_the_median_lies_below_the_mean_where_the_parts_are_skewed():
    """calc.traffic.queueing.combined_excess_s at the median: a wait most requests skip and a lognormal
    prompt put the median below the mean. Llama-3.1-8B H100, 2,500 + 256 tokens lognormal CV 1, budget
    1,024, 64 clients: the simulator's P50 388 ms against a 520 ms mean (2 x 6,000 requests, first quarter
    dropped); the model's P50 under its mean (the upper rule alone gave the mean, +47 %), its P95 above."""
    from calc.traffic.simulator import EngineConfig, simulate  # noqa: PLC0415
    from calc.traffic.workload import length_spec, make_workload  # noqa: PLC0415

    arch, gpu = get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm")
    sc = ServingConfig(input_len=2500, output_len=256, max_model_len=22_048, max_num_batched_tokens=1024)
    est = estimate(arch, gpu, sc, concurrency=np.nan)
    kv = float(est.memory.kv_sequence_blocks) * sc.block_size
    kw = dict(input_len=2500, output_len=256, concurrency=64, max_num_seqs=est.max_num_seqs,
              max_num_batched_tokens=est.max_num_batched_tokens, kv_capacity_tokens=kv, input_cv=1.0, output_cv=1.0)
    p50, p95 = (closed_loop_ttft(est.engine, percentile=q, **kw) for q in (50.0, 95.0))
    assert float(p50.ttft_percentile_s) < float(p50.ttft_s) < float(p95.ttft_percentile_s)
    w = make_workload(input_len=length_spec("lognormal", 2500, 1.0), output_len=length_spec("lognormal", 256, 1.0),
                      max_model_len=22_048, seed=1, num_requests=4000, arrival="closed", concurrency=64)
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=True, num_blocks=int(est.memory.kv_sequence_blocks), block_size=sc.block_size)
    t = np.asarray(simulate(est.engine, w, cfg).ttft_s[1000:])
    assert float(p50.ttft_percentile_s) == pytest.approx(float(np.percentile(t[np.isfinite(t)], 50)), rel=0.25)


def test_open_loop_budget_is_busy_as_long_as_the_simulators():
    """The open loop prices its token budget as its busy periods run (engine_load(budget_busy_periods=True)):
    full steps at the batch over time, R·TPOT/T̄, and each busy period's half-empty last step. Llama-3.1-8B
    H100, 2,500 + 256 fixed, budget 1,024, 85 % of capacity, 6,000 simulated requests (seed 1): the share
    of engine time in steps that carry prompt tokens is 0.70; the budget's utilization at the run's own rate
    was 0.67 with the per-step batch (too low, so its M/G/1 wait too short), 0.69 now."""
    from calc.traffic.queueing import _decode_batch, _load_inputs, engine_load
    from calc.traffic.simulator import EngineConfig, simulate
    from calc.traffic.workload import length_spec, make_workload

    arch, g = get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm")
    sc = ServingConfig(input_len=2500, output_len=256, max_model_len=4096, max_num_batched_tokens=1024)
    est = estimate(arch, g, sc, concurrency=np.nan)
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=1024, enable_chunked_prefill=True,
                       num_blocks=int(est.memory.kv_sequence_blocks), block_size=16)
    n, k = 6000, 1500
    w = make_workload(input_len=length_spec("fixed", 2500, 0), output_len=length_spec("fixed", 256, 0),
                      max_model_len=4096, seed=1, num_requests=n, arrival="poisson",
                      rate_per_s=0.85 * float(est.serving.requests_per_s))
    r = simulate(est.engine, w, cfg)
    steady = np.asarray(r.step_start_s) >= r.arrival_s[k]
    t, p = np.asarray(r.step_s)[steady], np.asarray(r.step_prefill_tokens)[steady]
    sim_share = t[p > 0].sum() / t.sum()
    rate = (n - k - 1) / (r.arrival_s[-1] - r.arrival_s[k])  # the run's own rate
    _, _, _, slots, kw = _load_inputs(est.engine, input_len=2500, output_len=256, input_cv=0.0, output_cv=0.0,
                                      max_num_seqs=est.max_num_seqs, kv_capacity_tokens=est.memory.kv_sequence_tokens,
                                      max_num_batched_tokens=1024, enable_chunked_prefill=True)
    running, _ = _decode_batch(est.engine, rate_rps=rate, slots=slots, **kw)
    per_step, busy = (float(engine_load(est.engine, running=running, rate_rps=rate, budget_busy_periods=b,
                                        **kw).budget_utilization) for b in (False, True))
    assert sim_share == pytest.approx(0.70, abs=0.01)
    assert abs(busy - sim_share) < 0.015 < 0.02 < abs(per_step - sim_share)


def test_open_loop_near_capacity_holds_the_long_run_when_the_batch_grows_while_prompts_queue():
    """Issue 17's hardest cell: Llama-3.1-8B H100, 2,500 + 256 tokens lognormal CV 1 (both), budget 1,024, 85 % of
    capacity. While prompts queue the decode batch grows (41 decodes a step with 1-2 prompts waiting, 86 with over
    40: calc.traffic.queueing.congestion_wait_ratio) and the budget drains slower. Against 3 × 20,000 simulated
    requests (first quarter of each dropped, the model at each run's own rate): mean and P95 TTFT within 15 %;
    the M/G/1 wait alone (ratio 1) was 19 % / 30 % low against 2 × 20,000."""
    import traffic_spread
    from calc.traffic.workload import cut_input_quantile, cut_lengths

    arch, g, sc, est, cfg, mml = traffic_spread._setup("meta-llama/Llama-3.1-8B", "h100-sxm", 2500, 256, 1024, 1.0)
    cap = float(est.serving.requests_per_s)
    ttft, _, pre, (i_m, o_m), rates = traffic_spread._sim(est, cfg, mml, 2500, 256, 1.0, 20_000, seeds=(1, 2, 3),
                                                           arrival="poisson", rate_per_s=0.85 * cap)
    cut = cut_lengths("lognormal", 2500, 256, 1.0, mml)
    ol = open_loop(est.engine, input_len=cut.input_mean, output_len=cut.output_mean, rate_rps=rates,
                   max_num_seqs=est.max_num_seqs, max_num_batched_tokens=1024,
                   kv_capacity_tokens=est.memory.kv_sequence_tokens, input_cv=cut.input_cv, output_cv=cut.output_cv,
                   input_quantile_tokens=cut_input_quantile("lognormal", 2500, 256, 1.0, mml, 0.95))
    assert pre == 0 and bool(np.all(ol.closed_form)) and bool(np.all(ol.budget_drains))
    assert float(np.mean(ol.ttft_s)) == pytest.approx(float(ttft.mean()), rel=0.15)
    assert float(np.mean(ol.ttft_percentile_s)) == pytest.approx(float(np.percentile(ttft, 95)), rel=0.15)


class TestCongestionWaitRatio:
    """calc.traffic.queueing.congestion_wait_ratio: the budget queue's wait when its service slows as it grows."""

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(rho=st.floats(0.05, 0.95), kappa=st.floats(0.0, 0.5), n0=st.floats(0.5, 1e4))
    def test_a_slowdown_never_shortens_the_wait_and_more_slowdown_lengthens_it(self, rho, kappa, n0):
        from calc.traffic.queueing import congestion_wait_ratio
        assume_drains = rho * (1.0 + kappa + 0.1) < 1.0
        r0, r1, r2 = (float(congestion_wait_ratio(utilization=rho, slowdown=k, relax_prompts=n0))
                      for k in (0.0, kappa, kappa + 0.1))
        assert r0 == pytest.approx(1.0, abs=2e-3)  # κ = 0: the M/M/1 itself
        assert r1 >= r0 - 2e-3
        if assume_drains:
            assert r2 >= r1 - 1e-9

    def test_a_batch_that_relaxes_faster_waits_longer(self):
        from calc.traffic.queueing import congestion_wait_ratio
        r = congestion_wait_ratio(utilization=0.7, slowdown=0.25, relax_prompts=np.array([1e-9, 3.0, 30.0, 300.0, 1e9]))
        assert np.all(np.diff(r) < 0) and r[-1] == pytest.approx(1.0, abs=1e-3)
        # n₀ → 0: an M/M/1 at ρ* = 0.875 but for the empty state: (1.25² · 0.3)/(1 − 0.875) = 3.75
        assert r[0] == pytest.approx(1.25 ** 2 * 0.3 / 0.125, rel=1e-3)

    def test_a_full_budget_that_cannot_drain_but_is_never_reached_keeps_the_closed_form(self):
        # Llama-3.1-8B H100, 500 + 1,024 tokens (lognormal 0.5), budget 512, 90 % of capacity: a budget that stayed
        # full would hold 344 decodes and serve prompts 3x slower than they come (ρ·(1 + κ) > 1), but the budget is
        # busy only 38 % of the time and the queue never climbs there (n_c ≈ thousands of prompts): the simulator
        # keeps a steady TTFT, and the chain cut at n_c agrees (a first version called this past capacity)
        from calc.traffic.simulator import EngineConfig, simulate
        from calc.traffic.workload import length_spec, make_workload
        sc = ServingConfig(input_len=500, output_len=1024, max_model_len=16384, max_num_batched_tokens=512)
        est = estimate(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"), sc, concurrency=np.nan)
        rate = 0.9 * float(est.serving.requests_per_s)
        r = open_loop(est.engine, input_len=500, output_len=1024, rate_rps=rate, max_num_seqs=est.max_num_seqs,
                      max_num_batched_tokens=512, kv_capacity_tokens=est.memory.kv_sequence_tokens, input_cv=0.5,
                      output_cv=0.5)
        assert bool(r.budget_drains) and bool(r.closed_form) and bool(r.stable)
        cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=512, enable_chunked_prefill=True,
                           num_blocks=int(est.memory.kv_sequence_blocks), block_size=16)
        w = make_workload(input_len=length_spec("lognormal", 500, 0.5), output_len=length_spec("lognormal", 1024, 0.5),
                          max_model_len=16384, seed=1, num_requests=8000, arrival="poisson", rate_per_s=rate)
        ttft = np.asarray(simulate(est.engine, w, cfg).ttft_s[2000:])
        assert float(r.ttft_s) == pytest.approx(float(np.mean(ttft)), rel=0.15)

    def test_a_budget_that_cannot_drain_is_never_called_closed_form(self):
        # Llama-3.1-8B H100, 2,500 + 256 fixed, budget 1,024, 90-99 % of capacity: near capacity the batch over time
        # is already near what a full budget keeps (κ small), so a full budget still drains up to ρ_q ≈ 0.99; where
        # it would not, the open loop is not a closed form (the simulator's regime), and never the other way round
        est = estimate(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"),
                       ServingConfig(input_len=2500, output_len=256, max_model_len=4096, max_num_batched_tokens=1024),
                       concurrency=np.nan)
        cap = float(est.serving.requests_per_s)
        r = open_loop(est.engine, input_len=2500, output_len=256, rate_rps=np.arange(0.90, 0.995, 0.005) * cap,
                      max_num_seqs=est.max_num_seqs, max_num_batched_tokens=1024,
                      kv_capacity_tokens=est.memory.kv_sequence_tokens)
        assert not np.any(r.closed_form & ~r.budget_drains)
        assert bool(np.all(r.budget_drains[r.budget_utilization < 0.98]))


def test_own_prefill_of_two_full_chunks_is_their_two_steps():
    """A prompt of exactly two rooms, alone (no decodes, nothing behind it): its own prefill is a step of
    `room` tokens after none of its keys plus a step of `room` tokens after `room` of them. The full
    chunks read (k − 2)·room/2 of the prompt's keys on average (here 0); they were priced after
    (k − 1)·room/2 (here 1,024), attention the first chunk does not have."""
    from calc.timing.serving import prefill_step
    from calc.traffic.queueing import own_prefill_s

    e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"))
    room = 2048
    own = own_prefill_s(e, input_len=2 * room, mean_input_len=2 * room, running=0.0, context_tokens=2 * room,
                        rate_rps=0.0, wait_s=0.0, max_num_batched_tokens=room)
    steps = (prefill_step(e, prompts=1.0, prompt_tokens=room, cached_tokens=0.0).step_s
             + prefill_step(e, prompts=1.0, prompt_tokens=room, cached_tokens=room).step_s)
    assert float(own) == pytest.approx(float(steps), rel=1e-12)
