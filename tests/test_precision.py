"""calc.spec.precision: bytes per element and the tensor-core rate a format runs at (physics.md A2, A7)."""

import pytest

from calc.spec.catalog import get_gpu, get_model
from calc.spec.precision import (KV_CACHE_DTYPES, QUANT_BITS_PER_WEIGHT, activation_bytes, canonical_dtype,
                            compute_precision, kv_bytes_per_element, linear_weight_bytes_per_param)
from calc.sizing.scenario import model_numbers


class TestCanonicalDtype:
    @pytest.mark.parametrize("given, expected", [
        ("fp16", "float16"), ("half", "float16"), ("float16", "float16"), ("bf16", "bfloat16"),
        ("bfloat16", "bfloat16"), ("fp32", "float32"), ("float32", "float32"),
        ("auto", "bfloat16"),  # auto = the checkpoint's 16-bit dtype
    ])
    def test_aliases(self, given, expected):
        assert canonical_dtype(given) == expected


class TestActivationBytes:
    @pytest.mark.parametrize("dtype, expected", [("float16", 2.0), ("bfloat16", 2.0), ("auto", 2.0),
                                                 ("fp16", 2.0), ("float32", 4.0), ("fp32", 4.0)])
    def test_bytes(self, dtype, expected):
        assert activation_bytes(dtype) == expected


class TestLinearWeightBytesPerParam:
    @pytest.mark.parametrize("dtype, quantization, expected", [
        ("float16", "none", 2.0),
        ("bfloat16", "none", 2.0),
        ("float32", "none", 4.0),
        ("bfloat16", "fp8", 1.0),  # 8 bits, per-tensor/channel scales negligible
        ("bfloat16", "int8", 1.0),
        # AWQ / GPTQ group 128: 4 + 16/128 (FP16 scale) + 4/128 (4-bit zero) = 4.15625 bits = 0.51953125 B
        ("float16", "awq", 0.51953125),
        ("float16", "gptq", 0.51953125),
        # NF4 double quantization: 4 + 8/64 + 32/(64*256) = 4.126953125 bits = 0.515869140625 B
        ("bfloat16", "bitsandbytes", 0.515869140625),
        ("bfloat16", "nf4", 0.515869140625),  # the old spelling still reads
    ])
    def test_bytes(self, dtype, quantization, expected):
        assert linear_weight_bytes_per_param(dtype=dtype, quantization=quantization) == expected

    def test_bits_table(self):
        assert QUANT_BITS_PER_WEIGHT["gptq"] == QUANT_BITS_PER_WEIGHT["awq"] == 4.15625
        assert round(QUANT_BITS_PER_WEIGHT["bitsandbytes"], 3) == 4.127  # physics.md A7 "4.127 bits"

    def test_awq_llama31_8b_weights(self):
        # Linear layers quantize, embedding / LM head / norms stay 16-bit:
        # linear 6,979,321,856 * 0.51953125 = 6,979,321,856 / 256 * 133 = 27,262,976 * 133 = 3,625,975,808 B
        # (embedding + LM head + norms) = (525,336,576 * 2 + 266,240) * 2 B = 2,101,878,784 B
        n = model_numbers(get_model("meta-llama/Llama-3.1-8B"), dtype="float16", quantization="awq")
        assert n.weights_total_bytes == 3_625_975_808 + 2_101_878_784

    def test_fp8_llama31_8b_weights(self):
        # 6,979,321,856 * 1 B + 2,101,878,784 B = 9,081,200,640 B (vs 16,060,522,496 in BF16)
        n = model_numbers(get_model("meta-llama/Llama-3.1-8B"), dtype="bfloat16", quantization="fp8")
        assert n.weights_total_bytes == 9_081_200_640


class TestKvBytesPerElement:
    @pytest.mark.parametrize("kv_cache_dtype, dtype, expected", [
        ("auto", "float16", 2.0), ("auto", "bfloat16", 2.0), ("auto", "float32", 4.0),
        # old spellings read as vLLM's: fp16 -> float16, bf16 -> bfloat16 (2 bytes whatever the model dtype)
        ("fp16", "float32", 2.0), ("bf16", "float16", 2.0), ("float16", "float32", 2.0),
        ("fp8", "bfloat16", 1.0), ("fp8_e4m3", "bfloat16", 1.0), ("fp8_e5m2", "bfloat16", 1.0),
        ("int8", "float16", 1.0),
    ])
    def test_bytes(self, kv_cache_dtype, dtype, expected):
        assert kv_bytes_per_element(kv_cache_dtype=kv_cache_dtype, dtype=dtype) == expected

    def test_every_listed_dtype_is_understood(self):
        for kv in KV_CACHE_DTYPES:
            # NVFP4: (D/2 + D/16) bytes per D elements = 0.5625 B (4.5 bits)
            assert kv_bytes_per_element(kv_cache_dtype=kv, dtype="float16") in (0.5625, 1.0, 2.0)

    def test_unknown_names_the_allowed_values(self):
        with pytest.raises(ValueError, match="kv_cache_dtype 'fp4' is not one of"):
            kv_bytes_per_element(kv_cache_dtype="fp4", dtype="float16")

    def test_fp8_halves_llama2_7b_kv(self):
        # 2 * 32 layers * 32 heads * 128 * 1 B = 262,144 B per token (half of 524,288)
        n = model_numbers(get_model("meta-llama/Llama-2-7b-hf"), kv_cache_dtype="fp8")
        assert n.kv_bytes_per_token_per_head_full * n.num_kv_heads == 262_144


