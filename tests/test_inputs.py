"""calc.spec.inputs: every bad value raises a ValidationError that names the field and the allowed range."""

import pytest
from pydantic import ValidationError

from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import (Efficiency, GPUSpec, MLAConfig, ModelArch, MoEConfig, ServingConfig, allowed_range,
                         describe_validation_error)


def message(model, **kwargs) -> str:
    with pytest.raises(ValidationError) as info:
        model(**kwargs)
    return describe_validation_error(info.value)


class TestServingConfig:
    def test_defaults_are_vllms(self):
        s = ServingConfig()
        assert (s.tensor_parallel_size, s.gpu_memory_utilization, s.block_size, s.dtype, s.kv_cache_dtype) == \
            (1, 0.9, 16, "auto", "auto")

    @pytest.mark.parametrize("field, value, expected", [
        ("tensor_parallel_size", 0,
         "tensor_parallel_size: Input should be greater than or equal to 1 (got 0); "
         "allowed: 1 <= tensor_parallel_size <= 1024"),
        ("tensor_parallel_size", 2048,
         "tensor_parallel_size: Input should be less than or equal to 1024 (got 2048); "
         "allowed: 1 <= tensor_parallel_size <= 1024"),
        ("gpu_memory_utilization", 1.5,
         "gpu_memory_utilization: Input should be less than or equal to 1 (got 1.5); "
         "allowed: 0 < gpu_memory_utilization <= 1"),
        ("gpu_memory_utilization", 0.0,
         "gpu_memory_utilization: Input should be greater than 0 (got 0.0); allowed: 0 < gpu_memory_utilization <= 1"),
        ("block_size", 7, "block_size: Input should be 1, 8, 16, 32, 64 or 128 (got 7)"),
        ("dtype", "int4", "dtype: Input should be 'auto', 'float16', 'bfloat16' or 'float32' (got 'int4')"),
        ("quantization", "fp4", "quantization: Input should be 'auto', 'none', 'fp8', 'int8', 'awq', 'gptq', 'bitsandbytes', 'mxfp4' or 'modelopt_fp4' (got 'fp4')"),
        ("kv_cache_dtype", "fp4",
         "kv_cache_dtype: Input should be 'auto', 'float16', 'bfloat16', 'fp8', 'fp8_e4m3', 'fp8_e5m2' or 'nvfp4' (got 'fp4')"),
        ("max_model_len", 0,
         "max_model_len: Input should be greater than or equal to 1 (got 0); allowed: 1 <= max_model_len <= 100000000"),
        ("max_num_seqs", -1,
         "max_num_seqs: Input should be greater than or equal to 1 (got -1); allowed: 1 <= max_num_seqs <= 1000000"),
        ("max_num_batched_tokens", 0, "max_num_batched_tokens: Input should be greater than or equal to 1 (got 0); "
                                      "allowed: 1 <= max_num_batched_tokens <= 100000000"),
        ("concurrency", 0,
         "concurrency: Input should be greater than or equal to 1 (got 0); allowed: 1 <= concurrency <= 1000000"),
        ("input_len", 0,
         "input_len: Input should be greater than or equal to 1 (got 0); allowed: 1 <= input_len <= 100000000"),
    ])
    def test_bad_value_names_field_and_range(self, field, value, expected):
        assert message(ServingConfig, **{field: value}) == expected

    def test_not_a_number(self):
        assert message(ServingConfig, tensor_parallel_size="two").startswith(
            "tensor_parallel_size: Input should be a valid integer")

    def test_prompt_plus_output_must_fit(self):
        assert message(ServingConfig, max_model_len=1000, input_len=900, output_len=200) == \
            "input_len + output_len (1100) must be <= max_model_len (1000)"

    def test_several_errors_on_one_line(self):
        msg = message(ServingConfig, tensor_parallel_size=0, block_size=7)
        assert "\n" not in msg and msg.count("; allowed") == 1 and "block_size" in msg

    def test_unknown_field_is_rejected(self):
        assert message(ServingConfig, tensor_parallel=2).startswith("tensor_parallel: Extra inputs are not permitted")

    def test_frozen(self):
        with pytest.raises(ValidationError, match="frozen"):
            ServingConfig().block_size = 32


