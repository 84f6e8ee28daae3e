"""Closed-loop serving model: C clients, each sending a request of I input and O output tokens
as soon as the previous one returns; steady state of a vLLM-style continuous-batching engine.

Derivation (all quantities per GPU step, broadcast over arrays):
  R = running sequences = min(C, max_num_seqs, KV capacity at the mean context I + O/2 (sliding-
      window layers hold at most W − 1 + budget tokens),
      and with chunked prefill the token budget: 1 + (O − 1)·budget/(I + O − 1)).
  T_dec = step time of R decodes at mean context I + O/2.
  Without chunked prefill a new prompt runs as its own step (decodes stall):
      T_pf = T_step(prefill n·I) / n, with n prompts batched (arrivals R/O per step,
      at most max_num_batched_tokens / I).
  With chunked prefill the prompt rides along the decodes in k = ceil(I / room) chunks of c = I/k,
      room = budget − (R − 1)(O − 1)/O (the others' decodes go first); its cost is the extra time
      of those steps: T_pf = k · (T_step(r_d, c) − T_step(r_d, 0)), with r_d = (R − 1)(O − 1)/(O − 1 + k)
      of the other sequences decoding (R − 1 for long outputs, none for O = 1).
  Closed loop, steady state: in one cycle of a request every other running request also
  completes one, so the others' prompts cost our request D of engine time per cycle
  (conservation; this keeps utilization ≤ 1). Where D lands depends on the scheduler:
    unchunked (prefill first): D = (R − n)·T_pf stalls our decode steps (n prompts share our
      prefill step); with O = 1 there is no decode phase and D queues ahead of our prompt.
    chunked (decodes first, stall-free): the (R − 1)·k other chunks ride along our O − 1
      decode steps (several per step when they fit the budget) at the extra time they add;
      chunks beyond the budget need steps of their own while our prompt waits, so they land
      in TTFT.
      S = own prefill steps + ½ T_dec (decode step in flight)
      TPOT = T_dec + D_tpot / (O − 1),   TTFT_service = S + D_ttft + t_request + t_api
      E2E_service = TTFT_service + (O − 1) · TPOT,   X = min(R / E2E_service, 1 / t_api)
  (t_api: the API server's time per request; one process does them all, so it caps the requests/s)
  With C > R, the extra clients wait: E2E = C / X (Little's law), TTFT = wait + TTFT_service.
TPOT follows vLLM's benchmark definition (E2E − TTFT)/(O − 1); mean ITL equals it here.

FCFS waves (``uniform_lengths``, the default: every request has the same I and O, as in
``vllm bench serve --random-range-ratio 0`` with C clients started together). The request-level
simulator (:mod:`calc.traffic.simulator`) shows that such a loop never spreads its prompts
evenly: the R prompts come back in a wave each cycle and are prefilled first come first served
in full steps, so a prompt does not ride along light decode steps but waits behind the others.
  chunked: a heavy step holds h = min(R·I, budget − r_h) prompt tokens beside r_h = R − h/I decodes
      (time T_H); the wave lasts W = R·I / h steps. W ≤ 1 (or R = 1): all prompts start one step
      together, all requests finish together, TTFT = t_request + ceil(I/h)·T_H. W > 1: the prompt
      arrives during a heavy step with probability (W − 1)/W (else a decode step), then spans
      k heavy steps, k = 1 + (I − 1)/h in a long wave (W ≥ 12: it starts anywhere in a step), else
      max(I/h, 1) (fitted to the simulator): TTFT = T_arrive + k·T_H,
      T_arrive = ((W − 1)·T_H + T_dec)/W; while it decodes, the other k_h = W − 1 − k heavy steps
      of the wave run: E2E = TTFT + k_h·T_H + (O − 1 − k_h)·T_dec.
  whole prompts (unchunked): n = min(R, budget/I) prompts per prefill-only step (time T_H),
      W = R/n steps in a row while decodes stall; the j-th group waits j − 1 of them:
      TTFT = t_request + (W + 1)/2 · T_H, E2E = t_request + W·T_H + (O − 1)·T_dec.
  TPOT = (E2E − TTFT)/(O − 1). Where the closed form is known to miss the simulated mean
  (chunked waves of 1 < W < 6 steps, where chunk boundaries shift the phase, or W > 60, where a
  queue builds up inside the wave; past the KV wall,
  where vLLM preempts and recomputes; clients queueing for the chunked token budget)
  ``closed_form`` is False and the pages run the simulator.
  With varied lengths (``uniform_lengths=False``, e.g. a ShareGPT-like dataset) prompts spread
  out and the formulas above the line apply.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from calc.timing.perf import StepTime, step_time
from calc.timing.roofline import causal_attention_pairs, step_op_costs, windowed_context_tokens



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
    # vLLM's custom all-reduce (calc.timing.interconnect): allowed for this GPU and TP size, its
    # latency and achievable bus bandwidth; False keeps every all-reduce on NCCL.
    custom_allreduce: object = False
    # Extra bytes per linear weight in steps of ≥ 2 tokens (bitsandbytes' dequantized 16-bit copy).
    dequant_bytes_per_param: object = 0.0
    # Bytes per routed-expert weight where it differs from linear_bytes_per_param (MXFP4); 0: the same.
    expert_bytes_per_param: object = 0.0
    custom_allreduce_latency_s: object = 0.0
    custom_allreduce_bw_bytes_per_s: object = np.inf
    # Sliding-window attention: share of layers with a window of sliding_window tokens (their KV
    # reads and attention FLOPs stop growing past the window). 0 / inf: every layer is full.
    sliding_fraction: object = 0.0
    sliding_window: object = np.inf
    # Engine CPU time per sequence scheduled in a step (calc.spec.inputs.Efficiency.sequence_overhead_s).
    sequence_overhead_s: object = 0.0
    # API-server time per request; one process serves them all (Efficiency.api_server_request_s).
    api_server_request_s: object = 0.0
    # Its share after the last await (Efficiency.api_server_final_share): 1 = first come first served.
    api_server_final_share: object = 1.0
    # Multi-GPU layout (calc.timing.layout; the defaults are TP alone). Expert parallelism: each
    # GPU's experts see the tokens of all DP ranks (expert_token_multiplier = DP), the busiest
    # rank expert_load_imbalance × the mean; the all-to-all of calc.timing.expert_parallel.
    expert_token_multiplier: object = 1.0
    expert_load_imbalance: object = 1.0
    expert_parallel_size: object = 1
    num_moe_layers: object = 0
    ep_domain_gpus: object = 1
    ep_nvlink_bw_bytes_per_s: object = np.inf
    ep_scale_out_bw_bytes_per_s: object = np.inf
    ep_dispatch_bytes_per_element: object = 2.0
    all_to_all_latency_s: object = 0.0
    # Pipeline parallelism (calc.timing.pipeline): stages and the link between them.
    pipeline_parallel_size: object = 1
    pipeline_link_bw_bytes_per_s: object = np.inf
    pipeline_hop_latency_s: object = 0.0
    # Routed-expert GEMMs' share of the FLOP fractions (calc.timing.moe_kernels.expert_flops_scale).
    expert_flops_scale: object = 1.0
    # Routed experts' own half-saturation rows (calc.timing.moe_kernels.expert_half_saturation_rows);
    # None: the dense gemm_half_saturation_tokens.
    expert_half_saturation_tokens: object = None
    # The MoE layers' fixed time per step, L_moe · t_0 (calc.timing.moe_kernels.moe_fixed_time_s); 0: dense.
    moe_fixed_s: object = 0.0
    # The attention backend's kernel (calc.timing.attention_backend): share of FlashAttention's rate
    # its prompt-chunk attention FLOPs and its decodes' KV reads reach; 1: FlashAttention.
    attention_prefill_scale: object = 1.0
    attention_decode_scale: object = 1.0
    # The MLA layers' fixed time per step, L_mla · t_mla (calc.timing.mla_layers.mla_fixed_time_s); 0 without MLA.
    attention_fixed_s: object = 0.0

    def index(self, i) -> "EngineNumbers":
        """The same numbers at index ``i`` of every array field (scalars stay)."""
        return EngineNumbers(**{f.name: (np.asarray(getattr(self, f.name))[i]
                                         if np.ndim(getattr(self, f.name)) else getattr(self, f.name))
                                for f in fields(self)})


def engine_op_costs(e: EngineNumbers, *, decode_tokens, decode_context_tokens_sum, prefill_tokens,
                    prefill_attention_pairs, prefill_cached_tokens, logits_tokens):
    """Per-operator FLOPs and bytes (:class:`calc.timing.roofline.OpCosts`) of one step's batch."""
    return step_op_costs(
        decode_tokens=decode_tokens, decode_context_tokens_sum=decode_context_tokens_sum,
        prefill_tokens=prefill_tokens, prefill_attention_pairs=prefill_attention_pairs,
        prefill_cached_tokens=prefill_cached_tokens, logits_tokens=logits_tokens,
        num_layers=e.num_layers, hidden_size=e.hidden_size, vocab_size=e.vocab_per_rank,
        qkv_params=e.qkv_params, o_params=e.o_params, mlp_dense_params=e.mlp_dense_params,
        expert_params=e.expert_params, shared_expert_params=e.shared_expert_params,
        num_experts=e.num_experts, experts_per_token=e.experts_per_token,
        linear_bytes_per_param=e.linear_bytes_per_param, activation_bytes=e.activation_bytes,
        kv_bytes_per_token=e.kv_bytes_per_token, attn_flops_per_pair_decode=e.attn_flops_per_pair_decode,
        attn_flops_per_pair_prefill=e.attn_flops_per_pair_prefill, q_o_width=e.q_o_width, mlp_width=e.mlp_width,
        dequant_bytes_per_param=e.dequant_bytes_per_param, expert_bytes_per_param=e.expert_bytes_per_param,
        expert_token_multiplier=e.expert_token_multiplier, expert_load_imbalance=e.expert_load_imbalance)


