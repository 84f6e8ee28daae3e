"""calc.sizing.fit: vLLM's estimated maximum model length and the alternatives that fit.

vLLM's rule (vllm/v1/core/kv_cache_utils.py ``estimate_max_model_len``): binary search for the
largest L ≤ max_model_len whose KV, cdiv(L, block_size) blocks, fits the available KV memory;
its log line "the estimated maximum model length is 88128" is 5508 blocks of 16.
"""

import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from calc.sizing.fit import (MAX_GPU_MEMORY_UTILIZATION, DoesNotFit, max_model_len_that_fits, precision_supported,
                             what_would_fit)
from calc.sizing.scenario import memory_for
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.spec.parallelism import tensor_parallel_reason
from calc.spec.units import GiB

LLAMA31_70B = get_model("meta-llama/Llama-3.1-70B")
LLAMA31_8B = get_model("meta-llama/Llama-3.1-8B")
H100 = get_gpu("h100-sxm")
L4 = get_gpu("l4")
AT_32K_TP2 = ServingConfig(tensor_parallel_size=2, max_model_len=32768)


def _fits(arch, gpu, serving, **changes) -> bool:
    return bool(memory_for(arch, gpu, serving.model_copy(update=changes), Efficiency()).fits)


class TestMaxModelLenThatFits:
    def test_llama31_70b_tp2_h100_is_the_pool_in_whole_blocks(self):
        # KV per token per GPU: 80 layers · 2 (K, V) · 8/2 KV heads · 128 · 2 B = 163,840 B;
        # one block of 16 tokens = 2,621,440 B. The pool at u = 0.9 is 1.54 GiB:
        # floor(1.541 GiB / 2,621,440 B) = 631 blocks → 631 · 16 = 10,096 tokens (the issue's figure).
        pool = float(memory_for(LLAMA31_70B, H100, AT_32K_TP2).kv_pool_bytes)
        assert pool / GiB == pytest.approx(1.541, abs=0.001)
        assert math.floor(pool / (16 * 80 * 2 * 4 * 128 * 2)) * 16 == 10096
        assert max_model_len_that_fits(LLAMA31_70B, H100, AT_32K_TP2) == 10096

    def test_fits_already_gives_the_asked_length(self):
        # 8B on one H100 at 8k: 14.96 GiB of weights, ~53 GiB of KV: 8,192 fits as asked
        assert max_model_len_that_fits(LLAMA31_8B, H100, ServingConfig(max_model_len=8192)) == 8192

    def test_weights_do_not_fit_gives_zero(self):
        # 405B in BF16 ≈ 810 GB on one 80 GB GPU
        assert max_model_len_that_fits(get_model("meta-llama/Llama-3.1-405B"), H100, ServingConfig()) == 0

    def test_llama31_8b_full_context_on_l4(self):
        # 131,072 tokens · 131,072 B (32 layers · 2 · 8 · 128 · 2 B) = 16 GiB, more than the L4's pool;
        # the answer is the pool in whole blocks of 16 · 131,072 B = 2 MiB.
        pool = float(memory_for(LLAMA31_8B, L4, ServingConfig()).kv_pool_bytes)
        assert 0 < pool < 16 * GiB
        assert max_model_len_that_fits(LLAMA31_8B, L4, ServingConfig()) == math.floor(pool / 2**21) * 16

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(model=st.sampled_from(["meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B", "google/gemma-2-9b",
                                  "Qwen/Qwen3-30B-A3B", "deepseek-ai/DeepSeek-V2-Lite-Chat", "Qwen/Qwen2.5-7B"]),
           gpu=st.sampled_from(["l4", "a10g", "a100-40gb", "h100-sxm", "rtx-4090"]),
           tp=st.sampled_from([1, 2, 4]), util=st.floats(0.5, 0.95), length=st.integers(2, 131072),
           block=st.sampled_from([16, 32]), chunked=st.booleans())
    def test_largest_that_fits(self, model, gpu, tp, util, length, block, chunked):
        """L fits and L + 1 (hence L + block_size) does not; with chunked prefill L is whole blocks."""
        arch, g = get_model(model), get_gpu(gpu)
        assume(tensor_parallel_reason(arch, tp) is None)
        serving = ServingConfig(tensor_parallel_size=tp, gpu_memory_utilization=util, max_model_len=length,
                                block_size=block, enable_chunked_prefill=chunked, input_len=1, output_len=1)
        n = max_model_len_that_fits(arch, g, serving)
        assert 0 <= n <= length
        if n > 0:
            assert _fits(arch, g, serving, max_model_len=n)
        if n < length:
            assert not _fits(arch, g, serving, max_model_len=n + 1)
            assert not _fits(arch, g, serving, max_model_len=min(n + block, length))
            if chunked and n > 0 and arch.sliding_window is None:
                assert n % block == 0


