"""Closed-loop serving model: C clients, each sending a request of I input and O output tokens
as soon as the previous one returns; steady state of a vLLM-style continuous-batching engine.

Derivation (all quantities per GPU step, broadcast over arrays):
  R = running sequences = min(C, max_num_seqs, KV capacity at the mean context I + O/2).
  T_dec = step time of R decodes at mean context I + O/2.
  Without chunked prefill a new prompt runs as its own step (decodes stall):
      T_pf = T_step(prefill n·I) / n, with n prompts batched (arrivals R/O per step,
      at most max_num_batched_tokens / I).
  With chunked prefill the prompt rides along the decodes in k = ceil(I / (budget − R)) chunks;
      its cost is only the extra time of those steps: T_pf = k · (T_step(R−1, c) − T_step(R−1, 0)).
  Throughput X (requests/s) and TPOT solve the closed loop (a quadratic in y = T_dec / TPOT):
      TPOT = T_dec / (1 − X · T_pf · (R − 1)/R)          (others' prefills interleave)
      E2E_service = TTFT_service + (O − 1) · TPOT,   X = R / E2E_service
  With C > R, the extra clients wait: E2E = C / X (Little's law), TTFT = wait + TTFT_service.
TPOT follows vLLM's benchmark definition (E2E − TTFT)/(O − 1); mean ITL equals it here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from calc.perf import StepTime, step_time
from calc.roofline import causal_attention_pairs, step_op_costs



@dataclass(frozen=True)
class EngineNumbers:
    """Per-GPU numbers of a model on a GPU under TP, plus efficiencies. Any field may be an array."""

    num_layers: object
    hidden_size: object
    vocab_per_rank: object
    qkv_params: object
    o_params: object
    mlp_dense_params: object
    expert_params: object
    shared_expert_params: object
    num_experts: object
    experts_per_token: object
    linear_bytes_per_param: object
    activation_bytes: object
    kv_bytes_per_token: object
    attn_flops_per_pair_decode: object
    attn_flops_per_pair_prefill: object
    q_o_width: object
    mlp_width: object
    active_params_per_token: object  # whole model (all ranks), for MFU
    peak_flops_per_s: object
    attention_peak_flops_per_s: object
    hbm_bw_bytes_per_s: object
    link_bw_bytes_per_s: object
    tensor_parallel_size: object
    hbm_bw_fraction: object
    prefill_flops_fraction: object
    decode_flops_fraction: object
    gemm_half_saturation_tokens: object
    step_overhead_s: object
    allreduce_latency_s: object
    request_overhead_s: object = 0.0

    def index(self, i) -> "EngineNumbers":
        """The same numbers at index ``i`` of every array field (scalars stay)."""
        return EngineNumbers(**{f.name: (np.asarray(getattr(self, f.name))[i]
                                         if np.ndim(getattr(self, f.name)) else getattr(self, f.name))
                                for f in fields(self)})


def engine_step(e: EngineNumbers, *, decode_tokens, decode_context_tokens_sum, prefill_tokens,
                prefill_attention_pairs, prefill_cached_tokens, logits_tokens) -> StepTime:
    """One step's :class:`StepTime` for the given batch composition."""
    costs = step_op_costs(
        decode_tokens=decode_tokens, decode_context_tokens_sum=decode_context_tokens_sum,
        prefill_tokens=prefill_tokens, prefill_attention_pairs=prefill_attention_pairs,
        prefill_cached_tokens=prefill_cached_tokens, logits_tokens=logits_tokens,
        num_layers=e.num_layers, hidden_size=e.hidden_size, vocab_size=e.vocab_per_rank,
        qkv_params=e.qkv_params, o_params=e.o_params, mlp_dense_params=e.mlp_dense_params,
        expert_params=e.expert_params, shared_expert_params=e.shared_expert_params,
        num_experts=e.num_experts, experts_per_token=e.experts_per_token,
        linear_bytes_per_param=e.linear_bytes_per_param, activation_bytes=e.activation_bytes,
        kv_bytes_per_token=e.kv_bytes_per_token, attn_flops_per_pair_decode=e.attn_flops_per_pair_decode,
        attn_flops_per_pair_prefill=e.attn_flops_per_pair_prefill, q_o_width=e.q_o_width, mlp_width=e.mlp_width)
    return step_time(
        costs=costs, tokens=np.asarray(decode_tokens, dtype=float) + prefill_tokens, prefill_tokens=prefill_tokens,
        peak_flops_per_s=e.peak_flops_per_s, attention_peak_flops_per_s=e.attention_peak_flops_per_s,
        hbm_bw_bytes_per_s=e.hbm_bw_bytes_per_s, hbm_bw_fraction=e.hbm_bw_fraction,
        prefill_flops_fraction=e.prefill_flops_fraction, decode_flops_fraction=e.decode_flops_fraction,
        gemm_half_saturation_tokens=e.gemm_half_saturation_tokens, step_overhead_s=e.step_overhead_s,
        tensor_parallel_size=e.tensor_parallel_size, num_layers=e.num_layers, hidden_size=e.hidden_size,
        activation_bytes=e.activation_bytes, link_bw_bytes_per_s=e.link_bw_bytes_per_s,
        allreduce_latency_s=e.allreduce_latency_s)