def engine_step(e: EngineNumbers, *, decode_tokens, decode_context_tokens_sum, prefill_tokens,
                prefill_attention_pairs, prefill_cached_tokens, logits_tokens) -> StepTime:
    """One step's :class:`StepTime` for the given batch composition (with pipeline parallelism:
    one round of its micro-batches, :func:`calc.timing.layout.pipeline_round`)."""
    batch = dict(decode_tokens=decode_tokens, decode_context_tokens_sum=decode_context_tokens_sum,
                 prefill_tokens=prefill_tokens, prefill_attention_pairs=prefill_attention_pairs,
                 prefill_cached_tokens=prefill_cached_tokens, logits_tokens=logits_tokens)
    if np.any(np.asarray(e.pipeline_parallel_size) > 1):
        from calc.timing.layout import pipeline_round
        return pipeline_round(e, _stage_step, **batch)
    return _stage_step(e, **batch)


def _stage_step(e: EngineNumbers, *, decode_tokens, decode_context_tokens_sum, prefill_tokens,
                prefill_attention_pairs, prefill_cached_tokens, logits_tokens) -> StepTime:
    costs = engine_op_costs(e, decode_tokens=decode_tokens, decode_context_tokens_sum=decode_context_tokens_sum,
                            prefill_tokens=prefill_tokens, prefill_attention_pairs=prefill_attention_pairs,
                            prefill_cached_tokens=prefill_cached_tokens, logits_tokens=logits_tokens)
    return step_time(
        costs=costs, tokens=np.asarray(decode_tokens, dtype=float) + prefill_tokens, prefill_tokens=prefill_tokens,
        peak_flops_per_s=e.peak_flops_per_s, attention_peak_flops_per_s=e.attention_peak_flops_per_s,
        hbm_bw_bytes_per_s=e.hbm_bw_bytes_per_s, hbm_bw_fraction=e.hbm_bw_fraction,
        prefill_flops_fraction=e.prefill_flops_fraction, decode_flops_fraction=e.decode_flops_fraction,
        gemm_half_saturation_tokens=e.gemm_half_saturation_tokens, step_overhead_s=e.step_overhead_s,
        tensor_parallel_size=e.tensor_parallel_size, num_layers=e.num_layers, hidden_size=e.hidden_size,
        activation_bytes=e.activation_bytes, link_bw_bytes_per_s=e.link_bw_bytes_per_s,
        allreduce_latency_s=e.allreduce_latency_s, custom_allreduce=e.custom_allreduce,
        sequences=logits_tokens, sequence_overhead_s=e.sequence_overhead_s,
        custom_allreduce_latency_s=e.custom_allreduce_latency_s,
        custom_allreduce_bw_bytes_per_s=e.custom_allreduce_bw_bytes_per_s,
        extra_comm_s=_all_to_all_s(e, np.asarray(decode_tokens, dtype=float) + prefill_tokens, prefill_tokens),
        expert_flops_scale=e.expert_flops_scale, expert_half_saturation_tokens=e.expert_half_saturation_tokens,
        moe_fixed_s=e.moe_fixed_s, attention_prefill_scale=e.attention_prefill_scale,
        attention_decode_scale=e.attention_decode_scale, attention_fixed_s=e.attention_fixed_s)


def _all_to_all_s(e: EngineNumbers, tokens, prefill_tokens):
    """Expert-parallel dispatch + combine of the step (0 without EP; calc.timing.expert_parallel)."""
    if np.all(np.asarray(e.expert_parallel_size) <= 1):
        return 0.0
    from calc.timing.expert_parallel import moe_all_to_all_s
    return moe_all_to_all_s(
        tokens=tokens / np.asarray(e.tensor_parallel_size, dtype=float), num_moe_layers=e.num_moe_layers,
        experts_per_token=e.experts_per_token, hidden_size=e.hidden_size,
        dispatch_bytes_per_element=e.ep_dispatch_bytes_per_element, combine_bytes_per_element=e.activation_bytes,
        expert_parallel_size=e.expert_parallel_size, domain_gpus=e.ep_domain_gpus,
        nvlink_bw_bytes_per_s=e.ep_nvlink_bw_bytes_per_s, scale_out_bw_bytes_per_s=e.ep_scale_out_bw_bytes_per_s,
        latency_s=e.all_to_all_latency_s, high_throughput=np.asarray(prefill_tokens) > 0)


def mean_decode_context_tokens(*, input_len, output_len, output_cv=0.0):
    """Keys a running sequence reads at a decode step, averaged over the steps of many requests:
    a request is in the batch for its O decode steps, so the batch holds long outputs more often
    than they are asked (length-biased), E[Σ_j (I + j)] / E[O] = I + E[O²] / (2·E[O]):

        I + O·(1 + C_O²) / 2

    for outputs of mean O and coefficient of variation C_O (independent of the prompts); fixed
    outputs (C_O = 0, NaN read as 0): I + O / 2. The same count sizes the KV a running sequence holds.

    >>> float(mean_decode_context_tokens(input_len=1000, output_len=500)), float(mean_decode_context_tokens(
    ...     input_len=1000, output_len=500, output_cv=1.0))
    (1250.0, 1500.0)
    """
    cv = np.nan_to_num(np.asarray(output_cv, dtype=float), nan=0.0)
    return np.asarray(input_len, dtype=float) + np.asarray(output_len, dtype=float) / 2.0 * (1.0 + cv ** 2)


def decode_step(e: EngineNumbers, *, batch, context_tokens) -> StepTime:
    """A pure decode step: ``batch`` sequences each attending ``context_tokens`` keys (fewer in
    sliding-window layers, see :func:`calc.timing.roofline.windowed_context_tokens`)."""
    b = np.asarray(batch, dtype=float)
    ctx = windowed_context_tokens(context_tokens=context_tokens, sliding_window=e.sliding_window,
                                  sliding_fraction=e.sliding_fraction)
    return engine_step(e, decode_tokens=b, decode_context_tokens_sum=b * ctx, prefill_tokens=0.0,
                       prefill_attention_pairs=0.0, prefill_cached_tokens=0.0, logits_tokens=b)