class TestWhatWouldFit:
    def test_fits_gives_none(self):
        assert what_would_fit(LLAMA31_8B, H100, ServingConfig(max_model_len=8192)) is None

    def test_issue_example_llama31_70b_two_h100_at_32k(self):
        # Issue #17: "lower max_model_len to 10,096" misses the 32k goal; FP8 weights hold 6
        # concurrent 32k requests, TP 4 holds 13.
        # TP 4: 81,920 B per token per GPU · 32,768 = 2.5 GiB per request; the pool 34.33 GiB → 13.7.
        # FP8 (TP 2): weights halve, pool 33.42 GiB; 163,840 B · 32,768 = 5 GiB per request → 6.7.
        d = what_would_fit(LLAMA31_70B, H100, AT_32K_TP2)
        assert isinstance(d, DoesNotFit)
        by = {a.change: a for a in d.alternatives}
        assert (by["quantization"].value, by["quantization"].requests_at_context) == ("fp8", 6)
        assert by["quantization"].max_concurrency == pytest.approx(33.42 / 5, abs=0.01)
        assert (by["tensor_parallel_size"].value, by["tensor_parallel_size"].requests_at_context) == (4, 13)
        assert by["tensor_parallel_size"].max_concurrency == pytest.approx(34.33 / 2.5, abs=0.01)
        assert (by["max_model_len"].value, by["max_model_len"].meets_goal) == (10096, False)
        assert by["quantization"].meets_goal and by["tensor_parallel_size"].meets_goal
        assert d.max_model_len_that_fits == 10096
        # vLLM's figures: one 32k request needs 32,768 · 163,840 B = 5.00 GiB; 1.54 GiB available
        assert d.kv_needed_bytes == 32768 * 163840
        assert "5.00 GiB" in d.message and "1.54 GiB" in d.message and "10,096" in d.message

    def test_smallest_utilization(self):
        d = what_would_fit(LLAMA31_70B, H100, AT_32K_TP2)
        u = next(a for a in d.alternatives if a.change == "gpu_memory_utilization").value
        # 0.95 fits, 0.94 does not: 0.05 · 79.19 GiB = 3.96 GiB more pool ≥ 5 GiB − 1.54 GiB,
        # 0.04 · 79.19 = 3.17 GiB is not.
        assert u == 0.95
        assert _fits(LLAMA31_70B, H100, AT_32K_TP2, gpu_memory_utilization=u)
        assert not _fits(LLAMA31_70B, H100, AT_32K_TP2, gpu_memory_utilization=round(u - 0.01, 2))

    def test_concurrency_goal_picks_a_heavier_change(self):
        # 8 requests of 32k: FP8 weights hold only 6, FP8 weights + FP8 KV 13.4 (KV halves)
        d = what_would_fit(LLAMA31_70B, H100, AT_32K_TP2, concurrency=8)
        prec = next(a for a in d.alternatives if a.change.startswith("quantization"))
        assert (prec.change, prec.value, prec.meets_goal) == ("quantization,kv_cache_dtype", "fp8,fp8", True)
        assert prec.requests_at_context >= 8
        u = next(a for a in d.alternatives if a.change == "gpu_memory_utilization")
        assert not u.meets_goal  # even 0.98 holds fewer than 8 requests of 32k

    def test_short_requests_meet_the_goal_with_a_shorter_max_model_len(self):
        # The default max_model_len (131,072) does not fit an L4; requests of 1,200 tokens do.
        d = what_would_fit(LLAMA31_8B, L4, ServingConfig(), concurrency=8, context_tokens=1200)
        short = next(a for a in d.alternatives if a.change == "max_model_len")
        assert short.meets_goal and short.requests_at_context >= 8
        assert all(a.change != "gpu_memory_utilization" or a.value <= MAX_GPU_MEMORY_UTILIZATION
                   for a in d.alternatives)

    def test_weights_do_not_fit(self):
        d = what_would_fit(get_model("meta-llama/Llama-3.1-405B"), H100, ServingConfig())
        assert d.max_model_len_that_fits == 0 and d.kv_available_bytes < 0
        assert all(a.change != "max_model_len" for a in d.alternatives)
        assert "no max_model_len fits" in d.message

    def test_every_alternative_fits(self):
        d = what_would_fit(LLAMA31_8B, L4, ServingConfig())
        for a in d.alternatives:
            if a.change == "max_model_len":
                assert _fits(LLAMA31_8B, L4, ServingConfig(), max_model_len=a.value)
            else:
                changes = dict(zip(a.change.split(","), str(a.value).split(",")))
                changes = {k: (type(getattr(ServingConfig(), k))(v) if k != "kv_cache_dtype" and k != "quantization" else v)
                           for k, v in changes.items()}
                assert _fits(LLAMA31_8B, L4, ServingConfig(), **changes), a


