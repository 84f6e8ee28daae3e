"""Engine profiles: which tensor-core peak an engine's GEMMs run against, and at what share of it.

One step-time physics (:mod:`calc.timing.perf`) serves every engine; an engine profile only picks
the peak and the efficiency inputs (:class:`calc.spec.inputs.Efficiency`) for the kernels that engine
runs. vLLM is the default profile (``Efficiency()``).

**The peak an engine's 16-bit GEMMs run against.** A tensor core multiplies FP16 inputs and adds
the products into an FP16 or an FP32 accumulator. Datacenter and professional parts (A100, H100,
L40S, RTX A6000/6000 Ada) run both at one rate; GeForce parts run FP32 accumulation at half the
FP16-accumulate rate (NVIDIA GA102 whitepaper, RTX 3090: 142 / 71 dense TFLOPS FP16 with FP16 /
FP32 accumulate; AD102 whitepaper, RTX 4090: 330.3 / 165.2). The catalog's ``fp16_flops_per_s`` is
the FP32-accumulate rate (what vLLM's and TensorRT-LLM's kernels use); ``fp16_accumulate_flops_per_s``
holds the other where it differs. With a share s of the GEMM work at FP16 accumulation::

    1 / P_eff = (1 − s) / P_fp32acc + s / P_fp16acc          (time-weighted: each part at its own rate)

**llama.cpp (CUDA backend).** Prompt processing (a 512-token ``llama-bench`` pp batch) multiplies F16
weights through ``ggml_cuda_op_mul_mat_cublas``: activations converted to F16, ``cublasGemmEx`` with
``CUBLAS_COMPUTE_16F`` (FP16 accumulate) at the default precision, the F16 result converted back to
F32. Quantized weights (Q4_K_M, Q4_0) in builds before the int8-MMA MMQ kernels (PR #7860, June
2024) took the same path after a dequantize-to-F16 pass for batches above 32 rows (recalled, not read
at a pinned build; consistent with the runs: on an RTX 4090 Q4_K_M pp512 takes 17 ms more than F16,
near the 19 ms of writing the 15 GB of dequantized F16 weights and reading the 4.6 GB file at 1 TB/s). So the profile puts
``fp16_accumulate_share`` = 1. Evidence beyond the source: an RTX 4080 ran Llama-3-8B F16 pp512 at
7,247 tokens/s (XiongjieDai, May 2024): 2 x 6.98 B non-embedding parameters x 7,247 = 101 TFLOP/s,
above its 97.5 TFLOP/s FP32-accumulate peak (76 SMs x 2.505 GHz x 512).

Its graph is not fused the way vLLM's is (F32 activations between kernels, type conversions around
every GEMM, attention as separate KQ / softmax / KQV kernels without flash attention), so its prompt
work reaches a smaller share of the peak, :data:`LLAMA_CPP_PREFILL_FLOPS_FRACTION` = 0.5: the F16
pp512 runs found in public (bench/data/llamacpp_found.jsonl, not the calibration rows) sit at
+14 % (RTX 4090, Jan 2024), -3 % (RTX 3090, Jan 2024) and -12 % (A100 PCIe, May 2024) with it;
0.45 / 0.55 move the 4090 and A100 rows to +25 % / -4 % and +5 % / -20 %. On Hopper the same page and build ran H100 PCIe only 1.40x (F16) and
1.36x (Q4_K_M) faster than A100 PCIe, where the dense peaks differ 2.42x (the non-GEMM kernels
scale with bandwidth, 1.03x): :data:`LLAMA_CPP_HOPPER_FLOPS_SCALE` = 0.6 gives the H100 rows the
A100 rows' error (F16 -12.1 % vs -12.4 %, Q4_K_M -33.9 % vs -32.3 %), 0.5 / 0.55 do not. Decode
(tg, batch 1) is weight streaming and keeps the C++ engines' bandwidth inputs.

Not modelled: the build. The Dec 2023 runs (builds 1671-1691, ./main, one 494-token prompt in a fresh
process, read from the page's notebooks) ran 1.4-1.6x slower than 2024 builds' llama-bench pp512 on the
same GPUs (RTX 3090 F16: 3,075 vs 4,185 tokens/s in PR #4766's master of Jan 2024; RTX 4090 7,349 vs
11,048); with this profile their F16 prompts are -46 % (A100 80GB PCIe), -44 % (H100 PCIe), -24 % (RTX
4090) and -32 % (RTX 3090), Q4_0 -42 to -64 % (kept back in bench/data/llamacpp_found.jsonl). The gap
is no Hopper effect and not the same everywhere (RTX A6000: 4,098 tokens/s in an Oct 2023 llama-bench,
PR #3816, against 3,708 in Dec 2023's ./main, 1.10x), and no source read here names a cause (the
./main figure is one prompt in a fresh process, llama-bench's a mean of repetitions), so calibration
row pm-131-pp (H100 PCIe, Dec 2023; asked at its 494-token prompt) keeps that error.

Quantized weights, checked and not changed: (1) the pre-MMQ path's dequantize kernel runs before
each GEMM, serial with it, while the roofline overlaps the dequantized copy's bytes with the GEMM
(``dequant_bytes_per_param``, 0 for gptq): the seven Q4 rows stay 3-37 % too fast (median 32 %). (2) Builds since PR #7676 / #7860 (June 2024) run quantized prompts through MMQ on int8
tensor cores; the INT8 peak does not describe them: an RTX 3090 ran Llama-3-8B Q5_1 pp512 at 3,494
tokens/s with MMQ (PR #7676), about 17 % of its 284 TOPS INT8 peak and below the 4,030 tokens/s
its Q4_K_M reached through the FP16 cuBLAS path in May 2024, so no INT8-peak profile is adopted.
"""

