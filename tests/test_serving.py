"""calc.timing.serving: the closed-loop serving model (TTFT, TPOT, throughput) with and without chunked
prefill. physics.md A8. The step times themselves are tested in test_perf / test_estimate; here
the expected values compose those step times by arithmetic written out in the tests.
"""

import numpy as np
import pytest

from calc.spec.catalog import get_gpu, get_model
from calc.timing.estimate import engine_numbers, estimate
from calc.spec.inputs import Efficiency, ServingConfig
from calc.timing.serving import EngineNumbers, closed_loop, decode_step, prefill_step

LLAMA2_7B = "meta-llama/Llama-2-7b-hf"
LLAMA31_8B = "meta-llama/Llama-3.1-8B"
# The closed-loop derivation of the engine itself: no API server in front (its term is tested in
# tests/test_traffic.py TestApiServer), an offline engine's few ms of request overhead.
ENGINE_ONLY = Efficiency(api_server_request_s=0.0, request_overhead_s=2e-3)
T_REQ = ENGINE_ONLY.request_overhead_s


def _engine(model=LLAMA2_7B, gpu="a100-80gb", **serving):
    return engine_numbers(get_model(model), get_gpu(gpu), ServingConfig(**serving), ENGINE_ONLY)


def _loop(e, *, I, O, C, seqs=256, budget=8192, chunked=False, kv_tokens=1e9, fits=True, uniform=False):
    # uniform=False: the spread-arrival derivation (varied lengths); the FCFS wave of identical
    # requests is tested in tests/test_serving_wave.py against the simulator
    return closed_loop(e, input_len=I, output_len=O, concurrency=C, max_num_seqs=seqs, max_num_batched_tokens=budget,
                       enable_chunked_prefill=chunked, kv_capacity_tokens=kv_tokens, fits=fits, uniform_lengths=uniform)


class TestSingleClient:
    @pytest.mark.parametrize("chunked", [False, True])
    def test_c1_ttft_is_the_prefill_step_and_tpot_the_decode_step(self, chunked):
        # C = 1: nothing else runs. TTFT = one prefill step of I tokens + the per-request overhead;
        # TPOT = one decode step of batch 1 at the mean context I + O/2.
        e = _engine(dtype="float16")
        r = _loop(e, I=2048, O=128, C=1, chunked=chunked)
        assert float(r.ttft_s) == pytest.approx(float(prefill_step(e, prompts=1, prompt_tokens=2048).step_s) + T_REQ, rel=1e-12)
        assert float(r.tpot_s) == pytest.approx(float(decode_step(e, batch=1, context_tokens=2048 + 64).step_s), rel=1e-12)
        # E2E = TTFT + (O - 1) TPOT; throughput = O / E2E
        assert float(r.e2e_latency_s) == pytest.approx(float(r.ttft_s + 127 * r.tpot_s), rel=1e-12)
        assert float(r.output_tokens_per_s) == pytest.approx(128 / float(r.e2e_latency_s), rel=1e-12)

    def test_c1_llama2_7b_a100_numbers(self):
        # Default efficiency, batch-1 decode at context 2048 + 64 = 2112:
        # (13,214,154,752 + 2113 * 524,288 + 9,606,144 B) / (0.8 * 2.039e12) + 1.5 ms + 35 us (one
        # sequence's engine CPU) = 10.321 ms
        e = _engine(dtype="float16")
        r = _loop(e, I=2048, O=128, C=1)
        expected = (13_214_154_752 + 2113 * 524_288 + (32 * 147_968 * 2 + 4096 * 2 + 32000 * 4)) / (0.8 * 2.039e12) + 1.5e-3 + 35e-6
        assert float(r.tpot_s) == pytest.approx(expected, rel=1e-9)
        assert float(r.mbu) < 0.8  # the bandwidth fraction is the ceiling; overheads keep it below