def prefill_step(e: EngineNumbers, *, prompts, prompt_tokens, decode_batch=0.0, decode_context_tokens=0.0,
                 cached_tokens=0.0) -> StepTime:
    """A step with ``prompts`` chunks of ``prompt_tokens`` new tokens (after ``cached_tokens``
    already cached) plus ``decode_batch`` decodes riding along. Sliding-window layers attend and
    re-read at most the window."""
    n = np.asarray(prompts, dtype=float)
    c = np.asarray(prompt_tokens, dtype=float)
    d = np.asarray(decode_batch, dtype=float)
    phi, w = np.asarray(e.sliding_fraction, dtype=float), e.sliding_window
    pairs = ((1.0 - phi) * causal_attention_pairs(new_tokens=c, cached_tokens=cached_tokens)
             + phi * causal_attention_pairs(new_tokens=c, cached_tokens=cached_tokens, window=w))
    dec_ctx = windowed_context_tokens(context_tokens=decode_context_tokens, sliding_window=w, sliding_fraction=phi)
    cached_read = windowed_context_tokens(context_tokens=cached_tokens, sliding_window=w, sliding_fraction=phi)
    return engine_step(e, decode_tokens=d, decode_context_tokens_sum=d * dec_ctx,
                       prefill_tokens=n * c, prefill_attention_pairs=n * pairs,
                       prefill_cached_tokens=n * cached_read, logits_tokens=d + n)


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
    # "none" | "max_num_seqs" | "kv_cache" | "max_num_batched_tokens" (chunked) | "api_server" (the
    # API server's requests/s, not the engine, bounds the loop)
    limited_by: np.ndarray
    # Sequences of mean context I + O/2 that fit the KV pool (the engine's KV limit on R). Not vLLM's
    # "maximum concurrency" (requests of max_model_len tokens: calc.sizing.scenario.MemoryResult).
    kv_sequences_at_mean_context: np.ndarray
    token_budget_cap: np.ndarray  # chunked prefill: 1 + (O − 1)·budget / (I + O − 1); inf without
    fits: np.ndarray
    mfu: np.ndarray
    mbu: np.ndarray
    decode_bound: np.ndarray  # "memory" | "compute"
    # The prefill's own work: its extra compute time against its extra memory time over the decode
    # step it rides on (chunked), or the whole-prompt step (unchunked).
    prefill_bound: np.ndarray
    prefill_step_bound: np.ndarray  # the whole step the prefill runs in (chunk + decodes riding along)
    decode_step_s: np.ndarray
    prefill_time_per_request_s: np.ndarray  # system time one prompt costs (T_pf)
    prefill_chunks: np.ndarray  # k (1 without chunked prefill)
    prefill_fraction: np.ndarray  # share of engine time spent on prefill work
    wave_steps: np.ndarray = None  # W: steps the FCFS wave of prompts takes (uniform lengths; NaN when spread)
    closed_form: np.ndarray = None  # False where the mean TTFT needs the simulator (module docstring)
    # Spread prompts of k > 1 chunks (closed loop): the mean wait W for the token budget and its load ρ
    # (the share of arrivals that wait) of calc.traffic.chunk_queue at the loop's X; NaN elsewhere.
    budget_queue_wait_s: np.ndarray = None
    budget_queue_load: np.ndarray = None
    # ... and its load while busy, ρ_b: the arrivals during one prompt's service in a run of full steps
    # (the tail of the wait, calc.traffic.chunk_queue.budget_wait_quantile_s)
    budget_queue_busy_load: np.ndarray = None


# ServingResult.limited_by, by index (closed_loop)
LIMITED_BY = np.array(["none", "max_num_seqs", "kv_cache", "max_num_batched_tokens", "api_server"])