from __future__ import annotations

import numpy as np

from calc.spec.inputs import Efficiency

LLAMA_CPP_ENGINE_PREFIX = "llama.cpp"
# llama.cpp's 16-bit prompt GEMMs accumulate in FP16 (CUBLAS_COMPUTE_16F in ggml_cuda_op_mul_mat_cublas).
LLAMA_CPP_FP16_ACCUMULATE_SHARE = 1.0
# Share of the (FP16-accumulate) peak llama.cpp's prompt processing reaches; module docstring.
LLAMA_CPP_PREFILL_FLOPS_FRACTION = 0.5
# Share of that on Hopper (llama.cpp's Hopper runs reach less of the datasheet peak; module docstring).
LLAMA_CPP_HOPPER_FLOPS_SCALE = 0.6


def gemm_peak_flops_per_s(*, fp32_accumulate_flops_per_s, fp16_accumulate_flops_per_s, fp16_accumulate_share):
    """Effective 16-bit GEMM peak when a share s of the work accumulates in FP16:
    1 / P = (1 − s) / P_fp32acc + s / P_fp16acc (each part at its own rate).

    >>> float(gemm_peak_flops_per_s(fp32_accumulate_flops_per_s=165.2e12, fp16_accumulate_flops_per_s=330.4e12,
    ...                             fp16_accumulate_share=1.0)) / 1e12
    330.4
    >>> round(float(gemm_peak_flops_per_s(fp32_accumulate_flops_per_s=100.0, fp16_accumulate_flops_per_s=200.0,
    ...                                   fp16_accumulate_share=0.5)), 3)
    133.333
    """
    s = np.asarray(fp16_accumulate_share, dtype=float)
    return 1.0 / ((1.0 - s) / np.asarray(fp32_accumulate_flops_per_s, dtype=float)
                  + s / np.asarray(fp16_accumulate_flops_per_s, dtype=float))