class TestClosedLoop:
    @pytest.mark.parametrize("chunked", [False, True])
    def test_littles_law_and_token_accounting(self, chunked):
        e = _engine(LLAMA31_8B, "h100-sxm")
        C = np.array([1.0, 2.0, 7.0, 32.0, 100.0, 256.0, 1000.0])
        r = _loop(e, I=700, O=300, C=C, chunked=chunked, kv_tokens=300_000)
        np.testing.assert_allclose(r.requests_per_s * r.e2e_latency_s, C, rtol=1e-9)
        np.testing.assert_allclose(r.output_tokens_per_s, r.requests_per_s * 300, rtol=1e-12)
        np.testing.assert_allclose(r.total_tokens_per_s, r.requests_per_s * 1000, rtol=1e-12)
        np.testing.assert_allclose(r.e2e_latency_s, r.ttft_s + 299 * r.tpot_s, rtol=1e-9)
        assert np.all(r.itl_s == r.tpot_s)

    def test_unchunked_composition(self):
        # C = 4, O = 64 (4/64 < 1 prompt per step, so each prompt prefills alone):
        #   TTFT = T_pf + 1/2 T_dec * 63/64 (a decode step in flight) + t_request
        #   TPOT = T_dec + 3 T_pf / 63 (the 3 other prompts stall our 63 decode steps once each)
        e = _engine(dtype="float16")
        r = _loop(e, I=512, O=64, C=4)
        t_pf = float(prefill_step(e, prompts=1, prompt_tokens=512).step_s)
        t_dec = float(decode_step(e, batch=4, context_tokens=512 + 32).step_s)
        assert float(r.ttft_s) == pytest.approx(t_pf + 0.5 * t_dec * 63 / 64 + T_REQ, rel=1e-12)
        assert float(r.tpot_s) == pytest.approx(t_dec + 3 * t_pf / 63, rel=1e-12)
        assert float(r.requests_per_s) == pytest.approx(4 / (float(r.ttft_s) + 63 * float(r.tpot_s)), rel=1e-12)

    def test_prefill_only_load_is_capped_by_prefill_capacity(self):
        # O = 1 (no decode phase), C = 64 prompts of 512 tokens, budget 2048: at most 4 prompts per
        # prefill step, so at most 4 requests per T_step(4 x 512). (Before the conservation fix the
        # model returned 64 / T_step, 16x that, with MFU > 1.)
        e = _engine(dtype="float16")
        r = _loop(e, I=512, O=1, C=64, budget=2048)
        t4 = float(prefill_step(e, prompts=4, prompt_tokens=512).step_s)
        assert float(r.requests_per_s) <= 4 / t4
        assert float(r.requests_per_s) == pytest.approx(64 / (t4 + 60 * t4 / 4 + T_REQ), rel=1e-12)
        assert float(r.mfu) <= 1.0 and float(r.mbu) <= 1.0


