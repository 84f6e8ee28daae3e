"""vLLM's attention backend for a model on a GPU, and the share of FlashAttention's rate its kernel reaches.

    t_attn = max(F_dec / (P_a·η) + F_pf / (P_a·η·s_p),  B_dec / (BW·η_m·s_d) + B_rest / (BW·η_m))
    s_p, s_d = triton_attention_prefill_fraction, triton_attention_decode_fraction   (TRITON_ATTN)
    s_p = s_d = 1                                                                    (otherwise)

(:func:`calc.timing.perf.step_time`; F_pf the prompt chunks' attention FLOPs, B_dec the KV bytes the
decode tokens read.) The calculator's attention efficiencies (η, η_m) are those of FlashAttention-class
kernels: the calibration rows ran FlashAttention 2 on Ampere, FlashAttention 3 on Hopper.

Which backend vLLM 0.11.0 picks (``vllm/platforms/cuda.py`` ``CudaPlatform.get_attn_backend_cls``,
read in the v0.11.0 sdist): Blackwell (SM 10.x) takes FlashInfer when it imports; then on SM ≥ 8.0

    if (has_sink or use_fp8_kv_cache) and not is_device_capability(90): return TRITON_ATTN
    else: FLASH_ATTN

so a model with attention sinks (gpt-oss) or an FP8 KV cache runs the Triton unified attention kernel on
Ampere and Ada, FlashAttention 3 (which has sinks, ``fa_utils.flash_attn_supports_sinks``: FA version 3)
on Hopper. vLLM's recipe says the same for gpt-oss ("GPT-OSS works on Ampere devices by default, using the
``TRITON_ATTN`` attention backend and Marlin MXFP4 MoE", vllm-project/recipes OpenAI/GPT-OSS.md, A100).
AMD GPUs run ROCm's own backends and other engines their own kernels: not covered (s = 1).

The Triton kernel in v0.11.0 (``vllm/attention/ops/triton_unified_attention.py``): one program per
(query block, KV head) with BLOCK_M = 16 rows, i.e. BLOCK_Q = 16 / (query heads per KV head) query tokens
(2 for gpt-oss's 64 / 8 heads), streaming the whole causal key prefix of its sequence in tiles of 32
(TILE_SIZE_PREFILL) or 16 keys; every batch with a prompt chunk (or more than 128 query blocks × KV heads)
runs the 2D kernel, small pure-decode batches the 3D (16 KV segments) one. The keys and values are
re-read for every BLOCK_Q query tokens, 128 times per KV head per 256-token stretch of a chunk where
FlashAttention 2's 128-row query tile reads them once per 128 rows. Where s_p and s_d come from:
:class:`calc.spec.inputs.Efficiency` (``triton_attention_prefill_fraction``,
``triton_attention_decode_fraction``).
"""

from __future__ import annotations

import numpy as np

TRITON_ATTN = "triton"
FLASH_ATTN = "flash_attn"
FLASHINFER = "flashinfer"
OTHER = "other"  # AMD (ROCm's backends), unknown GPUs
# Compute capability by architecture where the catalog does not state it (A100 8.0, A10/RTX 3090 8.6, Ada 8.9).
ARCHITECTURE_CAPABILITY = {"ampere": 8.0, "ada": 8.9, "hopper": 9.0, "blackwell": 10.0}


def vllm_attention_backend(*, vendor, architecture, compute_capability, attention_sinks, fp8_kv_cache) -> str:
    """vLLM 0.11.0's default attention backend (module docstring): ``"flashinfer"`` on SM 10.x,
    ``"triton"`` on NVIDIA SM ≥ 8.0 other than 9.x where the model has attention sinks or an FP8 KV
    cache, ``"flash_attn"`` otherwise on NVIDIA SM ≥ 8.0; ``"other"`` elsewhere. ``compute_capability``
    None: the architecture's (:data:`ARCHITECTURE_CAPABILITY`).

    >>> vllm_attention_backend(vendor="nvidia", architecture="ampere", compute_capability=None,
    ...                        attention_sinks=True, fp8_kv_cache=False)
    'triton'
    >>> vllm_attention_backend(vendor="nvidia", architecture="hopper", compute_capability=None,
    ...                        attention_sinks=True, fp8_kv_cache=False)
    'flash_attn'
    >>> vllm_attention_backend(vendor="nvidia", architecture="ada", compute_capability=None,
    ...                        attention_sinks=False, fp8_kv_cache=True)
    'triton'
    >>> vllm_attention_backend(vendor="nvidia", architecture="ampere", compute_capability=None,
    ...                        attention_sinks=False, fp8_kv_cache=False)
    'flash_attn'
    >>> vllm_attention_backend(vendor="nvidia", architecture="blackwell", compute_capability=10.0,
    ...                        attention_sinks=True, fp8_kv_cache=False)
    'flashinfer'
    """
    cc = compute_capability if compute_capability is not None else ARCHITECTURE_CAPABILITY.get(architecture)
    if vendor != "nvidia" or cc is None or cc < 8.0:
        return OTHER
    if 10.0 <= cc < 11.0:
        return FLASHINFER
    if (attention_sinks or fp8_kv_cache) and not (9.0 <= cc < 10.0):
        return TRITON_ATTN
    return FLASH_ATTN


def attention_scales(backend, *, triton_attention_prefill_fraction, triton_attention_decode_fraction):
    """(s_p, s_d): the backend's share of FlashAttention's prompt-attention FLOP rate and of its
    decode KV-read rate: the two ``triton_attention_*`` inputs for ``"triton"``, else (1, 1).

    >>> [float(x) for x in attention_scales("triton", triton_attention_prefill_fraction=0.5,
    ...                                     triton_attention_decode_fraction=0.8)]
    [0.5, 0.8]
    >>> [float(x) for x in attention_scales("flash_attn", triton_attention_prefill_fraction=0.5,
    ...                                     triton_attention_decode_fraction=0.8)]
    [1.0, 1.0]
    """
    on = np.asarray(backend) == TRITON_ATTN
    return (np.where(on, np.asarray(triton_attention_prefill_fraction, dtype=float), 1.0),
            np.where(on, np.asarray(triton_attention_decode_fraction, dtype=float), 1.0))


def engine_attention_scales(arch, gpu, *, kv_cache_dtype, efficiency) -> tuple[float, float]:
    """(s_p, s_d) of ``arch`` (a :class:`calc.spec.inputs.ModelArch`) served by vLLM on ``gpu`` with
    ``kv_cache_dtype``: :func:`attention_scales` of :func:`vllm_attention_backend`, the shares from
    ``efficiency`` (:class:`calc.spec.inputs.Efficiency`).

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> from calc.spec.inputs import Efficiency
    >>> [engine_attention_scales(get_model("openai/gpt-oss-120b"), get_gpu(g), kv_cache_dtype="auto",
    ...                          efficiency=Efficiency())[0] for g in ("a100-80gb", "h100-sxm")]
    [0.19, 1.0]
    """
    backend = vllm_attention_backend(vendor=gpu.vendor, architecture=gpu.architecture,
                                     compute_capability=gpu.compute_capability, attention_sinks=arch.attention_sinks,
                                     fp8_kv_cache=str(kv_cache_dtype).startswith("fp8"))
    s_p, s_d = attention_scales(backend, triton_attention_prefill_fraction=efficiency.triton_attention_prefill_fraction,
                                triton_attention_decode_fraction=efficiency.triton_attention_decode_fraction)
    return float(s_p), float(s_d)
