"""calc.traffic.arrival_trains: the closed loop's TTFT as one mixture over the clumps of completions
at step ends and their API-server trains, by hand on constant steps, and against the simulator on
the closed loops of bench/speculative_sim_vs_analytic.py whose P95 the sum of independent parts
read 16-22 % low; calc.timing.speculative.mixed_step_s by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from calc.spec.catalog import get_gpu, get_model
from calc.spec.speculative import parse_speculative_config
from calc.timing.estimate import engine_numbers
from calc.timing.serving import engine_step
from calc.timing.speculative import drafter_for, mixed_step_s, speculative_step, verify_step_args
from calc.traffic.arrival_trains import (_train, delay_half_width_s, poisson_pmf, spill_share, step_chain_pmf,
                                         step_in_flight, train_ttft_s, uniform_below, uniform_excess_mean)

# Places in a train, α = 1 clump per step: a request is the i-th of a clump of N with probability
# P(N)·[N ≥ i + 1]/α, N counted to 6 (the tail lumped there): P(N ≥ i + 1) for i = 0..5 is
# 1 − 1/e = 0.632121, 1 − 2/e = 0.264241, 1 − 2.5/e = 0.080301, 1 − (8/3)/e = 0.018988,
# 1 − (65/24)/e = 0.003660, 1 − (163/60)/e = 0.000594 (sum 0.999906, normalized).
P_I = np.array([1 - 1 / np.e, 1 - 2 / np.e, 1 - 2.5 / np.e, 1 - (8 / 3) / np.e, 1 - (65 / 24) / np.e,
                1 - (163 / 60) / np.e])
P_I = P_I / P_I.sum()


def test_poisson_pmf_lumps_the_tail_into_the_last_term():
    p = poisson_pmf(mean=np.array([0.5, 2.0]), count=3)
    # mean 2: e^−2 = 0.13534, 2e^−2 = 0.27067, the rest 1 − 0.40601 = 0.59399
    assert p[:, 1].tolist() == pytest.approx([0.13534, 0.27067, 0.59399], abs=1e-5)
    assert p.sum(axis=0).tolist() == pytest.approx([1.0, 1.0])


def test_followers_that_miss_the_heads_step_wait_one_step_more():
    # Every step 100 ms whatever it carries, trains 100 ms apart (t_api = T), fixed 50 ms.
    # The head waits r (uniform on [0, T]) and runs its own step: 50 + r + 100.
    # Member i arrives at i·T, always during the step member i − 1 starts (at r + (i − 1)·T),
    # and waits its end r + i·T: i·T at the API + r + its own T. Mean 50 + 50 + 100 + 100·E[i],
    # E[i] = (0.264241 + 2·0.080301 + 3·0.018988 + 4·0.003660 + 5·0.000594)/0.999906 = 0.49947: 249.95 ms.
    m, p = train_ttft_s(step_s=lambda n: 0.1 + 0.0 * n, clump=1.0, fixed_s=0.05, api_s=0.1, q=0.95)
    e_i = float(np.arange(6) @ P_I)
    assert e_i == pytest.approx(0.49947, abs=1e-5)
    assert float(m) == pytest.approx(0.05 + 0.05 + 0.1 + 0.1 * e_i, rel=1e-6)
    # TTFT = 150 ms + 100 ms·(i + U): the P95 lies in the i = 2 piece, CDF after i = 1 is
    # p_0 + p_1 = 0.89645, so U = (0.95 − 0.89645)/0.08031 = 0.6668: 150 + 266.68 = 416.68 ms
    u = (0.95 - P_I[0] - P_I[1]) / P_I[2]
    assert float(p) == pytest.approx(0.15 + 0.1 * (2 + u), rel=1e-6)


def test_followers_ride_in_the_heads_step_when_they_come_before_it_starts():
    # The same 100 ms steps, trains 10 ms apart. Member i rides in the head's step when the head's
    # wait r ≥ i·10 ms: TTFT 50 + r + 100 (its API wait is part of r); else it lands in the head's
    # step and runs the one after: 50 + r + 200. r on 6 bins (midpoints 8.3, 25, 41.7 … ms): member 1
    # and 2 miss only in bin 0, members 3 and 4 in bins 0 and 1, member 5 in bins 0-2:
    # P(miss) = (p_1 + p_2)/6 + 2·(p_3 + p_4)/6 + 3·p_5/6 = 0.065276.
    m, p = train_ttft_s(step_s=lambda n: 0.1 + 0.0 * n, clump=1.0, fixed_s=0.05, api_s=0.01, q=0.95)
    miss = (P_I[1] + P_I[2]) / 6 + 2 * (P_I[3] + P_I[4]) / 6 + 3 * P_I[5] / 6
    assert miss == pytest.approx(0.065276, abs=1e-6)
    assert float(m) == pytest.approx(0.05 + 0.05 + 0.1 + 0.1 * miss, rel=1e-6)
    # P95: 1 − 0.065276 = 0.93472 below 250 ms; the bin-0 misses (all members i ≥ 1, 0.061303,
    # uniform over 250 … 266.7 ms) give the remaining 0.015276 at 0.24919 of the bin: 254.15 ms
    bin0 = P_I[1:].sum() / 6
    assert float(p) == pytest.approx(0.25 + (0.95 - (1 - miss)) / bin0 * 0.1 / 6, rel=1e-6)


def test_one_client_is_its_own_step():
    # α → 0: a decode step of 10 ms in flight (waited U·10 ms), its own prompt step of 60 ms, fixed 50 ms
    m, p = train_ttft_s(step_s=lambda n: 0.01 + 0.05 * n, clump=1e-9, fixed_s=0.05, api_s=0.022, q=0.5)
    assert float(m) == pytest.approx(0.05 + 0.005 + 0.06, rel=1e-6)
    assert float(p) == pytest.approx(0.05 + 0.005 + 0.06, rel=1e-6)  # the median of U·10 ms is 5 ms


def test_the_mixture_broadcasts_and_rises_with_the_clump():
    a = np.array([0.05, 0.2, 0.8])
    m, p = train_ttft_s(step_s=lambda n: 0.02 + 0.04 * n, clump=a, fixed_s=0.05, api_s=0.022, q=0.95)
    assert m.shape == p.shape == (3,)
    assert bool(np.all(np.diff(m) > 0)) and bool(np.all(np.diff(p) > 0)) and bool(np.all(p > m))


E = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"))


def test_mixed_step_without_prompts_is_the_speculative_step():
    d = drafter_for(E, parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}))
    for b in (1, 20, 100):
        assert float(mixed_step_s(E, d, batch=b, context_tokens=1184, prompts=0, prompt_tokens=1024)) == pytest.approx(
            float(speculative_step(E, d, batch=b, context_tokens=1184).step_s), rel=1e-9)


def test_mixed_step_ngram_by_hand():
    # n-gram, B = 20 verifying k + 1 = 5 tokens beside one prompt of 1024: the target runs
    # 100 + 1024 tokens in one forward (CPU time per sequence for 21 sequences, not 101 rows), then
    # 0.8 ms of bookkeeping and 21 lookups of 20 µs
    d = drafter_for(E, parse_speculative_config({"method": "ngram", "num_speculative_tokens": 4}))
    v = verify_step_args(E, batch=20, context_tokens=1184, num_speculative_tokens=4)
    target = engine_step(E, decode_tokens=0.0, decode_context_tokens_sum=0.0, prefill_tokens=100 + 1024,
                         prefill_attention_pairs=float(v["prefill_attention_pairs"]) + 1024 * 1025 / 2,
                         prefill_cached_tokens=float(v["prefill_cached_tokens"]), logits_tokens=101).step_s
    target = float(target) - 20 * 4 * E.sequence_overhead_s
    got = mixed_step_s(E, d, batch=20, context_tokens=1184, prompts=1, prompt_tokens=1024)
    assert float(got) == pytest.approx(target + 0.0008 + 21 * 2e-5, rel=1e-9)


@pytest.mark.parametrize("case,C", [(0, 32), (1, 32)], ids=["8B-C32", "70B-TP4-C32"])
def test_closed_loop_p95_against_the_simulator(case, C):
    # bench/speculative_sim_vs_analytic.py, no speculation: P95 TTFT was 16 % (8B) and 22 % (70B)
    # low with the sum of independent quantiles (the bench's old sample, 20·C measured)
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import speculative_sim_vs_analytic as b  # noqa: PLC0415

    d = b.closed_case(*b.CASES[case], C, "none", measured=20 * C)
    for s, a in zip(d["sim"][:2], d["ana"][:2]):
        assert a == pytest.approx(s, rel=0.15)


def test_spill_share_by_hand():
    # room for 3.69 prompts: of 5 the last 1.31 wait a step, 1.31/5 = 0.262; of 3 none; of 8, 4.31/8 = 0.53875
    got = spill_share(prompts=np.array([5.0, 3.0, 8.0]), fit=3.69)
    assert got.tolist() == pytest.approx([0.262, 0.0, 0.53875], abs=1e-9)


class TestStepInFlight:
    T = np.array([0.01, 0.1])  # a 10 ms decode step, a 100 ms prompt step
    P = np.array([0.9, 0.1])

    def test_without_delay_length_biased(self):
        # T̄ = 0.9 · 10 + 0.1 · 100 = 19 ms: 9/19 = 0.47368 and 10/19 = 0.52632, uniform from 0
        f, lo, hi, l, rl = step_in_flight(step_s=self.T, prompt_pmf=self.P)
        assert f.tolist() == [0.0, 0.0] and rl.tolist() == [0.0, 0.0]
        assert l.tolist() == pytest.approx([9 / 19, 10 / 19])

    def test_delay_shorter_than_every_step_is_the_first_step(self):
        # δ = 5 ms < T_0: the step that starts at the end is met, of P(n), its rest T_n − 5 ms
        f, lo, hi, l, rl = step_in_flight(step_s=self.T, prompt_pmf=self.P, delay_s=0.005)
        assert f.tolist() == pytest.approx([0.9, 0.1]) and l.tolist() == pytest.approx([0.0, 0.0])
        assert lo.tolist() == pytest.approx([0.005, 0.095]) and hi.tolist() == pytest.approx([0.005, 0.095])
        # spread ± 3 ms (D uniform on [2, 8] ms, all of it within the decode step): rests [2, 8] and [92, 98] ms
        f, lo, hi, l, rl = step_in_flight(step_s=self.T, prompt_pmf=self.P, delay_s=0.005, delay_half_s=0.003)
        assert f.tolist() == pytest.approx([0.9, 0.1]) and l.tolist() == pytest.approx([0.0, 0.0])
        assert lo.tolist() == pytest.approx([0.002, 0.092]) and hi.tolist() == pytest.approx([0.008, 0.098])

    def test_long_delay_tends_to_length_biased(self):
        f, lo, hi, l, rl = step_in_flight(step_s=self.T, prompt_pmf=self.P, delay_s=100.0, delay_half_s=50.0)
        assert f.sum() == 0.0 and l.tolist() == pytest.approx([9 / 19, 10 / 19])

    def test_sums_to_one_and_broadcasts(self):
        T = np.stack([np.full(3, 0.01), np.array([0.03, 0.1, 0.3])])
        for h in (0.0, np.array([0.01, 0.02, 0.1])):
            f, lo, hi, l, rl = step_in_flight(step_s=T, prompt_pmf=np.array([[0.8], [0.2]]),
                                              delay_s=np.array([0.02, 0.05, 0.5]), delay_half_s=h)
            assert (f + l).sum(axis=0).tolist() == pytest.approx([1.0, 1.0, 1.0])
            assert np.all(lo <= hi) and np.all(rl >= 0) and np.all(rl <= T)

    def test_the_spread_splits_the_decode_step_at_its_end(self):
        # T_0 = 10 ms, δ = 10 ms ± 5 ms (D uniform on [5, 15] ms): half the requests come within the
        # decode step that started at the finish (first[0] = 0.9 · 1/2 = 0.45, rest uniform on [0, 5] ms);
        # the prompt step outlasts all of D (first[1] = 0.1, rest [85, 95] ms). The other 0.45 come
        # after the decode step: E[(D − 10 ms)⁺] = 5²/(2 · 10) = 1.25 ms for both kinds (T_n ≥ 5 ms:
        # E[(D − 10 ms − T_n)⁺] = 0), so shares 0.9 and 0.1 of 0.45; the window where D > T_0,
        # 1.25 / 0.5 = 2.5 ms: rests uniform on [7.5, 10] and [97.5, 100] ms
        f, lo, hi, l, rl = step_in_flight(step_s=self.T, prompt_pmf=self.P, delay_s=0.01, delay_half_s=0.005)
        assert f.tolist() == pytest.approx([0.45, 0.1]) and l.tolist() == pytest.approx([0.405, 0.045])
        assert lo.tolist() == pytest.approx([0.0, 0.085]) and hi.tolist() == pytest.approx([0.005, 0.095])
        assert rl.tolist() == pytest.approx([0.0075, 0.0975])


def test_uniform_excess_and_below_by_hand():
    # D uniform on [20, 60] ms: E[(D − 30 ms)⁺] = 30²/(2 · 40) = 11.25 ms; E[(D − 10 ms)⁺] = (50² − 10²)/80 = 30 ms
    # (= E[D] − 10 ms, all of D above); P(D < 30 ms) = 10/40 = 0.25; a point at 20 ms: (20 − 10)⁺ = 10 ms
    got = uniform_excess_mean(low=0.02, high=0.06, level=np.array([0.03, 0.01, 0.07]))
    assert got.tolist() == pytest.approx([0.01125, 0.03, 0.0], abs=1e-12)
    assert float(uniform_below(low=0.02, high=0.06, level=0.03)) == pytest.approx(0.25)
    assert float(uniform_excess_mean(low=0.02, high=0.02, level=0.01)) == pytest.approx(0.01)
    assert float(uniform_below(low=0.02, high=0.02, level=0.03)) == 1.0


def test_train_members_and_outsiders_by_hand():
    # Steps: decode 10 ms, then 100 ms + 50 ms per prompt; t_api = 30 ms; the head meets a step that
    # ends 40 ms after it arrives, with 1 outsider. Members arrive at 0, 30, 60 ms: 0 and 30 join the
    # step starting at 40 (with the outsider: 3 prompts, 250 ms, to 290 ms); 60 arrives during it and
    # runs alone in the next (150 ms), starting at 290: it waits 230 ms.
    T = np.array([0.01, 0.15, 0.2, 0.25, 0.3])
    got = _train(3, head_wait=np.array(0.04), T=T, t_api=0.03, outsiders=1.0)
    assert [float(w) for w, _ in got] == pytest.approx([0.04, 0.01, 0.23])
    assert [float(n) for _, n in got] == [3.0, 3.0, 1.0]


def test_the_delay_removes_the_spread_of_the_step_in_flight():
    # α → 0, every step 100 ms, fixed 50 ms: length-biased, the wait is U·100 ms (mean 50, P95 95 ms);
    # arriving δ = 50 ms after a step end, it is the first step's rest, 50 ms exactly
    # exactly (h = 0); spread ± 25 ms (D uniform on [25, 75] ms) the rest is uniform on [25, 75] ms:
    # mean 50 ms, P95 25 + 0.95 · 50 = 72.5 ms (on FIRST_BINS = 3 bins: exact for a uniform); with the
    # default spread, D uniform on [0, 2δ] = [0, 100 ms], the step's whole length again (P95 245 ms)
    kw = dict(step_s=lambda n: 0.1 + 0.0 * n, clump=1e-9, fixed_s=0.05, api_s=0.02, q=0.95)
    m0, p0 = train_ttft_s(**kw)
    m1, p1 = train_ttft_s(**kw, delay_s=0.05, delay_half_s=0.0)
    m2, p2 = train_ttft_s(**kw, delay_s=0.05, delay_half_s=0.025)
    m3, p3 = train_ttft_s(**kw, delay_s=0.05)
    assert float(m0) == pytest.approx(0.2, rel=1e-6) and float(p0) == pytest.approx(0.245, rel=1e-6)
    assert float(m1) == pytest.approx(0.2, rel=1e-6) and float(p1) == pytest.approx(0.2, abs=1e-6)
    assert float(m2) == pytest.approx(0.2, rel=1e-6) and float(p2) == pytest.approx(0.2225, rel=1e-6)
    assert float(m3) == pytest.approx(0.2, rel=1e-6) and float(p3) == pytest.approx(0.245, rel=1e-6)


def test_closed_loop_with_full_steps_against_the_simulator():
    # issue 21, bench/speculative_sim_vs_analytic.py: Llama-3.1-70B TP 4, n-gram, C = 128: the room
    # holds 3.7 prompts of 2048; simulated mean / P95 TTFT 870 / 1390 ms, analytic 954 / 1606 ms
    # (+10 / +16 %) before, 865 / 1386 ms after
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import speculative_sim_vs_analytic as b  # noqa: PLC0415

    d = b.closed_case(*b.CASES[1], 128, "ngram k=4 a=0.5", measured=20 * 128)
    for s, a in zip(d["sim"][:2], d["ana"][:2]):
        assert a == pytest.approx(s, rel=0.08)


def test_varied_prompt_lengths_widen_the_tail_not_the_mean():
    # the step in flight carries Poisson(α/u) units of u = 1 + cv² prompts: the same tokens on
    # average, more spread (cv 0.7: u = 1.49), so a longer rest on average (+6 % here: 194 → 206 ms)
    # and a wider tail (307 → 339 ms); with prompts rare (α → 0) nothing changes
    kw = dict(step_s=lambda n: 0.02 + 0.04 * n, fixed_s=0.05, api_s=0.022, q=0.95, delay_s=0.05)
    m0, p0 = train_ttft_s(clump=0.8, **kw)
    m1, p1 = train_ttft_s(clump=0.8, input_cv=0.7, **kw)
    assert float(p1) > 1.05 * float(p0) and float(m0) < float(m1) < 1.1 * float(m0)
    r0, r1 = train_ttft_s(clump=1e-9, **kw), train_ttft_s(clump=1e-9, input_cv=0.7, **kw)
    assert float(r1[0]) == pytest.approx(float(r0[0]), rel=1e-9) and float(r1[1]) == pytest.approx(float(r0[1]), rel=1e-9)


def test_other_clients_clumps_against_a_large_simulated_sample():
    # issue 21: Llama-3.1-8B EAGLE-3 C = 8, P95 TTFT: simulated 153.8 ms over the 160 requests the
    # bench once measured (154-186 ms over seeds 1-6), 165.4 ms over 4,000; analytic 177.5 ms with
    # the clumps of all C clients (+7 %), 169.6 ms with those of the R − 1 = 7 others (+2.6 %); with the API
    # server's refitted 14.5 ms a request (its trains closer together) the P95 reads +5.9 %
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import speculative_sim_vs_analytic as b  # noqa: PLC0415

    d = b.closed_case(*b.CASES[0], 8, "eagle3 k=3 a=0.7", measured=4000)
    for s, a in zip(d["sim"][:2], d["ana"][:2]):
        assert a == pytest.approx(s, rel=0.07)


def test_the_delay_spread_by_hand_at_the_decode_step():
    # α → 0, T_0 = 10 ms, δ = 10 ms, D uniform on [0, 20] ms (h = δ): half the requests come within
    # the decode step that started at the finish, rest T_0 − D uniform on [0, 10] ms (mean 5 ms); the
    # other half in the next one, E[(D − 10 ms)⁺] = 10²/(2 · 20) = 2.5 ms over P(D > T_0) = 1/2: a
    # window of 5 ms, rest uniform on [5, 10] ms (mean 7.5 ms). Wait 0.5 · 5 + 0.5 · 7.5 = 6.25 ms;
    # own step 60 ms, fixed 50 ms: 116.25 ms
    assert float(delay_half_width_s(delay_s=0.01)) == pytest.approx(0.01)
    m, _ = train_ttft_s(step_s=lambda n: 0.01 + 0.05 * n, clump=1e-9, fixed_s=0.05, api_s=0.02, q=0.5, delay_s=0.01)
    assert float(m) == pytest.approx(0.11625, rel=1e-6)


@pytest.mark.parametrize("prompt_s,clump", [(0.0, 1e-9), (0.5, 0.1), (0.5, 0.5), (5.0, 0.1)])
def test_the_wait_never_rises_as_the_steps_shorten(prompt_s, clump):
    # issue 17: δ = 1 (t_api small), the decode step T_0 from 20·δ down to δ/20 (more bandwidth), the
    # prompt's cost P fixed (compute-bound) and the clients' rate X fixed (α = X·T_0/(1 − X·P) falls
    # with the steps): with the delay known exactly the wait jumped by a whole step where T_0 passes
    # δ; spread over [0, 2δ] (delay_half_width_s) the mean TTFT falls with T_0 everywhere
    t0 = np.geomspace(0.05, 20.0, 120)
    x = clump / (1.0 + clump * prompt_s)
    a = x * t0 / (1.0 - x * prompt_s)
    kw = dict(step_s=lambda n: t0 + n * prompt_s, clump=a, fixed_s=0.0, api_s=1e-3, q=0.5, delay_s=1.0)
    m, _ = train_ttft_s(**kw)
    assert bool(np.all(np.diff(m) >= -1e-9 * m[1:])), np.min(np.diff(m))
    exact, _ = train_ttft_s(**kw, delay_half_s=0.0)
    assert bool(np.any(np.diff(exact) < -0.1 * exact[1:]))  # the jump the spread removes


def test_the_closed_loops_decode_batch_is_its_own_steady_state():
    # Little over the decode phase: X = 2 requests/s, O = 256 (255 decode steps), TPOT 40 ms:
    # 2 · 255 · 0.04 = 20.4 sequences decoding; capped at the slots (16); a loop without a TPOT
    # (one output token: nothing decodes) falls back to the open-loop fixed point, 0 sequences
    from types import SimpleNamespace

    from calc.traffic.queueing import _load_inputs, _steady_decode_batch

    loop = SimpleNamespace(requests_per_s=np.array([2.0, 2.0]), tpot_s=np.array([0.04, 0.04]))
    got = _steady_decode_batch(E, loop=loop, slots=np.array([64.0, 16.0]), output_len=256.0)
    assert got.tolist() == pytest.approx([20.4, 16.0])
    _, _, _, _, kw = _load_inputs(E, input_len=1024.0, output_len=1.0, input_cv=0.0, output_cv=0.0, max_num_seqs=256,
                                  kv_capacity_tokens=400_000, max_num_batched_tokens=8192, enable_chunked_prefill=True)
    none = SimpleNamespace(requests_per_s=np.array(2.0), tpot_s=np.array(np.nan))
    assert float(_steady_decode_batch(E, loop=none, slots=np.array(64.0), **kw)) == 0.0


def test_the_step_chain_by_hand():
    """Two kinds of step (the second lumps all prompt steps), a decode step of 10 ms and a prompt step of
    200 ms, D uniform on [0, 100 ms], α = 0.3. After a step of length T the next carries the clumps of
    c = P(D < T) + E[min(D, T)]/T̄ step ends: decode, 0.1 + (50 − 90²/200)/T̄ = 0.1 + 9.5 ms/T̄; prompt,
    1 + 50 ms/T̄; scaled to Σ π·c = 1. The stationary π is the fixed point of
    π(0) = π(0)·e^(−α·c_0) + π(1)·e^(−α·c_1); the prompt step follows a prompt step more often."""
    T = np.array([0.01, 0.2])
    pi = step_chain_pmf(step_s=T, mean=0.3, delay_lo_s=0.0, delay_hi_s=0.1)
    t_bar = float(pi @ T)
    c = np.array([0.1 + 0.0095 / t_bar, 1.0 + 0.05 / t_bar])
    c = c / float(pi @ c)
    assert pi[0] == pytest.approx(pi[0] * np.exp(-0.3 * c[0]) + pi[1] * np.exp(-0.3 * c[1]), rel=1e-6)
    assert c[1] > 2.0 * c[0]  # a prompt step catches the clump of the end it started at whole


def test_the_step_chain_keeps_the_mean_and_widens_the_spread():
    """Every clump lands in exactly one step: the prompts per step average α still; the chain
    leaves fewer steps with prompts and more with several than Poisson(α)."""
    T = 0.04 + 0.24 * np.arange(7.0)  # Llama-3.1-70B TP 4 like: 40 ms decode, 240 ms a prompt
    pi = step_chain_pmf(step_s=T, mean=0.3, delay_lo_s=0.0, delay_hi_s=0.1)
    p = poisson_pmf(mean=0.3, count=7)
    assert float(pi @ np.arange(7.0)) == pytest.approx(0.3, rel=1e-4)
    assert pi[0] > p[0] and pi[2:].sum() > p[2:].sum()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.floats(0.005, 0.1), st.floats(0.01, 20.0), st.floats(1e-3, 3.0), st.floats(0.0, 0.05),
                          st.floats(0.001, 0.2)), min_size=2, max_size=5),
       st.sampled_from([0.5, 0.95, 0.99]), st.sampled_from([np.inf, 1.5, 3.7]), st.sampled_from([0.0, 1.0]))
def test_the_mixture_over_many_configurations_is_each_ones_own(rows, q, fit, cv):
    """The mixture's pieces are worked out for every configuration at once (the head's situations on
    a leading axis, 0.15 s -> 10 ms a call): each configuration's mean and quantile are those it
    has alone, nothing leaks between configurations or between the entries of one. Two decisions
    are the call's as a whole and are set aside here: pieces lighter than NEGLIGIBLE in every
    configuration are left out (0 here: none is), and a delay known exactly takes one bin (delays
    of 1 ms and more here)."""
    from calc.traffic import arrival_trains

    t0, ratio, a, t_api, delay = (np.array(c) for c in zip(*rows))
    kw = dict(fixed_s=0.03, q=q, fit=fit, input_cv=cv)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(arrival_trains, "NEGLIGIBLE", 0.0)
        m, p = train_ttft_s(step_s=lambda n: t0 + t0 * ratio * n, clump=a, api_s=t_api, delay_s=delay, **kw)
        for i in range(len(rows)):
            mi, pi = train_ttft_s(step_s=lambda n, i=i: t0[i] + t0[i] * ratio[i] * n, clump=a[i], api_s=t_api[i],
                                  delay_s=delay[i], **kw)
            assert float(m[i]) == pytest.approx(float(mi), rel=1e-9) and float(p[i]) == pytest.approx(float(pi), rel=1e-9)