class TestCapacityLimits:
    def test_beyond_max_num_seqs_requests_wait(self):
        e = _engine(LLAMA31_8B, "h100-sxm")
        C = np.array([16.0, 32.0, 64.0, 128.0])
        r = _loop(e, I=512, O=256, C=C, seqs=32)
        assert r.running.tolist() == [16, 32, 32, 32]
        assert r.waiting.tolist() == [0, 0, 32, 96]
        assert r.limited_by.tolist() == ["none", "max_num_seqs", "max_num_seqs", "max_num_seqs"]
        # throughput and TPOT flat past the cap; the extra clients' wait lands in TTFT
        assert r.output_tokens_per_s[2] == r.output_tokens_per_s[1] == r.output_tokens_per_s[3]
        assert r.tpot_s[1] == r.tpot_s[3]
        assert r.ttft_s[1] < r.ttft_s[2] < r.ttft_s[3]
        # the wait is Little's law: (C - R) / X
        assert float(r.ttft_s[3] - r.ttft_s[1]) == pytest.approx(96 / float(r.requests_per_s[1]), rel=1e-9)

    def test_beyond_the_kv_pool_requests_wait(self):
        # 100,000 tokens of KV at a mean context of 1000 + 500 = 1500 tokens: floor(66.7) = 66 sequences
        e = _engine(LLAMA31_8B, "h100-sxm")
        r = _loop(e, I=1000, O=1000, C=np.array([50.0, 66.0, 200.0]), seqs=1024, kv_tokens=100_000)
        assert float(r.kv_sequences_at_mean_context) == 66
        assert r.running.tolist() == [50, 66, 66]
        assert r.limited_by.tolist() == ["none", "kv_cache", "kv_cache"]
        assert r.waiting[2] == 134 and r.ttft_s[2] > r.ttft_s[1]
        assert r.output_tokens_per_s[2] == r.output_tokens_per_s[1]

    def test_sliding_window_sequences_hold_at_most_the_window(self):
        # Mistral-7B-v0.1 (every layer W = 4096), mean context 16000 + 500 = 16500, budget 2048:
        # a sequence keeps min(16500, 4096 - 1 + 2048) = 6143 tokens -> floor(100,000 / 6143) = 16 fit
        e = _engine("mistralai/Mistral-7B-v0.1", "h100-sxm")
        r = _loop(e, I=16_000, O=1000, C=64.0, budget=2048, chunked=True, kv_tokens=100_000)
        assert float(r.kv_sequences_at_mean_context) == 16 and float(r.running) == 16

    def test_chunked_token_budget_caps_running_sequences(self):
        # Chunked, budget 2048, I = 2048, O = 128: the other prompts must fit the room our 127 decode
        # steps leave: (R - 1) * 2048 <= 127 * (2048 - (R - 1)) -> R <= 1 + 127*2048/2175 = 120.6 -> 120
        e = _engine(LLAMA31_8B, "h100-sxm")
        r = _loop(e, I=2048, O=128, C=np.array([100.0, 120.0, 400.0]), seqs=1024, budget=2048, chunked=True)
        assert r.running.tolist() == [100, 120, 120]
        assert r.limited_by.tolist() == ["none", "max_num_batched_tokens", "max_num_batched_tokens"]
        assert r.output_tokens_per_s[1] == r.output_tokens_per_s[2]

    def test_concurrency_max_runs_as_many_as_fit(self):
        # ServingConfig(concurrency=None) = "--concurrency max": R = min(max_num_seqs, KV capacity), nobody waits
        arch, gpu = get_model(LLAMA31_8B), get_gpu("h100-sxm")
        for seqs in (64, 4096):
            est = estimate(arch, gpu, ServingConfig(input_len=1024, output_len=1024, max_model_len=4096, max_num_seqs=seqs,
                                                    max_num_batched_tokens=8192, enable_chunked_prefill=False, concurrency=None))
            s = est.serving
            assert float(s.running) == min(seqs, float(s.kv_sequences_at_mean_context)) and float(s.waiting) == 0
            assert str(s.limited_by) == ("max_num_seqs" if seqs == 64 else "kv_cache")
            # the KV pool in tokens / (1024 + 512) tokens per sequence
            assert float(s.kv_sequences_at_mean_context) == np.floor(float(est.memory.kv_pool_tokens) / 1536)

    def test_not_fitting_gives_nan_not_an_error(self):
        e = _engine(LLAMA31_8B, "l4")
        r = _loop(e, I=1024, O=128, C=np.array([1.0, 4.0]), fits=False)
        assert not r.fits.any() and np.isnan(r.ttft_s).all() and np.isnan(r.output_tokens_per_s).all()
        r = _loop(e, I=1024, O=128, C=1.0, kv_tokens=500)  # not one sequence of mean context 1088 fits
        assert not bool(r.fits) and np.isnan(float(r.tpot_s))


