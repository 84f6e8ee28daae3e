"""The multi-GPU layout in the performance model: what PP, DP and EP change in the engine's
numbers (:func:`layout_fields`), one pipeline round (:func:`pipeline_round`) and the totals over
DP ranks (:func:`across_data_parallel`). The physics is in :mod:`calc.timing.expert_parallel`
and :mod:`calc.timing.pipeline`; with TP alone every function here is the identity.

One engine (:class:`calc.timing.serving.EngineNumbers`) is one DP rank: TP GPUs per stage,
PP stages. Its closed loop runs C / DP clients; the deployment serves DP times its throughput.
With MoE and DP the ranks step together (vLLM runs dummy batches on idle ranks), so every
rank's experts see all ranks' tokens: under EP the experts' weights are read once per step for
DP × the tokens, which is where EP's throughput comes from.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from calc.sizing.layout import expert_parallel_size
from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.timing.pipeline import micro_batches, stage_hop_s
from calc.timing.expert_parallel import FP8_DISPATCH_BYTES


def layout_fields(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig, efficiency: Efficiency, *,
                  quantization: str, activation_bytes: float, experts_params: float,
                  tp_link_bw_bytes_per_s: float) -> dict:
    """EngineNumbers fields that PP, DP, EP and multi-node TP set (empty for TP in one node).

    EP: ``expert_params`` = the GPU's whole experts (all experts / EP), the experts' token
    multiplier DP, the load imbalance, and with DP > 1 the all-to-all's links (NVLink domain,
    scale-out NIC of ``calc/data/nodes.json``) and dispatch precision (FP8 for FP8 weights, as
    DeepEP). With DP = 1 (``--enable-expert-parallel`` at TP alone) vLLM runs no all-to-all
    (``FusedMoEParallelConfig.use_all2all_kernels`` is ``dp_size > 1 and use_ep``): every rank
    holds the replicated tokens, runs its whole experts on them and the TP all-reduce sums the
    outputs, so the EngineNumbers defaults (no all-to-all time) stay.
    PP: stage links (NVLink inside a domain, else the NIC). TP wider than an NVLink domain: its
    all-reduce crosses the NIC (and vLLM's custom all-reduce is off).
    """
    from calc.spec.nodes import node_for
    node = node_for(gpu)
    tp, pp, dp = serving.tensor_parallel_size, serving.pipeline_parallel_size, serving.data_parallel_size
    out: dict = {}
    scale_out = node.scale_out_bw_bytes_per_s * efficiency.scale_out_bw_fraction
    # GPUs that reach each other without the NIC: the server (PCIe or NVLink inside it, as gpus.json's
    # link topology says) or the NVLink domain when it is larger (GB200 NVL72)
    local = max(node.gpus_per_node, node.nvlink_domain_gpus)
    if tp > local:
        out.update(link_bw_bytes_per_s=min(tp_link_bw_bytes_per_s, scale_out), custom_allreduce=False)
    ep = int(expert_parallel_size(tensor_parallel_size=tp, data_parallel_size=dp,
                                  enable_expert_parallel=serving.enable_expert_parallel))
    if arch.moe is not None and ep > 1:
        from calc.timing.interconnect import allreduce_link
        # inside the NVLink / xGMI domain: the per-GPU link at the domain's size (a mesh's peers add up)
        domain_bw = allreduce_link(gpu, min(ep, local), efficiency).bandwidth_bytes_per_s \
            * efficiency.interconnect_bw_fraction
        out.update(expert_params=experts_params / ep, expert_token_multiplier=float(dp),
                   expert_load_imbalance=efficiency.expert_load_imbalance, expert_parallel_size=ep,
                   num_moe_layers=arch.num_hidden_layers - arch.moe.first_dense_layers)
        if dp > 1:  # vLLM: FusedMoEParallelConfig.use_all2all_kernels = dp_size > 1 and use_ep
            out.update(ep_domain_gpus=local,
                       ep_nvlink_bw_bytes_per_s=domain_bw, ep_scale_out_bw_bytes_per_s=scale_out,
                       ep_dispatch_bytes_per_element=FP8_DISPATCH_BYTES if quantization == "fp8" else activation_bytes,
                       all_to_all_latency_s=efficiency.all_to_all_latency_s)
    if pp > 1:
        stage_gpus = tp  # consecutive stages sit in the same NVLink domain while TP·PP fits it
        out.update(pipeline_parallel_size=pp,
                   pipeline_link_bw_bytes_per_s=tp_link_bw_bytes_per_s if stage_gpus * pp <= local
                   else scale_out,
                   pipeline_hop_latency_s=efficiency.all_to_all_latency_s)
    return out


def pipeline_round(e, stage_step, *, decode_tokens, decode_context_tokens_sum, prefill_tokens,
                   prefill_attention_pairs, prefill_cached_tokens, logits_tokens):
    """One round of the pipeline (:mod:`calc.timing.pipeline`): the whole model's step on a
    micro-batch of 1/m of the batch, plus (PP − 1) hand-overs; per GPU m/PP of those FLOPs and bytes."""
    pp = np.asarray(e.pipeline_parallel_size, dtype=float)
    m = micro_batches(sequences=logits_tokens, pipeline_parallel_size=pp)
    st = stage_step(e, decode_tokens=np.asarray(decode_tokens, dtype=float) / m,
                    decode_context_tokens_sum=np.asarray(decode_context_tokens_sum, dtype=float) / m,
                    prefill_tokens=np.asarray(prefill_tokens, dtype=float) / m,
                    prefill_attention_pairs=np.asarray(prefill_attention_pairs, dtype=float) / m,
                    prefill_cached_tokens=np.asarray(prefill_cached_tokens, dtype=float) / m,
                    logits_tokens=np.asarray(logits_tokens, dtype=float) / m)
    hop = stage_hop_s(tokens=(np.asarray(decode_tokens, dtype=float) + prefill_tokens) / m, hidden_size=e.hidden_size,
                      activation_bytes=e.activation_bytes, tensor_parallel_size=e.tensor_parallel_size,
                      link_bw_bytes_per_s=e.pipeline_link_bw_bytes_per_s, latency_s=e.pipeline_hop_latency_s)
    share = m / pp
    return dataclasses.replace(st, comm_s=st.comm_s + (pp - 1.0) * hop, flops=st.flops * share,
                               bytes=st.bytes * share)


def across_data_parallel(res, data_parallel_size: int):
    """The deployment's totals from one DP rank's closed loop: throughputs, clients and running
    sequences × DP (latencies are the rank's)."""
    dp = int(data_parallel_size)
    if dp == 1:
        return res
    scale = ("output_tokens_per_s", "total_tokens_per_s", "requests_per_s", "concurrency", "running", "waiting",
             "kv_sequences_at_mean_context")
    return dataclasses.replace(res, **{k: np.asarray(getattr(res, k)) * dp for k in scale})
