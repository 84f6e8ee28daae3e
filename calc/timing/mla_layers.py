"""The fixed time of vLLM's MLA decoder layers: what a DeepSeek-V3-style layer costs beyond its bytes.

    t_step += L_mla · t_mla          (every step with tokens; L_mla = the model's layers when it uses MLA)

A DeepSeek-V3 / R1 layer in vLLM runs far more kernels per step than a GQA layer, and each has a
launch-to-finish floor that CUDA graphs do not remove and a faster HBM does not shorten:
the absorbed-MLA decode path (fused q_a/kv_a projection, two latent RMSNorms, q_b projection, RoPE,
the latent cache write, the W_UK and W_UV batched matmuls over the heads, the MLA decode kernel and
its split-KV combine, o_proj), an activation-quantization kernel before every block-FP8 linear,
the router GEMM and DeepSeek's grouped top-k with its correction bias, and the shared expert's own
quantize-GEMM-activation-quantize-GEMM chain. The roofline charges their bytes, the routed experts'
fused-MoE sequence has its own floor (:mod:`calc.timing.moe_kernels`, ``moe_layer_fixed_s``) and
the two all-reduces their latency; ``t_mla`` is the rest, per layer. Whether a part of it is the
CPU launching the attention between piecewise CUDA graphs (vLLM V1 before full-graph decode for
MLA) is not pinned down by a trace: it is a fixed time per layer and step either way.

Evidence (``bench/data/mla_moe_lowbatch_found.jsonl``, ``bench/mla_layer_check.py``): vLLM on
8 × H200 at TP 8, DeepSeek-R1-0528 with one request (vLLM recipes, 7,902 in / 1,000 out): TPOT
15.85 ms where the step without t_mla is 5.46 ms (10.4 ms missing, 170 µs per layer);
DeepSeek-V3.1 with 16 clients decoding 100 tokens each (vLLM PR #28992): 684 output tokens/s
where 1,058 were predicted (a step of 23.4 ms against 14.6 ms: ~8.7 ms missing, ~140 µs per
layer). The missing time does not grow with the batch (1 → 16 sequences): a floor, not bytes.
Two vLLM TP 16 runs over two 8 × H100 nodes (tenstorrent tt-inference-server #356) miss
15.8 ms at 1 client and 17.9 ms at 32, again flat in the batch (their all-reduces also cross the
network). SGLang on one 8 × H200 node runs the same model at 10.9-12.8 ms TPOT with 4-8 clients
(SemiAnalysis InferenceX #870): an engine with fewer, fused kernels per layer; not modelled.
Kernel floors measured elsewhere are of that size: vLLM's custom all-reduce 9-10 µs for any
small message at TP 8 (SGLang PR #2904), SGLang's DeepSeek-R1 decode on B200 2-9 µs per small
GEMM, quantization or finalize kernel (InferenceX #863, 183 dense projections per step = 3 per
layer), a serialized CUDA-graph node 1.3 µs of gap alone (Megatron-LM PR #6064): 30-40 such
kernels per layer give 100-200 µs. Other engines (TensorRT-LLM, SGLang, llama.cpp) are not
covered. Every function broadcasts.
"""

from __future__ import annotations

import numpy as np


def mla_fixed_time_s(*, num_mla_layers, mla_layer_fixed_s):
    """The MLA layers' fixed time per engine step: L_mla · t_mla (module docstring), 0 without MLA.

    DeepSeek-R1 (61 MLA layers) at 150 µs: 9.15 ms per step, decode or prefill.

    >>> round(float(mla_fixed_time_s(num_mla_layers=61, mla_layer_fixed_s=150e-6)) * 1e3, 2)
    9.15
    >>> mla_fixed_time_s(num_mla_layers=np.array([0, 27]), mla_layer_fixed_s=1e-4).tolist()
    [0.0, 0.0027]
    """
    return np.asarray(num_mla_layers, dtype=float) * np.asarray(mla_layer_fixed_s, dtype=float)
