"""Precisions: bytes per stored element and which tensor-core rate a format computes at.

Weights: ``dtype`` (the unquantized activation/compute dtype, vLLM ``--dtype``) and
``quantization`` (vLLM ``--quantization``). KV cache: ``kv_cache_dtype`` (vLLM
``--kv-cache-dtype``). Sources: ``shared/reference/physics.md`` A2 and A7.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Dtype = Literal["auto", "float32", "float16", "bfloat16", "fp32", "fp16", "bf16"]

DTYPES: tuple[str, ...] = ("auto", "float16", "bfloat16", "float32")
# vLLM's spellings (``vllm serve --quantization`` / ``--kv-cache-dtype`` choices). "none" is the
# calculator's word for an unquantized load; "auto" (no --quantization flag) loads the checkpoint's
# own format. vLLM 0.19's CacheDType has no float16 or int8:
# a 16-bit model's KV cache is "auto" (or "bfloat16"); FP8 is "fp8" (= fp8_e4m3) or fp8_e5m2.
# FP4 (vLLM ``--quantization``): ``mxfp4`` (OCP MX: E2M1 values, one E8M0 scale per 32, gpt-oss's
# experts) and ``modelopt_fp4`` (NVIDIA NVFP4: E2M1 values, one FP8 E4M3 scale per 16 plus one FP32
# per tensor; ModelOpt / compressed-tensors NVFP4 checkpoints). KV cache ``nvfp4``: vLLM PR #40177
# (merged 2026-04-17; CacheDType "nvfp4": per head D/2 bytes of E2M1 + D/16 bytes of E4M3 scales,
# ``nvfp4_kv_cache_full_dim``), FlashInfer trtllm-gen attention on SM100 only
# (calc.sizing.scenario.check_gpu_formats); vLLM has no MXFP4 KV cache.
QUANTIZATIONS: tuple[str, ...] = ("auto", "none", "fp8", "int8", "awq", "gptq", "bitsandbytes", "mxfp4",
                                  "modelopt_fp4")
KV_CACHE_DTYPES: tuple[str, ...] = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4")
# Spellings of earlier versions of this calculator (old links and scenario files) -> vLLM's, with
# the reason shown to the user once.
QUANTIZATION_ALIASES: dict[str, str] = {"nf4": "bitsandbytes", "nvfp4": "modelopt_fp4"}
KV_CACHE_DTYPE_ALIASES: dict[str, str] = {"fp16": "float16", "bf16": "bfloat16", "int8": "fp8"}
ALIAS_REASONS: dict[tuple[str, str], str] = {
    ("quantization", "nf4"): "vLLM spells bitsandbytes NF4 `bitsandbytes`",
    ("quantization", "nvfp4"): "vLLM spells NVFP4 weights `modelopt_fp4`",
    ("kv_cache_dtype", "fp16"): "vLLM spells it `float16`",
    ("kv_cache_dtype", "bf16"): "vLLM spells it `bfloat16`",
    ("kv_cache_dtype", "int8"): "vLLM has no int8 KV cache dtype; `fp8` stores the same 1 byte per element",
}


def canonical_quantization(value: object) -> object:
    """vLLM's spelling of a ``--quantization`` value (old spellings mapped, others unchanged).

    >>> canonical_quantization("nf4"), canonical_quantization("awq")
    ('bitsandbytes', 'awq')
    """
    return QUANTIZATION_ALIASES.get(value, value) if isinstance(value, str) else value


def canonical_kv_cache_dtype(value: object) -> object:
    """vLLM's spelling of a ``--kv-cache-dtype`` value (old spellings mapped, others unchanged).

    >>> canonical_kv_cache_dtype("int8"), canonical_kv_cache_dtype("fp16"), canonical_kv_cache_dtype("fp8")
    ('fp8', 'float16', 'fp8')
    """
    return KV_CACHE_DTYPE_ALIASES.get(value, value) if isinstance(value, str) else value

_DTYPE_ALIASES = {"fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16"}


def canonical_dtype(dtype: str) -> str:
    """Map vLLM's dtype spellings to one name; ``auto`` means the checkpoint's 16-bit dtype.

    >>> canonical_dtype("fp16"), canonical_dtype("auto")
    ('float16', 'bfloat16')
    """
    d = _DTYPE_ALIASES.get(dtype, dtype)
    return "bfloat16" if d == "auto" else d


def activation_bytes(dtype: str) -> float:
    """Bytes per activation / unquantized weight element for ``dtype`` (vLLM ``--dtype``).

    >>> activation_bytes("float16"), activation_bytes("float32")
    (2.0, 4.0)
    """
    return 4.0 if canonical_dtype(dtype) == "float32" else 2.0


# Bits per quantized *linear-layer* weight, metadata included (physics.md A7):
#  fp8 / int8: 8 bits, per-channel or per-tensor scales are negligible.
#  awq / gptq, group 128: 4 bits + FP16 scale/128 + 4-bit zero/128 = 4 + 16/128 + 4/128 = 4.15625.
#  bitsandbytes NF4 (QLoRA double quantization): 4 + 8/64 + 32/(64*256) = 4.126953125.
#  mxfp4 (OCP MX): 4-bit E2M1 + one 8-bit E8M0 scale per 32 = 4 + 8/32 = 4.25.
#  modelopt_fp4 (NVFP4): 4-bit E2M1 + one 8-bit E4M3 scale per 16 = 4 + 8/16 = 4.5 (the FP32
#    per-tensor scale is 32 bits per whole matrix: negligible).
QUANT_BITS_PER_WEIGHT: dict[str, float] = {
    "mxfp4": 4.0 + 8.0 / 32,
    "modelopt_fp4": 4.0 + 8.0 / 16,
    "fp8": 8.0,
    "int8": 8.0,
    "awq": 4.0 + 16.0 / 128 + 4.0 / 128,
    "gptq": 4.0 + 16.0 / 128 + 4.0 / 128,
    "bitsandbytes": 4.0 + 8.0 / 64 + 32.0 / (64 * 256),
}


# vLLM's MXFP4 fused-MoE backends and how each pads the expert matrices (hidden multiple, expert
# width multiple): vllm/model_executor/layers/quantization/mxfp4.py create_weights and the fused-MoE
# layer's hidden-size round-up for gpt-oss. Hopper: OpenAI Triton kernels; datacenter Blackwell
# (SM100): FlashInfer TRT-LLM BF16 x MXFP4; ROCm: CK/Triton; other CUDA GPUs (Ampere, Ada, SM120):
# the Marlin weight-only fallback.
MXFP4_PADDING: dict[str, tuple[int, int]] = {"triton": (256, 64), "flashinfer": (256, 256), "rocm": (256, 128),
                                             "marlin": (256, 128)}


def mxfp4_expert_padding(*, hidden_size, intermediate_size, backend: str = "triton"):
    """Stored / logical size of an MXFP4 expert's matrices: vLLM allocates gate_up (2·I' × h') and
    down (h' × I') with h' = ⌈h / a_h⌉·a_h and I' = ⌈I / a_I⌉·a_I (:data:`MXFP4_PADDING`), so

        padding = h'·I' / (h·I)

    gpt-oss (h = I = 2880): Triton 3072·2880 / 2880² = 1.0667, Marlin 3072·2944 / 2880² = 1.0904,
    FlashInfer 3072² / 2880² = 1.1378. Checked against vLLM logs of gpt-oss-120b on one H100:
    "Model loading took 64.38 GiB" (v0.14.1, Triton backend; vllm-project/vllm#33155) and
    "65.9651 GiB" (Aug 2025, Marlin; #23278) vs 64.49 / 65.84 GiB computed (unpadded: 60.71).
    The expert width is padded per TP rank in vLLM; this counts it for the whole width (TP 1).

    >>> round(mxfp4_expert_padding(hidden_size=2880, intermediate_size=2880, backend="triton"), 4)
    1.0667
    >>> round(mxfp4_expert_padding(hidden_size=2880, intermediate_size=2880, backend="marlin"), 4)
    1.0904
    """
    a_h, a_i = MXFP4_PADDING[backend]
    h = np.asarray(hidden_size)
    i = np.asarray(intermediate_size)
    padded = (-(-h // a_h) * a_h) * (-(-i // a_i) * a_i)
    out = padded / (h * i)
    return out.item() if np.ndim(out) == 0 else out


def linear_weight_bytes_per_param(*, dtype: str, quantization: str) -> float:
    """Bytes per parameter of the quantizable linear layers (attention and MLP matrices).

    Embeddings, the LM head and norms stay in ``dtype`` (vLLM keeps lm_head unquantized).

    >>> linear_weight_bytes_per_param(dtype="bfloat16", quantization="none")
    2.0
    >>> round(linear_weight_bytes_per_param(dtype="float16", quantization="awq"), 4)  # 4.15625 bits
    0.5195
    """
    if quantization in ("none", "auto"):  # "auto" with an unquantized checkpoint
        return activation_bytes(dtype)
    return QUANT_BITS_PER_WEIGHT[canonical_quantization(quantization)] / 8.0


def dequant_bytes_per_param(*, quantization: str, dtype: str) -> float:
    """Extra HBM bytes per linear weight in a step of two or more tokens, for formats whose
    kernel dequantizes the whole weight before the GEMM.

    bitsandbytes: vLLM's ``apply_bnb_4bit`` calls ``bitsandbytes.matmul_4bit``, which runs a
    fused 4-bit GEMV for a single token but for more rows calls ``dequantize_4bit`` (writes a
    16-bit copy of the weight) and then a 16-bit GEMM (reads it back): 2·b_act extra bytes per
    weight, 4 B in BF16. AWQ/GPTQ/FP8 kernels (Marlin etc.) read the packed weight directly: 0.

    >>> dequant_bytes_per_param(quantization="bitsandbytes", dtype="bfloat16"), dequant_bytes_per_param(quantization="awq", dtype="bfloat16")
    (4.0, 0.0)
    """
    return 2.0 * activation_bytes(dtype) if quantization == "bitsandbytes" else 0.0


def kv_bytes_per_element(*, kv_cache_dtype: str, dtype: str) -> float:
    """Bytes per cached K or V element. ``auto`` follows the model dtype.

    FP8 KV uses per-layer k/v scales (negligible). Old spellings (fp16, bf16, int8) are read
    through :data:`KV_CACHE_DTYPE_ALIASES`. physics.md A2.

    NVFP4 KV (vLLM main, Blackwell): E2M1 values plus one E4M3 scale per 16 elements, 4.5 bits.

    >>> kv_bytes_per_element(kv_cache_dtype="auto", dtype="float16"), kv_bytes_per_element(kv_cache_dtype="fp8", dtype="float16")
    (2.0, 1.0)
    >>> kv_bytes_per_element(kv_cache_dtype="nvfp4", dtype="bfloat16")
    0.5625
    """
    kv_cache_dtype = canonical_kv_cache_dtype(kv_cache_dtype)
    if kv_cache_dtype == "auto":
        return activation_bytes(dtype)
    if kv_cache_dtype in ("float16", "bfloat16"):
        return 2.0
    if kv_cache_dtype in ("fp8", "fp8_e4m3", "fp8_e5m2"):
        return 1.0
    if kv_cache_dtype == "nvfp4":  # (D/2 + D/16) bytes per D elements = 0.5625 B (4.5 bits)
        return 0.5 + 1.0 / 16
    raise ValueError(f"kv_cache_dtype {kv_cache_dtype!r} is not one of {KV_CACHE_DTYPES}")


def compute_precision(*, dtype: str, quantization: str, gpu_has_fp8: bool, gpu_has_int8: bool,
                      gpu_has_fp4: bool = False) -> str:
    """Which tensor-core rate the linear layers run at: ``fp16``, ``bf16``, ``fp8``, ``int8``, ``fp4`` or ``tf32``.

    FP4: NVFP4 (``modelopt_fp4``) is W4A4: vLLM quantizes activations to NVFP4 and runs the FP4 MMA
    on GPUs with FP4 tensor cores (Blackwell SM100/SM120, CDNA4); elsewhere (Hopper, Ampere, Ada)
    it runs weight-only through Marlin (W4A16) at the 16-bit rate. MXFP4 (gpt-oss) is weight-only
    in vLLM's default backends on every GPU (Hopper: Triton/Marlin; SM100: FlashInfer TRT-LLM
    BF16 x MXFP4): 16-bit rate; only the opt-in MXFP8-activation backends would use the FP8 rate.

    W4A16 (awq/gptq/bitsandbytes) dequantizes to 16-bit in the kernel, so it computes at the 16-bit rate.
    FP8 W8A8 needs FP8 tensor cores (Ada, Hopper, Blackwell, CDNA3); elsewhere vLLM runs FP8
    checkpoints weight-only (W8A16 Marlin), at the 16-bit rate. INT8 W8A8 uses INT8 tensor cores.
    ``float32`` is counted at the TF32 rate (an optimistic assumption: strict FP32 is slower).

    >>> compute_precision(dtype="float16", quantization="fp8", gpu_has_fp8=False, gpu_has_int8=True)
    'fp16'
    >>> compute_precision(dtype="bfloat16", quantization="fp8", gpu_has_fp8=True, gpu_has_int8=True)
    'fp8'
    >>> [compute_precision(dtype="bfloat16", quantization=q, gpu_has_fp8=True, gpu_has_int8=True, gpu_has_fp4=f)
    ...  for q, f in (("modelopt_fp4", True), ("modelopt_fp4", False), ("mxfp4", True))]
    ['fp4', 'bf16', 'bf16']
    """
    d = canonical_dtype(dtype)
    sixteen = "fp16" if d == "float16" else ("tf32" if d == "float32" else "bf16")
    if quantization == "fp8" and gpu_has_fp8:
        return "fp8"
    if quantization == "int8" and gpu_has_int8:
        return "int8"
    if quantization == "modelopt_fp4" and gpu_has_fp4:
        return "fp4"
    return sixteen
