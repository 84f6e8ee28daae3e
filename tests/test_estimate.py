"""calc.timing.estimate: engine numbers of catalog models on catalog GPUs, and the roofline regimes they
produce (physics.md A3, A7). Expected values are arithmetic written out in the tests from the
model configs (A1) and datasheets (hardware.csv), never computed with the code under test.

IDEAL is an Efficiency with round numbers (every fraction 1, no fixed costs, no small-GEMM
penalty) so that the arithmetic stays clean; tests of the defaults say so.
"""

import warnings

import numpy as np
import pytest

from calc.spec.catalog import get_gpu, get_model
from calc.timing.estimate import engine_numbers, estimate
from calc.spec.inputs import Efficiency, ServingConfig
from calc.timing.roofline import critical_batch_size
from calc.timing.serving import decode_step, prefill_step

LLAMA2_7B = "meta-llama/Llama-2-7b-hf"
LLAMA2_70B = "meta-llama/Llama-2-70b-hf"
MIXTRAL = "mistralai/Mixtral-8x7B-v0.1"
DEEPSEEK_V3 = "deepseek-ai/DeepSeek-V3"
IDEAL = Efficiency(hbm_bw_fraction=1.0, prefill_flops_fraction=1.0, decode_flops_fraction=1.0,
                   gemm_half_saturation_tokens=0.0, step_overhead_s=0.0, request_overhead_s=0.0,
                   allreduce_latency_s=0.0, interconnect_bw_fraction=1.0, sequence_overhead_s=0.0,
                   api_server_request_s=0.0, hopper_flops_scale=1.0)
FP16 = ServingConfig(dtype="float16")
A100_BW, A100_FLOPS = 2.039e12, 312e12
LINEAR = ("qkv_proj", "o_proj", "mlp", "lm_head")

# Llama-2-7B, bytes one decode step streams (physics.md A1): 6,738,415,616 parameters x 2 B =
# 13,476,831,232 B (13.48 GB) in the checkpoint, less the embedding table (32000*4096 = 131,072,000
# parameters; a gather reads one row per token) and the norm vectors (32*2*4096 + 4096 = 266,240,
# counted with the elementwise ops): 6,607,077,376 parameters x 2 B = 13,214,154,752 B.
LLAMA2_7B_STREAMED_WEIGHT_BYTES = (6_738_415_616 - 131_072_000 - 266_240) * 2
# Activations of one token (calc.timing.roofline docstring), per layer, 2 B each:
#   qkv in/out (4096 + 3*4096) + attention q/o 2*4096 + o_proj 2*4096 + mlp (2*4096 + 3*11008)
#   + elementwise (10*4096 + 3*11008) = 147,968 elements = 295,936 B; x 32 layers = 9,469,952 B;
#   lm_head: 4096*2 B in + 32000*4 B FP32 logits = 136,192 B.
LLAMA2_7B_ACT_BYTES_PER_TOKEN = 32 * 147_968 * 2 + 4096 * 2 + 32000 * 4
KV_PER_TOKEN = 524_288  # 2 * 32 layers * 32 heads * 128 * 2 B


