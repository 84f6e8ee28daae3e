"""calc.timing.perf: GEMM efficiency curve, ring all-reduce time, and the step time composed from
operator costs (per-op roofline max, TP communication, fixed overhead). physics.md A3, A6, A9.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calc.timing import perf
from calc.timing.roofline import OPERATORS, step_op_costs


class TestGemmEfficiency:
    def test_half_at_m_half(self):
        # eta * M / (M + M_half): M = M_half = 64 -> eta / 2
        assert float(perf.gemm_efficiency(tokens=64, max_fraction=0.7, half_saturation_tokens=64)) == pytest.approx(0.35)

    def test_known_points(self):
        # M = 2048: 0.7 * 2048 / 2112 = 0.67879; M = 1: 0.7 * 1 / 65 = 0.010769
        got = perf.gemm_efficiency(tokens=np.array([1.0, 2048.0]), max_fraction=0.7, half_saturation_tokens=64)
        assert got[0] == pytest.approx(0.7 / 65)
        assert got[1] == pytest.approx(0.7 * 2048 / 2112)

    def test_zero_half_saturation_is_flat(self):
        got = perf.gemm_efficiency(tokens=np.array([1.0, 10.0, 1e6]), max_fraction=0.6, half_saturation_tokens=0.0)
        assert np.allclose(got, 0.6)

    def test_compute_time_is_that_of_m_plus_m_half_rows(self):
        # 2 P M / (peak * eta(M)) = 2 P (M + M_half) / (peak * eta): the floor of a small GEMM
        P, peak, eta, mh = 1e9, 312e12, 0.7, 64.0
        for m in (1.0, 64.0, 4096.0):
            t = 2 * P * m / (peak * perf.gemm_efficiency(tokens=m, max_fraction=eta, half_saturation_tokens=mh))
            assert float(t) == pytest.approx(2 * P * (m + mh) / (peak * eta), rel=1e-12)

    @settings(max_examples=200, deadline=None)
    @given(m=st.floats(1, 1e6), eta=st.floats(0.01, 1.0), mh=st.floats(0, 1e4))
    def test_monotone_and_bounded(self, m, eta, mh):
        a = float(perf.gemm_efficiency(tokens=m, max_fraction=eta, half_saturation_tokens=mh))
        b = float(perf.gemm_efficiency(tokens=m * 1.5, max_fraction=eta, half_saturation_tokens=mh))
        assert 0 < a <= eta * (1 + 1e-12) and b >= a * (1 - 1e-12)


class TestAllreduce:
    def test_tp1_costs_nothing(self):
        assert float(perf.allreduce_time_s(tensor_parallel_size=1, bytes_per_allreduce=1e9, link_bw_bytes_per_s=3e11,
                                           latency_s=1e-3)) == 0.0

    def test_tp2_ring(self):
        # 2(n-1)/n = 1 at n = 2: 512 tokens * 4096 * 2 B = 4,194,304 B / 3e11 B/s = 13.98 us, + alpha 10 us
        got = perf.allreduce_time_s(tensor_parallel_size=2, bytes_per_allreduce=512 * 4096 * 2, link_bw_bytes_per_s=3e11,
                                    latency_s=10e-6)
        assert float(got) == pytest.approx(10e-6 + 4_194_304 / 3e11, rel=1e-12)

    def test_tp4_ring(self):
        # 2(n-1)/n = 1.5 at n = 4: 1.5 * 4,194,304 / 3e11 = 20.97 us
        got = perf.allreduce_time_s(tensor_parallel_size=4, bytes_per_allreduce=4_194_304, link_bw_bytes_per_s=3e11,
                                    latency_s=0.0)
        assert float(got) == pytest.approx(1.5 * 4_194_304 / 3e11, rel=1e-12)

    def test_broadcast_and_limit(self):
        # n = 1, 2, 8, 1e6: factor 0, 1, 1.75, -> 2
        got = perf.allreduce_time_s(tensor_parallel_size=np.array([1, 2, 8, 1e6]), bytes_per_allreduce=3e11,
                                    link_bw_bytes_per_s=3e11, latency_s=0.0)
        assert got[:3].tolist() == [0.0, 1.0, 1.75]
        assert got[3] == pytest.approx(2.0, rel=1e-5)


def _costs(tokens, prefill_tokens=0.0, ctx=1000.0):
    d = np.asarray(tokens, dtype=float) - prefill_tokens
    return step_op_costs(
        decode_tokens=d, decode_context_tokens_sum=d * ctx, prefill_tokens=prefill_tokens,
        prefill_attention_pairs=prefill_tokens * (prefill_tokens + 1) / 2, prefill_cached_tokens=0.0,
        logits_tokens=np.maximum(d, 1.0), num_layers=32, hidden_size=4096, vocab_size=32000,
        qkv_params=32 * 3 * 4096**2, o_params=32 * 4096**2, mlp_dense_params=32 * 3 * 4096 * 11008,
        expert_params=0, shared_expert_params=0, num_experts=1, experts_per_token=0,
        linear_bytes_per_param=2.0, activation_bytes=2.0, kv_bytes_per_token=524_288,
        attn_flops_per_pair_decode=4 * 32 * 128 * 32, attn_flops_per_pair_prefill=4 * 32 * 128 * 32,
        q_o_width=4096, mlp_width=11008)


def _step(costs, tokens, prefill_tokens=0.0, tp=1, **kw):
    args = dict(costs=costs, tokens=tokens, prefill_tokens=prefill_tokens, peak_flops_per_s=312e12,
                attention_peak_flops_per_s=312e12, hbm_bw_bytes_per_s=2.039e12, hbm_bw_fraction=1.0,
                prefill_flops_fraction=1.0, decode_flops_fraction=1.0, gemm_half_saturation_tokens=0.0,
                step_overhead_s=0.0, tensor_parallel_size=tp, num_layers=32, hidden_size=4096, activation_bytes=2.0,
                link_bw_bytes_per_s=3e11, allreduce_latency_s=0.0)
    args.update(kw)
    return perf.step_time(**args)


class TestStepTime:
    def test_each_operator_at_its_roofline(self):
        s = _step(_costs(8.0), 8.0)
        for op in OPERATORS:
            assert float(s.op_time_s[op]) == max(float(s.op_compute_s[op]), float(s.op_memory_s[op]))
        assert float(s.step_s) == pytest.approx(sum(float(s.op_time_s[o]) for o in OPERATORS))

    def test_overhead_adds_once(self):
        a = _step(_costs(8.0), 8.0)
        b = _step(_costs(8.0), 8.0, step_overhead_s=1.5e-3)
        assert float(b.step_s - a.step_s) == pytest.approx(1.5e-3)

    def test_engine_cpu_grows_with_the_sequences(self):
        # 1.5 ms per step + 35 us per sequence: 64 sequences add 1.5e-3 + 64 * 35e-6 = 3.74 ms,
        # and a batch of 256 (the same FLOPs and bytes otherwise) 1.5e-3 + 256 * 35e-6 = 10.46 ms
        a = _step(_costs(8.0), 8.0)
        b = _step(_costs(8.0), 8.0, step_overhead_s=1.5e-3, sequences=np.array([64.0, 256.0]),
                  sequence_overhead_s=35e-6)
        assert (b.step_s - a.step_s).tolist() == pytest.approx([3.74e-3, 10.46e-3], rel=1e-12)
        assert b.overhead_s.tolist() == pytest.approx([3.74e-3, 10.46e-3], rel=1e-12)

    def test_tp_communication_two_allreduces_per_layer(self):
        # TP 2, 16 tokens: each all-reduce 16*4096*2 B = 131,072 B / 3e11 + 5 us; 2 * 32 of them
        s = _step(_costs(16.0), 16.0, tp=2, allreduce_latency_s=5e-6)
        assert float(s.comm_s) == pytest.approx(64 * (5e-6 + 131_072 / 3e11), rel=1e-12)

    def test_pessimistic_bound_is_never_faster(self):
        s = _step(_costs(np.array([1.0, 64.0, 512.0, 4096.0])), np.array([1.0, 64.0, 512.0, 4096.0]))
        assert np.all(s.pessimistic_step_s >= s.step_s)

    def test_bound_flips_from_memory_to_compute(self):
        b = np.array([1.0, 4096.0])
        s = _step(_costs(b, ctx=1.0), b)
        assert s.bound.tolist() == ["memory", "compute"]

    def test_efficiency_fractions_slow_things_down(self):
        c = _costs(2048.0, prefill_tokens=2048.0)
        fast = _step(c, 2048.0, prefill_tokens=2048.0)
        slow = _step(c, 2048.0, prefill_tokens=2048.0, prefill_flops_fraction=0.5, hbm_bw_fraction=0.5)
        assert float(slow.step_s) > float(fast.step_s)
        # a compute-bound 2048-token prefill at half the FLOP rate takes about twice as long
        assert float(slow.compute_s) == pytest.approx(2 * float(fast.compute_s), rel=1e-9)


class TestMoeGemmEfficiency:
    def test_routed_experts_run_at_their_own_rows(self):
        # Mixtral-like: E = 8, k = 2, P_e = 1e9 per expert, 64 tokens: all 8 experts touched
        # (8·(1 − (6/8)^64) ≈ 8), 64·2/8 = 16 rows each. η = 0.7, M½ = 64:
        #   experts: 2·64·2·1e9 = 2.56e11 FLOPs / (312e12 · 0.7 · 16/80 = 4.368e13 FLOP/s) = 5.861 ms
        #   (at all 64 tokens' efficiency, 0.7 · 64/128: 2.56e11 / 1.092e14 = 2.344 ms)
        c = step_op_costs(
            decode_tokens=64.0, decode_context_tokens_sum=0.0, prefill_tokens=0.0, prefill_attention_pairs=0.0,
            prefill_cached_tokens=0.0, logits_tokens=64.0, num_layers=1, hidden_size=4096, vocab_size=1,
            qkv_params=0.0, o_params=0.0, mlp_dense_params=0.0, expert_params=8e9, shared_expert_params=0.0,
            num_experts=8, experts_per_token=2, linear_bytes_per_param=2.0, activation_bytes=2.0,
            kv_bytes_per_token=0.0, attn_flops_per_pair_decode=0.0, attn_flops_per_pair_prefill=0.0,
            q_o_width=4096, mlp_width=1)
        s = _step(c, 64.0, prefill_flops_fraction=0.7, decode_flops_fraction=0.7, gemm_half_saturation_tokens=64.0)
        touched = 8 * (1 - (6 / 8) ** 64)
        rows = 128 / touched
        assert float(s.op_compute_s["mlp"]) == pytest.approx(2 * 64 * 2 * 1e9 / (312e12 * 0.7 * rows / (rows + 64)), rel=1e-9)
        assert float(s.op_compute_s["mlp"]) == pytest.approx(5.861e-3, rel=1e-3)

    def test_dense_model_unchanged(self):
        # no experts: expert FLOPs 0, the MLP runs at η(n) as before
        s = _step(_costs(64.0), 64.0, gemm_half_saturation_tokens=64.0)
        c = _costs(64.0)
        assert float(s.op_compute_s["mlp"]) == pytest.approx(float(c.flops["mlp"]) / (312e12 * 64 / 128))