def decode_step(e: EngineNumbers, *, batch, context_tokens) -> StepTime:
    """A pure decode step: ``batch`` sequences each attending ``context_tokens`` keys."""
    b = np.asarray(batch, dtype=float)
    return engine_step(e, decode_tokens=b, decode_context_tokens_sum=b * context_tokens, prefill_tokens=0.0,
                       prefill_attention_pairs=0.0, prefill_cached_tokens=0.0, logits_tokens=b)


def prefill_step(e: EngineNumbers, *, prompts, prompt_tokens, decode_batch=0.0, decode_context_tokens=0.0,
                 cached_tokens=0.0) -> StepTime:
    """A step with ``prompts`` chunks of ``prompt_tokens`` new tokens (after ``cached_tokens``
    already cached) plus ``decode_batch`` decodes riding along."""
    n = np.asarray(prompts, dtype=float)
    c = np.asarray(prompt_tokens, dtype=float)
    d = np.asarray(decode_batch, dtype=float)
    return engine_step(e, decode_tokens=d, decode_context_tokens_sum=d * decode_context_tokens,
                       prefill_tokens=n * c,
                       prefill_attention_pairs=n * causal_attention_pairs(new_tokens=c, cached_tokens=cached_tokens),
                       prefill_cached_tokens=n * np.asarray(cached_tokens, dtype=float),
                       logits_tokens=d + n)


@dataclass(frozen=True)
class ServingResult:
    """Steady-state closed-loop metrics; throughputs are for the whole tensor-parallel group."""

    ttft_s: np.ndarray
    tpot_s: np.ndarray
    itl_s: np.ndarray
    e2e_latency_s: np.ndarray
    output_tokens_per_s: np.ndarray
    total_tokens_per_s: np.ndarray
    requests_per_s: np.ndarray
    concurrency: np.ndarray  # clients C
    running: np.ndarray  # sequences the engine holds at once (R)
    waiting: np.ndarray  # clients queued: C − R
    limited_by: np.ndarray  # "none" | "max_num_seqs" | "kv_cache"
    max_concurrency: np.ndarray  # sequences of mean context that fit the KV pool
    fits: np.ndarray
    mfu: np.ndarray
    mbu: np.ndarray
    decode_bound: np.ndarray  # "memory" | "compute"
    prefill_bound: np.ndarray
    decode_step_s: np.ndarray
    prefill_time_per_request_s: np.ndarray  # system time one prompt costs (T_pf)
    prefill_chunks: np.ndarray  # k (1 without chunked prefill)
    prefill_fraction: np.ndarray  # share of engine time spent on prefill work