class TestPrecisionSupported:
    def test_catalog(self):
        # A100: no FP8 tensor cores but Marlin W8A16; L4 (Ada) FP8 cores; A100 INT8 cores
        assert precision_supported(get_gpu("a100-80gb"), "fp8") and precision_supported(L4, "fp8")
        assert precision_supported(get_gpu("a100-80gb"), "int8")
        assert precision_supported(H100, "awq")


def _apply(serving: ServingConfig, a) -> ServingConfig:
    changes = dict(zip(a.change.split(","), str(a.value).split(",")))
    kinds = {"gpu_memory_utilization": float, "tensor_parallel_size": int, "max_model_len": int}
    return serving.model_copy(update={k: kinds.get(k, str)(v) for k, v in changes.items()})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=st.sampled_from(["meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B", "google/gemma-3-27b-it",
                              "Qwen/Qwen3-30B-A3B", "mistralai/Mixtral-8x7B-v0.1"]),
       gpu=st.sampled_from(["l4", "a10g", "a100-40gb", "h100-sxm", "rtx-4090"]),
       tp=st.sampled_from([1, 2]), util=st.floats(0.5, 0.95), concurrency=st.sampled_from([None, 1, 4, 32]))
def test_every_alternative_fits_and_the_utilization_is_the_smallest(model, gpu, tp, util, concurrency):
    arch, g = get_model(model), get_gpu(gpu)
    assume(tensor_parallel_reason(arch, tp) is None)
    serving = ServingConfig(tensor_parallel_size=tp, gpu_memory_utilization=util, input_len=1, output_len=1)
    d = what_would_fit(arch, g, serving, concurrency=concurrency)
    assume(d is not None)
    for a in d.alternatives:
        r = memory_for(arch, g, _apply(serving, a), Efficiency(), concurrency=1,
                       context_tokens=min(d.context_tokens, a.max_model_len))
        assert bool(r.fits), a
        assert a.max_concurrency == pytest.approx(float(r.max_concurrency))
        if a.change == "gpu_memory_utilization":
            assert util < a.value <= MAX_GPU_MEMORY_UTILIZATION and bool(r.reserve_ok)
            lower = round(a.value - 0.01, 2)
            if lower > util:  # one hundredth less misses what this one meets (the goal, or fitting at all)
                r0 = memory_for(arch, g, serving.model_copy(update={"gpu_memory_utilization": lower}), Efficiency(),
                                concurrency=1, context_tokens=d.context_tokens)
                ok0 = bool(r0.fits) and bool(r0.reserve_ok)
                if a.meets_goal:
                    assert not (ok0 and int(r0.max_concurrency_at_context) >= (concurrency or 1))
                else:
                    assert not ok0
