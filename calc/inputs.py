"""Pydantic input models: the validated boundary of the calculator.

Models are frozen and forbid unknown fields. Constraints live in the types; cross-field rules
are validators. A bad value raises ``pydantic.ValidationError`` whose message names the field
and the allowed range; :func:`describe_validation_error` turns it into one readable line.
Inside ``calc`` the formulas take plain numbers or NumPy arrays, never these models.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from calc.precision import DTYPES, KV_CACHE_DTYPES, QUANTIZATIONS

PosInt = Annotated[int, Field(ge=1)]
NonNegInt = Annotated[int, Field(ge=0)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MoEConfig(_Frozen):
    """Mixture-of-experts FFN: ``num_experts`` routed experts, ``experts_per_token`` active."""

    num_experts: Annotated[int, Field(ge=2, le=4096)]
    experts_per_token: Annotated[int, Field(ge=1, le=256)]
    expert_intermediate_size: Annotated[int, Field(ge=1, le=1_000_000)]
    num_shared_experts: Annotated[int, Field(ge=0, le=64)] = 0
    shared_expert_intermediate_size: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    first_dense_layers: Annotated[int, Field(ge=0, le=10_000)] = 0
    router_bias: bool = False

    @model_validator(mode="after")
    def _k_le_e(self) -> "MoEConfig":
        if self.experts_per_token > self.num_experts:
            raise ValueError(
                f"experts_per_token ({self.experts_per_token}) must be <= num_experts ({self.num_experts})"
            )
        return self


class MLAConfig(_Frozen):
    """DeepSeek multi-head latent attention: the KV cache holds a ``kv_lora_rank`` latent plus
    a ``qk_rope_head_dim`` rotary key per token per layer."""

    q_lora_rank: Annotated[int, Field(ge=0, le=100_000)] = 0  # 0 = no low-rank query
    kv_lora_rank: Annotated[int, Field(ge=1, le=100_000)]
    qk_nope_head_dim: Annotated[int, Field(ge=1, le=4096)]
    qk_rope_head_dim: Annotated[int, Field(ge=0, le=4096)]
    v_head_dim: Annotated[int, Field(ge=1, le=4096)]


class ModelArch(_Frozen):
    """A decoder-only transformer architecture, in Hugging Face ``config.json`` terms."""

    id: Annotated[str, Field(min_length=1, max_length=200)]
    name: Annotated[str, Field(min_length=1, max_length=200)]
    model_type: str
    hidden_size: Annotated[int, Field(ge=1, le=1_000_000)]
    num_hidden_layers: Annotated[int, Field(ge=1, le=10_000)]
    num_attention_heads: Annotated[int, Field(ge=1, le=10_000)]
    num_key_value_heads: Annotated[int, Field(ge=1, le=10_000)]
    head_dim: Annotated[int, Field(ge=1, le=4096)]
    intermediate_size: Annotated[int, Field(ge=1, le=10_000_000)]
    vocab_size: Annotated[int, Field(ge=1, le=10_000_000)]
    tie_word_embeddings: bool = False
    qkv_bias: bool = False
    norms_per_layer: Annotated[int, Field(ge=0, le=8)] = 2
    max_position_embeddings: Annotated[int, Field(ge=1, le=100_000_000)]
    sliding_window: Annotated[int, Field(ge=1, le=100_000_000)] | None = None
    num_sliding_layers: NonNegInt = 0
    moe: MoEConfig | None = None
    mla: MLAConfig | None = None
    source: str = ""

    @model_validator(mode="after")
    def _cross_field(self) -> "ModelArch":
        if self.mla is None and self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(
                f"num_attention_heads ({self.num_attention_heads}) must be a multiple of "
                f"num_key_value_heads ({self.num_key_value_heads})"
            )
        if self.num_sliding_layers > self.num_hidden_layers:
            raise ValueError(
                f"num_sliding_layers ({self.num_sliding_layers}) must be <= num_hidden_layers ({self.num_hidden_layers})"
            )
        if self.num_sliding_layers and self.sliding_window is None:
            raise ValueError("num_sliding_layers > 0 needs sliding_window")
        if self.moe is not None and self.moe.first_dense_layers > self.num_hidden_layers:
            raise ValueError("moe.first_dense_layers must be <= num_hidden_layers")
        return self

    @property
    def attention_kind(self) -> str:
        """``MLA``, ``MHA``, ``MQA`` or ``GQA``."""
        if self.mla is not None:
            return "MLA"
        if self.num_key_value_heads == self.num_attention_heads:
            return "MHA"
        return "MQA" if self.num_key_value_heads == 1 else "GQA"


class GPUSpec(_Frozen):
    """One accelerator's datasheet numbers (dense tensor-core peaks), SI units."""

    id: Annotated[str, Field(min_length=1, max_length=100)]
    name: str
    vendor: Literal["nvidia", "amd", "other"] = "nvidia"
    architecture: str = ""
    memory_as_sold_bytes: Annotated[float, Field(gt=0)]
    usable_memory_bytes: Annotated[float, Field(gt=0)]
    hbm_bw_bytes_per_s: Annotated[float, Field(gt=0)]
    fp16_flops_per_s: Annotated[float, Field(gt=0)]
    bf16_flops_per_s: Annotated[float, Field(gt=0)]
    fp8_flops_per_s: Annotated[float, Field(gt=0)] | None = None
    int8_ops_per_s: Annotated[float, Field(gt=0)] | None = None
    int4_ops_per_s: Annotated[float, Field(gt=0)] | None = None
    tf32_flops_per_s: Annotated[float, Field(gt=0)] | None = None
    interconnect: str = ""
    interconnect_bw_bytes_per_s: Annotated[float, Field(gt=0)]
    price_usd_per_hour: Annotated[float, Field(gt=0)] | None = None
    price_source: str | None = None
    tdp_w: float | str | None = None
    sources: list[str] = Field(default_factory=list)
    uncertain: list[str] = Field(default_factory=list)
    notes: str = ""

    def peak_flops_per_s(self, precision: str) -> float:
        """Dense peak for ``fp16``/``bf16``/``fp8``/``int8``/``tf32``; falls back to 16-bit."""
        value = {
            "fp16": self.fp16_flops_per_s,
            "bf16": self.bf16_flops_per_s,
            "fp8": self.fp8_flops_per_s,
            "int8": self.int8_ops_per_s,
            "tf32": self.tf32_flops_per_s,
        }.get(precision)
        return float(value if value else self.fp16_flops_per_s)