def closed_loop(e: EngineNumbers, *, input_len, output_len, concurrency, max_num_seqs, max_num_batched_tokens,
                enable_chunked_prefill, kv_capacity_tokens, fits, uniform_lengths=True, speculative=None,
                cached_prompt_tokens=0.0, output_cv=None, input_cv=None) -> ServingResult:
    """Steady state of the closed loop (module docstring). ``concurrency`` ≤ 0 or NaN means
    "as many as fit" (offline batch); ``kv_capacity_tokens`` is the KV pool in tokens;
    ``uniform_lengths`` adds the FCFS wave of identical requests (module docstring).
    ``speculative`` (a :class:`calc.timing.speculative.Drafter`): every decode step is a
    speculative step seen per output token (:func:`calc.timing.speculative.per_token_step`);
    prefill chunks riding along are costed beside plain decodes (an approximation).
    ``cached_prompt_tokens`` H: tokens of each prompt found in the prefix cache
    (:mod:`calc.traffic.prefix_cache`): only I − H are prefilled, after H cached keys, while the
    KV a sequence holds is still its whole context. ``output_cv``: the output lengths' coefficient of
    variation (lognormal), where known (> 0): the clients' think times in the budget's queue
    (:func:`calc.traffic.chunk_queue.think_time_variance`); None, 0 or NaN: exponential ones.
    ``input_cv``: the prompts' (lognormal, > 0): where they span k > 1 chunks, the budget queue's
    service spread and each prompt's own chunk steps (:func:`_chunk_queue_ttft`); prompts that fit
    one step take the mean prompt's (None, 0: fixed prompts)."""
    I_ctx = np.asarray(input_len, dtype=float)
    H = np.asarray(cached_prompt_tokens, dtype=float)
    I = I_ctx - H  # prompt tokens computed (all of them without a cache hit)
    O = np.asarray(output_len, dtype=float)
    budget = np.asarray(max_num_batched_tokens, dtype=float)
    chunked = np.asarray(enable_chunked_prefill, dtype=bool)
    # keys a decode reads, length-biased where the outputs spread (mean_decode_context_tokens)
    mean_ctx = mean_decode_context_tokens(input_len=I_ctx, output_len=O, output_cv=0.0 if output_cv is None else output_cv)
    m = np.maximum(O - 1.0, 0.0)  # decode steps per request after the first token
    # Speculation (calc.timing.speculative): τ tokens per decode step, so m_s = m / τ decode steps,
    # each taking q = k + 1 tokens of the budget per sequence (its token and its k drafts).
    tau = 1.0 if speculative is None else speculative.tokens_per_step
    q_dec = 1.0 if speculative is None else speculative.num_speculative_tokens + 1.0
    m_s = m / tau
    # KV tokens a running sequence holds: sliding-window layers keep at most W − 1 + budget
    # (calc.sizing.memory.sliding_window_kv_tokens), full layers the whole mean context.
    kv_per_seq = windowed_context_tokens(context_tokens=np.maximum(mean_ctx, 1.0),
                                         sliding_window=np.asarray(e.sliding_window, dtype=float) - 1.0 + budget,
                                         sliding_fraction=e.sliding_fraction)
    kv_cap = np.floor(np.asarray(kv_capacity_tokens, dtype=float) / kv_per_seq)
    seq_cap = np.asarray(max_num_seqs, dtype=float)
    # With chunked prefill every step, decodes included, shares one token budget. The other
    # R − 1 prompts must fit the room our O − 1 decode steps leave, (R − 1)·I ≤ (O − 1)·(budget −
    # (R − 1)), so at most 1 + (O − 1)·budget / (I + O − 1) requests run without queueing for
    # budget; past that they wait (as for max_num_seqs) and throughput stays at this ceiling.
    # (With O = 1 there are no decode steps: prompts share full-budget steps, no cap needed.)
    tok_cap = np.where(chunked & (m > 0), np.floor(1.0 + m_s * budget / (I + m_s * q_dec)), np.inf)
    cap = np.maximum(np.minimum(np.minimum(seq_cap, kv_cap), tok_cap), 1.0)
    c_in = np.asarray(concurrency, dtype=float)
    C = np.where(np.isnan(c_in) | (c_in <= 0), cap, c_in)
    R = np.minimum(C, cap)
    # an index into LIMITED_BY (its names once at the end: string arrays of a million elements are slow)
    limited = np.where(C < cap, 0, np.where(seq_cap <= np.minimum(kv_cap, tok_cap), 1, np.where(kv_cap <= tok_cap, 2, 3)))

    dec = plain = decode_step(e, batch=R, context_tokens=mean_ctx)
    if speculative is not None:  # calc.timing.speculative: verify + draft per step, over τ tokens
        from calc.timing.speculative import per_token_step  # noqa: PLC0415

        dec = per_token_step(e, speculative, batch=R, context_tokens=mean_ctx)
    t_dec = dec.step_s
    t_req = np.asarray(e.request_overhead_s, dtype=float)  # CPU-side latency, not engine time

    # Unchunked: n prompts batched per prefill step (arrivals R/O per step, at most budget/I).
    n_pf = np.clip(R / np.maximum(O, 1.0), 1.0, np.maximum(np.floor(budget / I), 1.0))
    pf_whole = prefill_step(e, prompts=n_pf, prompt_tokens=I, cached_tokens=H)
    t_pf_whole = pf_whole.step_s

    # Chunked: k chunks of c tokens. Each request spends k steps prefilling and O − 1 decoding,
    # so of the R − 1 others r_d = (R − 1)(O − 1)/(O − 1 + k) decode beside our chunk (all of
    # them for long outputs, none when O = 1). The prefill room per step is what their decodes
    # leave, sized with k = 1 (decodes go first): room = budget − (R − 1)(O − 1)/O tokens.
    room = np.maximum(budget - (R - 1.0) * q_dec * m_s / (m_s + 1.0), 1.0)
    k = np.where(chunked, np.ceil(I / room), 1.0)
    c = I / k
    r_d = (R - 1.0) * m_s / (m_s + k)
    cached = H + (k - 1.0) / 2.0 * c  # mean tokens of our prompt already cached when a chunk runs
    own_chunk = prefill_step(e, prompts=1.0, prompt_tokens=c, decode_batch=r_d, decode_context_tokens=mean_ctx,
                             cached_tokens=cached)
    t_chunk = own_chunk.step_s
    base_step = decode_step(e, batch=r_d, context_tokens=mean_ctx)
    base = np.where(r_d > 0, base_step.step_s, 0.0)
    t_pf = np.where(chunked, k * np.maximum(t_chunk - base, 0.0), t_pf_whole / n_pf)  # system time of one prompt

    # The step in flight when our prompt arrives is a decode step of others with probability
    # r_d / (R − 1) = (O − 1)/(O − 1 + k); others' prefill work is counted in full below.
    wait_inflight = np.where(R > 1, 0.5 * t_dec * tau * m_s / (m_s + k), 0.0)
    own = np.where(chunked, k * t_chunk, t_pf_whole) + wait_inflight  # S: engine time to our first token

    # Conservation per cycle (module docstring): every other running request prefills once.
    # Unchunked (prefill first): R − n other prompts at T_pf each stall our decode steps; only
    # with O = 1 (no decode phase) do they queue ahead of our prompt instead.
    d_unchunked = np.maximum(R - n_pf, 0.0) * t_pf
    # Chunked (decodes first): the others' (R − 1)·I prompt tokens ride along our O − 1 decode
    # steps: one chunk of c tokens per step while there are fewer chunks than steps, else
    # q = (R − 1)·I / (O − 1) tokens per step (vLLM packs tokens, not whole chunks); a riding
    # step holds R decodes + q prefill tokens. Past q = budget − (R − 1) the rest needs steps of
    # its own (budget − r_d tokens beside r_d decodes) while our prompt waits: that is TTFT.
    others_tokens = (R - 1.0) * I
    riding_steps = np.minimum((R - 1.0) * k, m_s)
    room_ride = np.maximum(budget - (R - 1.0) * q_dec, c)  # beside R decodes
    q = np.clip(others_tokens / np.maximum(m_s, 1.0), c, room_ride)
    ride = prefill_step(e, prompts=q / c, prompt_tokens=c, decode_batch=R, decode_context_tokens=mean_ctx,
                        cached_tokens=cached)
    room_queue = np.maximum(budget - r_d * q_dec, c)  # a queue step holds r_d decodes + prefill tokens
    queue_steps = np.maximum(others_tokens - m_s * q, 0.0) / room_queue
    full = prefill_step(e, prompts=room_queue / c, prompt_tokens=c, decode_batch=r_d,
                        decode_context_tokens=mean_ctx, cached_tokens=cached)
    d_tpot = np.where(chunked, riding_steps * np.maximum(ride.step_s - plain.step_s, 0.0), np.where(m > 0, d_unchunked, 0.0))
    d_ttft = np.where(chunked, queue_steps * full.step_s, np.where(m > 0, 0.0, d_unchunked))

    tpot = t_dec + d_tpot / np.maximum(m, 1.0)  # per output token after the first (NaN below for O = 1)
    ttft_service = own + d_ttft + t_req
    e2e_service = ttft_service + m * tpot

    # FCFS waves of identical requests (module docstring).
    uniform = np.asarray(uniform_lengths, dtype=bool)
    wave = _fcfs_wave_where(uniform, e, input_len=I, output_len=O, running=R, max_num_batched_tokens=budget,
                            enable_chunked_prefill=chunked, decode_step_s=t_dec, mean_context_tokens=mean_ctx,
                            cached_prompt_tokens=H)
    ttft_service = np.where(uniform, wave.ttft_s, ttft_service)
    e2e_spread = e2e_service  # the cycle whose per-step work per_cycle() counts (utilization below)
    # Spread arrivals whose prompt fits one step (chunked, C > 1): clients come back in clumps at
    # step ends and reach the engine as API-server trains; the mean TTFT (t_api included, its
    # trains' waits too) is the mixture of calc.traffic.arrival_trains, tabulated
    # (calc.traffic.train_table), in place of own + d_ttft (the budget's queue is in the clump).
    # Dense models only: the table takes steps linear in their prompts, T_n = T_0 + n·(T_1 − T_0),
    # and a MoE step is far from it (its first prompt reads experts the decodes left idle;
    # bench/train_table_check.py).
    trains = (~uniform & chunked & (k <= 1) & (R > 1) & (m > 0)
              & (np.asarray(e.num_experts, dtype=float) <= 1))
    if np.any(trains):
        ttft_service, e2e_service = _train_ttft(
            e, trains=trains, ttft_service=ttft_service, e2e_service=e2e_service, R=R, step_s=t_dec * tau,
            first_prompt_s=np.maximum(t_chunk - plain.step_s, 0.0), base_s=plain.step_s, chunk_tokens=c, decode_batch=r_d,
            mean_context_tokens=mean_ctx, cached_tokens=cached)
    multi = ~uniform & chunked & (k > 1) & (R > 1) & (m > 0)
    budget_wait, budget_load, busy_load = np.nan, np.nan, np.nan
    if np.any(multi):
        ttft_service, e2e_service, budget_wait, budget_load, busy_load = _chunk_queue_ttft(
            e, multi=multi, ttft_service=ttft_service, e2e_service=e2e_service, R=R, input_tokens=I, chunks=k,
            budget_tokens=budget, decode_steps=m_s, decode_budget_tokens=q_dec, mean_context_tokens=mean_ctx,
            cached_tokens=H, decode_step_s=t_dec * tau, idle_wait_s=wait_inflight, output_cv=output_cv,
            input_cv=input_cv)
    e2e_service = np.where(uniform, wave.e2e_latency_s, e2e_service)
    # the wave's, and the chunk queue's m_s steps of the loop's mean step T̄
    tpot = np.where((uniform | multi) & (m > 0), (e2e_service - ttft_service) / np.maximum(m, 1.0), tpot)
    # (one output token: the wave is the whole cycle, which matches the simulator at every W)
    closed_form = (~(uniform & chunked & (m > 0) & (((wave.wave_steps > 1.0) & (wave.wave_steps < 6.0) & (R > 1))
                                                    | (wave.wave_steps > 60.0)))
                   & (C <= kv_cap) & ~((C > R) & (tok_cap < np.minimum(seq_cap, kv_cap))))
    # The API server handles each request once before the engine sees it (t_api, one at a time):
    # it adds t_api to every request and caps the loop at 1 / t_api requests/s (Little's law then
    # puts the clients' wait for it into TTFT, like a wait for a sequence slot).
    t_api = np.asarray(e.api_server_request_s, dtype=float)
    ttft_service = ttft_service + t_api
    e2e_service = e2e_service + t_api
    api_cap = 1.0 / np.maximum(t_api, 1e-300)
    x_engine = R / e2e_service
    X = np.minimum(x_engine, api_cap)
    limited = np.where(x_engine > api_cap, 4, limited)
    limited = LIMITED_BY[limited]
    e2e = C / X
    ttft = ttft_service + (e2e - e2e_service)

    # Utilization: FLOPs and bytes of all engine steps in one cycle (R requests complete), over
    # the cycle time. Every step obeys its roofline, so MFU, MBU ≤ 1 by construction.
    def per_cycle(attr: str):
        decode_part = m * getattr(dec, attr)
        riders = np.maximum(getattr(ride, attr) - getattr(plain, attr), 0.0)  # chunks added to our decode steps
        chunked_part = k * getattr(own_chunk, attr) + riding_steps * riders + queue_steps * getattr(full, attr)
        unchunked_part = getattr(pf_whole, attr) * R / n_pf
        return decode_part + np.where(chunked, chunked_part, unchunked_part)

    # Utilization over the spread cycle whose steps per_cycle() counts, so every step obeys its
    # roofline and MFU, MBU ≤ 1 (the wave moves the same work into other steps; its cycle differs
    # from this one by the E2E differences of bench/sim_vs_analytic.py).
    mfu = per_cycle("flops") / e2e_spread / np.asarray(e.peak_flops_per_s, dtype=float)
    mbu = per_cycle("bytes") / e2e_spread / np.asarray(e.hbm_bw_bytes_per_s, dtype=float)
    fit = np.asarray(fits, dtype=bool) & (kv_cap >= 1)
    nan = np.where(fit, 1.0, np.nan)
    # With one output token there is no inter-token time: TPOT/ITL are undefined, not t_dec.
    tpot_nan = nan * np.where(m > 0, 1.0, np.nan)
    # Bound of the prefill's own work: chunked, what the chunk adds to the decode step it rides on.
    d_comp = np.maximum(own_chunk.compute_s - np.where(r_d > 0, base_step.compute_s, 0.0), 0.0)
    d_mem = np.maximum(own_chunk.memory_s - np.where(r_d > 0, base_step.memory_s, 0.0), 0.0)
    # "compute" | "memory" of the chunk's own work (chunked) or of the whole-prompt step, one string array each
    prefill_compute = np.where(chunked, d_comp > d_mem, pf_whole.compute_s > pf_whole.memory_s)
    step_compute = np.where(chunked, own_chunk.compute_s > own_chunk.memory_s, pf_whole.compute_s > pf_whole.memory_s)
    grid = np.broadcast_shapes(np.shape(ttft), np.shape(nan))  # the shape of ttft * nan
    return ServingResult(
        ttft_s=ttft * nan, tpot_s=tpot * tpot_nan, itl_s=tpot * tpot_nan, e2e_latency_s=e2e * nan,
        output_tokens_per_s=X * O * nan, total_tokens_per_s=X * (I_ctx + O) * nan, requests_per_s=X * nan,
        concurrency=C, running=R, waiting=C - R, limited_by=limited, kv_sequences_at_mean_context=kv_cap,
        token_budget_cap=np.broadcast_to(tok_cap, np.shape(R)).astype(float), fits=fit,
        mfu=mfu * nan, mbu=mbu * nan, decode_bound=dec.bound,
        prefill_bound=np.where(prefill_compute, "compute", "memory"),
        prefill_step_bound=np.where(step_compute, "compute", "memory"),
        decode_step_s=t_dec, prefill_time_per_request_s=t_pf, prefill_chunks=k,
        prefill_fraction=np.clip(X * t_pf, 0.0, 1.0),
        wave_steps=np.where(uniform, wave.wave_steps, np.nan),
        budget_queue_wait_s=_grid_field(budget_wait, grid), budget_queue_load=_grid_field(budget_load, grid),
        budget_queue_busy_load=_grid_field(busy_load, grid),
        closed_form=np.broadcast_to(
            closed_form, np.broadcast_shapes(np.shape(closed_form), np.shape(R))).copy())


