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
"""

from __future__ import annotations

import numpy as np


TRITON_MOE_QUANTIZATIONS = ("none",)  # formats whose experts vLLM 0.11 runs through Triton fused_moe on Ampere


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
