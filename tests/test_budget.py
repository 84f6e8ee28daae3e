"""The per-request budget (issue #18): the work estimate, the caps, the bounded inter-token gaps,
the byte-bounded result cache and the settings."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency
from calc.timing.estimate import engine_numbers
from calc.traffic import simulator
from calc.traffic.budget import (BYTES_PER_STEP, SECONDS_PER_PASS, SECONDS_PER_SPEC_STEP, SECONDS_PER_STEP,
                                 SLOWEST_PASS_S, caps, estimate_work)
from calc.traffic.simulator import EngineConfig, _Gaps, simulate
from calc.traffic.slo import summarize
from calc.traffic.workload import LengthSpec, make_workload
from ui.budget import MIB, ByteCache, limits, nbytes, shared_memo


class TestEstimateWork:
    def test_issue_load_test_link(self):
        # 5,000 prompts of 100,000 tokens in chunks of 16: 31.25 M prefill steps (+ 16 outputs each,
        # 80,000 tokens: 5,000 more steps of 16 tokens)
        w = estimate_work(input_len=np.full(5000, 100_000), output_len=np.full(5000, 16), max_num_batched_tokens=16,
                          max_num_seqs=1024)
        assert w.passes == 5000 * 100_000 // 16
        assert w.steps == (5000 * 100_016) // 16
        assert w.cpu_s > 1000

    def test_closed_loop_of_one_client_decodes_one_token_a_step(self):
        w = estimate_work(input_len=np.full(5000, 100), output_len=np.full(5000, 100_000), max_num_batched_tokens=8192,
                          max_num_seqs=256, closed_clients=1)
        assert w.steps == 500_000_000  # one client: one token per step
        assert w.peak_bytes > 50 * 2**30

    def test_whole_prefill_budget_is_at_least_the_longest_prompt(self):
        w = estimate_work(input_len=[4000, 4000], output_len=[1, 1], max_num_batched_tokens=16, max_num_seqs=8,
                          enable_chunked_prefill=False)
        assert w.passes == 2  # 8,000 tokens / 4,000 a step

    def test_is_a_lower_bound_of_a_real_run(self):
        e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"))
        w = make_workload(arrival="poisson", num_requests=300, rate_per_s=20.0, input_len=LengthSpec("fixed", 700),
                          output_len=LengthSpec("fixed", 90), seed=1)
        cfg = EngineConfig(max_num_seqs=64, max_num_batched_tokens=512, enable_chunked_prefill=True, num_blocks=20_000)
        r = simulate(e, w, cfg)
        est = estimate_work(input_len=w.input_len, output_len=w.output_len, max_num_batched_tokens=512, max_num_seqs=64)
        assert est.steps <= r.step_s.size and est.passes <= r.passes


class TestEstimateWorkSpeculative:
    def test_hand_computed_bounds(self):
        # 4 requests, P = 100, O = 9, k = 3: each gains ≤ 4 tokens a step, so ⌈9/4⌉ = 3 steps of output
        # each, 12 / S = 2 → 6 steps; tokens: 400 prompt + 4 · ⌈8/4⌉ · 4 = 32 verify → 432 / 64 = 6.75 → 7
        w = estimate_work(input_len=[100] * 4, output_len=[9] * 4, max_num_batched_tokens=64, max_num_seqs=2,
                          num_speculative_tokens=3)
        assert w.steps == 7
        assert w.passes == 7  # ⌈400 / 64⌉: pure speculative decode runs are fast-forwarded too
        assert w.cpu_s == pytest.approx(7 * SECONDS_PER_PASS + 7 * SECONDS_PER_SPEC_STEP)

    def test_k0_is_the_plain_estimate(self):
        kw = dict(input_len=[700] * 50, output_len=[90] * 50, max_num_batched_tokens=512, max_num_seqs=64)
        assert estimate_work(**kw, num_speculative_tokens=0) == estimate_work(**kw)

    def test_costs_more_than_plain_decoding_at_low_load(self):
        # 1,000 short prompts, long outputs, one client: a plain fast-forwarded decode step costs
        # 1.25 µs, a speculative one 6 µs and gains at most 4 tokens:
        # 1,000,000 · 1.25 µs = 1.25 s against 250,000 · 6 µs = 1.5 s (+ 13 passes of 80 µs each)
        kw = dict(input_len=[100] * 1000, output_len=[1000] * 1000, max_num_batched_tokens=8192, max_num_seqs=256,
                  closed_clients=1)
        plain, spec = estimate_work(**kw), estimate_work(**kw, num_speculative_tokens=3)
        assert plain.steps == 1_000_000 and spec.steps == 250_000  # ⌈1000/4⌉ = 250 steps a request
        assert plain.passes == spec.passes == 13  # ⌈100,000 / 8192⌉
        assert spec.cpu_s == pytest.approx(13 * 80e-6 + 1.5) and spec.cpu_s > plain.cpu_s

    def test_is_a_lower_bound_of_a_real_speculative_run(self):
        from calc.spec.speculative import parse_speculative_config
        from calc.timing.speculative import drafter_for

        e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"))
        sp = parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}, acceptance_rate=0.9)
        w = make_workload(arrival="burst", num_requests=40, input_len=LengthSpec("fixed", 300),
                          output_len=LengthSpec("fixed", 120), seed=1)
        cfg = EngineConfig(max_num_seqs=16, max_num_batched_tokens=512, enable_chunked_prefill=True, num_blocks=20_000)
        r = simulate(e, w, cfg, speculative=(drafter_for(e, sp), sp.accepted_at_position))
        est = estimate_work(input_len=w.input_len, output_len=w.output_len, max_num_batched_tokens=512, max_num_seqs=16,
                            num_speculative_tokens=3)
        assert est.steps <= r.step_s.size and est.passes <= r.passes


def test_caps_follow_cpu_and_memory():
    steps, passes = caps(cpu_s=1.0, memory_bytes=2**20)
    assert passes == round(1.0 / SLOWEST_PASS_S)  # 3,333 passes of 300 µs
    assert steps == 2**20 // BYTES_PER_STEP  # memory binds first here


def test_caps_of_a_speculative_run_count_its_dearer_steps():
    # 1 s: 800,000 plain fast-forwarded steps of 1.25 µs, 166,666 speculative ones of 6 µs
    assert caps(cpu_s=1.0, memory_bytes=2**30)[0] == int(1.0 / SECONDS_PER_STEP)  # 799,999 (float rounding)
    assert caps(cpu_s=1.0, memory_bytes=2**30, speculative=True) == (166_666, 3333)


class TestGaps:
    def test_small_runs_keep_every_gap(self):
        g = _Gaps(limit=100)
        g.add(np.array([0.5, 0.25]), np.array([2, 1]))
        x, sketched, mean = g.result()
        assert x.tolist() == [0.5, 0.5, 0.25] and not sketched and mean == pytest.approx(1.25 / 3)

    def test_large_runs_keep_a_sketch_with_the_exact_mean_and_close_percentiles(self):
        rng = np.random.default_rng(0)
        vals = rng.lognormal(-4, 0.5, 50_000)
        counts = rng.integers(1, 50, 50_000)
        g = _Gaps(limit=1000)
        for v, c in zip(np.array_split(vals, 37), np.array_split(counts, 37)):
            g.add(v, c)
        x, sketched, mean = g.result()
        assert sketched and x.size == 1000
        full = np.repeat(vals, counts)
        assert mean == pytest.approx(full.mean(), rel=1e-12)
        for q in (50, 90, 99):
            exact = np.percentile(full, q)
            # within a few ranks of 1/1000 of the distribution
            assert np.mean(full <= np.percentile(x, q)) == pytest.approx(np.mean(full <= exact), abs=0.01)

    def test_a_simulation_past_the_limit_reports_the_exact_mean(self, monkeypatch):
        e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"), efficiency=Efficiency())
        w = make_workload(arrival="burst", num_requests=8, input_len=LengthSpec("fixed", 50),
                          output_len=LengthSpec("fixed", 400))
        cfg = EngineConfig(max_num_seqs=4, max_num_batched_tokens=256, enable_chunked_prefill=True, num_blocks=10_000)
        full = simulate(e, w, cfg)
        assert not full.itl_sketched and full.itl_s.size == 8 * 399
        monkeypatch.setattr(simulator._Gaps.__init__, "__defaults__", (64,))
        small = simulate(e, w, cfg)
        assert small.itl_sketched and small.itl_s.size == 64
        a, b = summarize(full), summarize(small)
        assert b["itl_s_mean"] == pytest.approx(a["itl_s_mean"], rel=1e-9)
        assert b["ttft_s_p99"] == a["ttft_s_p99"] and b["tpot_s_mean"] == a["tpot_s_mean"]
        assert np.array_equal(full.step_s, small.step_s)


def _run_threads(threads) -> None:
    """Start every thread, then wait for all of them."""
    threads = list(threads)
    for th in threads:
        th.start()
    for th in threads:
        th.join()


class TestByteCache:
    def test_evicts_by_bytes_least_recently_used_first(self):
        c = ByteCache(max_bytes=10_000)
        for k in "abc":
            c.get(k, lambda: np.zeros(400))  # 3,312 B each
        c.get("a", lambda: None)  # used: "b" is now the oldest
        c.get("d", lambda: np.zeros(400))
        assert c.keys() == ["c", "a", "d"] and c.total_bytes <= 10_000

    def test_a_value_larger_than_the_cache_is_returned_but_not_kept(self):
        c = ByteCache(max_bytes=1000)
        assert c.get("big", lambda: np.zeros(1000)).size == 1000
        assert c.keys() == [] and c.total_bytes == 0

    def test_values_are_read_only(self):
        c = ByteCache(max_bytes=10_000)
        x = c.get("a", lambda: np.zeros(10))
        with pytest.raises(ValueError):
            x[0] = 1.0

    def test_threads_compute_a_key_once_and_share_it(self):
        c = ByteCache(max_bytes=10**6)
        calls = []

        def slow():
            calls.append(1)
            time.sleep(0.2)
            return np.arange(10)

        got = []
        _run_threads(threading.Thread(target=lambda: got.append(c.get("k", slow))) for _ in range(8))
        assert len(calls) == 1 and len(got) == 8 and all(g is got[0] for g in got)

    def test_many_threads_keep_the_byte_count_right(self):
        c = ByteCache(max_bytes=50_000)

        def work(i):
            for j in range(200):
                c.get((i + j) % 40, lambda: np.zeros(500))

        _run_threads(threading.Thread(target=work, args=(i,)) for i in range(6))
        assert c.total_bytes == sum(nbytes(np.zeros(500)) for _ in c.keys()) <= 50_000


class TestSharedMemo:
    """ui.budget.shared_memo: lru_cache's behaviour, but a key is computed once while threads wait."""

    def test_threads_asking_one_key_at_once_compute_it_once(self):
        calls = []

        @shared_memo(4)
        def slow(x, *, scale=1):
            calls.append(x)
            time.sleep(0.2)
            return np.arange(x) * scale

        got = []
        _run_threads(threading.Thread(target=lambda: got.append(slow(10, scale=2))) for _ in range(8))
        assert calls == [10] and len(got) == 8 and all(g is got[0] for g in got)
        assert slow.cache_info() == (7, 1, 4, 1)  # hits, misses, maxsize, currsize
        assert slow(10, scale=3) is not got[0] and calls == [10, 10]  # keyword values are part of the key

    def test_distinct_keys_do_not_wait_for_each_other(self):
        @shared_memo(8)
        def slow(x):
            time.sleep(0.3)
            return x

        t0 = time.monotonic()
        _run_threads(threading.Thread(target=slow, args=(i,)) for i in range(4))
        assert time.monotonic() - t0 < 1.0  # 4 × 0.3 s one after another would be 1.2 s

    def test_an_exception_is_not_cached_and_waiters_try_again(self):
        calls = []

        @shared_memo(2)
        def flaky(x):
            calls.append(x)
            if len(calls) == 1:
                time.sleep(0.1)
                raise ValueError("first call fails")
            return x

        out, errors = [], []

        def call():
            try:
                out.append(flaky(1))
            except ValueError as exc:
                errors.append(exc)

        _run_threads(threading.Thread(target=call) for _ in range(3))
        assert len(errors) == 1 and out == [1, 1] and calls == [1, 1]  # one failure, then one computation shared
        flaky.cache_clear()
        assert flaky.cache_info() == (0, 0, 2, 0)


def test_settings_from_the_environment(monkeypatch):
    monkeypatch.setenv("LLM_CALC_MAX_CPU_S", "2.5")
    monkeypatch.setenv("LLM_CALC_MAX_RUN_MIB", "64")
    monkeypatch.setenv("LLM_CALC_CACHE_MIB", "nonsense")  # unreadable: the default
    lim = limits()
    assert (lim.cpu_s, lim.run_bytes, lim.cache_bytes) == (2.5, 64 * MIB, 256 * MIB)
    monkeypatch.setenv("LLM_CALC_MAX_CPU_S", "-1")
    assert limits().cpu_s == 15.0