def _rate(gpu_id, dtype, quantization):
    gpu = get_gpu(gpu_id)
    precision = compute_precision(dtype=dtype, quantization=quantization,
                                  gpu_has_fp8=gpu.fp8_flops_per_s is not None,
                                  gpu_has_int8=gpu.int8_ops_per_s is not None)
    return precision, gpu.peak_flops_per_s(precision)


class TestComputePrecision:
    @pytest.mark.parametrize("quantization", ["awq", "gptq", "bitsandbytes"])
    def test_w4a16_runs_at_the_16_bit_rate(self, quantization):
        # 4-bit weights are dequantized in the kernel: H100 BF16 dense 989.4 TFLOPS, not FP8/INT4
        assert _rate("h100-sxm", "bfloat16", quantization) == ("bf16", 989.4e12)
        assert _rate("h100-sxm", "float16", quantization) == ("fp16", 989.4e12)

    def test_fp8_on_a100_falls_back_to_16_bit(self):
        # Ampere has no FP8 tensor cores: W8A16 (FP8 Marlin) at the FP16 rate, 312 TFLOPS
        assert _rate("a100-80gb", "float16", "fp8") == ("fp16", 312e12)

    def test_fp8_on_h100_uses_fp8_rate(self):
        # Hopper FP8 dense 1,978.9 TFLOPS
        assert _rate("h100-sxm", "bfloat16", "fp8") == ("fp8", 1978.9e12)

    def test_fp8_on_mi300x_uses_fp8_rate(self):
        assert _rate("mi300x", "bfloat16", "fp8") == ("fp8", 2614.9e12)

    def test_int8_w8a8(self):
        # A100 INT8 dense 624 TOPS
        assert _rate("a100-80gb", "float16", "int8") == ("int8", 624e12)

    def test_unquantized(self):
        assert compute_precision(dtype="auto", quantization="none", gpu_has_fp8=True, gpu_has_int8=True) == "bf16"
        assert compute_precision(dtype="float32", quantization="none", gpu_has_fp8=True, gpu_has_int8=True) == "tf32"

    def test_without_int8_cores_int8_runs_16_bit(self):
        assert compute_precision(dtype="float16", quantization="int8", gpu_has_fp8=False, gpu_has_int8=False) == "fp16"


class TestVllmSpellings:
    """Option values are vLLM 0.19's ``--quantization`` / ``--kv-cache-dtype`` choices; the
    calculator's old spellings read as aliases (old links and scenario files)."""

    def test_choices_are_vllms(self):
        from calc.spec.precision import KV_CACHE_DTYPES, QUANTIZATIONS

        assert "nf4" not in QUANTIZATIONS and "bitsandbytes" in QUANTIZATIONS
        assert not {"fp16", "bf16", "int8"} & set(KV_CACHE_DTYPES)
        # + nvfp4 (vLLM PR #40177, SM100 only: calc.sizing.scenario.check_gpu_formats)
        assert set(KV_CACHE_DTYPES) == {"auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4"}
        assert {"mxfp4", "modelopt_fp4"} <= set(QUANTIZATIONS)

    @pytest.mark.parametrize("old,new,b", [("fp16", "float16", 2.0), ("bf16", "bfloat16", 2.0), ("int8", "fp8", 1.0)])
    def test_old_kv_spellings(self, old, new, b):
        from calc.spec.inputs import ServingConfig
        from calc.spec.precision import kv_bytes_per_element

        assert ServingConfig(kv_cache_dtype=old).kv_cache_dtype == new
        assert kv_bytes_per_element(kv_cache_dtype=old, dtype="bfloat16") == b  # same bytes as before

    def test_old_quantization_spelling(self):
        from calc.spec.inputs import ServingConfig

        assert ServingConfig(quantization="nf4").quantization == "bitsandbytes"


class TestDequantBytes:
    def test_bitsandbytes_writes_and_reads_a_16_bit_copy(self):
        from calc.spec.precision import dequant_bytes_per_param

        # dequantize_4bit writes 2 B per weight (BF16), the GEMM reads them back: 2 + 2 = 4 B
        assert dequant_bytes_per_param(quantization="bitsandbytes", dtype="bfloat16") == 4.0
        assert dequant_bytes_per_param(quantization="bitsandbytes", dtype="float32") == 8.0
        for q in ("none", "fp8", "int8", "awq", "gptq"):
            assert dequant_bytes_per_param(quantization=q, dtype="bfloat16") == 0.0