class TestEngineNumbers:
    def test_llama2_7b_tp1_sizes(self):
        e = engine_numbers(get_model(LLAMA2_7B), get_gpu("a100-80gb"), FP16, IDEAL)
        assert e.qkv_params == 32 * 3 * 4096 * 4096
        assert e.o_params == 32 * 4096 * 4096
        assert e.mlp_dense_params == 32 * 3 * 4096 * 11008
        assert e.kv_bytes_per_token == KV_PER_TOKEN
        assert e.attn_flops_per_pair_decode == 4 * 32 * 128 * 32  # 4 * H_q * d per layer
        assert e.peak_flops_per_s == A100_FLOPS and e.hbm_bw_bytes_per_s == A100_BW

    def test_tp_divides_per_gpu_weights(self):
        # Llama-2-70B: qkv/o/mlp split across ranks (8 KV heads: TP <= 8 still splits them)
        arch, gpu = get_model(LLAMA2_70B), get_gpu("a100-80gb")
        one = engine_numbers(arch, gpu, ServingConfig(tensor_parallel_size=1), IDEAL)
        for tp in (2, 4, 8):
            e = engine_numbers(arch, gpu, ServingConfig(tensor_parallel_size=tp), IDEAL)
            for f in ("qkv_params", "o_params", "mlp_dense_params", "vocab_per_rank", "kv_bytes_per_token"):
                assert getattr(e, f) == pytest.approx(getattr(one, f) / tp, rel=1e-12), (f, tp)

    def test_tp_divides_decode_step_bytes(self):
        # batch-1 decode streams ~ W / TP per GPU: 137.95 GB / 4 = 34.5 GB at TP 4 (within 1 %: activations)
        arch, gpu = get_model(LLAMA2_70B), get_gpu("a100-80gb")
        b1 = float(decode_step(engine_numbers(arch, gpu, FP16, IDEAL), batch=1, context_tokens=1).bytes)
        b4 = float(decode_step(engine_numbers(arch, gpu, ServingConfig(dtype="float16", tensor_parallel_size=4), IDEAL),
                               batch=1, context_tokens=1).bytes)
        assert b1 == pytest.approx((68_976_648_192 - 32000 * 8192) * 2, rel=0.01)
        assert b4 == pytest.approx(b1 / 4, rel=0.01)

    def test_fp8_uses_fp8_peak_on_h100_and_fp16_peak_on_a100(self):
        arch = get_model(LLAMA2_7B)
        h100 = engine_numbers(arch, get_gpu("h100-sxm"), ServingConfig(quantization="fp8"))
        a100 = engine_numbers(arch, get_gpu("a100-80gb"), ServingConfig(quantization="fp8"))
        assert h100.peak_flops_per_s == 1978.9e12  # H100 SXM dense FP8 (hardware.csv)
        assert a100.peak_flops_per_s == 312e12      # A100 has no FP8 tensor cores: W8A16, FP16 rate
        # attention stays at the 16-bit rate; weights move at 1 B either way
        assert h100.attention_peak_flops_per_s == 989.4e12
        assert h100.linear_bytes_per_param == a100.linear_bytes_per_param == 1.0

    def test_mla_decode_attention_intensity(self):
        # DeepSeek-V3 absorbed MLA, per cached token per layer (physics.md A3):
        # FLOPs 2 * 128 heads * (2*512 + 64) = 278,528; bytes (512 + 64) * 2 B = 1,152 -> 241.8 FLOP/B
        e = engine_numbers(get_model(DEEPSEEK_V3), get_gpu("h200"), ServingConfig(), IDEAL)
        assert e.attn_flops_per_pair_decode == 278_528 * 61
        assert e.kv_bytes_per_token == 1_152 * 61
        assert e.attn_flops_per_pair_decode / e.kv_bytes_per_token == pytest.approx(278_528 / 1_152)
        assert round(278_528 / 1_152) == 242
        # the same seen through one decode step with a long context (weights do not enter attention)
        s = decode_step(e, batch=8, context_tokens=32_768)
        ai = (s.op_compute_s["attention"] * e.attention_peak_flops_per_s) / (s.op_memory_s["attention"] * e.hbm_bw_bytes_per_s)
        assert float(ai) == pytest.approx(241.8, rel=0.01)

    def test_mla_cache_is_replicated_under_tp(self):
        # the latent is not split by heads: every rank holds 1,152 B per layer; the heads split,
        # so the per-GPU decode attention intensity is 242 / TP
        e8 = engine_numbers(get_model(DEEPSEEK_V3), get_gpu("h200"), ServingConfig(tensor_parallel_size=8), IDEAL)
        assert e8.kv_bytes_per_token == 1_152 * 61
        assert e8.attn_flops_per_pair_decode / e8.kv_bytes_per_token == pytest.approx(278_528 / 1_152 / 8)