MAX_GPUS = 1024


class ServingConfig(_Frozen):
    """vLLM engine options (names and defaults as ``vllm serve``), plus the load.

    ``max_model_len`` None means the model's ``max_position_embeddings``;
    ``max_num_batched_tokens`` None means vLLM's default for the GPU (see
    :func:`calc.scenario.default_max_num_batched_tokens`).
    """

    tensor_parallel_size: Annotated[int, Field(ge=1, le=MAX_GPUS)] = 1
    dtype: Literal[DTYPES] = "auto"  # type: ignore[valid-type]
    quantization: Literal[QUANTIZATIONS] = "none"  # type: ignore[valid-type]
    kv_cache_dtype: Literal[KV_CACHE_DTYPES] = "auto"  # type: ignore[valid-type]
    gpu_memory_utilization: Annotated[float, Field(gt=0.0, le=1.0)] = 0.9
    block_size: Literal[1, 8, 16, 32, 64, 128] = 16
    max_model_len: Annotated[int, Field(ge=1, le=100_000_000)] | None = None
    max_num_seqs: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    max_num_batched_tokens: Annotated[int, Field(ge=1, le=100_000_000)] | None = None
    enable_chunked_prefill: bool = True
    # The load: C clients (None = as many as fit), prompt and output lengths.
    input_len: Annotated[int, Field(ge=1, le=100_000_000)] = 1024
    output_len: Annotated[int, Field(ge=1, le=100_000_000)] = 256
    concurrency: Annotated[int, Field(ge=1, le=1_000_000)] | None = 1

    @model_validator(mode="after")
    def _cross_field(self) -> "ServingConfig":
        if self.max_model_len is not None and self.input_len + self.output_len > self.max_model_len:
            raise ValueError(
                f"input_len + output_len ({self.input_len + self.output_len}) must be <= max_model_len ({self.max_model_len})"
            )
        return self


class Efficiency(_Frozen):
    """Achievable fractions of the datasheet peaks and fixed costs: explicit, named assumptions.

    Defaults and their evidence: ``calc/efficiency.py`` and ``bench/calibration_report.py``.
    """

    hbm_bw_fraction: Annotated[float, Field(gt=0.0, le=1.0)] = 0.80
    prefill_flops_fraction: Annotated[float, Field(gt=0.0, le=1.0)] = 0.70
    decode_flops_fraction: Annotated[float, Field(gt=0.0, le=1.0)] = 0.55
    gemm_half_saturation_tokens: Annotated[float, Field(ge=0.0, le=100_000.0)] = 64.0
    step_overhead_s: Annotated[float, Field(ge=0.0, le=1.0)] = 1.0e-3
    allreduce_latency_s: Annotated[float, Field(ge=0.0, le=1.0)] = 10.0e-6
    interconnect_bw_fraction: Annotated[float, Field(gt=0.0, le=1.0)] = 0.70
    non_torch_overhead_bytes: Annotated[float, Field(ge=0.0, le=1e12)] = 1.0 * 2**30
    nccl_overhead_bytes: Annotated[float, Field(ge=0.0, le=1e12)] = 1.8 * 2**30
    activation_live_hidden_buffers: Annotated[float, Field(ge=0.0, le=64.0)] = 4.0


def describe_validation_error(err: ValidationError) -> str:
    """One line per problem: ``field: message (got value)``.

    >>> try:
    ...     ServingConfig(gpu_memory_utilization=1.5)
    ... except ValidationError as e:
    ...     print(describe_validation_error(e))
    gpu_memory_utilization: Input should be less than or equal to 1 (got 1.5)
    """
    lines = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e.get("loc", ())) or "input"
        msg = e.get("msg", "invalid value").removeprefix("Value error, ")
        got = e.get("input")
        shown = "" if isinstance(got, dict) or e.get("type") == "value_error" else f" (got {got!r})"
        lines.append(f"{loc}: {msg}{shown}")
    return "; ".join(lines)