def engine_peak_flops_per_s(gpu, precision: str, fp16_accumulate_share: float) -> float:
    """The dense peak the engine's GEMMs at ``precision`` run against on ``gpu``: the catalog's rate,
    except 16-bit GEMMs with FP16 accumulation on a part whose FP16-accumulate rate differs.

    >>> from calc.spec.catalog import get_gpu
    >>> engine_peak_flops_per_s(get_gpu("rtx-4090"), "fp16", 1.0) / 1e12
    330.3
    >>> engine_peak_flops_per_s(get_gpu("a100-80gb"), "fp16", 1.0) / 1e12
    312.0
    """
    base = gpu.peak_flops_per_s(precision)
    if precision not in ("fp16", "bf16") or not gpu.fp16_accumulate_flops_per_s or fp16_accumulate_share <= 0.0:
        return base
    return float(gemm_peak_flops_per_s(fp32_accumulate_flops_per_s=base,
                                       fp16_accumulate_flops_per_s=gpu.fp16_accumulate_flops_per_s,
                                       fp16_accumulate_share=fp16_accumulate_share))


def half_rate_gemms(gpu, precision: str) -> bool:
    """Whether ``precision``'s GEMMs run at a GeForce part's halved FP32-accumulate rate: 16-bit, on a part whose
    catalog entry holds a higher FP16-accumulate rate (RTX 3090, 4090, 5090).

    >>> from calc.spec.catalog import get_gpu
    >>> half_rate_gemms(get_gpu("rtx-4090"), "bf16"), half_rate_gemms(get_gpu("rtx-4090"), "fp8"), half_rate_gemms(get_gpu("l40s"), "bf16")
    (True, False, False)
    """
    return (precision in ("fp16", "bf16") and gpu.fp16_accumulate_flops_per_s is not None
            and gpu.fp16_accumulate_flops_per_s > gpu.peak_flops_per_s(precision))


def gemm_flops_fractions(gpu, precision: str, efficiency: Efficiency) -> tuple[float, float]:
    """The achievable fractions (prefill, decode) of the tensor peak an engine's GEMMs reach on ``gpu``:
    ``efficiency``'s prefill and decode fractions, times ``hopper_flops_scale`` on Hopper; on a GeForce
    part running 16-bit GEMMs with FP32 accumulation (the catalog holds a higher FP16-accumulate rate:
    RTX 3090, 4090, 5090; ``fp16_accumulate_share`` 0, as vLLM's), ``geforce_flops_fraction`` for both. With a
    share s > 0 of the work on the FP16-accumulate path (llama.cpp's prompt GEMMs: s = 1), that part runs at the
    prefill / decode fraction f of the FP16-accumulate peak P16 and the rest at ``geforce_flops_fraction`` g of
    P32, so against the blended peak (:func:`gemm_peak_flops_per_s`) the fraction is
    ((1 − s) / P32 + s / P16) / ((1 − s) / (P32·g) + s / (P16·f)): g at s = 0, f at s = 1, continuous between.

    Why GeForce differs: its FP32-accumulate tensor rate is half the FP16-accumulate one, so per SM and
    clock it does a quarter of an A100's tensor work (RTX 4090: 165.2e12 / (128 SMs x 2.52 GHz) = 512
    FLOPs, A100 312e12 / (108 x 1.41 GHz) = 2,048, H100 SXM 989e12 / (132 x 1.83 GHz) = 4,096); the loads,
    address arithmetic, softmax and epilogue around each MMA run at full speed, so the capped MMA rate is
    nearly all that binds. Measured: PyTorch BF16 matmul on an RTX 4090 at 151-165 TFLOP/s of 165.2
    (zzc0721/torch-performance-test-data issue #78, 2025-10; FP16 at 167, mli/transformers-benchmarks
    issue #4), an A100 at about 0.87 of 312. The trend runs the other way on Hopper (4,096 FLOPs per SM
    and clock, ``hopper_flops_scale``).

    The value was chosen on public vLLM runs on RTX 4090 and 3090 found for this check
    (bench/data/geforce_found.jsonl, 4 sources, 37 values: median |error| 27.7 % with the datacenter
    0.6) and checked on the prefix-cache runs on an RTX 4090 (bench/data/prefix_cache_measurements.jsonl),
    which were not used to choose it.

    >>> from calc.spec.catalog import get_gpu
    >>> e = Efficiency()
    >>> gemm_flops_fractions(get_gpu("rtx-4090"), "bf16", e) == (e.geforce_flops_fraction,) * 2
    True
    >>> [round(x, 4) for x in gemm_flops_fractions(get_gpu("rtx-4090"), "bf16", Efficiency(fp16_accumulate_share=0.5))]
    [0.7463, 0.7463]
    >>> gemm_flops_fractions(get_gpu("a100-80gb"), "bf16", e) == (e.prefill_flops_fraction, e.decode_flops_fraction)
    True
    >>> [round(x, 2) for x in gemm_flops_fractions(get_gpu("h100-sxm"), "bf16", e)]
    [0.36, 0.36]
    """
    if half_rate_gemms(gpu, precision):
        g, s = float(efficiency.geforce_flops_fraction), float(efficiency.fp16_accumulate_share)
        if s <= 0.0:
            return g, g
        # a share s of the GEMM work on the FP16-accumulate path: each part at its own rate and fraction
        p32, p16 = gpu.peak_flops_per_s(precision), gpu.fp16_accumulate_flops_per_s
        def blend(f16: float) -> float:  # f with F / (P_blend · f) = F · ((1 − s) / (P32 · g) + s / (P16 · f16))
            return ((1.0 - s) / p32 + s / p16) / ((1.0 - s) / (p32 * g) + s / (p16 * f16))
        return blend(float(efficiency.prefill_flops_fraction)), blend(float(efficiency.decode_flops_fraction))
    scale = efficiency.hopper_flops_scale if gpu.architecture == "hopper" else 1.0
    return float(efficiency.prefill_flops_fraction * scale), float(efficiency.decode_flops_fraction * scale)