class TestSlidingWindow:
    def test_mistral_decode_reads_at_most_the_window(self):
        # Mistral-7B-v0.1: all 32 layers slide over W = 4096, so a decode token reads at most
        # 4096 * 131,072 B = 512 MiB of KV at any context (it was read over the whole context before)
        e = engine_numbers(get_model("mistralai/Mistral-7B-v0.1"), get_gpu("h100-sxm"), ServingConfig(), IDEAL)
        assert e.sliding_fraction == 1.0 and e.sliding_window == 4096
        at = lambda ctx: decode_step(e, batch=32, context_tokens=ctx)  # noqa: E731
        assert float(at(32_000).step_s) == pytest.approx(float(at(4096).step_s), rel=1e-12)
        kv = float(at(32_000).op_memory_s["attention"]) * 3.35e12
        assert kv == pytest.approx(32 * (4096 + 1) * 131_072 + 32 * 2 * 4096 * 2 * 32, rel=1e-9)  # + Q/O activations

    def test_gemma2_half_the_layers_slide(self):
        e = engine_numbers(get_model("google/gemma-2-9b"), get_gpu("h100-sxm"), ServingConfig(), IDEAL)
        assert e.sliding_fraction == 0.5  # 21 of 42 layers
        full = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"), ServingConfig(), IDEAL)
        assert full.sliding_fraction == 0.0 and np.isinf(full.sliding_window)


class TestBatchOneDecode:
    def test_llama2_7b_fp16_a100_ideal_step_time(self):
        # context 1000 cached tokens: KV read 1000 + write 1 = 1001 * 524,288 = 524,812,288 B.
        # bytes = 13,214,154,752 + 524,812,288 + 9,606,144 = 13,748,573,184 B; every operator is
        # memory-bound at batch 1, so t = bytes / 2.039e12 B/s = 6.7428 ms (no overhead in IDEAL).
        e = engine_numbers(get_model(LLAMA2_7B), get_gpu("a100-80gb"), FP16, IDEAL)
        s = decode_step(e, batch=1, context_tokens=1000)
        weights_and_kv = LLAMA2_7B_STREAMED_WEIGHT_BYTES + 1001 * KV_PER_TOKEN
        assert str(s.bound) == "memory"
        assert float(s.step_s) == pytest.approx(weights_and_kv / A100_BW, rel=1e-3)  # activations are 0.07 %
        assert float(s.step_s) == pytest.approx((weights_and_kv + LLAMA2_7B_ACT_BYTES_PER_TOKEN) / A100_BW, rel=1e-9)
        assert float(s.step_s) * 1e3 == pytest.approx(6.7428, abs=1e-4)

    def test_llama2_7b_fp16_a100_default_efficiency(self):
        # defaults: 80 % of the bandwidth, 1.5 ms per step and 35 us for the one sequence:
        # 13,748,573,184 / (0.8 * 2.039e12) + 1.5e-3 + 35e-6 = 9.964 ms.
        # Still memory-bound: the MLP's compute floor 2 P (1 + 64) / (0.7 * 312e12) is 0.49x its streaming time.
        e = engine_numbers(get_model(LLAMA2_7B), get_gpu("a100-80gb"), FP16)
        s = decode_step(e, batch=1, context_tokens=1000)
        total = LLAMA2_7B_STREAMED_WEIGHT_BYTES + 1001 * KV_PER_TOKEN + LLAMA2_7B_ACT_BYTES_PER_TOKEN
        assert str(s.bound) == "memory"
        assert float(s.step_s) == pytest.approx(total / (0.8 * A100_BW) + 1.5e-3 + 35e-6, rel=1e-9)

    def test_mixtral_streams_two_of_eight_experts(self):
        # Mixtral-8x7B: experts 32*8*3*4096*14336 = 45,097,156,608 params; one token touches 2 of 8 per
        # layer: 1/4 of them, + router 32*4096*8 = 1,048,576 -> 11,275,337,728 params * 2 B = 22.55 GB
        # (activations 32*(2*4096 + 3*2*14336)*2 B = 5.0 MB on top). A batch of 256 touches all 8.
        e = engine_numbers(get_model(MIXTRAL), get_gpu("h100-sxm"), ServingConfig(tensor_parallel_size=2), IDEAL)
        mlp_bytes = lambda b: float(decode_step(e, batch=b, context_tokens=1).op_memory_s["mlp"] * e.hbm_bw_bytes_per_s)  # noqa: E731
        two = (45_097_156_608 / 4 + 1_048_576) * 2 / 2  # TP 2 halves it per GPU
        assert mlp_bytes(1) == pytest.approx(two, rel=1e-3)
        all_eight = (45_097_156_608 + 1_048_576) * 2 / 2
        assert mlp_bytes(256) == pytest.approx(all_eight, rel=0.02)  # + 256 tokens of activations


