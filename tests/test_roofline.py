"""calc.timing.roofline: ridge point, attainable FLOP/s, critical batch, causal pairs, experts touched,
and the per-operator FLOPs/bytes of one step (physics.md A3).

Expected values are arithmetic written out in the comments, from datasheet numbers
(hardware.csv: A100-80GB SXM 312 TFLOP/s FP16, 2.039 TB/s; H100 SXM 989.4 TFLOP/s BF16,
3.35 TB/s) and the model configs (physics.md A1).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calc.timing import roofline as rl

A100_FLOPS, A100_BW = 312e12, 2.039e12
H100_FLOPS, H100_BW = 989.4e12, 3.35e12


class TestMatmulFlops:
    def test_two_flops_per_weight_per_token(self):
        # Llama-2-7B, one token: 2 * 6,738,415,616 = 13,476,831,232 FLOPs
        assert rl.matmul_flops(tokens=1, params=6_738_415_616) == 13_476_831_232

    def test_broadcast(self):
        got = rl.matmul_flops(tokens=np.array([[1], [10]]), params=np.array([100, 1000]))
        assert got.tolist() == [[200, 2000], [2000, 20000]]


class TestArithmeticIntensity:
    def test_batch1_fp16_matmul_is_one_flop_per_byte(self):
        # y = x W, W 4096x4096 FP16, one token: 2*4096*4096 FLOPs over 2*4096*4096 weight bytes
        assert rl.arithmetic_intensity(flops=2 * 4096**2, bytes_moved=2 * 4096**2) == 1.0

    def test_zero_bytes_gives_zero(self):
        assert rl.arithmetic_intensity(flops=5.0, bytes_moved=0.0) == 0.0
        assert rl.arithmetic_intensity(flops=np.array([5.0, 6.0]), bytes_moved=np.array([0.0, 3.0])).tolist() == [0.0, 2.0]


class TestRidgePoint:
    @pytest.mark.parametrize("peak, bw, expected", [
        (A100_FLOPS, A100_BW, 153),   # 312e12 / 2.039e12 = 153.0 FLOP/B
        (H100_FLOPS, H100_BW, 295),   # 989.4e12 / 3.35e12 = 295.3
        (312e12, 1.555e12, 201),      # A100-40GB: 312 / 1.555 = 200.6
    ])
    def test_datasheet_values(self, peak, bw, expected):
        assert round(float(rl.ridge_point(peak_flops_per_s=peak, hbm_bw_bytes_per_s=bw))) == expected

    def test_broadcast(self):
        got = rl.ridge_point(peak_flops_per_s=np.array([A100_FLOPS, H100_FLOPS]), hbm_bw_bytes_per_s=np.array([A100_BW, H100_BW]))
        assert np.round(got).tolist() == [153, 295]


class TestAttainable:
    def test_min_of_peak_and_intensity_times_bandwidth(self):
        # AI 1: 1 * 2.039e12 = 2.039 TFLOP/s (memory roof); AI 1000: capped at the 312 TFLOP/s peak
        got = rl.attainable_flops_per_s(intensity=[1.0, 1000.0], peak_flops_per_s=A100_FLOPS, hbm_bw_bytes_per_s=A100_BW)
        assert got.tolist() == [2.039e12, 312e12]

    def test_at_the_ridge_both_roofs_meet(self):
        ridge = A100_FLOPS / A100_BW
        got = rl.attainable_flops_per_s(intensity=ridge, peak_flops_per_s=A100_FLOPS, hbm_bw_bytes_per_s=A100_BW)
        assert got == pytest.approx(A100_FLOPS, rel=1e-12)

    @settings(max_examples=200, deadline=None)
    @given(ai=st.floats(1e-3, 1e5), peak=st.floats(1e12, 1e16), bw=st.floats(1e10, 1e13))
    def test_never_above_either_roof(self, ai, peak, bw):
        got = float(rl.attainable_flops_per_s(intensity=ai, peak_flops_per_s=peak, hbm_bw_bytes_per_s=bw))
        assert got <= peak * (1 + 1e-12) and got <= ai * bw * (1 + 1e-12)


class TestCriticalBatchSize:
    def test_fp16_equals_ridge(self):
        # B* = 312e12 * 2 B / (2 * 2.039e12) = 153.0: the ridge itself for 16-bit weights
        assert float(rl.critical_batch_size(peak_flops_per_s=A100_FLOPS, hbm_bw_bytes_per_s=A100_BW,
                                            bytes_per_weight=2)) == pytest.approx(153.016, abs=1e-3)

    def test_int4_moves_it_down_by_2_over_0_52(self):
        # AWQ g128: 4.15625 bits = 0.51953 B/weight, FLOPs still at the FP16 rate:
        # B* = 312e12 * 0.51953 / (2 * 2.039e12) = 39.75, i.e. 2 / 0.51953 = 3.85x lower
        fp16 = rl.critical_batch_size(peak_flops_per_s=A100_FLOPS, hbm_bw_bytes_per_s=A100_BW, bytes_per_weight=2)
        awq = rl.critical_batch_size(peak_flops_per_s=A100_FLOPS, hbm_bw_bytes_per_s=A100_BW, bytes_per_weight=4.15625 / 8)
        assert float(awq) == pytest.approx(39.75, abs=0.01)
        assert float(fp16 / awq) == pytest.approx(2 / 0.51953125, rel=1e-9)

    def test_fp8_on_h100_back_to_the_bf16_ridge(self):
        # W8A8: FP8 peak 1978.9e12, 1 B/weight: 1978.9e12 / (2 * 3.35e12) = 295.4 = the BF16 ridge
        assert float(rl.critical_batch_size(peak_flops_per_s=1978.9e12, hbm_bw_bytes_per_s=H100_BW,
                                            bytes_per_weight=1)) == pytest.approx(295.36, abs=0.01)

    def test_broadcast(self):
        got = rl.critical_batch_size(peak_flops_per_s=A100_FLOPS, hbm_bw_bytes_per_s=A100_BW, bytes_per_weight=np.array([2.0, 1.0]))
        assert got.shape == (2,) and got[0] == pytest.approx(2 * got[1])


class TestCausalAttentionPairs:
    def test_whole_prompt(self):
        # 4 tokens, nothing cached: 1 + 2 + 3 + 4 = 10 (query, key) pairs
        assert rl.causal_attention_pairs(new_tokens=4, cached_tokens=0) == 10.0

    def test_chunk_after_cache(self):
        # 3 new tokens after 5 cached: 3*5 + (1 + 2 + 3) = 21
        assert rl.causal_attention_pairs(new_tokens=3, cached_tokens=5) == 21.0

    def test_chunks_add_up_to_the_whole_prompt(self):
        # 2048 tokens in 4 chunks of 512 = one chunk of 2048 = 2048*2049/2 = 2,098,176 pairs
        chunks = sum(rl.causal_attention_pairs(new_tokens=512, cached_tokens=512 * i) for i in range(4))
        assert chunks == rl.causal_attention_pairs(new_tokens=2048, cached_tokens=0) == 2_098_176

    def test_one_decode_token_attends_cache_plus_itself(self):
        assert rl.causal_attention_pairs(new_tokens=1, cached_tokens=999) == 1000.0


class TestSlidingWindow:
    def test_window_caps_each_query(self):
        # W = 2, 4 new tokens, nothing cached: min(1,2) + min(2,2) + min(3,2) + min(4,2) = 7
        assert rl.causal_attention_pairs(new_tokens=4, cached_tokens=0, window=2) == 7.0
        # 3 new after 5 cached, W = 4: queries at 6, 7, 8 attend 4 keys each = 12
        assert rl.causal_attention_pairs(new_tokens=3, cached_tokens=5, window=4) == 12.0

    def test_window_larger_than_the_prompt_changes_nothing(self):
        got = rl.causal_attention_pairs(new_tokens=np.array([10.0, 100.0]), cached_tokens=50.0, window=4096)
        assert got.tolist() == rl.causal_attention_pairs(new_tokens=np.array([10.0, 100.0]), cached_tokens=50.0).tolist()

    def test_long_prompt_is_linear_past_the_window(self):
        # 32768 tokens, W = 4096: 4096*4097/2 + (32768 - 4096) * 4096 = 8,390,656 + 117,440,512 = 125,831,168
        assert rl.causal_attention_pairs(new_tokens=32768, cached_tokens=0, window=4096) == 125_831_168

    def test_windowed_context(self):
        # Mistral (every layer W = 4096) at 32768: 4096 keys; Gemma-2 (half the layers): (32768 + 4096)/2
        assert rl.windowed_context_tokens(context_tokens=32768, sliding_window=4096, sliding_fraction=1.0) == 4096
        assert rl.windowed_context_tokens(context_tokens=32768, sliding_window=4096, sliding_fraction=0.5) == 18432
        assert rl.windowed_context_tokens(context_tokens=1000, sliding_window=4096, sliding_fraction=1.0) == 1000
        assert rl.windowed_context_tokens(context_tokens=np.array([1.0, 9e9])).tolist() == [1.0, 9e9]  # no window


class TestExpectedExpertsTouched:
    def test_mixtral_one_token_touches_top_k(self):
        # E = 8, k = 2: 8 * (1 - (6/8)^1) = 2
        assert rl.expected_experts_touched(num_experts=8, experts_per_token=2, tokens=1) == pytest.approx(2.0)

    def test_mixtral_two_and_many_tokens(self):
        # N = 2: 8 * (1 - 0.75^2) = 3.5; N = 64: 8 * (1 - 0.75^64) = 8 - 8.1e-8 -> all 8
        got = rl.expected_experts_touched(num_experts=8, experts_per_token=2, tokens=np.array([2, 64]))
        assert got[0] == pytest.approx(3.5)
        assert got[1] == pytest.approx(8.0, abs=1e-6)

    def test_deepseek_v3_one_token(self):
        # E = 256, k = 8: 8 experts at one token
        assert rl.expected_experts_touched(num_experts=256, experts_per_token=8, tokens=1) == pytest.approx(8.0)

    @settings(max_examples=200, deadline=None)
    @given(e=st.integers(2, 512), k_frac=st.floats(0.0, 1.0), n=st.integers(1, 100_000))
    def test_between_k_and_e_and_monotone(self, e, k_frac, n):
        k = max(1, int(round(k_frac * e)))
        a = rl.expected_experts_touched(num_experts=e, experts_per_token=k, tokens=n)
        b = rl.expected_experts_touched(num_experts=e, experts_per_token=k, tokens=n + 1)
        assert k - 1e-9 <= a <= e + 1e-9 and b >= a - 1e-9


def _llama2_7b_costs(**kw):
    """Llama-2-7B FP16, TP 1, written out from the config: L 32, h 4096, I 11008, V 32000, MHA 32x128."""
    L, h, inter, V = 32, 4096, 11008, 32000
    args = dict(num_layers=L, hidden_size=h, vocab_size=V,
                qkv_params=L * 3 * h * h, o_params=L * h * h, mlp_dense_params=L * 3 * h * inter,
                expert_params=0, shared_expert_params=0, num_experts=1, experts_per_token=0,
                linear_bytes_per_param=2.0, activation_bytes=2.0, kv_bytes_per_token=524_288,
                attn_flops_per_pair_decode=4 * 32 * 128 * L, attn_flops_per_pair_prefill=4 * 32 * 128 * L,
                q_o_width=4096, mlp_width=inter)
    args.update(kw)
    return rl.step_op_costs(**args)


class TestStepOpCosts:
    def test_batch1_decode_weight_bytes(self):
        # qkv 32*3*4096^2*2 B = 3,221,225,472; o 1,073,741,824; mlp 32*3*4096*11008*2 = 8,657,043,456;
        # lm_head 4096*32000*2 = 262,144,000 -> 13,214,154,752 B streamed per step
        c = _llama2_7b_costs(decode_tokens=1, decode_context_tokens_sum=1000, prefill_tokens=0, prefill_attention_pairs=0,
                             prefill_cached_tokens=0, logits_tokens=1)
        assert float(c.weight_bytes["qkv_proj"]) == 3_221_225_472
        assert float(c.weight_bytes["o_proj"]) == 1_073_741_824
        assert float(c.weight_bytes["mlp"]) == 8_657_043_456
        assert float(c.weight_bytes["lm_head"]) == 262_144_000
        assert sum(float(c.weight_bytes[o]) for o in rl.OPERATORS) == 13_214_154_752

    def test_batch1_decode_kv_and_attention_flops(self):
        # KV read 1000 cached tokens + write 1: 1001 * 524,288 B = 524,812,288 B
        # attention FLOPs 1000 pairs * 4*32*128*32 = 524,288,000 -> AI = 1.0 (MHA, 16-bit: AI ~ 2G/b_kv = 1)
        c = _llama2_7b_costs(decode_tokens=1, decode_context_tokens_sum=1000, prefill_tokens=0, prefill_attention_pairs=0,
                             prefill_cached_tokens=0, logits_tokens=1)
        assert float(c.kv_bytes["attention"]) == 1001 * 524_288
        assert float(c.flops["attention"]) == 524_288_000
        assert float(c.flops["attention"] / c.kv_bytes["attention"]) == pytest.approx(1.0, rel=1e-3)

    def test_linear_flops_are_2_n_p(self):
        # 7 tokens through the MLP: 2 * 7 * 32*3*4096*11008 = 60,599,304,192
        c = _llama2_7b_costs(decode_tokens=3, decode_context_tokens_sum=30, prefill_tokens=4, prefill_attention_pairs=10,
                             prefill_cached_tokens=0, logits_tokens=4)
        assert float(c.flops["mlp"]) == 60_599_304_192
        # lm_head only for the 4 tokens that produce logits: 2 * 4 * 4096 * 32000
        assert float(c.flops["lm_head"]) == 2 * 4 * 4096 * 32000

    def test_moe_batch1_streams_two_of_eight_experts(self):
        # Mixtral-8x7B: 32 layers x 8 experts x 3*4096*14336; one token touches 2 -> 1/4 of expert bytes
        per_layer_expert = 3 * 4096 * 14336
        kw = dict(mlp_dense_params=0, expert_params=32 * 8 * per_layer_expert, shared_expert_params=32 * 4096 * 8,
                  num_experts=8, experts_per_token=2, kv_bytes_per_token=131_072, mlp_width=2 * 14336)
        one = _llama2_7b_costs(decode_tokens=1, decode_context_tokens_sum=0, prefill_tokens=0, prefill_attention_pairs=0,
                               prefill_cached_tokens=0, logits_tokens=1, **kw)
        expected = (32 * 2 * per_layer_expert + 32 * 4096 * 8) * 2  # 2 experts + router, 2 B each
        assert float(one.weight_bytes["mlp"]) == pytest.approx(expected, rel=1e-12)
        # FLOPs: k = 2 experts per token regardless of how many the batch touches
        assert float(one.flops["mlp"]) == pytest.approx(2 * (32 * 2 * per_layer_expert + 32 * 4096 * 8), rel=1e-12)

    def test_broadcast_over_batch(self):
        b = np.array([1.0, 8.0, 64.0])
        c = _llama2_7b_costs(decode_tokens=b, decode_context_tokens_sum=b * 100, prefill_tokens=0, prefill_attention_pairs=0,
                             prefill_cached_tokens=0, logits_tokens=b)
        assert c.total_flops.shape == (3,) and c.total_bytes.shape == (3,)
        assert np.all(np.diff(c.total_flops) > 0)
        # weights do not depend on the batch (dense model)
        assert np.all(c.weight_bytes["mlp"] == c.weight_bytes["mlp"][0])


class TestBitsandbytesDequantizedCopy:
    """vLLM's bitsandbytes path: a 4-bit GEMV for one token, dequantize-then-GEMM for more, which
    writes and reads a 16-bit copy of every linear weight (4 B per weight in BF16)."""

    NF4 = 0.515869140625  # 4.126953125 bits per weight

    def _costs(self, n):
        return _llama2_7b_costs(decode_tokens=n, decode_context_tokens_sum=1000 * n, prefill_tokens=0,
                                prefill_attention_pairs=0, prefill_cached_tokens=0, logits_tokens=n,
                                linear_bytes_per_param=self.NF4, dequant_bytes_per_param=4.0)

    def test_one_token_reads_only_the_4_bit_weight(self):
        # mlp 32*3*4096*11008 = 4,328,521,728 weights * 0.515869140625 B = 2,232,950,784 B
        assert float(self._costs(1).weight_bytes["mlp"]) == 4_328_521_728 * self.NF4

    def test_two_tokens_add_the_16_bit_copy(self):
        # + 4 B per weight: 4,328,521,728 * (0.515869140625 + 4) = 19,547,037,696 B
        assert float(self._costs(2).weight_bytes["mlp"]) == 4_328_521_728 * (self.NF4 + 4.0)
        # qkv 32*3*4096^2 = 1,610,612,736 weights, same rule; lm_head stays 16-bit (not quantized)
        assert float(self._costs(16).weight_bytes["qkv_proj"]) == 1_610_612_736 * (self.NF4 + 4.0)
        assert float(self._costs(16).weight_bytes["lm_head"]) == 262_144_000

    def test_estimate_bitsandbytes_batch_16_costs_the_copy(self):
        from calc.spec.catalog import get_gpu, get_model
        from calc.spec.inputs import ServingConfig
        from calc.timing.estimate import engine_numbers
        from calc.timing.serving import decode_step

        arch, gpu = get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm")
        e = engine_numbers(arch, gpu, ServingConfig(quantization="bitsandbytes"))
        awq = engine_numbers(arch, gpu, ServingConfig(quantization="awq"))
        assert float(e.dequant_bytes_per_param) == 4.0 and float(awq.dequant_bytes_per_param) == 0.0
        # Llama-3.1-8B linear weights 6,979,321,856; extra 4 B each at batch 16: 27.9 GB at
        # 3.35e12 * 0.8 B/s = 10.42 ms more per decode step than at the same bytes without the copy
        extra = float(decode_step(e, batch=16.0, context_tokens=1000.0).memory_s) - float(
            decode_step(e.__class__(**{**e.__dict__, "dequant_bytes_per_param": 0.0}), batch=16.0,
                        context_tokens=1000.0).memory_s)
        assert extra == pytest.approx(6_979_321_856 * 4.0 / (3.35e12 * 0.8), rel=1e-9)


class TestMoeExpertRows:
    def test_rows_per_touched_expert(self):
        # E = 8, k = 2: one token touches 2 experts with 1 row each; 1000 tokens touch all 8:
        # 1000*2/8 = 250 rows each (the n*k/E of a full batch)
        c = _llama2_7b_costs(decode_tokens=np.array([1.0, 1000.0]), decode_context_tokens_sum=0, prefill_tokens=0,
                             prefill_attention_pairs=0, prefill_cached_tokens=0, logits_tokens=1,
                             mlp_dense_params=0, expert_params=8 * 1000, num_experts=8, experts_per_token=2)
        assert c.expert_rows[0] == pytest.approx(1.0)
        assert c.expert_rows[1] == pytest.approx(250.0, rel=1e-6)
        # expert FLOPs: 2 * n * k * P_e = 2 * 1000 * 2 * 1000
        assert float(c.expert_flops[1]) == 4_000_000.0
