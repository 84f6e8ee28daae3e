"""Pydantic input models: the validated boundary of the calculator.

Models are frozen and forbid unknown fields. Constraints live in the types; cross-field rules
are validators. A bad value raises ``pydantic.ValidationError`` whose message names the field
and the allowed range; :func:`describe_validation_error` turns it into one readable line.
Inside ``calc`` the formulas take plain numbers or NumPy arrays, never these models.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from calc.spec.precision import (DTYPES, KV_CACHE_DTYPES, QUANTIZATIONS, canonical_kv_cache_dtype,
                                 canonical_quantization)
from calc.spec.untrusted import HugeInt, quote

# The shortest context (tokens per request) the calculator handles, UI and CLI alike: a model whose
# max_position_embeddings is below it is refused when its config.json is read.
MIN_CONTEXT_TOKENS = 16

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
    # Every ``layer_step``-th layer after the dense ones is MoE, the others dense (Llama 4 Maverick's
    # interleave_moe_layer_step 2: layers 1, 3, 5 ...): (L - first_dense_layers) // layer_step MoE layers.
    layer_step: Annotated[int, Field(ge=1, le=10_000)] = 1
    # Biases on every expert's gate/up (2·I_e) and down (h) projections (gpt-oss).
    expert_bias: bool = False

    def num_moe_layers(self, num_layers: int) -> int:
        """MoE layers of an L-layer model: (L − first_dense_layers) // layer_step.

        >>> MoEConfig(num_experts=128, experts_per_token=1, expert_intermediate_size=8192, layer_step=2).num_moe_layers(48)
        24
        """
        return (num_layers - self.first_dense_layers) // self.layer_step

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
    max_position_embeddings: Annotated[int, Field(ge=MIN_CONTEXT_TOKENS, le=100_000_000)]
    sliding_window: Annotated[int, Field(ge=1, le=100_000_000)] | None = None
    num_sliding_layers: NonNegInt = 0
    moe: MoEConfig | None = None
    mla: MLAConfig | None = None
    source: str = ""
    # The quantization a checkpoint ships in (its config.json ``quantization_config``), e.g.
    # DeepSeek-V3's FP8 weights; vLLM uses it when --quantization is not given ("auto").
    checkpoint_quantization: Annotated[Literal["fp8", "int8", "awq", "gptq", "bitsandbytes", "mxfp4", "modelopt_fp4"] | None,
                                       BeforeValidator(canonical_quantization)] = None
    # Mixed checkpoints: decoder layers whose attention / MLP linears the quantization_config
    # leaves unquantized (its ignore / ignored_layers / modules_to_not_convert list).
    unquantized_attention_layers: tuple[int, ...] = ()
    unquantized_mlp_layers: tuple[int, ...] = ()
    # Per-head RMSNorm on queries and keys (Qwen3, Gemma 3): 2 · head_dim weights per layer.
    qk_norm: bool = False
    # Parameters outside the decoder (e.g. a vision encoder vLLM also loads), in the model dtype.
    extra_params: NonNegInt = 0
    # gpt-oss: a bias on the output projection (h per layer) and one learned attention-sink logit
    # per query head per layer (H_q), both counted with the attention parameters.
    o_bias: bool = False
    attention_sinks: bool = False
    # What the windowed layers do: "sliding" (the last W tokens) or "chunked" (Llama 4's chunked
    # local attention: tokens of the current W-token chunk only). Both cap a layer's KV near W.
    local_attention: Literal["sliding", "chunked"] = "sliding"

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
    # Dense FP4 tensor-core peak (NVFP4 / MXFP4 MMA): Blackwell and CDNA4; None where there is none.
    fp4_flops_per_s: Annotated[float, Field(gt=0)] | None = None
    # Dense FP16-in, FP16-ACCUMULATE tensor rate where it differs from fp16_flops_per_s (the FP32-accumulate
    # rate): GeForce cards run it at twice that rate (calc.timing.engine_profile); None = the same rate.
    fp16_accumulate_flops_per_s: Annotated[float, Field(gt=0)] | None = None
    interconnect: str = ""
    interconnect_bw_bytes_per_s: Annotated[float, Field(gt=0)]
    # Which link a TP group's all-reduce crosses (calc.timing.interconnect.allreduce_link):
    # switch (NVSwitch), mesh (fully connected peer links), bridge_pairs (2-GPU bridge, PCIe
    # beyond), pcie. One-direction bytes/s, like interconnect_bw_bytes_per_s.
    link_topology: Literal["switch", "mesh", "bridge_pairs", "pcie"] = "switch"
    link_peer_bw_bytes_per_s: Annotated[float, Field(gt=0)] | None = None
    pcie_bw_bytes_per_s: Annotated[float, Field(gt=0)] | None = None
    p2p: bool = True  # GPU peer-to-peer access (vLLM's custom all-reduce needs it)
    price_usd_per_hour: Annotated[float, Field(gt=0)] | None = None
    price_source: str | None = None
    tdp_w: float | str | None = None
    # CUDA compute capability (major.minor, e.g. 10.0 datacenter Blackwell, 12.0 GeForce / RTX PRO
    # Blackwell): which vLLM kernels exist (the NVFP4 KV cache is gated to SM100). None: not recorded.
    compute_capability: Annotated[float, Field(ge=1.0, le=99.0)] | None = None
    # Streaming multiprocessors (compute units): rows of vLLM's Triton top-k/top-p scratch buffer.
    sm_count: Annotated[int, Field(ge=1, le=100_000)] | None = None
    sources: list[str] = Field(default_factory=list)
    uncertain: list[str] = Field(default_factory=list)
    notes: str = ""

    def peak_flops_per_s(self, precision: str) -> float:
        """Dense peak for ``fp16``/``bf16``/``fp8``/``int8``/``tf32``/``fp4``; falls back to 16-bit."""
        value = {
            "fp4": self.fp4_flops_per_s,
            "fp16": self.fp16_flops_per_s,
            "bf16": self.bf16_flops_per_s,
            "fp8": self.fp8_flops_per_s,
            "int8": self.int8_ops_per_s,
            "tf32": self.tf32_flops_per_s,
        }.get(precision)
        return float(value if value else self.fp16_flops_per_s)


class CustomGPU(_Frozen):
    """A user-defined GPU in the units datasheets print (GiB, TB/s, dense TFLOPS, GB/s, $/h).

    Every GPU number the calculator uses, nothing more: memory (what CUDA reports, GiB),
    memory bandwidth, dense tensor-core peaks (the 16-bit one for FP16 and BF16; FP8, INT8 and FP4
    optional: without them FP8/INT8/NVFP4 weights run at the 16-bit rate, as on Ampere), the
    one-direction per-GPU link bandwidth a TP all-reduce uses at every TP size (an NVSwitch-like
    link; give the PCIe figure for PCIe-only cards), and an optional price.
    """

    name: Annotated[str, Field(min_length=1, max_length=60)] = "Custom GPU"
    memory_gib: Annotated[float, Field(gt=0.0, le=4096.0)]
    hbm_tb_per_s: Annotated[float, Field(gt=0.0, le=100.0)]
    bf16_tflops: Annotated[float, Field(gt=0.0, le=100_000.0)]
    fp8_tflops: Annotated[float, Field(gt=0.0, le=200_000.0)] | None = None
    int8_tops: Annotated[float, Field(gt=0.0, le=200_000.0)] | None = None
    fp4_tflops: Annotated[float, Field(gt=0.0, le=400_000.0)] | None = None
    link_gb_per_s: Annotated[float, Field(gt=0.0, le=100_000.0)]
    price_usd_per_hour: Annotated[float, Field(gt=0.0, le=10_000.0)] | None = None

    def to_gpu_spec(self) -> "GPUSpec":
        """The :class:`GPUSpec` the calculator takes: SI units (GiB × 2^30 bytes, TB/s × 1e12,
        TFLOPS × 1e12, GB/s × 1e9), link topology ``switch`` with P2P.

        >>> g = CustomGPU(memory_gib=80, hbm_tb_per_s=3.35, bf16_tflops=989.4, link_gb_per_s=450).to_gpu_spec()
        >>> g.usable_memory_bytes == 80 * 2**30, g.hbm_bw_bytes_per_s, g.fp8_flops_per_s
        (True, 3350000000000.0, None)
        """
        link = self.link_gb_per_s * 1e9
        return GPUSpec(
            id="custom", name=self.name, vendor="other", architecture="custom",
            memory_as_sold_bytes=self.memory_gib * 2**30, usable_memory_bytes=self.memory_gib * 2**30,
            hbm_bw_bytes_per_s=self.hbm_tb_per_s * 1e12,
            fp16_flops_per_s=self.bf16_tflops * 1e12, bf16_flops_per_s=self.bf16_tflops * 1e12,
            fp8_flops_per_s=None if self.fp8_tflops is None else self.fp8_tflops * 1e12,
            int8_ops_per_s=None if self.int8_tops is None else self.int8_tops * 1e12,
            fp4_flops_per_s=None if self.fp4_tflops is None else self.fp4_tflops * 1e12,
            interconnect=f"user-defined link, {self.link_gb_per_s:g} GB/s per direction",
            interconnect_bw_bytes_per_s=link, link_topology="switch", pcie_bw_bytes_per_s=link, p2p=True,
            price_usd_per_hour=self.price_usd_per_hour,
            price_source="user-defined" if self.price_usd_per_hour is not None else None,
            sources=["user-defined"], uncertain=[], notes="A GPU defined by the user.")


MAX_GPUS = 1024


def _dtype_alias(value: object) -> object:
    """Accept vLLM's short spellings (fp16, half, bf16, fp32) for ``dtype``."""
    aliases = {"fp16": "float16", "half": "float16", "bf16": "bfloat16", "fp32": "float32", "float": "float32"}
    return aliases.get(value, value) if isinstance(value, str) else value