def _grid_field(x, shape):
    """x + zeros(shape): in place where x is already an array of that shape (a full-grid
    temporary fewer; the same values, −0 included)."""
    if isinstance(x, np.ndarray) and x.shape == tuple(shape) and x.dtype == float:
        return np.add(x, 0.0, out=x)
    return x + np.zeros(shape)


def _train_ttft(e: EngineNumbers, *, trains, ttft_service, e2e_service, R, step_s, first_prompt_s, base_s,
                chunk_tokens, decode_batch, mean_context_tokens, cached_tokens):
    """(TTFT, E2E) of service, t_api not yet added, where ``trains``: the arrival-train mixture's
    mean (:func:`calc.traffic.train_table.train_mean_s`, steps T_n = T_0 + n·P) with fixed part
    t_req and delay δ = t_api + t_req from a step end, at α = X·T̄ prompts per step,
    T̄ = T_0 / (1 − X·P), X = R / (E2E + t_api) (at most 1/t_api). X moves with the TTFT: two
    passes from the X of ``e2e_service``.

    P, the cost of one more prompt in a step, is the secant over the clump a step carries,
    P = (T_(1+α) − T_0) / (1 + α), α from the first prompt's marginal cost ``first_prompt_s``
    (T_1 − T_0), not that marginal cost itself: a memory-bound step hides its first prompts'
    compute and then turns compute-bound, so the first prompt's slope read its clump's step low
    (Llama-70B TP 2 A100, 9 in, 13 clients: 0.7 ms a prompt where five prompts add 5.3 ms), and a
    GPU with more bandwidth, already compute-bound, then showed a slower TTFT.

    Both ends of that secant are whole steps: T_0 the decode step of the R running sequences
    (``base_s``, the plain decode step; ``step_s`` adds speculation's extra) and T_(1+α) the
    step the clump's prompts run in beside the ``decode_batch`` decodes left (its clients have
    stopped decoding), P = max(T_(1+α) − T_0, 0) / (1 + α): the steps T_n = T_0 + n·P up to the
    clump lie between two step times that each fall as the GPU gets faster, so they fall too.
    A base at the decode batch r_d instead of R (a decode step that is never in flight) made the
    own step T_0 + P rise with bandwidth where the R − r_d decodes it left out turn compute-bound:
    DeepSeek-R1-Distill-Llama-70B TP 2 A100, 7 in / 2 out, C = 2: T_0 27.5 ms at 2x to 3.6x the
    bandwidth, P 4.3 -> 7.9 ms as the r_d = 0.5 base fell 24 -> 15 ms, TTFT 61 -> 72 ms.

    Computed on the ``trains`` elements only (:class:`calc.timing.subset.Subset`; about 38 % of
    bench/bench_frontier.py's grid) and scattered back: the same numbers, bit for bit."""
    from calc.timing.subset import Subset, grid_shape  # noqa: PLC0415
    from calc.traffic.train_table import train_mean_s  # noqa: PLC0415

    sub = Subset(trains, grid_shape(trains, ttft_service, e2e_service, R, step_s, first_prompt_s, base_s,
                                    chunk_tokens, decode_batch, mean_context_tokens, cached_tokens, obj=e))
    full_ttft, full_e2e = ttft_service, e2e_service
    if not sub.all:  # compress; everything below is elementwise
        e = sub.take_fields(e)
        ttft_service, e2e_service, R, step_s, first_prompt_s, base_s, chunk_tokens, decode_batch, \
            mean_context_tokens, cached_tokens = (sub.take(x) for x in (
                ttft_service, e2e_service, R, step_s, first_prompt_s, base_s, chunk_tokens, decode_batch,
                mean_context_tokens, cached_tokens))
    t_api = np.asarray(e.api_server_request_s, dtype=float)
    t_req = np.asarray(e.request_overhead_s, dtype=float)
    x0 = np.minimum(R / (e2e_service + t_api), 1.0 / np.maximum(t_api, 1e-300))
    clump = np.clip(1.0 + x0 * step_s / np.maximum(1.0 - x0 * first_prompt_s, 1e-6), 1.0, 6.0)
    t_clump = prefill_step(e, prompts=clump, prompt_tokens=chunk_tokens, decode_batch=decode_batch,
                           decode_context_tokens=mean_context_tokens, cached_tokens=cached_tokens).step_s
    prompt_s = np.maximum((t_clump - base_s) / clump, 0.0)
    decode_part = e2e_service - ttft_service
    others = np.maximum(R - 1.0, 0.0) / np.maximum(R, 1.0)
    e2e = e2e_service
    for _ in range(2):
        x = np.minimum(R / (e2e + t_api), 1.0 / np.maximum(t_api, 1e-300))
        alpha = x * step_s / np.maximum(1.0 - x * prompt_s, 1e-6)
        # the clumps a request meets are the other R − 1 clients' (the arrival theorem; as
        # queueing.closed_loop_ttft): α counts the completions of all R, X = R / cycle
        mean = train_mean_s(decode_step_s=step_s, prompt_s=prompt_s, clump=alpha * others, fixed_s=t_req + t_api,
                            api_s=t_api, delay_s=t_req + t_api)  # δ: finish to engine, as queueing.closed_loop_ttft
        ttft = mean - t_api
        e2e = ttft + decode_part
    if sub.all:
        return np.where(trains, ttft, full_ttft), np.where(trains, e2e, full_e2e)
    return sub.put(full_ttft, ttft), sub.put(full_e2e, e2e)


ROOT_TOLERANCE = 2.0 ** -30  # the multi-chunk closed loop's X: to 2⁻³⁰ (1e-9) of its empty-queue value
ROOT_GUESS = 0.01  # the later passes' bracket: the last pass's α ± 1 %
ROOT_ITERATIONS = 60  # at most (false position and bisection: 30 bisections reach ROOT_TOLERANCE alone)
# Gauss-Hermite nodes and weights (probabilists' form) for means over a lognormal prompt length
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(5)
_GH_W = _GH_W / _GH_W.sum()


