"""Roofline per operator: FLOPs and bytes of each operator of one engine step (per GPU).

Conventions (physics.md A3): a multiply-add is 2 FLOPs; quantities are per tensor-parallel
rank; a step holds ``decode_tokens`` single-token sequences and ``prefill_tokens`` prompt
tokens. Attention is FlashAttention-style: scores never reach HBM, so its traffic is the KV
cache read plus Q in / O out. Every function broadcasts over NumPy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

OPERATORS: tuple[str, ...] = ("qkv_proj", "attention", "o_proj", "mlp", "lm_head", "elementwise")


def matmul_flops(*, tokens, params):
    """Dense layer: 2 FLOPs per weight per token, 2·N·P.

    >>> float(matmul_flops(tokens=1, params=6.74e9))
    13480000000.0
    """
    return 2.0 * np.asarray(tokens, dtype=float) * params


def arithmetic_intensity(*, flops, bytes_moved):
    """FLOPs per byte moved (0 where nothing moves).

    >>> float(arithmetic_intensity(flops=2 * 4096 * 4096, bytes_moved=2 * 4096 * 4096))   # batch-1 FP16 matmul
    1.0
    """
    return safe_ratio(flops, bytes_moved)


def safe_ratio(num, den):
    """num / den with 0 where den is 0; arrays broadcast, scalars stay scalars."""
    n, d = np.broadcast_arrays(np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    out = np.divide(n, d, out=np.zeros(n.shape), where=d > 0)
    return out if out.ndim else float(out)


def ridge_point(*, peak_flops_per_s, hbm_bw_bytes_per_s):
    """Ridge point = peak FLOP/s ÷ memory bandwidth (FLOP/byte): ops above it are compute-bound.

    A100-80GB: 312e12 / 2.039e12 = 153 FLOP/B; H100 SXM: 989.4e12 / 3.35e12 = 295.

    >>> round(float(ridge_point(peak_flops_per_s=312e12, hbm_bw_bytes_per_s=2.039e12)), 1)
    153.0
    """
    return np.asarray(peak_flops_per_s, dtype=float) / hbm_bw_bytes_per_s


def attainable_flops_per_s(*, intensity, peak_flops_per_s, hbm_bw_bytes_per_s):
    """Roofline: attainable = min(peak, intensity × bandwidth).

    >>> attainable_flops_per_s(intensity=[1.0, 1000.0], peak_flops_per_s=312e12, hbm_bw_bytes_per_s=2.039e12).tolist()
    [2039000000000.0, 312000000000000.0]
    """
    return np.minimum(peak_flops_per_s, np.asarray(intensity, dtype=float) * hbm_bw_bytes_per_s)


def critical_batch_size(*, peak_flops_per_s, hbm_bw_bytes_per_s, bytes_per_weight):
    """Decode batch where a dense layer turns compute-bound, ignoring KV and activations:
    2·B·P FLOPs vs P·b_w bytes cross the ridge at B* = peak · b_w / (2 · bandwidth).

    FP16 on A100-80GB: 312e12 · 2 / (2 · 2.039e12) = 153; INT4 (AWQ, 0.52 B) moves it to ≈ 40.

    >>> round(float(critical_batch_size(peak_flops_per_s=312e12, hbm_bw_bytes_per_s=2.039e12, bytes_per_weight=2)))
    153
    """
    return np.asarray(peak_flops_per_s, dtype=float) * bytes_per_weight / (2.0 * np.asarray(hbm_bw_bytes_per_s))


def causal_attention_pairs(*, new_tokens, cached_tokens, window=np.inf):
    """(query, key) pairs a causal chunk of c new tokens after s cached ones attends:
    c·s + c·(c + 1)/2  (FlashAttention skips the masked half).

    With a sliding window W each query at position p attends min(p, W) keys, so the pairs are
    F(s + c) − F(s) with F(n) = Σ_{p ≤ n} min(p, W) = w(w + 1)/2 + (n − w)·w, w = min(n, W).

    >>> float(causal_attention_pairs(new_tokens=4, cached_tokens=0))
    10.0
    >>> float(causal_attention_pairs(new_tokens=4, cached_tokens=0, window=2))   # 1 + 2 + 2 + 2
    7.0
    """
    c = np.asarray(new_tokens, dtype=float)
    s = np.asarray(cached_tokens, dtype=float)
    if np.all(np.isinf(window)):
        return c * s + c * (c + 1.0) / 2.0

    def f(n):
        w = np.minimum(n, window)
        return w * (w + 1.0) / 2.0 + (n - w) * w

    return f(s + c) - f(s)


def windowed_context_tokens(*, context_tokens, sliding_window=np.inf, sliding_fraction=0.0):
    """Keys one decode token reads, averaged over layers: (1 − φ)·S + φ·min(S, W), where φ is the
    share of layers (of KV bytes and attention FLOPs: same heads in every layer) that use a
    sliding window of W tokens. Mistral-7B-v0.1: φ = 1, W = 4096; Gemma-2: φ = 1/2, W = 4096.

    >>> float(windowed_context_tokens(context_tokens=32768, sliding_window=4096, sliding_fraction=0.5))
    18432.0
    """
    s = np.asarray(context_tokens, dtype=float)
    phi = np.asarray(sliding_fraction, dtype=float)
    return (1.0 - phi) * s + phi * np.minimum(s, sliding_window)


def expected_experts_touched(*, num_experts, experts_per_token, tokens):
    """Distinct routed experts a batch of N tokens touches per layer under uniform routing:
    E · (1 − (1 − k/E)^N). k at N = 1; approaches E for large N. (Assumption, physics.md A3.)

    >>> float(expected_experts_touched(num_experts=8, experts_per_token=2, tokens=1))
    2.0
    """
    e = np.asarray(num_experts, dtype=float)
    base, n = 1.0 - np.asarray(experts_per_token) / e, np.asarray(tokens, dtype=float)
    if np.all(base == 1.0):  # dense (k = 0): 1^N = 1 for every N, NaN included; the same zeros without the power
        return e * (1.0 - np.ones(np.broadcast_shapes(base.shape, n.shape)))
    return e * (1.0 - base ** n)


@dataclass(frozen=True)
class OpCosts:
    """FLOPs and bytes per operator, summed over layers, per GPU; dicts keyed by :data:`OPERATORS`."""

    flops: dict[str, np.ndarray]
    weight_bytes: dict[str, np.ndarray]
    activation_bytes: dict[str, np.ndarray]
    kv_bytes: dict[str, np.ndarray]
    # MoE: the part of flops["mlp"] computed by routed experts, and the rows (tokens) each
    # touched expert's GEMM gets (n·k / touched; the GEMM efficiency depends on it, not on n).
    expert_flops: object = 0.0
    expert_rows: object = 1.0
    # Attention: the part of flops["attention"] from prompt chunks (query-key pairs of prefill
    # tokens) and the part of kv_bytes["attention"] that decode tokens read (their cached keys);
    # the attention backend's kernel times them (calc.timing.attention_backend).
    attention_prefill_flops: object = 0.0
    attention_decode_kv_bytes: object = 0.0

    def bytes(self, op: str) -> np.ndarray:
        return self.weight_bytes[op] + self.activation_bytes[op] + self.kv_bytes[op]

    @property
    def total_flops(self) -> np.ndarray:
        return sum(self.flops[o] for o in OPERATORS)

    @property
    def total_bytes(self) -> np.ndarray:
        return sum(self.bytes(o) for o in OPERATORS)


def step_op_costs(*, decode_tokens, decode_context_tokens_sum, prefill_tokens, prefill_attention_pairs,
                  prefill_cached_tokens, logits_tokens, num_layers, hidden_size, vocab_size,
                  qkv_params, o_params, mlp_dense_params, expert_params, shared_expert_params,
                  num_experts, experts_per_token,
                  linear_bytes_per_param, activation_bytes, kv_bytes_per_token,
                  attn_flops_per_pair_decode, attn_flops_per_pair_prefill, q_o_width, mlp_width,
                  dequant_bytes_per_param=0.0, expert_bytes_per_param=0.0, expert_token_multiplier=1.0,
                  expert_load_imbalance=1.0):
    """Per-operator FLOPs and bytes of one step on one GPU.

    Linear operators (per rank parameter counts ``*_params``, all layers): FLOPs 2·N·P, weight
    bytes P·b_w streamed once per step, activations N·(in + out)·b_act. A format that
    dequantizes the whole weight before a GEMM (bitsandbytes at N ≥ 2) adds
    ``dequant_bytes_per_param`` per weight: the 16-bit copy written and read back.
    Attention: FLOPs = pairs × FLOPs per (query, key) pair (4·H_q·d/TP summed over layers for
    MHA/GQA); bytes = KV read of every cached token attended + KV written for new tokens + Q/O.
    MoE: weights of the experts the batch touches (uniform routing), FLOPs of k experts/token;
    the routed experts' bytes per weight are ``expert_bytes_per_param`` where > 0 (MXFP4 quantizes
    only them: 4.25 bits × vLLM's padding, the other linears 16-bit), else the linear layers';
    each touched expert's GEMM has N·k / touched rows (``expert_rows``, → N·k/E for large N).
    Expert parallelism (``expert_token_multiplier`` M = DP, ``expert_params`` this GPU's E/EP
    experts): the experts see the N·M tokens of all DP ranks, touched and rows at N·M, FLOPs of
    N·M·k tokens over the GPU's share × the load imbalance of the busiest rank.
    LM head: only the tokens that produce logits (decodes and finishing prefills).
    Elementwise (norms, residuals, activation, RoPE): memory-bound, ≈ N·(10·h + 3·I_rank)·b_act per layer.
    """
    d = np.asarray(decode_tokens, dtype=float)
    p = np.asarray(prefill_tokens, dtype=float)
    n = d + p
    L = num_layers
    flops, wbytes, abytes, kvbytes = {}, {}, {}, {}
    zero = np.zeros(np.broadcast(n, L, hidden_size).shape)
    # Bytes per linear weight this step: stored bytes, plus the dequantized copy where the kernel
    # makes one (bitsandbytes: GEMV on the 4-bit weight for one token, dequantize + GEMM for more).
    linear_bytes_per_param = linear_bytes_per_param + np.where(n >= 2, dequant_bytes_per_param, 0.0)

    flops["qkv_proj"] = matmul_flops(tokens=n, params=qkv_params)
    wbytes["qkv_proj"] = zero + np.asarray(qkv_params) * linear_bytes_per_param
    abytes["qkv_proj"] = n * L * (hidden_size + q_o_width * 3.0) * activation_bytes

    pairs_decode = np.asarray(decode_context_tokens_sum, dtype=float)
    attention_prefill_flops = np.asarray(prefill_attention_pairs, dtype=float) * attn_flops_per_pair_prefill + zero
    flops["attention"] = pairs_decode * attn_flops_per_pair_decode + attention_prefill_flops
    kv_read_tokens = pairs_decode + np.asarray(prefill_cached_tokens, dtype=float)
    kvbytes["attention"] = (kv_read_tokens + n) * kv_bytes_per_token
    wbytes["attention"] = zero
    abytes["attention"] = n * L * 2.0 * q_o_width * activation_bytes

    flops["o_proj"] = matmul_flops(tokens=n, params=o_params)
    wbytes["o_proj"] = zero + np.asarray(o_params) * linear_bytes_per_param
    abytes["o_proj"] = n * L * (q_o_width + hidden_size) * activation_bytes

    n_e = n * np.asarray(expert_token_multiplier, dtype=float)  # tokens the experts see (EP: all DP ranks')
    touched = expected_experts_touched(num_experts=np.maximum(num_experts, 1), experts_per_token=experts_per_token, tokens=n_e)
    per_expert = np.asarray(expert_params, dtype=float) / np.maximum(num_experts, 1)
    active_expert_params = per_expert * np.asarray(experts_per_token)
    flops["mlp"] = matmul_flops(tokens=n, params=np.asarray(mlp_dense_params) + shared_expert_params + active_expert_params)
    expert_flops = matmul_flops(tokens=n, params=active_expert_params) + zero
    ep_case = (np.asarray(expert_token_multiplier) != 1.0) | (np.asarray(expert_load_imbalance) != 1.0)
    if np.any(ep_case):
        ep_flops = matmul_flops(tokens=n_e, params=active_expert_params) * expert_load_imbalance
        flops["mlp"] = np.where(ep_case, flops["mlp"] - expert_flops + ep_flops, flops["mlp"])
        expert_flops = np.where(ep_case, ep_flops + zero, expert_flops)
    expert_rows = n_e * np.asarray(experts_per_token) / np.maximum(touched, 1e-30)
    b_expert = np.where(np.asarray(expert_bytes_per_param) > 0, expert_bytes_per_param, linear_bytes_per_param)
    wbytes["mlp"] = ((np.asarray(mlp_dense_params) + shared_expert_params) * linear_bytes_per_param
                     + per_expert * touched * b_expert + zero)
    abytes["mlp"] = n * L * (2.0 * hidden_size + 3.0 * mlp_width) * activation_bytes

    lg = np.asarray(logits_tokens, dtype=float)
    flops["lm_head"] = matmul_flops(tokens=lg, params=np.asarray(hidden_size) * vocab_size) + zero
    wbytes["lm_head"] = zero + np.asarray(hidden_size, dtype=float) * vocab_size * activation_bytes
    abytes["lm_head"] = lg * (hidden_size * activation_bytes + np.asarray(vocab_size) * 4.0) + zero

    flops["elementwise"] = n * L * 10.0 * hidden_size + zero
    wbytes["elementwise"] = zero
    abytes["elementwise"] = n * L * (10.0 * hidden_size + 3.0 * mlp_width) * activation_bytes
    kvbytes.update({o: zero for o in OPERATORS if o != "attention"})
    return OpCosts(flops=flops, weight_bytes=wbytes, activation_bytes=abytes, kv_bytes=kvbytes,
                   expert_flops=expert_flops, expert_rows=expert_rows,
                   attention_prefill_flops=attention_prefill_flops,
                   attention_decode_kv_bytes=pairs_decode * kv_bytes_per_token + zero)