class TestCriticalBatch:
    @pytest.mark.parametrize("quantization, b_w", [
        ("none", 2.0),              # FP16: B* = 312e12 * 2 / (2 * 2.039e12) = 153.0
        ("awq", 4.15625 / 8),       # W4A16: B* = 312e12 * 0.5195 / (2 * 2.039e12) = 39.75
    ])
    def test_linear_layers_flip_at_b_star(self, quantization, b_w):
        e = engine_numbers(get_model(LLAMA2_7B), get_gpu("a100-80gb"),
                           ServingConfig(dtype="float16", quantization=quantization), IDEAL)
        b_star = A100_FLOPS * b_w / (2 * A100_BW)
        assert float(critical_batch_size(peak_flops_per_s=e.peak_flops_per_s, hbm_bw_bytes_per_s=e.hbm_bw_bytes_per_s,
                                         bytes_per_weight=e.linear_bytes_per_param)) == pytest.approx(b_star, rel=1e-12)
        # the quantized layers (lm_head stays FP16, so it has its own B* = 153)
        ops = ("qkv_proj", "o_proj", "mlp") if quantization != "none" else LINEAR

        def linear(batch):
            s = decode_step(e, batch=batch, context_tokens=1)
            return sum(float(s.op_compute_s[o]) for o in ops), sum(float(s.op_memory_s[o]) for o in ops)

        compute, memory = linear(b_star / 2)
        assert compute < memory
        compute, memory = linear(2 * b_star)
        assert compute > memory

    def test_int4_moves_b_star_down_by_2_over_0_52(self):
        gpu, arch = get_gpu("a100-80gb"), get_model(LLAMA2_7B)
        fp16 = engine_numbers(arch, gpu, FP16, IDEAL)
        awq = engine_numbers(arch, gpu, ServingConfig(dtype="float16", quantization="awq"), IDEAL)
        ratio = (critical_batch_size(peak_flops_per_s=fp16.peak_flops_per_s, hbm_bw_bytes_per_s=fp16.hbm_bw_bytes_per_s,
                                     bytes_per_weight=fp16.linear_bytes_per_param)
                 / critical_batch_size(peak_flops_per_s=awq.peak_flops_per_s, hbm_bw_bytes_per_s=awq.hbm_bw_bytes_per_s,
                                       bytes_per_weight=awq.linear_bytes_per_param))
        assert float(ratio) == pytest.approx(2 / 0.51953125, rel=1e-12)  # 3.85x lower
        assert awq.peak_flops_per_s == fp16.peak_flops_per_s  # W4A16 computes at the FP16 rate


class TestPrefill:
    def test_2048_token_prompt_is_compute_bound(self):
        # 2 * 6.6e9 * 2048 = 2.7e13 FLOPs vs 13.2 GB of weights: AI ~ 2048 >> ridge 153
        e = engine_numbers(get_model(LLAMA2_7B), get_gpu("a100-80gb"), FP16)
        assert str(prefill_step(e, prompts=1, prompt_tokens=2048).bound) == "compute"

    def test_2048_token_prefill_ideal_time(self):
        # IDEAL, 2048 tokens, logits for the last one only. Compute-bound operators:
        #   qkv + o + mlp: 2 * 2048 * 6,476,005,376 params = 2.6526e16 FLOPs -> 85.02 ms at 312e12
        #   attention: 2048*2049/2 pairs * 4*32*128*32 FLOPs = 1.1002e12 -> 3.526 ms
        # Memory-bound ones: lm_head (1 token) 262,144,000 B + 8,192 + 128,000 B; elementwise
        # 2048 * 32 * (10*4096 + 3*11008) * 2 B = 9,697,230,848 B -> 4.756 ms at 2.039e12 B/s.
        e = engine_numbers(get_model(LLAMA2_7B), get_gpu("a100-80gb"), FP16, IDEAL)
        s = prefill_step(e, prompts=1, prompt_tokens=2048)
        compute_bound = 2 * 2048 * 6_476_005_376 + 2048 * 2049 / 2 * 4 * 32 * 128 * 32
        memory_bound = (262_144_000 + 8_192 + 128_000) + 2048 * 32 * (10 * 4096 + 3 * 11008) * 2
        assert float(s.step_s) == pytest.approx(compute_bound / A100_FLOPS + memory_bound / A100_BW, rel=1e-9)
        assert float(s.step_s) * 1e3 == pytest.approx(93.43, abs=0.01)

    def test_decode_stays_memory_bound_at_tp8(self):
        # regression: a small-GEMM penalty that scaled with TP made batch-1 decode "compute-bound" at TP > 1
        for tp in (1, 2, 4, 8):
            e = engine_numbers(get_model(LLAMA2_70B), get_gpu("a100-80gb"), ServingConfig(tensor_parallel_size=tp))
            assert str(decode_step(e, batch=1, context_tokens=1024).bound) == "memory"


