"""Speculative decoding: one engine step of a running sequence drafts k tokens, verifies them in
one forward of the target and keeps the accepted prefix plus one token of its own.

Per step, for a batch of B running sequences at context T (vLLM V1, ``vllm/v1/spec_decode``):

* **tokens per step** τ = 1 + Σ_{i=1..k} c_i, with c_i the probability that drafts 1..i are all
  accepted. With an i.i.d. acceptance a per draft token c_i = a^i and
  τ = (1 − a^(k+1)) / (1 − a) (Leviathan et al. 2023, eq. 1). Per-position acceptance where
  known (:mod:`calc.spec.speculative`): real drafters accept early positions more often.
* **verify**: the target runs k + 1 tokens per sequence as one chunk on top of T cached keys:
  weights read once, linear FLOPs × (k + 1), attention (k + 1)·T + (k + 1)(k + 2)/2 pairs, the
  KV read once per sequence, logits for all k + 1 positions (the rejection sampler needs them).
* **draft**: EAGLE / EAGLE-3: one decoder layer of the target's shape + its LM head (EAGLE-3:
  a 32k draft vocabulary), the first pass over the B·(k + 1) verified positions, then k − 1
  passes of B tokens. MTP: the same with the model's MTP layer (shares the target's head).
  Draft model: its own full forward, the same passes. N-gram: a CPU lookup per sequence.
  Each GPU pass adds a fixed launch time; each step a fixed time for the proposer's
  bookkeeping and the rejection sampler (both fitted, ``calc/data/speculative.json``).
* **memory**: the drafter's weights and its KV per token (one layer for EAGLE / MTP, its own
  layers for a draft model) come out of the KV pool.

TPOT = T_step / τ. At batch 1 the verify step costs about what a decode step costs (weights
dominate), so TPOT falls by nearly τ; as B grows the verify step's (k + 1)·B tokens turn it
compute-bound, its time grows about (k + 1)-fold, and the speed-up shrinks and reverses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from calc.spec.speculative import SpeculativeConfig, speculative_data
from calc.timing.perf import StepTime
from calc.timing.roofline import OPERATORS, causal_attention_pairs, windowed_context_tokens
from calc.timing.serving import EngineNumbers, decode_step, engine_step


def mean_accepted_tokens_per_step(*, acceptance_rate, num_speculative_tokens):
    """τ = (1 − a^(k+1)) / (1 − a): tokens a sequence gains per step with k drafts, each
    accepted with probability a independently of the others (a = 1: k + 1).

    >>> round(float(mean_accepted_tokens_per_step(acceptance_rate=0.7, num_speculative_tokens=3)), 4)
    2.533
    """
    a = np.asarray(acceptance_rate, dtype=float)
    k = np.asarray(num_speculative_tokens, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = (1.0 - a ** (k + 1.0)) / (1.0 - a)
    return np.where(a >= 1.0, k + 1.0, tau)


def tokens_per_step_from_positions(accepted_at_position) -> float:
    """τ = 1 + Σ_i c_i from the cumulative per-position acceptance (c_i: drafts 1..i accepted).

    >>> tokens_per_step_from_positions([0.7, 0.49, 0.343])
    2.533
    """
    return 1.0 + float(np.sum(accepted_at_position))


@dataclass(frozen=True)
class Drafter:
    """What proposing k tokens costs: a GPU forward (``engine``; None for n-gram), its memory."""

    method: str
    num_speculative_tokens: int
    tokens_per_step: float
    engine: EngineNumbers | None
    weight_bytes: object  # per GPU, beyond the target's (an array over a grid of engines)
    kv_bytes_per_token: object  # per GPU, beyond the target's
    draft_pass_overhead_s: float
    speculative_step_overhead_s: float
    ngram_lookup_s_per_sequence: float


def one_layer_engine(e: EngineNumbers, *, vocab_per_rank, extra_linear_params=0.0) -> EngineNumbers:
    """The target's numbers cut to one decoder layer (its per-layer share of every weight and
    of the KV and attention FLOPs) and a head of ``vocab_per_rank`` rows; ``extra_linear_params``
    (EAGLE's input projection) counted with the dense MLP. No per-step CPU overheads (the
    drafter runs inside the target's step; its launches are ``draft_pass_overhead_s``)."""
    L = np.asarray(e.num_layers, dtype=float)
    return replace(
        e, num_layers=1, vocab_per_rank=vocab_per_rank, qkv_params=e.qkv_params / L, o_params=e.o_params / L,
        mlp_dense_params=e.mlp_dense_params / L + extra_linear_params, expert_params=e.expert_params / L,
        shared_expert_params=e.shared_expert_params / L, kv_bytes_per_token=e.kv_bytes_per_token / L,
        attn_flops_per_pair_decode=e.attn_flops_per_pair_decode / L,
        attn_flops_per_pair_prefill=e.attn_flops_per_pair_prefill / L,
        active_params_per_token=e.active_params_per_token / L, step_overhead_s=0.0, sequence_overhead_s=0.0,
        request_overhead_s=0.0, api_server_request_s=0.0)


def drafter_for(e: EngineNumbers, config: SpeculativeConfig, *, draft_engine: EngineNumbers | None = None,
                draft_weight_bytes: float = 0.0, overheads: dict | None = None) -> Drafter:
    """The drafter of ``config`` against target numbers ``e`` (module docstring).

    EAGLE: fc 2h×h + one layer, the target's head and embedding shared (weights = layer + fc).
    EAGLE-3: fc 3h×h + one layer + its own head of the draft vocabulary. MTP: one layer + eh_proj
    2h×h, head shared. Draft model: ``draft_engine`` (its numbers on the same GPU and TP) and
    ``draft_weight_bytes``. N-gram: nothing on the GPU.
    """
    ov = dict(speculative_data()["overheads"])
    ov.update(overheads or {})
    k = config.num_speculative_tokens
    tau = 1.0 + float(sum(config.accepted_at_position))
    # (arrays where ``e`` holds arrays: the planner's grid of GPUs, TP sizes and precisions)
    h = np.asarray(e.hidden_size, dtype=float)
    tp = np.asarray(e.tensor_parallel_size, dtype=float)
    b_w = np.asarray(e.linear_bytes_per_param, dtype=float)
    b_a = np.asarray(e.activation_bytes, dtype=float)
    L = np.asarray(e.num_layers, dtype=float)
    layer_params = np.asarray(e.qkv_params + e.o_params + e.mlp_dense_params + e.expert_params
                              + e.shared_expert_params, dtype=float) / L
    eng, w, kv = None, 0.0, 0.0
    if config.method in ("eagle", "eagle3", "mtp"):
        fc = (3.0 if config.method == "eagle3" else 2.0) * h * h / tp
        vocab = (float(speculative_data()["methods"]["eagle3"]["draft_vocab_size"]) / tp if config.method == "eagle3"
                 else np.asarray(e.vocab_per_rank, dtype=float))
        eng = one_layer_engine(e, vocab_per_rank=vocab, extra_linear_params=fc)
        w = (layer_params + fc) * b_w + (vocab * h * b_a if config.method == "eagle3" else 0.0)
        kv = np.asarray(e.kv_bytes_per_token, dtype=float) / L
    elif config.method == "draft_model":
        if draft_engine is None:
            raise ValueError("a draft model needs its engine numbers (draft_engine)")
        eng = replace(draft_engine, step_overhead_s=0.0, sequence_overhead_s=0.0, request_overhead_s=0.0,
                      api_server_request_s=0.0)
        w = np.asarray(draft_weight_bytes, dtype=float)
        kv = np.asarray(draft_engine.kv_bytes_per_token, dtype=float)
    return Drafter(method=config.method, num_speculative_tokens=k, tokens_per_step=tau, engine=eng,
                   weight_bytes=w, kv_bytes_per_token=kv, draft_pass_overhead_s=float(ov["draft_pass_overhead_s"]),
                   speculative_step_overhead_s=float(ov["speculative_step_overhead_s"]),
                   ngram_lookup_s_per_sequence=float(ov["ngram_lookup_s_per_sequence"]))


def verify_step_args(e: EngineNumbers, *, batch, context_tokens, num_speculative_tokens) -> dict:
    """``engine_step`` arguments of the verify forward: B chunks of k + 1 tokens on T cached keys
    (sliding-window layers attend at most the window)."""
    B = np.asarray(batch, dtype=float)
    q = np.asarray(num_speculative_tokens, dtype=float) + 1.0
    phi, win = np.asarray(e.sliding_fraction, dtype=float), e.sliding_window
    pairs = ((1.0 - phi) * causal_attention_pairs(new_tokens=q, cached_tokens=context_tokens)
             + phi * causal_attention_pairs(new_tokens=q, cached_tokens=context_tokens, window=win))
    cached = windowed_context_tokens(context_tokens=context_tokens, sliding_window=win, sliding_fraction=phi)
    return dict(decode_tokens=0.0, decode_context_tokens_sum=0.0, prefill_tokens=B * q,
                prefill_attention_pairs=B * pairs, prefill_cached_tokens=B * cached, logits_tokens=B * q)


def verify_step(e: EngineNumbers, *, batch, context_tokens, num_speculative_tokens) -> StepTime:
    """The target's verify forward (module docstring). The engine's CPU time per sequence is
    charged per sequence (B), not per logits row: ``engine_step`` counts rows, so the k·B extra
    rows' CPU time is taken back out of the overhead."""
    st = engine_step(e, **verify_step_args(e, batch=batch, context_tokens=context_tokens,
                                           num_speculative_tokens=num_speculative_tokens))
    extra = np.asarray(batch, dtype=float) * np.asarray(num_speculative_tokens, dtype=float) * e.sequence_overhead_s
    return replace(st, overhead_s=st.overhead_s - extra)


def draft_time_s(d: Drafter, *, batch, context_tokens):
    """Time the proposer adds to a step: n-gram, B lookups on the CPU; GPU drafters, a first pass
    over the B·(k + 1) verified positions and k − 1 passes of B tokens, each + a launch time;
    + the per-step bookkeeping of every method.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> from calc.spec.speculative import parse_speculative_config
    >>> from calc.timing.estimate import engine_numbers
    >>> e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"))
    >>> ng = drafter_for(e, parse_speculative_config({"method": "ngram", "num_speculative_tokens": 3}))
    >>> round(float(draft_time_s(ng, batch=4, context_tokens=1000)) * 1e3, 3)   # 0.8 ms + 4 x 20 us
    0.88
    """
    B = np.asarray(batch, dtype=float)
    T = np.asarray(context_tokens, dtype=float)
    k = d.num_speculative_tokens
    fixed = d.speculative_step_overhead_s
    if d.engine is None:
        return fixed + B * d.ngram_lookup_s_per_sequence + 0.0 * T
    # vLLM EagleProposer.propose: the first pass runs over every token the target just ran (here the
    # B·(k + 1) verified positions) with logits at each sequence's last one; then k − 1 passes of B.
    args = verify_step_args(d.engine, batch=B, context_tokens=T, num_speculative_tokens=k)
    args["logits_tokens"] = B
    first = engine_step(d.engine, **args).step_s
    rest = decode_step(d.engine, batch=B, context_tokens=T + 1.0).step_s if k > 1 else 0.0
    return fixed + first + (k - 1) * rest + k * d.draft_pass_overhead_s


def mixed_step_s(e: EngineNumbers, d: Drafter, *, batch, context_tokens, prompts, prompt_tokens, cached_tokens=0.0):
    """A step in which B sequences verify their k + 1 tokens AND ``prompts`` chunks of
    ``prompt_tokens`` (after ``cached_tokens``) run, as vLLM V1 schedules them (one forward; the
    simulator's general step, :mod:`calc.traffic.simulator`): the target over B·(k + 1) + n·c
    tokens, the verify rows priced with the chunks (compute-bound beside a prompt, where a decode
    step alone would be bound by the weights), CPU time per sequence for B + n, not per logits
    row; then the proposer: its first pass over EVERY token the target ran (the prompt chunks too:
    EAGLE drafts from the target's hidden states, ``EagleProposer.propose``), k − 1 passes of the
    B + n sequences that got a token. ``prompts`` = 0 is :func:`speculative_step`'s step.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> from calc.spec.speculative import parse_speculative_config
    >>> from calc.timing.estimate import engine_numbers
    >>> e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"))
    >>> d = drafter_for(e, parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}))
    >>> alone = speculative_step(e, d, batch=20, context_tokens=1184).step_s
    >>> bool(np.isclose(mixed_step_s(e, d, batch=20, context_tokens=1184, prompts=0, prompt_tokens=1024), alone))
    True
    """
    B = np.asarray(batch, dtype=float)
    n = np.asarray(prompts, dtype=float)
    c = np.asarray(prompt_tokens, dtype=float)
    k = d.num_speculative_tokens
    phi, win = np.asarray(e.sliding_fraction, dtype=float), e.sliding_window
    v = verify_step_args(e, batch=B, context_tokens=context_tokens, num_speculative_tokens=k)
    pairs = ((1.0 - phi) * causal_attention_pairs(new_tokens=c, cached_tokens=cached_tokens)
             + phi * causal_attention_pairs(new_tokens=c, cached_tokens=cached_tokens, window=win))
    cached = windowed_context_tokens(context_tokens=cached_tokens, sliding_window=win, sliding_fraction=phi)
    args = dict(decode_tokens=0.0, decode_context_tokens_sum=0.0, prefill_tokens=v["prefill_tokens"] + n * c,
                prefill_attention_pairs=v["prefill_attention_pairs"] + n * pairs,
                prefill_cached_tokens=v["prefill_cached_tokens"] + n * cached, logits_tokens=v["logits_tokens"] + n)
    target = engine_step(e, **args).step_s - B * k * e.sequence_overhead_s
    seqs = B + n
    fixed = d.speculative_step_overhead_s
    if d.engine is None:
        return target + fixed + seqs * d.ngram_lookup_s_per_sequence
    first = engine_step(d.engine, **{**args, "logits_tokens": seqs}).step_s
    rest = decode_step(d.engine, batch=seqs, context_tokens=np.asarray(context_tokens, dtype=float) + 1.0).step_s \
        if k > 1 else 0.0
    return target + fixed + first + (k - 1) * rest + k * d.draft_pass_overhead_s


@dataclass(frozen=True)
class SpeculativeStep:
    """One speculative step of B sequences and its per-token view (seconds)."""

    step_s: np.ndarray  # verify + draft
    verify: StepTime
    draft_s: np.ndarray
    tokens_per_step: float  # τ per sequence
    tpot_s: np.ndarray  # step_s / τ: time per output token of a sequence in steady decoding
    decode_step_s: np.ndarray  # the plain decode step of the same batch (no speculation)

    @property
    def speedup(self) -> np.ndarray:
        """Plain decode TPOT over speculative TPOT (> 1: speculation pays)."""
        return self.decode_step_s / self.tpot_s


def speculative_step(e: EngineNumbers, d: Drafter, *, batch, context_tokens) -> SpeculativeStep:
    """Step time and TPOT of B sequences decoding with the drafter ``d`` (module docstring).

    Hand check (Llama-3.1-8B on H100, batch 1, T = 1000; tests/test_speculative.py): a plain
    decode step ≈ 7 ms, the verify of 4 tokens about the same, EAGLE-3 with k = 3 adds ≈ 3 ms of
    drafting; at acceptance 0.7, τ = 2.53, TPOT ≈ 10 / 2.53 ≈ 4 ms: 1.7x.
    """
    ver = verify_step(e, batch=batch, context_tokens=context_tokens, num_speculative_tokens=d.num_speculative_tokens)
    dr = np.asarray(draft_time_s(d, batch=batch, context_tokens=context_tokens), dtype=float)
    step = ver.step_s + dr
    plain = decode_step(e, batch=batch, context_tokens=context_tokens).step_s
    return SpeculativeStep(step_s=step, verify=ver, draft_s=dr, tokens_per_step=d.tokens_per_step,
                           tpot_s=step / d.tokens_per_step, decode_step_s=plain)


def per_token_step(e: EngineNumbers, d: Drafter, *, batch, context_tokens) -> StepTime:
    """The speculative step seen per output token: a :class:`StepTime` whose time, FLOPs and bytes
    are one step's over τ (the verify's operators; drafting counted in the overhead), so a model
    that multiplies a decode step by the output tokens (:func:`calc.timing.serving.closed_loop`)
    gets the speculative TPOT and utilization."""
    s = speculative_step(e, d, batch=batch, context_tokens=context_tokens)
    v, tau = s.verify, s.tokens_per_step
    return StepTime(op_time_s={o: v.op_time_s[o] / tau for o in OPERATORS},
                    op_compute_s={o: v.op_compute_s[o] / tau for o in OPERATORS},
                    op_memory_s={o: v.op_memory_s[o] / tau for o in OPERATORS},
                    comm_s=v.comm_s / tau, overhead_s=(v.overhead_s + s.draft_s) / tau,
                    flops=v.flops / tau, bytes=v.bytes / tau, fixed_s=np.asarray(v.fixed_s) / tau)


def kv_capacity_tokens_with_drafter(*, kv_pool_bytes, kv_bytes_per_token, drafter: Drafter | None):
    """Tokens the KV pool holds once the drafter's weights are out of it and every token also
    stores the drafter's KV: (pool − W_draft) / (kv_target + kv_draft) (None: pool / kv_target)."""
    pool = np.asarray(kv_pool_bytes, dtype=float)
    kv = np.asarray(kv_bytes_per_token, dtype=float)
    if drafter is None:
        return pool / kv
    return np.maximum(pool - drafter.weight_bytes, 0.0) / (kv + drafter.kv_bytes_per_token)


def drafter_from_config(e: EngineNumbers, config: SpeculativeConfig, *, gpu, serving, efficiency) -> Drafter:
    """:func:`drafter_for` with a draft model looked up in the catalog (or a config.json path) and
    costed on the same GPU, TP size and weight format as the target (vLLM V1 runs the draft
    model at the target's TP)."""
    if config.method != "draft_model":
        return drafter_for(e, config)
    from calc.spec.catalog import get_model  # noqa: PLC0415
    from calc.sizing.scenario import memory_for  # noqa: PLC0415
    from calc.timing.estimate import engine_numbers  # noqa: PLC0415

    arch = get_model(config.draft_model)
    s = serving.model_copy(update={"max_model_len": None, "max_num_batched_tokens": None})
    de = engine_numbers(arch, gpu, s, efficiency)
    w = float(np.asarray(memory_for(arch, gpu, s, efficiency, concurrency=1).weights_bytes))
    return drafter_for(e, config, draft_engine=de, draft_weight_bytes=w)


def drafter_and_kv_capacity(est, config: SpeculativeConfig | None, *, gpu, serving, efficiency):
    """(drafter, KV pool in tokens) of an :class:`calc.timing.estimate.Estimate`: (None, its pool)
    without speculation; else the drafter and the pool less its weights, every token with its KV."""
    if config is None:
        return None, est.memory.kv_sequence_tokens
    d = drafter_from_config(est.engine, config, gpu=gpu, serving=serving, efficiency=efficiency)
    return d, np.floor(kv_capacity_tokens_with_drafter(kv_pool_bytes=est.memory.kv_pool_bytes,
                                                       kv_bytes_per_token=est.memory.kv_bytes_per_sequence_token, drafter=d))


CHECKS_PATH = Path(__file__).resolve().parents[1] / "data" / "speculative_checks.json"


@lru_cache(maxsize=1)
def published_checks() -> dict:
    """This model against published speculative-decoding runs, each asked as it was measured
    (calc/data/speculative_checks.json, written by ``bench/speculative_check.py --write`` from
    bench/data/speculative_decoding.jsonl): ``rows`` (id, source, metric, predicted, measured, error =
    predicted / measured - 1) and the median |error|.

    >>> c = published_checks()
    >>> c["n"] == len(c["rows"]) > 0
    True
    """
    with open(CHECKS_PATH) as fh:
        return json.load(fh)
