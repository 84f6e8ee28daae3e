"""Pipeline parallelism in the step time: stages, micro-batches, the bubble and the hand-over.

vLLM V1 with ``--pipeline-parallel-size PP`` keeps up to PP batches in flight (one per stage);
the scheduler splits the running sequences into m = min(PP, sequences) micro-batches of b = B/m.
Stage s runs its ℓ_s = L/PP layers on TP GPUs; a micro-batch passes all stages in turn and hands
its hidden states (and residual) to the next stage over the link between them.

    round (every sequence advances one step) = Σ_s t_s(b) + (PP − 1) · t_hop(b)
                                              ≈ t_model(b) + (PP − 1) · t_hop(b)
    t_hop(b) = α + 2 · b · h · b_act / TP / B_link      (vLLM splits the tensors over the TP ranks
                                                          and all-gathers them on arrival)
    bubble = 1 − m / PP                                   (share of stage time idle)

With m = PP micro-batches every stage is busy and a round takes PP stage times of b = B/PP, the
same as the whole model on b: PP adds memory (KV, weights per GPU) and throughput at a given
latency, never a faster single request. With m < PP (few sequences) the other stages idle.
"""

from __future__ import annotations

import numpy as np


def micro_batches(*, sequences, pipeline_parallel_size):
    """Micro-batches in flight: m = min(PP, max(sequences, 1)).

    >>> micro_batches(sequences=[1, 3, 64], pipeline_parallel_size=2).tolist()
    [1.0, 2.0, 2.0]
    """
    return np.clip(np.asarray(sequences, dtype=float), 1.0, np.asarray(pipeline_parallel_size, dtype=float))


def bubble_fraction(*, sequences, pipeline_parallel_size):
    """Idle share of each stage: 1 − m / PP.

    >>> bubble_fraction(sequences=[1, 8], pipeline_parallel_size=4).tolist()
    [0.75, 0.0]
    """
    pp = np.asarray(pipeline_parallel_size, dtype=float)
    return 1.0 - micro_batches(sequences=sequences, pipeline_parallel_size=pp) / pp


def stage_hop_s(*, tokens, hidden_size, activation_bytes, tensor_parallel_size, link_bw_bytes_per_s, latency_s):
    """Hand-over of one micro-batch of ``tokens`` to the next stage (module docstring).

    Llama-3.1-405B, 8192 prefill tokens, BF16, TP 8, 400 Gb/s NIC at 45 GB/s: 2·8192·16384·2/8 B
    = 67 MB / 45 GB/s = 1.49 ms + 35 µs.

    >>> round(float(stage_hop_s(tokens=8192, hidden_size=16384, activation_bytes=2, tensor_parallel_size=8,
    ...     link_bw_bytes_per_s=45e9, latency_s=35e-6)) * 1e3, 2)
    1.53
    """
    n = np.asarray(tokens, dtype=float)
    s = 2.0 * n * np.asarray(hidden_size) * activation_bytes / np.asarray(tensor_parallel_size)
    return np.where(n > 0, latency_s + s / np.asarray(link_bw_bytes_per_s, dtype=float), 0.0)