def mean_over_prompts(f, *, input_len, input_cv):
    """E[f(I)] for prompt lengths I lognormal of mean ``input_len`` and CV ``input_cv`` (5-node
    Gauss-Hermite in ln I: I_j = I·exp(σ·x_j − σ²/2), σ² = ln(1 + cv²)); f(I) itself where the CV is 0.
    A prompt's own prefill is not linear in its length (chunks: ⌈I / room⌉ steps; attention: I²/2
    keys), so the mean prompt's own time is not the prompts' mean own time. E[I²] = I²·(1 + cv²):
    at I = 1,000, CV 1, 2·10⁶ (these nodes: 1,994,784, 0.3 % short; 8 nodes cost open_loop 30 % more
    CPU for 0.1 pt on bench/traffic_spread.py).

    >>> round(float(mean_over_prompts(lambda i: i ** 2, input_len=1000.0, input_cv=1.0)), -3)
    1995000.0
    >>> float(mean_over_prompts(lambda i: i ** 2, input_len=1000.0, input_cv=0.0))
    1000000.0
    """
    I = np.asarray(input_len, dtype=float)
    sigma = np.sqrt(np.log1p(np.asarray(input_cv, dtype=float) ** 2))
    if not np.any(sigma > 0):
        return f(I)
    return sum(w * f(I * np.exp(sigma * x - sigma ** 2 / 2.0)) for x, w in zip(_GH_X, _GH_W))


QUEUE_PASSES = 3  # of the multi-chunk closed loop's decode batch (the clients queued for the budget do not decode)


def rising_root(restrict, lo, hi, f_lo, f_hi, *, tol):
    """The root of a function f rising on the bracket [``lo``, ``hi``] (f there ``f_lo`` < 0 and
    ``f_hi``), to within ``tol``: the upper end of a bracket within ``tol``, or a point whose
    distance to the root at the bracket's slope, |f(x)|·(hi − lo)/(f_hi − f_lo), is within ``tol``
    (a function nearly linear there); ``hi`` itself where f_hi < 0.
    ``restrict(index)`` gives f of the elements ``index`` of the flattened arrays alone, as a
    function of their points. Converged elements are set aside (the work shrinks with them), and
    each element follows its own iterations alone: its result does not depend on the others.

    Illinois false position (the kept end's f halved when the same end is kept twice), each point
    at least ``tol`` inside the bracket, and a bisection where the bracket did not halve over the
    last three iterations: the multi-chunk closed loop (:func:`_chunk_queue_ttft`, nearly linear
    in α) converges in ~5-8 evaluations from [0, R / m_s] where bisection took 30, in ~3 from a
    bracket of ±1 %.

    >>> f = lambda i: lambda x: x * x - 2.0
    >>> float(rising_root(f, np.array(0.0), np.array(2.0), np.array(-2.0), np.array(2.0), tol=1e-12)) - 2 ** 0.5 < 1e-12
    True
    """
    shape = np.broadcast_shapes(*(np.shape(v) for v in (lo, hi, f_lo, f_hi, tol)))
    lo, hi, f_lo, f_hi, tol = (np.array(np.broadcast_to(v, shape), dtype=float).ravel() for v in (lo, hi, f_lo, f_hi, tol))
    out = hi.copy()
    idx = np.flatnonzero(f_hi >= 0.0)  # the others: no root below hi, hi
    f = None
    side = np.zeros(out.size)  # +1: hi was replaced last, −1: lo
    widths = [4.0 * (hi - lo)] * 3  # the bracket three, two and one iterations ago
    state = [v[idx] for v in [lo, hi, f_lo, f_hi, tol, side, hi, np.full(out.size, np.inf)] + widths]
    for _ in range(ROOT_ITERATIONS):
        lo, hi, f_lo, f_hi, tol, side, result, step, *widths = state
        width = hi - lo
        going = (width > tol) & (step > tol)
        if f is None or np.count_nonzero(going) <= 0.75 * going.size:  # set the converged aside
            out[idx[~going]] = np.where(width <= tol, hi, result)[~going]
            idx, state = idx[going], [v[going] for v in state]
            lo, hi, f_lo, f_hi, tol, side, result, step, *widths = state
            width = width[going]
            going = np.ones(idx.size, dtype=bool)
            if idx.size == 0:
                break
            f = restrict(idx)
        x = (lo * f_hi - hi * f_lo) / np.where(going, f_hi - f_lo, 1.0)  # f_lo < 0 ≤ f_hi
        secant = (x > lo) & (x < hi) & (width <= 0.5 * widths[0])
        x = np.where(secant, np.minimum(np.maximum(x, lo + tol), hi - tol), 0.5 * (lo + hi))
        fx = f(x)
        below = fx < 0.0
        lower, upper = going & below, going & ~below
        near = np.abs(fx) * width / np.where(going, f_hi - f_lo, 1.0)  # |x − root| at the bracket's slope
        # Illinois: an end kept twice in a row has its f halved (pulls the next point towards it)
        f_hi = np.where(lower & (side < 0.0) & secant, 0.5 * f_hi, f_hi)
        f_lo = np.where(upper & (side > 0.0) & secant, 0.5 * f_lo, f_lo)
        state = [np.where(lower, x, lo), np.where(upper, x, hi), np.where(lower, fx, f_lo), np.where(upper, fx, f_hi),
                 tol, np.where(going, np.where(below, -1.0, 1.0), side), np.where(going, x, result),
                 np.where(going, near, step)] + widths[1:] + [width]
    lo, hi, f_lo, f_hi, tol, side, result, step, *widths = state
    out[idx] = np.where(hi - lo <= tol, hi, result)
    return out.reshape(shape)


