"""calc.traffic: step time = engine_step, scheduler invariants, queueing theory, workloads, SLO stats."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from calc.spec.catalog import get_gpu, get_model, list_models
from calc.spec.inputs import Efficiency, ServingConfig
from calc.timing.estimate import engine_numbers, estimate
from calc.timing.serving import decode_step, engine_step, prefill_step
from calc.traffic.simulator import EngineConfig, simulate
from calc.traffic.slo import littles_law, max_sustainable_rate, summarize
from calc.traffic.steptime import StepTimer
from calc.traffic.workload import LengthSpec, Workload, WorkloadError, arrivals, make_workload, parse_trace

LLAMA8B = "meta-llama/Llama-3.1-8B"


# The engine's scheduler alone: no API server in front (Efficiency.api_server_request_s = 0), so
# requests reach the engine when the workload says (the API server's queue: TestApiServer).
ENGINE_ONLY = Efficiency(api_server_request_s=0.0, request_overhead_s=2e-3)  # an offline engine's few ms


@pytest.fixture(scope="module")
def h100():
    est = estimate(get_model(LLAMA8B), get_gpu("h100-sxm"), ServingConfig(), ENGINE_ONLY)
    return est


def _cfg(est, *, chunked=True, blocks=None, seqs=None, budget=None):
    return EngineConfig(max_num_seqs=int(seqs or est.max_num_seqs),
                        max_num_batched_tokens=int(budget or est.max_num_batched_tokens),
                        enable_chunked_prefill=chunked, num_blocks=int(blocks or est.memory.num_blocks), block_size=16)


class TestStepTimer:
    @pytest.mark.parametrize("model", [a.id for a in list_models()])
    def test_equals_engine_step_on_random_batches(self, model):
        arch = get_model(model)
        tp = 8 if arch.num_attention_heads % 8 == 0 and arch.num_key_value_heads % 8 in (0, arch.num_key_value_heads) else 1
        e = engine_numbers(arch, get_gpu("h100-sxm"), ServingConfig(tensor_parallel_size=tp))
        t = StepTimer(e, max_tokens=9000)
        assert t.fast  # the mirror follows the physics (else it falls back to engine_step)
        rng = np.random.default_rng(0)
        for _ in range(30):
            d, p = float(rng.integers(0, 300)), float(rng.integers(0, 8000))
            d = d or 1.0
            ctx, pairs = d * rng.uniform(1, 5000), p * rng.uniform(1, 3000)
            cached, lg = rng.uniform(0, 5000) * (p > 0), d + rng.integers(0, 3)
            ref = float(engine_step(e, decode_tokens=d, decode_context_tokens_sum=ctx, prefill_tokens=p,
                                    prefill_attention_pairs=pairs, prefill_cached_tokens=cached,
                                    logits_tokens=lg).step_s)
            assert t(d, ctx, p, pairs, cached, lg) == pytest.approx(ref, rel=1e-9)
        # a run of pure decode steps (the simulator's fast-forward): one vector, the same times
        assert t.fast_runs
        for batch in (1, 37, 256):
            ctx = batch * 1234.0 + batch * np.arange(200.0)
            ref = np.broadcast_to(engine_step(e, decode_tokens=float(batch), decode_context_tokens_sum=ctx,
                                              prefill_tokens=0.0, prefill_attention_pairs=0.0, prefill_cached_tokens=0.0,
                                              logits_tokens=float(batch)).step_s, ctx.shape)
            np.testing.assert_allclose(t.decode_run(batch, batch * 1234.0, 200), ref, rtol=1e-9)

    def test_refuses_array_engine_numbers(self, h100):
        with pytest.raises(ValueError, match="scalar"):
            StepTimer(replace(h100.engine, hidden_size=np.array([4096, 8192])), max_tokens=10)


class TestSingleRequestCollapse:
    def test_low_rate_percentiles_are_the_single_request_numbers(self, h100):
        # 0.001 req/s with 1024 in / 64 out: every request runs alone (E2E ≈ 0.5 s ≪ 1000 s apart)
        w = make_workload(arrival="poisson", rate_per_s=0.001, num_requests=50, input_len=LengthSpec("fixed", 1024),
                          output_len=LengthSpec("fixed", 64), seed=3)
        r = simulate(h100.engine, w, _cfg(h100))
        e = h100.engine
        # its prompt's step, after the API server's time for it and the request overhead
        ttft = float(prefill_step(e, prompts=1, prompt_tokens=1024).step_s) + e.request_overhead_s + e.api_server_request_s
        # decode steps read 1025 … 1087 keys: the mean is the step at 1056 (linear in the context)
        tpot = float(decode_step(e, batch=1, context_tokens=1024 + 32).step_s)
        s = summarize(r)
        for q in ("p50", "p99", "mean"):
            assert s[f"ttft_s_{q}"] == pytest.approx(ttft, rel=1e-9)
            assert s[f"tpot_s_{q}"] == pytest.approx(tpot, rel=1e-6)
        assert s["queue_wait_s_p99"] == pytest.approx(0.0, abs=1e-12)
        # and the analytic closed loop at C = 1 agrees
        a = estimate(get_model(LLAMA8B), get_gpu("h100-sxm"), ServingConfig(input_len=1024, output_len=64),
                     ENGINE_ONLY).serving
        assert float(a.ttft_s) == pytest.approx(ttft, rel=1e-9)
        assert float(a.tpot_s) == pytest.approx(tpot, rel=1e-6)


class TestApiServer:
    """The API server in front of the engine: api_server_request_s of its time each."""

    @staticmethod
    def _tiny_burst(final_share: float):
        """300 requests of 128 in / 4 out at t = 0, 22 ms each at the API server."""
        eff = Efficiency(api_server_request_s=0.022, api_server_final_share=final_share)
        est = estimate(get_model(LLAMA8B), get_gpu("h100-sxm"), ServingConfig(input_len=128, output_len=4), eff)
        w = make_workload(arrival="burst", num_requests=300, input_len=LengthSpec("fixed", 128),
                          output_len=LengthSpec("fixed", 4))
        return est, simulate(est.engine, w, _cfg(est))

    def test_a_burst_of_tiny_requests_is_bound_by_the_api_server(self):
        # 300 requests of 128 in / 4 out at t = 0: the GPU needs ~0.1 s for all of them, the API
        # server 300 × 22 ms = 6.6 s; so ≈ 1 / 0.022 = 45.5 requests/s. One after another
        # (api_server_final_share 1), the k-th request's TTFT carries k × 22 ms of the API server.
        _, r = self._tiny_burst(final_share=1.0)
        s = summarize(r)
        assert s["requests_per_s"] == pytest.approx(1 / 0.022, rel=0.03)
        assert float(r.ttft_s[-1] - r.ttft_s[0]) == pytest.approx(299 * 0.022, rel=0.01)

    def test_a_burst_takes_turns_at_the_api_server(self):
        # The same burst with the default turn-taking (f = 0.2, vLLM's event loop): none reaches the
        # engine before 300 × 0.8 × 22 ms = 5.28 s, then one every 0.2 × 22 = 4.4 ms, the last at 6.6 s as
        # before: the first TTFT carries 5.28 s, the spread of first tokens 299 × 4.4 ms = 1.3 s at least.
        est, r = self._tiny_burst(final_share=0.2)
        t_req = float(est.engine.request_overhead_s)
        assert float(r.ttft_s.min()) > 300 * 0.8 * 0.022 + t_req
        assert float(r.ttft_s.max()) - float(r.ttft_s.min()) >= 299 * 0.2 * 0.022 - 1e-9
        assert float(np.nanmax(r.finish_s)) > 300 * 0.022  # the work is the same: the last leaves at 6.6 s

    def test_the_closed_loop_is_capped_at_one_over_the_api_time(self):
        # 1,000 clients of 128 / 4: the engine alone would serve far more than 45 requests/s
        eff = ENGINE_ONLY.model_copy(update={"api_server_request_s": 0.022})
        a = estimate(get_model(LLAMA8B), get_gpu("h100-sxm"), ServingConfig(input_len=128, output_len=4), eff,
                     concurrency=np.array([1.0, 1000.0])).serving
        alone = estimate(get_model(LLAMA8B), get_gpu("h100-sxm"), ServingConfig(input_len=128, output_len=4),
                         ENGINE_ONLY, concurrency=1000.0).serving
        assert float(alone.requests_per_s) > 150
        assert float(a.requests_per_s[1]) == pytest.approx(1 / 0.022, rel=1e-9)
        # one client: the API server's 22 ms is in TTFT once, beside the engine's own time
        one = estimate(get_model(LLAMA8B), get_gpu("h100-sxm"), ServingConfig(input_len=128, output_len=4),
                       ENGINE_ONLY, concurrency=1.0).serving
        assert float(a.ttft_s[0] - one.ttft_s) == pytest.approx(0.022, rel=1e-9)


class TestQueueing:
    def test_prefill_only_one_prompt_per_step_is_md1(self, h100):
        # O = 1 and max_num_seqs = 1: each request is one prefill step of fixed length D, served one
        # at a time in arrival order: an M/D/1 queue. Pollaczek–Khinchine: Wq = ρ·D / (2(1 − ρ)).
        e = h100.engine
        D = float(prefill_step(e, prompts=1, prompt_tokens=512).step_s)
        waits = []
        rho = 0.6
        for seed in range(4):
            w = make_workload(arrival="poisson", rate_per_s=rho / D, num_requests=20_000,
                              input_len=LengthSpec("fixed", 512), output_len=LengthSpec("fixed", 1), seed=seed)
            r = simulate(e, w, _cfg(h100, seqs=1))
            assert np.allclose(r.step_s, D)
            waits.append(r.queue_wait_s.mean())
        wq = rho * D / (2 * (1 - rho))
        assert np.mean(waits) == pytest.approx(wq, rel=0.05)

    @pytest.mark.parametrize("arrival,chunked", [("poisson", True), ("gamma", True), ("closed", False), ("burst", True)])
    def test_littles_law(self, h100, arrival, chunked):
        w = make_workload(arrival=arrival, rate_per_s=8.0, cv=3.0, concurrency=32, num_requests=400,
                          input_len=LengthSpec("lognormal", 800, cv=0.8), output_len=LengthSpec("uniform", lo=1, hi=300),
                          seed=1)
        r = simulate(h100.engine, w, _cfg(h100, chunked=chunked))
        area, total = littles_law(r)
        assert area == pytest.approx(total, rel=1e-9)
        # and L = λ·W with the throughput over the run
        s = summarize(r)
        assert area / s["duration_s"] == pytest.approx(s["requests_per_s"] * s["e2e_latency_s_mean"], rel=1e-9)


class TestCappedOpenLoop:
    """vllm bench serve --request-rate R --max-concurrency C: request i is sent at the later of its
    arrival and a free slot (calc.traffic.workload), its clock starting when sent."""

    KW = dict(num_requests=300, input_len=LengthSpec("lognormal", 800, cv=0.8),
              output_len=LengthSpec("uniform", lo=1, hi=300), seed=3)

    def test_never_more_than_c_in_flight_and_never_sent_early(self, h100):
        w = make_workload(arrival="poisson", rate_per_s=40.0, max_concurrency=8, **self.KW)
        r = simulate(h100.engine, w, _cfg(h100))
        assert (r.arrival_s >= w.arrival_s - 1e-12).all()  # sent at its arrival or later
        sent, done = r.arrival_s, r.finish_s
        for t in np.concatenate([sent, done]):  # in flight at every event: sent and not yet finished
            assert np.count_nonzero((sent <= t) & (done > t)) <= 8
        late = sent > w.arrival_s + 1e-9  # the cap bound: some requests waited for a slot
        assert late.any()
        # a request that waited was sent when one in flight finished (the slot it took)
        assert np.isin(np.round(sent[late], 9), np.round(done, 9)).all()

    def test_a_cap_above_the_requests_is_the_open_loop(self, h100):
        open_ = simulate(h100.engine, make_workload(arrival="poisson", rate_per_s=6.0, **self.KW), _cfg(h100))
        capped = simulate(h100.engine, make_workload(arrival="poisson", rate_per_s=6.0, max_concurrency=300, **self.KW),
                          _cfg(h100))
        assert np.array_equal(open_.ttft_s, capped.ttft_s) and np.array_equal(open_.finish_s, capped.finish_s)

    def test_a_burst_under_a_cap_is_the_closed_loop(self, h100):
        closed = simulate(h100.engine, make_workload(arrival="closed", concurrency=16, **self.KW), _cfg(h100))
        capped = simulate(h100.engine, make_workload(arrival="burst", max_concurrency=16, **self.KW), _cfg(h100))
        assert np.array_equal(closed.ttft_s, capped.ttft_s) and np.array_equal(closed.finish_s, capped.finish_s)

    def test_bad_caps_are_named(self):
        with pytest.raises(WorkloadError, match="max_concurrency"):
            make_workload(arrival="poisson", max_concurrency=0)


class TestScheduler:
    def test_same_seed_same_result(self, h100):
        kw = dict(arrival="gamma", rate_per_s=12.0, cv=2.0, num_requests=300, input_len=LengthSpec("lognormal", 1000, cv=1),
                  output_len=LengthSpec("lognormal", 200, cv=1), seed=7)
        a = simulate(h100.engine, make_workload(**kw), _cfg(h100))
        b = simulate(h100.engine, make_workload(**kw), _cfg(h100))
        assert np.array_equal(a.ttft_s, b.ttft_s) and np.array_equal(a.step_s, b.step_s)
        c = simulate(h100.engine, make_workload(**{**kw, "seed": 8}), _cfg(h100))
        assert not np.array_equal(a.ttft_s, c.ttft_s)

    def test_preemption_only_when_the_pool_is_full(self, h100):
        # 600 blocks of 16 = 9600 tokens for 32 clients of 512 + 512: the pool runs out
        w = make_workload(arrival="closed", concurrency=32, num_requests=200, input_len=LengthSpec("fixed", 512),
                          output_len=LengthSpec("fixed", 512))
        small = simulate(h100.engine, w, _cfg(h100, blocks=600))
        assert small.total_preemptions > 0
        assert small.step_kv_blocks.max() <= 600
        # a step right before a preemption had (almost) no free block left: growth needed more
        assert np.isfinite(small.e2e_latency_s).all()
        big = simulate(h100.engine, w, _cfg(h100))
        assert big.total_preemptions == 0 and big.step_kv_blocks.max() < big.num_blocks

    def test_chunked_budget_and_seq_limits_hold(self, h100):
        w = make_workload(arrival="burst", num_requests=100, input_len=LengthSpec("uniform", lo=100, hi=3000),
                          output_len=LengthSpec("fixed", 20), seed=2)
        r = simulate(h100.engine, w, _cfg(h100, seqs=16, budget=1024))
        assert (r.step_prefill_tokens + r.step_decode_tokens <= 1024).all()
        assert (r.step_running <= 16).all()

    def test_unchunked_prefill_steps_stall_decodes(self, h100):
        w = make_workload(arrival="burst", num_requests=20, input_len=LengthSpec("fixed", 1000),
                          output_len=LengthSpec("fixed", 10))
        r = simulate(h100.engine, w, _cfg(h100, chunked=False, budget=2048))
        pf = r.step_prefill_tokens > 0
        assert (r.step_decode_tokens[pf] == 0).all() and (r.step_prefill_tokens[pf] % 1000 == 0).all()

    def test_last_prompt_token_gives_the_first_token_not_a_decode(self, h100):
        """Budget 256, A (100 + 50) and B (412 + 5) at t = 0: step 1 computes A's prompt (100) and
        156 of B's, step 2 A's decode and 255 more of B's; B then has 1 prompt token left while A
        decodes (computed = prompt + generated - 1, as for a decode). That token gives B's FIRST
        token: a TTFT, no inter-token gap; 49 + 4 = 53 gaps in all. (Before, the decode fast-forward
        took B for a decode: TTFT NaN and a 54th gap measured from t = 0.)"""
        w = Workload(arrival_s=np.zeros(2), input_len=np.array([100, 412]), output_len=np.array([50, 5]))
        r = simulate(h100.engine, w, _cfg(h100, seqs=8, budget=256, blocks=1000))
        assert r.step_prefill_tokens[:2].tolist() == [256, 255] and r.step_decode_tokens[:2].tolist() == [0, 1]
        assert np.isfinite(r.ttft_s).all() and r.first_token_s[1] == r.step_start_s[2] + r.step_s[2]  # end of step 3
        assert r.itl_s.size == 49 + 4

    def test_unchunked_recompute_longer_than_the_budget_runs_alone(self, h100):
        """Two requests of 480 + 400 tokens, budget 512 (two prompts do not fit one step: 480, then
        480), 70 blocks of 16. Both decode until the pool is full at 35 blocks each (560 tokens: 480
        + 80 computed); the last admitted is preempted when it needs its 36th block, having generated
        81 tokens, and recomputes 480 + 81 = 561 tokens whole, more than the budget: it runs alone
        (vLLM demands a budget of at least max_model_len without chunked prefill, so there it always
        fits). Before, the queue's head never fitted the budget: the simulator raised 'stalled'
        while the other request ran, and looped forever once it had finished."""
        import signal

        def hung(*_):
            raise TimeoutError("simulate did not return within 60 s")

        w = make_workload(arrival="burst", num_requests=2, input_len=LengthSpec("fixed", 480),
                          output_len=LengthSpec("fixed", 400))
        old = signal.signal(signal.SIGALRM, hung)
        signal.alarm(60)
        try:
            cfg = _cfg(h100, chunked=False, blocks=70, seqs=8, budget=512)
            r = simulate(h100.engine, w, replace(cfg, enable_prefix_caching=False))
            cached = simulate(h100.engine, w, cfg)
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        assert r.preemptions.tolist() == [0, 1]
        assert r.step_prefill_tokens[r.step_prefill_tokens > 0].tolist() == [480, 480, 561]
        assert not r.truncated and np.isfinite(r.e2e_latency_s).all() and (r.step_kv_blocks <= 70).all()
        # With prefix caching (vLLM V1's default) B's 35 full blocks stay in the free queue; A then
        # grows from 35 to 55 blocks (480 + 400 tokens) and evicts 20 of them, least recently freed
        # first: B finds 15 blocks = 240 tokens again and recomputes 480 + 81 − 240 = 321.
        assert cached.preemptions.tolist() == [0, 1]
        assert cached.step_prefill_tokens[cached.step_prefill_tokens > 0].tolist() == [480, 480, 321]
        assert cached.makespan_s < r.makespan_s

    @settings(max_examples=25)
    @given(n=st.integers(1, 60), rate=st.floats(0.5, 50), i_mean=st.integers(1, 3000), o_hi=st.integers(1, 200),
           chunked=st.booleans(), blocks=st.integers(300, 5000), seed=st.integers(0, 100))
    def test_properties(self, h100, n, rate, i_mean, o_hi, chunked, blocks, seed):
        w = make_workload(arrival="poisson", rate_per_s=rate, num_requests=n, input_len=LengthSpec("lognormal", i_mean, cv=1),
                          output_len=LengthSpec("uniform", lo=1, hi=o_hi), max_model_len=4096, seed=seed)
        r = simulate(h100.engine, w, _cfg(h100, chunked=chunked, blocks=blocks, budget=4096))
        assert not r.truncated
        assert (r.ttft_s > 0).all() and (r.e2e_latency_s >= r.ttft_s - 1e-12).all()
        assert (r.queue_wait_s >= -1e-12).all() and (r.queue_wait_s <= r.ttft_s + 1e-12).all()
        assert (r.itl_s > 0).all() and r.itl_s.size == int((r.output_len - 1).sum())
        assert (r.step_kv_blocks <= blocks).all()
        area, total = littles_law(r)
        assert area == pytest.approx(total, rel=1e-9)


def test_a_truncated_run_counts_only_finished_requests(h100):
    """Cut at the step cap: throughputs over the finished requests (they divided every request's
    tokens by the time to the last finish), flagged; the rate search does not call it sustained."""
    w = make_workload(arrival="poisson", rate_per_s=50, num_requests=200, input_len=LengthSpec("fixed", 100),
                      output_len=LengthSpec("fixed", 50))
    cfg = EngineConfig(max_num_seqs=8, max_num_batched_tokens=256, enable_chunked_prefill=True, num_blocks=1000)
    e = h100.engine
    full, cut = simulate(e, w, cfg), simulate(e, w, cfg, max_steps=300)
    s_full, s_cut = summarize(full), summarize(cut)
    assert not s_full["truncated"] and s_full["finished_requests"] == 200
    assert cut.truncated and s_cut["truncated"] and 0 < s_cut["finished_requests"] < 200
    done = np.isfinite(cut.finish_s)
    assert s_cut["requests_per_s"] == pytest.approx(done.sum() / cut.makespan_s)
    assert s_cut["output_tokens_per_s"] == pytest.approx(cut.output_len[done].sum() / cut.makespan_s)
    none = simulate(e, w, cfg, max_steps=1)
    assert np.isnan(none.makespan_s) and np.isnan(summarize(none)["requests_per_s"])
    search = max_sustainable_rate(lambda rate: cut, ttft_slo_s=1e9, tpot_slo_s=1e9, rate_lo=1, rate_hi=2)
    assert np.isnan(search.rate_per_s) and not search.meets.any()


class TestWorkload:
    def test_gamma_cv(self):
        a = arrivals("gamma", n=200_000, rate_per_s=5.0, cv=2.0, rng=np.random.default_rng(0))
        g = np.diff(a)
        assert g.mean() == pytest.approx(0.2, rel=0.02) and g.std() / g.mean() == pytest.approx(2.0, rel=0.03)

    def test_lognormal_mean(self):
        x = LengthSpec("lognormal", mean=1000, cv=0.5).sample(200_000, np.random.default_rng(0), field="input_len")
        assert x.mean() == pytest.approx(1000, rel=0.01) and x.std() / x.mean() == pytest.approx(0.5, rel=0.03)

    @pytest.mark.parametrize("text,msg", [
        ("arrival_s,input_len\n0,5\n", "line 2: missing field output_len"),
        ("arrival_s,input_len,output_len\n0,5,x\n", "line 2: output_len must be a whole number"),
        ("arrival_s,input_len,output_len\n-1,5,5\n", "line 2: arrival_s must be"),
        ('{"arrival_s": 0, "input_len": 1.5, "output_len": 2}', "line 1: input_len"),
        ("[1, 2]", "no requests|missing field"),
        ("", "no requests"),
    ])
    def test_trace_errors_name_line_and_field(self, text, msg):
        with pytest.raises(WorkloadError, match=msg):
            parse_trace(text)

    @pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
    def test_trace_line_endings(self, eol):
        # issue #18: a CR-only CSV (old Excel / Mac export) raised _csv.Error on the load-test page
        text = eol.join(["arrival_s,input_len,output_len", "0,100,10", "1,200,20", ""])
        w = parse_trace(text)
        assert w.input_len.tolist() == [100, 200] and w.output_len.tolist() == [10, 20]
        jsonl = eol.join(['{"arrival_s": 0, "input_len": 100, "output_len": 10}',
                          '{"arrival_s": 1, "input_len": 200, "output_len": 20}'])
        assert parse_trace(jsonl.encode()).input_len.tolist() == [100, 200]
        with pytest.raises(WorkloadError, match="^trace line 3: output_len must be a whole number"):
            parse_trace(eol.join(["arrival_s,input_len,output_len", "0,100,10", "1,200,x"]))

    @pytest.mark.parametrize("text,msg", [
        ('arrival_s,input_len,output_len\n0,1,1\n1,"' + "x" * 200_000 + '",1\n', "^trace line 3: not valid CSV"),
        ("arrival_s,input_len,output_len\n\n\n0,5,x\n", "^trace line 4: output_len"),  # blank lines counted
    ])
    def test_trace_csv_errors_name_the_line(self, text, msg):
        with pytest.raises(WorkloadError, match=msg):
            parse_trace(text)

    @pytest.mark.parametrize("digits", [41, 400, 5000])
    @pytest.mark.parametrize("fmt", ["jsonl", "csv"])
    def test_trace_huge_integer_gets_the_normal_message(self, digits, fmt):
        # issue #18: a 5,000-digit JSON integer raised Python's int-string-limit ValueError, 400 digits OverflowError
        big = "1234" * (digits // 4) + "9" * (digits % 4)
        text = (f'{{"arrival_s": 0, "input_len": {big}, "output_len": 1}}' if fmt == "jsonl"
                else f"arrival_s,input_len,output_len\n0,{big},1\n")
        line = 1 if fmt == "jsonl" else 2
        with pytest.raises(WorkloadError) as info:
            parse_trace(text)
        msg = str(info.value)
        assert msg == (f"trace line {line}: input_len must be a whole number between 1 and 10,000,000 "
                       f"(got '{big[:40]}…')"), msg
        assert len(msg) < 200

    def test_trace_jsonl_and_max_model_len(self):
        w = parse_trace('{"arrival_s": 1.0, "input_len": 10, "output_len": 5}\n{"arrival_time": 0.5, "prompt_len": 3, "output_tokens": 2}')
        assert w.arrival_s.tolist() == [0.0, 0.5] and w.input_len.tolist() == [3, 10]
        with pytest.raises(WorkloadError, match="line 1: input_len \\+ output_len \\(15\\) exceeds max_model_len"):
            parse_trace('{"arrival_s": 1.0, "input_len": 10, "output_len": 5}', max_model_len=12)

    def test_bad_parameters(self):
        with pytest.raises(WorkloadError, match="rate"):
            make_workload(arrival="poisson", rate_per_s=0.0)
        with pytest.raises(WorkloadError, match="num_requests"):
            make_workload(num_requests=0)
        with pytest.raises(WorkloadError, match="concurrency"):
            make_workload(arrival="closed", concurrency=0)


class TestRateSearch:
    def test_finds_the_rate_where_p95_ttft_crosses_the_target(self, h100):
        def run(rate):
            w = make_workload(arrival="poisson", rate_per_s=rate, num_requests=300, input_len=LengthSpec("fixed", 2048),
                              output_len=LengthSpec("fixed", 64), seed=0)
            return simulate(h100.engine, w, _cfg(h100))
        res = max_sustainable_rate(run, ttft_slo_s=0.5, tpot_slo_s=1.0, percentile=95, rate_lo=0.5, rate_hi=200)
        assert 0.5 < res.rate_per_s < 200
        assert res.meets[res.rates_per_s == res.rate_per_s].all()
        assert not res.meets[res.rates_per_s > res.rate_per_s].any()


def test_step_timer_falls_back_to_engine_step_when_out_of_date(h100, monkeypatch):
    t = StepTimer(h100.engine, max_tokens=2048)
    assert t.fast
    monkeypatch.setattr(StepTimer, "_fast", lambda self, *a: 1.0)  # a mirror that no longer matches
    slow = StepTimer(h100.engine, max_tokens=2048)
    assert not slow.fast
    ref = float(engine_step(h100.engine, decode_tokens=8.0, decode_context_tokens_sum=8000.0, prefill_tokens=100.0,
                            prefill_attention_pairs=5050.0, prefill_cached_tokens=0.0, logits_tokens=9.0).step_s)
    assert slow(8, 8000.0, 100, 5050.0, 0.0, 9) == ref
    assert not slow.fast_runs  # runs of decode steps go to engine_step too
    run = engine_step(h100.engine, decode_tokens=8.0, decode_context_tokens_sum=8000.0 + 8.0 * np.arange(5.0),
                      prefill_tokens=0.0, prefill_attention_pairs=0.0, prefill_cached_tokens=0.0, logits_tokens=8.0).step_s
    np.testing.assert_array_equal(slow.decode_run(8, 8000.0, 5), run)


class TestStatisticInterval:
    """How sure a run's percentile is (calc.traffic.slo.statistic_interval: sectioning, 10 sections)."""

    def test_by_hand(self):
        from calc.traffic.slo import statistic_interval

        # 0 … 499 in 10 sections of 50: section means 24.5 … 474.5, sd 50 · 3.0277 = 151.4;
        # 249.5 ± 2.262 · 151.4 / √10 = 249.5 ± 108.3
        lo, hi = statistic_interval(np.arange(500.0), "mean")
        assert (lo, hi) == pytest.approx((141.2, 357.8), abs=0.05)
        lo, hi = statistic_interval(np.arange(500.0), "p50")  # the whole run's median 249.5, inside
        assert lo < 249.5 < hi
        assert np.isnan(statistic_interval(np.ones(499), "p95")[0])  # 49.9 a section: too few
        assert statistic_interval(np.full(600, 3.0), "p95") == (3.0, 3.0)  # no spread: no width

    def test_independent_draws_are_covered_about_95_percent(self):
        """On independent exponential draws (800 a run, the load test's default after its warm-up) the
        interval holds the true P95 (ln 20 = 2.996) in about 95 % of runs."""
        from calc.traffic.slo import statistic_interval

        rng = np.random.default_rng(7)
        inside = sum(lo <= np.log(20.0) <= hi
                     for lo, hi in (statistic_interval(rng.exponential(size=800), "p95") for _ in range(400)))
        assert 0.85 <= inside / 400 <= 0.99
