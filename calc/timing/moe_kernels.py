"""Routed-expert GEMMs in vLLM's MoE kernels: their share of the dense FLOP fractions.

    t_experts = FLOPs_experts / (peak · s_x · η_c(rows per expert))          (calc.timing.perf)
    s_x = ampere_moe_flops_scale   on an Ampere GPU, 16-bit routed experts (Triton fused_moe)
    s_x = 1                        otherwise

vLLM 0.11 runs unquantized routed experts through its Triton ``fused_moe`` kernel (a grouped GEMM
whose A rows are gathered by expert, tile sizes from the per-(E, N, device) config files in
``vllm/model_executor/layers/fused_moe/configs``); dense layers go to cuBLAS. On Ampere that
kernel reaches a smaller share of the peak than the dense GEMMs do; on Hopper the measured MoE
runs need no such share (sources in :class:`calc.spec.inputs.Efficiency`,
``ampere_moe_flops_scale``). Quantized experts on Ampere run other kernels (Marlin for FP8/INT4
weights): not covered, s_x = 1. Every function broadcasts.

What is known and what is not. The lead "no tuned kernel config on A100" does not hold for the
runs this was fitted on: ``E=128,N=192,device_name=NVIDIA_A100-SXM4-80GB.json`` (Qwen3-235B-A22B at
TP 8) came with vLLM PR #17328 (2025-04-28), before v0.11.0. The isolated kernel is not slow either:
``benchmark_moe.py`` on one A100 SXM4 (vLLM PR #40542, E=64, N=1408, hidden 2048, top-6, M=4096,
384 rows per expert) took 2.64 ms for 0.43 TFLOP, 0.52 of peak, which this module's physics gives
with s_x = 1 (0.6 · 384 / (384 + 64) = 0.51). The served MoE layers at TP 4-8 (per-rank expert
widths 192-352, so the down-projection's K is 192-352) are what run slower; which part of the
layer (the short-K GEMM, the gathered reads, moe_sum, the config picked for the step's M) is not
pinned down by a source. That it is vLLM's MoE path and not the A100 as such: on the same pages SGLang
0.5 (its own Triton fused-MoE configs) served the 16-bit MoE bursts 1.22x (Qwen3-235B TP 8) and 1.58x
(GLM-4.5-Air TP 4) as fast as vLLM on A100, against 0.91x and 1.19x on H100. s_x is therefore an end-to-end share, fitted once for Ampere (0.4 on the
three Qwen3-235B A100 bursts of the calibration set) and checked on other models
(``bench/moe_ampere_check.py``).

MXFP4 experts without FP4 tensor cores (gpt-oss on Hopper, Ampere, Ada). vLLM 0.10-0.11 picks the
``triton`` MXFP4 backend on Hopper (``mxfp4.py`` ``get_mxfp4_backend``: SM90-SM100 with triton_kernels;
FlashInfer only behind an opt-in variable) and Marlin elsewhere (:func:`calc.sizing.scenario.mxfp4_backend`).
Both are weight-only grouped GEMMs: the MXFP4 weights are upcast to BF16 in registers and fed to BF16
MMAs, and ONE launch covers every expert of the layer (the grid is the sum over experts of their
M-tiles times the N-tiles), so the SMs fill across experts. What an expert's few rows cost is their
padding to the kernel's M tile, not a per-GEMM wave: triton_kernels ``matmul_ogs`` takes
block_m = max(16, next_pow2(rows per expert)) (triton-lang/triton
``python/triton_kernels/triton_kernels/matmul_ogs_details/opt_flags.py``), Marlin MoE the smallest of
8, 16, 32, 48, 64 above rows per expert / 0.9 (vLLM ``fused_marlin_moe.py``). Hence

    t_experts = FLOPs_experts / (peak · η · r / (r + M_x)),  M_x = mxfp4_moe_half_saturation_rows (16)

in place of the dense GEMMs' M_½ (64, whose wave term does not apply per expert). At decode (r ≈ 1-4
rows per expert) the experts then stay bound by their MXFP4 weight bytes, as a weight-only kernel
should; in a prefill chunk (r in the hundreds) the two agree within 20 %. Checked in
``bench/gptoss_check.py`` (bench/data/gptoss_found.jsonl, the llm-d P/D row).

The MoE layer's fixed time. One MoE layer of vLLM's fused path is a sequence of kernels (router
top-k, expert alignment, two grouped GEMMs over a few rows per expert, activation, the weighted
sum; FP8 adds the activations' quantization), each with a launch-to-finish floor that CUDA graphs
do not remove (they remove the CPU's launch cost) and that a faster HBM does not shorten. vLLM's
``benchmarks/kernels/benchmark_moe.py`` times exactly that sequence inside a CUDA graph (10 calls
per replay, random gating: uniform routing, as :func:`calc.timing.roofline.expected_experts_touched`
assumes). Its kernel time is the layer's weight bytes at the achievable bandwidth plus a constant:

    t_layer(N) = t_0 + bytes(N) / (BW · η_m)         t_step += L_moe · t_0

Qwen3-30B-A3B FP8 on one H100 (vLLM PR #24700): N = 1: 8 experts · 3 · 2048 · 768 B = 37.7 MB,
14.1 us at 0.8 · 3.35 TB/s, measured 40.4 us, t_0 = 26 us; N = 8 (51.6 experts touched, 244 MB):
91 + 26 = 117 us predicted, 118.6 us measured; N = 32 (111.7 experts, 527 MB): 223 us, 210 measured.
Other tables, N = 1: Qwen3-Next-80B FP8 TP 4 on H100 29.5 − 2.9 = 27 us (vLLM PR #44830),
Qwen3-235B FP8 TP 8 on H200 31.7 − 4.9 = 27 us (SGLang PR #11730, its Triton fused MoE), Qwen3-30B-A3B
BF16 on B200 39.6 − 11.8 = 28 us (vLLM PR #31448, default config), Mixtral-8x7B BF16 TP 2 on H100
144.0 − 131.5 = 13 us (vLLM PR #24700; 2 of 8 experts). Median 26.5 us; ``moe_layer_fixed_s`` = 25 us.
The rows are in ``bench/data/moe_kernel_benchmarks.jsonl`` (``bench/moe_kernel_floor.py``).
A dense MLP's own kernel floors (three kernels) sit in ``step_overhead_s``, fitted on dense rows.
Not modelled: gpt-oss's Hopper path (triton_kernels ``routing`` + ``matmul_ogs``) has its own
sequence (routing alone 11.8-12.3 us in 4 launches, triton-lang/triton PRs #7369/#7396; matmul_ogs
ran split-K > 1 with FP32 partials below ~32 rows until vLLM PR #30528, 2025-12); no published
per-layer time of that path was found, so the same t_0 applies to it.
"""