class TestEfficiency:
    @pytest.mark.parametrize("field, value, allowed", [
        ("hbm_bw_fraction", 1.2, "0 < hbm_bw_fraction <= 1"),
        ("prefill_flops_fraction", 0.0, "0 < prefill_flops_fraction <= 1"),
        ("decode_flops_fraction", -0.1, "0 < decode_flops_fraction <= 1"),
        ("step_overhead_s", 2.0, "0 <= step_overhead_s <= 1"),
        ("non_torch_overhead_bytes", -1.0, "0 <= non_torch_overhead_bytes <= 1e+12"),
        ("activation_live_hidden_buffers", 100.0, "0 <= activation_live_hidden_buffers <= 64"),
    ])
    def test_bad_value_names_field_and_range(self, field, value, allowed):
        msg = message(Efficiency, **{field: value})
        assert msg.startswith(f"{field}: Input should be") and msg.endswith(f"(got {value}); allowed: {allowed}")

    def test_defaults_are_in_range_and_described(self):
        # every default is a named input with a description (its source), and passes its own bounds
        for name, field in Efficiency.model_fields.items():
            assert field.description, name
        assert Efficiency(**Efficiency().model_dump()) == Efficiency()


ARCH = dict(id="x/y", name="y", model_type="llama", hidden_size=4096, num_hidden_layers=32, num_attention_heads=32,
            num_key_value_heads=8, head_dim=128, intermediate_size=14336, vocab_size=128256,
            max_position_embeddings=8192)


class TestModelArch:
    def test_valid(self):
        assert ModelArch(**ARCH).attention_kind == "GQA"

    def test_heads_must_be_multiple_of_kv_heads(self):
        assert message(ModelArch, **dict(ARCH, num_key_value_heads=5)) == \
            "num_attention_heads (32) must be a multiple of num_key_value_heads (5)"

    def test_mla_skips_the_head_rule(self):
        mla = MLAConfig(kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)
        assert ModelArch(**dict(ARCH, num_key_value_heads=5, mla=mla)).attention_kind == "MLA"

    @pytest.mark.parametrize("kv_heads, kind", [(32, "MHA"), (8, "GQA"), (1, "MQA")])
    def test_attention_kind(self, kv_heads, kind):
        assert ModelArch(**dict(ARCH, num_key_value_heads=kv_heads)).attention_kind == kind

    def test_range(self):
        assert message(ModelArch, **dict(ARCH, hidden_size=0)) == \
            "hidden_size: Input should be greater than or equal to 1 (got 0); allowed: 1 <= hidden_size <= 1000000"

    def test_sliding_layers(self):
        assert message(ModelArch, **dict(ARCH, num_sliding_layers=40, sliding_window=4096)) == \
            "num_sliding_layers (40) must be <= num_hidden_layers (32)"
        assert message(ModelArch, **dict(ARCH, num_sliding_layers=4)) == "num_sliding_layers > 0 needs sliding_window"

    def test_catalog_models_are_model_archs(self):
        assert isinstance(get_model("meta-llama/Llama-2-7b-hf"), ModelArch)


class TestMoEConfig:
    def test_top_k_at_most_experts(self):
        assert message(MoEConfig, num_experts=8, experts_per_token=9, expert_intermediate_size=14336) == \
            "experts_per_token (9) must be <= num_experts (8)"

    def test_experts_range(self):
        assert message(MoEConfig, num_experts=1, experts_per_token=1, expert_intermediate_size=1) == \
            "num_experts: Input should be greater than or equal to 2 (got 1); allowed: 2 <= num_experts <= 4096"

    def test_nested_error_names_the_path(self):
        moe = dict(num_experts=8, experts_per_token=0, expert_intermediate_size=14336)
        assert message(ModelArch, **dict(ARCH, moe=moe)) == (
            "moe.experts_per_token: Input should be greater than or equal to 1 (got 0); "
            "allowed: 1 <= moe.experts_per_token <= 256")

    def test_nested_cross_field_error(self):
        moe = dict(num_experts=8, experts_per_token=9, expert_intermediate_size=14336)
        assert message(ModelArch, **dict(ARCH, moe=moe)) == "moe: experts_per_token (9) must be <= num_experts (8)"


class TestGPUSpec:
    def test_catalog_entry_round_trips(self):
        h100 = get_gpu("h100-sxm")
        assert GPUSpec(**h100.model_dump()) == h100

    def test_memory_must_be_positive(self):
        bad = dict(get_gpu("h100-sxm").model_dump(), usable_memory_bytes=0)
        assert message(GPUSpec, **bad) == "usable_memory_bytes: Input should be greater than 0 (got 0); " \
                                          "allowed: 0 < usable_memory_bytes"


class TestAllowedRange:
    def test_ranges(self):
        assert allowed_range("ServingConfig", ("gpu_memory_utilization",)) == "0 < gpu_memory_utilization <= 1"
        assert allowed_range("ServingConfig", ("max_model_len",)) == "1 <= max_model_len <= 100000000"  # Optional
        assert allowed_range("ModelArch", ("mla", "kv_lora_rank")) == "1 <= mla.kv_lora_rank <= 100000"

    def test_no_range(self):
        assert allowed_range("ServingConfig", ("block_size",)) == ""  # a Literal: pydantic lists the values
        assert allowed_range("ServingConfig", ("nope",)) == ""
        assert allowed_range("SomethingElse", ("x",)) == ""
