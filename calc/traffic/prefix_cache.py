"""Prefix caching (vLLM V1 automatic prefix caching, on by default): how much of each prompt is
served from the KV cache, given the workload's reuse AND the room the cache has.

What vLLM does (``vllm/v1/core/kv_cache_manager.py``, ``block_pool.py``, ``kv_cache_utils.py``):

* a KV block of ``block_size`` tokens is cached under the hash of its tokens chained with the
  hash of the block before it, so a block hits only if the WHOLE prefix up to it matches, and
  only FULL blocks are cached: a prefix of P tokens is found as ⌊P/bs⌋·bs tokens;
* a prompt fully found still computes its last token (``max_cache_hit_length = num_tokens − 1``):
  the hit is at most ⌊(I − 1)/bs⌋·bs tokens;
* a block whose last user finished goes to the back of the free-block queue still holding its
  KV (and its hash); allocations take from the front, evicting the least recently freed block.
  A request frees its blocks tail first, so its private tail is evicted before its prefix. The
  cache is therefore the whole pool minus what running requests hold privately, managed LRU.

Workloads with reuse (``--shared-prefix-len``, ``--num-shared-prefixes``, ``--turns``):

* **shared prefix**: every prompt of I tokens starts with one of N distinct prefixes of P tokens
  (a system prompt, few-shot examples, a RAG document), chosen uniformly at random;
* **multi-turn**: a conversation of K turns; turn t (0-based) sends the conversation so far,
  I_t = U + t·(U + O) tokens (U = the user's new tokens per turn, O the answer), of which the
  previous turn's prompt and answer, t·(U + O) tokens, were computed before.

The hit rate under LRU (Che's approximation, exact enough for equal popularities; Che, Tung &
Wang 2002; Fricker, Robert & Roberts 2012): items of S blocks (a prefix, or a conversation's
context) are referenced one per request among n equally likely ones; every request also leaves
u blocks never asked again (its private tail, cached too). Between two uses of an item,
T requests pass; the LRU keeps the item while the distinct blocks touched in that time fit the
cache of C blocks. The characteristic window T_c solves

    D(T_c) = n·S·(1 − (1 − 1/n)^T_c) + u·T_c = C,

and a request finds its item with probability p = 1 − (1 − 1/n)^T_c (a request comes T requests
after the last use of its item with probability 1 − (1 − 1/n)^T). No reuse pressure (n·S ≤ C,
u = 0) gives p = 1; many items p ≈ C / (n·S). The first use of each item misses (cold), which
a finite run of N_req requests counts as n·(1 − (1 − 1/n)^N_req) / N_req of them.

The simulator (:func:`calc.traffic.simulator.simulate` with ``reuse``) does the same block by
block with vLLM's free-block queue; ``bench/prefix_cache_vs_sim.py`` shows where they differ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

CHECKS_PATH = Path(__file__).resolve().parents[1] / "data" / "prefix_cache_checks.json"


@dataclass(frozen=True)
class PrefixReuse:
    """The workload's reuse (CLI ``--shared-prefix-len``, ``--num-shared-prefixes``, ``--turns``)."""

    shared_prefix_len: int = 0  # tokens of the prompt shared (0: none)
    num_shared_prefixes: int = 1
    turns: int = 1  # > 1: multi-turn, each request's input is the conversation so far
    enable_prefix_caching: bool = True

    @property
    def active(self) -> bool:
        """True when the workload has anything to reuse (and caching is on)."""
        return self.enable_prefix_caching and (self.shared_prefix_len > 0 or self.turns > 1)

    @property
    def any_reuse(self) -> bool:
        return self.shared_prefix_len > 0 or self.turns > 1

    def cli_flags(self) -> list[str]:
        """The reuse as ``python -m calc`` spells it (none: no flags).

        >>> PrefixReuse(shared_prefix_len=1800, num_shared_prefixes=4, enable_prefix_caching=False).cli_flags()
        ['--shared-prefix-len 1800 --num-shared-prefixes 4', '--no-enable-prefix-caching']
        """
        if not self.any_reuse:
            return []
        out = [f"--turns {self.turns}" if self.turns > 1 else
               f"--shared-prefix-len {self.shared_prefix_len} --num-shared-prefixes {self.num_shared_prefixes}"]
        return out + ([] if self.enable_prefix_caching else ["--no-enable-prefix-caching"])


