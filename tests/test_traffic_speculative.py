"""Speculative decoding in the simulator (calc/traffic/speculative.py) and the analytic traffic models."""

import numpy as np
import pytest

from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.spec.speculative import parse_speculative_config
from calc.timing.estimate import engine_numbers, estimate
from calc.timing.speculative import drafter_for, drafter_from_config
from calc.traffic.queueing import open_loop
from calc.traffic.simulator import EngineConfig, simulate
from calc.traffic.speculative import SpeculativeSim
from calc.traffic.workload import LengthSpec, make_workload

LLAMA8, H100 = get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm")


def test_accepted_draws_have_the_cumulative_distribution():
    # c = (0.7, 0.49, 0.343): E[j] = Σ c_i = 1.533; P(j = 0) = 1 − 0.7 = 0.3; P(j = 3) = 0.343
    e = engine_numbers(LLAMA8, H100)
    d = drafter_for(e, parse_speculative_config({"method": "ngram", "num_speculative_tokens": 3}, acceptance_rate=0.7))
    s = SpeculativeSim(d, (0.7, 0.49, 0.343), max_tokens=64, seed=3)
    j = s.accepted(np.full(200_000, 3))
    assert j.mean() == pytest.approx(1.533, abs=0.01)
    assert np.mean(j == 0) == pytest.approx(0.3, abs=0.005) and np.mean(j == 3) == pytest.approx(0.343, abs=0.005)
    # fewer drafts proposed (a squeezed budget): at most that many accepted
    assert s.accepted(np.full(1000, 1)).max() == 1


def _run(C, spec):
    sc = ServingConfig(input_len=512, output_len=256, max_model_len=2048)
    est = estimate(LLAMA8, H100, sc, speculative=spec)
    drafter = drafter_from_config(est.engine, spec, gpu=H100, serving=sc, efficiency=Efficiency())
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=True, num_blocks=int(est.memory.num_blocks))
    w = make_workload(arrival="closed", num_requests=20 * C, concurrency=C, input_len=LengthSpec("fixed", 512),
                      output_len=LengthSpec("lognormal", 256, cv=0.5), max_model_len=2048, seed=1)
    r = simulate(est.engine, w, cfg, speculative=(drafter, spec.accepted_at_position))
    a = estimate(LLAMA8, H100, sc.model_copy(update={"concurrency": C}), speculative=spec).serving
    return r, a


@pytest.mark.parametrize("C", [1, 16])
def test_simulated_tpot_agrees_with_the_closed_loop(C):
    spec = parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}, acceptance_rate=0.7)
    r, a = _run(C, spec)
    assert not r.truncated
    sim = float(np.nanmean(r.tpot_s[5 * C:]))
    assert sim == pytest.approx(float(a.tpot_s), rel=0.15)
    # every request still gets exactly its output tokens (accepted tokens capped at the end)
    assert np.all(np.isfinite(r.finish_s))


def test_open_loop_without_speculation_is_unchanged():
    e = engine_numbers(LLAMA8, H100)
    kw = dict(input_len=1024, output_len=256, rate_rps=[1.0, 5.0], max_num_seqs=256, max_num_batched_tokens=8192,
              kv_capacity_tokens=400_000)
    a, b = open_loop(e, **kw), open_loop(e, speculative=None, **kw)
    assert np.array_equal(a.ttft_s, b.ttft_s) and np.array_equal(a.tpot_s, b.tpot_s)


def test_open_loop_speculation_lowers_tpot_at_low_load():
    e = engine_numbers(LLAMA8, H100)
    d = drafter_for(e, parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}, acceptance_rate=0.7))
    kw = dict(input_len=1024, output_len=256, rate_rps=0.5, max_num_seqs=256, max_num_batched_tokens=8192,
              kv_capacity_tokens=400_000)
    assert float(open_loop(e, speculative=d, **kw).tpot_s) < 0.7 * float(open_loop(e, **kw).tpot_s)


# ---- the fast-forward of speculative decode runs (SpeculativeSim.decode_run) against step by step ----

def _both(monkeypatch, e, w, cfg, spec, **kw):
    """The same simulation with the speculative fast-forward off (every step a general pass) and on."""
    from calc.traffic import simulator

    sp = (drafter_for(e, spec), spec.accepted_at_position)
    monkeypatch.setattr(simulator, "_SPEC_FAST_FORWARD", False)
    slow = simulate(e, w, cfg, speculative=sp, **kw)
    monkeypatch.setattr(simulator, "_SPEC_FAST_FORWARD", True)
    fast = simulate(e, w, cfg, speculative=sp, **kw)
    return slow, fast