class ServingConfig(_Frozen):
    """vLLM engine options (names and defaults as ``vllm serve``), plus the load.

    ``max_model_len`` None means the model's ``max_position_embeddings``;
    ``max_num_batched_tokens`` None means vLLM's default for the GPU (see
    :func:`calc.sizing.scenario.default_max_num_batched_tokens`).
    """

    tensor_parallel_size: Annotated[int, Field(ge=1, le=MAX_GPUS)] = 1
    # Multi-GPU layout beyond TP (vLLM's flags; calc.spec.parallelism checks the combination):
    # --pipeline-parallel-size (layers split into stages), --data-parallel-size (engine replicas;
    # with MoE they step together and attention runs per rank), --enable-expert-parallel (routed
    # experts sharded over TP × DP ranks instead of sliced by TP), and the nodes the GPUs span
    # (None = as few as hold TP × PP × DP GPUs, calc/data/nodes.json).
    pipeline_parallel_size: Annotated[int, Field(ge=1, le=MAX_GPUS)] = 1
    data_parallel_size: Annotated[int, Field(ge=1, le=MAX_GPUS)] = 1
    enable_expert_parallel: bool = False
    nodes: Annotated[int, Field(ge=1, le=MAX_GPUS)] | None = None
    dtype: Annotated[Literal[DTYPES], BeforeValidator(_dtype_alias)] = "auto"  # type: ignore[valid-type]
    # Old spellings (nf4; fp16/bf16/int8 KV) are read as vLLM's (calc.spec.precision aliases).
    # "auto" = the checkpoint's own format (config.json quantization_config), as vLLM does when
    # --quantization is not given; "none" forces the unquantized dtype.
    quantization: Annotated[Literal[QUANTIZATIONS], BeforeValidator(canonical_quantization)] = "auto"  # type: ignore[valid-type]
    kv_cache_dtype: Annotated[Literal[KV_CACHE_DTYPES], BeforeValidator(canonical_kv_cache_dtype)] = "auto"  # type: ignore[valid-type]
    gpu_memory_utilization: Annotated[float, Field(gt=0.0, le=1.0)] = 0.9
    block_size: Literal[1, 8, 16, 32, 64, 128] = 16
    max_model_len: Annotated[int, Field(ge=1, le=100_000_000)] | None = None
    max_num_seqs: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    max_num_batched_tokens: Annotated[int, Field(ge=1, le=100_000_000)] | None = None
    enable_chunked_prefill: bool = True
    # vLLM --disable-custom-all-reduce: every TP all-reduce through NCCL (calc.timing.interconnect).
    disable_custom_all_reduce: bool = False
    # vLLM line whose profile run is modelled (the sampler warm-up changed between them; see
    # calc.sizing.memory.sampler_bytes_per_logit).
    vllm_version: Literal["0.19", "0.15"] = "0.19"
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

    The same defaults serve every scenario; they were chosen from the sources below and checked
    against the 49 published measurements in ``bench/data`` (``bench/calibration_report.py``:
    median |error| ≈ 7 % on the high/medium-confidence rows; a grid of plausible values around
    these defaults stays within 7–11 %, so they are not a knife-edge fit). Descriptions double as
    UI tooltips.
    """

    hbm_bw_fraction: Annotated[float, Field(gt=0.0, le=1.0, description=(
        "Achievable fraction of datasheet HBM bandwidth for weight/KV streaming. Sources: kipply "
        "(FasterTransformer matmuls 'up to about 90%', end-to-end 76%), Databricks MBU 55-60% "
        "end-to-end; calibration rows pm-057..059 (LMDeploy batch-1 TPOT)."))] = 0.80
    prefill_flops_fraction: Annotated[float, Field(gt=0.0, le=1.0, description=(
        "Achievable fraction of dense tensor-core peak for large prefill GEMMs and prefill "
        "attention in vLLM. vLLM 0.11, Qwen3-14B bursts of 2,000-4,000-token prompts on one "
        "A100 (gpustack performance lab) ran 13-23% slower than 0.7 predicts, 0.55-0.6 fits "
        "them; TensorRT-LLM's fused kernels reach 0.7 (its 128-2048-token TTFT rows, kipply 72% "
        "MLP at 512 tokens, PaLM prefill MFU 76%). On GeForce cards the GeForce fraction below replaces it."))] = 0.60
    decode_flops_fraction: Annotated[float, Field(gt=0.0, le=1.0, description=(
        "Achievable fraction of peak in decode-only steps (GEMMs at large batch, paged "
        "attention). Matters only once decode turns compute-bound (large batches). vLLM runs the "
        "same GEMMs as in prefill, so the same 0.6; TensorRT-LLM's large-batch rows (pm-008, "
        "pm-011) sit near 0.7. On GeForce cards the GeForce fraction below replaces it."))] = 0.60
    hopper_flops_scale: Annotated[float, Field(gt=0.0, le=1.0, description=(
        "vLLM's share of the FLOP fractions above on Hopper GPUs (H100, H200, GH200): its kernels "
        "reach less of Hopper's datasheet peak than of Ampere's. vLLM 0.11, Qwen3-14B bursts on one "
        "H100 SXM ran 1.6-1.8x slower than the physics that matches the same runs on A100 and "
        "TensorRT-LLM's H100 rows (gpustack performance lab; TensorRT-LLM performance.md pm-003..013); "
        "0.5-0.65 all fit that contrast, 0.6 is taken. Not applied to TensorRT-LLM or LMDeploy; llama.cpp's "
        "profile sets its own 0.6 from its H100/A100 contrast (calc.timing.engine_profile)."))] = 0.6
    geforce_flops_fraction: Annotated[float, Field(gt=0.0, le=1.0, description=(
        "Achievable fraction of the tensor-core peak for vLLM's 16-bit GEMMs (prefill and decode) on GeForce "
        "cards (RTX 3090, 4090, 5090), in place of the two fractions above. Their FP32-accumulate rate, the "
        "one these kernels run at, is half the tensor cores' FP16-accumulate rate (GA102/AD102 whitepapers), "
        "so an SM does a quarter of an A100 SM's tensor work per clock (4090: 512 FLOPs per SM per clock, "
        "A100: 2,048, H100: 4,096) while loads, softmax and epilogues run at full speed beside it: the "
        "capped MMA rate is nearly all that binds. PyTorch BF16 matmul on an RTX 4090 measures 151-165 "
        "TFLOP/s of the 165.2 datasheet (zzc0721/torch-performance-test-data #78; mli/transformers-benchmarks "
        "#4: FP16 167), where an A100 reaches about 0.87 of its 312. Chosen on public vLLM runs on RTX 4090 "
        "and 3090 (bench/data/geforce_found.jsonl: 0.6 leaves them 28 % off, median; see "
        "calc.timing.engine_profile.gemm_flops_fractions)."))] = 0.85
    ampere_moe_flops_scale: Annotated[float, Field(gt=0.0, le=1.0, description=(
        "vLLM's share of the FLOP fractions above for 16-bit routed-expert GEMMs (its Triton "
        "fused_moe kernel) on Ampere GPUs. vLLM 0.11 bursts on A100 SXM (gpustack performance lab): "
        "Qwen3-235B-A22B at TP 8 ran 1.3-1.6x slower than the physics that matches the same runs on "
        "H100 and dense Qwen3-14B/32B on the same A100s; 0.4-0.45 fits them, 0.4 is taken. Checked "
        "on GLM-4.5-Air at TP 4 on A100 (bench/data/moe_ampere_found.jsonl). Not a tuning-file gap: "
        "vLLM has shipped a tuned A100 config for this shape since PR #17328 (2025-04)."))] = 0.4
    fp16_accumulate_share: Annotated[float, Field(ge=0.0, le=1.0, description=(
        "Share of the 16-bit GEMM work an engine runs with FP16 accumulation. GeForce tensor cores "
        "(RTX 3090/4090/5090) run FP16-accumulate at twice the FP32-accumulate rate the catalog's "
        "fp16/bf16 peaks hold (GA102/AD102 whitepapers); datacenter and professional cards run both at "
        "one rate, so this changes nothing there. vLLM and TensorRT-LLM accumulate in FP32: 0. "
        "llama.cpp's F16 prompt path (ggml_cuda_op_mul_mat_cublas, default precision) calls "
        "cublasGemmEx with CUBLAS_COMPUTE_16F: 1 (calc.timing.engine_profile). On a GeForce card that share "
        "runs at the prefill / decode fractions of the FP16-accumulate peak and the rest at the GeForce "
        "fraction, continuously between the two (calc.timing.engine_profile.gemm_flops_fractions)."))] = 0.0
    mxfp4_moe_half_saturation_rows: Annotated[float, Field(ge=0.0, le=100_000.0, description=(
        "Rows per expert at which vLLM's MXFP4 routed-expert GEMM reaches half its achievable rate on "
        "GPUs without FP4 tensor cores (Hopper: triton_kernels matmul_ogs; Ampere, Ada: Marlin MoE), "
        "in place of the GEMM half-saturation below. Both kernels upcast the weights to BF16 in "
        "registers and run ALL experts of a layer in ONE launch, so the SMs fill across experts and an "
        "expert's few rows cost only their padding to the M tile: matmul_ogs block_m = max(16, "
        "next_pow2(rows)) (triton-lang/triton triton_kernels/matmul_ogs_details/opt_flags.py), Marlin "
        "8-64 (vLLM fused_marlin_moe.py); 16 is taken. gpt-oss-120b, llm-d P/D decode pool (TP 4, ~50 "
        "sequences, H100): TPOT 9.2 ms, predicted 20 ms with the dense 64, 12 ms with 16 (14 ms with "
        "moe_layer_fixed_s below); gpustack "
        "bursts on H100 and A100 (bench/data/gptoss_found.jsonl, bench/gptoss_check.py)."))] = 16.0
    triton_attention_prefill_fraction: Annotated[float, Field(gt=0.0, le=1.0, description=(
        "Share of FlashAttention's prompt-attention FLOP rate that vLLM's TRITON_ATTN backend reaches. "
        "vLLM 0.11 picks it on Ampere and Ada for models with attention sinks (gpt-oss) or an FP8 KV "
        "cache, where FlashAttention 2 has neither (vllm/platforms/cuda.py; vLLM recipes GPT-OSS.md, "
        "A100); Hopper runs FlashAttention 3, Blackwell FlashInfer. Its unified kernel gives each "
        "program 16 query rows and re-reads every key tile for them (8 KiB of K/V per 131,072 MMA "
        "FLOPs, the same for gpt-oss in v0.11.0 as for an 8B Llama in v0.9.0). vLLM issue #18152: an "
        "8,192-token prefill on A100 took 1,500 ms with it against 600 ms with the older kernel (600 ms is "
        "an 8B dense model's prefill: 2 x 7e9 x 8,192 FLOPs at 0.6 of 312 TFLOP/s; Llama-3.1-8B's "
        "attention, 1.76e13 causal FLOPs, takes 94 ms there). 94 + 900 ms for 2 x 1.76e13 FLOPs "
        "processed (v0.9's kernel ran every query block to the sequence's end; PR #20308 added the "
        "causal tile skip v0.11.0 has) is 35 TFLOP/s, 0.113 of peak: 0.113 / 0.6 = 0.19 "
        "(calc.timing.attention_backend)."))] = 0.19
    triton_attention_decode_fraction: Annotated[float, Field(gt=0.0, le=1.0, description=(
        "Share of FlashAttention's decode KV-read rate that vLLM's TRITON_ATTN backend reaches (where "
        "vLLM picks it: see the prefill fraction above). Its kernel reads each sequence's cached keys "
        "once per KV head, in 16-32-key tiles, as FlashAttention's paged decode does; no published "
        "measurement of vLLM 0.11's kernel against FlashAttention at decode on Ampere was found (vLLM "
        "PR #30191's decode timings have no FlashAttention column and sit on ~0.2 ms launch floors), "
        "so 1 is kept."))] = 1.0
    moe_layer_fixed_s: Annotated[float, Field(ge=0.0, le=0.01, description=(
        "Fixed GPU time of one MoE layer per engine step, beyond its weight bytes / (HBM bandwidth x "
        "the fraction above): the fused-MoE kernel sequence (top-k, expert alignment, two grouped GEMMs "
        "over few rows per expert, activation, sum) has an execution floor that CUDA graphs do not "
        "remove and a faster HBM does not shorten. vLLM benchmark_moe.py (CUDA graph, 10 calls per "
        "replay), batch 1, minus the bytes term: Qwen3-30B-A3B FP8 H100 40.4 us - 14.1 = 26 us (vLLM PR "
        "#24700); Qwen3-Next-80B FP8 TP 4 H100 29.5 - 2.9 = 27 us (vLLM PR #44830); Qwen3-235B FP8 TP 8 "
        "H200 31.7 - 4.9 = 27 us (SGLang PR #11730); Mixtral-8x7B BF16 TP 2 H100 144.0 - 131.4 = 13 us "
        "(vLLM PR #24700). 25 us is taken (calc.timing.moe_kernels.moe_fixed_time_s)."))] = 25.0e-6
    mla_layer_fixed_s: Annotated[float, Field(ge=0.0, le=0.01, description=(
        "Fixed time of one MLA decoder layer (DeepSeek-V2/V3/R1, Kimi-K2) per vLLM engine step, beyond "
        "its bytes, the MoE floor above and its all-reduces: the absorbed-MLA decode path runs ~12 "
        "kernels where GQA runs ~5, every block-FP8 linear adds an activation-quantization kernel, and "
        "DeepSeek's grouped top-k router and shared expert add their own; each has a floor that CUDA "
        "graphs and a faster HBM do not remove. vLLM on 8 x H200 at TP 8: DeepSeek-R1-0528, one "
        "request, TPOT 15.85 ms where the rest of the step is 5.5 ms (vLLM recipes, 170 us per layer); "
        "DeepSeek-V3.1, 16 clients decoding: 684 output tokens/s where 1,058 were predicted (vLLM PR "
        "#28992, 132 us per layer); flat in the batch (bench/data/mla_moe_lowbatch_found.jsonl, "
        "bench/mla_layer_check.py; 150 us taken, calc.timing.mla_layers). Not for other engines."))] = 150.0e-6
    gemm_half_saturation_tokens: Annotated[float, Field(ge=0.0, le=100_000.0, description=(
        "Rows per GPU (tokens / TP) at which a GEMM reaches half its achievable rate "
        "(tile/wave quantization). Sarathi-Serve: prefill throughput saturates near 512 "
        "tokens; TRT-LLM 128-token TTFT rows."))] = 64.0
    step_overhead_s: Annotated[float, Field(ge=0.0, le=1.0, description=(
        "Fixed time per engine step: scheduling, sampling, kernel launches (CPU side)."))] = 1.5e-3
    sequence_overhead_s: Annotated[float, Field(ge=0.0, le=0.1, description=(
        "Engine CPU time per sequence in a step (scheduler, input preparation, sampling, output "
        "processing), added to the step: vLLM 0.11 runs it between GPU steps (async scheduling "
        "is off by default), so it does not shrink on a faster GPU. vLLM 0.11, Qwen3-8B on H100, "
        "ShareGPT closed loops: TPOT rises 0.43 ms from 1 to 8 clients where the GPU work adds "
        "0.17 ms, i.e. 37 us per extra sequence (gpustack performance lab)."))] = 35.0e-6
    api_server_request_s: Annotated[float, Field(ge=0.0, le=10.0, description=(
        "Time vLLM's OpenAI API server (one process) spends on each request: HTTP, chat template, "
        "tokenization, the hand-off to the engine. It adds once to TTFT, a burst waits for it, and it "
        "caps the server at 1 / this requests/s whatever the GPU. Requests that arrive together take "
        "turns (api_server_final_share), not one after another. vLLM 0.11, Qwen3-14B on H100: "
        "1,000 chat requests of 128 in / 4 out at once ran at 43.9 requests/s (gpustack performance "
        "lab); with that turn-taking the run's length gives 14.5 ms each (first come first served "
        "read it as 22.8 ms). 0 for offline runs (LLM class)."))] = 14.5e-3
    api_server_final_share: Annotated[float, Field(ge=0.0, le=1.0, description=(
        "Share of api_server_request_s that a request's task runs after its last wait (the tokenizer's "
        "thread), i.e. the hand-off. vLLM's API server is one asyncio event loop: a task runs until it "
        "awaits, then every other ready task runs its next piece, so requests that arrive together "
        "advance together. vLLM 0.11's chat endpoint renders the chat template in the loop, then awaits "
        "the tokenizer (a one-thread executor, serving_engine.py _tokenizer_executor), then builds and "
        "sends the engine request: a burst of N leaves the loop after N · (1 - f) · t, then one every f · t "
        "(calc.traffic.simulator.frontend_entry_s). 1 = first come first served. Chosen on the calibration "
        "set's gpustack bursts among 0, 0.1, 0.2, 0.33, 0.5 and 1 (api_server_request_s refitted on the "
        "same run each time): 0.2 and 0.33 gave the smallest median error (4.4 %, first come first served "
        "5.2 %); 0.2 taken: the hand-off is the smaller part of a chat request (the Harmony path, mostly "
        "hand-off, takes 4.7 ms where the chat path took 22.8, both read one after another: 0.21). It moved the 128-in / 4-out bursts' TPOT from -97 % to +10 % (Qwen3-14B, "
        "H100): the requests reach the engine together and their decodes share steps with the others' "
        "prefill chunks. The same for a Harmony model (gpt-oss), refitted on its own run (api_server_harmony_"
        "request_s). Not for the completions endpoint (no chat template; its tokenization, in the thread, "
        "sets the order): calc.cli.measured asks such rows with 1."))] = 0.2
    api_server_harmony_request_s: Annotated[float, Field(ge=0.0, le=10.0, description=(
        "The API server's time per chat request, in place of the one above, for a model whose chat format "
        "is OpenAI Harmony (gpt-oss): vLLM renders its conversation with openai_harmony (Rust) straight "
        "into token ids and skips _preprocess_chat, the Hugging Face chat template's jinja rendering and "
        "the tokenizer call every other model's request goes through (vllm/entrypoints/openai/"
        "serving_chat.py, 'if not self.use_harmony'). gpt-oss-20b on one H100, 1,000 chat requests of "
        "128 in / 4 out at once: 212.4 requests/s (gpustack performance lab, vLLM 0.11.0), 4.7 ms each, "
        "where Qwen3-14B on the same lab's H100 took 22.8 ms (both read one after another; with "
        "api_server_final_share's turn-taking the same run gives 2.5 ms, Qwen3-14B's 14.5). Checked on runs it "
        "was not chosen on: gpt-oss-20b on A100 183.8 requests/s, gpt-oss-120b on H100 with vLLM 0.10.2 "
        "129.2, and the same hosts' ShareGPT bursts (bench/data/gptoss_found.jsonl, "
        "vllm_found_2026_12.jsonl; calc.timing.engine_profile.api_server_request_time_s)."))] = 2.5e-3
    request_overhead_s: Annotated[float, Field(ge=0.0, le=10.0, description=(
        "Latency per request outside the engine steps that occupies nobody: the client's HTTP round "
        "trip, the first streamed chunk, the hand-off to the engine (the course's pitfall 4, CPU-side "
        "overhead). Added once to TTFT and E2E. vLLM 0.11's OpenAI chat endpoint, Qwen3-8B on H100, "
        "one client: TTFT 59.0 ms, of which the prefill and the step in flight take 14.5 ms (calc.timing) and "
        "the API server's own time 14.5 ms (api_server_request_s): 30 ms (28 ms when the API server's time "
        "was read as 22 ms; 2 ms of it is an engine's own hand-off without HTTP: TensorRT-LLM batch-1 "
        "rows pm-001/003/057 put that at a few ms; use 2 ms for offline runs)."))] = 30.0e-3
    allreduce_latency_s: Annotated[float, Field(ge=0.0, le=1.0, description=(
        "Latency term alpha of one NCCL all-reduce (two per layer under TP; used where vLLM's "
        "custom all-reduce is not: no P2P, PCIe at TP > 2, messages of 8 MiB and more, or where "
        "NCCL is faster). kipply measured 40-50 us of communication per layer (13B, TP 2, A100), "
        "i.e. 20-25 us per all-reduce; the 2023 Databricks TP 1/2/4 TTFT rows imply far more; "
        "50 us sits between."))] = 50.0e-6
    custom_allreduce_latency_s: Annotated[float, Field(ge=0.0, le=1.0, description=(
        "Latency term of vLLM's custom all-reduce (one-shot/two-shot P2P kernel, NVLink/xGMI "
        "or 2 GPUs with P2P, messages < 8 MiB). vLLM's kernel on H100 took 8.5-10.1 us for "
        "512 B-32 KB at TP 2/4/8 (sglang PR #2904 table, without CUDA graphs); vLLM PR #2192."))] = 8.0e-6
    rocm_custom_allreduce_latency_s: Annotated[float, Field(ge=0.0, le=1.0, description=(
        "The custom all-reduce's latency term on AMD GPUs (vLLM's ROCm build, xGMI mesh), in place of "
        "the one above. Fitted: the calibration set's seven MI300X static batches (ROCm vLLM 0.10, "
        "Llama-3.1-70B FP8, TP 8, batch 1-128) ran 3.4 ms per step slower at batch 1 than the model "
        "with 8 us (160 all-reduces a step: about 21 us more each); 30 us gives their smallest median "
        "error (21.9 % -> 2.5 %). Kept back as the check: the same page's 16 Llama-3.1-405B runs (126 "
        "layers, bench/data/rocm_dev_docker_found.jsonl) 26.6 % -> 9.2 % median. Not measured on its own: a per-layer cost of ROCm's kernels at "
        "TP 8 would fit these runs as well; TP 1 on AMD takes no such cost here."))] = 30.0e-6
    custom_allreduce_bus_bw_bytes_per_s: Annotated[float, Field(gt=0.0, le=1e13, description=(
        "Bus bandwidth the custom all-reduce kernel reaches (it is SM- and sync-bound, far below "
        "NVLink): sglang PR #2904, vLLM's kernel on H100, 0.26-1 MiB messages: (t - 9 us) gives "
        "2(n-1)/n x S / t = 50-59 GB/s at TP 2/4/8. Capped by the link itself (x the link fraction)."))] = 50.0e9
    interconnect_bw_fraction: Annotated[float, Field(gt=0.0, le=1.0, description=(
        "Achievable fraction of the one-direction link bandwidth in the ring all-reduce "
        "(NCCL bus bandwidth)."))] = 0.70
    non_torch_overhead_bytes: Annotated[float, Field(ge=0.0, le=1e12, description=(
        "Memory outside PyTorch that vLLM's profile run adds at TP 1 (kernel images loaded "
        "lazily, cuBLAS handles). vLLM 0.18/0.19 logs on H100: 0.24-0.27 GiB (18 logs); "
        "0.15: 0.13 GiB; the old V0 engine logged 1.79 GiB."))] = 0.25 * 2**30
    nccl_overhead_bytes: Annotated[float, Field(ge=0.0, le=1e12, description=(
        "Extra non-torch memory at TP > 1 on all-to-all NVLink (NVSwitch) systems: NCCL's "
        "NVLink-SHARP buffers and vLLM's custom all-reduce IPC buffers. vLLM 0.19 logs on "
        "H100 SXM: +1.82 GiB at TP 2, +1.88 GiB at TP 4 (with the per-peer term). PCIe "
        "cards without NVSwitch do not pay it."))] = 1.79 * 2**30
    nccl_per_peer_bytes: Annotated[float, Field(ge=0.0, le=1e12, description=(
        "Non-torch memory per additional TP peer: NCCL's per-peer channel buffers "
        "(H100 SXM logs: TP 4 minus TP 2 = 0.06 GiB for 2 more peers)."))] = 0.03 * 2**30
    allocator_workspace_bytes: Annotated[float, Field(ge=0.0, le=1e12, description=(
        "cuBLAS/cuBLASLt workspaces PyTorch's allocator holds after the first GEMMs, counted "
        "in vLLM's torch peak: the 0.05 GiB residual every 0.19 H100 log shares once the "
        "sampler and forward terms are subtracted."))] = 0.05 * 2**30
    cuda_context_bytes: Annotated[float, Field(ge=0.0, le=1e12, description=(
        "CUDA context and kernel images, created before vLLM's memory snapshot: it lives in "
        "the (1 - gpu_memory_utilization) reserve, not in vLLM's budget. A few hundred MiB on "
        "current drivers with lazy module loading [estimate, not from a log]."))] = 0.5 * 2**30
    cuda_graph_bytes: Annotated[float, Field(ge=0.0, le=1e12, description=(
        "Memory of the captured CUDA graphs; vLLM logs 'took 0.21 GiB' (Llama-3.2-1B, PR "
        "#11349), 6-28 MiB per captured size (PRs #22897/#23184). Captured after the KV cache "
        "is allocated, so it must fit the reserve too."))] = 0.3 * 2**30
    activation_live_hidden_buffers: Annotated[float, Field(ge=0.0, le=64.0, description=(
        "Hidden-size activation buffers alive at the profiling peak (residual, norm output, "
        "attention output); physics.md A4 suggests 2-4."))] = 4.0
    expert_load_imbalance: Annotated[float, Field(ge=1.0, le=16.0, description=(
        "Expert parallelism: tokens on the busiest EP rank over the mean (the MoE layer waits for "
        "it). DeepSeek (V3 report, inference overview) and SGLang (EPLB docs) add redundant experts "
        "because routing is uneven; LMSYS's Waterfill/LPLB post (2026-06) finds that even with EPLB a "
        "batch still hits ranks unevenly and gains 1-7 % by trimming the busiest rank. 1.3 is an "
        "estimate [no published max/mean ratio for DeepSeek-V3 under EPLB was found]; the wide-EP "
        "rows of bench/data/wide_ep_measurements.jsonl stay within 6 % with it."))] = 1.3
    all_to_all_latency_s: Annotated[float, Field(ge=0.0, le=0.1, description=(
        "Fixed time of one EP all-to-all phase (dispatch or combine) per MoE layer. DeepEP "
        "README, low-latency kernels (H800, 128 tokens, hidden 7168, top-8): EP8 dispatch 77 us "
        "for 7.3 MB, EP16-EP128 118-192 us; their bytes at the link speed leave 30-40 us."))] = 35e-6
    scale_out_bw_fraction: Annotated[float, Field(gt=0.0, le=1.0, description=(
        "Achievable fraction of the scale-out NIC (InfiniBand/RoCE) in an EP all-to-all or a "
        "pipeline transfer. DeepEP README: 43-58 GB/s RDMA per GPU in its normal kernels and "
        "39-63 GB/s in its low-latency kernels on 400 Gb/s (50 GB/s) CX7: 0.9."))] = 0.9
    expert_parallel_buffer_bytes: Annotated[float, Field(ge=0.0, le=1e12, description=(
        "Non-torch memory of the EP all-to-all kernels per GPU: vLLM's DeepEP buffers, "
        "VLLM_DEEPEP_BUFFER_SIZE_MB = 1024 MiB of NVLink buffer, and as much again of RDMA "
        "buffer when EP spans nodes (vllm/distributed/device_communicators/all2all.py)."))] = 1.0 * 2**30


_RANGE_KEYS = (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<"))


@lru_cache(maxsize=None)
def _schema(model_name: str) -> dict:
    model = {m.__name__: m for m in (ServingConfig, Efficiency, ModelArch, MoEConfig, MLAConfig, GPUSpec,
                                     CustomGPU)}.get(model_name)
    return model.model_json_schema() if model is not None else {}


def _field_schema(schema: dict, loc: tuple) -> dict:
    """The JSON-schema node of the field at ``loc`` (nested models and Optional unwrapped)."""
    defs = schema.get("$defs", {})

    def resolve(node: dict) -> dict:
        if "$ref" in node:
            return resolve(defs.get(node["$ref"].split("/")[-1], {}))
        for option in node.get("anyOf", ()):
            if option.get("type") != "null":
                return resolve(option)
        return node

    node = schema
    for part in loc:
        node = resolve(node).get("properties", {}).get(str(part))
        if node is None:
            return {}
    return resolve(node)


def allowed_range(model_name: str, loc: tuple) -> str:
    """The numeric range a field allows, e.g. ``0 < gpu_memory_utilization <= 1``; '' if none.

    >>> allowed_range("ServingConfig", ("tensor_parallel_size",))
    '1 <= tensor_parallel_size <= 1024'
    >>> allowed_range("ModelArch", ("moe", "experts_per_token"))
    '1 <= moe.experts_per_token <= 256'
    """
    node = _field_schema(_schema(model_name), loc)
    bounds = {op: node[key] for key, op in _RANGE_KEYS if key in node}
    if not bounds:
        return ""
    name = ".".join(str(p) for p in loc)
    fmt = lambda v: f"{v:g}" if isinstance(v, float) else str(v)  # noqa: E731
    low = next((f"{fmt(v)} {'<=' if op == '>=' else '<'} " for op, v in bounds.items() if op in (">=", ">")), "")
    high = next((f" {op} {fmt(v)}" for op, v in bounds.items() if op in ("<=", "<")), "")
    return f"{low}{name}{high}"


def describe_validation_error(err: ValidationError) -> str:
    """One line for all problems: ``field: message (got value); allowed: range``, joined by '; '.

    Numeric fields add the full allowed range from the model's constraints, so both bounds are
    named even when only one was violated. Cross-field rules name their fields in the message.

    >>> try:
    ...     ServingConfig(gpu_memory_utilization=1.5)
    ... except ValidationError as e:
    ...     print(describe_validation_error(e))
    gpu_memory_utilization: Input should be less than or equal to 1 (got 1.5); allowed: 0 < gpu_memory_utilization <= 1
    >>> try:
    ...     ServingConfig(block_size=7)
    ... except ValidationError as e:
    ...     print(describe_validation_error(e))
    block_size: Input should be 1, 8, 16, 32, 64 or 128 (got 7)
    """
    lines = []
    for e in err.errors():
        loc_parts = tuple(e.get("loc", ()))
        loc = ".".join(str(p) for p in loc_parts)
        msg = e.get("msg", "invalid value").removeprefix("Value error, ")
        got = e.get("input")
        if e.get("type") == "int_parsing_size":  # pydantic's 'exceeded maximum size': a 5,000-digit number
            msg = "Input should be a whole number in the allowed range"
        got_text = quote(got) if isinstance(got, HugeInt) else repr(got)
        got_text = got_text if len(got_text) <= 60 or isinstance(got, HugeInt) else got_text[:57] + "..."
        shown = "" if isinstance(got, dict) or e.get("type") == "value_error" else f" (got {got_text})"
        rng = allowed_range(err.title, loc_parts) if loc_parts and e.get("type") != "value_error" else ""
        allowed = f"; allowed: {rng}" if rng else ""
        lines.append(f"{loc}: {msg}{shown}{allowed}" if loc else f"{msg}{shown}")
    return "; ".join(lines)


def as_input_error(err: ValidationError):
    """The first problem of a pydantic error as a structured :class:`~calc.spec.untrusted.InputError`
    (field, raw value, allowed range, reason ``range`` when the field has one, else ``invalid``);
    its ``detail`` keeps :func:`describe_validation_error`'s full line.

    >>> try:
    ...     ServingConfig(gpu_memory_utilization=1.5)
    ... except ValidationError as e:
    ...     print(as_input_error(e))
    gpu_memory_utilization: got 1.5, allowed 0 < gpu_memory_utilization <= 1
    """
    from calc.spec.untrusted import InputError  # noqa: PLC0415

    first = err.errors()[0] if err.errors() else {}
    loc = tuple(first.get("loc", ()))
    field = ".".join(str(p) for p in loc) or err.title
    rng = allowed_range(err.title, loc) if loc and first.get("type") != "value_error" else ""
    if rng and len(err.errors()) == 1:
        return InputError(field, first.get("input"), allowed=rng)
    line = describe_validation_error(err)
    return InputError(field, code="invalid", detail=line.removeprefix(f"{field}: "))