def _chunk_queue_ttft(e: EngineNumbers, *, multi, ttft_service, e2e_service, R, input_tokens, chunks, budget_tokens,
                      decode_steps, decode_budget_tokens, mean_context_tokens, cached_tokens, decode_step_s, idle_wait_s,
                      output_cv=None, input_cv=None):
    """(TTFT, E2E) of service, t_api not yet added, and the budget queue's mean wait W (s), load ρ
    and load while busy ρ_b (NaN outside ``multi``; :func:`calc.traffic.chunk_queue.chunk_queue`), where
    ``multi``: spread prompts of k > 1 chunks
    queueing for the token budget (:func:`calc.traffic.chunk_queue.chunk_queue_ttft_s`, as a function of X): k − 1
    full steps (the room's tokens beside the decodes), a last step of the rest I − (k − 1)·room
    alone (T_last) or filled by the next prompt, the wait W behind the prompts ahead; fixed part
    t_req, delay δ = t_api + t_req.

    The decodes beside the chunks: the others' completions per step times the decode steps of a
    request, r_d = (R − 1)/R · X·T̄ · m_s (``decode_steps`` m_s; T̄ the mean step, X·T̄ requests
    per step; at most R − 1), room = budget − r_d·q (``decode_budget_tokens`` q per decode): the
    clients prefilling, waiting for the budget or outside the engine do not decode. A client added
    to a loop at the budget's capacity joins the queue, not the decodes, so the room does not
    shrink with it: with (R − 1)·m_s / (m_s + k) decodes (the queue left out) the room fell and the
    throughput with it as C rose (Llama-3.1-8B H100, budget 1024, 2500 in / 256 out, C = 90 → 95:
    5.653 → 5.633 requests/s; simulated 5.73 → 5.78). ``QUEUE_PASSES`` passes from r_d = (R − 1)·m_s / (m_s + k) (no wait), as closed_loop.

    The decode part of E2E is m_s steps of the mean step a decoding client sees, T̄_d = T_0 +
    (R − 1)/R·α·P_pf (the queue's T̄ = T_0 + α·P_pf less its own prompt's share: a client decodes in
    the steps of the loop but its own prompt's), not closed_loop's m·TPOT of riding chunks: so the loop counted in
    steps, X·T̄ prompts per step, is what the step times do not move, as in the simulator, whose
    schedule, when δ is short beside every step, is the same step for step at any step time (R1-Distill-
    32B AWQ A100, 2064 in / 232 out, C = 94, 2× HBM bandwidth: simulated TTFT 1.80 → 1.76 s, 5 seeds of
    5,640 requests; with m·TPOT X·T̄ rose 5.7 % and the TTFT 1.387 → 1.400 s; now 1.435 → 1.403 s).

    X solves X·(E2E(X) + t_api) = R (at most 1/t_api), solved for α = X·T̄ (prompts per step; X = α / T̄,
    T̄ = T_0 + α·P_pf, smooth in α where it is steep in X): X·(E2E + t_api) − R = X·(δ + engine TTFT + m_s·T̄_d) − R
    rises with α (X does, T̄_d too, and the queue only grows), and :func:`rising_root` finds its root
    below R² / ((R − 1)·m_s) (and the API server's cap).
    Computed on the ``multi`` elements only (:class:`calc.timing.subset.Subset`).

    Prompts that spread (``input_cv`` > 0, lognormal, cut to the window by the caller): the queue's
    service I/room steps varies as they do, Kingman's c_s² = cv² beside the arrivals' κ in the
    finite-source factor (g starts at 1 + c_s², P-K's M/G/1); and a prompt's own steps are the mean
    over its length (5-node Gauss-Hermite): the mean k and T_last, and the share with k ≥ 2, which
    open a busy period with a full step. A prompt near the room is one step or two by its length:
    Qwen2.5-7B A100, 2048 in (room 2018), lognormal CV 0.5, C = 32: simulated 440 ms with fixed
    prompts, 389 ms with spread ones; with the mean prompt's k = 2 the model kept 2 steps (+17.5 %),
    now +3.6 %. bench/traffic_spread.py --spread 1.0, closed loops asked as the pages ask: within 15 %
    91 → 100 % of the cells (Llama-3.1-8B H100, budget 1024, 2500 + 256, C = 64: −17.0 → +4.6 %).

    This replaces own + D_ttft (k chunk steps of I/k tokens, and the others' chunks that do not
    ride along): that read the loop as if no prompt ever waited for another's chunks, 15-35 %
    low on the long runs of bench/sim_vs_analytic.py --long (Llama-2-7B A100, 2048 in, C = 4-32)."""
    from calc.timing.subset import Subset, grid_shape  # noqa: PLC0415
    from calc.traffic.chunk_queue import chunk_queue, finite_source_factor, think_time_variance  # noqa: PLC0415

    cv = None if output_cv is None else np.asarray(output_cv, dtype=float)
    cv = None if cv is None or not np.any(cv > 0.0) else cv  # none known: exponential think times everywhere
    cv_in = np.nan_to_num(np.asarray(0.0 if input_cv is None else input_cv, dtype=float))
    args = (ttft_service, e2e_service, R, input_tokens, chunks, budget_tokens, decode_steps, decode_budget_tokens,
            mean_context_tokens, cached_tokens, decode_step_s, idle_wait_s, cv_in) + (() if cv is None else (cv,))
    sub = Subset(multi, grid_shape(multi, *args, obj=e))
    full_ttft, full_e2e = ttft_service, e2e_service
    if not sub.all:  # compress; everything below is elementwise
        e = sub.take_fields(e)
        args = tuple(sub.take(x) for x in args)
    ttft_service, e2e_service, R, I, k, budget, m_s, q_dec, ctx, H, t0, idle, cv_in = args[:13]
    cv = None if cv is None else args[13]
    cv2_in = cv_in * cv_in  # the prompts' service spread (I / room steps): Kingman's c_s²
    spread = bool(np.any(cv_in > 0.0))
    t_api = np.asarray(e.api_server_request_s, dtype=float)
    t_req = np.asarray(e.request_overhead_s, dtype=float)
    others = np.maximum(R - 1.0, 0.0) / np.maximum(R, 1.0)
    c = I / k  # tokens of a chunk, as closed_loop prices its steps
    r_d = (R - 1.0) * m_s / (m_s + k)
    alpha, g = None, 1.0 + cv2_in
    for p in range(QUEUE_PASSES):
        room = np.maximum(budget - r_d * q_dec, 1.0)
        t_full = prefill_step(e, prompts=room / c, prompt_tokens=c, decode_batch=r_d, decode_context_tokens=ctx,
                              cached_tokens=H + (k - 1.0) / 2.0 * c).step_s

        def last_step(n):  # (k, T_last) of an n-token prompt: k − 1 full steps of the room and the rest
            kn = np.maximum(np.ceil(n / room), 1.0)
            rest = np.clip(n - (kn - 1.0) * room, 1.0, room)
            return kn, prefill_step(e, prompts=1.0, prompt_tokens=rest, decode_batch=r_d, decode_context_tokens=ctx,
                                    cached_tokens=H + n - rest).step_s

        last = np.clip(I - (k - 1.0) * room, 1.0, room)  # the mean prompt's: k − 1 full steps and the rest
        t_last = prefill_step(e, prompts=1.0, prompt_tokens=last, decode_batch=r_d, decode_context_tokens=ctx,
                              cached_tokens=H + I - last).step_s
        k_mix, multi_share = k, 1.0
        if spread:  # prompts lognormal of CV cv_in: their mean k, T_last and share with k ≥ 2 (mean_over_prompts)
            def per_prompt(n):
                kn, tl = last_step(n)
                return np.stack(np.broadcast_arrays(kn, tl, (kn >= 2.0).astype(float)))

            k_n, t_n, share_n = mean_over_prompts(per_prompt, input_len=I, input_cv=cv_in)
            varied = cv_in > 0.0
            k_mix, t_last, multi_share = (np.where(varied, k_n, k), np.where(varied, t_n, t_last),
                                          np.where(varied, share_n, 1.0))

        queue = chunk_queue(decode_step_s=t0, full_step_s=t_full, last_step_s=t_last, chunks=k_mix,
                            service_steps=I / room, others=others, delay_s=t_req + t_api, idle_wait_s=idle,
                            wait_factor=g, multi_chunk_share=multi_share)

        def excess(index):  # X·(E2E + t_api) − R at α = X·T̄ prompts per step: X·(δ + engine TTFT + m_s·T̄_d) − R
            at = queue.per_step(None, index, shape)
            m, r, delay, own = (np.broadcast_to(v, shape).ravel()[index] for v in (m_s, R, t_req + t_api, own_pf))

            def f(a):
                engine_ttft, _, _, t_bar, _, _ = at(a)
                return a / t_bar * (delay + engine_ttft + m * (t_bar - a * own)) - r
            return f

        # α below R² / ((R − 1)·m_s) (the decodes alone fill the cycle), the API server's X = 1 / t_api
        # (X = α / (T_0 + α·P_pf)) and, were P_pf < 0, T̄ > 0
        p_pf = queue.extra_step_s
        own_pf = p_pf / np.maximum(R, 1.0)  # T̄ − T̄_d per prompt per step: a decoding client's own prompt is not in its steps
        a_max = R / (m_s * others)  # there X·m_s·T̄_d ≥ α·m_s·(R − 1)/R = R
        a_hi = np.where(t_api > p_pf, np.minimum(a_max, t0 / np.maximum(t_api - p_pf, 1e-300)), a_max)
        a_hi = np.where(p_pf < 0.0, np.minimum(a_hi, 0.999 * t0 / np.maximum(-p_pf, 1e-300)), a_hi)
        shape = np.broadcast_shapes(np.shape(a_hi), np.shape(idle), np.shape(others), np.shape(t_req + t_api))
        a_hi = np.broadcast_to(a_hi, shape)
        everything = excess(...)
        flat = lambda v: np.broadcast_to(v, shape).ravel()  # noqa: E731
        tol = flat(a_hi * ROOT_TOLERANCE)
        if alpha is None:
            # α·(c + m_s·T̄_d) = R·T̄ at a fixed δ + engine TTFT = c, o = (R − 1)/R:
            # (m_s·o·P_pf)·α² + (c + m_s·T_0 − R·P_pf)·α − R·T_0 = 0, its positive root (α_max at most)
            def fixed_ttft_root(c):
                b = c + m_s * t0 - R * p_pf
                den = b + np.sqrt(np.maximum(b * b + 4.0 * (m_s * others * p_pf) * R * t0, 0.0))
                return flat(np.where(den > 0.0, np.minimum(2.0 * R * t0 / np.maximum(den, 1e-300), a_hi), a_hi))

            # the TTFT of no wait (X → 0) gives an α above the root; the TTFT there, one below it
            hi = fixed_ttft_root(t_req + t_api + idle + t_last + (k - 1.0) * t_full)
            f_hi = everything(hi)
            x_hi = hi / flat(t0 + hi.reshape(shape) * p_pf)
            c_hi = (f_hi + flat(R)) / x_hi - flat(m_s) * flat(t0 + others * hi.reshape(shape) * p_pf)
            lo = np.minimum(fixed_ttft_root(c_hi.reshape(shape)), hi)
            f_lo = everything(lo)
        else:  # the last pass's root ± ROOT_GUESS
            lo = np.minimum(flat(alpha * (1.0 - ROOT_GUESS)), flat(a_hi))
            hi = np.minimum(flat(alpha * (1.0 + ROOT_GUESS)), flat(a_hi))
            f_lo, f_hi = everything(lo), everything(hi)
        # that bracket where it holds the root; else [0, its low end] or [its high end, α_max]
        past, short = f_lo >= 0.0, (f_hi < 0.0) & (hi < flat(a_hi))
        lo, f_lo, hi, f_hi = (np.where(past, 0.0, lo), np.where(past, -flat(R), f_lo), np.where(past, lo, hi),
                              np.where(past, f_lo, f_hi))
        if np.any(short):
            i = np.flatnonzero(short)
            lo[i], f_lo[i], hi[i] = hi[i], f_hi[i], flat(a_hi)[i]
            f_hi[i] = excess(i)(hi[i])
        alpha = rising_root(excess, lo, hi, f_lo, f_hi, tol=tol).reshape(shape)
        engine_ttft, rho, _, t_bar, wait, busy = queue.per_step(alpha)  # one evaluation at the root: the cycle, ρ, T̄, W̄, ρ_b
        ttft = t_req + engine_ttft
        e2e = ttft + m_s * (t_bar - alpha * own_pf)  # the cycle less t_api: m_s steps of T̄_d
        r_d = np.minimum(others * alpha * m_s, R - 1.0)
        if p < QUEUE_PASSES - 1:
            # the R clients' finite source for the next pass, at this one's load: a client is away m_s
            # decode steps and δ/T̄ (chunk_queue.finite_source_factor, service I/room steps), the m_s
            # steps spread as the output lengths (chunk_queue.think_time_variance)
            z = m_s + (t_req + t_api) / t_bar
            kappa = think_time_variance(load=busy, think_steps=z, service_steps=I / room, varying_steps=m_s, cv=cv)
            g = finite_source_factor(load=busy, think_steps=z, service_steps=I / room, think_variance=kappa + cv2_in)
    nan = np.full(np.shape(full_ttft), np.nan)
    if sub.all:
        return (np.where(multi, ttft, full_ttft), np.where(multi, e2e, full_e2e), np.where(multi, wait, nan),
                np.where(multi, rho, nan), np.where(multi, busy, nan))
    return (sub.put(full_ttft, ttft), sub.put(full_e2e, e2e), sub.put(nan, wait), sub.put(nan, rho),
            sub.put(nan, busy))