def _same_run(slow, fast):
    # the uniforms come from one stream in the same order: the same accepted lengths, steps and times
    # (the step times are bit-identical; times are sums of them, so equal to rounding)
    for name in ("first_token_s", "finish_s", "ttft_s", "tpot_s", "e2e_latency_s", "queue_wait_s", "step_start_s",
                 "step_s"):
        np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=1e-12, atol=1e-12, err_msg=name)
    for name in ("preemptions", "step_running", "step_waiting", "step_kv_blocks", "step_prefill_tokens",
                 "step_decode_tokens"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    # the gaps: the same multiset (a run's later gaps are its step times, the scheduler's end − previous end)
    np.testing.assert_allclose(np.sort(fast.itl_s), np.sort(slow.itl_s), rtol=1e-9, atol=1e-12)
    assert fast.passes < slow.passes


EAGLE3 = parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}, acceptance_rate=0.7)


@pytest.mark.parametrize("arrival", ["poisson", "closed"])
def test_fast_forward_gives_the_step_by_step_run(monkeypatch, arrival):
    e = engine_numbers(LLAMA8, H100)
    w = make_workload(arrival=arrival, num_requests=150, rate_per_s=4.0, concurrency=12,
                      input_len=LengthSpec("lognormal", 600, cv=0.5), output_len=LengthSpec("lognormal", 120, cv=0.6),
                      seed=2)
    cfg = EngineConfig(max_num_seqs=64, max_num_batched_tokens=2048, enable_chunked_prefill=True, num_blocks=50_000)
    slow, fast = _both(monkeypatch, e, w, cfg, EAGLE3)
    assert not fast.truncated
    _same_run(slow, fast)


def test_fast_forward_stops_where_the_pool_runs_out(monkeypatch):
    # 400 blocks of 16 tokens for 40 requests of ~300 + 200 tokens at once: preemptions; the runs stop
    # at the step whose blocks do not fit and the scheduler's pass preempts, as step by step
    e = engine_numbers(LLAMA8, H100)
    w = make_workload(arrival="burst", num_requests=40, input_len=LengthSpec("fixed", 300),
                      output_len=LengthSpec("lognormal", 200, cv=0.5), seed=4)
    cfg = EngineConfig(max_num_seqs=32, max_num_batched_tokens=1024, enable_chunked_prefill=True, num_blocks=400)
    slow, fast = _both(monkeypatch, e, w, cfg, EAGLE3)
    assert slow.total_preemptions > 0
    _same_run(slow, fast)


def test_fast_forward_with_sliding_window_and_whole_prefill(monkeypatch):
    # Mistral-7B-v0.1: every layer a 4,096-token window; contexts cross it
    e = engine_numbers(get_model("mistralai/Mistral-7B-v0.1"), H100)
    w = make_workload(arrival="poisson", num_requests=30, rate_per_s=2.0, input_len=LengthSpec("fixed", 4000),
                      output_len=LengthSpec("fixed", 300), seed=5)
    for chunked in (True, False):
        cfg = EngineConfig(max_num_seqs=16, max_num_batched_tokens=8192, enable_chunked_prefill=chunked,
                           num_blocks=20_000)
        _same_run(*_both(monkeypatch, e, w, cfg, EAGLE3))


def test_fast_forward_respects_the_step_cap(monkeypatch):
    e = engine_numbers(LLAMA8, H100)
    w = make_workload(arrival="burst", num_requests=8, input_len=LengthSpec("fixed", 100),
                      output_len=LengthSpec("fixed", 400), seed=1)
    cfg = EngineConfig(max_num_seqs=8, max_num_batched_tokens=512, enable_chunked_prefill=True, num_blocks=5000)
    slow, fast = _both(monkeypatch, e, w, cfg, EAGLE3, max_steps=50)
    assert fast.truncated and fast.step_s.size == slow.step_s.size == 50
    np.testing.assert_allclose(fast.step_s, slow.step_s, rtol=1e-12)


def test_fast_forward_statistics_on_a_thousand_requests(monkeypatch):
    # the brief's check on a 1,000-request low-load run (Poisson 1/s): means within 2 %, P95 within 5 %
    # (here they agree to rounding, as the draws are the same)
    e = engine_numbers(LLAMA8, H100)
    w = make_workload(arrival="poisson", num_requests=1000, rate_per_s=1.0,
                      input_len=LengthSpec("lognormal", 1024, cv=0.5),
                      output_len=LengthSpec("lognormal", 96, cv=0.5), seed=0)
    cfg = EngineConfig(max_num_seqs=256, max_num_batched_tokens=8192, enable_chunked_prefill=True, num_blocks=50_000)
    slow, fast = _both(monkeypatch, e, w, cfg, EAGLE3)
    for name in ("tpot_s", "ttft_s", "e2e_latency_s", "itl_s"):
        x, y = np.asarray(getattr(slow, name)), np.asarray(getattr(fast, name))
        x, y = x[np.isfinite(x)], y[np.isfinite(y)]
        assert y.mean() == pytest.approx(x.mean(), rel=0.02), name
        assert np.percentile(y, 95) == pytest.approx(np.percentile(x, 95), rel=0.05), name
    assert fast.passes * 5 < slow.passes