class TestEstimate:
    def test_concurrency_array_gives_a_frontier(self):
        c = np.array([1, 2, 4, 8, 16, 32])
        r = estimate(get_model(LLAMA2_7B), get_gpu("a100-80gb"), ServingConfig(input_len=512, output_len=128), concurrency=c)
        for f in ("ttft_s", "tpot_s", "e2e_latency_s", "output_tokens_per_s", "requests_per_s", "mfu", "mbu"):
            assert np.shape(getattr(r.serving, f)) == c.shape, f

    def test_grid_broadcasts(self):
        r = estimate(get_model(LLAMA2_7B), get_gpu("h100-sxm"), ServingConfig(max_model_len=4096),
                     concurrency=np.array([1, 8, 64])[:, None], input_len=np.array([128, 512, 2048])[None, :])
        assert r.serving.tpot_s.shape == (3, 3)
        one = estimate(get_model(LLAMA2_7B), get_gpu("h100-sxm"), ServingConfig(max_model_len=4096, input_len=512, concurrency=8))
        assert float(r.serving.tpot_s[1, 1]) == pytest.approx(float(one.serving.tpot_s), rel=1e-12)

    def test_405b_on_one_l4_does_not_fit_and_never_raises(self):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no divide-by-zero or invalid-value warnings either
            r = estimate(get_model("meta-llama/Llama-3.1-405B"), get_gpu("l4"), ServingConfig(max_model_len=8192),
                         concurrency=np.array([1, 8]))
        assert not r.serving.fits.any()
        for f in ("ttft_s", "tpot_s", "e2e_latency_s", "output_tokens_per_s", "requests_per_s", "mfu", "mbu"):
            assert np.isnan(getattr(r.serving, f)).all(), f

    def test_concurrency_max_runs_what_fits(self):
        r = estimate(get_model(LLAMA2_7B), get_gpu("a100-80gb"),
                     ServingConfig(input_len=1024, output_len=256, max_model_len=4096, concurrency=None))
        assert float(r.serving.running) == float(min(r.max_num_seqs, r.serving.kv_sequences_at_mean_context))
        assert float(r.serving.waiting) == 0.0


def test_estimate_refuses_what_vllm_refuses_without_chunked_prefill():
    """Chunked prefill off and an explicit token budget below max_model_len: vLLM does not start
    (SchedulerConfig), so there is nothing to estimate. The default budget is raised instead."""
    from calc.spec.untrusted import InputError

    arch, gpu = get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb")  # max_model_len 4,096
    s = ServingConfig(input_len=1024, output_len=128, concurrency=8, enable_chunked_prefill=False)
    with pytest.raises(InputError) as err:
        estimate(arch, gpu, s.model_copy(update={"max_num_batched_tokens": 4095}))
    assert err.value.field == "max_num_batched_tokens" and err.value.code == "budget_below_len"
    assert estimate(arch, gpu, s.model_copy(update={"max_num_batched_tokens": 4096})).serving.fits
    assert estimate(arch, gpu, s).max_num_batched_tokens == 4096  # default 2,048 raised to max_model_len
    # chunked prefill switched on by the caller: fine
    assert estimate(arch, gpu, s.model_copy(update={"max_num_batched_tokens": 2048}), enable_chunked_prefill=True).serving.fits