class TestChunkedPrefill:
    def test_lowers_tpot_at_high_load_and_reports_ttft(self):
        # Sarathi-Serve: chunking stops prefills from stalling decodes (lower TPOT) at the price of
        # a longer TTFT (the prompt waits for room beside the decodes). Llama-3.1-8B, H100, I 1024, O 256.
        # Spread arrivals (varied lengths): with identical requests the FCFS wave changes the
        # picture (tests/test_serving_wave.py).
        arch, gpu = get_model(LLAMA31_8B), get_gpu("h100-sxm")
        C = np.array([1, 16, 64, 128, 256])
        out = {}
        for chunked in (False, True):
            s = ServingConfig(input_len=1024, output_len=256, max_model_len=4096, enable_chunked_prefill=chunked)
            out[chunked] = estimate(arch, gpu, s, concurrency=C, uniform_lengths=False).serving
        off, on = out[False], out[True]
        # the table (pytest -s shows it)
        print("\nchunked prefill, Llama-3.1-8B on H100, I=1024 O=256")
        print(f"{'C':>5} {'TPOT off ms':>12} {'TPOT on ms':>11} {'TTFT off ms':>12} {'TTFT on ms':>11} {'tok/s off':>10} {'tok/s on':>9}")
        for i, c in enumerate(C):
            print(f"{c:>5} {off.tpot_s[i]*1e3:>12.2f} {on.tpot_s[i]*1e3:>11.2f} {off.ttft_s[i]*1e3:>12.1f} "
                  f"{on.ttft_s[i]*1e3:>11.1f} {off.output_tokens_per_s[i]:>10.0f} {on.output_tokens_per_s[i]:>9.0f}")
        assert on.tpot_s[0] == off.tpot_s[0] and on.ttft_s[0] == off.ttft_s[0]  # nothing to interleave at C = 1
        assert np.all(on.tpot_s[2:] < off.tpot_s[2:])
        assert np.all(on.output_tokens_per_s[2:] > off.output_tokens_per_s[2:])
        assert np.all(on.ttft_s[2:] > off.ttft_s[2:])  # the reported TTFT trade-off

    def test_long_prompt_is_split_into_chunks(self):
        # budget 512, I = 2048, 9 running: room 512 - 8 = 504 -> k = ceil(2048/504) = 5 chunks
        e = _engine(LLAMA31_8B, "h100-sxm")
        r = _loop(e, I=2048, O=512, C=9, budget=512, chunked=True)
        assert float(r.prefill_chunks) == 5
        assert float(_loop(e, I=2048, O=512, C=9, budget=512, chunked=False).prefill_chunks) == 1


class TestEngineNumbersIndex:
    def test_index_picks_one_configuration(self):
        e = _engine(LLAMA31_8B, "h100-sxm")
        fields = {f: getattr(e, f) for f in e.__dataclass_fields__}
        fields["hbm_bw_bytes_per_s"] = np.array([3.35e12, 4.8e12])
        arr = EngineNumbers(**fields)
        assert arr.index(1).hbm_bw_bytes_per_s == 4.8e12 and arr.index(1).num_layers == e.num_layers
        both = _loop(arr, I=512, O=128, C=8)
        one = _loop(arr.index(1), I=512, O=128, C=8)
        assert float(both.tpot_s[1]) == pytest.approx(float(one.tpot_s), rel=1e-12)


class TestAuditSmallItems:
    """Issue 12 'small' items: TPOT of one output token, the prefill's bound, the two concurrencies."""

    def test_one_output_token_has_no_tpot(self):
        # O = 1: the first token is the last; no inter-token time exists (it was reported as a decode step, ~7 ms)
        r = estimate(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"),
                     ServingConfig(input_len=1000, output_len=1, max_model_len=4096)).serving
        assert np.isnan(r.tpot_s) and np.isnan(r.itl_s)
        assert float(r.e2e_latency_s) == pytest.approx(float(r.ttft_s))
        assert np.isfinite(r.output_tokens_per_s) and float(r.output_tokens_per_s) > 0

    def test_prefill_bound_is_the_chunks_own_work(self):
        # Llama-3.1-8B on H100, I = 128, O = 2048, C = 256, budget 512: the chunk rides on ~255 decodes.
        # The whole mixed step is memory-bound (weights + 255 sequences' KV), but what the 128-token
        # chunk adds is compute (2·P·128 FLOPs against a few MB of activations and KV).
        from calc.timing.estimate import engine_numbers
        from calc.timing.serving import decode_step, prefill_step

        arch, gpu = get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm")
        sc = ServingConfig(input_len=128, output_len=2048, concurrency=256, max_model_len=8192, max_num_batched_tokens=512)
        r = estimate(arch, gpu, sc).serving
        assert str(r.prefill_bound) == "compute" and str(r.prefill_step_bound) == "memory"
        # the same from the steps themselves: k = 1 chunk of 128 tokens beside r_d = 255·2047/2048 decodes
        e = engine_numbers(arch, gpu, sc)
        r_d, ctx = 255 * 2047 / 2048, 128 + 2048 / 2
        mixed = prefill_step(e, prompts=1.0, prompt_tokens=128.0, decode_batch=r_d, decode_context_tokens=ctx)
        base = decode_step(e, batch=r_d, context_tokens=ctx)
        assert float(mixed.compute_s - base.compute_s) > float(mixed.memory_s - base.memory_s)
        assert float(mixed.compute_s) < float(mixed.memory_s)

    def test_kv_sequences_and_vllms_max_concurrency_are_different_numbers(self):
        # 1,000 + 200 tokens per request against max_model_len 8,192: the pool holds ~8192/1100 ≈ 7.4x
        # more sequences of the mean context than vLLM's "maximum concurrency" of 8,192-token requests.
        r = estimate(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"),
                     ServingConfig(input_len=1000, output_len=200, max_model_len=8192))
        tokens = float(r.memory.kv_pool_tokens)
        assert float(r.serving.kv_sequences_at_mean_context) == np.floor(tokens / 1100)
        assert float(r.memory.max_concurrency) == pytest.approx(tokens / 8192, rel=2e-3)