# Model types whose chat format vLLM renders with openai_harmony instead of a Hugging Face chat
# template (serving_chat.py's use_harmony: the model's hf_config.model_type is "gpt_oss").
HARMONY_MODEL_TYPES = ("gpt_oss",)


def api_server_request_time_s(*, model_type: str, efficiency: Efficiency) -> float:
    """The API server's time per request of a model of ``model_type``: ``efficiency``'s
    ``api_server_request_s``, or its ``api_server_harmony_request_s`` for a model vLLM serves through
    openai_harmony (:data:`HARMONY_MODEL_TYPES`: that path skips the chat template's jinja rendering and
    the tokenizer).

    >>> e = Efficiency(api_server_request_s=0.022, api_server_harmony_request_s=0.0047)
    >>> api_server_request_time_s(model_type="gpt_oss", efficiency=e), api_server_request_time_s(model_type="qwen3", efficiency=e)
    (0.0047, 0.022)
    """
    return float(efficiency.api_server_harmony_request_s if model_type in HARMONY_MODEL_TYPES
                 else efficiency.api_server_request_s)


def is_llama_cpp(engine: str) -> bool:
    """Whether a measured row's ``engine`` is llama.cpp.

    >>> is_llama_cpp("llama.cpp May 2024 (LLaMA 3)"), is_llama_cpp("TensorRT-LLM v0.5")
    (True, False)
    """
    return str(engine).startswith(LLAMA_CPP_ENGINE_PREFIX)


def llama_cpp_efficiency(efficiency: Efficiency) -> Efficiency:
    """The llama.cpp profile over the C++ engines' inputs: FP16-accumulate GEMMs and its prompt
    fraction (module docstring); decode inputs unchanged."""
    return efficiency.model_copy(update={
        "fp16_accumulate_share": LLAMA_CPP_FP16_ACCUMULATE_SHARE,
        "prefill_flops_fraction": LLAMA_CPP_PREFILL_FLOPS_FRACTION,
        "hopper_flops_scale": LLAMA_CPP_HOPPER_FLOPS_SCALE,
    })
