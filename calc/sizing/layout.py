"""What one GPU holds under pipeline, data and expert parallelism (beside TP's slicing).

vLLM's semantics (vllm/config/parallel.py, vllm/distributed/utils.py, fused_moe/layer.py):

- ``--pipeline-parallel-size PP`` splits the L decoder layers into PP stages of ⌊L/PP⌋ layers, the
  L mod PP extra layers going one each to the stages just before the last
  (``get_pp_indices``); the first stage also holds the embedding, the last the LM head. Each stage
  has its own KV cache for its layers, so a GPU's KV bytes per token fall with its layers.
- ``--data-parallel-size DP``: DP engine replicas (each TP × PP GPUs). Every replica holds its own
  attention weights and its own KV cache for its own requests: for MLA, whose single latent KV
  head is copied on every TP rank, DP attention (TP 1, DP N) stores N different requests'
  latents where TP N stores one request's N times.
- ``--enable-expert-parallel``: the routed experts are not sliced by TP but placed whole on the
  EP = TP × DP ranks, ⌈E / EP⌉ on the busiest rank (``determine_expert_map`` gives the first
  E mod EP ranks one more); attention, dense MLPs and shared experts stay as TP sets them.

:func:`rank_numbers` turns whole-model :class:`ModelNumbers` into the numbers the per-GPU memory
formulas (which divide by TP) need for the heaviest GPU, so that ``memory_model`` itself is
unchanged: with PP = DP = 1 and no EP it returns its input.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from calc.spec.inputs import ModelArch


def pipeline_stage_layers(*, num_layers: int, pipeline_parallel_size: int) -> tuple[int, ...]:
    """Decoder layers per stage as vLLM's ``get_pp_indices`` assigns them: ⌊L/PP⌋ each, the
    remainder one each to the stages before the last (the last holds the LM head).

    >>> pipeline_stage_layers(num_layers=126, pipeline_parallel_size=2)   # Llama-3.1-405B
    (63, 63)
    >>> pipeline_stage_layers(num_layers=61, pipeline_parallel_size=4)    # DeepSeek-V3
    (15, 15, 16, 15)
    """
    L, pp = int(num_layers), int(pipeline_parallel_size)
    parts = [L // pp] * pp
    for i in range(2, L % pp + 2):
        parts[-i] += 1
    return tuple(parts)


def expert_parallel_size(*, tensor_parallel_size, data_parallel_size, enable_expert_parallel):
    """EP ranks: TP × DP with ``--enable-expert-parallel``, else 1 (experts sliced by TP instead).

    >>> int(expert_parallel_size(tensor_parallel_size=1, data_parallel_size=16, enable_expert_parallel=True))
    16
    """
    return np.where(np.asarray(enable_expert_parallel, dtype=bool),
                    np.asarray(tensor_parallel_size) * np.asarray(data_parallel_size), 1).astype(int)[()]


def experts_on_busiest_rank(*, num_experts, expert_parallel_size, num_redundant_experts=0):
    """Routed experts on the busiest EP rank: ⌈(E + R) / EP⌉ (vLLM ``determine_expert_map`` over
    ``global_num_experts`` = E + R). R redundant copies of busy experts are what expert-parallel load
    balancing adds: vLLM ``--num-redundant-experts`` (with ``--enable-eplb``), SGLang
    ``--ep-num-redundant-experts`` (its EPMoE holds (E + R) / EP per rank).

    >>> experts_on_busiest_rank(num_experts=256, expert_parallel_size=[8, 16, 96]).tolist()
    [32, 16, 3]
    >>> experts_on_busiest_rank(num_experts=256, expert_parallel_size=[8, 16], num_redundant_experts=32).tolist()
    [36, 18]
    """
    e = np.asarray(num_experts) + np.asarray(num_redundant_experts)
    return (-(-e // np.asarray(expert_parallel_size)))[()]


def rank_numbers(arch: ModelArch, n, *, tensor_parallel_size: int = 1, pipeline_parallel_size: int = 1,
                 data_parallel_size: int = 1, enable_expert_parallel: bool = False, num_redundant_experts: int = 0):
    """``ModelNumbers`` of the heaviest GPU's share, scaled so that the TP formulas
    (``sharded / TP + replicated + …``) give that GPU's bytes (module docstring).

    Stage s of PP holds ℓ_s layers: its decoder weights are the per-layer weights of its layers
    (dense-MLP layers first, then MoE layers), plus the embedding (s = 0) or LM head (s = PP − 1);
    its KV bytes per token are ℓ_s / L of the model's. Under EP a MoE layer's routed experts on one
    GPU are ⌈(E+R)/EP⌉ / E of the layer's (R redundant experts, :func:`experts_on_busiest_rank`),
    entered as that × TP so that the TP division gives it back.
    The stage with the most weight bytes is returned (vLLM sizes the KV blocks on the tightest
    worker). DeepSeek-V3 FP8, TP 1 × DP 8 with EP: 21.1 GB of attention (2.0 GB of it the BF16
    W_UK/W_UV copies), dense layers, shared experts, embedding and head + 654 GB of routed experts / 8
    = 102.9 GB (95.8 GiB) per GPU.
    """
    tp, pp, dp = int(tensor_parallel_size), int(pipeline_parallel_size), int(data_parallel_size)
    ep = int(expert_parallel_size(tensor_parallel_size=tp, data_parallel_size=dp,
                                  enable_expert_parallel=enable_expert_parallel))
    if pp == 1 and ep == 1:
        return n
    p, L = n.params, arch.num_hidden_layers
    b_lin, b_act = n.linear_bytes_per_param, n.activation_bytes
    moe = arch.moe
    first_moe = L if moe is None else moe.first_dense_layers
    expert_bytes = p.experts * b_lin
    edge = {"embedding": (p.embedding + p.extra) * b_act, "head": p.lm_head * b_act}
    dense_mlp_bytes = p.dense_mlp * b_lin
    # The rest of the sharded bytes (attention, shared experts): spread evenly over the layers.
    rest = n.sharded_weight_bytes - expert_bytes - edge["embedding"] - edge["head"] - dense_mlp_bytes
    n_moe = L - first_moe
    share = 1.0 if ep == 1 else experts_on_busiest_rank(num_experts=moe.num_experts, expert_parallel_size=ep,
                                                        num_redundant_experts=num_redundant_experts) \
        / moe.num_experts * tp
    best = None
    start = 0
    for s, layers in enumerate(pipeline_stage_layers(num_layers=L, pipeline_parallel_size=pp)):
        dense_here = max(0, min(start + layers, first_moe) - start)
        moe_here = layers - dense_here
        sharded = (rest * layers / L + dense_mlp_bytes * (dense_here / first_moe if first_moe else 0.0)
                   + expert_bytes * (moe_here / n_moe if n_moe else 0.0) * share
                   + (edge["embedding"] if s == 0 else 0.0) + (edge["head"] if s == pp - 1 else 0.0))
        frac = layers / L
        if best is None or sharded + n.replicated_weight_bytes * frac > best[0]:
            best = (sharded + n.replicated_weight_bytes * frac, sharded, frac)
        start += layers
    _, sharded, frac = best
    k_eff = n.experts_per_token
    if ep > 1 and n.experts_per_token:
        # Fused-MoE workspaces on one EP rank: the T·DP·k/EP = T·k/TP token-expert pairs it
        # receives, each with an unsliced expert (I_e, not I_e/TP): k/TP pairs of I_e·TP.
        k_eff = n.experts_per_token / tp
    return dataclasses.replace(
        n, sharded_weight_bytes=float(sharded), replicated_weight_bytes=n.replicated_weight_bytes * frac,
        kv_proj_bytes_per_head=n.kv_proj_bytes_per_head * frac,
        kv_bytes_per_token_per_head_full=n.kv_bytes_per_token_per_head_full * frac,
        kv_bytes_per_token_per_head_sliding=n.kv_bytes_per_token_per_head_sliding * frac,
        experts_per_token=k_eff,
        expert_intermediate_size=n.expert_intermediate_size * (tp if ep > 1 else 1))


def sglang_dp_attention_weight_bytes(arch: ModelArch, n, *, dp_size: int, num_redundant_experts: int = 0,
                                     enable_dp_lm_head: bool = False, moe_dense_tp_size: int | None = None) -> float:
    """Weights on one GPU of SGLang's DeepSeek layout ``--tp N --dp N --enable-dp-attention
    --enable-deepep-moe`` (``n``: whole-model :class:`ModelNumbers`). Not vLLM's: the engine is the
    input here (``models/deepseek_v2.py``, ``layers/dp_attention.py``, ``layers/moe/ep_moe``):

    - attention: attention TP = N / N = 1, whole on every GPU (as vLLM's TP 1 × DP N);
    - embedding: ``VocabParallelEmbedding(enable_tp=not enable_dp_attention)``, whole (as vLLM);
    - shared experts: ``DeepseekV2MLP(tp_size=1)`` under DeepEP, whole (as vLLM);
    - routed experts: (E + R) / N per GPU, R = ``--ep-num-redundant-experts``;
    - LM head: ``ParallelLMHead`` over the whole TP group (vocab / N per GPU) unless
      ``--enable-dp-lm-head`` (attention TP group of 1: whole); vLLM's DP replica holds it whole;
    - dense MLPs of the first layers: sliced over N unless ``--moe-dense-tp-size 1`` (whole).

    So it is vLLM's DP N + EP rank (:func:`rank_numbers`, with R) minus (1 − 1/N) of the LM head
    and of the dense MLPs where SGLang slices them. DeepSeek-V3 FP8, N = 8, R = 32, dense TP 1,
    LM head sliced: 36 experts per GPU instead of 32 and 7/8 of a 1.85 GB head less (tests).
    """
    r = rank_numbers(arch, n, tensor_parallel_size=1, data_parallel_size=dp_size, enable_expert_parallel=True,
                     num_redundant_experts=num_redundant_experts)
    keep = 1.0 - 1.0 / dp_size
    w = r.weights_total_bytes
    if not enable_dp_lm_head:
        w -= n.params.lm_head * n.activation_bytes * keep
    if moe_dense_tp_size != 1:
        w -= n.params.dense_mlp * n.linear_bytes_per_param * keep
    return float(w)


def expert_parallel_buffer_bytes(*, expert_parallel_size, spans_nodes, buffer_bytes):
    """Non-torch memory of the EP all-to-all (vLLM's DeepEP buffers): ``buffer_bytes`` of NVLink
    buffer at EP > 1, and as much of RDMA buffer when the EP group leaves the NVLink domain
    (``VLLM_DEEPEP_BUFFER_SIZE_MB`` = 1024 for each).

    >>> expert_parallel_buffer_bytes(expert_parallel_size=[1, 8, 16], spans_nodes=[False, False, True],
    ...     buffer_bytes=2**30).tolist()
    [0.0, 1073741824.0, 2147483648.0]
    """
    ep = np.asarray(expert_parallel_size)
    return np.where(ep > 1, buffer_bytes * (1.0 + np.asarray(spans_nodes, dtype=float)), 0.0)[()]


def nodes_needed(*, world_size, gpus_per_node):
    """Nodes of ``gpus_per_node`` GPUs that hold ``world_size`` = TP × PP × DP GPUs: ⌈W / G⌉.

    >>> nodes_needed(world_size=[8, 16, 12], gpus_per_node=8).tolist()
    [1, 2, 2]
    """
    return (-(-np.asarray(world_size) // np.asarray(gpus_per_node)))[()]


def world_size(*, tensor_parallel_size, pipeline_parallel_size=1, data_parallel_size=1):
    """GPUs a deployment uses: TP × PP × DP.

    >>> int(world_size(tensor_parallel_size=8, pipeline_parallel_size=2))
    16
    """
    return (np.asarray(tensor_parallel_size) * np.asarray(pipeline_parallel_size) * np.asarray(data_parallel_size))[()]