from __future__ import annotations

import numpy as np


TRITON_MOE_QUANTIZATIONS = ("none",)  # formats whose experts vLLM 0.11 runs through Triton fused_moe on Ampere
GROUPED_MXFP4_QUANTIZATIONS = ("mxfp4",)
# calc.sizing.scenario.mxfp4_backend values whose MoE kernel is a weight-only grouped GEMM (one launch
# for all experts, BF16 MMAs on upcast weights): triton_kernels matmul_ogs (Hopper), Marlin MoE.
GROUPED_MXFP4_BACKENDS = ("triton", "marlin")


def expert_flops_scale(*, architecture, is_moe, quantization, ampere_moe_flops_scale):
    """s_x: ``ampere_moe_flops_scale`` where the GPU's architecture is ``"ampere"``, the model has
    routed experts and they are unquantized (``quantization`` "none": 16-bit weights, the Triton
    kernel), else 1.

    >>> float(expert_flops_scale(architecture="ampere", is_moe=True, quantization="none", ampere_moe_flops_scale=0.5))
    0.5
    >>> float(expert_flops_scale(architecture="hopper", is_moe=True, quantization="none", ampere_moe_flops_scale=0.5))
    1.0
    >>> float(expert_flops_scale(architecture="ampere", is_moe=True, quantization="fp8", ampere_moe_flops_scale=0.5))
    1.0
    """
    on = ((np.asarray(architecture) == "ampere") & np.asarray(is_moe, dtype=bool)
          & np.isin(np.asarray(quantization), TRITON_MOE_QUANTIZATIONS))
    return np.where(on, np.asarray(ampere_moe_flops_scale, dtype=float), 1.0)


def expert_half_saturation_rows(*, quantization, mxfp4_backend, gemm_half_saturation_tokens,
                                mxfp4_moe_half_saturation_rows):
    """M_x: the routed experts' half-saturation rows: ``mxfp4_moe_half_saturation_rows`` where the
    experts are MXFP4 and vLLM runs them through a weight-only grouped kernel (``mxfp4_backend``
    ``triton``: triton_kernels matmul_ogs, Hopper; ``marlin``: Marlin MoE, GPUs without FP4 tensor
    cores and outside triton_kernels' SM90-SM100 range), else the dense ``gemm_half_saturation_tokens``
    (Blackwell's FlashInfer FP4 kernels and AMD's are not covered).

    >>> float(expert_half_saturation_rows(quantization="mxfp4", mxfp4_backend="triton", gemm_half_saturation_tokens=64,
    ...                                   mxfp4_moe_half_saturation_rows=16))
    16.0
    >>> float(expert_half_saturation_rows(quantization="mxfp4", mxfp4_backend="flashinfer", gemm_half_saturation_tokens=64,
    ...                                   mxfp4_moe_half_saturation_rows=16))
    64.0
    """
    on = (np.isin(np.asarray(quantization), GROUPED_MXFP4_QUANTIZATIONS)
          & np.isin(np.asarray(mxfp4_backend), GROUPED_MXFP4_BACKENDS))
    return np.where(on, np.asarray(mxfp4_moe_half_saturation_rows, dtype=float),
                    np.asarray(gemm_half_saturation_tokens, dtype=float))


def moe_fixed_time_s(*, num_moe_layers, moe_layer_fixed_s):
    """The MoE layers' fixed time per engine step: L_moe · t_0 (module docstring), 0 for a dense model.

    gpt-oss-120b: 36 MoE layers · 25 us = 0.9 ms per step (decode or prefill).

    >>> round(float(moe_fixed_time_s(num_moe_layers=36, moe_layer_fixed_s=25e-6)) * 1e3, 3)
    0.9
    >>> float(moe_fixed_time_s(num_moe_layers=0, moe_layer_fixed_s=25e-6))
    0.0
    """
    return np.asarray(num_moe_layers, dtype=float) * np.asarray(moe_layer_fixed_s, dtype=float)