def closed_loop(e: EngineNumbers, *, input_len, output_len, concurrency, max_num_seqs, max_num_batched_tokens,
                enable_chunked_prefill, kv_capacity_tokens, fits) -> ServingResult:
    """Steady state of the closed loop (module docstring). ``concurrency`` ≤ 0 or NaN means
    "as many as fit" (offline batch); ``kv_capacity_tokens`` is the KV pool in tokens."""
    I = np.asarray(input_len, dtype=float)
    O = np.asarray(output_len, dtype=float)
    budget = np.asarray(max_num_batched_tokens, dtype=float)
    chunked = np.asarray(enable_chunked_prefill, dtype=bool)
    mean_ctx = I + O / 2.0
    kv_cap = np.floor(np.asarray(kv_capacity_tokens, dtype=float) / np.maximum(mean_ctx, 1.0))
    seq_cap = np.asarray(max_num_seqs, dtype=float)
    cap = np.maximum(np.minimum(seq_cap, kv_cap), 1.0)
    c_in = np.asarray(concurrency, dtype=float)
    C = np.where(np.isnan(c_in) | (c_in <= 0), cap, c_in)
    R = np.minimum(C, cap)
    limited = np.where(C < cap, "none", np.where(seq_cap <= kv_cap, "max_num_seqs", "kv_cache"))

    dec = decode_step(e, batch=R, context_tokens=mean_ctx)
    t_dec = dec.step_s
    # Unchunked: prompts batched per prefill step.
    n_pf = np.clip(R / np.maximum(O, 1.0), 1.0, np.maximum(np.floor(budget / I), 1.0))
    pf_whole = prefill_step(e, prompts=n_pf, prompt_tokens=I)
    t_pf_whole = pf_whole.step_s
    # Chunked: k chunks of c tokens beside R − 1 decodes.
    room = np.maximum(budget - (R - 1.0), 1.0)
    k = np.where(chunked, np.ceil(I / room), 1.0)
    c = I / k
    pf_chunk = prefill_step(e, prompts=1.0, prompt_tokens=c, decode_batch=R - 1.0, decode_context_tokens=mean_ctx,
                            cached_tokens=(k - 1.0) / 2.0 * c)
    base = decode_step(e, batch=R - 1.0, context_tokens=mean_ctx).step_s
    t_chunk = pf_chunk.step_s
    t_pf = np.where(chunked, k * np.maximum(t_chunk - np.where(R > 1, base, 0.0), 0.0), t_pf_whole / n_pf)
    wait_inflight = np.where(R > 1, 0.5 * t_dec, 0.0)
    ttft_service = (np.where(chunked, k * t_chunk, t_pf_whole) + wait_inflight
                    + np.asarray(e.request_overhead_s, dtype=float))

    # Closed form of X = R / (S + m·a / y) with y = 1 − X·T_pf·f (f = (R − 1)/R, m = O − 1,
    # a = T_dec, S = TTFT_service): S·y² + (R·T_pf·f + m·a − S)·y − m·a = 0, positive root.
    f = (R - 1.0) / R
    m = np.maximum(O - 1.0, 0.0)
    b = R * t_pf * f + m * t_dec - ttft_service
    y = (-b + np.sqrt(b * b + 4.0 * ttft_service * m * t_dec)) / (2.0 * ttft_service)
    y = np.where(m > 0, np.clip(y, 1e-6, 1.0), 1.0)
    tpot = t_dec / y
    e2e_service = ttft_service + m * tpot
    X = R / e2e_service
    e2e = C / X
    ttft = ttft_service + (e2e - e2e_service)

    # Utilization over the whole timeline: model FLOPs and bytes per request, times X.
    tp = np.asarray(e.tensor_parallel_size, dtype=float)
    pf_flops = np.where(chunked, k * pf_chunk.flops - np.where(R > 1, k * decode_step(e, batch=R - 1.0, context_tokens=mean_ctx).flops, 0.0),
                        pf_whole.flops / n_pf)
    pf_bytes = np.where(chunked, k * np.maximum(pf_chunk.bytes - np.where(R > 1, decode_step(e, batch=R - 1.0, context_tokens=mean_ctx).bytes, 0.0), 0.0),
                        pf_whole.bytes / n_pf)
    req_flops = pf_flops + (O - 1.0) / R * dec.flops  # per GPU
    req_bytes = pf_bytes + (O - 1.0) / R * dec.bytes
    # Not clipped: the roofline guarantees ≤ 1 (a property test checks it).
    mfu = req_flops * X / np.asarray(e.peak_flops_per_s, dtype=float)
    mbu = req_bytes * X / np.asarray(e.hbm_bw_bytes_per_s, dtype=float)
    del tp
    fit = np.asarray(fits, dtype=bool) & (kv_cap >= 1)
    nan = np.where(fit, 1.0, np.nan)
    return ServingResult(
        ttft_s=ttft * nan, tpot_s=tpot * nan, itl_s=tpot * nan, e2e_latency_s=e2e * nan,
        output_tokens_per_s=X * O * nan, total_tokens_per_s=X * (I + O) * nan, requests_per_s=X * nan,
        concurrency=C, running=R, waiting=C - R, limited_by=limited, max_concurrency=kv_cap, fits=fit,
        mfu=mfu * nan, mbu=mbu * nan, decode_bound=dec.bound, prefill_bound=np.where(chunked, pf_chunk.bound, pf_whole.bound),
        decode_step_s=t_dec, prefill_time_per_request_s=t_pf, prefill_chunks=k,
        prefill_fraction=np.clip(X * t_pf, 0.0, 1.0))