def test_train_table_counts_the_clumps_of_the_other_clients(monkeypatch):
    # issues 17 + 21: _train_ttft's α = X·T_0/(1 − X·P) counts the completions of all R running
    # sequences (X = R / (E2E + t_api)); the clumps a request meets are the other R − 1 clients'
    # (the arrival theorem, as queueing.closed_loop_ttft): the table gets α·(R − 1)/R.
    # A table that returns 0.2 s: the second pass has E2E = 0.2 − t_api + (2.1 − 0.1) decode, so
    # X = R / (0.2 + 2.0) = 0.909 / s (R = 2), 3.636 / s (R = 8); clump = X·0.02/(1 − X·P)·{1/2, 7/8}
    import calc.traffic.train_table as tt
    from calc.timing.serving import _train_ttft

    seen = {}

    def fake(**kw):
        seen.update(kw)
        return np.full(np.shape(kw["clump"]), 0.2)

    monkeypatch.setattr(tt, "train_mean_s", fake)
    e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"))
    R = np.array([2.0, 8.0])
    _train_ttft(e, trains=np.array([True, True]), ttft_service=np.full(2, 0.1), e2e_service=np.full(2, 2.1), R=R,
                step_s=np.full(2, 0.02), first_prompt_s=np.full(2, 0.03), base_s=np.full(2, 0.02),
                chunk_tokens=np.full(2, 1024.0), decode_batch=R - 1.0, mean_context_tokens=np.full(2, 1152.0),
                cached_tokens=np.zeros(2))
    x = R / 2.2
    alpha = x * 0.02 / (1.0 - x * np.asarray(seen["prompt_s"]))
    assert np.asarray(seen["clump"]) == pytest.approx(alpha * np.array([0.5, 0.875]), rel=1e-12)


def test_spread_outputs_hold_length_biased_contexts():
    # A request is in the batch for its O decode steps, so over the steps the batch holds long outputs more often:
    # mean keys per sequence I + E[O²]/(2·E[O]) = I + O·(1 + C_O²)/2. I = 1,000, O = 500, C_O = 1: 1,500 keys
    # (not 1,250). KV pool of 1,500,000 tokens: 1,000 such sequences, 1,200 at the mean 1,250 of fixed outputs.
    e = _engine(dtype="float16")
    kw = dict(input_len=1000, output_len=500, concurrency=8, max_num_seqs=256, max_num_batched_tokens=8192,
              enable_chunked_prefill=False, kv_capacity_tokens=1.5e6, fits=True, uniform_lengths=False)
    fixed, spread = closed_loop(e, **kw), closed_loop(e, **kw, output_cv=1.0)
    assert float(fixed.kv_sequences_at_mean_context) == 1200 and float(spread.kv_sequences_at_mean_context) == 1000
    # one client (no other prompts stall its decodes): TPOT is one decode step at that mean context
    one, one_spread = closed_loop(e, **{**kw, "concurrency": 1}), closed_loop(e, **{**kw, "concurrency": 1}, output_cv=1.0)
    assert float(one_spread.tpot_s) == pytest.approx(float(decode_step(e, batch=1, context_tokens=1500).step_s), rel=1e-12)
    assert float(one.tpot_s) == pytest.approx(float(decode_step(e, batch=1, context_tokens=1250).step_s), rel=1e-12)