def cached_prefix_tokens(*, prefix_tokens, prompt_tokens, block_size):
    """Tokens of a prompt found in the cache when its first ``prefix_tokens`` are cached: full
    blocks only, and the last prompt token is always computed,
    min(⌊P/bs⌋, ⌊(I − 1)/bs⌋)·bs.

    >>> int(cached_prefix_tokens(prefix_tokens=2000, prompt_tokens=2100, block_size=16))   # 125 blocks
    2000
    >>> cached_prefix_tokens(prefix_tokens=[100, 2100], prompt_tokens=2100, block_size=16).tolist()
    [96, 2096]
    """
    bs = np.asarray(block_size, dtype=np.int64)
    p = np.asarray(prefix_tokens, dtype=np.int64)
    i = np.asarray(prompt_tokens, dtype=np.int64)
    return np.minimum(p // bs, np.maximum(i - 1, 0) // bs) * bs


def shared_prefix_requests(*, pool_bytes, bytes_per_request, prefix_bytes, num_prefixes):
    """Whole requests the KV pool holds at once when their prompts start with one of N shared
    prefixes: vLLM keeps one copy of each cached block and counts its users, so a running request
    holds its prefix's S bytes (whole blocks found in the cache, :func:`cached_prefix_tokens`)
    together with every other request of that prefix, and R − S of its own. With C ≥ N requests,
    in the worst case every prefix in use,

        N·S + C·(R − S) ≤ pool  →  C = ⌊(pool − N·S) / (R − S)⌋;

    fewer requests than prefixes may each have their own (C = ⌊pool / R⌋, no saving). The larger
    of the two that holds. R = S (a prompt all prefix, no output) is not reachable: the last prompt
    token is always computed, so R − S ≥ one block.

    A 4,096-token request of 0.5 MiB a token (2 GiB), 2,000 tokens of one shared prefix
    (125 blocks of 16: 0.977 GiB), a 40 GiB pool: 20 requests without sharing, ⌊(40 − 0.977) /
    (2 − 0.977)⌋ = 38 with it.

    >>> MiB = 2 ** 20
    >>> int(shared_prefix_requests(pool_bytes=40 * 1024 * MiB, bytes_per_request=4096 * MiB / 2,
    ...                            prefix_bytes=2000 * MiB / 2, num_prefixes=1))
    38
    >>> int(shared_prefix_requests(pool_bytes=40 * 1024 * MiB, bytes_per_request=4096 * MiB / 2,
    ...                            prefix_bytes=0.0, num_prefixes=1))   # no prefix: ⌊40 / 2⌋
    20
    """
    pool = np.maximum(np.asarray(pool_bytes, dtype=float), 0.0)
    R = np.asarray(bytes_per_request, dtype=float)
    S = np.minimum(np.asarray(prefix_bytes, dtype=float), R)
    N = np.maximum(np.asarray(num_prefixes, dtype=float), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        alone = np.floor(pool / R * (1 + 1e-12))  # the float rounding of an exact fit kept in
        shared = np.floor(np.maximum(pool - N * S, 0.0) / np.maximum(R - S, 1e-30) * (1 + 1e-12))
    return np.where(shared >= N, np.maximum(shared, alone), alone)


def shared_prefix_kv_bytes(*, concurrency, bytes_per_request, prefix_bytes, num_prefixes):
    """KV bytes C running requests hold with N shared prefixes of S bytes (each held once; worst
    case, every prefix in use while C ≥ N): min(N, C)·S + C·(R − S).

    >>> float(shared_prefix_kv_bytes(concurrency=10, bytes_per_request=2.0, prefix_bytes=1.0, num_prefixes=1))
    11.0
    """
    C = np.asarray(concurrency, dtype=float)
    R = np.asarray(bytes_per_request, dtype=float)
    S = np.minimum(np.asarray(prefix_bytes, dtype=float), R)
    N = np.maximum(np.asarray(num_prefixes, dtype=float), 1.0)
    return np.minimum(N, C) * S + C * (R - S)


def lru_hit_probability(*, items, item_blocks, junk_blocks_per_request, cache_blocks, iterations=60):
    """Che's approximation for ``items`` equally likely items of ``item_blocks`` blocks, one asked
    per request, each request also caching ``junk_blocks_per_request`` blocks never asked again,
    in an LRU cache of ``cache_blocks``: p = 1 − (1 − 1/n)^T_c with
    n·S·(1 − (1 − 1/n)^T_c) + u·T_c = C (module docstring; bisection on log T).

    One prefix always hits; 1000 prefixes of 125 blocks in 30,000 blocks, 12 junk blocks per
    request: T_c ≈ 245 requests, p = 1 − 0.999^245 ≈ 0.22 (≈ C / (n·S) = 0.24 less the junk's share):

    >>> round(float(lru_hit_probability(items=1, item_blocks=125, junk_blocks_per_request=12,
    ...                                 cache_blocks=30_000)), 3)
    1.0
    >>> round(float(lru_hit_probability(items=1000, item_blocks=125, junk_blocks_per_request=12,
    ...                                 cache_blocks=30_000)), 2)
    0.22
    """
    n = np.maximum(np.asarray(items, dtype=float), 1.0)
    S = np.maximum(np.asarray(item_blocks, dtype=float), 0.0)
    u = np.maximum(np.asarray(junk_blocks_per_request, dtype=float), 0.0)
    C = np.maximum(np.asarray(cache_blocks, dtype=float), 0.0)
    shape = np.broadcast_shapes(n.shape, S.shape, u.shape, C.shape)
    n, S, u, C = (np.broadcast_to(x, shape) for x in (n, S, u, C))
    with np.errstate(divide="ignore", invalid="ignore"):
        def miss(T):  # (1 − 1/n)^T
            log_keep = np.log1p(-1.0 / np.maximum(n, 1.0 + 1e-12))  # ln(1 − 1/n)
            return np.where(n > 1.0, np.exp(T * log_keep), np.where(T > 0.0, 0.0, 1.0))

        def D(T):
            return n * S * (1.0 - miss(T)) + u * T

        lo = np.full(shape, -3.0)  # log10 T
        hi = np.full(shape, 12.0)
        for _ in range(iterations):
            mid = 0.5 * (lo + hi)
            over = D(10.0 ** mid) > C
            lo, hi = np.where(over, lo, mid), np.where(over, mid, hi)
        T = 10.0 ** lo
        p = 1.0 - miss(T)
    # everything fits for ever (no junk and every item in the cache): always found
    p = np.where((u <= 0) & (n * S <= C), 1.0, p)
    # an item larger than the whole cache is never kept whole
    p = np.where(S > C, 0.0, p)
    return np.clip(p, 0.0, 1.0)


def cold_miss_fraction(*, items, num_requests):
    """Share of ``num_requests`` requests that are the first use of their item (always a miss):
    n·(1 − (1 − 1/n)^N)/N; 0 for an endless run.

    >>> round(float(cold_miss_fraction(items=10, num_requests=1000)), 4)
    0.01
    """
    n = np.maximum(np.asarray(items, dtype=float), 1.0)
    N = np.asarray(num_requests, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        seen = n * -np.expm1(np.minimum(N, 1e300) * np.log1p(-1.0 / np.maximum(n, 1.0 + 1e-12)))
        seen = np.where(n <= 1.0, np.minimum(N, 1.0), seen)
        return np.where(np.isfinite(N) & (N > 0), seen / np.maximum(N, 1.0), 0.0)


def multi_turn_lengths(*, user_tokens, output_tokens, turns, block_size):
    """(mean prompt tokens, mean tokens cached when the conversation is kept, mean context blocks
    of a conversation) over the K turns of a conversation: I_t = U + t·(U + O); turn t ≥ 1 finds
    the previous turn's prompt and answer, whose KV was computed except the answer's last token,
    ⌊(t·(U + O) − 1)/bs⌋·bs tokens.

    U = 100, O = 50, K = 3, bs = 16: prompts 100, 250, 400 (mean 250); cached 0, 144, 288 (mean 144).

    >>> [round(float(x), 1) for x in multi_turn_lengths(user_tokens=100, output_tokens=50, turns=3, block_size=16)]
    [250.0, 144.0, 19.0]
    """
    U = np.asarray(user_tokens, dtype=float)
    O = np.asarray(output_tokens, dtype=float)
    K = np.maximum(np.asarray(turns, dtype=float), 1.0)
    bs = np.asarray(block_size, dtype=float)
    mean_in = U + (K - 1.0) / 2.0 * (U + O)
    # mean over t = 0 … K − 1 of ⌊(t·(U + O) − 1)/bs⌋·bs (t = 0: nothing), summed exactly
    kmax = int(np.max(K))
    t = np.arange(kmax, dtype=float).reshape((kmax,) + (1,) * np.ndim(K))
    cached_t = np.where((t >= 1) & (t < K), np.floor(np.maximum(t * (U + O) - 1.0, 0.0) / bs) * bs, 0.0)
    mean_cached = cached_t.sum(axis=0) / K
    # a conversation's context in the cache, mean over its life: its last turn's prompt + answer half way
    ctx_blocks = np.ceil((mean_in + O) / bs)
    return mean_in, mean_cached, ctx_blocks


@dataclass(frozen=True)
class PrefixCacheResult:
    """What the cache gives a workload (tokens per request are means)."""

    input_len: np.ndarray  # mean prompt tokens (the conversation so far with --turns)
    cached_tokens: np.ndarray  # mean prompt tokens found in the cache
    uncached_prefill_tokens: np.ndarray  # mean prompt tokens computed
    prefix_cache_hit_rate: np.ndarray  # cached / prompt tokens
    request_hit_probability: np.ndarray  # p: a request finds its prefix / conversation
    items: np.ndarray  # distinct prefixes, or conversations in flight
    cached_items: np.ndarray  # p·n: prefixes / conversations that stay cached
    item_blocks: np.ndarray  # blocks of one prefix / conversation context
    cache_blocks: np.ndarray  # C: blocks not held privately by running requests


def prefix_cache(*, reuse: PrefixReuse, input_len, output_len, block_size, num_blocks, running,
                 conversations=1.0, num_requests=np.inf) -> PrefixCacheResult:
    """Hit rate and uncached prefill of a workload (module docstring), broadcasting over the
    numbers. ``input_len``: the prompt (shared prefix) or the user's new tokens per turn
    (multi-turn); ``running``: sequences the engine holds at once; ``conversations``: multi-turn
    conversations in flight (the closed loop's clients); ``num_requests``: a finite run's cold
    misses (inf: steady state).

    A 2,000-token prefix shared by every 2,100-token prompt, 8 running, a big pool: 2,000 of
    2,100 tokens found (hit rate 0.952), 100 computed:

    >>> r = prefix_cache(reuse=PrefixReuse(shared_prefix_len=2000), input_len=2100, output_len=100,
    ...                  block_size=16, num_blocks=30_000, running=8)
    >>> float(r.cached_tokens), round(float(r.prefix_cache_hit_rate), 3), float(r.uncached_prefill_tokens)
    (2000.0, 0.952, 100.0)
    """
    I = np.asarray(input_len, dtype=float)
    O = np.asarray(output_len, dtype=float)
    bs = np.asarray(block_size, dtype=float)
    R = np.maximum(np.asarray(running, dtype=float), 0.0)
    if reuse.turns > 1:
        mean_in, found, ctx_blocks = multi_turn_lengths(user_tokens=I, output_tokens=O, turns=reuse.turns,
                                                        block_size=bs)
        n = np.maximum(np.asarray(conversations, dtype=float), 1.0)
        S = ctx_blocks
        # the last turn's context is never asked again: u = its blocks once per conversation
        u = np.ceil((I + (reuse.turns - 1.0) * (I + O) + O) / bs) / reuse.turns
        private = np.zeros_like(S)  # a running turn's context is its conversation's item
        share = (reuse.turns - 1.0) / reuse.turns  # turns that can find anything
    else:
        mean_in = I + 0.0
        found = cached_prefix_tokens(prefix_tokens=reuse.shared_prefix_len, prompt_tokens=I.astype(np.int64),
                                     block_size=bs.astype(np.int64)).astype(float)
        n = np.asarray(float(max(reuse.num_shared_prefixes, 1)))
        S = np.floor(reuse.shared_prefix_len / bs)
        u = np.maximum(np.floor((I + O - 1.0) / bs) - S, 0.0)
        private = np.maximum(np.ceil((I + O / 2.0) / bs) - S, 0.0)
        share = 1.0
    C = np.maximum(np.asarray(num_blocks, dtype=float) - R * private, 0.0)
    p = lru_hit_probability(items=n, item_blocks=S, junk_blocks_per_request=u, cache_blocks=C)
    if reuse.turns > 1:  # a turn's first request of the conversation is cold by construction
        p_req = p
    else:
        p_req = np.minimum(p, 1.0 - cold_miss_fraction(items=n, num_requests=num_requests))
    on = reuse.enable_prefix_caching and reuse.any_reuse
    p_req = p_req * (1.0 if on else 0.0)
    if reuse.turns > 1:
        cached = p_req * found  # found already averages over the K turns (turn 0 finds nothing)
    else:
        cached = p_req * found * share
    cached = np.broadcast_to(cached, np.broadcast_shapes(np.shape(cached), np.shape(mean_in)))
    mean_in = np.broadcast_to(mean_in, cached.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(mean_in > 0, cached / mean_in, 0.0)
    return PrefixCacheResult(
        input_len=mean_in, cached_tokens=cached, uncached_prefill_tokens=mean_in - cached,
        prefix_cache_hit_rate=rate, request_hit_probability=np.broadcast_to(p_req, cached.shape),
        items=np.broadcast_to(n, cached.shape), cached_items=np.broadcast_to(p * n * (1.0 if on else 0.0), cached.shape),
        item_blocks=np.broadcast_to(S, cached.shape), cache_blocks=np.broadcast_to(C, cached.shape))


def check_reuse(reuse: PrefixReuse, *, input_len: int, output_len: int, max_model_len: int) -> None:
    """Raise ValueError naming the field when the reuse does not fit the requests: the shared
    prefix is part of the prompt; a conversation's last turn must fit ``max_model_len``."""
    if reuse.shared_prefix_len > 0 and reuse.turns > 1:
        raise ValueError("shared_prefix_len and turns: give one kind of reuse, a shared prefix or a multi-turn chat")
    if reuse.shared_prefix_len > input_len:
        raise ValueError(f"shared_prefix_len: got {reuse.shared_prefix_len:,}, allowed 0 – {input_len:,} "
                         "(the prefix is part of the prompt of input_len tokens)")
    if reuse.turns > 1:
        last = input_len + (reuse.turns - 1) * (input_len + output_len) + output_len
        if last > max_model_len:
            raise ValueError(f"turns: the last of {reuse.turns} turns holds {last:,} tokens (each turn re-sends "
                             f"the conversation so far), more than max_model_len {max_model_len:,}")


def estimate_with_prefix_cache(arch, gpu, serving, efficiency, reuse: PrefixReuse, *, concurrency=None,
                               uniform_lengths=False, num_requests=np.inf, output_cv=None):
    """(:class:`calc.timing.estimate.Estimate`, :class:`PrefixCacheResult`) of the closed loop
    with the workload's reuse: a first estimate gives the running batch and the KV pool, the
    cache model the cached tokens H (multi-turn: the mean prompt, the conversation so far), and
    the closed loop is solved again prefilling only I − H. Without reuse the plain estimate.
    ``output_cv``: the output lengths' coefficient of variation, as :func:`calc.timing.estimate.estimate`'s."""
    from calc.timing.estimate import estimate  # noqa: PLC0415 (calc.timing imports nothing of this module)

    first = estimate(arch, gpu, serving, efficiency, concurrency=concurrency, uniform_lengths=uniform_lengths,
                     output_cv=output_cv)
    if not reuse.any_reuse:
        z = np.zeros(np.shape(first.serving.running))
        pc = PrefixCacheResult(input_len=z + serving.input_len, cached_tokens=z, uncached_prefill_tokens=z + serving.input_len,
                               prefix_cache_hit_rate=z, request_hit_probability=z, items=z, cached_items=z,
                               item_blocks=z, cache_blocks=z + first.memory.kv_sequence_blocks)
        return first, pc
    conv = first.serving.concurrency
    pc = prefix_cache(reuse=reuse, input_len=serving.input_len, output_len=serving.output_len,
                      block_size=serving.block_size, num_blocks=first.memory.kv_sequence_blocks, running=first.serving.running,
                      conversations=conv, num_requests=num_requests)
    if reuse.turns > 1:  # the mean prompt is the conversation so far: solve again at that length
        first = estimate(arch, gpu, serving, efficiency, concurrency=concurrency, uniform_lengths=uniform_lengths,
                         input_len=np.rint(pc.input_len), output_cv=output_cv)
        pc = prefix_cache(reuse=reuse, input_len=serving.input_len, output_len=serving.output_len,
                          block_size=serving.block_size, num_blocks=first.memory.kv_sequence_blocks,
                          running=first.serving.running, conversations=conv, num_requests=num_requests)
    est = estimate(arch, gpu, serving, efficiency, concurrency=concurrency, uniform_lengths=uniform_lengths,
                   input_len=np.rint(pc.input_len) if reuse.turns > 1 else None, cached_prompt_tokens=pc.cached_tokens,
                   output_cv=output_cv)
    return est, pc


@dataclass(frozen=True)
class PrefixChains:
    """Which requests share cached content, for the simulator (axis 0 = request): request i's
    first ``chain_tokens[i]`` prompt tokens are chain ``chain[i]``'s content (−1: none); when it
    finishes, its first ``chain_after[i]`` tokens are (a multi-turn conversation grows by the turn)."""

    chain: np.ndarray  # int64, −1 = no shared content
    chain_tokens: np.ndarray  # int64
    chain_after: np.ndarray  # int64
    num_chains: int


def reuse_workload(workload, reuse: PrefixReuse, *, conversations: int = 1, seed: int = 0):
    """(workload, :class:`PrefixChains`) of a workload with reuse. Shared prefix: request i takes
    prefix ``rng.integers(N)``. Multi-turn: the workload's input lengths are the user's new tokens
    U per turn; conversations of K turns run ``conversations`` at a time, request i being turn
    ⌊i / M⌋ mod K of conversation (i mod M) + M·⌊i / (M·K)⌋ (M = ``conversations``: in a closed
    loop of M clients request i + M is issued about when request i finishes), with prompt
    U_i + the previous turn's prompt and answer.

    >>> import numpy as np
    >>> from calc.traffic.workload import Workload
    >>> w = Workload(arrival_s=np.zeros(6), input_len=np.full(6, 100), output_len=np.full(6, 50))
    >>> w2, ch = reuse_workload(w, PrefixReuse(turns=3), conversations=2)
    >>> w2.input_len.tolist(), ch.chain.tolist(), ch.chain_tokens.tolist()
    ([100, 100, 250, 250, 400, 400], [0, 1, 0, 1, 0, 1], [0, 0, 150, 150, 300, 300])
    """
    from dataclasses import replace  # noqa: PLC0415

    n = workload.num_requests
    I = workload.input_len.astype(np.int64)
    O = workload.output_len.astype(np.int64)
    if reuse.turns > 1:
        M = max(int(conversations), 1)
        K = int(reuse.turns)
        i = np.arange(n)
        turn = (i // M) % K
        chain = (i % M) + M * (i // (M * K))
        prompt = I.copy()
        before = np.zeros(n, dtype=np.int64)
        for t in range(1, K):  # turn t re-sends turn t − 1's prompt and answer
            at = np.flatnonzero(turn == t)
            prev = at - M
            before[at] = prompt[prev] + O[prev]
            prompt[at] = I[at] + before[at]
        chains = PrefixChains(chain=chain.astype(np.int64), chain_tokens=before, chain_after=prompt + O,
                              num_chains=int(chain.max()) + 1 if n else 0)
        return replace(workload, input_len=prompt), chains
    if reuse.shared_prefix_len > 0:
        rng = np.random.default_rng(seed + 7919)
        chain = rng.integers(0, max(reuse.num_shared_prefixes, 1), size=n).astype(np.int64)
        p = np.minimum(np.full(n, int(reuse.shared_prefix_len), dtype=np.int64), I)
        return workload, PrefixChains(chain=chain, chain_tokens=p, chain_after=p,
                                      num_chains=max(reuse.num_shared_prefixes, 1))
    z = np.zeros(n, dtype=np.int64)
    return workload, PrefixChains(chain=z - 1, chain_tokens=z, chain_after=z, num_chains=0)


def mixture_quantile_s(*, mean_s, quantile_s, shift_s, hit_probability, q=0.95, iterations=60):
    """The q-quantile of TTFT when a share p of requests find their prefix and the rest prefill
    ``shift_s`` longer: ``mean_s`` and ``quantile_s`` are the load's TTFT at the mean cached
    length (the open loop), each class normal with σ = (quantile − mean)/z_q around
    μ_hit = mean − (1 − p)·Δ and μ_miss = μ_hit + Δ; solves p·Φ((x − μ_hit)/σ) +
    (1 − p)·Φ((x − μ_miss)/σ) = q by bisection. Every request alike (p = 1 or 0, or Δ = 0): the
    quantile given. With 10 % misses 100 ms slower and σ = 10 ms the P95 is the misses' median, μ_miss:

    >>> round(float(mixture_quantile_s(mean_s=0.1, quantile_s=0.1 + 1.6449 * 0.01, shift_s=0.1,
    ...                                hit_probability=0.9)) * 1e3, 1)      # μ_miss = 0.19 s
    190.0
    """
    from statistics import NormalDist  # noqa: PLC0415

    mean = np.asarray(mean_s, dtype=float)
    qs = np.asarray(quantile_s, dtype=float)
    d = np.maximum(np.asarray(shift_s, dtype=float), 0.0)
    p = np.clip(np.asarray(hit_probability, dtype=float), 0.0, 1.0)
    z = NormalDist().inv_cdf(q)
    with np.errstate(invalid="ignore"):  # past capacity: inf − inf (returned as given below)
        sigma = np.maximum(np.nan_to_num((qs - mean) / z), 1e-9)
    mu_h = mean - (1.0 - p) * d
    mu_m = mu_h + d
    cdf = np.vectorize(NormalDist().cdf, otypes=[float])
    lo = mu_h - 10.0 * sigma
    hi = mu_m + 10.0 * sigma
    with np.errstate(invalid="ignore"):  # NaN / inf rows (past capacity) are returned as given below
        for _ in range(iterations):
            mid = 0.5 * (lo + hi)
            f = p * cdf((mid - mu_h) / sigma) + (1.0 - p) * cdf((mid - mu_m) / sigma)
            lo, hi = np.where(f < q, mid, lo), np.where(f < q, hi, mid)
    x = 0.5 * (lo + hi)
    alike = (p >= 1.0) | (p <= 0.0) | (d <= 0.0) | ~np.isfinite(mean) | ~np.isfinite(qs)
    return np.where(alike, qs, x)


def miss_penalty_s(e, *, prompt_tokens, cached_tokens, running, context_tokens, max_num_batched_tokens,
                   enable_chunked_prefill=True):
    """Δ: how much longer a request that misses the cache takes to its first token than one that
    finds ``cached_tokens`` of its ``prompt_tokens`` (its own prefill, beside ``running`` decodes;
    :func:`calc.traffic.queueing.own_prefill_s` of the whole prompt less that of the rest)."""
    from calc.traffic.queueing import own_prefill_s  # noqa: PLC0415

    kw = dict(running=running, context_tokens=context_tokens, rate_rps=0.0, wait_s=0.0,
              max_num_batched_tokens=max_num_batched_tokens, enable_chunked_prefill=enable_chunked_prefill)
    I = np.asarray(prompt_tokens, dtype=float)
    H = np.asarray(cached_tokens, dtype=float)
    full = own_prefill_s(e, input_len=I, mean_input_len=I, **kw)
    rest = own_prefill_s(e, input_len=np.maximum(I - H, 1.0), mean_input_len=np.maximum(I - H, 1.0),
                         cached_prompt_tokens=H, **kw)
    return np.maximum(full - rest, 0.0)


def conversations_in_flight(*, rate_rps, e2e_latency_s, gap_over_e2e=2.0):
    """Multi-turn conversations in flight at an arrival rate: a conversation's next turn comes
    ``gap_over_e2e`` answers' time after its previous one (the answer, then the user reads and
    types), so M = ⌈λ·g·E2E⌉ + 1 conversations share the arrivals (Little's law).

    >>> int(conversations_in_flight(rate_rps=4.0, e2e_latency_s=1.3))     # ⌈4 · 2 · 1.3⌉ + 1
    12
    """
    lam = np.asarray(rate_rps, dtype=float)
    return np.ceil(lam * gap_over_e2e * np.asarray(e2e_latency_s, dtype=float)) + 1.0


@lru_cache(maxsize=1)
def published_checks() -> dict:
    """This model against published runs with prefix reuse, each asked as it was run
    (calc/data/prefix_cache_checks.json, written by ``bench/prefix_cache_measured.py --write`` from
    bench/data/prefix_cache_measurements.jsonl): ``rows`` (id, source, confidence, metric, predicted,
    measured, error = predicted / measured - 1), the median |error| over all and over the rows of medium
    confidence, and over the cache's effect (cache / no cache at the same rate).

    >>> c = published_checks()
    >>> c["n"] == len(c["rows"]) and 0 <= c["effect_median_abs_error"] <= c["median_abs_error"]
    True
    """
    with open(CHECKS_PATH) as fh:
        return json.load(fh)