@dataclass(frozen=True)
class Wave:
    """FCFS wave of a closed loop of identical requests (module docstring); seconds."""

    ttft_s: np.ndarray  # service TTFT, t_request included
    e2e_latency_s: np.ndarray
    wave_steps: np.ndarray  # W
    heavy_step_s: np.ndarray  # T_H


def _fcfs_wave_where(uniform, e: EngineNumbers, **inputs) -> Wave:
    """:func:`fcfs_wave` where ``uniform`` (only there is it read), NaN elsewhere: computed on those
    elements alone (:class:`calc.timing.subset.Subset`), none for the spread clients of the
    frontier and the planner."""
    if np.all(uniform):
        return fcfs_wave(e, **inputs)
    if not np.any(uniform):  # W keeps the shape of its own inputs, as fcfs_wave gives it
        w = np.full(np.broadcast_shapes(*(np.shape(inputs[k]) for k in (
            "input_len", "output_len", "running", "max_num_batched_tokens", "enable_chunked_prefill"))), np.nan)
        return Wave(ttft_s=np.nan, e2e_latency_s=np.nan, wave_steps=w, heavy_step_s=np.nan)
    from calc.timing.subset import Subset, grid_shape  # noqa: PLC0415

    sub = Subset(uniform, grid_shape(uniform, *inputs.values(), obj=e))
    wave = fcfs_wave(sub.take_fields(e), **{k: sub.take(v) for k, v in inputs.items()})
    return Wave(**{f.name: sub.put(np.nan, getattr(wave, f.name)) for f in fields(Wave)})


def fcfs_wave(e: EngineNumbers, *, input_len, output_len, running, max_num_batched_tokens, enable_chunked_prefill,
              decode_step_s, mean_context_tokens, cached_prompt_tokens=0.0) -> Wave:
    """TTFT and E2E of R identical requests whose prompts come back in one wave per cycle and
    are prefilled first come first served in full steps (module docstring, "FCFS waves").

    Unchunked, Llama-3.1-8B-like numbers: R = 64, I = 2048, budget 8192 → n = 4 prompts per
    prefill step, W = 16 steps; with T_H = 0.19 s the mean prompt waits (W + 1)/2 = 8.5 steps.
    """
    I = np.asarray(input_len, dtype=float)
    O = np.asarray(output_len, dtype=float)
    R = np.asarray(running, dtype=float)
    B = np.asarray(max_num_batched_tokens, dtype=float)
    chunked = np.asarray(enable_chunked_prefill, dtype=bool)
    t_req = np.asarray(e.request_overhead_s, dtype=float)
    t_dec = np.asarray(decode_step_s, dtype=float)
    m = np.maximum(O - 1.0, 0.0)
    # chunked: a heavy step's prompt tokens h beside r_h decodes (two fixed-point passes)
    # (one output token, m = 0: nobody decodes, a request is done when its prompt is)
    decoding = np.where(m > 0, 1.0, 0.0)
    h = np.minimum(R * I, B)
    for _ in range(2):
        r_h = decoding * np.maximum(R - np.ceil(h / I), 0.0)  # requests with a chunk in the step do not decode
        h = np.maximum(np.minimum(R * I, B - r_h), 1.0)
    r_h = decoding * np.maximum(R - np.ceil(h / I), 0.0)
    H = np.asarray(cached_prompt_tokens, dtype=float)  # I: the prompt tokens computed after H cached
    heavy_c = prefill_step(e, prompts=h / I, prompt_tokens=I, decode_batch=r_h,
                           decode_context_tokens=mean_context_tokens, cached_tokens=H).step_s
    w_c = R * I / h
    # Own prompt: alone (R = 1) or in a single-step wave it starts a step, ceil(I/h) steps. Inside
    # a wave of W ≥ 12 steps (a steady FCFS stream) it starts anywhere in a step and spans
    # 1 + (I − 1)/h steps on average; in shorter waves it fits one step (fitted to the simulator,
    # tests/test_serving_wave.py).
    inside = (w_c > 1.0) & (R > 1.0)
    k_own = np.where(inside, np.where(w_c >= 12.0, 1.0 + (I - 1.0) / h, np.maximum(I / h, 1.0)), np.ceil(I / h - 1e-9))
    arrive = np.where(inside, ((w_c - 1.0) * heavy_c + t_dec) / np.maximum(w_c, 1.0), t_req)
    ttft_c = np.maximum(arrive, t_req) + k_own * heavy_c
    # The wave's other heavy steps run during our decodes (k_h below). With one output token there
    # are none to ride on: every prompt of the wave is prefilled before ours comes round again, so
    # the cycle is the wave itself, W heavy steps (bench/sim_vs_analytic.py: Llama-3.1-8B H100,
    # I = 2048, O = 1, C = 64 took 0.42 s here without this, where the simulator takes 3.06 s).
    # With O > 1 the token cap (closed_loop's tok_cap) keeps W − 1 − k_own within the O − 1 decodes.
    ttft_c = np.where(inside & (m == 0), np.maximum(w_c * heavy_c, t_req + k_own * heavy_c), ttft_c)
    k_h = np.clip(w_c - 1.0 - k_own, 0.0, m)  # the wave's other heavy steps, during our decodes
    e2e_c = ttft_c + k_h * heavy_c + (m - k_h) * t_dec
    # whole prompts: n per prefill-only step
    n = np.minimum(R, np.maximum(np.floor(B / I), 1.0))
    heavy_w = prefill_step(e, prompts=n, prompt_tokens=I, cached_tokens=H).step_s
    w_w = R / n
    # the mean prompt waits (W + 1)/2 steps; with one output token the whole cycle, W, as the chunked
    # wave's above: a request is done at its prefill, its client comes back behind the W − 1 other
    # steps of the wave (Llama-2-7B A100 unchunked, I = 2048, O = 1, C = 4 / 16: 0.472 / 1.411 s
    # with (W + 1)/2, now 0.628 / 2.508 s, simulated 0.626 / 2.506 s: bench/sim_vs_analytic.py)
    ttft_w = t_req + np.where(m > 0, (w_w + 1.0) / 2.0, w_w) * heavy_w
    e2e_w = t_req + w_w * heavy_w + m * t_dec
    return Wave(ttft_s=np.where(chunked, ttft_c, ttft_w), e2e_latency_s=np.where(chunked, e2e_c, e2e_w),
                wave_steps=np.where(chunked, w_c, w_w), heavy_step_s=np.where(chunked, heavy_c, heavy_w))
