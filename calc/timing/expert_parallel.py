"""Expert parallelism in the step time: the all-to-all dispatch and combine of every MoE layer.

With ``--enable-expert-parallel`` a token's hidden state is sent to the EP ranks that hold its k
experts (dispatch) and their outputs are sent back and summed (combine), twice per MoE layer
and step (DeepEP, pplx or NCCL all-to-all in vLLM). Per GPU and MoE layer, with n tokens on the
GPU (n / TP of its attention rank's tokens), hidden size h, top-k experts:

    S_dispatch = n · k · h · b_dispatch      (FP8 + one 4-byte scale per 128 values when the
                                               weights are FP8: b = 1 + 4/128; else b_act)
    S_combine  = n · k · h · b_act
    t_phase    = α + max(S · (D − 1)/EP / B_nvlink,  S · (EP − D)/EP / B_net)

with EP ranks spread uniformly over the experts, D = min(EP, NVLink-domain GPUs) (8 on an HGX
node, 72 on a GB200 NVL72 rack), the share (D − 1)/EP of destinations reached over NVLink (or
xGMI) and (EP − D)/EP over the scale-out NIC (calc/data/nodes.json), α the kernels' fixed time.
Two kernel regimes (DeepEP, vLLM ``--all2all-backend``): the low-latency kernels used for decode
steps send every (token, expert) pair as above; the high-throughput kernels used for steps with
prefill tokens (``high_throughput``; DeepEP's "normal" kernels, not CUDA-graph capturable) send a
token once per destination node and forward it over NVLink, so their inter-node bytes use the
expected distinct remote nodes N·(1 − (1 − 1/N)^k) instead of k.

Check against DeepEP's README (H800: NVLink 200 GB/s one direction, CX7 400 Gb/s = 50 GB/s;
low-latency kernels, 128 tokens, h = 7168, k = 8): EP8 dispatch 7.34 MB · 7/8 / 160 GB/s + 35 µs
= 75 µs (measured 77); EP16 dispatch 7.34 MB · 8/16 / 45 GB/s + 35 µs = 117 µs (118); EP16
combine 14.7 MB · 8/16 / 45 GB/s + 35 µs = 198 µs (195); EP64 dispatch 7.34 · 56/64 / 45 + 35 =
178 µs (173).
"""

from __future__ import annotations

import numpy as np

FP8_DISPATCH_BYTES = 1.0 + 4.0 / 128.0  # FP8 values + a float32 scale per 128-value block


def remote_shares(*, expert_parallel_size, domain_gpus):
    """Shares of a GPU's (token, expert) pairs sent over NVLink and over the scale-out network:
    ((D − 1)/EP, (EP − D)/EP) with D = min(EP, domain).

    >>> [round(float(x), 4) for x in remote_shares(expert_parallel_size=16, domain_gpus=8)]
    [0.4375, 0.5]
    """
    ep = np.asarray(expert_parallel_size, dtype=float)
    d = np.minimum(ep, np.asarray(domain_gpus, dtype=float))
    return (d - 1.0) / ep, (ep - d) / ep


def distinct_nodes(*, nodes, experts_per_token):
    """Expected distinct nodes among a token's k experts, uniform over N nodes: N·(1 − (1 − 1/N)^k).

    >>> round(float(distinct_nodes(nodes=2, experts_per_token=8)), 3)
    1.992
    """
    n = np.maximum(np.asarray(nodes, dtype=float), 1.0)
    return n * (1.0 - (1.0 - 1.0 / n) ** np.asarray(experts_per_token, dtype=float))


def all_to_all_phase_s(*, tokens, experts_per_token, hidden_size, bytes_per_element, expert_parallel_size,
                       domain_gpus, nvlink_bw_bytes_per_s, scale_out_bw_bytes_per_s, latency_s,
                       high_throughput=False):
    """One dispatch or combine phase of one MoE layer (module docstring), both regimes.

    >>> t = all_to_all_phase_s(tokens=128, experts_per_token=8, hidden_size=7168, bytes_per_element=1.0,
    ...     expert_parallel_size=16, domain_gpus=8, nvlink_bw_bytes_per_s=160e9, scale_out_bw_bytes_per_s=45e9,
    ...     latency_s=35e-6)
    >>> round(float(t) * 1e6)   # DeepEP README, EP16 low-latency dispatch: 118 us
    117
    """
    n = np.asarray(tokens, dtype=float)
    ep = np.asarray(expert_parallel_size, dtype=float)
    k = np.asarray(experts_per_token, dtype=float)
    intra, inter = remote_shares(expert_parallel_size=ep, domain_gpus=domain_gpus)
    per_pair = np.asarray(hidden_size, dtype=float) * bytes_per_element
    nodes = np.maximum(ep / np.minimum(ep, np.asarray(domain_gpus, dtype=float)), 1.0)
    # high throughput: one copy per remote node (the (nodes − 1)/nodes share of distinct nodes)
    remote_node_copies = distinct_nodes(nodes=nodes, experts_per_token=k) * (nodes - 1.0) / nodes
    inter_pairs = np.where(np.asarray(high_throughput, dtype=bool), remote_node_copies, k * inter)
    t_nv = n * k * intra * per_pair / np.asarray(nvlink_bw_bytes_per_s, dtype=float)
    t_net = n * inter_pairs * per_pair / np.asarray(scale_out_bw_bytes_per_s, dtype=float)
    return np.where((ep > 1) & (n > 0), latency_s + np.maximum(t_nv, t_net), 0.0)


def moe_all_to_all_s(*, tokens, num_moe_layers, experts_per_token, hidden_size, dispatch_bytes_per_element,
                     combine_bytes_per_element, expert_parallel_size, domain_gpus, nvlink_bw_bytes_per_s,
                     scale_out_bw_bytes_per_s, latency_s, high_throughput=False):
    """All-to-all time of one step: L_moe · (t_dispatch + t_combine).

    DeepSeek-V3 decode on 16 H200 (EP 16, 2 nodes), 64 tokens per GPU, FP8 dispatch:
    58 layers · (77 µs dispatch + 117 µs combine) = 11.2 ms.

    >>> t = moe_all_to_all_s(tokens=64, num_moe_layers=58, experts_per_token=8, hidden_size=7168,
    ...     dispatch_bytes_per_element=1.03125, combine_bytes_per_element=2, expert_parallel_size=16, domain_gpus=8,
    ...     nvlink_bw_bytes_per_s=315e9, scale_out_bw_bytes_per_s=45e9, latency_s=35e-6)
    >>> round(float(t) * 1e3, 1)
    11.2
    """
    common = dict(tokens=tokens, experts_per_token=experts_per_token, hidden_size=hidden_size,
                  expert_parallel_size=expert_parallel_size, domain_gpus=domain_gpus,
                  nvlink_bw_bytes_per_s=nvlink_bw_bytes_per_s, scale_out_bw_bytes_per_s=scale_out_bw_bytes_per_s,
                  latency_s=latency_s, high_throughput=high_throughput)
    return np.asarray(num_moe_layers, dtype=float) * (
        all_to_all_phase_s(bytes_per_element=dispatch_bytes_per_element, **common)
        + all_to_all_phase_s(bytes_per_element=combine_bytes_per_element, **common))
